#!/usr/bin/env python3
"""Stress run of the real server: random pipelines, garbage, slow readers
and vanishing clients, for a bounded number of rounds, on loopback.

Owns: one server process (normally build/asan/soloist-server, ASan+UBSan)
on a free port, its log and the inputs of any failure under
build/stress-logs/. Everything is drawn from one printed seed; round R
uses random.Random("SEED:R"), so `--seed S --only-round R` replays one
round's bytes (timing aside). Every wait is bounded; so is the run
(--rounds and --time-budget).

The bar (soloist's): bad input gets Valkey's error reply or a clean
disconnect; never a crash, a hang or a lost reply. Each round runs:

 (a) pipelines: 1-4 connections at once, each a pipeline of 1-600 random
     valid commands (gen.py; every command in the server's COMMAND LIST is
     sent, see discover_commands) cut at random bytes with random small
     delays; ECHO markers at random places and at the end. Every request
     must get exactly one reply, in order (the markers' replies must sit
     at their requests' places), none a protocol error; a pipeline may end
     in QUIT or CLIENT KILL of itself (+OK, then EOF, and nothing for the
     requests behind it). Then one more ECHO round trip proves no stray
     reply was left behind.
 (b) garbage: malformed RESP, truncated and mutated pipelines, random
     bytes. Whatever arrives must parse as whole replies; a reply
     "-ERR Protocol error..." must be the last one and the connection
     must then close; a connection must never close without one; where
     the bytes' fate is certain (gen.SPECIALS) the reply is Valkey's exact
     text. Otherwise the connection may stay open (keeps answering, or
     waits inside a bulk), and the server must still answer PING on a
     fresh connection. Every third round does this for clients that have
     not authenticated (CONFIG SET requirepass for the phase), plus
     pipelines that AUTH midway and then exceed the unauthenticated limits.
 (c) big replies: GETs of a 1 MB value pipelined to slow readers (the
     server must go on answering another client meanwhile, and every byte
     must arrive intact); clients that vanish with RST (SO_LINGER 0) or FIN
     in the middle of a reply or of a request; clients the server closes
     itself with replies pending (CLIENT KILL ID from another client,
     client-output-buffer-limit, hard or soft), which must receive whole
     replies and then a prefix; a client idle inside a request while
     `timeout 1` is set, which the cron must close; a connection storm
     past maxclients (PONG or Valkey's
     "max number of clients reached" and a close). Afterwards INFO must
     count only the connections still open.

 (d) with --flip-io-threads N: all along, a side connection sets
     io-threads to a random count from 1 to N every 20-200 ms (CONFIG SET
     at run time while the phases above keep the threads busy). Each
     answer must be +OK or Valkey's refusal "Can't update IO threads
     under load"; the rounds' own checks then prove no reply was lost.

After all rounds: PING on a fresh connection, SIGTERM gives exit status
0, and the server's stderr holds no sanitizer report (a leak included).

Prints one PASS/FAIL line per check and `N passed, M failed`.
Valkey anchors: src/networking.c (processInputBuffer, the protocol error
paths and freeClientAsync after the reply, writeToClient's per-event cap,
the client-output-buffer checks), src/server.c (SIGTERM → prepareForShutdown).
"""

import argparse
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, HERE)
import gen  # noqa: E402
import harness  # noqa: E402
from big import phase_big  # noqa: E402
from garbage import phase_garbage  # noqa: E402
from net import SERVER_ARGS, Ctx, Failure, close, connect, connected_clients  # noqa: E402
from pipelines import phase_pipelines, scan_walk  # noqa: E402


