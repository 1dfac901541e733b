#!/usr/bin/env python3
"""server_vs_redis.py — (a) soloist beside Debian's redis-server 7.0.

Step 0 benchmark. Owns the side-by-side serving comparison: GET and SET,
50 clients, 3-byte and 512-byte values, pipeline 1 and 16, keyspace
-r 100000 (loaded in full before the cells of each value size, so every
GET is a hit on every server). In each cell A (soloist) and B (redis) are
run alternately, A B A B A B (five pairs by default, three in QUICK mode), each run sized by a short calibration to
last about BENCH_TARGET_S seconds, and the cell reports the median rps of
each and the ratio soloist/redis. With VALKEY_SERVER set, Valkey built
from source is a third server, C, in every cell (A C B A C B ...), and
the cell reports soloist/Valkey beside soloist/redis; a run without it
says it skipped the peer. Single-threaded; one server is driven at a
time, all stay up for the whole script.

Prints JSON lines: kind=calibrate (discarded warm-up), kind=run (one
redis-benchmark run), kind=cell (medians and ratio), kind=done.
Knobs (environment): QUICK=1 (development: ~0.25 s runs, 40 s budget,
60 s with Valkey),
BENCH_TARGET_S, BENCH_RUNS (>=3), BENCH_BUDGET_S, BENCH_PINNED=1 (server
on cpu0, redis-benchmark on cpu1), SOLOIST_BIN, REDIS_BIN, VALKEY_SERVER.

Mirrors how Valkey's I/O-threads work was reported (valkey-benchmark,
-c 50, -P 1 and 16, SET/GET, 512-byte values), not any Valkey code.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CLIENTS = 50
KEYSPACE = 100000


def main():
    bl.install_cleanup()
    q = bl.quick()
    target = float(os.environ.get("BENCH_TARGET_S", "0.25" if q else "2.0"))
    runs = max(3, int(os.environ.get("BENCH_RUNS", "3" if q else "5")))
    pl = bl.placement()
    base = {"bench": "server_vs_redis", "clients": CLIENTS, "keyspace": KEYSPACE,
            "cores": os.cpu_count(), "quick": q, "target_s": target}
    base.update(pl)
    sides = bl.servers() + [s for s in [bl.valkey_side(base)] if s]
    # Each server adds half of the two servers' time.
    budget = bl.Budget(float(os.environ.get("BENCH_BUDGET_S", (40 if q else 230) * len(sides) / 2)))

    srv = {}
    try:
        for label, binary, really in sides:
            srv[label] = bl.Server(label, binary, really)
            bl.log("%s (%s) on port %d" % (label, really, srv[label].port))
        order = [label for label in ("soloist", "valkey", "redis") if label in srv]
        for size in bl.SIZES:
            dbsize = {}
            for label in order:
                dbsize[label] = bl.populate(srv[label], KEYSPACE, size)
            for test in bl.TESTS:
                for p in bl.PIPELINES:
                    if budget.out():
                        bl.emit(dict(base, kind="skipped", test=test, pipeline=p,
                                     value_size=size, why="time budget spent"))
                        continue
                    cell(srv, order, dict(base, test=test, pipeline=p, value_size=size,
                                          dbsize=dbsize), runs, target)
        bl.emit(dict(base, kind="done", elapsed_s=round(budget.seconds - budget.left(), 1)))
    finally:
        bl.stop_all()


def cell(srv, order, cfg, runs, target):
    test, p, size = cfg["test"], cfg["pipeline"], cfg["value_size"]
    # Calibrate: one short warm-up per server (also warms allocator and
    # connections); the run size, from the geometric mean of their rates,
    # is then shared by every side.
    n0 = bl.calibrate_requests(20000 * (1 if p == 1 else 4) * (0.25 if bl.quick() else 1),
                               1.0, CLIENTS, p)
    seen = []
    for label in order:
        r = bl.redis_benchmark(srv[label], test.lower(), CLIENTS, n0, p, size, KEYSPACE)
        seen.append(r["rps"])
        bl.emit(dict(cfg, kind="calibrate", server=label, server_is=srv[label].really,
                     requests=n0, **strip(r)))
    mean_rps = bl.geomean(seen)
    n = bl.calibrate_requests(mean_rps, target, CLIENTS, p)
    rps = {label: [] for label in order}
    seq = ""
    for i in range(runs):
        for label in order:
            r = bl.redis_benchmark(srv[label], test.lower(), CLIENTS, n, p, size, KEYSPACE,
                                   timeout=max(60, 20 * target))
            rps[label].append(r["rps"])
            seq += {"soloist": "A", "redis": "B", "valkey": "C"}[label]
            bl.emit(dict(cfg, kind="run", server=label, server_is=srv[label].really,
                         run=i + 1, requests=n, **strip(r)))
    med = {label: bl.median(v) for label, v in rps.items()}
    ratio = med["soloist"] / med["redis"] if med["redis"] else None
    vk = {}
    if "valkey" in med:
        vk = {"valkey_rps": rps["valkey"], "valkey_median": med["valkey"],
              "ratio_valkey": round(med["soloist"] / med["valkey"], 4) if med["valkey"] else None}
    bl.emit(dict(cfg, kind="cell", requests=n, order=seq,
                 soloist_rps=rps["soloist"], redis_rps=rps["redis"],
                 soloist_median=med["soloist"], redis_median=med["redis"],
                 ratio=round(ratio, 4) if ratio else None,
                 soloist_is=srv["soloist"].really, **vk))
    bl.log("%s %dB P=%d n=%d: %s" % (test, size, p, n, ", ".join(
        "%s %.0f" % (label, med[label]) for label in order)))


def strip(r):
    """The benchmark's figures, minus names the caller sets itself."""
    return {k: v for k, v in r.items() if k not in ("test",)}


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
