/* io_threads.c — the I/O thread pool.
 *
 * Step 2 (threads layer). Main thread = thread 0; workers 1 .. num - 1.
 * See io_threads.h for who may call what.
 * Valkey: the functions io_threads.h names, and the mutex handling of
 * src/io_threads.c's scaling code.
 *
 * THE SHAPE
 *
 * Three kinds of queue connect main to the workers, each with
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
 * THE LOOP
 *
 * A worker repeats: (1) take every job in its private inbox, up
 * to IO_BATCH_SIZE at a time, until it is empty; (2) take one job from the
 * shared inbox; (3) if it did nothing, either retry its spilled results
 * or park. The private inbox goes first because nobody else can run its
 * jobs and they are short (a free, or a poll main is waiting on). Only one
 * shared job is taken per round so the private inbox is looked at again
 * between client jobs, and so the next shared job is left to whichever
 * worker gets to it first.
 *
 * PARKING
 *
 * Each worker has a mutex that main holds for as long as the worker is
 * inactive. An idle worker locks and at once unlocks it: if main holds it,
 * the worker sleeps in the kernel until main unlocks it (that is the whole
 * wake-up), and costs nothing meanwhile; if main does not, the pair is cheap
 * (no other thread wants the mutex) and the loop goes round again. The mutex
 * is the state: there is no flag to check and no wake-up to lose, and every
 * lock is undone by the thread that took it, as POSIX requires. An active
 * worker with nothing to do goes round that loop only for a while and then
 * sleeps (SLEEPING INSTEAD OF SPINNING, below). Workers are numbered so the
 * active ones are always 1 .. active - 1: main wakes upwards and parks from
 * the top. A parked worker may still be finishing the jobs it already took;
 * it parks when it finds nothing more to do.
 *
 * COUNTING
 *
 * Main counts the jobs it submits (a plain field; only main touches it); each
 * worker adds the jobs it ran to one shared counter, once per round rather
 * than once per job, with a release fetch-and-add after the handlers
 * returned. Main reads the counter with acquire, so when submitted - finished
 * reads 0, every handler has returned and everything it wrote is visible to
 * main. That is what io_threads_drain waits for. It cannot wait forever: a
 * job is only submitted to an active worker or, if some worker is active, to
 * the shared inbox; parking is refused while it would strand a job; and a job
 * a worker has taken is run before the worker parks. Results do not count: a
 * job is finished when its handler returns, whether its result is in the
 * outbox yet or spilled.
 *
 * SLEEPING INSTEAD OF SPINNING (WHERE SOLOIST PARTS FROM VALKEY)
 *
 * An active worker with nothing to do spins on its park mutex, and Valkey's
 * does so for as long as it stays active. That is cheap on a machine with
 * cores to spare and ruinous on one without: the spinning worker takes the
 * core the clients or the main thread need. So a soloist worker spins only
 * for io-threads-idle-spin-us (by default a few tens of microseconds, long
 * enough to catch the next request of a busy client), then sleeps in the
 * kernel on a futex of its own (w->asleep). Main does the same while results
 * are owed: Valkey's main spins round its loop until they come; soloist's
 * spins as long as a worker would and then blocks. It blocks in epoll_wait,
 * with an eventfd (idle.main_fd) in its epoll set that a worker writes to
 * when it sends a result; or, while a POLL job has lent epoll_wait to a
 * worker and main waits for the workers alone, on a futex: the word
 * idle.main_asleep, whose value says which of the two main chose, so that
 * the worker knows whether to write the eventfd or wake the futex. The
 * futex costs main one system call a sleep where the eventfd costs two
 * (poll, then read to clear it), and that sleep is the common one.
 *
 * THE THREE HAND-SHAKES
 *
 * Whoever sleeps must not sleep through the one thing that would wake
 * it. Three hand-shakes see to that, drawn below: (1) a job reaching a
 * sleeping worker, (2) the stop flag reaching a sleeping worker, (3) a
 * result reaching a sleeping main. Each has the same shape, Dekker's:
 * the sleeper stores "I am asleep" and then looks for work; the waker
 * publishes work and then looks for sleepers. Each side needs its store
 * to be visible before its own load, and that store-then-load order is
 * the one that release and acquire do not give: a store may wait in the
 * core's store buffer while a later load of another variable goes ahead
 * (x86 does this too). With release and acquire alone, both sides could
 * load before either store is seen, and each would miss the other: a job
 * left with every worker asleep, or a result with main blocked.
 *
 * So the two sides meet on one variable instead, each with a sequentially
 * consistent read-modify-write of it (the waker adds 0, or exchanges).
 * Two read-modify-writes of one variable are totally ordered; whichever
 * comes second reads the first's value and, since each both releases and
 * acquires, sees everything the other side did before its own. That is
 * all the diagrams need. It holds through any number of other
 * read-modify-writes in between (they continue the first's release
 * sequence), so every later write to idle.sleepers and idle.main_asleep
 * is a read-modify-write too, relaxed where it orders nothing; a plain
 * store would cut the chain. (A seq_cst fence on each side would say the
 * same, but ThreadSanitizer does not model fences; this form it checks.)
 * The futex words and the eventfd need no more than that: the kernel
 * compares w->asleep with 1 (idle.main_asleep with MAIN_ON_FUTEX) under
 * its own lock as the thread goes to sleep, and an eventfd that was
 * written stays readable.
 *
 * WHAT THE HAND-SHAKES COST
 *
 * The hand-shakes cost something where nobody sleeps:
 * main adds 0 to idle.sleepers after every job it puts on the shared
 * inbox (and once for each worker whose private inbox a commit
 * publishes), and a worker exchanges idle.main_asleep after every round
 * that ran jobs. Each is a locked instruction on x86 (lock xadd, xchg), a
 * few nanoseconds on a line no other core touches. But a locked
 * instruction also waits until the core's earlier stores have reached its
 * cache, and main's submit has just stored into a cell of the shared
 * inbox that an idle worker is reading: that wait, not the add itself, is
 * most of what the add costs a submit (bench/idle_line.c measures both).
 * The two words have lines of their own (idle, below). idle.sleepers is
 * written by main for every submit and by a worker only as it falls
 * asleep or wakes, so under load its line stays in main's cache.
 * idle.main_asleep, with idle.main_fd and idle.spin_ns beside it, is
 * written by every productive round and by main only around its sleeps.
 * When both shared one line, each submit and each round pulled it from
 * the other core: the benchmark measured the worker's exchange at a line
 * transfer then, against a local operation now.
 *
 * STOPPING
 *
 * Shutdown sets the worker's stop flag and wakes it: with the
 * park mutex if it is parked, with the futex if it sleeps (hand-shake 2).
 * The loop checks the flag between rounds, so a worker never stops in the
 * middle of a handler. (Valkey uses pthread_cancel with a cleanup handler
 * to the same end.)
 *
 * Every atomic operation in this file says, beside it, which operation it
 * pairs with or why it may be relaxed. In the diagrams below, the left
 * column is one thread and the right the other; STORE, LOAD, ADD
 * (atomic_fetch_add) and XCHG (atomic_exchange) name the operations, the
 * last two read-modify-writes, and sc, acq, rel and rlx their memory
 * orders (seq_cst, acquire, release, relaxed); the letters name the steps
 * in the text under each.
 */
