"""Tests of bench/main_syscalls.py: perf's output read in the events'
order (the read tracepoint is counted twice, once filtered to 8-byte
reads), counts turned into calls per command, and the rows (F4.111,
F4.112) from run lines made up here: medians per thread count, kinds
under 0.005 a request left out, a run not offered the load left out and
counted, a thread count with no offered run said so, and Valkey said not
measured when it has no lines. No server is started.
"""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import main_syscalls as ms  # noqa: E402


def main_counts(read=1.0, write=1.0, epoll=0.4, poll=0.0, futex=0.0, eight=0.0, wakes=0.0, cpu=20.0):
    per = {k: 0.0 for k in ms.KINDS}
    per.update(read=read, write=write, epoll_wait=epoll, poll=poll, futex=futex)
    per[ms.EIGHT] = eight
    return {"syscalls": per, "all": read + write + epoll + poll + futex, "wakes": wakes, "switches": poll,
            "cpu_us": cpu}


def run_line(server, threads, run, main, requests=30000, unsent=0):
    return {"kind": "run", "bench": "main_syscalls", "server": server, "io_threads": threads, "run": run,
            "requests": requests, "unsent": unsent, "main": main}


def rows(lines):
    got = {}
    saved = ms.bl.emit
    ms.bl.emit = lambda d: got.__setitem__(d.get("id"), d) if d.get("finding") else None
    try:
        ms.findings(lines, False, 27000)
    finally:
        ms.bl.emit = saved
    return got


class ParseCounts(unittest.TestCase):
    def test_events_in_order_the_read_twice(self):
        values = list(range(1, len(ms.NAMES) + 1))
        with tempfile.NamedTemporaryFile("w", suffix=".perf", delete=False) as f:
            f.write("# started on ...\n\n")
            for v, name in zip(values, ms.NAMES):
                event = "syscalls:sys_enter_read" if name == ms.EIGHT else name
                f.write("%d,,%s,1000,100.00,,\n" % (v, event))
        try:
            got = ms.parse_counts(ms.bl.perf_stat_lines(f.name))
        finally:
            os.unlink(f.name)
        self.assertEqual(got["syscalls:sys_enter_read"], 1.0)
        self.assertEqual(got[ms.EIGHT], float(len(ms.KINDS) + 1))
        self.assertEqual(got["task-clock"], float(len(ms.NAMES)))

    def test_per_request(self):
        counts = {"syscalls:sys_enter_read": 2000.0, ms.EIGHT: 500.0, "all": 5000.0, "wakes": 100.0,
                  "switches": 300.0, "task-clock": 20.0}  # task-clock in ms
        got = ms.per_request(counts, 1000)
        self.assertEqual(got["syscalls"]["read"], 2.0)
        self.assertEqual(got["syscalls"][ms.EIGHT], 0.5)
        self.assertEqual(got["syscalls"]["futex"], 0.0)
        self.assertEqual(got["all"], 5.0)
        self.assertEqual(got["wakes"], 0.1)
        self.assertEqual(got["cpu_us"], 20.0)
        self.assertIsNone(ms.per_request(counts, 0))


class Rows(unittest.TestCase):
    def lines(self):
        out = []
        for run in (1, 2, 3):
            out.append(run_line("soloist", 1, run, main_counts(cpu=20.0 + run)))
            out.append(run_line("soloist", 2, run, main_counts(read=0.8, write=0.0, epoll=0.0, poll=0.7,
                                                                futex=0.08, eight=0.8, wakes=0.08, cpu=14.0)))
            out.append(run_line("valkey", 1, run, main_counts(cpu=21.0)))
            out.append(run_line("valkey", 2, run, main_counts(read=0.0, write=0.0, epoll=0.15, cpu=18.0)))
            out.append(run_line("valkey", 4, run, main_counts(read=0.0, write=0.0, epoll=0.01, cpu=90.0),
                                requests=500, unsent=29500))
        return out

    def test_kinds_medians_and_left_out(self):
        lines = self.lines()
        lines.append(run_line("valkey", 2, 4, main_counts(cpu=500.0), requests=100, unsent=29900))
        r = rows(lines)
        s, v = r["F4.111"]["figure"], r["F4.112"]["figure"]
        self.assertIn("t1: all 2.40 (read 1.00; write 1.00; epoll_wait 0.40)", s)
        self.assertIn("CPU 22.00 µs", s)
        self.assertIn("t2: all 1.58 (read 0.80; poll 0.70; futex 0.08; read 8 B 0.80); wakes 0.08", s)
        self.assertNotIn("write 0.00", s)
        self.assertIn("t2: all 0.15 (epoll_wait 0.15)", v)
        self.assertIn("CPU 18.00 µs; 1 run(s) left out, under 95 % answered", v)
        self.assertIn("t4: not offered the load (at most 2 % of the offered requests answered)", v)
        self.assertTrue(v.endswith("; offered 27000 requests/s"))

    def test_valkey_not_measured(self):
        r = rows([ln for ln in self.lines() if ln["server"] == "soloist"])
        self.assertIn("F4.111", r)
        self.assertIn("not measured", r["F4.112"]["figure"])


if __name__ == "__main__":
    unittest.main()
