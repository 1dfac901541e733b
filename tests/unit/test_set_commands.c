/* test_set_commands.c — the set commands (src/cmd_set.c) and the sorted-set
 * algebra's set inputs (src/cmd_zset_algebra.c) on a fake client (fd -1)
 * whose reply bytes are read back exactly.
 *
 * Fixed replies are those of Debian's redis-server 7.0.15 where the order
 * is fixed (an intset replies ascending); the larger tests check what no
 * fixed reply can: SSCAN visits every member of a hashtable set, SPOP's
 * and SRANDMEMBER's members are real and (where asked) distinct in each
 * of their strategies, a set emptied by any command is deleted with its
 * key, and every write signals the key it changed.
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
#include "reply.h"
#include "server.h"
#include "set.h"
#include "zmalloc.h"

static command *const runner_tables[] = {set_commands,    zset_algebra_commands, zset_commands,
                                         string_commands, keys_commands,         NULL};
#include "command_runner.h"

static int setup(void **state) {
    (void)state;
    runner_setup();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    runner_teardown();
    return 0;
}

static const char wt[] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

/* ---- fixed replies ------------------------------------------------------------ */

static void test_basic_replies(void **state) {
    (void)state;
    EXPECT(":3\r\n", "SADD", "i", "3", "1", "2", "1");
    EXPECT(":0\r\n", "SADD", "i", "2");
    EXPECT(":3\r\n", "SCARD", "i");
    EXPECT("*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", "SMEMBERS", "i");
    EXPECT(":1\r\n", "SISMEMBER", "i", "2");
    EXPECT(":0\r\n", "SISMEMBER", "i", "02");
    EXPECT(":0\r\n", "SISMEMBER", "nokey", "2");
    EXPECT("*3\r\n:1\r\n:0\r\n:1\r\n", "SMISMEMBER", "i", "1", "x", "3");
    EXPECT("*2\r\n:0\r\n:0\r\n", "SMISMEMBER", "nokey", "1", "x");
    EXPECT("*0\r\n", "SMEMBERS", "nokey");
    EXPECT(":0\r\n", "SCARD", "nokey");
    EXPECT("+set\r\n", "TYPE", "i");
    EXPECT(":1\r\n", "SREM", "i", "2", "9");
    EXPECT(":0\r\n", "SREM", "nokey", "1");
    EXPECT("$-1\r\n", "SPOP", "nokey");
    EXPECT("*0\r\n", "SPOP", "nokey", "2");
    EXPECT("$-1\r\n", "SRANDMEMBER", "nokey");
    EXPECT("*0\r\n", "SRANDMEMBER", "nokey", "2");
    EXPECT("-ERR value is out of range, must be positive\r\n", "SPOP", "i", "-1");
    EXPECT("-ERR value is out of range, must be positive\r\n", "SPOP", "i", "x");
    EXPECT("-ERR syntax error\r\n", "SPOP", "i", "1", "2");
    EXPECT("-ERR syntax error\r\n", "SRANDMEMBER", "i", "1", "2");
    EXPECT("-ERR value is not an integer or out of range\r\n", "SRANDMEMBER", "i", "x");
    EXPECT("-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n",
           "SRANDMEMBER", "i", "-9223372036854775808");
    EXPECT("*2\r\n$1\r\n1\r\n$1\r\n3\r\n", "SRANDMEMBER", "i", "5");
    /* SMOVE */
    EXPECT(":1\r\n", "SMOVE", "i", "j", "1");
    EXPECT("*1\r\n$1\r\n1\r\n", "SMEMBERS", "j");
    EXPECT(":0\r\n", "SMOVE", "i", "j", "1");
    EXPECT(":1\r\n", "SMOVE", "i", "i", "3");
    EXPECT(":0\r\n", "SMOVE", "nokey", "j", "1");
    EXPECT(":1\r\n", "SMOVE", "i", "j", "3");
    EXPECT(":0\r\n", "EXISTS", "i");
    EXPECT("*2\r\n$1\r\n1\r\n$1\r\n3\r\n", "SMEMBERS", "j");
    /* the algebra on intsets: ascending */
    EXPECT(":4\r\n", "SADD", "a", "1", "2", "3", "4");
    EXPECT(":3\r\n", "SADD", "b", "3", "4", "5");
    EXPECT("*2\r\n$1\r\n3\r\n$1\r\n4\r\n", "SINTER", "a", "b");
    EXPECT("*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n", "SUNION", "a", "b");
    EXPECT("*2\r\n$1\r\n1\r\n$1\r\n2\r\n", "SDIFF", "a", "b");
    EXPECT("*0\r\n", "SDIFF", "a", "b", "a");
    EXPECT("*0\r\n", "SINTER", "a", "nokey");
    EXPECT(":2\r\n", "SINTERCARD", "2", "a", "b");
    EXPECT(":1\r\n", "SINTERCARD", "2", "a", "b", "LIMIT", "1");
    EXPECT("-ERR numkeys should be greater than 0\r\n", "SINTERCARD", "0", "a");
    EXPECT("-ERR Number of keys can't be greater than number of args\r\n", "SINTERCARD", "3", "a", "b");
    EXPECT("-ERR LIMIT can't be negative\r\n", "SINTERCARD", "1", "a", "LIMIT", "-1");
    EXPECT("-ERR syntax error\r\n", "SINTERCARD", "1", "a", "LIMIT");
    EXPECT(":2\r\n", "SINTERSTORE", "d", "a", "b");
    EXPECT("*2\r\n$1\r\n3\r\n$1\r\n4\r\n", "SMEMBERS", "d");
    EXPECT(":5\r\n", "SUNIONSTORE", "d", "a", "b");
    EXPECT(":2\r\n", "SDIFFSTORE", "d", "a", "b");
    EXPECT(":0\r\n", "SINTERSTORE", "d", "a", "nokey");
    EXPECT(":0\r\n", "EXISTS", "d");
    EXPECT("*2\r\n$1\r\n0\r\n*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n", "SSCAN", "a", "0");
    EXPECT("*2\r\n$1\r\n0\r\n*1\r\n$1\r\n2\r\n", "SSCAN", "a", "0", "MATCH", "2");
    EXPECT("*2\r\n$1\r\n0\r\n*0\r\n", "SSCAN", "nokey", "0");
    EXPECT("-ERR invalid cursor\r\n", "SSCAN", "a", "-1");
    EXPECT("-ERR syntax error\r\n", "SSCAN", "a", "0", "NOSCORES");
}