def discover_commands(ctx):
    """Sends what the server says it has: every name in COMMAND LIST that
    gen.py does not know, is not in gen.NEVER and is not flagged
    blocking, admin or pubsub goes into gen.GENERIC with its arity."""
    s = connect(ctx.port)
    try:
        names = sorted(n.decode().lower() for n in harness.parse(ctx.command(s, "COMMAND", "LIST")))
        extra, never = [], []
        for n in names:
            if n in gen.KNOWN:
                continue
            if n in gen.NEVER:
                never.append(n)
                continue
            info = harness.parse(ctx.command(s, "COMMAND", "INFO", n))[0]
            flags = {f.decode().lower() for f in info[2]}
            if flags & {"blocking", "admin", "pubsub"}:
                never.append(n)
                continue
            gen.GENERIC[n] = int(info[1])
            extra.append(n)
    finally:
        close(s, False)
    print("commands: %d in the server's table; %d built by gen.py; random arguments for %s; never sent: %s" %
          (len(names), len([n for n in names if n in gen.KNOWN]), extra or "none", never or "none"))


CHECKS = ["pipelines", "garbage", "unauthenticated garbage", "SCAN beside writers", "big replies and vanishing clients",
          "alive after the rounds", "SIGTERM exits 0", "no sanitizer report"]
FLIP_CHECK = "CONFIG SET io-threads under load"


