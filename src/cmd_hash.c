/* cmd_hash.c — the hash commands.
 *
 * Not a step (commands layer). Owns: hash_commands[] — HSET HSETNX HGET HMGET
 * HMSET HDEL HLEN HSTRLEN HEXISTS HKEYS HVALS HGETALL HINCRBY HINCRBYFLOAT
 * HRANDFIELD HSCAN — their argument parsing and their replies. The data
 * structure and its two encodings are src/hash.c; this file never looks
 * inside a listpack or a table entry.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: src/t_hash.c (hsetCommand, hsetnxCommand, hgetCommand,
 * hmgetCommand, hdelCommand, hlenCommand, hstrlenCommand,
 * hexistsCommand, genericHgetallCommand, hincrbyCommand,
 * hincrbyfloatCommand, hrandfieldCommand, hrandfieldWithCountCommand,
 * hscanCommand), src/db.c (scanGenericCommand for HSCAN). Replies and
 * errors are Valkey's; the differential suite checks them against Redis
 * 7.0 and lists where the two differ (HSCAN's NOVALUES).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "hash.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

/* ---- lookups --------------------------------------------------------------------- */

typedef void absent_reply(client *c);

static void reply_zero(client *c) { reply_long_long(c, 0); }
static void reply_empty_array(client *c) { reply_array_len(c, 0); }
static void reply_empty_map(client *c) { reply_map_len(c, 0); }

/* The hash at argv[1], or NULL: absent (absent replied, if given) or
 * another type (WRONGTYPE replied). */
static obj *lookup_hash(client *c, int for_write, absent_reply *absent) {
    obj *o = for_write ? db_lookup_write(c->db, c->argv[1]) : db_lookup_read(c->db, c->argv[1]);
    if (!o) {
        if (absent) absent(c);
        return NULL;
    }
    if (o->type != OBJ_HASH) {
        reply_error(c, ERR_WRONGTYPE);
        return NULL;
    }
    return o;
}

/* The hash at argv[1], created empty when absent (Valkey:
 * hashTypeLookupWriteOrCreate); NULL with WRONGTYPE replied. Every caller
 * adds a field before it returns, so no empty hash is left behind. */
static obj *lookup_or_create(client *c) {
    obj *o = db_lookup_write(c->db, c->argv[1]);
    if (o) {
        if (o->type == OBJ_HASH) return o;
        reply_error(c, ERR_WRONGTYPE);
        return NULL;
    }
    o = hash_object_create();
    db_add(c->db, c->argv[1], o);
    return o;
}

static void reply_value(client *c, obj *o, const obj *field) {
    char buf[HASH_NUMBUF];
    size_t vlen;
    const char *v = o ? hash_get(o, field->ptr, field->len, &vlen, buf) : NULL;
    if (v)
        reply_bulk_buf(c, v, vlen);
    else
        reply_null(c);
}

/* ---- setting ------------------------------------------------------------------------ */

/* HSET and HMSET: key field value [field value ...]. */
static long long set_pairs(client *c) {
    obj *o = lookup_or_create(c);
    if (!o) return -1;
    hash_try_conversion(o, c->argv, 2, c->argc - 1);
    long long created = 0;
    for (int j = 2; j < c->argc; j += 2)
        created += hash_set(o, c->argv[j]->ptr, c->argv[j]->len, c->argv[j + 1]->ptr, c->argv[j + 1]->len);
    db_signal_modified(c->db, c->argv[1]);
    return created;
}

static void hset_command(client *c) {
    if (c->argc % 2 == 1) { /* a field without its value */
        reply_error_arity(c);
        return;
    }
    long long created = set_pairs(c);
    if (created >= 0) reply_long_long(c, created);
}

static void hmset_command(client *c) {
    if (c->argc % 2 == 1) {
        reply_error_arity(c);
        return;
    }
    if (set_pairs(c) >= 0) reply_ok(c);
}

static void hsetnx_command(client *c) {
    obj *o = lookup_or_create(c);
    if (!o) return;
    if (hash_exists(o, c->argv[2]->ptr, c->argv[2]->len)) {
        reply_long_long(c, 0);
        return;
    }
    hash_try_conversion(o, c->argv, 2, 3);
    hash_set(o, c->argv[2]->ptr, c->argv[2]->len, c->argv[3]->ptr, c->argv[3]->len);
    db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, 1);
}

