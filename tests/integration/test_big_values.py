"""Step 7 integration tests: large values, whose GET replies go out by
reference to the stored value (no copy into the reply buffer).

Owns nothing but its server (one for the class, on a free port). Runs at
every io-threads setting suites 30, 31 and 37 give it, so it keeps to a
few sizes (1, 8 and 64 MB), not a sweep. Valkey anchors: src/networking.c
(addReplyBulk's copy avoidance, writevToClient, _postWriteToClient,
checkClientOutputBufferLimits).

Runs against $SOLOIST_TARGET (default build/soloist-server); against
Debian's redis-server the soloist-only checks (INFO reply_refs, the
reply-copy-avoidance switch) are skipped.
"""

import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Conn  # noqa: E402

MB = 1024 * 1024


def value(size, seed):
    """size bytes, not all alike: a random 64 KB block repeated, with the
    seed and the position stamped every 64 KB so a misplaced chunk shows."""
    block = os.urandom(64 * 1024)
    out = bytearray(block * (size // len(block) + 1))[:size]
    for off in range(0, size, 64 * 1024):
        stamp = b"%d:%d" % (seed, off)
        out[off:off + len(stamp)] = stamp[:max(0, size - off)]
    return bytes(out)


def info_field(conn, section, name):
    for line in conn.request("INFO", section).split(b"\r\n"):
        if line.startswith(name.encode() + b":"):
            return int(line.split(b":", 1)[1])
    return None


def raw_reader(port, rcvbuf=65536):
    """A connection that reads only when told (small receive buffer)."""
    r = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    r.settimeout(20)
    r.connect(("127.0.0.1", port))
    return r


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 4 * MB))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return bytes(buf)


