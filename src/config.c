/* config.c — the option table, config files, the command line, CONFIG.
 *
 * Step 0 (plumbing). Owns: the table below, which says for every option
 * its Valkey name, its type, its bounds, its default and where in `server`
 * it lives; the loader (text → options); the command line (argv → text,
 * as Valkey builds it); CONFIG GET/SET/RESETSTAT/REWRITE/HELP.
 * Threads: main thread only (see config.h).
 * Valkey: src/config.c — static_configs[], the typeInterface functions
 * (boolConfigSet, numericConfigSet...), loadServerConfigFromString,
 * configSetCommand (set all, apply, restore on failure), configGetCommand;
 * main() in src/server.c for the command line; sdssplitargs in src/sds.c
 * for the quoting rules.
 *
 * Why a table: every option is parsed, bounded, printed and reset by the
 * same few functions per type, so CONFIG GET prints exactly what the file
 * accepts, and an error names the bound that was broken, in Valkey's
 * words, for every option at once.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "object.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

int (*config_apply_io_threads)(int new_value, const char **err) = NULL;
int (*config_apply_listeners)(const char **err) = NULL;
int (*config_apply_maxclients)(const char **err) = NULL;

/* Options accepted for compatibility (clients and benchmarks ask for
 * them) but with no field in `server`: soloist keeps nothing on disk. */
static int cfg_appendonly;
static int cfg_io_threads_do_reads;
static char *cfg_dir;         /* "dir": checked to exist; soloist never chdir()s */
static char *cfg_dir_default; /* the working directory at start */
static char *cfg_dbfilename;
static obuf_limit cfg_obuf_replica, cfg_obuf_pubsub;

/* Errors formatted at run time wait here until the caller copies them
 * (Valkey: loadbuf). Main thread only. */
static char errbuf[256];

/* ------------------------------------------------------------------ */
/* Growing strings and Valkey's quoting rules                          */
/* ------------------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_catlen(sbuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 128;
        while (cap < b->len + n + 1) cap *= 2;
        b->p = zrealloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_cat(sbuf *b, const char *s) { sb_catlen(b, s, strlen(s)); }

static char *strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strfmt(const char *fmt, ...) {
    /* vasprintf, not vsnprintf twice: GCC 12 with -fsanitize=undefined
     * warns (wrongly) about a null format in the sizing call. */
    va_list ap;
    char *tmp = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&tmp, fmt, ap);
    va_end(ap);
    char *s = zstrdup(n >= 0 && tmp ? tmp : "out of memory");
    free(tmp);
    return s;
}

static void free_args(char **v, int n) {
    for (int i = 0; i < n; i++) zfree(v[i]);
    zfree(v);
}

static int hexval(int ch) { return isdigit(ch) ? ch - '0' : tolower(ch) - 'a' + 10; }

/* The byte a backslash escape in double quotes stands for: \n \r \t \b
 * \a, and any other character (\" \\) for itself. */
static char unescape(char c) {
    const char *from = "nrtba", *to = "\n\r\t\b\a";
    const char *hit = c ? strchr(from, c) : NULL;
    return hit ? to[hit - from] : c;
}

/*@ config-splitargs */
/* Splits a line into arguments the way Valkey's sdssplitargs does. In
 * "double quotes" \n \r \t \b \a \xHH and \<any> are escapes; in 'single
 * quotes' only \' is; a closing quote must be followed by a space or the
 * end. Returns NULL on unbalanced quotes; otherwise an array (never NULL,
 * possibly empty) to release with free_args. */
static char **split_args(const char *p, int *argc) {
    char **v = zmalloc(sizeof(char *));
    int n = 0;
    sbuf tok = {0};
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        int inq = 0, insq = 0, done = 0;
        tok.len = 0;
        sb_catlen(&tok, "", 0);
        while (!done) {
            if (inq) {
                if (p[0] == '\\' && p[1] == 'x' && isxdigit((unsigned char)p[2]) && isxdigit((unsigned char)p[3])) {
                    char ch = (char)(hexval((unsigned char)p[2]) * 16 + hexval((unsigned char)p[3]));
                    sb_catlen(&tok, &ch, 1);
                    p += 3;
                } else if (p[0] == '\\' && p[1]) {
                    p++;
                    char ch = unescape(*p);
                    sb_catlen(&tok, &ch, 1);
                } else if (*p == '"') {
                    if (p[1] && !isspace((unsigned char)p[1])) goto unbalanced;
                    done = 1;
                } else if (!*p) {
                    goto unbalanced;
                } else {
                    sb_catlen(&tok, p, 1);
                }
            } else if (insq) {
                if (p[0] == '\\' && p[1] == '\'') {
                    p++;
                    sb_catlen(&tok, "'", 1);
                } else if (*p == '\'') {
                    if (p[1] && !isspace((unsigned char)p[1])) goto unbalanced;
                    done = 1;
                } else if (!*p) {
                    goto unbalanced;
                } else {
                    sb_catlen(&tok, p, 1);
                }
            } else if (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == '\0') {
                done = 1;
            } else if (*p == '"') {
                inq = 1;
            } else if (*p == '\'') {
                insq = 1;
            } else {
                sb_catlen(&tok, p, 1);
            }
            if (*p) p++;
        }
        v = zrealloc(v, sizeof(char *) * (size_t)(n + 1));
        v[n++] = zstrndup(tok.p, tok.len);
    }
    zfree(tok.p);
    *argc = n;
    return v;
