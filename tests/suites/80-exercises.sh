#!/usr/bin/env bash
# make check-exercises in fast mode (-O2, one run) without its mutants: for
# every exercise, the starter builds and scores zero, the reference (src/)
# scores full marks and needs no bonus region for them, the tests match
# their hash manifest, the starter is in clang-format's style, the
# README's points table is current and its contract table matches the
# tests and mutants both ways. The long
# run (SOLOIST_LONG=1, `make check-long`, which CI runs) is check-exercises
# FAST=1 over every mutant, which also proves the README's mutant tables
# and that a suggested writing order's first group alone scores (the
# mutants' wiring is tested in make test on suite 50's fixtures);
# `make check-exercises` is the full matrix.
cd "$(dirname "$0")/../.."
sample=MUTANTS=0; limit=600
if [ "${SOLOIST_LONG:-0}" = 1 ]; then sample=; limit=5000; fi
out=$(timeout $limit make --no-print-directory -s check-exercises FAST=1 $sample 2>&1); rc=$?
echo "$out"
line=$(grep -E '^check-exercises: [0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
if [ -z "$line" ]; then echo "check-exercises printed no count (exit $rc)"; echo "0 passed, 1 failed"; exit 1; fi
p=$(sed -E 's/^check-exercises: ([0-9]+) passed.*/\1/' <<<"$line")
f=$(sed -E 's/^check-exercises: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
echo "$p passed, $f failed"
[ "$f" = 0 ]
