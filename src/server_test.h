/* server_test.h — the phase clock with its readings given, for its tests.
 *
 * Step 0 (state layer). Only tests/unit/test_phase_clock.c and
 * server.c (which defines it) include this header: the server itself
 * reads its clocks through server_phase.
 * Threads: main thread only, as the clock it drives.
 */
#ifndef SOLOIST_SERVER_TEST_H
#define SOLOIST_SERVER_TEST_H

#include <stdint.h>

#include "server.h"

/* server_phase with the clock readings given: now_ns (monotonic) and
 * cpu_ns (this thread's CPU clock), which counts only where POLL begins
 * or ends with weight > 0: the poll's CPU between a reading where it
 * begins and one where it ends is counted weight times (server_phase
 * passes POLL_CPU_SAMPLE on sampled turns, 0 on the others, and 1 with
 * the wall clock as both readings on a turn that cannot wait). Tests
 * drive it with made-up readings. */
void server_phase_at(enum phase p, uint64_t now_ns, uint64_t cpu_ns, unsigned weight);

#endif
