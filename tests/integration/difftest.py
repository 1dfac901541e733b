#!/usr/bin/env python3
"""Step 0 differential suite: replay command transcripts against soloist
and an oracle (Debian's redis-server 7.0) in the same run and compare
every reply byte for byte.

Owns: the transcript format (below), the comparison rules, and the list
of deliberate differences (deliberate_differences.txt). It only talks to
servers through harness.py; it knows nothing of soloist's internals.

Valkey anchor: replies and error strings are those of valkey src/server.c
(processCommand), src/networking.c (protocol errors) and src/t_string.c;
Redis 7.0 is the oracle that runs here, and where Valkey's text differs
from Redis 7.0's the difference is listed with its Valkey source.

Transcript format (tests/integration/transcripts/*.txt), one item a line:

  # comment                 ignored, as are blank lines
  SET k "a b\\x00"           a command, redis-cli quoting: bare words,
                            "double quoted" (\\n \\r \\t \\" \\\\ \\xHH) or
                            'single quoted'; the token !rep:N:TEXT stands
                            for TEXT repeated N times (large values)
  @modifier ... COMMAND     modifiers before a command change how its
                            replies are compared:
      @unordered            aggregate: compare the sorted elements (KEYS)
      @ttl-approx           integers may differ by 1 (TTL)
      @approx N             integers may differ by N (PTTL; the
                            transcripts give 2000 ms, since either
                            server may stall for half a second between
                            a command and the PTTL on a loaded machine)
      @ignore-reply         only the reply's type byte is compared (INFO)
      @scan                 SCAN loop from cursor 0 until 0 (at most
                            10000 calls); compare the union of keys
      @then-closed          after the reply both connections must close
                            (QUIT); both are then reopened
      @no-reply             neither server may reply (CLIENT REPLY OFF or
                            SKIP): nothing may arrive within
                            NO_REPLY_WAIT; inside @pipeline the command's
                            reply is simply not read, so a stray reply
                            shifts every later comparison
      @expect 'REGEX'       both replies must match REGEX (a Python re,
                            searched in the reply bytes; single quotes keep
                            its backslashes); the two replies are then not
                            compared with each other
  @server-args ARGS...      (before any command) extra flags for both
                            servers; transcripts with the same flags
                            share a server pair
  @resp3 / @resp2           HELLO 3 / HELLO 2 on both connections; the
                            HELLO replies are not compared (server name,
                            version and id differ)
  @reconnect                close both connections and open new ones
  @closed                   both connections must have been closed by
                            the servers (after @raw-n); both are reopened
  @sleep MS                 pause (expiry)
  @pipeline ... @end        the commands between are sent in one write,
                            then each reply is read and compared
  @repeat N COMMAND         N copies of COMMAND, {i} replaced by 0..N-1,
                            pipelined; every reply compared
  @raw "BYTES"...           send raw bytes (the tokens concatenated, so
                            !rep: works too), compare one reply
  @raw-n N "BYTES"          send raw bytes, compare N replies
  @raw-close "BYTES"        send raw bytes, compare one reply, then both
                            connections must be closed (protocol errors)
  @raw-send "BYTES"         send raw bytes, read nothing (split requests)
  @client NAME              the steps that follow talk over client NAME's
                            connections (one to each server, opened on
                            first use, unauthenticated); the transcript
                            starts as client "main". WATCH, blocking pops
                            and CLIENT KILL need a second client
  @send COMMAND             send COMMAND on the current client and read
                            nothing: its reply is owed (a blocked pop)
  @read                     read the oldest reply the current client is
                            owed on both servers, within the usual
                            timeout, and compare it; `@read @ttl-approx`
                            and the other modifiers apply to it
  @still-owed               the current client's owed reply must not have
                            arrived (nothing within STILL_OWED_WAIT: it is
                            still blocked)

Each transcript starts on a flushed keyspace (FLUSHALL) and fresh
connections. A transcript passes when every compared reply is equal, or
differs in a way deliberate_differences.txt allows. One transcript is one
counted test case.
"""

