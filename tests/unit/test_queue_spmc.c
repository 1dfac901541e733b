/* test_queue_spmc.c — the single-producer, multi-consumer ring (step 2).
 *
 * One thread first: empty, order, full, a cell claimed but not yet
 * released (the producer must wait for it), size and wraparound of the
 * counters. Then one producer against several consumers, checking that
 * every item is taken exactly once, that each consumer sees its items in
 * the producer's order, and that what the producer wrote before an item
 * is visible to its consumer, with the full path forced: the consumers
 * start only after the producer has found the ring full.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "queue_spmc.h"
#include "threads_test.h"

static spmc_queue *new_queue(void) {
    spmc_queue *q = aligned_alloc(CACHE_LINE_SIZE, sizeof *q);
    assert_non_null(q);
    spmc_init(q);
    return q;
}

static void test_spmc_empty(void **state) {
    (void)state;
    spmc_queue *q = new_queue();
    assert_true(atomic_is_lock_free(&q->head));
    assert_int_equal(spmc_dequeue(q), 0);
    assert_true(spmc_is_empty(q));
    assert_int_equal(spmc_size(q), 0);
    free(q);
}

static void test_spmc_order(void **state) {
    (void)state;
    spmc_queue *q = new_queue();
    for (size_t k = 0; k < 10; k++) assert_true(spmc_enqueue(q, ITEM(0, k)));
    assert_int_equal(spmc_size(q), 10);
    assert_false(spmc_is_empty(q));
    for (size_t k = 0; k < 10; k++) assert_int_equal(spmc_dequeue(q), ITEM(0, k));
    assert_int_equal(spmc_dequeue(q), 0);
    assert_true(spmc_is_empty(q));
    assert_int_equal(spmc_size(q), 0);
    free(q);
}

static void test_spmc_full(void **state) {
    (void)state;
    spmc_queue *q = new_queue();
    for (size_t k = 0; k < SPMC_QUEUE_SIZE; k++) assert_true(spmc_enqueue(q, ITEM(0, k)));
    assert_false(spmc_enqueue(q, ITEM(0, SPMC_QUEUE_SIZE)));
    assert_int_equal(spmc_size(q), SPMC_QUEUE_SIZE);
    assert_int_equal(spmc_dequeue(q), ITEM(0, 0));
    assert_true(spmc_enqueue(q, ITEM(0, SPMC_QUEUE_SIZE)));
    assert_false(spmc_enqueue(q, ITEM(0, SPMC_QUEUE_SIZE + 1)));
    for (size_t k = 1; k <= SPMC_QUEUE_SIZE; k++) assert_int_equal(spmc_dequeue(q), ITEM(0, k));
    assert_int_equal(spmc_dequeue(q), 0);
    free(q);
}

/* A consumer that has won position 0 but not yet stored its release:
 * head has moved, the cell is still the item's. The producer must not
 * write there, though spmc_size says there is room. */
static void test_spmc_claimed_not_released(void **state) {
    (void)state;
    spmc_queue *q = new_queue();
    for (size_t k = 0; k < SPMC_QUEUE_SIZE; k++) assert_true(spmc_enqueue(q, ITEM(0, k)));
    atomic_store(&q->head, 1); /* the claim, without the release */
    assert_int_equal(spmc_size(q), SPMC_QUEUE_SIZE - 1);
    assert_false(spmc_enqueue(q, ITEM(0, SPMC_QUEUE_SIZE)));
    /* The other consumers go on from position 1. */
    assert_int_equal(spmc_dequeue(q), ITEM(0, 1));
    assert_false(spmc_enqueue(q, ITEM(0, SPMC_QUEUE_SIZE)));
    atomic_store(&q->cell[0].seq, SPMC_QUEUE_SIZE); /* the release */
    assert_true(spmc_enqueue(q, ITEM(0, SPMC_QUEUE_SIZE)));
    for (size_t k = 2; k <= SPMC_QUEUE_SIZE; k++) assert_int_equal(spmc_dequeue(q), ITEM(0, k));
    free(q);
}

/* Many laps, starting with the counters just below SIZE_MAX, so they wrap
 * to 0 midway (and the signed comparison of seq must hold across it). */
static void test_spmc_wraparound(void **state) {
    (void)state;
    spmc_queue *q = new_queue();
    size_t base = SIZE_MAX - SPMC_QUEUE_SIZE / 2;
    atomic_store(&q->head, base);
    q->tail = q->head_cache = base;
    for (size_t i = 0; i < SPMC_QUEUE_SIZE; i++) atomic_store(&q->cell[(base + i) & (SPMC_QUEUE_SIZE - 1)].seq, base + i);
    uint64_t rng = 3;
    size_t sent = 0, got = 0, total = 5 * SPMC_QUEUE_SIZE;
    size_t idle = 0; /* rounds in a row that moved nothing: a stuck ring fails, not hangs */
    while (got < total) {
        size_t before = sent + got;
        size_t burst = rng_range(&rng, 0, 100);
        while (burst-- > 0 && sent < total && spmc_enqueue(q, ITEM(0, sent))) sent++;
        assert_int_equal(spmc_size(q), sent - got);
        for (size_t take = rng_range(&rng, 1, 100); take > 0; take--) {
            uintptr_t item = spmc_dequeue(q);
            if (!item) break;
            assert_int_equal(item, ITEM(0, got));
            got++;
        }
        idle = sent + got == before ? idle + 1 : 0;
        assert_true(idle < 1000);
    }
    assert_true(atomic_load(&q->head) < base); /* it did wrap */
    assert_true(spmc_is_empty(q));
    free(q);
}

