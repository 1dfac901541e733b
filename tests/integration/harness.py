"""Step 0 integration harness: start a real server on a free loopback port
and talk RESP to it byte for byte.

Owns: server processes started by the tests (soloist's build/soloist-server
or Debian's /usr/bin/redis-server, the oracle), and a raw-socket RESP
client that returns the *exact bytes* of one reply, so replies of two
servers can be compared without a parser that might hide a difference.

Every wait here is bounded: starting (READY_TIMEOUT), stopping (SIGTERM,
then SIGKILL after STOP_TIMEOUT), and every socket read (the connection's
timeout). A test can therefore hang for a bounded time only.

Valkey anchor: the reply types read here are the ones valkey
src/networking.c writes (addReply* family) and the RESP3 spec lists;
the start-up flags are Valkey's (`--port --bind --save --appendonly`).

Python 3 standard library only.
"""

import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REDIS_SERVER = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")
SOLOIST_SERVER = os.environ.get("SOLOIST_SERVER",
                                os.path.join(REPO, "build", "soloist-server"))

# Every server process any test started, so a sanitizer run can search all
# of their logs once they have exited (run_all.py does).
STARTED = []


def target_binary():
    """The server under test: $SOLOIST_TARGET, else build/soloist-server.
    (Set SOLOIST_TARGET=/usr/bin/redis-server to check the tests
    themselves against the oracle.)"""
    return os.environ.get("SOLOIST_TARGET", SOLOIST_SERVER)


def log_dir():
    d = os.environ.get("SOLOIST_LOG_DIR",
                       os.path.join(REPO, "build", "integration-logs", "manual"))
    os.makedirs(d, exist_ok=True)
    return d


READY_TIMEOUT = float(os.environ.get("SOLOIST_READY_TIMEOUT", "15"))
STOP_TIMEOUT = 10.0
IO_TIMEOUT = float(os.environ.get("SOLOIST_IO_TIMEOUT", "20"))


class ConnectionClosed(Exception):
    """The peer closed the connection before a complete reply arrived."""


class ReplyTimeout(Exception):
    """No complete reply within the connection's timeout."""


# ---------------------------------------------------------------- ports

def free_port():
    """A port that was free a moment ago on 127.0.0.1 (the kernel picks it).

    There is a window between closing this socket and the server binding
    the port; Server.start() retries on a fresh port if the bind fails.
    """
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def port_is_free(port):
    """Could a new server listen on port? (SO_REUSEADDR, as servers set
    it: connections left in TIME_WAIT do not hold the port.)"""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(1)
        return True
    except OSError:
        return False
    finally:
        s.close()


# ---------------------------------------------------------------- server

def server_kind(binary):
    return "redis" if os.path.basename(binary).startswith("redis") else "soloist"


class Server:
    """One server process on a free port.

    binary: path to soloist-server or redis-server.  extra: more flags
    (e.g. ["--requirepass", "pw"]).  stderr and stdout go to a log file,
    kept in self.log_path so a sanitizer report can be searched for.
    """

    def __init__(self, binary=None, extra=(), name=None, log_dir=None,
                 env=None, bind=True):
        binary = binary or target_binary()
        self.binary = binary
        self.bind = bind
        self.extra = list(extra)
        self.kind = server_kind(binary)
        self.name = name or self.kind
        self.proc = None
        self.port = None
        self.log_dir = log_dir or globals()["log_dir"]()
        self.log_path = None
        self.env = env
        self.returncode = None

    def argv(self, port):
        a = [self.binary, "--port", str(port)]
        if self.bind:
            a += ["--bind", "127.0.0.1"]
        a += ["--save", "", "--appendonly", "no"]
        if self.kind == "redis":
            # Debian's redis-server: keep it in the foreground and quiet,
            # and never let it write a dump where the test runs.
            a += ["--daemonize", "no", "--dir", self.log_dir]
            # A transcript compares CONFIG GET io-threads: give the oracle
            # the thread count soloist was given (its reads stay on main).
            extra_args = os.environ.get("SOLOIST_SERVER_ARGS", "").split()
            if "--io-threads" in extra_args[:-1]:
                a += ["--io-threads", extra_args[extra_args.index("--io-threads") + 1]]
        else:
            # The same tests against soloist with its I/O threads on, e.g.
            # SOLOIST_SERVER_ARGS="--io-threads 4 --io-threads-always-active yes".
            a += os.environ.get("SOLOIST_SERVER_ARGS", "").split()
        return a + self.extra

    def start(self, ready_timeout=READY_TIMEOUT, attempts=3):
        last = None
        for _ in range(attempts):
            port = free_port()
            fd, self.log_path = tempfile.mkstemp(
                prefix="%s-%d-" % (self.name, port), suffix=".log",
                dir=self.log_dir)
            log = os.fdopen(fd, "wb")
            env = dict(os.environ)
            if self.env:
                env.update(self.env)
            self.proc = subprocess.Popen(
                self.argv(port), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env, cwd=self.log_dir)
            log.close()
            self.port = port
            STARTED.append(self)
            try:
                self.wait_ready(ready_timeout)
                return self
            except Exception as e:  # bind race or slow start: try again
                last = e
                self.kill()
        raise RuntimeError("%s did not start: %s\n%s"
                           % (self.name, last, self.log_tail()))

    def wait_ready(self, timeout):
        """Poll until the server answers PING (or NOAUTH: it is up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("exited with %s" % self.proc.returncode)
            try:
                c = Conn(self.port, timeout=2)
            except OSError:
                time.sleep(0.05)
                continue
            try:
                r = c.request("PING")
                if r.startswith(b"+PONG") or r.startswith(b"-NOAUTH"):
                    return
            except (OSError, ConnectionClosed, ReplyTimeout):
                pass
            finally:
                c.close()
            time.sleep(0.05)
        raise RuntimeError("no PONG within %.0fs" % timeout)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            self.proc.send_signal(sig)

    def wait(self, timeout=STOP_TIMEOUT):
        """Wait for exit; returns the exit status or None on timeout."""
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.returncode

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM, wait up to timeout, then SIGKILL. Returns exit status."""
        if self.proc is None:
            return self.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            if self.wait(timeout) is None:
                self.kill()
        self.returncode = self.proc.returncode
        return self.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        if self.proc is not None:
            self.returncode = self.proc.returncode

    def log_text(self):
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def log_tail(self, n=30):
        return "\n".join(self.log_text().splitlines()[-n:])

    def conn(self, timeout=IO_TIMEOUT):
        return Conn(self.port, timeout=timeout)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def sanitizer_report(text):
    """The first line of an ASan/UBSan/LSan report in a log, or None."""
    for line in text.splitlines():
        if ("ERROR: AddressSanitizer" in line or
                "ERROR: LeakSanitizer" in line or
                "runtime error:" in line or
                "ERROR: ThreadSanitizer" in line or
                "WARNING: ThreadSanitizer" in line or
                "SUMMARY: UndefinedBehaviorSanitizer" in line):
            return line
    return None


