#!/usr/bin/env python3
"""Runs the reader's-tools unit tests (tests/tools/test_*.py) and ends with
one line "N passed, M failed" for tests/run.sh. A skipped test is printed
and counted as neither.

Every test builds what it needs in a temporary directory of its own and
only reads the tree, and most of their time is spent waiting on the
programs they start (make, cc, git, pandoc), so they run side by side:
one test at a time in each of SOLOIST_JOBS worker processes (default: one
per core; 1 runs them in this process, in order). The results are printed
in the order the tests were found.

    tests/tools/run.py [PATTERN]    default test_*.py

A test marked with fixtures.long_run runs only in the long run
(SOLOIST_LONG=1), and then only such tests run.
"""

import concurrent.futures
import contextlib
import io
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# The modules whose tests take longest (each grades a fixture project,
# building it several times) start first, so that the run does not end
# waiting on one of them alone.
SLOW_FIRST = ("test_exercise",)


class Recorder(unittest.TextTestResult):
    """Keeps, for each test, its verdict word and (for a failure) the
    traceback, with whatever the test printed."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.records = []

    def startTest(self, test):
        super().startTest(test)
        self.t0 = time.monotonic()

    def _rec(self, test, word, detail=""):
        desc = f"{self.getDescription(test)} ({time.monotonic() - self.t0:.1f}s)"
        self.records.append((test.id(), desc, word, detail))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._rec(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._rec(test, "FAIL", self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self._rec(test, "ERROR", self.errors[-1][1])

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failure = issubclass(err[0], test.failureException)
            self._rec(subtest, "FAIL" if failure else "ERROR", (self.failures if failure else self.errors)[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._rec(test, "skipped %r" % reason, reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._rec(test, "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._rec(test, "unexpected success")


def run_tests(suite):
    """-> the records of every test in suite (run here, in order)."""
    # A test's prints are kept with its failure (buffer), and nowhere else:
    # the result mirrors them to the stdout it was made under, the sink.
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        result = Recorder(sink, descriptions=True, verbosity=0)
        result.buffer = True
        suite.run(result)
    return result.records


def run_one(test_id):
    """In a worker: load one test by its id and run it."""
    return run_tests(unittest.defaultTestLoader.loadTestsFromName(test_id))


def is_long(test):
    """The test's fixtures.long_run reason, or None."""
    return getattr(getattr(test, getattr(test, "_testMethodName", ""), None), "soloist_long", None)


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def main():
    pattern = sys.argv[1] if len(sys.argv) > 1 else "test_*.py"
    jobs = int(os.environ.get("SOLOIST_JOBS") or os.cpu_count() or 1)
    t0 = time.time()
    suite = unittest.defaultTestLoader.discover(HERE, pattern=pattern, top_level_dir=HERE)
    tests = list(flatten(suite))
    records = []
    # A module that fails to import is a _FailedTest whose id names no
    # loadable test: run those here, where the error is reported as is.
    broken = [t for t in tests if type(t).__name__ == "_FailedTest"]
    tests = [t for t in tests if t not in broken]
    long_run = os.environ.get("SOLOIST_LONG") == "1"
    left = [t for t in tests if bool(is_long(t)) != long_run]
    tests = [t for t in tests if bool(is_long(t)) == long_run]
    if broken:
        records += run_tests(unittest.TestSuite(broken))
    ids = [t.id() for t in tests]
    if jobs <= 1:
        records += run_tests(unittest.TestSuite(tests))
    else:
        order = sorted(ids, key=lambda i: i.split(".")[0] not in SLOW_FIRST)
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            done = dict(zip(order, pool.map(run_one, order)))
        for i in ids:
            records += done[i]
    for _, desc, word, _ in records:
        print(f"{desc} ... {word}")
    bad = [(desc, word, detail) for _, desc, word, detail in records if word in ("FAIL", "ERROR")]
    for desc, word, detail in bad:
        print("=" * 70)
        print(f"{word}: {desc}")
        print("-" * 70)
        print(detail)
    print("-" * 70)
    print(f"Ran {len(records)} tests in {time.time() - t0:.1f}s ({jobs} at a time)")
    failed = len(bad) + sum(1 for r in records if r[2] == "unexpected success")
    skipped = [r[3] for r in records if r[2].startswith("skipped")]
    passed = len(records) - failed - len(skipped)
    if skipped:
        print(f"({len(skipped)} skipped: {'; '.join(sorted(set(skipped)))})")
    if left and not long_run:
        print(f"({len(left)} left to the long run, make check-long: "
              + "; ".join(f"{t.id().split('.', 1)[1]} ({is_long(t)})" for t in left) + ")")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
