#!/usr/bin/env python3
"""zset_ranges.py — step 8: range queries beside redis-server 7.0, as a new user would try them.

Step 8 benchmark. A sorted set of 1,000 members (scores 0-999) and one of
1,000 members at score 0 (for lex ranges), in soloist and in Debian's
redis-server 7.0, each started fresh STARTS times (5; 2 with QUICK):
range replies have differed from one server start to the next (where the
reply blocks lie in the heap), so every start is measured and the worst
one counts. redis-benchmark, 20 clients, P=1 and P=16, each cell run for
about RUN_S seconds (sized by a short run of its own), the two servers
alternated cell by cell, the one waiting stopped (SIGSTOP):

  ZRANGE z a b [WITHSCORES]          by rank
  ZRANGEBYSCORE z a b [WITHSCORES]   by score
  ZREVRANGE z a b [WITHSCORES]       by rank, from the top
  ZRANGEBYLEX zl [m.. [m..           by lex (no WITHSCORES in the command)

with ranges of 10, 100 and 1,000 members. Per run: requests per second,
the server's minor page faults per request (/proc/PID/stat, field 10)
and its main thread's CPU per request (/proc/PID/schedstat). On two
cores redis-benchmark, which parses every member of every reply, shares
the machine with the server, so the rate is mostly the client's; the
CPU per request is the server's own.

Last, on the last start's servers, the depth-1 cells of ZRANGE and
ZRANGEBYSCORE over 10 and 100 members again with runs of LONG_S seconds
(3; 0.5 with QUICK), LONG_REPS times (3; 1 with QUICK), the servers
alternated: a 0.3 s cell moves by a tenth or more from run to run here,
more than the gap at depth 1.

When VALKEY_SERVER names a valkey-server built from source, Valkey is
measured too, a third server in every start and cell, the order turned
from start to start (a run without it prints a kind=skipped line and
measures the other two).

Prints JSON lines: kind=run, and generic finding rows F8.40-F8.49 and
F8.52-F8.54: per command, the worst start's ratio soloist / redis-server
in each cell; the geometric mean over every cell and start; the target
(at least 1.0x in every cell, at least 1.2x geometric mean) met or not;
page faults per request; main-thread CPU per request; the median
start's ratio per cell (F8.53); the long depth-1 runs (F8.54). With
Valkey, F8.55 and F8.56 are F8.53 and F8.52 against Valkey. Knobs:
QUICK=1 (about 1.5 minutes; full about 5, 6 with Valkey), STARTS, RUN_S, LONG_S, LONG_REPS, SOLOIST_BIN, REDIS_BIN,
VALKEY_SERVER.

Valkey anchor: src/t_zset.c at the pinned commit (genericZrangebyscoreCommand
and its result handler, which give a deferred length); measured, not mirrored.
"""

import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CLIENTS = 20
PIPELINES = [1, 16]
SIZES = [10, 100, 1000]
COMMANDS = [("ZRANGE", False), ("ZRANGE", True), ("ZRANGEBYSCORE", False), ("ZRANGEBYSCORE", True),
            ("ZREVRANGE", False), ("ZREVRANGE", True), ("ZRANGEBYLEX", False)]


def args_for(cmd, ws, n):
    """The command's words for a range of n members (from 100, or all)."""
    lo = 0 if n >= 1000 else 100
    hi = lo + n - 1
    if cmd == "ZRANGEBYLEX":
        words = [cmd, "zl", "[m%04d" % lo, "[m%04d" % hi]
    else:
        words = [cmd, "z", str(lo), str(hi)]
    return words + (["WITHSCORES"] if ws else [])


def load(srv):
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        out = [bl.resp([b"FLUSHALL"])]
        out += [bl.resp([b"ZADD", b"z", b"%d" % i, b"m%04d" % i]) for i in range(1000)]
        out += [bl.resp([b"ZADD", b"zl", b"0", b"m%04d" % i]) for i in range(1000)]
        s.sendall(b"".join(out))
        bl._drain_replies(s, len(out))


def minflt(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def cpu_ns(pid):
    """The main thread's time on a CPU so far, in ns (/proc/PID/schedstat's
    first field, for the thread whose id is the process's: the one that
    runs every command in both servers at io-threads 1)."""
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0])


