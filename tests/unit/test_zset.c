/* test_zset.c — the sorted set's data structure (step 8, src/zset.c).
 *
 * Random operations against a reference model: a plain array kept sorted
 * by (score, member), where every question has an obvious answer. After
 * every operation zset_verify checks the skiplist's invariants (order,
 * spans, levels, backward pointers, the member index), and the set is
 * compared with the model. The seed is printed; SOLOIST_SEED=N replays a
 * run. Scores are drawn from a few values so that ties (ordered by
 * member) are common.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zmalloc.h"
#include "zset.h"
#include "zset_test.h"

/* ---- the reference model --------------------------------------------------- */

typedef struct ref_entry {
    double score;
    char m[8];
    size_t len;
} ref_entry;

typedef struct ref {
    ref_entry v[512];
    size_t n;
} ref;

static int mcmp(const char *a, size_t al, const char *b, size_t bl) {
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al < bl ? -1 : al > bl);
}

static int ecmp(const ref_entry *a, const ref_entry *b) {
    if (a->score != b->score) return a->score < b->score ? -1 : 1;
    return mcmp(a->m, a->len, b->m, b->len);
}

static long ref_find(const ref *r, const char *m, size_t len) {
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].len == len && !memcmp(r->v[i].m, m, len)) return (long)i;
    return -1;
}

static void ref_remove_at(ref *r, size_t i) {
    memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(ref_entry));
    r->n--;
}

static void ref_insert(ref *r, double score, const char *m, size_t len) {
    ref_entry e = {.score = score, .len = len};
    memcpy(e.m, m, len);
    size_t i = 0;
    while (i < r->n && ecmp(&r->v[i], &e) < 0) i++;
    memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(ref_entry));
    r->v[i] = e;
    r->n++;
}

/* zsetAdd's rules, spelled out on the model. Returns the out-flags. */
static int ref_add(ref *r, double score, const char *m, size_t len, int in) {
    long i = ref_find(r, m, len);
    if (i >= 0) {
        if (in & ZADD_IN_NX) return ZADD_OUT_NOP;
        double cur = r->v[i].score;
        if (in & ZADD_IN_INCR) score += cur;
        if (isnan(score)) return ZADD_OUT_NAN;
        if (((in & ZADD_IN_LT) && score >= cur) || ((in & ZADD_IN_GT) && score <= cur)) return ZADD_OUT_NOP;
        if (score == cur) return 0;
        ref_remove_at(r, (size_t)i);
        ref_insert(r, score, m, len);
        return ZADD_OUT_UPDATED;
    }
    if (in & ZADD_IN_XX) return ZADD_OUT_NOP;
    ref_insert(r, score, m, len);
    return ZADD_OUT_ADDED;
}

/* ---- helpers ------------------------------------------------------------------ */

static unsigned seed;

static void pick_member(char *m, size_t *len, int pool) {
    int k = rand() % pool;
    *len = (size_t)snprintf(m, 8, "m%d", k);
    if (k % 7 == 0) *len = 1; /* "m": a prefix of all the others */
}

static double pick_score(void) {
    static const double scores[] = {-INFINITY, -2.5, -1, 0, 0, 1, 1, 1, 2, 3.25, 100, INFINITY};
    return scores[rand() % (int)(sizeof(scores) / sizeof(scores[0]))];
}

/* The whole set equals the model, walked forward and backward, and
 * zset_by_rank / zset_rank agree with the model's positions. */
static void check_same(zset *z, const ref *r) {
    if (!zset_verify(z)) fail_msg("zset_verify failed (seed %u)", seed);
    assert_int_equal(zset_length(z), r->n);
    size_t i = 0;
    for (zset_node *n = zset_first(z); n; n = zset_next(z, n), i++) {
        size_t len;
        const char *m = zset_node_member(z, n, &len);
        assert_true(i < r->n);
        assert_true(zset_node_score(z, n) == r->v[i].score);
        assert_int_equal(len, r->v[i].len);
        assert_memory_equal(m, r->v[i].m, len);
    }
    assert_int_equal(i, r->n);
    for (zset_node *n = zset_last(z); n; n = zset_prev(z, n)) i--;
    assert_int_equal(i, 0);
    if (r->n) {
        size_t k = (size_t)rand() % r->n;
        zset_node *n = zset_by_rank(z, k);
        assert_non_null(n);
        assert_true(zset_node_score(z, n) == r->v[k].score);
        assert_int_equal(zset_node_rank(z, n), k);
        double s;
        assert_int_equal(zset_rank(z, r->v[k].m, r->v[k].len, 0, &s), (long)k);
        assert_int_equal(zset_rank(z, r->v[k].m, r->v[k].len, 1, NULL), (long)(r->n - 1 - k));
        assert_true(s == r->v[k].score);
    }
    assert_null(zset_by_rank(z, r->n));
}

