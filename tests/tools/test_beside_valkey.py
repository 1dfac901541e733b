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
import tempfile
import unittest
from contextlib import redirect_stdout
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import beside_valkey as bv  # noqa: E402
import pipeline_model as pm  # noqa: E402


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
            "io_threads": n, "run": run, "rps": 1000 if server == "soloist" or n == 1 else 500,
            "main_us_per_request": main_us, "main_user_us_per_request": main_us / 2,
            "main_sys_us_per_request": main_us / 2, "main_spin_us_per_request": 0.5 if server == "soloist" else None, "io_us_per_request": 1.0 if n > 1 else 0}


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
        self.assertIn("t2 3.00 vs 4.00 µs (0.75×; run ranges overlap; Valkey served 50 % of the offered rate)",
                      rows["F4.90"]["figure"])
        self.assertEqual(rows["F4.99"]["figure"], "met; at io-threads 1, where main does everything: median lower in "
                                                  "1 of 1 cells (0.84–0.84×), lower in every run in 1 of them")

    def test_a_cell_above_valkey_inside_the_runs_spread_says_so(self):
        seen = []
        for run, (s, v) in enumerate(((17.4, 17.3), (17.7, 17.3), (16.7, 21.5)), 1):
            a, b = cpu("soloist", 1, s, run), cpu("valkey", 1, v, run)
            a["main_user_us_per_request"], b["main_user_us_per_request"] = 4.9, 6.2
            seen += [a, b]
        figure = self.rows(seen)["F4.99"]["figure"]
        self.assertTrue(figure.startswith("not met: above Valkey in GET 3 B P=1 t1 (run ranges overlap;"), figure)
        self.assertIn("soloist's lower, round beside round: its user time in 3 of 3, its system time in 1 of 3",
                      figure)
        self.assertIn("the rounds overlap in that cell: ordering them would take more rounds", figure)
        # Valkey lower in every round: no such excuse.
        for ln in seen:
            if ln["server"] == "valkey":
                ln["main_us_per_request"] = 10.0
        figure = self.rows(seen)["F4.99"]["figure"]
        self.assertIn("Valkey lower in every run", figure)
        self.assertNotIn("ordering them", figure)

    def test_a_generator_bound_cell_says_so(self):
        """Part (b)'s runs with one redis-benchmark thread busy nearly all
        the time: the 1 MB rows give its CPU a request per server and its
        counted system calls, and the target says the rates are its."""
        seen = [cell("b", "GET", 1 << 20, 1, [10, 11, 12], [11, 12, 13], [10, 11, 12], p99=(0.6, 1.6, 1.5))]
        for name, cpu_s in (("soloist", 0.62), ("valkey", 0.58), ("redis", 0.6)):
            seen += [{"kind": "run", "part": "b", "test": "GET", "server": name, "run": i, "client_cpu_s": cpu_s,
                      "wall_s": 0.64, "argv": "redis-benchmark -c 4 -n 2000 -P 1 -d 1048576 --csv -t get"}
                     for i in (1, 2, 3)]
            seen.append({"kind": "client_calls", "part": "b", "test": "GET", "server": name, "requests": 500,
                         "calls": {"recvfrom": 65.2, "epoll_wait": 19.0, "sendto": 1.0, "read": 0.36},
                         "cpu_ms_per_request": cpu_s / 2})
        rows = self.rows(seen)
        fig = rows["F7.50"]["figure"]  # the only 1 MB cell here: the first row
        self.assertIn("redis-benchmark's CPU 97 / 91 / 94 % of each run's wall time", fig)
        self.assertIn("its CPU a request in soloist's rounds 0.31 ms, in Valkey's 0.29, in redis-server's 0.30", fig)
        self.assertIn("recvfrom 65.2 / 65.2 / 65.2, epoll_wait 19.0 / 19.0 / 19.0", fig)
        self.assertIn("sendto 1.0 / 1.0 / 1.0", fig)
        self.assertNotIn("read 0.4", fig)  # under one every other request
        self.assertIn("that round's CPU a request against soloist 0.31 ms, against Valkey 0.29, against "
                      "redis-server 0.30", fig)
        self.assertIn("the rates are the generator's", rows["F7.53"]["figure"])
        # With threads of its own, or idle part of the time, it says nothing of the kind.
        for ln in seen:
            if ln.get("kind") == "run":
                ln["generator_threads"] = 4
        rows = self.rows(seen)
        self.assertNotIn("the rates are the generator's", rows["F7.53"]["figure"])
        self.assertIn("wall time on 4 threads", rows["F7.50"]["figure"])

    def test_target_names_the_cells_above_valkey(self):
        seen = []
        for run in (1, 2):
            seen += [cpu("soloist", 1, 7.0, run), cpu("valkey", 1, 6.0, run)]
            seen[-2]["main_sleeps_per_request"] = 0.5 + run  # soloist's: the median of 1.5 and 2.5
        rows = self.rows(seen)
        self.assertEqual(rows["F4.99"]["figure"], "not met: above Valkey in GET 3 B P=1 t1 (Valkey lower in every "
                                                  "run; main's time a request (medians of each part): soloist user "
                                                  "3.50 + system 3.50 µs, 2.00 sleeps against Valkey user 3.00 + "
                                                  "system 3.00 µs; soloist's lower, round beside round: its user "
                                                  "time in 0 of 2, its system time in 0 of 2); at "
                                                  "io-threads 1, where main does everything: median lower "
                                                  "in 0 of 1 cells (1.17–1.17×), lower in every run in 0 of them")

    def test_the_hand_off_alone_is_read_from_idle_line(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "idle_line")
            lines = [{"kind": "run", "variant": v, "ns": ns} for v, ns in
                     (("inline", 2100.0), ("pool", 2400.0), ("inline", 2110.0), ("pool", 2390.0),
                      ("inline", 2090.0), ("pool", 2500.0))] + [{"finding": True, "id": "F4.65", "figure": "x"}]
            with open(fake, "w") as f:
                f.write("#!/bin/sh\ncat <<'END'\n%s\nEND\n" % "\n".join(json.dumps(x) for x in lines))
            os.chmod(fake, 0o755)
            bv.SEEN[:] = []
            with mock.patch.dict(os.environ, IDLE_LINE_BIN=fake), redirect_stdout(io.StringIO()):
                bv.handoff_alone({"quick": True})
            self.assertEqual(bv.SEEN[-1]["kind"], "handoff")
            self.assertEqual(bv.SEEN[-1]["ns_per_request"], 300.0)  # the median of 300, 280, 410
            self.assertEqual(bv.SEEN[-1]["tool"], "--part roundtrip --quick")
            with mock.patch.dict(os.environ, IDLE_LINE_BIN=os.path.join(d, "absent")), \
                    redirect_stdout(io.StringIO()):
                bv.handoff_alone({"quick": False})
            self.assertEqual((bv.SEEN[-1]["kind"], bv.SEEN[-1]["what"]), ("unavailable", "handoff"))

    def test_zrange_is_its_own_row_in_closed_loop(self):
        seen = []
        for run in (1, 2):
            for server, main in (("soloist", 4.0), ("valkey", 5.0)):
                z = cpu(server, 1, main, run)
                z.update(test="ZRANGE", value_size=100, rps=30000.0, rate=30000.0)
                seen.append(z)
        rows = self.rows(seen)
        self.assertIn("ZRANGE of a whole 100-member sorted set", rows["F4.106"]["claim"])
        self.assertIn("t1 4.00 vs 5.00 µs (0.80×; soloist lower in every run)", rows["F4.106"]["figure"])
        self.assertIn("requests/s soloist t1 30000, Valkey t1 30000", rows["F4.106"]["figure"])
        self.assertNotIn("F4.90", rows)  # the closed-loop cell takes no open-loop row