class Flipper(threading.Thread):
    """(d): changes io-threads at random moments until stopped."""

    def __init__(self, ctx, seed, most):
        super().__init__(daemon=True)
        self.ctx, self.rng, self.most = ctx, random.Random("%d:flip" % seed), most
        self.stopping = threading.Event()
        self.sets = self.refusals = 0
        self.errors = []

    def run(self):
        try:
            s = connect(self.ctx.port)
        except OSError as e:
            self.errors.append("cannot connect: %s" % e)
            return
        try:
            while not self.stopping.wait(self.rng.uniform(0.02, 0.2)):
                n = self.rng.randint(1, self.most)
                r = self.ctx.command(s, "CONFIG", "SET", "io-threads", str(n))
                if r == b"+OK\r\n":
                    self.sets += 1
                elif b"Can't update IO threads under load" in r:
                    self.refusals += 1
                else:
                    self.errors.append("CONFIG SET io-threads %d answered %r" % (n, r[:200]))
                    return
        except (Failure, OSError) as e:
            self.errors.append("side connection: %s" % e)
        finally:
            close(s, False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default=os.path.join(REPO, "build", "asan", "soloist-server"))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--only-round", type=int, default=None, help="replay one round of --seed")
    ap.add_argument("--time-budget", type=float, default=50.0, help="start no round after this many seconds")
    ap.add_argument("--log-dir", default=os.path.join(REPO, "build", "stress-logs"))
    ap.add_argument("--server-arg", action="append", default=[], help="one more server flag (repeatable)")
    ap.add_argument("--flip-io-threads", type=int, default=0, metavar="N",
                    help="(d): set io-threads to a random 1..N every 20-200 ms during the rounds")
    args = ap.parse_args()
    if args.flip_io_threads:
        CHECKS.insert(CHECKS.index("alive after the rounds"), FLIP_CHECK)
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "little")
    os.makedirs(args.log_dir, exist_ok=True)
    rounds = [args.only_round] if args.only_round is not None else list(range(args.rounds))
    print("stress: seed %d, %d rounds, budget %.0fs, server %s" % (args.seed, len(rounds), args.time_budget,
                                                                   args.server))
    print("  replay: python3 tests/stress/stress.py --server %s --seed %d --rounds %d" %
          (args.server, args.seed, args.rounds))
    sys.stdout.flush()

    env = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "abort_on_error=1:detect_leaks=1"),
           "UBSAN_OPTIONS": os.environ.get("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")}
    extra = SERVER_ARGS + [a for s in args.server_arg for a in s.split()]
    server = harness.Server(binary=os.path.abspath(args.server), extra=extra, name="stress", log_dir=args.log_dir, env=env)
    fails = {c: [] for c in CHECKS}
    ran = {c: 0 for c in CHECKS}
    try:
        server.start()
    except Exception as e:  # noqa: BLE001 - reported as a failure below
        print("FAIL server did not start: %s" % e)
        print("0 passed, 1 failed")
        return 1
    ctx = Ctx(args, server)
    try:
        discover_commands(ctx)
    except (Failure, OSError, ValueError) as e:
        print("note: could not read the server's command table (%s); using gen.py's" % e)
    flipper = None
    if args.flip_io_threads:
        flipper = Flipper(ctx, args.seed, args.flip_io_threads)
        ctx.side_clients = 1
        flipper.start()
    t0 = time.monotonic()
    done = 0
    for r in rounds:
        if time.monotonic() - t0 > args.time_budget:
            print("time budget reached after %d rounds" % done)
            break
        ctx.round = r
        parts = []
        phases = [("pipelines", lambda rng: phase_pipelines(ctx, rng)),
                  ("garbage", lambda rng: phase_garbage(ctx, rng, False))]
        if r % 3 == 1:
            phases.append(("unauthenticated garbage", lambda rng: phase_garbage(ctx, rng, True)))
        if r % 3 == 2:
            phases.append(("SCAN beside writers", lambda rng: scan_walk(ctx, rng)))
        phases.append(("big replies and vanishing clients", lambda rng: phase_big(ctx, rng)))
        for name, fn in phases:
            rng = random.Random("%d:%d:%s" % (args.seed, r, name))
            ran[name] += 1
            t = time.monotonic()
            try:
                parts.append("%s: %s (%.1fs)" % (name.split()[0], fn(rng), time.monotonic() - t))
            except (Failure, OSError) as e:
                msg = "round %d: %s" % (r, e)
                if os.environ.get("STRESS_TRACEBACK"):
                    import traceback
                    msg += "\n" + traceback.format_exc()
                if not server.alive():
                    msg += "\n      server died (exit %s); log tail:\n%s" % (server.proc.returncode,
                                                                           server.log_tail(40))
                fails[name].append(msg)
                parts.append("%s: FAILED" % name.split()[0])
            if not server.alive():
                break
        print("round %d: %s" % (r, "; ".join(parts)))
        sys.stdout.flush()
        done += 1
        if not server.alive():
            break

    if flipper:
        flipper.stopping.set()
        flipper.join(30)
        ctx.side_clients = 0
        ran[FLIP_CHECK] = 1
        if flipper.is_alive():
            fails[FLIP_CHECK].append("the side connection hung")
        fails[FLIP_CHECK] += flipper.errors
        print("io-threads changed %d times, refused %d times" % (flipper.sets, flipper.refusals))
    ran["alive after the rounds"] = 1
    try:
        ctx.ping()
        s = connect(ctx.port)
        deadline = time.monotonic() + 5
        while True:
            n = connected_clients(ctx, s)
            if n == 1:
                break
            if time.monotonic() > deadline:
                raise Failure("connected_clients is %d with one connection open" % n)
            time.sleep(0.05)
        close(s, False)
    except (Failure, OSError) as e:
        fails["alive after the rounds"].append(str(e))
    ran["SIGTERM exits 0"] = 1
    if server.alive():
        server.signal(15)
        rc = server.wait(30)
        if rc is None:
            server.kill()
            fails["SIGTERM exits 0"].append("no exit within 30s of SIGTERM")
        elif rc != 0:
            fails["SIGTERM exits 0"].append("exit status %s" % rc)
    else:
        fails["SIGTERM exits 0"].append("the server was already gone (exit %s)" % server.proc.returncode)
    ran["no sanitizer report"] = 1
    log = server.log_text()
    rep = harness.sanitizer_report(log)
    if rep:
        lines = log.splitlines()
        i = next(j for j, ln in enumerate(lines) if rep in ln)
        fails["no sanitizer report"].append("%s\n%s" % (server.log_path, "\n".join(lines[max(0, i - 2):i + 60])))

    passed = failed = 0
    for c in CHECKS:
        if not ran[c]:
            print("SKIP %s (no round ran it)" % c)
        elif fails[c]:
            failed += 1
            print("FAIL %s (%d of %d runs)" % (c, len(fails[c]), ran[c]))
            for m in fails[c][:3]:
                print("    " + m.replace("\n", "\n    "))
        else:
            passed += 1
            print("PASS %s (%d runs)" % (c, ran[c]))
    if failed:
        print("seed %d; server log %s" % (args.seed, server.log_path))
    print("stress: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
