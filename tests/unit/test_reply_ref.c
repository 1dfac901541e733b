/* test_reply_ref.c — step 7: large bulk replies by reference (src/reply.c
 * reply-ref, src/client_io.c write-iov, src/networking.c's release of
 * the count).
 *
 * A value of REPLY_REF_MIN bytes or more goes into the reply as a
 * reference block: its header and CRLF are copied, its bytes are not;
 * main holds a count on it until the block is written, so the value may
 * be overwritten, deleted or flushed meanwhile and still goes out whole.
 * Every test runs once with the step-0 server (io-threads 1: main writes
 * at most 64 KB per turn) and once with a worker forced on (the worker
 * writes until the socket is full, main releases the count afterwards).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "client.h"
#include "client_io.h"
#include "config.h"
#include "db.h"
#include "networking.h"
#include "object.h"
#include "reply.h"
#include "reply_block.h"
#include "server.h"
#include "zmalloc.h"

#include "expect.h"
#include "loop_test.h"

static int setup_main(void **state) {
    (void)state;
    loop_server_start(1, 0);
    return 0;
}

static int setup_threads(void **state) {
    (void)state;
    loop_server_start(2, 1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    loop_server_stop();
    return 0;
}

/* A RAW string of len bytes, a pattern that differs for each seed. */
static obj *pattern_value(size_t len, unsigned seed) {
    obj *o = obj_create_raw(len);
    for (size_t i = 0; i < len; i++) o->ptr[i] = (char)('A' + (i * 7 + seed) % 53);
    o->ptr[len] = '\0';
    return o;
}

/* The whole RESP bulk reply for o, zmalloc'd; *len its length. */
static char *bulk_of(const obj *o, size_t *len) {
    char *out = zmalloc(o->len + 32);
    int h = sprintf(out, "$%zu\r\n", o->len);
    memcpy(out + h, o->ptr, o->len);
    memcpy(out + h + o->len, "\r\n", 2);
    *len = (size_t)h + o->len + 2;
    return out;
}

static void expect_bytes(int fd, const char *want, size_t len) {
    char *got = recv_n(fd, len);
    assert_memory_equal(got, want, len);
    zfree(got);
}

/* Stores o under key through the keyspace (the keyspace takes o's count). */
static void store(const char *key, obj *o) {
    obj *k = obj_create_string(key, strlen(key));
    db_overwrite(&db0, k, o);
    obj_decr_ref(k);
}

/* Turns the loop until c's pending reply is written and its blocks are
 * freed (with a worker, main frees them once the job is back), bounded
 * like recv_n: at least 10 turns, then until the deadline. */
static void wait_written(client *c) {
    long long deadline = loop_deadline();
    for (int i = 0; c->reply_head && (i < 10 || util_mstime() < deadline); i++) {
        turn();
        if (i >= 10) sched_yield(); /* a worker may need this core */
    }
}

/* A reference block round-trips: header and CRLF copied, the value's
 * bytes not (reply_bytes_copied unchanged), its count raised while the
 * block is pending and dropped, on main, once the block is written. */
static void test_ref_block_round_trip(void **state) {
    (void)state;
    conn k = open_conn();
    obj *o = pattern_value(1024 * 1024, 1);
    long long copied = server.stat_reply_bytes_copied, refs = server.stat_reply_refs;
    reply_bulk(k.c, o);
    assert_non_null(k.c->reply_tail);
    assert_ptr_equal(k.c->reply_tail->ref, o);
    expect_eq(("the value's count while its reply is pending (the keyspace's stand-in and the reply's)"), o->refcount,
              2);
    expect_eq(("hdr_len of a 1 MB value's reference block"), k.c->reply_tail->hdr_len, strlen("$1048576\r\n"));
    assert_true(k.c->reply_bytes >= o->len); /* client-output-buffer-limit sees the value */
    assert_int_equal(server.stat_reply_bytes_copied, copied);
    assert_int_equal(server.stat_reply_refs, refs + 1);
    /* A small reply after it follows it, in order. */
    reply_long_long(k.c, 42);
    size_t len;
    char *want = bulk_of(o, &len);
    expect_bytes(k.peer, want, len);
    expect_bytes(k.peer, ":42\r\n", 5);
    wait_written(k.c);
    assert_null(k.c->reply_head);
    assert_int_equal(k.c->reply_bytes, 0);
    expect_eq(("the value's count once its reply is written"), o->refcount, 1);
    obj_decr_ref(o);
    zfree(want);
    close_conn(&k);
}

/* Below REPLY_REF_MIN, or with reply-copy-avoidance off, the bytes are
 * copied as before and counted. */
