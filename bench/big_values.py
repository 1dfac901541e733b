#!/usr/bin/env python3
"""big_values.py — step 7: large values without copies, and the noisy neighbour.

Step 7 benchmark. Owns the measures of reply copy avoidance (src/reply.c
reply-ref, src/client_io.c write-iov): one soloist binary switched by
CONFIG SET reply-copy-avoidance yes|no (a soloist switch, not a Valkey
option), beside Debian's redis-server 7.0, in one run.

(a) Bandwidth and the large requests' own latency. One connection, one
    request at a time: GET of a stored value of 1, 2, 4, 8, 16, 32 and
    64 MB, and SET of the same sizes. Every cell, a server's or the
    ceiling's, is measured by the same C client (bench/wire_ceiling.c,
    `wire_ceiling client`), so no server is read through a slower
    receiver than the ceiling is: it reads each reply into a reused
    buffer with recv() of everything outstanding and sends each request
    with one sendmsg() of everything left. The value is generated from a
    seed by the client, which SETs it itself, untimed, before a GET cell.
    Each cell starts with one untimed exchange whose reply is checked
    (the GET's bytes against the value, the SET's +OK), then times every
    request from the first byte sent to the last byte of its reply
    (CLOCK_MONOTONIC). Beside them the ceiling: `wire_ceiling peer`, a C
    process with no server logic at all, doing the same exchange (a
    small request answered by the value's size in bytes, or the value's
    bytes answered by 5 bytes) with the cheapest ends the kernel allows:
    it sends from never-written anonymous memory (the zero page, always
    in cache) with one blocking send() of everything left, and receives
    into a small sink that stays in cache, on a socket set as soloist
    sets its clients' (TCP_NODELAY). Every buffer the client and the peer
    hand to the kernel starts on a page (wire_ceiling.c says why: at 16
    bytes past one, the kernel's copy into it ran at less than half
    speed on the machine the rows come from). GET also runs against a
    second soloist at io-threads 2, forced on (setting on-t2, F7.19), against
    Valkey when VALKEY_SERVER names a build (setting valkey, GET and SET:
    F7.54-F7.55; a run without it prints the skipped line), and
    against a second peer sending from 64 MB written once with the value
    (setting raw-value, F7.36-F7.37): the zero page costs a sender no
    memory traffic, a server's value does, and this ceiling separates the
    two.
    A server pays for its value's memory and its event loop; the ceiling pays only the kernel's copies
    and wake-ups, so no server should beat it, and F7.18 checks that
    none does. Per cell MB/s and the p50 and p99 of the per-request
    latencies (a server's run line keeps them all, in µs; the ceiling's
    keeps its p50, p99 and max). A cell runs for a time that grows with
    the size (cell_s(): RUN_S at 64 MB, a quarter of it at 1 MB) and for
    at least MIN_REQS timed requests; settings alternated within each
    size.
(b) The noisy neighbour, scaled to 2 cores: soloist-bench in open loop,
    1 KB GETs at SMALL_RATE/s on 16 connections, with and without 10 MB
    GETs at BIG_RATE/s on 2 connections beside them, sent by a second
    soloist-bench process: a thread that reads a 10 MB reply is late for
    every small GET due meanwhile, so one generator for both classes
    times itself as much as the server (F7.38 measures that once, at
    io-threads 1). The small class's latency p50 ... p99.9 and max (from
    the due time, so a stall shows) and its service p99.9 (from the
    send). soloist io-threads 1 and 2 (forced on), copy avoidance on and
    off; redis-server 7.0 at io-threads 1 and 2; Valkey (when given) at
    io-threads 1 and 2, the second forced on (F7.56); and t1-on once more
    with io-write-alone-max at 64 KB, the cap (F7.39). Each setting runs
    NOISE_RUNS times (3; 1 with QUICK) for NOISE_S seconds (3) without
    and with the noise, alternated; a row gives the median of each
    percentile over the runs, since one run's p99.9 is its few worst
    samples and a single stall of the machine moves it.
(c) The bytes main copies per large GET: INFO stats reply_bytes_copied
    (bulk payload bytes memcpy'd into reply buffers) over the GETs of (a).
(d) First, what memory never written costs this machine: wire_ceiling
    touch writes a fresh 64 MB mapping once and again (5 runs, 3 with
    QUICK), F7.57. A virtual machine whose host backs each new page on
    its first touch makes every server that receives a large value into
    fresh memory slower than the ceiling by that rate.

Prints JSON lines: kind=run (one per measurement), kind=skipped, and
generic finding rows F7.1-F7.39 and F7.54-F7.57 (tools/findings.py)
computed from this run's own run lines. Targets are reported, never tuned
for. Knobs: QUICK=1 (about a minute, one run per cell; full about 6
minutes, three; a minute more with Valkey), VALKEY_SERVER, RUN_S,
SIZES_MB (a comma list of (a)'s sizes, e.g. 1,8, for a short run; rows
keep their numbers), SMALL_RATE, BIG_RATE, NOISE_S, NOISE_RUNS, ALONE_MAX (soloist's
io-write-alone-max for the run), SOLOIST_BIN, REDIS_BIN,
SOLOIST_BENCH_BIN, WIRE_CEILING_BIN.
bench/run.py stops it at 540 s (150 s with QUICK).

Valkey anchors: src/networking.c (addReplyBulk's reference path,
writevToClient, _postWriteToClient; Valkey pull request #2078, 9.0) and
the figures of Valkey's blog post on reply copy avoidance, measured, not
mirrored.
"""

