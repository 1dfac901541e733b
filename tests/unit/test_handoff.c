/* test_handoff.c — step 4's exercise: the ownership hand-off, its
 * fallback, the argv frees and the one poller (src/io_offload.c).
 *
 * The real server loop with io-threads 3 and io-threads-always-active,
 * clients on socketpairs (loop_test.h). Each mistake these tests look for
 * is made to show every time, not when the scheduler happens to allow it:
 *
 *   - a read or write job that completes inside its submit
 *     (io_threads_debug_submitted waits there until the worker is done
 *     with it): a token stored after the enqueue then always overwrites
 *     the worker's COMPLETED, in every test;
 *   - workers held inside a job of their own (a FREE_OBJ job, whose
 *     handler the setup replaces with one that waits at a gate): the shared
 *     inbox then fills, or a job waits on it as long as the test likes,
 *     and which worker is free is the test's choice.
 *
 * Every wait gives up (loop_test.h's loop_deadline), so a stuck protocol
 * fails the test instead of hanging it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "client.h"
#include "io_offload.h"
#include "io_threads.h"
#include "networking.h"
#include "server.h"

#include "loop_test.h"

/* ------------------------------------------------------------ helpers */

/* The gates: a FREE_OBJ job holds its worker until that worker's gate
 * opens. */
#define WORKERS 2
static _Atomic int gate_open[WORKERS + 1] = {1, 1, 1};
static _Atomic int held[WORKERS + 1]; /* worker t is inside a gate job */
static _Alignas(8) char gate_token[8];

static void gate_job(void *payload) {
    (void)payload;
    int t = io_thread_id();
    atomic_store(&held[t], 1);
    while (!atomic_load(&gate_open[t])) sched_yield();
    atomic_store(&held[t], 0);
}

static int workers_held(void) { return atomic_load(&held[1]) + atomic_load(&held[2]); }

/* Holds both workers: each takes one job from the shared inbox at a time. */
static void hold_workers(void) {
    assert_true(io_threads_set_active(WORKERS + 1));
    for (int t = 1; t <= WORKERS; t++) atomic_store(&gate_open[t], 0);
    for (int i = 0; i < WORKERS; i++) assert_true(io_threads_submit(job_encode(gate_token, JOB_REQ_FREE_OBJ)));
    long long end = loop_deadline();
    while (workers_held() < WORKERS && util_mstime() < end) sched_yield();
    assert_int_equal(workers_held(), WORKERS);
}

static void release_worker(int t) { atomic_store(&gate_open[t], 1); }

static void release_workers(void) {
    for (int t = 1; t <= WORKERS; t++) release_worker(t);
}

/* Turns the loop until every job has run and every result is handled. */
static void settle(void) {
    long long end = loop_deadline();
    for (int i = 0; i < 10 && util_mstime() < end; i++) {
        while (io_threads_pending() > 0 && util_mstime() < end) sched_yield();
        turn();
    }
}

/* The submit hook, set for every test. While no worker is held, every
 * job runs to completion before the submit returns (a POLL job too, so
 * main never finds one out); while some are, a read or write job still
 * does whenever a worker is free to run it. The last job of each type is
 * kept for the test to look at. */
static job_word last_job[JOB_REQ_COUNT];
static void finish_in_submit(job_word job) {
    last_job[job_type(job)] = job;
    if (atomic_load(&gate_open[1]) && atomic_load(&gate_open[2])) {
        io_threads_drain();
        return;
    }
    if (workers_held() == WORKERS) return;
    _Atomic uint8_t *token = job_type(job) == JOB_REQ_READ_CLIENT    ? &((client *)job_ptr(job))->io_read_state
                             : job_type(job) == JOB_REQ_WRITE_CLIENT ? &((client *)job_ptr(job))->io_write_state
                                                                     : NULL;
    long long end = loop_deadline();
    while (token && atomic_load(token) != CLIENT_IO_COMPLETED && util_mstime() < end) sched_yield();
}

