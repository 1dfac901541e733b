#!/usr/bin/env python3
"""Blocking pops under chaos: clients block and unblock while CONFIG SET
io-threads flips between 1 and 4 under load. No reply may be lost, no
member popped twice or lost, and the server must not crash.

For --seconds (10 by default) against one server (--server, started with
--io-threads 4 --io-threads-always-active yes):
  - waiters: each loops BZPOPMIN or BZMPOP over a few of 8 shared keys
    with a short timeout (0.01-0.3 s), followed in the same write by a
    PING, and must get both replies, the pop's within its timeout plus a
    bound; every member it pops is recorded;
  - list waiters do the same with BLPOP, BRPOP, BLMPOP and BLMOVE over 8
    shared lists; BLMOVE moves into the waiter's own list, which must end
    up holding exactly what it moved, in order;
  - producers ZADD unique members to the shared keys, list producers
    LPUSH or RPUSH unique elements to the shared lists;
  - a flipper sets io-threads to 1 or 4 every 20-200 ms;
  - a killer blocks clients (BZPOPMIN or BLPOP) on keys no producer
    writes and closes them while they wait, or CLIENT KILLs them, or
    CLIENT UNBLOCKs them;
  - transactors race each other with WATCH on a counter: each MULTI/EXEC
    writes the counter + 1 and ZADDs a member (a key made ready inside a
    transaction), and a null EXEC is retried.
At the end the counter equals the transactions that ran, every member
and list element added is either popped exactly once or still in the
keyspace, INFO blocked_clients drops to 0, and PING answers. Prints
one line per check and "blocking_chaos: N passed, M failed"; exit 1 on a
failure. Python 3 standard library only (and tests/integration/harness.py).
"""

import argparse
import os
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from harness import Conn, Error, parse  # noqa: E402

KEYS = ["chaos:%d" % i for i in range(8)]
LKEYS = ["chaos:l%d" % i for i in range(8)]
LATE = 3.0  # seconds a timeout may be late on a loaded two-core machine under a sanitizer


class Shared:
    def __init__(self, seconds):
        self.stop_at = time.monotonic() + seconds
        self.lock = threading.Lock()
        self.popped = []
        self.added = []
        self.lpopped = []
        self.ladded = []
        self.errors = []
        self.replies = 0
        self.commits = 0

    def running(self):
        return time.monotonic() < self.stop_at

    def fail(self, msg):
        with self.lock:
            if len(self.errors) < 20:
                self.errors.append(msg)


def waiter(sh, port, seed):
    rng = random.Random(seed)
    c = Conn(port, timeout=10)
    try:
        while sh.running():
            keys = rng.sample(KEYS, rng.randint(1, 3))
            timeout = rng.choice(["0.01", "0.05", "0.1", "0.3"])
            if rng.random() < 0.5:
                cmd = ["BZPOPMIN"] + keys + [timeout]
            else:
                cmd = ["BZMPOP", timeout, str(len(keys))] + keys + [rng.choice(["MIN", "MAX"]), "COUNT", "3"]
            c.send(harness.encode(*cmd) + harness.encode("PING"))
            r = parse(c.read_reply(timeout=float(timeout) + LATE))
            if r is not None:
                if cmd[0] == "BZPOPMIN":
                    members = [r[1]]
                else:
                    members = [m for m, _ in r[1]]
                with sh.lock:
                    sh.popped.extend(members)
            if parse(c.read_reply(timeout=LATE)) != b"PONG":
                sh.fail("no PONG after %s" % cmd)
            with sh.lock:
                sh.replies += 2
    except Exception as e:  # a lost reply is a timeout here
        sh.fail("waiter %d: %r" % (seed, e))
    finally:
        c.close()


