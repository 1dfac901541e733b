/* cmd_info.c — the commands that describe the server: INFO, COMMAND, MEMORY.
 *
 * Step 0 (server layer). Owns: info_commands[] — INFO [section ...] with
 * Valkey's sections and field names plus soloist's `threads` section (the
 * main thread's time by phase: the serial share s that chapter 01's
 * arithmetic needs), COMMAND with COUNT, INFO, DOCS (enough for
 * redis-cli's hints), LIST and HELP, and MEMORY with USAGE, STATS,
 * MALLOC-STATS, PURGE and HELP.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: genValkeyInfoString and commandCommand, commandInfoCommand,
 * commandDocsCommand in src/server.c; memoryCommand and
 * getMemoryOverheadData in src/object.c.
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "blocked.h"
#include "client.h"
#include "commands.h"
#include "db.h"
#include "io_offload.h"
#include "memory_prefetch.h"
#include "multi.h"
#include "io_threads.h"
#include "networking.h"
#include "reply.h"
#include "server.h"
#include "server_loop.h"
#include "util.h"
#include "textbuf.h"
#include "zmalloc.h"

static void bytes_human(char *buf, size_t len, double n) {
    const char *unit = "B";
    if (n >= 1024.0 * 1024 * 1024)
        n /= 1024.0 * 1024 * 1024, unit = "G";
    else if (n >= 1024.0 * 1024)
        n /= 1024.0 * 1024, unit = "M";
    else if (n >= 1024.0)
        n /= 1024.0, unit = "K";
    if (unit[0] == 'B')
        snprintf(buf, len, "%.0fB", n);
    else
        snprintf(buf, len, "%.2f%s", n, unit);
}

static double tv_sec(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

/* ------------------------------------------------------------- memory */

/*@ memory-overhead */
/* Where used_memory goes, as INFO memory and MEMORY STATS report it
 * (Valkey: getMemoryOverheadData). soloist counts what it can count
 * honestly:
 *   startup  = used_memory once the server was set up (networking_init);
 *   clients  = every client's own memory, CLIENT LIST's tot-mem summed;
 *   db       = the keyspace's tables (buckets, not the keys or values);
 *   overhead = startup + clients + db;
 *   dataset  = used - overhead: the keys and values, and whatever else
 *              the server allocated after start (the I/O threads' queues).
 * The resident set comes from /proc/self/statm, read when asked (Valkey
 * reads it in its cron). The peak is sampled by the cron and here. */
typedef struct mem_report {
    size_t used, peak, startup, rss, clients, db_main, db_expires, overhead, dataset, keys, bytes_per_key;
    double peak_perc, dataset_perc, frag;
    long long frag_bytes;
} mem_report;

static size_t process_rss(void) {
    FILE *fp = fopen("/proc/self/statm", "r");
    unsigned long long pages_total = 0, pages_resident = 0;
    if (!fp) return 0;
    if (fscanf(fp, "%llu %llu", &pages_total, &pages_resident) != 2) pages_resident = 0;
    fclose(fp);
    return (size_t)(pages_resident * (unsigned long long)sysconf(_SC_PAGESIZE));
}

static mem_report memory_report(void) {
    mem_report m = {0};
    m.used = zmalloc_used_memory();
    if (m.used > server.stat_peak_memory) server.stat_peak_memory = m.used;
    m.peak = server.stat_peak_memory;
    m.startup = server.stat_startup_memory;
    m.rss = process_rss();
    for (client *c = server.clients; c; c = c->next) m.clients += client_memory_usage(c);
    m.db_main = hashtable_mem_usage(db0.keys);
    m.db_expires = hashtable_mem_usage(db0.expires);
    m.overhead = m.startup + m.clients + m.db_main + m.db_expires;
    m.dataset = m.used > m.overhead ? m.used - m.overhead : 0;
    m.keys = db_size(&db0);
    /* Valkey's net usage: what was allocated since start, at least 1. */
    size_t net = m.used > m.startup ? m.used - m.startup : 1;
    m.bytes_per_key = m.keys ? net / m.keys : 0;
    m.dataset_perc = (double)m.dataset * 100.0 / (double)net;
    m.peak_perc = m.peak ? (double)m.used * 100.0 / (double)m.peak : 0.0;
    m.frag = m.used ? (double)m.rss / (double)m.used : 0.0;
    m.frag_bytes = (long long)m.rss - (long long)m.used;
    return m;
}
/*@ end */

/* Which sections to print: Valkey's "default" set, "all", "everything",
 * or the names given. */
