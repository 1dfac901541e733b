#!/usr/bin/env python3
"""anchors: the book's citations of code, checked so they cannot drift.

Part of the reader's tools. Two kinds of citation:

* soloist's own code, by label, never by line number. The source carries
  markers, each on its own line:

      /*@ spsc-commit */            opens the region "spsc-commit"
      ...
      /*@ end */                    closes it

  and `/*@ exercise: NAME */ ... /*@ end */` marks an exercise region (see
  tools/exercise.py). Label regions do not nest; an exercise region may sit
  inside a label region. A chapter cites `src/queue_spsc.c@spsc-commit`;
  the region's lines are whatever they are today.

* Valkey or Redis at the pinned commit (tools/pins.json), by line:
  `valkey:src/io_threads.c:514-530`. Every such citation is listed in
  chapters/anchors.lock with the commit, the sha256 of the span and the
  text expected at its first line; `check` compares them with the source
  (tools/pinned-source.py) when the source is on this machine, and says how
  many it could not check when it is not.

  A citation names what it shows: the prose around it names an identifier
  in a code span (`sendReplyToClient`, is `valkey:src/networking.c:3041-3045`),
  the nearest one before the citation in its paragraph, else the first
  after it. `lock` records a span only when that identifier is in it, or
  is the function the span sits inside, and when the span's first line is
  the one a pending entry expects; otherwise it refuses and leaves the
  entry as it was. So a wrong commit or a shifted line is never locked.

In markdown a citation is an inline code span holding only the citation,
or a fenced code block whose only line is the citation (the book renders
the block form as the cited lines with file and line numbers).

    tools/anchors.py check            what `make check-anchors` runs
    tools/anchors.py lock [--refresh] rewrite chapters/anchors.lock
    tools/anchors.py labels [FILE..]  list the labels in src/
    tools/anchors.py show CITATION    print a citation's lines with a gutter

Python 3 standard library only.
"""

import argparse
import glob
import hashlib
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

sys.path.insert(0, HERE)
import findings_refs  # noqa: E402

_spec = importlib.util.spec_from_file_location("pinned_source", os.path.join(HERE, "pinned-source.py"))
pinned_source = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pinned_source)

MARK_LABEL = re.compile(r"^\s*/\*@\s+([A-Za-z0-9][A-Za-z0-9_.-]*)\s*\*/\s*$")
MARK_EXERCISE = re.compile(r"^\s*/\*@\s+exercise:\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s*\*/\s*$")
MARK_END = re.compile(r"^\s*/\*@\s+end\s*\*/\s*$")
MARK_ANY = re.compile(r"^\s*/\*@")

LABEL_CITE = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_./-]*\.[ch])@([A-Za-z0-9][A-Za-z0-9_.-]*)$")
UPSTREAM_CITE = re.compile(r"^([a-z][a-z0-9_-]*):([A-Za-z0-9_][A-Za-z0-9_./+-]*):(\d+)(?:-(\d+))?$")

LOCK_HEADER = """\
# chapters/anchors.lock: every Valkey/Redis citation in the chapters, notes.md
# and the exercise READMEs, with what the cited lines must still say.
# Written by `make anchors-lock` (tools/anchors.py lock), which needs the
# source (tools/pinned-source.py); checked by `make check-anchors`.
# Columns, tab-separated: citation, pinned commit, sha256 of the span
# (each line + "\\n"), the text of the span's first line (stripped).
# An entry written where the source was not available has the hash
# "pending" and, as its first line, the line the prose means (or "?"
# until someone writes it in by hand): it is not checked offline, fails
# wherever the source is until `make anchors-lock` records it there, and
# is recorded only if the source's first line is that line.
"""


SPANS_HEADER = """\
# chapters/spans.lock: every span of soloist's own code that the chapters,
# notes.md and the exercise READMEs cite by label, with the sha256 of its
# lines as they were when the prose about it was last read against them.
# Written by `make anchors-lock` (tools/anchors.py lock); checked by `make
# check-anchors`, which fails when a cited span changed and names every
# paragraph that cites it: re-read those paragraphs, change what the change
# made untrue, then lock again. Columns, tab-separated: citation, sha256 of
# the span (each line + "\\n"), the span's first line (stripped).
"""


def span_sha256(lines):
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return h.hexdigest()


class Region:
    def __init__(self, path, name, kind, open_line):
        self.path, self.name, self.kind, self.open_line = path, name, kind, open_line
        self.close_line = None
        self.lines = []

    @property
    def first(self):
        return self.open_line + 1

    @property
    def last(self):
        return self.close_line - 1


