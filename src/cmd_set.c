/* cmd_set.c — the set commands.
 *
 * Not a step (commands layer). Owns: set_commands[] — SADD SREM SMEMBERS
 * SISMEMBER SMISMEMBER SCARD SPOP SRANDMEMBER SMOVE SINTER SINTERCARD SUNION
 * SDIFF SINTERSTORE SUNIONSTORE SDIFFSTORE SSCAN — their arguments, the set
 * algebra and the replies. The structure is src/set.c; this file reaches it
 * through set.h alone and never sees an encoding.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: src/t_set.c (saddCommand, sremCommand, smoveCommand,
 * sismemberCommand, smismemberCommand, scardCommand, spopCommand,
 * spopWithCountCommand, srandmemberCommand, srandmemberWithCountCommand,
 * sinterGenericCommand, sinterCardCommand, sunionDiffGenericCommand),
 * src/db.c (scanGenericCommand for SSCAN). Replies and errors are
 * Valkey's; the differential suite checks them against Redis 7.0.
 *
 * Order. A set has none, and its replies come in the order its encoding
 * walks it: an intset's ascending, a listpack's as added, a hashtable's by
 * bucket. The algebra builds its result as a set that starts as an empty
 * intset (Valkey's createIntsetObject) and replies in that set's order;
 * SINTER walks its smallest input twice instead (once to count, once to
 * reply), since RESP3 wants the set's length before its members.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "reply.h"
#include "set.h"
#include "util.h"
#include "zmalloc.h"

/* ---- lookups ------------------------------------------------------------------ */

/* The set at key, NULL when absent (absent_reply, if any, replied) or of
 * another type (WRONGTYPE replied; *wrong set). */
static obj *lookup_set(client *c, obj *key, int for_write, void (*absent_reply)(client *c), int *wrong) {
    obj *o = for_write ? db_lookup_write(c->db, key) : db_lookup_read(c->db, key);
    if (wrong) *wrong = 0;
    if (!o) {
        if (absent_reply) absent_reply(c);
        return NULL;
    }
    if (o->type != OBJ_SET) {
        reply_error(c, ERR_WRONGTYPE);
        if (wrong) *wrong = 1;
        return NULL;
    }
    return o;
}

static void reply_zero(client *c) { reply_long_long(c, 0); }
static void reply_empty_set(client *c) { reply_set_len(c, 0); }
static void reply_empty_array(client *c) { reply_array_len(c, 0); }

/* Every member of o, as a RESP3 set (an array in RESP2). */
static void reply_members(client *c, obj *o) {
    set_iter it;
    const char *m;
    size_t len;
    reply_set_len(c, (long)set_length(o));
    set_iter_init(&it, o);
    while (set_iter_next(&it, &m, &len)) reply_bulk_buf(c, m, len);
    set_iter_reset(&it);
}

/* ---- SADD SREM SMOVE ------------------------------------------------------------ */

static void sadd_command(client *c) {
    int wrong;
    obj *o = lookup_set(c, c->argv[1], 1, NULL, &wrong);
    if (wrong) return;
    if (!o) {
        o = set_object_create(c->argv[2]->ptr, c->argv[2]->len, (size_t)c->argc - 2);
        db_add(c->db, c->argv[1], o);
    } else {
        set_maybe_convert(o, (size_t)c->argc - 2);
    }
    long long added = 0;
    for (int j = 2; j < c->argc; j++) added += set_add(o, c->argv[j]->ptr, c->argv[j]->len);
    if (added) db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, added);
}

static void srem_command(client *c) {
    obj *o = lookup_set(c, c->argv[1], 1, reply_zero, NULL);
    if (!o) return;
    long long removed = 0;
    for (int j = 2; j < c->argc; j++) {
        removed += set_remove(o, c->argv[j]->ptr, c->argv[j]->len);
        if (set_length(o) == 0) { /* the key goes; the rest cannot be there */
            db_delete(c->db, c->argv[1]);
            break;
        }
    }
    if (removed) db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, removed);
}

/* Valkey's smoveCommand: a missing source answers 0 before the types are
 * checked; moving within one set answers whether the member is there. */
