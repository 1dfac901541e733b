/* test_object.c — string objects and integer parsing (step 0,
 * src/object.c). The parsing cases are what Redis 7.0's INCRBY accepts
 * and rejects (string2ll). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <malloc.h>
#include <string.h>

#include "object.h"
#include "zmalloc.h"

static int parse(const char *s, long long *out) { return str_to_ll(s, strlen(s), out); }

static void test_str_to_ll_accepts(void **state) {
    (void)state;
    long long v;
    assert_true(parse("0", &v));
    assert_int_equal(v, 0);
    assert_true(parse("1", &v));
    assert_int_equal(v, 1);
    assert_true(parse("-1", &v));
    assert_int_equal(v, -1);
    assert_true(parse("1234567890", &v));
    assert_int_equal(v, 1234567890);
    assert_true(parse("9223372036854775807", &v));
    assert_true(v == LLONG_MAX);
    assert_true(parse("-9223372036854775808", &v));
    assert_true(v == LLONG_MIN);
    /* Length-delimited: bytes after len are not looked at. */
    assert_true(str_to_ll("12abc", 2, &v));
    assert_int_equal(v, 12);
}

static void test_str_to_ll_rejects(void **state) {
    (void)state;
    long long v = 77;
    const char *bad[] = {"",
                         "-",
                         "-0",
                         "007",
                         "00",
                         "+1",
                         " 1",
                         "1 ",
                         "1.0",
                         "1e3",
                         "0x1",
                         "--1",
                         "1-",
                         "abc",
                         "\t1",
                         "9223372036854775808",
                         "-9223372036854775809",
                         "18446744073709551616",
                         "99999999999999999999",
                         "123456789012345678901"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (parse(bad[i], &v)) fail_msg("accepted \"%s\"", bad[i]);
    }
    assert_int_equal(v, 77); /* untouched on failure */
    assert_false(str_to_ll("1\0", 2, &v));
}

static void test_ll_to_str(void **state) {
    (void)state;
    char buf[32];
    assert_int_equal(ll_to_str(buf, 0), 1);
    assert_string_equal(buf, "0");
    ll_to_str(buf, -42);
    assert_string_equal(buf, "-42");
    assert_int_equal(ll_to_str(buf, LLONG_MAX), 19);
    assert_string_equal(buf, "9223372036854775807");
    assert_int_equal(ll_to_str(buf, LLONG_MIN), 20);
    assert_string_equal(buf, "-9223372036854775808");
    /* Round trip. */
    long long vals[] = {1, -1, 10, 99, 100, -1000, 123456789, LLONG_MAX - 1, LLONG_MIN + 1};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        long long back;
        size_t n = ll_to_str(buf, vals[i]);
        assert_true(str_to_ll(buf, n, &back));
        assert_true(back == vals[i]);
    }
}

static void test_obj_get_ll_and_ld(void **state) {
    (void)state;
    long long v;
    long double d;
    obj *o = obj_create_from_ll(-12345);
    assert_int_equal(o->len, 6);
    assert_true(obj_get_ll(o, &v));
    assert_int_equal(v, -12345);
    assert_true(obj_get_ld(o, &d));
    assert_true(d == -12345.0L);
    obj_decr_ref(o);

    const char *good[] = {"1.5", "5.0e3", "-0", "inf", "-inf", ".5", "1e-10"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        o = obj_create_string(good[i], strlen(good[i]));
        if (!obj_get_ld(o, &d)) fail_msg("rejected \"%s\"", good[i]);
        obj_decr_ref(o);
    }
    const char *bad[] = {"", " 1", "1 ", "nan", "abc", "1.5x", "1e99999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o = obj_create_string(bad[i], strlen(bad[i]));
        if (obj_get_ld(o, &d)) fail_msg("accepted \"%s\"", bad[i]);
        obj_decr_ref(o);
    }
}

/* obj_get_double: Valkey's getDoubleFromObject, decimal only. */
static void test_obj_get_double(void **state) {
    (void)state;
    const char *good[] = {"1.5", "-0", "inf", "-inf", "+inf", ".5", "1e-320", "7"};
    double d;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        obj *o = obj_create_string(good[i], strlen(good[i]));
        if (!obj_get_double(o, &d)) fail_msg("rejected \"%s\"", good[i]);
        obj_decr_ref(o);
    }
    const char *bad[] = {"", " 1", "\t1", "1 ", "nan", "-nan", "abc", "1.5x", "1e999", "0x10", "-0X1p4"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        obj *o = obj_create_string(bad[i], strlen(bad[i]));
        if (obj_get_double(o, &d)) fail_msg("accepted \"%s\"", bad[i]);
        obj_decr_ref(o);
    }
}

