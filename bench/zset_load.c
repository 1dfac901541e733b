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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_pipe.h"

/* A ZADD NX that added its member answers :1 (bench_pipe.h). */
static int added(const char *reply, long i, void *arg) {
    (void)i, (void)arg;
    return reply[0] == ':' && reply[1] == '1' && reply[2] == '\r';
}

/* Appends one command of argc arguments to out; returns its length. */
static size_t format_cmd(char *out, int argc, const char **argv) {
    size_t n = (size_t)sprintf(out, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) n += (size_t)sprintf(out + n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    return n;
}

int main(int argc, char **argv) {
    bench_pipe_name = "zset_load";
    if (argc != 6) die("usage: zset_load PORT add|rank|score A B WINDOW");
    int port = atoi(argv[1]);
    const char *op = argv[2];
    long a = atol(argv[3]), b = atol(argv[4]), window = atol(argv[5]);
    if (window < 1 || window > 100000) die("window out of range");
    int fd = pipe_connect(port);
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
        ones += read_replies(fd, w, added, NULL);
        sent += w;
    }
    double secs = now_s() - t0;
    printf("{\"op\": \"%s\", \"ops\": %ld, \"seconds\": %.6f, \"added\": %ld}\n", op, total, secs, add ? ones : 0);
    close(fd);
    free(out);
    free(pipe_in);
    return 0;
}
