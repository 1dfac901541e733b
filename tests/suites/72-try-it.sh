#!/usr/bin/env bash
# The chapters' try-it boxes, run as the book shows them (chapters/try-it/
# NN.sh, short form): each exits 0 and prints what its `# expect:` lines
# promise, and every chapter's box shows a script (tools/tryit.py).
cd "$(dirname "$0")/../.."
python3 tools/tryit.py --log-dir build/test-logs/try-it
