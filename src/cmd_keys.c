/* cmd_keys.c — the commands that act on keys whatever their type.
 *
 * Step 0 (commands layer). Owns: keys_commands[] — DEL UNLINK
 * EXISTS TYPE KEYS SCAN RANDOMKEY EXPIRE PEXPIRE EXPIREAT PEXPIREAT
 * EXPIRETIME PEXPIRETIME TTL PTTL PERSIST RENAME RENAMENX COPY DBSIZE
 * FLUSHDB FLUSHALL — and their replies. The expiry mechanism itself
 * (lazy: db.c, active: expire.c) is not here; these are the commands that
 * set, read and carry TTLs.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: src/db.c (delGenericCommand, existsCommand, typeCommand,
 * keysCommand, scanGenericCommand, randomkeyCommand, renameGenericCommand,
 * copyCommand, dbsizeCommand, flushdbCommand, flushallCommand),
 * src/expire.c (expireGenericCommand, ttlGenericCommand, persistCommand).
 * Replies and errors are Valkey's; the differential suite checks them
 * against Redis 7.0 and lists where the two differ.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"
#include "zset.h"

/* ---- DEL UNLINK EXISTS TYPE ------------------------------------------------ */

/* UNLINK frees in the background in Valkey; soloist frees inline (step 4
 * may hand large values to FREE_OBJ), so both are this one function. An
 * expired key is removed first and does not count as deleted. */
static void del_command(client *c) {
    long long n = 0;
    for (int j = 1; j < c->argc; j++) {
        db_expire_if_needed(c->db, c->argv[j]);
        if (!db_delete(c->db, c->argv[j])) continue;
        db_signal_modified(c->db, c->argv[j]);
        n++;
    }
    reply_long_long(c, n);
}

static void exists_command(client *c) {
    long long n = 0; /* a key named twice counts twice, as in Valkey */
    for (int j = 1; j < c->argc; j++)
        if (db_lookup_read(c->db, c->argv[j])) n++;
    reply_long_long(c, n);
}

static void type_command(client *c) { reply_status(c, obj_type_name(db_lookup_read(c->db, c->argv[1]))); }

/* ---- KEYS SCAN RANDOMKEY ----------------------------------------------------- */

/*@ keys-command */
static void keys_command(client *c) {
    obj *pat = c->argv[1];
    int all = commands_pattern_is_all(pat);
    long long now = util_mstime();
    long n = 0;
    void *len = reply_deferred_len(c);
    hashtable_iterator it;
    void *p;
    /* Expired keys are skipped but not deleted: a safe iterator would
     * allow it, but KEYS is a read and Valkey leaves them to expiry. */
    hashtable_init_iterator(&it, c->db->keys, 1);
    while (hashtable_next(&it, &p)) {
        db_entry *e = p;
        if (!all && !util_string_match_len(pat->ptr, pat->len, e->key, e->keylen, 0)) continue;
        if (db_entry_is_expired(e, now)) continue;
        reply_bulk_buf(c, e->key, e->keylen);
        n++;
    }
    hashtable_reset_iterator(&it);
    reply_set_deferred_array_len(c, len, n);
}
/*@ end */

typedef struct scan_keys {
    obj **v;
    size_t n, cap;
} scan_keys;

/* Copies each key: the filters below may delete (expire) entries, and a
 * scan may return an entry twice, so no entry pointer is kept. */
static void scan_collect(void *privdata, void *entry) {
    scan_keys *k = privdata;
    const db_entry *e = entry;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 16;
        k->v = zrealloc(k->v, k->cap * sizeof(*k->v));
    }
    k->v[k->n++] = obj_create_string(e->key, e->keylen);
}

/* Valkey's getObjectTypeByName: the names TYPE prints. */
static int known_type_name(const char *name) {
    static const char *const names[] = {"string", "list", "set", "zset", "hash", "stream"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcasecmp(name, names[i])) return 1;
    return 0;
}

/* SCAN's own option, TYPE name (commands_scan_own_fn): Valkey refuses a
 * name TYPE never prints; Redis 7.0 accepted it and matched nothing. */
