#!/usr/bin/env python3
"""big_values.py — step 7: large values without copies, and the noisy neighbour.

Step 7 benchmark. Owns the measures of reply copy avoidance (src/reply.c
reply-ref, src/client_io.c write-iov): one soloist binary switched by
CONFIG SET reply-copy-avoidance yes|no (a soloist switch, not a Valkey
option), beside Debian's redis-server 7.0, in one run.

(a) Bandwidth and the large requests' own latency. One connection, one
    request at a time: GET of a stored value of 1, 2, 4, 8, 16, 32 and
    64 MB (the reply read into a reused buffer), and SET of the same
    sizes. Each cell starts with one untimed exchange whose reply is
    checked (the GET's bytes against the value, the SET's +OK), then
    times every request from the first byte sent to the last byte of its
    reply. Beside them the ceiling: a raw loopback sender and receiver
    doing the same exchange (a small request answered by the value's
    bytes, or the value's bytes answered by 5 bytes) between two
    processes, with no server logic at all. Per cell MB/s and the p50
    and p99 of the per-request latencies (a server's run line keeps them
    all, in µs; the ceiling's keeps its p50, p99 and max). A cell runs
    for a time that grows with the size (cell_s(): RUN_S at 64 MB, a
    quarter of it at 1 MB) and for at least MIN_REQS timed requests;
    settings alternated within each size.
(b) The noisy neighbour, scaled to 2 cores: soloist-bench in open loop,
    1 KB GETs at SMALL_RATE/s on SMALL_CONNS connections, with and without
    10 MB GETs at BIG_RATE/s on 2 connections beside them; the small
    class's latency p50 ... p99.9 and max (from the due time, so a stall
    shows). soloist io-threads 1 and 2 (forced on), copy avoidance on and
    off; redis-server 7.0 at io-threads 1 and 2.
(c) The bytes main copies per large GET: INFO stats reply_bytes_copied
    (bulk payload bytes memcpy'd into reply buffers) over the GETs of (a).

Prints JSON lines: kind=run (one per measurement), kind=skipped, and
generic finding rows F7.1-F7.39 (tools/findings.py) computed from this
run's own run lines. Targets are reported, never tuned for. Knobs: QUICK=1
(about a minute, one run per cell; full about 4 minutes, three), RUN_S,
SMALL_RATE, BIG_RATE, NOISE_S, SOLOIST_BIN, REDIS_BIN, SOLOIST_BENCH_BIN.
bench/run.py stops it at 300 s (120 s with QUICK).

Valkey anchors: src/networking.c (addReplyBulk's reference path,
writevToClient, _postWriteToClient; Valkey pull request #2078, 9.0) and
the figures of Valkey's blog post on reply copy avoidance, measured, not
mirrored.
"""

import math
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

MB = 1024 * 1024
SIZES_MB = [1, 2, 4, 8, 16, 32, 64]
OLD_SIZES_MB = [1, 8, 64]  # F7.1-F7.6, as chapter 07 cites them
MIN_REQS = 3

# The raw loopback peer, a process of its own as a server is: per
# exchange it reads an 8-byte request length and an 8-byte reply length,
# the request's bytes, then sends the reply's bytes; one connection at a
# time, for ever.
RAW_PEER = r"""
import socket
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(1)
print(ls.getsockname()[1], flush=True)
out = memoryview(bytes(64 * 1024 * 1024 + 64))
sink = bytearray(4 * 1024 * 1024)
def serve(s):
    while True:
        h = b""
        while len(h) < 16:
            c = s.recv(16 - len(h))
            if not c: return
            h += c
        req, rep = int.from_bytes(h[:8], "little"), int.from_bytes(h[8:], "little")
        while req:
            n = s.recv_into(sink, min(req, len(sink)))
            if not n: return
            req -= n
        s.sendall(out[:rep])
while True:
    s, _ = ls.accept()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    serve(s)
    s.close()
"""


def recv_n(s, n, buf):
    """Reads exactly n bytes into buf (reused); returns them as a view."""
    view = memoryview(buf)
    got = 0
    while got < n:
        k = s.recv_into(view[got:], n - got)
        if not k:
            raise ConnectionError("closed")
        got += k
    return view[:n]


def bulk_len(s):
    line = b""
    while not line.endswith(b"\r\n"):
        c = s.recv(1)
        if not c:
            raise ConnectionError("closed")
        line += c
    return line, int(line[1:-2])


