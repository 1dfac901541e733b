#!/usr/bin/env python3
"""valkey_facts: every fact the book states about Valkey names its version
and records the copy of Valkey it was checked against.

One of the reader's tools. A chapter says things about how Valkey behaves,
how it is built, when it changed and what was measured of it. Each such
sentence must say which Valkey it is true of (a release, the 2024 tree, or
the pinned commit of tools/pins.json), and someone must have read that
version's source (or the document that states it) and written down what
they read. The record is chapters/facts/NN.checked, one per chapter
(COURSE.checked for chapters/COURSE.md); chapters/facts/README.md gives
its format. In short, one fact a line, tab-separated:

    quote  version  copy  where  holds  note

  quote    words copied from the sentence stating the fact (whitespace and
           line breaks as one space, markdown as written), at least four
           words, found exactly once in the chapter
  version  a release (7.2, 8.0, 8.0.0, 9.1.2 ...), a series (8.x: every
           8.0 and 8.1 release), "2024 tree" or "pin"
  copy     valkey-io/valkey@<tag or commit>, "valkey-55bbbe09a tarball",
           a document's URL, or, for a document whose address is not
           known, "document: WHAT (AUTHOR, YEAR)" (then holds is partly:
           no reader can open it from the record)
  where    the file and function (or the section) read in that copy
  holds    yes, partly or no (partly and no need a note)
  note     what was checked; for partly or no, what differs

`check` fails when:
  (a) a record's quote is not in its chapter, or is there more than once;
  (b) a record is malformed, or neither the sentence holding its quote nor
      that sentence's paragraph names its version (a release by its number;
      "2024 tree" by "2024", the tree's commit or any commit; "pin" by the
      word pin/pinned or a commit);
  (c) a sentence the detector flags is not covered by a record whose quote
      lies inside it.

The detector, on purpose simple: a sentence of a chapter's text (paragraphs,
list items, block quotes and fine-print blocks; not headings, tables, code
blocks, HTML comments or {{...}} lines) that contains "Valkey" or
"valkey-io" and also one of
  - a version number (two or three dotted numbers, 7.2 or 8.0.0, not a
    ratio such as 1.40x or a percentage), or "Valkey 8" (a major version
    alone, which no record can name: the sentence must say which release),
  - a pull request number (#1220),
  - a source file name (networking.c, io_threads.h),
  - an identifier in backticks (`writeToClient`, `IO_THREADS_MAX_NUM`).
A sentence citing a `valkey:src/...` line anchor is skipped: those are
checked through chapters/anchors.lock and chapters/anchors.checked.
What it cannot see: a fact in a sentence that does not say "Valkey" (one
that says "it" or "upstream" or "the server"), a fact with none of the
four marks ("Valkey reads a client's query in one system call"), facts in
tables and headings, and whether a sentence that is flagged is about
Valkey at all. Records may cover sentences it does not flag; they are
checked the same way (a and b).

    tools/valkey_facts.py check [--root DIR] [--chapters 00,01,COURSE]
    tools/valkey_facts.py flagged [--root DIR] [--chapters ...]
                                  lists the flagged sentences, each with
                                  its line and whether a record covers it

Prints "FAIL FILE:LINE: ..." for each problem and ends with
"valkey_facts: N chapters, R records, S flagged sentences: P passed, F
failed"; exit 1 on a failure. Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VERSION_RE = re.compile(r"^(\d+\.\d+(\.\d+)?|\d+\.x|2024 tree|pin)$")
COPY_RE = re.compile(r"^([\w.-]+/valkey@[\w.-]+|valkey-55bbbe09a tarball|https?://\S+|"
                     r"document: .+ \([^()]+, \d{4}(-\d\d(-\d\d)?)?\))$")
HOLDS = ("yes", "partly", "no")
COMMIT_RE = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")

# The detector's marks.
MARK_VERSION = re.compile(r"(?<![\w.])\d{1,2}\.\d{1,2}(\.\d+)?(?![\d.]*\d)(?!\s*[×x%])(?![\w])")
MARK_MAJOR = re.compile(r"\bValkey \d{1,2}\b(?!\.\d)")   # "Valkey 8", a version too loose to check
MARK_PR = re.compile(r"#\d{3,}\b")
MARK_FILE = re.compile(r"\b[A-Za-z_][\w-]*\.[ch]\b")
MARK_IDENT = re.compile(r"`[A-Za-z_]\w*(\(\))?`")
ANCHOR = re.compile(r"`valkey:src/")


def norm(s):
    return " ".join(s.split())


def chapter_files(root, only=None):
    """{key: path} of the chapters: '00'..'10' and 'COURSE'."""
    out = {}
    for p in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*.md"))):
        out[os.path.basename(p)[:2]] = p
    course = os.path.join(root, "chapters", "COURSE.md")
    if os.path.exists(course):
        out["COURSE"] = course
    if only:
        missing = [k for k in only if k not in out]
        if missing:
            raise SystemExit(f"valkey_facts: no chapter {', '.join(missing)}")
        out = {k: out[k] for k in only}
    return out


def paragraphs(text):
    """[(line number, paragraph text)] of the text the detector reads: the
    lines of paragraphs, list items and block quotes joined by one space,
    fine-print blocks included; front matter, headings, tables, images,
    fenced and indented code, HTML comments and {{...}} lines left out."""
    return [(ln, p) for ln, p, _ in paragraphs_with_leads(text)]


def paragraphs_with_leads(text):
    """paragraphs(), each with its lead: for a list item, the paragraph
    that introduces the list (it ends with a colon), whose words (a
    version named once for the whole list) count as the item's too; ""
    for anything else."""
    lines = text.splitlines()
    out, cur, start = [], [], 0
    fence, in_comment, i = None, False, 0
    lead = {"text": "", "item": False, "intro": ""}
    if lines and lines[0].strip() == "---":
        i = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), 0) + 1

    def flush():
        if cur:
            p = " ".join(cur)
            if lead["item"]:
                out.append((start, p, lead["intro"]))
            else:
                out.append((start, p, ""))
                lead["intro"] = p if p.rstrip().endswith(":") else ""
            cur.clear()

    for n in range(i, len(lines)):
        line, s = lines[n], lines[n].strip()
        if fence:
            if s.startswith(fence):
                fence = None
            continue
        if in_comment:
            in_comment = "-->" not in s
            continue
        m = re.match(r"^(`{3,}|~{3,})", s)
        if m:
            flush()
            fence = m.group(1)
            continue
        if s.startswith("<!--"):
            flush()
            in_comment = "-->" not in s
            continue
        # A heading is 1-6 #s and a space: a wrapped line that begins
        # "#2078)" is a paragraph's line, as markdown reads it.
        if (not s or re.match(r"#{1,6}(\s|$)", s) or s.startswith(("|", "![", ":::")) or
                (s.startswith("{{") and s.endswith("}}"))):
            flush()
            continue
        if line.startswith("    ") and not cur:
            continue
        if re.match(r"^([-*+]|\d+\.)\s", s):
            flush()
            lead["item"] = True
            s = re.sub(r"^([-*+]|\d+\.)\s+", "", s)
        elif not cur and not line.startswith((" ", "\t")):
            lead["item"] = False  # a paragraph of its own, not an item's next line
        if s.startswith(">"):
            s = s.lstrip("> ").strip()
            if not s:
                flush()
                continue
        if not cur:
            start = n + 1
        cur.append(s)
    flush()
    return out


def sentences(paragraph):
    """The paragraph's sentences as written (markdown kept), split after
    . ! or ? followed by a space and a capital, a digit or an opening
    mark; code spans and {{...}} are not split inside."""
    masked = re.sub(r"`[^`]*`|\{\{[^}]*\}\}", lambda m: "X" * len(m.group(0)), paragraph)
    cuts = [m.end() for m in re.finditer(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_]*[A-Z0-9`])", masked)]
    out, last = [], 0
    for c in cuts + [len(paragraph)]:
        s = paragraph[last:c].strip()
        if s:
            out.append(s)
        last = c
    return out


def is_fact(sentence):
    """The detector: see the module's docstring."""
    if "Valkey" not in sentence and "valkey-io" not in sentence:
        return False
    if ANCHOR.search(sentence):
        return False
    plain = re.sub(r"\{\{[^}]*\}\}|\]\([^)]*\)", " ", sentence)   # not the link targets
    return bool(MARK_VERSION.search(plain) or MARK_MAJOR.search(plain) or MARK_PR.search(plain) or MARK_FILE.search(plain)
                or MARK_IDENT.search(plain))


