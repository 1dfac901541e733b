/* test_phase_clock.c — the main thread's phase clock (step 0,
 * src/server.c@phase-clock and @phase-totals): the poll phase split into
 * CPU and wait, busy time, and the serial share s.
 *
 * Most tests drive server_phase_at with made-up clock readings, so every
 * figure is known exactly: dropping poll CPU from busy time, or counting
 * it twice (once as poll CPU and again inside another phase or the wait),
 * changes a total these tests compare to the nanosecond. One test runs
 * the real clocks and checks bounds that a loaded machine cannot break
 * (the thread burns CPU, then sleeps). Weight 1 in the made-up turns
 * means "every turn sampled"; the sampling itself (one turn in
 * POLL_CPU_SAMPLE, counted that many times) has tests of its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "server.h"
#include "server_loop.h"
#include "server_test.h"
#include "util.h"

/* A fresh clock at wall time 0, in OTHER. */
static int reset(void **state) {
    (void)state;
    memset(server.phase_ns, 0, sizeof(server.phase_ns));
    memset(server.phase_calls, 0, sizeof(server.phase_calls));
    server.poll_cpu_ns = server.poll_cpu_since_ns = 0;
    server.poll_cpu_weight = 0;
    server.poll_waits = 0;
    server.phase_now = PHASE_OTHER;
    server.phase_since_ns = 0;
    return 0;
}

/* One loop turn starting at wall time t with the thread CPU clock at cpu:
 * before_sleep's bookkeeping, a poll of poll_wall ns of which poll_cpu ns
 * on CPU, then a read, a command and the write pass. Non-poll switches
 * pass a CPU reading of 0, as server_phase does. Returns the turn's end. */
static uint64_t turn(uint64_t t, uint64_t *cpu, uint64_t other, uint64_t poll_wall, uint64_t poll_cpu, uint64_t read,
                     uint64_t exec, uint64_t write) {
    t += other;
    server_phase_at(PHASE_POLL, t, *cpu, 1);
    t += poll_wall;
    *cpu += poll_cpu;
    server_phase_at(PHASE_OTHER, t, *cpu, 1);
    server_phase_at(PHASE_READ, t, 0, 1);
    t += read;
    server_phase_at(PHASE_EXEC, t, 0, 1);
    t += exec;
    server_phase_at(PHASE_WRITE, t, 0, 1);
    t += write;
    server_phase_at(PHASE_OTHER, t, 0, 1);
    return t;
}

static void test_poll_splits_into_cpu_and_wait(void **state) {
    (void)state;
    uint64_t cpu = 5000000; /* the thread CPU clock does not start at 0 */
    uint64_t t = turn(0, &cpu, 100, 10000, 2000, 300, 200, 400);
    assert_int_equal(t, 11000);
    phase_totals pt = server_phase_totals();
    assert_int_equal(server.phase_ns[PHASE_POLL], 10000);
    assert_int_equal(pt.poll_cpu_ns, 2000);
    assert_int_equal(pt.poll_wait_ns, 8000);
    assert_int_equal(pt.total_ns, 11000);
    /* busy = poll_cpu + read + exec + write + other, nothing else. */
    assert_int_equal(pt.busy_ns, 2000 + 300 + 200 + 400 + 100);
    assert_int_equal(pt.serial_ns, 200 + 100);
    assert_true(pt.serial_share > 0.0999 && pt.serial_share < 0.1001);
    /* The five busy parts add up to busy exactly. */
    uint64_t parts = pt.poll_cpu_ns;
    for (int p = PHASE_READ; p < PHASE_COUNT; p++) parts += server.phase_ns[p];
    assert_int_equal(parts, pt.busy_ns);
    assert_int_equal(pt.poll_cpu_ns + pt.poll_wait_ns, server.phase_ns[PHASE_POLL]);
}

static void test_poll_cpu_accumulates_over_turns(void **state) {
    (void)state;
    uint64_t cpu = 123;
    uint64_t t = 0;
    for (int i = 0; i < 1000; i++) t = turn(t, &cpu, 10, 1000 + (uint64_t)i, 100 + (uint64_t)(i % 7), 20, 30, 40);
    uint64_t want_cpu = 0, want_poll = 0;
    for (int i = 0; i < 1000; i++) want_cpu += 100 + (uint64_t)(i % 7), want_poll += 1000 + (uint64_t)i;
    phase_totals pt = server_phase_totals();
    assert_int_equal(server.phase_calls[PHASE_POLL], 1000);
    assert_int_equal(server.phase_ns[PHASE_POLL], want_poll);
    assert_int_equal(pt.poll_cpu_ns, want_cpu);
    assert_int_equal(pt.busy_ns, want_cpu + 1000 * (10 + 20 + 30 + 40));
    assert_int_equal(pt.total_ns, t);
}

/* A CPU reading taken outside POLL is never charged to it: the readings
 * server_phase passes elsewhere (0) leave poll CPU alone. */
