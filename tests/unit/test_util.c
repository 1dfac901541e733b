/* test_util.c — glob matching, number formatting and memory parsing
 * (step 0, src/util.c). The expected values are what Redis 7.0 answers:
 * KEYS for the globs, INCRBYFLOAT for the long doubles, CONFIG SET for
 * the memory sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int m(const char *p, const char *s) { return util_string_match(p, s, 0); }
static int mi(const char *p, const char *s) { return util_string_match(p, s, 1); }

static void test_glob_basic(void **state) {
    (void)state;
    assert_true(m("*", "anything"));
    assert_true(m("h?llo", "hello"));
    assert_true(m("h?llo", "hallo"));
    assert_false(m("h?llo", "hllo"));
    assert_true(m("h*llo", "hllo"));
    assert_true(m("h*llo", "heeeello"));
    assert_true(m("a*b*c", "aXbYc"));
    assert_false(m("a*b*c", "aXbY"));
    assert_true(m("*ab", "aab")); /* needs the star to back off */
    assert_true(m("**a**", "a"));
    assert_false(m("abc", "abcd"));
    assert_false(m("abcd", "abc"));
    assert_true(m("", ""));
    assert_false(m("", "a"));
}

static void test_glob_classes(void **state) {
    (void)state;
    assert_true(m("h[ae]llo", "hello"));
    assert_true(m("h[ae]llo", "hallo"));
    assert_false(m("h[ae]llo", "hillo"));
    assert_true(m("h[^e]llo", "hallo"));
    assert_false(m("h[^e]llo", "hello"));
    assert_true(m("h[a-b]llo", "hbllo"));
    assert_true(m("h[b-a]llo", "hallo")); /* reversed range is swapped */
    assert_false(m("h[a-b]llo", "hcllo"));
    assert_true(m("[\\]]", "]")); /* escaped ']' inside a class */
    assert_false(m("[]]", "]"));  /* ']' right after '[' closes it */
    assert_true(m("[abc", "b"));  /* unterminated: class to the end */
    assert_false(m("[", "["));    /* empty unterminated class */
    assert_true(m("[^", "x"));    /* empty negated class: any byte */
    /* "a-]" is read as the range ']'..'a' (the ']' becomes the range's
     * end and the class is left unterminated), exactly as Redis does. */
    assert_false(m("[a-]", "-"));
    assert_true(m("[a-]", "^"));
    assert_true(m("[a-c-]", "-")); /* a trailing "-]" is a literal dash */
    assert_true(m("[-a]", "-"));   /* so is a leading one */
}

static void test_glob_escapes_and_empty(void **state) {
    (void)state;
    assert_true(m("\\*", "*"));
    assert_false(m("\\*", "a"));
    assert_true(m("\\?x", "?x"));
    assert_true(m("a\\", "a\\")); /* a lone trailing backslash is literal */
    assert_true(m("\\\\", "\\"));
    /* Redis's matcher: an empty string matches only an empty pattern
     * (KEYS "**" does not list the key ""). */
    assert_false(m("*", ""));
    assert_false(m("**", ""));
    assert_true(util_string_match_len("a\0b", 3, "a\0b", 3, 0)); /* binary safe */
    assert_false(util_string_match_len("a\0b", 3, "a\0c", 3, 0));
}

static void test_glob_nocase(void **state) {
    (void)state;
    assert_true(mi("HeLLo", "hello"));
    assert_false(m("HeLLo", "hello"));
    assert_true(mi("h[A-Z]llo", "hello"));
    assert_true(mi("h[E]llo", "hello"));
    assert_true(mi("MAXMEMORY*", "maxmemory-policy"));
    assert_true(mi("\\H*", "hi"));
    assert_false(mi("[\\H]", "h")); /* an escaped byte in a class is exact */
}

static void test_glob_long_star_run(void **state) {
    (void)state;
    /* Many stars and a near-miss: exponential for a naive recursion,
     * linear-ish here. */
    char pat[2001], str[2001];
    for (int i = 0; i < 1000; i++) {
        pat[2 * i] = '*';
        pat[2 * i + 1] = 'a';
    }
    pat[2000] = '\0';
    memset(str, 'a', 999);
    str[999] = '\0';
    assert_false(m(pat, str));
    memset(str, 'a', 1000);
    str[1000] = '\0';
    assert_true(m(pat, str));
}

static const char *ld(long double v) {
    static char buf[5200];
    size_t n = util_ld_to_string(buf, sizeof(buf), v);
    assert_true(n > 0);
    assert_int_equal(n, strlen(buf));
    return buf;
}

