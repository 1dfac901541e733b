#!/usr/bin/env bash
# The same unit tests built with ASan+UBSan; any report fails the binary.
# The binaries that start no thread run two at a time (most of the suite's
# time); the threaded ones then run one at a time, alone: a threaded test
# waits a bounded time for its workers, and a neighbour on the other core
# could make it miss (tests/cmocka-run.sh says which is which).
cd "$(dirname "$0")/../.."
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
make --no-print-directory -s -j"${SOLOIST_JOBS:-$(nproc)}" VARIANT=asan unit >/dev/null ||
  { echo "asan build failed"; echo "0 passed, 1 failed"; exit 1; }
exec tests/cmocka-run.sh --jobs "${SOLOIST_JOBS:-$(nproc)}" build/asan/tests/test_*
