/* test_queue_spmc.c — the single-producer, multi-consumer ring (step 2).
 *
 * One thread first: empty, order, full, a cell claimed but not yet
 * released (the producer must wait for it), two consumers meeting at one
 * position (made to, every time, by a page fault: test_spmc_claim_race),
 * a consumer whose head went stale, size and wraparound of the counters.
 * Then one producer against several consumers, checking that
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

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "queue_spmc.h"
#include "threads_test.h"

/* Page-aligned, so that a test can make the page of head read-only. */
static spmc_queue *new_queue(void) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    spmc_queue *q = aligned_alloc(page, (sizeof *q + page - 1) / page * page);
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

/* Two consumers made to meet at one position, every time, on one thread.
 * Consumer A runs spmc_dequeue with one page of the queue protected, so
 * that A's first access of the kind the protection forbids faults; the
 * fault handler is consumer B, which makes the page accessible again and
 * takes an item with a whole spmc_dequeue of its own while A is stopped
 * at that access. Then A's access runs again and A goes on. */
static spmc_queue *meet_q;
static char *meet_page;
static volatile sig_atomic_t meet_faults;
static uintptr_t meet_b_item;

static void consumer_b(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *at = si->si_addr;
    if (meet_faults > 0 || at < meet_page || at >= meet_page + page) {
        signal(sig, SIG_DFL); /* not the fault the test arranged: crash as usual */
        return;
    }
    meet_faults++;
    mprotect(meet_page, page, PROT_READ | PROT_WRITE);
    meet_b_item = spmc_dequeue(meet_q);
}

/* Runs consumer A with the page at `page` limited to `prot`; B's item in
 * *b. Returns A's item. */
static uintptr_t meet(spmc_queue *q, void *page, int prot, uintptr_t *b) {
    size_t size = (size_t)sysconf(_SC_PAGESIZE);
    meet_q = q;
    meet_page = page;
    meet_faults = 0;
    meet_b_item = 0;
    struct sigaction sa, old_segv, old_bus;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = consumer_b;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, &old_segv), 0);
    assert_int_equal(sigaction(SIGBUS, &sa, &old_bus), 0);
    assert_int_equal(mprotect(page, size, prot), 0);
    uintptr_t a = spmc_dequeue(q);
    mprotect(page, size, PROT_READ | PROT_WRITE);
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    assert_int_equal(meet_faults, 1); /* B ran, inside A */
    *b = meet_b_item;
    return a;
}

/* The claim. A looks at the cell of head (reads only) and then claims the
 * position: its first store to the queue. With head's page read-only, B
 * takes that position between A's look and A's claim. A compare-and-swap
 * then fails (head moved) and A looks again, at the next position; a
 * claim made with a load and a store succeeds, and A takes B's item a
 * second time. */
static void test_spmc_claim_race(void **state) {
    (void)state;
    spmc_queue *q = new_queue();
    for (size_t k = 0; k < 3; k++) assert_true(spmc_enqueue(q, ITEM(0, k)));
    for (size_t round = 0; round < 2; round++) {
        uintptr_t b, a = meet(q, q, PROT_READ, &b); /* head is the queue's first field */
        assert_int_equal(b, ITEM(0, 2 * round));
        assert_int_equal(a, ITEM(0, 2 * round + 1));
        assert_int_equal(atomic_load(&q->head), 2 * round + 2);
        if (round == 0) assert_true(spmc_enqueue(q, ITEM(0, 3)));
    }
    assert_int_equal(spmc_dequeue(q), 0);
    assert_true(spmc_is_empty(q));
    free(q);
}

/* A stale head. A has read head and is about to look at its cell when B
 * takes that position: the cell's seq is then a lap ahead of what A
 * expects. With the cell's page inaccessible, B runs at A's look. A must
 * read head again and take the next item; it is not an empty ring. */
static void test_spmc_stale_head(void **state) {
    (void)state;
    spmc_queue *q = new_queue();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    /* Move head to a position whose cell is on another page than head. */
    size_t h = 0;
    while ((((uintptr_t)&q->cell[h & (SPMC_QUEUE_SIZE - 1)]) & ~(uintptr_t)(page - 1)) == (uintptr_t)q) {
        assert_true(spmc_enqueue(q, ITEM(0, h)));
        assert_int_equal(spmc_dequeue(q), ITEM(0, h));
        h++;
    }
    assert_true(spmc_enqueue(q, ITEM(0, h)));
    assert_true(spmc_enqueue(q, ITEM(0, h + 1)));
    char *cell_page = (char *)((uintptr_t)&q->cell[h] & ~(uintptr_t)(page - 1));
    uintptr_t b, a = meet(q, cell_page, PROT_NONE, &b);
    assert_int_equal(b, ITEM(0, h));
    assert_int_equal(a, ITEM(0, h + 1));
    assert_int_equal(spmc_dequeue(q), 0);
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
    for (size_t i = 0; i < SPMC_QUEUE_SIZE; i++)
        atomic_store(&q->cell[(base + i) & (SPMC_QUEUE_SIZE - 1)].seq, base + i);
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

    /* A full ring across the wrap: the refused position is past 0, and the
     * seq of its cell (the item of the lap before) is still below it. */
    spmc_init(q);
    atomic_store(&q->head, base);
    q->tail = q->head_cache = base;
    for (size_t i = 0; i < SPMC_QUEUE_SIZE; i++)
        atomic_store(&q->cell[(base + i) & (SPMC_QUEUE_SIZE - 1)].seq, base + i);
    for (size_t k = 0; k < SPMC_QUEUE_SIZE; k++) assert_true(spmc_enqueue(q, ITEM(0, k)));
    assert_true(q->tail < base);
    assert_false(spmc_enqueue(q, ITEM(0, SPMC_QUEUE_SIZE)));
    for (size_t k = 0; k < SPMC_QUEUE_SIZE; k++) assert_int_equal(spmc_dequeue(q), ITEM(0, k));
    assert_int_equal(spmc_dequeue(q), 0);
    free(q);
}

/* ---- One producer, several consumers --------------------------------------- */

#define CONSUMERS 3

typedef struct spmc_run {
    spmc_queue *q;
    size_t items;
    uint64_t seed;
    size_t *payload; /* plain, written before each item is sent */
    atomic_bool filled;
    size_t full_count;
    atomic_size_t taken;            /* by all consumers */
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
    printf("test_spmc_consumers: %zu items, the ring was full %zu times, taken %zu/%zu/%zu\n", r.items, r.full_count,
           per_consumer[0], per_consumer[1], per_consumer[2]);
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
        cmocka_unit_test(test_spmc_empty),      cmocka_unit_test(test_spmc_order),
        cmocka_unit_test(test_spmc_full),       cmocka_unit_test(test_spmc_claimed_not_released),
        cmocka_unit_test(test_spmc_claim_race), cmocka_unit_test(test_spmc_stale_head),
        cmocka_unit_test(test_spmc_wraparound), cmocka_unit_test(test_spmc_consumers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
