/* io_offload.c — what the I/O threads do for the server, and when.
 *
 * Steps 4 and 5 (main-io layer, below networking.c, which it calls back
 * only through the main halves it registered: io_offload.h says why).
 * io_offload.h lists what it owns.
 * Threads: main only, except the six job handlers (worker_read,
 * worker_write, worker_free_argv, worker_free_obj, worker_poll,
 * worker_accept), which run on workers and touch only what their job
 * hands them.
 * Valkey: the functions io_offload.h names, at the pinned commit.
 *
 * THE DECISION, AT EVERY CALL SITE
 *
 * Each place where main is about to do a piece of work a worker could do
 * asks here first, and gets one of two answers: a worker owns it now, or
 * main does it itself, at once, exactly as the step-0 server did. There
 * is no third answer ("later"), so no piece of work can be lost between
 * two threads: the inline path is always there. The work stays on main
 * when no worker is active, when the inbox is full, or when the client
 * may not go now (it is closing, or has nothing to write); each reason is
 * counted (INFO iothreads, io_fallbacks).
 *
 * THE HAND-OFF
 *
 * A client changes owner per direction, and its io_read_state or
 * io_write_state says who owns it. The order of the hand-off is the
 * whole correctness argument, so it is spelled out:
 *
 *   main:   fill the job's inputs (limits, the watermark), store
 *           PENDING, then enqueue. The enqueue is a release store, so the
 *           worker that dequeues the job sees the inputs and the token.
 *           If the enqueue fails, store IDLE back and do the work inline.
 *   worker: do the I/O, store COMPLETED with release after its last touch
 *           of the client, then send the result to the outbox.
 *   main:   take the result (an acquire), check COMPLETED, store IDLE,
 *           and do the main-thread half (networking.c's client_read_done,
 *           client_write_done, through the halves it registered).
 *
 * Were the token stored after the enqueue, a fast worker could finish and
 * store COMPLETED first; main's late PENDING would then overwrite it and
 * the client would look owned for ever. While the token is not IDLE, main
 * touches none of that direction's fields, and a client freed meanwhile
 * (CLIENT KILL, a timeout, an output limit) is only flagged; networking.c
 * frees it after the result comes back. The two directions use disjoint
 * fields, so a read job and a write job may run for one client at once:
 * that is what lets main append the replies of the next commands while a
 * worker writes the earlier ones, up to the watermark (client_io.c).
 *
 * THE POLL
 *
 * While results are owed, main must not sleep in epoll_wait (they would
 * wait for the next socket event). Valkey's answer is to hand the poll to
 * a worker: a POLL job runs ae_poll with a zero timeout and publishes how
 * many events fired, and main, instead of polling, asks whether the job
 * is done (poll_custom), which keeps it from sleeping. (Valkey's main
 * never polls with a zero timeout of its own for owed results; soloist's
 * also asks for one when no POLL job could be sent, and, past its spin,
 * blocks on the pool's futex word instead of spinning on a POLL job that
 * waits behind a long job: wait_for_workers.) One flag,
 * poll_state, makes sure at most one thread is ever in epoll_wait: main
 * polls only while no POLL job is out, and sends one only when none is.
 * The job goes to the shared inbox while at most 9 threads are active,
 * counting main (the first free worker takes it), and above that to the
 * workers' private inboxes in turn (Valkey's comment: fewer pollers
 * contend on the shared inbox, private inboxes give lower latency at high
 * thread counts).
 *
 * THE FREES
 *
 * An argument vector parsed by worker t was allocated from t's allocator
 * arena. Freed on main, each chunk would still go back to t's arena (glibc
 * and jemalloc return a chunk to its own arena, past a small per-thread
 * cache), but main would take t's arena lock and touch cold lines to do it;
 * freed on t, both stay on t's core. After a command, each argument the
 * keyspace kept (its refcount above 1) is released on main, and the rest go
 * to t's private inbox in one job, unpublished until the loop's commit. The
 * job carries no length: the last object to free has its refcount set to 0 as
 * the end mark (Valkey's trick), and the other slots are NULL.
 */
#include "io_offload.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ae.h"
#include "client_io.h"
#include "commands.h"
#include "db.h"
#include "ignition.h"
#include "io_threads.h"
#include "memory_prefetch.h"
#include "reply.h"
#include "server.h"
#include "trace.h"
#include "util.h"
#include "zmalloc.h"

