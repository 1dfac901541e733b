/* test_listpack.c — the compact block (src/listpack.c, keyspace layer).
 *
 * Every encoding at its edges (integers at each width's bounds, strings at
 * each length header's bounds, backlen at 1, 2 and 3 bytes), the bytes of
 * a few entries checked against the format listpack.c describes, and a
 * random walk of inserts, replaces and deletes compared with an array
 * model, lp_verify after every change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listpack.h"
#include "object.h"
#include "zmalloc.h"

/* The element at p, printed, as a malloc'd C string. */
static char *elem(const unsigned char *p) {
    unsigned char buf[LP_INTBUF_SIZE];
    size_t len;
    const unsigned char *s = lp_get_str(p, &len, buf);
    char *out = malloc(len + 1);
    memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

static unsigned char *push(unsigned char *lp, const char *s) {
    lp = lp_append(lp, (const unsigned char *)s, strlen(s));
    assert_true(lp_verify(lp));
    return lp;
}

static void assert_elem(const unsigned char *p, const char *want) {
    assert_non_null(p);
    char *got = elem(p);
    assert_string_equal(got, want);
    free(got);
}

static void test_empty_block(void **state) {
    (void)state;
    unsigned char *lp = lp_new();
    assert_int_equal(lp_bytes(lp), 7);
    assert_int_equal(lp_length(lp), 0);
    assert_null(lp_first(lp));
    assert_null(lp_last(lp));
    assert_null(lp_seek(lp, 0));
    assert_true(lp_verify(lp));
    lp_free(lp);
}

/* Each integer round-trips, is read back as an integer, and takes the
 * smallest encoding: the sizes are the format's. */
static void test_integer_widths(void **state) {
    (void)state;
    struct {
        long long v;
        size_t entry; /* encoding + data + backlen */
    } cases[] = {{0, 2},
                 {127, 2},
                 {128, 3},
                 {-1, 3},
                 {4095, 3},
                 {-4096, 3},
                 {4096, 4},
                 {-4097, 4},
                 {32767, 4},
                 {-32768, 4},
                 {32768, 5},
                 {8388607, 5},
                 {-8388608, 5},
                 {8388608, 6},
                 {2147483647, 6},
                 {-2147483648LL, 6},
                 {2147483648LL, 10},
                 {LLONG_MAX, 10},
                 {LLONG_MIN, 10}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char s[32];
        snprintf(s, sizeof(s), "%lld", cases[i].v);
        unsigned char *lp = push(lp_new(), s);
        assert_int_equal(lp_bytes(lp), 7 + cases[i].entry);
        size_t len;
        long long v = 0;
        assert_null(lp_get(lp_first(lp), &len, &v));
        assert_true(v == cases[i].v);
        assert_elem(lp_first(lp), s);
        lp_free(lp);
    }
}

/* Strings that are not canonical integers stay strings, byte for byte. */
static void test_non_canonical_numbers_stay_strings(void **state) {
    (void)state;
    const char *cases[] = {"007", "-0", "+1", " 1", "1.5", "9223372036854775808", ""};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char *lp = push(lp_new(), cases[i]);
        size_t len;
        long long v;
        const unsigned char *s = lp_get(lp_first(lp), &len, &v);
        assert_non_null(s);
        assert_int_equal(len, strlen(cases[i]));
        assert_memory_equal(s, cases[i], len);
        lp_free(lp);
    }
}

/* String headers at 63/64 and 4095/4096 bytes, and backlen at 127/128
 * and 16383/16384 bytes of body. */
