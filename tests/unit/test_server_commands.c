/* test_server_commands.c — the connection and server commands (step 0,
 * src/cmd_client.c, cmd_server.c, cmd_config.c, cmd_info.c) through the
 * dispatcher (process_command), on a fake client (fd -1) whose replies
 * are read back from its buffers.
 *
 * CLIENT REPLY is tested the way networking.c runs commands: each command
 * goes through process_command and then client_command_done, so SKIP
 * covers exactly the command after it. The differential suite
 * (tests/integration/transcripts/17-client-reply-time.txt) checks the
 * same against a real connection.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "reply_capture.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "networking.h"
#include "object.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static db tdb;
static client *tc;

static int setup(void **state) {
    (void)state;
    config_init_defaults();
    commands_init();
    db_init(&tdb, 0);
    tc = zcalloc(sizeof(*tc));
    tc->fd = -1;
    tc->resp = 2;
    tc->authenticated = 1;
    tc->db = &tdb;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (tc->flags & CLIENT_MONITOR) monitor_remove(tc);
    commands_on_call(NULL);
    zfree(take_reply(tc));
    zfree(tc->name);
    zfree(tc->lib_name);
    zfree(tc->lib_ver);
    zfree(tc->buf); /* the reply buffer, allocated by the first reply */
    zfree(tc);
    db_release(&tdb);
    config_free_all();
    return 0;
}

/* Runs one command as networking.c does: the dispatcher, then the
 * end-of-command bookkeeping. */
static void run_args(int argc, const char *const *args) {
    obj *argv[32];
    for (int i = 0; i < argc; i++) argv[i] = obj_create_string(args[i], strlen(args[i]));
    tc->argc = argc;
    tc->argv = argv;
    process_command(tc);
    client_command_done(tc);
    for (int i = 0; i < argc; i++) obj_decr_ref(argv[i]);
    tc->argv = NULL;
    tc->argc = 0;
}

/* The same for a command whose words are split on spaces. */
static void run(const char *line) {
    const char *args[32];
    int argc = 0;
    char *copy = zstrdup(line);
    for (char *tok = strtok(copy, " "); tok && argc < 32; tok = strtok(NULL, " ")) args[argc++] = tok;
    run_args(argc, args);
    zfree(copy);
}

static void expect_reply(const char *want) {
    char *got = take_reply(tc);
    if (strcmp(got, want)) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "got <%s> want <%s>", got, want);
        zfree(got);
        fail_msg("%s", msg);
    }
    zfree(got);
}

/* Runs a sequence of commands and checks what the client received for
 * all of them together. */
static void expect(const char *const *lines, const char *want) {
    for (; *lines; lines++) run(*lines);
    expect_reply(want);
}

#define EXPECT(want, ...) expect((const char *const[]){__VA_ARGS__, NULL}, want)

static void test_client_reply_off_on(void **state) {
    (void)state;
    long long errors = server.stat_total_error_replies;
    /* OFF: nothing at all, errors included, until ON answers +OK */
    EXPECT("", "CLIENT REPLY OFF", "SET a 1", "GET a", "NOSUCH", "GET", "CLIENT REPLY SKIP");
    assert_true(tc->flags & CLIENT_REPLY_OFF);
    assert_false(tc->flags & (CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT)); /* SKIP while OFF: ignored */
    /* the two errors were counted though not sent, as in Valkey */
    assert_int_equal(server.stat_total_error_replies - errors, 2);
    EXPECT("+OK\r\n$1\r\n1\r\n", "CLIENT REPLY ON", "GET a");
    assert_false(tc->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT));
}

