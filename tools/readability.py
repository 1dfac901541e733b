#!/usr/bin/env python3
"""readability: how long the book's sentences and paragraphs are.

The chapters are read by students on first reading, so the main line of
each chapter states and the qualifications move to fine-print blocks
(`::: fine-print` … `:::`, folded in the HTML book). This tool measures the
main line: the prose of a chapter with its front matter, headings, code
(fenced and indented), tables, HTML comments, figures and fine-print blocks
taken out. Paragraphs and list items count alike; an inline code span, a
citation or a {{...}} reference counts as one word, a link as its text.

Targets (the book's, checked by `make test` over every chapters/NN-*.md together
and reported per chapter):
  median sentence  <= 20 words
  longest tenth    <= 35 words   (the 90th percentile of sentence length)
  paragraph        <= 150 words  (every one, in every chapter)
and each chapter opens, right after its title, with what the reader will be
able to do after it ("**After this chapter you can:**", three to five
bullets) and "**In one paragraph.**", its summary.

    tools/readability.py [FILE ...]     report; exit 1 when a target is missed
    tools/readability.py --worst N      also list the N longest sentences

Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEDIAN_MAX, P90_MAX, PARAGRAPH_MAX = 20, 35, 150


def after_front_matter(lines):
    """The index of the first line after a YAML front matter block, or 0
    when the chapter has none."""
    if lines and lines[0].strip() == "---":
        return next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), 0) + 1
    return 0


def main_line(text):
    """[(line number, paragraph text)] of the main line of a chapter."""
    lines = text.splitlines()
    out, cur, start = [], [], 0
    fence = None          # the fence that opened a code block, or None
    divs = []             # open ::: divs, True for a fine-print one
    in_comment = False
    i = after_front_matter(lines)

    def flush():
        if cur:
            out.append((start, " ".join(cur)))
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
        if s.startswith(":::"):
            flush()
            rest = s.strip(":").strip()
            if rest:
                divs.append("fine-print" in rest)
            elif divs:
                divs.pop()
            continue
        if any(divs):
            continue
        if not s or s.startswith("#") or s.startswith("|") or s.startswith("!["):
            flush()
            continue
        if line.startswith("    ") and not cur:        # indented code
            continue
        if re.match(r"^([-*+]|\d+\.)\s", s):            # a list item is a paragraph
            flush()
            s = re.sub(r"^([-*+]|\d+\.)\s+", "", s)
        if s.startswith(">"):
            s = s.lstrip("> ").strip()
            if not s:
                flush()
                continue
        if s.startswith("{{plot ") or s.startswith("{{try-it "):
            flush()
            continue
        if not cur:
            start = n + 1
        cur.append(s)
    flush()
    return out


def words(paragraph):
    p = re.sub(r"\{\{[^}]*\}\}", " X ", paragraph)
    p = re.sub(r"`[^`]*`", " X ", p)
    p = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", p)
    p = re.sub(r"<[^>]+>", " ", p)
    p = re.sub(r"[*_]{1,3}", "", p)
    return p


def sentences(paragraph):
    """The paragraph's sentences, each a list of words."""
    text = words(paragraph)
    parts = re.split(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])", text)
    out = []
    for part in parts:
        w = [t for t in part.split() if re.search(r"[\w]", t)]
        if w:
            out.append(w)
    return out


def measure(text):
    paras = main_line(text)
    lens, long_paras, all_sents = [], [], []
    for line, p in paras:
        sents = sentences(p)
        n = sum(len(s) for s in sents)
        if n > PARAGRAPH_MAX:
            long_paras.append((line, n))
        for s in sents:
            lens.append(len(s))
            all_sents.append((len(s), line, " ".join(s)))
    return lens, long_paras, all_sents


def p90(lens):
    if not lens:
        return 0
    s = sorted(lens)
    return s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]


def opening_problems(text):
    """Why a chapter does not open as the book's chapters do: right after
    its title, what the reader will be able to do (three to five bullets),
    then a one-paragraph summary; [] when it does."""
    lines = text.splitlines()
    try:
        title = next(i for i, l in enumerate(lines) if l.startswith("# "))
    except StopIteration:
        return ["no '# ' title"]
    rest = [l for l in lines[title + 1:]]
    body = [l for l in rest if l.strip()]
    if not body or body[0].strip() != "**After this chapter you can:**":
        return ["the title is not followed by '**After this chapter you can:**'"]
    i = rest.index(body[0]) + 1
    bullets = 0
    while i < len(rest) and (not rest[i].strip() or rest[i].startswith(("- ", "  "))):
        bullets += rest[i].startswith("- ")
        i += 1
    out = []
    if not 3 <= bullets <= 5:
        out.append(f"'After this chapter you can' has {bullets} bullets (three to five)")
    if i >= len(rest) or not rest[i].startswith("**In one paragraph.**"):
        out.append("the bullets are not followed by '**In one paragraph.**' and the summary")
    return out


def report(paths, worst=0, out=sys.stdout):
    """Prints the figures; -> True when every target is met."""
    total, ok = [], True
    for p in paths:
        with open(p, encoding="utf-8") as f:
            lens, long_paras, sents = measure(f.read())
        total += lens
        rel = os.path.relpath(p, ROOT)
        med = statistics.median(lens) if lens else 0
        flag = "" if med <= MEDIAN_MAX and p90(lens) <= P90_MAX else "  (over target)"
        print(f"{rel}: {len(lens)} sentences, median {med:g} words, longest tenth {p90(lens)} words, "
              f"longest paragraph {max([n for _, n in long_paras] or [0]) or 'within'} "
              f"{'words' if long_paras else str(PARAGRAPH_MAX)}{flag}", file=out)
        for line, n in long_paras:
            print(f"  FAIL {rel}:{line}: a paragraph of {n} words (at most {PARAGRAPH_MAX})", file=out)
            ok = False
        with open(p, encoding="utf-8") as f:
            for why in opening_problems(f.read()):
                print(f"  FAIL {rel}: {why}", file=out)
                ok = False
        for n, line, s in sorted(sents, reverse=True)[:worst]:
            print(f"  {rel}:{line}: {n} words: {s[:160]}", file=out)
    med = statistics.median(total) if total else 0
    print(f"readability: {len(paths)} chapters, {len(total)} sentences: median {med:g} words (target <= {MEDIAN_MAX}), "
          f"longest tenth {p90(total)} words (target <= {P90_MAX}), paragraphs <= {PARAGRAPH_MAX} words: "
          f"{'met' if ok else 'not met'}", file=out)
    return ok and med <= MEDIAN_MAX and p90(total) <= P90_MAX


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/readability.py", description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="chapters (default: every chapters/NN-*.md)")
    ap.add_argument("--worst", type=int, default=0, help="list the N longest sentences of each file")
    a = ap.parse_args(argv)
    files = a.files or sorted(p for p in glob.glob(os.path.join(ROOT, "chapters", "[0-9][0-9]-*.md")))
    return 0 if report(files, a.worst) else 1


if __name__ == "__main__":
    sys.exit(main())
