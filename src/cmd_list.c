/* cmd_list.c — the list commands.
 *
 * Not a step (commands layer). Owns: list_commands[] — LPUSH RPUSH LPUSHX
 * RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET LINSERT LREM LTRIM LPOS LMOVE
 * RPOPLPUSH LMPOP and the blocking BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP —
 * their argument parsing and their replies. The structure is src/list.c; this
 * file never touches a node or a listpack. The blocking pops block through
 * blocked.c, which runs the command again when a list appears.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: src/t_list.c (pushGenericCommand, linsertCommand, lindexCommand,
 * lsetCommand, popGenericCommand, mpopGenericCommand, addListRangeReply,
 * listPopRangeAndReplyWithKey, listElementsRemoved, ltrimCommand,
 * lposCommand, lremCommand, lmoveGenericCommand, lmoveHandlePush,
 * blockingPopGenericCommand, blmoveGenericCommand, lmpopGenericCommand).
 * Each command checks its arguments and the key in Valkey's order, so a
 * command wrong in two ways gets the same error as from Valkey.
 */
#include <limits.h>
#include <string.h>

#include "blocked.h"
#include "client.h"
#include "commands.h"
#include "db.h"
#include "list.h"
#include "reply.h"

/* ---- arguments --------------------------------------------------------------- */

static int get_long_or_reply(client *c, const obj *o, long *out) {
    long long v;
    if (!obj_get_ll(o, &v) || v < LONG_MIN || v > LONG_MAX) {
        reply_error(c, ERR_NOT_INT);
        return 0;
    }
    *out = (long)v;
    return 1;
}

/* Valkey's getRangeLongFromObjectOrReply: msg (when given) serves both
 * "not a number" and "out of range". */
static int get_range_or_reply(client *c, const obj *o, long min, long max, long *out, const char *msg) {
    long long v;
    if (!obj_get_ll(o, &v) || v < LONG_MIN || v > LONG_MAX) {
        reply_error(c, msg ? msg : ERR_NOT_INT);
        return 0;
    }
    if (v < min || v > max) {
        if (msg)
            reply_error(c, msg);
        else
            reply_error_format(c, "value is out of range, must be between %ld and %ld", min, max);
        return 0;
    }
    *out = (long)v;
    return 1;
}

/* Valkey's getPositiveLongFromObjectOrReply. */
static int get_positive_or_reply(client *c, const obj *o, long *out, const char *msg) {
    return get_range_or_reply(c, o, 0, LONG_MAX, out, msg ? msg : "value is out of range, must be positive");
}

/* LEFT or RIGHT (Valkey: getListPositionFromObjectOrReply). */
static int get_where_or_reply(client *c, const obj *o, enum list_where *where) {
    if (arg_is(o, "right")) {
        *where = LIST_TAIL;
    } else if (arg_is(o, "left")) {
        *where = LIST_HEAD;
    } else {
        reply_error(c, ERR_SYNTAX);
        return 0;
    }
    return 1;
}

/* The list at key for a command that reads or writes: NULL when absent
 * (the caller replies), NULL with WRONGTYPE replied (*wrong set) when
 * the key holds another type. */
static obj *lookup_list(client *c, obj *key, int write, int *wrong) {
    obj *o = write ? db_lookup_write(c->db, key) : db_lookup_read(c->db, key);
    *wrong = 0;
    if (o && o->type != OBJ_LIST) {
        reply_error(c, ERR_WRONGTYPE);
        *wrong = 1;
        return NULL;
    }
    return o;
}

/* The list at key, or NULL once a reply is sent: WRONGTYPE for another
 * type, or absent(c), the command's answer for a missing key. */
typedef void absent_reply(client *c);
static obj *lookup_list_or_reply(client *c, obj *key, int write, absent_reply *absent) {
    int wrong;
    obj *o = lookup_list(c, key, write, &wrong);
    if (!o && !wrong) absent(c);
    return o;
}
static void reply_zero(client *c) { reply_long_long(c, 0); }
static void reply_empty_array(client *c) { reply_array_len(c, 0); }
static void reply_no_such_key(client *c) { reply_error(c, "no such key"); }

static const unsigned char *bytes(const obj *o) { return (const unsigned char *)o->ptr; }

/* ---- after a removal (Valkey: listElementsRemoved) ------------------------------ */

/* Elements left the list at key: an emptied list goes with its key, a
 * shrunk one may become a listpack again; either way the key changed. */
