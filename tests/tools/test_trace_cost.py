"""Tests of what the trace points cost, as measured and as reported: the
build switch (src/trace.h's TRACE evaluates none of its arguments while
recording is off, and none at all under -DSOLOIST_NO_TRACE, yet records
when on), the runner's entry for bench/trace_cost.py, and
tools/findings.py's rows F4.70-F4.77 from run lines made up here: "within
noise" when the two builds' runs overlap, "the runs separate" when they do
not, the cost of recording with the events counted and drops named. No
server is started.
"""

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import findings  # noqa: E402
import findings_refs  # noqa: E402

PROV = {
    "run_id": "RUN1", "date": "2026-12-05T10:00:00+00:00", "host": "fixture-host",
    "cpu_model": "Fixture CPU 9000", "cores": 2, "kernel": "6.1.0-fixture",
    "compiler": "cc (Fixture) 12.2.0",
    "git": {"commit": "abcdef123456", "dirty": False, "src_dirty": False},
    "quick": False,
    "soloist": {"binary": "build/soloist-server", "is": "soloist", "standin": False,
                "version": "0.1.0", "flags": "--port <free> --save ''", "io_threads": "1"},
}
CELLS = [(1, 1), (1, 16), (4, 1), (4, 16)]


def tc_lines(us, run_id="RUN1", dropped=0, cells=CELLS):
    """bench/trace_cost.py's lines: for each cell and setting, one run per
    round with main's CPU per request us[setting][round], the order turned
    each round as the benchmark turns it."""
    base = {"bench": "trace_cost", "clients": 50, "keys": 10000, "cores": 2, "quick": False,
            "server": "soloist", "server_is": "soloist", "test": "GET", "value_size": 3,
            "warmup_s": 0.5, "duration_s": 2.0, "arrival": "poisson", "ring_events": 1 << 21,
            "notrace_binary": "build/notrace/soloist-server", "placement": "shared", "run_id": run_id}
    out = []
    settings = ["none", "off", "on"]
    for n, p in cells:
        cfg = dict(base, io_threads=n, always_active=n > 1, pipeline=p)
        out.append(dict(cfg, kind="rate", rate=10000))
        for rnd in range(len(us["none"])):
            for s in settings[rnd % 3:] + settings[:rnd % 3]:
                ln = dict(cfg, kind="run", setting=s, round=rnd + 1, rate=10000, rps=9990.0, requests=25000,
                          server_commands=25000, main_us_per_request=us[s][rnd],
                          main_work_us_per_request=us[s][rnd] * 0.8, main_clock="INFO used_cpu_*_main_thread",
                          others_cpu_s=1.0, wall_s=2.5, errors=0)
                if s == "on":
                    ln.update(trace_events=225000, trace_dropped=dropped, trace_no_ring=0, events_per_request=9.0)
                out.append(ln)
    return out


class FindingsRowsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="trace-cost-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def rows(self, lines, name="RUN1"):
        d = os.path.join(self.tmp, "results", name)
        os.makedirs(d)
        with open(os.path.join(d, "provenance.json"), "w") as f:
            json.dump(dict(copy.deepcopy(PROV), run_id=name), f)
        with open(os.path.join(d, "trace_cost.jsonl"), "w") as f:
            f.writelines(json.dumps(ln) + "\n" for ln in lines)
        return findings.rows_of_run(d, "trace_cost")

    def test_overlapping_runs_read_within_noise(self):
        rows = self.rows(tc_lines({"none": [2.0, 2.2, 2.4], "off": [2.1, 2.3, 2.5], "on": [3.0, 3.1, 3.2]}))
        self.assertEqual(sorted(rows, key=findings.id_key), ["F4.%d" % i for i in range(70, 78)])
        fig = rows["F4.70"]
        self.assertIn("off / no trace points **1.05×**", fig)
        self.assertIn("runs 2.10–2.50 µs", fig)
        self.assertIn("run ranges overlap) — within noise", fig)
        self.assertNotIn("separate", fig)
        self.assertIsNone(findings_refs.evaluate("even", fig))
        self.assertIsNotNone(findings_refs.evaluate("runs apart", fig))

    def test_separate_runs_read_separate(self):
        rows = self.rows(tc_lines({"none": [2.0, 2.1, 2.2], "off": [3.0, 3.1, 3.2], "on": [3.0, 3.1, 3.2]}))
        fig = rows["F4.71"]
        self.assertIn("no trace points lower in every run) — the runs separate", fig)
        self.assertNotIn("within noise", fig)
        self.assertIsNone(findings_refs.evaluate("runs apart", fig))
        self.assertIsNotNone(findings_refs.evaluate("even", fig))
        # io-threads 4 also shows main's work without its idle spin.
        self.assertIn("without main's idle spin off 2.48 µs", rows["F4.72"])

    def test_recording_on_states_its_cost(self):
        rows = self.rows(tc_lines({"none": [2.0, 2.1, 2.2], "off": [2.0, 2.1, 2.2], "on": [3.0, 3.1, 3.2]}))
        fig = rows["F4.74"]
        self.assertIn("on / off **1.48×**: +1.00 µs per request on main", fig)
        self.assertIn("off lower in every run) — the runs separate", fig)
        self.assertIn("9.0 events recorded per request", fig)
        self.assertIn("none dropped", fig)
        self.assertIn("other processes used 20% of the 2 cores", fig)
        dropped = self.rows(tc_lines({"none": [2.0, 2.1], "off": [2.0, 2.1], "on": [3.0, 3.1]}, dropped=5), "RUN2")
        self.assertIn("10 DROPPED", dropped["F4.74"])
        even = self.rows(tc_lines({"none": [2.0, 2.1], "off": [2.1, 2.3], "on": [2.0, 2.2]}), "RUN3")
        self.assertIn("run ranges overlap) — within noise: these runs cannot tell the cost from zero", even["F4.75"])

    def test_refuses_mixed_runs_and_a_missing_server(self):
        lines = tc_lines({"none": [2.0, 2.1], "off": [2.0, 2.1], "on": [3.0, 3.1]})
        lines[-1]["run_id"] = "RUN9"
        with self.assertRaises(findings.Refused):
            self.rows(lines)
        lines = [ln for ln in tc_lines({"none": [2.0, 2.1], "off": [2.0, 2.1], "on": [3.0, 3.1]})
                 if ln.get("setting") != "none"]
        with self.assertRaises(findings.Refused):
            self.rows(lines, "RUN4")

    def test_unavailable_says_why(self):
        rows = self.rows([{"bench": "trace_cost", "kind": "unavailable", "run_id": "RUN1",
                           "why": "build/notrace/soloist-server not built"}])
        self.assertEqual(list(rows), ["F4.70"])
        self.assertIn("**not measured**: build/notrace/soloist-server not built", rows["F4.70"])