unbalanced:
    zfree(tok.p);
    free_args(v, n);
    *argc = 0;
    return NULL;
}
/*@ end */

/* Appends s in double quotes, escaped so split_args gives s back
 * (Valkey: sdscatrepr). */
static void sb_cat_repr(sbuf *b, const char *s) {
    sb_cat(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        static const char *const escapes[256] = {['\\'] = "\\\\", ['"'] = "\\\"", ['\n'] = "\\n", ['\r'] = "\\r",
                                                 ['\t'] = "\\t",  ['\a'] = "\\a", ['\b'] = "\\b"};
        const char *esc = escapes[ch];
        char hex[8];
        if (!esc && !isprint(ch)) {
            snprintf(hex, sizeof(hex), "\\x%02x", ch);
            esc = hex;
        }
        if (esc)
            sb_cat(b, esc);
        else
            sb_catlen(b, (const char *)&ch, 1);
    }
    sb_cat(b, "\"");
}

/* ------------------------------------------------------------------ */
/* The option types                                                    */
/* ------------------------------------------------------------------ */

enum cfg_type { T_BOOL, T_INT, T_LL, T_ENUM, T_STRING, T_SPECIAL };

#define F_IMMUTABLE (1u << 0)  /* only in the file or on the command line */
#define F_SENSITIVE (1u << 1)  /* never logged (requirepass) */
#define F_MULTI_ARG (1u << 2)  /* takes several arguments (bind, save...) */
#define F_MEMORY (1u << 3)     /* numeric with units: 512mb, 1gb */
#define F_EMPTY_NULL (1u << 4) /* string: "" is stored as NULL */

typedef struct cfg_enum {
    const char *name;
    int val;
} cfg_enum;

typedef struct cfg {
    const char *name;
    enum cfg_type type;
    unsigned flags;
    void *ptr;             /* int * (BOOL, INT, ENUM), long long *, char ** */
    long long lo, hi, def; /* numeric bounds; default of BOOL/INT/LL/ENUM */
    const char *def_str;   /* default of STRING and SPECIAL (as CONFIG SET text) */
    const cfg_enum *enums;
    int (*valid_num)(long long v, const char **err);
    int (*valid_str)(const char *v, const char **err);
    /* SPECIAL: set returns 1 changed, 2 unchanged, 0 error (Valkey's
     * convention); get returns a zmalloc'd string. */
    int (*set)(char **argv, int argc, const char **err);
    char *(*get)(void);
    /* Runs after CONFIG SET changed the value (Valkey: apply_fn). */
    int (*apply)(const char **err);
} cfg;

/* Sets from arguments. Returns 1 when the value changed, 2 when it was
 * already that value, 0 on error with *err set (static text). */
static int cfg_set_args(const cfg *c, char **argv, int argc, const char **err) {
    if (c->type == T_SPECIAL) return c->set(argv, argc, err);
    const char *v = argv[0];
    long long ll = 0;
    switch (c->type) {
    case T_BOOL:
        if (!strcasecmp(v, "yes"))
            ll = 1;
        else if (!strcasecmp(v, "no"))
            ll = 0;
        else {
            *err = "argument must be 'yes' or 'no'";
            return 0;
        }
        break;
    case T_INT:
    case T_LL:
        if (c->flags & F_MEMORY) {
            if (!util_parse_memory(v, &ll)) {
                *err = "argument must be a memory value";
                return 0;
            }
        } else if (!str_to_ll(v, strlen(v), &ll)) {
            *err = "argument couldn't be parsed into an integer";
            return 0;
        }
        if (ll < c->lo || ll > c->hi) {
            snprintf(errbuf, sizeof(errbuf), "argument must be between %lld and %lld inclusive", c->lo, c->hi);
            *err = errbuf;
            return 0;
        }
        break;
    case T_ENUM: {
        const cfg_enum *e = c->enums;
        while (e->name && strcasecmp(e->name, v)) e++;
        if (!e->name) {
            size_t off = (size_t)snprintf(errbuf, sizeof(errbuf), "argument(s) must be one of the following: ");
            for (e = c->enums; e->name && off < sizeof(errbuf); e++)
                off += (size_t)snprintf(errbuf + off, sizeof(errbuf) - off, "%s%s", e->name, e[1].name ? ", " : "");
            *err = errbuf;
            return 0;
        }
        ll = e->val;
        break;
    }
    case T_STRING: {
        if (c->valid_str && !c->valid_str(v, err)) return 0;
        char **slot = c->ptr;
        const char *nv = ((c->flags & F_EMPTY_NULL) && !*v) ? NULL : v;
        if (nv == *slot || (nv && *slot && !strcmp(nv, *slot))) return 2;
        zfree(*slot);
        *slot = nv ? zstrdup(nv) : NULL;
        return 1;
    }
    case T_SPECIAL:
        break;
    }
    if (c->valid_num && !c->valid_num(ll, err)) return 0;
    if (c->type == T_LL) {
        if (*(long long *)c->ptr == ll) return 2;
        *(long long *)c->ptr = ll;
    } else {
        if (*(int *)c->ptr == (int)ll) return 2;
        *(int *)c->ptr = (int)ll;
    }
    return 1;
}