static void test_small_or_switched_off_is_copied(void **state) {
    (void)state;
    conn k = open_conn();
    obj *small = pattern_value(REPLY_REF_MIN - 1, 2), *big = pattern_value(REPLY_REF_MIN * 4, 3);
    long long copied = server.stat_reply_bytes_copied;
    reply_bulk(k.c, small);
    assert_int_equal(small->refcount, 1);
    server.reply_copy_avoidance = 0;
    reply_bulk(k.c, big);
    server.reply_copy_avoidance = 1;
    assert_int_equal(big->refcount, 1);
    assert_int_equal(server.stat_reply_bytes_copied, copied + (long long)(small->len + big->len));
    size_t l1, l2;
    char *w1 = bulk_of(small, &l1), *w2 = bulk_of(big, &l2);
    expect_bytes(k.peer, w1, l1);
    expect_bytes(k.peer, w2, l2);
    zfree(w1);
    zfree(w2);
    obj_decr_ref(small);
    obj_decr_ref(big);
    close_conn(&k);
}

/* An iovec nobody wrote: what every slot holds before a call, so that a
 * write past `room` shows. */
static const struct iovec unwritten = {(void *)&unwritten, 12345};
static void wipe(struct iovec *iov, int n) {
    for (int i = 0; i < n; i++) iov[i] = unwritten;
}
static int is_unwritten(const struct iovec *v) {
    return v->iov_base == unwritten.iov_base && v->iov_len == unwritten.iov_len;
}

/* The iovecs of a reference block for every [from, to) between the edges
 * of its three pieces (the header, the value's bytes, the CRLF), and one
 * byte either side of each edge: together they are exactly the reply's
 * bytes [from, to), one iovec per piece that [from, to) touches and none
 * empty. With one iovec less room than that: 0, and nothing written past
 * the room. The smallest value that goes by reference. */
static void test_iov_every_range(void **state) {
    (void)state;
    conn k = open_conn();
    obj *o = pattern_value(REPLY_REF_MIN, 8);
    reply_bulk(k.c, o);
    reply_block *b = k.c->reply_tail;
    assert_non_null(b);
    assert_ptr_equal(b->ref, o);
    size_t len;
    char *want = bulk_of(o, &len);
    assert_int_equal(b->used, len);
    size_t h = b->hdr_len, v = o->len;
    const size_t cut[] = {0, 1, h - 1, h, h + 1, h + v / 2, h + v - 1, h + v, h + v + 1, h + v + 2};
    const size_t start[3] = {0, h, h + v}, end[3] = {h, h + v, h + v + 2};
    int n_cut = (int)(sizeof(cut) / sizeof(cut[0]));
    for (int i = 0; i < n_cut; i++) {
        for (int j = i + 1; j < n_cut; j++) {
            size_t from = cut[i], to = cut[j];
            int pieces = 0;
            for (int p = 0; p < 3; p++)
                if ((from > start[p] ? from : start[p]) < (to < end[p] ? to : end[p])) pieces++;
            struct iovec iov[4];
            wipe(iov, 4);
            int n = reply_block_iov(k.c->buf, b, from, to, iov, 3);
            if (n != pieces) fail_msg("[%zu, %zu): %d iovecs, want %d", from, to, n, pieces);
            size_t off = from;
            for (int m = 0; m < n; m++) {
                if (iov[m].iov_len == 0 || iov[m].iov_len > to - off)
                    fail_msg("[%zu, %zu): iovec %d has %zu bytes, %zu are left", from, to, m, iov[m].iov_len, to - off);
                if (memcmp(iov[m].iov_base, want + off, iov[m].iov_len) != 0)
                    fail_msg("[%zu, %zu): iovec %d is not the reply's bytes from %zu", from, to, m, off);
                off += iov[m].iov_len;
            }
            if (off != to) fail_msg("[%zu, %zu): the iovecs end at %zu", from, to, off);
            expect_true(("nothing written past the %d iovec(s) for [%zu, %zu)", n, from, to), is_unwritten(&iov[3]));
            wipe(iov, 4);
            expect_eq(("iovecs for [%zu, %zu), which needs %d, with room for %d (they do not fit: 0)", from, to, pieces,
                       pieces - 1),
                      reply_block_iov(k.c->buf, b, from, to, iov, pieces - 1), 0);
            expect_true(("nothing written at iov[%d], past room %d, for [%zu, %zu)", pieces - 1, pieces - 1, from, to),
                        is_unwritten(&iov[pieces - 1]));
        }
    }
    close_conn(&k);
    assert_int_equal(o->refcount, 1);
    obj_decr_ref(o);
    zfree(want);
}

