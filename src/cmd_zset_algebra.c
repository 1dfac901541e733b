/* cmd_zset_algebra.c — the sorted-set algebra: union, intersection and
 * difference of sorted sets.
 *
 * Step 8 (commands layer). Owns: zset_algebra_commands[] — ZUNION ZINTER
 * ZDIFF ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZINTERCARD — their arguments,
 * the computation, and the reply or the store. It reaches the sets through
 * zset.h alone (walks, zset_score, zset_insert_new). ZRANGESTORE is a
 * range, not algebra: it lives beside ZRANGE in cmd_zset.c.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: src/t_zset.c (zunionInterDiffGenericCommand, zunionInterAggregate,
 * zuiCompareByCardinality, zdiffAlgorithm1, zsetChooseDiffAlgorithm).
 *
 * HOW IT WORKS
 *
 * Every command reads its inputs, builds one new sorted set (or, for
 * ZINTERCARD, only counts), and then replies it or puts it under the
 * destination key. Nothing changes an input while the result is built, so
 * member bytes and positions read from the inputs stay valid throughout;
 * and the destination may be one of the inputs, since it is replaced only
 * once the result is whole. A plain set is an input too, each member
 * with score 1 (before its weight), as Valkey's zuiInitIterator reads
 * one; any other type gets WRONGTYPE. soloist copies such a set into a
 * temporary sorted set when it reads the keys (O(n log n) for its n
 * members, freed with the request), so that the three computations below
 * see sorted sets only; Valkey walks the set in place instead.
 *
 * COSTS
 *
 * With L the members of all inputs together, M the number of inputs, K
 * the result's size, and a lookup one hashtable find:
 *
 *   union      O(L) + O(K log K). One pass over every input accumulates
 *              member -> score in a hashtable whose entries point at the
 *              inputs' member bytes (no copy), all entries taken from one
 *              array of L allocated up front; then each of the K distinct
 *              members is inserted once into the result's skiplist.
 *              Valkey does the same with the result's own nodes.
 *   inter      O(N * M) + O(K log K), N the smallest input: the inputs are
 *              sorted by size and the smallest is walked, each member
 *              looked up in the others until one lacks it. An empty (or
 *              missing) input ends it at once. ZINTERCARD builds nothing
 *              and stops when it has counted LIMIT.
 *   diff       O(N * M) + O(K log K), N the first input: it is walked from
 *              its highest member and each member looked up in the others,
 *              largest first (the likeliest to hold it); scores are kept,
 *              so the result is built in order, each insert at the front.
 *              Valkey also has a second algorithm (zdiffAlgorithm2: copy
 *              the first set, then remove every other input's members,
 *              O(L + (N - K) log N)), chosen when the other inputs are
 *              small next to N * M; soloist has only the first.
 *
 * SCORES
 *
 * A weight multiplies each input's scores; a product that is not a
 * number (0 * inf) counts as 0 (for every input of a union, for the walked
 * input of an intersection), and SUM's inf + -inf is 0, as in Valkey, so
 * a result never holds NaN. The intersection's other inputs are weighed
 * without that fix, so there MIN and MAX pass over a NaN product (the
 * comparison is false) and SUM turns it into 0. Floating-point sums depend
 * on their order: inputs of equal size keep the order they were given in
 * (a stable sort), so a sum rounds as Valkey's does.
 */
#include <math.h>
#include <stdlib.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "hashtable.h"
#include "reply.h"
#include "set.h"
#include "zmalloc.h"
#include "zset.h"

enum setop { SETOP_UNION, SETOP_INTER, SETOP_DIFF };
enum aggregate { AGGR_SUM, AGGR_MIN, AGGR_MAX };

typedef struct source {
    zset *z;       /* NULL: a missing key, read as an empty set */
    double weight; /* WEIGHTS, 1 when not given */
    size_t given;  /* its place among the keys: ties in the sort keep it */
    obj *set;      /* a plain set's key value, whose copy z is */
    int owned;     /* z is that copy, to be freed (once per set) */
} source;

/* One command's request, parsed. */
typedef struct algebra {
    client *c;
    enum setop op;
    obj *dst;        /* the STORE forms' destination, else NULL */
    int count_only;  /* ZINTERCARD: count, build nothing */
    int withscores;  /* ZUNION, ZINTER, ZDIFF */
    int aggregate;   /* enum aggregate */
    long long limit; /* ZINTERCARD's LIMIT; 0: none */
    source *src;     /* numkeys of them */
    long long n;
} algebra;

static size_t source_length(const source *s) { return s->z ? zset_length(s->z) : 0; }