/* The value as CONFIG GET prints it, zmalloc'd. */
static char *cfg_get_value(const cfg *c) {
    switch (c->type) {
    case T_BOOL:
        return zstrdup(*(int *)c->ptr ? "yes" : "no");
    case T_INT:
        return strfmt("%d", *(int *)c->ptr);
    case T_LL:
        return strfmt("%lld", *(long long *)c->ptr);
    case T_ENUM:
        for (const cfg_enum *e = c->enums; e->name; e++)
            if (e->val == *(int *)c->ptr) return zstrdup(e->name);
        return zstrdup("unknown");
    case T_STRING: {
        char *s = *(char **)c->ptr;
        return zstrdup(s ? s : "");
    }
    case T_SPECIAL:
        return c->get();
    }
    return zstrdup("");
}

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
    sbuf b = {0};
    sb_catlen(&b, "", 0);
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
/* client-output-buffer-limit <class> <hard> <soft> <soft-seconds> ...
 * All groups are checked before any is stored (Valkey:
 * updateClientOutputBufferLimit). Only the normal class is enforced by
 * soloist; replica and pubsub are kept so GET prints what was set. */
static int set_obuf(char **argv, int argc, const char **err) {
    obuf_limit v[3];
    int seen[3] = {0, 0, 0};
    if (argc % 4) {
        *err = "Wrong number of arguments in buffer limit configuration.";
        return 0;
    }
    for (int j = 0; j < argc; j += 4) {
        int cls = !strcasecmp(argv[j], "normal")                                       ? 0
                  : (!strcasecmp(argv[j], "replica") || !strcasecmp(argv[j], "slave")) ? 1
                  : !strcasecmp(argv[j], "pubsub")                                     ? 2
                                                                                       : -1;
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
    if (seen[0]) server.obuf_normal = v[0];
    if (seen[1]) cfg_obuf_replica = v[1];
    if (seen[2]) cfg_obuf_pubsub = v[2];
    return 1;
}

/* Valkey prints every class, the replica class under its old name. */
static char *get_obuf(void) {
    const obuf_limit *l[3] = {&server.obuf_normal, &cfg_obuf_replica, &cfg_obuf_pubsub};
    const char *names[3] = {"normal", "slave", "pubsub"};
    sbuf b = {0};
    for (int j = 0; j < 3; j++) {
        char *part = strfmt("%s%s %lld %lld %lld", j ? " " : "", names[j], l[j]->hard_bytes, l[j]->soft_bytes,
                            l[j]->soft_seconds);
        sb_cat(&b, part);
        zfree(part);
    }
    return b.p;
}
/*@ end */

/* Apply functions: the work a CONFIG SET needs beyond storing. */
static int apply_io_threads(const char **err) {
    if (!config_apply_io_threads) {
        *err = "io-threads can't be changed at run time in this build";
        return 0;
    }
    return config_apply_io_threads(server.io_threads_num, err);
}

static int apply_listeners(const char **err) {
    if (!config_apply_listeners) {
        *err = "port and bind can't be changed at run time in this build";
        return 0;
    }
    return config_apply_listeners(err);
}

static int apply_maxclients(const char **err) {
    if (!config_apply_maxclients) {
        *err = "maxclients can't be changed at run time in this build";
        return 0;
    }
    return config_apply_maxclients(err);
}

/* hz is a hint: out-of-range values are accepted and clamped, as Valkey's
 * updateHZ does (server.c divides by it, so it must never be 0). */
static int apply_hz(const char **err) {
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
#define STRC(n, fl, f, d, valid)                                                                                       \
    { .name = n, .type = T_STRING, .flags = fl, .ptr = P_STR(f), .def_str = d, .valid_str = valid }
#define ENUMC(n, fl, f, e, d)                                                                                          \
    { .name = n, .type = T_ENUM, .flags = fl, .ptr = P_INT(f), .enums = e, .def = d }
#define SPECIALC(n, fl, s, g, d, ap)                                                                                   \
    { .name = n, .type = T_SPECIAL, .flags = (fl) | F_MULTI_ARG, .set = s, .get = g, .def_str = d, .apply = ap }

#define MB (1024LL * 1024)

/*@ config-table */
static const cfg configs[] = {
    /* Network. bind defaults to 127.0.0.1 alone: DESIGN.md binds
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
    STRC("requirepass", F_SENSITIVE | F_EMPTY_NULL, server.requirepass, NULL, NULL),
    MEMC("proto-max-bulk-len", 0, server.proto_max_bulk_len, MB, LONG_MAX, 512 * MB),
    MEMC("client-query-buffer-limit", 0, server.client_max_querybuf_len, MB, LONG_MAX, 1024 * MB),
    SPECIALC("client-output-buffer-limit", 0, set_obuf, get_obuf, "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60",
             NULL),
    /* The loop and the threads (steps 2-6). */
    INTC("hz", 0, server.hz, 0, INT_MAX, 10, apply_hz),
    INTC("io-threads", 0, server.io_threads_num, 1, CONFIG_IO_THREADS_MAX, 1, apply_io_threads),
    INTC("prefetch-batch-max-size", 0, server.prefetch_batch_max_size, 0, 128, 16, NULL),
    BOOLC("io-threads-do-reads", F_IMMUTABLE, cfg_io_threads_do_reads, 0, NULL), /* deprecated, ignored */
    /* Keyspace: accepted; soloist serves db 0 only. */
    INTC("databases", F_IMMUTABLE, server.databases, 1, INT_MAX, 16, NULL),
    /* Logging and process. */
    STRC("logfile", F_IMMUTABLE, server.logfile, "", NULL),
    ENUMC("loglevel", 0, server.verbosity, loglevel_enum, LL_NOTICE),
    BOOLC("daemonize", F_IMMUTABLE, server.daemonize, 0, valid_daemonize),
    /* Persistence: accepted so `--save '' --appendonly no` and the
     * clients that ask work; soloist keeps nothing on disk. */
    {.name = "save", .type = T_SPECIAL, .flags = F_MULTI_ARG, .set = set_save, .get = get_save, .def_str = ""},
    BOOLC("appendonly", 0, cfg_appendonly, 0, valid_appendonly),
    {.name = "dir", .type = T_SPECIAL, .set = set_dir, .get = get_dir},
    STRC("dbfilename", 0, cfg_dbfilename, "dump.rdb", valid_dbfilename),
};
/*@ end */

#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

/* Case-insensitive (Valkey's configs dict folds case). soloist has none
 * of Valkey's alias spellings ("slave-..."), so one name per option. */
static const cfg *cfg_lookup(const char *name) {
    for (size_t i = 0; i < NCONFIGS; i++)
        if (!strcasecmp(configs[i].name, name)) return &configs[i];
    return NULL;
}

/* Sets from one CONFIG SET value: multi-argument options split it on
 * single spaces, as Valkey's performInterfaceSet does. */
static int cfg_set_string(const cfg *c, const char *value, const char **err) {
    if (!(c->flags & F_MULTI_ARG)) {
        char *one = (char *)value;
        return cfg_set_args(c, &one, 1, err);
    }
    char **v = zmalloc(sizeof(char *));
    int n = 0;
    if (*value) {
        for (const char *p = value;; p++) {
            const char *sp = strchr(p, ' ');
            size_t len = sp ? (size_t)(sp - p) : strlen(p);
            v = zrealloc(v, sizeof(char *) * (size_t)(n + 1));
            v[n++] = zstrndup(p, len);
            if (!sp) break;
            p = sp;
        }
    }
    int r = cfg_set_args(c, v, n, err);
    free_args(v, n);
    return r;
}

/* What CONFIG GET printed right after config_init_defaults, per option:
 * CONFIG REWRITE leaves an option out when it still has this value. */
static char *cfg_defaults[NCONFIGS];

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
        const cfg *c = &configs[i];
        const char *err = NULL;
        switch (c->type) {
        case T_BOOL:
        case T_INT:
        case T_ENUM:
            *(int *)c->ptr = (int)c->def;
            break;
        case T_LL:
            *(long long *)c->ptr = c->def;
            break;
        case T_STRING:
            *(char **)c->ptr = c->def_str ? zstrdup(c->def_str) : NULL;
            break;
        case T_SPECIAL:
            if (!strcmp(c->name, "dir"))
                cfg_dir = zstrdup(cfg_dir_default);
            else
                cfg_set_string(c, c->def_str, &err);
            break;
        }
    }
    for (size_t i = 0; i < NCONFIGS; i++) cfg_defaults[i] = cfg_get_value(&configs[i]);
    /* Not an option in Valkey (DEBUG SET-ACTIVE-EXPIRE is), so not here
     * either; on by default. */
    server.active_expire_enabled = 1;
}

