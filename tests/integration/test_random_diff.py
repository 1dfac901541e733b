"""Random differential test: randdiff.py's seeded command sequences sent
to the server under test and to the oracle (Debian's redis-server 7.0),
every reply and then the whole keyspace compared.

Each seed is one fixed sequence of commands over a handful of keys of
every type (lists, hashes, sets, sorted sets, strings, and the generic
key commands moving them about), with bad arguments among them; odd seeds
run under small encoding limits so that the compact encodings convert,
every third seed speaks RESP3. A failure names the seed, the command and
both replies, the commands before it, and the command line that replays
it (randdiff.py --seed N).

Sizes: SOLOIST_RANDDIFF_SEEDS seeds per test (default 16 for every type,
6 for strings, sorted sets and keys alone; SOLOIST_LONG=1 makes it 400
and 100), SOLOIST_RANDDIFF_COMMANDS commands per seed (default 2000). The
default run takes a few seconds.

The server under test is $SOLOIST_TARGET and is started with
$SOLOIST_SERVER_ARGS (the io-threads runs pass their thread counts
there), as every integration test's is (harness.py).

Owns its two servers. Valkey anchor: src/t_list.c, src/t_hash.c,
src/t_set.c, src/t_zset.c, src/t_string.c, src/db.c (the replies).
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import randdiff  # noqa: E402
from randdiff import Cmd, compare  # noqa: E402

LONG = os.environ.get("SOLOIST_LONG") == "1"


def seeds(first, default, long):
    n = int(os.environ.get("SOLOIST_RANDDIFF_SEEDS", long if LONG else default))
    return list(range(first, first + n))


COMMANDS = int(os.environ.get("SOLOIST_RANDDIFF_COMMANDS", randdiff.DEFAULT_COMMANDS))


class RandomDiffTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.target = harness.Server(name="randdiff-target").start()
        cls.oracle = harness.Server(harness.REDIS_SERVER, name="randdiff-oracle").start()

    @classmethod
    def tearDownClass(cls):
        cls.target.stop()
        cls.oracle.stop()

    def setUp(self):
        if not self.target.alive():  # an earlier test crashed it
            type(self).target = harness.Server(name="randdiff-target").start()

    def tearDown(self):
        self.assertTrue(self.target.alive(), self.target.log_tail())

    def run_seeds(self, families, seed_list):
        c = self.target.conn()
        missing = randdiff.missing_commands(c, families)
        c.close()
        if missing:
            self.skipTest("the target lacks %s" % " ".join(missing))
        failures = []
        for s in seed_list:
            rep = randdiff.run_seed(self.target, self.oracle, s, COMMANDS, families)
            if rep:
                failures.append(rep)
            if not self.target.alive():
                failures.append("the target died at seed %d:\n%s"
                                % (s, self.target.log_tail()))
                break
        self.assertEqual(failures, [], "\n\n" + "\n\n".join(failures[:5]))

    def test_every_type(self):
        self.run_seeds(randdiff.FAMILIES, seeds(1, 16, 400))

    def test_strings_sorted_sets_keys(self):
        self.run_seeds(["string", "generic", "zset"], seeds(10001, 6, 100))


class ComparerTest(unittest.TestCase):
    """The comparison rules themselves, on replies written by hand: each
    rule must pass what it should and catch what it should."""

    def test_exact(self):
        c = Cmd(["LRANGE", "k", "0", "-1"])
        self.assertIsNone(compare(c, b"*1\r\n$1\r\na\r\n", b"*1\r\n$1\r\na\r\n"))
        self.assertIsNotNone(compare(c, b"*2\r\n$1\r\na\r\n$1\r\nb\r\n",
                                     b"*2\r\n$1\r\nb\r\n$1\r\na\r\n"))

    def test_unordered(self):
        c = Cmd(["SMEMBERS", "k"], "unordered")
        ab, ba = b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", b"*2\r\n$1\r\nb\r\n$1\r\na\r\n"
        self.assertIsNone(compare(c, ab, ba))
        self.assertIsNone(compare(c, b"~2\r\n$1\r\na\r\n$1\r\nb\r\n",
                                  b"~2\r\n$1\r\nb\r\n$1\r\na\r\n"))
        self.assertIsNotNone(compare(c, ab, b"*2\r\n$1\r\na\r\n$1\r\na\r\n"))
        self.assertIsNotNone(compare(c, ab, b"~2\r\n$1\r\nb\r\n$1\r\na\r\n"))
        # an error is compared exactly
        self.assertIsNotNone(compare(c, b"-ERR x\r\n", b"-ERR y\r\n"))

    def test_hash_order(self):
        c = Cmd(["HGETALL", "k"], "hash-order", probe=["OBJECT", "ENCODING", "k"],
                pairs=True)
        fv = b"*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n2\r\n"
        gv = b"*4\r\n$1\r\ng\r\n$1\r\n2\r\n$1\r\nf\r\n$1\r\n1\r\n"
        swapped = b"*4\r\n$1\r\nf\r\n$1\r\n2\r\n$1\r\ng\r\n$1\r\n1\r\n"
        lp, ht = b"$8\r\nlistpack\r\n", b"$9\r\nhashtable\r\n"
        self.assertIsNotNone(compare(c, fv, gv, None, lp))  # listpack: order counts
        self.assertIsNone(compare(c, fv, gv, None, ht))     # hashtable: pairs
        self.assertIsNotNone(compare(c, fv, swapped, None, ht))  # values moved

    def test_random(self):
        c = Cmd(["SRANDMEMBER", "k", "2"], "random", probe=["SMEMBERS", "k"])
        members = b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
        ab, bc = b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", b"*2\r\n$1\r\nb\r\n$1\r\nc\r\n"
        self.assertIsNone(compare(c, ab, bc, members, members))
        self.assertIsNotNone(compare(c, ab, b"*1\r\n$1\r\nb\r\n", members, members))
        self.assertIsNotNone(compare(c, b"*2\r\n$1\r\na\r\n$1\r\nz\r\n", bc,
                                     members, members))  # not a member
        self.assertIsNotNone(compare(c, b"*2\r\n$1\r\na\r\n$1\r\na\r\n", bc,
                                     members, members))  # repeated, count > 0
        neg = Cmd(["SRANDMEMBER", "k", "-2"], "random", probe=["SMEMBERS", "k"])
        self.assertIsNone(compare(neg, b"*2\r\n$1\r\na\r\n$1\r\na\r\n", bc,
                                  members, members))
        h = Cmd(["HRANDFIELD", "k", "1", "WITHVALUES"], "random",
                probe=["HGETALL", "k"], pairs=True)
        hv = b"*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n2\r\n"
        self.assertIsNone(compare(h, b"*2\r\n$1\r\nf\r\n$1\r\n1\r\n",
                                  b"*2\r\n$1\r\ng\r\n$1\r\n2\r\n", hv, hv))
        self.assertIsNotNone(compare(h, b"*2\r\n$1\r\nf\r\n$1\r\n2\r\n",
                                     b"*2\r\n$1\r\ng\r\n$1\r\n2\r\n", hv, hv))
        # RESP3: pairs come as two-element arrays
        self.assertIsNone(compare(h, b"*1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n",
                                  b"*1\r\n*2\r\n$1\r\ng\r\n$1\r\n2\r\n",
                                  b"%2\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n2\r\n",
                                  b"%2\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n2\r\n"))

    def test_seed_replays(self):
        """A seed is the whole sequence: drawing it twice gives the same
        commands, and another seed does not."""
        def draw(seed):
            g = randdiff.Generator(seed, randdiff.FAMILIES)
            return [g.next().text() for _ in range(300)]
        one, again, other = draw(5), draw(5), draw(6)
        self.assertEqual(one, again)
        self.assertNotEqual(one, other)


if __name__ == "__main__":
    unittest.main()