import argparse
import fnmatch
import io
import os
import threading
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import (ConnectionClosed, ReplyTimeout, Server, elements,  # noqa: E402
                     encode, show)

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSCRIPTS = os.path.join(HERE, "transcripts")
DELIBERATE = os.path.join(HERE, "deliberate_differences.txt")
MAX_SCAN_CALLS = 10000
MAX_REPORTED_PER_REPEAT = 5
NO_REPLY_WAIT = 0.2  # seconds; a later stray reply still fails the next compare
# A blocked client's owed reply is read by a later @read in any case, so
# @still-owed needs only long enough to catch a server that answers at once.
STILL_OWED_WAIT = 0.1


# ---------------------------------------------------------------- parsing

class TranscriptError(Exception):
    pass


def tokenize(line):
    """Split a line the way redis-cli splits what you type (sdssplitargs)."""
    out, i, n = [], 0, len(line)
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            return out
        tok = bytearray()
        quoted = False
        if line[i] == '"':
            quoted = True
            i += 1
            while True:
                if i >= n:
                    raise TranscriptError("unbalanced double quote")
                c = line[i]
                if c == "\\" and i + 1 < n:
                    e = line[i + 1]
                    if e == "x" and i + 3 < n and all(
                            ch in "0123456789abcdefABCDEF" for ch in line[i + 2:i + 4]):
                        tok.append(int(line[i + 2:i + 4], 16))
                        i += 4
                        continue
                    tok += {"n": b"\n", "r": b"\r", "t": b"\t", "b": b"\b",
                            "a": b"\a"}.get(e, e.encode())
                    i += 2
                    continue
                if c == '"':
                    i += 1
                    break
                tok += c.encode()
                i += 1
        elif line[i] == "'":
            quoted = True
            i += 1
            while True:
                if i >= n:
                    raise TranscriptError("unbalanced single quote")
                c = line[i]
                if c == "\\" and i + 1 < n and line[i + 1] == "'":
                    tok += b"'"
                    i += 2
                    continue
                if c == "'":
                    i += 1
                    break
                tok += c.encode()
                i += 1
        else:
            while i < n and not line[i].isspace():
                tok += line[i].encode()
                i += 1
        if quoted and i < n and not line[i].isspace():
            raise TranscriptError("closing quote must be followed by a space")
        if not quoted and tok.startswith(b"!rep:"):
            _, count, text = tok.decode().split(":", 2)
            tok = bytearray(text.encode() * int(count))
        out.append(bytes(tok))


class Step:
    """One thing to do: kind is 'cmd', 'raw', 'pipeline', 'repeat',
    'resp', 'reconnect', 'sleep'."""

    def __init__(self, kind, lineno, text, **kw):
        self.kind = kind
        self.lineno = lineno
        self.text = text
        self.mods = {}
        self.args = []
        self.__dict__.update(kw)


MODS_NOARG = {"@unordered", "@ttl-approx", "@ignore-reply", "@scan",
              "@then-closed", "@no-reply"}
MODS_ARG = {"@approx", "@expect"}


def parse_command_line(line, lineno):
    toks = tokenize(line)
    mods = {}
    text = line.strip()
    while toks and toks[0].startswith(b"@"):
        m = toks.pop(0).decode()
        if m in MODS_NOARG:
            mods[m] = True
        elif m in MODS_ARG:
            if not toks:
                raise TranscriptError("%s needs an argument" % m)
            mods[m] = toks.pop(0).decode("latin-1")
        else:
            raise TranscriptError("unknown modifier %s" % m)
    if "@ttl-approx" in mods:
        mods["@approx"] = "1"
    if not toks:
        raise TranscriptError("modifiers without a command")
    # The command's text as shown and as matched by deliberate entries:
    # the line without its modifiers.
    shown = re.sub(r'^(\s*@(unordered|ttl-approx|ignore-reply|scan|then-closed|no-reply)\s+'
                   r'|\s*@(approx|expect)\s+("[^"]*"|\'[^\']*\'|\S+)\s+)+', "", text)
    return Step("cmd", lineno, shown.strip(), args=toks, mods=mods)