def names_version(text, version):
    """Whether TEXT names VERSION as the version column means it."""
    if version == "pin":
        return bool(re.search(r"\bpin(ned|s)?\b", text) or COMMIT_RE.search(text))
    if version == "2024 tree":
        return "2024" in text or bool(COMMIT_RE.search(text))
    return bool(re.search(r"(?<![\w.])" + re.escape(version) + r"(?!\.?\d)(?!\w)", text))


def read_records(path):
    """[(line number, [columns])] of a .checked file; comments and blank
    lines left out."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            # "# " opens a comment; a quote may begin "#2909" (a pull request)
            if not line.strip() or re.match(r"#(\s|$)", line):
                continue
            out.append((n, line.split("\t")))
    return out


class Chapter:
    def __init__(self, key, path):
        self.key, self.path = key, path
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.flat = norm(self.text)
        # (line, paragraph, [sentence]) with every piece whitespace-normalised
        self.paras = [(ln, norm(p), [norm(s) for s in sentences(p)]) for ln, p, _ in paragraphs_with_leads(self.text)]
        # a list item's lead, by the item's line (names_version reads it too)
        self.leads = {ln: norm(lead) for ln, _, lead in paragraphs_with_leads(self.text)}

    def where(self, quote):
        """[(line, paragraph, sentence)] of the sentences holding QUOTE,
        or of the paragraphs when it crosses a sentence's end."""
        hits = []
        for ln, p, ss in self.paras:
            if quote not in p:
                continue
            inside = [s for s in ss if quote in s]
            hits += [(ln, p, s) for s in inside] or [(ln, p, p)]
        return hits

    def flagged(self):
        return [(ln, p, s) for ln, p, ss in self.paras for s in ss if is_fact(s)]


