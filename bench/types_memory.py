#!/usr/bin/env python3
"""types_memory.py — what one element of a list, a hash or a set costs, beside redis-server 7.0.

The types' memory benchmark. For each type (list, hash, set), each
element kind (short strings "m:12345", and integers 12345) and each size
(10, 100 and 1,000,000 elements in a key; 10, 100 and 100,000 with QUICK),
on a fresh server each time, soloist, Debian's redis-server 7.0 and,
when VALKEY_SERVER names a valkey-server built from source, Valkey (the
2024 tree), their order turned each run:

  1. read INFO memory's used_memory;
  2. load KEYS keys of that many elements each (10,000 keys of 10 or 100
     elements, so the key's own cost, its name and its place in the
     keyspace, is in the figure and the figure is steady; one key of a
     million): bench/types_load.c, pipelined RPUSH, HSET or SADD of up to
     BATCH elements a command, a window of WINDOW commands a write, every
     reply checked; for a hash the element is a field-value pair, field
     "f:i" and the value as above;
  3. read used_memory again: bytes per element = (after - before) /
     elements; the resident memory's growth (/proc/PID/statm) the same
     way; and OBJECT ENCODING of the first key. Each read is taken
     once two reads 0.1 s apart agree (a table the load left half
     rehashed holds both arrays until the server's timer ends the move).

Elements are numbered across all keys of a cell (key k holds k*N .. k*N+N-1),
so the strings are as long in the small cells as in the large one, and a
set's members never repeat. used_memory is the allocator's usable size of
every live allocation on both servers (soloist's zmalloc asks
malloc_usable_size, glibc's malloc, sizes in steps of 16 bytes and at least
24; redis-server asks jemalloc, steps of 8 and 16 below 128 bytes), so the
same structure can cost a different number of bytes on each; the rows say
which allocator. glibc also keeps an 8-byte header beside each chunk that
its usable size leaves out, where jemalloc's size classes have none, so
used_memory leaves out more of soloist's real footprint than of redis-
server's; the resident memory's growth beside it counts what each process
really holds (pages, and what the allocator keeps after the tables' growth
freed their old arrays).

RUNS runs of every cell (2; each on its own fresh server, the servers'
order turned each run). A cell a server refuses (an error reply: a server
without the type's command) is printed as kind=refused with the server's
reply (or the loader's complaint and the server's exit status, if it
exited), and its rows say "not measured".

Prints JSON lines: kind=run (server, type, elem, n, keys, elements,
bytes_per_element, used_memory before and after, rss_per_element,
encoding, load seconds)
and kind=refused, then generic finding rows F10.10-F10.27, one per cell
(type, element kind, size: each server's bytes per element and the ratio
soloist / redis-server, and the same by RSS growth) and F10.28, the
target: at most 1.0x redis-server 7.0 in every cell by used_memory, met or
not, with the highest cell (and the highest by RSS growth); with Valkey,
each cell's figure adds Valkey's bytes per element and soloist / Valkey,
and F10.29 gives the highest and lowest of those ratios. Knobs: VALKEY_SERVER, QUICK=1 (about
40 s; full about 2 min), RUNS, BENCH_TYPES_KEYS (10,000; 2,000 with QUICK),
BENCH_TYPES_SIZES (comma list), BENCH_TYPES_BATCH (100),
BENCH_TYPES_WINDOW (64), TYPES_LOAD_BIN, SOLOIST_BIN, REDIS_BIN.
Loopback only; each load is bounded in time (types_load's alarm).

Valkey anchor: the encodings it compares are Valkey's (src/t_list.c,
src/t_hash.c, src/t_set.c: listpack below list-max-listpack-size,
hash-max-listpack-entries and set-max-listpack-entries, intset for
integer sets below set-max-intset-entries, quicklist and hashtable
above); measured, not mirrored.
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

ID_BASE = 10  # rows F10.10-F10.28, and F10.29 when Valkey ran
FIRST_ROW = 10
TYPES = ["list", "hash", "set"]
ELEMS = ["str", "int"]
ELEM_TEXT = {"str": 'short strings ("m:i")', "int": "integers"}
KEY_PREFIX = {"list": "l", "hash": "h", "set": "s"}
VERB = {"list": "RPUSH", "hash": "HSET", "set": "SADD"}
ALLOCATORS = {"soloist": "glibc malloc", "redis": "jemalloc", "valkey": "jemalloc"}


def env_list(name, default):
    v = os.environ.get(name)
    return [int(float(x)) for x in v.replace(",", " ").split() if x] if v else default


def used_memory(srv):
    return int(srv.info("memory")[("memory", "used_memory")])


def settled_memory(srv, tries=20):
    """used_memory once two reads 0.1 s apart agree (at most 2 s): a table
    still being rehashed when the load ends (the keyspace's, grown at 8,192
    keys) holds its old array until the server's timer finishes the move,
    which a read right after the load would count or not by chance."""
    prev = used_memory(srv)
    for _ in range(tries):
        time.sleep(0.1)
        cur = used_memory(srv)
        if cur == prev:
            return cur
        prev = cur
    return prev


def encoding(srv, key):
    rep = srv.command("OBJECT", "ENCODING", key)
    return rep.decode("utf-8", "replace").strip().lstrip("+") if rep[:1] != b"-" else None


def rss_bytes(srv):
    """The server's resident memory (/proc/PID/statm, resident pages)."""
    with open("/proc/%d/statm" % srv.proc.pid) as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def keys_for(n, keys_small):
    """Keys of a cell: many small ones (their own cost counted and the
    figure steady), one large one."""
    return keys_small if n <= 1000 else 1


