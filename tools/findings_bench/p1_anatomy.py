"""findings_bench/p1_anatomy.py — the p1_anatomy benchmark's part of FINDINGS.md.

Tooling for step 0. Owns rows F0.45-F0.49 and, beside Valkey, F0.59: system calls, wake-ups and CPU
per request at P=1, made from bench/p1_anatomy.py's raw lines; the helpers
every benchmark shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import base_conditions, field_runs, lo_hi, ONE_RUN, placement_cfg, Row, side_by_side


P1_TESTS = ("GET", "SET", "PING")


# Long: F0.45-F0.49 read the same cells through the helpers nested in it.
def h_p1_anatomy(run, lines, bench):
    """bench/p1_anatomy.py: per-request counts at P=1 on both sides."""
    base = base_conditions(run)
    cells = side_by_side(lines, ("test", "side"))
    tests = [t for t in P1_TESTS if (t, "server") in cells and (t, "client") in cells]
    if not tests:
        return []
    def one(t, side, srv):
        """The median pass of a cell, field by field."""
        runs = cells[(t, side)][srv]
        med = {k: statistics.median(r[k] for r in runs)
               for k in ("requests_per_wakeup", "context_switches_per_request", "cpu_us_per_request",
                         "total_syscalls_per_request", "single_event_wakeup_share", "wakes_other_per_request")}
        kinds = {k for r in runs for k in r["per_request"]}
        med["per_request"] = {k: statistics.median(r["per_request"].get(k, 0) for r in runs) for k in kinds}
        med["passes"] = len(runs)
        return dict(runs[0], **med)

    ln = one(tests[0], "server", "soloist")
    cfg = ["redis-benchmark, 50 clients, P=1, %d requests per cell" % ln["requests"],
           "median of %d passes, servers alternated" % ln["passes"],
           "GET/SET/PING_MBULK", "perf stat syscall tracepoints on the server pid and on redis-benchmark",
           "io-threads 1", placement_cfg(ln, base["cores"])]
    cmd, src = "make findings BENCH=p1_anatomy", run.rel(bench)

    def spread(t, side, key, fmt, srvs=("soloist", "redis")):
        """The passes' range of a field, soloist's vs redis's (or one server's)."""
        return "runs " + " vs ".join(lo_hi(field_runs(cells[(t, side)][srv], key), fmt) for srv in srvs) \
            if all(len(cells[(t, side)][srv]) > 1 for srv in srvs) else ONE_RUN

    def kinds(d, srv):
        per = dict(d["per_request"])
        wait = per.pop("epoll_wait", 0) + per.pop("epoll_pwait", 0)
        parts = ["epoll_wait %.3f" % wait] + ["%s %.2f" % (k, v) for k, v in sorted(per.items()) if v >= 0.01]
        return "%s (all %.2f; %s)" % (", ".join(parts), d["total_syscalls_per_request"],
                                      spread("GET", d["side"], "total_syscalls_per_request", "%.2f", (srv,)))

    rows = []
    for rid, side, who in (("F0.45", "server", "the server's"), ("F0.46", "client", "redis-benchmark's")):
        a, b = one("GET", side, "soloist"), one("GET", side, "redis")
        rows.append(Row(rid, "GET at P=1: %s system calls per request, by kind" % who,
                        "soloist: %s; redis-server 7.0: %s" % (kinds(a, "soloist"), kinds(b, "redis")),
                        dict(base, config=cfg), cmd, src))
    fig = "; ".join("%s **%.1f** vs %.1f (%s; one ready client in %.0f%% vs %.0f%% of wake-ups)" % (
        t, one(t, "server", "soloist")["requests_per_wakeup"], one(t, "server", "redis")["requests_per_wakeup"],
        spread(t, "server", "requests_per_wakeup", "%.1f"),
        100 * one(t, "server", "soloist")["single_event_wakeup_share"],
        100 * one(t, "server", "redis")["single_event_wakeup_share"]) for t in tests)
    rows.append(Row("F0.47", "P=1: requests per epoll wake-up of the server, soloist vs redis-server 7.0",
                    fig, dict(base, config=cfg), cmd, src))
    fig = "; ".join("%s **%.3f** vs %.3f (%s)" % (t, one(t, "client", "soloist")["wakes_other_per_request"],
                                                   one(t, "client", "redis")["wakes_other_per_request"],
                                                   spread(t, "client", "wakes_other_per_request", "%.3f"))
                    for t in tests)
    rows.append(Row("F0.48", "P=1: wake-ups redis-benchmark performs per request (its sendto finding the "
                    "server asleep in epoll_wait), against soloist vs against redis-server 7.0",
                    fig, dict(base, config=cfg), cmd, src))
    fig = "; ".join("%s client %.3f vs %.3f cs, %.1f vs %.1f µs (%s); server %.3f vs %.3f cs" % (
        t, one(t, "client", "soloist")["context_switches_per_request"],
        one(t, "client", "redis")["context_switches_per_request"],
        one(t, "client", "soloist")["cpu_us_per_request"], one(t, "client", "redis")["cpu_us_per_request"],
        spread(t, "client", "cpu_us_per_request", "%.1f"),
        one(t, "server", "soloist")["context_switches_per_request"],
        one(t, "server", "redis")["context_switches_per_request"]) for t in tests)
    rows.append(Row("F0.49", "P=1: context switches and CPU per request, against soloist vs against "
                    "redis-server 7.0", fig, dict(base, config=cfg), cmd, src,
                    "these move with how client and server interleave on the cores; "
                    "system calls per request by kind (F0.45, F0.46) do not"))
    vk = [t for t in tests if "valkey" in cells[(t, "server")] and "valkey" in cells[(t, "client")]]
    if vk:
        fig = "; ".join("%s: system calls %.2f vs %.2f, requests per wake-up **%.1f** vs %.1f (%s), client CPU "
                        "%.1f vs %.1f µs" % (
                            t, one(t, "server", "soloist")["total_syscalls_per_request"],
                            one(t, "server", "valkey")["total_syscalls_per_request"],
                            one(t, "server", "soloist")["requests_per_wakeup"],
                            one(t, "server", "valkey")["requests_per_wakeup"],
                            spread(t, "server", "requests_per_wakeup", "%.1f", ("soloist", "valkey")),
                            one(t, "client", "soloist")["cpu_us_per_request"],
                            one(t, "client", "valkey")["cpu_us_per_request"]) for t in vk)
        vcfg = cfg + ["Valkey built from source (%s)" % one(vk[0], "server", "valkey").get("valkey_version")]
        rows.append(Row("F0.59", "P=1 beside Valkey (2024 tree): the server's system calls and requests per "
                        "epoll wake-up, and redis-benchmark's CPU per request, soloist vs Valkey",
                        fig, dict(base, config=vcfg), cmd, src))
    return rows
