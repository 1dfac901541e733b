/* queues.c — what the rings of steps 2-3 cost, next to Concurrency Kit's.
 *
 * Steps 1-3 benchmark. Owns nothing of the server: it drives the library's
 * three rings (queue_spsc, queue_spmc, queue_mpsc) and the pool
 * (io_threads) from threads of its own, and prints one JSON line per run.
 * What it measures, each run moving a fixed number of items 1..N from the
 * producers to the consumers and timing them from the start signal to the
 * last item taken:
 *
 *   spsc    soloist's SPSC ring with a commit every B items (B = 1, 2, 4,
 *           8, 16, 32; the consumer takes up to IO_BATCH_SIZE at a time)
 *           against ck_ring_enqueue_spsc / ck_ring_dequeue_spsc, and a
 *           mutex + condition-variable ring as the baseline;
 *   spmc    one producer, consumers as the cores allow (and two on two
 *           cores, labelled oversubscribed), against ck_ring's SPMC;
 *   mpsc    producers as the cores allow (and two, labelled), one
 *           consumer, against ck_ring's MPSC;
 *   slots   the SPSC protocol with one-word (8 B) and two-word (16 B)
 *           slots, built here only (src/ carries one word, job.h says why);
 *   layout  the same protocol with the producer's private fields on a
 *           line of their own (spsc_queue's layout) and beside tail;
 *   lines   cache lines moved per item with a commit per item and per 32,
 *           counted from the ring's own indices (and from the hardware's
 *           L1D read-miss counter where perf_event_open allows it);
 *   handoff one line's round trip between two cores (ping-pong), halved:
 *           what one hand-off of a cache line costs, the rings' floor;
 *   pool    an io_threads pool's idle workers: parked, active spinning
 *           (as Valkey's do), and active with soloist's spin-then-sleep.
 *
 * soloist's and ck_ring's runs alternate, with the same capacity and the
 * same item count, and each thread is pinned to a core of its own while
 * the cores last (thread i on allowed cpu i mod cores). A thread that
 * finds the queue full or empty spins, and yields after 64 tries in a
 * row (backoff). The consumers' checksum of the items must match, or the
 * benchmark fails.
 *
 * Threads: main starts each run and reads its result after the join; a
 * run's producers and consumers share only the queue under test and the
 * start gate (release/acquire, see gate_wait).
 *
 * Output: JSON lines on stdout, each with its config and the BENCH_RUN_ID
 * the runner sets. --quick (or QUICK=1): runs of 20 ms, 5 of each; else
 * runs of 150 ms, 7 of each. Bounded: an alarm ends the process after
 * 85 s (18 s with --quick).
 *
 * Valkey anchor: src/queues.c (spscEnqueue, spscCommit, spscDequeueBatch,
 * spmcEnqueue, spmcDequeue, mpscEnqueue, mpscDequeueBatch) and
 * src/io_threads.c IOThreadMain, through soloist's versions of them.
 */
#include <ck_ring.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_bound.h"
#include "io_threads.h"
#include "queue_mpsc.h"
#include "queue_spmc.h"
#include "queue_spsc.h"

#define MAX_THREADS 4
#define MAX_RUNS 16
#define STOP_ITEM UINTPTR_MAX /* tells an SPMC consumer to stop */

static const char *run_id = "adhoc";
static int quick, runs = 7, run_ms = 150;
static int ncpus, cpus[64]; /* the CPUs this process may run on */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* ------------------------------------------------------------ one run */

enum kind { SPSC, CK_SPSC, MUTEX, SPMC, CK_SPMC, MPSC, CK_MPSC, SLOT8, SLOT16, ONE_LINE };

typedef struct trial {
    enum kind kind;
    int producers, consumers;
    size_t batch; /* SPSC and slots: commit every `batch` items */
    uint64_t items;
    bool count_lines; /* SPSC: count what crosses between the cores */
    atomic_int ready; /* threads at the gate */
    atomic_bool go;   /* main's start signal */
} trial;

typedef struct worker {
    trial *t;
    int idx;                                   /* producers first, then consumers */
    uint64_t first, n;                         /* a producer's items: first .. first + n - 1 */
    uint64_t got, sum;                         /* a consumer's items and their sum */
    uint64_t end_ns;                           /* when a consumer took its last item */
    uint64_t tail_seen, head_seen, slot_lines; /* count_lines only */
    long long hw_misses;                       /* L1D read misses, -1: no counter */
    long preempted;                            /* involuntary context switches during the run */
} worker;

