#!/usr/bin/env bash
# make check-exercises in fast mode (-O2, one run): for every step, the
# starter builds and scores zero, the reference (src/) scores full marks and
# needs no bonus region for them, every mutant in exercises/NN-*/mutants/ is
# caught by the test it names, the tests match their hash manifest, and the
# README's points and mutant tables are current. `make check-exercises` (no
# FAST) runs the full matrix.
cd "$(dirname "$0")/../.."
out=$(timeout 600 make --no-print-directory -s check-exercises FAST=1 2>&1); rc=$?
echo "$out"
line=$(grep -E '^check-exercises: [0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
if [ -z "$line" ]; then echo "check-exercises printed no count (exit $rc)"; echo "0 passed, 1 failed"; exit 1; fi
p=$(sed -E 's/^check-exercises: ([0-9]+) passed.*/\1/' <<<"$line")
f=$(sed -E 's/^check-exercises: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
echo "$p passed, $f failed"
[ "$f" = 0 ]
