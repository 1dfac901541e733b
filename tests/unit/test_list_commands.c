/* test_list_commands.c — the list commands (src/cmd_list.c) on a fake
 * client (fd -1) whose reply bytes are read back exactly.
 *
 * The fixed replies are those of Debian's redis-server 7.0.15, which
 * Valkey shares for lists; the encodings are Valkey's (7.0 has no
 * listpack lists), read from the value itself. The larger tests check
 * what no fixed reply can: a list emptied by any command is deleted with
 * its key, the commands keep list_verify's invariants across the
 * conversions, and inside MULTI a blocking pop replies at once. The
 * dispatcher checks arity; run() refuses a wrong arity the same way.
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
#include "list.h"
#include "reply.h"
#include "server.h"
#include "zmalloc.h"

static command *const runner_tables[] = {list_commands, string_commands, keys_commands, NULL};
#include "command_runner.h"

/* The list at key (NULL when absent), checked against its invariants. */
static obj *value_of(const char *key) {
    obj *k = obj_create_string(key, strlen(key));
    obj *o = db_lookup_read(&tdb, k);
    obj_decr_ref(k);
    if (o && o->type == OBJ_LIST) assert_true(list_verify(o));
    return o;
}

static long long saved_fill;

static int setup(void **state) {
    (void)state;
    runner_setup();
    saved_fill = list_max_listpack_size;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    runner_teardown();
    list_max_listpack_size = saved_fill;
    return 0;
}

/* ---- fixed replies ------------------------------------------------------------ */

static void test_push_pop_and_reads(void **state) {
    (void)state;
    EXPECT(":3\r\n", "RPUSH", "l", "a", "b", "c");
    EXPECT(":5\r\n", "LPUSH", "l", "1", "-2");
    EXPECT(":0\r\n", "LPUSHX", "nokey", "x");
    EXPECT(":0\r\n", "RPUSHX", "nokey", "x");
    EXPECT(":0\r\n", "EXISTS", "nokey");
    EXPECT(":6\r\n", "RPUSHX", "l", "d");
    EXPECT("*6\r\n$2\r\n-2\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n", "LRANGE", "l", "0", "-1");
    EXPECT("*2\r\n$1\r\nc\r\n$1\r\nd\r\n", "LRANGE", "l", "-2", "100");
    EXPECT("*0\r\n", "LRANGE", "l", "4", "2");
    EXPECT("*0\r\n", "LRANGE", "nokey", "0", "-1");
    EXPECT("-ERR value is not an integer or out of range\r\n", "LRANGE", "l", "a", "1");
    EXPECT(":6\r\n", "LLEN", "l");
    EXPECT(":0\r\n", "LLEN", "nokey");
    EXPECT("$2\r\n-2\r\n", "LINDEX", "l", "0");
    EXPECT("$1\r\nd\r\n", "LINDEX", "l", "-1");
    EXPECT("$-1\r\n", "LINDEX", "l", "6");
    EXPECT("$-1\r\n", "LINDEX", "nokey", "x"); /* the key first, as Valkey */
    EXPECT("-ERR value is not an integer or out of range\r\n", "LINDEX", "l", "x");
    EXPECT("$2\r\n-2\r\n", "LPOP", "l");
    EXPECT("$1\r\nd\r\n", "RPOP", "l");
    EXPECT("*2\r\n$1\r\n1\r\n$1\r\na\r\n", "LPOP", "l", "2");
    EXPECT("*0\r\n", "LPOP", "l", "0");
    EXPECT("-ERR value is out of range, must be positive\r\n", "LPOP", "l", "-1");
    EXPECT("-ERR value is out of range, must be positive\r\n", "RPOP", "l", "x");
    EXPECT("-ERR wrong number of arguments for 'lpop' command\r\n", "LPOP", "l", "1", "2");
    EXPECT("*2\r\n$1\r\nc\r\n$1\r\nb\r\n", "RPOP", "l", "10");
    EXPECT(":0\r\n", "EXISTS", "l");
    EXPECT("$-1\r\n", "LPOP", "l");
    EXPECT("*-1\r\n", "LPOP", "l", "1");
    EXPECT("*-1\r\n", "RPOP", "l", "0");
}

