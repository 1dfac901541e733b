"""Tests of the types' benchmarks' own logic: bench/redis_defaults.py (the
--csv lines read as they come, the rows per depth, the targets, a test a
server refuses) and bench/types_memory.py (the rows per cell and the
target), from run lines made up here, and both through tools/findings.py,
which must accept their rows' IDs and sort them after step 8's. No server
is started.
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
import findings  # noqa: E402
import redis_defaults as rd  # noqa: E402
import types_memory as tm  # noqa: E402

PROV = {
    "run_id": "RUN1", "date": "2026-12-04T10:00:00+00:00", "host": "fixture-host",
    "cpu_model": "Fixture CPU 9000", "cores": 2, "kernel": "6.1.0-fixture",
    "compiler": "cc (Fixture) 12.2.0",
    "git": {"commit": "abcdef123456", "dirty": False, "src_dirty": False},
    "quick": False,
    "soloist": {"binary": "build/soloist-server", "is": "soloist", "standin": False,
                "version": "0.1.0", "flags": "--port <free> --save ''", "io_threads": "1"},
    "peer": {"binary": "/usr/bin/redis-server", "version": "Redis server v=7.0.15"},
}
CFG = {"clients": 50, "rounds": 3}
CMD = "make findings BENCH=redis_defaults"


def rd_lines(sol_rps=None, red_rps=100000.0, skip=(), cpu=(1000.0, 1200.0)):
    """Three rounds of run lines at P=1 and P=16; sol_rps(test, depth,
    round) gives soloist's rate (redis-server's is red_rps); the tests in
    skip have none. cpu: soloist's and redis-server's ns per request."""
    sol_rps = sol_rps or (lambda t, d, r: red_rps)
    out = []
    for rnd in (1, 2, 3):
        for depth in (1, 16):
            for name in rd.NAMES:
                if name in skip:
                    continue
                for server, rps, ns in (("soloist", sol_rps(name, depth, rnd), cpu[0]),
                                        ("redis", red_rps, cpu[1])):
                    out.append({"kind": "run", "bench": "redis_defaults", "server": server, "round": rnd,
                                "pipeline": depth, "test": name, "rps": rps, "cpu_ns_per_req": ns,
                                "requests": 1000, "run_id": "RUN1"})
    return out


def by_id(rows):
    return {r["id"]: r for r in rows}


class RedisDefaultsTest(unittest.TestCase):
    def test_csv_lines_are_read_with_their_names_whole(self):
        self.assertIsNone(rd.parse_csv_line('"test","rps","avg_latency_ms","min_latency_ms"\n'))
        name, f = rd.parse_csv_line('"LRANGE_100 (first 100 elements)","32626.43","0.824","0.232","0.655",'
                                    '"1.711","3.295","7.727"\n')
        self.assertEqual(name, "LRANGE_100 (first 100 elements)")
        self.assertEqual(f["rps"], 32626.43)
        self.assertEqual(f["p99_latency_ms"], 3.295)
        self.assertEqual(rd.label(name), "LRANGE_100")
        self.assertEqual(rd.label(rd.LRANGE_FILL), "LPUSH (LRANGE fill)")
        self.assertEqual(rd.label("MSET (10 keys)"), "MSET")

    def test_default_list_is_redis_benchmarks_twenty_in_order(self):
        self.assertEqual(len(rd.NAMES), 20)
        self.assertEqual(rd.NAMES[:3], ["PING_INLINE", "PING_MBULK", "SET"])
        self.assertEqual(rd.NAMES[-1], "MSET (10 keys)")
        self.assertIn(rd.LRANGE_FILL, rd.NAMES)

    def test_a_pass_runs_test_by_test_with_the_lranges_after_their_fill(self):
        plan = rd.units({}, whole_list=False)
        self.assertEqual(len(plan), 16)
        self.assertEqual(plan[0], (["ping_inline"], ["PING_INLINE"]))
        self.assertEqual(plan[14], (["lrange_100", "lrange_300", "lrange_500", "lrange_600"],
                                    [rd.LRANGE_FILL] + [n for n in rd.NAMES if n.startswith("LRANGE_")]))
        self.assertEqual(plan[15], (["mset"], ["MSET (10 keys)"]))
        self.assertEqual(rd.units({}, whole_list=True), [(None, rd.NAMES)])

    def test_a_pass_leaves_out_the_refused_tests(self):
        refused = {n: "soloist: ERR" for n in rd.NAMES if "LPUSH" in n or "LRANGE" in n or n == "RPUSH"}
        plan = rd.units(refused, whole_list=False)
        self.assertEqual([w for ws, _ in plan for w in ws],
                         ["ping_inline", "ping_mbulk", "set", "get", "incr", "lpop", "rpop", "sadd", "hset", "spop",
                          "zadd", "zpopmin", "mset"])
        (select, names), = rd.units(refused, whole_list=True)
        self.assertEqual(select, [w for ws, _ in plan for w in ws])
        self.assertEqual(len(names), 13)

    def test_rows_per_depth_ratios_medians_and_targets(self):
        # P=1: LPOP at 0.90x in every round, the rest 1.0x; P=16: 1.5x, one round 1.2x.
        def sol(t, d, r):
            if d == 1:
                return 90000.0 if t == "LPOP" else 100000.0
            return 120000.0 if r == 2 else 150000.0
        rows = by_id(rd.rows(rd_lines(sol), {}, CFG, CMD))
        self.assertEqual(sorted(rows), ["F10.%d" % i for i in range(1, 7)])
        self.assertIn("lowest **0.90×** (LPOP)", rows["F10.1"]["figure"])
        self.assertIn("PING_INLINE 1.00× (1.00–1.00)", rows["F10.1"]["figure"])
        self.assertNotIn("not measured", rows["F10.1"]["figure"])
        self.assertIn("geometric mean **1.50×** (the rounds' own: 1.20–1.50)", rows["F10.2"]["figure"])
        self.assertIn("LRANGE_600 1.50× (1.20–1.50)", rows["F10.2"]["figure"])
        self.assertEqual(rows["F10.3"]["figure"], "not met (1 of 20 tests under 0.95×: LPOP 0.90×)")
        self.assertEqual(rows["F10.4"]["figure"], "met (geometric mean 1.50× over 20 tests)")
        self.assertTrue(rows["F10.5"]["figure"].startswith("geometric mean **1.20×**"))
        self.assertIn("SET 1.20× (1.20–1.20; 1.00 vs 1.20 µs)", rows["F10.5"]["figure"])
        self.assertEqual(rows["F10.1"]["config"]["pipeline"], 1)
        self.assertEqual(rows["F10.2"]["config"]["pipeline"], 16)

    def test_rows_beside_valkey_only_when_it_was_measured(self):
        # Valkey at 80 % of redis-server's rate, its main thread at 1500 ns a request
        lines = rd_lines(lambda t, d, r: 100000.0)
        alone = by_id(rd.rows(lines, {}, CFG, CMD))
        self.assertEqual(sorted(alone), ["F10.%d" % i for i in range(1, 7)])
        vk = [dict(ln, server="valkey", rps=80000.0, cpu_ns_per_req=1500.0) for ln in lines if ln["server"] == "redis"]
        rows = by_id(rd.rows(lines + vk, {}, CFG, CMD))
        self.assertEqual(sorted(rows, key=lambda r: int(r.split(".")[1])), ["F10.%d" % i for i in range(1, 10)])
        for rid in ["F10.%d" % i for i in range(1, 7)]:  # the rows against redis-server unchanged
            self.assertEqual(rows[rid]["figure"], alone[rid]["figure"], rid)
        self.assertIn("soloist io-threads 1 / Valkey rps", rows["F10.7"]["claim"])
        self.assertIn("lowest **1.25×** (PING_INLINE)", rows["F10.7"]["figure"])
        self.assertIn("geometric mean **1.25×** (the rounds' own: 1.25–1.25)", rows["F10.8"]["figure"])
        self.assertEqual(rows["F10.8"]["config"]["pipeline"], 16)
        self.assertIn("Valkey over soloist", rows["F10.9"]["claim"])
        self.assertIn("SET 1.50× (1.50–1.50; 1.00 vs 1.50 µs)", rows["F10.9"]["figure"])

    def test_batch_off_row_at_p16_only_when_it_was_measured(self):
        # the batch-off soloist runs the P=16 passes only, its main thread
        # at 1100 ns a request against soloist's 1000: F10.30, and no row
        # against redis-server or Valkey changes
        lines = rd_lines(lambda t, d, r: 100000.0)
        alone = by_id(rd.rows(lines, {}, CFG, CMD))
        off = [dict(ln, server=rd.BATCH_OFF, cpu_ns_per_req=1100.0) for ln in lines
               if ln["server"] == "soloist" and ln["pipeline"] == 16]
        rows = by_id(rd.rows(lines + off, {}, CFG, CMD))
        self.assertEqual(sorted(rows, key=lambda r: int(r.split(".")[1])),
                         ["F10.%d" % i for i in range(1, 7)] + ["F10.30"])
        for rid in alone:
            self.assertEqual(rows[rid]["figure"], alone[rid]["figure"], rid)
        self.assertIn("soloist with the batch off (prefetch-batch-max-size 0) over soloist", rows["F10.30"]["claim"])
        self.assertIn("MSET 1.10× (1.10–1.10; 1.00 vs 1.10 µs)", rows["F10.30"]["figure"])
        self.assertEqual(rows["F10.30"]["config"]["pipeline"], 16)

    def test_target_at_p1_met_when_every_test_reaches_095(self):
        rows = by_id(rd.rows(rd_lines(lambda t, d, r: 96000.0), {}, CFG, CMD))
        self.assertEqual(rows["F10.3"]["figure"], "met (lowest 0.96× (PING_INLINE))")
        self.assertTrue(rows["F10.4"]["figure"].startswith("not met (geometric mean 0.96×"))

    def test_refused_tests_are_named_with_the_reply_and_fail_the_targets(self):
        lists = [n for n in rd.NAMES if "LPUSH" in n or "LRANGE" in n]
        why = "soloist: ERR unknown command 'LPUSH'"
        reasons = {n: why for n in lists}
        rows = by_id(rd.rows(rd_lines(lambda t, d, r: 200000.0, skip=lists), reasons, CFG, CMD))
        self.assertIn("not measured: LPUSH, LPUSH (LRANGE fill), LRANGE_100, LRANGE_300, LRANGE_500, "
                      "LRANGE_600 (%s)" % why, rows["F10.1"]["figure"])
        self.assertIn("not measured", rows["F10.6"]["figure"])
        self.assertEqual(rows["F10.3"]["figure"], "not met (lowest 2.00× (PING_INLINE); 6 of 20 tests not measured)")
        self.assertEqual(rows["F10.4"]["figure"], "not met (geometric mean 2.00× over 14 tests; 6 of 20 tests not "
                                                  "measured)")

    def test_no_test_measured_at_a_depth(self):
        runs = [ln for ln in rd_lines() if ln["pipeline"] == 1]
        why = "soloist: the server exited (status -11)"
        rows = by_id(rd.rows(runs, {n: why for n in rd.NAMES}, CFG, CMD))
        self.assertEqual(rows["F10.2"]["figure"], "no test measured; not measured: %s (%s)"
                         % (", ".join(rd.label(n) for n in rd.NAMES), why))
        self.assertEqual(rows["F10.4"]["figure"], "not met (no test measured; 20 of 20 tests not measured)")
        self.assertNotIn("F10.6", rows)

    def test_a_test_missing_from_every_run_says_why(self):
        rows = by_id(rd.rows(rd_lines(skip=["MSET (10 keys)"]), {"MSET (10 keys)": "redis: exited 1"}, CFG, CMD))
        self.assertIn("not measured: MSET (redis: exited 1)", rows["F10.2"]["figure"])


def tm_lines(sol_bpe, red_bpe=20.0, sizes=(10, 100, 1000000), refuse=()):
    """Two runs of every cell: soloist's bytes per element sol_bpe(type,
    elem, n), redis-server's red_bpe; the types in refuse are refused by
    soloist."""
    out = []
    for run in (1, 2):
        for typ in tm.TYPES:
            for elem in tm.ELEMS:
                for n in sizes:
                    keys = tm.keys_for(n, 10000)
                    base = {"bench": "types_memory", "type": typ, "elem": elem, "n": n, "keys": keys, "run": run,
                            "run_id": "RUN1"}
                    if typ in refuse:
                        out.append(dict(base, kind="refused", server="soloist",
                                        why="soloist: ERR unknown command '%s'" % tm.VERB[typ]))
                    else:
                        out.append(dict(base, kind="run", server="soloist", bytes_per_element=sol_bpe(typ, elem, n),
                                        encoding="listpack"))
                    out.append(dict(base, kind="run", server="redis", bytes_per_element=red_bpe,
                                    encoding="quicklist"))
    return out


class TypesMemoryTest(unittest.TestCase):
    SIZES = [10, 100, 1000000]

    def test_a_row_per_cell_and_the_target_met(self):
        rows = tm.rows(tm_lines(lambda t, e, n: 10.0 if n == 10 else 19.0), self.SIZES, "make x", {})
        self.assertEqual([r["id"] for r in rows], ["F10.%d" % i for i in range(10, 29)])
        first = rows[0]
        self.assertIn('list of 10 short strings ("m:i") in each of 10,000 keys', first["claim"])
        self.assertEqual(first["figure"], "soloist **10.0 B** (listpack; 2 runs, each the same), redis-server "
                                          "20.0 B (quicklist; 2 runs, each the same): **0.50×**")
        self.assertIn("1,000,000 integers in each of 1 key,", rows[5]["claim"])
        self.assertIn("field-value pair", rows[6]["claim"])
        self.assertEqual(rows[-1]["figure"], 'met (highest cell 0.950× (list of 100 short strings ("m:i")))')

    def test_valkey_beside_each_cell_and_its_own_row(self):
        lines = tm_lines(lambda t, e, n: 10.0)
        for ln in [ln for ln in lines if ln["server"] == "redis"]:
            lines.append(dict(ln, server="valkey", bytes_per_element=5.0 if ln["n"] == 1000000 else 20.0))
        rows = tm.rows(lines, self.SIZES, "x", {})
        self.assertEqual(rows[-1]["id"], "F10.29")
        self.assertIn("; Valkey 20.0 B (quicklist; 2 runs, each the same): soloist / Valkey 0.50×", rows[0]["figure"])
        self.assertIn("then Valkey's bytes per element", rows[0]["claim"])
        self.assertTrue(rows[-1]["figure"].startswith("highest cell **2.00×** (list of 1,000,000 short strings"))
        self.assertIn("6 of 18 cells above 1.0×", rows[-1]["figure"])
        self.assertTrue(rows[-2]["figure"].startswith("met"))  # F10.28 still reads redis-server alone

    def test_rss_growth_beside_used_memory(self):
        lines = tm_lines(lambda t, e, n: 10.0)
        for ln in lines:
            if ln["kind"] == "run":
                ln["rss_per_element"] = 30.0 if ln["server"] == "soloist" else 24.0
        rows = tm.rows(lines, self.SIZES, "x", {})
        self.assertTrue(rows[0]["figure"].endswith("; resident memory (RSS) growth per element 30.0 vs 24.0 B "
                                                   "(runs 30.0 vs 24.0): 1.25×"), rows[0]["figure"])
        self.assertEqual(rows[-1]["figure"], 'met (highest cell 0.500× (list of 10 short strings ("m:i")); by RSS '
                                             'growth the highest cell 1.25× (list of 10 short strings ("m:i")))')

    def test_target_not_met_names_the_cells_above(self):
        rows = tm.rows(tm_lines(lambda t, e, n: 30.0 if (t, n) == ("hash", 100) else 10.0), self.SIZES, "x", {})
        fig = rows[-1]["figure"]
        self.assertTrue(fig.startswith("not met (highest cell 1.500× (hash of 100 "), fig)
        self.assertIn("2 of 18 cells above 1.0×", fig)

    def test_a_cell_over_by_less_than_its_printed_precision_is_not_over(self):
        rows = tm.rows(tm_lines(lambda t, e, n: 20.09 if n == 100 else 20.0), self.SIZES, "x", {})
        self.assertEqual(rows[-1]["figure"], 'met (highest cell 1.004× (list of 100 short strings ("m:i")))')
        rows = tm.rows(tm_lines(lambda t, e, n: 20.1 if n == 100 else 20.0), self.SIZES, "x", {})
        self.assertTrue(rows[-1]["figure"].startswith("not met (highest cell 1.005× "), rows[-1]["figure"])

    def test_refused_cells_say_not_measured_with_the_reply(self):
        rows = tm.rows(tm_lines(lambda t, e, n: 10.0, refuse=("list", "set")), self.SIZES, "x", {})
        self.assertEqual(rows[0]["figure"], "not measured (soloist: ERR unknown command 'RPUSH'); "
                                            "redis-server 20.0 B (quicklist)")
        self.assertEqual(rows[6]["figure"][:12], "soloist **10")
        self.assertIn("not met (highest cell 0.500× (hash of 10 ", rows[-1]["figure"])
        self.assertIn("12 of 18 cells not measured", rows[-1]["figure"])

    def test_runs_text(self):
        self.assertEqual(tm.runs_text([3.0]), "one run")
        self.assertEqual(tm.runs_text([3.0, 3.0]), "2 runs, each the same")
        self.assertEqual(tm.runs_text([3.0, 3.25]), "runs 3.0–3.2")
        self.assertEqual(tm.runs_text([3.0, 3.02]), "2 runs, each the same to 0.1 B")


class RunnerTest(unittest.TestCase):
    def test_runner_knows_both_and_bounds_them(self):
        import argparse
        import run
        for quick, bound in ((True, 150), (False, 600)):
            a = argparse.Namespace(quick=quick, types_load_bin=sys.executable)
            for name in ("redis_defaults", "types_memory"):
                self.assertIn(name, run.ALL)
                argv, env, limit = run.command_for(name, a)
                self.assertTrue(os.access(argv[0], os.X_OK), argv[0])
                self.assertLessEqual(limit, bound)
            self.assertEqual(run.command_for("types_memory", a)[1], {"TYPES_LOAD_BIN": sys.executable})
        a = argparse.Namespace(quick=True, types_load_bin="/nonexistent/types_load")
        argv, why, _ = run.command_for("types_memory", a)
        self.assertIsNone(argv)
        self.assertIn("not built", why)


class ThroughFindingsTest(unittest.TestCase):
    """Both benchmarks' rows become FINDINGS.md rows, sorted after F8's."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="types-bench-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_rows_accepted_and_sorted(self):
        d = os.path.join(self.tmp, "results", "RUN1")
        os.makedirs(d)
        with open(os.path.join(d, "provenance.json"), "w") as f:
            json.dump(copy.deepcopy(PROV), f)
        rdl = rd_lines() + [dict(r, run_id="RUN1") for r in rd.rows(rd_lines(), {}, CFG, CMD)]
        tml = tm_lines(lambda t, e, n: 10.0)
        tml += [dict(r, run_id="RUN1") for r in tm.rows(tml, TypesMemoryTest.SIZES, "make y", {"runs": 2})]
        extra = {"finding": True, "id": "F8.54", "claim": "c", "figure": "f", "config": {"a": 1}, "run_id": "RUN1"}
        for bench, lines in (("redis_defaults", rdl), ("types_memory", tml), ("zset_ranges", [extra])):
            with open(os.path.join(d, bench + ".jsonl"), "w") as f:
                f.writelines(json.dumps(ln) + "\n" for ln in lines)
        out = os.path.join(self.tmp, "FINDINGS.md")
        err = io.StringIO()
        with redirect_stderr(err):
            rc = findings.main(["--results", os.path.join(self.tmp, "results"), "--out", out])
        self.assertEqual(rc, 0, err.getvalue())
        with open(out) as f:
            ids = [ln.split(" | ")[0][2:] for ln in f if ln.startswith("| F")]
        want = ["F8.54"] + ["F10.%d" % i for i in range(1, 7)] + ["F10.%d" % i for i in range(10, 29)]
        self.assertEqual(ids, want)


if __name__ == "__main__":
    unittest.main()