/* buf (no block) and a plain block: one iovec of that chunk's own bytes
 * [from, to), counted from the chunk's first byte (buf + from, or the
 * block's buf + from); none, and 0, when there is no room. */
static void test_iov_plain_chunks(void **state) {
    (void)state;
    char buf[64];
    for (int i = 0; i < 64; i++) buf[i] = (char)('a' + i % 26);
    reply_block *pb = zmalloc(sizeof(*pb) + 32);
    *pb = (reply_block){.next = NULL, .size = 32, .used = 32, .ref = NULL, .hdr_len = 0};
    for (int i = 0; i < 32; i++) pb->buf[i] = (char)('A' + i % 26);
    struct iovec iov[2];
    wipe(iov, 2);
    expect_eq(("iovecs for bytes [3, 10) of buf, room 1"), reply_block_iov(buf, NULL, 3, 10, iov, 1), 1);
    expect_eq(("where the iovec for bytes [3, 10) of buf starts, as an offset from buf"),
              (const char *)iov[0].iov_base - buf, 3);
    expect_eq(("bytes in the iovec for [3, 10) of buf"), iov[0].iov_len, 7);
    expect_true(("nothing written after buf's one iovec"), is_unwritten(&iov[1]));
    wipe(iov, 2);
    expect_eq(("iovecs for bytes [2, 32) of a plain block, room 1"), reply_block_iov(buf, pb, 2, 32, iov, 1), 1);
    expect_eq(("where the iovec for bytes [2, 32) of a plain block starts, as an offset from the block's buf"),
              (const char *)iov[0].iov_base - pb->buf, 2);
    expect_eq(("bytes in the iovec for [2, 32) of a plain block"), iov[0].iov_len, 30);
    expect_true(("nothing written after the plain block's one iovec"), is_unwritten(&iov[1]));
    wipe(iov, 2);
    expect_eq(("iovecs for bytes [3, 10) of buf with room 0 (it does not fit: 0)"),
              reply_block_iov(buf, NULL, 3, 10, iov, 0), 0);
    expect_eq(("iovecs for bytes [0, 1) of a plain block with room 0 (it does not fit: 0)"),
              reply_block_iov(buf, pb, 0, 1, iov, 0), 0);
    expect_true(("nothing written with room 0"), is_unwritten(&iov[0]));
    zfree(pb);
}

/* The value's piece is as long as the block says main appended,
 * used - hdr_len - 2 bytes, whatever the object's len says: the block's
 * header announced that many bytes, and the CRLF follows at output offset
 * used - 2. A hand-built block around the 10-byte value "0123456789"
 * whose header "$5\r\n" announced 5 of them (hdr_len 4, used 11): its
 * output is "$5\r\n01234\r\n", three iovecs of 4, 5 and 2 bytes, and
 * bytes [9, 11) are the block's own CRLF, not the value's "56". */
static void test_iov_value_length_from_block(void **state) {
    (void)state;
    obj *o = obj_create_string("0123456789", 10);
    reply_block *rb = zmalloc(sizeof(*rb) + 6);
    *rb = (reply_block){.next = NULL, .size = 11, .used = 11, .ref = o, .hdr_len = 4};
    memcpy(rb->buf, "$5\r\n\r\n", 6);
    const char *want = "$5\r\n01234\r\n";
    const size_t lens[3] = {4, 5, 2};
    struct iovec iov[4];
    wipe(iov, 4);
    expect_eq(("iovecs for the 11 bytes of a block with hdr_len 4 and used 11 around a 10-byte value"),
              reply_block_iov(NULL, rb, 0, 11, iov, 3), 3);
    size_t off = 0;
    for (int m = 0; m < 3; m++) {
        expect_eq(("bytes in iovec %d (header, value, CRLF) of that block; the value's is used - hdr_len - 2", m),
                  iov[m].iov_len, lens[m]);
        expect_true(("iovec %d of that block is its output's bytes from %zu", m, off),
                    memcmp(iov[m].iov_base, want + off, lens[m]) == 0);
        off += lens[m];
    }
    wipe(iov, 4);
    expect_eq(("iovecs for bytes [9, 11) of that block (its CRLF, at used - 2)"),
              reply_block_iov(NULL, rb, 9, 11, iov, 3), 1);
    expect_true(("the iovec for bytes [9, 11) is the block's own CRLF, at its buf + hdr_len"),
                iov[0].iov_base == rb->buf + 4 && iov[0].iov_len == 2);
    zfree(rb);
    obj_decr_ref(o);
}

