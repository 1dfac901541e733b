#!/usr/bin/env python3
"""trace_cost.py — what the trace points cost main, recording off and on.

Step 4's instrument (src/trace.h). Owns the measure behind two promises:
with recording off, a trace point is a load and a branch, so main's CPU
per request should not differ from a server built without any
(make VARIANT=notrace: -DSOLOIST_NO_TRACE); with recording on
(TRACE START), each event is a clock read and a store into the thread's
own ring, and the rows say what that adds per request.

Three servers of each cell: the build without trace points ("none"),
the default build never asked to record ("off"), and the default build
recording ("on": TRACE START before each run, long enough to cover it,
TRACE STOP and TRACE STATUS after, so every run records afresh and its
events and drops are counted). All three get the same flags and rings
of the same size (trace-buffer-events), sized so a run fills none.
Cells: GET, 3-byte values, 50 connections, 10,000 prefilled keys, P=1 and
P=16 (batches of 16), io-threads 1 and 4 (4 with
--io-threads-always-active yes, offload forced on). Each cell is driven
by soloist-bench in open loop at one Poisson rate for the three servers
(a third of the trace-free server's closed-loop rps in a short
calibration, or TRACE_COST_RATE), through main_cpu.py's machinery
(benchlib.main_cpu_run): main's CPU from INFO used_cpu_*_main_thread,
diffed across the run, over the commands it ran.

Alternation: per cell a short warm-up run of each server (not kept,
it also touches the rings' pages once), then BENCH_RUNS rounds (5; 2
with QUICK), each running the three servers one after another, the
order turned each round (none off on, off on none, on none off, ...), so
drift and a neighbour's load fall on all three alike; the servers
waiting their turn are stopped (SIGSTOP). Each run line also carries
the CPU every other process on the machine used meanwhile
(others_cpu_s: /proc/stat's non-idle time less the server's and the
generator's), so a reader can see how busy the machine was.

Prints JSON lines: kind=unavailable (no trace-free build, or a build
that is not what it should be), kind=rate, kind=run, kind=done.
Knobs: QUICK=1 (about 1 min; about 4.5 min in full), BENCH_RUNS,
TRACE_COST_RATE (one rate for every cell), BENCH_BUDGET_S, SOLOIST_BIN,
SOLOIST_NOTRACE_BIN (default build/notrace/soloist-server),
SOLOIST_BENCH_BIN.

Valkey anchor: none; TRACE is soloist's own instrument.
"""

import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CONNS = 50
KEYS = 10000
SIZE = 3
TEST = "GET"
THREADS = [1, 4]
PIPELINES = [1, 16]
SETTINGS = ["none", "off", "on"]
# Each ring's events: 2^21 (80 MB a thread). A run records about ten
# events per request on main at P=1 (fewer per request at P=16); at the
# rates a 2-core machine is offered here, 3 s of that fills a few
# hundred thousand. The run line counts drops, and findings says so.
RING_EVENTS = 1 << 21
FORCED = ["--io-threads-always-active", "yes"]


def notrace_binary():
    return os.environ.get("SOLOIST_NOTRACE_BIN", os.path.join(bl.ROOT, "build", "notrace", "soloist-server"))


def status(srv):
    """TRACE STATUS as a dict of its integers: a RESP2 array of names
    (bulk strings) and numbers (integers), read whole."""
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as sk:
        sk.sendall(bl.resp([b"TRACE", b"STATUS"]))
        buf = b""
        while True:
            lines = buf.split(b"\r\n")
            if lines and lines[0][:1] in (b"*", b"%"):
                items = [w for w in lines[1:-1] if w[:1] != b"$"]
                if len(items) >= int(lines[0][1:]) * (2 if lines[0][:1] == b"%" else 1):
                    break
            chunk = sk.recv(65536)
            if not chunk:
                raise RuntimeError("TRACE STATUS: the connection closed after %r" % buf)
            buf += chunk
    out = {}
    for k, v in zip(items[::2], items[1::2]):
        try:
            out[k.decode()] = int(v.lstrip(b":"))
        except ValueError:
            continue
    return out


def trace_start(srv, ms):
    """TRACE START ms on srv: None when it recorded, else the reply."""
    rep = srv.command(b"TRACE", b"START", str(int(ms)).encode())
    return None if rep.startswith(b"+OK") else rep.decode("utf-8", "replace").strip()


def one_run(srv, setting, args, rate, warmup, duration):
    """One run of one server; "on" records across it, afresh."""
    if setting == "on":
        why = trace_start(srv, (warmup + duration + 5) * 1000)
        if why:
            raise RuntimeError("TRACE START refused on the default build: %s" % why)
    r = bl.main_cpu_run(srv, args, rate, warmup, duration)
    if setting == "on":
        st = status(srv)
        srv.command(b"TRACE", b"STOP")
        if not st.get("recording"):
            raise RuntimeError("the recording ended before the run did: %s" % st)
        r.update(trace_events=st.get("events"), trace_dropped=st.get("dropped"),
                 trace_no_ring=st.get("no_ring"),
                 events_per_request=round(st["events"] / r["server_commands"], 3)
                 if st.get("events") is not None and r["server_commands"] else None)
    return r


