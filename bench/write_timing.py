#!/usr/bin/env python3
"""write_timing.py — (e) what writing replies in before_sleep costs in latency.

Step 0 benchmark. Owns the comparison of the two times a reply can be
written: in before_sleep, once per loop turn for every client that has
output (soloist's default and Valkey's), or immediately, in the client's
read handler right after the commands that read brought have run (the
experiment option reply-write-timing immediate). With 50 clients ready
in one turn, a reply written in before_sleep waits for the other clients'
reads and commands; written immediately it does not, but the loop then
alternates read and write system calls instead of batching them.

One soloist, switched with CONFIG SET between runs, driven by
soloist-bench (build/soloist-bench) with 50 connections, GET of 3-byte
values over 10,000 prefilled keys, P=1, in two loops:
  closed  each connection keeps one request in flight;
  open    a fixed Poisson rate over the 50 connections (a third of the
          slower setting's closed-loop median, well below saturation of
          server and generator alike, or WRITE_TIMING_RATE), latency from
          each request's due time (no coordinated omission).
The settings alternate A B A B A B (>= 3 runs each). Per run: rps,
latency p50/p99/p99.9, the server's CPU per request, and the server's
system calls per request from its own counters (INFO's reads, writes and
main_thread_poll_calls, the epoll_waits), all diffed across the run,
warm-up included on both sides alike.

Prints JSON lines: kind=rate (the open loop's rate) and kind=run.
Knobs: QUICK=1 (about 25 s instead of about 75 s), BENCH_RUNS,
WRITE_TIMING_RATE, SOLOIST_BIN, SOLOIST_BENCH_BIN, BENCH_PINNED. If the
server has no reply-write-timing option (a stand-in), it prints
kind=unavailable and exits 0.

Valkey anchor: handleClientsWithPendingWrites, called from beforeSleep
(valkey src/networking.c, src/server.c) — the default side; the
experiment side has no Valkey counterpart.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CONNS = 50
KEYS = 10000
VALUE = 3
SETTINGS = ["before-sleep", "immediate"]


def sb_binary():
    return os.environ.get("SOLOIST_BENCH_BIN", os.path.join(bl.ROOT, "build", "soloist-bench"))


def counters(srv):
    """The server's own counters: commands, reads, writes, loop turns
    (one epoll_wait each) and process CPU seconds (INFO cpu, getrusage)."""
    info = srv.info("everything")

    def num(sect, key):
        return float(info[(sect, key)])
    return {"commands": num("stats", "total_commands_processed"),
            "reads": num("stats", "total_reads_processed"),
            "writes": num("stats", "total_writes_processed"),
            "polls": num("threads", "main_thread_poll_calls"),
            "cpu_s": num("cpu", "used_cpu_sys") + num("cpu", "used_cpu_user")}


def soloist_bench(srv, warmup, duration, rate=None, timeout=60):
    """One soloist-bench run; returns its one class's JSON and the generator's."""
    pl = bl.placement()
    argv = bl._taskset(pl.get("client_cpus")) + [
        sb_binary(), "-p", str(srv.port), "-c", str(CONNS), "-P", "1", "-t", "1",
        "-n", str(KEYS), "-r", "1:0", "-s", str(VALUE), "--warmup", "%gs" % warmup,
        "-d", "%gs" % duration, "--drain", "2s", "--json", "-q"]
    if rate:
        argv += ["--rate", str(int(rate))]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("soloist-bench failed (%d): %s" % (p.returncode, p.stderr[-300:]))
    out = json.loads(p.stdout)
    return out["classes"][0], out.get("generator", {}), " ".join(argv)


def one_run(srv, setting, warmup, duration, rate):
    reply = srv.command("CONFIG", "SET", "reply-write-timing", setting)
    if not reply.startswith(b"+OK"):
        raise RuntimeError("CONFIG SET reply-write-timing %s: %r" % (setting, reply))
    c0 = counters(srv)
    cls, gen, argv = soloist_bench(srv, warmup, duration, rate)
    c1 = counters(srv)
    d = {k: c1[k] - c0[k] for k in c0}
    n = d["commands"] or 1
    lat = cls["latency_us"]
    return {
        "setting": setting, "rps": cls["rps"], "offered_rps": cls.get("offered_rps"),
        "requests": cls["requests"], "errors": cls.get("errors", 0), "misses": cls.get("misses", 0),
        "latency_us": {k: lat[k] for k in ("p50", "p90", "p99", "p99.9", "max", "mean")},
        "service_p99_us": cls["service_us"]["p99"], "slip_p99_us": cls["slip_us"]["p99"],
        "server_commands": int(d["commands"]), "server_cpu_s": round(d["cpu_s"], 6),
        "cpu_us_per_request": round(d["cpu_s"] * 1e6 / n, 3),
        "reads_per_request": round(d["reads"] / n, 4),
        "writes_per_request": round(d["writes"] / n, 4),
        "polls_per_request": round(d["polls"] / n, 4),
        "syscalls_per_request": round((d["reads"] + d["writes"] + d["polls"]) / n, 4),
        "generator_cpu_s": gen.get("cpu_s"), "argv": argv,
    }


def main():
    bl.install_cleanup()
    q = bl.quick()
    runs = max(3, int(os.environ.get("BENCH_RUNS", "3")))
    warmup, duration = (0.5, 1.25) if q else (1.0, 5.0)
    label, binary, really = bl.servers()[0]
    base = {"bench": "write_timing", "test": "GET", "clients": CONNS, "pipeline": 1,
            "keys": KEYS, "value_size": VALUE, "cores": os.cpu_count(), "quick": q,
            "server": label, "server_is": really, "warmup_s": warmup, "duration_s": duration,
            "load_generator": "soloist-bench, 1 thread",
            "syscalls_counted": "read + writev + epoll_wait, from INFO (reads, writes, "
                                "main_thread_poll_calls); epoll_ctl is not counted"}
    base.update(bl.placement())
    if not os.access(sb_binary(), os.X_OK):
        bl.emit(dict(base, kind="unavailable", why="%s not built (make)" % sb_binary()))
        return
    srv = bl.Server(label, binary, really)
    try:
        if not srv.command("CONFIG", "SET", "reply-write-timing", "before-sleep").startswith(b"+OK"):
            bl.emit(dict(base, kind="unavailable", why="the server has no reply-write-timing option"))
            return
        # Prefill every key once (soloist-bench SETs them, then exits).
        soloist_bench_prefill(srv)
        closed = {s: [] for s in SETTINGS}
        for loop in ("closed", "open"):
            rate = None
            if loop == "open":
                rate = float(os.environ.get("WRITE_TIMING_RATE", "0")) or \
                    max(1000, int(min(bl.median(closed[s]) for s in SETTINGS) / 3 // 1000 * 1000))
                bl.emit(dict(base, kind="rate", loop=loop, rate=rate,
                             why="a third of the slower setting's closed-loop median rps"))
            for i in range(runs):
                for setting in SETTINGS:
                    r = one_run(srv, setting, warmup, duration, rate)
                    if loop == "closed":
                        closed[setting].append(r["rps"])
                    bl.emit(dict(base, kind="run", loop=loop, rate=rate, run=i + 1, **r))
                    bl.log("%s %-12s run %d: %.0f rps, p99 %.0f us, %.2f syscalls/req"
                           % (loop, setting, i + 1, r["rps"], r["latency_us"]["p99"],
                              r["syscalls_per_request"]))
    finally:
        bl.stop_all()


def soloist_bench_prefill(srv):
    argv = [sb_binary(), "-p", str(srv.port), "-c", "4", "-n", str(KEYS), "-s", str(VALUE),
            "-r", "1:0", "--prefill", "--count", "1", "-d", "0", "--json", "-q"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("soloist-bench --prefill failed (%d): %s" % (p.returncode, p.stderr[-300:]))


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
