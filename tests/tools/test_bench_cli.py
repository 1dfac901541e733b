"""Tests of the benchmarks' command line (bench/benchlib.py run_main): a
benchmark runs for minutes, so --help prints what it measures and runs
nothing, and an argument it does not know is refused, never ignored;
--rows FILE and a script's own commands reach their functions. Every
script under bench/ that is run as a benchmark enters through run_main.
No server is started and no benchmark runs.
"""

import glob
import io
import os
import sys
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench")
sys.path.insert(0, BENCH)
import benchlib as bl  # noqa: E402

# Scripts that are not benchmarks run by bench/run.py with no arguments:
# the runner itself, the library, and the model, which parses its own
# arguments with argparse.
NOT_RUN_MAIN = {"run.py", "benchlib.py", "pipeline_model.py"}


def must_not_run():
    raise AssertionError("the benchmark ran")


class RunMain(unittest.TestCase):
    def call(self, argv, **kw):
        out, err = io.StringIO(), io.StringIO()
        fake_main = mock.Mock(__doc__="demo.py — what it measures.\n\nKnobs: QUICK=1.")
        with mock.patch.object(sys, "argv", ["demo.py"] + argv), \
                mock.patch.dict(sys.modules, {"__main__": fake_main}), redirect_stdout(out), redirect_stderr(err):
            rc = bl.run_main(kw.pop("main", must_not_run), **kw)
        return rc, out.getvalue(), err.getvalue()

    def test_help_prints_the_opening_and_runs_nothing(self):
        for flag in ("-h", "--help"):
            rc, out, _ = self.call([flag])
            self.assertEqual(rc, 0)
            self.assertIn("what it measures", out)
            self.assertIn("QUICK=1", out)

    def test_an_unknown_argument_is_refused(self):
        for argv in (["--bogus"], ["--rows"], ["--rows", "a", "b"], ["QUICK=1"]):
            rc, _, err = self.call(argv, rows_again=lambda path: self.fail("rows ran"))
            self.assertEqual(rc, 2, argv)
            self.assertIn("usage: demo.py", err)
            self.assertIn("--rows ARG", err)

    def test_no_arguments_run_the_benchmark(self):
        rc, _, _ = self.call([], main=lambda: 0)
        self.assertEqual(rc, 0)
        rc, _, _ = self.call([], main=lambda: 1)
        self.assertEqual(rc, 1)

    def test_rows_and_commands_reach_their_functions(self):
        got = []
        rc, _, _ = self.call(["--rows", "run.jsonl"], rows_again=got.append)
        self.assertEqual((rc, got), (0, ["run.jsonl"]))
        rc, _, _ = self.call(["--draw", "in", "out"], commands={"--draw": (2, lambda a, b: got.append((a, b)))})
        self.assertEqual((rc, got[-1]), (0, ("in", "out")))

    def test_every_benchmark_enters_through_run_main(self):
        for path in sorted(glob.glob(os.path.join(BENCH, "*.py"))):
            name = os.path.basename(path)
            if name in NOT_RUN_MAIN:
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            tail = text[text.rindex('if __name__ == "__main__":'):]
            self.assertIn("bl.run_main(", tail, "%s does not enter through bench/benchlib.py run_main" % name)
            self.assertNotIn("sys.argv", text.replace("bench/run.py", ""),
                             "%s reads sys.argv itself: give run_main its commands" % name)


if __name__ == "__main__":
    unittest.main()
