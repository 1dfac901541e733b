/* test_watermark.c — step 5's exercise: the watermark that bounds a write
 * job (src/client_io.c: client_io_mark_write, client_io_write).
 *
 * A write job reads the client's output while main may append to it. Most
 * tests play both sides on one thread, so every mistake shows every time:
 * main marks the output, appends more (into buf, into the marked block,
 * into new blocks, moving bufpos, the marked block's used and next,
 * reply_head and reply_tail), and only then runs the write as the worker
 * would. The write must send exactly the bytes pending at the mark, so a
 * write that reads one of those fields instead of the mark sends the
 * wrong bytes. test_write_marks_in_every_position does that in every place
 * the mark can sit (buf, inside a block, at a block's end, with sentlen
 * in buf or in the first block). Nothing may be consumed or freed by the
 * write: main takes the bytes off afterwards (client_write_done).
 *
 * Two tests run a real second thread. test_write_while_main_appends hands
 * the client to a thread of its own that runs the write while main keeps
 * appending: nothing orders main's appends after the hand-off before the
 * worker's reads, so ThreadSanitizer reports any read of a field main
 * writes, whatever the timing (the full matrix of `make grade` runs it);
 * what main appended before the hand-off makes a write that follows a
 * live field send wrong bytes in every build. test_write_through_workers
 * goes through the server's I/O threads: it sends the client's next
 * commands before reading the replies to the earlier ones, and holds the
 * worker's write of those (client_io_write_hook) until main has run the
 * next commands and appended their replies, so the overlap happens every
 * time, not once in a long while.
 *
 * test_write_in_rounds draws its sizes from a seed it prints:
 * SOLOIST_TEST_SEED=N replays a run (`make grade` sets it).
 *
 * The loop is not turned between the mark and the write: a turn would
 * write the client itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "client.h"
#include "client_io.h"
#include "client_io_test.h"
#include "networking.h"
#include "reply.h"
#include "server.h"

#include "loop_test.h"

/* test_write_through_workers holds one worker's write through
 * client_io_write_hook (set here, before the I/O threads start, and a
 * no-op until a test arms it). */
enum { HOLD_OFF, HOLD_ARMED, HOLD_HOLDING, HOLD_GO };
static void hold_write(const client *c);
static void hold_set(int to);
static pthread_t main_thread;

/* Each test gets a server of its own, so a test that failed half-way (its
 * client left with output pending, or a write job out) cannot change what
 * the next one sees. */
static int setup(void **state) {
    (void)state;
    main_thread = pthread_self();
    client_io_write_hook = hold_write;
    return loop_server_init(3);
}

static int teardown(void **state) {
    (void)state;
    hold_set(HOLD_GO); /* a worker still held goes, so the pool can stop */
    loop_server_destroy();
    hold_set(HOLD_OFF);
    client_io_write_hook = NULL;
    return 0;
}

/* The bytes main appends, in order: byte i of the stream is pattern(i). */
static char pattern(size_t i) { return (char)('a' + i % 23); }

typedef struct stream {
    size_t appended, received;
} stream;

static void append(client *c, stream *s, size_t n) {
    if (n == 0) return;
    char *p = zmalloc(n);
    for (size_t i = 0; i < n; i++) p[i] = pattern(s->appended + i);
    reply_proto(c, p, n);
    s->appended += n;
    zfree(p);
}

/* Reads everything the peer has, without turning the loop; checks every
 * byte against the stream. Returns how many arrived. */
static size_t receive(int fd, stream *s) {
    char buf[4096];
    size_t got = 0;
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
        for (ssize_t i = 0; i < n; i++) assert_int_equal(buf[i], pattern(s->received + (size_t)i));
        s->received += (size_t)n;
        got += (size_t)n;
    }
    return got;
}