/* A partial write leaves sentlen inside the value; the next write starts
 * exactly there (client_io_write run directly, as a job would run it),
 * and main's turn sends at most NET_MAX_WRITES_PER_EVENT bytes. */
static void test_partial_write_resumes_mid_payload(void **state) {
    (void)state;
    conn k = open_conn();
    obj *o = pattern_value(512 * 1024, 4);
    size_t len;
    char *want = bulk_of(o, &len);
    reply_bulk(k.c, o);
    reply_block *b = k.c->reply_head;
    assert_non_null(b);
    assert_null(k.c->buf); /* nothing went into buf */
    /* Pretend the first 100003 bytes went out already (odd, mid-value). */
    size_t start = 100003;
    assert_true(start > b->hdr_len && start < len);
    k.c->sentlen = start;
    client_io_mark_write(k.c);
    client_io_write(k.c);
    size_t n = k.c->io_nwritten;
    expect_ge(("bytes main writes from offset 100003 of a 512 KB reply"), n, 1);
    expect_le(("bytes main writes from offset 100003 of a 512 KB reply"), n, NET_MAX_WRITES_PER_EVENT);
    k.c->sentlen += n; /* what main's completion does, before the loop writes more */
    expect_bytes(k.peer, want + start, n);
    expect_bytes(k.peer, want + start + n, len - start - n);
    wait_written(k.c);
    assert_null(k.c->reply_head);
    assert_int_equal(o->refcount, 1);
    obj_decr_ref(o);
    zfree(want);
    close_conn(&k);
}

/* One turn of main's write pass sends at most 64 KB of a large reply,
 * however much the socket would take. */
static void test_main_writes_64k_per_turn(void **state) {
    (void)state;
    conn k = open_conn();
    obj *o = pattern_value(1024 * 1024, 5);
    reply_bulk(k.c, o);
    client_io_mark_write(k.c);
    client_io_write(k.c);
    expect_le(("bytes main writes in one turn of a 1 MB reply by reference"), k.c->io_nwritten,
              NET_MAX_WRITES_PER_EVENT);
    expect_true(("no write error"), !(k.c->io_write_flags & CLIENT_IO_WRITE_ERROR));
    k.c->sentlen += k.c->io_nwritten;
    size_t len;
    char *want = bulk_of(o, &len);
    char *got = recv_n(k.peer, len);
    assert_memory_equal(got, want, len);
    zfree(got);
    zfree(want);
    obj_decr_ref(o);
    close_conn(&k);
}

/* While a GET's reply of a large value is in flight (the socket holds only
 * part of it), another client overwrites, appends to, deletes or flushes
 * the key: the reply still carries the old value whole, and the value is
 * freed once the reply is written. */
static void in_flight(const char *mutation, const char *mutation_reply) {
    conn k = open_conn(), m = open_conn();
    obj *o = pattern_value(4 * 1024 * 1024, 6);
    store("big", o);
    obj_incr_ref(o); /* the test's own look, to check the counts */
    size_t len;
    char *want = bulk_of(o, &len);
    send_all(k.peer, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 22);
    char head[4096];
    size_t got = 0;
    for (int i = 0; i < 10000 && got < sizeof(head); i++) { /* the first bytes: the GET has run */
        turn();
        ssize_t r = read(k.peer, head + got, sizeof(head) - got);
        if (r > 0) got += (size_t)r;
    }
    assert_int_equal(got, sizeof(head));
    assert_true(o->refcount >= 2); /* keyspace or not, the reply holds it */
    roundtrip(&m, mutation, mutation_reply);
    /* The reply's and the test's: the keyspace let go (APPEND: copied). */
    expect_eq(("the value's count after the key changed under its pending reply"), o->refcount, 2);
    char *rest = recv_n(k.peer, len - got);
    assert_memory_equal(head, want, got);
    assert_memory_equal(rest, want + got, len - got);
    zfree(rest);
    wait_written(k.c);
    expect_true(("the 4 MB reply is written and its block freed"), k.c->reply_head == NULL);
    expect_eq(("the value's count once its reply is written (only the test's)"), o->refcount, 1);
    if (strstr(mutation, "APPEND")) {
        /* APPEND wrote into a copy: the stored value grew, o did not. */
        assert_int_equal(o->len, 4 * 1024 * 1024);
        roundtrip(&m, "*2\r\n$6\r\nSTRLEN\r\n$3\r\nbig\r\n", ":4194307\r\n");
    }
    obj_decr_ref(o);
    roundtrip(&m, "*1\r\n$8\r\nFLUSHALL\r\n", "+OK\r\n");
    zfree(want);
    close_conn(&m);
    close_conn(&k);
}

