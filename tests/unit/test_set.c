/* test_set.c — the set type's structure (src/set.c).
 *
 * Each encoding and each conversion Valkey 8 makes (intset -> listpack,
 * intset -> hashtable, listpack -> hashtable, and what setTypeCreate and
 * setTypeMaybeConvert pick), with set_verify after every change; then
 * random adds, removes and pops against a reference model (an array of
 * distinct strings) under small limits, so that sets cross every
 * conversion point many times. The seed is printed; SOLOIST_SEED=N
 * replays a run.
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

#include "object.h"
#include "set.h"
#include "zmalloc.h"

static long long saved[3];

static int setup(void **state) {
    (void)state;
    saved[0] = set_max_intset_entries;
    saved[1] = set_max_listpack_entries;
    saved[2] = set_max_listpack_value;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    set_max_intset_entries = saved[0];
    set_max_listpack_entries = saved[1];
    set_max_listpack_value = saved[2];
    return 0;
}

static int add(obj *o, const char *m) {
    int r = set_add(o, m, strlen(m));
    assert_true(set_verify(o));
    return r;
}

static int rem(obj *o, const char *m) {
    int r = set_remove(o, m, strlen(m));
    assert_true(set_verify(o));
    return r;
}

static int has(obj *o, const char *m) { return set_is_member(o, m, strlen(m)); }

/* Every member, each once, via the iterator; returns how many. */
static size_t walk_count(obj *o) {
    set_iter it;
    const char *m;
    size_t len, n = 0;
    set_iter_init(&it, o);
    while (set_iter_next(&it, &m, &len)) n++; /* no lookups under a plain iterator: callers check membership */
    set_iter_reset(&it);
    return n;
}

static void test_intset_and_its_conversions(void **state) {
    (void)state;
    set_max_intset_entries = 4;
    obj *o = set_object_create("1", 1, 3);
    assert_int_equal(o->encoding, OBJ_ENC_INTSET);
    assert_string_equal(obj_type_name(o), "set");
    assert_true(add(o, "3"));
    assert_true(add(o, "1"));
    assert_false(add(o, "1"));
    assert_true(add(o, "-2"));
    assert_true(add(o, "2"));
    assert_int_equal(o->encoding, OBJ_ENC_INTSET);
    /* In order: an intset walks ascending. */
    set_iter it;
    const char *m;
    size_t len;
    const char *want[] = {"-2", "1", "2", "3"};
    set_iter_init(&it, o);
    for (int i = 0; i < 4; i++) {
        assert_true(set_iter_next(&it, &m, &len));
        assert_int_equal(len, strlen(want[i]));
        assert_memory_equal(m, want[i], len);
    }
    assert_false(set_iter_next(&it, &m, &len));
    set_iter_reset(&it);
    assert_false(has(o, "01")); /* not canonical: not the integer 1 */
    assert_false(rem(o, "01"));
    assert_true(has(o, "1"));
    /* Past set-max-intset-entries: straight to a hashtable. */
    assert_true(add(o, "9"));
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_int_equal(set_length(o), 5);
    assert_true(has(o, "9"));
    /* It never goes back. */
    for (int i = 0; i < 5; i++) rem(o, (const char *[]){"-2", "1", "2", "3", "9"}[i]);
    assert_int_equal(set_length(o), 0);
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    obj_decr_ref(o);

    /* A string into a small intset: a listpack. */
    set_max_intset_entries = 512;
    o = set_object_create_intset();
    add(o, "10");
    add(o, "-20");
    assert_true(add(o, "x"));
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    assert_true(has(o, "10") && has(o, "-20") && has(o, "x"));
    assert_int_equal(walk_count(o), 3);
    obj_decr_ref(o);

    /* A string too long for a listpack: a hashtable. */
    set_max_listpack_value = 8;
    o = set_object_create_intset();
    add(o, "1");
    assert_true(add(o, "abcdefghi"));
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    obj_decr_ref(o);
    /* An integer too wide for one: a hashtable too. */
    o = set_object_create_intset();
    add(o, "123456789");
    assert_true(add(o, "x"));
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    obj_decr_ref(o);
    /* An intset with as many members as a listpack may hold: a hashtable. */
    set_max_listpack_value = 64;
    set_max_listpack_entries = 3;
    o = set_object_create_intset();
    add(o, "1");
    add(o, "2");
    add(o, "3");
    assert_true(add(o, "x"));
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    obj_decr_ref(o);
}

