/* test_zset_embedded.c — the embedded layout (step 8, exercise 08).
 *
 * Most tests make their sets with zset_create_layout(ZSET_LAYOUT_EMBEDDED),
 * whose node carries its member after its level array (src/zset.c,
 * embedded_node_alloc and embedded_member); the pointer layouts, which
 * share the member's writing and reading (member_put, member_at), are
 * checked too. What they check: the member's bytes and length come back
 * exactly, at every varint length boundary and past 64 KiB; the varint's
 * bytes are zset_varint_put's; the node is one allocation, from zmalloc,
 * of exactly its bytes (the list's header node too), and a pointer
 * layout's node is exactly its header, levels and pointer; a removed
 * member leaves nothing in the index; spans stay right through inserts
 * and score updates. Failures print the quantity and the contract's value
 * in decimal (expect.h). The seed is printed; SOLOIST_SEED=N replays a
 * run.
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

#include "expect.h"
#include "zmalloc.h"
#include "zset.h"
#include "zset_private.h"
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
        expect_eq(("length read back of a %zu-byte member", lens[i]), len, lens[i]);
        fill(buf, lens[i], i);
        expect_true(("the %zu bytes read back are the member's", lens[i]), memcmp(m, buf, len) == 0);
        expect_true(("the score of the %zu-byte member is %d", lens[i], i), zset_node_score(z, node) == i);
        double s;
        expect_true(("a %zu-byte member is found by its bytes, with its score %d", lens[i], i),
                    zset_score(z, buf, len, &s) && s == i);
        expect_eq(("rank of the %zu-byte member", lens[i]), zset_rank(z, buf, len, 0, NULL), i);
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
    expect_true(
        ("2000 members cost the embedded layout %zu bytes, fewer than the node-pointer layout's %zu", e_bytes, p_bytes),
        e_bytes < p_bytes);
    zset_free(e);
    zset_free(p);
    expect_eq(("bytes zmalloc counts after both sets are freed, over what it counted before"),
              (long long)zmalloc_used_memory() - (long long)base, 0);
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

/* Whether allocations asked for exactly their contract's bytes, seen
 * through malloc_usable_size. Under ASan the usable size is the request
 * itself: it must be exactly `want`. glibc's malloc rounds a request of r
 * bytes up to a chunk of max(32, (r + 8 + 15) & ~15) bytes, all but 8 of
 * them usable (glibc_usable(r)), and may hand out a free chunk 16 bytes
 * larger whole, never more. So without ASan an allocation is wrong when it
 * has fewer than `want` bytes or more than glibc_usable(want) + 16; and
 * among the allocations whose `want` leaves the same remainder mod 16 at
 * least one must be exactly glibc_usable(want). A request one byte or one
 * level (16 bytes) too big is never exact in some remainder class, so it
 * fails at -O2 too, not only under ASan. */
typedef struct alloc_audit {
    const char *what;
    int seen[16], exact[16];
} alloc_audit;

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define AUDIT_GLIBC 1
static size_t glibc_usable(size_t r) {
    size_t chunk = (r + 8 + 15) & ~(size_t)15;
    return (chunk < 32 ? 32 : chunk) - 8;
}
#else
#define AUDIT_GLIBC 0
#endif

static void audit_one(alloc_audit *a, const void *p, size_t want, size_t len) {
    size_t got = malloc_usable_size((void *)p);
    expect_ge(("usable bytes of %s of a %zu-byte member", a->what, len), got, want);
#if AUDIT_GLIBC
    expect_le(("usable bytes of %s of a %zu-byte member (glibc rounds its %zu-byte contract to %zu, +16 at most)",
               a->what, len, want, glibc_usable(want)),
              got, glibc_usable(want) + 16);
    a->seen[want % 16]++;
    if (got == glibc_usable(want)) a->exact[want % 16]++;
#elif defined(__SANITIZE_ADDRESS__)
    expect_eq(("bytes allocated for %s of a %zu-byte member (ASan: the request itself)", a->what, len), got, want);
#endif
}

