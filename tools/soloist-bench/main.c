/* main.c — soloist-bench: start the workers, show progress, report.
 *
 * soloist-bench, the load generator every serving benchmark in
 * soloist uses (steps 0, 5–7). Owns: the main thread, which parses the
 * flags, resolves the host, writes the value patterns, starts one worker
 * thread per -t, releases them all at one start time once they are
 * connected and prefilled, prints a progress line on stderr every second,
 * joins them, merges their statistics and prints the report.
 * Anchors: memtier_benchmark, wrk2 (its README, Gil Tene 2014), Momento's
 * valkey-lab/cachecannon; valkey src/valkey-benchmark.c is
 * the closed-loop tool this one is compared against (bench/loadgen_sanity.sh).
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "report.h"
#include "worker.h"
#include "zmalloc.h"

/* Written by the SIGINT handler, read by the main loop. A lock-free
 * atomic is async-signal-safe; relaxed, as it publishes nothing. */
static _Atomic int interrupted;

static void on_sigint(int sig) {
    (void)sig;
    atomic_store_explicit(&interrupted, 1, memory_order_relaxed);
}

static void sleep_ns(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
    nanosleep(&ts, NULL);
}

static int resolve(sb_shared *sh, const sb_run_cfg *cfg) {
    struct addrinfo hints, *res;
    char port[16];
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%d", cfg->port);
    int rc = getaddrinfo(cfg->host, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "soloist-bench: cannot resolve %s: %s\n", cfg->host, gai_strerror(rc));
        return -1;
    }
    memcpy(&sh->addr, res->ai_addr, res->ai_addrlen);
    sh->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

typedef struct progress_state {
    uint64_t last_ns, done, rx, tx;
} progress_state;

static void progress_line(const sb_run_cfg *cfg, sb_worker *ws, progress_state *ps, uint64_t now, uint64_t t0) {
    uint64_t done = 0, errs = 0, rx = 0, tx = 0, infl = 0, filled = 0;
    for (int i = 0; i < cfg->threads; i++) {
        /* Relaxed loads of the workers' relaxed stores (worker.c
         * publish_progress): approximate, and that is all a progress
         * line needs. */
        done += atomic_load_explicit(&ws[i].prog.done, memory_order_relaxed);
        errs += atomic_load_explicit(&ws[i].prog.errors, memory_order_relaxed);
        rx += atomic_load_explicit(&ws[i].prog.bytes_rx, memory_order_relaxed);
        tx += atomic_load_explicit(&ws[i].prog.bytes_tx, memory_order_relaxed);
        infl += atomic_load_explicit(&ws[i].prog.inflight, memory_order_relaxed);
        filled += atomic_load_explicit(&ws[i].prog.prefilled, memory_order_relaxed);
    }
    double dt = (double)(now - ps->last_ns) / 1e9;
    if (dt <= 0) dt = 1e-9;
    if (!t0) {
        uint64_t keys = 0;
        for (int k = 0; k < cfg->nclasses; k++) keys += cfg->classes[k].keys;
        fprintf(stderr, "[prefill] %llu of %llu keys written\n", (unsigned long long)filled, (unsigned long long)keys);
        return;
    }
    /* The line covers the last second: name the phase at its middle. */
    uint64_t mid = ps->last_ns + (now - ps->last_ns) / 2, warm_end = t0 + cfg->warmup_ns;
    const char *phase = mid < warm_end ? "warmup" : (!cfg->duration_ns || mid < warm_end + cfg->duration_ns) ? "run" : "drain";
    fprintf(stderr, "[%6.1fs] %-6s %9.0f req/s  in %8.2f MB/s  out %8.2f MB/s  errors %llu  in flight %llu\n",
            (double)(now - t0) / 1e9, phase, (double)(done - ps->done) / dt, (double)(rx - ps->rx) / dt / 1048576.0,
            (double)(tx - ps->tx) / dt / 1048576.0, (unsigned long long)errs, (unsigned long long)infl);
    ps->done = done;
    ps->rx = rx;
    ps->tx = tx;
}

/* Poll `counter` until it reaches `target`, printing progress each second. */
static void wait_for(_Atomic int *counter, int target, sb_shared *sh, sb_worker *ws, progress_state *ps, uint64_t t0) {
    const sb_run_cfg *cfg = sh->cfg;
    uint64_t next = sb_now_ns() + 1000000000ULL;
    /* Acquire: pairs with the workers' release increments. */
    while (atomic_load_explicit(counter, memory_order_acquire) < target) {
        sleep_ns(10000000ULL);
        if (atomic_load_explicit(&interrupted, memory_order_relaxed))
            atomic_store_explicit(&sh->stop, 1, memory_order_relaxed);
        uint64_t now = sb_now_ns();
        if (now >= next) {
            if (!cfg->quiet) progress_line(cfg, ws, ps, now, t0);
            ps->last_ns = now;
            next += 1000000000ULL;
        }
    }
}

