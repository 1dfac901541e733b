#!/usr/bin/env bash
# The chapters' try-it boxes, run as the book shows them (chapters/try-it/
# NN.sh, short form): each exits 0 and prints what its `# expect:` lines
# promise, and every chapter's box shows a script (tools/tryit.py).
cd "$(dirname "$0")/../.."
# The boxes whose short form still takes seconds run in the long run
# (SOLOIST_LONG=1, `make check-long`) only: make test's time is budgeted.
skip=--skip=02,05,06; [ "${SOLOIST_LONG:-0}" = 1 ] && skip=
python3 tools/tryit.py $skip --log-dir build/test-logs/try-it