/* Valkey's zunionInterAggregate. */
static void aggregate(double *target, double v, int how) {
    if (how == AGGR_SUM) {
        *target += v;
        if (isnan(*target)) *target = 0.0; /* inf + -inf */
    } else if (how == AGGR_MIN) {
        *target = v < *target ? v : *target;
    } else {
        *target = v > *target ? v : *target;
    }
}

/* A score times its input's weight, 0 where that is not a number. */
static double weigh(const source *s, double score) {
    double v = s->weight * score;
    return isnan(v) ? 0.0 : v;
}

/* ---- arguments ------------------------------------------------------------ */

/* Source i reads the plain set o: every member with score 1, in a sorted
 * set built for this request (Valkey: zuiInitIterator on a set). The same
 * key given twice shares one copy, so "the same input again" still
 * compares equal below. */
static void source_from_set(algebra *a, long long i, obj *o) {
    a->src[i].set = o;
    for (long long j = 0; j < i; j++) {
        if (a->src[j].set == o) {
            a->src[i].z = a->src[j].z;
            return;
        }
    }
    zset *z = zset_create();
    set_iter it;
    const char *m;
    size_t len;
    set_iter_init(&it, o);
    while (set_iter_next(&it, &m, &len)) zset_insert_new(z, 1.0, m, len);
    set_iter_reset(&it);
    a->src[i].z = z;
    a->src[i].owned = 1;
}

/* numkeys and the keys, in Valkey's order: the count (an integer, at least
 * 1, no more than the arguments left), then every key looked up, so a
 * wrong type is reported before any option is read. 1, or 0 replied. */
static int parse_keys(algebra *a, int numkeys_at) {
    client *c = a->c;
    if (!obj_get_ll(c->argv[numkeys_at], &a->n)) {
        reply_error(c, ERR_NOT_INT);
        return 0;
    }
    if (a->n < 1) {
        reply_error_format(c, "at least 1 input key is needed for '%s' command", c->cmd->name);
        return 0;
    }
    if (a->n > c->argc - (numkeys_at + 1)) {
        reply_error(c, ERR_SYNTAX);
        return 0;
    }
    a->src = zcalloc(sizeof(source) * (size_t)a->n);
    for (long long i = 0; i < a->n; i++) {
        obj *o = db_lookup_read(c->db, c->argv[numkeys_at + 1 + i]);
        if (o && o->type != OBJ_ZSET && o->type != OBJ_SET) {
            reply_error(c, ERR_WRONGTYPE);
            return 0;
        }
        a->src[i] = (source){.z = o && o->type == OBJ_ZSET ? zset_of(o) : NULL, .weight = 1.0, .given = (size_t)i};
        if (o && o->type == OBJ_SET) source_from_set(a, i, o);
    }
    return 1;
}

/* The temporary copies of plain sets, each freed once. */
static void free_set_copies(algebra *a) {
    for (long long i = 0; a->src && i < a->n; i++)
        if (a->src[i].owned) zset_free(a->src[i].z);
}

/* WEIGHTS takes exactly numkeys floats. 1, or 0 replied. */
static int parse_weights(algebra *a, int at) {
    for (long long i = 0; i < a->n; i++) {
        if (!obj_get_double(a->c->argv[at + i], &a->src[i].weight)) {
            reply_error(a->c, "weight value is not a float");
            return 0;
        }
    }
    return 1;
}

/* The options after the keys, from argv[j] (Valkey's loop: each option is
 * recognised only where its command takes it and enough arguments are
 * left; anything else is a syntax error). 1, or 0 replied. */
static int parse_options(algebra *a, int j) {
    client *c = a->c;
    int weighted = a->op != SETOP_DIFF && !a->count_only;
    while (j < c->argc) {
        long long left = c->argc - j;
        const obj *o = c->argv[j];
        if (weighted && left >= a->n + 1 && arg_is(o, "weights")) {
            if (!parse_weights(a, j + 1)) return 0;
            j += (int)a->n + 1;
        } else if (weighted && left >= 2 && arg_is(o, "aggregate")) {
            const obj *how = c->argv[j + 1];
            if (arg_is(how, "sum"))
                a->aggregate = AGGR_SUM;
            else if (arg_is(how, "min"))
                a->aggregate = AGGR_MIN;
            else if (arg_is(how, "max"))
                a->aggregate = AGGR_MAX;
            else
                break;
            j += 2;
        } else if (!a->dst && !a->count_only && arg_is(o, "withscores")) {
            a->withscores = 1;
            j++;
        } else if (a->count_only && left >= 2 && arg_is(o, "limit")) {
            /* Valkey's getPositiveLongFromObjectOrReply: one message for
             * "not a number" and "negative". */
            if (!obj_get_ll(c->argv[j + 1], &a->limit) || a->limit < 0) {
                reply_error(c, "LIMIT can't be negative");
                return 0;
            }
            j += 2;
        } else {
            break;
        }
    }
    if (j == c->argc) return 1;
    reply_error(c, ERR_SYNTAX);
    return 0;
}

