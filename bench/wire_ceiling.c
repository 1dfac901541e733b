/* wire_ceiling.c — the loopback ceiling of step 7's large-value benchmark, and the one client that reads every cell.
 *
 * Step 7 benchmark (driven by bench/big_values.py). Owns nothing of the
 * server: it measures what one TCP connection on loopback carries when
 * nothing but the kernel stands between a sender and a receiver, and it
 * is the measuring side of every bandwidth cell, servers' and ceiling's
 * alike, so that a server and the ceiling are read by the same receiver.
 *
 *   wire_ceiling peer [--sink BYTES] [--source zero|value]
 *   wire_ceiling client --port P --kind get|set|raw-get|raw-set --size BYTES
 *                       --seconds S --min-reqs K [--value-seed N]
 *                       [--expect zero|value]
 *   wire_ceiling touch --size BYTES
 *
 * peer: listens on 127.0.0.1, port 0, prints the port on a line of its
 * own, then serves one connection at a time, for ever, the raw exchange:
 * read an 8-byte request length and an 8-byte reply length (little
 * endian), read the request's bytes into a sink, send the reply's bytes.
 * No parsing, no keyspace, no event loop: what is left is the kernel's
 * copy in, its copy out and the wake-ups between the two processes.
 * Where the reply's bytes come from is the one choice a ceiling makes:
 * --source zero (the default) sends from never-written memory, which is
 * the kernel's one shared zero page, always in cache; --source value
 * sends from 64 MB written once at start with the value of seed 1 (see
 * below), which is where a server's value lives: memory the size of the
 * value, read from RAM or a far cache level. The first bounds every
 * sender; the second is a sender doing a server's reading and nothing
 * else of its work.
 *
 * client: one connection, one request at a time. get and set speak RESP
 * to a server (GET big, SET big <value>); raw-get and raw-set speak the
 * peer's exchange with the same bytes on the wire in each direction (a
 * small request answered by the value's size, or the value answered by 5
 * bytes). One untimed exchange first whose reply is checked (GET's bytes
 * equal to the value, SET's +OK, raw-get's all zero or, with --expect
 * value, equal to the value, raw-set's 5 bytes),
 * then exchanges for S seconds and at least K of them, each timed from
 * its first byte sent to its reply's last byte read (CLOCK_MONOTONIC).
 * Prints one JSON line: kind, size, exchanges, seconds (the timed loop's
 * wall time), ok (the checked reply was right) and latency_us (every
 * timed exchange, in order). A broken reply or a closed connection ends
 * it with ok false, an error and exit status 1.
 *
 * touch: what memory the process has never written costs. It maps size
 * bytes of anonymous memory, writes every byte once (each page's first
 * write takes a page fault: the kernel finds a page, zeroes it and maps
 * it, and in a virtual machine the host may have to back it too), then
 * writes them all again, and prints one JSON line with both rates. A
 * server that receives a large value into a freshly allocated buffer pays
 * the first; one that reuses its buffer pays the second.
 *
 * The value is size bytes of splitmix64 output from --value-seed (default
 * 1). Before a get cell the client itself SETs it, untimed, on the same
 * connection, and checks the +OK: the bytes a GET is checked against are
 * then the very bytes this process sent, and the generator lives in one
 * place, not twice (here and in Python) where the two could drift apart.
 *
 * Valkey anchor: none (a measuring tool). soloist's accepted sockets are
 * set in src/client_io.c (client_io_accept) and src/anet.c; the peer's
 * copy of them is marked below.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MB (1024u * 1024u)
/* The largest reply the peer sends: big_values.py's largest value is 64
 * MB; the slack covers a RESP header should a caller ask for one. */
#define MAX_REPLY ((size_t)64 * MB + 4096)
/* The peer's sink for a request's bytes: 256 KB, small enough to stay in
 * the caches, so the receiver's copy lands on lines it already holds
 * where a server's lands in fresh memory the size of the value; one
 * system call per 256 KB is small beside a 256 KB copy. That is an
 * argument, not a measurement: `peer --sink BYTES` tries another size
 * (two pages at least: peer_serve lands bytes at their page offset). */
#define SINK_DEFAULT ((size_t)256 * 1024)