static void pick_score_range(zset_score_range *sr) {
    sr->min = pick_score();
    sr->max = pick_score();
    sr->minex = rand() % 2;
    sr->maxex = rand() % 2;
}

static int in_score_range(double s, const zset_score_range *sr) {
    return zset_score_gte_min(s, sr) && zset_score_lte_max(s, sr);
}

static void check_score_range(zset *z, const ref *r, const zset_score_range *sr) {
    long first = -1, last = -1;
    for (size_t i = 0; i < r->n; i++)
        if (in_score_range(r->v[i].score, sr)) {
            if (first < 0) first = (long)i;
            last = (long)i;
        }
    zset_node *f = zset_first_in_score_range(z, sr), *l = zset_last_in_score_range(z, sr);
    if (first < 0) {
        assert_null(f);
        assert_null(l);
        return;
    }
    assert_non_null(f);
    assert_non_null(l);
    assert_int_equal(zset_node_rank(z, f), first);
    assert_int_equal(zset_node_rank(z, l), last);
}

/* ---- tests ------------------------------------------------------------------------ */

/*@ zset-random-model */
static void test_random_against_model(void **state) {
    (void)state;
    static ref r;
    r.n = 0;
    zset *z = zset_create();
    for (int op = 0; op < 20000; op++) {
        char m[8];
        size_t len;
        pick_member(m, &len, 300);
        int what = rand() % 100;
        if (what < 45) { /* ZADD with random flags */
            static const int flagsets[] = {0,
                                           0,
                                           0,
                                           ZADD_IN_NX,
                                           ZADD_IN_XX,
                                           ZADD_IN_GT,
                                           ZADD_IN_LT,
                                           ZADD_IN_INCR,
                                           ZADD_IN_INCR | ZADD_IN_XX,
                                           ZADD_IN_XX | ZADD_IN_GT};
            int in = flagsets[rand() % 10];
            double score = pick_score(), got;
            int out, want = ref_add(&r, score, m, len, in);
            int ok = zset_add(z, score, m, len, in, &out, &got);
            assert_int_equal(out, want);
            assert_int_equal(ok, !(want & ZADD_OUT_NAN));
        } else if (what < 70) {
            long i = ref_find(&r, m, len);
            assert_int_equal(zset_delete(z, m, len), i >= 0);
            if (i >= 0) ref_remove_at(&r, (size_t)i);
        } else if (what < 80) {
            double s;
            long i = ref_find(&r, m, len);
            assert_int_equal(zset_score(z, m, len, &s), i >= 0);
            if (i >= 0) assert_true(s == r.v[i].score);
            assert_int_equal(zset_rank(z, m, len, 0, NULL), i);
        } else if (what < 95) {
            zset_score_range sr;
            pick_score_range(&sr);
            check_score_range(z, &r, &sr);
        } else if (what < 98) {
            zset_score_range sr;
            pick_score_range(&sr);
            size_t want = 0;
            for (size_t i = 0; i < r.n;)
                if (in_score_range(r.v[i].score, &sr))
                    ref_remove_at(&r, i), want++;
                else
                    i++;
            assert_int_equal(zset_delete_score_range(z, &sr), want);
        } else if (r.n) {
            size_t a = (size_t)rand() % r.n, b = (size_t)rand() % r.n;
            if (a > b) a ^= b, b ^= a, a ^= b;
            if (b - a > 20) b = a + 20; /* keep the set from emptying too often */
            assert_int_equal(zset_delete_rank_range(z, a, b), b - a + 1);
            for (size_t k = a; k <= b; k++) ref_remove_at(&r, a);
        }
        check_same(z, &r);
    }
    zset *d = zset_dup(z);
    check_same(d, &r);
    zset_free(d);
    zset_free(z);
}
/*@ end */