static void elements_removed(client *c, obj *key, obj *o) {
    if (list_length(o) == 0)
        db_delete(c->db, key);
    else
        list_try_shrink(o);
    db_signal_modified(c->db, key);
}

/* ---- ranges ------------------------------------------------------------------- */

/*@ range-reply */
/* Replies elements [start, end] (negative from the end, clamped as
 * LRANGE does), towards the head when reverse (Valkey:
 * addListRangeReply). One walk over the nodes: the cursor is placed once
 * and each element goes from the listpack's bytes into the reply. */
static void range_reply(client *c, obj *o, long start, long end, int reverse) {
    long llen = (long)list_length(o);
    if (start < 0) start += llen;
    if (end < 0) end += llen;
    if (start < 0) start = 0;
    if (start > end || start >= llen) {
        reply_array_len(c, 0);
        return;
    }
    if (end >= llen) end = llen - 1;
    long n = end - start + 1;
    reply_array_len(c, n);
    list_iter it;
    list_iter_init(&it, o, reverse ? end : start, !reverse);
    unsigned char buf[LP_INTBUF_SIZE];
    size_t len;
    const unsigned char *s;
    while (n-- > 0 && (s = list_iter_next(&it, &len, buf))) reply_bulk_buf(c, s, len);
}
/*@ end */

/* Pops up to count elements from one end and replies them as an array in
 * popping order, then the key's bookkeeping (Valkey: popGenericCommand's
 * range path). */
static void pop_range_reply(client *c, obj *key, obj *o, enum list_where where, long count) {
    long llen = (long)list_length(o);
    long n = count > llen ? llen : count;
    if (where == LIST_HEAD) {
        range_reply(c, o, 0, n - 1, 0);
        list_delete_range(o, 0, (size_t)n);
    } else {
        range_reply(c, o, -n, -1, 1);
        list_delete_range(o, -n, (size_t)n);
    }
    elements_removed(c, key, o);
}

/* [key, [elements]] (Valkey: listPopRangeAndReplyWithKey). */
static void pop_range_with_key(client *c, obj *key, obj *o, enum list_where where, long count) {
    reply_array_len(c, 2);
    reply_bulk(c, key);
    pop_range_reply(c, key, o, where, count);
}

/* ---- push ----------------------------------------------------------------------- */

/*@ push */
/* LPUSH/RPUSH key element...; LPUSHX/RPUSHX only onto an existing list
 * (Valkey: pushGenericCommand). The encoding is settled once for all the
 * elements, before the first goes in. */
static void push_generic(client *c, enum list_where where, int xx) {
    int wrong;
    obj *o = lookup_list(c, c->argv[1], 1, &wrong);
    if (wrong) return;
    if (!o) {
        if (xx) {
            reply_long_long(c, 0);
            return;
        }
        o = list_object_create();
        db_add(c->db, c->argv[1], o);
    }
    size_t add = 0;
    for (int j = 2; j < c->argc; j++) add += c->argv[j]->len;
    list_try_grow(o, add, (size_t)(c->argc - 2));
    for (int j = 2; j < c->argc; j++) list_push(o, bytes(c->argv[j]), c->argv[j]->len, where);
    reply_long_long(c, (long long)list_length(o));
    db_signal_modified(c->db, c->argv[1]);
}
/*@ end */

static void lpush_command(client *c) { push_generic(c, LIST_HEAD, 0); }
static void rpush_command(client *c) { push_generic(c, LIST_TAIL, 0); }
static void lpushx_command(client *c) { push_generic(c, LIST_HEAD, 1); }
static void rpushx_command(client *c) { push_generic(c, LIST_TAIL, 1); }

/* LINSERT key BEFORE|AFTER pivot element: the new length, -1 when the
 * pivot is not there, 0 when the key is not. */
static void linsert_command(client *c) {
    int after;
    if (arg_is(c->argv[2], "after")) {
        after = 1;
    } else if (arg_is(c->argv[2], "before")) {
        after = 0;
    } else {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    obj *o = lookup_list_or_reply(c, c->argv[1], 1, reply_zero);
    if (!o) return;
    /* As Valkey: assume the insert happens, so the list is converted (if
     * it must be) before the pivot is searched, once. */
    list_try_grow(o, c->argv[4]->len, 1);
    if (!list_insert(o, bytes(c->argv[3]), c->argv[3]->len, after, bytes(c->argv[4]), c->argv[4]->len)) {
        reply_long_long(c, -1);
        return;
    }
    db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, (long long)list_length(o));
}

