#!/usr/bin/env bash
# The unit tests of code that threads share, built with ThreadSanitizer:
# the event loop polled by another thread (test_ae) and the allocator's
# per-thread used-memory count (test_zmalloc, which runs more threads than
# there are counting slots). Any report fails the binary. A new module
# that threads share adds its test here. Skipped (nothing counted) with
# SOLOIST_FAST=1.
cd "$(dirname "$0")/../.."
if [ "${SOLOIST_FAST:-0}" = 1 ]; then
  echo "SOLOIST_FAST=1: ThreadSanitizer unit run skipped"; echo "0 passed, 0 failed"; exit 0
fi
TESTS="test_ae test_zmalloc"
bins=()
for t in $TESTS; do bins+=("build/tsan/tests/$t"); done
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
make --no-print-directory -s -j"${SOLOIST_JOBS:-$(nproc)}" VARIANT=tsan "${bins[@]}" >/dev/null ||
  { echo "tsan build failed"; echo "0 passed, 1 failed"; exit 1; }
exec tests/cmocka-run.sh "${bins[@]}"
