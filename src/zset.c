/* zset.c — the sorted set: a skiplist with spans, and a member index.
 *
 * Step 8 (keyspace layer). Owns every node of every skiplist-layout set,
 * and the member bytes it holds. Threads: main thread only. Valkey: src/t_zset.c
 * (zsl* functions, zsetAdd) — the algorithms below are Valkey's, written
 * again from their invariants.
 *
 * HOW IT WORKS
 *
 * A sorted set answers two kinds of question: by member (ZSCORE, ZADD's
 * "is it there already") and by order (ZRANGE, ZRANK, ranges of scores).
 * A hashtable answers the first in O(1), a skiplist the second in O(log
 * n); every member is in both, and the two must agree at all times.
 *
 * The skiplist is a sorted linked list (level 0) with express lanes above
 * it. Each node is given a height at birth — 1, and one more with
 * probability 1/4 each time, at most ZSET_MAX_LEVEL — and is linked at
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
 * Who owns the member bytes depends on the set's layout (zset.h), fixed
 * when the set is made. In the three skiplist layouts the node owns them,
 * in its tail (embedded) or in an allocation its tail points at (copied,
 * node-pointer); the copied layout's index entries are allocations of
 * their own, holding a copy (Valkey's dict entries share the node's
 * string instead). The member storage section below is the only
 * code that knows which: it allocates, frees and reads a member, and
 * defines how the index finds a node's key. The dense layout keeps
 * members packed in leaves (zset_dense.c, with its own invariants); every
 * public function here hands a dense set to it. What both layouts call —
 * the height draw, the index's key view, the index scan — is in
 * zset_common.c, below both, so the dense layout never calls back here.
 *
 * Memory: nodes, leaves and the hashtable's buckets come from zmalloc, so
 * INFO's used_memory counts a sorted set to the byte.
 */
#include "zset.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtable.h"
#include "zmalloc.h"
#include "zset_private.h"
#include "zset_test.h"

struct zset_level {
    zset_node *forward;
    size_t span;
};

struct zset_node {
    double score;
    zset_node *backward;
    uint8_t height;            /* levels this node is linked in */
    struct zset_level level[]; /* height of them, then the member's tail */
};

typedef struct zskiplist {
    zset_node *header, *tail;
    size_t length;
    int level;
    int layout; /* enum zset_layout: how member_of finds the bytes */
} zskiplist;

struct zset {
    int layout;
    zskiplist zsl;
    hashtable *index; /* the skiplist layouts' member index */
    dense *dense;     /* ZSET_LAYOUT_DENSE: everything is here */
};

int zset_layout_default = ZSET_LAYOUT_DENSE;

static const char *const layout_names[] = {"copied", "node-pointer", "embedded", "dense"};
const char *zset_layout_name(int layout) { return layout_names[layout]; }

/*@ member-storage */
/* ---- member storage: the one place that knows where member bytes live ----
 *
 * A member is stored as a varint length and its bytes ("the member's
 * bytes" below). What follows a node's level array, its tail, depends on
 * the set's layout:
 *
 *   copied        a pointer to the member's bytes in their own allocation;
 *                 the index's entry is a third allocation holding the node
 *                 pointer and a copy of the member. A baseline with a copy,
 *                 not Valkey's layout: Valkey 8.0 (and Redis 7.0) also pay
 *                 three allocations per member (node, member sds, dict
 *                 entry), but copy nothing, since the dict entry's key is
 *                 the node's own sds and its value points at the node's
 *                 score. The name stays because "copied" is a value of
 *                 CONFIG SET zset-layout, which the benchmark and the
 *                 tests select by name.
 *   node-pointer  the same pointer; the index stores the node itself and
 *                 reads its key through the pointer (Valkey 8.1, pull
 *                 request #1427: no dict entry).
 *   embedded      the member's bytes themselves, so one allocation per
 *                 member (Valkey 9.1, pull request #2508).
 */

static unsigned char *node_tail(const zset_node *n) { return (unsigned char *)&n->level[n->height]; }

static size_t member_size(size_t len) { return zset_varint_size(len) + len; }

