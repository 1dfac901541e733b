/* zset_load.c — the load of step 8's benchmark: millions of ZADD NX, then
 * range queries, against one server, as fast as one connection goes.
 *
 * Step 8 benchmark (driven by bench/zset_memory.py). Owns nothing of the
 * server. One blocking TCP connection; commands go out in windows of W
 * (one write of W commands, then every reply read before the next
 * window), so the server always has a pipeline of W to chew on and the
 * client does nothing per command but format it and skip its reply.
 *
 *   zset_load PORT add FROM TO W      ZADD z NX i m:i for i in [FROM, TO)
 *   zset_load PORT rank N SIZE W      N x ZRANGE z r r+9, r random in [0, SIZE-10]
 *   zset_load PORT score N SIZE W     N x ZRANGE z s +inf BYSCORE LIMIT 0 10
 *
 * Prints one JSON object: op, ops, seconds (wall, first write to last
 * reply), and for add the count of :1 replies (members added). Exits 1
 * on an error reply or a closed connection. Single-threaded; loopback.
 *
 * Valkey anchor: none (a client); the load is the one Valkey's sorted-set
 * memory work was measured with (pipelined ZADD NX of m:{i}).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char *in;
static size_t in_len, in_cap;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "zset_load: %s\n", what);
    exit(1);
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
    case '-': fprintf(stderr, "zset_load: error reply %.*s\n", (int)head, p); exit(1);
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

/* Reads until `want` replies are complete; returns how many were ":1". */
static long read_replies(int fd, long want) {
    long done = 0, ones = 0;
    size_t at = 0;
    in_len = 0;
    while (done < want) {
        size_t k;
        while (done < want && at < in_len && (k = reply_size(in + at, in_len - at))) {
            if (in[at] == ':' && in[at + 1] == '1' && in[at + 2] == '\r') ones++;
            at += k;
            done++;
        }
        if (done == want) break;
        if (at) { /* keep the partial reply at the front */
            memmove(in, in + at, in_len - at);
            in_len -= at;
            at = 0;
        }
        if (in_cap - in_len < 65536) {
            in_cap = in_cap * 2 + 65536;
            in = realloc(in, in_cap);
            if (!in) die("out of memory");
        }
        ssize_t r = read(fd, in + in_len, in_cap - in_len);
        if (r <= 0) die("connection closed");
        in_len += (size_t)r;
    }
    return ones;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) die("write failed");
        p += w;
        n -= (size_t)w;
    }
}

/* Appends one command of argc arguments to out; returns its length. */
static size_t format_cmd(char *out, int argc, const char **argv) {
    size_t n = (size_t)sprintf(out, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) n += (size_t)sprintf(out + n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    return n;
}

int main(int argc, char **argv) {
    if (argc != 6) die("usage: zset_load PORT add|rank|score A B WINDOW");
    int port = atoi(argv[1]);
    const char *op = argv[2];
    long a = atol(argv[3]), b = atol(argv[4]), window = atol(argv[5]);
    if (window < 1 || window > 100000) die("window out of range");
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) die("cannot connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    char *out = malloc((size_t)window * 128);
    if (!out) die("out of memory");
    int add = !strcmp(op, "add"), rank = !strcmp(op, "rank"), score = !strcmp(op, "score");
    if (!add && !rank && !score) die("op must be add, rank or score");
    long total = add ? b - a : a, sent = 0, ones = 0;
    srandom(12345);
    double t0 = now_s();
    while (sent < total) {
        long w = total - sent < window ? total - sent : window;
        size_t n = 0;
        for (long k = 0; k < w; k++) {
            char x[32], y[32], m[40];
            if (add) {
                long i = a + sent + k;
                sprintf(x, "%ld", i);
                sprintf(m, "m:%ld", i);
                const char *args[] = {"ZADD", "z", "NX", x, m};
                n += format_cmd(out + n, 5, args);
            } else {
                long r = b > 10 ? random() % (b - 10) : 0;
                sprintf(x, "%ld", r);
                if (rank) {
                    sprintf(y, "%ld", r + 9);
                    const char *args[] = {"ZRANGE", "z", x, y};
                    n += format_cmd(out + n, 4, args);
                } else {
                    const char *args[] = {"ZRANGE", "z", x, "+inf", "BYSCORE", "LIMIT", "0", "10"};
                    n += format_cmd(out + n, 8, args);
                }
            }
        }
        write_all(fd, out, n);
        ones += read_replies(fd, w);
        sent += w;
    }
    double secs = now_s() - t0;
    printf("{\"op\": \"%s\", \"ops\": %ld, \"seconds\": %.6f, \"added\": %ld}\n", op, total, secs, add ? ones : 0);
    close(fd);
    free(out);
    free(in);
    return 0;
}
