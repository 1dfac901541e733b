/* idle_line.c — what the sleeping hand-shakes cost main, per submit.
 *
 * Step 4 benchmark. io_threads.c's hand-shakes put two read-modify-writes
 * on the hot path, whether anyone sleeps or not: main adds 0 to
 * idle.sleepers (seq_cst) after every job it puts on the shared inbox,
 * and a worker exchanges idle.main_asleep (seq_cst) after every round
 * that ran jobs. Idle workers also read idle.spin_ns once per 64 idle
 * rounds. This measures what those cost, and whether it pays to give the
 * words lines of their own, and what a GET's hand-offs cost main where
 * nobody sleeps. Five parts, variants alternated, RUNS runs:
 *
 * 1. alone: one thread, ns per operation on a line no other core
 *    touches: a relaxed load, the seq_cst add of 0, a seq_cst exchange.
 *    The price of the locked instruction itself.
 *
 * 2. lockstep: the hand-off rebuilt around soloist's own shared inbox
 *    (spmc_queue, linked from libsoloist.a), main on one CPU and one
 *    worker on another. Main waits until the worker has finished the
 *    previous job, then submits: enqueue, then the wake-side step, and
 *    only that is timed (the time-stamp counter, the timer's own cost
 *    taken off). The worker takes the job, exchanges main_asleep (timed
 *    too) and says it is done; with nothing to take it reads spin_ns
 *    once per 64 empty polls, as worker_main does. So every submit finds
 *    the worker's round just behind it, the case of a busy pool, and
 *    neither side's figure depends on when the scheduler lets the two
 *    run together. A run's figure is the mean of its jobs, the slowest 1%
 *    left out. Variants, nothing else different:
 *      shared  sleepers, main_asleep and spin_ns on one line (io_threads.c's
 *              idle struct until this benchmark's figures split it)
 *      split   sleepers alone on its line; main_asleep and spin_ns on
 *              another (io_threads.c's idle struct since)
 *      no-rmw  split, and main reads sleepers with a relaxed load instead
 *              of the add (not a correct hand-shake: the floor, the
 *              enqueue alone)
 *
 * 3. back to back: the same pair with no waiting and no work: main
 *    submits as fast as the inbox takes jobs. Main's CPU time per job
 *    (it waits on a full inbox, so this is the pair's throughput).
 *
 * 4. pool: the real io_threads_submit, io-threads 2 (one worker, active,
 *    a handler that does nothing), in lockstep as in part 2: main waits
 *    until the job before has finished and the worker has had a moment
 *    to send main its wake, then times one submit; the worker pinned to
 *    the second CPU and its idle spin set long, so that it never sleeps.
 *    What a submit costs main with io_threads.c's layout as built.
 *
 * 5. round trip: the real pool again, io-threads 2, and a GET's
 *    hand-offs as io_offload.c makes them (READ out, its result back,
 *    the command, WRITE and FREE_ARGV out, the WRITE's result back),
 *    50 clients in flight and main given 2 µs of its own work a
 *    request so that it, not the worker, is the bound: the regime of a
 *    server at its ceiling, where no thread sleeps. Main's CPU per
 *    request through the pool less the same steps on main alone (the
 *    worker parked), alternated; main's looks at an empty outbox are
 *    timed and taken off (waiting, not hand-off). The queues' and the
 *    moved cache lines' share of a hand-off; io_offload.c's own
 *    bookkeeping is not in it, nor the FREE_OBJ a SET over an existing
 *    value adds.
 *
 * Output: JSON lines on stdout with BENCH_RUN_ID (kind "run" and
 * "summary"), then generic finding rows F4.60-F4.65. --quick: fewer
 * jobs; --part alone, pair (parts 2 and 3), pool or roundtrip runs one
 * part. About 9 s on a quiet machine; an alarm ends it after 40 s (20 s
 * with --quick). Timing is x86's time-stamp counter, calibrated against CLOCK_MONOTONIC; elsewhere the
 * monotonic clock itself.
 *
 * Valkey anchor: none: Valkey's workers spin and never sleep, so it has
 * no such hand-shake (chapter 04, "Where soloist parts from Valkey").
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "bench_bound.h"
#include "io_threads.h"
#include "job.h"
#include "queue_spmc.h"

#define RUNS 7
#define STR(x) #x
#define XSTR(x) STR(x)
#define NONE (-2e9) /* print_run: no percentiles */

