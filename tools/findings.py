#!/usr/bin/env python3
"""findings.py — generates FINDINGS.md from the raw benchmark results.

Tooling for every step (step 0 wrote it). Owns FINDINGS.md: nobody types
that file; this program reads bench/results/*/provenance.json and the
NAME.jsonl files beside it (written by bench/run.py) and writes one row
per finding: ID, claim, figure, conditions, and the command that
reproduces it. Python 3 standard library only; single-threaded.

Rules it enforces (a refusal stops it without writing):
  - a row must carry its conditions: CPU, cores, kernel, compiler,
    commit and the benchmark's config; a row missing any is refused;
  - a comparison (ratio) is computed here from the per-run lines of both
    sides, and both sides must come from the same run (one run_id);
    a ratio whose sides came from different runs is refused;
  - a figure says its runs' spread: the range (or the list) of the runs
    it is the median of, and a comparison whether the two sides' runs
    separate ("<side> faster in every run", "<side> lower in every run"
    for times and costs, or "run ranges overlap"); a figure from a single
    run says "(one run)", so a chapter's reading of a row can be checked;
  - rows sort stably by ID (F0.2 before F0.10) and the output depends
    only on the inputs (no generation timestamp), so regenerating from
    the same results gives the same file.

Which results: for each benchmark, the newest results directory holding
it, preferring full runs to QUICK=1 development runs (--include-quick
lets those count; --run DIR uses one directory only).

A chapter's reading of a row may hold across every stored run of its
benchmark, not only the one FINDINGS.md used (tools/findings_refs.py,
"in every stored run"): stored_runs() lists those runs and rows_of_run()
makes the rows one run's raw lines give, as FINDINGS.md would print them.

Later steps add a handler to HANDLERS, or print generic rows from their
benchmark as JSON lines {"finding": true, "id": "F2.1", "claim": ...,
"figure": ..., "config": {...}} and need no change here.

  tools/findings.py [--results bench/results] [--out FINDINGS.md]
                    [--run DIR] [--include-quick] [--plots] [--check]

No Valkey anchor (tooling).
"""

import argparse
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIRED = ("cpu", "cores", "kernel", "compiler", "commit", "config")
SERVING_NOTE = ("redis-benchmark and the server share the %s cores, so P=1 is "
                "client-bound")


class Refused(Exception):
    """A row (or a comparison) that may not become a finding."""


class Run:
    """One results directory: its provenance and its raw JSON lines."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path.rstrip("/"))
        with open(os.path.join(path, "provenance.json")) as f:
            self.prov = json.load(f)
        self.lines = {}
        for fn in sorted(glob.glob(os.path.join(path, "*.jsonl"))):
            bench = os.path.basename(fn)[:-len(".jsonl")]
            rows = []
            with open(fn) as f:
                for n, line in enumerate(f, 1):
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        rows.append(json.loads(line))
                    except ValueError:
                        raise Refused("%s:%d is not JSON" % (fn, n))
            if rows:
                self.lines[bench] = rows

    @property
    def quick(self):
        return bool(self.prov.get("quick"))

    def rel(self, bench):
        return os.path.relpath(os.path.join(self.path, bench + ".jsonl"), ROOT)


def load_runs(results):
    runs = []
    for d in sorted(glob.glob(os.path.join(results, "*", "provenance.json"))):
        runs.append(Run(os.path.dirname(d)))
    return runs


def select(runs, include_quick=False, only=None):
    """{bench: Run}: for each benchmark the newest run that holds it; a
    QUICK=1 run only where no full run of that benchmark exists."""
    if only:
        runs = [r for r in runs if os.path.abspath(r.path) == os.path.abspath(only)
                or r.name == os.path.basename(only.rstrip("/"))]
        if not runs:
            raise Refused("no results directory %s" % only)
        include_quick = True
    chosen = {}
    for bench in sorted({b for r in runs for b in r.lines}):
        cands = [r for r in runs if bench in r.lines]
        full = [r for r in cands if not r.quick]
        pool = cands if include_quick or not full else full
        chosen[bench] = max(pool, key=lambda r: (r.prov.get("date", ""), r.name))
    return chosen


# ------------------------------------------------------------------ rows

class Row:
    def __init__(self, rid, claim, figure, conditions, command, source, note="", extra=None):
        self.id, self.claim, self.figure = rid, claim, figure
        self.conditions, self.command, self.source, self.note = conditions, command, source, note
        self.extra = extra or {}  # structured figures for summary tables

    def sort_key(self):
        return id_key(self.id)

    def validate(self):
        if not re.fullmatch(r"F\d+\.\d+[a-z]?", self.id or ""):
            raise Refused("row id %r is not of the form F<step>.<n>" % self.id)
        for k in REQUIRED:
            v = self.conditions.get(k)
            if v in (None, "", {}, [], "unknown"):
                raise Refused("row %s (%s) has no %s in its conditions" % (self.id, self.claim, k))
        if not self.figure:
            raise Refused("row %s has no figure" % self.id)
        if not self.command:
            raise Refused("row %s has no reproducing command" % self.id)


def id_key(rid):
    m = re.fullmatch(r"F(\d+)\.(\d+)([a-z]?)", rid or "")
    return (int(m.group(1)), int(m.group(2)), m.group(3)) if m else (1 << 30, 0, rid)


def base_conditions(run):
    """Machine conditions every row carries, from the run's provenance."""
    p = run.prov
    git = p.get("git") or {}
    commit = git.get("commit")
    if commit:
        commit += " (src dirty)" if git.get("src_dirty") else ""
        commit += " (tree dirty)" if git.get("dirty") and not git.get("src_dirty") else ""
    solo = p.get("soloist") or {}
    c = {"cpu": p.get("cpu_model"), "cores": p.get("cores"), "kernel": p.get("kernel"),
         "compiler": p.get("compiler"), "commit": commit, "date": p.get("date"),
         "host": p.get("host"), "quick": p.get("quick"),
         "load": (p.get("loadavg_start") or [None])[0]}
    if solo:
        c["server"] = "%s%s, io-threads %s, %s" % (
            "soloist" if not solo.get("standin") else "STAND-IN redis-server as A",
            " " + solo["version"] if solo.get("version") else "",
            solo.get("io_threads", "1"), solo.get("flags", ""))
    if p.get("peer"):
        v = p["peer"].get("version", "")
        m = re.search(r"v=(\S+)", v)
        c["peer"] = "redis-server %s" % m.group(1) if m else v
    return c


def conditions_text(c):
    parts = ["CPU %s" % c["cpu"], "%s cores" % c["cores"], "kernel %s" % c["kernel"],
             c["compiler"], "commit %s" % c["commit"]]
    if c.get("server"):
        parts.append(c["server"])
    if c.get("peer"):
        parts.append("peer " + c["peer"])
    cfg = c["config"]
    parts.append("config: " + (", ".join("%s" % v for v in cfg) if isinstance(cfg, list) else str(cfg)))
    if c.get("quick"):
        parts.append("QUICK=1 development run")
    if c.get("load") is not None:
        parts.append("load average %s at start" % c["load"])
    parts.append("run %s" % c.get("date", "?"))
    return "; ".join(str(x) for x in parts)


def fmt_rps(x):
    return "{:,.0f}".format(x)


def fmt_ratio(x):
    return "%.2f×" % x


def placement_cfg(line, cores):
    if line.get("placement") == "pinned":
        return "server pinned to cpu0, redis-benchmark to cpu1"
    return "client and server share %s cores" % (line.get("cores") or cores)


def serving_note(line, cores):
    if line.get("placement") == "pinned":
        return "pinned: server cpu0, redis-benchmark cpu1"
    return SERVING_NOTE % (line.get("cores") or cores)


def side_by_side(lines, keys):
    """Group kind=run lines by the cell `keys`, per server; refuse a cell
    whose sides came from different runs. -> {cell: {server: [lines]}}"""
    cells = {}
    for ln in lines:
        if ln.get("kind") != "run":
            continue
        cell = tuple(ln.get(k) for k in keys)
        cells.setdefault(cell, {}).setdefault(ln.get("server"), []).append(ln)
    for cell, sides in cells.items():
        ids = {ln.get("run_id") for side in sides.values() for ln in side}
        if len(ids) != 1 or None in ids:
            raise Refused("cell %s: its runs come from different runs %s; a ratio must be "
                          "measured in one run" % (dict(zip(keys, cell)), sorted(map(str, ids))))
        if set(sides) != {"soloist", "redis"}:
            raise Refused("cell %s has only %s; a ratio needs both sides from the same run"
                          % (dict(zip(keys, cell)), sorted(sides)))
    return cells


def overlap(a, b):
    """Whether the two sides' runs separate: the plainest honest statement
    of noise when there are only a handful of runs per side."""
    amin, amax = min(x["rps"] for x in a), max(x["rps"] for x in a)
    bmin, bmax = min(x["rps"] for x in b), max(x["rps"] for x in b)
    if amin > bmax:
        return "A faster in every run"
    if amax < bmin:
        return "B faster in every run"
    return "run ranges overlap"


def median_of(side, field="rps"):
    return statistics.median(ln[field] for ln in side)


# The runs' spread, so that a reading of a row ("faster in every run", "even
# within the runs' spread") can be checked against it: a figure that comes
# from several runs says their range, and a comparison says whether the two
# sides' runs separate; a figure from a single run says "(one run)".

ONE_RUN = "one run"


def lo_hi(vals, fmt="%.1f", unit=""):
    """'lowest–highest unit' of the runs in fmt ('X unit each' when they
    print alike)."""
    f = fmt if callable(fmt) else (lambda x: fmt % x)
    lo, hi = f(min(vals)), f(max(vals))
    unit = ("" if unit in ("×", "%") else " ") + unit if unit else ""
    return "%s%s each" % (lo, unit) if lo == hi else "%s–%s%s" % (lo, hi, unit)


def runs_spread(vals, fmt="%.1f", unit=""):
    """'runs lowest–highest unit' of a figure's runs, or 'one run'."""
    vals = [v for v in vals if v is not None]
    if len(vals) < 2:
        return ONE_RUN
    return "runs " + lo_hi(vals, fmt, unit)


def verdict(a, b, names, lower=False):
    """Whether two sides' runs separate: '<side> faster in every run' (or,
    with lower=True for times and costs, '<side> lower in every run') when
    every run of one side beats every run of the other, 'run ranges
    overlap' when they do not, 'one run' when a side has a single run."""
    if len(a) < 2 or len(b) < 2:
        return ONE_RUN
    if lower:
        return separation(a, b, names)
    if min(a) > max(b):
        return "%s faster in every run" % names[0]
    if min(b) > max(a):
        return "%s faster in every run" % names[1]
    return "run ranges overlap"


def field_runs(side, field):
    return [ln[field] for ln in side if ln.get(field) is not None]


def cpu_us_per_req(side):
    vals = [ln["server_cpu_s"] * 1e6 / ln["requests"] for ln in side
            if ln.get("server_cpu_s") is not None and ln.get("requests")]
    return statistics.median(vals) if vals else None


def a_label(side):
    really = {ln.get("server_is", "soloist") for ln in side}
    return "soloist" if really == {"soloist"} else "STAND-IN(%s)" % ",".join(sorted(really))


# ---------------------------------------------------------------- handlers

SVR_ORDER = [(t, d, p) for t in ("GET", "SET") for d in (3, 512) for p in (1, 16)]


def h_server_vs_redis(run, lines, bench):
    pinned = bench.endswith("_pinned")
    first = 31 if pinned else 1
    base = base_conditions(run)
    cells = side_by_side(lines, ("test", "value_size", "pipeline"))
    rows, ratios = [], []
    cmd = "make findings BENCH=%s" % bench
    for i, key in enumerate(SVR_ORDER):
        if key not in cells:
            continue
        test, size, p = key
        a, b = cells[key]["soloist"], cells[key]["redis"]
        ma, mb = median_of(a), median_of(b)
        ratio = ma / mb
        ratios.append((ratio, key, overlap(a, b)))
        ln = a[0]
        ca, cb = cpu_us_per_req(a), cpu_us_per_req(b)
        order = "".join("A" if x.get("server") == "soloist" else "B"
                        for x in lines if x.get("kind") == "run"
                        and (x.get("test"), x.get("value_size"), x.get("pipeline")) == key)
        fig = "%s rps %s / redis %s → **%s**" % (a_label(a), fmt_rps(ma), fmt_rps(mb), fmt_ratio(ratio))
        fig += "; %s" % overlap(a, b)
        if ca and cb:
            fig += "; server CPU %.1f vs %.1f µs/request" % (ca, cb)
        fig += " (runs: %s vs %s)" % ("/".join(fmt_rps(x["rps"]) for x in a),
                                      "/".join(fmt_rps(x["rps"]) for x in b))
        cfg = ["%s" % test, "P=%d" % p, "%d clients" % ln.get("clients", 50),
               "%d B values" % size, "keyspace -r %s (all keys loaded)" % ln.get("keyspace"),
               "%d requests per run" % ln.get("requests", 0),
               "%d runs each, alternated %s, median" % (min(len(a), len(b)), order),
               "io-threads 1", placement_cfg(ln, base["cores"])]
        rows.append(Row("F0.%d" % (first + i),
                        "%s%s, %d B values, P=%d: soloist / redis-server 7.0"
                        % ("pinned: " if pinned else "", test, size, p),
                        fig, dict(base, config=cfg), cmd, run.rel(bench),
                        serving_note(ln, base["cores"]),
                        extra={"table": "pinned" if pinned else "shared", "test": test,
                               "size": size, "pipeline": p, "soloist": ma, "redis": mb,
                               "ratio": ratio}))
    if ratios:
        met = sum(1 for r, _, _ in ratios if r >= 1.0)
        geo = math.exp(sum(math.log(r) for r, _, _ in ratios) / len(ratios))
        low, lk, lsep = min(ratios)
        # The lowest cell's runs: whether redis won it in every run.
        fig = "%d of %d cells ≥ 1.0×; geometric mean **%s**; lowest %s (%s %d B P=%d; %s)" % (
            met, len(ratios), fmt_ratio(geo), fmt_ratio(low), lk[0], lk[1], lk[2], lsep)
        ln = next(x for x in lines if x.get("kind") == "run")
        cfg = ["GET and SET", "P=1 and 16", "3 and 512 B values", "50 clients",
               "median of alternated runs per cell", placement_cfg(ln, base["cores"])]
        rows.append(Row("F0.%d" % (first + 8),
                        "%sTarget (benchmark goal): soloist ≥ 1.0× redis-server 7.0 in every cell of (a)"
                        % ("pinned: " if pinned else ""),
                        fig + (" — target met" if met == len(ratios) == 8 else " — target not met"),
                        dict(base, config=cfg), cmd, run.rel(bench), serving_note(ln, base["cores"])))
    return rows


