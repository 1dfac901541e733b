/* config.c — the option table, its special options, defaults.
 *
 * Step 0 (server layer). Owns: the table below, which says for every option
 * its Valkey name, its type, its bounds, its default and where in `server`
 * it lives; the options that need code of their own (bind, save, dir,
 * client-output-buffer-limit) and the few kept only for compatibility;
 * the apply functions that forward CONFIG SET to the hooks of config.h;
 * setting and freeing the defaults. The rest of the configuration reads
 * this table: config_load.c (files, the command line), cmd_config.c
 * (CONFIG GET/SET and the command), config_rewrite.c (CONFIG REWRITE);
 * config_types.c (parse and print by type) sits below it, handed one
 * entry at a time; config_private.h is what they share.
 * Threads: main thread only (see config.h).
 * Valkey: src/config.c — static_configs[] and the special options'
 * set/get functions (setConfigBindOption, setConfigSaveOption,
 * setConfigClientOutputBufferLimitOption...), initConfigValues.
 *
 * Why a table: every option is parsed, bounded, printed and reset by the
 * same few functions per type, so CONFIG GET prints exactly what the file
 * accepts, and an error names the bound that was broken, in Valkey's
 * words, for every option at once.
 */
#include "config.h"
#include "config_private.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server.h"
#include "trace.h"
#include "util.h"
#include "zmalloc.h"
#include "hash.h"
#include "list.h"
#include "set.h"
#include "zset.h"

int (*config_apply_io_threads)(int new_value, const char **err) = NULL;
int (*config_apply_listeners)(const char **err) = NULL;
int (*config_apply_maxclients)(const char **err) = NULL;

/* Options accepted for compatibility (clients and benchmarks ask for
 * them) but with no field in `server`: soloist keeps nothing on disk. */
static int cfg_appendonly;
static int cfg_io_threads_do_reads;
int cfg_enable_protected_configs; /* config_private.h */
/* The sorted set's small-encoding thresholds (see the table). */
static long long cfg_zset_max_listpack_entries, cfg_zset_max_listpack_value;
static char *cfg_dir;         /* "dir": checked to exist; soloist never chdir()s */
static char *cfg_dir_default; /* the working directory at start */
static char *cfg_dbfilename;
static obuf_limit cfg_obuf_replica, cfg_obuf_pubsub;

/* ------------------------------------------------------------------ */
/* Validators and special options                                      */
/* ------------------------------------------------------------------ */

static int valid_daemonize(long long v, const char **err) {
    if (v) *err = "soloist runs in the foreground only: daemonize must be 'no' (use your service manager or nohup)";
    return !v;
}

static int valid_appendonly(long long v, const char **err) {
    if (v) *err = "soloist keeps no data on disk (it is a cache): appendonly must be 'no'";
    return !v;
}

static int valid_dbfilename(const char *v, const char **err) {
    if (!*v)
        *err = "dbfilename can't be empty";
    else if (strchr(v, '/'))
        *err = "dbfilename can't be a path, just a filename";
    else
        return 1;
    return 0;
}

/* bind: up to CONFIG_BINDADDR_MAX addresses; one "" means none.
 * Valkey: setConfigBindOption / getConfigBindOption. */
static int set_bind(char **argv, int argc, const char **err) {
    if (argc > CONFIG_BINDADDR_MAX) {
        *err = "Too many bind addresses specified.";
        return 0;
    }
    if (argc == 1 && !argv[0][0]) argc = 0;
    int same = argc == server.bindaddr_count;
    for (int j = 0; same && j < argc; j++) same = !strcmp(argv[j], server.bindaddr[j]);
    if (same) return 2; /* no re-listen for an unchanged list */
    for (int j = 0; j < server.bindaddr_count; j++) zfree(server.bindaddr[j]);
    for (int j = 0; j < argc; j++) server.bindaddr[j] = zstrdup(argv[j]);
    server.bindaddr_count = argc;
    return 1;
}

static char *get_bind(void) {
    sbuf b = sb_empty();
    for (int j = 0; j < server.bindaddr_count; j++) {
        if (j) sb_cat(&b, " ");
        sb_cat(&b, server.bindaddr[j]);
    }
    return b.p;
}

/* save: checked as Valkey checks it (pairs of seconds >= 1 and changes
 * >= 0, or one "" for none), then ignored: soloist never snapshots, so
 * CONFIG GET save is always "". Valkey: setConfigSaveOption. */