/* ------------------------------------------------------------------ */
/* Loading: config text, files, the command line                       */
/* ------------------------------------------------------------------ */

static int load_text(const char *text, char **err, int depth);

/* Appends a whole stream / file to b. */
static void read_stream_into(sbuf *b, FILE *fp) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) sb_catlen(b, buf, n);
}

static int read_file_into(sbuf *b, const char *path, char **err) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        *err = strfmt("Fatal error, can't open config file '%s': %s", path, strerror(errno));
        return -1;
    }
    read_stream_into(b, fp);
    fclose(fp);
    return 0;
}

/* `include path` — a pattern that matches no file is skipped, a plain
 * path that can't be opened is an error (Valkey: loadServerConfig). */
static int load_include(const char *path, char **err, int depth) {
    if (depth > 16) {
        *err = strfmt("Fatal error, config files include each other too deeply at '%s'", path);
        return -1;
    }
    sbuf b = {0};
    sb_catlen(&b, "", 0);
    int r = 0;
    if (strpbrk(path, "*?[")) {
        glob_t g;
        if (glob(path, 0, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc && r == 0; i++) r = read_file_into(&b, g.gl_pathv[i], err);
            globfree(&g);
        }
    } else {
        r = read_file_into(&b, path, err);
    }
    if (r == 0) r = load_text(b.p, err, depth + 1);
    zfree(b.p);
    return r;
}

/*@ config-load */
/* One directive per line: `name arg...`. Options set here ignore
 * F_IMMUTABLE (that flag is about CONFIG SET) and run no apply hook: the
 * server reads the values when it starts. Valkey:
 * loadServerConfigFromString. */
