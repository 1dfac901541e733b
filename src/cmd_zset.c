/* cmd_zset.c — the sorted-set commands.
 *
 * Step 8 (commands layer). Owns: zset_commands[] — ZADD ZINCRBY ZREM
 * ZSCORE ZMSCORE ZCARD ZRANK ZREVRANK ZRANGE ZRANGESTORE ZRANGEBYSCORE
 * ZREVRANGE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX ZCOUNT ZLEXCOUNT
 * ZPOPMIN ZPOPMAX ZMPOP BZPOPMIN BZPOPMAX BZMPOP ZRANDMEMBER
 * ZREMRANGEBYSCORE ZREMRANGEBYRANK ZREMRANGEBYLEX ZSCAN — their argument
 * parsing and their replies. The data structure is src/zset.c; this file
 * never touches a node's insides. The set algebra (ZUNION, ZINTER, ZDIFF
 * and their STORE forms, ZINTERCARD) is cmd_zset_algebra.c; the blocking
 * pops block through blocked.c.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: src/t_zset.c (zaddGenericCommand, zremCommand,
 * zremrangeGenericCommand, zrangeGenericCommand and its result handler,
 * genericZrangebyrankCommand, genericZrangebyscoreCommand,
 * genericZrangebylexCommand, zcountCommand, zlexcountCommand,
 * zrankGenericCommand, genericZpopCommand, blockingGenericZpopCommand,
 * zmpopGenericCommand, zrandmemberWithCountCommand, zrangestoreCommand),
 * src/db.c (scanGenericCommand for ZSCAN). Replies and errors are
 * Valkey's; the differential suite checks them against Redis 7.0 and
 * lists where the two differ. Scores go out through reply_double: a RESP3
 * double, a bulk string in RESP2.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blocked.h"
#include "client.h"
#include "commands.h"
#include "db.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"
#include "zset.h"

/* ---- arguments ------------------------------------------------------------ */

/* 1 when s, after an optional sign, starts a hexadecimal float ("0x1p4"):
 * C's strtod reads those (and Redis 7.0 accepted them), but Valkey parses
 * scores with fast_float (valkey_strtod), which reads decimal only. */