def bench_cell(srv, words, p, n):
    """-> (requests/s, minor faults per request, main-thread CPU ns per request)."""
    f0, c0 = minflt(srv.proc.pid), cpu_ns(srv.proc.pid)
    row = bl.redis_benchmark_cmd(srv, words, CLIENTS, n, p)
    return row["rps"], (minflt(srv.proc.pid) - f0) / n, (cpu_ns(srv.proc.pid) - c0) / n


def timed_cell(srv, cmd, ws, size, p, run_s, quick, tags):
    """One cell on srv, sized by a short run of its own to last about
    run_s: -> its run line (emitted), with `tags` (start, or part and rep)."""
    words = args_for(cmd, ws, size)
    with srv.turn():
        rps, _, _ = bench_cell(srv, words, p, CLIENTS * p * 10)
        n = bl.calibrate_requests(rps, run_s, CLIENTS, p, floor=CLIENTS * p * 4)
        rps, faults, cpu = bench_cell(srv, words, p, n)
    ln = {"kind": "run", "bench": "zset_ranges", "server": srv.really, **tags, "command": cmd, "withscores": ws,
          "members": size, "pipeline": p, "clients": CLIENTS, "requests": n, "rps": rps,
          "faults_per_req": round(faults, 4), "cpu_ns_per_req": round(cpu), "quick": quick, **bl.placement()}
    bl.emit(ln)
    return ln


def query_name(cmd, ws):
    return cmd + (" WITHSCORES" if ws else "")


def main():
    bl.install_cleanup()
    quick = bl.quick()
    starts = int(os.environ.get("STARTS", 2 if quick else 5))
    run_s = float(os.environ.get("RUN_S", 0.15 if quick else 0.3))
    (_, a_bin, a_is), (_, b_bin, _) = bl.servers()
    peer = {}
    vk = bl.valkey_side(peer)
    lines = []
    try:
        for start in range(1, starts + 1):
            sol = bl.Server("soloist", a_bin, a_is)
            red = bl.Server("redis", b_bin, "redis-server")
            both = [sol, red] + ([bl.Server("valkey", vk[1], vk[2])] if vk else [])
            for srv in both:
                load(srv)
                srv.pause()
            order = bl.turned(both, start)
            for cmd, ws in COMMANDS:
                for size in SIZES:
                    for p in PIPELINES:
                        for srv in order:
                            lines.append(timed_cell(srv, cmd, ws, size, p, run_s, quick, {"start": start}))
            if start == starts:
                lines += long_cells(sol, red, quick)
            for srv in both:
                srv.stop()
        findings(lines, starts, quick, peer.get("valkey_version"))
    finally:
        bl.stop_all()
    return 0


# Depth-1 cells again, with runs ten times as long, on the last start's
# servers: a 0.3 s cell on a shared two-core machine moves by a tenth or
# more from run to run, more than the gap these cells are about (F8.54).
LONG_CELLS = [("ZRANGE", 10), ("ZRANGE", 100), ("ZRANGEBYSCORE", 10), ("ZRANGEBYSCORE", 100)]


def long_cells(sol, red, quick):
    run_s = float(os.environ.get("LONG_S", 0.5 if quick else 3.0))
    reps = int(os.environ.get("LONG_REPS", 1 if quick else 3))
    return [timed_cell(srv, cmd, False, size, 1, run_s, quick, {"part": "long", "rep": rep, "run_s": run_s})
            for cmd, size in LONG_CELLS for rep in range(reps) for srv in ((sol, red) if rep % 2 == 0 else (red, sol))]


