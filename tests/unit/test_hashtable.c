/* test_hashtable.c — unit tests of the keyspace's hashtable and SipHash.
 *
 * Step 0 (keyspace layer); step 6 adds the resumable find. Every table
 * operation is checked against a reference (a presence array indexed by key);
 * hashtable_verify() checks the structure itself (presence bits vs counts,
 * each entry in the bucket its hash selects, child-bucket counts). Collisions
 * are forced by swapping the hash function (all hashes equal; all secondary
 * hashes equal; everything in four chains) so chains, hole filling and
 * compaction are exercised. Main thread only, like the table. Runs in a few
 * seconds at -O2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hashtable.h"
#include "hashtable_test.h"
#include "siphash.h"
#include "zmalloc.h"

/* --- Test entries and types -------------------------------------------------- */

typedef struct tentry {
    uint64_t key;
    uint64_t payload;
} tentry;

enum { HASH_SIP, HASH_CONSTANT, HASH_SAME_H2, HASH_FOUR_CHAINS };
static int hash_mode = HASH_SIP;
static size_t destructed;

static uint64_t t_hash(const void *key) {
    uint64_t k = *(const uint64_t *)key;
    uint64_t h = hashtable_gen_hash(&k, sizeof k);
    switch (hash_mode) {
    case HASH_CONSTANT: return UINT64_C(0x5a5a5a5a5a5a5a5a);
    case HASH_SAME_H2: return (h & UINT64_C(0x00ffffffffffffff)) | UINT64_C(0xab00000000000000);
    case HASH_FOUR_CHAINS: return (h & UINT64_C(0xff00000000000000)) | (k & 3);
    default: return h;
    }
}
static const void *t_get_key(const void *entry) { return &((const tentry *)entry)->key; }
static int t_compare(const void *a, const void *b) { return *(const uint64_t *)a != *(const uint64_t *)b; }
static void t_destruct(void *entry) {
    (void)entry;
    destructed++;
}

static const hashtable_type t_type = {t_hash, t_get_key, t_compare, t_destruct};

/* entry_get_key returning a temporary: two buffers in rotation, the most
 * the header allows the table to rely on. A table that held three keys at
 * once would compare against an overwritten buffer. */
static uint64_t tmp_keys[2];
static unsigned tmp_next;
static const void *t_get_key_tmp(const void *entry) {
    uint64_t *slot = &tmp_keys[tmp_next++ & 1];
    *slot = ((const tentry *)entry)->key;
    return slot;
}
static const hashtable_type t_type_tmp = {t_hash, t_get_key_tmp, t_compare, NULL};

/* A pool of entries with key == index, and the reference presence array. */
static tentry *pool_alloc(size_t n) {
    tentry *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = (tentry){i, i * 7};
    return p;
}

