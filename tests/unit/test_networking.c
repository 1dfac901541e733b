/* test_networking.c — the connection path (step 0, src/networking.c and
 * src/reply.c): the lazy life of a client's buffers and the bytes that
 * cross them.
 *
 * Each test runs the real server loop (server_init on an ephemeral
 * loopback port, which no test uses) with clients on socketpairs: the
 * test writes a request into one end, turns the loop without waiting, and
 * reads the reply from the same end. Nothing here blocks or sleeps; every
 * exchange gives up after a bounded number of loop turns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ae.h"
#include "client.h"
#include "client_io.h"
#include "config.h"
#include "networking.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#include "expect.h"
#include "loop_test.h"
#include "reply_capture.h"

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

/* A connection that never spoke holds neither buffer. */
static void test_new_client_holds_no_buffers(void **state) {
    (void)state;
    conn k = open_conn();
    assert_null(k.c->querybuf);
    assert_null(k.c->buf);
    assert_int_equal(k.c->qb_cap, 0);
    close_conn(&k);
}

/* The first read borrows the shared query buffer and gives it back; the
 * first reply allocates the reply buffer at its smallest size. */
static void test_first_read_and_reply(void **state) {
    (void)state;
    conn k = open_conn();
    roundtrip(&k, "*1\r\n$4\r\nPING\r\n", "+PONG\r\n");
    assert_null(k.c->querybuf);
    assert_int_equal(k.c->qb_cap, 0);
    assert_non_null(k.c->buf);
    assert_int_equal(k.c->buf_size, CLIENT_REPLY_MIN);
    assert_int_equal(k.c->bufpos, 0);
    close_conn(&k);
}

/* The cron takes the reply buffer from a client quiet for long enough,
 * keeps it from one that is not, and a later reply allocates it again. */
static void test_idle_client_gives_buffers_back(void **state) {
    (void)state;
    conn k = open_conn();
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    assert_non_null(k.c->buf);
    networking_clients_cron();
    assert_non_null(k.c->buf); /* just spoke */
    k.c->last_interaction = util_mstime() - CLIENT_IDLE_RELEASE_MS - 1;
    networking_clients_cron();
    assert_null(k.c->buf);
    assert_null(k.c->querybuf);
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    assert_non_null(k.c->buf);
    close_conn(&k);
}

/* A read and its reply stamp last_interaction from the turn's clock
 * (after_sleep's one reading), not from a clock call per request: turns
 * here skip after_sleep, so each stamp must be the value planted. The
 * read happens in the handlers, its reply goes out in the next
 * before_sleep. Before any turn has read the clock, the stamp is the
 * clock itself. */
static void test_interaction_stamped_from_the_turn_clock(void **state) {
    (void)state;
    conn k = open_conn();
    long long saved = server.turn_mstime;
    const char *req = "PING\r\n";
    assert_int_equal(write(k.peer, req, strlen(req)), (ssize_t)strlen(req));
    server.turn_mstime = 41;
    for (int i = 0; i < 1000 && k.c->bufpos == 0; i++)
        ae_process_events(server.el, AE_FILE_EVENTS | AE_DONT_WAIT); /* the read, no write pass */
    assert_int_not_equal(k.c->bufpos, 0);
    assert_true(k.c->last_interaction == 41);
    server.turn_mstime = 42;
    char got[8] = {0};
    size_t n = 0;
    for (int i = 0; i < 1000 && n < 7; i++) {
        ae_process_events(server.el, AE_FILE_EVENTS | AE_DONT_WAIT | AE_CALL_BEFORE_SLEEP);
        ssize_t r = recv(k.peer, got + n, 7 - n, MSG_DONTWAIT);
        if (r > 0) n += (size_t)r;
    }
    assert_string_equal(got, "+PONG\r\n");
    assert_true(k.c->last_interaction == 42);
    server.turn_mstime = 0;
    long long lo = util_mstime(), t = server_turn_mstime(), hi = util_mstime();
    assert_true(lo <= t && t <= hi);
    server.turn_mstime = saved;
    close_conn(&k);
}