/* ---- read -------------------------------------------------------------------------- */

static void llen_command(client *c) {
    int wrong;
    obj *o = lookup_list(c, c->argv[1], 0, &wrong);
    if (!wrong) reply_long_long(c, o ? (long long)list_length(o) : 0);
}

/* LINDEX looks the key up before it parses the index, as Valkey does. */
static void lindex_command(client *c) {
    long index;
    obj *o = lookup_list_or_reply(c, c->argv[1], 0, reply_null);
    if (!o) return;
    if (!get_long_or_reply(c, c->argv[2], &index)) return;
    unsigned char buf[LP_INTBUF_SIZE];
    size_t len;
    const unsigned char *s = list_index(o, index, &len, buf);
    if (s)
        reply_bulk_buf(c, s, len);
    else
        reply_null(c);
}

static void lrange_command(client *c) {
    long start, end;
    if (!get_long_or_reply(c, c->argv[2], &start) || !get_long_or_reply(c, c->argv[3], &end)) return;
    obj *o = lookup_list_or_reply(c, c->argv[1], 0, reply_empty_array);
    if (!o) return;
    range_reply(c, o, start, end, 0);
}

/*@ lpos */
/* LPOS key element [RANK rank] [COUNT num] [MAXLEN len] (Valkey:
 * lposCommand). RANK n: start at the n-th match, from the tail when
 * negative; COUNT: an array of up to num indexes (0: all); MAXLEN: look
 * at that many elements at most (0: all). */
static void lpos_command(client *c) {
    long rank = 1, count = -1, maxlen = 0; /* count -1: not given */
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c->argv[j], "rank") && more) {
            if (!get_range_or_reply(c, c->argv[++j], -LONG_MAX, LONG_MAX, &rank, NULL)) return;
            if (rank == 0) {
                reply_error(c, "RANK can't be zero: use 1 to start from the first match, 2 from the second ... or "
                               "use negative to start from the end of the list");
                return;
            }
        } else if (arg_is(c->argv[j], "count") && more) {
            if (!get_positive_or_reply(c, c->argv[++j], &count, "COUNT can't be negative")) return;
        } else if (arg_is(c->argv[j], "maxlen") && more) {
            if (!get_positive_or_reply(c, c->argv[++j], &maxlen, "MAXLEN can't be negative")) return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    int forward = rank > 0;
    if (rank < 0) rank = -rank;
    int wrong;
    obj *o = lookup_list(c, c->argv[1], 0, &wrong);
    if (wrong) return;
    if (!o) {
        if (count != -1)
            reply_array_len(c, 0);
        else
            reply_null(c);
        return;
    }
    void *lenp = count != -1 ? reply_deferred_len(c) : NULL;
    long llen = (long)list_length(o), index = 0, matches = 0, found = -1, emitted = 0;
    lp_elem want;
    lp_encode(&want, bytes(c->argv[2]), c->argv[2]->len);
    list_iter it;
    list_iter_init(&it, o, forward ? 0 : -1, forward);
    int eq;
    while ((maxlen == 0 || index < maxlen) && (eq = list_iter_next_equals(&it, &want)) >= 0) {
        if (eq && ++matches >= rank) {
            found = forward ? index : llen - index - 1;
            if (!lenp) break;
            reply_long_long(c, found);
            emitted++;
            if (count && matches - rank + 1 >= count) break;
        }
        index++;
        found = -1;
    }
    if (lenp)
        reply_set_deferred_array_len(c, lenp, emitted);
    else if (found != -1)
        reply_long_long(c, found);
    else
        reply_null(c);
}
/*@ end */

/* ---- write in place ------------------------------------------------------------------ */

static void lset_command(client *c) {
    long index;
    obj *o = lookup_list_or_reply(c, c->argv[1], 1, reply_no_such_key);
    if (!o) return;
    if (!get_long_or_reply(c, c->argv[2], &index)) return;
    list_try_grow(o, c->argv[3]->len, 1);
    if (!list_set(o, index, bytes(c->argv[3]), c->argv[3]->len)) {
        reply_error(c, "index out of range");
        return;
    }
    /* Growth was settled above; a smaller element may allow shrinking. */
    list_try_shrink(o);
    db_signal_modified(c->db, c->argv[1]);
    reply_ok(c);
}

