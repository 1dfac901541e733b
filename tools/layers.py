#!/usr/bin/env python3
"""layers: soloist's layering, checked on the include graph.

soloist's source is read in layers, and the dependencies between them form
a line, not a web. The line is the invariant made visible: exactly one
thread touches the keyspace, so the code a worker thread runs (steps 2-5)
must not be able to reach the keyspace's headers, and the keyspace must
not be able to reach a socket. Comments can say that; this tool makes it
checkable.

The line. LAYERS below lists the layers from the bottom up, and that
order is the whole of "may use": a file may include (directly or through
other headers) the headers of its own layer and of every layer below it,
and of no layer above it. No layer lists what it may use; a layer may
only narrow the order down with `never`, the layers below it (by name) or
the headers (by glob) it must still not reach.

For every file in src/ the tool follows #include "..." through src/
(system headers and headers not in src/ are not followed) and checks:

  1. placing: the file belongs to exactly one layer, and all the files of
     one module are in the same layer (a new file must be placed);
  2. the line: every header it reaches is in its own layer or one below,
     and is not one its layer's `never` names; a reach into a higher
     layer is an edge that runs back up, and fails with the chain of
     includes that makes it;
  3. the keyspace stays behind its own headers: a header outside the
     keyspace layer does not reach the keyspace, so a .c file that uses
     the keyspace says so by including db.h itself, and including
     server.h or client.h never brings the keyspace along;
  4. private headers: NAME_private.h is reached only by NAME*.c and by
     cmd_NAME.c, the module's own command (cmd_config.c is CONFIG SET/GET);
  5. test headers: NAME_test.h (a hook or a probe only tests use) is
     included, among the files of src/, by NAME.c alone, the one file that
     defines what it declares; the tests include it, the server never;
  6. no circles. A line has none, so none is allowed inside a layer
     either (across layers, rule 2 already forbids one). Two graphs are
     checked, and every cycle in either fails, printed as the chain that
     closes it:
       - headers: the graph of direct #include edges between headers in
         src/ (a.h includes b.h includes a.h);
       - modules: a module X is the files X.c, X.h, X_private.h and
         X_test.h (a file's module is its name without the extension and
         without a _private or _test suffix); X uses Y when a file of X
         includes a header of Y directly, Y != X. A cycle here is the
         circle a header-only graph cannot see: a.c includes b.h while
         b.c includes a.h.

Each file is one test: it passes when it breaks no rule and is on no
circle. A failure names the rule and the chain of includes behind it.

    tools/layers.py [--root DIR]       check; exit 1 on a violation
    tools/layers.py --layers           print the line: each layer, its
                                       files, what it may use
    tools/layers.py --graph            print each file's transitive includes

Python 3 standard library only.
"""

import argparse
import fnmatch
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# The line, from the bottom up. "files" are globs in src/. A layer may use
# its own and every layer below it; "never" narrows that down: layer names
# (a whole layer below) or header globs it must not reach all the same.
# Everything from "keyspace" up is main-only code, except the job handlers
# in io_offload.c, which run on workers and call down into worker-io, and
# commands_lookup_queued with the commands_lookup it calls (commands.c),
# which the read job runs to read the command table, built before any
# worker starts and never written after.
LAYERS = [
    {"name": "plumbing", "why": "plumbing knows no client, no keyspace and no server",
     "files": ["ae.[ch]", "anet.[ch]", "resp.[ch]", "resp_test.h", "object.[ch]", "zmalloc.[ch]", "util.[ch]", "textbuf.[ch]",
               "siphash.[ch]"]},
    {"name": "threads", "why": "code a worker thread runs moves words: it knows no client and no keyspace",
     "files": ["job.h", "queue_*.[ch]", "io_threads.[ch]", "io_threads_test.h", "trace.[ch]", "trace_export.[ch]"]},
    {"name": "connection", "why": "a connection's state: the fields, and which thread may touch which",
     "files": ["client.h"]},
    {"name": "worker-io", "why": "a worker's half of a client's I/O touches the client alone: no statistic, "
                                 "no configuration, no event loop, no keyspace",
     "files": ["client_io.[ch]", "client_io_test.h", "reply_block.[ch]"],
     "never": ["ae.h"]},
    {"name": "keyspace", "why": "the keyspace knows no socket and no client: only the soloist touches it, "
                                "and nothing a worker runs sits above it",
     "files": ["hashtable*.[ch]", "db.[ch]", "expire.c", "zset*.[ch]", "listpack.[ch]", "intset.[ch]", "list.[ch]",
               "hash.[ch]", "set.[ch]"],
     "never": ["threads", "connection", "worker-io", "ae.h", "anet.h", "resp.h"]},
    {"name": "policy", "why": "the policy that sizes the pool runs on main only, from numbers main samples",
     "files": ["ignition.[ch]"]},
    {"name": "state", "why": "the server's state is read by everything above and calls nothing above it",
     "files": ["server.[ch]", "server_test.h"]},
    {"name": "commands", "why": "commands act on the keyspace and the reply buffer, never on a socket",
     "files": ["reply.[ch]", "commands.[ch]", "cmd_string.c", "cmd_keys.c", "cmd_zset.c", "cmd_zset_algebra.c", "cmd_list.c",
               "cmd_hash.c", "cmd_set.c", "multi.[ch]",
               "blocked.[ch]"],
     "never": ["anet.h"]},
    {"name": "main-io", "why": "main's half of a client's life: who does its I/O, then what follows; the "
                               "configuration's values come from server.*, never from the option table above",
     "files": ["memory_prefetch.[ch]", "memory_prefetch_test.h", "io_offload.[ch]", "networking.[ch]"]},
    {"name": "server", "why": "the server wires the layers together",
     "files": ["server_loop.[ch]", "main.c", "config*.[ch]", "cmd_server.c", "cmd_client.c", "cmd_config.c",
               "cmd_info.c", "cmd_trace.c"]},
]
KEYSPACE = "keyspace"
LAYER_NAMES = [l["name"] for l in LAYERS]


