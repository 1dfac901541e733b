#!/usr/bin/env python3
"""layers: soloist's layering, checked on the include graph.

DESIGN.md draws the dependencies as a line, not a web, and the line is the
invariant made visible: exactly one thread touches the keyspace, so the
code that a worker thread runs (steps 2-5) must not be able to reach the
keyspace's headers, and the keyspace must not be able to reach a socket.
Comments can say that; this tool makes it checkable. For every source file
in a layer it follows #include "..." transitively through src/ and fails
on any header the layer may not reach, printing the chain that reaches it.

    tools/layers.py [--root DIR]       check; exit 1 on a violation
    tools/layers.py --graph            print each file's transitive includes

Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# Each layer: the .c/.h files (by glob, in src/) and the headers they may
# never reach, directly or through other headers.
SOCKETS = ["ae.h", "anet.h", "networking.h"]
CLIENTS = ["client.h", "reply.h", "server.h", "commands.h"]
KEYSPACE = ["db.h", "hashtable.h", "hashtable_private.h"]
LAYERS = [
    {"name": "plumbing", "why": "plumbing knows no client and no keyspace",
     "files": ["ae.[ch]", "anet.[ch]", "resp.[ch]", "object.[ch]", "zmalloc.[ch]", "util.[ch]", "siphash.[ch]"],
     "forbid": CLIENTS + KEYSPACE + ["networking.h"]},
    {"name": "keyspace", "why": "the keyspace knows no socket and no client: only the soloist touches it",
     "files": ["hashtable*.[ch]", "db.[ch]", "expire.c"],
     "forbid": SOCKETS + CLIENTS + ["resp.h"]},
    {"name": "commands", "why": "commands act on the keyspace and the reply buffer, never on a socket",
     "files": ["cmd_string.c", "cmd_keys.c", "cmd_zset.c", "zskiplist.[ch]"],
     "forbid": ["anet.h", "networking.h"]},
    {"name": "threads", "why": "code a worker thread runs must not reach the keyspace (steps 2-5)",
     "files": ["job.h", "queue_*.[ch]", "io_threads.[ch]"],
     "forbid": KEYSPACE + ["server.h", "commands.h"]},
]


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


def check(root):
    src = os.path.join(root, "src")
    cache, violations, checked = {}, [], 0
    for layer in LAYERS:
        files = sorted({os.path.basename(p) for g in layer["files"] for p in glob.glob(os.path.join(src, g))})
        for name in files:
            checked += 1
            reach = closure(src, name, cache)
            for bad in layer["forbid"]:
                if bad in reach and bad != name:
                    violations.append("%s (%s layer) reaches %s: %s — %s" % (
                        name, layer["name"], bad, " -> ".join(reach[bad]), layer["why"]))
    return checked, violations


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
    checked, violations = check(args.root)
    for v in violations:
        print("FAIL " + v)
    print("layers: %d files checked against %d layers" % (checked, len(LAYERS)))
    print("%d passed, %d failed" % (checked - len({v.split(" ")[0] for v in violations}), len(violations)))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