static void test_overwrite_in_flight(void **state) {
    (void)state;
    expect_context("test_overwrite_in_flight: SET of the key while its 4 MB reply is pending");
    in_flight("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$1\r\nx\r\n", "+OK\r\n");
}

static void test_del_in_flight(void **state) {
    (void)state;
    expect_context("test_del_in_flight: DEL of the key while its 4 MB reply is pending");
    in_flight("*2\r\n$3\r\nDEL\r\n$3\r\nbig\r\n", ":1\r\n");
}

static void test_flushall_in_flight(void **state) {
    (void)state;
    expect_context("test_flushall_in_flight: FLUSHALL while a key's 4 MB reply is pending");
    in_flight("*1\r\n$8\r\nFLUSHALL\r\n", "+OK\r\n");
}

static void test_append_in_flight_copies(void **state) {
    (void)state;
    expect_context("test_append_in_flight_copies: APPEND to the key while its 4 MB reply is pending");
    in_flight("*3\r\n$6\r\nAPPEND\r\n$3\r\nbig\r\n$3\r\nabc\r\n", ":4194307\r\n");
}

/* The reply holds the value's last count: the key is deleted, overwritten
 * or flushed while its 4 MB reply is in flight, and the test then drops
 * its own count, so when the block is freed no one else holds the value.
 * Freeing the block must free the value: once the reply is written,
 * zmalloc holds within LAST_COUNT_SLACK bytes of what it held before the
 * value was made (a key, the keyspace's table), not the value's 4 MB
 * more. */
#define LAST_COUNT_SLACK 8192
static void last_count(const char *mutation, const char *mutation_reply) {
    conn k = open_conn(), m = open_conn();
    /* A first read on each thread allocates its shared query buffer. */
    for (int i = 0; i < 4; i++) {
        roundtrip(&k, "*1\r\n$4\r\nPING\r\n", "+PONG\r\n");
        roundtrip(&m, "*1\r\n$4\r\nPING\r\n", "+PONG\r\n");
    }
    size_t before = zmalloc_used_memory();
    obj *o = pattern_value(4 * 1024 * 1024, 14);
    store("big", o);
    obj_incr_ref(o); /* the test's own, dropped while the reply is in flight */
    size_t len = strlen("$4194304\r\n") + 4 * 1024 * 1024 + 2;
    send_all(k.peer, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 22);
    char head[4096];
    size_t got = 0;
    for (int i = 0; i < 10000 && got < sizeof(head); i++) { /* the first bytes: the GET has run */
        turn();
        ssize_t r = read(k.peer, head + got, sizeof(head) - got);
        if (r > 0) got += (size_t)r;
    }
    expect_eq(("bytes of the 4 MB reply read before the key changes"), got, sizeof(head));
    roundtrip(&m, mutation, mutation_reply);
    expect_eq(("the value's count after the key changed under its pending reply (the reply's and the test's)"),
              o->refcount, 2);
    obj_decr_ref(o); /* now the reply holds the last count */
    o = NULL;
    char *rest = recv_n(k.peer, len - got);
    zfree(rest);
    wait_written(k.c);
    int written = k.c->reply_head == NULL;
    long long over = (long long)zmalloc_used_memory() - (long long)before;
    roundtrip(&m, "*1\r\n$8\r\nFLUSHALL\r\n", "+OK\r\n");
    close_conn(&m);
    close_conn(&k);
    expect_true(("the 4 MB reply is written and its block freed"), written);
    expect_le(("bytes zmalloc holds once the reply that held the 4 MB value's last count is written, over what it "
               "held before the value was made"),
              over, LAST_COUNT_SLACK);
}

static void test_last_count_frees_the_value(void **state) {
    (void)state;
    expect_context("test_last_count_frees_the_value: DEL of the key while its 4 MB reply is pending");
    last_count("*2\r\n$3\r\nDEL\r\n$3\r\nbig\r\n", ":1\r\n");
    expect_context("test_last_count_frees_the_value: SET of the key while its 4 MB reply is pending");
    last_count("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$1\r\nx\r\n", "+OK\r\n");
    expect_context("test_last_count_frees_the_value: FLUSHALL while a key's 4 MB reply is pending");
    last_count("*1\r\n$8\r\nFLUSHALL\r\n", "+OK\r\n");
}

/* A client closed with its large replies never written: freeing it frees
 * every block, and each reference block gives its count back (the value
 * is left with the count it had); a plain block, which holds no count, is
 * freed without touching any object. Memory returns to where it was. */
