"""An incremental RESP2/RESP3 reply scanner for the stress run.

Owns nothing. harness.Conn.read_reply() blocks until one reply is whole;
the stress run multiplexes many non-blocking sockets, so it needs the
other shape: given the bytes received so far, where does the next
complete reply end (or "not yet")? It also refuses what a server must
never send: an unknown type byte, a malformed length, a bulk whose
payload is not followed by CRLF.

Valkey anchor: the reply types src/networking.c writes (addReply*,
_addReplyLongLongWithPrefix, addReplyVerbatim, addReplyMapLen...).
"""

import re

_INT = re.compile(rb"-?[0-9]+\Z")
_LINE = b"+-:_,#("
_BULK = b"$!="
_AGG = b"*~>"
_PAIRS = b"%|"

# A reply's first line (type, length, simple string) is never this long;
# a buffer without CRLF past it is not a reply at all.
MAX_LINE = 1 << 20


class BadReply(Exception):
    """The bytes cannot be a RESP reply."""


def reply_end(buf, pos=0, depth=0):
    """Index just past the complete reply starting at buf[pos], or -1 when
    more bytes are needed. Raises BadReply on bytes no server may send."""
    if pos >= len(buf):
        return -1
    if depth > 64:
        raise BadReply("nesting deeper than 64")
    t = buf[pos:pos + 1]
    eol = buf.find(b"\r\n", pos)
    if eol < 0:
        if len(buf) - pos > MAX_LINE:
            raise BadReply("no CRLF in %d bytes" % (len(buf) - pos))
        return -1
    head = bytes(buf[pos + 1:eol])
    end = eol + 2
    if t in (b"+", b"-"):
        if b"\n" in head or b"\r" in head:
            raise BadReply("line reply with CR/LF inside")
        return end
    if t in (b":", b"("):
        if not _INT.match(head):
            raise BadReply("bad integer %r" % head[:40])
        return end
    if t == b"_":
        if head:
            raise BadReply("null with a payload")
        return end
    if t == b"#":
        if head not in (b"t", b"f"):
            raise BadReply("bad boolean %r" % head[:40])
        return end
    if t == b",":
        return end
    if not _INT.match(head):
        raise BadReply("bad length %r after %r" % (head[:40], t))
    n = int(head)
    if t in (b"$", b"!", b"="):
        if n == -1 and t == b"$":
            return end
        if n < 0:
            raise BadReply("negative length %d" % n)
        if len(buf) < end + n + 2:
            return -1
        if buf[end + n:end + n + 2] != b"\r\n":
            raise BadReply("bulk of %d not followed by CRLF" % n)
        return end + n + 2
    if t in (b"*", b"~", b">", b"%", b"|"):
        if n == -1 and t == b"*":
            return end
        if n < 0:
            raise BadReply("negative count %d" % n)
        if t in (b"%", b"|"):
            n *= 2
        for _ in range(n):
            end = reply_end(buf, end, depth + 1)
            if end < 0:
                return -1
        if t == b"|":  # an attribute annotates the reply after it
            return reply_end(buf, end, depth + 1)
        return end
    raise BadReply("unknown reply type %r at %r" % (t, bytes(buf[pos:pos + 40])))


def split_replies(buf):
    """(complete replies as bytes, bytes left over) of a buffer."""
    out, pos = [], 0
    while True:
        e = reply_end(buf, pos)
        if e < 0:
            return out, bytes(buf[pos:])
        out.append(bytes(buf[pos:e]))
        pos = e