import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

sys.path.insert(0, os.path.join(bl.ROOT, "tools"))
from findings_core import verdict  # noqa: E402  (F7.54-F7.55 say spreads in FINDINGS.md's words)

MB = 1024 * 1024
SIZES_MB = [1, 2, 4, 8, 16, 32, 64]
OLD_SIZES_MB = [1, 8, 64]  # F7.1-F7.6, as chapter 07 cites them
MIN_REQS = 3

# bench/wire_ceiling (mk/bench.mk builds it): the raw loopback peer, and
# the client that measures every bandwidth cell, servers' and ceiling's.
WIRE_CEILING_BIN = os.environ.get("WIRE_CEILING_BIN", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "bench", "wire_ceiling"))


def sizes_mb():
    """The sizes this run measures: SIZES_MB=1,8 (a comma list, each one of
    SIZES_MB's powers of two) for a short run, else all of them. A row keeps
    its number whatever the list (F7.10 is always 1 MB)."""
    raw = os.environ.get("SIZES_MB", "").strip()
    if not raw:
        return list(SIZES_MB)
    got = [int(x) for x in raw.replace(" ", "").split(",") if x]
    bad = [mb for mb in got if mb not in SIZES_MB]
    if bad or not got:
        sys.exit("big_values: SIZES_MB must list some of %s (got %r)" % (",".join(map(str, SIZES_MB)), raw))
    return [mb for mb in SIZES_MB if mb in got]


def start_peer(source="zero"):
    """The raw peer, a process of its own as a server is, sending from the
    zero page (source "zero") or from 64 MB written with the value of seed
    1 ("value"). -> (process, port)."""
    peer = subprocess.Popen([WIRE_CEILING_BIN, "peer", "--source", source], stdout=subprocess.PIPE, text=True)
    line = peer.stdout.readline()
    if not line.strip().isdigit():
        peer.kill()
        raise RuntimeError("wire_ceiling peer did not print its port (got %r)" % line)
    return peer, int(line)


def run_cell(kind, port, size, run_s, seed, expect=None):
    """One cell, measured by `wire_ceiling client`: GET or SET of `size`
    bytes against a server, or the raw peer doing the same (raw-get,
    raw-set). The client stores the value (seeded by `seed`) itself,
    untimed, before a GET cell; then one untimed exchange whose reply it
    checks, then exchanges for run_s seconds and at least MIN_REQS of
    them, each timed from its first byte sent to its reply's last byte
    read. -> (timed exchanges, seconds, first reply ok, latencies in s)."""
    argv = [WIRE_CEILING_BIN, "client", "--port", str(port), "--kind", kind, "--size", str(size),
            "--seconds", "%g" % run_s, "--min-reqs", str(MIN_REQS), "--value-seed", str(seed)]
    if expect:
        argv += ["--expect", expect]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=run_s + 120)
    try:
        d = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RuntimeError("%s: exit %d, no JSON line: %s" % (" ".join(argv), p.returncode, p.stderr[-300:]))
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), p.returncode, d.get("error") or p.stderr[-300:]))
    return d["exchanges"], d["seconds"], d["ok"], [x / 1e6 for x in d["latency_us"]]


def pct(xs, q):
    """The q-quantile of xs by nearest rank: the ceil(q * n)-th smallest
    (q=0.99 of 50 values is the largest)."""
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs) - 1e-9) - 1)] if xs else None


def cell_s(mb, run_s):
    """Seconds of one cell: run_s at 64 MB, down to a quarter of it at
    1 MB, linear in log2 of the size (1 MB cells hold hundreds of
    requests in that time; 64 MB cells tens)."""
    return run_s * (0.25 + 0.75 * (mb.bit_length() - 1) / 6)


def copied(srv):
    v = srv.info("stats").get(("stats", "reply_bytes_copied"))
    return int(v) if v is not None else None


