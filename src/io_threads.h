/* io_threads.h — the pool of I/O threads: workers, inboxes, the outbox.
 *
 * Step 2 (threads layer). Owns: the worker threads and their loop, the
 * three kinds of queue between them and main (one shared inbox, one
 * private inbox per worker, one shared outbox), the mutex each worker
 * parks on, the submitted/finished counters, and the table of job
 * handlers. It knows no client and no keyspace: a job is a word (job.h)
 * and a handler is a function pointer registered per job type.
 * Threads: every function is for the main thread, except those marked
 * "Worker" (for the handlers a worker runs) and io_thread_id (any thread).
 * Valkey: src/io_threads.c (initIOThreads, createIOThread, IOThreadMain,
 * commitIOJobs, drainIOThreadsQueue, getPendingIOThreadsJobs,
 * sendToMainThread, shutdownIOThread). io_threads.c explains the loop.
 */
#ifndef SOLOIST_IO_THREADS_H
#define SOLOIST_IO_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"

/* The most threads a pool may have, counting main: Valkey's
 * IO_THREADS_MAX_NUM since 8.1 (128 in 8.0; raised by pull request #1220
 * for many-core servers), the same as io-threads' bound in config.h. */
#define IO_THREADS_MAX 256

/* How many private-inbox jobs a worker takes at once (Valkey's BATCH_SIZE). */
#define IO_BATCH_SIZE 32

/* What a worker runs for one job: the job's payload pointer. */
typedef void io_job_proc(void *payload);

/* Sets the handler for one request type. Only while no pool is running,
 * so that workers read the table without a lock (pthread_create orders
 * the table's writes before anything a worker does). NULL unsets it; a
 * worker that meets a job with no handler aborts. */
void io_threads_set_handler(job_request type, io_job_proc *proc);

/* Sets a function every worker calls just before it exits (to free what
 * it keeps in thread-local storage). Only while no pool is running. */
void io_threads_set_exit_hook(void (*hook)(void));

/* Starts a pool of num threads counting main: num - 1 workers, all born
 * inactive (parked); only main is active. num == 1 starts no thread and
 * every submit says no. 1 <= num <= IO_THREADS_MAX; no pool may be
 * running. */
void io_threads_init(int num);

/* Drains the pool, stops and joins every worker. Results nobody took
 * (io_threads_take_results) are dropped with the outbox. */
void io_threads_shutdown(void);

/* Threads in the pool counting main (0 when none is running), and how
 * many of them are active: main and workers 1 .. active - 1. */
int io_threads_num(void);
int io_threads_active(void);

/* Any thread: the nanoseconds worker tid (1 .. IO_THREADS_MAX - 1) has
 * spent running jobs since the process started (a new pool keeps
 * counting); 0 for any other tid. Read relaxed: a figure for INFO, up to
 * one batch of jobs behind. */
uint64_t io_threads_busy_ns(int tid);

/* Wakes or parks workers until `active` threads (counting main) are
 * active, one at a time. Waking always succeeds; parking worker t is
 * refused while its private inbox holds jobs, and parking the last worker
 * while the shared inbox holds jobs, since no one would run them: then
 * returns false, with as many active as it got to. */
bool io_threads_set_active(int active);

/* Puts a request on the shared inbox, for whichever active worker is free
 * first. False (do the work on main) when no worker is active or the
 * inbox is full. job's type must be one of JOB_SHARED_INBOX_TYPES. */
bool io_threads_submit(job_word job);

/* Puts a request on worker tid's private inbox, unpublished until the
 * next io_threads_commit. False (do it on main) when tid is not active or
 * its inbox is full. job's type must be one of JOB_PRIVATE_INBOX_TYPES. */
bool io_threads_submit_to(int tid, job_word job);

/* Publishes every private inbox's submitted jobs: call once per event-
 * loop iteration, before sleeping. */
void io_threads_commit(void);

/* Jobs submitted and not yet finished by a worker (those not yet
 * committed included). When it reads 0, everything the handlers did is
 * visible to the caller. */
size_t io_threads_pending(void);

/* Jobs on the shared inbox that no worker has taken yet: the queue depth
 * the scaling policy samples. */
size_t io_threads_queued(void);

/* Commits, then waits until every submitted job has finished, yielding
 * the core between looks (sched_yield), so that a worker sharing it can
 * finish. Results the jobs sent are then in the outbox or on their way to it
 * (a worker's spilled results go in as main makes room). */
void io_threads_drain(void);

/* Moves up to max results, each worker's in the order it sent them, into
 * out; returns how many. */
size_t io_threads_take_results(job_word *out, size_t max);

/* How long an active worker with nothing to do spins before it sleeps
 * (io-threads-idle-spin-us); io_threads.c says why it does not spin for
 * ever as Valkey's do. Sleeping workers wake once to take the new value. */
void io_threads_set_idle_spin_us(unsigned us);

/* Main's sleep while results are owed (hand-shake 3 in io_threads.c). The
 * eventfd (-1 before a pool with workers started) belongs in main's epoll
 * set. io_threads_main_sleep_begin says main is about to block, in
 * epoll_wait or, on_futex, in io_threads_main_wait (timeout_ms < 0: none);
 * the caller must then look at the outbox once more and not block if it
 * finds anything. io_threads_main_sleep_end, on waking, takes the flag
 * back; io_threads_main_clear_wake, the eventfd's handler, clears it. */
int io_threads_main_wake_fd(void);
bool io_threads_main_sleep_begin(bool on_futex);
void io_threads_main_wait(long long timeout_ms);
void io_threads_main_sleep_end(void);
void io_threads_main_clear_wake(void);

/* Worker. Sends a result (a job_result job word) to main; never blocks. */
void io_threads_send_result(job_word result);

/* Any thread: 0 on main (and any thread not in the pool), else the
 * worker's number, 1 .. num - 1. */
int io_thread_id(void);

/* Any thread: whether the caller is main, the thread that last called
 * io_threads_init (the server's main thread). True on every thread until
 * the first call, when nothing has said which thread is main. */
bool io_threads_on_main(void);

/* The main-only entry points (submit, commit, set_active, drain, taking
 * and handling results, the poll hand-off, client_free) begin with
 * ASSERT_MAIN_THREAD(). It checks only where SOLOIST_ASSERT_THREADS is
 * defined: the Makefile defines it for the debug and sanitizer builds
 * (build/o0, build/asan, build/tsan), and the -O2 build, which keeps
 * assert(), compiles it to nothing. A failure names the function and
 * aborts. */
#ifdef SOLOIST_ASSERT_THREADS
#define ASSERT_MAIN_THREAD() io_threads_assert_main(__func__)
#else
#define ASSERT_MAIN_THREAD() ((void)0)
#endif
void io_threads_assert_main(const char *func);

#endif
