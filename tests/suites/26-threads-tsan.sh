#!/usr/bin/env bash
# The queues and the I/O thread pool (steps 1-3), and the server with its
# I/O threads on (steps 4-5, test_io_offload; step 6's batch over several
# clients' completed reads, test_memory_prefetch; step 7's replies by
# reference written by a worker, test_reply_ref), and the trace's rings
# (test_trace: two threads record while main reads), under ThreadSanitizer.
# These are the tests where TSan earns its keep: every item in them crosses
# threads, so a missing acquire or release shows up as a reported data race
# on the item's payload (halt_on_error makes the first report fail the
# binary). The interleavings differ from run to run, so more runs find
# more: `make test` runs each binary once, and `make check-long`
# (SOLOIST_LONG=1) runs each twice more, so that the two together make the
# three runs each binary gets.
cd "$(dirname "$0")/../.."
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
tests="test_queue_spsc test_queue_spmc test_queue_mpsc test_io_threads test_io_offload test_handoff test_watermark test_memory_prefetch test_reply_ref test_trace"
bins=""
for t in $tests; do bins="$bins build/tsan/tests/$t"; done
make --no-print-directory -s -j"${SOLOIST_JOBS:-$(nproc)}" VARIANT=tsan $bins >/dev/null ||
  { echo "tsan build failed"; echo "0 passed, 1 failed"; exit 1; }
runs=1
[ "${SOLOIST_LONG:-0}" = 1 ] && runs=2
all=""
for _ in $(seq $runs); do all="$all $bins"; done
exec tests/cmocka-run.sh $all
