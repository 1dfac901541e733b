#!/usr/bin/env python3
"""steps: each file in src/ names its step and its layer, and the step is
the one README.md's step table gives its module.

Every file in src/ opens saying which step it belongs to and which layer
it sits in, as "Step 2 (threads layer)". This tool holds those words to
the two places that decide them: README.md's step table ("What is
implemented") and tools/layers.py's LAYERS.

The declaration. In the file's first 6 lines (comment markers dropped,
lines joined), the first of:

    Step N (LAYER layer ...           Steps N and M (LAYER layer ...
    Steps N, M and K (LAYER layer ... Steps N-M (LAYER layer ...
    step N, LAYER layer               (inside a title's parentheses)
    Not a step (LAYER layer ...

N is the file's step; the numbers after it name steps that add to the
file ("Steps 4 and 5"), and each must be a row of the table too. LAYER is
a layer's name exactly as in tools/layers.py.

The rule. The table's module(s) column names each step's modules (job.h
names the module job; words that name no module, as "resumable find",
are ignored). A file's module is its name without the extension and
without a _private or _test suffix; a file belongs to the longest module
the table names that its module is, or begins with followed by "_"
(hashtable_iter.c belongs to hashtable, cmd_zset_algebra.c to cmd_zset).
Then:

  1. a file whose module some rows name says the step of one of those
     rows: its first N is one of them (a module in several rows, as
     networking in steps 0, 4 and 9, may name any);
  2. a module named in the row whose step is "—" (not a step: lists,
     hashes and sets) says "Not a step";
  3. a file whose module no row names (util.c, config_load.c, trace.c)
     says the step it belongs to, any step of the table, or "Not a
     step": the table does not decide it, the file does;
  4. in every case, LAYER is the layer tools/layers.py places the file
     in.

A file with no declaration fails, and so does one that breaks a rule;
each failure says what the file says and what the table allows.

    tools/steps.py [--root DIR]     check; exit 1 on a failure

Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402  (tools/layers.py: LAYERS, layer_of, module_of)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAD_LINES = 6
NOT_A_STEP = "Not a step"
DECL = re.compile(r"(?:(?P<steps>[Ss]teps? \d+(?:(?:, | and |-|–)\d+)*)|(?P<none>[Nn]ot a step))"
                  r"\s*[(,]\s*(?P<layer>[a-z][a-z-]*) layer\b")


def step_table(readme):
    """{module: set of steps} from README.md's step table, a step being
    an int or NOT_A_STEP (the row whose step is "—"), and the set of
    every step the table has."""
    with open(readme, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if re.match(r"\|\s*step\s*\|", l)), None)
    if start is None:
        raise ValueError("%s has no step table (a row starting | step |)" % readme)
    head = [c.strip() for c in lines[start].strip().strip("|").split("|")]
    col = next((i for i, c in enumerate(head) if c.startswith("module")), None)
    if col is None:
        raise ValueError("%s's step table has no module(s) column" % readme)
    modules, steps = {}, set()
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set(cells[0]) <= set("-: ") or len(cells) <= col:
            continue  # the |---| line
        step = int(cells[0]) if cells[0].isdigit() else NOT_A_STEP
        steps.add(step)
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[ch]\b)?", cells[col]):
            modules.setdefault(re.sub(r"\.[ch]$", "", word), set()).add(step)
    return modules, steps


def table_module(name, modules):
    """The longest module the table names that name's module is, or
    begins with followed by "_"; None when the table names none."""
    parts = layers.module_of(name).split("_")
    for k in range(len(parts), 0, -1):
        m = "_".join(parts[:k])
        if m in modules:
            return m
    return None


def declaration(path):
    """(steps, layer) from the file's opening lines: steps a list of ints,
    or [NOT_A_STEP]; None when the file declares nothing."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = [next(f, "") for _ in range(HEAD_LINES)]
    except OSError:
        return None
    text = " ".join(re.sub(r"^\s*(?:/\*+|\*+/?|//)?\s*", "", l).strip() for l in head)
    m = DECL.search(text)
    if not m:
        return None
    steps = [int(n) for n in re.findall(r"\d+", m.group("steps"))] if m.group("steps") else [NOT_A_STEP]
    return steps, m.group("layer")


def show(step):
    return "step %s" % step if step != NOT_A_STEP else '"%s"' % NOT_A_STEP


def file_violations(src, name, modules, steps):
    """What src/name's declaration gets wrong, as lines of text (empty: it passes)."""
    d = declaration(os.path.join(src, name))
    if d is None:
        return ['%s names no step and layer in its first %d lines: open it with "Step N (LAYER layer)" '
                '(or "Not a step (LAYER layer)"; tools/steps.py says which)' % (name, HEAD_LINES)]
    said, layer = d
    out = []
    home = layers.layer_of(name)
    if len(home) == 1 and layer != home[0]["name"]:
        out.append("%s says it is in the %s layer; tools/layers.py places it in the %s layer"
                   % (name, layer, home[0]["name"]))
    elif len(home) != 1:
        out.append("%s says it is in the %s layer; tools/layers.py places it in %d layers"
                   % (name, layer, len(home)))
    for s in said[1:]:
        if s not in steps:
            out.append("%s names step %s, which README.md's step table has no row for" % (name, s))
    first = said[0]
    mod = table_module(name, modules)
    if mod is None:
        if first not in steps:
            out.append("%s says step %s, which README.md's step table has no row for (its module is in no "
                       'row, so it may say any step of the table, or "%s")' % (name, first, NOT_A_STEP))
    elif first not in modules[mod]:
        allowed = sorted(modules[mod], key=lambda s: (s == NOT_A_STEP, s if s != NOT_A_STEP else 0))
        out.append("%s says %s, but README.md's step table names %s in %s" % (
            name, show(first), mod, " and ".join(
                "the row of step %s" % s if s != NOT_A_STEP else 'the row "—" (so "%s")' % NOT_A_STEP
                for s in allowed)))
    return out


def check(root):
    src = os.path.join(root, "src")
    modules, steps = step_table(os.path.join(root, "README.md"))
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(src, "*.[ch]")))
    violations, failed = [], 0
    for n in names:
        v = file_violations(src, n, modules, steps)
        failed += bool(v)
        violations.extend(v)
    return len(names), failed, violations


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    args = ap.parse_args(argv)
    try:
        checked, failed, violations = check(args.root)
    except (OSError, ValueError) as e:
        print("FAIL %s" % e)
        return 1
    for v in violations:
        print("FAIL " + v)
    print("steps: %d files' steps and layers checked against README.md's step table and tools/layers.py" % checked)
    print("%d passed, %d failed" % (checked - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
