/* cmd_string.c — the string commands.
 *
 * Step 0 (commands layer). Owns: string_commands[] — GET SET SETNX
 * SETEX PSETEX GETSET GETDEL GETEX MGET MSET MSETNX INCR DECR INCRBY
 * DECRBY INCRBYFLOAT APPEND STRLEN GETRANGE SETRANGE — and their replies.
 * Threads: main thread only: every command here runs on the soloist and
 * touches the keyspace through db.h. Arity is checked by the dispatcher
 * before a proc runs.
 * Valkey: src/t_string.c (setGenericCommand, getExpireMillisecondsOrReply,
 * parseExtendedStringArgumentsOrReply, getexCommand, incrDecrCommand,
 * appendCommand, setrangeCommand, getrangeCommand, msetGenericCommand).
 * Replies and error texts are checked against Redis 7.0 (the oracle of
 * soloist's differential tests); where Valkey 8 answers differently the
 * comment says so.
 */
#include <limits.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "reply.h"
#include "server.h"
#include "util.h"

/* ---- shared helpers ------------------------------------------------------ */

/* Parses o as a long long or replies Valkey's integer error. */
static int get_ll_or_reply(client *c, const obj *o, long long *out) {
    if (obj_get_ll(o, out)) return 1;
    reply_error(c, ERR_NOT_INT);
    return 0;
}

static const char *cmd_name(const client *c) { return c->cmd ? c->cmd->name : (const char *)c->argv[0]->ptr; }

/* Valkey: addReplyErrorExpireTime. */
static void reply_invalid_expire(client *c) {
    reply_error_format(c, "invalid expire time in '%s' command", cmd_name(c));
}

/* Valkey: checkStringLength — a string may not grow past
 * proto-max-bulk-len (512 MB by default); the sum is checked for
 * overflow too. */
static int check_string_length(client *c, long long size, long long append) {
    unsigned long long total = (unsigned long long)size + (unsigned long long)append;
    if (total > (unsigned long long)server.proto_max_bulk_len) {
        reply_error(c, "string exceeds maximum allowed size (proto-max-bulk-len)");
        return 0;
    }
    return 1;
}

/* GET's body, shared by GETSET, GETDEL and SET ... GET: replies the value
 * or a null; returns 0 (after replying WRONGTYPE) for a non-string. */
static int get_generic(client *c) {
    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (!o) {
        reply_null(c);
        return 1;
    }
    if (o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return 0;
    }
    reply_bulk(c, o);
    return 1;
}

/* ---- SET and its options -------------------------------------------------- */

#define SET_NX (1 << 0)
#define SET_XX (1 << 1)
#define SET_GET (1 << 2)
#define SET_KEEPTTL (1 << 3)
#define SET_PERSIST (1 << 4)
#define SET_EX (1 << 5)
#define SET_PX (1 << 6)
#define SET_EXAT (1 << 7)
#define SET_PXAT (1 << 8)
#define SET_ANY_EXPIRE (SET_EX | SET_PX | SET_EXAT | SET_PXAT)

enum { UNIT_SECONDS, UNIT_MS };
enum { PARSE_SET, PARSE_GETEX };

/*@ set-parse */
/* Valkey's parseExtendedStringArgumentsOrReply. Each option is refused
 * (syntax error) when it contradicts one already given; repeating the
 * same option is allowed and the last value wins (SET k v EX 1 EX 2). */
