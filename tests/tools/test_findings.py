"""test_findings.py — unit tests of tools/findings.py on fixture results.

Step 0 (measuring). Each test writes a small results tree (provenance.json
plus NAME.jsonl lines shaped like bench/*.py print them) into a temporary
directory and runs the generator on it. What must hold: provenance is in
every row; a ratio is computed from the runs of one run, never taken from
a summary line and never across runs; a row without conditions is
refused; rows sort by ID and the output is deterministic; QUICK runs do
not displace full ones; a stand-in is labelled.

Run: python3 -m unittest tests/tools/test_findings.py (tests/suites/55).
"""

import copy
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import benchlib  # noqa: E402
import findings  # noqa: E402

PROV = {
    "run_id": "RUN1", "date": "2026-11-30T10:00:00+00:00", "host": "fixture-host",
    "cpu_model": "Fixture CPU 9000", "cores": 2, "kernel": "6.1.0-fixture",
    "compiler": "cc (Fixture) 12.2.0",
    "git": {"commit": "abcdef123456", "dirty": False, "src_dirty": True},
    "quick": False,
    "soloist": {"binary": "build/soloist-server", "is": "soloist", "standin": False,
                "version": "0.1.0", "flags": "--port <free> --save ''", "io_threads": "1"},
    "peer": {"binary": "/usr/bin/redis-server", "version": "Redis server v=7.0.15"},
}

CELLS = [(t, d, p) for t in ("GET", "SET") for d in (3, 512) for p in (1, 16)]


def svr_lines(run_id="RUN1", a_rps=(110.0, 100.0, 130.0), b_rps=(100.0, 90.0, 95.0),
              a_is="soloist", b_run_id=None):
    """server_vs_redis lines: three runs per side per cell, alternated, and
    a summary line whose ratio is deliberately wrong (findings must not
    trust it)."""
    out = []
    for test, size, p in CELLS:
        base = {"bench": "server_vs_redis", "test": test, "value_size": size, "pipeline": p,
                "clients": 50, "keyspace": 100000, "cores": 2, "placement": "shared",
                "requests": 1000}
        for i in range(3):
            out.append(dict(base, kind="run", server="soloist", server_is=a_is, run=i + 1,
                            rps=a_rps[i], server_cpu_s=0.01, run_id=run_id))
            out.append(dict(base, kind="run", server="redis", server_is="redis-server",
                            run=i + 1, rps=b_rps[i], server_cpu_s=0.02,
                            run_id=b_run_id or run_id))
        out.append(dict(base, kind="cell", ratio=9.99, run_id=run_id))
    return out


def span_lines(run_id="RUN1"):
    out = []
    for p in (1, 4, 16, 64, 256):
        for i in range(3):
            for s, k in (("soloist", 1.0), ("redis", 0.5)):
                out.append({"bench": "pipeline_span", "kind": "run", "server": s,
                            "server_is": "soloist" if s == "soloist" else "redis-server",
                            "pipeline": p, "clients": 50, "cores": 2, "placement": "shared",
                            "rps": 1000.0 * p * k, "run": i + 1, "requests": 100,
                            "run_id": run_id})
    return out


def wc_lines(run_id="RUN1"):
    out = [{"bench": "write_cost", "kind": "summary", "transport": "none", "call": "getppid",
            "size": 0, "runs": 5, "ms": 51, "median_wall_ns_per_call": 95.0, "run_id": run_id}]
    for t in ("tcp", "unix"):
        for s in (16, 512, 16384):
            out.append({"bench": "write_cost", "kind": "summary", "transport": t, "size": s,
                        "runs": 5, "ms": 200, "median_wall_ns_per_call": 1234.0,
                        "median_cpu_ns_per_call": 1000.0, "min_wall_ns_per_call": 1200.0,
                        "max_wall_ns_per_call": 1300.0, "gbit_s": 0.1, "run_id": run_id})
    return out


def wt_lines(run_id="RUN1"):
    """write_timing lines: closed and open loop, the two settings
    alternated, immediate with half the latency and 10% more CPU."""
    out = []
    for loop, rate in (("closed", None), ("open", 50000.0)):
        for i in range(3):
            for st, k in (("before-sleep", 1.0), ("immediate", 0.5)):
                sc = 2.1 if loop == "closed" else (2.1 if st == "before-sleep" else 2.2)
                out.append({"bench": "write_timing", "kind": "run", "loop": loop, "rate": rate,
                            "setting": st, "run": i + 1, "clients": 50, "value_size": 3,
                            "keys": 10000, "cores": 2, "placement": "shared", "warmup_s": 1.0,
                            "duration_s": 5.0, "load_generator": "soloist-bench, 1 thread",
                            "rps": 1000.0, "latency_us": {"p50": 200 * k, "p99": 400 * k,
                                                          "p99.9": 600 * k},
                            "cpu_us_per_request": 3.0 if st == "before-sleep" else 3.3,
                            "syscalls_per_request": sc, "reads_per_request": 1.0,
                            "writes_per_request": 1.0, "polls_per_request": sc - 2.0,
                            "slip_p99_us": 5.0, "errors": 0, "run_id": run_id})
    return out


class FindingsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="findings-test-")
        self.results = os.path.join(self.tmp, "results")
        self.out = os.path.join(self.tmp, "FINDINGS.md")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def add_run(self, name, prov="default", **benches):
        """A results directory; prov=None writes no provenance.json."""
        d = os.path.join(self.results, name)
        os.makedirs(d)
        p = copy.deepcopy(PROV if prov == "default" else prov)
        if p is not None:
            p.setdefault("run_id", name)
            with open(os.path.join(d, "provenance.json"), "w") as f:
                json.dump(p, f)
        for bench, lines in benches.items():
            with open(os.path.join(d, bench + ".jsonl"), "w") as f:
                for ln in lines:
                    f.write(json.dumps(ln) + "\n")
        return d

    def generate(self, *extra):
        err = io.StringIO()
        with redirect_stderr(err):
            rc = findings.main(["--results", self.results, "--out", self.out] + list(extra))
        text = ""
        if os.path.exists(self.out):
            with open(self.out) as f:
                text = f.read()
        return rc, text, err.getvalue()

    def rows(self, text):
        """{id: [cells]} of the Rows table."""
        out = {}
        for line in text.splitlines():
            if line.startswith("| F"):
                cells = [c.strip() for c in line.strip("|").split(" | ")]
                if len(cells) == 5:
                    out[cells[0]] = cells
        return out

    # -- provenance ----------------------------------------------------

    def test_header_says_generated_and_by_what_command(self):
        self.add_run("r1", server_vs_redis=svr_lines())
        rc, text, _ = self.generate()
        self.assertEqual(rc, 0)
        self.assertIn("GENERATED FILE", text)
        self.assertIn("`make findings`", text)
        self.assertIn("`make findings-only`", text)

    def test_every_row_carries_provenance(self):
        self.add_run("r1", server_vs_redis=svr_lines(), pipeline_span=span_lines(),
                     write_cost=wc_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        self.assertGreaterEqual(len(rows), 9 + 7 + 3)
        for rid, cells in rows.items():
            cond = cells[3]
            for want in ("Fixture CPU 9000", "2 cores", "6.1.0-fixture", "cc (Fixture) 12.2.0",
                         "abcdef123456 (src dirty)", "config:"):
                self.assertIn(want, cond, "%s lacks %r" % (rid, want))
            self.assertIn("make findings BENCH=", cells[4], rid)
            self.assertIn(".jsonl", cells[4], rid)

    def test_serving_rows_say_client_and_server_share_the_cores(self):
        self.add_run("r1", server_vs_redis=svr_lines(), pipeline_span=span_lines())
        _, text, _ = self.generate()
        for rid, cells in self.rows(text).items():
            self.assertIn("client and server share 2 cores", cells[3], rid)
            self.assertIn("P=1 is client-bound", cells[2], rid)

    # -- ratios ---------------------------------------------------------

    def test_ratio_is_median_over_median_of_the_runs(self):
        # medians: soloist 110, redis 95 -> 1.157..., printed 1.16x; the
        # summary line's 9.99 must be ignored.
        self.add_run("r1", server_vs_redis=svr_lines())
        rc, text, _ = self.generate()
        self.assertEqual(rc, 0)
        rows = self.rows(text)
        self.assertIn("**1.16×**", rows["F0.1"][2])
        self.assertNotIn("9.99", text)
        self.assertIn("ABABAB", rows["F0.1"][3])
        self.assertIn("8 of 8 cells ≥ 1.0×", rows["F0.9"][2])
        self.assertIn("target met", rows["F0.9"][2])

    def test_figure_says_whether_the_run_ranges_separate(self):
        self.add_run("r1", server_vs_redis=svr_lines())
        _, text, _ = self.generate()
        self.assertIn("run ranges overlap", self.rows(text)["F0.1"][2])
        shutil.rmtree(self.results)
        self.add_run("r1", server_vs_redis=svr_lines(a_rps=(200.0, 210.0, 220.0)))
        _, text, _ = self.generate()
        self.assertIn("A faster in every run", self.rows(text)["F0.1"][2])

    def test_ratio_across_different_runs_is_refused(self):
        self.add_run("r1", server_vs_redis=svr_lines(b_run_id="OTHER-RUN"))
        rc, text, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("different runs", err)
        self.assertFalse(os.path.exists(self.out), "nothing may be written on refusal")

    def test_ratio_with_one_side_missing_is_refused(self):
        lines = [ln for ln in svr_lines() if ln.get("server") != "redis"]
        self.add_run("r1", server_vs_redis=lines)
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("both sides", err)

    def test_span_is_p256_over_p1(self):
        self.add_run("r1", pipeline_span=span_lines())
        rc, text, _ = self.generate()
        self.assertEqual(rc, 0)
        rows = self.rows(text)
        self.assertIn("**256.00×**", rows["F0.17"][2])
        self.assertIn("P=256 2.00×", rows["F0.19"][2])

    def test_phase_shares_give_poll_cpu_and_the_serial_share(self):
        lines = []
        for p in (1, 16):
            for i, ex in enumerate((0.10, 0.20, 0.30)):
                lines.append({"bench": "phase_shares", "kind": "run", "pipeline": p, "run": i + 1,
                              "server_is": "soloist", "keyspace": 100000, "cores": 2,
                              "placement": "shared", "busy_us_per_request": 5.0,
                              "turns_per_request": 0.05, "busy_wall_over_thread_cpu": 1.02,
                              "share_of_busy": {"poll_cpu": 0.15, "read": 0.3, "exec": ex,
                                                "write": 0.5 - ex, "other": 0.05},
                              "serial_share": ex + 0.05,
                              "share_of_total": {"poll_wait": 0.4}, "run_id": "RUN1"})
        self.add_run("r1", phase_shares=lines)
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        row = self.rows(text)["F0.21"]
        self.assertIn("poll CPU **15%**", row[2])
        self.assertIn("s = (exec + other) / busy = **0.25**", row[2])
        self.assertIn("poll wait (idle) 40%", row[2])
        self.assertLess(row[2].index("poll CPU"), row[2].index("read"))
        self.assertLess(row[2].index("read"), row[2].index("exec"))
        self.assertIn("P=16", row[3])
        self.assertIn("| F0.20 | P=1 | 15% | 30% | 20% | 30% | 5% | **0.25** | 40% |", text)

    def test_phase_shares_without_poll_cpu_are_refused(self):
        lines = [{"bench": "phase_shares", "kind": "run", "pipeline": 1, "run": i + 1,
                  "share_of_busy": {"read": 0.3, "exec": 0.2, "write": 0.5},
                  "share_of_total": {"poll": 0.4}, "busy_us_per_request": 5.0,
                  "run_id": "RUN1"} for i in range(3)]
        self.add_run("r1", phase_shares=lines)
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("poll into CPU and wait", err)

    def test_phase_shares_busy_counts_poll_cpu_once(self):
        import phase_shares
        delta = {"poll": 10000, "poll_cpu": 2000, "poll_wait": 8000, "read": 300, "exec": 200,
                 "write": 400, "other": 100}
        s_busy, s_total, busy, s = phase_shares.shares(delta)
        self.assertEqual(busy, 3000)
        self.assertAlmostEqual(s, 0.1)
        self.assertAlmostEqual(sum(s_busy.values()), 1.0, places=3)
        self.assertAlmostEqual(sum(s_total.values()), 1.0, places=3)
        self.assertAlmostEqual(s_busy["poll_cpu"], 2000 / 3000, places=4)

    def test_write_timing_rows_compare_the_two_settings(self):
        self.add_run("r1", write_timing=wt_lines())
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        rows = self.rows(text)
        for rid in ("F0.50", "F0.51", "F0.52", "F0.53", "F0.54", "F0.55", "F0.56"):
            self.assertIn(rid, rows)
        self.assertIn("p50 **200 µs**", rows["F0.50"][2])
        self.assertIn("p50 **100 µs**", rows["F0.51"][2])
        self.assertIn("p50 0.50×", rows["F0.52"][2])
        self.assertIn("immediate lower in every run", rows["F0.52"][2])
        self.assertIn("server CPU per request **1.10×**", rows["F0.52"][2])
        self.assertIn("open loop 2.100 → 2.200 system calls/request (**+0.100**", rows["F0.56"][2])
        self.assertIn("Poisson arrivals at 50,000 req/s", rows["F0.53"][3])
        self.assertIn("alternated ABABAB", rows["F0.53"][3])
        self.assertIn("soloist-bench and the server share the 2 cores", rows["F0.50"][2])
        self.assertIn("| F0.51 | closed | immediate | 1,000 | 100 | 200 | 300 | 3.30 | 2.100 |", text)

    def test_write_timing_with_one_setting_is_refused(self):
        self.add_run("r1", write_timing=[ln for ln in wt_lines() if ln["setting"] == "immediate"])
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("lacks a setting", err)

    # -- refusals -------------------------------------------------------

    def test_row_without_conditions_is_refused(self):
        prov = copy.deepcopy(PROV)
        del prov["kernel"]
        self.add_run("r1", prov=prov, write_cost=wc_lines())
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("no kernel", err)
        self.assertFalse(os.path.exists(self.out))

    def test_generic_row_without_config_is_refused(self):
        line = {"bench": "queue_spsc", "finding": True, "id": "F2.1",
                "claim": "ns per item", "figure": "4.3 ns", "run_id": "r1"}
        self.add_run("r1", queue_spsc=[line])
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("no config", err)
        line["config"] = {"slots": 4096, "items": "pointers"}
        shutil.rmtree(self.results)
        self.add_run("r1", queue_spsc=[line])
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        self.assertIn("slots=4096", self.rows(text)["F2.1"][3])

    def test_row_class_refuses_missing_conditions(self):
        row = findings.Row("F0.1", "claim", "1.0×", {"cpu": "x"}, "make findings", "f.jsonl")
        with self.assertRaises(findings.Refused):
            row.validate()

    def test_dir_without_provenance_is_not_a_result(self):
        self.add_run("nop", prov=None, write_cost=wc_lines())
        rc, _, err = self.generate()
        self.assertNotEqual(rc, 0)
        self.assertIn("no results", err)

    # -- order, selection, labels ----------------------------------------

    def test_rows_sort_numerically_and_output_is_deterministic(self):
        self.add_run("r1", server_vs_redis=svr_lines(), write_cost=wc_lines(),
                     pipeline_span=span_lines())
        _, first, _ = self.generate()
        ids = [ln.split(" | ")[0][2:] for ln in first.splitlines()
               if ln.startswith("| F") and ln.count(" | ") == 4]
        self.assertEqual(ids, sorted(ids, key=findings.id_key))
        self.assertLess(ids.index("F0.2"), ids.index("F0.10"))
        _, second, _ = self.generate()
        self.assertEqual(first, second)
        rc, _, _ = self.generate("--check")
        self.assertEqual(rc, 0)

    def test_full_run_preferred_over_newer_quick_run(self):
        self.add_run("old-full", write_cost=wc_lines("old-full"))
        quick = dict(copy.deepcopy(PROV), quick=True, date="2026-12-01T00:00:00+00:00")
        self.add_run("new-quick", prov=quick, write_cost=wc_lines("new-quick"))
        _, text, _ = self.generate()
        self.assertIn("old-full/write_cost.jsonl", text)
        _, text, _ = self.generate("--include-quick")
        self.assertIn("new-quick/write_cost.jsonl", text)
        self.assertIn("QUICK=1 development run", text)

    def test_standin_is_labelled(self):
        prov = copy.deepcopy(PROV)
        prov["soloist"].update(standin=True, **{"is": "redis-server"})
        self.add_run("r1", prov=prov, server_vs_redis=svr_lines(a_is="redis-server"))
        _, text, _ = self.generate()
        row = self.rows(text)["F0.1"]
        self.assertIn("STAND-IN", row[2])
        self.assertIn("STAND-IN", row[3])

    def test_loadgen_sanity_row_when_present(self):
        line = {"bench": "loadgen_sanity", "summary": True, "ratio": 0.97,
                "clients": 50, "pipeline": 1, "run_id": "r1"}
        self.add_run("r1", loadgen_sanity=[line])
        rc, text, err = self.generate()
        self.assertEqual(rc, 0, err)
        self.assertIn("**0.97×**", self.rows(text)["F0.22"][2])

    def test_side_by_side_table(self):
        self.add_run("r1", server_vs_redis=svr_lines())
        _, text, _ = self.generate()
        self.assertIn("## Side by side: soloist / redis-server 7.0", text)
        self.assertIn("| F0.1 | GET | 3 B | 1 | 110 | 95 | 1.16× |", text)


class BenchlibTest(unittest.TestCase):
    """The pieces of bench/benchlib.py that turn redis-benchmark's output
    into JSON; no server needed."""

    def test_parse_csv(self):
        text = ('"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",'
                '"p95_latency_ms","p99_latency_ms","max_latency_ms"\n'
                '"GET","59206.63","0.565","0.208","0.543","0.815","1.055","3.319"\n')
        row = benchlib.parse_csv(text)
        self.assertEqual(row["csv_test"], "GET")
        self.assertEqual(row["rps"], 59206.63)
        self.assertEqual(row["p99_latency_ms"], 1.055)

    def test_parse_csv_without_a_row(self):
        self.assertIsNone(benchlib.parse_csv("ERROR: connection refused\n"))

    def test_calibrated_requests_are_whole_rounds(self):
        n = benchlib.calibrate_requests(100000.0, 2.5, 50, 16)
        self.assertEqual(n % (50 * 16), 0)
        self.assertGreaterEqual(n, 250000)
        self.assertLess(n, 250000 + 800)
        self.assertEqual(benchlib.calibrate_requests(1.0, 0.1, 50, 1), 2000)


if __name__ == "__main__":
    unittest.main()