static void test_closed_with_references_pending(void **state) {
    (void)state;
    obj *o = pattern_value(REPLY_REF_MIN * 2, 9);
    reply_block *pb = zmalloc(sizeof(*pb) + 16);
    *pb = (reply_block){.next = NULL, .size = 16, .used = 5, .ref = NULL, .hdr_len = 0};
    memcpy(pb->buf, ":42\r\n", 5);
    reply_block_free(pb); /* a plain block: no count to give back */
    size_t before = zmalloc_used_memory();
    conn k = open_conn();
    for (int i = 0; i < 200; i++) reply_bulk(k.c, o);
    reply_long_long(k.c, 42); /* plain bytes after the references */
    expect_eq(("the value's count with 200 reference blocks pending"), o->refcount, 201);
    assert_true(zmalloc_used_memory() > before + 200 * sizeof(reply_block));
    close_conn(&k);
    expect_eq(("the value's count once the client with 200 reference blocks is closed"), o->refcount, 1);
    /* 200 blocks would be several KB. */
    expect_le(("bytes zmalloc holds after the close, over what it held before"),
              (long long)zmalloc_used_memory() - (long long)before, 1024);
    obj_decr_ref(o);
}

/* A client that does not read its large replies passes the output-buffer
 * hard limit (referenced bytes count) and is closed; the references go
 * with it and memory returns to where it was. */
static void test_output_limit_counts_references(void **state) {
    (void)state;
    obuf_limit saved = server.obuf_normal;
    server.obuf_normal.hard_bytes = 8 * 1024 * 1024;
    obj *o = pattern_value(1024 * 1024, 7);
    store("big", o);
    conn w = open_conn(); /* a first read on each thread allocates its shared query buffer */
    for (int i = 0; i < 4; i++) roundtrip(&w, "*1\r\n$4\r\nPING\r\n", "+PONG\r\n");
    close_conn(&w);
    size_t before = zmalloc_used_memory();
    long long closed = server.stat_client_outbuf_limit_disconnections;
    conn k = open_conn();
    int peer = k.peer;
    static char req[22 * 64];
    for (int i = 0; i < 64; i++) memcpy(req + 22 * i, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 22);
    send_all(peer, req, sizeof(req));
    /* Bounded in turns and in time: with a worker the read may take a
     * while on a loaded machine. */
    long long deadline = util_mstime() + 5000;
    for (int i = 0; server.stat_client_outbuf_limit_disconnections == closed && (i < 2000 || util_mstime() < deadline);
         i++)
        turn();
    assert_int_equal(server.stat_client_outbuf_limit_disconnections, closed + 1);
    /* The close, once any job is back, drops every reference. */
    for (int i = 0; o->refcount != 1 && (i < 200 || util_mstime() < deadline + 5000); i++) turn();
    assert_int_equal(o->refcount, 1);
    /* The blocks are gone; a little bookkeeping may stay (the closing
     * list, a thread's shared query buffer). Without counting the
     * referenced bytes the blocks would have held ~64 x 60 bytes and never
     * passed the limit. */
    if (zmalloc_used_memory() > before + 2 * CLIENT_IOBUF_LEN + 4096)
        print_message("used %zu, before %zu\n", zmalloc_used_memory(), before);
    assert_true(zmalloc_used_memory() <= before + 2 * CLIENT_IOBUF_LEN + 4096);
    close(peer);
    server.obuf_normal = saved;
    conn m = open_conn();
    roundtrip(&m, "*1\r\n$8\r\nFLUSHALL\r\n", "+OK\r\n");
    close_conn(&m);
}

/* A plain block's iovec ends at `to`, never at the block's `used`: `to`
 * is the mark a write stops at (the watermark, or what is left of main's
 * 64 KB), and the block may hold bytes past it. Directly: a plain block
 * with 64 bytes used, asked for [5, 40), gives one iovec of 35 bytes.
 * Through main's write: a 1 MB value copied (reply-copy-avoidance off)
 * lies in one plain block, and one turn of main's sends at most 65,536
 * bytes of it (NET_MAX_WRITES_PER_EVENT). And a 2,000-byte copied reply
 * whose end sits in a block is marked, 5 more bytes are appended into
 * that block after the mark, and the write sends exactly the bytes up to
 * the mark. Both replies still arrive whole and in order. */
