/*
 * Step 0 — a C RESP client driving the real server (cmocka).
 *
 * Owns: nothing of soloist; it links only libc and cmocka, and talks to a
 * server that someone else started on 127.0.0.1:$SOLOIST_PORT (run_all.py
 * starts it). Single-threaded test code.
 *
 * What it checks, from the outside, is what step 0's server must get
 * right whatever a client's write pattern: a long pipeline is answered in
 * order, a request that arrives one byte per packet is parsed once it is
 * complete, and a protocol error is answered and then the connection is
 * closed.
 *
 * Valkey anchor: src/networking.c processMultibulkBuffer (partial
 * requests stay in the query buffer until complete) and setProtocolError
 * (reply, then close after the reply is written).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define PAIRS 1000
#define IO_TIMEOUT_S 20

/* One connection with a small read buffer: a reply is read by lines and
 * counted bytes, never by a blind read, so a short read can't be mistaken
 * for a whole reply. */
typedef struct conn {
    int fd;
    char buf[65536];
    size_t len; /* bytes held */
    size_t pos; /* next unread byte */
} conn;

static int server_port(void) {
    const char *p = getenv("SOLOIST_PORT");
    return p ? atoi(p) : 0;
}

static conn *conn_open(void) {
    conn *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(c->fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)server_port());
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* every wait on this socket is bounded */
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S, .tv_usec = 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    assert_int_equal(connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return c;
}

static void conn_close(conn *c) {
    close(c->fd);
    free(c);
}

static void send_all(conn *c, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(c->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        assert_true(w > 0);
        p += w;
        n -= (size_t)w;
    }
}

/* Fill the buffer; returns bytes read, 0 on EOF, -1 on error/timeout. */
static ssize_t fill(conn *c) {
    if (c->pos > 0) {
        memmove(c->buf, c->buf + c->pos, c->len - c->pos);
        c->len -= c->pos;
        c->pos = 0;
    }
    if (c->len == sizeof(c->buf)) return -1;
    ssize_t r;
    do {
        r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
    } while (r < 0 && errno == EINTR);
    if (r > 0) c->len += (size_t)r;
    return r;
}

/* Next line without its CRLF, copied into out (NUL-terminated). */
static void read_line(conn *c, char *out, size_t cap) {
    for (;;) {
        char *s = c->buf + c->pos;
        char *e = memmem(s, c->len - c->pos, "\r\n", 2);
        if (e != NULL) {
            size_t n = (size_t)(e - s);
            assert_true(n < cap);
            memcpy(out, s, n);
            out[n] = '\0';
            c->pos += n + 2;
            return;
        }
        assert_true(fill(c) > 0);
    }
}

/* One reply of a simple type (+ - : $) as text: "+OK", "-ERR ...",
 * ":12", "$value" or "$(nil)". Bulk payloads must fit in out. */
static void read_reply(conn *c, char *out, size_t cap) {
    char line[512];
    read_line(c, line, sizeof(line));
    if (line[0] != '$') {
        assert_true(strlen(line) < cap);
        strcpy(out, line);
        return;
    }
    long n = strtol(line + 1, NULL, 10);
    if (n < 0) {
        snprintf(out, cap, "$(nil)");
        return;
    }
    assert_true((size_t)n + 2 < cap);
    while (c->len - c->pos < (size_t)n + 2) assert_true(fill(c) > 0);
    out[0] = '$';
    memcpy(out + 1, c->buf + c->pos, (size_t)n);
    out[n + 1] = '\0';
    assert_memory_equal(c->buf + c->pos + n, "\r\n", 2);
    c->pos += (size_t)n + 2;
}

/* Append one RESP request built from NUL-terminated strings. */
static size_t encode(char *out, size_t cap, int argc, ...) {
    va_list ap;
    size_t off = (size_t)snprintf(out, cap, "*%d\r\n", argc);
    va_start(ap, argc);
    for (int i = 0; i < argc; i++) {
        const char *a = va_arg(ap, const char *);
        off += (size_t)snprintf(out + off, cap - off, "$%zu\r\n%s\r\n", strlen(a), a);
        assert_true(off < cap);
    }
    va_end(ap);
    return off;
}