static void test_lex_ranges(void **state) {
    (void)state;
    static const char *const members[] = {"", "a", "aa", "ab", "b", "ba", "c", "f\x00", "foo", "fooa", "z"};
    const size_t nm = sizeof(members) / sizeof(members[0]);
    static const size_t lens[] = {0, 1, 2, 2, 1, 2, 1, 2, 3, 4, 1};
    zset *z = zset_create();
    for (size_t i = 0; i < nm; i++) {
        int out;
        zset_add(z, 0, members[i], lens[i], 0, &out, NULL);
    }
    assert_true(zset_verify(z));
    /* Every pair of bounds from the members, the infinities and a gap. */
    static const char *const b[] = {"", "a", "ab", "b", "bz", "foo", "zz"};
    static const size_t bl[] = {0, 1, 2, 1, 2, 3, 2};
    for (int lo = -2; lo < 7; lo++)
        for (int hi = -2; hi < 7; hi++)
            for (int ex = 0; ex < 4; ex++) {
                zset_lex_range r;
                r.min.kind = lo == -2   ? ZLEX_MINUS_INF
                             : lo == -1 ? ZLEX_PLUS_INF
                                        : (ex & 1 ? ZLEX_EXCLUSIVE : ZLEX_INCLUSIVE);
                r.max.kind = hi == -2   ? ZLEX_PLUS_INF
                             : hi == -1 ? ZLEX_MINUS_INF
                                        : (ex & 2 ? ZLEX_EXCLUSIVE : ZLEX_INCLUSIVE);
                r.min.ptr = lo >= 0 ? b[lo] : NULL;
                r.min.len = lo >= 0 ? bl[lo] : 0;
                r.max.ptr = hi >= 0 ? b[hi] : NULL;
                r.max.len = hi >= 0 ? bl[hi] : 0;
                long first = -1, last = -1;
                for (size_t i = 0; i < nm; i++)
                    if (zset_lex_gte_min(members[i], lens[i], &r) && zset_lex_lte_max(members[i], lens[i], &r)) {
                        if (first < 0) first = (long)i;
                        last = (long)i;
                    }
                zset_node *f = zset_first_in_lex_range(z, &r), *l = zset_last_in_lex_range(z, &r);
                if (first < 0) {
                    assert_null(f);
                    assert_null(l);
                    continue;
                }
                assert_int_equal(zset_node_rank(z, f), first);
                assert_int_equal(zset_node_rank(z, l), last);
                zset *d = zset_dup(z);
                assert_int_equal(zset_delete_lex_range(d, &r), last - first + 1);
                assert_int_equal(zset_length(d), nm - (size_t)(last - first + 1));
                assert_true(zset_verify(d));
                zset_free(d);
            }
    zset_free(z);
}

static void test_update_keeps_node_and_ties(void **state) {
    (void)state;
    zset *z = zset_create();
    int out;
    double ns;
    zset_add(z, 1, "a", 1, 0, &out, NULL);
    zset_add(z, 1, "b", 1, 0, &out, NULL);
    zset_add(z, 1, "c", 1, 0, &out, NULL);
    /* An equal score is no update; a tie moves by member order. */
    assert_int_equal(zset_add(z, 1, "b", 1, 0, &out, &ns), 1);
    assert_int_equal(out, 0);
    zset_add(z, 0.5, "c", 1, 0, &out, NULL);
    assert_int_equal(out, ZADD_OUT_UPDATED);
    assert_int_equal(zset_rank(z, "c", 1, 0, NULL), 0);
    /* INCR: +inf + -inf is NaN, refused, and nothing changes. */
    zset_add(z, INFINITY, "a", 1, 0, &out, NULL);
    assert_int_equal(zset_add(z, -INFINITY, "a", 1, ZADD_IN_INCR, &out, &ns), 0);
    assert_int_equal(out, ZADD_OUT_NAN);
    double s;
    assert_true(zset_score(z, "a", 1, &s) && isinf(s) && s > 0);
    assert_int_equal(zset_add(z, NAN, "x", 1, 0, &out, NULL), 0);
    assert_int_equal(zset_length(z), 3);
    /* -0 and 0 are the same score. */
    zset_add(z, -0.0, "d", 1, 0, &out, NULL);
    zset_add(z, 0.0, "d", 1, 0, &out, NULL);
    assert_int_equal(out, 0);
    assert_true(zset_verify(z));
    zset_free(z);
}

/* The index is a hashtable: a full scan sees every member, and a random
 * member is always one of them. */
typedef struct seen {
    const zset *z;
    int count[64];
} seen;

static void count_member(void *privdata, const zset_node *n) {
    size_t len;
    const char *m = zset_node_member(((seen *)privdata)->z, n, &len); /* not NUL-terminated */
    char buf[8] = {0};
    memcpy(buf, m + 1, len - 1);
    ((seen *)privdata)->count[atoi(buf)]++;
}