/* A's request stops mid-argument; B's read then reuses the shared buffer.
 * A must have kept a private copy of its partial bytes. */
static void test_partial_request_survives_shared_buffer_reuse(void **state) {
    (void)state;
    conn a = open_conn(), b = open_conn();
    roundtrip(&a, "*3\r\n$3\r\nSET\r\n$10\r\nkkkkkkkkkk\r\n$5\r\nvalue\r\n", "+OK\r\n");
    const char *head = "*2\r\n$3\r\nGET\r\n$10\r\nkkkkkkk";
    send_all(a.peer, head, strlen(head));
    for (int i = 0; i < 10; i++) turn();
    /* The key's first bytes wait, unparsed, in A's private buffer. */
    assert_non_null(a.c->querybuf);
    assert_true(a.c->qb_len >= 7);
    assert_memory_equal(a.c->querybuf + a.c->qb_len - 7, "kkkkkkk", 7);
    /* B's read fills the shared buffer with bytes that would make A's
     * key "xxxxxxxkkk" were A still pointing at it. */
    roundtrip(&b, "*2\r\n$3\r\nGET\r\n$10\r\nxxxxxxxxxx\r\n", "$-1\r\n");
    roundtrip(&a, "kkk\r\n", "$5\r\nvalue\r\n");
    assert_null(a.c->querybuf); /* complete again: private buffer freed */
    close_conn(&a);
    close_conn(&b);
}

/* A request split at every byte still parses (each read ends partial). */
static void test_request_byte_by_byte(void **state) {
    (void)state;
    conn k = open_conn();
    const char *echo = "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
    for (const char *p = echo; *p; p++) {
        send_all(k.peer, p, 1);
        turn();
    }
    expect_reply(k.peer, "$5\r\nhello\r\n");
    close_conn(&k);
}

/* Builds "*N\r\n" + N bulks, the first being cmd, the rest arg_i. */
static char *build_request(const char *cmd, int nargs, size_t arglen, size_t *len) {
    size_t cap = 64 + (size_t)nargs * (arglen + 32);
    char *r = zmalloc(cap), *p = r;
    p += sprintf(p, "*%d\r\n$%zu\r\n%s\r\n", nargs + 1, strlen(cmd), cmd);
    for (int i = 0; i < nargs; i++) {
        p += sprintf(p, "$%zu\r\n", arglen);
        memset(p, 'a' + i % 26, arglen);
        p += arglen;
        memcpy(p, "\r\n", 2);
        p += 2;
    }
    *len = (size_t)(p - r);
    return r;
}

/* A big bulk argument (read into a private buffer sized for it) and a
 * command with many arguments; then a reply far larger than the reply
 * buffer, which travels in blocks. */
