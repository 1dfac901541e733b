/* test_hdr.c — the histogram against exact percentiles (soloist-bench).
 * Known data, sorted, gives the exact nearest-rank percentile; the
 * histogram's answer must never be below it and at most one slot
 * (< 0.1%) above it: 3 significant digits, as HdrHistogram promises. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "hdr.h"
#include "keyspace.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t exact_pct(const uint64_t *sorted, size_t n, double pct) {
    double want = pct / 100.0 * (double)n;
    want -= want * 1e-12;
    size_t rank = (size_t)want;
    if ((double)rank < want) rank++;
    if (rank < 1) rank = 1;
    return sorted[rank - 1];
}

static void check_against_exact(uint64_t *v, size_t n) {
    sb_hdr h;
    sb_hdr_init(&h, 1ULL << 42);
    for (size_t i = 0; i < n; i++) sb_hdr_record(&h, v[i]);
    qsort(v, n, sizeof(*v), cmp_u64);
    static const double pcts[] = {1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
        uint64_t e = exact_pct(v, n, pcts[i]);
        uint64_t got = sb_hdr_percentile(&h, pcts[i]);
        assert_true(got >= e);
        /* within one slot: width <= value/1024 */
        assert_true(got - e <= e / 1024);
    }
    assert_int_equal(h.total, n);
    assert_int_equal(h.min, v[0]);
    assert_int_equal(h.max, v[n - 1]);
    sb_hdr_free(&h);
}

static void test_exact_below_2048(void **state) {
    (void)state;
    /* Small values are recorded exactly: the percentiles are exact. */
    sb_hdr h;
    sb_hdr_init(&h, 1ULL << 42);
    for (uint64_t v = 1; v <= 1000; v++) sb_hdr_record(&h, v);
    assert_int_equal(sb_hdr_percentile(&h, 50), 500);
    assert_int_equal(sb_hdr_percentile(&h, 99), 990);
    assert_int_equal(sb_hdr_percentile(&h, 99.9), 999);
    assert_int_equal(sb_hdr_percentile(&h, 100), 1000);
    assert_true(fabs(sb_hdr_mean(&h) - 500.5) < 1e-9);
    sb_hdr_free(&h);
}

static void test_slot_arithmetic(void **state) {
    (void)state;
    /* Every value lies inside its own slot, and slots tile the line. */
    sb_rng r;
    sb_rng_seed(&r, 7);
    for (int i = 0; i < 200000; i++) {
        uint64_t v = sb_rng_next(&r) >> (sb_rng_next(&r) % 64);
        if (v > (1ULL << 42)) v >>= 22;
        size_t idx = sb_hdr_index(v);
        assert_true(sb_hdr_slot_lowest(idx) <= v);
        assert_true(v <= sb_hdr_slot_highest(idx));
        /* relative width: 3 significant digits */
        uint64_t w = sb_hdr_slot_highest(idx) - sb_hdr_slot_lowest(idx) + 1;
        assert_true(w == 1 || w * 1024 <= sb_hdr_slot_lowest(idx));
    }
    for (size_t idx = 0; idx < 40000; idx++)
        assert_int_equal(sb_hdr_slot_highest(idx) + 1, sb_hdr_slot_lowest(idx + 1));
}

static void test_uniform_data(void **state) {
    (void)state;
    size_t n = 100000;
    uint64_t *v = malloc(n * sizeof(*v));
    sb_rng r;
    sb_rng_seed(&r, 1);
    for (size_t i = 0; i < n; i++) v[i] = 20000 + sb_rng_below(&r, 2000000); /* 20 us .. 2 ms in ns */
    check_against_exact(v, n);
    free(v);
}

static void test_long_tail_data(void **state) {
    (void)state;
    /* A latency-like shape: lognormal body, a few huge outliers. */
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof(*v));
    sb_rng r;
    sb_rng_seed(&r, 2);
    for (size_t i = 0; i < n; i++) {
        double u1 = sb_rng_unit(&r) + 1e-12, u2 = sb_rng_unit(&r);
        double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        v[i] = (uint64_t)(50000.0 * exp(0.8 * z));
        if (i % 5000 == 0) v[i] = 30000000000ULL + i; /* 30 s stalls */
    }
    check_against_exact(v, n);
    free(v);
}

static void test_merge_equals_single(void **state) {
    (void)state;
    sb_hdr a, b, all;
    sb_hdr_init(&a, 1ULL << 42);
    sb_hdr_init(&b, 1ULL << 42);
    sb_hdr_init(&all, 1ULL << 42);
    sb_rng r;
    sb_rng_seed(&r, 3);
    for (int i = 0; i < 50000; i++) {
        uint64_t v = sb_rng_below(&r, 100000000);
        sb_hdr_record(i & 1 ? &a : &b, v);
        sb_hdr_record(&all, v);
    }
    sb_hdr_merge(&a, &b);
    assert_int_equal(a.total, all.total);
    assert_int_equal(a.sum, all.sum);
    assert_int_equal(a.max, all.max);
    for (double p = 1; p < 100; p += 0.7) assert_int_equal(sb_hdr_percentile(&a, p), sb_hdr_percentile(&all, p));
    sb_hdr_free(&a);
    sb_hdr_free(&b);
    sb_hdr_free(&all);
}

static void test_clamp_and_empty(void **state) {
    (void)state;
    sb_hdr h;
    sb_hdr_init(&h, 1000000);
    assert_int_equal(sb_hdr_percentile(&h, 99), 0);
    sb_hdr_record(&h, 5);
    sb_hdr_record(&h, 1ULL << 40); /* above highest: counted, not dropped */
    assert_int_equal(h.total, 2);
    assert_int_equal(h.clamped, 1);
    assert_int_equal(sb_hdr_percentile(&h, 100), 1ULL << 40);
    assert_int_equal(sb_hdr_percentile(&h, 50), 5);
    sb_hdr_reset(&h);
    assert_int_equal(h.total, 0);
    sb_hdr_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_below_2048), cmocka_unit_test(test_slot_arithmetic),
        cmocka_unit_test(test_uniform_data),     cmocka_unit_test(test_long_tail_data),
        cmocka_unit_test(test_merge_equals_single), cmocka_unit_test(test_clamp_and_empty),
    };
    return cmocka_run_group_tests_name("soloist-bench hdr", tests, NULL, NULL);
}