static int load_text(const char *text, char **err, int depth) {
    const char *msg = NULL;
    char *line = NULL, **argv = NULL;
    int argc = 0, linenum = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *b = p, *e = p + len;
        p = nl ? nl + 1 : e;
        linenum++;
        while (b < e && strchr(" \t\r\n", *b)) b++;
        while (e > b && strchr(" \t\r\n", e[-1])) e--;
        if (b == e || *b == '#') continue;
        line = zstrndup(b, (size_t)(e - b));
        if (!(argv = split_args(line, &argc))) {
            msg = "Unbalanced quotes in configuration line";
            goto loaderr;
        }
        const cfg *c = argc ? cfg_lookup(argv[0]) : NULL;
        if (c) {
            int r;
            if (!(c->flags & F_MULTI_ARG) && argc != 2) {
                msg = "wrong number of arguments";
                goto loaderr;
            }
            if ((c->flags & F_MULTI_ARG) && argc == 2 && argv[1][0]) {
                /* `bind "127.0.0.1 ::1"` or `--bind "127.0.0.1 ::1"`:
                 * one argument holding several. */
                int n2;
                char **v2 = split_args(argv[1], &n2);
                if (!v2) {
                    msg = "Unbalanced quotes in configuration line";
                    goto loaderr;
                }
                r = cfg_set_args(c, v2, n2, &msg);
                free_args(v2, n2);
            } else {
                r = cfg_set_args(c, argv + 1, argc - 1, &msg);
            }
            if (!r) goto loaderr;
        } else if (argc == 2 && !strcasecmp(argv[0], "include")) {
            if (load_include(argv[1], err, depth) == -1) goto nested_err;
        } else if (argc) {
            msg = "Bad directive or wrong number of arguments";
            goto loaderr;
        }
        free_args(argv, argc);
        argv = NULL;
        zfree(line);
        line = NULL;
    }
    if (depth == 0 && server.logfile && server.logfile[0]) {
        /* Fail now rather than after the server started (as Valkey). */
        FILE *fp = fopen(server.logfile, "a");
        if (!fp) {
            snprintf(errbuf, sizeof(errbuf), "Can't open the log file: %s", strerror(errno));
            msg = errbuf;
            goto loaderr;
        }
        fclose(fp);
    }
    apply_hz(&msg);
    return 0;

loaderr:
    if (line)
        *err = strfmt("*** FATAL CONFIG FILE ERROR (Version %s) ***\nReading the configuration file, at line %d\n"
                      ">>> '%s'\n%s",
                      SOLOIST_VERSION, linenum, line, msg);
    else
        *err = strfmt("*** FATAL CONFIG FILE ERROR (Version %s) ***\n%s", SOLOIST_VERSION, msg);
nested_err:
    if (argv) free_args(argv, argc);
    zfree(line);
    return -1;
}
/*@ end */

int config_load_string(const char *text, char **err) {
    *err = NULL;
    return load_text(text, err, 0);
}

int config_load_file(const char *path, char **err) {
    sbuf b = {0};
    sb_catlen(&b, "", 0);
    *err = NULL;
    int r = read_file_into(&b, path, err);
    if (r == 0) r = load_text(b.p, err, 0);
    zfree(b.p);
    return r;
}

static char *absolute_path(const char *path) {
    char cwd[PATH_MAX];
    if (path[0] == '/') return zstrdup(path);
    char *rp = realpath(path, NULL);
    if (rp) {
        char *r = zstrdup(rp);
        free(rp);
        return r;
    }
    return getcwd(cwd, sizeof(cwd)) ? strfmt("%s/%s", cwd, path) : zstrdup(path);
}

/*@ config-args */
/* The command line becomes config text appended after the file: each
 * --name opens a line, each following argument is added to it quoted, so
 * the loader sees exactly what a file would say. Valkey: main(). */
int config_load_args(int argc, char **argv, char **err) {
    int j = 1, from_stdin = 0, expecting_value = 0;
    *err = NULL;
    if (argc >= 2) {
        if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version")) return CONFIG_ARGS_VERSION;
        if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) return CONFIG_ARGS_HELP;
        if (argv[1][0] != '-') {
            zfree(server.configfile);
            server.configfile = absolute_path(argv[1]);
            j = 2;
        }
    }
    sbuf opts = {0};
    sb_catlen(&opts, "", 0);
    for (; j < argc; j++) {
        const char *a = argv[j];
        if (a[0] == '-' && a[1] == '\0' && (j == 1 || j == argc - 1)) {
            from_stdin = 1;
        } else if (!expecting_value && a[0] == '-' && a[1] == '-') {
            if (opts.len) sb_cat(&opts, "\n");
            sb_cat(&opts, a + 2);
            sb_cat(&opts, " ");
            int n;
            char **v = split_args(a, &n);
            /* "--port" alone: its value comes next, even if it starts with
             * "--". "--port 6380" in one argument carries its own. */
            expecting_value = v && n == 1;
            if (v) free_args(v, n);
            /* `--save` with nothing after it, or before another option,
             * means `--save ""` (Valkey keeps this pre-7.0 habit). */
            if (expecting_value && !strcasecmp(a, "--save") &&
                (j == argc - 1 || (argv[j + 1][0] == '-' && argv[j + 1][1] == '-'))) {
                sb_cat(&opts, "\"\"");
                expecting_value = 0;
            }
        } else {
            sb_cat_repr(&opts, a);
            sb_cat(&opts, " ");
            expecting_value = 0;
        }
    }
    sbuf text = {0};
    sb_catlen(&text, "", 0);
    int r = server.configfile ? read_file_into(&text, server.configfile, err) : 0;
    if (r == 0 && from_stdin) read_stream_into(&text, stdin);
    if (r == 0) {
        sb_cat(&text, "\n");
        sb_catlen(&text, opts.p, opts.len);
        r = load_text(text.p, err, 0);
    }
    zfree(opts.p);
    zfree(text.p);
    return r == 0 ? CONFIG_ARGS_OK : CONFIG_ARGS_ERROR;
}
/*@ end */