static int set_save(char **argv, int argc, const char **err) {
    if (argc == 1 && !argv[0][0]) argc = 0;
    if (argc & 1) {
        *err = "Invalid save parameters";
        return 0;
    }
    for (int j = 0; j < argc; j++) {
        char *end;
        long long v = strtoll(argv[j], &end, 10);
        if (*end || !argv[j][0] || ((j & 1) == 0 && v < 1) || ((j & 1) == 1 && v < 0)) {
            *err = "Invalid save parameters";
            return 0;
        }
    }
    return 1;
}

static char *get_save(void) { return zstrdup(""); }

/* dir: Valkey chdir()s; soloist writes no files, so it only checks that
 * the directory exists and remembers it. */
static int set_dir(char **argv, int argc, const char **err) {
    struct stat st;
    errno = 0;
    if (argc != 1) {
        *err = "wrong number of arguments";
        return 0;
    }
    if (!argv[0][0]) {
        *err = "dir can't be empty";
        return 0;
    }
    if (stat(argv[0], &st) == -1 || !S_ISDIR(st.st_mode)) {
        /* Valkey answers chdir()'s strerror; stat's is the same text. */
        *err = strerror(errno ? errno : ENOTDIR);
        return 0;
    }
    if (cfg_dir && !strcmp(cfg_dir, argv[0])) return 2;
    zfree(cfg_dir);
    cfg_dir = zstrdup(argv[0]);
    return 1;
}

static char *get_dir(void) { return zstrdup(cfg_dir ? cfg_dir : ""); }

/*@ config-obuf */
/* The client classes, in the order GET and REWRITE print them. Valkey's
 * GET names the replica class by its old name, REWRITE by its new one;
 * either is accepted. */
#define OBUF_CLASSES 3
static const struct {
    const char *get_name, *rewrite_name;
} obuf_names[OBUF_CLASSES] = {{"normal", "normal"}, {"slave", "replica"}, {"pubsub", "pubsub"}};

static obuf_limit *obuf_class(int cls) {
    obuf_limit *l[OBUF_CLASSES] = {&server.obuf_normal, &cfg_obuf_replica, &cfg_obuf_pubsub};
    return l[cls];
}

static int obuf_class_by_name(const char *name) {
    for (int cls = 0; cls < OBUF_CLASSES; cls++)
        if (!strcasecmp(name, obuf_names[cls].get_name) || !strcasecmp(name, obuf_names[cls].rewrite_name)) return cls;
    return -1;
}

/* client-output-buffer-limit <class> <hard> <soft> <soft-seconds> ...
 * All groups are checked before any is stored (Valkey:
 * updateClientOutputBufferLimit). Only the normal class is enforced by
 * soloist; replica and pubsub are kept so GET prints what was set. */
static int set_obuf(char **argv, int argc, const char **err) {
    obuf_limit v[OBUF_CLASSES];
    int seen[OBUF_CLASSES] = {0, 0, 0};
    if (argc % 4) {
        *err = "Wrong number of arguments in buffer limit configuration.";
        return 0;
    }
    for (int j = 0; j < argc; j += 4) {
        int cls = obuf_class_by_name(argv[j]);
        if (cls < 0) {
            *err = "Invalid client class specified in buffer limit configuration.";
            return 0;
        }
        char *end;
        long long secs = strtoll(argv[j + 3], &end, 10);
        if (!util_parse_memory(argv[j + 1], &v[cls].hard_bytes) ||
            !util_parse_memory(argv[j + 2], &v[cls].soft_bytes) || secs < 0 || *end || !argv[j + 3][0]) {
            *err = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            return 0;
        }
        v[cls].soft_seconds = secs;
        seen[cls] = 1;
    }
    for (int cls = 0; cls < OBUF_CLASSES; cls++)
        if (seen[cls]) *obuf_class(cls) = v[cls];
    return 1;
}

/* Valkey prints every class, the replica class under its old name. */
static char *get_obuf(void) {
    sbuf b = {0};
    for (int cls = 0; cls < OBUF_CLASSES; cls++) {
        const obuf_limit *l = obuf_class(cls);
        char *part = strfmt("%s%s %lld %lld %lld", cls ? " " : "", obuf_names[cls].get_name, l->hard_bytes,
                            l->soft_bytes, l->soft_seconds);
        sb_cat(&b, part);
        zfree(part);
    }
    return b.p;
}

