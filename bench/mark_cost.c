/* mark_cost.c — what setting the watermark costs main, per write job.
 *
 * Step 5 benchmark. Owns nothing of the server: it calls soloist's own
 * client_io_mark_write (src/client_io.c, linked from libsoloist.a) on a
 * client of its own, the call main makes once per write job it hands to
 * a worker. Two shapes of pending output, since the mark reads a
 * different field in each: replies only in buf (the mark is bufpos) and
 * a block list (the mark is the last block and its used).
 *
 * Beside it, what the alternative the chapter sets against the watermark
 * would cost: a lock taken by main around every append, measured as one
 * uncontended pthread mutex lock and unlock (the cheapest a lock can be;
 * a worker holding it during its writev would add waiting on top). The
 * watermark is paid once per write job, the lock once per reply appended,
 * so a write job carrying k replies compares one mark with k lock pairs.
 *
 * Each figure: ns per call, the median of RUNS runs of CALLS calls,
 * wall time (CLOCK_MONOTONIC) on one thread. The call is not inlined (it
 * is in another object file, and no LTO), so a figure includes the call.
 *
 * Output: JSON lines on stdout with BENCH_RUN_ID. --quick: fewer calls.
 * Bounded: 3 cases x RUNS x CALLS.
 *
 * Valkey anchor: src/networking.c at the pinned commit, where main sets
 * io_last_bufpos and io_last_reply_block before it sends a write job
 * (tools/pinned-source.py shows it); nothing of Valkey's code is used.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "client_io.h"

#define RUNS 7

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return v[n / 2];
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* One case: ns per call of the mark (on c) or of a lock pair (c NULL). */
static double one_run(client *c, long calls) {
    uint64_t t0 = now_ns();
    if (c) {
        for (long i = 0; i < calls; i++) {
            client_io_mark_write(c);
            __asm__ __volatile__("" ::: "memory"); /* each call's stores happen */
        }
    } else {
        for (long i = 0; i < calls; i++) {
            pthread_mutex_lock(&lock);
            __asm__ __volatile__("" ::: "memory");
            pthread_mutex_unlock(&lock);
        }
    }
    return (double)(now_ns() - t0) / (double)calls;
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    long calls = quick ? 2000000 : 20000000;
    const char *run_id = getenv("BENCH_RUN_ID");
    if (!run_id) run_id = "adhoc";

    static char buf[16384];
    client *c = calloc(1, sizeof(*c));
    reply_block *b = calloc(1, sizeof(*b) + 16);
    if (!c || !b) return 1;
    c->buf = buf;
    c->buf_size = sizeof(buf);
    c->bufpos = 100;
    b->size = 16;
    b->used = 7;

    const char *cases[] = {"mark, replies in buf", "mark, a block list", "mutex lock+unlock, uncontended"};
    for (int k = 0; k < 3; k++) {
        c->reply_head = c->reply_tail = k == 1 ? b : NULL;
        client *target = k < 2 ? c : NULL;
        one_run(target, calls / 10); /* warm-up, not kept */
        double ns[RUNS];
        for (int r = 0; r < RUNS; r++) {
            ns[r] = one_run(target, calls);
            printf("{\"bench\":\"mark_cost\",\"kind\":\"run\",\"run_id\":\"%s\",\"case\":\"%s\",\"run\":%d,"
                   "\"calls\":%ld,\"ns_per_call\":%.3f,\"quick\":%s}\n",
                   run_id, cases[k], r + 1, calls, ns[r], quick ? "true" : "false");
        }
        printf("{\"bench\":\"mark_cost\",\"kind\":\"summary\",\"run_id\":\"%s\",\"case\":\"%s\",\"runs\":%d,"
               "\"ns_per_call_median\":%.3f}\n",
               run_id, cases[k], RUNS, median(ns, RUNS));
    }
    free(b);
    free(c);
    return 0;
}