static void audit_done(const alloc_audit *a) {
#if AUDIT_GLIBC
    for (int r = 0; r < 16; r++)
        if (a->seen[r])
            expect_ge(("allocations of %s with a contract of 16k+%d bytes that got exactly glibc's size for it "
                       "(of %d; none: each asked for more than its contract)",
                       a->what, r, a->seen[r]),
                      a->exact[r], 1);
#else
    (void)a;
#endif
}

/* An embedded node is one allocation of exactly its bytes: the header
 * (score 8, backward 8, height 1 and padding 7: 24 bytes on a 64-bit
 * host), 16 bytes per level, the member's length as a varint, then the
 * member's bytes and nothing after them. zset_node_member points at the
 * member's first byte, so the test knows where the varint starts (after a
 * whole number of levels, at least one; a node of one level exists among
 * these, as three nodes in four have one) and where the node ends.
 * Lengths 0 to 47, four members of each, move the request across every
 * 16-byte size class of the allocator, and 127 to 130 and 16383 to 16385
 * across the varint's edges (alloc_audit says how a size is checked
 * without ASan). */
static void test_node_is_exactly_its_bytes(void **state) {
    (void)state;
    enum { PER_LEN = 4 };
    size_t lens[48 * PER_LEN + 7];
    int n = 0;
    for (size_t l = 0; l < 48; l++)
        for (int k = 0; k < (l ? PER_LEN : 1); k++) lens[n++] = l; /* one empty member */
    static const size_t edges[] = {127, 128, 129, 130, 16383, 16384, 16385};
    for (int i = 0; i < 7; i++) lens[n++] = edges[i];
    zset *z = embedded();
    char *buf = malloc(16385);
    for (int i = 0; i < n; i++) {
        int out;
        fill(buf, lens[i], i);
        if (lens[i]) buf[0] = (char)('A' + i % PER_LEN); /* four different members of each length */
        assert_int_equal(zset_add(z, i, buf, lens[i], 0, &out, NULL), 1);
    }
    alloc_audit audit = {.what = "an embedded node"};
    size_t fewest_levels = SIZE_MAX;
    int i = 0;
    for (zset_node *node = zset_first(z); node; node = zset_next(z, node), i++) {
        size_t len;
        const char *m = zset_node_member(z, node, &len);
        expect_eq(("length of the member of score %d", i), len, lens[i]);
        size_t off = (size_t)(m - (const char *)node), vs = varint_len(len);
        if (off < 24 + 16 + vs || (off - vs - 24) % 16 != 0)
            fail_msg(
                "a %zu-byte member starts %zu bytes into its node: its %zu-byte varint does not follow whole levels",
                len, off, vs);
        if ((off - vs - 24) / 16 < fewest_levels) fewest_levels = (off - vs - 24) / 16;
        audit_one(&audit, node, off + len, len);
    }
    expect_eq(("members walked"), i, n);
    expect_eq(("levels of the lowest node"), fewest_levels, 1);
    audit_done(&audit);
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
        alloc_audit audit = {.what = "the member's own allocation"};
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
            expect_eq(("length read back of a %zu-byte member (%s layout)", lens[i], zset_layout_name(layouts[l])), len,
                      lens[i]);
            fill(buf, lens[i], i);
            expect_true(("the %zu bytes read back are the member's", lens[i]), memcmp(m, buf, len) == 0);
            audit_one(&audit, m - varint_len(len), varint_len(len) + len, len);
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
        expect_eq(
            ("bytes zmalloc counts after a %s set is freed, over what it counted before", zset_layout_name(layouts[l])),
            (long long)zmalloc_used_memory() - (long long)base, 0);
    }
    free(buf);
}

/* Lengths of 64 KiB and more: the varint has a third byte, and the
 * length read back must keep every bit of it. In every skiplist layout a
 * member of 65,535, 65,536 and 70,000 bytes comes back with exactly that
 * length and its bytes, is found by its bytes (score and rank), and is
 * removed by them. Read into 16 bits, a 70,000-byte member would come
 * back 4,464 bytes long and could no longer be found. */