static void test_set_insert_rem_trim(void **state) {
    (void)state;
    EXPECT("-ERR no such key\r\n", "LSET", "l", "0", "x");
    EXPECT(":5\r\n", "RPUSH", "l", "a", "b", "a", "c", "a");
    EXPECT("+OK\r\n", "LSET", "l", "-1", "z");
    EXPECT("-ERR index out of range\r\n", "LSET", "l", "5", "x");
    EXPECT("-ERR value is not an integer or out of range\r\n", "LSET", "l", "x", "x");
    EXPECT(":6\r\n", "LINSERT", "l", "BEFORE", "b", "p");
    EXPECT(":7\r\n", "LINSERT", "l", "after", "a", "q");
    EXPECT(":-1\r\n", "LINSERT", "l", "after", "nosuch", "q");
    EXPECT(":0\r\n", "LINSERT", "nokey", "after", "a", "q");
    EXPECT("-ERR syntax error\r\n", "LINSERT", "l", "middle", "a", "q");
    EXPECT("*7\r\n$1\r\na\r\n$1\r\nq\r\n$1\r\np\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nz\r\n", "LRANGE", "l", "0",
           "-1");
    EXPECT(":1\r\n", "LREM", "l", "-1", "a");
    EXPECT("*6\r\n$1\r\na\r\n$1\r\nq\r\n$1\r\np\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nz\r\n", "LRANGE", "l", "0", "-1");
    EXPECT(":0\r\n", "LREM", "l", "0", "nosuch");
    EXPECT(":0\r\n", "LREM", "nokey", "0", "a");
    EXPECT("-ERR value is not an integer or out of range\r\n", "LREM", "l", "x", "a");
    EXPECT("+OK\r\n", "LTRIM", "l", "1", "-2");
    EXPECT("*4\r\n$1\r\nq\r\n$1\r\np\r\n$1\r\nb\r\n$1\r\nc\r\n", "LRANGE", "l", "0", "-1");
    EXPECT("+OK\r\n", "LTRIM", "nokey", "0", "1");
    EXPECT("-ERR value is not an integer or out of range\r\n", "LTRIM", "l", "0", "x");
    EXPECT("+OK\r\n", "LTRIM", "l", "5", "1");
    EXPECT(":0\r\n", "EXISTS", "l");
}

static void test_lpos(void **state) {
    (void)state;
    EXPECT(":8\r\n", "RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c");
    EXPECT(":2\r\n", "LPOS", "l", "c");
    EXPECT(":6\r\n", "LPOS", "l", "c", "RANK", "2");
    EXPECT(":7\r\n", "LPOS", "l", "c", "RANK", "-1");
    EXPECT("*2\r\n:2\r\n:6\r\n", "LPOS", "l", "c", "COUNT", "2");
    EXPECT("*3\r\n:7\r\n:6\r\n:2\r\n", "LPOS", "l", "c", "RANK", "-1", "COUNT", "0");
    EXPECT("*1\r\n:2\r\n", "LPOS", "l", "c", "COUNT", "0", "MAXLEN", "3");
    EXPECT("$-1\r\n", "LPOS", "l", "c", "MAXLEN", "2");
    EXPECT("*0\r\n", "LPOS", "l", "x", "COUNT", "1");
    EXPECT(":4\r\n", "LPOS", "l", "2");
    EXPECT("$-1\r\n", "LPOS", "nokey", "c");
    EXPECT("*0\r\n", "LPOS", "nokey", "c", "COUNT", "3");
    EXPECT("-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to "
           "start from the end of the list\r\n",
           "LPOS", "l", "c", "RANK", "0");
    EXPECT("-ERR value is out of range, must be between -9223372036854775807 and 9223372036854775807\r\n", "LPOS", "l",
           "c", "RANK", "-9223372036854775808");
    EXPECT("-ERR COUNT can't be negative\r\n", "LPOS", "l", "c", "COUNT", "-1");
    EXPECT("-ERR MAXLEN can't be negative\r\n", "LPOS", "l", "c", "MAXLEN", "x");
    EXPECT("-ERR syntax error\r\n", "LPOS", "l", "c", "RANK");
    EXPECT("-ERR syntax error\r\n", "LPOS", "l", "c", "FOO", "1");
}

