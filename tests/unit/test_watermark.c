/* test_watermark.c — step 5's exercise: the watermark that bounds a write
 * job (src/client_io.c: client_io_mark_write, client_io_write).
 *
 * A write job reads the client's output while main may append to it. The
 * tests play both sides on one thread, so every mistake shows every time:
 * main marks the output, appends more (into buf, into the marked block,
 * into new blocks), and only then runs the write as the worker would.
 * Bytes appended after the mark must not be sent, the fields main keeps
 * changing must not be read, and nothing may be consumed or freed by the
 * write: main takes the bytes off afterwards (client_write_done). The
 * last test runs the same through the server's I/O threads, under
 * ThreadSanitizer too when `make grade` runs the full matrix.
 *
 * The loop is not turned between the mark and the write: a turn would
 * write the client itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "client.h"
#include "client_io.h"
#include "networking.h"
#include "reply.h"
#include "server.h"

#include "loop_test.h"

static int setup(void **state) {
    (void)state;
    return loop_server_init(3);
}

static int teardown(void **state) {
    (void)state;
    loop_server_destroy();
    return 0;
}

/* The bytes main appends, in order: byte i of the stream is pattern(i). */
static char pattern(size_t i) { return (char)('a' + i % 23); }

typedef struct stream {
    size_t appended, received;
} stream;

static void append(client *c, stream *s, size_t n) {
    char *p = zmalloc(n);
    for (size_t i = 0; i < n; i++) p[i] = pattern(s->appended + i);
    reply_proto(c, p, n);
    s->appended += n;
    zfree(p);
}

/* Reads everything the peer has, without turning the loop; checks every
 * byte against the stream. Returns how many arrived. */
static size_t receive(int fd, stream *s) {
    char buf[4096];
    size_t got = 0;
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
        for (ssize_t i = 0; i < n; i++) assert_int_equal(buf[i], pattern(s->received + (size_t)i));
        s->received += (size_t)n;
        got += (size_t)n;
    }
    return got;
}

/* The bytes pending now: what a mark taken now covers. */
static size_t pending(const client *c) {
    size_t n = c->bufpos - (c->bufpos ? c->sentlen : 0);
    for (reply_block *b = c->reply_head; b; b = b->next) n += b->used - (!c->bufpos && b == c->reply_head ? c->sentlen : 0);
    return n;
}

/* Appends until buf is full and `blocks` blocks exist, the last one full
 * too: the mark then sits at a block boundary. */
static void fill(client *c, stream *s, long blocks) {
    append(c, s, c->buf_size ? c->buf_size - c->bufpos : CLIENT_REPLY_MIN);
    while (c->reply_blocks < blocks || c->reply_tail->used < c->reply_tail->size) {
        reply_block *t = c->reply_tail;
        append(c, s, t && t->used < t->size ? t->size - t->used : CLIENT_REPLY_CHUNK);
    }
}

/* Only buf holds output: the mark is buf's bufpos, and what main appends
 * to buf after it is not sent. */
static void test_write_stops_at_mark_in_buf(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    append(c, &s, 7);
    client_io_mark_write(c);
    assert_null(c->io_last_reply_block);
    assert_int_equal(c->io_last_bufpos, 7);
    append(c, &s, 9); /* main, while the worker writes */
    client_io_write(c);
    assert_int_equal(c->io_nwritten, 7);
    assert_int_equal(receive(k.peer, &s), 7);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 9);
    close_conn(&k);
}

/* The mark inside a block: buf's pending bytes, then the block up to its
 * used at the mark, and not what main adds to that block afterwards. */
static void test_write_stops_at_mark_in_block(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    append(c, &s, CLIENT_REPLY_MIN + 100); /* buf full, 100 bytes in a block */
    assert_non_null(c->reply_tail);
    client_io_mark_write(c);
    assert_ptr_equal(c->io_last_reply_block, c->reply_tail);
    assert_int_equal(c->io_last_bufpos, 100);
    size_t marked = pending(c);
    append(c, &s, 50); /* into the marked block, past its mark */
    client_io_write(c);
    assert_int_equal(c->io_nwritten, marked);
    assert_int_equal(receive(k.peer, &s), marked);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 50);
    close_conn(&k);
}

/* The mark at the end of a full block: main's next bytes go into a new
 * block, linked through the marked block's next. The write must stop at
 * the mark without following it. */