/* Main's bookkeeping. */
static struct {
    uint64_t reads_pending, writes_pending; /* results owed by workers */
    uint64_t reads_done, writes_done, polls_done, argv_frees, obj_frees, accepts_done;
    uint64_t fallbacks[IO_FALLBACK_COUNT];
    int poll_rr;            /* the next private inbox a POLL job goes to */
    uint64_t idle_since_us; /* main's turns have found nothing since (0: they found work) */
    bool poll_may_block;    /* this turn's poll may block although results are owed */
    bool wake_fd_added;     /* the pool's eventfd is in the event loop */
    int spin_us;            /* the idle spin the workers were last told */
    /* Main's spin, measured: the wall time of loop turns that found no
     * event and no result while results were owed and main did not block
     * (INFO io_threads_main_spin_us). Spinning is on-CPU, so this is CPU
     * main burned waiting, which a benchmark may set apart from its work. */
    uint64_t spin_from_us, main_spin_us;
    /* io-write-watermark no: how often, and how long, main waited for a
     * worker's write before running the client's next commands. */
    uint64_t write_waits, write_wait_us;
    /* Results taken from the outbox and not handled yet: taken[taken_pos,
     * taken_len). A drain (CONFIG SET io-threads) appends here and leaves
     * them for before_sleep: it runs inside a command, and a result's
     * main half would run other clients' commands. */
    job_word *taken;
    size_t taken_pos, taken_len, taken_cap;
} io;

/* networking.c's main halves (io_offload_set_main_halves). */
static io_offload_main_halves halves;

/* The policy that wakes and parks workers (ignition.c), and the one set
 * of counters of the pool's moves: set_active tells it of every move,
 * whoever asked for it (ignition_note_move). */
static ignition policy;

static void taken_reserve(size_t more) {
    if (io.taken_len + more <= io.taken_cap) return;
    while (io.taken_cap < io.taken_len + more) io.taken_cap = io.taken_cap ? io.taken_cap * 2 : 64;
    io.taken = zrealloc(io.taken, io.taken_cap * sizeof(*io.taken));
}

/* The poll offload's one flag (see "The poll" above). */
enum { IO_POLL_NONE = 0, IO_POLL_OUT, IO_POLL_DONE };
static _Atomic int poll_state;
static _Atomic int poll_fired; /* the POLL job's event count */

/* Jobs each worker ran, by type: written by that worker only (relaxed;
 * INFO reads them), one line per worker so their counting never shares. */
static struct { _Alignas(64) _Atomic uint64_t jobs[JOB_REQ_COUNT]; } worker_stats[IO_THREADS_MAX];

static void count_job(job_request type) {
    atomic_fetch_add_explicit(&worker_stats[io_thread_id()].jobs[type], 1, memory_order_relaxed);
}

/* ------------------------------------------------------ on a worker */

/*@ worker-read */
/* The end of every client job: the token goes to COMPLETED with release,
 * after the job's last touch of the client, so a thread that sees
 * COMPLETED with acquire (handle_result, io_offload_wait_read) sees all
 * the job wrote; then the client goes back to main through the outbox. */
static void hand_back(client *c, _Atomic uint8_t *state, job_result result, job_request counted) {
    count_job(counted);
    TRACE(io_thread_id(), TRACE_RESULT_SEND, c->id, counted, 0);
    atomic_store_explicit(state, CLIENT_IO_COMPLETED, memory_order_release);
    io_threads_send_result(job_encode(c, result));
}

static void worker_read(void *payload) {
    client *c = payload;
    c->cur_tid = io_thread_id();
    client_io_read(c);
    commands_lookup_queued(c); /* the table lookups main would make */
    hand_back(c, &c->io_read_state, JOB_RES_READ_CLIENT, JOB_REQ_READ_CLIENT);
}
/*@ end */

/* ACCEPT: the new connection's socket options and addresses; handed back
 * as a read result, as in Valkey. */
static void worker_accept(void *payload) {
    client *c = payload;
    client_io_accept(c);
    hand_back(c, &c->io_read_state, JOB_RES_READ_CLIENT, JOB_REQ_ACCEPT);
}

static void worker_write(void *payload) {
    client *c = payload;
    client_io_write(c);
    hand_back(c, &c->io_write_state, JOB_RES_WRITE_CLIENT, JOB_REQ_WRITE_CLIENT);
}

/*@ worker-free-argv */
static void worker_free_argv(void *payload) {
    obj **argv = payload;
    for (int i = 0;; i++) {
        obj *o = argv[i];
        if (!o) continue;       /* released on main */
        if (o->refcount == 0) { /* the end mark */
            obj_free(o);
            break;
        }
        obj_decr_ref(o);
    }
    zfree(argv);
    count_job(JOB_REQ_FREE_ARGV);
}
/*@ end */

/*@ worker-free-obj */
static void worker_free_obj(void *payload) {
    obj_free(payload);
    count_job(JOB_REQ_FREE_OBJ);
}
/*@ end */

