/* zset.c — the sorted set: a skiplist with spans, and a member index.
 *
 * Step 8 (keyspace layer). Owns every node of every sorted set and the
 * member bytes inside them. Threads: main thread only. Valkey: src/t_zset.c
 * (zsl* functions, zsetAdd) — the algorithms below are Valkey's, written
 * again from their invariants.
 *
 * Design. A sorted set answers two kinds of question: by member (ZSCORE,
 * ZADD's "is it there already") and by order (ZRANGE, ZRANK, ranges of
 * scores). A hashtable answers the first in O(1), a skiplist the second in
 * O(log n); every member is in both, and the two must agree at all times.
 *
 * The skiplist is a sorted linked list (level 0) with express lanes above
 * it. Each node is given a height at birth — 1, and one more with
 * probability 1/4 each time, at most ZSL_MAX_LEVEL — and is linked at
 * every level below its height. Level i links each node to the next node
 * that is at least i+1 high, so a search starts at the top level of the
 * header (a node with no member and every level) and drops a level each
 * time the next step would overshoot. The invariants:
 *
 *  1. Order. Along level 0, (score, member) strictly increases: scores
 *     numerically, equal scores by member bytes (memcmp, then length).
 *     Every level is a sub-list of the one below it.
 *  2. Spans. level[i].span is how many level-0 steps level[i].forward
 *     jumps: rank(forward) - rank(node), ranks counted from 1 and the
 *     header's rank being 0. A NULL forward's span is length - rank(node),
 *     the steps to the end. Summing spans along a search path therefore
 *     gives a node's rank without walking level 0 (ZRANK, ZRANGE by index
 *     are O(log n)). Insert and delete keep spans exact: at each level the
 *     node the search stopped at ("update[i]") either gains or loses the
 *     new node from under its span (span +- 1) or, at the levels the node
 *     is linked in, splits or merges its span with the node's.
 *  3. Levels. zsl.level is one more than the highest level any node uses
 *     (at least 1); the header's levels above it are unused and their
 *     spans stale — insert resets them when the list grows taller.
 *  4. Backward pointers. Level 0 is doubly linked: backward is the
 *     previous node (NULL for the first, never the header), and tail is
 *     the last node, so reverse ranges walk back without a search.
 *  5. The index. The hashtable holds exactly the list's nodes, keyed by
 *     member bytes; length equals both counts.
 *
 * Who owns the member bytes: the node. They are embedded after the
 * node's level array (one allocation per member, as Valkey 8.1 embeds the
 * member in its node), and the hashtable's entries are node pointers whose
 * key is read out of the node. The member storage section below is the
 * only code that knows this: it allocates, frees and reads a member, and
 * defines how the index finds a node's key. Another layout — the member
 * copied into the index's own entry, or a node pointing at bytes it does
 * not own — changes that section alone.
 *
 * Memory: nodes and the hashtable's buckets come from zmalloc, so INFO's
 * used_memory counts a sorted set to the byte.
 */
#include "zset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtable.h"
#include "zmalloc.h"

#define ZSL_MAX_LEVEL 32 /* enough for 2^64 members at p = 1/4 */
#define ZSL_P 0.25

struct zset_level {
    zset_node *forward;
    size_t span;
};

struct zset_node {
    double score;
    zset_node *backward;
    size_t len;                /* member length in bytes */
    int height;                /* levels this node is linked in */
    struct zset_level level[]; /* height of them, then the member bytes */
};

typedef struct zskiplist {
    zset_node *header, *tail;
    size_t length;
    int level;
} zskiplist;

struct zset {
    zskiplist zsl;
    hashtable *index; /* member → zset_node*, owns nothing */
};

/* ---- member storage: the one place that knows where member bytes live ---- */

static const char *member_of(const zset_node *n) { return (const char *)&n->level[n->height]; }

static zset_node *node_alloc(int height, double score, const char *member, size_t len) {
    zset_node *n = zmalloc(sizeof(*n) + (size_t)height * sizeof(struct zset_level) + len);
    n->score = score;
    n->backward = NULL;
    n->len = len;
    n->height = height;
    if (len) memcpy((char *)member_of(n), member, len);
    return n;
}

static void node_free(zset_node *n) { zfree(n); }

/* The index's key is a {ptr, len} view of the node's member, built in
 * one of two rotating slots: hashtable.h allows a temporary that lives
 * across one more entry_get_key call. */
