#!/usr/bin/env bash
# Every C source is in the project's style (.clang-format, Debian's
# clang-format 14): make format-check, one case per file.
cd "$(dirname "$0")/../.."
out=$(make --no-print-directory -s format-check 2>&1); rc=$?
echo "$out" | grep -v '^format-check: [0-9]* files'
total=$(echo "$out" | sed -n 's/^format-check: \([0-9]*\) files, \([0-9]*\) not formatted$/\1 \2/p')
set -- $total
n=${1:-0}; bad=${2:-1}
echo "$((n - bad)) passed, $bad failed"
[ $rc = 0 ]