def includes(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return INCLUDE.findall(f.read())
    except OSError:
        return []


def direct(src, name):
    """The headers in src/ that src/name includes itself, in order."""
    return [h for h in includes(os.path.join(src, name)) if os.path.isfile(os.path.join(src, h))]


def closure(src, name, cache):
    """{header: chain} for every project header reachable from src/name."""
    if name in cache:
        return cache[name]
    cache[name] = {}
    out = {}
    for h in direct(src, name):
        out.setdefault(h, [name, h])
        for deeper, chain in closure(src, h, cache).items():
            out.setdefault(deeper, [name] + chain)
    cache[name] = out
    return out


def layer_of(name):
    """The layers whose globs match a file name (one, when the map is right)."""
    return [l for l in LAYERS if any(fnmatch.fnmatchcase(name, g) for g in l["files"])]


def rank(layer):
    return LAYER_NAMES.index(layer["name"])


def module_of(name):
    """X for X.c, X.h, X_private.h and X_test.h."""
    return re.sub(r"_(private|test)$", "", os.path.splitext(name)[0])


def never_hits(layer, h, home):
    """The entry of layer's `never` that forbids reaching h (in layer home), or None."""
    for n in layer.get("never", []):
        if n in LAYER_NAMES:
            if home["name"] == n:
                return n
        elif fnmatch.fnmatchcase(h, n):
            return n
    return None


def file_violations(src, name, cache):
    """The rules src/name breaks, as lines of text (empty: it passes)."""
    layers = layer_of(name)
    if len(layers) != 1:
        if not layers:
            return ["%s is in no layer: place it in tools/layers.py's LAYERS (and README.md's layer map)" % name]
        return ["%s is in %d layers (%s): a file belongs to exactly one" % (
            name, len(layers), ", ".join(l["name"] for l in layers))]
    layer = layers[0]
    out = []
    for h, chain in sorted(closure(src, name, cache).items()):
        if h == name:
            continue
        via = " -> ".join(chain)
        home = layer_of(h)
        if len(home) != 1:
            continue  # reported as a file of its own
        home = home[0]
        if rank(home) > rank(layer):
            out.append("%s (%s layer) reaches %s (%s layer, above it): %s — a layer may use only the layers "
                       "below it; %s" % (name, layer["name"], h, home["name"], via, layer["why"]))
        elif never_hits(layer, h, home):
            out.append("%s (%s layer) reaches %s (%s layer), which its layer never may: %s — %s" % (
                name, layer["name"], h, home["name"], via, layer["why"]))
        elif name.endswith(".h") and home["name"] == KEYSPACE and layer["name"] != KEYSPACE:
            out.append("%s (%s layer) is a header that reaches the keyspace's %s: %s — a .c file that uses the "
                       "keyspace includes db.h itself" % (name, layer["name"], h, via))
        m = re.fullmatch(r"(.+)_private\.h", h)
        if m and not (name.startswith(m.group(1)) or name == "cmd_%s.c" % m.group(1)):
            out.append("%s reaches %s: %s — a private header is for %s*.c and cmd_%s.c alone"
                       % (name, h, via, m.group(1), m.group(1)))
        m = re.fullmatch(r"(.+)_test\.h", h)
        if m and name not in ("%s.c" % m.group(1), h):
            out.append("%s reaches %s: %s — a test header is for the tests and %s.c, which defines what it "
                       "declares, alone" % (name, h, via, m.group(1)))
    return out


def module_violations(names):
    """A module's files in more than one layer: {file: [text]}."""
    homes = {}
    for n in names:
        ls = layer_of(n)
        if len(ls) == 1:
            homes.setdefault(module_of(n), {}).setdefault(ls[0]["name"], []).append(n)
    out = {}
    for mod, by_layer in sorted(homes.items()):
        if len(by_layer) > 1:
            where = "; ".join("%s in %s" % (", ".join(sorted(fs)), l) for l, fs in sorted(by_layer.items()))
            for fs in by_layer.values():
                for f in fs:
                    out.setdefault(f, []).append("module %s spans layers (%s): a module's files share one layer"
                                                 % (mod, where))
    return out


def shortest_cycle(graph, start, comp):
    """The shortest cycle through start inside comp, as [start, ..., start]."""
    prev, frontier, seen = {}, [start], {start}
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    path = [v]
                    while path[0] != start:
                        path.insert(0, prev[path[0]])
                    return path + [start]
                if w in comp and w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return None


def cycles(graph):
    """The circles of graph ({node: set of nodes}): for each strongly
    connected component with more than one node, the shortest cycle
    through each of its nodes, each cycle once, as [a, b, ..., a].
    Self-edges are not circles."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):  # Tarjan's algorithm; the graphs are small
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    out, seen = [], set()
    for comp in comps:
        for v in sorted(comp):
            cyc = shortest_cycle(graph, v, comp)
            body = cyc[:-1]
            i = body.index(min(body))
            key = tuple(body[i:] + body[:i])  # the same circle from another start
            if key not in seen:
                seen.add(key)
                out.append(list(key) + [key[0]])
    return sorted(out)


def circle_violations(src, names):
    """Every circle among headers and among modules: {file: [text]}."""
    out = {}
    headers = [n for n in names if n.endswith(".h")]
    hgraph = {h: {d for d in direct(src, h) if d.endswith(".h") and d != h} for h in headers}
    for cyc in cycles(hgraph):
        text = "headers include each other in a circle: %s" % " -> ".join(cyc)
        for h in cyc[:-1]:
            out.setdefault(h, []).append(text)
    mgraph, edges = {}, {}
    for n in names:
        x = module_of(n)
        mgraph.setdefault(x, set())
        for h in direct(src, n):
            y = module_of(h)
            if y != x:
                mgraph[x].add(y)
                edges.setdefault((x, y), "%s includes %s" % (n, h))
    for cyc in cycles(mgraph):
        steps = [edges[(cyc[i], cyc[i + 1])] for i in range(len(cyc) - 1)]
        text = "modules use each other in a circle: %s (%s)" % (" -> ".join(cyc), "; ".join(steps))
        for step in steps:
            f = step.split(" ")[0]
            out.setdefault(f, []).append(text)
    return out


def check(root):
    src = os.path.join(root, "src")
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(src, "*.[ch]")))
    cache, violations, failed = {}, [], 0
    extra = {}
    for more in (module_violations(names), circle_violations(src, names)):
        for f, texts in more.items():
            extra.setdefault(f, []).extend(texts)
    printed = set()
    for n in names:
        v = file_violations(src, n, cache)
        for t in extra.get(n, []):
            if t not in v:
                v.append(t)
        failed += bool(v)
        for t in v:
            if t not in printed:  # a circle or a split module fails each of its files, printed once
                printed.add(t)
                violations.append(t)
    return len(names), failed, violations


def describe():
    """The line, one layer a line, from the top down, with what each may use."""
    lines = []
    for i in reversed(range(len(LAYERS))):
        l = LAYERS[i]
        below = [x["name"] for x in LAYERS[:i]]
        never = l.get("never", [])
        may = [b for b in below if b not in never] or ["nothing below"]
        heads = [n for n in never if n not in LAYER_NAMES]
        lines.append("%-12s %s\n%12s may use: %s%s" % (
            l["name"], " ".join(l["files"]), "", ", ".join(may),
            "; never %s" % ", ".join(heads) if heads else ""))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--graph", action="store_true")
    ap.add_argument("--layers", action="store_true")
    args = ap.parse_args(argv)
    if args.layers:
        print(describe())
        return 0
    if args.graph:
        src = os.path.join(args.root, "src")
        cache = {}
        for p in sorted(glob.glob(os.path.join(src, "*.[ch]"))):
            n = os.path.basename(p)
            print("%s: %s" % (n, " ".join(sorted(closure(src, n, cache)))))
        return 0
    checked, failed, violations = check(args.root)
    for v in violations:
        print("FAIL " + v)
    print("layers: %d files checked against %d layers in a line" % (checked, len(LAYERS)))
    print("%d passed, %d failed" % (checked - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