static const char *run_id = "adhoc";
static int quick;
static int ncpus, cpus[64];
static double ticks_per_ns = 1.0;
static double timer_ticks; /* an empty timed region, trimmed_ticks */

static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A timed region's ends: ordered against the instructions around them. */
static inline uint64_t tick_start(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    return clock_ns(CLOCK_MONOTONIC);
#endif
}

static inline uint64_t tick_end(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned aux;
    uint64_t t = __rdtscp(&aux);
    _mm_lfence();
    return t;
#else
    return clock_ns(CLOCK_MONOTONIC);
#endif
}

static void calibrate(void) {
    uint64_t n0 = clock_ns(CLOCK_MONOTONIC), t0 = tick_start();
    while (clock_ns(CLOCK_MONOTONIC) - n0 < 50000000) continue;
    uint64_t n1 = clock_ns(CLOCK_MONOTONIC), t1 = tick_end();
    ticks_per_ns = (double)(t1 - t0) / (double)(n1 - n0);
}

static void pin_to(int i) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[i % ncpus], &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n) {
    double s[RUNS];
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    return s[n / 2];
}

/* The mean of n samples in ticks, the slowest 1% left out (a sample
 * the scheduler or an interrupt cut into), and the timer's cost too. A
 * mean, not a median: some counters tick only every few ns (this one may
 * move in steps of 10 ns), and a mean of many samples sees through the
 * steps where a median sticks to one of them. */
static double trimmed_ticks(uint32_t *ticks, long n) {
    qsort(ticks, (size_t)n, sizeof(*ticks), cmp_u32);
    long keep = n - n / 100;
    double sum = 0;
    for (long i = 0; i < keep; i++) sum += ticks[i];
    return sum / (double)keep;
}

/* The last mean_ns's samples' 50th and 90th percentiles, ns. */
static double last_p50, last_p90;

static double mean_ns(uint32_t *ticks, long n) {
    double mean = (trimmed_ticks(ticks, n) - timer_ticks) / ticks_per_ns;
    last_p50 = ((double)ticks[n / 2] - timer_ticks) / ticks_per_ns;
    last_p90 = ((double)ticks[n - n / 10] - timer_ticks) / ticks_per_ns;
    return mean;
}

static uint32_t span(uint64_t t0, uint64_t t1) { return t1 - t0 > UINT32_MAX ? UINT32_MAX : (uint32_t)(t1 - t0); }

static void measure_timer(uint32_t *ticks, long n) {
    for (long i = 0; i < n; i++) {
        uint64_t t0 = tick_start();
        ticks[i] = span(t0, tick_end());
    }
    timer_ticks = trimmed_ticks(ticks, n);
}

/* ------------------------------------------------------------ 1. alone */

static struct { _Alignas(CACHE_LINE_SIZE) _Atomic int word; } solo;

enum solo_op { SOLO_LOAD, SOLO_ADD0, SOLO_XCHG, SOLO_OPS };
static const char *solo_name[] = {"relaxed load", "seq_cst add of 0", "seq_cst exchange"};

/* ns per operation, by the thread's CPU time over n of them. */
static double solo_run(enum solo_op op, long n) {
    int sink = 0;
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < n; i++) {
        if (op == SOLO_LOAD)
            sink += atomic_load_explicit(&solo.word, memory_order_relaxed);
        else if (op == SOLO_ADD0)
            sink += atomic_fetch_add_explicit(&solo.word, 0, memory_order_seq_cst);
        else
            sink += atomic_exchange_explicit(&solo.word, 0, memory_order_seq_cst);
        __asm__ __volatile__("" : "+r"(sink));
    }
    return (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / (double)n;
}

/* ---------------------------------------------------- 2. and 3. the pair */

enum variant { SHARED, SPLIT, NO_RMW, VARIANTS };
static const char *variant_name[] = {"shared", "split", "no-rmw"};

