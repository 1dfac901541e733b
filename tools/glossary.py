#!/usr/bin/env python3
"""glossary: every glossary term is explained where a chapter first uses it.

One of the reader's tools. chapters/GLOSSARY.md explains the terms a
student meets in the chapters without an explanation at that point. This
check reads each chapter (chapters/NN-*.md, in order, each on its own) and
finds the first use of every glossary term in its main text; that first
use must be one of:

  - a link to the term's entry:      [futex](GLOSSARY.md#futex)
  - the chapter's own definition:    the term as the whole of an italic
                                     span, *futex*, in the sentence that
                                     defines it (the book's convention for
                                     "this sentence says what it is")

Later uses in the same chapter need nothing, with one exception: when
the first use is inside a `::: fine-print` block, which a first reading
may pass by, the first use outside the fine print must explain the term
too.

The glossary's format (what this tool reads):

  ## futex {#futex}            an entry: the term, its id; words in
                               parentheses after the term only qualify it:
                               "## Spin (the model checker) {#spin}"
  *Also:* futexes, FUTEX_WAIT. optional, the entry's first line: aliases,
                               comma-separated, each matched like the term
  *Case matters.*              optional, anywhere in the entry: match the
                               term and aliases with their case (Spin, the
                               model checker, is not the verb spin)

Matching: whole words, case-insensitive unless the entry says otherwise; a
term of several words matches across a line break or a hyphen ("cache
line" matches "cache-line" too); a trailing "s" is allowed (p99s), other
forms are aliases (futexes). Not searched: YAML front matter, headings,
fenced and indented code, inline code spans, HTML comments and tags, link
targets, images and {{...}} references. Link text is searched: a term
inside the text of a link to anything but its own entry is an
unexplained use.

    tools/glossary.py [--root DIR] [FILE ...]
    tools/glossary.py --used-in         first rewrite each entry's "Used in"
                                        line from the chapters that use it
    tools/glossary.py --link FILE ...   first link each unexplained first
                                        use to its entry, in place (read
                                        the result: a link may read better
                                        a few words earlier or later)

Prints "FAIL FILE:LINE: TERM: ..." for each unexplained first use, then
"glossary: N chapters, T terms, U unexplained first uses: P passed, F
failed" (a chapter passes when it has none); exit 1 on a failure.
Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GLOSSARY = "GLOSSARY.md"

HEADING = re.compile(r"^##\s+(.+?)\s*\{#([A-Za-z0-9_-]+)\}\s*$")


class Entry:
    def __init__(self, term, ident, aliases=(), case=False):
        self.term, self.id, self.aliases, self.case = term, ident, list(aliases), case
        words = sorted({w for w in [term] + self.aliases if w}, key=len, reverse=True)
        alts = []
        for w in words:
            parts = [re.escape(p) for p in re.split(r"[\s-]+", w.strip()) if p]
            alts.append(r"(?:\s+|-)".join(parts))
        self.regex = re.compile(r"(?<!\w)(?:" + "|".join(alts) + r")s?(?!\w)",
                                0 if case else re.IGNORECASE)


def parse_glossary(text):
    """[Entry] from the glossary's text."""
    entries, cur = [], None
    for line in text.splitlines():
        m = HEADING.match(line)
        if m:
            term = re.sub(r"\s*\(.*\)\s*$", "", m.group(1)).strip()
            cur = {"term": term, "id": m.group(2), "aliases": [], "case": False}
            entries.append(cur)
            continue
        if line.startswith("#"):
            cur = None
            continue
        if cur is None:
            continue
        s = line.strip()
        a = re.match(r"^\*Also:\*\s*(.*)$", s)
        if a:
            cur["aliases"] += [x.strip().rstrip(".").strip() for x in a.group(1).split(",") if x.strip(" .")]
        if "*Case matters.*" in s:
            cur["case"] = True
    return [Entry(e["term"], e["id"], e["aliases"], e["case"]) for e in entries]


def blank(text, a, b):
    """text with [a, b) replaced by spaces, its newlines kept."""
    return text[:a] + re.sub(r"[^\n]", " ", text[a:b]) + text[b:]


