/* test_trace.c — the event recorder's rings (src/trace.c).
 *
 * One thread first: nothing is recorded (and no argument evaluated)
 * while recording is off; a ring keeps its events in the order its thread
 * recorded them; a full ring keeps its oldest and counts the rest; a new
 * recording starts every ring afresh without its thread being told, with
 * a smaller limit than the ring holds or a larger one (a new ring); the
 * deadline and TRACE STOP end what is recorded; a thread without a ring
 * is counted. Then two writer threads record while main takes snapshots
 * over and over: every snapshot must show each ring as a whole prefix of
 * its thread's events (run under ThreadSanitizer by suite 26, which
 * reports any read of a slot the thread had not published).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "trace.h"
#include "threads_test.h"
#include "util.h"

static trace_snapshot snap;

static int teardown(void **state) {
    (void)state;
    trace_shutdown();
    return 0;
}

static void start(int threads, uint32_t events, uint64_t ms) {
    const char *err = NULL;
    if (trace_start(threads, events, ms, &err) != 0) fail_msg("trace_start: %s", err);
}

static int evaluated;
static uint64_t count_evaluation(void) { return (uint64_t)++evaluated; }

static void test_trace_off_records_nothing(void **state) {
    (void)state;
    assert_false(trace_on());
    TRACE(0, TRACE_READ_BEGIN, count_evaluation(), 0, 0);
    trace_emit(0, TRACE_READ_BEGIN, 1, 2, 3); /* never started: nothing to record into */
    assert_int_equal(evaluated, 0);           /* off, TRACE evaluates no argument */
    trace_snapshot_take(&snap);
    assert_int_equal(snap.threads, 0);
    start(1, TRACE_EVENTS_MIN, 10000);
    TRACE(0, TRACE_READ_BEGIN, count_evaluation(), 0, 0);
    assert_int_equal(evaluated, 1);
    trace_stop();
    assert_false(trace_on());
    TRACE(0, TRACE_READ_BEGIN, count_evaluation(), 0, 0);
    assert_int_equal(evaluated, 1);
    trace_snapshot_take(&snap);
    assert_int_equal(snap.threads, 1);
    assert_int_equal(snap.ring[0].n, 1);
    assert_int_equal(snap.ring[0].ev[0].a, 1);
}

static void test_trace_keeps_each_threads_order(void **state) {
    (void)state;
    start(3, TRACE_EVENTS_MIN, 10000);
    for (uint64_t i = 0; i < 100; i++) {
        trace_emit(0, TRACE_CMD_BEGIN, i, i + 1, i + 2);
        trace_emit(2, TRACE_JOB_TAKE, 1000 + i, 0, 0);
    }
    trace_snapshot_take(&snap);
    assert_int_equal(snap.threads, 3);
    assert_int_equal(snap.ring[0].n, 100);
    assert_int_equal(snap.ring[1].n, 0); /* thread 1 recorded nothing */
    assert_int_equal(snap.ring[2].n, 100);
    for (uint32_t i = 0; i < 100; i++) {
        const trace_event *e = &snap.ring[0].ev[i];
        assert_int_equal(e->type, TRACE_CMD_BEGIN);
        assert_int_equal(e->tid, 0);
        assert_int_equal(e->a, i);
        assert_int_equal(e->b, i + 1);
        assert_int_equal(e->c, i + 2);
        assert_true(e->ts_ns >= snap.start_ns);
        if (i) assert_true(e->ts_ns >= snap.ring[0].ev[i - 1].ts_ns);
        assert_int_equal(snap.ring[2].ev[i].a, 1000 + i);
        assert_int_equal(snap.ring[2].ev[i].tid, 2);
    }
    assert_true(snap.end_ns == snap.start_ns + 10000ull * 1000000);
}

static void test_trace_full_ring_drops_newest(void **state) {
    (void)state;
    start(1, TRACE_EVENTS_MIN, 10000);
    for (uint64_t i = 0; i < TRACE_EVENTS_MIN + 476; i++) trace_emit(0, TRACE_PARSED, i, 0, 0);
    trace_snapshot_take(&snap);
    assert_int_equal(snap.ring[0].n, TRACE_EVENTS_MIN);
    assert_int_equal(snap.ring[0].dropped, 476);
    assert_int_equal(snap.ring[0].ev[0].a, 0); /* the oldest are kept */
    assert_int_equal(snap.ring[0].ev[TRACE_EVENTS_MIN - 1].a, TRACE_EVENTS_MIN - 1);
    trace_status st;
    trace_get_status(&st);
    assert_true(st.on);
    assert_int_equal(st.recorded, TRACE_EVENTS_MIN);
    assert_int_equal(st.dropped, 476);
    assert_int_equal(st.events_max, TRACE_EVENTS_MIN);
    assert_true(st.remaining_ms > 0 && st.remaining_ms <= 10000);
}