static void test_big_argv_and_big_reply(void **state) {
    (void)state;
    conn k = open_conn();
    size_t vlen = 300 * 1024, len;
    char *val = zmalloc(vlen);
    for (size_t i = 0; i < vlen; i++) val[i] = (char)('a' + i % 26);
    char *req = zmalloc(vlen + 64);
    len = (size_t)sprintf(req, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%zu\r\n", vlen);
    memcpy(req + len, val, vlen);
    memcpy(req + len + vlen, "\r\n", 2);
    /* The first 100 KB: after the first read the payload goes straight
     * into the argument's object, so no query buffer holds it. */
    send_all(k.peer, req, len + 100 * 1024);
    for (int i = 0; i < 50; i++) turn();
    assert_null(k.c->querybuf);
    assert_true(k.c->querybuf_peak <= CLIENT_IOBUF_LEN); /* never held in a buffer */
    send_all(k.peer, req + len + 100 * 1024, vlen - 100 * 1024 + 2);
    expect_reply(k.peer, "+OK\r\n");
    assert_null(k.c->querybuf);

    char *many = build_request("DEL", 1000, 8, &len);
    send_all(k.peer, many, len);
    expect_reply(k.peer, ":0\r\n");
    zfree(many);

    send_all(k.peer, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 22);
    char hdr[32];
    int hl = sprintf(hdr, "$%zu\r\n", vlen);
    char *got = recv_n(k.peer, (size_t)hl + vlen + 2);
    assert_memory_equal(got, hdr, (size_t)hl);
    assert_memory_equal(got + hl, val, vlen);
    assert_memory_equal(got + hl + vlen, "\r\n", 2);
    assert_null(k.c->reply_head); /* all written: blocks freed */
    assert_int_equal(k.c->reply_bytes, 0);
    zfree(got);
    zfree(req);
    zfree(val);
    close_conn(&k);
}

/* A pipeline whose replies overflow the reply buffer comes back whole
 * and in order. */
static void test_pipeline_overflowing_reply_buffer(void **state) {
    (void)state;
    conn k = open_conn();
    static char req[16384], want[16384];
    size_t rl = 0, wl = 0;
    for (int i = 0; i < 200; i++) {
        char arg[32];
        int al = sprintf(arg, "message-%03d", i);
        rl += (size_t)sprintf(req + rl, "*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n", al, arg);
        wl += (size_t)sprintf(want + wl, "$%d\r\n%s\r\n", al, arg);
        assert_true(rl < sizeof(req) - 64 && wl < sizeof(want) - 64);
    }
    assert_true(wl > CLIENT_REPLY_MIN);
    send_all(k.peer, req, rl);
    expect_reply(k.peer, want);
    close_conn(&k);
}

/* The cron grows a buffer that filled up and shrinks one that is mostly
 * empty, as Redis 7 does, between CLIENT_REPLY_MIN and CLIENT_REPLY_CHUNK. */
static void test_reply_buffer_follows_peak(void **state) {
    (void)state;
    client *c = client_create(-1);
    long long now = util_mstime();
    c->last_interaction = now;
    char blob[3000];
    memset(blob, 'x', sizeof(blob));
    reply_proto(c, blob, sizeof(blob)); /* fills the 1 KB buffer, rest to a block */
    assert_int_equal(c->buf_peak, CLIENT_REPLY_MIN);
    assert_non_null(c->reply_head);
    reply_buffer_cron(c, now); /* bytes pending: untouched */
    assert_int_equal(c->buf_size, CLIENT_REPLY_MIN);
    /* Pretend it was written. */
    c->bufpos = c->sentlen = 0;
    zfree(c->reply_head);
    c->reply_head = c->reply_tail = NULL;
    c->reply_bytes = 0;
    c->reply_blocks = 0;
    reply_buffer_cron(c, now);
    assert_int_equal(c->buf_size, 2 * CLIENT_REPLY_MIN);
    for (int i = 0; i < 10; i++) {
        c->buf_peak = CLIENT_REPLY_CHUNK; /* keeps filling */
        reply_buffer_cron(c, now);
    }
    assert_int_equal(c->buf_size, CLIENT_REPLY_CHUNK);
    reply_proto(c, "+OK\r\n", 5);
    assert_non_null(c->buf);
    c->bufpos = 0;
    c->buf_peak = 5;
    reply_buffer_cron(c, now);
    assert_int_equal(c->buf_size, CLIENT_REPLY_MIN);
    assert_null(c->buf); /* freed empty; the next reply allocates 1 KB */
    client_free(c);
}

/* Bulks after the reply buffer filled go into the last block's room,
 * in order, one block for many of them; a deferred length's placeholder
 * is never written into, and what follows it lands after it. */
static void test_bulks_fill_the_last_block(void **state) {
    (void)state;
    client *c = client_create(-1);
    char blob[CLIENT_REPLY_MIN + 100];
    memset(blob, 'x', sizeof(blob));
    reply_proto(c, blob, sizeof(blob)); /* buf full, 100 bytes in a block */
    assert_int_equal(c->reply_blocks, 1);
    static char want[CLIENT_REPLY_MIN + 8192];
    memcpy(want, blob, sizeof(blob));
    size_t wl = sizeof(blob);
    for (int i = 0; i < 100; i++) {
        char m[16];
        int ml = sprintf(m, "m%04d", i);
        reply_bulk_buf(c, m, (size_t)ml);
        wl += (size_t)sprintf(want + wl, "$%d\r\n%s\r\n", ml, m);
    }
    assert_int_equal(c->reply_blocks, 1); /* 1.1 KB more fit the block */
    void *len = reply_deferred_len(c);
    reply_bulk_buf(c, "after", 5);
    reply_bulk_buf(c, "a-value-of-123-bytes-is-not-special", 35);
    reply_set_deferred_array_len(c, len, 2);
    wl += (size_t)sprintf(want + wl, "*2\r\n$5\r\nafter\r\n$35\r\na-value-of-123-bytes-is-not-special\r\n");
    assert_int_equal(c->reply_blocks, 3); /* the placeholder, then a block after it */
    char *got = take_reply(c);
    assert_int_equal(strlen(got), wl);
    assert_memory_equal(got, want, wl);
    zfree(got);
    client_free(c);
}

/* SETs key "big" to vlen bytes of 'v' through k, and returns the length
 * of GET big's reply. */
static size_t set_big(conn *k, size_t vlen) {
    char *req = zmalloc(vlen + 64);
    size_t len = (size_t)sprintf(req, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%zu\r\n", vlen);
    memset(req + len, 'v', vlen);
    memcpy(req + len + vlen, "\r\n", 2);
    send_all(k->peer, req, len + vlen + 2);
    expect_reply(k->peer, "+OK\r\n");
    size_t reply_len = (size_t)sprintf(req, "$%zu\r\n", vlen) + vlen + 2;
    zfree(req);
    return reply_len;
}

/* Reads k's whole reply of reply_len bytes (turning the loop for what
 * the turn left) and checks that it ends in the value's last byte, c. */
static void expect_reply_ends(conn *k, size_t reply_len, char c) {
    char *got = recv_n(k->peer, reply_len);
    assert_int_equal(got[reply_len - 3], c);
    assert_memory_equal(got + reply_len - 2, "\r\n", 2);
    zfree(got);
}

/* Step 7's write turn on main: with nobody waiting, one turn writes a
 * large reply chunk after chunk of io-write-alone-max until the socket is
 * full or the reply is out; a request that arrives meanwhile ends the turn
 * at the end of the chunk being written. */
static void test_alone_write_goes_on_until_someone_waits(void **state) {
    (void)state;
    long long saved = server.io_write_alone_max;
    server.io_write_alone_max = 16 * 1024;
    conn k = open_conn(), other = open_conn();
    size_t reply_len = set_big(&k, 96 * 1024);
    for (int someone_waits = 0; someone_waits < 2; someone_waits++) {
        unsigned long long before = k.c->net_output_bytes;
        send_all(k.peer, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 22);
        turn(); /* reads and runs the GET; the reply waits for the write pass */
        assert_int_equal(k.c->net_output_bytes, before);
        if (someone_waits) send_all(other.peer, "*1\r\n$4\r\nPING\r\n", 14);
        ae_process_events(server.el, AE_TIME_EVENTS | AE_DONT_WAIT); /* no timer due during the write */
        networking_handle_pending_writes();                          /* the write pass of the next turn, alone */
        assert_int_equal(k.c->net_output_bytes - before, someone_waits ? 16 * 1024 : reply_len);
        expect_reply_ends(&k, reply_len, 'v');
    }
    expect_reply(other.peer, "+PONG\r\n");
    close_conn(&other);
    close_conn(&k);
    server.io_write_alone_max = saved;
}

/* Step 7: a turn's cap is lifted when the output exceeds it by at most
 * NET_WRITE_TAIL_MAX, so a value of exactly the cap (its reply 10 bytes
 * longer: header and CRLF) goes out in one turn, not a full turn and one
 * of 10 bytes; a reply more than 16 KB past the cap is still clipped.
 * Here the cap is io-write-alone-max's (32 KB): nobody is queued to be
 * written when k's turn starts, and the PING on another connection ends
 * the turn after one chunk (ae_others_ready). */
static void test_turn_leaves_no_small_tail(void **state) {
    (void)state;
    long long saved = server.io_write_alone_max;
    server.io_write_alone_max = 32 * 1024;
    conn k = open_conn(), other = open_conn();
    /* the cap exactly; then replies of the cap plus the tail exactly, and 1 more ("$49142\r\n": 8 bytes) */
    size_t vlens[] = {32 * 1024, 32 * 1024 + NET_WRITE_TAIL_MAX - 10, 32 * 1024 + NET_WRITE_TAIL_MAX - 9};
    for (int i = 0; i < 3; i++) {
        size_t reply_len = set_big(&k, vlens[i]);
        unsigned long long before = k.c->net_output_bytes;
        send_all(k.peer, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 22);
        turn(); /* reads and runs the GET; the reply waits for the write pass */
        send_all(other.peer, "*1\r\n$4\r\nPING\r\n", 14);
        ae_process_events(server.el, AE_TIME_EVENTS | AE_DONT_WAIT);
        networking_handle_pending_writes();
        size_t want = reply_len <= 32 * 1024 + NET_WRITE_TAIL_MAX ? reply_len : 32 * 1024;
        expect_eq(("bytes one turn writes of a reply the cap plus a tail long"), k.c->net_output_bytes - before, want);
        expect_reply_ends(&k, reply_len, 'v');
        expect_reply(other.peer, "+PONG\r\n");
    }
    close_conn(&other);
    close_conn(&k);
    server.io_write_alone_max = saved;
}

/* The same rule on the 64 KB cap of a turn while others wait: another
 * client is queued to be written when k's turn comes (the list is LIFO,
 * so it was queued first), and k's reply of the cap plus the tail goes
 * out whole in that turn, one byte longer only up to the cap. */
static void test_turn_leaves_no_small_tail_while_others_wait(void **state) {
    (void)state;
    conn k = open_conn(), other = open_conn();
    /* replies of 64 KB + 16 KB and one byte more: "$81910\r\n" is 8 bytes */
    size_t vlens[] = {NET_MAX_WRITES_PER_EVENT + NET_WRITE_TAIL_MAX - 10,
                      NET_MAX_WRITES_PER_EVENT + NET_WRITE_TAIL_MAX - 9};
    char *v = zmalloc(vlens[1]);
    memset(v, 'w', vlens[1]);
    for (int i = 0; i < 2; i++) {
        reply_bulk_buf(other.c, "x", 1);
        reply_bulk_buf(k.c, v, vlens[i]);
        size_t reply_len = vlens[i] + 10;
        unsigned long long before = k.c->net_output_bytes;
        networking_handle_pending_writes();
        expect_eq(("bytes one turn writes, others queued, of a reply the 64 KB cap plus a tail long"),
                  k.c->net_output_bytes - before, i == 0 ? reply_len : NET_MAX_WRITES_PER_EVENT);
        expect_reply_ends(&k, reply_len, 'w');
        expect_reply(other.peer, "$1\r\nx\r\n");
    }
    zfree(v);
    close_conn(&other);
    close_conn(&k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_client_holds_no_buffers),
        cmocka_unit_test(test_first_read_and_reply),
        cmocka_unit_test(test_idle_client_gives_buffers_back),
        cmocka_unit_test(test_interaction_stamped_from_the_turn_clock),
        cmocka_unit_test(test_partial_request_survives_shared_buffer_reuse),
        cmocka_unit_test(test_request_byte_by_byte),
        cmocka_unit_test(test_big_argv_and_big_reply),
        cmocka_unit_test(test_pipeline_overflowing_reply_buffer),
        cmocka_unit_test(test_reply_buffer_follows_peak),
        cmocka_unit_test(test_bulks_fill_the_last_block),
        cmocka_unit_test(test_alone_write_goes_on_until_someone_waits),
        cmocka_unit_test(test_turn_leaves_no_small_tail),
        cmocka_unit_test(test_turn_leaves_no_small_tail_while_others_wait),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