/* ---- reading one field ---------------------------------------------------------------- */

static void hget_command(client *c) {
    obj *o = lookup_hash(c, 0, reply_null);
    if (o) reply_value(c, o, c->argv[2]);
}

/* A missing key answers a null for every field, as Valkey's hmgetCommand
 * does: it checks the type only of a key that exists. */
static void hmget_command(client *c) {
    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (o && o->type != OBJ_HASH) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) reply_value(c, o, c->argv[j]);
}

static void hlen_command(client *c) {
    obj *o = lookup_hash(c, 0, reply_zero);
    if (o) reply_long_long(c, (long long)hash_length(o));
}

static void hstrlen_command(client *c) {
    obj *o = lookup_hash(c, 0, reply_zero);
    if (o) reply_long_long(c, (long long)hash_value_len(o, c->argv[2]->ptr, c->argv[2]->len));
}

static void hexists_command(client *c) {
    obj *o = lookup_hash(c, 0, reply_zero);
    if (o) reply_long_long(c, hash_exists(o, c->argv[2]->ptr, c->argv[2]->len));
}

/* ---- deleting ---------------------------------------------------------------------------- */

static void hdel_command(client *c) {
    obj *o = lookup_hash(c, 1, reply_zero);
    if (!o) return;
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) {
        deleted += hash_delete(o, c->argv[j]->ptr, c->argv[j]->len);
        if (hash_length(o) == 0) { /* a hash left empty goes with its key */
            db_delete(c->db, c->argv[1]);
            break;
        }
    }
    if (deleted) db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, deleted);
}

/* ---- the whole hash ---------------------------------------------------------------------- */

enum { WANT_FIELDS = 1, WANT_VALUES = 2 };

/* HKEYS, HVALS and HGETALL (Valkey: genericHgetallCommand). HGETALL is a
 * map in RESP3; a listpack answers in insertion order, a table in its
 * own order. */
static void getall_generic(client *c, int want) {
    int both = want == (WANT_FIELDS | WANT_VALUES);
    obj *o = lookup_hash(c, 0, both ? reply_empty_map : reply_empty_array);
    if (!o) return;
    long len = (long)hash_length(o);
    if (both)
        reply_map_len(c, len);
    else
        reply_array_len(c, len);
    hash_iter it;
    hash_pair p;
    hash_iter_init(&it, o);
    while (hash_iter_next(&it, &p)) {
        if (want & WANT_FIELDS) reply_bulk_buf(c, p.field, p.flen);
        if (want & WANT_VALUES) reply_bulk_buf(c, p.value, p.vlen);
    }
    hash_iter_reset(&it);
}

static void hkeys_command(client *c) { getall_generic(c, WANT_FIELDS); }
static void hvals_command(client *c) { getall_generic(c, WANT_VALUES); }
static void hgetall_command(client *c) { getall_generic(c, WANT_FIELDS | WANT_VALUES); }

/* ---- counters ------------------------------------------------------------------------------ */

static void hincrby_command(client *c) {
    long long incr, value = 0;
    if (!obj_get_ll(c->argv[3], &incr)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    obj *o = lookup_or_create(c);
    if (!o) return;
    char buf[HASH_NUMBUF];
    size_t vlen;
    const char *v = hash_get(o, c->argv[2]->ptr, c->argv[2]->len, &vlen, buf);
    if (v && !str_to_ll(v, vlen, &value)) {
        reply_error(c, "hash value is not an integer");
        return;
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) || (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        reply_error(c, ERR_OVERFLOW);
        return;
    }
    value += incr;
    size_t n = ll_to_str(buf, value);
    hash_set(o, c->argv[2]->ptr, c->argv[2]->len, buf, n);
    db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, value);
}