def masked(text):
    """(text with everything that is not searched blanked out, line numbers
    and columns kept; [(text start, text end, target)] of its links)."""
    lines = text.split("\n")
    out = []
    fence = None
    prev_blank = True
    front = bool(lines) and lines[0].strip() == "---"  # YAML front matter
    for n, line in enumerate(lines):
        s = line.strip()
        if front:
            out.append(" " * len(line))
            front = n == 0 or s != "---"
            continue
        if fence:
            out.append(" " * len(line))
            if s.startswith(fence):
                fence = None
            continue
        m = re.match(r"^(`{3,}|~{3,})", s)
        if m:
            fence = m.group(1)
            out.append(" " * len(line))
            continue
        heading = re.match(r"^#{1,6}(\s|$)", s)
        indented_code = prev_blank and line.startswith("    ") and not re.match(r"^\s*([-*+]|\d+\.)\s", line)
        if heading or s.startswith("![") or s.startswith("{{") or indented_code:
            out.append(" " * len(line))
            prev_blank = prev_blank if line.startswith("    ") else not s
            continue
        out.append(line)
        prev_blank = not s
    t = "\n".join(out)
    # HTML comments (they may span lines), then code spans within a paragraph
    for m in list(re.finditer(r"<!--.*?-->", t, re.S)):
        t = blank(t, m.start(), m.end())
    for m in list(re.finditer(r"(`+)(?:(?!\n[ \t]*\n).)+?\1", t, re.S)):
        t = blank(t, m.start(), m.end())
    for m in list(re.finditer(r"\{\{[^}]*\}\}|<[^>\n]+>", t)):
        t = blank(t, m.start(), m.end())
    links = []
    for m in list(re.finditer(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^()\s]*)(?:\s+\"[^\"]*\")?\)", t)):
        links.append((m.start(1), m.end(1), m.group(2)))
        t = blank(t, m.end(1), m.end())  # "](target)"
        t = blank(t, m.start(), m.start(1))  # "["
    return t, links


def glossary_target(target, ident):
    path, _, frag = target.partition("#")
    return os.path.basename(path) == GLOSSARY and frag == ident


def italic_whole(original, a, b):
    """Is original[a:b] the whole of a single-star or underscore italic span?"""
    before, after = original[a - 1:a] if a else "", original[b:b + 1]
    if before not in ("*", "_") or after != before:
        return False
    outer_b, outer_a = original[a - 2:a - 1] if a >= 2 else "", original[b + 1:b + 2]
    return outer_b != before and outer_a != before


def check_chapter(text, entries):
    """[(line, term, what was found)] for the entries whose first use in
    text is neither a link to their entry nor an italic definition."""
    return [(line, term, why) for line, term, why, _ in first_uses(text, entries)]


def first_uses(text, entries):
    """[(line, term, why, (start, end, entry) or None)]: the unexplained
    first uses; the span is given where linking it in place would fix it."""
    t, links = masked(text)
    fine = fine_print_lines(text)
    bad = []
    for e in entries:
        uses = list(e.regex.finditer(t))
        if not uses:
            continue
        firsts = [uses[0]]
        if t.count("\n", 0, uses[0].start()) in fine:
            # a first reading may pass the fine print by: its first use
            # outside the fine print must explain the term too
            firsts += [m for m in uses if t.count("\n", 0, m.start()) not in fine][:1]
        for m in firsts:
            a, b = m.start(), m.end()
            line = t.count("\n", 0, a) + 1
            where = "first use" if m is uses[0] else "first use outside the fine print"
            link = next((l for l in links if l[0] <= a and b <= l[1]), None)
            if link is not None:
                if not glossary_target(link[2], e.id):
                    bad.append((line, e.term, f'{where} "{m.group(0)}" is the text of a link to {link[2]}, '
                                              f"not to GLOSSARY.md#{e.id}", None))
                continue
            if italic_whole(text, a, b):
                continue
            bad.append((line, e.term, f'{where} "{" ".join(m.group(0).split())}" neither links to '
                                      f"GLOSSARY.md#{e.id} nor is its definition in italics", (a, b, e)))
    return sorted(bad, key=lambda x: (x[0], x[1]))