static void test_member_past_64k(void **state) {
    (void)state;
    static const size_t lens[] = {65535, 65536, 70000};
    const int n = (int)(sizeof(lens) / sizeof(lens[0]));
    static const int layouts[] = {ZSET_LAYOUT_EMBEDDED, ZSET_LAYOUT_NODE_POINTER, ZSET_LAYOUT_COPIED};
    char *buf = malloc(70000);
    for (int l = 0; l < 3; l++) {
        const char *name = zset_layout_name(layouts[l]);
        zset *z = zset_create_layout(layouts[l]);
        for (int i = 0; i < n; i++) {
            int out;
            fill(buf, lens[i], i);
            expect_eq(("members added by ZADD of a %zu-byte member (%s layout)", lens[i], name),
                      zset_add(z, i, buf, lens[i], 0, &out, NULL), 1);
        }
        int i = 0;
        for (zset_node *node = zset_first(z); node && i < n; node = zset_next(z, node), i++) {
            size_t len;
            const char *m = zset_node_member(z, node, &len);
            expect_eq(("length read back of a %zu-byte member (%s layout)", lens[i], name), len, lens[i]);
            fill(buf, lens[i], i);
            expect_true(("the %zu bytes read back are the member's (%s layout)", lens[i], name),
                        memcmp(m, buf, lens[i]) == 0);
            double s;
            expect_true(("a %zu-byte member is found by its bytes (%s layout)", lens[i], name),
                        zset_score(z, buf, lens[i], &s) && s == i);
            expect_eq(("rank of the %zu-byte member (%s layout)", lens[i], name), zset_rank(z, buf, lens[i], 0, NULL),
                      i);
        }
        expect_eq(("members walked (%s layout)", name), i, n);
        for (int j = 0; j < n; j++) {
            fill(buf, lens[j], j);
            expect_eq(("members ZREM removes by the bytes of a %zu-byte member (%s layout)", lens[j], name),
                      zset_delete(z, buf, lens[j]), 1);
        }
        expect_eq(("members left (%s layout)", name), zset_length(z), 0);
        zset_free(z);
    }
    free(buf);
}

/* Every byte of an embedded node comes from zmalloc, so used_memory (and
 * INFO, and maxmemory) counts it. 200 members of 100 bytes raise zmalloc's
 * count by at least what the nodes themselves hold (each node's usable
 * size, summed: the index's table comes on top), and freeing the set
 * brings the count back exactly to where it was before the set was made.
 * Compared signed, over a ballast main() holds: a node taken from malloc
 * and given back with zfree leaves the count below its start, a negative
 * difference, not a 0. */
static void test_embedded_node_memory_counted(void **state) {
    (void)state;
    enum { N = 200, LEN = 100 };
    long long base = (long long)zmalloc_used_memory();
    zset *z = embedded();
    long long made = (long long)zmalloc_used_memory();
    char m[LEN];
    for (int i = 0; i < N; i++) {
        int out;
        fill(m, LEN, i);
        m[0] = (char)('0' + i / 100); /* 200 different members */
        m[1] = (char)('0' + i / 10 % 10);
        m[2] = (char)('0' + i % 10);
        zset_add(z, i, m, LEN, 0, &out, NULL);
    }
    long long nodes = 0;
    int walked = 0;
    for (zset_node *node = zset_first(z); node; node = zset_next(z, node), walked++)
        nodes += (long long)malloc_usable_size(node);
    expect_eq(("members walked"), walked, N);
    expect_ge(
        ("bytes zmalloc counts for 200 embedded nodes of a 100-byte member (their usable sizes summed, %lld)", nodes),
        (long long)zmalloc_used_memory() - made, nodes);
    zset_free(z);
    expect_eq(("bytes zmalloc counts after the set is freed, over what it counted before it was made"),
              (long long)zmalloc_used_memory() - base, 0);
}

