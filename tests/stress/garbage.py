"""Phase (b) of the stress run: garbage, authenticated or not.

Owns the connections of one phase. garbage_case sends one malformed
stream (gen.garbage / gen.special) and judges what comes back;
auth_pipeline_case checks that an unauthenticated client is parsed one
command ahead until AUTH has run; phase_garbage sets and clears
requirepass around the unauthenticated variant.

Valkey anchors: src/networking.c processMultibulkBuffer/processInlineBuffer
and the protocol-error path (reply, then CLIENT_CLOSE_AFTER_REPLY); the
unauthenticated limits in processMultibulkBuffer.
"""

import gen
from net import (PROTO_ERR, Failure, bulk, chunk_plan, close, connect, read_until_quiet, send_chunks,
                 show)
from replies import BadReply, split_replies


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
