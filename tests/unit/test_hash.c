/* test_hash.c — the hash type (src/hash.c) in both encodings.
 *
 * Each test drives hash.c directly and calls hash_verify after every
 * change: the listpack while it is within its limits, the conversion at
 * each limit (one field too many, a field or a value one byte too long,
 * too many pairs coming at once), the table's entries as values grow and
 * shrink in place, iteration, the four HRANDFIELD sampling cases, scans,
 * COPY's deep copy, and a bounded randomized run against a plain model.
 * The limits are set per test and put back to Valkey's defaults after.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "listpack.h"
#include "zmalloc.h"

#define S(s) s, strlen(s)

static void set_limits(long long entries, long long value) {
    hash_max_listpack_entries = entries;
    hash_max_listpack_value = value;
}

static int restore_limits(void **state) {
    (void)state;
    set_limits(512, 64); /* Valkey's defaults */
    return 0;
}

static void check_value(obj *o, const char *field, const char *want) {
    char buf[HASH_NUMBUF];
    size_t vlen;
    const char *v = hash_get(o, field, strlen(field), &vlen, buf);
    if (!want) {
        assert_null(v);
        return;
    }
    assert_non_null(v);
    assert_int_equal(vlen, strlen(want));
    assert_memory_equal(v, want, vlen);
}

/* ---- the listpack ---------------------------------------------------------------- */

static void test_listpack_basics(void **state) {
    (void)state;
    obj *o = hash_object_create();
    assert_int_equal(o->type, OBJ_HASH);
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    assert_int_equal(hash_length(o), 0);
    assert_true(hash_verify(o));
    assert_int_equal(hash_set(o, S("a"), S("1")), 1);
    assert_int_equal(hash_set(o, S("b"), S("hello")), 1);
    assert_int_equal(hash_set(o, S("a"), S("-17")), 0);
    assert_int_equal(hash_set(o, S(""), S("")), 1);
    assert_int_equal(hash_set(o, S("n"), S("-9223372036854775808")), 1);
    assert_int_equal(hash_set(o, S("z"), S("007")), 1);
    assert_true(hash_verify(o));
    assert_int_equal(hash_length(o), 5);
    check_value(o, "a", "-17");
    check_value(o, "b", "hello");
    check_value(o, "", "");
    check_value(o, "n", "-9223372036854775808");
    check_value(o, "z", "007");
    check_value(o, "x", NULL);
    assert_true(hash_exists(o, S("b")));
    assert_false(hash_exists(o, S("x")));
    assert_int_equal(hash_value_len(o, S("n")), 20);
    assert_int_equal(hash_value_len(o, S("x")), 0);

    /* Insertion order, values beside their fields, a replaced value in place. */
    const char *order[] = {"a", "-17", "b", "hello", "", "", "n", "-9223372036854775808", "z", "007"};
    hash_iter it;
    hash_pair p;
    size_t i = 0;
    hash_iter_init(&it, o);
    while (hash_iter_next(&it, &p)) {
        assert_true(i < 10);
        assert_int_equal(p.flen, strlen(order[i]));
        assert_memory_equal(p.field, order[i], p.flen);
        assert_int_equal(p.vlen, strlen(order[i + 1]));
        assert_memory_equal(p.value, order[i + 1], p.vlen);
        i += 2;
    }
    hash_iter_reset(&it);
    assert_int_equal(i, 10);

    assert_int_equal(hash_delete(o, S("b")), 1);
    assert_true(hash_verify(o));
    assert_int_equal(hash_delete(o, S("b")), 0);
    assert_int_equal(hash_delete(o, S("z")), 1); /* the last pair */
    assert_int_equal(hash_delete(o, S("a")), 1); /* the first */
    assert_true(hash_verify(o));
    assert_int_equal(hash_length(o), 2);
    check_value(o, "n", "-9223372036854775808");
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    obj_decr_ref(o);
}

