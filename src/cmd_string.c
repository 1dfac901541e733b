/* cmd_string.c — the string commands.
 *
 * Step 0 (commands layer). Owns: string_commands[] — GET SET SETNX
 * SETEX PSETEX GETSET GETDEL GETEX MGET MSET MSETNX INCR DECR INCRBY
 * DECRBY INCRBYFLOAT APPEND STRLEN GETRANGE (and its old name SUBSTR)
 * SETRANGE LCS, and the bitmap commands GETBIT SETBIT BITCOUNT — and
 * their replies.
 * Threads: main thread only: every command here runs on the soloist and
 * touches the keyspace through db.h. Arity is checked by the dispatcher
 * before a proc runs.
 * Valkey: src/t_string.c (setGenericCommand, getExpireMillisecondsOrReply,
 * parseExtendedStringArgumentsOrReply, getexCommand, incrDecrCommand,
 * appendCommand, setrangeCommand, getrangeCommand, msetGenericCommand,
 * lcsCommand), src/bitops.c (getbitCommand, setbitCommand,
 * bitcountCommand).
 * Replies and error texts are checked against Redis 7.0 (the oracle of
 * soloist's differential tests); where Valkey 8 answers differently the
 * comment says so.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

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

/*@ get-generic */
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
/*@ end */

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

    /* One find serves the NX/XX test and the write (db_set_entry). */
    db_entry *e = db_lookup_write_entry(c->db, key);
    int found = e != NULL;
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
        if (found) db_delete_entry(c->db, e);
    } else {
        obj_incr_ref(val); /* the keyspace keeps the argument object itself */
        db_set_entry(c->db, e, key, val, (flags & SET_KEEPTTL) || expire);
        if (expire) db_set_expire(c->db, key, when);
    }
    db_signal_modified(c->db, key);
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
    db_signal_modified(c->db, c->argv[1]);
}

static void getdel_command(client *c) {
    if (!get_generic(c)) return;
    if (db_delete(c->db, c->argv[1])) db_signal_modified(c->db, c->argv[1]);
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
    int changed = 1;
    if ((flags & (SET_EXAT | SET_PXAT)) && when <= util_mstime())
        db_delete(c->db, c->argv[1]);
    else if (expire)
        db_set_expire(c->db, c->argv[1], when);
    else if (flags & SET_PERSIST)
        changed = db_remove_expire(c->db, c->argv[1]);
    else
        changed = 0; /* GETEX key alone reads */
    if (changed) db_signal_modified(c->db, c->argv[1]);
}

/*@ mget */
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
/*@ end */

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
        db_signal_modified(c->db, c->argv[j]);
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
 * an existing key is kept (Valkey: dbReplaceValue). A value only the
 * keyspace holds, whose new digits fit its bytes, is rewritten in place:
 * no allocation and no second lookup, the common case of a counter
 * (Valkey, with its INT encoding, updates the object in place too). */
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
    if (o && o->refcount == 1) {
        char buf[32];
        size_t len = ll_to_str(buf, value);
        if (len <= o->len) {
            memcpy(o->ptr, buf, len);
            o->ptr[len] = '\0';
            o->len = len;
            db_signal_modified(c->db, c->argv[1]);
            reply_long_long(c, value);
            return;
        }
    }
    obj *n = obj_create_from_ll(value);
    if (o)
        db_overwrite(c->db, c->argv[1], n);
    else
        db_add(c->db, c->argv[1], n);
    db_signal_modified(c->db, c->argv[1]);
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
    db_signal_modified(c->db, c->argv[1]);
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
    db_signal_modified(c->db, c->argv[1]);
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

/* Valkey's range rule for GETRANGE and BITCOUNT: a negative index
 * counts from the end, then both are clamped into [0, len-1]. Two
 * negative indexes in reverse order are empty before clamping could turn
 * them into a one-element range (GETRANGE k -1 -5). 0 when the range is
 * empty. */
static int clamp_range(long long *start, long long *end, long long len) {
    if (*start < 0 && *end < 0 && *start > *end) return 0;
    if (*start < 0) *start += len;
    if (*end < 0) *end += len;
    if (*start < 0) *start = 0;
    if (*end < 0) *end = 0;
    if (*end >= len) *end = len - 1;
    return len > 0 && *start <= *end;
}

/*@ getrange */
/* GETRANGE and its old name SUBSTR. */
static void getrange_command(client *c) {
    long long start, end;
    if (!get_ll_or_reply(c, c->argv[2], &start) || !get_ll_or_reply(c, c->argv[3], &end)) return;
    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (o && o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    if (!o || !clamp_range(&start, &end, (long long)o->len))
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
    db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, (long long)o->len);
}