static void test_resp3_shapes(void **state) {
    (void)state;
    tc->resp = 3;
    EXPECT(":2\r\n", "SADD", "i", "1", "2");
    EXPECT("~2\r\n$1\r\n1\r\n$1\r\n2\r\n", "SMEMBERS", "i");
    EXPECT("~0\r\n", "SMEMBERS", "nokey");
    EXPECT("~2\r\n$1\r\n1\r\n$1\r\n2\r\n", "SINTER", "i", "i");
    EXPECT("~0\r\n", "SINTER", "i", "nokey");
    EXPECT("~2\r\n$1\r\n1\r\n$1\r\n2\r\n", "SUNION", "i");
    EXPECT("*2\r\n$1\r\n1\r\n$1\r\n2\r\n", "SRANDMEMBER", "i", "2");
    EXPECT("_\r\n", "SPOP", "nokey");
    EXPECT("~0\r\n", "SPOP", "nokey", "1");
    EXPECT("~2\r\n$1\r\n1\r\n$1\r\n2\r\n", "SPOP", "i", "2");
}

static void test_wrong_type(void **state) {
    (void)state;
    EXPECT("+OK\r\n", "SET", "str", "v");
    EXPECT(":1\r\n", "SADD", "s", "a");
    EXPECT(wt, "SADD", "str", "a");
    EXPECT(wt, "SREM", "str", "a");
    EXPECT(wt, "SMEMBERS", "str");
    EXPECT(wt, "SISMEMBER", "str", "a");
    EXPECT(wt, "SMISMEMBER", "str", "a");
    EXPECT(wt, "SCARD", "str");
    EXPECT(wt, "SPOP", "str");
    EXPECT(wt, "SPOP", "str", "1");
    EXPECT(wt, "SRANDMEMBER", "str");
    EXPECT(wt, "SRANDMEMBER", "str", "1");
    EXPECT(wt, "SMOVE", "str", "s", "a");
    EXPECT(wt, "SMOVE", "s", "str", "a");
    EXPECT(":0\r\n", "SMOVE", "nokey", "str", "a");
    EXPECT(wt, "SINTER", "nokey", "str");
    EXPECT(wt, "SUNION", "s", "str");
    EXPECT(wt, "SDIFF", "nokey", "str");
    EXPECT(wt, "SINTERCARD", "2", "nokey", "str");
    EXPECT(wt, "SINTERSTORE", "d", "s", "str");
    EXPECT(wt, "SSCAN", "str", "0");
    EXPECT(wt, "GET", "s");
    EXPECT(wt, "ZADD", "s", "1", "a");
    EXPECT(wt, "ZRANGE", "s", "0", "-1");
    EXPECT(wt, "ZUNION", "2", "s", "str");
}

