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

Every reference carries a reading, `{{finding F6.15 | faster; even}}`: what
the sentence around it says of the row, in forms this module holds against
the row (`readings`; the forms are listed at "readings" below). Besides the
headline (faster, slower, even, at least X, at most X, met, not met), a
reading can state what a chapter says of the row's cells, runs and
verdicts, so the prose around a citation is checked too:

    {{finding F7.18 | not met; cells above 1.0: SET 1 MB, SET 2 MB, SET 4 MB}}
    {{finding F7.18 | no GET cell above 1.0}}
    {{finding F8.40 | lowest cell at least 0.8}}
    {{finding F7.1 | runs overlap in every pair}}
    {{finding F7.31 | on faster in every run of "against redis"}}
    {{finding F7.28 | spread at most 15% of "ceiling"}}
    {{finding F8.54 | every run below 1 of "ZRANGEBYSCORE 100"}}
    {{finding F6.16 | "batch 16" runs below "find" runs in every pair}}
    {{finding F2.5 | runs below F2.6's in every pair}}

and any form may end `in every stored run`, which holds it against this
row as every stored run of its benchmark (bench/results/*/) produces it,
not only the run FINDINGS.md kept:

    {{finding F7.13 | runs apart of "against redis" in every stored run}}

or `in some stored run`, which holds it when the kept run or any stored
run has it, for a sentence that says a thing happened in some runs only:

    {{finding F0.2 | faster in every run; runs overlap in some stored run}}

A form may also end `in most stored runs` (more than half of them) or
`in N of M stored runs` (exactly N of the M). Any of these may end `on
this machine`, and then reads only the stored runs made on the kept run's
machine (the same CPU model and kernel), or `on other machines`, only the
others (the kept run is not among them):

    {{finding F7.6 | at most 0.1× in every stored run on this machine}}
    {{finding F7.3 | at least 0.6 of "on = " and at most 0.8 of "on = " in most stored runs on other machines}}

Forms joined by `and` must hold of the same figure, as a count of runs
needs. Two numbers of one row are compared with `"A" over "B" REL X`, the
number after A divided by the number after B ("128 is about a tenth
cheaper than 16": `"128:" over "16:" at least 0.85; "128:" over "16:" at
most 0.95`).
"""

import json
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
    """{id: {"claim", "figure", "source"}} from FINDINGS.md's "## Rows"
    table (source: the raw results the row was made from, None when the row
    does not say), or None when FINDINGS.md does not exist yet."""
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
                    raw = re.search(r"\(raw: `([^`]+\.jsonl)`\)", cells[4]) if len(cells) >= 5 else None
                    rows[cells[0]] = {"claim": cells[1], "figure": cells[2], "source": raw and raw.group(1)}
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
# cannot go on saying "faster" after a rerun measured "slower". Several
# forms may be joined with ';', and each must hold. X is a number (a unit
# such as × or % may follow it and is ignored); REL is one of "above",
# "below" (strictly), "at least", "at most".
#
# The headline:
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
# Whether two sides' runs separate, as the row's verdicts say ("run ranges
# overlap", "SIDE faster in every run", "SIDE lower in every run"); the
# verdict read is the headline's (as for even), or with of, the first after
# TEXT:
#   runs overlap, runs apart          that verdict says overlap / one side won
#                                     every run.
#   runs overlap in every pair,       every verdict the row gives (after TEXT,
#   runs apart in every pair          with of) says so.
#   runs overlap in N of M pairs,     exactly N of the M verdicts the row
#   runs apart in N of M pairs        gives (after TEXT, with of) say so:
#                                     F4.40's "in all but one of them in
#                                     every run" is runs apart in 7 of 8.
#   SIDE faster in every run          that verdict names SIDE and the word
#   (or lower, slower, higher)        (faster, lower, ...) as the row writes
#                                     them: on faster in every run of
#                                     "against redis".
#
# Cells: the "NAME VALUE×" items of a row that lists cells (F7.18, F7.37,
# F8.40-F8.46, F8.52, F8.54). A cell is an item between ',' ';' '(' ')' or
# ' — ' that ends in a number with ×. An item after "LABEL:" takes the
# label after its name (F7.18's "SET 1 MB: on 1.09×" is the cell "on SET 1
# MB"), and the label holds for the items after it until the next label or
# the end of the parentheses it stands in. Items that summarise (a name
# with lowest, highest, worst, best, mean or median, a lone =, or ≥ ≤ < >
# →) are not cells, and a cell listed again under a heading ("above the
# ceiling: on SET 1 MB 1.09×") is counted once. A NAME in a reading names
# every cell whose name holds its words in order: "SET 1 MB" names "on SET
# 1 MB" and "off SET 1 MB"; "10 P=1" does not name "100 P=1". [NAME] is
# optional and keeps only the cells it names ("no GET cell above 1.0").
#   every [NAME] cell REL X       each cell is REL X.
#   no [NAME] cell REL X          none is.
#   lowest [NAME] cell REL X,     the smallest / largest cell is REL X.
#   highest [NAME] cell REL X
#   N of M [NAME] cells REL X     the row has M such cells and exactly N
#                                 of them are REL X.
#   [NAME] cells REL X: A, B      the cells REL X are exactly those A, B
#                                 name: each of them is named, and each of
#                                 A, B names at least one of them.
#
# Runs: the values a median was taken over, as the row prints them: a
# range "runs 2101–2222", a list "runs 9.7/3.9/3.8" or "(runs 0.83 0.87
# 0.88)", or TEXT followed by its own range ("ceiling 3246–3715"). With of,
# the runs read are the range or list printed right after TEXT anywhere in
# the row, else the first after the number TEXT introduces; without, the
# first after the headline; either within that number's clause (up to the
# next ';' outside its parentheses), so one cell is not read with the
# next one's runs.
#   every run REL X, no run REL X        each / none of the runs is REL X.
#   lowest run REL X, highest run REL X  the smallest / largest run is.
#   N of M runs REL X                    there are M runs and exactly N
#                                        are REL X ("six of its seven").
#   spread REL X%                        (largest run - smallest) is REL X%
#                                        of the median: the headline, or
#                                        with of, the first number after
#                                        TEXT ("on 3583 ... runs on
#                                        3353–3803" spreads 12.6%).
#
# Pairs: two sides measured in alternation (A, B, A, B, ...) are compared
# run by run, the i-th run of one against the i-th of the other, which
# says more than whether their ranges overlap: two sides whose runs both
# drift can overlap and still be ordered in every pair. The runs are read
# as above, at "A" and at "B" (without "A", the headline's), or at another
# row's headline (F2.6's); both lists must be as long.
#   ["A"] runs above/below "B" runs in every pair
#   ["A"] runs above/below F2.6's in every pair
#   ... in N of M pairs                  exactly N of the M pairs are so.
#
# Values: the numbers a row writes right before TEXT, for rows whose items
# are not "NAME VALUE×" cells (F7.19's "1.04× t1", F7.36's "0.84× zero-page
# ceiling"); with of, only those from TEXT's first occurrence on:
#   every/no/lowest/highest value before "TEXT" REL X
#
# of "TEXT": every form but faster, slower (with or without "in every
# run") and even takes the suffix
# ' of "TEXT"': the bound, verdict, cells or runs read are those after the
# first occurrence of TEXT (as written, spaces included) in the figure,
# instead of the headline's. ' of last "TEXT"' reads from TEXT's last
# occurrence instead: F4.1 gives "without main's idle spin" once for each
# thread count, and io-threads 4's is the last.
#
# Across the stored runs: any form may end with ' in every stored run':
# then it must hold of the kept row and of the same row as every stored
# full run of the row's benchmark produces it (each bench/results/*/ that
# holds BENCH.jsonl, BENCH read from the row's raw source, regenerated by
# tools/findings.py's rows_of_run): "faster in every stored run", "lowest
# cell at least 0.6 in every stored run". A stored run that the generator
# refuses, or whose rows lack this one (a row added later), did not produce
# it and is skipped; a row that no stored run produced fails; a
# contradicted reading fails naming the first stored run that contradicts
# it and how many do. ' in some stored run' instead holds a form when
# the kept row or any one stored run has it: "its runs came apart only in
# the kept run" is "faster in every run; runs overlap in some stored run".
# Either may add ' on this machine' (" in every stored run on this
# machine", " in some stored run on this machine"): then only the stored
# runs made on the kept run's machine count, the same CPU model and kernel
# in their provenance.json. Rows move with the machine (a virtual machine's
# first write of fresh memory, F7.57, set chapter 07's large SETs), and a
# sentence that says "on this machine" says which runs it read.
# QUICK=1 runs are left out, as FINDINGS.md leaves them
# out. A row that reads two benchmarks' results (F4.9-F4.16) is produced
# from no single run, so it cannot be read across runs. Regenerating every
# stored run of every benchmark takes under a second; each benchmark's
# stored rows are made once per check and kept in memory.

NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"
REL = r"(above|below|at least|at most)"
READING_FORMS = ("faster", "slower", "faster in every run", "slower in every run", "even",
                 "at least X", "at most X", "met", "not met",
                 "runs overlap", "runs apart", "runs overlap/apart in every pair (or in N of M pairs)",
                 "SIDE faster/lower in every run",
                 "every/no/lowest/highest [NAME] cell REL X", "N of M [NAME] cells REL X", "[NAME] cells REL X: A, B",
                 "every/no/lowest/highest run REL X", "N of M runs REL X", "spread REL X%",
                 'every/no/lowest/highest value before "TEXT" REL X',
                 '["A"] runs above/below "B" runs (or F2.6\'s) in every pair (or in N of M pairs)',
                 '... of "TEXT"', '... of last "TEXT"', "... in every stored run", "... in some stored run",
                 "... in every/some stored run on this machine")
_OF = r'(?:\s+of\s+"([^"]+)")?'
_BOUND = re.compile(r'^(at least|at most)\s+(%s)\s*\S*?%s$' % (NUMBER, _OF))
_VERDICT = re.compile(r'^(met|not met)%s$' % _OF)
_RUNS_SEP = re.compile(r'^runs\s+(overlap|apart)(\s+in (?:every|(\d+) of (\d+)) pairs?)?%s$' % _OF)
_SIDE = re.compile(r'^(.+?)\s+(faster|slower|lower|higher)\s+in every run%s$' % _OF)
_QUANT = re.compile(r'^(every|no|lowest|highest|\d+ of \d+)\s+(?:(.+?)\s+)?(cell|run)s?\s+%s\s+(%s)\s*[^\s"]*%s$'
                    % (REL, NUMBER, _OF))
_CELLSET = re.compile(r'^(?:(.+?)\s+)?cells\s+%s\s+(%s)\s*[^\s:]*:\s*(.+?)%s$' % (REL, NUMBER, _OF))
_SPREAD = re.compile(r'^spread\s+%s\s+(%s)\s*%%%s$' % (REL, NUMBER, _OF))
_VALUES = re.compile(r'^(every|no|lowest|highest)\s+value before\s+"([^"]+)"\s+%s\s+(%s)\s*[^\s"]*%s$'
                     % (REL, NUMBER, _OF))
_PAIRS = re.compile(r'^(?:"([^"]+)"\s+)?runs\s+(above|below)\s+(?:(F\d+\.\d+)\'s|"([^"]+)"\s+runs)'
                    r'\s+in\s+(?:(every) pair|(\d+) of (\d+) pairs)$')
STORED = " in every stored run"
SOME_STORED = " in some stored run"
HERE = " on this machine"
OTHER = " on other machines"
# The counted suffixes: ' in most stored runs' (more than half of them) and
# ' in N of M stored runs' (exactly N of the M hold), either optionally
# followed by HERE or OTHER.
_COUNTED = re.compile(r"\s+in (?:(most)|(\d+) of (\d+)) stored runs$")
# Any of the suffixes that say which stored runs a form is read in.
_RUNS_SUFFIX = re.compile(r"\s+in (?:every|some|most|\d+ of \d+) stored runs?(?:%s|%s)?$" % (HERE, OTHER))
_RATIO = re.compile(r'^"([^"]+)"\s+over\s+"([^"]+)"\s+%s\s+(%s)$' % (REL, NUMBER))


def _num(text):
    return float(text.replace(",", ""))


def _rel(v, rel, x):
    return {"above": v > x, "below": v < x, "at least": v >= x, "at most": v <= x}[rel]


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


# A verdict on two sides' runs, as tools/findings.py writes it: group 1 the
# side and group 2 the word when one side won every run.
_SEPARATION = re.compile(r"\boverlap\b|([^;,():]*?)\s*\b(faster|lower|higher|slower) in every run\b")


def _verdicts(figure, start=0):
    """[(kind, side, word, text)] of every verdict from start on: kind
    'overlap' or 'apart'."""
    out = []
    for m in _SEPARATION.finditer(figure, start):
        if m.group(2) is None:
            out.append(("overlap", None, None, "run ranges overlap"))
        else:
            side = m.group(1).strip().lstrip("*").strip()
            out.append(("apart", side, m.group(2), m.group(0).strip()))
    return out


def _verdict_at(figure, of=None):
    """The verdict a reading reads: with of, the first after TEXT; else the
    headline's (the first after the headline), else the first at all.
    None when there is none; False when TEXT is not in the figure."""
    if of is not None:
        i = figure.find(of)
        if i < 0:
            return False
        got = _verdicts(figure, i + len(of))
        return got[0] if got else None
    got = locate(figure)
    after = _verdicts(figure, got[2]) if got else []
    every = after or _verdicts(figure)
    return every[0] if every else None


def _spread(figure):
    """'apart' when the figure says one side won every run, 'overlap' when it
    says the runs' ranges overlap, None when it says neither. A figure that
    compares several things gives a verdict for each: the one read is the
    first after the headline (the headline's own), else the first at all."""
    v = _verdict_at(figure)
    return v and v[0]


# -- cells

_SUMMARY = re.compile(r"\b(?:lowest|highest|worst|best|mean|median)\b|(?:^|\s)=(?:\s|$)|[≥≤<>→]")
_CELL = re.compile(r"^(.*?)\s*(%s)\s*×$" % NUMBER)


def cells(figure):
    """[(name, value)] of the "NAME VALUE×" cells a figure lists (see above)."""
    out, label, outer = [], None, []
    # A name's own words in parentheses, right before its value ("LPUSH
    # (LRANGE fill) 0.96×"), stay in the name: bracketed, not split off.
    figure = re.sub(r"\(([^()\d]*)\)(?=\s*%s\s*×)" % NUMBER, r"[\1]", figure.replace("**", ""))
    for item in re.split(r"(,\s|;|\(|\)|\s—\s)", figure):
        if item in ("(", ")"):  # a label inside parentheses ends with them
            if item == "(":
                outer.append(label)
            elif outer:
                label = outer.pop()
            continue
        item = item.strip()
        m = re.match(r"^(.*?):\s+(.*)$", item)
        if m:
            lab = m.group(1).strip()
            label = None if (_SUMMARY.search(lab) or re.search(r"%s\s*×" % NUMBER, lab)) else lab
            item = m.group(2)
        c = _CELL.match(item)
        if not c:
            continue
        name = " ".join(x for x in (c.group(1).strip(), label) if x)
        if name and not _SUMMARY.search(name):
            out.append((name, _num(c.group(2))))
    # A list that repeats cells under a heading ("above the ceiling: on SET
    # 1 MB 1.09×") names them again: the longer name of the same value goes.
    return [c for c in out if not any(d[1] == c[1] and len(d[0]) < len(c[0]) and names(d[0], c[0])
                                      for d in out)]


def names(query, name):
    """Whether a reading's NAME names a cell: its words, in order, in the
    cell's name."""
    q, n = query.split(), name.split()
    return any(n[i:i + len(q)] == q for i in range(len(n) - len(q) + 1))


def _cell_text(cs, most=4):
    more = " and %d more" % (len(cs) - most) if len(cs) > most else ""
    return ", ".join("%s %g×" % c for c in cs[:most]) + more


# -- runs

_RUN = r"[-+]?\d+(?:,\d{3})*(?:\.\d+)?"  # a number, without a list's trailing comma
_SEQ = r"%s(?:(?:\s*[–/]\s*|[ ]+)%s)*" % (_RUN, _RUN)
_LINKED = r"%s(?:\s*[–/]\s*%s)+" % (_RUN, _RUN)


def run_values(figure, of=None):
    """(values, text) of the runs a reading reads (see above), or None."""
    def seq(text):
        return [_num(x) for x in re.findall(_RUN, text)]
    start = 0
    if of is not None:
        for m in re.finditer(re.escape(of) + r"\s*:?\s*(%s)" % _LINKED, figure):
            return seq(m.group(1)), m.group(1)
        got = locate(figure, of)
        start = got[2] if got else figure.find(of) + len(of)
    else:
        got = locate(figure)
        start = got[2] if got else 0
    end, depth = start, 0  # the runs of this number, not the next clause's
    while end < len(figure):
        ch = figure[end]
        depth += (ch == "(") - (ch == ")")
        if depth < 0 or (depth == 0 and ch == ";"):
            break
        end += 1
    for m in re.finditer(r"\bruns\b[:\s]*(?:[A-Za-z][\w.-]*\s+){0,2}?(%s)" % _SEQ, figure[start:end]):
        return seq(m.group(1)), m.group(1)
    return None


# -- one form against one figure

def _scope(figure, of):
    """The figure from TEXT on (the whole figure without of), or None."""
    return figure if of is None else _after(figure, of)


def _pairs(part, m, figure, rows):
    """The pairs form (see "Pairs" above) against one figure."""
    a_of, rel, other, b_of, every, n_want, m_want = m.groups()
    for text in (a_of, b_of):
        if text is not None and text not in figure:
            return f'{part}: the row has no "{text}"'
    a = run_values(figure, a_of)
    if other is not None:
        if rows is None or other not in rows:
            return f"{part}: there is no row {other} to pair with"
        b = run_values(rows[other]["figure"])
    else:
        b = run_values(figure, b_of)
    if a is None or b is None:
        return f"{part}: the row gives no runs to pair"
    if len(a[0]) != len(b[0]):
        return f"{part}: {len(a[0])} runs ({a[1]}) do not pair with {len(b[0])} ({b[1]})"
    hits = sum(1 for x, y in zip(a[0], b[0]) if _rel(x, rel, y))
    if every:
        return None if hits == len(a[0]) else f"{part}: {hits} of {len(a[0])} pairs ({a[1]} against {b[1]})"
    if int(m_want) != len(a[0]) or int(n_want) != hits:
        return f"{part}: {hits} of {len(a[0])} pairs ({a[1]} against {b[1]})"
    return None


_OF_LAST = re.compile(r'\s+of\s+last\s+"([^"]+)"$')


# Long: one arm per form of the predicate language, in the order the
# opening comment lists them, each a regular expression and its test; a
# table of (pattern, test) pairs would split it, at the cost of reading
# the forms in two places.
def _part(part, figure, rows=None):
    """None when one form holds of the figure, else why not. rows: every
    row by id, for a form that reads another row's runs. Forms joined by
    ' and ' must all hold of the same figure: what a count of stored runs
    ('at least 0.6 and at most 0.8 in most stored runs') needs."""
    conj = re.split(r'\s+and\s+(?=(?:[^"]*"[^"]*")*[^"]*$)', part)  # ' and ' outside quotes
    if len(conj) > 1:
        return next((w for w in (_part(c.strip(), figure, rows) for c in conj) if w), None)
    m = _OF_LAST.search(part)
    if m:
        # of last "TEXT" reads from TEXT's last occurrence: the figure is
        # cut there, and the form read with of "TEXT" as its first.
        i = figure.rfind(m.group(1))
        if i < 0:
            return f'{part}: the row has no "{m.group(1)}"'
        first = part[:m.start()] + f' of "{m.group(1)}"'
        why = _part(first, figure[i:], rows)
        return why and why.replace(first, part, 1)
    m = _RATIO.match(part)
    if m:
        # "A" over "B" REL X: the number after A divided by the number after B
        a, b = locate(figure, m.group(1)), locate(figure, m.group(2))
        if a is None or b is None:
            return f'{part}: the row has no number after "{m.group(1) if a is None else m.group(2)}"'
        if b[0] == 0:
            return f'{part}: the number after "{m.group(2)}" is 0'
        v = a[0] / b[0]
        if not _rel(v, m.group(3), _num(m.group(4))):
            return f"{part}: the row's ratio is {v:.3g} ({a[0]:g} / {b[0]:g})"
        return None
    m = _BOUND.match(part)
    if m:
        kind, x, of = m.group(1), _num(m.group(2)), m.group(3)
        if of is not None and of not in figure:
            return f'{part}: the row has no "{of}"'
        got = locate(figure, of)
        v = got and got[0]
        if got is None:
            return f"{part}: the row has no number to read"
        if not _rel(v, kind, x):
            return f"{part}: the row measured {v:g}"
        return None
    m = _VERDICT.match(part)
    if m:
        scope = _scope(figure, m.group(2))
        if scope is None:
            return f'{part}: the row has no "{m.group(2)}"'
        said = _target_verdict(scope)
        if said != m.group(1):
            return f"{part}: the row says {said or 'nothing of a target'}"
        return None
    if part in ("faster", "slower", "faster in every run", "slower in every run"):
        v = headline(figure)
        if v is None or "×" not in figure:
            return f"{part}: the row has no ratio; read it with at least / at most"
        if (part.startswith("faster") and not v > 1) or (part.startswith("slower") and not v < 1):
            return f"{part}: the row's ratio is {v:g}×"
        if part.endswith("in every run"):
            s = _spread(figure)
            if s is None:
                return f"{part}: the row gives no runs' spread to say so"
            if s != "apart":
                return f"{part}: the row says the run ranges overlap"
        return None
    if part == "even":
        s = _spread(figure)
        if s is None:
            return "even: the row gives no runs' spread to say so"
        if s != "overlap":
            return "even: the row says one side won every run"
        return None
    m = _RUNS_SEP.match(part)
    if m:
        want, every, n, total, of = m.groups()
        if every:
            scope = _scope(figure, of)
            if scope is None:
                return f'{part}: the row has no "{of}"'
            vs = _verdicts(scope)
            if not vs:
                return f"{part}: the row gives no runs' spread to say so"
            bad = [v for v in vs if v[0] != want]
            if n is not None:
                if len(vs) != int(total) or len(vs) - len(bad) != int(n):
                    return f"{part}: {len(vs) - len(bad)} of the row's {len(vs)} verdicts say so"
                return None
            if bad:
                return f"{part}: {len(bad)} of the row's {len(vs)} verdicts say otherwise: {bad[0][3]}"
            return None
        v = _verdict_at(figure, of)
        if v is False:
            return f'{part}: the row has no "{of}"'
        if v is None:
            return f"{part}: the row gives no runs' spread to say so"
        if v[0] != want:
            return f"{part}: the row says {v[3]}"
        return None
    m = _SPREAD.match(part)
    if m:
        rel, x, of = m.group(1), _num(m.group(2)), m.group(3)
        if of is not None and of not in figure:
            return f'{part}: the row has no "{of}"'
        med, runs = locate(figure, of), run_values(figure, of)
        if med is None or runs is None:
            return f"{part}: the row gives no median with its runs to read"
        if med[0] == 0:
            return f"{part}: the median is 0"
        share = (max(runs[0]) - min(runs[0])) / abs(med[0]) * 100
        if not _rel(share, rel, x):
            return f"{part}: runs {runs[1]} spread {share:.1f}% of {med[0]:g}"
        return None
    m = _VALUES.match(part)
    if m:
        q, before, rel, x, of = m.group(1), m.group(2), m.group(3), _num(m.group(4)), m.group(5)
        scope = _scope(figure, of)
        if scope is None:
            return f'{part}: the row has no "{of}"'
        vals = [_num(v) for v in re.findall(r"(%s)\s*%s" % (NUMBER, re.escape(before)), scope)]
        if not vals:
            return f'{part}: the row writes no number before "{before}"'
        if q in ("lowest", "highest"):
            pick = (min if q == "lowest" else max)(vals)
            return None if _rel(pick, rel, x) else f"{part}: the {q} is {pick:g}"
        bad = [v for v in vals if _rel(v, rel, x) != (q == "every")]
        if bad:
            return (f"{part}: {len(bad)} of the {len(vals)} values {'are not' if q == 'every' else 'are'}: "
                    + ", ".join("%g" % v for v in bad[:4]))
        return None
    m = _QUANT.match(part)
    if m:
        q, who, noun, rel, x, of = m.group(1), m.group(2), m.group(3), m.group(4), _num(m.group(5)), m.group(6)
        scope = _scope(figure, of)
        if scope is None:
            return f'{part}: the row has no "{of}"'
        if noun == "run":
            if who:
                return f"{part}: runs are not named; choose them with of \"TEXT\""
            got = run_values(figure, of)
            if got is None:
                return f"{part}: the row gives no runs to read"
            vals, text = got
            what = [("run", v) for v in vals]
        else:
            what = [c for c in cells(scope) if who is None or names(who, c[0])]
            if not what:
                return f"{part}: the row lists no {who + ' ' if who else ''}cells (\"NAME VALUE×\")"
            text = None
        if q in ("lowest", "highest"):
            pick = (min if q == "lowest" else max)(what, key=lambda c: c[1])
            if not _rel(pick[1], rel, x):
                return f"{part}: the {q} is {pick[1]:g}" + (f" ({pick[0]})" if noun == "cell" else f" (runs {text})")
            return None
        if q[0].isdigit():
            n, total = (int(t) for t in q.split(" of "))
            hits = [c for c in what if _rel(c[1], rel, x)]
            if len(what) != total or len(hits) != n:
                return (f"{part}: {len(hits)} of the {len(what)} {noun}s are {rel} {x:g}"
                        + (f" (runs {text})" if noun == "run" else ""))
            return None
        bad = [c for c in what if _rel(c[1], rel, x) != (q == "every")]
        if bad:
            if noun == "run":
                return f"{part}: {len(bad)} of the {len(what)} runs {'are not' if q == 'every' else 'are'} (runs {text})"
            return f"{part}: {len(bad)} of {len(what)} cells {'are not' if q == 'every' else 'are'}: {_cell_text(bad)}"
        return None
    m = _CELLSET.match(part)
    if m:
        who, rel, x, listed, of = m.group(1), m.group(2), _num(m.group(3)), m.group(4), m.group(5)
        scope = _scope(figure, of)
        if scope is None:
            return f'{part}: the row has no "{of}"'
        every = [c for c in cells(scope) if who is None or names(who, c[0])]
        if not every:
            return f"{part}: the row lists no {who + ' ' if who else ''}cells (\"NAME VALUE×\")"
        hits = [c for c in every if _rel(c[1], rel, x)]
        wanted = [w.strip() for w in listed.split(",") if w.strip()]
        unnamed = [c for c in hits if not any(names(w, c[0]) for w in wanted)]
        empty = [w for w in wanted if not any(names(w, c[0]) for c in hits)]
        why = []
        if unnamed:
            why.append(f"the row also has {_cell_text(unnamed)} {rel} {x:g}")
        if empty:
            why.append("no cell %s is %s %g" % (", ".join(empty), rel, x))
        return f"{part}: {'; '.join(why)}" if why else None
    m = _PAIRS.match(part)
    if m:
        return _pairs(part, m, figure, rows)
    m = _SIDE.match(part)
    if m:
        side, word, of = m.group(1), m.group(2), m.group(3)
        v = _verdict_at(figure, of)
        if v is False:
            return f'{part}: the row has no "{of}"'
        if v is None:
            return f"{part}: the row gives no runs' spread to say so"
        if v[0] != "apart" or v[1] != side or v[2] != word:
            return f"{part}: the row says {v[3]}"
        return None
    return f"{part!r} is not a reading (the forms: {', '.join(READING_FORMS)})"


def reading_parts(reading):
    """The parts of a reading, split at each ';' outside quotes ('' for an
    empty part)."""
    return [p.strip() for p in re.findall(r'(?:[^;"]|"[^"]*")+|(?<=;)(?=;|$)|^(?=;)', reading)]


def _runs_only(shown, part, other, runs_of):
    """A part said of stored runs alone, without the kept row: a count of
    them (_COUNTED), or the other machines' runs (other). -> (True, why it
    fails or None), or (False, None) for any other part. runs_of: the runs
    the part reads, or None to hold it against nothing."""
    counted = _COUNTED.search(part)
    if not counted and not other:
        return False, None
    if runs_of is None:
        return True, None
    runs = runs_of()
    if counted:  # the sentence says how many held
        core = part[:counted.start()].rstrip()
        held = sum(_part(core, fig) is None for _, fig in runs)
        want = (held * 2 > len(runs)) if counted.group(1) else \
            (held, len(runs)) == (int(counted.group(2)), int(counted.group(3)))
        return True, None if want else f"{shown}: {held} of the {len(runs)} stored runs have it"
    core = part[:-len(SOME_STORED if part.endswith(SOME_STORED) else STORED)].rstrip()
    bad = [name for name, fig in runs if _part(core, fig)]
    if not runs:
        return True, f"{shown}: no stored run was made on another machine"
    if part.endswith(SOME_STORED) and len(bad) == len(runs):
        return True, f"{shown}: none of the {len(runs)} stored runs on other machines has it"
    if part.endswith(STORED) and bad:
        return True, f"{shown}: run {bad[0]} does not ({len(bad)} of {len(runs)} stored runs)"
    return True, None


def evaluate(reading, figure, stored=None, rows=None):
    """None when the reading holds of the figure, else why it does not (one
    line, with what the row measured). stored: for parts read 'in every
    stored run', a function giving [(run name, figure)] of the row as the
    stored runs produce it, and with here=True only those of the kept run's
    machine (check_readings passes stored_figures); None holds such parts
    against the figure alone. rows: every kept row by id,
    for a form that pairs this row's runs with another row's."""
    why = []
    for part in reading_parts(reading):
        if not part:
            return "an empty reading between ';'"
        shown = part  # as written, for the messages
        # The runs read: every stored run, or with HERE those of the kept
        # run's machine, with OTHER those of any other machine.
        where = next((w for w in (HERE, OTHER) if part.endswith(w)), None)
        if where and not (_COUNTED.search(part[:-len(where)]) or part[:-len(where)].endswith((STORED, SOME_STORED))):
            where = None
        if where:
            part = part[:-len(where)]
        runs_of = stored if not where or stored is None else (lambda: stored(here=True if where == HERE else "other"))
        handled, w = _runs_only(shown, part, where == OTHER, runs_of)
        if handled:
            why += [w] if w else []
            continue
        if part.endswith(SOME_STORED):
            # Holds when the kept row, or any stored run of it, has it.
            core = part[:-len(SOME_STORED)].rstrip()
            w = _part(core, figure, rows)
            if not w:
                continue
            runs = runs_of() if runs_of is not None else []
            if not any(_part(core, fig) is None for _, fig in runs):
                why.append(f"{shown}: neither the kept row nor any of the {len(runs)} stored runs has it"
                           f" (the kept row: {w[len(core) + 2:] if w.startswith(core + ': ') else w})")
            continue
        core = part[:-len(STORED)].rstrip() if part.endswith(STORED) else part
        w = _part(core, figure, rows)
        if w:
            why.append(shown + w[len(core):] if w.startswith(core + ":") else w)
            continue
        if core is part or stored is None:
            continue
        runs = runs_of()
        if not runs:
            why.append(f"{shown}: no stored run produced this row from its benchmark alone (it reads two"
                       " benchmarks, or its raw results are not in bench/results/)")
            continue
        bad = [(name, _part(core, fig)) for name, fig in runs]
        bad = [(name, w) for name, w in bad if w]
        if bad:
            name, w = bad[0]
            why.append(f"{shown}: run {name}: {w[len(core) + 2:] if w.startswith(core + ': ') else w}"
                       f" ({len(bad)} of {len(runs)} stored runs)")
    return "; ".join(why) or None


def machine_of(run_dir):
    """(CPU model, kernel) from a results directory's provenance.json, or
    None where it has none."""
    try:
        with open(os.path.join(run_dir, "provenance.json")) as f:
            prov = json.load(f)
    except (OSError, ValueError):
        return None
    return prov.get("cpu_model"), prov.get("kernel")


def stored_figures(root, source, rid, cache=None, here=False):
    """[(run name, figure)] of row rid as every stored full run of its
    benchmark produces it, oldest first; source is the row's raw results
    (bench/results/RUN/BENCH.jsonl). here: True for only the runs made on
    the machine of source's run (its CPU model and kernel), "other" for
    only the runs made on any other machine. cache: a dict kept across
    calls, so each benchmark's runs are regenerated once."""
    if not source:
        return []
    import findings  # tools/findings.py: the generator
    kept = os.path.dirname(os.path.join(root, source))
    results = os.path.dirname(kept)
    bench = os.path.basename(source)[:-len(".jsonl")]
    cache = {} if cache is None else cache
    if (results, bench) not in cache:
        made = []
        for d in findings.stored_runs(results, bench):
            try:
                made.append((os.path.basename(d), machine_of(d), findings.rows_of_run(d, bench)))
            except (findings.Refused, KeyError, ValueError, TypeError):
                continue  # the generator refuses this run: it produced no rows
        cache[(results, bench)] = made
    if ("machine", kept) not in cache:
        cache[("machine", kept)] = machine_of(kept)
    mine = cache[("machine", kept)]
    return [(name, rows[rid]) for name, machine, rows in cache[(results, bench)]
            if rid in rows and (not here or (machine == mine) == (here is True))]


def citations(text):
    """(line number, row id, reading or None) of every row reference."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in REF.finditer(line):
            out.append((n, m.group(1), m.group(2)))
    return out


# Words that state something about a row's runs. A paragraph that says one
# of them must cite the row it reads, {{finding ID | READING}}, so that the
# reading is checked; a paragraph that uses the words of something else
# (a test that passes "every run", a trace that moves "from run to run" of
# a program) says so in an HTML comment, <!-- not a row: WHY -->.
RUN_WORDS = re.compile(r"\b(in every run|every run\b|each run\b|in all (?:three|five|seven) (?:runs|rounds)"
                       r"|runs? (?:ranges? )?overlap|ranges overlap|runs'? spread|inside the (?:runs' )?spread"
                       r"|of (?:its|the|their) runs\b|from run to run)", re.I)
NOT_A_ROW = re.compile(r"<!--\s*not a row:\s*\S[^>]*-->")


def unread_run_claims(text):
    """(line, words) of each paragraph that speaks of runs without citing a
    row: prose around the rows that no reading checks. Code blocks and
    tables are skipped, and so is a paragraph marked <!-- not a row: WHY -->.
    A row displayed on its own line right after the paragraph cites it."""
    out, line = [], 1
    fence = False
    paras = text.split("\n\n")
    for i, para in enumerate(paras):
        start = line
        line += para.count("\n") + 2
        body = para.lstrip()
        if para.count("```") % 2:
            fence = not fence
            continue
        if fence or body.startswith(("```", "|")):
            continue
        m = RUN_WORDS.search(para)
        # a row shown on its own line right after the paragraph is its citation
        shown = i + 1 < len(paras) and paras[i + 1].lstrip().startswith("{{finding")
        if m and "{{finding" not in para and not shown and not NOT_A_ROW.search(para):
            out.append((start + para[:m.start()].count("\n"), m.group(0)))
    return out


# Words that give a figure approximately: "about seven tenths", "nearly
# twice", "roughly level". A reading after them that bounds the figure on
# one side only ("at most 0.8") keeps passing when a later run moves the
# figure far from what the words say, so such a reading must carry both
# bounds ("at least 0.6; at most 0.8").
_APPROX = re.compile(
    r"\b(?:about|roughly|nearly|almost|around|approximately|close to)\s+(?:(?:a|an|the|some)\s+)?"
    r"(?:\d|one\b|two\b|three\b|four\b|five\b|six\b|seven\b|eight\b|nine\b|ten\b|eleven\b|twelve\b|"
    r"twenty\b|thirty\b|forty\b|fifty\b|sixty\b|seventy\b|eighty\b|ninety\b|hundred\b|thousand\b|"
    r"half\b|halves\b|third|quarter|fifth|sixth|seventh|eighth|ninth|tenth|twice\b|double\b|level\b|"
    r"even\b|equal\b|as (?:much|fast|many|large|slow|high|low)\b)", re.I)
_CLAUSE_END = re.compile(r"[.;:!?](?:\s|$)|\n\n|\}\}")


def approximate_one_sided(text):
    """(line, row, reading, words) of each reference whose clause gives an
    approximate figure (_APPROX, between the clause's start and the
    reference) while every bound in its reading is one-sided."""
    out = []
    for m in REF.finditer(text):
        reading = m.group(2)
        if not reading:
            continue
        sides = {}
        for part in reading_parts(reading):
            b = _BOUND.match(_RUNS_SUFFIX.sub("", part))
            if b:
                sides.setdefault(b.group(3), set()).add(b.group(1))
        if not sides or any(len(v) == 2 for v in sides.values()):
            continue
        start = max([e.end() for e in _CLAUSE_END.finditer(text, 0, m.start())] or [0])
        a = _APPROX.search(text, start, m.start())
        if a:
            out.append((text.count("\n", 0, m.start()) + 1, m.group(1), reading, a.group(0)))
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
    n, fails, cache = 0, [], {}
    for d in docs:
        with open(d, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(d, root)
        in_book = os.path.basename(os.path.dirname(d)) == "chapters" or os.path.basename(d) == "notes.md"
        for line, words in unread_run_claims(text) if in_book else ():
            fails.append(("%s:%d" % (rel, line), "-", words,
                          'says "%s" of runs but cites no row: carry the reading ({{finding ID | READING}}), or '
                          "mark the paragraph <!-- not a row: WHY -->" % words))
        for line, rid, reading, words in approximate_one_sided(text):
            fails.append(("%s:%d" % (rel, line), rid, reading,
                          'the words say "%s", an approximate figure, but the reading bounds one side only: '
                          "give it both bounds (at least X; at most Y)" % words))
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
                why = evaluate(reading, row["figure"],
                               lambda here=False, row=row, rid=rid: stored_figures(root, row.get("source"), rid,
                                                                                   cache, here), rows)
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


def print_runs(root, rows, ids):
    """The `runs` command: each row's claim, the kept figure, then the
    figure of every stored run of its benchmark with that run's machine
    (CPU model | kernel), oldest first. Exit 1 when a row does not exist."""
    cache, missing = {}, 0
    for rid in ids:
        row = rows.get(rid)
        if row is None:
            print(f"{rid}: no such row in FINDINGS.md")
            missing += 1
            continue
        print(f"== {rid} | {row['claim']}\n   kept: {row['figure']}")
        results = os.path.dirname(os.path.dirname(os.path.join(root, row["source"] or "")))
        for name, fig in stored_figures(root, row["source"], rid, cache):
            cpu, kernel = machine_of(os.path.join(results, name)) or ("?", "?")
            print(f"   {name} [{cpu} | {kernel}]: {fig}")
    return 1 if missing else 0


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
    s = sub.add_parser("runs", help="print rows as every stored run of their benchmark produces them, "
                       "each run with its machine: what a reading `in every stored run` is held against")
    s.add_argument("ids", nargs="+", help="row ids, e.g. F7.3")
    s.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args(argv)
    rows = load(a.root)
    if rows is None:
        print(f"{a.cmd}: FINDINGS.md does not exist yet; nothing checked")
        return 0
    if a.cmd == "runs":
        return print_runs(a.root, rows, a.ids)
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