static int parse_set_options(client *c, int first, int kind, int *flags, int *unit, obj **expire) {
    for (int j = first; j < c->argc; j++) {
        const char *opt = c->argv[j]->ptr;
        obj *next = j == c->argc - 1 ? NULL : c->argv[j + 1];
        int f = *flags;
        int ttl_flag = 0;

        if (!strcasecmp(opt, "nx") && !(f & SET_XX) && kind == PARSE_SET) {
            *flags |= SET_NX;
        } else if (!strcasecmp(opt, "xx") && !(f & SET_NX) && kind == PARSE_SET) {
            *flags |= SET_XX;
        } else if (!strcasecmp(opt, "get") && kind == PARSE_SET) {
            *flags |= SET_GET;
        } else if (!strcasecmp(opt, "keepttl") && !(f & (SET_PERSIST | SET_ANY_EXPIRE)) && kind == PARSE_SET) {
            *flags |= SET_KEEPTTL;
        } else if (!strcasecmp(opt, "persist") && kind == PARSE_GETEX && !(f & (SET_ANY_EXPIRE | SET_KEEPTTL))) {
            *flags |= SET_PERSIST;
        } else if (!strcasecmp(opt, "ex")) {
            ttl_flag = SET_EX;
        } else if (!strcasecmp(opt, "px")) {
            ttl_flag = SET_PX;
        } else if (!strcasecmp(opt, "exat")) {
            ttl_flag = SET_EXAT;
        } else if (!strcasecmp(opt, "pxat")) {
            ttl_flag = SET_PXAT;
        } else {
            reply_error(c, ERR_SYNTAX);
            return 0;
        }
        if (ttl_flag) {
            /* A TTL option needs its value and no other kind of TTL. */
            if (!next || (f & (SET_KEEPTTL | SET_PERSIST | (SET_ANY_EXPIRE & ~ttl_flag)))) {
                reply_error(c, ERR_SYNTAX);
                return 0;
            }
            *flags |= ttl_flag;
            *unit = (ttl_flag == SET_EX || ttl_flag == SET_EXAT) ? UNIT_SECONDS : UNIT_MS;
            *expire = next;
            j++;
        }
    }
    return 1;
}
/*@ end */

/* Valkey's getExpireMillisecondsOrReply: the TTL argument as an absolute
 * unix time in ms. Zero and negative values are refused, and so is any
 * value whose conversion or addition overflows. */
static int get_expire_ms_or_reply(client *c, const obj *expire, int flags, int unit, long long *ms) {
    long long v;
    if (!get_ll_or_reply(c, expire, &v)) return 0;
    if (v <= 0 || (unit == UNIT_SECONDS && v > LLONG_MAX / 1000)) {
        reply_invalid_expire(c);
        return 0;
    }
    if (unit == UNIT_SECONDS) v *= 1000;
    if (flags & (SET_EX | SET_PX)) {
        long long now = util_mstime();
        if (v > LLONG_MAX - now) { /* Valkey detects this as a wrap below 0 */
            reply_invalid_expire(c);
            return 0;
        }
        v += now;
    }
    *ms = v;
    return 1;
}

/*@ set-generic */
/* SET, SETNX, SETEX, PSETEX. ok/abort select the replies: SET answers +OK
 * or a null, SETNX :1 or :0. With GET the old value is the only reply. */
enum { REPLY_OK_NULL, REPLY_ONE_ZERO };
static void set_generic(client *c, int flags, obj *key, obj *val, obj *expire, int unit, int replies) {
    long long when = 0;
    if (expire && !get_expire_ms_or_reply(c, expire, flags, unit, &when)) return;
    if ((flags & SET_GET) && !get_generic(c)) return;

    int found = db_lookup_write(c->db, key) != NULL;
    if (((flags & SET_NX) && found) || ((flags & SET_XX) && !found)) {
        if (!(flags & SET_GET)) {
            if (replies == REPLY_ONE_ZERO)
                reply_long_long(c, 0);
            else
                reply_null(c);
        }
        return;
    }

    /* A TTL already in the past (EXAT/PXAT): Valkey 8 does not store a
     * key only to expire it, and deletes the old one. Redis 7.0 stores it
     * and lets lazy expiry remove it at the next access; the replies are
     * the same, only INFO's expired_keys differs. */
    if (expire && when <= util_mstime()) {
        if (found) db_delete(c->db, key);
    } else {
        obj_incr_ref(val); /* the keyspace keeps the argument object itself */
        db_set_key(c->db, key, val, (flags & SET_KEEPTTL) || expire);
        if (expire) db_set_expire(c->db, key, when);
    }
    if (!(flags & SET_GET)) {
        if (replies == REPLY_ONE_ZERO)
            reply_long_long(c, 1);
        else
            reply_ok(c);
    }
}
/*@ end */

