#!/usr/bin/env bash
# Steps 4 and 5 under the sanitizers, with the threads forced on:
#   1. suite 30's end-to-end run against the ThreadSanitizer server at
#      io-threads 3 (any report in a server's log fails it);
#   2. the same against the ASan+UBSan server at io-threads 4 (in the
#      long run only);
#   3. the chaos run: stress.py (pipelines, garbage, big replies to slow
#      readers, clients vanishing mid-read and mid-write while a worker owns
#      them, CLIENT KILL, output limits, idle timeouts, connection storms)
#      with io-threads changed by CONFIG SET at random moments throughout,
#      against the TSan server and the ASan server, with a printed seed;
#   4. beside 3, the blocking pops' chaos (tests/stress/blocking_chaos.py,
#      lists and sorted sets) against the TSan server: 6 s, 60 s long.
# 1 (or 2) runs first, then the two chaos runs side by side: each
# spends most of its time waiting on sockets and timers, against servers
# of its own on ports of their own; each one's output is printed whole
# once both are done.
# `make test` runs the chaos for 3 rounds (rounds 0-2 between them run
# every phase, the unauthenticated one and the SCAN walk included);
# the long run (SOLOIST_LONG=1, `make check-long`) is 2, then the chaos
# at length, 40 rounds in up to 300 s under each sanitizer. `make
# stress-threads` runs it longer still.
# Skipped (nothing counted) with SOLOIST_FAST=1.
cd "$(dirname "$0")/../.."
if [ "${SOLOIST_FAST:-0}" = 1 ]; then
  echo "SOLOIST_FAST=1: threaded sanitizer runs skipped"; echo "0 passed, 0 failed"; exit 0
fi
J=-j${SOLOIST_JOBS:-$(nproc)}
if ! make --no-print-directory -s "$J" VARIANT=tsan server >/dev/null ||
   ! make --no-print-directory -s "$J" VARIANT=asan server >/dev/null ||
   ! make --no-print-directory -s "$J" integration-client >/dev/null; then
  echo "sanitizer build failed"; echo "0 passed, 1 failed"; exit 1
fi
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
rounds=3; budget=25; blocking_s=6
if [ "${SOLOIST_LONG:-0}" = 1 ]; then rounds=40; budget=300; blocking_s=60; fi
out=build/test-logs/37-runs
rm -rf "$out"; mkdir -p "$out"
p=0; f=0
count() { # adds a "N passed, M failed" line to the totals
  if [ -z "$1" ]; then f=$((f + 1)); return; fi
  echo "$1"
  p=$((p + $(sed -E 's/^[^0-9]*([0-9]+) passed.*/\1/' <<<"$1"))); f=$((f + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$1")))
}

# make test runs the integration suite against the TSan server; the long
# run against the ASan server (suite 35 runs it under ASan with one
# thread, and the chaos below runs the ASan server with its threads).
runs=("tsan 3"); [ "${SOLOIST_LONG:-0}" = 1 ] && runs=("asan 4")
for run in "${runs[@]}"; do
  set -- $run
  SOLOIST_SERVER_ARGS="--io-threads $2 --io-threads-always-active yes" timeout 600 python3 tests/integration/run_all.py \
    --name "$1-threads" --sanitizer --target "build/$1/soloist-server" --c-client build/tests-integration/c_client \
    >"$out/integration-$1.log" 2>&1
  echo "== integration, build/$1/soloist-server --io-threads $2 --io-threads-always-active yes ($out/integration-$1.log)"
  grep -E '^(FAIL|ERROR)|MISMATCH|UNEXPECTED|sanitizer:' "$out/integration-$1.log" | head -40
  count "$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/integration-$1.log" | tail -1)"
done

for v in tsan asan; do
  timeout $((budget + 300)) python3 tests/stress/stress.py --server "build/$v/soloist-server" --rounds $rounds \
    --time-budget $budget --server-arg "--io-threads 3 --io-threads-always-active yes" --flip-io-threads 4 \
    ${SOLOIST_STRESS_SEED:+--seed "$SOLOIST_STRESS_SEED"} >"$out/chaos-$v.log" 2>&1 &
done
# The blocking pops' chaos (suite 36 runs it under ASan) under TSan too,
# beside them: list and sorted-set waiters served, timed out, killed and
# CLIENT UNBLOCKed while io-threads flips between 1 and 4.
timeout $((blocking_s + 120)) python3 tests/stress/blocking_chaos.py --server build/tsan/soloist-server \
  --seconds "$blocking_s" >"$out/blocking-tsan.log" 2>&1 &
wait
for v in tsan asan; do
  echo "== chaos: stress.py against build/$v/soloist-server, io-threads flipped 1..4 ($out/chaos-$v.log)"
  grep -E '^(stress: seed|PASS|FAIL|SKIP|    |io-threads changed|seed)' "$out/chaos-$v.log" | head -40
  count "$(grep -E '^stress: [0-9]+ passed, [0-9]+ failed' "$out/chaos-$v.log" | tail -1)"
done
echo "== blocking chaos: blocking_chaos.py against build/tsan/soloist-server, ${blocking_s}s ($out/blocking-tsan.log)"
grep -E '^(FAIL|PASS|blocking_chaos)' "$out/blocking-tsan.log" | head -40
count "$(grep -E '^blocking_chaos: [0-9]+ passed, [0-9]+ failed' "$out/blocking-tsan.log" | tail -1 | sed 's/^blocking_chaos: //')"
echo "$p passed, $f failed"
[ "$f" = 0 ]