static int type_option(client *c, obj *const *argv, int n, void *type) {
    if (n < 2 || strcasecmp(argv[0]->ptr, "type")) return 0;
    *(const char **)type = argv[1]->ptr;
    if (known_type_name(argv[1]->ptr)) return 2;
    reply_error_format(c, "unknown type name '%s'", (const char *)argv[1]->ptr);
    return -1;
}

/*@ scan-command */
static void scan_command(client *c) {
    unsigned long long cursor;
    long long count = 10;
    const obj *pat = NULL;
    const char *type = NULL;
    if (!commands_scan_cursor_or_reply(c, c->argv[1], &cursor)) return;
    if (!commands_scan_options_or_reply(c, c->argv + 2, c->argc - 2, &count, &pat, type_option, &type)) return;

    /* Visit buckets until COUNT keys were gathered or the pass ended; at
     * most 10*COUNT buckets so a sparse table cannot stall the server. */
    scan_keys keys = {0};
    long long max_buckets = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = hashtable_scan(c->db->keys, (size_t)cursor, scan_collect, &keys);
    } while (cursor && max_buckets-- && keys.n < (unsigned long long)count);

    /* Filter: pattern, then type, then drop (and delete) expired keys. */
    size_t kept = 0;
    for (size_t i = 0; i < keys.n; i++) {
        obj *k = keys.v[i];
        int drop = pat && !util_string_match_len(pat->ptr, pat->len, k->ptr, k->len, 0);
        if (!drop && type) {
            db_entry *e = db_find_entry(c->db, k);
            drop = strcasecmp(type, obj_type_name(e ? e->val : NULL)) != 0;
        }
        if (!drop && db_expire_if_needed(c->db, k)) drop = 1;
        if (drop)
            obj_decr_ref(k);
        else
            keys.v[kept++] = k;
    }

    commands_reply_scan(c, cursor, keys.v, kept);
    zfree(keys.v);
}
/*@ end */

static void randomkey_command(client *c) {
    obj *k = db_random_key(c->db);
    if (!k) {
        reply_null(c);
        return;
    }
    reply_bulk(c, k);
    obj_decr_ref(k);
}

/* ---- EXPIRE and friends -------------------------------------------------------- */

#define EXPIRE_NX (1 << 0)
#define EXPIRE_XX (1 << 1)
#define EXPIRE_GT (1 << 2)
#define EXPIRE_LT (1 << 3)

static void reply_invalid_expire(client *c) {
    reply_error_format(c, "invalid expire time in '%s' command", c->cmd ? c->cmd->name : (char *)c->argv[0]->ptr);
}

/* Valkey's parseExtendedExpireArgumentsOrReply: options come before the
 * number is even parsed, so EXPIRE k abc foo answers about "foo". */
static int parse_expire_flags(client *c, int *flags) {
    for (int j = 3; j < c->argc; j++) {
        const char *opt = c->argv[j]->ptr;
        if (!strcasecmp(opt, "nx"))
            *flags |= EXPIRE_NX;
        else if (!strcasecmp(opt, "xx"))
            *flags |= EXPIRE_XX;
        else if (!strcasecmp(opt, "gt"))
            *flags |= EXPIRE_GT;
        else if (!strcasecmp(opt, "lt"))
            *flags |= EXPIRE_LT;
        else {
            reply_error_format(c, "Unsupported option %s", opt);
            return 0;
        }
    }
    /* "ERR " is spelled out: reply_error takes a leading capitalised word
     * followed by a space ("NX and ...") for an error code. */
    if ((*flags & EXPIRE_NX) && (*flags & (EXPIRE_XX | EXPIRE_GT | EXPIRE_LT))) {
        reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return 0;
    }
    if ((*flags & EXPIRE_GT) && (*flags & EXPIRE_LT)) {
        reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return 0;
    }
    return 1;
}

/*@ expire-generic */
/* basetime is now (EXPIRE, PEXPIRE) or 0 (the *AT forms); unit_ms is 1000
 * for the seconds forms. Negative times are allowed (they delete the key);
 * only overflow is refused. */
