"""findings_refs: the book's references to measured rows, {{finding F0.20}}.

A chapter or notes.md never types a measured number: it writes
`{{finding F0.20}}`, and the book renders the figure of that row of
FINDINGS.md (which `make findings` generates from bench/results/), linked
to the row. `make check-anchors` fails a reference to a row FINDINGS.md
does not have; without FINDINGS.md it says the references were not
checked. Python 3 standard library only.
"""

import os
import re

REF = re.compile(r"\{\{finding (F\d+\.\d+)\}\}")


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


def references(text):
    """(line number, id) of every reference in a document's text."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in REF.finditer(line):
            out.append((n, m.group(1)))
    return out


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
