/* types_load.c — the load of bench/types_memory.py: lists, hashes or sets
 * of N elements in each of K keys, pushed into one server as fast as one
 * connection goes.
 *
 * Benchmark client (driven by bench/types_memory.py). Owns nothing of the
 * server. One blocking TCP connection on loopback; commands go out in
 * windows of W (one write of W commands, then every reply read before
 * the next window), so the server always has a pipeline to chew on and
 * the client does little per element but format it.
 *
 *   types_load PORT TYPE ELEM KEYS N BATCH W SECONDS
 *
 * TYPE is list, hash or set; ELEM is str or int. Key k (0 <= k < KEYS)
 * is named "l:k", "h:k" or "s:k" and gets the elements i = k*N .. k*N+N-1
 * (numbered across all keys, so the strings are as long in a 10-element
 * cell as in a million-element one and a set's members never repeat):
 *
 *   list  RPUSH l:k e ...          e = "m:i" (str) or "i" (int)
 *   hash  HSET h:k f:i e ...       the field "f:i", the value as above
 *   set   SADD s:k e ...
 *
 * at most BATCH elements per command (a key of N <= BATCH elements is one
 * command). Each reply is checked against what a fresh server answers:
 * RPUSH the list's length so far, HSET and SADD the elements the command
 * added. Prints one JSON object: type, elem, keys, n, commands, elements,
 * seconds (wall, first write to last reply), mismatches (replies that
 * differed; 0 on a fresh server). An error reply (a server that does not
 * know the command) is printed on stderr as the server wrote it, and the
 * exit status is 2; a closed connection or bad arguments exit 1; the time
 * bound (SECONDS) exits 3 (bench_bound.h). Single-threaded.
 *
 * Valkey anchor: none (a client). The commands are Valkey's RPUSH, HSET
 * and SADD (src/t_list.c pushGenericCommand, src/t_hash.c hsetCommand,
 * src/t_set.c saddCommand), each variadic, as redis-cli --pipe would
 * send them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_bound.h"
#include "bench_pipe.h"

/* A reply that is not the integer the command should answer: a list's
 * new length, or how many fields or members were new (bench_pipe.h). */
static int differs(const char *reply, long i, void *expect) {
    return reply[0] != ':' || strtol(reply + 1, NULL, 10) != ((const long *)expect)[i];
}

/* One bulk string of the command: $len\r\nbytes\r\n. */
static size_t bulk(char *out, const char *s) { return (size_t)sprintf(out, "$%zu\r\n%s\r\n", strlen(s), s); }

int main(int argc, char **argv) {
    bench_pipe_name = "types_load";
    if (argc != 9) die("usage: types_load PORT list|hash|set str|int KEYS N BATCH WINDOW SECONDS");
    int port = atoi(argv[1]);
    const char *type = argv[2], *elem = argv[3];
    long keys = atol(argv[4]), n = atol(argv[5]), batch = atol(argv[6]), window = atol(argv[7]);
    int list = !strcmp(type, "list"), hash = !strcmp(type, "hash"), set = !strcmp(type, "set");
    int ints = !strcmp(elem, "int");
    if (!list && !hash && !set) die("type must be list, hash or set");
    if (!ints && strcmp(elem, "str")) die("elem must be str or int");
    if (keys < 1 || n < 1 || keys > 100000000 || n > 100000000) die("keys or n out of range");
    if (batch < 1 || batch > 10000 || window < 1 || window > 10000) die("batch or window out of range");
    bench_bound_set("types_load", (unsigned)atoi(argv[8]));

    int fd = pipe_connect(port);

    /* A command: its header (< 64 bytes), then per element at most two
     * bulk strings of a 10-digit number with a prefix (< 24 bytes each). */
    size_t per_cmd = 64 + (size_t)batch * 48;
    char *out = malloc((size_t)window * per_cmd);
    long *expect = malloc((size_t)window * sizeof(long));
    if (!out || !expect) die("out of memory");
    const char *verb = list ? "RPUSH" : hash ? "HSET" : "SADD";
    char kp = list ? 'l' : hash ? 'h' : 's';

    long commands = 0, bad = 0, key = 0, j = 0; /* the next element: key's j-th */
    double t0 = now_s();
    while (key < keys) {
        long w = 0;
        size_t len = 0;
        while (w < window && key < keys) {
            long take = n - j < batch ? n - j : batch;
            char name[32], e[32];
            len += (size_t)sprintf(out + len, "*%ld\r\n", 2 + take * (hash ? 2 : 1));
            len += bulk(out + len, verb);
            sprintf(name, "%c:%ld", kp, key);
            len += bulk(out + len, name);
            for (long t = 0; t < take; t++) {
                long i = key * n + j + t;
                if (hash) {
                    sprintf(e, "f:%ld", i);
                    len += bulk(out + len, e);
                }
                sprintf(e, ints ? "%ld" : "m:%ld", i);
                len += bulk(out + len, e);
            }
            j += take;
            expect[w++] = list ? j : take;
            if (j == n) {
                key++;
                j = 0;
            }
        }
        write_all(fd, out, len);
        bad += read_replies(fd, w, differs, expect);
        commands += w;
    }
    double secs = now_s() - t0;
    printf("{\"type\": \"%s\", \"elem\": \"%s\", \"keys\": %ld, \"n\": %ld, \"commands\": %ld, "
           "\"elements\": %ld, \"seconds\": %.6f, \"mismatches\": %ld}\n",
           type, elem, keys, n, commands, keys * n, secs, bad);
    close(fd);
    free(out);
    free(expect);
    free(pipe_in);
    return 0;
}
