/* test_zset_embedded.c — the embedded layout (step 8, exercise 08).
 *
 * Every test makes its sets with zset_create_layout(ZSET_LAYOUT_EMBEDDED),
 * whose node carries its member after its level array (src/zset.c,
 * embedded_node_alloc and embedded_member). What they check: the member's
 * bytes and length come back exactly, at every varint length boundary;
 * the node is one allocation; a removed member leaves nothing in the
 * index; spans stay right through inserts and score updates. The seed is
 * printed; SOLOIST_SEED=N replays a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zmalloc.h"
#include "zset.h"

static unsigned seed;

static zset *embedded(void) { return zset_create_layout(ZSET_LAYOUT_EMBEDDED); }

static void fill(char *buf, size_t len, int tag) {
    for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + (tag + (int)i) % 26);
}

/* Lengths around each varint boundary (1 byte below 128, 2 below 16384),
 * and zero: each member comes back with its length and its bytes, by
 * lookup and by walking. */
static void test_member_bytes_round_trip(void **state) {
    (void)state;
    static const size_t lens[] = {0, 1, 2, 7, 8, 15, 16, 127, 128, 129, 255, 300, 16383, 16384, 20000};
    const int n = (int)(sizeof(lens) / sizeof(lens[0]));
    zset *z = embedded();
    char *buf = malloc(20000);
    for (int i = 0; i < n; i++) {
        int out;
        fill(buf, lens[i], i);
        assert_int_equal(zset_add(z, i, buf, lens[i], 0, &out, NULL), 1);
        assert_int_equal(out, ZADD_OUT_ADDED);
    }
    assert_true(zset_verify(z));
    int i = 0;
    for (zset_node *node = zset_first(z); node; node = zset_next(z, node), i++) {
        size_t len;
        const char *m = zset_node_member(z, node, &len);
        assert_int_equal(len, lens[i]);
        fill(buf, lens[i], i);
        assert_memory_equal(m, buf, len);
        assert_true(zset_node_score(z, node) == i);
        double s;
        assert_true(zset_score(z, buf, len, &s));
        assert_true(s == i);
        assert_int_equal(zset_rank(z, buf, len, 0, NULL), i);
    }
    assert_int_equal(i, n);
    /* A member that is a prefix of another is another member. */
    fill(buf, 300, 9);
    assert_false(zset_score(z, buf, 299, NULL));
    free(buf);
    zset_free(z);
}

/* The embedded node is one allocation: the same members cost less than in
 * the node-pointer layout, whose member bytes sit in an allocation of
 * their own, and all of it comes back when the set is freed. */
static void test_one_allocation_per_member(void **state) {
    (void)state;
    size_t base = zmalloc_used_memory();
    zset *e = embedded();
    zset *p = zset_create_layout(ZSET_LAYOUT_NODE_POINTER);
    size_t e0 = zmalloc_used_memory();
    for (int i = 0; i < 2000; i++) {
        char m[16];
        int out;
        size_t len = (size_t)snprintf(m, sizeof(m), "m:%d", i);
        zset_add(e, i, m, len, 0, &out, NULL);
    }
    size_t e_bytes = zmalloc_used_memory() - e0, p0 = zmalloc_used_memory();
    for (int i = 0; i < 2000; i++) {
        char m[16];
        int out;
        size_t len = (size_t)snprintf(m, sizeof(m), "m:%d", i);
        zset_add(p, i, m, len, 0, &out, NULL);
    }
    size_t p_bytes = zmalloc_used_memory() - p0;
    /* Less, however the allocator rounds (under ASan, not at all): the
     * node-pointer layout holds the same bytes plus a pointer per member. */
    assert_true(e_bytes < p_bytes);
    zset_free(e);
    zset_free(p);
    assert_int_equal(zmalloc_used_memory(), base);
}

/* ZREM takes the member out of the index as well as the list: nothing
 * leads to the freed node afterwards. */