/* hash_verify itself: each listpack invariant, broken by hand, is caught. */
static void test_verify_catches_broken_listpacks(void **state) {
    (void)state;
    set_limits(4, 8);
    obj *o = hash_object_create();
    hash_set(o, S("a"), S("1"));
    hash_set(o, S("b"), S("2"));
    assert_true(hash_verify(o));
    unsigned char *lp = (unsigned char *)o->ptr;
    o->ptr = (char *)lp_append(lp, (const unsigned char *)"c", 1); /* L1: a field without its value */
    assert_false(hash_verify(o));
    o->ptr = (char *)lp_append((unsigned char *)o->ptr, (const unsigned char *)"3", 1);
    assert_true(hash_verify(o));
    lp = lp_append((unsigned char *)o->ptr, (const unsigned char *)"a", 1); /* L2: "a" twice */
    o->ptr = (char *)lp_append(lp, (const unsigned char *)"9", 1);
    assert_false(hash_verify(o));
    o->ptr = (char *)lp_delete_range((unsigned char *)o->ptr, -2, 2);
    assert_true(hash_verify(o));
    lp = lp_append((unsigned char *)o->ptr, (const unsigned char *)"d", 1); /* L3: a value too long */
    o->ptr = (char *)lp_append(lp, (const unsigned char *)"123456789", 9);
    assert_false(hash_verify(o));
    o->ptr = (char *)lp_delete_range((unsigned char *)o->ptr, -2, 2);
    hash_set(o, S("d"), S("4"));
    assert_true(hash_verify(o));
    lp = lp_append((unsigned char *)o->ptr, (const unsigned char *)"e", 1); /* L3: a fifth field */
    o->ptr = (char *)lp_append(lp, (const unsigned char *)"5", 1);
    assert_false(hash_verify(o));
    obj_decr_ref(o);
}

/* ---- the conversion at each limit ---------------------------------------------------- */

static void test_convert_on_entries(void **state) {
    (void)state;
    set_limits(4, 64);
    obj *o = hash_object_create();
    char f[16], v[16];
    for (int i = 0; i < 4; i++) {
        snprintf(f, sizeof(f), "f%d", i);
        snprintf(v, sizeof(v), "%d", i * 10);
        hash_set(o, S(f), S(v));
        assert_true(hash_verify(o));
        assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    }
    hash_set(o, S("f0"), S("again")); /* an update adds no field */
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    hash_set(o, S("f4"), S("40")); /* the fifth field */
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_true(hash_verify(o));
    assert_int_equal(hash_length(o), 5);
    check_value(o, "f0", "again");
    check_value(o, "f3", "30");
    check_value(o, "f4", "40");
    /* One way: emptied to one field, it stays a table. */
    for (int i = 0; i < 4; i++) {
        snprintf(f, sizeof(f), "f%d", i);
        assert_int_equal(hash_delete(o, S(f)), 1);
        assert_true(hash_verify(o));
    }
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_int_equal(hash_length(o), 1);
    obj_decr_ref(o);
}

static void test_convert_on_value_and_field_length(void **state) {
    (void)state;
    set_limits(128, 8);
    obj *o = hash_object_create();
    hash_set(o, S("a"), S("12345678")); /* exactly the limit */
    hash_set(o, S("abcdefgh"), S("x"));
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    assert_true(hash_verify(o));
    hash_set(o, S("b"), S("123456789")); /* one byte past */
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_true(hash_verify(o));
    check_value(o, "a", "12345678");
    check_value(o, "b", "123456789");
    obj_decr_ref(o);

    o = hash_object_create();
    hash_set(o, S("a"), S("1"));
    hash_set(o, S("abcdefghi"), S("1")); /* a field one byte past */
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_true(hash_verify(o));
    check_value(o, "a", "1");
    check_value(o, "abcdefghi", "1");
    obj_decr_ref(o);
}

static void test_try_conversion(void **state) {
    (void)state;
    set_limits(2, 8);
    obj *args[6];
    const char *s[6] = {"a", "1", "a", "2", "a", "3"};
    for (int i = 0; i < 6; i++) args[i] = obj_create_string(s[i], strlen(s[i]));
    obj *o = hash_object_create();
    hash_try_conversion(o, args, 0, 3); /* two pairs: within the limit */
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    hash_try_conversion(o, args, 0, 5); /* three pairs, repeats counted */
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_true(hash_verify(o));
    obj_decr_ref(o);

    o = hash_object_create();
    obj_decr_ref(args[3]);
    args[3] = obj_create_string("123456789", 9);
    hash_try_conversion(o, args, 0, 1);
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    hash_try_conversion(o, args, 2, 3); /* a value past the limit */
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_true(hash_verify(o));
    obj_decr_ref(o);
    for (int i = 0; i < 6; i++) obj_decr_ref(args[i]);
}

/* ---- the table's entries --------------------------------------------------------------- */

