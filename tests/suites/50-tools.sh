#!/usr/bin/env bash
# The reader's tools: Python unittests of pinned-source, anchors, layers, steps,
# the book build and check, and exercise/grading, each on fixtures made in
# a temp dir (a git repository standing in for Valkey, fixture chapters, a
# fixture project built with the real Makefile). No network. The tests
# run side by side, one per core (tests/tools/run.py says why it may).
# The long run (SOLOIST_LONG=1, `make check-long`) runs only the tests
# marked fixtures.long_run, which make test leaves out and names: the
# exercise tool's slowest fixture checks, whose ground suite 80 covers on
# the real exercises.
cd "$(dirname "$0")/../.."
export SOLOIST_OFFLINE=1
exec timeout 600 python3 tests/tools/run.py