static const void *index_entry_key(const void *entry) {
    static hashtable_key slot[2];
    static int next;
    const zset_node *n = entry;
    hashtable_key *k = &slot[next];
    next ^= 1;
    k->ptr = member_of(n);
    k->len = n->len;
    return k;
}

static const hashtable_type index_type = {
    .hash_key = hashtable_key_hash,
    .entry_get_key = index_entry_key,
    .key_compare = hashtable_key_compare,
};

static zset_node *index_find(zset *z, const char *member, size_t len) {
    hashtable_key k = {member, len};
    void *found;
    return hashtable_find(z->index, &k, &found) ? found : NULL;
}

static void index_remove(zset *z, const zset_node *n) {
    hashtable_key k = {member_of(n), n->len};
    hashtable_pop(z->index, &k, NULL);
}

/* ---- ordering ---------------------------------------------------------------- */

static int member_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    size_t min = alen < blen ? alen : blen;
    int c = min ? memcmp(a, b, min) : 0;
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

/* 1 when node n sorts before (score, member). */
static int node_before(const zset_node *n, double score, const char *member, size_t len) {
    return n->score < score || (n->score == score && member_cmp(member_of(n), n->len, member, len) < 0);
}

/* ---- the skiplist ---------------------------------------------------------------- */

static int random_level(void) {
    int level = 1;
    while (level < ZSL_MAX_LEVEL && (random() & 0xFFFF) < (long)(ZSL_P * 0xFFFF)) level++;
    return level;
}

static void zsl_init(zskiplist *zsl) {
    zsl->header = node_alloc(ZSL_MAX_LEVEL, 0, NULL, 0);
    for (int i = 0; i < ZSL_MAX_LEVEL; i++) {
        zsl->header->level[i].forward = NULL;
        zsl->header->level[i].span = 0;
    }
    zsl->tail = NULL;
    zsl->length = 0;
    zsl->level = 1;
}

/*@ zsl-insert */
/* Links x, whose (score, member) is not in the list yet. rank[i] is the
 * rank of update[i], the last node at level i that sorts before x. */
static void zsl_insert_node(zskiplist *zsl, zset_node *x) {
    zset_node *update[ZSL_MAX_LEVEL], *n = zsl->header;
    size_t rank[ZSL_MAX_LEVEL];
    for (int i = zsl->level - 1; i >= 0; i--) {
        rank[i] = i == zsl->level - 1 ? 0 : rank[i + 1];
        while (n->level[i].forward && node_before(n->level[i].forward, x->score, member_of(x), x->len)) {
            rank[i] += n->level[i].span;
            n = n->level[i].forward;
        }
        update[i] = n;
    }
    if (x->height > zsl->level) { /* new levels start at the header and span the whole list */
        for (int i = zsl->level; i < x->height; i++) {
            rank[i] = 0;
            update[i] = zsl->header;
            update[i]->level[i].span = zsl->length;
        }
        zsl->level = x->height;
    }
    for (int i = 0; i < x->height; i++) {
        /* update[i]'s span is split at x: rank[0] - rank[i] nodes lie
         * between update[i] and x's predecessor. */
        x->level[i].forward = update[i]->level[i].forward;
        update[i]->level[i].forward = x;
        x->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
        update[i]->level[i].span = (rank[0] - rank[i]) + 1;
    }
    for (int i = x->height; i < zsl->level; i++) update[i]->level[i].span++; /* x is under them */
    x->backward = update[0] == zsl->header ? NULL : update[0];
    if (x->level[0].forward)
        x->level[0].forward->backward = x;
    else
        zsl->tail = x;
    zsl->length++;
}
/*@ end */

/* Unlinks x, given update[] from a search that stopped just before it. */
static void zsl_unlink(zskiplist *zsl, zset_node *x, zset_node **update) {
    for (int i = 0; i < zsl->level; i++) {
        if (update[i]->level[i].forward == x) {
            update[i]->level[i].span += x->level[i].span - 1;
            update[i]->level[i].forward = x->level[i].forward;
        } else {
            update[i]->level[i].span -= 1;
        }
    }
    if (x->level[0].forward)
        x->level[0].forward->backward = x->backward;
    else
        zsl->tail = x->backward;
    while (zsl->level > 1 && zsl->header->level[zsl->level - 1].forward == NULL) zsl->level--;
    zsl->length--;
}

/* Fills update[] for (score, member): at each level the last node that
 * sorts before it. Returns the level-0 successor of update[0]. */
