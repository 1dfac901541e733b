/* test_memory_prefetch.c — step 6's batch (src/memory_prefetch.c): how it
 * fills, what its walk does to each find, and that it changes no reply.
 *
 * The batch and walk tests use the server's db0 and fake clients (fd -1)
 * whose parsed pipelines are built here; the reply tests run the real
 * server loop with clients on socketpairs (loop_test.h), with the batch
 * on and off, and compare every byte that comes back.
 *
 * The prefetches themselves: a prefetch changes no value a test could
 * read back, so this file compiles its own copy of the find and the walk
 * (it #includes src/hashtable_incremental_find.c and src/memory_prefetch.c
 * below) with SOLOIST_PREFETCH_HOOK set, which makes every PREFETCH(addr)
 * they issue a call of prefetch_seen, which records the address.
 * src/hashtable_prefetch.h says why this way: the server's objects keep a
 * bare __builtin_prefetch. When the grader builds this file, those two
 * files are the learner's, so the tests see the learner's prefetches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This step's two modules, with every prefetch recorded (see above). The
 * test binary's find and walk are these; the linker then takes no object
 * of libsoloist.a that defines the same functions. */
#define SOLOIST_PREFETCH_HOOK prefetch_seen
#include "hashtable_incremental_find.c"
#include "memory_prefetch.c"

#include "client.h"
#include "config.h"
#include "db.h"
#include "hashtable.h"
#include "memory_prefetch.h"
#include "memory_prefetch_test.h"
#include "networking.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#include "expect.h"
#include "loop_test.h"

/* Every address PREFETCH was given since nseen was last set to 0, in
 * order (the first SEEN_MAX of them), and how many there were. */
enum { SEEN_MAX = 4096 };
static const void *seen[SEEN_MAX];
static int nseen;

void prefetch_seen(const void *addr) {
    if (nseen < SEEN_MAX) seen[nseen] = addr;
    nseen++;
}

/* The server picks a random SipHash key; the tests fix it, so that which
 * keys share a bucket or a chain, and so how many steps each find takes,
 * is the same in every run of a seed (SOLOIST_TEST_SEED=N replays it). */
static void fix_hash_seed(void) {
    const char *env = getenv("SOLOIST_TEST_SEED");
    unsigned long long s = env ? strtoull(env, NULL, 10) : 6;
    uint8_t key[16];
    for (int i = 0; i < 16; i++) key[i] = (uint8_t)(s >> (8 * (i % 8)) ^ (unsigned)i * 0x9du);
    assert_int_equal(hashtable_size(db0.keys), 0); /* the seed may change only while no key is stored */
    hashtable_set_hash_seed(key);
}

static int setup(void **state) {
    expect_setup(state);
    loop_server_start(1, 0);
    fix_hash_seed();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    loop_server_stop();
    return 0;
}

static obj *str(const char *s) { return obj_create_string(s, strlen(s)); }

/* Appends one parsed command (NULL-terminated words) to c's queue. */
static void queue(client *c, ...) {
    const char *w[16];
    int argc = 0;
    va_list ap;
    va_start(ap, c);
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;) w[argc++] = s;
    va_end(ap);
    if (c->cmdq_len == c->cmdq_cap) {
        c->cmdq_cap = c->cmdq_cap ? c->cmdq_cap * 2 : 8;
        c->cmdq = zrealloc(c->cmdq, (size_t)c->cmdq_cap * sizeof(*c->cmdq));
    }
    obj **argv = zmalloc((size_t)argc * sizeof(*argv));
    for (int j = 0; j < argc; j++) argv[j] = str(w[j]);
    c->cmdq[c->cmdq_len++] = (parsed_cmd){argc, argv, NULL};
}

/* Drops the queue's first n commands, as if they had run. */
static void drop_front(client *c, int n) {
    for (int q = c->cmdq_pos; q < c->cmdq_pos + n; q++) {
        for (int j = 0; j < c->cmdq[q].argc; j++) obj_decr_ref(c->cmdq[q].argv[j]);
        zfree(c->cmdq[q].argv);
    }
    c->cmdq_pos += n;
}

static void queue_gets(client *c, int n, int from) {
    char k[32];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof(k), "key:%d", from + i);
        queue(c, "GET", k, NULL);
    }
}

static void fill_db(int n) {
    char k[32];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof(k), "key:%d", i);
        obj *key = str(k);
        db_set_key(&db0, key, str("a value long enough to live outside its object, in RAW bytes"), 0);
        obj_decr_ref(key);
    }
}

/* The batch takes clients and keys until either count reaches the
 * maximum, then refuses; a reset empties it and puts the walk's cursor
 * back at the first key. */
static void test_batch_fills_and_resets(void **state) {
    (void)state;
    fill_db(300);
    server.prefetch_batch_max_size = 4;
    client *a = NULL, *b = NULL, *c = NULL;
    memory_prefetch_probe p;
    /* Where a walk ends depends on the keys' buckets, and so on the hash
     * seed: a batch whose walk ends on key 0 cannot show the reset below,
     * so another set of keys is tried (a few are enough for every seed). */
    for (int from = 0; from < 300; from += 30) {
        if (a) {
            client_free(a);
            client_free(b);
            client_free(c);
        }
        a = client_create(-1), b = client_create(-1), c = client_create(-1);
        queue_gets(a, 3, from);
        queue_gets(b, 3, from + 10);
        queue_gets(c, 1, from + 20);
        memory_prefetch_reset();
        assert_int_equal(memory_prefetch_add_client(a), 1);
        assert_int_equal(memory_prefetch_add_client(b), 1); /* one of b's three keys fits */
        assert_int_equal(memory_prefetch_add_client(c), 0); /* 4 keys: full */
        memory_prefetch_run();
        memory_prefetch_get_probe(&p);
        assert_int_equal(p.clients, 2);
        assert_int_equal(p.keys, 4);
        assert_int_equal(p.end[0], 3);
        assert_int_equal(p.end[1], 1);
        assert_int_equal(p.trace[0], 0);
        for (int k = 0; k < 4; k++) assert_non_null(p.found[k]);
        if (p.cursor != 0) break;
    }
    assert_int_not_equal(p.cursor, 0); /* a walk ended away from key 0 ... */

    memory_prefetch_reset(); /* ... and the next batch starts there again */
    assert_int_equal(memory_prefetch_add_client(c), 1);
    assert_int_equal(memory_prefetch_add_client(b), 1);
    memory_prefetch_run();
    memory_prefetch_get_probe(&p);
    assert_int_equal(p.clients, 2);
    assert_int_equal(p.keys, 4);
    assert_int_equal(p.trace[0], 0);
    client_free(a);
    client_free(b);
    client_free(c);
}

/* The walk goes round: every key's first step (a bucket prefetched) is
 * followed by the next key's, not by the same key's second, so the keys'
 * misses overlap; the second round starts at key 0 again. */
static void test_walk_interleaves(void **state) {
    (void)state;
    fill_db(1000);
    server.prefetch_batch_max_size = 16;
    client *c = client_create(-1);
    queue_gets(c, 8, 100);
    memory_prefetch_reset();
    assert_int_equal(memory_prefetch_add_client(c), 1);
    memory_prefetch_run();
    memory_prefetch_probe p;
    memory_prefetch_get_probe(&p);
    assert_int_equal(p.keys, 8);
    assert_true(p.visits >= 16);
    for (int v = 0; v < 9; v++) assert_int_equal(p.trace[v], v % 8);
    client_free(c);
}

/* The number of steps one find takes alone, run to the end (failing
 * after 1000: a find that never ends). */