/*@ handshake-job */
/* (1) A job reaches a sleeping worker w.
 *
 *   main: wake_for_job, after a submit   worker w: worker_sleep
 *
 *   [a] job into an inbox          rel   [c] STORE w->asleep, 1         rlx
 *   [b] s = ADD idle.sleepers, 0    sc   [d] ADD idle.sleepers, 1        sc
 *       s == 0: return                   [e] take a job from w->inbox
 *       LOAD w->asleep             rlx       and from shared_inbox      acq
 *       1: XCHG w->asleep, 0       rel       found one: do not sleep
 *          FUTEX_WAKE(&w->asleep)        [f] FUTEX_WAIT(&w->asleep, 1)
 *                                        [g] XCHG w->asleep, 0          acq
 *                                            read 0 and [e] found one:
 *                                            pass the wake on
 *                                        [h] run what [e] took
 *
 * Forbidden: [b] reads a count without w (from before [d]) AND [e] misses
 * the job. [b] and [d] are read-modify-writes of idle.sleepers, so one of
 * them comes first. [d] first: [b] reads a count that includes w and
 * acquires [d], so its LOAD sees [c] and main wakes w (or reads 0: w is
 * already awake). [b] first: [d] acquires [b], so [e] sees [a] and w takes
 * the job instead of sleeping. The futex adds nothing to undo it. If
 * main's XCHG comes before [f], the kernel finds 0 and FUTEX_WAIT returns
 * at once; if after, FUTEX_WAKE finds w waiting; and a wake-up that wakes
 * a thread orders the waker's earlier stores before the woken thread's
 * later loads (Linux's memory-barriers.txt, "Sleep and wake-up
 * functions"), so w then finds the job.
 *
 * Also forbidden: a wake spent on a worker that was coming anyway. Main
 * wakes one sleeper per job, the first whose word reads 1. If that is w
 * between [c] and [g] with work of its own from [e], main's job may be
 * left with another worker asleep, for as long as w is busy with what it
 * found. Two rules close it. w runs nothing until [g] has said it is
 * awake, so a wake can land on it only in those few instructions, never
 * while it runs a job. And a w whose [g] reads 0 (main's XCHG came first)
 * after [e] found work passes the wake on to the first other sleeper, as
 * main would have: [g] acquires main's release, so w sees every sleeper
 * main saw.
 */