static void test_client_reply_skip(void **state) {
    (void)state;
    /* SKIP: no reply for itself nor for the one command after it */
    EXPECT("+OK\r\n:2\r\n", "SET a 0", "CLIENT REPLY SKIP", "INCR a", "INCR a");
    EXPECT("+PONG\r\n", "CLIENT REPLY SKIP", "NOSUCH", "PING");
    EXPECT("+PONG\r\n", "CLIENT REPLY SKIP", "GET", "PING");
    /* the second SKIP is the skipped command, and skips the next */
    EXPECT("+PONG\r\n", "CLIENT REPLY SKIP", "CLIENT REPLY SKIP", "PING", "PING");
    /* ON right after SKIP is answered and clears it */
    EXPECT("+OK\r\n+PONG\r\n", "CLIENT REPLY SKIP", "CLIENT REPLY ON", "PING");
    EXPECT("-ERR syntax error\r\n", "CLIENT REPLY maybe");
    EXPECT("-ERR wrong number of arguments for 'client|reply' command\r\n", "CLIENT REPLY");
}

static void test_client_reply_drops_deferred_replies(void **state) {
    (void)state;
    /* KEYS builds its reply around a deferred length; while OFF nothing
     * of it, placeholder included, may reach the buffers. */
    EXPECT("+OK\r\n", "SET k 1", "CLIENT REPLY OFF", "KEYS *");
    assert_null(tc->reply_head);
    assert_int_equal(tc->bufpos, 0);
    EXPECT("+OK\r\n*1\r\n$1\r\nk\r\n", "CLIENT REPLY ON", "KEYS *");
}

/* CLIENT INFO and CLIENT LIST show SETINFO's fields after resp=. The
 * fake client is linked into server.clients for the listing. */
static void test_client_setinfo(void **state) {
    (void)state;
    EXPECT("+OK\r\n+OK\r\n", "CLIENT SETINFO lib-name redis-py", "CLIENT SETINFO LIB-VER 5.0.1");
    assert_string_equal(tc->lib_name, "redis-py");
    assert_string_equal(tc->lib_ver, "5.0.1");
    EXPECT("-ERR Unrecognized option 'lib-foo'\r\n", "CLIENT SETINFO lib-foo x");
    EXPECT("-ERR wrong number of arguments for 'client|setinfo' command\r\n", "CLIENT SETINFO lib-name");

    /* a value with a byte outside '!'..'~' is refused, naming the option as typed */
    run_args(4, (const char *const[]){"CLIENT", "SETINFO", "Lib-Ver", "1 0"});
    expect_reply("-ERR Lib-Ver cannot contain spaces, newlines or special characters.\r\n");
    assert_string_equal(tc->lib_ver, "5.0.1");

    server.clients = tc;
    run("CLIENT INFO");
    char *info = take_reply(tc);
    server.clients = NULL;
    assert_non_null(strstr(info, " resp=2 lib-name=redis-py lib-ver=5.0.1 tot-net-in="));
    assert_non_null(strstr(info, "\n\r\n"));
    assert_true(strncmp(info, "$", 1) == 0 && strstr(info, "\r\nid=") != NULL);
    zfree(info);

    /* an empty value clears the field */
    run_args(4, (const char *const[]){"CLIENT", "SETINFO", "lib-name", ""});
    expect_reply("+OK\r\n");
    assert_null(tc->lib_name);
}

static void test_client_no_evict_no_touch(void **state) {
    (void)state;
    EXPECT("+OK\r\n+OK\r\n+OK\r\n+OK\r\n", "CLIENT NO-EVICT on", "CLIENT NO-EVICT OFF", "CLIENT NO-TOUCH ON",
           "CLIENT NO-TOUCH off");
    EXPECT("-ERR syntax error\r\n-ERR syntax error\r\n", "CLIENT NO-EVICT maybe", "CLIENT NO-TOUCH 1");
    EXPECT("-ERR wrong number of arguments for 'client|no-touch' command\r\n", "CLIENT NO-TOUCH");
}

static void test_time(void **state) {
    (void)state;
    long long before = util_ustime();
    run("TIME");
    long long after = util_ustime();
    char *got = take_reply(tc);
    long long sec = 0, usec = 0;
    int n = sscanf(got, "*2\r\n$%*d\r\n%lld\r\n$%*d\r\n%lld\r\n", &sec, &usec);
    assert_int_equal(n, 2);
    assert_true(usec >= 0 && usec < 1000000);
    long long t = sec * 1000000 + usec;
    assert_true(t >= before && t <= after);
    zfree(got);
    EXPECT("-ERR wrong number of arguments for 'time' command\r\n", "TIME x");
}