static int steps_alone(hashtable *ht, obj *key, void **found) {
    hashtable_key k = {key->ptr, key->len};
    hashtable_incremental_find_state s;
    hashtable_incremental_find_init(&s, ht, &k);
    int n = 1;
    while (hashtable_incremental_find_step(&s))
        if (++n > 1000) fail_msg("the find of %.*s never ended", (int)key->len, key->ptr);
    if (!hashtable_incremental_find_get_result(&s, found)) *found = NULL;
    return n;
}

/* What walk_step does to key k, visit after visit: its find's steps (1:
 * a prefetch, the walk moves on; the last one, 0, ends the find), then,
 * when found, the value object's prefetch (1) and the bytes' (0). */
typedef struct key_model {
    int find_steps, found, done_visits;
} key_model;
static int model_visit(key_model *m) {
    int v = m->done_visits++;
    if (v < m->find_steps - 1) return 1;
    if (v == m->find_steps - 1) return 0;
    return v == m->find_steps; /* the value's prefetch, then the bytes' */
}
static int model_visits(const key_model *m) { return m->find_steps + (m->found ? 2 : 0); }

/* The walk, visit by visit, is the round robin of the contract: the cursor
 * starts at key 0; walk_next gives the first unfinished key from the cursor
 * on, wrapping past the last key; after a visit that prefetched the cursor
 * goes to the key after it, after one that did not it stays on it; the
 * walk stops when every key is done. The test replays that rule on each
 * key's own step count (its find alone) and compares every visit. Keys
 * present and absent, so finds end at different steps. */
static void test_walk_follows_the_cursor(void **state) {
    (void)state;
    fill_db(1000);
    server.prefetch_batch_max_size = 16;
    client *c = client_create(-1);
    int n = 12;
    for (int i = 0; i < n; i++) {
        char k[32];
        snprintf(k, sizeof(k), "key:%d", i % 3 == 2 ? 5000 + i : 100 + i); /* a third absent, the last too */
        queue(c, "GET", k, NULL);
    }
    memory_prefetch_reset();
    assert_int_equal(memory_prefetch_add_client(c), 1);
    memory_prefetch_run();
    memory_prefetch_probe p;
    memory_prefetch_get_probe(&p);
    assert_int_equal(p.keys, n);

    key_model m[16];
    int expect_visits = 0;
    for (int k = 0; k < n; k++) {
        void *alone;
        m[k] = (key_model){steps_alone(db0.keys, c->cmdq[k].argv[1], &alone), 0, 0};
        m[k].found = alone != NULL;
        assert_ptr_equal(p.found[k], alone);
        assert_int_equal(p.steps[k], m[k].find_steps);
        expect_visits += model_visits(&m[k]);
    }
    int cur = 0, v = 0;
    for (;;) {
        int i = -1;
        for (int j = 0; j < n && i < 0; j++)
            if (m[(cur + j) % n].done_visits < model_visits(&m[(cur + j) % n])) i = (cur + j) % n;
        if (i < 0) break;
        if (v < PREFETCH_BATCH_LIMIT && p.trace[v] != i)
            fail_msg("visit %d went to key %d; the round robin gives key %d", v, p.trace[v], i);
        v++;
        cur = model_visit(&m[i]) ? (i + 1) % n : i;
    }
    assert_int_equal(v, expect_visits);
    assert_int_equal(p.visits, expect_visits); /* and not one visit more */
    client_free(c);
}

/* The walk of no keys steps nothing; the walk of one key runs its find to
 * the end alone, and so does the last key of a walk, whatever came before. */
static void test_walk_of_none_and_of_one(void **state) {
    (void)state;
    fill_db(100);
    obj *keys[3] = {str("key:7"), str("key:8"), str("key:9")};
    int steps[3];
    void *found[3];
    memory_prefetch_walk_keys(&db0, keys, 3, steps, found); /* leaves every key done */
    assert_int_equal(memory_prefetch_walk_keys(&db0, keys, 0, steps, found), 0);
    for (int n = 1; n <= 3; n++) {
        memory_prefetch_walk_keys(&db0, keys + 3 - n, 1, steps, found); /* one key */
        void *alone;
        assert_int_equal(steps[0], steps_alone(db0.keys, keys[3 - n], &alone));
        assert_ptr_equal(found[0], alone);
        assert_ptr_equal(found[0], db_find_entry(&db0, keys[3 - n]));
    }
    assert_int_equal(memory_prefetch_walk_keys(&db0, keys, 0, steps, found), 0);
    for (int i = 0; i < 3; i++) obj_decr_ref(keys[i]);
}

/* Each key's find runs in its own table, ht[i], which the batch takes
 * from the db of the client that sent the key: a batch of clients of two
 * databases finds each key in its own client's db. db0 holds key:0 to
 * key:99; a second db holds only:1, only:2 and a key:5 of its own. Client
 * a (db0) asks for key:1 and key:5, client b (the second db) for only:1,
 * key:5 and only:2: all 5 finds end at the entry of their client's db. */
static void test_walk_finds_each_key_in_its_db(void **state) {
    (void)state;
    fill_db(100);
    db other;
    db_init(&other, 1);
    const char *mine[] = {"only:1", "only:2", "key:5"};
    for (int i = 0; i < 3; i++) {
        obj *key = str(mine[i]);
        db_set_key(&other, key, str("a value of the second db"), 0);
        obj_decr_ref(key);
    }
    server.prefetch_batch_max_size = 16;
    client *a = client_create(-1), *b = client_create(-1);
    b->db = &other;
    queue(a, "GET", "key:1", NULL);
    queue(a, "GET", "key:5", NULL);
    queue(b, "GET", "only:1", NULL);
    queue(b, "GET", "key:5", NULL);
    queue(b, "GET", "only:2", NULL);
    memory_prefetch_reset();
    assert_int_equal(memory_prefetch_add_client(a), 1);
    assert_int_equal(memory_prefetch_add_client(b), 1);
    memory_prefetch_run();
    memory_prefetch_probe p;
    memory_prefetch_get_probe(&p);
    assert_int_equal(p.keys, 5);
    client *sender[5] = {a, a, b, b, b};
    int q[5] = {0, 1, 0, 1, 2}, own = 0;
    for (int k = 0; k < 5; k++) {
        db_entry *want = db_find_entry(sender[k]->db, sender[k]->cmdq[q[k]].argv[1]);
        assert_non_null(want);
        own += p.found[k] == want;
    }
    expect_eq(("finds of the batch's 5 keys that ended at the entry of their own client's db"), own, 5);
    b->db = &db0;
    client_free(a);
    client_free(b);
    db_release(&other);
}

/* Interleaved, every find takes exactly the steps it takes alone (a find
 * that restarted would take more, or never end) and ends where a plain
 * find ends. Keys present and absent. */
static void test_finds_resume_across_steps(void **state) {
    (void)state;
    fill_db(5000);
    obj *keys[32];
    int steps[32];
    void *found[32];
    char k[32];
    for (int i = 0; i < 32; i++) {
        snprintf(k, sizeof(k), "key:%d", i * 311 % 7000); /* about a third absent */
        keys[i] = str(k);
    }
    int total = memory_prefetch_walk_keys(&db0, keys, 32, steps, found);
    int sum = 0;
    for (int i = 0; i < 32; i++) {
        void *alone;
        int n = steps_alone(db0.keys, keys[i], &alone);
        assert_int_equal(steps[i], n);
        assert_ptr_equal(found[i], alone);
        assert_ptr_equal(found[i], db_find_entry(&db0, keys[i]));
        sum += n;
    }
    assert_int_equal(total, sum);
    for (int i = 0; i < 32; i++) obj_decr_ref(keys[i]);
}

