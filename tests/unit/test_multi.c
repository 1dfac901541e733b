/* test_multi.c — transactions (src/multi.c) through the dispatcher, on
 * fake clients (fd -1): the watch registry's two lists kept in step (a
 * key's watchers, a client's watches), what touches a watch and what does
 * not, and who owns a queued command's arguments.
 *
 * Each command's argv is allocated here as a read allocates it and
 * released after the command as run_queued_commands releases it, unless
 * the queue took it (argv NULL): then the queue must free it, which ASan
 * checks in the sanitizer build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "multi.h"
#include "object.h"
#include "reply.h"
#include "reply_capture.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static db tdb;
static client *c1, *c2;

static client *new_client(void) {
    client *c = zcalloc(sizeof(*c));
    c->fd = -1;
    c->resp = 2;
    c->authenticated = 1;
    c->db = &tdb;
    return c;
}

static void free_client(client *c) {
    multi_free_client(c);
    zfree(take_reply(c));
    zfree(c->buf);
    zfree(c);
}

static int setup(void **state) {
    (void)state;
    config_init_defaults();
    commands_init();
    multi_init();
    db_init(&tdb, 0);
    c1 = new_client();
    c2 = new_client();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    free_client(c1);
    free_client(c2);
    assert_int_equal(multi_registry_size(), 0); /* freeing a client unwatches */
    db_release(&tdb);
    config_free_all();
    return 0;
}

/* Runs one command line on c and returns its reply (to be zfree'd). */
static char *run(client *c, const char *line) {
    char *copy = zstrdup(line);
    obj **argv = zmalloc(sizeof(obj *) * 16);
    int argc = 0;
    for (char *tok = strtok(copy, " "); tok && argc < 16; tok = strtok(NULL, " "))
        argv[argc++] = obj_create_string(tok, strlen(tok));
    zfree(copy);
    c->argc = argc;
    c->argv = argv;
    process_command(c);
    client_command_done(c);
    if (c->argv) { /* not queued: released as after any command */
        for (int i = 0; i < c->argc; i++) obj_decr_ref(c->argv[i]);
        zfree(c->argv);
    }
    c->argv = NULL;
    c->argc = 0;
    return take_reply(c);
}

static void expect(client *c, const char *line, const char *want) {
    char *got = run(c, line);
    if (strcmp(got, want)) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s: got <%s> want <%s>", line, got, want);
        zfree(got);
        fail_msg("%s", msg);
    }
    zfree(got);
}

static void test_registry_keeps_both_lists(void **state) {
    (void)state;
    expect(c1, "WATCH a b a", "+OK\r\n");
    expect(c2, "WATCH b c", "+OK\r\n");
    assert_int_equal(multi_registry_size(), 3);
    assert_int_equal(multi_watched_count(c1), 2);
    assert_true(multi_watches(c1, "a", 1) && multi_watches(c2, "b", 1) && !multi_watches(c1, "c", 1));
    expect(c1, "UNWATCH", "+OK\r\n");
    assert_int_equal(multi_registry_size(), 2); /* b stays: c2 still watches it */
    assert_int_equal(multi_watched_count(c1), 0);
    assert_true(multi_watches(c2, "b", 1));
}

static void test_touch_dirties_and_unwatches(void **state) {
    (void)state;
    expect(c1, "WATCH k other", "+OK\r\n");
    expect(c2, "WATCH other", "+OK\r\n");
    expect(c2, "SET k 1", "+OK\r\n");
    assert_true(c1->flags & CLIENT_DIRTY_CAS);
    assert_false(c2->flags & CLIENT_DIRTY_CAS);
    assert_int_equal(multi_watched_count(c1), 0); /* nothing more can change its fate */
    assert_int_equal(multi_registry_size(), 1);
    expect(c1, "MULTI", "+OK\r\n");
    expect(c1, "GET k", "+QUEUED\r\n");
    assert_int_equal(multi_queued_count(c1), 0); /* doomed: not queued */
    expect(c1, "EXEC", "*-1\r\n");
    assert_false(c1->flags & (CLIENT_DIRTY_CAS | CLIENT_MULTI));
}

