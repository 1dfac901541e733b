#!/usr/bin/env python3
"""Stress run of the real server: random pipelines, garbage, slow readers
and vanishing clients, for a bounded number of rounds, on loopback.

Owns: one server process (normally build/asan/soloist-server, ASan+UBSan)
on a free port, its log and the inputs of any failure under
build/stress-logs/. Everything is drawn from one printed seed; round R
uses random.Random("SEED:R"), so `--seed S --only-round R` replays one
round's bytes (timing aside). Every wait is bounded; so is the run
(--rounds and --time-budget).

The bar (soloist's): bad input gets Valkey's error reply or a clean
disconnect; never a crash, a hang or a lost reply. Each round runs:

 (a) pipelines: 1-4 connections at once, each a pipeline of 1-600 random
     valid commands (gen.py; every command in the server's COMMAND LIST is
     sent, see discover_commands) cut at random bytes with random small
     delays; ECHO markers at random places and at the end. Every request
     must get exactly one reply, in order (the markers' replies must sit
     at their requests' places), none a protocol error; a pipeline may end
     in QUIT or CLIENT KILL of itself (+OK, then EOF, and nothing for the
     requests behind it). Then one more ECHO round trip proves no stray
     reply was left behind.
 (b) garbage: malformed RESP, truncated and mutated pipelines, random
     bytes. Whatever arrives must parse as whole replies; a reply
     "-ERR Protocol error..." must be the last one and the connection
     must then close; a connection must never close without one; where
     the bytes' fate is certain (gen.SPECIALS) the reply is Valkey's exact
     text. Otherwise the connection may stay open (keeps answering, or
     waits inside a bulk), and the server must still answer PING on a
     fresh connection. Every third round does this for clients that have
     not authenticated (CONFIG SET requirepass for the phase), plus
     pipelines that AUTH midway and then exceed the unauthenticated limits.
 (c) big replies: GETs of a 1 MB value pipelined to slow readers (the
     server must go on answering another client meanwhile, and every byte
     must arrive intact); clients that vanish with RST (SO_LINGER 0) or FIN
     in the middle of a reply or of a request; clients the server closes
     itself with replies pending (CLIENT KILL ID from another client,
     client-output-buffer-limit, hard or soft), which must receive whole
     replies and then a prefix; a client idle inside a request while
     `timeout 1` is set, which the cron must close; a connection storm
     past maxclients (PONG or Valkey's
     "max number of clients reached" and a close). Afterwards INFO must
     count only the connections still open.

After all rounds: PING on a fresh connection, SIGTERM gives exit status
0, and the server's stderr holds no sanitizer report (a leak included).

Prints one PASS/FAIL line per check and `N passed, M failed`.
Valkey anchors: src/networking.c (processInputBuffer, the protocol error
paths and freeClientAsync after the reply, writeToClient's per-event cap,
the client-output-buffer checks), src/server.c (SIGTERM → prepareForShutdown).
"""

import argparse
import os
import random
import select
import socket
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, HERE)
import gen  # noqa: E402
import harness  # noqa: E402
from replies import BadReply, reply_end, split_replies  # noqa: E402

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


# ----------------------------------------------------------- (a) pipelines