static void test_cpu_reading_counts_only_at_poll_edges(void **state) {
    (void)state;
    server_phase_at(PHASE_READ, 100, 999999, 1);
    server_phase_at(PHASE_EXEC, 200, 0, 1);
    server_phase_at(PHASE_OTHER, 300, 777777, 1);
    assert_int_equal(server_phase_totals().poll_cpu_ns, 0);
    server_phase_at(PHASE_POLL, 400, 1000, 1);
    server_phase_at(PHASE_OTHER, 900, 1300, 1);
    assert_int_equal(server_phase_totals().poll_cpu_ns, 300);
    assert_int_equal(server_phase_totals().poll_wait_ns, 200);
}

/* The two clocks are read a few ns apart; poll CPU never exceeds the
 * poll's wall time, and a CPU clock that seems to go back counts 0. */
static void test_poll_cpu_is_bounded_by_its_wall_time(void **state) {
    (void)state;
    server_phase_at(PHASE_POLL, 1000, 50000, 1);
    server_phase_at(PHASE_OTHER, 1100, 50500, 1); /* 500 ns CPU in 100 ns wall */
    assert_int_equal(server_phase_totals().poll_cpu_ns, 100);
    assert_int_equal(server_phase_totals().poll_wait_ns, 0);
    server_phase_at(PHASE_POLL, 1200, 60000, 1);
    server_phase_at(PHASE_OTHER, 1300, 59000, 1);
    assert_int_equal(server_phase_totals().poll_cpu_ns, 100);
    assert_int_equal(server_phase_totals().poll_wait_ns, 100);
}

static void test_no_busy_time_gives_share_zero(void **state) {
    (void)state;
    phase_totals pt = server_phase_totals();
    assert_int_equal(pt.busy_ns, 0);
    assert_true(pt.serial_share == 0.0);
}

static void test_reset_stats_clears_poll_cpu(void **state) {
    (void)state;
    uint64_t cpu = 0;
    turn(0, &cpu, 1, 100, 50, 1, 1, 1);
    assert_int_equal(server_phase_totals().poll_cpu_ns, 50);
    server_reset_stats();
    phase_totals pt = server_phase_totals();
    assert_int_equal(pt.poll_cpu_ns, 0);
    assert_int_equal(pt.total_ns, 0);
}

static uint64_t thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void spin_cpu(uint64_t ns) {
    uint64_t start = thread_cpu();
    volatile uint64_t sink = 0;
    while (thread_cpu() - start < ns) sink += 1;
}

/* Sampling: a poll that began without a CPU reading (weight 0) adds no
 * poll CPU, whatever its end passes; its wall time is still counted. */
static void test_unsampled_turn_adds_no_poll_cpu(void **state) {
    (void)state;
    server_phase_at(PHASE_POLL, 100, 0, 0);
    server_phase_at(PHASE_OTHER, 1100, 999, POLL_CPU_SAMPLE);
    phase_totals pt = server_phase_totals();
    assert_int_equal(server.phase_ns[PHASE_POLL], 1000);
    assert_int_equal(pt.poll_cpu_ns, 0);
    assert_int_equal(pt.poll_wait_ns, 1000);
}

/* A sampled turn stands for POLL_CPU_SAMPLE turns: its poll CPU counts
 * that many times, and the next unsampled turns add only wall time. */
static void test_sampled_turn_counts_for_the_sample(void **state) {
    (void)state;
    uint64_t t = 0;
    server_phase_at(PHASE_POLL, t, 5000, POLL_CPU_SAMPLE);
    server_phase_at(PHASE_OTHER, t += 1000, 5100, POLL_CPU_SAMPLE); /* 100 ns on CPU */
    for (int i = 1; i < POLL_CPU_SAMPLE; i++) {
        server_phase_at(PHASE_POLL, t += 10, 0, 0);
        server_phase_at(PHASE_OTHER, t += 1000, 0, 0);
    }
    phase_totals pt = server_phase_totals();
    assert_int_equal(server.phase_ns[PHASE_POLL], 1000 * POLL_CPU_SAMPLE);
    assert_int_equal(pt.poll_cpu_ns, 100 * POLL_CPU_SAMPLE);
    assert_int_equal(pt.poll_cpu_ns + pt.poll_wait_ns, server.phase_ns[PHASE_POLL]);
}

/* An estimate that overshoots the polls' wall time by chance is capped
 * at it: poll CPU never exceeds the poll. */
static void test_estimate_is_capped_at_poll_wall(void **state) {
    (void)state;
    server_phase_at(PHASE_POLL, 0, 0, POLL_CPU_SAMPLE);
    server_phase_at(PHASE_OTHER, 1000, 900, POLL_CPU_SAMPLE); /* 900 x 16 > 1000 */
    phase_totals pt = server_phase_totals();
    assert_int_equal(pt.poll_cpu_ns, 1000);
    assert_int_equal(pt.poll_wait_ns, 0);
}

