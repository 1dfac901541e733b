"""Step 0 integration tests: the server's life — clean exits (SHUTDOWN,
SIGTERM, SIGINT), the idle timeout, active expiry, and what INFO reports.

Owns nothing but its servers (each on a free loopback port).
Valkey anchors: src/server.c (prepareForShutdown / finishShutdown; the
SIGTERM and SIGINT handler sigShutdownHandler; clientsCronHandleTimeout;
activeExpireCycle in databasesCron; genValkeyInfoString for INFO).

Runs against $SOLOIST_TARGET (default build/soloist-server).
"""

import os
import re
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import ConnectionClosed, Server  # noqa: E402


def wait_port_free(port, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if harness.port_is_free(port):
            return True
        time.sleep(0.05)
    return False


def info_fields(text):
    """INFO's text as {section: {field: value}} (section names lowercased)."""
    sections, cur = {}, None
    for line in text.split("\r\n"):
        if line.startswith("# "):
            cur = sections.setdefault(line[2:].strip().lower(), {})
        elif line and cur is not None and ":" in line:
            k, v = line.split(":", 1)
            cur[k] = v
    return sections


def info(conn, *section):
    r = harness.parse(conn.request("INFO", *section))
    return r.decode("utf-8", "replace")


class ExitTest(unittest.TestCase):
    def check_clean_exit(self, s, port):
        rc = s.wait(10)
        self.assertIsNotNone(rc, "server did not exit within 10 s")
        self.assertEqual(rc, 0, "exit status %s\n%s" % (rc, s.log_tail()))
        self.assertTrue(wait_port_free(port), "port %d still bound" % port)

    def shutdown_with(self, *args):
        s = Server().start()
        try:
            c = s.conn()
            c.request("SET", "a", "b")
            c.send(harness.encode("SHUTDOWN", *args))
            # SHUTDOWN replies nothing on success: the connection closes.
            with self.assertRaises(ConnectionClosed):
                c.read_reply(timeout=10)
            c.close()
            self.check_clean_exit(s, s.port)
        finally:
            s.kill()

    def test_shutdown_command(self):
        self.shutdown_with()

    def test_shutdown_nosave(self):
        self.shutdown_with("NOSAVE")

    def test_sigterm(self):
        s = Server().start()
        try:
            c = s.conn()  # an open client must not keep it alive
            c.request("SET", "a", "b")
            s.signal(signal.SIGTERM)
            self.check_clean_exit(s, s.port)
            c.close()
        finally:
            s.kill()

    def test_sigint(self):
        s = Server().start()
        try:
            s.signal(signal.SIGINT)
            self.check_clean_exit(s, s.port)
        finally:
            s.kill()


class TimeoutTest(unittest.TestCase):
    def test_idle_client_is_closed(self):
        with Server(extra=["--timeout", "1"]) as s:
            idle = s.conn()
            self.assertEqual(idle.request("PING"), b"+PONG\r\n")
            busy = s.conn()
            t0 = time.monotonic()
            closed = False
            # keep a second client busy meanwhile: it must survive
            while time.monotonic() - t0 < 5 and not closed:
                self.assertEqual(busy.request("PING"), b"+PONG\r\n")
                closed = idle.wait_closed(0.2)
            self.assertTrue(closed, "idle client still open after 5 s")
            self.assertGreater(time.monotonic() - t0, 0.8)
            self.assertEqual(busy.request("PING"), b"+PONG\r\n")
            busy.close()
            idle.close()

    def test_config_set_timeout(self):
        with Server() as s:
            c = s.conn()
            self.assertEqual(c.request("CONFIG", "SET", "timeout", "1"), b"+OK\r\n")
            idle = s.conn()
            idle.request("PING")
            self.assertTrue(idle.wait_closed(5), "idle client still open")
            idle.close()
            c.close()


class IdleBuffersTest(unittest.TestCase):
    """A connection's buffers as CLIENT LIST shows them: none before it
    speaks, a 1 KB reply buffer after its first reply, none again once it
    has been idle for 2 s (the cron gives the buffer back)."""

    def test_reply_buffer_comes_and_goes(self):
        s = Server().start()
        try:
            if s.kind == "redis":
                self.skipTest("redis-server 7.0 keeps a reply buffer for every client")
            watcher, idle = s.conn(), s.conn()

            def fields_of(conn_id):
                text = harness.parse(watcher.request("CLIENT", "LIST")).decode()
                for line in text.splitlines():
                    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
                    if f["id"] == conn_id:
                        return f
                self.fail("client id=%s not in CLIENT LIST" % conn_id)

            conn_id = str(harness.parse(idle.request("CLIENT", "ID")))
            f = fields_of(conn_id)
            self.assertEqual((f["qbuf"], f["qbuf-free"]), ("0", "0"))
            self.assertEqual(f["rbs"], "1024")  # CLIENT ID's reply allocated it
            deadline = time.monotonic() + 5
            while fields_of(conn_id)["rbs"] != "0":
                self.assertLess(time.monotonic(), deadline, "reply buffer not given back")
                time.sleep(0.2)
            self.assertEqual(idle.request("PING"), b"+PONG\r\n")
            self.assertEqual(fields_of(conn_id)["rbs"], "1024")
            watcher.close()
            idle.close()
        finally:
            s.stop()


class ExpiryTest(unittest.TestCase):
    def test_active_expiry(self):
        with Server() as s:
            c = s.conn()
            n = 200
            c.send(b"".join(harness.encode("SET", "e:%d" % i, "v", "PX", "100")
                            for i in range(n)))
            c.read_replies(n)
            c.request("SET", "keep", "v")
            c.request("SET", "keep2", "v", "EX", "1000")
            self.assertEqual(c.request("DBSIZE"), b":%d\r\n" % (n + 2))
            # DBSIZE does not touch keys: only active expiry can shrink it.
            deadline = time.monotonic() + 3
            size = None
            while time.monotonic() < deadline:
                size = c.request("DBSIZE")
                if size == b":2\r\n":
                    break
                time.sleep(0.1)
            self.assertEqual(size, b":2\r\n", "keys not expired actively")
            ks = info_fields(info(c, "keyspace"))["keyspace"]
            self.assertTrue(ks.get("db0", "").startswith("keys=2,expires=1,"),
                            ks)
            st = info_fields(info(c, "stats"))["stats"]
            self.assertGreaterEqual(int(st["expired_keys"]), n)
            c.close()


class InfoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.c = cls.server.conn()

    @classmethod
    def tearDownClass(cls):
        cls.c.close()
        cls.server.stop()

    def test_sections(self):
        text = info(self.c)
        secs = info_fields(text)
        for name in ("server", "clients", "memory", "stats", "cpu", "keyspace"):
            self.assertIn(name, secs, "INFO lacks # %s" % name.capitalize())

    def test_server_fields(self):
        f = info_fields(info(self.c, "server"))["server"]
        self.assertIn("redis_version", f)
        self.assertEqual(f["tcp_port"], str(self.server.port))
        self.assertEqual(int(f["process_id"]), self.server.proc.pid)
        for k in ("uptime_in_seconds", "arch_bits", "multiplexing_api"):
            self.assertIn(k, f)

    def test_server_identity_fields(self):
        """What client libraries read to tell servers apart, in Valkey
        8.1's order: redis_version (the Redis version it is compatible
        with, 7.2.4) first, then server_name and soloist's own version
        (no valkey_version: soloist is not Valkey), the build stamp (redis_git_sha1,
        redis_git_dirty, redis_build_id), and the mode as server_mode
        (Valkey's name for redis_mode); the listeners close the section."""
        if self.server.kind == "redis":
            self.skipTest("soloist only")
        text = info(self.c, "server")
        self.assertRegex(text, r"^# Server\r\nredis_version:7\.2\.4\r\nserver_name:soloist\r\n"
                               r"soloist_version:\d+\.\d+\.\d+\r\n"
                               r"redis_git_sha1:0{8}\r\nredis_git_dirty:0\r\nredis_build_id:[0-9a-f]+\r\n"
                               r"server_mode:standalone\r\nos:[^\r]+\r\narch_bits:(32|64)\r\n")
        f = info_fields(text)["server"]
        for k in ("monotonic_clock", "atomicvar_api", "gcc_version", "process_supervised", "lru_clock",
                  "executable", "config_file", "io_threads_active"):
            self.assertIn(k, f)
        self.assertRegex(text, r"\r\nlistener0:name=tcp(,bind=[^,\r]+)+,port=%d\r\n" % self.server.port)

    def test_clients_and_stats(self):
        c2 = self.server.conn()
        c2.request("PING")
        f = info_fields(info(self.c, "clients"))["clients"]
        self.assertGreaterEqual(int(f["connected_clients"]), 2)
        c2.close()
        self.c.request("FLUSHALL")
        self.c.request("CONFIG", "RESETSTAT")
        self.c.request("SET", "a", "1")
        self.c.request("GET", "a")
        self.c.request("GET", "a")
        self.c.request("GET", "nope")
        st = info_fields(info(self.c, "stats"))["stats"]
        self.assertEqual(st["keyspace_hits"], "2")
        self.assertEqual(st["keyspace_misses"], "1")
        # SET GET GET GET (this INFO is counted after it has run)
        self.assertGreaterEqual(int(st["total_commands_processed"]), 4)

    def test_standard_stats_fields(self):
        """Fields tools read (redis-cli --stat reads instantaneous_*)."""
        st = info_fields(info(self.c, "stats"))["stats"]
        for k in ("total_connections_received", "total_commands_processed",
                  "instantaneous_ops_per_sec", "total_net_input_bytes",
                  "total_net_output_bytes", "rejected_connections",
                  "expired_keys", "evicted_keys", "keyspace_hits",
                  "keyspace_misses"):
            self.assertIn(k, st)

    def test_keyspace(self):
        self.c.request("FLUSHALL")
        self.c.request("MSET", "a", "1", "b", "2", "c", "3")
        self.c.request("EXPIRE", "a", "100")
        text = info(self.c, "keyspace")
        self.assertRegex(text, r"# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=\d+")
        self.c.request("FLUSHALL")
        self.assertEqual(info(self.c, "keyspace"), "# Keyspace\r\n")

    def test_memory_and_cpu(self):
        m = info_fields(info(self.c, "memory"))["memory"]
        self.assertGreater(int(m["used_memory"]), 0)
        cpu = info_fields(info(self.c, "cpu"))["cpu"]
        for k in ("used_cpu_sys", "used_cpu_user"):
            self.assertRegex(cpu[k], r"^\d+\.\d+$")

    def test_commandstats(self):
        self.c.request("CONFIG", "RESETSTAT")
        self.c.request("SET", "x", "1")
        self.c.request("SET", "x", "2")
        text = info(self.c, "commandstats")
        self.assertRegex(text, r"cmdstat_set:calls=2,usec=\d+,usec_per_call=")

    def test_phase_time_section(self):
        """soloist's own INFO section `# Threads`: where the main thread's
        time goes (step 0's measurement): main_thread_{poll,read,exec,
        write}_us with their _calls counters. Counters only grow, and
        executing commands grows the exec counters."""
        if self.server.kind == "redis":
            self.skipTest("soloist only")
        names = ["main_thread_%s_%s" % (p, k)
                 for p in ("poll", "read", "exec", "write")
                 for k in ("us", "calls")]
        before = info_fields(info(self.c, "everything")).get("threads")
        self.assertIsNotNone(before, "INFO everything has no # Threads")
        for n in names:
            self.assertRegex(before.get(n, ""), r"^\d+$", n)
        self.c.send(harness.encode("PING") * 100)
        self.c.read_replies(100)
        after = info_fields(info(self.c, "threads"))["threads"]
        for n in names:
            self.assertGreaterEqual(int(after[n]), int(before[n]), n)
        self.assertGreaterEqual(int(after["main_thread_exec_calls"]) -
                                int(before["main_thread_exec_calls"]), 1)
        # poll splits into the thread's CPU and its wait (each rounded
        # down to a microsecond), and busy time is everything but the wait.
        poll, cpu, wait = (int(after["main_thread_poll%s_us" % k]) for k in ("", "_cpu", "_wait"))
        self.assertIn(poll - cpu - wait, (0, 1))
        self.assertLessEqual(abs(int(after["main_thread_total_us"]) - wait -
                                 int(after["main_thread_busy_us"])), 1)
        self.assertTrue(0.0 <= float(after["main_thread_serial_share"]) <= 1.0)


if __name__ == "__main__":
    unittest.main()
