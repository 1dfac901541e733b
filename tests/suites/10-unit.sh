#!/usr/bin/env bash
# cmocka unit tests of every module, -O2 build. The binaries that start
# no thread run two at a time, the threaded ones alone after them
# (tests/cmocka-run.sh).
cd "$(dirname "$0")/../.."
make --no-print-directory -s -j"${SOLOIST_JOBS:-$(nproc)}" unit >/dev/null || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
exec tests/cmocka-run.sh --jobs "${SOLOIST_JOBS:-$(nproc)}" build/tests/test_*
