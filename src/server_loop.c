/* server_loop.c — the server wired together: start, the event loop's
 * hooks, cron, shutdown.
 *
 * Step 0 (server layer, the top of the line). Owns: the listening
 * sockets, the serverCron timer, the before_sleep/after_sleep hooks (where
 * steps 4–6 plug the thread pool in), the instantaneous metrics, the
 * statistics' reset, signals and shutdown. It is the one module that
 * calls into every layer below; none of them calls it.
 * Threads: main thread only.
 * Valkey: the functions server_loop.h names.
 */
#include "server_loop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "anet.h"
#include "blocked.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "hashtable.h"
#include "io_offload.h"
#include "multi.h"
#include "networking.h"
#include "server.h"
#include "siphash.h"
#include "trace.h"
#include "util.h"
#include "zmalloc.h"

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
    if (trace_on()) trace_cron(util_monotonic_ns()); /* a recording past its duration stops */
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
    server_phase(PHASE_OTHER);
    io_offload_take_results();
    /* Blocked clients whose deadline passed get their null, then every
     * unblocked client resumes its pipeline; their replies go out with the
     * write pass below (Valkey: handleBlockedClientsTimeout and
     * processUnblockedClients in beforeSleep). */
    blocked_handle_timeouts(util_mstime());
    networking_handle_unblocked();
    networking_handle_pending_writes();
    networking_free_closed_clients();
    if (server.shutdown_asap) {
        server_prepare_shutdown();
        return;
    }
    io_offload_before_sleep();
    server_phase_poll(!ae_dont_wait(el)); /* a turn the idle spin keeps awake is on CPU throughout */
    TRACE(0, TRACE_POLL_BEGIN, 0, 0, 0);
}

static void after_sleep(ae_loop *el) {
    TRACE(0, TRACE_POLL_END, ae_last_numevents(el), 0, 0);
    server_phase(PHASE_OTHER);
    server.turn_mstime = util_mstime();
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
        server_log(LL_WARNING,
                   "You requested maxclients of %d requiring at least %llu max file descriptors; "
                   "maxclients is now %d.",
                   old, (unsigned long long)want, server.maxclients);
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
    multi_init(); /* the transaction queue and the WATCH registry's listener */
    if (listen_on_port() == -1) return -1;
    for (int i = 0; i < server.ipfd_count; i++)
        ae_add_file(server.el, server.ipfd[i], AE_READABLE, networking_accept_handler, NULL);
    ae_add_timer(server.el, 1, server_cron, NULL);
    config_apply_maxclients = apply_maxclients;
    config_apply_io_threads = io_offload_set_threads;
    networking_init(); /* registers the main halves io_offload hands clients back to */
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
    trace_shutdown(); /* no thread records any more */
    while (server.clients) {
        server.current_client = NULL;
        client_free(server.clients);
    }
    networking_free_closed_clients();
    db_release(&db0);
    /* The listeners too: a process that starts the server again (each
     * unit test's setup does) must find ipfd empty, or it overflows. */
    for (int i = 0; i < server.ipfd_count; i++) close(server.ipfd[i]);
    server.ipfd_count = 0;
    ae_delete(server.el);
    server.el = NULL;
}
