#!/usr/bin/env python3
"""phase_shares.py — (d) where soloist's main thread spends its time.

Step 0 benchmark. Owns the measurement of the serial share s that chapter
01's Amdahl arithmetic uses: soloist's main thread charges its time to
phases (poll = inside epoll_wait, read = read+parse, exec = running
commands, write = sending replies, other), and INFO's Threads section
shows the running totals as main_thread_<phase>_us. This script loads
the keyspace, reads those counters, runs redis-benchmark GET (50 clients,
3-byte values, -r 100000) at P=1 and at P=16, reads them again, and
prints each phase's share of the main thread's busy time (everything but
poll) and of its total time, per depth, median of >= 3 runs.

Only soloist has these counters, so there is no B side here. Prints JSON
lines: kind=run and kind=shares. Knobs: QUICK=1, BENCH_TARGET_S,
BENCH_RUNS, BENCH_PINNED, SOLOIST_BIN. If INFO has no main_thread_*_us
fields (a stand-in server), it prints kind=unavailable and exits 0.

Valkey anchor: none in code — Valkey has no such clock; its closest
figures are INFO's used_cpu_sys_main_thread / used_cpu_user_main_thread
(valkey src/server.c genValkeyInfoString), which give the total only.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CLIENTS = 50
KEYSPACE = 100000
DEPTHS = [1, 16]
FIELD = re.compile(r"^main_thread_([a-z]+)_us$")
NOT_PHASES = {"total", "busy"}


def phase_us(server):
    """{phase: microseconds} from INFO (every section; the field names are
    what matters, so a renamed section still works)."""
    info = server.info("everything")
    out = {}
    for (_sect, key), val in info.items():
        m = FIELD.match(key)
        if m and m.group(1) not in NOT_PHASES:
            try:
                out[m.group(1)] = int(val)
            except ValueError:
                pass
    return out


def main():
    bl.install_cleanup()
    q = bl.quick()
    target = float(os.environ.get("BENCH_TARGET_S", "0.25" if q else "2.0"))
    runs = max(3, int(os.environ.get("BENCH_RUNS", "3")))
    label, binary, really = bl.servers()[0]
    base = {"bench": "phase_shares", "test": "GET", "clients": CLIENTS, "keyspace": KEYSPACE,
            "value_size": 3, "cores": os.cpu_count(), "quick": q, "server": label,
            "server_is": really, "target_s": target}
    base.update(bl.placement())
    srv = bl.Server(label, binary, really)
    try:
        if not phase_us(srv):
            bl.emit(dict(base, kind="unavailable",
                         why="INFO has no main_thread_<phase>_us fields"))
            return
        bl.populate(srv, KEYSPACE, 3)
        for p in DEPTHS:
            cfg = dict(base, pipeline=p)
            warm = bl.redis_benchmark(srv, "get", CLIENTS,
                                      bl.calibrate_requests(20000 * (0.25 if q else 1) * (1 if p == 1 else 4),
                                                            1.0, CLIENTS, p), p, 3, KEYSPACE)
            n = bl.calibrate_requests(warm["rps"], target, CLIENTS, p)
            shares = []
            for i in range(runs):
                before = phase_us(srv)
                r = bl.redis_benchmark(srv, "get", CLIENTS, n, p, 3, KEYSPACE,
                                       timeout=max(60, 20 * target))
                after = phase_us(srv)
                delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
                total = sum(delta.values())
                busy = total - delta.get("poll", 0)
                s_busy = {k: round(v / busy, 4) for k, v in delta.items()
                          if k != "poll" and busy > 0}
                s_total = {k: round(v / total, 4) for k, v in delta.items() if total > 0}
                shares.append((s_busy, s_total, delta))
                bl.emit(dict(cfg, kind="run", run=i + 1, requests=n, rps=r["rps"],
                             phase_us=delta, share_of_busy=s_busy, share_of_total=s_total,
                             busy_us_per_request=round(busy / n, 3),
                             server_cpu_s=r.get("server_cpu_s"),
                             client_cpu_s=r.get("client_cpu_s"), wall_s=r["wall_s"]))
            phases = sorted(shares[0][2])
            med_busy = {k: bl.median([s[0].get(k, 0) for s in shares])
                        for k in phases if k != "poll"}
            med_total = {k: bl.median([s[1].get(k, 0) for s in shares]) for k in phases}
            bl.emit(dict(cfg, kind="shares", runs=runs, requests=n,
                         median_share_of_busy=med_busy, median_share_of_total=med_total))
            bl.log("GET P=%d: busy shares %s" % (p, med_busy))
    finally:
        bl.stop_all()


if __name__ == "__main__":
    main()