static void test_table_values_grow_and_shrink(void **state) {
    (void)state;
    set_limits(0, 64); /* a table from the first field */
    obj *o = hash_object_create();
    hash_set(o, S("f"), S("v"));
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    static char big[70000];
    for (size_t len = 0; len < sizeof(big); len = len * 3 + 1) {
        memset(big, 'a' + (int)(len % 26), len);
        assert_int_equal(hash_set(o, S("f"), big, len), 0);
        assert_true(hash_verify(o));
        char buf[HASH_NUMBUF];
        size_t vlen;
        const char *v = hash_get(o, S("f"), &vlen, buf);
        assert_int_equal(vlen, len);
        assert_memory_equal(v, big, len);
    }
    assert_int_equal(hash_set(o, S("f"), S("")), 0); /* and back to nothing */
    check_value(o, "f", "");
    /* Fields of every varint size, a field with a NUL in it. */
    memset(big, 'k', 200);
    hash_set(o, big, 127, S("x"));
    hash_set(o, big, 128, S("y"));
    hash_set(o, big, 200, big, 16384);
    hash_set(o, "a\0b", 3, "c\0d", 3);
    assert_true(hash_verify(o));
    assert_int_equal(hash_length(o), 5);
    assert_int_equal(hash_value_len(o, big, 200), 16384);
    assert_int_equal(hash_value_len(o, "a\0b", 3), 3);
    assert_false(hash_exists(o, "a\0c", 3));
    assert_int_equal(hash_delete(o, big, 128), 1);
    assert_true(hash_verify(o));
    check_value(o, "f", "");
    obj_decr_ref(o);
}

/* ---- copies, scans and sampling ---------------------------------------------------------- */

static obj *make_hash(int n) {
    obj *o = hash_object_create();
    char f[16], v[16];
    for (int i = 0; i < n; i++) {
        snprintf(f, sizeof(f), "f%d", i);
        snprintf(v, sizeof(v), "%d", i);
        hash_set(o, S(f), S(v));
    }
    assert_true(hash_verify(o));
    return o;
}

/* Counts pairs per field index (f<i> holds <i>), checking each pair. */
typedef struct tally {
    int n;
    int seen[512];
    size_t calls;
    long last; /* for the listpack's ordered sample */
    int ordered;
} tally;

static void tally_pair(void *arg, const hash_pair *p) {
    tally *t = arg;
    char f[16], v[16];
    assert_true(p->flen > 1 && p->flen < sizeof(f) && p->vlen < sizeof(v));
    memcpy(f, p->field, p->flen);
    f[p->flen] = '\0';
    memcpy(v, p->value, p->vlen);
    v[p->vlen] = '\0';
    long i = strtol(f + 1, NULL, 10);
    assert_true(i >= 0 && i < t->n);
    assert_int_equal(i, strtol(v, NULL, 10));
    if (i <= t->last) t->ordered = 0;
    t->last = i;
    t->seen[i]++;
    t->calls++;
}

static void tally_reset(tally *t, int n) {
    memset(t, 0, sizeof(*t));
    t->n = n;
    t->last = -1;
    t->ordered = 1;
}

static void check_sampling(obj *o, int n) {
    tally t;
    long long counts[] = {0, 1, 2, n / 3, n / 3 + 1, n / 2, n - 1, n, n + 5, -1, -7, -(long long)n * 3};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        long long count = counts[c];
        tally_reset(&t, n);
        size_t got = hash_random_pairs(o, count, tally_pair, &t);
        size_t want = count < 0 ? (size_t)-count : (size_t)(count < n ? count : n);
        assert_int_equal(got, want);
        assert_int_equal(t.calls, want);
        if (count >= 0)
            for (int i = 0; i < n; i++) assert_true(t.seen[i] <= 1); /* distinct */
        if (count > 0 && o->encoding == OBJ_ENC_LISTPACK) assert_true(t.ordered);
    }
    hash_pair p;
    char fb[HASH_NUMBUF], vb[HASH_NUMBUF];
    assert_true(hash_random_pair(o, &p, fb, vb));
    tally_reset(&t, n);
    tally_pair(&t, &p);
    assert_true(hash_verify(o));
}

static void check_scan(obj *o, int n) {
    tally t;
    tally_reset(&t, n);
    size_t cursor = 0;
    int calls = 0;
    do {
        cursor = hash_scan(o, cursor, tally_pair, &t);
        assert_true(++calls < 100000);
    } while (cursor);
    for (int i = 0; i < n; i++) assert_true(t.seen[i] >= 1);
    if (o->encoding == OBJ_ENC_LISTPACK) assert_int_equal(calls, 1); /* whole, cursor 0 back */
}

static void test_sampling_scan_and_dup(void **state) {
    (void)state;
    set_limits(64, 64);
    for (int n = 1; n <= 300; n = n * 2 + 7) {
        obj *o = make_hash(n);
        assert_int_equal(o->encoding, n <= 64 ? OBJ_ENC_LISTPACK : OBJ_ENC_HT);
        check_sampling(o, n);
        check_scan(o, n);
        obj *d = hash_object_dup(o);
        assert_int_equal(d->encoding, o->encoding);
        assert_true(hash_verify(d));
        assert_int_equal(hash_length(d), (size_t)n);
        hash_set(d, S("f0"), S("changed")); /* deep: the original keeps its value */
        check_value(o, "f0", "0");
        check_value(d, "f0", "changed");
        obj_decr_ref(d);
        obj_decr_ref(o);
    }
    obj *o = hash_object_create();
    tally t;
    tally_reset(&t, 1);
    assert_int_equal(hash_random_pairs(o, -5, tally_pair, &t), 0);
    hash_pair p;
    char fb[HASH_NUMBUF], vb[HASH_NUMBUF];
    assert_false(hash_random_pair(o, &p, fb, vb));
    obj_decr_ref(o);
}

