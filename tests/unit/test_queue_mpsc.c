/* test_queue_mpsc.c — the multi-producer, single-consumer ring and its
 * never-blocking producer (step 2).
 *
 * One thread first: empty, order, full with a ticket kept across tries, a
 * hole (a reserved position not yet written) that the consumer waits at,
 * the spill list growing and draining, head read only when head_cache
 * says "full", tail never read by the consumer, and wraparound of the
 * counters.
 * Then N producer threads against one consumer, checking that every item
 * arrives once and in its producer's order, with the full path forced:
 * the consumer starts only after the ring has filled (and producers have
 * spilled, or retried their tickets).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "queue_mpsc.h"
#include "threads_test.h"

static mpsc_queue *new_queue(void) {
    mpsc_queue *q = aligned_alloc(CACHE_LINE_SIZE, sizeof *q);
    assert_non_null(q);
    mpsc_init(q);
    return q;
}

/* Dequeues one batch of at most max and checks it is exactly producer p's
 * items first, first + 1, ... first + want - 1. */
static void expect_batch(mpsc_queue *q, size_t max, size_t p, size_t first, size_t want) {
    uintptr_t out[64];
    assert_true(max <= 64);
    size_t n = mpsc_dequeue_batch(q, out, max);
    assert_int_equal(n, want);
    for (size_t i = 0; i < n; i++) assert_int_equal(out[i], ITEM(p, first + i));
}

/* Dequeues everything there is and checks it is producer p's items from
 * first on; returns how many. */
static size_t drain_expect(mpsc_queue *q, size_t p, size_t first) {
    uintptr_t out[32];
    size_t got = 0, n;
    while ((n = mpsc_dequeue_batch(q, out, 32)) > 0) {
        for (size_t i = 0; i < n; i++) assert_int_equal(out[i], ITEM(p, first + got + i));
        got += n;
    }
    return got;
}

static void test_mpsc_empty(void **state) {
    (void)state;
    mpsc_queue *q = new_queue();
    uintptr_t out[4];
    assert_true(atomic_is_lock_free(&q->tail));
    assert_true(atomic_is_lock_free(&q->slot[0]));
    assert_int_equal(mpsc_dequeue_batch(q, out, 4), 0);
    free(q);
}

static void test_mpsc_order_and_batches(void **state) {
    (void)state;
    mpsc_queue *q = new_queue();
    mpsc_ticket t = {0};
    for (size_t k = 0; k < 40; k++) assert_true(mpsc_enqueue(q, &t, ITEM(0, k)));
    assert_false(t.reserved);
    expect_batch(q, 1, 0, 0, 1);
    expect_batch(q, 32, 0, 1, 32);
    expect_batch(q, 64, 0, 33, 7); /* fewer than asked: all there are */
    expect_batch(q, 64, 0, 40, 0);
    assert_true(mpsc_enqueue(q, &t, ITEM(0, 40)));
    expect_batch(q, 0, 0, 40, 0); /* max 0 takes nothing */
    expect_batch(q, 1, 0, 40, 1);
    free(q);
}

static void test_mpsc_full_keeps_ticket(void **state) {
    (void)state;
    mpsc_queue *q = new_queue();
    mpsc_ticket t = {0};
    for (size_t k = 0; k < MPSC_QUEUE_SIZE; k++) assert_true(mpsc_enqueue(q, &t, ITEM(0, k)));
    assert_false(mpsc_enqueue(q, &t, ITEM(0, MPSC_QUEUE_SIZE)));
    assert_true(t.reserved);
    assert_int_equal(t.index, MPSC_QUEUE_SIZE);
    /* A retry reuses the position: tail does not move again. */
    assert_false(mpsc_enqueue(q, &t, ITEM(0, MPSC_QUEUE_SIZE)));
    assert_int_equal(atomic_load(&q->tail), MPSC_QUEUE_SIZE + 1);
    expect_batch(q, 1, 0, 0, 1);
    assert_true(mpsc_enqueue(q, &t, ITEM(0, MPSC_QUEUE_SIZE)));
    assert_false(t.reserved);
    assert_int_equal(drain_expect(q, 0, 1), MPSC_QUEUE_SIZE);
    free(q);
}

