#!/usr/bin/env python3
"""ignition_timing.py — how fast I/O threads start under load and stop after it.

Steps 4-5 benchmark. Owns the timing of ignition: soloist at io-threads 4
with its default policy starts with the main thread alone, turns the I/O
threads on when load comes (an ignition) and off again when it goes (a
scale-down). This benchmark steps the offered load up and down with
soloist-bench and watches the server's `INFO iothreads` every few ms
(POLL_MS, 5 by default) from one kept connection:
  io_threads_active        how many threads work now;
  io_threads_last_change_us when that last changed, on the monotonic clock
                           (the clock Python's time.monotonic reads, so the
                           server's own stamp times the change to the µs);
  io_threads_ignitions, io_threads_scale_ups, io_threads_scale_downs,
  io_threads_guard_reverts  counters, diffed per step.

Steps, each from an idle server (active back at its idle value, waited
for; a step that starts before is marked and not timed): a low
open-loop rate (a tenth of a short closed-loop calibration; ignition not
expected), a high one (seven tenths), a closed loop (as much as the
generator sends), and the high rate again. GET, 3-byte values, P=1, 50
connections, 10,000 prefilled keys. Per step: from the step (the
generator started) to ignition, and from the load's end (the generator
exited) to scale-down, both as the poll saw them and as the server
stamped them; the counters; the most threads active.

Then the idle server's CPU, all threads, for some seconds after the last
burst (the poll stopped, so it measures the server alone), read from each
thread's /proc/PID/task/TID/schedstat — and the same after the same burst
for io-threads 1, the step-0 server, as the floor.

If the server has no thread support (no INFO iothreads, or it refuses
--io-threads 4), it says so in kind=skipped and measures what it can: the
idle CPU of io-threads 1 after a burst.

Prints JSON lines: kind=skipped, kind=rate, kind=sample (the poll, on a
change and every 100 ms: the plot's data), kind=step, kind=idle,
kind=done. About 40 s, 20 s with QUICK. Knobs: QUICK=1, POLL_MS,
SOLOIST_BIN, SOLOIST_BENCH_BIN, BENCH_PINNED.

Valkey anchor: the adaptive activation of I/O threads in valkey
src/io_threads.c (adjustIOThreadsByEventLoad in Valkey 8.0-9.0, reworked
by Valkey pull request #3324, which added io-threads-always-active),
measured from the outside, not mirrored.
"""

import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CONNS = 50
KEYS = 10000
VALUE = 3
THREADS = 4
COUNTERS = ("io_threads_ignitions", "io_threads_scale_ups", "io_threads_scale_downs",
            "io_threads_guard_reverts")
FIELDS = ("io_threads_active", "io_threads_last_change_us") + COUNTERS
HEARTBEAT_S = 0.1


class Poller(threading.Thread):
    """Reads INFO iothreads every `interval` s on one connection; keeps
    every sample, and prints one when a field changed or every 100 ms."""

    def __init__(self, srv, interval, t0, base):
        super().__init__(daemon=True)
        self.interval, self.t0, self.base = interval, t0, base
        self.sock = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        self.samples = []
        self.offered = 0
        self.halt = threading.Event()
        self.last_print = None

    def read(self):
        sent = time.monotonic()
        self.sock.sendall(bl.resp([b"INFO", b"iothreads"]))
        info = bl.parse_info(bl.read_reply(self.sock))
        s = {"t": time.monotonic(), "t_sent": sent}
        for k in FIELDS:
            v = info.get(("iothreads", k))
            s[k] = int(v) if v is not None and v.lstrip("-").isdigit() else None
        return s

    def run(self):
        while not self.halt.is_set():
            start = time.monotonic()
            s = self.read()
            s["offered"] = self.offered
            prev = self.samples[-1] if self.samples else None
            self.samples.append(s)
            changed = prev is None or any(prev[k] != s[k] for k in FIELDS + ("offered",))
            if changed or s["t"] - self.last_print >= HEARTBEAT_S:
                self.last_print = s["t"]
                bl.emit(dict(self.base, kind="sample", t_s=round(s["t"] - self.t0, 4),
                             active=s["io_threads_active"], offered_rps=s["offered"],
                             **{k: s[k] for k in COUNTERS}))
            self.halt.wait(max(0.0, self.interval - (time.monotonic() - start)))

    def stop(self):
        self.halt.set()
        self.join()
        self.sock.close()


