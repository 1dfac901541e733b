"""MONITOR end to end, with two clients: one that monitors and one that
runs commands, at io-threads 1 and at io-threads 4 with the threads always
on (the feed is a reply like any other, so the I/O threads write it).

Checks, in the spirit of Valkey's tests/unit/introspection.tcl: the line's
form (the clock, the database and the address, each argument quoted with
sdscatrepr's escapes); MULTI, the queued commands, then EXEC, and an EXEC
refused after a bad command still shown; passwords redacted (AUTH, HELLO
... AUTH, failed or not); admin commands and refused commands not shown; a
blocked command shown once, not again when it is served; what the monitor
itself may do (PING, not GET; MONITOR again is ignored; RESET ends it);
two monitors fed alike; a long pipeline fed in order and complete. And
CONFIG SET's round trip (every parameter set to the value CONFIG GET
shows) and INFO's fields a monitoring tool reads (memory, the WATCH
counters, commandstats).

Owns nothing but its servers. Valkey anchor: src/server.c (call,
monitorCommand), src/replication.c (replicationFeedMonitors),
src/networking.c (resetCommand, redactClientCommandArgument).

Runs against $SOLOIST_TARGET (default build/soloist-server);
SOLOIST_TARGET=/usr/bin/redis-server checks the tests against the oracle.
"""

import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Error, parse, wait_for  # noqa: E402

LINE = re.compile(r'^(\d+)\.(\d{6}) \[0 127\.0\.0\.1:\d+\] (.*)$')