static void expire_generic(client *c, long long basetime, long long unit_ms) {
    int flags = 0;
    long long when;
    if (!parse_expire_flags(c, &flags)) return;
    if (!obj_get_ll(c->argv[2], &when)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    if (unit_ms != 1 && (when > LLONG_MAX / unit_ms || when < LLONG_MIN / unit_ms)) {
        reply_invalid_expire(c);
        return;
    }
    when *= unit_ms;
    if (when > LLONG_MAX - basetime) {
        reply_invalid_expire(c);
        return;
    }
    when += basetime;

    obj *key = c->argv[1];
    if (!db_lookup_write(c->db, key)) {
        reply_long_long(c, 0);
        return;
    }
    if (flags) {
        /* No TTL counts as an infinite one: GT never beats it, LT always
         * does. */
        long long cur = db_get_expire(c->db, key);
        if (((flags & EXPIRE_NX) && cur != -1) || ((flags & EXPIRE_XX) && cur == -1) ||
            ((flags & EXPIRE_GT) && (cur == -1 || when <= cur)) || ((flags & EXPIRE_LT) && cur != -1 && when >= cur)) {
            reply_long_long(c, 0);
            return;
        }
    }
    /* Valkey's checkAlreadyExpired: a time not in the future deletes the
     * key now (and is not counted as an expiry). */
    if (when <= util_mstime())
        db_delete(c->db, key);
    else
        db_set_expire(c->db, key, when);
    db_signal_modified(c->db, key);
    reply_long_long(c, 1);
}
/*@ end */

static void expire_command(client *c) { expire_generic(c, util_mstime(), 1000); }
static void pexpire_command(client *c) { expire_generic(c, util_mstime(), 1); }
static void expireat_command(client *c) { expire_generic(c, 0, 1000); }
static void pexpireat_command(client *c) { expire_generic(c, 0, 1); }

/* TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 for no key, -1 for no TTL;
 * seconds are rounded to the nearest, as Valkey does. */
static void ttl_generic(client *c, int output_ms, int output_abs) {
    if (!db_lookup_read(c->db, c->argv[1])) {
        reply_long_long(c, -2);
        return;
    }
    long long expire = db_get_expire(c->db, c->argv[1]);
    if (expire == -1) {
        reply_long_long(c, -1);
        return;
    }
    long long ttl = output_abs ? expire : expire - util_mstime();
    if (ttl < 0) ttl = 0;
    /* (ttl + 500) / 1000 without the overflow at PEXPIREAT LLONG_MAX. */
    reply_long_long(c, output_ms ? ttl : ttl / 1000 + (ttl % 1000 >= 500));
}

static void ttl_command(client *c) { ttl_generic(c, 0, 0); }
static void pttl_command(client *c) { ttl_generic(c, 1, 0); }
static void expiretime_command(client *c) { ttl_generic(c, 0, 1); }
static void pexpiretime_command(client *c) { ttl_generic(c, 1, 1); }

static void persist_command(client *c) {
    int removed = db_lookup_write(c->db, c->argv[1]) && db_remove_expire(c->db, c->argv[1]);
    if (removed) db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, removed);
}

/* ---- RENAME RENAMENX COPY -------------------------------------------------------- */

/*@ rename */
/* RENAME and RENAMENX move the value object itself (no copy) and its TTL
 * to the new name; an existing destination is replaced (RENAME) or left
 * alone (RENAMENX: 0). Renaming a key to itself changes nothing, but the
 * key must still exist. Valkey: renameGenericCommand. */
static int same_name(const obj *a, const obj *b) { return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0; }

static void reply_renamed(client *c, int nx, int renamed) {
    if (nx)
        reply_long_long(c, renamed);
    else
        reply_ok(c); /* RENAME has only the one success reply */
}

static void rename_generic(client *c, int nx) {
    obj *from = c->argv[1], *to = c->argv[2];
    obj *val = db_lookup_write(c->db, from);
    if (!val) {
        reply_error(c, "no such key");
        return;
    }
    if (same_name(from, to)) {
        reply_renamed(c, nx, 0);
        return;
    }
    if (db_lookup_write(c->db, to)) {
        if (nx) {
            reply_renamed(c, nx, 0);
            return;
        }
        db_delete(c->db, to);
    }
    long long expire = db_get_expire(c->db, from);
    obj_incr_ref(val); /* the new key's reference; deleting `from` drops the old one */
    db_add(c->db, to, val);
    if (expire != -1) db_set_expire(c->db, to, expire);
    db_delete(c->db, from);
    db_signal_modified(c->db, from);
    db_signal_modified(c->db, to);
    reply_renamed(c, nx, 1);
}
/*@ end */