static int is_hex_float(const char *s) {
    if (*s == '+' || *s == '-') s++;
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

/* A score (Valkey's getDoubleFromObjectOrReply; obj_get_double has the
 * rules). */
static int get_double_or_reply(client *c, const obj *o, double *out) {
    if (obj_get_double(o, out)) return 1;
    reply_error(c, ERR_NOT_FLOAT);
    return 0;
}

static int get_long_or_reply(client *c, const obj *o, long long *out) {
    if (obj_get_ll(o, out)) return 1;
    reply_error(c, ERR_NOT_INT);
    return 0;
}

/* Valkey's zslParseRange: "(" makes a bound exclusive; the rest goes to
 * strtod, which must stop at the terminating NUL (so "" reads as 0, as in
 * Valkey). 1 on success. */
static int parse_score_bound(const obj *o, double *v, int *ex) {
    const char *s = o->ptr;
    char *end;
    *ex = s[0] == '(';
    *v = strtod(s + *ex, &end);
    return end[0] == '\0' && !isnan(*v) && !is_hex_float(s + *ex);
}

static int parse_score_range_or_reply(client *c, const obj *min, const obj *max, zset_score_range *r) {
    if (parse_score_bound(min, &r->min, &r->minex) && parse_score_bound(max, &r->max, &r->maxex)) return 1;
    reply_error(c, "min or max is not a float");
    return 0;
}

/* Valkey's zslParseLexRangeItem: "[x" inclusive, "(x" exclusive, "-" and
 * "+" alone the infinities. The bound points into the argument. */
static int parse_lex_bound(const obj *o, zset_lex_bound *b) {
    const char *s = o->ptr;
    b->ptr = s + 1;
    b->len = o->len ? o->len - 1 : 0;
    switch (s[0]) {
    case '+': b->kind = ZLEX_PLUS_INF; return s[1] == '\0';
    case '-': b->kind = ZLEX_MINUS_INF; return s[1] == '\0';
    case '(': b->kind = ZLEX_EXCLUSIVE; return 1;
    case '[': b->kind = ZLEX_INCLUSIVE; return 1;
    default: return 0;
    }
}

static int parse_lex_range_or_reply(client *c, const obj *min, const obj *max, zset_lex_range *r) {
    if (parse_lex_bound(min, &r->min) && parse_lex_bound(max, &r->max)) return 1;
    reply_error(c, "min or max not valid string range item");
    return 0;
}

/* The sorted set at argv[1], looked up for reading or for writing: NULL
 * with `absent` sent when there is none (absent may be NULL: reply
 * nothing), NULL with WRONGTYPE sent when the key holds another type. */
typedef void absent_reply(client *c);
static zset *lookup_zset(client *c, int for_write, absent_reply *absent) {
    obj *o = for_write ? db_lookup_write(c->db, c->argv[1]) : db_lookup_read(c->db, c->argv[1]);
    if (!o) {
        if (absent) absent(c);
        return NULL;
    }
    if (o->type != OBJ_ZSET) {
        reply_error(c, ERR_WRONGTYPE);
        return NULL;
    }
    return zset_of(o);
}

static void reply_zero(client *c) { reply_long_long(c, 0); }
static void reply_empty_array(client *c) { reply_array_len(c, 0); }

/* After a removal: a sorted set left empty is deleted with its key. */
static void delete_if_empty(client *c, zset *z) {
    if (zset_length(z) == 0) db_delete(c->db, c->argv[1]);
}

static void reply_member(client *c, const zset *z, const zset_node *n) {
    size_t len;
    const char *m = zset_node_member(z, n, &len);
    reply_bulk_buf(c, m, len);
}

/* ---- ZADD ZINCRBY ------------------------------------------------------------------- */

/*@ zadd-command */
/* ZADD's options, from argv[2] on, into *flags (ZADD_IN_*) and *ch (CH:
 * reply with the changed count); returns where they end, the index of the
 * first score. */
static int zadd_parse_options(client *c, int *flags, int *ch) {
    int i = 2;
    for (; i < c->argc; i++) {
        const obj *o = c->argv[i];
        if (arg_is(o, "nx"))
            *flags |= ZADD_IN_NX;
        else if (arg_is(o, "xx"))
            *flags |= ZADD_IN_XX;
        else if (arg_is(o, "ch"))
            *ch = 1;
        else if (arg_is(o, "incr"))
            *flags |= ZADD_IN_INCR;
        else if (arg_is(o, "gt"))
            *flags |= ZADD_IN_GT;
        else if (arg_is(o, "lt"))
            *flags |= ZADD_IN_LT;
        else
            break;
    }
    return i;
}

/* The options together and the count of arguments after them (args, the
 * score-member pairs' words), checked in Valkey's order with its errors:
 * 1, or 0 with the error sent. */
static int zadd_check_or_reply(client *c, int flags, int args) {
    int incr = flags & ZADD_IN_INCR, nx = flags & ZADD_IN_NX, xx = flags & ZADD_IN_XX;
    int gt = flags & ZADD_IN_GT, lt = flags & ZADD_IN_LT;
    if (args % 2 || !args) {
        reply_error(c, ERR_SYNTAX);
        return 0;
    }
    if (nx && xx) {
        reply_error(c, "XX and NX options at the same time are not compatible");
        return 0;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        reply_error(c, "GT, LT, and/or NX options at the same time are not compatible");
        return 0;
    }
    if (incr && args > 2) {
        reply_error(c, "INCR option supports a single increment-element pair");
        return 0;
    }
    return 1;
}

/* What ZADD did, for its reply: members added, scores changed, members
 * the options let through, and the last score (ZINCRBY's reply). */
typedef struct zadd_counts {
    long long added, updated, processed;
    double score;
} zadd_counts;

/* Adds or updates the n pairs from argv[scoreidx] on, whose scores are
 * already parsed, counting into *k: 1, or 0 when a score would become NaN
 * (INCR of an infinity by its opposite); the pairs before it stay. */
static int zadd_pairs(client *c, zset *z, const double *scores, int scoreidx, int n, int flags, zadd_counts *k) {
    for (int j = 0; j < n; j++) {
        const obj *m = c->argv[scoreidx + j * 2 + 1];
        int out;
        double newscore = scores[j];
        if (!zset_add(z, scores[j], m->ptr, m->len, flags, &out, &newscore)) return 0;
        if (out & ZADD_OUT_ADDED) k->added++;
        if (out & ZADD_OUT_UPDATED) k->updated++;
        if (!(out & ZADD_OUT_NOP)) k->processed++;
        k->score = newscore;
    }
    return 1;
}

static void zadd_generic(client *c, int flags) {
    int ch = 0, scoreidx = zadd_parse_options(c, &flags, &ch);
    if (!zadd_check_or_reply(c, flags, c->argc - scoreidx)) return;
    int elements = (c->argc - scoreidx) / 2;
    /* Every score is checked before anything changes. */
    double *scores = zmalloc(sizeof(double) * (size_t)elements);
    for (int j = 0; j < elements; j++) {
        if (!get_double_or_reply(c, c->argv[scoreidx + j * 2], &scores[j])) goto done;
    }

    obj *o = db_lookup_write(c->db, c->argv[1]);
    if (o && o->type != OBJ_ZSET) {
        reply_error(c, ERR_WRONGTYPE);
        goto done;
    }
    if (!o && !(flags & ZADD_IN_XX)) { /* XX never creates: nothing to update */
        o = zset_object_create();
        db_add(c->db, c->argv[1], o);
    }
    zadd_counts k = {0, 0, 0, 0};
    int ok = !o || zadd_pairs(c, zset_of(o), scores, scoreidx, elements, flags, &k);
    /* Valkey: only a member added or a score changed is a change. */
    if (k.added || k.updated) db_signal_modified(c->db, c->argv[1]);
    if (!ok)
        reply_error(c, "resulting score is not a number (NaN)");
    else if (flags & ZADD_IN_INCR) {
        if (k.processed)
            reply_double(c, k.score);
        else
            reply_null(c);
    } else {
        reply_long_long(c, ch ? k.added + k.updated : k.added);
    }
done:
    zfree(scores);
}
/*@ end */

static void zadd_command(client *c) { zadd_generic(c, 0); }
static void zincrby_command(client *c) { zadd_generic(c, ZADD_IN_INCR); }

/* ---- ZREM ZREMRANGEBY* --------------------------------------------------------------- */

static void zrem_command(client *c) {
    zset *z = lookup_zset(c, 1, reply_zero);
    if (!z) return;
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) {
        deleted += zset_delete(z, c->argv[j]->ptr, c->argv[j]->len);
        if (zset_length(z) == 0) break; /* the key goes; the rest cannot be there */
    }
    delete_if_empty(c, z);
    if (deleted) db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, deleted);
}

/* Clamps [start, end] (negative counts from the end) to a set of length
 * len. 0 when the range is empty. */
static int clamp_rank_range(long long *start, long long *end, long long len) {
    if (*start < 0) *start += len;
    if (*end < 0) *end += len;
    if (*start < 0) *start = 0;
    if (*start > *end || *start >= len) return 0;
    if (*end >= len) *end = len - 1;
    return 1;
}

