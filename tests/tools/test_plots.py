"""Plots of benchmark results, {{plot NAME}}: drawn by tools/findings.py
from the results FINDINGS.md used, resolved by the book build, checked by
`make check-anchors` (tools/anchors.py) and `make book-check`
(tools/book/check.py). Each test makes its project in a temporary
directory."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from fixtures import TOOLS, write

import findings  # noqa: E402  (tools/findings.py)
import findings_refs  # noqa: E402  (tools/findings_refs.py)
from findings_bench.phase_shares import phase_parts  # noqa: E402  (tools/findings_bench/phase_shares.py)

ANCHORS = os.path.join(TOOLS, "anchors.py")
BUILD = os.path.join(TOOLS, "book", "build.py")
CHECK = os.path.join(TOOLS, "book", "check.py")


def findings_md(used="pipeline_span"):
    return ("# FINDINGS\n\nintro\n\nResults used:\n\n"
            "- `bench/results/r1/` (%s)\n- `bench/results/r0/` (write_cost)\n\n"
            "## Rows\n\n| ID | claim | figure | conditions | reproduce |\n|---|---|---|---|---|\n"
            "| F0.17 | span | **2.00×** | cores 2 | `make findings` |\n" % used)


def span_lines(run_id="r1"):
    out = []
    for p in (1, 4, 16, 64, 256):
        for rep in range(3):
            for s, k in (("soloist", 2.0), ("redis", 1.0)):
                out.append('{"bench": "pipeline_span", "kind": "run", "server": "%s", "pipeline": %d, '
                           '"rps": %.1f, "run": %d, "run_id": "%s"}\n' % (s, p, 1000.0 * p * k + rep, rep + 1, run_id))
    return "".join(out)


def phase_lines(split):
    out = []
    for p, ex in ((1, 10), (16, 50)):
        us = {"read": 20, "exec": ex, "write": 40, "other": 2, "poll": 30}
        if split:
            us["poll_cpu"] = 10
        out.append('{"bench": "phase_shares", "kind": "run", "pipeline": %d, "run_id": "r1", "phase_us": %s}\n'
                   % (p, str(us).replace("'", '"')))
    return "".join(out)


class PlotsTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="plots-test-")
        write(os.path.join(self.root, "bench", "results", "r1", "provenance.json"), '{"run_id": "r1"}\n')
        write(os.path.join(self.root, "bench", "results", "r1", "pipeline_span.jsonl"), span_lines())

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def chapter(self, body):
        write(os.path.join(self.root, "chapters", "00-demo.md"), "# Demo\n\n" + body)

    def anchors(self):
        r = subprocess.run([sys.executable, ANCHORS, "--root", self.root, "check"], capture_output=True,
                           text=True, timeout=60)
        return r.returncode, r.stdout + r.stderr

    # -- tools/findings_refs.py ---------------------------------------------

    def test_used_results_reads_the_list(self):
        write(os.path.join(self.root, "FINDINGS.md"), findings_md("phase_shares, pipeline_span"))
        used = findings_refs.used_results(self.root)
        self.assertEqual(used, {"phase_shares": "bench/results/r1", "pipeline_span": "bench/results/r1",
                                "write_cost": "bench/results/r0"})
        self.assertIsNone(findings_refs.used_results(tempfile.mkdtemp()))

    def test_render_plots_gives_an_image_with_its_caption(self):
        out = findings_refs.render_plots("a\n\n{{plot pipeline_span}}\n", {"pipeline_span": "Span [x]. From `f`."})
        self.assertIn("![Span (x). From `f`.](plots/pipeline_span.svg){#plot-pipeline_span}", out)
        self.assertEqual(findings_refs.references("x\n{{plot a_b}}\n", findings_refs.PLOT_REF), [(2, "a_b")])

    # -- tools/findings.py ----------------------------------------------------

    def test_draw_plot_from_the_raw_lines(self):
        run = findings.Run(os.path.join(self.root, "bench", "results", "r1"))
        dest = os.path.join(self.root, "out", "pipeline_span.svg")
        findings.draw_plot("pipeline_span", run, dest, os.path.join(self.root, "out"))
        with open(dest) as f:
            self.assertIn("<svg", f.read())
        with open(os.path.join(self.root, "out", "pipeline_span.dat")) as f:
            dat = f.read().splitlines()
        self.assertEqual(dat[0], "# P soloist_rps redis_rps")
        self.assertEqual(dat[1], "1 2001 1001")  # medians of the three runs
        with self.assertRaises(findings.Refused):
            findings.draw_plot("phase_shares", run, dest, os.path.join(self.root, "out"))

    def test_phase_shares_split_the_poll_once(self):
        self.assertEqual(phase_parts({"exec": 1, "poll": 10, "poll_cpu": 4}),
                         {"exec": 1.0, "poll_cpu": 4.0, "poll_wait": 6.0})
        self.assertEqual(phase_parts({"exec": 1, "poll": 10}), {"exec": 1.0, "poll": 10.0})
        self.assertEqual(phase_parts({"poll": 10, "poll_cpu": 4, "poll_wait": 6}),
                         {"poll_cpu": 4.0, "poll_wait": 6.0})
        for split in (False, True):
            import json
            lines = [json.loads(x) for x in phase_lines(split).splitlines()]
            cols, rows, _ = findings.PLOTS["phase_shares"].fn(lines)
            self.assertEqual(rows[0][0], "P=1")
            self.assertAlmostEqual(sum(rows[0][1:]), 100.0, places=1)
            self.assertEqual(cols[1], "exec")
            self.assertEqual("poll_cpu" in cols, split)

    # -- make check-anchors -----------------------------------------------------

    def test_check_anchors_passes_a_plot_of_used_results(self):
        write(os.path.join(self.root, "FINDINGS.md"), findings_md())
        self.chapter("{{plot pipeline_span}}\n")
        rc, out = self.anchors()
        self.assertEqual(rc, 0, out)
        self.assertIn("1 to plots", out)

    def test_check_anchors_fails_bad_plot_references(self):
        write(os.path.join(self.root, "FINDINGS.md"), findings_md(used="write_cost"))
        self.chapter("{{plot nope}}\n\n{{plot pipeline_span}}\n\nsee {{plot server_vs_redis}} here\n")
        rc, out = self.anchors()
        self.assertEqual(rc, 1, out)
        self.assertIn("{{plot nope}}: tools/findings.py draws no plot nope", out)
        self.assertIn("{{plot pipeline_span}}: FINDINGS.md used no pipeline_span results", out)
        self.assertIn("{{plot server_vs_redis}}: a plot reference stands alone on its line", out)

    def test_check_anchors_fails_a_plot_whose_results_are_gone(self):
        write(os.path.join(self.root, "FINDINGS.md"), findings_md())
        os.remove(os.path.join(self.root, "bench", "results", "r1", "pipeline_span.jsonl"))
        self.chapter("{{plot pipeline_span}}\n")
        rc, out = self.anchors()
        self.assertEqual(rc, 1, out)
        self.assertIn("bench/results/r1/pipeline_span.jsonl, which FINDINGS.md used, is not there", out)

    def test_check_anchors_without_findings_does_not_count_plots(self):
        self.chapter("{{plot pipeline_span}}\n")
        rc, out = self.anchors()
        self.assertEqual(rc, 0, out)
        self.assertIn("NOT CHECKED: 1 reference(s)", out)

    # -- make book, make book-check ---------------------------------------------

    @unittest.skipUnless(shutil.which("pandoc") and shutil.which("gnuplot"), "pandoc and gnuplot (make deps)")
    def test_book_draws_the_plot_or_says_why_not(self):
        self.chapter("Before.\n\n{{plot pipeline_span}}\n\nAfter.\n")
        env = dict(os.environ, SOLOIST_OFFLINE="1")

        def build_and_check():
            b = subprocess.run([sys.executable, BUILD, "--root", self.root], capture_output=True, text=True,
                               env=env, timeout=300)
            self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
            c = subprocess.run([sys.executable, CHECK, "--root", self.root], capture_output=True, text=True,
                               timeout=120)
            with open(os.path.join(self.root, "build", "book", "plots", "pipeline_span.svg")) as f:
                return b.stdout + b.stderr, c.returncode, c.stdout, f.read()

        # no FINDINGS.md yet: a placeholder that says so, and the check lets it be
        out, rc, check, svg = build_and_check()
        self.assertIn("placeholder", svg)
        self.assertIn("run `make findings`", svg)
        self.assertEqual(rc, 0, check)
        # FINDINGS.md used the results: drawn from them
        write(os.path.join(self.root, "FINDINGS.md"), findings_md())
        out, rc, check, svg = build_and_check()
        self.assertNotIn("placeholder", svg)
        self.assertEqual(rc, 0, check)
        # FINDINGS.md did not use them: a placeholder, and the check fails it
        write(os.path.join(self.root, "FINDINGS.md"), findings_md(used="write_cost"))
        out, rc, check, svg = build_and_check()
        self.assertIn("FINDINGS.md used no pipeline_span results", out)
        self.assertEqual(rc, 1, check)
        self.assertIn("the plot is a placeholder", check)


if __name__ == "__main__":
    unittest.main()
