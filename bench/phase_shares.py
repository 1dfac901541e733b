#!/usr/bin/env python3
"""phase_shares.py — (d) where soloist's main thread spends its time.

Step 0 benchmark. Owns the measurement of the serial share s that chapter
01's Amdahl arithmetic uses. soloist's main thread charges its wall time
to phases (poll, read = read+parse, exec = running commands, write =
sending replies, other) and splits poll into the thread's CPU inside it
(poll_cpu: entering epoll_wait, the wake-up, copying events out) and the
wait (poll_wait: off CPU, idle). INFO's Threads section shows the running
totals as main_thread_<phase>_us. This script loads the keyspace, reads
those counters, runs redis-benchmark GET (50 clients, 3-byte values,
-r 100000) at P=1 and at P=16, reads them again, and prints the shares,
per depth, median of >= 3 runs. The definitions (the same as
src/server.c@phase-totals; every line carries them in "definitions"):

  busy   = poll_cpu + read + exec + write + other  (= total - poll_wait)
  s      = (exec + other) / busy: what only the main thread may do once
           I/O threads take reads, parsing, writes and the poll

Beside them: loop turns per request (the phase clock reads the thread CPU
clock twice on one turn in 16, so a sixteenth of twice this is what that
costs per request) and the main
thread's CPU from INFO cpu (used_cpu_*_main_thread) against busy wall
time: busy wall above it is time the thread was preempted mid-phase.

Only soloist has these counters, so there is no B side here. Prints JSON
lines: kind=run and kind=shares. Knobs: QUICK=1, BENCH_TARGET_S,
BENCH_RUNS, BENCH_PINNED, SOLOIST_BIN. If INFO has no main_thread_*_us
fields (a stand-in server), it prints kind=unavailable and exits 0.

Valkey anchor: none in code — Valkey has no such clock; its closest
figures are INFO's used_cpu_sys_main_thread / used_cpu_user_main_thread
(valkey src/server.c genValkeyInfoString), which give the total only.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CLIENTS = 50
KEYSPACE = 100000
DEPTHS = [1, 16]
FIELD = re.compile(r"^main_thread_([a-z_]+)_(us|calls)$")
NOT_PHASES = {"total", "busy"}
BUSY_PARTS = ["poll_cpu", "read", "exec", "write", "other"]
SERIAL_PARTS = ["exec", "other"]
DEFINITIONS = {
    "poll": "wall time from the end of before_sleep to after_sleep (computing the timeout, epoll_wait, copying the events out)",
    "poll_cpu": "the main thread's CPU time inside poll (CLOCK_THREAD_CPUTIME_ID at its edges, read on one "
                "loop turn in poll_cpu_sample and counted that many times)",
    "poll_wait": "poll - poll_cpu: off CPU, idle",
    "busy": "poll_cpu + read + exec + write + other = total - poll_wait",
    "serial_share": "s = (exec + other) / busy: what only the main thread may do once I/O "
                    "threads take reads, parsing, writes and the poll",
}


def poll_cpu_sample():
    """POLL_CPU_SAMPLE as src/server.h defines it for the server this tree
    builds: on how many loop turns in one the CPU clock is read (None
    where the header does not say)."""
    try:
        with open(os.path.join(bl.ROOT, "src", "server.h")) as f:
            m = re.search(r"^#define POLL_CPU_SAMPLE (\d+)", f.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) if m else None


def counters(server):
    """({phase: us}, {phase: calls}, extra) from INFO everything: the
    main_thread_* fields (by name, so a renamed section still works), and
    the commands processed and the main thread's CPU (INFO cpu), in us."""
    info = server.info("everything")
    us, calls, extra = {}, {}, {}
    for (_sect, key), val in info.items():
        m = FIELD.match(key)
        if m and m.group(1) not in NOT_PHASES:
            try:
                (us if m.group(2) == "us" else calls)[m.group(1)] = int(val)
            except ValueError:
                pass
    try:
        extra["commands"] = int(info[("stats", "total_commands_processed")])
        extra["main_thread_cpu_us"] = round(1e6 * (float(info[("cpu", "used_cpu_user_main_thread")]) +
                                                   float(info[("cpu", "used_cpu_sys_main_thread")])))
    except (KeyError, ValueError):
        pass
    return us, calls, extra