enum range_type { RANGE_RANK, RANGE_SCORE, RANGE_LEX, RANGE_AUTO };

static void zremrange_generic(client *c, enum range_type type) {
    long long start = 0, end = 0;
    zset_score_range sr;
    zset_lex_range lr;
    /* The range is checked before the key is looked up (Valkey's order). */
    if (type == RANGE_RANK) {
        if (!get_long_or_reply(c, c->argv[2], &start) || !get_long_or_reply(c, c->argv[3], &end)) return;
    } else if (type == RANGE_SCORE) {
        if (!parse_score_range_or_reply(c, c->argv[2], c->argv[3], &sr)) return;
    } else if (!parse_lex_range_or_reply(c, c->argv[2], c->argv[3], &lr)) {
        return;
    }
    zset *z = lookup_zset(c, 1, reply_zero);
    if (!z) return;
    size_t deleted;
    if (type == RANGE_RANK) {
        if (!clamp_rank_range(&start, &end, (long long)zset_length(z))) {
            reply_long_long(c, 0);
            return;
        }
        deleted = zset_delete_rank_range(z, (size_t)start, (size_t)end);
    } else if (type == RANGE_SCORE) {
        deleted = zset_delete_score_range(z, &sr);
    } else {
        deleted = zset_delete_lex_range(z, &lr);
    }
    delete_if_empty(c, z);
    if (deleted) db_signal_modified(c->db, c->argv[1]);
    reply_long_long(c, (long long)deleted);
}

static void zremrangebyrank_command(client *c) { zremrange_generic(c, RANGE_RANK); }
static void zremrangebyscore_command(client *c) { zremrange_generic(c, RANGE_SCORE); }
static void zremrangebylex_command(client *c) { zremrange_generic(c, RANGE_LEX); }

/* ---- ZRANGE and its older forms ------------------------------------------------------------ */

/* How a range's members go out (Valkey: zrange_result_handler, whose two
 * kinds are here one struct): to a client, a flat member, score, member,
 * score... array in RESP2; in RESP3 with scores, an array of [member,
 * score] pairs. The length is given first when known, else reserved and
 * filled in at the end. Or, for ZRANGESTORE, into `store`, a new set the
 * caller then puts under its key: the same walk, another sink. */
typedef struct range_reply {
    client *c;
    const zset *z;
    int withscores;
    zset *store; /* non-NULL: members go here, and nothing to the client */
    void *deferred;
    long count, known; /* emitted so far; the length given first (-1: deferred) */
} range_reply;

static void range_begin(range_reply *r, long known) {
    r->count = 0;
    r->known = known;
    r->deferred = NULL;
    if (r->store) return;
    if (known < 0)
        r->deferred = reply_deferred_len(r->c);
    else
        reply_array_len(r->c, r->withscores && r->c->resp == 2 ? known * 2 : known);
}

static void range_emit(range_reply *r, const zset_node *n) {
    r->count++;
    if (r->store) { /* the source's members are distinct, so none is in the new set yet */
        size_t len;
        const char *m = zset_node_member(r->z, n, &len);
        zset_insert_new(r->store, zset_node_score(r->z, n), m, len);
        return;
    }
    if (r->withscores && r->c->resp > 2) reply_array_len(r->c, 2);
    reply_member(r->c, r->z, n);
    if (r->withscores) reply_double(r->c, zset_node_score(r->z, n));
}

static void range_end(range_reply *r) {
    assert(r->known < 0 || r->count == r->known); /* a length given first must be the truth */
    if (r->deferred)
        reply_set_deferred_array_len(r->c, r->deferred, r->withscores && r->c->resp == 2 ? r->count * 2 : r->count);
}

static void range_by_rank(range_reply *r, zset *z, long long start, long long end, int reverse) {
    long long len = (long long)zset_length(z);
    if (!clamp_rank_range(&start, &end, len)) {
        range_begin(r, 0);
        return;
    }
    long long n = end - start + 1;
    range_begin(r, (long)n);
    zset_node *node = zset_by_rank(z, (size_t)(reverse ? len - 1 - start : start));
    for (; n-- && node; node = reverse ? zset_prev(z, node) : zset_next(z, node)) range_emit(r, node);
}

/* LIMIT's offset counted from n, the range's first node in the reply's
 * direction: a jump by rank, O(log n) however large the offset (Valkey's
 * zslNthInRange does the same); the caller's loop stops where the range
 * ends. A negative offset gives an empty reply, as in Redis 7.0 and for
 * Valkey's small (listpack) sets, which walk the offset node by node and
 * run off the end. */
static zset_node *skip_offset(zset *z, zset_node *n, long long offset, int reverse) {
    if (offset < 0) return NULL;
    if (!n || offset == 0) return n;
    long long len = (long long)zset_length(z), rank = (long long)zset_node_rank(z, n);
    if (offset >= len) return NULL;
    rank = reverse ? rank - offset : rank + offset;
    return rank >= 0 && rank < len ? zset_by_rank(z, (size_t)rank) : NULL;
}

/*@ range-count */
/* How many members a by-score or by-lex range's reply holds, from the
 * ranks of the range's two ends (O(log n) each) less LIMIT's offset, at
 * most its count (negative: no limit). Knowing it, the reply gives its
 * length first and its members go to the client's buffer: a deferred
 * length would send every byte after it to a fresh 16 KB block
 * (reply.c reply-deferred), one per pipelined request, which the
 * allocator takes from the kernel and gives back every round. -1 where
 * the ends disagree (one found without the other, or, which the searches
 * in zset.c never give but costs nothing to refuse, the first after the
 * last): the count is then not known, and the length is deferred. */