/* ---- One producer, several consumers --------------------------------------- */

#define CONSUMERS 3

typedef struct spmc_run {
    spmc_queue *q;
    size_t items;
    uint64_t seed;
    size_t *payload;  /* plain, written before each item is sent */
    atomic_bool filled;
    size_t full_count;
    atomic_size_t taken; /* by all consumers */
    unsigned char *seen[CONSUMERS]; /* seen[c][k]: consumer c took item k */
    bool consumer_ok[CONSUMERS];
} spmc_run;

typedef struct consumer_arg {
    spmc_run *run;
    size_t id;
} consumer_arg;

static void *spmc_producer_main(void *arg) {
    spmc_run *r = arg;
    uint64_t rng = r->seed;
    for (size_t k = 0; k < r->items; k++) {
        r->payload[k] = k;
        while (!spmc_enqueue(r->q, ITEM(0, k))) {
            r->full_count++;
            atomic_store_explicit(&r->filled, true, memory_order_relaxed);
            if (test_stuck()) return NULL;
            sched_yield();
        }
        maybe_pause(&rng, 2048);
    }
    return NULL;
}

static void *spmc_consumer_main(void *arg) {
    consumer_arg *a = arg;
    spmc_run *r = a->run;
    uint64_t rng = r->seed + 1 + a->id;
    size_t last = 0;
    bool first = true;
    while (!atomic_load_explicit(&r->filled, memory_order_relaxed))
        if (test_stuck()) return NULL;
    while (atomic_load_explicit(&r->taken, memory_order_relaxed) < r->items) {
        uintptr_t item = spmc_dequeue(r->q);
        if (!item) {
            if (test_stuck()) return NULL;
            sched_yield(); /* four threads on fewer cores: let the producer run */
            continue;
        }
        size_t k = ITEM_SEQ(item);
        if (ITEM_PRODUCER(item) != 0 || k >= r->items || (!first && k <= last) || r->payload[k] != k) {
            print_error("consumer %zu: item %#lx after item %zu\n", a->id, (unsigned long)item, last);
            return NULL;
        }
        r->seen[a->id][k] = 1;
        last = k;
        first = false;
        atomic_fetch_add_explicit(&r->taken, 1, memory_order_relaxed);
        maybe_pause(&rng, 256);
    }
    r->consumer_ok[a->id] = true;
    return NULL;
}

static void test_spmc_consumers(void **state) {
    (void)state;
    test_start();
    spmc_run r = {.q = new_queue(), .items = TEST_ITEMS(2000000), .seed = test_seed("test_spmc_consumers")};
    r.payload = calloc(r.items, sizeof *r.payload);
    assert_non_null(r.payload);
    for (size_t c = 0; c < CONSUMERS; c++) assert_non_null(r.seen[c] = calloc(r.items, 1));
    consumer_arg args[CONSUMERS];
    pthread_t prod, cons[CONSUMERS];
    for (size_t c = 0; c < CONSUMERS; c++) {
        args[c] = (consumer_arg){&r, c};
        start_thread(&cons[c], spmc_consumer_main, &args[c]);
    }
    start_thread(&prod, spmc_producer_main, &r);
    pthread_join(prod, NULL);
    for (size_t c = 0; c < CONSUMERS; c++) pthread_join(cons[c], NULL);
    assert_false(test_stuck());
    for (size_t c = 0; c < CONSUMERS; c++) assert_true(r.consumer_ok[c]);
    /* Exactly once: no item lost, none taken by two consumers. */
    size_t twice = 0, never = 0, per_consumer[CONSUMERS] = {0};
    for (size_t k = 0; k < r.items; k++) {
        unsigned n = 0;
        for (size_t c = 0; c < CONSUMERS; c++) {
            n += r.seen[c][k];
            per_consumer[c] += r.seen[c][k];
        }
        twice += n > 1;
        never += n == 0;
    }
    printf("test_spmc_consumers: %zu items, the ring was full %zu times, taken %zu/%zu/%zu\n", r.items,
           r.full_count, per_consumer[0], per_consumer[1], per_consumer[2]);
    assert_int_equal(twice, 0);
    assert_int_equal(never, 0);
    assert_true(r.full_count > 0);
    assert_true(spmc_is_empty(r.q));
    assert_int_equal(spmc_dequeue(r.q), 0);
    for (size_t c = 0; c < CONSUMERS; c++) free(r.seen[c]);
    free(r.payload);
    free(r.q);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spmc_empty),
        cmocka_unit_test(test_spmc_order),
        cmocka_unit_test(test_spmc_full),
        cmocka_unit_test(test_spmc_claimed_not_released),
        cmocka_unit_test(test_spmc_wraparound),
        cmocka_unit_test(test_spmc_consumers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
