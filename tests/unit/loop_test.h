/* loop_test.h — clients on socketpairs against the real server loop, for
 * the tests of the connection path (test_networking.c, step 0) and of the
 * I/O threads (test_io_offload.c, steps 4 and 5).
 *
 * The test writes a request into its end, turns the loop without waiting
 * (AE_DONT_WAIT), and reads the reply from the same end. Every exchange
 * gives up after a bounded number of loop turns; with I/O threads a turn
 * may find the worker not done yet, so the bound is in turns and in time.
 * Its helpers are static inline, so a file may take loop_server_init
 * alone (pipeline_test.h does) without unused-function warnings.
 * Include after cmocka.h, client.h, config.h, networking.h and server.h.
 */
#ifndef SOLOIST_LOOP_TEST_H
#define SOLOIST_LOOP_TEST_H

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ae.h"
#include "config.h"
#include "server_loop.h"
#include "util.h"
#include "zmalloc.h"

/* A group's setup and teardown: the server with its defaults, on no
 * port, quiet, with io_threads threads counting main (1: none), always
 * active when there are workers. */
static inline int loop_server_init(int io_threads) {
    config_init_defaults();
    server.port = 0;
    server.verbosity = LL_WARNING;
    server.io_threads_num = io_threads;
    server.io_threads_always_active = io_threads > 1;
    return server_init();
}

static inline void loop_server_destroy(void) {
    server_destroy();
    config_free_all();
}

/* One connected client: c is the server's side, peer the test's. */
typedef struct conn {
    client *c;
    int peer;
} conn;

static inline conn open_conn(void) {
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    conn k = {client_create(sv[0]), sv[1]};
    assert_non_null(k.c);
    return k;
}

static inline void close_conn(conn *k) {
    client_free(k->c);
    close(k->peer);
}

static inline void turn(void) {
    ae_process_events(server.el, AE_FILE_EVENTS | AE_DONT_WAIT | AE_CALL_BEFORE_SLEEP | AE_CALL_AFTER_SLEEP);
}

static inline void send_all(int fd, const char *p, size_t len) {
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n == -1 && errno == EAGAIN) {
            turn(); /* the server drains its side */
            continue;
        }
        assert_true(n > 0);
        p += n;
        len -= (size_t)n;
    }
}

/* When a wait gives up: 5 s from now, or a third of
 * SOLOIST_TEST_DEADLINE_MS when it is set (`make check-exercises` runs
 * wrong solutions that are stuck by design). A passing wait takes
 * milliseconds. */
static inline long long loop_deadline(void) {
    const char *env = getenv("SOLOIST_TEST_DEADLINE_MS");
    long long ms = env ? atoll(env) / 3 : 0;
    return util_mstime() + (ms > 0 && ms < 5000 ? ms : 5000);
}

/* Turns the loop until want bytes came back (or 1000 turns and the
 * deadline passed); returns them NUL-terminated, zmalloc'd. */
static inline char *recv_n(int fd, size_t want) {
    char *out = zmalloc(want + 1);
    size_t got = 0;
    long long deadline = loop_deadline();
    for (int i = 0; got < want && (i < 1000 || util_mstime() < deadline); i++) {
        turn();
        ssize_t n = read(fd, out + got, want - got);
        if (n > 0)
            got += (size_t)n;
        else if (i >= 100)
            sched_yield(); /* a worker may need this core */
    }
    assert_int_equal(got, want);
    out[got] = '\0';
    return out;
}

static inline void expect_reply(int fd, const char *want) {
    char *got = recv_n(fd, strlen(want));
    assert_string_equal(got, want);
    zfree(got);
}

static inline void roundtrip(conn *k, const char *req, const char *want) {
    send_all(k->peer, req, strlen(req));
    expect_reply(k->peer, want);
}

/* The server on an ephemeral loopback port (no test uses it) with
 * `threads` threads counting main; always_active forces them on. */
static inline void loop_server_start(int threads, int always_active) {
    config_init_defaults();
    server.port = 0;
    server.verbosity = LL_WARNING;
    server.io_threads_num = threads;
    server.io_threads_always_active = always_active;
    assert_int_equal(server_init(), 0);
}

static inline void loop_server_stop(void) {
    server_destroy();
    config_free_all();
}

#endif
