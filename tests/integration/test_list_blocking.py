"""Blocking list pops end to end, where a transcript cannot show it:
CLIENT UNBLOCK of a real client blocked in BLPOP, BLMOVE and BLMPOP (its
id differs between servers), a killed or disconnected waiter served
nothing, many waiters on one list served in FIFO order by one push, a
BRPOPLPUSH chain through several lists, timeouts answered on time with
BLMOVE's null array, pipelined commands resumed behind a served pop, and
a waiter passed over while the key holds another type.

Owns nothing but its server. Valkey anchor: src/t_list.c
(blockingPopGenericCommand, blmoveGenericCommand), src/blocked.c
(blockForKeys, handleClientsBlockedOnKey, unblockClientOnTimeout,
unblockClientOnError), src/networking.c clientCommand (CLIENT UNBLOCK).

Runs against $SOLOIST_TARGET (default build/soloist-server), with
$SOLOIST_SERVER_ARGS (the I/O-thread runs of suite 31).
"""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import info_clients, parse, wait_for  # noqa: E402

# How late a timeout may be answered: the cron's period (100 ms at hz 10)
# and a loaded two-core machine.
LATE = 1.0


class ListBlockingTest(harness.ClientsTestCase):
    def client_id(self, cmdname):
        lines = parse(self.main.request("CLIENT", "LIST")).decode().split("\n")
        return [ln for ln in lines if "cmd=%s " % cmdname in ln][0].split(" ")[0].split("=")[1]

    def test_client_unblock(self):
        w = self.block("BLPOP", "u", "0")
        wid = self.client_id("blpop")
        self.assertEqual(parse(self.main.request("CLIENT", "UNBLOCK", wid)), 1)
        self.assertEqual(w.read_reply(), b"*-1\r\n")
        self.assertEqual(parse(self.main.request("CLIENT", "UNBLOCK", wid)), 0)
        # BLMOVE unblocked as a timeout: the null array, as its timeout.
        w.send_command("BLMOVE", "u", "d", "LEFT", "RIGHT", "0")
        self.assertTrue(wait_for(lambda: self.blocked() == 1))
        self.assertEqual(parse(self.main.request("CLIENT", "UNBLOCK", wid, "TIMEOUT")), 1)
        self.assertEqual(w.read_reply(), b"*-1\r\n")
        w.send_command("BLMPOP", "0", "2", "u", "v", "LEFT", "COUNT", "2")
        self.assertTrue(wait_for(lambda: self.blocked() == 1))
        self.assertEqual(parse(self.main.request("CLIENT", "UNBLOCK", wid, "ERROR")), 1)
        self.assertEqual(w.read_reply(), b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")
        # Nothing waits any more: a push stays where it is.
        self.main.request("RPUSH", "u", "x")
        self.assertEqual(parse(self.main.request("LRANGE", "u", "0", "-1")), [b"x"])
        self.assertEqual(parse(w.request("PING")), b"PONG")

    def test_killed_and_gone_waiters_get_nothing(self):
        w = self.block("BLPOP", "kq", "0")
        other = self.block("BRPOP", "kq", "0")
        gone = self.block("BLPOP", "kq", "5")
        gone.close()
        self.assertTrue(wait_for(lambda: self.blocked() == 2))
        wid = self.client_id("blpop")
        self.assertEqual(parse(self.main.request("CLIENT", "KILL", "ID", wid)), 1)
        w.wait_closed()
        self.assertTrue(wait_for(lambda: self.blocked() == 1))
        self.main.request("RPUSH", "kq", "a", "b")
        self.assertEqual(parse(other.read_reply()), [b"kq", b"b"])
        self.assertEqual(parse(self.main.request("LRANGE", "kq", "0", "-1")), [b"a"])
        self.assertEqual(info_clients(self.main)["total_blocking_keys"], "0")

    def test_fifo_among_many_waiters(self):
        ws = [self.block("BLPOP" if i % 2 else "BRPOP", "fq", "0") for i in range(10)]
        self.main.request("RPUSH", "fq", *["e%d" % i for i in range(12)])
        # Each takes one element in the order it blocked: BLPOP from the
        # head, BRPOP from the tail of what is left.
        head, tail = 0, 11
        for i, w in enumerate(ws):
            if i % 2:
                want, head = b"e%d" % head, head + 1
            else:
                want, tail = b"e%d" % tail, tail - 1
            self.assertEqual(parse(w.read_reply()), [b"fq", want])
        self.assertEqual(parse(self.main.request("LRANGE", "fq", "0", "-1")), [b"e5", b"e6"])

    def test_brpoplpush_chain(self):
        # w1 moves a -> b, w2 b -> c, w3 pops c: one push goes all the way.
        w1 = self.block("BRPOPLPUSH", "a", "b", "0")
        w2 = self.block("BLMOVE", "b", "c", "LEFT", "RIGHT", "0")
        w3 = self.block("BLPOP", "c", "0")
        self.main.request("LPUSH", "a", "x")
        self.assertEqual(parse(w1.read_reply()), b"x")
        self.assertEqual(parse(w2.read_reply()), b"x")
        self.assertEqual(parse(w3.read_reply()), [b"c", b"x"])
        self.assertEqual(parse(self.main.request("EXISTS", "a", "b", "c")), 0)
        self.assertEqual(self.blocked(), 0)

    def test_timeouts_on_time(self):
        cases = [("BLPOP", "t1", "0.2"), ("BLMOVE", "t2", "d", "LEFT", "LEFT", "0.3"),
                 ("BRPOPLPUSH", "t3", "d", "0.1"), ("BLMPOP", "0.25", "1", "t4", "RIGHT")]
        ws = []
        for cmd in cases:
            w = self.conn()
            w.send_command(*cmd)
            timeout = float(cmd[-1] if cmd[0] != "BLMPOP" else cmd[1])
            ws.append((w, time.monotonic() + timeout))
        for w, due in ws:
            self.assertEqual(w.read_reply(timeout=3), b"*-1\r\n")
            now = time.monotonic()
            self.assertGreaterEqual(now, due - 0.01)
            self.assertLess(now, due + LATE)
        self.assertEqual(parse(self.main.request("EXISTS", "d")), 0)

    def test_pipeline_resumes_in_order(self):
        w = self.conn()
        w.send(harness.encode("BLPOP", "pq", "0") + harness.encode("RPUSH", "pa", "1") +
               harness.encode("LLEN", "pa") + harness.encode("BRPOP", "pq2", "0.05") +
               harness.encode("LPOP", "pa"))
        self.assertTrue(wait_for(lambda: self.blocked() == 1))
        self.assertEqual(parse(self.main.request("EXISTS", "pa")), 0)
        self.main.request("RPUSH", "pq", "v")
        replies = [parse(r) for r in w.read_replies(5)]
        self.assertEqual(replies, [[b"pq", b"v"], 1, 1, None, b"1"])

    def test_passed_over_while_another_type(self):
        w = self.block("BLPOP", "t", "0")
        self.main.request("SET", "t", "x")
        self.main.request("DEL", "t")
        self.main.request("ZADD", "t", "1", "a")
        self.assertEqual(self.blocked(), 1)
        self.main.request("DEL", "t")
        self.main.request("RPUSH", "t", "l")
        self.assertEqual(parse(w.read_reply()), [b"t", b"l"])

    def test_blocked_in_a_long_list_world(self):
        # A long list elsewhere, many nodes, does not disturb the waiters.
        self.main.request("CONFIG", "SET", "list-max-listpack-size", "4")
        try:
            self.main.request("RPUSH", "big", *[str(i) for i in range(1000)])
            w = self.block("BLMPOP", "0", "2", "none", "dst", "RIGHT", "COUNT", "3")
            self.main.request("LMOVE", "big", "dst", "LEFT", "LEFT")
            self.assertEqual(parse(w.read_reply()), [b"dst", [b"0"]])
            self.assertEqual(parse(self.main.request("LLEN", "big")), 999)
            self.assertEqual(parse(self.main.request("LINDEX", "big", "500")), b"501")
        finally:
            self.main.request("CONFIG", "SET", "list-max-listpack-size", "-2")


if __name__ == "__main__":
    unittest.main()