static void test_listpack_and_its_conversion(void **state) {
    (void)state;
    set_max_listpack_entries = 4;
    set_max_listpack_value = 5;
    obj *o = set_object_create("a", 1, 2);
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    assert_true(add(o, "a"));
    assert_true(add(o, "7"));
    assert_false(add(o, "7"));
    assert_true(add(o, ""));
    assert_true(has(o, ""));
    assert_true(add(o, "bb"));
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    assert_true(rem(o, "7"));
    assert_false(rem(o, "7"));
    assert_true(add(o, "cc"));
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    assert_true(add(o, "dd")); /* a fifth member: a hashtable */
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_int_equal(set_length(o), 5);
    assert_true(has(o, "") && has(o, "a") && has(o, "bb") && has(o, "cc") && has(o, "dd"));
    obj_decr_ref(o);
    o = set_object_create("a", 1, 1);
    assert_true(add(o, "toolong"));
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    obj_decr_ref(o);
    /* What setTypeCreate picks from the first member and the hint. */
    o = set_object_create("5", 1, 5);
    assert_int_equal(o->encoding, OBJ_ENC_INTSET);
    obj_decr_ref(o);
    o = set_object_create("x", 1, 4);
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    obj_decr_ref(o);
    o = set_object_create("x", 1, 5);
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    obj_decr_ref(o);
    set_max_intset_entries = 3;
    o = set_object_create("5", 1, 4);
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    obj_decr_ref(o);
    /* setTypeMaybeConvert: a hint past the limit converts at once. */
    o = set_object_create("x", 1, 1);
    add(o, "x");
    set_maybe_convert(o, 4);
    assert_int_equal(o->encoding, OBJ_ENC_LISTPACK);
    set_maybe_convert(o, 5);
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_true(set_verify(o));
    assert_true(has(o, "x"));
    obj_decr_ref(o);
    o = set_object_create_intset();
    add(o, "1");
    set_maybe_convert(o, 4);
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_true(has(o, "1"));
    obj_decr_ref(o);
}

static void collect(void *privdata, const char *m, size_t len) {
    (void)m;
    (void)len;
    (*(size_t *)privdata)++;
}

/* Each encoding: dup, scan, random, pop and swap. */
static void test_dup_scan_random_pop(void **state) {
    (void)state;
    const char *firsts[] = {"1", "a", "a"};
    size_t hints[] = {1, 1, 1000};
    int encs[] = {OBJ_ENC_INTSET, OBJ_ENC_LISTPACK, OBJ_ENC_HT};
    for (int e = 0; e < 3; e++) {
        obj *o = set_object_create(firsts[e], 1, hints[e]);
        assert_int_equal(o->encoding, encs[e]);
        char buf[32];
        size_t n = e == 2 ? 300 : 50;
        for (size_t i = 0; i < n; i++) {
            snprintf(buf, sizeof(buf), e == 0 ? "%zu" : "m%zu", i);
            add(o, buf);
        }
        assert_int_equal(o->encoding, encs[e]);
        obj *d = set_object_dup(o);
        assert_int_equal(d->encoding, encs[e]);
        assert_true(set_verify(d));
        assert_int_equal(set_length(d), n);
        assert_int_equal(obj_length(d), n);
        size_t seen = 0, cursor = 0;
        do {
            cursor = set_scan(d, cursor, collect, &seen);
        } while (cursor);
        assert_true(seen >= n); /* a hashtable scan may repeat, never miss */
        for (int i = 0; i < 100; i++) {
            const char *m;
            size_t len;
            set_random(o, buf, &m, &len);
            assert_true(set_is_member(d, m, len));
        }
        for (size_t i = 0; i < n; i++) {
            obj *m = set_pop(o);
            assert_true(set_verify(o));
            assert_false(set_is_member(o, m->ptr, m->len));
            assert_true(set_is_member(d, m->ptr, m->len));
            obj_decr_ref(m);
        }
        assert_int_equal(set_length(o), 0);
        set_swap(o, d);
        assert_int_equal(set_length(o), n);
        assert_int_equal(set_length(d), 0);
        assert_int_equal(walk_count(o), n);
        obj_decr_ref(o);
        obj_decr_ref(d);
    }
}