static long range_count(zset *z, zset_node *first, zset_node *last, long long offset, long long limit) {
    if (offset < 0 || (!first && !last)) return 0;
    if (!first || !last) return -1;
    long long a = (long long)zset_node_rank(z, first), b = (long long)zset_node_rank(z, last);
    if (a > b) return -1;
    long long n = b - a + 1 - offset;
    if (n < 0) n = 0;
    if (limit >= 0 && n > limit) n = limit;
    return (long)n;
}
/*@ end */

static void range_by_score(range_reply *r, zset *z, const zset_score_range *sr, long long offset, long long limit,
                           int reverse) {
    if (offset > 0 && offset >= (long long)zset_length(z)) { /* Valkey returns at once */
        range_begin(r, 0);
        return;
    }
    zset_node *first = zset_first_in_score_range(z, sr), *last = zset_last_in_score_range(z, sr);
    long known = range_count(z, first, last, offset, limit);
    range_begin(r, known);
    if (known >= 0) limit = known; /* the walk sends no more than the length said */
    zset_node *n = reverse ? last : first;
    for (n = skip_offset(z, n, offset, reverse); n && limit--; n = reverse ? zset_prev(z, n) : zset_next(z, n)) {
        double s = zset_node_score(z, n);
        if (reverse ? !zset_score_gte_min(s, sr) : !zset_score_lte_max(s, sr)) break;
        range_emit(r, n);
    }
    range_end(r);
}

/* A lex range is defined over members of one score, where the set's
 * order is the members' order. Over several scores it is not, the reply
 * is unspecified (Valkey's documentation says so), and the two ends found
 * by search need not bound what a walk tested member by member sends: it
 * may stop short of the last end, or, carried past the last end by
 * LIMIT's offset, go on outside the range. So the length goes first only
 * for ends of one score (then every member between them is in the
 * range), and the walk then takes exactly that many; otherwise it is
 * deferred, and the walk is like Valkey's: from the end found, testing
 * each member against the far bound. (Valkey finds a small set's start
 * by a linear scan, soloist's dense layout by a search, so over several
 * scores the members sent may differ: the reply is unspecified there.) */
static long lex_range_count(zset *z, zset_node *first, zset_node *last, long long offset, long long limit) {
    if (first && last && zset_node_score(z, first) != zset_node_score(z, last)) return -1;
    return range_count(z, first, last, offset, limit);
}

static void range_by_lex(range_reply *r, zset *z, const zset_lex_range *lr, long long offset, long long limit,
                         int reverse) {
    zset_node *first = zset_first_in_lex_range(z, lr), *last = zset_last_in_lex_range(z, lr);
    long known = lex_range_count(z, first, last, offset, limit);
    range_begin(r, known);
    if (known >= 0) limit = known; /* LIMIT's offset must not carry the walk past the last end */
    zset_node *n = reverse ? last : first;
    for (n = skip_offset(z, n, offset, reverse); n && limit--; n = reverse ? zset_prev(z, n) : zset_next(z, n)) {
        size_t len;
        const char *m = zset_node_member(z, n, &len);
        if (reverse ? !zset_lex_gte_min(m, len, lr) : !zset_lex_lte_max(m, len, lr)) break;
        range_emit(r, n);
    }
    range_end(r);
}

/* ZRANGE alone takes its direction from REV; the others fix it. */
#define DIRECTION_AUTO (-1)

/* A ZRANGE-family command's arguments, parsed. */
typedef struct range_args {
    enum range_type type;
    int reverse, withscores;
    long long start, end, offset, limit; /* start, end: by rank; offset, limit: LIMIT */
    zset_score_range sr;
    zset_lex_range lr;
} range_args;

/* Parses <src> <min> <max> [BYSCORE|BYLEX] [REV] [WITHSCORES] [LIMIT
 * offset count] with the source key at argv[src] (Valkey:
 * zrangeGenericCommand's steps 1 and 2): 1, or 0 with the error replied.
 * ZRANGESTORE (store) takes no WITHSCORES. */