/* ---- the sorted-set algebra takes sets ---------------------------------------- */

static void test_zset_algebra_with_sets(void **state) {
    (void)state;
    EXPECT(":3\r\n", "ZADD", "z", "1", "a", "2", "b", "3", "c");
    EXPECT(":3\r\n", "SADD", "s", "b", "c", "d");
    EXPECT(":2\r\n", "SADD", "n", "1", "2");
    EXPECT("*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nd\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n3\r\n$1\r\nc\r\n$1\r\n4\r\n", "ZUNION",
           "2", "z", "s", "WITHSCORES");
    EXPECT("*4\r\n$1\r\nb\r\n$1\r\n7\r\n$1\r\nc\r\n$1\r\n9\r\n", "ZINTER", "2", "z", "s", "WEIGHTS", "2", "3",
           "WITHSCORES");
    EXPECT("*6\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\nd\r\n$1\r\n2\r\n", "ZINTER", "2", "s", "s",
           "WITHSCORES");
    EXPECT("*2\r\n$1\r\nd\r\n$1\r\n1\r\n", "ZDIFF", "2", "s", "z", "WITHSCORES");
    EXPECT("*0\r\n", "ZDIFF", "2", "s", "s");
    EXPECT(":2\r\n", "ZINTERCARD", "2", "z", "s");
    EXPECT(":0\r\n", "ZINTERCARD", "2", "s", "n");
    EXPECT(":2\r\n", "ZUNIONSTORE", "d", "1", "n");
    EXPECT("+zset\r\n", "TYPE", "d");
    EXPECT("*4\r\n$1\r\n1\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n1\r\n", "ZRANGE", "d", "0", "-1", "WITHSCORES");
    EXPECT(":4\r\n", "ZUNIONSTORE", "s", "2", "s", "z"); /* a set replaced by its own union */
    EXPECT("+zset\r\n", "TYPE", "s");
    EXPECT(":0\r\n", "ZINTERSTORE", "d", "2", "n", "z");
    EXPECT(":0\r\n", "EXISTS", "d");
    EXPECT(":1\r\n", "SADD", "s2", "x");
    EXPECT("+OK\r\n", "SET", "str", "v");
    EXPECT(wt, "ZUNIONSTORE", "d", "2", "s2", "str");
}

/* ---- what fixed replies cannot show ------------------------------------------- */

