#!/usr/bin/env bash
# Steps 4 and 5 end to end: suite 30's transcripts, integration tests and C
# client again, against the server with its I/O threads on: io-threads 4
# with io-threads-always-active (every read and write offered to a
# worker: the ignition policy bypassed), and io-threads 4 with the default
# policy (adaptive: on this machine it mostly keeps the workers asleep,
# which is what it should do). The long run (SOLOIST_LONG=1, `make
# check-long`) adds io-threads 2 forced on, a single worker. io-threads 3
# runs under ThreadSanitizer in suite 37. Each run counts as suite 30
# does.
# A run spends nine tenths of its time waiting (expiry, timeouts, servers
# starting and stopping), so the runs go side by side, each against
# servers of its own on ports of their own, and each run's output is
# printed whole once all are done.
cd "$(dirname "$0")/../.."
J=-j${SOLOIST_JOBS:-$(nproc)}
if ! make --no-print-directory -s "$J" all >/dev/null || ! make --no-print-directory -s "$J" integration-client >/dev/null; then
  echo "build failed"; echo "0 passed, 1 failed"; exit 1
fi
out=build/test-logs/31-runs
rm -rf "$out"; mkdir -p "$out"
runs=("--io-threads 4 --io-threads-always-active yes" "--io-threads 4")
[ "${SOLOIST_LONG:-0}" = 1 ] && runs+=("--io-threads 2 --io-threads-always-active yes")
for i in "${!runs[@]}"; do
  args=${runs[$i]}
  name=threads-$(tr -dc '0-9a-z' <<<"$args" | cut -c1-40)
  SOLOIST_SERVER_ARGS="$args" timeout 600 python3 tests/integration/run_all.py --name "$name" \
    --target build/soloist-server --c-client build/tests-integration/c_client >"$out/$i.log" 2>&1 &
done
wait
p=0; f=0
for i in "${!runs[@]}"; do
  echo "== soloist-server ${runs[$i]} (whole output: $out/$i.log)"
  grep -E '^(FAIL|--|ERROR)|MISMATCH|UNEXPECTED' "$out/$i.log" | head -40
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/$i.log" | tail -1)
  if [ -z "$line" ]; then tail -20 "$out/$i.log"; f=$((f + 1)); continue; fi
  echo "$line"
  p=$((p + $(cut -d' ' -f1 <<<"$line"))); f=$((f + $(cut -d' ' -f3 <<<"$line")))
done
echo "$p passed, $f failed"
[ "$f" = 0 ]