/*@ end */
/*@ handshake-stop */
/* (2) The stop flag reaches a sleeping worker w.
 *
 *   main: io_threads_shutdown            worker w: worker_sleep
 *
 *   [a] STORE w->stop, true        rlx   [c] STORE w->asleep, 1         rlx
 *   [b] ADD idle.sleepers, 0        sc   [d] ADD idle.sleepers, 1        sc
 *       (parked: unlock w->park)         [e] no job found;
 *       LOAD w->asleep             rlx       LOAD w->stop               rlx
 *       1: XCHG w->asleep, 0       rlx       true: do not sleep
 *          FUTEX_WAKE(&w->asleep)        [f] FUTEX_WAIT(&w->asleep, 1)
 *
 * Forbidden: main's LOAD reads w->asleep from before [c] AND [e] reads
 * w->stop from before [a]. The argument of (1): [d] first, main sees [c]
 * and wakes w; [b] first, [e] sees [a] and w does not sleep. Either way
 * w is not left asleep with the flag set, which is enough: its loop
 * checks the flag after every sleep. Main does not need [b]'s value, only
 * its place in the order. A parked worker needs no hand-shake: main
 * unlocks w->park after [a], and the lock w then takes acquires it.
 */
/*@ end */
/*@ handshake-result */
/* (3) A result reaches a sleeping main.
 *
 *   worker: worker_main, wake_main       main: main_may_block (io_offload.c)
 *
 *   [a] results into shared_outbox rel   [c] XCHG idle.main_asleep, how  sc
 *   [b] m = XCHG idle.main_asleep, 0 sc      (how: EPOLL or FUTEX)
 *       m == EPOLL: write(idle.main_fd)  [d] a result in shared_outbox? acq
 *       m == FUTEX: FUTEX_WAKE               yes: do not block
 *                                        [e] EPOLL: epoll_wait, idle.main_fd
 *                                            in its set;
 *                                            FUTEX: FUTEX_WAIT(word, FUTEX)
 *                                        [f] woken: io_threads_main_sleep_end
 *                                            XCHG idle.main_asleep, 0    sc
 *
 * Forbidden: [b] reads 0 from before [c] AND [d] misses [a]. [c] first:
 * [b] reads how main sleeps and wakes it that way. The eventfd's write
 * ends epoll_wait, or makes it return at once if main gets there later.
 * FUTEX_WAKE ends a FUTEX_WAIT already under way; one that starts after
 * [b]'s XCHG finds the word 0, not FUTEX, and returns at once (as in
 * (1)). [b] first: [c] acquires [b], so [d] sees [a] and main does not
 * block. Either way main
 * is not left blocked with a result in the outbox, which is enough: main
 * takes every result each turn. With several workers, one takes the flag
 * and another's [b] may read the 0 it left: then main wakes for the
 * first one's wake-up, and [f] comes either after the second [b] (and
 * acquires it, so main sees its results once awake) or before it (and the
 * next [c] meets that [b] as above). That is why [f] is an exchange and
 * not a store: a store would cut the chain of read-modify-writes, and main
 * could sleep on the second worker's result.
 *
 * [f] does not read the eventfd. Main's handler for the eventfd's event
 * does, in the turn whose epoll_wait found it readable; a write that
 * lands later leaves it readable, and the next epoll_wait (main's, or the
 * POLL job's on main's set) returns at once for it: one spare turn, never
 * a lost wake. A late FUTEX_WAKE, from a worker whose [b] read FUTEX just
 * before main woke for another reason, may end main's next sleep early;
 * that too costs a turn, nothing more.
 */