def long_row(lines, cmd_line, cfg):
    """F8.54: the depth-1 cells with long runs: per cell the median over
    the alternated runs of soloist's rate over redis-server's, each run's
    ratio beside it, and the CPU per request the same way."""
    runs = [ln for ln in lines if ln.get("part") == "long"]
    cells = []
    for cmd, size in LONG_CELLS:
        reps = sorted({ln["rep"] for ln in runs if ln["command"] == cmd and ln["members"] == size})
        rate, cpu = [], []
        for rep in reps:
            got = {ln["server"]: ln for ln in runs if ln["command"] == cmd and ln["members"] == size
                   and ln["rep"] == rep}
            if "soloist" in got and "redis-server" in got:
                rate.append(got["soloist"]["rps"] / got["redis-server"]["rps"])
                cpu.append(got["redis-server"]["cpu_ns_per_req"] / max(got["soloist"]["cpu_ns_per_req"], 1))
        if rate:
            cells.append("%s %d: rate %.2f× (runs %s), CPU %.2f×" % (
                cmd, size, bl.median(rate), " ".join("%.2f" % r for r in rate), bl.median(cpu)))
    if not cells:
        return
    run_s = runs[0]["run_s"]
    bl.emit({"finding": True, "id": "F8.54", "command": cmd_line, "config": dict(cfg, pipeline=1, run_s=run_s),
             "claim": "depth-1 range queries with runs of %g s, soloist and redis-server 7.0 alternated, the last "
                      "start's servers: the median over the runs of soloist's rate over redis-server's (each "
                      "run's ratio in brackets), and of the CPU per request, redis-server's over soloist's"
                      % run_s,
             "figure": "; ".join(cells)})


def findings(lines, starts, quick, valkey=None):
    """The rows from every run line; valkey: the Valkey build's version
    line when Valkey was measured (F8.55, F8.56), else None."""
    cmd_line = "make findings BENCH=zset_ranges" + (" QUICK=1" if quick else "")
    cfg = {"clients": CLIENTS, "starts": starts, "set": "1,000 members, scores 0-999", "quick": quick,
           "peer": "redis-server 7.0"}
    if valkey:
        cfg["valkey"] = "Valkey built from source (%s)" % valkey

    long_row(lines, cmd_line, cfg)
    lines = [ln for ln in lines if ln.get("part") != "long"]

    all_ratios, worst_cells, median_cells = [], [], []
    rid = 40
    for cmd, ws in COMMANDS:
        cells = []
        for size, p, ratios in start_ratios(lines, starts, "redis-server", cmd, ws):
            all_ratios += ratios
            cells.append("%d P=%d %.2f×" % (size, p, min(ratios)))
            worst_cells.append(min(ratios))
            median_cells.append((bl.median(ratios), "%s %d P=%d" % (query_name(cmd, ws), size, p)))
        name = query_name(cmd, ws)
        bl.emit({"finding": True, "id": "F8.%d" % rid, "command": cmd_line, "config": dict(cfg, query=name),
                 "claim": "%s rps, soloist / redis-server 7.0, the worst of %d fresh starts, by members in the "
                          "range and pipeline depth" % (name, starts),
                 "figure": "lowest %.2f×: %s" % (min(float(c.split()[-1][:-1]) for c in cells), ", ".join(cells))})
        rid += 1
    gm = bl.geomean(all_ratios)
    bl.emit({"finding": True, "id": "F8.47", "command": cmd_line, "config": cfg,
             "claim": "range queries, soloist / redis-server 7.0: geometric mean over every cell and start, "
                      "and the lowest cell",
             "figure": "geometric mean %.2f×; lowest cell %.2f×" % (gm, min(worst_cells) if worst_cells else 0)})
    met = worst_cells and min(worst_cells) >= 1.0 and gm >= 1.2
    bl.emit({"finding": True, "id": "F8.48", "command": cmd_line, "config": cfg,
             "claim": "target: at least 1.0× redis-server 7.0 in every cell (worst start) and at least 1.2× "
                      "geometric mean",
             "figure": "%s (lowest cell %.2f×, geometric mean %.2f×)" % (
                 "met" if met else "not met", min(worst_cells) if worst_cells else 0, gm)})
    if median_cells:
        under = [name for r, name in median_cells if r < 1.0]
        summary_row("F8.53", median_cells, "range queries, soloist / redis-server 7.0 rps, the median of the %d "
                    "starts' ratios in each cell (beside F8.47's worst start): geometric mean over the cells, the "
                    "lowest cell, and the cells under 1.0×" % starts,
                    "%d of %d cells under 1.0×%s" % (len(under), len(median_cells),
                                                     (": " + ", ".join(under)) if under else ""), cmd_line, cfg)
    cpu_row(lines, starts, cmd_line, cfg)
    if valkey:
        beside_valkey(lines, starts, cmd_line, cfg)
    faults = {s: [ln["faults_per_req"] for ln in lines if ln["server"] == s and ln["pipeline"] == 16]
              for s in ("soloist", "redis-server")}
    bl.emit({"finding": True, "id": "F8.49", "command": cmd_line, "config": dict(cfg, pipeline=16),
             "claim": "minor page faults per request at P=16, the most of any cell and start: soloist / "
                      "redis-server 7.0",
             "figure": "%.4f / %.4f faults per request" % (max(faults["soloist"] or [0]),
                                                           max(faults["redis-server"] or [0]))})