static void test_ld_to_string(void **state) {
    (void)state;
    /* INCRBYFLOAT cases from Redis's own tests and docs. */
    assert_string_equal(ld(10.5L + 0.1L), "10.6");
    assert_string_equal(ld(5.0e3L + 200), "5200");
    assert_string_equal(ld(10.50L), "10.5");
    assert_string_equal(ld(3.0L), "3");
    assert_string_equal(ld(0.0L), "0");
    assert_string_equal(ld(-0.0L), "0");
    assert_string_equal(ld(-1.5L), "-1.5");
    assert_string_equal(ld(17179869184.0L), "17179869184");
    assert_string_equal(ld(1.0e-18L), "0"); /* below %.17Lf's reach */
    assert_string_equal(ld(1.0e-17L), "0.00000000000000001");
    assert_string_equal(ld(INFINITY), "inf");
    assert_string_equal(ld(-INFINITY), "-inf");
    char small[4];
    assert_int_equal(util_ld_to_string(small, sizeof(small), 12345.0L), 0);
    assert_int_equal(util_ld_to_string(small, sizeof(small), INFINITY), 0);
}

static void test_d_to_string(void **state) {
    (void)state;
    char buf[64];
    assert_int_equal(util_d_to_string(buf, sizeof(buf), 1.5), 3);
    assert_string_equal(buf, "1.5");
    util_d_to_string(buf, sizeof(buf), 1.1);
    assert_string_equal(buf, "1.1"); /* shortest round-trip, as Valkey; Redis 7.0 said 1.1000000000000001 */
    util_d_to_string(buf, sizeof(buf), 0.1 + 0.2);
    assert_string_equal(buf, "0.30000000000000004");
    util_d_to_string(buf, sizeof(buf), 1e10);
    assert_string_equal(buf, "10000000000");
    util_d_to_string(buf, sizeof(buf), 1e17);
    assert_string_equal(buf, "1e+17");
    util_d_to_string(buf, sizeof(buf), 0.0001);
    assert_string_equal(buf, "0.0001");
    util_d_to_string(buf, sizeof(buf), 1.5e-5);
    assert_string_equal(buf, "1.5e-05");
    util_d_to_string(buf, sizeof(buf), -0.0);
    assert_string_equal(buf, "-0");
    util_d_to_string(buf, sizeof(buf), 123456789012.0);
    assert_string_equal(buf, "123456789012");
    util_d_to_string(buf, sizeof(buf), 100.0);
    assert_string_equal(buf, "100");
    util_d_to_string(buf, sizeof(buf), 1e300);
    assert_string_equal(buf, "1e+300");
    util_d_to_string(buf, sizeof(buf), -INFINITY);
    assert_string_equal(buf, "-inf");
    util_d_to_string(buf, sizeof(buf), INFINITY);
    assert_string_equal(buf, "inf");
    util_d_to_string(buf, sizeof(buf), NAN);
    assert_string_equal(buf, "nan");
}

/* The conversion as it was first written, the plainest statement of what
 * util_d_to_string must print: try 1 to 17 significant digits, keep the
 * first that reads back, lay it out as %.17g would. The fast one must
 * print the same bytes. */
static void d_to_string_by_search(char *buf, size_t len, double v) {
    if (isnan(v) || isinf(v)) {
        snprintf(buf, len, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    char tmp[40];
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(tmp, sizeof(tmp), "%.*e", digits - 1, v);
        if (strtod(tmp, NULL) == v) break;
    }
    snprintf(tmp, sizeof(tmp), "%.*e", digits - 1, v);
    int exp10 = atoi(strchr(tmp, 'e') + 1);
    if (exp10 < -4 || exp10 >= 17)
        snprintf(buf, len, "%s", tmp);
    else
        snprintf(buf, len, "%.*f", digits - 1 - exp10 > 0 ? digits - 1 - exp10 : 0, v);
}

/* A double from 64 random bits (any finite value, subnormals included),
 * or, one time in two, a "score-like" one: a short decimal or an integer. */
static double random_double(uint64_t *x) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17; /* xorshift64 */
    uint64_t r = *x;
    double d;
    switch (r & 3) {
    case 0: memcpy(&d, &r, sizeof(d)); return isfinite(d) ? d : 1.0;
    case 1: return (double)((int64_t)(r >> 8) >> (r >> 59)) / pow(10, (double)((r >> 4) % 8)); /* 0-7 decimals */
    case 2: return (double)((int64_t)r >> (r >> 58)); /* an integer of any size */
    default: return ldexp((double)(r >> 11), (int)((r >> 3) & 127) - 64);
    }
}

