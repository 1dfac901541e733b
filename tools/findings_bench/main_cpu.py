"""findings_bench/main_cpu.py — the main_cpu benchmark's part of FINDINGS.md.

Tooling for steps 4 and 5. Owns rows F4.1-F4.8, F4.17 and F4.18 (the main
thread's CPU per request by io-threads), F4.9-F4.16 (those costs beside
Amdahl's bound from phase_shares: the one row that reads two benchmarks,
CROSS), and the plot main_cpu_per_request, made from bench/main_cpu.py's
raw lines; the helpers every benchmark shares are in
tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import (
    base_conditions, cell_name, field_runs, fmt_ratio, fmt_rps, lo_hi, median_of, one_run_of, placement_cfg, plot,
    Refused, Row, runs_spread, sb_cfg, skipped_why, SVR_ORDER, verdict)
from findings_bench.phase_shares import amdahl


MC_THREADS = (1, 2, 4)
MC_TABLE = ("Main-thread CPU per request with I/O threads forced on (soloist, open loop at one rate per "
            "cell; medians)", ["cell", "rate req/s", "io-threads 1 µs", "io-threads 2 µs", "io-threads 4 µs",
                               "process µs (1 / 2 / 4)", "ceiling req/s (1 / 2 / 4)"])


def main_cpu_cells(lines):
    """{cell: {io_threads: [run lines]}} of bench/main_cpu.py."""
    cells = {}
    for ln in lines:
        if ln.get("kind") == "run":
            key = (ln["test"], ln["value_size"], ln["pipeline"])
            cells.setdefault(key, {}).setdefault(ln["io_threads"], []).append(ln)
    return cells


# Long: each cell's row also feeds the target row F4.17, which reads its medians.
def h_main_cpu(run, lines, bench):
    """F4.1-F4.8 (per cell), F4.17 (the target), F4.18 (the clocks)."""
    base = base_conditions(run)
    one_run_of(lines, "main_cpu")
    cells = main_cpu_cells(lines)
    cmd, src = "make findings BENCH=main_cpu", run.rel(bench)
    why = "; ".join(skipped_why(lines, has="io_threads"))
    rows, p1 = [], {}
    for i, key in enumerate(SVR_ORDER):
        if key not in cells:
            continue
        by = cells[key]
        if 1 not in by:
            raise Refused("main_cpu %s has no io-threads 1 runs to compare with" % cell_name(key))
        ln = by[1][0]
        med = {n: {f: median_of(side, f) for f in ("main_us_per_request", "process_us_per_request", "rps")}
               for n, side in by.items()}
        if not all(m["main_us_per_request"] for m in med.values()):
            raise Refused("main_cpu %s: the main thread's CPU did not move in a run; no cost per request"
                          % cell_name(key))
        parts = []
        for n in MC_THREADS:
            if n not in med:
                continue
            m = med[n]
            mine = field_runs(by[n], "main_us_per_request")
            text = "io-threads %d **%.2f µs** (%s; process %.2f; ceiling 1/main %s req/s" % (
                n, m["main_us_per_request"], runs_spread(mine, "%.2f"), m["process_us_per_request"],
                fmt_rps(1e6 / m["main_us_per_request"]))
            if n > 1:
                r = m["main_us_per_request"] / med[1]["main_us_per_request"]
                sep = verdict(mine, field_runs(by[1], "main_us_per_request"),
                              ("io-threads %d" % n, "io-threads 1"), lower=True)
                text += "; %s of io-threads 1, %s" % (fmt_ratio(r), sep)
                if all(x.get("main_work_us_per_request") is not None for x in by[n]):
                    # main's CPU less its idle spin (INFO io_threads_main_spin_us)
                    work = field_runs(by[n], "main_work_us_per_request")
                    w = median_of(by[n], "main_work_us_per_request")
                    text += "; without main's idle spin %.2f µs (%s), %s of io-threads 1, %s" % (
                        w, runs_spread(work, "%.2f"), fmt_ratio(w / med[1]["main_us_per_request"]),
                        verdict(work, field_runs(by[1], "main_us_per_request"),
                                ("io-threads %d without the spin" % n, "io-threads 1"), lower=True))
                if key[2] == 1:
                    p1.setdefault(n, []).append((r, key, sep))
                tr = median_of(by[n], "threaded_reads_per_request") if all(
                    x.get("threaded_reads_per_request") is not None for x in by[n]) else None
                if tr is not None:
                    text += "; %.2f reads/request done by I/O threads" % tr
            parts.append(text + ")")
        missing = [n for n in MC_THREADS if n not in by]
        fig = "; ".join(parts)
        if missing:
            fig += "; io-threads %s **not measured**: %s" % (", ".join(map(str, missing)), why or "no runs")
        errs = sum(x.get("errors", 0) for side in by.values() for x in side)
        if errs:
            fig += "; %d ERRORS in the runs" % errs
        order = "".join(str(x["io_threads"]) for x in lines if x.get("kind") == "run"
                        and (x["test"], x["value_size"], x["pipeline"]) == key)
        cfg = [key[0], "P=%d%s" % (key[2], " (batches of %d at the rate)" % key[2] if key[2] > 1 else ""),
               "%d connections" % ln["clients"], "%d B values" % key[1], "%d keys prefilled" % ln["keys"],
               "open loop, %s arrivals at %s req/s (the same for every setting)" % (ln["arrival"], fmt_rps(ln["rate"])),
               "achieved %s req/s at io-threads 1" % fmt_rps(med[1]["rps"]),
               "io-threads 2 and 4 with --io-threads-always-active yes",
               "%gs warm-up + %gs per run, counters diffed over both" % (ln["warmup_s"], ln["duration_s"]),
               "%d runs each, alternated (order of io-threads %s), median" % (len(by[1]), order),
               "main thread: %s" % ln.get("main_clock", "INFO"), sb_cfg(placement_cfg(ln, base["cores"]))]
        rows.append(Row("F4.%d" % (1 + i), "main thread's CPU per request, %s, fixed open-loop rate: "
                        "io-threads 1, 2, 4 (offload forced on)" % cell_name(key), fig,
                        dict(base, config=cfg), cmd, src,
                        "the ceiling 1 / (main-thread CPU per request) holds however many cores there are",
                        extra={"summary": MC_TABLE, "main_cpu": {n: m["main_us_per_request"] for n, m in med.items()},
                               "cells": [cell_name(key), fmt_rps(ln["rate"])] + [
                                   "%.2f" % med[n]["main_us_per_request"] if n in med else "—" for n in MC_THREADS]
                               + [" / ".join("%.2f" % med[n]["process_us_per_request"] if n in med else "—"
                                             for n in MC_THREADS),
                                  " / ".join(fmt_rps(1e6 / med[n]["main_us_per_request"]) if n in med else "—"
                                             for n in MC_THREADS)]}))
    if rows:
        cfg = ["GET and SET", "3 and 512 B values", "P=1", "open loop at one rate per cell",
               "io-threads 2 and 4 with offload forced on", "medians of alternated runs"]
        if p1:
            parts = []
            met = []
            for n in sorted(p1):
                worst, wk, _ = max(p1[n])
                ok = worst <= 1 / 3 and len(p1[n]) == 4
                met.append(ok)
                parts.append("io-threads %d: %s (worst %s, %s)" % (
                    n, ", ".join("%s %s (%s)" % (cell_name(k), fmt_ratio(r), sep) for r, k, sep in p1[n]),
                    fmt_ratio(worst), cell_name(wk)))
            fig = "; ".join(parts) + (" — target met" if any(met) else " — target not met")
        else:
            fig = "**not measured**: %s" % (why or "no io-threads 2 or 4 runs")
        rows.append(Row("F4.17", "Target (benchmark goal): main-thread CPU per request at P=1 with offload "
                        "on ≤ 1/3 of io-threads 1", fig, dict(base, config=cfg), cmd, src))
        rows.append(clock_row(base, lines, cmd, src))
    return rows


def clock_row(base, lines, cmd, src):
    """F4.18: the three clocks of the main thread's CPU, per request."""
    runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("clocks_main_us_per_request")]
    clocks = [ln["clocks_main_us_per_request"] for ln in runs]
    ref = [c for c in clocks if c.get("info_main_s")]

    def spread(k):
        d = [abs(c[k] / c["info_main_s"] - 1) for c in ref if c.get(k) is not None]
        return (statistics.median(d), max(d)) if d else (None, None)
    sched, ticks = spread("schedstat_main_s"), spread("ticks_main_s")
    step = statistics.median(1e4 / ln["server_commands"] for ln in runs if ln.get("server_commands"))
    fig = ("against INFO used_cpu_*_main_thread (getrusage RUSAGE_THREAD, µs): /proc/PID/task/PID/schedstat "
           "(ns) differs by median %.2f%%, at most %.2f%%; /proc/PID/task/PID/stat utime+stime (10 ms ticks) by "
           "median **%.1f%%**, at most %.1f%% — one tick is %.3f µs/request in a median run, so the figures use "
           "INFO" % (100 * (sched[0] or 0), 100 * (sched[1] or 0), 100 * (ticks[0] or 0), 100 * (ticks[1] or 0), step))
    cfg = ["every main_cpu run", "%d runs" % len(runs), "per request: clock difference / commands executed",
           "INFO and schedstat both read the scheduler's run time; stat's ticks are sampled"]
    return Row("F4.18", "the main thread's CPU, three clocks: which one the rows use and why", fig,
               dict(base, config=cfg), cmd, src)