def bandwidth(quick, base):
    run_s = float(os.environ.get("RUN_S", "0.4" if quick else "1.0"))
    runs = 1 if quick else 3
    if not os.access(WIRE_CEILING_BIN, os.X_OK):
        raise RuntimeError("%s not built (make bench builds it)" % WIRE_CEILING_BIN)
    soloist = bl.Server("soloist", bl.servers()[0][1], "soloist", ["--io-threads", "1"] + alone_args())
    # io-threads 2, forced on: the GET's write goes to the worker, which
    # writes without main's per-turn limit (GET only: the target is GET's).
    soloist2 = bl.Server("soloist-t2", bl.servers()[0][1], "soloist",
                         ["--io-threads", "2", "--io-threads-do-reads", "yes", "--io-threads-always-active", "yes"]
                         + alone_args())
    redis = bl.Server("redis", bl.servers()[1][1], "redis-server")
    # Valkey, when VALKEY_SERVER names a build (else the skipped line): a
    # server setting like redis, GET and SET at every size.
    vk = bl.valkey_side(base)
    peers = {"redis": redis}
    if vk is not None:
        peers["valkey"] = bl.Server(vk[0], vk[1], vk[2])
    # The two raw peers: setting -> (process, port, the client's --expect,
    # the value seed the peer's bytes come from; None: any, the zero page).
    peer, raw_port = start_peer()
    vpeer, value_port = start_peer("value")
    raw = {"raw": (peer, raw_port, None, None), "raw-value": (vpeer, value_port, "value", 1)}
    lines = []
    try:
        for mb in sizes_mb():
            size = mb * MB
            for srv in [soloist, soloist2] + list(peers.values()):
                srv.pause()
            for _ in range(runs):
                for setting in ("raw", "raw-value", "on", "off", "on-t2") + tuple(peers):
                    for test in ("GET", "SET"):
                        if setting in ("on-t2", "raw-value") and test == "SET":
                            continue
                        cfg = dict(base, part="bandwidth", setting=setting, test=test, value_mb=mb,
                                   cell_s=round(cell_s(mb, run_s), 3), min_reqs=MIN_REQS, client="wire_ceiling")
                        if setting in raw:
                            proc, port, expect, seed = raw[setting]
                            if proc.poll() is not None:
                                bl.emit(dict(cfg, kind="skipped", why="%s peer exited" % setting))
                                continue
                            n, secs, ok, lats = run_cell("raw-" + test.lower(), port, size, cell_s(mb, run_s),
                                                         seed or mb, expect=expect)
                            extra = {}
                        else:
                            srv = dict(peers, **{"on-t2": soloist2}).get(setting, soloist)
                            with srv.turn():
                                if setting not in peers:
                                    srv.command(b"CONFIG", b"SET", b"reply-copy-avoidance",
                                                b"no" if setting == "off" else b"yes")
                                # INFO's own reply is a bulk string the counter
                                # counts: read it twice to take that off. The
                                # client's untimed SET before a GET cell adds
                                # nothing (its reply is +OK, not a bulk).
                                c0 = copied(srv)
                                c0b = copied(srv)
                                n, secs, ok, lats = run_cell(test.lower(), srv.port, size, cell_s(mb, run_s), mb)
                                c1 = copied(srv)
                            extra = {}
                            if c0 is not None and test == "GET":
                                # n timed GETs and the untimed checked one.
                                extra["bytes_copied_per_get"] = (c1 - c0b - (c0b - c0)) / (n + 1)
                        if setting not in raw:  # the rows pool the servers' latencies
                            extra["latency_us"] = [round(x * 1e6) for x in lats]
                        line = dict(cfg, kind="run", exchanges=n, seconds=secs, ok=ok,
                                    mb_per_s=n * mb / secs, p50_ms=pct(lats, 0.5) * 1e3,
                                    p99_ms=pct(lats, 0.99) * 1e3, max_ms=max(lats) * 1e3, **extra)
                        bl.emit(line)
                        lines.append(line)
    finally:
        for p in (peer, vpeer):
            p.kill()
            p.wait()
            p.stdout.close()
        soloist.stop()
        soloist2.stop()
        for srv in peers.values():
            srv.stop()
    return lines


NOISE_SETTINGS = [("t1-on", 1, "yes"), ("t1-off", 1, "no"), ("t2-on", 2, "yes"), ("t2-off", 2, "no"),
                  ("redis-t1", 1, None), ("redis-t2", 2, None)]
# t1-on twice more: measured the old way, one load-generator process and
# thread for both classes (F7.38); and with main's alone chunk at the
# 64 KB cap instead of 1 MB (F7.39). (label, threads, avoid, a process
# per class, extra server arguments)
ONE_GENERATOR, SMALL_CHUNKS = "t1-on-one-generator", "t1-on-64kb-chunks"
EXTRA_NOISE = [(ONE_GENERATOR, 1, "yes", False, []),
               (SMALL_CHUNKS, 1, "yes", True, ["--io-write-alone-max", "64kb"])]


def alone_args():
    """ALONE_MAX=BYTES: soloist's io-write-alone-max for this run (its
    default when unset), so one build can be measured at several caps."""
    v = os.environ.get("ALONE_MAX")
    return ["--io-write-alone-max", v] if v else []


# Valkey, when VALKEY_SERVER names a build: at io-threads 1, and at 2 with
# its test switch --events-per-io-thread 0, which keeps the worker active
# whenever a turn has an event (as t2-on's always-active does for soloist).
VALKEY_NOISE = [("valkey-t1", 1, None), ("valkey-t2", 2, None)]