static void lrem_command(client *c) {
    long toremove;
    if (!get_range_or_reply(c, c->argv[2], -LONG_MAX, LONG_MAX, &toremove, NULL)) return;
    obj *o = lookup_list_or_reply(c, c->argv[1], 1, reply_zero);
    if (!o) return;
    long removed = list_remove(o, bytes(c->argv[3]), c->argv[3]->len, toremove);
    if (removed) elements_removed(c, c->argv[1], o);
    reply_long_long(c, removed);
}

/* LTRIM key start stop: keeps [start, stop]; an empty range empties the
 * list and deletes the key. */
static void ltrim_command(client *c) {
    long start, end;
    if (!get_long_or_reply(c, c->argv[2], &start) || !get_long_or_reply(c, c->argv[3], &end)) return;
    obj *o = lookup_list_or_reply(c, c->argv[1], 1, reply_ok);
    if (!o) return;
    long llen = (long)list_length(o), ltrim, rtrim;
    if (start < 0) start += llen;
    if (end < 0) end += llen;
    if (start < 0) start = 0;
    if (start > end || start >= llen) {
        ltrim = llen;
        rtrim = 0;
    } else {
        if (end >= llen) end = llen - 1;
        ltrim = start;
        rtrim = llen - end - 1;
    }
    list_delete_range(o, 0, (size_t)ltrim);
    list_delete_range(o, -rtrim, (size_t)rtrim);
    if (list_length(o) == 0)
        db_delete(c->db, c->argv[1]);
    else
        list_try_shrink(o);
    /* Signalled even when nothing was trimmed, as Valkey 8's ltrimCommand
     * does: a WATCH on the key sees the LTRIM. */
    db_signal_modified(c->db, c->argv[1]);
    reply_ok(c);
}

/* ---- pops ---------------------------------------------------------------------------- */

/*@ pop */
/* LPOP/RPOP key [count] (Valkey: popGenericCommand): without count one
 * bulk (null when absent); with count an array (a null array when the key
 * is absent, an empty one for count 0). */
