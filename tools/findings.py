#!/usr/bin/env python3
"""findings.py — generates FINDINGS.md from the raw benchmark results.

Tooling for every step (step 0 wrote it). Owns FINDINGS.md: nobody types
that file; this program reads bench/results/*/provenance.json and the
NAME.jsonl files beside it (written by bench/run.py) and writes one row
per finding: ID, claim, figure, conditions, and the command that
reproduces it. Python 3 standard library only; single-threaded.

Where the code is: this file is the program (which results, the rows in
order, the Markdown, the plots' drawing, the command line);
tools/findings_core.py holds what every benchmark shares (Run, select,
Row, the conditions, the runs' spread and verdicts, the plots' registry);
tools/findings_bench/NAME.py makes benchmark NAME's rows and plots, and
tools/findings_bench/__init__.py lists them (HANDLERS, SPREAD, CROSS).

Rules it enforces (a refusal stops it without writing):
  - a row must carry its conditions: CPU, cores, kernel, compiler,
    commit and the benchmark's config; a row missing any is refused;
  - a row cites the raw results it was made from (bench/results/RUN/
    BENCH.jsonl), and that file must be stored: a row citing results
    that are not there is refused, naming the row;
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

Later steps add a module to tools/findings_bench/, or print generic rows
from their benchmark as JSON lines {"finding": true, "id": "F2.1",
"claim": ..., "figure": ..., "config": {...}} and need no change here.

  tools/findings.py [--results bench/results] [--out FINDINGS.md]
                    [--run DIR] [--include-quick] [--plots] [--check]

No Valkey anchor (tooling).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

from findings_core import (
    conditions_text, fmt_ratio, fmt_rps, h_generic, load_runs, NotMeasured, PLOTS, Refused, ROOT, Row, Run, select)
from findings_core import id_key, runs_spread, verdict  # noqa: F401  (read as findings.NAME by the tests)
from findings_bench import CROSS, HANDLERS, SPREAD


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
