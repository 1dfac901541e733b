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
    assert_int_equal(o->refcount, 2);
    assert_int_equal(k.c->reply_tail->hdr_len, strlen("$1048576\r\n"));
    assert_true(k.c->reply_bytes >= o->len); /* client-output-buffer-limit sees the value */
    assert_int_equal(server.stat_reply_bytes_copied, copied);
    assert_int_equal(server.stat_reply_refs, refs + 1);
    /* A small reply after it follows it, in order. */
    reply_long_long(k.c, 42);
    size_t len;
    char *want = bulk_of(o, &len);
    expect_bytes(k.peer, want, len);
    expect_bytes(k.peer, ":42\r\n", 5);
    for (int i = 0; i < 10 && k.c->reply_head; i++) turn();
    assert_null(k.c->reply_head);
    assert_int_equal(k.c->reply_bytes, 0);
    assert_int_equal(o->refcount, 1); /* the reply's count is gone */
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
            assert_true(is_unwritten(&iov[3]));
            wipe(iov, 4);
            assert_int_equal(reply_block_iov(k.c->buf, b, from, to, iov, pieces - 1), 0);
            assert_true(is_unwritten(&iov[pieces - 1])); /* nothing past the room */
        }
    }
    close_conn(&k);
    assert_int_equal(o->refcount, 1);
    obj_decr_ref(o);
    zfree(want);
}

/* buf (no block) and a plain block: one iovec of that chunk's own bytes
 * [from, to); none, and 0, when there is no room. */
static void test_iov_plain_chunks(void **state) {
    (void)state;
    char buf[64];
    for (int i = 0; i < 64; i++) buf[i] = (char)('a' + i % 26);
    reply_block *pb = zmalloc(sizeof(*pb) + 32);
    *pb = (reply_block){.next = NULL, .size = 32, .used = 32, .ref = NULL, .hdr_len = 0};
    for (int i = 0; i < 32; i++) pb->buf[i] = (char)('A' + i % 26);
    struct iovec iov[2];
    wipe(iov, 2);
    assert_int_equal(reply_block_iov(buf, NULL, 3, 10, iov, 1), 1);
    assert_ptr_equal(iov[0].iov_base, buf + 3);
    assert_int_equal(iov[0].iov_len, 7);
    assert_true(is_unwritten(&iov[1]));
    wipe(iov, 2);
    assert_int_equal(reply_block_iov(buf, pb, 2, 32, iov, 1), 1);
    assert_ptr_equal(iov[0].iov_base, pb->buf + 2);
    assert_int_equal(iov[0].iov_len, 30);
    assert_true(is_unwritten(&iov[1]));
    wipe(iov, 2);
    assert_int_equal(reply_block_iov(buf, NULL, 3, 10, iov, 0), 0);
    assert_int_equal(reply_block_iov(buf, pb, 0, 1, iov, 0), 0);
    assert_true(is_unwritten(&iov[0])); /* no room, nothing written */
    zfree(pb);
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
    assert_true(n > 0 && n <= NET_MAX_WRITES_PER_EVENT);
    k.c->sentlen += n; /* what main's completion does, before the loop writes more */
    expect_bytes(k.peer, want + start, n);
    expect_bytes(k.peer, want + start + n, len - start - n);
    for (int i = 0; i < 10 && k.c->reply_head; i++) turn();
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
    assert_true(k.c->io_nwritten <= NET_MAX_WRITES_PER_EVENT);
    assert_false(k.c->io_write_flags & CLIENT_IO_WRITE_ERROR);
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
    assert_int_equal(o->refcount, 2); /* the reply's and the test's: the keyspace let go (APPEND: copied) */
    char *rest = recv_n(k.peer, len - got);
    assert_memory_equal(head, want, got);
    assert_memory_equal(rest, want + got, len - got);
    zfree(rest);
    for (int i = 0; i < 10 && k.c->reply_head; i++) turn();
    assert_null(k.c->reply_head);
    assert_int_equal(o->refcount, 1); /* only the test's now */
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
    in_flight("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$1\r\nx\r\n", "+OK\r\n");
}

static void test_del_in_flight(void **state) {
    (void)state;
    in_flight("*2\r\n$3\r\nDEL\r\n$3\r\nbig\r\n", ":1\r\n");
}

static void test_flushall_in_flight(void **state) {
    (void)state;
    in_flight("*1\r\n$8\r\nFLUSHALL\r\n", "+OK\r\n");
}

static void test_append_in_flight_copies(void **state) {
    (void)state;
    in_flight("*3\r\n$6\r\nAPPEND\r\n$3\r\nbig\r\n$3\r\nabc\r\n", ":4194307\r\n");
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
    assert_int_equal(o->refcount, 201);
    assert_true(zmalloc_used_memory() > before + 200 * sizeof(reply_block));
    close_conn(&k);
    assert_int_equal(o->refcount, 1);
    if (zmalloc_used_memory() > before + 1024) print_message("used %zu, before %zu\n", zmalloc_used_memory(), before);
    assert_true(zmalloc_used_memory() <= before + 1024); /* 200 blocks would be several KB */
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

#define REF_TESTS                                                                                                      \
    cmocka_unit_test(test_ref_block_round_trip), cmocka_unit_test(test_small_or_switched_off_is_copied),               \
        cmocka_unit_test(test_partial_write_resumes_mid_payload), cmocka_unit_test(test_main_writes_64k_per_turn),     \
        cmocka_unit_test(test_overwrite_in_flight), cmocka_unit_test(test_del_in_flight),                              \
        cmocka_unit_test(test_flushall_in_flight), cmocka_unit_test(test_append_in_flight_copies),                     \
        cmocka_unit_test(test_output_limit_counts_references), cmocka_unit_test(test_iov_every_range),                 \
        cmocka_unit_test(test_iov_plain_chunks), cmocka_unit_test(test_closed_with_references_pending)

int main(void) {
    const struct CMUnitTest main_only[] = {REF_TESTS};
    const struct CMUnitTest threads[] = {REF_TESTS};
    int failed = cmocka_run_group_tests_name("io-threads 1", main_only, setup_main, teardown);
    failed += cmocka_run_group_tests_name("io-threads 2, forced on", threads, setup_threads, teardown);
    return failed;
}