static int wanted(int argc, obj **argv, const char *section, int in_default) {
    if (argc <= 1) return in_default;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i]->ptr;
        if (!strcasecmp(a, section)) return 1;
        if (!strcasecmp(a, "default") && in_default) return 1;
        if (!strcasecmp(a, "all") || !strcasecmp(a, "everything")) return 1;
    }
    return 0;
}

/*@ info-threads */
/* soloist's own section: where the main thread's time goes. Each phase's
 * wall microseconds since start (or CONFIG RESETSTAT); poll is split into
 * the thread's CPU inside it (estimated from one loop turn in
 * POLL_CPU_SAMPLE) and its wait (idle). busy is everything but
 * that wait, and the shares are shares of busy time; serial_share is
 * s = (exec + other) / busy, what no I/O thread can take away
 * (server.c@phase-totals defines them). */
static void info_threads(textbuf *t) {
    server_phase(server.phase_now); /* charge the running phase up to now */
    static const char *names[PHASE_COUNT] = {"poll", "read", "exec", "write", "other"};
    phase_totals pt = server_phase_totals();
    textbuf_printf(t, "# Threads\r\nio_threads_active:%d\r\nio_threads_configured:%d\r\n", io_threads_active() > 1,
                   server.io_threads_num);
    for (int p = 0; p < PHASE_COUNT; p++) {
        textbuf_printf(t, "main_thread_%s_us:%llu\r\nmain_thread_%s_calls:%llu\r\n", names[p],
                       (unsigned long long)(server.phase_ns[p] / 1000), names[p],
                       (unsigned long long)server.phase_calls[p]);
        if (p == PHASE_POLL)
            textbuf_printf(t, "main_thread_poll_cpu_us:%llu\r\nmain_thread_poll_wait_us:%llu\r\n",
                           (unsigned long long)(pt.poll_cpu_ns / 1000), (unsigned long long)(pt.poll_wait_ns / 1000));
    }
    textbuf_printf(t, "main_thread_total_us:%llu\r\nmain_thread_busy_us:%llu\r\n",
                   (unsigned long long)(pt.total_ns / 1000), (unsigned long long)(pt.busy_ns / 1000));
    for (int p = 0; p < PHASE_COUNT; p++) {
        uint64_t ns = p == PHASE_POLL ? pt.poll_cpu_ns : server.phase_ns[p];
        textbuf_printf(t, "main_thread_%s%s_share_of_busy:%.4f\r\n", names[p], p == PHASE_POLL ? "_cpu" : "",
                       pt.busy_ns ? (double)ns / (double)pt.busy_ns : 0.0);
    }
    textbuf_printf(t, "main_thread_serial_share:%.4f\r\n", pt.serial_share);
}
/*@ end */

/*@ info-iothreads */
/* What a reader watches during a benchmark (steps 4 and 5): how many
 * threads are awake, what the policy did, what each worker ran, and why
 * work stayed on main. */