/* Recorded from redis-server 7.0.15 except SELECT 1 and COPY ... DB 1,
 * which soloist (one database) answers as Valkey answers an index past
 * its last database. */
static void test_database_index(void **state) {
    (void)state;
    EXPECT("+OK\r\n", "SELECT 0");
    EXPECT("-ERR DB index is out of range\r\n", "SELECT 1");
    EXPECT("-ERR DB index is out of range\r\n", "SELECT -1");
    EXPECT("-ERR value is not an integer or out of range\r\n", "SELECT x");
    EXPECT("-ERR value is out of range, value must between -2147483648 and 2147483647\r\n", "SELECT 2147483648");
    EXPECT("-ERR value is out of range, value must between -2147483648 and 2147483647\r\n", "SELECT -2147483649");
    EXPECT("+OK\r\n:1\r\n", "SET s v", "COPY s t DB 0");
    EXPECT("-ERR DB index is out of range\r\n", "COPY s u DB 1");
    EXPECT("-ERR value is out of range, value must between -2147483648 and 2147483647\r\n", "COPY s u DB 99999999999");
    EXPECT(":0\r\n", "EXISTS u");
}

/* CONFIG GET with several names and patterns answers each parameter once,
 * under the spelling first asked for (Valkey: configGetCommand). */
static void test_config_get_several(void **state) {
    (void)state;
    EXPECT("*2\r\n$7\r\ntimeout\r\n$1\r\n0\r\n", "CONFIG GET timeout time* TIMEOUT");
    EXPECT("*2\r\n$7\r\nTIMEOUT\r\n$1\r\n0\r\n", "CONFIG GET TIMEOUT timeout");
    EXPECT("*4\r\n$7\r\ntimeout\r\n$1\r\n0\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n",
           "CONFIG GET timeout nosuch maxclients");
    EXPECT("*0\r\n", "CONFIG GET nosuch nosuch2");
    /* CONFIG SET: all or nothing */
    EXPECT("-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into "
           "an integer\r\n",
           "CONFIG SET timeout 100 maxclients abc");
    EXPECT("*2\r\n$7\r\ntimeout\r\n$1\r\n0\r\n", "CONFIG GET timeout");
    EXPECT("-ERR CONFIG SET failed (possibly related to argument 'TIMEOUT') - duplicate parameter\r\n",
           "CONFIG SET timeout 1 TIMEOUT 2");
    EXPECT("-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n", "CONFIG SET timeout 1 nosuch 2");
    EXPECT("-ERR syntax error\r\n", "CONFIG SET timeout 1 maxclients");
    EXPECT("+OK\r\n*4\r\n$7\r\ntimeout\r\n$2\r\n10\r\n$18\r\nproto-max-bulk-len\r\n$7\r\n1048576\r\n",
           "CONFIG SET timeout 10 proto-max-bulk-len 1mb", "CONFIG GET timeout proto-max-bulk-len");
}

/* INFO server opens as Valkey 8.1's does: redis_version (the Redis
 * version clients gate features on), server_name, soloist's own version
 * (no valkey_version), the build stamp, then server_mode. */
static void test_info_server_identity(void **state) {
    (void)state;
    run("INFO server");
    char *got = take_reply(tc);
    char want[256];
    snprintf(want, sizeof(want),
             "# Server\r\nredis_version:%s\r\nserver_name:soloist\r\nsoloist_version:%s\r\n"
             "redis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:",
             SOLOIST_COMPAT_VERSION, SOLOIST_VERSION);
    char *body = strstr(got, "\r\n");
    assert_non_null(body);
    assert_true(strncmp(body + 2, want, strlen(want)) == 0);
    assert_non_null(strstr(got, "\r\nserver_mode:standalone\r\nos:"));
    assert_non_null(strstr(got, "\r\nio_threads_active:0\r\nlistener0:name=tcp"));
    zfree(got);
}

/* ------------------------------------------------------------ MONITOR */

