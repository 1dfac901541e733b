#!/usr/bin/env python3
"""threads_vs_redis.py — soloist with I/O threads beside redis-server with its own.

Steps 4-5 benchmark. Owns the closed-loop comparison with threads on both
sides, in one run: soloist at io-threads 1, 2 and 4 with the default
(adaptive) ignition, and Debian's redis-server 7.0 at io-threads 1 and at
io-threads 2 with threaded reads (`--io-threads 2 --io-threads-do-reads
yes`), and, with VALKEY_SERVER set, Valkey built from source at
io-threads 1, 2 and 4 with its own default (adaptive) activation: the
design soloist re-implements, each side deciding for itself when its
threads help (a run without it says it skipped the peer). The cells are
server_vs_redis.py's: GET and SET, 50 clients,
3-byte and 512-byte values, P=1 and P=16, keyspace -r 100000 loaded in
full before each value size. In each cell the settings (five, or eight
with Valkey) run in turn, A B C D E A B C D E …, each setting's runs
sized by its own short
calibration to last about BENCH_TARGET_S; a setting waiting its turn is
stopped (SIGSTOP), so only the one measured holds threads. findings computes per cell the
ratios soloist-N / soloist-1, soloist-N / redis-2 and soloist-N / valkey-N
from the run lines.

On a 2-core machine shared with redis-benchmark, a thread that the server
starts competes with the load generator for the same cores: the targets
here are that threads never cost (adaptive io-threads 4 ≥ 0.95× io-threads
1) and that soloist keeps up with redis's threads (≥ 1.0× redis
io-threads 2), not a speed-up.

Prints JSON lines: kind=skipped (a setting the server does not support,
with the reason, or peer=valkey when VALKEY_SERVER is not set), kind=calibrate, kind=run, kind=done. Knobs: QUICK=1
(about 50 s without Valkey), BENCH_TARGET_S, BENCH_RUNS (>= 3),
BENCH_BUDGET_S, BENCH_PINNED, SOLOIST_BIN, REDIS_BIN, VALKEY_SERVER.

Mirrors how Valkey's I/O-threads work was reported (valkey-benchmark,
-c 50, -P 1 and 16, SET/GET, 512-byte values, against the previous
release's threads), not any Valkey code.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CLIENTS = 50
KEYSPACE = 100000
SOLOIST_THREADS = [1, 2, 4]
REDIS_SETTINGS = [(1, []), (2, ["--io-threads", "2", "--io-threads-do-reads", "yes"])]
VALKEY_THREADS = [1, 2, 4]


def start_all(base):
    """[(side name, server, io_threads)] for every setting that starts."""
    (label, binary, really), (rlabel, rbinary, rreally) = bl.servers()
    out = []
    for n in SOLOIST_THREADS:
        srv, why = bl.thread_server(label, binary, n)
        if srv is None:
            bl.emit(dict(base, kind="skipped", server=label, io_threads=n, why=why))
            bl.log("soloist io-threads %d: skipped (%s)" % (n, why))
            continue
        srv.really = really
        out.append(("soloist-%d" % n, srv, n))
    for n, args in REDIS_SETTINGS:
        out.append(("redis-%d" % n, bl.Server(rlabel, rbinary, rreally, args), n))
    vk = bl.valkey_side(base)
    for n in VALKEY_THREADS if vk else []:
        out.append(("valkey-%d" % n, bl.Server(vk[0], vk[1], vk[2], ["--io-threads", str(n)]), n))
    for _, srv, _ in out:
        srv.pause()
    return out


def measure(srv, *args, **kw):
    with srv.turn():
        return bl.redis_benchmark(srv, *args, **kw)


def main():
    bl.install_cleanup()
    q = bl.quick()
    target = float(os.environ.get("BENCH_TARGET_S", "0.2" if q else "1.2"))
    runs = max(3, int(os.environ.get("BENCH_RUNS", "3")))
    base = {"bench": "threads_vs_redis", "clients": CLIENTS, "keyspace": KEYSPACE,
            "cores": os.cpu_count(), "quick": q, "target_s": target,
            "soloist_ignition": "default (adaptive)"}
    base.update(bl.placement())
    try:
        sides = start_all(base)
        # Each setting adds about a fifth of the five settings' time.
        budget = bl.Budget(float(os.environ.get("BENCH_BUDGET_S", str(int((55 if q else 280) * len(sides) / 5)))))
        if not any(name.startswith("soloist") for name, _, _ in sides):
            bl.emit(dict(base, kind="unavailable", why="soloist did not start"))
            return

        def load(size):
            for _, srv, _ in sides:
                with srv.turn():
                    bl.populate(srv, KEYSPACE, size)
        for cfg in bl.serving_cells(base, budget, load):
            cell(sides, cfg, runs, target)
        bl.emit(dict(base, kind="done", elapsed_s=round(budget.seconds - budget.left(), 1)))
    finally:
        bl.stop_all()


def cell(sides, cfg, runs, target):
    """Each setting is calibrated on its own and its runs sized to about
    `target` seconds: the settings differ by an order of magnitude on a
    2-core machine (redis's I/O thread spins), and one shared size would
    make the slowest setting's runs take that much longer."""
    test, p, size = cfg["test"], cfg["pipeline"], cfg["value_size"]
    n0 = bl.calibrate_requests(20000 * (1 if p == 1 else 4) * (0.1 if bl.quick() else 0.25),
                               1.0, CLIENTS, p)
    requests = {}
    for name, srv, n in sides:
        r = measure(srv, test.lower(), CLIENTS, n0, p, size, KEYSPACE)
        requests[name] = bl.calibrate_requests(r["rps"], target, CLIENTS, p)
        bl.emit(dict(cfg, kind="calibrate", side=name, server=srv.label, server_is=srv.really,
                     io_threads=n, requests=n0, **strip(r)))
    med = {}
    for i in range(runs):
        for name, srv, n in sides:
            r = measure(srv, test.lower(), CLIENTS, requests[name], p, size, KEYSPACE,
                        timeout=max(60, 20 * target))
            med.setdefault(name, []).append(r["rps"])
            bl.emit(dict(cfg, kind="run", side=name, server=srv.label, server_is=srv.really,
                         io_threads=n, run=i + 1, requests=requests[name], **strip(r)))
    bl.log("%s %dB P=%d: %s" % (test, size, p, ", ".join(
        "%s %.0f (n=%d)" % (name, bl.median(v), requests[name]) for name, v in med.items())))


def strip(r):
    return {k: v for k, v in r.items() if k not in ("test",)}


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