def noise_server(label, threads, avoid, cfg, extra_args=()):
    """The server of one noisy-neighbour setting, or None (skipped, said)."""
    if avoid is None and label.startswith("valkey"):
        extra = ["--io-threads", str(threads)] + (["--events-per-io-thread", "0"] if threads > 1 else [])
        try:
            return bl.Server(label, bl.valkey_binary(), "valkey-server", extra)
        except RuntimeError as e:
            bl.emit(dict(cfg, kind="skipped", why=str(e)[-200:]))
            return None
    if avoid is None:
        extra = ["--io-threads", str(threads)] + (["--io-threads-do-reads", "yes"] if threads > 1 else [])
        try:
            return bl.Server(label, bl.servers()[1][1], "redis-server", extra)
        except RuntimeError as e:
            bl.emit(dict(cfg, kind="skipped", why=str(e)[-200:]))
            return None
    srv, why = bl.thread_server(label, bl.servers()[0][1], threads,
                                (["--io-threads-always-active", "yes"] if threads > 1 else []) + alone_args()
                                + list(extra_args))
    if srv is None:
        bl.emit(dict(cfg, kind="skipped", why=why))
        return None
    srv.command(b"CONFIG", b"SET", b"reply-copy-avoidance", avoid.encode())
    return srv


def noise_run(port, small, big, dur, split):
    """One run: the small class alone (big None) or with the big class.
    split: the big class comes from a second soloist-bench process, so the
    thread that times the small GETs never reads a 10 MB reply; it starts
    first and runs half a second longer, so its load covers the small
    class's whole window. -> [(class report, argv text)]."""
    run = ["-t", "1", "--prefill", "--warmup", "500ms"]
    if big is None or not split:
        rep, argv = bl.soloist_bench(port, run + ["-d", dur + "s", "--class", small]
                                     + (["--class", big] if big else []), timeout=120)
        return [(c, argv) for c in rep["classes"]]
    bg = bl.soloist_bench_start(port, run + ["-d", "%gs" % (float(dur) + 0.5), "--class", big])
    try:
        rep, argv = bl.soloist_bench(port, run + ["-d", dur + "s", "--class", small], timeout=120)
    finally:
        brep, bargv = bl.soloist_bench_finish(bg, timeout=120)
    return [(c, argv) for c in rep["classes"]] + [(c, bargv) for c in brep["classes"]]


def noisy(quick, base):
    small_rate = int(os.environ.get("SMALL_RATE", "4000"))
    big_rate = float(os.environ.get("BIG_RATE", "4"))
    dur = os.environ.get("NOISE_S", "3")
    runs = int(os.environ.get("NOISE_RUNS", "1" if quick else "3"))
    small = "name=small,conns=16,rate=%d,value=1kb,keys=1000" % small_rate
    big = "name=big,tag=b,conns=2,rate=%g,value=10mb,keys=4" % big_rate  # its own keys in either process
    lines = []
    valkey = VALKEY_NOISE if bl.valkey_binary() else []
    for label, threads, avoid, split, extra in [s + (True, []) for s in NOISE_SETTINGS + valkey] + EXTRA_NOISE:
        cfg = dict(base, part="noisy", setting=label, small_rate=small_rate, big_rate=big_rate, small_conns=16,
                   big_conns=2, small_value=1024, big_value=10 * MB, duration_s=float(dur),
                   generators="one per class" if split else "one for both classes", server_args=extra)
        srv = noise_server(label, threads, avoid, cfg, extra)
        if srv is None:
            continue
        try:
            for run, noise in [(r, n) for r in range(runs) for n in (False, True)]:
                for c, argv in noise_run(srv.port, small, big if noise else None, dur, split):
                    lat = c["latency_us"]
                    line = dict(cfg, kind="run", noise=noise, run=run, cls=c["name"], requests=c["requests"], rps=c["rps"],
                                errors=c["errors"], p50_us=lat["p50"], p90_us=lat["p90"], p99_us=lat["p99"],
                                p999_us=lat["p99.9"], max_us=lat["max"], service_p999_us=c["service_us"]["p99.9"],
                                slip_p999_us=c["slip_us"]["p99.9"], command=argv)
                    bl.emit(line)
                    lines.append(line)
        finally:
            srv.stop()
    return lines


def med(xs):
    xs = [x for x in xs if x is not None]
    return bl.median(xs) if xs else None


def ms(x):
    """Milliseconds to three significant figures or so."""
    return "%.3g" % x if x < 100 else "%.0f" % x