static zset_node *zsl_search(zskiplist *zsl, double score, const char *member, size_t len, zset_node **update) {
    zset_node *n = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward && node_before(n->level[i].forward, score, member, len)) n = n->level[i].forward;
        update[i] = n;
    }
    return n->level[0].forward;
}

/* Unlinks node x (which is in the list) without freeing it. */
static void zsl_remove(zskiplist *zsl, zset_node *x) {
    zset_node *update[ZSL_MAX_LEVEL];
    zsl_search(zsl, x->score, member_of(x), x->len, update);
    zsl_unlink(zsl, x, update);
}

/*@ zsl-update-score */
/* Moves x to newscore. When the new score keeps x between its neighbours
 * the node stays where it is; otherwise it is unlinked and linked again,
 * keeping its height and its memory (the index still points at it). */
static void zsl_update_score(zskiplist *zsl, zset_node *x, double newscore) {
    zset_node *next = x->level[0].forward;
    if ((x->backward == NULL || x->backward->score < newscore) && (next == NULL || next->score > newscore)) {
        x->score = newscore;
        return;
    }
    zsl_remove(zsl, x);
    x->score = newscore;
    zsl_insert_node(zsl, x);
}
/*@ end */

/* 1-based rank of (score, member), 0 when it is not in the list. */
static size_t zsl_rank(const zskiplist *zsl, double score, const char *member, size_t len) {
    const zset_node *n = zsl->header;
    size_t rank = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward &&
               (node_before(n->level[i].forward, score, member, len) ||
                (n->level[i].forward->score == score &&
                 member_cmp(member_of(n->level[i].forward), n->level[i].forward->len, member, len) == 0))) {
            rank += n->level[i].span;
            n = n->level[i].forward;
        }
        if (n != zsl->header && n->score == score && member_cmp(member_of(n), n->len, member, len) == 0) return rank;
    }
    return 0;
}

/* The node at 1-based rank, with update[] filled for it when non-NULL. */
static zset_node *zsl_at_rank(const zskiplist *zsl, size_t rank, zset_node **update) {
    zset_node *n = zsl->header;
    size_t traversed = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward && traversed + n->level[i].span < rank) {
            traversed += n->level[i].span;
            n = n->level[i].forward;
        }
        if (update) update[i] = n;
    }
    return rank > 0 && traversed + 1 == rank ? n->level[0].forward : NULL;
}

/* ---- life cycle ------------------------------------------------------------------- */

zset *zset_create(void) {
    zset *z = zmalloc(sizeof(*z));
    zsl_init(&z->zsl);
    z->index = hashtable_create(&index_type);
    return z;
}

void zset_free(zset *z) {
    hashtable_release(z->index); /* owns no entries */
    for (zset_node *n = z->zsl.header, *next; n; n = next) {
        next = n->level[0].forward;
        node_free(n);
    }
    zfree(z);
}

size_t zset_length(const zset *z) { return z->zsl.length; }

static zset_node *insert_new(zset *z, double score, const char *member, size_t len) {
    zset_node *n = node_alloc(random_level(), score, member, len);
    zsl_insert_node(&z->zsl, n);
    hashtable_add(z->index, n);
    return n;
}

zset *zset_dup(const zset *z) {
    zset *d = zset_create();
    /* From the tail: each insert lands at the front, a one-step search. */
    for (zset_node *n = z->zsl.tail; n; n = n->backward) insert_new(d, n->score, member_of(n), n->len);
    return d;
}

static void object_free(obj *o) {
    if (o->type == OBJ_ZSET) zset_free(zset_of(o));
}

static obj *object_wrap(zset *z) {
    obj_free_hook = object_free; /* set before the first zset object exists */
    return obj_create_value(OBJ_ZSET, z);
}

obj *zset_object_create(void) { return object_wrap(zset_create()); }
obj *zset_object_dup(const obj *o) { return object_wrap(zset_dup(zset_of(o))); }

/* ---- members ---------------------------------------------------------------------- */

