#!/usr/bin/env python3
"""ignition_trace.py — records what step 5's ignition policy sees.

Step 5 (measuring). Owns: the recorded traces in tests/data/ignition/,
which tests/unit/test_ignition.c replays through src/ignition.c. Starts
one soloist (io-threads 1, so the main thread does everything), puts a
load shape on it with soloist-bench, and every 10 ms (the policy's
sampling period, IGNITION_SAMPLE_US) reads over one persistent loopback
connection `INFO cpu stats threads`:

    used_cpu_user_main_thread, used_cpu_sys_main_thread   (getrusage(RUSAGE_THREAD))
    main_thread_busy_us     (wall time the loop was not waiting in epoll:
                             the nearest thing soloist has to Valkey's
                             active time)
    total_commands_processed

and writes them, cumulative and counted from the trace's first row, one
CSV per shape with a header saying how it was recorded. The sampler's own
INFO calls (100 a second) are in the figures; they are counted in
`commands` too. The queue columns are 0 and active is 1: with one
thread there is no pool and no queue.

Shapes, each about 6 s (the whole run under 40 s):
    step     idle 1 s, then an open-loop Poisson load at RATE for 3 s, idle 2 s
    burst    idle 1 s, a closed-loop burst (50 connections, P=1) for 1 s, idle 2 s
    light    idle 1 s, open loop at a light rate (2,000/s) for 3 s, idle 2 s

    bench/ignition_trace.py [--out DIR] [--rate R] [--only step,burst,light]

Python 3 standard library; loopback only. The cores are shared with the
load generator, as in every step-0 benchmark; the header says so.
"""

import argparse
import os
import platform
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

SAMPLE_S = 0.010
FIELDS = ("used_cpu_user_main_thread", "used_cpu_sys_main_thread", "main_thread_busy_us",
          "total_commands_processed")
COLUMNS = "t_us,main_user_us,main_sys_us,main_active_us,commands,queued,active,num"


def sb_binary():
    return os.environ.get("SOLOIST_BENCH_BIN", os.path.join(bl.ROOT, "build", "soloist-bench"))


def sample(sock):
    """One INFO read: (user_us, sys_us, active_us, commands)."""
    sock.sendall(bl.resp([b"INFO", b"cpu", b"stats", b"threads"]))
    text = bl.read_reply(sock).decode("utf-8", "replace")
    v = {}
    for line in text.splitlines():
        k, _, val = line.partition(":")
        if k in FIELDS:
            v[k] = val.strip()
    return (round(float(v["used_cpu_user_main_thread"]) * 1e6), round(float(v["used_cpu_sys_main_thread"]) * 1e6),
            int(v["main_thread_busy_us"]), int(v["total_commands_processed"]))


def record(srv, shape, idle_before, load_s, idle_after, load_argv):
    """Samples every 10 ms while load_argv runs after idle_before seconds."""
    rows = []
    sock = socket.create_connection(("127.0.0.1", srv.port))
    t0 = time.monotonic()
    marks = {}

    def load():
        time.sleep(idle_before)
        marks["load_on_us"] = int((time.monotonic() - t0) * 1e6)
        subprocess.run(load_argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        marks["load_off_us"] = int((time.monotonic() - t0) * 1e6)

    th = threading.Thread(target=load)
    th.start()
    end = t0 + idle_before + load_s + idle_after
    nxt = t0
    while True:
        now = time.monotonic()
        if now >= end and not th.is_alive():
            break
        rows.append((int((now - t0) * 1e6),) + sample(sock))
        nxt += SAMPLE_S
        time.sleep(max(0.0, nxt - time.monotonic()))
    th.join()
    sock.close()
    return rows, marks


def write(path, shape, what, rows, marks, argv):
    base = rows[0]
    with open(path, "w") as f:
        f.write("# ignition trace '%s': RECORDED by bench/ignition_trace.py on %s\n"
                % (shape, time.strftime("%Y-%m-%d", time.gmtime())))
        f.write("# %s\n" % what)
        f.write("# soloist --io-threads 1 on loopback, %s, %d cores shared with the load generator\n"
                "# (and with whatever else ran on the machine then).\n"
                % (platform.machine(), os.cpu_count() or 1))
        f.write("# load: %s\n" % " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv)))
        f.write("# sampled every 10 ms from INFO cpu stats threads over one connection (its INFO calls\n"
                "# are counted in commands); cumulative, from the first row; main_active_us is\n"
                "# main_thread_busy_us; queued 0 and active 1 because one thread has no pool.\n")
        for k in ("load_on_us", "load_off_us"):
            f.write("# %s: %d\n" % (k, marks[k] - base[0]))
        f.write(COLUMNS + "\n")
        for r in rows:
            f.write("%d,%d,%d,%d,%d,0,1,1\n" % tuple(x - b for x, b in zip(r, base)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(bl.ROOT, "tests", "data", "ignition"))
    ap.add_argument("--rate", type=int, default=60000, help="the step's open-loop rate (requests/s)")
    ap.add_argument("--only", default="step,burst,light")
    args = ap.parse_args()
    bl.install_cleanup()
    os.makedirs(args.out, exist_ok=True)
    soloist = bl.servers()[0][1]
    srv = bl.Server("soloist", soloist, "soloist", ["--io-threads", "1"])
    try:
        base = [sb_binary(), "-p", str(srv.port), "-q", "-n", "10000", "-s", "3"]
        subprocess.run(base + ["--prefill", "-d", "0", "--count", "1"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        shapes = {
            "step": ("idle 1 s, then open-loop Poisson GETs at %d/s over 50 connections for 3 s, then idle"
                     % args.rate, 3, base + ["-c", "50", "--rate", str(args.rate), "-d", "3s"]),
            "burst": ("idle 1 s, then a closed-loop burst: 50 connections, pipeline 1, GET, for 1 s, then idle",
                      1, base + ["-c", "50", "-d", "1s"]),
            "light": ("idle 1 s, then light open-loop Poisson GETs at 2000/s over 10 connections for 3 s",
                      3, base + ["-c", "10", "--rate", "2000", "-d", "3s"]),
        }
        for shape in args.only.split(","):
            what, load_s, argv = shapes[shape]
            rows, marks = record(srv, shape, 1.0, load_s, 2.0, argv)
            path = os.path.join(args.out, "recorded-%s.csv" % shape)
            write(path, shape, what, rows, marks, argv)
            bl.log("%s: %d samples -> %s" % (shape, len(rows), os.path.relpath(path, bl.ROOT)))
    finally:
        srv.stop()


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