/*@ worker-poll */
static void worker_poll(void *payload) {
    int n = ae_poll(payload, 0);
    count_job(JOB_REQ_POLL);
    TRACE(io_thread_id(), TRACE_POLL_JOB_BACK, n, 0, 0);
    atomic_store_explicit(&poll_fired, n, memory_order_relaxed);
    /* Release: pairs with poll_custom's acquire, which then reads the
     * fired events ae_poll stored and poll_fired. */
    atomic_store_explicit(&poll_state, IO_POLL_DONE, memory_order_release);
}
/*@ end */

/* ------------------------------------------------------- the call sites */

/* Work stays on main; counted when there was a pool to give it to (the
 * step-0 server, io-threads 1, has nothing to fall back from). */
static bool fallback(enum io_fallback why) {
    if (io_threads_num() >= 2) io.fallbacks[why]++;
    return false;
}

/* A read's hand-off ("The hand-off" above). True: a worker owns c's
 * input now, and a result is owed (io.reads_pending: take_results takes
 * nothing while no result is owed). False: main reads it itself, at once;
 * the token is IDLE and the reason counted: no active worker (inactive),
 * a client that is closing, has no socket, or is blocked or just
 * unblocked (not_eligible), or an inbox that refused the job
 * (queue_full). */
/*@ offload-read */
bool io_offload_read(client *c) {
    /* A blocked or just-unblocked client reads on main: whoever unblocks it
     * must find its command queue free (blocked.c's essay; Valkey's
     * trySendReadToIOThreads keeps such reads on main too). */
    /*@ exercise: blocked-reads */
    if (c->flags & (CLIENT_BLOCKED | CLIENT_UNBLOCKED))
        return fallback(io_threads_active() < 2 ? IO_FALLBACK_INACTIVE : IO_FALLBACK_NOT_ELIGIBLE);
    /*@ end */
    /*@ exercise: read-handoff */
    if (io_threads_active() < 2) return fallback(IO_FALLBACK_INACTIVE);
    if (c->fd == -1 || (c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY)))
        return fallback(IO_FALLBACK_NOT_ELIGIBLE);
    /* The token first: the enqueue publishes it with the job. */
    atomic_store_explicit(&c->io_read_state, CLIENT_IO_PENDING, memory_order_relaxed);
    if (!io_threads_submit(job_encode(c, JOB_REQ_READ_CLIENT))) {
        atomic_store_explicit(&c->io_read_state, CLIENT_IO_IDLE, memory_order_relaxed);
        return fallback(IO_FALLBACK_QUEUE_FULL);
    }
    io.reads_pending++;
    return true;
    /*@ end */
}
/*@ end */

/* The same for a write of c's pending replies (io.writes_pending), bounded
 * by the watermark (client_io_mark_write), which is set before the token;
 * a worker has no limit per job (io_write_max 0, after the mark, which sets
 * main's). Not eligible: CLIENT_CLOSE_ASAP, no socket, or nothing to write;
 * a client closing after its reply still has that reply written. */
/*@ offload-write */
bool io_offload_write(client *c) {
    /*@ exercise: write-handoff */
    if (io_threads_active() < 2) return fallback(IO_FALLBACK_INACTIVE);
    if (c->fd == -1 || (c->flags & CLIENT_CLOSE_ASAP) || !client_has_pending_replies(c))
        return fallback(IO_FALLBACK_NOT_ELIGIBLE);
    client_io_mark_write(c); /* step 5: the worker writes up to here */
    c->io_write_max = 0;     /* step 7: and until the socket is full */
    atomic_store_explicit(&c->io_write_state, CLIENT_IO_PENDING, memory_order_relaxed);
    if (!io_threads_submit(job_encode(c, JOB_REQ_WRITE_CLIENT))) {
        atomic_store_explicit(&c->io_write_state, CLIENT_IO_IDLE, memory_order_relaxed);
        return fallback(IO_FALLBACK_QUEUE_FULL);
    }
    io.writes_pending++;
    return true;
    /*@ end */
}
/*@ end */

/* A new connection's set-up (ACCEPT: its socket options and addresses,
 * client_io_accept) by a worker, the same hand-off as a read's: its result
 * comes back as a read result, and handle_result tells the two apart by
 * io_accepting, which only main reads and writes (1 while an ACCEPT job is
 * out, 0 otherwise). True: a worker owns c's input now. False: main does
 * the set-up itself, at once; the token is IDLE, io_accepting 0 and the
 * reason counted. A new client is never closing, so only an inactive pool
 * or a full inbox keeps it on main. */
