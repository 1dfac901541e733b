/* test_handoff.c — step 4's exercise: the ownership hand-off, its
 * fallbacks, the take-back, the argv frees and the one poller
 * (src/io_offload.c).
 *
 * The real server loop with io-threads 3 (10, then 9, for the POLL's
 * routing) and io-threads-always-active, clients on socketpairs and on
 * the loopback port (loop_test.h). Each mistake these tests look for is
 * made to show every time, not when the scheduler happens to allow it:
 *
 *   - a job that completes inside its submit (io_threads_debug_submitted
 *     waits there until the worker is done with it): a token stored after
 *     the enqueue then always overwrites the worker's COMPLETED, and a
 *     write whose watermark is set after the enqueue has written only up
 *     to the previous hand-off's mark (on a new client, nothing);
 *   - workers held inside a job of their own (a FREE_OBJ job, whose
 *     handler the setup replaces with one that waits at a gate): the shared
 *     inbox then fills, a private inbox fills, a job waits on an inbox as
 *     long as the test likes, and which worker is free is the test's
 *     choice;
 *   - the call sites' functions called directly, in the states a loop
 *     reaches only now and then (a client closing, no worker active, a
 *     worker parked), with every counter compared exactly;
 *   - a result whose token is not COMPLETED, taken back in a child
 *     process, which must die of the abort.
 *
 * A step whose worker is done is waited for in loop turns, not time (the
 * job has run; nothing is left to wait for), so a protocol stuck by a
 * mistake fails at once, saying what is missing. The other waits give up
 * (loop_test.h's loop_deadline), so a stuck protocol fails the test
 * instead of hanging it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "client.h"
#include "io_offload.h"
#include "io_threads.h"
#include "io_threads_test.h"
#include "networking.h"
#include "object.h"
#include "reply.h"
#include "server.h"

#include "loop_test.h"

/* ------------------------------------------------------------ helpers */

#define THREADS 3 /* the pool of every test but the POLL's routing */
#define GATES 16  /* the largest pool's workers (9), plus one, with room */

/* The gates: a FREE_OBJ job holds its worker until that worker's gate
 * opens. */
static _Atomic int gate_open[GATES];
static _Atomic int held[GATES]; /* worker t is inside a gate job */
static _Alignas(8) char gate_token[8];

static void gate_job(void *payload) {
    (void)payload;
    int t = io_thread_id();
    atomic_store(&held[t], 1);
    while (!atomic_load(&gate_open[t])) sched_yield();
    atomic_store(&held[t], 0);
}

static int workers(void) { return io_threads_num() - 1; }

static int workers_held(void) {
    int n = 0;
    for (int t = 1; t < GATES; t++) n += atomic_load(&held[t]);
    return n;
}

static bool gates_open(void) {
    for (int t = 1; t < GATES; t++)
        if (!atomic_load(&gate_open[t])) return false;
    return true;
}

/* Holds every worker: each takes one job from the shared inbox at a time. */
static void hold_workers(void) {
    int n = workers();
    assert_true(io_threads_set_active(n + 1));
    for (int t = 1; t <= n; t++) atomic_store(&gate_open[t], 0);
    for (int i = 0; i < n; i++) assert_true(io_threads_submit(job_encode(gate_token, JOB_REQ_FREE_OBJ)));
    long long end = loop_deadline();
    while (workers_held() < n && util_mstime() < end) sched_yield();
    assert_int_equal(workers_held(), n);
}

static void release_worker(int t) { atomic_store(&gate_open[t], 1); }

static void release_workers(void) {
    for (int t = 1; t < GATES; t++) release_worker(t);
}

/* Fills the shared inbox behind held workers. */
static void fill_shared_inbox(void) {
    int filled = 0;
    while (io_threads_submit(job_encode(gate_token, JOB_REQ_FREE_OBJ))) filled++;
    assert_true(filled > 0);
}

/* Turns the loop until every job has run and every result is handled
 * (a job a test put in a private inbox itself is published first). */
static void settle(void) {
    long long end = loop_deadline();
    for (int i = 0; i < 10 && util_mstime() < end; i++) {
        io_threads_commit();
        while (io_threads_pending() > 0 && util_mstime() < end) sched_yield();
        turn();
    }
}

static io_offload_stats stats(void) {
    io_offload_stats st;
    io_offload_get_stats(&st);
    return st;
}

/* The fallbacks counted between two samples must be exactly these
 * (INFO io_fallbacks: inactive, queue_full, not_eligible). */
