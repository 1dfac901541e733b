"""Tests of bench/beside_valkey.py's own logic: without VALKEY_SERVER it
prints one line saying it skipped the peer and starts nothing; the rows it
computes at the end (throughput, 1 MB latency, main's CPU per request)
read run lines made up here, say whether the runs separate in
tools/findings.py's words, and pass findings.py's checks. No server is
started.
"""

import io
import json
import os
import subprocess
import sys
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import beside_valkey as bv  # noqa: E402


def side(rps, p50=0.5, p99=2.0):
    return {"rps": sorted(rps)[len(rps) // 2], "rps_runs": rps, "p50_latency_ms": p50, "p99_latency_ms": p99,
            "p99_runs": [p99] * len(rps), "client_cpu_s": 0.3}


def cell(part, test, size, p, s, v, r, p99=(2.0, 2.0, 2.0)):
    c = {"kind": "cell", "part": part, "test": test, "value_size": size, "pipeline": p, "runs": len(s),
         "soloist": side(s, p99=p99[0]), "valkey": side(v, p99=p99[1]), "redis": side(r, p99=p99[2])}
    c["ratio_valkey"] = c["soloist"]["rps"] / c["valkey"]["rps"]
    c["ratio_redis"] = c["soloist"]["rps"] / c["redis"]["rps"]
    return c


def cpu(server, n, main_us, run):
    return {"kind": "cpu", "test": "GET", "value_size": 3, "pipeline": 1, "rate": 1000, "server": server,
            "io_threads": n, "run": run, "main_us_per_request": main_us, "io_us_per_request": 1.0 if n > 1 else 0}


class BesideValkey(unittest.TestCase):
    def test_skips_without_valkey(self):
        env = dict(os.environ, VALKEY_SERVER="", QUICK="1")
        out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "beside_valkey.py")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60).stdout
        lines = [json.loads(x) for x in out.splitlines() if x.strip()]
        self.assertEqual(len(lines), 1)
        self.assertEqual(lines[0]["kind"], "skipped")
        self.assertIn("VALKEY_SERVER", lines[0]["why"])

    def rows(self, seen):
        bv.SEEN[:] = seen
        buf = io.StringIO()
        with redirect_stdout(buf):
            bv.findings({"quick": False, "valkey_version": "Valkey server v=255.255.255"})
        return {d["id"]: d for d in (json.loads(x) for x in buf.getvalue().splitlines())}

    def test_rows(self):
        seen = [cell("a", "GET", 3, 16, [130, 140, 150], [100, 101, 102], [90, 95, 99]),
                cell("a", "SET", 3, 16, [110, 115, 120], [100, 112, 118], [90, 95, 99]),
                cell("b", "GET", 1 << 20, 1, [10, 11, 12], [11, 12, 13], [10, 11, 12], p99=(6.0, 1.6, 1.5))]
        for run in (1, 2, 3):
            seen += [cpu("soloist", 1, 5.0 + run * 0.1, run), cpu("valkey", 1, 6.0 + run * 0.1, run),
                     cpu("soloist", 2, 3.0, run), cpu("valkey", 2, 2.0 + run, run)]
        rows = self.rows(seen)
        self.assertIn("soloist faster in every run", rows["F0.60"]["figure"])
        self.assertIn("run ranges overlap", rows["F0.61"]["figure"])
        self.assertTrue(rows["F0.68"]["figure"].startswith("not met: 1 of 2 cells"))
        self.assertIn("p99 6.00 / 1.60 / 1.50 ms", rows["F7.50"]["figure"])
        self.assertTrue(rows["F7.53"]["figure"].startswith("not met"))
        self.assertIn("t1 5.20 vs 6.20 µs (0.84×; soloist lower in every run)", rows["F4.90"]["figure"])
        self.assertIn("t2 3.00 vs 4.00 µs (0.75×; run ranges overlap)", rows["F4.90"]["figure"])
        self.assertEqual(rows["F4.99"]["figure"], "met")

    def test_target_names_the_cells_above_valkey(self):
        seen = []
        for run in (1, 2):
            seen += [cpu("soloist", 1, 7.0, run), cpu("valkey", 1, 6.0, run)]
        rows = self.rows(seen)
        self.assertEqual(rows["F4.99"]["figure"], "not met: above Valkey in GET 3 B P=1 t1")


if __name__ == "__main__":
    unittest.main()