class RunnerTest(unittest.TestCase):
    def test_runner_knows_it_and_bounds_it(self):
        import argparse
        import run
        self.assertIn("trace_cost", run.ALL)
        for quick, bound in ((True, 90), (False, 330)):
            a = argparse.Namespace(quick=quick, soloist_bench_bin=sys.executable, notrace_bin=sys.executable)
            argv, env, limit = run.command_for("trace_cost", a)
            self.assertTrue(os.access(argv[0], os.X_OK), argv[0])
            self.assertEqual(env["SOLOIST_NOTRACE_BIN"], sys.executable)
            self.assertLessEqual(limit, bound)
        a = argparse.Namespace(quick=True, soloist_bench_bin=sys.executable, notrace_bin="/nonexistent/server")
        argv, why, _ = run.command_for("trace_cost", a)
        self.assertIsNone(argv)
        self.assertIn("make VARIANT=notrace server", why)


# A trace point whose arguments count their evaluations, built against
# src/trace.h with a stand-in trace_emit; it prints what it saw.
PROBE = r"""
#include <stdio.h>
#include "trace.h"
trace_switch trace_recording;
static int emitted, evaluated;
static uint64_t bump(void) { return (uint64_t)++evaluated; }
void trace_emit(int tid, trace_type type, uint64_t a, uint64_t b, uint64_t c) {
    (void)tid, (void)type, (void)a, (void)b, (void)c;
    emitted++;
}
int main(void) {
    TRACE(bump(), TRACE_CMD_BEGIN, bump(), bump(), bump());
    int off = evaluated, off_emitted = emitted;
    atomic_store(&trace_recording.on, true);
    TRACE(bump(), TRACE_CMD_BEGIN, bump(), bump(), bump());
    printf("%d %d %d %d\n", off, off_emitted, evaluated - off, emitted - off_emitted);
    return 0;
}
"""


class BuildSwitchTest(unittest.TestCase):
    def probe(self, *flags):
        d = tempfile.mkdtemp(prefix="trace-switch-")
        self.addCleanup(shutil.rmtree, d, True)
        src, exe = os.path.join(d, "probe.c"), os.path.join(d, "probe")
        with open(src, "w") as f:
            f.write(PROBE)
        cc = subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Werror",
                             "-I", os.path.join(ROOT, "src")] + list(flags) + [src, "-o", exe],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(cc.returncode, 0, cc.stdout)
        return subprocess.run([exe], stdout=subprocess.PIPE, text=True, check=True).stdout.split()

    @unittest.skipUnless(shutil.which("cc"), "no C compiler")
    def test_off_evaluates_nothing_on_records(self):
        # Off: no argument evaluated, nothing emitted; on: all four, once.
        self.assertEqual(self.probe(), ["0", "0", "4", "1"])

    @unittest.skipUnless(shutil.which("cc"), "no C compiler")
    def test_without_trace_points_nothing_ever(self):
        self.assertEqual(self.probe("-DSOLOIST_NO_TRACE"), ["0", "0", "0", "0"])


if __name__ == "__main__":
    unittest.main()
