#!/usr/bin/env python3
"""pipeline_span.py — (c) how far pipelining carries one event loop.

Step 0 benchmark. Owns the pipelining span: PING (redis-benchmark's
PING_MBULK, the multibulk form every client sends) at depth P = 1, 4, 16,
64, 256 with 50 clients, against soloist and Debian's redis-server,
alternated A B A B A B at each depth, median of >= 3 runs. The span is
rps at P=256 over rps at P=1 for each server (and for Valkey built from
source, third in each round, when VALKEY_SERVER names one: rows F0.23-F0.24): how much of a P=1 request's
cost is per-round-trip (syscalls, wakeups) rather than per-command.
Single-threaded; one server is driven at a time.

Prints JSON lines: kind=calibrate, kind=run, kind=depth (medians and the
ratio soloist/redis at one depth), kind=span (per server), kind=done.
Knobs: QUICK=1, BENCH_TARGET_S, BENCH_RUNS, BENCH_BUDGET_S, BENCH_PINNED,
SOLOIST_BIN, REDIS_BIN (see server_vs_redis.py).

Mirrors the pipelining discussion of Valkey's benchmark docs ("up to 10x"
with pipelining), not any Valkey code.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CLIENTS = 50
DEPTHS = [1, 4, 16, 64, 256]


def main():
    bl.install_cleanup()
    q = bl.quick()
    target = float(os.environ.get("BENCH_TARGET_S", "0.25" if q else "2.0"))
    runs = max(3, int(os.environ.get("BENCH_RUNS", "3")))
    budget = bl.Budget(float(os.environ.get("BENCH_BUDGET_S", "30" if q else "150")))
    base = {"bench": "pipeline_span", "test": "PING_MBULK", "clients": CLIENTS,
            "cores": os.cpu_count(), "quick": q, "target_s": target}
    base.update(bl.placement())
    order = ["soloist", "redis"]
    sides = bl.servers()
    vk = bl.valkey_side(base)
    if vk:
        sides.append(vk)
        order.append("valkey")
    srv = {}
    med = {label: {} for label in order}
    try:
        for label, binary, really in sides:
            srv[label] = bl.Server(label, binary, really)
        for p in DEPTHS:
            if budget.out():
                bl.emit(dict(base, kind="skipped", pipeline=p, why="time budget spent"))
                continue
            cfg = dict(base, pipeline=p)
            n0 = bl.calibrate_requests(25000 * min(p, 16) * (0.25 if q else 1), 1.0, CLIENTS, p)
            seen = []
            for label in order:
                r = bl.redis_benchmark(srv[label], "ping_mbulk", CLIENTS, n0, p)
                seen.append(r["rps"])
                bl.emit(dict(cfg, kind="calibrate", server=label,
                             server_is=srv[label].really, requests=n0, **r))
            n = bl.calibrate_requests(bl.geomean(seen), target, CLIENTS, p)
            rps = {label: [] for label in order}
            seq = ""
            for i in range(runs):
                for label in order:
                    r = bl.redis_benchmark(srv[label], "ping_mbulk", CLIENTS, n, p,
                                           timeout=max(60, 20 * target))
                    rps[label].append(r["rps"])
                    seq += {"soloist": "A", "redis": "B"}.get(label, "C")
                    bl.emit(dict(cfg, kind="run", server=label, server_is=srv[label].really,
                                 run=i + 1, requests=n, **r))
            for label in order:
                med[label][p] = bl.median(rps[label])
            bl.emit(dict(cfg, kind="depth", requests=n, order=seq,
                         soloist_rps=rps["soloist"], redis_rps=rps["redis"],
                         soloist_median=med["soloist"][p], redis_median=med["redis"][p],
                         ratio=round(med["soloist"][p] / med["redis"][p], 4),
                         soloist_is=srv["soloist"].really,
                         **({"valkey_rps": rps["valkey"], "valkey_median": med["valkey"][p]} if "valkey" in med
                            else {})))
            bl.log("PING P=%d n=%d: soloist %.0f redis %.0f" % (p, n, med["soloist"][p],
                                                                med["redis"][p]))
        for label in order:
            m = med[label]
            if 1 in m and 256 in m:
                bl.emit(dict(base, kind="span", server=label, server_is=srv[label].really,
                             rps_by_depth={str(k): v for k, v in sorted(m.items())},
                             span=round(m[256] / m[1], 3)))
        bl.emit(dict(base, kind="done", elapsed_s=round(budget.seconds - budget.left(), 1)))
    finally:
        bl.stop_all()


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
