"""Phase (c) of the stress run: big replies, slow readers, clients that
vanish or are closed by the server, a connection storm.

Owns the connections of one phase. phase_big stores a 1 MB value, has
slow readers pipeline GETs of it while a probe's PINGs must stay fast,
then draws the ways a client with work pending can go away
(closed_by_server, idle_timeout, storm, RST/FIN mid reply or request);
afterwards every such client must have been freed (INFO).

Valkey anchors: src/networking.c writeToClient (a per-event write cap),
freeClientAsync, checkClientOutputBufferLimits, clientsCronHandleTimeout,
acceptCommonHandler ("max number of clients reached").
"""

import random
import socket
import time

import gen
from net import BIG, Failure, bulk, close, connect, read_until_quiet, show, wait_clients
from replies import BadReply, split_replies


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