class PipeClient:
    def __init__(self, ctx, rng, idx):
        self.idx = idx
        self.reqs = []  # (encoded request, exact expected reply or None, name)
        for i in range(rng.choice([1, 2, 5, 10, 30, 80, 80, 600])):
            if rng.random() < 0.25:
                tag = "m%d.%d" % (idx, i)
                self.reqs.append((gen.encode(rng, ["ECHO", tag]), bulk(tag), "ECHO"))
            else:
                args = gen.command(rng)
                name = args[0] if isinstance(args[0], str) else args[0].decode("latin-1")
                self.reqs.append((gen.encode(rng, args), None, name))
        tag = "end%d" % idx
        self.reqs.append((gen.encode_multibulk(["ECHO", tag]), bulk(tag), "ECHO"))
        self.sock = connect(ctx.port)
        # Some pipelines end the connection themselves (QUIT, or CLIENT
        # KILL of their own address); what follows must get no reply.
        r = rng.random()
        self.quit = r < 0.12
        after = b""
        if self.quit:
            if r < 0.08:
                self.reqs.append((gen.encode(rng, ["QUIT"]), b"+OK\r\n", "QUIT"))
            else:
                me = "%s:%d" % self.sock.getsockname()[:2]
                self.reqs.append((gen.encode(rng, ["CLIENT", "KILL", me]), b"+OK\r\n", "CLIENT KILL self"))
            after = b"".join(gen.encode(rng, gen.command(rng)) for _ in range(rng.choice([0, 0, 1, 3])))
        # Requests behind QUIT are left unread by the server, so its close
        # is an RST, which may drop replies it wrote but the kernel had not
        # sent yet (RFC 1122 4.2.2.13; Valkey alike): then only a prefix of
        # the replies is required. Without them the close is a FIN and
        # every reply must arrive.
        self.after = bool(after)
        self.reset = False
        self.data = b"".join(r[0] for r in self.reqs) + after
        self.ends, self.delays = chunk_plan(rng, len(self.data))
        self.rst = rng.random() < 0.3
        self.sock.setblocking(False)
        self.sent = 0
        self.chunk = 0
        self.due = 0.0
        self.inbuf = bytearray()
        self.replies = []
        self.eof = False

    def where(self):
        return "client %d (%d requests, %d bytes in %d chunks)" % (self.idx, len(self.reqs), len(self.data),
                                                                    len(self.ends))

    def write(self, now):
        end = self.ends[self.chunk]
        try:
            n = self.sock.send(self.data[self.sent:end])
        except (BlockingIOError, InterruptedError):
            return
        except (BrokenPipeError, ConnectionResetError):
            if self.quit:  # closed after QUIT/KILL: the rest is not sent
                self.sent = len(self.data)
                return
            raise Failure("%s: server closed while the pipeline was being sent" % self.where())
        self.sent += n
        if self.sent == end:
            self.due = now + self.delays[self.chunk]
            self.chunk += 1

    def read(self):
        try:
            chunk = self.sock.recv(1 << 18)
        except (BlockingIOError, InterruptedError):
            return
        except ConnectionResetError:
            chunk = None
        if not chunk:
            self.eof = "fin" if chunk == b"" else "rst"
            if self.quit and self.after and self.eof == "rst":
                self.reset = True
                return
            if not (self.quit and len(self.replies) == len(self.reqs)):
                raise Failure("%s: connection closed after %d of %d replies" % (self.where(), len(self.replies),
                                                                               len(self.reqs)))
            return
        self.inbuf += chunk
        while True:
            try:
                e = reply_end(self.inbuf)
            except BadReply as ex:
                raise Failure("%s: malformed reply after %d replies: %s" % (self.where(), len(self.replies), ex))
            if e < 0:
                break
            self.replies.append(bytes(self.inbuf[:e]))
            del self.inbuf[:e]
        if len(self.replies) > len(self.reqs):
            raise Failure("%s: %d replies to %d requests" % (self.where(), len(self.replies), len(self.reqs)))

    def wants_write(self, now):
        return self.sent < len(self.data) and now >= self.due and not self.eof

    def done(self):
        return self.reset or (len(self.replies) == len(self.reqs) and (self.eof or not self.quit))

    def verify(self):
        for i, ((req, exp, name), rep) in enumerate(zip(self.reqs, self.replies)):
            if exp is not None and rep != exp:
                raise Failure("%s: reply %d (to %s) is %s, expected %s: replies out of step" %
                              (self.where(), i, name, show(rep), show(exp)))
            if rep.startswith(PROTO_ERR):
                raise Failure("%s: request %d (%s, %s) got a protocol error: %s" %
                              (self.where(), i, name, show(req, 120), show(rep)))
        if self.inbuf:
            raise Failure("%s: stray bytes after the last reply: %s" % (self.where(), show(bytes(self.inbuf))))


def phase_pipelines(ctx, rng):
    clients = []
    try:
        for i in range(rng.randint(1, 4)):
            clients.append(PipeClient(ctx, rng, i))
        deadline = time.monotonic() + 40
        while not all(c.done() for c in clients):
            now = time.monotonic()
            if now > deadline:
                raise Failure("hang: after 40s " + "; ".join(
                    "%s got %d replies, sent %d bytes" % (c.where(), len(c.replies), c.sent) for c in clients))
            rl = [c.sock for c in clients if not c.eof]
            wl = [c.sock for c in clients if c.wants_write(now)]
            waits = [c.due - now for c in clients if c.sent < len(c.data) and c.due > now and not c.eof]
            timeout = max(0.0, min(waits + [0.05]))
            r, w, _ = select.select(rl, wl, [], timeout)
            for c in clients:
                if c.sock in w:
                    c.write(time.monotonic())
                if c.sock in r:
                    c.read()
        for c in clients:
            c.verify()
            if c.quit:
                continue
            # One more round trip: nothing stray may come before it.
            c.sock.setblocking(True)
            r = ctx.command(c.sock, "ECHO", "last")
            if r != bulk("last"):
                raise Failure("%s: after the pipeline, ECHO last got %s" % (c.where(), show(r)))
        return "%d conns, %d requests" % (len(clients), sum(len(c.reqs) for c in clients))
    except Failure as e:
        for c in clients:
            e.args = (e.args[0] + "\n      input of %s: %s" % (c.where(), ctx.save("pipeline-c%d" % c.idx, c.data)),)
        raise
    finally:
        for c in clients:
            close(c.sock, c.rst)