/*@ zset-add */
int zset_add(zset *z, double score, const char *member, size_t len, int in_flags, int *out_flags, double *newscore) {
    *out_flags = 0;
    if (isnan(score)) {
        *out_flags = ZADD_OUT_NAN;
        return 0;
    }
    zset_node *n = index_find(z, member, len);
    if (n) {
        if (in_flags & ZADD_IN_NX) {
            *out_flags |= ZADD_OUT_NOP;
            return 1;
        }
        double cur = n->score;
        if (in_flags & ZADD_IN_INCR) {
            score += cur;
            if (isnan(score)) { /* inf + -inf */
                *out_flags |= ZADD_OUT_NAN;
                return 0;
            }
        }
        if (((in_flags & ZADD_IN_LT) && score >= cur) || ((in_flags & ZADD_IN_GT) && score <= cur)) {
            *out_flags |= ZADD_OUT_NOP;
            return 1;
        }
        if (newscore) *newscore = score;
        if (score != cur) {
            zsl_update_score(&z->zsl, n, score);
            *out_flags |= ZADD_OUT_UPDATED;
        }
        return 1;
    }
    if (in_flags & ZADD_IN_XX) {
        *out_flags |= ZADD_OUT_NOP;
        return 1;
    }
    insert_new(z, score, member, len);
    *out_flags |= ZADD_OUT_ADDED;
    if (newscore) *newscore = score;
    return 1;
}
/*@ end */

int zset_score(zset *z, const char *member, size_t len, double *score) {
    zset_node *n = index_find(z, member, len);
    if (n && score) *score = n->score;
    return n != NULL;
}

int zset_delete(zset *z, const char *member, size_t len) {
    zset_node *n = index_find(z, member, len);
    if (!n) return 0;
    index_remove(z, n);
    zsl_remove(&z->zsl, n);
    node_free(n);
    return 1;
}

long zset_rank(zset *z, const char *member, size_t len, int reverse, double *score) {
    zset_node *n = index_find(z, member, len);
    if (!n) return -1;
    if (score) *score = n->score;
    size_t rank = zsl_rank(&z->zsl, n->score, member, len); /* 1-based */
    return reverse ? (long)(z->zsl.length - rank) : (long)(rank - 1);
}

/* ---- walking ------------------------------------------------------------------------ */

zset_node *zset_first(const zset *z) { return z->zsl.header->level[0].forward; }
zset_node *zset_last(const zset *z) { return z->zsl.tail; }
zset_node *zset_next(const zset_node *n) { return n->level[0].forward; }
zset_node *zset_prev(const zset_node *n) { return n->backward; }
double zset_node_score(const zset_node *n) { return n->score; }

const char *zset_node_member(const zset_node *n, size_t *len) {
    *len = n->len;
    return member_of(n);
}

zset_node *zset_by_rank(const zset *z, size_t rank) {
    return rank < z->zsl.length ? zsl_at_rank(&z->zsl, rank + 1, NULL) : NULL;
}

size_t zset_node_rank(const zset *z, const zset_node *n) {
    return zsl_rank(&z->zsl, n->score, member_of(n), n->len) - 1;
}

/* ---- ranges ----------------------------------------------------------------------------- */

int zset_score_gte_min(double score, const zset_score_range *r) { return r->minex ? score > r->min : score >= r->min; }
int zset_score_lte_max(double score, const zset_score_range *r) { return r->maxex ? score < r->max : score <= r->max; }

/* Compares a member with a lex bound's value; the infinities sort below
 * and above every member. */
static int lex_cmp(const char *m, size_t len, const zset_lex_bound *b) {
    if (b->kind == ZLEX_MINUS_INF) return 1;
    if (b->kind == ZLEX_PLUS_INF) return -1;
    return member_cmp(m, len, b->ptr, b->len);
}

int zset_lex_gte_min(const char *m, size_t len, const zset_lex_range *r) {
    int c = lex_cmp(m, len, &r->min);
    return r->min.kind == ZLEX_EXCLUSIVE ? c > 0 : c >= 0;
}

int zset_lex_lte_max(const char *m, size_t len, const zset_lex_range *r) {
    int c = lex_cmp(m, len, &r->max);
    return r->max.kind == ZLEX_EXCLUSIVE ? c < 0 : c <= 0;
}

/* 1 when some part of the list may fall inside the range: the range is
 * not empty, and it overlaps [first, last]. */
static int score_range_overlaps(const zskiplist *zsl, const zset_score_range *r) {
    if (r->min > r->max || (r->min == r->max && (r->minex || r->maxex))) return 0;
    const zset_node *first = zsl->header->level[0].forward;
    return zsl->tail && zset_score_gte_min(zsl->tail->score, r) && zset_score_lte_max(first->score, r);
}