static void hincrbyfloat_command(client *c) {
    long double value = 0, incr;
    if (!obj_get_ld(c->argv[3], &incr)) {
        reply_error(c, ERR_NOT_FLOAT);
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(c, "value is NaN or Infinity");
        return;
    }
    obj *o = lookup_or_create(c);
    if (!o) return;
    char num[HASH_NUMBUF];
    size_t vlen;
    const char *v = hash_get(o, c->argv[2]->ptr, c->argv[2]->len, &vlen, num);
    if (v) {
        /* obj_get_ld reads an object; a view of the value is enough. */
        obj view = {.type = OBJ_STRING, .encoding = OBJ_ENC_RAW, .len = vlen, .ptr = (char *)v};
        if (!obj_get_ld(&view, &value)) {
            reply_error(c, "hash value is not a float");
            return;
        }
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(c, "increment would produce NaN or Infinity");
        return;
    }
    char buf[5 * 1024]; /* as INCRBYFLOAT's: the longest long double fits */
    size_t len = util_ld_to_string(buf, sizeof(buf), value);
    hash_set(o, c->argv[2]->ptr, c->argv[2]->len, buf, len);
    db_signal_modified(c->db, c->argv[1]);
    reply_bulk_buf(c, buf, len);
}

/* ---- HRANDFIELD ------------------------------------------------------------------------------ */

typedef struct randfield_reply {
    client *c;
    int withvalues;
} randfield_reply;

/* One sampled pair: the field, and with WITHVALUES its value, as a pair
 * of its own in RESP3 (Valkey: addReplyArrayLen(c, 2) per pair). */
static void randfield_emit(void *arg, const hash_pair *p) {
    randfield_reply *r = arg;
    if (r->withvalues && r->c->resp > 2) reply_array_len(r->c, 2);
    reply_bulk_buf(r->c, p->field, p->flen);
    if (r->withvalues) reply_bulk_buf(r->c, p->value, p->vlen);
}

static void hrandfield_with_count(client *c, long long count, int withvalues) {
    obj *o = lookup_hash(c, 0, reply_empty_array);
    if (!o) return;
    size_t size = hash_length(o);
    unsigned long long n = count < 0 ? (unsigned long long)-count : (unsigned long long)count;
    if (count > 0 && n > size) n = size;
    if (withvalues && c->resp == 2)
        reply_array_len(c, (long)(n * 2));
    else
        reply_array_len(c, (long)n);
    randfield_reply r = {c, withvalues};
    hash_random_pairs(o, count, randfield_emit, &r);
}

static void hrandfield_command(client *c) {
    if (c->argc >= 3) {
        long long count;
        if (!obj_get_ll(c->argv[2], &count)) {
            reply_error(c, ERR_NOT_INT);
            return;
        }
        if (count < -LLONG_MAX) {
            reply_error_format(c, "value is out of range, value must between %lld and %lld", -LLONG_MAX, LLONG_MAX);
            return;
        }
        if (c->argc > 4 || (c->argc == 4 && !arg_is(c->argv[3], "withvalues"))) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        int withvalues = c->argc == 4;
        if (withvalues && (count < -LLONG_MAX / 2 || count > LLONG_MAX / 2)) {
            reply_error(c, "value is out of range");
            return;
        }
        hrandfield_with_count(c, count, withvalues);
        return;
    }
    obj *o = lookup_hash(c, 0, reply_null);
    if (!o) return;
    hash_pair p;
    char fbuf[HASH_NUMBUF], vbuf[HASH_NUMBUF];
    hash_random_pair(o, &p, fbuf, vbuf);
    reply_bulk_buf(c, p.field, p.flen);
}

/* ---- HSCAN ------------------------------------------------------------------------------------- */

/* The pairs one HSCAN call collected, as string objects: a listpack's
 * integers are printed into a buffer that the next pair reuses. */
typedef struct scan_batch {
    obj **v; /* field, value, field, value ... */
    size_t n, cap;
} scan_batch;

static void scan_collect(void *arg, const hash_pair *p) {
    scan_batch *b = arg;
    if (b->n + 2 > b->cap) {
        b->cap = b->cap ? b->cap * 2 : 32;
        b->v = zrealloc(b->v, b->cap * sizeof(*b->v));
    }
    b->v[b->n++] = obj_create_string(p->field, p->flen);
    b->v[b->n++] = obj_create_string(p->value, p->vlen);
}

