/* io_threads_test.h — the pool's hooks for the hand-off and wake-up tests.
 *
 * Step 2 (threads layer). Only tests (tests/unit/test_handoff.c,
 * tests/unit/test_io_threads.c) and io_threads.c, which defines them,
 * include this header: nothing in the server sets a hook, and a
 * production header does not offer them.
 * Threads: each hook is set by a test on main while no job is out.
 */
#ifndef SOLOIST_IO_THREADS_TEST_H
#define SOLOIST_IO_THREADS_TEST_H

#include "job.h"

/* Tests only; NULL in the server. Called on main after each job a submit
 * accepted. tests/unit/test_handoff.c waits there until the job has run,
 * the fastest worker there can be, so that a hand-off whose order is
 * wrong fails every time instead of once in a while. */
extern void (*io_threads_debug_submitted)(job_word job);

/* The steps of a worker's sleep (hand-shake 1 in io_threads.c) at which
 * io_threads_debug_sleep is called. */
enum {
    IO_SLEEP_STEP_BEGIN, /* idle past its spin, before [c]: not yet counted asleep */
    IO_SLEEP_STEP_FOUND, /* [e] took work, before [g]: its word still reads 1 */
    IO_SLEEP_STEP_WAIT,  /* [e] took nothing, before [f]'s FUTEX_WAIT */
};

/* Tests only; NULL in the server. Called on the worker at each step above
 * (io_thread_id says which); a test that waits there holds that worker at
 * the step, so tests/unit/test_io_threads.c can build the interleavings
 * that hand-shake 1 must survive every time instead of once in a while.
 * Atomic, unlike the hook above: a test may set it while workers run
 * (tests/unit/test_io_offload.c holds idle workers with it). */
extern void (*_Atomic io_threads_debug_sleep)(int step);

#endif
