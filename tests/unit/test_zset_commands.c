/* test_zset_commands.c — the sorted-set commands (step 8, src/cmd_zset.c)
 * on a fake client (fd -1) whose reply bytes are read back exactly.
 *
 * The fixed replies below are those of Debian's redis-server 7.0.15 where
 * Valkey agrees with it, and Valkey's where they differ (scores in the
 * shortest form, ZRANK WITHSCORE, ZSCAN NOSCORES; the differential suite's
 * deliberate_differences.txt lists each). The larger tests check what no
 * fixed reply can: ZSCAN visits every member, ZRANDMEMBER's members are
 * distinct and real, a set emptied by any command is deleted with its key.
 * The dispatcher checks arity; run() refuses a wrong arity the same way.
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
#include "zmalloc.h"

static command *const runner_tables[] = {zset_commands, string_commands, keys_commands, NULL};
#include "command_runner.h"

static int setup(void **state) {
    (void)state;
    runner_setup();
    server.proto_max_bulk_len = 512LL * 1024 * 1024; /* bounds SETBIT's offset */
    return 0;
}

static int teardown(void **state) {
    (void)state;
    runner_teardown();
    return 0;
}

/* ---- fixed replies ------------------------------------------------------------ */

static void test_zadd_and_reads(void **state) {
    (void)state;
    EXPECT(":3\r\n", "ZADD", "z", "1", "a", "2", "b", "3", "c");
    EXPECT(":0\r\n", "ZADD", "z", "1", "a");
    EXPECT(":2\r\n", "ZADD", "z", "CH", "5", "a", "2", "b", "9", "d");
    EXPECT(":4\r\n", "ZCARD", "z");
    EXPECT("$1\r\n5\r\n", "ZSCORE", "z", "a");
    EXPECT("$-1\r\n", "ZSCORE", "z", "x");
    EXPECT("*3\r\n$1\r\n5\r\n$-1\r\n$1\r\n2\r\n", "ZMSCORE", "z", "a", "x", "b");
    EXPECT("*2\r\n$-1\r\n$-1\r\n", "ZMSCORE", "nokey", "a", "b");
    EXPECT("$3\r\n6.5\r\n", "ZINCRBY", "z", "1.5", "a");
    EXPECT("$-1\r\n", "ZADD", "z", "INCR", "NX", "1", "a");
    EXPECT("$-1\r\n", "ZADD", "z", "INCR", "GT", "-1", "a");
    EXPECT(":0\r\n", "ZADD", "z", "GT", "CH", "1", "a");
    EXPECT(":1\r\n", "ZADD", "z", "LT", "CH", "1", "a");
    EXPECT("-ERR XX and NX options at the same time are not compatible\r\n", "ZADD", "z", "NX", "XX", "1", "a");
    EXPECT("-ERR GT, LT, and/or NX options at the same time are not compatible\r\n", "ZADD", "z", "GT", "LT", "1", "a");
    EXPECT("-ERR INCR option supports a single increment-element pair\r\n", "ZADD", "z", "INCR", "1", "a", "2", "b");
    EXPECT("-ERR syntax error\r\n", "ZADD", "z", "1", "a", "2");
    EXPECT("-ERR value is not a valid float\r\n", "ZADD", "z", "nan", "a");
    EXPECT("-ERR value is not a valid float\r\n", "ZADD", "z", "1", "a", "x", "b");
    EXPECT(":0\r\n", "ZADD", "nokey", "XX", "1", "a");
    EXPECT(":0\r\n", "EXISTS", "nokey");
    EXPECT(":1\r\n", "ZADD", "z", "inf", "top");
    EXPECT("-ERR resulting score is not a number (NaN)\r\n", "ZINCRBY", "z", "-inf", "top");
    EXPECT("$3\r\n0.1\r\n", "ZINCRBY", "z", "0.1", "new"); /* Valkey: shortest form */
    EXPECT(":2\r\n", "ZRANK", "z", "b");
    EXPECT(":3\r\n", "ZREVRANK", "z", "b");
    EXPECT("*2\r\n:2\r\n$1\r\n2\r\n", "ZRANK", "z", "b", "WITHSCORE");
    EXPECT("*-1\r\n", "ZRANK", "z", "x", "WITHSCORE");
    EXPECT("$-1\r\n", "ZRANK", "z", "x");
    EXPECT("-ERR syntax error\r\n", "ZRANK", "z", "b", "WITHSCORES");
    EXPECT("-ERR wrong number of arguments for 'zrank' command\r\n", "ZRANK", "z", "b", "WITHSCORE", "x");
}