/* ---- bits: GETBIT SETBIT BITCOUNT ---------------------------------------- */

/* A string is a bitmap whose bit 0 is the most significant bit of its
 * first byte; bits past the end read as 0. Valkey: src/bitops.c. */

/* Valkey's getBitOffsetFromArgument: a non-negative integer whose byte
 * stays below proto-max-bulk-len (so SETBIT can never build a string
 * larger than any other command could). */
static int get_bit_offset_or_reply(client *c, const obj *o, uint64_t *offset) {
    long long v;
    if (!obj_get_ll(o, &v) || v < 0 || (v >> 3) >= server.proto_max_bulk_len) {
        reply_error(c, "bit offset is not an integer or out of range");
        return 0;
    }
    *offset = (uint64_t)v;
    return 1;
}

static int bit_at(const obj *o, uint64_t offset) {
    uint64_t byte = offset >> 3;
    return byte < o->len && (((unsigned char)o->ptr[byte] >> (7 - (offset & 7))) & 1);
}

static void getbit_command(client *c) {
    uint64_t offset;
    if (!get_bit_offset_or_reply(c, c->argv[2], &offset)) return;
    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (o && o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    reply_long_long(c, o ? bit_at(o, offset) : 0);
}

/*@ setbit */
/* SETBIT key offset 0|1: replies the bit's old value. The string grows
 * with zero bytes to reach the offset (Valkey: lookupStringForBitCommand),
 * so a large offset allocates up to proto-max-bulk-len at once. Setting a
 * bit to the value it has, in a string that did not grow, is no change
 * (Valkey's setbitCommand signals only a change). */
static void setbit_command(client *c) {
    uint64_t offset;
    long long on;
    if (!get_bit_offset_or_reply(c, c->argv[2], &offset)) return;
    if (!obj_get_ll(c->argv[3], &on) || (on & ~1)) {
        reply_error(c, "bit is not an integer or out of range");
        return;
    }
    size_t need = (size_t)(offset >> 3) + 1;
    obj *o = db_lookup_write(c->db, c->argv[1]);
    if (o && o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    int grew = !o || need > o->len;
    if (!o) {
        o = obj_create_raw(need);
        memset(o->ptr, 0, need);
        db_add(c->db, c->argv[1], o);
    } else {
        o = db_unshare_string(c->db, c->argv[1], need > o->len ? need : o->len);
    }
    int old = bit_at(o, offset);
    unsigned char mask = (unsigned char)(1u << (7 - (offset & 7)));
    if (on)
        o->ptr[offset >> 3] |= (char)mask;
    else
        o->ptr[offset >> 3] &= (char)~mask;
    if (grew || old != on) db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, old);
}
/*@ end */

/* BITCOUNT key [start [end [BYTE|BIT]]]. As in Valkey, the arguments are
 * checked before the key is looked up, and `start` alone counts to the
 * end of the string; Redis 7.0 looked the key up first and required both
 * (tests/integration/deliberate_differences.txt lists both). */
static void bitcount_command(client *c) {
    long long start = 0, end = -1;
    int in_bits = 0;
    if (c->argc > 5) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc >= 3 && !get_ll_or_reply(c, c->argv[2], &start)) return;
    if (c->argc == 5) {
        if (!strcasecmp(c->argv[4]->ptr, "bit")) {
            in_bits = 1;
        } else if (strcasecmp(c->argv[4]->ptr, "byte")) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (c->argc >= 4 && !get_ll_or_reply(c, c->argv[3], &end)) return;

    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (o && o->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    long long len = o ? (long long)o->len * (in_bits ? 8 : 1) : 0;
    if (c->argc < 4) end = len - 1;
    if (!o || !clamp_range(&start, &end, len)) {
        reply_long_long(c, 0);
        return;
    }
    /* In BIT units the first and last bytes may be partly outside the
     * range: count them whole, then take away the bits outside. */
    unsigned char outside_first = 0, outside_last = 0;
    if (in_bits) {
        outside_first = (unsigned char)(0xff00u >> (start & 7));     /* bits before start */
        outside_last = (unsigned char)((1u << (7 - (end & 7))) - 1); /* bits after end */
        start >>= 3;
        end >>= 3;
    }
    const unsigned char *p = (const unsigned char *)o->ptr;
    long long count = util_popcount(p + start, (size_t)(end - start + 1));
    unsigned char edges[2] = {(unsigned char)(p[start] & outside_first), (unsigned char)(p[end] & outside_last)};
    reply_long_long(c, count - util_popcount(edges, 2));
}

/* ---- LCS ------------------------------------------------------------------ */

/*@ lcs */
/* LCS's options: LEN, IDX, MINMATCHLEN n and WITHMATCHLEN. */
typedef struct lcs_opts {
    int getlen, getidx, withmatchlen;
    long long minmatchlen;
} lcs_opts;

/* Reads LCS's options from argv[3..]; 0 when it replied an error. */
static int lcs_options(client *c, lcs_opts *o) {
    *o = (lcs_opts){0};
    for (int j = 3; j < c->argc; j++) {
        const char *opt = c->argv[j]->ptr;
        if (!strcasecmp(opt, "idx")) {
            o->getidx = 1;
        } else if (!strcasecmp(opt, "len")) {
            o->getlen = 1;
        } else if (!strcasecmp(opt, "withmatchlen")) {
            o->withmatchlen = 1;
        } else if (!strcasecmp(opt, "minmatchlen") && j + 1 < c->argc) {
            if (!get_ll_or_reply(c, c->argv[++j], &o->minmatchlen)) return 0;
            if (o->minmatchlen < 0) o->minmatchlen = 0;
        } else {
            reply_error(c, ERR_SYNTAX);
            return 0;
        }
    }
    if (o->getlen && o->getidx) {
        reply_error(c, "If you want both the length and indexes, please just use IDX.");
        return 0;
    }
    return 1;
}

#define T(i, j) t[(size_t)(i) * (blen + 1) + (j)]

/* The filled table, malloc'd (the caller frees it), or NULL when it
 * replied an error: the table would pass proto-max-bulk-len, or malloc
 * failed. */
static uint32_t *lcs_table(client *c, const unsigned char *a, uint32_t alen, const unsigned char *b, uint32_t blen) {
    unsigned long long cells = (unsigned long long)(alen + 1) * (blen + 1);
    unsigned long long bytes = cells * sizeof(uint32_t);
    uint32_t *t = NULL;
    if (bytes / sizeof(uint32_t) == cells && bytes < SIZE_MAX) {
        if (bytes > (unsigned long long)server.proto_max_bulk_len) {
            reply_error(c, "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
            return NULL;
        }
        /* malloc, not zmalloc: this allocation may fail without taking
         * the server down (Valkey: ztrymalloc). */
        t = malloc((size_t)bytes);
    }
    if (!t) {
        reply_error(c, "Insufficient memory, failed allocating transient memory for LCS");
        return NULL;
    }
    for (uint32_t i = 0; i <= alen; i++) {
        for (uint32_t j = 0; j <= blen; j++) {
            if (i == 0 || j == 0)
                T(i, j) = 0;
            else if (a[i - 1] == b[j - 1])
                T(i, j) = T(i - 1, j - 1) + 1;
            else
                T(i, j) = T(i - 1, j) > T(i, j - 1) ? T(i - 1, j) : T(i, j - 1);
        }
    }
    return t;
}

/* One IDX match: its ranges in a and in b, and with WITHMATCHLEN its
 * length. */
static void lcs_reply_match(client *c, const lcs_opts *o, uint32_t astart, uint32_t aend, uint32_t bstart,
                            uint32_t bend) {
    reply_array_len(c, 2 + o->withmatchlen);
    reply_array_len(c, 2);
    reply_long_long(c, astart);
    reply_long_long(c, aend);
    reply_array_len(c, 2);
    reply_long_long(c, bstart);
    reply_long_long(c, bend);
    if (o->withmatchlen) reply_long_long(c, aend - astart + 1);
}

/* Walks the table back from its corner: fills lcs (when not NULL) from
 * its end, and with IDX replies each run of matching bytes at least
 * MINMATCHLEN long, last first. Returns the number of runs replied. */
static long lcs_walk(client *c, const lcs_opts *o, const uint32_t *t, const unsigned char *a, uint32_t alen,
                     const unsigned char *b, uint32_t blen, char *lcs) {
    long nmatches = 0;
    /* The current run of matching bytes: a[astart..aend], b[bstart..bend]. */
    int in_run = 0;
    uint32_t astart = 0, aend = 0, bstart = 0, bend = 0, k = T(alen, blen);
    uint32_t i = alen, j = blen;
    while (i > 0 && j > 0) {
        int run_ends = 0;
        if (a[i - 1] == b[j - 1]) {
            if (lcs) lcs[--k] = (char)a[i - 1];
            if (!in_run) {
                in_run = 1;
                astart = aend = i - 1;
                bstart = bend = j - 1;
            } else if (astart == i && bstart == j) {
                astart--; /* the run grows backwards */
                bstart--;
            } else {
                run_ends = 1;
            }
            if (astart == 0 || bstart == 0) run_ends = 1; /* the walk ends here */
            i--;
            j--;
        } else {
            if (T(i - 1, j) > T(i, j - 1))
                i--;
            else
                j--;
            run_ends = in_run;
        }
        uint32_t run_len = aend - astart + 1;
        if (run_ends && o->getidx && run_len >= o->minmatchlen) {
            lcs_reply_match(c, o, astart, aend, bstart, bend);
            nmatches++;
        }
        if (run_ends) in_run = 0;
    }
    return nmatches;
}
#undef T

/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest
 * common subsequence of two strings (missing keys are empty), by the
 * textbook dynamic programme: t[i][j] is the LCS length of the first i
 * bytes of a and the first j bytes of b. The table costs
 * (|a|+1)(|b|+1) 32-bit cells; as in Valkey it may not exceed
 * proto-max-bulk-len, so memory stays bounded by the same setting that
 * bounds a string. Walking the table back from the corner yields the
 * subsequence from its end, and with IDX the matching ranges, last first.
 * Ties go the way Valkey's go (step in b), so the replies are the same. */
static void lcs_command(client *c) {
    obj *oa = db_lookup_read(c->db, c->argv[1]);
    obj *ob = db_lookup_read(c->db, c->argv[2]);
    if ((oa && oa->type != OBJ_STRING) || (ob && ob->type != OBJ_STRING)) {
        reply_error(c, "The specified keys must contain string values");
        return;
    }
    lcs_opts o;
    if (!lcs_options(c, &o)) return;
    const unsigned char *a = oa ? (const unsigned char *)oa->ptr : (const unsigned char *)"";
    const unsigned char *b = ob ? (const unsigned char *)ob->ptr : (const unsigned char *)"";
    size_t alen_z = oa ? oa->len : 0, blen_z = ob ? ob->len : 0;
    if (alen_z >= UINT32_MAX - 1 || blen_z >= UINT32_MAX - 1) {
        reply_error(c, "String too long for LCS");
        return;
    }
    uint32_t alen = (uint32_t)alen_z, blen = (uint32_t)blen_z;
    uint32_t *t = lcs_table(c, a, alen, b, blen);
    if (!t) return;
    uint32_t len = t[(size_t)alen * (blen + 1) + blen];
    if (o.getlen) {
        reply_long_long(c, len);
    } else if (o.getidx) {
        reply_map_len(c, 2);
        reply_bulk_cstr(c, "matches");
        void *nmatches_at = reply_deferred_len(c);
        long nmatches = lcs_walk(c, &o, t, a, alen, b, blen, NULL);
        reply_bulk_cstr(c, "len");
        reply_long_long(c, len);
        reply_set_deferred_array_len(c, nmatches_at, nmatches);
    } else {
        char *lcs = zmalloc(len + 1); /* filled from its end */
        lcs_walk(c, &o, t, a, alen, b, blen, lcs);
        reply_bulk_buf(c, lcs, len);
        zfree(lcs);
    }
    free(t);
}
/*@ end */

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
     "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", 0,
     0, 0, 0},
    {"getset", getset_command, 3, W | M | F, 1, 1, 1, "string",
     "Returns the previous string value of a key after setting it to a new value.", 0, 0, 0, 0},
    {"getdel", getdel_command, 2, W | F, 1, 1, 1, "string", "Returns the string value of a key after deleting the key.",
     0, 0, 0, 0},
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
     "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", 0, 0, 0,
     0},
    {"incrbyfloat", incrbyfloat_command, 3, W | M | F, 1, 1, 1, "string",
     "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", 0, 0,
     0, 0},
    {"append", append_command, 3, W | M | F, 1, 1, 1, "string",
     "Appends a string to the value of a key. Creates the key if it doesn't exist.", 0, 0, 0, 0},
    {"strlen", strlen_command, 2, R | F, 1, 1, 1, "string", "Returns the length of a string value.", 0, 0, 0, 0},
    {"getrange", getrange_command, 4, R, 1, 1, 1, "string", "Returns a substring of the string stored at a key.", 0, 0,
     0, 0},
    {"substr", getrange_command, 4, R, 1, 1, 1, "string", "Returns a substring from a string value.", 0, 0, 0, 0},
    {"lcs", lcs_command, -3, R, 1, 2, 1, "string", "Finds the longest common substring.", 0, 0, 0, 0},
    {"getbit", getbit_command, 3, R | F, 1, 1, 1, "bitmap", "Returns a bit value by offset.", 0, 0, 0, 0},
    {"setbit", setbit_command, 4, W | M, 1, 1, 1, "bitmap",
     "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", 0, 0, 0, 0},
    {"bitcount", bitcount_command, -2, R, 1, 1, 1, "bitmap",
     "Counts the number of set bits (population counting) in a string.", 0, 0, 0, 0},
    {"setrange", setrange_command, 4, W | M, 1, 1, 1, "string",
     "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", 0, 0, 0, 0},
    {0},
};
