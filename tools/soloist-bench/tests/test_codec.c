/* test_codec.c — RESP encoding and the streaming reply parser on split,
 * partial and pipelined replies (soloist-bench). Every reply is also fed
 * cut at every byte position and one byte at a time: a parser that only
 * works when a read() returns whole replies would pass against loopback
 * and fail on a real network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "keyspace.h"
#include "zmalloc.h"

#define KEY "a000000000000007"

typedef struct {
    sb_reply rep[8];
    int n;
    int proto_err;
} results;

/* Feed `buf` in pieces given by cut points; collect completed replies. */
static void feed_pieces(sb_parser *p, const sb_expect *e, const char *buf, size_t len, const size_t *cuts, int ncuts,
                        results *res) {
    memset(res, 0, sizeof(*res));
    size_t start = 0;
    for (int c = 0; c <= ncuts && !res->proto_err; c++) {
        size_t end = c < ncuts ? cuts[c] : len;
        size_t off = start;
        while (off < end) {
            if (sb_parser_idle(p)) sb_parser_expect(p, e);
            int done;
            size_t used = sb_parser_feed(p, buf + off, end - off, &res->rep[res->n], &done);
            if (used == (size_t)-1) {
                res->proto_err = 1;
                break;
            }
            off += used;
            if (done) res->n++;
        }
        start = end;
    }
}

static void check_all_splits(const sb_expect *e, const char *buf, size_t len, int want_n, sb_reply_kind kind,
                             int want_ok) {
    sb_parser p;
    results res;
    /* whole */
    sb_parser_init(&p);
    feed_pieces(&p, e, buf, len, NULL, 0, &res);
    assert_false(res.proto_err);
    assert_int_equal(res.n, want_n);
    assert_int_equal(res.rep[0].kind, kind);
    assert_int_equal(res.rep[0].ok, want_ok);
    /* cut once at every position, and twice */
    for (size_t i = 1; i < len; i++) {
        size_t cuts[2] = {i, i + (len - i) / 2};
        sb_parser_init(&p);
        feed_pieces(&p, e, buf, len, cuts, cuts[1] > i ? 2 : 1, &res);
        assert_false(res.proto_err);
        assert_int_equal(res.n, want_n);
        assert_int_equal(res.rep[0].kind, kind);
        assert_int_equal(res.rep[0].ok, want_ok);
    }
    /* one byte at a time */
    size_t *cuts = malloc(len * sizeof(size_t));
    for (size_t i = 0; i + 1 < len; i++) cuts[i] = i + 1;
    sb_parser_init(&p);
    feed_pieces(&p, e, buf, len, cuts, (int)len - 1, &res);
    free(cuts);
    assert_int_equal(res.n, want_n);
    assert_int_equal(res.rep[0].ok, want_ok);
}

static sb_expect get_expect(const char *pattern, size_t vlen) {
    sb_expect e = {1, KEY, 16, pattern, vlen};
    return e;
}

static void test_encode(void **state) {
    (void)state;
    char buf[256];
    size_t ko;
    size_t n = sb_encode_get(buf, KEY, 16, &ko);
    assert_int_equal(n, strlen("*2\r\n$3\r\nGET\r\n$16\r\n" KEY "\r\n"));
    assert_memory_equal(buf, "*2\r\n$3\r\nGET\r\n$16\r\n" KEY "\r\n", n);
    assert_memory_equal(buf + ko, KEY, 16);
    n = sb_encode_set_head(buf, KEY, 16, 1000, &ko);
    const char *want = "*3\r\n$3\r\nSET\r\n$16\r\n" KEY "\r\n$1000\r\n" KEY;
    assert_int_equal(n, strlen(want));
    assert_memory_equal(buf, want, n);
    /* value shorter than the key: the value is the key's first bytes */
    n = sb_encode_set_head(buf, KEY, 16, 3, &ko);
    assert_memory_equal(buf, "*3\r\n$3\r\nSET\r\n$16\r\n" KEY "\r\n$3\r\na00", n);
}

static void test_status_error_int_nil(void **state) {
    (void)state;
    sb_expect set = {0, KEY, 16, "", 0};
    check_all_splits(&set, "+OK\r\n", 5, 1, SB_REPLY_STATUS, 1);
    check_all_splits(&set, "+QUEUED\r\n", 9, 1, SB_REPLY_STATUS, 0);
    check_all_splits(&set, "-ERR wrong\r\n", 12, 1, SB_REPLY_ERROR, 0);
    check_all_splits(&set, ":42\r\n", 5, 1, SB_REPLY_INT, 0);
    sb_expect get = get_expect("", 0);
    check_all_splits(&get, "$-1\r\n", 5, 1, SB_REPLY_NIL, 1); /* a miss is a right answer */
    check_all_splits(&get, "_\r\n", 3, 1, SB_REPLY_NIL, 1);   /* RESP3 null */
    check_all_splits(&get, "*-1\r\n", 5, 1, SB_REPLY_NIL, 1);
}

static void test_error_text_kept(void **state) {
    (void)state;
    sb_parser p;
    results res;
    sb_expect set = {0, KEY, 16, "", 0};
    const char *r = "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
    sb_parser_init(&p);
    feed_pieces(&p, &set, r, strlen(r), NULL, 0, &res);
    assert_int_equal(res.n, 1);
    assert_string_equal(res.rep[0].text, "OOM command not allowed when used memory > 'maxmemory'.");
}