/* The idle words, in both layouts. */
static struct {
    _Alignas(CACHE_LINE_SIZE) _Atomic int sleepers;
    _Atomic int main_asleep;
    _Atomic uint64_t spin_ns;
} one_line;

static struct {
    _Alignas(CACHE_LINE_SIZE) _Atomic int sleepers;
    _Alignas(CACHE_LINE_SIZE) _Atomic int main_asleep;
    _Atomic uint64_t spin_ns;
} two_lines;

static spmc_queue inbox;

/* Worker -> main, a line of its own: jobs finished, and stop. */
static struct {
    _Alignas(CACHE_LINE_SIZE) _Atomic long done;
    _Atomic int stop;
} pair_sync;

typedef struct pair_cfg {
    enum variant v;
    bool lockstep;
    long n;
    uint32_t *xchg_ticks; /* the worker's exchanges, lockstep only */
} pair_cfg;

static void *pair_worker(void *arg) {
    const pair_cfg *cfg = arg;
    pin_to(1);
    _Atomic int *main_asleep = cfg->v == SHARED ? &one_line.main_asleep : &two_lines.main_asleep;
    _Atomic uint64_t *spin_ns = cfg->v == SHARED ? &one_line.spin_ns : &two_lines.spin_ns;
    uint64_t sink = 0, empty = 0;
    long mine = 0;
    while (!atomic_load_explicit(&pair_sync.stop, memory_order_relaxed)) {
        if (spmc_dequeue(&inbox)) {
            uint64_t t0 = tick_start();
            sink += (uint64_t)atomic_exchange_explicit(main_asleep, 0, memory_order_seq_cst);
            uint64_t t1 = tick_end();
            if (cfg->lockstep && mine < cfg->n) cfg->xchg_ticks[mine] = span(t0, t1);
            atomic_store_explicit(&pair_sync.done, ++mine, memory_order_release);
        } else if (++empty % 64 == 0) {
            sink += atomic_load_explicit(spin_ns, memory_order_relaxed);
        }
    }
    return (void *)(uintptr_t)(sink & 1);
}

/* Spins until the worker has finished `jobs` jobs, yielding now and
 * then (on a shared machine it may be waiting for a core). */
static void wait_done(long jobs) {
    for (unsigned spins = 0; atomic_load_explicit(&pair_sync.done, memory_order_acquire) < jobs; spins++)
        if (spins % 256 == 255) sched_yield();
}

/* Lockstep: the mean submit in ns (main_ticks: one per job). Back to
 * back: main's CPU ns per job. */
static double pair_run(const pair_cfg *cfg, uint32_t *main_ticks) {
    spmc_init(&inbox);
    atomic_store(&pair_sync.done, 0);
    atomic_store(&pair_sync.stop, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, pair_worker, (void *)cfg) != 0) abort();
    _Atomic int *sleepers = cfg->v == SHARED ? &one_line.sleepers : &two_lines.sleepers;
    int seen = 0;
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < cfg->n; i++) {
        if (cfg->lockstep) wait_done(i);
        uint64_t t0 = tick_start();
        while (!spmc_enqueue(&inbox, (uintptr_t)(i + 1))) sched_yield();
        if (cfg->v == NO_RMW)
            seen += atomic_load_explicit(sleepers, memory_order_relaxed);
        else
            seen += atomic_fetch_add_explicit(sleepers, 0, memory_order_seq_cst);
        uint64_t t1 = tick_end();
        if (cfg->lockstep) main_ticks[i] = span(t0, t1);
    }
    double cpu_ns = (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)cfg->n;
    wait_done(cfg->n);
    atomic_store(&pair_sync.stop, 1);
    pthread_join(t, NULL);
    if (seen != 0) abort(); /* nobody sleeps here */
    return cfg->lockstep ? mean_ns(main_ticks, cfg->n) : cpu_ns;
}

/* ------------------------------------------------------------- 4. pool */

static char payload[64] __attribute__((aligned(64)));

static void pool_job(void *p) { (void)p; }

/* Puts the pool's worker (the thread named io_thd_1) on the second CPU,
 * as part 2 does its worker. */