static void test_no_change_no_touch(void **state) {
    (void)state;
    expect(c2, "SET k v", "+OK\r\n");
    expect(c2, "ZADD z 1 m", ":1\r\n");
    expect(c1, "WATCH k z missing", "+OK\r\n");
    expect(c2, "SET k w NX", "$-1\r\n");
    expect(c2, "ZADD z 1 m", ":0\r\n");
    expect(c2, "DEL missing", ":0\r\n");
    expect(c2, "PERSIST k", ":0\r\n");
    expect(c2, "SETBIT k 0 0", ":0\r\n");
    assert_false(c1->flags & CLIENT_DIRTY_CAS);
    expect(c2, "FLUSHALL", "+OK\r\n"); /* k and z exist: touched */
    assert_true(c1->flags & CLIENT_DIRTY_CAS);
}

static void test_flush_skips_missing_keys(void **state) {
    (void)state;
    expect(c1, "WATCH nothere", "+OK\r\n");
    expect(c2, "FLUSHDB", "+OK\r\n");
    assert_false(c1->flags & CLIENT_DIRTY_CAS);
}

static void test_expired_when_watched(void **state) {
    (void)state;
    expect(c2, "SET k v PX 1", "+OK\r\n");
    usleep(5000);
    expect(c1, "WATCH k", "+OK\r\n");
    expect(c2, "EXISTS k", ":0\r\n"); /* lazy expiry deletes it: no logical change */
    assert_false(c1->flags & CLIENT_DIRTY_CAS);
    expect(c1, "MULTI", "+OK\r\n");
    expect(c1, "EXEC", "*0\r\n");
}

static void test_expired_after_watch(void **state) {
    (void)state;
    expect(c2, "SET k v PX 30", "+OK\r\n");
    expect(c1, "WATCH k", "+OK\r\n");
    usleep(60000);
    expect(c1, "MULTI", "+OK\r\n");
    expect(c1, "EXEC", "*-1\r\n"); /* alive when watched, dead at EXEC */
}

static void test_queue_owns_argv(void **state) {
    (void)state;
    expect(c1, "MULTI", "+OK\r\n");
    expect(c1, "SET a 1", "+QUEUED\r\n");
    expect(c1, "INCR a", "+QUEUED\r\n");
    assert_int_equal(multi_queued_count(c1), 2);
    assert_int_equal(multi_queued_mem(c1), (3 + 1 + 1) + 3 * sizeof(obj *) + (4 + 1) + 2 * sizeof(obj *));
    expect(c1, "EXEC", "*2\r\n+OK\r\n:2\r\n");
    assert_int_equal(multi_queued_count(c1), -1);
    /* a queue left behind is freed with the client (teardown) */
    expect(c2, "MULTI", "+OK\r\n");
    expect(c2, "SET b 1", "+QUEUED\r\n");
}

static void test_refusals(void **state) {
    (void)state;
    expect(c1, "EXEC", "-ERR EXEC without MULTI\r\n");
    expect(c1, "DISCARD", "-ERR DISCARD without MULTI\r\n");
    expect(c1, "MULTI", "+OK\r\n");
    expect(c1, "MULTI", "-ERR Command not allowed inside a transaction\r\n");
    expect(c1, "EXEC", "-EXECABORT Transaction discarded because of previous errors.\r\n");
    expect(c1, "MULTI", "+OK\r\n");
    expect(c1, "SET a 1", "+QUEUED\r\n");
    expect(c1, "EXEC x",
           "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n");
    assert_false(c1->flags & CLIENT_MULTI);
    expect(c1, "GET a", "$-1\r\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_registry_keeps_both_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_touch_dirties_and_unwatches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_change_no_touch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_skips_missing_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expired_when_watched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expired_after_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_owns_argv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