static _Noreturn void die(const char *what) {
    fprintf(stderr, "wire_ceiling: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Every buffer a socket copies into or out of starts on a page. On the
 * machine the findings were measured on (an AMD EPYC, kernel 6.18), the
 * kernel's copy from a socket into a buffer that starts 16 bytes past a
 * page, where glibc's malloc puts a block this large, ran at about 1.4
 * GB/s, and at about 3.5 GB/s into one 32 bytes or more past it or on it:
 * the copy instruction slows down when source and destination are at
 * nearly the same offset within their pages. A receiver at the slow
 * offset made the ceiling read 2.5 times too low for a raw peer that
 * sends from page-aligned memory, while a server whose stream puts its
 * bytes elsewhere in the kernel's pages escaped it. The same offset for
 * every receiver and sender is the only fair choice; the page is the
 * natural one. */
static void *page_alloc(size_t n) {
    void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
    if (!p) die("aligned_alloc");
    return p;
}

/* splitmix64: a fixed, seeded stream of words, so the same seed gives the
 * same value in every run and on every machine. */
static void fill_value(char *p, size_t n, uint64_t seed) {
    uint64_t x = seed;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        z = htole64(z);
        memcpy(p + i, &z, n - i < 8 ? n - i : 8);
    }
}

/* Reads exactly n bytes; 0 when done, -1 when the peer closed or failed. */
static int recv_full(int fd, char *p, size_t n) {
    while (n) {
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Sends every byte of iov[0..cnt): each call one sendmsg() of everything
 * left, so the kernel takes as much as it will per system call. Advances
 * (and so consumes) the iovecs. 0 when done, -1 on failure. */
static int send_all(int fd, struct iovec *iov, int cnt) {
    while (cnt > 0) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
        ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        size_t done = (size_t)k;
        while (cnt > 0 && done >= iov->iov_len) {
            done -= iov->iov_len;
            iov++;
            cnt--;
        }
        if (cnt > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
    return 0;
}

/* ---- peer ----------------------------------------------------------------------------------------------------- */

/* The options soloist puts on an accepted socket (src/client_io.c,
 * client_io_accept, through src/anet.c), copied: TCP_NODELAY, and
 * SO_KEEPALIVE with tcp-keepalive's default of 300 s as anet_keepalive
 * sets it (idle 300 s, a probe every 100 s, 3 probes). Keep-alive never
 * fires on a busy connection; it is copied so that the two sockets differ
 * in nothing set. Like soloist, the peer leaves SO_SNDBUF and SO_RCVBUF
 * to the kernel's autotuning. What it does not copy is O_NONBLOCK
 * (soloist's accept4 sets it): an event loop's write stops at the send
 * buffer's free space, while one blocking send() of everything left is
 * the largest write the kernel takes, and a ceiling should have it. */
static void peer_sockopts(int fd) {
    int yes = 1, idle = 300, intvl = 100, cnt = 3;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes)) == -1 ||
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof(yes)) == -1 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) == -1 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) == -1 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) == -1)
        die("setsockopt");
}

/* One connection's exchanges, until the client closes it. A request's
 * bytes land in the sink at their own offset in the stream, modulo a
 * page, so that each lands at the offset within its page it had in the
 * sender's buffer: the kernel's copy then runs at its full speed (page_alloc
 * says why that matters), as it does for a server that reads a request
 * whole into one buffer. */
static void peer_serve(int fd, const char *src, char *sink, size_t sink_len) {
    size_t at = 0; /* the stream's offset, modulo a page */
    for (;;) {
        uint64_t h[2];
        if (recv_full(fd, (char *)h, sizeof(h)) < 0) return;
        at = (at + sizeof(h)) % 4096;
        uint64_t req = le64toh(h[0]), rep = le64toh(h[1]);
        while (req) {
            size_t room = sink_len - at;
            ssize_t k = recv(fd, sink + at, req < room ? (size_t)req : room, 0);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return;
            req -= (uint64_t)k;
            at = (at + (size_t)k) % 4096;
        }
        if (rep > MAX_REPLY) {
            fprintf(stderr, "wire_ceiling peer: a reply of %llu bytes is over %zu: closing\n", (unsigned long long)rep,
                    MAX_REPLY);
            return;
        }
        struct iovec iov = {.iov_base = (void *)src, .iov_len = (size_t)rep};
        if (send_all(fd, &iov, 1) < 0) return;
    }
}