static void pin_pool_worker(void) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[64], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%.20s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(comm, sizeof comm, f) && strcmp(comm, "io_thd_1\n") == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpus[1 % ncpus], &set);
            sched_setaffinity(atoi(e->d_name), sizeof set, &set);
        }
        fclose(f);
    }
    if (d) closedir(d);
}

/* Parts 4 and 5: a pool of main and one worker, the worker on the second
 * CPU and its idle spin so long that it never sleeps here (a busy pool).
 * The handlers are set before. */
static void busy_pool_start(void) {
    io_threads_set_idle_spin_us(1000000);
    io_threads_init(2);
    pin_pool_worker();
}

/* The mean real submit in ns, each after the job before has finished
 * and the worker has had about a microsecond to send main its wake. */
static double pool_run(uint32_t *ticks, long n) {
    for (long i = 0; i < n; i++) {
        for (unsigned spins = 0; io_threads_pending() > 0; spins++)
            if (spins % 256 == 255) sched_yield();
        uint64_t w0 = clock_ns(CLOCK_MONOTONIC);
        while (clock_ns(CLOCK_MONOTONIC) - w0 < 1000) continue;
        uint64_t t0 = tick_start();
        bool ok = io_threads_submit(job_encode(payload, JOB_REQ_FREE_OBJ));
        uint64_t t1 = tick_end();
        if (!ok) abort(); /* the inbox is empty and the worker active */
        ticks[i] = span(t0, t1);
    }
    io_threads_drain();
    return mean_ns(ticks, n);
}

/* ------------------------------------------------------- 5. round trip */

/* A GET's hand-offs where no thread sleeps, as io_offload.c makes
 * them: READ out, its result back, the command run on what the
 * worker left, WRITE out and the argument vector handed back to the
 * worker that parsed it (FREE_ARGV, its private inbox, committed once a
 * turn), the WRITE's result back. (A SET over an existing value also
 * hands the old value to a worker to free, FREE_OBJ: not here.)
 * RT_WINDOW clients always in flight. A client is RT_LINES cache lines
 * and its argument vector's, which the worker writes and main then
 * reads, standing in for the query buffer, argv and reply a real worker
 * fills: those lines moving between the cores is part of the hand-off.
 * The handlers make no system call, so the worker keeps up and main is
 * the bound; still, main at times finds the outbox empty, when the
 * clients it has just handed out are all at the worker, and those looks
 * are waiting, timed and taken off. "inline" runs the same steps, the
 * same lines written and read, on main alone with the worker parked:
 * the pool's cost over it is the hand-off. */

#define RT_WINDOW 50 /* redis-benchmark's clients */
#define RT_LINES 4

typedef struct {
    _Alignas(CACHE_LINE_SIZE) uint64_t line[RT_LINES][CACHE_LINE_SIZE / sizeof(uint64_t)];
    _Alignas(CACHE_LINE_SIZE) uint64_t argv[CACHE_LINE_SIZE / sizeof(uint64_t)];
} rt_client;

static rt_client rt_clients[RT_WINDOW];
static uint64_t rt_sink;

static void rt_fill(rt_client *c) { /* the worker's read and parse */
    for (int i = 0; i < RT_LINES; i++) c->line[i][0]++;
    c->argv[0]++;
}

/* Main's own work a request besides these lines: long enough that main,
 * not the worker, is the bound, as at the ceiling the model reads (main
 * at io-threads 4 does 4 to 9 µs of its own a request, row F4.100). The
 * same in both variants, so it cancels. */
#define RT_WORK_NS 2000

static void rt_run(rt_client *c) { /* main's command: reads what was parsed, appends a reply */
    uint64_t until = tick_start() + (uint64_t)(RT_WORK_NS * ticks_per_ns);
    while (tick_start() < until) continue;
    uint64_t sum = 0;
    for (int i = 0; i < RT_LINES; i++) sum += c->line[i][0];
    c->line[RT_LINES - 1][1] = sum;
    rt_sink += c->argv[0];
}

static void rt_send(rt_client *c) { /* the worker's write */
    rt_sink += c->line[RT_LINES - 1][1];
    c->line[0][2]++;
}

static void rt_free(uint64_t *argv) { argv[1]++; }