static void test_bulk_value_checked(void **state) {
    (void)state;
    size_t vlen = 100;
    char *pat = sb_value_pattern(vlen);
    char reply[256];
    int n = snprintf(reply, sizeof(reply), "$100\r\n%s%.*s\r\n", KEY, 84, pat + 16);
    sb_expect e = get_expect(pat, vlen);
    check_all_splits(&e, reply, (size_t)n, 1, SB_REPLY_BULK, 1);
    /* one wrong byte in the pattern */
    reply[60] ^= 1;
    check_all_splits(&e, reply, (size_t)n, 1, SB_REPLY_BULK, 0);
    reply[60] ^= 1;
    /* another key's value (a reply paired with the wrong request) */
    reply[6 + 15] = '8';
    check_all_splits(&e, reply, (size_t)n, 1, SB_REPLY_BULK, 0);
    reply[6 + 15] = '7';
    /* right bytes, wrong length */
    n = snprintf(reply, sizeof(reply), "$99\r\n%s%.*s\r\n", KEY, 83, pat + 16);
    check_all_splits(&e, reply, (size_t)n, 1, SB_REPLY_BULK, 0);
    zfree(pat);
}

static void test_pipelined_replies(void **state) {
    (void)state;
    /* Three replies in one buffer, cut anywhere: each completes once. */
    sb_expect set = {0, KEY, 16, "", 0};
    const char *r = "+OK\r\n+OK\r\n-ERR x\r\n";
    check_all_splits(&set, r, strlen(r), 3, SB_REPLY_STATUS, 1);
}

static void test_aggregates_consumed(void **state) {
    (void)state;
    sb_expect get = get_expect("", 0);
    const char *r = "*3\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n%1\r\n+k\r\n,1.5\r\n";
    check_all_splits(&get, r, strlen(r), 1, SB_REPLY_ARRAY, 0);
    check_all_splits(&get, "*0\r\n", 4, 1, SB_REPLY_ARRAY, 0);
}

static void test_long_line_truncated_not_lost(void **state) {
    (void)state;
    char r[1001];
    memset(r, 'x', sizeof(r));
    r[0] = '-';
    memcpy(r + 994, "\r\n+OK\r\n", 7);
    sb_parser p;
    results res;
    sb_expect set = {0, KEY, 16, "", 0};
    sb_parser_init(&p);
    feed_pieces(&p, &set, r, 1001, NULL, 0, &res);
    assert_int_equal(res.n, 2);
    assert_int_equal(res.rep[0].kind, SB_REPLY_ERROR);
    assert_int_equal(res.rep[1].kind, SB_REPLY_STATUS);
    assert_int_equal(res.rep[1].ok, 1);
}

static void test_protocol_errors(void **state) {
    (void)state;
    sb_expect set = {0, KEY, 16, "", 0};
    sb_parser p;
    results res;
    const char *bad[] = {"?what\r\n", "+OK\n", "$abc\r\n", "$3\r\nabcXY", "$-2\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sb_parser_init(&p);
        feed_pieces(&p, &set, bad[i], strlen(bad[i]), NULL, 0, &res);
        assert_true(res.proto_err);
    }
}

static void test_large_value_streams(void **state) {
    (void)state;
    /* 10 MB in uneven chunks: checked as it streams, never buffered. */
    size_t vlen = 10u << 20;
    char *pat = sb_value_pattern(vlen);
    size_t len = vlen + 32;
    char *reply = malloc(len);
    int h = snprintf(reply, len, "$%zu\r\n", vlen);
    memcpy(reply + h, KEY, 16);
    memcpy(reply + h + 16, pat + 16, vlen - 16);
    memcpy(reply + h + vlen, "\r\n", 2);
    len = (size_t)h + vlen + 2;
    sb_expect e = get_expect(pat, vlen);
    sb_parser p;
    sb_rng r;
    sb_rng_seed(&r, 4);
    for (int flip = 0; flip < 2; flip++) {
        if (flip) reply[h + vlen - 1] ^= 1; /* the very last byte */
        sb_parser_init(&p);
        sb_parser_expect(&p, &e);
        size_t off = 0;
        int done = 0;
        sb_reply rep;
        while (off < len && !done) {
            size_t chunk = 1 + sb_rng_below(&r, 300000);
            if (chunk > len - off) chunk = len - off;
            size_t used = sb_parser_feed(&p, reply + off, chunk, &rep, &done);
            assert_true(used != (size_t)-1);
            off += used;
        }
        assert_true(done);
        assert_int_equal(off, len);
        assert_int_equal(rep.kind, SB_REPLY_BULK);
        assert_int_equal(rep.len, (long long)vlen);
        assert_int_equal(rep.ok, !flip);
    }
    free(reply);
    zfree(pat);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_status_error_int_nil),
        cmocka_unit_test(test_error_text_kept),
        cmocka_unit_test(test_bulk_value_checked),
        cmocka_unit_test(test_pipelined_replies),
        cmocka_unit_test(test_aggregates_consumed),
        cmocka_unit_test(test_long_line_truncated_not_lost),
        cmocka_unit_test(test_protocol_errors),
        cmocka_unit_test(test_large_value_streams),
    };
    return cmocka_run_group_tests_name("soloist-bench codec", tests, NULL, NULL);
}