static void test_create_encodings(void **state) {
    (void)state;
    char big[OBJ_EMBSTR_MAX + 1];
    memset(big, 'x', sizeof(big));
    obj *e = obj_create_string(big, OBJ_EMBSTR_MAX);
    obj *r = obj_create_string(big, OBJ_EMBSTR_MAX + 1);
    assert_int_equal(e->encoding, OBJ_ENC_EMBSTR);
    assert_ptr_equal(e->ptr, e->embedded);
    assert_int_equal(r->encoding, OBJ_ENC_RAW);
    /* Both keep their bytes in the header's allocation; only the name
     * differs. obj_create_raw's bytes have their own. */
    assert_true(obj_bytes_inline(e));
    assert_true(obj_bytes_inline(r));
    assert_memory_equal(r->ptr, big, OBJ_EMBSTR_MAX + 1);
    obj *own = obj_create_raw(OBJ_EMBSTR_MAX + 1);
    assert_false(obj_bytes_inline(own));
    assert_int_equal(own->encoding, OBJ_ENC_RAW);
    obj_decr_ref(own);
    assert_int_equal(e->type, OBJ_STRING);
    assert_int_equal(e->refcount, 1);
    assert_int_equal(e->ptr[e->len], '\0');
    assert_int_equal(r->ptr[r->len], '\0');
    obj_incr_ref(r);
    assert_int_equal(r->refcount, 2);
    obj_decr_ref(r);
    assert_int_equal(r->refcount, 1);
    obj_decr_ref(r);
    obj_decr_ref(e);

    obj *z = obj_create_string("", 0);
    assert_int_equal(z->len, 0);
    assert_string_equal(z->ptr, "");
    obj_decr_ref(z);
}

static void test_string_resize(void **state) {
    (void)state;
    /* EMBSTR grows into a replacement RAW object holding the old bytes. */
    obj *o = obj_create_string("abc", 3);
    obj *g = obj_string_resize(o, 6);
    assert_int_equal(g->encoding, OBJ_ENC_RAW);
    assert_int_equal(g->len, 6);
    assert_int_equal(g->refcount, 1);
    assert_memory_equal(g->ptr, "abc\0\0\0", 7); /* zero-filled, NUL-terminated */

    /* RAW grows in place (same object). */
    obj *h = obj_string_resize(g, 100);
    assert_ptr_equal(h, g);
    assert_int_equal(h->len, 100);
    assert_memory_equal(h->ptr, "abc", 3);
    for (int i = 3; i <= 100; i++) assert_int_equal(h->ptr[i], 0);

    /* And shrinks, keeping the prefix. */
    h = obj_string_resize(h, 2);
    assert_int_equal(h->len, 2);
    assert_string_equal(h->ptr, "ab");
    obj_decr_ref(h);

    /* EMBSTR shrinking also yields RAW with the prefix. */
    o = obj_create_string("hello", 5);
    o = obj_string_resize(o, 2);
    assert_int_equal(o->len, 2);
    assert_string_equal(o->ptr, "he");
    obj_decr_ref(o);

    /* A RAW string whose bytes are inline is replaced by one whose bytes
     * have their own allocation, growing or shrinking, prefix kept. */
    char v[512];
    for (int i = 0; i < 512; i++) v[i] = (char)('a' + i % 26);
    obj *in = obj_create_string(v, sizeof(v));
    obj *grown = obj_string_resize(in, 600);
    assert_false(obj_bytes_inline(grown));
    assert_int_equal(grown->encoding, OBJ_ENC_RAW);
    assert_int_equal(grown->len, 600);
    assert_int_equal(grown->refcount, 1);
    assert_memory_equal(grown->ptr, v, sizeof(v));
    for (int i = 512; i <= 600; i++) assert_int_equal(grown->ptr[i], 0);
    obj_decr_ref(grown);
    in = obj_create_string(v, sizeof(v));
    obj *cut = obj_string_resize(in, 100);
    assert_false(obj_bytes_inline(cut));
    assert_int_equal(cut->len, 100);
    assert_memory_equal(cut->ptr, v, 100);
    assert_int_equal(cut->ptr[100], '\0');
    obj_decr_ref(cut);

    /* A raw object built for filling. */
    obj *raw = obj_create_raw(4);
    memcpy(raw->ptr, "wxyz", 4);
    assert_int_equal(raw->ptr[4], '\0');
    raw = obj_string_resize(raw, 5);
    assert_string_equal(raw->ptr, "wxyz");
    assert_int_equal(raw->len, 5);
    obj_decr_ref(raw);
}

static void test_no_leak(void **state) {
    (void)state;
    size_t before = zmalloc_used_memory();
    for (int i = 0; i < 1000; i++) {
        obj *o = obj_create_from_ll(i * 7919LL);
        o = obj_string_resize(o, (size_t)(i % 90));
        obj_decr_ref(o);
    }
    char v[300] = {0};
    for (int i = 0; i < 300; i++) { /* inline RAW strings, freed as made or after a resize */
        obj *o = obj_create_string(v, (size_t)i);
        if (i % 3 == 0) o = obj_string_resize(o, (size_t)(i + 7));
        obj_decr_ref(o);
    }
    assert_int_equal(zmalloc_used_memory(), before);
}

static void test_one_allocation_a_string(void **state) {
    (void)state;
    /* A 512-byte value costs one allocation, header and bytes together:
     * what zmalloc counts is that block's usable size and nothing else. */
    char v[512];
    memset(v, 'q', sizeof(v));
    size_t before = zmalloc_used_memory();
    obj *o = obj_create_string(v, sizeof(v));
    size_t used = zmalloc_used_memory() - before;
    assert_int_equal(used, malloc_usable_size(o));
    assert_true(used >= sizeof(obj) + sizeof(v) + 1);
    obj_decr_ref(o);
    assert_int_equal(zmalloc_used_memory(), before);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_str_to_ll_accepts),
        cmocka_unit_test(test_str_to_ll_rejects),
        cmocka_unit_test(test_ll_to_str),
        cmocka_unit_test(test_obj_get_ll_and_ld),
        cmocka_unit_test(test_obj_get_double),
        cmocka_unit_test(test_create_encodings),
        cmocka_unit_test(test_string_resize),
        cmocka_unit_test(test_no_leak),
        cmocka_unit_test(test_one_allocation_a_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