static int setup(void **state) {
    (void)state;
    assert_int_equal(loop_server_init(3), 0);
    /* The server's FREE_OBJ handler frees objects; these tests need it to
     * hold a worker instead. Handlers change only while no pool runs, so
     * the pool is restarted around the change (io_offload keeps using
     * whatever pool there is). */
    io_threads_shutdown();
    io_threads_set_handler(JOB_REQ_FREE_OBJ, gate_job);
    io_threads_init(3);
    /* Main keeps turning while results are owed (it would otherwise
     * block in epoll_wait, and the poll would stay on main). */
    server.io_threads_idle_spin_us = 60 * 1000 * 1000;
    io_threads_debug_submitted = finish_in_submit;
    return 0;
}

/* After each test, pass or fail: no worker held, and no client
 * left (a failed test leaves its own; a wrong hand-off may leave one
 * owned for ever, and the next test would trip over it). Once every job
 * has run and the results are taken, no worker touches a client, so the
 * tokens go back to main by force. */
static int after_each(void **state) {
    (void)state;
    release_workers();
    settle();
    for (client *c = server.clients; c; c = c->next) {
        atomic_store(&c->io_read_state, CLIENT_IO_IDLE);
        atomic_store(&c->io_write_state, CLIENT_IO_IDLE);
    }
    while (server.clients) client_free(server.clients);
    turn();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    io_threads_debug_submitted = NULL;
    loop_server_destroy();
    io_threads_set_handler(JOB_REQ_FREE_OBJ, NULL);
    return 0;
}

static io_offload_stats stats(void) {
    io_offload_stats st;
    io_offload_get_stats(&st);
    return st;
}

static uint64_t worker_jobs(int tid, job_request type) {
    uint64_t jobs[JOB_REQ_COUNT];
    io_offload_worker_jobs(tid, jobs);
    return jobs[type];
}

/* Turns the loop until the hook has seen a job of this type for c. */
static void turn_until_submitted(client *c, job_request type) {
    last_job[type] = 0;
    long long end = loop_deadline();
    while (!(last_job[type] && job_ptr(last_job[type]) == c) && util_mstime() < end) turn();
    assert_true(last_job[type] && job_ptr(last_job[type]) == c);
}

/* ------------------------------------------------------------ hand-off */

/* The worker finishes each job inside the submit (finish_in_submit). The
 * token main stored
 * before the enqueue has become COMPLETED by the time the call site
 * returns; a token stored after the enqueue overwrites it with PENDING,
 * and the client would look owned for ever. Twice, so the take-back's
 * IDLE is needed for the second round. */
static void test_handoff_token_before_enqueue(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    for (int round = 0; round < 2; round++) {
        send_all(k.peer, "PING\r\n", 6);
        turn_until_submitted(c, JOB_REQ_READ_CLIENT);
        assert_int_equal(atomic_load(&c->io_read_state), CLIENT_IO_COMPLETED);
        /* The next turn takes the read back, runs PING and hands the
         * reply to a worker. */
        turn_until_submitted(c, JOB_REQ_WRITE_CLIENT);
        assert_int_equal(atomic_load(&c->io_read_state), CLIENT_IO_IDLE);
        assert_int_equal(atomic_load(&c->io_write_state), CLIENT_IO_COMPLETED);
        expect_reply(k.peer, "+PONG\r\n");
        assert_int_equal(atomic_load(&c->io_write_state), CLIENT_IO_IDLE);
    }
    close_conn(&k);
}

/* Both workers held and the shared inbox full: the read and the write
 * must happen on main, at once, and leave the client as free as before.
 * A second request proves the tokens went back to IDLE. */
static void test_handoff_queue_full_falls_back(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    settle();
    hold_workers();
    int filled = 0;
    while (io_threads_submit(job_encode(gate_token, JOB_REQ_FREE_OBJ))) filled++;
    assert_true(filled > 0);
    io_offload_stats before = stats();
    for (int i = 0; i < 2; i++) {
        roundtrip(&k, "ECHO full\r\n", "$4\r\nfull\r\n");
        assert_int_equal(atomic_load(&c->io_read_state), CLIENT_IO_IDLE);
        assert_int_equal(atomic_load(&c->io_write_state), CLIENT_IO_IDLE);
    }
    io_offload_stats after = stats();
    assert_true(after.fallbacks[IO_FALLBACK_QUEUE_FULL] >= before.fallbacks[IO_FALLBACK_QUEUE_FULL] + 4);
    assert_int_equal(after.reads_done, before.reads_done);
    assert_int_equal(after.writes_done, before.writes_done);
    release_workers();
    settle();
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    close_conn(&k);
}

