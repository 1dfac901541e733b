/* test_config.c — unit tests of src/config.c (step 0, plumbing).
 *
 * Defaults, the command line (as Valkey's main() reads it), config files
 * and their quoting (sdssplitargs rules), memory units, Valkey's error
 * texts, CONFIG SET's all-or-nothing behaviour and apply hooks, and the
 * CONFIG command through a fake client (fd -1: replies stay in its
 * buffer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "reply_capture.h"
#include "commands.h"
#include "config.h"
#include "object.h"
#include "server.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ helpers */

static char tmpdir[64];

static int setup(void **state) {
    (void)state;
    config_init_defaults();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    config_apply_io_threads = NULL;
    config_apply_listeners = NULL;
    config_apply_maxclients = NULL;
    config_free_all();
    return 0;
}

/* Writes text into tmpdir/name; returns the path (static buffer). */
static const char *write_file(const char *name, const char *text) {
    static char path[2][128];
    static int which;
    char *p = path[which ^= 1];
    snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    return p;
}

/* Loads text and expects failure; returns the error (caller zfrees). */
static char *load_fails(const char *text) {
    char *err = NULL;
    assert_int_equal(config_load_string(text, &err), -1);
    assert_non_null(err);
    return err;
}

/* Expects config_load_string(text) to fail with msg somewhere in the error. */
static void expect_load_error(const char *text, const char *msg) {
    char *err = load_fails(text);
    if (!strstr(err, msg)) fail_msg("error for <%s> was <%s>, expected <%s>", text, err, msg);
    zfree(err);
}

static void expect_get(const char *name, const char *want) {
    char *v = config_get(name);
    assert_non_null(v);
    assert_string_equal(v, want);
    zfree(v);
}

static void expect_set_error(const char *name, const char *value, const char *want) {
    char *err = NULL;
    assert_int_equal(config_set(name, value, &err), -1);
    assert_non_null(err);
    assert_string_equal(err, want);
    zfree(err);
}

static void set_ok(const char *name, const char *value) {
    char *err = NULL;
    int r = config_set(name, value, &err);
    if (r != 0) fail_msg("CONFIG SET %s %s: %s", name, value, err);
}

static int args_load(int argc, const char **argv, char **err) {
    *err = NULL;
    return config_load_args(argc, (char **)argv, err);
}

/* A client that is never connected: replies accumulate in its buffers. */
static client *fake_client(int resp) {
    client *c = zcalloc(sizeof(*c));
    c->fd = -1;
    c->resp = resp;
    return c;
}

static void free_fake_client(client *c) {
    for (reply_block *b = c->reply_head, *next; b; b = next) {
        next = b->next;
        zfree(b);
    }
    zfree(c->buf);
    zfree(c);
}

/* Runs one CONFIG command line (words split on spaces; "''" is an empty
 * argument) and returns everything it replied, zmalloc'd. */
static char *run_config(int resp, const char *line) {
    client *c = fake_client(resp);
    obj *argv[32];
    int argc = 0;
    argv[argc++] = obj_create_string("config", 6);
    char *copy = zstrdup(line);
    for (char *tok = strtok(copy, " "); tok && argc < 32; tok = strtok(NULL, " "))
        argv[argc++] = !strcmp(tok, "''") ? obj_create_string("", 0) : obj_create_string(tok, strlen(tok));
    zfree(copy);
    c->argc = argc;
    c->argv = argv;
    config_commands[0].proc(c); /* cmd_config.c's CONFIG entry */
    char *out = take_reply(c);
    for (int i = 0; i < argc; i++) obj_decr_ref(argv[i]);
    c->argv = NULL;
    free_fake_client(c);
    return out;
}

static void expect_reply(int resp, const char *line, const char *want) {
    char *got = run_config(resp, line);
    if (strcmp(got, want)) fail_msg("CONFIG %s\n got: <%s>\nwant: <%s>", line, got, want);
    zfree(got);
}

/* ----------------------------------------------------------- defaults */

