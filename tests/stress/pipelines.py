"""Phase (a) of the stress run: random valid pipelines, and a SCAN walked
beside writers.

Owns the connections of one phase. PipeClient multiplexes 1-4
non-blocking connections with select(); each sends its pipeline in
planned chunks while reading, and every request must get exactly one
reply, in order. scan_walk runs a full SCAN while another connection
grows and shrinks the keyspace under the cursor.

Valkey anchors: src/networking.c processInputBuffer (one reply per
command, in order, across any read boundaries); src/db.c scanGenericCommand
(the cursor survives rehashing).
"""

import select
import time

import gen
import harness
from net import PROTO_ERR, Failure, bulk, chunk_plan, close, connect, read_reply, show
from replies import BadReply, reply_end


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
        # A close by RST may cut a reply anywhere (the kernel drops what was
        # in flight), so after a reset the bytes left are a prefix of the
        # next reply, not a stray one.
        if self.inbuf and not self.reset:
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