static void expect_fallbacks(io_offload_stats before, uint64_t inactive, uint64_t queue_full, uint64_t not_eligible,
                             const char *what) {
    io_offload_stats now = stats();
    uint64_t got[IO_FALLBACK_COUNT], want[IO_FALLBACK_COUNT] = {inactive, queue_full, not_eligible};
    for (int i = 0; i < IO_FALLBACK_COUNT; i++) got[i] = now.fallbacks[i] - before.fallbacks[i];
    if (memcmp(got, want, sizeof got) != 0)
        fail_msg("%s: counted inactive %llu, queue_full %llu, not_eligible %llu; want %llu, %llu, %llu", what,
                 (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
                 (unsigned long long)want[0], (unsigned long long)want[1], (unsigned long long)want[2]);
}

static uint64_t worker_jobs(int tid, job_request type) {
    uint64_t jobs[JOB_REQ_COUNT];
    io_offload_worker_jobs(tid, jobs);
    return jobs[type];
}

static uint64_t all_worker_jobs(job_request type) {
    uint64_t n = 0;
    for (int t = 1; t < GATES; t++) n += worker_jobs(t, type);
    return n;
}

/* The submit hook, set for every test. While no worker is held, every
 * job runs to completion before the submit returns (a POLL job too, so
 * main never finds one out); while some are, a client's job still does
 * whenever a worker is free to run it. The last job of each type is kept
 * for the test to look at, and the jobs of each type counted; each POLL
 * job's worker is noted in poll_to (0 while the workers are held: the test
 * finds it after releasing them). */
static job_word last_job[JOB_REQ_COUNT];
static uint64_t submits[JOB_REQ_COUNT];
#define POLLS_NOTED 256
static int poll_to[POLLS_NOTED];
static int polls_noted;

static void finish_in_submit(job_word job) {
    job_request type = job_type(job);
    last_job[type] = job;
    submits[type]++;
    if (gates_open()) {
        uint64_t before[GATES];
        for (int t = 1; t < GATES; t++) before[t] = worker_jobs(t, JOB_REQ_POLL);
        io_threads_drain();
        if (type == JOB_REQ_POLL && polls_noted < POLLS_NOTED) {
            int to = 0;
            for (int t = 1; t < GATES; t++)
                if (worker_jobs(t, JOB_REQ_POLL) > before[t]) to = t;
            poll_to[polls_noted++] = to;
        }
        return;
    }
    if (type == JOB_REQ_POLL && polls_noted < POLLS_NOTED) poll_to[polls_noted++] = 0;
    if (workers_held() == workers()) return;
    _Atomic uint8_t *token = NULL;
    if (type == JOB_REQ_READ_CLIENT || type == JOB_REQ_ACCEPT) token = &((client *)job_ptr(job))->io_read_state;
    if (type == JOB_REQ_WRITE_CLIENT) token = &((client *)job_ptr(job))->io_write_state;
    long long end = loop_deadline();
    while (token && atomic_load(token) != CLIENT_IO_COMPLETED && util_mstime() < end) sched_yield();
}

static int setup(void **state) {
    (void)state;
    for (int t = 0; t < GATES; t++) atomic_store(&gate_open[t], 1);
    assert_int_equal(loop_server_init(THREADS), 0);
    /* The server's FREE_OBJ handler frees objects; these tests need it to
     * hold a worker instead. Handlers change only while no pool runs, so
     * the pool is restarted around the change (io_offload keeps using
     * whatever pool there is). */
    io_threads_shutdown();
    io_threads_set_handler(JOB_REQ_FREE_OBJ, gate_job);
    io_threads_init(THREADS);
    /* Main keeps turning while results are owed (it would otherwise
     * block in epoll_wait, and the poll would stay on main). */
    server.io_threads_idle_spin_us = 60 * 1000 * 1000;
    io_threads_debug_submitted = finish_in_submit;
    return 0;
}

/* After each test, pass or fail: no worker held, the pool of THREADS
 * threads, and no client left (a failed test leaves its own; a wrong
 * hand-off may leave one owned for ever, and the next test would trip
 * over it). Once every job has run and the results are taken, no worker
 * touches a client, so the tokens go back to main by force. */
static int after_each(void **state) {
    (void)state;
    release_workers();
    /* Once every job has run, no worker touches a client: a token still
     * PENDING was left so by a wrong hand-off, and taking its result back
     * would abort. It becomes COMPLETED, so that the loop below takes the
     * result back (if there is one) instead of ending the process. */
    io_threads_commit();
    long long end = loop_deadline();
    while (io_threads_pending() > 0 && util_mstime() < end) sched_yield();
    for (client *c = server.clients; c; c = c->next) {
        if (atomic_load(&c->io_read_state) == CLIENT_IO_PENDING) atomic_store(&c->io_read_state, CLIENT_IO_COMPLETED);
        if (atomic_load(&c->io_write_state) == CLIENT_IO_PENDING) atomic_store(&c->io_write_state, CLIENT_IO_COMPLETED);
    }
    settle();
    /* A result still in the outbox now is one main never took (a hand-off
     * that did not count it as owed): its client is about to be freed, so
     * it goes too, or the next test would take it back. */
    bool stuck = false;
    for (client *c = server.clients; c; c = c->next) stuck |= client_io_owned(c);
    job_word junk[64];
    while (stuck && io_threads_take_results(junk, 64) > 0) continue;
    for (client *c = server.clients; c; c = c->next) {
        atomic_store(&c->io_read_state, CLIENT_IO_IDLE);
        atomic_store(&c->io_write_state, CLIENT_IO_IDLE);
        c->io_accepting = 0;
        c->cur_tid = 0;
    }
    while (server.clients) client_free(server.clients);
    turn();
    if (io_threads_num() != THREADS) {
        const char *err = NULL;
        assert_true(io_offload_set_threads(THREADS, &err));
    }
    io_threads_set_idle_spin_us((unsigned)server.io_threads_idle_spin_us);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    io_threads_debug_submitted = NULL;
    /* The server's shutdown waits up to 10 s for every result owed; a
     * wrong hand-off may leave one owed for ever (a count never taken
     * back, a POLL job never done). A change of the pool's size drains
     * with a 1 s budget and says whether that worked: if not, the process
     * ends without the shutdown, its test already failed. */
    const char *err = NULL;
    if (!io_offload_set_threads(THREADS + 1, &err)) return 0;
    loop_server_destroy();
    io_threads_set_handler(JOB_REQ_FREE_OBJ, NULL);
    return 0;
}

/* Turns the loop until the hook has seen a job of this type for c. */
static void turn_until_submitted(client *c, job_request type) {
    last_job[type] = 0;
    long long end = loop_deadline();
    while (!(last_job[type] && job_ptr(last_job[type]) == c) && util_mstime() < end) turn();
    assert_true(last_job[type] && job_ptr(last_job[type]) == c);
}

/* What the peer can read now, without turning the loop. */
static size_t read_now(int fd, char *buf, size_t cap) {
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    return got;
}

/* A finished job's token (the worker is done: finish_in_submit) must read
 * COMPLETED: a PENDING here was stored after the enqueue, over the
 * worker's COMPLETED. */
static void expect_completed(_Atomic uint8_t *token, const char *what) {
    int s = atomic_load(token);
    if (s != CLIENT_IO_COMPLETED)
        fail_msg("the worker finished the %s, but its token reads %d, not COMPLETED (2): was PENDING stored "
                 "after the enqueue, over the worker's COMPLETED?",
                 what, s);
}

/* A result the worker has finished is in the outbox, and the next turn
 * takes it back: but only if main counted it as owed (take_results takes
 * nothing while io.reads_pending + io.writes_pending is 0), and the
 * take-back must make the token IDLE. Bounded in turns, not time: nothing
 * is left to wait for. */
static void expect_taken_back(client *c, bool read, const char *what) {
    _Atomic uint8_t *token = read ? &c->io_read_state : &c->io_write_state;
    io_offload_stats st0 = stats();
    int accepting = c->io_accepting;
    for (int i = 0; i < 3 && atomic_load(token) == CLIENT_IO_COMPLETED; i++) turn();
    int s = atomic_load(token);
    if (s == CLIENT_IO_IDLE) return;
    io_offload_stats st = stats();
    bool taken =
        read ? st.reads_done != st0.reads_done || (accepting && !c->io_accepting) : st.writes_done != st0.writes_done;
    if (taken) fail_msg("main took the %s back, but its token reads %d, not IDLE: the take-back stores IDLE", what, s);
    fail_msg("the worker finished the %s, but three turns later main has not taken it back (token %d): did "
             "the hand-off count the result as owed (%s)?",
             what, s, read ? "io.reads_pending" : "io.writes_pending");
}

/* One PING through a worker each way, every step checked as soon as it
 * is due, so that a hand-off that cannot work fails here, at once, with
 * what is wrong (and not at a deadline later). Every test starts with it. */
static void checked_ping(conn *k) {
    client *c = k->c;
    send_all(k->peer, "PING\r\n", 6);
    /* Every worker free: a POLL job, if one goes out, is done inside its
     * submit, so a readable socket is seen within a turn or two. */
    last_job[JOB_REQ_READ_CLIENT] = 0;
    for (int i = 0; i < 10 && !last_job[JOB_REQ_READ_CLIENT]; i++) turn();
    if (!last_job[JOB_REQ_READ_CLIENT])
        fail_msg("ten turns, every worker free, and the request was not handed to a worker: %s",
                 atomic_load(&c->io_read_state) != CLIENT_IO_IDLE
                     ? "the client's read token is not IDLE (a refused or taken-back read left it so)"
                     : "the loop does not see the socket (is a POLL job's flag or custom poll left behind?)");
    assert_ptr_equal(job_ptr(last_job[JOB_REQ_READ_CLIENT]), c);
    expect_completed(&c->io_read_state, "read");
    last_job[JOB_REQ_WRITE_CLIENT] = 0;
    expect_taken_back(c, true, "read");
    /* The turn that took the read back ran PING and handed its reply to a
     * worker, which wrote it at once. */
    assert_true(last_job[JOB_REQ_WRITE_CLIENT] && job_ptr(last_job[JOB_REQ_WRITE_CLIENT]) == c);
    expect_completed(&c->io_write_state, "write");
    expect_taken_back(c, false, "write");
    expect_reply(k->peer, "+PONG\r\n");
}

/* A connection to the server's listening port, made (the kernel completes
 * it on loopback) before the loop accepts it; non-blocking after. */
static int connect_loopback(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)server.port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    return fd;
}

