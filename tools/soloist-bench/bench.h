/* bench.h — what a soloist-bench run is asked to do, and what it counts.
 *
 * soloist-bench. Owns: the run's configuration (written by the
 * main thread while parsing flags, before any worker starts; read-only
 * afterwards, published to the workers by pthread_create) and the
 * per-class statistics each worker keeps (owned by that worker until it
 * is joined, then merged by the main thread).
 *
 * A run is one or more traffic classes. Each class has its own
 * connections, pipeline depth, rate (0 = closed loop), arrivals, key
 * space, value size and GET:SET mix, and gets its own latency report —
 * the shape the noisy-neighbour test needs (1 KB GETs beside a few
 * 10 MB GETs). Without --class, the flags make one class.
 */
#ifndef SOLOIST_BENCH_BENCH_H
#define SOLOIST_BENCH_BENCH_H
#include <stddef.h>
#include <stdint.h>

#include "hdr.h"
#include "schedule.h"

#define SB_MAX_CLASSES 16
#define SB_MAX_THREADS 256

typedef enum { SB_DIST_UNIFORM = 0, SB_DIST_ZIPF = 1 } sb_dist;

typedef struct sb_class_cfg {
    char name[32];
    char tag;           /* first byte of this class's keys: tag=, else 'a' + index */
    int conns;          /* over all threads */
    int pipeline;       /* requests in flight per connection */
    int batch;          /* closed loop: send P, wait for all P (redis-benchmark -P) */
    double rate;        /* requests/s for the whole class; 0: closed loop */
    sb_arrival arrival;
    uint64_t keys;
    sb_dist dist;
    double zipf_s;
    unsigned get_w, set_w; /* -r GET:SET weights */
    size_t value_bytes;
    int key_size;
    uint64_t count;     /* measured requests to make; 0: bounded by time */
    char *pattern;      /* value_bytes of pattern, shared read-only */
} sb_class_cfg;

typedef struct sb_run_cfg {
    char host[256];
    int port;
    int threads;
    int cpus[SB_MAX_THREADS];
    int ncpus;          /* 0: no pinning */
    int prefill;
    uint64_t warmup_ns;
    uint64_t duration_ns; /* 0: until the classes' counts are done */
    uint64_t drain_ns;    /* how long to wait for replies after the end */
    int json, quiet;
    uint64_t seed;
    int nclasses;
    sb_class_cfg classes[SB_MAX_CLASSES];
} sb_run_cfg;

/* One class's numbers on one worker (later: merged over workers). Only
 * requests intended inside the measured window count, except the
 * errors_outside counter, which keeps warmup and prefill errors visible
 * rather than dropping them. */
typedef struct sb_stats {
    sb_hdr latency; /* intended send -> last reply byte: what a user sees */
    sb_hdr service; /* actual send -> last reply byte: what the server did */
    sb_hdr slip;    /* intended -> actual send: how late the generator was */
    uint64_t done, gets, sets, hits, misses;
    uint64_t error_replies; /* -ERR and friends */
    uint64_t bad_values;    /* a reply that is not what the request wrote */
    uint64_t conn_errors;   /* connections lost */
    uint64_t lost;          /* requests in flight on a lost connection */
    uint64_t unanswered;    /* still in flight when the drain timed out */
    uint64_t unsent;        /* open loop: due in the window, never sent */
    uint64_t errors_outside;/* errors during prefill or warmup */
    uint64_t issued;        /* measured requests sent (offered = issued + unsent) */
    uint64_t bytes_rx, bytes_tx; /* inside the measured window */
    uint64_t last_done_ns;
    char first_error[96];
} sb_stats;

void sb_stats_init(sb_stats *s);
void sb_stats_free(sb_stats *s);
void sb_stats_merge(sb_stats *dst, const sb_stats *src);
uint64_t sb_stats_errors(const sb_stats *s);

#endif
