#!/usr/bin/env python3
"""main_syscalls.py — steps 4-5: what the main thread asks of the kernel
per request once the I/O threads take the sockets.

Steps 4-5 benchmark. With the threads on, main reads and writes no
socket; yet bench/beside_valkey.py finds it still spends a few
microseconds of system time a request (row F4.100), and the pipeline
model has to guess whether that is the hand-offs' own work or waiting:
main blocking when no result is owed and being woken, waking workers,
polling. This counts it. For soloist and Valkey (VALKEY_SERVER; without
it the rows leave Valkey out and say so) at io-threads 1, 2 and 4, the
threads forced on as bench/beside_valkey.py starts them, at one offered
rate, `perf stat` attached to the main thread alone (-t, its thread id
is the process id) counts its system calls by kind, the wake-ups it
performs (sched:sched_wakeup fires in the waker), its context switches
and its CPU time, over a whole open-loop run of soloist-bench; the
server's INFO counts the commands. A read of 8 bytes is counted apart:
soloist's main reads the pool's eventfd (8 bytes) when epoll_wait reports
it readable, after a worker ended a sleep of main's in epoll_wait (while a
POLL job is out, main sleeps on a futex instead and reads nothing), where
a socket read asks for far more.

The cell is beside_valkey's part (c) GET of 3 bytes at depth 1, 50
connections, 100,000 keys, at a third of the slower io-threads-1
server's closed-loop rate (the median of three alternated reads:
benchlib.closed_loop_medians). The settings alternate, the order turned
each round. A run in which under 95 % of the offered requests were
answered is left out of the medians and the rows say so (Valkey at
io-threads 4 on two cores: its spinning threads leave the generator too
little CPU to send).

Prints JSON lines: kind=rate, kind=run, and rows F4.111 (soloist) and
F4.112 (Valkey). `main_syscalls.py --rows FILE` computes a stored run's
rows again from its run lines. Knobs: QUICK=1 (about 30 s; full about
1.5 min), BENCH_RUNS, SYSCALL_THREADS (1,2,4), SYSCALL_RATE (the offered
rate, instead of a third of the closed-loop one), VALKEY_SERVER,
SOLOIST_BIN. If perf cannot count the tracepoints here, prints
kind=unavailable and exits 0.

Valkey anchors: none in code; Valkey is measured, not mirrored (its
main's side of the hand-offs: src/io_threads.c at the 2024 tree).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
import beside_valkey as bv  # noqa: E402  (part (c)'s servers)
import idle_spin as isp  # noqa: E402  (the offered-load rule)

THREADS = [int(x) for x in os.environ.get("SYSCALL_THREADS", "1,2,4").split(",")]
TEST, PIPELINE, SIZE = "GET", 1, 3
ROWS = {"soloist": "F4.111", "valkey": "F4.112"}
# The system calls counted by name, in the rows' order; "read 8 B" is the
# read tracepoint again, filtered to 8-byte reads (an eventfd's counter).
KINDS = ["read", "write", "epoll_wait", "epoll_pwait", "poll", "ppoll", "futex", "sched_yield",
         "clock_gettime", "getrusage", "writev", "recvfrom", "sendto"]
EIGHT = "read 8 B"
EVENTS = (sum((["-e", "syscalls:sys_enter_%s" % k] for k in KINDS), [])
          + ["-e", "syscalls:sys_enter_read", "--filter", "count == 8"]
          + ["-e", "raw_syscalls:sys_enter", "-e", "sched:sched_wakeup", "-e", "context-switches",
             "-e", "task-clock"])
NAMES = ["syscalls:sys_enter_%s" % k for k in KINDS] + [EIGHT, "all", "wakes", "switches", "task-clock"]


def parse_counts(lines):
    """perf_stat_lines' list -> {name: count}, the events in EVENTS' order
    (the read tracepoint appears twice, so lines are matched by order;
    an event perf did not count is 0)."""
    return dict(zip(NAMES, (v or 0.0 for _, v in lines)))


def per_request(counts, commands):
    """The counts per command: {kind: calls}, all, wakes, switches, cpu µs."""
    if not commands:
        return None
    per = {k: round(counts.get("syscalls:sys_enter_%s" % k, 0) / commands, 4) for k in KINDS}
    per[EIGHT] = round(counts.get(EIGHT, 0) / commands, 4)
    return {"syscalls": per, "all": round(counts.get("all", 0) / commands, 4),
            "wakes": round(counts.get("wakes", 0) / commands, 4),
            "switches": round(counts.get("switches", 0) / commands, 4),
            "cpu_us": round(counts.get("task-clock", 0) * 1000 / commands, 3)}


def one_run(s, rate, times):
    """One open-loop run with perf counting main alone -> run fields."""
    warmup, duration = times
    args = bl.open_loop_args(TEST, PIPELINE, SIZE, bv.CLIENTS, bv.KEYS) + [
        "--rate", str(int(rate)), "--warmup", "%gs" % warmup, "-d", "%gs" % duration, "--drain", "1s"]
    c0 = bl.main_cpu_counters(s)
    with bl.perf_counting(["-t", s.proc.pid], EVENTS) as perf:
        rep, argv = bl.soloist_bench(s.port, args)
    c1 = bl.main_cpu_counters(s)
    commands = bl.counters_diff(c0, c1)["commands"]
    cls = rep["classes"][0]
    return {"rate": rate, "rps": cls["rps"], "requests": cls["requests"], "unsent": cls.get("unsent", 0),
            "server_commands": int(commands) if commands is not None else None,
            "main": per_request(parse_counts(perf["counts"]), commands), "argv": argv}


def measure(runs, times, valkey, rate):
    """Every (server, io-threads) setting started once, paused when not
    measured, alternated, the order turned each round -> run lines."""
    settings = bv.start_paused(("soloist",) + (("valkey",) if valkey else ()), THREADS)
    lines = []
    try:
        for s in settings.values():
            with s.turn():
                bl.sb_prefill(s, bv.KEYS, SIZE)
        for r in range(runs):
            for (name, n) in bl.turned(list(settings), r):
                s = settings[(name, n)]
                with s.turn():
                    got = one_run(s, rate, times)
                line = dict(kind="run", bench="main_syscalls", server=name, server_is=s.really, io_threads=n,
                            forced=n > 1, run=r + 1, **dict(got, **bl.placement()))
                bl.emit(line)
                m = got["main"] or {}
                bl.log("%s t%d: %.0f rps, main %.2f syscalls/req, %.2f wakes/req, %.2f us/req"
                       % (name, n, got["rps"], m.get("all", -1), m.get("wakes", -1), m.get("cpu_us", -1)))
                lines.append(line)
    finally:
        for s in settings.values():
            s.stop()
    return lines


def med(runs, get):
    return bl.median([get(ln["main"]) for ln in runs])


def findings(lines, quick, rate):
    """Rows F4.111 (soloist) and F4.112 (Valkey) from the run lines alone."""
    cmd = "make findings BENCH=main_syscalls" + (" QUICK=1" if quick else "")
    ran = [ln for ln in lines if ln.get("kind") == "run" and ln.get("main")]
    for name, rid in ROWS.items():
        mine = [ln for ln in ran if ln["server"] == name]
        if not mine:
            if name == "valkey":
                bl.emit({"finding": True, "id": rid, "command": cmd, "config": {"quick": quick},
                         "claim": "Valkey's main thread's system calls per GET by kind, io-threads %s"
                                  % ", ".join(str(n) for n in THREADS),
                         "figure": "not measured: %s" % bl.VALKEY_SKIPPED})
            continue
        cells = []
        ns = sorted({ln["io_threads"] for ln in mine})
        for n in ns:
            runs = [ln for ln in mine if ln["io_threads"] == n and isp.offered(ln)]
            gone = sum(1 for ln in mine if ln["io_threads"] == n and not isp.offered(ln))
            if not runs:
                cells.append("t%d: not offered the load (at most %.0f %% of the offered requests answered)" % (
                    n, max(100.0 * isp.answered_share(ln) for ln in mine if ln["io_threads"] == n)))
                continue
            kinds = [(k, med(runs, lambda m, k=k: m["syscalls"][k])) for k in KINDS + [EIGHT]]
            shown = "; ".join("%s %.2f" % (k, v) for k, v in kinds if v is not None and v >= 0.005)
            cells.append("t%d: all %.2f (%s); wakes %.2f, switches %.2f, CPU %.2f µs%s" % (
                n, med(runs, lambda m: m["all"]), shown or "none", med(runs, lambda m: m["wakes"]),
                med(runs, lambda m: m["switches"]), med(runs, lambda m: m["cpu_us"]),
                "; %d run(s) left out, under %d %% answered" % (gone, isp.SENT_SHARE * 100) if gone else ""))
        who = "soloist" if name == "soloist" else "Valkey"
        names = [str(n) for n in ns]
        counts = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        bl.emit({"finding": True, "id": rid, "command": cmd,
                 "config": {"test": TEST, "pipeline": PIPELINE, "value_size": SIZE, "clients": bv.CLIENTS,
                            "keys": bv.KEYS, "offered_rps": rate, "threads_forced_on": True, "quick": quick,
                            "runs_per_setting": max(ln["run"] for ln in mine), "counted": "perf stat -t (main)",
                            **({"placement": mine[0]["placement_note"]} if mine[0].get("placement_note") else {})},
                 "claim": "%s's main thread: system calls per GET by kind (medians; read 8 B: reads of 8 bytes, "
                          "an eventfd's counter, counted apart and also within read), the wake-ups it performs, "
                          "its context switches and CPU, GET 3 B P=1 at %d requests/s offered, io-threads %s "
                          "(threads forced on)" % (who, rate, counts),
                 "figure": "%s; offered %d requests/s" % (" | ".join(cells), rate)})


def main():
    bl.install_cleanup()
    why = bl.perf_can_count(EVENTS)
    if why:
        bl.emit(dict(kind="unavailable", bench="main_syscalls", why="perf cannot count the events: %s" % why))
        return 0
    quick, runs, times, valkey = isp.open_loop_plan("main_syscalls")
    try:
        rate = isp.offered_rate(valkey, 0.3 if quick else 0.5, bench="main_syscalls", env="SYSCALL_RATE")
        lines = measure(runs, times, valkey, rate)
        findings(lines, quick, rate)
    finally:
        bl.stop_all()
    return 0


def rows_again(path):
    """--rows FILE: the rows of a stored run computed again from its run
    lines by this code (the raw lines untouched, the old rows replaced)."""
    def make_rows(raw):
        rate = next((ln["rate"] for ln in raw if ln.get("kind") == "rate"), 0)
        quick = next((ln["quick"] for ln in raw if ln.get("kind") == "rate" and "quick" in ln), False)
        findings(raw, quick, rate)
    bl.rows_again(path, make_rows)


if __name__ == "__main__":
    sys.exit(bl.run_main(main, rows_again))