/* The node of the pointer layouts (copied, node-pointer) is one allocation
 * of exactly the header (24 bytes), `height` levels (16 bytes each) and the
 * pointer (8 bytes): not a level more, and none of the member's bytes,
 * which live in an allocation of their own (exactly the varint and the
 * bytes). The test finds the height from where the pointer sits: the one
 * level count whose tail holds the member allocation's address. Lengths 0
 * to 47, four members each, and the varint's edges; alloc_audit says how
 * a size is checked without ASan. */
static void test_pointer_node_is_exactly_its_bytes(void **state) {
    (void)state;
    enum { PER_LEN = 4 };
    size_t lens[48 * PER_LEN + 4];
    int n = 0;
    for (size_t l = 0; l < 48; l++)
        for (int k = 0; k < (l ? PER_LEN : 1); k++) lens[n++] = l; /* one empty member */
    static const size_t edges[] = {127, 128, 16383, 16384};
    for (int i = 0; i < 4; i++) lens[n++] = edges[i];
    static const int layouts[] = {ZSET_LAYOUT_COPIED, ZSET_LAYOUT_NODE_POINTER};
    char *buf = malloc(16384);
    for (int l = 0; l < 2; l++) {
        const char *name = zset_layout_name(layouts[l]);
        zset *z = zset_create_layout(layouts[l]);
        for (int i = 0; i < n; i++) {
            int out;
            fill(buf, lens[i], i);
            if (lens[i]) buf[0] = (char)('A' + i % PER_LEN);
            expect_eq(("members added (%s layout)", name), zset_add(z, i, buf, lens[i], 0, &out, NULL), 1);
        }
        alloc_audit nodes = {.what = "a pointer layout's node"}, members = {.what = "a member's own allocation"};
        int i = 0;
        for (zset_node *node = zset_first(z); node; node = zset_next(z, node), i++) {
            size_t len;
            const char *m = zset_node_member(z, node, &len);
            expect_eq(("length of the member of score %d (%s layout)", i, name), len, lens[i]);
            const unsigned char *own = (const unsigned char *)m - varint_len(len);
            int height = 0;
            for (int h = 1; h <= ZSET_MAX_LEVEL && !height; h++) {
                const unsigned char *p;
                memcpy(&p, (const char *)node + 24 + 16 * (size_t)h, sizeof(p));
                if (p == own) height = h;
            }
            if (!height)
                fail_msg("%s layout: no level count puts the pointer to a %zu-byte member's allocation right after "
                         "the levels (24 + 16 x height bytes into the node)",
                         name, len);
            audit_one(&nodes, node, 24 + 16 * (size_t)height + sizeof(void *), len);
            audit_one(&members, own, varint_len(len) + len, len);
        }
        expect_eq(("members walked (%s layout)", name), i, n);
        audit_done(&nodes);
        audit_done(&members);
        zset_free(z);
    }
    free(buf);
}

/* The varint's bytes are the format zset_varint_put writes (zset_private.h,
 * and chapter 08's figure): little-endian base-128, 7 bits a byte, the top
 * bit set on every byte but the last. Read from the bytes right before the
 * member's first byte, in the embedded node and in a pointer layout's
 * member allocation: 0 is 00, 127 is 7f, 128 is 80 01, 300 is ac 02,
 * 16383 is ff 7f, 16384 is 80 80 01, 70000 is f0 a2 04. */
