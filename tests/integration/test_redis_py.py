"""Transactions as a real client library uses them: redis-py (Debian's
python3-redis) against the server under test. A pipeline is a MULTI/EXEC
transaction by default; WATCH with a retry loop is the optimistic lock
every client library documents; BZPOPMIN with a timeout is the blocking
pop a client waits on.

Owns nothing but its server. Valkey anchor: src/multi.c (execCommand,
watchCommand, touchWatchedKey), src/t_zset.c (bzpopminCommand).

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


if __name__ == "__main__":
    unittest.main()