static void rt_read_job(void *p) {
    rt_fill(p);
    io_threads_send_result(job_encode(p, JOB_RES_READ_CLIENT));
}

static void rt_write_job(void *p) {
    rt_send(p);
    io_threads_send_result(job_encode(p, JOB_RES_WRITE_CLIENT));
}

static void rt_free_job(void *p) { rt_free(p); }

static long rt_empty, rt_looks;

/* Submits job. The inboxes hold thousands of jobs and at most three per
 * client are out, so a refusal means the worker is not active: the run
 * would measure main alone, and it stops instead. */
static void rt_submit(rt_client *c, unsigned type) {
    bool ok = type == JOB_REQ_FREE_ARGV ? io_threads_submit_to(1, job_encode(c->argv, type))
                                        : io_threads_submit(job_encode(c, type));
    if (!ok) abort();
}

/* Main's CPU ns per request through the pool, n requests. */
static double rt_pool_run(long n) {
    job_word got[16];
    long done = 0, started = 0;
    uint64_t empty_ticks = 0;
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < RT_WINDOW; i++, started++) rt_submit(&rt_clients[i], JOB_REQ_READ_CLIENT);
    io_threads_commit();
    while (done < n) {
        uint64_t look = tick_start();
        size_t k = io_threads_take_results(got, 16);
        if (k == 0) { /* waiting, not hand-off: timed, and taken off below */
            rt_empty++;
            empty_ticks += tick_end() - look;
            continue;
        }
        rt_looks++;
        for (size_t i = 0; i < k; i++) {
            rt_client *c = job_ptr(got[i]);
            if (job_type(got[i]) == JOB_RES_READ_CLIENT) {
                rt_run(c);
                rt_submit(c, JOB_REQ_WRITE_CLIENT);
                rt_submit(c, JOB_REQ_FREE_ARGV);
            } else { /* its WRITE is back: the request is done, the client's next one goes out */
                done++;
                if (started < n) {
                    started++;
                    rt_submit(c, JOB_REQ_READ_CLIENT);
                }
            }
        }
        io_threads_commit();
    }
    uint64_t t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    io_threads_drain();
    return ((double)(t1 - t0) - (double)empty_ticks / ticks_per_ns) / (double)n;
}

/* The same steps on main alone, clients in turn. */
static double rt_inline_run(long n) {
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long r = 0; r < n; r++) {
        rt_client *c = &rt_clients[r % RT_WINDOW];
        rt_fill(c);
        rt_run(c);
        rt_send(c);
        rt_free(c->argv);
    }
    return (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / (double)n;
}

/* -------------------------------------------------------------- output */

/* One run's line; p50 and p90 (of a timed part's samples) when p50 >= -1e9. */
static void print_run(const char *part, const char *variant, const char *what, int run, long n, double ns, double p50,
                      double p90) {
    char pct[96] = "";
    if (p50 >= -1e9) snprintf(pct, sizeof pct, "\"p50_ns\":%.3f,\"p90_ns\":%.3f,", p50, p90);
    printf("{\"bench\":\"idle_line\",\"kind\":\"run\",\"run_id\":\"%s\",\"part\":\"%s\",\"variant\":\"%s\","
           "\"what\":\"%s\",\"run\":%d,\"jobs\":%ld,\"ns\":%.3f,%s\"ticks_per_ns\":%.4f,\"timer_ticks\":%.1f,"
           "\"cpus\":%d,\"quick\":%s}\n",
           run_id, part, variant, what, run, n, ns, pct, ticks_per_ns, timer_ticks, ncpus, quick ? "true" : "false");
}

static void print_summary(const char *part, const char *variant, const char *what, const double *ns) {
    printf("{\"bench\":\"idle_line\",\"kind\":\"summary\",\"run_id\":\"%s\",\"part\":\"%s\",\"variant\":\"%s\","
           "\"what\":\"%s\",\"runs\":%d,\"ns_median\":%.3f}\n",
           run_id, part, variant, what, RUNS, median(ns, RUNS));
}

/* "runs lo-hi" of a side. */
static void spread(char *out, size_t len, const double *v) {
    double lo = v[0], hi = v[0];
    for (int i = 1; i < RUNS; i++) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    snprintf(out, len, "runs %.1f–%.1f", lo, hi);
}