WC_ORDER = [("none", 0)] + [(t, s) for t in ("tcp", "unix") for s in (16, 512, 16384)]


def h_write_cost(run, lines, bench):
    base = base_conditions(run)
    rows = []
    summ = {(ln.get("transport"), ln.get("size")): ln for ln in lines if ln.get("kind") == "summary"}
    for i, key in enumerate(WC_ORDER):
        ln = summ.get(key)
        if ln is None:
            continue
        if key[0] == "none":
            claim = "floor: one system call (getppid) costs"
            fig = "**%.0f ns** per call (median of %d runs" % (ln["median_wall_ns_per_call"], ln["runs"])
            if ln.get("min_wall_ns_per_call") is not None and ln.get("max_wall_ns_per_call") is not None:
                fig += "; runs %.0f–%.0f ns)" % (ln["min_wall_ns_per_call"], ln["max_wall_ns_per_call"])
            else:
                # bench/write_cost.c prints this floor's median alone, no run lines.
                fig += "; the raw results keep only the median, so no spread)"
            cfg = ["syscall(SYS_getppid) in a loop", "%d runs of %d ms" % (ln["runs"], ln["ms"])]
        else:
            what = "loopback TCP (TCP_NODELAY)" if key[0] == "tcp" else "unix socketpair"
            claim = "write() of %d B on a connected %s, reader draining, costs" % (key[1], what)
            fig = "**%.0f ns** per call wall, %.0f ns writer CPU (median of %d; runs %.0f–%.0f ns; %.2f Gbit/s)" % (
                ln["median_wall_ns_per_call"], ln.get("median_cpu_ns_per_call", 0), ln["runs"],
                ln.get("min_wall_ns_per_call", 0), ln.get("max_wall_ns_per_call", 0),
                ln.get("gbit_s", 0))
            cfg = ["%s" % what, "payload %d B" % key[1], "blocking write, one reader thread",
                   "%d runs of %d ms after a warm-up" % (ln["runs"], ln["ms"]),
                   "pinned writer cpu0 / reader cpu1" if ln.get("pinned") else "threads not pinned"]
        rows.append(Row("F0.%d" % (10 + i), claim, fig, dict(base, config=cfg),
                        "make findings BENCH=write_cost", run.rel(bench)))
    return rows


def h_pipeline_span(run, lines, bench):
    base = base_conditions(run)
    cells = side_by_side(lines, ("pipeline",))
    depths = sorted(k[0] for k in cells)
    if not depths:
        return []
    med = {s: {d: median_of(cells[(d,)][s]) for d in depths} for s in ("soloist", "redis")}
    ln = cells[(depths[0],)]["soloist"][0]
    cmd = "make findings BENCH=pipeline_span"
    cfg = ["PING (PING_MBULK)", "P=" + ",".join(map(str, depths)), "50 clients",
           "3 runs each per depth, alternated, median", "io-threads 1",
           placement_cfg(ln, base["cores"])]
    rows = []
    for i, s in enumerate(("soloist", "redis")):
        m = med[s]
        by = ", ".join("P=%d %s (%s)" % (d, fmt_rps(m[d]), runs_spread(field_runs(cells[(d,)][s], "rps"), fmt_rps))
                       for d in depths)
        if 1 in m and 256 in m:
            span = "span (P=256 / P=1) **%s**" % fmt_ratio(m[256] / m[1])
        else:
            span = "span not measured (P=1 or P=256 missing)"
        who = a_label(cells[(depths[0],)][s]) if s == "soloist" else "redis-server 7.0"
        rows.append(Row("F0.%d" % (17 + i), "pipelining span of %s: PING rps by depth" % who,
                        "%s; %s" % (span, by), dict(base, config=cfg), cmd, run.rel(bench),
                        serving_note(ln, base["cores"])))
    by = ", ".join("P=%d %s (%s)" % (d, fmt_ratio(med["soloist"][d] / med["redis"][d]),
                                     verdict(field_runs(cells[(d,)]["soloist"], "rps"),
                                             field_runs(cells[(d,)]["redis"], "rps"), ("soloist", "redis")))
                   for d in depths)
    rows.append(Row("F0.19", "PING by depth: soloist / redis-server 7.0", by,
                    dict(base, config=cfg), cmd, run.rel(bench), serving_note(ln, base["cores"])))
    return rows


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
            fig += ("; %.3f loop turns/request (the thread-CPU clock read twice on 1 turn in 16)"
                    % turns)
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


WT_SETTINGS = ("before-sleep", "immediate")
WT_LAT = ("p50", "p99", "p99.9")
WT_TABLE = ("Reply write timing: before_sleep vs immediately in the read handler (soloist, GET P=1, "
            "50 connections; medians)",
            ["loop", "setting", "rps", "p50 µs", "p99 µs", "p99.9 µs", "server CPU µs/req",
             "syscalls/req"])


def separation(a, b, names):
    """Whether two settings' runs separate on a lower-is-better figure."""
    if max(a) < min(b):
        return "%s lower in every run" % names[0]
    if max(b) < min(a):
        return "%s lower in every run" % names[1]
    return "run ranges overlap"


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


LOADGEN_CFG = ("command", "conns", "clients", "pipeline", "value_bytes", "keys", "threads",
               "seconds", "runs", "server", "pinned")


def h_loadgen_sanity(run, lines, bench):
    """bench/loadgen_sanity.sh: its summary line carries the ratio it
    computed from paired runs."""
    base = base_conditions(run)
    for ln in lines:
        if not (ln.get("summary") and ln.get("ratio") is not None):
            continue
        cfg = ["%s=%s" % (k, ln[k]) for k in LOADGEN_CFG if k in ln] or None
        fig = "ratio **%s**" % fmt_ratio(float(ln["ratio"]))
        if "soloist_bench_rps_median" in ln and "redis_benchmark_rps_median" in ln:
            fig += " (medians %s vs %s rps" % (fmt_rps(ln["soloist_bench_rps_median"]),
                                               fmt_rps(ln["redis_benchmark_rps_median"]))
            if ln.get("pair_ratios"):
                fig += "; pair ratios %s" % ", ".join("%.3f" % x for x in ln["pair_ratios"])
            by = {t: [x["rps"] for x in lines if x.get("tool") == t and x.get("rps") is not None]
                  for t in ("soloist-bench", "redis-benchmark")}
            if all(by.values()):
                fig += "; %s" % verdict(by["soloist-bench"], by["redis-benchmark"],
                                        ("soloist-bench", "redis-benchmark"))
            fig += ")"
        if "within_10pct" in ln:
            fig += "; within 10%%: %s" % ("yes" if ln["within_10pct"] else "NO")
        if "soloist_bench_count_matches_server" in ln:
            fig += "; request count matches the server's: %s" % (
                "yes" if ln["soloist_bench_count_matches_server"] else "NO")
        note = ("pinned: server cpu0, load generators cpu1" if ln.get("pinned")
                else SERVING_NOTE % base["cores"])
        claim = ln.get("claim") or "load generator sanity: soloist-bench / redis-benchmark rate"
        return [Row("F0.22", claim, fig, dict(base, config=cfg),
                    "make findings BENCH=loadgen_sanity", run.rel(bench), note)]
    return []


# ------------------------------------------ the connection path (F0.40-49)

IDLE_MOMENTS = {"connected": "connected, silent",
                "after_ping": "after one PING each, then idle"}


def h_idle_memory(run, lines, bench):
    """bench/idle_memory.py: RSS growth per idle connection, one run per
    server; F0.40-42 for silent connections, F0.43-44 after one PING."""
    base = base_conditions(run)
    cells = side_by_side(lines, ("moment",))
    rows, cmd = [], "make findings BENCH=idle_memory"
    for moment, first in (("connected", 40), ("after_ping", 43)):
        if (moment,) not in cells:
            continue
        sides = {k: v[0] for k, v in cells[(moment,)].items()}
        # bench/idle_memory.py measures each server once: no spread to give.
        one = "; %s" % ONE_RUN if all(len(v) == 1 for v in cells[(moment,)].values()) else ""
        a, b = sides["soloist"], sides["redis"]
        cfg = ["%d connections" % a["connections"], IDLE_MOMENTS[moment],
               "idle %s s before the reading" % a["idle_s"] if moment == "after_ping" else "read 0.5 s after the last accept",
               "RSS growth over the RSS after one throwaway PING", "--maxclients %d" % a["maxclients"],
               "one run per server"]
        ratio = a["bytes_per_conn"] / b["bytes_per_conn"]
        fig = lambda ln: "**%s B** per connection (RSS %.1f → %.1f MB%s)" % (
            "{:,.0f}".format(ln["bytes_per_conn"]), ln["rss_base_bytes"] / 2**20, ln["rss_bytes"] / 2**20, one)
        if moment == "connected":
            rows.append(Row("F0.40", "resident memory per idle connection, %s: %s" % (
                IDLE_MOMENTS[moment], a_label([a])), fig(a), dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.41", "resident memory per idle connection, %s: redis-server 7.0" % IDLE_MOMENTS[moment],
                            fig(b), dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.42", "idle connection memory, %s: soloist / redis-server 7.0" % IDLE_MOMENTS[moment],
                            "**%s**%s" % (fmt_ratio(ratio), " (%s)" % one[2:] if one else ""),
                            dict(base, config=cfg), cmd, run.rel(bench)))
        else:
            rows.append(Row("F0.43", "resident memory per idle connection, %s" % IDLE_MOMENTS[moment],
                            "%s %s; redis-server 7.0 %s" % (a_label([a]), fig(a), fig(b)),
                            dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.44", "idle connection memory, %s: soloist / redis-server 7.0" % IDLE_MOMENTS[moment],
                            "**%s**%s" % (fmt_ratio(ratio), " (%s)" % one[2:] if one else ""),
                            dict(base, config=cfg), cmd, run.rel(bench)))
    return rows


P1_TESTS = ("GET", "SET", "PING")


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
    return rows

# ------------------------------------------- the queues of steps 2-3 (F2, F3)

def queue_runs(lines, test, **match):
    """bench/queues.c's run lines of one test whose fields equal match."""
    return [ln for ln in lines if ln.get("kind") == "run" and ln.get("test") == test
            and all(ln.get(k) == v for k, v in match.items())]


def one_run_id(sides, what, bench="queues"):
    """Refuses a comparison whose sides are missing or came from
    different runs."""
    for name, side in sides.items():
        if not side:
            raise Refused("%s %s: no %s runs; a comparison needs both sides from the same run"
                          % (bench, what, name))
    ids = {ln.get("run_id") for side in sides.values() for ln in side}
    if len(ids) != 1 or None in ids:
        raise Refused("%s %s: its sides come from different runs %s; a ratio must be measured "
                      "in one run" % (bench, what, sorted(map(str, ids))))


def ns_runs(side):
    return "/".join("%.1f" % ln["ns_per_item"] for ln in side)


def speed_sep(a, b):
    """Whether soloist's runs (a) and the other side's (b) separate, by ns/item."""
    return separation([x["ns_per_item"] for x in a], [x["ns_per_item"] for x in b],
                      ("soloist", "ck_ring")).replace("lower", "faster")


def queue_cfg(ln, extra=()):
    cfg = ["%d producer%s, %d consumer%s" % (ln["producers"], "s" * (ln["producers"] > 1),
                                            ln["consumers"], "s" * (ln["consumers"] > 1)),
           "%d threads on %d cores%s" % (ln["threads"], ln["cores"],
                                         ": OVERSUBSCRIBED" if ln.get("oversubscribed") else ""),
           ln.get("pinning", "not pinned"), "waiting: %s" % ln.get("wait", "spin"),
           "capacity %s" % ln["capacity"],
           "%s items per run" % fmt_rps(ln["items"])]
    return cfg + list(extra)


