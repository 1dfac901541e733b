/* test_queue_spsc.c — the single-producer, single-consumer ring (step 2).
 *
 * One thread first: empty, full, invisible-until-commit, one publish per
 * batch (and no store at all for a commit with nothing new), each side
 * reading the other's counter only when its copy stops it, batch sizes
 * and wraparound, including a wrap of the size_t counters themselves. Then a
 * producer and a consumer thread with random commit and batch sizes,
 * checking that every item arrives once and in order, with the full path
 * forced: the consumer waits until the producer has found the ring full.
 * Their first items go in lock step, so that every run puts edge 2 to the
 * test: after each batch the consumer waits until the producer has
 * written over the slots it handed back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "queue_spsc.h"
#include "threads_test.h"

/* Page-aligned, so that commit_stores can make the counters read-only. */
static spsc_queue *new_queue(void) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    spsc_queue *q = aligned_alloc(page, (sizeof *q + page - 1) / page * page);
    assert_non_null(q);
    spsc_init(q);
    return q;
}

/* Whether spsc_commit(q) stores anything, even the value already there:
 * a child process makes the page of counters read-only and commits, so a
 * store kills it (SIGSEGV, or a sanitizer's report of it). The parent's q
 * is untouched. The child puts SIGSEGV and SIGBUS back to their default
 * and writes nowhere: cmocka's handler for them, inherited through fork,
 * would otherwise catch the expected fault, print the test as FAILED on
 * the parent's stdout and run the rest of the tests in the child. */
static bool commit_stores(spsc_queue *q) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2); /* a sanitizer's report is expected */
        }
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        if (mprotect(q, (size_t)sysconf(_SC_PAGESIZE), PROT_READ) != 0) _exit(2);
        spsc_commit(q);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Dequeues exactly `want` items with batches of at most `max` and checks
 * they are ITEM(0, first), ITEM(0, first + 1), ... */
static void expect_items(spsc_queue *q, size_t first, size_t want, size_t max) {
    uintptr_t out[64];
    size_t got = 0;
    while (got < want) {
        size_t n = spsc_dequeue_batch(q, out, max);
        assert_true(n > 0 && n <= max);
        for (size_t i = 0; i < n; i++) assert_int_equal(out[i], ITEM(0, first + got + i));
        got += n;
    }
    assert_int_equal(got, want);
}

static void test_spsc_empty(void **state) {
    (void)state;
    spsc_queue *q = new_queue();
    uintptr_t out[4];
    assert_true(atomic_is_lock_free(&q->head));
    assert_int_equal(spsc_dequeue_batch(q, out, 4), 0);
    assert_true(spsc_is_empty(q));
    assert_false(commit_stores(q)); /* nothing to publish: no store at all */
    spsc_commit(q);
    assert_int_equal(spsc_dequeue_batch(q, out, 4), 0);
    free(q);
}

static void test_spsc_commit_publishes(void **state) {
    (void)state;
    spsc_queue *q = new_queue();
    uintptr_t out[8];
    for (size_t k = 0; k < 3; k++) assert_true(spsc_enqueue(q, ITEM(0, k)));
    /* Written but not published: the consumer sees nothing yet, and the
     * producer does not call the queue empty. */
    assert_int_equal(spsc_dequeue_batch(q, out, 8), 0);
    assert_false(spsc_is_empty(q));
    spsc_commit(q);
    assert_int_equal(spsc_dequeue_batch(q, out, 8), 3);
    for (size_t k = 0; k < 3; k++) assert_int_equal(out[k], ITEM(0, k));
    assert_true(spsc_is_empty(q));
    free(q);
}

/* One publish per batch (step 3): enqueueing moves nothing the consumer
 * reads; the commit moves tail once, by the whole batch, and a commit
 * with nothing new leaves it alone. */
static void test_spsc_batch_publishes_once(void **state) {
    (void)state;
    spsc_queue *q = new_queue();
    for (size_t k = 0; k < 32; k++) {
        assert_true(spsc_enqueue(q, ITEM(0, k)));
        assert_int_equal(atomic_load(&q->tail), 0);
    }
    assert_true(commit_stores(q)); /* the harness sees a store... */
    spsc_commit(q);
    assert_int_equal(atomic_load(&q->tail), 32);
    assert_false(commit_stores(q)); /* ...and an idle commit makes none */
    spsc_commit(q);
    assert_int_equal(atomic_load(&q->tail), 32);
    expect_items(q, 0, 32, 32);
    assert_false(commit_stores(q));
    free(q);
}

/* Each side reads the other's counter only when its own copy stops it:
 * the producer reads head when its copy says "full", the consumer reads
 * tail when its copy says "empty". A read at any other time would fetch
 * the other core's line for nothing; here it shows as a copy that moved. */
