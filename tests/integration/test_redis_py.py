"""A real client library against the server under test: redis-py
(Debian's python3-redis), its calls used as an application would, with
nothing adapted to the server. Transactions: a pipeline is a MULTI/EXEC
transaction by default; WATCH with a retry loop is the optimistic lock
every client library documents; BZPOPMIN with a timeout is the blocking
pop a client waits on. Lists, hashes and sets: the calls and the Python
values redis-py makes of their replies (lists, dicts, sets, floats), the
SCAN iterators, BLPOP served by another client, and pipelines and
transactions mixing the types.

Owns nothing but its server. Valkey anchor: src/multi.c (execCommand,
watchCommand, touchWatchedKey), src/t_zset.c (bzpopminCommand),
src/t_list.c, src/t_hash.c, src/t_set.c, src/db.c (scanGenericCommand).

Runs unchanged against $SOLOIST_TARGET (default build/soloist-server) and
against redis-server (SOLOIST_TARGET=/usr/bin/redis-server).
"""

import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

try:
    import redis
except ImportError:  # an interpreter beside Debian's: look where the package installs
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import redis
    except ImportError:
        redis = None


@unittest.skipIf(redis is None, "python3-redis is not installed (apt-get install -y python3-redis)")
class RedisPyTest(harness.ServerTestCase):
    def setUp(self):
        super().setUp()
        self.r = self.client()
        self.r.flushall()

    def tearDown(self):
        self.r.close()
        super().tearDown()

    def client(self):
        return redis.Redis(host="127.0.0.1", port=self.server.port, socket_timeout=10)

    def test_pipeline_is_a_transaction(self):
        p = self.r.pipeline()  # transaction=True: MULTI ... EXEC
        p.set("a", 1).incr("a").incrby("a", 40).get("a").zadd("z", {"m": 1.5}).zscore("z", "m")
        self.assertEqual(p.execute(), [True, 2, 42, b"42", 1, 1.5])

    def test_runtime_error_is_one_element(self):
        self.r.set("s", "text")
        p = self.r.pipeline()
        p.incr("s").set("t", 1).get("t")
        res = p.execute(raise_on_error=False)
        self.assertIsInstance(res[0], redis.ResponseError)
        self.assertEqual(res[1:], [True, b"1"])

    def test_queueing_error_aborts(self):
        p = self.r.pipeline()
        p.set("q", 1).execute_command("NOSUCHCOMMAND")
        with self.assertRaises(redis.ResponseError):
            p.execute()
        self.assertIsNone(self.r.get("q"))
        # the connection is usable and out of MULTI
        self.assertTrue(self.r.ping())

    def test_watch_touched_raises(self):
        other = self.client()
        with self.r.pipeline() as p:
            p.watch("w")
            other.set("w", 1)
            p.multi()
            p.set("w", 2)
            with self.assertRaises(redis.WatchError):
                p.execute()
        self.assertEqual(self.r.get("w"), b"1")
        other.close()

    def test_watch_retry_counts_exactly(self):
        """Two clients race to increment one key by WATCH, GET, MULTI, SET,
        EXEC, retrying on a touched watch: no increment may be lost."""
        n, retries, errors = 300, [0, 0], []

        def worker(i):
            c = self.client()
            try:
                for _ in range(n):
                    while True:
                        with c.pipeline() as p:
                            try:
                                p.watch("counter")
                                cur = int(p.get("counter") or 0)
                                p.multi()
                                p.set("counter", cur + 1)
                                p.execute()
                                break
                            except redis.WatchError:
                                retries[i] += 1
            except Exception as e:  # reported in the main thread
                errors.append(e)
            finally:
                c.close()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(errors, [])
        self.assertEqual(int(self.r.get("counter")), 2 * n)

    def test_bzpopmin_with_timeout(self):
        self.r.zadd("bz", {"a": 1, "b": 2})
        self.assertEqual(self.r.bzpopmin("bz", timeout=1), (b"bz", b"a", 1.0))
        self.r.delete("bz")
        t0 = time.monotonic()
        self.assertIsNone(self.r.bzpopmin("bz", timeout=0.2))
        self.assertGreaterEqual(time.monotonic() - t0, 0.15)
        # inside a transaction it does not block: an empty key answers at once
        p = self.r.pipeline()
        p.bzpopmin("bz", timeout=5)
        t0 = time.monotonic()
        self.assertEqual(p.execute(), [None])
        self.assertLess(time.monotonic() - t0, 2)


