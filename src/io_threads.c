/* io_threads.c — the I/O thread pool.
 *
 * Step 3 (threads layer). Main thread = thread 0; workers 1 .. num - 1.
 * See io_threads.h for who may call what.
 * Valkey: src/io_threads.c — IOThreadMain (the worker loop), createIOThread
 * and shutdownIOThread, commitIOJobs, drainIOThreadsQueue,
 * getPendingIOThreadsJobs, sendToMainThread, and the mutex handling of
 * its scaling code.
 *
 * The shape. Three kinds of queue connect main to the workers, each with
 * exactly the producers and consumers its type allows:
 *
 *     shared inbox    SPMC   main -> any worker   client reads and writes,
 *                                                 object frees, accepts, POLL
 *     private inbox   SPSC   main -> worker t     argv frees, POLL
 *     shared outbox   MPSC   workers -> main      results
 *
 * The shared inbox balances the load by itself: whichever worker is free
 * takes the next job. The private inboxes exist for jobs that must reach
 * one particular thread (an argv is freed by the thread whose allocator
 * made it), and main publishes them in batches (io_threads_commit). The
 * outbox never makes a worker wait (queue_mpsc.c).
 *
 * The loop. A worker repeats: (1) take every job in its private inbox, up
 * to IO_BATCH_SIZE at a time, until it is empty; (2) take one job from the
 * shared inbox; (3) if it did nothing, either retry its spilled results
 * or park. The private inbox goes first because nobody else can run its
 * jobs and they are short (a free, or a poll main is waiting on). Only one
 * shared job is taken per round so the private inbox is looked at again
 * between client jobs, and so the next shared job is left to whichever
 * worker gets to it first.
 *
 * Parking. Each worker has a mutex that main holds for as long as the
 * worker is inactive. An idle worker locks and at once unlocks it: if main
 * holds it, the worker sleeps in the kernel until main unlocks it (that
 * is the whole wake-up), and costs nothing meanwhile; if main does not,
 * the pair is cheap (no other thread wants the mutex) and the loop goes
 * round again. The mutex is the state: there is no flag to check and no
 * wake-up to lose, and every lock is undone by the thread that took it,
 * as POSIX requires. In Valkey an *active* worker with nothing to do spins
 * on its lock for as long as it stays active, so there an idle pool is
 * cheap only if the scaling policy parks it; soloist's active worker spins
 * io-threads-idle-spin-us and then sleeps on a futex (the sleep, below),
 * so an idle active pool costs little either way. Workers are numbered so the
 * active ones are always 1 .. active - 1: main wakes upwards and parks
 * from the top. A parked worker may still be finishing the jobs it
 * already took; it parks when it finds nothing more to do.
 *
 * Counting. Main counts the jobs it submits (a plain field; only main
 * touches it); each worker adds the jobs it ran to one shared counter,
 * once per round rather than once per job, with a release fetch-and-add
 * after the handlers returned. Main reads the counter with acquire, so
 * when submitted - finished reads 0, every handler has returned and
 * everything it wrote is visible to main. That is what io_threads_drain
 * waits for. It cannot wait forever: a job is only submitted to an active
 * worker or, if some worker is active, to the shared inbox; parking is
 * refused while it would strand a job; and a job a worker has taken is run
 * before the worker parks. Results do not count: a job is finished when
 * its handler returns, whether its result is in the outbox yet or spilled.
 *
 * Sleeping instead of spinning (where soloist parts from Valkey). An
 * active worker with nothing to do spins on its park mutex, and Valkey's
 * does so for as long as it stays active. That is cheap on a machine with
 * cores to spare and ruinous on one without: the spinning worker takes
 * the core the clients or the main thread need. So a soloist worker
 * spins only for io-threads-idle-spin-us (by default a few tens of
 * microseconds, long enough to catch the next request of a busy client),
 * then sleeps in the kernel on a futex of its own. Main wakes sleepers
 * when it gives them work. The hand-shake is Dekker's: the worker says
 * "asleep", then looks at its inboxes once more; main publishes a job,
 * then looks for sleepers. A store followed by a load of another variable
 * is the one order release and acquire do not give, so both sides meet on
 * one variable instead: each does a sequentially consistent
 * read-modify-write of the sleepers count (main adds 0). Two RMWs of one
 * variable are totally ordered; whichever comes second reads the first's
 * value and, because an RMW both acquires and releases, sees everything
 * the other side did before it. So either main sees the sleeper, or the
 * worker sees the job, and a job is never left with every worker asleep.
 * (A fence would say it too, but ThreadSanitizer does not model fences;
 * this form it checks.)
 *
 * Main sleeps the same way. While results are owed main must not block in
 * epoll_wait, so Valkey's main spins round its loop until they come. A
 * soloist main spins as long as a worker would and then blocks in
 * epoll_wait anyway, with an eventfd (main_wake) in its epoll set; a
 * worker that sends a result while main says it is asleep writes to the
 * eventfd, under the same hand-shake, met on the main_asleep flag (main
 * sets it by exchange, a worker takes it by exchange after sending).
 *
 * Stopping. Shutdown sets the worker's stop flag and wakes it if it is
 * parked; the loop checks the flag between rounds, so a worker never stops
 * in the middle of a handler. (Valkey uses pthread_cancel with a cleanup
 * handler to the same end.)
 */