static void info_iothreads(textbuf *t) {
    io_offload_stats st;
    io_offload_get_stats(&st);
    textbuf_printf(t,
                   "# Iothreads\r\nio_threads:%d\r\nio_threads_active:%d\r\nio_threads_ignition_rule:%s\r\n"
                   "io_threads_ignitions:%llu\r\nio_threads_scale_ups:%llu\r\nio_threads_scale_downs:%llu\r\n"
                   "io_threads_guard_reverts:%llu\r\nio_threads_last_change_us:%llu\r\nio_threads_queued:%zu\r\n"
                   "io_threads_pending:%zu\r\nio_threads_parks:%llu\r\nio_threads_polls:%llu\r\n"
                   "io_threads_argv_frees:%llu\r\nio_threads_obj_frees:%llu\r\nio_threads_main_spin_us:%llu\r\n"
                   "io_threads_write_waits:%llu\r\nio_threads_write_wait_us:%llu\r\n",
                   st.num, st.active, st.ignition_rule, (unsigned long long)st.ignitions,
                   (unsigned long long)st.scale_ups, (unsigned long long)st.scale_downs,
                   (unsigned long long)st.guard_reverts, (unsigned long long)st.last_change_us, st.queued, st.pending,
                   (unsigned long long)st.parks, (unsigned long long)st.polls_done, (unsigned long long)st.argv_frees,
                   (unsigned long long)st.obj_frees, (unsigned long long)st.main_spin_us,
                   (unsigned long long)st.write_waits, (unsigned long long)st.write_wait_us);
    for (int tid = 1; tid < st.num; tid++) {
        uint64_t j[JOB_REQ_COUNT];
        io_offload_worker_jobs(tid, j);
        textbuf_printf(t,
                       "io_thread_%d:reads=%llu,writes=%llu,free_argv=%llu,free_obj=%llu,polls=%llu,accepts=%llu,"
                       "busy_us=%llu\r\n",
                       tid, (unsigned long long)j[JOB_REQ_READ_CLIENT], (unsigned long long)j[JOB_REQ_WRITE_CLIENT],
                       (unsigned long long)j[JOB_REQ_FREE_ARGV], (unsigned long long)j[JOB_REQ_FREE_OBJ],
                       (unsigned long long)j[JOB_REQ_POLL], (unsigned long long)j[JOB_REQ_ACCEPT],
                       (unsigned long long)(io_threads_busy_ns(tid) / 1000));
    }
    textbuf_printf(t, "io_fallbacks:inactive=%llu,queue_full=%llu,not_eligible=%llu\r\n",
                   (unsigned long long)st.fallbacks[IO_FALLBACK_INACTIVE],
                   (unsigned long long)st.fallbacks[IO_FALLBACK_QUEUE_FULL],
                   (unsigned long long)st.fallbacks[IO_FALLBACK_NOT_ELIGIBLE]);
    /* The policy's last decision and the numbers it judged (ignition.h's
     * ignition_decision); the CPU means as per cent of one core. The age
     * is on the same monotonic clock as the stamp. */
    const ignition_decision *d = &st.last_decision;
    uint64_t now = util_monotonic_us();
    textbuf_printf(t,
                   "io_threads_last_decision:%s\r\nio_threads_last_decision_us:%llu\r\n"
                   "io_threads_last_decision_age_us:%llu\r\nio_threads_last_decision_active_before:%d\r\n"
                   "io_threads_last_decision_active_after:%d\r\nio_threads_last_decision_sys_pct:%.2f\r\n"
                   "io_threads_last_decision_user_pct:%.2f\r\nio_threads_last_decision_busy_pct:%.2f\r\n"
                   "io_threads_last_decision_depth_mean:%zu\r\nio_threads_last_decision_rate_before:%llu\r\n"
                   "io_threads_last_decision_rate_after:%llu\r\n",
                   ignition_decided_name(d->what), (unsigned long long)d->us,
                   (unsigned long long)(d->us && now > d->us ? now - d->us : 0), d->active_before, d->active_after,
                   (double)d->sys_ppm / 1e4, (double)d->user_ppm / 1e4, (double)d->busy_ppm / 1e4, d->depth_mean,
                   (unsigned long long)d->rate_before, (unsigned long long)d->rate_after);
}
/*@ end */

/* Valkey's serverBuildId is a hash of the version and the build's time
 * and host; soloist hashes its version and build time alike. */
static unsigned long long build_id(void) {
    const char *s = SOLOIST_VERSION " " __DATE__ " " __TIME__;
    unsigned long long h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* INFO server: Valkey 8.1's fields in its order (server.c
 * genValkeyInfoString): redis_version first (the Redis version clients
 * gate features on, 7.2.4 in Valkey 8), then server_name and the
 * server's own version: Valkey prints valkey_version, soloist
 * soloist_version. No valkey_version: a client that reads one gates
 * Valkey's own commands on it, and soloist has only the few this book
 * needs (server_name says which server answers). soloist has no git build
 * stamp, so redis_git_sha1 is Valkey's "unknown", eight zeros, and
 * redis_git_dirty 0. The mode goes under Valkey's name, server_mode. */
static void info_server(textbuf *t, long long uptime) {
    struct utsname u;
    uname(&u);
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    textbuf_printf(t,
                   "# Server\r\nredis_version:%s\r\nserver_name:soloist\r\nsoloist_version:%s\r\n"
                   "redis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:%llx\r\nserver_mode:standalone\r\n"
                   "os:%s %s %s\r\narch_bits:%d\r\nmonotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:epoll\r\n"
                   "atomicvar_api:c11-builtin\r\ngcc_version:%d.%d.%d\r\nprocess_id:%d\r\nprocess_supervised:no\r\n"
                   "run_id:%s\r\ntcp_port:%d\r\nserver_time_usec:%lld\r\nuptime_in_seconds:%lld\r\n"
                   "uptime_in_days:%lld\r\nhz:%d\r\nconfigured_hz:%d\r\nlru_clock:%lld\r\nexecutable:%s\r\n"
                   "config_file:%s\r\nio_threads_active:%d\r\n",
                   SOLOIST_COMPAT_VERSION, SOLOIST_VERSION, build_id(), u.sysname, u.release, u.machine,
                   (int)(sizeof(void *) * 8), __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__, (int)server.pid,
                   server.runid, server.port, util_ustime(), uptime, uptime / 86400, server.hz, server.hz,
                   (util_mstime() / 1000) & ((1LL << 24) - 1), exe, server.configfile ? server.configfile : "",
                   io_threads_active() > 1);
    /* Valkey's getListensInfoString: one line per listener, each bind
     * address in turn. */
    textbuf_printf(t, "listener0:name=tcp");
    for (int i = 0; i < server.bindaddr_count; i++) textbuf_printf(t, ",bind=%s", server.bindaddr[i]);
    textbuf_printf(t, ",port=%d\r\n", server.port);
}

