#!/usr/bin/env python3
"""zset_memory.py — what one sorted-set member costs, per layout, and how fast.

Step 8 benchmark. For each of soloist's four layouts (zset-layout copied,
node-pointer, embedded, dense), for Debian's redis-server 7.0 and, when
VALKEY_SERVER names a valkey-server built from source, for Valkey (the
2024 tree: a skiplist beside a dict, the layout before Valkey 8.1's
#1427), one after the other in one run, on a fresh server each:

  1. ZADD z NX i m:i for i = 0 .. N-1, pipelined (bench/zset_load.c, a
     window of WINDOW commands per write), read INFO memory's used_memory
     at each size in SIZES: bytes per member = (used_memory - used_memory
     before the first ZADD) / members, and inserts per second over the
     segment since the previous size (wall time of the load, and the
     server's own CPU seconds for the same segment);
  2. on the full set, QUERIES x ZRANGE z r r+9 (by rank, r random) and
     QUERIES x ZRANGE z s +inf BYSCORE LIMIT 0 10 (by score), pipelined
     the same way: queries per second.

used_memory is the allocator's usable size of every live allocation, on
every server (soloist's zmalloc asks malloc_usable_size; redis-server and
Valkey ask jemalloc), so bytes per member is what the allocator hands out,
not what the structures request. soloist links glibc's malloc (sizes in
steps of 16 bytes, 24 bytes at least); redis-server and Valkey link
jemalloc (steps of 8 and 16 bytes below 128): the same structure can cost
a different number of bytes on each, and the rows say which allocator.

Prints JSON lines: kind=run, op=add (server, layout, n, bytes_per_member,
inserts_per_s, inserts_per_cpu_s, used_memory_bytes) and op=rank|score
(server, layout, n, queries_per_s); kind=skipped when Valkey is not
there. Knobs: VALKEY_SERVER, QUICK=1 (sizes 100k and 200k,
20k queries: about a minute), BENCH_ZSET_SIZES (comma list), BENCH_ZSET_
QUERIES, BENCH_ZSET_WINDOW (default 128), BENCH_ZSET_LAYOUTS. Full run:
1M, 5M and 10M members, 200k queries: a few minutes. Loopback only.

Valkey anchor: the load is the shape of the one Momento published on
Valkey's blog for its sorted-set memory work ("How Valkey 8.1 Handles 50
Million Sorted Set Inserts": ZADD of distinct members, 50M there); the
layouts it compares came with Valkey pull requests #1427 (8.1) and #2508.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

LAYOUTS = ["copied", "node-pointer", "embedded", "dense"]


def env_list(name, default):
    v = os.environ.get(name)
    return [x for x in v.replace(",", " ").split() if x] if v else default


def used_memory(srv):
    return int(srv.info("memory")[("memory", "used_memory")])


def load(binary, srv, op, a, b, window):
    out = subprocess.run([binary, str(srv.port), op, str(a), str(b), str(window)], check=True,
                         stdout=subprocess.PIPE, text=True, timeout=900).stdout
    return json.loads(out)


def measure(label, binary, really, layout, extra, sizes, queries, window, loader):
    srv = bl.Server(label, binary, really, extra)
    try:
        base = used_memory(srv)
        done = 0
        common = {"kind": "run", "run_id": bl.run_id(), "server": label, "server_is": really,
                  "layout": layout, "window": window, "quick": bl.quick()}
        for n in sizes:
            cpu0 = srv.cpu_s()
            r = load(loader, srv, "add", done, n, window)
            cpu = srv.cpu_s() - cpu0
            if r["added"] != n - done:
                raise RuntimeError("%s: %d of %d members added" % (label, r["added"], n - done))
            used = used_memory(srv)
            bl.emit(dict(common, op="add", n=n, segment_from=done, used_memory_base=base,
                         used_memory_bytes=used, bytes_per_member=round((used - base) / n, 2),
                         inserts_per_s=round((n - done) / r["seconds"]),
                         inserts_per_cpu_s=round((n - done) / cpu) if cpu > 0 else None))
            bl.log("%s %s: %d members, %.1f B/member, %.0f inserts/s"
                   % (label, layout, n, (used - base) / n, (n - done) / r["seconds"]))
            done = n
        for op in ("rank", "score"):
            r = load(loader, srv, op, queries, done, window)
            bl.emit(dict(common, op=op, n=done, queries=queries, queries_per_s=round(queries / r["seconds"])))
            bl.log("%s %s: ZRANGE by %s %.0f/s" % (label, layout, op, queries / r["seconds"]))
    finally:
        srv.stop()


def main():
    bl.install_cleanup()
    q = bl.quick()
    sizes = [int(float(x)) for x in env_list("BENCH_ZSET_SIZES", ["1e5", "2e5"] if q else ["1e6", "5e6", "1e7"])]
    queries = int(float(os.environ.get("BENCH_ZSET_QUERIES", "2e4" if q else "2e5")))
    window = int(os.environ.get("BENCH_ZSET_WINDOW", "128"))
    layouts = env_list("BENCH_ZSET_LAYOUTS", LAYOUTS)
    loader = os.environ.get("ZSET_LOAD_BIN", os.path.join(bl.ROOT, "build", "bench", "zset_load"))
    (a_label, a_bin, a_is), (b_label, b_bin, b_is) = bl.servers()
    measure(b_label, b_bin, b_is, "redis-server", [], sizes, queries, window, loader)
    peer = {"run_id": bl.run_id()}
    vk = bl.valkey_side(peer)  # records the build's version in peer
    if vk:
        bl.emit({"kind": "peer", "run_id": bl.run_id(), "server": "valkey", "version": peer["valkey_version"]})
        measure(*vk, "valkey", [], sizes, queries, window, loader)
    for layout in layouts:
        measure(a_label, a_bin, a_is, layout, ["--zset-layout", layout], sizes, queries, window, loader)
    return 0


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