def h_queues(run, lines, bench):
    """Rows F2.1-F2.14 and F3.1-F3.8 from bench/queues.c's run lines."""
    base = base_conditions(run)
    cmd, src = "make findings BENCH=queues", run.rel(bench)
    rows = []

    def row(rid, claim, fig, cfg, note=""):
        rows.append(Row(rid, claim, fig, dict(base, config=cfg), cmd, src, note))

    def ns(side):
        return median_of(side, "ns_per_item")

    def runs_cfg(side, order_of=None):
        text = "%d runs, median%s" % (len(side), ", alternated with %s" % order_of if order_of else "")
        if all("preempted" in x for x in side):
            # Another process taking a pinned thread's core shows here.
            text += "; threads preempted %s times in the runs" % "/".join(str(x["preempted"]) for x in side)
        return text

    # One line handed between the cores (F3.8): the floor F2.4 is read against.
    hand = queue_runs(lines, "handoff")
    hand_ns = median_of(hand, "ns_one_way") if hand else None

    # SPSC: commit batches, ck_ring, mutex (F2.1-F2.4, F2.11).
    spsc = {"batched": queue_runs(lines, "spsc", impl="soloist", commit_batch=32),
            "per-item": queue_runs(lines, "spsc", impl="soloist", commit_batch=1),
            "ck_ring": queue_runs(lines, "spsc", impl="ck_ring")}
    if any(spsc.values()):
        one_run_id(spsc, "SPSC")
        b, one, ck = spsc["batched"], spsc["per-item"], spsc["ck_ring"]
        deq = "consumer takes up to %d per call" % b[0]["dequeue_batch"]
        row("F2.1", "SPSC ring, commit per 32 items: ns per item, producer and consumer on different cores",
            "**%.2f ns/item** (runs %s)" % (ns(b), ns_runs(b)),
            queue_cfg(b[0], ["commit every 32 items", deq, runs_cfg(b, "ck_ring and the other batch sizes")]))
        row("F2.2", "SPSC ring, commit per item: ns per item",
            "**%.2f ns/item** (runs %s)" % (ns(one), ns_runs(one)),
            queue_cfg(one[0], ["commit after every item", deq, runs_cfg(one, "ck_ring")]))
        row("F2.3", "ck_ring SPSC (Concurrency Kit): ns per item, same capacity and item count",
            "**%.2f ns/item** (runs %s)" % (ns(ck), ns_runs(ck)),
            queue_cfg(ck[0], ["ck_ring_enqueue_spsc / ck_ring_dequeue_spsc, one item per call",
                              "ck_ring holds size - 1 items", runs_cfg(ck, "soloist")]))
        ratio = ns(ck) / ns(b)
        met = ratio >= 3.0 and ns(b) <= 1.5
        floor = ("; one hand-off of a line between the cores takes %.1f ns (F3.8), so a batch of 32 "
                 "that the consumer takes as soon as it is published costs at least %.2f ns/item"
                 % (hand_ns, hand_ns / 32) if hand_ns else "")
        row("F2.4", "SPSC batched against ck_ring SPSC: how many times faster (target ≥ 3×, and ≤ 1.5 ns/item)",
            "**%s** (ck_ring %.2f / soloist %.2f ns/item; %s); %.2f ns/item against the 1.5 ns target "
            "— target %s%s" % (fmt_ratio(ratio), ns(ck), ns(b), speed_sep(b, ck), ns(b),
                               "met" if met else "not met", floor),
            queue_cfg(b[0], ["soloist commits every 32 items", "medians of runs alternated in one run"]))
        mutex = queue_runs(lines, "spsc", impl="mutex_condvar")
        if mutex:
            row("F2.11", "mutex + condition variable ring (the baseline), 1 producer, 1 consumer: ns per item",
                "**%.1f ns/item** (runs %s); %s the SPSC ring's batched figure (%s)"
                % (ns(mutex), ns_runs(mutex), fmt_ratio(ns(mutex) / ns(b)),
                   separation([x["ns_per_item"] for x in b], [x["ns_per_item"] for x in mutex],
                              ("the SPSC ring", "mutex + condvar"))),
                queue_cfg(mutex[0], ["one item per lock, signalled on empty → non-empty and full → non-full",
                                     runs_cfg(mutex, "the SPSC runs")]))

    # SPMC (F2.5-F2.7) and MPSC (F2.8-F2.10): the thread count the cores
    # allow, and the oversubscribed variant beside it.
    for test, first, who in (("spmc", 5, "1 producer, 2 consumers"), ("mpsc", 8, "2 producers, 1 consumer")):
        fits = queue_runs(lines, test, oversubscribed=False)
        over = queue_runs(lines, test, oversubscribed=True)
        if not fits and not over:
            continue
        main = fits or over
        sides = {"soloist": [x for x in main if x["impl"] == "soloist"],
                 "ck_ring": [x for x in main if x["impl"] == "ck_ring"]}
        one_run_id(sides, test.upper())
        a, c = sides["soloist"], sides["ck_ring"]
        ln = a[0]
        shape = "%d producer%s, %d consumer%s" % (ln["producers"], "s" * (ln["producers"] > 1),
                                                 ln["consumers"], "s" * (ln["consumers"] > 1))
        limited = "" if shape == who else " (%s would oversubscribe the %d cores: that figure beside, labelled)" % (
            who, ln["cores"])
        osides = {}
        if over and fits:
            osides = {"soloist": [x for x in over if x["impl"] == "soloist"],
                      "ck_ring": [x for x in over if x["impl"] == "ck_ring"]}
            one_run_id(osides, test.upper() + " oversubscribed")
        extra_a = extra_c = extra_r = ""
        if osides:
            oa, oc = osides["soloist"], osides["ck_ring"]
            o = oa[0]
            label = "; OVERSUBSCRIBED %d+%d threads on %d cores: " % (o["producers"], o["consumers"], o["cores"])
            extra_a = label + "%.1f ns/item (runs %s)" % (ns(oa), ns_runs(oa))
            extra_c = label + "%.1f ns/item (runs %s)" % (ns(oc), ns_runs(oc))
            extra_r = label + "%s (%s)" % (fmt_ratio(ns(oc) / ns(oa)), speed_sep(oa, oc))
        calls = ("spmc_enqueue / spmc_dequeue, one item per call" if test == "spmc" else
                 "mpsc_enqueue (ticket, retried when full) / mpsc_dequeue_batch of up to %d"
                 % ln["dequeue_batch"])
        ckcalls = "ck_ring_enqueue_%s / ck_ring_dequeue_%s, one item per call" % (test, test)
        row("F2.%d" % first, "%s ring, %s%s: ns per item" % (test.upper(), shape, limited),
            "**%.1f ns/item** (runs %s)%s" % (ns(a), ns_runs(a), extra_a),
            queue_cfg(ln, [calls, runs_cfg(a, "ck_ring")]))
        row("F2.%d" % (first + 1), "ck_ring %s, %s: ns per item" % (test.upper(), shape),
            "**%.1f ns/item** (runs %s)%s" % (ns(c), ns_runs(c), extra_c),
            queue_cfg(c[0], [ckcalls, "ck_ring holds size - 1 items", runs_cfg(c, "soloist")]))
        ratio = ns(c) / ns(a)
        row("F2.%d" % (first + 2), "%s against ck_ring %s, %s: how many times faster (target ≥ 1.0×)"
            % (test.upper(), test.upper(), shape),
            "**%s** (ck_ring %.1f / soloist %.1f ns/item; %s) — target %s%s"
            % (fmt_ratio(ratio), ns(c), ns(a), speed_sep(a, c), "met" if ratio >= 1.0 else "not met", extra_r),
            queue_cfg(ln, ["medians of runs alternated in one run"]))

    # The idle pool (F2.12, F2.13, F2.14).
    for rid, state, what in (("F2.12", "parked", "parked (sleeping on their mutex)"),
                             ("F2.13", "active", "active with nothing to do, spinning as long as they are "
                                                 "active (Valkey's workers)"),
                             ("F2.14", "active-sleeps", "active with nothing to do, soloist's default: spin "
                                                        "io-threads-idle-spin-us, then sleep on a futex")):
        side = queue_runs(lines, "pool", state=state)
        if not side:
            continue
        ln = side[0]
        pct = median_of(side, "cpu_pct_per_worker")
        row(rid, "an idle io_threads pool, workers %s: CPU per worker" % what,
            "**%.2f%%** of one core per worker (runs %s)"
            % (pct, "/".join("%.2f" % x["cpu_pct_per_worker"] for x in side)),
            ["%d workers, no jobs" % ln["workers"], "%.0f ms of wall time per run" % ln["wall_ms"],
             "CPU from %s" % ln["clock"], "%d cores" % ln["cores"],
             "%d runs, median, the three states alternated" % len(side)]
            + (["idle spin %d µs" % ln["idle_spin_us"]] if ln.get("idle_spin_us") is not None else []),
            "spinning workers share the cores with whatever else runs" if state == "active" else "")

    # Slot width (F3.1-F3.3).
    slots = {"8-byte": queue_runs(lines, "slots", slot_bytes=8),
             "16-byte": queue_runs(lines, "slots", slot_bytes=16)}
    if any(slots.values()):
        one_run_id(slots, "slot width")
        s8, s16 = slots["8-byte"], slots["16-byte"]
        ips = {k: median_of(v, "items_per_s") for k, v in slots.items()}
        cfg = queue_cfg(s8[0], ["the SPSC protocol built in the benchmark with one-word and two-word slots, "
                                "nothing else different", "commit every 32 items",
                                "consumer takes up to 32 per call", "widths alternated, median"])
        row("F3.1", "SPSC protocol with one-word (8-byte) slots: items per second",
            "**%s items/s** (%.2f ns/item; %s)" % (
                fmt_rps(ips["8-byte"]), ns(s8), runs_spread(field_runs(s8, "items_per_s"), fmt_rps, "items/s")), cfg)
        row("F3.2", "SPSC protocol with two-word (16-byte) slots: items per second",
            "**%s items/s** (%.2f ns/item; %s)" % (
                fmt_rps(ips["16-byte"]), ns(s16), runs_spread(field_runs(s16, "items_per_s"), fmt_rps, "items/s")),
            cfg)
        row("F3.3", "one-word against two-word slots: items per second, 8 B / 16 B",
            "**%s** (%s)" % (fmt_ratio(ips["8-byte"] / ips["16-byte"]),
                             separation([x["ns_per_item"] for x in s8], [x["ns_per_item"] for x in s16],
                                        ("8 B", "16 B")).replace("lower", "faster")), cfg)

    # Where the producer's private fields live (F3.5-F3.7).
    lay = {"own line": queue_runs(lines, "layout", producer_fields="own line"),
           "beside tail": queue_runs(lines, "layout", producer_fields="beside tail")}
    if any(lay.values()):
        one_run_id(lay, "layout")
        own, beside = lay["own line"], lay["beside tail"]
        cfg = queue_cfg(own[0], ["the SPSC protocol built in the benchmark, 8-byte slots, nothing else different",
                                 "commit every 32 items", "consumer takes up to 32 per call",
                                 "layouts alternated, %d runs each, median" % len(own)])
        row("F3.5", "SPSC protocol, the producer's tail_local and head_cache on a line of their own "
            "(spsc_queue's layout): ns per item",
            "**%.2f ns/item** (runs %s)" % (ns(own), ns_runs(own)), cfg)
        row("F3.6", "SPSC protocol, tail_local and head_cache beside tail, on the line the consumer polls: "
            "ns per item", "**%.2f ns/item** (runs %s)" % (ns(beside), ns_runs(beside)), cfg)
        row("F3.7", "the producer's fields on their own line against beside tail: how many times faster",
            "**%s** (%.2f / %.2f ns/item; %s)" % (
                fmt_ratio(ns(beside) / ns(own)), ns(beside), ns(own),
                separation([x["ns_per_item"] for x in own], [x["ns_per_item"] for x in beside],
                           ("own line", "beside tail")).replace("lower", "faster")), cfg)

    if hand:
        ln = hand[0]
        row("F3.8", "one cache line handed from one core to the other: ns per one-way hand-off "
            "(ping-pong between two pinned threads, half the round trip)",
            "**%.1f ns** (runs %s; fastest chunk %.1f ns)" % (
                hand_ns, "/".join("%.1f" % x["ns_one_way"] for x in hand),
                min(x["ns_one_way_fastest_chunk"] for x in hand)),
            ["2 threads on %d cores" % ln["cores"], ln["pinning"],
             "%s round trips per run, timed in chunks of %d, each run its median chunk" % (
                 fmt_rps(ln["round_trips"]), ln["chunk"]),
             "spin without pause", "%d runs, median" % len(hand)])

    # Cache lines per item (F3.4).
    per = {"per-item commit": queue_runs(lines, "lines", commit_batch=1),
           "commit per 32": queue_runs(lines, "lines", commit_batch=32)}
    if any(per.values()):
        one_run_id(per, "cache lines")
        one, b = per["per-item commit"], per["commit per 32"]

        def part(side):
            d = {k: statistics.median(x[k] / x["items"] for x in side)
                 for k in ("slot_lines", "tail_loads_new", "head_loads_new")}
            return "%.3f (slots %.3f, tail %.3f, head %.4f)** (%s)" % (
                median_of(side, "computed_lines_per_item"), d["slot_lines"], d["tail_loads_new"],
                d["head_loads_new"], runs_spread(field_runs(side, "computed_lines_per_item"), "%.3f"))
        hw = all(x.get("hw_l1d_read_misses_per_item") is not None for x in one + b)
        fig = "COMPUTED lines moved per item: per-item commit **%s, commit per 32 **%s" % (part(one), part(b))
        if hw:
            fig += "; hardware L1D read misses per item %.3f vs %.3f" % (
                median_of(one, "hw_l1d_read_misses_per_item"), median_of(b, "hw_l1d_read_misses_per_item"))
        else:
            fig += "; hardware counters unavailable (%s)" % one[0].get("hw_unavailable", "?")
        row("F3.4", "cache lines moved between the cores per item: commit per item against commit per 32",
            fig, queue_cfg(b[0], ["counted from the ring's own indices: each slot line a consumer batch reads, "
                                  "each tail the consumer loads that the producer changed, each head the "
                                  "producer loads that the consumer changed",
                                  "consumer takes up to 32 per call", "%d runs each, median" % len(b)]),
            "computed from the indices, not measured by hardware counters" if not hw else "")
    return rows


# ------------------------------- steps 4-5: I/O threads in the server (F4, F5)
#
# Until the server has I/O threads, its benchmarks measure io-threads 1
# (and redis-server) and print kind=skipped lines for the rest; the rows
# then say "not measured" with the benchmark's reason rather than vanish.

class NotMeasured(Refused):
    """A plot with nothing to draw because its benchmark skipped it;
    plots() leaves it out instead of failing."""


def skipped_why(lines, has=None, **match):
    """The reasons kind=skipped lines give for settings matching `match`
    (and carrying the field `has`, e.g. io_threads: a setting skipped, not
    a cell the time budget left out)."""
    return sorted({ln.get("why", "?") for ln in lines if ln.get("kind") == "skipped"
                   and (has is None or has in ln) and all(ln.get(k) == v for k, v in match.items())})


def one_run_of(lines, what):
    ids = {ln.get("run_id") for ln in lines if ln.get("kind") in ("run", "step", "idle")}
    if len(ids) > 1 or None in ids:
        raise Refused("%s mixes runs %s; its comparisons must be measured in one run"
                      % (what, sorted(map(str, ids))))


def cell_name(key):
    return "%s %d B P=%d" % key


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


def sb_cfg(text):
    """A placement note for benchmarks driven by soloist-bench."""
    return text.replace("redis-benchmark", "soloist-bench")


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


TVR_SIDES = ("soloist-1", "soloist-2", "soloist-4", "redis-1", "redis-2")
TVR_TABLE = ("Closed loop with I/O threads: soloist io-threads 1, 2, 4 (adaptive) and redis-server 7.0 "
             "io-threads 1, 2 (medians, rps)", ["cell"] + list(TVR_SIDES) + ["4 / 1", "4 / redis-2"])


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


