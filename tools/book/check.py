#!/usr/bin/env python3
"""check.py: prove the built book holds together (make book-check).

Part of the reader's tools. Reads build/book/*.html and checks:
  - every internal link and fragment (#id) resolves to a file and an id;
  - every image, stylesheet and script is a file in the book: no asset is
    loaded from another host (the book must work offline);
  - no citation was left unresolved (the Lua filter marks them cite-missing);
  - every chapters/figures/*.dot has its SVG, every chapter its page;
  - every {{plot NAME}} in a chapter, notes.md or an exercise README was
    drawn into plots/NAME.svg, and, once FINDINGS.md exists, drawn from
    results rather than left a placeholder; no page shows a {{finding}} or
    {{plot}} reference unresolved.
  - every chapter's Questions list names the questions notes.md answers
    for that chapter, the same ones in the same order.
Links to other hosts (GitHub at the pin) are allowed in <a href> only and
are not fetched.

Usage: tools/book/check.py [--root DIR] [--book DIR]
Prints each failure and ends with "book-check: N passed, M failed".
"""

import argparse
import glob
import html.parser
import os
import re
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import findings_refs  # noqa: E402  (tools/findings_refs.py)
import tryit  # noqa: E402  (tools/tryit.py)

PLACEHOLDER = "soloist-book: placeholder plot"  # the mark build.py puts in a placeholder plot


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.refs = []  # (tag, attr, value, line)
        self.missing = []  # text of cite-missing elements
        self._in_missing = 0
        self._buf = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("id", "name"):
            if a.get(k) and (k == "id" or tag == "a"):
                self.ids.add(a[k])
        line = self.getpos()[0]
        if tag in ("a", "link", "area") and a.get("href") is not None:
            self.refs.append((tag, "href", a["href"], line, a.get("rel", "")))
        for attr in ("src", "data", "poster"):
            if a.get(attr) is not None and tag in ("img", "script", "iframe", "source", "object", "video",
                                                    "audio", "embed", "input", "track"):
                self.refs.append((tag, attr, a[attr], line, ""))
        if tag == "image" or tag == "use":
            for attr in ("href", "xlink:href"):
                if a.get(attr):
                    self.refs.append((tag, attr, a[attr], line, ""))
        classes = (a.get("class") or "").split()
        if "cite-missing" in classes:
            self._in_missing += 1
            self._buf = []
        elif self._in_missing:
            self._in_missing += 1

    def handle_endtag(self, tag):
        if self._in_missing:
            self._in_missing -= 1
            if self._in_missing == 0:
                self.missing.append(" ".join("".join(self._buf).split()))

    def handle_data(self, data):
        if self._in_missing:
            self._buf.append(data)


def parse(path):
    p = Page()
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    p.close()
    return p


def is_external(url):
    s = urllib.parse.urlsplit(url)
    return bool(s.scheme and s.scheme not in ("file",)) or url.startswith("//")


def check_links(book, path, rel, pg, ids_of):
    """One page's links and assets: each resolves to a file in the book
    (and to an id there when it names one), none loads from another host
    or is a javascript: URL. A link out (an <a> to another host) is left
    alone. -> (links resolved, failures)."""
    refs, fails = 0, []
    for tag, attr, url, line, rel_attr in pg.refs:
        where = f"{rel}:{line}: <{tag} {attr}={url!r}>"
        if url.startswith(("mailto:", "data:")) and tag == "a":
            continue
        if is_external(url):
            if tag == "a":
                continue  # a link out (GitHub at the pin); never an asset
            fails.append(f"{where}: asset from another host; the book must work offline")
            continue
        if url.startswith("javascript:"):
            fails.append(f"{where}: javascript: URL")
            continue
        s = urllib.parse.urlsplit(url)
        target = os.path.normpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(s.path))) \
            if s.path else os.path.abspath(path)
        if not os.path.abspath(target).startswith(os.path.abspath(book) + os.sep):
            fails.append(f"{where}: points outside the book")
            continue
        if not os.path.isfile(target):
            fails.append(f"{where}: no such file in the book")
            continue
        if s.fragment:
            ids = ids_of(target)
            if ids is not None and urllib.parse.unquote(s.fragment) not in ids:
                fails.append(f"{where}: no id {s.fragment!r} in {os.path.relpath(target, book)}")
                continue
        refs += 1
    return refs, fails


def check_plot_refs(book, root, docs):
    """Every {{plot NAME}} in docs was drawn into the book, and is no
    placeholder once FINDINGS.md exists. -> (passed, failures)."""
    passed, fails = 0, []
    measured = os.path.isfile(os.path.join(root, "FINDINGS.md"))
    for doc in docs:
        with open(doc, encoding="utf-8") as f:
            refs_here = findings_refs.references(f.read(), findings_refs.PLOT_REF)
        for line, name in refs_here:
            where = f"{os.path.relpath(doc, root)}:{line}: {{{{plot {name}}}}}"
            svg = os.path.join(book, findings_refs.plot_path(name))
            if not os.path.isfile(svg) or os.path.getsize(svg) == 0:
                fails.append(f"{where}: no {findings_refs.plot_path(name)} in the book")
                continue
            with open(svg, encoding="utf-8", errors="replace") as f:
                placeholder = PLACEHOLDER in f.read(4096)
            if placeholder and measured:
                fails.append(f"{where}: FINDINGS.md exists but the plot is a placeholder (see `make book`'s notes)")
            else:
                passed += 1
    return passed, fails


