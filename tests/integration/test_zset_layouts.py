"""Step 8 integration test: the sorted set's skiplist layouts, end to end.

Every sorted set is made in the layout zset-layout names when it is
created (src/zset.c, zset_create), and the default is dense, whose
members live in src/zset_dense.c: a server whose skiplist-node code
(member_put, member_at, node_alloc, embedded_node_alloc, embedded_member:
exercise 08's regions) were stubs that abort would pass every other
integration test. This one starts the server under test once per
skiplist layout (`--zset-layout embedded`, `node-pointer`, `copied`) and
once in the dense layout, sends each the same sorted-set commands and
compares every reply byte for byte: the dense server is the oracle, so a
layout that loses or misreads a member, or crashes, fails here.

The commands: members of every varint length edge (0, 1, 127, 128,
16383, 16384 bytes) and past 64 KiB (65536 and 70000 bytes), each looked
up by its bytes (ZSCORE, ZRANK, ZMSCORE), moved by ZINCRBY, read back in
order (ZRANGE WITHSCORES, by score and by lex) and removed (ZREM,
ZPOPMIN); then a seeded run of ZADD, ZINCRBY, ZREM and lookups over 300
short members, and ZUNIONSTORE and ZINTERSTORE into new sets. A few
seconds in all.

Runs against $SOLOIST_TARGET (default build/soloist-server) with
$SOLOIST_SERVER_ARGS before the layout (harness.py); against Debian's
redis-server, which has no zset-layout, it is skipped. Valkey anchor:
src/t_zset.c (the replies).
"""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SKIPLIST_LAYOUTS = ("embedded", "node-pointer", "copied")
EDGE_LENGTHS = (0, 1, 127, 128, 16383, 16384, 65536, 70000)


def member(length, tag):
    """length bytes, different for each tag, not all alike."""
    if length == 0:
        return b""
    head = b"%d:%d:" % (tag, length)
    body = bytes((tag * 31 + i * 7) % 251 for i in range(251))
    out = (head + body * (length // len(body) + 1))[:length]
    return out


def commands(seed):
    """The sorted-set commands every server gets, in order."""
    out = []
    edges = [member(n, i) for i, n in enumerate(EDGE_LENGTHS)]
    for i, m in enumerate(edges):
        out.append(("ZADD", "edges", str(i), m))
    out.append(("ZCARD", "edges"))
    for m in edges:
        out += [("ZSCORE", "edges", m), ("ZRANK", "edges", m), ("ZREVRANK", "edges", m)]
    out.append(("ZMSCORE", "edges") + tuple(edges) + (b"not-a-member",))
    out.append(("ZRANGE", "edges", "0", "-1", "WITHSCORES"))
    for i, m in enumerate(edges):  # every member moves past the others
        out.append(("ZINCRBY", "edges", str(10 + i * 3), m))
    out.append(("ZRANGE", "edges", "0", "-1", "WITHSCORES"))
    out.append(("ZRANGEBYSCORE", "edges", "12", "30", "WITHSCORES"))
    for m in edges[::2]:
        out += [("ZREM", "edges", m), ("ZSCORE", "edges", m)]
    out.append(("ZRANGE", "edges", "0", "-1", "WITHSCORES"))
    out.append(("ZPOPMIN", "edges", "2"))
    out.append(("ZRANGE", "edges", "0", "-1", "WITHSCORES"))
    # Equal scores: order by the member's bytes (ZRANGEBYLEX).
    lex = [member(n, 100 + n % 7) for n in (0, 3, 9, 40, 130, 300)]
    for m in lex:
        out.append(("ZADD", "lex", "0", m))
    out.append(("ZRANGEBYLEX", "lex", "-", "+"))
    out.append(("ZRANGEBYLEX", "lex", "[103", "+"))
    # A seeded mix over short members.
    rng = random.Random(seed)
    names = [b"m:%d" % i for i in range(300)]
    for _ in range(1500):
        r = rng.random()
        m = rng.choice(names)
        if r < 0.45:
            out.append(("ZADD", "mix", str(rng.randint(-50, 50)), m))
        elif r < 0.6:
            out.append(("ZINCRBY", "mix", str(rng.randint(-5, 5)), m))
        elif r < 0.75:
            out.append(("ZREM", "mix", m))
        elif r < 0.85:
            out.append(("ZSCORE", "mix", m))
        else:
            out.append(("ZRANK", "mix", m))
    out.append(("ZCARD", "mix"))
    out.append(("ZRANGE", "mix", "0", "-1", "WITHSCORES"))
    out.append(("ZUNIONSTORE", "union", "2", "mix", "edges"))
    out.append(("ZINTERSTORE", "inter", "2", "mix", "union", "AGGREGATE", "MAX"))
    out.append(("ZRANGE", "union", "0", "-1", "WITHSCORES"))
    out.append(("ZRANGE", "inter", "0", "-1", "WITHSCORES"))
    out.append(("DEL", "edges", "lex", "mix", "union", "inter"))
    out.append(("PING",))
    return out


def short(reply, n=120):
    return repr(reply[:n]) + ("... (%d bytes)" % len(reply) if len(reply) > n else "")


class ZsetLayoutsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if harness.server_kind(harness.target_binary()) == "redis":
            raise unittest.SkipTest("zset-layout is soloist's option")
        cls.oracle = harness.Server(extra=["--zset-layout", "dense"], name="zset-dense").start()
        cls.oracle_replies = None

    @classmethod
    def tearDownClass(cls):
        cls.oracle.stop()

    def replies(self, server, cmds):
        c = server.conn()
        try:
            out = []
            for cmd in cmds:
                try:
                    out.append(c.request(*cmd))
                except (OSError, harness.ConnectionClosed, harness.ReplyTimeout) as e:
                    self.fail("%s: the server stopped answering at %s (%s); its log ends:\n%s"
                              % (server.name, " ".join(a if isinstance(a, str) else short(a, 20) for a in cmd),
                                 type(e).__name__, server.log_tail(15)))
            return out
        finally:
            c.close()

    def check_layout(self, layout):
        cmds = commands(seed=8)
        if type(self).oracle_replies is None:
            type(self).oracle_replies = self.replies(self.oracle, cmds)
        want = type(self).oracle_replies
        with harness.Server(extra=["--zset-layout", layout], name="zset-" + layout) as s:
            c = s.conn()
            try:
                self.assertIn(layout.encode(), c.request("CONFIG", "GET", "zset-layout"),
                              "the server did not take --zset-layout %s" % layout)
            finally:
                c.close()
            got = self.replies(s, cmds)
        for cmd, g, w in zip(cmds, got, want):
            if g != w:
                self.fail("zset-layout %s differs from dense at %s:\n    %s: %s\n    dense: %s"
                          % (layout, " ".join(a if isinstance(a, str) else short(a, 20) for a in cmd), layout,
                             short(g), short(w)))

    def test_embedded_layout_matches_dense(self):
        self.check_layout("embedded")

    def test_node_pointer_layout_matches_dense(self):
        self.check_layout("node-pointer")

    def test_copied_layout_matches_dense(self):
        self.check_layout("copied")


if __name__ == "__main__":
    unittest.main()
