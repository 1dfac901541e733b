/* test_db.c — the keyspace (step 0, src/db.c and src/expire.c): adds,
 * lookups, overwrites, deletes, TTLs, lazy and active expiry, random keys,
 * statistics, and that nothing leaks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "util.h"
#include "zmalloc.h"

static obj *S(const char *s) { return obj_create_string(s, strlen(s)); }

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Each test gets a fresh db and checks that releasing it gives back every
 * byte the test allocated through zmalloc. */
typedef struct fixture {
    db d;
    size_t mem_before;
} fixture;

static int setup(void **state) {
    static fixture f;
    f.mem_before = zmalloc_used_memory();
    db_init(&f.d, 0);
    memset(&db_stat, 0, sizeof(db_stat));
    *state = &f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    db_release(&f->d);
    assert_int_equal(zmalloc_used_memory(), f->mem_before);
    return 0;
}

/* Adds key → value (both C strings), consuming our references. */
static void put(db *d, const char *k, const char *v) {
    obj *key = S(k);
    db_set_key(d, key, S(v), 0);
    obj_decr_ref(key);
}

/* The value of k as a C string, or NULL, through a read lookup. */
static const char *get(db *d, const char *k) {
    obj *key = S(k);
    obj *v = db_lookup_read(d, key);
    obj_decr_ref(key);
    return v ? v->ptr : NULL;
}

static void test_add_lookup_overwrite_delete(void **state) {
    db *d = &((fixture *)*state)->d;
    obj *k = S("foo");
    assert_null(db_lookup_read(d, k));
    db_add(d, k, S("bar"));
    assert_int_equal(db_size(d), 1);
    assert_string_equal(get(d, "foo"), "bar");
    assert_true(db_exists(d, k));

    db_entry *e = db_find_entry(d, k);
    assert_non_null(e);
    assert_int_equal(e->keylen, 3);
    assert_string_equal(e->key, "foo");
    assert_int_equal(e->flags, 0);
    assert_int_equal(db_entry_expire(e), -1);
    /* No room for a TTL until the key has one: with glibc a 3-byte key
     * fits the smallest chunk. */
    assert_true(offsetof(db_entry, key) + 3 + 1 <= 24);

    db_overwrite(d, k, S("baz"));
    assert_string_equal(get(d, "foo"), "baz");
    db_set_key(d, k, S("qux"), 0);
    assert_string_equal(get(d, "foo"), "qux");
    assert_int_equal(db_size(d), 1);

    /* A value shared with someone else stays alive after it is replaced. */
    obj *shared = S("shared");
    obj_incr_ref(shared);
    db_set_key(d, k, shared, 0);
    db_set_key(d, k, S("other"), 0);
    assert_int_equal(shared->refcount, 1);
    obj_decr_ref(shared);

    assert_int_equal(db_delete(d, k), 1);
    assert_int_equal(db_delete(d, k), 0);
    assert_null(db_lookup_write(d, k));
    assert_int_equal(db_size(d), 0);

    /* Binary keys: embedded NULs are part of the key. */
    obj *b1 = obj_create_string("a\0b", 3), *b2 = obj_create_string("a\0c", 3);
    db_add(d, b1, S("1"));
    db_add(d, b2, S("2"));
    assert_int_equal(db_size(d), 2);
    assert_string_equal(db_lookup_read(d, b2)->ptr, "2");
    obj_decr_ref(b1);
    obj_decr_ref(b2);
    obj_decr_ref(k);
}

static void test_many_keys(void **state) {
    db *d = &((fixture *)*state)->d;
    char kb[32], vb[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(kb, sizeof(kb), "key:%d", i);
        snprintf(vb, sizeof(vb), "v%d", i);
        put(d, kb, vb);
    }
    assert_int_equal(db_size(d), 20000);
    db_rehash_step(d, 1000);
    for (int i = 0; i < 20000; i += 97) {
        snprintf(kb, sizeof(kb), "key:%d", i);
        snprintf(vb, sizeof(vb), "v%d", i);
        assert_string_equal(get(d, kb), vb);
    }
    for (int i = 0; i < 20000; i += 2) {
        snprintf(kb, sizeof(kb), "key:%d", i);
        obj *k = S(kb);
        assert_int_equal(db_delete(d, k), 1);
        obj_decr_ref(k);
    }
    assert_int_equal(db_size(d), 10000);
    assert_null(get(d, "key:0"));
    assert_string_equal(get(d, "key:1"), "v1");
}

