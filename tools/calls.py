#!/usr/bin/env python3
"""calls: soloist's layering, checked on the call graph.

tools/layers.py checks the line on the include graph: what a file may
name. A module can still call one that it reaches only through a shared
header (every config*.c includes config_private.h, every zset*.c
zset_private.h), so two modules can call each other in a circle that no
include shows. This tool reads what the compiled code calls and holds it
to the same line, with layers.py's LAYERS and modules (a module is X for
X.c, X.h, X_private.h and X_test.h).

Where the calls come from. For every src/X.c the build's object
build/obj/X.o (`make server` makes them; suite 15 runs it first). `nm`
lists the global symbols each object defines and the ones it leaves
undefined; an undefined symbol that another object of src/ defines as a
function (nm's T, W or i: in a text section) is a call from the one to
the other, since that symbol is what the linker resolves the call to.
Module X calls module Y when a file of X leaves undefined a function a
file of Y defines, Y != X.

Why that is sound. In C a file can reach a function of another file only
by its external name, and every such name is an undefined symbol of the
caller's object, so every direct call between two files is in the list,
and so is every taking of another file's function's address (counted as
a call: the taker means it to be called). The objects are the build's,
compiled with the project's flags; optimisation may drop a call (dead
code), never add one to another file, and without LTO nothing is inlined
across files.

What it cannot see, on purpose or not:
  - calls through a function pointer handed over at run time: the
    hashtable's type callbacks, the job handlers io_offload gives
    io_threads, the main halves networking gives io_offload, an option's
    special set and get that config_types.c runs through the cfg it is
    handed, the command table's handlers. The caller holds no symbol of
    the callee; the module that registers the pointer takes the address
    and is the one seen (README.md: a lower module calls a higher one
    only through what the higher one registered).
  - data: a reference to another file's variable is not a call, and is
    left out. commands.c reads the command tables that cmd_*.c define,
    some of them in the server layer above it: that is the registration
    above, the one upward reference the linker resolves (README.md);
    configuration variables read across files are the same.
  - static inline functions and macros of a header: they are compiled
    into each file that includes them and are that file's own code (the
    include graph sees the header).
  - code the default build leaves out (#if, SOLOIST_NO_TRACE).

Checks, one test per src/*.c (its object):
  1. the object is there and newer than its sources (the .c and, from
     the build's .d file, every header it includes); otherwise the check
     fails saying to build, since a stale object would check old code;
  2. the line: a file calls no function of a layer above its own, nor of
     a layer (or, by the callee's header X.h, a header glob) that its
     layer's `never` names;
  3. no circles: the module call graph has none, inside a layer or
     across; every circle fails, printed with a call for each step.

    tools/calls.py [--root DIR] [--objects DIR]   check; exit 1 on a violation
    tools/calls.py --graph                        print each module's calls

Python 3 standard library and binutils' nm only.
"""

import argparse
import glob
import importlib.util
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_spec = importlib.util.spec_from_file_location("layers", os.path.join(HERE, "layers.py"))
layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layers)

FUNCTION_TYPES = ("T", "W", "i")  # nm: text, weak (defined), indirect function


def symbols(obj):
    """(defined functions, defined data, undefined) global symbols of one object."""
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("nm %s: %s" % (obj, out.stderr.strip()))
    funcs, data, undef = set(), set(), set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undef.add(name)
        elif kind in FUNCTION_TYPES:
            funcs.add(name)
        elif kind.isupper():
            data.add(name)
    return funcs, data, undef


def prerequisites(objdir, stem, src):
    """The sources an object was built from: its .c, and the headers its .d names."""
    deps = [os.path.join(src, stem + ".c")]
    try:
        with open(os.path.join(objdir, stem + ".d")) as f:
            text = f.read().replace("\\\n", " ")
    except OSError:
        return deps
    first = text.split("\n", 1)[0]
    if ":" in first:
        for d in first.split(":", 1)[1].split():
            name = os.path.basename(d)
            if d.endswith(".h") and os.path.isfile(os.path.join(src, name)):
                deps.append(os.path.join(src, name))
    return deps


def stale(objdir, stem, src):
    """Why objdir/stem.o cannot be read for src/stem.c, or None."""
    obj = os.path.join(objdir, stem + ".o")
    if not os.path.isfile(obj):
        return "%s.c has no object (%s): build first (make server)" % (stem, os.path.relpath(obj))
    built = os.path.getmtime(obj)
    newer = [os.path.basename(d) for d in prerequisites(objdir, stem, src)
             if os.path.isfile(d) and os.path.getmtime(d) > built]
    if newer:
        return "%s.o is older than %s: build first (make server), or the check reads old code" % (
            stem, ", ".join(sorted(newer)))
    return None


