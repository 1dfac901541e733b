/* test_zset_algebra.c — the sorted-set algebra (src/cmd_zset_algebra.c)
 * and ZRANGESTORE (src/cmd_zset.c) on a fake client (fd -1) whose reply
 * bytes are read back exactly.
 *
 * What the differential suite cannot show: which writes are signalled to
 * the keyspace's listener (db_signal_modified, where Valkey calls
 * signalModifiedKey; WATCH will listen), and that every member layout
 * gives the same answers (the suite runs the default layout alone). The
 * fixed replies are Debian's redis-server 7.0.15's, which the suite's
 * transcript 22 checks too.
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
#include "zmalloc.h"
#include "zset.h"

static command *const runner_tables[] = {zset_algebra_commands, zset_commands, string_commands, keys_commands, NULL};
#include "command_runner.h"

/* Runs a command and checks how many signals it sent (runner_modified;
 * and, when it sent any, that the last named key). */
static void expect_signals(int want, const char *key, char *reply, const char *what) {
    zfree(reply);
    if (runner_modified != want || (want && strcmp(runner_last_modified, key))) {
        print_error("%s: %d signals (last %s), want %d (%s)\n", what, runner_modified, runner_last_modified, want, key);
        fail();
    }
    runner_modified = 0;
}
#define SIGNALS(want, key, ...) expect_signals(want, key, RUN(__VA_ARGS__), #__VA_ARGS__)

static int setup(void **state) {
    zset_layout_default = (int)(intptr_t)*state;
    runner_setup();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    runner_teardown();
    zset_layout_default = ZSET_LAYOUT_DENSE;
    return 0;
}

static void fill(void) {
    DO("ZADD", "a", "1", "x", "2", "y", "3", "z");
    DO("ZADD", "b", "10", "y", "20", "z", "30", "w");
    DO("SET", "str", "v");
    runner_modified = 0; /* whatever ZADD and SET signal, only what follows counts */
}

/* ---- the writes each command signals --------------------------------------------- */

static void test_store_signals(void **state) {
    (void)state;
    fill();
    SIGNALS(1, "d", "ZUNIONSTORE", "d", "2", "a", "b");
    SIGNALS(1, "d", "ZINTERSTORE", "d", "2", "a", "b");
    SIGNALS(1, "d", "ZDIFFSTORE", "d", "2", "b", "a");
    SIGNALS(1, "d", "ZINTERSTORE", "d", "2", "a", "missing"); /* empty: d deleted */
    EXPECT(":0\r\n", "EXISTS", "d");
    SIGNALS(0, "", "ZINTERSTORE", "d", "2", "a", "missing"); /* empty, and no d to delete */
    SIGNALS(1, "a", "ZUNIONSTORE", "a", "2", "a", "b");      /* the destination among the sources */
    SIGNALS(1, "str", "ZDIFFSTORE", "str", "1", "b");        /* a string destination is replaced */
    SIGNALS(0, "", "ZUNION", "2", "a", "b");
    SIGNALS(0, "", "ZINTER", "2", "a", "b");
    SIGNALS(0, "", "ZDIFF", "2", "a", "b");
    SIGNALS(0, "", "ZINTERCARD", "2", "a", "b");
    DO("SET", "s2", "v");
    runner_modified = 0;
    SIGNALS(0, "", "ZUNIONSTORE", "d", "2", "a", "s2");              /* WRONGTYPE */
    SIGNALS(0, "", "ZUNIONSTORE", "d", "2", "a", "b", "WITHSCORES"); /* syntax error */
    SIGNALS(0, "", "ZUNIONSTORE", "d", "0", "a");
}

