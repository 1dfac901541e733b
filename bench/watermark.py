#!/usr/bin/env python3
"""watermark.py — step 5: what the io_last_bufpos watermark buys, measured.

Step 5 benchmark. The watermark lets main append a client's later replies
while a worker writes its earlier ones: the worker stops at the mark main
set when it handed the write out, so neither needs the other's live
position. The design without it must keep main from appending while a
write is out. soloist's switch `io-write-watermark no` (a soloist
experiment, not a Valkey option) does that: main waits for a client's
write in flight to finish before it runs that client's next commands
(src/networking.c run-queued, io_offload_wait_write).

One soloist per thread count, io-threads 2 and 4 with
io-threads-always-active yes (the offload forced on), the switch flipped
by CONFIG SET between runs (settings alternated, the order turned each
round, the other server stopped). GET, pipelined, with values of 100 B,
16 KB and 1 MB (fewer clients and a shallower pipeline for 1 MB, so a
run's memory stays bounded), driven by soloist-bench in
closed loop keeping P requests in flight on every connection (each reply
sends the next request): a client's next requests arrive while its
earlier replies are still being written, which is when the watermark
matters. redis-benchmark's -P waits for a whole batch's replies before
it sends the next batch, so a client has nothing to send while its write
is out, and the overlap hardly happens. Per run: replies per second
(closed loop on shared cores: also a figure about the load generator),
the main thread's CPU per request (INFO cpu used_cpu_*_main_thread over
total_commands_processed, all of it: its idle spin while results are
owed is wall time, which on loaded shared cores overstates the CPU it
took, so it is kept in the run lines but not subtracted), and the overlap itself:
the share of GETs main ran while the same client's write was in flight
(INFO stats commands_during_write) and the reply bytes they appended
(reply_bytes_during_write), or with the switch off how often and how long
main waited (INFO iothreads io_threads_write_waits, _wait_us).

And the mark's own cost: build/bench/mark_cost (bench/mark_cost.c) times
client_io_mark_write, once per write job, beside an uncontended mutex
lock and unlock, what a lock around every append would cost at the least.

Prints JSON lines: kind=run (both parts), and generic finding rows
F5.10-F5.29 computed from this run's own lines. Knobs: QUICK=1 (about
1 minute; full about 3 minutes), BENCH_RUNS, SOLOIST_BIN, MARK_COST_BIN.

Valkey anchor: src/networking.c at the pinned commit, where main sets
io_last_bufpos and io_last_reply_block before it sends a write job, and
_writeToClient / writevToClient, which stop there (PR #758, Valkey 8.0).
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

THREADS = [2, 4]
SETTINGS = ["on", "off"]
# (value size, clients, pipeline, keys): replies of 100 B, 16 KB and 1 MB.
SIZES = [(100, 50, 16, 10000), (16384, 20, 16, 1000), (1048576, 4, 4, 64)]


def apply(srv, setting):
    srv.command(b"CONFIG", b"SET", b"io-write-watermark", b"yes" if setting == "on" else b"no")


def mark_cost(quick):
    """Runs mark_cost; returns its run lines (re-emitted)."""
    binary = os.environ.get("MARK_COST_BIN", os.path.join(bl.ROOT, "build", "bench", "mark_cost"))
    if not os.access(binary, os.X_OK):
        bl.emit({"kind": "skipped", "bench": "watermark", "part": "mark", "why": "%s not built" % binary})
        return []
    p = subprocess.run([binary] + (["--quick"] if quick else []), stdout=subprocess.PIPE, text=True,
                       timeout=60, env=dict(os.environ, BENCH_RUN_ID=bl.run_id()))
    lines = []
    for raw in p.stdout.splitlines():
        ln = json.loads(raw)
        if ln.get("kind") == "run":
            ln.update(bench="watermark", part="mark")
            bl.emit(ln)
            lines.append(ln)
    return lines


def main():
    bl.install_cleanup()
    quick = bl.quick()
    runs = int(os.environ.get("BENCH_RUNS", 2 if quick else 3))
    target_s = 0.5 if quick else 1.2
    marks = mark_cost(quick)
    try:
        srvs = bl.forced_servers("watermark", THREADS)
        cells = [{"threads": t, "test": "get", "clients": clients, "pipeline": p, "size": size, "keyspace": keys,
                  "driver": "sb"} for size, clients, p, keys in SIZES for t in THREADS]
        lines = bl.switch_rounds(srvs, SETTINGS, apply, cells, runs, target_s, "watermark", quick,
                                 prepare=lambda srv, cell: bl.sb_prefill(srv, cell["keyspace"], cell["size"]))
        findings(lines, cells, marks, quick, runs)
    finally:
        bl.stop_all()
    return 0


def size_text(size):
    return "1 MB" if size == 1048576 else "16 KB" if size == 16384 else "%d B" % size


def findings(lines, cells, marks, quick, runs):
    cmd = "make findings BENCH=watermark" + (" QUICK=1" if quick else "")

    def row(rid, claim, figure, **cfg):
        bl.emit({"finding": True, "id": "F5.%d" % rid, "claim": claim, "figure": figure, "command": cmd,
                 "config": dict(cfg, quick=quick, runs_per_setting=runs, test="GET", forced_on=True)})

    rid = 10
    for cell in cells:
        what = "io-threads %d forced on, %s values, %d clients, P=%d" % (
            cell["threads"], size_text(cell["size"]), cell["clients"], cell["pipeline"])
        cfg = {k: cell[k] for k in ("threads", "size", "clients", "pipeline")}
        m = lambda s, f: bl.switch_median(lines, cell, s, f)  # noqa: E731
        on, off = m("on", "rps"), m("off", "rps")
        cu_on, cu_off = m("on", "main_cpu_us_per_req_with_spin"), m("off", "main_cpu_us_per_req_with_spin")
        row(rid, "GET replies/s and the main thread's CPU per GET (all of it), watermark on / off (main waits "
                 "out a write in flight), %s" % what,
            "%.0f / %.0f rps = %.2f×%s; main CPU %.3f / %.3f µs = %.2f×%s" % (
                on, off, on / off, bl.switch_spread(lines, cell, "rps", ("watermark on", "watermark off")),
                cu_on, cu_off, cu_on / cu_off,
                bl.switch_spread(lines, cell, "main_cpu_us_per_req_with_spin", ("on", "off"), "%.2f",
                                 lower=True)), **cfg)
        row(rid + 1, "GETs main ran while the same client's write was in flight, and the reply bytes they "
                     "appended, watermark on; with it off, main's waits, %s" % what,
            "%.2f%% of GETs, %.1f B appended per GET; off: %.4f waits and %.3f µs waited per GET" % (
                100 * m("on", "during_write_share"), m("on", "bytes_during_write_per_req"),
                m("off", "write_waits_per_req"), m("off", "write_wait_us_per_req")), **cfg)
        rid += 2
    cost = {c: bl.median([ln["ns_per_call"] for ln in marks if ln["case"] == c])
            for c in {ln["case"] for ln in marks}}
    buf, blk = cost.get("mark, replies in buf"), cost.get("mark, a block list")
    lock = cost.get("mutex lock+unlock, uncontended")
    if buf is not None and blk is not None and lock is not None:
        row(28, "ns per client_io_mark_write (once per write job): replies in buf / a block list",
            "%.2f / %.2f ns" % (buf, blk), part="mark")
        row(29, "ns per uncontended mutex lock+unlock (a lock per append, at the least) / per mark (buf)",
            "%.2f / %.2f ns = %.1f×" % (lock, buf, lock / buf), part="mark")


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