/* key gets m0 .. m<n-1> (strings, so a listpack or a hashtable). */
static void fill(const char *key, int n) {
    for (int i = 0; i < n; i++) {
        char m[16];
        snprintf(m, sizeof(m), "m%d", i);
        zfree(RUN("SADD", key, m));
    }
}

static int member_index(const char *m) { return m[0] == 'm' ? atoi(m + 1) : -1; }

static void test_sscan_visits_every_member(void **state) {
    (void)state;
    fill("big", 1000);
    EXPECT("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "big");
    static int seen[1000];
    memset(seen, 0, sizeof(seen));
    char cursor[32] = "0";
    int calls = 0;
    do {
        char *r = RUN("SSCAN", "big", cursor, "COUNT", "50");
        bulks items;
        const char *p = r + 4; /* "*2\r\n" */
        assert_memory_equal(r, "*2\r\n", 4);
        long clen = strtol(p + 1, (char **)&p, 10);
        p += 2;
        memcpy(cursor, p, (size_t)clen);
        cursor[clen] = '\0';
        p += clen + 2;
        parse_bulks(p, "*~", &items);
        for (long i = 0; i < items.n; i++) {
            int k = member_index(items.v[i]);
            assert_true(k >= 0 && k < 1000);
            seen[k]++;
        }
        free_bulks(&items);
        zfree(r);
        assert_true(++calls < 10000);
    } while (strcmp(cursor, "0"));
    for (int i = 0; i < 1000; i++) assert_true(seen[i] >= 1);
}

/* n members from key, each one of m0 .. m<size-1>, distinct if asked. */
static void check_members(char *r, long want_n, int size, int distinct) {
    bulks b;
    parse_bulks(r, "*~", &b);
    assert_int_equal(b.n, want_n);
    static int seen[1000];
    memset(seen, 0, sizeof(seen));
    for (long i = 0; i < b.n; i++) {
        int k = member_index(b.v[i]);
        assert_true(k >= 0 && k < size);
        if (distinct) assert_int_equal(seen[k], 0);
        seen[k]++;
    }
    free_bulks(&b);
    zfree(r);
}

static void test_srandmember_cases(void **state) {
    (void)state;
    const int sizes[] = {50, 1000}; /* a listpack, a hashtable */
    for (int s = 0; s < 2; s++) {
        int n = sizes[s];
        EXPECT(":1\r\n", "SADD", "k", "m0");
        fill("k", n);
        check_members(RUN("SRANDMEMBER", "k", "5"), 5, n, 1);                         /* few: drawn until distinct */
        check_members(RUN("SRANDMEMBER", "k", s ? "900" : "45"), s ? 900 : 45, n, 1); /* most: a copy shrunk */
        check_members(RUN("SRANDMEMBER", "k", "-70"), 70, n, 0);                      /* repeats allowed */
        check_members(RUN("SRANDMEMBER", "k", "2000"), n, n, 1);                      /* all of it */
        check_members(RUN("SRANDMEMBER", "k", "1"), 1, n, 1);
        EXPECT("*0\r\n", "SRANDMEMBER", "k", "0");
        char buf[16];
        snprintf(buf, sizeof(buf), ":%d\r\n", n);
        EXPECT(buf, "SCARD", "k"); /* nothing was removed */
        EXPECT(":1\r\n", "DEL", "k");
    }
}

static void test_spop_strategies(void **state) {
    (void)state;
    /* A few (one by one), most (the rest moved out), all (the key goes). */
    const char *counts[] = {"10", "950", "1000", "5000"};
    const long left[] = {990, 50, 0, 0};
    for (int w = 0; w < 4; w++) {
        fill("k", 1000);
        runner_modified = 0;
        check_members(RUN("SPOP", "k", counts[w]), 1000 - left[w], 1000, 1);
        assert_int_equal(runner_modified, 1);
        char buf[16];
        snprintf(buf, sizeof(buf), ":%ld\r\n", left[w]);
        EXPECT(buf, "SCARD", "k");
        zfree(RUN("DEL", "k"));
    }
    /* What SPOP returned is gone; what stayed is still there. */
    fill("k", 100);
    char *r = RUN("SPOP", "k", "90");
    bulks b;
    parse_bulks(r, "*~", &b);
    for (long i = 0; i < b.n; i++) EXPECT(":0\r\n", "SISMEMBER", "k", b.v[i]);
    free_bulks(&b);
    zfree(r);
    EXPECT(":10\r\n", "SCARD", "k");
}

static void test_emptied_sets_are_deleted(void **state) {
    (void)state;
    static const char *const ways[][6] = {
        {"SREM", "k", "m0", "m1", "m2"},
        {"SPOP", "k", "3"},
        {"SPOP", "k", "10"},
        {"SMOVE", "k", "other", "m0"},
    };
    for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
        int argc = 0;
        while (argc < 6 && ways[w][argc]) argc++;
        fill("k", w == 3 ? 1 : 3);
        zfree(run_argv(argc, ways[w]));
        EXPECT(":0\r\n", "EXISTS", "k");
    }
    fill("k", 1);
    zfree(RUN("SPOP", "k"));
    EXPECT(":0\r\n", "EXISTS", "k");
}