static int parse_range_args(client *c, int src, int store, enum range_type type, int direction, range_args *a) {
    a->withscores = 0, a->offset = 0, a->limit = -1;
    for (int j = src + 3; j < c->argc; j++) {
        int left = c->argc - j - 1;
        if (!store && arg_is(c->argv[j], "withscores")) {
            a->withscores = 1;
        } else if (arg_is(c->argv[j], "limit") && left >= 2) {
            if (!get_long_or_reply(c, c->argv[j + 1], &a->offset) || !get_long_or_reply(c, c->argv[j + 2], &a->limit))
                return 0;
            j += 2;
        } else if (direction == DIRECTION_AUTO && arg_is(c->argv[j], "rev")) {
            direction = 1;
        } else if (type == RANGE_AUTO && arg_is(c->argv[j], "bylex")) {
            type = RANGE_LEX;
        } else if (type == RANGE_AUTO && arg_is(c->argv[j], "byscore")) {
            type = RANGE_SCORE;
        } else {
            reply_error(c, ERR_SYNTAX);
            return 0;
        }
    }
    a->type = type == RANGE_AUTO ? RANGE_RANK : type;
    a->reverse = direction == 1;
    if ((a->offset != 0 || a->limit != -1) && a->type == RANGE_RANK) {
        reply_error(c, "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return 0;
    }
    if (a->withscores && a->type == RANGE_LEX) {
        reply_error(c, "syntax error, WITHSCORES not supported in combination with BYLEX");
        return 0;
    }
    /* Reversed score and lex ranges are written max first. */
    const obj *min = c->argv[src + 1], *max = c->argv[src + 2];
    if (a->reverse && a->type != RANGE_RANK) {
        min = c->argv[src + 2];
        max = c->argv[src + 1];
    }
    if (a->type == RANGE_RANK) return get_long_or_reply(c, min, &a->start) && get_long_or_reply(c, max, &a->end);
    if (a->type == RANGE_SCORE) return parse_score_range_or_reply(c, min, max, &a->sr);
    return parse_lex_range_or_reply(c, min, max, &a->lr);
}

static void range_run(range_reply *r, zset *z, const range_args *a) {
    if (a->type == RANGE_RANK)
        range_by_rank(r, z, a->start, a->end, a->reverse);
    else if (a->type == RANGE_SCORE)
        range_by_score(r, z, &a->sr, a->offset, a->limit, a->reverse);
    else
        range_by_lex(r, z, &a->lr, a->offset, a->limit, a->reverse);
}

/*@ zrange-generic */
/* ZRANGE key min max [BYSCORE|BYLEX] [REV] [WITHSCORES] [LIMIT offset
 * count], and the older commands that fix the type or the direction. */
static void zrange_generic(client *c, enum range_type type, int direction) {
    range_args a;
    if (!parse_range_args(c, 1, 0, type, direction, &a)) return;
    zset *z = lookup_zset(c, 0, reply_empty_array);
    if (!z) return;
    range_reply r = {.c = c, .z = z, .withscores = a.withscores};
    range_run(&r, z, &a);
}
/*@ end */

/*@ zrangestore */
/* ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
 * (Valkey: zrangestoreCommand, with zrange_result_handler's store sink):
 * ZRANGE's walk into a new set, which replaces dst's value and drops its TTL;
 * an empty range (or a missing src) deletes dst instead. Either way the reply
 * is the new set's size. dst may be src: the new set is whole before the old
 * one is let go. */
static void zrangestore_command(client *c) {
    range_args a;
    if (!parse_range_args(c, 2, 1, RANGE_AUTO, DIRECTION_AUTO, &a)) return;
    obj *src = db_lookup_read(c->db, c->argv[2]);
    if (src && src->type != OBJ_ZSET) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    obj *dst = zset_object_create();
    if (src) {
        range_reply r = {.c = c, .z = zset_of(src), .withscores = 1, .store = zset_of(dst)};
        range_run(&r, zset_of(src), &a);
    }
    long long n = (long long)zset_length(zset_of(dst));
    if (n) {
        db_set_key(c->db, c->argv[1], dst, 0);
        db_signal_modified(c->db, c->argv[1]);
    } else {
        obj_decr_ref(dst);
        if (db_delete(c->db, c->argv[1])) db_signal_modified(c->db, c->argv[1]);
    }
    reply_long_long(c, n);
}
/*@ end */

static void zrange_command(client *c) { zrange_generic(c, RANGE_AUTO, DIRECTION_AUTO); }
static void zrevrange_command(client *c) { zrange_generic(c, RANGE_RANK, 1); }
static void zrangebyscore_command(client *c) { zrange_generic(c, RANGE_SCORE, 0); }
static void zrevrangebyscore_command(client *c) { zrange_generic(c, RANGE_SCORE, 1); }
static void zrangebylex_command(client *c) { zrange_generic(c, RANGE_LEX, 0); }
static void zrevrangebylex_command(client *c) { zrange_generic(c, RANGE_LEX, 1); }

/* ---- ZCOUNT ZLEXCOUNT ZCARD ZSCORE ZMSCORE ZRANK ----------------------------------------------- */

/* Members from first to last inclusive, by rank: O(log n), no walk. */
static long long count_between(zset *z, const zset_node *first, const zset_node *last) {
    if (!first || !last) return 0;
    return (long long)(zset_node_rank(z, last) - zset_node_rank(z, first)) + 1;
}

static void zcount_command(client *c) {
    zset_score_range sr;
    if (!parse_score_range_or_reply(c, c->argv[2], c->argv[3], &sr)) return;
    zset *z = lookup_zset(c, 0, reply_zero);
    if (z) reply_long_long(c, count_between(z, zset_first_in_score_range(z, &sr), zset_last_in_score_range(z, &sr)));
}

static void zlexcount_command(client *c) {
    zset_lex_range lr;
    if (!parse_lex_range_or_reply(c, c->argv[2], c->argv[3], &lr)) return;
    zset *z = lookup_zset(c, 0, reply_zero);
    if (z) reply_long_long(c, count_between(z, zset_first_in_lex_range(z, &lr), zset_last_in_lex_range(z, &lr)));
}

static void zcard_command(client *c) {
    zset *z = lookup_zset(c, 0, reply_zero);
    if (z) reply_long_long(c, (long long)zset_length(z));
}

static void zscore_command(client *c) {
    zset *z = lookup_zset(c, 0, reply_null);
    double score;
    if (!z) return;
    if (zset_score(z, c->argv[2]->ptr, c->argv[2]->len, &score))
        reply_double(c, score);
    else
        reply_null(c);
}

static void zmscore_command(client *c) {
    obj *o = db_lookup_read(c->db, c->argv[1]);
    if (o && o->type != OBJ_ZSET) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double score;
        if (o && zset_score(zset_of(o), c->argv[j]->ptr, c->argv[j]->len, &score))
            reply_double(c, score);
        else
            reply_null(c);
    }
}

static void zrank_generic(client *c, int reverse) {
    int withscore = 0;
    if (c->argc > 4) {
        reply_error_arity(c);
        return;
    }
    if (c->argc == 4) {
        if (!arg_is(c->argv[3], "withscore")) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        withscore = 1;
    }
    zset *z = lookup_zset(c, 0, withscore ? reply_null_array : reply_null);
    if (!z) return;
    double score;
    long rank = zset_rank(z, c->argv[2]->ptr, c->argv[2]->len, reverse, &score);
    if (rank < 0) {
        if (withscore)
            reply_null_array(c);
        else
            reply_null(c);
        return;
    }
    if (withscore) reply_array_len(c, 2);
    reply_long_long(c, rank);
    if (withscore) reply_double(c, score);
}