/* Waits for the rest of a run's threads: each announces itself, then all
 * wait for main's go. Acquire pairs with main's release store of go, so
 * the queue main initialised is visible before the first operation. */
static void gate_wait(trial *t) {
    atomic_fetch_add_explicit(&t->ready, 1, memory_order_relaxed);
    while (!atomic_load_explicit(&t->go, memory_order_acquire)) cpu_relax();
}

/* A failed try (queue full or empty): spin, and after 64 spins in a row
 * (microseconds) give the core away, in case the thread we wait for is
 * waiting for it: always so when the threads outnumber the cores, and on
 * a shared machine whenever another process took the other core. Both
 * sides of every comparison wait the same way. */
static void backoff(unsigned *spins) {
    if (++*spins >= 64) {
        *spins = 0;
        sched_yield();
    } else {
        cpu_relax();
    }
}

static int hw_counter_open(void) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HW_CACHE;
    a.config = PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0); /* this thread */
}

static int hw_errno; /* why the counter could not be opened, 0: it could */

/* The queues under test. Static, so their _Alignas holds; one run at a
 * time uses each. */
static spsc_queue sq;
static spmc_queue pq;
static mpsc_queue mq;
static ck_ring_t ckr CK_CC_CACHELINE;
static ck_ring_buffer_t ckbuf[MPSC_QUEUE_SIZE];

/* The baseline: a ring behind one mutex, one item per lock. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t nonempty, nonfull;
    size_t head, tail;
    uintptr_t slot[SPSC_QUEUE_SIZE];
} lq = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, {0}};

/* The SPSC protocol of queue_spsc.c, built here for two comparisons
 * that src/ cannot make: slots of one word against two (SLOT8, SLOT16),
 * and spsc_queue's layout against one where the producer's private
 * fields share tail's line (SLOT8 against ONE_LINE). Each pair runs the
 * same functions, so the width, or the place of two fields, is the only
 * difference. */
typedef struct wide_ring { /* spsc_queue's layout (queue_spsc.h), with wider slots */
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t head;
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t tail;
    size_t beside_tail[2]; /* ONE_LINE's tail_local and head_cache */
    _Alignas(CACHE_LINE_SIZE) size_t tail_cache;
    _Alignas(CACHE_LINE_SIZE) size_t own_line[2]; /* spsc_queue's: tail_local, head_cache */
    _Alignas(CACHE_LINE_SIZE) uintptr_t slot[2 * SPSC_QUEUE_SIZE];
} wide_ring;
static wide_ring wq;
#define WMASK ((size_t)SPSC_QUEUE_SIZE - 1)

/* The producer's private fields: pf[0] is tail_local, pf[1] head_cache,
 * on their own line (wq.own_line) or beside tail (wq.beside_tail). */
static inline bool wide_enqueue(wide_ring *q, size_t *pf, uintptr_t item, int words) {
    if (pf[0] - pf[1] >= SPSC_QUEUE_SIZE) {
        pf[1] = atomic_load_explicit(&q->head, memory_order_acquire);
        if (pf[0] - pf[1] >= SPSC_QUEUE_SIZE) {
            atomic_store_explicit(&q->tail, pf[0], memory_order_release);
            return false;
        }
    }
    uintptr_t *s = &q->slot[(pf[0] & WMASK) * (size_t)words];
    s[0] = item;
    if (words == 2) s[1] = ~item;
    pf[0]++;
    return true;
}

static inline void wide_commit(wide_ring *q, const size_t *pf) {
    atomic_store_explicit(&q->tail, pf[0], memory_order_release);
}

/* Takes up to max items and returns how many; adds what it read to *sum. */
static inline size_t wide_dequeue(wide_ring *q, size_t max, uint64_t *sum, int words) {
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    if (head == q->tail_cache) {
        q->tail_cache = atomic_load_explicit(&q->tail, memory_order_acquire);
        if (head == q->tail_cache) return 0;
    }
    size_t n = q->tail_cache - head;
    if (n > max) n = max;
    for (size_t i = 0; i < n; i++) {
        const uintptr_t *s = &q->slot[((head + i) & WMASK) * (size_t)words];
        *sum += s[0];
        if (words == 2 && s[1] != ~s[0]) abort(); /* the two words travel together */
    }
    atomic_store_explicit(&q->head, head + n, memory_order_release);
    return n;
}