def measure(label, binary, really, typ, elem, n, keys, run, cfg):
    """One cell on a fresh server: -> its run line, or a refused line."""
    srv = bl.Server(label, binary, really)
    try:
        base = settled_memory(srv)
        rss0 = rss_bytes(srv)
        argv = [cfg["loader"], str(srv.port), typ, elem, str(keys), str(n), str(cfg["batch"]),
                str(cfg["window"]), str(cfg["bound_s"])]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=cfg["bound_s"] + 30)
        common = {"bench": "types_memory", "server": label, "server_is": really, "type": typ, "elem": elem,
                  "n": n, "keys": keys, "run": run, "quick": cfg["quick"]}
        if p.returncode != 0:
            why = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit %d" % p.returncode
            why = why.replace("types_load: error reply -", "").split(", with args")[0]
            if srv.proc.poll() is not None:
                why += " (the server exited, status %d)" % srv.proc.poll()
            return dict(common, kind="refused", why="%s: %s" % (label, why[:160]), rc=p.returncode)
        r = json.loads(p.stdout)
        if r["mismatches"]:
            raise RuntimeError("%s %s %s %d: %d replies differed from a fresh server's"
                               % (label, typ, elem, n, r["mismatches"]))
        used = settled_memory(srv)
        rss = rss_bytes(srv)
        return dict(common, kind="run", elements=r["elements"], used_memory_base=base, used_memory_bytes=used,
                    bytes_per_element=round((used - base) / r["elements"], 2),
                    rss_base=rss0, rss_bytes=rss, rss_per_element=round((rss - rss0) / r["elements"], 2),
                    encoding=encoding(srv, "%s:0" % KEY_PREFIX[typ]), load_s=round(r["seconds"], 3),
                    commands=r["commands"], batch=cfg["batch"], window=cfg["window"])
    finally:
        srv.stop()


def cell_name(typ, elem, n):
    return "%s of %s %s" % (typ, "{:,}".format(n), ELEM_TEXT[elem])


def runs_text(vals):
    """A side's runs: 'runs a–b' or 'N runs, each the same' or 'one run'."""
    if len(vals) < 2:
        return "one run"
    lo, hi = "%.1f" % min(vals), "%.1f" % max(vals)
    if lo == hi:
        return "%d runs, each the same" % len(vals) + ("" if min(vals) == max(vals) else " to 0.1 B")
    return "runs %s–%s" % (lo, hi)


def span1(vals):
    """'a–b' of a side's runs to 0.1 B, or 'a' when they agree to it."""
    lo, hi = "%.1f" % min(vals), "%.1f" % max(vals)
    return lo if lo == hi else "%s–%s" % (lo, hi)


