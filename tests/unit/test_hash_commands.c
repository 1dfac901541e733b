/* test_hash_commands.c — the hash commands (src/cmd_hash.c) on a fake
 * client (fd -1) whose reply bytes are read back exactly.
 *
 * The fixed replies are those of Debian's redis-server 7.0.15 where Valkey
 * agrees with it, and Valkey's where they differ (HSCAN NOVALUES; the
 * differential suite's deliberate_differences.txt lists it). The larger
 * tests check what no fixed reply can: HSCAN visits every field of a
 * table-encoded hash, HRANDFIELD's fields are distinct and real, every
 * write signals its key and only a write that changed something does, and
 * a hash emptied by HDEL is deleted with its key. run() checks arity as
 * the dispatcher does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "hash.h"
#include "reply.h"
#include "server.h"
#include "zmalloc.h"

static command *const runner_tables[] = {hash_commands, string_commands, keys_commands, NULL};
#include "command_runner.h"

static int setup(void **state) {
    (void)state;
    runner_setup();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    runner_teardown();
    hash_max_listpack_entries = 512;
    hash_max_listpack_value = 64;
    return 0;
}

/* The hash at key, for hash_verify. */
static obj *hash_at(const char *key) {
    obj *k = obj_create_string(key, strlen(key));
    obj *o = db_lookup_read(&tdb, k);
    obj_decr_ref(k);
    return o;
}

/* Fills key with n fields f0..f<n-1> holding 0..n-1. */
static void fill(const char *key, int n) {
    for (int i = 0; i < n; i++) {
        char f[16], v[16];
        snprintf(f, sizeof(f), "f%d", i);
        snprintf(v, sizeof(v), "%d", i);
        zfree(RUN("HSET", key, f, v));
    }
}

/* ---- fixed replies --------------------------------------------------------------- */

static void test_set_get_delete(void **state) {
    (void)state;
    EXPECT(":3\r\n", "HSET", "h", "a", "1", "b", "2", "c", "3");
    EXPECT(":1\r\n", "HSET", "h", "a", "10", "d", "4");
    EXPECT("-ERR wrong number of arguments for 'hset' command\r\n", "HSET", "h", "a", "1", "b");
    EXPECT("-ERR wrong number of arguments for 'hmset' command\r\n", "HMSET", "h", "a");
    EXPECT("+OK\r\n", "HMSET", "h", "e", "5");
    EXPECT(":0\r\n", "HSETNX", "h", "a", "x");
    EXPECT(":1\r\n", "HSETNX", "h", "g", "7");
    EXPECT("$2\r\n10\r\n", "HGET", "h", "a");
    EXPECT("$-1\r\n", "HGET", "h", "x");
    EXPECT("$-1\r\n", "HGET", "nokey", "x");
    EXPECT("*3\r\n$2\r\n10\r\n$-1\r\n$1\r\n2\r\n", "HMGET", "h", "a", "x", "b");
    EXPECT("*2\r\n$-1\r\n$-1\r\n", "HMGET", "nokey", "a", "b");
    EXPECT(":6\r\n", "HLEN", "h");
    EXPECT(":0\r\n", "HLEN", "nokey");
    EXPECT(":2\r\n", "HSTRLEN", "h", "a");
    EXPECT(":0\r\n", "HSTRLEN", "h", "x");
    EXPECT(":1\r\n", "HEXISTS", "h", "g");
    EXPECT(":0\r\n", "HEXISTS", "h", "x");
    EXPECT("*6\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\ng\r\n", "HKEYS", "h");
    EXPECT("*6\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n7\r\n", "HVALS", "h");
    EXPECT(":2\r\n", "HDEL", "h", "a", "x", "b");
    EXPECT("*8\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\ng\r\n$1\r\n7\r\n", "HGETALL",
           "h");
    EXPECT("*0\r\n", "HGETALL", "nokey");
    EXPECT("*0\r\n", "HKEYS", "nokey");
    EXPECT(":0\r\n", "HDEL", "nokey", "a");
    assert_true(hash_verify(hash_at("h")));
}