static int starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static client *fake_monitor(void) {
    client *m = zcalloc(sizeof(*m));
    m->fd = -1;
    m->resp = 2;
    m->authenticated = 1;
    m->db = &tdb;
    return m;
}

static void free_fake(client *m) {
    zfree(take_reply(m));
    zfree(m->buf);
    zfree(m);
}

/* What m was fed, each line without its clock ("+<secs>.<usecs> "). */
static void expect_fed(client *m, const char *want) {
    char *got = take_reply(m), out[1024] = "";
    size_t off = 0;
    for (char *line = got; *line;) {
        char *end = strstr(line, "\r\n");
        assert_non_null(end);
        char *sp = strchr(line, ' ');
        assert_true(line[0] == '+' && sp && sp < end);
        off += (size_t)snprintf(out + off, sizeof(out) - off, "%.*s\n", (int)(end - sp - 1), sp + 1);
        line = end + 2;
    }
    if (strcmp(out, want)) fail_msg("fed <%s> want <%s>", out, want);
    zfree(got);
}

/* sdscatrepr's quoting, the stamp's form and the client's address. */
static void test_monitor_line_format(void **state) {
    (void)state;
    strcpy(tc->addr, "127.0.0.1:5000");
    obj *argv[3] = {obj_create_string("SET", 3), obj_create_string("k", 1),
                    obj_create_string("a\nb\"c\\d\x01\xff\t\r\a\b e\0z", 17)};
    char *line;
    size_t len = monitor_format_line(tc, argv, 3, 1712345678000042LL, &line);
    const char *want = "+1712345678.000042 [0 127.0.0.1:5000] \"SET\" \"k\" "
                       "\"a\\nb\\\"c\\\\d\\x01\\xff\\t\\r\\a\\b e\\x00z\"\r\n";
    assert_int_equal(len, strlen(want));
    assert_memory_equal(line, want, len);
    zfree(line);
    for (int i = 0; i < 3; i++) obj_decr_ref(argv[i]);
}

/* What reaches a monitor: every command that ran, as sent; not an admin
 * command nor one refused before it ran; passwords redacted. */
static void test_monitor_feed(void **state) {
    (void)state;
    commands_on_call(monitor_after_call);
    client *m = fake_monitor(), *m2 = fake_monitor();
    monitor_add(m);
    monitor_add(m2);
    run("SET k v");
    run("get k");
    run("CONFIG GET port"); /* admin */
    run("CLIENT LIST");     /* admin */
    run("CLIENT ID");
    run("GET");      /* wrong arity: refused */
    run("NOSUCH a"); /* unknown */
    run("AUTH secret");
    run("AUTH someone secret");
    run("HELLO 2 AUTH default secret SETNAME n");
    zfree(take_reply(tc));
    const char *want = "[0 ] \"SET\" \"k\" \"v\"\n[0 ] \"get\" \"k\"\n[0 ] \"CLIENT\" \"ID\"\n"
                       "[0 ] \"AUTH\" \"(redacted)\"\n[0 ] \"AUTH\" \"(redacted)\" \"(redacted)\"\n"
                       "[0 ] \"HELLO\" \"2\" \"AUTH\" \"(redacted)\" \"(redacted)\" \"SETNAME\" \"n\"\n";
    expect_fed(m, want);
    expect_fed(m2, want);
    monitor_remove(m);
    run("PING");
    expect_fed(m, "");
    expect_fed(m2, "[0 ] \"PING\"\n");
    monitor_remove(m2);
    assert_int_equal(server.monitors_len, 0);
    free_fake(m);
    free_fake(m2);
}

/* The monitor's own side: +OK once, MONITOR again ignored, the keyspace
 * refused, RESET back to an ordinary client. */