def rows(lines, sizes, cmd_line, cfg):
    """F10.10-F10.27 (one per cell, type by element kind by size) and
    F10.28 (the target) from the run and refused lines."""
    runs = [ln for ln in lines if ln.get("kind") == "run"]
    refused = [ln for ln in lines if ln.get("kind") == "refused"]
    out, ratios, absent, rss_ratios, vk_ratios = [], [], [], [], []
    idx = FIRST_ROW
    for typ in TYPES:
        for elem in ELEMS:
            for n in sizes:
                match = [ln for ln in runs if ln["type"] == typ and ln["elem"] == elem and ln["n"] == n]
                side = {s: [ln for ln in match if ln["server"] == s] for s in ("soloist", "redis", "valkey")}
                name = cell_name(typ, elem, n)
                keys = (match or [ln for ln in refused if ln["type"] == typ and ln["n"] == n] or [{}])[0].get("keys")
                ccfg = dict(cfg, type=typ, elem=elem, elements_per_key=n, keys=keys)
                claim = ("bytes per element (INFO used_memory growth over elements), %s in each of %s key%s, "
                         "soloist (%s) / redis-server 7.0 (%s)%s" % (
                             name, "{:,}".format(keys) if keys else "?", "" if keys == 1 else "s",
                             ALLOCATORS["soloist"], ALLOCATORS["redis"],
                             "; an element is a field-value pair" if typ == "hash" else "")
                         + "; beside it the resident memory's (RSS) growth per element"
                         + ("; then Valkey's bytes per element (jemalloc) and soloist / Valkey"
                            if any(ln["server"] == "valkey" for ln in match) else ""))
                bpe = {s: [ln["bytes_per_element"] for ln in side[s]] for s in side}
                if side["soloist"] and side["redis"]:
                    a, b = bl.median(bpe["soloist"]), bl.median(bpe["redis"])
                    ratios.append((a / b, name))
                    fig = "soloist **%.1f B** (%s; %s), redis-server %.1f B (%s; %s): **%.2f×**" % (
                        a, side["soloist"][0]["encoding"], runs_text(bpe["soloist"]),
                        b, side["redis"][0]["encoding"], runs_text(bpe["redis"]), a / b)
                    rss = {s: [ln["rss_per_element"] for ln in side[s] if ln.get("rss_per_element") is not None]
                           for s in side}
                    if rss["soloist"] and rss["redis"] and bl.median(rss["redis"]) > 0:
                        ra, rb = bl.median(rss["soloist"]), bl.median(rss["redis"])
                        rss_ratios.append((ra / rb, name))
                        fig += "; resident memory (RSS) growth per element %.1f vs %.1f B (runs %s vs %s): %.2f×" % (
                            ra, rb, span1(rss["soloist"]), span1(rss["redis"]), ra / rb)
                    if side["valkey"]:
                        v = bl.median(bpe["valkey"])
                        vk_ratios.append((a / v, name))
                        fig += "; Valkey %.1f B (%s; %s): soloist / Valkey %.2f×" % (
                            v, side["valkey"][0]["encoding"], runs_text(bpe["valkey"]), a / v)
                else:
                    why = sorted({ln["why"] for ln in refused if ln["type"] == typ and ln["elem"] == elem
                                  and ln["n"] == n})
                    have = ["%s %.1f B (%s)" % ("soloist" if s == "soloist" else "redis-server",
                                                bl.median([ln["bytes_per_element"] for ln in side[s]]),
                                                side[s][0]["encoding"]) for s in ("soloist", "redis") if side[s]]
                    fig = "not measured (%s)%s" % ("; ".join(why) or "no run of both servers",
                                                   ("; " + ", ".join(have)) if have else "")
                    absent.append(name)
                out.append({"finding": True, "id": "F%d.%d" % (ID_BASE, idx), "command": cmd_line, "config": ccfg,
                            "claim": claim, "figure": fig})
                idx += 1
    if ratios:
        high = max(ratios, key=lambda r: r[0])  # the first in the cells' order on a tie
        # A cell is over when its ratio, printed to two decimals as its own
        # row prints it, is above 1.00: two runs of one server differ by
        # up to about 0.2% in the large cells.
        over = sorted(((r, nm) for r, nm in ratios if round(r, 2) > 1.0), reverse=True)
        detail = "highest cell %.3f× (%s)" % high
        if over:
            detail += "; %d of %d cells above 1.0×: %s" % (len(over), len(ratios),
                                                           ", ".join("%s %.3f×" % (nm, r) for r, nm in over))
    else:
        detail = "no cell measured"
    if absent:
        detail += "; %d of %d cells not measured" % (len(absent), len(absent) + len(ratios))
    if rss_ratios:
        detail += "; by RSS growth the highest cell %.2f× (%s)" % max(rss_ratios, key=lambda r: r[0])
    met = ratios and not absent and not over
    out.append({"finding": True, "id": "F%d.%d" % (ID_BASE, idx), "command": cmd_line, "config": cfg,
                "claim": "target: at most 1.0× redis-server 7.0's bytes per element in every cell (lists, hashes "
                         "and sets; strings and integers; %s elements a key; a cell's ratio to two decimals, as "
                         "its row gives it)"
                         % ", ".join("{:,}".format(n) for n in sizes),
                "figure": "%s (%s)" % ("met" if met else "not met", detail)})
    if vk_ratios:
        # Beside Valkey (the 2024 tree): no target, the same cells read again.
        over = sorted(((r, nm) for r, nm in vk_ratios if round(r, 2) > 1.0), reverse=True)
        out.append({"finding": True, "id": "F%d.%d" % (ID_BASE, idx + 1), "command": cmd_line,
                    "config": cfg,
                    "claim": "bytes per element, soloist (glibc malloc) / Valkey built from source (jemalloc), "
                             "every cell of F10.10-F10.27 by used_memory",
                    "figure": "highest cell **%.2f×** (%s), lowest %.2f× (%s); %d of %d cells above 1.0×%s" % (
                        *max(vk_ratios, key=lambda r: r[0]), *min(vk_ratios, key=lambda r: r[0]), len(over),
                        len(vk_ratios), (": " + ", ".join("%s %.2f×" % (nm, r) for r, nm in over)) if over else "")})
    return out