bool io_offload_accept(client *c) {
    /*@ exercise: accept-handoff */
    if (io_threads_active() < 2) return fallback(IO_FALLBACK_INACTIVE);
    c->io_accepting = 1;
    atomic_store_explicit(&c->io_read_state, CLIENT_IO_PENDING, memory_order_relaxed);
    if (!io_threads_submit(job_encode(c, JOB_REQ_ACCEPT))) {
        atomic_store_explicit(&c->io_read_state, CLIENT_IO_IDLE, memory_order_relaxed);
        c->io_accepting = 0;
        return fallback(IO_FALLBACK_QUEUE_FULL);
    }
    io.reads_pending++;
    return true;
    /*@ end */
}

/* "The frees" above: argv goes back to the worker that parsed it
 * (c->cur_tid), in that worker's private inbox. False, argv untouched (the
 * caller frees it): no worker active, or argv allocated by main (cur_tid 0)
 * or by a worker that is parked now. True otherwise: the arguments the
 * keyspace kept are released here and their slots NULLed, the end mark
 * set, the job counted (io.argv_frees); an argv with nothing left to free
 * is freed here without a job, and one the inbox refused is freed here
 * too (counted queue_full). */
/*@ offload-free-argv */
bool io_offload_free_argv(client *c, int argc, obj **argv) {
    /*@ exercise: free-argv */
    int tid = c->cur_tid;
    if (io_threads_active() < 2 || argc <= 0) return false;
    if (tid < 1 || tid >= io_threads_active()) return false; /* allocated on main, or its worker is parked */
    int last = -1;
    for (int i = 0; i < argc; i++) {
        if (argv[i]->refcount > 1) { /* the keyspace kept it: main's count */
            obj_decr_ref(argv[i]);
            argv[i] = NULL;
        } else {
            last = i;
        }
    }
    if (last == -1) {
        zfree(argv);
        return true;
    }
    argv[last]->refcount = 0; /* the end mark */
    if (!io_threads_submit_to(tid, job_encode(argv, JOB_REQ_FREE_ARGV))) {
        argv[last]->refcount = 1;
        for (int i = 0; i <= last; i++)
            if (argv[i]) obj_decr_ref(argv[i]);
        zfree(argv);
        io.fallbacks[IO_FALLBACK_QUEUE_FULL]++;
        return true; /* freed here after all */
    }
    io.argv_frees++;
    return true;
    /*@ end */
}
/*@ end */

/*@ offload-free-obj */
/* A value the keyspace let go of (db_set_key replaced it): a large string
 * nobody else holds is freed by whichever worker is free, since its bytes
 * were most likely allocated by the worker that read them (Valkey:
 * tryOffloadFreeObjToIOThreads, from dbSetValue). Its count is taken to 0
 * here; the worker only frees. */
static void release_value(obj *o) {
    if (o->refcount == 1 && o->type == OBJ_STRING && o->encoding == OBJ_ENC_RAW && io_threads_active() >= 2) {
        o->refcount = 0;
        if (io_threads_submit(job_encode(o, JOB_REQ_FREE_OBJ))) {
            io.obj_frees++;
            return;
        }
        o->refcount = 1;
        fallback(IO_FALLBACK_QUEUE_FULL);
    }
    obj_decr_ref(o);
}
/*@ end */

/*@ wait-read */
void io_offload_wait_read(const client *c) {
    while (atomic_load_explicit(&c->io_read_state, memory_order_acquire) == CLIENT_IO_PENDING) sched_yield();
}
/*@ end */

void io_offload_wait_write(const client *c) {
    uint64_t t0 = util_monotonic_us();
    while (atomic_load_explicit(&c->io_write_state, memory_order_acquire) == CLIENT_IO_PENDING) sched_yield();
    io.write_waits++;
    io.write_wait_us += util_monotonic_us() - t0;
}

/* A COMPLETED write's io_nwritten is the worker's last store before its
 * release of COMPLETED: main may read it once it has acquired that. */
size_t io_offload_untaken_written(const client *c) {
    uint8_t st;
    while ((st = atomic_load_explicit(&c->io_write_state, memory_order_acquire)) == CLIENT_IO_PENDING) sched_yield();
    return st == CLIENT_IO_COMPLETED ? c->io_nwritten : 0;
}

/* ------------------------------------------------------------ results */

/* One result back on main: its direction must be COMPLETED (anything
 * else is a bug: log it and abort), becomes IDLE, then main's half runs. */
