#!/usr/bin/env python3
"""trace_runs.py — short recordings of what each thread does, summarised.

Steps 4, 5 and 7 (seeing the threads). Starts a fresh soloist per
setting, puts a load on it, records TRACE START for a few tens of
milliseconds in the middle of the load, saves TRACE DUMP's JSON, and
prints tools/trace.py's summary of it as one kind=run line: each thread's
busy, idle and waiting shares, each request's time queued, on a worker,
on main and waiting, jobs by type, POLL jobs, wakes.

Settings:
    GET, 3 B values, 50 connections of redis-benchmark, 10,000 keys, at
    pipeline depth 1 and 16, io-threads 1, 2 and 4 with
    io-threads-always-active yes (so the pool runs whatever its policy
    would say);
    big: io-threads 1, 1 KB GETs in open loop (4,000/s on 8 connections)
    beside one connection fetching 10 MB values back to back
    (soloist-bench, two classes).

The load generator shares the machine's cores with the server; on two
cores a worker and the load generator take turns on the same core, which
the traces show. The traces the chapters' figures come from (get-t2-p1, get-t4-p1, big-t1)
are kept, gzipped, in the results directory's traces/
(bench/results/RUN/traces/NAME.json.gz), so `tools/trace.py draw` can
redraw a figure from them; `make trace` draws the chapters'.

Prints JSON lines: kind=run (one per setting: its config, the trace's
file and its summary). tools/findings.py's h_trace_runs makes the rows
F4.80-F4.86, F5.30-F5.31 and F7.40-F7.41 from them.

    bench/trace_runs.py                       record (bench/run.py runs it)
    bench/trace_runs.py --draw RESULTS OUTDIR the chapters' figures, drawn
                                              from RESULTS/traces/ About 30 s. Knobs: TRACE_MS (the recording of a
GET setting, 25 ms), TRACE_BIG_MS (60 ms), SOLOIST_BIN.

No Valkey anchor (a soloist instrument).
"""

import gzip
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

sys.path.insert(0, os.path.join(bl.ROOT, "tools"))
import trace as tracepy  # noqa: E402  (tools/trace.py)

CLIENTS, KEYS = 50, 10000
THREADS = [1, 2, 4]
PIPELINES = [1, 16]


def traces_dir():
    """The results directory's traces/ under bench/run.py (BENCH_RESULTS_DIR,
    wherever --results put it), else a directory of this run's own under
    the system's temporary one."""
    rid = bl.run_id()
    d = os.environ.get("BENCH_RESULTS_DIR") or os.path.join(bl.ROOT, "bench", "results", rid)
    if not os.path.isdir(d):
        d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "soloist-trace-" + rid)
    d = os.path.join(d, "traces")
    os.makedirs(d, exist_ok=True)
    return d


def record(srv, ms):
    """Records ms milliseconds; returns TRACE DUMP's JSON text."""
    if not srv.command(b"TRACE", b"START", str(ms).encode()).startswith(b"+OK"):
        raise RuntimeError("TRACE START refused")
    time.sleep(ms / 1000 + 0.05)
    srv.command(b"TRACE", b"STOP")
    return srv.command(b"TRACE", b"DUMP", timeout=30).decode("ascii")


# The traces the chapters' figures are drawn from are kept; the others'
# summaries are enough (a trace is a few hundred KB even gzipped).
KEEP = ("get-t2-p1", "get-t4-p1", "big-t1")


def keep(name, text):
    if name not in KEEP:
        return None
    path = os.path.join(traces_dir(), name + ".json.gz")
    with gzip.open(path, "wt", encoding="ascii", compresslevel=6) as f:
        f.write(text)
    return path


def emit_run(name, cfg, text, path):
    summary = tracepy.summarize(json.loads(text))
    big = summary.get("big")
    if big and not any(r["writes"] > 1 for r in big["replies"]):
        summary["big"] = None  # small replies only: one write each, nothing to say
    bl.emit(dict(cfg, kind="run", name=name, trace=path and os.path.relpath(path, bl.ROOT), summary=summary))
    bl.log("%s: %d requests, %s threads, main busy %.0f%%" % (
        name, summary["requests"], summary["threads"], 100 * summary["shares"]["main"]["busy"]))


