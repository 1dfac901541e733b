"""findings_bench/write_timing.py — the write_timing benchmark's part of FINDINGS.md.

Tooling for step 0. Owns rows F0.50-F0.56: replies written in before_sleep
or immediately, made from bench/write_timing.py's raw lines; the helpers
every benchmark shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import (
    base_conditions, field_runs, fmt_ratio, fmt_rps, median_of, placement_cfg, Refused, Row, runs_spread,
    separation, serving_note, verdict)


WT_SETTINGS = ("before-sleep", "immediate")
WT_LAT = ("p50", "p99", "p99.9")
WT_TABLE = ("Reply write timing: before_sleep vs immediately in the read handler (soloist, GET P=1, "
            "50 connections; medians)",
            ["loop", "setting", "rps", "p50 µs", "p99 µs", "p99.9 µs", "server CPU µs/req",
             "syscalls/req"])


# Long: each loop's rows and the cost row F0.56 read the same medians.
def h_write_timing(run, lines, bench):
    """F0.50-F0.56: replies written in before_sleep or immediately (the
    experiment option reply-write-timing), closed and open loop, from
    bench/write_timing.py's per-run lines (medians of alternated runs)."""
    base = base_conditions(run)
    rows = []
    cmd = "make findings BENCH=write_timing"
    costs = []

    def sb(text):  # soloist-bench, not redis-benchmark, is the client here
        return text.replace("redis-benchmark", "soloist-bench")
    for k, loop in enumerate(("closed", "open")):
        runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("loop") == loop]
        if not runs:
            continue
        if len({ln.get("run_id") for ln in runs}) != 1:
            raise Refused("write_timing %s loop mixes runs" % loop)
        side = {st: [ln for ln in runs if ln.get("setting") == st] for st in WT_SETTINGS}
        if not all(side.values()):
            raise Refused("write_timing %s loop lacks a setting; a comparison needs both from one run" % loop)
        ln = runs[0]
        order = "".join("A" if x["setting"] == WT_SETTINGS[0] else "B" for x in runs)
        how = ("closed loop: each connection keeps 1 request in flight" if loop == "closed" else
               "open loop: Poisson arrivals at %s req/s over the connections, latency from the due time"
               % fmt_rps(ln["rate"]))
        cfg = ["GET", "P=1", "%d connections" % ln["clients"], "%d B values" % ln["value_size"],
               "%d keys prefilled" % ln["keys"], how, ln["load_generator"],
               "%gs warm-up + %gs measured per run" % (ln["warmup_s"], ln["duration_s"]),
               "%d runs each, alternated %s (A = before-sleep), median" % (min(map(len, side.values())), order),
               "server counters diffed per run, warm-up included", "io-threads 1",
               sb(placement_cfg(ln, base["cores"]))]
        med = {}
        for st, sl in side.items():
            m = {"rps": median_of(sl)}
            for q in WT_LAT:
                m[q] = statistics.median(x["latency_us"][q] for x in sl)
            for f in ("cpu_us_per_request", "syscalls_per_request", "reads_per_request",
                      "writes_per_request", "polls_per_request", "slip_p99_us"):
                m[f] = statistics.median(x[f] for x in sl)
            m["errors"] = sum(x.get("errors", 0) for x in sl)
            med[st] = m
            lat = {q: runs_spread([x["latency_us"][q] for x in sl], "%.0f") for q in WT_LAT}
            fig = ("%s rps (%s); latency p50 **%.0f µs** (%s), p99 **%.0f µs** (%s), p99.9 %.0f µs (%s); "
                   "server CPU **%.2f µs/request** (%s); %.3f system calls/request (read %.3f, writev %.3f, "
                   "epoll_wait %.3f)"
                   % (fmt_rps(m["rps"]), runs_spread(field_runs(sl, "rps"), fmt_rps), m["p50"], lat["p50"],
                      m["p99"], lat["p99"], m["p99.9"], lat["p99.9"], m["cpu_us_per_request"],
                      runs_spread(field_runs(sl, "cpu_us_per_request"), "%.2f"),
                      m["syscalls_per_request"], m["reads_per_request"], m["writes_per_request"],
                      m["polls_per_request"]))
            if loop == "open":
                fig += "; generator slip p99 %.0f µs" % m["slip_p99_us"]
            if m["errors"]:
                fig += "; %d ERRORS in the runs" % m["errors"]
            rows.append(Row("F0.%d" % (50 + 3 * k + WT_SETTINGS.index(st)),
                            "replies written %s, %s loop, GET P=1, 50 connections"
                            % ("in before_sleep (default)" if st == "before-sleep"
                               else "immediately in the read handler (reply-write-timing immediate)", loop),
                            fig, dict(base, config=cfg), cmd, run.rel(bench), sb(serving_note(ln, base["cores"])),
                            extra={"summary": WT_TABLE,
                                   "cells": [loop, st, fmt_rps(m["rps"])] + ["%.0f" % m[q] for q in WT_LAT]
                                   + ["%.2f" % m["cpu_us_per_request"], "%.3f" % m["syscalls_per_request"]]}))
        a, b = med["before-sleep"], med["immediate"]
        fig = "; ".join("%s %s" % (q, fmt_ratio(b[q] / a[q])) for q in WT_LAT)
        fig = ("immediate / before-sleep latency: " + fig
               + " (p99: %s)" % separation([x["latency_us"]["p99"] for x in side["immediate"]],
                                            [x["latency_us"]["p99"] for x in side["before-sleep"]],
                                            ("immediate", "before-sleep"))
               + "; rps %s (%s); server CPU per request **%s** (%s)" % (
                   fmt_ratio(b["rps"] / a["rps"]),
                   verdict(field_runs(side["immediate"], "rps"), field_runs(side["before-sleep"], "rps"),
                           ("immediate", "before-sleep")),
                   fmt_ratio(b["cpu_us_per_request"] / a["cpu_us_per_request"]),
                   verdict(field_runs(side["immediate"], "cpu_us_per_request"),
                           field_runs(side["before-sleep"], "cpu_us_per_request"),
                           ("immediate", "before-sleep"), lower=True)))
        rows.append(Row("F0.%d" % (52 + 3 * k),
                        "writing replies immediately instead of in before_sleep, %s loop: ratios" % loop,
                        fig, dict(base, config=cfg), cmd, run.rel(bench), sb(serving_note(ln, base["cores"]))))
        costs.append((loop, a, b, cfg, side))
    if costs:
        parts = []
        for loop, a, b, _, side in costs:
            d = b["syscalls_per_request"] - a["syscalls_per_request"]
            parts.append("%s loop %.3f → %.3f system calls/request (**%+.3f**, %+.1f%%; %s; writev %.3f → %.3f, "
                         "epoll_wait %.3f → %.3f)"
                         % (loop, a["syscalls_per_request"], b["syscalls_per_request"], d,
                            100 * d / a["syscalls_per_request"],
                            verdict(field_runs(side["immediate"], "syscalls_per_request"),
                                    field_runs(side["before-sleep"], "syscalls_per_request"),
                                    ("immediate", "before-sleep"), lower=True),
                            a["writes_per_request"],
                            b["writes_per_request"], a["polls_per_request"], b["polls_per_request"]))
        cfg = ["GET", "P=1", "50 connections", "read + writev + epoll_wait counted by the server",
               "closed and open loop as in F0.50–F0.55"]
        ln = next(x for x in lines if x.get("kind") == "run")
        rows.append(Row("F0.56", "what writing immediately costs in system calls, P=1",
                        "; ".join(parts), dict(base, config=cfg), cmd, run.rel(bench),
                        sb(serving_note(ln, base["cores"]))))
    return rows
