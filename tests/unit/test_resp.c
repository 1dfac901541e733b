/* test_resp.c — the RESP request parser (step 0), and the grader of
 * exercise 00 (exercises/00-resp/).
 *
 * Every test checks exact results: the arguments byte for byte, the exact
 * Valkey error text, how many bytes were consumed, and that no allocation
 * is left behind (zmalloc_used_memory returns to where it was). Most inputs
 * are also fed as a connection would receive them — whole, one byte at a
 * time, cut at every byte, and in random chunks — and every feeding must
 * give the same transcript: the parser is resumable at any byte. The bytes
 * after the buffered ones are poison, so a parser that looks past the end
 * of what it was given reads garbage, not the rest of the request.
 *
 * The test names group the exercise's parts: test_header_* grade the
 * warm-up (the two line readers, called directly), test_inline_* the bonus
 * (inline requests), and the rest the core (the resumable multibulk state
 * machine and its payloads, through resp_parse). Test scaffolding uses libc
 * malloc so that only the parser's own allocations move the zmalloc counter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "resp.h"
#include "resp_test.h"
#include "zmalloc.h"

/* ---- a growable byte buffer (libc memory, invisible to zmalloc) ---- */

typedef struct {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const void *d, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_adds(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_addf(sbuf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    sb_add(b, tmp, (size_t)n);
}

static void sb_free(sbuf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ---- transcripts: what a feeding produced, in one comparable string ---- */

static void tr_arg(sbuf *t, const void *p, size_t len) {
    sb_addf(t, "|%zu:", len);
    sb_add(t, p, len);
}

/* Expected command with printable arguments. */
static void ex_cmd(sbuf *t, int argc, ...) {
    va_list ap;
    va_start(ap, argc);
    sb_addf(t, "CMD %d", argc);
    for (int i = 0; i < argc; i++) {
        const char *a = va_arg(ap, const char *);
        tr_arg(t, a, strlen(a));
    }
    va_end(ap);
    sb_adds(t, "\n");
}

static void ex_err(sbuf *t, const char *text, size_t len) {
    sb_adds(t, "ERROR ");
    sb_add(t, text, len);
    sb_adds(t, "\n");
}

static void ex_errs(sbuf *t, const char *text) { ex_err(t, text, strlen(text)); }

/* The parser is waiting: `pending` bytes stay in the caller's buffer and
 * resp_parser_pending_bulk says `bulk`. */
static void ex_incomplete(sbuf *t, size_t pending, size_t bulk) {
    sb_addf(t, "INCOMPLETE pending=%zu bulk=%zu\n", pending, bulk);
}

static void show(const char *what, const sbuf *b) {
    fprintf(stderr, "%s (%zu bytes): ", what, b->len);
    for (size_t i = 0; i < b->len && i < 600; i++) {
        unsigned char c = (unsigned char)b->p[i];
        if (c == '\n')
            fputs("\\n\n    ", stderr);
        else if (c >= 32 && c < 127)
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02x", c);
    }
    fputc('\n', stderr);
}

/* ---- the simulated connection ---- */

/* What follows the buffered bytes: a parser that reads them sees 'X'
 * where it hoped for '\n' or for the rest of a payload. */
#define POISON 'X'
#define POISON_LEN 16

static const resp_limits AUTH = {RESP_PROTO_MAX_BULK_LEN_DEFAULT, 1};
static const resp_limits UNAUTH = {RESP_PROTO_MAX_BULK_LEN_DEFAULT, 0};

/* Feeds data[0..len) to a fresh parser the way a connection receives it:
 * chunk i ends at cuts[i] (ascending), the last chunk at len. After each
 * chunk the caller parses until RESP_INCOMPLETE, dropping what was
 * consumed. With use_window, big-bulk payload goes through
 * resp_parser_bulk_window when nothing is buffered. Appends the
 * transcript to out; checks the parser's contract on every call and that
 * every allocation is returned. */
static void feed(const char *data, size_t len, const size_t *cuts, size_t ncuts, const resp_limits *lim, int use_window,
                 sbuf *out) {
    size_t base = zmalloc_used_memory();
    resp_parser p;
    resp_parser_init(&p);
    char *pend = malloc(len + POISON_LEN);
    size_t plen = 0, start = 0;
    int dead = 0;

    for (size_t c = 0; c <= ncuts && !dead; c++) {
        size_t end = c < ncuts ? cuts[c] : len;
        if (end < start) end = start;
        /* Zero-copy path: read the chunk's leading bytes into the window. */
        if (use_window && plen == 0) {
            size_t room;
            char *w = resp_parser_bulk_window(&p, &room);
            if (w) {
                size_t n = end - start < room ? end - start : room;
                memcpy(w, data + start, n);
                resp_parser_bulk_advance(&p, n);
                start += n;
            }
        }
        memcpy(pend + plen, data + start, end - start);
        plen += end - start;
        start = end;
        for (;;) {
            size_t used = 12345;
            int argc = -7;
            obj **argv = (obj **)&argc;
            const char *err = "unset";
            memset(pend + plen, POISON, POISON_LEN);
            int r = resp_parse(&p, pend, plen, lim, &used, &argc, &argv, &err);
            assert_true(used <= plen);
            memmove(pend, pend + used, plen - used);
            plen -= used;
            if (r == RESP_OK) {
                assert_true(argc >= 1);
                assert_non_null(argv);
                sb_addf(out, "CMD %d", argc);
                for (int j = 0; j < argc; j++) {
                    assert_int_equal(argv[j]->type, OBJ_STRING);
                    assert_int_equal(argv[j]->ptr[argv[j]->len], '\0');
                    tr_arg(out, argv[j]->ptr, argv[j]->len);
                    obj_decr_ref(argv[j]);
                }
                sb_adds(out, "\n");
                zfree(argv);
                continue;
            }
            if (r == RESP_ERROR) {
                assert_non_null(err);
                ex_err(out, err, resp_parser_error_len(&p));
                dead = 1;
                break;
            }
            assert_int_equal(r, RESP_INCOMPLETE);
            assert_int_equal(argc, 0);
            assert_null(argv);
            break;
        }
    }
    if (!dead) ex_incomplete(out, plen, resp_parser_pending_bulk(&p));
    resp_parser_reset(&p);
    free(pend);
    assert_int_equal(zmalloc_used_memory(), base);
}

static void feed_whole(const char *data, size_t len, const resp_limits *lim, sbuf *out) {
    feed(data, len, NULL, 0, lim, 0, out);
}

static void assert_same(const sbuf *want, const sbuf *got, const char *how) {
    if (want->len != got->len || memcmp(want->p, got->p, want->len) != 0) {
        fprintf(stderr, "transcripts differ when fed %s\n", how);
        show("want", want);
        show("got ", got);
        fail();
    }
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* The heart of the suite: data must give `want` fed whole, one byte at a
 * time, cut once at every byte (and twice at every pair of bytes when the
 * input is short), and in random chunks — with and without the zero-copy
 * window. */
static void check_stream(const char *data, size_t len, const resp_limits *lim, const sbuf *want) {
    sbuf got = {0};
    char how[96];

    feed_whole(data, len, lim, &got);
    assert_same(want, &got, "whole");

    size_t *cuts = calloc(len + 1, sizeof(size_t));
    for (size_t i = 0; i + 1 < len; i++) cuts[i] = i + 1;
    for (int w = 0; w <= 1; w++) {
        got.len = 0;
        feed(data, len, cuts, len ? len - 1 : 0, lim, w, &got);
        assert_same(want, &got, w ? "byte by byte, window" : "byte by byte");
    }

    if (len <= 4096) {
        for (size_t k = 1; k < len; k++) {
            got.len = 0;
            feed(data, len, &k, 1, lim, 0, &got);
            snprintf(how, sizeof(how), "cut at %zu", k);
            assert_same(want, &got, how);
        }
    }
    if (len <= 64) {
        for (size_t a = 1; a < len; a++)
            for (size_t b = a + 1; b < len; b++) {
                size_t two[2] = {a, b};
                got.len = 0;
                feed(data, len, two, 2, lim, 0, &got);
                snprintf(how, sizeof(how), "cut at %zu and %zu", a, b);
                assert_same(want, &got, how);
            }
    }
    /* Long inputs that never leave a line (the 64 KB cases) cost a scan
     * of the whole buffer per call: fewer small-chunk rounds for them. */
    int rounds = len > 16384 ? 6 : 24;
    for (int round = 0; round < rounds; round++) {
        size_t n = 0, at = 0, maxchunk = round % 2 ? (len > 16384 ? 512 : 7) : (len / 5 + 2);
        while (at < len) {
            at += 1 + rng() % maxchunk;
            if (at < len) cuts[n++] = at;
        }
        got.len = 0;
        feed(data, len, cuts, n, lim, round % 3 == 0, &got);
        snprintf(how, sizeof(how), "random chunks, round %d", round);
        assert_same(want, &got, how);
    }
    free(cuts);
    sb_free(&got);
}

static void check_str(const char *data, const resp_limits *lim, const sbuf *want) {
    check_stream(data, strlen(data), lim, want);
}

/* One input that must fail with `text`, however it is fed. */
static void check_error(const char *data, size_t len, const resp_limits *lim, const char *text) {
    sbuf want = {0};
    ex_errs(&want, text);
    check_stream(data, len, lim, &want);
    sb_free(&want);
}

/* For string literals, NUL bytes included. */
#define CHECK_ERROR(lit, lim, text) check_error(lit, sizeof(lit) - 1, lim, text)

#define E_BIG_INLINE "ERR Protocol error: too big inline request"
#define E_NUL_INLINE "ERR Protocol error: embedded NUL byte in inline request"
#define E_QUOTES "ERR Protocol error: unbalanced quotes in request"
#define E_BIG_MBULK "ERR Protocol error: too big mbulk count string"
#define E_BAD_MBULK "ERR Protocol error: invalid multibulk length"
#define E_UNAUTH_MBULK "ERR Protocol error: unauthenticated multibulk length"
#define E_BIG_BULK "ERR Protocol error: too big bulk count string"
#define E_BAD_BULK "ERR Protocol error: invalid bulk length"
#define E_UNAUTH_BULK "ERR Protocol error: unauthenticated bulk length"
#define E_CRLF "ERR Protocol error: invalid CRLF in request"

/* ================= warm-up: the two line readers ================= */

typedef int (*line_reader)(resp_parser *, const char *, size_t, const resp_limits *, size_t *, long long *);

/* Calls rd on data[0..len) copied to a buffer with poison after it; checks
 * that it touched nothing of the parser but the error text. */
static int read_line(line_reader rd, const char *data, size_t len, const resp_limits *lim, size_t *used,
                     long long *value, resp_parser *p) {
    size_t before = zmalloc_used_memory();
    char *buf = malloc(len + POISON_LEN);
    memcpy(buf, data, len);
    memset(buf + len, POISON, POISON_LEN);
    resp_parser_init(p);
    int r = rd(p, buf, len, lim, used, value);
    free(buf);
    assert_int_equal(p->multibulk_len, 0);
    assert_int_equal(p->bulk_len, -1);
    assert_int_equal(p->argc, 0);
    assert_null(p->argv);
    assert_null(p->big);
    assert_int_equal(zmalloc_used_memory(), before);
    return r;
}

/* Every proper prefix of data[0..need) waits; data[0..len) gives want_r. */
static void check_line_prefixes(line_reader rd, const char *data, size_t need, const resp_limits *lim) {
    for (size_t k = 0; k < need; k++) {
        resp_parser p;
        size_t used = 777;
        long long v = 777;
        int r = read_line(rd, data, k, lim, &used, &v, &p);
        if (r != RESP_INCOMPLETE) {
            fprintf(stderr, "cut after %zu of %zu bytes: %s instead of RESP_INCOMPLETE\n", k, need,
                    r == RESP_OK ? "RESP_OK" : p.errbuf);
            fail();
        }
    }
}

/* The line data[0..) (a C string) is valid: value, and used bytes. */
static void check_line_ok(line_reader rd, const char *data, const resp_limits *lim, long long value, size_t used) {
    resp_parser p;
    size_t got_used = 0;
    long long got = -777;
    check_line_prefixes(rd, data, used, lim);
    int r = read_line(rd, data, strlen(data), lim, &got_used, &got, &p);
    if (r != RESP_OK) {
        fprintf(stderr, "\"%s\": %s\n", data, r == RESP_ERROR ? p.errbuf : "RESP_INCOMPLETE");
        fail();
    }
    assert_int_equal(got, value);
    assert_int_equal(got_used, used);
}

/* The line data[0..len) is refused with text (text_len bytes), and every
 * proper prefix waits. */
static void check_line_err(line_reader rd, const char *data, size_t len, const resp_limits *lim, const char *text,
                           size_t text_len) {
    resp_parser p;
    size_t used;
    long long v;
    check_line_prefixes(rd, data, len, lim);
    int r = read_line(rd, data, len, lim, &used, &v, &p);
    if (r != RESP_ERROR || resp_parser_error_len(&p) != text_len || memcmp(p.errbuf, text, text_len) != 0) {
        fprintf(stderr, "want \"%s\" for the line \"%.*s\"; got %s\n", text, (int)len, data,
                r == RESP_ERROR ? p.errbuf
                : r == RESP_OK  ? "RESP_OK"
                                : "RESP_INCOMPLETE");
        fail();
    }
}

#define COUNT_OK(lit, lim, value, used) check_line_ok(resp_read_multibulk_header, lit, lim, value, used)
#define COUNT_ERR(lit, lim, text)                                                                                      \
    check_line_err(resp_read_multibulk_header, lit, sizeof(lit) - 1, lim, text, sizeof(text) - 1)
#define BULK_OK(lit, lim, value, used) check_line_ok(resp_read_bulk_header, lit, lim, value, used)
#define BULK_ERR(lit, lim, text)                                                                                       \
    check_line_err(resp_read_bulk_header, lit, sizeof(lit) - 1, lim, text, sizeof(text) - 1)

static void test_header_count_values(void **state) {
    (void)state;
    COUNT_OK("*1\r\n", &AUTH, 1, 4);
    COUNT_OK("*3\r\n$3\r\nSET\r\n", &AUTH, 3, 4); /* only the line is read */
    COUNT_OK("*0\r\n", &AUTH, 0, 4);              /* zero and negative counts are the caller's to skip */
    COUNT_OK("*-1\r\n", &AUTH, -1, 5);
    COUNT_OK("*-5\r\n", &AUTH, -5, 5);
    COUNT_OK("*12\r\n", &AUTH, 12, 5);
    COUNT_OK("*2147483647\r\n", &AUTH, INT_MAX, 13);
}

static void test_header_count_waits_for_whole_line(void **state) {
    (void)state;
    /* Nothing is judged before the '\r' and the byte after it are here. */
    check_line_prefixes(resp_read_multibulk_header, "*12\r\n", 5, &AUTH);
    check_line_prefixes(resp_read_multibulk_header, "*x\r\n", 4, &AUTH);
    /* Bare LFs never end a RESP line. */
    check_line_prefixes(resp_read_multibulk_header, "*1\n$4\nPING\n\n", 12, &AUTH);
}

static void test_header_count_invalid(void **state) {
    (void)state;
    const char *bad[] = {
        "*abc\r\n",
        "*\r\n",
        "*+1\r\n",
        "*01\r\n",
        "* 1\r\n",
        "*1 \r\n",
        "*-0\r\n",
        "*1a\r\n",
        "*-\r\n",
        "*0x10\r\n",
        "*2147483648\r\n",
        "*99999999999\r\n",
        "*99999999999999999999999\r\n",
        "*9223372036854775808\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_line_err(resp_read_multibulk_header, bad[i], strlen(bad[i]), &AUTH, E_BAD_MBULK, strlen(E_BAD_MBULK));
}

static void test_header_count_crlf(void **state) {
    (void)state;
    COUNT_ERR("*1\rX", &AUTH, E_CRLF);
    COUNT_ERR("*1\r\r", &AUTH, E_CRLF);
    COUNT_ERR("*x\rx", &AUTH, E_CRLF); /* the CRLF check comes before the number check */
}

static void test_header_count_too_big(void **state) {
    (void)state;
    size_t n = RESP_INLINE_MAX_SIZE + 1;
    char *in = malloc(n);
    in[0] = '*';
    memset(in + 1, '1', n - 1);
    resp_parser p;
    size_t used;
    long long v;
    /* Exactly 64 KB without a '\r': still waiting; one byte more: refused. */
    assert_int_equal(read_line(resp_read_multibulk_header, in, n - 1, &AUTH, &used, &v, &p), RESP_INCOMPLETE);
    assert_int_equal(read_line(resp_read_multibulk_header, in, n, &AUTH, &used, &v, &p), RESP_ERROR);
    assert_string_equal(p.errbuf, E_BIG_MBULK);
    free(in);
}

static void test_header_count_unauthenticated(void **state) {
    (void)state;
    COUNT_OK("*10\r\n", &UNAUTH, 10, 5);
    COUNT_OK("*11\r\n", &AUTH, 11, 5);
    COUNT_ERR("*11\r\n", &UNAUTH, E_UNAUTH_MBULK);
    COUNT_ERR("*2147483647\r\n", &UNAUTH, E_UNAUTH_MBULK);
    COUNT_ERR("*2147483648\r\n", &UNAUTH, E_BAD_MBULK); /* validity first */
}

static void test_header_bulk_values(void **state) {
    (void)state;
    BULK_OK("$3\r\n", &AUTH, 3, 4);
    BULK_OK("$3\r\nSET\r\n", &AUTH, 3, 4);
    BULK_OK("$0\r\n", &AUTH, 0, 4);
    BULK_OK("$100000\r\n", &AUTH, 100000, 9);
}

static void test_header_bulk_waits_for_whole_line(void **state) {
    (void)state;
    check_line_prefixes(resp_read_bulk_header, "$10\r\n", 5, &AUTH);
    /* Not even the first byte is judged before the line is complete. */
    check_line_prefixes(resp_read_bulk_header, "X\r\n", 3, &AUTH);
    check_line_prefixes(resp_read_bulk_header, "$1\n", 3, &AUTH);
}

static void test_header_bulk_expected_dollar(void **state) {
    (void)state;
    BULK_ERR("X\r\n", &AUTH, "ERR Protocol error: expected '$', got 'X'");
    BULK_ERR(":1\r\n", &AUTH, "ERR Protocol error: expected '$', got ':'");
    BULK_ERR("X\rY", &AUTH, "ERR Protocol error: expected '$', got 'X'"); /* '$' before CRLF */
    /* addReplyErrorFormat maps CR and LF to spaces... */
    BULK_ERR("\r\n", &AUTH, "ERR Protocol error: expected '$', got ' '");
    BULK_ERR("\n\r\n", &AUTH, "ERR Protocol error: expected '$', got ' '");
    /* ...and sends a NUL byte as it is; resp_parser_error_len counts it. */
    BULK_ERR("\0\r\n", &AUTH, "ERR Protocol error: expected '$', got '\0'");
}

static void test_header_bulk_invalid(void **state) {
    (void)state;
    const char *bad[] = {
        "$abc\r\n",
        "$\r\n",
        "$-5\r\n",
        "$-1\r\n",
        "$+3\r\n",
        "$03\r\n",
        "$ 3\r\n",
        "$3 \r\n",
        "$-0\r\n",
        "$2147483648\r\n",
        "$536870913\r\n",
        "$9223372036854775807\r\n",
        "$9223372036854775808\r\n",
        "$99999999999999999999\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_line_err(resp_read_bulk_header, bad[i], strlen(bad[i]), &AUTH, E_BAD_BULK, strlen(E_BAD_BULK));
}

static void test_header_bulk_limit_is_proto_max_bulk_len(void **state) {
    (void)state;
    const resp_limits small = {100, 1};
    BULK_OK("$100\r\n", &small, 100, 6);
    BULK_ERR("$101\r\n", &small, E_BAD_BULK);
    BULK_OK("$536870912\r\n", &AUTH, 536870912, 12); /* 512 MB, the default */
    BULK_ERR("$536870913\r\n", &AUTH, E_BAD_BULK);
}

static void test_header_bulk_crlf(void **state) {
    (void)state;
    BULK_ERR("$3\rX", &AUTH, E_CRLF);
    BULK_ERR("$3\r\r", &AUTH, E_CRLF);
    BULK_ERR("$x\rx", &AUTH, E_CRLF); /* before the number check */
}

static void test_header_bulk_too_big(void **state) {
    (void)state;
    size_t n = RESP_INLINE_MAX_SIZE + 1;
    char *in = malloc(n);
    in[0] = '$';
    memset(in + 1, '1', n - 1);
    resp_parser p;
    size_t used;
    long long v;
    assert_int_equal(read_line(resp_read_bulk_header, in, n - 1, &AUTH, &used, &v, &p), RESP_INCOMPLETE);
    assert_int_equal(read_line(resp_read_bulk_header, in, n, &AUTH, &used, &v, &p), RESP_ERROR);
    assert_string_equal(p.errbuf, E_BIG_BULK);
    free(in);
}

static void test_header_bulk_unauthenticated(void **state) {
    (void)state;
    BULK_OK("$16384\r\n", &UNAUTH, 16384, 8);
    BULK_OK("$16385\r\n", &AUTH, 16385, 8);
    BULK_ERR("$16385\r\n", &UNAUTH, E_UNAUTH_BULK);
    /* Validity first: negative, or above proto-max-bulk-len. */
    BULK_ERR("$-1\r\n", &UNAUTH, E_BAD_BULK);
    const resp_limits small_unauth = {20000, 0};
    BULK_ERR("$20001\r\n", &small_unauth, E_BAD_BULK);
    BULK_ERR("$20000\r\n", &small_unauth, E_UNAUTH_BULK);
}

/* ================= core: whole multibulk requests ================= */

static void test_multibulk_one_command(void **state) {
    (void)state;
    sbuf w = {0};
    ex_cmd(&w, 3, "SET", "key", "value");
    ex_incomplete(&w, 0, 0);
    check_str("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_consumed_is_exact(void **state) {
    (void)state;
    /* A direct call: one command, then the next command's first bytes. */
    const char *in = "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPI";
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    const char *err;
    assert_int_equal(resp_parse(&p, in, strlen(in), &AUTH, &used, &argc, &argv, &err), RESP_OK);
    assert_int_equal(used, 14);
    assert_int_equal(argc, 1);
    assert_int_equal(argv[0]->len, 4);
    assert_memory_equal(argv[0]->ptr, "PING", 4);
    obj_decr_ref(argv[0]);
    zfree(argv);
    /* The rest: header and bulk header are absorbed, "PI" is left. */
    assert_int_equal(resp_parse(&p, in + 14, strlen(in) - 14, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, 8);
    assert_int_equal(argc, 0);
    assert_null(argv);
    assert_int_equal(resp_parser_pending_bulk(&p), 6);
    resp_parser_reset(&p);
}

static void test_multibulk_empty_argument(void **state) {
    (void)state;
    sbuf w = {0};
    ex_cmd(&w, 3, "SET", "", "v");
    ex_incomplete(&w, 0, 0);
    check_str("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$1\r\nv\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_multibulk_binary_safe(void **state) {
    (void)state;
    /* CR, LF, NUL, a CRLF and protocol characters inside payloads. */
    static const char in[] = "*3\r\n$3\r\nSET\r\n$5\r\na\r\nb\0\r\n$8\r\n*1\r\n$0\r\0\r\n";
    static const char a1[] = "a\r\nb\0";
    static const char a2[] = "*1\r\n$0\r\0";
    sbuf w = {0};
    sb_adds(&w, "CMD 3");
    tr_arg(&w, "SET", 3);
    tr_arg(&w, a1, 5);
    tr_arg(&w, a2, 8);
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    check_stream(in, sizeof(in) - 1, &AUTH, &w);
    sb_free(&w);
}

static void test_multibulk_all_byte_values(void **state) {
    (void)state;
    char payload[256];
    for (int i = 0; i < 256; i++) payload[i] = (char)i;
    sbuf in = {0}, w = {0};
    sb_adds(&in, "*2\r\n$4\r\nECHO\r\n$256\r\n");
    sb_add(&in, payload, 256);
    sb_adds(&in, "\r\n");
    sb_adds(&w, "CMD 2");
    tr_arg(&w, "ECHO", 4);
    tr_arg(&w, payload, 256);
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    check_stream(in.p, in.len, &AUTH, &w);
    sb_free(&in);
    sb_free(&w);
}

static void test_multibulk_many_arguments(void **state) {
    (void)state;
    /* More than the 1024 slots the argv starts with: it must grow. */
    sbuf in = {0}, w = {0};
    sb_adds(&in, "*3000\r\n");
    sb_adds(&w, "CMD 3000");
    for (int i = 0; i < 3000; i++) {
        char a[16];
        int n = snprintf(a, sizeof(a), "%d", i);
        sb_addf(&in, "$%d\r\n%s\r\n", n, a);
        tr_arg(&w, a, (size_t)n);
    }
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    check_stream(in.p, in.len, &AUTH, &w);
    sb_free(&in);
    sb_free(&w);
}

static void test_multibulk_huge_count_is_not_trusted(void **state) {
    (void)state;
    /* INT_MAX is a valid count; the parser must not allocate for it. */
    size_t before = zmalloc_used_memory();
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    const char *err;
    const char *big = "*1000000\r\n$1\r\na\r\n";
    assert_int_equal(resp_parse(&p, big, strlen(big), &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_true(zmalloc_used_memory() - before < 64 * 1024);
    resp_parser_reset(&p);
    const char *in = "*2147483647\r\n$1\r\na\r\n";
    assert_int_equal(resp_parse(&p, in, strlen(in), &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, strlen(in));
    assert_true(zmalloc_used_memory() - before < 64 * 1024);
    resp_parser_reset(&p);
    assert_int_equal(zmalloc_used_memory(), before);
}

static void test_multibulk_lf_only_waits_for_cr(void **state) {
    (void)state;
    /* Valkey finds RESP lines by their '\r': bare LFs never end one. */
    const char *in = "*1\n$4\nPING\n\n\n";
    sbuf w = {0};
    ex_incomplete(&w, strlen(in), 0);
    check_str(in, &AUTH, &w);
    sb_free(&w);
}

static void test_pipeline_many_commands(void **state) {
    (void)state;
    sbuf in = {0}, w = {0};
    for (int i = 0; i < 200; i++) {
        char k[32], v[32];
        int kn = snprintf(k, sizeof(k), "key:%d", i), vn = snprintf(v, sizeof(v), "v%d\r\n%d", i, i * 7);
        sb_addf(&in, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n", kn, k, vn);
        sb_add(&in, v, (size_t)vn);
        sb_adds(&in, "\r\n");
        sb_adds(&w, "CMD 3");
        tr_arg(&w, "SET", 3);
        tr_arg(&w, k, (size_t)kn);
        tr_arg(&w, v, (size_t)vn);
        sb_adds(&w, "\n");
    }
    ex_incomplete(&w, 0, 0);
    check_stream(in.p, in.len, &AUTH, &w);
    sb_free(&in);
    sb_free(&w);
}

static void test_pipeline_one_command_per_call(void **state) {
    (void)state;
    const char *in = "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n";
    size_t len = strlen(in), pos = 0;
    size_t expect_used[3] = {14, 14, 21};
    resp_parser p;
    resp_parser_init(&p);
    for (int i = 0; i < 3; i++) {
        size_t used;
        int argc;
        obj **argv;
        const char *err;
        assert_int_equal(resp_parse(&p, in + pos, len - pos, &AUTH, &used, &argc, &argv, &err), RESP_OK);
        assert_int_equal(used, expect_used[i]);
        assert_int_equal(argc, i == 2 ? 2 : 1);
        for (int j = 0; j < argc; j++) obj_decr_ref(argv[j]);
        zfree(argv);
        pos += used;
    }
    assert_int_equal(pos, len);
    resp_parser_reset(&p);
}

static void test_skip_zero_and_negative_counts(void **state) {
    (void)state;
    sbuf w = {0};
    ex_cmd(&w, 1, "PING");
    ex_incomplete(&w, 0, 0);
    check_str("*0\r\n*-1\r\n*-5\r\n*1\r\n$4\r\nPING\r\n*0\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_skip_alone_is_consumed(void **state) {
    (void)state;
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc = 9;
    obj **argv;
    const char *err;
    assert_int_equal(resp_parse(&p, "*0\r\n", 4, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, 4);
    assert_int_equal(argc, 0);
    assert_int_equal(resp_parse(&p, "*-1\r\n*0\r\n", 9, &UNAUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, 9);
    resp_parser_reset(&p);
}

/* ================= core: resuming at every boundary ================= */

/* One resp_parse call on data[0..len), with poison after it. */
static int parse_once(resp_parser *p, const char *data, size_t len, const resp_limits *lim, size_t *used, int *argc,
                      obj ***argv) {
    char *buf = malloc(len + POISON_LEN);
    memcpy(buf, data, len);
    memset(buf + len, POISON, POISON_LEN);
    const char *err = NULL;
    int r = resp_parse(p, buf, len, lim, used, argc, argv, &err);
    if (r == RESP_ERROR) fprintf(stderr, "resp_parse: %s\n", err);
    free(buf);
    return r;
}

#define PARSE(p, lit, used, argc, argv) parse_once(p, lit, sizeof(lit) - 1, &AUTH, used, argc, argv)

static void expect_args(int argc, obj **argv, int want_argc, ...) {
    va_list ap;
    assert_int_equal(argc, want_argc);
    va_start(ap, want_argc);
    for (int i = 0; i < argc; i++) {
        const char *a = va_arg(ap, const char *);
        assert_int_equal(argv[i]->len, strlen(a));
        assert_memory_equal(argv[i]->ptr, a, strlen(a));
        obj_decr_ref(argv[i]);
    }
    va_end(ap);
    zfree(argv);
}

static void test_resume_inside_count_header(void **state) {
    (void)state;
    /* "*12" cut after "*1" is not a count of 1: nothing of a line that is
     * not all here is consumed or believed. */
    size_t before = zmalloc_used_memory();
    resp_parser p;
    resp_parser_init(&p);
    size_t used = 9;
    int argc;
    obj **argv;
    assert_int_equal(PARSE(&p, "*1", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    assert_int_equal(PARSE(&p, "*12\r", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    resp_parser_reset(&p);
    assert_int_equal(zmalloc_used_memory(), before);

    sbuf in = {0}, w = {0};
    sb_adds(&in, "*12\r\n");
    sb_adds(&w, "CMD 12");
    for (int i = 0; i < 12; i++) {
        sb_adds(&in, "$1\r\nx\r\n");
        tr_arg(&w, "x", 1);
    }
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    check_stream(in.p, in.len, &AUTH, &w);
    sb_free(&in);
    sb_free(&w);
}

static void test_resume_before_first_argument(void **state) {
    (void)state;
    /* The "*N" line is consumed and remembered; the next call starts at
     * the first "$N" line and must not read it as a count. */
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    assert_int_equal(PARSE(&p, "*2\r\n", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 4);
    assert_int_equal(PARSE(&p, "$3\r\nGE", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 4);
    assert_int_equal(PARSE(&p, "GET\r\n$1\r\nk\r\n", &used, &argc, &argv), RESP_OK);
    assert_int_equal(used, 12);
    expect_args(argc, argv, 2, "GET", "k");
    resp_parser_reset(&p);
}

static void test_resume_between_bulk_header_and_payload(void **state) {
    (void)state;
    /* The "$N" line is consumed; its length must survive the call. */
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    assert_int_equal(PARSE(&p, "*1\r\n$5\r\n", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 8);
    assert_int_equal(resp_parser_pending_bulk(&p), 7);
    assert_int_equal(PARSE(&p, "hello\r\n", &used, &argc, &argv), RESP_OK);
    assert_int_equal(used, 7);
    expect_args(argc, argv, 1, "hello");
    resp_parser_reset(&p);
}

static void test_resume_inside_small_payload(void **state) {
    (void)state;
    /* A small payload is consumed only whole, with its CRLF: part of one
     * stays in the caller's buffer and is shown again. */
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    assert_int_equal(PARSE(&p, "*2\r\n$4\r\nECHO\r\n$5\r\nhel", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 18);
    assert_int_equal(resp_parser_pending_bulk(&p), 7);
    assert_int_equal(PARSE(&p, "hel", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    assert_int_equal(PARSE(&p, "hello\r\n", &used, &argc, &argv), RESP_OK);
    assert_int_equal(used, 7);
    expect_args(argc, argv, 2, "ECHO", "hello");
    resp_parser_reset(&p);
}

static void test_resume_inside_big_payload(void **state) {
    (void)state;
    /* A big payload is consumed as it arrives: each call's bytes land
     * after the ones before, and are not shown again. */
    size_t blen = 40000;
    char *in = malloc(blen + 32);
    int h = snprintf(in, 32, "*1\r\n$%zu\r\n", blen);
    for (size_t i = 0; i < blen; i++) in[h + i] = (char)(rng() & 0xff);
    memcpy(in + h + blen, "\r\n", 2);
    size_t before = zmalloc_used_memory();
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    size_t at = 0, steps[] = {(size_t)h + 1000, 1, 9999, 20000, blen - 31000, 2};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        int r = parse_once(&p, in + at, steps[i], &AUTH, &used, &argc, &argv);
        assert_int_equal(used, steps[i]);
        at += used;
        assert_int_equal(r, at == (size_t)h + blen + 2 ? RESP_OK : RESP_INCOMPLETE);
    }
    assert_int_equal(argc, 1);
    assert_int_equal(argv[0]->len, blen);
    assert_memory_equal(argv[0]->ptr, in + h, blen);
    obj_decr_ref(argv[0]);
    zfree(argv);
    resp_parser_reset(&p);
    assert_int_equal(zmalloc_used_memory(), before);

    sbuf w = {0};
    sb_adds(&w, "CMD 1");
    tr_arg(&w, in + h, blen);
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    check_stream(in, (size_t)h + blen + 2, &AUTH, &w);
    sb_free(&w);
    free(in);
}

static void test_resume_at_payload_crlf(void **state) {
    (void)state;
    /* Payload here, CRLF not (or half): wait, judge nothing yet. */
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    assert_int_equal(PARSE(&p, "*1\r\n$3\r\nfoo", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 8);
    assert_int_equal(PARSE(&p, "foo\r", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    assert_int_equal(resp_parser_pending_bulk(&p), 5);
    assert_int_equal(PARSE(&p, "foo\r\n", &used, &argc, &argv), RESP_OK);
    assert_int_equal(used, 5);
    expect_args(argc, argv, 1, "foo");

    /* The same for a big argument, whose payload is already consumed. */
    size_t blen = RESP_MBULK_BIG_ARG;
    char *in = malloc(blen + 32);
    int h = snprintf(in, 32, "*1\r\n$%zu\r\n", blen);
    memset(in + h, 'b', blen);
    memcpy(in + h + blen, "\r\n", 2);
    assert_int_equal(parse_once(&p, in, (size_t)h + blen + 1, &AUTH, &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, (size_t)h + blen);
    assert_int_equal(resp_parser_pending_bulk(&p), 2);
    assert_int_equal(parse_once(&p, "\r", 1, &AUTH, &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    assert_int_equal(parse_once(&p, "\r\n", 2, &AUTH, &used, &argc, &argv), RESP_OK);
    assert_int_equal(used, 2);
    assert_int_equal(argc, 1);
    assert_int_equal(argv[0]->len, blen);
    obj_decr_ref(argv[0]);
    zfree(argv);
    free(in);

    sbuf w = {0};
    ex_incomplete(&w, 4, 5);
    check_str("*1\r\n$3\r\nfoo\r", &AUTH, &w);
    sb_free(&w);
    resp_parser_reset(&p);
}

static void test_resume_between_arguments(void **state) {
    (void)state;
    /* Finished arguments are kept across calls, in order. */
    size_t before = zmalloc_used_memory();
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    assert_int_equal(PARSE(&p, "*3\r\n$3\r\nSET\r\n", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 13);
    assert_int_equal(PARSE(&p, "$1\r\nk\r\n", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 7);
    assert_int_equal(PARSE(&p, "$1\r\nv\r\n", &used, &argc, &argv), RESP_OK);
    assert_int_equal(used, 7);
    expect_args(argc, argv, 3, "SET", "k", "v");
    resp_parser_reset(&p);
    assert_int_equal(zmalloc_used_memory(), before);
}

static void test_resume_inside_last_argument(void **state) {
    (void)state;
    /* A command is complete when its last payload is, not its last "$N". */
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    assert_int_equal(PARSE(&p, "*2\r\n$4\r\nECHO\r\n$5\r\n", &used, &argc, &argv), RESP_INCOMPLETE);
    assert_int_equal(used, 18);
    assert_int_equal(argc, 0);
    assert_int_equal(PARSE(&p, "hello\r\n", &used, &argc, &argv), RESP_OK);
    expect_args(argc, argv, 2, "ECHO", "hello");
    resp_parser_reset(&p);
}

static void test_errors_at_any_cut(void **state) {
    (void)state;
    /* The line readers' errors reach the caller however the bytes came. */
    CHECK_ERROR("*x\r\n", &AUTH, E_BAD_MBULK);
    CHECK_ERROR("*1\rX$4\r\nPING\r\n", &AUTH, E_CRLF);
    CHECK_ERROR("*11\r\n", &UNAUTH, E_UNAUTH_MBULK);
    CHECK_ERROR("*2\r\n$1\r\na\r\n+b\r\n", &AUTH, "ERR Protocol error: expected '$', got '+'");
    /* A multibulk request cannot switch to inline in the middle. */
    CHECK_ERROR("*2\r\n$4\r\nECHO\r\nhello\r\n", &AUTH, "ERR Protocol error: expected '$', got 'h'");
    CHECK_ERROR("*2\r\n$3\r\nGET\r\n$-1\r\n", &AUTH, E_BAD_BULK);
    CHECK_ERROR("*1\r\n$3\rXfoo\r\n", &AUTH, E_CRLF);
    CHECK_ERROR("*1\r\n$16385\r\n", &UNAUTH, E_UNAUTH_BULK);
    sbuf w = {0};
    ex_incomplete(&w, 0, 16386);
    check_str("*10\r\n$16384\r\n", &UNAUTH, &w);
    sb_free(&w);
}

/* ================= core: payloads ================= */

static void test_bulk_payload_needs_crlf(void **state) {
    (void)state;
    CHECK_ERROR("*1\r\n$3\r\nfooXY", &AUTH, E_CRLF);
    CHECK_ERROR("*1\r\n$3\r\nfoo\rX", &AUTH, E_CRLF);
    CHECK_ERROR("*1\r\n$3\r\nfoo\n\r", &AUTH, E_CRLF);
    CHECK_ERROR("*1\r\n$3\r\nfoobar\r\n", &AUTH, E_CRLF);
    CHECK_ERROR("*2\r\n$1\r\na\r\n$0\r\nxx", &AUTH, E_CRLF);
}

static void test_big_bulk_streamed(void **state) {
    (void)state;
    /* At and above RESP_MBULK_BIG_ARG the payload is absorbed as it comes. */
    size_t blen = 100000;
    char *payload = malloc(blen);
    for (size_t i = 0; i < blen; i++) payload[i] = (char)(rng() & 0xff);
    memcpy(payload + 10, "\r\n$3\r\n*1\r\n", 10);
    sbuf in = {0}, w = {0};
    sb_adds(&in, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n");
    sb_add(&in, payload, blen);
    sb_adds(&in, "\r\n*1\r\n$4\r\nPING\r\n");
    sb_adds(&w, "CMD 3");
    tr_arg(&w, "SET", 3);
    tr_arg(&w, "k", 1);
    tr_arg(&w, payload, blen);
    sb_adds(&w, "\nCMD 1|4:PING\n");
    ex_incomplete(&w, 0, 0);
    check_stream(in.p, in.len, &AUTH, &w);
    free(payload);
    sb_free(&in);
    sb_free(&w);
}

static void test_big_bulk_then_small_then_big(void **state) {
    (void)state;
    /* Big, small, big in one command: each big argument starts empty
     * (a fresh object, nothing filled), and a small one after a big one
     * is read as small again. The second big is the longer, so filling it
     * from where the first ended stays inside it and gives wrong bytes. */
    size_t a = 40000, b = 50000;
    char *pa = malloc(a), *pb = malloc(b);
    for (size_t i = 0; i < a; i++) pa[i] = (char)(rng() & 0xff);
    for (size_t i = 0; i < b; i++) pb[i] = (char)(rng() & 0xff);
    sbuf in = {0}, w = {0};
    sb_addf(&in, "*4\r\n$4\r\nMSET\r\n$%zu\r\n", a);
    sb_add(&in, pa, a);
    sb_adds(&in, "\r\n$1\r\nx\r\n");
    sb_addf(&in, "$%zu\r\n", b);
    sb_add(&in, pb, b);
    sb_adds(&in, "\r\n");
    sb_adds(&w, "CMD 4");
    tr_arg(&w, "MSET", 4);
    tr_arg(&w, pa, a);
    tr_arg(&w, "x", 1);
    tr_arg(&w, pb, b);
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    check_stream(in.p, in.len, &AUTH, &w);
    free(pa);
    free(pb);
    sb_free(&in);
    sb_free(&w);
}

static void test_big_bulk_consumes_payload_as_it_arrives(void **state) {
    (void)state;
    size_t blen = RESP_MBULK_BIG_ARG;
    char *in = malloc(blen + 32);
    int h = snprintf(in, 32, "*1\r\n$%zu\r\n", blen);
    memset(in + h, 'z', blen);
    memcpy(in + h + blen, "\r\n", 2);
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    const char *err;
    /* Header plus 1000 payload bytes: all consumed, 32768-1000+2 to go. */
    assert_int_equal(resp_parse(&p, in, (size_t)h + 1000, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, (size_t)h + 1000);
    assert_int_equal(resp_parser_pending_bulk(&p), blen - 1000 + 2);
    /* The rest of the payload and one CR byte: payload consumed, CR kept. */
    assert_int_equal(resp_parse(&p, in + h + 1000, blen - 1000 + 1, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, blen - 1000);
    assert_int_equal(resp_parser_pending_bulk(&p), 2);
    assert_int_equal(resp_parse(&p, in + h + blen, 2, &AUTH, &used, &argc, &argv, &err), RESP_OK);
    assert_int_equal(used, 2);
    assert_int_equal(argc, 1);
    assert_int_equal(argv[0]->len, blen);
    assert_int_equal(argv[0]->encoding, OBJ_ENC_RAW);
    assert_memory_equal(argv[0]->ptr, in + h, blen);
    obj_decr_ref(argv[0]);
    zfree(argv);
    resp_parser_reset(&p);
    free(in);
}

static void test_small_bulk_waits_whole(void **state) {
    (void)state;
    /* Below RESP_MBULK_BIG_ARG nothing of the payload is consumed early. */
    size_t blen = RESP_MBULK_BIG_ARG - 1;
    char *in = malloc(blen + 32);
    int h = snprintf(in, 32, "*1\r\n$%zu\r\n", blen);
    memset(in + h, 'q', blen);
    memcpy(in + h + blen, "\r\n", 2);
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    const char *err;
    assert_int_equal(resp_parse(&p, in, (size_t)h + blen + 1, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, (size_t)h);
    assert_int_equal(resp_parser_pending_bulk(&p), blen + 2);
    assert_int_equal(resp_parse(&p, in + h, blen + 2, &AUTH, &used, &argc, &argv, &err), RESP_OK);
    assert_int_equal(used, blen + 2);
    assert_int_equal(argv[0]->len, blen);
    obj_decr_ref(argv[0]);
    zfree(argv);
    resp_parser_reset(&p);
    free(in);
}

static void test_big_bulk_bad_terminator(void **state) {
    (void)state;
    size_t blen = 40000;
    char *in = malloc(blen + 32);
    int h = snprintf(in, 32, "*1\r\n$%zu\r\n", blen);
    memset(in + h, 'z', blen);
    memcpy(in + h + blen, "zz", 2);
    check_error(in, (size_t)h + blen + 2, &AUTH, E_CRLF);
    free(in);
}

static void test_big_bulk_zero_copy_window(void **state) {
    (void)state;
    size_t blen = 50000;
    resp_parser p;
    resp_parser_init(&p);
    size_t used, room = 99;
    int argc;
    obj **argv;
    const char *err;
    assert_null(resp_parser_bulk_window(&p, &room));
    assert_int_equal(room, 0);
    const char *hdr = "*1\r\n$50000\r\n";
    assert_int_equal(resp_parse(&p, hdr, strlen(hdr), &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    char *win = resp_parser_bulk_window(&p, &room);
    assert_non_null(win);
    assert_int_equal(room, blen);
    memset(win, 'a', 20000);
    resp_parser_bulk_advance(&p, 20000);
    win = resp_parser_bulk_window(&p, &room);
    assert_int_equal(room, blen - 20000);
    assert_int_equal(resp_parser_pending_bulk(&p), blen - 20000 + 2);
    memset(win, 'b', room);
    resp_parser_bulk_advance(&p, room);
    assert_null(resp_parser_bulk_window(&p, &room));
    assert_int_equal(resp_parser_pending_bulk(&p), 2);
    assert_int_equal(resp_parse(&p, "\r\n", 2, &AUTH, &used, &argc, &argv, &err), RESP_OK);
    assert_int_equal(argc, 1);
    assert_int_equal(argv[0]->len, blen);
    assert_int_equal(argv[0]->ptr[19999], 'a');
    assert_int_equal(argv[0]->ptr[20000], 'b');
    assert_int_equal(argv[0]->ptr[blen], '\0');
    obj_decr_ref(argv[0]);
    zfree(argv);
    resp_parser_reset(&p);
}

static void test_pending_bulk_reports(void **state) {
    (void)state;
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    const char *err;
    assert_int_equal(resp_parser_pending_bulk(&p), 0);
    assert_int_equal(resp_parse(&p, "*2\r\n", 4, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(resp_parser_pending_bulk(&p), 0); /* between bulks */
    assert_int_equal(resp_parse(&p, "$5\r\nhe", 6, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, 4);
    assert_int_equal(resp_parser_pending_bulk(&p), 7);
    resp_parser_reset(&p);
    assert_int_equal(resp_parser_pending_bulk(&p), 0);
    /* Inline requests have no bulk. */
    assert_int_equal(resp_parse(&p, "GET ke", 6, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(resp_parser_pending_bulk(&p), 0);
    resp_parser_reset(&p);
}

/* ================= core: truncation and state ================= */

static void test_every_prefix_is_incomplete(void **state) {
    (void)state;
    /* A cut anywhere inside a valid request is never an error. */
    const char *inputs[] = {
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n",
        "*0\r\n*1\r\n$0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        size_t len = strlen(inputs[i]);
        for (size_t k = 0; k < len; k++) {
            sbuf got = {0};
            feed_whole(inputs[i], k, &AUTH, &got);
            if (strncmp(got.p, "INCOMPLETE", 10) != 0 && strncmp(got.p, "CMD", 3) != 0) {
                fprintf(stderr, "input %zu cut at %zu\n", i, k);
                show("got", &got);
                fail();
            }
            assert_null(strstr(got.p, "ERROR"));
            assert_non_null(strstr(got.p, "INCOMPLETE"));
            sb_free(&got);
        }
    }
}

static void test_error_resets_the_parser(void **state) {
    (void)state;
    size_t before = zmalloc_used_memory();
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    const char *err;
    const char *in = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$x\r\n";
    assert_int_equal(resp_parse(&p, in, strlen(in), &AUTH, &used, &argc, &argv, &err), RESP_ERROR);
    assert_string_equal(err, E_BAD_BULK);
    assert_int_equal(resp_parser_error_len(&p), strlen(E_BAD_BULK));
    assert_int_equal(argc, 0);
    assert_null(argv);
    /* The two arguments already parsed were freed with the error. */
    assert_int_equal(zmalloc_used_memory(), before);
    /* And the parser starts clean. */
    assert_int_equal(resp_parse(&p, "*1\r\n$4\r\nPING\r\n", 14, &AUTH, &used, &argc, &argv, &err), RESP_OK);
    obj_decr_ref(argv[0]);
    zfree(argv);
    resp_parser_reset(&p);
    assert_int_equal(zmalloc_used_memory(), before);
}

static void test_reset_drops_partial_command(void **state) {
    (void)state;
    size_t before = zmalloc_used_memory();
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    const char *err;
    /* Two arguments in, and a big third half-read. */
    char hdr[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$70000\r\nabc";
    assert_int_equal(resp_parse(&p, hdr, strlen(hdr), &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, strlen(hdr));
    assert_true(zmalloc_used_memory() > before + 70000);
    resp_parser_reset(&p);
    assert_int_equal(zmalloc_used_memory(), before);
    assert_int_equal(resp_parser_pending_bulk(&p), 0);
    /* The next bytes are a fresh request. */
    assert_int_equal(resp_parse(&p, "*1\r\n$4\r\nPING\r\n", 14, &AUTH, &used, &argc, &argv, &err), RESP_OK);
    assert_int_equal(argc, 1);
    obj_decr_ref(argv[0]);
    zfree(argv);
    resp_parser_reset(&p);
    assert_int_equal(zmalloc_used_memory(), before);
}

static void test_empty_input(void **state) {
    (void)state;
    resp_parser p;
    resp_parser_init(&p);
    size_t used = 5;
    int argc = 5;
    obj **argv = (obj **)&argc;
    const char *err;
    assert_int_equal(resp_parse(&p, "", 0, &AUTH, &used, &argc, &argv, &err), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    assert_int_equal(argc, 0);
    assert_null(argv);
    resp_parser_reset(&p);
}

static void test_null_limits_mean_authenticated_defaults(void **state) {
    (void)state;
    sbuf w = {0};
    ex_incomplete(&w, 0, 20002);
    check_str("*11\r\n$20000\r\n", NULL, &w);
    sb_free(&w);
}

static void test_error_texts_are_plain_strings(void **state) {
    (void)state;
    /* err has no '-' and no CRLF; error_len matches strlen. */
    resp_parser p;
    resp_parser_init(&p);
    size_t used;
    int argc;
    obj **argv;
    const char *err;
    assert_int_equal(resp_parse(&p, "*x\r\n", 4, &AUTH, &used, &argc, &argv, &err), RESP_ERROR);
    assert_string_equal(err, E_BAD_MBULK);
    assert_int_equal(resp_parser_error_len(&p), strlen(err));
    resp_parser_reset(&p);
}

/* ================= bonus: inline requests ================= */

static void test_inline_simple(void **state) {
    (void)state;
    sbuf w = {0};
    ex_cmd(&w, 1, "PING");
    ex_cmd(&w, 3, "SET", "a", "b");
    ex_cmd(&w, 2, "GET", "a");
    ex_incomplete(&w, 0, 0);
    check_str("PING\r\nSET a b\n  GET\t\ta   \r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_incomplete_keeps_line(void **state) {
    (void)state;
    /* An unfinished line is not consumed: the caller keeps it. */
    sbuf w = {0};
    ex_cmd(&w, 1, "PING");
    ex_incomplete(&w, 7, 0);
    check_str("PING\r\nSET a b", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_cr_and_lf_inside_line(void **state) {
    (void)state;
    /* Only the '\r' right before '\n' belongs to the terminator; another
     * '\r' separates arguments, as in sdssplitargs. */
    sbuf w = {0};
    ex_cmd(&w, 2, "a", "b");
    ex_cmd(&w, 1, "c");
    ex_incomplete(&w, 0, 0);
    check_str("a\rb\r\nc\r\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_vertical_tab_and_formfeed(void **state) {
    (void)state;
    /* \v and \f are skipped between arguments but do not end one. */
    sbuf w = {0};
    ex_cmd(&w, 2, "a\vb", "c\fd\f");
    ex_cmd(&w, 1, "e");
    ex_incomplete(&w, 0, 0);
    check_str("\va\vb c\fd\f\n\f\ve\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_double_quote_escapes(void **state) {
    (void)state;
    sbuf w = {0};
    ex_cmd(&w, 3, "SET", "k", "a\nb\rc\td\be\af\\g\"h");
    ex_incomplete(&w, 0, 0);
    check_str("SET k \"a\\nb\\rc\\td\\be\\af\\\\g\\\"h\"\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_hex_escapes(void **state) {
    (void)state;
    static const char in[] = "ECHO \"\\x00\\xff\\x41\\x4a\\xZZ\\x4\" x\r\n";
    static const char arg[] = {0x00, (char)0xff, 'A', 'J', 'x', 'Z', 'Z', 'x', '4'};
    sbuf w = {0};
    sb_adds(&w, "CMD 3");
    tr_arg(&w, "ECHO", 4);
    tr_arg(&w, arg, sizeof(arg));
    tr_arg(&w, "x", 1);
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    check_stream(in, sizeof(in) - 1, &AUTH, &w);
    sb_free(&w);
}

static void test_inline_other_escapes_are_literal(void **state) {
    (void)state;
    /* A backslash before any other character yields that character. */
    sbuf w = {0};
    ex_cmd(&w, 2, "qz'", "a\\b");
    ex_incomplete(&w, 0, 0);
    check_str("\"\\q\\z\\'\" a\\b\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_single_quotes(void **state) {
    (void)state;
    /* Only \' is an escape inside single quotes; double quotes are plain. */
    sbuf w = {0};
    ex_cmd(&w, 3, "it's", "a\\nb", "x\"y");
    ex_incomplete(&w, 0, 0);
    check_str("'it\\'s' 'a\\nb' 'x\"y'\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_quotes_inside_argument(void **state) {
    (void)state;
    /* A quote may open mid-argument; empty quotes give an empty argument. */
    sbuf w = {0};
    ex_cmd(&w, 5, "abcd", "", "", "x y", "pre'q");
    ex_incomplete(&w, 0, 0);
    check_str("ab\"cd\" \"\" '' \"x y\" pre\"'q\"\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_quote_followed_by_space_kinds(void **state) {
    (void)state;
    /* After a closing quote any C-locale space may follow. */
    sbuf w = {0};
    ex_cmd(&w, 3, "a", "b", "c");
    ex_incomplete(&w, 0, 0);
    check_str("\"a\"\t'b'\v\"c\"\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_unbalanced_quotes(void **state) {
    (void)state;
    const char *bad[] = {
        "SET k \"abc\r\n",      /* unterminated double */
        "SET k 'abc\r\n",       /* unterminated single */
        "SET k \"abc\"def\r\n", /* closing quote glued to a character */
        "SET k 'a'b\r\n",
        "\"a\\\"\r\n", /* the only quote is escaped */
        "'a\\'\n",
        "\"abc\\\r\n", /* a trailing backslash inside quotes */
        "\"a\"\"b\"\r\n",
        "\"\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) check_error(bad[i], strlen(bad[i]), &AUTH, E_QUOTES);
}

static void test_inline_unbalanced_after_good_command(void **state) {
    (void)state;
    sbuf w = {0};
    ex_cmd(&w, 1, "PING");
    ex_errs(&w, E_QUOTES);
    check_str("PING\r\nECHO \"x\r\nPING\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_embedded_nul(void **state) {
    (void)state;
    static const char in1[] = "PI\0NG\r\n";
    check_error(in1, sizeof(in1) - 1, &AUTH, E_NUL_INLINE);
    static const char in2[] = "ECHO \"\0\"\n";
    check_error(in2, sizeof(in2) - 1, &AUTH, E_NUL_INLINE);
    /* The check runs before the quote check. */
    static const char in3[] = "ECHO \"\0\n";
    check_error(in3, sizeof(in3) - 1, &AUTH, E_NUL_INLINE);
    /* A NUL after the line's end belongs to the next request. */
    static const char in4[] = "PING\r\n\0";
    sbuf w = {0};
    ex_cmd(&w, 1, "PING");
    ex_incomplete(&w, 1, 0);
    check_stream(in4, sizeof(in4) - 1, &AUTH, &w);
    sb_free(&w);
}

static void test_inline_too_big_request(void **state) {
    (void)state;
    size_t n = RESP_INLINE_MAX_SIZE + 1;
    char *in = malloc(n);
    memset(in, 'A', n);
    /* Exactly 64 KB without a newline: still waiting. */
    sbuf w = {0}, got = {0};
    ex_incomplete(&w, n - 1, 0);
    feed_whole(in, n - 1, &AUTH, &got);
    assert_same(&w, &got, "whole, 64 KB");
    /* One byte more: the error, however the bytes arrived. */
    check_error(in, n, &AUTH, E_BIG_INLINE);
    /* Exactly 64 KB and then the newline: a command of one 64 KB argument,
     * whole or with the newline in a read of its own. */
    char *line = malloc(n + 1);
    memcpy(line, in, n - 1);
    memcpy(line + n - 1, "\r\n", 2);
    sb_free(&w);
    sb_adds(&w, "CMD 1");
    tr_arg(&w, in, n - 1);
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    got.len = 0;
    feed_whole(line, n + 1, &AUTH, &got);
    assert_same(&w, &got, "whole, 64 KB and a newline");
    size_t cut = n - 1;
    got.len = 0;
    feed(line, n + 1, &cut, 1, &AUTH, 0, &got);
    assert_same(&w, &got, "64 KB, then the newline");
    free(line);
    free(in);
    sb_free(&w);
    sb_free(&got);
}

static void test_inline_long_line_with_newline_is_fine(void **state) {
    (void)state;
    /* The limit is on waiting for a newline, not on the line itself. */
    size_t n = 70000;
    char *in = malloc(n + 8);
    memcpy(in, "ECHO ", 5);
    memset(in + 5, 'b', n - 5);
    memcpy(in + n, "\r\n", 2);
    sbuf w = {0}, got = {0};
    sb_adds(&w, "CMD 2");
    tr_arg(&w, "ECHO", 4);
    tr_arg(&w, in + 5, n - 5);
    sb_adds(&w, "\n");
    ex_incomplete(&w, 0, 0);
    feed_whole(in, n + 2, &AUTH, &got);
    assert_same(&w, &got, "whole");
    free(in);
    sb_free(&w);
    sb_free(&got);
}

static void test_inline_skip_empty_lines(void **state) {
    (void)state;
    sbuf w = {0};
    ex_cmd(&w, 1, "PING");
    ex_cmd(&w, 1, "PONG");
    ex_incomplete(&w, 0, 0);
    check_str("\r\n\n   \r\n\t \n\v\f\r\nPING\r\n\n\r\nPONG\n\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_mixed_with_multibulk(void **state) {
    (void)state;
    sbuf w = {0};
    ex_cmd(&w, 1, "PING");
    ex_cmd(&w, 2, "GET", "a");
    ex_cmd(&w, 3, "SET", "b", "c d");
    ex_cmd(&w, 2, "ECHO", "*");
    ex_incomplete(&w, 0, 0);
    check_str("PING\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\nSET b \"c d\"\n*2\r\n$4\r\nECHO\r\n$1\r\n*\r\n", &AUTH, &w);
    sb_free(&w);
}

static void test_inline_unauthenticated_has_no_count_limit(void **state) {
    (void)state;
    /* Valkey's unauthenticated limits apply to RESP framing only. */
    sbuf w = {0};
    ex_cmd(&w, 12, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l");
    ex_incomplete(&w, 0, 0);
    check_str("a b c d e f g h i j k l\r\n", &UNAUTH, &w);
    sb_free(&w);
}

static void test_inline_every_prefix_is_incomplete(void **state) {
    (void)state;
    const char *in = "SET k \"a b\\x41\" 'c\\'d'\r\n";
    sbuf w = {0};
    ex_cmd(&w, 4, "SET", "k", "a bA", "c'd");
    ex_incomplete(&w, 0, 0);
    check_str(in, &AUTH, &w);
    sb_free(&w);
    for (size_t k = 0; k < strlen(in); k++) {
        sbuf got = {0};
        feed_whole(in, k, &AUTH, &got);
        assert_non_null(strstr(got.p, "INCOMPLETE"));
        assert_null(strstr(got.p, "ERROR"));
        sb_free(&got);
    }
}

static void test_inline_pipeline_one_command_per_call(void **state) {
    (void)state;
    const char *in = "*1\r\n$4\r\nPING\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n";
    size_t len = strlen(in), pos = 0;
    size_t expect_used[3] = {14, 6, 21};
    resp_parser p;
    resp_parser_init(&p);
    for (int i = 0; i < 3; i++) {
        size_t used;
        int argc;
        obj **argv;
        const char *err;
        assert_int_equal(resp_parse(&p, in + pos, len - pos, &AUTH, &used, &argc, &argv, &err), RESP_OK);
        assert_int_equal(used, expect_used[i]);
        assert_int_equal(argc, i == 2 ? 2 : 1);
        for (int j = 0; j < argc; j++) obj_decr_ref(argv[j]);
        zfree(argv);
        pos += used;
    }
    assert_int_equal(pos, len);
    resp_parser_reset(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_count_values),
        cmocka_unit_test(test_header_count_waits_for_whole_line),
        cmocka_unit_test(test_header_count_invalid),
        cmocka_unit_test(test_header_count_crlf),
        cmocka_unit_test(test_header_count_too_big),
        cmocka_unit_test(test_header_count_unauthenticated),
        cmocka_unit_test(test_header_bulk_values),
        cmocka_unit_test(test_header_bulk_waits_for_whole_line),
        cmocka_unit_test(test_header_bulk_expected_dollar),
        cmocka_unit_test(test_header_bulk_invalid),
        cmocka_unit_test(test_header_bulk_limit_is_proto_max_bulk_len),
        cmocka_unit_test(test_header_bulk_crlf),
        cmocka_unit_test(test_header_bulk_too_big),
        cmocka_unit_test(test_header_bulk_unauthenticated),
        cmocka_unit_test(test_multibulk_one_command),
        cmocka_unit_test(test_consumed_is_exact),
        cmocka_unit_test(test_multibulk_empty_argument),
        cmocka_unit_test(test_multibulk_binary_safe),
        cmocka_unit_test(test_multibulk_all_byte_values),
        cmocka_unit_test(test_multibulk_many_arguments),
        cmocka_unit_test(test_multibulk_huge_count_is_not_trusted),
        cmocka_unit_test(test_multibulk_lf_only_waits_for_cr),
        cmocka_unit_test(test_pipeline_many_commands),
        cmocka_unit_test(test_pipeline_one_command_per_call),
        cmocka_unit_test(test_skip_zero_and_negative_counts),
        cmocka_unit_test(test_skip_alone_is_consumed),
        cmocka_unit_test(test_resume_inside_count_header),
        cmocka_unit_test(test_resume_before_first_argument),
        cmocka_unit_test(test_resume_between_bulk_header_and_payload),
        cmocka_unit_test(test_resume_inside_small_payload),
        cmocka_unit_test(test_resume_inside_big_payload),
        cmocka_unit_test(test_resume_at_payload_crlf),
        cmocka_unit_test(test_resume_between_arguments),
        cmocka_unit_test(test_resume_inside_last_argument),
        cmocka_unit_test(test_errors_at_any_cut),
        cmocka_unit_test(test_bulk_payload_needs_crlf),
        cmocka_unit_test(test_big_bulk_streamed),
        cmocka_unit_test(test_big_bulk_then_small_then_big),
        cmocka_unit_test(test_big_bulk_consumes_payload_as_it_arrives),
        cmocka_unit_test(test_small_bulk_waits_whole),
        cmocka_unit_test(test_big_bulk_bad_terminator),
        cmocka_unit_test(test_big_bulk_zero_copy_window),
        cmocka_unit_test(test_pending_bulk_reports),
        cmocka_unit_test(test_every_prefix_is_incomplete),
        cmocka_unit_test(test_error_resets_the_parser),
        cmocka_unit_test(test_reset_drops_partial_command),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_null_limits_mean_authenticated_defaults),
        cmocka_unit_test(test_error_texts_are_plain_strings),
        cmocka_unit_test(test_inline_simple),
        cmocka_unit_test(test_inline_incomplete_keeps_line),
        cmocka_unit_test(test_inline_cr_and_lf_inside_line),
        cmocka_unit_test(test_inline_vertical_tab_and_formfeed),
        cmocka_unit_test(test_inline_double_quote_escapes),
        cmocka_unit_test(test_inline_hex_escapes),
        cmocka_unit_test(test_inline_other_escapes_are_literal),
        cmocka_unit_test(test_inline_single_quotes),
        cmocka_unit_test(test_inline_quotes_inside_argument),
        cmocka_unit_test(test_inline_quote_followed_by_space_kinds),
        cmocka_unit_test(test_inline_unbalanced_quotes),
        cmocka_unit_test(test_inline_unbalanced_after_good_command),
        cmocka_unit_test(test_inline_embedded_nul),
        cmocka_unit_test(test_inline_too_big_request),
        cmocka_unit_test(test_inline_long_line_with_newline_is_fine),
        cmocka_unit_test(test_inline_skip_empty_lines),
        cmocka_unit_test(test_inline_mixed_with_multibulk),
        cmocka_unit_test(test_inline_unauthenticated_has_no_count_limit),
        cmocka_unit_test(test_inline_every_prefix_is_incomplete),
        cmocka_unit_test(test_inline_pipeline_one_command_per_call),
    };
    /* A grader runs one test at a time (a stubbed exercise aborts the
     * whole binary): SOLOIST_TEST_FILTER=test_name. */
    const char *filter = getenv("SOLOIST_TEST_FILTER");
    if (filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