static void test_moves_and_mpop(void **state) {
    (void)state;
    EXPECT(":3\r\n", "RPUSH", "s", "a", "b", "c");
    EXPECT("$1\r\nc\r\n", "RPOPLPUSH", "s", "d");
    EXPECT("$1\r\na\r\n", "LMOVE", "s", "d", "LEFT", "RIGHT");
    EXPECT("*2\r\n$1\r\nc\r\n$1\r\na\r\n", "LRANGE", "d", "0", "-1");
    EXPECT("$1\r\nb\r\n", "LMOVE", "s", "s", "left", "right"); /* one element onto itself */
    EXPECT("$1\r\nc\r\n", "LMOVE", "d", "d", "LEFT", "RIGHT"); /* rotation */
    EXPECT("*2\r\n$1\r\na\r\n$1\r\nc\r\n", "LRANGE", "d", "0", "-1");
    EXPECT("-ERR syntax error\r\n", "LMOVE", "s", "d", "UP", "RIGHT");
    EXPECT("$-1\r\n", "LMOVE", "nokey", "d", "LEFT", "RIGHT");
    EXPECT("+OK\r\n", "SET", "str", "x");
    EXPECT("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "LMOVE", "s", "str", "LEFT",
           "LEFT");
    EXPECT(":1\r\n", "LLEN", "s"); /* nothing moved */
    EXPECT("*2\r\n$1\r\ns\r\n*1\r\n$1\r\nb\r\n", "LMPOP", "2", "nokey", "s", "LEFT");
    EXPECT(":0\r\n", "EXISTS", "s");
    EXPECT("*2\r\n$1\r\nd\r\n*2\r\n$1\r\nc\r\n$1\r\na\r\n", "LMPOP", "1", "d", "RIGHT", "COUNT", "5");
    EXPECT("*-1\r\n", "LMPOP", "2", "d", "s", "LEFT");
    EXPECT("-ERR numkeys should be greater than 0\r\n", "LMPOP", "0", "d", "LEFT");
    EXPECT("-ERR syntax error\r\n", "LMPOP", "2", "d", "LEFT");
    EXPECT("-ERR syntax error\r\n", "LMPOP", "1", "d", "UP");
    EXPECT("-ERR count should be greater than 0\r\n", "LMPOP", "1", "d", "LEFT", "COUNT", "0");
    EXPECT("-ERR syntax error\r\n", "LMPOP", "1", "d", "LEFT", "COUNT", "1", "COUNT", "1");
    EXPECT("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "LMPOP", "2", "str", "d", "LEFT");
}

static void test_wrong_type(void **state) {
    (void)state;
    EXPECT("+OK\r\n", "SET", "s", "x");
    const char *wt = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    EXPECT(wt, "LPUSH", "s", "a");
    EXPECT(wt, "RPUSHX", "s", "a");
    EXPECT(wt, "LPOP", "s");
    EXPECT(wt, "LLEN", "s");
    EXPECT(wt, "LRANGE", "s", "0", "1");
    EXPECT(wt, "LINDEX", "s", "0");
    EXPECT(wt, "LSET", "s", "0", "a");
    EXPECT(wt, "LINSERT", "s", "BEFORE", "a", "b");
    EXPECT(wt, "LREM", "s", "0", "a");
    EXPECT(wt, "LTRIM", "s", "0", "1");
    EXPECT(wt, "LPOS", "s", "a");
    EXPECT(wt, "RPOPLPUSH", "s", "d");
    EXPECT(wt, "BLPOP", "s", "0");
    EXPECT(wt, "BLMOVE", "s", "d", "LEFT", "LEFT", "0");
}

/* RESP3: the nulls become "_", arrays stay arrays. */
static void test_resp3_shapes(void **state) {
    (void)state;
    tc->resp = 3;
    EXPECT("_\r\n", "LPOP", "nokey");
    EXPECT("_\r\n", "LPOP", "nokey", "2");
    EXPECT("_\r\n", "LINDEX", "nokey", "0");
    EXPECT("_\r\n", "LPOS", "nokey", "a");
    EXPECT("_\r\n", "LMPOP", "1", "nokey", "LEFT");
    EXPECT("_\r\n", "RPOPLPUSH", "nokey", "d");
    EXPECT(":1\r\n", "RPUSH", "l", "a");
    EXPECT("*2\r\n$1\r\nl\r\n$1\r\na\r\n", "BLPOP", "nokey", "l", "0");
}

/* Inside MULTI a blocking pop replies what a timeout would, at once:
 * a null array for BLPOP/BRPOP/BLMPOP, a null bulk for BLMOVE and
 * BRPOPLPUSH (Valkey's addReplyNull in blmoveGenericCommand). */
static void test_blocking_inside_multi(void **state) {
    (void)state;
    tc->flags |= CLIENT_MULTI;
    EXPECT("*-1\r\n", "BLPOP", "a", "b", "0");
    EXPECT("*-1\r\n", "BRPOP", "a", "1");
    EXPECT("*-1\r\n", "BLMPOP", "0", "1", "a", "LEFT");
    EXPECT("$-1\r\n", "BLMOVE", "a", "b", "LEFT", "RIGHT", "0");
    EXPECT("$-1\r\n", "BRPOPLPUSH", "a", "b", "0");
    EXPECT("-ERR timeout is negative\r\n", "BLPOP", "a", "-1");
    EXPECT("-ERR timeout is not a float or out of range\r\n", "BRPOPLPUSH", "a", "b", "x");
    EXPECT("-ERR syntax error\r\n", "BLMOVE", "a", "b", "LEFT", "UP", "x"); /* sides before the timeout */
    EXPECT(":2\r\n", "RPUSH", "a", "x", "y");
    EXPECT("*2\r\n$1\r\na\r\n$1\r\ny\r\n", "BRPOP", "b", "a", "0");
    EXPECT("*2\r\n$1\r\na\r\n*1\r\n$1\r\nx\r\n", "BLMPOP", "0", "2", "b", "a", "RIGHT", "COUNT", "9");
    EXPECT(":0\r\n", "EXISTS", "a");
    tc->flags &= ~CLIENT_MULTI;
}

/* ---- encodings through the commands ---------------------------------------------- */

/* CONFIG list-max-listpack-size 4: the fifth element makes a quicklist,
 * popping down to two makes a listpack again; LSET, LINSERT and LMOVE
 * convert before they add, LREM and LTRIM after they remove. */
static void test_encodings(void **state) {
    (void)state;
    list_max_listpack_size = 4;
    EXPECT(":4\r\n", "RPUSH", "l", "a", "b", "c", "d");
    assert_int_equal(value_of("l")->encoding, OBJ_ENC_LISTPACK);
    EXPECT(":5\r\n", "RPUSH", "l", "e");
    assert_int_equal(value_of("l")->encoding, OBJ_ENC_QUICKLIST);
    EXPECT("*3\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n", "RPOP", "l", "3");
    assert_int_equal(value_of("l")->encoding, OBJ_ENC_LISTPACK);
    EXPECT(":6\r\n", "LPUSH", "l", "1", "2", "3", "4"); /* 2 + 4 > 4: converted first */
    assert_int_equal(value_of("l")->encoding, OBJ_ENC_QUICKLIST);
    EXPECT(":1\r\n", "LREM", "l", "0", "2"); /* [4 3] [1 a b] -> [3] [1 a b] */
    EXPECT(":1\r\n", "LREM", "l", "0", "4");
    assert_int_equal(value_of("l")->encoding, OBJ_ENC_QUICKLIST);
    EXPECT("+OK\r\n", "LTRIM", "l", "1", "2"); /* one node of two left */
    assert_int_equal(value_of("l")->encoding, OBJ_ENC_LISTPACK);
    EXPECT(":2\r\n", "RPUSH", "m", "x", "y");
    EXPECT("$1\r\n1\r\n", "LMOVE", "l", "m", "LEFT", "LEFT");
    EXPECT("$1\r\na\r\n", "LMOVE", "l", "m", "LEFT", "LEFT");
    assert_null(value_of("l"));
    EXPECT("$1\r\nx\r\n", "LINDEX", "m", "2");
    assert_int_equal(value_of("m")->encoding, OBJ_ENC_LISTPACK);
    EXPECT(":5\r\n", "LINSERT", "m", "AFTER", "y", "z");
    assert_int_equal(value_of("m")->encoding, OBJ_ENC_QUICKLIST);
    /* Byte limits: the default -2 (8 KB) and one element over it. */
    list_max_listpack_size = -2;
    char big[9000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    EXPECT(":1\r\n", "RPUSH", "b", "small");
    assert_int_equal(value_of("b")->encoding, OBJ_ENC_LISTPACK);
    EXPECT("+OK\r\n", "LSET", "b", "0", big);
    assert_int_equal(value_of("b")->encoding, OBJ_ENC_QUICKLIST);
    EXPECT("+OK\r\n", "LSET", "b", "0", "small");
    assert_int_equal(value_of("b")->encoding, OBJ_ENC_LISTPACK);
}

/* A long list through every command, checked against its invariants. */
static void test_long_list(void **state) {
    (void)state;
    list_max_listpack_size = 3;
    char n[16];
    for (int i = 0; i < 300; i++) {
        snprintf(n, sizeof(n), "%d", i);
        zfree(RUN(i % 2 ? "RPUSH" : "LPUSH", "k", n, "v"));
    }
    assert_non_null(value_of("k"));
    EXPECT(":600\r\n", "LLEN", "k");
    EXPECT("$3\r\n298\r\n", "LINDEX", "k", "1");
    EXPECT("$3\r\n299\r\n", "LINDEX", "k", "-2");
    EXPECT("*1\r\n:3\r\n", "LPOS", "k", "296", "COUNT", "0"); /* v 298 v 296 v 294 ... */
    EXPECT(":300\r\n", "LREM", "k", "0", "v");
    assert_non_null(value_of("k"));
    EXPECT(":301\r\n", "LINSERT", "k", "BEFORE", "150", "mid");
    assert_non_null(value_of("k"));
    EXPECT("+OK\r\n", "LSET", "k", "100", "set");
    assert_non_null(value_of("k"));
    EXPECT("+OK\r\n", "LTRIM", "k", "50", "-50");
    assert_non_null(value_of("k"));
    EXPECT(":202\r\n", "LLEN", "k");
    for (int i = 0; i < 202; i++) zfree(RUN(i % 2 ? "LPOP" : "RPOP", "k"));
    assert_null(value_of("k"));
}

/* Every way to empty a list deletes its key. */
static void test_emptied_lists_are_deleted(void **state) {
    (void)state;
    static const char *const ways[][8] = {
        {"LPOP", "k"},
        {"RPOP", "k", "5"},
        {"LREM", "k", "0", "a"},
        {"LTRIM", "k", "1", "0"},
        {"RPOPLPUSH", "k", "other"},
        {"LMPOP", "1", "k", "LEFT"},
        {"BLPOP", "k", "0"},
        {"BLMPOP", "0", "1", "k", "RIGHT", "COUNT", "2"},
    };
    for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
        int argc = 0;
        while (argc < 8 && ways[w][argc]) argc++;
        EXPECT(":1\r\n", "RPUSH", "k", "a");
        zfree(run_argv(argc, ways[w]));
        EXPECT(":0\r\n", "EXISTS", "k");
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_push_pop_and_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_insert_rem_trim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lpos, setup, teardown),
        cmocka_unit_test_setup_teardown(test_moves_and_mpop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocking_inside_multi, setup, teardown),
        cmocka_unit_test_setup_teardown(test_encodings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emptied_lists_are_deleted, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
