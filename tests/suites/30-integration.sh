#!/usr/bin/env bash
# Step 0 end-to-end: the differential transcripts (soloist vs Debian's
# redis-server 7.0, byte for byte), the integration tests (limits, exits,
# expiry, INFO, redis-cli, redis-benchmark) and the C RESP client, all
# against build/soloist-server. One count per transcript file, per
# unittest test and per cmocka test; see tests/integration/README.md.
cd "$(dirname "$0")/../.."
J=-j${SOLOIST_JOBS:-$(nproc)}
if ! make --no-print-directory -s "$J" all >/dev/null ||
   ! make --no-print-directory -s "$J" integration-client >/dev/null; then
  echo "build failed"; echo "0 passed, 1 failed"; exit 1
fi
exec timeout 600 python3 tests/integration/run_all.py --name default \
  --target build/soloist-server --c-client build/tests-integration/c_client