/* ------------------------------------------------------------------ */
/* CONFIG SET and CONFIG GET                                           */
/* ------------------------------------------------------------------ */

/* Puts back the values saved before a failed CONFIG SET and re-runs the
 * apply functions (Valkey: restoreBackupConfig). */
static void restore_values(const cfg **set, char **old, int n, int (**applies)(const char **), int napply) {
    const char *e = NULL;
    for (int i = 0; i < n; i++)
        if (!cfg_set_string(set[i], old[i], &e))
            server_log(LL_WARNING, "Failed restoring failed CONFIG SET command. Error setting %s to '%s': %s",
                       set[i]->name, old[i], e);
    for (int k = 0; k < napply; k++)
        if (!applies[k](&e)) server_log(LL_WARNING, "Failed applying restored failed CONFIG SET command: %s", e);
}

/* The error for an option whose run-time hook nobody registered. */
static const char *hook_missing(const cfg *c) {
    const char *e = NULL;
    if ((c->apply == apply_io_threads && !config_apply_io_threads) ||
        (c->apply == apply_listeners && !config_apply_listeners) ||
        (c->apply == apply_maxclients && !config_apply_maxclients))
        c->apply(&e);
    return e;
}

/*@ config-set */
/* CONFIG SET name value [name value ...], all or nothing: every name is
 * checked first; then every value is set, keeping the old ones; then each
 * distinct apply function runs once; any failure restores everything.
 * Valkey: configSetCommand. */
static int set_many(const char *const *names, const char *const *values, int n, char **err) {
    const cfg **set = zcalloc(sizeof(cfg *) * (size_t)n);
    char **old = zcalloc(sizeof(char *) * (size_t)n);
    int (**applies)(const char **) = zcalloc(sizeof(*applies) * (size_t)n);
    int *owner = zcalloc(sizeof(int) * (size_t)n);
    int napply = 0, rc = -1, i;
    const char *errstr = NULL, *errname = NULL;

    for (i = 0; i < n; i++) {
        const cfg *c = cfg_lookup(names[i]);
        if (!c) {
            *err = strfmt("Unknown option or number of arguments for CONFIG SET - '%s'", names[i]);
            goto out;
        }
        errname = names[i];
        if (c->flags & F_IMMUTABLE) {
            errstr = "can't set immutable config";
            goto fail;
        }
        for (int j = 0; j < i; j++)
            if (set[j] == c) {
                errstr = "duplicate parameter";
                goto fail;
            }
        set[i] = c;
    }
    for (i = 0; i < n; i++) old[i] = cfg_get_value(set[i]);
    for (i = 0; i < n; i++) {
        int r = cfg_set_string(set[i], values[i], &errstr);
        if (!r) {
            errname = set[i]->name;
            *err = strfmt("CONFIG SET failed (possibly related to argument '%s') - %s", errname, errstr);
            restore_values(set, old, i + 1, NULL, 0);
            goto out;
        }
        if (r == 1 && set[i]->apply) {
            const char *missing = hook_missing(set[i]);
            if (missing) { /* refuse before anything is applied */
                *err = strfmt("CONFIG SET failed (possibly related to argument '%s') - %s", set[i]->name, missing);
                restore_values(set, old, i + 1, NULL, 0);
                goto out;
            }
            int k = 0;
            while (k < napply && applies[k] != set[i]->apply) k++;
            if (k == napply) {
                applies[napply] = set[i]->apply;
                owner[napply++] = i;
            }
        }
    }
    for (int k = 0; k < napply; k++) {
        if (!applies[k](&errstr)) {
            *err = strfmt("CONFIG SET failed (possibly related to argument '%s') - %s", set[owner[k]]->name, errstr);
            restore_values(set, old, n, applies, napply);
            goto out;
        }
    }
    rc = 0;
    goto out;
fail:
    *err = strfmt("CONFIG SET failed (possibly related to argument '%s') - %s", errname, errstr);
out:
    for (i = 0; i < n; i++) zfree(old[i]);
    zfree(old);
    zfree(set);
    zfree(applies);
    zfree(owner);
    return rc;
}
/*@ end */

int config_set(const char *name, const char *value, char **err) {
    *err = NULL;
    return set_many(&name, &value, 1, err);
}

char *config_get(const char *name) {
    const cfg *c = cfg_lookup(name);
    return c ? cfg_get_value(c) : NULL;
}