static void test_scan_and_random(void **state) {
    (void)state;
    zset *z = zset_create();
    assert_null(zset_random(z));
    for (int i = 0; i < 64; i++) {
        char m[8];
        int out;
        size_t len = (size_t)snprintf(m, sizeof(m), "m%d", i);
        zset_add(z, i, m, len, 0, &out, NULL);
    }
    seen s = {z, {0}};
    size_t cursor = 0;
    do cursor = zset_scan(z, cursor, count_member, &s);
    while (cursor);
    for (int i = 0; i < 64; i++) assert_true(s.count[i] >= 1);
    for (int i = 0; i < 100; i++) {
        zset_node *n = zset_random(z);
        assert_non_null(n);
        size_t len;
        const char *m = zset_node_member(z, n, &len);
        double sc;
        assert_true(zset_score(z, m, len, &sc));
        assert_true(sc == zset_node_score(z, n));
    }
    zset_free(z);
}

/* Every byte a sorted set holds is counted by zmalloc, and freeing it
 * gives every byte back: INFO's used_memory counts sorted sets exactly. */
static void test_memory_accounted(void **state) {
    (void)state;
    size_t before = zmalloc_used_memory();
    obj *o = zset_object_create();
    for (int i = 0; i < 1000; i++) {
        char m[16];
        int out;
        size_t len = (size_t)snprintf(m, sizeof(m), "member:%d", i);
        zset_add(zset_of(o), i % 17, m, len, 0, &out, NULL);
    }
    assert_true(zmalloc_used_memory() > before + 1000 * 16);
    obj *copy = zset_object_dup(o);
    assert_int_equal(zset_length(zset_of(copy)), 1000);
    assert_true(zset_verify(zset_of(copy)));
    obj_decr_ref(copy);
    obj_decr_ref(o);
    assert_int_equal(zmalloc_used_memory(), before);
}

/* The dense layout at a size where leaves split, fill and empty many
 * times: members added in order (each new leaf starts after a full one),
 * at random, then long members that split leaves by bytes, then removed. */
static void test_dense_at_scale(void **state) {
    (void)state;
    zset *z = zset_create_layout(ZSET_LAYOUT_DENSE);
    char m[64];
    int out;
    for (int i = 0; i < 3000; i++) {
        size_t len = (size_t)snprintf(m, sizeof(m), "m:%d", i);
        zset_add(z, i, m, len, ZADD_IN_NX, &out, NULL);
    }
    assert_true(zset_verify(z));
    for (int i = 0; i < 3000; i++) {
        size_t len = (size_t)snprintf(m, sizeof(m), "r:%d", rand() % 5000);
        zset_add(z, (rand() % 1000) / 7.0, m, len, 0, &out, NULL);
    }
    assert_true(zset_verify(z));
    char big[1500];
    memset(big, 'x', sizeof(big));
    for (int i = 0; i < 20; i++) {
        big[0] = (char)('a' + i);
        zset_add(z, 42, big, sizeof(big), 0, &out, NULL);
        assert_int_equal(out, ZADD_OUT_ADDED);
    }
    assert_true(zset_verify(z));
    /* Members that fill a leaf by bytes alone, and small ones before and
     * after each of them: a big member gets a leaf of its own. */
    char huge[3000];
    memset(huge, 'y', sizeof(huge));
    for (int i = 0; i < 6; i++) {
        huge[1] = (char)('a' + i);
        zset_add(z, 7000 + 10 * i, huge, sizeof(huge), 0, &out, NULL);
        size_t len = (size_t)snprintf(m, sizeof(m), "before:%d", i);
        zset_add(z, 7000 + 10 * i - 1, m, len, 0, &out, NULL);
        len = (size_t)snprintf(m, sizeof(m), "after:%d", i);
        zset_add(z, 7000 + 10 * i + 1, m, len, 0, &out, NULL);
        zset_add(z, 7000 + 10 * i, "", 0, 0, &out, NULL); /* the same score, sorting before it */
        assert_true(zset_verify(z));
    }
    /* A set whose first leaf is one big member: a member before it moves
     * it to a leaf of its own; members after it start new leaves, last
     * or not. */
    zset *b = zset_create_layout(ZSET_LAYOUT_DENSE);
    zset_add(b, 5, huge, sizeof(huge), 0, &out, NULL);
    zset_add(b, 1, "a", 1, 0, &out, NULL);
    zset_add(b, 10, "b", 1, 0, &out, NULL);
    zset_add(b, 6, "c", 1, 0, &out, NULL);
    zset_add(b, 0, "d", 1, 0, &out, NULL);
    assert_true(zset_verify(b));
    assert_int_equal(zset_rank(b, huge, sizeof(huge), 0, NULL), 2);
    assert_int_equal(zset_rank(b, "c", 1, 0, NULL), 3);
    zset_free(b);
    size_t n = zset_length(z);
    for (size_t k = 0; k < n; k += 7) assert_int_equal(zset_node_rank(z, zset_by_rank(z, k)), k);
    for (int i = 0; i < 3000; i += 2) {
        size_t len = (size_t)snprintf(m, sizeof(m), "m:%d", i);
        assert_int_equal(zset_delete(z, m, len), 1);
    }
    assert_true(zset_verify(z));
    assert_int_equal(zset_delete_rank_range(z, 10, 2000), 1991);
    assert_true(zset_verify(z));
    while (zset_length(z)) zset_delete_rank_range(z, 0, 99);
    assert_true(zset_verify(z));
    zset_free(z);
}