/*@ end */
#include "io_threads.h"
#include "io_threads_test.h"

#include "queue_mpsc.h"
#include "queue_spmc.h"
#include "queue_spsc.h"
#include "trace.h"
#include "util.h"

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

static_assert(IO_THREADS_MAX <= TRACE_THREADS_MAX, "every thread of a pool has a trace ring");

typedef struct io_worker {
    spsc_queue inbox;     /* main -> this worker; first, so line-aligned */
    pthread_mutex_t park; /* held by main while the worker is inactive */
    pthread_t thread;
    /* Set by main at shutdown, read by the worker between rounds and
     * before it sleeps. Relaxed on both sides: it guards no data (the
     * join orders the worker's last writes before main goes on). It
     * reaches a parked worker through the park mutex main unlocks after
     * setting it, a sleeping or falling-asleep one through hand-shake 2,
     * and a spinning one within a round or two (coherence). */
    atomic_bool stop;
    _Atomic uint32_t asleep; /* the futex word: 1 while the worker sleeps (or is about to) */
    int id;
} io_worker;

/* Each group of globals below is aligned to a line of its own, so that
 * main's writes to its bookkeeping never evict the lines the workers read
 * for every job (the handler table) and the reverse. */

/* Main's bookkeeping: only main writes it. active and submitted are
 * main's alone; num is read by the workers too (worker_sleep passes a wake
 * on across the pool), with no atomic needed: main sets it before it
 * starts the workers and clears it after the last join, so it never
 * changes while a worker runs. */
