#!/usr/bin/env bash
# The same end-to-end run against the ASan+UBSan server
# (build/asan/soloist-server); any sanitizer report in a server's log
# fails the run. Skipped (nothing counted) with SOLOIST_FAST=1.
cd "$(dirname "$0")/../.."
if [ "${SOLOIST_FAST:-0}" = 1 ]; then
  echo "SOLOIST_FAST=1: ASan integration run skipped"; echo "0 passed, 0 failed"; exit 0
fi
J=-j${SOLOIST_JOBS:-$(nproc)}
if ! make --no-print-directory -s "$J" VARIANT=asan server >/dev/null ||
   ! make --no-print-directory -s "$J" integration-client >/dev/null; then
  echo "asan build failed"; echo "0 passed, 1 failed"; exit 1
fi
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
exec timeout 800 python3 tests/integration/run_all.py --name asan --sanitizer \
  --target build/asan/soloist-server --c-client build/tests-integration/c_client