static void sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void test_ping(void **state) {
    (void)state;
    conn *c = conn_open();
    char req[64], rep[64];
    send_all(c, req, encode(req, sizeof(req), 1, "PING"));
    read_reply(c, rep, sizeof(rep));
    assert_string_equal(rep, "+PONG");
    conn_close(c);
}

/* 1000 SET/GET pairs in one write; every reply checked, in order. */
static void test_pipeline_set_get(void **state) {
    (void)state;
    conn *c = conn_open();
    size_t cap = PAIRS * 128, len = 0;
    char *req = malloc(cap);
    assert_non_null(req);
    char key[32], val[32], rep[128], want[64];
    for (int i = 0; i < PAIRS; i++) {
        snprintf(key, sizeof(key), "c:key:%d", i);
        snprintf(val, sizeof(val), "value-%d", i * 7);
        len += encode(req + len, cap - len, 3, "SET", key, val);
        len += encode(req + len, cap - len, 2, "GET", key);
    }
    send_all(c, req, len);
    for (int i = 0; i < PAIRS; i++) {
        read_reply(c, rep, sizeof(rep));
        assert_string_equal(rep, "+OK");
        read_reply(c, rep, sizeof(rep));
        snprintf(want, sizeof(want), "$value-%d", i * 7);
        assert_string_equal(rep, want);
    }
    /* and the keyspace holds them */
    len = encode(req, cap, 2, "EXISTS", "c:key:999");
    send_all(c, req, len);
    read_reply(c, rep, sizeof(rep));
    assert_string_equal(rep, ":1");
    free(req);
    conn_close(c);
}

/* A request split one byte per write (TCP_NODELAY, 1 ms apart) is parsed
 * once, when its last byte arrives. */
static void test_byte_by_byte(void **state) {
    (void)state;
    conn *c = conn_open();
    char req[256], rep[64];
    size_t n = encode(req, sizeof(req), 3, "SET", "c:split", "by-bytes");
    n += encode(req + n, sizeof(req) - n, 2, "GET", "c:split");
    n += (size_t)snprintf(req + n, sizeof(req) - n, "ECHO inline\r\n");
    for (size_t i = 0; i < n; i++) {
        send_all(c, req + i, 1);
        sleep_ms(1);
    }
    read_reply(c, rep, sizeof(rep));
    assert_string_equal(rep, "+OK");
    read_reply(c, rep, sizeof(rep));
    assert_string_equal(rep, "$by-bytes");
    read_reply(c, rep, sizeof(rep));
    assert_string_equal(rep, "$inline");
    conn_close(c);
}

/* A protocol error is answered, then the server closes the connection. */
static void test_protocol_error_closes(void **state) {
    (void)state;
    conn *c = conn_open();
    char rep[128];
    const char *bad = "*1\r\n$x\r\n";
    send_all(c, bad, strlen(bad));
    read_reply(c, rep, sizeof(rep));
    assert_string_equal(rep, "-ERR Protocol error: invalid bulk length");
    /* nothing more, then EOF (or a reset) */
    assert_int_equal(c->len - c->pos, 0);
    ssize_t r = fill(c);
    assert_true(r == 0 || (r < 0 && errno == ECONNRESET));
    conn_close(c);

    c = conn_open();
    const char *bad2 = "*1\r\n+PING\r\n";
    send_all(c, bad2, strlen(bad2));
    read_reply(c, rep, sizeof(rep));
    assert_string_equal(rep, "-ERR Protocol error: expected '$', got '+'");
    r = fill(c);
    assert_true(r == 0 || (r < 0 && errno == ECONNRESET));
    conn_close(c);
}

int main(void) {
    if (server_port() <= 0) {
        fprintf(stderr, "c_client: set SOLOIST_PORT to a running server's port\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping),
        cmocka_unit_test(test_pipeline_set_get),
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_protocol_error_closes),
    };
    return cmocka_run_group_tests_name("c_client", tests, NULL, NULL);
}