static void test_rangestore_signals(void **state) {
    (void)state;
    fill();
    SIGNALS(1, "r", "ZRANGESTORE", "r", "a", "0", "-1");
    SIGNALS(1, "r", "ZRANGESTORE", "r", "a", "2", "+inf", "BYSCORE");
    SIGNALS(1, "r", "ZRANGESTORE", "r", "a", "10", "20"); /* empty: r deleted */
    EXPECT(":0\r\n", "EXISTS", "r");
    SIGNALS(0, "", "ZRANGESTORE", "r", "a", "10", "20");
    SIGNALS(0, "", "ZRANGESTORE", "r", "missing", "0", "-1");
    SIGNALS(0, "", "ZRANGESTORE", "r", "str", "0", "-1");
    SIGNALS(0, "", "ZRANGESTORE", "r", "a", "0", "-1", "WITHSCORES");
    SIGNALS(1, "a", "ZRANGESTORE", "a", "a", "1", "-1");
    EXPECT("*4\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n", "ZRANGE", "a", "0", "-1", "WITHSCORES");
}

/* ---- the same answers in every member layout ------------------------------------- */

static void test_answers(void **state) {
    (void)state;
    fill();
    EXPECT("*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$2\r\n30\r\n",
           "ZUNION", "2", "a", "b", "WITHSCORES");
    EXPECT("*4\r\n$1\r\nz\r\n$3\r\n-11\r\n$1\r\ny\r\n$2\r\n-4\r\n", "ZINTER", "2", "a", "b", "WEIGHTS", "3", "-1",
           "WITHSCORES");
    EXPECT("*2\r\n$1\r\nw\r\n$2\r\n30\r\n", "ZDIFF", "2", "b", "a", "WITHSCORES");
    EXPECT(":1\r\n", "ZINTERCARD", "2", "a", "b", "LIMIT", "1");
    EXPECT(":2\r\n", "ZRANGESTORE", "r", "b", "(10", "+inf", "BYSCORE");
    EXPECT("*2\r\n$1\r\nz\r\n$1\r\nw\r\n", "ZRANGE", "r", "0", "-1");
    /* a few hundred members, so the dense layout spans several leaves */
    char m[16], s[16];
    for (int i = 0; i < 400; i++) {
        snprintf(m, sizeof(m), "m%d", i);
        snprintf(s, sizeof(s), "%d", i);
        DO("ZADD", i % 2 ? "odd" : "even", s, m);
        DO("ZADD", "all", s, m);
    }
    EXPECT(":400\r\n", "ZUNIONSTORE", "u", "2", "odd", "even");
    EXPECT(":200\r\n", "ZDIFFSTORE", "d", "2", "all", "odd");
    EXPECT(":0\r\n", "ZINTERSTORE", "i", "2", "odd", "even");
    EXPECT(":200\r\n", "ZINTERCARD", "2", "all", "even");
    EXPECT(":100\r\n", "ZRANGESTORE", "r", "d", "0", "99");
    EXPECT("*2\r\n$3\r\nm96\r\n$2\r\n96\r\n", "ZRANGE", "d", "48", "48", "WITHSCORES");
    EXPECT("*2\r\n$4\r\nm399\r\n$3\r\n399\r\n", "ZRANGE", "u", "-1", "-1", "WITHSCORES");
}

#define ALL_LAYOUTS(test)                                                                                              \
    cmocka_unit_test_prestate_setup_teardown(test, setup, teardown, (void *)(intptr_t)ZSET_LAYOUT_COPIED),             \
        cmocka_unit_test_prestate_setup_teardown(test, setup, teardown, (void *)(intptr_t)ZSET_LAYOUT_NODE_POINTER),   \
        cmocka_unit_test_prestate_setup_teardown(test, setup, teardown, (void *)(intptr_t)ZSET_LAYOUT_EMBEDDED),       \
        cmocka_unit_test_prestate_setup_teardown(test, setup, teardown, (void *)(intptr_t)ZSET_LAYOUT_DENSE)

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate_setup_teardown(test_store_signals, setup, teardown,
                                                 (void *)(intptr_t)ZSET_LAYOUT_DENSE),
        cmocka_unit_test_prestate_setup_teardown(test_rangestore_signals, setup, teardown,
                                                 (void *)(intptr_t)ZSET_LAYOUT_DENSE),
        ALL_LAYOUTS(test_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