/* REWRITE writes one line per class, memory in units. */
int cfg_rewrite_special(sbuf *b, const cfg *c) {
    if (c->set != set_obuf) return 0;
    for (int cls = 0; cls < OBUF_CLASSES; cls++) {
        const obuf_limit *l = obuf_class(cls);
        char *hard = cfg_bytes_human(l->hard_bytes), *soft = cfg_bytes_human(l->soft_bytes);
        char *line = strfmt("%s %s %s %s %lld\n", c->name, obuf_names[cls].rewrite_name, hard, soft, l->soft_seconds);
        sb_cat(b, line);
        zfree(line);
        zfree(hard);
        zfree(soft);
    }
    return 1;
}
/*@ end */

/* Apply functions: the work a CONFIG SET needs beyond storing, done by
 * the hook its owner registered (config.h). Without a hook the option
 * can't change at run time, and the apply function says so. */
#define NO_HOOK(what) what " can't be changed at run time in this build"

static int no_hook(const char *msg, const char **err) {
    *err = msg;
    return 0;
}

static int apply_io_threads(const char **err) {
    return config_apply_io_threads ? config_apply_io_threads(server.io_threads_num, err)
                                   : no_hook(NO_HOOK("io-threads"), err);
}

static int apply_listeners(const char **err) {
    return config_apply_listeners ? config_apply_listeners(err) : no_hook(NO_HOOK("port and bind"), err);
}

static int apply_maxclients(const char **err) {
    return config_apply_maxclients ? config_apply_maxclients(err) : no_hook(NO_HOOK("maxclients"), err);
}

/* Asked before anything is applied, so a CONFIG SET that would need a
 * missing hook is refused whole. */
const char *cfg_hook_missing(const cfg *c) {
    const char *e = NULL;
    if ((c->apply == apply_io_threads && !config_apply_io_threads) ||
        (c->apply == apply_listeners && !config_apply_listeners) ||
        (c->apply == apply_maxclients && !config_apply_maxclients))
        c->apply(&e);
    return e;
}

/* hz is a hint: out-of-range values are accepted and clamped, as Valkey's
 * updateHZ does (server_loop.c's cron divides by it, so it must never be 0). */
int cfg_apply_hz(const char **err) {
    (void)err;
    if (server.hz < CONFIG_MIN_HZ) server.hz = CONFIG_MIN_HZ;
    if (server.hz > CONFIG_MAX_HZ) server.hz = CONFIG_MAX_HZ;
    return 1;
}

/* ------------------------------------------------------------------ */
/* The table (Valkey: static_configs[])                                */
/* ------------------------------------------------------------------ */

static const cfg_enum loglevel_enum[] = {
    {"debug", LL_DEBUG}, {"verbose", LL_VERBOSE}, {"notice", LL_NOTICE}, {"warning", LL_WARNING}, {NULL, 0}};
static const cfg_enum zset_layout_enum[] = {{"copied", ZSET_LAYOUT_COPIED},
                                            {"node-pointer", ZSET_LAYOUT_NODE_POINTER},
                                            {"embedded", ZSET_LAYOUT_EMBEDDED},
                                            {"dense", ZSET_LAYOUT_DENSE},
                                            {NULL, 0}};
static const cfg_enum protected_enum[] = {
    {"no", CFG_PROTECTED_NO}, {"yes", CFG_PROTECTED_YES}, {"local", CFG_PROTECTED_LOCAL}, {NULL, 0}};
static const cfg_enum reply_write_timing_enum[] = {
    {"before-sleep", REPLY_WRITE_BEFORE_SLEEP}, {"immediate", REPLY_WRITE_IMMEDIATE}, {NULL, 0}};

static const cfg_enum io_threads_ignition_enum[] = {{"guarded", IO_IGNITION_GUARDED},
                                                    {"rusage", IO_IGNITION_RUSAGE},
                                                    {"active-time", IO_IGNITION_ACTIVE_TIME},
                                                    {NULL, 0}};

/* _Generic makes a field of the wrong type a compile error. */
#define P_INT(f) _Generic(&(f), int * : (void *)&(f))
#define P_LL(f) _Generic(&(f), long long * : (void *)&(f))
#define P_STR(f) _Generic(&(f), char ** : (void *)&(f))
#define BOOLC(n, fl, f, d, valid)                                                                                      \
    { .name = n, .type = T_BOOL, .flags = fl, .ptr = P_INT(f), .def = d, .valid_num = valid }