def h_threads_vs_redis(run, lines, bench):
    """F4.30-F4.37 (per cell), F4.38-F4.39 (targets), F4.40 (redis's own
    threads)."""
    base = base_conditions(run)
    one_run_of(lines, "threads_vs_redis")
    cmd, src = "make findings BENCH=threads_vs_redis", run.rel(bench)
    cells = {}
    for ln in lines:
        if ln.get("kind") == "run":
            cells.setdefault((ln["test"], ln["value_size"], ln["pipeline"]), {}).setdefault(
                ln["side"], []).append(ln)
    why = "; ".join(skipped_why(lines, has="io_threads", server="soloist"))
    rows, four, vs_redis, redis_own = [], [], [], []
    for i, key in enumerate(SVR_ORDER):
        if key not in cells:
            continue
        by = cells[key]
        for need in ("soloist-1", "redis-2"):
            if need not in by:
                raise Refused("threads_vs_redis %s has no %s runs; its ratios need both from one run"
                              % (cell_name(key), need))
        med = {k: median_of(v) for k, v in by.items()}
        parts = ["rps %s" % ", ".join("%s %s" % (k, fmt_rps(med[k])) for k in TVR_SIDES if k in med)]
        for n in (2, 4):
            k = "soloist-%d" % n
            if k in med:
                parts.append("%s / soloist-1 **%s** (%s)" % (k, fmt_ratio(med[k] / med["soloist-1"]),
                                                            overlap(by[k], by["soloist-1"])))
                parts.append("%s / redis-2 **%s**" % (k, fmt_ratio(med[k] / med["redis-2"])))
        if "soloist-4" in med:
            rps = {k: field_runs(v, "rps") for k, v in by.items()}
            four.append((med["soloist-4"] / med["soloist-1"], key,
                         verdict(rps["soloist-4"], rps["soloist-1"], ("soloist-4", "soloist-1"))))
            vs_redis.append((med["soloist-4"] / med["redis-2"], key,
                             verdict(rps["soloist-4"], rps["redis-2"], ("soloist-4", "redis-2"))))
        else:
            parts.append("soloist-1 / redis-2 %s (%s); soloist io-threads 2, 4 **not measured**: %s"
                         % (fmt_ratio(med["soloist-1"] / med["redis-2"]),
                            verdict(field_runs(by["soloist-1"], "rps"), field_runs(by["redis-2"], "rps"),
                                    ("soloist-1", "redis-2")), why or "no runs"))
        if "redis-1" in med:
            redis_own.append((med["redis-2"] / med["redis-1"], key,
                              verdict(field_runs(by["redis-2"], "rps"), field_runs(by["redis-1"], "rps"),
                                      ("io-threads 2", "io-threads 1"))))
        ln = by["soloist-1"][0]
        order = "".join(str(TVR_SIDES.index(x["side"]) + 1) for x in lines if x.get("kind") == "run"
                        and (x["test"], x["value_size"], x["pipeline"]) == key)
        cfg = [key[0], "P=%d" % key[2], "%d clients" % ln["clients"], "%d B values" % key[1],
               "keyspace -r %s (all keys loaded)" % ln["keyspace"],
               "runs sized per setting by its own calibration (%s requests)" % ", ".join(
                   "%s %d" % (k, by[k][0]["requests"]) for k in TVR_SIDES if k in by),
               "%d runs each, settings alternated (%s; 1-5 = %s), median" % (
                   len(by["soloist-1"]), order, ", ".join(TVR_SIDES)),
               "soloist ignition: default (adaptive)", "redis io-threads 2: --io-threads-do-reads yes",
               "waiting servers stopped (SIGSTOP)", placement_cfg(ln, base["cores"])]
        rows.append(Row("F4.%d" % (30 + i), "closed loop, %s: soloist with I/O threads against its io-threads 1 "
                        "and against redis-server 7.0 io-threads 2" % cell_name(key), "; ".join(parts),
                        dict(base, config=cfg), cmd, src, serving_note(ln, base["cores"]),
                        extra={"summary": TVR_TABLE,
                               "cells": [cell_name(key)] + [fmt_rps(med[k]) if k in med else "—" for k in TVR_SIDES]
                               + ["%s" % fmt_ratio(med["soloist-4"] / med["soloist-1"]) if "soloist-4" in med else "—",
                                  "%s" % fmt_ratio(med["soloist-4"] / med["redis-2"]) if "soloist-4" in med else "—"]}))
    if not rows:
        return rows
    cfg = ["GET and SET", "P=1 and 16", "3 and 512 B values", "50 clients", "medians of alternated runs per cell",
           "soloist io-threads 4, default ignition"]
    ln = next(x for x in lines if x.get("kind") == "run")
    for rid, claim, pairs, floor in (
            ("F4.38", "Target (benchmark goal): adaptive io-threads 4 ≥ 0.95× io-threads 1 in every cell", four, 0.95),
            ("F4.39", "Target (benchmark goal): soloist io-threads 4 ≥ 1.0× redis-server 7.0 io-threads 2 in "
             "every cell", vs_redis, 1.0)):
        if pairs:
            low, lk, lsep = min(pairs)
            met = sum(1 for r, _, _ in pairs if r >= floor)
            fig = "%d of %d cells ≥ %s; lowest %s (%s; %s)%s" % (
                met, len(pairs), fmt_ratio(floor), fmt_ratio(low), cell_name(lk), lsep,
                " — target met" if met == len(pairs) == 8 else " — target not met")
        else:
            fig = "**not measured**: %s" % (why or "no soloist io-threads 4 runs")
        rows.append(Row(rid, claim, fig, dict(base, config=cfg), cmd, src, serving_note(ln, base["cores"])))
    if redis_own:
        fig = "; ".join("%s %s (%s)" % (cell_name(k), fmt_ratio(r), sep) for r, k, sep in redis_own)
        rows.append(Row("F4.40", "the peer's own threads: redis-server 7.0 io-threads 2 / io-threads 1 per cell",
                        fig, dict(base, config=cfg[:5] + ["redis --io-threads 2 --io-threads-do-reads yes"]),
                        cmd, src, serving_note(ln, base["cores"])))
    return rows


def h_ignition_timing(run, lines, bench):
    """F5.1-F5.5 (ignition and scale-down), F5.6-F5.7 (idle CPU after a
    burst)."""
    base = base_conditions(run)
    one_run_of(lines, "ignition_timing")
    cmd, src = "make findings BENCH=ignition_timing", run.rel(bench)
    steps = [ln for ln in lines if ln.get("kind") == "step"]
    idle = {ln["io_threads"]: ln for ln in lines if ln.get("kind") == "idle"}
    why = "; ".join(skipped_why(lines, has="io_threads")) or "no steps in the results"
    rows = []
    lead = (steps or list(idle.values()) or [{}])[0]
    cfg = ["GET", "P=1", "%s connections" % lead.get("clients", 50), "%s B values" % lead.get("value_size", 3),
           "soloist-bench, 1 thread", "INFO iothreads polled every %g ms on one connection" % lead.get("poll_ms", 5),
           "step times from the generator's start and exit; the server's io_threads_last_change_us "
           "where it falls between the polls that saw the change, else the poll's time"]
    if steps:
        cfg.insert(0, "io-threads %s, default ignition" % steps[0]["io_threads"])
        cfg.append("%g s bursts" % steps[0]["burst_s"])

    def when(ln, what):
        v = ln.get("%s_ms_server" % what)
        return (v, "server") if v is not None else (ln.get("%s_ms_poll" % what), "poll")

    def timing(sel, what, named=False):
        """The median time of the steps in sel, each step's own time beside
        it (the runs' spread), by the server's stamp or else the poll's;
        '(one run)' when one step was timed."""
        # A step that began with threads still active has no ignition to time.
        got = [when(ln, what) + (ln["step"],) for ln in sel if ln.get("%s_ms_poll" % what) is not None
               and (what != "ignition" or ln.get("started_idle", True))]
        if not got:
            return None
        if len(got) == 1:
            v, k, step = got[0]
            return "**%.1f ms**%s, by the %s (%s)" % (
                v, " after the %s step's load" % step if named else "",
                "server's stamp" if k == "server" else "poll's time (no stamp between the polls)", ONE_RUN)
        return "**%.1f ms** median (%s)" % (statistics.median(v for v, _, _ in got), ", ".join(
            "%.1f %s%s" % (v, k, " after the %s step" % step if named else "") for v, k, step in got))

    def off_before_end(ln):
        """Whether an ignited step's threads were off before its load ended:
        the first poll after the end found them off within one poll
        interval, and the server's stamp of that change fell before the
        poll ahead of it (ignition_timing.stamped_ms refused it), so the
        change was seen before the end: during the load."""
        ms = ln.get("scale_down_ms_poll")
        return (ln.get("scaled_down") and ln.get("scale_down_ms_server") is None and ms is not None
                and ms <= ln.get("poll_ms", 5.0))

    def row(rid, claim, fig, extra_cfg=()):
        rows.append(Row(rid, claim, fig, dict(base, config=cfg + list(extra_cfg)), cmd, src))

    if steps:
        high = [ln for ln in steps if ln["step"] == "high"]
        closed = [ln for ln in steps if ln["step"] == "closed"]
        low = [ln for ln in steps if ln["step"] == "low"]
        rate = high[0]["rate"] if high else None

        def ignition(sel):
            fig = timing(sel, "ignition") or "no ignition in %d steps" % len(sel)
            timed = [ln for ln in sel if ln.get("ignition_ms_poll") is not None and ln.get("started_idle", True)]
            if timed and len(timed) < len(sel):
                fig += "; %d of %d steps at this load ignited from idle" % (len(timed), len(sel))
            return fig
        row("F5.1", "time from a step up to %s req/s (open loop) to ignition" % fmt_rps(rate or 0), ignition(high),
            ["%d steps" % len(high)])
        row("F5.2", "time from a step up to a closed loop (as fast as the generator sends) to ignition",
            ignition(closed), ["closed loop at %s req/s" % "/".join(fmt_rps(x["rps"]) for x in closed)])
        ignited = [ln for ln in steps if ln["ignited"]]
        early = [ln for ln in ignited if off_before_end(ln)]
        timed = [ln for ln in ignited if ln not in early]
        fig = timing(timed, "scale_down", named=True) or "no scale-down after a load's end to time"
        for ln in early:
            fig += ("; the %s step's threads were off before its load ended (turned off during the load; "
                    "guard reverts in that step: %s), so it has no scale-down to time: the first poll after "
                    "the end, %.1f ms, found them off" % (ln["step"], ln["counters"].get("io_threads_guard_reverts"),
                                                         ln["scale_down_ms_poll"]))
        late = [ln for ln in timed if not ln.get("scaled_down")]
        if late:
            fig += "; %d of %d ignited steps not scaled down within %g s" % (len(late), len(ignited),
                                                                            late[0]["observe_s"])
        row("F5.3", "time from the end of the load to scale-down: each ignited step's, by the server's stamp of "
            "the change (else the poll's time); a step whose threads went off during its load is named apart, "
            "with no time", fig, ["%d ignited steps" % len(ignited)])
        fig = "; ".join("%s req/s: %s (%speak %d active, ignitions %s, guard reverts %s)" % (
            fmt_rps(ln["rate"]), "IGNITED" if ln["ignited"] else "no ignition",
            ONE_RUN + "; " if len(low) == 1 else "", ln["peak_active"],
            ln["counters"].get("io_threads_ignitions"), ln["counters"].get("io_threads_guard_reverts")) for ln in low)
        row("F5.4", "a low step (a tenth of the closed-loop rate): does it ignite?", fig or "no low step")
        tot = {k: sum((ln["counters"].get(k) or 0) for ln in steps) for k in steps[0]["counters"]}
        fig = "; ".join("%s %s: peak %d active" % (ln["step"], fmt_rps(ln["rps"]), ln["peak_active"]) for ln in steps)
        fig += "; over all steps: " + ", ".join("%s %d" % (k.replace("io_threads_", ""), v)
                                               for k, v in sorted(tot.items()))
        names = []
        for ln in steps:
            if ln["step"] not in names:
                names.append(ln["step"])
        fig += "; runs of each step: " + ", ".join(
            "%s %d" % (n, sum(1 for ln in steps if ln["step"] == n)) for n in names)
        busy = [ln["step"] for ln in steps if not ln.get("started_idle", True)]
        if busy:
            fig += "; NOT IDLE at the start (not timed): %s" % ", ".join(busy)
        row("F5.5", "threads active at the peak of each step, and the policy's counters", fig)
    else:
        for rid, claim in (("F5.1", "time from a step up in offered load to ignition"),
                           ("F5.2", "time from a step up to a closed loop to ignition"),
                           ("F5.3", "time from the end of the load to scale-down"),
                           ("F5.4", "a low step: does it ignite?"),
                           ("F5.5", "threads active at the peak of each step, and the policy's counters")):
            row(rid, claim, "**not measured**: %s" % why)

    def idle_fig(ln):
        return "; ".join("%g–%g s after: **%.2f%%** of one core (%s)" % (
            w["from_s"], w["to_s"], w["pct_of_one_core"],
            ", ".join("%s %.2f%%" % kv for kv in sorted(w["by_thread_pct"].items())))
            for w in ln["windows"])
    icfg = ["CPU of every thread from /proc/PID/task/*/schedstat", "after a closed-loop burst",
            "nothing polls the server meanwhile"]
    for rid, n in (("F5.6", 4), ("F5.7", 1)):
        ln = idle.get(n)
        claim = "the idle server's CPU, all threads, after a burst: io-threads %d%s" % (
            n, " (the step-0 server, the floor)" if n == 1 else "")
        if ln:
            # One burst and one reading per setting: no spread to give.
            row(rid, claim, idle_fig(ln) + " (%s)" % ONE_RUN,
                icfg + ["%d threads" % ln["threads"], "%g s burst" % ln["burst_s"]])
        else:
            row(rid, claim, "**not measured**: %s" % why)
    return rows


# ------------------------------------------------ step 6: prefetch_micro

def pm_runs(lines, part, **match):
    """bench/prefetch_micro.c's run lines of one part whose fields equal match."""
    return [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == part
            and all(ln.get(k) == v for k, v in match.items())]


def mib(n):
    return "%.0f MiB" % (n / 1048576) if n >= 1048576 else "%.0f KiB" % (n / 1024)


def residency(ln):
    """Where a table of ln's size lives, from the cache sizes the line carries."""
    b, l2, l3 = ln["table_bytes"], ln.get("l2_bytes") or 0, ln.get("l3_bytes") or 0
    if l2 and b <= l2:
        return "L2-resident"
    if l3 and b <= l3 / 2:
        return "L3-resident"
    if l3 and b >= 1.5 * l3:
        return "DRAM-resident, %.1f× the last-level cache" % (b / l3)
    return "about the size of the last-level cache"