static void test_counters(void **state) {
    (void)state;
    EXPECT(":5\r\n", "HINCRBY", "c", "n", "5");
    EXPECT(":-2\r\n", "HINCRBY", "c", "n", "-7");
    EXPECT("-ERR value is not an integer or out of range\r\n", "HINCRBY", "c", "n", "1.5");
    EXPECT(":3\r\n", "HSET", "c", "s", "abc", "max", "9223372036854775807", "f", "1.5");
    EXPECT("-ERR hash value is not an integer\r\n", "HINCRBY", "c", "s", "1");
    EXPECT("-ERR hash value is not an integer\r\n", "HINCRBY", "c", "f", "1");
    EXPECT("-ERR increment or decrement would overflow\r\n", "HINCRBY", "c", "max", "1");
    EXPECT("$3\r\n8.5\r\n", "HINCRBYFLOAT", "c", "n", "10.5");
    EXPECT("$4\r\n3008\r\n", "HINCRBYFLOAT", "c", "n", "2.9995e3");
    EXPECT("$1\r\n3\r\n", "HINCRBYFLOAT", "c", "f", "1.5");
    EXPECT("-ERR hash value is not a float\r\n", "HINCRBYFLOAT", "c", "s", "1");
    EXPECT("-ERR value is not a valid float\r\n", "HINCRBYFLOAT", "c", "n", "x");
    EXPECT("-ERR value is NaN or Infinity\r\n", "HINCRBYFLOAT", "c", "n", "inf");
    EXPECT(":1\r\n", "HSET", "c", "huge", "1e4932");
    EXPECT("-ERR increment would produce NaN or Infinity\r\n", "HINCRBYFLOAT", "c", "huge", "1e4932");
    EXPECT("-ERR value is not a valid float\r\n", "HINCRBYFLOAT", "nokey", "n", "x");
    EXPECT(":0\r\n", "EXISTS", "nokey"); /* a refused increment creates nothing */
    EXPECT("$4\r\n1.25\r\n", "HINCRBYFLOAT", "fresh", "x", "1.25");
    assert_true(hash_verify(hash_at("c")));
}