def check_pages_drawn(book, root):
    """Every figure source has its SVG in the book, and every chapter its
    page. -> (passed, failures)."""
    passed, fails = 0, []
    for dot in sorted(glob.glob(os.path.join(root, "chapters", "figures", "*.dot"))):
        svg = os.path.join(book, "figures", os.path.basename(dot)[:-4] + ".svg")
        if os.path.isfile(svg) and os.path.getsize(svg) > 0:
            passed += 1
        else:
            fails.append(f"chapters/figures/{os.path.basename(dot)}: no figures/{os.path.basename(svg)} in the book")
    for ch in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*.md"))):
        page = os.path.join(book, os.path.basename(ch)[:-3] + ".html")
        if os.path.isfile(page):
            passed += 1
        else:
            fails.append(f"chapters/{os.path.basename(ch)}: no page {os.path.basename(page)} in the book")
    return passed, fails


def check(book, root):
    """The built book against the tree: every page's links and citations,
    a page per chapter, an SVG per figure and plot, no reference left
    unrendered, the question lists and the readings of measured rows.
    -> (passed, failures)."""
    passed, fails = 0, []
    pages = sorted(glob.glob(os.path.join(book, "**", "*.html"), recursive=True))
    if not pages:
        return 0, [f"no HTML in {book}: run `make book` first"]
    parsed = {os.path.abspath(p): parse(p) for p in pages}

    def ids_of(path):
        path = os.path.abspath(path)
        if path not in parsed and path.endswith(".html") and os.path.isfile(path):
            parsed[path] = parse(path)
        return parsed[path].ids if path in parsed else None

    refs = 0
    for path in pages:
        rel = os.path.relpath(path, book)
        pg = parsed[os.path.abspath(path)]
        before = len(fails)
        for t in pg.missing:
            fails.append(f"{rel}: unresolved citation: {t}")
        page_refs, page_fails = check_links(book, path, rel, pg, ids_of)
        refs += page_refs
        fails += page_fails
        if len(fails) == before:
            passed += 1  # one page: all its links, assets and citations resolve
    d_passed, d_fails = check_pages_drawn(book, root)
    passed += d_passed
    fails += d_fails
    # every plot reference was drawn, from results once there are any
    docs = sorted(glob.glob(os.path.join(root, "chapters", "*.md")) + glob.glob(os.path.join(root, "notes.md"))
                  + glob.glob(os.path.join(root, "exercises", "*", "README.md")))
    p_passed, p_fails = check_plot_refs(book, root, docs)
    passed += p_passed
    fails += p_fails
    for path in pages:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for pat in (findings_refs.REF, findings_refs.PLOT_REF, tryit.REF):
            m = pat.search(text)
            if m and os.path.basename(path) != "findings.html":
                fails.append(f"{os.path.relpath(path, book)}: unresolved reference {m.group(0)}")
    q_passed, q_fails = question_lists(root)
    passed += q_passed
    fails += q_fails
    # every reading of a row holds of the kept row (tools/findings_refs.py)
    n_read, reading_fails = findings_refs.check_readings(root, docs)
    passed += n_read - len(reading_fails)
    fails += [f"{w}: {{{{finding {rid} | {r or ''}}}}}: {why}" for w, rid, r, why in reading_fails]
    if os.path.isfile(os.path.join(book, "index.html")):
        passed += 1
    else:
        fails.append("no index.html")
    print(f"book-check: {len(pages)} pages, {refs} internal links and assets resolved")
    return passed, fails


QUESTION = re.compile(r"^(?:- )?\*\*Q(\d+)\.(\d+)\*\*")


def questions(path, listed):
    """{chapter: [question numbers]} from a file's question lines:
    `- **Q7.1** ...` in a chapter (listed), `**Q7.1** ...` in notes.md."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = QUESTION.match(line.rstrip("\n"))
            if m and line.startswith("- ") == listed:
                out.setdefault(int(m.group(1)), []).append("Q%s.%s" % (m.group(1), m.group(2)))
    return out


def question_lists(root):
    """A chapter's Questions must list what notes.md answers for it: a
    question added to one and not the other is drift the reader meets."""
    notes = os.path.join(root, "notes.md")
    if not os.path.isfile(notes):
        return 0, []
    answered = questions(notes, listed=False)
    passed, fails = 0, []
    for ch in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*.md"))):
        n = int(os.path.basename(ch)[:2])
        listed, want = questions(ch, listed=True).get(n, []), answered.get(n, [])
        if listed == want:
            passed += 1
        else:
            fails.append(f"chapters/{os.path.basename(ch)}: it lists the questions {listed}, notes.md answers "
                         f"{want} for chapter {n:02d}")
    return passed, fails


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/book/check.py", description=__doc__.split("\n")[0])
    root_default = os.path.dirname(os.path.dirname(HERE))
    ap.add_argument("--root", default=root_default)
    ap.add_argument("--book", default=None, help="the built book (default ROOT/build/book)")
    args = ap.parse_args(argv)
    book = os.path.abspath(args.book or os.path.join(args.root, "build", "book"))
    passed, fails = check(book, os.path.abspath(args.root))
    for f in fails:
        print(f"FAIL {f}")
    print(f"book-check: {passed} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
