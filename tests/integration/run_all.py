#!/usr/bin/env python3
"""Step 0 integration suite driver: the differential transcripts, the
unittest integration tests and the C client, against one server binary;
prints one `N passed, M failed` line at the end (the per-part subtotals
are written "N passed / M failed" so that tests/run.sh can never take
one of them for the suite's count).

Counting (one count per test case): each transcript file is one case
(difftest.py), each unittest test method is one (a skipped test counts
neither way and is listed), each cmocka test of the C client is one, and
with --sanitizer each server log holding a sanitizer report is one more
failure.

The transcripts run two at a time in threads beside the unittests, whose
modules run two at a time too but for those that time the server (all of
them mostly wait on their servers); each part's output is printed whole,
transcripts first.

Owns: build/integration-logs/<name>/ (server logs of this run, emptied at
start). Valkey anchor: none — this is the test plumbing.

  run_all.py --target build/soloist-server --c-client build/tests-integration/c_client
  SOLOIST_TARGET=/usr/bin/redis-server ... (check the tests against the oracle)
"""

import argparse
import io
import os
import shutil
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402


# The modules that take longest, started first so that the two runners
# end together; the rest follow in name order.
SLOW_FIRST = ["test_big_values", "test_top", "test_redis_py", "test_tools"]
# The modules that time the server (timeouts answered within a bound,
# idle connections closed after a second): they run after the others,
# alone, since the runners are threads of one process and a neighbour's
# Python loop can hold this one's thread past the bound.
ALONE = ["test_blocking", "test_lifecycle", "test_list_blocking"]