/* Each write signals the keys it changed, and only when it changed them. */
static void test_writes_signal(void **state) {
    (void)state;
    struct {
        int want;
        const char *argv[6];
    } steps[] = {
        {1, {"SADD", "a", "1", "2"}},
        {0, {"SADD", "a", "1"}},
        {0, {"SREM", "a", "9"}},
        {1, {"SREM", "a", "2"}},
        {2, {"SMOVE", "a", "b", "1"}},
        {0, {"SMOVE", "a", "b", "1"}},
        {1, {"SADD", "a", "1"}},
        {1, {"SMOVE", "a", "b", "1"}}, /* b had it: only the source changed */
        {1, {"SUNIONSTORE", "c", "b"}},
        {1, {"SINTERSTORE", "c", "nokey"}},
        {0, {"SDIFFSTORE", "c", "nokey"}},
        {1, {"SPOP", "b"}},
        {0, {"SPOP", "b"}},
        {0, {"SINTER", "a", "b"}},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        int argc = 0;
        while (argc < 6 && steps[i].argv[argc]) argc++;
        runner_modified = 0;
        zfree(run_argv(argc, steps[i].argv));
        if (runner_modified != steps[i].want)
            fail_msg("step %zu (%s): %d signals, want %d", i, steps[i].argv[0], runner_modified, steps[i].want);
    }
}

/* A non-integer into an intset, a long member into a listpack: the
 * commands see the conversions only through OBJECT ENCODING. */
static void test_encodings(void **state) {
    (void)state;
    long long saved = set_max_intset_entries;
    EXPECT(":2\r\n", "SADD", "e", "1", "2");
    EXPECT("$6\r\nintset\r\n", "OBJECT", "ENCODING", "e");
    EXPECT(":1\r\n", "SADD", "e", "x");
    EXPECT("$8\r\nlistpack\r\n", "OBJECT", "ENCODING", "e");
    EXPECT(":1\r\n", "SADD", "e", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    EXPECT("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "e");
    set_max_intset_entries = 2;
    EXPECT(":3\r\n", "SADD", "f", "1", "2", "3");
    EXPECT("$8\r\nlistpack\r\n", "OBJECT", "ENCODING", "f"); /* the hint passed the intset limit */
    EXPECT(":2\r\n", "SADD", "g", "1", "2");
    EXPECT(":1\r\n", "SADD", "g", "3");
    EXPECT("$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "g");
    set_max_intset_entries = saved;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_basic_replies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zset_algebra_with_sets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sscan_visits_every_member, setup, teardown),
        cmocka_unit_test_setup_teardown(test_srandmember_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spop_strategies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emptied_sets_are_deleted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes_signal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_encodings, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