/* The Clients section: connections, the largest buffers, blocked and watching clients. */
static void info_clients(textbuf *t) {
    size_t max_in = 0, max_out = 0, watching = 0;
    for (client *c = server.clients; c; c = c->next) {
        watching += multi_watched_count(c) > 0;
        /* A worker may be growing the query buffer of a client whose
         * read it owns: only idle inputs are looked at. */
        if (atomic_load_explicit(&c->io_read_state, memory_order_relaxed) == CLIENT_IO_IDLE && c->qb_cap > max_in)
            max_in = c->qb_cap;
        if (client_output_bytes(c) > max_out) max_out = client_output_bytes(c);
    }
    textbuf_printf(t,
                   "# Clients\r\nconnected_clients:%ld\r\nmaxclients:%d\r\nclient_recent_max_input_buffer:%zu\r\n"
                   "client_recent_max_output_buffer:%zu\r\nblocked_clients:%ld\r\nwatching_clients:%zu\r\n",
                   server.clients_count, server.maxclients, max_in, max_out, blocked_clients_count(), watching);
    /* Valkey 8.1's blocking and WATCH fields (no module keys:
     * on_nokey is 0). */
    textbuf_printf(t,
                   "clients_in_timeout_table:%zu\r\ntotal_watched_keys:%zu\r\ntotal_blocking_keys:%zu\r\n"
                   "total_blocking_keys_on_nokey:0\r\n",
                   blocked_timeouts_count(), multi_registry_size(), blocked_keys_count());
}

/* The Memory section (memory_report's figures). */
static void info_memory(textbuf *t) {
    /* Valkey 8's fields in its order, those soloist can know (no
     * allocator internals, no scripts, no replication buffers). */
    mem_report m = memory_report();
    char used_h[32], rss_h[32], peak_h[32], sys_h[32];
    size_t sys = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    bytes_human(used_h, sizeof(used_h), (double)m.used);
    bytes_human(rss_h, sizeof(rss_h), (double)m.rss);
    bytes_human(peak_h, sizeof(peak_h), (double)m.peak);
    bytes_human(sys_h, sizeof(sys_h), (double)sys);
    textbuf_printf(t,
                   "# Memory\r\nused_memory:%zu\r\nused_memory_human:%s\r\nused_memory_rss:%zu\r\n"
                   "used_memory_rss_human:%s\r\nused_memory_peak:%zu\r\nused_memory_peak_human:%s\r\n"
                   "used_memory_peak_perc:%.2f%%\r\nused_memory_overhead:%zu\r\nused_memory_startup:%zu\r\n"
                   "used_memory_dataset:%zu\r\nused_memory_dataset_perc:%.2f%%\r\ntotal_system_memory:%zu\r\n"
                   "total_system_memory_human:%s\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\n"
                   "maxmemory_policy:noeviction\r\nmem_fragmentation_ratio:%.2f\r\nmem_fragmentation_bytes:%lld\r\n"
                   "mem_clients_slaves:0\r\nmem_clients_normal:%zu\r\nmem_allocator:libc\r\n",
                   m.used, used_h, m.rss, rss_h, m.peak, peak_h, m.peak_perc, m.overhead, m.startup, m.dataset,
                   m.dataset_perc, sys, sys_h, m.frag, m.frag_bytes, m.clients);
}

/* The Persistence section: soloist saves nothing, so every field is 0. */
static void info_persistence(textbuf *t) {
    textbuf_printf(t, "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:0\r\nrdb_bgsave_in_progress:0\r\n"
                      "aof_enabled:0\r\naof_rewrite_in_progress:0\r\n");
}

