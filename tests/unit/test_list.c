/* test_list.c — the list type's structure (src/list.c): one listpack, or
 * a quicklist of listpack nodes.
 *
 * Random operations against a reference model (a plain array of strings,
 * where every question has an obvious answer), under several limits: a
 * count limit small enough that most operations cross nodes, the byte
 * limits, and elements large enough to need a node of their own. After
 * every operation list_verify checks the invariants list.c lists and the
 * list is compared with the model, forward and backward. The conversion
 * tests pin the points where the encoding changes, both ways. The seed is
 * printed; SOLOIST_SEED=N replays a run. Every loop is bounded.
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

#include "list.h"
#include "listpack.h"
#include "zmalloc.h"

/* ---- the reference model --------------------------------------------------- */

#define MODEL_MAX 700

typedef struct model {
    char *v[MODEL_MAX];
    size_t len[MODEL_MAX];
    size_t n;
} model;

static void model_insert(model *m, size_t at, const char *s, size_t len) {
    memmove(&m->v[at + 1], &m->v[at], (m->n - at) * sizeof(char *));
    memmove(&m->len[at + 1], &m->len[at], (m->n - at) * sizeof(size_t));
    m->v[at] = malloc(len + 1);
    memcpy(m->v[at], s, len);
    m->v[at][len] = 0;
    m->len[at] = len;
    m->n++;
}

static void model_delete(model *m, size_t at) {
    free(m->v[at]);
    memmove(&m->v[at], &m->v[at + 1], (m->n - at - 1) * sizeof(char *));
    memmove(&m->len[at], &m->len[at + 1], (m->n - at - 1) * sizeof(size_t));
    m->n--;
}

static void model_clear(model *m) {
    while (m->n) model_delete(m, m->n - 1);
}

static int model_eq(const model *m, size_t i, const unsigned char *s, size_t len) {
    return m->len[i] == len && memcmp(m->v[i], s, len) == 0;
}

/* ---- elements ---------------------------------------------------------------- */

static char bigbuf[20000];

/* A random element: mostly short strings and integers (the listpack's two
 * kinds), a few values from a small set so that LREM and LINSERT find
 * matches, sometimes a long one, rarely one larger than any node. */
static size_t random_element(char *out, int allow_huge) {
    int r = rand() % 100;
    if (r < 30) return (size_t)sprintf(out, "v%d", rand() % 8);
    if (r < 55) return (size_t)sprintf(out, "%d", rand() % 2000 - 1000);
    if (r < 60) return (size_t)sprintf(out, "%lld", (long long)rand() * 1000003LL);
    if (r < 90) return (size_t)sprintf(out, "elem-%d", rand());
    size_t len = allow_huge && r >= 98 ? 9000 + (size_t)(rand() % 2000) : 100 + (size_t)(rand() % 900);
    memset(out, 'a' + rand() % 26, len);
    return len;
}

/* ---- comparing ------------------------------------------------------------------ */

static void check_same(obj *o, const model *m) {
    assert_true(list_verify(o));
    assert_int_equal(list_length(o), m->n);
    unsigned char buf[LP_INTBUF_SIZE];
    size_t len;
    const unsigned char *s;
    list_iter it;
    list_iter_init(&it, o, 0, 1);
    for (size_t i = 0; i < m->n; i++) {
        s = list_iter_next(&it, &len, buf);
        assert_non_null(s);
        assert_true(model_eq(m, i, s, len));
    }
    assert_null(list_iter_next(&it, &len, buf));
    list_iter_init(&it, o, -1, 0);
    for (size_t i = m->n; i-- > 0;) {
        s = list_iter_next(&it, &len, buf);
        assert_non_null(s);
        assert_true(model_eq(m, i, s, len));
    }
    assert_null(list_iter_next(&it, &len, buf));
}

/* ---- one random operation ------------------------------------------------------------ */

/* grow: pick pushes more often (a list must get long enough to span
 * many nodes); otherwise pops. */