# ------------------------------------------------------------- (b) garbage

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


def garbage_case(ctx, rng, data, exp, desc, marker):
    """One malformed stream on a fresh connection. A close by RST (the
    server closed with some of these bytes unread: RFC 1122 4.2.2.13)
    may drop the end of what it had written, so then only a prefix of the
    expected replies is required; a close by FIN must deliver them all."""
    sock = connect(ctx.port)
    buf = bytearray()
    try:
        payload = data + (gen.encode_multibulk(["ECHO", "after"]) if marker else b"")
        ends, delays = chunk_plan(rng, len(payload))
        _, closed = send_chunks(sock, payload, ends, delays, buf)
        # Where the fate is known the connection must close: wait for it
        # (up to 8s) rather than for a quiet spell a loaded machine can
        # fake.
        quiet = 8.0 if exp is not None else 0.3
        if not closed:
            closed = read_until_quiet(sock, buf, quiet, 8.0, bulk("after") if marker else None)
        try:
            replies, rest = split_replies(buf)
        except BadReply as ex:
            raise Failure("malformed reply: %s: %s" % (ex, show(bytes(buf))))
        if rest and not closed:  # a reply still arriving: give it time
            closed = read_until_quiet(sock, buf, 3.0, 8.0)
            replies, rest = split_replies(buf)
        if rest and closed != "rst":
            raise Failure("a partial reply: closed=%s after %d whole replies and %d bytes of the next: %s" %
                          (closed, len(replies), len(rest), show(rest, 80)))
        perr = [i for i, r in enumerate(replies) if r.startswith(PROTO_ERR)]
        if perr and not closed:
            closed = read_until_quiet(sock, buf, 5.0, 5.0)
            if not closed:
                raise Failure("protocol error %s but the connection stayed open" % show(replies[perr[0]]))
            replies, rest = split_replies(buf)
        if perr and perr[0] != len(replies) - 1:
            raise Failure("replies after the protocol error %s: %s" % (show(replies[perr[0]]),
                                                                        show(b"".join(replies[perr[0] + 1:]))))
        if exp is not None:
            before, text = exp
            if closed == "rst" and len(replies) <= before and not perr:
                return "reset"  # a prefix: the rest was dropped with the RST
            if replies[before:] != [text] or len(replies) != before + 1 or not closed:
                raise Failure("expected %d replies then %s and a close; got %d replies, last %s, closed=%s" %
                              (before, show(text), len(replies), show(replies[-1] if replies else None), closed))
            return "error+close"
        if perr:
            return "error+close"
        if closed:
            if b"quit" in data.lower():
                return "quit"
            if closed == "rst":
                return "reset"  # its error reply may have been dropped with the RST
            raise Failure("connection closed (FIN) without a protocol error (after %d replies)" % len(replies))
        if marker and replies and replies[-1] == bulk("after"):
            return "answered"
        return "waiting"
    except Failure as e:
        e.args = ("%s input: %s\n      %s" % (desc, ctx.save("garbage", data), e.args[0]),)
        raise
    finally:
        close(sock, rng.random() < 0.5)