def cpu_row(lines, starts, cmd_line, cfg, peer="redis-server", rid="F8.52", peer_name="redis-server 7.0"):
    """F8.52: what each server's main thread spends per request, the
    currency a client-bound rate on two cores hides. Per cell the median
    of the starts, the peer's over soloist's (above 1: soloist spends
    less); the geometric mean over the cells, the lowest cell, and each
    command's own mean. F8.56 is the same against Valkey."""
    def med_cpu(server, cmd, ws, size, p):
        got = sorted(ln["cpu_ns_per_req"] for ln in lines if ln["server"] == server and ln["command"] == cmd
                     and ln["withscores"] == ws and ln["members"] == size and ln["pipeline"] == p
                     and ln.get("cpu_ns_per_req"))
        return got[len(got) // 2] if got else None

    cells, per_cmd = [], []
    for cmd, ws in COMMANDS:
        mine = []
        for size in SIZES:
            for p in PIPELINES:
                a, b = med_cpu("soloist", cmd, ws, size, p), med_cpu(peer, cmd, ws, size, p)
                if a and b:
                    name = "%s %d P=%d" % (query_name(cmd, ws), size, p)
                    cells.append((b / a, name))
                    mine.append(b / a)
        if mine:
            per_cmd.append("%s %.2f×" % (query_name(cmd, ws), bl.geomean(mine)))
    if cells:
        summary_row(rid, cells, "main-thread CPU per request, %s over soloist (above 1: soloist "
                    "spends less; /proc/PID/schedstat), the median of %d fresh starts in each cell: geometric mean "
                    "over the cells, the lowest cell, and each command's mean" % (peer_name, starts),
                    ", ".join(per_cmd), cmd_line, cfg)


def start_ratios(lines, starts, peer, cmd, ws):
    """[(members, depth, [soloist's rate over the peer's, per start])] of
    one query's cells, each cell with at least one start measured on both."""
    out = []
    for size in SIZES:
        for p in PIPELINES:
            ratios = []
            for st in range(1, starts + 1):
                got = {ln["server"]: ln["rps"] for ln in lines if ln["command"] == cmd and ln["withscores"] == ws
                       and ln["members"] == size and ln["pipeline"] == p and ln.get("start") == st}
                if got.get("soloist") and got.get(peer):
                    ratios.append(got["soloist"] / got[peer])
            if ratios:
                out.append((size, p, ratios))
    return out


def beside_valkey(lines, starts, cmd_line, cfg):
    """F8.55 and F8.56: F8.53 and F8.52 with Valkey as the peer. Per cell
    the median of the starts' ratios soloist / Valkey (rate), and
    Valkey's main-thread CPU per request over soloist's."""
    cells = [(bl.median(ratios), "%s %d P=%d" % (query_name(cmd, ws), size, p))
             for cmd, ws in COMMANDS for size, p, ratios in start_ratios(lines, starts, "valkey-server", cmd, ws)]
    if cells:
        under = [name for r, name in cells if r < 1.0]
        summary_row("F8.55", cells, "range queries, soloist / Valkey rps, the median of the %d starts' ratios in "
                    "each cell: geometric mean over the cells, the lowest cell, and the cells under 1.0×" % starts,
                    "%d of %d cells under 1.0×%s" % (len(under), len(cells),
                                                     (": " + ", ".join(under)) if under else ""), cmd_line, cfg)
    cpu_row(lines, starts, cmd_line, cfg, "valkey-server", "F8.56", "Valkey")


def summary_row(rid, cells, claim, rest, cmd_line, cfg):
    """A row over (ratio, cell name) pairs whose figure opens with their
    geometric mean and lowest cell, then `rest` (F8.52, F8.53)."""
    low = min(cells)
    bl.emit({"finding": True, "id": rid, "command": cmd_line, "config": cfg, "claim": claim,
             "figure": "geometric mean %.2f×; lowest cell %.2f× (%s); %s" % (bl.geomean(r for r, _ in cells), low[0],
                                                                           low[1], rest)})


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