def sweep(bw, row, quick):
    """F7.10-F7.17 (GET) and F7.28-F7.35 (SET): per size, the three
    servers' MB/s and their large requests' p50 and p99 (pooled over the
    cell's runs); per operation, where copy avoidance starts to pay."""
    def cell(setting, test, mb):
        return [ln for ln in bw if ln["setting"] == setting and ln["test"] == test and ln["value_mb"] == mb]

    def mbps(setting, test, mb):
        return med([ln["mb_per_s"] for ln in cell(setting, test, mb)])

    def lats(setting, test, mb):
        return [x / 1e3 for ln in cell(setting, test, mb) for x in ln["latency_us"]]

    sizes = [mb for mb in SIZES_MB if any(ln["value_mb"] == mb for ln in bw)]
    runs = max([len(cell("on", "GET", mb)) for mb in sizes] or [0])
    for test, first, summary in (("GET", 10, 17), ("SET", 28, 35)):
        for mb in sizes:
            ceil, on, off, red = (mbps(k, test, mb) for k in ("raw", "on", "off", "redis"))
            lt = {k: lats(k, test, mb) for k in ("on", "off", "redis")}
            if None in (ceil, on, off, red) or not all(lt.values()):
                continue
            row(first + SIZES_MB.index(mb),
                "%s bandwidth, %d MB values, one connection, one request at a time, and each %s's latency "
                "from its first byte sent to its reply's last byte (p50, p99 of every timed %s of the cell's "
                "runs): soloist copy avoidance on / off, redis-server 7.0, raw loopback ceiling"
                % (test, mb, test, test),
                "on %.0f, off %.0f, redis %.0f MB/s (ceiling %.0f): on/redis = %.2f×, on/off = %.2f×, "
                "on/ceiling = %.2f×; on p50 %s ms, on p99 %s ms; off p50 %s ms, off p99 %s ms; "
                "redis p50 %s ms, redis p99 %s ms (%d, %d, %d requests)"
                % (on, off, red, ceil, on / red, on / off, on / ceil,
                   ms(pct(lt["on"], 0.5)), ms(pct(lt["on"], 0.99)), ms(pct(lt["off"], 0.5)),
                   ms(pct(lt["off"], 0.99)), ms(pct(lt["redis"], 0.5)), ms(pct(lt["redis"], 0.99)),
                   len(lt["on"]), len(lt["off"]), len(lt["redis"])),
                test=test, value_mb=mb, runs=len(cell("on", test, mb)))
        got = [(mb, mbps("on", test, mb), mbps("off", test, mb), mbps("redis", test, mb)) for mb in sizes]
        got = [g for g in got if None not in g]
        if not got:
            continue
        vs_off = [(mb, on / off) for mb, on, off, _ in got]
        vs_red = [(mb, on / red) for mb, on, _, red in got]
        # Ahead in every run: every run of on faster than every run of off.
        apart = {mb: min(ln["mb_per_s"] for ln in cell("on", test, mb))
                 > max(ln["mb_per_s"] for ln in cell("off", test, mb)) for mb, *_ in got}
        pays = None
        for mb, *_ in reversed(got):
            if not apart[mb]:
                break
            pays = mb
        lo, hi = min(vs_off, key=lambda x: x[1]), max(vs_off, key=lambda x: x[1])
        rlo, rhi = min(vs_red, key=lambda x: x[1]), max(vs_red, key=lambda x: x[1])
        row(summary, "where copy avoidance starts to pay, %s: soloist copy avoidance on / off, median MB/s of "
            "each size's runs, %s MB values, one connection, one request at a time; on ahead = every run "
            "of on faster than every run of off" % (test, ", ".join(str(mb) for mb in sizes)),
            "on/off lowest %.2f× (at %d MB), highest %.2f× (at %d MB); by size %s; on ahead of off at %s; "
            "%s; on/redis lowest %.2f× (at %d MB), highest %.2f× (at %d MB)%s"
            % (lo[1], lo[0], hi[1], hi[0], ", ".join("%d MB: %.2f×" % r for r in vs_off),
               ", ".join("%d" % mb for mb in sizes if apart[mb]) + " MB" if any(apart.values()) else "no size",
               "pays from %d MB: on ahead there and at every larger size" % pays if pays is not None
               else "pays at no size: on is not ahead at %d MB" % got[-1][0],
               rlo[1], rlo[0], rhi[1], rhi[0], " (one run per cell)" if runs < 2 else ""),
            test=test, sizes_mb=",".join(str(mb) for mb in sizes), runs=runs)


def beside_valkey(bw, row):
    """F7.54 (GET) and F7.55 (SET): soloist, copy avoidance on, beside
    Valkey at every size, in the cells of F7.10-F7.17 and F7.28-F7.35
    (Valkey's cells alternated with the others). Per size the two medians,
    their ratio, whether every run of one is faster than every run of the
    other (findings_core.verdict's words, which the book's readings parse),
    and each side's p50 and p99 over the cell's timed requests."""
    def cell(setting, test, mb):
        return [ln for ln in bw if ln["setting"] == setting and ln["test"] == test and ln["value_mb"] == mb]

    for test, rid in (("GET", 54), ("SET", 55)):
        got = []
        for mb in SIZES_MB:
            on, vk = cell("on", test, mb), cell("valkey", test, mb)
            if not on or not vk:
                continue
            a, b = [ln["mb_per_s"] for ln in on], [ln["mb_per_s"] for ln in vk]
            la = [x / 1e3 for ln in on for x in ln["latency_us"]]
            lb = [x / 1e3 for ln in vk for x in ln["latency_us"]]
            side = verdict(a, b, ("soloist", "Valkey"))
            got.append("%d MB: %.0f / %.0f MB/s = %.2f× (%s); p50 %s / %s ms, p99 %s / %s ms"
                       % (mb, med(a), med(b), med(a) / med(b), side, ms(pct(la, 0.5)), ms(pct(lb, 0.5)),
                          ms(pct(la, 0.99)), ms(pct(lb, 0.99))))
        if got:
            row(rid, "%s bandwidth beside Valkey, one connection, one request at a time: soloist with copy "
                "avoidance on / Valkey (built from source, io-threads 1), median MB/s of each size's runs, and "
                "each side's p50 and p99 over every timed %s of the cell's runs (soloist / Valkey)" % (test, test),
                "; ".join(got), test=test, peer="Valkey", valkey_version=(bw or [{}])[0].get("valkey_version"),
                runs=max(len(cell("valkey", test, mb)) for mb in SIZES_MB))