def call_graph(objdir, stems):
    """{module: {callee module: (file, symbol)}}: the first call seen for each edge."""
    defs, undefs = {}, {}
    for stem in stems:
        funcs, _data, undef = symbols(os.path.join(objdir, stem + ".o"))
        undefs[stem] = undef
        for f in funcs:
            defs.setdefault(f, stem)
    graph, detail = {}, {}
    for stem in stems:
        x = layers.module_of(stem + ".c")
        graph.setdefault(x, {})
        for sym in sorted(undefs[stem]):
            home = defs.get(sym)
            if home is None:
                continue  # libc, or data
            y = layers.module_of(home + ".c")
            if y == x:
                continue
            graph[x].setdefault(y, (stem + ".c", sym, home + ".c"))
            detail.setdefault((stem, home), []).append(sym)
    return graph, detail


def line_violations(detail):
    """{file: [text]}: calls into a layer above the caller's, or one its layer's `never` names."""
    out = {}
    for (caller, callee), syms in sorted(detail.items()):
        a, b = layers.layer_of(caller + ".c"), layers.layer_of(callee + ".c")
        if len(a) != 1 or len(b) != 1:
            continue  # layers.py fails a file in no layer, or in two
        a, b = a[0], b[0]
        what = "%s.c (%s layer) calls %s of %s.c (%s layer" % (caller, a["name"], ", ".join(syms), callee, b["name"])
        if layers.rank(b) > layers.rank(a):
            out.setdefault(caller + ".c", []).append(
                "%s, above it) — a layer may call only the layers below it; %s" % (what, a["why"]))
        elif layers.never_hits(a, layers.module_of(callee + ".c") + ".h", b):
            out.setdefault(caller + ".c", []).append(
                "%s), which its layer never may — %s" % (what, a["why"]))
    return out


def circle_violations(graph):
    """{file: [text]}: every circle of the module call graph."""
    out = {}
    plain = {x: set(ys) for x, ys in graph.items()}
    for cyc in layers.cycles(plain):
        steps = [graph[cyc[i]][cyc[i + 1]] for i in range(len(cyc) - 1)]
        text = "modules call each other in a circle: %s (%s)" % (
            " -> ".join(cyc), "; ".join("%s calls %s of %s" % s for s in steps))
        for f, _sym, _home in steps:
            out.setdefault(f, []).append(text)
    return out


def check(root, objdir):
    src = os.path.join(root, "src")
    stems = sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(src, "*.c")))
    if shutil.which("nm") is None:
        return len(stems), len(stems), ["nm is not installed (binutils): the call graph cannot be read"], 0
    violations, failed = [], 0
    missing = {s: stale(objdir, s, src) for s in stems}
    readable = [s for s in stems if not missing[s]]
    graph, detail = call_graph(objdir, readable)
    found = {}
    for more in (line_violations(detail), circle_violations(graph)):
        for f, texts in more.items():
            found.setdefault(f, []).extend(texts)
    printed = set()
    for s in stems:
        v = ([missing[s]] if missing[s] else []) + found.get(s + ".c", [])
        failed += bool(v)
        for t in v:
            if t not in printed:  # a circle fails each file on it, printed once
                printed.add(t)
                violations.append(t)
    return len(stems), failed, violations, sum(len(ys) for ys in graph.values())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--objects", help="the objects' directory (default: ROOT/build/obj)")
    ap.add_argument("--graph", action="store_true")
    args = ap.parse_args(argv)
    objdir = args.objects or os.path.join(args.root, "build", "obj")
    if args.graph:
        src = os.path.join(args.root, "src")
        stems = sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(src, "*.c")))
        graph, _ = call_graph(objdir, [s for s in stems if not stale(objdir, s, src)])
        for x in sorted(graph):
            print("%s: %s" % (x, " ".join(sorted(graph[x]))))
        return 0
    checked, failed, violations, edges = check(args.root, objdir)
    for v in violations:
        print("FAIL " + v)
    print("calls: %d objects checked against %d layers in a line, %d calls between modules" % (
        checked, len(layers.LAYERS), edges))
    print("%d passed, %d failed" % (checked - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
