#!/usr/bin/env python3
"""beside_valkey.py — soloist beside Valkey itself, thread by thread.

Steps 4-7 benchmark. Every other serving benchmark compares soloist with
Debian's redis-server 7.0, whose I/O threads are another design (a
fan-out and wait per event-loop turn). This one puts it beside the
design it re-implements: Valkey, built from source (the binary's path in
VALKEY_SERVER; a run without it says it skipped the peer and measures
nothing). Four parts, one run:

(a) Throughput, io-threads 1: redis-benchmark, 50 clients, GET and SET
    of 3 and 512 bytes at pipeline 1 and 16 over KEYS keys (loaded in
    full first, so every GET hits), the three servers alternated
    (soloist, Valkey, redis-server) RUNS times; a cell's medians and the
    ratios soloist/Valkey and soloist/redis-server. redis-benchmark's
    own CPU is kept on each run: at depth 16 it is the bottleneck, so a
    ratio there says which server leaves it more to do per request.
(b) Large values, io-threads 1: four clients GETting (and SETting) one
    1 MB key, redis-benchmark's p50 and p99 beside its rps, the three
    servers alternated. Four clients each owed 1 MB is where a server's
    write fairness shows: soloist writes 64 KB a turn on main while
    other clients wait (io-write-alone-max's chunks only when none does;
    either up to 16 KB longer when that ends the output). 2000 requests
    a round; the rows say how much of each round redis-benchmark spent on
    its CPU, which is nearly all of it, and its CPU a request: one client
    thread bounds the rate here. One more round per server, untimed,
    counts its system calls a request under perf stat (kind=client_calls):
    the same against every server says the server does not change the
    client's work. With BENCH_CLIENT_THREADS (bench/cores_matrix.sh, the
    generator on cores of its own) redis-benchmark spreads the four
    clients over up to four threads, and the rates become the servers'.
(c) The main thread's CPU per request at one offered rate, every thread
    read from /proc/PID/task/TID/schedstat (the scheduler's run time,
    ns): soloist and Valkey at io-threads 1, 2 and 4, threads on as far
    as each allows (soloist: --io-threads-always-active yes, every worker
    active; Valkey: --events-per-io-thread 0, its test switch, which sets
    the active count to one more than each turn's events, up to io-threads,
    so every thread is active once a turn has io-threads - 1 events:
    valkey src/io_threads.c adjustIOThreadsByEventLoad at the 2024 tree).
    Cells: the eight of (a) driven by soloist-bench in open loop at a
    third of the slower io-threads-1 server's closed-loop rate (both
    servers see the same offered load; each server's rate the median of
    three half-second reads, the servers alternated, since one read
    could land on a passing hiccup), and 1 MB GETs on four
    connections. Per run: commands executed (INFO), main's CPU, the I/O
    threads' CPU (threads named io_thd_N in both servers), the process's.
    Main's user and system time (getrusage, from INFO) and how often it
    blocked (its voluntary context switches) say what its CPU was: work,
    or sleeping and waking. Each is per request; the I/O threads' figure includes what they spin
    while idle (soloist's poll their queue a while before they sleep,
    Valkey's for as long as they stay active), so it is an upper bound on
    a job's cost.
(d) Scaling, measured: closed-loop throughput of every setting of (c) in
    the cell bench/pipeline_model.py reads (SET 512 B, depth 1), soloist-
    bench keeping every connection busy, settings alternated; the points
    the model's curve is drawn beside (rows F4.104-F4.105, plot
    beside_valkey_scaling), and each thread's CPU over them as (c) reads
    it: the model's demands at the ceiling, where main at io-threads 1
    barely sleeps (rows F4.100-F4.103; (c)'s open-loop figures beside).
    Last, with every server paused, bench/idle_line.c's round trip: a
    GET's hand-offs where no thread sleeps (its row F4.65),
    which the target row reads as the model's third estimate.

Part (c) ends with one more cell, ZRANGE of a whole 100-member sorted set
(row F4.106): soloist-bench sends only GET and SET, so redis-benchmark
sends it, in closed loop, each setting at its own rate.

`beside_valkey.py --rows FILE` computes a stored run's rows again from its
run lines (after a row's wording changes; the measurements are untouched).

Prints JSON lines: kind=skipped, kind=run (a), kind=cell (a) and (b),
kind=client_calls (b), kind=rate and kind=cpu (c), kind=scale and kind=handoff (d), kind=done. Knobs: VALKEY_SERVER (required),
QUICK=1 (about 2 min), BENCH_PARTS (default abcd: which parts run; c runs with d), BENCH_THREADS (1,2,4), BENCH_D_CONNS and BENCH_CLIENT_THREADS (part d's load; part b's generator threads, up to 4), BENCH_SERVER_CPUS and BENCH_CLIENT_CPUS (taskset lists: bench/cores_matrix.sh), BENCH_RUNS, BENCH_BUDGET_S, SOLOIST_BIN, REDIS_BIN, IDLE_LINE_BIN.

Valkey anchors: the offload functions of valkey src/io_threads.c
(trySendReadToIOThreads, trySendWriteToIOThreads) at the 2024 tree,
measured, not mirrored.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
import pipeline_model as pm  # noqa: E402

sys.path.insert(0, os.path.join(bl.ROOT, "tools"))
from findings_core import lo_hi, verdict  # noqa: E402  (the rows say spreads in FINDINGS.md's words)

CLIENTS = 50
KEYS = 100000
BIG = 1 << 20
BIG_CLIENTS = 4
THREADS = [int(x) for x in os.environ.get("BENCH_THREADS", "1,2,4").split(",")]
ORDER = ["soloist", "valkey", "redis"]
NAMES = {"soloist": "soloist", "valkey": "Valkey", "redis": "redis-server 7.0"}
SEEN = []  # every line emitted, for the rows at the end


def emit(obj):
    SEEN.append(obj)
    bl.emit(obj)


def start(name, threads):
    """One server at `threads` I/O threads (main counted), forced on."""
    (_, sol_bin, sol_is), (_, redis_bin, _) = bl.servers()
    binary, really, extra = {
        "soloist": (sol_bin, sol_is, ["--io-threads-always-active", "yes"]),
        "valkey": (bl.valkey_binary(), "valkey-server", ["--events-per-io-thread", "0"]),
        "redis": (redis_bin, "redis-server", []),
    }[name]
    args = ["--io-threads", str(threads)] + (extra if threads > 1 else [])
    srv = bl.Server("%s-t%d" % (name, threads), binary, really, args)
    got = srv.config_get("io-threads")
    if got != str(threads):
        srv.stop()
        raise RuntimeError("%s: io-threads is %s after --io-threads %d" % (name, got, threads))
    return srv


def start_paused(names, threads):
    """{(name, io-threads): server} for every name and thread count, each
    started as start() does and paused until its turn; if one fails to
    start, those already started are stopped before the error goes on.
    Part (c) here and bench/main_syscalls.py measure settings this way."""
    settings = {}
    try:
        for name in names:
            for n in threads:
                settings[(name, n)] = start(name, n)
                settings[(name, n)].pause()
    except BaseException:
        for s in settings.values():
            s.stop()
        raise
    return settings


def thread_cpu(pid):
    """(main, io threads, process) scheduler run time in seconds."""
    t = bl.threads_cpu_s(pid)
    main = t.get(pid, ("", 0.0))[1]
    io = sum(s for tid, (comm, s) in t.items() if tid != pid and comm.startswith("io_thd"))
    return main, io, sum(s for _, s in t.values())


# ------------------------------------------------------------ (a) and (b)

def throughput(srv, base, runs, budget):
    """Part (a): the eight cells at io-threads 1, servers alternated."""
    for size in bl.SIZES:
        for s in srv.values():
            with s.turn():
                bl.populate(s, KEYS, size)
        for test in bl.TESTS:
            for p in bl.PIPELINES:
                cfg = dict(base, part="a", test=test, pipeline=p, value_size=size, clients=CLIENTS, keys=KEYS)
                if budget.out():
                    bl.emit(dict(cfg, kind="skipped", why="time budget spent"))
                    continue
                n = bl.calibrate_requests(45000 if p == 1 else 700000, 1.0 if not bl.quick() else 0.3,
                                          CLIENTS, p)
                alternate(srv, cfg, runs, lambda s: bl.redis_benchmark(s, test.lower(), CLIENTS, n, p, size, KEYS))


def big_values(srv, base, runs):
    """Part (b): four clients, one 1 MB key, SET then GET."""
    # Each 1 MB request costs redis-benchmark about half a millisecond of
    # CPU, so 800 made rounds of a quarter to two thirds of a second; 2000
    # make them long enough that one scheduling hiccup does not decide a
    # round.
    n = 200 if bl.quick() else 2000
    # One redis-benchmark thread reads every reply and copies each megabyte
    # out of the kernel: on its own it is the bound, whatever the server.
    # Given cores of its own (BENCH_CLIENT_THREADS, bench/cores_matrix.sh)
    # it spreads the four clients over up to four threads, four times the
    # reading it can do, so that the servers, not it, can set the rate.
    threads = min(BIG_CLIENTS, int(os.environ.get("BENCH_CLIENT_THREADS", "1")))
    for test in ["SET", "GET"]:
        cfg = dict(base, part="b", test=test, pipeline=1, value_size=BIG, clients=BIG_CLIENTS, keys=1,
                   generator_threads=threads)
        alternate(srv, cfg, runs, lambda s: bl.redis_benchmark(s, test.lower(), BIG_CLIENTS, n, 1, BIG,
                                                               threads=threads))
        generator_calls(srv, cfg, n // 4, threads)


# What redis-benchmark asks of the kernel for each 1 MB request: its reads
# (recvfrom), its waits, its sends. The same counts against every server
# say the client's work is the same, whichever server it reads from.
CLIENT_CALLS = ["recvfrom", "epoll_wait", "sendto", "write", "read"]
CLIENT_EVENTS = sum((["-e", "syscalls:sys_enter_%s" % k] for k in CLIENT_CALLS), []) + ["-e", "task-clock"]


def generator_calls(srv, cfg, n, threads):
    """One more round per server, not among the timed ones (tracepoints
    add to each call's cost): redis-benchmark under perf stat, its system
    calls per request by kind (kind=client_calls)."""
    why = bl.perf_can_count(CLIENT_EVENTS)
    if why:
        emit(dict(cfg, kind="skipped", what="client_calls", why=why))
        return
    fd, path = tempfile.mkstemp(prefix="perf-client-", suffix=".txt")
    os.close(fd)
    for name, s in srv.items():
        with s.turn():
            r = bl.redis_benchmark(s, cfg["test"].lower(), BIG_CLIENTS, n, 1, BIG, threads=threads,
                                   wrap=["perf", "stat", "-x,", "-o", path] + CLIENT_EVENTS + ["--"])
        counts = dict(zip(CLIENT_CALLS + ["task-clock"], (v for _, v in bl.perf_stat_lines(path))))
        calls = {k: round(counts[k] / n, 2) for k in CLIENT_CALLS if counts.get(k) is not None}
        cpu_ms = counts.get("task-clock")  # perf's task-clock is in ms
        emit(dict(cfg, kind="client_calls", server=name, server_is=s.really, requests=n, calls=calls,
                  cpu_ms_per_request=round(cpu_ms / n, 3) if cpu_ms else None, rps=r["rps"]))
    os.unlink(path)


def alternate(srv, cfg, runs, one):
    """Runs `one(server)` for each server in turn, `runs` times; one cell line."""
    got = {name: [] for name in srv}
    for i in range(runs):
        for name, s in srv.items():
            with s.turn():
                r = one(s)
            got[name].append(r)
            emit(dict(cfg, kind="run", server=name, server_is=s.really, run=i + 1, **r))
    cell = dict(cfg, kind="cell", runs=runs)
    for name, rs in got.items():
        cell[name] = {k: bl.median([r[k] for r in rs]) for k in ("rps", "p50_latency_ms", "p99_latency_ms",
                                                                 "client_cpu_s")}
        cell[name]["rps_runs"] = [r["rps"] for r in rs]
        cell[name]["p99_runs"] = [r["p99_latency_ms"] for r in rs]
    for peer in ("valkey", "redis"):
        if peer in got and cell[peer]["rps"]:
            cell["ratio_" + peer] = round(cell["soloist"]["rps"] / cell[peer]["rps"], 4)
    emit(cell)
    bl.log("%s %s %dB P=%d: %s" % (cfg["part"], cfg["test"], cfg["value_size"], cfg["pipeline"],
                                   " ".join("%s %.0f" % (k, cell[k]["rps"]) for k in got)))


# ------------------------------------------------------------------- (c)

def main_sleeps(pid):
    """How many times the main thread has blocked (its voluntary context
    switches, /proc/PID/task/PID/status), or None."""
    try:
        with open("/proc/%d/task/%d/status" % (pid, pid)) as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def cpu_window(s, load):
    """Runs load() against server s; -> (what load returned, the CPU each
    thread of s spent over it, per request). Commands, main's user and
    system CPU (INFO cpu: getrusage RUSAGE_THREAD, both servers), soloist's
    idle-spin wall time (Valkey has no such counter): benchlib's counters,
    as main_cpu.py reads them; main's, the I/O threads' and the process's
    run time from schedstat; and how often main blocked, in the poll as a
    rule (main_sleeps_per_request: each sleep and wake-up costs main kernel
    time, so a loop that finds less waiting each turn pays more of them)."""
    c0, m0, z0 = bl.main_cpu_counters(s), thread_cpu(s.proc.pid), main_sleeps(s.proc.pid)
    got = load()
    c1, m1, z1 = bl.main_cpu_counters(s), thread_cpu(s.proc.pid), main_sleeps(s.proc.pid)
    dc = bl.counters_diff(c0, c1)
    cmds = int(dc["commands"]) if dc["commands"] is not None else None
    d = [b - a for a, b in zip(m0, m1)]
    return got, {"server_commands": cmds, "main_cpu_s": round(d[0], 6), "io_cpu_s": round(d[1], 6),
                 "process_cpu_s": round(d[2], 6),
                 "main_us_per_request": bl.per_req_us(d[0], cmds),
                 "io_us_per_request": bl.per_req_us(d[1], cmds),
                 "process_us_per_request": bl.per_req_us(d[2], cmds),
                 "main_user_us_per_request": bl.per_req_us(dc["info_main_user_s"], cmds),
                 "main_sys_us_per_request": bl.per_req_us(dc["info_main_sys_s"], cmds),
                 "main_spin_us_per_request": bl.per_req_us(dc["main_spin_s"], cmds),
                 "main_sleeps_per_request": round((z1 - z0) / cmds, 4) if None not in (z0, z1) and cmds else None}


def cpu_run(s, args, rate, times):
    """One open-loop run at `rate`: per-request CPU of main, I/O threads, process."""
    warmup, duration = times
    (rep, argv), cpu = cpu_window(s, lambda: bl.soloist_bench(s.port, list(args) + [
        "--rate", str(int(rate)), "--warmup", "%gs" % warmup, "-d", "%gs" % duration, "--drain", "1s"]))
    cls = rep["classes"][0]
    return dict({"rate": rate, "rps": cls["rps"], "requests": cls["requests"], "errors": cls.get("errors", 0),
                 "unsent": cls.get("unsent", 0),
                 "latency_us": {k: cls["latency_us"][k] for k in ("p50", "p99", "p99.9")}},
                **cpu, generator_cpu_s=rep.get("generator", {}).get("cpu_s"), argv=argv)


def cpu_cells(base, runs, budget):
    """Part (c): every (server, threads) setting started once, paused when
    not measured; each cell at one rate for all of them."""
    q = bl.quick()
    times = (0.3, 0.8) if q else (0.5, 2.0)
    settings = start_paused(("soloist", "valkey"), THREADS)
    try:
        cells = [(t, p, sz, CLIENTS, KEYS) for sz in bl.SIZES for t in bl.TESTS for p in bl.PIPELINES]
        cells.append(("GET", 1, BIG, BIG_CLIENTS, 4))
        loaded = None
        for test, p, size, conns, keys in cells:
            cfg = dict(base, part="c", test=test, pipeline=p, value_size=size, clients=conns, keys=keys)
            if budget.out():
                bl.emit(dict(cfg, kind="skipped", why="time budget spent"))
                continue
            if loaded != (size, keys):
                for s in settings.values():
                    with s.turn():
                        bl.sb_prefill(s, keys, size)
                loaded = (size, keys)
            args = bl.open_loop_args(test, p, size, conns, keys)
            closed, reads = bl.closed_loop_medians({name: settings[(name, 1)] for name in ("soloist", "valkey")},
                                                   args, 1 if q else 3, 0.3 if q else 0.5)
            rate = max(20, int(min(closed.values()) / 3)) if size == BIG else bl.a_third_of_slower(closed)
            bl.emit(dict(cfg, kind="rate", rate=rate, closed_rps_io_threads_1=closed, closed_rps_reads=reads,
                         why="a third of the slower io-threads 1 server's closed-loop rps (the median of its "
                             "reads, alternated)"))
            for i in range(runs):
                for (name, n), s in settings.items():
                    with s.turn():
                        r = cpu_run(s, args, rate, times)
                    emit(dict(cfg, kind="cpu", server=name, server_is=s.really, io_threads=n,
                                 forced=n > 1, run=i + 1, **r))
                    bl.log("c %s %dB P=%d %s t%d: %.0f rps main %.3f io %.3f us/req"
                           % (test, size, p, name, n, r["rps"], r["main_us_per_request"] or -1,
                              r["io_us_per_request"] or -1))
        if not budget.out():
            zrange_cell(settings, base, runs)
        if "d" in os.environ.get("BENCH_PARTS", "abcd"):
            scaling(settings, base, runs, times[1])
            handoff_alone(base)
    finally:
        for s in settings.values():
            s.stop()


def handoff_alone(base):
    """Part (d), last: a GET's hand-offs where no thread sleeps,
    bench/idle_line.c's round trip (its row F4.65) run here so that the
    model's third estimate and its other inputs come from one run. Its
    servers are paused; it takes the two cores for about 7 s (2 s with
    QUICK=1). One kind=handoff line: main's CPU a request through the pool
    less the same steps on main alone, the median of its alternated runs."""
    binary = os.environ.get("IDLE_LINE_BIN", os.path.join(bl.ROOT, "build", "bench", "idle_line"))
    if not os.access(binary, os.X_OK):
        emit(dict(base, kind="unavailable", what="handoff", why="%s not built (make bench-build)" % binary))
        return
    argv = [binary, "--part", "roundtrip"] + (["--quick"] if base.get("quick") else [])
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    got = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    runs = {v: [ln["ns"] for ln in got if ln.get("kind") == "run" and ln.get("variant") == v]
            for v in ("pool", "inline")}
    row_ = next((ln for ln in got if ln.get("id") == "F4.65"), None)
    if out.returncode != 0 or not runs["pool"] or len(runs["pool"]) != len(runs["inline"]) or row_ is None:
        emit(dict(base, kind="unavailable", what="handoff", why="%s exited %d" % (binary, out.returncode)))
        return
    over = [p - a for p, a in zip(runs["pool"], runs["inline"])]
    emit(dict(base, kind="handoff", part="d", tool=" ".join(argv[1:]), ns_per_request=round(bl.median(over), 1),
              runs_ns=[round(x, 1) for x in over], pool_ns=runs["pool"], inline_ns=runs["inline"],
              figure=row_["figure"]))
    bl.log("d hand-off alone: %.1f ns a request" % bl.median(over))


ZSET_MEMBERS = 100


def zrange_cell(settings, base, runs):
    """Part (c), one more cell: ZRANGE of a whole 100-member sorted set.
    soloist-bench sends only GET and SET, so redis-benchmark sends it, in
    closed loop (it has no offered rate): every setting at its own
    saturated rate, the same command and clients for all."""
    n = 8000 if bl.quick() else 30000
    words = ["ZRANGE", "z", "0", str(ZSET_MEMBERS - 1)]
    cfg = dict(base, part="c", test="ZRANGE", pipeline=1, value_size=ZSET_MEMBERS, clients=CLIENTS, keys=1,
               loop="closed", tool="redis-benchmark")
    for s in settings.values():
        with s.turn():
            s.command("DEL", "z")
            s.command("ZADD", "z", *[w for i in range(ZSET_MEMBERS) for w in (str(i), "m:%d" % i)])
    for i in range(runs):
        for (name, n_threads), s in settings.items():
            with s.turn():
                r, cpu = cpu_window(s, lambda: bl.redis_benchmark_cmd(s, words, CLIENTS, n, 1))
            emit(dict(cfg, kind="cpu", server=name, server_is=s.really, io_threads=n_threads, forced=n_threads > 1,
                      run=i + 1, rate=r["rps"], rps=r["rps"], requests=n, **cpu,
                      client_cpu_s=r["client_cpu_s"], argv=r["argv"]))
            bl.log("c ZRANGE %d P=1 %s t%d: %.0f rps main %.3f us/req (closed loop)"
                   % (ZSET_MEMBERS, name, n_threads, r["rps"], cpu["main_us_per_request"] or -1))


# ------------------------------------------------------------------ rows

def findings(base):
    """The rows, computed from this run's lines alone."""
    cmd = "make findings BENCH=beside_valkey" + (" QUICK=1" if base["quick"] else "")
    vk = base.get("valkey_version") or "valkey-server"

    def row(rid, claim, figure, **cfg):
        bl.emit({"finding": True, "id": rid, "claim": claim, "figure": figure, "command": cmd,
                 "run_id": base.get("run_id") or bl.run_id(),
                 "config": dict({"peer": "Valkey built from source (%s)" % vk, "quick": base["quick"],
                                 "placement": base.get("placement_note")}, **cfg)})

    cells = [ln for ln in SEEN if ln.get("kind") == "cell"]
    deep = []
    for i, c in enumerate(ln for ln in cells if ln["part"] == "a"):
        s, v, r = (c[k]["rps_runs"] for k in ORDER)
        deep += [c["ratio_valkey"]] if c["pipeline"] == 16 else []
        row("F0.%d" % (60 + i), "%s %d B, P=%d, 50 clients, io-threads 1: soloist / Valkey and / redis-server 7.0"
            % (c["test"], c["value_size"], c["pipeline"]),
            "soloist %.0f rps, Valkey %.0f, redis-server %.0f → **%.2f×** Valkey (%s), **%.2f×** redis-server "
            "(%s); runs soloist %s, Valkey %s, redis-server %s; redis-benchmark's CPU %.2f / %.2f / %.2f s a run"
            % (c["soloist"]["rps"], c["valkey"]["rps"], c["redis"]["rps"], c["ratio_valkey"],
               verdict(s, v, ("soloist", "Valkey")), c["ratio_redis"], verdict(s, r, ("soloist", "redis-server")),
               lo_hi(s, "%.0f"), lo_hi(v, "%.0f"), lo_hi(r, "%.0f"), c["soloist"]["client_cpu_s"],
               c["valkey"]["client_cpu_s"], c["redis"]["client_cpu_s"]),
            test=c["test"], value_size=c["value_size"], pipeline=c["pipeline"], runs=c["runs"], keys=KEYS,
            tool="redis-benchmark, servers alternated")
    if deep:
        row("F0.68", "target: at depth 16, soloist ≥ 1.2× Valkey in every cell, io-threads 1",
            "%s: %d of %d cells ≥ 1.2× (lowest %.2f×)%s" % ("met" if min(deep) >= 1.2 else "not met",
                                                            sum(1 for x in deep if x >= 1.2), len(deep), min(deep),
                                                            server_bound()))
    big = [ln for ln in cells if ln["part"] == "b"]
    for i, c in enumerate(big):
        p99 = {k: c[k]["p99_runs"] for k in ORDER}
        row("F7.%d" % (50 + i), "%s of one 1 MB value, 4 clients, io-threads 1: soloist / Valkey and / "
            "redis-server 7.0, and each one's latency" % c["test"],
            "**%.2f×** Valkey, **%.2f×** redis-server (%s; %s); p50 %.2f / %.2f / %.2f ms, p99 %.2f / %.2f / "
            "%.2f ms (soloist / Valkey / redis-server; p99 runs %s, %s, %s)%s"
            % (c["ratio_valkey"], c["ratio_redis"],
               verdict(c["soloist"]["rps_runs"], c["valkey"]["rps_runs"], ("soloist", "Valkey")),
               verdict(c["soloist"]["rps_runs"], c["redis"]["rps_runs"], ("soloist", "redis-server")),
               c["soloist"]["p50_latency_ms"], c["valkey"]["p50_latency_ms"], c["redis"]["p50_latency_ms"],
               c["soloist"]["p99_latency_ms"], c["valkey"]["p99_latency_ms"], c["redis"]["p99_latency_ms"],
               lo_hi(p99["soloist"], "%.2f"), lo_hi(p99["valkey"], "%.2f"), lo_hi(p99["redis"], "%.2f"),
               generator_busy("b", c["test"]) + generator_calls_text(c["test"])),
            test=c["test"], value_size=BIG, clients=BIG_CLIENTS, runs=c["runs"], tool="redis-benchmark")
    g = next((c for c in big if c["test"] == "GET"), None)
    if g:
        ok = (g["ratio_valkey"] >= 1.0 and g["ratio_redis"] >= 1.0 and
              g["soloist"]["p99_latency_ms"] <= min(g["valkey"]["p99_latency_ms"], g["redis"]["p99_latency_ms"]))
        why = ""
        if generator_bound("b", "GET"):
            why = ("; the rates are the generator's: one redis-benchmark thread, busy for 85 % or more of every "
                   "run, so each server's rate is about one over what a request cost that thread in its runs. A run "
                   "whose generator has threads on cores of their own (bench/cores_matrix.sh) is what can measure the "
                   "servers")
        row("F7.53", "target: 1 MB GET, 4 clients: soloist ≥ 1.0× Valkey and redis-server 7.0, its p99 no worse",
            "%s (%.2f× and %.2f×; p99 %.2f ms against %.2f and %.2f%s)%s"
            % ("met" if ok else "not met", g["ratio_valkey"], g["ratio_redis"], g["soloist"]["p99_latency_ms"],
               g["valkey"]["p99_latency_ms"], g["redis"]["p99_latency_ms"], generator_busy("b", "GET"), why))
    cpu_rows(row)
    model_rows(row)
    scale_rows(row)


# Valkey's blog (2024-07-07, "Unlock one million RPS"): Valkey 8.0 with 8
# I/O threads (io-threads 9: main is counted) and batch prefetch served
# 1.19M requests/s where Valkey 7.2 with its older I/O threads served 360K,
# SET of 512 B values, 650 clients, c7g.16xlarge (64 cores). One release
# against another, not one server at io-threads 9 against 1: the nearest
# published figure to the model's X(9)/X(1), not the same quantity.
BLOG = {"before": 360000, "after": 1190000, "threads_alone": 780000, "io_threads": 9}


def model_rows(row):
    """F4.100-F4.103: bench/pipeline_model.py fed with this run's costs,
    at the ceiling (part (d)) where the run measured it there, with the
    demands at a third of capacity (part (c)) beside them."""
    lines = [ln for ln in SEEN if ln.get("kind") in ("cpu", "scale")]
    got = pm.model(lines)
    if "soloist" not in got or "valkey" not in got:
        return
    s, v = got["soloist"], got["valkey"]
    third = pm.model(lines, kind="cpu") if s["at"] == "scale" else {}

    def inp(name, r):
        return ("%s: m1 %.2f µs, kernel share %.0f %%, hand-offs %.2f µs → main with threads %.2f µs, a worker "
                "%.2f µs" % (name, r["m1"], 100 * r["f"], r["h"], r["mN"], r["w"]))
    sleeps = "; soloist's main at io-threads 4: %.2f µs of system time a request" % s["sys4"]
    if s.get("sleeps") is not None:
        sleeps += ", %.2f sleeps a request" % s["sleeps"]
    if s.get("sleeps1") is not None:
        sleeps += "; at io-threads 1, %.3f sleeps a request" % s["sleeps1"]
    if "soloist" in third and "valkey" in third:
        sleeps += ("; at a third of capacity (part (c)) the same inputs were: soloist m1 %.2f µs, Valkey m1 %.2f µs, "
                   "hand-offs %.2f µs" % (third["soloist"]["m1"], third["valkey"]["m1"], third["soloist"]["h"]))
    row("F4.100", "the pipeline model's inputs, %s, the demands measured %s (m1: main's CPU per request at io-threads "
        "1; its kernel share; the hand-offs' cost, soloist's measured at io-threads 4 and given to Valkey; beside "
        "them, main's system time at io-threads 4, where it reads and writes no socket, and how often it blocked)"
        % (s["cell"], pm.WHERE[s["at"]]), inp("soloist", s) + "; " + inp("Valkey", v) + sleeps,
        model="bench/pipeline_model.py")
    want = BLOG["after"] / BLOG["before"]
    alone = BLOG["threads_alone"] / BLOG["before"]
    n = BLOG["io_threads"]
    pred = v["curve"][n - 1]
    floor = pm.bound(pm.with_handoffs(v, 0.0), n)
    beside = ""
    alone_h = next((ln for ln in SEEN if ln.get("kind") == "handoff"), None)
    if alone_h is not None:
        h = alone_h["ns_per_request"] / 1000
        est = pm.bound(pm.with_handoffs(v, h), n)
        beside += ("; %.2f× (%+.0f %%) with the hand-offs' own work where no thread sleeps, %.2f µs a request "
                   "(bench/idle_line.c's round trip in this run: a GET's, the queues and the cache lines that move; "
                   "io_offload.c's bookkeeping and the old value a SET hands a worker to free not in it, so a lower "
                   "bound on the hand-offs and an upper estimate of the ratio)" % (est, 100 * (est / want - 1), h))
    if "valkey" in third:
        beside += "; with the demands at a third of capacity, %.2f× (floor %.2f×)" % (
            third["valkey"]["curve"][n - 1], pm.bound(pm.with_handoffs(third["valkey"], 0.0), n))
    row("F4.101", "target: the model, fed Valkey's costs measured here, reproduces the blog's ratio at 8 I/O threads "
        "(Valkey 8.0's 1.19M over Valkey 7.2's 360K with its older threads = %.1f×, SET 512 B, 650 clients, "
        "64 cores) within 25 %%" % want,
        "%s: predicted %.2f× (%+.0f %%) with the demands %s and the hand-offs' cost measured there (%.2f µs a "
        "request, %s main's system time at io-threads 4, %.2f µs: wake-ups, sleeps and its own polls); %.2f× at "
        "their floor, where no thread sleeps and a hand-off costs main nothing (an upper bound)%s; the blog's own "
        "split puts %.2f× on the threads alone (780K before batch prefetch, which the model leaves out): the "
        "prediction is %+.0f %% from that"
        % ("met" if abs(pred / want - 1) <= 0.25 else "not met", pred, 100 * (pred / want - 1), pm.WHERE[v["at"]],
           v["h"], "all of it within" if v["h"] <= s["sys4"] else "more than", s["sys4"], floor, beside, alone,
           100 * (pred / alone - 1)),
        model="bench/pipeline_model.py")
    row("F4.102", "the model's throughput against io-threads with cores to spare, X(N)/X(1) for N = 1..16, %s"
        % s["cell"], "soloist %s; Valkey %s" % (" ".join("%.2f" % x for x in s["curve"]),
                                               " ".join("%.2f" % x for x in v["curve"])),
        model="bench/pipeline_model.py")
    two = [ln for ln in lines if ln["kind"] == s["at"] and ln["server"] == "soloist" and ln["io_threads"] == 2
           and (ln["test"], ln["value_size"], ln["pipeline"]) == pm.BLOG_CELL]
    work = bl.median([ln["main_us_per_request"] - ln["main_spin_us_per_request"] for ln in two
                      if ln.get("main_spin_us_per_request") is not None])
    if work is not None:
        row("F4.103", "the model checked where it was not fitted: soloist's main work per request at io-threads 2 "
            "(CPU less the idle spin's wall time), predicted against measured, %s, %s" % (s["cell"],
                                                                                      pm.WHERE[s["at"]]),
            "predicted %.2f µs, measured %.2f µs (%.2f×)" % (s["mN"], work, work / s["mN"]),
            model="bench/pipeline_model.py")


def scale_rows(row):
    """F4.104-F4.105: part (d)'s measured X(N)/X(1) beside the model's."""
    sc = [ln for ln in SEEN if ln.get("kind") == "scale"]
    got = pm.model([ln for ln in SEEN if ln.get("kind") in ("cpu", "scale")])
    for i, name in enumerate(("soloist", "valkey")):
        if name not in got:
            continue
        ratios = pm.measured(sc, name)
        if not ratios:
            continue
        base1 = bl.median([ln["rps"] for ln in sc if ln["server"] == name and ln["io_threads"] == 1])
        cores, gen = pm.machine(sc, name)
        pts = ["t%d measured %.2f× (runs %s) against %.2f× predicted" % (
            n, bl.median(r), lo_hi(r, "%.2f"), pm.bound(got[name], n, cores, gen)) for n, r in ratios.items()]
        row("F4.%d" % (104 + i), "%s's throughput against io-threads, measured in closed loop (%s, %d connections) "
            "beside the model's prediction for this machine (%s)" % (
                NAMES[name], got[name]["cell"], sc[0]["clients"],
                "the generator on its own cores" if cores is None else "the generator sharing the %d cores, %.1f µs "
                "of its CPU a request" % (cores, gen)),
            "; ".join(pts) + "; io-threads 1 served %.0f requests/s" % base1, model="bench/pipeline_model.py")


def server_bound():
    """What the servers alone allow at depth 16, where redis-benchmark on
    the shared cores is the bound: Valkey's CPU per request at io-threads 1
    (part (c), the whole server on main) over soloist's, per cell."""
    cpu = [ln for ln in SEEN if ln.get("kind") == "cpu" and ln["io_threads"] == 1 and ln["pipeline"] == 16
           and ln.get("main_us_per_request") is not None]
    cells = []
    for test in bl.TESTS:
        for size in bl.SIZES:
            side = {name: bl.median([ln["main_us_per_request"] for ln in cpu if ln["server"] == name
                                     and (ln["test"], ln["value_size"]) == (test, size)])
                    for name in ("soloist", "valkey")}
            if side.get("soloist") and side.get("valkey"):
                cells.append("%s %s %.2f×" % (test, size_name(size), side["valkey"] / side["soloist"]))
    if not cells:
        return ""
    return ("; the servers' own bound, Valkey's CPU per request over soloist's at io-threads 1 and depth 16 "
            "(F4.91-F4.97): " + ", ".join(cells))


def cpu_rows(row):
    """F4.90-: main's CPU per request, soloist beside Valkey, per cell."""
    cpu = [ln for ln in SEEN if ln.get("kind") == "cpu"]
    keys = []
    for ln in cpu:
        k = (ln["test"], ln["value_size"], ln["pipeline"])
        if k not in keys:
            keys.append(k)
    worse, alone, noise = [], [], []  # alone: (soloist / Valkey, soloist lower in every run) per cell at io-threads 1;
    # noise: per cell above Valkey, whether the two servers' rounds overlap
    for i, k in enumerate(keys):
        parts, io = [], []
        for n in THREADS:
            side = {name: [ln["main_us_per_request"] for ln in cpu if (ln["test"], ln["value_size"], ln["pipeline"])
                           == k and ln["io_threads"] == n and ln["server"] == name
                           and ln["main_us_per_request"] is not None] for name in ("soloist", "valkey")}
            if not side["soloist"] or not side["valkey"]:
                continue
            ms, mv = bl.median(side["soloist"]), bl.median(side["valkey"])
            sep = verdict(side["soloist"], side["valkey"], ("soloist", "Valkey"), lower=True)
            if n == 1:
                alone.append((ms / mv, max(side["soloist"]) < min(side["valkey"])))
            if ms > mv:
                # Whether Valkey's main was lower in every run, or only at the
                # median with the runs overlapping: the second is the
                # machine's noise, which more runs or idle cores would settle.
                noise.append(sep == "run ranges overlap")
                worse.append("%s %s P=%d t%d (%s%s)" % (
                    k[0], "%d members" % k[1] if k[0] == "ZRANGE" else size_name(k[1]), k[2], n, sep,
                    split_of(cpu, k, n)))
            served = {name: bl.median([ln["rps"] / ln["rate"] for ln in cpu
                                       if (ln["test"], ln["value_size"], ln["pipeline"]) == k
                                       and ln["io_threads"] == n and ln["server"] == name]) for name in
                      ("soloist", "valkey")}
            short = ["%s served %.0f %% of the offered rate" % (NAMES[name], 100 * x)
                     for name, x in served.items() if x < 0.95 and k[0] != "ZRANGE"]
            parts.append("t%d %.2f vs %.2f µs (%.2f×; %s%s)" % (n, ms, mv, ms / mv, sep,
                                                                "; " + ", ".join(short) if short else ""))
            if n > 1:
                w = {name: bl.median([ln["io_us_per_request"] for ln in cpu
                                      if (ln["test"], ln["value_size"], ln["pipeline"]) == k
                                      and ln["io_threads"] == n and ln["server"] == name]) for name in
                     ("soloist", "valkey")}
                io.append("t%d %.2f vs %.2f" % (n, w["soloist"], w["valkey"]))
        if k[0] == "ZRANGE":
            # redis-benchmark's closed loop: each setting at its own rate, given per setting.
            rates = ["%s t%d %.0f" % (NAMES[name], n, bl.median([ln["rps"] for ln in cpu if ln["test"] == "ZRANGE"
                                                                 and ln["server"] == name and ln["io_threads"] == n]))
                     for name in ("soloist", "valkey") for n in THREADS
                     if any(ln["test"] == "ZRANGE" and ln["server"] == name and ln["io_threads"] == n for ln in cpu)]
            row("F4.106", "main thread's CPU per request, ZRANGE of a whole %d-member sorted set, P=1, in closed "
                "loop: soloist vs Valkey at io-threads 1, 2 and 4 (threads forced on)" % k[1],
                "; ".join(parts) + "; the I/O threads' CPU per request (spin included) " + ", ".join(io)
                + " µs; requests/s " + ", ".join(rates),
                test="ZRANGE z 0 %d" % (k[1] - 1), members=k[1], pipeline=k[2], clock="schedstat of each thread",
                tool="redis-benchmark, 50 clients, closed loop (soloist-bench sends only GET and SET, and "
                     "redis-benchmark has no offered rate: each setting runs at its own rate)")
            continue
        rate = next(ln["rate"] for ln in cpu if (ln["test"], ln["value_size"], ln["pipeline"]) == k)
        row("F4.%d" % (90 + i), "main thread's CPU per request, %s %s P=%d at %d requests/s offered: soloist vs "
            "Valkey at io-threads 1, 2 and 4 (threads forced on)" % (k[0], size_name(k[1]), k[2], rate),
            "; ".join(parts) + "; the I/O threads' CPU per request (spin included) " + ", ".join(io)
            + " µs; offered %d requests/s" % rate,
            test=k[0], value_size=k[1], pipeline=k[2], rate=rate, clock="schedstat of each thread",
            tool="soloist-bench open loop, Poisson arrivals")
    if keys:
        t1 = ""
        if alone:
            t1 = ("; at io-threads 1, where main does everything: median lower in %d of %d cells (%.2f–%.2f×), "
                  "lower in every run in %d of them" % (sum(1 for r, _ in alone if r < 1), len(alone),
                                                        min(r for r, _ in alone), max(r for r, _ in alone),
                                                        sum(1 for r, apart in alone if r < 1 and apart)))
        # What would settle a miss whose rounds overlap: the row says so,
        # as the target allows ("or the row says why not").
        settle = ("; the rounds overlap in %s: ordering them would take more rounds, on cores the load generator does not "
                  "share" % ("that cell" if len(noise) == 1 else "every such cell")
                  if noise and all(noise) else "")
        row("F4.99", "target: soloist's main thread uses no more CPU per request than Valkey's, every cell, "
            "io-threads 1, 2 and 4", ("met" if not worse else "not met: above Valkey in " + ", ".join(worse))
            + settle + t1)


def cell_runs(part, test):
    """The kind=run lines of one cell of part (a) or (b), every server's."""
    return [ln for ln in SEEN if ln.get("kind") == "run" and ln.get("part") == part and ln.get("test") == test]


def generator_busy(part, test):
    """How much of each run redis-benchmark spent on CPU, per server
    (medians of its CPU over the run's wall time), and its CPU per request
    (medians; the request count is the run's -n): near 100 %, the client
    is the bound, and each server's rate is the inverse of what a request
    cost the client in that server's rounds."""
    runs = cell_runs(part, test)
    busy, per = [], []
    for name in ORDER:
        got = [ln for ln in runs
               if ln.get("server") == name and ln.get("client_cpu_s") is not None and ln.get("wall_s")]
        x = bl.median([ln["client_cpu_s"] / ln["wall_s"] for ln in got])
        if x is None:
            return ""
        busy.append("%.0f" % (100 * x))
        n = [int(m.group(1)) for m in (re.search(r" -n (\d+)", ln.get("argv", "")) for ln in got) if m]
        if len(n) == len(got):
            per.append("%.2f" % bl.median([1000 * ln["client_cpu_s"] / k for ln, k in zip(got, n)]))
    threads = {ln.get("generator_threads", 1) for ln in runs}
    on = " on %s threads" % "/".join(str(t) for t in sorted(threads)) if threads != {1} else ""
    whose = ("soloist's rounds %s ms", "Valkey's %s", "redis-server's %s")
    return "; redis-benchmark's CPU %s %% of each run's wall time%s%s" % (
        " / ".join(busy), on,
        ", its CPU a request in %s" % ", in ".join(w % x for w, x in zip(whose, per)) if len(per) == len(ORDER) else "")


def generator_calls_text(test):
    """The counted round's system calls a request, per server, for the
    kinds redis-benchmark makes at least every other request; "" without
    them."""
    counted = {ln["server"]: ln for ln in SEEN if ln.get("kind") == "client_calls" and ln.get("test") == test}
    if set(counted) != set(ORDER):
        return ""
    got = {n: ln["calls"] for n, ln in counted.items()}
    kinds = [k for k in CLIENT_CALLS if all(got[n].get(k, 0) >= 0.5 for n in ORDER)]
    if not kinds:
        return ""
    cpu = {n: ln.get("cpu_ms_per_request") for n, ln in counted.items()}
    that = ""
    if all(cpu.get(n) for n in ORDER):  # labelled apart from the timed rounds' figures, for a reading
        that = "; that round's CPU a request against soloist %.2f ms, against Valkey %.2f, against " \
               "redis-server %.2f" % tuple(cpu[n] for n in ORDER)
    return "; its system calls a request, a round apart under perf: %s%s" % (", ".join(
        "%s %s" % (k, " / ".join("%.1f" % got[n][k] for n in ORDER)) for k in kinds), that)


def generator_bound(part, test):
    """Whether one redis-benchmark thread was busy for at least 85 % of
    every run's wall time in the cell, against every server."""
    got = cell_runs(part, test)
    return bool(got) and all(ln.get("generator_threads", 1) == 1 and ln.get("client_cpu_s") is not None
                             and ln.get("wall_s") and ln["client_cpu_s"] / ln["wall_s"] >= 0.85 for ln in got)


def split_of(cpu, k, n):
    """Where main's time went in one cell and setting, both servers: user
    and system µs a request (medians) and, where recorded, how often main
    blocked a request. Says why main is above Valkey: work (user time) or
    waiting (a sleep and its wake-up are system time)."""
    out, rounds = [], {}
    for name in ("soloist", "valkey"):
        got = [ln for ln in cpu if (ln["test"], ln["value_size"], ln["pipeline"]) == k and ln["io_threads"] == n
               and ln["server"] == name and ln.get("main_user_us_per_request") is not None
               and ln.get("main_sys_us_per_request") is not None]
        if not got:
            return ""
        rounds[name] = got
        user = bl.median([ln["main_user_us_per_request"] for ln in got])
        sys_ = bl.median([ln["main_sys_us_per_request"] for ln in got])
        sleeps = [ln.get("main_sleeps_per_request") for ln in got if ln.get("main_sleeps_per_request") is not None]
        out.append("%s user %.2f + system %.2f µs%s" % (NAMES[name], user, sys_,
                                                          ", %.2f sleeps" % bl.median(sleeps) if sleeps else ""))
    # The servers' rounds alternate, so the i-th of each ran side by side:
    # per pair, whose user time (its own code) and whose system time (the
    # kernel's share, its system calls and sleeps) was lower.
    pairs = list(zip(rounds["soloist"], rounds["valkey"]))
    lower = ["its %s time in %d of %d" % (what, sum(1 for s, v in pairs if s[key] < v[key]), len(pairs))
             for what, key in (("user", "main_user_us_per_request"), ("system", "main_sys_us_per_request"))]
    return "; main's time a request (medians of each part): %s; soloist's lower, round beside round: %s" % (
        " against ".join(out), ", ".join(lower))


def size_name(n):
    return "1 MB" if n == BIG else "%d B" % n


def scaling(settings, base, runs, seconds):
    """Part (d): closed-loop throughput of every setting in the model's cell
    (SET 512 B, depth 1), the generator keeping every connection busy:
    the measured points the model's curve is drawn beside, and each
    thread's CPU over them as part (c) reads it, the model's demands at
    the ceiling (main at io-threads 1 is as busy as the generator keeps
    it: it barely sleeps)."""
    test, size, p = pm.BLOG_CELL
    conns = int(os.environ.get("BENCH_D_CONNS", str(CLIENTS)))
    threads = os.environ.get("BENCH_CLIENT_THREADS", "1")
    cfg = dict(base, part="d", test=test, value_size=size, pipeline=p, clients=conns, keys=KEYS,
               generator_threads=int(threads))
    for s in settings.values():
        with s.turn():
            bl.sb_prefill(s, KEYS, size)
    args = bl.open_loop_args(test, p, size, conns, KEYS) + ["-t", threads, "-d", "%gs" % seconds]
    for i in range(runs):
        for (name, n), s in settings.items():
            with s.turn():
                (rep, argv), cpu = cpu_window(s, lambda: bl.soloist_bench(s.port, args))
            cls = rep["classes"][0]
            gen = rep.get("generator", {}).get("cpu_s")
            emit(dict(cfg, kind="scale", server=name, server_is=s.really, io_threads=n, run=i + 1,
                      rps=cls["rps"], requests=cls["requests"], errors=cls.get("errors", 0),
                      generator_us_per_request=bl.per_req_us(gen, cls["requests"]), argv=argv, **cpu))
            bl.log("d %s t%d: %.0f rps main %.3f us/req" % (name, n, cls["rps"], cpu["main_us_per_request"] or -1))


def main():
    bl.install_cleanup()
    q = bl.quick()
    runs = max(2, int(os.environ.get("BENCH_RUNS", "2" if q else "3")))
    budget = bl.Budget(float(os.environ.get("BENCH_BUDGET_S", "150" if q else "900")))
    base = {"bench": "beside_valkey", "cores": os.cpu_count(), "quick": q}
    base.update(bl.placement())
    if bl.valkey_side(base) is None:
        return
    if not os.access(bl.sb_binary(), os.X_OK):
        bl.emit(dict(base, kind="unavailable", why="%s not built (make)" % bl.sb_binary()))
        return
    t0 = time.monotonic()
    parts = os.environ.get("BENCH_PARTS", "abcd")
    try:
        srv = {name: start(name, 1) for name in ORDER} if "a" in parts or "b" in parts else {}
        for s in srv.values():
            s.pause()
        if "a" in parts:
            throughput(srv, base, runs, budget)
        if "b" in parts:
            big_values(srv, base, runs)
    finally:
        bl.stop_all()
    if "c" in parts or "d" in parts:
        cpu_cells(base, runs, budget)
    findings(base)
    bl.emit(dict(base, kind="done", elapsed_s=round(time.monotonic() - t0, 1)))


def rows_again(path):
    """--rows FILE: the rows of a stored run computed again from its run
    lines by this code (the raw lines untouched, the old rows replaced),
    for a row whose wording changed after the run."""
    def make_rows(raw):
        SEEN[:] = raw
        findings(next(ln for ln in raw if ln.get("bench") == "beside_valkey"))  # the run's own id and conditions
    bl.rows_again(path, make_rows)


if __name__ == "__main__":
    sys.exit(bl.run_main(main, rows_again))
