#!/usr/bin/env python3
"""poll_offload.py — step 4: the poll offload measured on its own.

Step 4 benchmark. While results are owed, soloist's main thread does not
block in epoll_wait: it hands the poll to a worker as a POLL job (Valkey's
poll offload, PR #758) and goes on taking results. soloist's switch
`io-threads-poll-offload no` (a soloist experiment, not a Valkey option)
keeps epoll_wait on main with the threads on: main then polls without
waiting on every turn while results are owed (src/io_offload.c
before-sleep).

One soloist per thread count, io-threads 2 and 4 with
io-threads-always-active yes, the switch flipped by CONFIG SET between
runs (alternated, the order turned each round, the other server stopped).
redis-benchmark GET, 3 B values, 50 clients, P=1 and P=16, 10,000 keys.
Per run: replies per second (closed loop on shared cores), the main
thread's CPU per request (INFO cpu, all of it), the wall time of its idle
turns while results were owed (INFO io_threads_main_spin_us: on loaded
shared cores wall time overstates the CPU those turns took, so it is
reported beside main's CPU, not subtracted from it), the whole process's
CPU per request, and POLL jobs per request. Then two more rounds count
main's system calls per request (perf stat on main alone: epoll_wait,
futex and all of them), apart from the timed rounds because each
tracepoint adds to a call's cost; where perf cannot count them here the
rows say so.

Valkey's reason for the offload (the blog post "Unlock 1 Million RPS",
2024) is that epoll_wait took over 20 % of main's time; this measures what
moving it costs and saves main here. The shared inbox against the private
inboxes above 9 threads needs more than 9 cores to mean anything: THREADS
takes the thread counts (POLL_THREADS=2,4,10,16 on a machine with them).

Prints JSON lines: kind=run, and generic finding rows F4.50-F4.59 (two
per thread count and pipeline; the first eight with the default threads).
Knobs: QUICK=1 (about 15 s; full about 50 s), BENCH_RUNS,
POLL_THREADS, SOLOIST_BIN.

Valkey anchor: src/io_threads.c at the pinned commit (the POLL job,
ioThreadPoll / trySendPollJobToIOThreads).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

SETTINGS = ["on", "off"]
# main's system calls, counted by perf stat on main alone (-t) in the two
# rounds after the timed ones (switch_rounds): the epoll_wait calls the offload takes off main, the futex calls
# it sleeps and wakes with instead, and all of them.
COUNT = (["epoll_wait", "epoll_pwait", "futex", "syscalls"],
         ["-e", "syscalls:sys_enter_epoll_wait", "-e", "syscalls:sys_enter_epoll_pwait",
          "-e", "syscalls:sys_enter_futex", "-e", "raw_syscalls:sys_enter"])
PIPELINES = [1, 16]
CLIENTS, KEYS = 50, 10000


def apply(srv, setting):
    srv.command(b"CONFIG", b"SET", b"io-threads-poll-offload", b"yes" if setting == "on" else b"no")


def main():
    bl.install_cleanup()
    quick = bl.quick()
    runs = int(os.environ.get("BENCH_RUNS", 2 if quick else 3))
    target_s = 0.5 if quick else 1.2
    threads = [int(t) for t in os.environ.get("POLL_THREADS", "2,4").split(",")]
    try:
        srvs = bl.forced_servers("poll", threads)
        for t in threads:
            with srvs[t].turn():
                bl.populate(srvs[t], KEYS, 3)
        cells = [{"threads": t, "test": "get", "clients": CLIENTS, "pipeline": p, "size": 3, "keyspace": KEYS}
                 for t in threads for p in PIPELINES]
        why = bl.perf_can_count(COUNT[1])
        if why:
            bl.emit(dict(kind="unavailable", bench="poll_offload", what="main's system calls",
                         why="perf cannot count the events: %s" % why))
        lines = bl.switch_rounds(srvs, SETTINGS, apply, cells, runs, target_s, "poll_offload", quick,
                                 count=None if why else COUNT)
        findings(lines, cells, quick, runs)
    finally:
        bl.stop_all()
    return 0


def findings(lines, cells, quick, runs):
    for ln in lines:  # glibc's epoll_wait may enter either call: counted as one
        if "main_epoll_wait_per_req" in ln:
            ln["main_epolls_per_req"] = ln["main_epoll_wait_per_req"] + ln["main_epoll_pwait_per_req"]
    cmd = "make findings BENCH=poll_offload" + (" QUICK=1" if quick else "")
    for i, cell in enumerate(cells[:5]):
        rid = 50 + 2 * i
        what = "io-threads %d forced on, P=%d" % (cell["threads"], cell["pipeline"])
        cfg = dict(threads=cell["threads"], pipeline=cell["pipeline"], clients=CLIENTS, value_size=3, keys=KEYS,
                   test="GET", quick=quick, runs_per_setting=runs, forced_on=True)
        m = lambda s, f: bl.switch_median(lines, cell, s, f)  # noqa: E731
        all_on, all_off = m("on", "main_cpu_us_per_req_with_spin"), m("off", "main_cpu_us_per_req_with_spin")
        on, off = m("on", "rps"), m("off", "rps")
        bl.emit({"finding": True, "id": "F4.%d" % rid, "command": cmd, "config": cfg,
                 "claim": "main thread's CPU per GET (all of it, its idle turns included) and GET rps, poll "
                          "offload on / off (epoll_wait on main), %s" % what,
                 "figure": "main CPU %.3f / %.3f µs = %.2f×%s; %.0f / %.0f rps = %.2f×%s" % (
                     all_on, all_off, all_on / all_off,
                     bl.switch_spread(lines, cell, "main_cpu_us_per_req_with_spin", ("on", "off"), "%.2f", lower=True),
                     on, off, on / off, bl.switch_spread(lines, cell, "rps", ("offload on", "offload off")))})
        bl.emit({"finding": True, "id": "F4.%d" % (rid + 1), "command": cmd, "config": cfg,
                 "claim": "POLL jobs per GET, main's idle turns per GET (the wall time of turns that found "
                          "nothing while results were owed, io_threads_main_spin_us), and main's system calls "
                          "per GET by kind (counted in two rounds after the timed ones), poll offload on / off, "
                          "%s" % what,
                 "figure": "%.4f / %.4f POLL jobs per GET; idle turns %.3f / %.3f µs per GET%s" % (
                     m("on", "polls_per_req"), m("off", "polls_per_req"),
                     m("on", "idle_turns_us_per_req"), m("off", "idle_turns_us_per_req"), calls(lines, cell))})


def calls(lines, cell):
    """'; main's epoll_wait calls ...' for F4.51's figure where perf counted
    them: epoll_wait and epoll_pwait together, futex, all system calls,
    each per GET, on / off, with its rounds' spread."""
    m = lambda s, f: bl.switch_median(lines, cell, s, f)  # noqa: E731
    if m("on", "main_syscalls_per_req") is None:
        return "; main's system calls not counted"
    out = []
    for field, what in (("main_epolls_per_req", "epoll_wait"), ("main_futex_per_req", "futex"),
                        ("main_syscalls_per_req", "all system")):
        out.append("%s calls %.3f / %.3f per GET%s" % (
            what, m("on", field), m("off", field),
            bl.switch_spread(lines, cell, field, ("on", "off"), "%.3f", lower=True)))
    return "; main's (perf stat -t): " + "; ".join(out)

if __name__ == "__main__":
    sys.exit(bl.run_main(main))
