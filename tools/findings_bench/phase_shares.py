"""findings_bench/phase_shares.py — the phase_shares benchmark's part of FINDINGS.md.

Tooling for steps 0 and 1. Owns rows F0.20-F0.21 (the main thread's time
by phase) and F1.1-F1.8 (Amdahl's ceiling from the serial share), and the
plot phase_shares, made from bench/phase_shares.py's raw lines; the
helpers every benchmark shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import (
    a_label, base_conditions, field_runs, lo_hi, placement_cfg, plot, Refused, Row, runs_spread, serving_note)


PHASE_COLS = ["poll_cpu", "read", "exec", "write", "other"]
PHASE_TABLE = ("Main-thread time by phase (soloist, INFO threads; shares of busy time)",
               ["depth", "poll CPU", "read", "exec", "write", "other", "s", "poll wait (of all)"])


def h_phase_shares(run, lines, bench):
    """F0.20 (P=1), F0.21 (P=16): shares of the main thread's busy time,
    poll CPU included, and the serial share s = (exec + other) / busy as
    bench/phase_shares.py computed it per run (medians of the runs)."""
    base = base_conditions(run)
    rows = []
    for i, p in enumerate((1, 16)):
        runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("pipeline") == p]
        if not runs:
            continue
        if len({ln.get("run_id") for ln in runs}) != 1:
            raise Refused("phase_shares P=%d mixes runs" % p)
        if any(ln.get("serial_share") is None for ln in runs):
            raise Refused("phase_shares P=%d: these results do not split poll into CPU and wait "
                          "(a server older than main_thread_poll_cpu_us); rerun "
                          "`make findings BENCH=phase_shares`" % p)

        def med(key, sub=None):
            vals = [(ln[key] or {}).get(sub, 0) if sub else ln[key] for ln in runs
                    if ln.get(key) is not None]
            return statistics.median(vals) if vals else None

        share = {k: med("share_of_busy", k) for k in PHASE_COLS}
        s = med("serial_share")
        fig = ("of busy time: " + ", ".join("%s **%.0f%%**" % ("poll CPU" if k == "poll_cpu" else k, 100 * v)
                                            for k, v in share.items())
               + "; serial share s = (exec + other) / busy = **%.2f** (%s)" % (
                   s, runs_spread(field_runs(runs, "serial_share"), "%.2f"))
               + "; poll wait (idle) %.0f%% of all time" % (100 * med("share_of_total", "poll_wait"))
               + "; busy %.2f µs/request" % med("busy_us_per_request"))
        turns = med("turns_per_request")
        if turns is not None:
            # How often the clock was read is the run's own record: a run
            # made before sampling read it on every turn, and says nothing.
            every = runs[0].get("poll_cpu_sample")
            fig += "; %.3f loop turns/request" % turns + (
                " (the thread-CPU clock read twice on 1 turn in %d)" % every if every else "")
        ratio = med("busy_wall_over_thread_cpu")
        if ratio is not None:
            fig += "; busy wall / main-thread CPU %.2f" % ratio
        ln = runs[0]
        cfg = ["GET", "P=%d" % p, "50 clients", "3 B values", "keyspace -r %s" % ln.get("keyspace"),
               "%d runs, median" % len(runs), "io-threads 1", placement_cfg(ln, base["cores"]),
               "busy = poll CPU + read + exec + write + other", "s = (exec + other) / busy"]
        rows.append(Row("F0.%d" % (20 + i),
                        "where %s's main thread spends its busy time (INFO main_thread_*_us), GET P=%d"
                        % (a_label(runs), p), fig, dict(base, config=cfg),
                        "make findings BENCH=phase_shares", run.rel(bench),
                        serving_note(ln, base["cores"]),
                        extra={"summary": PHASE_TABLE,
                               "cells": ["P=%d" % p] + ["%.0f%%" % (100 * share[k]) for k in PHASE_COLS]
                               + ["**%.2f**" % s, "%.0f%%" % (100 * med("share_of_total", "poll_wait"))]}))
        rows += amdahl_rows(run, bench, p, s, "F0.%d" % (20 + i), 1 + 4 * i, cfg,
                            field_runs(runs, "serial_share"))
    return rows


AMDAHL_THREADS = (2, 4, 8, 16)


def amdahl(s, n):
    """Amdahl's bound on the speed-up with n threads when a share s of the
    work stays serial: 1 / (s + (1 - s) / n)."""
    return 1.0 / (s + (1.0 - s) / n)


def amdahl_rows(run, bench, p, s, source_row, first, cfg, s_runs=()):
    """F1.1-F1.4 (P=1) and F1.5-F1.8 (P=16): the ceiling on the speed-up
    I/O threads can give, from the serial share the phase_shares row
    `source_row` measured; no measurement of their own. s_runs, the runs'
    serial shares, give the bound's spread."""
    base = base_conditions(run)
    rows = []
    for k, n in enumerate(AMDAHL_THREADS):
        fig = ("speed-up at most **%.2f×** with %d threads (1 / (s + (1 − s) / %d), s = %.2f from %s"
               % (amdahl(s, n), n, n, s, source_row))
        if len(s_runs) > 1:
            # The bound over the runs' own s (a larger s, a lower bound).
            fig += "; the runs' s %s give %s" % (lo_hi(s_runs, "%.2f"),
                                                 lo_hi([amdahl(x, n) for x in s_runs], "%.2f", "×"))
        fig += ")"
        rows.append(Row("F1.%d" % (first + k),
                        "Amdahl ceiling for GET P=%d with %d threads, from the measured serial share" % (p, n),
                        fig, dict(base, config=cfg + ["computed from row %s, no measurement of its own" % source_row]),
                        "make findings BENCH=phase_shares", run.rel(bench),
                        "a bound: it assumes the parallel part scales perfectly and costs nothing to hand over"))
    return rows