static struct {
    _Alignas(CACHE_LINE_SIZE) int num; /* threads in the pool counting main; 0: none */
    int active;                        /* main and workers 1 .. active - 1 are active */
    size_t submitted;                  /* jobs put on any inbox, ever */
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
static struct { _Alignas(CACHE_LINE_SIZE) _Atomic size_t count; } finished;

/* The time each worker has spent running jobs, in ns (INFO iothreads'
 * busy_us, what soloist-top divides by the wall clock): written only by
 * worker [tid], read by main for INFO. One line per worker, so a worker's
 * count never shares a line another thread writes. Not reset by a new
 * pool: like the job counters, they run from the server's start. */
static struct { _Alignas(CACHE_LINE_SIZE) _Atomic uint64_t ns; } busy[IO_THREADS_MAX];

/* How main sleeps, in idle.main_asleep (0: awake): in epoll_wait, with the
 * eventfd in its set, or, while a POLL job has epoll_wait, on the word
 * itself as a futex. */
enum { MAIN_IN_EPOLL = 1, MAIN_ON_FUTEX = 2 };

/*@ idle-line */
/* The sleeping hand-shakes' words, on two lines. sleepers: main adds 0
 * for every job it submits, a worker writes it only as it falls asleep
 * and wakes, so under load the line stays in main's cache. main_asleep:
 * a worker exchanges it after every round that ran jobs, main only
 * around its sleeps; idle workers read spin_ns beside it. On one line,
 * every submit and every round would pull it from the other core
 * (bench/idle_line.c). */
static struct {
    _Alignas(CACHE_LINE_SIZE) _Atomic int sleepers;         /* workers asleep or about to be */
    _Alignas(CACHE_LINE_SIZE) _Atomic uint32_t main_asleep; /* 0, or how main (about to) sleeps: MAIN_IN_* */
    int main_fd;              /* the eventfd that wakes main in epoll_wait; -1 when none */
    _Atomic uint64_t spin_ns; /* idle spin before sleeping; main sets it, relaxed: it orders nothing */
} idle = {.main_fd = -1, .spin_ns = 20000};
/*@ end */

static _Thread_local int thread_id;                 /* 0 = main */
static _Thread_local mpsc_producer outbox_producer; /* a worker's outbox side */

/* Which thread is main, for ASSERT_MAIN_THREAD: io_threads_init counts
 * its calls in main_generation, and the caller keeps the count it made in
 * main_seen; main is the thread whose count is the latest. 0: no call yet.
 * A number, not a pthread_t, so that any thread may compare without a
 * lock; a forked child keeps its parent's thread-local copy. */
static _Atomic unsigned main_generation;
static _Thread_local unsigned main_seen;

/* Sleeps while *word holds expected, until woken, the timeout (NULL:
 * none) passes or a signal comes. */
static void futex_wait(_Atomic uint32_t *word, uint32_t expected, const struct timespec *timeout) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, timeout, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*@ wake-main */
/* Worker: after a round that ran jobs (most send results), or after it
 * flushed results it had kept back, wakes main if it says it is asleep
 * (hand-shake 3, [b]). */
static void wake_main(void) {
    /* seq_cst RMW: meets main's exchanges in io_threads_main_sleep_begin
     * ([c]) and io_threads_main_sleep_end ([f]). */
    uint32_t how = atomic_exchange_explicit(&idle.main_asleep, 0, memory_order_seq_cst);
    if (how == MAIN_IN_EPOLL) {
        uint64_t one = 1;
        ssize_t w = write(idle.main_fd, &one, sizeof one);
        (void)w; /* the counter cannot overflow: main's handler for it reads it */
    } else if (how == MAIN_ON_FUTEX) {
        futex_wake(&idle.main_asleep);
    }
}
/*@ end */

/*@ wake-for-job */
/* Main, or a worker passing a wake on: wakes worker w if it sleeps; true
 * if it did. The load first, so that a worker that is awake does not have
 * its line written. */
static bool wake_if_asleep(io_worker *w) {
    /* The load is relaxed: after the ADD in wake_for_job or
     * io_threads_shutdown, which acquired the worker's ADD, it cannot miss
     * the worker's STORE of 1 (hand-shakes 1 and 2); the kernel orders
     * the rest (the essay). The exchange, not a store, says whether this
     * caller is the one that woke w; it releases, pairing with w's
     * exchange at [g], so that a worker that must pass the wake on sees
     * the sleepers this thread saw. */
    if (!atomic_load_explicit(&w->asleep, memory_order_relaxed) ||
        !atomic_exchange_explicit(&w->asleep, 0, memory_order_release))
        return false;
    futex_wake(&w->asleep);
    return true;
}

/* Wakes the first of workers 1 .. upto - 1 that sleeps, other than
 * worker skip (0: none); true if one was. */
static bool wake_first_asleep(int upto, int skip) {
    for (int t = 1; t < upto; t++)
        if (t != skip && wake_if_asleep(&workers[t])) return true;
    return false;
}

/* Main, after publishing a job: wakes worker tid if it sleeps, or, for a
 * shared-inbox job (tid 0), one sleeping active worker (hand-shake 1, [b]). */
static void wake_for_job(int tid) {
    /* seq_cst RMW: meets the ADD in worker_sleep ([d]). */
    if (atomic_fetch_add_explicit(&idle.sleepers, 0, memory_order_seq_cst) == 0) return;
    if (tid)
        wake_if_asleep(&workers[tid]);
    else
        wake_first_asleep(pool.active, 0);
}
/*@ end */

void io_threads_set_idle_spin_us(unsigned us) {
    /* Relaxed: a tuning value that guards no data; workers read it for a
     * heuristic and may use the old one for a while. */
    atomic_store_explicit(&idle.spin_ns, (uint64_t)us * 1000, memory_order_relaxed);
    /* Sleepers go round once, so that a longer spin applies to them too.
     * No hand-shake: one falling asleep just now keeps the old spin. */
    for (int tid = 1; tid < pool.num; tid++) wake_if_asleep(&workers[tid]);
}

int io_threads_main_wake_fd(void) { return idle.main_fd; }

/*@ main-sleep-begin */
/* Hand-shake 3, [c]: main says it is about to block, and how. */
bool io_threads_main_sleep_begin(bool on_futex) {
    if (idle.main_fd == -1) return false;
    /* seq_cst RMW: meets wake_main's */
    atomic_exchange_explicit(&idle.main_asleep, on_futex ? MAIN_ON_FUTEX : MAIN_IN_EPOLL, memory_order_seq_cst);
    return true;
}

/* Hand-shake 3, [e] on the futex: blocks until a worker takes the flag
 * (or took it already: the kernel then finds 0 and returns at once), the
 * timeout passes or a signal comes. timeout_ms < 0: no timeout. */
void io_threads_main_wait(long long timeout_ms) {
    if (timeout_ms == 0) return;
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = timeout_ms % 1000 * 1000000};
    futex_wait(&idle.main_asleep, MAIN_ON_FUTEX, timeout_ms < 0 ? NULL : &ts);
}

/* Hand-shake 3, [f]: main is awake again. The eventfd is not read here:
 * main's handler for it does that, in the turn whose epoll_wait found it
 * readable (or the next), so a sleep costs one read at most, and a sleep
 * on the futex none. */