/* The bytes pending now: what a mark taken now covers. */
static size_t pending(const client *c) {
    size_t n = c->bufpos - (c->bufpos ? c->sentlen : 0);
    for (reply_block *b = c->reply_head; b; b = b->next)
        n += b->used - (!c->bufpos && b == c->reply_head ? c->sentlen : 0);
    return n;
}

/* The k-th block of the output (1: reply_head), or NULL for 0. */
static reply_block *block_at(const client *c, int k) {
    reply_block *b = NULL;
    for (int i = 1; i <= k; i++) b = i == 1 ? c->reply_head : b ? b->next : NULL;
    return b;
}

/* Appends until buf is full and `blocks` blocks exist, the last one full
 * too: the mark then sits at a block boundary. */
static void fill(client *c, stream *s, long blocks) {
    append(c, s, c->buf_size ? c->buf_size - c->bufpos : CLIENT_REPLY_MIN);
    while (c->reply_blocks < blocks || c->reply_tail->used < c->reply_tail->size) {
        reply_block *t = c->reply_tail;
        append(c, s, t && t->used < t->size ? t->size - t->used : CLIENT_REPLY_CHUNK);
    }
}

/* Writes all that is pending, as main would (mark, write, done), and
 * checks that the peer got the whole stream exactly once. */
static void drain(conn *k, stream *s) {
    for (int i = 0; i < 100 && pending(k->c); i++) {
        client_io_mark_write(k->c);
        k->c->io_write_max = 0;
        client_io_write(k->c);
        assert_int_equal(receive(k->peer, s), k->c->io_nwritten);
        assert_int_equal(client_write_done(k->c, 1), 0);
    }
    assert_int_equal(pending(k->c), 0);
    assert_int_equal(s->received, s->appended);
}

/* Only buf holds output: the mark is buf's bufpos, and what main appends
 * to buf after it is not sent. */
static void test_write_stops_at_mark_in_buf(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    append(c, &s, 7);
    client_io_mark_write(c);
    assert_null(c->io_last_reply_block);
    assert_int_equal(c->io_last_bufpos, 7);
    append(c, &s, 9); /* main, while the worker writes */
    client_io_write(c);
    assert_int_equal(c->io_nwritten, 7);
    assert_int_equal(receive(k.peer, &s), 7);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 9);
    close_conn(&k);
}

/* The mark inside a block: buf's pending bytes, then the block up to its
 * used at the mark, and not what main adds to that block afterwards. */
static void test_write_stops_at_mark_in_block(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    append(c, &s, CLIENT_REPLY_MIN + 100); /* buf full, 100 bytes in a block */
    assert_non_null(c->reply_tail);
    client_io_mark_write(c);
    assert_ptr_equal(c->io_last_reply_block, c->reply_tail);
    assert_int_equal(c->io_last_bufpos, 100);
    size_t marked = pending(c);
    append(c, &s, 50); /* into the marked block, past its mark */
    client_io_write(c);
    assert_int_equal(c->io_nwritten, marked);
    assert_int_equal(receive(k.peer, &s), marked);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 50);
    close_conn(&k);
}

/* The mark at the end of a full block: main's next bytes go into a new
 * block, linked through the marked block's next. The write must stop at
 * the mark without following it. */
static void test_write_skips_blocks_after_mark(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    fill(c, &s, 2);
    client_io_mark_write(c);
    assert_ptr_equal(c->io_last_reply_block, c->reply_tail);
    assert_int_equal(c->io_last_bufpos, c->reply_tail->used);
    size_t marked = pending(c);
    append(c, &s, 300); /* a new block after the marked one */
    assert_int_equal(c->reply_blocks, 3);
    client_io_write(c);
    assert_int_equal(c->io_nwritten, marked);
    assert_int_equal(receive(k.peer, &s), marked);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 300);
    close_conn(&k);
}

/* The mark forgets the previous write: after a write that marked a block
 * (freed since by client_write_done), a mark with only buf pending names
 * no block, so buf ends at the new mark, not at main's live bufpos. */