def h_prefetch_micro(run, lines, bench):
    """Rows F6.1-F6.19 from bench/prefetch_micro.c's run lines."""
    base = base_conditions(run)
    cmd, src = "make findings BENCH=prefetch_micro", run.rel(bench)
    rows = []

    def row(rid, claim, fig, cfg, note=""):
        rows.append(Row(rid, claim, fig, dict(base, config=cfg), cmd, src, note))

    def med(side, field):
        return median_of(side, field)

    def runs_of(side, field):
        return "/".join("%.1f" % x[field] for x in side)

    # -- the linked-list toy (F6.1-F6.8)
    ch = pm_runs(lines, "chains", pages="4K")
    if ch:
        seq = [x for x in ch if x["method"] == "sequential"]
        il16 = [x for x in ch if x["method"] == "interleaved" and x["chains"] == 16]
        pf = [x for x in ch if x["method"] == "prefetch" and x["chains"] == 16]
        one_run_id({"sequential": seq, "interleaved": il16, "prefetch": pf}, "chains", "prefetch_micro")
        ln = seq[0]
        sets = ln.get("sets", 1)
        ccfg = ["%d lists of %s nodes of 64 B in one shuffled order over a %s arena (last-level cache %s)"
                % (32, fmt_rps(ln["nodes"] // 32), mib(ln["arena_bytes"]), mib(ln.get("l3_bytes") or 0)),
                "%d disjoint sets of lists walked in turn, each walk every node of its set" % sets
                if sets > 1 else "every walk visits every node",
                "4 KiB pages (madvise MADV_NOHUGEPAGE)",
                "%d runs, median, methods alternated" % len(seq)]
        s, i16, p16 = med(seq, "ns_per_node"), med(il16, "ns_per_node"), med(pf, "ns_per_node")
        row("F6.1", "linked-list toy, one list after another (each load waits for the last): ns per node",
            "**%.1f ns/node** (runs %s)" % (s, runs_of(seq, "ns_per_node")), ccfg)
        row("F6.2", "linked-list toy, 16 lists interleaved (one step of each in turn): ns per node",
            "**%.1f ns/node** (runs %s)" % (i16, runs_of(il16, "ns_per_node")), ccfg)
        row("F6.3", "linked-list toy, 16 lists interleaved with __builtin_prefetch of each next node: ns per node",
            "**%.1f ns/node** (runs %s)" % (p16, runs_of(pf, "ns_per_node")), ccfg)
        row("F6.4", "16 lists interleaved with prefetch against one list after another: how many times faster "
            "(target ≥ 10×)",
            "**%s** (%.1f / %.1f ns/node; %s) — target %s"
            % (fmt_ratio(s / p16), s, p16,
               separation([x["ns_per_node"] for x in pf], [x["ns_per_node"] for x in seq],
                          ("prefetch", "sequential")),
               "met" if s / p16 >= 10 else "not met"), ccfg)
        row("F6.5", "what the prefetch instruction adds to interleaving alone, 16 lists",
            "**%s** (interleaved %.1f / with prefetch %.1f ns/node; %s)"
            % (fmt_ratio(i16 / p16), i16, p16,
               separation([x["ns_per_node"] for x in pf], [x["ns_per_node"] for x in il16],
                          ("prefetch", "interleaved"))), ccfg)
        ks = sorted({x["chains"] for x in ch if x["method"] != "sequential"})
        by = {(m, k): med([x for x in ch if x["method"] == m and x["chains"] == k], "ns_per_node")
              for m in ("interleaved", "prefetch") for k in ks}
        best = min(by.values())
        knee = min(k for k in ks if min(by[("interleaved", k)], by[("prefetch", k)]) <= 1.1 * best)
        row("F6.6", "linked-list toy: ns per node by lists in flight (interleaved / with prefetch); where more "
            "lists stop paying",
            "1: %.1f; %s; within 10%% of the best (%.1f ns/node, %s) from **%d lists** on"
            % (s, "; ".join("%d: %.1f / %.1f" % (k, by[("interleaved", k)], by[("prefetch", k)]) for k in ks),
               best, runs_spread(field_runs([x for x in ch if (x["method"], x["chains"]) == min(by, key=by.get)],
                                            "ns_per_node")), knee), ccfg)
    hp = pm_runs(lines, "chains", pages="2M")
    if hp and ch:
        hseq = [x for x in hp if x["method"] == "sequential"]
        hpf = [x for x in hp if x["method"] == "prefetch" and x["chains"] == 16]
        one_run_id({"2M sequential": hseq, "2M prefetch": hpf, "4K sequential": seq}, "chains pages",
                   "prefetch_micro")
        hs, hp16 = med(hseq, "ns_per_node"), med(hpf, "ns_per_node")
        got = max(x["anon_huge_kb"] for x in hp)
        hcfg = ["the same arena on 2 MiB pages (madvise MADV_HUGEPAGE; %s of huge pages obtained)"
                % mib(got * 1024), "%d runs, median" % len(hseq)]
        ns_seq, ns_hseq, ns_hpf = (field_runs(x, "ns_per_node") for x in (seq, hseq, hpf))
        row("F6.7", "linked-list toy on 2 MiB pages: one list after another, and 16 lists with prefetch",
            "**%.1f ns/node** sequential, **%.1f ns/node** with 16 lists and prefetch: %s (runs %s sequential, "
            "%s with prefetch; %s)"
            % (hs, hp16, fmt_ratio(hs / hp16), runs_of(hseq, "ns_per_node"), runs_of(hpf, "ns_per_node"),
               verdict(ns_hpf, ns_hseq, ("prefetch", "sequential"), lower=True)),
            hcfg + ([] if got else ["NO huge pages obtained"]))
        row("F6.8", "what 4 KiB pages cost a dependent miss: one list after another, 4 KiB pages against 2 MiB",
            "**%s** (%.1f / %.1f ns/node; %s)" % (fmt_ratio(s / hs), s, hs,
                                                  verdict(ns_hseq, ns_seq, ("2 MiB", "4 KiB"), lower=True)), hcfg)

    # -- soloist's hashtable (F6.9-F6.19)
    for thp in ("off", "on"):
        # "off_unavailable": prctl refused, so the pass ran with the THP mode's default.
        tb = [x for x in pm_runs(lines, "table") if x.get("thp") in (thp, thp + "_unavailable")]
        if not tb:
            continue
        big = max(x["keys"] for x in tb)
        t = [x for x in tb if x["keys"] == big]
        find = [x for x in t if x["method"] == "find"]
        b = {}
        for x in t:
            if x["method"] == "batch":
                b.setdefault(x["batch"], []).append(x)
        one_run_id({"find": find, "batch 16": b.get(16, [])}, "table thp %s" % thp, "prefetch_micro")
        ln = find[0]
        huge = max(x["anon_huge_kb"] for x in t)
        pages = ("transparent huge pages off for the process (prctl PR_SET_THP_DISABLE)" if ln["thp"] == "off" else
                 "THP COULD NOT BE DISABLED (prctl refused; THP mode %s)" % ln.get("thp_mode") if thp == "off" else
                 "malloc asked for huge pages (GLIBC_TUNABLES glibc.malloc.hugetlb=1; THP mode %s), %s of "
                 "huge pages obtained" % (ln.get("thp_mode"), mib(huge * 1024)))
        tcfg = ["%s keys, %s of buckets and entries (%s; last-level cache %s)"
                % (fmt_rps(big), mib(ln["table_bytes"]), residency(ln), mib(ln.get("l3_bytes") or 0)),
                "%s hits in random order per measurement" % fmt_rps(ln["lookups"]), pages,
                "%d runs, median, methods alternated" % len(find)]
        f, b16 = med(find, "ns_per_lookup"), med(b[16], "ns_per_lookup")
        curve = {n: med(side, "ns_per_lookup") for n, side in b.items()}
        best = min(curve.values())
        knee = min(n for n in curve if curve[n] <= 1.1 * best)
        curve_text = ("%s; within 10%% of the best (%.1f ns/lookup, %s, %s the find) from **batch %d** on"
                      % ("; ".join("%d: %.1f" % (n, curve[n]) for n in sorted(curve)), best,
                         runs_spread(field_runs(b[min(curve, key=curve.get)], "ns_per_lookup")),
                         fmt_ratio(f / best), knee))
        if thp == "off":
            row("F6.9", "soloist's hashtable, the largest table, hashtable_find one key after another: ns per lookup",
                "**%.1f ns/lookup** (runs %s)" % (f, runs_of(find, "ns_per_lookup")), tcfg)
            row("F6.10", "the same lookups as batches of 16 resumable finds stepped round robin: ns per lookup",
                "**%.1f ns/lookup** (runs %s)" % (b16, runs_of(b[16], "ns_per_lookup")), tcfg)
            row("F6.11", "batches of 16 resumable finds against hashtable_find, largest table: how many times "
                "faster (target ≥ 4× on a DRAM-resident table)",
                "**%s** (%.1f / %.1f ns/lookup; %s) — target %s"
                % (fmt_ratio(f / b16), f, b16,
                   separation([x["ns_per_lookup"] for x in b[16]], [x["ns_per_lookup"] for x in find],
                              ("batch 16", "find")),
                   ("met" if f / b16 >= 4 else "not met") if residency(ln).startswith("DRAM")
                   else "not judged: the table is %s" % residency(ln)), tcfg)
            row("F6.12", "ns per lookup by batch size, largest table: where this machine's memory-level "
                "parallelism runs out", curve_text, tcfg)
            row("F6.13", "a batch of one resumable find against hashtable_find: the state machine's cost with "
                "nothing to overlap",
                "**%s** (%.1f / %.1f ns/lookup; batch of one runs %s; %s)"
                % (fmt_ratio(curve[1] / f), curve[1], f, runs_of(b[1], "ns_per_lookup"),
                   verdict(field_runs(find, "ns_per_lookup"), field_runs(b[1], "ns_per_lookup"),
                           ("find", "batch of one"), lower=True)), tcfg)
            pff = [x for x in t if x["method"] == "prefetch_find"]
            if pff:
                p = med(pff, "ns_per_lookup")
                row("F6.14", "Valkey's pattern: a batch of 16 resumable finds, then each key's own hashtable_find "
                    "on warm lines: ns per lookup and against the find alone",
                    "**%.1f ns/lookup** (runs %s), %s faster than hashtable_find alone (%.1f; %s); the second "
                    "find adds %.1f ns/lookup to the batch's %.1f"
                    % (p, runs_of(pff, "ns_per_lookup"), fmt_ratio(f / p), f,
                       verdict(field_runs(pff, "ns_per_lookup"), field_runs(find, "ns_per_lookup"),
                               ("batch then find", "find"), lower=True), p - b16, b16), tcfg)
            for rid, want in (("F6.15", "L2-resident"), ("F6.16", "L3-resident")):
                sizes = sorted({x["keys"] for x in tb if residency(x) == want})
                if not sizes:
                    row(rid, "batches of 16 against hashtable_find on a %s table" % want,
                        "**not measured**: no table size of this run fits that level (L2 %s, last-level "
                        "cache %s)" % (mib(ln.get("l2_bytes") or 0), mib(ln.get("l3_bytes") or 0)), tcfg[1:])
                    continue
                k = sizes[-1]
                sf = [x for x in tb if x["keys"] == k and x["method"] == "find"]
                s16 = [x for x in tb if x["keys"] == k and x["method"] == "batch" and x["batch"] == 16]
                a, c = med(sf, "ns_per_lookup"), med(s16, "ns_per_lookup")
                row(rid, "batches of 16 against hashtable_find on a %s table" % want,
                    "**%s** (%.1f / %.1f ns/lookup; runs find %s, batch 16 %s; %s)"
                    % (fmt_ratio(a / c), a, c, runs_of(sf, "ns_per_lookup"), runs_of(s16, "ns_per_lookup"),
                       separation([x["ns_per_lookup"] for x in s16],
                                  [x["ns_per_lookup"] for x in sf], ("batch 16", "find"))),
                    ["%s keys, %s (%s; L2 %s, last-level cache %s)"
                     % (fmt_rps(k), mib(sf[0]["table_bytes"]), want, mib(sf[0].get("l2_bytes") or 0),
                        mib(sf[0].get("l3_bytes") or 0))] + tcfg[1:])
        else:
            row("F6.17", "with huge pages, largest table: hashtable_find, batches of 16, and the speed-up",
                "**%.1f** and **%.1f ns/lookup** (runs %s and %s): %s (%s)"
                % (f, b16, runs_of(find, "ns_per_lookup"), runs_of(b[16], "ns_per_lookup"), fmt_ratio(f / b16),
                   verdict(field_runs(b[16], "ns_per_lookup"), field_runs(find, "ns_per_lookup"),
                           ("batch 16", "find"), lower=True)),
                tcfg + ([] if huge else ["NO huge pages obtained: the row measures 4 KiB pages"]))
            row("F6.19", "ns per lookup by batch size with huge pages, largest table", curve_text, tcfg)
            offs = [x for x in pm_runs(lines, "table", thp="off") if x["keys"] == big and x["method"] == "find"]
            if offs:
                one_run_id({"off": offs, "on": find}, "table thp on/off", "prefetch_micro")
                o = med(offs, "ns_per_lookup")
                row("F6.18", "what 4 KiB pages cost hashtable_find on the largest table: THP off against on",
                    "**%s** (%.1f / %.1f ns/lookup; %s)"
                    % (fmt_ratio(o / f), o, f, verdict(field_runs(find, "ns_per_lookup"),
                                                       field_runs(offs, "ns_per_lookup"),
                                                       ("THP on", "THP off"), lower=True)), tcfg)
    for ln in lines:
        if ln.get("kind") == "skipped" and ln.get("thp") == "on":
            for rid in ("F6.17", "F6.18", "F6.19"):
                row(rid, "soloist's hashtable with huge pages", "**not measured**: %s" % ln.get("why"),
                    ["thp on"])
    return rows


# ------------------------------------------- step 8: the sorted set (F8)

ZSET_SIDES = [("copied", "soloist, zset-layout copied"), ("node-pointer", "soloist, zset-layout node-pointer"),
              ("embedded", "soloist, zset-layout embedded"), ("dense", "soloist, zset-layout dense (default)"),
              ("redis-server", "redis-server 7.0")]


def zset_runs(lines):
    """{layout: {"add": [lines by n], "rank": line, "score": line}} from one run."""
    runs = [ln for ln in lines if ln.get("kind") == "run"]
    ids = {ln.get("run_id") for ln in runs}
    if len(ids) != 1 or None in ids:
        raise Refused("zset_memory: lines from several runs %s; ratios need one run" % sorted(map(str, ids)))
    out = {}
    for ln in runs:
        d = out.setdefault(ln["layout"], {"add": []})
        if ln["op"] == "add":
            d["add"].append(ln)
        else:
            d[ln["op"]] = ln
    for d in out.values():
        d["add"].sort(key=lambda ln: ln["n"])
    return out


def zset_insert_rate(adds, field="inserts_per_s"):
    """Members per second over every segment together (total / total time)."""
    if any(not ln.get(field) for ln in adds):
        return None
    return adds[-1]["n"] / sum((ln["n"] - ln["segment_from"]) / ln[field] for ln in adds)


def fmt_count(n):
    return "%gM" % (n / 1e6) if n >= 1e6 else "%gk" % (n / 1e3)


def h_zset_memory(run, lines, bench):
    """bench/zset_memory.py: bytes per member, inserts/s and range-query
    rates per layout and for redis-server 7.0 (F8.1-F8.35)."""
    base = base_conditions(run)
    sides = zset_runs(lines)
    if "redis-server" not in sides or "dense" not in sides:
        raise Refused("zset_memory: a comparison needs dense and redis-server from the same run")
    ref = sides["dense"]["add"]
    sizes = [ln["n"] for ln in ref]
    both = sorted(set(sizes) & {ln["n"] for ln in sides["redis-server"]["add"]})
    if not both:
        raise Refused("zset_memory: dense and redis-server reached no size in common")
    cfg = ["ZADD z NX i m:i, i = 0..N-1, integer scores, one connection, %d commands per write"
           % ref[0]["window"], "sizes %s" % ", ".join(fmt_count(n) for n in sizes),
           "fresh server per side, one after the other", "used_memory: allocator usable sizes "
           "(soloist: glibc malloc; redis-server: jemalloc)"]
    cmd, src = "make findings BENCH=zset_memory", run.rel(bench)
    rows = []
    top = both[-1]

    def bpm(layout):
        return {ln["n"]: ln["bytes_per_member"] for ln in sides[layout]["add"]}

    # bench/zset_memory.py loads each side once (one line per size and query
    # kind): every figure here is one run's, with no spread to give.
    one = " (%s)" % ONE_RUN
    targets = {"embedded": " (target ≤ 60)", "dense": " (target ≤ 40)"}
    for i, (layout, label) in enumerate(ZSET_SIDES):
        if layout not in sides:
            continue
        b = bpm(layout)
        rows.append(Row("F8.%d" % (i + 1), "bytes per sorted-set member%s: %s" % (targets.get(layout, ""), label),
                        ", ".join("%s **%.1f B**" % (fmt_count(n), b[n]) for n in sizes if n in b) + one,
                        dict(base, config=cfg), cmd, src))
    rows.append(Row("F8.6", "bytes per member at %s: dense / redis-server 7.0" % fmt_count(top),
                    "**%s**%s" % (fmt_ratio(bpm("dense")[top] / bpm("redis-server")[top]), one),
                    dict(base, config=cfg), cmd, src))
    rcfg = cfg + ["rate: members / wall seconds of the load over all sizes; per CPU s: over the server's own CPU"]

    def adds(layout):  # the segments up to the size every compared side reached
        return [ln for ln in sides[layout]["add"] if ln["n"] <= top]

    for i, (layout, label) in enumerate(ZSET_SIDES):
        if layout not in sides or not adds(layout) or adds(layout)[-1]["n"] != top:
            continue
        wall, cpu = zset_insert_rate(adds(layout)), zset_insert_rate(adds(layout), "inserts_per_cpu_s")
        rows.append(Row("F8.%d" % (i + 10), "ZADD NX inserts per second to %s members: %s" % (fmt_count(top), label),
                        "**%s/s** (%s%s)" % ("{:,.0f}".format(wall), "" if cpu is None else
                                             "%s per server CPU second; " % "{:,.0f}".format(cpu), ONE_RUN),
                        dict(base, config=rcfg), cmd, src))
    cpu_d, cpu_r = (zset_insert_rate(adds(k), "inserts_per_cpu_s") for k in ("dense", "redis-server"))
    rows.append(Row("F8.15", "ZADD NX inserts per second: dense / redis-server 7.0 (target ≥ 1.0×)",
                    "**%s** by wall time%s%s" % (
                        fmt_ratio(zset_insert_rate(adds("dense")) / zset_insert_rate(adds("redis-server"))),
                        "" if not (cpu_d and cpu_r) else "; %s per server CPU second" % fmt_ratio(cpu_d / cpu_r),
                        one),
                    dict(base, config=rcfg), cmd, src,
                    "wall time includes the client and whatever else the machine ran; the server's CPU time does not"))
    for op, first, what in (("rank", 20, "ZRANGE z r r+9 (by rank)"),
                            ("score", 30, "ZRANGE z s +inf BYSCORE LIMIT 0 10 (by score)")):
        if op not in sides["dense"] or op not in sides["redis-server"]:
            continue  # the run stopped before its queries
        qcfg = cfg + ["%d queries, r / s random, on the full set" % sides["dense"][op]["queries"]]
        for i, (layout, label) in enumerate(ZSET_SIDES):
            if layout not in sides or op not in sides[layout]:
                continue
            rows.append(Row("F8.%d" % (first + i), "%s queries per second on %s members: %s"
                            % (what, fmt_count(top), label),
                            "**%s/s**%s" % ("{:,.0f}".format(sides[layout][op]["queries_per_s"]), one),
                            dict(base, config=qcfg), cmd, src))
        rows.append(Row("F8.%d" % (first + 5), "%s queries per second: dense / redis-server 7.0 (target ≥ 1.0×)"
                        % what, "**%s**%s" % (fmt_ratio(sides["dense"][op]["queries_per_s"] /
                                                         sides["redis-server"][op]["queries_per_s"]), one),
                        dict(base, config=qcfg), cmd, src))
    return rows


def h_generic(run, lines, bench):
    base = base_conditions(run)
    rows = []
    for ln in lines:
        if not ln.get("finding"):
            continue
        cfg = ln.get("config")
        if isinstance(cfg, dict):
            cfg = ["%s=%s" % (k, cfg[k]) for k in sorted(cfg)]
        rows.append(Row(ln.get("id"), ln.get("claim"), ln.get("figure"), dict(base, config=cfg),
                        ln.get("command") or "make findings BENCH=%s" % bench, run.rel(bench),
                        ln.get("note", ""), extra={"finding": ln}))
    return rows


# ------------------------------------------- the runs' spread of generic rows
#
# A benchmark that prints its own rows (kind-less lines with "finding": true)
# computes their figures from its run lines; the spread of those runs is
# added here, from the same run lines, after the benchmark's own figure, so
# the figure's numbers stay the benchmark's. A row this does not recognise
# (by its claim) is left as the benchmark wrote it.

def side_note(a, b, fmt, names, lower):
    """' (runs a–b vs c–d; verdict)' of a two-sided generic row, or
    ' (one run)' when a side has a single run."""
    if len(a) < 2 or len(b) < 2:
        return " (%s)" % ONE_RUN
    return " (runs %s vs %s; %s)" % (lo_hi(a, fmt), lo_hi(b, fmt), verdict(a, b, names, lower))


def s_prefetch_e2e(lines, rows):
    """F6.20-F6.35 (bench/prefetch_e2e.py): each side's runs and whether
    they separate; the keyspace load is one run per server."""
    runs = [ln for ln in lines if ln.get("kind") == "run"]

    def side(setting, p, field):
        return [ln[field] for ln in runs if ln.get("setting") == setting and ln.get("pipeline") == p
                and ln.get(field) is not None]
    for r in rows:
        f = r.extra.get("finding")
        if not f:
            continue
        claim, cfg = f.get("claim") or "", f.get("config") or {}
        p, t = cfg.get("pipeline"), cfg.get("setting")
        for head, field, fmt, lower in (("GET rps, ", "rps", "%.0f", False),
                                        ("main thread's CPU per GET, ", "main_cpu_us_per_req", "%.3f", True)):
            if not claim.startswith(head):
                continue
            if claim.startswith(head + "prefetch on / off") and t:
                r.figure += side_note(side(t + "-on", p, field), side(t + "-off", p, field), fmt,
                                      ("prefetch on", "prefetch off"), lower)
            elif claim.startswith(head + "soloist io-threads 1 prefetch on / redis-server"):
                r.figure += side_note(side("t1-on", p, field), side("redis", p, field), fmt,
                                      ("soloist", "redis-server 7.0"), lower)
        if claim.startswith("prefetch batches per GET") and t:
            got = side(t + "-on", p, "prefetch_batches_per_req")
            r.figure += " (%s)" % (ONE_RUN if len(got) < 2 else "runs %s, %s" % (
                lo_hi(got, "%.3f", "batches/GET"), lo_hi(side(t + "-on", p, "prefetch_avg_batch"), "%.1f",
                                                         "keys/batch")))
        elif claim.startswith("loading the keyspace"):
            loads = [ln for ln in lines if ln.get("kind") == "load"]
            servers = {ln.get("server") for ln in loads}
            if loads and len(loads) == len(servers):
                r.figure += " (%s)" % ONE_RUN


def s_big_values(lines, rows):
    """F7.1-F7.27 (bench/big_values.py): the bandwidth runs of each setting
    and whether they separate; the noisy neighbour's runs of each setting,
    without and with the noise."""
    bw = [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == "bandwidth"]
    nz = [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == "noisy" and ln.get("cls") == "small"]

    def mbps(setting, test, mb):
        return [ln["mb_per_s"] for ln in bw if ln.get("setting") == setting and ln.get("test") == test
                and ln.get("value_mb") == mb and ln.get("mb_per_s") is not None]

    def p999(setting, noise):
        return [ln["p999_us"] for ln in nz if ln.get("setting") == setting and ln.get("noise") == noise]
    names = (("on", "on"), ("off", "off"), ("redis", "redis"), ("raw", "ceiling"))
    for r in rows:
        f = r.extra.get("finding")
        if not f:
            continue
        claim, cfg = f.get("claim") or "", f.get("config") or {}
        test, mb = cfg.get("test"), cfg.get("value_mb")
        if " bandwidth, " in claim and mb is not None:
            got = {label: mbps(k, test, mb) for k, label in names}
            if min(len(v) for v in got.values()) < 2:
                r.figure += " (%s)" % ONE_RUN
                continue
            r.figure += ("; runs %s MB/s; on against the ceiling: %s; against off: %s; against redis: %s" % (
                ", ".join("%s %s" % (label, lo_hi(got[label], "%.0f")) for _, label in names),
                verdict(got["on"], got["ceiling"], ("on", "ceiling")),
                verdict(got["on"], got["off"], ("on", "off")),
                verdict(got["on"], got["redis"], ("on", "redis"))))
        elif claim.startswith("target: GET with copy avoidance on"):
            sizes = sorted({ln["value_mb"] for ln in bw if ln.get("test") == "GET" and ln.get("value_mb", 0) >= 8})
            r.figure += "; " + ", ".join("%d MB: %s" % (m, verdict(mbps("on", "GET", m), mbps("raw", "GET", m),
                                                                   ("on", "ceiling"))) for m in sizes)
        elif claim.startswith("bytes the main thread copies"):
            setting = "on" if "copy avoidance on" in claim else "off"
            per = [(m, [ln["bytes_copied_per_get"] for ln in bw if ln.get("setting") == setting
                        and ln.get("test") == "GET" and ln.get("value_mb") == m
                        and ln.get("bytes_copied_per_get") is not None])
                   for m in sorted({ln["value_mb"] for ln in bw if ln.get("test") == "GET"})]
            if any(len(v) < 2 for _, v in per):
                r.figure += " (%s)" % ONE_RUN
            else:
                r.figure += " (runs %s)" % ", ".join("%d MB: %s" % (m, lo_hi(v, "%.0f", "B")) for m, v in per)
        elif claim.startswith("noisy neighbour") and cfg.get("setting"):
            quiet, loud = p999(cfg["setting"], False), p999(cfg["setting"], True)
            r.figure += " (%s)" % (ONE_RUN if min(len(quiet), len(loud)) < 2 else
                                   "p99.9 runs %s without, %s with; %s" % (
                                       lo_hi(quiet, "%.0f"), lo_hi(loud, "%.0f"),
                                       verdict(quiet, loud, ("without", "with"), lower=True)))
        elif claim.startswith("target: small-class p99.9"):
            m = re.search(r"\((\S+) vs (\S+)\)\s*$", claim)
            if m:
                sides = [p999(m.group(1), False), p999(m.group(1), True), p999(m.group(2), True)]
                r.figure += " (%s)" % (ONE_RUN if min(map(len, sides)) < 2 else "p99.9 runs %s without, %s with; "
                                       "%s %s under the same noise" % (
                                           lo_hi(sides[0], "%.0f"), lo_hi(sides[1], "%.0f"), m.group(2),
                                           lo_hi(sides[2], "%.0f")))


# Benchmarks whose generic rows get the runs' spread: fn(lines, rows).
SPREAD = {"prefetch_e2e": s_prefetch_e2e, "big_values": s_big_values}


# ------------------------------------------------- the traces (trace_runs)
#
# bench/trace_runs.py records each setting once and keeps tools/trace.py's
# summary of it: every figure below is one trace's, so each says "(one
# run)". Row ids by the chapter that reads them: F4.80-F4.86 (who is busy,
# a request's time, jobs, the POLL job), F5.30-F5.31 (a woken worker),
# F7.40-F7.41 (a 10 MB reply written between small ones).

def h_trace_runs(run, lines, bench):
    """F4.80-F4.86, F5.30-F5.31, F7.40-F7.41 from bench/trace_runs.py."""
    base = base_conditions(run)
    one_run_of(lines, "trace_runs")
    cmd, src = "make trace", run.rel(bench)
    got = {ln["name"]: ln for ln in lines if ln.get("kind") == "run"}
    rows = []

    def s(name):
        return got[name]["summary"] if name in got else None

    def cfg(*names, extra=()):
        ln = got[names[0]]
        out = ["GET, %s B values, %s connections of redis-benchmark, %s keys" % (
            ln.get("value_size"), ln.get("clients"), ln.get("keys")) if ln.get("setting") == "get"
            else ln.get("load", "")]
        out.append("settings: " + ", ".join(
            "io-threads %s P=%s" % (got[n]["io_threads"], got[n]["pipeline"]) if got[n].get("setting") == "get"
            else n for n in names))
        out += ["io-threads-always-active yes" if ln.get("forced_on") else "default ignition",
                "TRACE recording of %s ms each, in the middle of the load" % ln.get("trace_ms"),
                "each figure one trace (one run)", "the load generator shares the cores"]
        return out + list(extra)

    def pc(x):
        return "%.1f%%" % (100 * x)

    def row(rid, claim, figure, names, extra=()):
        rows.append(Row(rid, claim, figure, dict(base, config=cfg(*names, extra=extra)), cmd, src))

    for rid, p in (("F4.80", 1), ("F4.81", 16)):
        names = ["get-t%d-p%d" % (t, p) for t in (1, 2, 4) if "get-t%d-p%d" % (t, p) in got]
        if len(names) < 2 or "get-t1-p%d" % p not in got:
            continue
        parts = ["io-threads %d: %s busy" % (got[n]["io_threads"], pc(s(n)["shares"]["main"]["busy"])) for n in names]
        row(rid, "the main thread's busy share of a recorded window (inside read, write and commands spans), "
                 "GET P=%d, by io-threads" % p, "; ".join(parts) + " (one run)", names)
    names = [n for n in ("get-t2-p1", "get-t4-p1") if n in got]
    if names:
        parts = []
        for n in names:
            q = s(n)["request_us"]
            parts.append("io-threads %d: %s queued (median %.1f µs of a median request of %.1f µs); worker %s, "
                         "main %s, waiting %s" % (
                             got[n]["io_threads"], pc(s(n)["request_share"]["queued"]), q["queued"]["median"],
                             q["total"]["median"], pc(s(n)["request_share"]["worker"]),
                             pc(s(n)["request_share"]["main"]), pc(s(n)["request_share"]["waiting"])))
        row("F4.82", "the share of requests' time spent queued in an inbox (from main's submit to a worker's take), "
                     "GET P=1, io-threads forced on", "; ".join(parts) + " (one run)", names)
        parts = []
        for n in names:
            sub = s(n)["jobs_submitted"]
            parts.append("io-threads %d: %.2f jobs per request (%s)" % (
                got[n]["io_threads"], s(n)["jobs_per_request"],
                ", ".join("%s %d" % kv for kv in sorted(sub.items()))))
        row("F4.83", "jobs handed to the workers per request, GET P=1, io-threads forced on",
            "; ".join(parts) + " (one run)", names)
    if got:
        names = sorted(got)
        bad = [n for n in names if s(n)["in_order"] != s(n)["requests"]]
        total = sum(s(n)["requests"] for n in names)
        row("F4.84", "requests whose read, commands run and write appear in that order in the trace, every setting",
            "%d of %d requests in order; settings out of order: %s (one run)" % (
                sum(s(n)["in_order"] for n in names), total, ", ".join(bad) or "none"), names)
    if "get-t2-p1" in got and s("get-t2-p1")["poll_jobs"]["n"]:
        pj = s("get-t2-p1")["poll_jobs"]
        sh = s("get-t2-p1")["shares"]["main"]
        row("F4.85", "what main does while a POLL job is out, GET P=1, io-threads 2 forced on: its loop's turns "
                     "and its commands runs per POLL job",
            "%g turns per POLL job (median; p99 %g); %g commands runs (median); POLL job out %.1f µs "
            "(median; p99 %.1f); %d POLL jobs (one run)" % (
                pj["main_turns"]["median"], pj["main_turns"]["p99"], pj["main_runs"]["median"],
                pj["us"]["median"], pj["us"]["p99"], pj["n"]), ["get-t2-p1"])
        row("F4.86", "the main thread's shares of the window, GET P=1, io-threads 2 forced on",
            "busy %s; idle %s (epoll_wait, or asking for the POLL job); waiting %s (one run)" % (
                pc(sh["busy"]), pc(sh["idle"]), pc(sh["waiting"])), ["get-t2-p1"])
    for rid, n in (("F5.30", "get-t4-p1"), ("F5.31", "get-t2-p1")):
        if n in got and s(n)["wakes"]["n"]:
            wk = s(n)["wakes"]
            row(rid, "a worker main woke: from main's last submit during its sleep to its sleep's end, GET P=1, "
                     "io-threads %d forced on" % got[n]["io_threads"],
                "median %.1f µs; p99 %.1f µs; %d wakes (one run)" % (wk["us"]["median"], wk["us"]["p99"], wk["n"]),
                [n])
    big = s("big-t1") and s("big-t1").get("big")
    if big and big["replies"]:
        reps = [r for r in big["replies"] if r["writes"] > 1] or big["replies"]
        med = lambda f: statistics.median(r[f] for r in reps)  # noqa: E731
        row("F7.40", "a 10 MB GET reply written by main beside small GETs: its writes, their time, and the other "
                     "clients' writes between its first and its last, io-threads 1",
            "%g writes per reply (median; %d–%d); from first to last %.0f µs (median); other clients' writes "
            "between its first and last: %g (median; %d–%d); %d replies (one run)" % (
                med("writes"), min(r["writes"] for r in reps), max(r["writes"] for r in reps), med("us"),
                med("other_writes"), min(r["other_writes"] for r in reps), max(r["other_writes"] for r in reps),
                len(reps)), ["big-t1"])
        st = big["small_total_us"]
        row("F7.41", "a small GET's time in the server (its read's start to its reply's write's end) beside 10 MB "
                     "replies, io-threads 1",
            "median %.1f µs; p99 %.1f µs; %d requests (one run)" % (st["median"], st["p99"], st["n"]), ["big-t1"])
    return rows


HANDLERS = {
    "server_vs_redis": h_server_vs_redis,
    "server_vs_redis_pinned": h_server_vs_redis,
    "write_cost": h_write_cost,
    "pipeline_span": h_pipeline_span,
    "phase_shares": h_phase_shares,
    "write_timing": h_write_timing,
    "loadgen_sanity": h_loadgen_sanity,
    "idle_memory": h_idle_memory,
    "p1_anatomy": h_p1_anatomy,
    "queues": h_queues,
    "main_cpu": h_main_cpu,
    "threads_vs_redis": h_threads_vs_redis,
    "ignition_timing": h_ignition_timing,
    "prefetch_micro": h_prefetch_micro,
    "zset_memory": h_zset_memory,
    "trace_cost": h_trace_cost,
    "trace_runs": h_trace_runs,
}

# Rows that read two benchmarks' results: fn(chosen) -> rows, none when
# either is absent.
CROSS = [x_main_cpu_amdahl]


def build_rows(chosen):
    rows = []
    for bench in sorted(chosen):
        run = chosen[bench]
        lines = run.lines[bench]
        got = HANDLERS.get(bench, h_generic)(run, lines, bench)
        if bench in HANDLERS:
            got += h_generic(run, lines, bench)
        if bench in SPREAD:
            SPREAD[bench](lines, got)
        rows += got
    for fn in CROSS:
        rows += fn(chosen)
    seen = {}
    for r in rows:
        r.validate()
        if r.id in seen:
            raise Refused("two rows claim id %s (%s; %s)" % (r.id, seen[r.id], r.claim))
        seen[r.id] = r.claim
    return sorted(rows, key=Row.sort_key)


# ---------------------------------------------------------------- output

def cell_text(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def figure_text(r):
    """A row's figure as FINDINGS.md's Rows table prints it: the figure,
    its note, '|' escaped."""
    return cell_text(r.figure + (" — *%s*" % r.note if r.note else ""))


def stored_runs(results, bench, include_quick=False):
    """The results directories under results holding bench's raw lines,
    oldest first (by provenance date, then name); QUICK=1 runs only with
    include_quick, as FINDINGS.md leaves them out where a full run exists."""
    runs = []
    for fn in sorted(glob.glob(os.path.join(results, "*", bench + ".jsonl"))):
        d = os.path.dirname(fn)
        if not os.path.isfile(os.path.join(d, "provenance.json")):
            continue
        with open(os.path.join(d, "provenance.json")) as f:
            prov = json.load(f)
        if prov.get("quick") and not include_quick:
            continue
        runs.append((prov.get("date", ""), os.path.basename(d), d))
    return [d for _, _, d in sorted(runs)]


def rows_of_run(path, bench):
    """{id: figure text} of the rows bench's raw lines in one results
    directory produce, as FINDINGS.md would print them had it used that
    directory for bench: the rows of that benchmark alone (a row that also
    reads another benchmark's results, CROSS, is not among them). Raises
    Refused where the generator would refuse that run."""
    run = Run(path)
    if bench not in run.lines:
        raise Refused("%s holds no %s results" % (path, bench))
    return {r.id: figure_text(r) for r in build_rows({bench: run})}


def render(rows, chosen, argv_text):
    out = ["# FINDINGS", "",
           "<!-- GENERATED FILE: do not edit. `make findings` reruns the benchmarks and",
           "     rewrites it; `make findings-only` rewrites it from bench/results/. -->", "",
           "Generated by `%s` (tools/findings.py) from the raw results kept in" % argv_text,
           "bench/results/ — never typed by hand. `make findings` runs the benchmarks",
           "(bench/run.py) and regenerates this file; `make findings-only` regenerates it",
           "from the kept results without rerunning. Every row carries its conditions and",
           "the command that reproduces it; ratios are computed here from the runs of both",
           "sides, measured in one run, A and B alternated. Plots drawn from the same",
           "JSON (gnuplot, SVG and PNG) are in each results directory's plots/.", ""]
    srcs = {}
    for bench, run in sorted(chosen.items()):
        srcs.setdefault(os.path.relpath(run.path, ROOT), []).append(bench)
    out.append("Results used:")
    out.append("")
    for path, benches in sorted(srcs.items()):
        out.append("- `%s/` (%s)" % (path, ", ".join(benches)))
    out.append("")
    cores = {str(r.conditions.get("cores")) for r in rows}
    if any(r.note.startswith("redis-benchmark") for r in rows):
        out += ["**Note on every serving figure not marked pinned:** on this %s-core machine"
                % "/".join(sorted(cores)),
                "redis-benchmark and the server share the cores, so P=1 is client-bound: the load generator's",
                "syscalls compete with the server's, and a ratio near 1.0× at P=1 says as much",
                "about redis-benchmark as about either server. The server-CPU-per-request",
                "figure beside each ratio is the less client-bound comparison.", ""]
    for table, title in (("shared", "client and server share the cores"),
                         ("pinned", "server pinned to cpu0, redis-benchmark to cpu1")):
        svr = [r for r in rows if r.extra.get("table") == table]
        if not svr:
            continue
        out += ["## Side by side: soloist / redis-server 7.0 (%s)" % title, "",
                "| row | test | value | P | soloist rps | redis rps | ratio |",
                "|---|---|---|---|---|---|---|"]
        for r in svr:
            e = r.extra
            out.append("| %s | %s | %d B | %d | %s | %s | %s |" % (
                r.id, e["test"], e["size"], e["pipeline"], fmt_rps(e["soloist"]),
                fmt_rps(e["redis"]), fmt_ratio(e["ratio"])))
        out.append("")
    # Summary tables: rows whose extra names a (title, columns) summary.
    tables = []
    for r in rows:
        if r.extra.get("summary") and r.extra["summary"] not in tables:
            tables.append(r.extra["summary"])
    for title, cols in tables:
        out += ["## %s" % title, "", "| row | %s |" % " | ".join(cols),
                "|---|%s" % ("---|" * len(cols))]
        out += ["| %s | %s |" % (r.id, " | ".join(cell_text(c) for c in r.extra["cells"]))
                for r in rows if r.extra.get("summary") == (title, cols)]
        out.append("")
    out += ["## Rows", "", "| ID | claim | figure | conditions | reproduce |", "|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %s | %s | %s | `%s` (raw: `%s`) |" % (
            r.id, cell_text(r.claim), figure_text(r), cell_text(conditions_text(r.conditions)),
            r.command, r.source))
    out.append("")
    return "\n".join(out)


# ------------------------------------------------------------------ plots
#
# A curve that says more than a row is a plot: a function of one
# benchmark's raw lines, registered in PLOTS under a name. A chapter shows
# it with {{plot NAME}} (tools/findings_refs.py); the book draws it with
# draw_plot() from the results FINDINGS.md lists under "Results used", so a
# plot and the rows beside it always come from the same run, and
# `--plots` draws every plot into each used results directory's plots/.
# A plot is named after its benchmark unless a benchmark has several. A
# later step adds its plot by adding one function here.

class PlotSpec:
    def __init__(self, name, bench, title, fn):
        self.name, self.bench, self.title, self.fn = name, bench, title, fn


PLOTS = {}


def plot(name, bench, title):
    """Registers fn(lines) -> (columns, rows, gnuplot body) as plot NAME of
    benchmark BENCH. The body plots the string variable DATA, a file whose
    first line names the columns and whose rows are the figures."""
    def register(fn):
        PLOTS[name] = PlotSpec(name, bench, title, fn)
        return fn
    return register


@plot("pipeline_span", "pipeline_span", "PING requests per second by pipeline depth, 50 clients")
def p_pipeline_span(lines):
    cells = side_by_side(lines, ("pipeline",))
    rows = [(p, round(median_of(cells[(p,)]["soloist"])), round(median_of(cells[(p,)]["redis"])))
            for (p,) in sorted(cells)]
    body = ("set logscale x 2; set logscale y 10; set format y '%.0s%c'; set xrange [0.8:320]; set xlabel 'pipeline depth P (commands per client per round trip)'; "
            "set ylabel 'requests per second (median of runs)'; set key top left; set grid; "
            "set xtics (1, 4, 16, 64, 256); "
            "plot DATA using 1:2 with linespoints lw 2 pt 7 lc rgb '#a23b2a' title 'soloist', "
            "'' using 1:3 with linespoints lw 2 pt 5 dt 2 lc rgb '#3b5b92' title 'redis-server 7.0'")
    return ["P", "soloist_rps", "redis_rps"], rows, body


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


@plot("server_vs_redis", "server_vs_redis", "soloist / redis-server 7.0 by cell, 50 clients, shared cores")
def p_server_vs_redis(lines):
    return _ratio_bars(lines)


@plot("server_vs_redis_pinned", "server_vs_redis_pinned",
      "soloist / redis-server 7.0 by cell, 50 clients, server and load generator pinned")
def p_server_vs_redis_pinned(lines):
    return _ratio_bars(lines)


def _ratio_bars(lines):
    cells = side_by_side(lines, ("test", "value_size", "pipeline"))
    rows = [['"%s %dB P=%d"' % key, round(median_of(cells[key]["soloist"]) / median_of(cells[key]["redis"]), 4)]
            for key in SVR_ORDER if key in cells]
    body = ("set style fill solid 0.6; set boxwidth 0.6; set yrange [0:*]; "
            "set ylabel 'soloist / redis-server (median rps)'; set xtics rotate by -30; set grid y; "
            "plot DATA using 0:2:xtic(1) with boxes lc rgb '#a23b2a' notitle, 1 with lines dt 2 lw 2 title '1.0×'")
    return ["cell", "ratio"], rows, body


QUEUE_BARS = (("spsc", "SPSC"), ("spmc", "SPMC"), ("mpsc", "MPSC"))


@plot("queues_ns_per_item", "queues", "ns per item by discipline: soloist, ck_ring, mutex + condvar")
def p_queues_ns_per_item(lines):
    rows = []
    for test, label in QUEUE_BARS:
        for over in (False, True):
            runs = queue_runs(lines, test, oversubscribed=over)
            if not runs:
                continue
            solo = [x for x in runs if x["impl"] == "soloist" and x.get("commit_batch") in (1, 32)
                    and (test != "spsc" or x["commit_batch"] == 32)]
            ck = [x for x in runs if x["impl"] == "ck_ring"]
            mutex = [x for x in runs if x["impl"] == "mutex_condvar"]
            ln = runs[0]
            name = "%s %dP/%dC%s%s" % (label, ln["producers"], ln["consumers"],
                                        ", commit/32" if test == "spsc" else "", " (over)" if over else "")
            rows.append(['"%s"' % name] + [round(median_of(side, "ns_per_item"), 3) if side else "NaN"
                                           for side in (solo, ck, mutex)])
    body = ("set datafile missing 'NaN'; set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set logscale y 10; set yrange [0.5:*]; "
            "set ylabel 'ns per item (median of runs, log scale)'; set grid y; set key outside right top vertical; "
            "set xtics rotate by -20; "
            "plot DATA using 2:xtic(1) title 'soloist' lc rgb '#a23b2a', "
            "'' using 3 title 'ck_ring' lc rgb '#3b5b92', '' using 4 title 'mutex + condvar' lc rgb '#999999'")
    return ["discipline", "soloist_ns", "ck_ring_ns", "mutex_ns"], rows, body


@plot("batch_size", "queues", "SPSC ring: ns per item by commit batch, 1 producer, 1 consumer")
def p_batch_size(lines):
    runs = queue_runs(lines, "spsc", impl="soloist")
    ck = queue_runs(lines, "spsc", impl="ck_ring")
    ck_ns = round(median_of(ck, "ns_per_item"), 3) if ck else "NaN"
    rows = [(b, round(median_of([x for x in runs if x["commit_batch"] == b], "ns_per_item"), 3), ck_ns)
            for b in sorted({x["commit_batch"] for x in runs})]
    body = ("set logscale x 2; set xrange [0.8:40]; set xtics (1, 2, 4, 8, 16, 32); set yrange [0:*]; "
            "set xlabel 'items per commit (one release store of tail per batch)'; "
            "set ylabel 'ns per item (median of runs)'; set grid; set key top right; "
            "plot DATA using 1:2 with linespoints lw 2 pt 7 lc rgb '#a23b2a' title 'soloist SPSC', "
            "'' using 1:3 with lines dt 2 lw 2 lc rgb '#3b5b92' title 'ck_ring SPSC (per item)'")
    return ["commit_batch", "soloist_ns", "ck_ring_ns"], rows, body


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


@plot("ignition_over_time", "ignition_timing",
      "I/O threads active and offered load over time (soloist io-threads 4, default ignition)")
def p_ignition_over_time(lines):
    samples = [ln for ln in lines if ln.get("kind") == "sample"]
    if not samples:
        raise NotMeasured("plot ignition_over_time: no samples (%s)"
                          % ("; ".join(skipped_why(lines, has="io_threads")) or "nothing polled"))
    closed = [ln["rps"] for ln in lines if ln.get("kind") == "step" and ln.get("loop") == "closed"]
    rows = []
    for ln in samples:
        offered = ln["offered_rps"]
        if offered and offered < 0:  # closed loop: its achieved rate, known at its end
            offered = statistics.median(closed) if closed else "NaN"
        rows.append((ln["t_s"], ln["active"], round(offered / 1000, 3) if offered != "NaN" else "NaN"))
    body = ("set datafile missing 'NaN'; set xlabel 'seconds'; set ylabel 'threads active'; "
            "set y2label 'offered load (thousand requests/s)'; set ytics nomirror; set y2tics; "
            "set yrange [0:*]; set y2range [0:*]; set offsets 0, 0, 0.5, 0; set grid; set key top left; "
            "plot DATA using 1:2 with steps lw 2 lc rgb '#a23b2a' title 'io_threads_active', "
            "'' using 1:3 axes x1y2 with steps lw 1 dt 2 lc rgb '#3b5b92' title 'offered (closed loop: achieved)'")
    return ["t_s", "active", "offered_krps"], rows, body


@plot("prefetch_chains", "prefetch_micro",
      "Linked-list toy: ns per node by lists in flight, 4 KiB pages (1 = one list after another)")
def p_prefetch_chains(lines):
    ch = pm_runs(lines, "chains", pages="4K")
    seq = [x for x in ch if x["method"] == "sequential"]
    if not seq:
        return ["lists", "interleaved_ns", "prefetch_ns"], [], ""
    s = round(median_of(seq, "ns_per_node"), 3)
    rows = [(1, s, s)]
    for k in sorted({x["chains"] for x in ch if x["method"] != "sequential"}):
        rows.append((k,) + tuple(round(median_of([x for x in ch if x["method"] == m and x["chains"] == k],
                                                 "ns_per_node"), 3) for m in ("interleaved", "prefetch")))
    body = ("set logscale x 2; set logscale y 10; set xrange [0.8:40]; set xtics (1, 2, 4, 8, 16, 32); "
            "set xlabel 'lists walked at once (independent loads in flight)'; "
            "set ylabel 'ns per node (median of runs, log scale)'; set grid; set key top right; "
            "plot DATA using 1:2 with linespoints lw 2 pt 7 lc rgb '#3b5b92' title 'interleaved', "
            "'' using 1:3 with linespoints lw 2 pt 5 lc rgb '#a23b2a' title 'interleaved + prefetch'")
    return ["lists", "interleaved_ns", "prefetch_ns"], rows, body


@plot("prefetch_batch", "prefetch_micro",
      "soloist's hashtable: ns per lookup by batch of resumable finds, per table size (THP off)")
def p_prefetch_batch(lines):
    tb = [x for x in pm_runs(lines, "table") if x.get("thp") in ("off", "off_unavailable")]
    sizes = sorted({x["keys"] for x in tb})
    batches = sorted({x["batch"] for x in tb if x["method"] == "batch"})
    rows = []
    for n in batches:
        rows.append([n] + [round(median_of([x for x in tb if x["keys"] == k and x["method"] == "batch"
                                            and x["batch"] == n], "ns_per_lookup"), 3) for k in sizes])
    names = []
    for k in sizes:
        ln = next(x for x in tb if x["keys"] == k)
        level = residency(ln).split("-")[0].split(",")[0]  # "L2", "L3", "DRAM" or the long form
        names.append("%s keys, %s (%s)" % (fmt_rps(k), mib(ln["table_bytes"]), level))
    colors = ("#bbbbbb", "#999999", "#6fa3c7", "#3b5b92", "#a23b2a", "#6b1d12", "#222222")
    body = ("set logscale x 2; set logscale y 10; set xrange [0.8:160]; set xtics (1, 2, 4, 8, 16, 32, 64, 128); "
            "set xlabel 'resumable finds stepped round robin (batch size)'; "
            "set ylabel 'ns per lookup (median of runs, log scale)'; set grid; set key top right font ',9'; "
            "plot " + ", ".join("%s using 1:%d with linespoints lw 2 lc rgb '%s' title '%s'"
                                % ("DATA" if i == 0 else "''", i + 2, colors[i % len(colors)], names[i])
                                for i in range(len(sizes))))
    return ["batch"] + ["keys_%d_ns" % k for k in sizes], rows, body
BV_SETTINGS = (("on", "copy avoidance on"), ("off", "copy avoidance off"), ("on-t2", "on, io-threads 2"),
               ("redis", "redis-server 7.0"), ("raw", "raw loopback ceiling"))


@plot("big_values_bandwidth", "big_values",
      "GET bandwidth by value size, one connection")
def p_big_values_bandwidth(lines):
    runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == "bandwidth" and ln.get("test") == "GET"]
    if not runs:
        raise NotMeasured("plot big_values_bandwidth: no GET bandwidth runs")
    sizes = sorted({ln["value_mb"] for ln in runs})
    rows = []
    for mb in sizes:
        row = [mb]
        for key, _ in BV_SETTINGS:
            side = [ln for ln in runs if ln["value_mb"] == mb and ln["setting"] == key]
            row.append(round(median_of(side, "mb_per_s")) if side else "NaN")
        rows.append(row)
    colors = ["#a23b2a", "#6fa3c7", "#d08c3a", "#3b5b92", "#888888"]
    body = ("set datafile missing 'NaN'; set logscale x 2; set xlabel 'value size (MB)'; "
            "set ylabel 'MB/s (median of runs)'; set yrange [0:*]; set grid; set key outside right top vertical; "
            "plot " + ", ".join("%s using 1:%d with linespoints lw 2 lc rgb '%s' title '%s'"
                                % ("DATA" if i == 0 else "''", i + 2, colors[i], title)
                                for i, (_, title) in enumerate(BV_SETTINGS)))
    return ["value_mb"] + ["%s_mb_per_s" % k for k, _ in BV_SETTINGS], rows, body


@plot("noisy_neighbour", "big_values",
      "1 KB GETs' p99.9 without and with 10 MB GETs beside them")
def p_noisy_neighbour(lines):
    runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == "noisy" and ln.get("cls") == "small"]
    if not runs:
        raise NotMeasured("plot noisy_neighbour: no noisy-neighbour runs")
    order = []
    for ln in runs:
        if ln["setting"] not in order:
            order.append(ln["setting"])
    rows = []
    for setting in order:
        quiet = [ln for ln in runs if ln["setting"] == setting and not ln["noise"]]
        noisy = [ln for ln in runs if ln["setting"] == setting and ln["noise"]]
        rows.append(['"%s"' % setting, round(median_of(quiet, "p999_us") / 1000, 2) if quiet else "NaN",
                     round(median_of(noisy, "p999_us") / 1000, 2) if noisy else "NaN"])
    body = ("set datafile missing 'NaN'; set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set yrange [0:*]; "
            "set ylabel 'small GETs p99.9 (ms)'; set grid y; set key outside right top vertical; "
            "plot DATA using 2:xtic(1) title 'without noise' lc rgb '#6fa3c7', "
            "'' using 3 title 'with 10 MB GETs beside' lc rgb '#a23b2a'")
    return ["setting", "quiet_p999_ms", "noisy_p999_ms"], rows, body


@plot("zset_bytes_per_member", "zset_memory", "Bytes per sorted-set member by layout and size, ZADD NX of m:{i}")
def p_zset_bytes_per_member(lines):
    sides = zset_runs(lines)
    order = [(k, label) for k, label in ZSET_SIDES if k in sides]
    sizes = [ln["n"] for ln in sides[order[0][0]]["add"]]
    rows = []
    for n in sizes:
        row = ['"%s members"' % fmt_count(n)]
        for k, _ in order:
            b = {ln["n"]: ln["bytes_per_member"] for ln in sides[k]["add"]}
            row.append(b.get(n, "NaN"))
        rows.append(row)
    colours = ["#999999", "#d98b3a", "#7a4f9a", "#a23b2a", "#3b5b92"]
    series = ["%s using %d%s title '%s' lc rgb '%s'" % ("DATA" if i == 0 else "''", i + 2,
                                                         ":xtic(1)" if i == 0 else "", label, colours[i % 5])
              for i, (_, label) in enumerate(order)]
    body = ("set datafile missing 'NaN'; set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set yrange [0:*]; "
            "set ylabel 'bytes per member (used_memory growth / members)'; set grid y; "
            "set key outside right top vertical; plot " + ", ".join(series))
    return ["size"] + [k for k, _ in order], rows, body


@plot("watermark_overlap", "watermark",
      "GETs run behind a write in flight, and main's CPU per GET with the watermark on and off")
def p_watermark_overlap(lines):
    runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("setting") in ("on", "off")]
    if not runs:
        raise NotMeasured("plot watermark_overlap: no runs")
    cells = sorted({(ln["size"], ln["threads"]) for ln in runs})
    rows = []
    for size, t in cells:
        side = {s: [ln for ln in runs if ln["size"] == size and ln["threads"] == t and ln["setting"] == s]
                for s in ("on", "off")}
        name = "1 MB" if size == 1048576 else "16 KB" if size == 16384 else "%d B" % size
        rows.append(['"%s, io-threads %d"' % (name, t),
                     round(100 * median_of(side["on"], "during_write_share"), 3),
                     round(median_of(side["on"], "main_cpu_us_per_req_with_spin"), 3),
                     round(median_of(side["off"], "main_cpu_us_per_req_with_spin"), 3)])
    body = ("set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set logscale y; set yrange [0.001:*]; "
            "set ylabel '% of GETs (bars 1); main CPU µs per GET (bars 2, 3); log scale'; set grid y; "
            "set key outside right top vertical; set xtics rotate by -30; "
            "plot DATA using 2:xtic(1) title '% of GETs behind a write (on)' lc rgb '#888888', "
            "'' using 3 title 'main µs/GET, watermark on' lc rgb '#a23b2a', "
            "'' using 4 title 'main µs/GET, off (waits)' lc rgb '#3b5b92'")
    return ["cell", "during_write_pct", "main_us_on", "main_us_off"], rows, body


