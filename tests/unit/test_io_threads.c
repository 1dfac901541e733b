/* test_io_threads.c — the job word (step 1) and the I/O thread pool
 * (step 3), with handlers registered by the test.
 *
 * The pool knows no client, so each test registers its own handlers: they
 * record which thread ran them and send results carrying what they saw.
 * Checked: every offload can say no (pool of one, inactive workers);
 * shared jobs run on workers, each once; private jobs run on their worker
 * and only after a commit; drain waits for every handler and makes its
 * writes visible; results come back once each, in each worker's order,
 * even past a full outbox (the spill path); parking is refused while it
 * would strand a job; a parked worker uses no CPU; a wake-up main spends
 * on a worker leaving its sleep is not lost (hand-shake 1's second rule,
 * both interleavings built step by step); a result wakes a sleeping main,
 * on the futex and by the eventfd (hand-shake 3); main-only functions know which
 * thread is main; a worker's busy count is the time its jobs took.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "io_threads.h"
#include "io_threads_test.h"
#include "queue_mpsc.h"
#include "threads_test.h"

/* What a job points at. Written by the handler that owns it, read by the
 * test after the result (or a drain) hands it back. */
typedef struct record {
    int ran_on; /* io_thread_id() of the thread that ran it */
    int runs;   /* how many times it ran */
    size_t seq; /* the running worker's count of results sent before it */
} record;

static _Thread_local size_t results_sent; /* per worker thread */
static int results_per_job = 1;

static record *new_records(size_t n) {
    record *r = calloc(n, sizeof *r);
    assert_non_null(r);
    return r;
}

/* ---- Handlers ---------------------------------------------------------------- */

/* Runs a client-like job: note it, send it back as a result. With
 * results_per_job > 1, the job's payload is the first of that many
 * records, one per result. */
static void h_client(void *payload) {
    record *r = payload;
    for (int i = 0; i < results_per_job; i++) {
        r[i].ran_on = io_thread_id();
        r[i].runs++;
        r[i].seq = results_sent++;
        io_threads_send_result(job_encode(&r[i], JOB_RES_READ_CLIENT));
        /* From here on r[i] is main's: this thread does not touch it. */
    }
}

/* A job with no result (a free, a poll): just note it. */
static void h_note(void *payload) {
    record *r = payload;
    r->ran_on = io_thread_id();
    r->runs++;
}

static atomic_bool gate_open;
static atomic_bool gate_reached;

/* Holds its worker until the test opens the gate. */
static void h_gate(void *payload) {
    atomic_store(&gate_reached, true);
    while (!atomic_load(&gate_open) && !test_stuck()) sched_yield();
    h_note(payload);
}

/* Keeps its worker busy for 3 ms, by the clock (a sleep: the busy count
 * is wall time spent in handlers, not CPU). */