static void test_defaults(void **state) {
    (void)state;
    assert_int_equal(server.port, 6379);
    assert_int_equal(server.bindaddr_count, 1);
    assert_string_equal(server.bindaddr[0], "127.0.0.1");
    assert_int_equal(server.tcp_backlog, 511);
    assert_int_equal(server.tcpkeepalive, 300);
    assert_int_equal(server.maxidletime, 0);
    assert_int_equal(server.maxclients, 10000);
    assert_null(server.requirepass);
    assert_int_equal(server.protected_mode, 1);
    assert_int_equal(server.proto_max_bulk_len, 512LL * 1024 * 1024);
    assert_int_equal(server.client_max_querybuf_len, 1024LL * 1024 * 1024);
    assert_int_equal(server.obuf_normal.hard_bytes, 0);
    assert_int_equal(server.obuf_normal.soft_bytes, 0);
    assert_int_equal(server.obuf_normal.soft_seconds, 0);
    assert_int_equal(server.hz, 10);
    assert_int_equal(server.io_threads_num, 1);
    assert_int_equal(server.prefetch_batch_max_size, 16);
    assert_int_equal(server.databases, 16);
    assert_string_equal(server.logfile, "");
    assert_int_equal(server.verbosity, LL_NOTICE);
    assert_int_equal(server.daemonize, 0);
    assert_null(server.configfile);
    assert_int_equal(server.active_expire_enabled, 1);

    expect_get("client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
    expect_get("save", "");
    expect_get("appendonly", "no");
    expect_get("dbfilename", "dump.rdb");
    expect_get("loglevel", "notice");
    expect_get("requirepass", "");
    expect_get("proto-max-bulk-len", "536870912");
    expect_get("bind", "127.0.0.1");
    expect_get("io-threads-do-reads", "no");
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    expect_get("dir", cwd);
    assert_null(config_get("no-such-option"));
    assert_true(config_is_sensitive("requirepass"));
    assert_false(config_is_sensitive("port"));
}

/* ------------------------------------------------------- command line */

static void test_args_basic(void **state) {
    (void)state;
    const char *argv[] = {"soloist-server",
                          "--port",
                          "7000",
                          "--save",
                          "",
                          "--appendonly",
                          "no",
                          "--bind",
                          "127.0.0.1",
                          "::1",
                          "--client-output-buffer-limit",
                          "normal 1mb 512kb 10",
                          "--io-threads",
                          "4",
                          "--requirepass",
                          "with space",
                          "--loglevel",
                          "WARNING"};
    char *err;
    assert_int_equal(args_load(sizeof(argv) / sizeof(argv[0]), argv, &err), CONFIG_ARGS_OK);
    assert_null(err);
    assert_int_equal(server.port, 7000);
    assert_int_equal(server.bindaddr_count, 2);
    assert_string_equal(server.bindaddr[0], "127.0.0.1");
    assert_string_equal(server.bindaddr[1], "::1");
    assert_int_equal(server.obuf_normal.hard_bytes, 1024 * 1024);
    assert_int_equal(server.obuf_normal.soft_bytes, 512 * 1024);
    assert_int_equal(server.obuf_normal.soft_seconds, 10);
    /* only the normal class was given: the others keep their values */
    expect_get("client-output-buffer-limit",
               "normal 1048576 524288 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
    assert_int_equal(server.io_threads_num, 4);
    assert_string_equal(server.requirepass, "with space");
    assert_int_equal(server.verbosity, LL_WARNING);
    assert_null(server.configfile);
}

static void test_args_save_forms(void **state) {
    (void)state;
    char *err;
    /* --save with no value, before another option and as the last one */
    const char *a1[] = {"s", "--save", "--port", "7001"};
    assert_int_equal(args_load(4, a1, &err), CONFIG_ARGS_OK);
    assert_int_equal(server.port, 7001);
    const char *a2[] = {"s", "--port", "7002", "--save"};
    assert_int_equal(args_load(4, a2, &err), CONFIG_ARGS_OK);
    assert_int_equal(server.port, 7002);
    /* Valkey's save syntax is still checked, then ignored */
    const char *a3[] = {"s", "--save", "3600", "1", "300", "100"};
    assert_int_equal(args_load(6, a3, &err), CONFIG_ARGS_OK);
    expect_get("save", "");
    const char *a4[] = {"s", "--save", "3600"};
    assert_int_equal(args_load(3, a4, &err), CONFIG_ARGS_ERROR);
    assert_non_null(strstr(err, "Invalid save parameters"));
    zfree(err);
}

static void test_args_forms(void **state) {
    (void)state;
    char *err;
    /* name and value in one argument */
    const char *a1[] = {"s", "--port 6380"};
    assert_int_equal(args_load(2, a1, &err), CONFIG_ARGS_OK);
    assert_int_equal(server.port, 6380);
    /* after a bare --name the next argument is its value even if it looks
     * like an option; values with quotes and backslashes survive */
    const char *a2[] = {"s", "--requirepass", "--not-an-option", "--port", "6381"};
    assert_int_equal(args_load(5, a2, &err), CONFIG_ARGS_OK);
    assert_string_equal(server.requirepass, "--not-an-option");
    assert_int_equal(server.port, 6381);
    const char *a3[] = {"s", "--requirepass", "a\"b\\c'd\n"};
    assert_int_equal(args_load(3, a3, &err), CONFIG_ARGS_OK);
    assert_string_equal(server.requirepass, "a\"b\\c'd\n");
    /* --bind "a b" in one argument is split like the file's bind "a b" */
    const char *a4[] = {"s", "--bind", "127.0.0.1 ::1"};
    assert_int_equal(args_load(3, a4, &err), CONFIG_ARGS_OK);
    assert_int_equal(server.bindaddr_count, 2);
    /* negative numbers are values, not options */
    const char *a5[] = {"s", "--port", "-1"};
    assert_int_equal(args_load(3, a5, &err), CONFIG_ARGS_ERROR);
    assert_non_null(strstr(err, "argument must be between 0 and 65535 inclusive"));
    zfree(err);
}

static void test_args_special_codes(void **state) {
    (void)state;
    char *err;
    const char *v1[] = {"s", "-v"}, *v2[] = {"s", "--version"}, *h1[] = {"s", "-h"}, *h2[] = {"s", "--help"};
    assert_int_equal(args_load(2, v1, &err), CONFIG_ARGS_VERSION);
    assert_int_equal(args_load(2, v2, &err), CONFIG_ARGS_VERSION);
    assert_int_equal(args_load(2, h1, &err), CONFIG_ARGS_HELP);
    assert_int_equal(args_load(2, h2, &err), CONFIG_ARGS_HELP);
    const char *none[] = {"s"};
    assert_int_equal(args_load(1, none, &err), CONFIG_ARGS_OK);
    assert_int_equal(server.port, 6379);
    /* usage text lists the options */
    char buf[8192] = {0};
    FILE *fp = fmemopen(buf, sizeof(buf) - 1, "w");
    config_usage(fp, "soloist-server");
    fclose(fp);
    assert_non_null(strstr(buf, "Usage: soloist-server"));
    assert_non_null(strstr(buf, "prefetch-batch-max-size"));
}

static void test_args_unknown_option(void **state) {
    (void)state;
    char *err;
    const char *a[] = {"s", "--port", "7000", "--foo", "bar"};
    assert_int_equal(args_load(5, a, &err), CONFIG_ARGS_ERROR);
    assert_non_null(err);
    assert_non_null(strstr(err, "*** FATAL CONFIG FILE ERROR (Version " SOLOIST_VERSION ") ***"));
    assert_non_null(strstr(err, ">>> 'foo \"bar\"'"));
    assert_non_null(strstr(err, "Bad directive or wrong number of arguments"));
    zfree(err);
    const char *b[] = {"s", "--port", "1", "2"};
    assert_int_equal(args_load(4, b, &err), CONFIG_ARGS_ERROR);
    assert_non_null(strstr(err, "wrong number of arguments"));
    zfree(err);
}

static void test_args_with_file_and_stdin(void **state) {
    (void)state;
    const char *path = write_file("a.conf", "port 7100\nhz 20\n");
    char *err;
    const char *a[] = {"s", path, "--port", "7200"};
    assert_int_equal(args_load(4, a, &err), CONFIG_ARGS_OK);
    assert_int_equal(server.port, 7200); /* the command line wins */
    assert_int_equal(server.hz, 20);
    assert_string_equal(server.configfile, path);

    /* "-" reads more configuration from stdin, after the file */
    const char *in = write_file("stdin.conf", "hz 30\ntimeout 9\n");
    assert_non_null(freopen(in, "r", stdin));
    const char *b[] = {"s", path, "--timeout", "5", "-"};
    assert_int_equal(args_load(5, b, &err), CONFIG_ARGS_OK);
    assert_int_equal(server.hz, 30);
    assert_int_equal(server.maxidletime, 5);

    const char *c[] = {"s", "/nonexistent/soloist.conf"};
    assert_int_equal(args_load(2, c, &err), CONFIG_ARGS_ERROR);
    assert_non_null(strstr(err, "can't open config file '/nonexistent/soloist.conf'"));
    zfree(err);
}

/* -------------------------------------------------------- config text */

static void test_file_comments_and_quotes(void **state) {
    (void)state;
    const char *text = "# a comment\n"
                       "\n"
                       "   \t\n"
                       "   port 7300   \r\n"
                       "  # indented comment\n"
                       "requirepass \"a b\\\"c\\x41\\n\"\n"
                       "PROTECTED-MODE no\n"
                       "bind \"127.0.0.1 ::1\"\n"
                       "dbfilename 'it\\'s.rdb'\n"
                       "loglevel \"debug\"";
    char *err = NULL;
    assert_int_equal(config_load_string(text, &err), 0);
    assert_null(err);
    assert_int_equal(server.port, 7300);
    assert_string_equal(server.requirepass, "a b\"cA\n");
    assert_int_equal(server.protected_mode, 0);
    assert_int_equal(server.bindaddr_count, 2);
    assert_string_equal(server.bindaddr[1], "::1");
    expect_get("dbfilename", "it's.rdb");
    assert_int_equal(server.verbosity, LL_DEBUG);
    /* a lone "" empties a string option and a list */
    assert_int_equal(config_load_string("requirepass \"\"\nbind \"\"\n", &err), 0);
    assert_null(server.requirepass);
    assert_int_equal(server.bindaddr_count, 0);
}

/* sdssplitargs' corners: a quote inside a bare word opens a quoted part,
 * \xHH needs two hex digits, a backslash before any other character is
 * that character; the command line's quoting survives any byte. */
static void test_split_corners(void **state) {
    (void)state;
    char *err = NULL;
    assert_int_equal(config_load_string("requirepass ab\"c d\"", &err), 0);
    assert_string_equal(server.requirepass, "abc d");
    assert_int_equal(config_load_string("requirepass \"\\x4g\\q\\\\\"", &err), 0);
    assert_string_equal(server.requirepass, "x4gq\\");
    assert_int_equal(config_load_string("requirepass '\\n\\''", &err), 0);
    assert_string_equal(server.requirepass, "\\n'");
    assert_int_equal(config_load_string("requirepass \"\\t\\x7E\"  ", &err), 0);
    assert_string_equal(server.requirepass, "\t~");
    expect_load_error("requirepass \"abc\\\"", "Unbalanced quotes in configuration line");
    const char *a[] = {"s", "--requirepass", "\x01\xff\t\"'#"};
    assert_int_equal(args_load(3, a, &err), CONFIG_ARGS_OK);
    assert_string_equal(server.requirepass, "\x01\xff\t\"'#");
}

static void test_file_errors(void **state) {
    (void)state;
    expect_load_error("port 1\nrequirepass \"abc\n", "Unbalanced quotes in configuration line");
    expect_load_error("requirepass \"abc\"x", "Unbalanced quotes in configuration line");
    expect_load_error("requirepass 'abc", "Unbalanced quotes in configuration line");
    char *err = load_fails("# one\nport 1\nport 99999\n");
    assert_non_null(strstr(err, "Reading the configuration file, at line 3\n>>> 'port 99999'\n"
                                "argument must be between 0 and 65535 inclusive"));
    zfree(err);
    expect_load_error("port 1 2", "wrong number of arguments");
    expect_load_error("port", "wrong number of arguments");
    expect_load_error("no-such-thing yes", "Bad directive or wrong number of arguments");
    expect_load_error("logfile /nonexistent-dir/x.log", "Can't open the log file: ");
}

static void test_file_include(void **state) {
    (void)state;
    write_file("inc1.conf", "port 7400\n");
    write_file("inc2.conf", "timeout 3\n");
    char text[256];
    snprintf(text, sizeof(text), "include %s/inc1.conf\ninclude %s/inc2*.conf\ninclude %s/none*.conf\n", tmpdir, tmpdir,
             tmpdir);
    char *err = NULL;
    assert_int_equal(config_load_string(text, &err), 0);
    assert_int_equal(server.port, 7400);
    assert_int_equal(server.maxidletime, 3);
    snprintf(text, sizeof(text), "include %s/missing.conf\n", tmpdir);
    expect_load_error(text, "can't open config file");
    const char *path = write_file("full.conf", "port 7500\n");
    assert_int_equal(config_load_file(path, &err), 0);
    assert_int_equal(server.port, 7500);
}

static void test_units(void **state) {
    (void)state;
    char *err = NULL;
    assert_int_equal(config_load_string("proto-max-bulk-len 2mb\nclient-query-buffer-limit 1GB\n", &err), 0);
    assert_int_equal(server.proto_max_bulk_len, 2LL * 1024 * 1024);
    assert_int_equal(server.client_max_querybuf_len, 1024LL * 1024 * 1024);
    assert_int_equal(config_load_string("proto-max-bulk-len 2000000\n", &err), 0);
    assert_int_equal(server.proto_max_bulk_len, 2000000);
    assert_int_equal(config_load_string("proto-max-bulk-len 5m\n", &err), 0);
    assert_int_equal(server.proto_max_bulk_len, 5000000);
    expect_get("proto-max-bulk-len", "5000000");
    expect_load_error("proto-max-bulk-len 1k", "argument must be between 1048576 and 9223372036854775807 inclusive");
    expect_load_error("proto-max-bulk-len 12x", "argument must be a memory value");
    expect_load_error("proto-max-bulk-len -1mb", "argument must be a memory value");
    assert_int_equal(config_load_string("client-output-buffer-limit normal 10mb 5mb 30 pubsub 1gb 0 0\n", &err), 0);
    assert_int_equal(server.obuf_normal.hard_bytes, 10LL * 1024 * 1024);
    expect_get("client-output-buffer-limit",
               "normal 10485760 5242880 30 slave 268435456 67108864 60 pubsub 1073741824 0 0");
}

static void test_range_and_type_errors(void **state) {
    (void)state;
    expect_set_error(
        "port", "12a",
        "CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer");
    expect_set_error(
        "port", "+1",
        "CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer");
    expect_set_error(
        "io-threads", "0",
        "CONFIG SET failed (possibly related to argument 'io-threads') - argument must be between 1 and 256 inclusive");
    expect_set_error("prefetch-batch-max-size", "129",
                     "CONFIG SET failed (possibly related to argument 'prefetch-batch-max-size') - argument must be "
                     "between 0 and 128 inclusive");
    expect_set_error(
        "protected-mode", "maybe",
        "CONFIG SET failed (possibly related to argument 'protected-mode') - argument must be 'yes' or 'no'");
    expect_set_error("loglevel", "loud",
                     "CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the "
                     "following: debug, verbose, notice, warning");
    expect_set_error("client-output-buffer-limit", "normal 0 0",
                     "CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of "
                     "arguments in buffer limit configuration.");
    expect_set_error("client-output-buffer-limit", "master 0 0 0",
                     "CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client "
                     "class specified in buffer limit configuration.");
    expect_set_error("client-output-buffer-limit", "normal 1x 0 0",
                     "CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Error in hard, "
                     "soft or soft_seconds setting in buffer limit configuration.");
    expect_set_error("save", "10", "CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters");
    /* dir and dbfilename are protected: refused until allowed */
    expect_set_error("dir", "/", "CONFIG SET failed (possibly related to argument 'dir') - can't set protected config");
    expect_set_error("DBFILENAME", "x.rdb",
                     "CONFIG SET failed (possibly related to argument 'DBFILENAME') - can't set protected config");
    expect_set_error("enable-protected-configs", "yes",
                     "CONFIG SET failed (possibly related to argument 'enable-protected-configs') - can't set "
                     "immutable config");
    char *perr = NULL;
    assert_int_equal(config_load_string("enable-protected-configs local\n", &perr), 0);
    expect_get("enable-protected-configs", "local");
    set_ok("dir", "/"); /* config_set speaks for a local client */
    expect_get("dir", "/");
    expect_reply(2, "SET dbfilename x.rdb", "+OK\r\n"); /* the fake client has no peer: local */
    expect_get("dbfilename", "x.rdb");
    assert_int_equal(config_load_string("enable-protected-configs yes\n", &perr), 0);
    expect_set_error(
        "dbfilename", "a/b",
        "CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a filename");
    expect_set_error("dir", "/nonexistent-soloist-dir",
                     "CONFIG SET failed (possibly related to argument 'dir') - No such file or directory");
    char *err = NULL;
    /* rejections soloist adds: no daemon, no disk */
    assert_int_equal(config_load_string("daemonize yes\n", &err), -1);
    assert_non_null(strstr(err, "foreground"));
    zfree(err);
    assert_int_equal(config_load_string("daemonize no\nappendonly no\n", &err), 0);
    assert_int_equal(config_set("appendonly", "yes", &err), -1);
    assert_non_null(strstr(err, "appendonly must be 'no'"));
    zfree(err);
    /* hz is clamped, as Valkey does */
    assert_int_equal(config_load_string("hz 0\n", &err), 0);
    assert_int_equal(server.hz, CONFIG_MIN_HZ);
    set_ok("hz", "1000");
    assert_int_equal(server.hz, CONFIG_MAX_HZ);
    expect_get("hz", "500");
    /* too many bind addresses */
    assert_int_equal(config_load_string("bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", &err), -1);
    assert_non_null(strstr(err, "Too many bind addresses specified."));
    zfree(err);
}

/* --------------------------------------------------------- CONFIG SET */

static int hook_calls, hook_last, hook_fail;
static int io_threads_hook(int n, const char **err) {
    hook_calls++;
    hook_last = n;
    if (hook_fail && n != 1) {
        *err = "cannot drain";
        return 0;
    }
    return 1;
}

static int listeners_hook(const char **err) {
    (void)err;
    hook_calls++;
    return 1;
}

static int maxclients_hook(const char **err) {
    (void)err;
    return 1;
}

static void test_config_set(void **state) {
    (void)state;
    expect_set_error("foo", "1", "Unknown option or number of arguments for CONFIG SET - 'foo'");
    expect_set_error("databases", "4",
                     "CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config");
    expect_set_error("daemonize", "no",
                     "CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config");
    set_ok("timeout", "30");
    assert_int_equal(server.maxidletime, 30);
    set_ok("MaxClients", "10000"); /* names fold case; unchanged: no apply needed */
    set_ok("requirepass", "secret");
    assert_string_equal(server.requirepass, "secret");
    set_ok("requirepass", "");
    assert_null(server.requirepass);
    set_ok("client-output-buffer-limit", "normal 1mb 1mb 0");
    assert_int_equal(server.obuf_normal.hard_bytes, 1024 * 1024);
    set_ok("save", "");
    set_ok("bind", "127.0.0.1"); /* unchanged value: no hook needed */

    /* no hook registered: refused, value kept */
    char *err = NULL;
    assert_int_equal(config_set("io-threads", "4", &err), -1);
    assert_non_null(strstr(err, "io-threads"));
    zfree(err);
    assert_int_equal(server.io_threads_num, 1);
    assert_int_equal(config_set("port", "7777", &err), -1);
    zfree(err);
    assert_int_equal(server.port, 6379);
    assert_int_equal(config_set("maxclients", "50", &err), -1);
    zfree(err);
    assert_int_equal(server.maxclients, 10000);

    /* hook registered */
    config_apply_io_threads = io_threads_hook;
    hook_calls = 0;
    set_ok("io-threads", "4");
    assert_int_equal(server.io_threads_num, 4);
    assert_int_equal(hook_calls, 1);
    assert_int_equal(hook_last, 4);
    set_ok("io-threads", "1");
    /* a hook that refuses: the old value comes back, and the hook is told */
    hook_fail = 1;
    hook_calls = 0;
    expect_set_error("io-threads", "8", "CONFIG SET failed (possibly related to argument 'io-threads') - cannot drain");
    hook_fail = 0;
    assert_int_equal(server.io_threads_num, 1);
    assert_int_equal(hook_calls, 2);
    assert_int_equal(hook_last, 1);

    config_apply_listeners = listeners_hook;
    hook_calls = 0;
    set_ok("port", "7777");
    assert_int_equal(server.port, 7777);
    assert_int_equal(hook_calls, 1);
}

static void test_config_set_atomic(void **state) {
    (void)state;
    /* the second value is bad: the first is restored */
    expect_reply(
        2, "SET timeout 5 hz abc",
        "-ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer\r\n");
    assert_int_equal(server.maxidletime, 0);
    assert_int_equal(server.hz, 10);
    expect_reply(2, "SET timeout 5 timeout 6",
                 "-ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter\r\n");
    expect_reply(2, "SET timeout 5 nope 6", "-ERR Unknown option or number of arguments for CONFIG SET - 'nope'\r\n");
    assert_int_equal(server.maxidletime, 0);
    expect_reply(2, "SET timeout 5 hz 20", "+OK\r\n");
    assert_int_equal(server.maxidletime, 5);
    assert_int_equal(server.hz, 20);
    expect_reply(2, "SET save ''", "+OK\r\n");
    expect_reply(2, "SET timeout 5 hz", "-ERR syntax error\r\n");
    expect_reply(2, "SET timeout", "-ERR wrong number of arguments for 'config|set' command\r\n");
}

/* An apply function that fails after every value is set: every value
 * this CONFIG SET changed comes back, and the apply functions run again
 * with the old values (Valkey: restoreBackupConfig). */
static void test_config_set_apply_rollback(void **state) {
    (void)state;
    config_apply_io_threads = io_threads_hook;
    hook_fail = 1;
    hook_calls = 0;
    expect_reply(2, "SET timeout 5 hz 600 io-threads 8 tcp-keepalive 1",
                 "-ERR CONFIG SET failed (possibly related to argument 'io-threads') - cannot drain\r\n");
    hook_fail = 0;
    assert_int_equal(server.maxidletime, 0);
    assert_int_equal(server.hz, 10); /* hz's own apply ran twice: clamped, then restored */
    assert_int_equal(server.io_threads_num, 1);
    assert_int_equal(server.tcpkeepalive, 300);
    assert_int_equal(hook_calls, 2);
    assert_int_equal(hook_last, 1);
    /* The same set, the hook willing: everything applied, hz clamped. */
    expect_reply(2, "SET timeout 5 hz 600 io-threads 8 tcp-keepalive 1", "+OK\r\n");
    assert_int_equal(server.maxidletime, 5);
    assert_int_equal(server.hz, CONFIG_MAX_HZ);
    assert_int_equal(server.io_threads_num, 8);
    assert_int_equal(server.tcpkeepalive, 1);
}

/* Valkey's "CONFIG sanity" (tests/unit/introspection.tcl): every
 * parameter CONFIG GET shows can be set to the value it shows, and then
 * shows that value again; an immutable one is refused with Valkey's
 * error instead. Run at the defaults and again after many values moved. */
static int sanity_round_trip(void) {
    static const char *const refusals[] = {"immutable", "protected"};
    const char *names[256];
    const char *all[] = {"*"};
    size_t n = config_get_matches(all, 1, names, 256);
    assert_true(n < 256);
    int immutable = 0;
    for (size_t i = 0; i < n; i++) {
        char *v = config_get(names[i]), *err = NULL;
        assert_non_null(v);
        if (config_set(names[i], v, &err) != 0) {
            int known = 0;
            for (int k = 0; k < 2; k++) {
                char want[256];
                snprintf(want, sizeof(want),
                         "CONFIG SET failed (possibly related to argument '%s') - can't set %s config", names[i],
                         refusals[k]);
                known |= !strcmp(err, want);
            }
            if (!known) fail_msg("CONFIG SET %s '%s' to its own value: %s", names[i], v, err);
            immutable++;
            zfree(err);
        }
        expect_get(names[i], v);
        zfree(v);
    }
    return immutable;
}

static void test_config_set_sanity(void **state) {
    (void)state;
    /* Immutable: tcp-backlog, io-threads-do-reads, databases, logfile,
     * daemonize, enable-protected-configs; protected: dir, dbfilename. */
    assert_int_equal(sanity_round_trip(), 8);
    char *err = NULL;
    assert_int_equal(config_load_string("enable-protected-configs local\n", &err), 0);
    assert_int_equal(sanity_round_trip(), 6);
    config_apply_io_threads = io_threads_hook;
    config_apply_listeners = listeners_hook;
    config_apply_maxclients = maxclients_hook;
    set_ok("timeout", "77");
    set_ok("hz", "25");
    set_ok("io-threads", "3");
    set_ok("bind", "127.0.0.1 ::1");
    set_ok("maxclients", "123");
    set_ok("save", "3600 1 300 100");
    set_ok("requirepass", "a password");
    set_ok("client-output-buffer-limit", "normal 1mb 512kb 10 pubsub 0 0 0");
    set_ok("loglevel", "warning");
    set_ok("zset-layout", "copied");
    set_ok("list-max-listpack-size", "5");
    set_ok("hash-max-listpack-value", "1kb");
    set_ok("proto-max-bulk-len", "2gb");
    set_ok("io-threads-always-active", "yes");
    set_ok("dbfilename", "other.rdb");
    assert_int_equal(sanity_round_trip(), 6);
}

/* --------------------------------------------------------- CONFIG GET */

static void test_get_matches(void **state) {
    (void)state;
    const char *names[64];
    const char *p1[] = {"*max*"};
    size_t n = config_get_matches(p1, 1, names, 64);
    /* Five of the server's, four of the sorted set's, nine of the list's,
     * the hash's and the set's thresholds (and their aliases). */
    assert_int_equal(n, 18);
    assert_string_equal(names[9], "list-max-listpack-size");
    assert_string_equal(names[17], "set-max-listpack-value");
    assert_string_equal(names[0], "maxclients");
    assert_string_equal(names[1], "max-new-connections-per-cycle");
    assert_string_equal(names[2], "proto-max-bulk-len");
    assert_string_equal(names[3], "prefetch-batch-max-size");
    assert_string_equal(names[4], "io-write-alone-max");
    assert_string_equal(names[5], "zset-max-listpack-entries"); /* and its alias, sharing its value */
    assert_string_equal(names[6], "zset-max-ziplist-entries");
    const char *p2[] = {"port", "p*", "PORT"};
    n = config_get_matches(p2, 3, names, 64);
    assert_int_equal(n, 4); /* port once, then protected-mode, proto-max-bulk-len, prefetch-batch-max-size */
    assert_string_equal(names[0], "port");
    const char *p3[] = {"IO-THREADS*"};
    n = config_get_matches(p3, 1, names, 64);
    assert_int_equal(n, 6);
    assert_string_equal(names[0], "io-threads");
    assert_string_equal(names[1], "io-threads-do-reads");
    assert_string_equal(names[2], "io-threads-always-active");
    assert_string_equal(names[3], "io-threads-ignition");
    assert_string_equal(names[4], "io-threads-idle-spin-us");
    assert_string_equal(names[5], "io-threads-poll-offload");
    const char *p4[] = {"nothing", "x*"};
    assert_int_equal(config_get_matches(p4, 2, names, 64), 0);
    const char *p5[] = {"*"};
    assert_true(config_get_matches(p5, 1, names, 64) >= 23);
    const char *p6[] = {"[tp]ort"};
    n = config_get_matches(p6, 1, names, 64);
    assert_int_equal(n, 1);
}

static void test_config_command(void **state) {
    (void)state;
    expect_reply(2, "GET port", "*2\r\n$4\r\nport\r\n$4\r\n6379\r\n");
    expect_reply(3, "GET port", "%1\r\n$4\r\nport\r\n$4\r\n6379\r\n");
    expect_reply(2, "get PORT", "*2\r\n$4\r\nPORT\r\n$4\r\n6379\r\n");
    expect_reply(2, "GET save appendonly", "*4\r\n$4\r\nsave\r\n$0\r\n\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
    expect_reply(2, "GET nothing", "*0\r\n");
    expect_reply(2, "GET", "-ERR wrong number of arguments for 'config|get' command\r\n");
    expect_reply(2, "FOO", "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n");
    expect_reply(2, "REWRITE", "-ERR The server is running without a config file\r\n");
    expect_reply(2, "SET databases 2",
                 "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config\r\n");
    char *help = run_config(2, "HELP");
    assert_true(!strncmp(help, "*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n", 70));
    assert_non_null(strstr(help, "+RESETSTAT\r\n"));
    assert_non_null(strstr(help, "+    Print this help.\r\n"));
    zfree(help);
    server.stat_numcommands = 42;
    server.stat_total_error_replies = 7;
    expect_reply(2, "RESETSTAT", "+OK\r\n");
    assert_int_equal(server.stat_numcommands, 0);
    assert_int_equal(server.stat_total_error_replies, 0);
}

static void test_config_rewrite(void **state) {
    (void)state;
    const char *path = write_file("rw.conf", "# my settings\nport 7600\nhz 20\nunknown-thing 1\nhz 30\n");
    char *err = NULL;
    const char *a[] = {"s", path};
    /* unknown-thing makes loading fail; load the known part by hand */
    assert_int_equal(args_load(2, a, &err), CONFIG_ARGS_ERROR);
    zfree(err);
    path = write_file("rw.conf", "# my settings\nport 7600\nhz 20\n\nhz 30\n");
    assert_int_equal(args_load(2, a, &err), CONFIG_ARGS_OK);
    set_ok("timeout", "11");
    set_ok("requirepass", "p w");
    set_ok("hz", "40");
    set_ok("proto-max-bulk-len", "3145728");
    set_ok("client-output-buffer-limit", "normal 1mb 100kb 10");
    set_ok("loglevel", "warning"); /* keeps the success log line out of the test output */
    expect_reply(2, "REWRITE", "+OK\r\n");
    FILE *fp = fopen(path, "r");
    char buf[1024] = {0};
    assert_true(fread(buf, 1, sizeof(buf) - 1, fp) > 0);
    fclose(fp);
    assert_string_equal(buf, "# my settings\nport 7600\nhz 40\n\n# Generated by CONFIG REWRITE\n"
                             "timeout 11\nrequirepass \"p w\"\nproto-max-bulk-len 3mb\n"
                             "client-output-buffer-limit normal 1mb 100kb 10\n"
                             "client-output-buffer-limit replica 256mb 64mb 60\n"
                             "client-output-buffer-limit pubsub 32mb 8mb 60\n"
                             "loglevel warning\n");
    /* and it loads back to the same values */
    config_init_defaults();
    assert_int_equal(config_load_file(path, &err), 0);
    assert_int_equal(server.hz, 40);
    assert_int_equal(server.maxidletime, 11);
    assert_string_equal(server.requirepass, "p w");
    assert_int_equal(server.proto_max_bulk_len, 3 * 1024 * 1024);
    assert_int_equal(server.obuf_normal.soft_bytes, 100 * 1024);
}

/* The example soloist.conf at the repository root states the defaults:
 * loading it must change nothing CONFIG GET shows. */
static void test_example_file_is_defaults(void **state) {
    (void)state;
    char path[PATH_MAX];
    const char *self = __FILE__; /* "tests/unit/test_config.c", or absolute */
    size_t root = strlen(self) - strlen("tests/unit/test_config.c");
    snprintf(path, sizeof(path), "%.*ssoloist.conf", (int)root, self);
    if (access(path, R_OK) != 0) {
        print_message("no %s here (run from the repository root)\n", path);
        skip();
    }
    const char *all[] = {"*"};
    const char *names[64];
    size_t n = config_get_matches(all, 1, names, 64);
    char *before[64];
    for (size_t i = 0; i < n; i++) before[i] = config_get(names[i]);
    char *err = NULL;
    int r = config_load_file(path, &err);
    if (r != 0) fail_msg("%s: %s", path, err);
    for (size_t i = 0; i < n; i++) {
        char *after = config_get(names[i]);
        if (strcmp(before[i], after))
            fail_msg("soloist.conf sets %s to '%s', default '%s'", names[i], after, before[i]);
        zfree(after);
        zfree(before[i]);
    }
}

int main(void) {
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/soloist-test-config-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_args_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_args_save_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_args_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_args_special_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_args_unknown_option, setup, teardown),
        cmocka_unit_test_setup_teardown(test_args_with_file_and_stdin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_comments_and_quotes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_corners, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_include, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_range_and_type_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_set_atomic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_set_apply_rollback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_set_sanity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_matches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_rewrite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_example_file_is_defaults, setup, teardown),
    };
    int failed = cmocka_run_group_tests_name("config", tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) failed++;
    return failed;
}