def list_waiter(sh, port, seed):
    """BLPOP, BRPOP, BLMPOP and BLMOVE on the shared lists, each followed
    by a PING in the same write; what BLMOVE moves goes to this waiter's
    own list, checked at the end against what it was told it moved."""
    rng = random.Random(seed)
    c = Conn(port, timeout=10)
    dst = "chaos:moved:%d" % seed
    moved = []
    try:
        while sh.running():
            keys = rng.sample(LKEYS, rng.randint(1, 3))
            timeout = rng.choice(["0.01", "0.05", "0.1", "0.3"])
            kind = rng.choice(["BLPOP", "BRPOP", "BLMPOP", "BLMOVE"])
            if kind == "BLMPOP":
                cmd = ["BLMPOP", timeout, str(len(keys))] + keys + [rng.choice(["LEFT", "RIGHT"]), "COUNT", "3"]
            elif kind == "BLMOVE":
                cmd = ["BLMOVE", keys[0], dst, rng.choice(["LEFT", "RIGHT"]), "RIGHT", timeout]
            else:
                cmd = [kind] + keys + [timeout]
            c.send(harness.encode(*cmd) + harness.encode("PING"))
            r = parse(c.read_reply(timeout=float(timeout) + LATE))
            if r is not None:
                if kind == "BLMPOP":
                    elements = r[1]
                elif kind == "BLMOVE":
                    elements = [r]
                    moved.append(r)
                else:
                    elements = [r[1]]
                with sh.lock:
                    sh.lpopped.extend(elements)
            if parse(c.read_reply(timeout=LATE)) != b"PONG":
                sh.fail("no PONG after %s" % cmd)
            with sh.lock:
                sh.replies += 2
        got = parse(c.request("LRANGE", dst, "0", "-1"))
        if got != moved:
            sh.fail("list waiter %d: %s holds %d elements, moved %d" % (seed, dst, len(got), len(moved)))
    except Exception as e:  # a lost reply is a timeout here
        sh.fail("list waiter %d: %r" % (seed, e))
    finally:
        c.close()


def list_producer(sh, port, seed):
    rng = random.Random(seed)
    c = Conn(port, timeout=10)
    n = 0
    try:
        while sh.running():
            key = rng.choice(LKEYS)
            elements = ["e%d-%d" % (seed, n + i) for i in range(rng.randint(1, 4))]
            n += len(elements)
            r = parse(c.request(rng.choice(["LPUSH", "RPUSH"]), key, *elements))
            if not isinstance(r, int) or r < 1:
                sh.fail("push answered %r" % (r,))
            with sh.lock:
                sh.ladded.extend(e.encode() for e in elements)
            time.sleep(rng.random() * 0.01)
    except Exception as e:
        sh.fail("list producer %d: %r" % (seed, e))
    finally:
        c.close()


def producer(sh, port, seed):
    rng = random.Random(seed)
    c = Conn(port, timeout=10)
    n = 0
    try:
        while sh.running():
            key = rng.choice(KEYS)
            members = ["p%d-%d" % (seed, n + i) for i in range(rng.randint(1, 4))]
            n += len(members)
            args = []
            for m in members:
                args += [str(rng.randint(0, 100)), m]
            if parse(c.request("ZADD", key, *args)) != len(members):
                sh.fail("ZADD did not add %s" % members)
            with sh.lock:
                sh.added.extend(m.encode() for m in members)
            time.sleep(rng.random() * 0.01)
    except Exception as e:
        sh.fail("producer %d: %r" % (seed, e))
    finally:
        c.close()


def transactor(sh, port, seed):
    """The optimistic lock every client library documents, racing its
    peers: WATCH the counter, read it, and in one MULTI/EXEC write it + 1
    and ZADD a member to a shared key (made ready inside the transaction,
    so its waiter is served after EXEC). A null EXEC means a peer won:
    retry. Every EXEC that ran counts once in sh.commits."""
    rng = random.Random(seed)
    c = Conn(port, timeout=10)
    n = 0
    try:
        while sh.running():
            c.request("WATCH", "chaos:count")
            v = parse(c.request("GET", "chaos:count"))
            member = "t%d-%d" % (seed, n)
            c.send(harness.encode("MULTI") + harness.encode("SET", "chaos:count", str(int(v or 0) + 1))
                   + harness.encode("ZADD", rng.choice(KEYS), str(rng.randint(0, 100)), member)
                   + harness.encode("EXEC"))
            replies = [parse(c.read_reply(timeout=LATE)) for _ in range(4)]
            if replies[:3] != [b"OK", b"QUEUED", b"QUEUED"]:
                sh.fail("transaction queued as %r" % replies[:3])
            elif replies[3] is None:
                pass  # a peer touched the counter first
            elif replies[3] == [b"OK", 1]:
                n += 1
                with sh.lock:
                    sh.commits += 1
                    sh.added.append(member.encode())
            else:
                sh.fail("EXEC answered %r" % (replies[3],))
    except Exception as e:
        sh.fail("transactor %d: %r" % (seed, e))
    finally:
        c.close()


def flipper(sh, port, seed):
    rng = random.Random(seed)
    c = Conn(port, timeout=10)
    try:
        while sh.running():
            r = parse(c.request("CONFIG", "SET", "io-threads", rng.choice(["1", "4"])))
            if r != b"OK" and not isinstance(r, Error):
                sh.fail("CONFIG SET io-threads: %r" % r)
            time.sleep(rng.uniform(0.02, 0.2))
    except Exception as e:
        sh.fail("flipper: %r" % e)
    finally:
        c.close()