static void h_slow(void *payload) {
    struct timespec ts = {0, 3000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
    h_note(payload);
}

static void set_handlers(io_job_proc *client, io_job_proc *other) {
    io_threads_set_handler(JOB_REQ_READ_CLIENT, client);
    io_threads_set_handler(JOB_REQ_WRITE_CLIENT, client);
    io_threads_set_handler(JOB_REQ_ACCEPT, client);
    io_threads_set_handler(JOB_REQ_FREE_OBJ, other);
    io_threads_set_handler(JOB_REQ_FREE_ARGV, other);
    io_threads_set_handler(JOB_REQ_POLL, other);
}

static int setup(void **state) {
    (void)state;
    results_per_job = 1;
    set_handlers(h_client, h_note);
    test_start();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    io_threads_shutdown();
    return 0;
}

/* Waits, bounded, until every submitted job has finished. */
static void wait_finished(void) {
    while (io_threads_pending() > 0 && !test_stuck()) sched_yield();
    assert_false(test_stuck());
}

/* Takes results until `want` arrived, checking each is a record that ran
 * once on a worker, and that each worker's results come in the order it
 * sent them. */
static void take_results(size_t want) {
    size_t got = 0, next_seq[IO_THREADS_MAX] = {0};
    job_word out[16];
    while (got < want) {
        size_t n = io_threads_take_results(out, 16);
        if (n == 0) {
            assert_false(test_stuck());
            sched_yield();
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(job_type(out[i]), JOB_RES_READ_CLIENT);
            record *r = job_ptr(out[i]);
            assert_int_equal(r->runs, 1);
            assert_true(r->ran_on >= 1 && r->ran_on < io_threads_num());
            assert_int_equal(r->seq, next_seq[r->ran_on]);
            next_seq[r->ran_on]++;
        }
        got += n;
    }
    assert_int_equal(io_threads_take_results(out, 16), 0);
}

/* ---- The job word (step 1) ---------------------------------------------------- */

static void test_job_word(void **state) {
    (void)state;
    record *r = new_records(2);
    for (unsigned t = 0; t < JOB_REQ_COUNT; t++) {
        job_word w = job_encode(&r[1], t);
        assert_true(w != 0);
        assert_int_equal(job_type(w), t);
        assert_ptr_equal(job_ptr(w), &r[1]);
    }
    assert_ptr_equal(job_ptr(job_encode(r, JOB_RES_WRITE_CLIENT)), r);
    assert_int_equal(job_type(job_encode(r, JOB_RES_WRITE_CLIENT)), JOB_RES_WRITE_CLIENT);
    /* The routing: FREE_ARGV only privately, client jobs only shared, POLL both. */
    assert_false(JOB_SHARED_INBOX_TYPES & (1u << JOB_REQ_FREE_ARGV));
    assert_false(JOB_PRIVATE_INBOX_TYPES & (1u << JOB_REQ_READ_CLIENT));
    assert_true(JOB_SHARED_INBOX_TYPES & JOB_PRIVATE_INBOX_TYPES & (1u << JOB_REQ_POLL));
    assert_int_equal(JOB_SHARED_INBOX_TYPES | JOB_PRIVATE_INBOX_TYPES, (1u << JOB_REQ_COUNT) - 1);
    free(r);
}

/* ---- Saying no ---------------------------------------------------------------- */

static void test_pool_of_one(void **state) {
    (void)state;
    record *r = new_records(1);
    io_threads_init(1);
    assert_int_equal(io_threads_num(), 1);
    assert_int_equal(io_threads_active(), 1);
    assert_int_equal(io_thread_id(), 0);
    assert_false(io_threads_submit(job_encode(r, JOB_REQ_READ_CLIENT)));
    assert_false(io_threads_submit_to(1, job_encode(r, JOB_REQ_FREE_ARGV)));
    assert_int_equal(io_threads_pending(), 0);
    io_threads_drain(); /* nothing to wait for */
    assert_int_equal(r->runs, 0);
    free(r);
}

static void test_inactive_workers_refuse(void **state) {
    (void)state;
    record *r = new_records(3);
    io_threads_init(3);
    assert_int_equal(io_threads_active(), 1); /* born parked */
    assert_false(io_threads_submit(job_encode(&r[0], JOB_REQ_READ_CLIENT)));
    assert_false(io_threads_submit_to(1, job_encode(&r[0], JOB_REQ_FREE_ARGV)));
    assert_true(io_threads_set_active(2));
    assert_true(io_threads_submit_to(1, job_encode(&r[1], JOB_REQ_FREE_ARGV)));
    assert_false(io_threads_submit_to(2, job_encode(&r[2], JOB_REQ_FREE_ARGV))); /* still parked */
    assert_false(io_threads_submit_to(0, job_encode(&r[2], JOB_REQ_FREE_ARGV))); /* main is no worker */
    io_threads_drain();
    assert_int_equal(r[0].runs, 0);
    assert_int_equal(r[1].runs, 1);
    assert_int_equal(r[1].ran_on, 1);
    assert_int_equal(r[2].runs, 0);
    free(r);
}

/* ---- Running jobs -------------------------------------------------------------- */

static void test_shared_jobs(void **state) {
    (void)state;
    size_t n = TEST_ITEMS(40000);
    record *r = new_records(n);
    io_threads_init(4);
    assert_true(io_threads_set_active(4));
    static const job_request types[] = {JOB_REQ_READ_CLIENT, JOB_REQ_WRITE_CLIENT, JOB_REQ_ACCEPT};
    size_t refused = 0;
    for (size_t i = 0; i < n; i++) {
        /* A full inbox says no; here we wait instead of doing it on main. */
        while (!io_threads_submit(job_encode(&r[i], types[i % 3]))) {
            refused++;
            assert_false(test_stuck());
            sched_yield();
        }
    }
    take_results(n); /* as they come, while the workers are still running */
    io_threads_drain();
    assert_int_equal(io_threads_pending(), 0);
    assert_int_equal(io_threads_queued(), 0);
    int per_worker[4] = {0};
    for (size_t i = 0; i < n; i++) per_worker[r[i].ran_on]++;
    printf("test_shared_jobs: %zu jobs, ran %d/%d/%d on workers 1/2/3, inbox full %zu times\n", n, per_worker[1],
           per_worker[2], per_worker[3], refused);
    assert_int_equal(per_worker[0], 0);
    free(r);
}

/* A worker's busy count grows by the time its jobs ran, and only that
 * worker's: two 3 ms jobs on worker 1 add at least 6 ms to it and nothing
 * to worker 2; main (tid 0) and a tid out of range read 0. */
static void test_busy_time(void **state) {
    (void)state;
    record *r = new_records(2);
    set_handlers(h_client, h_slow);
    io_threads_init(3);
    assert_true(io_threads_set_active(3));
    uint64_t b1 = io_threads_busy_ns(1), b2 = io_threads_busy_ns(2);
    assert_true(io_threads_submit_to(1, job_encode(&r[0], JOB_REQ_FREE_ARGV)));
    assert_true(io_threads_submit_to(1, job_encode(&r[1], JOB_REQ_FREE_ARGV)));
    io_threads_drain();
    assert_int_equal(r[0].ran_on, 1);
    assert_int_equal(r[1].ran_on, 1);
    uint64_t grew = io_threads_busy_ns(1) - b1;
    printf("test_busy_time: worker 1 busy %.2f ms for two 3 ms jobs\n", (double)grew / 1e6);
    assert_true(grew >= 6000000);
    assert_true(grew < 1000000000); /* the sleeps, not the test's life */
    assert_int_equal(io_threads_busy_ns(2), b2);
    assert_int_equal(io_threads_busy_ns(0), 0);
    assert_int_equal(io_threads_busy_ns(IO_THREADS_MAX), 0);
    free(r);
}

/* FREE_ARGV jobs go to one worker and run only once committed. */
static void test_private_jobs(void **state) {
    (void)state;
    size_t k = 1000;
    record *r = new_records(2 * k);
    io_threads_init(3);
    assert_true(io_threads_set_active(3));
    for (size_t i = 0; i < k; i++) {
        assert_true(io_threads_submit_to(1, job_encode(&r[i], JOB_REQ_FREE_ARGV)));
        assert_true(io_threads_submit_to(2, job_encode(&r[k + i], i % 2 ? JOB_REQ_FREE_ARGV : JOB_REQ_POLL)));
    }
    assert_int_equal(io_threads_pending(), 2 * k);
    /* Not committed: the workers cannot see them, however long we wait. */
    usleep(20000);
    assert_int_equal(io_threads_pending(), 2 * k);
    io_threads_commit();
    wait_finished();
    for (size_t i = 0; i < 2 * k; i++) {
        assert_int_equal(r[i].runs, 1);
        assert_int_equal(r[i].ran_on, i < k ? 1 : 2);
    }
    free(r);
}

/* The outbox holds MPSC_QUEUE_SIZE results; the jobs send half as many
 * again while main takes none. The workers must spill and go on (a
 * worker that waited for room would never finish, and the drain never
 * return), then flush in order once main takes results. */
static void test_results_spill(void **state) {
    (void)state;
    results_per_job = 3;
    size_t jobs = MPSC_QUEUE_SIZE / 2;
    record *r = new_records(jobs * 3);
    io_threads_init(3);
    assert_true(io_threads_set_active(3));
    for (size_t i = 0; i < jobs; i++) {
        while (!io_threads_submit(job_encode(&r[3 * i], JOB_REQ_READ_CLIENT))) {
            assert_false(test_stuck());
            sched_yield();
        }
    }
    wait_finished(); /* every job ran, with the outbox full */
    io_threads_drain();
    take_results(3 * jobs);
    free(r);
}

/* ---- Parking ------------------------------------------------------------------- */

/* A worker with jobs in its private inbox, committed or not, may not park:
 * no other thread could run them. */
static void test_park_refused_private(void **state) {
    (void)state;
    record *r = new_records(2);
    io_threads_init(3);
    assert_true(io_threads_set_active(3));
    assert_true(io_threads_submit_to(2, job_encode(&r[0], JOB_REQ_FREE_ARGV)));
    assert_false(io_threads_set_active(2));
    assert_int_equal(io_threads_active(), 3);
    io_threads_commit();
    wait_finished();
    assert_true(io_threads_set_active(2));
    assert_int_equal(io_threads_active(), 2);
    assert_false(io_threads_submit_to(2, job_encode(&r[1], JOB_REQ_FREE_ARGV)));
    assert_int_equal(r[0].runs, 1);
    assert_int_equal(r[0].ran_on, 2);
    free(r);
}

/* The last worker may not park while the shared inbox holds jobs: here it
 * is held inside a handler while a second job waits behind it. */
static void test_park_refused_shared(void **state) {
    (void)state;
    record *r = new_records(3);
    io_threads_set_handler(JOB_REQ_FREE_OBJ, h_gate);
    atomic_store(&gate_open, false);
    atomic_store(&gate_reached, false);
    io_threads_init(2);
    assert_true(io_threads_set_active(2));
    assert_true(io_threads_submit(job_encode(&r[0], JOB_REQ_FREE_OBJ)));
    while (!atomic_load(&gate_reached)) assert_false(test_stuck());
    assert_true(io_threads_submit(job_encode(&r[1], JOB_REQ_FREE_OBJ)));
    assert_false(io_threads_set_active(1));
    assert_int_equal(io_threads_active(), 2);
    atomic_store(&gate_open, true);
    wait_finished();
    assert_true(io_threads_set_active(1));
    assert_int_equal(r[0].runs + r[1].runs, 2);
    assert_int_equal(r[1].ran_on, 1);
    /* Parked, then woken again: the pool still works. */
    assert_false(io_threads_submit(job_encode(&r[2], JOB_REQ_WRITE_CLIENT)));
    assert_true(io_threads_set_active(2));
    assert_true(io_threads_submit(job_encode(&r[2], JOB_REQ_WRITE_CLIENT)));
    take_results(1);
    free(r);
}

static clockid_t worker_clock;

/* Notes the CPU-time clock of the thread that runs it. (No cmocka assert
 * on a worker: a failing one would jump out of another thread's stack.) */
static void h_clock(void *payload) {
    h_note(payload);
    if (pthread_getcpuclockid(pthread_self(), &worker_clock) != 0) abort();
}

static long long cpu_ms(clockid_t clock) {
    struct timespec ts;
    assert_int_equal(clock_gettime(clock, &ts), 0);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* CPU time the worker uses during `ms` of wall time. */
static long long worker_cpu_during(int ms) {
    long long before = cpu_ms(worker_clock);
    usleep((useconds_t)ms * 1000);
    return cpu_ms(worker_clock) - before;
}

/* A parked worker sleeps in the kernel: it uses no CPU at all. (An active
 * one with nothing to do spins io-threads-idle-spin-us, then sleeps on a
 * futex; Valkey's would spin on its mutex. What it costs is printed, not
 * checked: bench/queues measures all three states, F2.12-F2.14.) */
static void test_parked_worker_costs_nothing(void **state) {
    (void)state;
    record r[1] = {{0}};
    io_threads_set_handler(JOB_REQ_FREE_ARGV, h_clock);
    io_threads_init(2);
    assert_true(io_threads_set_active(2));
    assert_true(io_threads_submit_to(1, job_encode(r, JOB_REQ_FREE_ARGV)));
    io_threads_drain();
    long long active = worker_cpu_during(100);
    assert_true(io_threads_set_active(1));
    long long parked = worker_cpu_during(200);
    printf("test_parked_worker_costs_nothing: idle worker CPU, active %lld ms in 100 ms, parked %lld ms in 200 ms\n",
           active, parked);
    assert_true(parked <= 5);
}

/* Shutdown joins parked and active workers alike; a pool can start again. */
static void test_restart(void **state) {
    (void)state;
    record *r = new_records(8);
    for (int round = 0; round < 3; round++) {
        io_threads_init(2 + round);
        assert_true(io_threads_set_active(1 + round));
        if (round > 0) {
            assert_true(io_threads_submit(job_encode(&r[round], JOB_REQ_READ_CLIENT)));
            take_results(1);
        }
        io_threads_shutdown();
        assert_int_equal(io_threads_num(), 0);
    }
    assert_int_equal(r[1].runs + r[2].runs, 2);
    free(r);
}

/* ---- Wake-ups not spent on a worker that was coming anyway ---------------------- */

/* Workers held at the steps of their sleep (io_threads_test.h): the test
 * sets stop_at[t] to a step and worker t waits there until the test
 * clears it; at[t] says which step worker t last reached. Jobs held in
 * h_hold say so in holding[t]. */
static _Atomic int stop_at[IO_THREADS_MAX], at[IO_THREADS_MAX], holding[IO_THREADS_MAX];

static void sleep_hook(int step) {
    int t = io_thread_id();
    atomic_store(&at[t], step);
    while (atomic_load(&stop_at[t]) == step && !test_stuck()) sched_yield();
}

/* Holds its worker, like h_gate, saying which one. */
static void h_hold(void *payload) {
    atomic_store(&holding[io_thread_id()], 1);
    while (!atomic_load(&gate_open) && !test_stuck()) sched_yield();
    h_note(payload);
}

/* Wait, bounded, until worker t has reached step, or is inside a held job. */
static bool reached(int t, int step) {
    while (atomic_load(&at[t]) != step && !test_stuck()) sched_yield();
    return atomic_load(&at[t]) == step;
}

static bool held_by(int t) {
    while (!atomic_load(&holding[t]) && !test_stuck()) sched_yield();
    return atomic_load(&holding[t]);
}

/* Two workers, both held at the start of their sleep. */
static void start_sleep_test(void) {
    for (int t = 0; t < IO_THREADS_MAX; t++) {
        atomic_store(&stop_at[t], -1);
        atomic_store(&at[t], -1);
        atomic_store(&holding[t], 0);
    }
    atomic_store(&gate_open, false);
    atomic_store(&stop_at[1], IO_SLEEP_STEP_BEGIN);
    atomic_store(&stop_at[2], IO_SLEEP_STEP_BEGIN);
    io_threads_set_handler(JOB_REQ_FREE_OBJ, h_hold);
    io_threads_set_handler(JOB_REQ_FREE_ARGV, h_hold);
    io_threads_debug_sleep = sleep_hook;
    io_threads_set_idle_spin_us(0);
    io_threads_init(3);
    assert_true(io_threads_set_active(3));
    assert_true(reached(1, IO_SLEEP_STEP_BEGIN) && reached(2, IO_SLEEP_STEP_BEGIN));
}

static void end_sleep_test(void) {
    atomic_store(&gate_open, true);
    for (int t = 0; t < IO_THREADS_MAX; t++) atomic_store(&stop_at[t], -1);
    io_threads_drain();
    io_threads_shutdown();
    io_threads_debug_sleep = NULL;
    io_threads_set_idle_spin_us(20);
}

/* Worker 1's last look finds a job nobody was woken for; worker 2 falls
 * asleep; then a second job. Main's wake for it must reach worker 2:
 * worker 1, busy with the first job, must not still say it is asleep. */
static void test_wake_not_spent_on_busy_worker(void **state) {
    (void)state;
    record r[2] = {{0}};
    start_sleep_test();
    assert_true(io_threads_submit(job_encode(&r[0], JOB_REQ_FREE_OBJ))); /* nobody asleep: no wake */
    atomic_store(&stop_at[1], -1);
    assert_true(held_by(1)); /* its last look took the job */
    atomic_store(&stop_at[2], -1);
    assert_true(reached(2, IO_SLEEP_STEP_WAIT)); /* its last look found nothing */
    assert_true(io_threads_submit(job_encode(&r[1], JOB_REQ_FREE_OBJ)));
    if (!held_by(2))
        fail_msg("worker 2 slept through the second job while worker 1 ran the first: main's wake landed on "
                 "worker 1, which ran what its last look found while its word still said asleep");
    end_sleep_test();
}

/* Worker 1's last look finds private work; before it says it is awake,
 * main spends the wake for a shared job on it, with worker 2 asleep.
 * Worker 1 must pass the wake on: the private job holds it. */
static void test_wake_passed_on(void **state) {
    (void)state;
    record r[2] = {{0}};
    start_sleep_test();
    atomic_store(&stop_at[2], -1);
    assert_true(reached(2, IO_SLEEP_STEP_WAIT));
    assert_true(io_threads_submit_to(1, job_encode(&r[0], JOB_REQ_FREE_ARGV)));
    io_threads_commit(); /* worker 1 not yet counted asleep: no wake */
    atomic_store(&stop_at[1], IO_SLEEP_STEP_FOUND);
    assert_true(reached(1, IO_SLEEP_STEP_FOUND));
    assert_true(io_threads_submit(job_encode(&r[1], JOB_REQ_FREE_OBJ))); /* wakes worker 1, the first asleep */
    atomic_store(&stop_at[1], -1);
    assert_true(held_by(1));
    if (!held_by(2))
        fail_msg("worker 2 slept through the shared job: main's wake went to worker 1 as it left its sleep with "
                 "private work, and worker 1 did not pass it on");
    end_sleep_test();
}

/* Hand-shake 3, on each of main's two ways to sleep: in epoll_wait, woken
 * by the eventfd, or, while a POLL job has epoll_wait, on the futex word
 * itself. Each of 2000 rounds (a quarter of that under the sanitizers)
 * submits a job whose result comes straight back; main says it is
 * asleep, looks at the outbox once more and blocks only if that look
 * found nothing, as main_may_block does. The worker's exchange may come
 * before main blocks or after; either way the result must end the sleep.
 * A sleep that lasts its whole timeout with the result in the outbox is
 * a lost wake-up. A wake-up may also be early (a worker's late write or
 * FUTEX_WAKE from the round before): then main just looks and sleeps
 * again, and, on the eventfd, clears it only when poll says it is
 * readable, as the eventfd's handler in main's loop does. Before the
 * rounds and after them, with nothing owed, a sleep must block: one that
 * ends at once (the futex word not what main said; an eventfd never
 * cleared) makes main spin. */
enum { MAIN_WAIT_MS = 300 };

static bool main_sleep_once(bool on_futex) {
    assert_true(io_threads_main_sleep_begin(on_futex));
    job_word out[16];
    size_t n = io_threads_take_results(out, 16);
    if (n == 0) {
        long long t0 = test_now_ms();
        bool readable = false;
        if (on_futex) {
            io_threads_main_wait(MAIN_WAIT_MS);
        } else {
            struct pollfd pfd = {.fd = io_threads_main_wake_fd(), .events = POLLIN};
            readable = poll(&pfd, 1, MAIN_WAIT_MS) == 1 && (pfd.revents & POLLIN);
        }
        bool timed_out = test_now_ms() - t0 >= MAIN_WAIT_MS;
        io_threads_main_sleep_end();
        if (readable) io_threads_main_clear_wake();
        n = io_threads_take_results(out, 16);
        if (timed_out && n)
            fail_msg("main slept its whole %d ms %s with a result in the outbox: the worker that sent it did not "
                     "wake it",
                     MAIN_WAIT_MS, on_futex ? "on the futex" : "on the eventfd");
    } else {
        io_threads_main_sleep_end();
    }
    assert_true(n <= 1);
    return n == 1;
}

/* Nothing owed: of a few sleeps (the first may end early for a late
 * wake-up), one must last most of its timeout. */
static void main_blocks_when_nothing_is_owed(bool on_futex, const char *when) {
    long long took = 0;
    for (int tries = 0; tries < 3 && took < MAIN_WAIT_MS / 2; tries++) {
        long long t0 = test_now_ms();
        assert_false(main_sleep_once(on_futex));
        took = test_now_ms() - t0;
    }
    if (took < MAIN_WAIT_MS / 2)
        fail_msg("%s, with nothing owed, main's sleeps %s ended after %lld ms: they must block", when,
                 on_futex ? "on the futex" : "on the eventfd", took);
}

static void main_sleeps_until_the_result(bool on_futex) {
    main_blocks_when_nothing_is_owed(on_futex, "before the rounds");
    size_t rounds = TEST_ITEMS(2000);
    record *r = new_records(rounds);
    for (size_t i = 0; i < rounds; i++) {
        assert_true(io_threads_submit(job_encode(&r[i], JOB_REQ_READ_CLIENT)));
        while (!main_sleep_once(on_futex)) assert_false(test_stuck());
        assert_int_equal(r[i].runs, 1);
    }
    free(r);
    main_blocks_when_nothing_is_owed(on_futex, "after the rounds");
}

static void test_main_woken_on_the_futex(void **state) {
    (void)state;
    io_threads_init(2);
    assert_true(io_threads_set_active(2));
    main_sleeps_until_the_result(true);
}

static void test_main_woken_by_the_eventfd(void **state) {
    (void)state;
    io_threads_init(2);
    assert_true(io_threads_set_active(2));
    main_sleeps_until_the_result(false);
}

/* Main is the thread that started the pool: io_threads_on_main says so
 * on main and not on another thread. Where the build checks callers
 * (SOLOIST_ASSERT_THREADS: the debug and sanitizer builds), a main-only
 * function called off main aborts. That runs in a child forked by a
 * thread that is not main (so the child's one thread is not main, and no
 * thread is started after the fork, which ThreadSanitizer does not
 * support); the abort is the child's. */
static void *on_main_elsewhere(void *out) {
    *(bool *)out = io_threads_on_main();
    return NULL;
}

static void *fork_and_commit(void *out) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 2); /* the abort's message is expected */
        alarm(10);
        io_threads_commit();
        _exit(0);
    }
    *(pid_t *)out = pid;
    return NULL;
}

static void test_main_only(void **state) {
    (void)state;
    io_threads_init(2);
    assert_true(io_threads_on_main());
    bool elsewhere = true;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, on_main_elsewhere, &elsewhere), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_false(elsewhere);
#ifdef SOLOIST_ASSERT_THREADS
    pid_t pid = -1;
    assert_int_equal(pthread_create(&t, NULL, fork_and_commit, &pid), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(pid > 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fail_msg("io_threads_commit ran off the main thread and went on (the child %s %d): ASSERT_MAIN_THREAD "
                 "must abort",
                 WIFSIGNALED(status) ? "died of signal" : "exited with",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
#else
    (void)fork_and_commit;
#endif
    io_threads_shutdown();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_word),
        cmocka_unit_test_setup_teardown(test_pool_of_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inactive_workers_refuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_jobs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_private_jobs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_spill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_park_refused_private, setup, teardown),
        cmocka_unit_test_setup_teardown(test_park_refused_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parked_worker_costs_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wake_not_spent_on_busy_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wake_passed_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_main_woken_on_the_futex, setup, teardown),
        cmocka_unit_test_setup_teardown(test_main_woken_by_the_eventfd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_main_only, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