class MonitorBase:
    EXTRA = ()

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(extra=cls.EXTRA).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def setUp(self):
        self.conns = []
        self.c = self.conn()
        self.c.request("FLUSHALL")
        self.m = self.monitor()

    def tearDown(self):
        for c in self.conns:
            c.close()
        self.assertTrue(self.server.alive(), self.server.log_tail())

    def conn(self):
        c = self.server.conn()
        self.conns.append(c)
        return c

    def monitor(self):
        m = self.conn()
        self.assertEqual(m.request("MONITOR"), b"+OK\r\n")
        return m

    def fed(self, m=None):
        """The next monitor line, without its stamp and address."""
        reply = (m or self.m).read_reply()
        self.assertTrue(reply.startswith(b"+"), reply)
        match = LINE.match(reply[1:-2].decode("latin-1"))
        self.assertIsNotNone(match, reply)
        return match.group(3)

    def test_line_form_and_quoting(self):
        before = time.time()
        self.c.request("SET", "k", b'a\nb"c\\d\x01\xff\t\r\x07\x08 e')
        reply = self.m.read_reply().decode("latin-1")
        match = LINE.match(reply[1:-2])
        self.assertIsNotNone(match, reply)
        self.assertLessEqual(abs(int(match.group(1)) - before), 5)
        self.assertEqual(match.group(3), r'"SET" "k" "a\nb\"c\\d\x01\xff\t\r\a\b e"')
        self.c.request("get", "k")  # as the client spelt it
        self.assertEqual(self.fed(), '"get" "k"')
        self.c.request("SET", "n", "")
        self.assertEqual(self.fed(), '"SET" "n" ""')

    def test_transactions(self):
        self.c.request("MULTI")
        self.c.request("SET", "x", "1")
        self.c.request("INCR", "x")
        self.c.request("EXEC")
        self.assertEqual([self.fed() for _ in range(4)], ['"MULTI"', '"SET" "x" "1"', '"INCR" "x"', '"EXEC"'])
        # A command refused while queueing is not shown; the EXEC it
        # dooms still is. DISCARD shows no queued command.
        self.c.request("MULTI")
        self.assertIsInstance(parse(self.c.request("NOSUCH")), Error)
        self.assertIsInstance(parse(self.c.request("EXEC")), Error)
        self.c.request("MULTI")
        self.c.request("PING")
        self.c.request("DISCARD")
        self.c.request("PING", "end")
        self.assertEqual([self.fed() for _ in range(5)],
                         ['"MULTI"', '"EXEC"', '"MULTI"', '"DISCARD"', '"PING" "end"'])

    def test_redaction(self):
        self.c.request("AUTH", "not-real")
        self.c.request("AUTH", "user", "not-a-password")
        self.c.request("HELLO", "2", "AUTH", "user", "pass")
        self.c.request("HELLO", "3", "AUTH", "default", "pass", "SETNAME", "n")
        self.c.request("HELLO", "2")
        self.assertEqual(self.fed(), '"AUTH" "(redacted)"')
        self.assertEqual(self.fed(), '"AUTH" "(redacted)" "(redacted)"')
        self.assertEqual(self.fed(), '"HELLO" "2" "AUTH" "(redacted)" "(redacted)"')
        self.assertEqual(self.fed(), '"HELLO" "3" "AUTH" "(redacted)" "(redacted)" "SETNAME" "n"')
        self.assertEqual(self.fed(), '"HELLO" "2"')

    def test_not_shown(self):
        self.c.request("CONFIG", "GET", "port")  # admin
        self.c.request("CLIENT", "LIST")  # admin
        self.c.request("GET")  # wrong arity
        self.c.request("NOSUCH", "a")  # unknown
        # admin: not shown; the client becomes a monitor
        self.assertEqual(self.c.request("MONITOR"), b"+OK\r\n")
        other = self.conn()
        other.request("CLIENT", "ID")  # not admin
        other.request("PING", "x")
        self.assertEqual(self.fed(), '"CLIENT" "ID"')
        self.assertEqual(self.fed(), '"PING" "x"')
        # The client that became a monitor hears it too.
        self.assertEqual(self.fed(self.c), '"CLIENT" "ID"')

    def test_blocked_command_shown_once(self):
        w = self.conn()
        w.send_command("BZPOPMIN", "q", "0")
        self.assertTrue(wait_for(lambda: "blocked_clients:1" in parse(self.c.request("INFO", "clients")).decode()))
        self.c.request("ZADD", "q", "1", "a")
        self.assertEqual(parse(w.read_reply()), [b"q", b"a", b"1"])
        self.c.request("ZADD", "q", "2", "b")
        lines = []
        while len(lines) < 3:
            line = self.fed()
            if not line.startswith('"INFO"'):
                lines.append(line)
        self.assertEqual(lines, ['"BZPOPMIN" "q" "0"', '"ZADD" "q" "1" "a"', '"ZADD" "q" "2" "b"'])

    def test_what_a_monitor_may_do(self):
        self.assertEqual(self.m.request("PING"), b"+PONG\r\n")
        self.assertEqual(self.fed(), '"PING"')
        self.assertEqual(self.m.request("GET", "k"), b"-ERR Replica can't interact with the keyspace\r\n")
        self.m.send_command("MONITOR")  # ignored: no reply
        self.assertEqual(self.m.request("ECHO", "sync"), b"$4\r\nsync\r\n")
        self.assertEqual(self.fed(), '"ECHO" "sync"')
        lst = parse(self.c.request("CLIENT", "LIST")).decode()
        self.assertEqual(len(re.findall(r" flags=O ", lst)), 1, lst)
        self.assertEqual(self.m.request("RESET"), b"+RESET\r\n")
        self.assertEqual(self.m.request("GET", "k"), b"$-1\r\n")
        self.c.request("SET", "k", "v")
        self.assertEqual(self.m.request("GET", "k"), b"$1\r\nv\r\n")

    def test_two_monitors(self):
        m2 = self.monitor()
        self.c.request("SET", "a", "1")
        self.assertEqual(self.fed(), '"SET" "a" "1"')
        self.assertEqual(self.fed(m2), '"SET" "a" "1"')
        m2.close()
        self.c.request("SET", "a", "2")
        self.assertEqual(self.fed(), '"SET" "a" "2"')

    def test_long_pipeline_in_order(self):
        n = 3000
        value = "v" * 100
        self.c.send(b"".join(harness.encode("SET", "key:%d" % i, value) for i in range(n)))
        self.assertEqual(self.c.read_replies(n), [b"+OK\r\n"] * n)
        for i in range(n):
            self.assertEqual(self.fed(), '"SET" "key:%d" "%s"' % (i, value))
        if "--io-threads-always-active" in self.EXTRA:
            # The feed went out like every reply: the I/O threads wrote.
            stats = parse(self.c.request("INFO", "stats")).decode()
            writes = int(re.search(r"io_threaded_writes_processed:(\d+)", stats).group(1))
            self.assertGreater(writes, 0)


