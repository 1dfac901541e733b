"""Tests of bench/big_values.py's Valkey rows (F7.54-F7.56) and its
first-touch row (F7.57): they read run lines made up here, say which side is ahead only when every run of
it is, and are left out when Valkey was not measured. No server is
started.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import big_values as bv  # noqa: E402


def bw_line(setting, test, mb, mbps, lat_us=(1000, 2000)):
    return {"part": "bandwidth", "setting": setting, "test": test, "value_mb": mb, "mb_per_s": mbps,
            "latency_us": list(lat_us), "valkey_version": "Valkey server v=255.255.255"}


def rows_of(bw):
    got = {}

    def row(rid, claim, figure, **cfg):
        got[rid] = (claim, figure, cfg)
    bv.beside_valkey(bw, row)
    return got


class BigValuesBesideValkey(unittest.TestCase):
    def test_apart_and_overlapping_sizes(self):
        bw = []
        for i in range(3):
            bw += [bw_line("on", "GET", 1, 2000 + i), bw_line("valkey", "GET", 1, 1000 + i),  # apart
                   bw_line("on", "GET", 8, 1000 + 10 * i), bw_line("valkey", "GET", 8, 1005 + 10 * i)]  # overlap
        got = rows_of(bw)
        self.assertEqual(set(got), {54})
        claim, fig, cfg = got[54]
        self.assertIn("1 MB: 2001 / 1001 MB/s = 2.00× (soloist faster in every run)", fig)
        self.assertIn("8 MB: 1010 / 1015 MB/s = 1.00× (run ranges overlap)", fig)
        self.assertEqual(cfg["runs"], 3)
        self.assertEqual(cfg["peer"], "Valkey")
        self.assertIn("Valkey server", cfg["valkey_version"])

    def test_valkey_ahead_and_percentiles(self):
        bw = [bw_line("on", "SET", 2, 500, (4000, 9000)), bw_line("valkey", "SET", 2, 900, (2000, 3000))]
        self.assertIn("(one run)", rows_of(bw)[55][1])
        bw += [bw_line("on", "SET", 2, 510, (4000, 9000)), bw_line("valkey", "SET", 2, 910, (2000, 3000))]
        fig = rows_of(bw)[55][1]
        self.assertIn("(Valkey faster in every run)", fig)
        self.assertIn("p50 4 / 2 ms, p99 9 / 3 ms", fig)

    def test_no_row_without_valkey(self):
        bw = [bw_line("on", "GET", 1, 2000), bw_line("redis", "GET", 1, 1000)]
        self.assertEqual(rows_of(bw), {})

    def test_first_touch_row(self):
        got = {}

        def row(rid, claim, figure, **cfg):
            got[rid] = (claim, figure, cfg)
        bv.touch_row([{"first_mb_per_s": f, "second_mb_per_s": s} for f, s in ((300, 15000), (290, 16000),
                                                                             (310, 17000))], row)
        self.assertIn("first write 300 MB/s, second 16000 MB/s: the first at 0.019× the second's speed "
                      "(runs first 290–310, second 15000–17000 MB/s)", got[57][1])
        self.assertEqual(got[57][2]["runs"], 3)
        got.clear()
        bv.touch_row([], row)
        self.assertEqual(got, {})

    def test_valkey_noise_settings_start_valkey(self):
        self.assertEqual([s[0] for s in bv.VALKEY_NOISE], ["valkey-t1", "valkey-t2"])
        self.assertTrue(all(s[2] is None for s in bv.VALKEY_NOISE))


if __name__ == "__main__":
    unittest.main()