static void smove_command(client *c) {
    obj *src = db_lookup_write(c->db, c->argv[1]), *dst = db_lookup_write(c->db, c->argv[2]);
    obj *m = c->argv[3];
    if (!src) {
        reply_long_long(c, 0);
        return;
    }
    if (src->type != OBJ_SET || (dst && dst->type != OBJ_SET)) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    if (src == dst) {
        reply_long_long(c, set_is_member(src, m->ptr, m->len));
        return;
    }
    if (!set_remove(src, m->ptr, m->len)) {
        reply_long_long(c, 0);
        return;
    }
    if (set_length(src) == 0) db_delete(c->db, c->argv[1]);
    if (!dst) {
        dst = set_object_create(m->ptr, m->len, 1);
        db_add(c->db, c->argv[2], dst);
    }
    db_signal_modified(c->db, c->argv[1]);
    if (set_add(dst, m->ptr, m->len)) db_signal_modified(c->db, c->argv[2]);
    reply_long_long(c, 1);
}

/* ---- reads ---------------------------------------------------------------------- */

static void smembers_command(client *c) {
    obj *o = lookup_set(c, c->argv[1], 0, reply_empty_set, NULL);
    if (o) reply_members(c, o);
}

static void sismember_command(client *c) {
    obj *o = lookup_set(c, c->argv[1], 0, reply_zero, NULL);
    if (o) reply_long_long(c, set_is_member(o, c->argv[2]->ptr, c->argv[2]->len));
}

static void smismember_command(client *c) {
    int wrong;
    obj *o = lookup_set(c, c->argv[1], 0, NULL, &wrong);
    if (wrong) return;
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) reply_long_long(c, o && set_is_member(o, c->argv[j]->ptr, c->argv[j]->len));
}

static void scard_command(client *c) {
    obj *o = lookup_set(c, c->argv[1], 0, reply_zero, NULL);
    if (o) reply_long_long(c, (long long)set_length(o));
}

/* ---- SPOP ------------------------------------------------------------------------- */

/* Valkey's SPOP_MOVE_STRATEGY_MUL: popping more than remaining * 5
 * members one by one would cost more than moving the few that stay. */
#define SPOP_MOVE_STRATEGY_MUL 5

/*@ spop-count */
/* Valkey's spopWithCountCommand: the count is read before the key. All
 * of the set: reply it and delete the key. A few: pop them one by one.
 * Most: pop the ones that stay into a new set, reply what is left in the
 * old one, and let the set take the new one's structure. */
static void spop_with_count(client *c) {
    long long count; /* Valkey's getPositiveLongFromObjectOrReply: one message for both */
    if (!obj_get_ll(c->argv[2], &count) || count < 0) {
        reply_error(c, "value is out of range, must be positive");
        return;
    }
    obj *o = lookup_set(c, c->argv[1], 1, reply_empty_set, NULL);
    if (!o) return;
    if (count == 0) {
        reply_empty_set(c);
        return;
    }
    long long size = (long long)set_length(o);
    if (count >= size) {
        reply_members(c, o);
        db_delete(c->db, c->argv[1]);
    } else if ((size - count) * SPOP_MOVE_STRATEGY_MUL > count) {
        reply_set_len(c, (long)count);
        for (long long i = 0; i < count; i++) {
            obj *m = set_pop(o);
            reply_bulk(c, m);
            obj_decr_ref(m);
        }
    } else {
        obj *stay = set_object_create_intset();
        for (long long i = 0; i < size - count; i++) {
            obj *m = set_pop(o);
            set_add(stay, m->ptr, m->len);
            obj_decr_ref(m);
        }
        reply_members(c, o);
        set_swap(o, stay);
        obj_decr_ref(stay);
    }
    db_signal_modified(c->db, c->argv[1]);
}
/*@ end */

