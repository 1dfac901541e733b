"""Tests of bench/poll_offload.py's rows from run lines made up here: main's
system calls per GET (counted by perf on main) on / off in F4.51's figure,
epoll_wait and epoll_pwait added together, each kind with its rounds'
spread; a run without counts says they were not counted; and the switch's
perf counts, per request, under the names it was given. No server is
started and perf is not run.
"""

import contextlib
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import poll_offload as po  # noqa: E402

CELL = {"threads": 2, "test": "get", "clients": 50, "pipeline": 1, "size": 3, "keyspace": 10000}


def run_line(setting, rnd, epoll=None, futex=0.0, total=None):
    ln = dict(CELL, kind="run", setting=setting, round=rnd, rps=30000.0, main_cpu_us_per_req_with_spin=10.0,
              polls_per_req=0.05, idle_turns_us_per_req=1.0)
    if epoll is not None:
        ln.update(main_epoll_wait_per_req=epoll, main_epoll_pwait_per_req=0.01, main_futex_per_req=futex,
                  main_syscalls_per_req=total)
    return ln


def rows(lines):
    got = {}
    saved = po.bl.emit
    po.bl.emit = lambda d: got.__setitem__(d.get("id"), d) if d.get("finding") else None
    try:
        po.findings(lines, [CELL], False, 3)
    finally:
        po.bl.emit = saved
    return got


class Calls(unittest.TestCase):
    def test_counts_on_off_with_the_spread(self):
        lines = []
        for rnd, (on, off) in enumerate(((0.10, 2.0), (0.12, 2.2), (0.11, 2.1)), 1):
            lines.append(run_line("on", rnd, epoll=on, futex=1.0, total=on + 3))
            lines.append(run_line("off", rnd, epoll=off, futex=0.2, total=off + 3))
        fig = rows(lines)["F4.51"]["figure"]
        self.assertIn("main's (perf stat -t): epoll_wait calls 0.120 / 2.110 per GET "
                      "(runs 0.110–0.130 vs 2.010–2.210; on lower in every run)", fig)
        self.assertIn("futex calls 1.000 / 0.200 per GET (runs 1.000–1.000 vs 0.200–0.200; off lower in every run)",
                      fig)
        self.assertIn("all system calls 3.110 / 5.100 per GET", fig)
        self.assertTrue(fig.startswith("0.0500 / 0.0500 POLL jobs per GET; idle turns 1.000 / 1.000 µs per GET"))

    def test_a_run_without_counts_says_so(self):
        lines = [run_line(s, r) for r in (1, 2) for s in ("on", "off")]
        got = rows(lines)
        self.assertTrue(got["F4.51"]["figure"].endswith("; main's system calls not counted"))
        self.assertIn("F4.50", got)


class SwitchCounts(unittest.TestCase):
    def test_counts_per_request_under_their_names(self):
        bl = po.bl
        counters = iter([dict(cmds=1, main_cpu_s=0.0, spin_s=0.0, process_cpu_s=0.0, polls=0, during_write=0,
                              bytes_during_write=0, write_waits=0, write_wait_s=0.0),
                         dict(cmds=1002, main_cpu_s=0.01, spin_s=0.0, process_cpu_s=0.02, polls=10, during_write=0,
                              bytes_during_write=0, write_waits=0, write_wait_s=0.0)])

        @contextlib.contextmanager
        def fake_perf(target, events):
            self.assertEqual(target, ["-t", 1])
            got = {}
            yield got
            got["counts"] = [("a", 500.0), ("b", None)]

        saved = bl.switch_counters, bl.switch_drive, bl.perf_counting
        bl.switch_counters = lambda srv: next(counters)
        bl.switch_drive = lambda srv, cell, requests, seconds: ({"rps": 1.0}, 1000)
        bl.perf_counting = fake_perf
        try:
            srv = type("S", (), {"proc": type("P", (), {"pid": 1})()})()
            got = bl.switch_run(srv, CELL, requests=1000, count=(["epoll", "other"], ["-e", "x", "-e", "y"]))
        finally:
            bl.switch_counters, bl.switch_drive, bl.perf_counting = saved
        self.assertEqual(got["main_epoll_per_req"], 0.5)  # 1000 commands: the first INFO counts itself
        self.assertEqual(got["main_other_per_req"], 0.0)
        self.assertEqual(got["main_cpu_us_per_req"], 10.0)


class CountedRounds(unittest.TestCase):
    def test_counted_rounds_follow_the_timed_ones_and_hold_the_counts_alone(self):
        bl = po.bl
        calls = []

        def fake_run(srv, cell, requests=None, seconds=None, count=None):
            calls.append(count)
            got = {"rps": 1000.0, "requests": 100, "main_cpu_us_per_req": 5.0}
            if count:
                got.update(main_epoll_per_req=0.5)
            return got

        class Srv:
            @contextlib.contextmanager
            def turn(self):
                yield

        saved = bl.switch_run, bl.emit
        bl.switch_run, bl.emit = fake_run, lambda d: None
        try:
            lines = bl.switch_rounds({2: Srv()}, ["on", "off"], lambda s, x: None, [CELL], 3, 0.1, "t", False,
                                     count=(["epoll"], ["-e", "x"]))
        finally:
            bl.switch_run, bl.emit = saved
        timed = [ln for ln in lines if ln["kind"] == "run"]
        counted = [ln for ln in lines if ln["kind"] == "counted"]
        self.assertEqual(len(timed), 6)
        self.assertEqual(len(counted), 2 * bl.COUNTED_ROUNDS)
        self.assertEqual(calls[:8], [None] * 8)  # the sizing round and the timed rounds count nothing
        self.assertTrue(all(c for c in calls[8:]))
        self.assertTrue(all("main_epoll_per_req" not in ln for ln in timed))
        self.assertTrue(all("rps" not in ln and "main_cpu_us_per_req" not in ln and ln["main_epoll_per_req"] == 0.5
                            for ln in counted))
        self.assertEqual(bl.switch_runs(lines, CELL, "on", "main_cpu_us_per_req"), [5.0] * 3)


if __name__ == "__main__":
    unittest.main()