#include "io_threads.h"
#include "io_threads_test.h"

#include "queue_mpsc.h"
#include "queue_spmc.h"
#include "queue_spsc.h"

#include <assert.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct io_worker {
    spsc_queue inbox;     /* main -> this worker; first, so line-aligned */
    pthread_mutex_t park; /* held by main while the worker is inactive */
    pthread_t thread;
    atomic_bool stop;     /* set by main at shutdown; relaxed both sides:
                           * it orders nothing, the join does */
    _Atomic uint32_t asleep; /* the futex word: 1 while the worker sleeps */
    int id;
} io_worker;

/* Each group of globals below is aligned to a line of its own, so that
 * main's writes to its bookkeeping never evict the lines the workers read
 * for every job (the handler table) and the reverse. */

/* Main's bookkeeping: only main reads or writes it. */
static struct {
    _Alignas(CACHE_LINE_SIZE) int num; /* threads in the pool counting main; 0: none */
    int active;       /* main and workers 1 .. active - 1 are active */
    size_t submitted; /* jobs put on any inbox, ever */
} pool;

/* Read by every worker, written only while no worker exists. */
static struct {
    _Alignas(CACHE_LINE_SIZE) io_job_proc *proc[JOB_REQ_COUNT];
    void (*exit_hook)(void);
} handlers;

/* Static, so the compiler aligns them to their lines. A private inbox no
 * pool uses is never touched, so it costs address space, not memory: the
 * kernel backs a page of zeroed static storage only once it is written. */
static spmc_queue shared_inbox;
static mpsc_queue shared_outbox;
static io_worker workers[IO_THREADS_MAX]; /* [0] unused: thread 0 is main */

/* Jobs the workers have run: written by every worker, read by main. */
static struct {
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t count;
} finished;

/*@ idle-line */
/* Sleepers, and main's side of the sleeping hand-shake. Workers write
 * sleepers and main_asleep's wake; main reads sleepers for every job. */
static struct {
    _Alignas(CACHE_LINE_SIZE) _Atomic int sleepers; /* workers asleep or about to be */
    _Atomic int main_asleep;                         /* main is (about to be) in epoll_wait */
    int main_fd;                                     /* the eventfd that wakes it; -1 when none */
    _Atomic uint64_t spin_ns; /* idle spin before sleeping; main sets it, relaxed: it orders nothing */
} idle = {.main_fd = -1, .spin_ns = 20000};
/*@ end */

static _Thread_local int thread_id;                   /* 0 = main */
static _Thread_local mpsc_producer outbox_producer;   /* a worker's outbox side */