/* The Stats section: Valkey 8's counters soloist keeps, then soloist's own. */
static void info_stats(textbuf *t) {
    io_offload_stats io_stats;
    io_offload_get_stats(&io_stats);
    /* Valkey 8's fields in its order, those soloist counts (no
     * replication, eviction, pub/sub, forks or defragmentation). */
    textbuf_printf(
        t,
        "# Stats\r\ntotal_connections_received:%lld\r\ntotal_commands_processed:%lld\r\n"
        "instantaneous_ops_per_sec:%lld\r\ntotal_net_input_bytes:%lld\r\ntotal_net_output_bytes:%lld\r\n"
        "instantaneous_input_kbps:%.2f\r\ninstantaneous_output_kbps:%.2f\r\nrejected_connections:%lld\r\n"
        "expired_keys:%lld\r\nexpired_stale_perc:%.2f\r\nexpire_cycle_cpu_milliseconds:%lld\r\n"
        "evicted_keys:0\r\nkeyspace_hits:%lld\r\nkeyspace_misses:%lld\r\nunexpected_error_replies:%lld\r\n"
        "total_error_replies:%lld\r\ntotal_reads_processed:%lld\r\ntotal_writes_processed:%lld\r\n"
        "io_threaded_reads_processed:%llu\r\nio_threaded_writes_processed:%llu\r\n"
        "client_query_buffer_limit_disconnections:%lld\r\nclient_output_buffer_limit_disconnections:%lld\r\n",
        server.stat_numconnections, server.stat_numcommands, server_instantaneous_metric(0),
        server.stat_net_input_bytes, server.stat_net_output_bytes, (double)server_instantaneous_metric(1) / 1024,
        (double)server_instantaneous_metric(2) / 1024, server.stat_rejected_conn, db_stat.expired_keys,
        (double)db_stat.expired_stale_perc_x100 / 100.0, db_stat.expire_cycle_cpu_us / 1000, db_stat.keyspace_hits,
        db_stat.keyspace_misses, server.stat_unexpected_error_replies, server.stat_total_error_replies,
        server.stat_total_reads, server.stat_total_writes, (unsigned long long)io_stats.reads_done,
        (unsigned long long)io_stats.writes_done, server.stat_client_qbuf_limit_disconnections,
        server.stat_client_outbuf_limit_disconnections);
    memory_prefetch_stats pf; /* step 6; Valkey's two names, and soloist's average */
    memory_prefetch_get_stats(&pf);
    textbuf_printf(t,
                   "io_threaded_total_prefetch_batches:%llu\r\nio_threaded_total_prefetch_entries:%llu\r\n"
                   "prefetch_avg_batch_size:%.2f\r\n",
                   (unsigned long long)pf.batches, (unsigned long long)pf.keys,
                   pf.batches ? (double)pf.keys / (double)pf.batches : 0.0);
    /* Step 7, not Valkey's: bulk payload bytes main copied into reply
     * buffers, and bulk replies that went by reference instead. */
    textbuf_printf(t, "reply_bytes_copied:%lld\r\nreply_refs:%lld\r\n", server.stat_reply_bytes_copied,
                   server.stat_reply_refs);
    /* Step 5, not Valkey's: commands run, and reply bytes appended,
     * while a worker was writing the same client (io-write-watermark). */
    textbuf_printf(t, "commands_during_write:%lld\r\nreply_bytes_during_write:%lld\r\n",
                   server.stat_commands_during_write, server.stat_reply_bytes_during_write);
}

/* The Replication section: always a primary with no replicas. */
static void info_replication(textbuf *t) {
    textbuf_printf(t, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n");
}

/* The CPU section: the process's and main thread's CPU time. */
static void info_cpu(textbuf *t) {
    struct rusage self, thread;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_THREAD, &thread);
    textbuf_printf(t,
                   "# CPU\r\nused_cpu_sys:%.6f\r\nused_cpu_user:%.6f\r\nused_cpu_sys_main_thread:%.6f\r\n"
                   "used_cpu_user_main_thread:%.6f\r\n",
                   tv_sec(self.ru_stime), tv_sec(self.ru_utime), tv_sec(thread.ru_stime), tv_sec(thread.ru_utime));
}

/* The Commandstats section: one line per command or subcommand called. */
static void info_commandstats(textbuf *t) {
    textbuf_printf(t, "# Commandstats\r\n");
    size_t cursor = 0;
    for (command *top; (top = commands_next(&cursor));) {
        command *sub = commands_subcommands(top);
        for (command *cmd = top; cmd && cmd->name; cmd = cmd == top ? sub : cmd + 1) {
            if (!cmd->calls && !cmd->failed_calls && !cmd->rejected_calls) continue;
            textbuf_printf(
                t, "cmdstat_%s:calls=%lld,usec=%lld,usec_per_call=%.2f,rejected_calls=%lld,failed_calls=%lld\r\n",
                cmd->name, cmd->calls, cmd->usec, cmd->calls ? (double)cmd->usec / (double)cmd->calls : 0.0,
                cmd->rejected_calls, cmd->failed_calls);
        }
    }
}