def get_run(threads, pipeline, ms):
    name = "get-t%d-p%d" % (threads, pipeline)
    srv, why = bl.thread_server(name, bl.servers()[0][1], threads, ["--io-threads-always-active", "yes"])
    if srv is None:
        bl.emit({"kind": "skipped", "name": name, "io_threads": threads, "pipeline": pipeline, "why": why})
        return
    try:
        bl.populate(srv, KEYS, 3)
        argv = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(srv.port), "-c", str(CLIENTS), "-n", "100000000",
                "-P", str(pipeline), "-t", "get", "-r", str(KEYS), "-d", "3", "-q"]
        load = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.4)
            text = record(srv, ms)
        finally:
            load.kill()
            load.wait()
        cfg = {"setting": "get", "io_threads": threads, "pipeline": pipeline, "clients": CLIENTS, "keys": KEYS,
               "value_size": 3, "test": "GET", "forced_on": True, "trace_ms": ms,
               "load": "redis-benchmark -c %d -P %d -t get -r %d -d 3" % (CLIENTS, pipeline, KEYS)}
        emit_run(name, cfg, text, keep(name, text))
    finally:
        srv.stop()


def big_run(ms):
    name = "big-t1"
    srv, why = bl.thread_server(name, bl.servers()[0][1], 1)
    if srv is None:
        bl.emit({"kind": "skipped", "name": name, "why": why})
        return
    classes = ["--class", "name=small,conns=8,rate=4000,value=1kb,keys=1000",
               "--class", "name=big,conns=1,value=10mb,keys=2"]
    try:
        bl.soloist_bench(srv.port, classes + ["--prefill", "--count", "1", "-d", "0"], timeout=60)
        load = bl.soloist_bench_start(srv.port, classes + ["-d", "20s"])
        try:
            time.sleep(0.5)
            text = record(srv, ms)
        finally:
            load.kill()
            load.communicate()
        cfg = {"setting": "big", "io_threads": 1, "pipeline": 1, "small_value": 1024, "small_rate": 4000,
               "small_conns": 8, "big_value": 10 * 1024 * 1024, "big_conns": 1, "trace_ms": ms,
               "load": "soloist-bench " + " ".join(classes)}
        emit_run(name, cfg, text, keep(name, text))
    finally:
        srv.stop()


# The chapters' figures: (file under chapters/figures/, trace, focus,
# title). tools/trace.py picks the moment: the POLL job out for the
# median time, the wake with the median delay, the first 10 MB reply
# written in several chunks.
FIGURES = [
    ("04-poll-job-out.svg", "get-t2-p1", "poll", "GET P=1, io-threads 2 forced on, two cores: one POLL job out"),
    ("05-woken-worker.svg", "get-t4-p1", "wake", "GET P=1, io-threads 4 forced on, two cores: a worker main woke"),
    ("07-big-reply-chunks.svg", "big-t1", "big-write", "io-threads 1: one 10 MB reply beside 1 KB GETs"),
]


def draw(results, out):
    """Draws FIGURES from the traces a results directory kept."""
    for fname, trace, focus, title in FIGURES:
        src = os.path.join(results, "traces", trace + ".json.gz")
        t0, t1 = tracepy.draw(tracepy.load(src), os.path.join(out, fname), title=title, focus=focus)
        bl.log("%s: %.1f-%.1f µs of %s" % (fname, t0, t1, os.path.relpath(src, bl.ROOT)))


def main():
    bl.install_cleanup()
    ms = int(os.environ.get("TRACE_MS", 25))
    try:
        for t in THREADS:
            for p in PIPELINES:
                get_run(t, p, ms)
        big_run(int(os.environ.get("TRACE_BIG_MS", 60)))
    finally:
        bl.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(bl.run_main(main, commands={"--draw": (2, draw)}))