/* Writes a member at p: its length len as a varint (zset_varint_put),
 * then its len bytes, nothing after them: member_size(len) bytes in all.
 * The empty member is the varint 0 alone, and then member may be NULL
 * (the list's header node has no member). */
static void member_put(unsigned char *p, const char *member, size_t len) {
    /*@ exercise: member-put */
    p += zset_varint_put(p, len);
    if (len) memcpy(p, member, len);
    /*@ end */
}

/* The member member_put wrote at p: a pointer to its first byte (the
 * bytes are not NUL-terminated) and its length in *len. */
static const char *member_at(const unsigned char *p, size_t *len) {
    /*@ exercise: member-at */
    return (const char *)p + zset_varint_get(p, len);
    /*@ end */
}

/* The embedded layout's node, one allocation: the header (score, backward,
 * height), `height` levels (forward pointers and spans are the caller's to
 * set), then the member's bytes: its length as a varint (zset_varint_put)
 * and the len bytes of member, nothing after them. Returns the node with
 * score set, backward NULL and height set. Everything through zmalloc, so
 * used_memory counts it. */
static zset_node *embedded_node_alloc(int height, double score, const char *member, size_t len) {
    /*@ exercise: embedded-node */
    zset_node *n = zmalloc(sizeof(*n) + (size_t)height * sizeof(struct zset_level) + member_size(len));
    n->score = score;
    n->backward = NULL;
    n->height = (uint8_t)height;
    member_put(node_tail(n), member, len);
    return n;
    /*@ end */
}

/* The member of an embedded node n: a pointer to its first byte (the bytes
 * are not NUL-terminated) and its length in *len, read from where
 * embedded_node_alloc put them: right after n's `height` levels. */
static const char *embedded_member(const zset_node *n, size_t *len) {
    /*@ exercise: embedded-member */
    return member_at(node_tail(n), len);
    /*@ end */
}

static const unsigned char *tail_pointer(const zset_node *n) {
    const unsigned char *p;
    memcpy(&p, node_tail(n), sizeof(p));
    return p;
}

static const char *member_of(const zskiplist *zsl, const zset_node *n, size_t *len) {
    return zsl->layout == ZSET_LAYOUT_EMBEDDED ? embedded_member(n, len) : member_at(tail_pointer(n), len);
}

/* A node of the given layout, with score set, backward NULL and height
 * set. In the pointer layouts (copied, node-pointer) it is two
 * allocations: the node, whose tail after its `height` levels is one
 * pointer (tail_pointer reads it back, unaligned), and the member's bytes
 * (member_put) in an allocation of their own, member_size(len) bytes,
 * which that pointer points at; node_free frees both. */
static zset_node *node_alloc(int layout, int height, double score, const char *member, size_t len) {
    if (layout == ZSET_LAYOUT_EMBEDDED) return embedded_node_alloc(height, score, member, len);
    /*@ exercise: pointer-node */
    zset_node *n = zmalloc(sizeof(*n) + (size_t)height * sizeof(struct zset_level) + sizeof(unsigned char *));
    n->score = score;
    n->backward = NULL;
    n->height = (uint8_t)height;
    unsigned char *p = zmalloc(member_size(len));
    member_put(p, member, len);
    memcpy(node_tail(n), &p, sizeof(p));
    return n;
    /*@ end */
}

static void node_free(int layout, zset_node *n) {
    if (layout != ZSET_LAYOUT_EMBEDDED) zfree((void *)tail_pointer(n));
    zfree(n);
}

/* The copied layout's index entry: the node, then a copy of the member. */
typedef struct copied_entry {
    zset_node *node;
    unsigned char member[];
} copied_entry;

static const void *copied_key(const void *entry) {
    size_t len;
    const char *m = member_at(((const copied_entry *)entry)->member, &len);
    return zset_key_view(m, len);
}

static const void *node_pointer_key(const void *entry) {
    size_t len;
    const char *m = member_at(tail_pointer(entry), &len);
    return zset_key_view(m, len);
}