/* A second recording: rings read empty until their thread records, and
 * start again at slot 0 with the refusals forgotten, under a smaller
 * limit than the ring holds; then a larger one, which takes a new ring. */
static void test_trace_restart_starts_afresh(void **state) {
    (void)state;
    start(2, 2048, 10000);
    for (uint64_t i = 0; i < 3000; i++) trace_emit(0, TRACE_PARSED, i, 0, 0);
    trace_emit(1, TRACE_PARSED, 7, 0, 0);
    start(2, TRACE_EVENTS_MIN, 10000);
    trace_snapshot_take(&snap);
    assert_int_equal(snap.ring[0].n, 0);
    assert_int_equal(snap.ring[0].dropped, 0);
    assert_int_equal(snap.ring[1].n, 0);
    for (uint64_t i = 0; i < 1100; i++) trace_emit(0, TRACE_PARSED, 100 + i, 0, 0);
    trace_snapshot_take(&snap);
    assert_int_equal(snap.ring[0].n, TRACE_EVENTS_MIN);
    assert_int_equal(snap.ring[0].dropped, 1100 - TRACE_EVENTS_MIN);
    assert_int_equal(snap.ring[0].ev[0].a, 100);
    const trace_event *old = snap.ring[0].ev;
    start(2, 8192, 10000);
    for (uint64_t i = 0; i < 5000; i++) trace_emit(0, TRACE_PARSED, i, 0, 0);
    trace_snapshot_take(&snap);
    assert_ptr_not_equal(snap.ring[0].ev, old); /* a ring of 8192 now; the old one kept until shutdown */
    assert_int_equal(snap.ring[0].n, 5000);
    assert_int_equal(snap.ring[0].dropped, 0);
    assert_int_equal(snap.ring[0].ev[4999].a, 4999);
}

static void sleep_ms(long ms) {
    struct timespec ts = {0, ms * 1000000};
    nanosleep(&ts, NULL);
}

/* Nothing stamped after the end is recorded: past the duration, after
 * TRACE STOP, and the cron turns the switch off. */
static void test_trace_ends_at_deadline_and_stop(void **state) {
    (void)state;
    start(1, TRACE_EVENTS_MIN, 1);
    trace_emit(0, TRACE_PARSED, 1, 0, 0);
    sleep_ms(5);
    assert_true(trace_on()); /* nobody stopped it yet */
    trace_emit(0, TRACE_PARSED, 2, 0, 0);
    trace_cron(util_monotonic_ns());
    assert_false(trace_on());
    trace_snapshot_take(&snap);
    assert_int_equal(snap.ring[0].n, 1);
    assert_int_equal(snap.ring[0].ev[0].a, 1);

    start(1, TRACE_EVENTS_MIN, 10000);
    trace_emit(0, TRACE_PARSED, 3, 0, 0);
    trace_stop();
    trace_emit(0, TRACE_PARSED, 4, 0, 0); /* as a thread that read the switch before the stop */
    trace_snapshot_take(&snap);
    assert_false(snap.on);
    assert_int_equal(snap.ring[0].n, 1);
    assert_true(snap.end_ns < snap.start_ns + 10000ull * 1000000); /* the end moved to the stop */
    trace_status st;
    trace_get_status(&st);
    assert_false(st.on);
    assert_int_equal(st.remaining_ms, 0);
}

static void test_trace_start_refuses_bad_arguments(void **state) {
    (void)state;
    const char *err = NULL;
    assert_int_equal(trace_start(0, TRACE_EVENTS_MIN, 100, &err), -1);
    assert_string_equal(err, "thread count out of range");
    assert_int_equal(trace_start(TRACE_THREADS_MAX + 1, TRACE_EVENTS_MIN, 100, &err), -1);
    assert_int_equal(trace_start(1, TRACE_EVENTS_MIN - 1, 100, &err), -1);
    assert_string_equal(err, "trace-buffer-events out of range");
    assert_int_equal(trace_start(1, TRACE_EVENTS_MAX + 1, 100, &err), -1);
    assert_int_equal(trace_start(1, TRACE_EVENTS_MIN, 0, &err), -1);
    assert_string_equal(err, "duration out of range");
    assert_int_equal(trace_start(1, TRACE_EVENTS_MIN, TRACE_MS_MAX + 1, &err), -1);
    assert_int_equal(trace_start(TRACE_THREADS_MAX, TRACE_EVENTS_MAX, 100, &err), -1);
    assert_string_equal(err, "the rings would pass 1 GB: fewer trace-buffer-events");
    assert_false(trace_on());
}