static int peer(size_t sink_len, int value_source) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0) die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    if (bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 16) < 0) die("bind/listen");
    if (getsockname(ls, (struct sockaddr *)&a, &alen) < 0) die("getsockname");

    /* The reply's source. zero: anonymous memory mapped read-only and
     * never written, so every page is the kernel's shared zero page; the
     * copy into the socket reads the same 4 KB over and over, always in
     * cache: the cheapest source there is. value: a page-aligned buffer
     * written once, here, with the value of seed 1, so its first bytes are
     * the value a client generates for any size from that seed. */
    const char *src;
    if (value_source) {
        char *v = page_alloc(MAX_REPLY);
        fill_value(v, MAX_REPLY, 1);
        src = v;
    } else {
        src = mmap(NULL, MAX_REPLY, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (src == MAP_FAILED) die("mmap");
    }
    char *sink = page_alloc(sink_len);
    memset(sink, 0, sink_len); /* faulted in before the first exchange */

    printf("%d\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            die("accept");
        }
        peer_sockopts(fd);
        peer_serve(fd, src, sink, sink_len);
        close(fd);
    }
}

/* ---- client --------------------------------------------------------------------------------------------------- */

enum kind { K_GET, K_SET, K_RAW_GET, K_RAW_SET, K_NONE };
static const char *const kind_names[] = {"get", "set", "raw-get", "raw-set"};

struct cell {
    enum kind kind;
    int fd;
    size_t size;
    char *value;     /* the value (get, set, raw-set), size bytes */
    char *buf;       /* the reply, reused by every exchange */
    size_t buf_len;  /* room for the largest reply of this kind */
    char setreq[64]; /* "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$<size>\r\n" */
    size_t setreq_len;
    char bulk[32]; /* "$<size>\r\n", GET's reply header */
    size_t bulk_len;
    char err[200];
};

/* What arrived instead of the reply expected, for the error: the rest of
 * its first line is read too (a server's error reply is one line; at
 * most 120 bytes are waited for), then shown with anything that is not
 * plain printable text, quotes included, as '.', so the JSON line stays
 * JSON. */
static void unexpected(struct cell *c, size_t got) {
    size_t cap = c->buf_len < 120 ? c->buf_len : 120;
    while (got < cap && !memchr(c->buf, '\n', got)) {
        ssize_t k = recv(c->fd, c->buf + got, cap - got, 0);
        if (k <= 0) break;
        got += (size_t)k;
    }
    char shown[121];
    size_t n = 0;
    for (; n < got && n < cap && c->buf[n] != '\r' && c->buf[n] != '\n'; n++) {
        unsigned char ch = (unsigned char)c->buf[n];
        shown[n] = (ch >= 32 && ch < 127 && ch != '"' && ch != '\\') ? (char)ch : '.';
    }
    shown[n] = 0;
    snprintf(c->err, sizeof(c->err), "unexpected reply: %s", shown);
}

/* Reads a reply of exactly `want` bytes into c->buf, each recv() asking
 * for everything still outstanding. head/head_len: the bytes the reply
 * must start with, checked as soon as they are in (or as soon as a line
 * ends short of them), so a nil or an error reply stops the read instead
 * of waiting for bytes that will never come. -1 with c->err set on a
 * reply that differs or a closed connection. */
static int read_reply(struct cell *c, size_t want, const char *head, size_t head_len) {
    size_t got = 0;
    int head_ok = head_len == 0;
    while (got < want) {
        ssize_t k = recv(c->fd, c->buf + got, want - got, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            snprintf(c->err, sizeof(c->err), "connection %s after %zu of %zu reply bytes",
                     k == 0 ? "closed" : strerror(errno), got, want);
            return -1;
        }
        got += (size_t)k;
        if (!head_ok) {
            size_t n = got < head_len ? got : head_len;
            if (memcmp(c->buf, head, n) != 0 || (got < head_len && memchr(c->buf, '\n', got))) {
                unexpected(c, got);
                return -1;
            }
            head_ok = got >= head_len;
        }
    }
    return 0;
}

/* One exchange. check: compare the reply's content too (the untimed
 * first exchange); *ok is cleared when it differs. 0, or -1 with c->err
 * set when the reply is not framed as expected or the connection failed. */