def draw_plot(name, run, dest, work, terminal="svg"):
    """Draws plot NAME from `run`'s raw lines into dest (an .svg, or a .png
    with terminal='png'); the figures go to work/NAME.dat beside it.
    Raises Refused when the run lacks the benchmark or gnuplot fails."""
    spec = PLOTS[name]
    if spec.bench not in run.lines:
        raise Refused("plot %s: %s has no %s results" % (name, run.name, spec.bench))
    columns, rows, body = spec.fn(run.lines[spec.bench])
    if not rows:
        raise Refused("plot %s: no runs in %s" % (name, run.rel(spec.bench)))
    os.makedirs(work, exist_ok=True)
    dat = os.path.join(work, name + ".dat")
    with open(dat, "w") as f:
        f.write("# " + " ".join(columns) + "\n")
        for r in rows:
            f.write(" ".join(str(x) for x in r) + "\n")
    term = ("svg size 760,420 dynamic noenhanced font 'DejaVu Sans,11' background rgb 'white'"
            if terminal == "svg" else "pngcairo size 760,420 noenhanced font 'DejaVu Sans,10'")
    script = ("set terminal %s\nset output '%s'\nDATA = '%s'\nset title '%s'\n%s\n"
              % (term, dest, dat, spec.title.replace("'", "''"), body))
    try:
        r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise Refused("plot %s: gnuplot is not installed (make deps installs it)" % name)
    if r.returncode != 0:
        raise Refused("plot %s: gnuplot failed: %s" % (name, r.stderr.strip()[:400]))
    return dest