/* The real clocks: server_phase samples the thread's CPU clock at POLL's
 * edges on one turn in POLL_CPU_SAMPLE. Each of POLL_CPU_SAMPLE turns
 * spins 3 ms before POLL (so a missing reading going in would charge it
 * to poll CPU: 3.5 ms a turn), then inside POLL spins 0.5 ms and sleeps
 * 2 ms. The estimate must come out near 0.5 ms a turn. The upper bound,
 * 2 ms, leaves 1.5 ms for what a loaded machine adds to the sampled
 * turn's CPU clock (the wake-up from the sleep, an interrupt, a fault)
 * and still fails the missing reading. */
static void test_real_clocks_split_spin_from_sleep(void **state) {
    (void)state;
    server.phase_since_ns = util_monotonic_ns(); /* the real clock from here */
    for (int i = 0; i < POLL_CPU_SAMPLE; i++) {
        spin_cpu(3000000);
        server_phase(PHASE_POLL);
        spin_cpu(500000);
        struct timespec nap = {0, 2 * 1000 * 1000};
        while (nanosleep(&nap, &nap) == -1) {
        }
        server_phase(PHASE_OTHER);
    }
    phase_totals pt = server_phase_totals();
    assert_true(pt.poll_cpu_ns >= (uint64_t)POLL_CPU_SAMPLE * 500000);
    assert_true(pt.poll_cpu_ns < (uint64_t)POLL_CPU_SAMPLE * 2000000);
    assert_true(pt.poll_wait_ns >= (uint64_t)POLL_CPU_SAMPLE * 1000000);
    assert_true(server.phase_ns[PHASE_OTHER] >= (uint64_t)POLL_CPU_SAMPLE * 3000000);
    assert_int_equal(pt.poll_cpu_ns + pt.poll_wait_ns, server.phase_ns[PHASE_POLL]);
}

/* A poll that cannot wait (the idle spin's turns, step 4) is on the CPU
 * throughout: all of its wall time is poll CPU, none is wait, and it
 * reads no CPU clock, so it leaves the sampling counter alone. Half a
 * millisecond of sleep inside it shows it is the wall clock that counts:
 * a sampled thread clock would miss the sleep. */
static void test_turn_that_cannot_wait_is_all_cpu(void **state) {
    (void)state;
    server.phase_since_ns = util_monotonic_ns();
    server_phase_poll(0);
    struct timespec nap = {0, 500 * 1000};
    while (nanosleep(&nap, &nap) == -1) {
    }
    server_phase(PHASE_OTHER);
    phase_totals pt = server_phase_totals();
    assert_true(server.phase_ns[PHASE_POLL] >= 500000);
    assert_int_equal(pt.poll_cpu_ns, server.phase_ns[PHASE_POLL]);
    assert_int_equal(pt.poll_wait_ns, 0);
    assert_int_equal(server.poll_waits, 0);
}

/* The sample is one in POLL_CPU_SAMPLE of the turns that may wait, however
 * many spin turns come between: turns 0 and POLL_CPU_SAMPLE of the waiting
 * ones are sampled, with three spin turns after each waiting one. */
static void test_sample_counts_waiting_turns_only(void **state) {
    (void)state;
    server.phase_since_ns = util_monotonic_ns();
    int sampled = 0;
    for (int i = 0; i < 2 * POLL_CPU_SAMPLE; i++) {
        server_phase_poll(1);
        sampled += server.poll_cpu_weight == POLL_CPU_SAMPLE;
        server_phase(PHASE_OTHER);
        for (int k = 0; k < 3; k++) {
            server_phase_poll(0);
            assert_int_equal(server.poll_cpu_weight, 1);
            server_phase(PHASE_OTHER);
        }
    }
    assert_int_equal(sampled, 2);
    assert_int_equal(server.poll_waits, 2 * POLL_CPU_SAMPLE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_poll_splits_into_cpu_and_wait, reset),
        cmocka_unit_test_setup(test_turn_that_cannot_wait_is_all_cpu, reset),
        cmocka_unit_test_setup(test_sample_counts_waiting_turns_only, reset),
        cmocka_unit_test_setup(test_poll_cpu_accumulates_over_turns, reset),
        cmocka_unit_test_setup(test_cpu_reading_counts_only_at_poll_edges, reset),
        cmocka_unit_test_setup(test_poll_cpu_is_bounded_by_its_wall_time, reset),
        cmocka_unit_test_setup(test_no_busy_time_gives_share_zero, reset),
        cmocka_unit_test_setup(test_reset_stats_clears_poll_cpu, reset),
        cmocka_unit_test_setup(test_unsampled_turn_adds_no_poll_cpu, reset),
        cmocka_unit_test_setup(test_sampled_turn_counts_for_the_sample, reset),
        cmocka_unit_test_setup(test_estimate_is_capped_at_poll_wall, reset),
        cmocka_unit_test_setup(test_real_clocks_split_spin_from_sleep, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