def check_builds(srvs):
    """None when the "none" servers refuse TRACE START and the default
    ones accept it (each stopped again at once), else why not."""
    for (setting, n), s in srvs.items():
        with s.turn():
            why = trace_start(s, 1)
            if why is None:
                s.command(b"TRACE", b"STOP")
        if setting == "none" and why is None:
            return "%s records TRACE START: not a build without trace points" % notrace_binary()
        if setting != "none" and why is not None:
            return "the default build refused TRACE START: %s" % why
    return None


def cell(srvs, cfg, runs, fixed, times):
    """One cell: its rate, a warm-up run of each server, then the rounds."""
    warmup, duration, cal_s = times
    n, p = cfg["io_threads"], cfg["pipeline"]
    args = bl.open_loop_args(TEST, p, SIZE, CONNS, KEYS)
    rate = fixed
    if not rate:
        with srvs[("none", n)].turn() as s:
            closed = bl.closed_loop_rps(s, args, cal_s)
        rate = max(1000, int(closed / 3 // 1000 * 1000))
        bl.emit(dict(cfg, kind="rate", rate=rate, closed_rps_none=closed,
                     why="a third of the trace-free build's closed-loop rps in this cell"))
    for rnd in range(runs + 1):
        order = SETTINGS[rnd % 3:] + SETTINGS[:rnd % 3]
        for setting in order:
            with srvs[(setting, n)].turn() as s:
                if rnd == 0:  # the warm-up round: short, not kept
                    one_run(s, setting, args, rate, warmup / 2, duration / 4)
                    continue
                load = open("/proc/loadavg").read().split()[0]
                r = one_run(s, setting, args, rate, warmup, duration)
            bl.emit(dict(cfg, kind="run", setting=setting, round=rnd, loadavg_1m=float(load), **r))
            bl.log("io-threads %d P=%d %s round %d: %.0f rps, main %.3f us/req, others %.2f s"
                   % (n, p, setting, rnd, r["rps"], r["main_us_per_request"] or -1,
                      r["others_cpu_s"] if r["others_cpu_s"] is not None else -1))


def main():
    bl.install_cleanup()
    q = bl.quick()
    runs = max(2, int(os.environ.get("BENCH_RUNS", "2" if q else "5")))
    warmup, duration, cal_s = (0.2, 0.6, 0.3) if q else (0.5, 2.0, 0.8)
    budget = bl.Budget(float(os.environ.get("BENCH_BUDGET_S", "70" if q else "280")))
    fixed = float(os.environ.get("TRACE_COST_RATE", "0"))
    label, binary, really = bl.servers()[0]
    base = {"bench": "trace_cost", "clients": CONNS, "keys": KEYS, "cores": os.cpu_count(),
            "quick": q, "server": label, "server_is": really, "test": TEST, "value_size": SIZE,
            "warmup_s": warmup, "duration_s": duration, "arrival": "poisson", "ring_events": RING_EVENTS,
            "notrace_binary": os.path.relpath(notrace_binary(), bl.ROOT),
            "load_generator": "soloist-bench, 1 thread, open loop (P>1 in batches: --batch)"}
    base.update(bl.placement())
    for b, how in ((bl.sb_binary(), "make"), (notrace_binary(), "make VARIANT=notrace server")):
        if not os.access(b, os.X_OK):
            bl.emit(dict(base, kind="unavailable", why="%s not built (%s)" % (b, how)))
            return
    if really != "soloist":
        bl.emit(dict(base, kind="unavailable", why="the server is a stand-in (%s): it has no trace points" % really))
        return
    srvs = {}
    try:
        for n in THREADS:
            for setting in SETTINGS:
                extra = (FORCED if n > 1 else []) + ["--trace-buffer-events", str(RING_EVENTS)]
                s, why = bl.thread_server("soloist-%s" % setting, notrace_binary() if setting == "none" else binary,
                                          n, extra)
                if s is None:
                    bl.emit(dict(base, kind="unavailable", why="io-threads %d, %s: %s" % (n, setting, why)))
                    return
                s.pause()
                srvs[(setting, n)] = s
        why = check_builds(srvs)
        if why:
            bl.emit(dict(base, kind="unavailable", why=why))
            return
        for s in srvs.values():
            with s.turn():
                bl.sb_prefill(s, KEYS, SIZE)
        for n in THREADS:
            for p in PIPELINES:
                cfg = dict(base, io_threads=n, always_active=n > 1, pipeline=p)
                if budget.out():
                    bl.emit(dict(cfg, kind="skipped", why="time budget spent"))
                    continue
                cell(srvs, cfg, runs, fixed, (warmup, duration, cal_s))
        bl.emit(dict(base, kind="done", elapsed_s=round(budget.seconds - budget.left(), 1)))
    finally:
        bl.stop_all()


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