static void test_mark_after_blocks_were_written(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    append(c, &s, CLIENT_REPLY_MIN + 300);
    client_io_mark_write(c);
    assert_non_null(c->io_last_reply_block);
    client_io_write(c);
    assert_int_equal(receive(k.peer, &s), CLIENT_REPLY_MIN + 300);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_null(c->reply_head);
    append(c, &s, 40);
    client_io_mark_write(c);
    assert_null(c->io_last_reply_block);
    assert_int_equal(c->io_last_bufpos, 40);
    append(c, &s, 60); /* main, while the worker writes */
    client_io_write(c);
    assert_int_equal(c->io_nwritten, 40);
    assert_int_equal(receive(k.peer, &s), 40);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 60);
    close_conn(&k);
}

/* One place the mark can sit: the output main builds from empty (appends
 * in order; buf holds CLIENT_REPLY_MIN bytes, and each append that does
 * not fit starts a block of at least CLIENT_REPLY_CHUNK), how many of its
 * bytes a first write took off before the mark (where sentlen is), where
 * the mark must fall (block number, 0 for buf, and the position in it),
 * and what main appends between the mark and the write. `during` is for
 * test_write_while_main_appends: what main appends while the worker
 * writes. Lists end at the first 0. */
#define BUF CLIENT_REPLY_MIN
#define BLK CLIENT_REPLY_CHUNK
typedef struct position {
    const char *name;
    size_t before[5];
    size_t sent;
    int mark_block;
    size_t mark_pos;
    size_t after[3];
    size_t during[3];
} position;

static void append_all(client *c, stream *s, const size_t *sizes, int n) {
    for (int i = 0; i < n && sizes[i]; i++) append(c, s, sizes[i]);
}

static size_t sum(const size_t *sizes, int n) {
    size_t t = 0;
    for (int i = 0; i < n && sizes[i]; i++) t += sizes[i];
    return t;
}

/* Builds p's output on an idle client with nothing pending, takes p->sent
 * bytes off with a first write, marks, and checks the mark. Returns the
 * bytes the mark covers. */
static size_t build_and_mark(conn *k, stream *s, const position *p) {
    client *c = k->c;
    print_message("position: %s\n", p->name);
    assert_int_equal(pending(c), 0);
    append_all(c, s, p->before, 5);
    assert_int_equal(c->buf_size, BUF); /* the sizes above assume it */
    if (p->sent) {
        client_io_mark_write(c);
        c->io_write_max = p->sent; /* step 7's limit: a write that stops here */
        client_io_write(c);
        assert_int_equal(c->io_nwritten, p->sent);
        assert_int_equal(receive(k->peer, s), p->sent);
        assert_int_equal(client_write_done(c, 1), 0);
    }
    size_t marked = pending(c);
    client_io_mark_write(c);
    c->io_write_max = 0; /* as on a worker: until the socket is full */
    assert_ptr_equal(c->io_last_reply_block, block_at(c, p->mark_block));
    assert_int_equal(c->io_last_bufpos, p->mark_pos);
    return marked;
}

/* After the write: exactly the marked bytes went out, in order; main
 * takes them off, and what it appended since is what is left. */
static void check_write(conn *k, stream *s, size_t marked, size_t appended_since) {
    assert_int_equal(k->c->io_nwritten, marked);
    assert_int_equal(receive(k->peer, s), marked);
    assert_int_equal(client_write_done(k->c, 1), 0);
    assert_int_equal(pending(k->c), appended_since);
    drain(k, s);
}