static void test_string_lengths_and_backlen(void **state) {
    (void)state;
    struct {
        size_t len, hdr;
    } cases[] = {{1, 1},    {63, 1},    {64, 2},    {126, 2},   {127, 2},    {4095, 2},
                 {4096, 5}, {16378, 5}, {16379, 5}, {70000, 5}, {2000000, 5}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = cases[i].len, body = cases[i].hdr + len;
        size_t backlen = body < 128 ? 1 : body < 16384 ? 2 : body < 2097152 ? 3 : 4;
        char *s = malloc(len);
        for (size_t j = 0; j < len; j++) s[j] = (char)('a' + j % 26);
        unsigned char *lp = lp_new();
        lp = lp_append(lp, (const unsigned char *)"x", 1);
        lp = lp_append(lp, (const unsigned char *)s, len);
        lp = lp_append(lp, (const unsigned char *)"y", 1);
        assert_true(lp_verify(lp));
        assert_int_equal(lp_bytes(lp), 7 + 3 + body + backlen + 3);
        unsigned char *p = lp_prev(lp, lp_last(lp)); /* walked back over backlen */
        size_t got;
        long long v;
        const unsigned char *bytes = lp_get(p, &got, &v);
        assert_int_equal(got, len);
        assert_memory_equal(bytes, s, len);
        assert_elem(lp_prev(lp, p), "x");
        lp_free(lp);
        free(s);
    }
}

/* The bytes of three entries, as the format lays them out. */
static void test_bytes_on_the_wire(void **state) {
    (void)state;
    unsigned char *lp = lp_new();
    lp = push(lp, "5");
    lp = push(lp, "ab");
    lp = push(lp, "-2");
    const unsigned char want[] = {16,   0,    0,   0, 3, 0, /* total 16 bytes, 3 entries */
                                  0x05, 1,                  /* 7-bit uint 5, backlen 1 */
                                  0x82, 'a',  'b', 3,       /* 6-bit string of 2, backlen 3 */
                                  0xDF, 0xFE, 2,            /* 13-bit -2 (0x1FFE), backlen 2 */
                                  0xFF};
    assert_int_equal(lp_bytes(lp), sizeof(want));
    assert_memory_equal(lp, want, sizeof(want));
    lp_free(lp);
}

static void test_seek_insert_replace_delete(void **state) {
    (void)state;
    unsigned char *lp = lp_new();
    const char *v[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) lp = push(lp, v[i]);
    assert_elem(lp_seek(lp, 0), "a");
    assert_elem(lp_seek(lp, 4), "e");
    assert_elem(lp_seek(lp, -1), "e");
    assert_elem(lp_seek(lp, -5), "a");
    assert_null(lp_seek(lp, 5));
    assert_null(lp_seek(lp, -6));

    unsigned char *p = lp_seek(lp, 2);
    lp = lp_insert(lp, &p, LP_BEFORE, (const unsigned char *)"B2", 2);
    assert_true(lp_verify(lp));
    assert_elem(p, "B2");
    assert_elem(lp_next(lp, p), "c");
    p = lp_seek(lp, -1);
    lp = lp_insert(lp, &p, LP_AFTER, (const unsigned char *)"12345", 5);
    assert_elem(p, "12345");
    assert_null(lp_next(lp, p));
    lp = lp_prepend(lp, (const unsigned char *)"first", 5);
    assert_elem(lp_first(lp), "first");
    assert_int_equal(lp_length(lp), 8);

    p = lp_seek(lp, 1);
    lp = lp_replace(lp, &p, (const unsigned char *)"a much longer string than before", 32);
    assert_true(lp_verify(lp));
    assert_elem(p, "a much longer string than before");
    lp = lp_replace(lp, &p, (const unsigned char *)"7", 1);
    assert_true(lp_verify(lp));
    assert_elem(p, "7");

    p = lp_seek(lp, 0);
    lp = lp_delete(lp, &p);
    assert_true(lp_verify(lp));
    assert_elem(p, "7");
    p = lp_last(lp);
    lp = lp_delete(lp, &p);
    assert_null(p);
    lp = lp_delete_range(lp, 1, 2); /* b, B2 */
    assert_true(lp_verify(lp));
    const char *left[] = {"7", "c", "d", "e"};
    p = lp_first(lp);
    for (int i = 0; i < 4; i++, p = lp_next(lp, p)) assert_elem(p, left[i]);
    assert_null(p);
    lp = lp_delete_range(lp, -2, 100);
    assert_int_equal(lp_length(lp), 2);
    assert_true(lp_verify(lp));
    lp_free(lp);
}