/*@ take-results */
static void handle_result(job_word r) {
    ASSERT_MAIN_THREAD();
    client *c = job_ptr(r);
    /*@ exercise: take-back */
    _Atomic uint8_t *state = job_type(r) == JOB_RES_READ_CLIENT ? &c->io_read_state : &c->io_write_state;
    /* Acquire: the worker's release store of COMPLETED came after its last
     * touch of the client (the outbox's own acquire orders it too). */
    if (atomic_load_explicit(state, memory_order_acquire) != CLIENT_IO_COMPLETED) {
        server_log(LL_WARNING, "io_offload: result for client id=%llu in state %d", (unsigned long long)c->id,
                   (int)atomic_load_explicit(state, memory_order_relaxed));
        abort();
    }
    atomic_store_explicit(state, CLIENT_IO_IDLE, memory_order_relaxed);
    /*@ end */
    TRACE(0, TRACE_RESULT_TAKE, c->id, job_type(r), 0);
    if (job_type(r) == JOB_RES_READ_CLIENT) {
        io.reads_pending--;
        if (c->io_accepting) {
            c->io_accepting = 0;
            io.accepts_done++;
            if (!(c->flags & CLIENT_CLOSE_ASAP)) halves.accept_done(c);
            return;
        }
        io.reads_done++;
        if (c->flags & CLIENT_CLOSE_ASAP) return; /* freed in before_sleep */
        server_phase(PHASE_READ);
        halves.read_done(c);
    } else {
        io.writes_pending--;
        io.writes_done++;
        if (c->flags & CLIENT_CLOSE_ASAP) return;
        server_phase(PHASE_WRITE);
        halves.write_done(c, 1);
    }
}

/* Valkey: processIOThreadsResponses. Results are taken in batches of 16
 * into io.taken and handled from there, one by one. They wait there, not
 * on the stack, because handling one may run CONFIG SET io-threads, whose
 * drain must see every result already taken and not yet handled. */
static void take_results(void) {
    size_t batch_end = io.taken_pos; /* step 6: taken[.., batch_end) were prefetched */
    for (;;) {
        if (io.taken_pos < io.taken_len) io.idle_since_us = 0;
        if (io.taken_pos == io.taken_len) {
            io.taken_pos = io.taken_len = batch_end = 0;
            if (io.reads_pending + io.writes_pending == 0) return;
            taken_reserve(16);
            io.taken_len = io_threads_take_results(io.taken, 16);
            if (io.taken_len == 0) return;
        }
        if (io.taken_pos >= batch_end)
            batch_end = io.taken_pos + memory_prefetch_results(io.taken + io.taken_pos, io.taken_len - io.taken_pos);
        handle_result(io.taken[io.taken_pos++]);
    }
}
/*@ end */

/* ---------------------------------------------------------- the poll */

/* While a POLL job is out, epoll_wait is the worker's, so main, past its
 * spin, waits for the workers alone, on the pool's futex word: a worker
 * wakes it after any round that ran jobs, the POLL job's included
 * (hand-shake 3 in io_threads.c). A futex, not the eventfd that wakes
 * main's own epoll_wait: one system call a sleep instead of a poll and a
 * read. timeout_ms is ae's: until the next timer, 0 when the caller asked
 * not to wait. */
static void wait_for_workers(int timeout_ms) { io_threads_main_wait(timeout_ms); }

/*@ poll-offload */
/* ae's custom poll while a POLL job is out: no events until it is done;
 * then the job's events, which this turn handles, and the POLL counted
 * (io.polls_done), the flag cleared and ae's own poll back. Past main's
 * spin it first waits for a worker (wait_for_workers). */
static int poll_custom(ae_loop *el, int timeout_ms) {
    if (io.poll_may_block) wait_for_workers(timeout_ms);
    /*@ exercise: poll-take */
    if (atomic_load_explicit(&poll_state, memory_order_acquire) != IO_POLL_DONE) return 0;
    int n = atomic_load_explicit(&poll_fired, memory_order_relaxed);
    atomic_store_explicit(&poll_state, IO_POLL_NONE, memory_order_relaxed);
    ae_set_custom_poll(el, NULL);
    io.polls_done++;
    return n;
    /*@ end */
}

void io_offload_wait_poll(void) {
    while (atomic_load_explicit(&poll_state, memory_order_acquire) == IO_POLL_OUT) sched_yield();
}

/* Valkey: trySendPollJobToIOThreads. Only while results are owed (else
 * main sleeps in epoll_wait itself) and no POLL job is out. Up to 9 active
 * threads (main counted) the job goes to the shared inbox; above, to the
 * private inboxes of workers 1 .. active - 1 in turn, published at once.
 * Refused: the flag goes back, the refusal is counted (queue_full) and main
 * polls itself this turn. */