/* The Keyspace section: db0's key counts, when it has keys. */
static void info_keyspace(textbuf *t) {
    textbuf_printf(t, "# Keyspace\r\n");
    if (db_size(&db0))
        textbuf_printf(t, "db0:keys=%zu,expires=%zu,avg_ttl=%lld\r\n", db_size(&db0), db_expires_size(&db0),
                       db0.avg_ttl);
}

/* INFO's text: each section asked for (argv, or the default ones), in
 * Valkey's order, a blank line between two. */
static void gen_info(textbuf *t, int argc, obj **argv) {
    long long now = util_mstime();
    long long uptime = (now - server.start_time_ms) / 1000;
    int sections = 0;
#define SECTION(name, def) if (wanted(argc, argv, name, def) && (sections++ ? (textbuf_printf(t, "\r\n"), 1) : 1))
    SECTION("server", 1) info_server(t, uptime);
    SECTION("clients", 1) info_clients(t);
    SECTION("memory", 1) info_memory(t);
    SECTION("persistence", 1) info_persistence(t);
    SECTION("stats", 1) info_stats(t);
    SECTION("replication", 1) info_replication(t);
    SECTION("cpu", 1) info_cpu(t);
    SECTION("threads", 1) info_threads(t);
    SECTION("iothreads", 1) info_iothreads(t);
    SECTION("commandstats", 0) info_commandstats(t);
    SECTION("keyspace", 1) info_keyspace(t);
#undef SECTION
}

static void info_command(client *c) {
    textbuf t = {0};
    textbuf_printf(&t, "%s", "");
    gen_info(&t, c->argc, c->argv);
    reply_verbatim(c, t.p, t.len, "txt");
    zfree(t.p);
}

/* ------------------------------------------------------------ COMMAND */

static void reply_flags(client *c, uint32_t flags) {
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {
        {CMD_WRITE, "write"},       {CMD_READONLY, "readonly"},
        {CMD_DENYOOM, "denyoom"},   {CMD_ADMIN, "admin"},
        {CMD_NOSCRIPT, "noscript"}, {CMD_BLOCKING, "blocking"},
        {CMD_LOADING, "loading"},   {CMD_STALE, "stale"},
        {CMD_NOAUTH, "no_auth"},    {CMD_FAST, "fast"},
        {CMD_NO_MULTI, "no_multi"}, {CMD_MOVABLEKEYS, "movablekeys"}, /* last, as Redis 7.0 and Valkey print it */
    };
    long n = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) n += (flags & names[i].bit) != 0;
    reply_set_len(c, n);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (flags & names[i].bit) reply_status(c, names[i].name);
}

/* Redis 7's ten-element command description. */
static void reply_command_info(client *c, const command *cmd) {
    reply_array_len(c, 10);
    reply_bulk_cstr(c, cmd->name);
    reply_long_long(c, cmd->arity);
    reply_flags(c, cmd->flags);
    reply_long_long(c, cmd->first_key);
    reply_long_long(c, cmd->last_key);
    reply_long_long(c, cmd->key_step);
    reply_set_len(c, 0);   /* ACL categories */
    reply_set_len(c, 0);   /* tips */
    reply_array_len(c, 0); /* key specs */
    reply_array_len(c, 0); /* subcommands */
}

static void reply_command_docs(client *c, const command *cmd) {
    reply_bulk_cstr(c, cmd->name);
    reply_map_len(c, 3);
    reply_bulk_cstr(c, "summary");
    reply_bulk_cstr(c, cmd->summary ? cmd->summary : "");
    reply_bulk_cstr(c, "since");
    reply_bulk_cstr(c, "1.0.0");
    reply_bulk_cstr(c, "group");
    reply_bulk_cstr(c, cmd->group ? cmd->group : "generic");
}

/* COMMAND INFO [name ...]: every command, or each named one (null for
 * a name that is none). */
static void command_info_reply(client *c) {
    size_t cursor = 0;
    command *cmd;
    if (c->argc == 2) {
        reply_array_len(c, (long)commands_count());
        while ((cmd = commands_next(&cursor))) reply_command_info(c, cmd);
        return;
    }
    reply_array_len(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        cmd = commands_lookup(c->argv[i]->ptr, c->argv[i]->len);
        if (cmd)
            reply_command_info(c, cmd);
        else
            reply_null(c);
    }
}

