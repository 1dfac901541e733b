/* test_io_offload.c — steps 4 and 5: the server with its I/O threads on
 * (src/io_offload.c, src/client_io.c, the main halves in networking.c).
 *
 * The real server loop with io-threads 3 and io-threads-always-active, so
 * every read and write is offered to a worker; clients on socketpairs
 * (loop_test.h). Checks: replies are whole and in order whoever did the
 * I/O; the work really went to workers (the counters say so); FREE_ARGV
 * reaches the worker that parsed; a client freed while a worker owns it
 * is freed after the hand-back; the watermark bounds what a write sends;
 * io-threads changes at run time with jobs in flight, and a change down
 * to one thread lets main sleep again; main, past its
 * spin, sleeps while a POLL job waits behind a busy worker. Suite 26 runs this
 * under ThreadSanitizer as well.
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
#include "client_io.h"
#include "config.h"
#include "io_offload.h"
#include "io_threads.h"
#include "io_threads_test.h"
#include "networking.h"
#include "reply.h"
#include "server.h"

#include "loop_test.h"

static int setup(void **state) {
    (void)state;
    loop_server_start(3, 1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    loop_server_stop();
    return 0;
}

static io_offload_stats stats(void) {
    io_offload_stats st;
    io_offload_get_stats(&st);
    return st;
}

/* A pipeline of SETs and GETs: every reply whole and in order, and the
 * reads, writes and argv frees went to workers. */
static void test_pipeline_through_workers(void **state) {
    (void)state;
    conn k = open_conn();
    io_offload_stats before = stats();
    char req[64 * 40], want[64 * 40];
    size_t rl = 0, wl = 0;
    for (int round = 0; round < 50; round++) {
        rl = wl = 0;
        for (int i = 0; i < 20; i++) {
            rl += (size_t)snprintf(req + rl, sizeof req - rl, "SET k%d v%d-%d\r\nGET k%d\r\n", i, i, round, i);
            char v[32];
            int vl = snprintf(v, sizeof v, "v%d-%d", i, round);
            wl += (size_t)snprintf(want + wl, sizeof want - wl, "+OK\r\n$%d\r\n%s\r\n", vl, v);
        }
        send_all(k.peer, req, rl);
        expect_reply(k.peer, want);
    }
    io_offload_stats after = stats();
    assert_true(after.reads_done > before.reads_done);
    assert_true(after.writes_done > before.writes_done);
    assert_true(after.argv_frees > before.argv_frees);
    /* The argv frees ran on workers, each on the one that parsed it. */
    io_threads_drain();
    uint64_t jobs[JOB_REQ_COUNT], free_argv = 0;
    for (int tid = 1; tid < io_threads_num(); tid++) {
        io_offload_worker_jobs(tid, jobs);
        free_argv += jobs[JOB_REQ_FREE_ARGV];
    }
    assert_true(free_argv > 0);
    close_conn(&k);
}

/* A large string value replaced by SET is freed by a worker (FREE_OBJ);
 * a small one (EMBSTR) on main. */