static void rename_command(client *c) { rename_generic(c, 0); }
static void renamenx_command(client *c) { rename_generic(c, 1); }

/* COPY source destination [DB index] [REPLACE]. soloist serves database 0
 * alone, so DB accepts 0 and answers any other index as SELECT does, with
 * Valkey's error for a database the server does not have. The copy is a
 * new object (a string's bytes or a sorted set, duplicated), with the
 * source's TTL.
 * Valkey: copyCommand. */
static void copy_command(client *c) {
    int replace = 0;
    for (int j = 3; j < c->argc; j++) {
        if (!strcasecmp(c->argv[j]->ptr, "replace")) {
            replace = 1;
        } else if (!strcasecmp(c->argv[j]->ptr, "db") && j + 1 < c->argc) {
            if (!commands_db_index_or_reply(c, c->argv[++j])) return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    obj *from = c->argv[1], *to = c->argv[2];
    if (same_name(from, to)) {
        reply_error(c, "source and destination objects are the same");
        return;
    }
    obj *val = db_lookup_read(c->db, from);
    if (!val) {
        reply_long_long(c, 0);
        return;
    }
    int exists = db_lookup_write(c->db, to) != NULL;
    if (exists && !replace) {
        reply_long_long(c, 0);
        return;
    }
    obj *copy = obj_dup(val);
    if (exists) db_delete(c->db, to);
    long long expire = db_get_expire(c->db, from);
    db_add(c->db, to, copy);
    if (expire != -1) db_set_expire(c->db, to, expire);
    db_signal_modified(c->db, to);
    reply_long_long(c, 1);
}

/* ---- DBSIZE FLUSHDB FLUSHALL ------------------------------------------------------ */

static void dbsize_command(client *c) { reply_long_long(c, (long long)db_size(c->db)); }

/* FLUSHDB/FLUSHALL [ASYNC|SYNC]: both accepted, both synchronous here
 * (Valkey frees an async flush on a background thread). soloist serves
 * database 0 only, so FLUSHALL empties the client's db like FLUSHDB. */
static void flush_generic(client *c) {
    if (c->argc > 2 || (c->argc == 2 && strcasecmp(c->argv[1]->ptr, "sync") && strcasecmp(c->argv[1]->ptr, "async"))) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    db_signal_modified(c->db, NULL); /* every watched key that exists, before it goes */
    db_empty(c->db);
    reply_ok(c);
}

/* ---- OBJECT ------------------------------------------------------------------------ */

/* OBJECT ENCODING and REFCOUNT answer from the value itself. FREQ and
 * IDLETIME read an access clock that Valkey keeps in every object (the
 * 24-bit lru field); soloist keeps none, so FREQ gets the error Valkey
 * gives when no LFU policy is set and IDLETIME is not offered. Valkey's
 * lookupKeyReadWithFlags(LOOKUP_NOTOUCH): no hit or miss is counted. */
static void object_command(client *c) {
    const obj *sub = c->argv[1];
    if (arg_is(sub, "help") && c->argc == 2) {
        static const char *const help[] = {
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
            NULL,
        };
        reply_help(c, help);
        return;
    }
    if (c->argc != 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    obj *o = db_lookup_write(c->db, c->argv[2]); /* expires lazily, counts no hit or miss */
    if (!o) {
        reply_null(c);
        return;
    }
    if (arg_is(sub, "encoding"))
        reply_bulk_cstr(c, obj_encoding_name(o));
    else if (arg_is(sub, "refcount"))
        reply_long_long(c, o->refcount);
    else
        reply_error(c, "An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when "
                       "switching between policies at runtime LRU and LFU data will take some time to adjust.");
}

/* ---- the table ------------------------------------------------------------------------ */

#define W CMD_WRITE
#define R CMD_READONLY
#define F CMD_FAST
/* Valkey's command JSON: these are in the "generic" group (what COMMAND
 * DOCS prints), DBSIZE and the FLUSH commands in "server". */
command keys_commands[] = {
    {"del", del_command, -2, W, 1, -1, 1, "generic", "Deletes one or more keys.", 0, 0, 0, 0},
    {"unlink", del_command, -2, W | F, 1, -1, 1, "generic", "Asynchronously deletes one or more keys.", 0, 0, 0, 0},
    {"exists", exists_command, -2, R | F, 1, -1, 1, "generic", "Determines whether one or more keys exist.", 0, 0, 0,
     0},
    {"type", type_command, 2, R | F, 1, 1, 1, "generic", "Determines the type of value stored at a key.", 0, 0, 0, 0},
    {"keys", keys_command, 2, R, 0, 0, 0, "generic", "Returns all key names that match a pattern.", 0, 0, 0, 0},
    {"scan", scan_command, -2, R, 0, 0, 0, "generic", "Iterates over the key names in the database.", 0, 0, 0, 0},
    {"randomkey", randomkey_command, 1, R, 0, 0, 0, "generic", "Returns a random key name from the database.", 0, 0, 0,
     0},
    {"expire", expire_command, -3, W | F, 1, 1, 1, "generic", "Sets the expiration time of a key in seconds.", 0, 0, 0,
     0},
    {"pexpire", pexpire_command, -3, W | F, 1, 1, 1, "generic", "Sets the expiration time of a key in milliseconds.", 0,
     0, 0, 0},
    {"expireat", expireat_command, -3, W | F, 1, 1, 1, "generic",
     "Sets the expiration time of a key to a Unix timestamp.", 0, 0, 0, 0},
    {"pexpireat", pexpireat_command, -3, W | F, 1, 1, 1, "generic",
     "Sets the expiration time of a key to a Unix milliseconds timestamp.", 0, 0, 0, 0},
    {"expiretime", expiretime_command, 2, R | F, 1, 1, 1, "generic",
     "Returns the expiration time of a key as a Unix timestamp.", 0, 0, 0, 0},
    {"pexpiretime", pexpiretime_command, 2, R | F, 1, 1, 1, "generic",
     "Returns the expiration time of a key as a Unix milliseconds timestamp.", 0, 0, 0, 0},
    {"ttl", ttl_command, 2, R | F, 1, 1, 1, "generic", "Returns the expiration time in seconds of a key.", 0, 0, 0, 0},
    {"pttl", pttl_command, 2, R | F, 1, 1, 1, "generic", "Returns the expiration time in milliseconds of a key.", 0, 0,
     0, 0},
    {"persist", persist_command, 2, W | F, 1, 1, 1, "generic", "Removes the expiration time of a key.", 0, 0, 0, 0},
    {"rename", rename_command, 3, W, 1, 2, 1, "generic", "Renames a key and overwrites the destination.", 0, 0, 0, 0},
    {"renamenx", renamenx_command, 3, W | F, 1, 2, 1, "generic",
     "Renames a key only when the target key name doesn't exist.", 0, 0, 0, 0},
    {"copy", copy_command, -3, W | CMD_DENYOOM, 1, 2, 1, "generic", "Copies the value of a key to a new key.", 0, 0, 0,
     0},
    {"dbsize", dbsize_command, 1, R | F, 0, 0, 0, "server", "Returns the number of keys in the database.", 0, 0, 0, 0},
    {"flushdb", flush_generic, -1, W, 0, 0, 0, "server", "Remove all keys from the current database.", 0, 0, 0, 0},
    {"flushall", flush_generic, -1, W, 0, 0, 0, "server", "Removes all keys from all databases.", 0, 0, 0, 0},
    {"object", object_command, -2, 0, 0, 0, 0, "generic", "A container for object introspection commands.", 0, 0, 0, 0},
    {0},
};

command object_subcommands[] = {
    {"object|encoding", object_command, 3, R, 2, 2, 1, "generic", "Returns the internal encoding of an object.", 0, 0,
     0, 0},
    {"object|freq", object_command, 3, R, 2, 2, 1, "generic",
     "Returns the logarithmic access frequency counter of an object.", 0, 0, 0, 0},
    {"object|refcount", object_command, 3, R, 2, 2, 1, "generic", "Returns the reference count of a value of a key.", 0,
     0, 0, 0},
    SUBCOMMAND("object|help", object_command, 2, CMD_LOADING | CMD_STALE, "generic",
               "Returns helpful text about the different subcommands."),
    {0},
};
