"""Tests of bench/idle_spin.py's rows (F4.107-F4.110): they read run lines
made up here, name the spin length where main's CPU per request is
lowest and the default's distance from it, leave out a run the
generator could not offer the load to (and say so when every Valkey run
was such a run), and say Valkey was not measured when it has no lines.
No server is started.
"""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import idle_spin as isp  # noqa: E402


SPINS = [0, 5, 20, 50, 200]


def run_line(threads, spin, run, main, proc=30.0, p99=1000.0, requests=30000, unsent=0):
    return {"kind": "run", "bench": "idle_spin", "io_threads": threads, "setting": isp.setting_name(spin),
            "spin_us": spin, "default_spin_us": 20, "run": run, "main_us_per_request": main,
            "process_us_per_request": proc, "io_us_per_request": proc / 2, "main_sleeps_per_request": 0.5,
            "requests": requests,
            "unsent": unsent, "latency_us": {"p50": 200.0, "p99": p99, "p99.9": 2000.0}}


def rows(lines):
    got = {}
    saved = isp.bl.emit
    isp.bl.emit = lambda d: got.__setitem__(d.get("id"), d) if d.get("finding") else None
    try:
        isp.findings(lines, False, 3, 18000)
    finally:
        isp.bl.emit = saved
    return got


def spin_main(spin):
    """Main's CPU a request by spin length: lowest at 5 µs."""
    return {0: 28.0, 5: 20.0, 20: 22.0, 50: 25.0, 200: 30.0}[spin]


class IdleSpinRows(unittest.TestCase):
    def lines(self, valkey_t2=True, valkey_t4_unsent=False, threads=(2, 4), spins=SPINS):
        out = []
        for run in (1, 2, 3):
            for t in threads:
                for s in spins:
                    out.append(run_line(t, s, run, spin_main(s) + run * 0.1))
            if valkey_t2:
                out.append(run_line(2, None, run, 19.0, proc=45.0))
            if valkey_t4_unsent:
                out.append(run_line(4, None, run, 90.0, proc=400.0, requests=100, unsent=29900))
        return out

    def test_lowest_and_default(self):
        r = rows(self.lines())
        fig = r["F4.107"]["figure"]
        self.assertIn("lowest at spin 5", fig)
        self.assertIn("default (spin 20) over lowest 1.10×", fig)
        self.assertIn("Valkey: 19.00", fig)
        self.assertIn("lowest over Valkey 1.06×", fig)
        self.assertIn("Valkey lower in every run", fig)
        self.assertIn("Valkey: process 45.00", r["F4.108"]["figure"])
        self.assertTrue(fig.endswith("; offered 18000 requests/s"))

    def test_a_run_not_offered_the_load_is_left_out(self):
        lines = self.lines(valkey_t4_unsent=True)
        # one soloist run the generator could not offer the load to: not in the medians
        lines.append(run_line(2, 5, 4, 500.0, requests=1000, unsent=29000))
        r = rows(lines)
        self.assertIn("spin 5: 20.20", r["F4.107"]["figure"])
        self.assertIn("1 soloist runs left out", r["F4.107"]["figure"])
        self.assertIn("Valkey not compared: at most 0 % of the offered requests answered", r["F4.109"]["figure"])
        self.assertIn("Valkey not compared (F4.109 says why)", r["F4.110"]["figure"])
        self.assertNotIn("Valkey: process", r["F4.110"]["figure"])

    def test_without_valkey(self):
        r = rows(self.lines(valkey_t2=False))
        self.assertIn("Valkey not measured", r["F4.107"]["figure"])
        self.assertEqual(set(r), {"F4.107", "F4.108", "F4.109", "F4.110"})


    def test_rows_from_the_lines_not_the_knobs(self):
        # a sweep without the default, and thread counts without rows
        r = rows(self.lines(threads=(2, 8), spins=[0, 5, 50]))
        self.assertEqual(set(r), {"F4.107", "F4.108"})
        self.assertIn("the default (spin 20) not swept", r["F4.107"]["figure"])
        self.assertIn("spin 50: 25.20", r["F4.107"]["figure"])
        self.assertIn("io 5: 15.00", r["F4.108"]["figure"])

    def test_a_stored_run_rowed_again(self):
        lines = [{"kind": "rate", "bench": "idle_spin", "rate": 18000, "quick": False, "run_id": "r1"}] + self.lines()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "idle_spin.jsonl")
            with open(path, "w") as f:
                for ln in lines + [{"finding": True, "id": "F4.107", "figure": "stale"}]:
                    f.write(json.dumps(ln) + "\n")
            isp.rows_again(path)
            with open(path) as f:
                got = [json.loads(x) for x in f]
        self.assertEqual([ln for ln in got if not ln.get("finding")], lines)
        found = {ln["id"]: ln for ln in got if ln.get("finding")}
        self.assertEqual(set(found), {"F4.107", "F4.108", "F4.109", "F4.110"})
        self.assertIn("lowest at spin 5", found["F4.107"]["figure"])
        self.assertEqual(found["F4.107"]["run_id"], "r1")
        self.assertIn("open loop at 18000/s", found["F4.107"]["claim"])


if __name__ == "__main__":
    unittest.main()
