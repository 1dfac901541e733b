/* worker.h — one load-generator thread and its event loop.
 *
 * soloist-bench. Owns: a worker's connections, epoll instance,
 * timer, random stream, per-class schedules and statistics. Everything
 * in sb_worker is touched only by its own thread while it runs, except:
 *   - sb_progress: counters the worker stores (relaxed) once per loop
 *     turn and the main thread loads (relaxed) once a second for the
 *     progress line — statistics that order nothing;
 *   - sb_shared: the hand-offs between main and workers, each an atomic
 *     whose comment names the operation it pairs with.
 * The main thread reads the rest only after pthread_join.
 *
 * One event loop per thread, as memtier_benchmark and cachecannon do: a
 * thread never waits on another, and a connection never moves between
 * threads. Anchor: valkey src/ae.c aeProcessEvents is the server-side
 * twin of this loop.
 */
#ifndef SOLOIST_BENCH_WORKER_H
#define SOLOIST_BENCH_WORKER_H
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "bench.h"
#include "conn.h"
#include "keyspace.h"
#include "schedule.h"

typedef struct sb_shared {
    const sb_run_cfg *cfg;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    /* Worker: fetch_add(release) when connected and prefilled (or failed);
     * main: load(acquire) until it equals the thread count. */
    _Atomic int ready;
    /* Main: store(release) of the run's start time once all are ready;
     * workers: load(acquire) until non-zero. Also publishes `stop`. */
    _Atomic uint64_t t0;
    /* SIGINT or a failed worker asks everyone to stop; relaxed: a request
     * to end soon, it guards no data. */
    _Atomic int stop;
    /* Worker: fetch_add(release) as its last act; main: load(acquire). */
    _Atomic int finished;
} sb_shared;

typedef struct sb_progress {
    _Atomic uint64_t prefilled, done, errors, bytes_rx, bytes_tx, inflight;
} sb_progress;

typedef struct sb_class_rt {
    const sb_class_cfg *cfg;
    sb_conn **conns; /* this worker's connections of the class */
    int nconns;
    int rr;          /* round-robin cursor for open-loop sends */
    int open;        /* rate > 0 */
    double rate;     /* this worker's share of the class rate */
    sb_sched sched;
    uint64_t free_slots; /* open loop: room left in live pipelines */
    int counted;         /* --count applies */
    uint64_t count_left; /* this worker's share of --count still to send */
    sb_zipf zipf;
    sb_stats st;
} sb_class_rt;

typedef struct sb_worker {
    int id;
    pthread_t thread;
    sb_shared *sh;
    const sb_run_cfg *cfg;
    int epfd;
    sb_timer timer;
    sb_conn *conns;
    int nconns;
    sb_class_rt cls[SB_MAX_CLASSES];
    sb_rng rng;
    char *rbuf;
    size_t rbuf_sz;
    sb_conn **dirty;
    int ndirty;
    sb_hdr wake;        /* how late the loop woke for a due send */
    int issuing;
    uint64_t t0, warm_end, end, drain_end, stopped_ns;
    uint64_t cpu_ns;    /* this thread's CPU time during the run */
    uint64_t replies, rx_all, tx_all; /* everything, warmup too: progress */
    sb_progress prog;
    int failed;
    char error[512];
} sb_worker;

/* Main thread, before starting the threads: give worker `id` its share
 * of every class's connections, rate and count. */
void sb_worker_init(sb_worker *w, int id, sb_shared *sh);
void sb_worker_free(sb_worker *w);
/* The thread body (pthread_create's start routine). */
void *sb_worker_main(void *arg);

#endif
