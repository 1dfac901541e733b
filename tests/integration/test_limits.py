"""Step 0 integration tests: the limits a Valkey-compatible server enforces
— each must end in a protocol error or a disconnect, never a crash.

Owns nothing but its servers (one per test class, on a free port).
Valkey anchors: src/networking.c (client-query-buffer-limit check in
readQueryFromClient / handleReadResult, proto-max-bulk-len in
processMultibulkBuffer, checkClientOutputBufferLimits for the normal
class, "max number of clients reached" in acceptCommonHandler).

Runs against $SOLOIST_TARGET (default build/soloist-server); with
SOLOIST_TARGET=/usr/bin/redis-server the same tests check themselves
against the oracle.
"""

import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Conn, ConnectionClosed, ReplyTimeout, Server  # noqa: E402


def drain_until_closed(conn, timeout):
    """Read and discard until EOF; returns (closed, bytes_read)."""
    deadline = time.monotonic() + timeout
    total = len(conn.buf)
    conn.buf.clear()
    while time.monotonic() < deadline:
        conn.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = conn.sock.recv(1 << 20)
        except socket.timeout:
            return False, total
        except (ConnectionResetError, BrokenPipeError):
            return True, total
        if not chunk:
            return True, total
        total += len(chunk)
    return False, total


class LimitsTest(harness.ServerTestCase):
    def setUp(self):
        super().setUp()
        self.c = self.server.conn()
        self.assertEqual(self.c.request("FLUSHALL"), b"+OK\r\n")

    def tearDown(self):
        self.c.close()
        # Whatever a test did, the server must still be alive and
        # answering on a fresh connection.
        super().tearDown()
        c = self.server.conn()
        try:
            for name, value in (("client-query-buffer-limit", "1gb"),
                                ("proto-max-bulk-len", "512mb"),
                                ("client-output-buffer-limit",
                                 "normal 0 0 0")):
                c.request("CONFIG", "SET", name, value)
            self.assertEqual(c.request("PING"), b"+PONG\r\n")
        finally:
            c.close()

    def test_query_buffer_limit_disconnects(self):
        c = self.c
        self.assertEqual(
            c.request("CONFIG", "SET", "client-query-buffer-limit", "1mb"),
            b"+OK\r\n")
        # A 3 MB argument that is never finished: the query buffer grows
        # past 1 MB and the server must close the connection.
        c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n")
        sent = 0
        chunk = b"x" * 65536
        try:
            while sent < 2500000:
                c.sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        closed, _ = drain_until_closed(c, 5)
        self.assertTrue(closed, "connection still open after %d bytes" % sent)
        c2 = self.server.conn()
        self.assertEqual(c2.request("EXISTS", "k"), b":0\r\n")
        c2.close()

    def test_query_buffer_limit_allows_smaller_requests(self):
        c = self.c
        c.request("CONFIG", "SET", "client-query-buffer-limit", "1mb")
        value = b"v" * 500000
        self.assertEqual(c.request("SET", "k", value), b"+OK\r\n")
        self.assertEqual(c.request("STRLEN", "k"), b":500000\r\n")

    def test_proto_max_bulk_len(self):
        c = self.c
        self.assertEqual(
            c.request("CONFIG", "SET", "proto-max-bulk-len", "1mb"), b"+OK\r\n")
        self.assertEqual(c.request("CONFIG", "GET", "proto-max-bulk-len"),
                         b"*2\r\n$18\r\nproto-max-bulk-len\r\n$7\r\n1048576\r\n")
        # exactly the limit is accepted
        self.assertEqual(c.request("SET", "k", b"a" * 1048576), b"+OK\r\n")
        # growing a string past it is refused
        self.assertEqual(
            c.request("APPEND", "k", "b"),
            b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n")
        self.assertEqual(
            c.request("SETRANGE", "k", "1048576", "b"),
            b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n")
        self.assertEqual(c.request("SETRANGE", "k", "1048575", "b"), b":1048576\r\n")
        # one byte more in a request is a protocol error, then a close
        c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
        self.assertEqual(c.read_reply(),
                         b"-ERR Protocol error: invalid bulk length\r\n")
        self.assertTrue(c.wait_closed(5))

    def test_output_buffer_limit_normal(self):
        c = self.c
        self.assertEqual(
            c.request("CONFIG", "SET", "client-output-buffer-limit",
                      "normal 1mb 0 0"), b"+OK\r\n")
        self.assertEqual(c.request("SET", "big", b"x" * 100000), b"+OK\r\n")
        # A reader that never reads: a small receive buffer, then 1000 GETs
        # of 100 KB (100 MB of replies). The server must drop the client
        # once more than 1 MB is queued for it.
        r = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        r.settimeout(10)
        r.connect(("127.0.0.1", self.server.port))
        slow = Conn.__new__(Conn)
        slow.sock, slow.buf, slow.closed, slow.timeout = r, bytearray(), False, 10
        req = harness.encode("GET", "big") * 1000
        try:
            r.sendall(req)
        except (BrokenPipeError, ConnectionResetError):
            pass
        time.sleep(0.5)
        closed, got = drain_until_closed(slow, 10)
        slow.close()
        self.assertTrue(closed, "slow reader not disconnected")
        self.assertLess(got, 50 * 1000 * 1000,
                        "read %d bytes: the limit did not apply" % got)
        c2 = self.server.conn()
        self.assertEqual(c2.request("STRLEN", "big"), b":100000\r\n")
        c2.close()

    def test_output_buffer_limit_reader_that_reads_is_kept(self):
        c = self.c
        c.request("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0")
        c.request("SET", "big", b"x" * 100000)
        # One 100 KB reply at a time stays under the 1 MB hard limit.
        # (A pipeline of 50 would not: all 50 replies are queued while the
        # batch is executed, before any is written — in Valkey too.)
        for _ in range(20):
            self.assertEqual(c.request("GET", "big"), b"$100000\r\n" + b"x" * 100000 + b"\r\n")


class MaxClientsTest(unittest.TestCase):
    def test_third_client_refused(self):
        with Server(extra=["--maxclients", "2"]) as s:
            a = s.conn()
            # Wait until the readiness probe's connection is gone.
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                info = a.request("INFO", "clients")
                if b"connected_clients:1\r\n" in info:
                    break
                time.sleep(0.05)
            b = s.conn()
            self.assertEqual(b.request("PING"), b"+PONG\r\n")
            c = s.conn()
            try:
                r = c.read_reply(timeout=5)
            except ConnectionClosed:
                r = b"<closed without a reply>"
            self.assertEqual(r, b"-ERR max number of clients reached\r\n")
            self.assertTrue(c.wait_closed(5))
            c.close()
            # the two admitted clients still work, and a slot frees up
            self.assertEqual(a.request("PING"), b"+PONG\r\n")
            b.close()
            deadline = time.monotonic() + 5
            ok = False
            while time.monotonic() < deadline and not ok:
                d = s.conn()
                try:
                    ok = d.request("PING") == b"+PONG\r\n"
                except (ConnectionClosed, ReplyTimeout):
                    pass
                d.close()
                time.sleep(0.05)
            self.assertTrue(ok, "no slot after a client left")
            a.close()


class DefaultsTest(unittest.TestCase):
    """Protected mode cannot be tested without a second interface; check
    what can be: the setting, and that the default bind is loopback."""

    def test_protected_mode_and_default_bind(self):
        s = Server(bind=False).start()
        try:
            c = s.conn()
            self.assertEqual(c.request("CONFIG", "GET", "protected-mode"),
                             b"*2\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n")
            v = harness.parse(c.request("CONFIG", "GET", "bind"))
            c.close()
            if s.kind == "redis":
                self.skipTest("redis-server binds all interfaces by default")
            self.assertEqual(v[0], b"bind")
            addrs = v[1].split()
            self.assertIn(b"127.0.0.1", addrs)
            self.assertNotIn(b"*", addrs)
            self.assertNotIn(b"0.0.0.0", addrs)
        finally:
            s.stop()


def non_loopback_ipv4():
    """An IPv4 address of this host outside 127.0.0.0/8, or None."""
    import fcntl
    import struct
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for _idx, name in socket.if_nameindex():
            try:
                req = struct.pack("256s", name.encode()[:15])
                addr = socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, req)[20:24])  # SIOCGIFADDR
            except OSError:
                continue
            if not addr.startswith("127."):
                return addr
    finally:
        s.close()
    return None


