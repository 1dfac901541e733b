/* server.c — the soloist: start, the event loop's hooks, cron, dispatch.
 *
 * Step 0 (server). Owns: the `server` global, the listening sockets, the
 * serverCron timer, the before_sleep/after_sleep hooks (where steps 4–6
 * plug the thread pool in), command dispatch (process_command, call), the
 * main thread's phase clock, and shutdown.
 * Threads: main thread only. This is the one thread that runs commands and
 * touches the keyspace; that is soloist's name and its invariant.
 * Valkey: src/server.c (initServer, serverCron, beforeSleep, afterSleep,
 * processCommand, call, prepareForShutdown).
 */
#include "server.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "anet.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "hashtable.h"
#include "io_offload.h"
#include "networking.h"
#include "reply.h"
#include "siphash.h"
#include "util.h"
#include "zmalloc.h"

struct server server;

/* ----------------------------------------------------------- logging */

void server_log(int level, const char *fmt, ...) {
    if (level < server.verbosity) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    FILE *fp = stdout;
    int close_fp = 0;
    if (server.logfile && server.logfile[0]) {
        fp = fopen(server.logfile, "a");
        if (!fp) return;
        close_fp = 1;
    }
    long long us = util_ustime();
    time_t sec = (time_t)(us / 1000000);
    struct tm tm;
    localtime_r(&sec, &tm);
    char ts[64];
    size_t off = strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S.", &tm);
    snprintf(ts + off, sizeof(ts) - off, "%03d", (int)(us % 1000000 / 1000));
    /* Valkey's line: pid:role date level-mark message. */
    fprintf(fp, "%d:M %s %c %s\n", (int)getpid(), ts, ".-*#"[level], msg);
    fflush(fp);
    if (close_fp) fclose(fp);
}

/* ------------------------------------------------------- phase clock */

/* The main thread's time, counted honestly. Every switch between phases
 * (poll, read+parse, exec, write, other) reads the monotonic clock and
 * charges the time since the last switch to the phase that was running:
 * wall time, so the phases add up to the thread's whole life.
 *
 * POLL is the one phase whose wall time is mostly not work: the thread
 * sleeps in epoll_wait until a socket is ready. But not only sleep:
 * entering the kernel, scanning the ready list, the wake-up and copying
 * the fired events out cost CPU, and Valkey's blog post on I/O threads
 * (2024) measured epoll_wait at more than 20% of its main thread's time.
 * So POLL also reads the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) as
 * it begins and ends; the difference is poll CPU, the rest is the wait.
 * Reading it at the phase's edges rather than inside ae_poll keeps the
 * clock on the main thread when step 4 hands the poll itself to an I/O
 * thread: then main's poll CPU is what waiting for that job costs it.
 *
 * What that costs, and why it is sampled: the thread CPU clock has no
 * vDSO fast path, so each read is a real system call (a few hundred ns:
 * the bare system call bench/write_cost.c measures, plus reading the
 * scheduler's runtime). Read at both edges of every poll, it would add two
 * system calls per loop turn — at depth 1 close to one per request, as
 * many as the read or the write that serve it (bench/p1_anatomy.py counts
 * them). So the CPU clock is read on one loop turn in POLL_CPU_SAMPLE
 * (16), chosen by a counter, and that turn's poll CPU is counted sixteen
 * times: an unbiased estimate of the poll's CPU, at a sixteenth of the
 * cost, while the wall clock still times every turn. The reads sit inside
 * POLL, so what they cost is charged to poll CPU, not hidden.
 *
 * What the totals mean (server_phase_totals):
 *   poll_wait = POLL's wall time off CPU;
 *   busy      = everything else = poll_cpu + read + exec + write + other;
 *   serial    = exec + other: the work only the main thread may do in
 *               Valkey's design, where I/O threads take the reads and
 *               parsing, the writes and the poll (poll offload), and main
 *               keeps the commands and the loop's own bookkeeping (cron,
 *               expiry, closing clients);
 *   s         = serial / busy, the serial share of Amdahl's law.
 * Busy time is wall time: a busy phase preempted by another process is
 * charged its wall time (used_cpu_*_main_thread in INFO cpu shows the
 * thread's real CPU beside it). */

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*@ phase-clock */
void server_phase(enum phase p) {
    /* On a sampled turn the CPU clock is read inside POLL's wall interval:
     * after the wall clock going in, before it coming out. */
    uint64_t now, cpu = 0;
    unsigned weight = 0;
    if (server.phase_now == PHASE_POLL) {
        if (server.poll_cpu_sampled) cpu = thread_cpu_ns();
        now = util_monotonic_ns();
        weight = server.poll_cpu_sampled ? POLL_CPU_SAMPLE : 0;
    } else {
        now = util_monotonic_ns();
        if (p == PHASE_POLL && server.phase_calls[PHASE_POLL] % POLL_CPU_SAMPLE == 0) {
            cpu = thread_cpu_ns();
            weight = POLL_CPU_SAMPLE;
        }
    }
    server_phase_at(p, now, cpu, weight);
}