/* An argument of a command: a short string object, refcount 1. */
static obj *arg(const char *s) { return obj_create_string(s, strlen(s)); }

static obj **argv_of(int argc, ...) {
    obj **argv = zmalloc(sizeof(obj *) * (size_t)argc);
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++) argv[i] = va_arg(ap, obj *);
    va_end(ap);
    return argv;
}

/* ------------------------------------------------------------ hand-off */

/* The worker finishes each job inside the submit (finish_in_submit). The
 * token main stored before the enqueue has become COMPLETED by the time
 * the call site returns; a token stored after the enqueue overwrites it
 * with PENDING, and the client would look owned for ever. The write's
 * worker has written the whole reply by then: the watermark was set
 * before the hand-off. Twice, so the take-back's IDLE is needed for the
 * second round. */
static void test_handoff_token_before_enqueue(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    for (int round = 0; round < 2; round++) {
        send_all(k.peer, "PING\r\n", 6);
        turn_until_submitted(c, JOB_REQ_READ_CLIENT);
        expect_completed(&c->io_read_state, "read");
        /* The next turn takes the read back, runs PING and hands the
         * reply to a worker. */
        last_job[JOB_REQ_WRITE_CLIENT] = 0;
        expect_taken_back(c, true, "read");
        assert_true(last_job[JOB_REQ_WRITE_CLIENT] && job_ptr(last_job[JOB_REQ_WRITE_CLIENT]) == c);
        expect_completed(&c->io_write_state, "write");
        char got[16] = {0};
        size_t n = read_now(k.peer, got, 7);
        if (n != 7 || strcmp(got, "+PONG\r\n") != 0)
            fail_msg("the write's worker is done but wrote %zu of the 7 bytes of +PONG: the watermark "
                     "(client_io_mark_write) is set before the token and the enqueue",
                     n);
        expect_taken_back(c, false, "write");
    }
    close_conn(&k);
}

/* Both workers held and the shared inbox full: the read and the write
 * must happen on main, at once, and leave the client as free as before,
 * each refusal counted once. A second request proves the tokens went
 * back to IDLE. Once the workers are free and everything is taken back,
 * nothing is owed, so no POLL job goes out: a refused hand-off owes no
 * result. */
static void test_handoff_queue_full_falls_back(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
    settle();
    hold_workers();
    fill_shared_inbox();
    io_offload_stats before = stats();
    for (int i = 0; i < 2; i++) {
        roundtrip(&k, "ECHO full\r\n", "$4\r\nfull\r\n");
        assert_int_equal(atomic_load(&c->io_read_state), CLIENT_IO_IDLE);
        assert_int_equal(atomic_load(&c->io_write_state), CLIENT_IO_IDLE);
    }
    expect_fallbacks(before, 0, 4, 0,
                     "two reads and two writes refused by a full inbox, each counted once (more: main tried POLL "
                     "jobs, so it thought a result was owed)");
    io_offload_stats after = stats();
    assert_int_equal(after.reads_done, before.reads_done);
    assert_int_equal(after.writes_done, before.writes_done);
    release_workers();
    settle();
    checked_ping(&k);
    settle();
    uint64_t polls = submits[JOB_REQ_POLL];
    for (int i = 0; i < 3; i++) turn();
    if (submits[JOB_REQ_POLL] != polls)
        fail_msg("nothing is owed, yet main sends POLL jobs: a hand-off the inbox refused was counted as owed");
    close_conn(&k);
}