def touch_row(tc, row):
    """F7.57: the first and the second write of fresh memory, from (d)."""
    if not tc:
        return
    first, second = [ln["first_mb_per_s"] for ln in tc], [ln["second_mb_per_s"] for ln in tc]
    row(57, "memory this process has never written: a 64 MB anonymous mapping written once (a page fault a "
        "page) and then again (bench/wire_ceiling.c touch), MB/s of each write, median of the runs",
        "first write %.0f MB/s, second %.0f MB/s: the first at %.3f× the second's speed (runs first %.0f–%.0f, "
        "second %.0f–%.0f MB/s)" % (med(first), med(second), med(first) / med(second), min(first), max(first),
                                    min(second), max(second)), runs=len(tc), size_mb=64)


def value_ceiling(row, mbps):
    """F7.36-F7.37: the ceiling again, the peer sending from 64 MB written
    once (the memory a server's value lives in) instead of the zero page.
    The two ceilings' ratio is what the source memory costs a sender; a
    server's ratio to this one is what its own work costs."""
    cells = [(mb, mbps("raw-value", "GET", mb), mbps("raw", "GET", mb), mbps("on", "GET", mb),
              mbps("on-t2", "GET", mb), mbps("redis", "GET", mb)) for mb in SIZES_MB]
    cells = [c for c in cells if None not in c[:4]]
    if not cells:
        return
    row(36, "GET bandwidth of the raw peer sending from written memory (64 MB filled once, as a server's value is) "
        "against the zero-page ceiling, and GET with copy avoidance on at io-threads 1 (t1) and 2 (t2) and "
        "redis-server 7.0 against it, median MB/s, one connection, one request at a time",
        "; ".join("%d MB: %.0f MB/s = %.2f× zero-page ceiling; t1 %.2f×%s, redis %s" % (
            mb, v, v / z, one / v, ", t2 %.2f×" % (two / v) if two else "",
            "%.2f×" % (red / v) if red else "-") for mb, v, z, one, two, red in cells), test="GET")
    ratios = [(label, mb, x / v) for mb, v, z, one, two, red in cells for label, x in (("t1", one), ("t2", two))
              if x]
    row(37, "target, read against the written-memory ceiling (F7.36): GET with copy avoidance on ≥ 0.8× at every "
        "size from 1 to 64 MB, at io-threads 1 (t1) and 2 (t2, forced on)", target_figure(ratios), test="GET")


def target_figure(ratios):
    """F7.7's and F7.37's figure from (thread label, MB, ratio) cells: met
    when the lowest is at least 0.8×, then every cell."""
    worst = min(ratios, key=lambda r: r[2])
    return "%s (lowest %.2f×: %s %d MB); %s" % ("met" if worst[2] >= 0.8 else "not met", worst[2], worst[0], worst[1],
                                               ", ".join("%s %d MB %.2f×" % r for r in ratios))


def ceiling_holds(bw, row, sizes):
    """F7.18: a ceiling a server beats is not a ceiling. Per operation and
    size, each server's median MB/s over the ceiling's; the target is that
    none is above 1. The headline is the highest ratio, so the row reads
    as "met" / "not met" and as "at most 1"."""
    def mbps(setting, test, mb):
        return med([ln["mb_per_s"] for ln in bw if ln["setting"] == setting and ln["test"] == test
                    and ln["value_mb"] == mb])

    names = (("on", "on"), ("off", "off"), ("on-t2", "on-t2"), ("redis", "redis"))
    cells = []  # (test, mb, [(name, ratio)])
    for test in ("GET", "SET"):
        for mb in sizes:
            ceil = mbps("raw", test, mb)
            got = [(label, mbps(k, test, mb)) for k, label in names if test == "GET" or k != "on-t2"]
            got = [(label, v) for label, v in got if v is not None or label != "on-t2"]  # on-t2: GET, when run
            if not ceil or None in (v for _, v in got):
                continue
            cells.append((test, mb, [(label, v / ceil) for label, v in got]))
    if not cells:
        return
    top = max(((r, label, test, mb) for test, mb, rs in cells for label, r in rs))
    over = ["%s %s %d MB %.2f×" % (label, test, mb, r) for test, mb, rs in cells for label, r in rs if r > 1]
    row(18, "target: no server faster than the raw loopback ceiling, GET and SET at every size (each server's "
        "median MB/s over the ceiling's, %s MB values, one connection, one request at a time, every cell read by "
        "the same C client); a ceiling a server beats is not a ceiling" % ", ".join(str(mb) for mb in sizes),
        "%s (highest %.2f×: %s %s %d MB)%s; %s"
        % ("met" if not over else "not met", top[0], top[1], top[2], top[3],
           "" if not over else "; above the ceiling: " + ", ".join(over),
           "; ".join("%s %d MB: %s" % (test, mb, ", ".join("%s %.2f×" % x for x in rs)) for test, mb, rs in cells)),
        sizes_mb=",".join(str(mb) for mb in sizes))