def check(root, only=None, out=sys.stdout):
    """Prints each problem and the summary; -> number of failures."""
    chapters = chapter_files(root, only)
    fails, nrec, nflag = 0, 0, 0

    def fail(msg):
        nonlocal fails
        fails += 1
        print("FAIL " + msg, file=out)

    for key, path in chapters.items():
        ch = Chapter(key, path)
        rel = os.path.relpath(path, root)
        rpath = os.path.join(root, "chapters", "facts", key + ".checked")
        rrel = os.path.relpath(rpath, root)
        records = read_records(rpath) if os.path.exists(rpath) else []
        nrec += len(records)
        quotes = []
        for n, cols in records:
            at = f"{rrel}:{n}"
            if len(cols) != 6:
                fail(f"{at}: {len(cols)} tab-separated columns, not 6 (quote, version, copy, where, holds, note)")
                continue
            quote, version, copy, where, holds, note = (c.strip() for c in cols)
            if len(quote.split()) < 4:
                fail(f"{at}: the quote '{quote}' has fewer than four words")
                continue
            if norm(quote) != quote:
                fail(f"{at}: the quote is not whitespace-normalised (one space between words)")
                continue
            count = ch.flat.count(quote)
            if count != 1:
                fail(f"{at}: the quote '{quote}' occurs {count} times in {rel}, not once")
                continue
            quotes.append(quote)
            if not VERSION_RE.match(version):
                fail(f"{at}: version '{version}' is not a release (8.0, 8.0.0), a series (8.x), '2024 tree' or 'pin'")
            else:
                hits = ch.where(quote)
                if not hits:
                    fail(f"{at}: the quote is not in the text the check reads (a heading, table or code?)")
                elif not any(names_version(s, version) or names_version(p, version) or
                             names_version(ch.leads.get(ln, ""), version) for ln, p, s in hits):
                    fail(f"{rel}:{hits[0][0]}: neither the sentence nor its paragraph (nor its list's lead) names version "
                         f"'{version}' ({rrel}:{n})")
            if not COPY_RE.match(copy):
                fail(f"{at}: copy '{copy}' is not owner/valkey@REF, 'valkey-55bbbe09a tarball', a URL or "
                     "'document: WHAT (AUTHOR, YEAR)'")
            elif copy.startswith("document:") and holds != "partly":
                fail(f"{at}: a document without an address is at most partly checked (holds '{holds}')")
            if not where:
                fail(f"{at}: the where column is empty")
            if holds not in HOLDS:
                fail(f"{at}: holds '{holds}' is not yes, partly or no")
            elif holds != "yes" and not note:
                fail(f"{at}: holds '{holds}' needs a note saying what differs")
        for ln, p, s in ch.flagged():
            nflag += 1
            if not any(q in s for q in quotes):
                fail(f"{rel}:{ln}: a Valkey fact with no record in {rrel}: {s[:200]}")
    print(f"valkey_facts: {len(chapters)} chapters, {nrec} records, {nflag} flagged sentences: "
          f"{0 if fails else 1} passed, {1 if fails else 0} failed", file=out)
    return fails


def list_flagged(root, only=None, out=sys.stdout):
    for key, path in chapter_files(root, only).items():
        ch = Chapter(key, path)
        rpath = os.path.join(root, "chapters", "facts", key + ".checked")
        quotes = [c[0].strip() for _, c in read_records(rpath)] if os.path.exists(rpath) else []
        for ln, p, s in ch.flagged():
            mark = "ok" if any(q in s for q in quotes) else "--"
            print(f"{mark} {os.path.relpath(path, root)}:{ln}: {s}", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("check", "flagged"))
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--chapters", help="comma-separated: 00,01,...,10,COURSE (default: all)")
    a = ap.parse_args(argv)
    only = [c.strip() for c in a.chapters.split(",") if c.strip()] if a.chapters else None
    if a.mode == "flagged":
        list_flagged(a.root, only)
        return 0
    return 1 if check(a.root, only) else 0


if __name__ == "__main__":
    sys.exit(main())