/* COMMAND DOCS [name ...]: a map of every command, or of each named one
 * that exists (an unknown name is left out, so the length is deferred). */
static void command_docs_reply(client *c) {
    size_t cursor = 0;
    command *cmd;
    if (c->argc == 2) {
        reply_map_len(c, (long)commands_count());
        while ((cmd = commands_next(&cursor))) reply_command_docs(c, cmd);
        return;
    }
    void *len = reply_deferred_len(c);
    long n = 0;
    for (int i = 2; i < c->argc; i++) {
        cmd = commands_lookup(c->argv[i]->ptr, c->argv[i]->len);
        if (!cmd) continue;
        reply_command_docs(c, cmd);
        n++;
    }
    reply_set_deferred_map_len(c, len, n);
}

static void command_command(client *c) {
    size_t cursor = 0;
    command *cmd;
    if (c->argc == 1) {
        reply_array_len(c, (long)commands_count());
        while ((cmd = commands_next(&cursor))) reply_command_info(c, cmd);
        return;
    }
    obj *sub = c->argv[1];
    if (arg_is(sub, "count") && c->argc == 2) {
        reply_long_long(c, (long long)commands_count());
    } else if (arg_is(sub, "info")) {
        command_info_reply(c);
    } else if (arg_is(sub, "docs")) {
        command_docs_reply(c);
    } else if (arg_is(sub, "list") && c->argc == 2) {
        reply_array_len(c, (long)commands_count());
        while ((cmd = commands_next(&cursor))) reply_bulk_cstr(c, cmd->name);
    } else if (arg_is(sub, "help") && c->argc == 2) {
        static const char *const help[] = {
            "(no subcommand)",
            "    Return details about all commands.",
            "COUNT",
            "    Return the total number of commands in this server.",
            "LIST",
            "    Return a list of all commands in this server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            NULL,
        };
        reply_help(c, help);
    } else {
        reply_subcommand_syntax_error(c);
    }
}

/* ------------------------------------------------------------- MEMORY */

/*@ memory-usage */
/* MEMORY USAGE's bytes for one key (Valkey: objectComputeSize plus the
 * key's own allocation). Valkey walks a collection, sampling a few
 * elements and scaling up; soloist does not know, from this layer, how
 * each type lays out its elements, so it asks the allocator instead:
 *   - a string: the usable size of its allocation (and of its bytes',
 *     where they have their own: obj_bytes_inline);
 *   - any other value: the bytes zmalloc counts while the value is copied
 *     (obj_dup builds the same structure), then the copy is freed. Every
 *     element is copied, so SAMPLES is checked but changes nothing, and
 *     the time is O(N) like Valkey's SAMPLES 0. An I/O thread allocating
 *     during the copy would be counted too: the figure is an estimate;
 *   - the key: its db_entry (the key's bytes and its expire time) and its
 *     share of the keyspace table's buckets. */
static size_t value_usage(const obj *o) {
    if (o->type == OBJ_STRING)
        return malloc_usable_size((void *)o) + (obj_bytes_inline(o) ? 0 : malloc_usable_size(o->ptr));
    size_t before = zmalloc_used_memory();
    obj *copy = obj_dup(o);
    size_t after = zmalloc_used_memory();
    obj_decr_ref(copy);
    return after > before ? after - before : 0;
}
/*@ end */

static void memory_usage(client *c) {
    for (int j = 3; j < c->argc; j++) {
        long long samples;
        if (arg_is(c->argv[j], "samples") && j + 1 < c->argc) {
            if (!obj_get_ll(c->argv[j + 1], &samples)) return reply_error(c, ERR_NOT_INT);
            if (samples < 0) return reply_error(c, ERR_SYNTAX);
            j++;
        } else {
            return reply_error(c, ERR_SYNTAX);
        }
    }
    db_entry *e = db_find_entry(c->db, c->argv[2]);
    if (!e) return reply_null(c);
    size_t keys = hashtable_size(c->db->keys);
    size_t table_share = keys ? hashtable_mem_usage(c->db->keys) / keys : 0;
    reply_long_long(c, (long long)(value_usage(e->val) + malloc_usable_size(e) + table_share));
}

/* MEMORY STATS: Redis 7.0's map, in its order, with the entries soloist
 * can fill (memory_report); no allocator internals, no scripts. */
/* One map entry whose value is a double (integers: reply_map_ll). */
static void field_double(client *c, const char *name, double v) {
    reply_bulk_cstr(c, name);
    reply_double(c, v);
}

