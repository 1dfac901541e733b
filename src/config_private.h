/* config_private.h — the option table's types and what the config files
 * share among themselves (step 0, server layer).
 *
 * PRIVATE: include it from src/config*.c only. Everyone else uses
 * config.h, where an option is just a name and a value. This header exists
 * because the configuration is split into files of one idea each — the
 * table and its special options (config.c), how each type parses and
 * prints (config_types.c), loading text, files and the command line
 * (config_load.c), CONFIG REWRITE (config_rewrite.c), CONFIG SET/GET and
 * the command (cmd_config.c) — and they all read the same table.
 * Their calls form a line, bottom up: config_types.c is handed an entry
 * and calls none of the others; config.c (the table) calls the types;
 * config_load.c the table and the types; config_rewrite.c those and the
 * loader's quoting rules; cmd_config.c any of them (tools/calls.py
 * checks that no two call each other).
 *
 * Threads: main thread only, like all of config.h.
 * Valkey: src/config.c — standardConfig and its typeInterface, the
 * configs dict (here a table searched by name); src/sds.c for the growing
 * strings (sds) that sbuf stands in for.
 */
#ifndef SOLOIST_CONFIG_PRIVATE_H
#define SOLOIST_CONFIG_PRIVATE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zmalloc.h"

/* --- Growing strings (Valkey: sds) ------------------------------------------
 * Small enough to be inline: each config file gets its own copy. */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static inline void sb_catlen(sbuf *b, const char *s, size_t n) {
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

static inline void sb_cat(sbuf *b, const char *s) { sb_catlen(b, s, strlen(s)); }

/* An empty string that already holds its "" (so b.p is never NULL). */
static inline sbuf sb_empty(void) {
    sbuf b = {0};
    sb_catlen(&b, "", 0);
    return b;
}

/* Appends everything left in a stream. */
static inline void sb_cat_stream(sbuf *b, FILE *fp) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) sb_catlen(b, buf, n);
}

/* printf into a zmalloc'd string. */
static inline char *strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *strfmt(const char *fmt, ...) {
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

static inline void free_args(char **v, int n) {
    for (int i = 0; i < n; i++) zfree(v[i]);
    zfree(v);
}

/* The next line of a text at *p (without its '\n'), its length in *len;
 * moves *p past it. Call while **p != '\0'. */
static inline const char *next_line(const char **p, size_t *len) {
    const char *line = *p, *nl = strchr(line, '\n');
    *len = nl ? (size_t)(nl - line) : strlen(line);
    *p = nl ? nl + 1 : line + *len;
    return line;
}

/* --- The option types ------------------------------------------------------- */

enum cfg_type { T_BOOL, T_INT, T_LL, T_ENUM, T_STRING, T_SPECIAL };

#define F_IMMUTABLE (1u << 0)  /* only in the file or on the command line */
#define F_SENSITIVE (1u << 1)  /* never logged (requirepass) */
#define F_MULTI_ARG (1u << 2)  /* takes several arguments (bind, save...) */
#define F_MEMORY (1u << 3)     /* numeric with units: 512mb, 1gb */
#define F_EMPTY_NULL (1u << 4) /* string: "" is stored as NULL */
/* CONFIG SET refuses it unless enable-protected-configs allows (Valkey's
 * PROTECTED_CONFIG: dir and dbfilename, which decide where files go). */
#define F_PROTECTED (1u << 5)

/* enable-protected-configs (Valkey: PROTECTED_ACTION_ALLOWED_*): no, yes,
 * or local, for a client connected over the loopback. */
enum { CFG_PROTECTED_NO = 0, CFG_PROTECTED_YES = 1, CFG_PROTECTED_LOCAL = 2 };
extern int cfg_enable_protected_configs;

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

/* --- config.c: the table ---------------------------------------------------- */

extern const cfg cfg_table[];
extern const size_t cfg_table_len;
/* By name, any case; NULL when there is no such option. */
const cfg *cfg_lookup(const char *name);
/* What CONFIG GET printed right after config_init_defaults (NULL before). */
const char *cfg_default_value(const cfg *c);
/* hz's apply function: clamps it into CONFIG_MIN_HZ..CONFIG_MAX_HZ. */
int cfg_apply_hz(const char **err);
/* The error CONFIG SET gives when c needs a run-time hook that nobody
 * registered (config.h); NULL when it has one or needs none. */
const char *cfg_hook_missing(const cfg *c);
/* Appends CONFIG REWRITE's lines for an option that is not written as one
 * `name value` line (client-output-buffer-limit: a line per class) and
 * returns 1; returns 0, appending nothing, for any other option. */
int cfg_rewrite_special(sbuf *b, const cfg *c);

/* --- config_types.c: parsing and printing by type --------------------------- */

/* Sets from arguments. Returns 1 when the value changed, 2 when it was
 * already that value, 0 on error with *err set (static text, or a buffer
 * valid until the next call). */
int cfg_set_args(const cfg *c, char **argv, int argc, const char **err);
/* Sets from one CONFIG SET value (multi-argument options split it). */
int cfg_set_string(const cfg *c, const char *value, const char **err);
/* The value as CONFIG GET prints it, zmalloc'd. */
char *cfg_get_value(const cfg *c);
/* 536870912 -> "512mb" (zmalloc'd), as CONFIG REWRITE writes memory. */
char *cfg_bytes_human(long long v);

/* --- config_load.c: Valkey's quoting rules ---------------------------------- */

/* A line split as Valkey's sdssplitargs does; NULL on unbalanced quotes,
 * otherwise an array (possibly empty) to release with free_args. */
char **cfg_split_args(const char *line, int *argc);
/* Appends s in double quotes, escaped so cfg_split_args gives s back. */
void cfg_sb_cat_repr(sbuf *b, const char *s);

/* --- config_rewrite.c ------------------------------------------------------- */

/* CONFIG REWRITE of the file at path: 0, or -1 with a zmalloc'd *err. */
int cfg_rewrite(const char *path, char **err);

#endif
