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


def h_phase_shares(run, lines, bench):
    base = base_conditions(run)
    rows = []
    for i, p in enumerate((1, 16)):
        runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("pipeline") == p]
        if not runs:
            continue
        if len({ln.get("run_id") for ln in runs}) != 1:
            raise Refused("phase_shares P=%d mixes runs" % p)
        order = ["read", "exec", "write", "other"]
        phases = sorted({k for ln in runs for k in ln["share_of_busy"]},
                        key=lambda k: (order.index(k) if k in order else len(order), k))
        med = {k: statistics.median(ln["share_of_busy"].get(k, 0) for ln in runs) for k in phases}
        tot = {k: statistics.median(ln["share_of_total"].get(k, 0) for ln in runs)
               for k in sorted({k for ln in runs for k in ln["share_of_total"]})}
        busy = statistics.median(ln["busy_us_per_request"] for ln in runs)
        fig = ("of busy time: " + ", ".join("%s **%.0f%%**" % (k, 100 * v) for k, v in med.items())
               + "; serial share s = exec/busy = **%.2f**" % med.get("exec", 0)
               + "; poll (idle/wait) %.0f%% of all; busy %.2f µs/request"
               % (100 * tot.get("poll", 0), busy))
        ln = runs[0]
        cfg = ["GET", "P=%d" % p, "50 clients", "3 B values", "keyspace -r %s" % ln.get("keyspace"),
               "%d runs, median" % len(runs), "io-threads 1", placement_cfg(ln, base["cores"])]
        rows.append(Row("F0.%d" % (20 + i),
                        "where %s's main thread spends its busy time (INFO main_thread_*_us), GET P=%d"
                        % (a_label(runs), p), fig, dict(base, config=cfg),
                        "make findings BENCH=phase_shares", run.rel(bench),
                        serving_note(ln, base["cores"])))
    return rows


LOADGEN_CFG = ("command", "conns", "clients", "pipeline", "value_bytes", "keys", "threads",
               "seconds", "runs", "server", "pinned")


def h_loadgen_sanity(run, lines, bench):
    """bench/loadgen_sanity.sh (the load generator's author writes it):
    its summary line carries the ratio it computed from paired runs."""
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
    "loadgen_sanity": h_loadgen_sanity,
    "idle_memory": h_idle_memory,
    "p1_anatomy": h_p1_anatomy,
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
    out += ["## Rows", "", "| ID | claim | figure | conditions | reproduce |", "|---|---|---|---|---|"]
    for r in rows:
        fig = r.figure + (" — *%s*" % r.note if r.note else "")
        out.append("| %s | %s | %s | %s | `%s` (raw: `%s`) |" % (
            r.id, cell_text(r.claim), cell_text(fig), cell_text(conditions_text(r.conditions)),
            r.command, r.source))
    out.append("")
    return "\n".join(out)


def draw(d, name, body):
    """Render one gnuplot body to NAME.svg and NAME.png in d."""
    made = []
    for term, ext in (("svg size 720,420 dynamic", "svg"), ("pngcairo size 720,420", "png")):
        out = os.path.join(d, "%s.%s" % (name, ext))
        script = "set terminal %s; set output '%s'; %s" % (term, out, body)
        if subprocess.run(["gnuplot", "-e", script], check=False,
                          stderr=subprocess.DEVNULL).returncode == 0:
            made.append(out)
    return made


def plots(chosen):
    """gnuplot SVG and PNG into each used results directory's plots/, drawn
    from the same per-run lines as the rows (optional: needs gnuplot)."""
    if not shutil.which("gnuplot"):
        return []
    made = []
    if "pipeline_span" in chosen:
        run = chosen["pipeline_span"]
        cells = side_by_side(run.lines["pipeline_span"], ("pipeline",))
        d = os.path.join(run.path, "plots")
        os.makedirs(d, exist_ok=True)
        dat = os.path.join(d, "pipeline_span.dat")
        with open(dat, "w") as f:
            f.write("# P soloist_rps redis_rps (medians)\n")
            for (p,) in sorted(cells):
                f.write("%d %.0f %.0f\n" % (p, median_of(cells[(p,)]["soloist"]),
                                             median_of(cells[(p,)]["redis"])))
        made += draw(d, "pipeline_span",
                     "set logscale xy; set xlabel 'pipeline depth P'; "
                     "set ylabel 'PING rps (median)'; set key left; set grid; "
                     "set title 'PING rps by pipeline depth, 50 clients (%s)'; "
                     "plot '%s' u 1:2 w lp lw 2 t 'soloist', '' u 1:3 w lp lw 2 t 'redis-server 7.0'"
                     % (run.name, dat))
    for bench in ("server_vs_redis", "server_vs_redis_pinned"):
        if bench not in chosen:
            continue
        run = chosen[bench]
        cells = side_by_side(run.lines[bench], ("test", "value_size", "pipeline"))
        d = os.path.join(run.path, "plots")
        os.makedirs(d, exist_ok=True)
        dat = os.path.join(d, bench + ".dat")
        with open(dat, "w") as f:
            f.write("# cell ratio(soloist/redis, medians)\n")
            for key in SVR_ORDER:
                if key in cells:
                    f.write('"%s %dB P=%d" %.4f\n' % (key[0], key[1], key[2],
                                                      median_of(cells[key]["soloist"]) /
                                                      median_of(cells[key]["redis"])))
        made += draw(d, bench,
                     "set style fill solid 0.6; set boxwidth 0.6; set yrange [0:*]; "
                     "set ylabel 'soloist / redis-server (median rps)'; set xtics rotate by -30; "
                     "set grid y; set title 'soloist / redis-server 7.0, 50 clients (%s)'; "
                     "plot '%s' u 0:2:xtic(1) w boxes notitle, 1 w l dt 2 lw 2 t '1.0x'"
                     % (run.name, dat))
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
    made = plots(chosen) if a.plots else []
    sys.stderr.write("findings: wrote %s (%d rows)%s\n" % (
        os.path.relpath(a.out), len(rows), "; plots: " + ", ".join(
            os.path.relpath(m, ROOT) for m in made) if made else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