static void test_spsc_cached_counters(void **state) {
    (void)state;
    spsc_queue *q = new_queue();
    uintptr_t out[8];
    for (size_t k = 0; k < 2; k++) assert_true(spsc_enqueue(q, ITEM(0, k)));
    spsc_commit(q);
    assert_int_equal(spsc_dequeue_batch(q, out, 1), 1); /* copy said empty: reads tail (2) */
    assert_int_equal(q->tail_cache, 2);
    assert_int_equal(atomic_load(&q->head), 1);
    /* The producer's copy of head (0) leaves room: head is not read. */
    assert_true(spsc_enqueue(q, ITEM(0, 2)));
    assert_int_equal(q->head_cache, 0);
    spsc_commit(q);
    /* The consumer's copy of tail (2) still holds an item: it takes that
     * one without reading tail (3). */
    assert_int_equal(spsc_dequeue_batch(q, out, 8), 1);
    assert_int_equal(out[0], ITEM(0, 1));
    assert_int_equal(q->tail_cache, 2);
    /* Now the copy says empty: tail is read, and the third item comes. */
    assert_int_equal(spsc_dequeue_batch(q, out, 8), 1);
    assert_int_equal(out[0], ITEM(0, 2));
    assert_int_equal(q->tail_cache, 3);
    /* Full by the producer's copy: head is read, and there is room. */
    q->head_cache = 3 - SPSC_QUEUE_SIZE;
    assert_true(spsc_enqueue(q, ITEM(0, 3)));
    assert_int_equal(q->head_cache, 3);
    free(q);
}

static void test_spsc_full_commits(void **state) {
    (void)state;
    spsc_queue *q = new_queue();
    for (size_t k = 0; k < SPSC_QUEUE_SIZE; k++) assert_true(spsc_enqueue(q, ITEM(0, k)));
    /* Full, and nothing was ever committed: the refusal must publish, or
     * a producer waiting for room would wait forever. */
    assert_false(spsc_enqueue(q, ITEM(0, SPSC_QUEUE_SIZE)));
    expect_items(q, 0, 32, 32);
    /* 32 slots came back. */
    for (size_t k = 0; k < 32; k++) assert_true(spsc_enqueue(q, ITEM(0, SPSC_QUEUE_SIZE + k)));
    assert_false(spsc_enqueue(q, ITEM(0, SPSC_QUEUE_SIZE + 32)));
    expect_items(q, 32, SPSC_QUEUE_SIZE, 32);
    assert_true(spsc_is_empty(q));
    free(q);
}

static void test_spsc_batch_sizes(void **state) {
    (void)state;
    spsc_queue *q = new_queue();
    uintptr_t out[64];
    for (size_t k = 0; k < 40; k++) assert_true(spsc_enqueue(q, ITEM(0, k)));
    spsc_commit(q);
    assert_int_equal(spsc_dequeue_batch(q, out, 1), 1);
    assert_int_equal(out[0], ITEM(0, 0));
    assert_int_equal(spsc_dequeue_batch(q, out, 32), 32);
    assert_int_equal(out[31], ITEM(0, 32));
    /* Fewer published than asked for: all of them, no more. */
    assert_int_equal(spsc_dequeue_batch(q, out, 64), 7);
    assert_int_equal(out[6], ITEM(0, 39));
    assert_int_equal(spsc_dequeue_batch(q, out, 64), 0);
    /* max 0 takes nothing, even with items waiting. */
    assert_true(spsc_enqueue(q, ITEM(0, 40)));
    spsc_commit(q);
    assert_int_equal(spsc_dequeue_batch(q, out, 0), 0);
    assert_int_equal(spsc_dequeue_batch(q, out, 1), 1);
    assert_int_equal(out[0], ITEM(0, 40));
    free(q);
}

/* Many laps with uneven batches, starting with every counter just below
 * SIZE_MAX so that the counters themselves wrap to 0 midway. */
static void test_spsc_wraparound(void **state) {
    (void)state;
    spsc_queue *q = new_queue();
    size_t base = SIZE_MAX - SPSC_QUEUE_SIZE / 2;
    atomic_store(&q->head, base);
    atomic_store(&q->tail, base);
    q->tail_local = q->head_cache = q->tail_cache = base;
    uint64_t rng = 1;
    size_t sent = 0, got = 0, total = 5 * SPSC_QUEUE_SIZE;
    uintptr_t out[32];
    size_t idle = 0; /* rounds in a row that took nothing: a stuck ring fails, not hangs */
    while (got < total) {
        size_t burst = rng_range(&rng, 0, 100);
        while (burst-- > 0 && sent < total && spsc_enqueue(q, ITEM(0, sent))) sent++;
        spsc_commit(q);
        size_t n = spsc_dequeue_batch(q, out, rng_range(&rng, 1, 32));
        for (size_t i = 0; i < n; i++) assert_int_equal(out[i], ITEM(0, got + i));
        got += n;
        idle = n ? 0 : idle + 1;
        assert_true(idle < 1000);
    }
    assert_true(atomic_load(&q->head) < base); /* it did wrap */
    assert_true(spsc_is_empty(q));
    free(q);
}

