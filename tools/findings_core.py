"""findings_core.py — what every benchmark's part of FINDINGS.md shares.

Tooling for every step (step 0 wrote it). Owns the model of a finding and
the rules each row obeys; tools/findings.py (the program) and the
per-benchmark modules in tools/findings_bench/ build on it:
  - Run, load_runs() and select(): the results directories and, for each
    benchmark, the one FINDINGS.md uses;
  - Row: one finding, refused (Refused) when it lacks its conditions, its
    figure or its reproducing command, or cites raw results that are not
    stored;
  - the conditions every row carries (base_conditions), the numbers'
    formats, and the runs' spread and verdicts (runs_spread, lo_hi,
    verdict, separation, overlap) that a chapter's reading of a row is
    checked against;
  - the refusals a comparison shares (side_by_side, one_run_id,
    one_run_of): both sides from one run;
  - h_generic, the rows a benchmark prints itself, and side_note;
  - the plots' registry: PLOTS, filled by the @plot decorator.
Python 3 standard library only; single-threaded.

No Valkey anchor (tooling).
"""

import glob
import json
import math
import os
import re
import statistics


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
        # The raw results a row cites (run.rel(), relative to the
        # repository) must be stored: bench/results/ keeps only the runs
        # something uses, and a row citing a deleted one would send its
        # reader to nothing.
        if not self.source or not os.path.isfile(os.path.join(ROOT, self.source)):
            raise Refused("row %s (%s) cites raw results %s, which are not stored; a row may cite only "
                          "results kept in bench/results/" % (self.id, self.claim, self.source or "(none)"))


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
        if not {"soloist", "redis"} <= set(sides):  # a third peer (valkey) may stand beside them
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


def geomean(xs):
    """The geometric mean of positive ratios, the mean fit for them."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


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


def separation(a, b, names):
    """Whether two settings' runs separate on a lower-is-better figure."""
    if max(a) < min(b):
        return "%s lower in every run" % names[0]
    if max(b) < min(a):
        return "%s lower in every run" % names[1]
    return "run ranges overlap"


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


def a_label(side):
    really = {ln.get("server_is", "soloist") for ln in side}
    return "soloist" if really == {"soloist"} else "STAND-IN(%s)" % ",".join(sorted(really))


# ---------------------------------------------- what several handlers share

# The eight cells of server_vs_redis, in row order; main_cpu and
# threads_vs_redis measure the same cells.
SVR_ORDER = [(t, d, p) for t in ("GET", "SET") for d in (3, 512) for p in (1, 16)]


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


# -------------------------------- not measured: a setting the benchmark skipped
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


def sb_cfg(text):
    """A placement note for benchmarks driven by soloist-bench."""
    return text.replace("redis-benchmark", "soloist-bench")


# -------------------------------------------- rows a benchmark prints itself

def printed_rows(rows):
    """(row, claim, config) of each row a benchmark printed itself (its
    "finding" line kept in row.extra), for a SPREAD function to amend."""
    for r in rows:
        f = r.extra.get("finding")
        if f:
            yield r, f.get("claim") or "", f.get("config") or {}


def h_generic(run, lines, bench):
    """The rows a benchmark printed as JSON lines {"finding": true, "id":
    ..., "claim": ..., "figure": ..., "config": {...}}, with the run's
    conditions; every benchmark's lines pass through it."""
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
# added by that benchmark's module (SPREAD in findings_bench/__init__.py),
# from the same run lines, after the benchmark's own figure, so the
# figure's numbers stay the benchmark's. A row it does not recognise (by
# its claim) is left as the benchmark wrote it.

def side_note(a, b, fmt, names, lower):
    """' (runs a–b vs c–d; verdict)' of a two-sided generic row, or
    ' (one run)' when a side has a single run."""
    if len(a) < 2 or len(b) < 2:
        return " (%s)" % ONE_RUN
    return " (runs %s vs %s; %s)" % (lo_hi(a, fmt), lo_hi(b, fmt), verdict(a, b, names, lower))


# ------------------------------------------------------------------ plots
#
# A curve that says more than a row is a plot: a function of one
# benchmark's raw lines, registered in PLOTS under a name. A chapter shows
# it with {{plot NAME}} (tools/findings_refs.py); the book draws it with
# draw_plot() (tools/findings.py) from the results FINDINGS.md lists under
# "Results used", so a plot and the rows beside it always come from the
# same run, and `--plots` draws every plot into each used results
# directory's plots/. A plot is named after its benchmark unless a
# benchmark has several. A later step adds its plot by adding one
# function, decorated with @plot, to its benchmark's module in
# tools/findings_bench/.

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