static const void *embedded_key(const void *entry) {
    size_t len;
    const char *m = embedded_member(entry, &len);
    return zset_key_view(m, len);
}

static const hashtable_type index_types[] = {
    [ZSET_LAYOUT_COPIED] = {.hash_key = hashtable_key_hash,
                            .entry_get_key = copied_key,
                            .key_compare = hashtable_key_compare,
                            .entry_destructor = zfree},
    [ZSET_LAYOUT_NODE_POINTER] = {.hash_key = hashtable_key_hash,
                                  .entry_get_key = node_pointer_key,
                                  .key_compare = hashtable_key_compare},
    [ZSET_LAYOUT_EMBEDDED] = {.hash_key = hashtable_key_hash,
                              .entry_get_key = embedded_key,
                              .key_compare = hashtable_key_compare},
};

static zset_node *entry_node(const zset *z, void *entry) {
    return z->layout == ZSET_LAYOUT_COPIED ? ((copied_entry *)entry)->node : entry;
}

static zset_node *index_find(zset *z, const char *member, size_t len) {
    hashtable_key k = {member, len};
    void *found;
    return hashtable_find(z->index, &k, &found) ? entry_node(z, found) : NULL;
}

static void index_add(zset *z, zset_node *n) {
    if (z->layout != ZSET_LAYOUT_COPIED) {
        hashtable_add(z->index, n);
        return;
    }
    size_t len;
    const char *m = member_of(&z->zsl, n, &len);
    copied_entry *e = zmalloc(sizeof(*e) + member_size(len));
    e->node = n;
    member_put(e->member, m, len);
    hashtable_add(z->index, e);
}

static void index_remove(zset *z, const zset_node *n) {
    size_t len;
    const char *m = member_of(&z->zsl, n, &len);
    hashtable_key k = {m, len};
    void *entry;
    hashtable_pop(z->index, &k, &entry);
    if (z->layout == ZSET_LAYOUT_COPIED) zfree(entry);
}
/*@ end */

/* ---- ordering ---------------------------------------------------------------- */

#define member_cmp zset_member_cmp

/* Orders node n against (score, member): below, at or above 0. */
static int node_cmp(const zskiplist *zsl, const zset_node *n, double score, const char *member, size_t len) {
    if (n->score != score) return n->score < score ? -1 : 1;
    size_t nlen;
    const char *m = member_of(zsl, n, &nlen);
    return member_cmp(m, nlen, member, len);
}

/* The skiplist's key test (a zset_pred on a zset_key whose set is the
 * skiplist, which knows how to read a node's member). */
static int key_before(const zset_node *n, const void *arg) {
    const zset_key *k = arg;
    int c = node_cmp(k->set, n, k->score, k->member, k->len);
    return c < 0 || (k->or_equal && c == 0);
}

/* The key of node x, which is in the list or about to be. */
static zset_key node_key(const zskiplist *zsl, const zset_node *x, int or_equal) {
    zset_key k = {x->score, NULL, 0, or_equal, zsl};
    k.member = member_of(zsl, x, &k.len);
    return k;
}

/* ---- the skiplist ---------------------------------------------------------------- */

static void zsl_init(zskiplist *zsl, int layout) {
    zsl->layout = layout;
    zsl->header = node_alloc(layout, ZSET_MAX_LEVEL, 0, NULL, 0);
    for (int i = 0; i < ZSET_MAX_LEVEL; i++) {
        zsl->header->level[i].forward = NULL;
        zsl->header->level[i].span = 0;
    }
    zsl->tail = NULL;
    zsl->length = 0;
    zsl->level = 1;
}

/* Walks down to the last node, at every level, for which before() holds;
 * the header where none does. update[i] / rank[i] (when non-NULL) get
 * that node and its rank per level. zset_dense.c's descend is the same
 * walk over leaves. */
static zset_node *zsl_descend(const zskiplist *zsl, zset_pred before, const void *arg, zset_node **update,
                              size_t *rank) {
    zset_node *n = zsl->header;
    size_t r = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (n->level[i].forward && before(n->level[i].forward, arg)) {
            r += n->level[i].span;
            n = n->level[i].forward;
        }
        if (update) update[i] = n;
        if (rank) rank[i] = r;
    }
    return n;
}