/* A thread past the rings (the pool grew while recording) is counted,
 * until trace_threads_changed gives it a ring. */
static void test_trace_thread_without_ring_is_counted(void **state) {
    (void)state;
    start(2, TRACE_EVENTS_MIN, 10000);
    trace_emit(3, TRACE_PARSED, 1, 0, 0);
    trace_emit(TRACE_THREADS_MAX, TRACE_PARSED, 1, 0, 0);
    trace_snapshot_take(&snap);
    assert_int_equal(snap.threads, 2);
    assert_int_equal(snap.no_ring, 2);
    trace_threads_changed(4);
    trace_emit(3, TRACE_PARSED, 9, 0, 0);
    trace_snapshot_take(&snap);
    assert_int_equal(snap.threads, 4);
    assert_int_equal(snap.ring[3].n, 1);
    assert_int_equal(snap.ring[3].ev[0].a, 9);
}

/* ------------------------------------------------ two writers and main */

#define WRITER_EVENTS TEST_ITEMS(40000)

static void *writer(void *arg) {
    int tid = (int)(intptr_t)arg;
    for (uint64_t i = 0; i < WRITER_EVENTS && !test_stuck(); i++) {
        TRACE(tid, TRACE_JOB_TAKE, i, (uint64_t)tid, i * 3);
        if (i % 1024 == 0) sched_yield();
    }
    return NULL;
}

/* Each ring, as a snapshot shows it, is its thread's events 0 .. n - 1,
 * whole, in order; and n never goes back between two snapshots. */
static void check_prefix(const trace_ring_view *v, int tid, uint32_t *last_n) {
    assert_true(v->n >= *last_n);
    *last_n = v->n;
    for (uint32_t i = 0; i < v->n; i++) {
        const trace_event *e = &v->ev[i];
        if (e->a != i || e->b != (uint64_t)tid || e->c != (uint64_t)i * 3 || e->tid != tid ||
            e->type != TRACE_JOB_TAKE || (i && e->ts_ns < v->ev[i - 1].ts_ns))
            fail_msg("thread %d's slot %u of %u: a=%llu b=%llu c=%llu tid=%u type=%u", tid, i, v->n,
                     (unsigned long long)e->a, (unsigned long long)e->b, (unsigned long long)e->c, e->tid, e->type);
    }
}

static void test_trace_two_writers_while_main_reads(void **state) {
    (void)state;
    test_start();
    /* Room for three quarters of the events: the rings fill and refuse. */
    uint32_t room = (uint32_t)(WRITER_EVENTS * 3 / 4);
    start(3, room, 60000);
    pthread_t t1, t2;
    start_thread(&t1, writer, (void *)(intptr_t)1);
    start_thread(&t2, writer, (void *)(intptr_t)2);
    uint32_t last[3] = {0, 0, 0};
    int snapshots = 0;
    for (;;) {
        trace_snapshot_take(&snap);
        check_prefix(&snap.ring[1], 1, &last[1]);
        check_prefix(&snap.ring[2], 2, &last[2]);
        snapshots++;
        if ((snap.ring[1].n + snap.ring[1].dropped >= WRITER_EVENTS &&
             snap.ring[2].n + snap.ring[2].dropped >= WRITER_EVENTS) ||
            test_stuck())
            break;
        sched_yield();
    }
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert_false(test_stuck());
    trace_snapshot_take(&snap);
    for (int t = 1; t <= 2; t++) {
        check_prefix(&snap.ring[t], t, &last[t]);
        assert_int_equal(snap.ring[t].n, room);
        assert_int_equal(snap.ring[t].dropped, WRITER_EVENTS - room);
    }
    assert_int_equal(snap.ring[0].n, 0);
    print_message("%d snapshots while the two threads recorded\n", snapshots);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_trace_off_records_nothing, teardown),
        cmocka_unit_test_teardown(test_trace_keeps_each_threads_order, teardown),
        cmocka_unit_test_teardown(test_trace_full_ring_drops_newest, teardown),
        cmocka_unit_test_teardown(test_trace_restart_starts_afresh, teardown),
        cmocka_unit_test_teardown(test_trace_ends_at_deadline_and_stop, teardown),
        cmocka_unit_test_teardown(test_trace_start_refuses_bad_arguments, teardown),
        cmocka_unit_test_teardown(test_trace_thread_without_ring_is_counted, teardown),
        cmocka_unit_test_teardown(test_trace_two_writers_while_main_reads, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
