#!/usr/bin/env bash
# Steps 4 and 5 end to end: suite 30's transcripts, integration tests and C
# client again, against the server with its I/O threads on. Three runs:
# io-threads 2 and 4 with io-threads-always-active (every read and write
# offered to a worker: the ignition policy bypassed), and io-threads 4
# with the default policy (adaptive: on this machine it mostly keeps the
# workers asleep, which is what it should do). io-threads 3 runs under
# ThreadSanitizer in suite 37. Each run counts as suite 30 does.
cd "$(dirname "$0")/../.."
if ! make --no-print-directory -s all >/dev/null || ! make --no-print-directory -s integration-client >/dev/null; then
  echo "build failed"; echo "0 passed, 1 failed"; exit 1
fi
p=0; f=0
for args in "--io-threads 2 --io-threads-always-active yes" "--io-threads 4 --io-threads-always-active yes" \
            "--io-threads 4"; do
  name=threads-$(tr -dc '0-9a-z' <<<"$args" | cut -c1-40)
  echo "== soloist-server $args"
  out=$(SOLOIST_SERVER_ARGS="$args" timeout 600 python3 tests/integration/run_all.py --name "$name" \
        --target build/soloist-server --c-client build/tests-integration/c_client 2>&1)
  echo "$out" | grep -E '^(FAIL|--|ERROR)|MISMATCH' | head -40
  line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
  if [ -z "$line" ]; then echo "$out" | tail -20; f=$((f + 1)); continue; fi
  echo "$line"
  p=$((p + $(cut -d' ' -f1 <<<"$line"))); f=$((f + $(cut -d' ' -f3 <<<"$line")))
done
echo "$p passed, $f failed"
[ "$f" = 0 ]