class BigValuesTest(harness.ServerTestCase):
    def setUp(self):
        super().setUp()
        self.c = self.server.conn(timeout=30)
        self.assertEqual(self.c.request("FLUSHALL"), b"+OK\r\n")
        self.soloist = self.server.kind != "redis"

    def tearDown(self):
        if self.soloist:
            self.c.request("CONFIG", "SET", "reply-copy-avoidance", "yes")
        self.c.request("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
        self.c.request("FLUSHALL")
        self.c.close()
        super().tearDown()

    def roundtrip(self, key, v):
        self.assertEqual(self.c.request("SET", key, v), b"+OK\r\n")
        got = self.c.request("GET", key)
        want = b"$%d\r\n" % len(v) + v + b"\r\n"
        self.assertEqual(len(got), len(want))
        self.assertTrue(got == want, "GET %s: %d bytes differ" % (key, len(v)))

    def test_round_trip_1_8_64_mb(self):
        refs = info_field(self.c, "stats", "reply_refs") if self.soloist else None
        for i, size in enumerate((1 * MB, 8 * MB, 64 * MB)):
            self.roundtrip("big%d" % i, value(size, i))
        if self.soloist:
            self.assertEqual(info_field(self.c, "stats", "reply_refs"), refs + 3)

    def test_round_trip_copy_avoidance_off(self):
        if not self.soloist:
            self.skipTest("reply-copy-avoidance is soloist's switch")
        self.assertEqual(self.c.request("CONFIG", "SET", "reply-copy-avoidance", "no"), b"+OK\r\n")
        copied = info_field(self.c, "stats", "reply_bytes_copied")
        self.roundtrip("big", value(8 * MB, 7))
        self.assertGreaterEqual(info_field(self.c, "stats", "reply_bytes_copied"), copied + 8 * MB)

    def test_mget_getdel_getex_getset_in_a_pipeline(self):
        a, b = value(2 * MB, 1), value(3 * MB, 2)
        self.c.request("SET", "a", a)
        self.c.request("SET", "b", b)
        self.c.send(harness.encode("MGET", "a", "nokey", "b") + harness.encode("GETEX", "a", "PX", "100000") +
                    harness.encode("GETDEL", "b") + harness.encode("GETSET", "a", "x") + harness.encode("GET", "a") +
                    harness.encode("PING"))
        replies = self.c.read_replies(6, timeout=30)

        def bulk(v):
            return b"$%d\r\n" % len(v) + v + b"\r\n"
        self.assertTrue(replies[0] == b"*3\r\n" + bulk(a) + b"$-1\r\n" + bulk(b), "MGET")
        self.assertTrue(replies[1] == bulk(a), "GETEX")
        self.assertTrue(replies[2] == bulk(b), "GETDEL")
        self.assertTrue(replies[3] == bulk(a), "GETSET: the old value, whole, though the key changed at once")
        self.assertEqual(replies[4], b"$1\r\nx\r\n")
        self.assertEqual(replies[5], b"+PONG\r\n")
        self.assertEqual(self.c.request("EXISTS", "b"), b":0\r\n")

    def test_streamed_pipeline_whole_with_each_switch(self):
        # A client that keeps sending while its replies are written (the
        # case the watermark is for): 2 MB values, 48 GETs sent in bursts
        # of 8 without waiting. Every reply arrives whole and in order with
        # the watermark on (main appends behind a write in flight, counted
        # in INFO), with it off (main waits the write out first), and with
        # the poll offload off (no POLL job is sent).
        vals = [value(2 * MB, 20 + i) for i in range(4)]
        for i, v in enumerate(vals):
            self.c.request("SET", "s%d" % i, v)
        settings = [("io-write-watermark", "yes"), ("io-write-watermark", "no"),
                    ("io-threads-poll-offload", "no")] if self.soloist else [(None, None)]
        try:
            for name, val in settings:
                if name:
                    self.assertEqual(self.c.request("CONFIG", "SET", name, val), b"+OK\r\n")
                polls = info_field(self.c, "iothreads", "io_threads_polls") if self.soloist else 0
                r = raw_reader(self.server.port)
                try:
                    def burst(b):
                        r.sendall(b"".join(harness.encode("GET", "s%d" % ((b + j) % 4)) for j in range(8)))

                    def replies(b):
                        for j in range(8):
                            v = vals[(b + j) % 4]
                            want = b"$%d\r\n" % len(v) + v + b"\r\n"
                            self.assertTrue(recv_exact(r, len(want)) == want,
                                            "%s %s: burst %d, reply %d differs" % (name, val, b, j))
                    burst(0)
                    for b in range(1, 6):  # the next burst goes out before the last one's replies are read
                        burst(b)
                        replies(b - 1)
                    replies(5)
                finally:
                    r.close()
                if name == "io-threads-poll-offload":
                    self.assertEqual(info_field(self.c, "iothreads", "io_threads_polls"), polls)
            if self.soloist:
                for field in ("commands_during_write", "reply_bytes_during_write"):
                    self.assertIsNotNone(info_field(self.c, "stats", field))
                self.assertIsNotNone(info_field(self.c, "iothreads", "io_threads_write_waits"))
        finally:
            if self.soloist:
                self.c.request("CONFIG", "SET", "io-write-watermark", "yes")
                self.c.request("CONFIG", "SET", "io-threads-poll-offload", "yes")

    def test_changed_while_in_flight_still_sent_whole(self):
        # The reader asks for a 32 MB value and reads nothing yet; another
        # client overwrites, appends to and deletes the key, and flushes.
        # The reply carries the old value, byte for byte.
        old = value(32 * MB, 3)
        self.c.request("SET", "k", old)
        r = raw_reader(self.server.port)
        try:
            r.sendall(harness.encode("GET", "k"))
            time.sleep(0.2)
            self.assertEqual(self.c.request("APPEND", "k", "tail"), b":%d\r\n" % (32 * MB + 4))
            self.assertEqual(self.c.request("SET", "k", "new"), b"+OK\r\n")
            self.assertEqual(self.c.request("DEL", "k"), b":1\r\n")
            self.assertEqual(self.c.request("FLUSHALL"), b"+OK\r\n")
            want = b"$%d\r\n" % len(old) + old + b"\r\n"
            got = recv_exact(r, len(want))
            self.assertTrue(got == want, "the in-flight reply changed")
        finally:
            r.close()

    def test_slow_readers_disconnected_memory_returns(self):
        # Readers that never read: 40 GETs of a 4 MB value each queue 160 MB
        # of replies; the 16 MB hard limit closes them, counting the bytes
        # of referenced values too, and the memory held for them goes back.
        self.assertEqual(self.c.request("CONFIG", "SET", "client-output-buffer-limit", "normal 16mb 0 0"),
                         b"+OK\r\n")
        self.c.request("SET", "v", value(4 * MB, 5))
        modes = ("yes", "no") if self.soloist else ("",)
        for mode in modes:
            if mode:
                self.c.request("CONFIG", "SET", "reply-copy-avoidance", mode)
            base = info_field(self.c, "memory", "used_memory")
            clients = info_field(self.c, "clients", "connected_clients")
            readers = [raw_reader(self.server.port, 16384) for _ in range(3)]
            for r in readers:
                try:
                    r.sendall(harness.encode("GET", "v") * 40)
                except (BrokenPipeError, ConnectionResetError):
                    pass
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                now = info_field(self.c, "clients", "connected_clients")
                if now <= clients:
                    break
                time.sleep(0.05)
            self.assertLessEqual(now, clients, "mode %s: slow readers not all disconnected" % mode)
            for r in readers:
                r.close()
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                used = info_field(self.c, "memory", "used_memory")
                if used <= base + 1 * MB:
                    break
                time.sleep(0.05)
            self.assertLessEqual(used, base + 1 * MB, "mode %s: used_memory %d, baseline %d" % (mode, used, base))


if __name__ == "__main__":
    unittest.main()