static void try_send_poll(void) {
    ASSERT_MAIN_THREAD();
    /*@ exercise: poll-send */
    int active = io_threads_active();
    if (active < 2 || io.reads_pending + io.writes_pending == 0) return;
    if (atomic_load_explicit(&poll_state, memory_order_relaxed) != IO_POLL_NONE) return;
    atomic_store_explicit(&poll_state, IO_POLL_OUT, memory_order_relaxed);
    job_word job = job_encode(server.el, JOB_REQ_POLL);
    bool sent;
    if (active <= 9) {
        sent = io_threads_submit(job);
    } else {
        io.poll_rr = io.poll_rr % (active - 1) + 1;
        sent = io_threads_submit_to(io.poll_rr, job);
        if (sent) io_threads_commit();
    }
    if (!sent) {
        atomic_store_explicit(&poll_state, IO_POLL_NONE, memory_order_relaxed);
        fallback(IO_FALLBACK_QUEUE_FULL);
        return;
    }
    ae_set_custom_poll(server.el, poll_custom);
    /*@ end */
    TRACE(0, TRACE_POLL_JOB_OUT, io_threads_active() <= 9 ? 0 : io.poll_rr, 0, 0);
}
/*@ end */

/* -------------------------------------------------------- the policy */

/*@ pool-move */
/* Every move of the pool, the policy's and io-threads-always-active's,
 * goes through here, and is counted in one place: the policy's counters
 * (ignition_note_move counts a move the policy asked for under why it
 * asked, and any other by its direction). The pool may refuse part of a
 * move down (io_threads_set_active); what it did is what is counted. */
static void set_active(int target) {
    int before = io_threads_active();
    if (target == before) return;
    io_threads_set_active(target);
    TRACE(0, TRACE_IGNITION, before, target, io_threads_active());
    ignition_note_move(&policy, before, io_threads_active(), util_monotonic_us());
}
/*@ end */

/*@ always-active */
/* io-threads-always-active (Valkey's debug config of the same name): all
 * workers wake as soon as a turn has events, and park on a turn that ends
 * with nothing owed — the threads are on whenever there is work, and no
 * idle pool spins. */
static void always_active_after_sleep(int numevents) {
    if (numevents > 0 && io_threads_active() < io_threads_num()) set_active(io_threads_num());
}

static void always_active_before_sleep(void) {
    if (io_threads_active() > 1 && io_threads_pending() == 0 && io.reads_pending + io.writes_pending == 0)
        set_active(1);
}
/*@ end */

/*@ policy-sample */
/* The policy (ignition.c) decides from what main samples here, once per
 * IGNITION_SAMPLE_US at most: main's CPU from getrusage(RUSAGE_THREAD)
 * (a system call, so not every turn), its busy time from the phase
 * clock, the commands run and the shared inbox's depth. */
static uint64_t policy_last_us;

static void policy_before_sleep(uint64_t now) {
    if (policy_last_us && now - policy_last_us < IGNITION_SAMPLE_US) return;
    policy_last_us = now;
    if ((int)policy.rule != server.io_threads_ignition)
        ignition_restart(&policy, (ignition_rule)server.io_threads_ignition);
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    phase_totals pt = server_phase_totals();
    ignition_sample smp = {
        .now_us = now,
        .main_user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec,
        .main_sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec,
        .main_active_us = pt.busy_ns / 1000,
        .commands = (uint64_t)server.stat_numcommands,
        .queued = io_threads_queued(),
        .active = io_threads_active(),
        .num = io_threads_num(),
    };
    set_active(ignition_step(&policy, &smp));
}
/*@ end */

/* ------------------------------------------------------------ the loop */

/* The eventfd a worker writes to wake main from epoll_wait
 * (io_threads.c); its event only clears it. */
static void main_wake_handler(ae_loop *el, int fd, void *data, int mask) {
    (void)el, (void)fd, (void)data, (void)mask;
    io_threads_main_clear_wake();
}

static void add_wake_fd(void) {
    int fd = io_threads_main_wake_fd();
    if (io.wake_fd_added || fd == -1) return;
    io.wake_fd_added = ae_add_file(server.el, fd, AE_READABLE, main_wake_handler, NULL) == AE_OK;
}

/*@ main-sleep */
/* Results are owed, or a POLL job is out, so main may not simply block in
 * epoll_wait. For the idle spin it turns its loop without waiting (and
 * hands the poll to a worker, Valkey's poll offload); once its turns have
 * found nothing for that long, it blocks: in its own epoll_wait, which the
 * pool's eventfd ends as soon as a worker sends a result, or, while a POLL
 * job is out and epoll_wait is the worker's, on the pool's futex word
 * (poll_custom): poll_out says which, and main tells the pool as it
 * says it is asleep. Returns whether it may block. */
