"""test_findings.py — unit tests of tools/findings.py on fixture results.

Step 0 (measuring). Each test writes a small results tree (provenance.json
plus NAME.jsonl lines shaped like bench/*.py print them) into a temporary
directory and runs the generator on it. What must hold: provenance is in
every row; a ratio is computed from the runs of one run, never taken from
a summary line and never across runs; a row without conditions is
refused; rows sort by ID and the output is deterministic; QUICK runs do
not displace full ones; a stand-in is labelled; the queue rows compare
soloist with ck_ring from one run's per-run lines and label what they
computed rather than measured; the rows of steps 4-5 compare each
I/O-thread setting with io-threads 1 and redis-server's threads from one
run, set the main thread's cost beside Amdahl's bound from phase_shares,
and say "not measured", with the benchmark's reason, for a setting a
server without threads could not run; every figure from several runs
gives their spread and every comparison whether its sides' runs separate
("... faster in every run", "... lower in every run", "run ranges
overlap"), a figure from one run says "(one run)", and a benchmark's own
rows (prefetch_e2e, big_values) keep its figure with the spread added;
big_values' ceiling row (F7.18) says "met" only when no server beat the
ceiling, and names every one that did.

Run: python3 -m unittest tests/tools/test_findings.py (tests/suites/55).
"""

import copy
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import benchlib  # noqa: E402
import findings  # noqa: E402
import findings_core  # noqa: E402

PROV = {
    "run_id": "RUN1", "date": "2026-11-30T10:00:00+00:00", "host": "fixture-host",
    "cpu_model": "Fixture CPU 9000", "cores": 2, "kernel": "6.1.0-fixture",
    "compiler": "cc (Fixture) 12.2.0",
    "git": {"commit": "abcdef123456", "dirty": False, "src_dirty": True},
    "quick": False,
    "soloist": {"binary": "build/soloist-server", "is": "soloist", "standin": False,
                "version": "0.1.0", "flags": "--port <free> --save ''", "io_threads": "1"},
    "peer": {"binary": "/usr/bin/redis-server", "version": "Redis server v=7.0.15"},
}

CELLS = [(t, d, p) for t in ("GET", "SET") for d in (3, 512) for p in (1, 16)]


def svr_lines(run_id="RUN1", a_rps=(110.0, 100.0, 130.0), b_rps=(100.0, 90.0, 95.0),
              a_is="soloist", b_run_id=None, c_rps=None):
    """server_vs_redis lines: three runs per side per cell, alternated, and
    a summary line whose ratio is deliberately wrong (findings must not
    trust it); with c_rps, Valkey's runs too."""
    out = []
    for test, size, p in CELLS:
        base = {"bench": "server_vs_redis", "test": test, "value_size": size, "pipeline": p,
                "clients": 50, "keyspace": 100000, "cores": 2, "placement": "shared",
                "requests": 1000}
        for i in range(3):
            out.append(dict(base, kind="run", server="soloist", server_is=a_is, run=i + 1,
                            rps=a_rps[i], server_cpu_s=0.01, run_id=run_id))
            out.append(dict(base, kind="run", server="redis", server_is="redis-server",
                            run=i + 1, rps=b_rps[i], server_cpu_s=0.02,
                            run_id=b_run_id or run_id))
            if c_rps:
                out.append(dict(base, kind="run", server="valkey", server_is="valkey-server", run=i + 1,
                                rps=c_rps[i], server_cpu_s=0.02, run_id=run_id, valkey_version="Valkey v=9"))
        out.append(dict(base, kind="cell", ratio=9.99, run_id=run_id))
    return out


def span_lines(run_id="RUN1", valkey=False):
    out = []
    for p in (1, 4, 16, 64, 256):
        for i in range(3):
            for s, k in (("soloist", 1.0), ("redis", 0.5)) + ((("valkey", 0.25),) if valkey else ()):
                out.append({"bench": "pipeline_span", "kind": "run", "server": s, "valkey_version": "v=255",
                            "server_is": {"soloist": "soloist", "redis": "redis-server"}.get(s, "valkey-server"),
                            "pipeline": p, "clients": 50, "cores": 2, "placement": "shared",
                            "rps": 1000.0 * p * k, "run": i + 1, "requests": 100,
                            "run_id": run_id})
    return out


def wc_lines(run_id="RUN1"):
    out = [{"bench": "write_cost", "kind": "summary", "transport": "none", "call": "getppid",
            "size": 0, "runs": 5, "ms": 51, "median_wall_ns_per_call": 95.0, "run_id": run_id}]
    for t in ("tcp", "unix"):
        for s in (16, 512, 16384):
            out.append({"bench": "write_cost", "kind": "summary", "transport": t, "size": s,
                        "runs": 5, "ms": 200, "median_wall_ns_per_call": 1234.0,
                        "median_cpu_ns_per_call": 1000.0, "min_wall_ns_per_call": 1200.0,
                        "max_wall_ns_per_call": 1300.0, "gbit_s": 0.1, "run_id": run_id})
    return out


def wt_lines(run_id="RUN1"):
    """write_timing lines: closed and open loop, the two settings
    alternated, immediate with half the latency and 10% more CPU."""
    out = []
    for loop, rate in (("closed", None), ("open", 50000.0)):
        for i in range(3):
            for st, k in (("before-sleep", 1.0), ("immediate", 0.5)):
                sc = 2.1 if loop == "closed" else (2.1 if st == "before-sleep" else 2.2)
                out.append({"bench": "write_timing", "kind": "run", "loop": loop, "rate": rate,
                            "setting": st, "run": i + 1, "clients": 50, "value_size": 3,
                            "keys": 10000, "cores": 2, "placement": "shared", "warmup_s": 1.0,
                            "duration_s": 5.0, "load_generator": "soloist-bench, 1 thread",
                            "rps": 1000.0, "latency_us": {"p50": 200 * k, "p99": 400 * k,
                                                          "p99.9": 600 * k},
                            "cpu_us_per_request": 3.0 if st == "before-sleep" else 3.3,
                            "syscalls_per_request": sc, "reads_per_request": 1.0,
                            "writes_per_request": 1.0, "polls_per_request": sc - 2.0,
                            "slip_p99_us": 5.0, "errors": 0, "run_id": run_id})
    return out


def q_lines(run_id="RUN1", ck_run_id=None, drop=()):
    """bench/queues.c lines: 5 alternated runs per side. soloist's SPSC
    takes 2.0 ns/item at commit 32 (4.0 per item), ck_ring 6.0; SPMC and
    MPSC with the thread count the cores allow and oversubscribed; a
    summary line with a wrong ratio that findings must not trust."""
    out = []

    def run(test, impl, ns, p=1, c=1, over=False, **kw):
        for i in range(5):
            ln = {"bench": "queues", "kind": "run", "test": test, "impl": impl, "producers": p,
                  "consumers": c, "threads": p + c, "cores": 2, "oversubscribed": over,
                  "pinning": "thread i on allowed cpu i mod 2", "capacity": 4096, "slot_bytes": 8,
                  "commit_batch": 1, "dequeue_batch": 32, "items": 1000000, "run": i + 1,
                  "ns_per_item": ns + 0.1 * i, "items_per_s": 1e9 / (ns + 0.1 * i), "preempted": i,
                  "run_id": ck_run_id if (ck_run_id and impl == "ck_ring") else run_id}
            ln.update(kw)
            out.append(ln)
    for b in (1, 2, 4, 8, 16, 32):
        run("spsc", "soloist", 2.0 if b == 32 else 4.0, commit_batch=b)
    run("spsc", "ck_ring", 6.0)
    run("spsc", "mutex_condvar", 100.0)
    for test, (p, c), (op, oc) in (("spmc", (1, 1), (1, 2)), ("mpsc", (1, 1), (2, 1))):
        run(test, "soloist", 10.0, p, c)
        run(test, "ck_ring", 20.0, p, c)
        run(test, "soloist", 40.0, op, oc, True)
        run(test, "ck_ring", 30.0, op, oc, True)
    run("slots", "soloist", 5.0, commit_batch=32)
    run("slots", "soloist", 10.0, commit_batch=32, slot_bytes=16)
    for b, lines in ((1, 1.25), (32, 0.25)):
        run("lines", "soloist", 3.0, commit_batch=b, slot_lines=125000, tail_loads_new=int((lines - 0.125) * 1e6),
            head_loads_new=100, computed_lines_per_item=lines + 0.0001, hw_l1d_read_misses_per_item=None,
            hw_unavailable="perf_event_open: No such file or directory")
    for state, pct in (("parked", 0.0), ("active", 99.0)):
        run("pool", "soloist", 1.0, state=state, workers=2, wall_ms=300.0, idle_spin_us=3600000000,
            clock="/proc/self/task/*/schedstat of io_thd_* threads", cpu_pct_per_worker=pct)
    out.append({"bench": "queues", "kind": "summary", "test": "spsc", "ratio": 99.0, "run_id": run_id})
    return [ln for ln in out if (ln.get("test"), ln.get("impl")) not in drop]


def mc_lines(run_id="RUN1", threads=(1, 2, 4), other_run_id=None):
    """bench/main_cpu.py lines: two alternated runs per setting per cell.
    The main thread costs 9 µs a request at io-threads 1, 4 at 2 and 2.5
    at 4 (P=1; a tenth of that at P=16); settings not in `threads` are
    skipped with the reason a server without threads gives."""
    out = []
    cost = {1: 9.0, 2: 4.0, 4: 2.5}
    for n in (2, 4):
        if n not in threads:
            out.append({"bench": "main_cpu", "kind": "skipped", "io_threads": n, "run_id": run_id,
                        "why": "the server refused --io-threads %d --io-threads-always-active yes" % n})
    for test, size, p in CELLS:
        for i in range(2):
            for n in threads:
                main = cost[n] / (1 if p == 1 else 10)
                out.append({"bench": "main_cpu", "kind": "run", "test": test, "value_size": size,
                            "pipeline": p, "io_threads": n, "run": i + 1, "clients": 50, "keys": 10000,
                            "cores": 2, "placement": "shared", "arrival": "poisson", "rate": 30000,
                            "warmup_s": 0.5, "duration_s": 2.0, "rps": 30000.0, "errors": 0,
                            "main_clock": "INFO used_cpu_*_main_thread", "server_commands": 75000,
                            "main_us_per_request": main + 0.1 * i, "process_us_per_request": 2 * main,
                            "clocks_main_us_per_request": {"info_main_s": main, "schedstat_main_s": main,
                                                           "ticks_main_s": main * 1.1},
                            "threaded_reads_per_request": 1.0 if n > 1 else None,
                            "run_id": other_run_id if (other_run_id and n == 4) else run_id})
    return out


def ps_lines(s1=0.5, s16=0.25, run_id="PS"):
    """phase_shares run lines with serial shares s1 (P=1) and s16 (P=16)."""
    return [{"bench": "phase_shares", "kind": "run", "pipeline": p, "run": i + 1, "keyspace": 100000,
             "cores": 2, "placement": "shared", "busy_us_per_request": 5.0,
             "share_of_busy": {"poll_cpu": 0.1, "read": 0.2, "exec": s - 0.05, "write": 0.75 - s, "other": 0.05},
             "serial_share": s, "share_of_total": {"poll_wait": 0.3}, "run_id": run_id}
            for p, s in ((1, s1), (16, s16)) for i in range(3)]