static void test_memory_returns(void **state) {
    (void)state;
    size_t before = zmalloc_used_memory();
    set_limits(16, 16);
    obj *o = make_hash(200);
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    hash_set(o, S("f1"), S("a much longer value than before"));
    obj *d = hash_object_dup(o);
    obj_decr_ref(o);
    obj_decr_ref(d);
    assert_int_equal(zmalloc_used_memory(), before);
}

/* ---- a randomized run against a model --------------------------------------------------- */

#define MODEL_FIELDS 96

typedef struct model {
    int present[MODEL_FIELDS];
    char value[MODEL_FIELDS][80];
    size_t vlen[MODEL_FIELDS];
} model;

static void field_name(int i, char *buf, size_t *len) {
    /* Short names, a few long ones (past the value limit), some integers. */
    if (i % 11 == 0)
        *len = (size_t)snprintf(buf, 64, "%d", i * 1000);
    else if (i % 17 == 0)
        *len = (size_t)snprintf(buf, 64, "a-long-field-name-%d-xxxxxxxxxx", i);
    else
        *len = (size_t)snprintf(buf, 64, "f%d", i);
}

static void compare_with_model(obj *o, const model *m) {
    size_t n = 0;
    for (int i = 0; i < MODEL_FIELDS; i++) {
        char f[64], buf[HASH_NUMBUF];
        size_t flen, vlen;
        field_name(i, f, &flen);
        const char *v = hash_get(o, f, flen, &vlen, buf);
        if (!m->present[i]) {
            assert_null(v);
            continue;
        }
        n++;
        assert_non_null(v);
        assert_int_equal(vlen, m->vlen[i]);
        assert_memory_equal(v, m->value[i], vlen);
    }
    assert_int_equal(hash_length(o), n);
    hash_iter it;
    hash_pair p;
    size_t walked = 0;
    hash_iter_init(&it, o);
    while (hash_iter_next(&it, &p)) walked++;
    hash_iter_reset(&it);
    assert_int_equal(walked, n);
}

static void test_random_against_model(void **state) {
    (void)state;
    srandom(12345);
    for (int round = 0; round < 6; round++) {
        set_limits(round % 3 == 0 ? 8 : 64, round % 2 ? 16 : 40);
        model m;
        memset(&m, 0, sizeof(m));
        obj *o = hash_object_create();
        int saw_listpack = 0, saw_table = 0;
        for (int step = 0; step < 3000; step++) {
            int i = (int)(random() % MODEL_FIELDS);
            char f[64];
            size_t flen;
            field_name(i, f, &flen);
            int op = (int)(random() % 10);
            if (op < 6) {
                size_t vlen = (size_t)(random() % 4 ? random() % 12 : random() % 60);
                char v[80];
                if (random() % 3 == 0)
                    vlen = (size_t)snprintf(v, sizeof(v), "%ld", random() - RAND_MAX / 2);
                else
                    for (size_t k = 0; k < vlen; k++) v[k] = (char)('a' + random() % 26);
                assert_int_equal(hash_set(o, f, flen, v, vlen), !m.present[i]);
                m.present[i] = 1;
                memcpy(m.value[i], v, vlen);
                m.vlen[i] = vlen;
            } else {
                assert_int_equal(hash_delete(o, f, flen), m.present[i]);
                m.present[i] = 0;
            }
            if (o->encoding == OBJ_ENC_LISTPACK)
                saw_listpack = 1;
            else
                saw_table = 1;
            if (!hash_verify(o)) fail_msg("round %d step %d", round, step);
            if (step % 50 == 0) compare_with_model(o, &m);
        }
        compare_with_model(o, &m);
        assert_true(saw_listpack && saw_table);
        obj_decr_ref(o);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_listpack_basics, restore_limits),
        cmocka_unit_test_teardown(test_verify_catches_broken_listpacks, restore_limits),
        cmocka_unit_test_teardown(test_convert_on_entries, restore_limits),
        cmocka_unit_test_teardown(test_convert_on_value_and_field_length, restore_limits),
        cmocka_unit_test_teardown(test_try_conversion, restore_limits),
        cmocka_unit_test_teardown(test_table_values_grow_and_shrink, restore_limits),
        cmocka_unit_test_teardown(test_sampling_scan_and_dup, restore_limits),
        cmocka_unit_test_teardown(test_memory_returns, restore_limits),
        cmocka_unit_test_teardown(test_random_against_model, restore_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