static void test_monitor_client(void **state) {
    (void)state;
    commands_on_call(monitor_after_call);
    run("MONITOR");
    expect_reply("+OK\r\n");
    assert_true(tc->flags & CLIENT_MONITOR);
    run("MONITOR");
    expect_reply("");
    assert_int_equal(server.monitors_len, 1);
    run("GET k");
    expect_reply("-ERR Replica can't interact with the keyspace\r\n");
    run("PING");
    char *got = take_reply(tc);
    assert_true(starts_with(got, "+PONG\r\n+") && strstr(got, " \"PING\"\r\n"));
    zfree(got);
    run("CLIENT SETNAME x");
    zfree(take_reply(tc));
    run("RESET");
    expect_reply("+RESET\r\n"); /* not fed to itself: it left the monitors first */
    assert_ptr_equal(tc->db, &db0);
    tc->db = &tdb; /* this test's keyspace */
    assert_false(tc->flags & CLIENT_MONITOR);
    assert_null(tc->name);
    assert_int_equal(server.monitors_len, 0);
    run("GET k");
    expect_reply("$-1\r\n");
}

/* ------------------------------------------------------------- MEMORY */

static long long reply_int(void) {
    char *got = take_reply(tc);
    if (got[0] != ':') fail_msg("not an integer: <%s>", got);
    long long v = strtoll(got + 1, NULL, 10);
    zfree(got);
    return v;
}

static void test_memory_usage(void **state) {
    (void)state;
    run("SET small v");
    zfree(take_reply(tc));
    char big[1100];
    memset(big, 'x', 1000);
    big[1000] = '\0';
    run_args(3, (const char *const[]){"SET", "big", big});
    zfree(take_reply(tc));
    run("MEMORY USAGE small");
    long long small = reply_int();
    run("MEMORY USAGE big SAMPLES 0");
    long long large = reply_int();
    assert_true(small > 0 && small < 200);
    assert_true(large >= 1000 && large < 1300);
    run("ZADD z 1 a 2 b 3 c");
    zfree(take_reply(tc));
    run("MEMORY USAGE z");
    assert_true(reply_int() > 3 * 8);
    run("MEMORY USAGE nosuch");
    expect_reply("$-1\r\n");
    run("MEMORY USAGE small SAMPLES -1");
    expect_reply("-ERR syntax error\r\n");
    run("MEMORY USAGE small SAMPLES x");
    expect_reply("-ERR value is not an integer or out of range\r\n");
    run("MEMORY USAGE small FOO");
    expect_reply("-ERR syntax error\r\n");
    run("MEMORY USAGE");
    expect_reply("-ERR wrong number of arguments for 'memory|usage' command\r\n");
    run("MEMORY FOO");
    expect_reply("-ERR unknown subcommand 'FOO'. Try MEMORY HELP.\r\n");
    run("MEMORY PURGE");
    expect_reply("+OK\r\n");
    run("MEMORY MALLOC-STATS");
    expect_reply("$45\r\nStats not supported for the current allocator\r\n");
}

/* An INFO field's value, as a double. */
static double info_field(const char *info, const char *name) {
    char key[64];
    snprintf(key, sizeof(key), "\r\n%s:", name);
    const char *p = strstr(info, key);
    if (!p) fail_msg("no %s in INFO", name);
    return strtod(p + strlen(key), NULL);
}

/* INFO memory: Valkey 8's fields in its order, and numbers that agree. */
static void test_info_memory(void **state) {
    (void)state;
    db_init(&db0, 0); /* INFO reads the server's keyspace tables */
    run("INFO memory");
    char *got = take_reply(tc);
    static const char *const order[] = {"used_memory",
                                        "used_memory_human",
                                        "used_memory_rss",
                                        "used_memory_rss_human",
                                        "used_memory_peak",
                                        "used_memory_peak_human",
                                        "used_memory_peak_perc",
                                        "used_memory_overhead",
                                        "used_memory_startup",
                                        "used_memory_dataset",
                                        "used_memory_dataset_perc",
                                        "total_system_memory",
                                        "total_system_memory_human",
                                        "maxmemory",
                                        "maxmemory_human",
                                        "maxmemory_policy",
                                        "mem_fragmentation_ratio",
                                        "mem_fragmentation_bytes",
                                        "mem_clients_slaves",
                                        "mem_clients_normal",
                                        "mem_allocator",
                                        NULL};
    const char *at = got;
    for (int i = 0; order[i]; i++) {
        char key[64];
        snprintf(key, sizeof(key), "\r\n%s:", order[i]);
        const char *p = strstr(at, key);
        if (!p) fail_msg("%s missing or out of order", order[i]);
        at = p + 1;
    }
    double used = info_field(got, "used_memory"), peak = info_field(got, "used_memory_peak");
    double overhead = info_field(got, "used_memory_overhead"), dataset = info_field(got, "used_memory_dataset");
    assert_true(used > 0);
    assert_true(info_field(got, "used_memory_rss") > 0);
    assert_true(peak >= used);
    assert_true(info_field(got, "used_memory_peak_perc") <= 100.0);
    assert_true(overhead >= info_field(got, "used_memory_startup"));
    assert_true(dataset == (used > overhead ? used - overhead : 0));
    assert_true(info_field(got, "mem_fragmentation_ratio") > 0);
    assert_true(info_field(got, "total_system_memory") > 0);
    assert_non_null(strstr(got, "\r\nmem_allocator:libc\r\n"));
    zfree(got);
    run("MEMORY STATS");
    got = take_reply(tc);
    assert_true(starts_with(got, "*32\r\n$14\r\npeak.allocated\r\n:"));
    zfree(got);
    db_release(&db0);
}