void io_threads_main_sleep_end(void) {
    /* seq_cst RMW, not a store: it continues the chain of exchanges, so a
     * worker's exchange that read 0 before it is acquired here (the
     * essay's diagram 3). */
    atomic_exchange_explicit(&idle.main_asleep, 0, memory_order_seq_cst);
}

/* Main: the eventfd's event. Clears the wake-up a worker wrote. */
void io_threads_main_clear_wake(void) {
    uint64_t v;
    ssize_t r = read(idle.main_fd, &v, sizeof v); /* non-blocking */
    (void)r;
}
/*@ end */

int io_thread_id(void) { return thread_id; }

bool io_threads_on_main(void) {
    /* Relaxed: main reads its own latest store, or a later one if another
     * thread has since become main, so main never fails; another thread
     * never passes unless it reads a stale count of its own. */
    unsigned now = atomic_load_explicit(&main_generation, memory_order_relaxed);
    return now == 0 || now == main_seen;
}

void io_threads_assert_main(const char *func) {
    if (io_threads_on_main()) return;
    fprintf(stderr, "io_threads: %s called off the main thread (io_thread_id %d)\n", func, thread_id);
    abort();
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
    TRACE(thread_id, TRACE_JOB_TAKE, type, allowed == JOB_PRIVATE_INBOX_TYPES ? thread_id : 0, job);
    handlers.proc[type](job_ptr(job));
}
/*@ end */

/*@ io-thread-main */
/* Runs jobs a worker took: n from its private inbox, in batch, and one
 * from the shared inbox (0: none). Returns how many. The time they took
 * goes into the worker's busy count; a round that took nothing reads no
 * clock, so the idle spin stays as cheap as it was. The count is a
 * relaxed load and store, not a read-modify-write: this worker is its
 * only writer, and main only reads it. */
static size_t run_taken(const job_word *batch, size_t n, job_word shared) {
    if (n == 0 && !shared) return 0;
    uint64_t t0 = util_monotonic_ns();
    for (size_t i = 0; i < n; i++) run_job(batch[i], JOB_PRIVATE_INBOX_TYPES);
    if (shared) run_job(shared, JOB_SHARED_INBOX_TYPES);
    _Atomic uint64_t *ns = &busy[thread_id].ns;
    atomic_store_explicit(ns, atomic_load_explicit(ns, memory_order_relaxed) + (util_monotonic_ns() - t0),
                          memory_order_relaxed);
    return n + (shared != 0);
}

static void count_finished(size_t done) {
    /* Release pairs with the acquire load in io_threads_pending: the
     * handlers' writes are visible to main once it counts these jobs as
     * finished. */
    if (done > 0) atomic_fetch_add_explicit(&finished.count, done, memory_order_release);
}

/* One round: the private inbox, all of it (only this thread can run
 * it), then one job from the shared inbox. Returns the jobs run. */
static size_t worker_round(io_worker *w, job_word *batch) {
    size_t done = 0, n;
    while ((n = spsc_dequeue_batch(&w->inbox, batch, IO_BATCH_SIZE)) > 0) done += run_taken(batch, n, 0);
    done += run_taken(batch, 0, spmc_dequeue(&shared_inbox));
    count_finished(done);
    return done;
}

void (*_Atomic io_threads_debug_sleep)(int step);

/* Relaxed: the hook's own state is the test's, in atomics of its own. */
static void debug_sleep(int step) {
    void (*hook)(int) = atomic_load_explicit(&io_threads_debug_sleep, memory_order_relaxed);
    if (hook) hook(step);
}

/* Idle past the spin: says so, takes one last look, and sleeps unless
 * that found work, the stop flag, or main's wake (hand-shakes 1 and 2,
 * the worker's side: [c] to [h]). Returns the jobs run. */
