"""Sockets, timing and the shared context of the stress run (stress.py).

Owns nothing but helpers: connecting and closing (FIN or RST), reading
one reply or until the peer is quiet, sending a stream in planned chunks
while reading, INFO's client count, and Ctx (the server under test, the
round, where failing inputs are saved). Every wait is bounded.

Valkey anchor: none; the TCP rule in send_chunks' comment (RFC 1122
4.2.2.13) is what a server closing with unread input does, Valkey's
freeClient included.
"""

import os
import select
import socket
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import gen  # noqa: E402
import harness  # noqa: E402
from replies import BadReply, reply_end  # noqa: E402

PROTO_ERR = b"-ERR Protocol error"
BIG = 1 << 20
SERVER_ARGS = ["--proto-max-bulk-len", "8mb"]


class Failure(Exception):
    pass


def bulk(b):
    b = b if isinstance(b, bytes) else b.encode()
    return b"$%d\r\n%s\r\n" % (len(b), b)


def show(b, limit=200):
    return harness.show(b, limit)


def connect(port, timeout=5.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def close(sock, rst):
    """FIN, or RST when rst (SO_LINGER on with a zero timeout)."""
    try:
        if rst:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


def read_reply(sock, buf, timeout):
    """One whole reply from a blocking socket; buf keeps what follows."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            e = reply_end(buf)
        except BadReply as ex:
            raise Failure("malformed reply: %s: %s" % (ex, show(bytes(buf))))
        if e >= 0:
            out = bytes(buf[:e])
            del buf[:e]
            return out
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure("no whole reply within %.1fs (have %s)" % (timeout, show(bytes(buf))))
        sock.settimeout(left)
        try:
            chunk = sock.recv(1 << 20)
        except socket.timeout:
            continue
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            raise Failure("connection closed before a whole reply (have %s)" % show(bytes(buf)))
        buf += chunk


class Ctx:
    def __init__(self, args, server):
        self.args = args
        self.server = server
        self.port = server.port
        self.round = 0
        self.saved = 0
        self.side_clients = 0  # connections held open beside the phases' own (stress.py's --flip-io-threads)

    def save(self, what, data):
        """Keeps a failing input for replay; returns its path."""
        self.saved += 1
        path = os.path.join(self.server.log_dir, "fail-%s-r%d-%d-%s.bin" % (self.args.seed, self.round,
                                                                           self.saved, what))
        with open(path, "wb") as f:
            f.write(data)
        return path

    def ping(self, timeout=5.0, sock=None):
        """The server answers PING on a fresh connection (NOAUTH counts:
        it answered)."""
        s = sock or connect(self.port, timeout)
        try:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            r = read_reply(s, bytearray(), timeout)
        finally:
            if sock is None:
                close(s, False)
        if r != b"+PONG\r\n" and not r.startswith(b"-NOAUTH"):
            raise Failure("PING on a fresh connection answered %s" % show(r))

    def command(self, sock, *args, timeout=10.0):
        sock.sendall(gen.encode_multibulk(list(args)))
        return read_reply(sock, bytearray(), timeout)


def chunk_plan(rng, n):
    """Ascending chunk ends over n bytes and a delay after each chunk."""
    style = rng.choice(["whole", "small", "medium", "mixed", "bytes"])
    if style == "bytes" and n > 400:
        style = "small"
    ends, at = [], 0
    while at < n:
        if style == "whole":
            at = n
        elif style == "bytes":
            at += 1
        elif style == "small":
            at += rng.randint(1, 24)
        elif style == "medium":
            at += rng.randint(1, 6000)
        else:
            at += rng.choice([1, 2, 3, rng.randint(1, 100), rng.randint(100, 20000)])
        ends.append(min(at, n))
    if len(ends) > 2000:  # a bound on the time one pipeline may take
        ends = ends[:1999] + [n]
    delays = [0.0 if rng.random() < 0.8 else rng.uniform(0, 0.003) for _ in ends]
    return ends, delays


def send_chunks(sock, data, ends, delays, inbuf):
    """Sends in the planned chunks while reading whatever arrives into
    inbuf. Reading meanwhile matters: a server that closes a connection
    with input still unread makes the kernel send RST and drop what is
    still queued in its send buffer, which is only there if this side
    stopped reading (Valkey's close has the same effect). Returns
    (everything sent, how the server closed: None, "fin" or "rst")."""
    sock.setblocking(False)
    try:
        start = 0
        for end, d in zip(ends, delays):
            view = memoryview(data)[start:end]
            while len(view):
                r, w, _ = select.select([sock], [sock], [], 10.0)
                if not r and not w:
                    raise Failure("the server neither read nor wrote for 10s (%d of %d bytes sent)" %
                                  (len(data) - len(view) - (len(data) - end), len(data)))
                if r:
                    try:
                        chunk = sock.recv(1 << 20)
                    except (BlockingIOError, InterruptedError):
                        chunk = None
                    except ConnectionResetError:
                        return False, "rst"
                    if chunk == b"":
                        return False, "fin"
                    if chunk:
                        inbuf += chunk
                if w:
                    try:
                        n = sock.send(view)
                    except (BlockingIOError, InterruptedError):
                        n = 0
                    except (BrokenPipeError, ConnectionResetError):
                        # The close is still to be read: find out which.
                        return False, read_until_quiet(sock, inbuf, 5.0, 5.0) or "rst"
                    view = view[n:]
            start = end
            if d:
                time.sleep(d)
        return True, None
    finally:
        sock.settimeout(10.0)


def read_until_quiet(sock, buf, quiet, limit, stop=None, size=None):
    """Reads until EOF, `quiet` seconds without bytes, `limit` seconds in
    all, buf ends with `stop`, or buf holds `size` bytes. Returns None
    while the connection is open, "fin" or "rst" once the server closed
    it (true either way)."""
    deadline = time.monotonic() + limit
    while True:
        if (stop and buf.endswith(stop)) or (size is not None and len(buf) >= size):
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(min(quiet, left))
        try:
            chunk = sock.recv(1 << 20)
        except socket.timeout:
            return None
        except (ConnectionResetError, BrokenPipeError):
            return "rst"
        if not chunk:
            return "fin"
        buf += chunk


def connected_clients(ctx, sock):
    r = ctx.command(sock, "INFO", "clients")
    body = harness.parse(r)
    for line in body.decode().splitlines():
        if line.startswith("connected_clients:"):
            return int(line.split(":")[1])
    raise Failure("INFO clients has no connected_clients: %s" % show(r))


def wait_clients(ctx, sock, want, timeout=5.0):
    """Polls INFO until connected_clients <= want (plus the side
    connections ctx holds open); returns it less those."""
    want += ctx.side_clients
    deadline = time.monotonic() + timeout
    while True:
        n = connected_clients(ctx, sock)
        if n <= want:
            return n - ctx.side_clients
        if time.monotonic() > deadline:
            raise Failure("connected_clients is %d, expected %d: closed clients not freed" % (n, want))
        time.sleep(0.02)
