#!/usr/bin/env python3
"""idle_spin.py — step 4: how long an idle thread should spin, measured.

Step 4 benchmark. With the threads on and results owed, soloist's main
turns its loop without waiting, and an idle worker polls its inbox,
each for `io-threads-idle-spin-us` (20 µs by default); then each
sleeps, main in epoll_wait or (a POLL job out) on the pool's futex word,
a worker on a futex of its own (src/io_offload.c main-sleep, src/io_threads.c
io-thread-main). Valkey's main does not sleep while its POLL job is out
(its custom poll returns at once until the job is done), and its
workers spin for as long as they are active: valkey src/io_threads.c at
the 2024 tree, getIOThreadPollResults and IOThreadMain. A short spin pays a sleep
and a wake-up (kernel time, on main and on whoever wakes it) whenever
the next request comes later than the spin lasts; a long one pays the
spin itself, and on shared cores takes the CPU from the thread it waits
for.

The length is swept at one offered rate, so every setting sees the same
load and the figures compare CPU per request, not what the load
generator managed: soloist at io-threads 2 and 4 forced on
(--io-threads-always-active yes), the length set by CONFIG SET between
runs, the lengths alternated and the order turned each round; Valkey at
the same thread count and rate beside it (VALKEY_SERVER; forced on with
--events-per-io-thread 0, as bench/beside_valkey.py starts it; without
it the rows leave Valkey out and say so). The cell is the one
bench/beside_valkey.py's target F4.99 missed in its tenth stored run
(soloist's main above Valkey's, sleeping twice as often): GET of 3-byte values at
depth 1, 50
connections, 100,000 keys, soloist-bench in open loop at a third of the
slower io-threads-1 server's closed-loop rate (bench/beside_valkey.py
part (c)'s rule: each server's rate the median of three half-second
reads, alternated). Per run, as part (c) reads them: main's CPU per
request (its scheduler run time), the process's, how often main blocked,
and the latency percentiles. A run in which the generator had under 95 %
of the offered requests answered is left out of the medians (the rows
say how many): Valkey at io-threads 4 on two cores, whose spinning
threads leave the generator too little CPU to send.

Prints JSON lines: kind=rate, kind=run, and finding rows F4.107-F4.110
(io-threads 2 and 4, two each: main's CPU; the process's, the workers'
and p99; other IDLE_THREADS are measured, with no rows).
`idle_spin.py --rows FILE` computes a stored run's rows again from its
run lines. Knobs:
QUICK=1 (under a minute; full about 2), BENCH_RUNS, IDLE_SPINS (0,5,20,
50,200), IDLE_THREADS (2,4), IDLE_RATE (the offered rate, instead of a
third of the closed-loop one), VALKEY_SERVER, SOLOIST_BIN.

Valkey anchors: valkey src/io_threads.c at the 2024 tree
(getIOThreadPollResults, IOThreadMain), measured, not mirrored.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
import beside_valkey as bv  # noqa: E402  (part (c)'s servers and CPU window)

sys.path.insert(0, os.path.join(bl.ROOT, "tools"))
from findings_core import lo_hi, verdict  # noqa: E402

SPINS = [int(x) for x in os.environ.get("IDLE_SPINS", "0,5,20,50,200").split(",")]
THREADS = [int(x) for x in os.environ.get("IDLE_THREADS", "2,4").split(",")]
TEST, PIPELINE, SIZE = "GET", 1, 3
ROWS = {2: 107, 4: 109}  # io-threads -> its first row


def setting_name(spin):
    return "valkey" if spin is None else "spin %d" % spin


def measure(threads, runs, times, valkey, rate):
    """Every setting of one thread count, alternated: -> run lines."""
    sol = bv.start("soloist", threads)
    sol.pause()
    vk = None
    if valkey:
        vk = bv.start("valkey", threads)
        vk.pause()
    try:
        for s in filter(None, (sol, vk)):
            with s.turn():
                bl.sb_prefill(s, bv.KEYS, SIZE)
        with sol.turn():
            default = int(sol.config_get("io-threads-idle-spin-us"))
        settings = list(SPINS) + ([None] if vk else [])
        lines = []
        for r in range(runs):
            for spin in bl.turned(settings, r):
                s = vk if spin is None else sol
                with s.turn():
                    if spin is not None:
                        s.command(b"CONFIG", b"SET", b"io-threads-idle-spin-us", str(spin).encode())
                    got = bv.cpu_run(s, bl.open_loop_args(TEST, PIPELINE, SIZE, bv.CLIENTS, bv.KEYS),
                                     rate, times)
                line = dict(kind="run", bench="idle_spin", io_threads=threads, setting=setting_name(spin),
                            spin_us=spin, default_spin_us=default, server=s.really, run=r + 1, **got)
                bl.emit(line)
                bl.log("t%d %s: main %.2f proc %.2f us/req, sleeps %.2f, p99 %.0f us"
                       % (threads, line["setting"], got["main_us_per_request"] or -1,
                          got["process_us_per_request"] or -1, got["main_sleeps_per_request"] or -1,
                          got["latency_us"]["p99"]))
                lines.append(line)
        return lines
    finally:
        for s in filter(None, (sol, vk)):
            s.stop()


def offered_rate(valkey, seconds, bench="idle_spin", env="IDLE_RATE"):
    """A third of the slower io-threads-1 server's closed-loop rate in this
    file's cell, or the rate the environment variable `env` gives; the
    kind=rate line names `bench` (bench/main_syscalls.py shares the rule)."""
    if os.environ.get(env):
        rate = int(os.environ[env])
        bl.emit(dict(kind="rate", bench=bench, rate=rate, quick=bl.quick(), why=env))
        return rate
    t1 = {}
    try:
        for name in ("soloist",) + (("valkey",) if valkey else ()):
            t1[name] = bv.start(name, 1)
            bl.sb_prefill(t1[name], bv.KEYS, SIZE)
            t1[name].pause()
        closed, reads = bl.closed_loop_medians(t1, bl.open_loop_args(TEST, PIPELINE, SIZE, bv.CLIENTS, bv.KEYS),
                                               1 if bl.quick() else 3, seconds)
    finally:
        for s in t1.values():
            s.stop()
    rate = bl.a_third_of_slower(closed)
    bl.emit(dict(kind="rate", bench=bench, rate=rate, quick=bl.quick(), closed_rps_io_threads_1=closed,
                 closed_rps_reads=reads, why="a third of the slower io-threads 1 server's closed-loop rps (the "
                                             "median of its reads, alternated)"))
    return rate


SENT_SHARE = 0.95


def answered_share(ln):
    """The share of the offered requests answered in run line ln
    (soloist-bench counts requests answered and requests it never sent)."""
    sent, unsent = ln.get("requests") or 0, ln.get("unsent") or 0
    return sent / (sent + unsent) if sent + unsent else 0.0


def offered(ln):
    """Whether the server was offered the load in run line ln: at least
    SENT_SHARE of the offered requests answered. A server whose spinning
    threads take the generator's core is not offered the load, and its
    CPU per request is then the spin's, not the work's."""
    return (ln.get("requests") or 0) > 0 and answered_share(ln) >= SENT_SHARE


def runs_of(lines, threads, setting, all_runs=False):
    return [ln for ln in lines if ln.get("kind") == "run" and ln["io_threads"] == threads
            and ln["setting"] == setting and (all_runs or offered(ln))]


def values(lines, threads, setting, field):
    return [ln[field] for ln in runs_of(lines, threads, setting) if ln.get(field) is not None]


def med(lines, threads, setting, field):
    return bl.median(values(lines, threads, setting, field))


def p99(lines, threads, setting):
    return bl.median([ln["latency_us"]["p99"] for ln in runs_of(lines, threads, setting)])


def findings(lines, quick, runs, rate):
    """Rows F4.107-F4.110 from the run lines alone (so a stored run's rows
    come out the same whatever this shell's knobs): F4.107-F4.108 for
    io-threads 2, F4.109-F4.110 for io-threads 4; other thread counts
    are measured but get no rows."""
    cmd = "make findings BENCH=idle_spin" + (" QUICK=1" if quick else "")
    ran = [ln for ln in lines if ln.get("kind") == "run"]
    default = next((ln["default_spin_us"] for ln in ran), None)
    for t, rid in sorted(ROWS.items()):
        spins = sorted({ln["spin_us"] for ln in ran if ln["io_threads"] == t and ln["spin_us"] is not None
                        and offered(ln)})
        if not spins:
            continue
        left_out = sum(1 for ln in ran if ln["io_threads"] == t and ln["spin_us"] is not None and not offered(ln))
        has_vk = bool(values(lines, t, "valkey", "main_us_per_request"))
        vk_runs = runs_of(lines, t, "valkey", all_runs=True)
        cfg = dict(threads=t, forced_on=True, test=TEST, pipeline=PIPELINE, value_size=SIZE, clients=bv.CLIENTS,
                   keys=bv.KEYS, offered_rps=rate, spins_us=spins, default_spin_us=default, quick=quick,
                   runs_per_setting=runs, valkey=has_vk)
        by = lambda field, fmt, label: "; ".join(  # noqa: E731
            label + (" %d: " % s) + fmt % med(lines, t, setting_name(s), field) for s in spins)
        main = {s: med(lines, t, setting_name(s), "main_us_per_request") for s in spins}
        low = min(spins, key=lambda s: main[s])
        l_runs = values(lines, t, setting_name(low), "main_us_per_request")
        if default not in main:
            dflt = "the default (spin %s) not swept" % default
        elif default == low:
            dflt = "the default (spin %s) the lowest" % default
        else:
            d_runs = values(lines, t, setting_name(default), "main_us_per_request")
            dflt = "default (spin %s) over lowest %.2f× (runs %s vs %s; %s)" % (
                default, main[default] / main[low], lo_hi(d_runs, "%.2f"), lo_hi(l_runs, "%.2f"),
                verdict(d_runs, l_runs, ("the default", "the lowest"), lower=True))
        gone = "; %d soloist runs left out (the generator had under %d %% of the offered requests answered)" % (
            left_out, SENT_SHARE * 100) if left_out else ""
        if has_vk:
            v = med(lines, t, "valkey", "main_us_per_request")
            v_runs = values(lines, t, "valkey", "main_us_per_request")
            vk = ("; Valkey: %.2f (main sleeps %.2f a request); lowest over Valkey %.2f× "
                  "(runs %s vs %s; %s)" % (
                      v, med(lines, t, "valkey", "main_sleeps_per_request") or 0, main[low] / v,
                      lo_hi(l_runs, "%.2f"), lo_hi(v_runs, "%.2f"),
                      verdict(l_runs, v_runs, ("the lowest", "Valkey"), lower=True)))
        elif vk_runs:
            vk = ("; Valkey not compared: at most %.0f %% of the offered requests answered in its runs (its "
                  "active threads spin, and with main and the generator they outnumber the cores)" % max(
                      100.0 * answered_share(ln) for ln in vk_runs))
        else:
            vk = "; Valkey not measured (%s)" % bl.VALKEY_SKIPPED
        bl.emit({"finding": True, "id": "F4.%d" % rid, "command": cmd, "config": cfg,
                 "claim": "main thread's CPU per GET (µs, medians) at each io-threads-idle-spin-us, soloist "
                          "io-threads %d forced on, GET 3 B, depth 1, open loop at %d/s; the length where it is "
                          "lowest; main's sleeps a GET; Valkey at the same threads and rate" % (t, rate),
                 "figure": "%s; lowest at spin %d; %s; main's sleeps a GET, by spin: %s%s%s; offered %d requests/s" % (
                     by("main_us_per_request", "%.2f", "spin"), low, dflt,
                     by("main_sleeps_per_request", "%.2f", "sleeps"), gone, vk, rate)})
        plow = min(spins, key=lambda s: med(lines, t, setting_name(s), "process_us_per_request"))
        p99s = "; ".join("p99 %d: %.0f" % (s, p99(lines, t, setting_name(s))) for s in spins)
        vk = "; Valkey not compared (F4.%d says why)" % rid if vk_runs else ""
        if has_vk:
            vk = "; Valkey: process %.2f µs, workers %.2f µs, p99 %.0f µs" % (
                med(lines, t, "valkey", "process_us_per_request"), med(lines, t, "valkey", "io_us_per_request"),
                p99(lines, t, "valkey"))
        bl.emit({"finding": True, "id": "F4.%d" % (rid + 1), "command": cmd, "config": cfg,
                 "claim": "the whole process's CPU per GET (µs, every thread, spins included), the I/O threads' "
                          "together, and the p99 latency (µs) at each io-threads-idle-spin-us, soloist io-threads "
                          "%d forced on, GET 3 B, depth 1, open loop at %d/s; Valkey beside" % (t, rate),
                 "figure": "process %s; lowest at spin %d; workers by spin: %s; p99 (µs) by spin: %s%s" % (
                     by("process_us_per_request", "%.2f", "spin"), plow, by("io_us_per_request", "%.2f", "io"),
                     p99s, vk)})


def open_loop_plan(bench):
    """What this sweep and bench/main_syscalls.py share: -> (quick, rounds,
    (warmup s, run s), whether VALKEY_SERVER names a peer), and the
    kind=skipped line, naming `bench`, when it does not."""
    quick = bl.quick()
    runs = int(os.environ.get("BENCH_RUNS", 2 if quick else 3))
    valkey = bl.valkey_binary() is not None
    if not valkey:
        bl.emit(dict(kind="skipped", bench=bench, peer="valkey", why=bl.VALKEY_SKIPPED))
    return quick, runs, (0.3, 1.0) if quick else (0.5, 2.0), valkey


def main():
    bl.install_cleanup()
    quick, runs, times, valkey = open_loop_plan("idle_spin")
    try:
        rate = offered_rate(valkey, 0.3 if quick else 0.5)
        lines = []
        for t in THREADS:
            lines += measure(t, runs, times, valkey, rate)
        findings(lines, quick, runs, rate)
    finally:
        bl.stop_all()
    return 0


def rows_again(path):
    """--rows FILE: the rows of a stored run computed again from its run
    lines by this code (the raw lines untouched, the old rows replaced),
    for a row whose wording changed after the run."""
    def make_rows(raw):
        rate = next((ln["rate"] for ln in raw if ln.get("kind") == "rate"), 0)
        runs = max((ln["run"] for ln in raw if ln.get("kind") == "run"), default=0)
        quick = next((ln["quick"] for ln in raw if ln.get("kind") == "rate" and "quick" in ln), None)
        if quick is None:  # a run from before the rate line said: the runner's provenance says
            try:
                with open(os.path.join(os.path.dirname(path), "provenance.json")) as f:
                    quick = bool(json.load(f).get("quick"))
            except (OSError, ValueError):
                quick = False
        findings(raw, quick, runs, rate)
    bl.rows_again(path, make_rows)


if __name__ == "__main__":
    sys.exit(bl.run_main(main, rows_again))