static bool main_may_block(uint64_t now, bool poll_out) {
    if (io.idle_since_us == 0) io.idle_since_us = now;
    if (now - io.idle_since_us < (uint64_t)server.io_threads_idle_spin_us) return false;
    if (!io.wake_fd_added || !io_threads_main_sleep_begin(poll_out)) return false;
    /* Said asleep; now one more look, so a result sent or a POLL job done
     * just before is not slept on (the other half of the hand-shake is in
     * io_threads.c: a worker publishes both before it wakes main). */
    taken_reserve(16);
    size_t n = io_threads_take_results(io.taken + io.taken_len, 16);
    io.taken_len += n;
    if (n || atomic_load_explicit(&poll_state, memory_order_acquire) == IO_POLL_DONE) {
        io_threads_main_sleep_end();
        return false;
    }
    return true;
}
/*@ end */

/*@ before-sleep */
void io_offload_before_sleep(void) {
    if (io_threads_num() < 2) return;
    if (io.spin_us != server.io_threads_idle_spin_us) { /* CONFIG SET: tell the workers */
        io.spin_us = server.io_threads_idle_spin_us;
        io_threads_set_idle_spin_us((unsigned)io.spin_us);
    }
    io_threads_commit();
    uint64_t now = util_monotonic_us(); /* one clock reading for the policy, the sleep and the spin */
    if (server.io_threads_always_active)
        always_active_before_sleep();
    else
        policy_before_sleep(now);
    /* Relaxed: only main sets OUT and NONE; DONE is read with acquire
     * where its events are taken (poll_custom). Not NONE stays not NONE
     * until main's poll_custom takes the job, so it also says how main
     * may sleep. */
    bool poll_out = atomic_load_explicit(&poll_state, memory_order_relaxed) != IO_POLL_NONE;
    bool owed = io.reads_pending + io.writes_pending > 0 || poll_out;
    io.poll_may_block = owed && main_may_block(now, poll_out);
    /* io-threads-poll-offload no (step 4's A/B): main polls without
     * waiting itself, as it would with no POLL job out. */
    if (owed && !io.poll_may_block && server.io_threads_poll_offload) try_send_poll();
    /* Results owed and main not to block: poll without waiting. */
    ae_set_dont_wait(server.el, owed && !io.poll_may_block);
    io.spin_from_us = owed && !io.poll_may_block ? now : 0;
}
/*@ end */

void io_offload_after_sleep(int numevents) {
    if (io_threads_num() < 2) return;
    if (io.poll_may_block) {
        io.poll_may_block = false;
        io_threads_main_sleep_end();
    }
    if (numevents > 0) io.idle_since_us = 0;
    if (server.io_threads_always_active) always_active_after_sleep(numevents);
}

void io_offload_take_results(void) {
    if (io.spin_from_us) {
        if (io.idle_since_us) io.main_spin_us += util_monotonic_us() - io.spin_from_us;
        io.spin_from_us = 0;
    }
    take_results();
}

/* ------------------------------------------------------- start and stop */

static void install_handlers(void) {
    io_threads_set_handler(JOB_REQ_READ_CLIENT, worker_read);
    io_threads_set_handler(JOB_REQ_WRITE_CLIENT, worker_write);
    io_threads_set_handler(JOB_REQ_FREE_ARGV, worker_free_argv);
    io_threads_set_handler(JOB_REQ_POLL, worker_poll);
    io_threads_set_handler(JOB_REQ_FREE_OBJ, worker_free_obj);
    io_threads_set_handler(JOB_REQ_ACCEPT, worker_accept);
    io_threads_set_exit_hook(client_io_thread_exit);
}

void io_offload_set_main_halves(const io_offload_main_halves *h) { halves = *h; }

void io_offload_init(void) {
    if (!halves.accept_done || !halves.read_done || !halves.write_done) {
        server_log(LL_WARNING, "io_offload_init: no main halves to hand clients back to (networking_init first)");
        abort();
    }
    install_handlers();
    db_value_release = release_value;
    io.spin_us = server.io_threads_idle_spin_us;
    io_threads_set_idle_spin_us((unsigned)io.spin_us);
    io_threads_init(server.io_threads_num);
    add_wake_fd();
    ignition_init(&policy, (ignition_rule)server.io_threads_ignition);
}

/*@ set-threads */
/* Waits until every job has run and every owed result is in io.taken;
 * false if that took longer than budget_ms. */