def run_cell(kind, port, size, value, run_s, buf):
    """One cell: GET or SET of `size` bytes against a server, or the raw
    peer doing the same. One untimed exchange first, its reply checked;
    then exchanges for run_s seconds and at least MIN_REQS of them, each
    timed from its first byte sent to its reply's last byte read.
    -> (timed exchanges, seconds, first reply ok, latencies in s)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    setreq = [b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n" % size, value, b"\r\n"]

    def exchange(check):
        if kind == "raw-get":
            s.sendall((0).to_bytes(8, "little") + size.to_bytes(8, "little"))
            recv_n(s, size, buf)
        elif kind == "raw-set":
            s.sendall((size).to_bytes(8, "little") + (5).to_bytes(8, "little"))
            s.sendall(value)
            recv_n(s, 5, buf)
        elif kind == "get":
            s.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n")
            line, ln = bulk_len(s)
            got = recv_n(s, ln + 2, buf)
            if check:
                return ln == size and got[:ln] == value
        else:
            s.sendmsg(setreq)
            r = recv_n(s, 5, buf)
            if check:
                return bytes(r) == b"+OK\r\n"
        return True

    ok = exchange(True)
    lats, clock = [], time.perf_counter
    t0 = clock()
    while clock() - t0 < run_s or len(lats) < MIN_REQS:
        a = clock()
        exchange(False)
        lats.append(clock() - a)
    secs = clock() - t0
    s.close()
    return len(lats), secs, ok, lats


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


def set_value(srv, value):
    with socket.create_connection(("127.0.0.1", srv.port), timeout=60) as s:
        s.sendall(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n" % len(value))
        s.sendall(value)
        s.sendall(b"\r\n")
        assert bl.read_reply(s).startswith(b"+OK")


def copied(srv):
    v = srv.info("stats").get(("stats", "reply_bytes_copied"))
    return int(v) if v is not None else None


def bandwidth(quick, base):
    run_s = float(os.environ.get("RUN_S", "0.4" if quick else "1.0"))
    runs = 1 if quick else 3
    soloist = bl.Server("soloist", bl.servers()[0][1], "soloist", ["--io-threads", "1"])
    redis = bl.Server("redis", bl.servers()[1][1], "redis-server")
    peer = subprocess.Popen([sys.executable, "-c", RAW_PEER], stdout=subprocess.PIPE, text=True)
    raw_port = int(peer.stdout.readline())
    buf = bytearray(64 * MB + 64)
    lines = []
    try:
        for mb in SIZES_MB:
            size = mb * MB
            value = os.urandom(MB) * mb
            for srv in (soloist, redis):
                srv.pause()
            for _ in range(runs):
                for setting in ("raw", "on", "off", "redis"):
                    for test in ("GET", "SET"):
                        cfg = dict(base, part="bandwidth", setting=setting, test=test, value_mb=mb,
                                   cell_s=round(cell_s(mb, run_s), 3), min_reqs=MIN_REQS)
                        if setting == "raw":
                            if peer.poll() is not None:
                                bl.emit(dict(cfg, kind="skipped", why="raw peer exited"))
                                continue
                            n, secs, ok, lats = run_cell("raw-" + test.lower(), raw_port, size, value,
                                                         cell_s(mb, run_s), buf)
                            extra = {}
                        else:
                            srv = redis if setting == "redis" else soloist
                            with srv.turn():
                                if setting != "redis":
                                    srv.command(b"CONFIG", b"SET", b"reply-copy-avoidance",
                                                b"yes" if setting == "on" else b"no")
                                set_value(srv, value)
                                # INFO's own reply is a bulk string the counter
                                # counts: read it twice to take that off.
                                c0 = copied(srv)
                                c0b = copied(srv)
                                n, secs, ok, lats = run_cell(test.lower(), srv.port, size, value,
                                                             cell_s(mb, run_s), buf)
                                c1 = copied(srv)
                            extra = {}
                            if c0 is not None and test == "GET":
                                # n timed GETs and the untimed checked one.
                                extra["bytes_copied_per_get"] = (c1 - c0b - (c0b - c0)) / (n + 1)
                        if setting != "raw":  # the rows pool the servers' latencies
                            extra["latency_us"] = [round(x * 1e6) for x in lats]
                        line = dict(cfg, kind="run", exchanges=n, seconds=secs, ok=ok,
                                    mb_per_s=n * mb / secs, p50_ms=pct(lats, 0.5) * 1e3,
                                    p99_ms=pct(lats, 0.99) * 1e3, max_ms=max(lats) * 1e3, **extra)
                        bl.emit(line)
                        lines.append(line)
    finally:
        peer.kill()
        soloist.stop()
        redis.stop()
    return lines


NOISE_SETTINGS = [("t1-on", 1, "yes"), ("t1-off", 1, "no"), ("t2-on", 2, "yes"), ("t2-off", 2, "no"),
                  ("redis-t1", 1, None), ("redis-t2", 2, None)]


def noisy(quick, base):
    small_rate = int(os.environ.get("SMALL_RATE", "4000"))
    big_rate = float(os.environ.get("BIG_RATE", "4"))
    dur = os.environ.get("NOISE_S", "3" if quick else "10")
    small = "name=small,conns=16,rate=%d,value=1kb,keys=1000" % small_rate
    big = "name=big,conns=2,rate=%g,value=10mb,keys=4" % big_rate
    lines = []
    for label, threads, avoid in NOISE_SETTINGS:
        cfg = dict(base, part="noisy", setting=label, small_rate=small_rate, big_rate=big_rate, small_conns=16,
                   big_conns=2, small_value=1024, big_value=10 * MB, duration_s=float(dur))
        if avoid is None:
            extra = ["--io-threads", str(threads)] + (["--io-threads-do-reads", "yes"] if threads > 1 else [])
            try:
                srv = bl.Server(label, bl.servers()[1][1], "redis-server", extra)
            except RuntimeError as e:
                bl.emit(dict(cfg, kind="skipped", why=str(e)[-200:]))
                continue
        else:
            srv, why = bl.thread_server(label, bl.servers()[0][1], threads,
                                        ["--io-threads-always-active", "yes"] if threads > 1 else [])
            if srv is None:
                bl.emit(dict(cfg, kind="skipped", why=why))
                continue
            srv.command(b"CONFIG", b"SET", b"reply-copy-avoidance", avoid.encode())
        try:
            for noise in (False, True):
                classes = ["--class", small] + (["--class", big] if noise else [])
                rep, argv = bl.soloist_bench(srv.port, ["-t", "1", "--prefill", "--warmup", "500ms", "-d", dur + "s"]
                                             + classes, timeout=120)
                for c in rep["classes"]:
                    lat = c["latency_us"]
                    line = dict(cfg, kind="run", noise=noise, cls=c["name"], requests=c["requests"], rps=c["rps"],
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


def findings(bw, nz, quick):
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
    ratios = [(mb, mbps("on", "GET", mb), mbps("raw", "GET", mb)) for mb in SIZES_MB if mb >= 8]
    ratios = [(mb, on / c) for mb, on, c in ratios if on and c]
    if ratios:
        worst = min(r for _, r in ratios)
        row(7, "target: GET with copy avoidance on ≥ 0.8× the loopback ceiling at ≥ 8 MB",
            "%s (lowest %.2f×: %s)" % ("met" if worst >= 0.8 else "not met", worst,
                                       ", ".join("%d MB %.2f×" % r for r in ratios)), test="GET")
    for j, setting in enumerate(("on", "off")):  # F7.8, F7.9
        per = {mb: med([ln.get("bytes_copied_per_get") for ln in bw if ln["setting"] == setting
                        and ln["test"] == "GET" and ln["value_mb"] == mb]) for mb in SIZES_MB}
        if None in per.values():
            continue
        row(8 + j, "bytes the main thread copies into reply buffers per large GET, copy avoidance %s "
            "(INFO reply_bytes_copied)%s" % (setting, "; target zero" if setting == "on" else ""),
            ", ".join("%d MB: %.0f B" % (mb, per[mb]) for mb in SIZES_MB), test="GET")

    sweep(bw, row, quick)

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
        row(rid, "noisy neighbour, 1 KB GETs' latency without / with 10 MB GETs beside them: %s" % setting,
            "p50 %.0f/%.0f, p99 %.0f/%.0f, p99.9 %.0f/%.0f, max %.0f/%.0f µs; p99.9 with noise = %.2f× without"
            % (q[0], nn[0], q[1], nn[1], q[2], nn[2], q[3], nn[3], nn[2] / q[2]), setting=setting,
            io_threads=threads)
        rid += 1
    for j, (mine, theirs) in enumerate((("t1-on", "redis-t1"), ("t2-on", "redis-t2"))):  # F7.26-F7.27
        a, aq, b = p(mine, True, "p999_us"), p(mine, False, "p999_us"), p(theirs, True, "p999_us")
        if None in (a, aq, b):
            continue
        row(26 + j, "target: small-class p99.9 with noise ≤ 2× without, and ≤ 0.25× redis-server 7.0's "
            "under the same noise (%s vs %s)" % (mine, theirs),
            "%.2f× without (%s), %.2f× redis (%s)" % (a / aq, "met" if a / aq <= 2 else "not met", a / b,
                                                      "met" if a / b <= 0.25 else "not met"),
            setting=mine, io_threads=1 if mine.startswith("t1") else 2)


def main():
    bl.install_cleanup()
    quick = bl.quick()
    base = {"quick": quick, **bl.placement()}
    bw = bandwidth(quick, base)
    nz = noisy(quick, base)
    findings(bw, nz, quick)


if __name__ == "__main__":
    main()