static int exchange(struct cell *c, int check, int *ok) {
    static const char get_req[] = "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n";
    static char crlf[] = "\r\n";
    struct iovec iov[3];
    int cnt;
    uint64_t h[2];
    switch (c->kind) {
    case K_GET:
        iov[0] = (struct iovec){(void *)get_req, sizeof(get_req) - 1};
        cnt = 1;
        break;
    case K_SET:
        iov[0] = (struct iovec){c->setreq, c->setreq_len};
        iov[1] = (struct iovec){c->value, c->size};
        iov[2] = (struct iovec){crlf, 2};
        cnt = 3;
        break;
    case K_RAW_GET:
        h[0] = htole64(0);
        h[1] = htole64(c->size);
        iov[0] = (struct iovec){h, sizeof(h)};
        cnt = 1;
        break;
    default: /* K_RAW_SET */
        h[0] = htole64(c->size);
        h[1] = htole64(5);
        iov[0] = (struct iovec){h, sizeof(h)};
        iov[1] = (struct iovec){c->value, c->size};
        cnt = 2;
        break;
    }
    if (send_all(c->fd, iov, cnt) < 0) {
        snprintf(c->err, sizeof(c->err), "send: %s", strerror(errno));
        return -1;
    }
    switch (c->kind) {
    case K_GET:
        if (read_reply(c, c->bulk_len + c->size + 2, c->bulk, c->bulk_len) < 0) return -1;
        if (memcmp(c->buf + c->bulk_len + c->size, "\r\n", 2) != 0) {
            snprintf(c->err, sizeof(c->err), "GET reply does not end in CRLF");
            return -1;
        }
        if (check && memcmp(c->buf + c->bulk_len, c->value, c->size) != 0) *ok = 0;
        return 0;
    case K_SET: return read_reply(c, 5, "+OK\r\n", 5);
    case K_RAW_GET:
        if (read_reply(c, c->size, NULL, 0) < 0) return -1;
        if (!check) return 0;
        if (c->value) { /* --expect value */
            if (memcmp(c->buf, c->value, c->size) != 0) *ok = 0;
            return 0;
        }
        for (size_t i = 0; i < c->size; i++)
            if (c->buf[i]) {
                *ok = 0;
                break;
            }
        return 0;
    default: return read_reply(c, 5, NULL, 0);
    }
}

static _Noreturn void usage(void) {
    fprintf(stderr, "usage: wire_ceiling peer [--sink BYTES] [--source zero|value]\n"
                    "       wire_ceiling client --port P --kind get|set|raw-get|raw-set --size BYTES\n"
                    "                           --seconds S --min-reqs K [--value-seed N] [--expect zero|value]\n"
                    "       wire_ceiling touch --size BYTES\n");
    exit(2);
}

/* The JSON line. latency_us only when there were timed exchanges. */
static void report(const struct cell *c, long n, double secs, int ok, const int64_t *lat) {
    printf("{\"kind\": \"%s\", \"size\": %zu, \"exchanges\": %ld, \"seconds\": %.6f, \"ok\": %s", kind_names[c->kind],
           c->size, n, secs, ok ? "true" : "false");
    if (c->err[0]) printf(", \"error\": \"%s\"", c->err);
    printf(", \"latency_us\": [");
    for (long i = 0; i < n; i++) printf("%s%.1f", i ? ", " : "", (double)lat[i] / 1e3);
    printf("]}\n");
}