static const position positions[] = {
    {"in the first block, buf pending; main appends to that block", {BUF, 100}, 0, 1, 100, {50}, {100, BLK}},
    {"in buf; main appends to buf", {100}, 0, 0, 100, {200}, {300, 2 * BUF}},
    {"in the first block; main fills it and links another", {BUF, BLK - 100}, 0, 1, BLK - 100, {1000}, {BLK}},
    {"in buf, sentlen in buf; main appends to buf", {300}, 120, 0, 300, {200}, {100, BUF}},
    {"at the end of the first block; main links another", {BUF, BLK}, 0, 1, BLK, {300}, {BLK}},
    {"in buf; main fills buf and links a block", {100}, 0, 0, 100, {2000}, {300}},
    {"in the first block, buf done, sentlen in it", {BUF, 3000}, BUF + 1000, 1, 3000, {500}, {BLK}},
    {"in buf, sentlen in buf; main fills buf and links a block", {600}, 250, 0, 600, {BUF, 300}, {BLK}},
    {"at the end of the first block, sentlen in it", {BUF, BLK}, BUF + 16000, 1, BLK, {2000}, {BLK}},
    {"at buf's last byte; main links a block", {BUF}, 0, 0, BUF, {500}, {BLK}},
    {"in the third block, sentlen in buf; main fills it and links another",
     {BUF, BLK, BLK, 700},
     500,
     3,
     700,
     {BLK},
     {300}},
    {"in the second block, sentlen in the first; main appends to it, then links another",
     {BUF, BLK, 200},
     BUF + 700,
     2,
     200,
     {100, BLK},
     {BLK}},
    {"at the end of the first block, nothing appended before the write starts", {BUF, BLK}, 0, 1, BLK, {0}, {300, BLK}},
};
#define N_POSITIONS (sizeof positions / sizeof positions[0])

/* Every place the mark can sit, one after another on one client: main
 * marks, appends (p->after), and then the write runs. Main's appends move
 * whichever of bufpos, the marked block's used and next, reply_head and
 * reply_tail that position lets it, so a write that reads one of them
 * instead of the mark sends bytes it should not, or skips some. */
static void test_write_marks_in_every_position(void **state) {
    (void)state;
    conn k = open_conn();
    stream s = {0, 0};
    for (size_t i = 0; i < N_POSITIONS; i++) {
        const position *p = &positions[i];
        size_t marked = build_and_mark(&k, &s, p);
        append_all(k.c, &s, p->after, 3); /* main, while the worker writes */
        client_io_write(k.c);
        check_write(&k, &s, marked, sum(p->after, 3));
    }
    close_conn(&k);
}

/* The worker of test_write_while_main_appends. */
typedef struct writer {
    client *c;
    atomic_bool done;
} writer;

static void *write_job(void *arg) {
    writer *w = arg;
    client_io_write(w->c);
    atomic_store_explicit(&w->done, true, memory_order_release);
    return NULL;
}

/* Main and a worker at once: main marks and appends p->after, starts a
 * thread that runs the write (the thread's start is the hand-off: what
 * main did before it is visible to the worker), and appends p->during
 * while it writes. Nothing orders p->during before or after the worker's
 * reads, so under ThreadSanitizer a read of any field main writes there
 * is reported every time; p->after makes a write that follows such a
 * field send wrong bytes in every build, whatever the timing. */
static void test_write_while_main_appends(void **state) {
    (void)state;
    conn k = open_conn();
    stream s = {0, 0};
    for (size_t i = 0; i < N_POSITIONS; i++) {
        const position *p = &positions[i];
        size_t marked = build_and_mark(&k, &s, p);
        append_all(k.c, &s, p->after, 3);
        writer w = {k.c, false};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, write_job, &w), 0);
        append_all(k.c, &s, p->during, 3); /* main, while the worker writes */
        long long deadline = loop_deadline();
        while (!atomic_load_explicit(&w.done, memory_order_acquire) && util_mstime() < deadline) sched_yield();
        if (!atomic_load_explicit(&w.done, memory_order_acquire)) fail_msg("the write did not return in time");
        assert_int_equal(pthread_join(t, NULL), 0);
        check_write(&k, &s, marked, sum(p->after, 3) + sum(p->during, 3));
    }
    close_conn(&k);
}

/* The write only reports: buf, sentlen and every block are as main left
 * them until client_write_done takes the bytes off and frees the blocks
 * (under ASan, a block freed by the write is a use-after-free there),
 * also when it stops part-way. */
