"""Step 0 integration tests: commands whose behaviour involves more than one
connection (a transcript drives one), compared with what Valkey does —
CLIENT ID/LIST/KILL/SETNAME across clients, per-connection protocol
version, and keyspace changes seen by other clients.

Owns nothing but its server. Valkey anchor: src/networking.c
clientCommand (CLIENT LIST / KILL), src/server.c helloCommand.

Runs against $SOLOIST_TARGET (default build/soloist-server).
"""

import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import parse  # noqa: E402


def client_list(conn):
    """CLIENT LIST as a list of {field: value} dicts."""
    text = parse(conn.request("CLIENT", "LIST")).decode()
    out = []
    for line in text.strip("\n").split("\n"):
        out.append(dict(f.split("=", 1) for f in line.split(" ") if "=" in f))
    return out


class ClientsTest(harness.ServerTestCase):
    def setUp(self):
        super().setUp()
        self.conns = []

    def tearDown(self):
        for c in self.conns:
            c.close()
        super().tearDown()

    def conn(self):
        # short replies only here: a reply that never comes fails in 5 s
        c = self.server.conn(timeout=5 * (3 if os.environ.get("SOLOIST_SANITIZER") else 1))
        self.conns.append(c)
        return c

    def wait_clients(self, c, n, timeout=5):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(client_list(c)) == n:
                return True
            time.sleep(0.05)
        return False

    # Valkey 8.1's CLIENT LIST fields, in its order (src/networking.c
    # catClientInfoString).
    VALKEY_FIELDS = ("id addr laddr fd name age idle flags db sub psub ssub multi watch qbuf qbuf-free argv-mem "
                     "multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp lib-name lib-ver "
                     "tot-net-in tot-net-out tot-cmds").split()

    def info_fields(self, c):
        line = parse(c.request("CLIENT", "INFO")).decode().rstrip("\n")
        return [f.split("=", 1) for f in line.split(" ")]

    def test_client_info_fields_in_valkey_order(self):
        if self.server.kind == "redis":
            self.skipTest("Redis 7.0 prints fewer fields (no watch, lib-*, tot-*)")
        c = self.conn()
        self.assertEqual([k for k, _ in self.info_fields(c)], self.VALKEY_FIELDS)

    def test_client_info_counts_bytes_and_commands(self):
        """tot-net-in counts every byte read (this CLIENT INFO's too),
        tot-net-out every byte written before it, tot-cmds the commands
        run before it."""
        if self.server.kind == "redis":
            self.skipTest("Redis 7.0 has no tot-net-in, tot-net-out, tot-cmds")
        c = self.conn()
        self.assertEqual(c.request("PING"), b"+PONG\r\n")
        c.send(b"SET k v\r\n")
        self.assertEqual(c.read_reply(), b"+OK\r\n")
        sent = len(harness.encode("PING")) + len(b"SET k v\r\n") + len(harness.encode("CLIENT", "INFO"))
        f = dict(self.info_fields(c))
        self.assertEqual(int(f["tot-net-in"]), sent)
        self.assertEqual(int(f["tot-net-out"]), len(b"+PONG\r\n+OK\r\n"))
        self.assertEqual(int(f["tot-cmds"]), 2)
        self.assertEqual(int(f["argv-mem"]), len("client") + len("info"))

    def test_client_info_transaction_fields(self):
        """multi= counts the queued commands (-1 outside MULTI), multi-mem
        their argument bytes plus a pointer per argument, watch= the
        watched keys, and the flags show x (MULTI) and d (a watched key
        was touched)."""
        c, other = self.conn(), self.conn()
        c.request("WATCH", "k1", "k2", "k1")
        f = dict(self.info_fields(c))
        self.assertEqual((f["flags"], f["multi"]), ("N", "-1"))
        if self.server.kind != "redis":
            self.assertEqual(f["watch"], "2")
        other.request("SET", "k2", "x")
        f = dict(self.info_fields(c))
        self.assertEqual(f["flags"], "d")
        if self.server.kind != "redis":
            self.assertEqual(f["watch"], "0")  # a touched client forgets its watches
        c.request("UNWATCH")
        c.request("MULTI")
        c.request("SET", "a", "1")
        c.request("INCR", "a")
        theirs = [x for x in client_list(other) if x["flags"] == "x"]
        self.assertEqual(len(theirs), 1)
        self.assertEqual(theirs[0]["multi"], "2")
        self.assertEqual(int(theirs[0]["multi-mem"]), (3 + 1 + 1 + 3 * 8) + (4 + 1 + 2 * 8))
        self.assertEqual(parse(c.request("EXEC")), [b"OK", 2])

    def test_client_ids_increase_and_list_shows_all(self):
        a, b = self.conn(), self.conn()
        ia = parse(a.request("CLIENT", "ID"))
        ib = parse(b.request("CLIENT", "ID"))
        self.assertGreater(ib, ia)
        self.assertEqual(b.request("CLIENT", "SETNAME", "bee"), b"+OK\r\n")
        self.assertTrue(self.wait_clients(a, 2))
        by_id = {int(e["id"]): e for e in client_list(a)}
        self.assertEqual(by_id[ib]["name"], "bee")
        self.assertEqual(by_id[ia]["name"], "")
        self.assertEqual(by_id[ia]["cmd"], "client|list")
        self.assertEqual(by_id[ib]["cmd"], "client|setname")
        self.assertRegex(by_id[ia]["addr"], r"^127\.0\.0\.1:\d+$")
        self.assertEqual(parse(a.request("CLIENT", "LIST", "ID", str(ib)))
                         .decode().count("\n"), 1)

    def test_client_kill_id(self):
        a, b = self.conn(), self.conn()
        ib = parse(b.request("CLIENT", "ID"))
        self.assertEqual(a.request("CLIENT", "KILL", "ID", str(ib)), b":1\r\n")
        self.assertTrue(b.wait_closed(5))
        self.assertEqual(a.request("CLIENT", "KILL", "ID", str(ib)), b":0\r\n")

    def test_client_kill_addr_old_form(self):
        a, b = self.conn(), self.conn()
        self.assertTrue(self.wait_clients(a, 2))
        ib = parse(b.request("CLIENT", "ID"))
        addr = [e["addr"] for e in client_list(a) if int(e["id"]) == ib][0]
        self.assertEqual(a.request("CLIENT", "KILL", addr), b"+OK\r\n")
        self.assertTrue(b.wait_closed(5))
        self.assertEqual(a.request("CLIENT", "KILL", addr),
                         b"-ERR No such client\r\n")
        # the old form may kill the caller itself: +OK, then EOF
        ia = parse(a.request("CLIENT", "ID"))
        own = [e["addr"] for e in client_list(a) if int(e["id"]) == ia][0]
        self.assertEqual(a.request("CLIENT", "KILL", own), b"+OK\r\n")
        self.assertTrue(a.wait_closed(5))

    def test_client_kill_type_skipme(self):
        a, b, c = self.conn(), self.conn(), self.conn()
        self.assertTrue(self.wait_clients(a, 3))
        self.assertEqual(a.request("CLIENT", "KILL", "TYPE", "normal",
                                   "SKIPME", "yes"), b":2\r\n")
        self.assertTrue(b.wait_closed(5))
        self.assertTrue(c.wait_closed(5))
        self.assertEqual(a.request("PING"), b"+PONG\r\n")
        # SKIPME no kills the caller too: it gets the count, then EOF
        self.assertEqual(a.request("CLIENT", "KILL", "TYPE", "normal",
                                   "SKIPME", "no"), b":1\r\n")
        self.assertTrue(a.wait_closed(5))

    def test_setinfo_shown_to_other_clients(self):
        """CLIENT SETINFO's LIB-NAME and LIB-VER appear after resp= in
        every CLIENT LIST line (empty until set; an empty value clears)."""
        if self.server.kind == "redis":
            self.skipTest("Redis 7.0 has no CLIENT SETINFO")
        a, b = self.conn(), self.conn()
        ida = parse(a.request("CLIENT", "ID"))
        self.assertEqual(a.request("CLIENT", "SETINFO", "LIB-NAME", "redis-py"), b"+OK\r\n")
        self.assertEqual(a.request("CLIENT", "SETINFO", "lib-ver", "5.0.1"), b"+OK\r\n")
        mine = [x for x in client_list(b) if x["id"] == str(ida)][0]
        self.assertEqual((mine["lib-name"], mine["lib-ver"]), ("redis-py", "5.0.1"))
        self.assertRegex(parse(b.request("CLIENT", "LIST", "ID", str(ida))).decode(),
                         r" resp=2 lib-name=redis-py lib-ver=5\.0\.1 tot-net-in=\d+ tot-net-out=\d+ tot-cmds=\d+\n$")
        a.request("CLIENT", "SETINFO", "lib-ver", "")
        mine = [x for x in client_list(b) if x["id"] == str(ida)][0]
        self.assertEqual(mine["lib-ver"], "")
        others = [x for x in client_list(b) if x["id"] != str(ida)]
        self.assertTrue(all(x["lib-name"] == "" for x in others))

    def test_protocol_is_per_connection(self):
        a, b = self.conn(), self.conn()
        self.assertEqual(a.request("HELLO", "3")[:1], b"%")
        self.assertEqual(a.request("GET", "nothing"), b"_\r\n")
        self.assertEqual(b.request("GET", "nothing"), b"$-1\r\n")
        r = parse(a.request("HELLO"))
        self.assertEqual(r[b"proto"], 3)
        self.assertIsInstance(r[b"id"], int)
        self.assertIn(r[b"server"], (b"redis", b"valkey", b"soloist"))

    def test_writes_seen_by_other_clients(self):
        a, b = self.conn(), self.conn()
        a.request("SET", "shared", "1")
        self.assertEqual(b.request("INCR", "shared"), b":2\r\n")
        self.assertEqual(a.request("GET", "shared"), b"$1\r\n2\r\n")
        b.request("FLUSHALL")
        self.assertEqual(a.request("EXISTS", "shared"), b":0\r\n")

    def test_many_connections(self):
        conns = [self.conn() for _ in range(100)]
        for i, c in enumerate(conns):
            c.send(harness.encode("SET", "c:%d" % i, str(i)))
        for c in conns:
            self.assertEqual(c.read_reply(), b"+OK\r\n")
        self.assertEqual(conns[0].request("DBSIZE")[:1], b":")
        for i, c in enumerate(conns):
            self.assertEqual(c.request("GET", "c:%d" % i),
                             b"$%d\r\n%d\r\n" % (len(str(i)), i))
        info = parse(conns[0].request("INFO", "clients")).decode()
        n = int(re.search(r"connected_clients:(\d+)", info).group(1))
        self.assertGreaterEqual(n, 100)


if __name__ == "__main__":
    unittest.main()
