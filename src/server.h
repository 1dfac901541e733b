/* server.h — the server's global state and its configuration.
 *
 * Step 0 (state layer). Owns: `server`, the one global:
 * configuration values (set by config.c), the event loop, the listening
 * sockets, the client lists, statistics and the main thread's phase
 * clock; the log; and client_close_async, the one way onto the list of
 * clients to close. The database is not here: it is db0 in db.h, so
 * including this header does not bring the keyspace with it
 * (tools/layers.py checks that). Nothing that runs the server is here
 * either: server_loop.h starts and stops it, and commands.h dispatches a
 * command, so a file that reads the state reaches, through this header,
 * nothing above its own layer.
 * Threads: main thread only, except the fields whose comment names an
 * atomic (step 2 onwards).
 * Valkey: struct valkeyServer in src/server.h.
 */
#ifndef SOLOIST_SERVER_H
#define SOLOIST_SERVER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "ae.h"
#include "client.h"

#define SOLOIST_VERSION "0.1.0"
/* The Valkey version soloist answers as in HELLO and INFO's redis_version
 * field (clients gate features on it). */
#define SOLOIST_COMPAT_VERSION "7.2.4"
#define CONFIG_BINDADDR_MAX 16

/* Main-thread time, by phase (step 0's measurement of the serial share).
 * POLL is split further into the thread's CPU time and its wait (see
 * server.c@phase-clock). */
enum phase { PHASE_POLL = 0, PHASE_READ, PHASE_EXEC, PHASE_WRITE, PHASE_OTHER, PHASE_COUNT };

/* reply-write-timing (an experiment, bench/write_timing.py): when a
 * client's replies are written. */
enum reply_write_timing {
    REPLY_WRITE_BEFORE_SLEEP = 0, /* all clients, once per loop turn (default) */
    REPLY_WRITE_IMMEDIATE,        /* in the read handler, right after its commands */
};

/* io-threads-ignition (step 5): the rule that wakes the I/O threads
 * (ignition.c has them; the values are its ignition_rule's). */
enum io_ignition_rule { IO_IGNITION_GUARDED = 0, IO_IGNITION_RUSAGE, IO_IGNITION_ACTIVE_TIME };

typedef struct obuf_limit {
    long long hard_bytes, soft_bytes, soft_seconds;
} obuf_limit;

struct server {
    /* Configuration (config.c owns the table that writes these). */
    int port;
    char *bindaddr[CONFIG_BINDADDR_MAX];
    int bindaddr_count;
    int tcp_backlog;
    int tcpkeepalive; /* seconds */
    int maxidletime;  /* "timeout", seconds; 0 = never */
    int maxclients;
    int max_new_conns_per_cycle; /* accepts per readable event on a listener */
    char *requirepass;           /* NULL = no password */
    int protected_mode;
    long long proto_max_bulk_len;
    long long client_max_querybuf_len;
    obuf_limit obuf_normal; /* client-output-buffer-limit normal */
    int hz;
    int io_threads_num;           /* step 4: threads counting main */
    int io_threads_always_active; /* step 5: the policy bypassed */
    int io_threads_ignition;      /* step 5: enum io_ignition_rule */
    int io_threads_idle_spin_us;  /* how long an idle thread spins before it sleeps */
    int prefetch_batch_max_size;  /* step 6 */
    int reply_copy_avoidance;     /* step 7: large bulk replies by reference */
    long long io_write_alone_max; /* step 7: main's write cap for a client nobody waits behind (0: none; 1 MB) */
    int io_write_watermark;       /* step 5 experiment: no = main waits out a write before the client's next command */
    int io_threads_poll_offload;  /* step 4 experiment: no = epoll_wait stays on main */
    int databases;
    char *logfile;    /* "" = stdout */
    int verbosity;    /* 0 debug .. 3 warning */
    char *configfile; /* absolute path or NULL */
    int daemonize;    /* accepted, must be no */
    int active_expire_enabled;
    int reply_write_timing;  /* enum reply_write_timing; experiment only */
    int trace_buffer_events; /* TRACE START: events each thread's ring holds (trace.h) */

    /* Runtime. */
    ae_loop *el;
    int ipfd[CONFIG_BINDADDR_MAX];
    int ipfd_count;
    pid_t pid;
    char runid[41];
    long long start_time_ms;
    uint64_t next_client_id;
    client *clients; /* doubly linked list, newest first */
    long clients_count;
    client *clients_pending_write; /* reply.c's client_queue_pending_write */
    /* Flagged CLOSE_ASAP, freed in before_sleep (client_close_async). */
    client **clients_to_close;
    size_t clients_to_close_len, clients_to_close_cap;
    client *current_client;
    /* MONITOR clients, in the order they asked (networking.c feeds them
     * every command; Valkey: server.monitors). */
    client **monitors;
    size_t monitors_len, monitors_cap;
    long long cronloops;
    volatile sig_atomic_t shutdown_asap; /* set by the signal handler only */