/* One producer's loop for each kind. */
static void produce(worker *w) {
    trial *t = w->t;
    unsigned spins = 0;
    uint64_t last = w->first + w->n - 1;
    mpsc_ticket ticket = {0};
    /* Items left before the next commit (SPSC and slots): a countdown, so
     * the loop pays no division per item that ck_ring's loop does not. */
    size_t until_commit = t->batch;
    for (uint64_t i = w->first; i <= last; i++) {
        uintptr_t item = (uintptr_t)i;
        spins = 0;
        switch (t->kind) {
        case SPSC:
            while (!spsc_enqueue(&sq, item)) backoff(&spins);
            if (--until_commit == 0 || i == last) {
                spsc_commit(&sq);
                until_commit = t->batch;
            }
            break;
        case CK_SPSC:
            while (!ck_ring_enqueue_spsc(&ckr, ckbuf, (void *)item)) backoff(&spins);
            break;
        case MUTEX:
            pthread_mutex_lock(&lq.mu);
            while (lq.tail - lq.head == SPSC_QUEUE_SIZE) pthread_cond_wait(&lq.nonfull, &lq.mu);
            lq.slot[lq.tail++ & (SPSC_QUEUE_SIZE - 1)] = item;
            if (lq.tail - lq.head == 1) pthread_cond_signal(&lq.nonempty);
            pthread_mutex_unlock(&lq.mu);
            break;
        case SPMC:
            while (!spmc_enqueue(&pq, item)) backoff(&spins);
            break;
        case CK_SPMC:
            while (!ck_ring_enqueue_spmc(&ckr, ckbuf, (void *)item)) backoff(&spins);
            break;
        case MPSC:
            while (!mpsc_enqueue(&mq, &ticket, item)) backoff(&spins);
            break;
        case CK_MPSC:
            while (!ck_ring_enqueue_mpsc(&ckr, ckbuf, (void *)item)) backoff(&spins);
            break;
        case SLOT8:
        case SLOT16:
        case ONE_LINE: {
            int words = t->kind == SLOT16 ? 2 : 1;
            size_t *pf = t->kind == ONE_LINE ? wq.beside_tail : wq.own_line;
            while (!wide_enqueue(&wq, pf, item, words)) backoff(&spins);
            if (--until_commit == 0 || i == last) {
                wide_commit(&wq, pf);
                until_commit = t->batch;
            }
            break;
        }
        }
    }
    if (t->kind == SPMC || t->kind == CK_SPMC) /* one stop per consumer, after the items */
        for (int c = 0; c < t->consumers; c++)
            while (!(t->kind == SPMC ? spmc_enqueue(&pq, STOP_ITEM)
                                     : ck_ring_enqueue_spmc(&ckr, ckbuf, (void *)STOP_ITEM)))
                backoff(&spins);
}

/* SPSC with count_lines: the producer's loop, counting each new head it
 * loads (a line read from the consumer's core). Kept apart so the timed
 * loop above carries no counting. */
static void produce_counting(worker *w) {
    trial *t = w->t;
    unsigned spins = 0;
    size_t seen = sq.head_cache, until_commit = t->batch;
    for (uint64_t i = w->first; i < w->first + w->n; i++) {
        spins = 0;
        while (!spsc_enqueue(&sq, (uintptr_t)i)) backoff(&spins);
        if (sq.head_cache != seen) {
            seen = sq.head_cache;
            w->head_seen++;
        }
        if (--until_commit == 0 || i == w->first + w->n - 1) {
            spsc_commit(&sq);
            until_commit = t->batch;
        }
    }
}

