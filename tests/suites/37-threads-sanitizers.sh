#!/usr/bin/env bash
# Steps 4 and 5 under the sanitizers, with the threads forced on:
#   1. suite 30's end-to-end run against the ThreadSanitizer server at
#      io-threads 3 (any report in a server's log fails it);
#   2. the same against the ASan+UBSan server at io-threads 4;
#   3. the chaos run: stress.py (pipelines, garbage, big replies to slow
#      readers, clients vanishing mid-read and mid-write while a worker owns
#      them, CLIENT KILL, output limits, idle timeouts, connection storms)
#      with io-threads changed by CONFIG SET at random moments throughout,
#      against the TSan server and then the ASan server, each for at most
#      6 rounds / 25 s with a printed seed. `make stress-threads` runs it
#      long.
# Skipped (nothing counted) with SOLOIST_FAST=1.
cd "$(dirname "$0")/../.."
if [ "${SOLOIST_FAST:-0}" = 1 ]; then
  echo "SOLOIST_FAST=1: threaded sanitizer runs skipped"; echo "0 passed, 0 failed"; exit 0
fi
if ! make --no-print-directory -s VARIANT=tsan server >/dev/null || ! make --no-print-directory -s VARIANT=asan server >/dev/null ||
   ! make --no-print-directory -s integration-client >/dev/null; then
  echo "sanitizer build failed"; echo "0 passed, 1 failed"; exit 1
fi
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
p=0; f=0
count() { # adds a "N passed, M failed" line to the totals
  if [ -z "$1" ]; then f=$((f + 1)); return; fi
  echo "$1"
  p=$((p + $(sed -E 's/^[^0-9]*([0-9]+) passed.*/\1/' <<<"$1"))); f=$((f + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$1")))
}
for run in "tsan 3" "asan 4"; do
  set -- $run
  echo "== integration, build/$1/soloist-server --io-threads $2 --io-threads-always-active yes"
  out=$(SOLOIST_SERVER_ARGS="--io-threads $2 --io-threads-always-active yes" timeout 600 python3 tests/integration/run_all.py \
        --name "$1-threads" --sanitizer --target "build/$1/soloist-server" --c-client build/tests-integration/c_client 2>&1)
  echo "$out" | grep -E '^(FAIL|ERROR)|MISMATCH|sanitizer:' | head -40
  count "$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)"
done
for v in tsan asan; do
  echo "== chaos: stress.py against build/$v/soloist-server, io-threads flipped 1..4"
  out=$(timeout 300 python3 tests/stress/stress.py --server "build/$v/soloist-server" --rounds 6 --time-budget 25 \
        --server-arg "--io-threads 3 --io-threads-always-active yes" --flip-io-threads 4 \
        ${SOLOIST_STRESS_SEED:+--seed "$SOLOIST_STRESS_SEED"} 2>&1)
  echo "$out" | grep -E '^(stress: seed|PASS|FAIL|SKIP|    |io-threads changed|seed)' | head -40
  count "$(echo "$out" | grep -E '^stress: [0-9]+ passed, [0-9]+ failed' | tail -1)"
done
echo "$p passed, $f failed"
[ "$f" = 0 ]
