/* test_keyspace.c — key choice and value formats (soloist-bench).
 * The zipf sampler is checked against the exact law with a chi-square
 * test (fixed seeds, so the result is deterministic); keys and values
 * against their documented formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace.h"
#include "zmalloc.h"

/* Chi-square of `samples` draws against P(k) ~ k^-s over n ranks. */
static double zipf_chi2(uint64_t n, double s, int samples, uint64_t seed) {
    sb_zipf z;
    sb_rng r;
    sb_zipf_init(&z, n, s);
    sb_rng_seed(&r, seed);
    uint64_t *count = calloc(n, sizeof(*count));
    for (int i = 0; i < samples; i++) {
        uint64_t k = sb_zipf_next(&z, &r);
        assert_true(k < n);
        count[k]++;
    }
    double H = 0;
    for (uint64_t k = 1; k <= n; k++) H += pow((double)k, -s);
    double chi2 = 0;
    for (uint64_t k = 1; k <= n; k++) {
        double e = samples * pow((double)k, -s) / H;
        double d = (double)count[k - 1] - e;
        chi2 += d * d / e;
    }
    free(count);
    return chi2;
}

static void test_zipf_matches_law(void **state) {
    (void)state;
    /* 50 ranks, 49 degrees of freedom: chi2 > 85.4 has probability 0.001. */
    assert_true(zipf_chi2(50, 0.99, 300000, 11) < 85.4);
    assert_true(zipf_chi2(50, 1.0, 300000, 12) < 85.4);  /* s = 1: log form */
    assert_true(zipf_chi2(50, 1.5, 300000, 13) < 85.4);
    assert_true(zipf_chi2(50, 0.5, 300000, 14) < 85.4);
}

static void test_zipf_large_keyspace(void **state) {
    (void)state;
    /* 10M keys, no table: the top ranks get their exact shares. */
    uint64_t n = 10000000;
    double s = 0.99, H = 0;
    for (uint64_t k = 1; k <= n; k++) H += pow((double)k, -s);
    sb_zipf z;
    sb_rng r;
    sb_zipf_init(&z, n, s);
    sb_rng_seed(&r, 5);
    int samples = 400000;
    uint64_t top[4] = {0};
    for (int i = 0; i < samples; i++) {
        uint64_t k = sb_zipf_next(&z, &r);
        assert_true(k < n);
        if (k < 4) top[k]++;
    }
    for (int k = 0; k < 4; k++) {
        double e = samples * pow(k + 1.0, -s) / H;
        assert_true(fabs((double)top[k] - e) < 5 * sqrt(e)); /* 5 sigma */
    }
}

static void test_uniform_below(void **state) {
    (void)state;
    sb_rng r;
    sb_rng_seed(&r, 9);
    uint64_t count[10] = {0};
    for (int i = 0; i < 100000; i++) count[sb_rng_below(&r, 10)]++;
    for (int i = 0; i < 10; i++) assert_true(count[i] > 9500 && count[i] < 10500);
    for (int i = 0; i < 1000; i++) {
        double u = sb_rng_unit(&r);
        assert_true(u >= 0 && u < 1);
    }
}

static void test_key_format(void **state) {
    (void)state;
    char k[32];
    sb_key_format(k, 16, 'a', 42);
    assert_memory_equal(k, "a000000000000042", 16);
    sb_key_format(k, 4, 'c', 999);
    assert_memory_equal(k, "c999", 4);
    assert_true(sb_key_size_fits(4, 1000));   /* indexes 0..999 */
    assert_false(sb_key_size_fits(4, 1001));
    assert_true(sb_key_size_fits(16, 10000000));
    assert_false(sb_key_size_fits(1, 1));
}

static void test_value_pattern_not_shiftable(void **state) {
    (void)state;
    /* A value moved by any offset must not match itself: that is how a
     * torn or misaligned large reply is caught. */
    size_t n = 4096;
    char *p = sb_value_pattern(n);
    for (size_t i = 0; i < n; i++) assert_true(p[i] > ' ' && p[i] < 127);
    for (size_t d = 1; d < 1024; d++) assert_true(memcmp(p, p + d, n - 1024) != 0);
    zfree(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zipf_matches_law), cmocka_unit_test(test_zipf_large_keyspace),
        cmocka_unit_test(test_uniform_below),    cmocka_unit_test(test_key_format),
        cmocka_unit_test(test_value_pattern_not_shiftable),
    };
    return cmocka_run_group_tests_name("soloist-bench keyspace", tests, NULL, NULL);
}