static void test_removed_member_is_gone(void **state) {
    (void)state;
    zset *z = embedded();
    int out;
    zset_add(z, 1, "alpha", 5, 0, &out, NULL);
    zset_add(z, 2, "beta", 4, 0, &out, NULL);
    zset_add(z, 3, "gamma", 5, 0, &out, NULL);
    assert_int_equal(zset_delete(z, "beta", 4), 1);
    assert_true(zset_verify(z));
    assert_false(zset_score(z, "beta", 4, NULL));
    assert_int_equal(zset_rank(z, "beta", 4, 0, NULL), -1);
    assert_int_equal(zset_delete(z, "beta", 4), 0);
    assert_int_equal(zset_length(z), 2);
    /* Added again, it is a new member with its new score. */
    zset_add(z, 10, "beta", 4, 0, &out, NULL);
    assert_int_equal(out, ZADD_OUT_ADDED);
    assert_int_equal(zset_rank(z, "beta", 4, 0, NULL), 2);
    assert_true(zset_verify(z));
    zset_free(z);
}

/* Many inserts in random order: every rank (which sums spans) is the
 * member's position, and zset_verify checks every span. */
static void test_ranks_after_inserts(void **state) {
    (void)state;
    enum { N = 800 };
    zset *z = embedded();
    int order[N];
    for (int i = 0; i < N; i++) order[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int k = 0; k < N; k++) {
        char m[16];
        int out;
        size_t len = (size_t)snprintf(m, sizeof(m), "x%05d", order[k]);
        zset_add(z, order[k] / 4, m, len, 0, &out, NULL); /* ties of four, ordered by member */
    }
    if (!zset_verify(z)) fail_msg("zset_verify failed (seed %u)", seed);
    for (int i = 0; i < N; i++) {
        char m[16];
        size_t len = (size_t)snprintf(m, sizeof(m), "x%05d", i);
        assert_int_equal(zset_rank(z, m, len, 0, NULL), i);
        assert_int_equal(zset_rank(z, m, len, 1, NULL), N - 1 - i);
        zset_node *n = zset_by_rank(z, (size_t)i);
        size_t nlen;
        const char *nm = zset_node_member(z, n, &nlen);
        assert_int_equal(nlen, len);
        assert_memory_equal(nm, m, len);
    }
    zset_free(z);
}

/* A score update that moves a node relinks it, member and all: it is
 * still found by member, at its new rank, with its bytes intact. */
static void test_update_keeps_member(void **state) {
    (void)state;
    zset *z = embedded();
    char big[200];
    fill(big, sizeof(big), 3);
    int out;
    for (int i = 0; i < 50; i++) {
        char m[16];
        size_t len = (size_t)snprintf(m, sizeof(m), "k%d", i);
        zset_add(z, i, m, len, 0, &out, NULL);
    }
    zset_add(z, 25.5, big, sizeof(big), 0, &out, NULL);
    for (int step = 0; step < 20; step++) {
        double s;
        zset_add(z, step % 2 ? -1 - step : 100 + step, big, sizeof(big), 0, &out, &s);
        assert_int_equal(out, ZADD_OUT_UPDATED);
        assert_true(zset_verify(z));
        long r = zset_rank(z, big, sizeof(big), 0, NULL);
        assert_int_equal(r, step % 2 ? 0 : 50);
        size_t len;
        const char *m = zset_node_member(z, zset_by_rank(z, (size_t)r), &len);
        assert_int_equal(len, sizeof(big));
        assert_memory_equal(m, big, len);
    }
    zset_free(z);
}

int main(void) {
    const char *env = getenv("SOLOIST_SEED");
    seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("test_zset_embedded: seed %u (SOLOIST_SEED=%u replays it)\n", seed, seed);
    srand(seed);
    srandom(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_member_bytes_round_trip), cmocka_unit_test(test_one_allocation_per_member),
        cmocka_unit_test(test_removed_member_is_gone),  cmocka_unit_test(test_ranks_after_inserts),
        cmocka_unit_test(test_update_keeps_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