#define INTC(n, fl, f, l, h, d, ap)                                                                                    \
    { .name = n, .type = T_INT, .flags = fl, .ptr = P_INT(f), .lo = l, .hi = h, .def = d, .apply = ap }
#define MEMC(n, fl, f, l, h, d)                                                                                        \
    { .name = n, .type = T_LL, .flags = (fl) | F_MEMORY, .ptr = P_LL(f), .lo = l, .hi = h, .def = d }
#define LLC(n, fl, f, l, h, d)                                                                                         \
    { .name = n, .type = T_LL, .flags = fl, .ptr = P_LL(f), .lo = l, .hi = h, .def = d }
#define STRC(n, fl, f, d, valid)                                                                                       \
    { .name = n, .type = T_STRING, .flags = fl, .ptr = P_STR(f), .def_str = d, .valid_str = valid }
#define ENUMC(n, fl, f, e, d)                                                                                          \
    { .name = n, .type = T_ENUM, .flags = fl, .ptr = P_INT(f), .enums = e, .def = d }
#define SPECIALC(n, fl, s, g, d, ap)                                                                                   \
    { .name = n, .type = T_SPECIAL, .flags = (fl) | F_MULTI_ARG, .set = s, .get = g, .def_str = d, .apply = ap }

#define MB (1024LL * 1024)

