"""tools/trace.py on a trace written by hand, whose shares are known, and
tools/findings.py's h_trace_runs on summaries made from it.

The trace: main (thread 0) and one worker over a window of 100 µs.

  main    epoll_wait 0-40 and 90-100 (idle 50), commands 50-60 (busy 10):
          busy 10%, idle 50%, waiting 40%
  worker  sleep 0-20 (idle 20); a read job taken at 30 (its read 30-40,
          its "result sent" at 45) and a write job taken at 70 (its write
          70-80, "result sent" at 82): busy 15 + 12, so 27%, idle 20%,
          waiting 53%
  main's submits: the read job at 25, the write job at 65, and a free_argv
  job at 66 that the inbox refused (undone: not counted).

One request (its arrow: read at 30 on the worker, commands at 50 on main,
write at 70 on the worker): from the read job's submit at 25 to the
write's end at 80, 55 µs: queued 5 + 5, worker 10 + 10, main 10, waiting
the other 15.
"""

import contextlib
import io
import json
import os
import tempfile
import unittest
import xml.etree.ElementTree as ET

import fixtures  # noqa: F401  (puts tools/ on the path)
import findings  # noqa: E402  (tools/findings.py)
import trace as tracepy  # noqa: E402  (tools/trace.py)


def ev(ph, name, tid, ts, **kw):
    e = {"ph": ph, "cat": "soloist", "name": name, "pid": 1, "tid": tid, "ts": ts}
    e.update(kw)
    return e


def hand_trace():
    x = lambda name, tid, ts, dur, **args: ev("X", name, tid, ts, dur=dur, args=args)  # noqa: E731
    i = lambda name, tid, ts, **args: ev("i", name, tid, ts, s="t", args=args)  # noqa: E731
    events = [
        ev("M", "thread_name", 0, 0, args={"name": "main"}),
        ev("M", "thread_name", 1, 0, args={"name": "io-thread-1"}),
        x("epoll_wait", 0, 0.0, 40.0, events=1),
        x("sleep", 1, 0.0, 20.0, woken_by_main=True),
        i("submit", 0, 25.0, job="read", inbox="shared", word=101),
        i("take", 1, 30.0, job="read", inbox="shared", word=101),
        x("read", 1, 30.0, 10.0, client=5, bytes=14, commands=1),
        i("result sent", 1, 45.0, client=5, job="read"),
        x("commands", 0, 50.0, 10.0, client=5, queued=1, commands=1, reply_bytes=5),
        i("submit", 0, 65.0, job="write", inbox="shared", word=202),
        i("submit", 0, 66.0, job="free_argv", inbox="private", worker=1, word=303),
        i("refused", 0, 66.5, job="free_argv", inbox="private", worker=1, word=303),
        i("take", 1, 70.0, job="write", inbox="shared", word=202),
        x("write", 1, 70.0, 10.0, client=5, bytes=5),
        i("result sent", 1, 82.0, client=5, job="write"),
        x("epoll_wait", 0, 90.0, 10.0, events=0),
        ev("s", "request", 1, 30.0, id=83886081, args={"client": 5, "request": 1, "commands": 1}),
        ev("t", "request", 0, 50.0, id=83886081),
        ev("f", "request", 1, 70.0, id=83886081, bp="e"),
    ]
    return {"otherData": {"dropped": "0", "threads": "2"}, "traceEvents": events}