/*@ set-random-model */
/* Members from a pool that mixes integers of every width, short strings,
 * long ones and non-canonical integers ("07", "+1"). */
static void member(char *buf, size_t cap) {
    long r = random() % 10;
    long k = random() % 40;
    if (r < 4)
        snprintf(buf, cap, "%ld", k - 20);
    else if (r == 4)
        snprintf(buf, cap, "%lld", (long long)k * 1000000007LL * (k % 2 ? 1 : -1));
    else if (r < 8)
        snprintf(buf, cap, "s%ld", k);
    else if (r == 8)
        snprintf(buf, cap, "long-member-%ld-xxxxxxxx", k);
    else
        snprintf(buf, cap, "0%ld", k);
}

static void test_random_against_model(void **state) {
    (void)state;
    enum { POOL = 200, OPS = 3000 };
    char(*ref)[48] = zmalloc(sizeof(*ref) * POOL);
    for (int round = 0; round < 6; round++) {
        set_max_intset_entries = 2 + random() % 12;
        set_max_listpack_entries = 1 + random() % 16;
        set_max_listpack_value = 4 + random() % 20;
        size_t n = 0;
        char buf[48];
        member(buf, sizeof(buf));
        obj *o = set_object_create(buf, strlen(buf), 1 + (size_t)(random() % 8));
        for (int op = 0; op < OPS; op++) {
            member(buf, sizeof(buf));
            size_t at = 0;
            while (at < n && strcmp(ref[at], buf)) at++;
            int present = at < n;
            long what = random() % 10;
            if (what < 5) {
                assert_int_equal(set_add(o, buf, strlen(buf)), !present);
                if (!present) strcpy(ref[n++], buf);
            } else if (what < 8) {
                assert_int_equal(set_remove(o, buf, strlen(buf)), present);
                if (present) memcpy(ref[at], ref[--n], sizeof(ref[0]));
            } else if (what == 8 && n) {
                obj *m = set_pop(o);
                size_t k = 0;
                while (k < n && strcmp(ref[k], m->ptr)) k++;
                assert_true(k < n);
                memcpy(ref[k], ref[--n], sizeof(ref[0]));
                obj_decr_ref(m);
            } else {
                assert_int_equal(set_is_member(o, buf, strlen(buf)), present);
            }
            assert_true(set_verify(o));
            assert_int_equal(set_length(o), n);
            if (op % 61 == 0) {
                for (size_t k = 0; k < n; k++) assert_true(set_is_member(o, ref[k], strlen(ref[k])));
                assert_int_equal(walk_count(o), n);
            }
        }
        obj_decr_ref(o);
    }
    zfree(ref);
}
/*@ end */

int main(void) {
    unsigned seed = getenv("SOLOIST_SEED") ? (unsigned)strtoul(getenv("SOLOIST_SEED"), NULL, 10) : (unsigned)time(NULL);
    printf("test_set seed %u\n", seed);
    srandom(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_intset_and_its_conversions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listpack_and_its_conversion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dup_scan_random_pop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_model, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
