/* test_intset.c — the sorted integer array (src/intset.c).
 *
 * Fixed cases for each width and each upgrade (a member that needs more
 * bytes, below every member or above every member), then random adds
 * and removes against a reference model (a plain sorted array), with
 * intset_verify after every change. The seed is printed; SOLOIST_SEED=N
 * replays a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "intset.h"
#include "zmalloc.h"

static void test_widths_and_upgrades(void **state) {
    (void)state;
    intset *is = intset_new();
    int added, removed;
    assert_int_equal(intset_len(is), 0);
    assert_int_equal(intset_width(is), 2);
    assert_int_equal(intset_bytes(is), 4);
    assert_false(intset_find(is, 0));
    is = intset_add(is, 5, &added);
    assert_true(added);
    is = intset_add(is, -3, &added);
    is = intset_add(is, 5, &added);
    assert_false(added);
    assert_true(intset_verify(is));
    assert_int_equal(intset_len(is), 2);
    assert_int_equal(intset_bytes(is), 4 + 2 * 2);
    /* Above every member: widened to 4 bytes, appended. */
    is = intset_add(is, 70000, &added);
    assert_true(added);
    assert_int_equal(intset_width(is), 4);
    assert_true(intset_verify(is));
    /* Below every member: widened to 8 bytes, prepended. */
    is = intset_add(is, INT64_MIN, &added);
    assert_int_equal(intset_width(is), 8);
    assert_true(intset_verify(is));
    int64_t want[] = {INT64_MIN, -3, 5, 70000}, v;
    for (uint32_t i = 0; i < 4; i++) {
        assert_true(intset_get(is, i, &v));
        assert_true(v == want[i]);
    }
    assert_false(intset_get(is, 4, &v));
    assert_true(intset_min(is) == INT64_MIN);
    assert_true(intset_max(is) == 70000);
    /* Removing the wide member keeps the width. */
    is = intset_remove(is, INT64_MIN, &removed);
    assert_true(removed);
    is = intset_remove(is, INT64_MIN, &removed);
    assert_false(removed);
    assert_int_equal(intset_width(is), 8);
    assert_true(intset_verify(is));
    assert_true(intset_find(is, 70000));
    assert_false(intset_find(is, INT64_MAX));
    /* A value too wide for a 2-byte set is absent without a search. */
    intset *small = intset_new();
    small = intset_add(small, 1, NULL);
    assert_false(intset_find(small, 1LL << 40));
    small = intset_remove(small, 1LL << 40, &removed);
    assert_false(removed);
    intset *d = intset_dup(is);
    assert_int_equal(intset_len(d), 3);
    assert_true(intset_verify(d));
    for (int i = 0; i < 50; i++) assert_true(intset_find(is, intset_random(is)));
    intset_free(d);
    intset_free(small);
    intset_free(is);
}

/* Upgrades from each width to each wider one, at both ends. */
static void test_every_upgrade(void **state) {
    (void)state;
    int64_t wide[] = {40000, -40000, 1LL << 33, -(1LL << 33), INT64_MAX, INT64_MIN};
    for (size_t w = 0; w < sizeof(wide) / sizeof(wide[0]); w++) {
        intset *is = intset_new();
        for (int64_t i = -10; i <= 10; i++) is = intset_add(is, i * 3, NULL);
        is = intset_add(is, wide[w], NULL);
        assert_true(intset_verify(is));
        assert_int_equal(intset_len(is), 22);
        assert_true(intset_find(is, wide[w]));
        for (int64_t i = -10; i <= 10; i++) assert_true(intset_find(is, i * 3));
        intset_free(is);
    }
}

/*@ intset-random-model */
static int64_t draw(void) {
    switch (random() % 4) {
    case 0: return (int64_t)(random() % 200) - 100;                     /* 2 bytes, many repeats */
    case 1: return (int64_t)(random() % 200000) - 100000;               /* 4 bytes */
    case 2: return ((int64_t)random() << 20) * (random() % 2 ? 1 : -1); /* 8 bytes */
    default: return random() % 2 ? INT64_MAX - random() % 3 : INT64_MIN + random() % 3;
    }
}

static void test_random_against_model(void **state) {
    (void)state;
    enum { MAX = 600, OPS = 4000 };
    int64_t *ref = zmalloc(sizeof(int64_t) * MAX);
    size_t n = 0;
    intset *is = intset_new();
    for (int op = 0; op < OPS; op++) {
        int64_t v = draw();
        size_t at = 0;
        while (at < n && ref[at] < v) at++;
        int present = at < n && ref[at] == v, changed;
        if (random() % 3 && n < MAX) {
            is = intset_add(is, v, &changed);
            assert_int_equal(changed, !present);
            if (!present) {
                for (size_t k = n; k > at; k--) ref[k] = ref[k - 1];
                ref[at] = v;
                n++;
            }
        } else {
            is = intset_remove(is, v, &changed);
            assert_int_equal(changed, present);
            if (present) {
                for (size_t k = at; k + 1 < n; k++) ref[k] = ref[k + 1];
                n--;
            }
        }
        assert_true(intset_verify(is));
        assert_int_equal(intset_len(is), n);
        assert_int_equal(intset_bytes(is), 4 + n * intset_width(is));
        if (op % 97 == 0)
            for (size_t k = 0; k < n; k++) {
                int64_t got;
                assert_true(intset_get(is, (uint32_t)k, &got));
                assert_true(got == ref[k]);
                assert_true(intset_find(is, ref[k]));
            }
    }
    intset_free(is);
    zfree(ref);
}
/*@ end */

int main(void) {
    unsigned seed = getenv("SOLOIST_SEED") ? (unsigned)strtoul(getenv("SOLOIST_SEED"), NULL, 10) : (unsigned)time(NULL);
    printf("test_intset seed %u\n", seed);
    srandom(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widths_and_upgrades),
        cmocka_unit_test(test_every_upgrade),
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