def scan_markers(path, text=None, rel=None):
    """Parse a source file's markers -> ({name: Region}, [error lines])."""
    rel = rel or path
    if text is None:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    lines = text.splitlines()
    regions, errors, stack = {}, [], []
    for no, line in enumerate(lines, 1):
        if not MARK_ANY.match(line):
            continue
        m_end, m_ex, m_lab = MARK_END.match(line), MARK_EXERCISE.match(line), MARK_LABEL.match(line)
        if m_end:
            if not stack:
                errors.append(f"{rel}:{no}: /*@ end */ with no open region")
                continue
            r = stack.pop()
            r.close_line = no
            r.lines = lines[r.open_line:no - 1]
            continue
        if m_ex:
            name, kind = m_ex.group(1), "exercise"
        elif m_lab and m_lab.group(1) != "end":
            name, kind = m_lab.group(1), "label"
        else:
            errors.append(f"{rel}:{no}: malformed marker {line.strip()!r}: expected /*@ NAME */, "
                          "/*@ exercise: NAME */ or /*@ end */ alone on the line")
            continue
        if any(o.kind == kind for o in stack) or (kind == "label" and stack):
            outer = stack[-1]
            errors.append(f"{rel}:{no}: region '{name}' opens inside '{outer.name}' (line {outer.open_line}); "
                          "regions do not nest (only an exercise may sit inside a label)")
        if name in regions:
            errors.append(f"{rel}:{no}: region '{name}' already defined at line {regions[name].open_line}")
        r = Region(rel, name, kind, no)
        regions.setdefault(name, r)
        stack.append(r)
    for r in stack:
        errors.append(f"{rel}:{r.open_line}: region '{r.name}' is never closed with /*@ end */")
    for r in list(regions.values()):
        if r.close_line is None:
            regions.pop(r.name)
        elif not r.lines:
            errors.append(f"{rel}:{r.open_line}: region '{r.name}' is empty")
    return regions, errors


class Citation:
    def __init__(self, doc, line, text, form, names=None):
        self.doc, self.line, self.text, self.form = doc, line, text, form
        self.names = names  # the identifier the prose names for it, or None

    def where(self):
        return f"{self.doc}:{self.line}"


FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
IDENTIFIER = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def named_identifier(spans, i):
    """The identifier the prose names for the citation at spans[i]: the
    nearest identifier span before it (back to the previous citation),
    else the first after it (up to the next one). spans: [(kind, text)]."""
    for j in range(i - 1, -1, -1):
        if spans[j][0] == "cite":
            break
        if spans[j][0] == "name":
            return spans[j][1]
    for j in range(i + 1, len(spans)):
        if spans[j][0] == "cite":
            break
        if spans[j][0] == "name":
            return spans[j][1]
    return None


def paragraph_spans(text, pins):
    """[(kind, text, offset)] of a paragraph's code spans: 'cite', 'name'
    (a bare identifier, `f` or `f()`) or 'other'."""
    out = []
    for m in INLINE_CODE.finditer(text):
        t = m.group(2).strip()
        if classify(t, pins):
            out.append(("cite", t, m.start()))
        elif IDENTIFIER.match(t):
            out.append(("name", IDENTIFIER.match(t).group(1), m.start()))
        else:
            out.append(("other", t, m.start()))
    return out


def extract_citations(doc, text, pins):
    """Citations in a markdown document: inline code spans and fenced blocks
    whose whole content is one citation. Each carries the identifier its
    paragraph names for it (for a block, the paragraph just above)."""
    out = []
    lines = text.splitlines()
    fence = None
    body = []
    start = 0
    in_comment = False
    para = []  # [(line number, text)] of the paragraph being read

    def end_paragraph():
        if not para:
            return None
        joined, starts = "", []
        for no, t in para:
            starts.append((len(joined), no))
            joined += t + "\n"
        spans = paragraph_spans(joined, pins)
        for i, (kind, t, off) in enumerate(spans):
            if kind == "cite":
                no = max(n for s, n in starts if s <= off)
                out.append(Citation(doc, no, t, "inline", named_identifier(spans, i)))
        last = [s[1] for s in spans if s[0] == "name"]
        para.clear()
        above[0] = last[-1] if last else None

    above = [None]  # the last identifier of the last paragraph read
    for no, line in enumerate(lines, 1):
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence[0]) and set(stripped) == {fence[0]} and len(stripped) >= fence[1]:
                content = [b for b in body if b.strip()]
                if len(content) == 1 and classify(content[0].strip(), pins):
                    out.append(Citation(doc, start + 1 + body.index(content[0]), content[0].strip(), "block",
                                        above[0]))
                fence = None
            else:
                body.append(line)
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            end_paragraph()
            in_comment = True
            continue
        m = FENCE_OPEN.match(line)
        if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            end_paragraph()
            fence, body, start = (m.group(2)[0], len(m.group(2))), [], no
            continue
        if not line.strip() or LIST_ITEM.match(line) or line.lstrip().startswith("#"):
            end_paragraph()
        if line.strip():
            para.append((no, line))
    end_paragraph()
    out.sort(key=lambda c: c.line)
    return out