void server_phase_at(enum phase p, uint64_t now, uint64_t cpu, unsigned weight) {
    uint64_t wall = now - server.phase_since_ns;
    server.phase_ns[server.phase_now] += wall;
    if (server.phase_now == PHASE_POLL && server.poll_cpu_sampled && weight) {
        /* Two clocks read a few ns apart: CPU time may not exceed wall. */
        uint64_t on_cpu = cpu > server.poll_cpu_since_ns ? cpu - server.poll_cpu_since_ns : 0;
        server.poll_cpu_ns += (on_cpu < wall ? on_cpu : wall) * weight;
    }
    if (p == PHASE_POLL) {
        server.poll_cpu_sampled = weight != 0;
        server.poll_cpu_since_ns = cpu;
    }
    server.phase_calls[p]++;
    server.phase_now = p;
    server.phase_since_ns = now;
    server.exec_clock_ns = now;
}
/*@ end */

/*@ phase-totals */
phase_totals server_phase_totals(void) {
    phase_totals t = {0};
    for (int p = 0; p < PHASE_COUNT; p++) t.total_ns += server.phase_ns[p];
    /* An estimate from sampled turns may overshoot the poll's wall time
     * by chance; it never means more than all of it. */
    t.poll_cpu_ns = server.poll_cpu_ns < server.phase_ns[PHASE_POLL] ? server.poll_cpu_ns
                                                                      : server.phase_ns[PHASE_POLL];
    t.poll_wait_ns = server.phase_ns[PHASE_POLL] - t.poll_cpu_ns;
    t.busy_ns = t.total_ns - t.poll_wait_ns;
    t.serial_ns = server.phase_ns[PHASE_EXEC] + server.phase_ns[PHASE_OTHER];
    t.serial_share = t.busy_ns ? (double)t.serial_ns / (double)t.busy_ns : 0.0;
    return t;
}
/*@ end */

/* ------------------------------------------------------------ dispatch */