static void test_ranges(void **state) {
    (void)state;
    EXPECT(":6\r\n", "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f");
    EXPECT("*2\r\n$1\r\nc\r\n$1\r\nd\r\n", "ZRANGE", "z", "2", "3");
    EXPECT("*2\r\n$1\r\nf\r\n$1\r\n6\r\n", "ZRANGE", "z", "-1", "-1", "WITHSCORES");
    EXPECT("*2\r\n$1\r\nf\r\n$1\r\ne\r\n", "ZREVRANGE", "z", "0", "1");
    EXPECT("*0\r\n", "ZRANGE", "z", "4", "2");
    EXPECT("*2\r\n$1\r\nc\r\n$1\r\nd\r\n", "ZRANGE", "z", "(2", "4", "BYSCORE");
    EXPECT("*2\r\n$1\r\nd\r\n$1\r\nc\r\n", "ZRANGE", "z", "4", "(2", "BYSCORE", "REV");
    EXPECT("*2\r\n$1\r\ne\r\n$1\r\nd\r\n", "ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "1", "2");
    EXPECT("*0\r\n", "ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "-1", "2");
    EXPECT("*5\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n", "ZRANGEBYSCORE", "z", "-inf", "+inf",
           "LIMIT", "1", "-1");
    EXPECT("-ERR min or max is not a float\r\n", "ZRANGEBYSCORE", "z", "x", "1");
    EXPECT("-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n", "ZRANGE", "z",
           "0", "1", "LIMIT", "0", "1");
    EXPECT("-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n", "ZRANGE", "z", "-", "+",
           "BYLEX", "WITHSCORES");
    EXPECT("-ERR syntax error\r\n", "ZRANGEBYSCORE", "z", "0", "1", "REV");
    EXPECT("*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n", "ZRANGEBYLEX", "z", "[b", "[d");
    EXPECT("*2\r\n$1\r\nd\r\n$1\r\nc\r\n", "ZREVRANGEBYLEX", "z", "(e", "(b");
    EXPECT("-ERR min or max not valid string range item\r\n", "ZRANGEBYLEX", "z", "b", "d");
    EXPECT(":3\r\n", "ZCOUNT", "z", "(1", "4");
    EXPECT(":0\r\n", "ZCOUNT", "z", "7", "9");
    EXPECT(":6\r\n", "ZLEXCOUNT", "z", "-", "+");
    EXPECT(":1\r\n", "ZREMRANGEBYRANK", "z", "-1", "-1");
    EXPECT(":2\r\n", "ZREMRANGEBYSCORE", "z", "(1", "3");
    EXPECT(":1\r\n", "ZREMRANGEBYLEX", "z", "[d", "[d");
    EXPECT("*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\ne\r\n$1\r\n5\r\n", "ZRANGE", "z", "0", "-1", "WITHSCORES");
}

static void test_resp3_shapes(void **state) {
    (void)state;
    tc->resp = 3;
    EXPECT(":2\r\n", "ZADD", "z", "1.5", "a", "2", "b");
    EXPECT(",1.5\r\n", "ZSCORE", "z", "a");
    EXPECT("_\r\n", "ZSCORE", "z", "x");
    EXPECT("*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,2\r\n", "ZRANGE", "z", "0", "-1", "WITHSCORES");
    EXPECT("*1\r\n*2\r\n$1\r\nb\r\n,2\r\n", "ZRANGEBYSCORE", "z", "(1.5", "+inf", "WITHSCORES");
    EXPECT("*2\r\n:0\r\n,1.5\r\n", "ZRANK", "z", "a", "WITHSCORE");
    EXPECT("_\r\n", "ZRANK", "z", "x", "WITHSCORE");
    EXPECT("*2\r\n$1\r\na\r\n,1.5\r\n", "ZPOPMIN", "z");          /* no count: flat */
    EXPECT("*1\r\n*2\r\n$1\r\nb\r\n,2\r\n", "ZPOPMAX", "z", "5"); /* a count: pairs */
    EXPECT(":0\r\n", "EXISTS", "z");
    EXPECT("*0\r\n", "ZPOPMIN", "z", "1");
    tc->resp = 2;
}

static void test_wrong_type(void **state) {
    (void)state;
    EXPECT("+OK\r\n", "SET", "s", "v");
    EXPECT(":1\r\n", "ZADD", "z", "1", "a");
    static const char wt[] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    EXPECT(wt, "ZADD", "s", "1", "a");
    EXPECT(wt, "ZRANGE", "s", "0", "-1");
    EXPECT(wt, "ZSCAN", "s", "0");
    EXPECT(wt, "ZMSCORE", "s", "a");
    EXPECT(wt, "GET", "z");
    EXPECT(wt, "APPEND", "z", "x");
    EXPECT(wt, "INCR", "z");
    EXPECT(wt, "STRLEN", "z");
    EXPECT(wt, "GETRANGE", "z", "0", "1");
    EXPECT(wt, "SETRANGE", "z", "0", "x");
    EXPECT(wt, "GETBIT", "z", "0");
    EXPECT(wt, "SETBIT", "z", "0", "1");
    EXPECT(wt, "BITCOUNT", "z");
    EXPECT("-ERR The specified keys must contain string values\r\n", "LCS", "z", "s"); /* LCS's own text */
    EXPECT(wt, "GETDEL", "z");
    EXPECT(wt, "GETEX", "z");
    EXPECT(wt, "GETSET", "z", "v");
    EXPECT("*2\r\n$-1\r\n$1\r\nv\r\n", "MGET", "z", "s");
    EXPECT("+zset\r\n", "TYPE", "z");
    EXPECT(":1\r\n", "COPY", "z", "z2");
    EXPECT(":1\r\n", "ZADD", "z2", "2", "b");
    EXPECT(":1\r\n", "ZCARD", "z");
    EXPECT("+OK\r\n", "SET", "z", "now a string");
    EXPECT("+string\r\n", "TYPE", "z");
}

/* ---- what fixed replies cannot show ------------------------------------------- */

static void fill(const char *key, int n) {
    for (int i = 0; i < n; i++) {
        char m[16], s[16];
        snprintf(m, sizeof(m), "m%d", i);
        snprintf(s, sizeof(s), "%d", i);
        zfree(RUN("ZADD", key, s, m));
    }
}

static int member_index(const char *m) { return m[0] == 'm' ? atoi(m + 1) : -1; }

static void test_zscan_visits_every_member(void **state) {
    (void)state;
    fill("big", 1000);
    static int seen[1000];
    memset(seen, 0, sizeof(seen));
    char cursor[32] = "0";
    int calls = 0;
    do {
        char *r = RUN("ZSCAN", "big", cursor, "COUNT", "50");
        bulks top, items;
        const char *p = r + 4; /* "*2\r\n" */
        assert_memory_equal(r, "*2\r\n", 4);
        long clen = strtol(p + 1, (char **)&p, 10);
        p += 2;
        memcpy(cursor, p, (size_t)clen);
        cursor[clen] = '\0';
        p += clen + 2;
        parse_bulks(p, "*", &items);
        assert_int_equal(items.n % 2, 0);
        for (long i = 0; i < items.n; i += 2) {
            int k = member_index(items.v[i]);
            assert_true(k >= 0 && k < 1000);
            assert_int_equal(atoi(items.v[i + 1]), k); /* the score travels with its member */
            seen[k]++;
        }
        free_bulks(&items);
        (void)top;
        zfree(r);
        assert_true(++calls < 10000);
    } while (strcmp(cursor, "0"));
    for (int i = 0; i < 1000; i++) assert_true(seen[i] >= 1);
    EXPECT("*2\r\n$1\r\n0\r\n*0\r\n", "ZSCAN", "nokey", "0");
    EXPECT("-ERR invalid cursor\r\n", "ZSCAN", "big", "-1");
}

static void check_random(const char *count, long want_n, int distinct, int withscores) {
    char *r = withscores ? RUN("ZRANDMEMBER", "big", count, "WITHSCORES") : RUN("ZRANDMEMBER", "big", count);
    bulks b;
    parse_bulks(r, "*", &b);
    assert_int_equal(b.n, withscores ? want_n * 2 : want_n);
    static int seen[1000];
    memset(seen, 0, sizeof(seen));
    for (long i = 0; i < b.n; i += withscores ? 2 : 1) {
        int k = member_index(b.v[i]);
        assert_true(k >= 0 && k < 1000);
        if (withscores) assert_int_equal(atoi(b.v[i + 1]), k);
        if (distinct) assert_int_equal(seen[k], 0);
        seen[k]++;
    }
    free_bulks(&b);
    zfree(r);
}

static void test_zrandmember_cases(void **state) {
    (void)state;
    fill("big", 1000);
    check_random("5", 5, 1, 0);       /* few: sampled until distinct */
    check_random("900", 900, 1, 1);   /* most: shuffled */
    check_random("-50", 50, 0, 1);    /* negative: repeats allowed */
    check_random("2000", 1000, 1, 0); /* more than the set: all of it */
    EXPECT("*0\r\n", "ZRANDMEMBER", "big", "0");
    EXPECT("-ERR value is out of range\r\n", "ZRANDMEMBER", "big", "9223372036854775807", "WITHSCORES");
    char *one = RUN("ZRANDMEMBER", "big");
    assert_memory_equal(one, "$", 1);
    zfree(one);
}

/* LIMIT's offset jumps by rank; the range still bounds the reply. */
static void test_limit_offsets_on_a_big_set(void **state) {
    (void)state;
    fill("big", 1000); /* m<i> has score i */
    EXPECT("*3\r\n$4\r\nm601\r\n$4\r\nm602\r\n$4\r\nm603\r\n", "ZRANGEBYSCORE", "big", "(100", "900", "LIMIT", "500",
           "3");
    EXPECT("*3\r\n$4\r\nm400\r\n$4\r\nm399\r\n$4\r\nm398\r\n", "ZREVRANGEBYSCORE", "big", "900", "(100", "LIMIT", "500",
           "3");
    EXPECT("*1\r\n$4\r\nm900\r\n", "ZRANGEBYSCORE", "big", "(100", "900", "LIMIT", "799", "3");
    EXPECT("*0\r\n", "ZRANGEBYSCORE", "big", "(100", "900", "LIMIT", "800", "3");
    EXPECT("*1\r\n$4\r\nm101\r\n", "ZREVRANGEBYSCORE", "big", "900", "(100", "LIMIT", "799", "5");
    EXPECT("*0\r\n", "ZREVRANGEBYSCORE", "big", "900", "(100", "LIMIT", "999", "5");
    EXPECT("*0\r\n", "ZRANGEBYSCORE", "big", "-inf", "+inf", "LIMIT", "1000", "5");
    EXPECT("*1\r\n$2\r\nm0\r\n", "ZREVRANGEBYSCORE", "big", "+inf", "-inf", "LIMIT", "999", "5");
}

/* A lex range over members of several scores is unspecified, but its
 * reply must still be well formed: as many members as the length given
 * first. The set's order (by score) is then not the members' order, so
 * the ends a search finds need not bound the walk; the length given first
 * from them once disagreed with the members sent, and the server
 * asserted. Both layouts: 5 members (dense), 300 (the skip list). */
static void reply_is_well_formed(const char *const *argv, int argc) {
    char *got = run_argv(argc, argv);
    bulks b;
    const char *end = parse_bulks(got, "*", &b);
    assert_int_equal(*end, '\0'); /* nothing after the members the length announced */
    free_bulks(&b);
    zfree(got);
}

static void test_lex_ranges_over_several_scores(void **state) {
    (void)state;
    DO("ZADD", "small", "1", "a", "2", "d", "3", "b", "4", "c", "5", "e");
    /* Valkey's walk: from the first member not below [a, while not past [c */
    EXPECT("*1\r\n$1\r\na\r\n", "ZRANGEBYLEX", "small", "[a", "[c");
    /* ends of one score inside a set of several: counted first, and no more sent */
    DO("ZADD", "w", "1", "b", "1", "c", "2", "d");
    EXPECT("*2\r\n$1\r\nb\r\n$1\r\nc\r\n", "ZRANGEBYLEX", "w", "[b", "[c");
    EXPECT("*0\r\n", "ZRANGEBYLEX", "w", "[b", "[c", "LIMIT", "2", "-1");
    EXPECT("*1\r\n$1\r\nb\r\n", "ZREVRANGEBYLEX", "w", "[c", "[b", "LIMIT", "1", "5");
    for (int i = 0; i < 300; i++) {
        char m[16], sc[16];
        snprintf(m, sizeof(m), "m%03d", i);
        snprintf(sc, sizeof(sc), "%d", (i * 7919) % 97); /* scores out of the members' order */
        zfree(RUN("ZADD", "big", sc, m));
    }
    static const char *const bounds[] = {"-", "+", "[a", "(b", "[c", "(e", "[m000", "(m050", "[m150", "(m299", "[z"};
    static const char *const keys[] = {"small", "big"};
    const int nb = (int)(sizeof(bounds) / sizeof(bounds[0]));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < nb; i++)
            for (int j = 0; j < nb; j++) {
                const char *lo = bounds[i], *hi = bounds[j];
                reply_is_well_formed(ARGS("ZRANGEBYLEX", keys[k], lo, hi), 4);
                reply_is_well_formed(ARGS("ZREVRANGEBYLEX", keys[k], hi, lo), 4);
                reply_is_well_formed(ARGS("ZRANGEBYLEX", keys[k], lo, hi, "LIMIT", "1", "3"), 7);
                reply_is_well_formed(ARGS("ZREVRANGEBYLEX", keys[k], hi, lo, "LIMIT", "2", "-1"), 7);
                reply_is_well_formed(ARGS("ZRANGE", keys[k], lo, hi, "BYLEX", "REV"), 6);
                zfree(RUN("ZRANGESTORE", "dst", keys[k], lo, hi, "BYLEX"));
                zfree(RUN("ZRANGESTORE", "dst", keys[k], hi, lo, "BYLEX", "REV", "LIMIT", "1", "2"));
            }
}

static void test_emptied_sets_are_deleted(void **state) {
    (void)state;
    static const char *const ways[][6] = {
        {"ZREM", "k", "m0", "m1", "m2"},
        {"ZPOPMIN", "k", "3"},
        {"ZPOPMAX", "k", "10"},
        {"ZREMRANGEBYRANK", "k", "0", "-1"},
        {"ZREMRANGEBYSCORE", "k", "-inf", "+inf"},
        {"ZREMRANGEBYLEX", "k", "-", "+"},
    };
    for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
        int argc = 0;
        while (argc < 6 && ways[w][argc]) argc++;
        fill("k", 3);
        zfree(run_argv(argc, ways[w]));
        EXPECT(":0\r\n", "EXISTS", "k");
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_zadd_and_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zscan_visits_every_member, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zrandmember_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_offsets_on_a_big_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lex_ranges_over_several_scores, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emptied_sets_are_deleted, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