def plots(chosen):
    """Every registered plot whose benchmark was used, as SVG and PNG in
    that results directory's plots/ (optional: needs gnuplot)."""
    if not shutil.which("gnuplot"):
        return []
    made = []
    for name, spec in sorted(PLOTS.items()):
        run = chosen.get(spec.bench)
        if run is None:
            continue
        d = os.path.join(run.path, "plots")
        for term in ("svg", "png"):
            try:
                made.append(draw_plot(name, run, os.path.join(d, "%s.%s" % (name, term)), d, terminal=term))
            except NotMeasured as e:
                sys.stderr.write("findings: %s; left out\n" % e)
                break
    return made


def main(argv=None):
    ap = argparse.ArgumentParser(description="generate FINDINGS.md from bench/results")
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--out", default=os.path.join(ROOT, "FINDINGS.md"))
    ap.add_argument("--run", help="use this one results directory only")
    ap.add_argument("--include-quick", action="store_true")
    ap.add_argument("--plots", action="store_true", help="also write gnuplot SVGs")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; fail if --out differs from what would be written")
    ap.add_argument("--command", default="make findings",
                    help="the command named in the header")
    a = ap.parse_args(argv)
    try:
        chosen = select(load_runs(a.results), a.include_quick, a.run)
        if not chosen:
            raise Refused("no results under %s (run `make bench` first)" % a.results)
        rows = build_rows(chosen)
        text = render(rows, chosen, a.command)
    except (Refused, KeyError, ValueError, TypeError) as e:
        sys.stderr.write("findings: refused: %s%s\n" % (type(e).__name__ + ": " if not isinstance(e, Refused) else "", e))
        return 1
    if a.check:
        try:
            with open(a.out) as f:
                same = f.read() == text
        except OSError:
            same = False
        sys.stderr.write("findings: %s is %s\n" % (a.out, "up to date" if same else "STALE"))
        return 0 if same else 1
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)
    try:
        made = plots(chosen) if a.plots else []
    except Refused as e:
        sys.stderr.write("findings: wrote %s; plots refused: %s\n" % (os.path.relpath(a.out), e))
        return 1
    sys.stderr.write("findings: wrote %s (%d rows)%s\n" % (
        os.path.relpath(a.out), len(rows), "; plots: " + ", ".join(
            os.path.relpath(m, ROOT) for m in made) if made else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
