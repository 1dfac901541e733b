#!/usr/bin/env python3
"""main_cpu.py — the main thread's CPU per request, with I/O threads forced on.

Steps 4-5 benchmark. Owns the measure that counts on a 2-core machine:
not throughput (the load generator shares the cores, so closed-loop
requests per second say as much about it as about the server) but how
much of the main thread one request costs. The main thread is the serial
part; what I/O threads take off it is what they can give. If a request
costs the main thread c µs, the main thread alone cannot serve more than
1 / c requests a second, however many cores there are: that is the
throughput ceiling each setting predicts, set beside Amdahl's bound from
step 0's serial share (tools/findings.py does the comparison).

soloist at io-threads 1 (the step-0 server), 2 and 4, the latter two with
`--io-threads-always-active yes` (offload forced on, ignition bypassed).
Each cell — GET and SET, P=1 and P=16, 3-byte and 512-byte values, 50
connections, 10,000 prefilled keys — is driven by soloist-bench in open
loop at one fixed Poisson rate for all three settings: a third of what
io-threads 1 served in a short closed-loop calibration of the same cell
(or MAIN_CPU_RATE), well below saturation, so every setting serves the
same offered load. P=16 is sent in batches of 16 (soloist-bench --batch:
redis-benchmark's -P at a fixed rate). Settings alternate A B C A B C;
the servers waiting their turn are stopped (SIGSTOP) so idle I/O threads
cannot take CPU from the one measured.

Per run, diffed across it (warm-up included for every setting alike):
commands executed, the main thread's CPU and the whole process's CPU. The
main thread's CPU is read three ways: INFO cpu's used_cpu_*_main_thread
(getrusage(RUSAGE_THREAD): the kernel's run time, printed to the µs), the
scheduler's run time in /proc/PID/task/PID/schedstat (ns), and utime +
stime in /proc/PID/task/PID/stat (whole clock ticks, 10 ms, sampled at
each tick). The first is the figure (the server's own, µs resolution);
the second is its cross-check; the third is kept to show why it is not
used: over a QUICK run it moves in steps of several µs per request.

Prints JSON lines: kind=skipped (a setting the server does not support,
with the reason), kind=rate (a cell's offered rate), kind=run, kind=done.
Knobs: QUICK=1 (about 45 s with all settings, 15 s with io-threads 1
only; about 3.5 min in full), BENCH_RUNS, MAIN_CPU_RATE (one rate for every
cell), BENCH_BUDGET_S, SOLOIST_BIN, SOLOIST_BENCH_BIN, BENCH_PINNED.

Valkey anchor: the main thread's work per request once reads, parsing
and writes go to I/O threads (valkey src/io_threads.c, the offload
functions trySendReadToIOThreads and trySendWriteToIOThreads), measured,
not mirrored.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CONNS = 50
KEYS = 10000
THREADS = [1, 2, 4]
FORCED = ["--io-threads-always-active", "yes"]


def cell(srv, cfg, runs, fixed, times):
    """One cell: its rate (fixed, or a third of io-threads 1's closed
    loop), then the settings in turn, `runs` times."""
    warmup, duration, cal_s = times
    test, p, size = cfg["test"], cfg["pipeline"], cfg["value_size"]
    rate = fixed
    if not rate:
        with srv[1].turn():
            closed = bl.closed_loop_rps(srv[1], bl.open_loop_args(test, p, size, CONNS, KEYS), cal_s)
        rate = max(1000, int(closed / 3 // 1000 * 1000))
        bl.emit(dict(cfg, kind="rate", rate=rate, closed_rps_io_threads_1=closed,
                     why="a third of io-threads 1's closed-loop rps in this cell"))
    for i in range(runs):
        for n, s in srv.items():
            with s.turn():
                r = bl.main_cpu_run(s, bl.open_loop_args(test, p, size, CONNS, KEYS), rate, warmup, duration)
            bl.emit(dict(cfg, kind="run", run=i + 1, io_threads=n, always_active=n > 1, **r))
            bl.log("%s %dB P=%d io-threads %d run %d: %.0f rps, main %.3f us/req, process %.3f us/req"
                   % (test, size, p, n, i + 1, r["rps"], r["main_us_per_request"] or -1,
                      r["process_us_per_request"] or -1))


def main():
    bl.install_cleanup()
    q = bl.quick()
    runs = max(2, int(os.environ.get("BENCH_RUNS", "2" if q else "3")))
    warmup, duration, cal_s = (0.2, 0.6, 0.3) if q else (0.5, 2.0, 0.8)
    budget = bl.Budget(float(os.environ.get("BENCH_BUDGET_S", "55" if q else "225")))
    fixed = float(os.environ.get("MAIN_CPU_RATE", "0"))
    label, binary, really = bl.servers()[0]
    base = {"bench": "main_cpu", "clients": CONNS, "keys": KEYS, "cores": os.cpu_count(),
            "quick": q, "server": label, "server_is": really, "warmup_s": warmup,
            "duration_s": duration, "arrival": "poisson",
            "load_generator": "soloist-bench, 1 thread, open loop (P>1 in batches: --batch)"}
    base.update(bl.placement())
    if not os.access(bl.sb_binary(), os.X_OK):
        bl.emit(dict(base, kind="unavailable", why="%s not built (make)" % bl.sb_binary()))
        return
    srv = {}
    try:
        for n in THREADS:
            s, why = bl.thread_server(label, binary, n, FORCED if n > 1 else ())
            if s is None:
                bl.emit(dict(base, kind="skipped", io_threads=n, why=why))
                bl.log("io-threads %d: skipped (%s)" % (n, why))
                continue
            s.pause()
            srv[n] = s
        if 1 not in srv:
            bl.emit(dict(base, kind="unavailable", why="io-threads 1 did not start"))
            return

        def prefill(size):
            for s in srv.values():
                with s.turn():
                    bl.sb_prefill(s, KEYS, size)
        for cfg in bl.serving_cells(base, budget, prefill):
            cell(srv, cfg, runs, fixed, (warmup, duration, cal_s))
        bl.emit(dict(base, kind="done", elapsed_s=round(budget.seconds - budget.left(), 1)))
    finally:
        bl.stop_all()


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