static void zrank_command(client *c) { zrank_generic(c, 0); }
static void zrevrank_command(client *c) { zrank_generic(c, 1); }

/* ---- ZPOPMIN ZPOPMAX ZMPOP BZPOPMIN BZPOPMAX BZMPOP ------------------------------------------------ */

/* Pops up to count members (-1: one, and a flat reply) from z, the sorted
 * set at key, and replies (Valkey: genericZpopCommand's reply shapes).
 * emitkey puts the key first: flat [key, m, s] (BZPOPMIN), or nested
 * [key, [[m, s], ...]] (ZMPOP, BZMPOP). Deletes the key once empty. */
static void zpop_reply(client *c, obj *key, zset *z, int max, int emitkey, long long count, int nested) {
    if (count == -1) count = 1;
    long long n = count > (long long)zset_length(z) ? (long long)zset_length(z) : count, popped = n;
    if (!emitkey) {
        reply_array_len(c, nested ? n : n * 2);
    } else if (!nested) {
        reply_array_len(c, n * 2 + 1);
        reply_bulk(c, key);
    } else {
        reply_array_len(c, 2);
        reply_bulk(c, key);
        reply_array_len(c, n);
    }
    while (n--) {
        zset_node *node = max ? zset_last(z) : zset_first(z);
        size_t len;
        const char *m = zset_node_member(z, node, &len);
        if (nested) reply_array_len(c, 2);
        reply_bulk_buf(c, m, len);
        reply_double(c, zset_node_score(z, node));
        zset_delete(z, m, len); /* node and m are gone from here */
    }
    if (popped == 0) return;
    if (zset_length(z) == 0) db_delete(c->db, key);
    db_signal_modified(c->db, key);
}

static void zpop_generic(client *c, int max) {
    long long count = -1; /* not given: one member, flat reply */
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3) {
        /* Valkey's getPositiveLongFromObjectOrReply: one message for
         * "not a number" and "negative". */
        if (!obj_get_ll(c->argv[2], &count) || count < 0) {
            reply_error(c, "value is out of range, must be positive");
            return;
        }
    }
    /* RESP3 with a count: an array of [member, score] pairs. */
    int nested = c->resp > 2 && count != -1;
    obj *o = db_lookup_write(c->db, c->argv[1]);
    if (o && o->type != OBJ_ZSET) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    if (!o || count == 0) {
        reply_array_len(c, 0);
        return;
    }
    zpop_reply(c, c->argv[1], zset_of(o), max, 0, count, nested);
}

/* The first of keys that holds a sorted set (Valkey: the key loop of
 * genericZpopCommand and blockingGenericZpopCommand): 1 with *key and *z
 * set; 0 with nothing found; -1 with WRONGTYPE replied for a key of
 * another type met first. An empty sorted set is skipped like an absent
 * key (none stays in the keyspace, but Valkey checks). */
static int first_zset(client *c, obj **keys, int nkeys, obj **key, zset **z) {
    for (int i = 0; i < nkeys; i++) {
        obj *o = db_lookup_write(c->db, keys[i]);
        if (!o) continue;
        if (o->type != OBJ_ZSET) {
            reply_error(c, ERR_WRONGTYPE);
            return -1;
        }
        if (zset_length(zset_of(o)) == 0) continue;
        *key = keys[i];
        *z = zset_of(o);
        return 1;
    }
    return 0;
}

/* The blocking pops (Valkey: blockingGenericZpopCommand): pop from the
 * first non-empty sorted set among keys, or block on all of them, or,
 * inside MULTI, reply the null a timeout would (a transaction never
 * blocks). The timeout is read first, before any key. */
static void bzpop_generic(client *c, obj **keys, int nkeys, int max, int timeout_idx, long long count, int nested) {
    long long deadline;
    obj *key;
    zset *z;
    if (!blocked_timeout_or_reply(c, c->argv[timeout_idx], &deadline)) return;
    int found = first_zset(c, keys, nkeys, &key, &z);
    if (found < 0) return;
    if (found) {
        zpop_reply(c, key, z, max, 1, count, nested);
    } else if (c->flags & CLIENT_MULTI) {
        reply_null_array(c);
    } else {
        blocked_block_for_keys(c, keys, nkeys, deadline, OBJ_ZSET);
    }
}

static void bzpopmin_command(client *c) { bzpop_generic(c, c->argv + 1, c->argc - 2, 0, c->argc - 1, -1, 0); }
static void bzpopmax_command(client *c) { bzpop_generic(c, c->argv + 1, c->argc - 2, 1, c->argc - 1, -1, 0); }

/* Valkey's getRangeLongFromObjectOrReply with a message of its own: one
 * error for "not a number" and "out of range". */
static int get_positive_or_reply(client *c, const obj *o, long long *out, const char *msg) {
    if (obj_get_ll(o, out) && *out >= 1 && *out <= LONG_MAX) return 1;
    reply_error(c, msg);
    return 0;
}

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] and BZMPOP timeout
 * numkeys ... (Valkey: zmpopGenericCommand). Checked in Valkey's order:
 * numkeys, then MIN|MAX, then COUNT, and only then BZMPOP's timeout. */