/*@ process-command */
void process_command(client *c) {
    obj *name = c->argv[0];
    command *cmd = commands_lookup(name->ptr, name->len);
    c->cmd = cmd;
    if (!cmd) {
        /* Valkey: "unknown command '%.128s', with args beginning with: "
         * followed by each argument quoted, up to 128 bytes in all. */
        char args[256];
        size_t used = 0;
        args[0] = '\0';
        for (int i = 1; i < c->argc && used < 128; i++) {
            int n = snprintf(args + used, sizeof(args) - used, "'%.*s' ", (int)(128 - used),
                             c->argv[i]->ptr);
            if (n < 0) break;
            used += (size_t)n < sizeof(args) - used ? (size_t)n : sizeof(args) - used - 1;
        }
        char msg[512];
        snprintf(msg, sizeof(msg), "unknown command '%.128s', with args beginning with: %s", name->ptr, args);
        reply_error(c, msg);
        return;
    }
    int container = commands_subcommands(cmd) != NULL && c->argc >= 2;
    command *sub = container ? commands_lookup_subcommand(cmd, c->argv[1]->ptr, c->argv[1]->len) : NULL;
    if (container && !sub) {
        /* Valkey: "unknown subcommand '%.128s'. Try %s HELP." with the
         * container's name in capitals. */
        char upper[32];
        size_t i;
        for (i = 0; cmd->name[i] && i < sizeof(upper) - 1; i++) upper[i] = (char)(cmd->name[i] & ~0x20);
        upper[i] = '\0';
        char msg[256];
        snprintf(msg, sizeof(msg), "unknown subcommand '%.128s'. Try %s HELP.", c->argv[1]->ptr, upper);
        c->cmd = NULL;
        reply_error(c, msg);
        return;
    }
    if (sub) c->cmd = cmd = sub;
    c->lastcmd = cmd;
    if ((cmd->arity > 0 && cmd->arity != c->argc) || c->argc < -cmd->arity) {
        cmd->rejected_calls++;
        reply_error_arity(c);
        c->cmd = NULL;
        return;
    }
    if (!c->authenticated && !(cmd->flags & CMD_NOAUTH)) {
        cmd->rejected_calls++;
        c->cmd = NULL;
        reply_error(c, "-NOAUTH Authentication required.");
        return;
    }
    call(c);
}
/*@ end */

/* A command's time is measured from the previous clock reading of the
 * EXEC phase (its start, or the end of the command before it in the same
 * batch) to the end of its proc: one clock read per command. The time to
 * free the previous command's arguments is charged to the next command. */
void call(client *c) {
    command *cmd = c->cmd;
    long long errors_before = server.stat_total_error_replies;
    uint64_t start = server.exec_clock_ns;
    cmd->proc(c);
    uint64_t end = util_monotonic_ns();
    uint64_t dur = end - start;
    server.exec_clock_ns = end;
    cmd->calls++;
    cmd->usec += (long long)(dur / 1000);
    if (server.stat_total_error_replies != errors_before) cmd->failed_calls++;
    server.stat_numcommands++;
    c->commands_processed++;
    c->cmd = NULL;
}

/* ---------------------------------------------------------------- cron */

static void track_instantaneous_metric(int i, long long value, long long now_ms) {
    struct inst_metric *m = &server.inst_metric[i];
    long long dt = now_ms - m->last_sample_ms;
    if (m->last_sample_ms && dt > 0) {
        m->samples[m->idx] = (value - m->last_value) * 1000 / dt;
        m->idx = (m->idx + 1) % 16;
    }
    m->last_sample_ms = now_ms;
    m->last_value = value;
}

long long server_instantaneous_metric(int i) {
    long long sum = 0;
    for (int j = 0; j < 16; j++) sum += server.inst_metric[i].samples[j];
    return sum / 16;
}

static long long server_cron(ae_loop *el, long long id, void *data) {
    (void)el, (void)id, (void)data;
    server.cronloops++;
    if (server.shutdown_asap) {
        server_prepare_shutdown();
        return AE_NOMORE;
    }
    long long now = util_mstime();
    if (now - server.inst_metric[0].last_sample_ms >= 100) {
        track_instantaneous_metric(0, server.stat_numcommands, now);
        track_instantaneous_metric(1, server.stat_net_input_bytes, now);
        track_instantaneous_metric(2, server.stat_net_output_bytes, now);
    }
    networking_clients_cron();
    /* Valkey's cron gives active expiry 25% of each tick
     * (ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC) and rehashing 1 ms. */
    long long tick_us = 1000000 / server.hz;
    if (server.active_expire_enabled) db_active_expire_cycle(&db0, tick_us / 4);
    db_rehash_step(&db0, 1000);
    return 1000 / server.hz;
}