/* Orders two bounds: -inf < any string < +inf, strings by member_cmp. */
static int lex_bound_cmp(const zset_lex_bound *a, const zset_lex_bound *b) {
    int ra = a->kind == ZLEX_MINUS_INF ? -1 : a->kind == ZLEX_PLUS_INF ? 1 : 0;
    int rb = b->kind == ZLEX_MINUS_INF ? -1 : b->kind == ZLEX_PLUS_INF ? 1 : 0;
    if (ra != rb || ra != 0) return ra - rb;
    return member_cmp(a->ptr, a->len, b->ptr, b->len);
}

static int lex_range_overlaps(const zskiplist *zsl, const zset_lex_range *r) {
    int c = lex_bound_cmp(&r->min, &r->max);
    if (c > 0 || (c == 0 && (r->min.kind == ZLEX_EXCLUSIVE || r->max.kind == ZLEX_EXCLUSIVE))) return 0;
    const zset_node *first = zsl->header->level[0].forward;
    return zsl->tail && zset_lex_gte_min(member_of(zsl->tail), zsl->tail->len, r) &&
           zset_lex_lte_max(member_of(first), first->len, r);
}

zset_node *zset_first_in_score_range(const zset *z, const zset_score_range *r) {
    if (!score_range_overlaps(&z->zsl, r)) return NULL;
    zset_node *n = z->zsl.header;
    for (int i = z->zsl.level - 1; i >= 0; i--)
        while (n->level[i].forward && !zset_score_gte_min(n->level[i].forward->score, r)) n = n->level[i].forward;
    n = n->level[0].forward; /* not NULL: the range overlaps the list */
    return zset_score_lte_max(n->score, r) ? n : NULL;
}

zset_node *zset_last_in_score_range(const zset *z, const zset_score_range *r) {
    if (!score_range_overlaps(&z->zsl, r)) return NULL;
    zset_node *n = z->zsl.header;
    for (int i = z->zsl.level - 1; i >= 0; i--)
        while (n->level[i].forward && zset_score_lte_max(n->level[i].forward->score, r)) n = n->level[i].forward;
    return n != z->zsl.header && zset_score_gte_min(n->score, r) ? n : NULL;
}

zset_node *zset_first_in_lex_range(const zset *z, const zset_lex_range *r) {
    if (!lex_range_overlaps(&z->zsl, r)) return NULL;
    zset_node *n = z->zsl.header;
    for (int i = z->zsl.level - 1; i >= 0; i--)
        while (n->level[i].forward && !zset_lex_gte_min(member_of(n->level[i].forward), n->level[i].forward->len, r))
            n = n->level[i].forward;
    n = n->level[0].forward;
    return zset_lex_lte_max(member_of(n), n->len, r) ? n : NULL;
}

zset_node *zset_last_in_lex_range(const zset *z, const zset_lex_range *r) {
    if (!lex_range_overlaps(&z->zsl, r)) return NULL;
    zset_node *n = z->zsl.header;
    for (int i = z->zsl.level - 1; i >= 0; i--)
        while (n->level[i].forward && zset_lex_lte_max(member_of(n->level[i].forward), n->level[i].forward->len, r))
            n = n->level[i].forward;
    return n != z->zsl.header && zset_lex_gte_min(member_of(n), n->len, r) ? n : NULL;
}

/* Removes x (found with update[]) from both structures and frees it. */
static void delete_found(zset *z, zset_node *x, zset_node **update) {
    zsl_unlink(&z->zsl, x, update);
    index_remove(z, x);
    node_free(x);
}

size_t zset_delete_score_range(zset *z, const zset_score_range *r) {
    zset_node *update[ZSL_MAX_LEVEL], *n = z->zsl.header;
    size_t removed = 0;
    for (int i = z->zsl.level - 1; i >= 0; i--) {
        while (n->level[i].forward && !zset_score_gte_min(n->level[i].forward->score, r)) n = n->level[i].forward;
        update[i] = n;
    }
    /* update[] stays right as we go: every node removed sits just after it. */
    for (n = n->level[0].forward; n && zset_score_lte_max(n->score, r); removed++) {
        zset_node *next = n->level[0].forward;
        delete_found(z, n, update);
        n = next;
    }
    return removed;
}