def x_main_cpu_amdahl(chosen):
    """F4.9-F4.16: the speed-up each measured main-thread cost allows
    (io-threads 1's cost over io-threads N's) beside Amdahl's bound from
    step 0's serial share s (phase_shares: F0.20 at P=1, F0.21 at P=16).
    Two benchmarks, two runs: labelled, not a ratio of one run's sides."""
    mc, ps = chosen.get("main_cpu"), chosen.get("phase_shares")
    if mc is None or ps is None:
        return []
    lines = mc.lines["main_cpu"]
    s = {}
    for p in (1, 16):
        vals = [ln["serial_share"] for ln in ps.lines["phase_shares"]
                if ln.get("kind") == "run" and ln.get("pipeline") == p and ln.get("serial_share") is not None]
        if vals:
            s[p] = statistics.median(vals)
    base = base_conditions(mc)
    cells = main_cpu_cells(lines)
    why = "; ".join(skipped_why(lines, has="io_threads"))
    rows = []
    for i, key in enumerate(SVR_ORDER):
        p = key[2]
        if key not in cells or p not in s or 1 not in cells[key]:
            continue
        by = cells[key]
        m1 = median_of(by[1], "main_us_per_request")
        src_row = "F0.20" if p == 1 else "F0.21"
        parts = []
        for n in MC_THREADS[1:]:
            bound = amdahl(s[p], n)
            if n in by:
                mn = median_of(by[n], "main_us_per_request")
                # Each run's ceiling, 1 / its main-thread CPU per request.
                cn = [1e6 / x for x in field_runs(by[n], "main_us_per_request")]
                c1 = [1e6 / x for x in field_runs(by[1], "main_us_per_request")]
                parts.append("io-threads %d: main-thread ceiling %s req/s = **%s** io-threads 1's "
                             "(%s; ceilings by run %s vs %s req/s, %s); Amdahl ≤ %s"
                             % (n, fmt_rps(1e6 / mn), fmt_ratio(m1 / mn), fmt_rps(1e6 / m1),
                                lo_hi(cn, fmt_rps), lo_hi(c1, fmt_rps),
                                verdict(cn, c1, ("io-threads %d" % n, "io-threads 1")), fmt_ratio(bound)))
            else:
                parts.append("io-threads %d: Amdahl ≤ %s (%s req/s from io-threads 1's ceiling %s); "
                             "main-thread cost **not measured**" % (n, fmt_ratio(bound), fmt_rps(bound * 1e6 / m1),
                                                                    fmt_rps(1e6 / m1)))
        fig = "; ".join(parts) + "; s = %.2f, so no thread count passes %s" % (s[p], fmt_ratio(1 / s[p]))
        if len(by) < len(MC_THREADS) and why:
            fig += " (%s)" % why
        cfg = [cell_name(key), "main-thread CPU per request from %s" % mc.rel("main_cpu"),
               "s from %s (%s, GET 3 B P=%d, run %s)" % (ps.rel("phase_shares"), src_row, p,
                                                         ps.prov.get("date", "?")),
               "Amdahl: 1 / (s + (1 − s) / N)", "two runs: a comparison of bounds, not a measured ratio"]
        rows.append(Row("F4.%d" % (9 + i), "the speed-up the main thread's measured cost allows against "
                        "Amdahl's bound from s, %s" % cell_name(key), fig, dict(base, config=cfg),
                        "make findings BENCH=main_cpu,phase_shares", mc.rel("main_cpu"),
                        "s was measured for GET 3 B values; in the other cells it is an estimate"))
    return rows


@plot("main_cpu_per_request", "main_cpu",
      "Main thread's CPU per request by io-threads (offload forced on), open loop at one rate per cell")
def p_main_cpu_per_request(lines):
    cells = main_cpu_cells(lines)
    rows = [['"%s"' % cell_name(key)] + [round(median_of(cells[key][n], "main_us_per_request"), 3)
                                         if n in cells[key] else "NaN" for n in MC_THREADS]
            for key in SVR_ORDER if key in cells]
    body = ("set datafile missing 'NaN'; set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set yrange [0:*]; "
            "set ylabel 'main-thread CPU µs per request (median of runs)'; set grid y; "
            "set key outside right top vertical; set xtics rotate by -30; "
            "plot DATA using 2:xtic(1) title 'io-threads 1' lc rgb '#a23b2a', "
            "'' using 3 title 'io-threads 2' lc rgb '#6fa3c7', '' using 4 title 'io-threads 4' lc rgb '#3b5b92'")
    return ["cell"] + ["io_threads_%d_us" % n for n in MC_THREADS], rows, body
