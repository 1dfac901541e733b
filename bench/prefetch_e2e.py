#!/usr/bin/env python3
"""prefetch_e2e.py — step 6 end to end: GET over a large keyspace, the batch prefetch on and off.

Step 6 benchmark. Owns the end-to-end measure of memory_prefetch.c: what
prefetching a batch's lookups gives a real server answering redis-benchmark,
once the keyspace is too large for the caches (10,000,000 keys; 200,000
with QUICK, which fits a large L3 better and so shows less). One soloist,
switched between settings by CONFIG SET in the same process and the same
run, so that the binary, the keyspace and its memory layout are the same
for every setting:

  t1-on / t1-off   io-threads 1 (the step-0 server), prefetch-batch-max-size
                   16 / 0: only a client's pipeline is batched
  t2-on / t2-off   io-threads 2 with io-threads-always-active yes: the batch
                   also spans the reads several clients completed at once

beside Debian's redis-server 7.0 loaded with the same keys, and, when
VALKEY_SERVER names a valkey-server built from source (the 2024 tree),
beside Valkey at io-threads 1 ("valkey-t1") and at io-threads 2 with its
test switch keeping the thread on ("valkey-t2", --events-per-io-thread
0): its own batch prefetch, which works only while I/O threads read
(rows F6.36-F6.43; the run says it skipped the peer when not). GET, 3-byte
values, 50 connections, -r KEYS (every key loaded, so every GET hits),
P=1 and P=16. Settings alternate within each round; the server waiting
its turn is stopped (SIGSTOP). Per run: requests per second (closed loop,
so on 2 shared cores also a figure about the load generator), and the
main thread's CPU per request from INFO cpu used_cpu_sys_main_thread +
used_cpu_user_main_thread (getrusage RUSAGE_THREAD), less the time main
spun idle waiting for results (INFO io_threads_main_spin_us; 0 at
io-threads 1), over INFO stats total_commands_processed, diffed across
the run. The figure that counts
on 2 cores is the second one: 1 / (main CPU per request) is the most the
main thread can serve. Also soloist's own prefetch counters (INFO stats
io_threaded_total_prefetch_batches and _entries) per request.

The keyspace is loaded by a pipelined writer thread (SET key:%012d, the
names redis-benchmark's -r draws) with the replies read back as they come,
bounded in time (LOAD_BUDGET_S); the load rate is reported too.

Prints JSON lines: kind=load, kind=run, kind=skipped, and generic finding
rows F6.20-F6.35 (tools/findings.py), each computed from this run's own
run lines. Knobs: QUICK=1 (about 1 minute; full about 4.5 minutes),
PREFETCH_KEYS, BENCH_RUNS, SOLOIST_BIN, REDIS_BIN.

Valkey anchor: src/memory_prefetch.c (PR #861) and the figures of Valkey's
blog post "Unlock 1 Million RPS" (2024), measured, not mirrored.
"""

import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CONNS = 50
PIPELINES = [1, 16]
SETTINGS = ["t1-on", "t1-off", "t2-on", "t2-off", "redis"]  # the order turns each round
LOAD_BUDGET_S = 150


def load_keys(srv, keys, budget_s):
    """SET key:%012d -> "xxx" for i < keys; returns (loaded, seconds)."""
    t0 = time.monotonic()
    chunk = 20000
    with socket.create_connection(("127.0.0.1", srv.port), timeout=60) as s:
        s.sendall(bl.resp([b"FLUSHALL"]))
        bl.read_reply(s)
        sent = [0]

        def writer():
            for start in range(0, keys, chunk):
                if time.monotonic() - t0 > budget_s:
                    break
                end = min(keys, start + chunk)
                s.sendall(b"".join(b"*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$3\r\nxxx\r\n" % i
                                   for i in range(start, end)))
                sent[0] = end

        w = threading.Thread(target=writer)
        w.start()
        got = 0
        while w.is_alive() or got < 5 * sent[0]:
            data = s.recv(1 << 20)
            if not data:
                raise RuntimeError("the server closed the connection while loading")
            if b"-" in data:
                raise RuntimeError("the server refused a SET while loading: %r" % data[:200])
            got += len(data)  # every reply is "+OK\r\n"
        w.join()
    n = int(srv.command(b"DBSIZE").strip().lstrip(b":") or 0)
    return n, time.monotonic() - t0


def counters(srv):
    i = srv.info()
    f = lambda sect, k: float(i.get((sect, k), 0) or 0)  # noqa: E731
    return {"main_cpu_s": f("cpu", "used_cpu_sys_main_thread") + f("cpu", "used_cpu_user_main_thread"),
            "cmds": f("stats", "total_commands_processed"),
            "pf_batches": f("stats", "io_threaded_total_prefetch_batches"),
            "pf_keys": f("stats", "io_threaded_total_prefetch_entries"),
            "spin_s": f("iothreads", "io_threads_main_spin_us") / 1e6}


