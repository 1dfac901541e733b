#!/usr/bin/env python3
"""longfuncs: no function in src/ or tools/ runs over 64 lines unless it
says why.

A reader takes in a function whole or not at all, and past about a
screen they stop holding it: a long function is usually several ideas
that want a name each. This tool lists every function longer than LIMIT
lines; each must be split, or carry a reason.

What is a function, and its length:

  - C (src/*.c): each top-level function body, found by matching braces
    with comments, strings, character constants and preprocessor lines
    skipped. A body is a top-level "{" whose last token before it is ")"
    (so struct, enum and initializer braces are not functions). Its
    length runs from the line its declaration starts on (the first token
    after the previous top-level ";", "}" or preprocessor line) to the
    line of its closing "}", both counted.
  - Python (tools/*.py and tools/**/*.py, and the scripts in tools/ with
    a python shebang): every def, methods and nested defs included, from
    its "def" line to its last line (ast's lineno and end_lineno).

A function may stay longer when the reader gains nothing by the split
(a table, a state machine read top to bottom, a region a learner writes
whole): it then carries a reason: in C, a line that starts "Long:" in
one of the comments just above the function (the run of comments and
anchor markers such as "/*@ name */" that ends on the line before it, so
that the reason can sit outside a region the chapters cite); in Python,
a comment line just above the def (or its decorators) or a docstring
line that starts "Long:".

    tools/longfuncs.py [--root DIR] [--limit N]   check; exit 1 on a failure
    tools/longfuncs.py --list                     every function over the
                                                  limit, reasons included

Python 3 standard library only.
"""

import argparse
import ast
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 64
REASON = "Long:"

# Being split into smaller functions on another line of work; each is
# taken off this list when its split is done (paths from the root).

ANCHOR = re.compile(r"^\s*/\*@.*\*/\s*$")


def strip_code(text):
    """text with comments, strings and character constants blanked
    (newlines kept, so line numbers hold) and preprocessor lines blanked;
    and the comments found, as (first line, last line, text) with lines
    counted from 1."""
    out, comments = [], []
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            line += 1
            i += 1
            at_line_start = True
            continue
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    line += 1
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        at_line_start = False
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            body = text[i:end]
            comments.append((line, line + body.count("\n"), body))
            out.append("".join(ch if ch == "\n" else " " for ch in body))
            line += body.count("\n")
            i = end
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments.append((line, line, text[i:end]))
            out.append(" " * (end - i))
            i = end
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out), comments


def comment_lines(body):
    """The lines of a comment with its markers dropped."""
    body = body.strip()
    if body.startswith("//"):
        return [body[2:].strip()]
    body = body[2:-2] if body.endswith("*/") else body[2:]
    return [re.sub(r"^\s*\*?\s?", "", l).strip() for l in body.split("\n")]


def has_reason(lines_text):
    return any(l.startswith(REASON) for l in lines_text)


def c_functions(text):
    """[(name, first line, last line, reason given)] for each top-level
    function body in C source text."""
    code, comments = strip_code(text)
    src_lines = text.split("\n")
    by_end = {}
    for first, last, body in comments:
        by_end.setdefault(last, []).append((first, body))
    funcs = []
    depth, line = 0, 1
    decl_start = None  # the line of the first token of the current declaration
    last_tok = ""
    open_line = name = None
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
            continue
        if c in " \t\r\f\v":
            continue
        if depth == 0:
            if decl_start is None and c not in ";}":
                decl_start = line
            if c == "{":
                if last_tok == ")":
                    open_line = line
                    name = c_name(code[:i])
                depth = 1
            elif c == ";":
                decl_start = None
            last_tok = c
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if open_line is not None:
                    start = decl_start or open_line
                    funcs.append((name, start, line, c_reason(by_end, src_lines, start)))
                    open_line = None
                    decl_start = None
                    last_tok = "}"
                else:
                    # A struct/enum/initializer body: its declaration goes
                    # on to a ";".
                    last_tok = "}"
    return funcs


def c_name(before):
    """The function's name: the identifier before the "(" that opens its
    parameter list, the one matching the last ")" in before."""
    depth = 0
    for j in range(len(before) - 1, -1, -1):
        ch = before[j]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                m = re.search(r"([A-Za-z_]\w*)\s*$", before[:j])
                return m.group(1) if m else "?"
    return "?"


def c_reason(by_end, src_lines, start):
    """Whether a comment in the run of comments and anchor marker lines
    just above start has a line starting "Long:"."""
    prev = start - 1
    while prev >= 1:
        if ANCHOR.match(src_lines[prev - 1]):
            prev -= 1
            continue
        found = by_end.get(prev)
        if not found:
            return False
        if any(has_reason(comment_lines(body)) for _, body in found):
            return True
        prev = min(first for first, _ in found) - 1
    return False


def py_functions(text, filename="<text>"):
    """[(name, first line, last line, reason given)] for every def in
    Python source text."""
    tree = ast.parse(text, filename)
    lines = text.split("\n")
    funcs = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        top = min([node.lineno] + [d.lineno for d in node.decorator_list])
        reason = False
        doc = ast.get_docstring(node)
        if doc and has_reason([l.strip() for l in doc.split("\n")]):
            reason = True
        above = top - 1
        while not reason and above >= 1 and lines[above - 1].strip().startswith("#"):
            if lines[above - 1].strip().lstrip("#").strip().startswith(REASON):
                reason = True
            above -= 1
        funcs.append((node.name, node.lineno, node.end_lineno, reason))
    return funcs


def is_python_script(path):
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline()
    except (OSError, UnicodeDecodeError):
        return False
    return first.startswith("#!") and "python" in first


def sources(root):
    """The files read, as paths relative to root."""
    c = sorted(glob.glob(os.path.join(root, "src", "*.c")))
    py = set(glob.glob(os.path.join(root, "tools", "**", "*.py"), recursive=True))
    for p in glob.glob(os.path.join(root, "tools", "**", "*"), recursive=True):
        if os.path.isfile(p) and "." not in os.path.basename(p) and is_python_script(p):
            py.add(p)
    rel = [os.path.relpath(p, root) for p in c + sorted(py)]
    return rel


def check(root, limit):
    """-> (files read, [(path, name, first, last, reason)]) for every
    function over limit lines."""
    files = sources(root)
    long = []
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        funcs = c_functions(text) if rel.endswith(".c") else py_functions(text, rel)
        for name, first, last, reason in funcs:
            if last - first + 1 > limit:
                long.append((rel, name, first, last, reason))
    return files, long


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--limit", type=int, default=LIMIT)
    ap.add_argument("--list", action="store_true", help="list every long function, with a reason or not")
    args = ap.parse_args(argv)
    files, long = check(args.root, args.limit)
    bad = [x for x in long if not x[4]]
    for rel, name, first, last, reason in sorted(long):
        if args.list or not reason:
            word = "long (says why)" if reason else "FAIL"
            print("%s %s:%d %s is %d lines (over %d)%s" % (
                word, rel, first, name, last - first + 1, args.limit,
                "" if reason else ': split it, or say why not in a comment starting "Long:" just before it'))
    print("%d passed, %d failed" % (len(files) - len({x[0] for x in bad}), len({x[0] for x in bad})))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