static void test_ttl_set_keep_remove(void **state) {
    db *d = &((fixture *)*state)->d;
    obj *k = S("k");
    long long later = util_mstime() + 100000;
    put(d, "k", "v");
    assert_int_equal(db_get_expire(d, k), -1);
    db_set_expire(d, k, later);
    assert_int_equal(db_get_expire(d, k), later);
    assert_int_equal(db_expires_size(d), 1);
    db_set_expire(d, k, later + 1); /* updating does not add twice */
    assert_int_equal(db_expires_size(d), 1);

    /* keepttl keeps it; the overwrite used by INCR keeps it too. */
    db_set_key(d, k, S("v2"), 1);
    assert_int_equal(db_get_expire(d, k), later + 1);
    db_overwrite(d, k, S("v3"));
    assert_int_equal(db_get_expire(d, k), later + 1);
    /* A plain set drops it. */
    db_set_key(d, k, S("v4"), 0);
    assert_int_equal(db_get_expire(d, k), -1);
    assert_int_equal(db_expires_size(d), 0);

    db_set_expire(d, k, later);
    assert_int_equal(db_remove_expire(d, k), 1);
    assert_int_equal(db_remove_expire(d, k), 0);
    assert_int_equal(db_expires_size(d), 0);

    /* Deleting a key with a TTL removes it from both tables. */
    db_set_expire(d, k, later);
    assert_int_equal(db_delete(d, k), 1);
    assert_int_equal(db_expires_size(d), 0);
    assert_int_equal(db_get_expire(d, k), -1);
    db_set_expire(d, k, later); /* on a missing key: nothing happens */
    assert_int_equal(db_expires_size(d), 0);
    obj_decr_ref(k);
}

/* The first TTL grows the entry (it may move); the keys table, the
 * expires table and every lookup follow it, across many keys and a
 * rehash, and a TTL removed and set again reuses the room. */
static void test_ttl_moves_the_entry(void **state) {
    db *d = &((fixture *)*state)->d;
    long long later = util_mstime() + 100000;
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "key:%d", i);
        put(d, name, "v");
    }
    for (int i = 0; i < 5000; i += 2) {
        snprintf(name, sizeof(name), "key:%d", i);
        obj *k = S(name);
        db_set_expire(d, k, later + i);
        db_entry *e = db_find_entry(d, k);
        assert_true(e->flags & DB_ENTRY_TTL_ROOM);
        if (i % 4 == 0) {
            assert_int_equal(db_remove_expire(d, k), 1);
            assert_true(db_find_entry(d, k) == e); /* the room stays */
            db_set_expire(d, k, later + i);
            assert_true(db_find_entry(d, k) == e); /* and is reused */
        }
        obj_decr_ref(k);
    }
    assert_int_equal(db_expires_size(d), 2500);
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "key:%d", i);
        obj *k = S(name);
        assert_int_equal(db_get_expire(d, k), i % 2 ? -1 : later + i);
        assert_string_equal(get(d, name), "v");
        obj_decr_ref(k);
    }
    db_active_expire_cycle(d, 1000); /* walks expires: every pointer is live */
    assert_int_equal(db_expires_size(d), 2500);
}

static void test_lazy_expiry(void **state) {
    db *d = &((fixture *)*state)->d;
    obj *past = S("past"), *soon = S("soon"), *w = S("w");
    put(d, "past", "1");
    put(d, "soon", "2");
    put(d, "w", "3");
    db_set_expire(d, past, util_mstime() - 10);
    db_set_expire(d, soon, util_mstime() + 1);
    db_set_expire(d, w, util_mstime() - 1);

    /* A find does not expire; a lookup does, and counts it. */
    assert_non_null(db_find_entry(d, past));
    assert_null(db_lookup_read(d, past));
    assert_null(db_find_entry(d, past));
    assert_int_equal(db_stat.expired_keys, 1);
    assert_int_equal(db_stat.keyspace_misses, 1);

    assert_string_equal(get(d, "soon"), "2");
    sleep_ms(5);
    assert_null(get(d, "soon"));
    assert_int_equal(db_stat.expired_keys, 2);

    /* Write lookups expire too, without counting a miss. */
    assert_null(db_lookup_write(d, w));
    assert_int_equal(db_stat.expired_keys, 3);
    assert_int_equal(db_stat.keyspace_misses, 2);
    assert_int_equal(db_size(d), 0);
    assert_int_equal(db_expires_size(d), 0);

    put(d, "w", "again");
    db_set_expire(d, w, util_mstime() - 1);
    assert_int_equal(db_expire_if_needed(d, w), 1);
    assert_int_equal(db_expire_if_needed(d, w), 0);
    obj_decr_ref(past);
    obj_decr_ref(soon);
    obj_decr_ref(w);
}