def fine_print_lines(text):
    """The (0-based) numbers of the lines inside ::: fine-print blocks,
    their fences included."""
    out, divs, fence = set(), [], None
    for n, line in enumerate(text.split("\n")):
        s = line.strip()
        m = re.match(r"^(`{3,}|~{3,})", s)
        if fence or m:
            fence = None if fence and s.startswith(fence) else (fence or m.group(1))
        elif s.startswith(":::"):
            rest = s.strip(":").strip()
            if rest:
                divs.append("fine-print" in rest)
            elif divs:
                divs.pop()
            out.add(n)
            continue
        if any(divs):
            out.add(n)
    return out


def link_first_uses(text, entries):
    """text with each unexplained first use that is not already inside a
    link turned into a link to its entry (the --link mode)."""
    spans = sorted((u[3] for u in first_uses(text, entries) if u[3]), key=lambda x: x[0], reverse=True)
    for a, b, e in spans:
        text = f"{text[:a]}[{text[a:b]}]({GLOSSARY}#{e.id}){text[b:]}"
    return text


USED_IN = re.compile(r"\*\*Used in:\*\*.*?\.md\)\.(?=\n|$)", re.S)


def rewrite_used_in(gtext, chapters):
    """The glossary's text with each entry's "**Used in:** chapters [NN](...)."
    line listing the chapters (path -> text) that use the term."""
    entries = {e.id: e for e in parse_glossary(gtext)}
    texts = {os.path.basename(p): masked(t)[0] for p, t in chapters.items()}
    parts = re.split(r"(?m)^(?=## )", gtext)
    out = [parts[0]]
    for part in parts[1:]:
        m = HEADING.match(part.split("\n", 1)[0])
        e = entries.get(m.group(2)) if m else None
        if e is not None:
            used = sorted(n for n, t in texts.items() if e.regex.search(t))
            line = (f"**Used in:** {'chapter' if len(used) == 1 else 'chapters'} "
                    + ", ".join(f"[{n[:2]}]({n})" for n in used) + ".")
            part = USED_IN.sub(lambda _: line, part, count=1) if used else part
        out.append(part)
    return "".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/glossary.py", description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--link", action="store_true",
                    help="rewrite the files: link each unexplained first use to its entry, then check")
    ap.add_argument("--used-in", action="store_true",
                    help="rewrite each entry's 'Used in' line from the chapters, then check")
    ap.add_argument("files", nargs="*", help="chapters to check (default chapters/NN-*.md)")
    args = ap.parse_args(argv)
    gpath = os.path.join(args.root, "chapters", GLOSSARY)
    if not os.path.isfile(gpath):
        print(f"glossary: no chapters/{GLOSSARY}; nothing to check")
        print("glossary: 0 passed, 0 failed")
        return 0
    with open(gpath, encoding="utf-8") as f:
        gtext = f.read()
    if args.used_in:
        chapters = {}
        for p in sorted(glob.glob(os.path.join(args.root, "chapters", "[0-9][0-9]-*.md"))):
            with open(p, encoding="utf-8") as f:
                chapters[p] = f.read()
        new = rewrite_used_in(gtext, chapters)
        if new != gtext:
            with open(gpath, "w", encoding="utf-8") as f:
                f.write(new)
            gtext = new
    entries = parse_glossary(gtext)
    fails = []
    ids = [e.id for e in entries]
    for d in sorted({i for i in ids if ids.count(i) > 1}):
        fails.append(f"chapters/{GLOSSARY}: the id #{d} names more than one entry")
    files = args.files or sorted(glob.glob(os.path.join(args.root, "chapters", "[0-9][0-9]-*.md")))
    passed = 0
    for p in files:
        with open(p, encoding="utf-8") as f:
            text = f.read()
        if args.link:
            new = link_first_uses(text, entries)
            if new != text:
                with open(p, "w", encoding="utf-8") as f:
                    f.write(new)
                text = new
        bad = check_chapter(text, entries)
        rel = os.path.relpath(p, args.root)
        for line, term, why in bad:
            fails.append(f"{rel}:{line}: {term}: {why}")
        passed += not bad
    for f in fails:
        print(f"FAIL {f}")
    nfail = len(files) - passed + (1 if any(GLOSSARY in f.split(":")[0] for f in fails) else 0)
    print(f"glossary: {len(files)} chapters, {len(entries)} terms, {len(fails)} unexplained first uses: "
          f"{passed} passed, {nfail} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