static size_t worker_sleep(io_worker *w, job_word *batch) {
    debug_sleep(IO_SLEEP_STEP_BEGIN);
    /* Relaxed: main reads it only after an ADD that acquired the one
     * below, and the kernel compares it under its own lock. */
    atomic_store_explicit(&w->asleep, 1, memory_order_relaxed);
    /* seq_cst RMW: meets the ADD of 0 in wake_for_job and in
     * io_threads_shutdown ([d] against [b]). */
    atomic_fetch_add_explicit(&idle.sleepers, 1, memory_order_seq_cst);
    /* [e] takes what it finds but runs nothing yet: while w->asleep reads
     * 1, main may spend a wake on this worker, so it says it is awake
     * ([g]) before it can be busy. */
    size_t n = spsc_dequeue_batch(&w->inbox, batch, IO_BATCH_SIZE);
    job_word shared = spmc_dequeue(&shared_inbox);
    bool found = n > 0 || shared != 0;
    if (found) debug_sleep(IO_SLEEP_STEP_FOUND);
    /* Relaxed load of stop: the ADD above ordered it after main's store
     * (hand-shake 2). */
    bool waits = !found && !atomic_load_explicit(&w->stop, memory_order_relaxed);
    if (waits) {
        debug_sleep(IO_SLEEP_STEP_WAIT);
        TRACE(w->id, TRACE_SLEEP_BEGIN, 0, 0, 0);
        futex_wait(&w->asleep, 1, NULL);
    }
    /* Acquire pairs with the release exchange in wake_if_asleep: reading
     * main's 0, this worker sees every sleeper main saw, for the wake it
     * passes on below. */
    bool woken = atomic_exchange_explicit(&w->asleep, 0, memory_order_acquire) == 0;
    if (waits) TRACE(w->id, TRACE_SLEEP_END, woken, 0, 0);
    /* Relaxed: it announces nothing (an awake worker still counted costs
     * main one look at its asleep word), but a read-modify-write, not a
     * store, so that the chain of RMWs the hand-shakes meet on holds. */
    atomic_fetch_sub_explicit(&idle.sleepers, 1, memory_order_relaxed);
    /* Main spent a wake on this worker as it left its sleep with work of
     * its own: pass it on, as wake_for_job would have. pool.num, not
     * pool.active, which is main's: it only changes while no worker runs,
     * and an active sleeper has a lower id than any parked one. */
    if (found && woken) wake_first_asleep(pool.num, w->id);
    size_t done = run_taken(batch, n, shared);
    count_finished(done);
    return done;
}

/* Idle: blocks here while main holds the mutex (parked), and takes and
 * gives it back at once while active. While recording, a block is a
 * span: a try first says whether the lock will wait. */
static void pass_park(io_worker *w) {
    if (!trace_on()) {
        pthread_mutex_lock(&w->park);
    } else if (pthread_mutex_trylock(&w->park) != 0) {
        trace_emit(w->id, TRACE_PARK_BEGIN, 0, 0, 0);
        pthread_mutex_lock(&w->park);
        trace_emit(w->id, TRACE_PARK_END, 0, 0, 0);
    }
    pthread_mutex_unlock(&w->park);
}