/*@ config-table */
const cfg cfg_table[] = {
    /* Network. bind defaults to 127.0.0.1 alone: a teaching server binds
     * loopback, and one listening socket keeps step 0's picture simple
     * (Valkey's own default is "* -::*"; its example file has
     * "127.0.0.1 -::1", which soloist also accepts). */
    INTC("port", 0, server.port, 0, 65535, 6379, apply_listeners),
    SPECIALC("bind", 0, set_bind, get_bind, "127.0.0.1", apply_listeners),
    INTC("tcp-backlog", F_IMMUTABLE, server.tcp_backlog, 0, INT_MAX, 511, NULL),
    INTC("tcp-keepalive", 0, server.tcpkeepalive, 0, INT_MAX, 300, NULL),
    INTC("timeout", 0, server.maxidletime, 0, INT_MAX, 0, NULL),
    BOOLC("protected-mode", 0, server.protected_mode, 1, NULL),
    /* Clients and their limits. */
    INTC("maxclients", 0, server.maxclients, 1, INT_MAX, 10000, apply_maxclients),
    INTC("max-new-connections-per-cycle", 0, server.max_new_conns_per_cycle, 1, 1000, 10, NULL),
    STRC("requirepass", F_SENSITIVE | F_EMPTY_NULL, server.requirepass, NULL, NULL),
    MEMC("proto-max-bulk-len", 0, server.proto_max_bulk_len, MB, LONG_MAX, 512 * MB),
    MEMC("client-query-buffer-limit", 0, server.client_max_querybuf_len, MB, LONG_MAX, 1024 * MB),
    SPECIALC("client-output-buffer-limit", 0, set_obuf, get_obuf, "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60",
             NULL),
    /* The loop and the threads (steps 2-6). */
    INTC("hz", 0, server.hz, 0, INT_MAX, 10, cfg_apply_hz),
    INTC("io-threads", 0, server.io_threads_num, 1, CONFIG_IO_THREADS_MAX, 1, apply_io_threads),
    INTC("prefetch-batch-max-size", 0, server.prefetch_batch_max_size, 0, 128, 16, NULL),
    /* Not a Valkey option (Valkey 9 always avoids the copy, above its
     * size thresholds): step 7's switch, so one build can be measured with
     * and without large replies by reference. */
    BOOLC("reply-copy-avoidance", 0, server.reply_copy_avoidance, 1, NULL),
    /* Not a Valkey option: how much main writes to one client in one turn
     * when no other client waits behind it (networking.c, write_to_client);
     * 0 means until the socket is full. */
    MEMC("io-write-alone-max", 0, server.io_write_alone_max, 0, LONG_MAX, MB),
    BOOLC("io-threads-do-reads", F_IMMUTABLE, cfg_io_threads_do_reads, 0, NULL), /* deprecated, ignored */
    /* Valkey's debug option: every worker on whenever there is work,
     * the policy bypassed (tests and the forced-on benchmarks use it). */
    BOOLC("io-threads-always-active", 0, server.io_threads_always_active, 0, NULL),
    /* Not a Valkey option: which ignition rule wakes the workers (step 5;
     * io_offload.c and ignition.c). */
    ENUMC("io-threads-ignition", 0, server.io_threads_ignition, io_threads_ignition_enum, IO_IGNITION_GUARDED),
    /* Not a Valkey option: how long an idle I/O thread, or main waiting
     * for results, spins before it sleeps (io_threads.c). Valkey's spin
     * for ever; a large value comes close. */
    INTC("io-threads-idle-spin-us", 0, server.io_threads_idle_spin_us, 0, 1000000, 20, NULL),
    /* Not Valkey options: step 4's and step 5's A/B switches.
     * io-threads-poll-offload no keeps epoll_wait on main while the
     * threads are on (no POLL job; io_offload.c before-sleep).
     * io-write-watermark no makes main wait for a client's write in
     * flight to finish before it runs that client's next commands, so
     * nothing is appended behind a worker: the design without the
     * watermark's overlap (networking.c run-queued). Measured by
     * bench/poll_offload.py and bench/watermark.py. */
    BOOLC("io-threads-poll-offload", 0, server.io_threads_poll_offload, 1, NULL),
    BOOLC("io-write-watermark", 0, server.io_write_watermark, 1, NULL),
    /* An experiment, not a Valkey option (bench/write_timing.py): write a
     * client's replies in its read handler, right after its commands. */
    ENUMC("reply-write-timing", 0, server.reply_write_timing, reply_write_timing_enum, REPLY_WRITE_BEFORE_SLEEP),
    /* Not a Valkey option: how many events each thread's ring holds when
     * TRACE START records (trace.h); read at each start. */
    INTC("trace-buffer-events", 0, server.trace_buffer_events, TRACE_EVENTS_MIN, TRACE_EVENTS_MAX, TRACE_EVENTS_DEFAULT,
         NULL),
    /* Keyspace: accepted; soloist serves db 0 only. */
    INTC("databases", F_IMMUTABLE, server.databases, 1, INT_MAX, 16, NULL),
    /* Sorted sets: accepted with Valkey's defaults and checked as Valkey
     * checks them, but soloist has no small (listpack) encoding yet: every
     * sorted set is a skiplist and a member hashtable whatever its size,
     * so nothing reads these values. A value limit is a size in bytes
     * ("1k" works), an entries limit a count. The ziplist names are Valkey's
     * aliases; each pair shares one value, and CONFIG GET shows both names
     * as Valkey does. */
    LLC("zset-max-listpack-entries", 0, cfg_zset_max_listpack_entries, 0, LONG_MAX, 128),
    LLC("zset-max-ziplist-entries", 0, cfg_zset_max_listpack_entries, 0, LONG_MAX, 128),
    MEMC("zset-max-listpack-value", 0, cfg_zset_max_listpack_value, 0, LONG_MAX, 64),
    MEMC("zset-max-ziplist-value", 0, cfg_zset_max_listpack_value, 0, LONG_MAX, 64),
    /* Lists, hashes and sets: where a small collection's one listpack (or
     * intset) gives way to the large encoding (list.h, hash.h, set.h). A
     * value limit is a size in bytes, an entries limit a count; the
     * ziplist names are Valkey's aliases, each sharing its option's value.
     * list-compress-depth is accepted and has no effect (list.h). */
    LLC("list-max-listpack-size", 0, list_max_listpack_size, INT_MIN, INT_MAX, -2),
    LLC("list-max-ziplist-size", 0, list_max_listpack_size, INT_MIN, INT_MAX, -2),
    LLC("list-compress-depth", 0, list_compress_depth, 0, INT_MAX, 0),
    LLC("hash-max-listpack-entries", 0, hash_max_listpack_entries, 0, LONG_MAX, 512),
    LLC("hash-max-ziplist-entries", 0, hash_max_listpack_entries, 0, LONG_MAX, 512),
    MEMC("hash-max-listpack-value", 0, hash_max_listpack_value, 0, LONG_MAX, 64),
    MEMC("hash-max-ziplist-value", 0, hash_max_listpack_value, 0, LONG_MAX, 64),
    LLC("set-max-intset-entries", 0, set_max_intset_entries, 0, LONG_MAX, 512),
    LLC("set-max-listpack-entries", 0, set_max_listpack_entries, 0, LONG_MAX, 128),
    LLC("set-max-listpack-value", 0, set_max_listpack_value, 0, LONG_MAX, 64), /* a count in Valkey, not a size */
    /* Not a Valkey option (bench/zset_memory.py): where a sorted set keeps
     * its members (zset.h). Sets created afterwards take it; existing sets
     * keep the layout they were made with. */
    ENUMC("zset-layout", 0, zset_layout_default, zset_layout_enum, ZSET_LAYOUT_DENSE),
    /* Logging and process. */
    STRC("logfile", F_IMMUTABLE, server.logfile, "", NULL),
    ENUMC("loglevel", 0, server.verbosity, loglevel_enum, LL_NOTICE),
    BOOLC("daemonize", F_IMMUTABLE, server.daemonize, 0, valid_daemonize),
    /* Persistence: accepted so `--save '' --appendonly no` and the
     * clients that ask work; soloist keeps nothing on disk. */
    {.name = "save", .type = T_SPECIAL, .flags = F_MULTI_ARG, .set = set_save, .get = get_save, .def_str = ""},
    BOOLC("appendonly", 0, cfg_appendonly, 0, valid_appendonly),
    {.name = "dir", .type = T_SPECIAL, .flags = F_PROTECTED, .set = set_dir, .get = get_dir},
    STRC("dbfilename", F_PROTECTED, cfg_dbfilename, "dump.rdb", valid_dbfilename),
    /* Whether CONFIG SET may change the protected options above (Valkey's
     * default: no; "local" allows a client on the loopback). */
    ENUMC("enable-protected-configs", F_IMMUTABLE, cfg_enable_protected_configs, protected_enum, CFG_PROTECTED_NO),
};
/*@ end */