def auth_pipeline_case(ctx, rng, pw):
    """Unauthenticated: a few commands (each refused), AUTH, then commands
    past the unauthenticated limits (more than 10 arguments, a bulk over
    16384 bytes), all in one pipeline cut at random bytes. The server must
    parse no further than one command ahead until AUTH has run, so every
    request still gets exactly one reply, in order, none a protocol error."""
    reqs = []
    for _ in range(rng.randint(0, 3)):
        reqs.append((gen.encode(rng, gen.unauth_command(rng)), "refused"))
    reqs.append((gen.encode(rng, ["AUTH", pw]), b"+OK\r\n"))
    tail = [["MSET"] + ["k%d" % (i % 16) if j == 0 else "v" for i in range(12) for j in (0, 1)],
            ["SET", "k1", b"z" * rng.randint(16385, 40000)],
            ["ECHO", "authed"]]
    tail = [gen.command(rng) for _ in range(rng.randint(0, 3))] + tail
    reqs += [(gen.encode_multibulk(a), None) for a in tail[:-1]]
    reqs.append((gen.encode_multibulk(tail[-1]), bulk("authed")))
    data = b"".join(r for r, _ in reqs)
    sock = connect(ctx.port)
    buf = bytearray()
    try:
        ends, delays = chunk_plan(rng, len(data))
        sent, closed = send_chunks(sock, data, ends, delays, buf)
        if not sent:
            raise Failure("server closed while the pipeline was being sent")
        closed = read_until_quiet(sock, buf, 10.0, 10.0, bulk("authed"))
        try:
            replies, rest = split_replies(buf)
        except BadReply as ex:
            raise Failure("malformed reply: %s" % ex)
        if len(replies) != len(reqs) or rest:
            raise Failure("%d replies to %d requests (closed=%s), last %s" %
                          (len(replies), len(reqs), closed, show(replies[-1] if replies else None)))
        for i, ((req, exp), rep) in enumerate(zip(reqs, replies)):
            if rep.startswith(PROTO_ERR) or (exp == "refused" and not rep.startswith(b"-")) or \
                    (isinstance(exp, bytes) and rep != exp):
                raise Failure("request %d %s: reply %s, expected %s" % (i, show(req, 80), show(rep),
                                                                        exp if exp else "any"))
        return "auth pipeline"
    except Failure as e:
        e.args = ("auth pipeline input: %s\n      %s" % (ctx.save("auth", data), e.args[0]),)
        raise
    finally:
        close(sock, rng.random() < 0.5)


def phase_garbage(ctx, rng, unauth):
    outcomes = {}
    ctl = None
    pw = None
    if unauth:
        ctl = connect(ctx.port)
        pw = "stress-secret-%s" % ctx.args.seed
        r = ctx.command(ctl, "CONFIG", "SET", "requirepass", pw)
        if r != b"+OK\r\n":
            close(ctl, False)
            raise Failure("CONFIG SET requirepass: %s" % show(r))
    try:
        for _ in range(rng.randint(3, 8)):
            if unauth and rng.random() < 0.3:
                o = auth_pipeline_case(ctx, rng, pw)
                outcomes[o] = outcomes.get(o, 0) + 1
                continue
            if unauth and rng.random() < 0.35:
                data, exp, desc = gen.special(rng, gen.UNAUTH_SPECIALS, unauth=True)
            else:
                data, exp, desc = gen.garbage(rng)
                if unauth:
                    exp = None  # SPECIALS' texts assume an authenticated client
            marker = exp is None and rng.random() < 0.7
            o = garbage_case(ctx, rng, data, exp, desc, marker)
            outcomes[o] = outcomes.get(o, 0) + 1
            ctx.ping()
    finally:
        if ctl is not None:
            try:
                r = ctx.command(ctl, "CONFIG", "SET", "requirepass", "")
            finally:
                close(ctl, False)
            if r != b"+OK\r\n":
                raise Failure("CONFIG SET requirepass '': %s" % show(r))
    return ", ".join("%d %s" % (v, k) for k, v in sorted(outcomes.items()))


# ------------------------------------------------- SCAN beside writers

def scan_walk(ctx, rng):
    """A full SCAN (random COUNT, MATCH, TYPE) while another connection
    keeps adding, expiring and deleting keys between the steps, so the
    table grows, shrinks and rehashes under the cursor. Every reply must
    be [cursor, [keys]], and the walk must end (cursor 0) in bounded
    steps."""
    sc = connect(ctx.port, 10)
    wr = connect(ctx.port, 10)
    try:
        n = rng.randint(500, 5000)
        pre = ["MSET"] + [x for i in range(n) for x in ("key:%d" % rng.randrange(20000), "v")]
        if ctx.command(wr, *pre) != b"+OK\r\n":
            raise Failure("MSET of %d keys failed" % n)
        cursor, steps, seen = b"0", 0, 0
        while True:
            batch = []
            for _ in range(rng.randint(1, 30)):
                op = rng.random()
                if op < 0.5:
                    batch.append(["MSET"] + [x for _ in range(rng.randint(1, 50)) for x in (gen.big_pool_key(rng), "v")])
                elif op < 0.7:
                    batch.append(["SET", gen.big_pool_key(rng), "e", "PX", str(rng.randint(1, 30))])
                elif op < 0.998:
                    batch.append(["DEL"] + [gen.big_pool_key(rng) for _ in range(rng.randint(1, 50))])
                else:
                    batch.append(["FLUSHDB"])
            wr.sendall(b"".join(gen.encode_multibulk(a) for a in batch))
            args = ["SCAN", cursor] + rng.choice([[], ["COUNT", str(rng.choice([1, 10, 30, 100, 1000]))],
                                                  ["MATCH", "key:1*"], ["TYPE", "string", "COUNT", "50"]])
            r = ctx.command(sc, *args)
            try:
                cursor, keys = harness.parse(r)
                int(cursor)
            except (ValueError, TypeError) as e:
                raise Failure("SCAN replied %s (%s)" % (show(r), e))
            seen += len(keys)
            buf = bytearray()
            for _ in batch:
                rep = read_reply(wr, buf, 10)
                if rep.startswith(b"-"):
                    raise Failure("writer beside SCAN got %s" % show(rep))
            steps += 1
            if cursor == b"0":
                return "%d steps, %d keys" % (steps, seen)
            if steps > 3000:
                raise Failure("SCAN did not finish in 3000 steps (cursor %s)" % cursor)
    finally:
        close(sc, False)
        close(wr, rng.random() < 0.5)