def enclosing_function(lines, a):
    """The name of the C function whose body holds line a (1-based), read
    back to its definition line at column 0; None outside any function."""
    for i in range(a - 1, 0, -1):
        t = lines[i - 1]
        if t.startswith("}"):
            return None
        m = re.match(r"^[A-Za-z_][^;=]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", t)
        if m:
            return m.group(1)
    return None


def span_shows(lines, a, b, name):
    """Whether lines a..b of a file show `name`: in the span, or as the
    function the span sits inside."""
    if re.search(r"\b" + re.escape(name) + r"\b", "\n".join(lines[a - 1:b])):
        return True
    return enclosing_function(lines, a) == name


def lock_refusal(text, names, lines, expect_first):
    """Why a span must not be locked (None: it may). names: the identifiers
    the prose names for it; expect_first: the first line a pending entry
    expects, or None."""
    pin, path, a, b = parse_upstream(text)
    first = lines[a - 1].strip()
    if expect_first is not None and first != expect_first:
        return (f"its first line is {first!r}, not the {expect_first!r} the lock expects: "
                "a wrong commit or a shifted range; fix the citation (or the lock's line) and lock again")
    where = f"line {a}" if a == b else f"lines {a}-{b}"
    for name in names:
        if not span_shows(lines, a, b, name):
            inside = enclosing_function(lines, a)
            return (f"the prose names `{name}`, which is not in {where}"
                    + (f" (they are inside {inside})" if inside else "")
                    + ": a wrong commit or a shifted range")
    if not names and expect_first is None:
        return ("nothing says what it should show: name the identifier in a code span beside the citation "
                "(or write the expected first line into the lock)")
    return None


def classify(text, pins):
    """'label', 'upstream' or None."""
    if LABEL_CITE.match(text):
        return "label"
    m = UPSTREAM_CITE.match(text)
    if m and m.group(1) in pins:
        return "upstream"
    return None


def parse_upstream(text):
    m = UPSTREAM_CITE.match(text)
    pin, path, a = m.group(1), m.group(2), int(m.group(3))
    b = int(m.group(4)) if m.group(4) else a
    return pin, path, a, b


def documents(root):
    docs = sorted(glob.glob(os.path.join(root, "chapters", "*.md")))
    for extra in ["notes.md"] + sorted(glob.glob(os.path.join(root, "exercises", "*", "README.md"))):
        p = os.path.join(root, extra) if not os.path.isabs(extra) else extra
        if os.path.isfile(p):
            docs.append(p)
    return docs