@unittest.skipIf(redis is None, "python3-redis is not installed (apt-get install -y python3-redis)")
class RedisPyCollectionsTest(harness.ServerTestCase):
    """Lists, hashes and sets through redis-py's own calls."""

    def setUp(self):
        super().setUp()
        self.r = self.client()
        self.r.flushall()

    def tearDown(self):
        self.r.close()
        super().tearDown()

    def client(self):
        return redis.Redis(host="127.0.0.1", port=self.server.port, socket_timeout=10)

    # -- lists

    def test_list_push_range_pop(self):
        r = self.r
        self.assertEqual(r.lpush("l", "a", "b"), 2)
        self.assertEqual(r.rpush("l", "c", 1), 4)
        self.assertEqual(r.lrange("l", 0, -1), [b"b", b"a", b"c", b"1"])
        self.assertEqual(r.lrange("l", -2, 100), [b"c", b"1"])
        self.assertEqual(r.lpop("l"), b"b")
        self.assertEqual(r.lpop("l", 2), [b"a", b"c"])
        self.assertEqual(r.rpop("l", 5), [b"1"])
        # the emptied list is gone with its key
        self.assertEqual(r.exists("l"), 0)
        self.assertIsNone(r.lpop("l"))
        self.assertIsNone(r.lpop("l", 2))
        r.set("str", "x")
        with self.assertRaises(redis.ResponseError) as cm:
            r.lpush("str", "a")
        self.assertIn("WRONGTYPE", str(cm.exception))

    def test_blpop_served_by_another_client(self):
        other = self.client()
        pusher = threading.Timer(0.2, lambda: other.rpush("q2", "x", "y"))
        t0 = time.monotonic()
        pusher.start()
        try:
            got = self.r.blpop(["q1", "q2"], timeout=5)
        finally:
            pusher.join()
            other.close()
        self.assertEqual(got, (b"q2", b"x"))
        self.assertGreaterEqual(time.monotonic() - t0, 0.15)
        self.assertEqual(self.r.lrange("q2", 0, -1), [b"y"])
        # a list that holds an element answers at once; none: the timeout
        self.assertEqual(self.r.blpop(["q1", "q2"], timeout=1), (b"q2", b"y"))
        t0 = time.monotonic()
        self.assertIsNone(self.r.blpop(["q1", "q2"], timeout=1))
        self.assertGreaterEqual(time.monotonic() - t0, 0.9)

    def test_lmove_and_lpos(self):
        r = self.r
        r.rpush("src", "a", "b", "c", "b")
        self.assertEqual(r.lmove("src", "dst", "RIGHT", "LEFT"), b"b")
        self.assertEqual(r.lmove("src", "dst", "LEFT", "RIGHT"), b"a")
        self.assertEqual(r.lrange("dst", 0, -1), [b"b", b"a"])
        self.assertEqual(r.lrange("src", 0, -1), [b"b", b"c"])
        self.assertIsNone(r.lmove("nosuch", "dst"))
        r.rpush("src", "b", "x", "b")  # b c b x b
        self.assertEqual(r.lpos("src", "b"), 0)
        self.assertEqual(r.lpos("src", "b", rank=-1), 4)
        self.assertEqual(r.lpos("src", "b", rank=2), 2)
        self.assertEqual(r.lpos("src", "b", count=0), [0, 2, 4])
        self.assertEqual(r.lpos("src", "b", rank=-2, count=2), [2, 0])
        self.assertEqual(r.lpos("src", "x", maxlen=3), None)
        self.assertIsNone(r.lpos("src", "z"))
        self.assertEqual(r.lpos("src", "z", count=2), [])

    # -- hashes

    def test_hset_mapping_hgetall_hincrbyfloat(self):
        r = self.r
        self.assertEqual(r.hset("h", mapping={"f1": "v1", "f2": 2}), 2)
        # f1 is updated, f3 is new: one field added
        self.assertEqual(r.hset("h", "f1", "x", mapping={"f3": 3}), 1)
        self.assertEqual(r.hgetall("h"), {b"f1": b"x", b"f2": b"2", b"f3": b"3"})
        self.assertEqual(r.hincrbyfloat("h", "f2", 0.5), 2.5)
        self.assertEqual(r.hincrbyfloat("h", "new", "1.25"), 1.25)
        self.assertEqual(r.hget("h", "f2"), b"2.5")
        self.assertEqual(r.hmget("h", "f1", "nosuch", "new"), [b"x", None, b"1.25"])
        self.assertEqual(r.hgetall("nosuch"), {})
        with self.assertRaises(redis.ResponseError) as cm:
            r.hincrbyfloat("h", "f1", 1)
        self.assertIn("hash value is not a float", str(cm.exception))
        self.assertEqual(r.hdel("h", "f1", "f2", "f3", "new"), 4)
        self.assertEqual(r.exists("h"), 0)

    def test_hscan_iter_and_hrandfield(self):
        r = self.r
        small = {b"a": b"1", b"b": b"2", b"c": b"3"}
        big = {("f%d" % i).encode(): str(i).encode() for i in range(300)}
        r.hset("small", mapping=small)
        r.hset("big", mapping=big)  # past hash-max-listpack-entries
        for name, want in (("small", small), ("big", big)):
            seen = list(r.hscan_iter(name, count=7))
            self.assertEqual(dict(seen), want, name)
            self.assertEqual(len(seen), len(want), "%s: a field returned twice" % name)
        self.assertEqual(dict(r.hscan_iter("big", match="f1?")),
                         {k: v for k, v in big.items() if len(k) == 3 and k.startswith(b"f1")})
        self.assertEqual(list(r.hscan_iter("nosuch")), [])
        for name, want in (("small", small), ("big", big)):
            self.assertIn(r.hrandfield(name), want)
            got = r.hrandfield(name, 3)
            self.assertEqual(len(set(got)), 3)
            self.assertTrue(set(got) <= set(want))
            self.assertEqual(len(r.hrandfield(name, -20)), 20)  # repeats allowed
            flat = r.hrandfield(name, 2, withvalues=True)
            self.assertEqual(len(flat), 4)
            for f, v in zip(flat[0::2], flat[1::2]):
                self.assertEqual(want[f], v)
        self.assertEqual(sorted(r.hrandfield("small", 10)), sorted(small))
        self.assertIsNone(r.hrandfield("nosuch"))
        self.assertEqual(r.hrandfield("nosuch", 3), [])

    # -- sets

    def test_sets(self):
        r = self.r
        self.assertEqual(r.sadd("s1", "a", "b", "c", 1), 4)
        self.assertEqual(r.sadd("s1", "a"), 0)
        self.assertEqual(r.smembers("s1"), {b"a", b"b", b"c", b"1"})
        r.sadd("s2", "b", "c", "d")
        self.assertEqual(r.sinter("s1", "s2"), {b"b", b"c"})
        self.assertEqual(r.sinter("s1", "nosuch"), set())
        self.assertEqual(r.sintercard(2, ["s1", "s2"]), 2)
        self.assertEqual(r.sintercard(2, ["s1", "s2"], limit=1), 1)
        self.assertEqual(r.smismember("s1", ["a", "z", 1]), [1, 0, 1])
        members = r.smembers("s1")
        popped = r.spop("s1")
        self.assertIn(popped, members)
        self.assertEqual(r.scard("s1"), 3)
        rest = r.spop("s1", 10)
        self.assertEqual(set(rest) | {popped}, members)
        self.assertEqual(r.exists("s1"), 0)
        self.assertIsNone(r.spop("s1"))
        # integers only: an intset, spop with a count below the size
        r.sadd("ints", *range(20))
        got = r.spop("ints", 5)
        self.assertEqual(len(set(got)), 5)
        self.assertEqual(r.scard("ints"), 15)
        self.assertFalse(set(got) & r.smembers("ints"))

    def test_sscan_iter(self):
        r = self.r
        ints = {str(i).encode() for i in range(1000)}
        r.sadd("ints", *ints)  # an intset
        strs = {("m%d" % i).encode() for i in range(300)}
        r.sadd("strs", *strs)  # past set-max-listpack-entries: a hashtable
        r.sadd("few", "x", "y")
        for name, want in (("ints", ints), ("strs", strs), ("few", {b"x", b"y"})):
            seen = list(r.sscan_iter(name, count=10))
            self.assertEqual(set(seen), want, name)
            self.assertEqual(len(seen), len(want), "%s: a member returned twice" % name)
        self.assertEqual(set(r.sscan_iter("strs", match="m1?")),
                         {m for m in strs if len(m) == 3 and m.startswith(b"m1")})

    # -- pipelines and transactions

    def test_pipeline_mixing_types(self):
        p = self.r.pipeline(transaction=False)
        p.rpush("l", "a", "b").hset("h", mapping={"f": "1"}).sadd("s", "x", "y")
        p.lrange("l", 0, -1).hgetall("h").smembers("s")
        p.hincrby("h", "f", 2).lpop("l").scard("s").type("l").type("h").type("s")
        self.assertEqual(p.execute(), [2, 1, 2, [b"a", b"b"], {b"f": b"1"}, {b"x", b"y"},
                                       3, b"a", 2, b"list", b"hash", b"set"])

    def test_transaction_mixing_types(self):
        r = self.r
        p = r.pipeline()  # MULTI ... EXEC
        p.lpush("l", "a").hset("h", "f", "v").sadd("s", "m")
        p.lpush("h", "oops")  # WRONGTYPE at EXEC: one element, the rest runs
        p.smove("s", "s2", "m").lmove("l", "l2").hgetall("h")
        res = p.execute(raise_on_error=False)
        self.assertEqual(res[:3], [1, 1, 1])
        self.assertIsInstance(res[3], redis.ResponseError)
        self.assertIn("WRONGTYPE", str(res[3]))
        self.assertEqual(res[4:], [True, b"a", {b"f": b"v"}])
        self.assertEqual(r.exists("s", "l"), 0)
        # a blocking pop inside a transaction does not block
        p = r.pipeline()
        p.blpop("nosuch", timeout=5).sadd("s", "z")
        t0 = time.monotonic()
        self.assertEqual(p.execute(), [None, 1])
        self.assertLess(time.monotonic() - t0, 2)

    def test_watch_a_list_touched_by_another_client(self):
        r = self.r
        other = self.client()
        r.rpush("jobs", "j1")
        with r.pipeline() as p:
            p.watch("jobs", "seen")
            other.rpush("jobs", "j2")  # touches a watched key
            p.multi()
            p.lpop("jobs").sadd("seen", "j1")
            with self.assertRaises(redis.WatchError):
                p.execute()
        self.assertEqual(r.lrange("jobs", 0, -1), [b"j1", b"j2"])
        self.assertEqual(r.exists("seen"), 0)
        with r.pipeline() as p:  # untouched: it runs
            p.watch("jobs")
            p.multi()
            p.lpop("jobs").sadd("seen", "j1").hset("done", "j1", 1)
            self.assertEqual(p.execute(), [b"j1", 1, 1])
        other.close()


if __name__ == "__main__":
    unittest.main()