/* In how many of the alternated runs a was above b. */
static int runs_above(const double *a, const double *b) {
    int n = 0;
    for (int i = 0; i < RUNS; i++) n += a[i] > b[i];
    return n;
}

#if defined(__x86_64__) || defined(__i386__)
#define TIMED "the time-stamp counter around each submit, a run's mean less its slowest 1%"
#else
#define TIMED "CLOCK_MONOTONIC around each submit, a run's mean less its slowest 1%"
#endif

static void finding(const char *id, const char *claim, const char *figure, const char *config) {
    printf("{\"finding\":true,\"id\":\"%s\",\"claim\":\"%s\",\"figure\":\"%s\",\"command\":\"make findings "
           "BENCH=idle_line%s\",\"config\":{%s,\"quick\":%s,\"runs\":%d,\"cpus\":%d}}\n",
           id, claim, figure, quick ? " QUICK=1" : "", config, quick ? "true" : "false", RUNS, ncpus);
}

/* Part 2's and part 3's rows. */
static void pair_rows(double lock[VARIANTS][RUNS], double xchg[VARIANTS][RUNS], double b2b[VARIANTS][RUNS]) {
    char fig[640], s1[48], s2[48], s3[48];
    const char *cfg = "\"part\":\"lockstep\",\"workers\":1,\"inbox\":\"spmc_queue (libsoloist.a)\","
                      "\"timing\":\"" TIMED "\"";
    spread(s1, sizeof s1, lock[SHARED]);
    spread(s2, sizeof s2, lock[SPLIT]);
    spread(s3, sizeof s3, lock[NO_RMW]);
    double sh = median(lock[SHARED], RUNS), sp = median(lock[SPLIT], RUNS), no = median(lock[NO_RMW], RUNS);
    snprintf(fig, sizeof fig,
             "split **%.1f ns**, shared **%.1f ns**, no RMW %.1f ns per submit (%s; %s; %s): the add "
             "after the enqueue %.1f ns; one line against two %.1f ns (shared above split in %d of %d runs)",
             sp, sh, no, s2, s1, s3, sp - no, sh - sp, runs_above(lock[SHARED], lock[SPLIT]), RUNS);
    finding("F4.61",
            "main's submit (enqueue, then the add of 0 to sleepers) right after the worker's round, the idle "
            "words on one line against two: ns per submit",
            fig, cfg);
    spread(s1, sizeof s1, xchg[SHARED]);
    spread(s2, sizeof s2, xchg[SPLIT]);
    sh = median(xchg[SHARED], RUNS), sp = median(xchg[SPLIT], RUNS);
    snprintf(fig, sizeof fig,
             "shared **%.1f ns**, split **%.1f ns** per exchange (%s; %s; shared above split in %d "
             "of %d runs)",
             sh, sp, s1, s2, runs_above(xchg[SHARED], xchg[SPLIT]), RUNS);
    finding("F4.62",
            "the worker's exchange on main_asleep after a round, right after main's submit, the idle words on "
            "one line against two: ns per exchange",
            fig, cfg);
    spread(s1, sizeof s1, b2b[SHARED]);
    spread(s2, sizeof s2, b2b[SPLIT]);
    spread(s3, sizeof s3, b2b[NO_RMW]);
    sh = median(b2b[SHARED], RUNS), sp = median(b2b[SPLIT], RUNS), no = median(b2b[NO_RMW], RUNS);
    snprintf(fig, sizeof fig,
             "split **%.1f ns**, shared **%.1f ns**, no RMW %.1f ns of main's CPU per job (%s; %s; "
             "%s): one line against two %.1f ns (shared above split in %d of %d runs)",
             sp, sh, no, s2, s1, s3, sh - sp, runs_above(b2b[SHARED], b2b[SPLIT]), RUNS);
    finding("F4.63",
            "the hand-off back to back (no waiting: main may wait on a full inbox), the idle words on one "
            "line against two: main's CPU per job",
            fig,
            "\"part\":\"back to back\",\"workers\":1,\"inbox\":\"spmc_queue (libsoloist.a)\","
            "\"timing\":\"the thread's CPU time over the run\"");
}

