/* config_types.c — how each type of option is parsed, bounded and printed.
 *
 * Step 0 (server layer). Owns: the per-type code every option goes through —
 * yes/no, integers with bounds, memory with units, enums, strings, and
 * the hand-off to a special option's own set/get — for the file, the
 * command line and CONFIG SET alike, with Valkey's error texts; and
 * memory printed in units, as CONFIG REWRITE writes it. The types and
 * flags are in config_private.h, the table in config.c.
 * Below the table: every function here is handed the entry it works on
 * and calls nothing in config.c, config_load.c or config_rewrite.c (they
 * call down into it). A special option's set and get, which config.c
 * defines, are reached through the entry's pointers: the table registers
 * them, this file only follows them (tools/calls.py checks the calls).
 * Threads: main thread only (see config.h).
 * Valkey: src/config.c — the typeInterface functions (boolConfigSet,
 * numericConfigSet / numericConfigGet, enumConfigSet, stringConfigSet...),
 * performInterfaceSet, which splits a multi-argument value, and the
 * memory units of rewriteConfigBytesOption.
 */
#include "config_private.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "object.h" /* str_to_ll */
#include "util.h"
#include "zmalloc.h"

/* Errors formatted at run time wait here until the caller copies them
 * (Valkey: loadbuf). Main thread only. */
static char errbuf[256];

/* An enum option's value by its name, any case, into *ll: 1, or 0 with
 * *err listing the names it may take (in errbuf). */
static int enum_value(const cfg *c, const char *v, long long *ll, const char **err) {
    const cfg_enum *e = c->enums;
    while (e->name && strcasecmp(e->name, v)) e++;
    if (e->name) {
        *ll = e->val;
        return 1;
    }
    size_t off = (size_t)snprintf(errbuf, sizeof(errbuf), "argument(s) must be one of the following: ");
    for (e = c->enums; e->name && off < sizeof(errbuf); e++)
        off += (size_t)snprintf(errbuf + off, sizeof(errbuf) - off, "%s%s", e->name, e[1].name ? ", " : "");
    *err = errbuf;
    return 0;
}

/* Returns 1 changed, 2 unchanged, 0 error (see config_private.h). */
int cfg_set_args(const cfg *c, char **argv, int argc, const char **err) {
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
    case T_ENUM:
        if (!enum_value(c, v, &ll, err)) return 0;
        break;
    case T_STRING: {
        if (c->valid_str && !c->valid_str(v, err)) return 0;
        char **slot = c->ptr;
        const char *nv = ((c->flags & F_EMPTY_NULL) && !*v) ? NULL : v;
        if (nv == *slot || (nv && *slot && !strcmp(nv, *slot))) return 2;
        zfree(*slot);
        *slot = nv ? zstrdup(nv) : NULL;
        return 1;
    }
    case T_SPECIAL: break;
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
char *cfg_get_value(const cfg *c) {
    switch (c->type) {
    case T_BOOL: return zstrdup(*(int *)c->ptr ? "yes" : "no");
    case T_INT: return strfmt("%d", *(int *)c->ptr);
    case T_LL: return strfmt("%lld", *(long long *)c->ptr);
    case T_ENUM:
        for (const cfg_enum *e = c->enums; e->name; e++)
            if (e->val == *(int *)c->ptr) return zstrdup(e->name);
        return zstrdup("unknown");
    case T_STRING: {
        char *s = *(char **)c->ptr;
        return zstrdup(s ? s : "");
    }
    case T_SPECIAL: return c->get();
    }
    return zstrdup("");
}

/* Sets from one CONFIG SET value: multi-argument options split it on
 * single spaces, as Valkey's performInterfaceSet does. */
int cfg_set_string(const cfg *c, const char *value, const char **err) {
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

/* 536870912 → "512mb", as Valkey's rewriteConfigBytesOption writes: the
 * printing of a memory value, which CONFIG REWRITE (config_rewrite.c) and
 * client-output-buffer-limit's own lines (config.c) both need. */
char *cfg_bytes_human(long long v) {
    static const struct {
        long long mul;
        const char *unit;
    } units[] = {{1024LL * 1024 * 1024, "gb"}, {1024 * 1024, "mb"}, {1024, "kb"}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (v && v % units[i].mul == 0) return strfmt("%lld%s", v / units[i].mul, units[i].unit);
    return strfmt("%lld", v);
}
