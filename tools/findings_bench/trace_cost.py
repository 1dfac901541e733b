"""findings_bench/trace_cost.py — the trace_cost benchmark's part of FINDINGS.md.

Tooling for step 4. Owns rows F4.70-F4.77: what the trace points cost the
main thread, made from bench/trace_cost.py's raw lines; the helpers every
benchmark shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import (
    base_conditions, field_runs, fmt_ratio, fmt_rps, lo_hi, median_of, ONE_RUN, one_run_of, placement_cfg, Refused,
    Row, runs_spread, sb_cfg, verdict)


TC_ORDER = [(1, 1), (1, 16), (4, 1), (4, 16)]
TC_NAMES = {"none": "no trace points", "off": "off", "on": "on"}
TC_TABLE = ("Trace points' cost: main thread's CPU per request (soloist GET 3 B, open loop at one rate per cell; "
            "medians)", ["cell", "rate req/s", "no trace points µs", "off µs", "on µs", "off / none", "on / off",
                         "others' CPU"])


def trace_cost_cells(lines):
    """{(io_threads, pipeline): {setting: [run lines]}} of bench/trace_cost.py."""
    cells = {}
    for ln in lines:
        if ln.get("kind") == "run":
            cells.setdefault((ln["io_threads"], ln["pipeline"]), {}).setdefault(ln["setting"], []).append(ln)
    return cells


def others_share(side):
    """The share of the cores other processes used during each run (the
    machine's non-idle time less the server's and the generator's)."""
    return [ln["others_cpu_s"] / (ln["wall_s"] * ln["cores"]) for ln in side
            if ln.get("others_cpu_s") is not None and ln.get("wall_s") and ln.get("cores")]


# Long: a cell's two rows (off / none, on / off) share its runs and config.
def h_trace_cost(run, lines, bench):
    """F4.70-F4.73: recording off against a build without trace points;
    F4.74-F4.77: recording on against off; per cell (io-threads 1 and 4,
    P=1 and 16), main's CPU per request."""
    base = base_conditions(run)
    one_run_of(lines, "trace_cost")
    cmd, src = "make findings BENCH=trace_cost", run.rel(bench)
    cells = trace_cost_cells(lines)
    rows = []
    if not cells:
        why = "; ".join(sorted({ln.get("why", "?") for ln in lines if ln.get("kind") == "unavailable"}))
        rows.append(Row("F4.70", "trace points, recording off: main thread's CPU per request against a build "
                        "without them", "**not measured**: %s" % (why or "no runs"),
                        dict(base, config=["bench/trace_cost.py", "no run lines"]), cmd, src))
        return rows
    for i, key in enumerate(TC_ORDER):
        if key not in cells:
            continue
        by = cells[key]
        missing = [s for s in TC_NAMES if s not in by]
        if missing:
            raise Refused("trace_cost io-threads %d P=%d has no %s runs to compare" % (key + (", ".join(missing),)))
        n, p = key
        us = {s: field_runs(by[s], "main_us_per_request") for s in TC_NAMES}
        if not all(all(v) for v in us.values()):
            raise Refused("trace_cost io-threads %d P=%d: main's CPU did not move in a run" % key)
        med = {s: statistics.median(v) for s, v in us.items()}
        rps = {s: median_of(by[s]) for s in TC_NAMES}
        ln = by["none"][0]
        every = [x for s in TC_NAMES for x in by[s]]
        share = others_share(every)
        busy = ("; other processes used %.0f%% of the %s cores during the runs (median; %s)" % (
            100 * statistics.median(share), ln["cores"], runs_spread([100 * x for x in share], "%.0f", "%"))
            if share else "")
        served = "; served %s / %s / %s req/s (no trace points / off / on) of %s offered" % (
            fmt_rps(rps["none"]), fmt_rps(rps["off"]), fmt_rps(rps["on"]), fmt_rps(ln["rate"]))
        rounds = sorted({x["round"] for x in every})
        paired = [statistics.median(x["main_us_per_request"] for x in by[a] if x["round"] == r) /
                  statistics.median(x["main_us_per_request"] for x in by[b] if x["round"] == r)
                  for a, b in (("off", "none"),) for r in rounds
                  if any(x["round"] == r for x in by[a]) and any(x["round"] == r for x in by[b])]
        order = " ".join("".join({"none": "n", "off": "o", "on": "r"}[x["setting"]] for x in lines
                                 if x.get("kind") == "run" and (x["io_threads"], x["pipeline"]) == key
                                 and x["round"] == r) for r in rounds)
        cfg = ["GET", "3 B values", "P=%d%s" % (p, " (batches of %d at the rate)" % p if p > 1 else ""),
               "%d connections" % ln["clients"], "%d keys prefilled" % ln["keys"],
               "io-threads %d%s" % (n, " with --io-threads-always-active yes" if n > 1 else ""),
               "open loop, %s arrivals at %s req/s (the same for the three servers)" % (ln["arrival"],
                                                                                      fmt_rps(ln["rate"])),
               "no trace points: %s (make VARIANT=notrace, -DSOLOIST_NO_TRACE)" % ln.get("notrace_binary"),
               "off: the default build, never recording; on: the default build, TRACE START before each run "
               "and TRACE STOP after",
               "trace-buffer-events %d on all three" % ln["ring_events"],
               "%gs warm-up + %gs per run, counters diffed over both" % (ln["warmup_s"], ln["duration_s"]),
               "%d rounds after a warm-up round not kept, the order turned each round (n none, o off, r on: %s), "
               "median" % (len(rounds), order),
               "main thread: %s" % ln.get("main_clock", "INFO"), sb_cfg(placement_cfg(ln, base["cores"]))]
        cell = "GET 3 B, io-threads %d, P=%d" % key
        # Off against no trace points: the ratio, each side's runs, and
        # whether they separate; "within noise" only when they do not.
        sep = verdict(us["off"], us["none"], ("off", "no trace points"), lower=True)
        word = ("within noise" if sep == "run ranges overlap" else
                "one run a side, noise unknown" if sep == ONE_RUN else "the runs separate")
        r_off = med["off"] / med["none"]
        fig = ("off / no trace points **%s** (off %.2f µs, %s; no trace points %.2f µs, %s; %s) — %s; "
               "round by round off / no trace points %s" % (
                   fmt_ratio(r_off), med["off"], runs_spread(us["off"], "%.2f", "µs"), med["none"],
                   runs_spread(us["none"], "%.2f", "µs"), sep, word,
                   lo_hi(paired, "%.2f") if len(paired) > 1 else ONE_RUN))
        work = {x: field_runs(by[x], "main_work_us_per_request") for x in ("off", "none")}
        if n > 1 and all(len(v) == len(by[x]) for x, v in work.items()):
            # Forced on, main turns its loop while results are owed: that
            # spin is CPU the scheduler gives or takes, so the work without
            # it is shown too.
            fig += "; without main's idle spin off %.2f µs (%s) and no trace points %.2f µs (%s), %s" % (
                statistics.median(work["off"]), runs_spread(work["off"], "%.2f", "µs"),
                statistics.median(work["none"]), runs_spread(work["none"], "%.2f", "µs"),
                verdict(work["off"], work["none"], ("off", "no trace points"), lower=True))
        fig += served + busy
        rows.append(Row("F4.%d" % (70 + i), "trace points, recording off: main thread's CPU per request, %s: "
                        "default build / build without trace points" % cell, fig, dict(base, config=cfg), cmd, src,
                        extra={"summary": TC_TABLE, "cells": [
                            cell, fmt_rps(ln["rate"])] + ["%.2f" % med[s] for s in TC_NAMES] + [
                            fmt_ratio(r_off), fmt_ratio(med["on"] / med["off"]),
                            "%.0f%%" % (100 * statistics.median(share)) if share else "—"]}))
        # On against off: the cost per request, and what was recorded.
        on = by["on"]
        sep = verdict(us["on"], us["off"], ("on", "off"), lower=True)
        ev = field_runs(on, "events_per_request")
        dropped = sum(x.get("trace_dropped") or 0 for x in on) + sum(x.get("trace_no_ring") or 0 for x in on)
        word = ("within noise: these runs cannot tell the cost from zero" if sep == "run ranges overlap" else
                "one run a side, noise unknown" if sep == ONE_RUN else "the runs separate")
        fig = ("on / off **%s**: %+.2f µs per request on main (on %.2f µs, %s; off %.2f µs, %s; %s) — %s; "
               "%.1f events recorded per request, all threads (%s), %s" % (
                   fmt_ratio(med["on"] / med["off"]), med["on"] - med["off"], med["on"],
                   runs_spread(us["on"], "%.2f", "µs"), med["off"], runs_spread(us["off"], "%.2f", "µs"), sep, word,
                   statistics.median(ev) if ev else 0, runs_spread(ev, "%.1f"),
                   "none dropped" if not dropped else "%d DROPPED (a full ring): the cost mixes records and drops"
                   % dropped)) + served + busy
        rows.append(Row("F4.%d" % (74 + i), "trace recording on: main thread's CPU per request, %s: on / off"
                        % cell, fig, dict(base, config=cfg), cmd, src))
    return rows