class ConfigRoundTripTest(harness.ServerTestCase):
    """Valkey's "CONFIG sanity" (tests/unit/introspection.tcl) over the
    wire, with the server's run-time hooks in place: every parameter
    CONFIG GET * shows can be set to the value it shows, in one CONFIG SET
    each and in one CONFIG SET for all of them at once, and shows it
    again; an immutable one, or a protected one (dir, dbfilename: Valkey's
    enable-protected-configs is no by default), is refused with Valkey's
    error."""

    REFUSED = re.compile(rb"^-ERR CONFIG SET failed \(possibly related to argument '([^']+)'\) - "
                         rb"can't set (immutable|protected) config\r\n$")

    def test_every_parameter_to_its_own_value(self):
        c = self.server.conn()
        pairs = parse(c.request("CONFIG", "GET", "*"))
        values = dict(zip(pairs[0::2], pairs[1::2]))
        self.assertGreater(len(values), 20)
        mutable = []
        for name, value in values.items():
            reply = c.request("CONFIG", "SET", name, value)
            if reply != b"+OK\r\n":
                match = self.REFUSED.match(reply)
                self.assertIsNotNone(match, (name, value, reply))
                self.assertEqual(match.group(1), name)
            else:
                mutable.append(name)
            self.assertEqual(parse(c.request("CONFIG", "GET", name)), [name, value])
        args = [x for name in mutable for x in (name, values[name])]
        self.assertEqual(c.request("CONFIG", "SET", *args), b"+OK\r\n")
        self.assertEqual(dict(zip(*[iter(parse(c.request("CONFIG", "GET", "*")))] * 2)), values)
        c.close()


class InfoTest(harness.ServerTestCase):
    """INFO's fields a monitoring tool reads, over the wire: memory's
    (sane against each other), the WATCH counters of clients (Valkey 8;
    Redis 7.0 has none, so this runs against soloist only), and
    commandstats' form."""

    def info(self, c, section):
        text = parse(c.request("INFO", section)).decode()
        return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)

    def test_memory(self):
        c = self.server.conn()
        c.request("SET", "big", "x" * 100000)
        m = self.info(c, "memory")
        used, peak, rss = int(m["used_memory"]), int(m["used_memory_peak"]), int(m["used_memory_rss"])
        self.assertGreater(rss, 0)
        self.assertGreaterEqual(peak, used)
        self.assertGreater(int(m["total_system_memory"]), 0)
        self.assertGreater(float(m["mem_fragmentation_ratio"]), 0)
        if harness.server_kind(self.server.binary) == "soloist":
            # Read together (Valkey samples the resident set in its cron).
            self.assertEqual(int(m["mem_fragmentation_bytes"]), rss - used)
            overhead, dataset = int(m["used_memory_overhead"]), int(m["used_memory_dataset"])
            self.assertEqual(dataset, max(used - overhead, 0))
            self.assertGreaterEqual(dataset, 100000)
        c.request("DEL", "big")
        c.close()

    @unittest.skipIf(harness.server_kind(harness.target_binary()) == "redis", "Redis 7.0 has no WATCH counters")
    def test_watch_counters(self):
        a, b = self.server.conn(), self.server.conn()
        self.assertEqual(a.request("WATCH", "w1", "w2"), b"+OK\r\n")
        self.assertEqual(b.request("WATCH", "w2"), b"+OK\r\n")
        info = self.info(a, "clients")
        self.assertEqual((info["watching_clients"], info["total_watched_keys"]), ("2", "2"))
        keys = list(info)
        self.assertLess(keys.index("blocked_clients"), keys.index("watching_clients"))
        self.assertLess(keys.index("clients_in_timeout_table"), keys.index("total_watched_keys"))
        self.assertLess(keys.index("total_watched_keys"), keys.index("total_blocking_keys"))
        a.request("UNWATCH")
        info = self.info(b, "clients")
        self.assertEqual((info["watching_clients"], info["total_watched_keys"]), ("1", "1"))
        a.close()
        b.close()

    def test_commandstats(self):
        c = self.server.conn()
        c.request("CONFIG", "RESETSTAT")
        c.request("SET", "k", "v")
        c.request("GET")
        c.request("INCR", "k")
        stats = parse(c.request("INFO", "commandstats")).decode()
        self.assertRegex(stats, r"\r\ncmdstat_set:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0\r\n")
        self.assertRegex(stats, r"\r\ncmdstat_get:calls=0,usec=0,usec_per_call=0\.00,rejected_calls=1,failed_calls=0\r\n")
        self.assertRegex(stats, r"\r\ncmdstat_incr:calls=1,[^\r]*,rejected_calls=0,failed_calls=1\r\n")
        self.assertRegex(stats, r"\r\ncmdstat_config\|resetstat:calls=1,[^\r]*,failed_calls=0\r\n")
        c.close()


class MonitorTest(MonitorBase, unittest.TestCase):
    EXTRA = ("--io-threads", "1")


class MonitorThreadsTest(MonitorBase, unittest.TestCase):
    # The oracle has no io-threads-always-active (its threads write when
    # it decides to): the checks stay the same.
    EXTRA = ("--io-threads", "4") + (
        () if harness.server_kind(harness.target_binary()) == "redis" else ("--io-threads-always-active", "yes"))


if __name__ == "__main__":
    unittest.main()