/* HSCAN's own option, NOVALUES (commands_scan_own_fn): Valkey 8 has it,
 * Redis 7.0 does not. */
static int novalues_option(client *c, obj *const *argv, int n, void *novalues) {
    (void)c;
    (void)n;
    if (!arg_is(argv[0], "novalues")) return 0;
    *(int *)novalues = 1;
    return 1;
}

/* HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]. A listpack
 * answers whole in one call with cursor 0, whatever COUNT says; a table
 * visits bucket chains until about COUNT elements (fields and values
 * both counted, as Valkey's scanGenericCommand counts its list) or ten
 * times COUNT visits. */
static void hscan_command(client *c) {
    unsigned long long cursor;
    long long count = 10;
    const obj *pat = NULL;
    int novalues = 0;
    if (!commands_scan_cursor_or_reply(c, c->argv[2], &cursor)) return;
    obj *o = lookup_hash(c, 0, commands_reply_empty_scan);
    if (!o) return;
    if (!commands_scan_options_or_reply(c, c->argv + 3, c->argc - 3, &count, &pat, novalues_option, &novalues)) return;
    scan_batch b = {0};
    long long max_visits = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    unsigned long long per_pair = novalues ? 1 : 2;
    do {
        cursor = hash_scan(o, (size_t)cursor, scan_collect, &b);
    } while (cursor && max_visits-- && b.n / 2 * per_pair < (unsigned long long)count);

    size_t kept = 0;
    for (size_t i = 0; i < b.n; i += 2) {
        obj *f = b.v[i], *v = b.v[i + 1];
        if (pat && !util_string_match_len(pat->ptr, pat->len, f->ptr, f->len, 0)) {
            obj_decr_ref(f);
            obj_decr_ref(v);
            continue;
        }
        b.v[kept++] = f;
        if (novalues)
            obj_decr_ref(v);
        else
            b.v[kept++] = v;
    }
    commands_reply_scan(c, cursor, b.v, kept);
    zfree(b.v);
}

/* ---- the table ------------------------------------------------------------------------------------ */

#define W CMD_WRITE
#define R CMD_READONLY
#define M CMD_DENYOOM
#define F CMD_FAST
#define HCMD(name, proc, arity, flags, summary)                                                                        \
    { name, proc, arity, flags, 1, 1, 1, "hash", summary, 0, 0, 0, 0 }

command hash_commands[] = {
    HCMD("hset", hset_command, -4, W | M | F, "Creates or modifies the value of a field in a hash."),
    HCMD("hsetnx", hsetnx_command, 4, W | M | F,
         "Sets the value of a field in a hash only when the field doesn't exist."),
    HCMD("hget", hget_command, 3, R | F, "Returns the value of a field in a hash."),
    HCMD("hmget", hmget_command, -3, R | F, "Returns the values of all fields in a hash."),
    HCMD("hmset", hmset_command, -4, W | M | F, "Sets the values of multiple fields."),
    HCMD("hdel", hdel_command, -3, W | F,
         "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain."),
    HCMD("hlen", hlen_command, 2, R | F, "Returns the number of fields in a hash."),
    HCMD("hstrlen", hstrlen_command, 3, R | F, "Returns the length of the value of a field."),
    HCMD("hexists", hexists_command, 3, R | F, "Determines whether a field exists in a hash."),
    HCMD("hkeys", hkeys_command, 2, R, "Returns all fields in a hash."),
    HCMD("hvals", hvals_command, 2, R, "Returns all values in a hash."),
    HCMD("hgetall", hgetall_command, 2, R, "Returns all fields and values of a hash."),
    HCMD("hincrby", hincrby_command, 4, W | M | F,
         "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field "
         "doesn't exist."),
    HCMD("hincrbyfloat", hincrbyfloat_command, 4, W | M | F,
         "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't "
         "exist."),
    HCMD("hrandfield", hrandfield_command, -2, R, "Returns one or more random fields from a hash."),
    HCMD("hscan", hscan_command, -3, R, "Iterates over fields and values of a hash."),
    {0},
};