/* Part 1 and its row. */
static void run_alone(void) {
    long solo_n = quick ? 1000000 : 5000000;
    double solo_ns[SOLO_OPS][RUNS];
    for (int op = 0; op < SOLO_OPS; op++) solo_run(op, solo_n / 10);
    for (int r = 0; r < RUNS; r++)
        for (int op = 0; op < SOLO_OPS; op++) {
            solo_ns[op][r] = solo_run(op, solo_n);
            print_run("alone", solo_name[op], "CPU ns per operation", r + 1, solo_n, solo_ns[op][r], NONE, 0);
        }
    for (int op = 0; op < SOLO_OPS; op++) print_summary("alone", solo_name[op], "CPU ns per operation", solo_ns[op]);
    char fig[512], s1[48], s2[48];
    spread(s1, sizeof s1, solo_ns[SOLO_ADD0]);
    spread(s2, sizeof s2, solo_ns[SOLO_LOAD]);
    snprintf(fig, sizeof fig,
             "**%.1f ns** per seq_cst add of 0 (%s), %.1f ns per seq_cst exchange, against %.2f "
             "ns per relaxed load (%s)",
             median(solo_ns[SOLO_ADD0], RUNS), s1, median(solo_ns[SOLO_XCHG], RUNS), median(solo_ns[SOLO_LOAD], RUNS),
             s2);
    finding("F4.60", "the hand-shakes' read-modify-writes on a line no other core touches: ns per operation", fig,
            "\"part\":\"alone\",\"threads\":1,\"timing\":\"the thread's CPU time over the run\"");
}

/* Parts 2 and 3, alternated, and their rows. */
static void run_pair(uint32_t *main_ticks, uint32_t *xchg_ticks, long n) {
    double lock[VARIANTS][RUNS], xchg[VARIANTS][RUNS], b2b[VARIANTS][RUNS];
    long b2b_n = quick ? 50000 : 200000;
    for (int r = 0; r < RUNS; r++)
        for (int k = 0; k < VARIANTS; k++) {
            int v = (k + r) % VARIANTS; /* the order turns each run */
            pair_cfg cfg = {(enum variant)v, true, n, xchg_ticks};
            lock[v][r] = pair_run(&cfg, main_ticks);
            print_run("lockstep", variant_name[v], "mean ns per submit", r + 1, n, lock[v][r], last_p50, last_p90);
            xchg[v][r] = mean_ns(xchg_ticks, n);
            print_run("lockstep", variant_name[v], "mean ns per worker exchange", r + 1, n, xchg[v][r], last_p50,
                      last_p90);
            pair_cfg b = {(enum variant)v, false, b2b_n, NULL};
            b2b[v][r] = pair_run(&b, NULL);
            print_run("back to back", variant_name[v], "main's CPU ns per job", r + 1, b2b_n, b2b[v][r], NONE, 0);
        }
    for (int v = 0; v < VARIANTS; v++) {
        print_summary("lockstep", variant_name[v], "mean ns per submit", lock[v]);
        print_summary("lockstep", variant_name[v], "mean ns per worker exchange", xchg[v]);
        print_summary("back to back", variant_name[v], "main's CPU ns per job", b2b[v]);
    }
    pair_rows(lock, xchg, b2b);
}

/* Part 4 and its row. */
static void run_pool(uint32_t *ticks, long n) {
    io_threads_set_handler(JOB_REQ_FREE_OBJ, pool_job);
    busy_pool_start();
    io_threads_set_active(2);
    double pool_ns[RUNS];
    for (int r = 0; r < RUNS; r++) {
        pool_ns[r] = pool_run(ticks, n);
        print_run("pool", "as built", "mean ns per io_threads_submit", r + 1, n, pool_ns[r], last_p50, last_p90);
    }
    print_summary("pool", "as built", "mean ns per io_threads_submit", pool_ns);
    io_threads_shutdown();
    char fig[256], s1[48];
    spread(s1, sizeof s1, pool_ns);
    snprintf(fig, sizeof fig, "**%.1f ns** per submit (%s)", median(pool_ns, RUNS), s1);
    finding("F4.64",
            "a real io_threads_submit right after the worker's round, io-threads 2, io_threads.c as built: "
            "ns per submit",
            fig, "\"part\":\"pool\",\"threads\":2,\"handler\":\"empty\",\"timing\":\"" TIMED "\"");
}