static void consume(worker *w) {
    trial *t = w->t;
    unsigned spins = 0;
    uintptr_t batch[IO_BATCH_SIZE];
    size_t tail_seen = sq.tail_cache;
    for (;;) {
        size_t n = 0;
        void *v;
        switch (t->kind) {
        case SPSC: {
            size_t head = atomic_load_explicit(&sq.head, memory_order_relaxed);
            n = spsc_dequeue_batch(&sq, batch, IO_BATCH_SIZE);
            if (t->count_lines && n > 0) {
                /* Lines of slots this batch read: each was written by the
                 * producer since this core last read it. */
                w->slot_lines += (head + n - 1) / 8 - head / 8 + 1;
                if (sq.tail_cache != tail_seen) {
                    tail_seen = sq.tail_cache;
                    w->tail_seen++;
                }
            }
            for (size_t i = 0; i < n; i++) w->sum += batch[i];
            break;
        }
        case CK_SPSC:
            if (ck_ring_dequeue_spsc(&ckr, ckbuf, &v)) w->sum += (uintptr_t)v, n = 1;
            break;
        case MUTEX:
            pthread_mutex_lock(&lq.mu);
            while (lq.tail == lq.head) pthread_cond_wait(&lq.nonempty, &lq.mu);
            w->sum += lq.slot[lq.head++ & (SPSC_QUEUE_SIZE - 1)];
            if (lq.tail - lq.head == SPSC_QUEUE_SIZE - 1) pthread_cond_signal(&lq.nonfull);
            pthread_mutex_unlock(&lq.mu);
            n = 1;
            break;
        case SPMC:
        case CK_SPMC: {
            uintptr_t item = 0;
            if (t->kind == SPMC)
                item = spmc_dequeue(&pq);
            else if (ck_ring_dequeue_spmc(&ckr, ckbuf, &v))
                item = (uintptr_t)v;
            if (item == STOP_ITEM) {
                w->end_ns = now_ns();
                return;
            }
            if (item) w->sum += item, n = 1;
            break;
        }
        case MPSC:
            n = mpsc_dequeue_batch(&mq, batch, IO_BATCH_SIZE);
            for (size_t i = 0; i < n; i++) w->sum += batch[i];
            break;
        case CK_MPSC:
            if (ck_ring_dequeue_mpsc(&ckr, ckbuf, &v)) w->sum += (uintptr_t)v, n = 1;
            break;
        case SLOT8:
        case ONE_LINE: n = wide_dequeue(&wq, IO_BATCH_SIZE, &w->sum, 1); break;
        case SLOT16: n = wide_dequeue(&wq, IO_BATCH_SIZE, &w->sum, 2); break;
        }
        if (n == 0) {
            backoff(&spins);
            continue;
        }
        spins = 0;
        w->got += n;
        if (w->got == t->items && t->kind != SPMC && t->kind != CK_SPMC) {
            w->end_ns = now_ns();
            return;
        }
    }
}

static void *thread_main(void *arg) {
    worker *w = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[w->idx % ncpus], &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    int fd = w->t->count_lines ? hw_counter_open() : -1;
    if (w->t->count_lines && fd < 0) hw_errno = errno;
    gate_wait(w->t);
    /* How often another thread took this one's core: on a shared machine
     * the figure to read a slow run against. */
    struct rusage ru0, ru1;
    getrusage(RUSAGE_THREAD, &ru0);
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    if (w->idx < w->t->producers) {
        if (w->t->count_lines)
            produce_counting(w);
        else
            produce(w);
    } else {
        consume(w);
    }
    getrusage(RUSAGE_THREAD, &ru1);
    w->preempted = ru1.ru_nivcsw - ru0.ru_nivcsw;
    w->hw_misses = -1;
    if (fd >= 0) {
        long long v = 0;
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        if (read(fd, &v, sizeof v) == (ssize_t)sizeof v) w->hw_misses = v;
        close(fd);
    }
    return NULL;
}

typedef struct result {
    double ns_per_item;
    uint64_t tail_seen, head_seen, slot_lines;
    long long hw_misses; /* -1: not counted */
    long preempted;      /* all its threads' involuntary context switches */
} result;

