#!/usr/bin/env bash
# The same unit tests built with ASan+UBSan; any report fails the binary.
cd "$(dirname "$0")/../.."
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
make --no-print-directory -s VARIANT=asan unit >/dev/null || { echo "asan build failed"; echo "0 passed, 1 failed"; exit 1; }
exec tests/cmocka-run.sh build/asan/tests/test_*
