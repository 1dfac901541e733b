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
  - rows sort stably by ID (F0.2 before F0.10) and the output depends
    only on the inputs (no generation timestamp), so regenerating from
    the same results gives the same file.

Which results: for each benchmark, the newest results directory holding
it, preferring full runs to QUICK=1 development runs (--include-quick
lets those count; --run DIR uses one directory only).

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
        ratios.append((ratio, key))
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
        met = sum(1 for r, _ in ratios if r >= 1.0)
        geo = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
        low, lk = min(ratios)
        fig = "%d of %d cells ≥ 1.0×; geometric mean **%s**; lowest %s (%s %d B P=%d)" % (
            met, len(ratios), fmt_ratio(geo), fmt_ratio(low), lk[0], lk[1], lk[2])
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
            fig = "**%.0f ns** per call (median of %d runs)" % (ln["median_wall_ns_per_call"], ln["runs"])
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
        by = ", ".join("P=%d %s" % (d, fmt_rps(m[d])) for d in depths)
        if 1 in m and 256 in m:
            span = "span (P=256 / P=1) **%s**" % fmt_ratio(m[256] / m[1])
        else:
            span = "span not measured (P=1 or P=256 missing)"
        who = a_label(cells[(depths[0],)][s]) if s == "soloist" else "redis-server 7.0"
        rows.append(Row("F0.%d" % (17 + i), "pipelining span of %s: PING rps by depth" % who,
                        "%s; %s" % (span, by), dict(base, config=cfg), cmd, run.rel(bench),
                        serving_note(ln, base["cores"])))
    by = ", ".join("P=%d %s" % (d, fmt_ratio(med["soloist"][d] / med["redis"][d])) for d in depths)
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
               + "; serial share s = (exec + other) / busy = **%.2f**" % s
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
        rows += amdahl_rows(run, bench, p, s, "F0.%d" % (20 + i), 1 + 4 * i, cfg)
    return rows


AMDAHL_THREADS = (2, 4, 8, 16)


def amdahl(s, n):
    """Amdahl's bound on the speed-up with n threads when a share s of the
    work stays serial: 1 / (s + (1 - s) / n)."""
    return 1.0 / (s + (1.0 - s) / n)


