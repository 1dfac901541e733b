"""Step 0 integration tests: the stock clients work against the server —
redis-cli (one-shot commands, --pipe mass insert, and interactive use
through a pseudo-terminal) and redis-benchmark.

Owns nothing but its server and the child processes it starts; every
child is bounded by a timeout and killed if it overruns.
Valkey anchors: what these tools send is src/redis-cli.c (HELLO/COMMAND
DOCS at start, --pipe's trailing ECHO marker) and src/redis-benchmark.c
(CONFIG GET save/appendonly at start, pipelined requests).

Runs against $SOLOIST_TARGET (default build/soloist-server).
"""

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
SLOW = 3 if os.environ.get("SOLOIST_SANITIZER") else 1


def run(argv, timeout, stdin=None):
    return subprocess.run(argv, input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout * SLOW)


class ToolsTest(harness.ServerTestCase):
    def setUp(self):
        super().setUp()
        c = self.server.conn()
        self.assertEqual(c.request("FLUSHALL"), b"+OK\r\n")
        c.close()

    def cli(self, *args, stdin=None, timeout=20):
        r = run([REDIS_CLI, "-p", str(self.server.port)] + list(args),
                timeout, stdin)
        return r

    # -- redis-cli, one command per invocation (output not a tty: raw)
    def test_cli_commands(self):
        cases = [
            (["PING"], b"PONG\n"),
            (["SET", "a", "hello world"], b"OK\n"),
            (["GET", "a"], b"hello world\n"),
            (["GET", "missing"], b"\n"),
            (["INCR", "n"], b"1\n"),
            (["INCRBY", "n", "41"], b"42\n"),
            (["MSET", "k1", "v1", "k2", "v2"], b"OK\n"),
            (["MGET", "k1", "missing", "k2"], b"v1\n\nv2\n"),
            (["EXISTS", "k1", "k2", "nope"], b"2\n"),
            (["DBSIZE"], b"4\n"),
            (["TYPE", "a"], b"string\n"),
            (["NOSUCHCMD"], b"ERR unknown command 'NOSUCHCMD', with args beginning with: \n\n"),
            (["DEL", "k1", "k2"], b"2\n"),
        ]
        for args, want in cases:
            r = self.cli(*args)
            self.assertEqual(r.stdout, want, "redis-cli %s: %r %r"
                             % (" ".join(args), r.stdout, r.stderr))
        self.assertEqual(self.cli("--no-raw", "GET", "a").stdout,
                         b'"hello world"\n')
        self.assertEqual(self.cli("--no-raw", "INCR", "n").stdout,
                         b"(integer) 43\n")
        self.assertEqual(self.cli("-3", "--no-raw", "GET", "missing").stdout,
                         b"(nil)\n")
        r = self.cli("-x", "SET", "fromstdin", stdin=b"piped\x00value")
        self.assertEqual(r.stdout, b"OK\n")
        self.assertEqual(self.cli("STRLEN", "fromstdin").stdout, b"11\n")
        # several commands on stdin, one per line
        r = self.cli(stdin=b"SET s1 1\nINCR s1\nGET s1\n")
        self.assertEqual(r.stdout, b"OK\n2\n2\n")

    def test_cli_newer_commands(self):
        """TIME, RENAME/RENAMENX/COPY, the bitmap commands, SUBSTR, LCS,
        CONFIG with several pairs and patterns, as redis-cli prints them."""
        time_out = self.cli("TIME").stdout
        self.assertRegex(time_out, rb"^\d{10}\n\d{1,6}\n$")
        cases = [
            (["SET", "k1", "ohmytext"], b"OK\n"),
            (["SET", "k2", "mynewtext"], b"OK\n"),
            (["LCS", "k1", "k2"], b"mytext\n"),
            (["LCS", "k1", "k2", "LEN"], b"6\n"),
            (["LCS", "k1", "k2", "IDX", "MINMATCHLEN", "2"],
             b"matches\n4\n7\n5\n8\n2\n3\n0\n1\nlen\n6\n"),
            (["SUBSTR", "k1", "0", "1"], b"oh\n"),
            (["SETBIT", "b", "7", "1"], b"0\n"),
            (["GETBIT", "b", "7"], b"1\n"),
            (["BITCOUNT", "b"], b"1\n"),
            (["BITCOUNT", "b", "0", "6", "BIT"], b"0\n"),
            (["RENAME", "k1", "k3"], b"OK\n"),
            (["RENAMENX", "k3", "k2"], b"0\n"),
            (["COPY", "k3", "k4"], b"1\n"),
            (["GET", "k4"], b"ohmytext\n"),
            (["CLIENT", "NO-EVICT", "on"], b"OK\n"),
            (["CONFIG", "SET", "timeout", "0", "maxclients", "10000"], b"OK\n"),
        ]
        for args, want in cases:
            r = self.cli(*args)
            self.assertEqual(r.stdout, want, "redis-cli %s: %r %r"
                             % (" ".join(args), r.stdout, r.stderr))
        lines = self.cli("CONFIG", "GET", "timeout", "maxclient*", "timeout").stdout.split(b"\n")
        self.assertEqual(sorted(zip(lines[0:-1:2], lines[1::2])),
                         [(b"maxclients", b"10000"), (b"timeout", b"0")])
        if self.server.kind != "redis":  # Redis 7.0 has no CLIENT SETINFO
            self.assertEqual(self.cli("CLIENT", "SETINFO", "lib-name", "cli").stdout, b"OK\n")

    def test_cli_pipe_mass_insert(self):
        n = 100000
        data = b"".join(harness.encode("SET", "key:%d" % i, "value:%d" % i)
                        for i in range(n))
        r = self.cli("--pipe", stdin=data, timeout=60)
        out = r.stdout.decode() + r.stderr.decode()
        self.assertEqual(r.returncode, 0, out)
        self.assertIn("errors: 0, replies: %d" % n, out)
        c = self.server.conn()
        self.assertEqual(c.request("DBSIZE"), b":%d\r\n" % n)
        self.assertEqual(c.request("GET", "key:99999"), b"$11\r\nvalue:99999\r\n")
        c.close()

    def test_cli_interactive_pty(self):
        pid, fd = pty.fork()
        if pid == 0:  # child: redis-cli on the pty
            try:
                # A dumb terminal: linenoise then reads plain lines instead
                # of asking the terminal for its cursor position.
                env = dict(os.environ, TERM="dumb")
                os.execve(REDIS_CLI, [REDIS_CLI, "-p", str(self.server.port)],
                          env)
            finally:
                os._exit(127)
        out = bytearray()

        def read_until(pattern, timeout=10 * SLOW):
            deadline = time.monotonic() + timeout
            rx = re.compile(pattern)
            while time.monotonic() < deadline:
                m = rx.search(out)
                if m:
                    return m
                r, _, _ = select.select([fd], [], [], 0.1)
                if r:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    out.extend(chunk)
                    if b"\x1b[6n" in chunk:  # cursor position query
                        os.write(fd, b"\x1b[1;1R")
            self.fail("no %r in redis-cli output: %r" % (pattern, bytes(out)))

        try:
            prompt = rb"127\.0\.0\.1:%d> " % self.server.port
            read_until(prompt)
            del out[:]
            os.write(fd, b"SET a b\r")
            read_until(rb"OK\r\n.*" + prompt)
            del out[:]
            os.write(fd, b"GET a\r")
            read_until(rb'"b"\r\n.*' + prompt)
            del out[:]
            os.write(fd, b"INCR counter\r")
            read_until(rb"\(integer\) 1\r\n.*" + prompt)
            del out[:]
            os.write(fd, b"GET nothing\r")
            read_until(rb"\(nil\)\r\n.*" + prompt)
            del out[:]
            os.write(fd, b"NOSUCH\r")
            read_until(rb"\(error\) ERR unknown command 'NOSUCH'[^\n]*\n" + prompt)
            del out[:]
            # redis-cli 7.0 waits for a reply after CLIENT REPLY OFF or
            # SKIP (against Redis too); the transcripts drive those.
            os.write(fd, b"CLIENT REPLY ON\r")
            read_until(rb"OK\r\n.*" + prompt)
            os.write(fd, b"quit\r")
            deadline = time.monotonic() + 10 * SLOW
            status = None
            while time.monotonic() < deadline:
                wpid, st = os.waitpid(pid, os.WNOHANG)
                if wpid:
                    status = st
                    break
                r, _, _ = select.select([fd], [], [], 0.1)
                if r:
                    try:
                        os.read(fd, 4096)
                    except OSError:
                        pass
            self.assertIsNotNone(status, "redis-cli did not exit on quit")
            self.assertTrue(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0)
            pid = 0
        finally:
            if pid:
                try:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                except OSError:
                    pass
            os.close(fd)
        c = self.server.conn()
        self.assertEqual(c.request("GET", "a"), b"$1\r\nb\r\n")
        c.close()

    def test_benchmark(self):
        r = run([REDIS_BENCHMARK, "-p", str(self.server.port),
                 "-t", "ping,set,get,incr,mset", "-P", "16", "-q",
                 "-n", "20000"], timeout=120)
        out = r.stdout.decode("utf-8", "replace").replace("\r", "\n")
        err = r.stderr.decode("utf-8", "replace")
        self.assertEqual(r.returncode, 0, out + err)
        self.assertNotRegex(out + err, r"(?i)error|ERR ")
        rates = dict(re.findall(
            r"^(\S[^:\n]*): ([0-9.]+) requests per second", out, re.M))
        for name in ("PING_INLINE", "PING_MBULK", "SET", "GET", "INCR",
                     "MSET (10 keys)"):
            self.assertIn(name, rates, out)
            self.assertGreater(float(rates[name]), 0)


if __name__ == "__main__":
    unittest.main()