size_t zset_delete_lex_range(zset *z, const zset_lex_range *r) {
    zset_node *update[ZSL_MAX_LEVEL], *n = z->zsl.header;
    size_t removed = 0;
    for (int i = z->zsl.level - 1; i >= 0; i--) {
        while (n->level[i].forward && !zset_lex_gte_min(member_of(n->level[i].forward), n->level[i].forward->len, r))
            n = n->level[i].forward;
        update[i] = n;
    }
    for (n = n->level[0].forward; n && zset_lex_lte_max(member_of(n), n->len, r); removed++) {
        zset_node *next = n->level[0].forward;
        delete_found(z, n, update);
        n = next;
    }
    return removed;
}

size_t zset_delete_rank_range(zset *z, size_t start, size_t end) {
    zset_node *update[ZSL_MAX_LEVEL];
    size_t removed = 0;
    if (start > end || start >= z->zsl.length) return 0;
    zset_node *n = zsl_at_rank(&z->zsl, start + 1, update);
    for (size_t r = start; n && r <= end; r++, removed++) {
        zset_node *next = n->level[0].forward;
        delete_found(z, n, update);
        n = next;
    }
    return removed;
}

/* ---- random members and scans ------------------------------------------------------------- */

zset_node *zset_random(zset *z) {
    void *n;
    return hashtable_fair_random_entry(z->index, &n) ? n : NULL;
}

typedef struct scan_ctx {
    zset_scan_fn fn;
    void *privdata;
} scan_ctx;

static void scan_one(void *privdata, void *entry) {
    scan_ctx *s = privdata;
    s->fn(s->privdata, entry);
}

size_t zset_scan(zset *z, size_t cursor, zset_scan_fn fn, void *privdata) {
    scan_ctx s = {fn, privdata};
    return hashtable_scan(z->index, cursor, scan_one, &s);
}

/* ---- verification ------------------------------------------------------------------------------ */

#define VERIFY(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "zset_verify: " __VA_ARGS__);                                                              \
            fputc('\n', stderr);                                                                                       \
            return 0;                                                                                                  \
        }                                                                                                              \
    } while (0)

/*@ zset-verify */
int zset_verify(zset *z) {
    const zskiplist *zsl = &z->zsl;
    VERIFY(zsl->level >= 1 && zsl->level <= ZSL_MAX_LEVEL, "level %d out of bounds", zsl->level);
    VERIFY(hashtable_size(z->index) == zsl->length, "index holds %zu members, list %zu", hashtable_size(z->index),
           zsl->length);
    /* Level 0: order, backward pointers, tail, length, heights, the index. */
    size_t count = 0;
    int top = 0;
    const zset_node *prev = NULL;
    for (zset_node *n = zsl->header->level[0].forward; n; prev = n, n = n->level[0].forward) {
        count++;
        VERIFY(n->backward == prev, "node %zu: backward pointer is wrong", count);
        VERIFY(!prev || node_before(prev, n->score, member_of(n), n->len), "node %zu: out of order", count);
        VERIFY(!isnan(n->score), "node %zu: score is NaN", count);
        VERIFY(n->height >= 1 && n->height <= zsl->level, "node %zu: height %d, list level %d", count, n->height,
               zsl->level);
        if (n->height > top) top = n->height;
        VERIFY(index_find(z, member_of(n), n->len) == n, "node %zu: the index does not lead to it", count);
    }
    VERIFY(count == zsl->length, "list has %zu nodes, length says %zu", count, zsl->length);
    VERIFY(zsl->tail == prev, "tail is not the last node");
    VERIFY(top == zsl->level || (count == 0 && zsl->level == 1), "tallest node %d, list level %d", top, zsl->level);
    /* Each level: a sub-list of level 0 whose spans are rank differences. */
    for (int i = 0; i < zsl->level; i++) {
        const zset_node *n = zsl->header;
        size_t rank = 0;                  /* rank of n */
        const zset_node *w = zsl->header; /* level-0 walker */
        for (;;) {
            const zset_node *f = n->level[i].forward;
            size_t steps = 0;
            while (w->level[0].forward != f && w->level[0].forward) {
                w = w->level[0].forward;
                steps++;
                VERIFY(w->height <= i, "level %d: node of height %d skipped", i, w->height);
            }
            if (!f) {
                VERIFY(n->level[i].span == zsl->length - rank, "level %d: last span %zu, expected %zu", i,
                       n->level[i].span, zsl->length - rank);
                break;
            }
            w = f;
            steps++;
            VERIFY(n->level[i].span == steps, "level %d at rank %zu: span %zu, expected %zu", i, rank, n->level[i].span,
                   steps);
            rank += steps;
            n = f;
        }
    }
    return 1;
}
/*@ end */