def tvr_lines(run_id="RUN1", sides=("soloist-1", "soloist-2", "soloist-4", "redis-1", "redis-2"), s4=96.0):
    """bench/threads_vs_redis.py lines: three alternated runs per side per
    cell; soloist-1 100 rps, soloist-2 98, soloist-4 `s4`, redis-1 80,
    redis-2 90; valkey-1 90, valkey-2 100, valkey-4 120."""
    rps = {"soloist-1": 100.0, "soloist-2": 98.0, "soloist-4": s4, "redis-1": 80.0, "redis-2": 90.0,
           "valkey-1": 90.0, "valkey-2": 100.0, "valkey-4": 120.0}
    out = [{"bench": "threads_vs_redis", "kind": "skipped", "server": "soloist", "io_threads": n,
            "why": "the server has no INFO iothreads section", "run_id": run_id}
           for n in (2, 4) if "soloist-%d" % n not in sides]
    for test, size, p in CELLS:
        for i in range(3):
            for side in sides:
                out.append({"bench": "threads_vs_redis", "kind": "run", "test": test, "value_size": size,
                            "pipeline": p, "side": side, "server": side.split("-")[0],
                            "io_threads": int(side.split("-")[1]), "run": i + 1, "clients": 50,
                            "keyspace": 100000, "requests": 1000, "cores": 2, "placement": "shared",
                            "rps": rps[side] + i - 1, "run_id": run_id})
    return out