# ---------------------------------------------------------------- RESP

def encode(*args):
    """A RESP multibulk request (what every client library sends)."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


# Reply types whose whole value sits on the first line.
_LINE_TYPES = b"+-:_,#("
# Length-prefixed payloads: bulk string, blob error, verbatim string.
_BULK_TYPES = b"$!="
# Aggregates of N elements; map and attribute hold N pairs.
_AGG_TYPES = b"*~>"
_PAIR_TYPES = b"%|"


class Conn:
    """A raw RESP connection.

    read_reply() returns the exact bytes of one complete reply, however
    deeply nested; a RESP3 attribute (|) is returned together with the
    reply it annotates; a push (>) counts as a reply.
    """

    def __init__(self, port, host="127.0.0.1", timeout=IO_TIMEOUT):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buf = bytearray()
        self.closed = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
        self.closed = True

    def settimeout(self, t):
        self.timeout = t
        self.sock.settimeout(t)

    def send(self, data):
        self.sock.sendall(data)

    def send_command(self, *args):
        self.send(encode(*args))

    def request(self, *args):
        self.send(encode(*args))
        return self.read_reply()

    # -- reading: bounded by self.timeout per recv, and by a total deadline

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ReplyTimeout("no complete reply within %.1fs" % self.timeout)
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            raise ReplyTimeout("no complete reply within %.1fs" % self.timeout)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.closed = True
            raise ConnectionClosed("closed with %d unparsed bytes: %r"
                                   % (len(self.buf), bytes(self.buf[:200])))
        self.buf += chunk

    def _line_end(self, start, deadline):
        while True:
            i = self.buf.find(b"\r\n", start)
            if i >= 0:
                return i
            self._fill(deadline)

    def _need(self, n, deadline):
        while len(self.buf) < n:
            self._fill(deadline)

    def _scan(self, pos, deadline):
        """Index just past the complete reply that starts at pos."""
        self._need(pos + 1, deadline)
        t = self.buf[pos:pos + 1]
        eol = self._line_end(pos, deadline)
        head = bytes(self.buf[pos + 1:eol])
        end = eol + 2
        if t in (b"$", b"!", b"="):
            n = int(head)
            if n < 0:
                return end
            self._need(end + n + 2, deadline)
            return end + n + 2
        if t in (b"*", b"~", b">", b"%", b"|"):
            n = int(head)
            if n < 0:
                return end
            if t in (b"%", b"|"):
                n *= 2
            for _ in range(n):
                end = self._scan(end, deadline)
            if t == b"|":  # an attribute is followed by the reply it describes
                end = self._scan(end, deadline)
            return end
        if t and t in _LINE_TYPES:
            return end
        raise ValueError("not a RESP reply type %r at %r"
                         % (t, bytes(self.buf[pos:pos + 80])))

    def read_reply(self, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        end = self._scan(0, deadline)
        out = bytes(self.buf[:end])
        del self.buf[:end]
        return out

    def read_replies(self, n, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        return [self.read_reply(max(0.01, deadline - time.monotonic()))
                for _ in range(n)]

    def wait_closed(self, timeout=3.0):
        """True if the peer closes (EOF/reset) within timeout, with no
        further bytes; bytes that arrive instead are kept and False
        returned."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return False
            except (ConnectionResetError, BrokenPipeError):
                self.closed = True
                return True
            if not chunk:
                self.closed = True
                return True
            self.buf += chunk
            return False
        return False