#define NCONFIGS (sizeof(cfg_table) / sizeof(cfg_table[0]))
const size_t cfg_table_len = NCONFIGS;

/* Case-insensitive (Valkey's configs dict folds case). An alias is an
 * entry of its own sharing its option's value (zset-max-ziplist-*);
 * soloist has none of Valkey's other aliases ("slave-..."). */
const cfg *cfg_lookup(const char *name) {
    for (size_t i = 0; i < NCONFIGS; i++)
        if (!strcasecmp(cfg_table[i].name, name)) return &cfg_table[i];
    return NULL;
}

/* What CONFIG GET printed right after config_init_defaults, per option:
 * CONFIG REWRITE leaves an option out when it still has this value. */
static char *cfg_defaults[NCONFIGS];

const char *cfg_default_value(const cfg *c) { return cfg_defaults[c - cfg_table]; }

void config_free_all(void) {
    for (size_t i = 0; i < NCONFIGS; i++) {
        zfree(cfg_defaults[i]);
        cfg_defaults[i] = NULL;
    }
    for (int j = 0; j < server.bindaddr_count; j++) zfree(server.bindaddr[j]);
    server.bindaddr_count = 0;
    zfree(server.requirepass);
    zfree(server.logfile);
    zfree(server.configfile);
    zfree(cfg_dir);
    zfree(cfg_dir_default);
    zfree(cfg_dbfilename);
    server.requirepass = server.logfile = server.configfile = NULL;
    cfg_dir = cfg_dir_default = cfg_dbfilename = NULL;
}

void config_init_defaults(void) {
    config_free_all();
    char cwd[PATH_MAX];
    cfg_dir_default = zstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
    for (size_t i = 0; i < NCONFIGS; i++) {
        const cfg *c = &cfg_table[i];
        const char *err = NULL;
        switch (c->type) {
        case T_BOOL:
        case T_INT:
        case T_ENUM: *(int *)c->ptr = (int)c->def; break;
        case T_LL: *(long long *)c->ptr = c->def; break;
        case T_STRING: *(char **)c->ptr = c->def_str ? zstrdup(c->def_str) : NULL; break;
        case T_SPECIAL:
            if (!strcmp(c->name, "dir"))
                cfg_dir = zstrdup(cfg_dir_default);
            else
                cfg_set_string(c, c->def_str, &err);
            break;
        }
    }
    for (size_t i = 0; i < NCONFIGS; i++) cfg_defaults[i] = cfg_get_value(&cfg_table[i]);
    /* Not an option in Valkey (DEBUG SET-ACTIVE-EXPIRE is), so not here
     * either; on by default. */
    server.active_expire_enabled = 1;
}