static void test_write_consumes_nothing(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    fill(c, &s, 2);
    assert_int_equal(c->bufpos, CLIENT_REPLY_MIN);
    reply_block *head = c->reply_head, *tail = c->reply_tail;
    size_t bytes = c->reply_bytes, all = pending(c);
    /* Up to byte 100 (in buf), to 500 bytes into the first block, to the end. */
    size_t parts[] = {100, CLIENT_REPLY_MIN + 500, all};
    size_t done = 0;
    for (int i = 0; i < 3; i++) {
        client_io_mark_write(c);
        c->io_write_max = parts[i] - done; /* stops part-way, then the rest */
        size_t sentlen = c->sentlen, at = c->bufpos;
        client_io_write(c);
        assert_int_equal(c->io_nwritten, parts[i] - done);
        assert_int_equal(c->sentlen, sentlen);
        assert_int_equal(c->bufpos, at);
        assert_ptr_equal(c->reply_head, head);
        assert_ptr_equal(c->reply_tail, tail);
        assert_ptr_equal(head->next, tail);
        assert_int_equal(c->reply_blocks, 2);
        assert_int_equal(c->reply_bytes, bytes);
        assert_int_equal(receive(k.peer, &s), parts[i] - done);
        done = parts[i];
        if (i < 2) assert_int_equal(client_write_done(c, 1), 0);
    }
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 0);
    assert_null(c->reply_head);
    close_conn(&k);
}

/* The run's seed: SOLOIST_TEST_SEED if set, else from the clock; printed
 * so a failure can be replayed. */