static void set_command(client *c) {
    int flags = 0, unit = UNIT_SECONDS;
    obj *expire = NULL;
    if (!parse_set_options(c, 3, PARSE_SET, &flags, &unit, &expire)) return;
    set_generic(c, flags, c->argv[1], c->argv[2], expire, unit, REPLY_OK_NULL);
}

static void setnx_command(client *c) { set_generic(c, SET_NX, c->argv[1], c->argv[2], NULL, 0, REPLY_ONE_ZERO); }

static void setex_command(client *c) {
    set_generic(c, SET_EX, c->argv[1], c->argv[3], c->argv[2], UNIT_SECONDS, REPLY_OK_NULL);
}

static void psetex_command(client *c) {
    set_generic(c, SET_PX, c->argv[1], c->argv[3], c->argv[2], UNIT_MS, REPLY_OK_NULL);
}

/* ---- GET and friends -------------------------------------------------------- */

/*@ get-command */
static void get_command(client *c) { get_generic(c); }
/*@ end */

static void getset_command(client *c) {
    if (!get_generic(c)) return;
    obj_incr_ref(c->argv[2]);
    db_set_key(c->db, c->argv[1], c->argv[2], 0); /* GETSET drops the TTL */
}

static void getdel_command(client *c) {
    if (!get_generic(c)) return;
    db_delete(c->db, c->argv[1]);
}

/* GETEX key [EX s | PX ms | EXAT ts | PXAT ms-ts | PERSIST].
 * Order as in Valkey: the TTL argument is validated before the key is
 * looked up (GETEX nokey EX -1 → invalid expire time). Redis 7.0 answered
 * null first; tests/integration/deliberate_differences.txt lists it. */
static void getex_command(client *c) {
    int flags = 0, unit = UNIT_SECONDS;
    obj *expire = NULL;
    if (!parse_set_options(c, 2, PARSE_GETEX, &flags, &unit, &expire)) return;

    /* Valkey checks the expire time before looking the key up. */
    long long when = 0;
    if (expire && !get_expire_ms_or_reply(c, expire, flags, unit, &when)) return;

    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (!o) {
        reply_null(c);
        return;
    }
    if (o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }

    reply_bulk(c, o); /* before the key can go away below */
    if ((flags & (SET_EXAT | SET_PXAT)) && when <= util_mstime())
        db_delete(c->db, c->argv[1]);
    else if (expire)
        db_set_expire(c->db, c->argv[1], when);
    else if (flags & SET_PERSIST)
        db_remove_expire(c->db, c->argv[1]);
}

static void mget_command(client *c) {
    reply_array_len(c, c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        obj *o = db_lookup_read(c->db, c->argv[j]);
        /* A key of another type reads as missing here, not WRONGTYPE. */
        if (!o || o->type != OBJ_STRING)
            reply_null(c);
        else
            reply_bulk(c, o);
    }
}

static void mset_generic(client *c, int nx) {
    if (c->argc % 2 == 0) {
        reply_error_arity(c);
        return;
    }
    /* MSETNX sets nothing at all if any one key exists. */
    if (nx) {
        for (int j = 1; j < c->argc; j += 2) {
            if (db_lookup_write(c->db, c->argv[j])) {
                reply_long_long(c, 0);
                return;
            }
        }
    }
    for (int j = 1; j < c->argc; j += 2) {
        obj_incr_ref(c->argv[j + 1]);
        db_set_key(c->db, c->argv[j], c->argv[j + 1], 0);
    }
    if (nx)
        reply_long_long(c, 1);
    else
        reply_ok(c);
}

static void mset_command(client *c) { mset_generic(c, 0); }
static void msetnx_command(client *c) { mset_generic(c, 1); }

/* ---- counters ---------------------------------------------------------------- */

/*@ incr-decr */
/* The value is parsed and reformatted every time: soloist has no INT
 * encoding (object.h says why). A missing key counts from 0; the TTL of
 * an existing key is kept (Valkey: dbReplaceValue). */