/* Runs one trial: empties its queue, starts its threads, times them. */
static result run_trial(enum kind kind, int producers, int consumers, size_t batch, uint64_t items, bool count_lines) {
    trial t = {.kind = kind,
               .producers = producers,
               .consumers = consumers,
               .batch = batch,
               .items = items,
               .count_lines = count_lines};
    atomic_init(&t.ready, 0);
    atomic_init(&t.go, false);
    switch (kind) {
    case SPSC: spsc_init(&sq); break;
    case SPMC: spmc_init(&pq); break;
    case MPSC: mpsc_init(&mq); break;
    case CK_SPSC:
    case CK_SPMC: ck_ring_init(&ckr, SPSC_QUEUE_SIZE); break;
    case CK_MPSC: ck_ring_init(&ckr, MPSC_QUEUE_SIZE); break;
    case MUTEX: lq.head = lq.tail = 0; break;
    case SLOT8:
    case SLOT16:
    case ONE_LINE: memset(&wq, 0, sizeof wq); break;
    }
    int nthreads = producers + consumers;
    worker w[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        w[i] = (worker){.t = &t, .idx = i};
        if (i < producers) { /* split 1..items among the producers */
            w[i].first = 1 + items * (uint64_t)i / (uint64_t)producers;
            w[i].n = items * (uint64_t)(i + 1) / (uint64_t)producers + 1 - w[i].first;
        }
        if (pthread_create(&th[i], NULL, thread_main, &w[i]) != 0) abort();
    }
    while (atomic_load_explicit(&t.ready, memory_order_relaxed) < nthreads) sched_yield();
    uint64_t t0 = now_ns();
    /* Release pairs with gate_wait's acquire: the queue's init is seen. */
    atomic_store_explicit(&t.go, true, memory_order_release);
    result r = {0};
    uint64_t end = t0, sum = 0, got = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        if (w[i].end_ns > end) end = w[i].end_ns;
        sum += w[i].sum;
        got += w[i].got;
        r.tail_seen += w[i].tail_seen;
        r.head_seen += w[i].head_seen;
        r.slot_lines += w[i].slot_lines;
        r.preempted += w[i].preempted;
        if (w[i].hw_misses < 0 || r.hw_misses < 0)
            r.hw_misses = -1;
        else
            r.hw_misses += w[i].hw_misses;
    }
    if (got != items || sum != items * (items + 1) / 2) {
        fprintf(stderr, "queues: kind %d moved %llu items summing %llu; expected %llu summing %llu\n", (int)kind,
                (unsigned long long)got, (unsigned long long)sum, (unsigned long long)items,
                (unsigned long long)(items * (items + 1) / 2));
        exit(1);
    }
    r.ns_per_item = (double)(end - t0) / (double)items;
    return r;
}

/* ------------------------------------------------------------- output */

static const char *impl_name(enum kind k) {
    switch (k) {
    case CK_SPSC:
    case CK_SPMC:
    case CK_MPSC: return "ck_ring";
    case MUTEX: return "mutex_condvar";
    default: return "soloist";
    }
}

static const char *test_name(enum kind k) {
    switch (k) {
    case SPSC:
    case CK_SPSC:
    case MUTEX: return "spsc";
    case SPMC:
    case CK_SPMC: return "spmc";
    case MPSC:
    case CK_MPSC: return "mpsc";
    default: return "slots";
    }
}

static size_t capacity(enum kind k) {
    switch (k) {
    case SPMC: return SPMC_QUEUE_SIZE;
    case MPSC: return MPSC_QUEUE_SIZE;
    case CK_MPSC: return MPSC_QUEUE_SIZE - 1; /* ck_ring keeps one slot empty */
    case CK_SPSC:
    case CK_SPMC: return SPSC_QUEUE_SIZE - 1;
    default: return SPSC_QUEUE_SIZE;
    }
}