def apply(srv, setting, current):
    """CONFIG SET soloist into `setting`; returns the io-threads now set."""
    threads = 2 if setting.startswith("t2") else 1
    if threads != current:
        if threads == 2:
            srv.command(b"CONFIG", b"SET", b"io-threads-always-active", b"yes")
        srv.command(b"CONFIG", b"SET", b"io-threads", str(threads).encode())
        if threads == 1:
            srv.command(b"CONFIG", b"SET", b"io-threads-always-active", b"no")
    srv.command(b"CONFIG", b"SET", b"prefetch-batch-max-size", b"16" if setting.endswith("on") else b"0")
    return threads


def one_run(srv, setting, p, n, keys):
    c0 = counters(srv)
    row = bl.redis_benchmark(srv, "get", CONNS, n, p, 3, keyspace=keys)
    c1 = counters(srv)
    d = {k: c1[k] - c0[k] for k in c0}
    cmds = max(d["cmds"] - 1, 1)  # the first INFO counts itself
    return {"kind": "run", "bench": "prefetch_e2e", "setting": setting, "server": srv.really,
            "test": "GET", "pipeline": p, "clients": CONNS, "value_size": 3, "keys": keys,
            "requests": n, "rps": row["rps"], "p50_ms": row.get("p50_latency_ms"),
            "main_cpu_us_per_req": round((d["main_cpu_s"] - d["spin_s"]) * 1e6 / cmds, 4),
            "main_cpu_us_per_req_with_spin": round(d["main_cpu_s"] * 1e6 / cmds, 4),
            "prefetch_batches_per_req": round(d["pf_batches"] / cmds, 4),
            "prefetch_avg_batch": round(d["pf_keys"] / d["pf_batches"], 2) if d["pf_batches"] else 0,
            "quick": bl.quick(), **bl.placement()}


def main():
    bl.install_cleanup()
    quick = bl.quick()
    keys = int(os.environ.get("PREFETCH_KEYS", 200000 if quick else 10000000))
    runs = int(os.environ.get("BENCH_RUNS", 2 if quick else 3))
    target_s = 0.8 if quick else 2.5
    (_, a_bin, a_is), (_, b_bin, _) = bl.servers()
    sol = bl.Server("soloist", a_bin, a_is)
    red = bl.Server("redis", b_bin, "redis-server")
    peers = {"redis": red}
    vk = bl.valkey_side({"bench": "prefetch_e2e"})
    if vk:
        peers["valkey-t1"] = bl.Server("valkey-t1", vk[1], vk[2], ["--io-threads", "1"])
        peers["valkey-t2"] = bl.Server("valkey-t2", vk[1], vk[2], ["--io-threads", "2", "--events-per-io-thread", "0"])
    settings = SETTINGS + [k for k in peers if k != "redis"]
    try:
        loads = {}
        for srv in [sol] + list(peers.values()):
            loaded, secs = load_keys(srv, keys, LOAD_BUDGET_S)
            name = srv.label if srv.really == "valkey-server" else srv.really  # two Valkeys: by setting
            loads[name] = loaded / secs
            bl.emit({"kind": "load", "bench": "prefetch_e2e", "server": name, "keys": keys,
                     "loaded": loaded, "seconds": round(secs, 2), "keys_per_s": round(loaded / secs),
                     "quick": quick})
            if loaded < keys:
                bl.emit({"kind": "skipped", "bench": "prefetch_e2e", "why": "%s loaded %d of %d keys in %d s"
                         % (srv.really, loaded, keys, LOAD_BUDGET_S)})
                return 1
        for srv in peers.values():
            srv.pause()
        threads, lines = 1, []
        for p in PIPELINES:
            # Size each setting's runs by a short first run of its own.
            sizes = {}
            for rnd in range(runs + 1):
                # The order turns by one each round, so no setting always
                # runs first after the other server had the caches.
                for setting in bl.turned(settings, rnd):
                    srv = peers.get(setting, sol)
                    for other in [sol] + list(peers.values()):
                        if other is not srv:
                            other.pause()
                    with srv.turn():
                        if srv is sol:
                            threads = apply(sol, setting, threads)
                        n = sizes.get(setting, 20000 * p if quick else 50000 * p)
                        ln = one_run(srv, setting, p, n, keys)
                        if rnd == 0:  # calibration, not kept
                            sizes[setting] = bl.calibrate_requests(ln["rps"], target_s, CONNS, p)
                            continue
                        ln["round"] = rnd
                        bl.emit(ln)
                        lines.append(ln)
        findings(lines, loads, keys, quick)
    finally:
        bl.stop_all()
    return 0


