#!/usr/bin/env bash
# Runs cmocka test binaries and prints one "N passed, M failed" line.
#   tests/cmocka-run.sh [--jobs N] BINARY...
# Each binary's own cmocka summary is kept in the output above the count,
# in the order the binaries were named.
# With --jobs N, binaries whose test source starts no thread run N at a
# time; the others then run one at a time, alone: a threaded test waits a
# bounded time for its workers, and a neighbour on the other core could
# make it miss. A test source counts as threaded when it (or the header
# it includes for threads) names pthread or io_threads_set, unless it says
# "cmocka-run: no timed wait" (its threads wait on nothing with a bound, so a
# neighbour can slow it but not fail it); see threaded().
set -u
jobs=1
if [ "${1:-}" = --jobs ]; then jobs=$2; shift 2; fi
p=0; f=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

threaded() { # binary -> 0 when its test source starts threads
  local src
  src=tests/unit/$(basename "$1").c
  [ -f "$src" ] || return 0 # unknown: the safe side
  grep -q 'cmocka-run: no timed wait' "$src" && return 1
  grep -q -E 'pthread|io_threads_set|threads_test\.h' "$src"
}

run_one() { # binary index -> its output in $tmp/index.out, exit status in .rc
  "$1" >"$tmp/$2.out" 2>&1
  echo $? >"$tmp/$2.rc"
}

i=0; pool=()
for bin in "$@"; do
  if [ "$jobs" -gt 1 ] && ! threaded "$bin"; then
    run_one "$bin" $i &
    pool+=($!)
    if [ ${#pool[@]} -ge "$jobs" ]; then wait "${pool[0]}"; pool=("${pool[@]:1}"); fi
  fi
  i=$((i + 1))
done
wait
i=0
for bin in "$@"; do
  [ -f "$tmp/$i.rc" ] || run_one "$bin" $i
  i=$((i + 1))
done

i=0
for bin in "$@"; do
  echo "== $bin"
  out=$(cat "$tmp/$i.out"); rc=$(cat "$tmp/$i.rc")
  echo "$out"
  bp=$(grep -E '^\[  PASSED  \] [0-9]+ test' <<<"$out" | awk '{s+=$4} END{print s+0}')
  bf=$(grep -E '^\[  FAILED  \] [0-9]+ test' <<<"$out" | awk '{s+=$4} END{print s+0}')
  if [ "$bp" = 0 ] && [ "$bf" = 0 ]; then bf=1; echo "!! $bin printed no cmocka summary (exit $rc)"; fi
  if [ "$rc" != 0 ] && [ "$bf" = 0 ]; then bf=1; echo "!! $bin exited $rc"; fi
  p=$((p + bp)); f=$((f + bf))
  i=$((i + 1))
done
echo "$p passed, $f failed"
[ $f = 0 ]
