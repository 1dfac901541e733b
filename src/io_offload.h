/* io_offload.h — step 4's offload decision and step 5's ignition, for the
 * server's main thread.
 *
 * Steps 4 and 5 (main-io layer, below networking). Owns: the job handlers
 * the I/O threads run for the server, the decision at each call site
 * whether a piece of work goes to a worker or stays on main (with the
 * reason counted when it stays), taking the workers' results back, the
 * poll offload, the argv frees, moving the pool as the policy
 * (ignition.c) or io-threads-always-active asks, and the io-threads
 * setting at run time. io_offload.c opens with the design.
 * Threads: main only, except the handlers inside io_offload.c, which run
 * on workers.
 * Valkey: src/io_threads.c (trySendReadToIOThreads,
 * trySendWriteToIOThreads, trySendPollJobToIOThreads,
 * tryOffloadFreeArgvToIOThreads, processIOThreadsResponses,
 * IOThreadsBeforeSleep, IOThreadsAfterSleep, updateIOThreads).
 */
#ifndef SOLOIST_IO_OFFLOAD_H
#define SOLOIST_IO_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "ignition.h"
#include "job.h"

/* Why a piece of work stayed on main (INFO iothreads io_fallbacks). */
enum io_fallback {
    IO_FALLBACK_INACTIVE = 0, /* no worker is active */
    IO_FALLBACK_QUEUE_FULL,   /* the inbox refused the job */
    IO_FALLBACK_NOT_ELIGIBLE, /* this client or job may not go now */
    IO_FALLBACK_COUNT
};

/* What main runs for a client a worker hands back: networking.c's main
 * halves, which networking_init registers before io_offload_init.
 *
 * WHY POINTERS, AND WHY THIS DIRECTION
 *
 * networking.c owns a client's life and asks this module, at each read,
 * write and accept, who does the I/O; this module hands the job to a
 * worker, takes the result back, and must then give the client to
 * networking.c's main half. Including networking.h for that would make
 * the two files a circle. The layers put the decision below the lifecycle
 * it serves: networking.c calls down into io_offload.h by name, and
 * io_offload.c calls up only through these three pointers, registered
 * once at start, exactly as io_threads.c (below this module) calls up
 * into the job handlers only through the table io_offload_init fills
 * (io_threads_set_handler). The opposite choice would put networking.c
 * below and make every hand-off it asks for (read, write, accept,
 * free_argv, the waits) a call through a pointer, where this one makes
 * three results so.
 *
 * Main only. accept_done and read_done may free c; write_done returns -1
 * when it did. */
typedef struct io_offload_main_halves {
    void (*accept_done)(client *c);              /* an ACCEPT job's set-up is done: client_accept_done */
    void (*read_done)(client *c);                /* a read job is done: client_read_done */
    int (*write_done)(client *c, int offloaded); /* a write job is done: client_write_done(c, 1) */
} io_offload_main_halves;
/* Sets the halves (copied). Only while no pool is running. */
void io_offload_set_main_halves(const io_offload_main_halves *halves);

/* Starts the pool with server.io_threads_num threads (none when 1) and
 * installs the handlers. Once, from server_init, after the main halves
 * are set (it aborts without them). */
void io_offload_init(void);
/* Takes every owed result back, then stops the pool. */
void io_offload_shutdown(void);

/* The call sites' decisions. True: a worker owns that direction of c now
 * (main must not touch it until the result is taken). False: main does
 * the work itself, now. */
bool io_offload_read(client *c);
bool io_offload_write(client *c);
/* A new connection's set-up (ACCEPT; its result comes back as a read's). */
bool io_offload_accept(client *c);
/* True: argv (argc objects) went to the worker that allocated it; false:
 * the caller frees it. */
bool io_offload_free_argv(client *c, int argc, obj **argv);

/* Waits until no worker is reading c (CLIENT LIST reads its input fields). */
void io_offload_wait_read(const client *c);
/* Waits until no worker is writing c (io-write-watermark no: step 5's
 * design without the watermark); counted in INFO. */
void io_offload_wait_write(const client *c);
/* The bytes a worker wrote for c whose result main has not taken yet:
 * waits until no worker is writing c, then 0 unless a finished write's
 * result is still on its way back (CLIENT LIST counts them in tot-net-out;
 * not counted in INFO's waits). */
size_t io_offload_untaken_written(const client *c);

/* before_sleep, first: takes the workers' results and does their main
 * halves (runs the commands of completed reads, finishes writes). */
void io_offload_take_results(void);

/* The event loop's hooks: before sleeping (results, commit, the policy,
 * the poll offload) and after waking (the policy's event count). */
void io_offload_before_sleep(void);
void io_offload_after_sleep(int numevents);

/* Waits until no POLL job is out (ae_resize may not run while a worker
 * polls: CONFIG SET maxclients). */
void io_offload_wait_poll(void);

/* CONFIG SET io-threads: drains, then changes the pool's size. Returns
 * nonzero on success; 0 with *err set when the pool could not drain in
 * time (Valkey's "Can't update IO threads under load"). */
int io_offload_set_threads(int num, const char **err);

/* For INFO iothreads. The pool's moves are counted once, in the policy's
 * counters (ignition.h), whoever asked for them; scale_ups and
 * scale_downs are every move up and down (an ignition, a revert
 * included), as INFO has always shown them. */
typedef struct io_offload_stats {
    int num, active;
    const char *ignition_rule;
    uint64_t ignitions, scale_ups, scale_downs, guard_reverts, parks;
    uint64_t last_change_us;
    size_t queued, pending;
    uint64_t reads_done, writes_done, polls_done, argv_frees, obj_frees;
    uint64_t main_spin_us;               /* wall time of main's idle turns while results were owed */
    uint64_t write_waits, write_wait_us; /* io-write-watermark no: main waiting for a write */
    uint64_t fallbacks[IO_FALLBACK_COUNT];
    ignition_decision last_decision; /* the policy's last decision (ignition.h) */
} io_offload_stats;
void io_offload_get_stats(io_offload_stats *out);
/* Jobs of each request type worker tid (1 .. num - 1) has run. */
void io_offload_worker_jobs(int tid, uint64_t out[JOB_REQ_COUNT]);

#endif
