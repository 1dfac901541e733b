#!/usr/bin/env python3
"""p1_anatomy.py — what one request at pipeline depth 1 costs in system
calls and wake-ups, on the server and on the client, for soloist, for
Debian's redis-server 7.0 and, when VALKEY_SERVER names one, for Valkey
built from source (row F0.59; the run says it skipped the peer when not).

Step 0 benchmark. Owns the counts behind the P=1 comparison: for GET, SET
and PING (PING_MBULK), 50 clients, P=1, a fixed number of requests, it
runs redis-benchmark against each server with `perf stat` counting, per
process, the system-call tracepoints (epoll_wait, read, write, writev,
recvfrom, sendto, epoll_ctl, and all system calls), the epoll_wait calls
that returned exactly one ready fd, the wake-ups the process performed
(sched:sched_wakeup fires in the waker: a client's sendto that finds the
server asleep in epoll_wait pays for waking it), context switches and
CPU time, on the server (attached to its pid) and on the client at once.
perf's counters do not stop the traced process, so the loop keeps its
natural batching (strace -c would slow the server until every turn
served all 50 clients).

What the counts show (rows F0.45-F0.49). Per request, both servers make
the same system calls: one read, one write, and a share of an epoll_wait
(soloist used writev for a reply in one piece until these counts showed
the difference; it now uses write, as Valkey does). Neither sends a reply
in pieces or before the turn's reads are done: replies go out in
before_sleep, one write each. What differs is how often the server
sleeps. At P=1 the 50 requests trickle in; a server whose loop turn is
shorter goes back to epoll_wait sooner, finds nothing, and sleeps, so
it wakes more often per request and serves fewer requests per wake-up.
Each wake-up is paid by the client: the sendto that finds the server asleep runs the
scheduler's wake-up, and on two shared cores the woken server also
displaces the client. redis-benchmark, the bottleneck at P=1, spends
that CPU instead of sending requests. Redis 7.0 does more work in each
turn (its beforeSleep also runs expiry, AOF and module hooks), which is
the likely reason it falls asleep less often; these counts show the
difference in wake-ups, not its cause inside Redis.

The figures are per request (calls / requests); requests per epoll
wake-up is requests / epoll_wait calls. System calls per request by
kind are the same from pass to pass; wake-ups, context switches and CPU
µs depend on how the two processes happen to interleave, so each cell
runs PASSES times, the servers alternated, and findings takes medians.

Prints JSON lines: kind=run, one per (server, test, side), with
per_request {syscall: calls/request}, total_syscalls_per_request,
requests_per_wakeup, single_event_wakeup_share, wakes_other_per_request,
context_switches_per_request, cpu_us_per_request.
If perf cannot count tracepoints here, prints kind=unavailable and exits 0.
Knobs: QUICK=1 (20,000 requests per cell, else 100,000), BENCH_REQUESTS,
BENCH_PASSES (3).

Valkey anchor: none in code; the loop measured is Valkey's
beforeSleep -> handleClientsWithPendingWrites, then aeApiPoll.
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CLIENTS = 50
TESTS = [("GET", "get"), ("SET", "set"), ("PING", "ping_mbulk")]
SYSCALLS = ["epoll_wait", "epoll_pwait", "read", "write", "writev", "recvfrom", "sendto", "epoll_ctl"]
EVENTS = (["syscalls:sys_enter_%s" % s for s in SYSCALLS]
          + ["raw_syscalls:sys_enter", "context-switches", "task-clock", "sched:sched_wakeup"])
# perf stat's -e list; the last event counts epoll_wait calls that returned
# exactly one ready fd (a wake-up for a single request).
PERF_EVENTS = sum((["-e", e] for e in EVENTS), []) + [
    "-e", "syscalls:sys_exit_epoll_wait", "--filter", "ret == 1"]


def parse_perf(lines):
    """{event: value} from perf_stat_lines' list, uncounted events left out."""
    return {e: v for e, v in lines if v is not None}


def summarise(counts, requests):
    per = {}
    for s in SYSCALLS:
        v = counts.get("syscalls:sys_enter_%s" % s, 0)
        if v:
            per[s] = round(v / requests, 4)
    wakeups = counts.get("syscalls:sys_enter_epoll_wait", 0) + counts.get("syscalls:sys_enter_epoll_pwait", 0)
    return {"per_request": per,
            "wakes_other_per_request": round(counts.get("sched:sched_wakeup", 0) / requests, 4),
            "single_event_wakeup_share": (round(counts.get("syscalls:sys_exit_epoll_wait", 0) / wakeups, 4)
                                          if wakeups else None),
            "total_syscalls_per_request": round(counts.get("raw_syscalls:sys_enter", 0) / requests, 4),
            "requests_per_wakeup": round(requests / wakeups, 3) if wakeups else None,
            "context_switches_per_request": round(counts.get("context-switches", 0) / requests, 4),
            "cpu_us_per_request": round(counts.get("task-clock", 0) * 1000 / requests, 3)}


def one_cell(srv, test, requests, tmp):
    cli_out = os.path.join(tmp, "cli.perf")
    # perf attaches to the server before the first request (0.3 s).
    with bl.perf_counting(["-p", srv.proc.pid], PERF_EVENTS, settle_s=0.3) as srv_perf:
        r = subprocess.run(["perf", "stat", "-x,"] + PERF_EVENTS + ["-o", cli_out,
                            "redis-benchmark", "-p", str(srv.port), "-c", str(CLIENTS), "-n", str(requests),
                            "-P", "1", "-t", test, "-q", "--csv"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=300)
    row = bl.parse_csv(r.stdout)
    rps = row["rps"] if row else None
    return parse_perf(srv_perf["counts"]), parse_perf(bl.perf_stat_lines(cli_out)), rps


def main():
    bl.install_cleanup()
    q = bl.quick()
    requests = int(os.environ.get("BENCH_REQUESTS", "20000" if q else "100000"))
    base = {"bench": "p1_anatomy", "clients": CLIENTS, "pipeline": 1, "requests": requests,
            "cores": os.cpu_count(), "quick": q, "value_size": 3}
    base.update(bl.placement())
    why = bl.perf_can_count(PERF_EVENTS)
    if why:
        bl.emit(dict(base, kind="unavailable", why="perf cannot count syscall tracepoints: %s" % why))
        return
    passes = max(1, int(os.environ.get("BENCH_PASSES", "3")))
    tmp = tempfile.mkdtemp(prefix="p1-anatomy-")
    servers = bl.servers() + [s for s in [bl.valkey_side(base)] if s]
    for n in range(passes):
        for name, test in TESTS:
            for label, binary, really in servers:  # the order alternates cell by cell
                srv = bl.Server(label, binary, really)
                try:
                    s_counts, c_counts, rps = one_cell(srv, test, requests, tmp)
                finally:
                    srv.stop()
                for side, counts in (("server", s_counts), ("client", c_counts)):
                    bl.emit(dict(base, **summarise(counts, requests), kind="run", server=label,
                                 server_is=really, test=name, side=side, rps=rps, passno=n))
            servers.reverse()


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