/* The plain build (suite 10) reads back a million doubles; under a
 * sanitizer, which finds a bad access the first time it happens, a
 * quarter of them keeps suite 20 short. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ROUND_TRIPS 250000
#else
#define ROUND_TRIPS 1000000
#endif

static void test_d_to_string_round_trips(void **state) {
    (void)state;
    char got[64], want[64];
    uint64_t x = 0x9e3779b97f4a7c15u;
    /* A million doubles read back exactly; the first 20,000 (the search
     * costs up to 17 tries each) also print as the search prints them. */
    for (int i = 0; i < ROUND_TRIPS; i++) {
        double v = random_double(&x);
        size_t n = util_d_to_string(got, sizeof(got), v);
        assert_true(n > 0 && n == strlen(got));
        if (strtod(got, NULL) != v || signbit(strtod(got, NULL)) != signbit(v))
            fail_msg("%.17g printed as %s, which reads back as %.17g", v, got, strtod(got, NULL));
        if (i < 20000) {
            d_to_string_by_search(want, sizeof(want), v);
            if (strcmp(got, want) != 0) fail_msg("%.17g printed as %s; the search prints %s", v, got, want);
        }
    }
    const double edges[] = {5e-324,
                            1e-310,
                            -3.5e-320,
                            2.225073858507201e-308,
                            -5e-324,
                            2.2250738585072014e-308,
                            1.7976931348623157e308,
                            1e16,
                            1e17 - 16,
                            9007199254740993.0,
                            1e-4,
                            9.999999999999999e-5,
                            0.1,
                            1e22,
                            123456789012345678.0};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        util_d_to_string(got, sizeof(got), edges[i]);
        d_to_string_by_search(want, sizeof(want), edges[i]);
        assert_string_equal(got, want);
    }
}

static void test_parse_memory(void **state) {
    (void)state;
    long long v = -1;
    assert_true(util_parse_memory("42", &v));
    assert_int_equal(v, 42);
    assert_true(util_parse_memory("100k", &v));
    assert_int_equal(v, 100000);
    assert_true(util_parse_memory("100kb", &v));
    assert_int_equal(v, 102400);
    assert_true(util_parse_memory("512mb", &v));
    assert_int_equal(v, 512LL * 1024 * 1024);
    assert_true(util_parse_memory("512MB", &v));
    assert_int_equal(v, 512LL * 1024 * 1024);
    assert_true(util_parse_memory("2m", &v));
    assert_int_equal(v, 2000000);
    assert_true(util_parse_memory("1gb", &v));
    assert_int_equal(v, 1024LL * 1024 * 1024);
    assert_true(util_parse_memory("1G", &v));
    assert_int_equal(v, 1000000000);
    assert_true(util_parse_memory("7b", &v));
    assert_int_equal(v, 7);
    assert_true(util_parse_memory("0", &v));
    assert_int_equal(v, 0);
    v = 99;
    assert_false(util_parse_memory("", &v));
    assert_false(util_parse_memory("-1", &v));
    assert_false(util_parse_memory("+1", &v));
    assert_false(util_parse_memory(" 1", &v));
    assert_false(util_parse_memory("1 mb", &v));
    assert_false(util_parse_memory("1tb", &v));
    assert_false(util_parse_memory("mb", &v));
    assert_false(util_parse_memory("99999999999999999999", &v));
    assert_false(util_parse_memory("9999999999gb", &v));
    assert_int_equal(v, 99); /* untouched on failure */
}

static void test_clocks(void **state) {
    (void)state;
    long long us = util_ustime(), ms = util_mstime();
    assert_true(us > 1600000000000000LL);
    assert_true(ms >= us / 1000 && ms - us / 1000 < 1000);
    uint64_t a = util_monotonic_ns(), b = util_monotonic_ns();
    assert_true(b >= a);
    assert_true(util_monotonic_us() >= a / 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob_basic),
        cmocka_unit_test(test_glob_classes),
        cmocka_unit_test(test_glob_escapes_and_empty),
        cmocka_unit_test(test_glob_nocase),
        cmocka_unit_test(test_glob_long_star_run),
        cmocka_unit_test(test_ld_to_string),
        cmocka_unit_test(test_d_to_string),
        cmocka_unit_test(test_d_to_string_round_trips),
        cmocka_unit_test(test_parse_memory),
        cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