static void futex_wait(_Atomic uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*@ wake-main */
/* Worker: after sending results, wakes main if it says it is asleep. The
 * exchange meets main's in io_threads_main_sleep_begin (see the essay). */
static void wake_main(void) {
    if (atomic_exchange_explicit(&idle.main_asleep, 0, memory_order_seq_cst)) {
        uint64_t one = 1;
        ssize_t w = write(idle.main_fd, &one, sizeof one);
        (void)w; /* the counter cannot overflow: main reads it on waking */
    }
}
/*@ end */

/*@ wake-for-job */
/* Main: wakes worker w if it sleeps (the load first, so that a worker
 * that is awake does not have its line written). */
static bool wake_if_asleep(io_worker *w) {
    if (!atomic_load_explicit(&w->asleep, memory_order_relaxed) ||
        !atomic_exchange_explicit(&w->asleep, 0, memory_order_relaxed))
        return false;
    futex_wake(&w->asleep);
    return true;
}

/* Main, after publishing a job: wakes worker tid if it sleeps, or, for a
 * shared-inbox job (tid 0), one sleeping active worker. The first
 * read-modify-write meets worker_sleep's (see the essay). */
static void wake_for_job(int tid) {
    if (atomic_fetch_add_explicit(&idle.sleepers, 0, memory_order_seq_cst) == 0) return;
    if (tid) {
        wake_if_asleep(&workers[tid]);
        return;
    }
    for (int t = 1; t < pool.active; t++)
        if (wake_if_asleep(&workers[t])) return;
}
/*@ end */

void io_threads_set_idle_spin_us(unsigned us) {
    atomic_store_explicit(&idle.spin_ns, (uint64_t)us * 1000, memory_order_relaxed);
    /* Sleepers go round once, so that a longer spin applies to them too. */
    for (int tid = 1; tid < pool.num; tid++) wake_if_asleep(&workers[tid]);
}

int io_threads_main_wake_fd(void) { return idle.main_fd; }

/*@ main-sleep-begin */
bool io_threads_main_sleep_begin(void) {
    if (idle.main_fd == -1) return false;
    atomic_exchange_explicit(&idle.main_asleep, 1, memory_order_seq_cst); /* meets wake_main's */
    return true;
}

void io_threads_main_sleep_end(void) {
    atomic_store_explicit(&idle.main_asleep, 0, memory_order_relaxed);
    uint64_t v;
    ssize_t r = read(idle.main_fd, &v, sizeof v); /* non-blocking: clears a wake, if any */
    (void)r;
}
/*@ end */

int io_thread_id(void) {
    return thread_id;
}

void io_threads_set_handler(job_request type, io_job_proc *proc) {
    assert(pool.num == 0 && (unsigned)type < JOB_REQ_COUNT);
    handlers.proc[type] = proc;
}

/*@ run-job */
/* Runs one job, after checking it came through an inbox that carries its
 * type (`allowed`, a JOB_*_INBOX_TYPES set). A wrong job is a bug in
 * main's routing; going on could free or write to the wrong thing. */
static void run_job(job_word job, unsigned allowed) {
    unsigned type = job_type(job);
    if (!(allowed & (1u << type)) || !handlers.proc[type]) {
        fprintf(stderr, "io_threads: worker %d got job type %u it cannot run\n", thread_id, type);
        abort();
    }
    handlers.proc[type](job_ptr(job));
}
/*@ end */

/*@ io-thread-main */
/* One round: the private inbox, all of it (only this thread can run
 * it), then one job from the shared inbox. Returns the jobs run. */
static size_t worker_round(io_worker *w, job_word *batch) {
    size_t done = 0, n;
    while ((n = spsc_dequeue_batch(&w->inbox, batch, IO_BATCH_SIZE)) > 0) {
        for (size_t i = 0; i < n; i++) run_job(batch[i], JOB_PRIVATE_INBOX_TYPES);
        done += n;
    }
    job_word job = spmc_dequeue(&shared_inbox);
    if (job) {
        run_job(job, JOB_SHARED_INBOX_TYPES);
        done++;
    }
    if (done > 0) {
        /* Release pairs with the acquire load in io_threads_pending:
         * the handlers' writes are visible to main once it counts these
         * jobs as finished. */
        atomic_fetch_add_explicit(&finished.count, done, memory_order_release);
    }
    return done;
}

/* Idle past the spin: says so, looks once more, and sleeps unless that
 * found work (which it then ran) or main woke it meanwhile. */
static void worker_sleep(io_worker *w, job_word *batch) {
    atomic_store_explicit(&w->asleep, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&idle.sleepers, 1, memory_order_seq_cst); /* meets wake_for_job's */
    if (worker_round(w, batch) == 0 && !atomic_load_explicit(&w->stop, memory_order_relaxed))
        futex_wait(&w->asleep, 1);
    atomic_store_explicit(&w->asleep, 0, memory_order_relaxed);
    atomic_fetch_sub_explicit(&idle.sleepers, 1, memory_order_relaxed);
}

static void *worker_main(void *arg) {
    io_worker *w = arg;
    thread_id = w->id;
    job_word batch[IO_BATCH_SIZE];
    uint64_t idle_since = 0; /* 0: not idle */
    unsigned idle_rounds = 0;
    while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
        if (worker_round(w, batch) > 0) {
            idle_since = 0;
            wake_main();
        } else if (mpsc_spilled(&outbox_producer) > 0) {
            /* Idle, but holding results: never park with them. */
            mpsc_flush(&shared_outbox, &outbox_producer);
            wake_main();
        } else {
            /* Idle: blocks here while main holds the mutex (parked), and
             * spins on it while active, for at most the idle spin (the
             * clock is read one round in 64). */
            pthread_mutex_lock(&w->park);
            pthread_mutex_unlock(&w->park);
            if (idle_since == 0) {
                idle_since = now_ns();
                idle_rounds = 0;
            } else if (++idle_rounds % 64 == 0 && now_ns() - idle_since >= atomic_load_explicit(&idle.spin_ns, memory_order_relaxed)) {
                worker_sleep(w, batch);
                idle_since = 0;
            }
        }
    }
    /* The pool is going away, and its outbox with it. */
    mpsc_producer_reset(&outbox_producer);
    if (handlers.exit_hook) handlers.exit_hook();
    return NULL;
}
/*@ end */