static void test_replaced_value_freed_by_a_worker(void **state) {
    (void)state;
    conn k = open_conn();
    char big[200];
    memset(big, 'v', sizeof big);
    char req[512];
    int n =
        snprintf(req, sizeof req, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%zu\r\n%.*s\r\n", sizeof big, (int)sizeof big, big);
    io_offload_stats before = stats();
    for (int i = 0; i < 20; i++) {
        send_all(k.peer, req, (size_t)n);
        expect_reply(k.peer, "+OK\r\n");
    }
    roundtrip(&k, "SET small a\r\n", "+OK\r\n");
    roundtrip(&k, "SET small b\r\n", "+OK\r\n");
    io_offload_stats after = stats();
    /* 19 replacements; each went to a worker unless no worker was awake. */
    assert_true(after.obj_frees - before.obj_frees + after.fallbacks[IO_FALLBACK_INACTIVE] -
                    before.fallbacks[IO_FALLBACK_INACTIVE] >=
                19);
    assert_true(after.obj_frees > before.obj_frees);
    close_conn(&k);
}

/* A client freed while a worker owns its read is flagged, not freed; the
 * loop frees it once the result is back. (Under ASan a premature free is
 * a use-after-free report.) */
static void test_free_while_owned(void **state) {
    (void)state;
    conn k = open_conn();
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    long before = server.clients_count;
    client *c = k.c;
    send_all(k.peer, "PING\r\n", 6);
    /* Turn until a worker owns the read (the readable event offloads it). */
    for (int i = 0; i < 100000 && atomic_load(&c->io_read_state) == CLIENT_IO_IDLE; i++) {
        ae_process_events(server.el, AE_FILE_EVENTS | AE_DONT_WAIT | AE_CALL_AFTER_SLEEP);
        if (server.clients_count < before) break;
    }
    if (atomic_load(&c->io_read_state) != CLIENT_IO_IDLE) {
        client_free(c);
        assert_int_equal(server.clients_count, before); /* still there */
        assert_true(c->flags & CLIENT_CLOSE_ASAP);
    } else {
        client_free(c); /* the race went the other way: an ordinary free */
    }
    for (int i = 0; i < 100000 && server.clients_count == before; i++) {
        turn();
        if (i > 100) sched_yield();
    }
    assert_int_equal(server.clients_count, before - 1);
    close(k.peer);
}

/* Step 5: a write sends what was pending at the mark and nothing main
 * appended after it, from buf alone and from buf plus blocks. The I/O
 * half runs here on main, as it would on a worker, without turning the
 * loop in between (a turn would write the client itself). */
static void test_watermark_bounds_the_write(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    reply_proto(c, "first\r\n", 7);
    client_io_mark_write(c);
    reply_proto(c, "later\r\n", 7); /* main appends after the mark */
    client_io_write(c);
    assert_int_equal(c->io_nwritten, 7);
    char first[64] = {0};
    assert_int_equal(read(k.peer, first, sizeof first), 7);
    assert_string_equal(first, "first\r\n");
    assert_int_equal(client_write_done(c, 1), 0);
    /* Now past buf: fill it so the rest goes into a block. */
    char big[CLIENT_REPLY_CHUNK];
    memset(big, 'x', sizeof big);
    reply_proto(c, big, sizeof big);
    assert_non_null(c->reply_tail);
    client_io_mark_write(c);
    size_t marked = c->bufpos - c->sentlen + c->io_last_bufpos;
    for (reply_block *b = c->reply_head; b != c->io_last_reply_block; b = b->next) marked += b->used;
    reply_proto(c, "tail\r\n", 6); /* into the marked block, past its mark */
    client_io_write(c);            /* one job, one mark: all of it fits the socket */
    assert_int_equal(c->io_nwritten, marked);
    /* Read without turning the loop: a turn would write the rest itself. */
    char *sent = zmalloc(marked + 16);
    size_t got = 0;
    for (ssize_t n; (n = read(k.peer, sent + got, marked + 16 - got)) > 0;) got += (size_t)n;
    assert_int_equal(got, marked);
    assert_memory_equal(sent, "later\r\n", 7); /* what was left of buf comes first */
    assert_int_equal(sent[marked - 1], 'x');   /* and it ends at the mark: no "tail" */
    zfree(sent);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_true(client_has_pending_replies(c)); /* "tail" waits for the next job */
    expect_reply(k.peer, "tail\r\n");
    close_conn(&k);
}

/* io-threads changes at run time while clients' jobs are in flight; no
 * reply is lost across the change. */
static void test_resize_with_jobs_in_flight(void **state) {
    (void)state;
    conn a = open_conn(), b = open_conn();
    const char *err = NULL;
    for (int n = 1; n <= 4; n++) {
        send_all(a.peer, "INCR ctr\r\n", 10);
        send_all(b.peer, "INCR ctr\r\n", 10);
        turn();
        assert_true(io_offload_set_threads(n, &err));
        server.io_threads_num = n;
        turn();
        char *ra = recv_n(a.peer, 4), *rb = recv_n(b.peer, 4);
        assert_true(ra[0] == ':' && rb[0] == ':');
        zfree(ra);
        zfree(rb);
    }
    roundtrip(&a, "GET ctr\r\n", "$1\r\n8\r\n");
    close_conn(&a);
    close_conn(&b);
}

/* Down to one thread in the middle of a spin: main must be let sleep
 * again. Below two threads before_sleep no longer sets the loop's
 * don't-wait each turn, so the change itself clears it; else an idle
 * server polls with a zero timeout for ever, a core spent on nothing. */
static void test_shrink_to_one_ends_the_spin(void **state) {
    (void)state;
    conn k = open_conn();
    const char *err = NULL;
    ae_set_dont_wait(server.el, 1); /* as a spin turn leaves it */
    assert_true(io_offload_set_threads(1, &err));
    server.io_threads_num = 1;
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    turn();
    assert_false(ae_dont_wait(server.el));
    assert_true(io_offload_set_threads(3, &err));
    server.io_threads_num = 3;
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    close_conn(&k);
}

/* With no worker active, every call site falls back and says why. */
static void test_fallback_when_inactive(void **state) {
    (void)state;
    server.io_threads_always_active = 0;
    conn k = open_conn();
    io_offload_stats before, after;
    /* The policy may ignite the pool during the round trip when the
     * machine is loaded (main's CPU looks busy): such a trial proves
     * nothing, and is run again. Ignition is counted apart from a
     * scale-up, so both are watched. */
    for (int tries = 0;; tries++) {
        while (io_threads_active() > 1) io_threads_set_active(1);
        before = stats();
        roundtrip(&k, "PING\r\n", "+PONG\r\n");
        after = stats();
        if ((after.ignitions == before.ignitions && after.scale_ups == before.scale_ups) || tries == 9) break;
    }
    assert_true(after.fallbacks[IO_FALLBACK_INACTIVE] > before.fallbacks[IO_FALLBACK_INACTIVE]);
    assert_int_equal(after.reads_done, before.reads_done);
    close_conn(&k);
    server.io_threads_always_active = 1;
}

/* Workers held idle, before they would sleep (io_threads_test.h): a job
 * then waits in the inbox for as long as the test likes, as it would
 * behind a worker busy with a 64 MB write. */
static _Atomic int hold_idle, idle_held;

static void hold_idle_hook(int step) {
    if (step != IO_SLEEP_STEP_BEGIN) return;
    atomic_fetch_add(&idle_held, 1);
    while (atomic_load(&hold_idle)) sched_yield();
    atomic_fetch_sub(&idle_held, 1);
}

/* A read and a POLL job wait in the inbox with every worker held. Main,
 * past io-threads-idle-spin-us, must not spin for as long as they wait:
 * epoll_wait is the POLL job's, so main blocks on the pool's futex word
 * until the next timer, and the spin it counts (INFO io_threads_main_spin_us)
 * stops growing. Once the workers go, the reply comes. */
static void test_main_sleeps_while_poll_waits(void **state) {
    (void)state;
    long long spin_us = server.io_threads_idle_spin_us;
    server.io_threads_idle_spin_us = 2000;
    atomic_store(&hold_idle, 1);
    io_threads_debug_sleep = hold_idle_hook;
    conn k = open_conn();
    turn(); /* the new spin reaches the workers */
    /* Every worker active and idle; no turn of the loop until they are
     * held, so that always-active does not park them first. */
    int workers = io_threads_num() - 1;
    assert_true(io_threads_set_active(workers + 1));
    long long end = loop_deadline();
    while (atomic_load(&idle_held) < workers && util_mstime() < end) sched_yield();
    assert_int_equal(atomic_load(&idle_held), workers);
    send_all(k.peer, "PING\r\n", 6);
    uint64_t polls = stats().polls_done;
    long long t0 = util_mstime();
    uint64_t spin0 = stats().main_spin_us;
    /* The real loop, waiting as the server does: 150 ms of it. */
    while (util_mstime() - t0 < 150)
        ae_process_events(server.el, AE_ALL_EVENTS | AE_CALL_BEFORE_SLEEP | AE_CALL_AFTER_SLEEP);
    uint64_t spun = stats().main_spin_us - spin0;
    assert_int_equal(stats().polls_done, polls); /* the POLL job was still waiting */
    atomic_store(&hold_idle, 0);
    io_threads_debug_sleep = NULL;
    expect_reply(k.peer, "+PONG\r\n");
    if (spun > 50000)
        fail_msg("main spun %llu us of 150 ms while a POLL job waited behind held workers: past its spin of 2 ms it "
                 "must block on the pool's futex",
                 (unsigned long long)spun);
    close_conn(&k);
    server.io_threads_idle_spin_us = spin_us;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_through_workers),   cmocka_unit_test(test_replaced_value_freed_by_a_worker),
        cmocka_unit_test(test_free_while_owned),           cmocka_unit_test(test_watermark_bounds_the_write),
        cmocka_unit_test(test_resize_with_jobs_in_flight), cmocka_unit_test(test_shrink_to_one_ends_the_spin),
        cmocka_unit_test(test_fallback_when_inactive),     cmocka_unit_test(test_main_sleeps_while_poll_waits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