static void random_op(obj *o, model *m, int allow_huge, int grow) {
    char *e = bigbuf;
    size_t len;
    int op = rand() % 16;
    if (op >= 12) op = grow ? op % 2 : 2 + op % 2;
    if (m->n == 0 || m->n >= MODEL_MAX - 2) op = m->n ? 3 : 0;
    unsigned char buf[LP_INTBUF_SIZE];
    switch (op) {
    case 0: /* push a few at one end, as LPUSH/RPUSH: the encoding first */
    case 1: {
        int n = 1 + rand() % 3;
        char *els[3];
        size_t lens[3], total = 0;
        for (int i = 0; i < n; i++) {
            lens[i] = random_element(e, allow_huge);
            els[i] = malloc(lens[i]);
            memcpy(els[i], e, lens[i]);
            total += lens[i];
        }
        list_try_grow(o, total, (size_t)n);
        for (int i = 0; i < n; i++) {
            enum list_where w = op == 0 ? LIST_HEAD : LIST_TAIL;
            list_push(o, (unsigned char *)els[i], lens[i], w);
            model_insert(m, w == LIST_HEAD ? 0 : m->n, els[i], lens[i]);
            free(els[i]);
        }
        break;
    }
    case 2: /* pop one end */
    case 3: {
        enum list_where w = op == 2 ? LIST_HEAD : LIST_TAIL;
        size_t at = w == LIST_HEAD ? 0 : m->n - 1;
        const unsigned char *s = list_peek(o, w, &len, buf);
        assert_true(model_eq(m, at, s, len));
        if (rand() % 2) {
            list_pop_discard(o, w);
        } else {
            obj *v = list_pop(o, w);
            assert_true(model_eq(m, at, (unsigned char *)v->ptr, v->len));
            obj_decr_ref(v);
        }
        model_delete(m, at);
        list_try_shrink(o);
        break;
    }
    case 4: { /* index, in and out of range */
        long idx = (long)(rand() % (int)(m->n * 2 + 2)) - (long)m->n - 1;
        const unsigned char *s = list_index(o, idx, &len, buf);
        long real = idx < 0 ? idx + (long)m->n : idx;
        if (real < 0 || real >= (long)m->n)
            assert_null(s);
        else
            assert_true(model_eq(m, (size_t)real, s, len));
        break;
    }
    case 5: { /* set, as LSET */
        size_t at = (size_t)rand() % m->n;
        len = random_element(e, allow_huge);
        list_try_grow(o, len, 1);
        assert_true(list_set(o, rand() % 2 ? (long)at : (long)at - (long)m->n, (unsigned char *)e, len));
        model_delete(m, at);
        model_insert(m, at, e, len);
        list_try_shrink(o);
        break;
    }
    case 6: { /* insert before or after a pivot, as LINSERT */
        size_t pat = (size_t)rand() % m->n;
        char pivot[64];
        size_t plen = m->len[pat] < sizeof(pivot) ? m->len[pat] : 0;
        if (!plen) break;
        memcpy(pivot, m->v[pat], plen);
        size_t first = 0;
        while (!model_eq(m, first, (unsigned char *)pivot, plen)) first++;
        int after = rand() % 2;
        len = random_element(e, allow_huge);
        list_try_grow(o, len, 1);
        assert_true(list_insert(o, (unsigned char *)pivot, plen, after, (unsigned char *)e, len));
        model_insert(m, first + (size_t)after, e, len);
        assert_false(list_insert(o, (unsigned char *)"no-such", 7, after, (unsigned char *)e, len));
        break;
    }
    case 7: { /* remove by value, as LREM */
        char v[8];
        size_t vlen = (size_t)sprintf(v, "v%d", rand() % 8);
        long count = rand() % 5 - 2;
        long want = 0;
        if (count >= 0) {
            for (size_t i = 0; i < m->n && (count == 0 || want < count);)
                if (model_eq(m, i, (unsigned char *)v, vlen)) {
                    model_delete(m, i);
                    want++;
                } else {
                    i++;
                }
        } else {
            for (size_t i = m->n; i-- > 0 && want < -count;)
                if (model_eq(m, i, (unsigned char *)v, vlen)) {
                    model_delete(m, i);
                    want++;
                }
        }
        assert_int_equal(list_remove(o, (unsigned char *)v, vlen, count), want);
        if (want) list_try_shrink(o);
        break;
    }
    case 8: { /* delete a range, as LTRIM's two ends */
        size_t start = (size_t)rand() % m->n;
        size_t count = (size_t)rand() % (m->n - start + 1);
        if (count > 8) count = 8;
        list_delete_range(o, rand() % 2 ? (long)start : (long)start - (long)m->n, count);
        for (size_t i = 0; i < count; i++) model_delete(m, start);
        if (count) list_try_shrink(o);
        break;
    }
    case 9: { /* a range from an index, either way, as LRANGE */
        long start = rand() % (long)m->n;
        int forward = rand() % 2;
        list_iter it;
        list_iter_init(&it, o, start, forward);
        for (long i = start; i >= 0 && i < (long)m->n; i += forward ? 1 : -1) {
            const unsigned char *s = list_iter_next(&it, &len, buf);
            assert_true(model_eq(m, (size_t)i, s, len));
        }
        assert_null(list_iter_next(&it, &len, buf));
        break;
    }
    case 10: { /* scan for a value, as LPOS */
        char v[8];
        size_t vlen = (size_t)sprintf(v, "v%d", rand() % 8);
        lp_elem want;
        lp_encode(&want, (unsigned char *)v, vlen);
        list_iter it;
        list_iter_init(&it, o, 0, 1);
        for (size_t i = 0; i < m->n; i++)
            assert_int_equal(list_iter_next_equals(&it, &want), model_eq(m, i, (unsigned char *)v, vlen));
        assert_int_equal(list_iter_next_equals(&it, &want), -1);
        break;
    }
    case 11: { /* a copy is equal and independent */
        obj *d = list_object_dup(o);
        check_same(d, m);
        obj_decr_ref(d);
        break;
    }
    }
}