static void print_run(const char *test, enum kind k, int producers, int consumers, size_t batch, uint64_t items,
                      int run, const result *r) {
    int threads = producers + consumers;
    printf("{\"bench\":\"queues\",\"kind\":\"run\",\"run_id\":\"%s\",\"test\":\"%s\",\"impl\":\"%s\","
           "\"producers\":%d,\"consumers\":%d,\"threads\":%d,\"cores\":%d,\"oversubscribed\":%s,"
           "\"pinning\":\"thread i on allowed cpu i mod %d\",\"wait\":\"spin, yield after 64 failed "
           "tries\",\"capacity\":%zu,\"slot_bytes\":%d,"
           "\"commit_batch\":%zu,\"dequeue_batch\":%d,\"items\":%llu,\"run\":%d,\"quick\":%s,"
           "\"ns_per_item\":%.3f,\"items_per_s\":%.0f,\"preempted\":%ld",
           run_id, test, impl_name(k), producers, consumers, threads, ncpus, threads > ncpus ? "true" : "false", ncpus,
           capacity(k), k == SLOT16 ? 16 : 8, batch,
           (k == SPSC || k == MPSC || k == SLOT8 || k == SLOT16 || k == ONE_LINE) ? IO_BATCH_SIZE : 1,
           (unsigned long long)items, run, quick ? "true" : "false", r->ns_per_item, 1e9 / r->ns_per_item,
           r->preempted);
    if (!strcmp(test, "layout")) printf(",\"producer_fields\":\"%s\"", k == ONE_LINE ? "beside tail" : "own line");
    if (!strcmp(test, "lines")) {
        printf(",\"slot_lines\":%llu,\"tail_loads_new\":%llu,\"head_loads_new\":%llu,"
               "\"computed_lines_per_item\":%.4f",
               (unsigned long long)r->slot_lines, (unsigned long long)r->tail_seen, (unsigned long long)r->head_seen,
               (double)(r->slot_lines + r->tail_seen + r->head_seen) / (double)items);
        if (r->hw_misses >= 0)
            printf(",\"hw_l1d_read_misses_per_item\":%.4f", (double)r->hw_misses / (double)items);
        else
            printf(",\"hw_l1d_read_misses_per_item\":null,\"hw_unavailable\":\"perf_event_open: %s\"",
                   strerror(hw_errno ? hw_errno : ENOENT));
    }
    printf("}\n");
    fflush(stdout);
}

/* Items for runs of about run_ms, from one short warm-up of each kind
 * given (the slowest decides, so every side moves the same count). */
static uint64_t calibrate(const enum kind *kinds, int nk, int producers, int consumers, size_t batch) {
    double worst = 0;
    for (int i = 0; i < nk; i++) {
        result r = run_trial(kinds[i], producers, consumers, batch, 100000, false);
        if (r.ns_per_item > worst) worst = r.ns_per_item;
    }
    uint64_t n = (uint64_t)((double)run_ms * 1e6 / worst);
    if (n < 100000) n = 100000;
    return n - n % 64;
}

/* soloist against ck_ring for one discipline and thread count, alternated. */
static void versus(enum kind solo, enum kind ck, int producers, int consumers) {
    enum kind both[2] = {solo, ck};
    uint64_t items = calibrate(both, 2, producers, consumers, 1);
    for (int r = 1; r <= runs; r++)
        for (int i = 0; i < 2; i++) {
            result res = run_trial(both[i], producers, consumers, 1, items, false);
            print_run(test_name(solo), both[i], producers, consumers, 1, items, r, &res);
        }
}

/* ---------------------------------------------------------- the hand-off */

/* What one cache line costs to move: two threads on different cores pass
 * a counter back and forth through two lines, each spinning on the line
 * the other writes, without a pause (a pause would add its own latency
 * to each wait). Half a round trip is one hand-off: a store on one core
 * seen by a load on the other. The floor under every ring above. */
static struct {
    _Alignas(CACHE_LINE_SIZE) _Atomic uint64_t ping;
    _Alignas(CACHE_LINE_SIZE) _Atomic uint64_t pong;
} hand;