static void *worker_main(void *arg) {
    io_worker *w = arg;
    thread_id = w->id;
    job_word batch[IO_BATCH_SIZE];
    uint64_t idle_since = 0; /* 0: not idle */
    unsigned idle_rounds = 0;
    while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) { /* relaxed: see io_worker's stop */
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
            pass_park(w);
            if (idle_since == 0) {
                idle_since = util_monotonic_ns();
                idle_rounds = 0;
            } else if (++idle_rounds % 64 == 0) {
                /* Relaxed: a heuristic; a stale value spins a little long or short. */
                if (util_monotonic_ns() - idle_since >= atomic_load_explicit(&idle.spin_ns, memory_order_relaxed)) {
                    if (worker_sleep(w, batch) > 0) wake_main();
                    idle_since = 0;
                }
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
    /* Relaxed: only this thread's copy is compared with it (io_threads_on_main). */
    main_seen = atomic_fetch_add_explicit(&main_generation, 1, memory_order_relaxed) + 1;
    trace_set_main_check(io_threads_on_main);
    spmc_init(&shared_inbox);
    mpsc_init(&shared_outbox);
    /* Relaxed, these three and the stop flags below: no worker exists yet,
     * and pthread_create orders them before anything a worker does. (So
     * these stores are the only writes to sleepers and main_asleep that
     * are not read-modify-writes: no chain is running to be cut.) */
    atomic_store_explicit(&finished.count, 0, memory_order_relaxed);
    pool.submitted = 0;
    pool.active = 1;
    pool.num = num;
    atomic_store_explicit(&idle.sleepers, 0, memory_order_relaxed);
    atomic_store_explicit(&idle.main_asleep, 0, memory_order_relaxed);
    if (num > 1 && idle.main_fd == -1) idle.main_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    /* From the top down: main holds every parked worker's mutex, and
     * always takes them in one order, higher ids first (parking goes from
     * the top), so that no two of its locks are ever taken in both orders
     * (ThreadSanitizer's lock-order check holds main to that). */
    for (int id = num - 1; id >= 1; id--) {
        io_worker *w = &workers[id];
        spsc_init(&w->inbox);
        atomic_init(&w->stop, false); /* before its thread exists: see above */
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
        /* Hand-shake 2, [a] and [b]. The flag is relaxed (io_worker says
         * why); the seq_cst RMW meets the ADD in worker_sleep ([d]), so
         * either w sees the flag before it sleeps or wake_if_asleep sees
         * it asleep. */
        atomic_store_explicit(&w->stop, true, memory_order_relaxed);
        atomic_fetch_add_explicit(&idle.sleepers, 0, memory_order_seq_cst);
        if (id >= pool.active) pthread_mutex_unlock(&w->park); /* parked: the lock it takes sees the flag */
        wake_if_asleep(w);                                     /* asleep, or falling asleep: hand-shake 2 */
        pthread_join(w->thread, NULL);
        pthread_mutex_destroy(&w->park);
    }
    pool.num = 0;
    pool.active = 0;
}

int io_threads_num(void) { return pool.num; }

uint64_t io_threads_busy_ns(int tid) {
    return tid > 0 && tid < IO_THREADS_MAX ? atomic_load_explicit(&busy[tid].ns, memory_order_relaxed) : 0;
}

int io_threads_active(void) { return pool.active; }

/*@ io-threads-set-active */
bool io_threads_set_active(int active) {
    ASSERT_MAIN_THREAD();
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
    ASSERT_MAIN_THREAD();
    assert(JOB_SHARED_INBOX_TYPES & (1u << job_type(job)));
    if (pool.active < 2) return false;
    /* Stamped before the job is published, so before its take. */
    TRACE(0, TRACE_JOB_SUBMIT, job_type(job), 0, job);
    if (!spmc_enqueue(&shared_inbox, job)) {
        TRACE(0, TRACE_JOB_REFUSED, job_type(job), 0, job);
        return false;
    }
    pool.submitted++;
    wake_for_job(0);
    if (io_threads_debug_submitted) io_threads_debug_submitted(job);
    return true;
}
/*@ end */

bool io_threads_submit_to(int tid, job_word job) {
    ASSERT_MAIN_THREAD();
    assert(JOB_PRIVATE_INBOX_TYPES & (1u << job_type(job)));
    if (tid < 1 || tid >= pool.active) return false;
    TRACE(0, TRACE_JOB_SUBMIT, job_type(job), tid, job);
    if (!spsc_enqueue(&workers[tid].inbox, job)) {
        TRACE(0, TRACE_JOB_REFUSED, job_type(job), tid, job);
        return false;
    }
    pool.submitted++;
    if (io_threads_debug_submitted) io_threads_debug_submitted(job);
    return true;
}

/*@ io-threads-commit */
void io_threads_commit(void) {
    ASSERT_MAIN_THREAD();
    /* Parked workers have nothing uncommitted: parking requires an empty
     * private inbox, and submit_to refuses them. */
    for (int tid = 1; tid < pool.active; tid++) {
        spsc_commit(&workers[tid].inbox);
        if (!spsc_is_empty(&workers[tid].inbox)) wake_for_job(tid);
    }
}
/*@ end */

size_t io_threads_pending(void) {
    /* Acquire pairs with the release fetch-and-add in count_finished, which a
     * worker calls after each round and each sleep. A worker may finish a job
     * before main has counted it, but main counts each job right after
     * submitting it, before it can get here: so finished <= submitted in this
     * subtraction. */
    return pool.submitted - atomic_load_explicit(&finished.count, memory_order_acquire);
}

size_t io_threads_queued(void) { return spmc_size(&shared_inbox); }

/*@ io-threads-drain */
void io_threads_drain(void) {
    ASSERT_MAIN_THREAD();
    io_threads_commit();
    /* Rare (reconfiguration, shutdown), so it yields while it waits, which
     * lets a worker that shares this core finish. */
    while (io_threads_pending() > 0) sched_yield();
}
/*@ end */

size_t io_threads_take_results(job_word *out, size_t max) {
    ASSERT_MAIN_THREAD();
    return mpsc_dequeue_batch(&shared_outbox, out, max);
}

void io_threads_send_result(job_word result) {
    assert(thread_id != 0);
    mpsc_send(&shared_outbox, &outbox_producer, result);
}
