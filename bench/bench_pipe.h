/* bench_pipe.h — a pipelined RESP client for the C loaders (zset_load.c,
 * types_load.c): connect to a loopback port, write a window of commands,
 * read their replies back one by one.
 *
 * Header-only, as bench_bound.h is: each benchmark is one .c file linked
 * on its own. Every failure ends the program: a server's error reply with
 * status 2 and the server's words on stderr (the Python side reports
 * them), anything else with status 1. Set bench_pipe_name to the
 * program's name first, for the messages. */
#ifndef SOLOIST_BENCH_PIPE_H
#define SOLOIST_BENCH_PIPE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *bench_pipe_name = "bench";
static char *pipe_in;
static size_t pipe_in_len, pipe_in_cap;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "%s: %s\n", bench_pipe_name, what);
    exit(1);
}

/* A connection to 127.0.0.1:port with TCP_NODELAY, or the end. */
static int pipe_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) die("cannot connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Bytes of one complete reply at p, 0 when it is not all there yet. */
static size_t reply_size(const char *p, size_t n) {
    const char *eol = memchr(p, '\n', n);
    if (!eol) return 0;
    size_t head = (size_t)(eol - p) + 1;
    long v = strtol(p + 1, NULL, 10);
    switch (p[0]) {
    case '+':
    case ':': return head;
    case '-': fprintf(stderr, "%s: error reply %.*s\n", bench_pipe_name, (int)(head > 2 ? head - 2 : head), p); exit(2);
    case '$':
        if (v < 0) return head;
        return n >= head + (size_t)v + 2 ? head + (size_t)v + 2 : 0;
    case '*': {
        size_t at = head;
        for (long i = 0; i < v; i++) {
            size_t k = reply_size(p + at, n - at);
            if (!k) return 0;
            at += k;
        }
        return at;
    }
    default: die("unexpected reply");
    }
    return 0;
}

/* Reads until `want` replies are complete, calling each(reply, i, arg)
 * for the i-th, in order; returns how many each() counted (returned 1). */
typedef int pipe_reply_fn(const char *reply, long i, void *arg);
static long read_replies(int fd, long want, pipe_reply_fn *each, void *arg) {
    long done = 0, counted = 0;
    size_t at = 0;
    pipe_in_len = 0;
    while (done < want) {
        size_t k;
        while (done < want && at < pipe_in_len && (k = reply_size(pipe_in + at, pipe_in_len - at))) {
            counted += each(pipe_in + at, done, arg);
            at += k;
            done++;
        }
        if (done == want) break;
        if (at) { /* keep the partial reply at the front */
            memmove(pipe_in, pipe_in + at, pipe_in_len - at);
            pipe_in_len -= at;
            at = 0;
        }
        if (pipe_in_cap - pipe_in_len < 65536) {
            pipe_in_cap = pipe_in_cap * 2 + 65536;
            pipe_in = realloc(pipe_in, pipe_in_cap);
            if (!pipe_in) die("out of memory");
        }
        ssize_t r = read(fd, pipe_in + pipe_in_len, pipe_in_cap - pipe_in_len);
        if (r <= 0) die("connection closed");
        pipe_in_len += (size_t)r;
    }
    return counted;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) die("write failed");
        p += w;
        n -= (size_t)w;
    }
}

#endif