def chapters(root):
    return sorted(p for p in glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*.md")))


class Project:
    """Everything check/lock/book need to know about a tree's citations."""

    def __init__(self, root=ROOT, pins=None, source=None):
        self.root = root
        self.pins = pins if pins is not None else pinned_source.load_pins()
        self.source = source
        self._markers = {}

    def rel(self, p):
        return os.path.relpath(p, self.root)

    def markers(self, relpath):
        if relpath not in self._markers:
            p = os.path.join(self.root, relpath)
            if not os.path.isfile(p):
                self._markers[relpath] = None
            else:
                self._markers[relpath] = scan_markers(p, rel=relpath)
        return self._markers[relpath]

    def source_files(self):
        files = []
        for d in ("src", "bench", "tests"):
            for ext in ("c", "h"):
                files += glob.glob(os.path.join(self.root, d, "**", f"*.{ext}"), recursive=True)
        return sorted(self.rel(f) for f in files)

    def citations(self):
        cites = []
        for d in documents(self.root):
            with open(d, encoding="utf-8") as f:
                cites += extract_citations(self.rel(d), f.read(), self.pins)
        return cites

    def resolve_label(self, text):
        """-> (Region, None) or (None, reason)."""
        m = LABEL_CITE.match(text)
        path, name = m.group(1), m.group(2)
        got = self.markers(path)
        if got is None:
            return None, f"no file {path} in the working tree"
        regions, errors = got
        if name not in regions:
            known = ", ".join(sorted(regions)) or "none"
            why = f"no label '{name}' in {path} (labels there: {known})"
            if errors:
                why += f"; {path} has marker errors: {errors[0]}"
            return None, why
        return regions[name], None

    # -- the lock ----------------------------------------------------------
    def lock_path(self):
        return os.path.join(self.root, "chapters", "anchors.lock")

    def read_table(self, rel, fields, valid, want):
        """The entries of one of chapters/'s tab-separated files:
        {first column: {field: column, ..., "line": n}} and the errors of
        the lines that are not `valid(cols)`; `want` says in the error what
        a line should be. No file: no entries."""
        entries, errors = {}, []
        p = os.path.join(self.root, rel)
        if not os.path.isfile(p):
            return entries, errors
        with open(p, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                cols = line.split("\t")
                if len(cols) != len(fields) + 1 or not valid(cols):
                    errors.append(f"{rel}:{no}: malformed entry (want {want})")
                    continue
                entries[cols[0]] = dict(zip(fields, cols[1:]), line=no)
        return entries, errors

    def read_lock(self):
        """{citation: {"commit", "sha256", "first", "line"}} from chapters/anchors.lock."""
        return self.read_table(os.path.join("chapters", "anchors.lock"), ("commit", "sha256", "first"),
                               lambda c: UPSTREAM_CITE.match(c[0]) and re.fullmatch(r"[0-9a-f]{64}|pending", c[2]),
                               "citation<TAB>commit<TAB>sha256<TAB>first line")

    def read_checked(self):
        """{citation: {"copy", "where", "supports", "note", "line"}} from
        chapters/anchors.checked: citations checked by hand against a public
        copy of the file while the pinned commit could not be read."""
        return self.read_table(os.path.join("chapters", "anchors.checked"), ("copy", "where", "supports", "note"),
                               lambda c: (UPSTREAM_CITE.match(c[0]) and re.fullmatch(r"exact|shifted [+-]\d+|absent", c[2])
                                          and c[3] in ("yes", "partly", "no")),
                               "citation<TAB>copy<TAB>exact|shifted +N|absent<TAB>yes|partly|no<TAB>note")

    def spans_path(self):
        return os.path.join(self.root, "chapters", "spans.lock")

    def read_spans(self):
        """{citation: {"sha256", "first", "line"}} from chapters/spans.lock."""
        return self.read_table(os.path.join("chapters", "spans.lock"), ("sha256", "first"),
                               lambda c: LABEL_CITE.match(c[0]) and re.fullmatch(r"[0-9a-f]{64}", c[1]),
                               "citation<TAB>sha256<TAB>first line")

    def write_spans(self, entries):
        with open(self.spans_path(), "w", encoding="utf-8") as f:
            f.write(SPANS_HEADER)
            for cite in sorted(entries):
                e = entries[cite]
                f.write(f"{cite}\t{e['sha256']}\t{e['first']}\n")

    def write_lock(self, entries):
        with open(self.lock_path(), "w", encoding="utf-8") as f:
            f.write(LOCK_HEADER)
            for cite in sorted(entries, key=_cite_sort_key):
                e = entries[cite]
                f.write(f"{cite}\t{e['commit']}\t{e['sha256']}\t{e['first']}\n")

    def upstream_span(self, text):
        """-> lines of an upstream citation (raises pinned_source errors)."""
        pin, path, a, b = parse_upstream(text)
        return self.source.span(pin, path, a, b)

    def upstream_file(self, text):
        """-> every line of the file an upstream citation is in, after
        checking the range is inside it (raises pinned_source errors)."""
        pin, path, a, b = parse_upstream(text)
        self.source.span(pin, path, a, b)
        return self.source.lines(pin, path)


def _cite_sort_key(c):
    pin, path, a, b = parse_upstream(c)
    return (pin, path, a, b)


def handout_modules(root):
    """(step, {module path}) in a handout tree (exercises/HANDOUT names the
    step; its exercise.json names the modules the learner writes), None in
    the full tree."""
    import exercise  # tools/exercise.py, beside this file
    step = exercise.handout_step(root)
    if step is None:
        return None
    try:
        return step, set(exercise.find_exercise(root, step).modules)
    except exercise.ExerciseError:
        return step, set()


def _source(offline=None):
    return pinned_source.PinnedSource(offline=offline)


# -- commands --------------------------------------------------------------

class _AnchorCheck:
    """One run of `check`: its counts and failures, filled in by each of
    its steps in turn (markers, labels, upstream, findings, unused) and
    printed by report()."""

    def __init__(self, proj):
        self.proj = proj
        self.passed = self.failed = self.unchecked = self.pending = 0
        self.fails = []
        self.skipped = []
        self.unavailable = []
        self.by_hand = {"exact": 0, "shifted": 0, "partly": [], "none": []}

    def markers(self):
        """1. Every marker in the tree is well formed; -> the number of
        files that have markers."""
        marker_files = 0
        for rel in self.proj.source_files():
            regions, errors = self.proj.markers(rel)
            if not regions and not errors:
                continue
            marker_files += 1
            if errors:
                self.failed += 1
                self.fails += errors
            else:
                self.passed += 1
        return marker_files

    def labels(self, labels):
        """2. Label citations against the working tree, and each cited
        span against the hash the prose was last read against
        (spans.lock)."""
        proj = self.proj
        spans, span_errors = proj.read_spans()
        self.failed += len(span_errors)
        self.fails += span_errors
        self.handout = handout = handout_modules(proj.root)
        by_label = {}
        for c in labels:
            by_label.setdefault(c.text, []).append(c)
        for text, cs in sorted(by_label.items()):
            region, why = proj.resolve_label(text)
            if region is None:
                self.failed += len(cs)
                self.fails += [f"{c.where()}: {text}: {why}" for c in cs]
                continue
            e = spans.get(text)
            where = ", ".join(c.where() for c in cs)
            if e is None:
                self.failed += 1
                self.fails.append(f"{text}: not in chapters/spans.lock; read the prose that cites it ({where}) against "
                                  "the code, then run `make anchors-lock`")
            elif e["sha256"] != span_sha256(region.lines) and handout and text.split("@")[0] in handout[1]:
                self.skipped.append(text)
            elif e["sha256"] != span_sha256(region.lines):
                self.failed += 1
                self.fails.append(f"{text}: the code changed since the prose about it was read (chapters/spans.lock:"
                                  f"{e['line']}); re-read {where}, change what is no longer true, then `make anchors-lock`")
            else:
                self.passed += len(cs)
        for text, e in sorted(spans.items(), key=lambda kv: kv[1]["line"]):
            if text not in by_label and not handout:
                self.failed += 1
                self.fails.append(f"chapters/spans.lock:{e['line']}: {text} is cited nowhere; run `make anchors-lock` "
                                  "to prune it")

    def upstream(self, ups):
        """3. Upstream citations against the lock, and the lock against
        the source."""
        self.lock, lock_errors = self.proj.read_lock()
        for e in lock_errors:
            self.failed += 1
            self.fails.append(e)
        self.cited, names = {}, {}
        for c in ups:
            self.cited.setdefault(c.text, c)
            if c.names:
                names.setdefault(c.text, set()).add(c.names)
        self.checked, checked_errors = self.proj.read_checked()
        self.failed += len(checked_errors)
        self.fails += checked_errors
        for text, c in sorted(self.cited.items()):
            self.upstream_one(text, c, names)

    def upstream_one(self, text, c, names):
        """One upstream citation: in the lock, at the pinned commit, its
        span's first line and hash as locked, and the names the prose
        gives shown by the span. Without the source, counted unchecked
        and looked up in chapters/anchors.checked."""
        proj = self.proj
        e = self.lock.get(text)
        pin = parse_upstream(text)[0]
        if e is None:
            self.failed += 1
            self.fails.append(f"{c.where()}: {text}: not in chapters/anchors.lock; run `make anchors-lock` "
                              "(needs the source)")
            return
        if e["commit"] != proj.pins[pin]["sha"]:
            self.failed += 1
            self.fails.append(f"chapters/anchors.lock:{e['line']}: {text} was locked at {e['commit']} but "
                              f"tools/pins.json pins {pin} at {proj.pins[pin]['sha']}; run `make anchors-lock "
                              "REFRESH=1` and review the changed spans")
            return
        try:
            lines = proj.upstream_span(text)
        except pinned_source.Unavailable as ex:
            self.unchecked_one(text, e, ex)
            return
        except pinned_source.PinError as ex:
            self.failed += 1
            self.fails.append(f"{c.where()}: {text}: {ex}")
            return
        if e["sha256"] == "pending":
            self.failed += 1
            now = lines[0].strip()
            claim = "" if e["first"] == "?" else (
                f"; its first line {'matches' if now == e['first'] else 'is ' + repr(now) + ', not'} the lock's {e['first']!r}")
            self.fails.append(f"chapters/anchors.lock:{e['line']}: {text} was locked without the source (hash "
                              f"pending){claim}; the source is here now: run `make anchors-lock` and review the "
                              "chapter against the lines")
            return
        if lines[0].strip() != e["first"]:
            self.failed += 1
            self.fails.append(f"{c.where()}: {text}: first line is now {lines[0].strip()!r}, the lock expects "
                              f"{e['first']!r}")
        elif pinned_source.span_sha256(lines) != e["sha256"]:
            self.failed += 1
            self.fails.append(f"{c.where()}: {text}: the span's sha256 differs from the lock (first line still "
                              "matches: the range may have grown or shifted)")
        else:
            _, _, a, b = parse_upstream(text)
            whole = proj.upstream_file(text)
            missing = [n for n in sorted(names.get(text, ())) if not span_shows(whole, a, b, n)]
            if missing:
                self.failed += 1
                where = f"line {a}" if a == b else f"lines {a}-{b}"
                self.fails.append(f"{c.where()}: {text}: the prose names `{missing[0]}`, which {where} do not show")
            else:
                self.passed += 1

    def unchecked_one(self, text, e, ex):
        """An upstream citation whose source is not here: not counted as
        passed; what chapters/anchors.checked says of it is tallied."""
        self.unchecked += 1
        self.unavailable.append(str(ex))
        if e["sha256"] == "pending":
            self.pending += 1
        h = self.checked.get(text)
        if h is None or h["where"] == "absent" or h["supports"] == "no":
            self.by_hand["none"].append(text)
        else:
            self.by_hand["exact" if h["where"] == "exact" else "shifted"] += 1
            if h["supports"] == "partly":
                self.by_hand["partly"].append(text)

    def findings(self, docs):
        """4. References to measured rows, {{finding F0.N | reading}}: the
        row exists and the reading the sentence states holds of it. 5.
        Plots, {{plot NAME}}, against tools/findings.py and FINDINGS.md's
        results."""
        root = self.proj.root
        rows = findings_refs.load(root)
        self.n_refs, reading_fails = findings_refs.check_readings(root, docs, rows) if rows is not None else (0, [])
        self.findings_unchecked = 0
        if rows is None:
            for d in docs:
                with open(d, encoding="utf-8") as f:
                    self.findings_unchecked += len(findings_refs.references(f.read()))
            self.n_refs = self.findings_unchecked
        else:
            self.failed += len(reading_fails)
            self.passed += self.n_refs - len(reading_fails)
            for where, rid, reading, why in reading_fails:
                self.fails.append(f"{where}: {{{{finding {rid}{' | ' + reading if reading else ''}}}}}: {why}")
        self.n_plots, ok, plot_fails, plots_unchecked = findings_refs.check_plots(root, docs)
        self.passed, self.failed, self.fails = self.passed + ok, self.failed + len(plot_fails), self.fails + plot_fails
        self.findings_unchecked += plots_unchecked

    def unused(self):
        """Lines of chapters/anchors.checked and chapters/anchors.lock that
        no citation uses."""
        for text, h in sorted(self.checked.items(), key=lambda kv: kv[1]["line"]):
            if text not in self.cited:
                self.failed += 1
                self.fails.append(f"chapters/anchors.checked:{h['line']}: {text} is cited nowhere; remove its line")
        for text, e in sorted(self.lock.items(), key=lambda kv: kv[1]["line"]):
            if text not in self.cited:
                self.failed += 1
                self.fails.append(f"chapters/anchors.lock:{e['line']}: {text} is cited nowhere; run `make "
                                  "anchors-lock` to prune it")

    def report(self, docs, n_chapters, marker_files, n_labels):
        """Prints the counts, each failure, and what was not checked."""
        if not n_chapters:
            print("check-anchors: no chapters in chapters/ yet (nothing cites code); checked the source markers only")
        print(f"check-anchors: {len(docs)} documents, {marker_files} source files with markers, "
              f"{n_labels} label citations, {len(self.cited)} upstream citations ({len(self.lock)} in the lock)")
        for f in self.fails:
            print(f"FAIL {f}")
        if self.handout:
            print(f"SKIPPED (a handout for step {self.handout[0]}): the prose was read against the reference's "
                  f"code, so the {len(self.skipped)} cited span(s) of your own {', '.join(sorted(self.handout[1]))} "
                  "that differ from it are not checked"
                  + (f" ({', '.join(self.skipped)})" if self.skipped else "")
                  + "; nor is a span the full tree's notes.md cites in the answers folded out of this one")
        if self.unchecked:
            self.report_unchecked()
        if self.findings_unchecked:
            print(f"NOT CHECKED: {self.findings_unchecked} reference(s) to FINDINGS.md rows or plots, because "
                  "FINDINGS.md does not exist yet (run `make findings`); they are not counted as passed.")
        elif self.n_refs or self.n_plots:
            print(f"check-anchors: {self.n_refs} references to FINDINGS.md rows, {self.n_plots} to plots")
        unchecked_all = self.unchecked + self.findings_unchecked
        print(f"check-anchors: {self.passed} passed, {self.failed} failed"
              + (f", {unchecked_all} not checked" if unchecked_all else ""))

    def report_unchecked(self):
        """The upstream citations left unchecked, and what was checked of
        them by hand."""
        by_hand = self.by_hand
        print(f"NOT CHECKED: {self.unchecked} upstream citation(s), because the source is not on this machine; "
              "they are not counted as passed.")
        print(f"  first reason: {self.unavailable[0]}")
        if self.pending:
            print(f"  {self.pending} of them were locked without the source (hash pending).")
        n_hand = by_hand["exact"] + by_hand["shifted"]
        print(f"  {n_hand} of them were checked by hand against a public copy of the file "
              f"(chapters/anchors.checked): {by_hand['exact']} at the cited lines, {by_hand['shifted']} shifted"
              + (f"; only partly confirmed: {', '.join(by_hand['partly'])}" if by_hand["partly"] else "")
              + (f"; confirmed by no copy (the book marks them unchecked): {', '.join(by_hand['none'])}"
                 if by_hand["none"] else ""))


def cmd_check(proj, args):
    """Every marker, label citation, upstream citation, reference to a
    measured row and plot, checked in that order (_AnchorCheck's steps)."""
    run = _AnchorCheck(proj)
    marker_files = run.markers()
    docs = documents(proj.root)
    n_chapters = len(chapters(proj.root))
    cites = proj.citations()
    labels = [c for c in cites if classify(c.text, proj.pins) == "label"]
    ups = [c for c in cites if classify(c.text, proj.pins) == "upstream"]
    run.labels(labels)
    run.upstream(ups)
    run.findings(docs)
    run.unused()
    run.report(docs, n_chapters, marker_files, len(labels))
    if args.strict and run.unchecked:
        return 1
    return 1 if run.failed else 0


def lock_spans(proj):
    """Rewrites chapters/spans.lock from today's label citations (offline)."""
    old, _ = proj.read_spans()
    new = {}
    for text in sorted({c.text for c in proj.citations() if classify(c.text, proj.pins) == "label"}):
        region, why = proj.resolve_label(text)
        if region is None:
            print(f"anchors: FAIL {text}: {why}", file=sys.stderr)
            continue
        new[text] = {"sha256": span_sha256(region.lines), "first": region.lines[0].strip().replace("\t", " ")}
        if text in old and old[text]["sha256"] != new[text]["sha256"]:
            print(f"anchors: {text} changed since it was last locked; locking it records that the prose citing it was re-read")
    proj.write_spans(new)
    pruned = len(set(old) - set(new))
    print(f"anchors: wrote chapters/spans.lock: {len(new)} soloist spans" + (f", pruned {pruned}" if pruned else ""))


def cmd_lock(proj, args):
    lock_spans(proj)
    cites = [c for c in proj.citations() if classify(c.text, proj.pins) == "upstream"]
    names = {}
    for c in cites:
        names.setdefault(c.text, set())
        if c.names:
            names[c.text].add(c.names)
    old, errors = proj.read_lock()
    for e in errors:
        print(f"anchors: ignoring {e}", file=sys.stderr)
    new, missing, bad = {}, [], []
    for text in sorted({c.text for c in cites}, key=_cite_sort_key):
        pin = parse_upstream(text)[0]
        e = old.get(text)
        same_commit = e is not None and e["commit"] == proj.pins[pin]["sha"]
        pending = {"commit": proj.pins[pin]["sha"], "sha256": "pending", "first": "?"}
        if same_commit and e["sha256"] != "pending" and not args.refresh:
            new[text] = e
            continue
        try:
            whole = proj.upstream_file(text)
        except pinned_source.Unavailable as ex:
            missing.append(str(ex))
            new[text] = e if same_commit else pending
            continue
        except pinned_source.PinError as ex:
            bad.append(f"{text}: {ex}")
            continue
        _, _, a, b = parse_upstream(text)
        lines = whole[a - 1:b]
        expect = e["first"] if same_commit and e["sha256"] == "pending" and e["first"] != "?" else None
        why = lock_refusal(text, sorted(names[text]), whole, expect)
        if why:
            bad.append(f"{text}: refused: {why}")
            new[text] = e if same_commit else pending
            continue
        entry = {"commit": proj.pins[pin]["sha"], "sha256": pinned_source.span_sha256(lines),
                 "first": lines[0].strip().replace("\t", " ")}
        if e and (e["sha256"] != entry["sha256"] or e["first"] != entry["first"]):
            print(f"anchors: {text} changed: review the chapter's prose about it")
        new[text] = entry
    pruned = sorted(set(old) - set(new))
    proj.write_lock(new)
    print(f"anchors: wrote chapters/anchors.lock: {len(new)} entries"
          + (f", pruned {len(pruned)}" if pruned else ""))
    for b in bad:
        print(f"anchors: FAIL {b}", file=sys.stderr)
    if missing:
        print(f"anchors: {len(missing)} citation(s) left pending (hash not recorded) because the source is not "
              f"here: {missing[0]}", file=sys.stderr)
        print("anchors: they are not checked offline; run `make anchors-lock` again where the source is "
              "(a clone in SOLOIST_SOURCE_DIR or the cache)", file=sys.stderr)
    return 1 if bad else 0


def cmd_labels(proj, args):
    files = args.files or proj.source_files()
    rc = 0
    for rel in files:
        got = proj.markers(rel)
        if got is None:
            print(f"anchors: no file {rel}", file=sys.stderr)
            rc = 2
            continue
        regions, errors = got
        for r in sorted(regions.values(), key=lambda r: r.open_line):
            print(f"{rel}@{r.name}\t{r.kind}\tlines {r.first}-{r.last}")
        for e in errors:
            print(f"anchors: {e}", file=sys.stderr)
            rc = 1
    return rc


def cmd_show(proj, args):
    kind = classify(args.citation, proj.pins)
    if kind == "label":
        region, why = proj.resolve_label(args.citation)
        if region is None:
            print(f"anchors: {why}", file=sys.stderr)
            return 1
        print(f"// {region.path} lines {region.first}-{region.last} (@{region.name})")
        print(pinned_source.gutter(region.lines, region.first))
        return 0
    if kind == "upstream":
        pin, path, a, b = parse_upstream(args.citation)
        lines = proj.upstream_span(args.citation)
        print(f"// {proj.source.label(pin)} {path}:{a}-{b}")
        print(pinned_source.gutter(lines, a))
        return 0
    print(f"anchors: {args.citation!r} is not a citation (want src/FILE.c@LABEL or PIN:PATH:LINE[-END])", file=sys.stderr)
    return 2


def main(argv=None):
    ap = argparse.ArgumentParser(prog="anchors.py", description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT, help="project root (default: this checkout)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("check", help="verify every citation (make check-anchors)")
    s.add_argument("--strict", action="store_true", help="fail when upstream citations cannot be checked")
    s.set_defaults(fn=cmd_check)
    s = sub.add_parser("lock", help="rewrite chapters/anchors.lock from the chapters (needs the source)")
    s.add_argument("--refresh", action="store_true", help="recompute every entry, not only new ones")
    s.set_defaults(fn=cmd_lock)
    s = sub.add_parser("labels", help="list the labels in the source")
    s.add_argument("files", nargs="*")
    s.set_defaults(fn=cmd_labels)
    s = sub.add_parser("show", help="print a citation's lines")
    s.add_argument("citation")
    s.set_defaults(fn=cmd_show)
    args = ap.parse_args(argv)
    try:
        proj = Project(root=os.path.abspath(args.root), source=_source())
        return args.fn(proj, args)
    except pinned_source.PinError as e:
        print(f"anchors: {e}", file=sys.stderr)
        return e.code
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