/* While the table rehashes, keys move from table 0 to table 1 between
 * walks (each write below takes a rehash step), and keys added meanwhile
 * go straight to table 1, while their bucket in table 0 has not moved yet.
 * Every walk still finds every key, wherever it is now. */
static void test_key_moved_by_rehash_is_found(void **state) {
    (void)state;
    char k[32];
    int n = 0;
    /* Grow until an insert starts a rehash. */
    while (!hashtable_is_rehashing(db0.keys) || n < 200) {
        fill_db(++n);
        if (n > 100000) fail_msg("the table never started rehashing");
    }
    obj *keys[PREFETCH_BATCH_LIMIT];
    int steps[PREFETCH_BATCH_LIMIT], count = 0, walks = 0;
    void *found[PREFETCH_BATCH_LIMIT];
    for (int i = 0; i < 16; i++) {
        snprintf(k, sizeof(k), "key:%d", i * (n / 16));
        keys[count++] = str(k);
    }
    while (hashtable_is_rehashing(db0.keys)) {
        if (count < PREFETCH_BATCH_LIMIT) { /* one rehash step, and a key in table 1 */
            snprintf(k, sizeof(k), "new:%d", walks);
            keys[count] = str(k);
            db_set_key(&db0, keys[count++], str("v"), 0);
        } else {
            db_find_entry(&db0, keys[walks % count]); /* one rehash step */
        }
        memory_prefetch_walk_keys(&db0, keys, count, steps, found);
        for (int i = 0; i < count; i++) {
            assert_non_null(found[i]);
            assert_memory_equal(((db_entry *)found[i])->key, keys[i]->ptr, keys[i]->len);
        }
        walks++;
    }
    assert_true(walks > 2); /* the walks did see the table mid-rehash */
    for (int i = 0; i < count; i++) obj_decr_ref(keys[i]);
}

/* ------------------------------------------- one find, step by step */

/* A table whose hash is the key itself: the test chooses each key's
 * bucket (its low bits) and its secondary hash (its top byte), so it knows
 * how many buckets and candidates a find meets. A find takes exactly one
 * step per bucket it visits and one per candidate entry (each of those
 * steps issues the prefetch of the next line), plus the one that ends it. */
typedef struct ikey {
    uint64_t key;
} ikey;
static uint64_t ik_hash(const void *key) { return *(const uint64_t *)key; }
static const void *ik_get_key(const void *entry) { return &((const ikey *)entry)->key; }
static int ik_compare(const void *a, const void *b) { return *(const uint64_t *)a != *(const uint64_t *)b; }
static const hashtable_type ik_type = {ik_hash, ik_get_key, ik_compare, NULL};

/* Key i of a table: bucket bits i, secondary hash i + 1 (all different). */
static uint64_t ik_key(unsigned i) { return (uint64_t)(i + 1) << 56 | i; }

/* A table whose keys are strings (hashtable_key, as the walk looks them
 * up) whose first 8 bytes, read as a number, are their hash: the test can
 * put many keys in one bucket with one secondary hash (a chain that no
 * real hash would build), or give two keys the same 64-bit hash. */
typedef struct skey {
    hashtable_key k;
    uint64_t bytes;
} skey;
static uint64_t sk_hash(const void *key) {
    const hashtable_key *k = key;
    uint64_t h = 0;
    memcpy(&h, k->ptr, k->len < sizeof(h) ? k->len : sizeof(h));
    return h;
}
static const void *sk_get_key(const void *entry) { return &((const skey *)entry)->k; }
static const hashtable_type sk_type = {sk_hash, sk_get_key, hashtable_key_compare, NULL};

/* ------------------------------------------ what each step prefetched */

/* One find, step by step: how many steps it took (the last one returned
 * 0), and every address it prefetched, in order (the first MAX_LINES). */
enum { MAX_LINES = 512 };
typedef struct find_trace {
    int steps, lines;
    const void *line[MAX_LINES];
    void *found;
} find_trace;

/* Runs the find of key (named `name` in messages) in ht to its end,
 * giving up (and failing) after 1000 steps, and holds every step to the
 * first contract line: a step that returns 1 has issued exactly one
 * prefetch (the line its next step reads), a step that returns 0 none.
 * Once ended, the find stays ended where it ended. */
static void trace_find(hashtable *ht, const void *key, const char *name, find_trace *t) {
    hashtable_incremental_find_state s;
    hashtable_incremental_find_init(&s, ht, key);
    t->steps = t->lines = 0;
    for (int more = 1; more;) {
        if (t->steps == 1000) fail_msg("the find of %s never ended: 1000 steps", name);
        nseen = 0;
        more = hashtable_incremental_find_step(&s);
        t->steps++;
        expect_eq(("prefetches issued by step %d of the find of %s, a step that returned %d", t->steps, name, more),
                  nseen, more);
        for (int i = 0; i < nseen && i < SEEN_MAX; i++)
            if (t->lines < MAX_LINES) t->line[t->lines++] = seen[i];
    }
    t->found = NULL;
    int r = hashtable_incremental_find_get_result(&s, &t->found);
    assert_int_equal(r, t->found != NULL);
    nseen = 0;
    assert_int_equal(hashtable_incremental_find_step(&s), 0); /* stays ended ... */
    expect_eq(("prefetches issued by a step of the find of %s after it ended", name), nseen, 0);
    void *again = NULL;
    assert_int_equal(hashtable_incremental_find_get_result(&s, &again), r); /* ... where it ended */
    assert_ptr_equal(again, t->found);
}

/* Steps one find to its end (trace_find's checks included); the result
 * goes to *found (NULL when not found). Returns the number of steps. */
static int ik_steps(hashtable *ht, uint64_t key, void **found) {
    char name[32];
    snprintf(name, sizeof(name), "key %#llx", (unsigned long long)key);
    find_trace t;
    trace_find(ht, &key, name, &t);
    *found = t.found;
    return t.steps;
}

/* The lines a find of key in ht must prefetch, in order, by the contract
 * of hashtable_incremental_find_step, read off the table's buckets
 * (hashtable_private.h, which the find's file brings in): each bucket the
 * find moves to (the key's bucket in table 0, or in table 1 when the
 * rehash already moved it; then its child chain; then, while rehashing,
 * the key's bucket in table 1 and its chain), and after each bucket the
 * entry each of its candidate slots points to, up to the key's own.
 * is_bucket[i] says which kind line i is. Returns how many (at most max). */
static int expected_lines(hashtable *ht, const void *key, const void **out, int *is_bucket, int max) {
    int n = 0;
    if (hashtable_size(ht) == 0) return 0;
    uint64_t hash = ht->type->hash_key(key);
    int t = 0;
    size_t idx = hash & mask_of(ht->exp[0]);
    if (already_moved(ht, 0, idx)) t = 1, idx = hash & mask_of(ht->exp[1]);
    for (;;) {
        for (bucket *b = &ht->tables[t][idx]; b != NULL; b = child_of(b)) {
            if (n < max) out[n] = b, is_bucket[n++] = 1;
            unsigned m = match_h2(b, high_byte(hash));
            for (int j = 0; j < SLOTS; j++) {
                if (!(m >> j & 1)) continue;
                if (n < max) out[n] = b->slot[j], is_bucket[n++] = 0;
                if (keys_equal(ht, key, key_of(ht, b->slot[j]))) return n;
            }
        }
        if (t == 1 || !rehashing(ht)) return n;
        t = 1, idx = hash & mask_of(ht->exp[1]);
    }
}

/* What the address p is, in words, for a failure message: a bucket of ht
 * (its table, its index, its place in the chain), the address of a slot
 * inside a bucket (a line already in cache), an entry (what a slot points
 * to), NULL, or none of them. */