/* The HELP of CLIENT, COMMAND and MEMORY: Valkey's header, lines and footer. */
static void test_help_texts(void **state) {
    (void)state;
    run("CLIENT HELP");
    char *got = take_reply(tc);
    assert_true(
        starts_with(got, "*45\r\n+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GETNAME\r\n"));
    assert_non_null(strstr(got, "+    * TYPE (NORMAL|PRIMARY|REPLICA|PUBSUB)\r\n+      Kill connections by type.\r\n"));
    assert_non_null(strstr(got, "+NO-TOUCH (ON|OFF)\r\n+    Will not touch LRU/LFU stats when this mode is on.\r\n"
                                "+HELP\r\n+    Print this help.\r\n"));
    zfree(got);
    run("COMMAND HELP");
    got = take_reply(tc);
    assert_true(starts_with(got, "*17\r\n+COMMAND <subcommand>"));
    assert_non_null(strstr(got, "+DOCS [<command-name> ...]\r\n+    Return documentation details about multiple "
                                "commands.\r\n+    If no command names are given, documentation details for all\r\n"));
    zfree(got);
    run("MEMORY HELP");
    got = take_reply(tc);
    assert_true(starts_with(got, "*12\r\n+MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"));
    zfree(got);
}

/* CLIENT KILL ADDR reads a client's addr, which the worker running its
 * ACCEPT job writes (client_io_accept) after the client is already on
 * server.clients: the kill must wait for that job, as CLIENT LIST does.
 * A thread stands in for the worker: it writes the address 50 ms later
 * and then hands the read direction back; a kill that compared at once
 * would find no such client (and ThreadSanitizer a race). The thread
 * waits on nothing with a bound, so the binary may run beside others
 * (cmocka-run: no timed wait). */
static client accepting;

static void *accept_job(void *arg) {
    (void)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    snprintf(accepting.addr, sizeof(accepting.addr), "10.0.0.9:4242");
    atomic_store_explicit(&accepting.io_read_state, CLIENT_IO_IDLE, memory_order_release);
    return NULL;
}

static void test_client_kill_waits_for_accept(void **state) {
    (void)state;
    memset(&accepting, 0, sizeof(accepting));
    accepting.fd = -1;
    accepting.io_accepting = 1;
    atomic_store_explicit(&accepting.io_read_state, CLIENT_IO_PENDING, memory_order_relaxed);
    client *saved = server.clients;
    accepting.next = saved;
    server.clients = &accepting;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, accept_job, NULL), 0);
    EXPECT(":1\r\n", "CLIENT KILL ADDR 10.0.0.9:4242");
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(accepting.flags & CLIENT_CLOSE_ASAP);
    server.clients = saved;
    server.clients_to_close_len = 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_client_reply_off_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_reply_skip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_reply_drops_deferred_replies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_setinfo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_no_evict_no_touch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_database_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_get_several, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info_server_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_line_format, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_feed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help_texts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_kill_waits_for_accept, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