static void test_resp3_shapes(void **state) {
    (void)state;
    tc->resp = 3;
    EXPECT(":2\r\n", "HSET", "h", "a", "1", "b", "2");
    EXPECT("%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n", "HGETALL", "h");
    EXPECT("%0\r\n", "HGETALL", "nokey");
    EXPECT("*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "HRANDFIELD", "h", "5", "WITHVALUES");
    EXPECT("*2\r\n$1\r\na\r\n$1\r\nb\r\n", "HRANDFIELD", "h", "2");
    EXPECT("_\r\n", "HGET", "h", "x");
    EXPECT("_\r\n", "HRANDFIELD", "nokey");
    EXPECT(":1\r\n", "HDEL", "h", "b");
    EXPECT("*3\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n", "HRANDFIELD",
           "h", "-3", "WITHVALUES");
    EXPECT("*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n", "HSCAN", "h", "0");
}

static void test_options_and_errors(void **state) {
    (void)state;
    EXPECT(":3\r\n", "HSET", "h", "a", "1", "b", "2", "c", "3");
    EXPECT("*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n", "HRANDFIELD", "h", "3",
           "WITHVALUES");
    EXPECT("*0\r\n", "HRANDFIELD", "h", "0");
    EXPECT("*0\r\n", "HRANDFIELD", "nokey", "2");
    EXPECT("$-1\r\n", "HRANDFIELD", "nokey");
    EXPECT("-ERR syntax error\r\n", "HRANDFIELD", "h", "1", "WITHSCORES");
    EXPECT("-ERR syntax error\r\n", "HRANDFIELD", "h", "1", "WITHVALUES", "x");
    EXPECT("-ERR value is not an integer or out of range\r\n", "HRANDFIELD", "h", "x");
    EXPECT("-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n",
           "HRANDFIELD", "h", "-9223372036854775808");
    EXPECT("-ERR value is out of range\r\n", "HRANDFIELD", "h", "4611686018427387904", "WITHVALUES");
    EXPECT("*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n", "HSCAN", "h",
           "0", "COUNT", "1");
    EXPECT("*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "HSCAN", "h", "0", "MATCH", "b");
    EXPECT("*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nc\r\n", "HSCAN", "h", "0", "MATCH", "[ac]", "NOVALUES");
    EXPECT("*2\r\n$1\r\n0\r\n*0\r\n", "HSCAN", "nokey", "0");
    EXPECT("-ERR invalid cursor\r\n", "HSCAN", "h", "x");
    EXPECT("-ERR syntax error\r\n", "HSCAN", "h", "0", "COUNT", "0");
    EXPECT("-ERR syntax error\r\n", "HSCAN", "h", "0", "NOSCORES");
}

static void test_wrong_type(void **state) {
    (void)state;
    EXPECT("+OK\r\n", "SET", "s", "v");
    const char *wt = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    EXPECT(wt, "HSET", "s", "a", "1");
    EXPECT(wt, "HSETNX", "s", "a", "1");
    EXPECT(wt, "HMSET", "s", "a", "1");
    EXPECT(wt, "HGET", "s", "a");
    EXPECT(wt, "HMGET", "s", "a");
    EXPECT(wt, "HDEL", "s", "a");
    EXPECT(wt, "HLEN", "s");
    EXPECT(wt, "HSTRLEN", "s", "a");
    EXPECT(wt, "HEXISTS", "s", "a");
    EXPECT(wt, "HKEYS", "s");
    EXPECT(wt, "HVALS", "s");
    EXPECT(wt, "HGETALL", "s");
    EXPECT(wt, "HINCRBY", "s", "a", "1");
    EXPECT(wt, "HINCRBYFLOAT", "s", "a", "1");
    EXPECT(wt, "HRANDFIELD", "s");
    EXPECT(wt, "HRANDFIELD", "s", "1");
    EXPECT(wt, "HSCAN", "s", "0");
    EXPECT("$1\r\nv\r\n", "GET", "s");
    assert_int_equal(runner_modified, 1); /* the SET alone */
}

/* ---- what fixed replies cannot show ------------------------------------------------------ */

static void test_writes_signal_only_changes(void **state) {
    (void)state;
    zfree(RUN("HSET", "h", "a", "1"));
    assert_int_equal(runner_modified, 1);
    zfree(RUN("HSET", "h", "a", "1")); /* Valkey signals every HSET, changed or not */
    assert_int_equal(runner_modified, 2);
    zfree(RUN("HSETNX", "h", "a", "2"));
    assert_int_equal(runner_modified, 2);
    zfree(RUN("HSETNX", "h", "b", "2"));
    assert_int_equal(runner_modified, 3);
    zfree(RUN("HDEL", "h", "x"));
    assert_int_equal(runner_modified, 3);
    zfree(RUN("HINCRBY", "h", "a", "1"));
    zfree(RUN("HINCRBYFLOAT", "h", "a", "1"));
    zfree(RUN("HMSET", "h", "c", "3"));
    assert_int_equal(runner_modified, 6);
    zfree(RUN("HINCRBY", "h", "a", "x"));
    zfree(RUN("HGETALL", "h"));
    assert_int_equal(runner_modified, 6);
    zfree(RUN("HDEL", "h", "a", "b", "c"));
    assert_int_equal(runner_modified, 7);
    EXPECT(":0\r\n", "EXISTS", "h");
}

static void test_emptied_hash_is_deleted(void **state) {
    (void)state;
    for (int table = 0; table < 2; table++) {
        hash_max_listpack_entries = table ? 2 : 128;
        fill("k", 5);
        assert_int_equal(hash_at("k")->encoding, table ? OBJ_ENC_HT : OBJ_ENC_LISTPACK);
        EXPECT(":5\r\n", "HDEL", "k", "f0", "f1", "f2", "x", "f3", "f4", "f0");
        EXPECT(":0\r\n", "EXISTS", "k");
    }
}

static void test_hscan_visits_every_field(void **state) {
    (void)state;
    hash_max_listpack_entries = 16;
    enum { N = 500 };
    fill("big", N);
    obj *o = hash_at("big");
    assert_int_equal(o->encoding, OBJ_ENC_HT);
    assert_true(hash_verify(o));
    static int seen[N];
    memset(seen, 0, sizeof(seen));
    char cursor[32] = "0";
    int calls = 0;
    do {
        char *r = RUN("HSCAN", "big", cursor, "COUNT", "7");
        /* *2\r\n$<n>\r\n<cursor>\r\n*<m>\r\n then fields and values. */
        char *p = strchr(r + 4, '\n') + 1;
        char *end = strchr(p, '\r');
        memcpy(cursor, p, (size_t)(end - p));
        cursor[end - p] = '\0';
        p = strchr(end + 2, '\n') + 1;
        while (*p) {
            int f, v;
            assert_int_equal(sscanf(p, "$%*d\r\nf%d\r\n$%*d\r\n%d\r\n", &f, &v), 2);
            assert_int_equal(f, v);
            assert_true(f >= 0 && f < N);
            seen[f]++;
            for (int skip = 0; skip < 4; skip++) p = strchr(p, '\n') + 1;
        }
        zfree(r);
        assert_true(++calls < 10000);
    } while (strcmp(cursor, "0"));
    for (int i = 0; i < N; i++) assert_true(seen[i] >= 1);
    assert_true(calls > 1); /* a table answers in steps */
}

/* Parses an array reply of bulk fields f<i>: how many, each checked. */
static int count_fields(const char *r, int n, int *seen) {
    int len;
    assert_int_equal(sscanf(r, "*%d", &len), 1);
    const char *p = strchr(r, '\n') + 1;
    for (int k = 0; k < len; k++) {
        int f;
        assert_int_equal(sscanf(p, "$%*d\r\nf%d\r\n", &f), 1);
        assert_true(f >= 0 && f < n);
        seen[f]++;
        p = strchr(strchr(p, '\n') + 1, '\n') + 1;
    }
    assert_int_equal(*p, '\0');
    return len;
}

static void test_hrandfield_cases(void **state) {
    (void)state;
    for (int table = 0; table < 2; table++) {
        enum { N = 60 };
        hash_max_listpack_entries = table ? 8 : 128;
        const char *key = table ? "r1" : "r0";
        fill(key, N);
        assert_int_equal(hash_at(key)->encoding, table ? OBJ_ENC_HT : OBJ_ENC_LISTPACK);
        const char *counts[] = {"1", "5", "19", "21", "40", "59", "60", "100", "-1", "-200"};
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            int seen[N] = {0};
            char *r = RUN("HRANDFIELD", key, counts[c]);
            long want = strtol(counts[c], NULL, 10);
            int got = count_fields(r, N, seen);
            zfree(r);
            assert_int_equal(got, want < 0 ? -want : (want < N ? want : N));
            if (want > 0)
                for (int i = 0; i < N; i++) assert_true(seen[i] <= 1);
        }
        assert_true(hash_verify(hash_at(key)));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_set_get_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes_signal_only_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emptied_hash_is_deleted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hscan_visits_every_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hrandfield_cases, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