static const char *line_name(hashtable *ht, const void *p, char *buf, size_t n) {
    if (p == NULL) return snprintf(buf, n, "NULL"), buf;
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < num_buckets(ht->exp[t]); i++) {
            int depth = 0;
            for (bucket *b = &ht->tables[t][i]; b != NULL; b = child_of(b), depth++) {
                char where[64];
                if (depth == 0)
                    snprintf(where, sizeof(where), "table %d bucket %zu", t, i);
                else
                    snprintf(where, sizeof(where), "child %d of table %d bucket %zu", depth, t, i);
                if (p == b) return snprintf(buf, n, "%s", where), buf;
                for (int j = 0; j < SLOTS; j++) {
                    if (p == &b->slot[j])
                        return snprintf(buf, n, "the address of slot %d in %s (a line in cache)", j, where), buf;
                    if ((presence(b) >> j & 1) && p == b->slot[j])
                        return snprintf(buf, n, "the entry slot %d of %s points to", j, where), buf;
                }
            }
        }
    }
    return snprintf(buf, n, "no bucket and no entry of the table"), buf;
}

enum { CHECK_BUCKETS = 1, CHECK_ENTRIES = 2 };

/* Runs the find of key in ht and holds the lines it prefetched, in order,
 * to the ones the contract names (expected_lines): with CHECK_BUCKETS
 * each bucket it moves to, with CHECK_ENTRIES each candidate's entry.
 * The lines are compared in the order they were prefetched, so a step
 * that prefetched nothing is the first contract line's business
 * (trace_find), not this check's. */
static void check_lines(hashtable *ht, const void *key, const char *name, int what) {
    static find_trace t;
    const void *want[MAX_LINES];
    int is_bucket[MAX_LINES];
    int n = expected_lines(ht, key, want, is_bucket, MAX_LINES);
    trace_find(ht, key, name, &t);
    for (int i = 0; i < n && i < t.lines; i++) {
        if (t.line[i] == want[i] || !(what & (is_bucket[i] ? CHECK_BUCKETS : CHECK_ENTRIES))) continue;
        char got_s[160], want_s[160];
        line_name(ht, t.line[i], got_s, sizeof(got_s));
        line_name(ht, want[i], want_s, sizeof(want_s));
        if (expect_ctx_buf[0]) print_error("%s\n", expect_ctx_buf);
        fail_msg("find of %s: prefetch %d was %s; the next step reads %s%s", name, i + 1, got_s, want_s,
                 is_bucket[i] ? ", the bucket it moves to" : "");
    }
}

/* check_lines for an ik key. */
static void ik_check_lines(hashtable *ht, uint64_t key, int what) {
    char name[32];
    snprintf(name, sizeof(name), "key %#llx", (unsigned long long)key);
    check_lines(ht, &key, name, what);
}

