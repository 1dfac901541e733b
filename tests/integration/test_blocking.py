"""Blocking pops end to end, where a transcript cannot show it: CLIENT
UNBLOCK of a real client (its id), CLIENT KILL of a blocked client and a
client disconnecting while blocked (the registry forgets it: nothing is
popped for it), 200 clients blocked with random timeouts all answered on
time, pipelined commands behind a blocking pop resumed in order, a
blocked client's CLIENT LIST flag and the INFO clients counters.

Owns nothing but its server. Valkey anchor: src/blocked.c (blockForKeys,
handleClientsBlockedOnKey, unblockClientOnTimeout, unblockClientOnError),
src/timeout.c (handleBlockedClientsTimeout), src/networking.c
clientCommand (CLIENT UNBLOCK).

Runs against $SOLOIST_TARGET (default build/soloist-server), with
$SOLOIST_SERVER_ARGS (the I/O-thread runs of suite 31).
"""

import os
import random
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Error, info_clients, parse, wait_for  # noqa: E402

# How late a timeout may be answered: Valkey's resolution is the cron's
# period (100 ms at hz 10); the rest is a loaded two-core machine.
LATE = 1.0


class BlockingTest(harness.ClientsTestCase):
    def test_flag_and_info(self):
        w = self.block("BZPOPMIN", "q1", "q2", "q1", "0")
        line = w_list(self.main, w).decode()
        self.assertIn(" flags=b ", line)
        info = info_clients(self.main)
        self.assertEqual(info["blocked_clients"], "1")
        self.assertEqual(info["total_blocking_keys"], "2")
        self.assertEqual(info["clients_in_timeout_table"], "0")
        self.main.request("ZADD", "q2", "1", "a")
        self.assertEqual(parse(w.read_reply()), [b"q2", b"a", b"1"])
        info = info_clients(self.main)
        self.assertEqual((info["blocked_clients"], info["total_blocking_keys"]), ("0", "0"))
        self.assertIn(" flags=N ", w_list(self.main, w).decode())

    def test_client_unblock(self):
        self.main.request("CONFIG", "RESETSTAT")
        w = self.block("BZPOPMIN", "u", "0")
        wid = parse(self.conn().request("CLIENT", "LIST")).decode()
        wid = [ln for ln in wid.split("\n") if "cmd=bzpopmin" in ln][0].split(" ")[0].split("=")[1]
        self.assertEqual(parse(self.main.request("CLIENT", "UNBLOCK", wid)), 1)
        self.assertEqual(w.read_reply(), b"*-1\r\n")
        self.assertEqual(parse(self.main.request("CLIENT", "UNBLOCK", wid)), 0)
        w.send_command("BZMPOP", "0", "1", "u", "MIN")
        self.assertTrue(wait_for(lambda: self.blocked() == 1))
        self.assertEqual(parse(self.main.request("CLIENT", "UNBLOCK", wid, "ERROR")), 1)
        self.assertEqual(w.read_reply(), b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")
        self.assertEqual(parse(w.request("PING")), b"PONG")
        stats = parse(self.main.request("INFO", "commandstats")).decode()
        self.assertRegex(stats, r"cmdstat_bzmpop:calls=1,[^\r]*rejected_calls=1,failed_calls=0")
        self.assertRegex(stats, r"cmdstat_bzpopmin:calls=1,")

    def test_kill_blocked_client(self):
        w = self.block("BZPOPMIN", "kq", "0.0")
        other = self.block("BZPOPMAX", "kq", "0")
        lines = parse(self.main.request("CLIENT", "LIST")).decode().split("\n")
        wid = [ln for ln in lines if "cmd=bzpopmin" in ln][0].split(" ")[0].split("=")[1]
        self.assertEqual(parse(self.main.request("CLIENT", "KILL", "ID", wid)), 1)
        w.wait_closed()
        self.assertTrue(wait_for(lambda: self.blocked() == 1))
        # The killed client is served nothing: the next waiter gets it.
        self.main.request("ZADD", "kq", "1", "a", "2", "b")
        self.assertEqual(parse(other.read_reply()), [b"kq", b"b", b"2"])
        self.assertEqual(parse(self.main.request("ZRANGE", "kq", "0", "-1")), [b"a"])
        self.assertEqual(info_clients(self.main)["total_blocking_keys"], "0")

    def test_disconnect_while_blocked(self):
        ws = [self.block("BZPOPMIN", "dq", "dq%d" % i, "5") for i in range(20)]
        for w in ws:
            w.close()
        self.assertTrue(wait_for(lambda: self.blocked() == 0))
        self.assertEqual(info_clients(self.main)["total_blocking_keys"], "0")
        self.assertEqual(info_clients(self.main)["clients_in_timeout_table"], "0")
        self.main.request("ZADD", "dq", "1", "a")
        self.assertEqual(parse(self.main.request("ZCARD", "dq")), 1)

    def test_pipeline_resumes_in_order(self):
        w = self.conn()
        w.send(harness.encode("BZPOPMIN", "pq", "0") + harness.encode("SET", "pa", "1") +
               harness.encode("INCR", "pa") + harness.encode("BZPOPMAX", "pq2", "0.05") +
               harness.encode("GET", "pa"))
        self.assertTrue(wait_for(lambda: self.blocked() == 1))
        # Nothing behind the blocked pop has run.
        self.assertIsNone(parse(self.main.request("GET", "pa")))
        self.main.request("ZADD", "pq", "3", "c")
        replies = [parse(r) for r in w.read_replies(5)]
        self.assertEqual(replies, [[b"pq", b"c", b"3"], b"OK", 2, None, b"2"])

    def test_timeout_in_pipeline_then_more(self):
        w = self.conn()
        w.send(harness.encode("BZPOPMIN", "tq", "0.1") + harness.encode("PING"))
        t0 = time.monotonic()
        self.assertEqual(w.read_reply(timeout=3), b"*-1\r\n")
        self.assertGreaterEqual(time.monotonic() - t0, 0.095)
        self.assertEqual(parse(w.read_reply()), b"PONG")

    def test_many_random_timeouts_answered_on_time(self):
        rng = random.Random(7)
        n = 200
        socks, due = [], []
        for i in range(n):
            timeout = rng.choice([0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5])
            s = socket.create_connection(("127.0.0.1", self.server.port))
            s.sendall(harness.encode("BZPOPMIN", "many%d" % (i % 7), "%g" % timeout))
            socks.append(s)
            due.append(time.monotonic() + timeout)
        try:
            answered = [None] * n
            deadline = max(due) + LATE + 2
            for s in socks:
                s.setblocking(False)
            buf = [b""] * n
            while None in answered and time.monotonic() < deadline:
                for i, s in enumerate(socks):
                    if answered[i] is not None:
                        continue
                    try:
                        data = s.recv(64)
                    except BlockingIOError:
                        continue
                    buf[i] += data
                    if buf[i].endswith(b"\r\n"):
                        answered[i] = time.monotonic()
                time.sleep(0.002)
            self.assertNotIn(None, answered, "some timeouts were never answered")
            for i in range(n):
                self.assertEqual(buf[i], b"*-1\r\n")
                self.assertGreaterEqual(answered[i], due[i] - 0.01, "client %d answered early" % i)
                self.assertLess(answered[i], due[i] + LATE, "client %d answered late" % i)
        finally:
            for s in socks:
                s.close()
        self.assertTrue(wait_for(lambda: self.blocked() == 0))

    def test_fifo_among_many_waiters(self):
        ws = [self.block("BZPOPMIN", "fq", "0") for _ in range(10)]
        self.main.request("ZADD", "fq", *sum([[str(i), "m%d" % i] for i in range(10)], []))
        for i, w in enumerate(ws):
            self.assertEqual(parse(w.read_reply()), [b"fq", b"m%d" % i, b"%d" % i])
        self.assertEqual(parse(self.main.request("EXISTS", "fq")), 0)

    def test_blocked_client_not_closed_as_idle(self):
        self.main.request("CONFIG", "SET", "timeout", "1")
        try:
            w = self.block("BZPOPMIN", "iq", "0")
            for _ in range(15):  # 1.5 s: past the 1 s timeout and a cron tick; main busy, the waiter quiet
                time.sleep(0.1)
                self.main.request("PING")
            self.main.request("ZADD", "iq", "1", "a")
            self.assertEqual(parse(w.read_reply()), [b"iq", b"a", b"1"])
        finally:
            self.main.request("CONFIG", "SET", "timeout", "0")

    def test_errors_are_errors(self):
        self.assertIsInstance(parse(self.main.request("BZPOPMIN", "x", "-1")), Error)


def w_list(main, w):
    """CLIENT LIST's line for the client w (found by its local port)."""
    port = w.sock.getsockname()[1] if hasattr(w, "sock") else None
    text = parse(main.request("CLIENT", "LIST")).decode()
    for line in text.strip("\n").split("\n"):
        if port is not None and line.split(" ")[1].endswith(":%d" % port):
            return line.encode()
    raise AssertionError("client not listed")


if __name__ == "__main__":
    unittest.main()