/* The producers judge room from head_cache and read head only when the
 * copy says "full"; what they read they pass on in head_cache, so the
 * next producer need not read head either. */
static void test_mpsc_cached_head(void **state) {
    (void)state;
    mpsc_queue *q = new_queue();
    mpsc_ticket t = {0};
    for (size_t k = 0; k < 2; k++) assert_true(mpsc_enqueue(q, &t, ITEM(0, k)));
    expect_batch(q, 1, 0, 0, 1); /* head 1 */
    /* The copy (0) leaves room for position 2: head is not read. */
    assert_true(mpsc_enqueue(q, &t, ITEM(0, 2)));
    assert_int_equal(atomic_load(&q->head_cache), 0);
    /* A copy that says "full" for position 3: head is read, there is
     * room, and head_cache is brought up to head. */
    atomic_store(&q->head_cache, (size_t)3 - MPSC_QUEUE_SIZE);
    assert_true(mpsc_enqueue(q, &t, ITEM(0, 3)));
    assert_int_equal(atomic_load(&q->head_cache), 1);
    assert_int_equal(drain_expect(q, 0, 1), 3);
    free(q);
}

/* The consumer never reads tail: the slots say what was written. Here
 * tail is made to lie (nothing reserved) while five items are in their
 * slots; a consumer that believes tail takes nothing. */
static void test_mpsc_consumer_ignores_tail(void **state) {
    (void)state;
    mpsc_queue *q = new_queue();
    mpsc_ticket t = {0};
    for (size_t k = 0; k < 5; k++) assert_true(mpsc_enqueue(q, &t, ITEM(0, k)));
    atomic_store(&q->tail, 0);
    expect_batch(q, 8, 0, 0, 5);
    free(q);
}

/* Two producers, both holding tickets past a full ring. The later one gets
 * in first; the consumer must stop at the earlier one's hole. */
static void test_mpsc_hole_stops_consumer(void **state) {
    (void)state;
    mpsc_queue *q = new_queue();
    mpsc_ticket a = {0}, b = {0};
    for (size_t k = 0; k < MPSC_QUEUE_SIZE; k++) assert_true(mpsc_enqueue(q, &a, ITEM(0, k)));
    assert_false(mpsc_enqueue(q, &a, ITEM(0, MPSC_QUEUE_SIZE))); /* position SIZE */
    assert_false(mpsc_enqueue(q, &b, ITEM(1, 0)));               /* position SIZE + 1 */
    expect_batch(q, 2, 0, 0, 2);
    assert_true(mpsc_enqueue(q, &b, ITEM(1, 0)));
    /* Everything before the hole, then nothing, though b's item is in. */
    assert_int_equal(drain_expect(q, 0, 2), MPSC_QUEUE_SIZE - 2);
    assert_true(mpsc_enqueue(q, &a, ITEM(0, MPSC_QUEUE_SIZE)));
    uintptr_t out[8];
    assert_int_equal(mpsc_dequeue_batch(q, out, 8), 2);
    assert_int_equal(out[0], ITEM(0, MPSC_QUEUE_SIZE));
    assert_int_equal(out[1], ITEM(1, 0));
    free(q);
}

/* mpsc_send past a full ring: the extra items wait in the spill list
 * (growing it several times), then go in, in order, as room appears. */