/* Smallest first; equal sizes in the order given. */
static int by_size(const void *x, const void *y) {
    const source *a = x, *b = y;
    size_t la = source_length(a), lb = source_length(b);
    if (la != lb) return la < lb ? -1 : 1;
    return a->given < b->given ? -1 : a->given > b->given;
}

/* Largest first; equal sizes in the order given. */
static int by_size_desc(const void *x, const void *y) {
    const source *a = x, *b = y;
    size_t la = source_length(a), lb = source_length(b);
    if (la != lb) return la > lb ? -1 : 1;
    return a->given < b->given ? -1 : a->given > b->given;
}

/* ---- union ----------------------------------------------------------------- */

/* An accumulated member: its bytes (in an input) and its score so far.
 * The key comes first, so the entry is its own hashtable_key. */
typedef struct acc {
    hashtable_key key;
    double score;
} acc;

static const void *acc_key(const void *entry) { return &((const acc *)entry)->key; }
static const hashtable_type acc_type = {
    .hash_key = hashtable_key_hash, .entry_get_key = acc_key, .key_compare = hashtable_key_compare};

/*@ zunion */
static void compute_union(const algebra *a, zset *result) {
    size_t total = 0;
    for (long long i = 0; i < a->n; i++) total += source_length(&a->src[i]);
    acc *pool = zmalloc(sizeof(acc) * (total ? total : 1)), *e;
    size_t used = 0;
    hashtable *seen = hashtable_create(&acc_type);
    for (long long i = 0; i < a->n; i++) {
        const source *s = &a->src[i];
        if (!s->z) continue;
        for (zset_node *n = zset_first(s->z); n; n = zset_next(s->z, n)) {
            e = &pool[used];
            e->key.ptr = zset_node_member(s->z, n, &e->key.len);
            e->score = weigh(s, zset_node_score(s->z, n));
            void *found;
            if (hashtable_add_or_find(seen, e, &found))
                used++; /* a new member: the slot is taken */
            else
                aggregate(&((acc *)found)->score, e->score, a->aggregate);
        }
    }
    for (size_t k = 0; k < used; k++) zset_insert_new(result, pool[k].score, pool[k].key.ptr, pool[k].key.len);
    hashtable_release(seen);
    zfree(pool);
}
/*@ end */

/* ---- intersection ---------------------------------------------------------- */

/*@ zinter */
/* Returns how many members are in every input (at most LIMIT when only
 * counting); adds them to result unless it is NULL. */
static unsigned long long compute_inter(const algebra *a, zset *result) {
    const source *first = &a->src[0];
    unsigned long long card = 0;
    if (source_length(first) == 0) return 0; /* sorted by size: some input is empty */
    for (zset_node *n = zset_last(first->z); n; n = zset_prev(first->z, n)) {
        size_t len;
        const char *m = zset_node_member(first->z, n, &len);
        double own = zset_node_score(first->z, n), score = weigh(first, own), v;
        long long j = 1;
        for (; j < a->n; j++) {
            const source *s = &a->src[j];
            if (s->z == first->z)
                v = own; /* the same key again */
            else if (!zset_score(s->z, m, len, &v))
                break;
            aggregate(&score, v * s->weight, a->aggregate);
        }
        if (j < a->n) continue;
        card++;
        if (result) zset_insert_new(result, score, m, len);
        if (!result && a->limit && card >= (unsigned long long)a->limit) break;
    }
    return card;
}
/*@ end */

/* ---- difference ------------------------------------------------------------ */

/*@ zdiff */
static void compute_diff(const algebra *a, zset *result) {
    const source *first = &a->src[0];
    if (source_length(first) == 0) return;
    for (long long j = 1; j < a->n; j++)
        if (a->src[j].z == first->z) return; /* the first set minus itself */
    qsort(a->src + 1, (size_t)a->n - 1, sizeof(source), by_size_desc);
    for (zset_node *n = zset_last(first->z); n; n = zset_prev(first->z, n)) {
        size_t len;
        const char *m = zset_node_member(first->z, n, &len);
        double ignored;
        long long j = 1;
        while (j < a->n && !(a->src[j].z && zset_score(a->src[j].z, m, len, &ignored))) j++;
        if (j == a->n) zset_insert_new(result, zset_node_score(first->z, n), m, len);
    }
}
/*@ end */

/* ---- the result -------------------------------------------------------------- */

/* The result as ZRANGE ... WITHSCORES replies it: flat in RESP2, [member,
 * score] pairs in RESP3. */