/* SET's one find: db_lookup_write_entry's entry handed to db_set_entry.
 * A live key is replaced in its own entry (its TTL gone unless kept), an
 * absent one added, and an expired one is expired by the lookup (counted)
 * and then added afresh. */
static void test_lookup_then_set_entry(void **state) {
    db *d = &((fixture *)*state)->d;
    obj *k = S("k"), *gone = S("gone");
    assert_null(db_lookup_write_entry(d, k));
    db_set_entry(d, NULL, k, S("1"), 0);
    assert_string_equal(get(d, "k"), "1");

    db_entry *e = db_lookup_write_entry(d, k);
    assert_true(e == db_find_entry(d, k));
    db_set_expire(d, k, util_mstime() + 100000);
    e = db_lookup_write_entry(d, k); /* the first TTL may move the entry */
    db_set_entry(d, e, k, S("2"), 1);
    assert_true(db_find_entry(d, k) == e);
    assert_string_equal(get(d, "k"), "2");
    assert_true(db_get_expire(d, k) != -1);
    db_set_entry(d, db_lookup_write_entry(d, k), k, S("3"), 0);
    assert_string_equal(get(d, "k"), "3");
    assert_int_equal(db_get_expire(d, k), -1);
    assert_int_equal(db_expires_size(d), 0);
    assert_int_equal(db_size(d), 1);

    put(d, "gone", "old");
    db_set_expire(d, gone, util_mstime() - 1);
    e = db_lookup_write_entry(d, gone);
    assert_null(e);
    assert_int_equal(db_stat.expired_keys, 1);
    db_set_entry(d, e, gone, S("new"), 0);
    assert_string_equal(get(d, "gone"), "new");
    assert_int_equal(db_get_expire(d, gone), -1);
    assert_int_equal(db_size(d), 2);
    obj_decr_ref(k);
    obj_decr_ref(gone);
}

static void test_active_expiry(void **state) {
    db *d = &((fixture *)*state)->d;
    char kb[32];
    long long now = util_mstime();
    /* 10k keys already expired, 1k that live on, 1k without a TTL. */
    for (int i = 0; i < 12000; i++) {
        snprintf(kb, sizeof(kb), "k%d", i);
        put(d, kb, "x");
        obj *k = S(kb);
        if (i < 10000)
            db_set_expire(d, k, now - 1);
        else if (i < 11000)
            db_set_expire(d, k, now + 3600 * 1000);
        obj_decr_ref(k);
    }
    assert_int_equal(db_expires_size(d), 11000);
    /* A generous budget: the cycle itself stops once the sample says
     * fewer than 10% of the volatile keys are stale. */
    for (int round = 0; round < 20 && db_size(d) > 2100; round++) db_active_expire_cycle(d, 200000);
    /* Most of the dead keys are gone without any lookup. The cycle stops
     * when <= 10% of a sample is stale, so up to ~10% may remain. */
    assert_true(db_size(d) <= 2000 + 1100);
    assert_true(db_stat.expired_keys >= 9000);
    assert_int_equal((long long)db_size(d), 12000 - db_stat.expired_keys);
    assert_true(db_stat.expire_cycle_cpu_us > 0);
    assert_true(d->avg_ttl > 0 && d->avg_ttl <= 3600 * 1000);
    /* Live keys survived. */
    assert_string_equal(get(d, "k10500"), "x");
    assert_string_equal(get(d, "k11500"), "x");

    /* Nothing left to expire: a cycle on live keys deletes nothing. */
    long long before = db_stat.expired_keys;
    for (int i = 0; i < 10000; i++) {
        snprintf(kb, sizeof(kb), "k%d", i);
        obj *k = S(kb);
        db_delete(d, k);
        obj_decr_ref(k);
    }
    db_active_expire_cycle(d, 10000);
    assert_int_equal(db_stat.expired_keys, before);
    assert_int_equal(db_size(d), 2000);

    /* An empty expires table: a no-op. */
    db_empty(d);
    db_active_expire_cycle(d, 1000);
}

