/* test_zset_embedded.c — the embedded layout (step 8, exercise 08).
 *
 * Every test but the last makes its sets with
 * zset_create_layout(ZSET_LAYOUT_EMBEDDED), whose node carries its member
 * after its level array (src/zset.c, embedded_node_alloc and
 * embedded_member). What they check: the member's
 * bytes and length come back exactly, at every varint length boundary;
 * the node is one allocation; a removed member leaves nothing in the
 * index; spans stay right through inserts and score updates; the node asks
 * for exactly its bytes; and the pointer layouts, which share the member's
 * writing and reading (member_put, member_at), round-trip too. The seed is
 * printed; SOLOIST_SEED=N replays a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zmalloc.h"
#include "zset.h"
#include "zset_test.h"

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

/* Bytes of a varint length: 1 below 128, 2 below 16384, ... */
static size_t varint_len(size_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

/* Whether an allocation of `want` bytes got exactly that: the allocator
 * may round a request up to its size class (glibc's malloc does, and may
 * hand out a slightly larger free chunk whole), so only a smaller usable
 * size is wrong; under ASan, whose usable size is the request itself, a
 * larger one is wrong too. */
static void check_allocation(const void *p, size_t want, const char *what, size_t len) {
    size_t got = malloc_usable_size((void *)p);
#if defined(__SANITIZE_ADDRESS__)
    if (got != want) fail_msg("%s of a %zu-byte member: %zu bytes allocated, want exactly %zu", what, len, got, want);
#else
    if (got < want) fail_msg("%s of a %zu-byte member: %zu bytes allocated, it needs %zu", what, len, got, want);
#endif
}

/* An embedded node is one allocation of exactly its bytes: the header
 * (score 8, backward 8, height 1 and padding 7: 24 bytes on a 64-bit
 * host), 16 bytes per level, the member's length as a varint, then the
 * member's bytes and nothing after them. zset_node_member points at the
 * member's first byte, so the test knows where the varint starts (after a
 * whole number of levels, at least one; a node of one level exists among
 * these, as three nodes in four have one) and where the node ends.
 * Lengths 0 to 47 move the request across every 16-byte size class of
 * the allocator, and 127 to 130 and 16383 to 16385 across the varint's
 * edges. */
static void test_node_is_exactly_its_bytes(void **state) {
    (void)state;
    size_t lens[48 + 7];
    int n = 0;
    for (size_t l = 0; l < 48; l++) lens[n++] = l;
    static const size_t edges[] = {127, 128, 129, 130, 16383, 16384, 16385};
    for (int i = 0; i < 7; i++) lens[n++] = edges[i];
    zset *z = embedded();
    char *buf = malloc(16385);
    for (int i = 0; i < n; i++) {
        int out;
        fill(buf, lens[i], i);
        assert_int_equal(zset_add(z, i, buf, lens[i], 0, &out, NULL), 1);
    }
    size_t fewest_levels = SIZE_MAX;
    int i = 0;
    for (zset_node *node = zset_first(z); node; node = zset_next(z, node), i++) {
        size_t len;
        const char *m = zset_node_member(z, node, &len);
        assert_int_equal(len, lens[i]);
        size_t off = (size_t)(m - (const char *)node), vs = varint_len(len);
        if (off < 24 + 16 + vs || (off - vs - 24) % 16 != 0)
            fail_msg(
                "a %zu-byte member starts %zu bytes into its node: its %zu-byte varint does not follow whole levels",
                len, off, vs);
        if ((off - vs - 24) / 16 < fewest_levels) fewest_levels = (off - vs - 24) / 16;
        check_allocation(node, off + len, "the node", len);
    }
    assert_int_equal(i, n);
    assert_int_equal(fewest_levels, 1);
    free(buf);
    zset_free(z);
}

/* The pointer layouts (copied, node-pointer) keep the member in an
 * allocation of its own, written and read the same way: every length
 * round-trips by walking, by lookup and by removal; the member's
 * allocation starts at its varint and holds exactly the varint and the
 * bytes; a removed member is gone; all of it is freed with the set. */
static void test_pointer_layouts_round_trip(void **state) {
    (void)state;
    static const size_t lens[] = {0, 1, 2, 126, 127, 128, 129, 300, 16383, 16384};
    const int n = (int)(sizeof(lens) / sizeof(lens[0]));
    char *buf = malloc(16384);
    static const int layouts[] = {ZSET_LAYOUT_COPIED, ZSET_LAYOUT_NODE_POINTER};
    for (int l = 0; l < 2; l++) {
        size_t base = zmalloc_used_memory();
        zset *z = zset_create_layout(layouts[l]);
        for (int i = 0; i < n; i++) {
            int out;
            fill(buf, lens[i], i);
            assert_int_equal(zset_add(z, i, buf, lens[i], 0, &out, NULL), 1);
        }
        assert_true(zset_verify(z));
        int i = 0;
        for (zset_node *node = zset_first(z); node; node = zset_next(z, node), i++) {
            size_t len;
            const char *m = zset_node_member(z, node, &len);
            assert_int_equal(len, lens[i]);
            fill(buf, lens[i], i);
            assert_memory_equal(m, buf, len);
            check_allocation(m - varint_len(len), varint_len(len) + len, "the member's allocation", len);
            double s;
            assert_true(zset_score(z, buf, len, &s));
            assert_true(s == i);
        }
        assert_int_equal(i, n);
        for (int j = 0; j < n; j += 2) {
            fill(buf, lens[j], j);
            assert_int_equal(zset_delete(z, buf, lens[j]), 1);
            assert_false(zset_score(z, buf, lens[j], NULL));
        }
        assert_true(zset_verify(z));
        assert_int_equal(zset_length(z), (size_t)(n / 2));
        zset_free(z);
        assert_int_equal(zmalloc_used_memory(), base);
    }
    free(buf);
}

int main(void) {
    const char *env = getenv("SOLOIST_SEED");
    seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("test_zset_embedded: seed %u (SOLOIST_SEED=%u replays it)\n", seed, seed);
    srand(seed);
    srandom(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_member_bytes_round_trip),    cmocka_unit_test(test_one_allocation_per_member),
        cmocka_unit_test(test_removed_member_is_gone),     cmocka_unit_test(test_ranks_after_inserts),
        cmocka_unit_test(test_update_keeps_member),        cmocka_unit_test(test_node_is_exactly_its_bytes),
        cmocka_unit_test(test_pointer_layouts_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