/* ---- Two threads ---------------------------------------------------------- */

typedef struct spsc_run {
    spsc_queue *q;
    size_t items;
    uint64_t seed;
    bool commit_never; /* rely on the full path's commit and a final one */
    atomic_bool producer_saw_full;
    atomic_size_t enqueued; /* relaxed both ways: it orders nothing */
    size_t full_count;
    bool consumer_ok;
} spsc_run;

static void *spsc_producer(void *arg) {
    spsc_run *r = arg;
    uint64_t rng = r->seed;
    size_t until_commit = 0;
    for (size_t k = 0; k < r->items; k++) {
        while (!spsc_enqueue(r->q, ITEM(0, k))) {
            r->full_count++;
            atomic_store_explicit(&r->producer_saw_full, true, memory_order_relaxed);
            if (test_stuck()) return NULL;
            sched_yield();
        }
        atomic_store_explicit(&r->enqueued, k + 1, memory_order_relaxed);
        if (r->commit_never) continue;
        if (until_commit == 0) {
            spsc_commit(r->q);
            /* As io_threads does after each commit: its refreshed copy of
             * head is what the next enqueues trust (edge 2). */
            (void)spsc_is_empty(r->q);
            until_commit = rng_range(&rng, 0, 64);
        } else {
            until_commit--;
        }
        maybe_pause(&rng, 4096);
    }
    spsc_commit(r->q);
    return NULL;
}

/* How many items the consumer takes in lock step: two laps of the ring.
 * After each batch it waits until the producer has filled the ring to
 * one slot short of full, so has written over every slot of the batch but
 * its last (one short: a ring that wrongly holds one item less must fail
 * on its own tests, not hang here). The wait reads a relaxed counter, so
 * it adds no happens-before edge of its own. A consumer that stores head
 * before it has read the slots (or stores it relaxed) then races, in
 * every run, with the producer's store into the batch's first slot, and
 * ThreadSanitizer sees the two accesses unordered; left to chance, a
 * consumer faster than the producer keeps the ring nearly empty and the
 * producer seldom writes into a slot just handed back. */
#define LOCKSTEP_ITEMS (2 * SPSC_QUEUE_SIZE)

static void *spsc_consumer(void *arg) {
    spsc_run *r = arg;
    uint64_t rng = r->seed ^ 0x5eed;
    uintptr_t out[32];
    size_t next = 0;
    r->consumer_ok = false;
    /* Let the ring fill once, so the full path runs in every run. */
    while (!atomic_load_explicit(&r->producer_saw_full, memory_order_relaxed))
        if (test_stuck()) return NULL;
    while (next < r->items) {
        size_t n = spsc_dequeue_batch(r->q, out, rng_range(&rng, 1, 32));
        for (size_t i = 0; i < n; i++)
            if (out[i] != ITEM(0, next + i)) {
                print_error("item %zu: got %#lx\n", next + i, (unsigned long)out[i]);
                return NULL;
            }
        next += n;
        if (n == 0 && test_stuck()) return NULL;
        if (n > 0 && next <= LOCKSTEP_ITEMS) {
            size_t refilled = next + SPSC_QUEUE_SIZE - 1 < r->items ? next + SPSC_QUEUE_SIZE - 1 : r->items;
            while (atomic_load_explicit(&r->enqueued, memory_order_relaxed) < refilled)
                if (test_stuck()) return NULL;
        }
        maybe_pause(&rng, 2048);
    }
    r->consumer_ok = true;
    return NULL;
}

static void run_two_threads(const char *name, bool commit_never) {
    test_start();
    spsc_run r = {
        .q = new_queue(), .items = TEST_ITEMS(2000000), .seed = test_seed(name), .commit_never = commit_never};
    pthread_t p, c;
    start_thread(&c, spsc_consumer, &r);
    start_thread(&p, spsc_producer, &r);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    assert_false(test_stuck());
    assert_true(r.consumer_ok);
    assert_true(r.full_count > 0);
    assert_true(spsc_is_empty(r.q));
    free(r.q);
}

static void test_spsc_two_threads(void **state) {
    (void)state;
    run_two_threads("test_spsc_two_threads", false);
}

/* The producer never commits on its own: every item reaches the consumer
 * through the commit a full ring makes, or the last one. */
static void test_spsc_two_threads_commit_on_full_only(void **state) {
    (void)state;
    run_two_threads("test_spsc_two_threads_commit_on_full_only", true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spsc_empty),
        cmocka_unit_test(test_spsc_commit_publishes),
        cmocka_unit_test(test_spsc_batch_publishes_once),
        cmocka_unit_test(test_spsc_cached_counters),
        cmocka_unit_test(test_spsc_full_commits),
        cmocka_unit_test(test_spsc_batch_sizes),
        cmocka_unit_test(test_spsc_wraparound),
        cmocka_unit_test(test_spsc_two_threads),
        cmocka_unit_test(test_spsc_two_threads_commit_on_full_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