# Valkey's refusal (clientAcceptHandler, src/networking.c), byte for byte.
PROTECTED_MODE_DENIED = (
    b"-DENIED Running in protected mode because protected mode is enabled and no password is set for the "
    b"default user. In this mode connections are only accepted from the loopback interface. If you want to "
    b"connect from external computers, you may adopt one of the following solutions: 1) Just disable "
    b"protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by "
    b"connecting from the same host the server is running, however MAKE SURE it's not publicly accessible "
    b"from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can "
    b"just disable the protected mode by editing the configuration file, and setting the protected mode "
    b"option to 'no', and then restarting the server. 3) If you started the server manually just for "
    b"testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for "
    b"the default user. NOTE: You only need to do one of the above things in order for the server to start "
    b"accepting connections from the outside.\r\n")


class ProtectedModeTest(unittest.TestCase):
    """A peer outside loopback meets protected mode: Valkey's text, then
    the connection closes. Needs a second interface on this host."""

    def test_denied_text_from_a_non_loopback_peer(self):
        addr = non_loopback_ipv4()
        if addr is None:
            self.skipTest("no IPv4 address outside loopback on this host")
        s = Server(bind=False, extra=["--bind", "0.0.0.0"]).start()
        try:
            if s.kind == "redis":
                self.skipTest("Redis 7.0's refusal names Redis; Valkey's text is the reference")
            c = Conn(s.port, host=addr)
            c.sock.settimeout(5)
            closed, got = False, b""
            while not closed:
                chunk = c.sock.recv(4096)
                closed = not chunk
                got += chunk
            c.close()
            self.assertEqual(got, PROTECTED_MODE_DENIED)
            # Loopback is still served, and the refusal was counted.
            c = s.conn()
            self.assertEqual(c.request("PING"), b"+PONG\r\n")
            self.assertIn(b"rejected_connections:1", c.request("INFO", "stats"))
            c.close()
        finally:
            s.stop()


class AcceptBatchTest(unittest.TestCase):
    """max-new-connections-per-cycle: Valkey's name, default and range;
    a burst larger than one batch is still accepted, over several turns."""

    def test_config_and_burst(self):
        s = Server().start()
        try:
            c = s.conn()
            self.assertEqual(c.request("CONFIG", "GET", "max-new-connections-per-cycle"),
                             b"*2\r\n$29\r\nmax-new-connections-per-cycle\r\n$2\r\n10\r\n")
            self.assertTrue(c.request("CONFIG", "SET", "max-new-connections-per-cycle", "0").startswith(b"-ERR"))
            self.assertTrue(c.request("CONFIG", "SET", "max-new-connections-per-cycle", "1001").startswith(b"-ERR"))
            self.assertEqual(c.request("CONFIG", "SET", "max-new-connections-per-cycle", "1"), b"+OK\r\n")
            burst = [s.conn() for _ in range(40)]
            for b in burst:
                self.assertEqual(b.request("PING"), b"+PONG\r\n")
            for b in burst:
                b.close()
            c.close()
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main()