static unsigned seed;

/* back: whether the list must have come back to a listpack at some point
 * (under a count limit of 1, half the limit is 0: it never does). */
static void run_random(long long fill, int allow_huge, int ops, int back) {
    long long saved = list_max_listpack_size;
    list_max_listpack_size = fill;
    size_t before = zmalloc_used_memory();
    model m = {0};
    obj *o = list_object_create();
    int saw_quicklist = 0, saw_listpack_again = 0;
    size_t most = 0, most_nodes = 0;
    for (int i = 0; i < ops; i++) {
        int was_ql = o->encoding == OBJ_ENC_QUICKLIST;
        random_op(o, &m, allow_huge, i % 700 < 500);
        if (o->encoding == OBJ_ENC_QUICKLIST) saw_quicklist = 1;
        if (was_ql && o->encoding == OBJ_ENC_LISTPACK) saw_listpack_again = 1;
        check_same(o, &m);
        if (m.n > most) most = m.n;
        if (list_node_count(o) > most_nodes) most_nodes = list_node_count(o);
        /* Drain now and then so the list crosses the limits both ways. */
        if (i % 700 == 699) {
            /* from the tail, then from the head: an element too large for
             * a node keeps the last node over the half until it is popped */
            enum list_where w = i / 700 % 2 ? LIST_HEAD : LIST_TAIL;
            while (m.n) {
                list_pop_discard(o, w);
                model_delete(&m, w == LIST_HEAD ? 0 : m.n - 1);
                int drained_ql = o->encoding == OBJ_ENC_QUICKLIST;
                list_try_shrink(o);
                if (drained_ql && o->encoding == OBJ_ENC_LISTPACK) saw_listpack_again = 1;
                if (m.n % 16 == 0) check_same(o, &m);
            }
            check_same(o, &m);
            /* An emptied list goes with its key: start a new one. */
            obj_decr_ref(o);
            o = list_object_create();
        }
    }
    printf("fill %lld: up to %zu elements in %zu nodes\n", fill, most, most_nodes);
    assert_true(saw_quicklist);
    assert_int_equal(saw_listpack_again, back);
    obj_decr_ref(o);
    model_clear(&m);
    assert_int_equal(zmalloc_used_memory(), before);
    list_max_listpack_size = saved;
}

static void test_random_count_limit(void **state) {
    (void)state;
    run_random(4, 1, 3000, 1);
}

static void test_random_small_byte_limit(void **state) {
    (void)state;
    run_random(-1, 1, 3000, 1);
}

static void test_random_default_limit(void **state) {
    (void)state;
    run_random(-2, 1, 2500, 1);
}

static void test_random_one_per_node(void **state) {
    (void)state;
    run_random(1, 0, 1500, 0);
}

/* ---- conversions at the thresholds ---------------------------------------------------- */

static void push_n(obj *o, int n, const char *prefix) {
    char b[32];
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)snprintf(b, sizeof(b), "%s%d", prefix, i);
        list_try_grow(o, len, 1);
        list_push(o, (unsigned char *)b, len, LIST_TAIL);
        assert_true(list_verify(o));
    }
}

/* Under a count limit of 4: listpack up to 4 elements, a quicklist at the
 * fifth; back to a listpack only once one node of at most 2 is left. */
static void test_count_limit_conversions(void **state) {
    (void)state;
    long long saved = list_max_listpack_size;
    list_max_listpack_size = 4;
    obj *o = list_object_create();
    push_n(o, 4, "e");
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    push_n(o, 1, "f");
    assert_int_equal(o->encoding, OBJ_ENC_QUICKLIST);
    assert_int_equal(list_node_count(o), 2);                               /* [e0 e1 e2 e3] [f0] */
    int want[] = {OBJ_ENC_QUICKLIST, OBJ_ENC_QUICKLIST, OBJ_ENC_LISTPACK}; /* at 4, 3, 2 */
    for (int i = 0; i < 3; i++) {
        list_pop_discard(o, LIST_TAIL);
        list_try_shrink(o);
        assert_true(list_verify(o));
        assert_int_equal(o->encoding, want[i]);
    }
    /* A batch is judged whole: 2 + 3 passes 4 before anything goes in. */
    list_try_grow(o, 3, 3);
    assert_int_equal(o->encoding, OBJ_ENC_QUICKLIST);
    assert_int_equal(list_node_count(o), 1); /* the listpack is the node */
    obj_decr_ref(o);
    list_max_listpack_size = saved;
}