def med(lines, setting, p, field):
    return bl.median([ln[field] for ln in lines if ln["setting"] == setting and ln["pipeline"] == p])


def findings(lines, loads, keys, quick):
    cfg = {"test": "GET", "clients": CONNS, "value_size": 3, "keys": keys, "quick": quick,
           "runs_per_setting": len([ln for ln in lines if ln["setting"] == "redis"]) // len(PIPELINES),
           "peer": "redis-server 7.0"}
    cmd = "make findings BENCH=prefetch_e2e" + (" QUICK=1" if quick else "")

    def row(rid, claim, figure, **extra):
        bl.emit({"finding": True, "id": rid, "claim": claim, "figure": figure, "config": dict(cfg, **extra),
                 "command": cmd})

    rid = 20
    for t, what in (("t1", "io-threads 1 (a client's pipeline only)"),
                    ("t2", "io-threads 2, forced on (several clients' reads)")):
        for p in PIPELINES:
            on, off = med(lines, t + "-on", p, "rps"), med(lines, t + "-off", p, "rps")
            row("F6.%d" % rid, "GET rps, prefetch on / off, %s, P=%d" % (what, p),
                "%.0f / %.0f rps = %.2f×" % (on, off, on / off), pipeline=p, setting=t)
            cu_on = med(lines, t + "-on", p, "main_cpu_us_per_req")
            cu_off = med(lines, t + "-off", p, "main_cpu_us_per_req")
            row("F6.%d" % (rid + 1), "main thread's CPU per GET, prefetch on / off, %s, P=%d" % (what, p),
                "%.3f / %.3f µs = %.2f×" % (cu_on, cu_off, cu_on / cu_off), pipeline=p, setting=t)
            rid += 2
    for p in PIPELINES:  # rid 28..31
        on, r = med(lines, "t1-on", p, "rps"), med(lines, "redis", p, "rps")
        row("F6.%d" % rid, "GET rps, soloist io-threads 1 prefetch on / redis-server 7.0, P=%d" % p,
            "%.0f / %.0f rps = %.2f×" % (on, r, on / r), pipeline=p)
        cu, cr = med(lines, "t1-on", p, "main_cpu_us_per_req"), med(lines, "redis", p, "main_cpu_us_per_req")
        row("F6.%d" % (rid + 1), "main thread's CPU per GET, soloist io-threads 1 prefetch on / redis-server 7.0, P=%d"
            % p, "%.3f / %.3f µs = %.2f×" % (cu, cr, cu / cr), pipeline=p)
        rid += 2
    for t, p in (("t1", 16), ("t2", 1), ("t2", 16)):  # rid 32..34
        row("F6.%d" % rid, "prefetch batches per GET and keys per batch, %s on, P=%d" % (t, p),
            "%.3f batches/GET, %.1f keys/batch" % (med(lines, t + "-on", p, "prefetch_batches_per_req"),
                                                   med(lines, t + "-on", p, "prefetch_avg_batch")),
            pipeline=p, setting=t)
        rid += 1
    rid = 36
    for t, peer, what in (("t1", "valkey-t1", "io-threads 1"),
                          ("t2", "valkey-t2", "io-threads 2, threads kept on (soloist always-active, Valkey "
                                              "--events-per-io-thread 0), prefetch on in both")):
        if not any(ln["setting"] == peer for ln in lines):
            break  # Valkey was not measured: no rows beside it
        for p in PIPELINES:
            on, v = med(lines, t + "-on", p, "rps"), med(lines, peer, p, "rps")
            row("F6.%d" % rid, "GET rps, soloist / Valkey (2024 tree), %s, P=%d" % (what, p),
                "%.0f / %.0f rps = %.2f×" % (on, v, on / v), pipeline=p, setting=t, valkey=peer)
            cu, cv = med(lines, t + "-on", p, "main_cpu_us_per_req"), med(lines, peer, p, "main_cpu_us_per_req")
            row("F6.%d" % (rid + 1), "main thread's CPU per GET, soloist / Valkey (2024 tree), %s, P=%d (soloist's "
                "idle spin left out, Valkey's, which it does not report apart, left in)" % (what, p),
                "%.3f / %.3f µs = %.2f×" % (cu, cv, cu / cv), pipeline=p, setting=t, valkey=peer)
            rid += 2
    ls, lr = loads.get("soloist", 0), loads.get("redis-server", 0)
    row("F6.35", "loading the keyspace (pipelined SET), soloist / redis-server 7.0",
        "%.0f / %.0f keys/s = %.2f×" % (ls, lr, ls / lr if lr else 0))


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