def gen_args(rate, seconds):
    args = ["-c", str(CONNS), "-P", "1", "-n", str(KEYS), "-s", str(VALUE), "-r", "1:0",
            "-d", "%gs" % seconds, "--drain", "1s"]
    return args + (["--rate", str(int(rate))] if rate else [])


def first(samples, after, pred):
    return next((s for s in samples if s["t"] >= after and pred(s)), None)


def stamped_ms(s, since, prev_sent):
    """The server's own time of the change `s` saw, in ms after `since`,
    when its stamp falls after the previous poll was sent (that reply said
    nothing had changed yet) and before this one's reply came back — the
    clocks agree; else None."""
    us = s.get("io_threads_last_change_us")
    if us is None:
        return None
    t = us / 1e6
    if prev_sent <= t <= s["t"]:
        return round((t - since) * 1000, 3)
    return None


def wait_idle(poller, idle_active, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if poller.samples and poller.samples[-1]["io_threads_active"] == idle_active:
            return True
        time.sleep(0.02)
    return False


def one_step(srv, poller, name, rate, burst_s, observe_s, idle_active, started_idle, base):
    poller.offered = rate or -1  # -1: closed loop, rate unknown until it ends
    n0 = len(poller.samples)
    c0 = dict(poller.samples[-1])
    t_start = time.monotonic()
    rep, argv = bl.soloist_bench(srv.port, gen_args(rate, burst_s))
    t_end = time.monotonic()
    poller.offered = 0
    end = t_end + observe_s
    while time.monotonic() < end:
        if poller.samples[-1]["io_threads_active"] == idle_active and poller.samples[-1]["t"] > t_end:
            break
        time.sleep(0.01)
    time.sleep(0.02)
    samples = poller.samples[n0:]
    c1 = samples[-1]
    prevs = {id(s): (samples[i - 1]["t_sent"] if i else c0["t_sent"]) for i, s in enumerate(samples)}
    ign = first(samples, t_start, lambda s: s["io_threads_active"] > idle_active)
    down = first(samples, t_end, lambda s: s["io_threads_active"] == idle_active) if ign else None
    cls = rep["classes"][0]
    peak = max(s["io_threads_active"] for s in samples)
    out = dict(base, kind="step", step=name, rate=rate, loop="open" if rate else "closed",
               rps=cls["rps"], burst_s=burst_s, observe_s=observe_s, argv=argv,
               ignited=ign is not None, peak_active=peak, idle_active=idle_active,
               started_idle=started_idle,
               polls=len(samples),
               counters={k: (c1[k] - c0[k]) if c1[k] is not None and c0[k] is not None else None
                         for k in COUNTERS})
    if ign:
        out["ignition_ms_poll"] = round((ign["t"] - t_start) * 1000, 3)
        out["ignition_ms_server"] = stamped_ms(ign, t_start, prevs[id(ign)])
    if down:
        out["scale_down_ms_poll"] = round((down["t"] - t_end) * 1000, 3)
        out["scale_down_ms_server"] = stamped_ms(down, t_end, prevs[id(down)])
    out["scaled_down"] = down is not None if ign else None
    bl.emit(out)
    bl.log("%s (%s): %.0f rps; ignition %s ms, scale-down %s ms, peak %d active" % (
        name, rate or "closed", cls["rps"], out.get("ignition_ms_server", out.get("ignition_ms_poll")),
        out.get("scale_down_ms_server", out.get("scale_down_ms_poll")), peak))
    return out


def idle_after_burst(srv, io_threads, burst_s, windows, base):
    """A closed-loop burst, then the server's CPU by thread over each idle
    window (seconds after the burst's end); one kind=idle line."""
    bl.soloist_bench(srv.port, gen_args(None, burst_s))
    t_end = time.monotonic()
    marks = [bl.threads_cpu_s(srv.proc.pid)]
    for _, stop in windows:
        time.sleep(max(0.0, t_end + stop - time.monotonic()))
        marks.append(bl.threads_cpu_s(srv.proc.pid))
    parts = []
    for (a, b), m0, m1 in zip(windows, marks, marks[1:]):
        per = {}
        for tid, (comm, cpu) in m1.items():
            c0 = m0.get(tid, (comm, 0.0))[1]
            per.setdefault(comm, 0.0)
            per[comm] += cpu - c0
        total = sum(per.values())
        parts.append({"from_s": a, "to_s": b, "cpu_s": round(total, 6),
                      "pct_of_one_core": round(100 * total / (b - a), 3),
                      "by_thread_pct": {k: round(100 * v / (b - a), 3) for k, v in sorted(per.items())}})
    out = dict(base, kind="idle", io_threads=io_threads, burst_s=burst_s, threads=len(marks[-1]),
               clock="/proc/PID/task/*/schedstat (run time, ns), all threads", windows=parts)
    bl.emit(out)
    bl.log("idle after burst, io-threads %d: %s" % (io_threads, ", ".join(
        "%g-%gs %.2f%%" % (w["from_s"], w["to_s"], w["pct_of_one_core"]) for w in parts)))


def steps(srv, cfg, t0, interval, cal_s, burst_s, observe_s, windows):
    """The threaded server's part: the steps under the poll, then its idle
    CPU after a burst."""
    # What "idle" reads as, before any load.
    idle_active = srv.info("iothreads").get(("iothreads", "io_threads_active"), "")
    if not idle_active.isdigit():
        bl.emit(dict(cfg, kind="skipped", why="INFO iothreads has no io_threads_active line",
                     what="ignition and scale-down timings"))
    else:
        idle_active = int(idle_active)
        bl.sb_prefill(srv, KEYS, VALUE)
        closed = bl.soloist_bench(srv.port, gen_args(None, cal_s))[0]["classes"][0]["rps"]
        rates = {"low": max(1000, int(closed / 10 // 1000 * 1000)),
                 "high": max(2000, int(closed * 0.7 // 1000 * 1000))}
        bl.emit(dict(cfg, kind="rate", closed_rps=closed, **rates))
        poller = Poller(srv, interval, t0, cfg)
        poller.start()
        try:
            for name, rate in (("low", rates["low"]), ("high", rates["high"]), ("closed", None),
                               ("high", rates["high"])):
                idle = wait_idle(poller, idle_active, observe_s)
                one_step(srv, poller, name, rate, burst_s, observe_s, idle_active, idle, cfg)
        finally:
            poller.stop()
    idle_after_burst(srv, cfg["io_threads"], burst_s, windows, cfg)


def main():
    bl.install_cleanup()
    q = bl.quick()
    interval = float(os.environ.get("POLL_MS", "5")) / 1000
    burst_s, observe_s, cal_s = (1.0, 2.5, 0.3) if q else (3.0, 5.0, 0.5)
    windows = [(0, 0.5), (0.5, 1.5)] if q else [(0, 1), (1, 4)]
    label, binary, really = bl.servers()[0]
    base = {"bench": "ignition_timing", "test": "GET", "clients": CONNS, "pipeline": 1,
            "keys": KEYS, "value_size": VALUE, "cores": os.cpu_count(), "quick": q,
            "server": label, "server_is": really, "poll_ms": interval * 1000,
            "load_generator": "soloist-bench, 1 thread"}
    base.update(bl.placement())
    if not os.access(bl.sb_binary(), os.X_OK):
        bl.emit(dict(base, kind="unavailable", why="%s not built (make)" % bl.sb_binary()))
        return
    t0 = time.monotonic()
    try:
        srv, why = bl.thread_server(label, binary, THREADS)
        if srv is None:
            bl.emit(dict(base, kind="skipped", io_threads=THREADS, why=why,
                         what="ignition and scale-down timings, idle CPU at io-threads %d" % THREADS))
            bl.log("io-threads %d: skipped (%s)" % (THREADS, why))
        else:
            try:
                steps(srv, dict(base, io_threads=THREADS, ignition="default"), t0, interval, cal_s,
                      burst_s, observe_s, windows)
            finally:
                srv.stop()
        one, _ = bl.thread_server(label, binary, 1)
        bl.sb_prefill(one, KEYS, VALUE)
        idle_after_burst(one, 1, burst_s, windows, dict(base, io_threads=1))
        one.stop()
        bl.emit(dict(base, kind="done", elapsed_s=round(time.monotonic() - t0, 1)))
    finally:
        bl.stop_all()


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