static void memory_stats(client *c) {
    mem_report m = memory_report();
    reply_map_len(c, 16);
    reply_map_ll(c, "peak.allocated", (long long)m.peak);
    reply_map_ll(c, "total.allocated", (long long)m.used);
    reply_map_ll(c, "startup.allocated", (long long)m.startup);
    reply_map_ll(c, "replication.backlog", 0);
    reply_map_ll(c, "clients.slaves", 0);
    reply_map_ll(c, "clients.normal", (long long)m.clients);
    reply_map_ll(c, "aof.buffer", 0);
    reply_bulk_cstr(c, "db.0");
    reply_map_len(c, 2);
    reply_map_ll(c, "overhead.hashtable.main", (long long)m.db_main);
    reply_map_ll(c, "overhead.hashtable.expires", (long long)m.db_expires);
    reply_map_ll(c, "overhead.total", (long long)m.overhead);
    reply_map_ll(c, "keys.count", (long long)m.keys);
    reply_map_ll(c, "keys.bytes-per-key", (long long)m.bytes_per_key);
    reply_map_ll(c, "dataset.bytes", (long long)m.dataset);
    field_double(c, "dataset.percentage", m.dataset_perc);
    field_double(c, "peak.percentage", m.peak_perc);
    field_double(c, "fragmentation", m.frag);
    reply_map_ll(c, "fragmentation.bytes", m.frag_bytes);
}

/* Valkey's MEMORY HELP lines for the subcommands soloist has (no DOCTOR). */
static const char *const memory_help[] = {
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    NULL,
};

/* MEMORY (Valkey: memoryCommand in src/object.c). The dispatcher has
 * checked the subcommand and its arity. */
static void memory_command(client *c) {
    obj *sub = c->argv[1];
    if (arg_is(sub, "usage")) {
        memory_usage(c);
    } else if (arg_is(sub, "stats")) {
        memory_stats(c);
    } else if (arg_is(sub, "malloc-stats")) {
        /* Valkey's answer when it is not built with jemalloc. */
        reply_bulk_cstr(c, "Stats not supported for the current allocator");
    } else if (arg_is(sub, "purge")) {
        /* glibc's nearest thing to jemalloc's purge: give the free pages
         * at the heap's top, and whole free pages inside it, back to the
         * kernel (Valkey replies OK without doing anything under libc). */
        malloc_trim(0);
        reply_ok(c);
    } else {
        reply_help(c, memory_help);
    }
}

command memory_subcommands[] = {
    {"memory|usage", memory_command, -3, CMD_READONLY, 2, 2, 1, "server", "Estimates the memory usage of a key.", 0, 0,
     0, 0},
    SUBCOMMAND("memory|stats", memory_command, 2, 0, "server", "Returns details about memory usage."),
    SUBCOMMAND("memory|malloc-stats", memory_command, 2, 0, "server", "Returns the allocator statistics."),
    SUBCOMMAND("memory|purge", memory_command, 2, 0, "server", "Asks the allocator to release memory."),
    SUBCOMMAND("memory|help", memory_command, 2, CMD_LOADING | CMD_STALE, "server",
               "Returns helpful text about the different subcommands."),
    {0},
};

/* Subcommands: name, proc (the container's), arity, flags, summary. */
#define SUB(name, proc, arity, flags, summary) SUBCOMMAND(name, proc, arity, flags, "server", summary)
command command_subcommands[] = {
    SUB("command|count", command_command, 2, CMD_STALE | CMD_LOADING, "Returns a count of commands."),
    SUB("command|info", command_command, -2, CMD_STALE | CMD_LOADING,
        "Returns information about one, multiple or all commands."),
    SUB("command|docs", command_command, -2, CMD_STALE | CMD_LOADING,
        "Returns documentary information about one, multiple or all commands."),
    SUB("command|list", command_command, -2, CMD_STALE | CMD_LOADING, "Returns a list of command names."),
    SUB("command|help", command_command, 2, CMD_STALE | CMD_LOADING,
        "Returns helpful text about the different subcommands."),
    {0},
};
#undef SUB

command info_commands[] = {
    {"command", command_command, -1, CMD_STALE | CMD_LOADING, 0, 0, 0, "server",
     "Returns detailed information about all commands.", 0, 0, 0, 0},
    {"info", info_command, -1, CMD_STALE | CMD_LOADING, 0, 0, 0, "server",
     "Returns information and statistics about the server.", 0, 0, 0, 0},
    {"memory", memory_command, -2, 0, 0, 0, 0, "server", "A container for memory diagnostics commands.", 0, 0, 0, 0},
    {0},
};