static void test_plain_block_stops_at_the_mark(void **state) {
    (void)state;
    char buf[8] = "unused";
    reply_block *pb = zmalloc(sizeof(*pb) + 64);
    *pb = (reply_block){.next = NULL, .size = 64, .used = 64, .ref = NULL, .hdr_len = 0};
    for (int i = 0; i < 64; i++) pb->buf[i] = (char)('A' + i % 26);
    struct iovec iov[2];
    wipe(iov, 2);
    expect_eq(("iovecs for bytes [5, 40) of a plain block with 64 used"), reply_block_iov(buf, pb, 5, 40, iov, 2), 1);
    expect_true(("the iovec for [5, 40) starts at the block's byte 5"), iov[0].iov_base == pb->buf + 5);
    expect_eq(("bytes in the iovec for [5, 40) of a plain block with 64 used"), iov[0].iov_len, 35);
    expect_true(("nothing written after the one iovec"), is_unwritten(&iov[1]));
    zfree(pb);

    /* Main's 64 KB per turn inside a plain block. */
    conn k = open_conn();
    obj *o = pattern_value(1024 * 1024, 11);
    server.reply_copy_avoidance = 0;
    reply_bulk(k.c, o);
    server.reply_copy_avoidance = 1;
    expect_true(("a copied 1 MB value lies in a plain block"), k.c->reply_tail && !k.c->reply_tail->ref);
    client_io_mark_write(k.c);
    client_io_write(k.c);
    expect_le(("bytes main writes in one turn of a 1 MB copied reply"), k.c->io_nwritten, NET_MAX_WRITES_PER_EVENT);
    expect_true(("no write error"), !(k.c->io_write_flags & CLIENT_IO_WRITE_ERROR));
    client_write_done(k.c, 0);
    size_t len;
    char *want = bulk_of(o, &len);
    expect_bytes(k.peer, want, len);
    zfree(want);
    obj_decr_ref(o);
    close_conn(&k);

    /* The watermark inside a plain block (a fresh client: no write of
     * the loop's is in flight when the test writes). */
    k = open_conn();
    obj *small = pattern_value(2000, 10);
    reply_bulk(k.c, small); /* below REPLY_REF_MIN: copied, buf then a block */
    expect_true(("a 2,000-byte reply's end is in a block, after buf"), k.c->reply_tail && !k.c->reply_tail->ref);
    client_io_mark_write(k.c);
    size_t marked = (k.c->bufpos - k.c->sentlen) + k.c->reply_tail->used;
    reply_long_long(k.c, 42); /* appended after the mark, into the same block */
    expect_eq(("bytes the block holds past the mark"), k.c->reply_tail->used - k.c->io_last_bufpos, 5);
    client_io_write(k.c);
    expect_eq(("bytes written up to a mark inside a plain block (the 2,009-byte reply, not the 5 after it)"),
              k.c->io_nwritten, marked);
    client_write_done(k.c, 0);
    size_t l1;
    char *w1 = bulk_of(small, &l1);
    expect_bytes(k.peer, w1, l1);
    expect_bytes(k.peer, ":42\r\n", 5);
    zfree(w1);
    obj_decr_ref(small);
    close_conn(&k);
}

/* A reference block asks only for the iovecs of the pieces [from, to)
 * touches: given room for exactly that many (1 for a range inside the
 * value, 2 for one from the header into the value), it fills them and
 * writes nothing past them, for every range test_iov_every_range tries.
 * A block that always wants room for all three would return 0 there, and
 * the writer would stop short of its mark whenever its array had one or
 * two slots left. */
static void test_iov_ref_needs_only_its_pieces(void **state) {
    (void)state;
    conn k = open_conn();
    obj *o = pattern_value(REPLY_REF_MIN, 12);
    reply_bulk(k.c, o);
    reply_block *b = k.c->reply_tail;
    expect_true(("the value went by reference"), b && b->ref == o);
    size_t len;
    char *want = bulk_of(o, &len);
    size_t h = b->hdr_len, v = o->len;
    const size_t cut[] = {0, 1, h - 1, h, h + 1, h + v / 2, h + v - 1, h + v, h + v + 1, h + v + 2};
    const size_t start[3] = {0, h, h + v}, end[3] = {h, h + v, h + v + 2};
    int n_cut = (int)(sizeof(cut) / sizeof(cut[0]));
    for (int i = 0; i < n_cut; i++) {
        for (int j = i + 1; j < n_cut; j++) {
            size_t from = cut[i], to = cut[j];
            int pieces = 0;
            for (int p = 0; p < 3; p++)
                if ((from > start[p] ? from : start[p]) < (to < end[p] ? to : end[p])) pieces++;
            struct iovec iov[4];
            wipe(iov, 4);
            int n = reply_block_iov(k.c->buf, b, from, to, iov, pieces);
            expect_eq(("iovecs for [%zu, %zu), which touches %d piece(s), with room for that many", from, to, pieces),
                      n, pieces);
            size_t off = from;
            for (int m = 0; m < n; m++) {
                expect_true(("iovec %d of [%zu, %zu) is the reply's bytes from %zu", m, from, to, off),
                            iov[m].iov_len <= to - off && memcmp(iov[m].iov_base, want + off, iov[m].iov_len) == 0);
                off += iov[m].iov_len;
            }
            expect_eq(("where the iovecs for [%zu, %zu) end", from, to), off, to);
            expect_true(("nothing written past room %d for [%zu, %zu)", pieces, from, to), is_unwritten(&iov[pieces]));
        }
    }
    close_conn(&k);
    expect_eq(("the value's count once its client is closed"), o->refcount, 1);
    obj_decr_ref(o);
    zfree(want);
}

