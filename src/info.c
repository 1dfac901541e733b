/* info.c — INFO [section ...] (step 0). See info.h. */
#include "info.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "networking.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* A growing text buffer for the INFO string. */
typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void text_printf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(text *t, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap * 2 + (size_t)(n > 0 ? n : 0) + 256;
        t->p = zrealloc(t->p, t->cap);
    }
}

static void bytes_human(char *buf, size_t len, double n) {
    const char *unit = "B";
    if (n >= 1024.0 * 1024 * 1024) n /= 1024.0 * 1024 * 1024, unit = "G";
    else if (n >= 1024.0 * 1024) n /= 1024.0 * 1024, unit = "M";
    else if (n >= 1024.0) n /= 1024.0, unit = "K";
    if (unit[0] == 'B')
        snprintf(buf, len, "%.0fB", n);
    else
        snprintf(buf, len, "%.2f%s", n, unit);
}

static double tv_sec(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

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
 * microseconds and share of the total since start (or CONFIG RESETSTAT).
 * poll is time inside epoll_wait, i.e. idle or waiting; busy is the rest,
 * and exec/busy is the share a thread pool can never take away. */
static void info_threads(text *t) {
    server_phase(server.phase_now); /* charge the running phase up to now */
    static const char *names[PHASE_COUNT] = {"poll", "read", "exec", "write", "other"};
    uint64_t total = 0, busy = 0;
    for (int p = 0; p < PHASE_COUNT; p++) total += server.phase_ns[p];
    busy = total - server.phase_ns[PHASE_POLL];
    text_printf(t, "# Threads\r\nio_threads_active:0\r\nio_threads_configured:%d\r\n", server.io_threads_num);
    for (int p = 0; p < PHASE_COUNT; p++)
        text_printf(t, "main_thread_%s_us:%llu\r\nmain_thread_%s_calls:%llu\r\n", names[p],
                    (unsigned long long)(server.phase_ns[p] / 1000), names[p],
                    (unsigned long long)server.phase_calls[p]);
    text_printf(t, "main_thread_total_us:%llu\r\nmain_thread_busy_us:%llu\r\n", (unsigned long long)(total / 1000),
                (unsigned long long)(busy / 1000));
    for (int p = 0; p < PHASE_COUNT; p++) {
        if (p == PHASE_POLL) continue;
        text_printf(t, "main_thread_%s_share_of_busy:%.4f\r\n", names[p],
                    busy ? (double)server.phase_ns[p] / (double)busy : 0.0);
    }
}
/*@ end */

static void gen_info(text *t, int argc, obj **argv) {
    long long now = util_mstime();
    long long uptime = (now - server.start_time_ms) / 1000;
    int sections = 0;
#define SECTION(name, def) if (wanted(argc, argv, name, def) && (sections++ ? (text_printf(t, "\r\n"), 1) : 1))
    SECTION("server", 1) {
        struct utsname u;
        uname(&u);
        text_printf(t,
                    "# Server\r\nredis_version:%s\r\nvalkey_version:%s\r\nsoloist_version:%s\r\nserver_name:soloist\r\n"
                    "redis_mode:standalone\r\nos:%s %s %s\r\narch_bits:%d\r\nmultiplexing_api:epoll\r\n"
                    "gcc_version:%d.%d.%d\r\nprocess_id:%d\r\nrun_id:%s\r\ntcp_port:%d\r\n"
                    "server_time_usec:%lld\r\nuptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:%d\r\n"
                    "configured_hz:%d\r\nexecutable:soloist-server\r\nconfig_file:%s\r\nio_threads_active:0\r\n",
                    SOLOIST_COMPAT_VERSION, SOLOIST_COMPAT_VERSION, SOLOIST_VERSION, u.sysname, u.release, u.machine,
                    (int)(sizeof(void *) * 8), __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__, (int)server.pid,
                    server.runid, server.port, util_ustime(), uptime, uptime / 86400, server.hz, server.hz,
                    server.configfile ? server.configfile : "");
    }
    SECTION("clients", 1) {
        size_t max_in = 0, max_out = 0;
        for (client *c = server.clients; c; c = c->next) {
            if (c->qb_cap > max_in) max_in = c->qb_cap;
            if (client_output_bytes(c) > max_out) max_out = client_output_bytes(c);
        }
        text_printf(t,
                    "# Clients\r\nconnected_clients:%ld\r\nmaxclients:%d\r\nclient_recent_max_input_buffer:%zu\r\n"
                    "client_recent_max_output_buffer:%zu\r\nblocked_clients:0\r\n",
                    server.clients_count, server.maxclients, max_in, max_out);
    }
    SECTION("memory", 1) {
        char h[32];
        size_t used = zmalloc_used_memory();
        bytes_human(h, sizeof(h), (double)used);
        text_printf(t,
                    "# Memory\r\nused_memory:%zu\r\nused_memory_human:%s\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\n"
                    "maxmemory_policy:noeviction\r\nmem_allocator:libc\r\n",
                    used, h);
    }
    SECTION("persistence", 1) {
        text_printf(t, "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:0\r\nrdb_bgsave_in_progress:0\r\n"
                       "aof_enabled:0\r\naof_rewrite_in_progress:0\r\n");
    }
    SECTION("stats", 1) {
        text_printf(t,
                    "# Stats\r\ntotal_connections_received:%lld\r\ntotal_commands_processed:%lld\r\n"
                    "total_net_input_bytes:%lld\r\ntotal_net_output_bytes:%lld\r\nrejected_connections:%lld\r\n"
                    "expired_keys:%lld\r\nevicted_keys:0\r\nkeyspace_hits:%lld\r\nkeyspace_misses:%lld\r\n"
                    "client_query_buffer_limit_disconnections:%lld\r\nclient_output_buffer_limit_disconnections:%lld\r\n"
                    "total_reads_processed:%lld\r\ntotal_writes_processed:%lld\r\ntotal_error_replies:%lld\r\n"
                    "instantaneous_ops_per_sec:%lld\r\ninstantaneous_input_kbps:%.2f\r\n"
                    "instantaneous_output_kbps:%.2f\r\nexpired_stale_perc:%.2f\r\n"
                    "expire_cycle_cpu_milliseconds:%lld\r\n"
                    "io_threaded_reads_processed:0\r\nio_threaded_writes_processed:0\r\n",
                    server.stat_numconnections, server.stat_numcommands, server.stat_net_input_bytes,
                    server.stat_net_output_bytes, server.stat_rejected_conn, db_stat.expired_keys,
                    db_stat.keyspace_hits, db_stat.keyspace_misses, server.stat_client_qbuf_limit_disconnections,
                    server.stat_client_outbuf_limit_disconnections, server.stat_total_reads,
                    server.stat_total_writes, server.stat_total_error_replies, server_instantaneous_metric(0),
                    (double)server_instantaneous_metric(1) / 1024, (double)server_instantaneous_metric(2) / 1024,
                    (double)db_stat.expired_stale_perc_x100 / 100.0, db_stat.expire_cycle_cpu_us / 1000);
    }
    SECTION("replication", 1) {
        text_printf(t, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n");
    }
    SECTION("cpu", 1) {
        struct rusage self, thread;
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_THREAD, &thread);
        text_printf(t,
                    "# CPU\r\nused_cpu_sys:%.6f\r\nused_cpu_user:%.6f\r\nused_cpu_sys_main_thread:%.6f\r\n"
                    "used_cpu_user_main_thread:%.6f\r\n",
                    tv_sec(self.ru_stime), tv_sec(self.ru_utime), tv_sec(thread.ru_stime), tv_sec(thread.ru_utime));
    }
    SECTION("threads", 1) { info_threads(t); }
    SECTION("commandstats", 0) {
        text_printf(t, "# Commandstats\r\n");
        size_t cursor = 0;
        for (command *top; (top = commands_next(&cursor));) {
            command *sub = commands_subcommands(top);
            for (command *cmd = top; cmd && cmd->name; cmd = cmd == top ? sub : cmd + 1) {
                if (!cmd->calls && !cmd->failed_calls && !cmd->rejected_calls) continue;
                text_printf(t,
                            "cmdstat_%s:calls=%lld,usec=%lld,usec_per_call=%.2f,rejected_calls=%lld,failed_calls=%lld\r\n",
                            cmd->name, cmd->calls, cmd->usec,
                            cmd->calls ? (double)cmd->usec / (double)cmd->calls : 0.0, cmd->rejected_calls,
                            cmd->failed_calls);
            }
        }
    }
    SECTION("keyspace", 1) {
        text_printf(t, "# Keyspace\r\n");
        if (db_size(&db0))
            text_printf(t, "db0:keys=%zu,expires=%zu,avg_ttl=%lld\r\n", db_size(&db0),
                        db_expires_size(&db0), db0.avg_ttl);
    }
#undef SECTION
}

void info_command(client *c) {
    text t = {0};
    text_printf(&t, "%s", "");
    gen_info(&t, c->argc, c->argv);
    reply_verbatim(c, t.p, t.len, "txt");
    zfree(t.p);
}