def amdahl_rows(run, bench, p, s, source_row, first, cfg):
    """F1.1-F1.4 (P=1) and F1.5-F1.8 (P=16): the ceiling on the speed-up
    I/O threads can give, from the serial share the phase_shares row
    `source_row` measured; no measurement of their own."""
    base = base_conditions(run)
    rows = []
    for k, n in enumerate(AMDAHL_THREADS):
        fig = ("speed-up at most **%.2f×** with %d threads (1 / (s + (1 − s) / %d), s = %.2f from %s)"
               % (amdahl(s, n), n, n, s, source_row))
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
            fig = ("%s rps; latency p50 **%.0f µs**, p99 **%.0f µs**, p99.9 %.0f µs; server CPU "
                   "**%.2f µs/request**; %.3f system calls/request (read %.3f, writev %.3f, epoll_wait %.3f)"
                   % (fmt_rps(m["rps"]), m["p50"], m["p99"], m["p99.9"], m["cpu_us_per_request"],
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
               + "; rps %s; server CPU per request **%s**" % (fmt_ratio(b["rps"] / a["rps"]),
                                                              fmt_ratio(b["cpu_us_per_request"] /
                                                                        a["cpu_us_per_request"])))
        rows.append(Row("F0.%d" % (52 + 3 * k),
                        "writing replies immediately instead of in before_sleep, %s loop: ratios" % loop,
                        fig, dict(base, config=cfg), cmd, run.rel(bench), sb(serving_note(ln, base["cores"]))))
        costs.append((loop, a, b, cfg))
    if costs:
        parts = []
        for loop, a, b, _ in costs:
            d = b["syscalls_per_request"] - a["syscalls_per_request"]
            parts.append("%s loop %.3f → %.3f system calls/request (**%+.3f**, %+.1f%%; writev %.3f → %.3f, "
                         "epoll_wait %.3f → %.3f)"
                         % (loop, a["syscalls_per_request"], b["syscalls_per_request"], d,
                            100 * d / a["syscalls_per_request"], a["writes_per_request"],
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
        a, b = sides["soloist"], sides["redis"]
        cfg = ["%d connections" % a["connections"], IDLE_MOMENTS[moment],
               "idle %s s before the reading" % a["idle_s"] if moment == "after_ping" else "read 0.5 s after the last accept",
               "RSS growth over the RSS after one throwaway PING", "--maxclients %d" % a["maxclients"],
               "one run per server"]
        ratio = a["bytes_per_conn"] / b["bytes_per_conn"]
        fig = lambda ln: "**%s B** per connection (RSS %.1f → %.1f MB)" % (
            "{:,.0f}".format(ln["bytes_per_conn"]), ln["rss_base_bytes"] / 2**20, ln["rss_bytes"] / 2**20)
        if moment == "connected":
            rows.append(Row("F0.40", "resident memory per idle connection, %s: %s" % (
                IDLE_MOMENTS[moment], a_label([a])), fig(a), dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.41", "resident memory per idle connection, %s: redis-server 7.0" % IDLE_MOMENTS[moment],
                            fig(b), dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.42", "idle connection memory, %s: soloist / redis-server 7.0" % IDLE_MOMENTS[moment],
                            "**%s**" % fmt_ratio(ratio), dict(base, config=cfg), cmd, run.rel(bench)))
        else:
            rows.append(Row("F0.43", "resident memory per idle connection, %s" % IDLE_MOMENTS[moment],
                            "%s %s; redis-server 7.0 %s" % (a_label([a]), fig(a), fig(b)),
                            dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.44", "idle connection memory, %s: soloist / redis-server 7.0" % IDLE_MOMENTS[moment],
                            "**%s**" % fmt_ratio(ratio), dict(base, config=cfg), cmd, run.rel(bench)))
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

    def kinds(d):
        per = dict(d["per_request"])
        wait = per.pop("epoll_wait", 0) + per.pop("epoll_pwait", 0)
        parts = ["epoll_wait %.3f" % wait] + ["%s %.2f" % (k, v) for k, v in sorted(per.items()) if v >= 0.01]
        return "%s (all %.2f)" % (", ".join(parts), d["total_syscalls_per_request"])

    rows = []
    for rid, side, who in (("F0.45", "server", "the server's"), ("F0.46", "client", "redis-benchmark's")):
        a, b = one("GET", side, "soloist"), one("GET", side, "redis")
        rows.append(Row(rid, "GET at P=1: %s system calls per request, by kind" % who,
                        "soloist: %s; redis-server 7.0: %s" % (kinds(a), kinds(b)),
                        dict(base, config=cfg), cmd, src))
    fig = "; ".join("%s **%.1f** vs %.1f (one ready client in %.0f%% vs %.0f%% of wake-ups)" % (
        t, one(t, "server", "soloist")["requests_per_wakeup"], one(t, "server", "redis")["requests_per_wakeup"],
        100 * one(t, "server", "soloist")["single_event_wakeup_share"],
        100 * one(t, "server", "redis")["single_event_wakeup_share"]) for t in tests)
    rows.append(Row("F0.47", "P=1: requests per epoll wake-up of the server, soloist vs redis-server 7.0",
                    fig, dict(base, config=cfg), cmd, src))
    fig = "; ".join("%s **%.3f** vs %.3f" % (t, one(t, "client", "soloist")["wakes_other_per_request"],
                                              one(t, "client", "redis")["wakes_other_per_request"]) for t in tests)
    rows.append(Row("F0.48", "P=1: wake-ups redis-benchmark performs per request (its sendto finding the "
                    "server asleep in epoll_wait), against soloist vs against redis-server 7.0",
                    fig, dict(base, config=cfg), cmd, src))
    fig = "; ".join("%s client %.3f vs %.3f cs, %.1f vs %.1f µs; server %.3f vs %.3f cs" % (
        t, one(t, "client", "soloist")["context_switches_per_request"],
        one(t, "client", "redis")["context_switches_per_request"],
        one(t, "client", "soloist")["cpu_us_per_request"], one(t, "client", "redis")["cpu_us_per_request"],
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


def one_run_id(sides, what):
    """Refuses a comparison whose sides are missing or came from
    different runs."""
    for name, side in sides.items():
        if not side:
            raise Refused("queues %s: no %s runs; a comparison needs both sides from the same run"
                          % (what, name))
    ids = {ln.get("run_id") for side in sides.values() for ln in side}
    if len(ids) != 1 or None in ids:
        raise Refused("queues %s: its sides come from different runs %s; a ratio must be measured "
                      "in one run" % (what, sorted(map(str, ids))))


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
    """Rows F2.1-F2.13 and F3.1-F3.8 from bench/queues.c's run lines."""
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
                "**%.1f ns/item** (runs %s); %s the SPSC ring's batched figure"
                % (ns(mutex), ns_runs(mutex), fmt_ratio(ns(mutex) / ns(b))),
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

    # The idle pool (F2.12, F2.13).
    for rid, state, what in (("F2.12", "parked", "parked (sleeping on their mutex)"),
                             ("F2.13", "active", "active with nothing to do (spinning)")):
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
             "%d runs, median, parked and active alternated" % len(side)],
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
            "**%s items/s** (%.2f ns/item)" % (fmt_rps(ips["8-byte"]), ns(s8)), cfg)
        row("F3.2", "SPSC protocol with two-word (16-byte) slots: items per second",
            "**%s items/s** (%.2f ns/item)" % (fmt_rps(ips["16-byte"]), ns(s16)), cfg)
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
            return "%.3f (slots %.3f, tail %.3f, head %.4f)" % (
                median_of(side, "computed_lines_per_item"), d["slot_lines"], d["tail_loads_new"],
                d["head_loads_new"])
        hw = all(x.get("hw_l1d_read_misses_per_item") is not None for x in one + b)
        fig = "COMPUTED lines moved per item: per-item commit **%s**, commit per 32 **%s**" % (part(one), part(b))
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
                        ln.get("note", "")))
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
}


def build_rows(chosen):
    rows = []
    for bench in sorted(chosen):
        run = chosen[bench]
        lines = run.lines[bench]
        rows += HANDLERS.get(bench, h_generic)(run, lines, bench)
        if bench in HANDLERS:
            rows += h_generic(run, lines, bench)
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
        fig = r.figure + (" — *%s*" % r.note if r.note else "")
        out.append("| %s | %s | %s | %s | `%s` (raw: `%s`) |" % (
            r.id, cell_text(r.claim), cell_text(fig), cell_text(conditions_text(r.conditions)),
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
            made.append(draw_plot(name, run, os.path.join(d, "%s.%s" % (name, term)), d, terminal=term))
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