static void test_find_and_equals(void **state) {
    (void)state;
    unsigned char *lp = lp_new();
    const char *kv[] = {"f1", "v1", "10", "20", "f3", "f1", "x", "10"};
    for (int i = 0; i < 8; i++) lp = push(lp, kv[i]);
    /* skip 1: fields only, so the value "f1" is not a field. */
    unsigned char *p = lp_find(lp, lp_first(lp), (const unsigned char *)"f1", 2, 1);
    assert_true(p == lp_first(lp));
    p = lp_find(lp, lp_next(lp, lp_next(lp, p)), (const unsigned char *)"f1", 2, 1);
    assert_null(p);
    p = lp_find(lp, lp_first(lp), (const unsigned char *)"10", 2, 1);
    assert_true(p == lp_seek(lp, 2));
    assert_true(lp_equals(p, (const unsigned char *)"10", 2));
    assert_false(lp_equals(p, (const unsigned char *)"010", 3));
    assert_false(lp_equals(p, (const unsigned char *)"1", 1));
    /* skip 0 finds the value too; a miss is NULL. */
    assert_true(lp_find(lp, lp_first(lp), (const unsigned char *)"x", 1, 0) == lp_seek(lp, 6));
    assert_null(lp_find(lp, lp_first(lp), (const unsigned char *)"nope", 4, 0));
    assert_null(lp_find(lp, lp_first(lp), (const unsigned char *)"11", 2, 0));
    lp_free(lp);
}

/* A block of n entries "7" (each 0x07 and a backlen of 1), laid out by
 * hand: appending 70,000 entries one by one would realloc the block
 * 70,000 times, which the sanitizer builds pay for with a full copy each. */
static unsigned char *block_of_sevens(size_t n) {
    size_t bytes = 6 + 2 * n + 1;
    unsigned char *lp = zmalloc(bytes);
    lp[0] = (unsigned char)bytes, lp[1] = (unsigned char)(bytes >> 8), lp[2] = (unsigned char)(bytes >> 16);
    lp[3] = (unsigned char)(bytes >> 24);
    size_t count = n < 65535 ? n : 65535;
    lp[4] = (unsigned char)count, lp[5] = (unsigned char)(count >> 8);
    for (size_t i = 0; i < n; i++) lp[6 + 2 * i] = 7, lp[7 + 2 * i] = 1;
    lp[bytes - 1] = 0xFF;
    return lp;
}

/* At 65535 entries the header's count says "unknown": lp_length walks,
 * and the count stays unknown when the block shrinks again. */
static void test_count_past_the_header(void **state) {
    (void)state;
    unsigned char *lp = block_of_sevens(65534);
    assert_true(lp_verify(lp));
    assert_int_equal(lp_length(lp), 65534);
    assert_int_equal(lp[4] | lp[5] << 8, 65534);
    lp = lp_append(lp, (const unsigned char *)"last", 4); /* the 65535th */
    assert_int_equal(lp[4] | lp[5] << 8, 65535);
    assert_true(lp_verify(lp));
    assert_int_equal(lp_length(lp), 65535);
    assert_elem(lp_seek(lp, 65534), "last");
    assert_elem(lp_seek(lp, -1), "last");
    lp_free(lp);

    lp = block_of_sevens(70000);
    assert_true(lp_verify(lp));
    assert_int_equal(lp_length(lp), 70000);
    lp = lp_prepend(lp, (const unsigned char *)"first", 5);
    assert_int_equal(lp_length(lp), 70001);
    assert_elem(lp_first(lp), "first");
    assert_elem(lp_seek(lp, 70000), "7");
    lp = lp_delete_range(lp, 0, 10001);
    assert_int_equal(lp[4] | lp[5] << 8, 65535); /* no walk to recount */
    assert_int_equal(lp_length(lp), 60000);
    assert_true(lp_verify(lp));
    lp_free(lp);
}

