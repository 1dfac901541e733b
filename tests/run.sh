#!/usr/bin/env bash
# Runs every suite in tests/suites/ in name order and adds up their counts
# (in make test, two pairs of them side by side: BESIDE below says which and why).
#
# A suite is an executable that prints, as its last count line,
# "N passed, M failed". Its whole output goes to build/test-logs/NAME.log;
# a suite that exits non-zero without failing a test, or prints no count,
# counts as one failure, so a crash can never look like a pass.
#   --build              first build everything `make all` builds (one
#                        line, timed like a suite; what `make test` does)
#   SOLOIST_FAST=1       asks suites to skip their slow variants (sanitizers, browser)
#   SOLOIST_LONG=1       asks suites for their long runs only: the repetitions
#                        and lengths `make test` leaves out (`make check-long`)
#   SOLOIST_SUITES="10 20" runs only suites whose names start with those prefixes
# The last lines are the elapsed time of the whole run (build included) and
# the total "N passed, M failed".
set -u
cd "$(dirname "$0")/.."
mkdir -p build/test-logs
start=$(date +%s)

# Every build uses both cores: the suites build three variants of the
# server and the graders build it again per exercise and per handout.
export SOLOIST_JOBS=${SOLOIST_JOBS:-$(nproc)}
# Those builds compile the same sources with the same flags over and over
# (each exercise's grader builds the whole server in a tree of its own):
# ccache makes every build after the first a copy. The cache lives in
# build/, so a fresh clone starts cold; NOHASHDIR lets two trees share it.
# A CC given by the caller is kept.
if [ -z "${CC:-}" ] && command -v ccache >/dev/null; then
  export CC="ccache cc" CCACHE_DIR=$PWD/build/ccache CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
fi

# A suite's long runs (every mutant, every handout end to end) take longer
# than the 15 minutes one suite of `make test` may.
limit=900
[ "${SOLOIST_LONG:-0}" = 1 ] && limit=5400

row() { printf '%-28s %-40s %4ss\n' "$1" "$2" "$3"; }
total_p=0; total_f=0; failed_suites=(); first_fail=()
# A failing check's line: a suite's own FAIL or "not ok", or cmocka's.
fail_re='^ *(FAIL|not ok)|\[  FAILED  \]|\[  ERROR   \]|\[   LINE   \]'

if [ "${1:-}" = --build ]; then
  t0=$(date +%s)
  if make --no-print-directory -s -j"$SOLOIST_JOBS" all >build/test-logs/build.log 2>&1; then
    row build "built" "$(( $(date +%s) - t0 ))"
  else
    row build "FAILED (build/test-logs/build.log)" "$(( $(date +%s) - t0 ))"
    tail -30 build/test-logs/build.log | sed 's/^/    | /'
    echo "elapsed $(( $(date +%s) - start ))s; logs in build/test-logs/"
    echo "0 passed, 1 failed"
    exit 1
  fi
fi

# Pairs of suites run side by side: the second starts with the first, the
# next suite starts only when both have ended (so nothing else ever runs
# beside either), and the second is reported in its own place, with the
# seconds it took from the pair's start. Only suites that time nothing and spend
# much of their time waiting: the integration suite waits on its servers
# (a fifth of two cores busy), its ASan twin is the same tests; the book's
# build and the handouts' grading leave a third of the cores idle
# between them; the layer checks and the tree's standalone check, and the
# findings' readings and the anchors, are light checks that time nothing.
# The suites that time something (27's spinning, 40's latencies, 72's
# try-it figures) always run alone.
# The long runs (SOLOIST_LONG=1) pair nothing: they are not held to make
# test's time, and there the handouts' grading runs every step's threaded
# tests, whose waits are bounded in time, beside a browser opening every
# page of the book.
declare -A BESIDE=([30-integration]=35-integration-asan [70-book]=81-handouts [15-layers]=16-standalone
  [55-findings]=60-anchors)
[ "${SOLOIST_LONG:-0}" = 1 ] && BESIDE=()
declare -A bg_rc bg_secs

selected() { # suite name -> 0 when SOLOIST_SUITES takes it
  [ -z "${SOLOIST_SUITES:-}" ] && return 0
  local pre; for pre in $SOLOIST_SUITES; do [[ $1 == $pre* ]] && return 0; done
  return 1
}
log_of() { if [ "${SOLOIST_LONG:-0}" = 1 ]; then echo "build/test-logs/$1-long.log"; else echo "build/test-logs/$1.log"; fi; }

for s in tests/suites/*; do
  [ -x "$s" ] || continue
  name=$(basename "$s"); name=${name%.*}
  selected "$name" || continue
  log=$(log_of "$name")
  if [ -n "${bg_rc[$name]:-}" ]; then # ran beside an earlier suite
    rc=${bg_rc[$name]}
    secs=${bg_secs[$name]}
  else
    t0=$(date +%s)
    partner=${BESIDE[$name]:-} ppid=""
    if [ -n "$partner" ] && [ -x "tests/suites/$partner.sh" ] && selected "$partner"; then
      timeout $limit "tests/suites/$partner.sh" >"$(log_of "$partner")" 2>&1 &
      ppid=$!
    fi
    timeout $limit "$s" >"$log" 2>&1; rc=$?
    secs=$(( $(date +%s) - t0 ))
    if [ -n "$ppid" ]; then
      wait "$ppid"; bg_rc[$partner]=$?
      bg_secs[$partner]=$(( $(date +%s) - t0 ))
    fi
  fi
  line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  p=0; f=0
  if [ -n "$line" ]; then
    p=$(sed -E 's/^([A-Za-z]+: )?([0-9]+) passed.*/\2/' <<<"$line")
    f=$(sed -E 's/^([A-Za-z]+: )?[0-9]+ passed, ([0-9]+) failed.*/\2/' <<<"$line")
  fi
  if [ -z "$line" ] || { [ $rc != 0 ] && [ "$f" = 0 ]; }; then
    f=$((f + 1)); line="${line:-no count line} (exit $rc)"
  fi
  row "$name" "$line" "$secs"
  if [ "$f" != 0 ]; then
    # The failing checks first, indented or not (a suite's passing lines
    # often say "errors 0", "0 failed" or "failing as it must" too), then
    # the other lines that mention failure and are not a passing check.
    # (A stress round's summary line counts the "error+close" replies it
    # provoked: that is not a failure.)
    failed_suites+=("$name")
    { grep -E -A2 "$fail_re" "$log" | head -12
      grep -E -i 'fail|error|assert|mismatch' "$log" |
        grep -v -E '^ *(ok|FAIL|not ok)\b|^(\[ | +\{)|errors 0|, 0 failed|^ *round [0-9]+: ' | head -8; } |
      awk '!seen[$0]++' | sed 's/^/    | /' | cut -c1-400
    # Its first failing line again at the very end, where a reader of
    # only the output's tail (a CI excerpt) still sees why it failed.
    first=$(grep -E -m1 "$fail_re" "$log" | sed -E 's/^ +//' | cut -c1-300)
    first_fail+=("$name: ${first:-$line}")
  fi
  total_p=$((total_p + p)); total_f=$((total_f + f))
done
echo "elapsed $(( $(date +%s) - start ))s; logs in build/test-logs/"
if [ ${#failed_suites[@]} -gt 0 ]; then
  echo "failing suites: ${failed_suites[*]}"
  printf '  %s\n' "${first_fail[@]}"
fi
echo "$total_p passed, $total_f failed"
[ "$total_f" = 0 ]