/* Removals that leave every leaf nearly empty: neighbours merge, so the
 * set's memory follows its members down (100 full leaves cut to 4 members
 * each would otherwise keep 100 leaf headers for 400 members). */
static void test_dense_merges_after_removals(void **state) {
    (void)state;
    size_t base = zmalloc_used_memory();
    zset *z = zset_create_layout(ZSET_LAYOUT_DENSE);
    char m[32];
    int out;
    for (int i = 0; i < 6400; i++) {
        size_t len = (size_t)snprintf(m, sizeof(m), "m:%d", i);
        zset_add(z, i, m, len, 0, &out, NULL);
    }
    for (int i = 0; i < 6400; i++) {
        if (i % 16 == 0) continue;
        size_t len = (size_t)snprintf(m, sizeof(m), "m:%d", i);
        assert_int_equal(zset_delete(z, m, len), 1);
    }
    assert_true(zset_verify(z));
    assert_int_equal(zset_length(z), 400);
    assert_true((zmalloc_used_memory() - base) / 400 < 100);
    assert_int_equal(zset_rank(z, "m:6384", 6, 0, NULL), 399);
    zset_free(z);
}

/* zset_insert_new: distinct members in any order, and in descending order
 * (each at the front, as the set algebra inserts a difference), give the
 * same set as zset_add, invariants included. */
static void test_insert_new(void **state) {
    (void)state;
    static ref r;
    r.n = 0;
    zset *z = zset_create(), *front = zset_create();
    for (int i = 0; i < 300; i++) {
        char m[8];
        size_t len = (size_t)snprintf(m, sizeof(m), "n%d", (i * 37) % 300);
        double score = pick_score();
        zset_insert_new(z, score, m, len);
        if (r.n < sizeof(r.v) / sizeof(r.v[0])) ref_insert(&r, score, m, len);
    }
    check_same(z, &r);
    for (size_t i = r.n; i-- > 0;) zset_insert_new(front, r.v[i].score, r.v[i].m, r.v[i].len);
    check_same(front, &r);
    zset_free(z);
    zset_free(front);
}

static int set_layout(void **state) {
    zset_layout_default = (int)(intptr_t)*state;
    return 0;
}

int main(void) {
    const char *env = getenv("SOLOIST_SEED");
    seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("test_zset: seed %u (SOLOIST_SEED=%u replays it)\n", seed, seed);
    srand(seed);
    srandom(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_model),
        cmocka_unit_test(test_lex_ranges),
        cmocka_unit_test(test_update_keeps_node_and_ties),
        cmocka_unit_test(test_scan_and_random),
        cmocka_unit_test(test_memory_accounted),
        cmocka_unit_test(test_dense_at_scale),
        cmocka_unit_test(test_dense_merges_after_removals),
        cmocka_unit_test(test_insert_new),
    };
    /* Every test runs once per layout. */
    int failed = 0;
    for (int layout = 0; layout <= ZSET_LAYOUT_DENSE; layout++) {
        struct CMUnitTest t[sizeof(tests) / sizeof(tests[0])];
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
            t[i] = tests[i];
            t[i].setup_func = set_layout;
            t[i].initial_state = (void *)(intptr_t)layout;
        }
        printf("layout %s\n", zset_layout_name(layout));
        failed += cmocka_run_group_tests_name(zset_layout_name(layout), t, NULL, NULL);
    }
    return failed;
}