class TraceSummaryTest(unittest.TestCase):
    def test_shares(self):
        s = tracepy.summarize(hand_trace())
        self.assertAlmostEqual(s["window_us"], 100.0)
        main, worker = s["shares"]["main"], s["shares"]["io-thread-1"]
        for got, want in ((main, (0.10, 0.50, 0.40)), (worker, (0.27, 0.20, 0.53))):
            self.assertAlmostEqual(got["busy"], want[0])
            self.assertAlmostEqual(got["idle"], want[1])
            self.assertAlmostEqual(got["waiting"], want[2])

    def test_request(self):
        s = tracepy.summarize(hand_trace())
        self.assertEqual((s["requests"], s["in_order"]), (1, 1))
        us = {k: v["median"] for k, v in s["request_us"].items()}
        self.assertEqual(us, {"total": 55.0, "queued": 10.0, "worker": 20.0, "main": 10.0, "waiting": 15.0})
        self.assertAlmostEqual(sum(s["request_share"].values()), 1.0)
        self.assertEqual(s["jobs_submitted"], {"free_argv": 0, "read": 1, "write": 1})
        self.assertAlmostEqual(s["jobs_per_request"], 2.0)
        self.assertEqual(s["wakes"]["n"], 0)  # no submit during the sleep

    def test_out_of_order(self):
        doc = hand_trace()
        for e in doc["traceEvents"]:
            if e["name"] == "commands":
                e["dur"] = 25.0  # the run now ends after the write began
        self.assertEqual(tracepy.summarize(doc)["in_order"], 0)

    def test_json_form(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.json")
            with open(path, "w") as f:
                json.dump(hand_trace(), f)
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                self.assertEqual(tracepy.main(["summary", path, "--json"]), 0)
            self.assertEqual(json.loads(buf.getvalue())["requests"], 1)


class TraceDrawTest(unittest.TestCase):
    def test_svg_one_lane_per_thread(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fig.svg")
            tracepy.draw(hand_trace(), out, title="a hand-made trace & its lanes")
            root = ET.parse(out).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        self.assertEqual(root.tag, ns + "svg")
        lanes = [g for g in root.iter(ns + "g") if g.get("class") == "lane"]
        self.assertEqual([g.get("data-tid") for g in lanes], ["0", "1"])
        names = [t.text for g in lanes for t in g.iter(ns + "text")]
        self.assertEqual(names, ["main", "io-thread-1"])
        kinds = {r.get("class") for g in lanes for r in g.iter(ns + "rect")}
        for k in ("span read", "span write", "span commands", "span job", "span sleep", "span epoll_wait"):
            self.assertIn(k, kinds)
        self.assertEqual(len([p for p in root.iter(ns + "polyline") if p.get("class") == "flow"]), 1)

    def test_window(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fig.svg")
            t0, t1 = tracepy.draw(hand_trace(), out, t0=45.0, t1=65.0)
            root = ET.parse(out).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        self.assertEqual((t0, t1), (45.0, 65.0))
        kinds = {r.get("class") for r in root.iter(ns + "rect")}
        self.assertIn("span commands", kinds)
        self.assertNotIn("span read", kinds)  # 30-40 lies outside


class TraceFindingsTest(unittest.TestCase):
    def test_rows_from_stored_summaries(self):
        summary = tracepy.summarize(hand_trace())
        with tempfile.TemporaryDirectory() as d:
            run = os.path.join(d, "r1")
            os.makedirs(run)
            prov = {"cpu_model": "test cpu", "cores": 2, "kernel": "6.1", "compiler": "cc 12",
                    "git": {"commit": "abc123"}, "date": "2026-01-01T00:00:00+00:00"}
            with open(os.path.join(run, "provenance.json"), "w") as f:
                json.dump(prov, f)
            with open(os.path.join(run, "trace_runs.jsonl"), "w") as f:
                for t in (1, 2):
                    f.write(json.dumps({"kind": "run", "run_id": "r1", "name": "get-t%d-p1" % t, "setting": "get",
                                        "io_threads": t, "pipeline": 1, "clients": 50, "keys": 10000,
                                        "value_size": 3, "forced_on": True, "trace_ms": 25,
                                        "summary": summary}) + "\n")
            rows = {r.id: r for r in findings.build_rows({"trace_runs": findings.Run(run)})}
        self.assertEqual(rows["F4.80"].figure, "io-threads 1: 10.0% busy; io-threads 2: 10.0% busy (one run)")
        self.assertTrue(rows["F4.82"].figure.startswith("io-threads 2: 18.2% queued (median 10.0 µs of a median "
                                                        "request of 55.0 µs)"), rows["F4.82"].figure)
        self.assertIn("2.00 jobs per request", rows["F4.83"].figure)
        self.assertEqual(rows["F4.84"].figure, "2 of 2 requests in order; settings out of order: none (one run)")
        self.assertNotIn("F4.85", rows)  # no POLL job in the trace: no row about one
        self.assertEqual(rows["F4.80"].command, "make trace")


if __name__ == "__main__":
    unittest.main()