# ---------------------------------------------------------------- parsing

class Verbatim(bytes):
    pass


class Error(bytes):
    pass


class Push(list):
    pass


def parse(data):
    """Parse exact reply bytes into Python values (for assertions).

    +/- simple string and error -> bytes / Error; : int; $ bytes or None;
    * list or None; % dict (keys must be hashable: bytes/int); ~ set
    (as a sorted list, for stability); _ None; , float (inf/nan
    handled); # bool; ( int; = Verbatim (without the 'txt:' prefix);
    ! Error; > Push; | attributes are dropped.
    """
    v, end = _parse(data, 0)
    if end != len(data):
        raise ValueError("trailing bytes after reply: %r" % data[end:end + 40])
    return v


def _parse(d, p):
    t = d[p:p + 1]
    eol = d.index(b"\r\n", p)
    head = d[p + 1:eol]
    q = eol + 2
    if t == b"+":
        return head, q
    if t == b"-":
        return Error(head), q
    if t == b":":
        return int(head), q
    if t == b"(":
        return int(head), q
    if t == b"_":
        return None, q
    if t == b"#":
        return head == b"t", q
    if t == b",":
        s = head.decode()
        return float({"inf": "inf", "-inf": "-inf"}.get(s, s)), q
    if t in (b"$", b"!", b"="):
        n = int(head)
        if n < 0:
            return None, q
        body = d[q:q + n]
        if t == b"!":
            body = Error(body)
        elif t == b"=":
            body = Verbatim(body[4:])
        return body, q + n + 2
    if t in (b"*", b"~", b">"):
        n = int(head)
        if n < 0:
            return None, q
        items = []
        for _ in range(n):
            v, q = _parse(d, q)
            items.append(v)
        if t == b"~":
            items = sorted(items, key=repr)
        if t == b">":
            items = Push(items)
        return items, q
    if t in (b"%", b"|"):
        n = int(head)
        m = {}
        for _ in range(n):
            k, q = _parse(d, q)
            v, q = _parse(d, q)
            m[k if not isinstance(k, list) else tuple(k)] = v
        if t == b"|":
            return _parse(d, q)
        return m, q
    raise ValueError("bad reply type %r" % t)


def elements(data):
    """The raw bytes of each element of a top-level aggregate reply
    (array, set, push; for a map, each key and value in order), or None
    when the reply is not an aggregate (or is a null array)."""
    t = data[:1]
    if t not in (b"*", b"~", b">", b"%"):
        return None
    eol = data.index(b"\r\n")
    n = int(data[1:eol])
    if n < 0:
        return None
    if t == b"%":
        n *= 2
    out, p = [], eol + 2
    for _ in range(n):
        _, q = _parse(data, p)
        out.append(data[p:q])
        p = q
    return out


def show(data, limit=300):
    """A printable, bounded rendering of reply bytes for a failure message."""
    if data is None:
        return "<none>"
    if isinstance(data, str):
        return data
    if len(data) > limit:
        return "%r... (%d bytes)" % (data[:limit], len(data))
    return repr(data)


class ServerTestCase(unittest.TestCase):
    """A test class sharing one server (the target under test) across its
    tests. setUp starts a fresh one when an earlier test crashed it (that
    test failed for it), so one crash cannot hide the other tests'
    results; tearDown asserts the server is still alive."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def setUp(self):
        if not self.server.alive():
            type(self).server = Server().start()

    def tearDown(self):
        self.assertTrue(self.server.alive(), self.server.log_tail())


def wait_for(pred, timeout=5.0):
    """Polls pred every 10 ms until it is true or timeout seconds pass;
    returns its last answer."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


def info_clients(conn):
    """INFO clients as a dict of field to value (strings)."""
    text = parse(conn.request("INFO", "clients")).decode()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


class ClientsTestCase(ServerTestCase):
    """A ServerTestCase for tests that need several connections to the one
    server (blocking pops, MONITOR): self.conn() opens one that tearDown
    closes, self.main is opened first on a flushed keyspace, and
    self.block(*cmd) opens a client whose cmd blocks, waiting until INFO
    counts it as blocked."""

    def setUp(self):
        super().setUp()
        self.conns = []
        self.main = self.conn()
        self.main.request("FLUSHALL")

    def tearDown(self):
        for c in self.conns:
            c.close()
        super().tearDown()

    def conn(self):
        c = self.server.conn()
        self.conns.append(c)
        return c

    def blocked(self):
        return int(info_clients(self.main)["blocked_clients"])

    def block(self, *cmd):
        """A new client that sends cmd and is blocked by it."""
        c = self.conn()
        before = self.blocked()
        c.send_command(*cmd)
        self.assertTrue(wait_for(lambda: self.blocked() > before), "the client did not block")
        return c