static void pin_to(int i) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[i % ncpus], &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *pong_main(void *arg) {
    uint64_t n = *(uint64_t *)arg;
    pin_to(1);
    for (uint64_t i = 1; i <= n; i++) {
        /* Acquire and release: the pair a ring's publish uses. */
        while (atomic_load_explicit(&hand.ping, memory_order_acquire) != i) continue;
        atomic_store_explicit(&hand.pong, i, memory_order_release);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Timed in chunks of HANDOFF_CHUNK round trips; a run reports its median
 * chunk, so that a chunk in which the scheduler took a core away (a
 * millisecond or more, on a shared machine) does not stand for the rest. */
#define HANDOFF_CHUNK 1000
#define HANDOFF_CHUNKS 100

static void handoff_bench(void) {
    uint64_t n = (uint64_t)HANDOFF_CHUNK * (quick ? HANDOFF_CHUNKS / 5 : HANDOFF_CHUNKS);
    uint64_t chunk_ns[HANDOFF_CHUNKS];
    for (int r = 1; r <= runs; r++) {
        atomic_store(&hand.ping, 0);
        atomic_store(&hand.pong, 0);
        pthread_t th;
        pin_to(0);
        if (pthread_create(&th, NULL, pong_main, &n) != 0) abort();
        struct rusage ru0, ru1;
        getrusage(RUSAGE_SELF, &ru0);
        size_t chunks = 0;
        uint64_t t0 = now_ns();
        for (uint64_t i = 1; i <= n; i++) {
            atomic_store_explicit(&hand.ping, i, memory_order_release);
            while (atomic_load_explicit(&hand.pong, memory_order_acquire) != i) continue;
            if (i % HANDOFF_CHUNK == 0) {
                uint64_t t1 = now_ns();
                chunk_ns[chunks++] = t1 - t0;
                t0 = t1;
            }
        }
        getrusage(RUSAGE_SELF, &ru1);
        pthread_join(th, NULL);
        qsort(chunk_ns, chunks, sizeof *chunk_ns, cmp_u64);
        printf("{\"bench\":\"queues\",\"kind\":\"run\",\"run_id\":\"%s\",\"test\":\"handoff\","
               "\"impl\":\"none\",\"cores\":%d,\"round_trips\":%llu,\"run\":%d,\"quick\":%s,"
               "\"pinning\":\"main on allowed cpu 0, the other thread on cpu 1\","
               "\"chunk\":%d,\"ns_one_way\":%.1f,\"ns_one_way_fastest_chunk\":%.1f,\"preempted\":%ld}\n",
               run_id, ncpus, (unsigned long long)n, r, quick ? "true" : "false", HANDOFF_CHUNK,
               (double)chunk_ns[chunks / 2] / HANDOFF_CHUNK / 2.0, (double)chunk_ns[0] / HANDOFF_CHUNK / 2.0,
               ru1.ru_nivcsw - ru0.ru_nivcsw);
        fflush(stdout);
    }
    cpu_set_t all; /* main may run anywhere again */
    CPU_ZERO(&all);
    for (int i = 0; i < ncpus; i++) CPU_SET(cpus[i], &all);
    pthread_setaffinity_np(pthread_self(), sizeof all, &all);
}

/* Two variants of the SPSC protocol built here, commit per 32, run by
 * run alternated, with the same item count. */
static void spsc_pair(const char *test, enum kind a, enum kind b) {
    enum kind both[2] = {a, b};
    uint64_t items = calibrate(both, 2, 1, 1, 32);
    for (int r = 1; r <= runs; r++)
        for (int i = 0; i < 2; i++) {
            result res = run_trial(both[i], 1, 1, 32, items, false);
            print_run(test, both[i], 1, 1, 32, items, r, &res);
        }
}

/* ------------------------------------------------------------- the pool */

/* CPU time (ns) the pool's workers have used, from the kernel's per-thread
 * run time (/proc/self/task/TID/schedstat, first field) of every thread
 * named io_thd_N; *count gets how many there are. */
static uint64_t workers_cpu_ns(int *count) {
    uint64_t total = 0;
    *count = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
        if (strncmp(comm, "io_thd_", 7) != 0) continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        unsigned long long ns = 0;
        f = fopen(path, "r");
        if (!f) continue;
        if (fscanf(f, "%llu", &ns) == 1) {
            total += ns;
            (*count)++;
        }
        fclose(f);
    }
    closedir(d);
    return total;
}

/* Three states of an idle pool: parked (main holds every worker's
 * mutex), active spinning for as long as it is active (Valkey's workers;
 * here an idle spin longer than the run), and active with soloist's
 * default: spin io-threads-idle-spin-us (20 µs), then sleep. */
static void pool_bench(int workers) {
    static const struct {
        const char *state;
        int active;
        unsigned spin_us;
    } states[] = {{"parked", 0, 20}, {"active", 1, 3600u * 1000000u}, {"active-sleeps", 1, 20}};
    int wall_ms = quick ? 60 : 300;
    io_threads_init(workers + 1);
    for (int r = 1; r <= runs; r++) {
        for (size_t k = 0; k < sizeof states / sizeof states[0]; k++) {
            io_threads_set_idle_spin_us(states[k].spin_us);
            if (!io_threads_set_active(states[k].active ? workers + 1 : 1)) abort();
            usleep(20000); /* let woken workers start spinning, parked ones sleep */
            int n;
            uint64_t c0 = workers_cpu_ns(&n), t0 = now_ns();
            usleep((useconds_t)wall_ms * 1000);
            uint64_t c1 = workers_cpu_ns(&n), t1 = now_ns();
            double pct = n ? 100.0 * (double)(c1 - c0) / (double)(t1 - t0) / n : -1;
            printf("{\"bench\":\"queues\",\"kind\":\"run\",\"run_id\":\"%s\",\"test\":\"pool\","
                   "\"impl\":\"soloist\",\"state\":\"%s\",\"idle_spin_us\":%u,\"workers\":%d,\"workers_seen\":%d,"
                   "\"cores\":%d,\"oversubscribed\":%s,\"wall_ms\":%.1f,\"run\":%d,\"quick\":%s,"
                   "\"clock\":\"/proc/self/task/*/schedstat of io_thd_* threads\","
                   "\"cpu_pct_per_worker\":%.3f}\n",
                   run_id, states[k].state, states[k].spin_us, workers, n, ncpus, workers > ncpus ? "true" : "false",
                   (double)(t1 - t0) / 1e6, r, quick ? "true" : "false", pct);
            fflush(stdout);
        }
    }
    io_threads_set_active(1);
    io_threads_shutdown();
}

int main(int argc, char **argv) {
    const char *q = getenv("QUICK");
    quick = q && *q && strcmp(q, "0") != 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else {
            fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
            return 2;
        }
    }
    if (quick) runs = 5, run_ms = 20;
    if (getenv("BENCH_RUN_ID")) run_id = getenv("BENCH_RUN_ID");
    bench_bound_set("queues", quick ? 18 : 85);

    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    for (int c = 0; c < CPU_SETSIZE && ncpus < 64; c++)
        if (CPU_ISSET(c, &set)) cpus[ncpus++] = c;
    if (ncpus < 2) {
        fprintf(stderr, "queues: needs two CPUs to put producer and consumer apart\n");
        return 1;
    }
    /* As many consumers (SPMC) or producers (MPSC) as the cores allow
     * beside the other side, up to 2; and 2 as well if that oversubscribes. */
    int fit = ncpus - 1 < 2 ? ncpus - 1 : 2;

    /* SPSC: commit batches 1..32, ck_ring and the mutex ring, alternated. */
    static const size_t batches[] = {1, 2, 4, 8, 16, 32};
    enum kind spsc_sides[] = {SPSC, CK_SPSC};
    uint64_t items = calibrate(spsc_sides, 2, 1, 1, 1);
    enum kind mutex_only[] = {MUTEX};
    uint64_t mutex_items = calibrate(mutex_only, 1, 1, 1, 1);
    for (int r = 1; r <= runs; r++) {
        for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
            result res = run_trial(SPSC, 1, 1, batches[b], items, false);
            print_run("spsc", SPSC, 1, 1, batches[b], items, r, &res);
        }
        result res = run_trial(CK_SPSC, 1, 1, 1, items, false);
        print_run("spsc", CK_SPSC, 1, 1, 1, items, r, &res);
        res = run_trial(MUTEX, 1, 1, 1, mutex_items, false);
        print_run("spsc", MUTEX, 1, 1, 1, mutex_items, r, &res);
    }

    versus(SPMC, CK_SPMC, 1, fit);
    if (fit < 2) versus(SPMC, CK_SPMC, 1, 2);
    versus(MPSC, CK_MPSC, fit, 1);
    if (fit < 2) versus(MPSC, CK_MPSC, 2, 1);

    /* Slot width: 8 B against 16 B. */
    spsc_pair("slots", SLOT8, SLOT16);
    /* Layout: the producer's private fields on a line of their own (as in
     * spsc_queue) against beside tail, on the line the consumer polls. */
    spsc_pair("layout", SLOT8, ONE_LINE);

    /* Lines moved per item: commit per item against per 32, counted. */
    enum kind solo[] = {SPSC};
    items = calibrate(solo, 1, 1, 1, 1);
    for (int r = 1; r <= runs; r++)
        for (size_t b = 1; b <= 32; b += 31) {
            result res = run_trial(SPSC, 1, 1, b, items, true);
            print_run("lines", SPSC, 1, 1, b, items, r, &res);
        }

    handoff_bench();
    pool_bench(2);
    return 0;
}
