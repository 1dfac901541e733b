/* score_print.c — what printing a sorted-set score costs.
 *
 * Step 8 benchmark. Every score in a WITHSCORES reply, and every RESP3
 * double, goes out through util_d_to_string (src/util.c, linked from
 * libsoloist.a): the shortest decimal that reads back as the same double,
 * as Valkey prints it. This times it per call on three kinds of score,
 * beside two peers on the same inputs in the same run:
 *
 *   %.17g    snprintf(buf, n, "%.17g", v): what Redis 7.0 prints (always
 *            17 significant digits, so 1.1 is "1.1000000000000001");
 *   search   the plainest statement of the shortest form: try 1 to 17
 *            digits with snprintf("%.*e") and keep the first that strtod
 *            reads back (how util_d_to_string was first written).
 *
 * The kinds: integers 0-999 (the scores of bench/zset_ranges.py's set),
 * two-decimal scores (i / 100 + 0.25), and doubles that need 17 digits
 * (1 / (i + 3)). Each figure: ns per call, the median of RUNS runs of
 * CALLS calls over 1,000 inputs, on the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID), so a busy machine slows the run more than
 * it moves the figure. The call is not inlined (another object file, no
 * LTO), so a figure includes the call.
 *
 * Output: JSON lines on stdout with BENCH_RUN_ID (kind "run"), then
 * finding rows F8.50-F8.51. --quick: fewer calls. Bounded: 3 kinds x 3
 * printers x RUNS x CALLS, an alarm at 20 s.
 *
 * Valkey anchor: src/util.c's double formatting (fpconv_dtoa since
 * Valkey 8.0) and src/networking.c addReplyDouble; measured, not mirrored.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_bound.h"
#include "util.h"

#define RUNS 7
#define N 1000

enum { K_INT, K_SHORT, K_LONG, KINDS };
enum { P_SOLOIST, P_17G, P_SEARCH, PRINTERS };
static const char *const kind_names[KINDS] = {"integers 0-999", "two decimals", "17 digits"};
static const char *const printer_names[PRINTERS] = {"util_d_to_string", "%.17g", "search"};
static const char *run_id = "";
static int quick;

static uint64_t cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static size_t print_17g(char *buf, size_t len, double v) { return (size_t)snprintf(buf, len, "%.17g", v); }

static size_t print_search(char *buf, size_t len, double v) {
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(buf, len, "%.*e", digits - 1, v);
        if (strtod(buf, NULL) == v) break;
    }
    return (size_t)snprintf(buf, len, "%.*e", digits - 1, v);
}

typedef size_t printer(char *buf, size_t len, double v);
static printer *const printers[PRINTERS] = {util_d_to_string, print_17g, print_search};

/* ns per call of p over in[0..N), calls times through the array. */
static double time_run(printer *p, const double *in, long calls) {
    char buf[64];
    volatile size_t sink = 0;
    uint64_t t0 = cpu_ns();
    for (long r = 0; r < calls / N; r++)
        for (int i = 0; i < N; i++) sink += p(buf, sizeof buf, in[i]);
    (void)sink;
    return (double)(cpu_ns() - t0) / (double)(calls / N * N);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *xs, int n) {
    double s[RUNS];
    memcpy(s, xs, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    return s[n / 2];
}

static void finding(const char *id, const char *claim, const char *figure) {
    printf("{\"finding\":true,\"id\":\"%s\",\"claim\":\"%s\",\"figure\":\"%s\",\"command\":\"make findings "
           "BENCH=score_print%s\",\"config\":{\"quick\":%s,\"runs\":%d,\"inputs\":%d,\"clock\":\"thread CPU time\","
           "\"peer\":\"snprintf %%.17g (Redis 7.0's form)\"}}\n",
           id, claim, figure, quick ? " QUICK=1" : "", quick ? "true" : "false", RUNS, N);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
    if (getenv("BENCH_RUN_ID")) run_id = getenv("BENCH_RUN_ID");
    bench_bound_set("score_print", 20);
    static double in[KINDS][N];
    for (int i = 0; i < N; i++) {
        in[K_INT][i] = i;
        in[K_SHORT][i] = i / 100.0 + 0.25;
        in[K_LONG][i] = 1.0 / (i + 3);
    }
    long calls = quick ? 20000 : 100000;
    double ns[KINDS][PRINTERS][RUNS];
    for (int r = 0; r < RUNS; r++) /* printers alternated within each run */
        for (int k = 0; k < KINDS; k++)
            for (int p = 0; p < PRINTERS; p++) {
                ns[k][p][r] = time_run(printers[p], in[k], p == P_SEARCH ? calls / 4 : calls);
                printf("{\"bench\":\"score_print\",\"kind\":\"run\",\"run_id\":\"%s\",\"scores\":\"%s\","
                       "\"printer\":\"%s\",\"run\":%d,\"ns_per_call\":%.2f}\n",
                       run_id, kind_names[k], printer_names[p], r, ns[k][p][r]);
            }
    double med[KINDS][PRINTERS];
    for (int k = 0; k < KINDS; k++)
        for (int p = 0; p < PRINTERS; p++) med[k][p] = median(ns[k][p], RUNS);
    char fig[512];
    int o = 0;
    for (int k = 0; k < KINDS; k++)
        o += snprintf(fig + o, sizeof fig - (size_t)o, "%s%s: %.0f ns (%%.17g %.0f, search %.0f; %.2f× %%.17g)",
                      k ? "; " : "", kind_names[k], med[k][P_SOLOIST], med[k][P_17G], med[k][P_SEARCH],
                      med[k][P_SOLOIST] / med[k][P_17G]);
    finding("F8.50",
            "ns per score printed as the shortest round-trip decimal (util_d_to_string), beside "
            "snprintf %.17g and the digit-by-digit search, medians of 7 runs",
            fig);
    double worst = med[K_INT][P_SOLOIST] > med[K_SHORT][P_SOLOIST] ? med[K_INT][P_SOLOIST] : med[K_SHORT][P_SOLOIST];
    snprintf(fig, sizeof fig, "%s (integers %.0f ns, two decimals %.0f ns; 17 digits %.0f ns)",
             worst < 100 ? "met" : "not met", med[K_INT][P_SOLOIST], med[K_SHORT][P_SOLOIST], med[K_LONG][P_SOLOIST]);
    finding("F8.51", "target: integer and short-decimal scores printed in tens of nanoseconds (under 100 ns)", fig);
    return 0;
}