/* Under -1 (4096 bytes): the list stays a listpack while its bytes plus
 * the new element's stay within 4096, converts when they would not, and
 * comes back once one node of at most 2048 bytes is left. */
static void test_byte_limit_conversions(void **state) {
    (void)state;
    long long saved = list_max_listpack_size;
    list_max_listpack_size = -1;
    char e[100];
    memset(e, 'x', sizeof(e));
    obj *o = list_object_create();
    int pushed = 0;
    while (o->encoding == OBJ_ENC_LISTPACK && pushed < 100) {
        size_t bytes_before = lp_bytes((unsigned char *)o->ptr);
        list_try_grow(o, sizeof(e), 1);
        if (o->encoding == OBJ_ENC_LISTPACK)
            assert_true(bytes_before + sizeof(e) <= 4096);
        else
            assert_true(bytes_before + sizeof(e) > 4096);
        list_push(o, (unsigned char *)e, sizeof(e), LIST_TAIL);
        pushed++;
        assert_true(list_verify(o));
    }
    assert_int_equal(o->encoding, OBJ_ENC_QUICKLIST);
    while (o->encoding == OBJ_ENC_QUICKLIST && list_length(o) > 0) {
        list_pop_discard(o, LIST_TAIL); /* the full first node shrinks */
        list_try_shrink(o);
        assert_true(list_verify(o));
    }
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    assert_true(lp_bytes((unsigned char *)o->ptr) <= 2048);
    /* one element more and it would have been over half the limit */
    assert_true(lp_bytes((unsigned char *)o->ptr) + sizeof(e) > 2048);
    obj_decr_ref(o);
    list_max_listpack_size = saved;
}

/* An element larger than a node may be takes a node of its own, which
 * nothing joins; setting or inserting one in a full node splits it. */
static void test_large_elements(void **state) {
    (void)state;
    long long saved = list_max_listpack_size;
    list_max_listpack_size = -2;
    obj *o = list_object_create();
    push_n(o, 3, "s");
    memset(bigbuf, 'B', 9000);
    list_try_grow(o, 9000, 1);
    assert_int_equal(o->encoding, OBJ_ENC_QUICKLIST);
    list_push(o, (unsigned char *)bigbuf, 9000, LIST_TAIL);
    push_n(o, 3, "t");
    assert_true(list_verify(o));
    assert_int_equal(list_node_count(o), 3);                    /* [s0 s1 s2] [B...] [t0 t1 t2] */
    assert_true(list_set(o, 1, (unsigned char *)bigbuf, 9000)); /* in the middle of the first node */
    assert_true(list_verify(o));
    assert_int_equal(list_length(o), 7);
    size_t len;
    unsigned char buf[LP_INTBUF_SIZE];
    assert_int_equal(*list_index(o, 0, &len, buf), 's');
    assert_int_equal(len, 2);
    list_index(o, 1, &len, buf);
    assert_int_equal(len, 9000);
    assert_memory_equal(list_index(o, 2, &len, buf), "s2", 2);
    assert_true(list_insert(o, (unsigned char *)"t1", 2, 0, (unsigned char *)bigbuf, 9000));
    assert_true(list_verify(o));
    assert_memory_equal(list_index(o, -4, &len, buf), "t0", 2);
    list_index(o, -3, &len, buf);
    assert_int_equal(len, 9000);
    assert_int_equal(list_length(o), 8);
    /* Deleting all but one small node brings the listpack back. */
    list_delete_range(o, 0, 7);
    list_try_shrink(o);
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    assert_true(list_verify(o));
    obj_decr_ref(o);
    list_max_listpack_size = saved;
}

/* A CONFIG SET that lowers the limit leaves a quicklist's nodes as they
 * were built (each quicklist keeps its fill), and they still verify. */
static void test_fill_kept_per_list(void **state) {
    (void)state;
    long long saved = list_max_listpack_size;
    list_max_listpack_size = 8;
    obj *o = list_object_create();
    push_n(o, 20, "k");
    assert_int_equal(list_node_count(o), 3);
    list_max_listpack_size = 2;
    assert_true(list_verify(o));
    push_n(o, 4, "m");
    assert_true(list_verify(o));
    obj_decr_ref(o);
    list_max_listpack_size = saved;
}

int main(void) {
    const char *env = getenv("SOLOIST_SEED");
    seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("test_list: seed %u (SOLOIST_SEED=%u replays it)\n", seed, seed);
    srand(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_limit_conversions), cmocka_unit_test(test_byte_limit_conversions),
        cmocka_unit_test(test_large_elements),          cmocka_unit_test(test_fill_kept_per_list),
        cmocka_unit_test(test_random_count_limit),      cmocka_unit_test(test_random_small_byte_limit),
        cmocka_unit_test(test_random_default_limit),    cmocka_unit_test(test_random_one_per_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
