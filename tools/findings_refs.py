"""findings_refs: the book's references to measured rows, {{finding F0.20}},
and to plots of the same results, {{plot pipeline_span}}.

A chapter or notes.md never types a measured number: it writes
`{{finding F0.20}}`, and the book renders the figure of that row of
FINDINGS.md (which `make findings` generates from bench/results/), linked
to the row. A curve is `{{plot NAME}}` alone in its paragraph: the book
draws plot NAME (registered in tools/findings.py's PLOTS) from the results
directory FINDINGS.md lists for that plot's benchmark under "Results used",
so the plot and the rows beside it come from the same run. `make
check-anchors` fails a reference to a row FINDINGS.md does not have, to a
plot that does not exist, or to a plot whose benchmark FINDINGS.md did not
use; without FINDINGS.md it says the references were not checked. Python 3
standard library only.
"""

import os
import re

# {{finding F6.15 | faster; even}}: the row, then the reading the sentence
# around it states (see READINGS below); group 1 is the row, group 2 the
# reading or None.
REF = re.compile(r"\{\{finding (F\d+\.\d+)(?:\s*\|\s*([^}]*?))?\s*\}\}")
PLOT_REF = re.compile(r"\{\{plot ([A-Za-z0-9_.-]+)\}\}")
USED = re.compile(r"^- `([^`]+?)/?` \(([^)]*)\)\s*$")


def split_row(line):
    """Cells of one markdown table row; '\\|' inside a cell is kept."""
    cells, cur, i = [], [], 0
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur.append("\\|")
            i += 2
            continue
        if ch == "|":
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    cells.append("".join(cur).strip())
    return cells