/* No worker active: each hand-off stays on main, counted `inactive` (not
 * as a full inbox), the tokens left IDLE. */
static void test_handoff_refused_without_a_worker(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
    settle();
    reply_ok(c); /* something to write */
    assert_true(io_threads_set_active(1));
    io_offload_stats before = stats();
    assert_false(io_offload_read(c));
    assert_false(io_offload_write(c));
    assert_false(io_offload_accept(c));
    assert_int_equal(atomic_load(&c->io_read_state), CLIENT_IO_IDLE);
    assert_int_equal(atomic_load(&c->io_write_state), CLIENT_IO_IDLE);
    assert_int_equal(c->io_accepting, 0);
    expect_fallbacks(before, 3, 0, 0, "no worker active: a read, a write and an ACCEPT, each counted inactive");
    expect_reply(k.peer, "+OK\r\n");
    close_conn(&k);
}

/* Workers active, but a client that may not go: the read of a client that
 * is closing (CLIENT_CLOSE_ASAP, or CLIENT_CLOSE_AFTER_REPLY) or has no
 * socket, the write of one that is to be freed (CLOSE_ASAP), has no
 * socket or has nothing to write. Each stays on main, counted
 * `not_eligible`. */
static void test_handoff_closing_clients_stay_on_main(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
    settle();
    assert_true(io_threads_set_active(THREADS));
    io_offload_stats before = stats();
    /* Each state is undone before the answer is checked: a failed check
     * leaves the client as the loop knows it. */
    int fd = c->fd;
    bool handed[6];
    c->flags |= CLIENT_CLOSE_ASAP;
    handed[0] = io_offload_read(c);
    c->flags &= ~CLIENT_CLOSE_ASAP;
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    handed[1] = io_offload_read(c);
    c->flags &= ~CLIENT_CLOSE_AFTER_REPLY;
    c->fd = -1;
    handed[2] = io_offload_read(c);
    c->fd = fd;
    handed[3] = io_offload_write(c); /* nothing to write */
    reply_ok(c);
    c->flags |= CLIENT_CLOSE_ASAP;
    handed[4] = io_offload_write(c);
    c->flags &= ~CLIENT_CLOSE_ASAP;
    c->fd = -1;
    handed[5] = io_offload_write(c);
    c->fd = fd;
    const char *what[6] = {
        "the read of a client flagged CLIENT_CLOSE_ASAP",  "the read of a client flagged CLIENT_CLOSE_AFTER_REPLY",
        "the read of a client with no socket (fd -1)",     "the write of a client with nothing to write",
        "the write of a client flagged CLIENT_CLOSE_ASAP", "the write of a client with no socket (fd -1)"};
    for (int i = 0; i < 6; i++)
        if (handed[i]) fail_msg("%s was handed to a worker: it stays on main (false), counted not_eligible", what[i]);
    assert_int_equal(atomic_load(&c->io_read_state), CLIENT_IO_IDLE);
    assert_int_equal(atomic_load(&c->io_write_state), CLIENT_IO_IDLE);
    expect_fallbacks(before, 0, 0, 6,
                     "three reads (CLOSE_ASAP, CLOSE_AFTER_REPLY, no socket) and three writes (nothing to write, "
                     "CLOSE_ASAP, no socket), each counted not_eligible");
    expect_reply(k.peer, "+OK\r\n"); /* the reply goes out once the client may go */
    close_conn(&k);
}

/* QUIT: the client closes after its reply, and that reply is still
 * written by a worker (only CLOSE_ASAP keeps a write on main). */
static void test_handoff_reply_before_close_goes_to_a_worker(void **state) {
    (void)state;
    conn k = open_conn();
    checked_ping(&k);
    settle();
    io_offload_stats before = stats();
    send_all(k.peer, "QUIT\r\n", 6);
    expect_reply(k.peer, "+OK\r\n");
    settle();
    io_offload_stats after = stats();
    assert_int_equal(after.fallbacks[IO_FALLBACK_NOT_ELIGIBLE], before.fallbacks[IO_FALLBACK_NOT_ELIGIBLE]);
    assert_int_equal(after.writes_done, before.writes_done + 1);
    /* The server closed it after the reply (client_write_done freed it). */
    char b;
    assert_int_equal(read(k.peer, &b, 1), 0);
    close(k.peer);
}

/* A worker writes with no limit per job (io_write_max 0; main's own
 * writes stop at NET_MAX_WRITES_PER_EVENT, 64 KB a turn, or at most
 * 16 KB past it when that ends the output): a reply larger than that is
 * on the socket when its one write job is done. */