/* --------------------------------------------------------------- argv */

/* Worker 1 is held, so worker 2 parses the command: its argv must go back
 * to worker 2, the thread whose allocator made it, and every object of
 * it must be freed (the end mark is the last one main did not keep). */
static void test_argv_freed_by_the_parser(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    roundtrip(&k, "SET warm v0\r\n", "+OK\r\n");
    size_t mem_before = 0;
    for (int round = 1; round <= 2; round++) {
        settle();
        if (round == 2) mem_before = zmalloc_used_memory(); /* round 1 warms worker 2 up */
        hold_workers();
        release_worker(2); /* worker 1 stays held */
        long long end = loop_deadline();
        while (atomic_load(&held[2]) && util_mstime() < end) sched_yield();
        uint64_t w1 = worker_jobs(1, JOB_REQ_FREE_ARGV), w2 = worker_jobs(2, JOB_REQ_FREE_ARGV);
        uint64_t reads2 = worker_jobs(2, JOB_REQ_READ_CLIENT);
        /* The new value stays in the keyspace (main releases it), the
         * old one goes; the other objects go back to worker 2. */
        char req[64];
        snprintf(req, sizeof req, "SET warm v%d\r\nECHO drop\r\n", round);
        roundtrip(&k, req, "+OK\r\n$4\r\ndrop\r\n");
        assert_true(worker_jobs(2, JOB_REQ_READ_CLIENT) > reads2);
        assert_int_equal(c->cur_tid, 2);
        release_workers();
        settle();
        assert_true(worker_jobs(2, JOB_REQ_FREE_ARGV) > w2);
        assert_int_equal(worker_jobs(1, JOB_REQ_FREE_ARGV), w1);
    }
    /* Round 2 replaced a value by one of the same size: whatever more is
     * allocated now was not freed. */
    assert_int_equal(zmalloc_used_memory(), mem_before);
    close_conn(&k);
}

/* --------------------------------------------------------------- poll */

/* Both workers held, so a POLL job waits on the shared inbox for as many
 * turns as the test likes. While it is out, main neither polls itself
 * (a second client's request stays unread) nor sends another one: the
 * jobs outstanding stay the two held, one read and one POLL. */
static void test_poll_one_poller(void **state) {
    (void)state;
    conn a = open_conn(), b = open_conn();
    roundtrip(&a, "PING\r\n", "+PONG\r\n");
    roundtrip(&b, "PING\r\n", "+PONG\r\n");
    settle();
    uint64_t polls = stats().polls_done;
    hold_workers();
    send_all(a.peer, "PING\r\n", 6);
    long long end = loop_deadline();
    while (atomic_load(&a.c->io_read_state) == CLIENT_IO_IDLE && util_mstime() < end) turn();
    assert_int_equal(atomic_load(&a.c->io_read_state), CLIENT_IO_PENDING); /* queued, unrun */
    /* A turn sends the POLL job (once the one before it is taken back). */
    for (int i = 0; i < 10 && io_threads_pending() < 4; i++) turn();
    assert_int_equal(io_threads_pending(), 4);
    send_all(b.peer, "PING\r\n", 6);
    for (int i = 0; i < 50; i++) turn();
    assert_int_equal(atomic_load(&b.c->io_read_state), CLIENT_IO_IDLE); /* not polled by main */
    assert_int_equal(io_threads_pending(), 4);
    assert_int_equal(stats().polls_done, polls);
    release_workers();
    expect_reply(a.peer, "+PONG\r\n");
    expect_reply(b.peer, "+PONG\r\n");
    assert_true(stats().polls_done > polls);
    close_conn(&a);
    close_conn(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_handoff_token_before_enqueue, after_each),
        cmocka_unit_test_teardown(test_handoff_queue_full_falls_back, after_each),
        cmocka_unit_test_teardown(test_argv_freed_by_the_parser, after_each),
        cmocka_unit_test_teardown(test_poll_one_poller, after_each),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
