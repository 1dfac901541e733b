#!/usr/bin/env bash
# Chapter 6: what walking several linked lists in turns saves over walking
# them one after another, and what a prefetch instruction adds to that.
# It prints the median cost of one node for 1 list at a time and for 2,
# 4, 8, 16 and 32 lists stepped in turns, on 4 KiB pages and then on
# 2 MiB pages. The full form also times soloist's hash table:
# hashtable_find one key at a time against batches of resumable finds.
# Short form: three runs on 4 KiB pages, a 512 MiB arena (a few seconds).
# Full form: five runs on a 1 GiB arena, then the table (about a minute).
. "$(dirname "$0")/lib.sh"
make -s build/bench/prefetch_micro >/dev/null

# Reads the benchmark's JSON lines and prints one median per measurement.
summarise() {
  python3 -c '
import json, statistics, sys
runs = {}
for line in sys.stdin:
    r = json.loads(line)
    if r.get("kind") != "run":
        continue
    if r["part"] == "chains":
        key = ("chains", r["pages"], r["method"], r["chains"])
        runs.setdefault(key, []).append(r["ns_per_node"])
    else:
        key = ("table", r["thp"], r["keys"], r["method"], r["batch"])
        runs.setdefault(key, []).append(r["ns_per_lookup"])
med = {k: statistics.median(v) for k, v in runs.items()}
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128)
for pages in ("4K", "2M"):
    one = med.get(("chains", pages, "sequential", 1))
    if one is None:
        continue
    print(f"lists on {pages} pages, ns per node:")
    print(f"   1 list at a time     {one:7.1f}")
    for k in (2, 4, 8, 16, 32):
        a = med.get(("chains", pages, "interleaved", k))
        b = med.get(("chains", pages, "prefetch", k))
        if a and b:
            print(f"  {k:2d} lists in turns    {a:7.1f}   with prefetch {b:7.1f}")
    a16 = med[("chains", pages, "interleaved", 16)]
    print(f"{pages}: 16 lists in turns are {one / a16:.1f}x faster per node than 1 at a time")
for thp in ("off", "on"):
    sizes = sorted({k[2] for k in med if k[0] == "table" and k[1] == thp})
    if sizes:
        print(f"hash table, huge pages {thp}: ns per lookup, find and batches of B")
        print("      keys   find" + "".join(f"{b:>7d}" for b in BATCHES))
    for n in sizes:
        cells = [med[("table", thp, n, "find", 0)]]
        cells += [med[("table", thp, n, "batch", b)] for b in BATCHES]
        print(f"  {n:8d} {cells[0]:6.1f}" + "".join(f"{c:7.1f}" for c in cells[1:]))
'
}

if short; then
  # 11 walks a run: stop the benchmark after its third run on 4 KiB pages
  build/bench/prefetch_micro --quick --part chains | head -n 33 | summarise
else
  set -o pipefail
  build/bench/prefetch_micro --part chains | summarise
  build/bench/prefetch_micro --quick --part table | summarise
fi
# expect: ^   1 list at a time +[0-9]
# expect: ^  16 lists in turns +[0-9.]+   with prefetch +[0-9]
# expect: ^4K: 16 lists in turns are ([2-9]|[1-9][0-9]+)\.[0-9]x faster