def load(root):
    """{id: {"claim", "figure"}} from FINDINGS.md's "## Rows" table, or None
    when FINDINGS.md does not exist yet."""
    path = os.path.join(root, "FINDINGS.md")
    if not os.path.isfile(path):
        return None
    rows, in_rows = {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_rows = line.strip() == "## Rows"
                continue
            if in_rows and re.match(r"^\| F\d+\.\d+ \|", line):
                cells = split_row(line)
                if len(cells) >= 3:
                    rows[cells[0]] = {"claim": cells[1], "figure": cells[2]}
    return rows


def used_results(root):
    """{benchmark: results directory relative to root} from FINDINGS.md's
    "Results used:" list, or None when FINDINGS.md does not exist yet."""
    path = os.path.join(root, "FINDINGS.md")
    if not os.path.isfile(path):
        return None
    used, in_list = {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("Results used:"):
                in_list = True
                continue
            if in_list:
                m = USED.match(line)
                if m:
                    for bench in m.group(2).split(","):
                        used[bench.strip()] = m.group(1)
                elif line.strip():
                    break
    return used


def references(text, pattern=REF):
    """(line number, id) of every reference in a document's text
    (pattern=PLOT_REF: (line number, plot name) of every plot)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in pattern.finditer(line):
            out.append((n, m.group(1)))
    return out


def plot_path(name):
    """Where the book puts plot NAME, relative to a page."""
    return "plots/%s.svg" % name


def render_plots(text, captions):
    """The text with each {{plot NAME}} replaced by the plot's image, with
    the id plot-NAME to link to; its caption (captions[NAME], markdown)
    says what it was drawn from."""
    def one(m):
        name = m.group(1)
        return "![%s](%s){#plot-%s}" % (captions.get(name, name).replace("]", ")").replace("[", "("),
                                         plot_path(name), name)
    return PLOT_REF.sub(one, text)


def render(text, rows, link="findings.html"):
    """The text with each reference replaced by the row's figure, linked to
    the row; a missing row or a missing FINDINGS.md is said plainly."""
    def one(m):
        rid = m.group(1)
        if rows is None:
            return "*[%s: not measured here yet — run `make findings`]*" % rid
        row = rows.get(rid)
        if row is None:
            return "*[%s: no such row in FINDINGS.md]*" % rid
        return "[%s](%s#%s) (%s)" % (rid, link, rid, row["figure"])
    return REF.sub(one, text)


def anchor_rows(text):
    """FINDINGS.md with an HTML anchor on each row's ID, for the book."""
    return re.sub(r"^\| (F\d+\.\d+) \|", lambda m: '| <span id="%s"></span>%s |' % (m.group(1), m.group(1)),
                  text, flags=re.M)


def check_plots(root, docs):
    """Checks every {{plot NAME}} in docs: alone on its line, a plot that
    tools/findings.py draws, and, when FINDINGS.md exists, drawn from a
    benchmark FINDINGS.md used whose raw results are there.
    -> (references, passed, ["path:line: why", ...], not checked)."""
    import findings  # tools/findings.py: the plots' registry
    used = used_results(root)
    n = passed = unchecked = 0
    fails = []
    for d in docs:
        with open(d, encoding="utf-8") as f:
            lines = f.read().splitlines()
        rel = os.path.relpath(d, root)
        for line, name in references("\n".join(lines), PLOT_REF):
            n += 1
            where = "%s:%d: {{plot %s}}" % (rel, line, name)
            spec = findings.PLOTS.get(name)
            if lines[line - 1].strip() != "{{plot %s}}" % name:
                fails.append(where + ": a plot reference stands alone on its line, as its own paragraph")
            elif spec is None:
                fails.append(where + ": tools/findings.py draws no plot %s (it draws: %s)"
                             % (name, ", ".join(sorted(findings.PLOTS))))
            elif used is None:
                unchecked += 1
            elif spec.bench not in used:
                fails.append(where + ": FINDINGS.md used no %s results, which this plot draws" % spec.bench)
            elif not os.path.isfile(os.path.join(root, used[spec.bench], spec.bench + ".jsonl")):
                fails.append(where + ": %s/%s.jsonl, which FINDINGS.md used, is not there"
                             % (used[spec.bench], spec.bench))
            else:
                passed += 1
    return n, passed, fails, unchecked


# -- readings ---------------------------------------------------------------
#
# A sentence that cites a row says how it reads the row, and says it twice:
# in words, for the reader, and in the reference, for the tools:
# {{finding F6.15 | faster; even}}. The book renders only the row's figure;
# check_readings() holds every reading against the kept row, so a chapter
# cannot go on saying "faster" after a rerun measured "slower". The forms
# (several may be joined with ';', and each must hold):
#
#   faster, slower           the headline ratio is above / below 1. A ratio
#                            row puts first the side that is faster when the
#                            ratio is above 1 (rows of costs are read with
#                            at least / at most instead).
#   faster in every run,     the same, and the row says the two sides' runs
#   slower in every run      do not overlap ("... in every run").
#   even                     the row says the runs' ranges overlap: within
#                            their spread the two cannot be told apart.
#   at least X, at most X    the headline number is >= X / <= X.
#   met, not met             the row says its target was met / not met.
#
# "at least", "at most", "met" and "not met" take a suffix ' of "TEXT"': the
# first number (or the verdict) after TEXT in the row's figure instead of
# the headline. The headline is the first bold number of the figure; failing
# that the first number written with '×'; failing that the first number.

NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"
READING_FORMS = ("faster", "slower", "faster in every run", "slower in every run", "even",
                 "at least X", "at most X", "met", "not met")
_BOUND = re.compile(r'^(at least|at most)\s+(%s)\s*\S*?(?:\s+of\s+"([^"]+)")?$' % NUMBER)
_VERDICT = re.compile(r'^(met|not met)(?:\s+of\s+"([^"]+)")?$')


def _num(text):
    return float(text.replace(",", ""))


def locate(figure, of=None):
    """(value, start, end) of the number a reading reads in a figure: the
    headline, or with of, the first number after that text; None if none."""
    base = 0
    if of is not None:
        i = figure.find(of)
        if i < 0:
            return None
        base = i + len(of)
        pats = (r"(%s)" % NUMBER,)
    else:
        pats = (r"\*\*\s*(%s)" % NUMBER, r"(%s)\s*×" % NUMBER, r"(%s)" % NUMBER)
    for pat in pats:
        m = re.compile(pat).search(figure, base)
        if m:
            return _num(m.group(1)), m.start(1), m.end(1)
    return None


def headline(figure):
    """The number a reading without 'of' is about (see above), or None."""
    got = locate(figure)
    return got and got[0]


def _after(figure, text):
    """The figure from the first occurrence of text on, or None."""
    i = figure.find(text)
    return None if i < 0 else figure[i + len(text):]


def _target_verdict(figure):
    """'met', 'not met' or None: the first thing the figure says of a target."""
    m = re.search(r"\b(not met|met)\b", figure)
    return m and m.group(1)


def _spread(figure):
    """'apart' when the figure says one side won every run, 'overlap' when it
    says the runs' ranges overlap, None when it says neither. A figure that
    compares several things gives a verdict for each: the one read is the
    first after the headline (the headline's own), else the first at all."""
    verdict = re.compile(r"\boverlap|\b(?:faster|lower|higher|slower) in every run\b")
    got = locate(figure)
    m = (got and verdict.search(figure, got[2])) or verdict.search(figure)
    if m is None:
        return None
    return "overlap" if m.group(0).startswith("overlap") else "apart"


def reading_parts(reading):
    """The parts of a reading, split at each ';' outside quotes ('' for an
    empty part)."""
    return [p.strip() for p in re.findall(r'(?:[^;"]|"[^"]*")+|(?<=;)(?=;|$)|^(?=;)', reading)]


def evaluate(reading, figure):
    """None when the reading holds of the figure, else why it does not (one
    line, with what the row measured)."""
    why = []
    for part in reading_parts(reading):
        if not part:
            return "an empty reading between ';'"
        m = _BOUND.match(part)
        if m:
            kind, x, of = m.group(1), _num(m.group(2)), m.group(3)
            if of is not None and of not in figure:
                why.append(f'{part}: the row has no "{of}"')
                continue
            got = locate(figure, of)
            v = got and got[0]
            if got is None:
                why.append(f"{part}: the row has no number to read")
            elif (kind == "at least" and v < x) or (kind == "at most" and v > x):
                why.append(f"{part}: the row measured {v:g}")
            continue
        m = _VERDICT.match(part)
        if m:
            scope = figure if m.group(2) is None else _after(figure, m.group(2))
            if scope is None:
                why.append(f'{part}: the row has no "{m.group(2)}"')
                continue
            said = _target_verdict(scope)
            if said != m.group(1):
                why.append(f"{part}: the row says {said or 'nothing of a target'}")
            continue
        if part in ("faster", "slower", "faster in every run", "slower in every run"):
            v = headline(figure)
            if v is None or "×" not in figure:
                why.append(f"{part}: the row has no ratio; read it with at least / at most")
                continue
            if (part.startswith("faster") and not v > 1) or (part.startswith("slower") and not v < 1):
                why.append(f"{part}: the row's ratio is {v:g}×")
                continue
            if part.endswith("in every run"):
                s = _spread(figure)
                if s is None:
                    why.append(f"{part}: the row gives no runs' spread to say so")
                elif s != "apart":
                    why.append(f"{part}: the row says the run ranges overlap")
            continue
        if part == "even":
            s = _spread(figure)
            if s is None:
                why.append("even: the row gives no runs' spread to say so")
            elif s != "overlap":
                why.append("even: the row says one side won every run")
            continue
        why.append(f"{part!r} is not a reading (the forms: {', '.join(READING_FORMS)})")
    return "; ".join(why) or None


def citations(text):
    """(line number, row id, reading or None) of every row reference."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in REF.finditer(line):
            out.append((n, m.group(1), m.group(2)))
    return out


def check_readings(root, docs, rows=None):
    """Holds every reading in docs against FINDINGS.md's rows.
    -> (references, [(path:line, row, reading, why)]). A reference without
    a reading, to a row that does not exist, or whose reading the row
    contradicts is a failure; rows None (no FINDINGS.md) checks nothing."""
    if rows is None:
        rows = load(root)
    if rows is None:
        return 0, []
    n, fails = 0, []
    for d in docs:
        with open(d, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(d, root)
        for line, rid, reading in citations(text):
            n += 1
            where = "%s:%d" % (rel, line)
            row = rows.get(rid)
            if row is None:
                fails.append((where, rid, reading, "FINDINGS.md has no row %s" % rid))
            elif not reading:
                fails.append((where, rid, reading,
                              "no reading: write {{finding %s | READING}} (%s)" % (rid, ", ".join(READING_FORMS))))
            else:
                why = evaluate(reading, row["figure"])
                if why:
                    fails.append((where, rid, reading, why))
    return n, fails


def book_documents(root):
    """The documents whose references are checked: the chapters, notes.md
    and the exercise READMEs."""
    import glob
    docs = sorted(glob.glob(os.path.join(root, "chapters", "*.md")))
    docs += [p for p in [os.path.join(root, "notes.md")] if os.path.isfile(p)]
    docs += sorted(glob.glob(os.path.join(root, "exercises", "*", "README.md")))
    return docs


def main(argv=None):
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="findings_refs.py", description="The book's references to FINDINGS.md rows.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("readings", help="hold every reading against FINDINGS.md; exit 1 on a contradiction")
    r.add_argument("docs", nargs="*", help="markdown files (default: the chapters, notes.md, the exercise READMEs)")
    r.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r.add_argument("--report", action="store_true",
                   help="a reader's report after `make findings`: list what this machine's results contradict; exit 0")
    a = ap.parse_args(argv)
    rows = load(a.root)
    if rows is None:
        print("readings: FINDINGS.md does not exist yet; nothing checked")
        return 0
    docs = [os.path.abspath(d) for d in a.docs] or book_documents(a.root)
    n, fails = check_readings(a.root, docs, rows)
    if a.report:
        if not fails:
            print(f"readings: your results agree with every one of the book's {n} readings of them.")
            return 0
        print(f"readings: {len(fails)} of the book's {n} readings say something your results do not.")
        print("  Not a failure: each is a place where this machine differs from the one the book was measured on.")
        print("  Read the paragraph, then ask why (cores, caches, kernel, load).")
        for where, rid, reading, why in fails:
            fig = rows.get(rid, {}).get("figure", "")
            print(f"  {where}: {rid} read as '{reading or '(none)'}': {why}\n      you measured: {fig[:200]}")
        return 0
    for where, rid, reading, why in fails:
        print(f"FAIL {where}: {{{{finding {rid}{' | ' + reading if reading else ''}}}}}: {why}")
    print(f"readings: {n - len(fails)} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    raise SystemExit(main())