# --------------------------------------------------------- (c) big replies

def connected_clients(ctx, sock):
    r = ctx.command(sock, "INFO", "clients")
    body = harness.parse(r)
    for line in body.decode().splitlines():
        if line.startswith("connected_clients:"):
            return int(line.split(":")[1])
    raise Failure("INFO clients has no connected_clients: %s" % show(r))


def closed_by_server(ctx, rng, ctl, kind, key, want):
    """A client with big replies pending that the server closes: by CLIENT
    KILL from another client, or by client-output-buffer-limit. What it
    received must be whole replies and then a prefix of the next one."""
    v = connect(ctx.port, 10)
    try:
        vid = int(ctx.command(v, "CLIENT", "ID")[1:-2])
        m = rng.randint(4, 16)
        if kind == "obuf-limit":
            # The hard limit, or the soft one at once or after a second
            # (the cron's check, networking_clients_cron).
            lim = rng.choice(["normal 2mb 0 0", "normal 0 1mb 0", "normal 0 1mb 1", "normal 8mb 1mb 1"])
            r = ctx.command(ctl, "CONFIG", "SET", "client-output-buffer-limit", lim)
            if r != b"+OK\r\n":
                raise Failure("CONFIG SET client-output-buffer-limit: %s" % show(r))
        try:
            v.sendall(gen.encode_multibulk(["GET", key]) * m)
            time.sleep(rng.choice([0.0, 0.02, 0.1]))
            if kind == "killed":
                r = ctx.command(ctl, "CLIENT", "KILL", "ID", str(vid))
                if r != b":1\r\n":
                    raise Failure("CLIENT KILL ID %d answered %s" % (vid, show(r)))
            buf = bytearray()
            if kind == "obuf-limit":
                # Not reading lets the soft limit's second run out.
                time.sleep(rng.choice([0.0, 0.0, 1.3]))
            closed = read_until_quiet(v, buf, 10.0, 20.0, size=m * len(want))
            if not closed and len(buf) >= m * len(want):
                closed = read_until_quiet(v, buf, 0.2, 0.2)
        finally:
            if kind == "obuf-limit":
                r = ctx.command(ctl, "CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
                if r != b"+OK\r\n":
                    raise Failure("CONFIG SET client-output-buffer-limit back: %s" % show(r))
        try:
            replies, rest = split_replies(buf)
        except BadReply as ex:
            raise Failure("%s: malformed bytes before the close: %s" % (kind, ex))
        if any(r != want for r in replies) or not want.startswith(rest):
            raise Failure("%s: the bytes before the close are not whole GET replies and a prefix" % kind)
        if not closed and len(replies) < m:
            raise Failure("%s: %d of %d replies and no close within 20s" % (kind, len(replies), m))
        if kind == "killed" and not closed:
            raise Failure("killed client not closed (%d of %d replies)" % (len(replies), m))
        return "%d/%d%s" % (len(replies), m, " closed" if closed else "")
    finally:
        close(v, True)


def idle_timeout(ctx, rng, ctl, probe, key, val):
    """CONFIG SET timeout 1: a client idle inside a request (a big bulk
    half sent, or a partial line) is closed by the cron, and freed with
    its partial argument. ctl and probe stay busy meanwhile so that only
    the idle one times out."""
    v = connect(ctx.port, 10)
    try:
        ctx.ping(sock=probe)  # it may have been idle for a while already
        if ctx.command(ctl, "CONFIG", "SET", "timeout", "1") != b"+OK\r\n":
            raise Failure("CONFIG SET timeout 1 refused")
        try:
            head = gen.encode_multibulk(["SET", key + ":idle", val])
            v.sendall(head[:rng.randrange(1, len(head))])
            v.settimeout(0.2)
            deadline = time.monotonic() + 10
            closed = False
            while time.monotonic() < deadline and not closed:
                try:
                    c = v.recv(4096)
                    if c:
                        raise Failure("idle client got bytes %s" % show(c))
                    closed = True
                except socket.timeout:
                    pass
                except ConnectionResetError:
                    closed = True
                ctx.ping(sock=ctl)
                ctx.ping(sock=probe)
        finally:
            if ctx.command(ctl, "CONFIG", "SET", "timeout", "0") != b"+OK\r\n":
                raise Failure("CONFIG SET timeout 0 refused")
        if not closed:
            raise Failure("a client idle for 10s with timeout 1 was not closed")
        return "closed"
    finally:
        close(v, True)


def wait_clients(ctx, sock, want, timeout=5.0):
    """Polls INFO until connected_clients <= want; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        n = connected_clients(ctx, sock)
        if n <= want:
            return n
        if time.monotonic() > deadline:
            raise Failure("connected_clients is %d, expected %d: closed clients not freed" % (n, want))
        time.sleep(0.02)


def storm(ctx, rng, ctl):
    """More connections at once than maxclients allows: each gets PONG or
    Valkey's "max number of clients reached" and a close."""
    # Only ctl and the probe are open now; wait until the server has freed
    # every client closed before, or the room below would be miscounted.
    base = wait_clients(ctx, ctl, 2)
    room = rng.randint(1, 10)
    if ctx.command(ctl, "CONFIG", "SET", "maxclients", str(base + room)) != b"+OK\r\n":
        raise Failure("CONFIG SET maxclients refused")
    socks = []
    try:
        for _ in range(room + rng.randint(1, 20)):
            s = connect(ctx.port)
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            socks.append(s)
        pongs = refused = 0
        for s in socks:
            buf = bytearray()
            closed = read_until_quiet(s, buf, 5.0, 5.0, b"+PONG\r\n")
            if bytes(buf) == b"+PONG\r\n":
                pongs += 1
            elif bytes(buf) == b"-ERR max number of clients reached\r\n" and (
                    closed or read_until_quiet(s, buf, 5.0, 5.0)):
                refused += 1
            else:
                raise Failure("storm: a connection got %s (closed=%s)" % (show(bytes(buf)), closed))
        if pongs > room:
            raise Failure("storm: %d PONGs with room for %d clients" % (pongs, room))
        return "%d ok %d refused" % (pongs, refused)
    finally:
        for s in socks:
            close(s, rng.random() < 0.5)
        if ctx.command(ctl, "CONFIG", "SET", "maxclients", "10000") != b"+OK\r\n":
            raise Failure("CONFIG SET maxclients 10000 refused")


def phase_big(ctx, rng):
    val = rng.randbytes(BIG)
    # The slow readers' loop turns a timing-dependent number of times: its
    # pauses come from their own generator, so what follows replays.
    pace = random.Random(rng.random())
    key = "stress:big:%d" % ctx.round
    want = bulk(val)
    ctl = connect(ctx.port, 10)
    probe = connect(ctx.port, 10)
    slow = []
    try:
        # The earlier phases closed all their connections: only ctl and
        # probe may be left once the server has freed them.
        wait_clients(ctx, ctl, 2)
        if ctx.command(ctl, "SET", key, val, timeout=20) != b"+OK\r\n":
            raise Failure("SET of a 1 MB value failed")
        # Slow readers: each pipelines m GETs and reads a few KB at a time.
        for i in range(rng.randint(1, 3)):
            s = connect(ctx.port, 10)
            m = rng.randint(2, 5)
            s.sendall(gen.encode_multibulk(["GET", key]) * m + gen.encode_multibulk(["ECHO", "slow%d" % i]))
            s.setblocking(False)
            slow.append([s, m, bytearray(), rng.choice([4096, 16384, 65536])])
        deadline = time.monotonic() + 40
        next_probe = 0.0
        pings = 0
        while any(len(b) < m * len(want) + len(bulk("slow%d" % i)) for i, (s, m, b, _) in enumerate(slow)):
            now = time.monotonic()
            if now > deadline:
                raise Failure("slow readers: not all replies within 40s: %s" %
                              [len(b) for _, _, b, _ in slow])
            for s, m, b, step in slow:
                try:
                    chunk = s.recv(step)
                except (BlockingIOError, InterruptedError):
                    continue
                if not chunk:
                    raise Failure("slow reader: server closed the connection after %d bytes" % len(b))
                b += chunk
            if now >= next_probe:
                # Another client is still served while big replies wait.
                t0 = time.monotonic()
                ctx.ping(timeout=3.0, sock=probe)
                if time.monotonic() - t0 > 2.0:
                    raise Failure("PING took %.1fs beside the slow readers" % (time.monotonic() - t0))
                pings += 1
                next_probe = now + 0.05
            time.sleep(pace.choice([0.0, 0.001, 0.003]))
        for i, (s, m, b, _) in enumerate(slow):
            replies, rest = split_replies(b)
            if replies != [want] * m + [bulk("slow%d" % i)] or rest:
                bad = [j for j, r in enumerate(replies) if r != want]
                raise Failure("slow reader %d: %d replies, bad ones %s, %d bytes left" %
                              (i, len(replies), bad[:5], len(rest)))
        for s, _, _, _ in slow:
            close(s, rng.random() < 0.5)
        nslow = len(slow)
        slow = []
        # Vanishing clients: RST in the middle of a reply or a request;
        # clients the server closes itself (CLIENT KILL, the output buffer
        # limit, maxclients).
        kinds = []
        for _ in range(rng.randint(1, 4)):
            kind = rng.choice(["mid-reply", "mid-request", "unread", "mid-request-fin", "killed", "obuf-limit",
                               "storm", "idle-timeout"])
            kinds.append(kind)
            if kind == "idle-timeout":
                kinds[-1] += ":" + idle_timeout(ctx, rng, ctl, probe, key, val)
                continue
            if kind in ("killed", "obuf-limit"):
                kinds[-1] += ":" + closed_by_server(ctx, rng, ctl, kind, key, want)
                continue
            if kind == "storm":
                kinds[-1] += ":" + storm(ctx, rng, ctl)
                continue
            s = connect(ctx.port, 10)
            if kind == "mid-reply":
                m = rng.randint(1, 4)
                s.sendall(gen.encode_multibulk(["GET", key]) * m)
                got, goal = 0, rng.randrange(m * len(want))
                s.settimeout(5)
                while got < goal:
                    try:
                        c = s.recv(min(65536, goal - got))
                    except socket.timeout:
                        raise Failure("mid-reply: no bytes for 5s after %d of %d" % (got, m * len(want)))
                    if not c:
                        raise Failure("mid-reply: server closed after %d bytes" % got)
                    got += len(c)
            elif kind == "unread":
                s.sendall(gen.encode_multibulk(["GET", key]) * rng.randint(4, 16))
                time.sleep(rng.choice([0, 0.01, 0.05]))
            else:
                head = gen.encode_multibulk(["SET", key + ":v", val])
                s.sendall(head[:rng.randrange(len(head))])
                time.sleep(rng.choice([0, 0.01]))
            close(s, kind != "mid-request-fin")
        ctx.ping()
        # Every vanished client must be freed: only ctl and probe remain.
        wait_clients(ctx, ctl, 2)
        return "%d slow readers (%d PINGs beside), vanished: %s" % (nslow, pings, ",".join(kinds))
    finally:
        for s, _, _, _ in slow:
            close(s, True)
        close(probe, False)
        close(ctl, False)


# ------------------------------------------------------------------- driver

def discover_commands(ctx):
    """Sends what the server says it has: every name in COMMAND LIST that
    gen.py does not know, is not in gen.NEVER and is not flagged
    blocking, admin or pubsub goes into gen.GENERIC with its arity."""
    s = connect(ctx.port)
    try:
        names = sorted(n.decode().lower() for n in harness.parse(ctx.command(s, "COMMAND", "LIST")))
        extra, never = [], []
        for n in names:
            if n in gen.KNOWN:
                continue
            if n in gen.NEVER:
                never.append(n)
                continue
            info = harness.parse(ctx.command(s, "COMMAND", "INFO", n))[0]
            flags = {f.decode().lower() for f in info[2]}
            if flags & {"blocking", "admin", "pubsub"}:
                never.append(n)
                continue
            gen.GENERIC[n] = int(info[1])
            extra.append(n)
    finally:
        close(s, False)
    print("commands: %d in the server's table; %d built by gen.py; random arguments for %s; never sent: %s" %
          (len(names), len([n for n in names if n in gen.KNOWN]), extra or "none", never or "none"))


CHECKS = ["pipelines", "garbage", "unauthenticated garbage", "SCAN beside writers", "big replies and vanishing clients",
          "alive after the rounds", "SIGTERM exits 0", "no sanitizer report"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default=os.path.join(REPO, "build", "asan", "soloist-server"))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--only-round", type=int, default=None, help="replay one round of --seed")
    ap.add_argument("--time-budget", type=float, default=50.0, help="start no round after this many seconds")
    ap.add_argument("--log-dir", default=os.path.join(REPO, "build", "stress-logs"))
    ap.add_argument("--server-arg", action="append", default=[], help="one more server flag (repeatable)")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "little")
    os.makedirs(args.log_dir, exist_ok=True)
    rounds = [args.only_round] if args.only_round is not None else list(range(args.rounds))
    print("stress: seed %d, %d rounds, budget %.0fs, server %s" % (args.seed, len(rounds), args.time_budget,
                                                                   args.server))
    print("  replay: python3 tests/stress/stress.py --server %s --seed %d --rounds %d" %
          (args.server, args.seed, args.rounds))
    sys.stdout.flush()

    env = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "abort_on_error=1:detect_leaks=1"),
           "UBSAN_OPTIONS": os.environ.get("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")}
    extra = SERVER_ARGS + [a for s in args.server_arg for a in s.split()]
    server = harness.Server(binary=os.path.abspath(args.server), extra=extra, name="stress", log_dir=args.log_dir, env=env)
    fails = {c: [] for c in CHECKS}
    ran = {c: 0 for c in CHECKS}
    try:
        server.start()
    except Exception as e:  # noqa: BLE001 - reported as a failure below
        print("FAIL server did not start: %s" % e)
        print("0 passed, 1 failed")
        return 1
    ctx = Ctx(args, server)
    try:
        discover_commands(ctx)
    except (Failure, OSError, ValueError) as e:
        print("note: could not read the server's command table (%s); using gen.py's" % e)
    t0 = time.monotonic()
    done = 0
    for r in rounds:
        if time.monotonic() - t0 > args.time_budget:
            print("time budget reached after %d rounds" % done)
            break
        ctx.round = r
        parts = []
        phases = [("pipelines", lambda rng: phase_pipelines(ctx, rng)),
                  ("garbage", lambda rng: phase_garbage(ctx, rng, False))]
        if r % 3 == 1:
            phases.append(("unauthenticated garbage", lambda rng: phase_garbage(ctx, rng, True)))
        if r % 3 == 2:
            phases.append(("SCAN beside writers", lambda rng: scan_walk(ctx, rng)))
        phases.append(("big replies and vanishing clients", lambda rng: phase_big(ctx, rng)))
        for name, fn in phases:
            rng = random.Random("%d:%d:%s" % (args.seed, r, name))
            ran[name] += 1
            t = time.monotonic()
            try:
                parts.append("%s: %s (%.1fs)" % (name.split()[0], fn(rng), time.monotonic() - t))
            except (Failure, OSError) as e:
                msg = "round %d: %s" % (r, e)
                if os.environ.get("STRESS_TRACEBACK"):
                    import traceback
                    msg += "\n" + traceback.format_exc()
                if not server.alive():
                    msg += "\n      server died (exit %s); log tail:\n%s" % (server.proc.returncode,
                                                                           server.log_tail(40))
                fails[name].append(msg)
                parts.append("%s: FAILED" % name.split()[0])
            if not server.alive():
                break
        print("round %d: %s" % (r, "; ".join(parts)))
        sys.stdout.flush()
        done += 1
        if not server.alive():
            break

    ran["alive after the rounds"] = 1
    try:
        ctx.ping()
        s = connect(ctx.port)
        deadline = time.monotonic() + 5
        while True:
            n = connected_clients(ctx, s)
            if n == 1:
                break
            if time.monotonic() > deadline:
                raise Failure("connected_clients is %d with one connection open" % n)
            time.sleep(0.05)
        close(s, False)
    except (Failure, OSError) as e:
        fails["alive after the rounds"].append(str(e))
    ran["SIGTERM exits 0"] = 1
    if server.alive():
        server.signal(15)
        rc = server.wait(30)
        if rc is None:
            server.kill()
            fails["SIGTERM exits 0"].append("no exit within 30s of SIGTERM")
        elif rc != 0:
            fails["SIGTERM exits 0"].append("exit status %s" % rc)
    else:
        fails["SIGTERM exits 0"].append("the server was already gone (exit %s)" % server.proc.returncode)
    ran["no sanitizer report"] = 1
    log = server.log_text()
    rep = harness.sanitizer_report(log)
    if rep:
        lines = log.splitlines()
        i = next(j for j, ln in enumerate(lines) if rep in ln)
        fails["no sanitizer report"].append("%s\n%s" % (server.log_path, "\n".join(lines[max(0, i - 2):i + 60])))

    passed = failed = 0
    for c in CHECKS:
        if not ran[c]:
            print("SKIP %s (no round ran it)" % c)
        elif fails[c]:
            failed += 1
            print("FAIL %s (%d of %d runs)" % (c, len(fails[c]), ran[c]))
            for m in fails[c][:3]:
                print("    " + m.replace("\n", "\n    "))
        else:
            passed += 1
            print("PASS %s (%d runs)" % (c, ran[c]))
    if failed:
        print("seed %d; server log %s" % (args.seed, server.log_path))
    print("stress: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