    /* Statistics (INFO stats). */
    long long stat_numconnections, stat_rejected_conn, stat_numcommands;
    long long stat_net_input_bytes, stat_net_output_bytes;
    long long stat_total_reads, stat_total_writes;
    long long stat_client_qbuf_limit_disconnections, stat_client_outbuf_limit_disconnections;
    long long stat_unexpected_error_replies, stat_total_error_replies;
    /* INFO memory: the most used_memory seen (sampled by the cron and by
     * INFO, as Valkey's stat_peak_memory), and used_memory once the server
     * was set up (Valkey: used_memory_startup). */
    size_t stat_peak_memory, stat_startup_memory;
    long long stat_reply_bytes_copied; /* step 7: bulk payload bytes copied into replies */
    long long stat_reply_refs;         /* step 7: bulk replies sent by reference */
    /* Step 5's A/B measure: commands main ran for a client while a worker
     * was writing that client's earlier replies, and the bytes they
     * appended meanwhile (the overlap the watermark makes safe). */
    long long stat_commands_during_write, stat_reply_bytes_during_write;

    /* Instantaneous rates (INFO instantaneous_*): a sample every 100 ms of
     * each counter's rate, averaged over the last 16 (Valkey:
     * trackInstantaneousMetric). Step 4's ignition reads the same kind. */
    struct inst_metric {
        long long last_sample_ms, last_value;
        long long samples[16];
        int idx;
    } inst_metric[3]; /* commands, net input bytes, net output bytes */

    /* Phase clock: ns spent in each phase since start or RESETSTAT
     * (wall clock), and an estimate of the part of POLL's wall time the
     * thread was on a CPU (thread CPU clock, read where POLL begins and
     * ends on one waiting turn in POLL_CPU_SAMPLE, counted that many
     * times; a turn that cannot wait is on CPU throughout). */
    uint64_t phase_ns[PHASE_COUNT];
    uint64_t phase_calls[PHASE_COUNT];
    enum phase phase_now;
    uint64_t phase_since_ns;
    uint64_t poll_cpu_ns;       /* estimate; server_phase_totals caps it at POLL's wall */
    uint64_t poll_cpu_since_ns; /* thread CPU clock when the running POLL began */
    unsigned poll_cpu_weight;   /* the running POLL's: 0 unsampled, 1 cannot wait, POLL_CPU_SAMPLE sampled */
    uint64_t poll_waits;        /* POLLs begun that could wait: the sampling counter */
    uint64_t exec_clock_ns;     /* last clock reading in EXEC (call() measures from it) */
    long long turn_mstime;      /* wall clock, ms, read once a loop turn by after_sleep; 0 before the first */
};

extern struct server server;

/* The wall clock as of this loop turn, for stamps that need no finer
 * grain than a turn: a client's last_interaction, read against the
 * timeout and the idle buffer's 2 s. One read per turn instead of two
 * per request; Valkey's afterSleep (src/server.c) refreshes its cached
 * time the same way, and its reads stamp last_interaction from it.
 * Before the loop's first turn (unit tests that call handlers
 * directly) it reads the clock. Main thread only. */
long long server_turn_mstime(void);

/* The main thread's phase clock: charges the time since the last switch
 * to the phase that was running and starts `p`. Cheap enough to stay on:
 * one clock_gettime through the vDSO, a few per request, plus two reads
 * of the thread's CPU clock (a system call each) on one loop turn in
 * POLL_CPU_SAMPLE of those that may wait. server_phase(PHASE_POLL) is
 * server_phase_poll(1); the loop says whether its poll may wait (0: a
 * zero timeout, all of its wall time on CPU). */
#define POLL_CPU_SAMPLE 16
void server_phase(enum phase p);
void server_phase_poll(int may_wait);

/* The phase clock's totals, defined once for INFO and the benchmarks.
 *   poll_wait = POLL's wall time the thread was off CPU (idle, waiting);
 *   busy      = total - poll_wait
 *             = poll_cpu + read + exec + write + other;
 *   serial    = exec + other: what only the main thread may do once I/O
 *               threads take reads, parsing, writes and the poll;
 *   s         = serial / busy, the serial share Amdahl's law needs. */
typedef struct phase_totals {
    uint64_t total_ns, poll_cpu_ns, poll_wait_ns, busy_ns, serial_ns;
    double serial_share; /* 0 when busy is 0 */
} phase_totals;
phase_totals server_phase_totals(void);

/* Marks the client to be closed at the next safe point: before_sleep
 * frees it (networking_free_closed_clients). Idempotent. */
void client_close_async(client *c);

/* Logging with Valkey's levels. */
#define LL_DEBUG 0
#define LL_VERBOSE 1
#define LL_NOTICE 2
#define LL_WARNING 3
void server_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