static void test_mpsc_spill(void **state) {
    (void)state;
    mpsc_queue *q = new_queue();
    mpsc_producer p = {0};
    size_t extra = 1000, total = MPSC_QUEUE_SIZE + extra, got = 0;
    for (size_t k = 0; k < total; k++) mpsc_send(q, &p, ITEM(0, k));
    assert_int_equal(mpsc_spilled(&p), extra);
    assert_true(p.ticket.reserved);
    assert_false(mpsc_flush(q, &p));
    /* Take 100 at a time; each flush moves 100 spilled items in, and the
     * new items sent meanwhile queue up behind them. */
    size_t sent = total;
    while (got < sent) {
        uintptr_t out[100];
        size_t n = 0, m;
        while (n < 100 && (m = mpsc_dequeue_batch(q, out + n, 100 - n)) > 0) n += m;
        for (size_t i = 0; i < n; i++) assert_int_equal(out[i], ITEM(0, got + i));
        got += n;
        if (sent < total + 500) {
            for (int i = 0; i < 50; i++, sent++) mpsc_send(q, &p, ITEM(0, sent));
        }
        mpsc_flush(q, &p);
        assert_true(n > 0);
    }
    assert_int_equal(got, total + 500);
    assert_int_equal(mpsc_spilled(&p), 0);
    assert_true(mpsc_flush(q, &p));
    assert_false(p.ticket.reserved);
    mpsc_producer_reset(&p);
    assert_null(p.spill);
    free(q);
}

static void test_mpsc_wraparound(void **state) {
    (void)state;
    mpsc_queue *q = new_queue();
    size_t base = SIZE_MAX - MPSC_QUEUE_SIZE / 2;
    atomic_store(&q->head, base);
    atomic_store(&q->tail, base);
    atomic_store(&q->head_cache, base);
    mpsc_producer p = {0};
    uint64_t rng = 7;
    size_t sent = 0, got = 0, total = 3 * MPSC_QUEUE_SIZE;
    uintptr_t out[32];
    size_t idle = 0; /* rounds in a row that took nothing: a stuck ring fails, not hangs */
    while (got < total) {
        size_t burst = rng_range(&rng, 0, 100);
        while (burst-- > 0 && sent < total) mpsc_send(q, &p, ITEM(0, sent++));
        mpsc_flush(q, &p);
        size_t n = mpsc_dequeue_batch(q, out, rng_range(&rng, 1, 32));
        for (size_t i = 0; i < n; i++) assert_int_equal(out[i], ITEM(0, got + i));
        got += n;
        idle = n ? 0 : idle + 1;
        assert_true(idle < 1000);
    }
    assert_true(atomic_load(&q->head) < base); /* it did wrap */
    mpsc_producer_reset(&p);
    free(q);
}

/* ---- N producers, one consumer --------------------------------------------- */

#define PRODUCERS 4

typedef struct mpsc_run {
    mpsc_queue *q;
    size_t items; /* per producer */
    uint64_t seed;
    bool use_send; /* mpsc_send (spill) or mpsc_enqueue retried (ticket) */
    /* One plain word per item, written by its producer before sending and
     * read by the consumer after receiving: the data an item stands for.
     * Under ThreadSanitizer this checks edge (1) of queue_mpsc.c. */
    size_t *payload;
    atomic_bool filled;       /* some producer found the ring full */
    atomic_size_t full_count; /* how many times, all producers */
    bool consumer_ok;
} mpsc_run;

typedef struct producer_arg {
    mpsc_run *run;
    size_t id;
} producer_arg;

static void note_full(mpsc_run *r) {
    atomic_fetch_add_explicit(&r->full_count, 1, memory_order_relaxed);
    atomic_store_explicit(&r->filled, true, memory_order_relaxed);
}

static void *mpsc_producer_main(void *arg) {
    producer_arg *a = arg;
    mpsc_run *r = a->run;
    uint64_t rng = r->seed + a->id;
    mpsc_producer p = {0};
    for (size_t k = 0; k < r->items; k++) {
        r->payload[a->id * r->items + k] = k;
        if (r->use_send) {
            bool was = mpsc_spilled(&p) > 0;
            mpsc_send(r->q, &p, ITEM(a->id, k));
            if (!was && mpsc_spilled(&p) > 0) note_full(r);
        } else {
            while (!mpsc_enqueue(r->q, &p.ticket, ITEM(a->id, k))) {
                note_full(r);
                if (test_stuck()) return NULL;
                sched_yield();
            }
        }
        maybe_pause(&rng, 1024);
    }
    /* Nothing may stay behind: flush until the consumer made room. */
    while (!mpsc_flush(r->q, &p)) {
        if (test_stuck()) break;
        sched_yield();
    }
    mpsc_producer_reset(&p);
    return NULL;
}

