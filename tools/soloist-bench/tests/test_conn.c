/* test_conn.c — a connection's writes and reads over a socketpair
 * (soloist-bench): a 10 MB SET leaves through many partial writev calls
 * byte-exact and without being copied into a buffer, and replies that
 * arrive in pieces are paired with their requests in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "codec.h"
#include "conn.h"
#include "keyspace.h"
#include "zmalloc.h"

#define KEY "a000000000000001"

static void nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

static void test_big_set_partial_writes(void **state) {
    (void)state;
    size_t vlen = 10u << 20;
    char *pat = sb_value_pattern(vlen);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int small = 64 * 1024;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    nonblock(sv[0]);
    nonblock(sv[1]);
    sb_conn c;
    sb_conn_init(&c, 0, 0, 4, 16, pat, vlen);
    c.fd = sv[0];
    sb_conn_push(&c, 1, KEY);
    sb_conn_push(&c, 0, KEY); /* a GET behind it, in the same stream */

    /* What must arrive: the SET, then the GET. */
    char head[128];
    size_t ko;
    size_t hl = sb_encode_set_head(head, KEY, 16, vlen, &ko);
    size_t total = hl + (vlen - 16) + 2;
    char get[64];
    size_t gl = sb_encode_get(get, KEY, 16, &ko);
    char *got = malloc(total + gl);
    size_t have = 0;
    int writes = 0;
    while (sb_conn_has_output(&c)) {
        long w = sb_conn_flush(&c, 1, 1 << 20);
        assert_true(w >= 0);
        if (w > 0) writes++;
        ssize_t r;
        while ((r = read(sv[1], got + have, total + gl - have)) > 0) have += (size_t)r;
    }
    ssize_t r;
    while ((r = read(sv[1], got + have, total + gl - have)) > 0) have += (size_t)r;
    assert_int_equal(have, total + gl);
    assert_true(writes > 10); /* it really went out in pieces */
    assert_memory_equal(got, head, hl);
    assert_memory_equal(got + hl, pat + 16, vlen - 16);
    assert_memory_equal(got + hl + vlen - 16, "\r\n", 2);
    assert_memory_equal(got + total, get, gl);
    assert_int_equal(c.sent, 2);
    assert_int_equal(c.slots[0].sent_ns, 1);
    free(got);
    sb_conn_free(&c); /* closes sv[0] */
    close(sv[1]);
    zfree(pat);
}

typedef struct {
    int n;
    int is_set[8];
    int ok[8];
    sb_reply_kind kind[8];
} seen;

static void collect(void *ud, sb_conn *c, const sb_req *req, const sb_reply *rep, uint64_t now) {
    (void)c;
    (void)now;
    seen *s = ud;
    s->is_set[s->n] = req->is_set;
    s->ok[s->n] = rep->ok;
    s->kind[s->n] = rep->kind;
    s->n++;
}

static void test_replies_paired_in_order(void **state) {
    (void)state;
    size_t vlen = 40;
    char *pat = sb_value_pattern(vlen);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    nonblock(sv[0]);
    sb_conn c;
    sb_conn_init(&c, 0, 0, 4, 16, pat, vlen);
    c.fd = sv[0];
    sb_conn_push(&c, 1, KEY);
    sb_conn_push(&c, 0, KEY);
    sb_conn_push(&c, 0, KEY);
    assert_true(sb_conn_flush(&c, 5, 1 << 20) > 0);
    char sink[4096];
    assert_true(read(sv[1], sink, sizeof(sink)) > 0);

    /* +OK, the value, a nil — written a few bytes at a time. */
    char replies[256];
    int n = snprintf(replies, sizeof(replies), "+OK\r\n$40\r\n%s%.*s\r\n$-1\r\n", KEY, 24, pat + 16);
    seen s;
    memset(&s, 0, sizeof(s));
    char buf[7]; /* a tiny read buffer: replies cross reads */
    for (int off = 0; off < n; off += 5) {
        int len = n - off < 5 ? n - off : 5;
        assert_int_equal(write(sv[1], replies + off, (size_t)len), len);
        long r = sb_conn_read(&c, buf, sizeof(buf), 1 << 20, collect, &s);
        assert_true(r >= 0);
    }
    assert_int_equal(s.n, 3);
    assert_int_equal(s.is_set[0], 1);
    assert_int_equal(s.kind[0], SB_REPLY_STATUS);
    assert_int_equal(s.ok[0], 1);
    assert_int_equal(s.kind[1], SB_REPLY_BULK);
    assert_int_equal(s.ok[1], 1);
    assert_int_equal(s.kind[2], SB_REPLY_NIL);
    assert_int_equal(sb_conn_inflight(&c), 0);

    /* A reply nobody asked for is a protocol error, not a crash. */
    assert_int_equal(write(sv[1], "+OK\r\n", 5), 5);
    assert_int_equal(sb_conn_read(&c, buf, sizeof(buf), 1 << 20, collect, &s), -2);
    /* The peer closing is reported as -1. */
    close(sv[1]);
    assert_int_equal(sb_conn_read(&c, buf, sizeof(buf), 1 << 20, collect, &s), -1);
    sb_conn_free(&c);
    zfree(pat);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_set_partial_writes),
        cmocka_unit_test(test_replies_paired_in_order),
    };
    return cmocka_run_group_tests_name("soloist-bench conn", tests, NULL, NULL);
}