static uint64_t test_seed(const char *test) {
    const char *env = getenv("SOLOIST_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    printf("%s: seed %llu (SOLOIST_TEST_SEED=%llu replays it)\n", test, (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

/* splitmix64: a number in [0, n). */
static size_t rng(uint64_t *s, size_t n) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (size_t)((z ^ (z >> 31)) % n);
}

/* A small socket buffer, so each write stops part-way, anywhere in buf or
 * a block, and sometimes step 7's limit stops it sooner; main appends
 * before and after each mark, sizes drawn from the seed. Round after
 * round, the peer must get the stream exactly once and in order, each
 * write must stay within its mark, and a write that has bytes before its
 * mark and an empty socket must send some. */
static void test_write_in_rounds(void **state) {
    (void)state;
    uint64_t seed = test_seed("test_write_in_rounds");
    conn k = open_conn();
    client *c = k.c;
    int small = 4096;
    assert_int_equal(setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    stream s = {0, 0};
    static const size_t sizes[] = {
        0, 1, 7, 300, CLIENT_REPLY_MIN, 3000, CLIENT_REPLY_CHUNK, 3 * CLIENT_REPLY_CHUNK + 777};
    const size_t n_sizes = sizeof sizes / sizeof sizes[0];
    for (int round = 0; round < 150 || (pending(c) && round < 5000); round++) {
        if (round < 150) append(c, &s, sizes[rng(&seed, n_sizes)]);
        client_io_mark_write(c);
        size_t marked = pending(c);
        c->io_write_max = rng(&seed, 3) ? 0 : 1 + rng(&seed, marked + 1);
        if (round < 150) append(c, &s, sizes[rng(&seed, n_sizes)]); /* main, meanwhile */
        client_io_write(c);
        assert_true(c->io_nwritten <= marked);
        if (marked) assert_true(c->io_nwritten > 0);
        assert_int_equal(receive(k.peer, &s), c->io_nwritten);
        assert_int_equal(client_write_done(c, 1), 0);
    }
    assert_int_equal(pending(c), 0);
    assert_int_equal(s.received, s.appended);
    close_conn(&k);
}

/* The hold: test_write_through_workers arms it for one client; the
 * first write of that client a worker runs then waits in client_io_write
 * (before it reads the output: the mark is set) until the test says go.
 * Every access is relaxed on purpose: the hold orders nothing, so under
 * ThreadSanitizer each read of the held write is judged against main's
 * appends as if the worker had merely been slow. */
static _Atomic int hold = HOLD_OFF;
static _Atomic(const client *) hold_client;

static void hold_set(int to) { atomic_store_explicit(&hold, to, memory_order_relaxed); }

static void hold_write(const client *c) {
    if (pthread_equal(pthread_self(), main_thread)) return;
    if (atomic_load_explicit(&hold, memory_order_relaxed) != HOLD_ARMED) return;
    if (atomic_load_explicit(&hold_client, memory_order_relaxed) != c) return;
    int armed = HOLD_ARMED;
    if (!atomic_compare_exchange_strong_explicit(&hold, &armed, HOLD_HOLDING, memory_order_relaxed,
                                                 memory_order_relaxed))
        return;
    /* Three times as long as a wait of main's, so main gives up first. */
    long long now = util_mstime(), deadline = now + 3 * (loop_deadline() - now);
    while (atomic_load_explicit(&hold, memory_order_relaxed) != HOLD_GO && util_mstime() < deadline) sched_yield();
}

/* Turns the loop until done() or the deadline. */
static bool turn_until(bool (*done)(const client *), const client *c) {
    long long deadline = loop_deadline();
    for (int i = 0; !done(c) && (i < 1000 || util_mstime() < deadline); i++) {
        turn();
        if (i >= 100) sched_yield();
    }
    return done(c);
}

static bool holding(const client *c) {
    (void)c;
    return atomic_load_explicit(&hold, memory_order_relaxed) == HOLD_HOLDING;
}

static long long commands_wanted;
static bool commands_ran(const client *c) { return c->commands_processed >= commands_wanted; }

/* Where a held write's mark must be (main reads it back: the mark is
 * main's, set before the hand-off; the worker only reads it). */
enum { MARK_IN_BUF, MARK_IN_BLOCK, MARK_AT_REF_END };

static bool mark_is(const client *c, int where) {
    const reply_block *m = c->io_last_reply_block;
    if (where == MARK_IN_BUF) return m == NULL && c->io_last_bufpos == c->bufpos;
    if (m != c->reply_tail || m == NULL) return false;
    if (where == MARK_IN_BLOCK) return !m->ref && c->io_last_bufpos == m->used && m->used < m->size;
    return m->ref && c->io_last_bufpos == m->used;
}

/* One overlap, every time: `first` runs and a worker takes the write of
 * its replies and is held there, its mark where `where` says; `then` (n
 * commands) is sent and run, so main appends its replies while that write
 * is out; then the worker goes. The peer must get all the replies, whole
 * and in order. */
static void held_round(conn *k, const char *first, int where, const char *then, int n, const char *want) {
    client *c = k->c;
    atomic_store_explicit(&hold_client, c, memory_order_relaxed);
    atomic_store_explicit(&hold, HOLD_ARMED, memory_order_relaxed);
    send_all(k->peer, first, strlen(first));
    if (!turn_until(holding, c)) fail_msg("no worker took the write of \"%s\"'s reply", first);
    if (!mark_is(c, where)) {
        atomic_store_explicit(&hold, HOLD_GO, memory_order_relaxed);
        fail_msg("the mark for \"%s\"'s reply is not %s", first,
                 where == MARK_IN_BUF     ? "buf's bufpos"
                 : where == MARK_IN_BLOCK ? "inside the last block"
                                          : "the end of the reference block");
    }
    commands_wanted = c->commands_processed + n;
    send_all(k->peer, then, strlen(then));
    bool ran = turn_until(commands_ran, c);
    atomic_store_explicit(&hold, HOLD_GO, memory_order_relaxed);
    if (!ran) fail_msg("main did not run \"%s\" while a worker held the write", then);
    expect_reply(k->peer, want);
    atomic_store_explicit(&hold, HOLD_OFF, memory_order_relaxed);
}

/* Through the I/O threads, with GETs of a value larger than buf and a
 * block (written by reference) and of a smaller one (copied into a
 * block): three held rounds, in which main runs the next commands and
 * appends their replies while a worker's write is out, every time. The
 * mark in buf (main appends to buf, then links the first blocks), inside
 * a block (main appends to it, then links another) and at the end of a
 * reference block (main links one after it). The socket takes every write
 * whole, so what each round sends does not depend on timing. Every reply
 * arrives whole and in order. */
static void test_write_through_workers(void **state) {
    (void)state;
    conn k = open_conn();
    size_t vlen = CLIENT_REPLY_CHUNK + 5000, ulen = CLIENT_REPLY_MIN + 2000;
    char *val = zmalloc(vlen + 1);
    for (size_t i = 0; i < vlen; i++) val[i] = pattern(i);
    val[vlen] = '\0';
    char *set = zmalloc(vlen + 64);
    int setlen = snprintf(set, vlen + 64, "*3\r\n$3\r\nSET\r\n$1\r\nv\r\n$%zu\r\n%s\r\n", vlen, val);
    send_all(k.peer, set, (size_t)setlen);
    expect_reply(k.peer, "+OK\r\n");
    setlen = snprintf(set, vlen + 64, "*3\r\n$3\r\nSET\r\n$1\r\nu\r\n$%zu\r\n%.*s\r\n", ulen, (int)ulen, val + 3);
    send_all(k.peer, set, (size_t)setlen);
    expect_reply(k.peer, "+OK\r\n");
    /* The replies: GET v, GET u, +OK. */
    char *v_reply = zmalloc(vlen + 32), *u_reply = zmalloc(ulen + 32);
    int hl = snprintf(v_reply, 32, "$%zu\r\n", vlen);
    memcpy(v_reply + hl, val, vlen);
    memcpy(v_reply + (size_t)hl + vlen, "\r\n", 3);
    hl = snprintf(u_reply, 32, "$%zu\r\n", ulen);
    memcpy(u_reply + hl, val + 3, ulen);
    memcpy(u_reply + (size_t)hl + ulen, "\r\n", 3);
    size_t vl = strlen(v_reply), ul = strlen(u_reply);
    char *want = zmalloc(2 * (vl + ul) + 64);

    /* The mark in buf ("+OK"): main appends "+OK" to buf, then links
     * v's reference block and a block for u's reply. */
    snprintf(want, 2 * (vl + ul) + 64, "+OK\r\n+OK\r\n%s%s", v_reply, u_reply);
    held_round(&k, "SET w x\r\n", MARK_IN_BUF, "SET w y\r\nGET v\r\nGET u\r\n", 3, want);
    /* The mark inside the block u's reply went to (after v's reference
     * block, so never in buf, whatever size the cron gave buf): main
     * appends "+OK" to that block, then links v's reference block. */
    snprintf(want, 2 * (vl + ul) + 64, "%s%s+OK\r\n%s", v_reply, u_reply, v_reply);
    held_round(&k, "GET v\r\nGET u\r\n", MARK_IN_BLOCK, "SET w x\r\nGET v\r\n", 2, want);
    /* The mark at the end of v's reference block: main links another
     * reference block after it, then appends "+OK" after that one. */
    snprintf(want, 2 * (vl + ul) + 64, "%s%s+OK\r\n", v_reply, v_reply);
    held_round(&k, "GET v\r\n", MARK_AT_REF_END, "GET v\r\nSET w x\r\n", 2, want);

    zfree(want);
    zfree(u_reply);
    zfree(v_reply);
    zfree(set);
    zfree(val);
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    close_conn(&k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_stops_at_mark_in_buf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_stops_at_mark_in_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_skips_blocks_after_mark, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mark_after_blocks_were_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_marks_in_every_position, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_while_main_appends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_consumes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_in_rounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_through_workers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