void io_threads_set_exit_hook(void (*hook)(void)) {
    assert(pool.num == 0);
    handlers.exit_hook = hook;
}

void io_threads_init(int num) {
    assert(pool.num == 0 && num >= 1 && num <= IO_THREADS_MAX);
    spmc_init(&shared_inbox);
    mpsc_init(&shared_outbox);
    atomic_store_explicit(&finished.count, 0, memory_order_relaxed); /* no worker exists */
    pool.submitted = 0;
    pool.active = 1;
    pool.num = num;
    atomic_store_explicit(&idle.sleepers, 0, memory_order_relaxed); /* no worker exists */
    atomic_store_explicit(&idle.main_asleep, 0, memory_order_relaxed);
    if (num > 1 && idle.main_fd == -1) idle.main_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    /* From the top down: main holds every parked worker's mutex, and
     * always takes them in one order, higher ids first (parking goes from
     * the top), so that no two of its locks are ever taken in both orders
     * (ThreadSanitizer's lock-order check holds main to that). */
    for (int id = num - 1; id >= 1; id--) {
        io_worker *w = &workers[id];
        spsc_init(&w->inbox);
        atomic_init(&w->stop, false);
        w->id = id;
        /* Born inactive: main holds the mutex before the thread exists. */
        if (pthread_mutex_init(&w->park, NULL) != 0 || pthread_mutex_lock(&w->park) != 0 ||
            pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            perror("io_threads: cannot start a worker");
            abort();
        }
        /* Valkey's thread names, for top -H and debuggers ("io_thd_127" at
         * most: within the kernel's 15 characters). */
        char name[32];
        snprintf(name, sizeof name, "io_thd_%d", id);
        pthread_setname_np(w->thread, name);
    }
}