def findings(bw, nz, quick, tc=()):
    cmd = "make findings BENCH=big_values" + (" QUICK=1" if quick else "")
    base = {"quick": quick, "peer": "redis-server 7.0", "io_threads": 1}

    def row(rid, claim, figure, **cfg):
        bl.emit({"finding": True, "id": "F7.%d" % rid, "claim": claim, "figure": figure,
                 "config": dict(base, **cfg), "command": cmd})

    def mbps(setting, test, mb):
        return med([ln["mb_per_s"] for ln in bw if ln["setting"] == setting and ln["test"] == test
                    and ln["value_mb"] == mb])

    rid = 1
    for test in ("GET", "SET"):
        for i, mb in enumerate(OLD_SIZES_MB):  # GET: F7.1-F7.3, SET: F7.4-F7.6
            ceil, on, off, red = (mbps(s, test, mb) for s in ("raw", "on", "off", "redis"))
            if None in (ceil, on, off, red):
                continue
            row(rid + i, "%s bandwidth, %d MB values, one connection: soloist copy avoidance on / off, "
                "redis-server 7.0, raw loopback ceiling" % (test, mb),
                "on %.0f, off %.0f, redis %.0f, ceiling %.0f MB/s: on = %.2f× ceiling, off = %.2f×, redis = %.2f×"
                % (on, off, red, ceil, on / ceil, off / ceil, red / ceil), test=test, value_mb=mb)
        rid += 3
    cells = [(label, mb, mbps(k, "GET", mb), mbps("raw", "GET", mb)) for k, label in (("on", "t1"), ("on-t2", "t2"))
             for mb in SIZES_MB]
    ratios = [(label, mb, v / c) for label, mb, v, c in cells if v and c]
    if ratios:
        row(7, "target: GET with copy avoidance on ≥ 0.8× the loopback ceiling at every size from 1 to 64 MB, at "
            "io-threads 1 (t1) and 2 (t2, forced on)", target_figure(ratios), test="GET")
    value_ceiling(row, mbps)
    t2 = [(mb, mbps("on-t2", "GET", mb), mbps("on", "GET", mb), mbps("raw", "GET", mb)) for mb in SIZES_MB]
    t2 = [g for g in t2 if None not in g]
    if t2:
        row(19, "GET bandwidth at io-threads 2 (forced on: a worker writes each reply, without main's per-turn "
            "limit), copy avoidance on, median MB/s of each size's runs, one connection, one request at a time: "
            "against the loopback ceiling and against io-threads 1",
            "; ".join("%d MB: t2 %.0f MB/s = %.2f× ceiling, %.2f× t1" % (mb, v, v / c, v / one)
                      for mb, v, one, c in t2), test="GET", io_threads=2)
    measured = [mb for mb in SIZES_MB if any(ln["value_mb"] == mb for ln in bw)]
    for j, setting in enumerate(("on", "off")):  # F7.8, F7.9
        per = {mb: med([ln.get("bytes_copied_per_get") for ln in bw if ln["setting"] == setting
                        and ln["test"] == "GET" and ln["value_mb"] == mb]) for mb in measured}
        if not per or None in per.values():
            continue
        row(8 + j, "bytes the main thread copies into reply buffers per large GET, copy avoidance %s "
            "(INFO reply_bytes_copied)%s" % (setting, "; target zero" if setting == "on" else ""),
            ", ".join("%d MB: %.0f B" % (mb, per[mb]) for mb in measured), test="GET")
    ceiling_holds(bw, row, measured)

    sweep(bw, row, quick)
    beside_valkey(bw, row)
    touch_row(tc, row)

    def p(setting, noise, key):
        return med([ln[key] for ln in nz if ln["setting"] == setting and ln["noise"] == noise
                    and ln["cls"] == "small"])

    rid = 20
    for setting, threads, _ in NOISE_SETTINGS:  # F7.20-F7.25
        if p(setting, True, "p999_us") is None or p(setting, False, "p999_us") is None:
            rid += 1
            continue
        q = [p(setting, False, k) for k in ("p50_us", "p99_us", "p999_us", "max_us")]
        nn = [p(setting, True, k) for k in ("p50_us", "p99_us", "p999_us", "max_us")]
        sq, sn = p(setting, False, "service_p999_us"), p(setting, True, "service_p999_us")
        row(rid, "noisy neighbour, 1 KB GETs' latency without / with 10 MB GETs beside them (sent by a second "
            "load-generator process), from each request's due time; then the service p99.9, from its send: %s"
            % setting,
            "p50 %.0f/%.0f, p99 %.0f/%.0f, p99.9 %.0f/%.0f, max %.0f/%.0f µs; p99.9 with noise = %.2f× without; "
            "service p99.9 %.0f/%.0f µs = %.2f×"
            % (q[0], nn[0], q[1], nn[1], q[2], nn[2], q[3], nn[3], nn[2] / q[2], sq, sn, sn / sq),
            setting=setting, io_threads=threads)
        rid += 1
    for j, (mine, theirs) in enumerate((("t1-on", "redis-t1"), ("t2-on", "redis-t2"))):  # F7.26-F7.27
        a, aq, b = p(mine, True, "p999_us"), p(mine, False, "p999_us"), p(theirs, True, "p999_us")
        if None in (a, aq, b) or not aq or not b:  # a cell that timed no small GET has no ratio
            continue
        row(26 + j, "target: small-class p99.9 with noise ≤ 2× without, and ≤ 0.25× redis-server 7.0's "
            "under the same noise (%s vs %s)" % (mine, theirs),
            "%.2f× without (%s), %.2f× redis (%s)" % (a / aq, "met" if a / aq <= 2 else "not met", a / b,
                                                      "met" if a / b <= 0.25 else "not met"),
            setting=mine, io_threads=1 if mine.startswith("t1") else 2)
    a, aq, b, bq = p(ONE_GENERATOR, True, "p999_us"), p(ONE_GENERATOR, False, "p999_us"), \
        p("t1-on", True, "p999_us"), p("t1-on", False, "p999_us")
    if None not in (a, aq, b, bq) and aq and bq:
        row(38, "noisy neighbour at io-threads 1, copy avoidance on, measured with one load-generator process "
            "and thread for both classes, so the thread that times the 1 KB GETs also reads every 10 MB reply: "
            "its small-class p99.9 with noise over without, beside the same server measured with a process per "
            "class (F7.20)",
            "one generator %.2f× (p99.9 %.0f/%.0f µs); a process per class %.2f× (%.0f/%.0f µs)"
            % (a / aq, aq, a, b / bq, bq, b), setting=ONE_GENERATOR, io_threads=1)

    vk = [(label, p(label, False, "p999_us"), p(label, True, "p999_us")) for label, _, _ in VALKEY_NOISE]
    mine = {label: p(label, True, "p999_us") for label in ("t1-on", "t2-on")}
    if all(q and n for _, q, n in vk) and all(mine.values()):
        row(56, "noisy neighbour beside Valkey (F7.20's load): Valkey's small-class p99.9 without / with the 10 MB "
            "GETs at io-threads 1 and 2 (forced on: --events-per-io-thread 0), and soloist's with noise (copy "
            "avoidance on, t1-on and t2-on) over Valkey's at the same thread count",
            "; ".join("%s p99.9 %.0f/%.0f µs = %.2f× without" % (label, q, n, n / q) for label, q, n in vk)
            + "; with noise soloist / Valkey: t1 %.2f×, t2 %.2f×" % (mine["t1-on"] / vk[0][2],
                                                                     mine["t2-on"] / vk[1][2]),
            settings="valkey-t1,valkey-t2", peer="Valkey", valkey_version=nz[0].get("valkey_version") if nz else None)

    def big_p50(setting):
        return med([ln["p50_us"] for ln in nz if ln["setting"] == setting and ln["cls"] == "big"])

    sides = [(label, p(label, False, "p999_us"), p(label, True, "p999_us"), p(label, False, "service_p999_us"),
              p(label, True, "service_p999_us"), big_p50(label)) for label in (SMALL_CHUNKS, "t1-on")]
    if all(None not in side and side[1] and side[3] for side in sides):
        row(39, "noisy neighbour at io-threads 1, copy avoidance on, with main's chunk when a client is written "
            "alone at the 64 KB cap (io-write-alone-max 64kb) beside the default 1 MB (F7.20): the small class's "
            "p99.9 and service p99.9 with noise over without, and the 10 MB GETs' own p50",
            "; ".join("%s chunks: p99.9 %.2f×, service p99.9 %.2f×, 10 MB GET p50 %s ms"
                      % ("64 KB" if label == SMALL_CHUNKS else "1 MB", n / q, sn / sq, ms(b / 1e3))
                      for label, q, n, sq, sn, b in sides), setting=SMALL_CHUNKS, io_threads=1)