static void test_varint_bytes_pinned(void **state) {
    (void)state;
    static const struct {
        size_t len;
        int n;
        unsigned char bytes[3];
    } want[] = {{0, 1, {0x00}},
                {127, 1, {0x7f}},
                {128, 2, {0x80, 0x01}},
                {300, 2, {0xac, 0x02}},
                {16383, 2, {0xff, 0x7f}},
                {16384, 3, {0x80, 0x80, 0x01}},
                {70000, 3, {0xf0, 0xa2, 0x04}}};
    const int n = (int)(sizeof(want) / sizeof(want[0]));
    static const int layouts[] = {ZSET_LAYOUT_EMBEDDED, ZSET_LAYOUT_NODE_POINTER};
    char *buf = malloc(70000);
    for (int l = 0; l < 2; l++) {
        const char *name = zset_layout_name(layouts[l]);
        zset *z = zset_create_layout(layouts[l]);
        for (int i = 0; i < n; i++) {
            int out;
            fill(buf, want[i].len, i);
            zset_add(z, i, buf, want[i].len, 0, &out, NULL);
        }
        int i = 0;
        for (zset_node *node = zset_first(z); node && i < n; node = zset_next(z, node), i++) {
            size_t len;
            const unsigned char *m = (const unsigned char *)zset_node_member(z, node, &len);
            expect_eq(("length of the member of score %d (%s layout)", i, name), len, want[i].len);
            for (int b = 0; b < want[i].n; b++)
                expect_eq(("byte %d of the varint of length %zu, in hex %02x (%s layout)", b, want[i].len,
                           want[i].bytes[b], name),
                          m[b - want[i].n], want[i].bytes[b]);
        }
        zset_free(z);
    }
    free(buf);
}

/* The list's header node is a node too: the embedded layout makes it with
 * the empty member (member NULL, length 0), so it is exactly the header,
 * ZSET_MAX_LEVEL (32) levels and the varint 0: 24 + 512 + 1 = 537 bytes,
 * its last byte 0. The test finds the header through the set (the list's
 * header pointer sits right before its tail pointer, as in Valkey's
 * zskiplist), checked by the header's first level leading to the one
 * member. */
static void test_header_node_has_its_tail(void **state) {
    (void)state;
    zset *z = embedded();
    int out;
    zset_add(z, 1, "only", 4, 0, &out, NULL);
    zset_node *first = zset_first(z);
    expect_true(("the set has its one member"), first != NULL);
    const unsigned char *header = NULL;
    size_t words = malloc_usable_size(z) / sizeof(void *);
    for (size_t w = 1; w < words && !header; w++) {
        const void *tail, *cand;
        memcpy(&tail, (const char *)z + w * sizeof(void *), sizeof(tail));
        memcpy(&cand, (const char *)z + (w - 1) * sizeof(void *), sizeof(cand));
        if (tail != (const void *)first || !cand || cand == (const void *)first) continue;
        const void *forward;
        memcpy(&forward, (const char *)cand + 24, sizeof(forward)); /* header->level[0].forward */
        if (forward == (const void *)first) header = cand;
    }
    if (!header) fail_msg("the list's header node was not found before its tail pointer in the set");
    const size_t want = 24 + 16 * ZSET_MAX_LEVEL + 1;
    alloc_audit audit = {.what = "the list's header node"};
    audit_one(&audit, header, want, 0);
    expect_eq(("the header node's varint (the empty member's length), at byte 536"), header[want - 1], 0);
    zset_free(z);
}

int main(void) {
    const char *env = getenv("SOLOIST_SEED");
    seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("test_zset_embedded: seed %u (SOLOIST_SEED=%u replays it)\n", seed, seed);
    srand(seed);
    srandom(seed);
    /* A ballast under zmalloc's count (never touched, so it costs no
     * memory): an over-free shows as a negative difference, not as a count
     * that stops at 0. */
    void *ballast = zmalloc(16 << 20);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_member_bytes_round_trip, expect_setup),
        cmocka_unit_test_setup(test_one_allocation_per_member, expect_setup),
        cmocka_unit_test(test_removed_member_is_gone),
        cmocka_unit_test(test_ranks_after_inserts),
        cmocka_unit_test(test_update_keeps_member),
        cmocka_unit_test_setup(test_node_is_exactly_its_bytes, expect_setup),
        cmocka_unit_test_setup(test_pointer_layouts_round_trip, expect_setup),
        cmocka_unit_test_setup(test_member_past_64k, expect_setup),
        cmocka_unit_test_setup(test_embedded_node_memory_counted, expect_setup),
        cmocka_unit_test_setup(test_pointer_node_is_exactly_its_bytes, expect_setup),
        cmocka_unit_test_setup(test_varint_bytes_pinned, expect_setup),
        cmocka_unit_test_setup(test_header_node_has_its_tail, expect_setup),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    zfree(ballast);
    return failed;
}