/* A random walk against an array model. */
#define MODEL_MAX 300
static void test_random_walk_against_a_model(void **state) {
    (void)state;
    unsigned seed = 12345;
    char *model[MODEL_MAX];
    size_t n = 0;
    unsigned char *lp = lp_new();
    for (int step = 0; step < 20000; step++) {
        unsigned r = (unsigned)rand_r(&seed);
        char s[96];
        switch (r % 4) {
        case 0: snprintf(s, sizeof(s), "%d", (int)(rand_r(&seed) % 100000) - 50000); break;
        case 1:
            snprintf(s, sizeof(s), "%lld", (long long)((unsigned long long)rand_r(&seed) * rand_r(&seed) * 3));
            break;
        default: {
            size_t len = (size_t)rand_r(&seed) % 80;
            for (size_t j = 0; j < len; j++) s[j] = (char)('a' + rand_r(&seed) % 26);
            s[len] = '\0';
        }
        }
        unsigned op = (unsigned)rand_r(&seed) % 4;
        if (n == 0 || (op <= 1 && n < MODEL_MAX)) {
            size_t at = n ? (size_t)rand_r(&seed) % (n + 1) : 0;
            if (at == n) {
                lp = lp_append(lp, (const unsigned char *)s, strlen(s));
            } else {
                unsigned char *p = lp_seek(lp, (long)at);
                lp = lp_insert(lp, &p, LP_BEFORE, (const unsigned char *)s, strlen(s));
            }
            memmove(&model[at + 1], &model[at], (n - at) * sizeof(char *));
            model[at] = strdup(s);
            n++;
        } else if (op == 2) {
            size_t at = (size_t)rand_r(&seed) % n;
            unsigned char *p = lp_seek(lp, (long)at);
            lp = lp_replace(lp, &p, (const unsigned char *)s, strlen(s));
            free(model[at]);
            model[at] = strdup(s);
        } else {
            size_t at = (size_t)rand_r(&seed) % n;
            unsigned char *p = lp_seek(lp, (long)at);
            lp = lp_delete(lp, &p);
            free(model[at]);
            memmove(&model[at], &model[at + 1], (n - at - 1) * sizeof(char *));
            n--;
        }
        assert_true(lp_verify(lp));
        assert_int_equal(lp_length(lp), n);
        if (step % 97 == 0) {
            size_t i = 0;
            for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p), i++) assert_elem(p, model[i]);
            assert_int_equal(i, n);
            i = n;
            for (unsigned char *p = lp_last(lp); p; p = lp_prev(lp, p)) assert_elem(p, model[--i]);
            assert_int_equal(i, 0);
        }
    }
    for (size_t i = 0; i < n; i++) free(model[i]);
    lp_free(lp);
}

/* lp_verify catches a broken block. */
static void test_verify_catches_damage(void **state) {
    (void)state;
    unsigned char *lp = lp_new();
    lp = push(lp, "hello");
    lp = push(lp, "7");
    lp[4] = 3; /* count says 3 */
    assert_false(lp_verify(lp));
    lp[4] = 2;
    assert_true(lp_verify(lp));
    lp[6 + 7 - 1] = 9; /* "hello"'s backlen */
    assert_false(lp_verify(lp));
    lp[6 + 7 - 1] = 6;
    assert_true(lp_verify(lp));
    lp[6] = 0x81; /* a 1-byte string where 5 bytes stand: the walk goes astray */
    assert_false(lp_verify(lp));
    lp_free(lp);
    /* A string entry holding a canonical integer breaks invariant 4. */
    lp = push(lp_new(), "ab");
    lp[7] = '4';
    lp[8] = '2';
    assert_false(lp_verify(lp));
    lp_free(lp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_block),
        cmocka_unit_test(test_integer_widths),
        cmocka_unit_test(test_non_canonical_numbers_stay_strings),
        cmocka_unit_test(test_string_lengths_and_backlen),
        cmocka_unit_test(test_bytes_on_the_wire),
        cmocka_unit_test(test_seek_insert_replace_delete),
        cmocka_unit_test(test_find_and_equals),
        cmocka_unit_test(test_count_past_the_header),
        cmocka_unit_test(test_random_walk_against_a_model),
        cmocka_unit_test(test_verify_catches_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
