#!/usr/bin/env bash
# Runs cmocka test binaries and prints one "N passed, M failed" line.
#   tests/cmocka-run.sh BINARY...
# Each binary's own cmocka summary is kept in the output above the count.
set -u
p=0; f=0
for bin in "$@"; do
  echo "== $bin"
  out=$("$bin" 2>&1); rc=$?
  echo "$out"
  bp=$(grep -E '^\[  PASSED  \] [0-9]+ test' <<<"$out" | awk '{s+=$4} END{print s+0}')
  bf=$(grep -E '^\[  FAILED  \] [0-9]+ test' <<<"$out" | awk '{s+=$4} END{print s+0}')
  if [ "$bp" = 0 ] && [ "$bf" = 0 ]; then bf=1; echo "!! $bin printed no cmocka summary (exit $rc)"; fi
  if [ $rc != 0 ] && [ "$bf" = 0 ]; then bf=1; echo "!! $bin exited $rc"; fi
  p=$((p + bp)); f=$((f + bf))
done
echo "$p passed, $f failed"
[ $f = 0 ]
