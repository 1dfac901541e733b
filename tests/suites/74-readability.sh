#!/usr/bin/env bash
# The book's main line is readable on first reading: over chapters 00-09,
# median sentence <= 20 words, longest tenth <= 35, no paragraph over 150
# (tools/readability.py; fine print, code and tables are not main line).
cd "$(dirname "$0")/../.."
python3 tools/readability.py; rc=$?
if [ $rc = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $rc