static uint64_t rng = 88172645463325252u;
static uint64_t xrand(void) { /* xorshift64: deterministic test input */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static void shuffle(uint64_t *a, size_t n) {
    for (size_t i = n; i > 1; i--) {
        size_t j = xrand() % i;
        uint64_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}
static uint64_t *permutation(size_t n) {
    uint64_t *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = i;
    shuffle(a, n);
    return a;
}

static int setup(void **state) {
    (void)state;
    hash_mode = HASH_SIP;
    destructed = 0;
    return 0;
}

/* Finds key and checks the answer against the reference. */
static void check_find(hashtable *ht, tentry *pool, const uint8_t *present, uint64_t key) {
    void *found = NULL;
    int r = hashtable_find(ht, &key, &found);
    assert_int_equal(r, present[key]);
    if (r) assert_ptr_equal(found, &pool[key]);
}

/* Adds keys [*next, *next + count) and records them. */
static void add_keys(hashtable *ht, tentry *pool, uint8_t *present, size_t *next, size_t count) {
    for (size_t stop = *next + count; *next < stop; (*next)++) {
        assert_true(hashtable_add(ht, &pool[*next]));
        present[*next] = 1;
    }
}

/* Tables grow by doubling, so after 7 * 2^j adds (and a finished rehash)
 * the table is exactly full and the next add starts a resize. Pausing
 * then holds it at rehash_idx 0 while new entries go to table 1. */
static hashtable *table_mid_rehash(tentry *pool, uint8_t *present, size_t *next, int j, size_t extra) {
    hashtable *ht = hashtable_create(&t_type);
    add_keys(ht, pool, present, next, (size_t)7 << j);
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_int_equal(hashtable_buckets(ht), (size_t)1 << j);
    hashtable_pause_rehashing(ht);
    add_keys(ht, pool, present, next, extra);
    assert_true(hashtable_is_rehashing(ht));
    return ht;
}

/* --- SipHash ------------------------------------------------------------------ */

static void test_siphash_vectors(void **state) {
    (void)state;
    uint8_t key[16], msg[64];
    for (int i = 0; i < 16; i++) key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++) msg[i] = (uint8_t)i;
    /* SipHash-2-4, key 00..0f, message 00..len-1: the paper's test vectors
     * (Aumasson & Bernstein 2012; len 15 is the worked example, Appendix A). */
    assert_true(siphash24(msg, 0, key) == UINT64_C(0x726fdb47dd0e0e31));
    assert_true(siphash24(msg, 1, key) == UINT64_C(0x74f839c593dc67fd));
    assert_true(siphash24(msg, 2, key) == UINT64_C(0x0d6c8009d9a94f5a));
    assert_true(siphash24(msg, 3, key) == UINT64_C(0x85676696d7fb7e2d));
    assert_true(siphash24(msg, 4, key) == UINT64_C(0xcf2794e0277187b7));
    assert_true(siphash24(msg, 15, key) == UINT64_C(0xa129ca6149be45e5));
    /* SipHash-1-3 with an all-zero key, message 00..len-1: CPython 3.11's
     * bytes hash under PYTHONHASHSEED=0 (which zeroes its key), an
     * independent implementation: hash(bytes(range(n))) & (2**64-1). */
    uint8_t zero[16] = {0};
    assert_true(siphash13(msg, 1, zero) == UINT64_C(0x68a914128e01e473));
    assert_true(siphash13(msg, 7, zero) == UINT64_C(0x2f098ab0c751325a));
    assert_true(siphash13(msg, 8, zero) == UINT64_C(0xead411e67ebe2eea));
    assert_true(siphash13(msg, 9, zero) == UINT64_C(0x75927f9d95124362));
    assert_true(siphash13(msg, 15, zero) == UINT64_C(0xf30eb725bb91c9ea));
    assert_true(siphash13(msg, 16, zero) == UINT64_C(0x8972188433a5c5b7));
    assert_true(siphash13(msg, 17, zero) == UINT64_C(0x4883c49a2c009c1d));
    assert_true(siphash13(msg, 63, zero) == UINT64_C(0x385d3e39e5f37359));
    assert_true(siphash13("soloist", 7, zero) == UINT64_C(0x186422d9e65c85a9));

    /* The table's hash is SipHash-1-3 under the settable seed. */
    assert_true(hashtable_gen_hash("soloist", 7) == UINT64_C(0x186422d9e65c85a9));
    hashtable_set_hash_seed(key);
    assert_true(hashtable_gen_hash(msg, 9) == siphash13(msg, 9, key));
    assert_true(hashtable_gen_hash(msg, 9) != siphash13(msg, 9, zero));
    hashtable_key a = {"abc", 3}, b = {"abc", 3}, c = {"abd", 3}, d = {"ab", 2};
    assert_true(hashtable_key_hash(&a) == siphash13("abc", 3, key));
    assert_int_equal(hashtable_key_compare(&a, &b), 0);
    assert_int_not_equal(hashtable_key_compare(&a, &c), 0);
    assert_int_not_equal(hashtable_key_compare(&a, &d), 0);
    hashtable_set_hash_seed(zero);
}

/* --- Basics -------------------------------------------------------------------- */

static void test_basic_api(void **state) {
    (void)state;
    tentry *pool = pool_alloc(100);
    hashtable *ht = hashtable_create(&t_type);
    void *found;
    uint64_t k = 5;
    assert_int_equal(hashtable_size(ht), 0);
    assert_int_equal(hashtable_buckets(ht), 0);
    assert_false(hashtable_find(ht, &k, &found));
    assert_null(hashtable_find_ref(ht, &k));
    assert_false(hashtable_delete(ht, &k));
    assert_int_equal(hashtable_scan(ht, 0, NULL, NULL), 0);
    assert_false(hashtable_fair_random_entry(ht, &found));

    for (int i = 0; i < 100; i++) assert_true(hashtable_add(ht, &pool[i]));
    assert_int_equal(hashtable_size(ht), 100);
    tentry dup = {5, 999};
    assert_false(hashtable_add(ht, &dup));
    void *existing = NULL;
    assert_false(hashtable_add_or_find(ht, &dup, &existing));
    assert_ptr_equal(existing, &pool[5]);
    assert_int_equal(hashtable_size(ht), 100);

    /* find_ref: replace the entry pointer in place (same key). */
    void **ref = hashtable_find_ref(ht, &k);
    assert_non_null(ref);
    assert_ptr_equal(*ref, &pool[5]);
    *ref = &dup;
    assert_true(hashtable_find(ht, &k, &found));
    assert_ptr_equal(found, &dup);

    void *popped = NULL;
    assert_true(hashtable_pop(ht, &k, &popped));
    assert_ptr_equal(popped, &dup);
    assert_int_equal(destructed, 0);
    assert_false(hashtable_pop(ht, &k, &popped));
    k = 6;
    assert_true(hashtable_delete(ht, &k));
    assert_int_equal(destructed, 1);
    assert_int_equal(hashtable_size(ht), 98);
    assert_true(hashtable_verify(ht));
    assert_true(hashtable_mem_usage(ht) >= 64 * hashtable_buckets(ht));

    hashtable_empty(ht);
    assert_int_equal(destructed, 99);
    assert_int_equal(hashtable_size(ht), 0);
    assert_int_equal(hashtable_buckets(ht), 0);
    assert_true(hashtable_add(ht, &pool[1])); /* still usable */
    assert_true(hashtable_find(ht, &pool[1].key, &found));
    hashtable_release(ht);
    assert_int_equal(destructed, 100);
    free(pool);
}

/* --- A million entries against the reference ---------------------------------- */

/* The mixed operations after the fill: a quarter as many under a sanitizer
 * (suite 20), which finds a bad access the first time one happens; the
 * plain build (suite 10) runs them all. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MIXED_OPS 375000
#else
#define MIXED_OPS 1500000
#endif

static void test_million_against_reference(void **state) {
    (void)state;
    const size_t n = 1u << 20, absent = 1u << 17;
    tentry *pool = pool_alloc(n + absent);
    uint8_t *present = calloc(n + absent, 1);
    uint64_t *order = permutation(n);
    hashtable *ht = hashtable_create(&t_type);

    for (size_t i = 0; i < n; i++) {
        assert_int_equal(hashtable_add(ht, &pool[order[i]]), 1);
        present[order[i]] = 1;
    }
    assert_int_equal(hashtable_size(ht), n);
    for (size_t i = 0; i < n; i += 97) assert_int_equal(hashtable_add(ht, &pool[i]), 0);
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_true(hashtable_verify(ht));
    /* At most 100 % full; power-of-two buckets sized by ceil(n*5/32). */
    assert_true(hashtable_size(ht) <= 7 * hashtable_buckets(ht));
    assert_int_equal(hashtable_buckets(ht), 1u << 18);

    for (size_t key = 0; key < n + absent; key++) check_find(ht, pool, present, key);

    /* Mixed random operations over keys [0, n). */
    size_t size = n;
    for (size_t i = 0; i < MIXED_OPS; i++) {
        uint64_t key = xrand() % n, op = xrand() % 4;
        if (op == 0) {
            assert_int_equal(hashtable_add(ht, &pool[key]), !present[key]);
            size += !present[key];
            present[key] = 1;
        } else if (op == 1) {
            assert_int_equal(hashtable_delete(ht, &key), present[key]);
            size -= present[key];
            present[key] = 0;
        } else {
            check_find(ht, pool, present, key);
        }
    }
    assert_int_equal(hashtable_size(ht), size);
    assert_true(hashtable_verify(ht));

    /* Delete everything, in random order: the table shrinks as it empties. */
    for (size_t i = 0; i < n; i++) {
        uint64_t key = order[i];
        void *popped = NULL;
        assert_int_equal(hashtable_pop(ht, &key, &popped), present[key]);
        if (present[key]) assert_ptr_equal(popped, &pool[key]);
        present[key] = 0;
        if ((i & 0x3ffff) == 0) check_find(ht, pool, present, order[i + 1]);
    }
    assert_int_equal(hashtable_size(ht), 0);
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    /* Shrinking happens on deletes; the last few may come mid-rehash. */
    assert_true(hashtable_buckets(ht) <= 8);
    assert_int_equal(hashtable_child_buckets(ht), 0);
    assert_true(hashtable_verify(ht));
    hashtable_release(ht);
    free(order);
    free(present);
    free(pool);
}