static void zmpop_generic(client *c, int numkeys_idx, int blocking) {
    long long numkeys, count = -1;
    if (!get_positive_or_reply(c, c->argv[numkeys_idx], &numkeys, "numkeys should be greater than 0")) return;
    if (numkeys >= c->argc - numkeys_idx - 1) { /* MIN|MAX would be past the end */
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int where_idx = numkeys_idx + (int)numkeys + 1;
    int max = arg_is(c->argv[where_idx], "max");
    if (!max && !arg_is(c->argv[where_idx], "min")) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (count == -1 && arg_is(c->argv[j], "count") && j + 1 < c->argc) {
            if (!get_positive_or_reply(c, c->argv[++j], &count, "count should be greater than 0")) return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (count == -1) count = 1;
    obj **keys = c->argv + numkeys_idx + 1;
    if (blocking) {
        bzpop_generic(c, keys, (int)numkeys, max, 1, count, 1);
        return;
    }
    obj *key;
    zset *z;
    int found = first_zset(c, keys, (int)numkeys, &key, &z);
    if (found > 0) zpop_reply(c, key, z, max, 1, count, 1);
    if (found == 0) reply_null_array(c);
}

static void zmpop_command(client *c) { zmpop_generic(c, 1, 0); }
static void bzmpop_command(client *c) { zmpop_generic(c, 2, 1); }

static void zpopmin_command(client *c) { zpop_generic(c, 0); }
static void zpopmax_command(client *c) { zpop_generic(c, 1); }

/* ---- ZRANDMEMBER ------------------------------------------------------------------------------------- */

/* A set of distinct nodes for ZRANDMEMBER's sampling: a hashtable whose
 * entries are the node pointers themselves. */
static uint64_t pointer_hash(const void *key) { return hashtable_gen_hash(&key, sizeof(key)); }
static const hashtable_type node_set_type = {.hash_key = pointer_hash};

/*@ zrandmember-count */
/* Valkey's zrandmemberWithCountCommand, case by case: a negative count
 * may repeat members; a count at least the set's size returns the whole
 * set, highest score first; otherwise `count` distinct members, chosen by
 * shuffling when they are most of the set and by drawing until enough
 * distinct ones came up when they are few. */
static void zrandmember_with_count(client *c, long long count, int withscores) {
    zset *z = lookup_zset(c, 0, reply_empty_array);
    if (!z) return;
    range_reply r = {.c = c, .z = z, .withscores = withscores};
    long long size = (long long)zset_length(z);
    if (count == 0) {
        reply_array_len(c, 0);
        return;
    }
    if (count < 0) { /* repeats allowed: count independent draws */
        range_begin(&r, (long)-count);
        for (long long i = 0; i < -count; i++) range_emit(&r, zset_random(z));
        return;
    }
    if (count >= size) { /* from the highest: Valkey's zuiNext walks a sorted set backwards */
        range_begin(&r, (long)size);
        for (zset_node *n = zset_last(z); n; n = zset_prev(z, n)) range_emit(&r, n);
        return;
    }
    range_begin(&r, (long)count);
    if (count * 3 > size) { /* most of the set: a partial Fisher-Yates shuffle */
        zset_node **all = zmalloc(sizeof(*all) * (size_t)size);
        size_t i = 0;
        for (zset_node *n = zset_first(z); n; n = zset_next(z, n)) all[i++] = n;
        for (long long k = 0; k < count; k++) {
            long long pick = k + (long long)((unsigned long long)random() % (unsigned long long)(size - k));
            zset_node *t = all[k];
            all[k] = all[pick];
            all[pick] = t;
            range_emit(&r, all[k]);
        }
        zfree(all);
        return;
    }
    hashtable *seen = hashtable_create(&node_set_type); /* a few: draw until count are distinct */
    while ((long long)hashtable_size(seen) < count) {
        zset_node *n = zset_random(z);
        if (hashtable_add(seen, n)) range_emit(&r, n);
    }
    hashtable_release(seen);
}
/*@ end */

static void zrandmember_command(client *c) {
    if (c->argc >= 3) {
        long long count;
        if (!get_long_or_reply(c, c->argv[2], &count)) return;
        if (count < -LLONG_MAX) {
            reply_error_format(c, "value is out of range, value must between %lld and %lld", -LLONG_MAX, LLONG_MAX);
            return;
        }
        if (c->argc > 4 || (c->argc == 4 && !arg_is(c->argv[3], "withscores"))) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        int withscores = c->argc == 4;
        if (withscores && (count < -LLONG_MAX / 2 || count > LLONG_MAX / 2)) {
            reply_error(c, "value is out of range");
            return;
        }
        zrandmember_with_count(c, count, withscores);
        return;
    }
    zset *z = lookup_zset(c, 0, reply_null);
    if (z) reply_member(c, z, zset_random(z));
}

/* ---- ZSCAN -------------------------------------------------------------------------------------------- */

typedef struct scan_batch {
    const zset_node **v;
    size_t n, cap;
} scan_batch;

static void scan_collect(void *privdata, const zset_node *n) {
    scan_batch *b = privdata;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->v = zrealloc(b->v, b->cap * sizeof(*b->v));
    }
    b->v[b->n++] = n;
}

/* ZSCAN's own option, NOSCORES (commands_scan_own_fn). */
static int noscores_option(client *c, obj *const *argv, int n, void *noscores) {
    (void)c;
    (void)n;
    if (!arg_is(argv[0], "noscores")) return 0;
    *(int *)noscores = 1;
    return 1;
}

/* ZSCAN key cursor [MATCH pattern] [COUNT count] [NOSCORES]. Scores go
 * out as bulk strings in both protocols, as SCAN's replies are flat. */
static void zscan_command(client *c) {
    unsigned long long cursor;
    long long count = 10;
    const obj *pat = NULL;
    int noscores = 0;
    if (!commands_scan_cursor_or_reply(c, c->argv[2], &cursor)) return;
    zset *z = lookup_zset(c, 0, commands_reply_empty_scan);
    if (!z) return;
    if (!commands_scan_options_or_reply(c, c->argv + 3, c->argc - 3, &count, &pat, noscores_option, &noscores)) return;
    /* The scan runs to the end of its bucket visits before any reply, and
     * nothing changes the set meanwhile, so the node pointers hold. */
    scan_batch b = {0};
    long long max_buckets = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = zset_scan(z, (size_t)cursor, scan_collect, &b);
    } while (cursor && max_buckets-- && b.n < (unsigned long long)count);

    size_t kept = 0;
    for (size_t i = 0; i < b.n; i++) {
        size_t len;
        const char *m = zset_node_member(z, b.v[i], &len);
        if (!pat || util_string_match_len(pat->ptr, pat->len, m, len, 0)) b.v[kept++] = b.v[i];
    }
    char buf[128];
    commands_reply_scan_header(c, cursor, (long)(noscores ? kept : kept * 2));
    for (size_t i = 0; i < kept; i++) {
        reply_member(c, z, b.v[i]);
        if (!noscores) {
            size_t n = util_d_to_string(buf, sizeof(buf), zset_node_score(z, b.v[i]));
            reply_bulk_buf(c, buf, n);
        }
    }
    zfree(b.v);
}