/* 28 keys in 4 full buckets of 7 (bucket = i % 4), no chain, no rehash. */
static hashtable *ik_table(ikey *e) {
    hashtable *ht = hashtable_create(&ik_type);
    for (unsigned i = 0; i < 28; i++) {
        e[i].key = ik_key(i);
        assert_true(hashtable_add(ht, &e[i]));
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_false(hashtable_is_rehashing(ht));
    assert_int_equal(hashtable_buckets(ht), 4);
    assert_int_equal(hashtable_child_buckets(ht), 0);
    return ht;
}

/* Present: the bucket, the entry, the comparison: 3 steps. Absent with no
 * candidate in its bucket: the bucket, then the end in the same call as
 * the bucket's (empty) scan: 2 steps. Absent with one candidate of the
 * same secondary hash but another key: 3 steps, and not found. */
static void test_find_one_prefetch_per_step(void **state) {
    (void)state;
    ikey e[28];
    void *found;
    hashtable *ht = ik_table(e);
    for (unsigned i = 0; i < 28; i++) {
        assert_int_equal(ik_steps(ht, ik_key(i), &found), 3);
        assert_ptr_equal(found, &e[i]);
    }
    for (unsigned b = 0; b < 4; b++) {
        assert_int_equal(ik_steps(ht, (uint64_t)0xee << 56 | b, &found), 2);
        assert_null(found);
    }
    uint64_t twin = ik_key(5) | (uint64_t)1 << 20; /* key 5's bucket and secondary hash */
    assert_int_equal(ik_steps(ht, twin, &found), 3);
    assert_null(found);
    hashtable_release(ht);
    ht = hashtable_create(&ik_type); /* an empty table: ended before the first step */
    assert_int_equal(ik_steps(ht, ik_key(1), &found), 1);
    assert_null(found);
    hashtable_release(ht);
}

/* 16 keys in one bucket, all with the same secondary hash: a chain of
 * three buckets (6 + 6 + 4 entries), 16 candidates. Every key is found;
 * the key at place p of the chain costs its bucket number + (p + 1)
 * candidates + 1, 182 steps for the 16; an absent key with the same hash
 * bits visits the 3 buckets and the 16 candidates: 20 steps. */
static void test_find_walks_a_chain(void **state) {
    (void)state;
    ikey e[16];
    void *found;
    hashtable *ht = hashtable_create(&ik_type);
    for (unsigned j = 0; j < 16; j++) {
        e[j].key = (uint64_t)0xab << 56 | (uint64_t)j << 40;
        assert_true(hashtable_add(ht, &e[j]));
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_false(hashtable_is_rehashing(ht));
    assert_int_equal(hashtable_child_buckets(ht), 2);
    int sum = 0;
    for (unsigned j = 0; j < 16; j++) {
        sum += ik_steps(ht, e[j].key, &found);
        assert_ptr_equal(found, &e[j]);
    }
    assert_int_equal(sum, 182);
    assert_int_equal(ik_steps(ht, (uint64_t)0xab << 56 | (uint64_t)99 << 40, &found), 20);
    assert_null(found);
    hashtable_release(ht);
}

/* Mid-rehash, frozen (rehashing paused) from 4 buckets to 8. Before any
 * bucket moved: a key added meanwhile (in table 1) costs its table-0
 * bucket, then its table-1 bucket and entry: 4 steps; an absent key
 * visits both tables once: 3. After table 0's bucket 0 moved: a key of
 * that bucket is looked up in table 1 only (3 steps), and an absent key
 * of it visits table 1's bucket alone (2 steps). */
static void test_find_mid_rehash_steps(void **state) {
    (void)state;
    ikey e[29];
    void *found;
    hashtable *ht = ik_table(e);
    hashtable_pause_rehashing(ht);
    e[28].key = (uint64_t)0x40 << 56 | 28; /* table 0: bucket 0; table 1: bucket 4 */
    assert_true(hashtable_add(ht, &e[28]));
    assert_true(hashtable_is_rehashing(ht));
    assert_int_equal(ik_steps(ht, e[28].key, &found), 4);
    assert_ptr_equal(found, &e[28]);
    assert_int_equal(ik_steps(ht, ik_key(5), &found), 3);
    assert_ptr_equal(found, &e[5]);
    assert_int_equal(ik_steps(ht, (uint64_t)0xee << 56 | 1, &found), 3);
    assert_null(found);

    hashtable_resume_rehashing(ht);
    assert_true(hashtable_find(ht, &e[5].key, &found)); /* one rehash step: bucket 0 moves */
    hashtable_pause_rehashing(ht);
    assert_true(hashtable_is_rehashing(ht));
    for (unsigned i = 0; i < 28; i += 4) { /* bucket 0's keys, now in table 1 */
        assert_int_equal(ik_steps(ht, ik_key(i), &found), 3);
        assert_ptr_equal(found, &e[i]);
    }
    assert_int_equal(ik_steps(ht, e[28].key, &found), 3);
    assert_ptr_equal(found, &e[28]);
    assert_int_equal(ik_steps(ht, (uint64_t)0xee << 56 | 8, &found), 2);
    assert_null(found);
    assert_int_equal(ik_steps(ht, ik_key(5), &found), 3); /* bucket 1 has not moved */
    assert_ptr_equal(found, &e[5]);
    hashtable_resume_rehashing(ht);
    hashtable_release(ht);
}

/* Fails unless the find traced in t prefetched `want` as its line i (0:
 * the first), naming both lines in words (line_name) and `what` the
 * contract expects there. */
static void expect_line(hashtable *ht, const find_trace *t, int i, const void *want, const char *find,
                        const char *what) {
    char got_s[160], want_s[160];
    if (i < t->lines && t->line[i] == want) return;
    line_name(ht, i < t->lines ? t->line[i] : NULL, got_s, sizeof(got_s));
    line_name(ht, want, want_s, sizeof(want_s));
    fail_msg("find of %s: prefetch %d was %s; the contract says %s (%s)", find, i + 1,
             i < t->lines ? got_s : "never issued", want_s, what);
}

/* Whether b holds entry in one of its slots. */
static int in_bucket(const bucket *b, const void *entry) {
    for (int j = 0; j < SLOTS; j++)
        if ((presence(b) >> j & 1) && b->slot[j] == entry) return 1;
    return 0;
}

/* A chain in table 1: the find follows a table-1 bucket's child as it
 * follows table 0's. The table of 4 full buckets mid-rehash to 8, frozen
 * after table 0's bucket 0 moved (bucket 1 has not). Keys added meanwhile
 * go to table 1, and the eighth key of a table-1 bucket chains it: the
 * bucket keeps 6 entries, and its seventh and the eighth go to a child.
 * - Table 1's bucket 4 (table 0's bucket 0, moved): the key that started
 *   the grow, keys 4, 12 and 20 (moved there), then 4 keys added; the
 *   last, `in_moved`, is in the child. Its find: table 1's bucket, the child, the entry, the end:
 *   4 steps, prefetching those two buckets and the entry.
 * - Table 1's bucket 5 (table 0's bucket 1, not moved): 8 keys added;
 *   the last, `in_added`, is in the child. Its find: table 0's bucket 1,
 *   table 1's bucket 5, the child, the entry, the end: 5 steps.
 * An absent key with a target's bucket bits and secondary hash visits the
 * same buckets and the target's entry, its one candidate, then ends: as
 * many steps, the same lines, not found. */
static void test_find_walks_a_chain_in_table_one(void **state) {
    (void)state;
    ikey e[29], moved[4], added[8];
    static find_trace t;
    void *found;
    hashtable *ht = ik_table(e);
    hashtable_pause_rehashing(ht);
    e[28].key = (uint64_t)0x40 << 56 | 28; /* starts the grow; table 0: bucket 0; table 1: bucket 4 */
    assert_true(hashtable_add(ht, &e[28]));
    hashtable_resume_rehashing(ht);
    assert_true(hashtable_find(ht, &e[5].key, &found)); /* one rehash step: bucket 0 moves */
    hashtable_pause_rehashing(ht);
    expect_true(("the table grows from 4 buckets to 8"),
                hashtable_is_rehashing(ht) && ht->exp[0] == 2 && ht->exp[1] == 3);
    expect_eq(("rehash_idx: table 0's bucket 0 moved, bucket 1 not"), ht->rehash_idx, 1);
    for (unsigned j = 0; j < 4; j++) { /* bucket bits 4, secondary hashes 0xb0-0xb3 */
        moved[j].key = (uint64_t)(0xb0 + j) << 56 | 4;
        assert_true(hashtable_add(ht, &moved[j]));
    }
    for (unsigned j = 0; j < 8; j++) { /* bucket bits 5, secondary hashes 0xc0-0xc7 */
        added[j].key = (uint64_t)(0xc0 + j) << 56 | 5;
        assert_true(hashtable_add(ht, &added[j]));
    }
    expect_eq(("rehash_idx after the adds (rehashing paused)"), ht->rehash_idx, 1);
    expect_eq(("child buckets: one each for table 1's buckets 4 and 5"), hashtable_child_buckets(ht), 2);
    bucket *b4 = &ht->tables[1][4], *b5 = &ht->tables[1][5];
    expect_true(("table 1's bucket 4 is chained and its child holds the last key added to it"),
                child_of(b4) != NULL && in_bucket(child_of(b4), &moved[3]) && !in_bucket(b4, &moved[3]));
    expect_true(("table 1's bucket 5 is chained and its child holds the last key added to it"),
                child_of(b5) != NULL && in_bucket(child_of(b5), &added[7]) && !in_bucket(b5, &added[7]));

    /* Table 0's bucket 0 moved: table 1's bucket 4, its child, the entry. */
    trace_find(ht, &moved[3].key, "in_moved", &t);
    expect_eq(("steps of the find of in_moved (table 1's bucket 4, its child, the entry, the end)"), t.steps, 4);
    expect_true(("the find of in_moved, in the child of table 1's bucket 4, ends at its entry"), t.found == &moved[3]);
    expect_eq(("prefetches of the find of in_moved"), t.lines, 3);
    expect_line(ht, &t, 0, b4, "in_moved", "its bucket in table 1: table 0's has moved");
    expect_line(ht, &t, 1, child_of(b4), "in_moved", "the child of that bucket");
    expect_line(ht, &t, 2, &moved[3], "in_moved", "its entry, the child's one candidate");
    uint64_t absent = moved[3].key | (uint64_t)1 << 40; /* in_moved's bucket bits and secondary hash */
    trace_find(ht, &absent, "an absent twin of in_moved", &t);
    expect_eq(("steps of the find of an absent twin of in_moved (table 1's bucket 4, its child, in_moved's entry, "
               "the end)"),
              t.steps, 4);
    expect_true(("the find of an absent twin of in_moved ends not found"), t.found == NULL);
    expect_eq(("prefetches of the find of an absent twin of in_moved"), t.lines, 3);
    expect_line(ht, &t, 0, b4, "an absent twin of in_moved", "its bucket in table 1: table 0's has moved");
    expect_line(ht, &t, 1, child_of(b4), "an absent twin of in_moved", "the child of that bucket");
    expect_line(ht, &t, 2, &moved[3], "an absent twin of in_moved", "the entry of its one candidate");

    /* Table 0's bucket 1 not moved: that bucket, table 1's bucket 5, its child, the entry. */
    trace_find(ht, &added[7].key, "in_added", &t);
    expect_eq(("steps of the find of in_added (table 0's bucket 1, table 1's bucket 5, its child, the entry, the end)"),
              t.steps, 5);
    expect_true(("the find of in_added, in the child of table 1's bucket 5, ends at its entry"), t.found == &added[7]);
    expect_eq(("prefetches of the find of in_added"), t.lines, 4);
    expect_line(ht, &t, 0, &ht->tables[0][1], "in_added", "its bucket in table 0, not moved yet");
    expect_line(ht, &t, 1, b5, "in_added", "its bucket in table 1");
    expect_line(ht, &t, 2, child_of(b5), "in_added", "the child of that bucket");
    expect_line(ht, &t, 3, &added[7], "in_added", "its entry, the child's one candidate");
    absent = added[7].key | (uint64_t)1 << 40; /* in_added's bucket bits and secondary hash */
    trace_find(ht, &absent, "an absent twin of in_added", &t);
    expect_eq(("steps of the find of an absent twin of in_added (table 0's bucket 1, table 1's bucket 5, its child, "
               "in_added's entry, the end)"),
              t.steps, 5);
    expect_true(("the find of an absent twin of in_added ends not found"), t.found == NULL);
    expect_eq(("prefetches of the find of an absent twin of in_added"), t.lines, 4);
    expect_line(ht, &t, 0, &ht->tables[0][1], "an absent twin of in_added", "its bucket in table 0, not moved yet");
    expect_line(ht, &t, 1, b5, "an absent twin of in_added", "its bucket in table 1");
    expect_line(ht, &t, 2, child_of(b5), "an absent twin of in_added", "the child of that bucket");
    expect_line(ht, &t, 3, &added[7], "an absent twin of in_added", "the entry of its one candidate");
    hashtable_resume_rehashing(ht);
    hashtable_release(ht);
}

/* A shrink's rehash begins with table 1 empty, every key still in table
 * 0, and a find that began in table 0 still goes on, after table 0's
 * chain, to the key's bucket in table 1: one step per bucket visited,
 * whatever the bucket holds (hashtable_find may skip an empty table; the
 * resumable find's step count may not). 64 keys, then deletes until the
 * table starts to shrink, paused there before any bucket moved: an absent
 * key of a bucket that has not moved takes table 0's bucket, table 1's and
 * the end, 3 steps, and prefetches 2 buckets, the second table 1's. */
static void test_find_mid_shrink_visits_table_one(void **state) {
    (void)state;
    static ikey e[64];
    hashtable *ht = hashtable_create(&ik_type);
    for (unsigned j = 0; j < 64; j++) {
        e[j].key = ik_key(j);
        assert_true(hashtable_add(ht, &e[j]));
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_false(hashtable_is_rehashing(ht));
    for (unsigned j = 0; j < 64 && !hashtable_is_rehashing(ht); j++) assert_true(hashtable_pop(ht, &e[j].key, NULL));
    hashtable_pause_rehashing(ht);
    expect_true(("the deletes started a shrink"), hashtable_is_rehashing(ht) && ht->exp[1] < ht->exp[0]);
    expect_eq(("entries in table 1 as the shrink begins"), ht->used[1], 0);
    size_t idx = mask_of(ht->exp[0]); /* table 0's last bucket */
    expect_true(("table 0's last bucket has not moved yet"), !already_moved(ht, 0, idx));

    uint64_t absent = (uint64_t)0xee << 56 | idx;
    static find_trace t;
    trace_find(ht, &absent, "an absent key", &t);
    expect_eq(("steps of the find of an absent key mid-shrink, table 1 empty (table 0's bucket, table 1's, the end)"),
              t.steps, 3);
    expect_eq(("buckets prefetched by the find of an absent key mid-shrink, table 1 empty"), t.lines, 2);
    expect_true(("the find's second prefetch is the key's bucket in table 1"),
                t.line[1] == &ht->tables[1][absent & mask_of(ht->exp[1])]);
    hashtable_resume_rehashing(ht);
    hashtable_release(ht);
}

/* Only the keys decide: a stored entry whose hash equals the key's in all
 * 64 bits (bucket, secondary hash and the rest) is a candidate, and it is
 * the key only if the keys compare equal. sk_type hashes a key's first 8
 * bytes, so collide:1 and collide:2 have one hash. With collide:1 stored,
 * the find of collide:2 takes the bucket, the candidate's entry and the
 * comparison that rules it out: 3 steps, not found. With both stored,
 * each find ends at its own entry: collide:1 at the bucket's first
 * candidate (3 steps), collide:2 at its second (4 steps). */
static void test_find_compares_keys_not_hashes(void **state) {
    (void)state;
    static skey e[2];
    static find_trace t;
    const char *name[2] = {"collide:1", "collide:2"};
    hashtable_key key[2];
    for (int i = 0; i < 2; i++) key[i] = e[i].k = (hashtable_key){name[i], strlen(name[i])};
    expect_true(("collide:1 and collide:2 have one 64-bit hash"), sk_hash(&key[0]) == sk_hash(&key[1]));
    hashtable *ht = hashtable_create(&sk_type);
    assert_true(hashtable_add(ht, &e[0]));
    trace_find(ht, &key[1], name[1], &t);
    expect_eq(("steps of the find of collide:2, absent, beside collide:1 of the same hash"), t.steps, 3);
    expect_eq(("get_result of the find of collide:2, absent (1: found)"), t.found != NULL, 0);

    assert_true(hashtable_add(ht, &e[1]));
    for (int i = 0; i < 2; i++) {
        trace_find(ht, &key[i], name[i], &t);
        expect_eq(("steps of the find of %s, candidate %d of its bucket", name[i], i + 1), t.steps, 3 + i);
        expect_true(("the find of %s ends at its own entry", name[i]), t.found == &e[i]);
    }
    hashtable_release(ht);
}

/* A find changes nothing in the table: no step takes a rehash step (a
 * plain hashtable_find may), so the finds of a batch all see the table
 * they began in, and a rehash moves no entry between their steps. The
 * table of 4 full buckets mid-rehash to 8, rehashing allowed (not paused),
 * no bucket moved yet: after the find of each of its 29 keys, step by
 * step to its end, rehash_idx is still 0 and table 1 still holds only the
 * key added during the rehash. */
static void test_find_never_rehashes(void **state) {
    (void)state;
    ikey e[29];
    static find_trace t;
    hashtable *ht = ik_table(e);
    hashtable_pause_rehashing(ht);
    e[28].key = (uint64_t)0x40 << 56 | 28; /* table 0: bucket 0; table 1: bucket 4 */
    assert_true(hashtable_add(ht, &e[28]));
    hashtable_resume_rehashing(ht);
    assert_true(hashtable_is_rehashing(ht));
    expect_eq(("rehash_idx before the finds"), ht->rehash_idx, 0);
    for (unsigned i = 0; i < 29; i++) {
        char name[32];
        snprintf(name, sizeof(name), "key %#llx", (unsigned long long)e[i].key);
        trace_find(ht, &e[i].key, name, &t);
        expect_true(("the find of %s ends at its entry", name), t.found == &e[i]);
        expect_eq(("rehash_idx after the find of %s", name), ht->rehash_idx, 0);
        expect_eq(("entries in table 1 after the find of %s", name), ht->used[1], 1);
    }
    hashtable_release(ht);
}

/* Every find of four tables, each held to the lines the contract names
 * (check_lines, `what` says which kind): the 4 full buckets (present keys,
 * absent keys with no candidate, an absent key with a candidate); a chain
 * of three buckets; a table mid-rehash from 4 buckets to 8 before any
 * bucket moved and after table 0's bucket 0 moved; and db0's keys,
 * present and absent, in the server's own table. */
static void check_every_find(int what) {
    ikey e[29];
    hashtable *ht = ik_table(e);
    expect_context("the table of 4 full buckets");
    for (unsigned i = 0; i < 28; i++) ik_check_lines(ht, ik_key(i), what);
    for (unsigned b = 0; b < 4; b++) ik_check_lines(ht, (uint64_t)0xee << 56 | b, what);
    ik_check_lines(ht, ik_key(5) | (uint64_t)1 << 20, what);

    expect_context("the table mid-rehash, no bucket moved yet");
    hashtable_pause_rehashing(ht);
    e[28].key = (uint64_t)0x40 << 56 | 28; /* table 0: bucket 0; table 1: bucket 4 */
    assert_true(hashtable_add(ht, &e[28]));
    assert_true(hashtable_is_rehashing(ht));
    ik_check_lines(ht, e[28].key, what);
    ik_check_lines(ht, ik_key(5), what);
    ik_check_lines(ht, (uint64_t)0xee << 56 | 1, what);
    expect_context("the table mid-rehash, table 0's bucket 0 moved");
    hashtable_resume_rehashing(ht);
    void *found;
    assert_true(hashtable_find(ht, &e[5].key, &found)); /* one rehash step: bucket 0 moves */
    hashtable_pause_rehashing(ht);
    for (unsigned i = 0; i < 28; i += 4) ik_check_lines(ht, ik_key(i), what);
    ik_check_lines(ht, e[28].key, what);
    ik_check_lines(ht, (uint64_t)0xee << 56 | 8, what);
    ik_check_lines(ht, ik_key(5), what);
    hashtable_resume_rehashing(ht);
    hashtable_release(ht);

    expect_context("a chain of three buckets");
    ht = hashtable_create(&ik_type);
    for (unsigned j = 0; j < 16; j++) {
        e[j].key = (uint64_t)0xab << 56 | (uint64_t)j << 40;
        assert_true(hashtable_add(ht, &e[j]));
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_int_equal(hashtable_child_buckets(ht), 2);
    for (unsigned j = 0; j < 16; j++) ik_check_lines(ht, e[j].key, what);
    ik_check_lines(ht, (uint64_t)0xab << 56 | (uint64_t)99 << 40, what);
    hashtable_release(ht);

    expect_context("db0's keys");
    fill_db(1000);
    for (int i = 0; i < 1200; i += 3) {
        char k[32];
        snprintf(k, sizeof(k), "key:%d", i);
        hashtable_key key = {k, strlen(k)};
        check_lines(db0.keys, &key, k, what);
    }
}

/* Each prefetch of a bucket is of the bucket the find moves to, the one
 * its next step reads: the key's bucket first (table 1's when the rehash
 * has moved table 0's), then each child of its chain, then, while the
 * table rehashes, the key's bucket in table 1; never the bucket the find
 * is leaving, which the step has just read. */
static void test_find_prefetches_the_bucket_it_moves_to(void **state) {
    (void)state;
    check_every_find(CHECK_BUCKETS);
}

/* Each prefetch of a candidate is of the entry its slot points to (the
 * pointer the slot holds), which the next step compares with the key;
 * never the slot's own address, which is inside the bucket the step has
 * just read, a line already in cache. */
static void test_find_prefetches_the_entry_not_the_slot(void **state) {
    (void)state;
    check_every_find(CHECK_ENTRIES);
}

/* ------------------------------------------------ the walk's step cap */

/* A step of the walk is one walk_step call: one visit of one key, which
 * steps its find once or prefetches its value or its value's bytes. A
 * walk of n keys takes at most n * WALK_STEPS_PER_KEY steps and stops
 * there, finds left unfinished (what is left is only not prefetched). A
 * table of 100 entries in one chain with one secondary hash, and keys
 * absent from it with the same hash bits: each of their finds alone takes
 * more than WALK_STEPS_PER_KEY steps (every bucket and every candidate of
 * the chain), so walks of 1, 2 and 3 of them stop at the cap, and so do
 * their prefetches. */
static void test_walk_stops_at_its_step_cap(void **state) {
    (void)state;
    static skey e[100];
    hashtable *ht = hashtable_create(&sk_type);
    for (unsigned j = 0; j < 100; j++) {
        e[j].bytes = (uint64_t)0xab << 56 | (uint64_t)j << 40;
        e[j].k = (hashtable_key){(const char *)&e[j].bytes, sizeof(e[j].bytes)};
        assert_true(hashtable_add(ht, &e[j]));
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_true(hashtable_child_buckets(ht) > 10);
    obj *keys[3];
    for (int i = 0; i < 3; i++) {
        uint64_t b = (uint64_t)0xab << 56 | (uint64_t)(200 + i) << 40; /* absent, same bucket and h2 */
        keys[i] = obj_create_string((const char *)&b, sizeof(b));
        void *alone;
        expect_ge(("steps the find of an absent key of the long chain takes alone"), steps_alone(ht, keys[i], &alone),
                  WALK_STEPS_PER_KEY + 1);
    }
    db d = {.keys = ht};
    int steps[3];
    void *found[3];
    for (int n = 1; n <= 3; n++) {
        nseen = 0;
        int total = memory_prefetch_walk_keys(&d, keys, n, steps, found);
        expect_le(("steps taken by a walk of %d absent keys of the long chain (WALK_STEPS_PER_KEY is %d)", n,
                   WALK_STEPS_PER_KEY),
                  total, n * WALK_STEPS_PER_KEY);
        expect_ge(("steps taken by a walk of %d absent keys of the long chain, its finds unfinished", n), total,
                  n * WALK_STEPS_PER_KEY);
        expect_le(("prefetches issued by a walk of %d absent keys of the long chain", n), nseen,
                  n * WALK_STEPS_PER_KEY);
        for (int i = 0; i < n; i++) assert_null(found[i]);
    }
    for (int i = 0; i < 3; i++) obj_decr_ref(keys[i]);
    hashtable_release(ht);
}

/* db_entry-shaped entries in an sk-hashed table, so that a walk over it
 * can step a found key's value and bytes as it does in the keyspace. The
 * {ptr, len} view of an entry's key: two in turn, as db.c's. */
static const void *de_get_key(const void *entry) {
    static hashtable_key views[2];
    static unsigned next;
    const db_entry *e = entry;
    hashtable_key *v = &views[next++ & 1];
    *v = (hashtable_key){e->key, e->keylen};
    return v;
}
static void de_free(void *entry) {
    obj_decr_ref(((db_entry *)entry)->val);
    zfree(entry);
}
static const hashtable_type de_type = {sk_hash, de_get_key, hashtable_key_compare, de_free};

static db_entry *de_create(const char *key) {
    size_t len = strlen(key);
    db_entry *e = zmalloc(offsetof(db_entry, key) + len + 1);
    memcpy(e->key, key, len + 1);
    e->keylen = (uint32_t)len;
    e->flags = 0;
    e->val = str("a value long enough to live outside its object, in RAW bytes");
    return e;
}

/* The cap counts every walk_step call: the step that ends a find, and a
 * found key's visits to its value and its bytes, as well as the find steps
 * that prefetched. A db whose table is a long chain again (keys chNNN--x:
 * their first 8 bytes, and so their hash, differ only in the digits,
 * which are neither bucket bits nor the secondary hash), its entries
 * db_entry, and one client's GETs of three keys: ch000--x, present near
 * the chain's head (its find ends in a few steps, then its value's visit
 * and its bytes'), and two absent ones whose finds alone take more than
 * WALK_STEPS_PER_KEY steps. The walk is cut at its cap: exactly
 * 3 * WALK_STEPS_PER_KEY visits, the present key's find steps and 2
 * among them. */
static void test_walk_cap_counts_every_visit(void **state) {
    (void)state;
    hashtable *ht = hashtable_create(&de_type);
    for (unsigned j = 0; j < 100; j++) {
        char k[16];
        snprintf(k, sizeof(k), "ch%03u--x", j);
        assert_true(hashtable_add(ht, de_create(k)));
    }
    hashtable_rehash_microseconds(ht, UINT64_MAX);
    assert_true(hashtable_child_buckets(ht) > 10);
    db d = {.keys = ht};
    server.prefetch_batch_max_size = 16;
    client *c = client_create(-1);
    c->db = &d;
    queue(c, "GET", "ch000--x", NULL);
    queue(c, "GET", "ch200--x", NULL);
    queue(c, "GET", "ch201--x", NULL);
    void *alone;
    for (int i = 1; i < 3; i++)
        expect_ge(("steps the find of an absent key of the long chain takes alone"),
                  steps_alone(ht, c->cmdq[i].argv[1], &alone), WALK_STEPS_PER_KEY + 1);
    memory_prefetch_reset();
    assert_int_equal(memory_prefetch_add_client(c), 1);
    memory_prefetch_run();
    memory_prefetch_probe p;
    memory_prefetch_get_probe(&p);
    assert_int_equal(p.keys, 3);
    expect_true(("the walk found ch000--x"), p.found[0] != NULL && p.found[0] == db_find_entry(&d, c->cmdq[0].argv[1]));
    expect_eq(("walk_step calls of a walk of 3 keys cut at its cap (WALK_STEPS_PER_KEY is %d)", WALK_STEPS_PER_KEY),
              p.visits, 3 * WALK_STEPS_PER_KEY);
    expect_eq(("walk_step calls: the 3 keys' find steps, and ch000--x's value and bytes"),
              p.steps[0] + p.steps[1] + p.steps[2] + 2, p.visits);
    c->db = &db0;
    client_free(c);
    hashtable_release(ht);
}

/* A pipeline longer than the batch is prefetched a window at a time: the
 * batch never holds more than the maximum, and never a key of a command
 * past its window. A lone command is not batched. */
static void test_no_prefetch_past_the_batch(void **state) {
    (void)state;
    fill_db(100);
    server.prefetch_batch_max_size = 4;
    client *c = client_create(-1);
    queue_gets(c, 10, 0);
    memory_prefetch_probe p;
    int expect[] = {4, 8, 10};
    for (int w = 0; w < 3; w++) {
        assert_int_equal(memory_prefetch_pipeline(c), expect[w]);
        memory_prefetch_get_probe(&p);
        assert_int_equal(p.keys, expect[w] - c->cmdq_pos);
        assert_int_equal(p.clients, 1);
        drop_front(c, expect[w] - c->cmdq_pos);
    }
    queue(c, "MGET", "key:1", "key:2", "key:3", "key:4", "key:5", "key:6", NULL);
    queue(c, "GET", "key:7", NULL);
    assert_int_equal(memory_prefetch_pipeline(c), 11); /* the MGET alone fills it */
    memory_prefetch_get_probe(&p);
    assert_int_equal(p.keys, 4);
    for (int k = 0; k < 4; k++) assert_true(p.steps[k] > 0);
    drop_front(c, 1);
    assert_int_equal(memory_prefetch_pipeline(c), 12); /* one command left: no batch */
    server.prefetch_batch_max_size = 0;
    queue_gets(c, 3, 0);
    assert_int_equal(memory_prefetch_pipeline(c), c->cmdq_len); /* off */
    client_free(c);
}

/* ------------------------------------------------- replies, on and off */

/* A pipeline of GET, SET, DEL, INCR and APPEND over keys, many of them
 * new, so the table grows and rehashes while it runs; it ends with an
 * ECHO whose reply marks the end. Client `who` of 4 uses the keys
 * key:N with N % 4 == who, so that its replies do not depend on how the
 * clients' commands interleave. */
static char *random_pipeline(unsigned who, int n, size_t *len) {
    size_t cap = (size_t)n * 96 + 64, off = 0;
    char *p = zmalloc(cap);
    srand(7u + who);
    for (int i = 0; i < n; i++) {
        char k[32];
        snprintf(k, sizeof(k), "key:%d", rand() % 3000 * 4 + (int)who);
        int op = rand() % 5;
        const char *cmd[] = {"GET", "SET", "DEL", "INCR", "APPEND"};
        if (op == 1 || op == 4) {
            char v[16];
            snprintf(v, sizeof(v), "%d", rand() % 1000);
            off += (size_t)snprintf(p + off, cap - off, "*3\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n",
                                    strlen(cmd[op]), cmd[op], strlen(k), k, strlen(v), v);
        } else {
            off += (size_t)snprintf(p + off, cap - off, "*2\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(cmd[op]), cmd[op],
                                    strlen(k), k);
        }
    }
    off += (size_t)snprintf(p + off, cap - off, "*2\r\n$4\r\nECHO\r\n$8\r\nEND-MARK\r\n");
    *len = off;
    return p;
}

/* Everything that comes back up to the end mark. */
static char *recv_to_mark(int fd, size_t *len) {
    static const char mark[] = "$8\r\nEND-MARK\r\n";
    size_t cap = 1 << 16, got = 0;
    char *out = zmalloc(cap);
    long long deadline = util_mstime() + 10000;
    while (got < sizeof(mark) - 1 || memcmp(out + got - (sizeof(mark) - 1), mark, sizeof(mark) - 1) != 0) {
        if (util_mstime() > deadline) fail_msg("no end mark after %zu bytes", got);
        turn();
        if (cap - got < 4096) out = zrealloc(out, cap *= 2);
        ssize_t n = read(fd, out + got, cap - got);
        if (n > 0) got += (size_t)n;
    }
    *len = got;
    return out;
}

/* Runs `conns` clients' pipelines (sent in chunks, interleaved) from the
 * same starting keyspace and returns their replies, concatenated. */
static char *run_pipelines(int batch_max, int conns, size_t *len) {
    db_empty(&db0);
    fill_db(7000); /* just below the size at which 1024 buckets grow */
    size_t buckets = hashtable_buckets(db0.keys);
    server.prefetch_batch_max_size = batch_max;
    conn k[4];
    char *req[4];
    size_t rlen[4], sent[4] = {0};
    for (int i = 0; i < conns; i++) {
        k[i] = open_conn();
        roundtrip(&k[i], "PING\r\n", "+PONG\r\n");
        req[i] = random_pipeline((unsigned)i, 4000, &rlen[i]);
    }
    for (int more = 1; more;) {
        more = 0;
        for (int i = 0; i < conns; i++) {
            size_t n = rlen[i] - sent[i] < 1500 ? rlen[i] - sent[i] : 1500;
            if (n) send_all(k[i].peer, req[i] + sent[i], n), sent[i] += n, more = 1;
        }
        turn();
    }
    char *all = NULL;
    *len = 0;
    for (int i = 0; i < conns; i++) {
        size_t n;
        char *r = recv_to_mark(k[i].peer, &n);
        if (i == conns - 1) assert_true(hashtable_buckets(db0.keys) != buckets); /* it grew, so it rehashed */
        all = zrealloc(all, *len + n);
        memcpy(all + *len, r, n);
        *len += n;
        zfree(r);
        zfree(req[i]);
        close_conn(&k[i]);
    }
    return all;
}

static void same_replies(int conns) {
    memory_prefetch_stats before, after;
    size_t off_len, on_len;
    char *off = run_pipelines(0, conns, &off_len);
    memory_prefetch_get_stats(&before);
    char *on = run_pipelines(16, conns, &on_len);
    memory_prefetch_get_stats(&after);
    assert_true(after.batches > before.batches); /* the batch did run */
    assert_int_equal(on_len, off_len);
    assert_memory_equal(on, off, off_len);
    zfree(off);
    zfree(on);
}

static void test_same_replies_prefetch_on_and_off(void **state) {
    (void)state;
    same_replies(1);
}

/* With I/O threads the batch also spans several clients' reads. */
static int setup_threads(void **state) {
    (void)state;
    loop_server_start(3, 1);
    fix_hash_seed();
    return 0;
}

static void test_same_replies_with_io_threads(void **state) {
    (void)state;
    same_replies(4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_batch_fills_and_resets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_interleaves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_follows_the_cursor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_of_none_and_of_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_finds_each_key_in_its_db, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finds_resume_across_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_moved_by_rehash_is_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_one_prefetch_per_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_walks_a_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_mid_rehash_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_walks_a_chain_in_table_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_mid_shrink_visits_table_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_compares_keys_not_hashes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_never_rehashes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_prefetches_the_bucket_it_moves_to, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_prefetches_the_entry_not_the_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_stops_at_its_step_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_cap_counts_every_visit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_prefetch_past_the_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_replies_prefetch_on_and_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_replies_with_io_threads, setup_threads, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