static void reply_result(client *c, const zset *z, int withscores) {
    long n = (long)zset_length(z);
    reply_array_len(c, withscores && c->resp == 2 ? n * 2 : n);
    for (zset_node *node = zset_first(z); node; node = zset_next(z, node)) {
        size_t len;
        const char *m = zset_node_member(z, node, &len);
        if (withscores && c->resp > 2) reply_array_len(c, 2);
        reply_bulk_buf(c, m, len);
        if (withscores) reply_double(c, zset_node_score(z, node));
    }
}

/*@ zstore */
/* The STORE forms: a result replaces dst's value (and drops its TTL); an
 * empty one deletes dst. Each write is signalled where Valkey calls
 * signalModifiedKey: setKey's, and the delete's when there was a key. */
static void store_result(client *c, obj *dst, obj *result) {
    long long n = (long long)zset_length(zset_of(result));
    if (n) {
        db_set_key(c->db, dst, result, 0);
        db_signal_modified(c->db, dst);
    } else {
        obj_decr_ref(result);
        if (db_delete(c->db, dst)) db_signal_modified(c->db, dst);
    }
    reply_long_long(c, n);
}
/*@ end */

/* Valkey's zunionInterDiffGenericCommand: numkeys at argv[numkeys_at],
 * the destination (STORE forms) at argv[1]. */
static void algebra_generic(client *c, int numkeys_at, enum setop op, int count_only) {
    algebra a = {.c = c, .op = op, .dst = numkeys_at == 2 ? c->argv[1] : NULL, .count_only = count_only};
    if (!parse_keys(&a, numkeys_at) || !parse_options(&a, numkeys_at + 1 + (int)a.n)) goto done;
    if (op != SETOP_DIFF) qsort(a.src, (size_t)a.n, sizeof(source), by_size);
    if (count_only) {
        reply_long_long(c, (long long)compute_inter(&a, NULL));
        goto done;
    }
    obj *result = zset_object_create();
    if (op == SETOP_UNION)
        compute_union(&a, zset_of(result));
    else if (op == SETOP_INTER)
        compute_inter(&a, zset_of(result));
    else
        compute_diff(&a, zset_of(result));
    if (a.dst) {
        store_result(c, a.dst, result);
    } else {
        reply_result(c, zset_of(result), a.withscores);
        obj_decr_ref(result);
    }
done:
    free_set_copies(&a);
    zfree(a.src);
}

static void zunion_command(client *c) { algebra_generic(c, 1, SETOP_UNION, 0); }
static void zinter_command(client *c) { algebra_generic(c, 1, SETOP_INTER, 0); }
static void zdiff_command(client *c) { algebra_generic(c, 1, SETOP_DIFF, 0); }
static void zintercard_command(client *c) { algebra_generic(c, 1, SETOP_INTER, 1); }
static void zunionstore_command(client *c) { algebra_generic(c, 2, SETOP_UNION, 0); }
static void zinterstore_command(client *c) { algebra_generic(c, 2, SETOP_INTER, 0); }
static void zdiffstore_command(client *c) { algebra_generic(c, 2, SETOP_DIFF, 0); }

/* ---- the table ------------------------------------------------------------------ */

/* Redis 7.0's and Valkey's legacy key positions: the STORE forms name
 * their destination (1, 1, 1); the others, whose first key follows
 * numkeys, name none (0, 0, 0). Both kinds are "movablekeys". */
#define READ_ALGEBRA(name, proc, summary)                                                                              \
    { name, proc, -3, CMD_READONLY | CMD_MOVABLEKEYS, 0, 0, 0, "sorted-set", summary, 0, 0, 0, 0 }
#define STORE_ALGEBRA(name, proc, summary)                                                                             \
    { name, proc, -4, CMD_WRITE | CMD_DENYOOM | CMD_MOVABLEKEYS, 1, 1, 1, "sorted-set", summary, 0, 0, 0, 0 }

command zset_algebra_commands[] = {
    READ_ALGEBRA("zunion", zunion_command, "Returns the union of multiple sorted sets."),
    READ_ALGEBRA("zinter", zinter_command, "Returns the intersect of multiple sorted sets."),
    READ_ALGEBRA("zdiff", zdiff_command, "Returns the difference between multiple sorted sets."),
    READ_ALGEBRA("zintercard", zintercard_command,
                 "Returns the number of members of the intersect of multiple sorted sets."),
    STORE_ALGEBRA("zunionstore", zunionstore_command, "Stores the union of multiple sorted sets in a key."),
    STORE_ALGEBRA("zinterstore", zinterstore_command, "Stores the intersect of multiple sorted sets in a key."),
    STORE_ALGEBRA("zdiffstore", zdiffstore_command, "Stores the difference of multiple sorted sets in a key."),
    {0},
};
