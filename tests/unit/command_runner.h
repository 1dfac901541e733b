/* command_runner.h — runs a command on a fake client and reads its reply
 * back, for the unit tests of the command modules (cmd_*.c).
 *
 * Step 0. The client has no socket (fd -1): a command appends its reply
 * to the client's output and take_reply() (reply_capture.h) returns the
 * bytes. The including file names, before it includes this header, the
 * command tables its tests may run, as a NULL-terminated array:
 *
 *     static command *const runner_tables[] = {list_commands, keys_commands, NULL};
 *
 * RUN("LPUSH", "k", "a") runs a command and returns its reply (zmalloc'd;
 * the caller frees it); EXPECT(want, "LPUSH", "k", "a") runs it and fails
 * the test, printing the command, unless the reply is want exactly; DO(...)
 * runs it for its effect and drops the reply. runner_call() and
 * runner_call_objs() run one and leave the reply on tc, for a test that
 * reads the reply its own way or must keep the argument objects. A wrong
 * arity is refused as the dispatcher (process_command) refuses it, so a
 * test sees the error a client would. runner_setup() and runner_teardown()
 * make and free the client and its database, and count the keyspace's
 * "modified" signals (runner_modified); a test file's own setup and
 * teardown call them and add what they need.
 *
 * Used by test_kv_commands.c, test_list_commands.c, test_hash_commands.c,
 * test_set_commands.c, test_zset_commands.c and test_zset_algebra.c. The
 * tests that need the whole dispatcher (MULTI, CLIENT, authentication:
 * test_server_commands.c, test_multi.c) call process_command instead.
 */
#ifndef SOLOIST_TEST_COMMAND_RUNNER_H
#define SOLOIST_TEST_COMMAND_RUNNER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "reply.h"
#include "reply_capture.h"
#include "zmalloc.h"

static db tdb;
static client *tc;

static command *find_command(const char *name) {
    for (size_t t = 0; runner_tables[t]; t++)
        for (command *cmd = runner_tables[t]; cmd->name; cmd++)
            if (!strcasecmp(cmd->name, name)) return cmd;
    return NULL;
}

/* Runs the command in args[0..argc) on tc, leaving its reply on tc. The
 * arity is checked as process_command checks it (commands.c), and a
 * wrong one refused with the same error; the objects stay the caller's. */
static void runner_call_objs(int argc, obj **args) {
    tc->argc = argc;
    tc->argv = args;
    tc->cmd = find_command(args[0]->ptr);
    if (!tc->cmd) fail_msg("unknown command %s", (const char *)args[0]->ptr);
    int arity = tc->cmd->arity;
    if ((arity > 0 && argc != arity) || argc < -arity)
        reply_error_arity(tc);
    else
        tc->cmd->proc(tc);
    tc->argv = NULL;
    tc->argc = 0;
}

/* The same for arguments given as C strings. */
static void runner_call(int argc, const char *const *argv) {
    obj **args = zmalloc(sizeof(obj *) * (size_t)argc);
    for (int i = 0; i < argc; i++) args[i] = obj_create_string(argv[i], strlen(argv[i]));
    runner_call_objs(argc, args);
    for (int i = 0; i < argc; i++) obj_decr_ref(args[i]);
    zfree(args);
}

/* Runs it and returns its reply (zmalloc'd, NUL-terminated). */
static inline char *run_argv(int argc, const char *const *argv) {
    runner_call(argc, argv);
    return take_reply(tc);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__})
#define RUN(...) run_argv((int)(sizeof(ARGS(__VA_ARGS__)) / sizeof(char *)), ARGS(__VA_ARGS__))
#define EXPECT(want, ...) expect(RUN(__VA_ARGS__), want, #__VA_ARGS__)
#define DO(...) zfree(RUN(__VA_ARGS__)) /* run it for its effect alone */

static inline void expect(char *got, const char *want, const char *what) {
    if (strcmp(got, want)) {
        print_error("%s\n  got  %s\n  want %s\n", what, got, want);
        zfree(got);
        fail();
    }
    zfree(got);
}

/* A reply that is an array of bulk strings (or a SCAN reply's second
 * element): its elements, NUL-terminated, in a zmalloc'd array. types
 * lists the aggregate type bytes the reply may start with ("*", or "*~"
 * where a RESP3 set is right too); any other fails the test. Returns
 * where the array ends. */
typedef struct bulks {
    char **v;
    long n;
} bulks;

static inline const char *parse_bulks(const char *p, const char *types, bulks *b) {
    assert_true(*p && strchr(types, *p));
    b->n = strtol(p + 1, (char **)&p, 10);
    p += 2;
    b->v = zcalloc(sizeof(char *) * (size_t)(b->n + 1));
    for (long i = 0; i < b->n; i++) {
        assert_int_equal(*p, '$');
        long len = strtol(p + 1, (char **)&p, 10);
        p += 2;
        b->v[i] = zstrndup(p, (size_t)len);
        p += len + 2;
    }
    return p;
}

static inline void free_bulks(bulks *b) {
    for (long i = 0; i < b->n; i++) zfree(b->v[i]);
    zfree(b->v);
}

/* Every db_signal_modified the commands send: how many since setup, and
 * the last key named, "*" for a flush, which signals the whole database
 * with key NULL (db.h); runner_setup installs the listener. */
static int runner_modified;
static char runner_last_modified[32];
static void runner_count_modified(db *d, obj *key) {
    (void)d;
    runner_modified++;
    if (key)
        snprintf(runner_last_modified, sizeof(runner_last_modified), "%.*s", (int)key->len, key->ptr);
    else
        snprintf(runner_last_modified, sizeof(runner_last_modified), "*");
}

static void runner_setup(void) {
    runner_modified = 0;
    db_on_modified(runner_count_modified);
    db_init(&tdb, 0);
    tc = zcalloc(sizeof(client));
    tc->fd = -1;
    tc->resp = 2;
    tc->db = &tdb;
}

static void runner_teardown(void) {
    db_on_modified(NULL);
    zfree(take_reply(tc));
    zfree(tc->buf);
    zfree(tc);
    db_release(&tdb);
}

#endif