static bool drain_into_taken(long long budget_ms) {
    long long deadline = util_mstime() + budget_ms;
    io_threads_commit();
    for (;;) {
        taken_reserve(64);
        size_t n = io_threads_take_results(io.taken + io.taken_len, 64);
        io.taken_len += n;
        bool poll_out = atomic_load_explicit(&poll_state, memory_order_acquire) == IO_POLL_OUT;
        if (io_threads_pending() == 0 && !poll_out &&
            io.taken_len - io.taken_pos == io.reads_pending + io.writes_pending)
            return true;
        if (util_mstime() > deadline) return false;
        if (n == 0) sched_yield();
    }
}

int io_offload_set_threads(int num, const char **err) {
    if (num == io_threads_num()) return 1;
    /* Workers never wait on main (the outbox spills instead), so a drain
     * always ends; the budget only keeps a command from stalling the
     * server for long if the workers are starved of CPU. */
    if (io_threads_num() >= 2 && !drain_into_taken(1000)) {
        server_log(LL_WARNING, "io-threads %d -> %d refused: %zu jobs still running, %llu results owed after 1 s",
                   io_threads_num(), num, io_threads_pending(),
                   (unsigned long long)(io.reads_pending + io.writes_pending - (io.taken_len - io.taken_pos)));
        *err = "Can't update IO threads under load, try again later";
        return 0;
    }
    io_threads_shutdown();
    io_threads_init(num);
    trace_threads_changed(num);
    add_wake_fd();
    /* The spin of the old pool ends here. Below two threads before_sleep
     * no longer sets the loop's don't-wait each turn, so a flag left set
     * would keep main polling with a zero timeout, a core spent on an
     * idle server; the results still owed are in io.taken, taken next
     * turn whatever the flag. */
    ae_set_dont_wait(server.el, 0);
    io.idle_since_us = io.spin_from_us = 0;
    /* A new pool starts alone: a fresh policy, the counters kept, and the
     * change stamped. */
    ignition_restart(&policy, (ignition_rule)server.io_threads_ignition);
    policy.last_change_us = util_monotonic_us();
    return 1;
}
/*@ end */

void io_offload_shutdown(void) {
    if (io_threads_num() >= 2) {
        drain_into_taken(10000);
        /* Nobody will run these clients' main halves: give them back. */
        for (size_t i = io.taken_pos; i < io.taken_len; i++) {
            client *c = job_ptr(io.taken[i]);
            _Atomic uint8_t *state =
                job_type(io.taken[i]) == JOB_RES_READ_CLIENT ? &c->io_read_state : &c->io_write_state;
            atomic_store_explicit(state, CLIENT_IO_IDLE, memory_order_relaxed);
        }
        io.reads_pending = io.writes_pending = 0;
    }
    zfree(io.taken);
    io.taken = NULL;
    io.taken_pos = io.taken_len = io.taken_cap = 0;
    /* A POLL job's answer nobody asked for: a later pool starts clean. */
    atomic_store_explicit(&poll_state, IO_POLL_NONE, memory_order_relaxed);
    ae_set_custom_poll(server.el, NULL);
    io_threads_shutdown();
    client_io_thread_exit();
}

/* --------------------------------------------------------------- INFO */

void io_offload_get_stats(io_offload_stats *out) {
    memset(out, 0, sizeof(*out));
    out->num = io_threads_num() ? io_threads_num() : 1;
    out->active = io_threads_active() ? io_threads_active() : 1;
    out->ignition_rule = server.io_threads_always_active
                             ? "always-active"
                             : ignition_rule_name((ignition_rule)server.io_threads_ignition);
    out->ignitions = policy.ignitions;
    out->scale_ups = policy.ignitions + policy.scale_ups;
    out->scale_downs = policy.scale_downs + policy.guard_reverts;
    out->guard_reverts = policy.guard_reverts;
    out->parks = policy.parks;
    out->last_change_us = policy.last_change_us;
    out->queued = io_threads_num() ? io_threads_queued() : 0;
    out->pending = io_threads_num() ? io_threads_pending() : 0;
    out->reads_done = io.reads_done;
    out->writes_done = io.writes_done;
    out->polls_done = io.polls_done;
    out->argv_frees = io.argv_frees;
    out->obj_frees = io.obj_frees;
    out->main_spin_us = io.main_spin_us;
    out->write_waits = io.write_waits;
    out->write_wait_us = io.write_wait_us;
    memcpy(out->fallbacks, io.fallbacks, sizeof(out->fallbacks));
    out->last_decision = policy.last;
}

void io_offload_worker_jobs(int tid, uint64_t out[JOB_REQ_COUNT]) {
    for (int t = 0; t < JOB_REQ_COUNT; t++)
        out[t] = tid > 0 && tid < IO_THREADS_MAX
                     ? atomic_load_explicit(&worker_stats[tid].jobs[t], memory_order_relaxed)
                     : 0;
}