def model_line(server, n, main, user, sys_, spin):
    return {"kind": "cpu", "server": server, "io_threads": n, "test": "SET", "value_size": 512, "pipeline": 1,
            "main_us_per_request": main, "main_user_us_per_request": user, "main_sys_us_per_request": sys_,
            "main_spin_us_per_request": spin}


class PipelineModel(unittest.TestCase):
    """bench/pipeline_model.py: the inputs read from kind=cpu (or kind=scale) lines, the
    bottleneck bound, and mean value analysis approaching it."""

    LINES = [model_line("soloist", 1, 10.0, 3.0, 7.0, 0.0), model_line("soloist", 4, 3.5, 1.0, 2.5, 0.3),
             model_line("valkey", 1, 12.0, 4.8, 7.2, None), model_line("valkey", 4, 40.0, 20.0, 20.0, None)]

    def test_inputs(self):
        got = pm.model(self.LINES)
        s, v = got["soloist"], got["valkey"]
        self.assertAlmostEqual(s["f"], 0.7)
        self.assertAlmostEqual(s["h"], 0.2)  # (3.5 - 0.3) - 10 * 0.3
        self.assertAlmostEqual(s["mN"], 3.2)
        self.assertAlmostEqual(s["w"], 7.2)
        self.assertAlmostEqual(v["h"], 0.2)  # soloist's, given
        self.assertAlmostEqual(v["mN"], 12 * 0.4 + 0.2)

    def test_bound(self):
        s = pm.model(self.LINES)["soloist"]
        self.assertEqual(pm.bound(s, 1), 1.0)
        self.assertAlmostEqual(pm.bound(s, 2), 10 / 7.2)        # one worker is the bottleneck
        self.assertAlmostEqual(pm.bound(s, 9), 10 / 3.2)        # main is
        self.assertAlmostEqual(pm.bound(s, 9, cores=2), 10 * 2 / 10.4)  # the cores are
        self.assertEqual(len(s["curve"]), 16)
        self.assertAlmostEqual(s["curve"][15], round(10 / 3.2, 3))

    def test_mva_approaches_the_bound(self):
        s = pm.model(self.LINES)["soloist"]
        few, many = pm.mva(s, 9, 1, 50.0), pm.mva(s, 9, 650, 50.0)
        self.assertAlmostEqual(few, 1 / (50.0 + 3.2 + 7.2))     # one client: the sum of the demands
        self.assertLessEqual(many, 1 / 3.2)
        self.assertGreater(many, 0.99 / 3.2)

    def test_waiting_beside_the_hand_offs_and_their_floor(self):
        # Main's system time and sleeps at io-threads 4 are read beside the
        # hand-offs, not split out of them; the floor is hand-offs of 0.
        lines = [dict(ln) for ln in self.LINES]
        lines[1].update(main_sys_us_per_request=0.05, main_sleeps_per_request=0.4)
        got = pm.model(lines)
        s, v = got["soloist"], got["valkey"]
        self.assertAlmostEqual(s["sys4"], 0.05)
        self.assertEqual(s["sleeps"], 0.4)
        self.assertIsNone(v["sys4"])  # Valkey is given soloist's h, nothing else
        self.assertIsNone(v["sleeps"])
        self.assertAlmostEqual(s["h"], 0.2)  # the split changes nothing the model computes
        self.assertAlmostEqual(pm.with_handoffs(s, 0.0)["mN"], 3.0)
        self.assertAlmostEqual(pm.with_handoffs(v, 0.0)["w"], 12 * 0.6)
        self.assertIsNone(pm.model(self.LINES)["soloist"]["sleeps"])  # not recorded: None

    def test_blog_target_reads_the_measured_hand_offs(self):
        lines = [dict(ln) for ln in self.LINES]
        lines[1].update(main_sys_us_per_request=0.05, main_sleeps_per_request=0.4)
        bv.SEEN[:] = lines
        got = {}
        bv.model_rows(lambda rid, claim, figure, **kw: got.update({rid: figure}))
        v = pm.model(lines)["valkey"]
        pred = v["curve"][bv.BLOG["io_threads"] - 1]
        self.assertIn("predicted %.2f× " % pred, got["F4.101"])
        self.assertIn("(0.20 µs a request, more than main's system time at io-threads 4, 0.05 µs", got["F4.101"])
        self.assertIn("%.2f× at their floor" % pm.bound(pm.with_handoffs(v, 0.0), bv.BLOG["io_threads"]),
                      got["F4.101"])
        self.assertTrue(got["F4.101"].startswith("met" if abs(pred / 3.3 - 1) <= 0.25 else "not met"))
        self.assertIn("hand-offs 0.20 µs → main", got["F4.100"])
        self.assertIn("0.05 µs of system time a request, 0.40 sleeps a request", got["F4.100"])
        bv.SEEN[:] = self.LINES  # system time 2.5 µs: the hand-offs fit inside it
        bv.model_rows(lambda rid, claim, figure, **kw: got.update({rid: figure}))
        self.assertIn("(0.20 µs a request, all of it within main's system time at io-threads 4, 2.50 µs",
                      got["F4.101"])
        self.assertNotIn("where no thread sleeps, ", got["F4.101"])
        # idle_line's round trip in the run: a third estimate, between the two.
        bv.SEEN[:] = self.LINES + [{"kind": "handoff", "ns_per_request": 100.0}]
        bv.model_rows(lambda rid, claim, figure, **kw: got.update({rid: figure}))
        v = pm.model(self.LINES)["valkey"]
        est = pm.bound(pm.with_handoffs(v, 0.1), bv.BLOG["io_threads"])
        self.assertIn("; %.2f× (%+.0f %%) with the hand-offs' own work where no thread sleeps, 0.10 µs a request"
                      % (est, 100 * (est / (bv.BLOG["after"] / bv.BLOG["before"]) - 1)), got["F4.101"])
        self.assertLess(est, pm.bound(pm.with_handoffs(v, 0.0), bv.BLOG["io_threads"]))

    def test_the_ceiling_before_a_third_of_capacity(self):
        # Part (d)'s closed-loop lines, once they carry main's CPU at
        # io-threads 1 and 4, are the demands; part (c)'s are printed beside.
        scale = [dict(ln, kind="scale") for ln in self.LINES]
        scale[0].update(main_us_per_request=5.0, main_user_us_per_request=1.5, main_sys_us_per_request=3.5,
                        main_sleeps_per_request=0.002)
        scale[2].update(main_us_per_request=6.0)
        self.assertEqual(pm.where(self.LINES), "cpu")
        self.assertEqual(pm.where(self.LINES + scale[2:]), "cpu")  # no soloist figures: part (c)
        lines = self.LINES + scale
        self.assertEqual(pm.where(lines), "scale")
        got = pm.model(lines)
        s, v = got["soloist"], got["valkey"]
        self.assertEqual((s["at"], s["m1"], s["sleeps1"]), ("scale", 5.0, 0.002))
        self.assertAlmostEqual(s["h"], (3.5 - 0.3) - 5.0 * 0.3)
        self.assertEqual(v["m1"], 6.0)
        self.assertEqual(pm.model(lines, kind="cpu")["soloist"]["m1"], 10.0)
        two = [dict(ln, io_threads=2, main_us_per_request=m) for ln, m in ((self.LINES[1], 9.0), (scale[1], 4.0))]
        bv.SEEN[:] = lines + two
        rows = {}
        bv.model_rows(lambda rid, claim, figure, **kw: rows.update({rid: (claim, figure)}))
        bv.SEEN[:] = lines + two + [{"kind": "handoff", "ns_per_request": 100.0}]  # both beside the floor
        both = {}
        bv.model_rows(lambda rid, claim, figure, **kw: both.update({rid: figure}))
        self.assertRegex(both["F4.101"], r"where no thread sleeps, 0\.10 µs .*; with the demands at a third of capacity")
        third = pm.model(lines, kind="cpu")["valkey"]["curve"][bv.BLOG["io_threads"] - 1]
        pred = v["curve"][bv.BLOG["io_threads"] - 1]
        self.assertIn("the demands measured at the ceiling (closed loop, part (d))", rows["F4.100"][0])
        self.assertIn("at io-threads 1, 0.002 sleeps a request", rows["F4.100"][1])
        self.assertIn("at a third of capacity (part (c)) the same inputs were: soloist m1 10.00 µs, Valkey m1 "
                      "12.00 µs, hand-offs 0.20 µs", rows["F4.100"][1])
        self.assertTrue(rows["F4.101"][1].startswith("%s: predicted %.2f× " % (
            "met" if abs(pred / 3.3 - 1) <= 0.25 else "not met", pred)))
        floor = pm.bound(pm.with_handoffs(pm.model(lines, kind="cpu")["valkey"], 0.0), bv.BLOG["io_threads"])
        self.assertIn("with the demands at a third of capacity, %.2f× (floor %.2f×)" % (third, floor),
                      rows["F4.101"][1])
        self.assertIn("puts 2.17× on the threads alone", rows["F4.101"][1])
        self.assertIn("the prediction is %+.0f %% from that" % (100 * (pred / (78 / 36) - 1)), rows["F4.101"][1])
        self.assertIn("measured %.2f µs" % (4.0 - 0.3), rows["F4.103"][1])  # part (d)'s io-threads 2, not (c)'s

    def test_missing_figures(self):
        self.assertEqual(pm.model([l for l in self.LINES if l["io_threads"] == 4]), {})


if __name__ == "__main__":
    unittest.main()
