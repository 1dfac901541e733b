#!/usr/bin/env python3
"""Random differential testing: the same random command sequence sent to
soloist and to the oracle (Debian's redis-server 7.0), every reply
compared, then the two keyspaces compared.

Where the transcripts (difftest.py) check the cases someone thought of,
this checks the sequences nobody wrote down: a few thousand commands over
a handful of keys of every type, so that keys change type under each
other (WRONGTYPE), lists, hashes and sets grow past their compact
encodings' limits and shrink again, collections are emptied (and must
vanish), sorted sets are read and trimmed by rank, by score and (on one
key whose members share a score) by member, with LIMIT, and bad arguments
(non-integer counts, negative counts, indexes out of range, unknown
keywords, malformed range ends) meet the argument checks in every order.

Owns: the command generator (a seed determines a whole run: the
sequence, the encoding limits, RESP2 or RESP3), the comparison rules, and
the command line that replays one seed. Talks to servers only through
harness.py.

Comparison rules, per command:
  exact        the reply bytes must be equal (most commands)
  unordered    an aggregate whose order is unspecified (SMEMBERS, SINTER,
               SUNION, SDIFF): its elements are compared as a sorted
               multiset
  hash-order   HKEYS, HVALS, HGETALL: followed by OBJECT ENCODING of the
               key, whose reply from the oracle decides: a listpack keeps
               insertion order (compared exactly), a hashtable has none
               (compared as a multiset of elements, of field/value pairs
               for HGETALL). OBJECT ENCODING itself is never compared:
               soloist's encodings are Valkey's (small lists are
               listpacks, sets have a listpack encoding), not Redis
               7.0's, and its sorted sets are never listpacks.
  random       SRANDMEMBER, HRANDFIELD: followed by SMEMBERS or HGETALL
               of the key; the replies must have the same type and count,
               each side's elements must be members of its own key (with
               values: field/value pairs of it), and a positive count
               must give distinct elements. SPOP is never sent: it would
               remove different members on the two sides and every later
               reply would differ.
After the sequence, every key's type and content are compared (lists in
order, sets sorted, hashes as sorted pairs, sorted sets with scores).

Where Valkey deliberately differs from Redis 7.0, the generator leaves
that shape out (each such omission says why beside it): scores and
increments are integers or binary fractions (x.5, x.25) so that Valkey's
shortest round-trip doubles print as Redis 7.0's %.17g does; no
hexadecimal floats (Valkey's fast_float refuses them); no blocking
commands (Valkey reruns a served command, Redis 7.0 serves the key).

Valkey anchor: the commands' replies are those of valkey src/t_list.c,
src/t_hash.c, src/t_set.c, src/t_zset.c, src/t_string.c and src/db.c.

Replay one seed, or run many:
  python3 tests/integration/randdiff.py --seed 7
  python3 tests/integration/randdiff.py --seeds 1-200 --commands 5000
  python3 tests/integration/randdiff.py --seed 7 --transcript /tmp/s7.txt
      (the sequence as a difftest.py transcript, up to the first mismatch)
  --target /usr/bin/redis-server checks the generator and comparer
  themselves (both sides the oracle: nothing may differ).

Python 3 standard library only.
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import elements, encode, show  # noqa: E402

DEFAULT_COMMANDS = 2000
BATCH = 100  # commands pipelined per write; no command here blocks

FAMILIES = ("string", "generic", "zset", "list", "hash", "set")

# Every command the generator may send, by family: a target that lacks one
# of a family's commands cannot run that family (see missing_commands).
FAMILY_COMMANDS = {
    "string": ["set", "get", "append", "incr", "strlen"],
    "generic": ["del", "exists", "type", "rename", "copy", "keys", "object"],
    "zset": ["zadd", "zrem", "zrange", "zunionstore", "zscore", "zcard", "zincrby",
             "zrangebyscore", "zrevrangebyscore", "zcount", "zrank", "zrevrank",
             "zremrangebyscore", "zremrangebyrank", "zpopmin", "zpopmax", "zmscore",
             "zrangestore", "zrangebylex", "zrevrangebylex", "zlexcount", "zremrangebylex"],
    "list": ["lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "llen",
             "lrange", "lindex", "lset", "linsert", "lrem", "ltrim", "lpos",
             "lmove", "rpoplpush", "lmpop"],
    "hash": ["hset", "hsetnx", "hget", "hmget", "hmset", "hdel", "hlen",
             "hstrlen", "hexists", "hkeys", "hvals", "hgetall", "hincrby",
             "hincrbyfloat", "hrandfield"],
    "set": ["sadd", "srem", "smembers", "sismember", "smismember", "scard",
            "smove", "sinter", "sintercard", "sunion", "sdiff", "sinterstore",
            "sunionstore", "sdiffstore", "srandmember"],
}

# Each family writes mostly to its own two keys, so that most commands
# meet a key of their type; about one key in seven is drawn from the pool
# (another family's key, or X, which every family writes), so that types
# collide and WRONGTYPE is answered from every command.
HOME_KEYS = {
    "string": ["T1", "T2"],
    "generic": [],
    "zset": ["Z1", "Z2"],
    "list": ["L1", "L2"],
    "hash": ["H1", "H2"],
    "set": ["S1", "S2", "S3"],
}
SHARED_KEY = "X"
# The lexicographic commands read and trim one key whose members all share
# score 0, the only case where their reply is specified: over several
# scores it depends on how the set is stored (a listpack is scanned from
# its start, a skiplist searched as if ordered by member), so a small and
# a large set of the oracle itself may answer differently. Nothing else
# writes it: it is in no family's home keys and not in the pool. LEX_NONE
# is never written, for the replies of a missing key.
LEX_KEY, LEX_NONE = "ZL", "ZL0"
LEX_MEMBERS = ["", "a", "aa", "ab", "b", "ba", "c", "m", "m5", "z", "~", "1", "10", "2"]

# Members, fields' values and list elements: short strings, integers as
# strings (a set of them is an intset), an empty string, and rarely one
# longer than the 64-byte listpack value limit (a hash or set converts).
ELEMS = ["a", "b", "c", "d", "e", "1", "2", "3", "10", "-1", "0", ""]
LONG_ELEM = "long-" + "v" * 70
INT_ELEMS = ["1", "2", "3", "5", "10", "-1", "0", "100", "-20", "4096",
             "70000", "3000000000"]
# Strings that look like integers but are not stored as one (a compact
# encoding that took "01" for 1 would answer "1"), and the 64-bit edges.
TRICKY_ELEMS = ["01", "+1", "-0", " 1", "1e3", "0x1", "9223372036854775807",
                "-9223372036854775808", "9223372036854775808"]
FIELDS = ["f1", "f2", "f3", "f4", "f5", "f6", "1", "a"]

# How often each generator is drawn (others once): the commands that
# add are drawn more often than those that remove, so that collections
# grow past the small encoding limits between the removals.
WEIGHTS = {"g_list_push": 4, "g_hash_hset": 3, "g_set_sadd": 3,
           "g_zset_zadd": 2, "g_list_lmove": 2, "g_set_algebra": 2}

# The encoding limits a seed may run under, set on both servers: Redis
# 7.0's defaults (soloist's own are Valkey's, hash-max-listpack-entries
# 512), or small ones so that conversions happen within a few commands.
DEFAULT_LIMITS = [("list-max-listpack-size", "-2"),
                  ("hash-max-listpack-entries", "128"),
                  ("hash-max-listpack-value", "64"),
                  ("set-max-intset-entries", "512"),
                  ("set-max-listpack-entries", "128"),
                  ("set-max-listpack-value", "64")]
SMALL_LIMITS = [("list-max-listpack-size", "4"),
                ("hash-max-listpack-entries", "4"),
                ("hash-max-listpack-value", "64"),
                ("set-max-intset-entries", "4"),
                ("set-max-listpack-entries", "4"),
                ("set-max-listpack-value", "64")]


class Cmd:
    """One command to send to both servers. mode is how the replies are
    compared (see the module comment); probe is a command sent right after
    it whose replies the comparison of this one reads (OBJECT ENCODING for
    hash-order, the key's content for random); pairs says the reply holds
    field/value pairs (HGETALL, HRANDFIELD ... WITHVALUES)."""
    __slots__ = ("args", "mode", "probe", "pairs")

    def __init__(self, args, mode="exact", probe=None, pairs=False):
        self.args = [a if isinstance(a, str) else str(a) for a in args]
        self.mode = mode
        self.probe = probe
        self.pairs = pairs

    def text(self):
        return " ".join(quote(a) for a in self.args)


def quote(a):
    """An argument as redis-cli (and difftest.py) reads it back."""
    if a and all(33 <= ord(ch) < 127 and ch not in "\"'\\" for ch in a):
        return a
    return '"%s"' % "".join(ch if 32 <= ord(ch) < 127 and ch not in "\"\\"
                            else "\\x%02x" % ord(ch) for ch in a)


# ---------------------------------------------------------------- generator

class Generator:
    """Draws the commands of one seed. The sequence depends on the seed
    and the families alone, never on replies, so a seed replays exactly."""

    def __init__(self, seed, families):
        self.r = random.Random(seed)
        self.families = [f for f in FAMILIES if f in families]
        self.pool = [k for f in self.families for k in HOME_KEYS[f]] + [SHARED_KEY]
        # Some seeds draw members mostly from integers: sets start as
        # intsets, and list and hash entries are stored as integers.
        self.intish = self.r.random() < 0.3
        self.gens = []
        for name in sorted(dir(self)):
            fam = name.split("_")[1] if name.startswith("g_") else None
            if fam in self.families:
                self.gens += [getattr(self, name)] * WEIGHTS.get(name, 1)

    # -- argument vocabulary

    def key(self, family):
        r = self.r
        home = HOME_KEYS.get(family) or []
        if home and r.random() < 0.85:
            return r.choice(home)
        return r.choice(self.pool)

    def elem(self):
        x = self.r.random()
        if x < 0.02:
            return LONG_ELEM
        if x < 0.06:
            return self.r.choice(TRICKY_ELEMS)
        if self.intish and self.r.random() < 0.9:
            return self.r.choice(INT_ELEMS)
        return self.r.choice(ELEMS)

    def elems(self, lo=1, hi=4):
        return [self.elem() for _ in range(self.r.randint(lo, hi))]

    def field(self):
        return self.r.choice(FIELDS)

    def count(self):
        """A count argument: mostly small and valid, sometimes zero,
        negative, not an integer, or past 64 bits."""
        return self.r.choice([1, 1, 2, 2, 3, 5, 10, 0, -1, -3, "x", "1.5",
                              "99999999999999999999"])

    def index(self):
        return self.r.choice([0, 0, 1, 2, 3, 5, -1, -1, -2, -5, 100, -100, "a"])

    def side(self):
        if self.r.random() < 0.03:
            return "MIDDLE"  # neither LEFT nor RIGHT: a syntax error
        return self.r.choice(["LEFT", "RIGHT", "left", "right"])

    def score(self):
        # Integers and binary fractions: Valkey prints a double in the
        # shortest form that reads back (fpconv_dtoa), Redis 7.0 with
        # %.17g; the two agree on these. No hex floats (Valkey's
        # fast_float refuses "0x10", Redis 7.0's strtod takes it).
        return self.r.choice([0, 1, 2, 3, -1, "1.5", "-2.5", "0.25", "10",
                              "inf", "-inf", "+inf", "abc"])

    def score_bound(self):
        """A ZRANGEBYSCORE end: a score, exclusive or not, the infinities,
        and the malformed ones (a lone "(", a word, a space)."""
        r = self.r
        x = r.random()
        if x < 0.6:
            return ("(" if r.random() < 0.3 else "") + str(r.choice([0, 1, 2, 3, -1, "1.5", "-2.5", "0.25", 10]))
        return r.choice(["-inf", "+inf", "inf", "(-inf", "(+inf", "(", "abc", "1 ", "(1.5", "-inf"])

    def lex_bound(self):
        """A ZRANGEBYLEX end: "-", "+", an inclusive or exclusive member, and
        the malformed ones (no [ or ( at all, a longer "-" or "+")."""
        r = self.r
        x = r.random()
        if x < 0.7:
            return r.choice("[(") + r.choice(LEX_MEMBERS)
        return r.choice(["-", "+", "-", "+", "a", "--", "+a", ""])

    def limit(self):
        """Nothing, or LIMIT with an offset and a count (negative counts
        mean all; a missing count is a syntax error). A negative offset
        gives an empty range in Redis 7.0 and in soloist. Valkey's 2024
        tree does the same for a small set (a listpack) but counts the
        offset from the range's end in a large one (src/t_zset.c: the offset reaches zslNthInRange,
        where a negative n means from the end); Valkey pull request #4637
        proposes refusing it. With Valkey as the oracle, such a seed
        mismatches there."""
        r = self.r
        if r.random() < 0.7:
            return []
        if r.random() < 0.05:
            return ["LIMIT", "0"]
        return ["LIMIT", r.choice([0, 0, 1, 2, 5, -1, "x"]), r.choice([1, 2, 3, 0, -1, -5])]

    def next(self):
        return self.r.choice(self.gens)()

    # -- strings

    def g_string_set(self):
        r = self.r
        a = ["SET", self.key("string"), r.choice(ELEMS + ["abc", "123"])]
        x = r.random()
        if x < 0.1:
            a.append("NX")
        elif x < 0.2:
            a.append("XX")
        elif x < 0.3:
            a.append("GET")
        elif x < 0.33:
            a.append("BADOPT")
        return Cmd(a)

    def g_string_get(self):
        return Cmd(["GET", self.key("string")])

    def g_string_append(self):
        return Cmd(["APPEND", self.key("string"), self.elem()])

    def g_string_incr(self):
        return Cmd(["INCR", self.key("string")])

    def g_string_strlen(self):
        return Cmd(["STRLEN", self.key("string")])

    # -- generic keys

    def g_generic_del(self):
        ks = [self.r.choice(self.pool) for _ in range(self.r.randint(1, 2))]
        return Cmd(["DEL"] + ks)

    def g_generic_exists(self):
        ks = [self.r.choice(self.pool) for _ in range(self.r.randint(1, 3))]
        return Cmd(["EXISTS"] + ks)

    def g_generic_type(self):
        return Cmd(["TYPE", self.r.choice(self.pool)])

    def two_keys(self):
        """A source and a destination: mostly two keys of one family (a
        value moves to a key of its type), else any two."""
        fams = [f for f in self.families if HOME_KEYS[f]]
        if fams and self.r.random() < 0.6:
            f = self.r.choice(fams)
            return self.key(f), self.key(f)
        return self.r.choice(self.pool), self.r.choice(self.pool)

    def g_generic_rename(self):
        return Cmd(["RENAME"] + list(self.two_keys()))

    def g_generic_copy(self):
        a = ["COPY"] + list(self.two_keys())
        if self.r.random() < 0.4:
            a.append("REPLACE")
        return Cmd(a)

    # -- sorted sets

    def g_zset_zadd(self):
        r = self.r
        a = ["ZADD", self.key("zset")]
        x = r.random()
        if x < 0.1:
            a.append("NX")
        elif x < 0.2:
            a.append("XX")
        elif x < 0.3:
            a.append("CH")
        elif x < 0.35:
            a.append("INCR")
        for _ in range(r.randint(1, 3)):
            a += [self.score(), self.elem()]
        if r.random() < 0.03:
            a.pop()  # an odd number of score/member arguments
        return Cmd(a)

    def g_zset_zrem(self):
        return Cmd(["ZREM", self.key("zset")] + self.elems(1, 3))

    def g_zset_zrange(self):
        r = self.r
        a = ["ZRANGE", self.key("zset"), self.index(), self.index()]
        if r.random() < 0.5:
            a.append("WITHSCORES")
        if r.random() < 0.1:
            a.append("REV")
        return Cmd(a)

    def g_zset_zscore(self):
        return Cmd(["ZSCORE", self.key("zset"), self.elem()])

    def g_zset_zcard(self):
        return Cmd(["ZCARD", self.key("zset")])

    def g_zset_zincrby(self):
        return Cmd(["ZINCRBY", self.key("zset"), self.score(), self.elem()])

    def g_zset_byscore(self):
        r = self.r
        cmd = r.choice(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"])
        a = [cmd, self.key("zset"), self.score_bound(), self.score_bound()]
        if r.random() < 0.4:
            a.append("WITHSCORES")
        return Cmd(a + self.limit())

    def g_zset_zcount(self):
        return Cmd(["ZCOUNT", self.key("zset"), self.score_bound(), self.score_bound()])

    def g_zset_zrank(self):
        return Cmd([self.r.choice(["ZRANK", "ZREVRANK"]), self.key("zset"), self.elem()])

    def g_zset_zremrange(self):
        r = self.r
        x = r.random()
        if x < 0.5:
            return Cmd(["ZREMRANGEBYSCORE", self.key("zset"), self.score_bound(), self.score_bound()])
        return Cmd(["ZREMRANGEBYRANK", self.key("zset"), self.index(), self.index()])

    def g_zset_zpop(self):
        a = [self.r.choice(["ZPOPMIN", "ZPOPMAX"]), self.key("zset")]
        if self.r.random() < 0.6:
            a.append(self.count())
        return Cmd(a)

    def g_zset_zmscore(self):
        return Cmd(["ZMSCORE", self.key("zset")] + self.elems(1, 4))

    def g_zset_zrangeby(self):
        """ZRANGE's BYSCORE and BYLEX forms, REV and LIMIT, and ZRANGESTORE
        of the same into a sorted-set key (its count is the reply)."""
        r = self.r
        if r.random() < 0.5:
            src, lo, hi, by = self.key("zset"), self.score_bound(), self.score_bound(), ["BYSCORE"]
        else:
            src, lo, hi, by = r.choice([LEX_KEY] * 9 + [LEX_NONE]), self.lex_bound(), self.lex_bound(), ["BYLEX"]
        opts = by + (["REV"] if r.random() < 0.3 else []) + self.limit()
        if r.random() < 0.3:
            return Cmd(["ZRANGESTORE", self.key("zset"), src, lo, hi] + opts)
        return Cmd(["ZRANGE", src, lo, hi] + opts + (["WITHSCORES"] if r.random() < 0.3 else []))

    # -- the lexicographic key (score 0 only)

    def g_zset_lexadd(self):
        r = self.r
        a = ["ZADD", LEX_KEY] + r.choice([[], [], [], ["NX"], ["XX"], ["CH"]])
        for _ in range(r.randint(1, 4)):
            a += ["0", r.choice(LEX_MEMBERS)]
        return Cmd(a)

    def g_zset_lexrange(self):
        r = self.r
        k = r.choice([LEX_KEY] * 9 + [LEX_NONE])
        x = r.random()
        if x < 0.5:
            return Cmd([r.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX"]), k, self.lex_bound(), self.lex_bound()] +
                       self.limit())
        if x < 0.8:
            return Cmd(["ZLEXCOUNT", k, self.lex_bound(), self.lex_bound()])
        return Cmd(["ZREMRANGEBYLEX", k, self.lex_bound(), self.lex_bound()])

    def g_zset_zunionstore(self):
        # Inputs drawn from sorted sets and, when the run has them, sets
        # (a set's members count with score 1).
        r = self.r
        fam = ["zset"] + (["set"] if "set" in self.families else [])
        n = r.randint(1, 3)
        srcs = [self.key(r.choice(fam)) for _ in range(n)]
        numkeys = n if r.random() < 0.93 else r.choice([0, n + 1, "x", -1])
        a = ["ZUNIONSTORE", self.key("zset"), numkeys] + srcs
        if r.random() < 0.3:
            # Neither a negative nor a zero weight: with a zero or a
            # negative score they make -0, which Valkey keeps in a
            # skiplist but turns into the integer 0 in a listpack (valkey
            # src/t_zset.c zzlInsertAt: double2ll), and soloist's sorted
            # sets, never listpacks, keep as -0.
            a += ["WEIGHTS"] + [r.choice(["1", "2", "0.5", "x"]) for _ in range(n)]
        if r.random() < 0.3:
            a += ["AGGREGATE", r.choice(["SUM", "MIN", "MAX", "max", "AVG"])]
        return Cmd(a)

    # -- lists

    def g_list_push(self):
        op = self.r.choice(["LPUSH", "RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX"])
        return Cmd([op, self.key("list")] + self.elems(1, 5))

    def g_list_pop(self):
        a = [self.r.choice(["LPOP", "RPOP"]), self.key("list")]
        if self.r.random() < 0.5:
            a.append(self.count())
        return Cmd(a)

    def g_list_llen(self):
        return Cmd(["LLEN", self.key("list")])

    def g_list_lrange(self):
        return Cmd(["LRANGE", self.key("list"), self.index(), self.index()])

    def g_list_lindex(self):
        return Cmd(["LINDEX", self.key("list"), self.index()])

    def g_list_lset(self):
        return Cmd(["LSET", self.key("list"), self.index(), self.elem()])

    def g_list_linsert(self):
        where = self.r.choice(["BEFORE", "AFTER", "before", "after"])
        if self.r.random() < 0.03:
            where = "AROUND"  # a syntax error
        return Cmd(["LINSERT", self.key("list"), where, self.elem(), self.elem()])

    def g_list_lrem(self):
        return Cmd(["LREM", self.key("list"),
                    self.r.choice([0, 1, 2, -1, -2, "x"]), self.elem()])

    def g_list_ltrim(self):
        return Cmd(["LTRIM", self.key("list"), self.index(), self.index()])

    def g_list_lpos(self):
        r = self.r
        a = ["LPOS", self.key("list"), self.elem()]
        opts = [("RANK", [1, 2, -1, -2, 0, "x"]), ("COUNT", [0, 1, 2, -1]),
                ("MAXLEN", [0, 1, 3, -1])]
        r.shuffle(opts)
        for name, vals in opts:
            if r.random() < 0.4:
                a += [name, r.choice(vals)]
        if r.random() < 0.03:
            a.append("BOGUS")
        return Cmd(a)

    def g_list_lmove(self):
        if self.r.random() < 0.3:
            return Cmd(["RPOPLPUSH", self.key("list"), self.key("list")])
        return Cmd(["LMOVE", self.key("list"), self.key("list"),
                    self.side(), self.side()])

    def g_list_lmpop(self):
        r = self.r
        n = r.randint(1, 3)
        ks = [self.key("list") for _ in range(n)]
        numkeys = n if r.random() < 0.9 else r.choice([0, -1, n + 1, "x"])
        a = ["LMPOP", numkeys] + ks + [self.side()]
        if r.random() < 0.5:
            a += ["COUNT", self.count()]
        return Cmd(a)

    # -- hashes

    def g_hash_hset(self):
        r = self.r
        op = r.choice(["HSET", "HSET", "HMSET"])
        a = [op, self.key("hash")]
        # At most 3 pairs, below the smallest hash-max-listpack-entries
        # used here (4): Valkey converts a listpack hash to a hashtable
        # before an HSET that brings more pairs than the limit, repeated
        # fields counted (valkey src/t_hash.c hashTypeTryConversion),
        # Redis 7.0 only once the fields it ends up with pass it, so a
        # larger HSET could leave the two in different orders where the
        # oracle's listpack says order counts.
        for _ in range(r.randint(1, 3)):
            a += [self.field(), self.elem()]
        if r.random() < 0.03:
            a.pop()  # a field without a value
        return Cmd(a)

    def g_hash_hsetnx(self):
        return Cmd(["HSETNX", self.key("hash"), self.field(), self.elem()])

    def g_hash_hget(self):
        return Cmd(["HGET", self.key("hash"), self.field()])

    def g_hash_hmget(self):
        return Cmd(["HMGET", self.key("hash")] +
                   [self.field() for _ in range(self.r.randint(1, 3))])

    def g_hash_hdel(self):
        return Cmd(["HDEL", self.key("hash")] +
                   [self.field() for _ in range(self.r.randint(1, 3))])

    def g_hash_hlen(self):
        return Cmd(["HLEN", self.key("hash")])

    def g_hash_hstrlen(self):
        return Cmd(["HSTRLEN", self.key("hash"), self.field()])

    def g_hash_hexists(self):
        return Cmd(["HEXISTS", self.key("hash"), self.field()])

    def g_hash_hgetall(self):
        k = self.key("hash")
        op = self.r.choice(["HKEYS", "HVALS", "HGETALL"])
        return Cmd([op, k], "hash-order", probe=["OBJECT", "ENCODING", k],
                   pairs=(op == "HGETALL"))

    def g_hash_hincrby(self):
        return Cmd(["HINCRBY", self.key("hash"), self.field(),
                    self.r.choice([1, 2, -3, 100, 0, "x", "1.5",
                                   "9223372036854775807"])])

    def g_hash_hincrbyfloat(self):
        # Binary fractions only: the sum prints the same through long
        # double on both sides, and is exactly what a client would expect.
        return Cmd(["HINCRBYFLOAT", self.key("hash"), self.field(),
                    self.r.choice(["1", "1.5", "-0.25", "2", "x", "0"])])

    def g_hash_hrandfield(self):
        k = self.key("hash")
        a = ["HRANDFIELD", k]
        pairs = False
        if self.r.random() < 0.7:
            a.append(self.r.choice([1, 2, 3, 10, -2, -5, 0]))
            if self.r.random() < 0.4:
                a.append("WITHVALUES")
                pairs = True
        return Cmd(a, "random", probe=["HGETALL", k], pairs=pairs)

    # -- sets

    def g_set_sadd(self):
        return Cmd(["SADD", self.key("set")] + self.elems(1, 5))

    def g_set_srem(self):
        return Cmd(["SREM", self.key("set")] + self.elems(1, 3))

    def g_set_smembers(self):
        return Cmd(["SMEMBERS", self.key("set")], "unordered")

    def g_set_sismember(self):
        if self.r.random() < 0.5:
            return Cmd(["SISMEMBER", self.key("set"), self.elem()])
        return Cmd(["SMISMEMBER", self.key("set")] + self.elems(1, 4))

    def g_set_scard(self):
        return Cmd(["SCARD", self.key("set")])

    def g_set_smove(self):
        return Cmd(["SMOVE", self.key("set"), self.key("set"), self.elem()])

    def g_set_algebra(self):
        r = self.r
        ks = [self.key("set") for _ in range(r.randint(1, 3))]
        op = r.choice(["SINTER", "SUNION", "SDIFF"])
        if r.random() < 0.4:
            return Cmd([op + "STORE", self.key("set")] + ks)
        return Cmd([op] + ks, "unordered")

    def g_set_sintercard(self):
        r = self.r
        n = r.randint(1, 3)
        ks = [self.key("set") for _ in range(n)]
        numkeys = n if r.random() < 0.9 else r.choice([0, -1, n + 1, "x"])
        a = ["SINTERCARD", numkeys] + ks
        if r.random() < 0.4:
            a += ["LIMIT", r.choice([0, 1, 2, -1, "x"])]
        return Cmd(a)

    def g_set_srandmember(self):
        k = self.key("set")
        a = ["SRANDMEMBER", k]
        if self.r.random() < 0.7:
            a.append(self.r.choice([1, 2, 3, 10, -2, -5, 0]))
        return Cmd(a, "random", probe=["SMEMBERS", k])


def missing_commands(conn, families):
    """The commands of these families the server does not know
    (COMMAND INFO answers a null for an unknown name)."""
    out = []
    for f in families:
        for name in FAMILY_COMMANDS[f]:
            rep = conn.request("COMMAND", "INFO", name)
            if rep in (b"*1\r\n*-1\r\n", b"*1\r\n$-1\r\n", b"*1\r\n_\r\n"):
                out.append(name)
    return out


# ---------------------------------------------------------------- comparing

def _flat(data):
    """Element bytes of an aggregate; a RESP3 array of [field, value]
    pairs (HRANDFIELD WITHVALUES) is flattened."""
    els = elements(data)
    if els is None:
        return None
    out = []
    for e in els:
        inner = elements(e) if e[:1] == b"*" else None
        out.extend(inner if inner is not None else [e])
    return out


def _pairs(els):
    return [(els[i], els[i + 1]) for i in range(0, len(els) - 1, 2)]


def _is_error(data):
    return data[:1] in (b"-", b"!")


def _multiset(data, pairs):
    els = elements(data)
    if els is None:
        return None
    return sorted(_pairs(els)) if pairs else sorted(els)


def compare(cmd, a, b, pa=None, pb=None):
    """None if soloist's reply a matches the oracle's b under cmd's rule,
    else a sentence saying how they differ. pa/pb: the probe's replies."""
    if cmd.mode == "exact" or _is_error(a) or _is_error(b):
        return None if a == b else "replies differ"
    if cmd.mode == "unordered" or (cmd.mode == "hash-order" and
                                   pb != b"$8\r\nlistpack\r\n" and
                                   pb != b"+listpack\r\n"):
        if a == b:
            return None
        if a[:1] != b[:1]:
            return "reply types differ"
        if _multiset(a, cmd.pairs) == _multiset(b, cmd.pairs):
            return None
        return "replies differ as multisets"
    if cmd.mode == "hash-order":  # a listpack on the oracle: insertion order
        return None if a == b else "replies differ (the oracle's hash is a listpack: order counts)"
    if cmd.mode == "random":
        return compare_random(cmd, a, b, pa, pb)
    raise ValueError(cmd.mode)


def compare_random(cmd, a, b, pa, pb):
    if a[:1] != b[:1]:
        return "reply types differ"
    if a in (b"$-1\r\n", b"*-1\r\n", b"_\r\n") or a == b:
        return None if a == b else "replies differ"
    fa, fb = _flat(a), _flat(b)
    if fa is None:  # one member or field, no count
        fa, fb = [a], [b]
    if len(fa) != len(fb):
        return "counts differ (%d against %d)" % (len(fa), len(fb))
    count = int(cmd.args[2]) if len(cmd.args) > 2 else 1
    for side, els, probe in (("soloist", fa, pa), ("oracle", fb, pb)):
        members = elements(probe) or []
        if cmd.args[0] == "HRANDFIELD":
            if cmd.pairs:
                got, have = _pairs(els), set(_pairs(members))
            else:
                got, have = els, set(members[0::2])
        else:
            got, have = els, set(members)
        if any(g not in have for g in got):
            return "%s returned what its key does not hold" % side
        if count > 0 and len(set(got)) != len(got):
            return "%s repeated an element for a positive count" % side
    return None


# ---------------------------------------------------------------- running

class Pair:
    """Connections to the target and the oracle, for one seed."""

    def __init__(self, target, oracle, resp3):
        self.a = target.conn()
        self.b = oracle.conn()
        self.kind_a, self.kind_b = target.kind, oracle.kind
        if resp3:
            for c in (self.a, self.b):
                rep = c.request("HELLO", "3")
                if not rep.startswith(b"%"):
                    raise RuntimeError("HELLO 3 refused: %s" % show(rep))

    def both(self, *args):
        return self.a.request(*args), self.b.request(*args)

    def close(self):
        self.a.close()
        self.b.close()


def set_limits(pair, limits):
    """CONFIG SET each limit on both servers. Redis 7.0 has no set
    listpack encoding (Redis 7.2 brought it, and Valkey has it), so a
    redis-server may refuse set-max-listpack-*; soloist must take all."""
    for name, value in limits:
        for conn, kind in ((pair.a, pair.kind_a), (pair.b, pair.kind_b)):
            rep = conn.request("CONFIG", "SET", name, value)
            if rep != b"+OK\r\n" and not (kind == "redis" and
                                           name.startswith("set-max-listpack")):
                raise RuntimeError("%s refused CONFIG SET %s %s: %s"
                                   % (kind, name, value, show(rep)))


def seed_setup(seed):
    """What a seed runs under, from the seed alone: every other seed the
    small encoding limits (a list node of 4, 1, 2 or 3 entries in turn:
    one entry a node makes every insert and delete split or join nodes),
    every third RESP3."""
    small = seed % 2 == 1
    limits = DEFAULT_LIMITS
    if small:
        node = ["4", "1", "2", "3"][(seed // 2) % 4]
        limits = [(n, node if n == "list-max-listpack-size" else v)
                  for n, v in SMALL_LIMITS]
    return {"small": small, "resp3": seed % 3 == 0, "limits": limits}


def dump_key(conn, key):
    """One key's type and content, normalized: the bytes two servers
    holding equal values answer alike."""
    t = conn.request("TYPE", key)
    if t in (b"+string\r\n",):
        return [t, conn.request("GET", key)]
    if t == b"+list\r\n":
        return [t, conn.request("LRANGE", key, "0", "-1")]
    if t == b"+set\r\n":
        return [t, repr(_multiset(conn.request("SMEMBERS", key), False)).encode()]
    if t == b"+hash\r\n":
        return [t, repr(_multiset(conn.request("HGETALL", key), True)).encode()]
    if t == b"+zset\r\n":
        return [t, conn.request("ZRANGE", key, "0", "-1", "WITHSCORES")]
    return [t]


def dump_keyspace(conn):
    ks = sorted(elements(conn.request("KEYS", "*")) or [])
    names = [harness.parse(k) for k in ks]
    return [(n, dump_key(conn, n)) for n in names]


class Mismatch(Exception):
    pass


def run_seed(target, oracle, seed, ncommands, families, transcript=None):
    """Send the sequence one seed draws to both servers. Returns None, or the
    report of the first difference (the seed stops there: later replies
    would differ only because of it)."""
    setup = seed_setup(seed)
    gen = Generator(seed, families)
    cmds = [gen.next() for _ in range(ncommands)]
    pair = Pair(target, oracle, setup["resp3"])
    sent = []  # the commands sent so far, for the report and transcript
    try:
        pair.both("FLUSHALL")
        set_limits(pair, setup["limits"])
        for start in range(0, len(cmds), BATCH):
            batch = cmds[start:start + BATCH]
            wire = []
            for c in batch:
                wire.append(encode(*c.args))
                if c.probe:
                    wire.append(encode(*c.probe))
            data = b"".join(wire)
            pair.a.send(data)
            pair.b.send(data)
            n = len(wire)
            try:
                got_a = pair.a.read_replies(n)
            except (harness.ConnectionClosed, harness.ReplyTimeout) as e:
                raise Mismatch("the target stopped answering in commands %d-%d: %s"
                               % (start, start + len(batch) - 1, e))
            got_b = pair.b.read_replies(n)
            i = 0
            for j, c in enumerate(batch):
                a, b = got_a[i], got_b[i]
                pa = pb = None
                if c.probe:
                    pa, pb = got_a[i + 1], got_b[i + 1]
                i += 2 if c.probe else 1
                sent.append(c)
                why = compare(c, a, b, pa, pb)
                if why is None and c.probe and c.mode == "random":
                    why = compare(Cmd(c.probe, "unordered",
                                      pairs=c.probe[0] == "HGETALL"), pa, pb)
                if why:
                    raise Mismatch(
                        "command %d: %s\n    %s\n        soloist: %s\n        oracle:  %s%s"
                        % (start + j, why, c.text(), show(a), show(b),
                           ("\n        (%s: soloist %s, oracle %s)"
                            % (" ".join(c.probe), show(pa), show(pb))) if c.probe else ""))
        da, db = dump_keyspace(pair.a), dump_keyspace(pair.b)
        if da != db:
            ka, kb = dict(da), dict(db)
            lines = []
            for k in sorted(set(ka) | set(kb)):
                if ka.get(k) != kb.get(k):
                    lines.append("    key %r\n        soloist: %s\n        oracle:  %s"
                                 % (k, ka.get(k), kb.get(k)))
            raise Mismatch("the keyspaces differ after %d commands:\n%s"
                           % (len(cmds), "\n".join(lines[:10])))
        return None
    except Mismatch as e:
        args = os.environ.get("SOLOIST_SERVER_ARGS", "")
        server_args = "SOLOIST_SERVER_ARGS='%s' " % args if args else ""
        context = "\n".join("      %5d  %s" % (len(sent) - len(sent[-12:]) + k, c.text())
                            for k, c in enumerate(sent[-12:]))
        limits = " ".join("%s %s" % nv for nv in setup["limits"])
        return ("seed %d (%s, RESP%d, %d commands, families %s): %s\n"
                "    the commands before it:\n%s\n"
                "    replay: %spython3 tests/integration/randdiff.py --target %s --seed %d --commands %d%s"
                % (seed, limits,
                   3 if setup["resp3"] else 2, ncommands, ",".join(families), e,
                   context, server_args, target.binary, seed, ncommands,
                   "" if set(families) == set(FAMILIES)
                   else " --families " + ",".join(families)))
    finally:
        if transcript:
            write_transcript(transcript, seed, setup, sent)
        pair.close()


def write_transcript(path, seed, setup, sent):
    """The commands sent, as a difftest.py transcript to replay alone
    (difftest.py -v FILE): the random ones are left out (they change
    nothing, and their replies cannot be compared there), the sequence's
    limits are CONFIG SET at its start (and stay set on those servers)."""
    with open(path, "w") as f:
        f.write("# randdiff.py seed %d, %d commands\n" % (seed, len(sent)))
        if setup["resp3"]:
            f.write("@resp3\n")
        for name, value in setup["limits"]:
            if not name.startswith("set-max-listpack"):
                f.write("CONFIG SET %s %s\n" % (name, value))
        for c in sent:
            if c.mode == "random":
                continue
            f.write(("@unordered " if c.mode in ("unordered", "hash-order") else "")
                    + c.text() + "\n")


def parse_seeds(spec):
    out = []
    for part in spec.split(","):
        if "-" in part[1:]:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default=harness.target_binary())
    ap.add_argument("--oracle", default=harness.REDIS_SERVER)
    ap.add_argument("--seed", type=int, action="append")
    ap.add_argument("--seeds", help="e.g. 1-200 or 3,5,9")
    ap.add_argument("--commands", type=int, default=DEFAULT_COMMANDS)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--transcript", help="write the sequence of the (last) seed here")
    a = ap.parse_args()
    seeds = (a.seed or []) + (parse_seeds(a.seeds) if a.seeds else [])
    seeds = seeds or [1]
    families = [f for f in a.families.split(",") if f]
    t0 = time.monotonic()
    target = harness.Server(a.target, name="randdiff-target").start()
    oracle = harness.Server(a.oracle, name="randdiff-oracle").start()
    failed = 0
    try:
        c = target.conn()
        missing = missing_commands(c, families)
        c.close()
        if missing:
            print("the target lacks %s" % " ".join(missing))
            return 2
        for s in seeds:
            rep = run_seed(target, oracle, s, a.commands, families, a.transcript)
            if rep:
                failed += 1
                print("MISMATCH " + rep)
    finally:
        target.stop()
        oracle.stop()
    print("%d seeds, %d failed, %d commands each (%.1fs)"
          % (len(seeds), failed, a.commands, time.monotonic() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