# Colours for the phase clock's phases: what stays on the main thread in
# warm colours, what I/O threads may take in blues, waiting in grey.
PHASE_STYLE = [("exec", "execute", "#a23b2a"), ("other", "other: sleep hooks, closing clients", "#d98b3a"),
               ("poll_cpu", "poll: CPU in epoll_wait", "#7a4f9a"), ("read", "read + parse", "#3b5b92"),
               ("write", "write", "#6fa3c7"), ("poll_wait", "poll: asleep", "#d5d5d5"),
               ("poll", "poll: CPU and asleep", "#d5d5d5")]


def phase_parts(phase_us):
    """A run's phase times with the poll phase split once: when the server
    reports parts of the poll (poll_cpu, poll_wait) beside its total, the
    total is dropped, or what the parts leave of it becomes poll_wait."""
    d = {k: float(v) for k, v in phase_us.items()}
    parts = [k for k in d if k.startswith("poll_")]
    if "poll" in d and parts:
        total = d.pop("poll")
        if "poll_wait" not in d:
            d["poll_wait"] = max(0.0, total - sum(d[k] for k in parts))
    return d


@plot("phase_shares", "phase_shares", "Where the main thread's time goes: GET, 50 clients")
def p_phase_shares(lines):
    runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("phase_us")]
    depths = sorted({ln["pipeline"] for ln in runs})
    shares = {}
    for p in depths:
        per = [phase_parts(ln["phase_us"]) for ln in runs if ln["pipeline"] == p]
        keys = sorted({k for d in per for k in d})
        shares[p] = {k: statistics.median(100.0 * d.get(k, 0) / (sum(d.values()) or 1) for d in per)
                     for k in keys}
    known = [k for k, _, _ in PHASE_STYLE]
    keys = sorted({k for s in shares.values() for k in s}, key=lambda k: (known.index(k) if k in known else 3, k))
    rows = [["P=%d" % p] + [round(shares[p].get(k, 0.0), 2) for k in keys] for p in depths]
    style = {k: (label, colour) for k, label, colour in PHASE_STYLE}
    series = []
    for i, k in enumerate(keys):
        label, colour = style.get(k, (k, "#888888"))
        series.append("%s using %d%s title '%s' lc rgb '%s'" % (
            "DATA" if i == 0 else "''", i + 2, ":xtic(1)" if i == 0 else "", label, colour))
    body = ("set style data histograms; set style histogram rowstacked; set style fill solid 0.9 border rgb '#ffffff'; "
            "set boxwidth 0.55; set yrange [0:100]; set ylabel 'share of main-thread time (%, median of runs)'; "
            "set key outside right center vertical reverse Left; set grid y; set xlabel 'pipeline depth'; "
            "plot " + ", ".join(series))
    return ["depth"] + keys, rows, body