/* --- Forced collisions ---------------------------------------------------------- */

/* Fewest child buckets that can hold n entries in one chain: k buckets
 * hold 6(k-1)+7 entries. */
static size_t min_children(size_t n) { return n <= 7 ? 0 : (n - 7 + 5) / 6; }

static void collisions_with(int mode, size_t n) {
    hash_mode = mode;
    tentry *pool = pool_alloc(n + 50);
    uint8_t *present = calloc(n + 50, 1);
    uint64_t *order = permutation(n);
    hashtable *ht = hashtable_create(&t_type);
    for (size_t i = 0; i < n; i++) {
        assert_true(hashtable_add(ht, &pool[order[i]]));
        present[order[i]] = 1;
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_true(hashtable_verify(ht));
    if (mode == HASH_CONSTANT) assert_int_equal(hashtable_child_buckets(ht), min_children(n));
    if (mode == HASH_FOUR_CHAINS) assert_true(hashtable_child_buckets(ht) >= 4 * min_children(n / 4));
    for (size_t k = 0; k < n + 50; k++) check_find(ht, pool, present, k);

    /* Delete in random order: each hole is refilled from the chain's end,
     * so a chain never holds more than one bucket beyond the minimum. */
    shuffle(order, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t key = order[i];
        assert_true(hashtable_delete(ht, &key));
        present[key] = 0;
        check_find(ht, pool, present, key);
        if (i % 16 == 0) {
            assert_true(hashtable_verify(ht));
            for (size_t j = i + 1; j < n; j += 13) check_find(ht, pool, present, order[j]);
            if (mode == HASH_CONSTANT && !hashtable_is_rehashing(ht))
                assert_true(hashtable_child_buckets(ht) <= min_children(n - i - 1) + 1);
        }
    }
    assert_int_equal(hashtable_size(ht), 0);
    assert_int_equal(hashtable_child_buckets(ht), 0);
    assert_true(hashtable_verify(ht));
    hashtable_release(ht);
    free(order);
    free(present);
    free(pool);
}

static void test_collisions_constant_hash(void **state) {
    (void)state;
    collisions_with(HASH_CONSTANT, 700);
}
static void test_collisions_same_h2(void **state) {
    (void)state;
    collisions_with(HASH_SAME_H2, 5000);
}
static void test_collisions_four_chains(void **state) {
    (void)state;
    collisions_with(HASH_FOUR_CHAINS, 1000);
}

/* The table may rely on at most two entry_get_key results at once. */
static void test_temporary_keys(void **state) {
    (void)state;
    const size_t n = 4000;
    for (int mode = HASH_SIP; mode <= HASH_FOUR_CHAINS; mode++) {
        hash_mode = mode;
        size_t range = mode == HASH_CONSTANT || mode == HASH_FOUR_CHAINS ? 300 : n;
        tentry *pool = pool_alloc(range);
        uint8_t *present = calloc(range, 1);
        hashtable *ht = hashtable_create(&t_type_tmp);
        for (size_t i = 0; i < 30000; i++) {
            uint64_t key = xrand() % range, op = xrand() % 3;
            void *existing = NULL;
            if (op == 0) {
                assert_int_equal(hashtable_add_or_find(ht, &pool[key], &existing), !present[key]);
                if (present[key]) assert_ptr_equal(existing, &pool[key]);
                present[key] = 1;
            } else if (op == 1) {
                assert_int_equal(hashtable_delete(ht, &key), present[key]);
                present[key] = 0;
            } else {
                check_find(ht, pool, present, key);
            }
        }
        assert_true(hashtable_verify(ht));
        hashtable_release(ht);
        free(present);
        free(pool);
    }
}

/* --- Growth and shrink ------------------------------------------------------------ */

static void test_growth_and_shrink(void **state) {
    (void)state;
    tentry *pool = pool_alloc(2000);
    hashtable *ht = hashtable_create(&t_type);
    void *found;
    for (int i = 0; i < 7; i++) assert_true(hashtable_add(ht, &pool[i]));
    assert_int_equal(hashtable_buckets(ht), 1); /* 7 entries fill one bucket: 100 % */
    assert_false(hashtable_is_rehashing(ht));
    assert_true(hashtable_add(ht, &pool[7])); /* 8 > 7: grow to ceil(8*5/32) = 2 */
    assert_true(hashtable_is_rehashing(ht));
    assert_int_equal(hashtable_buckets(ht), 1 + 2);
    assert_true(hashtable_verify(ht));
    assert_true(hashtable_find(ht, &pool[0].key, &found)); /* one step moves the only bucket */
    assert_false(hashtable_is_rehashing(ht));
    assert_int_equal(hashtable_buckets(ht), 2);
    for (int i = 8; i < 14; i++) assert_true(hashtable_add(ht, &pool[i]));
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_int_equal(hashtable_buckets(ht), 2);
    assert_true(hashtable_add(ht, &pool[14])); /* 15: ceil(75/32) = 3, rounded up to 4 */
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_int_equal(hashtable_buckets(ht), 4);

    for (int i = 15; i < 1000; i++) {
        assert_true(hashtable_add(ht, &pool[i]));
        if (!hashtable_is_rehashing(ht)) assert_true(hashtable_size(ht) <= 7 * hashtable_buckets(ht));
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_int_equal(hashtable_buckets(ht), 256); /* grew at 897 = 7*128 + 1 */

    /* Shrink at <= 13 % of 7*256 = 232.96: at 232 entries, to
     * ceil(232*5/32) = 37 -> 64 buckets. */
    for (int i = 999; i >= 233; i--) assert_true(hashtable_delete(ht, &pool[i].key));
    assert_false(hashtable_is_rehashing(ht));
    assert_int_equal(hashtable_buckets(ht), 256);
    assert_true(hashtable_delete(ht, &pool[232].key));
    assert_true(hashtable_is_rehashing(ht));
    assert_int_equal(hashtable_buckets(ht), 256 + 64);
    assert_true(hashtable_verify(ht));
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_int_equal(hashtable_buckets(ht), 64);
    for (int i = 0; i < 232; i++) assert_true(hashtable_find(ht, &pool[i].key, &found));
    assert_true(hashtable_verify(ht));

    /* Paused rehashing also pauses shrinking. */
    hashtable_pause_rehashing(ht);
    for (int i = 231; i >= 1; i--) assert_true(hashtable_delete(ht, &pool[i].key));
    assert_int_equal(hashtable_buckets(ht), 64);
    hashtable_resume_rehashing(ht); /* the deferred shrink happens now */
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_int_equal(hashtable_buckets(ht), 1);
    assert_true(hashtable_verify(ht));
    hashtable_release(ht);
    free(pool);
}

/* --- Operations while rehashing ------------------------------------------------------ */

static void test_ops_while_rehashing(void **state) {
    (void)state;
    const size_t n = 30000;
    tentry *pool = pool_alloc(n);
    uint8_t *present = calloc(n, 1);
    hashtable *ht = hashtable_create(&t_type);
    size_t next = 0;
    while (next < 10000) {
        hashtable_add(ht, &pool[next]);
        present[next++] = 1;
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);

    /* Paused: the resize starts but no entry moves, so new entries land in
     * table 1 while every old one stays in table 0. */
    hashtable_pause_rehashing(ht);
    while (!hashtable_is_rehashing(ht)) {
        hashtable_add(ht, &pool[next]);
        present[next++] = 1;
    }
    size_t stop = next + 3000;
    while (next < stop) {
        hashtable_add(ht, &pool[next]);
        present[next++] = 1;
    }
    for (size_t k = 0; k < n; k++) check_find(ht, pool, present, k);
    assert_true(hashtable_is_rehashing(ht)); /* finds did not step */
    for (size_t k = 0; k < next; k += 5) {   /* deletes from both tables */
        assert_true(hashtable_delete(ht, &pool[k].key));
        present[k] = 0;
    }
    assert_true(hashtable_verify(ht));
    hashtable_rehash_microseconds(ht, UINT64_MAX); /* no-op while paused */
    assert_true(hashtable_is_rehashing(ht));
    hashtable_resume_rehashing(ht);

    /* Now half-way: a few steps in, then mixed operations, each of which
     * moves one more bucket, until the rehash completes by itself. */
    hashtable_rehash_microseconds(ht, 0);
    assert_true(hashtable_is_rehashing(ht));
    assert_true(hashtable_verify(ht));
    size_t ops_while = 0;
    for (size_t i = 0; i < 40000; i++) {
        uint64_t key = xrand() % n, op = xrand() % 3;
        ops_while += hashtable_is_rehashing(ht);
        if (op == 0) {
            assert_int_equal(hashtable_add(ht, &pool[key]), !present[key]);
            present[key] = 1;
        } else if (op == 1) {
            assert_int_equal(hashtable_delete(ht, &key), present[key]);
            present[key] = 0;
        } else {
            check_find(ht, pool, present, key);
        }
        if (i % 4096 == 0) assert_true(hashtable_verify(ht));
    }
    assert_true(ops_while > 100);
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_false(hashtable_is_rehashing(ht));
    assert_true(hashtable_verify(ht));
    for (size_t k = 0; k < n; k++) check_find(ht, pool, present, k);
    hashtable_release(ht);
    free(present);
    free(pool);
}

/* --- Scan ------------------------------------------------------------------------------ */

typedef struct scan_log {
    uint32_t *seen; /* times each key was emitted */
    size_t emitted;
    hashtable *ht; /* for the deleting callback */
} scan_log;

static void scan_record(void *privdata, void *entry) {
    scan_log *log = privdata;
    log->seen[((tentry *)entry)->key]++;
    log->emitted++;
}

static void scan_delete(void *privdata, void *entry) {
    scan_log *log = privdata;
    scan_record(privdata, entry);
    assert_true(hashtable_delete(log->ht, &((tentry *)entry)->key));
}

/* A full scan with the table churned between calls by `churn`. Every key
 * in `required` (present for the whole scan) must be emitted. */
typedef void (*churn_fn)(hashtable *ht, tentry *pool, uint8_t *present, size_t call, uint8_t *required);

static void run_scan(hashtable *ht, tentry *pool, uint8_t *present, uint8_t *required, size_t range, churn_fn churn) {
    scan_log log = {calloc(range, sizeof(uint32_t)), 0, ht};
    size_t cursor = 0, calls = 0;
    do {
        cursor = hashtable_scan(ht, cursor, scan_record, &log);
        if (churn) churn(ht, pool, present, calls, required);
        assert_true(++calls < 4000000); /* no endless loop */
    } while (cursor != 0);
    for (size_t k = 0; k < range; k++)
        if (required[k]) assert_true(log.seen[k] >= 1);
    assert_true(hashtable_verify(ht));
    free(log.seen);
}

#define SCAN_RANGE 60000
static size_t churn_next; /* next key to add */

static void churn_grow(hashtable *ht, tentry *pool, uint8_t *present, size_t call, uint8_t *required) {
    (void)required;
    for (int i = 0; i < 40 && churn_next < SCAN_RANGE; i++) {
        hashtable_add(ht, &pool[churn_next]);
        present[churn_next++] = 1;
    }
    if (call % 7 == 0) hashtable_rehash_microseconds(ht, 0);
}

static void churn_shrink(hashtable *ht, tentry *pool, uint8_t *present, size_t call, uint8_t *required) {
    (void)call;
    (void)pool;
    for (int i = 0; i < 200; i++) { /* delete random entries that are not required */
        uint64_t k = xrand() % SCAN_RANGE;
        if (present[k] && !required[k]) {
            hashtable_delete(ht, &k);
            present[k] = 0;
        }
    }
}

/* Grows for the first 150 calls, then deletes nearly everything else,
 * with partial rehashing in between: grow and shrink within one scan. */
static void churn_grow_then_shrink(hashtable *ht, tentry *pool, uint8_t *present, size_t call, uint8_t *required) {
    if (call < 150)
        churn_grow(ht, pool, present, call, required);
    else
        churn_shrink(ht, pool, present, call, required);
    if (call % 3 == 0) hashtable_rehash_microseconds(ht, 0);
}

static void scan_scenario(int mode, size_t initial, size_t required_every, churn_fn churn) {
    hash_mode = mode;
    tentry *pool = pool_alloc(SCAN_RANGE);
    uint8_t *present = calloc(SCAN_RANGE, 1), *required = calloc(SCAN_RANGE, 1);
    hashtable *ht = hashtable_create(&t_type);
    for (size_t k = 0; k < initial; k++) {
        hashtable_add(ht, &pool[k]);
        present[k] = 1;
        required[k] = k % required_every == 0;
    }
    churn_next = initial;
    run_scan(ht, pool, present, required, SCAN_RANGE, churn);
    hashtable_release(ht);
    free(required);
    free(present);
    free(pool);
}

static void test_scan_static(void **state) {
    (void)state;
    scan_scenario(HASH_SIP, 5000, 1, NULL);
    scan_scenario(HASH_FOUR_CHAINS, 600, 1, NULL);
}
static void test_scan_while_growing(void **state) {
    (void)state;
    scan_scenario(HASH_SIP, 1000, 1, churn_grow);
    scan_scenario(HASH_SAME_H2, 1000, 1, churn_grow);
}
static void test_scan_while_shrinking(void **state) {
    (void)state;
    scan_scenario(HASH_SIP, SCAN_RANGE, 50, churn_shrink);
}
static void test_scan_grow_then_shrink(void **state) {
    (void)state;
    scan_scenario(HASH_SIP, 3000, 3, churn_grow_then_shrink);
    scan_scenario(HASH_SAME_H2, 3000, 3, churn_grow_then_shrink);
}

/* A scan started while a rehash is half done, with rehashing (and its
 * completion) between calls. */
static void test_scan_during_rehash(void **state) {
    (void)state;
    tentry *pool = pool_alloc(SCAN_RANGE);
    uint8_t *present = calloc(SCAN_RANGE, 1), *required = calloc(SCAN_RANGE, 1);
    size_t next = 0;
    hashtable *ht = table_mid_rehash(pool, present, &next, 11, 500);
    hashtable_resume_rehashing(ht);
    hashtable_rehash_microseconds(ht, 0);
    assert_true(hashtable_is_rehashing(ht));
    memcpy(required, present, SCAN_RANGE);
    churn_next = next;
    run_scan(ht, pool, present, required, SCAN_RANGE, churn_grow);
    hashtable_release(ht);
    free(required);
    free(present);
    free(pool);
}

/* The callback may delete the entry it was given; chains are compacted. */
static void test_scan_deleting_callback(void **state) {
    (void)state;
    for (int mode = HASH_SIP; mode <= HASH_CONSTANT; mode++) {
        hash_mode = mode;
        size_t n = mode == HASH_CONSTANT ? 500 : 20000;
        tentry *pool = pool_alloc(n);
        hashtable *ht = hashtable_create(&t_type);
        for (size_t i = 0; i < n; i++) hashtable_add(ht, &pool[i]);
        scan_log log = {calloc(n, sizeof(uint32_t)), 0, ht};
        size_t cursor = 0, calls = 0;
        do {
            cursor = hashtable_scan(ht, cursor, scan_delete, &log);
            assert_true(++calls < 1000000);
            if (calls % 64 == 0) assert_true(hashtable_verify(ht));
        } while (cursor != 0);
        for (size_t i = 0; i < n; i++) assert_int_equal(log.seen[i], 1);
        assert_int_equal(hashtable_size(ht), 0);
        assert_int_equal(hashtable_child_buckets(ht), 0);
        assert_true(hashtable_verify(ht));
        free(log.seen);
        hashtable_release(ht);
        free(pool);
    }
}

/* --- Incremental find --------------------------------------------------------------------- */

/* Runs batches of 16 interleaved incremental finds over keys [0, range)
 * and compares with the reference. The table must not change meanwhile:
 * an unsafe iterator's fingerprint proves it (no rehash step either). */
static void check_incremental(hashtable *ht, tentry *pool, const uint8_t *present, size_t range) {
    hashtable_iterator guard;
    hashtable_init_iterator(&guard, ht, 0);
    enum { BATCH = 16 };
    hashtable_incremental_find_state st[BATCH];
    for (size_t base = 0; base < range; base += BATCH) {
        size_t m = range - base < BATCH ? range - base : BATCH;
        uint64_t keys[BATCH];
        for (size_t i = 0; i < m; i++) {
            keys[i] = base + i;
            hashtable_incremental_find_init(&st[i], ht, &keys[i]);
        }
        int busy[BATCH], left = (int)m, rounds = 0;
        for (size_t i = 0; i < m; i++) busy[i] = 1;
        while (left > 0) {
            for (size_t i = 0; i < m; i++)
                if (busy[i] && !hashtable_incremental_find_step(&st[i])) {
                    busy[i] = 0;
                    left--;
                }
            assert_true(++rounds < 100000);
        }
        for (size_t i = 0; i < m; i++) {
            assert_int_equal(hashtable_incremental_find_step(&st[i]), 0); /* stays done */
            void *found = NULL;
            int r = hashtable_incremental_find_get_result(&st[i], &found);
            assert_int_equal(r, present[keys[i]]);
            if (r) assert_ptr_equal(found, &pool[keys[i]]);
        }
    }
    hashtable_reset_iterator(&guard);
}

static void incremental_with(int mode, int j) {
    hash_mode = mode;
    size_t n = (size_t)7 << j, extra = n / 10, range = n + extra + 200, next = 0;
    tentry *pool = pool_alloc(range);
    uint8_t *present = calloc(range, 1);
    hashtable *ht = hashtable_create(&t_type);
    check_incremental(ht, pool, present, 16); /* empty table */
    hashtable_release(ht);

    ht = table_mid_rehash(pool, present, &next, j, extra);
    check_incremental(ht, pool, present, range); /* rehash_idx 0, table 1 has the extras */
    hashtable_resume_rehashing(ht);
    hashtable_rehash_microseconds(ht, 0); /* 128 steps of 2^j */
    assert_true(hashtable_is_rehashing(ht));
    check_incremental(ht, pool, present, range); /* part-way */
    for (size_t k = 0; k < next; k += 3) {       /* deletes step the rehash on */
        assert_true(hashtable_delete(ht, &pool[k].key));
        present[k] = 0;
    }
    check_incremental(ht, pool, present, range);
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_false(hashtable_is_rehashing(ht));
    check_incremental(ht, pool, present, range); /* one table */
    assert_true(hashtable_verify(ht));
    hashtable_release(ht);
    free(present);
    free(pool);
}

static void test_incremental_find(void **state) {
    (void)state;
    incremental_with(HASH_SIP, 12);
    incremental_with(HASH_SAME_H2, 9);
    incremental_with(HASH_CONSTANT, 8);
    incremental_with(HASH_FOUR_CHAINS, 8);
}

/* --- Fair random --------------------------------------------------------------------------- */

static double chi_square(hashtable *ht, size_t n, size_t draws) {
    uint32_t *count = calloc(n, sizeof *count);
    for (size_t i = 0; i < draws; i++) {
        void *e = NULL;
        assert_true(hashtable_fair_random_entry(ht, &e));
        count[((tentry *)e)->key]++;
    }
    double expected = (double)draws / (double)n, chi = 0;
    for (size_t k = 0; k < n; k++) {
        assert_true(count[k] > 0);
        chi += (count[k] - expected) * (count[k] - expected) / expected;
    }
    free(count);
    return chi;
}

static void test_fair_random(void **state) {
    (void)state;
    const size_t n = 1000, draws = 200000;
    tentry *pool = pool_alloc(n);
    uint8_t *present = calloc(n, 1);
    hashtable *ht = hashtable_create(&t_type);
    for (size_t k = 0; k < n; k++) hashtable_add(ht, &pool[k]);
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    /* 999 degrees of freedom: mean 999, sd ~45. 1300 is ~7 sd; an entry
     * favoured 1.5x, or chains sampled unevenly, lands far above. */
    double chi = chi_square(ht, n, draws);
    print_message("fair random: chi-square %.0f over %zu entries\n", chi, n);
    assert_true(chi < 1300);
    hashtable_release(ht);

    /* Half-way through a rehash (896 = 7*128 entries, then 104 more with
     * rehashing paused; then 40 steps of 128, then paused again). */
    size_t next = 0;
    ht = table_mid_rehash(pool, present, &next, 7, n - 896);
    hashtable_resume_rehashing(ht);
    for (int i = 0; i < 40; i++) check_find(ht, pool, present, (size_t)i);
    hashtable_pause_rehashing(ht);
    assert_true(hashtable_is_rehashing(ht));
    chi = chi_square(ht, n, draws);
    print_message("fair random while rehashing: chi-square %.0f over %zu entries\n", chi, n);
    assert_true(chi < 1300);
    hashtable_resume_rehashing(ht);
    hashtable_release(ht);
    free(present);
    free(pool);
}

/* --- Iterators ------------------------------------------------------------------------------ */

static void test_safe_iterator_deletes(void **state) {
    (void)state;
    for (int mode = HASH_SIP; mode <= HASH_CONSTANT; mode++) {
        hash_mode = mode;
        size_t n = mode == HASH_CONSTANT ? 600 : 20000, range = n + 4000;
        tentry *pool = pool_alloc(range);
        uint8_t *present = calloc(range, 1);
        uint32_t *seen = calloc(range, sizeof *seen);
        hashtable *ht = hashtable_create(&t_type);
        for (size_t k = 0; k < n; k++) {
            hashtable_add(ht, &pool[k]);
            present[k] = 1;
        }
        /* Delete every other returned entry and add new ones (enough to
         * start a resize mid-iteration). */
        hashtable_iterator it;
        hashtable_init_iterator(&it, ht, 1);
        void *e;
        size_t returned = 0, added = n;
        while (hashtable_next(&it, &e)) {
            uint64_t key = ((tentry *)e)->key;
            seen[key]++;
            if (returned++ % 2 == 0) {
                assert_true(hashtable_delete(ht, &key));
                present[key] = 0;
            }
            if (added < range && returned % 2 == 0) {
                hashtable_add(ht, &pool[added]);
                present[added++] = 1;
            }
        }
        assert_false(hashtable_next(&it, &e)); /* stays done */
        hashtable_reset_iterator(&it);
        for (size_t k = 0; k < n; k++) assert_int_equal(seen[k], 1); /* originals exactly once */
        for (size_t k = n; k < range; k++) assert_true(seen[k] <= 1);
        assert_true(hashtable_verify(ht));
        for (size_t k = 0; k < range; k++) check_find(ht, pool, present, k);

        /* Delete everything through a safe iterator, started while
         * rehashing if the adds above left it so: chains end compacted. */
        memset(seen, 0, range * sizeof *seen);
        size_t before = hashtable_size(ht);
        hashtable_init_iterator(&it, ht, 1);
        returned = 0;
        while (hashtable_next(&it, &e)) {
            uint64_t key = ((tentry *)e)->key;
            seen[key]++;
            returned++;
            assert_true(hashtable_delete(ht, &key));
        }
        hashtable_reset_iterator(&it);
        assert_int_equal(returned, before);
        for (size_t k = 0; k < range; k++) assert_int_equal(seen[k], present[k]);
        assert_int_equal(hashtable_size(ht), 0);
        assert_int_equal(hashtable_child_buckets(ht), 0);
        assert_true(hashtable_verify(ht));
        hashtable_release(ht);
        free(seen);
        free(present);
        free(pool);
    }
}

/* Two safe iterators at once: the inner one deletes, and must not compact
 * the chain the outer one stands in (only the sole pauser may), or the
 * outer one would miss entries moved behind it. */
static void test_nested_safe_iterators(void **state) {
    (void)state;
    hash_mode = HASH_CONSTANT; /* one long chain */
    const size_t n = 300;
    tentry *pool = pool_alloc(n);
    uint32_t *seen = calloc(n, sizeof *seen);
    hashtable *ht = hashtable_create(&t_type);
    for (size_t k = 0; k < n; k++) hashtable_add(ht, &pool[k]);
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    hashtable_iterator outer, inner;
    void *e;
    hashtable_init_iterator(&outer, ht, 1);
    for (size_t i = 0; i < n / 2; i++) {
        assert_true(hashtable_next(&outer, &e));
        seen[((tentry *)e)->key]++;
    }
    hashtable_init_iterator(&inner, ht, 1);
    while (hashtable_next(&inner, &e))
        if (((tentry *)e)->key % 2 == 0) assert_true(hashtable_delete(ht, &((tentry *)e)->key));
    hashtable_reset_iterator(&inner);
    while (hashtable_next(&outer, &e)) seen[((tentry *)e)->key]++;
    hashtable_reset_iterator(&outer);
    for (size_t k = 1; k < n; k += 2) assert_int_equal(seen[k], 1);
    assert_int_equal(hashtable_size(ht), n / 2);
    assert_true(hashtable_verify(ht));
    hashtable_release(ht);
    free(seen);
    free(pool);
}

/* Adding during a safe iteration may chain the bucket the iterator is in.
 * If the iterator has already returned slot 6 as an entry, that entry now
 * sits in the new child and must not be returned a second time. */
static void test_safe_iterator_chaining_current_bucket(void **state) {
    (void)state;
    hash_mode = HASH_CONSTANT;
    tentry *pool = pool_alloc(16);
    uint32_t seen[16] = {0};
    hashtable *ht = hashtable_create(&t_type);
    for (size_t k = 0; k < 7; k++) hashtable_add(ht, &pool[k]); /* one full bucket */
    hashtable_pause_rehashing(ht);
    for (size_t k = 7; k < 14; k++) hashtable_add(ht, &pool[k]); /* resize; table 1's bucket fills */
    assert_true(hashtable_is_rehashing(ht));
    assert_int_equal(hashtable_child_buckets(ht), 0);
    hashtable_iterator it;
    void *e;
    size_t returned = 0;
    hashtable_init_iterator(&it, ht, 1);
    while (hashtable_next(&it, &e)) {
        seen[((tentry *)e)->key]++;
        if (++returned == 14) hashtable_add(ht, &pool[14]); /* after table 1's slot 6 */
    }
    hashtable_reset_iterator(&it);
    assert_int_equal(hashtable_child_buckets(ht), 1);
    for (size_t k = 0; k < 14; k++) assert_int_equal(seen[k], 1);
    hashtable_resume_rehashing(ht);
    assert_true(hashtable_verify(ht));
    hashtable_release(ht);
    free(pool);
}

static void test_unsafe_iterator(void **state) {
    (void)state;
    const size_t n = 5000;
    tentry *pool = pool_alloc(n + 1);
    uint32_t *seen = calloc(n, sizeof *seen);
    hashtable *ht = hashtable_create(&t_type);
    hashtable_iterator it;
    void *e;
    hashtable_init_iterator(&it, ht, 0); /* empty table */
    assert_false(hashtable_next(&it, &e));
    hashtable_reset_iterator(&it);
    for (size_t k = 0; k < n; k++) hashtable_add(ht, &pool[k]);
    hashtable_init_iterator(&it, ht, 0);
    while (hashtable_next(&it, &e)) seen[((tentry *)e)->key]++;
    hashtable_reset_iterator(&it);
    for (size_t k = 0; k < n; k++) assert_int_equal(seen[k], 1);

    /* Modifying the table during an unsafe iteration aborts (in a child). */
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(2);
        hashtable_init_iterator(&it, ht, 0);
        assert_true(hashtable_next(&it, &e));
        hashtable_add(ht, &pool[n]);
        hashtable_next(&it, &e); /* must abort here */
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    hashtable_release(ht);
    free(seen);
    free(pool);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_siphash_vectors, setup),
        cmocka_unit_test_setup(test_basic_api, setup),
        cmocka_unit_test_setup(test_million_against_reference, setup),
        cmocka_unit_test_setup(test_collisions_constant_hash, setup),
        cmocka_unit_test_setup(test_collisions_same_h2, setup),
        cmocka_unit_test_setup(test_collisions_four_chains, setup),
        cmocka_unit_test_setup(test_temporary_keys, setup),
        cmocka_unit_test_setup(test_growth_and_shrink, setup),
        cmocka_unit_test_setup(test_ops_while_rehashing, setup),
        cmocka_unit_test_setup(test_scan_static, setup),
        cmocka_unit_test_setup(test_scan_while_growing, setup),
        cmocka_unit_test_setup(test_scan_while_shrinking, setup),
        cmocka_unit_test_setup(test_scan_grow_then_shrink, setup),
        cmocka_unit_test_setup(test_scan_during_rehash, setup),
        cmocka_unit_test_setup(test_scan_deleting_callback, setup),
        cmocka_unit_test_setup(test_incremental_find, setup),
        cmocka_unit_test_setup(test_fair_random, setup),
        cmocka_unit_test_setup(test_safe_iterator_deletes, setup),
        cmocka_unit_test_setup(test_nested_safe_iterators, setup),
        cmocka_unit_test_setup(test_safe_iterator_chaining_current_bucket, setup),
        cmocka_unit_test_setup(test_unsafe_iterator, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
