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
#include "networking.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#include "loop_test.h"

static int setup(void **state) {
    (void)state;
    loop_server_start(1, 0);
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

/* The number of steps one find takes alone, run to the end. */
static int steps_alone(hashtable *ht, obj *key, void **found) {
    hashtable_key k = {key->ptr, key->len};
    hashtable_incremental_find_state s;
    hashtable_incremental_find_init(&s, ht, &k);
    int n = 1;
    while (hashtable_incremental_find_step(&s)) n++;
    if (!hashtable_incremental_find_get_result(&s, found)) *found = NULL;
    return n;
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
        cmocka_unit_test_setup_teardown(test_finds_resume_across_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_moved_by_rehash_is_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_prefetch_past_the_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_replies_prefetch_on_and_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_replies_with_io_threads, setup_threads, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