/*@ before-sleep */
/* Runs once per event-loop iteration, just before epoll_wait. Step 0
 * writes pending replies and frees closed clients here; steps 4–6 add the
 * thread pool's completions and the poll offload. (With the experiment
 * reply-write-timing immediate, each read handler has already written
 * its client's replies, and the pending list is empty here.) */
static void before_sleep(ae_loop *el) {
    (void)el;
    server_phase(PHASE_OTHER);
    io_offload_take_results();
    networking_handle_pending_writes();
    networking_free_closed_clients();
    if (server.shutdown_asap) {
        server_prepare_shutdown();
        return;
    }
    io_offload_before_sleep();
    server_phase(PHASE_POLL);
}

static void after_sleep(ae_loop *el) {
    server_phase(PHASE_OTHER);
    io_offload_after_sleep(ae_last_numevents(el));
}
/*@ end */

/* --------------------------------------------------------------- stats */

void server_reset_stats(void) {
    server.stat_numconnections = server.stat_rejected_conn = server.stat_numcommands = 0;
    server.stat_net_input_bytes = server.stat_net_output_bytes = 0;
    server.stat_total_reads = server.stat_total_writes = 0;
    server.stat_client_qbuf_limit_disconnections = server.stat_client_outbuf_limit_disconnections = 0;
    server.stat_unexpected_error_replies = server.stat_total_error_replies = 0;
    server.stat_reply_bytes_copied = server.stat_reply_refs = 0;
    server.stat_commands_during_write = server.stat_reply_bytes_during_write = 0;
    memset(&db_stat, 0, sizeof(db_stat));
    memset(server.phase_ns, 0, sizeof(server.phase_ns));
    memset(server.phase_calls, 0, sizeof(server.phase_calls));
    server.poll_cpu_ns = 0;
    server.phase_since_ns = util_monotonic_ns();
    memset(server.inst_metric, 0, sizeof(server.inst_metric));
    size_t cursor = 0;
    for (command *cmd; (cmd = commands_next(&cursor));) {
        cmd->calls = cmd->usec = cmd->failed_calls = cmd->rejected_calls = 0;
        for (command *sub = commands_subcommands(cmd); sub && sub->name; sub++)
            sub->calls = sub->usec = sub->failed_calls = sub->rejected_calls = 0;
    }
}

/* ------------------------------------------------------------ shutdown */

static void signal_handler(int sig) {
    (void)sig;
    /* Only sets a flag: cron and before_sleep do the work on the main
     * thread, where it is safe. A second signal while shutting down exits
     * at once, as Valkey does. */
    if (server.shutdown_asap) _exit(1);
    server.shutdown_asap = 1;
}

void server_prepare_shutdown(void) {
    /* Cron and before_sleep both look at shutdown_asap; the loop may turn
     * once more after ae_stop, so the work is done once. */
    static int done;
    if (done) return;
    done = 1;
    server_log(LL_WARNING, "User requested shutdown...");
    for (int i = 0; i < server.ipfd_count; i++) close(server.ipfd[i]);
    server.ipfd_count = 0;
    server_log(LL_WARNING, "soloist is now ready to exit, bye bye...");
    ae_stop(server.el);
}