/*@ zsl-insert */
/* Links x, whose (score, member) is not in the list yet. rank[i] is the
 * rank of update[i], the last node at level i that sorts before x. */
static void zsl_insert_node(zskiplist *zsl, zset_node *x) {
    zset_node *update[ZSET_MAX_LEVEL];
    size_t rank[ZSET_MAX_LEVEL];
    zset_key k = node_key(zsl, x, 0);
    zsl_descend(zsl, key_before, &k, update, rank);
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

/* Unlinks node x (which is in the list) without freeing it. */
static void zsl_remove(zskiplist *zsl, zset_node *x) {
    zset_node *update[ZSET_MAX_LEVEL];
    zset_key k = node_key(zsl, x, 0);
    zsl_descend(zsl, key_before, &k, update, NULL);
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

zset *zset_create_layout(int layout) {
    zset *z = zmalloc(sizeof(*z));
    memset(z, 0, sizeof(*z));
    z->layout = layout;
    if (layout == ZSET_LAYOUT_DENSE) {
        z->dense = dense_create();
    } else {
        zsl_init(&z->zsl, layout);
        z->index = hashtable_create(&index_types[layout]);
    }
    return z;
}

zset *zset_create(void) { return zset_create_layout(zset_layout_default); }
int zset_layout(const zset *z) { return z->layout; }

void zset_free(zset *z) {
    if (z->layout == ZSET_LAYOUT_DENSE) {
        dense_free(z->dense);
        zfree(z);
        return;
    }
    hashtable_release(z->index); /* frees the copied layout's entries */
    for (zset_node *n = z->zsl.header, *next; n; n = next) {
        next = n->level[0].forward;
        node_free(z->layout, n);
    }
    zfree(z);
}

size_t zset_length(const zset *z) { return z->layout == ZSET_LAYOUT_DENSE ? dense_length(z->dense) : z->zsl.length; }

static void insert_new(zset *z, double score, const char *member, size_t len) {
    if (z->layout == ZSET_LAYOUT_DENSE) {
        dense_insert(z->dense, score, member, len);
        return;
    }
    zset_node *n = node_alloc(z->layout, zset_random_level(), score, member, len);
    zsl_insert_node(&z->zsl, n);
    index_add(z, n);
}

void zset_insert_new(zset *z, double score, const char *member, size_t len) {
    assert(!isnan(score));
    insert_new(z, score, member, len);
}

zset *zset_dup(const zset *z) {
    zset *d = zset_create_layout(z->layout);
    /* From the tail: each insert lands at the front, a one-step search. */
    for (zset_node *n = zset_last(z); n; n = zset_prev(z, n)) {
        size_t len;
        const char *m = zset_node_member(z, n, &len);
        insert_new(d, zset_node_score(z, n), m, len);
    }
    return d;
}

static void object_free(obj *o) { zset_free(zset_of(o)); }
static size_t object_length(const obj *o) { return zset_length(zset_of(o)); }
static const obj_type_ops zset_ops = {OBJ_ZSET, "zset", object_free, zset_object_dup, object_length};

/* Every soloist sorted set is a skiplist (or its dense leaves): no small
 * listpack encoding, so OBJECT ENCODING says "skiplist" at any size. */
static obj *object_wrap(zset *z) { return obj_create_value(&zset_ops, OBJ_ENC_SKIPLIST, z); }

obj *zset_object_create(void) { return object_wrap(zset_create()); }
obj *zset_object_dup(const obj *o) { return object_wrap(zset_dup(zset_of(o))); }

/* ---- members ---------------------------------------------------------------------- */

/*@ update-score */
/* Moves member to newscore (it is in the set). */
static void update_score(zset *z, const char *member, size_t len, double newscore) {
    if (z->layout == ZSET_LAYOUT_DENSE) {
        dense_delete(z->dense, member, len);
        dense_insert(z->dense, newscore, member, len);
    } else {
        zsl_update_score(&z->zsl, index_find(z, member, len), newscore);
    }
}
/*@ end */

/*@ zset-add */
int zset_add(zset *z, double score, const char *member, size_t len, int in_flags, int *out_flags, double *newscore) {
    *out_flags = 0;
    if (isnan(score)) {
        *out_flags = ZADD_OUT_NAN;
        return 0;
    }
    double cur;
    if (zset_score(z, member, len, &cur)) {
        if (in_flags & ZADD_IN_NX) {
            *out_flags |= ZADD_OUT_NOP;
            return 1;
        }
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
            update_score(z, member, len, score);
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
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_find(z->dense, member, len, score);
    zset_node *n = index_find(z, member, len);
    if (n && score) *score = n->score;
    return n != NULL;
}

/*@ zset-delete */
int zset_delete(zset *z, const char *member, size_t len) {
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_delete(z->dense, member, len);
    zset_node *n = index_find(z, member, len);
    if (!n) return 0;
    index_remove(z, n);
    zsl_remove(&z->zsl, n);
    node_free(z->layout, n);
    return 1;
}
/*@ end */

long zset_rank(zset *z, const char *member, size_t len, int reverse, double *score) {
    zset_node *n = z->layout == ZSET_LAYOUT_DENSE ? dense_find_node(z->dense, member, len) : index_find(z, member, len);
    if (!n) return -1;
    if (score) *score = zset_node_score(z, n);
    size_t rank = zset_node_rank(z, n);
    return reverse ? (long)(zset_length(z) - 1 - rank) : (long)rank;
}

/* ---- walking ------------------------------------------------------------------------ */

zset_node *zset_first(const zset *z) {
    return z->layout == ZSET_LAYOUT_DENSE ? dense_first(z->dense) : z->zsl.header->level[0].forward;
}
zset_node *zset_last(const zset *z) { return z->layout == ZSET_LAYOUT_DENSE ? dense_last(z->dense) : z->zsl.tail; }
zset_node *zset_next(const zset *z, const zset_node *n) {
    return z->layout == ZSET_LAYOUT_DENSE ? dense_next(z->dense, n) : n->level[0].forward;
}
zset_node *zset_prev(const zset *z, const zset_node *n) {
    return z->layout == ZSET_LAYOUT_DENSE ? dense_prev(z->dense, n) : n->backward;
}
double zset_node_score(const zset *z, const zset_node *n) {
    return z->layout == ZSET_LAYOUT_DENSE ? dense_node_score(n) : n->score;
}

const char *zset_node_member(const zset *z, const zset_node *n, size_t *len) {
    return z->layout == ZSET_LAYOUT_DENSE ? dense_node_member(n, len) : member_of(&z->zsl, n, len);
}

zset_node *zset_by_rank(const zset *z, size_t rank) {
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_by_rank(z->dense, rank);
    return rank < z->zsl.length ? zsl_at_rank(&z->zsl, rank + 1, NULL) : NULL;
}

size_t zset_node_rank(const zset *z, const zset_node *n) {
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_node_rank(z->dense, n);
    zset_key k = node_key(&z->zsl, n, 1);
    size_t rank[ZSET_MAX_LEVEL];
    zsl_descend(&z->zsl, key_before, &k, NULL, rank); /* stops on n: the last node at or before its key */
    return rank[0] - 1;
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

/* Every range is searched the same way in both layouts, through two
 * predicates on a position, each true on a prefix of the order: below
 * (the position sorts before the range's start) and within (it does not
 * pass the range's end). The first position in the range is the first
 * one not below, if it is within; the last is the last one within, if it
 * is not below. An empty range (min above max) needs no test of its own:
 * the first position not below it is past its end. */
typedef struct range_kind {
    zset_pred below, within;
} range_kind;

/* What the predicates are given: the set, to read a position in its
 * layout, and the range. */
typedef struct range_arg {
    const zset *z;
    const range_kind *kind;
    const void *r; /* a zset_score_range or a zset_lex_range */
} range_arg;

static int below_score_min(const zset_node *n, const void *arg) {
    const range_arg *a = arg;
    return !zset_score_gte_min(zset_node_score(a->z, n), a->r);
}
static int within_score_max(const zset_node *n, const void *arg) {
    const range_arg *a = arg;
    return zset_score_lte_max(zset_node_score(a->z, n), a->r);
}
static int below_lex_min(const zset_node *n, const void *arg) {
    const range_arg *a = arg;
    size_t len;
    const char *m = zset_node_member(a->z, n, &len);
    return !zset_lex_gte_min(m, len, a->r);
}
static int within_lex_max(const zset_node *n, const void *arg) {
    const range_arg *a = arg;
    size_t len;
    const char *m = zset_node_member(a->z, n, &len);
    return zset_lex_lte_max(m, len, a->r);
}

static const range_kind score_kind = {below_score_min, within_score_max};
static const range_kind lex_kind = {below_lex_min, within_lex_max};

static zset_node *first_in_range(const zset *z, const range_kind *kind, const void *r) {
    range_arg a = {z, kind, r};
    zset_node *n = z->layout == ZSET_LAYOUT_DENSE ? dense_first_not(z->dense, kind->below, &a)
                                                  : zsl_descend(&z->zsl, kind->below, &a, NULL, NULL)->level[0].forward;
    return n && kind->within(n, &a) ? n : NULL;
}

static zset_node *last_in_range(const zset *z, const range_kind *kind, const void *r) {
    range_arg a = {z, kind, r};
    zset_node *n;
    if (z->layout == ZSET_LAYOUT_DENSE) {
        n = dense_last_where(z->dense, kind->within, &a);
    } else {
        n = zsl_descend(&z->zsl, kind->within, &a, NULL, NULL);
        if (n == z->zsl.header) n = NULL;
    }
    return n && !kind->below(n, &a) ? n : NULL;
}

zset_node *zset_first_in_score_range(const zset *z, const zset_score_range *r) {
    return first_in_range(z, &score_kind, r);
}
zset_node *zset_last_in_score_range(const zset *z, const zset_score_range *r) {
    return last_in_range(z, &score_kind, r);
}
zset_node *zset_first_in_lex_range(const zset *z, const zset_lex_range *r) { return first_in_range(z, &lex_kind, r); }
zset_node *zset_last_in_lex_range(const zset *z, const zset_lex_range *r) { return last_in_range(z, &lex_kind, r); }

/* Removes x (found with update[]) from both structures and frees it. */
static void delete_found(zset *z, zset_node *x, zset_node **update) {
    zsl_unlink(&z->zsl, x, update);
    index_remove(z, x);
    node_free(z->layout, x);
}

/* Removes, from n on, the nodes for which within() holds (every node when
 * within is NULL), at most `most` of them; update[] is from the search
 * that stopped just before n, and stays right as the loop goes: every
 * node removed sits just after it. */
static size_t zsl_delete_run(zset *z, zset_node *n, zset_node **update, zset_pred within, const void *arg,
                             size_t most) {
    size_t removed = 0;
    for (; n && removed < most && (!within || within(n, arg)); removed++) {
        zset_node *next = n->level[0].forward;
        delete_found(z, n, update);
        n = next;
    }
    return removed;
}

/* The dense layout removes a run one member at a time, each found again
 * from the top by next(): O(log n) per member. */
static size_t dense_delete_run(zset *z, zset_node *(*next)(const zset *, const void *), const void *arg, size_t most) {
    size_t removed = 0;
    for (zset_node *n; removed < most && (n = next(z, arg)); removed++) {
        size_t len;
        const char *m = dense_node_member(n, &len);
        dense_delete(z->dense, m, len);
    }
    return removed;
}

static zset_node *first_of_range(const zset *z, const void *arg) {
    const range_arg *a = arg;
    return first_in_range(z, a->kind, a->r);
}

static size_t delete_range(zset *z, const range_kind *kind, const void *r) {
    range_arg a = {z, kind, r};
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_delete_run(z, first_of_range, &a, SIZE_MAX);
    zset_node *update[ZSET_MAX_LEVEL];
    zset_node *n = zsl_descend(&z->zsl, kind->below, &a, update, NULL)->level[0].forward;
    return zsl_delete_run(z, n, update, kind->within, &a, SIZE_MAX);
}

size_t zset_delete_score_range(zset *z, const zset_score_range *r) { return delete_range(z, &score_kind, r); }
size_t zset_delete_lex_range(zset *z, const zset_lex_range *r) { return delete_range(z, &lex_kind, r); }

/* The member at rank *start, which every removal moves up to it. */
static zset_node *at_start(const zset *z, const void *start) { return dense_by_rank(z->dense, *(const size_t *)start); }

size_t zset_delete_rank_range(zset *z, size_t start, size_t end) {
    if (start > end || start >= zset_length(z)) return 0;
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_delete_run(z, at_start, &start, end - start + 1);
    zset_node *update[ZSET_MAX_LEVEL];
    zset_node *n = zsl_at_rank(&z->zsl, start + 1, update);
    return zsl_delete_run(z, n, update, NULL, NULL, end - start + 1);
}

/* ---- random members and scans ------------------------------------------------------------- */

zset_node *zset_random(zset *z) {
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_random(z->dense);
    void *e;
    return hashtable_fair_random_entry(z->index, &e) ? entry_node(z, e) : NULL;
}

static zset_node *scan_position(const void *z, void *entry) { return entry_node(z, entry); }

size_t zset_scan(zset *z, size_t cursor, zset_scan_fn fn, void *privdata) {
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_scan(z->dense, cursor, fn, privdata);
    return zset_index_scan(z->index, cursor, scan_position, z, fn, privdata);
}

/* ---- verification ------------------------------------------------------------------------------ */

/*@ zset-verify */
int zset_verify(zset *z) {
    if (z->layout == ZSET_LAYOUT_DENSE) return dense_verify(z->dense);
    const zskiplist *zsl = &z->zsl;
    ZSET_VERIFY(zsl->level >= 1 && zsl->level <= ZSET_MAX_LEVEL, "level %d out of bounds", zsl->level);
    ZSET_VERIFY(hashtable_size(z->index) == zsl->length, "index holds %zu members, list %zu", hashtable_size(z->index),
                zsl->length);
    /* Level 0: order, backward pointers, tail, length, heights, the index. */
    size_t count = 0;
    int top = 0;
    const zset_node *prev = NULL;
    for (zset_node *n = zsl->header->level[0].forward; n; prev = n, n = n->level[0].forward) {
        count++;
        ZSET_VERIFY(n->backward == prev, "node %zu: backward pointer is wrong", count);
        size_t len;
        const char *m = member_of(zsl, n, &len);
        ZSET_VERIFY(!prev || node_cmp(zsl, prev, n->score, m, len) < 0, "node %zu: out of order", count);
        ZSET_VERIFY(!isnan(n->score), "node %zu: score is NaN", count);
        ZSET_VERIFY(n->height >= 1 && n->height <= zsl->level, "node %zu: height %d, list level %d", count, n->height,
                    zsl->level);
        if (n->height > top) top = n->height;
        ZSET_VERIFY(index_find(z, m, len) == n, "node %zu: the index does not lead to it", count);
    }
    ZSET_VERIFY(count == zsl->length, "list has %zu nodes, length says %zu", count, zsl->length);
    ZSET_VERIFY(zsl->tail == prev, "tail is not the last node");
    ZSET_VERIFY(top == zsl->level || (count == 0 && zsl->level == 1), "tallest node %d, list level %d", top,
                zsl->level);
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
                ZSET_VERIFY(w->height <= i, "level %d: node of height %d skipped", i, w->height);
            }
            if (!f) {
                ZSET_VERIFY(n->level[i].span == zsl->length - rank, "level %d: last span %zu, expected %zu", i,
                            n->level[i].span, zsl->length - rank);
                break;
            }
            w = f;
            steps++;
            ZSET_VERIFY(n->level[i].span == steps, "level %d at rank %zu: span %zu, expected %zu", i, rank,
                        n->level[i].span, steps);
            rank += steps;
            n = f;
        }
    }
    return 1;
}
/*@ end */
