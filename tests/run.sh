#!/usr/bin/env bash
# Runs every suite in tests/suites/ in name order and adds up their counts.
#
# A suite is an executable that prints, as its last count line,
# "N passed, M failed". Its whole output goes to build/test-logs/NAME.log;
# a suite that exits non-zero without failing a test, or prints no count,
# counts as one failure, so a crash can never look like a pass.
# SOLOIST_FAST=1 asks suites to skip their slow variants (sanitizers, browser).
# SOLOIST_SUITES="10 20" runs only suites whose names start with those prefixes.
set -u
cd "$(dirname "$0")/.."
mkdir -p build/test-logs
total_p=0; total_f=0; failed_suites=()
start=$(date +%s)
for s in tests/suites/*; do
  [ -x "$s" ] || continue
  name=$(basename "$s"); name=${name%.*}
  if [ -n "${SOLOIST_SUITES:-}" ]; then
    ok=0; for pre in $SOLOIST_SUITES; do [[ $name == $pre* ]] && ok=1; done
    [ $ok = 1 ] || continue
  fi
  log=build/test-logs/$name.log
  t0=$(date +%s)
  timeout 900 "$s" >"$log" 2>&1; rc=$?
  line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  p=0; f=0
  if [ -n "$line" ]; then
    p=$(sed -E 's/^([A-Za-z]+: )?([0-9]+) passed.*/\2/' <<<"$line")
    f=$(sed -E 's/^([A-Za-z]+: )?[0-9]+ passed, ([0-9]+) failed.*/\2/' <<<"$line")
  fi
  if [ -z "$line" ] || { [ $rc != 0 ] && [ "$f" = 0 ]; }; then
    f=$((f + 1)); line="${line:-no count line} (exit $rc)"
  fi
  printf '%-28s %-40s %4ss\n' "$name" "$line" "$(( $(date +%s) - t0 ))"
  if [ "$f" != 0 ]; then
    failed_suites+=("$name"); sed 's/^/    | /' "$log" | grep -E -i 'fail|error|assert|FAILED|mismatch' | head -20
  fi
  total_p=$((total_p + p)); total_f=$((total_f + f))
done
echo "elapsed $(( $(date +%s) - start ))s; logs in build/test-logs/"
[ ${#failed_suites[@]} -gt 0 ] && echo "failing suites: ${failed_suites[*]}"
echo "$total_p passed, $total_f failed"
[ "$total_f" = 0 ]
