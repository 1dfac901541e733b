/* io_threads_test.h — the pool's hook for the hand-off tests.
 *
 * Step 3 (threads layer). Only tests (tests/unit/test_handoff.c) and
 * io_threads.c, which defines it, include this header: nothing in the
 * server sets the hook, and a production header does not offer it.
 * Threads: set by a test on main while no job is out; called on main.
 */
#ifndef SOLOIST_IO_THREADS_TEST_H
#define SOLOIST_IO_THREADS_TEST_H

#include "job.h"

/* Tests only; NULL in the server. Called on main after each job a submit
 * accepted. tests/unit/test_handoff.c waits there until the job has run,
 * the fastest worker there can be, so that a hand-off whose order is
 * wrong fails every time instead of once in a while. */
extern void (*io_threads_debug_submitted)(job_word job);

#endif