static void test_active_expiry_far_future(void **state) {
    db *d = &((fixture *)*state)->d;
    char kb[32];
    /* PEXPIREAT 2^63-1 on many keys: the TTL average must not overflow
     * (UBSan checks this in the asan build). */
    for (int i = 0; i < 100; i++) {
        snprintf(kb, sizeof(kb), "f%d", i);
        put(d, kb, "x");
        obj *k = S(kb);
        db_set_expire(d, k, 9223372036854775807LL);
        obj_decr_ref(k);
    }
    db_active_expire_cycle(d, 10000);
    assert_int_equal(db_size(d), 100);
    assert_true(d->avg_ttl > 0);
}

static void test_random_key(void **state) {
    db *d = &((fixture *)*state)->d;
    assert_null(db_random_key(d));
    char kb[32];
    long long now = util_mstime();
    for (int i = 0; i < 200; i++) {
        snprintf(kb, sizeof(kb), "r%d", i);
        put(d, kb, "x");
        if (i % 10) { /* 9 of 10 expired */
            obj *k = S(kb);
            db_set_expire(d, k, now - 5);
            obj_decr_ref(k);
        }
    }
    for (int i = 0; i < 300; i++) {
        obj *r = db_random_key(d);
        assert_non_null(r);
        long long n;
        assert_true(str_to_ll(r->ptr + 1, r->len - 1, &n));
        assert_int_equal(n % 10, 0); /* never an expired one */
        obj_decr_ref(r);
    }
    /* Every key expired: random key drains them and reports empty. */
    db_empty(d);
    for (int i = 0; i < 50; i++) {
        snprintf(kb, sizeof(kb), "z%d", i);
        put(d, kb, "x");
        obj *k = S(kb);
        db_set_expire(d, k, now - 5);
        obj_decr_ref(k);
    }
    assert_null(db_random_key(d));
    assert_int_equal(db_size(d), 0);
}

static void test_empty(void **state) {
    db *d = &((fixture *)*state)->d;
    assert_int_equal(db_empty(d), 0);
    for (int i = 0; i < 1000; i++) {
        char kb[16];
        snprintf(kb, sizeof(kb), "e%d", i);
        put(d, kb, "v");
        if (i % 3 == 0) {
            obj *k = S(kb);
            db_set_expire(d, k, util_mstime() + 100000);
            obj_decr_ref(k);
        }
    }
    assert_int_equal(db_empty(d), 1000);
    assert_int_equal(db_size(d), 0);
    assert_int_equal(db_expires_size(d), 0);
    assert_null(get(d, "e1"));
    put(d, "after", "1"); /* still usable */
    assert_string_equal(get(d, "after"), "1");
}

static void test_stats(void **state) {
    db *d = &((fixture *)*state)->d;
    put(d, "a", "1");
    get(d, "a");
    get(d, "a");
    get(d, "nope");
    obj *k = S("a");
    db_lookup_write(d, k); /* not counted */
    db_exists(d, k);       /* not counted */
    obj_decr_ref(k);
    assert_int_equal(db_stat.keyspace_hits, 2);
    assert_int_equal(db_stat.keyspace_misses, 1);
    assert_int_equal(db_stat.expired_keys, 0);
}

static void test_unshare_string(void **state) {
    db *d = &((fixture *)*state)->d;
    obj *k = S("s");
    long long later = util_mstime() + 100000;
    assert_null(db_unshare_string(d, k, 4));

    /* EMBSTR value becomes a RAW one of the new length, TTL kept. */
    put(d, "s", "ab");
    db_set_expire(d, k, later);
    obj *o = db_unshare_string(d, k, 5);
    assert_int_equal(o->encoding, OBJ_ENC_RAW);
    assert_int_equal(o->refcount, 1);
    assert_int_equal(o->len, 5);
    assert_memory_equal(o->ptr, "ab\0\0\0", 6);
    assert_ptr_equal(db_lookup_read(d, k), o);
    assert_int_equal(db_get_expire(d, k), later);

    /* A shared value is copied, the other holder's bytes untouched. */
    obj_incr_ref(o);
    obj *p = db_unshare_string(d, k, 3);
    assert_ptr_not_equal(p, o);
    memcpy(p->ptr, "xyz", 3);
    assert_memory_equal(o->ptr, "ab\0\0\0", 6);
    assert_int_equal(o->refcount, 1);
    obj_decr_ref(o);
    assert_string_equal(get(d, "s"), "xyz");
    obj_decr_ref(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_lookup_overwrite_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl_set_keep_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl_moves_the_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lazy_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_then_set_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_active_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_active_expiry_far_future, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unshare_string, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