/* ---- the table ---------------------------------------------------------------------------------------- */

#define W CMD_WRITE
#define R CMD_READONLY
#define M CMD_DENYOOM
#define F CMD_FAST
#define ZCMD(name, proc, arity, flags, summary)                                                                        \
    { name, proc, arity, flags, 1, 1, 1, "sorted-set", summary, 0, 0, 0, 0 }

command zset_commands[] = {
    ZCMD("zadd", zadd_command, -4, W | M | F,
         "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist."),
    ZCMD("zincrby", zincrby_command, 4, W | M | F, "Increments the score of a member in a sorted set."),
    ZCMD("zrem", zrem_command, -3, W | F,
         "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed."),
    ZCMD("zremrangebyrank", zremrangebyrank_command, 4, W,
         "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were "
         "removed."),
    ZCMD("zremrangebyscore", zremrangebyscore_command, 4, W,
         "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were "
         "removed."),
    ZCMD("zremrangebylex", zremrangebylex_command, 4, W,
         "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were "
         "removed."),
    ZCMD("zrange", zrange_command, -4, R, "Returns members in a sorted set within a range of indexes."),
    {"zrangestore", zrangestore_command, -5, W | M, 1, 2, 1, "sorted-set",
     "Stores a range of members from sorted set in a key.", 0, 0, 0, 0},
    ZCMD("zrevrange", zrevrange_command, -4, R,
         "Returns members in a sorted set within a range of indexes in reverse order."),
    ZCMD("zrangebyscore", zrangebyscore_command, -4, R, "Returns members in a sorted set within a range of scores."),
    ZCMD("zrevrangebyscore", zrevrangebyscore_command, -4, R,
         "Returns members in a sorted set within a range of scores in reverse order."),
    ZCMD("zrangebylex", zrangebylex_command, -4, R, "Returns members in a sorted set within a lexicographical range."),
    ZCMD("zrevrangebylex", zrevrangebylex_command, -4, R,
         "Returns members in a sorted set within a lexicographical range in reverse order."),
    ZCMD("zcount", zcount_command, 4, R | F,
         "Returns the count of members in a sorted set that have scores within a range."),
    ZCMD("zlexcount", zlexcount_command, 4, R | F,
         "Returns the number of members in a sorted set within a lexicographical range."),
    ZCMD("zcard", zcard_command, 2, R | F, "Returns the number of members in a sorted set."),
    ZCMD("zscore", zscore_command, 3, R | F, "Returns the score of a member in a sorted set."),
    ZCMD("zmscore", zmscore_command, -3, R | F, "Returns the score of one or more members in a sorted set."),
    ZCMD("zrank", zrank_command, -3, R | F,
         "Returns the index of a member in a sorted set ordered by ascending scores."),
    ZCMD("zrevrank", zrevrank_command, -3, R | F,
         "Returns the index of a member in a sorted set ordered by descending scores."),
    ZCMD("zpopmin", zpopmin_command, -2, W | F,
         "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the "
         "last member was popped."),
    ZCMD("zpopmax", zpopmax_command, -2, W | F,
         "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the "
         "last member was popped."),
    ZCMD("zmpop", zmpop_command, -4, W,
         "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes "
         "the sorted set if the last member was popped."),
    {"bzpopmin", bzpopmin_command, -3, W | CMD_NOSCRIPT | CMD_BLOCKING | F, 1, -2, 1, "sorted-set",
     "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is "
     "available otherwise. Deletes the sorted set if the last element was popped.",
     0, 0, 0, 0},
    {"bzpopmax", bzpopmax_command, -3, W | CMD_NOSCRIPT | CMD_BLOCKING | F, 1, -2, 1, "sorted-set",
     "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member "
     "available otherwise.  Deletes the sorted set if the last element was popped.",
     0, 0, 0, 0},
    {"bzmpop", bzmpop_command, -5, W | CMD_BLOCKING, 0, 0, 0, "sorted-set",
     "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available "
     "otherwise. Deletes the sorted set if the last element was popped.",
     0, 0, 0, 0},
    ZCMD("zrandmember", zrandmember_command, -2, R, "Returns one or more random members from a sorted set."),
    ZCMD("zscan", zscan_command, -3, R, "Iterates over members and scores of a sorted set."),
    {0},
};
