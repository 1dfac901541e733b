"""Tests of bench/zset_ranges.py's rows against Valkey (F8.55, F8.56):
they read run lines made up here, give per cell the median of the
starts' ratios, name the cells under 1.0x, and are left out when Valkey
was not measured; the rows against redis-server 7.0 are the same with or
without Valkey's lines. No server is started.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import zset_ranges as zr  # noqa: E402


def run_lines(server, rate, cpu, starts=3):
    """One run line per cell and start for `server`: rate(cmd, size, p, start)
    requests/s, cpu ns a request."""
    return [{"kind": "run", "bench": "zset_ranges", "server": server, "start": st, "command": cmd,
             "withscores": ws, "members": size, "pipeline": p, "rps": rate(cmd, size, p, st),
             "faults_per_req": 0.0, "cpu_ns_per_req": cpu}
            for st in range(1, starts + 1) for cmd, ws in zr.COMMANDS for size in zr.SIZES for p in zr.PIPELINES]


def rows(lines, valkey):
    got = {}
    saved = zr.bl.emit
    zr.bl.emit = lambda d: got.__setitem__(d.get("id"), d) if d.get("finding") else None
    try:
        zr.findings(lines, 3, False, valkey)
    finally:
        zr.bl.emit = saved
    return got


class ZsetRangesBesideValkey(unittest.TestCase):
    def setUp(self):
        self.base = run_lines("soloist", lambda c, n, p, st: 1000.0, 1000) + \
            run_lines("redis-server", lambda c, n, p, st: 800.0, 1500)
        # Valkey ahead only in ZRANGEBYLEX 10 at depth 1, in two of the three starts
        self.valkey = run_lines("valkey-server", lambda c, n, p, st: 1250.0 if (c, n, p) == ("ZRANGEBYLEX", 10, 1)
                                and st < 3 else 900.0, 2000)

    def test_the_median_start_per_cell_and_the_cells_under_one(self):
        got = rows(self.base + self.valkey, "Valkey server v=8.1")
        fig = got["F8.55"]["figure"]
        self.assertIn("lowest cell 0.80× (ZRANGEBYLEX 10 P=1)", fig)
        self.assertIn("1 of 42 cells under 1.0×: ZRANGEBYLEX 10 P=1", fig)
        self.assertIn("each command's mean", got["F8.56"]["claim"])
        self.assertIn("Valkey over soloist", got["F8.56"]["claim"])
        self.assertIn("geometric mean 2.00×; lowest cell 2.00×", got["F8.56"]["figure"])
        self.assertEqual(got["F8.55"]["config"]["valkey"], "Valkey built from source (Valkey server v=8.1)")

    def test_without_valkey_the_rows_are_left_out_and_the_others_unchanged(self):
        alone, beside = rows(self.base, None), rows(self.base + self.valkey, "v")
        self.assertNotIn("F8.55", alone)
        self.assertNotIn("F8.56", alone)
        for rid in ("F8.40", "F8.47", "F8.48", "F8.52", "F8.53"):
            self.assertEqual(alone[rid]["figure"], beside[rid]["figure"], rid)
        self.assertIn("geometric mean 1.25×", alone["F8.53"]["figure"])


if __name__ == "__main__":
    unittest.main()