def first_touch(quick, base):
    """(d) What memory never written costs on this machine: wire_ceiling
    touch maps 64 MB, writes it once (a page fault a page) and again.
    A server that receives a large value into a buffer it has just
    allocated pays the first rate; one that reuses its buffer, the second."""
    lines = []
    for i in range(3 if quick else 5):
        out = subprocess.run([WIRE_CEILING_BIN, "touch", "--size", str(64 * MB)], capture_output=True, text=True,
                             timeout=60)
        if out.returncode != 0:
            bl.emit(dict(base, part="touch", kind="skipped", why=out.stderr[-200:]))
            return []
        got = json.loads(out.stdout)
        ln = dict(base, part="touch", kind="run", run=i, size=got["size"], first_mb_per_s=got["first_mb_per_s"],
                  second_mb_per_s=got["second_mb_per_s"])
        bl.emit(ln)
        lines.append(ln)
    return lines


def main():
    bl.install_cleanup()
    quick = bl.quick()
    base = {"quick": quick, **bl.placement()}
    if os.environ.get("ALONE_MAX"):
        base["io_write_alone_max"] = os.environ["ALONE_MAX"]
    tc = first_touch(quick, base)
    bw = bandwidth(quick, base)
    nz = noisy(quick, base)
    findings(bw, nz, quick, tc)


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
