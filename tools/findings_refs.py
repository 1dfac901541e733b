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

REF = re.compile(r"\{\{finding (F\d+\.\d+)\}\}")
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