def client_id(c):
    return parse(c.request("CLIENT", "ID"))


def killer(sh, port, seed):
    """Blocks clients on keys nobody writes, then ends their wait."""
    rng = random.Random(seed)
    admin = Conn(port, timeout=10)
    try:
        while sh.running():
            c = Conn(port, timeout=10)
            cid = client_id(c)
            pop = rng.choice(["BZPOPMIN", "BLPOP"])
            c.send(harness.encode(pop, "nobody:%d" % rng.randint(0, 3), "0"))
            time.sleep(rng.uniform(0.005, 0.05))
            how = rng.randint(0, 2)
            if how == 0:
                c.close()
                continue
            if how == 1:
                admin.request("CLIENT", "KILL", "ID", str(cid))
                c.wait_closed(timeout=LATE)
                c.close()
                continue
            if parse(admin.request("CLIENT", "UNBLOCK", str(cid), "ERROR")) != 1:
                sh.fail("CLIENT UNBLOCK of a blocked client answered 0")
            r = c.read_reply(timeout=LATE)
            if not r.startswith(b"-UNBLOCKED"):
                sh.fail("unblocked client got %r" % r)
            c.close()
    except Exception as e:
        sh.fail("killer: %r" % e)
    finally:
        admin.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="build/soloist-server")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print("blocking_chaos: seed %d (--seed %d replays the choices, not the timing)" % (seed, seed))
    server = harness.Server(os.path.abspath(args.server), extra=["--io-threads", "4", "--io-threads-always-active", "yes"],
                            name="blocking-chaos").start()
    sh = Shared(args.seconds)
    threads = [threading.Thread(target=waiter, args=(sh, server.port, seed + i)) for i in range(12)]
    threads += [threading.Thread(target=list_waiter, args=(sh, server.port, seed + 500 + i)) for i in range(8)]
    threads += [threading.Thread(target=producer, args=(sh, server.port, seed + 100 + i)) for i in range(3)]
    threads += [threading.Thread(target=list_producer, args=(sh, server.port, seed + 600 + i)) for i in range(2)]
    threads += [threading.Thread(target=transactor, args=(sh, server.port, seed + 400 + i)) for i in range(3)]
    threads += [threading.Thread(target=flipper, args=(sh, server.port, seed + 200)),
                threading.Thread(target=killer, args=(sh, server.port, seed + 300))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(args.seconds + 60)
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print("%s %s" % ("PASS" if ok else "FAIL", what))
        passed, failed = passed + bool(ok), failed + (not ok)

    check(not any(t.is_alive() for t in threads), "every client thread finished")
    check(server.alive(), "the server is alive")
    for e in sh.errors:
        print("  " + e)
    check(not sh.errors, "no lost reply, no unexpected reply (%d replies read)" % sh.replies)
    if server.alive():
        c = Conn(server.port, timeout=10)
        left = []
        for k in KEYS:
            left += parse(c.request("ZRANGE", k, "0", "-1"))
        popped = sh.popped
        count = parse(c.request("GET", "chaos:count"))
        check(int(count or 0) == sh.commits, "the WATCHed counter equals the transactions that ran (%d)"
              % sh.commits)
        check(len(popped) == len(set(popped)), "no member popped twice (%d popped)" % len(popped))
        check(sorted(popped + left) == sorted(sh.added), "every member added is popped or still there (%d added)"
              % len(sh.added))
        lleft = []
        for k in LKEYS:
            lleft += parse(c.request("LRANGE", k, "0", "-1"))
        lpopped = sh.lpopped
        check(len(lpopped) == len(set(lpopped)), "no list element popped twice (%d popped)" % len(lpopped))
        check(sorted(lpopped + lleft) == sorted(sh.ladded),
              "every list element added is popped or still there (%d added)" % len(sh.ladded))
        ok = False
        end = time.monotonic() + 5
        while time.monotonic() < end and not ok:
            info = parse(c.request("INFO", "clients")).decode()
            ok = "blocked_clients:0\r" in info and "total_blocking_keys:0\r" in info
            time.sleep(0.05)
        check(ok, "no client left blocked, no key left waited on")
        check(parse(c.request("PING")) == b"PONG", "PING answers")
        c.close()
        check(server.stop() == 0, "the server exits cleanly on SIGTERM")
        report = harness.sanitizer_report(server.log_text())
        check(not report, "no sanitizer report" + ("\n" + report if report else ""))
    print("blocking_chaos: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