class Transcript:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.server_args = []
        self.steps = []
        self._parse()

    def _parse(self):
        with open(self.path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        pipeline = None
        for no, line in enumerate(lines, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            try:
                self._parse_line(s, no, pipeline)
                if s == "@pipeline":
                    pipeline = Step("pipeline", no, s, cmds=[])
                elif s == "@end":
                    if pipeline is None:
                        raise TranscriptError("@end without @pipeline")
                    self.steps.append(pipeline)
                    pipeline = None
                elif pipeline is not None and not s.startswith("@pipeline"):
                    pipeline.cmds.append(parse_command_line(s, no))
            except (TranscriptError, ValueError) as e:
                raise TranscriptError("%s:%d: %s" % (self.name, no, e))
        if pipeline is not None:
            raise TranscriptError("%s: @pipeline without @end" % self.name)

    def _parse_line(self, s, no, pipeline):
        if s in ("@pipeline", "@end") or pipeline is not None:
            return
        word = s.split(None, 1)[0]
        rest = s[len(word):].strip()
        if word == "@server-args":
            if self.steps:
                raise TranscriptError("@server-args must come first")
            self.server_args += [t.decode() for t in tokenize(rest)]
        elif word in ("@resp3", "@resp2"):
            self.steps.append(Step("resp", no, s, proto=word[-1]))
        elif word == "@reconnect":
            self.steps.append(Step("reconnect", no, s))
        elif word == "@closed":
            self.steps.append(Step("closed", no, s))
        elif word == "@sleep":
            self.steps.append(Step("sleep", no, s, ms=int(rest)))
        elif word == "@repeat":
            n, cmd = rest.split(None, 1)
            st = parse_command_line(cmd, no)
            self.steps.append(Step("repeat", no, cmd, n=int(n), args=st.args,
                                   mods=st.mods))
        elif word in ("@raw", "@raw-close", "@raw-send"):
            toks = tokenize(rest)
            if not toks:
                raise TranscriptError("%s needs bytes to send" % word)
            self.steps.append(Step("raw", no, s, data=b"".join(toks), nreplies=0 if
                                   word == "@raw-send" else 1,
                                   close=word == "@raw-close"))
        elif word == "@client":
            if not rest or len(rest.split()) != 1:
                raise TranscriptError("@client needs one name")
            self.steps.append(Step("client", no, s, name=rest))
        elif word == "@send":
            st = parse_command_line(rest, no)
            self.steps.append(Step("send", no, rest, args=st.args, mods=st.mods))
        elif word == "@read":
            mods = parse_command_line(rest + " X", no).mods if rest else {}
            self.steps.append(Step("read", no, s, mods=mods))
        elif word == "@still-owed":
            self.steps.append(Step("still_owed", no, s))
        elif word == "@raw-n":
            n, q = rest.split(None, 1)
            toks = tokenize(q)
            self.steps.append(Step("raw", no, s, data=b"".join(toks),
                                   nreplies=int(n), close=False))
        else:
            self.steps.append(parse_command_line(s, no))


# ---------------------------------------------------------------- deliberate

class Deliberate:
    """deliberate_differences.txt: `glob | command regex | reply regex |
    reason`; the reply regex (or *) must match soloist's reply."""

    def __init__(self, path):
        self.entries = []
        if not os.path.exists(path):
            return
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                parts = [p.strip() for p in s.split(" | ", 3)]
                if len(parts) != 4:
                    raise TranscriptError("%s:%d: need 4 fields separated "
                                          "by ' | '" % (path, no))
                glob, cmd, reply, reason = parts
                self.entries.append({
                    "line": no, "glob": glob, "cmd": re.compile(cmd),
                    "reply": None if reply == "*" else re.compile(reply.encode("latin-1"), re.S),
                    "reason": reason, "used": 0})

    def find(self, transcript, text, target_reply):
        for e in self.entries:
            if not fnmatch.fnmatch(transcript, e["glob"]):
                continue
            if not e["cmd"].search(text):
                continue
            # a "<close>" check has no reply to match: the command regex
            # must name the " <close>" suffix itself
            if (e["reply"] is not None and not text.endswith(" <close>") and
                    (target_reply is None or not e["reply"].search(target_reply))):
                continue
            e["used"] += 1
            return e
        return None


# ---------------------------------------------------------------- comparing

class Side:
    """One server and its current connection."""

    def __init__(self, label, server):
        self.label = label
        self.server = server
        self.conn = None

    def connect(self):
        self.close()
        self.conn = self.server.conn()

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def read(self, timeout=None):
        """One reply's bytes, or a '<closed>'/'<timeout>' marker string."""
        if self.conn is None or self.conn.closed:
            return "<closed>"
        try:
            return self.conn.read_reply(timeout)
        except ConnectionClosed:
            return "<closed>"
        except ReplyTimeout:
            return "<timeout>"
        except ValueError as e:
            return "<unparsable: %s>" % e

    def send(self, data):
        if self.conn is None or self.conn.closed:
            return
        try:
            self.conn.send(data)
        except OSError:
            self.conn.closed = True


def _as_int(r):
    if isinstance(r, bytes) and r[:1] == b":":
        try:
            return int(r[1:-2])
        except ValueError:
            return None
    return None


def equal(mods, a, b):
    """Are replies a (target) and b (oracle) equal under mods?"""
    if "@expect" in mods:
        rx = re.compile(mods["@expect"].encode("latin-1"), re.S)
        return all(isinstance(r, bytes) and rx.search(r) for r in (a, b))
    if not isinstance(a, bytes) or not isinstance(b, bytes):
        return a == b
    if "@ignore-reply" in mods:
        return a[:1] == b[:1]
    if "@approx" in mods:
        ia, ib = _as_int(a), _as_int(b)
        if ia is not None and ib is not None:
            return abs(ia - ib) <= int(mods["@approx"])
    if "@unordered" in mods:
        ea, eb = elements(a), elements(b)
        if ea is not None and eb is not None:
            if a[:1] == b"%" and b[:1] == b"%":
                ea = [ea[i] + ea[i + 1] for i in range(0, len(ea), 2)]
                eb = [eb[i] + eb[i + 1] for i in range(0, len(eb), 2)]
            return a[:1] == b[:1] and sorted(ea) == sorted(eb)
    return a == b


class Runner:
    def __init__(self, target_bin, oracle_bin, deliberate, log_dir,
                 verbose=False, out=sys.stdout):
        self.target_bin = target_bin
        self.oracle_bin = oracle_bin
        self.deliberate = deliberate
        self.log_dir = log_dir
        self.verbose = verbose
        self.out = out
        self.servers = {}
        self.sanitizer_reports = []
        self.crashes = []

    def p(self, *a):
        print(*a, file=self.out)
        self.out.flush()

    # -- servers, shared by transcripts with the same @server-args
    def pair(self, args):
        key = tuple(args)
        if key in self.servers:
            t, o = self.servers[key]
            if t.alive() and o.alive():
                return t, o
            self.stop_pair(key)
        t = Server(self.target_bin, args, name="target", log_dir=self.log_dir)
        o = Server(self.oracle_bin, args, name="oracle", log_dir=self.log_dir)
        t.start()
        o.start()
        self.servers[key] = (t, o)
        return t, o

    def stop_pair(self, key):
        for s in self.servers.pop(key, ()):
            rc = s.stop()
            if s.name == "target":
                rep = harness.sanitizer_report(s.log_text())
                if rep:
                    self.sanitizer_reports.append((s.log_path, rep))
                if rc not in (0, None) and rc != -15:
                    self.crashes.append("target exited %s (log %s)"
                                        % (rc, s.log_path))

    def stop_all(self):
        for key in list(self.servers):
            self.stop_pair(key)

    # -- one transcript
    def run(self, tr):
        self.tr = tr
        self.failures = 0
        self.compared = 0
        self.deliberates = 0
        try:
            t, o = self.pair(tr.server_args)
        except RuntimeError as e:
            self.p("FAIL %s: cannot start servers: %s" % (tr.name, e))
            return False
        self.a, self.b = Side("soloist", t), Side("oracle", o)
        # Client name -> (soloist side, oracle side, owed replies' steps).
        self.clients = {"main": (self.a, self.b, [])}
        self.owed = self.clients["main"][2]
        self.password = None
        # Only the FLUSHALL that starts a transcript authenticates on its
        # own; the transcript's connections start unauthenticated.
        if "--requirepass" in tr.server_args:
            self.password = tr.server_args[tr.server_args.index("--requirepass") + 1]
        try:
            self.fresh()
            for st in tr.steps:
                getattr(self, "do_" + st.kind)(st)
                if not t.alive():
                    self.p("  %s:%d: soloist died (exit %s) after: %s\n%s"
                           % (tr.name, st.lineno, t.proc.returncode,
                              st.text[:200], t.log_tail()))
                    self.failures += 1
                    break
        finally:
            for a, b, _ in self.clients.values():
                a.close()
                b.close()
        ok = self.failures == 0
        extra = (", %d deliberate" % self.deliberates) if self.deliberates else ""
        self.p("%s %s (%d replies compared, %d differ%s)"
               % ("ok  " if ok else "FAIL", tr.name, self.compared,
                  self.failures, extra))
        return ok

    def fresh(self):
        for s in (self.a, self.b):
            s.connect()
            if self.password:
                s.send(encode("AUTH", self.password))
                s.read()
            s.send(encode("FLUSHALL"))
            r = s.read()
            if r != b"+OK\r\n":
                raise RuntimeError("FLUSHALL on %s: %s" % (s.label, show(r)))
            s.close()
            s.connect()

    def compare(self, st, text, mods, a, b):
        self.compared += 1
        if a in ("<timeout>", "<closed>") or b in ("<timeout>", "<closed>"):
            # A reply that never comes is a failure even when both servers
            # agree; closing is checked only where a step expects it.
            self.failures += 1
            self.p("  NO REPLY %s:%d: %s\n      soloist: %s\n      oracle:  %s"
                   % (self.tr.name, st.lineno, text[:300], show(a), show(b)))
            return False
        if equal(mods, a, b):
            if self.verbose:
                self.p("  = %s -> %s" % (text[:120], show(a, 120)))
            return True
        d = self.deliberate.find(self.tr.name, text,
                                 a if isinstance(a, bytes) else None)
        if d is not None:
            self.deliberates += 1
            if self.verbose:
                self.p("  ~ %s (deliberate, line %d: %s)" % (text[:120],
                                                             d["line"], d["reason"]))
            return True
        self.failures += 1
        self.p("  MISMATCH %s:%d: %s\n      soloist: %s\n      oracle:  %s"
               % (self.tr.name, st.lineno, text[:300], show(a), show(b)))
        return False

    def check_closed(self, st, text):
        # soloist may run under a sanitizer: give it longer than the oracle,
        # which closes within milliseconds when it closes at all
        ca = self.a.conn is None or self.a.conn.closed or self.a.conn.wait_closed(3.0)
        cb = self.b.conn is None or self.b.conn.closed or self.b.conn.wait_closed(1.0)
        self.compared += 1
        if ca != cb:
            d = self.deliberate.find(self.tr.name, text + " <close>", None)
            if d is None:
                self.failures += 1
                self.p("  MISMATCH %s:%d: %s (connection closed afterwards?)\n"
                       "      soloist: %s\n      oracle:  %s"
                       % (self.tr.name, st.lineno, text[:200],
                          "closed" if ca else "open", "closed" if cb else "open"))
            else:
                self.deliberates += 1
        self.a.connect()
        self.b.connect()

    # -- step kinds
    def do_cmd(self, st):
        if "@scan" in st.mods:
            return self.do_scan(st)
        if "@no-reply" in st.mods:
            return self.do_no_reply(st)
        data = encode(*st.args)
        self.a.send(data)
        ra = self.a.read()
        self.b.send(data)
        rb = self.b.read()
        self.compare(st, st.text, st.mods, ra, rb)
        if "@then-closed" in st.mods:
            self.check_closed(st, st.text)

    def do_no_reply(self, st):
        data = encode(*st.args)
        self.a.send(data)
        self.b.send(data)
        self.expect_silence(st, st.text)

    def expect_silence(self, st, text, why="", wait=NO_REPLY_WAIT):
        """Neither server may send anything within `wait` seconds. What was
        sent before the wait began is covered by one wait: whatever the
        oracle sends within it is in the socket by its end. Returns True
        when something arrived (and counts the failure)."""
        end = time.monotonic() + wait
        ra = self.a.read(wait)
        rb = self.b.read(max(0.01, end - time.monotonic()))
        self.compared += 1
        if ra == "<timeout>" and rb == "<timeout>":
            return False
        self.failures += 1
        self.p("  UNEXPECTED REPLY %s:%d: %s%s\n      soloist: %s\n      oracle:  %s"
               % (self.tr.name, st.lineno, text[:300], why, show(ra), show(rb)))
        return True

    def scan_union(self, side, args):
        cursor = b"0"
        keys = set()
        for _ in range(MAX_SCAN_CALLS):
            a = list(args)
            a[1] = cursor
            side.send(encode(*a))
            r = side.read()
            if not isinstance(r, bytes) or r[:1] != b"*":
                return r
            try:
                v = harness.parse(r)
                cursor = v[0]
                keys.update(v[1])
            except (ValueError, IndexError, TypeError):
                return r
            if cursor == b"0":
                return b"scan-union:" + repr(sorted(keys)).encode()
        return "<scan did not finish in %d calls>" % MAX_SCAN_CALLS

    def do_scan(self, st):
        ra = self.scan_union(self.a, st.args)
        rb = self.scan_union(self.b, st.args)
        self.compare(st, st.text, {}, ra, rb)

    def do_pipeline(self, st):
        data = b"".join(encode(*c.args) for c in st.cmds)
        answered = [c for c in st.cmds if "@no-reply" not in c.mods]
        self.a.send(data)
        ras = [self.a.read() for _ in answered]
        self.b.send(data)
        rbs = [self.b.read() for _ in answered]
        for c, ra, rb in zip(answered, ras, rbs):
            self.compare(c, c.text, c.mods, ra, rb)

    def do_repeat(self, st):
        cmds = [[x.replace(b"{i}", str(i).encode()) for x in st.args]
                for i in range(st.n)]
        data = b"".join(encode(*c) for c in cmds)
        self.a.send(data)
        ras = [self.a.read() for _ in cmds]
        self.b.send(data)
        rbs = [self.b.read() for _ in cmds]
        reported = 0
        for c, ra, rb in zip(cmds, ras, rbs):
            if reported >= MAX_REPORTED_PER_REPEAT:
                self.compared += 1
                if not equal(st.mods, ra, rb):
                    self.failures += 1
                continue
            text = " ".join(x.decode("latin-1") for x in c)
            before = self.failures
            self.compare(st, text, st.mods, ra, rb)
            reported += self.failures - before

    def do_raw(self, st):
        ras, rbs = [], []
        self.a.send(st.data)
        ras = [self.a.read() for _ in range(st.nreplies)]
        self.b.send(st.data)
        rbs = [self.b.read() for _ in range(st.nreplies)]
        for ra, rb in zip(ras, rbs):
            self.compare(st, st.text, {}, ra, rb)
        if st.close:
            self.check_closed(st, st.text)

    def do_resp(self, st):
        for s in (self.a, self.b):
            s.send(encode("HELLO", st.proto))
        ra, rb = self.a.read(), self.b.read()
        self.compare(st, st.text, {"@ignore-reply": True}, ra, rb)

    def do_closed(self, st):
        self.check_closed(st, st.text)

    def do_reconnect(self, st):
        # New connections are not authenticated: a transcript run with
        # --requirepass sends AUTH itself where it wants to.
        for s in (self.a, self.b):
            s.connect()

    def do_client(self, st):
        if st.name not in self.clients:
            a, b = Side("soloist", self.a.server), Side("oracle", self.b.server)
            a.connect()
            b.connect()
            self.clients[st.name] = (a, b, [])
        self.a, self.b, self.owed = self.clients[st.name]

    def do_send(self, st):
        data = encode(*st.args)
        self.a.send(data)
        self.b.send(data)
        self.owed.append(st)

    def do_read(self, st):
        if not self.owed:
            raise TranscriptError("%s:%d: @read with no reply owed" % (self.tr.name, st.lineno))
        sent = self.owed.pop(0)
        mods = dict(sent.mods)
        mods.update(st.mods)
        self.compare(sent, sent.text + " (read at line %d)" % st.lineno, mods, self.a.read(), self.b.read())

    def do_still_owed(self, st):
        if not self.owed:
            raise TranscriptError("%s:%d: @still-owed with no reply owed" % (self.tr.name, st.lineno))
        if self.expect_silence(st, self.owed[0].text, " (still owed)", STILL_OWED_WAIT):
            self.owed.pop(0)  # what arrived was the owed reply (or garbage): it is owed no more

    def do_sleep(self, st):
        time.sleep(st.ms / 1000.0)


def load(paths):
    out = []
    for p in paths:
        out.append(Transcript(p))
    return out


def run_transcripts(target_bin, oracle_bin, paths=None, log_dir=None,
                    verbose=False, out=sys.stdout, jobs=2):
    """Replay transcripts, `jobs` at a time (each runner thread with
    servers of its own: a transcript spends its time waiting on replies);
    every transcript's output is written whole, in name order. Returns
    (passed, failed, runners)."""
    paths = paths or sorted(
        os.path.join(TRANSCRIPTS, f) for f in os.listdir(TRANSCRIPTS)
        if f.endswith(".txt"))
    log_dir = log_dir or harness.log_dir()
    os.makedirs(log_dir, exist_ok=True)
    deliberate = Deliberate(DELIBERATE)
    runners = [Runner(target_bin, oracle_bin, deliberate, log_dir, verbose, out)
               for _ in range(max(1, jobs))]
    todo = list(enumerate(paths))
    texts, oks = [""] * len(paths), [False] * len(paths)
    lock = threading.Lock()

    def work(runner):
        while True:
            with lock:
                if not todo:
                    return
                i, p = todo.pop(0)
            buf = io.StringIO()
            runner.out = buf
            try:
                tr = Transcript(p)
                try:
                    oks[i] = runner.run(tr)
                except (OSError, RuntimeError, TranscriptError) as e:
                    print("FAIL %s: %s" % (tr.name, e), file=buf)
            except TranscriptError as e:
                print("FAIL %s: %s" % (os.path.basename(p), e), file=buf)
            except Exception as e:  # counted, never lost with the thread
                print("FAIL %s: %r" % (os.path.basename(p), e), file=buf)
            texts[i] = buf.getvalue()

    threads = [threading.Thread(target=work, args=(r,)) for r in runners]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for r in runners:
            r.out = out
            r.stop_all()
    for text in texts:
        out.write(text)
    passed = sum(oks)
    failed = len(paths) - passed
    for r in runners:
        for path, rep in r.sanitizer_reports:
            print("FAIL sanitizer report in %s: %s" % (path, rep), file=out)
            failed += 1
        for c in r.crashes:
            print("FAIL %s" % c, file=out)
            failed += 1
    if target_bin != oracle_bin:
        for e in deliberate.entries:
            if not e["used"]:
                print("note: deliberate_differences.txt line %d not needed "
                      "this run: %s" % (e["line"], e["reason"][:100]), file=out)
    return passed, failed, runners


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default=harness.SOLOIST_SERVER,
                    help="server under test (default build/soloist-server)")
    ap.add_argument("--oracle", default=harness.REDIS_SERVER)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("transcripts", nargs="*")
    a = ap.parse_args()
    p, f, _ = run_transcripts(a.target, a.oracle, a.transcripts or None,
                              verbose=a.verbose)
    print("%d passed, %d failed" % (p, f))
    return 0 if f == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