int config_is_sensitive(const char *name) {
    const cfg *c = cfg_lookup(name);
    return c && (c->flags & F_SENSITIVE);
}

static void add_match(const char **names, size_t max, size_t *count, const char *name) {
    for (size_t i = 0; i < *count && i < max; i++)
        if (!strcasecmp(names[i], name)) return;
    if (*count < max) names[*count] = name;
    (*count)++;
}

/* A name without glob characters is looked up directly and answered under
 * the spelling asked for; a pattern is matched case-insensitively against
 * every name (Valkey: configGetCommand). */
size_t config_get_matches(const char *const *patterns, int npatterns, const char **names, size_t max) {
    size_t count = 0;
    for (int p = 0; p < npatterns; p++) {
        const char *pat = patterns[p];
        if (!strpbrk(pat, "[*?")) {
            if (cfg_lookup(pat)) add_match(names, max, &count, pat);
            continue;
        }
        for (size_t i = 0; i < NCONFIGS; i++)
            if (util_string_match(pat, configs[i].name, 1)) add_match(names, max, &count, configs[i].name);
    }
    return count;
}

/* ------------------------------------------------------------------ */
/* CONFIG REWRITE                                                      */
/* ------------------------------------------------------------------ */

/* 536870912 → "512mb", as Valkey's rewriteConfigBytesOption writes. */
static char *bytes_human(long long v) {
    static const struct {
        long long mul;
        const char *unit;
    } units[] = {{1024LL * 1024 * 1024, "gb"}, {1024 * 1024, "mb"}, {1024, "kb"}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (v && v % units[i].mul == 0) return strfmt("%lld%s", v / units[i].mul, units[i].unit);
    return strfmt("%lld", v);
}

/* The line(s) CONFIG REWRITE writes for an option: `name value`, the
 * value quoted only when it has to be, memory in units, and one line per
 * class for client-output-buffer-limit. */
static void sb_cat_option(sbuf *b, const cfg *c) {
    if (c->set == set_obuf) {
        const obuf_limit *l[3] = {&server.obuf_normal, &cfg_obuf_replica, &cfg_obuf_pubsub};
        const char *names[3] = {"normal", "replica", "pubsub"};
        for (int j = 0; j < 3; j++) {
            char *hard = bytes_human(l[j]->hard_bytes), *soft = bytes_human(l[j]->soft_bytes);
            char *line = strfmt("%s %s %s %s %lld\n", c->name, names[j], hard, soft, l[j]->soft_seconds);
            sb_cat(b, line);
            zfree(line);
            zfree(hard);
            zfree(soft);
        }
        return;
    }
    char *v = (c->flags & F_MEMORY) ? bytes_human(*(long long *)c->ptr) : cfg_get_value(c);
    int plain = *v != '\0';
    for (const char *s = v; *s && plain; s++)
        if (!isprint((unsigned char)*s) || strchr(" \"'\\#", *s)) plain = 0;
    sb_cat(b, c->name);
    sb_cat(b, " ");
    if (plain)
        sb_cat(b, v);
    else
        sb_cat_repr(b, v);
    sb_cat(b, "\n");
    zfree(v);
}

/*@ config-rewrite */
/* Rewrites the file in place, keeping its comments and order: the first
 * line of each option gets the current value, later duplicates go, and
 * options that differ from their default and were not in the file are
 * appended. Written to a temporary file, then renamed over the old one.
 * Valkey: rewriteConfig (which also keeps a "# Generated by CONFIG
 * REWRITE" line above what it appends). */
static int rewrite_config(const char *path, char **err) {
    char done[NCONFIGS] = {0};
    int signed_already = 0, fd = -1;
    sbuf old = {0}, out = {0};
    sb_catlen(&old, "", 0);
    sb_catlen(&out, "", 0);
    FILE *fp = fopen(path, "r");
    if (fp) {
        read_stream_into(&old, fp);
        fclose(fp);
    } else if (errno != ENOENT) {
        goto ioerr;
    }
    for (const char *p = old.p; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = zstrndup(p, len);
        p = nl ? nl + 1 : p + len;
        int argc = 0;
        char **argv = split_args(line, &argc);
        const cfg *c = argv && argc ? cfg_lookup(argv[0]) : NULL;
        if (strstr(line, "# Generated by CONFIG REWRITE") == line) signed_already = 1;
        if (!c) {
            sb_cat(&out, line);
            sb_cat(&out, "\n");
        } else if (!done[c - configs]) {
            done[c - configs] = 1;
            sb_cat_option(&out, c);
        }
        if (argv) free_args(argv, argc);
        zfree(line);
    }
    for (size_t i = 0; i < NCONFIGS; i++) {
        char *v = cfg_get_value(&configs[i]);
        int changed = !done[i] && cfg_defaults[i] && strcmp(v, cfg_defaults[i]);
        zfree(v);
        if (!changed) continue;
        if (!signed_already) sb_cat(&out, "# Generated by CONFIG REWRITE\n");
        signed_already = 1;
        sb_cat_option(&out, &configs[i]);
    }
    char *tmp = strfmt("%s.XXXXXX", path);
    fd = mkstemp(tmp);
    int ok = fd != -1;
    for (size_t off = 0; ok && off < out.len;) {
        ssize_t w = write(fd, out.p + off, out.len - off);
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        if (ok) off += (size_t)w;
    }
    ok = ok && fsync(fd) == 0 && fchmod(fd, 0644) == 0 && rename(tmp, path) == 0;
    int saved = errno;
    if (fd != -1) close(fd);
    if (!ok && fd != -1) unlink(tmp);
    zfree(tmp);
    errno = saved;
    if (ok) {
        zfree(old.p);
        zfree(out.p);
        return 0;
    }
ioerr:
    *err = strfmt("Rewriting config file: %s", strerror(errno));
    zfree(old.p);
    zfree(out.p);
    return -1;
}
/*@ end */

/* ------------------------------------------------------------------ */
/* The CONFIG command                                                  */
/* ------------------------------------------------------------------ */

static const char *const config_help[] = {
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Print this help.",
};

/* Every error below carries its "ERR " code itself: reply_error would
 * take "CONFIG SET failed..." for an error code named CONFIG. */
static void config_arity_error(struct client *c, const char *sub) {
    reply_error_format(c, "ERR wrong number of arguments for 'config|%s' command", sub);
}

void config_command(struct client *c) {
    const char *sub = c->argc >= 2 ? c->argv[1]->ptr : "";
    char *err = NULL;
    if (c->argc < 2) {
        reply_error(c, "ERR wrong number of arguments for 'config' command");
    } else if (!strcasecmp(sub, "get")) {
        if (c->argc < 3) return config_arity_error(c, "get");
        int np = c->argc - 2;
        const char **pats = zmalloc(sizeof(char *) * (size_t)np);
        const char **names = zmalloc(sizeof(char *) * NCONFIGS);
        for (int i = 0; i < np; i++) pats[i] = c->argv[2 + i]->ptr;
        size_t n = config_get_matches(pats, np, names, NCONFIGS);
        reply_map_len(c, (long)n);
        for (size_t i = 0; i < n; i++) {
            char *v = config_get(names[i]);
            reply_bulk_cstr(c, names[i]);
            reply_bulk_cstr(c, v);
            zfree(v);
        }
        zfree(names);
        zfree(pats);
    } else if (!strcasecmp(sub, "set")) {
        if (c->argc < 4) return config_arity_error(c, "set");
        if (c->argc & 1) return reply_error(c, "ERR syntax error");
        int n = (c->argc - 2) / 2;
        const char **names = zmalloc(sizeof(char *) * (size_t)n);
        const char **values = zmalloc(sizeof(char *) * (size_t)n);
        for (int i = 0; i < n; i++) {
            names[i] = c->argv[2 + 2 * i]->ptr;
            values[i] = c->argv[3 + 2 * i]->ptr;
        }
        if (set_many(names, values, n, &err) == 0) {
            reply_ok(c);
        } else {
            reply_error_format(c, "ERR %s", err);
            zfree(err);
        }
        zfree(names);
        zfree(values);
    } else if (!strcasecmp(sub, "resetstat")) {
        if (c->argc != 2) return config_arity_error(c, "resetstat");
        server_reset_stats();
        reply_ok(c);
    } else if (!strcasecmp(sub, "rewrite")) {
        if (c->argc != 2) return config_arity_error(c, "rewrite");
        if (!server.configfile) return reply_error(c, "ERR The server is running without a config file");
        if (rewrite_config(server.configfile, &err) == -1) {
            server_log(LL_WARNING, "CONFIG REWRITE failed: %s", err);
            reply_error_format(c, "ERR %s", err);
            zfree(err);
            return;
        }
        server_log(LL_NOTICE, "CONFIG REWRITE executed with success.");
        reply_ok(c);
    } else if (!strcasecmp(sub, "help") && c->argc == 2) {
        size_t n = sizeof(config_help) / sizeof(config_help[0]);
        reply_array_len(c, (long)n + 1);
        reply_status(c, "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
        for (size_t i = 0; i < n; i++) reply_status(c, config_help[i]);
    } else if (!strcasecmp(sub, "help")) {
        config_arity_error(c, "help");
    } else {
        reply_error_format(c, "ERR unknown subcommand '%.128s'. Try CONFIG HELP.", sub);
    }
}

void config_usage(FILE *out, const char *progname) {
    fprintf(out,
            "Usage: %1$s [/path/to/soloist.conf] [options] [-]\n"
            "       %1$s - (read config from stdin)\n"
            "       %1$s -v or --version\n"
            "       %1$s -h or --help\n\n"
            "Examples:\n"
            "       %1$s (run the server with default config)\n"
            "       %1$s soloist.conf\n"
            "       %1$s --port 7777 --io-threads 4\n"
            "       %1$s --save '' --appendonly no --bind 127.0.0.1 ::1\n"
            "       %1$s soloist.conf --loglevel verbose -\n\n"
            "Options (as in soloist.conf; on the command line, --name value...):\n",
            progname);
    for (size_t i = 0; i < NCONFIGS; i++)
        fprintf(out, "  %-28s default: \"%s\"%s\n", configs[i].name, cfg_defaults[i] ? cfg_defaults[i] : "",
                (configs[i].flags & F_IMMUTABLE) ? "  (not settable by CONFIG SET)" : "");
}