static void *mpsc_consumer_main(void *arg) {
    mpsc_run *r = arg;
    uint64_t rng = r->seed ^ 0xc0ffee;
    size_t next[PRODUCERS] = {0}, got = 0, want = PRODUCERS * r->items;
    uintptr_t out[32];
    r->consumer_ok = false;
    while (!atomic_load_explicit(&r->filled, memory_order_relaxed))
        if (test_stuck()) return NULL;
    while (got < want) {
        size_t n = mpsc_dequeue_batch(r->q, out, rng_range(&rng, 1, 32));
        for (size_t i = 0; i < n; i++) {
            size_t p = ITEM_PRODUCER(out[i]);
            /* In order per producer means: each is the next one expected;
             * so also none lost before it and none seen twice. */
            if (p >= PRODUCERS || ITEM_SEQ(out[i]) != next[p] || r->payload[p * r->items + next[p]] != next[p]) {
                print_error("item %#lx: expected producer %zu's item %zu\n", (unsigned long)out[i], p,
                            p < PRODUCERS ? next[p] : 0);
                return NULL;
            }
            next[p]++;
        }
        got += n;
        if (n == 0 && test_stuck()) return NULL;
        maybe_pause(&rng, 512);
    }
    uintptr_t extra;
    r->consumer_ok = mpsc_dequeue_batch(r->q, &extra, 1) == 0;
    return NULL;
}

static void run_producers(const char *name, bool use_send) {
    test_start();
    mpsc_run r = {.q = new_queue(), .items = TEST_ITEMS(500000), .seed = test_seed(name), .use_send = use_send};
    r.payload = calloc(PRODUCERS * r.items, sizeof *r.payload);
    assert_non_null(r.payload);
    producer_arg args[PRODUCERS];
    pthread_t prod[PRODUCERS], cons;
    start_thread(&cons, mpsc_consumer_main, &r);
    for (size_t i = 0; i < PRODUCERS; i++) {
        args[i] = (producer_arg){&r, i};
        start_thread(&prod[i], mpsc_producer_main, &args[i]);
    }
    for (size_t i = 0; i < PRODUCERS; i++) pthread_join(prod[i], NULL);
    pthread_join(cons, NULL);
    assert_false(test_stuck());
    assert_true(r.consumer_ok);
    assert_true(atomic_load(&r.full_count) > 0);
    printf("%s: %zu items, the ring was full %zu times\n", name, PRODUCERS * r.items, atomic_load(&r.full_count));
    free(r.payload);
    free(r.q);
}

static void test_mpsc_producers_spill(void **state) {
    (void)state;
    run_producers("test_mpsc_producers_spill", true);
}

static void test_mpsc_producers_ticket_retry(void **state) {
    (void)state;
    run_producers("test_mpsc_producers_ticket_retry", false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mpsc_empty),
        cmocka_unit_test(test_mpsc_order_and_batches),
        cmocka_unit_test(test_mpsc_full_keeps_ticket),
        cmocka_unit_test(test_mpsc_cached_head),
        cmocka_unit_test(test_mpsc_consumer_ignores_tail),
        cmocka_unit_test(test_mpsc_hole_stops_consumer),
        cmocka_unit_test(test_mpsc_spill),
        cmocka_unit_test(test_mpsc_wraparound),
        cmocka_unit_test(test_mpsc_producers_spill),
        cmocka_unit_test(test_mpsc_producers_ticket_retry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