static void spop_command(client *c) {
    if (c->argc == 3) {
        spop_with_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    obj *o = lookup_set(c, c->argv[1], 1, reply_null, NULL);
    if (!o) return;
    obj *m = set_pop(o);
    if (set_length(o) == 0) db_delete(c->db, c->argv[1]);
    db_signal_modified(c->db, c->argv[1]);
    reply_bulk(c, m);
    obj_decr_ref(m);
}

/* ---- SRANDMEMBER ------------------------------------------------------------------- */

/* Valkey's srandmemberWithCountCommand: a negative count (or 1) draws
 * with repeats; a count at least the set's size returns the whole set;
 * otherwise `count` distinct members: when they are most of the set, a
 * copy loses random members until count are left; when few, draws are
 * kept until count distinct ones came up. */
static void srandmember_with_count(client *c, long long count) {
    obj *o = lookup_set(c, c->argv[1], 0, reply_empty_array, NULL);
    if (!o) return;
    char buf[SET_INTBUF_SIZE];
    const char *m;
    size_t len;
    long long size = (long long)set_length(o);
    if (count == 0) {
        reply_empty_array(c);
        return;
    }
    if (count < 0 || count == 1) {
        long long n = count < 0 ? -count : 1;
        reply_array_len(c, (long)n);
        for (long long i = 0; i < n; i++) {
            set_random(o, buf, &m, &len);
            reply_bulk_buf(c, m, len);
        }
        return;
    }
    if (count >= size) {
        set_iter it;
        reply_array_len(c, (long)size);
        set_iter_init(&it, o);
        while (set_iter_next(&it, &m, &len)) reply_bulk_buf(c, m, len);
        set_iter_reset(&it);
        return;
    }
    reply_array_len(c, (long)count);
    if (count * 3 > size) {
        obj *copy = set_object_dup(o);
        while ((long long)set_length(copy) > count) obj_decr_ref(set_pop(copy));
        set_iter it;
        set_iter_init(&it, copy);
        while (set_iter_next(&it, &m, &len)) reply_bulk_buf(c, m, len);
        set_iter_reset(&it);
        obj_decr_ref(copy);
        return;
    }
    obj *seen = set_object_create_intset();
    while ((long long)set_length(seen) < count) {
        set_random(o, buf, &m, &len);
        if (set_add(seen, m, len)) reply_bulk_buf(c, m, len);
    }
    obj_decr_ref(seen);
}

static void srandmember_command(client *c) {
    if (c->argc == 3) {
        long long count;
        if (!obj_get_ll(c->argv[2], &count)) {
            reply_error(c, ERR_NOT_INT);
            return;
        }
        if (count < -LLONG_MAX) {
            reply_error_format(c, "value is out of range, value must between %lld and %lld", -LLONG_MAX, LLONG_MAX);
            return;
        }
        srandmember_with_count(c, count);
        return;
    }
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    obj *o = lookup_set(c, c->argv[1], 0, reply_null, NULL);
    if (!o) return;
    char buf[SET_INTBUF_SIZE];
    const char *m;
    size_t len;
    set_random(o, buf, &m, &len);
    reply_bulk_buf(c, m, len);
}

/* ---- the algebra ------------------------------------------------------------------ */

/* The inputs at keys[0, n): each a set or NULL (missing, an empty set).
 * Any other type is WRONGTYPE, checked for every key before any work
 * (Valkey's loops look every key up first). NULL, replied, on a wrong
 * type; else an array the caller frees. */
static obj **lookup_inputs(client *c, obj **keys, long long n) {
    obj **sets = zmalloc(sizeof(obj *) * (size_t)n);
    for (long long j = 0; j < n; j++) {
        obj *o = db_lookup_read(c->db, keys[j]);
        if (o && o->type != OBJ_SET) {
            reply_error(c, ERR_WRONGTYPE);
            zfree(sets);
            return NULL;
        }
        sets[j] = o;
    }
    return sets;
}

static size_t input_length(obj *o) { return o ? set_length(o) : 0; }

static int by_size(const void *x, const void *y) {
    size_t a = input_length(*(obj *const *)x), b = input_length(*(obj *const *)y);
    return a < b ? -1 : a > b;
}
static int by_size_desc(const void *x, const void *y) { return by_size(y, x); }

/* Whether m is in every set of sets[1, n) (the smallest, sets[0], being
 * walked). */
static int in_all_others(obj **sets, long long n, const char *m, size_t len) {
    for (long long j = 1; j < n; j++)
        if (sets[j] != sets[0] && !set_is_member(sets[j], m, len)) return 0;
    return 1;
}

/* A STORE form's ending (Valkey: setKey, or dbDelete when the result is
 * empty): the result replaces dst, or an empty result deletes it; the
 * reply is the result's size. Takes over result. */
static void store_result(client *c, obj *dst, obj *result) {
    long long n = (long long)set_length(result);
    if (n) {
        db_set_key(c->db, dst, result, 0);
        db_signal_modified(c->db, dst);
    } else {
        obj_decr_ref(result);
        if (db_delete(c->db, dst)) db_signal_modified(c->db, dst);
    }
    reply_long_long(c, n);
}

/*@ sinter */
/* Valkey's sinterGenericCommand: SINTER (dst NULL, card_only 0),
 * SINTERSTORE (dst) and SINTERCARD (card_only, limit 0 for none). The
 * smallest input is walked and each member looked up in the others. */
static void sinter_generic(client *c, obj **keys, long long n, obj *dst, int card_only, long long limit) {
    obj **sets = lookup_inputs(c, keys, n);
    if (!sets) return;
    qsort(sets, (size_t)n, sizeof(obj *), by_size); /* a missing input sorts first */
    set_iter it;
    const char *m;
    size_t len;
    long long card = 0;
    if (sets[0]) { /* else some input is missing or empty: so is the result */
        obj *result = dst ? set_object_create_intset() : NULL;
        set_iter_init(&it, sets[0]);
        while (set_iter_next(&it, &m, &len)) {
            if (!in_all_others(sets, n, m, len)) continue;
            card++;
            if (result) set_add(result, m, len);
            if (card_only && limit && card >= limit) break;
        }
        set_iter_reset(&it);
        if (result) {
            store_result(c, dst, result);
        } else if (card_only) {
            reply_long_long(c, card);
        } else { /* the second walk replies what the first counted */
            reply_set_len(c, (long)card);
            set_iter_init(&it, sets[0]);
            while (set_iter_next(&it, &m, &len))
                if (in_all_others(sets, n, m, len)) reply_bulk_buf(c, m, len);
            set_iter_reset(&it);
        }
    } else if (dst) {
        if (db_delete(c->db, dst)) db_signal_modified(c->db, dst);
        reply_long_long(c, 0);
    } else if (card_only) {
        reply_long_long(c, 0);
    } else {
        reply_empty_set(c);
    }
    zfree(sets);
}
/*@ end */

enum setop { SETOP_UNION, SETOP_DIFF };

/*@ sunion-sdiff */
/* Valkey's sunionDiffGenericCommand (its first difference algorithm:
 * walk the first set, keep what no other input holds, the others looked
 * up largest first). */
static void sunion_diff_generic(client *c, obj **keys, long long n, obj *dst, enum setop op) {
    obj **sets = lookup_inputs(c, keys, n);
    if (!sets) return;
    obj *result = set_object_create_intset();
    set_iter it;
    const char *m;
    size_t len;
    if (op == SETOP_UNION) {
        for (long long j = 0; j < n; j++) {
            if (!sets[j]) continue;
            set_iter_init(&it, sets[j]);
            while (set_iter_next(&it, &m, &len)) set_add(result, m, len);
            set_iter_reset(&it);
        }
    } else if (sets[0]) {
        int same = 0; /* the first set minus itself is empty */
        for (long long j = 1; j < n; j++) same |= sets[j] == sets[0];
        if (!same) {
            qsort(sets + 1, (size_t)n - 1, sizeof(obj *), by_size_desc);
            set_iter_init(&it, sets[0]);
            while (set_iter_next(&it, &m, &len)) {
                long long j = 1;
                while (j < n && !(sets[j] && set_is_member(sets[j], m, len))) j++;
                if (j == n) set_add(result, m, len);
            }
            set_iter_reset(&it);
        }
    }
    if (dst) {
        store_result(c, dst, result);
    } else {
        reply_members(c, result);
        obj_decr_ref(result);
    }
    zfree(sets);
}
/*@ end */

static void sinter_command(client *c) { sinter_generic(c, c->argv + 1, c->argc - 1, NULL, 0, 0); }
static void sinterstore_command(client *c) { sinter_generic(c, c->argv + 2, c->argc - 2, c->argv[1], 0, 0); }
static void sunion_command(client *c) { sunion_diff_generic(c, c->argv + 1, c->argc - 1, NULL, SETOP_UNION); }
static void sunionstore_command(client *c) {
    sunion_diff_generic(c, c->argv + 2, c->argc - 2, c->argv[1], SETOP_UNION);
}
static void sdiff_command(client *c) { sunion_diff_generic(c, c->argv + 1, c->argc - 1, NULL, SETOP_DIFF); }
static void sdiffstore_command(client *c) { sunion_diff_generic(c, c->argv + 2, c->argc - 2, c->argv[1], SETOP_DIFF); }

/* SINTERCARD numkeys key [key ...] [LIMIT limit] (Valkey's
 * sinterCardCommand: numkeys and LIMIT each have their own message). */
static void sintercard_command(client *c) {
    long long n, limit = 0;
    if (!obj_get_ll(c->argv[1], &n) || n < 1) {
        reply_error(c, "numkeys should be greater than 0");
        return;
    }
    if (n > c->argc - 2) {
        reply_error(c, "Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)n; j < c->argc; j++) {
        if (arg_is(c->argv[j], "limit") && j + 1 < c->argc) {
            j++;
            if (!obj_get_ll(c->argv[j], &limit) || limit < 0) {
                reply_error(c, "LIMIT can't be negative");
                return;
            }
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    sinter_generic(c, c->argv + 2, n, NULL, 1, limit);
}

/* ---- SSCAN ------------------------------------------------------------------------- */

typedef struct scan_batch {
    obj **v;
    size_t n, cap;
} scan_batch;

/* Copies each member: an intset's are printed into a buffer reused by
 * the next one. */
static void scan_collect(void *privdata, const char *m, size_t len) {
    scan_batch *b = privdata;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->v = zrealloc(b->v, b->cap * sizeof(*b->v));
    }
    b->v[b->n++] = obj_create_string(m, len);
}

/* SSCAN key cursor [MATCH pattern] [COUNT count]: as ZSCAN, without
 * scores; a small set comes back whole with cursor 0. */
static void sscan_command(client *c) {
    unsigned long long cursor;
    long long count = 10;
    const obj *pat = NULL;
    if (!commands_scan_cursor_or_reply(c, c->argv[2], &cursor)) return;
    obj *o = lookup_set(c, c->argv[1], 0, commands_reply_empty_scan, NULL);
    if (!o) return;
    if (!commands_scan_options_or_reply(c, c->argv + 3, c->argc - 3, &count, &pat, NULL, NULL)) return;
    scan_batch b = {0};
    long long max_buckets = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = set_scan(o, (size_t)cursor, scan_collect, &b);
    } while (cursor && max_buckets-- && b.n < (unsigned long long)count);
    size_t kept = 0;
    for (size_t i = 0; i < b.n; i++) {
        obj *m = b.v[i];
        if (!pat || util_string_match_len(pat->ptr, pat->len, m->ptr, m->len, 0))
            b.v[kept++] = m;
        else
            obj_decr_ref(m);
    }
    commands_reply_scan(c, cursor, b.v, kept);
    zfree(b.v);
}

/* ---- the table ------------------------------------------------------------------------ */

#define W CMD_WRITE
#define R CMD_READONLY
#define M CMD_DENYOOM
#define F CMD_FAST
#define SCMD(name, proc, arity, flags, first, last, summary)                                                           \
    { name, proc, arity, flags, first, last, 1, "set", summary, 0, 0, 0, 0 }

command set_commands[] = {
    SCMD("sadd", sadd_command, -3, W | M | F, 1, 1,
         "Adds one or more members to a set. Creates the key if it doesn't exist."),
    SCMD("srem", srem_command, -3, W | F, 1, 1,
         "Removes one or more members from a set. Deletes the set if the last member was removed."),
    SCMD("smembers", smembers_command, 2, R, 1, 1, "Returns all members of a set."),
    SCMD("sismember", sismember_command, 3, R | F, 1, 1, "Determines whether a member belongs to a set."),
    SCMD("smismember", smismember_command, -3, R | F, 1, 1, "Determines whether multiple members belong to a set."),
    SCMD("scard", scard_command, 2, R | F, 1, 1, "Returns the number of members in a set."),
    SCMD("spop", spop_command, -2, W | F, 1, 1,
         "Returns one or more random members from a set after removing them. Deletes the set if the last member was "
         "popped."),
    SCMD("srandmember", srandmember_command, -2, R, 1, 1, "Gets one or multiple random members from a set."),
    SCMD("smove", smove_command, 4, W | F, 1, 2, "Moves a member from one set to another."),
    SCMD("sinter", sinter_command, -2, R, 1, -1, "Returns the intersect of multiple sets."),
    {"sintercard", sintercard_command, -3, R | CMD_MOVABLEKEYS, 0, 0, 0, "set",
     "Returns the number of members of the intersect of multiple sets.", 0, 0, 0, 0},
    SCMD("sunion", sunion_command, -2, R, 1, -1, "Returns the union of multiple sets."),
    SCMD("sdiff", sdiff_command, -2, R, 1, -1, "Returns the difference of multiple sets."),
    SCMD("sinterstore", sinterstore_command, -3, W | M, 1, -1, "Stores the intersect of multiple sets in a key."),
    SCMD("sunionstore", sunionstore_command, -3, W | M, 1, -1, "Stores the union of multiple sets in a key."),
    SCMD("sdiffstore", sdiffstore_command, -3, W | M, 1, -1, "Stores the difference of multiple sets in a key."),
    SCMD("sscan", sscan_command, -3, R, 1, 1, "Iterates over members of a set."),
    {0},
};
