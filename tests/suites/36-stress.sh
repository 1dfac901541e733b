#!/usr/bin/env bash
# Suite 36: fuzzing and stress (tests/stress/README.md).
#   1. the RESP parser's libFuzzer target for SOLOIST_FUZZ_SECONDS (12 s):
#      one count; a crash, leak or invariant failure prints the input in hex;
#   2. every reproducer in tests/stress/repro/ (one count each): a server
#      bug found here stays a failing check until src/ is fixed;
#   3. stress.py against the ASan+UBSan server: random pipelines, garbage,
#      slow readers and vanishing clients for at most 40 rounds / 15 s with
#      a printed seed (SOLOIST_STRESS_SEED replays one), then PING, SIGTERM
#      exit 0 and no sanitizer report: one count per check it prints;
#   4. blocking_chaos.py against the ASan+UBSan server for 8 s beside 2
#      and 3 (60 s after them in the long run):
#      clients blocking and unblocking (served, timed out, killed,
#      CLIENT UNBLOCKed) while io-threads flips between 1 and 4 under load;
#      no lost reply or member, no crash: one count per check it prints.
# The fuzzer keeps one core busy while the reproducers and stress.py
# mostly wait on sockets, so 1 runs beside 2 and 3; its output is printed
# after theirs.
# `make test` runs the lengths above: every phase of stress.py, the
# unauthenticated one included, within the first three rounds, so 15 s
# runs each at least once and most several times. The long run (SOLOIST_LONG=1, `make
# check-long`) is the same at length: 120 s of fuzzing and 40 rounds of
# stress in up to 240 s, where rarer inputs and interleavings turn up.
# Skipped (nothing counted) with SOLOIST_FAST=1.
cd "$(dirname "$0")/../.."
if [ "${SOLOIST_FAST:-0}" = 1 ]; then
  echo "SOLOIST_FAST=1: fuzzing and stress skipped"; echo "0 passed, 0 failed"; exit 0
fi
fuzz_s=${SOLOIST_FUZZ_SECONDS:-12}; budget=15
if [ "${SOLOIST_LONG:-0}" = 1 ]; then fuzz_s=${SOLOIST_FUZZ_SECONDS:-120}; budget=240; fi
J=-j${SOLOIST_JOBS:-$(nproc)}
p=0; f=0
rm -rf build/stress-logs  # this run's server logs and failing inputs only
mkdir -p build/stress-logs
pass() { p=$((p + 1)); }
fail() { f=$((f + 1)); }

fuzz_log=build/stress-logs/suite-36-fuzz.out
if out=$(make --no-print-directory -s "$J" fuzz-build 2>&1); then
  tests/stress/fuzz.sh "$fuzz_s" 4096 >"$fuzz_log" 2>&1 &
  fuzz_pid=$!
else
  { echo "$out" | tail -20
    echo "fuzz_resp: FAIL (build failed; it needs clang and libclang-rt-14-dev: make deps)"; } >"$fuzz_log"
  fuzz_pid=
fi

export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if ! make --no-print-directory -s "$J" VARIANT=asan server >/dev/null; then
  [ -n "$fuzz_pid" ] && kill "$fuzz_pid" 2>/dev/null
  echo "asan build failed"; echo "$p passed, $((f + 1)) failed"; exit 1
fi

# 4 runs beside 2 and 3 in make test (its clients mostly wait too), and
# after them, alone, in the long run.
chaos_s=8; [ "${SOLOIST_LONG:-0}" = 1 ] && chaos_s=60
chaos_log=build/stress-logs/suite-36-blocking.out
run_chaos() {
  timeout $((chaos_s + 120)) python3 tests/stress/blocking_chaos.py --server build/asan/soloist-server \
    --seconds "$chaos_s" >"$chaos_log" 2>&1
}
chaos_pid=
if [ "${SOLOIST_LONG:-0}" != 1 ]; then run_chaos & chaos_pid=$!; fi

echo "== 2. reproducers of server bugs found by fuzzing/stress (tests/stress/repro/)"
if ls tests/stress/repro/*.txt >/dev/null 2>&1; then
  while read -r line; do
    echo "$line"
    case "$line" in PASS*) pass ;; FAIL*) fail ;; esac
  done < <(timeout 300 python3 tests/stress/repro.py --server build/asan/soloist-server tests/stress/repro/*.txt 2>&1)
else
  echo "(none)"
fi

echo "== 3. stress.py against build/asan/soloist-server"
log=build/stress-logs/suite-36.out
timeout $((budget + 200)) python3 tests/stress/stress.py --server build/asan/soloist-server --rounds 40 \
  --time-budget "$budget" ${SOLOIST_STRESS_SEED:+--seed "$SOLOIST_STRESS_SEED"} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
line=$(grep -E '^stress: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
if [ -z "$line" ]; then
  echo "stress.py printed no count (exit $rc)"; fail
else
  sp=$(sed -E 's/^stress: ([0-9]+) passed.*/\1/' <<<"$line")
  sf=$(sed -E 's/^stress: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
  p=$((p + sp)); f=$((f + sf))
fi

echo "== 4. blocking_chaos.py against build/asan/soloist-server (${chaos_s}s)"
if [ -n "$chaos_pid" ]; then wait "$chaos_pid"; else run_chaos; fi
cat "$chaos_log"
line=$(grep -E '^blocking_chaos: [0-9]+ passed, [0-9]+ failed' "$chaos_log" | tail -1)
if [ -z "$line" ]; then
  echo "blocking_chaos.py printed no count"; fail
else
  p=$((p + $(sed -E 's/^blocking_chaos: ([0-9]+) passed.*/\1/' <<<"$line")))
  f=$((f + $(sed -E 's/^blocking_chaos: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")))
fi

echo "== 1. fuzz_resp (libFuzzer, ${fuzz_s}s)"
if [ -n "$fuzz_pid" ] && wait "$fuzz_pid"; then pass; else fail; fi
cat "$fuzz_log"
echo "$p passed, $f failed"
[ "$f" = 0 ]