/* A reference block's bytes are counted once: a 1 MB value's reply is
 * 1,048,588 bytes ("$1048576\r\n", the value, CRLF), and that is what the
 * block's used says, what the client's pending output counts (reply_bytes,
 * which client-output-buffer-limit reads) and what the reply appended.
 * Two such replies count twice that; once written, nothing. */
static void test_ref_block_counted_once(void **state) {
    (void)state;
    conn k = open_conn();
    obj *o = pattern_value(1024 * 1024, 13);
    const long long one = 10 + 1024 * 1024 + 2;
    unsigned long long appended = k.c->reply_appended;
    reply_bulk(k.c, o);
    expect_true(("the 1 MB value went by reference"), k.c->reply_tail && k.c->reply_tail->ref == o);
    expect_eq(("used of a 1 MB value's reference block"), k.c->reply_tail->used, one);
    expect_eq(("reply_bytes after one 1 MB bulk by reference"), client_output_bytes(k.c), one);
    expect_eq(("bytes appended by one 1 MB bulk by reference"), k.c->reply_appended - appended, one);
    reply_bulk(k.c, o);
    expect_eq(("reply_bytes after two 1 MB bulks by reference"), client_output_bytes(k.c), 2 * one);
    expect_eq(("bytes appended by two 1 MB bulks by reference"), k.c->reply_appended - appended, 2 * one);
    size_t len;
    char *want = bulk_of(o, &len);
    expect_bytes(k.peer, want, len);
    expect_bytes(k.peer, want, len);
    wait_written(k.c);
    expect_eq(("reply_bytes once both replies are written"), client_output_bytes(k.c), 0);
    expect_eq(("the value's count once both replies are written"), o->refcount, 1);
    zfree(want);
    obj_decr_ref(o);
    close_conn(&k);
}

#define REF_TESTS                                                                                                      \
    cmocka_unit_test_setup(test_ref_block_round_trip, expect_setup),                                                   \
        cmocka_unit_test_setup(test_small_or_switched_off_is_copied, expect_setup),                                    \
        cmocka_unit_test_setup(test_partial_write_resumes_mid_payload, expect_setup),                                  \
        cmocka_unit_test_setup(test_main_writes_64k_per_turn, expect_setup),                                           \
        cmocka_unit_test_setup(test_overwrite_in_flight, expect_setup),                                                \
        cmocka_unit_test_setup(test_del_in_flight, expect_setup),                                                      \
        cmocka_unit_test_setup(test_flushall_in_flight, expect_setup),                                                 \
        cmocka_unit_test_setup(test_append_in_flight_copies, expect_setup),                                            \
        cmocka_unit_test_setup(test_last_count_frees_the_value, expect_setup),                                         \
        cmocka_unit_test_setup(test_output_limit_counts_references, expect_setup),                                     \
        cmocka_unit_test_setup(test_iov_every_range, expect_setup),                                                    \
        cmocka_unit_test_setup(test_iov_plain_chunks, expect_setup),                                                   \
        cmocka_unit_test_setup(test_iov_value_length_from_block, expect_setup),                                        \
        cmocka_unit_test_setup(test_closed_with_references_pending, expect_setup),                                     \
        cmocka_unit_test_setup(test_plain_block_stops_at_the_mark, expect_setup),                                      \
        cmocka_unit_test_setup(test_iov_ref_needs_only_its_pieces, expect_setup),                                      \
        cmocka_unit_test_setup(test_ref_block_counted_once, expect_setup)

int main(void) {
    const struct CMUnitTest main_only[] = {REF_TESTS};
    const struct CMUnitTest threads[] = {REF_TESTS};
    int failed = cmocka_run_group_tests_name("io-threads 1", main_only, setup_main, teardown);
    failed += cmocka_run_group_tests_name("io-threads 2, forced on", threads, setup_threads, teardown);
    return failed;
}