static void test_write_skips_blocks_after_mark(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    fill(c, &s, 2);
    client_io_mark_write(c);
    assert_ptr_equal(c->io_last_reply_block, c->reply_tail);
    assert_int_equal(c->io_last_bufpos, c->reply_tail->used);
    size_t marked = pending(c);
    append(c, &s, 300); /* a new block after the marked one */
    assert_int_equal(c->reply_blocks, 3);
    client_io_write(c);
    assert_int_equal(c->io_nwritten, marked);
    assert_int_equal(receive(k.peer, &s), marked);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 300);
    close_conn(&k);
}

/* The write only reports: buf, sentlen and every block are as main left
 * them until client_write_done takes the bytes off and frees the blocks
 * (under ASan, a block freed by the write is a use-after-free there). */
static void test_write_consumes_nothing(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    stream s = {0, 0};
    fill(c, &s, 2);
    reply_block *head = c->reply_head, *tail = c->reply_tail;
    size_t bufpos = c->bufpos, bytes = c->reply_bytes, all = pending(c);
    client_io_mark_write(c);
    client_io_write(c);
    assert_int_equal(c->io_nwritten, all);
    assert_ptr_equal(c->reply_head, head);
    assert_ptr_equal(c->reply_tail, tail);
    assert_ptr_equal(head->next, tail);
    assert_int_equal(c->bufpos, bufpos);
    assert_int_equal(c->sentlen, 0);
    assert_int_equal(c->reply_blocks, 2);
    assert_int_equal(c->reply_bytes, bytes);
    assert_int_equal(receive(k.peer, &s), all);
    assert_int_equal(client_write_done(c, 1), 0);
    assert_int_equal(pending(c), 0);
    assert_null(c->reply_head);
    close_conn(&k);
}

/* A small socket buffer, so each write stops part-way, anywhere in buf or
 * a block; main appends after each mark. Round after round, the peer must
 * get the stream exactly once and in order, and each write must stay
 * within its mark. */
static void test_write_in_rounds(void **state) {
    (void)state;
    conn k = open_conn();
    client *c = k.c;
    int small = 4096;
    assert_int_equal(setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    stream s = {0, 0};
    append(c, &s, 3 * CLIENT_REPLY_CHUNK + 777);
    for (int round = 0; round < 200 && pending(c); round++) {
        client_io_mark_write(c);
        size_t marked = pending(c);
        append(c, &s, (size_t)(round % 7) * 301); /* main, meanwhile */
        client_io_write(c);
        assert_true(c->io_nwritten <= marked);
        assert_int_equal(receive(k.peer, &s), c->io_nwritten);
        assert_int_equal(client_write_done(c, 1), 0);
    }
    assert_int_equal(pending(c), 0);
    assert_int_equal(s.received, s.appended);
    close_conn(&k);
}

/* Through the I/O threads: GETs of a value larger than buf and a block,
 * pipelined with SETs, so workers write replies while main appends the
 * next ones. Every reply arrives whole and in order. */
static void test_write_through_workers(void **state) {
    (void)state;
    conn k = open_conn();
    size_t vlen = CLIENT_REPLY_CHUNK + 5000;
    char *val = zmalloc(vlen + 1);
    for (size_t i = 0; i < vlen; i++) val[i] = pattern(i);
    val[vlen] = '\0';
    char *set = zmalloc(vlen + 64);
    int setlen = snprintf(set, vlen + 64, "*3\r\n$3\r\nSET\r\n$1\r\nv\r\n$%zu\r\n%s\r\n", vlen, val);
    send_all(k.peer, set, (size_t)setlen);
    expect_reply(k.peer, "+OK\r\n");
    char head[32];
    int hl = snprintf(head, sizeof head, "$%zu\r\n", vlen);
    char *want = zmalloc((size_t)hl + vlen + 8);
    memcpy(want, head, (size_t)hl);
    memcpy(want + hl, val, vlen);
    memcpy(want + (size_t)hl + vlen, "\r\n+OK\r\n", 8);
    for (int round = 0; round < 20; round++) {
        send_all(k.peer, "GET v\r\nSET w x\r\nGET v\r\nSET w y\r\n", 32);
        for (int i = 0; i < 2; i++) expect_reply(k.peer, want);
    }
    zfree(want);
    zfree(set);
    zfree(val);
    roundtrip(&k, "PING\r\n", "+PONG\r\n");
    close_conn(&k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_stops_at_mark_in_buf),
        cmocka_unit_test(test_write_stops_at_mark_in_block),
        cmocka_unit_test(test_write_skips_blocks_after_mark),
        cmocka_unit_test(test_write_consumes_nothing),
        cmocka_unit_test(test_write_in_rounds),
        cmocka_unit_test(test_write_through_workers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