int main(int argc, char **argv) {
    static sb_run_cfg cfg;
    static sb_shared sh;
    char err[512];
    int rc = sb_config_parse(&cfg, argc, argv, err, sizeof(err));
    if (rc == 1) return 0;
    if (rc < 0) {
        fprintf(stderr, "soloist-bench: %s\n", err);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a closed socket is an error to count, not a death */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    sh.cfg = &cfg;
    if (resolve(&sh, &cfg) < 0) return 1;
    for (int k = 0; k < cfg.nclasses; k++) cfg.classes[k].pattern = sb_value_pattern(cfg.classes[k].value_bytes);

    sb_worker *ws = zcalloc(sizeof(sb_worker) * (size_t)cfg.threads);
    for (int i = 0; i < cfg.threads; i++) sb_worker_init(&ws[i], i, &sh);
    if (!cfg.quiet)
        fprintf(stderr, "soloist-bench: %s:%d, %d thread(s), %d class(es), %s%s\n", cfg.host, cfg.port, cfg.threads,
                cfg.nclasses, cfg.prefill ? "prefill, " : "", cfg.duration_ns ? "time-bounded" : "count-bounded");
    for (int i = 0; i < cfg.threads; i++) {
        if (pthread_create(&ws[i].thread, NULL, sb_worker_main, &ws[i]) != 0) {
            fprintf(stderr, "soloist-bench: cannot start thread %d\n", i);
            return 1;
        }
    }
    progress_state ps = {sb_now_ns(), 0, 0, 0};
    wait_for(&sh.ready, cfg.threads, &sh, ws, &ps, 0);
    /* Every worker is connected and prefilled: give them one start time,
     * a millisecond ahead so they all begin on time. Release: pairs with
     * the workers' acquire loads of t0. */
    uint64_t t0 = sb_now_ns() + 1000000ULL;
    atomic_store_explicit(&sh.t0, t0, memory_order_release);
    /* Rates on the progress line start from here, not from the prefill. */
    for (int i = 0; i < cfg.threads; i++) {
        ps.done += atomic_load_explicit(&ws[i].prog.done, memory_order_relaxed);
        ps.rx += atomic_load_explicit(&ws[i].prog.bytes_rx, memory_order_relaxed);
        ps.tx += atomic_load_explicit(&ws[i].prog.bytes_tx, memory_order_relaxed);
    }
    ps.last_ns = t0;
    wait_for(&sh.finished, cfg.threads, &sh, ws, &ps, t0);
    uint64_t t_end = sb_now_ns();
    for (int i = 0; i < cfg.threads; i++) pthread_join(ws[i].thread, NULL);

    int failed = 0;
    for (int i = 0; i < cfg.threads; i++)
        if (ws[i].failed) {
            fprintf(stderr, "soloist-bench: thread %d: %s\n", i, ws[i].error);
            failed = 1;
        }
    if (failed) return 1;

    sb_report r;
    sb_report_init(&r, &cfg);
    uint64_t end_ns = 0, warm_end = t0 + cfg.warmup_ns;
    for (int i = 0; i < cfg.threads; i++) {
        for (int k = 0; k < cfg.nclasses; k++) sb_stats_merge(&r.cls[k], &ws[i].cls[k].st);
        sb_hdr_merge(&r.wake, &ws[i].wake);
        r.cpu_s += (double)ws[i].cpu_ns / 1e9;
        /* Rates are over the window: until the workers stopped sending
         * (time-bounded), or until the last reply (count-bounded). */
        uint64_t e = cfg.duration_ns ? ws[i].stopped_ns : 0;
        if (e > end_ns) end_ns = e;
    }
    if (!cfg.duration_ns)
        for (int k = 0; k < cfg.nclasses; k++)
            if (r.cls[k].last_done_ns > end_ns) end_ns = r.cls[k].last_done_ns;
    r.measured_s = end_ns > warm_end ? (double)(end_ns - warm_end) / 1e9 : 0.0;
    r.wall_s = (double)(t_end - t0) / 1e9;
    r.interrupted = atomic_load_explicit(&interrupted, memory_order_relaxed);
    if (cfg.json) sb_report_print_json(&r, stdout);
    else sb_report_print_text(&r, stdout);
    fflush(stdout);

    sb_report_free(&r);
    for (int i = 0; i < cfg.threads; i++) sb_worker_free(&ws[i]);
    zfree(ws);
    for (int k = 0; k < cfg.nclasses; k++) zfree(cfg.classes[k].pattern);
    return 0;
}
