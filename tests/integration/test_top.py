"""tools/soloist-top against a running server: the live view reads INFO
and turns two readings into rates.

Owns its server (io-threads 4, io-threads-always-active yes, so that the
pool is awake whenever there is work and every thread shows up) and a
load beside it: a few connections that pipeline SET and GET, bounded in
time, stopped once the tool is done. Checked: --json prints one object
per refresh with every counter present; under the load, reads and
writes per second are above 0 in every refresh; every busy share is in
[0, 1] and some worker was busy; all 4 threads are active, and the last
decision is the forced wake; --once prints the plain view; a stopped
server gives exit status 1 and a one-line message, not a traceback.
Valkey anchors: none (soloist's own tool and INFO fields).

Runs against $SOLOIST_TARGET (default build/soloist-server); skipped
against redis-server, which has no iothreads section.
"""

import json
import os
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

TOP = os.path.join(harness.REPO, "tools", "soloist-top")
SLOW = 3 if os.environ.get("SOLOIST_SANITIZER") else 1
LOAD_CONNS = 4
PIPELINE = 16
LOAD_LIMIT_S = 30 * SLOW  # the load stops by itself if a test forgets it


def top(port, *args, timeout=30):
    return subprocess.run([sys.executable, TOP, "-p", str(port)] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout * SLOW)


class Load:
    """LOAD_CONNS connections, each sending PIPELINE commands (SET and GET
    in turn) and reading their replies, round after round, until stopped
    or LOAD_LIMIT_S pass."""

    def __init__(self, port):
        self.port = port
        self.stop_flag = threading.Event()
        self.rounds = 0
        self.error = None
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        conns = []
        try:
            conns = [harness.Conn(self.port) for _ in range(LOAD_CONNS)]
            batch = b"".join(harness.encode("SET", "top:%d" % i, "v" * 32) if i % 2 == 0
                             else harness.encode("GET", "top:%d" % (i - 1))
                             for i in range(PIPELINE))
            end = time.monotonic() + LOAD_LIMIT_S
            while not self.stop_flag.is_set() and time.monotonic() < end:
                for c in conns:
                    c.send(batch)
                for c in conns:
                    c.read_replies(PIPELINE)
                self.rounds += 1
        except Exception as e:  # reported by the test that stops the load
            self.error = e
        finally:
            for c in conns:
                c.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join(10 * SLOW)


@unittest.skipIf(harness.server_kind(harness.target_binary()) == "redis",
                 "soloist-top reads soloist's INFO iothreads")
class TopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(
            extra=["--io-threads", "4", "--io-threads-always-active", "yes"]).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def tearDown(self):
        self.assertTrue(self.server.alive(), self.server.log_tail())

    def test_json_under_load(self):
        with Load(self.server.port) as load:
            # Let the load's first rounds through before the first reading.
            self.assertTrue(harness.wait_for(lambda: load.rounds >= 10 or load.error, 10 * SLOW))
            r = top(self.server.port, "--json", "--count", "3")
        self.assertIsNone(load.error)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        lines = r.stdout.decode().splitlines()
        self.assertEqual(len(lines), 3, r.stdout.decode())
        some_worker_busy = False
        for n, line in enumerate(lines):
            s = json.loads(line)
            where = "refresh %d: %s" % (n + 1, line)
            for key in ("interval_s", "ops_per_sec", "connected_clients", "cpu", "threads", "jobs_per_sec",
                        "queue", "fallbacks_per_sec", "fallbacks_total", "ignition"):
                self.assertIn(key, s, where)
            self.assertGreater(s["interval_s"], 0, where)
            for job in ("read", "write", "poll", "free", "accept"):
                self.assertIsNotNone(s["jobs_per_sec"][job], where)
            self.assertGreater(s["jobs_per_sec"]["read"], 0, where)
            self.assertGreater(s["jobs_per_sec"]["write"], 0, where)
            self.assertGreater(s["ops_per_sec"], 0, where)
            self.assertIsInstance(s["queue"]["queued"], int, where)
            self.assertIsInstance(s["queue"]["pending"], int, where)
            for f in ("inactive", "queue_full", "not_eligible"):
                self.assertIsNotNone(s["fallbacks_per_sec"][f], where)
                self.assertIsInstance(s["fallbacks_total"][f], int, where)
            names = [t["thread"] for t in s["threads"]]
            self.assertEqual(names, ["main", "io_thread_1", "io_thread_2", "io_thread_3"], where)
            for t in s["threads"]:
                self.assertIsNotNone(t["busy"], where)
                self.assertGreaterEqual(t["busy"], 0.0, where)
                self.assertLessEqual(t["busy"], 1.0, where)
                if t["thread"] != "main" and t["busy"] > 0:
                    some_worker_busy = True
            self.assertGreaterEqual(s["threads"][0]["spin"], 0.0, where)
            self.assertLessEqual(s["threads"][0]["spin"], 1.0, where)
            ig = s["ignition"]
            self.assertEqual(ig["active"], 4, where)
            self.assertEqual(ig["configured"], 4, where)
            self.assertEqual(ig["rule"], "always-active", where)
            self.assertEqual(ig["last_decision"]["what"], "forced", where)
            self.assertEqual(ig["last_decision"]["active_after"], 4, where)
        self.assertTrue(some_worker_busy, r.stdout.decode())

    def test_once_prints_the_view(self):
        with Load(self.server.port):
            r = top(self.server.port, "--once", "--interval", "0.2")
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        out = r.stdout.decode()
        self.assertNotIn("\x1b[", out)  # not a terminal: no escape codes
        for text in ("busy", "reads/s", "main", "io_thread_3", "jobs/s", "fallbacks/s", "last decision forced"):
            self.assertIn(text, out)

    def test_stopped_server_exits_1(self):
        s = harness.Server(name="top-stopped").start()
        port = s.port
        s.stop()
        r = top(port, "--json", "--count", "1")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, b"")
        err = r.stderr.decode()
        self.assertIn("cannot reach 127.0.0.1:%d" % port, err)
        self.assertNotIn("Traceback", err)


if __name__ == "__main__":
    unittest.main()
