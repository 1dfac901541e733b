/* test_memory_prefetch.c — step 6's batch (src/memory_prefetch.c): how it
 * fills, what its walk does to each find, and that it changes no reply.
 *
 * The batch and walk tests use the server's db0 and fake clients (fd -1)
 * whose parsed pipelines are built here; the reply tests run the real
 * server loop with clients on socketpairs (loop_test.h), with the batch
 * on and off, and compare every byte that comes back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#include "loop_test.h"

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
    (void)state;
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
    c->cmdq[c->cmdq_len++] = (parsed_cmd){argc, argv};
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
    fill_db(100);
    server.prefetch_batch_max_size = 4;
    client *a = client_create(-1), *b = client_create(-1), *c = client_create(-1);
    queue_gets(a, 3, 0);
    queue_gets(b, 3, 10);
    queue_gets(c, 1, 20);
    memory_prefetch_reset();
    assert_int_equal(memory_prefetch_add_client(a), 1);
    assert_int_equal(memory_prefetch_add_client(b), 1); /* one of b's three keys fits */
    assert_int_equal(memory_prefetch_add_client(c), 0); /* 4 keys: full */
    memory_prefetch_run();
    memory_prefetch_probe p;
    memory_prefetch_get_probe(&p);
    assert_int_equal(p.clients, 2);
    assert_int_equal(p.keys, 4);
    assert_int_equal(p.end[0], 3);
    assert_int_equal(p.end[1], 1);
    assert_int_equal(p.trace[0], 0);
    for (int k = 0; k < 4; k++) assert_non_null(p.found[k]);
    assert_int_not_equal(p.cursor, 0); /* the walk ended away from key 0 ... */

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

/* Steps one find to its end, giving up (and failing) after 1000 steps; the
 * result goes to *found (NULL when not found). Once ended, it stays ended. */
static int ik_steps(hashtable *ht, uint64_t key, void **found) {
    hashtable_incremental_find_state s;
    hashtable_incremental_find_init(&s, ht, &key);
    int n = 1;
    while (hashtable_incremental_find_step(&s))
        if (++n > 1000) fail_msg("the find of %#llx never ended", (unsigned long long)key);
    *found = NULL;
    int r = hashtable_incremental_find_get_result(&s, found);
    assert_int_equal(r, *found != NULL);
    assert_int_equal(hashtable_incremental_find_step(&s), 0); /* stays ended ... */
    void *again = NULL;
    assert_int_equal(hashtable_incremental_find_get_result(&s, &again), r); /* ... where it ended */
    assert_ptr_equal(again, *found);
    return n;
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
        cmocka_unit_test_setup_teardown(test_finds_resume_across_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_moved_by_rehash_is_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_one_prefetch_per_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_walks_a_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_mid_rehash_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_prefetch_past_the_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_replies_prefetch_on_and_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_replies_with_io_threads, setup_threads, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