static void incr_decr(client *c, long long incr) {
    obj *o = db_lookup_write(c->db, c->argv[1]);
    long long value = 0;
    if (o && o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    if (o && !get_ll_or_reply(c, o, &value)) return;
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) || (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        reply_error(c, ERR_OVERFLOW);
        return;
    }
    value += incr;
    obj *n = obj_create_from_ll(value);
    if (o)
        db_overwrite(c->db, c->argv[1], n);
    else
        db_add(c->db, c->argv[1], n);
    reply_long_long(c, value);
}
/*@ end */

static void incr_command(client *c) { incr_decr(c, 1); }
static void decr_command(client *c) { incr_decr(c, -1); }

static void incrby_command(client *c) {
    long long incr;
    if (get_ll_or_reply(c, c->argv[2], &incr)) incr_decr(c, incr);
}

static void decrby_command(client *c) {
    long long incr;
    if (!get_ll_or_reply(c, c->argv[2], &incr)) return;
    if (incr == LLONG_MIN) { /* -LLONG_MIN does not exist */
        reply_error(c, "decrement would overflow");
        return;
    }
    incr_decr(c, -incr);
}

static void incrbyfloat_command(client *c) {
    obj *o = db_lookup_write(c->db, c->argv[1]);
    long double value = 0, incr;
    if (o && o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    if ((o && !obj_get_ld(o, &value)) || !obj_get_ld(c->argv[2], &incr)) {
        reply_error(c, ERR_NOT_FLOAT);
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(c, "increment would produce NaN or Infinity");
        return;
    }
    /* Valkey: MAX_LONG_DOUBLE_CHARS; %.17Lf of the largest long double
     * (about 1e4932) still fits. */
    char buf[5 * 1024];
    size_t len = util_ld_to_string(buf, sizeof(buf), value);
    obj *n = obj_create_string(buf, len);
    if (o)
        db_overwrite(c->db, c->argv[1], n);
    else
        db_add(c->db, c->argv[1], n);
    reply_bulk(c, n);
}

/* ---- byte ranges ---------------------------------------------------------------- */

static void append_command(client *c) {
    obj *o = db_lookup_write(c->db, c->argv[1]);
    obj *add = c->argv[2];
    size_t total;
    if (!o) {
        obj_incr_ref(add);
        db_add(c->db, c->argv[1], add);
        total = add->len;
    } else {
        if (o->type != OBJ_STRING) {
            reply_error(c, ERR_WRONGTYPE);
            return;
        }
        if (!check_string_length(c, (long long)o->len, (long long)add->len)) return;
        size_t old = o->len;
        o = db_unshare_string(c->db, c->argv[1], old + add->len);
        memcpy(o->ptr + old, add->ptr, add->len);
        total = o->len;
    }
    reply_long_long(c, (long long)total);
}

static void strlen_command(client *c) {
    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (!o) {
        reply_long_long(c, 0);
        return;
    }
    if (o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    reply_long_long(c, (long long)o->len);
}

/*@ getrange */
static void getrange_command(client *c) {
    long long start, end;
    if (!get_ll_or_reply(c, c->argv[2], &start) || !get_ll_or_reply(c, c->argv[3], &end)) return;
    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (!o) {
        reply_bulk_buf(c, "", 0);
        return;
    }
    if (o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    long long len = (long long)o->len;
    /* Both negative and reversed: empty, before the clamping below could
     * turn them into a one-byte range (GETRANGE k -1 -5). */
    if (start < 0 && end < 0 && start > end) {
        reply_bulk_buf(c, "", 0);
        return;
    }
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= len) end = len - 1;
    if (len == 0 || start > end)
        reply_bulk_buf(c, "", 0);
    else
        reply_bulk_buf(c, o->ptr + start, (size_t)(end - start + 1));
}
/*@ end */

static void setrange_command(client *c) {
    long long offset;
    obj *val = c->argv[3];
    if (!get_ll_or_reply(c, c->argv[2], &offset)) return;
    if (offset < 0) {
        reply_error(c, "offset is out of range");
        return;
    }
    obj *o = db_lookup_write(c->db, c->argv[1]);
    if (!o) {
        if (val->len == 0) { /* setting nothing on nothing creates nothing */
            reply_long_long(c, 0);
            return;
        }
        if (!check_string_length(c, offset, (long long)val->len)) return;
        size_t len = (size_t)offset + val->len;
        o = obj_create_raw(len);
        memset(o->ptr, 0, (size_t)offset);
        db_add(c->db, c->argv[1], o);
    } else {
        if (o->type != OBJ_STRING) {
            reply_error(c, ERR_WRONGTYPE);
            return;
        }
        if (val->len == 0) {
            reply_long_long(c, (long long)o->len);
            return;
        }
        if (!check_string_length(c, offset, (long long)val->len)) return;
        size_t need = (size_t)offset + val->len;
        o = db_unshare_string(c->db, c->argv[1], need > o->len ? need : o->len);
    }
    memcpy(o->ptr + offset, val->ptr, val->len);
    reply_long_long(c, (long long)o->len);
}

/* ---- the table ------------------------------------------------------------------ */

#define W CMD_WRITE
#define R CMD_READONLY
#define M CMD_DENYOOM
#define F CMD_FAST
/* name, proc, arity, flags, first/last/step key, group, summary (Valkey's
 * command JSON, src/commands/<name>.json). */
command string_commands[] = {
    {"get", get_command, 2, R | F, 1, 1, 1, "string", "Returns the string value of a key.", 0, 0, 0, 0},
    {"set", set_command, -3, W | M, 1, 1, 1, "string",
     "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", 0, 0, 0, 0},
    {"setnx", setnx_command, 3, W | M | F, 1, 1, 1, "string",
     "Set the string value of a key only when the key doesn't exist.", 0, 0, 0, 0},
    {"setex", setex_command, 4, W | M, 1, 1, 1, "string",
     "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", 0, 0, 0, 0},
    {"psetex", psetex_command, 4, W | M, 1, 1, 1, "string",
     "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.",
     0, 0, 0, 0},
    {"getset", getset_command, 3, W | M | F, 1, 1, 1, "string",
     "Returns the previous string value of a key after setting it to a new value.", 0, 0, 0, 0},
    {"getdel", getdel_command, 2, W | F, 1, 1, 1, "string",
     "Returns the string value of a key after deleting the key.", 0, 0, 0, 0},
    {"getex", getex_command, -2, W | F, 1, 1, 1, "string",
     "Returns the string value of a key after setting its expiration time.", 0, 0, 0, 0},
    {"mget", mget_command, -2, R | F, 1, -1, 1, "string", "Atomically returns the string values of one or more keys.",
     0, 0, 0, 0},
    {"mset", mset_command, -3, W | M, 1, -1, 2, "string",
     "Atomically creates or modifies the string values of one or more keys.", 0, 0, 0, 0},
    {"msetnx", msetnx_command, -3, W | M, 1, -1, 2, "string",
     "Atomically modifies the string values of one or more keys only when all keys don't exist.", 0, 0, 0, 0},
    {"incr", incr_command, 2, W | M | F, 1, 1, 1, "string",
     "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", 0, 0, 0, 0},
    {"decr", decr_command, 2, W | M | F, 1, 1, 1, "string",
     "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", 0, 0, 0, 0},
    {"incrby", incrby_command, 3, W | M | F, 1, 1, 1, "string",
     "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", 0, 0, 0,
     0},
    {"decrby", decrby_command, 3, W | M | F, 1, 1, 1, "string",
     "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", 0, 0,
     0, 0},
    {"incrbyfloat", incrbyfloat_command, 3, W | M | F, 1, 1, 1, "string",
     "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", 0,
     0, 0, 0},
    {"append", append_command, 3, W | M | F, 1, 1, 1, "string",
     "Appends a string to the value of a key. Creates the key if it doesn't exist.", 0, 0, 0, 0},
    {"strlen", strlen_command, 2, R | F, 1, 1, 1, "string", "Returns the length of a string value.", 0, 0, 0, 0},
    {"getrange", getrange_command, 4, R, 1, 1, 1, "string", "Returns a substring of the string stored at a key.", 0,
     0, 0, 0},
    {"setrange", setrange_command, 4, W | M, 1, 1, 1, "string",
     "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", 0, 0, 0,
     0},
    {0},
};
