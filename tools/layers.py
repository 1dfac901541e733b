#!/usr/bin/env python3
"""layers: soloist's layering, checked on the include graph.

soloist's source is read in layers, and the dependencies between them form
a line, not a web. The line is the invariant made visible: exactly one
thread touches the keyspace, so the code a worker thread runs (steps 2-5)
must not be able to reach the keyspace's headers, and the keyspace must
not be able to reach a socket. Comments can say that; this tool makes it
checkable. For every file in src/ it follows #include "..." transitively
through src/ and checks four rules:

  1. the file belongs to exactly one layer (a new file must be placed);
  2. it reaches only headers of the layers its layer may use, and none of
     the headers its layer names as never;
  3. a header outside the keyspace layer does not reach the keyspace: a
     .c file that uses the keyspace says so by including db.h itself, so
     including server.h or client.h never brings the keyspace along;
  4. a private header (NAME_private.h) is reached only by NAME*.c and by
     cmd_NAME.c, the module's own command (cmd_config.c is CONFIG SET/GET).

Each file is one test: it passes when it breaks no rule. A failure names
the rule and, for a reach, the chain of includes that makes it.

    tools/layers.py [--root DIR]       check; exit 1 on a violation
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

# The layers, from the bottom of the line up. "files" are globs in src/;
# "may" lists the layers whose headers a file of this layer may reach
# (its own is always allowed); "never" lists headers it may not reach even
# though their layer is allowed.
LAYERS = [
    {"name": "plumbing", "why": "plumbing knows no client, no keyspace and no server",
     "files": ["ae.[ch]", "anet.[ch]", "resp.[ch]", "object.[ch]", "zmalloc.[ch]", "util.[ch]", "siphash.[ch]"],
     "may": []},
    {"name": "threads", "why": "code a worker thread runs moves words: it knows no client and no keyspace",
     "files": ["job.h", "queue_*.[ch]", "io_threads.[ch]", "ignition.[ch]"],
     "may": ["plumbing"]},
    {"name": "worker-io", "why": "a worker's half of a client's I/O touches the client alone: no statistic, "
                                 "no configuration, no event loop, no keyspace",
     "files": ["client_io.[ch]", "reply_block.[ch]"],
     "may": ["plumbing", "clients"],
     "never": ["ae.h", "networking.h", "reply.h", "io_offload.h", "commands.h"]},
    {"name": "keyspace", "why": "the keyspace knows no socket and no client: only the soloist touches it",
     "files": ["hashtable*.[ch]", "db.[ch]", "expire.c", "zset*.[ch]"],
     "may": ["plumbing"], "never": ["ae.h", "anet.h", "resp.h"]},
    {"name": "commands", "why": "commands act on the keyspace and the reply buffer, never on a socket",
     "files": ["cmd_string.c", "cmd_keys.c", "cmd_zset.c"],
     "may": ["plumbing", "keyspace", "clients", "server"],
     "never": ["anet.h", "networking.h", "config_private.h", "config.h"]},
    {"name": "clients", "why": "clients read the configuration's values from server.*, never the option table",
     "files": ["client.h", "reply.[ch]", "networking.[ch]", "io_offload.[ch]", "memory_prefetch.[ch]"],
     "may": ["plumbing", "threads", "worker-io", "keyspace", "server"], "never": ["config.h", "config_private.h"]},
    {"name": "server", "why": "the server wires the layers together",
     "files": ["server.[ch]", "main.c", "config*.[ch]", "commands.[ch]", "cmd_server.c", "cmd_client.c",
               "cmd_config.c", "cmd_info.c"],
     "may": ["plumbing", "threads", "worker-io", "keyspace", "commands", "clients"]},
]
KEYSPACE = "keyspace"


def includes(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return INCLUDE.findall(f.read())
    except OSError:
        return []


def closure(src, name, cache):
    """{header: chain} for every project header reachable from src/name."""
    if name in cache:
        return cache[name]
    cache[name] = {}
    out = {}
    for h in includes(os.path.join(src, name)):
        if not os.path.isfile(os.path.join(src, h)):
            continue  # a system or missing header: not ours to judge
        out.setdefault(h, [name, h])
        for deeper, chain in closure(src, h, cache).items():
            out.setdefault(deeper, [name] + chain)
    cache[name] = out
    return out


def layer_of(name):
    """The layers whose globs match a file name (one, when the map is right)."""
    return [l for l in LAYERS if any(fnmatch.fnmatchcase(name, g) for g in l["files"])]


def file_violations(src, name, cache):
    """The rules src/name breaks, as lines of text (empty: it passes)."""
    layers = layer_of(name)
    if len(layers) != 1:
        if not layers:
            return ["%s is in no layer: place it in tools/layers.py's LAYERS (and README.md's layer map)" % name]
        return ["%s is in %d layers (%s): a file belongs to exactly one" % (
            name, len(layers), ", ".join(l["name"] for l in layers))]
    layer = layers[0]
    allowed = set(layer["may"]) | {layer["name"]}
    out = []
    for h, chain in sorted(closure(src, name, cache).items()):
        if h == name:
            continue
        via = " -> ".join(chain)
        home = layer_of(h)
        home_name = home[0]["name"] if len(home) == 1 else None
        if home_name is None:
            continue  # reported as a file of its own
        if home_name not in allowed:
            out.append("%s (%s layer) reaches %s (%s layer): %s — %s" % (
                name, layer["name"], h, home_name, via, layer["why"]))
        elif h in layer.get("never", []):
            out.append("%s (%s layer) reaches %s: %s — %s" % (name, layer["name"], h, via, layer["why"]))
        elif name.endswith(".h") and home_name == KEYSPACE and layer["name"] != KEYSPACE:
            out.append("%s (%s layer) is a header that reaches the keyspace's %s: %s — a .c file that uses the "
                       "keyspace includes db.h itself" % (name, layer["name"], h, via))
        m = re.fullmatch(r"(.+)_private\.h", h)
        if m and not (name.startswith(m.group(1)) or name == "cmd_%s.c" % m.group(1)):
            out.append("%s reaches %s: %s — a private header is for %s*.c and cmd_%s.c alone"
                       % (name, h, via, m.group(1), m.group(1)))
    return out


def check(root):
    src = os.path.join(root, "src")
    cache, violations, checked, failed = {}, [], 0, 0
    for p in sorted(glob.glob(os.path.join(src, "*.[ch]"))):
        checked += 1
        v = file_violations(src, os.path.basename(p), cache)
        failed += bool(v)
        violations += v
    return checked, failed, violations


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--graph", action="store_true")
    args = ap.parse_args(argv)
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
    print("layers: %d files checked against %d layers" % (checked, len(LAYERS)))
    print("%d passed, %d failed" % (checked - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