/* Part 5 and its row: pool and inline alternated, RUNS runs each. */
static void run_roundtrip(long n) {
    io_threads_set_handler(JOB_REQ_READ_CLIENT, rt_read_job);
    io_threads_set_handler(JOB_REQ_WRITE_CLIENT, rt_write_job);
    io_threads_set_handler(JOB_REQ_FREE_ARGV, rt_free_job);
    busy_pool_start();
    double pool[RUNS], alone[RUNS], over[RUNS];
    for (int r = 0; r < RUNS; r++) {
        io_threads_set_active(1); /* parked: no spinning neighbour beside main's own run */
        alone[r] = rt_inline_run(n);
        io_threads_set_active(2);
        pool[r] = rt_pool_run(n);
        over[r] = pool[r] - alone[r];
        print_run("round trip", "inline", "main's CPU ns per request", r + 1, n, alone[r], NONE, NONE);
        print_run("round trip", "pool", "main's CPU ns per request", r + 1, n, pool[r], NONE, NONE);
    }
    print_summary("round trip", "inline", "main's CPU ns per request", alone);
    print_summary("round trip", "pool", "main's CPU ns per request", pool);
    print_summary("round trip", "hand-off", "main's CPU ns per request, pool less inline", over);
    io_threads_shutdown();
    char fig[400], s1[48], s2[48], s3[48];
    spread(s1, sizeof s1, over);
    spread(s2, sizeof s2, pool);
    spread(s3, sizeof s3, alone);
    snprintf(fig, sizeof fig,
             "**%.1f ns** a request (%s): through the pool %.1f ns (%s), main alone %.1f ns (%s); "
             "results a look %.1f; empty looks at the outbox %.2f a request, their time taken off",
             median(over, RUNS), s1, median(pool, RUNS), s2, median(alone, RUNS), s3,
             2.0 * (double)n * RUNS / (double)rt_looks, (double)rt_empty / ((double)n * RUNS));
    finding("F4.65",
            "a GET's hand-offs where no thread sleeps (READ out and back, the command on the lines "
            "the worker wrote, WRITE out and back, FREE_ARGV to the worker's own inbox): main's CPU per "
            "request through the pool less main doing the same steps alone, 50 clients in flight, io-threads 2",
            fig,
            "\"part\":\"round trip\",\"threads\":2,\"clients\":" XSTR(RT_WINDOW) ",\"lines\":" XSTR(
                RT_LINES) ",\"timing\":\"main's thread CPU time over each run, runs alternated\"");
}

/* idle_line [--quick] [--part alone|pair|pool|roundtrip] */
int main(int argc, char **argv) {
    const char *part = "all";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--part") == 0 && i + 1 < argc)
            part = argv[++i];
    }
    if (getenv("BENCH_RUN_ID")) run_id = getenv("BENCH_RUN_ID");
    bench_bound_set("idle_line", quick ? 20 : 40);
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    for (int c = 0; c < CPU_SETSIZE && ncpus < 64; c++)
        if (CPU_ISSET(c, &set)) cpus[ncpus++] = c;
    pin_to(0);
    calibrate();
    long n = quick ? 4000 : 10000;
    uint32_t *main_ticks = malloc(sizeof(uint32_t) * (size_t)n), *xchg_ticks = malloc(sizeof(uint32_t) * (size_t)n);
    if (!main_ticks || !xchg_ticks) return 1;
    measure_timer(main_ticks, n);
    bool all = strcmp(part, "all") == 0;
    if (all || strcmp(part, "alone") == 0) run_alone();
    if (all || strcmp(part, "pair") == 0) run_pair(main_ticks, xchg_ticks, n);
    if (all || strcmp(part, "pool") == 0) run_pool(main_ticks, n);
    if (all || strcmp(part, "roundtrip") == 0) run_roundtrip(quick ? 50000 : 200000);
    free(main_ticks);
    free(xchg_ticks);
    return 0;
}