static void setup_signals(void) {
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    sigemptyset(&act.sa_mask);
    act.sa_handler = signal_handler;
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* ---------------------------------------------------------------- init */

/* Valkey's adjustOpenFilesLimit: ask for maxclients + 32 descriptors and,
 * when the system gives fewer, lower maxclients to fit. */
static void adjust_open_files_limit(void) {
    rlim_t want = (rlim_t)server.maxclients + 32;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == -1) return;
    if (rl.rlim_cur >= want) return;
    rlim_t best = want;
    while (best > rl.rlim_cur) {
        struct rlimit try = {best, rl.rlim_max > best ? rl.rlim_max : best};
        if (setrlimit(RLIMIT_NOFILE, &try) == 0) break;
        try.rlim_max = rl.rlim_max;
        if (best <= rl.rlim_max && setrlimit(RLIMIT_NOFILE, &try) == 0) break;
        best -= best > 16 ? 16 : best;
    }
    if (best < want) {
        int old = server.maxclients;
        server.maxclients = best > 32 ? (int)(best - 32) : 1;
        server_log(LL_WARNING, "You requested maxclients of %d requiring at least %llu max file descriptors; "
                   "maxclients is now %d.", old, (unsigned long long)want, server.maxclients);
    }
}

/*@ apply-maxclients */
/* CONFIG SET maxclients: the event loop must hold every client's fd. */
static int apply_maxclients(const char **err) {
    adjust_open_files_limit();
    io_offload_wait_poll(); /* ae_resize reallocates what a POLL job writes */
    if (ae_resize(server.el, server.maxclients + 128) == AE_ERR) {
        *err = "The event loop API used by soloist is not able to handle the specified number of clients";
        return 0;
    }
    return 1; /* config.h: nonzero is success */
}
/*@ end */

static int listen_on_port(void) {
    char err[ANET_ERR_LEN];
    for (int i = 0; i < server.bindaddr_count; i++) {
        const char *addr = server.bindaddr[i];
        int optional = addr[0] == '-';
        if (optional) addr++;
        int fd = anet_tcp_server(err, server.port, addr, server.tcp_backlog);
        if (fd == ANET_ERR) {
            if (optional) continue; /* "-::1": skip when IPv6 is absent */
            server_log(LL_WARNING, "Failed listening on port %d (tcp), aborting: %s", server.port, err);
            return -1;
        }
        anet_nonblock(err, fd);
        server.ipfd[server.ipfd_count++] = fd;
        if (server.port == 0) server.port = anet_sock_port(fd);
    }
    return server.ipfd_count ? 0 : -1;
}

int server_init(void) {
    server.pid = getpid();
    server.start_time_ms = util_mstime();
    /* The run id and the table's SipHash key come from the kernel's
     * random source: a key derived from the clock and the pid could be
     * guessed, and with it keys that all collide (siphash.h). */
    const char *hex = "0123456789abcdef";
    unsigned char id[40];
    util_random_bytes(id, sizeof id);
    for (int i = 0; i < 40; i++) server.runid[i] = hex[id[i] & 15];
    server.runid[40] = '\0';
    uint8_t key[16];
    siphash_random_key(key);
    hashtable_set_hash_seed(key);

    setup_signals();
    adjust_open_files_limit();
    server.el = ae_create(server.maxclients + 128);
    if (!server.el) {
        server_log(LL_WARNING, "Failed creating the event loop: %s", strerror(errno));
        return -1;
    }
    db_init(&db0, 0);
    commands_init();
    if (listen_on_port() == -1) return -1;
    for (int i = 0; i < server.ipfd_count; i++)
        ae_add_file(server.el, server.ipfd[i], AE_READABLE, networking_accept_handler, NULL);
    ae_add_timer(server.el, 1, server_cron, NULL);
    config_apply_maxclients = apply_maxclients;
    config_apply_io_threads = io_offload_set_threads;
    io_offload_init();
    ae_set_before_sleep(server.el, before_sleep);
    ae_set_after_sleep(server.el, after_sleep);
    server.phase_now = PHASE_OTHER;
    server.phase_since_ns = util_monotonic_ns();
    return 0;
}

void server_run(void) { ae_main(server.el); }

void server_destroy(void) {
    io_offload_shutdown();
    while (server.clients) {
        server.current_client = NULL;
        client_free(server.clients);
    }
    networking_free_closed_clients();
    db_release(&db0);
    ae_delete(server.el);
    server.el = NULL;
}