static int client(int argc, char **argv) {
    struct cell c = {.kind = K_NONE};
    int port = 0;
    long min_reqs = -1;
    double seconds = -1;
    uint64_t seed = 1;
    long long size = -1;
    int expect_value = 0; /* raw-get: the reply is the value, not zeros */
    for (int i = 0; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--port"))
            port = atoi(v);
        else if (!strcmp(k, "--size"))
            size = atoll(v);
        else if (!strcmp(k, "--seconds"))
            seconds = atof(v);
        else if (!strcmp(k, "--min-reqs"))
            min_reqs = atol(v);
        else if (!strcmp(k, "--value-seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(k, "--expect") && (!strcmp(v, "zero") || !strcmp(v, "value")))
            expect_value = !strcmp(v, "value");
        else if (!strcmp(k, "--kind")) {
            for (int j = 0; j < 4; j++)
                if (!strcmp(v, kind_names[j])) c.kind = (enum kind)j;
        } else
            usage();
    }
    if (argc % 2 || port <= 0 || port > 65535 || size <= 0 || (size_t)size > MAX_REPLY - 64 || seconds < 0 ||
        min_reqs < 1 || c.kind == K_NONE)
        usage();
    c.size = (size_t)size;
    c.setreq_len = (size_t)snprintf(c.setreq, sizeof(c.setreq), "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%zu\r\n", c.size);
    c.bulk_len = (size_t)snprintf(c.bulk, sizeof(c.bulk), "$%zu\r\n", c.size);
    if (c.kind != K_RAW_GET || expect_value) {
        c.value = page_alloc(c.size);
        fill_value(c.value, c.size, seed);
    }
    /* The reply buffer, written once here so that no timed exchange pays
     * for its first touch of a page. */
    c.buf_len = (c.kind == K_GET || c.kind == K_RAW_GET) ? c.size + 64 : 64;
    c.buf = page_alloc(c.buf_len);
    memset(c.buf, 0, c.buf_len);

    signal(SIGPIPE, SIG_IGN);
    c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c.fd < 0) die("socket");
    int yes = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(c.fd, (struct sockaddr *)&a, sizeof(a)) < 0) die("connect");

    int ok = 1;
    if (c.kind == K_GET) { /* the value, stored untimed before the cell */
        c.kind = K_SET;
        int rc = exchange(&c, 1, &ok);
        c.kind = K_GET;
        if (rc < 0) {
            report(&c, 0, 0, 0, NULL);
            return 1;
        }
    }
    if (exchange(&c, 1, &ok) < 0) {
        report(&c, 0, 0, 0, NULL);
        return 1;
    }

    size_t cap = 1024;
    long n = 0;
    int64_t *lat = malloc(cap * sizeof(*lat));
    if (!lat) die("malloc");
    int64_t t0 = now_ns(), limit = (int64_t)(seconds * 1e9), t = t0;
    int failed = 0;
    while (t - t0 < limit || n < min_reqs) {
        if ((size_t)n == cap) {
            cap *= 2;
            if (!(lat = realloc(lat, cap * sizeof(*lat)))) die("realloc");
        }
        int64_t a0 = now_ns();
        if (exchange(&c, 0, &ok) < 0) {
            failed = 1;
            break;
        }
        t = now_ns();
        lat[n++] = t - a0;
    }
    t = now_ns();
    report(&c, n, (double)(t - t0) / 1e9, ok && !failed, lat);
    close(c.fd);
    return failed ? 1 : 0;
}

/* touch: first and second writes of size fresh bytes, MB/s each. */
static int touch(size_t size) {
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) die("mmap");
    int64_t t0 = now_ns();
    memset(p, 1, size);
    int64_t t1 = now_ns();
    memset(p, 2, size);
    int64_t t2 = now_ns();
    double mb = (double)size / MB;
    printf("{\"kind\": \"touch\", \"size\": %zu, \"first_mb_per_s\": %.1f, \"second_mb_per_s\": %.1f}\n", size,
           mb / ((double)(t1 - t0) / 1e9), mb / ((double)(t2 - t1) / 1e9));
    munmap(p, size);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "touch") && !strcmp(argv[2], "--size") && atoll(argv[3]) > 0)
        return touch((size_t)atoll(argv[3]));
    if (argc >= 2 && !strcmp(argv[1], "peer")) {
        size_t sink = SINK_DEFAULT;
        int value_source = 0;
        if (argc % 2) usage();
        for (int i = 2; i + 1 < argc; i += 2) {
            if (!strcmp(argv[i], "--sink"))
                sink = (size_t)atoll(argv[i + 1]);
            else if (!strcmp(argv[i], "--source") && !strcmp(argv[i + 1], "zero"))
                value_source = 0;
            else if (!strcmp(argv[i], "--source") && !strcmp(argv[i + 1], "value"))
                value_source = 1;
            else
                usage();
        }
        if (sink < 2 * 4096) usage(); /* a page to land at any offset in, and room past it */
        return peer(sink, value_source);
    }
    if (argc >= 2 && !strcmp(argv[1], "client")) return client(argc - 2, argv + 2);
    usage();
}