static void pop_generic(client *c, enum list_where where) {
    long count = 0;
    int hascount = c->argc == 3;
    if (c->argc > 3) {
        reply_error_arity(c);
        return;
    }
    if (hascount && !get_positive_or_reply(c, c->argv[2], &count, NULL)) return;
    int wrong;
    obj *o = lookup_list(c, c->argv[1], 1, &wrong);
    if (wrong) return;
    if (!o) {
        if (hascount)
            reply_null_array(c);
        else
            reply_null(c);
        return;
    }
    if (hascount && count == 0) {
        reply_array_len(c, 0);
        return;
    }
    if (!hascount) {
        unsigned char buf[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *s = list_peek(o, where, &len, buf);
        reply_bulk_buf(c, s, len); /* copied out before the element goes */
        list_pop_discard(o, where);
        elements_removed(c, c->argv[1], o);
        return;
    }
    pop_range_reply(c, c->argv[1], o, where, count);
}
/*@ end */

static void lpop_command(client *c) { pop_generic(c, LIST_HEAD); }
static void rpop_command(client *c) { pop_generic(c, LIST_TAIL); }

/* The first of keys holding a non-empty list (Valkey: the key loops of
 * mpopGenericCommand and blockingPopGenericCommand): 1 with *key, *o set;
 * 0 when none; -1 with WRONGTYPE replied for a key of another type met
 * first. */
static int first_list(client *c, obj **keys, int nkeys, obj **key, obj **o) {
    for (int i = 0; i < nkeys; i++) {
        int wrong;
        obj *l = lookup_list(c, keys[i], 1, &wrong);
        if (wrong) return -1;
        if (!l || list_length(l) == 0) continue;
        *key = keys[i];
        *o = l;
        return 1;
    }
    return 0;
}

/*@ blocking-pop */
/* BLPOP/BRPOP/BLMPOP's body (Valkey: blockingPopGenericCommand): the
 * timeout first, then the first non-empty list pops; none: block on all
 * the keys, or inside MULTI reply the null array a timeout would (a
 * transaction never blocks). count -1: BLPOP's [key, element] reply;
 * otherwise BLMPOP's [key, [elements]]. */
static void blocking_pop(client *c, obj **keys, int nkeys, enum list_where where, int timeout_idx, long count) {
    long long deadline;
    obj *key, *o;
    if (!blocked_timeout_or_reply(c, c->argv[timeout_idx], &deadline)) return;
    int found = first_list(c, keys, nkeys, &key, &o);
    if (found < 0) return;
    if (found) {
        if (count != -1) {
            pop_range_with_key(c, key, o, where, count);
            return;
        }
        unsigned char buf[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *s = list_peek(o, where, &len, buf);
        reply_array_len(c, 2);
        reply_bulk(c, key);
        reply_bulk_buf(c, s, len);
        list_pop_discard(o, where);
        elements_removed(c, key, o);
    } else if (c->flags & CLIENT_MULTI) {
        reply_null_array(c);
    } else {
        blocked_block_for_keys(c, keys, nkeys, deadline, OBJ_LIST);
    }
}
/*@ end */

static void blpop_command(client *c) { blocking_pop(c, c->argv + 1, c->argc - 2, LIST_HEAD, c->argc - 1, -1); }
static void brpop_command(client *c) { blocking_pop(c, c->argv + 1, c->argc - 2, LIST_TAIL, c->argc - 1, -1); }

/* LMPOP numkeys key... LEFT|RIGHT [COUNT count] and BLMPOP timeout
 * numkeys ... (Valkey: lmpopGenericCommand): numkeys, then the side, then
 * COUNT, and only then BLMPOP's timeout. */
static void lmpop_generic(client *c, int numkeys_idx, int blocking) {
    long numkeys, count = -1;
    enum list_where where;
    if (!get_range_or_reply(c, c->argv[numkeys_idx], 1, LONG_MAX, &numkeys, "numkeys should be greater than 0")) return;
    if (numkeys >= c->argc - numkeys_idx - 1) { /* LEFT|RIGHT would be past the end */
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int where_idx = numkeys_idx + (int)numkeys + 1;
    if (!get_where_or_reply(c, c->argv[where_idx], &where)) return;
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (count == -1 && arg_is(c->argv[j], "count") && j + 1 < c->argc) {
            if (!get_range_or_reply(c, c->argv[++j], 1, LONG_MAX, &count, "count should be greater than 0")) return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (count == -1) count = 1;
    obj **keys = c->argv + numkeys_idx + 1;
    if (blocking) {
        blocking_pop(c, keys, (int)numkeys, where, 1, count);
        return;
    }
    obj *key, *o;
    int found = first_list(c, keys, (int)numkeys, &key, &o);
    if (found > 0) pop_range_with_key(c, key, o, where, count);
    if (found == 0) reply_null_array(c);
}

static void lmpop_command(client *c) { lmpop_generic(c, 1, 0); }
static void blmpop_command(client *c) { lmpop_generic(c, 2, 1); }

/* ---- moves ---------------------------------------------------------------------------- */

/*@ lmove */
/* LMOVE src dst from to (Valkey: lmoveGenericCommand, lmoveHandlePush):
 * pops at one end of src, pushes at one end of dst (created if absent,
 * the same list when src is dst) and replies the element; null when src
 * is absent. */
static void lmove_generic(client *c, enum list_where from, enum list_where to) {
    int wrong;
    obj *src = lookup_list(c, c->argv[1], 1, &wrong);
    if (wrong) return;
    if (!src) {
        reply_null(c);
        return;
    }
    obj *dst = lookup_list(c, c->argv[2], 1, &wrong);
    if (wrong) return;
    obj *value = list_pop(src, from);
    if (!dst) {
        dst = list_object_create();
        db_add(c->db, c->argv[2], dst);
    }
    list_try_grow(dst, value->len, 1);
    list_push(dst, bytes(value), value->len, to);
    db_signal_modified(c->db, c->argv[2]);
    reply_bulk(c, value);
    obj_decr_ref(value);
    elements_removed(c, c->argv[1], src);
}
/*@ end */

static void lmove_command(client *c) {
    enum list_where from, to;
    if (!get_where_or_reply(c, c->argv[3], &from) || !get_where_or_reply(c, c->argv[4], &to)) return;
    lmove_generic(c, from, to);
}

static void rpoplpush_command(client *c) { lmove_generic(c, LIST_TAIL, LIST_HEAD); }

/* BLMOVE and BRPOPLPUSH (Valkey: blmoveGenericCommand): an absent source
 * blocks, or inside MULTI replies a null bulk (not the null array a
 * timeout replies: Valkey's addReplyNull there). */
static void blmove_generic(client *c, enum list_where from, enum list_where to, long long deadline) {
    int wrong;
    obj *src = lookup_list(c, c->argv[1], 1, &wrong);
    if (wrong) return;
    if (src) {
        lmove_generic(c, from, to);
    } else if (c->flags & CLIENT_MULTI) {
        reply_null(c);
    } else {
        blocked_block_for_keys(c, c->argv + 1, 1, deadline, OBJ_LIST);
    }
}

static void blmove_command(client *c) {
    enum list_where from, to;
    long long deadline;
    if (!get_where_or_reply(c, c->argv[3], &from) || !get_where_or_reply(c, c->argv[4], &to)) return;
    if (!blocked_timeout_or_reply(c, c->argv[5], &deadline)) return;
    blmove_generic(c, from, to, deadline);
}

static void brpoplpush_command(client *c) {
    long long deadline;
    if (!blocked_timeout_or_reply(c, c->argv[3], &deadline)) return;
    blmove_generic(c, LIST_TAIL, LIST_HEAD, deadline);
}

/* ---- the table -------------------------------------------------------------------------- */

#define W CMD_WRITE
#define R CMD_READONLY
#define M CMD_DENYOOM
#define F CMD_FAST
#define B (CMD_BLOCKING | CMD_NOSCRIPT)
#define LCMD(name, proc, arity, flags, summary)                                                                        \
    { name, proc, arity, flags, 1, 1, 1, "list", summary, 0, 0, 0, 0 }

command list_commands[] = {
    LCMD("lpush", lpush_command, -3, W | M | F,
         "Prepends one or more elements to a list. Creates the key if it doesn't exist."),
    LCMD("rpush", rpush_command, -3, W | M | F,
         "Appends one or more elements to a list. Creates the key if it doesn't exist."),
    LCMD("lpushx", lpushx_command, -3, W | M | F, "Prepends one or more elements to a list only when the list exists."),
    LCMD("rpushx", rpushx_command, -3, W | M | F, "Appends an element to a list only when the list exists."),
    LCMD("lpop", lpop_command, -2, W | F,
         "Returns the first elements in a list after removing it. Deletes the list if the last element was popped."),
    LCMD("rpop", rpop_command, -2, W | F,
         "Returns and removes the last elements of a list. Deletes the list if the last element was popped."),
    LCMD("llen", llen_command, 2, R | F, "Returns the length of a list."),
    LCMD("lrange", lrange_command, 4, R, "Returns a range of elements from a list."),
    LCMD("lindex", lindex_command, 3, R, "Returns an element from a list by its index."),
    LCMD("lset", lset_command, 4, W | M, "Sets the value of an element in a list by its index."),
    LCMD("linsert", linsert_command, 5, W | M, "Inserts an element before or after another element in a list."),
    LCMD("lrem", lrem_command, 4, W, "Removes elements from a list. Deletes the list if the last element was removed."),
    LCMD("ltrim", ltrim_command, 4, W,
         "Removes elements from both ends a list. Deletes the list if all elements were trimmed."),
    LCMD("lpos", lpos_command, -3, R, "Returns the index of matching elements in a list."),
    {"lmove", lmove_command, 5, W | M, 1, 2, 1, "list",
     "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last "
     "element was moved.",
     0, 0, 0, 0},
    {"rpoplpush", rpoplpush_command, 3, W | M, 1, 2, 1, "list",
     "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the "
     "last element was popped.",
     0, 0, 0, 0},
    {"lmpop", lmpop_command, -4, W | CMD_MOVABLEKEYS, 0, 0, 0, "list",
     "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", 0,
     0, 0, 0},
    {"blpop", blpop_command, -3, W | B, 1, -2, 1, "list",
     "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the "
     "list if the last element was popped.",
     0, 0, 0, 0},
    {"brpop", brpop_command, -3, W | B, 1, -2, 1, "list",
     "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the "
     "list if the last element was popped.",
     0, 0, 0, 0},
    {"blmove", blmove_command, 6, W | M | B, 1, 2, 1, "list",
     "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available "
     "otherwise. Deletes the list if the last element was moved.",
     0, 0, 0, 0},
    {"brpoplpush", brpoplpush_command, 4, W | M | B, 1, 2, 1, "list",
     "Pops an element from a list, pushes it to another list and returns it. Block until an element is available "
     "otherwise. Deletes the list if the last element was popped.",
     0, 0, 0, 0},
    {"blmpop", blmpop_command, -5, W | CMD_BLOCKING | CMD_MOVABLEKEYS, 0, 0, 0, "list",
     "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes "
     "the list if the last element was popped.",
     0, 0, 0, 0},
    {0},
};