static void test_handoff_worker_writes_without_a_limit(void **state) {
    (void)state;
    enum { LEN = 100000 };
    conn k = open_conn();
    client *c = k.c;
    int big = 1 << 20;
    setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(k.peer, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    checked_ping(&k);
    char *buf = zmalloc(LEN + 64);
    int hdr = snprintf(buf, 64, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n", LEN);
    memset(buf + hdr, 'x', LEN);
    memcpy(buf + hdr + LEN, "\r\n", 2);
    send_all(k.peer, buf, (size_t)hdr + LEN + 2);
    expect_reply(k.peer, "+OK\r\n");
    settle();
    send_all(k.peer, "GET big\r\n", 9);
    turn_until_submitted(c, JOB_REQ_WRITE_CLIENT);
    size_t want = (size_t)snprintf(buf, 64, "$%d\r\n", LEN) + LEN + 2;
    size_t got = read_now(k.peer, buf, LEN + 64);
    if (got != want)
        fail_msg("the write job is done but wrote %zu of the reply's %zu bytes: a worker writes with no limit "
                 "per job (io_write_max 0, set after client_io_mark_write, which sets main's)",
                 got, want);
    settle();
    zfree(buf);
    close_conn(&k);
}

/* A new connection's set-up goes to a worker (ACCEPT): io_accepting says
 * so while the job is out, the token is COMPLETED when the worker is done
 * and IDLE once main has taken it back, and the client is then in the
 * loop. With the inbox full, main sets it up itself, at once, and leaves
 * nothing that says ACCEPT: the client's next read is an ordinary one. */
static void test_handoff_accept(void **state) {
    (void)state;
    conn k = open_conn();
    checked_ping(&k);
    close_conn(&k);
    settle();
    last_job[JOB_REQ_ACCEPT] = 0;
    int fd = connect_loopback();
    long long end = loop_deadline();
    while (!last_job[JOB_REQ_ACCEPT] && util_mstime() < end) turn();
    assert_true(last_job[JOB_REQ_ACCEPT] != 0);
    client *c = job_ptr(last_job[JOB_REQ_ACCEPT]);
    if (c->io_accepting != 1)
        fail_msg("an ACCEPT job is out, but io_accepting is %d: its result would be taken for a read's",
                 c->io_accepting);
    expect_completed(&c->io_read_state, "ACCEPT");
    expect_taken_back(c, true, "ACCEPT");
    assert_int_equal(c->io_accepting, 0);
    assert_true(ae_get_file_mask(server.el, c->fd) & AE_READABLE); /* client_accept_done ran */
    conn a = {c, fd};
    checked_ping(&a);
    close_conn(&a);
    settle();

    hold_workers();
    fill_shared_inbox();
    io_offload_stats before = stats();
    uint64_t accepts = submits[JOB_REQ_ACCEPT];
    client *newest = server.clients;
    fd = connect_loopback();
    end = loop_deadline();
    while (server.clients == newest && util_mstime() < end) turn();
    assert_true(server.clients != newest && server.clients != NULL);
    c = server.clients;
    assert_int_equal(submits[JOB_REQ_ACCEPT], accepts);
    if (c->io_accepting != 0)
        fail_msg("the inbox refused the ACCEPT and main set the client up itself, but io_accepting is still %d",
                 c->io_accepting);
    assert_int_equal(atomic_load(&c->io_read_state), CLIENT_IO_IDLE);
    assert_true(ae_get_file_mask(server.el, c->fd) & AE_READABLE);
    assert_int_equal(stats().fallbacks[IO_FALLBACK_QUEUE_FULL], before.fallbacks[IO_FALLBACK_QUEUE_FULL] + 1);
    release_workers();
    settle();
    conn b = {c, fd};
    checked_ping(&b);
    close_conn(&b);
}

/* A result whose token is not COMPLETED is a bug (a worker still owns the
 * client, or nobody handed it off), and main must not go on with it: log
 * and abort. A child takes the result back with the token changed to
 * IDLE, then to PENDING, and must die of SIGABRT each time. The workers
 * are parked first, so that none is inside anything when the child is
 * made. */
static void test_handoff_take_back_aborts_unless_completed(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
    settle();
    send_all(k.peer, "PING\r\n", 6);
    turn_until_submitted(c, JOB_REQ_READ_CLIENT);
    expect_completed(&c->io_read_state, "read");
    assert_true(io_threads_set_active(1));
    const int wrong[] = {CLIENT_IO_IDLE, CLIENT_IO_PENDING};
    for (int i = 0; i < 2; i++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0) {
                dup2(null, 1); /* the log line is expected */
                dup2(null, 2);
            }
            io_threads_debug_submitted = NULL; /* the child has no worker to wait for */
            alarm(10);                         /* and never outlives the test */
            atomic_store(&c->io_read_state, (uint8_t)wrong[i]);
            io_offload_take_results();
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
            fail_msg("a read result was taken back with its token %d, not COMPLETED, and main went on (the "
                     "child %s %d): it must log and abort",
                     wrong[i], WIFSIGNALED(status) ? "died of signal" : "exited with",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    expect_reply(k.peer, "+PONG\r\n"); /* here the token was COMPLETED */
    close_conn(&k);
}

/* --------------------------------------------------------------- argv */

/* Worker 1 is held, so worker 2 parses the commands: their argvs must go
 * back to worker 2, the thread whose allocator made them, one job each
 * (INFO argv_frees counts them), and every object of them must be freed
 * (the end mark is the last one main did not keep), while the value the
 * keyspace kept stays. */
static void test_argv_freed_by_the_parser(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
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
        uint64_t frees = stats().argv_frees;
        /* The new value stays in the keyspace (main releases it), the
         * old one goes; the other objects go back to worker 2. */
        char req[64];
        snprintf(req, sizeof req, "SET warm v%d\r\nECHO drop\r\n", round);
        roundtrip(&k, req, "+OK\r\n$4\r\ndrop\r\n");
        assert_true(worker_jobs(2, JOB_REQ_READ_CLIENT) > reads2);
        assert_int_equal(c->cur_tid, 2);
        release_workers();
        settle();
        assert_int_equal(worker_jobs(2, JOB_REQ_FREE_ARGV), w2 + 2);
        assert_int_equal(worker_jobs(1, JOB_REQ_FREE_ARGV), w1);
        assert_int_equal(stats().argv_frees, frees + 2);
    }
    /* Round 2 replaced a value by one of the same size: whatever more is
     * allocated now was not freed. */
    assert_int_equal(zmalloc_used_memory(), mem_before);
    /* And the value the keyspace kept is whole (either worker may read
     * this, so it comes after the count: a worker's first read allocates
     * its own buffer). */
    roundtrip(&k, "GET warm\r\n", "$2\r\nv2\r\n");
    close_conn(&k);
}

/* Called directly, both workers held so the job waits: the arguments the
 * keyspace kept (refcount above 1) are released on main before the
 * hand-off and their slots NULLed; the end mark (refcount 0) is on the
 * last one left, here not the last slot; worker 2 frees the rest. */
static void test_argv_kept_released_on_main(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
    settle();
    size_t mem0 = zmalloc_used_memory();
    obj *kept = arg("kept"), *kept_last = arg("kept-last"), *a = arg("a"), *b = arg("b");
    obj_incr_ref(kept);
    obj_incr_ref(kept);      /* 3: the argv, the keyspace, this test */
    obj_incr_ref(kept_last); /* 2: the argv, this test */
    obj **argv = argv_of(4, a, kept, b, kept_last);
    hold_workers();
    uint64_t frees = stats().argv_frees, sent = submits[JOB_REQ_FREE_ARGV];
    uint64_t w1 = worker_jobs(1, JOB_REQ_FREE_ARGV), w2 = worker_jobs(2, JOB_REQ_FREE_ARGV);
    c->cur_tid = 2;
    assert_true(io_offload_free_argv(c, 4, argv));
    /* The job waits in worker 2's inbox: the array is the test's to read. */
    assert_int_equal(submits[JOB_REQ_FREE_ARGV], sent + 1);
    assert_ptr_equal(job_ptr(last_job[JOB_REQ_FREE_ARGV]), argv);
    if (kept->refcount != 2 || argv[1] != NULL || kept_last->refcount != 1 || argv[3] != NULL)
        fail_msg("the kept arguments are released on main and their slots NULLed before the hand-off "
                 "(refcounts %u and %u, want 2 and 1; slots %s and %s, want NULL)",
                 kept->refcount, kept_last->refcount, argv[1] ? "set" : "NULL", argv[3] ? "set" : "NULL");
    assert_ptr_equal(argv[0], a);
    assert_int_equal(a->refcount, 1);
    assert_ptr_equal(argv[2], b);
    assert_int_equal(b->refcount, 0); /* the end mark: the last one not kept */
    assert_int_equal(stats().argv_frees, frees + 1);
    release_workers();
    settle();
    assert_int_equal(worker_jobs(2, JOB_REQ_FREE_ARGV), w2 + 1);
    assert_int_equal(worker_jobs(1, JOB_REQ_FREE_ARGV), w1);
    assert_int_equal(kept->refcount, 2);
    assert_int_equal(kept_last->refcount, 1);
    obj_decr_ref(kept);
    obj_decr_ref(kept);
    obj_decr_ref(kept_last);
    assert_int_equal(zmalloc_used_memory(), mem0);
    close_conn(&k);
}

/* Every argument kept: main releases them all and frees the array
 * itself; no job goes to a worker. */
static void test_argv_nothing_left_to_free(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
    settle();
    size_t mem0 = zmalloc_used_memory();
    obj *x = arg("x"), *y = arg("y");
    obj_incr_ref(x);
    obj_incr_ref(y);
    assert_true(io_threads_set_active(THREADS));
    uint64_t frees = stats().argv_frees, sent = submits[JOB_REQ_FREE_ARGV];
    c->cur_tid = 1;
    assert_true(io_offload_free_argv(c, 2, argv_of(2, x, y)));
    assert_int_equal(submits[JOB_REQ_FREE_ARGV], sent);
    assert_int_equal(stats().argv_frees, frees);
    assert_int_equal(x->refcount, 1);
    assert_int_equal(y->refcount, 1);
    obj_decr_ref(x);
    obj_decr_ref(y);
    if (zmalloc_used_memory() != mem0)
        fail_msg("%zd bytes more than before: with nothing left for a worker, main frees the array itself",
                 (ssize_t)(zmalloc_used_memory() - mem0));
    close_conn(&k);
}

/* An argv main allocated (cur_tid 0), one whose worker is parked now, or
 * any with no worker active: false, and the argv untouched, every count
 * as it was, for the caller to free (networking.c's free_argv releases
 * every argument). */
static void test_argv_caller_frees_main_or_parked(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
    settle();
    obj *kept = arg("kept"), *a = arg("a");
    obj_incr_ref(kept); /* 2: the argv, the keyspace */
    obj **argv = argv_of(2, a, kept);
    io_offload_stats before = stats();
    uint64_t sent = submits[JOB_REQ_FREE_ARGV];
    const struct {
        int tid, active;
        const char *what;
    } cases[] = {{0, THREADS, "allocated by main"}, {2, 2, "whose worker is parked"}, {1, 1, "with no worker active"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_true(io_threads_set_active(cases[i].active));
        c->cur_tid = cases[i].tid;
        bool took = io_offload_free_argv(c, 2, argv);
        c->cur_tid = 0;
        if (took || argv[0] != a || argv[1] != kept || a->refcount != 1 || kept->refcount != 2)
            fail_msg("an argv %s: want false and the argv untouched for the caller to free; got %s, "
                     "refcounts %u and %u (want 1 and 2), slots %s",
                     cases[i].what, took ? "true" : "false", a->refcount, kept->refcount,
                     argv[0] == a && argv[1] == kept ? "as they were" : "changed");
    }
    assert_int_equal(submits[JOB_REQ_FREE_ARGV], sent);
    io_offload_stats after = stats();
    assert_int_equal(after.argv_frees, before.argv_frees);
    assert_int_equal(after.fallbacks[IO_FALLBACK_QUEUE_FULL], before.fallbacks[IO_FALLBACK_QUEUE_FULL]);
    obj_decr_ref(a);
    obj_decr_ref(kept);
    obj_decr_ref(kept);
    zfree(argv);
    close_conn(&k);
}

/* Worker 2's private inbox full (the worker held, its inbox filled with
 * argvs of the test's): the argv is freed on main after all, the end
 * mark undone first, and the refusal counted; the call still says the
 * argv is taken care of. */
static void test_argv_inbox_full_freed_on_main(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    checked_ping(&k);
    settle();
    hold_workers();
    int filled = 0;
    for (;;) {
        obj *o = arg("filler");
        o->refcount = 0; /* its own end mark */
        obj **f = argv_of(1, o);
        if (!io_threads_submit_to(2, job_encode(f, JOB_REQ_FREE_ARGV))) {
            obj_free(o);
            zfree(f);
            break;
        }
        filled++;
    }
    assert_true(filled > 0);
    size_t mem0 = zmalloc_used_memory();
    obj *kept = arg("kept");
    obj_incr_ref(kept); /* 2: the argv, this test */
    io_offload_stats before = stats();
    c->cur_tid = 2;
    bool took = io_offload_free_argv(c, 3, argv_of(3, arg("a"), kept, arg("b")));
    if (!took)
        fail_msg("the inbox refused the argv and the call said false: the caller would free what the call "
                 "has already changed (the kept argument released, its slot NULL); free it there, say true");
    io_offload_stats after = stats();
    assert_int_equal(after.fallbacks[IO_FALLBACK_QUEUE_FULL], before.fallbacks[IO_FALLBACK_QUEUE_FULL] + 1);
    assert_int_equal(after.argv_frees, before.argv_frees);
    assert_int_equal(kept->refcount, 1);
    obj_decr_ref(kept);
    if (zmalloc_used_memory() != mem0)
        fail_msg("%zd bytes more than before: an argv the inbox refused is freed on main, every object of it "
                 "(the end mark's refcount back to 1 first)",
                 (ssize_t)(zmalloc_used_memory() - mem0));
    release_workers();
    settle();
    close_conn(&k);
}

/* --------------------------------------------------------------- poll */

/* Both workers held, so a POLL job waits on the shared inbox for as many
 * turns as the test likes. While it is out, main neither polls itself
 * (a second client's request stays unread) nor sends another one: the
 * jobs outstanding stay the two held, one read and one POLL. Once it is
 * done, it is counted (INFO polls_done). */
static void test_poll_one_poller(void **state) {
    (void)state;
    conn a = open_conn(), b = open_conn();
    checked_ping(&a);
    checked_ping(&b);
    settle();
    uint64_t polls = stats().polls_done;
    hold_workers();
    send_all(a.peer, "PING\r\n", 6);
    long long end = loop_deadline();
    while (atomic_load(&a.c->io_read_state) == CLIENT_IO_IDLE && util_mstime() < end) turn();
    assert_int_equal(atomic_load(&a.c->io_read_state), CLIENT_IO_PENDING); /* queued, unrun */
    /* A turn sends the POLL job (once the one before it is taken back). */
    for (int i = 0; i < 10 && io_threads_pending() < 4; i++) turn();
    if (io_threads_pending() != 4)
        fail_msg("results owed and no POLL job out: a turn sends one (jobs outstanding: the two held, the read "
                 "and the POLL job; %zu found). Was the last one taken back (poll_custom installed, the flag "
                 "cleared when done)?",
                 io_threads_pending());
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

/* The POLL job ran after b's request arrived, so it found b readable: the
 * turn that finds the job done handles that event (the job's event count
 * is that turn's), and once nothing is owed, main polls the sockets
 * itself again (ae's own poll is back). */
static void test_poll_events_handled_when_done(void **state) {
    (void)state;
    conn a = open_conn(), b = open_conn();
    checked_ping(&a);
    checked_ping(&b);
    settle();
    hold_workers();
    uint64_t polls = submits[JOB_REQ_POLL];
    send_all(a.peer, "PING\r\n", 6);
    for (int i = 0; i < 10 && submits[JOB_REQ_POLL] == polls; i++) turn();
    assert_int_equal(submits[JOB_REQ_POLL], polls + 1); /* out, behind a's read */
    send_all(b.peer, "PING\r\n", 6);
    release_workers();
    long long end = loop_deadline();
    while (io_threads_pending() > 0 && util_mstime() < end) sched_yield();
    assert_int_equal(io_threads_pending(), 0); /* the POLL job is done */
    last_job[JOB_REQ_READ_CLIENT] = 0;
    turn();
    if (!(last_job[JOB_REQ_READ_CLIENT] && job_ptr(last_job[JOB_REQ_READ_CLIENT]) == b.c))
        fail_msg("the POLL job found b readable, but the turn that found the job done did not handle b's "
                 "event: poll_custom returns the job's event count");
    expect_reply(a.peer, "+PONG\r\n");
    expect_reply(b.peer, "+PONG\r\n");
    settle();
    send_all(b.peer, "PING\r\n", 6);
    last_job[JOB_REQ_READ_CLIENT] = 0;
    for (int i = 0; i < 3 && !last_job[JOB_REQ_READ_CLIENT]; i++) turn();
    if (!last_job[JOB_REQ_READ_CLIENT])
        fail_msg("no POLL job is out and nothing is owed, yet three turns did not see b's request: once its "
                 "job is done, poll_custom gives ae its own poll back (ae_set_custom_poll(el, NULL))");
    expect_reply(b.peer, "+PONG\r\n");
    close_conn(&a);
    close_conn(&b);
}

/* Results owed and the shared inbox full: the POLL job is refused, the
 * refusal counted, and main polls the sockets itself that turn (b's
 * request is served inline, every hand-off refused). Once the workers are
 * free, results owed send a POLL job again: the flag went back. */
static void test_poll_refused_main_polls_itself(void **state) {
    (void)state;
    conn a = open_conn(), b = open_conn();
    checked_ping(&a);
    checked_ping(&b);
    settle();
    hold_workers();
    send_all(a.peer, "PING\r\n", 6);
    long long end = loop_deadline();
    while (atomic_load(&a.c->io_read_state) == CLIENT_IO_IDLE && util_mstime() < end) turn();
    assert_int_equal(atomic_load(&a.c->io_read_state), CLIENT_IO_PENDING); /* queued, unrun: owed */
    /* The turn that queued the read sent no POLL job (its before_sleep
     * came first): the next one tries, with the inbox full. */
    fill_shared_inbox();
    io_offload_stats before = stats();
    uint64_t polls = submits[JOB_REQ_POLL];
    turn();
    assert_int_equal(submits[JOB_REQ_POLL], polls);
    uint64_t counted = stats().fallbacks[IO_FALLBACK_QUEUE_FULL] - before.fallbacks[IO_FALLBACK_QUEUE_FULL];
    if (counted != 1)
        fail_msg("results owed, the inbox full: the turn's refused POLL job is counted once (queue_full), "
                 "counted %llu times",
                 (unsigned long long)counted);
    send_all(b.peer, "PING\r\n", 6);
    char got[16] = {0};
    size_t n = 0;
    for (int i = 0; i < 4 && n < 7; i++) {
        turn();
        n += read_now(b.peer, got + n, 7 - n);
    }
    if (n != 7 || strcmp(got, "+PONG\r\n") != 0)
        fail_msg("the POLL job was refused, so main polls the sockets itself: four turns did not serve b "
                 "(%zu bytes of its reply came)",
                 n);
    release_workers();
    expect_reply(a.peer, "+PONG\r\n");
    settle();
    uint64_t done = stats().polls_done;
    checked_ping(&b);
    settle();
    if (stats().polls_done == done)
        fail_msg("results were owed again and no POLL job went out: after a refused one, poll_state is back "
                 "to none");
    close_conn(&a);
    close_conn(&b);
}

/* One round of the routing test: every worker held, a request makes a
 * result owed, and the turn after sends a POLL job. Returns how many jobs
 * the shared inbox holds then: the read, and the POLL job too when it
 * went there. */
static size_t poll_round_queued(conn *k) {
    hold_workers();
    uint64_t polls = submits[JOB_REQ_POLL];
    send_all(k->peer, "PING\r\n", 6);
    for (int i = 0; i < 10 && submits[JOB_REQ_POLL] == polls; i++) turn();
    assert_int_equal(submits[JOB_REQ_POLL], polls + 1);
    return io_threads_queued();
}

/* Above 9 active threads (main counted) a POLL job goes to the workers'
 * private inboxes in turn (1, 2, … active - 1, 1, …), published at once;
 * up to 9 it goes to the shared inbox. A pool of 10, then one of 9: each
 * round holds every worker while the job goes out, so where it went is
 * certain, then lets them go without turning the loop (the job must be
 * runnable as it is). Every POLL job of the test is noted with the worker
 * that ran it (those the hook ran at once too), and their order checked. */
static void test_poll_private_inboxes_in_turn(void **state) {
    (void)state;
    const char *err = NULL;
    assert_true(io_offload_set_threads(10, &err));
    /* Nine workers on a machine that may have two cores: idle ones sleep
     * soon instead of spinning against main (main's own spin, the
     * server's setting, is untouched: it keeps turning while owed). */
    io_threads_set_idle_spin_us(50);
    conn k = open_conn();
    checked_ping(&k);
    settle();
    uint64_t refused = stats().fallbacks[IO_FALLBACK_QUEUE_FULL];
    polls_noted = 0;
    for (int round = 0; round < 20 && polls_noted < 2 * 9 + 2; round++) {
        uint64_t before[GATES];
        for (int t = 1; t < GATES; t++) before[t] = worker_jobs(t, JOB_REQ_POLL);
        uint64_t ran = all_worker_jobs(JOB_REQ_POLL);
        size_t queued = poll_round_queued(&k);
        int slot = polls_noted - 1;
        if (queued != 1)
            fail_msg("10 threads active: the POLL job went to the shared inbox (%zu jobs there); above 9 it "
                     "goes to a worker's private inbox",
                     queued);
        release_workers();
        long long end = loop_deadline();
        while (all_worker_jobs(JOB_REQ_POLL) == ran && util_mstime() < end) sched_yield();
        int to = 0;
        for (int t = 1; t < GATES; t++)
            if (worker_jobs(t, JOB_REQ_POLL) > before[t]) to = t;
        if (to == 0)
            fail_msg("the workers are free, and the POLL job in a private inbox did not run: a job put there is "
                     "unpublished until io_threads_commit");
        poll_to[slot] = to;
        expect_reply(k.peer, "+PONG\r\n");
        settle();
    }
    assert_true(polls_noted >= 2 * 9 + 2);
    for (int i = 1; i < polls_noted; i++)
        if (poll_to[i] != poll_to[i - 1] % 9 + 1)
            fail_msg("POLL job %d went to worker %d after one to worker %d: with 10 threads active they go "
                     "to workers 1 .. 9 in turn",
                     i, poll_to[i], poll_to[i - 1]);
    if (stats().fallbacks[IO_FALLBACK_QUEUE_FULL] != refused)
        fail_msg("a private inbox with room refused a POLL job: only workers 1 .. active - 1 have one");
    close_conn(&k);

    assert_true(io_offload_set_threads(9, &err));
    k = open_conn();
    checked_ping(&k);
    settle();
    size_t queued = poll_round_queued(&k);
    if (queued != 2)
        fail_msg("9 threads active: the POLL job goes to the shared inbox (it holds %zu jobs, want the read "
                 "and the POLL)",
                 queued);
    release_workers();
    expect_reply(k.peer, "+PONG\r\n");
    settle();
    close_conn(&k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_handoff_token_before_enqueue, after_each),
        cmocka_unit_test_teardown(test_handoff_queue_full_falls_back, after_each),
        cmocka_unit_test_teardown(test_handoff_refused_without_a_worker, after_each),
        cmocka_unit_test_teardown(test_handoff_closing_clients_stay_on_main, after_each),
        cmocka_unit_test_teardown(test_handoff_reply_before_close_goes_to_a_worker, after_each),
        cmocka_unit_test_teardown(test_handoff_worker_writes_without_a_limit, after_each),
        cmocka_unit_test_teardown(test_handoff_accept, after_each),
        cmocka_unit_test_teardown(test_handoff_take_back_aborts_unless_completed, after_each),
        cmocka_unit_test_teardown(test_argv_freed_by_the_parser, after_each),
        cmocka_unit_test_teardown(test_argv_kept_released_on_main, after_each),
        cmocka_unit_test_teardown(test_argv_nothing_left_to_free, after_each),
        cmocka_unit_test_teardown(test_argv_caller_frees_main_or_parked, after_each),
        cmocka_unit_test_teardown(test_argv_inbox_full_freed_on_main, after_each),
        cmocka_unit_test_teardown(test_poll_one_poller, after_each),
        cmocka_unit_test_teardown(test_poll_events_handled_when_done, after_each),
        cmocka_unit_test_teardown(test_poll_refused_main_polls_itself, after_each),
        cmocka_unit_test_teardown(test_poll_private_inboxes_in_turn, after_each),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