def shares(delta):
    """(share_of_busy, share_of_total, busy_us, s) from one run's deltas."""
    total = sum(delta.get(k, 0) for k in ("poll", "read", "exec", "write", "other"))
    busy = sum(delta.get(k, 0) for k in BUSY_PARTS)
    s_busy = {k: round(delta.get(k, 0) / busy, 4) for k in BUSY_PARTS} if busy > 0 else {}
    s_total = ({k: round(delta.get(k, 0) / total, 4)
                for k in ["poll_wait"] + BUSY_PARTS} if total > 0 else {})
    s = round(sum(delta.get(k, 0) for k in SERIAL_PARTS) / busy, 4) if busy > 0 else None
    return s_busy, s_total, busy, s


def main():
    bl.install_cleanup()
    q = bl.quick()
    target = float(os.environ.get("BENCH_TARGET_S", "0.25" if q else "2.0"))
    runs = max(3, int(os.environ.get("BENCH_RUNS", "3")))
    label, binary, really = bl.servers()[0]
    base = {"bench": "phase_shares", "test": "GET", "clients": CLIENTS, "keyspace": KEYSPACE,
            "value_size": 3, "cores": os.cpu_count(), "quick": q, "server": label,
            "server_is": really, "target_s": target, "definitions": DEFINITIONS,
               "poll_cpu_sample": poll_cpu_sample()}
    base.update(bl.placement())
    srv = bl.Server(label, binary, really)
    try:
        if "poll_cpu" not in counters(srv)[0]:
            bl.emit(dict(base, kind="unavailable",
                         why="INFO has no main_thread_poll_cpu_us field"))
            return
        bl.populate(srv, KEYSPACE, 3)
        for p in DEPTHS:
            cfg = dict(base, pipeline=p)
            warm = bl.redis_benchmark(srv, "get", CLIENTS,
                                      bl.calibrate_requests(20000 * (0.25 if q else 1) * (1 if p == 1 else 4),
                                                            1.0, CLIENTS, p), p, 3, KEYSPACE)
            n = bl.calibrate_requests(warm["rps"], target, CLIENTS, p)
            done = []
            for i in range(runs):
                us0, calls0, x0 = counters(srv)
                r = bl.redis_benchmark(srv, "get", CLIENTS, n, p, 3, KEYSPACE,
                                       timeout=max(60, 20 * target))
                us1, calls1, x1 = counters(srv)
                delta = {k: us1.get(k, 0) - us0.get(k, 0) for k in us1}
                s_busy, s_total, busy, s = shares(delta)
                turns = calls1.get("poll", 0) - calls0.get("poll", 0)
                cpu = x1.get("main_thread_cpu_us", 0) - x0.get("main_thread_cpu_us", 0)
                done.append((s_busy, s_total, s))
                bl.emit(dict(cfg, kind="run", run=i + 1, requests=n, rps=r["rps"],
                             phase_us=delta, share_of_busy=s_busy, share_of_total=s_total,
                             serial_share=s, busy_us=busy,
                             busy_us_per_request=round(busy / n, 3),
                             turns_per_request=round(turns / n, 4),
                             main_thread_cpu_us=cpu,
                             busy_wall_over_thread_cpu=round(busy / cpu, 3) if cpu > 0 else None,
                             server_commands=x1.get("commands", 0) - x0.get("commands", 0),
                             server_cpu_s=r.get("server_cpu_s"),
                             client_cpu_s=r.get("client_cpu_s"), wall_s=r["wall_s"]))
            med_busy = {k: bl.median([d[0].get(k, 0) for d in done]) for k in BUSY_PARTS}
            med_total = {k: bl.median([d[1].get(k, 0) for d in done]) for k in done[0][1]}
            med_s = bl.median([d[2] for d in done if d[2] is not None])
            bl.emit(dict(cfg, kind="shares", runs=runs, requests=n, median_serial_share=med_s,
                         median_share_of_busy=med_busy, median_share_of_total=med_total))
            bl.log("GET P=%d: s %s, busy shares %s" % (p, med_s, med_busy))
    finally:
        bl.stop_all()


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