void io_threads_shutdown(void) {
    if (pool.num == 0) return;
    io_threads_drain();
    for (int id = 1; id < pool.num; id++) {
        io_worker *w = &workers[id];
        atomic_store_explicit(&w->stop, true, memory_order_relaxed);
        atomic_fetch_add_explicit(&idle.sleepers, 0, memory_order_seq_cst); /* the flag before the wake */
        if (id >= pool.active) pthread_mutex_unlock(&w->park); /* wake it to see the flag */
        wake_if_asleep(w); /* or from its sleep */
        pthread_join(w->thread, NULL);
        pthread_mutex_destroy(&w->park);
    }
    pool.num = 0;
    pool.active = 0;
}

int io_threads_num(void) {
    return pool.num;
}

int io_threads_active(void) {
    return pool.active;
}

/*@ io-threads-set-active */
bool io_threads_set_active(int active) {
    assert(pool.num > 0 && active >= 1 && active <= pool.num);
    while (pool.active < active) {
        pthread_mutex_unlock(&workers[pool.active].park);
        pool.active++;
    }
    while (pool.active > active) {
        int tid = pool.active - 1;
        /* Its private jobs (committed or not) could run on no other thread. */
        if (!spsc_is_empty(&workers[tid].inbox)) return false;
        /* The last worker: the shared jobs would be stranded too. */
        if (tid == 1 && !spmc_is_empty(&shared_inbox)) return false;
        pthread_mutex_lock(&workers[tid].park);
        pool.active--;
    }
    return true;
}
/*@ end */

void (*io_threads_debug_submitted)(job_word job);

/*@ io-threads-submit */
bool io_threads_submit(job_word job) {
    assert(JOB_SHARED_INBOX_TYPES & (1u << job_type(job)));
    if (pool.active < 2 || !spmc_enqueue(&shared_inbox, job)) return false;
    pool.submitted++;
    wake_for_job(0);
    if (io_threads_debug_submitted) io_threads_debug_submitted(job);
    return true;
}
/*@ end */

bool io_threads_submit_to(int tid, job_word job) {
    assert(JOB_PRIVATE_INBOX_TYPES & (1u << job_type(job)));
    if (tid < 1 || tid >= pool.active || !spsc_enqueue(&workers[tid].inbox, job)) return false;
    pool.submitted++;
    if (io_threads_debug_submitted) io_threads_debug_submitted(job);
    return true;
}

/*@ io-threads-commit */
void io_threads_commit(void) {
    /* Parked workers have nothing uncommitted: parking requires an empty
     * private inbox, and submit_to refuses them. */
    for (int tid = 1; tid < pool.active; tid++) {
        spsc_commit(&workers[tid].inbox);
        if (!spsc_is_empty(&workers[tid].inbox)) wake_for_job(tid);
    }
}
/*@ end */

size_t io_threads_pending(void) {
    /* Acquire pairs with the release fetch-and-add in worker_main. A
     * worker may finish a job before main has counted it, but main counts
     * each job right after submitting it, before it can get here: so
     * finished <= submitted in this subtraction. */
    return pool.submitted - atomic_load_explicit(&finished.count, memory_order_acquire);
}

size_t io_threads_queued(void) {
    return spmc_size(&shared_inbox);
}

/*@ io-threads-drain */
void io_threads_drain(void) {
    io_threads_commit();
    /* Rare (reconfiguration, shutdown), so it yields while it waits, which
     * lets a worker that shares this core finish. */
    while (io_threads_pending() > 0) sched_yield();
}
/*@ end */

size_t io_threads_take_results(job_word *out, size_t max) {
    return mpsc_dequeue_batch(&shared_outbox, out, max);
}

void io_threads_send_result(job_word result) {
    assert(thread_id != 0);
    mpsc_send(&shared_outbox, &outbox_producer, result);
}