def main():
    bl.install_cleanup()
    q = bl.quick()
    sizes = env_list("BENCH_TYPES_SIZES", [10, 100, 100000] if q else [10, 100, 1000000])
    keys_small = int(os.environ.get("BENCH_TYPES_KEYS", 2000 if q else 10000))
    runs = int(os.environ.get("RUNS", 2))
    cfg = {"loader": os.environ.get("TYPES_LOAD_BIN", os.path.join(bl.ROOT, "build", "bench", "types_load")),
           "batch": int(os.environ.get("BENCH_TYPES_BATCH", 100)),
           "window": int(os.environ.get("BENCH_TYPES_WINDOW", 64)), "bound_s": 60 if q else 120, "quick": q}
    peer = {}
    vk = bl.valkey_side(peer)  # records the build's version in peer
    sides = bl.servers() + ([vk] if vk else [])
    lines = []
    try:
        for run in range(1, runs + 1):
            for typ in TYPES:
                for elem in ELEMS:
                    for n in sizes:
                        for label, binary, really in sides if run % 2 else sides[::-1]:
                            ln = measure(label, binary, really, typ, elem, n, keys_for(n, keys_small), run, cfg)
                            bl.emit(ln)
                            lines.append(ln)
                            bl.log("%s %s: %s" % (label, cell_name(typ, elem, n),
                                                  "%.1f B/element (%s)" % (ln["bytes_per_element"], ln["encoding"])
                                                  if ln["kind"] == "run" else ln["why"]))
        cmd_line = "make findings BENCH=types_memory" + (" QUICK=1" if q else "")
        row_cfg = {"runs": runs, "peer": "redis-server 7.0", "batch": cfg["batch"], "window": cfg["window"],
                   "load": "pipelined variadic RPUSH / HSET / SADD", "quick": q}
        if vk is not None:
            row_cfg["valkey"] = "Valkey built from source (%s)" % peer["valkey_version"]
        for row in rows(lines, sizes, cmd_line, row_cfg):
            bl.emit(row)
    finally:
        bl.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