def ign_lines(run_id="RUN1", threads=True):
    """bench/ignition_timing.py lines: five steps (the low one does not
    ignite, the last began with threads still active), samples, and the
    idle CPU after a burst; without threads only the skipped line and
    io-threads 1's idle CPU."""
    base = {"bench": "ignition_timing", "clients": 50, "value_size": 3, "poll_ms": 5.0, "cores": 2,
            "run_id": run_id}
    idle1 = dict(base, kind="idle", io_threads=1, burst_s=3.0, threads=1,
                 windows=[{"from_s": 0, "to_s": 1, "pct_of_one_core": 0.05,
                           "by_thread_pct": {"soloist-server": 0.05}}])
    if not threads:
        return [dict(base, kind="skipped", io_threads=4, why="the server has no INFO iothreads section"), idle1]
    zero = {"io_threads_ignitions": 0, "io_threads_scale_ups": 0, "io_threads_scale_downs": 0,
            "io_threads_guard_reverts": 0}
    one = dict(zero, io_threads_ignitions=1, io_threads_scale_ups=1, io_threads_scale_downs=1)
    offered = (0, 1000, 2000, 0, 1000, -1, 0, 1000)  # -1: a closed loop
    out = [dict(base, kind="sample", t_s=0.1 * k, active=1 + 3 * (k % 2), offered_rps=o,
                io_threads_ignitions=k // 2) for k, o in enumerate(offered)]
    out += [dict(base, kind="step", io_threads=4, step="low", rate=5000, loop="open", rps=4990.0, burst_s=3.0,
                 observe_s=5.0, ignited=False, peak_active=1, counters=zero, scaled_down=None),
            dict(base, kind="step", io_threads=4, step="high", rate=35000, loop="open", rps=34900.0, burst_s=3.0,
                 observe_s=5.0, ignited=True, peak_active=4, counters=one, ignition_ms_poll=12.0,
                 ignition_ms_server=10.0, scale_down_ms_poll=505.0, scale_down_ms_server=None,
                 scaled_down=True),
            dict(base, kind="step", io_threads=4, step="closed", rate=None, loop="closed", rps=50000.0,
                 burst_s=3.0, observe_s=5.0, ignited=True, peak_active=4, counters=one, ignition_ms_poll=8.0,
                 ignition_ms_server=6.0, scale_down_ms_poll=502.0, scale_down_ms_server=500.0, scaled_down=True),
            dict(base, kind="step", io_threads=4, step="high", rate=35000, loop="open", rps=34950.0, burst_s=3.0,
                 observe_s=5.0, ignited=True, peak_active=4, counters=one, ignition_ms_poll=22.0,
                 ignition_ms_server=20.0, scaled_down=False),
            dict(base, kind="step", io_threads=4, step="high", rate=35000, loop="open", rps=34950.0, burst_s=3.0,
                 observe_s=5.0, ignited=True, peak_active=4, counters=zero, ignition_ms_poll=0.5,
                 ignition_ms_server=None, scaled_down=False, started_idle=False),
            dict(base, kind="idle", io_threads=4, burst_s=3.0, threads=4,
                 windows=[{"from_s": 0, "to_s": 1, "pct_of_one_core": 1.5,
                           "by_thread_pct": {"soloist-server": 0.5, "io_thd_1": 0.5, "io_thd_2": 0.5}}]),
            idle1]
    return out


def pm_lines(run_id="RUN1", other_run_id=None, thp_on=True):
    """bench/prefetch_micro.c lines, 3 runs of each. Chains: 800 ns/node
    one list after another, 800 / k interleaved (prefetch a tenth faster),
    floor 40; 2 MiB pages half the sequential cost. Tables of 2 Ki keys
    (L2) and 8 Mi keys (520 MiB, DRAM): find 60 / 1000 ns, batch b
    1000 / min(b, 10) ns on the large table, 60 on the small."""
    out = []
    head = {"bench": "prefetch_micro", "kind": "run", "l2_bytes": 2 << 20, "l3_bytes": 260 << 20,
            "quick": True}
    for r in (1, 2, 3):
        for pages in ("4K", "2M"):
            seq = 800.0 if pages == "4K" else 400.0
            out.append(dict(head, run_id=run_id, part="chains", method="sequential", chains=1,
                            nodes=6 << 20, arena_bytes=384 << 20, sets=4, pages=pages,
                            madvise_ok=True, anon_huge_kb=0 if pages == "4K" else 393216, run=r, ns_per_node=seq + r))
            for k in ((2, 4, 8, 16, 32) if pages == "4K" else (16,)):
                for m in ("interleaved", "prefetch"):
                    ns = max(seq / k, 40.0) * (0.9 if m == "prefetch" else 1.0)
                    out.append(dict(head, run_id=other_run_id if (other_run_id and m == "prefetch") else run_id,
                                    part="chains", method=m, chains=k, nodes=6 << 20, arena_bytes=384 << 20,
                                    pages=pages, madvise_ok=True, anon_huge_kb=0, run=r, ns_per_node=ns + r))
        for thp in ("off", "on") if thp_on else ("off",):
            for keys, tb, find in ((2048, 130 << 10, 60.0), (8 << 20, 520 << 20, 1000.0)):
                base = dict(head, run_id=run_id, part="table", keys=keys, table_bytes=tb, buckets=1,
                            child_buckets=0, lookups=131072, thp=thp, thp_mode="madvise",
                            anon_huge_kb=0 if thp == "off" else 540000, run=r)
                out.append(dict(base, method="find", batch=0, ns_per_lookup=find + r))
                for b in (1, 2, 4, 8, 16, 32, 64, 128):
                    ns = find / min(b, 10) if keys > 2048 else find
                    out.append(dict(base, method="batch", batch=b, ns_per_lookup=ns + r))
                out.append(dict(base, method="prefetch_find", batch=16, ns_per_lookup=find / 5 + r))
    if not thp_on:
        out.append({"bench": "prefetch_micro", "kind": "skipped", "run_id": run_id, "part": "table",
                    "thp": "on", "why": "transparent huge pages are set to never"})
    return out


def z_lines(run_id="RUN1", redis_run_id=None, drop=(), valkey=False):
    """bench/zset_memory.py lines: two sizes per side; bytes per member
    fall from copied to dense; redis-server inserts at half dense's rate;
    with valkey, a Valkey side of 100 B a member at a quarter of it."""
    bpm = {"copied": 120.0, "node-pointer": 100.0, "embedded": 75.0, "dense": 32.0, "redis-server": 110.0}
    if valkey:
        bpm["valkey"] = 100.0
    out = [{"kind": "peer", "server": "valkey", "version": "Valkey server v=255.255.255", "run_id": run_id}] \
        if valkey else []
    for layout, b in bpm.items():
        if layout in drop:
            continue
        server = {"redis-server": "redis", "valkey": "valkey"}.get(layout, "soloist")
        rid = redis_run_id if (redis_run_id and server == "redis") else run_id
        rate = {"redis": 200000.0, "valkey": 100000.0}.get(server, 400000.0)
        base = {"bench": "zset_memory", "kind": "run", "server": server, "layout": layout, "window": 128,
                "run_id": rid}
        for n, prev in ((100000, 0), (200000, 100000)):
            out.append(dict(base, op="add", n=n, segment_from=prev, bytes_per_member=b,
                            inserts_per_s=rate, inserts_per_cpu_s=2 * rate, used_memory_bytes=int(b * n)))
        out.append(dict(base, op="rank", n=200000, queries=20000, queries_per_s=rate / 2))
        out.append(dict(base, op="score", n=200000, queries=20000, queries_per_s=rate / 4))
    return out


def im_lines(run_id="RUN1", valkey=False):
    """bench/idle_memory.py lines: one run per server and moment (with
    valkey, a third server at 2,000 B a connection)."""
    sides = (("soloist", 500.0), ("redis", 1000.0)) + ((("valkey", 2000.0),) if valkey else ())
    return [{"bench": "idle_memory", "kind": "run", "server": srv, "moment": m, "connections": 1000,
             "idle_s": 1.0, "maxclients": 2000, "bytes_per_conn": per, "rss_base_bytes": 2 << 20,
             "rss_bytes": (2 << 20) + 1000 * per, "run_id": run_id, "valkey_version": "Valkey server v=255"}
            for m in ("connected", "after_ping") for srv, per in sides]


def pe_lines(run_id="RUN1", runs=3):
    """bench/prefetch_e2e.py lines: `runs` rounds of each setting at P=1
    and P=16, a keyspace load per server, and the rows the benchmark
    prints itself. t1-on 100 + i rps (P=1) against t1-off 90 + 20 i (the
    ranges overlap), 1000 + i against 500 + i at P=16 (apart); main's CPU
    per GET the reverse."""
    out = []
    rps = {("t1-on", 1): 100.0, ("t1-off", 1): 90.0, ("t2-on", 1): 60.0, ("t2-off", 1): 60.0, ("redis", 1): 95.0,
           ("t1-on", 16): 1000.0, ("t1-off", 16): 500.0, ("t2-on", 16): 800.0, ("t2-off", 16): 600.0,
           ("redis", 16): 550.0}
    for p in (1, 16):
        for i in range(runs):
            for st in ("t1-off", "t2-on", "t2-off", "redis", "t1-on"):
                r = rps[(st, p)] + (20 * i if st == "t1-off" and p == 1 else i)
                out.append({"bench": "prefetch_e2e", "kind": "run", "pipeline": p, "round": i + 1, "setting": st,
                            "server": "redis-server" if st == "redis" else "soloist", "rps": r,
                            "main_cpu_us_per_req": 1000.0 / r, "prefetch_batches_per_req": 0.1 + 0.01 * i,
                            "prefetch_avg_batch": 5.0 + i, "run_id": run_id})
    out += [{"bench": "prefetch_e2e", "kind": "load", "server": s, "keys_per_s": k, "run_id": run_id}
            for s, k in (("soloist", 700.0), ("redis-server", 600.0))]
    cfg = {"test": "GET", "clients": 50, "value_size": 3, "keys": 1000, "runs_per_setting": runs}

    def row(rid, claim, fig, **kw):
        out.append({"bench": "prefetch_e2e", "finding": True, "id": rid, "claim": claim, "figure": fig,
                    "config": dict(cfg, **kw), "command": "make findings BENCH=prefetch_e2e", "run_id": run_id})
    row("F6.20", "GET rps, prefetch on / off, io-threads 1 (a client's pipeline only), P=1",
        "101 / 110 rps = 0.92×", pipeline=1, setting="t1")
    row("F6.21", "main thread's CPU per GET, prefetch on / off, io-threads 1 (a client's pipeline only), P=1",
        "9.901 / 9.091 µs = 1.09×", pipeline=1, setting="t1")
    row("F6.22", "GET rps, prefetch on / off, io-threads 1 (a client's pipeline only), P=16",
        "1001 / 501 rps = 2.00×", pipeline=16, setting="t1")
    row("F6.23", "main thread's CPU per GET, prefetch on / off, io-threads 1 (a client's pipeline only), P=16",
        "0.999 / 1.996 µs = 0.50×", pipeline=16, setting="t1")
    row("F6.30", "GET rps, soloist io-threads 1 prefetch on / redis-server 7.0, P=16",
        "1001 / 551 rps = 1.82×", pipeline=16)
    row("F6.33", "prefetch batches per GET and keys per batch, t2 on, P=1", "0.110 batches/GET, 6.0 keys/batch",
        pipeline=1, setting="t2")
    row("F6.35", "loading the keyspace (pipelined SET), soloist / redis-server 7.0", "700 / 600 keys/s = 1.17×")
    return out


def bv_lines(run_id="RUN1"):
    """bench/big_values.py lines: three alternated runs of each bandwidth
    setting at 1 and 8 MB (GET: copy avoidance on 1000 + 10 i MB/s, off
    500 + 10 i, redis 995 + 10 i, the ceiling 2000 + 10 i), one noisy-
    neighbour run per setting and noise, and the rows the benchmark prints
    itself."""
    out = []
    bw = {"on": 1000.0, "off": 500.0, "redis": 995.0, "raw": 2000.0}
    for mb in (1, 8):
        for i in range(3):
            for st, v in bw.items():
                ln = {"bench": "big_values", "kind": "run", "part": "bandwidth", "test": "GET", "value_mb": mb,
                      "setting": st, "mb_per_s": v + 10 * i, "run_id": run_id}
                if st in ("on", "off"):
                    ln["bytes_copied_per_get"] = 0.001 * i if st == "on" else float(mb << 20)
                out.append(ln)
    for st in ("t1-on", "redis-t1"):
        for noise, us in ((False, 1000.0), (True, 1500.0 if st == "t1-on" else 30000.0)):
            out.append({"bench": "big_values", "kind": "run", "part": "noisy", "cls": "small", "setting": st,
                        "noise": noise, "p999_us": us, "run_id": run_id, "generators": "one per class"})
    base = {"quick": False, "peer": "redis-server 7.0", "io_threads": 1}

    def row(rid, claim, fig, **kw):
        out.append({"bench": "big_values", "finding": True, "id": rid, "claim": claim, "figure": fig,
                    "config": dict(base, **kw), "command": "make findings BENCH=big_values", "run_id": run_id})
    for rid, mb in (("F7.1", 1), ("F7.2", 8)):
        row(rid, "GET bandwidth, %d MB values, one connection: soloist copy avoidance on / off, redis-server 7.0, "
            "raw loopback ceiling" % mb, "on 1010, off 510, redis 1005, ceiling 2010 MB/s: on = 0.50× ceiling, "
            "off = 0.25×, redis = 0.50×", test="GET", value_mb=mb)
    row("F7.7", "target: GET with copy avoidance on ≥ 0.8× the loopback ceiling at ≥ 8 MB",
        "not met (lowest 0.50×: 8 MB 0.50×)", test="GET")
    row("F7.8", "bytes the main thread copies into reply buffers per large GET, copy avoidance on "
        "(INFO reply_bytes_copied); target zero", "1 MB: 0 B, 8 MB: 0 B", test="GET")
    row("F7.20", "noisy neighbour, 1 KB GETs' latency without / with 10 MB GETs beside them: t1-on",
        "p99.9 1000/1500 µs; p99.9 with noise = 1.50× without", setting="t1-on")
    row("F7.26", "target: small-class p99.9 with noise ≤ 2× without, and ≤ 0.25× redis-server 7.0's under the "
        "same noise (t1-on vs redis-t1)", "1.50× without (met), 0.05× redis (met)", setting="t1-on")
    return out


class SpreadTest(unittest.TestCase):
    """The helpers that write a figure's runs' spread and verdict."""

    def test_runs_spread_gives_the_range_or_says_one_run(self):
        self.assertEqual(findings.runs_spread([3.0, 1.0, 2.0], "%.1f", "ns"), "runs 1.0–3.0 ns")
        self.assertEqual(findings.runs_spread([2.0, 2.01], "%.1f", "ns"), "runs 2.0 ns each")
        self.assertEqual(findings.runs_spread([2.0]), "one run")
        self.assertEqual(findings.runs_spread([1234567.0, 1000.0], findings.fmt_rps), "runs 1,000–1,234,567")

    def test_verdict_says_which_side_won_every_run(self):
        v = findings.verdict
        self.assertEqual(v([10, 11, 12], [7, 8, 9], ("A", "B")), "A faster in every run")
        self.assertEqual(v([7, 8, 9], [10, 11, 12], ("A", "B")), "B faster in every run")
        self.assertEqual(v([7, 8, 9], [10, 11, 12], ("A", "B"), lower=True), "A lower in every run")
        self.assertEqual(v([10, 11, 12], [7, 8, 9], ("A", "B"), lower=True), "B lower in every run")
        self.assertEqual(v([7, 9], [9, 12], ("A", "B")), "run ranges overlap")  # a tie is not a win
        self.assertEqual(v([7, 8, 9], [10], ("A", "B")), "one run")


class FindingsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="findings-test-")
        self.results = os.path.join(self.tmp, "results")
        self.out = os.path.join(self.tmp, "FINDINGS.md")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def add_run(self, name, prov="default", **benches):
        """A results directory; prov=None writes no provenance.json."""
        d = os.path.join(self.results, name)
        os.makedirs(d)
        p = copy.deepcopy(PROV if prov == "default" else prov)
        if p is not None:
            p.setdefault("run_id", name)
            with open(os.path.join(d, "provenance.json"), "w") as f:
                json.dump(p, f)
        for bench, lines in benches.items():
            with open(os.path.join(d, bench + ".jsonl"), "w") as f:
                for ln in lines:
                    f.write(json.dumps(ln) + "\n")
        return d

    def generate(self, *extra):
        err = io.StringIO()
        with redirect_stderr(err):
            rc = findings.main(["--results", self.results, "--out", self.out] + list(extra))
        text = ""
        if os.path.exists(self.out):
            with open(self.out) as f:
                text = f.read()
        return rc, text, err.getvalue()

    def rows(self, text):
        """{id: [cells]} of the Rows table."""
        out = {}
        for line in text.splitlines():
            if line.startswith("| F"):
                cells = [c.strip() for c in line.strip("|").split(" | ")]
                if len(cells) == 5:
                    out[cells[0]] = cells
        return out

    # -- provenance ----------------------------------------------------

    def test_header_says_generated_and_by_what_command(self):
        self.add_run("r1", server_vs_redis=svr_lines())
        rc, text, _ = self.generate()
        self.assertEqual(rc, 0)
        self.assertIn("GENERATED FILE", text)
        self.assertIn("`make findings`", text)
        self.assertIn("`make findings-only`", text)

    def test_every_row_carries_provenance(self):
        self.add_run("r1", server_vs_redis=svr_lines(), pipeline_span=span_lines(),
                     write_cost=wc_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertGreaterEqual(len(rows), 9 + 7 + 3)
        for rid, cells in rows.items():
            cond = cells[3]
            for want in ("Fixture CPU 9000", "2 cores", "6.1.0-fixture", "cc (Fixture) 12.2.0",
                         "abcdef123456 (src dirty)", "config:"):
                self.assertIn(want, cond, "%s lacks %r" % (rid, want))
            self.assertIn("make findings BENCH=", cells[4], rid)
            self.assertIn(".jsonl", cells[4], rid)

    def test_serving_rows_say_client_and_server_share_the_cores(self):
        self.add_run("r1", server_vs_redis=svr_lines(), pipeline_span=span_lines())
        _, text, _ = self.generate()
        for rid, cells in self.rows(text).items():
            self.assertIn("client and server share 2 cores", cells[3], rid)
            self.assertIn("P=1 is client-bound", cells[2], rid)

    # -- ratios ---------------------------------------------------------

    def test_ratio_is_median_over_median_of_the_runs(self):
        # medians: soloist 110, redis 95 -> 1.157..., printed 1.16x; the
        # summary line's 9.99 must be ignored.
        self.add_run("r1", server_vs_redis=svr_lines())
        rc, text, _ = self.generate()
        self.assertEqual(rc, 0)
        rows = self.rows(text)
        self.assertIn("**1.16×**", rows["F0.1"][2])
        self.assertNotIn("9.99", text)
        self.assertIn("ABABAB", rows["F0.1"][3])
        self.assertIn("8 of 8 cells ≥ 1.0×", rows["F0.9"][2])
        self.assertIn("target met", rows["F0.9"][2])

    def test_valkey_is_a_row_of_its_own(self):
        # The redis rows keep their figures; F0.25 gives soloist / Valkey
        # (medians 110 / 100) and whether the runs separate.
        self.add_run("r1", server_vs_redis=svr_lines())
        _, text, _ = self.generate()
        self.assertNotIn("F0.25", self.rows(text))
        shutil.rmtree(self.results)
        self.add_run("r1", server_vs_redis=svr_lines(c_rps=(100.0, 95.0, 105.0)))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("**1.16×**", rows["F0.1"][2])
        self.assertIn("ABCABCABC", rows["F0.1"][3])  # the order the fixture ran them
        f = rows["F0.25"][2]
        self.assertIn("8 of 8 cells ≥ 1.0×; geometric mean **1.10×**", f)
        self.assertIn("GET 3 B P=1 1.10× (run ranges overlap)", f)
        self.assertIn("Valkey built from source (Valkey v=9)", rows["F0.25"][3])

    def test_figure_says_whether_the_run_ranges_separate(self):
        self.add_run("r1", server_vs_redis=svr_lines())
        _, text, _ = self.generate()
        self.assertIn("run ranges overlap", self.rows(text)["F0.1"][2])
        shutil.rmtree(self.results)
        self.add_run("r1", server_vs_redis=svr_lines(a_rps=(200.0, 210.0, 220.0)))
        _, text, _ = self.generate()
        self.assertIn("A faster in every run", self.rows(text)["F0.1"][2])

    def test_ratio_across_different_runs_is_refused(self):
        self.add_run("r1", server_vs_redis=svr_lines(b_run_id="OTHER-RUN"))
        rc, text, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("different runs", err)
        self.assertFalse(os.path.exists(self.out), "nothing may be written on refusal")

    def test_ratio_with_one_side_missing_is_refused(self):
        lines = [ln for ln in svr_lines() if ln.get("server") != "redis"]
        self.add_run("r1", server_vs_redis=lines)
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("both sides", err)

    def test_span_is_p256_over_p1(self):
        self.add_run("r1", pipeline_span=span_lines())
        rc, text, _ = self.generate()
        self.assertEqual(rc, 0)
        rows = self.rows(text)
        self.assertIn("**256.00×**", rows["F0.17"][2])
        self.assertIn("P=256 2.00×", rows["F0.19"][2])
        self.assertNotIn("F0.23", rows)

    def test_span_beside_valkey(self):
        self.add_run("r1", pipeline_span=span_lines(valkey=True))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("**256.00×**", rows["F0.23"][2])
        self.assertIn("P=1 4.00× (soloist faster in every run)", rows["F0.24"][2])
        self.assertIn("P=256 2.00×", rows["F0.19"][2])  # redis-server's row unchanged beside it
        self.assertIn("Valkey built from source (v=255), third in each round", rows["F0.24"][3])

    def test_phase_shares_give_poll_cpu_and_the_serial_share(self):
        lines = []
        for p in (1, 16):
            for i, ex in enumerate((0.10, 0.20, 0.30)):
                lines.append({"bench": "phase_shares", "kind": "run", "pipeline": p, "run": i + 1,
                              "server_is": "soloist", "keyspace": 100000, "cores": 2,
                              "placement": "shared", "busy_us_per_request": 5.0,
                              "turns_per_request": 0.05, "busy_wall_over_thread_cpu": 1.02,
                              "share_of_busy": {"poll_cpu": 0.15, "read": 0.3, "exec": ex,
                                                "write": 0.5 - ex, "other": 0.05},
                              "serial_share": ex + 0.05,
                              "share_of_total": {"poll_wait": 0.4}, "run_id": "RUN1"})
        self.add_run("r1", phase_shares=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        row = self.rows(text)["F0.21"]
        self.assertIn("poll CPU **15%**", row[2])
        self.assertIn("s = (exec + other) / busy = **0.25**", row[2])
        self.assertIn("poll wait (idle) 40%", row[2])
        self.assertLess(row[2].index("poll CPU"), row[2].index("read"))
        self.assertLess(row[2].index("read"), row[2].index("exec"))
        self.assertIn("P=16", row[3])
        self.assertIn("| F0.20 | P=1 | 15% | 30% | 20% | 30% | 5% | **0.25** | 40% |", text)
        # a run that does not record how often it read the CPU clock says nothing of it
        self.assertIn("0.050 loop turns/request;", row[2])
        for ln in lines:
            ln["poll_cpu_sample"] = 16
        self.add_run("r2", phase_shares=lines)
        _, text, _ = self.generate()
        self.assertIn("0.050 loop turns/request (the thread-CPU clock read twice on 1 turn in 16)",
                      self.rows(text)["F0.21"][2])

    def test_phase_shares_records_the_servers_clock_sampling(self):
        import phase_shares
        import re
        with open(os.path.join(HERE, "..", "..", "src", "server.h")) as f:
            m = re.search(r"^#define POLL_CPU_SAMPLE (\d+)", f.read(), re.M)
        self.assertEqual(phase_shares.poll_cpu_sample(), int(m.group(1)))

    def test_phase_shares_without_poll_cpu_are_refused(self):
        lines = [{"bench": "phase_shares", "kind": "run", "pipeline": 1, "run": i + 1,
                  "share_of_busy": {"read": 0.3, "exec": 0.2, "write": 0.5},
                  "share_of_total": {"poll": 0.4}, "busy_us_per_request": 5.0,
                  "run_id": "RUN1"} for i in range(3)]
        self.add_run("r1", phase_shares=lines)
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("poll into CPU and wait", err)

    def test_phase_shares_busy_counts_poll_cpu_once(self):
        import phase_shares
        delta = {"poll": 10000, "poll_cpu": 2000, "poll_wait": 8000, "read": 300, "exec": 200,
                 "write": 400, "other": 100}
        s_busy, s_total, busy, s = phase_shares.shares(delta)
        self.assertEqual(busy, 3000)
        self.assertAlmostEqual(s, 0.1)
        self.assertAlmostEqual(sum(s_busy.values()), 1.0, places=3)
        self.assertAlmostEqual(sum(s_total.values()), 1.0, places=3)
        self.assertAlmostEqual(s_busy["poll_cpu"], 2000 / 3000, places=4)

    def test_write_timing_rows_compare_the_two_settings(self):
        self.add_run("r1", write_timing=wt_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        for rid in ("F0.50", "F0.51", "F0.52", "F0.53", "F0.54", "F0.55", "F0.56"):
            self.assertIn(rid, rows)
        self.assertIn("p50 **200 µs**", rows["F0.50"][2])
        self.assertIn("p50 **100 µs**", rows["F0.51"][2])
        self.assertIn("p50 0.50×", rows["F0.52"][2])
        self.assertIn("immediate lower in every run", rows["F0.52"][2])
        self.assertIn("server CPU per request **1.10×**", rows["F0.52"][2])
        self.assertIn("open loop 2.100 → 2.200 system calls/request (**+0.100**", rows["F0.56"][2])
        self.assertIn("Poisson arrivals at 50,000 req/s", rows["F0.53"][3])
        self.assertIn("alternated ABABAB", rows["F0.53"][3])
        self.assertIn("soloist-bench and the server share the 2 cores", rows["F0.50"][2])
        self.assertIn("| F0.51 | closed | immediate | 1,000 | 100 | 200 | 300 | 3.30 | 2.100 |", text)

    def test_write_timing_with_one_setting_is_refused(self):
        self.add_run("r1", write_timing=[ln for ln in wt_lines() if ln["setting"] == "immediate"])
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("lacks a setting", err)

    # -- steps 1-3: the queues and the Amdahl ceilings ---------------------

    def test_queue_rows_all_present(self):
        self.add_run("r1", queues=q_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        for rid in ["F2.%d" % i for i in range(1, 14)] + ["F3.%d" % i for i in range(1, 5)]:
            self.assertIn(rid, rows)
        self.assertIn("**2.20 ns/item**", rows["F2.1"][2])
        self.assertIn("**4.20 ns/item**", rows["F2.2"][2])
        self.assertIn("threads preempted 0/1/2/3/4 times in the runs", rows["F2.1"][3])
        self.assertIn("**0.00%**", rows["F2.12"][2])
        self.assertIn("**99.00%**", rows["F2.13"][2])

    def test_an_idle_pool_run_without_its_spin_setting_is_not_the_spinning_row(self):
        # An older bench's "active" workers slept after a short spin (0 % CPU):
        # without idle_spin_us in its lines it is not F2.13's spin-forever.
        old = [dict(ln, cpu_pct_per_worker=0.0) if ln.get("state") == "active" else ln for ln in q_lines()]
        for ln in old:
            ln.pop("idle_spin_us", None)
        self.add_run("r1", queues=old)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertNotIn("F2.13", rows)
        self.assertIn("**0.00%**", rows["F2.12"][2])

    def test_queue_ratio_is_computed_from_the_runs_of_both_sides(self):
        self.add_run("r1", queues=q_lines())
        _, text, _ = self.generate()
        rows = self.rows(text)
        # ck_ring's median 6.2 over soloist's batched 2.2, not the summary's 99.
        self.assertIn("**2.82×**", rows["F2.4"][2])
        self.assertIn("target not met", rows["F2.4"][2])
        self.assertIn("soloist faster in every run", rows["F2.4"][2])
        self.assertNotIn("99", rows["F2.4"][2])
        self.assertIn("**1.96×**", rows["F3.3"][2])  # items/s: 10.2 / 5.2 ns

    def test_queue_rows_label_oversubscribed_runs(self):
        self.add_run("r1", queues=q_lines())
        _, text, _ = self.generate()
        rows = self.rows(text)
        self.assertIn("1 producer, 1 consumer", rows["F2.5"][1])
        self.assertIn("would oversubscribe the 2 cores", rows["F2.5"][1])
        self.assertIn("**10.2 ns/item**", rows["F2.5"][2])
        self.assertIn("OVERSUBSCRIBED 1+2 threads on 2 cores: 40.2 ns/item", rows["F2.5"][2])
        self.assertIn("**1.98×**", rows["F2.7"][2])  # 20.2 / 10.2
        self.assertIn("target met", rows["F2.7"][2])
        self.assertIn("OVERSUBSCRIBED 2+1 threads on 2 cores: 0.75×", rows["F2.10"][2])

    def test_queue_lines_per_item_say_computed(self):
        self.add_run("r1", queues=q_lines())
        _, text, _ = self.generate()
        row = self.rows(text)["F3.4"]
        self.assertIn("COMPUTED", row[2])
        self.assertIn("per-item commit **1.250", row[2])
        self.assertIn("commit per 32 **0.250", row[2])
        self.assertIn("hardware counters unavailable", row[2])

    def test_queue_comparison_with_a_side_missing_is_refused(self):
        self.add_run("r1", queues=q_lines(drop={("spsc", "ck_ring")}))
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("no ck_ring runs", err)
        self.assertFalse(os.path.exists(self.out))

    def test_queue_comparison_across_runs_is_refused(self):
        self.add_run("r1", queues=q_lines(ck_run_id="OTHER-RUN"))
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("different runs", err)

    # -- step 6: prefetch_micro --------------------------------------------

    def test_prefetch_rows_all_present(self):
        self.add_run("r1", prefetch_micro=pm_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        for rid in ["F6.%d" % i for i in range(1, 20)]:
            self.assertIn(rid, rows)
        self.assertIn("**802.0 ns/node**", rows["F6.1"][2])
        self.assertIn("4 disjoint sets of lists walked in turn", rows["F6.1"][3])
        self.assertIn("**47.0 ns/node**", rows["F6.3"][2])  # 800 / 16 * 0.9 + 2
        self.assertIn("target met", rows["F6.4"][2])
        self.assertIn("from **32 lists** on", rows["F6.6"][2])
        self.assertIn("**2.00×**", rows["F6.8"][2])  # 802 / 402
        self.assertIn("**1002.0 ns/lookup**", rows["F6.9"][2])
        self.assertIn("**9.82×**", rows["F6.11"][2])  # 1002 / 102
        self.assertIn("target met", rows["F6.11"][2])
        self.assertIn("DRAM-resident", rows["F6.11"][3])
        self.assertIn("from **batch 16** on", rows["F6.12"][2])  # 127 is not within 10% of 102
        self.assertIn("L2-resident", rows["F6.15"][1])
        self.assertIn("not measured", rows["F6.16"][2])  # no L3-sized table in the fixture
        self.assertIn("prctl PR_SET_THP_DISABLE", rows["F6.9"][3])
        self.assertIn("glibc.malloc.hugetlb=1", rows["F6.17"][3])

    def test_prefetch_without_huge_pages_says_why(self):
        self.add_run("r1", prefetch_micro=pm_lines(thp_on=False))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("not measured", rows["F6.17"][2])
        self.assertIn("never", rows["F6.18"][2])

    def test_prefetch_comparison_across_runs_is_refused(self):
        self.add_run("r1", prefetch_micro=pm_lines(other_run_id="OTHER-RUN"))
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("different runs", err)

    def test_prefetch_plots_from_the_runs(self):
        cols, rows, _ = findings.PLOTS["prefetch_chains"].fn(pm_lines())
        self.assertEqual([r[0] for r in rows], [1, 2, 4, 8, 16, 32])
        self.assertEqual(rows[0], (1, 802.0, 802.0))
        cols, rows, _ = findings.PLOTS["prefetch_batch"].fn(pm_lines())
        self.assertEqual(cols, ["batch", "keys_2048_ns", "keys_8388608_ns"])
        self.assertEqual(rows[0], [1, 62.0, 1002.0])

    def test_big_values_plots_from_the_runs(self):
        """Step 7's plots: GET bandwidth by size and setting (medians, a
        missing setting as NaN), and the small class's p99.9 without and
        with noise by setting, in the order the runs came."""
        bw = [{"kind": "run", "part": "bandwidth", "test": "GET", "value_mb": mb, "setting": st, "mb_per_s": v + i}
              for mb in (1, 8) for st, v in (("on", 1000), ("off", 500), ("raw", 2000)) for i in (0, 10, 20)]
        bw.append({"kind": "run", "part": "bandwidth", "test": "SET", "value_mb": 1, "setting": "on", "mb_per_s": 1})
        cols, rows, _ = findings.PLOTS["big_values_bandwidth"].fn(bw)
        self.assertEqual(cols, ["value_mb", "on_mb_per_s", "off_mb_per_s", "on-t2_mb_per_s", "redis_mb_per_s",
                                "raw_mb_per_s"])
        self.assertEqual(rows, [[1, 1010, 510, "NaN", "NaN", 2010], [8, 1010, 510, "NaN", "NaN", 2010]])
        nz = [{"kind": "run", "part": "noisy", "cls": "small", "setting": st, "noise": noise, "p999_us": us}
              for st, quiet, loud in (("t1-on", 1000, 2000), ("redis-t1", 3000, 30000))
              for noise, us in ((False, quiet), (True, loud))]
        nz.append({"kind": "run", "part": "noisy", "cls": "big", "setting": "t1-on", "noise": True, "p999_us": 1e9})
        cols, rows, _ = findings.PLOTS["noisy_neighbour"].fn(nz)
        self.assertEqual(rows, [['"t1-on"', 1.0, 2.0], ['"redis-t1"', 3.0, 30.0]])
        with self.assertRaises(findings.Refused):
            findings.PLOTS["noisy_neighbour"].fn([])

    def test_queue_plots_from_the_runs(self):
        cols, rows, _ = findings.PLOTS["batch_size"].fn(q_lines())
        self.assertEqual(cols[0], "commit_batch")
        self.assertEqual([r[0] for r in rows], [1, 2, 4, 8, 16, 32])
        self.assertEqual(rows[-1][1:], (2.2, 6.2))
        cols, rows, _ = findings.PLOTS["queues_ns_per_item"].fn(q_lines())
        self.assertEqual(rows[0], ['"SPSC 1P/1C, commit/32"', 2.2, 6.2, 100.2])
        self.assertEqual(rows[1][3], "NaN")  # no mutex ring beside SPMC

    # -- step 8: the sorted set ---------------------------------------------

    def test_zset_rows_per_layout_and_ratios(self):
        self.add_run("r1", zset_memory=z_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        for rid in ["F8.%d" % i for i in (1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15, 20, 25, 30, 35)]:
            self.assertIn(rid, rows)
        self.assertIn("zset-layout dense", rows["F8.4"][1])
        self.assertIn("200k **32.0 B**", rows["F8.4"][2])
        self.assertIn("**0.29×**", rows["F8.6"][2])  # 32 / 110
        self.assertIn("**2.00×** by wall time; 2.00× per server CPU second", rows["F8.15"][2])
        self.assertIn("**2.00×**", rows["F8.25"][2])
        self.assertIn("glibc malloc", rows["F8.1"][3])

    def test_zset_beside_valkey_takes_its_own_rows(self):
        self.add_run("r1", zset_memory=z_lines(valkey=True))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("Valkey (2024 tree)", rows["F8.7"][1])
        self.assertIn("200k **100.0 B**", rows["F8.7"][2])
        self.assertIn("**0.32×**", rows["F8.8"][2])  # 32 / 100
        self.assertIn("**100,000/s**", rows["F8.16"][2])
        self.assertIn("**4.00×** by wall time", rows["F8.17"][2])
        self.assertIn("**4.00×**", rows["F8.27"][2])
        self.assertIn("**4.00×**", rows["F8.37"][2])
        self.assertIn("**0.29×**", rows["F8.6"][2])  # redis-server's rows unchanged beside it
        self.assertIn("Valkey built from source (Valkey server v=255.255.255)", rows["F8.8"][3])

    def test_idle_memory_beside_valkey(self):
        self.add_run("r1", idle_memory=im_lines(valkey=True))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("**0.25×** (Valkey 2,000 B per connection", rows["F0.57"][2])
        self.assertIn("**0.25×**", rows["F0.58"][2])
        self.assertIn("**0.50×** (one run)", rows["F0.42"][2])

    def test_zset_sides_from_different_runs_are_refused(self):
        self.add_run("r1", zset_memory=z_lines(redis_run_id="OTHER"))
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("several runs", err)

    def test_zset_without_redis_is_refused(self):
        self.add_run("r1", zset_memory=z_lines(drop={"redis-server"}))
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("redis-server", err)

    def test_zset_run_cut_short_compares_what_both_sides_reached(self):
        lines = [ln for ln in z_lines() if not (ln["layout"] == "dense" and (ln["op"] != "add" or ln["n"] > 100000))]
        self.add_run("r1", zset_memory=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("at 100k", rows["F8.6"][1])
        self.assertIn("to 100k members", rows["F8.13"][1])
        self.assertNotIn("F8.25", rows)

    def test_zset_plot_has_a_bar_per_side(self):
        cols, rows, _ = findings.PLOTS["zset_bytes_per_member"].fn(z_lines())
        self.assertEqual(cols, ["size", "copied", "node-pointer", "embedded", "dense", "redis-server"])
        self.assertEqual(rows[1], ['"200k members"', 120.0, 100.0, 75.0, 32.0, 110.0])

    def test_amdahl_rows_come_from_the_serial_share(self):
        lines = [{"bench": "phase_shares", "kind": "run", "pipeline": p, "run": i + 1,
                  "keyspace": 100000, "cores": 2, "placement": "shared", "busy_us_per_request": 5.0,
                  "share_of_busy": {"poll_cpu": 0.1, "read": 0.2, "exec": s - 0.05, "write": 0.75 - s,
                                    "other": 0.05},
                  "serial_share": s, "share_of_total": {"poll_wait": 0.3}, "run_id": "RUN1"}
                 for p, s in ((1, 0.5), (16, 0.25)) for i in range(3)]
        self.add_run("r1", phase_shares=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("**1.33×** with 2 threads", rows["F1.1"][2])   # 1 / (0.5 + 0.25)
        self.assertIn("**1.88×** with 16 threads", rows["F1.4"][2])  # 1 / (0.5 + 0.5/16)
        self.assertIn("from F0.20", rows["F1.1"][2])
        self.assertIn("**1.60×** with 2 threads", rows["F1.5"][2])   # 1 / (0.25 + 0.375)
        self.assertIn("from F0.21", rows["F1.8"][2])
        self.assertIn("computed from row F0.21", rows["F1.8"][3])

    # -- steps 4-5: I/O threads --------------------------------------------

    def test_main_cpu_rows_compare_each_setting_with_io_threads_1(self):
        self.add_run("r1", main_cpu=mc_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        f = rows["F4.1"][2]  # GET 3 B P=1: medians 9.05, 4.05, 2.55
        self.assertIn("io-threads 1 **9.05 µs**", f)
        self.assertIn("io-threads 4 **2.55 µs**", f)
        self.assertIn("0.28× of io-threads 1", f)
        self.assertIn("ceiling 1/main 392,157 req/s", f)   # 1e6 / 2.55
        self.assertIn("1.00 reads/request done by I/O threads", f)
        self.assertNotIn("not measured", f)
        self.assertIn("target met", rows["F4.17"][2])      # io-threads 4: 0.28 ≤ 1/3
        self.assertIn("io-threads 2: ", rows["F4.17"][2])
        self.assertIn("median **10.0%**", rows["F4.18"][2])  # stat's ticks 10% off
        self.assertNotIn("F4.9", rows)  # no phase_shares results: no Amdahl rows
        self.assertIn("| F4.8 | SET 512 B P=16 | 30,000 |", text)

    def test_main_cpu_without_threads_measures_io_threads_1_and_says_why(self):
        self.add_run("r1", main_cpu=mc_lines(threads=(1,)))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("io-threads 1 **9.05 µs**", rows["F4.1"][2])
        self.assertIn("io-threads 2, 4 **not measured**: the server refused --io-threads 2", rows["F4.1"][2])
        self.assertIn("**not measured**", rows["F4.17"][2])
        cols, prow, _ = findings.PLOTS["main_cpu_per_request"].fn(mc_lines(threads=(1,)))
        self.assertEqual(prow[0], ['"GET 3 B P=1"', 9.05, "NaN", "NaN"])

    def test_main_cpu_ceiling_beside_amdahl_from_phase_shares(self):
        self.add_run("r0", phase_shares=ps_lines())
        self.add_run("r1", main_cpu=mc_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        f = rows["F4.9"][2]  # GET 3 B P=1, s = 0.5
        self.assertIn("io-threads 2: main-thread ceiling 246,914 req/s = **2.23×** io-threads 1's", f)
        self.assertIn("Amdahl ≤ 1.33×", f)                  # 1 / (0.5 + 0.25)
        self.assertIn("no thread count passes 2.00×", f)
        self.assertIn("Amdahl ≤ 1.60×", rows["F4.10"][2])    # P=16: s = 0.25
        self.assertIn("r0/phase_shares.jsonl", rows["F4.9"][3])
        self.assertIn("two runs", rows["F4.9"][3])
        # Without io-threads 2 and 4, only the bound and io-threads 1's ceiling.
        shutil.rmtree(self.results)
        self.add_run("r0", phase_shares=ps_lines())
        self.add_run("r1", main_cpu=mc_lines(threads=(1,)))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        self.assertIn("main-thread cost **not measured**", self.rows(text)["F4.9"][2])

    def test_main_cpu_across_runs_is_refused(self):
        self.add_run("r1", main_cpu=mc_lines(other_run_id="RUN2"))
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("main_cpu mixes runs", err)

    def test_threads_vs_redis_ratios_and_targets(self):
        self.add_run("r1", threads_vs_redis=tvr_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        f = rows["F4.30"][2]
        self.assertIn("soloist-4 / soloist-1 **0.96×**", f)
        self.assertIn("soloist-4 / redis-2 **1.07×**", f)    # 96 / 90
        self.assertIn("8 of 8 cells ≥ 0.95×", rows["F4.38"][2])
        self.assertIn("target met", rows["F4.38"][2])
        self.assertIn("target met", rows["F4.39"][2])
        self.assertIn("GET 3 B P=1 1.12×", rows["F4.40"][2])  # redis 90 / 80
        shutil.rmtree(self.results)
        self.add_run("r1", threads_vs_redis=tvr_lines(s4=94.0))
        _, text, _ = self.generate()
        self.assertIn("0 of 8 cells ≥ 0.95×", self.rows(text)["F4.38"][2])
        self.assertIn("target not met", self.rows(text)["F4.38"][2])

    def test_threads_vs_redis_beside_valkey(self):
        self.add_run("r1", threads_vs_redis=tvr_lines())
        _, text, _ = self.generate()
        self.assertNotIn("F4.41", self.rows(text))  # no Valkey runs, no row
        shutil.rmtree(self.results)
        self.add_run("r1", threads_vs_redis=tvr_lines(sides=(
            "soloist-1", "soloist-2", "soloist-4", "redis-1", "redis-2", "valkey-1", "valkey-2", "valkey-4")))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        f = self.rows(text)["F4.41"][2]
        self.assertIn("io-threads 4: 0 of 8 cells ≥ 1.0×, geometric mean **0.80×**", f)  # 96 / 120
        self.assertIn("GET 3 B P=1: t1 1.11×, t2 0.98×, t4 0.80× (t4: valkey-4 faster in every run)", f)

    def test_threads_vs_redis_without_threads_says_not_measured(self):
        self.add_run("r1", threads_vs_redis=tvr_lines(sides=("soloist-1", "redis-1", "redis-2")))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("soloist-1 / redis-2 1.11×", rows["F4.30"][2])
        self.assertIn("soloist io-threads 2, 4 **not measured**: the server has no INFO iothreads", rows["F4.30"][2])
        self.assertIn("**not measured**", rows["F4.38"][2])

    def test_threads_vs_redis_without_the_peer_is_refused(self):
        self.add_run("r1", threads_vs_redis=tvr_lines(sides=("soloist-1", "soloist-4", "redis-1")))
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("no redis-2 runs", err)

    def test_ignition_rows_prefer_the_servers_stamp(self):
        self.add_run("r1", ignition_timing=ign_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("**15.0 ms** median (10.0 server, 20.0 server)", rows["F5.1"][2])
        self.assertIn("**6.0 ms**", rows["F5.2"][2])
        # no stamp: the poll's time; each value named by its step
        self.assertIn("**502.5 ms** median (505.0 poll after the high step, 500.0 server after the closed step)",
                      rows["F5.3"][2])
        self.assertIn("2 of 4 ignited steps not scaled down within 5 s", rows["F5.3"][2])
        self.assertIn("5,000 req/s: no ignition", rows["F5.4"][2])
        self.assertIn("ignitions 3", rows["F5.5"][2])
        self.assertIn("NOT IDLE at the start (not timed): high", rows["F5.5"][2])
        self.assertIn("**1.50%** of one core (io_thd_1 0.50%", rows["F5.6"][2])
        self.assertIn("**0.05%**", rows["F5.7"][2])
        cols, prow, _ = findings.PLOTS["ignition_over_time"].fn(ign_lines())
        self.assertEqual(cols, ["t_s", "active", "offered_krps"])
        self.assertEqual(prow[1], (0.1, 4, 1.0))
        self.assertEqual(prow[5][2], 50.0)  # closed loop: its achieved rate

    def test_ignition_without_threads_says_not_measured_and_skips_its_plot(self):
        self.add_run("r1", ignition_timing=ign_lines(threads=False))
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        for rid in ("F5.1", "F5.3", "F5.6"):
            self.assertIn("**not measured**: the server has no INFO iothreads section", rows[rid][2])
        self.assertIn("**0.05%**", rows["F5.7"][2])
        with self.assertRaises(findings.NotMeasured):
            findings.PLOTS["ignition_over_time"].fn(ign_lines(threads=False))
        if shutil.which("gnuplot"):
            rc, _, err = self.generate("--plots")
            self.assertEqual(rc, 0, err)
            self.assertIn("left out", err)

    # -- the runs' spread ---------------------------------------------------
    #
    # Every figure from several runs says their range, every comparison of
    # two sides says whether their runs separate ("<side> faster in every
    # run", "<side> lower in every run", "run ranges overlap"), and a figure
    # from one run says "(one run)", so a chapter's reading of a row can be
    # held against it.

    def test_spread_target_row_names_the_lowest_cells_verdict(self):
        self.add_run("r1", server_vs_redis=svr_lines())
        _, text, _ = self.generate()
        self.assertIn("lowest 1.16× (GET 3 B P=1; run ranges overlap)", self.rows(text)["F0.9"][2])

    def test_spread_floor_without_runs_says_there_is_none(self):
        self.add_run("r1", write_cost=wc_lines())
        _, text, _ = self.generate()
        self.assertIn("**95 ns** per call (median of 5 runs; the raw results keep only the median, so no spread)",
                      self.rows(text)["F0.10"][2])
        shutil.rmtree(self.results)
        lines = wc_lines()
        lines[0].update(min_wall_ns_per_call=90.0, max_wall_ns_per_call=101.0)
        self.add_run("r1", write_cost=lines)
        _, text, _ = self.generate()
        self.assertIn("(median of 5 runs; runs 90–101 ns)", self.rows(text)["F0.10"][2])

    def test_spread_pipeline_span_per_depth(self):
        self.add_run("r1", pipeline_span=span_lines())
        _, text, _ = self.generate()
        rows = self.rows(text)
        self.assertIn("**256.00×**", rows["F0.17"][2])
        self.assertIn("P=1 1,000 (runs 1,000 each)", rows["F0.17"][2])
        self.assertIn("P=256 2.00× (soloist faster in every run)", rows["F0.19"][2])

    def test_spread_serial_share_and_the_bounds_it_gives(self):
        lines = [{"bench": "phase_shares", "kind": "run", "pipeline": p, "run": i + 1, "keyspace": 100000,
                  "cores": 2, "placement": "shared", "busy_us_per_request": 5.0,
                  "share_of_busy": {"poll_cpu": 0.15, "read": 0.3, "exec": ex, "write": 0.5 - ex, "other": 0.05},
                  "serial_share": ex + 0.05, "share_of_total": {"poll_wait": 0.4}, "run_id": "RUN1"}
                 for p in (1, 16) for i, ex in enumerate((0.10, 0.30, 0.20))]
        self.add_run("r1", phase_shares=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("= **0.25** (runs 0.15–0.35)", rows["F0.20"][2])
        # s 0.15 allows 1 / (0.15 + 0.425) = 1.74x with 2 threads, s 0.35 1.48x.
        self.assertIn("speed-up at most **1.60×** with 2 threads", rows["F1.1"][2])
        self.assertIn("the runs' s 0.15–0.35 give 1.48–1.74×)", rows["F1.1"][2])

    def test_spread_write_timing(self):
        self.add_run("r1", write_timing=wt_lines())
        _, text, _ = self.generate()
        rows = self.rows(text)
        self.assertIn("latency p50 **200 µs** (runs 200 each)", rows["F0.50"][2])
        self.assertIn("server CPU **3.00 µs/request** (runs 3.00 each)", rows["F0.50"][2])
        self.assertIn("rps 1.00× (run ranges overlap)", rows["F0.52"][2])
        self.assertIn("server CPU per request **1.10×** (before-sleep lower in every run)", rows["F0.52"][2])
        self.assertIn("(p99: immediate lower in every run)", rows["F0.52"][2])
        self.assertIn("(**+0.100**, +4.8%; before-sleep lower in every run;", rows["F0.56"][2])

    def test_spread_single_runs_say_one_run(self):
        self.add_run("r1", idle_memory=im_lines(), zset_memory=z_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("**500 B** per connection (RSS 2.0 → 2.5 MB; one run)", rows["F0.40"][2])
        self.assertIn("**0.50×** (one run)", rows["F0.42"][2])
        self.assertIn("**0.50×** (one run)", rows["F0.44"][2])
        self.assertIn("200k **32.0 B** (one run)", rows["F8.4"][2])
        self.assertIn("**0.29×** (one run)", rows["F8.6"][2])
        self.assertIn("**400,000/s** (800,000 per server CPU second; one run)", rows["F8.13"][2])
        self.assertIn("2.00× per server CPU second (one run)", rows["F8.15"][2])
        self.assertIn("**2.00×** (one run)", rows["F8.25"][2])
        self.assertNotIn("in every run", rows["F8.25"][2])

    def test_spread_p1_anatomy_passes(self, valkey=False):
        lines = []
        for t in ("GET", "SET", "PING"):
            for side in ("server", "client"):
                for srv, k in (("soloist", 0.0), ("redis", 0.5)) + ((("valkey", 1.0),) if valkey else ()):
                    for i in range(3):
                        lines.append({"bench": "p1_anatomy", "kind": "run", "test": t, "side": side, "server": srv,
                                      "requests": 100000, "pass": i + 1, "run_id": "RUN1", "cores": 2,
                                      "placement": "shared", "requests_per_wakeup": 2.0 + k + 0.1 * i,
                                      "context_switches_per_request": 0.01, "cpu_us_per_request": 9.0 + k + 0.1 * i,
                                      "total_syscalls_per_request": 2.5 + 0.01 * i,
                                      "single_event_wakeup_share": 0.5, "wakes_other_per_request": 0.005,
                                      "per_request": {"epoll_wait": 0.5, "read": 1.0, "write": 1.0}})
        self.add_run("r1", p1_anatomy=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertIn("(all 2.51; runs 2.50–2.52)", rows["F0.45"][2])
        self.assertIn("GET **2.1** vs 2.6 (runs 2.0–2.2 vs 2.5–2.7; one ready client", rows["F0.47"][2])
        self.assertIn("GET **0.005** vs 0.005 (runs 0.005 each vs 0.005 each)", rows["F0.48"][2])
        self.assertIn("9.1 vs 9.6 µs (runs 9.0–9.2 vs 9.5–9.7)", rows["F0.49"][2])
        if valkey:
            self.assertIn("GET: system calls 2.51 vs 2.51, requests per wake-up **2.1** vs 3.1 "
                          "(runs 2.0–2.2 vs 3.0–3.2), client CPU 9.1 vs 10.1 µs", rows["F0.59"][2])
        else:
            self.assertNotIn("F0.59", rows)

    def test_p1_anatomy_beside_valkey(self):
        self.test_spread_p1_anatomy_passes(valkey=True)

    def test_spread_loadgen_sanity_says_whether_the_tools_separate(self):
        lines = [{"bench": "loadgen_sanity", "tool": tool, "run": i + 1, "rps": base + i}
                 for i in range(3) for tool, base in (("soloist-bench", 150.0), ("redis-benchmark", 100.0))]
        lines.append({"bench": "loadgen_sanity", "summary": True, "ratio": 1.5, "soloist_bench_rps_median": 151.0,
                      "redis_benchmark_rps_median": 101.0, "pair_ratios": [1.5, 1.49, 1.48], "clients": 50,
                      "pipeline": 1, "run_id": "r1"})
        self.add_run("r1", loadgen_sanity=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        self.assertIn("pair ratios 1.500, 1.490, 1.480; soloist-bench faster in every run)",
                      self.rows(text)["F0.22"][2])

    def test_spread_queues(self):
        self.add_run("r1", queues=q_lines())
        _, text, _ = self.generate()
        rows = self.rows(text)
        # 8-byte slots: 5.0 to 5.4 ns/item, so 185,185,185 to 200,000,000 items/s.
        self.assertIn("(5.20 ns/item; runs 185,185,185–200,000,000 items/s)", rows["F3.1"][2])
        self.assertIn("the SPSC ring's batched figure (the SPSC ring lower in every run)", rows["F2.11"][2])
        self.assertIn("per-item commit **1.250 (slots 0.125, tail 1.125, head 0.0001)** (runs 1.250 each)",
                      rows["F3.4"][2])

    def test_spread_main_cpu_per_setting_and_against_io_threads_1(self):
        self.add_run("r0", phase_shares=ps_lines())
        self.add_run("r1", main_cpu=mc_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        f = rows["F4.1"][2]
        self.assertIn("io-threads 1 **9.05 µs** (runs 9.00–9.10; process", f)
        self.assertIn("io-threads 4 **2.55 µs** (runs 2.50–2.60;", f)
        self.assertIn("0.28× of io-threads 1, io-threads 4 lower in every run", f)
        self.assertIn("GET 3 B P=1 0.28× (io-threads 4 lower in every run)", rows["F4.17"][2])
        # Each run's ceiling is 1 / its main-thread CPU: 1e6 / 4.1 to 1e6 / 4.0 against 1e6 / 9.1 to 1e6 / 9.0.
        self.assertIn("= **2.23×** io-threads 1's (110,497; ceilings by run 243,902–250,000 vs 109,890–111,111 "
                      "req/s, io-threads 2 faster in every run)", rows["F4.9"][2])

    def test_spread_threads_vs_redis_targets_and_the_peers_own_threads(self):
        self.add_run("r1", threads_vs_redis=tvr_lines())
        _, text, _ = self.generate()
        rows = self.rows(text)
        self.assertIn("lowest 0.96× (GET 3 B P=1; soloist-1 faster in every run)", rows["F4.38"][2])
        self.assertIn("lowest 1.07× (GET 3 B P=1; soloist-4 faster in every run)", rows["F4.39"][2])
        self.assertIn("GET 3 B P=1 1.12× (io-threads 2 faster in every run)", rows["F4.40"][2])

    def test_spread_ignition_one_run_and_a_step_that_went_off_during_its_load(self):
        self.add_run("r1", ignition_timing=ign_lines())
        _, text, _ = self.generate()
        rows = self.rows(text)
        self.assertIn("**6.0 ms**, by the server's stamp (one run)", rows["F5.2"][2])
        self.assertIn("5,000 req/s: no ignition (one run; peak 1 active", rows["F5.4"][2])
        self.assertIn("runs of each step: low 1, high 3, closed 1", rows["F5.5"][2])
        self.assertTrue(rows["F5.6"][2].endswith("(one run)"), rows["F5.6"][2])
        # The closed step's threads went off during its load: the first poll
        # after the end found them off and the server's stamp fell before the
        # poll ahead of it. Its 0.6 ms is no scale-down time; the headline is
        # the high step's own.
        lines = ign_lines()
        closed = next(ln for ln in lines if ln.get("step") == "closed")
        closed.update(scale_down_ms_poll=0.6, scale_down_ms_server=None,
                      counters=dict(closed["counters"], io_threads_guard_reverts=1))
        shutil.rmtree(self.results)
        self.add_run("r1", ignition_timing=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        row = self.rows(text)["F5.3"]
        self.assertTrue(row[2].startswith("**505.0 ms** after the high step's load, by the poll's time "
                                          "(no stamp between the polls) (one run)"), row[2])
        self.assertIn("the closed step's threads were off before its load ended (turned off during the load; "
                      "guard reverts in that step: 1), so it has no scale-down to time: the first poll after "
                      "the end, 0.6 ms, found them off", row[2])
        self.assertNotIn("median", row[2])
        self.assertIn("went off during its load is named apart", row[1])

    def test_spread_prefetch_micro(self):
        self.add_run("r1", prefetch_micro=pm_lines())
        _, text, _ = self.generate()
        rows = self.rows(text)
        self.assertIn("**402.0 ns/node** sequential, **38.0 ns/node** with 16 lists and prefetch: 10.58× (runs "
                      "401.0/402.0/403.0 sequential, 37.0/38.0/39.0 with prefetch; prefetch lower in every run)",
                      rows["F6.7"][2])
        self.assertIn("**2.00×** (802.0 / 402.0 ns/node; 2 MiB lower in every run)", rows["F6.8"][2])
        self.assertIn("batch of one runs 1001.0/1002.0/1003.0; run ranges overlap", rows["F6.13"][2])
        self.assertIn("faster than hashtable_find alone (1002.0; batch then find lower in every run)",
                      rows["F6.14"][2])
        self.assertIn("(runs 1001.0/1002.0/1003.0 and 101.0/102.0/103.0): 9.82× (batch 16 lower in every run)",
                      rows["F6.17"][2])
        self.assertIn("**1.00×** (1002.0 / 1002.0 ns/lookup; run ranges overlap)", rows["F6.18"][2])
        self.assertIn("within 10% of the best (", rows["F6.12"][2])
        self.assertIn(", runs ", rows["F6.12"][2])

    def test_spread_prefetch_e2e_beside_valkey(self):
        lines = pe_lines()
        for p, base in ((1, 80.0), (16, 700.0)):
            for i in range(3):
                lines.append({"bench": "prefetch_e2e", "kind": "run", "pipeline": p, "round": i + 1,
                              "setting": "valkey-t1", "server": "valkey-server", "rps": base + i,
                              "main_cpu_us_per_req": 1000.0 / (base + i), "run_id": "RUN1"})
        lines.append({"bench": "prefetch_e2e", "finding": True, "id": "F6.38",
                      "claim": "GET rps, soloist / Valkey (2024 tree), io-threads 1, P=16",
                      "figure": "1001 / 701 rps = 1.43×", "command": "make findings BENCH=prefetch_e2e",
                      "config": {"pipeline": 16, "setting": "t1", "valkey": "valkey-t1"}, "run_id": "RUN1"})
        self.add_run("r1", prefetch_e2e=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        self.assertIn("(runs 1000–1002 vs 700–702; soloist faster in every run)", self.rows(text)["F6.38"][2])

    def test_spread_prefetch_e2e_rows_keep_the_benchmarks_figure(self):
        self.add_run("r1", prefetch_e2e=pe_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertEqual(rows["F6.20"][2], "101 / 110 rps = 0.92× (runs 100–102 vs 90–130; run ranges overlap)")
        self.assertIn("rps = 2.00× (runs 1000–1002 vs 500–502; prefetch on faster in every run)", rows["F6.22"][2])
        self.assertIn("µs = 0.50× (runs 0.998–1.000 vs 1.992–2.000; prefetch on lower in every run)",
                      rows["F6.23"][2])
        self.assertIn("(runs 1000–1002 vs 550–552; soloist faster in every run)", rows["F6.30"][2])
        self.assertIn("(runs 0.100–0.120 batches/GET, 5.0–7.0 keys/batch)", rows["F6.33"][2])
        self.assertEqual(rows["F6.35"][2], "700 / 600 keys/s = 1.17× (one run)")
        # One round of each setting: no spread to give.
        shutil.rmtree(self.results)
        self.add_run("r1", prefetch_e2e=pe_lines(runs=1))
        _, text, _ = self.generate()
        self.assertEqual(self.rows(text)["F6.22"][2], "1001 / 501 rps = 2.00× (one run)")

    def test_big_values_runs_with_one_generator_give_no_noisy_rows(self):
        # Runs from before the small class had a process of its own measured
        # another arrangement (F7.38's), whatever their rows' claims say.
        lines = bv_lines()
        for ln in lines:
            ln.pop("generators", None)
        self.add_run("r1", big_values=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertFalse([k for k in rows if k in ("F7.20", "F7.26")], sorted(rows))
        self.assertIn("F7.1", rows)

    def test_spread_big_values_rows_keep_the_benchmarks_figure(self):
        self.add_run("r1", big_values=bv_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertTrue(rows["F7.1"][2].startswith("on 1010, off 510, redis 1005, ceiling 2010 MB/s: "
                                                   "on = 0.50× ceiling"), rows["F7.1"][2])
        self.assertIn("; runs on 1000–1020, off 500–520, redis 995–1015, ceiling 2000–2020 MB/s; on against "
                      "the ceiling: ceiling faster in every run; against off: on faster in every run; against "
                      "redis: run ranges overlap", rows["F7.1"][2])
        self.assertIn("not met (lowest 0.50×: 8 MB 0.50×); 8 MB: ceiling faster in every run", rows["F7.7"][2])
        self.assertIn("(runs 1 MB: 0 B each, 8 MB: 0 B each)", rows["F7.8"][2])
        self.assertTrue(rows["F7.20"][2].endswith("1.50× without (one run)"), rows["F7.20"][2])
        self.assertTrue(rows["F7.26"][2].endswith("(met) (one run)"), rows["F7.26"][2])

    # -- refusals -------------------------------------------------------

    def test_row_without_conditions_is_refused(self):
        prov = copy.deepcopy(PROV)
        del prov["kernel"]
        self.add_run("r1", prov=prov, write_cost=wc_lines())
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("no kernel", err)
        self.assertFalse(os.path.exists(self.out))

    def test_generic_row_without_config_is_refused(self):
        line = {"bench": "queue_spsc", "finding": True, "id": "F2.1",
                "claim": "ns per item", "figure": "4.3 ns", "run_id": "r1"}
        self.add_run("r1", queue_spsc=[line])
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("no config", err)
        line["config"] = {"slots": 4096, "items": "pointers"}
        shutil.rmtree(self.results)
        self.add_run("r1", queue_spsc=[line])
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        self.assertIn("slots=4096", self.rows(text)["F2.1"][3])

    def test_row_class_refuses_missing_conditions(self):
        row = findings.Row("F0.1", "claim", "1.0×", {"cpu": "x"}, "make findings", "f.jsonl")
        with self.assertRaises(findings.Refused):
            row.validate()

    def test_row_citing_results_not_stored_is_refused(self):
        """A row's raw results (its source, run.rel()) must be stored:
        bench/results/ keeps only the runs something uses, so a row citing
        another is refused by name, by --check as by a write, and the file
        is left as it was."""
        self.add_run("r1", write_cost=wc_lines())
        rc, kept, err = self.generate()
        self.assertEqual(rc, 0, err)
        made = findings.HANDLERS["write_cost"]

        def planted(run, lines, bench):
            return made(run, lines, bench) + [findings.Row(
                "F0.99", "a planted row", "**1.00×**", dict(findings_core.base_conditions(run), config=["x"]),
                "make findings", run.rel("gone"))]
        with mock.patch.dict(findings.HANDLERS, {"write_cost": planted}):
            for extra in (["--check"], []):
                rc, text, err = self.generate(*extra)
                self.assertEqual(rc, 1, extra)
                self.assertIn("row F0.99 (a planted row) cites raw results", err)
                self.assertIn(os.path.join("r1", "gone.jsonl") + ", which are not stored", err)
                self.assertEqual(text, kept)
        # The same row citing results that are there passes.
        with open(os.path.join(self.results, "r1", "gone.jsonl"), "w") as f:
            f.write("{}\n")
        with mock.patch.dict(findings.HANDLERS, {"write_cost": planted}):
            rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        self.assertIn("F0.99", self.rows(text))

    def test_dir_without_provenance_is_not_a_result(self):
        self.add_run("nop", prov=None, write_cost=wc_lines())
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("no results", err)

    # -- order, selection, labels ----------------------------------------

    def test_rows_sort_numerically_and_output_is_deterministic(self):
        self.add_run("r1", server_vs_redis=svr_lines(), write_cost=wc_lines(),
                     pipeline_span=span_lines())
        _, first, _ = self.generate()
        ids = [ln.split(" | ")[0][2:] for ln in first.splitlines()
               if ln.startswith("| F") and ln.count(" | ") == 4]
        self.assertEqual(ids, sorted(ids, key=findings.id_key))
        self.assertLess(ids.index("F0.2"), ids.index("F0.10"))
        _, second, _ = self.generate()
        self.assertEqual(first, second)
        rc, _, _ = self.generate("--check")
        self.assertEqual(rc, 0)

    def test_full_run_preferred_over_newer_quick_run(self):
        self.add_run("old-full", write_cost=wc_lines("old-full"))
        quick = dict(copy.deepcopy(PROV), quick=True, date="2026-12-01T00:00:00+00:00")
        self.add_run("new-quick", prov=quick, write_cost=wc_lines("new-quick"))
        _, text, _ = self.generate()
        self.assertIn("old-full/write_cost.jsonl", text)
        _, text, _ = self.generate("--include-quick")
        self.assertIn("new-quick/write_cost.jsonl", text)
        self.assertIn("QUICK=1 development run", text)

    def test_standin_is_labelled(self):
        prov = copy.deepcopy(PROV)
        prov["soloist"].update(standin=True, **{"is": "redis-server"})
        self.add_run("r1", prov=prov, server_vs_redis=svr_lines(a_is="redis-server"))
        _, text, _ = self.generate()
        row = self.rows(text)["F0.1"]
        self.assertIn("STAND-IN", row[2])
        self.assertIn("STAND-IN", row[3])

    def test_loadgen_sanity_row_when_present(self):
        line = {"bench": "loadgen_sanity", "summary": True, "ratio": 0.97,
                "clients": 50, "pipeline": 1, "run_id": "r1"}
        self.add_run("r1", loadgen_sanity=[line])
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        self.assertIn("**0.97×**", self.rows(text)["F0.22"][2])

    def test_side_by_side_table(self):
        self.add_run("r1", server_vs_redis=svr_lines())
        _, text, _ = self.generate()
        self.assertIn("## Side by side: soloist / redis-server 7.0", text)
        self.assertIn("| F0.1 | GET | 3 B | 1 | 110 | 95 | 1.16× |", text)


class BenchlibTest(unittest.TestCase):
    """The pieces of bench/benchlib.py that turn redis-benchmark's output
    into JSON; no server needed."""

    def test_parse_csv(self):
        text = ('"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",'
                '"p95_latency_ms","p99_latency_ms","max_latency_ms"\n'
                '"GET","59206.63","0.565","0.208","0.543","0.815","1.055","3.319"\n')
        row = benchlib.parse_csv(text)
        self.assertEqual(row["csv_test"], "GET")
        self.assertEqual(row["rps"], 59206.63)
        self.assertEqual(row["p99_latency_ms"], 1.055)

    def test_parse_csv_without_a_row(self):
        self.assertIsNone(benchlib.parse_csv("ERROR: connection refused\n"))

    def test_thread_server_says_why_a_server_refuses_threads(self):
        tmp = tempfile.mkdtemp(prefix="benchlib-test-")
        self.addCleanup(shutil.rmtree, tmp, True)
        fake = os.path.join(tmp, "no-threads-server")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'Bad directive or wrong number of arguments' >&2\nexit 1\n")
        os.chmod(fake, 0o755)
        srv, why = benchlib.thread_server("soloist", fake, 4, ["--io-threads-always-active", "yes"])
        self.assertIsNone(srv)
        self.assertIn("refused --io-threads 4 --io-threads-always-active yes", why)
        self.assertIn("Bad directive", why)

    @unittest.skipUnless(shutil.which("redis-server"), "redis-server is not installed")
    def test_thread_server_says_why_a_server_ignores_threads(self):
        # redis-server takes --io-threads but has no INFO iothreads section,
        # as a server that accepts the option without implementing it.
        srv, why = benchlib.thread_server("soloist", shutil.which("redis-server"), 2)
        self.assertIsNone(srv)
        self.assertIn("no INFO iothreads section", why)
        self.assertEqual(benchlib.Server.live, [])

    def test_runner_knows_the_benchmarks_of_steps_4_and_5(self):
        import argparse
        import run
        for quick, bound in ((True, 75), (False, 330)):
            a = argparse.Namespace(quick=quick, soloist_bench_bin=sys.executable)
            for name in ("main_cpu", "threads_vs_redis", "ignition_timing"):
                self.assertIn(name, run.ALL)
                argv, _, limit = run.command_for(name, a)
                self.assertTrue(os.access(argv[0], os.X_OK), argv[0])
                self.assertLessEqual(limit, bound)
        a = argparse.Namespace(quick=True, soloist_bench_bin="/nonexistent/soloist-bench")
        for name in ("main_cpu", "ignition_timing"):
            argv, why, _ = run.command_for(name, a)
            self.assertIsNone(argv)
            self.assertIn("not built", why)

    def test_runner_records_which_boot_made_the_run(self):
        import run
        got = run.boot_identity()
        self.assertRegex(got["boot_id"], r"^[0-9a-f-]{36}$")
        self.assertGreater(got["mem_total_kb"], 0)

    def test_ignition_trusts_the_servers_stamp_only_between_the_polls(self):
        import ignition_timing as it
        # The previous poll went out at 10.000 s; this one came back at
        # 10.010 s having seen the change, which the server stamped.
        seen = {"t": 10.010, "io_threads_last_change_us": 10_004_000}
        self.assertAlmostEqual(it.stamped_ms(seen, 9.990, 10.000), 14.0)
        late = dict(seen, io_threads_last_change_us=10_020_000)   # after the reply: another clock
        early = dict(seen, io_threads_last_change_us=9_999_000)   # before the last "no change"
        self.assertIsNone(it.stamped_ms(late, 9.990, 10.000))
        self.assertIsNone(it.stamped_ms(early, 9.990, 10.000))
        self.assertIsNone(it.stamped_ms(dict(seen, io_threads_last_change_us=None), 9.990, 10.000))

    def test_calibrated_requests_are_whole_rounds(self):
        n = benchlib.calibrate_requests(100000.0, 2.5, 50, 16)
        self.assertEqual(n % (50 * 16), 0)
        self.assertGreaterEqual(n, 250000)
        self.assertLess(n, 250000 + 800)
        self.assertEqual(benchlib.calibrate_requests(1.0, 0.1, 50, 1), 2000)


class BigValuesCeilingTest(unittest.TestCase):
    """bench/big_values.py's side of the ceiling: F7.18 says whether a
    server beat the ceiling, in a figure the book's readings can read;
    SIZES_MB limits a run; the runner needs wire_ceiling; and the peer and
    client, when built, answer run_cell as the bandwidth loop reads it."""

    def setUp(self):
        import big_values
        self.bv = big_values

    def rows_for(self, speeds, sizes=(1, 8)):
        bw = [{"setting": st, "test": t, "value_mb": mb, "mb_per_s": v}
              for mb in sizes for t in ("GET", "SET") for st, v in speeds.items()]
        got = []
        self.bv.ceiling_holds(bw, lambda rid, claim, fig, **cfg: got.append((rid, claim, fig, cfg)), list(sizes))
        return got

    def test_ceiling_row_met_when_no_server_is_faster(self):
        import findings_refs
        (rid, claim, fig, cfg), = self.rows_for({"raw": 2000.0, "on": 1500.0, "off": 900.0, "redis": 1000.0})
        self.assertEqual(rid, 18)
        self.assertTrue(claim.startswith("target: no server faster than the raw loopback ceiling"))
        self.assertTrue(fig.startswith("met (highest 0.75×: on "), fig)
        self.assertIn("GET 8 MB: on 0.75×, off 0.45×, redis 0.50×", fig)
        self.assertEqual(cfg["sizes_mb"], "1,8")
        self.assertIsNone(findings_refs.evaluate("met; at most 1", fig))

    def test_ceiling_row_names_every_server_above_it(self):
        import findings_refs
        (_, _, fig, _), = self.rows_for({"raw": 1000.0, "on": 900.0, "off": 800.0, "redis": 1160.0}, sizes=(1,))
        self.assertTrue(fig.startswith("not met (highest 1.16×: redis "), fig)
        self.assertIn("above the ceiling: redis GET 1 MB 1.16×, redis SET 1 MB 1.16×", fig)
        self.assertIsNone(findings_refs.evaluate("not met; at least 1", fig))
        self.assertIsNotNone(findings_refs.evaluate("met", fig))

    def test_no_ceiling_row_without_the_ceilings_runs(self):
        self.assertEqual(self.rows_for({"on": 1500.0, "off": 900.0, "redis": 1000.0}), [])

    def test_sizes_knob(self):
        old = os.environ.get("SIZES_MB")
        self.addCleanup(lambda: os.environ.pop("SIZES_MB", None) if old is None
                        else os.environ.__setitem__("SIZES_MB", old))
        os.environ["SIZES_MB"] = "8,1"
        self.assertEqual(self.bv.sizes_mb(), [1, 8])
        os.environ["SIZES_MB"] = ""
        self.assertEqual(self.bv.sizes_mb(), [1, 2, 4, 8, 16, 32, 64])
        os.environ["SIZES_MB"] = "3"
        with redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            self.bv.sizes_mb()

    def test_runner_needs_wire_ceiling(self):
        import argparse
        import run
        a = argparse.Namespace(quick=True, soloist_bench_bin=sys.executable, wire_ceiling_bin="/nonexistent/wc")
        argv, why, _ = run.command_for("big_values", a)
        self.assertIsNone(argv)
        self.assertIn("/nonexistent/wc not built", why)
        a.wire_ceiling_bin = sys.executable
        argv, _, _ = run.command_for("big_values", a)
        self.assertTrue(argv[0].endswith("big_values.py"))

    def test_raw_cells_through_the_built_peer_and_client(self):
        if not os.access(self.bv.WIRE_CEILING_BIN, os.X_OK):
            self.skipTest("build/bench/wire_ceiling is not built (make build/bench/wire_ceiling)")
        peer, port = self.bv.start_peer()
        self.addCleanup(peer.stdout.close)
        self.addCleanup(peer.wait)
        self.addCleanup(peer.kill)
        for kind in ("raw-get", "raw-set"):
            n, secs, ok, lats = self.bv.run_cell(kind, port, 1 << 20, 0.0, 1)
            self.assertTrue(ok)
            self.assertGreaterEqual(n, self.bv.MIN_REQS)
            self.assertEqual(len(lats), n)
            self.assertTrue(secs > 0 and all(0 < x < secs + 1e-6 for x in lats), (secs, lats))

    def test_value_source_peer_sends_the_value(self):
        # The written-memory ceiling (F7.36) sends the value of seed 1: the
        # client checks it byte for byte, and a zero-page reply, or a value
        # generated from seed 2, reads as a wrong reply.
        if not os.access(self.bv.WIRE_CEILING_BIN, os.X_OK):
            self.skipTest("build/bench/wire_ceiling is not built (make build/bench/wire_ceiling)")
        peers = {}
        for source in ("value", "zero"):
            peer, port = self.bv.start_peer(source)
            self.addCleanup(peer.stdout.close)
            self.addCleanup(peer.wait)
            self.addCleanup(peer.kill)
            peers[source] = port
        n, _, ok, _ = self.bv.run_cell("raw-get", peers["value"], 3 << 20, 0.0, 1, expect="value")
        self.assertTrue(ok)
        self.assertGreaterEqual(n, self.bv.MIN_REQS)
        self.assertFalse(self.bv.run_cell("raw-get", peers["value"], 1 << 20, 0.0, 2, expect="value")[2])
        self.assertFalse(self.bv.run_cell("raw-get", peers["zero"], 1 << 20, 0.0, 1, expect="value")[2])
        self.assertFalse(self.bv.run_cell("raw-get", peers["value"], 1 << 20, 0.0, 1)[2])


if __name__ == "__main__":
    unittest.main()