def run_unittests(out, pattern, jobs=2):
    """Runs the test modules `jobs` at a time, in threads of this process
    (each module owns its servers, on ports of their own, and spends its
    time waiting on them; harness.STARTED keeps every server for the
    sanitizer check), then the ALONE ones one at a time; each module's
    output is written whole, in name order."""
    loader = unittest.TestLoader()
    modules = list(loader.discover(HERE, pattern=pattern, top_level_dir=HERE))

    def name(suite):
        for t in _tests(suite):
            return t.id().split(".")[0]
        return ""

    def rank(i):
        n = name(modules[i])
        return (SLOW_FIRST.index(n) if n in SLOW_FIRST else len(SLOW_FIRST), i)

    shared = sorted((i for i in range(len(modules)) if name(modules[i]) not in ALONE), key=rank)
    alone = [i for i in range(len(modules)) if name(modules[i]) in ALONE]
    streams, results = [None] * len(modules), [None] * len(modules)
    lock = threading.Lock()

    def run(i):
        streams[i] = io.StringIO()
        results[i] = unittest.TextTestRunner(stream=streams[i], verbosity=2).run(modules[i])

    def runner():
        while True:
            with lock:
                if not shared:
                    return
                i = shared.pop(0)
            run(i)

    threads = [threading.Thread(target=runner) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in alone:
        run(i)
    good = bad = skipped = 0
    for stream, result in zip(streams, results):
        out.write(stream.getvalue())
        # a test that errors and then fails in tearDown is one failed case
        b = len({id(t) for t, _ in result.failures + result.errors} |
                {id(t) for t in result.unexpectedSuccesses})
        sk = len(result.skipped)
        bad += b
        skipped += sk
        good += result.testsRun - b - sk
    return good, bad, skipped


def _tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _tests(t)
        else:
            yield t


def run_c_client(binary, out, slow):
    if not binary:
        return 0, 0
    if not os.path.exists(binary):
        out.write("FAIL c_client: %s not built\n" % binary)
        return 0, 1
    s = harness.Server(name="target-c").start()
    try:
        env = dict(os.environ, SOLOIST_PORT=str(s.port))
        try:
            r = subprocess.run([binary], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=120 * slow)
            text = r.stdout.decode("utf-8", "replace")
            rc = r.returncode
        except subprocess.TimeoutExpired as e:
            text = (e.stdout or b"").decode("utf-8", "replace") + "\n(timed out)"
            rc = -1
        out.write(text)
        p = f = 0
        for line in text.splitlines():
            if line.startswith("[  PASSED  ]"):
                p += int(line.split()[3])
            elif line.startswith("[  FAILED  ]") and "test(s)" in line:
                f += int(line.split()[3])
        if p == 0 and f == 0:
            f = 1
            out.write("FAIL c_client printed no cmocka summary (exit %s)\n" % rc)
        elif rc != 0 and f == 0:
            f = 1
            out.write("FAIL c_client exited %s\n" % rc)
        if not s.alive():
            f += 1
            out.write("FAIL server died under the C client:\n%s\n" % s.log_tail())
        return p, f
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default=harness.SOLOIST_SERVER)
    ap.add_argument("--oracle", default=harness.REDIS_SERVER)
    ap.add_argument("--c-client", default=None)
    ap.add_argument("--name", default="default",
                    help="log folder under build/integration-logs/")
    ap.add_argument("--sanitizer", action="store_true",
                    help="fail on any sanitizer report in a server log")
    ap.add_argument("--only", choices=["diff", "tests", "c"], action="append")
    ap.add_argument("--tests", default="test_*.py",
                    help="unittest file pattern (default test_*.py)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    target = os.path.abspath(a.target)
    logs = os.path.join(harness.REPO, "build", "integration-logs", a.name)
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs)
    os.environ["SOLOIST_TARGET"] = target
    os.environ["SOLOIST_LOG_DIR"] = logs
    if a.sanitizer:
        os.environ["SOLOIST_SANITIZER"] = "1"
    slow = 3 if a.sanitizer else 1
    only = set(a.only or ["diff", "tests", "c"])
    out = sys.stdout
    out.write("target %s, oracle %s, logs %s\n" % (target, a.oracle, logs))

    passed = failed = 0
    t0 = time.monotonic()
    # The transcripts and the unittests each start servers of their own
    # and spend most of their time waiting on them (replies that must not
    # come, idle timeouts, expiry), so the transcripts run in a thread
    # beside the unittests; each part's output is kept and printed whole,
    # in the usual order.
    diff_out, diff_res = io.StringIO(), []

    def transcripts():
        import difftest
        t = time.monotonic()
        try:
            p, f, _ = difftest.run_transcripts(target, a.oracle, log_dir=logs,
                                               verbose=a.verbose, out=diff_out)
        except Exception as e:  # counted, never lost with the thread
            diff_out.write("FAIL the transcripts did not run: %r\n" % e)
            p, f = 0, 1
        diff_res[:] = [p, f, time.monotonic() - t]

    diff = threading.Thread(target=transcripts) if "diff" in only else None
    if diff:
        diff.start()
    tests_out = io.StringIO()
    if "tests" in only:
        t1 = time.monotonic()
        p, f, sk = run_unittests(tests_out, a.tests)
        tests_out.write("-- tests: %d passed / %d failed / %d skipped (%.0fs)\n"
                        % (p, f, sk, time.monotonic() - t1))
        passed += p
        failed += f
    if diff:
        diff.join()
        p, f, secs = diff_res
        out.write("== differential transcripts\n" + diff_out.getvalue())
        out.write("-- transcripts: %d passed / %d failed (%.0fs)\n" % (p, f, secs))
        passed += p
        failed += f
    if "tests" in only:
        out.write("== integration tests\n" + tests_out.getvalue())
    if "c" in only and a.c_client:
        t1 = time.monotonic()
        out.write("== C client\n")
        p, f = run_c_client(a.c_client, out, slow)
        out.write("-- c_client: %d passed / %d failed (%.0fs)\n"
                  % (p, f, time.monotonic() - t1))
        passed += p
        failed += f

    # Every server any part started has been stopped by now; stop any
    # left over, then read their logs.
    for s in harness.STARTED:
        if s.alive():
            s.stop()
    if a.sanitizer:
        reports = 0
        for s in harness.STARTED:
            if s.kind != "soloist" and s.binary != target:
                continue
            rep = harness.sanitizer_report(s.log_text())
            if rep:
                reports += 1
                out.write("FAIL sanitizer report in %s:\n  %s\n"
                          % (s.log_path, rep))
        out.write("sanitizer: %d server log(s) checked, %d with a report\n"
                  % (sum(1 for s in harness.STARTED if s.binary == target),
                     reports))
        failed += reports
    out.write("elapsed %.0fs\n" % (time.monotonic() - t0))
    out.write("%d passed, %d failed\n" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
