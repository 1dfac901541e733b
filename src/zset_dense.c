/* zset_dense.c — the dense sorted set: a skiplist of leaves.
 *
 * Step 8 (keyspace layer). Owns the leaves of every set whose layout is
 * "dense" (zset-layout, the default) and the member bytes packed inside
 * them. zset.c hands it every dense set; it calls zset_common.c (a leaf's
 * height, the index's key view, the index scan), never zset.c.
 * Threads: main thread only. Valkey: the fbtree B+ tree that replaced
 * the skiplist (Valkey pull request #4359) keeps many members per node for
 * the same reason; this file reaches that density with the skiplist's own
 * algorithm, "unrolled".
 *
 * HOW IT WORKS
 *
 * A skiplist node per member pays two pointers and a span per level and
 * one allocation with its allocator rounding for every member: ~60 of a
 * member's ~70 bytes are structure. Here a node of the skiplist is a leaf
 * holding up to DENSE_FANOUT members in order, so the structure is paid
 * once per leaf. The invariants:
 *
 *  1. Order. Inside a leaf, order[0..n) lists its members' slots in
 *     (score, member) order; along level 0 every leaf's members sort after
 *     the previous leaf's. No leaf is empty; an empty set has no leaf.
 *  2. Spans count members. A leaf's rank is the rank of its first member
 *     (from 1; the header's is 0; past the end is length + 1), and
 *     level[i].span = rank(forward) - rank(leaf), with past-the-end for a
 *     NULL forward. At level 0 a leaf's span is therefore its n, and the
 *     header's is 1. Inserting or removing a member changes by one the span
 *     of the last leaf at or before its leaf at every level.
 *  3. Slots do not move. A member keeps its slot (0..63) while it stays in
 *     its leaf; order[] moves, slots do not. Its bytes are at heap +
 *     off[slot]: a header byte, the score, the length as a varint, the
 *     member. The header byte says how the score is stored: 8 bytes of
 *     double, or an integer in 1-6 bytes (ZADD with integer scores is the
 *     common case; -0.0 and fractions stay doubles).
 *  4. The index. The member hashtable stores, per member, its leaf's
 *     address with the slot in the top byte (a tagged pointer: user
 *     addresses on x86-64 and AArch64 fit in 48 bits). A split moves
 *     members to a new leaf, and a merge after a removal moves a leaf's
 *     members into the leaf before it; each re-points the entries of the
 *     members it moves. Nothing else moves a member between leaves, so
 *     the index is right after every change.
 *  5. A leaf keeps a copy of its first member's score beside its levels,
 *     so that a search by score steps from leaf to leaf touching what a
 *     skiplist node's search touches (the level and the score), not the
 *     leaf's heap.
 *
 * WHEN A LEAF IS FULL
 *
 * At DENSE_FANOUT members, or when a member would take its members' bytes
 * past DENSE_HEAP_SPLIT: then it splits in half, except that a member
 * after a full last leaf, or next to a lone member that fills its leaf by
 * itself, gets a new leaf (members added in order thus fill every leaf,
 * and a big member sits alone). A removal that leaves a leaf under a
 * quarter full merges it with a neighbour when the two fit in half a
 * leaf, so removals cannot leave a long run of nearly empty leaves
 * behind.
 *
 * A position handed out (zset_node *) is the leaf's address with the
 * position inside it in the top byte; it is valid until the set changes.
 */
#include "zset_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtable.h"
#include "zmalloc.h"

#define DENSE_FANOUT 64       /* members per leaf at most: slots fit a uint64_t */
#define DENSE_HEAP_SPLIT 2048 /* member bytes a leaf of several members stays under */
#define TAG_SHIFT 56
#define ADDR_MASK ((UINT64_C(1) << TAG_SHIFT) - 1)

typedef struct leaf leaf;
struct dlevel {
    leaf *forward;
    size_t span;
};

/* The fields a search reads when it passes through a leaf, first_score
 * and the levels, come last and together, so that passing costs one
 * cache line, as it does at a skiplist node; the arrays the leaf's own
 * members need come first. */
struct leaf {
    uint8_t order[DENSE_FANOUT]; /* slot of the member at each position */
    uint32_t off[DENSE_FANOUT];  /* heap offset of each slot's member */
    leaf *backward;
    unsigned char *heap;
    uint64_t slots;         /* bit s set: slot s holds a member */
    size_t used, cap, dead; /* heap bytes written, allocated, and freed among the written */
    uint8_t n, height;
    double first_score; /* its first member's (invariant 5) */
    struct dlevel level[];
};

struct dense {
    leaf *header, *tail;
    size_t length;
    int level;
    hashtable *index; /* member -> leaf | slot << 56 */
};

/* ---- one member's bytes -------------------------------------------------------------- */

typedef struct entry {
    double score;
    const char *member;
    size_t len;
    size_t size; /* bytes in the heap */
} entry;

/*@ dense-entry */
/* 1..6 when s is an integer that fits in that many bytes, else 0. */
static int int_bytes(double s, int64_t *v) {
    if (!(s >= -140737488355328.0 && s < 140737488355328.0) || s != floor(s) || (s == 0 && signbit(s))) return 0;
    *v = (int64_t)s;
    int k = 1;
    while (k < 6 && (*v < -(INT64_C(1) << (8 * k - 1)) || *v >= (INT64_C(1) << (8 * k - 1)))) k++;
    return k;
}

/* Writes the member's bytes at p (when p is non-NULL); returns their size. */
static size_t entry_encode(unsigned char *p, double score, const char *member, size_t len) {
    int64_t v;
    int k = int_bytes(score, &v);
    size_t n = 1 + (k ? (size_t)k : 8) + zset_varint_size(len) + len;
    if (!p) return n;
    *p++ = (unsigned char)k;
    if (k) {
        for (int i = 0; i < k; i++) *p++ = (unsigned char)((uint64_t)v >> (8 * i));
    } else {
        memcpy(p, &score, 8);
        p += 8;
    }
    p += zset_varint_put(p, len);
    if (len) memcpy(p, member, len);
    return n;
}
/*@ end */

/* The score alone: what most comparisons need (searches decide on the
 * score and read the member only on a tie). */
static double entry_score(const unsigned char *p) {
    int k = *p++;
    if (!k) {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    uint64_t u = 0;
    for (int i = 0; i < k; i++) u |= (uint64_t)p[i] << (8 * i);
    int shift = 64 - 8 * k;
    return (double)((int64_t)(u << shift) >> shift);
}

/* The member alone: the score's bytes skipped unread. */
static const char *entry_member(const unsigned char *p, size_t *len) {
    p += 1 + (*p ? *p : 8);
    p += zset_varint_get(p, len);
    return (const char *)p;
}

static void entry_decode(const unsigned char *p, entry *e) {
    e->score = entry_score(p);
    e->member = entry_member(p, &e->len);
    e->size = (size_t)((const unsigned char *)e->member - p) + e->len;
}

/*@ dense-member-at */
static const unsigned char *slot_bytes(const leaf *l, int slot) { return l->heap + l->off[slot]; }
static const unsigned char *pos_bytes(const leaf *l, int pos) { return slot_bytes(l, l->order[pos]); }
static void at(const leaf *l, int pos, entry *e) { entry_decode(pos_bytes(l, pos), e); }

static int entry_cmp(const entry *e, double score, const char *member, size_t len) {
    if (e->score != score) return e->score < score ? -1 : 1;
    return zset_member_cmp(e->member, e->len, member, len);
}

/* The score at a position; the first one from the leaf's own copy, so a
 * search that steps from leaf to leaf reads no heap. */
static double score_at(const leaf *l, int pos) { return pos ? entry_score(pos_bytes(l, pos)) : l->first_score; }

/* entry_cmp of the member at a position, decoding the member only on a tie. */
static int cmp_at(const leaf *l, int pos, double score, const char *member, size_t len) {
    double s = score_at(l, pos);
    if (s != score) return s < score ? -1 : 1;
    entry e;
    at(l, pos, &e);
    return zset_member_cmp(e.member, e.len, member, len);
}
/*@ end */

/* ---- tags ------------------------------------------------------------------------------ */

/*@ dense-tags */
static void *tag(const leaf *l, int n) { return (void *)((uintptr_t)l | ((uintptr_t)n << TAG_SHIFT)); }
static leaf *tag_leaf(const void *t) { return (leaf *)((uintptr_t)t & ADDR_MASK); }
static int tag_num(const void *t) { return (int)((uintptr_t)t >> TAG_SHIFT); }
/*@ end */

static int pos_of_slot(const leaf *l, int slot) {
    for (int i = 0; i < l->n; i++)
        if (l->order[i] == slot) return i;
    return -1;
}

/* The position of the member an index entry (a leaf tagged with a slot)
 * names; a zset_entry_pos, so d is there for the signature's sake. */
static zset_node *entry_pos(const void *d, void *t) {
    (void)d;
    return tag(tag_leaf(t), pos_of_slot(tag_leaf(t), tag_num(t)));
}

/* ---- the index --------------------------------------------------------------------------- */

/* The member in a tagged entry, as the index's key (zset_key_view). */
static const void *index_entry_key(const void *t) {
    entry e;
    entry_decode(slot_bytes(tag_leaf(t), tag_num(t)), &e);
    return zset_key_view(e.member, e.len);
}

static const hashtable_type index_type = {
    .hash_key = hashtable_key_hash,
    .entry_get_key = index_entry_key,
    .key_compare = hashtable_key_compare,
};

static void *index_find(dense *d, const char *member, size_t len) {
    hashtable_key k = {member, len};
    void *found;
    return hashtable_find(d->index, &k, &found) ? found : NULL;
}

/* ---- a leaf's heap ---------------------------------------------------------------------------- */

static size_t round_cap(size_t n) { return (n + 127) & ~(size_t)127; }

/* Rewrites the heap with the live members only, room for `extra` more. */
static void heap_compact(leaf *l, size_t extra) {
    size_t live = l->used - l->dead, cap = round_cap(live + extra);
    unsigned char *h = cap ? zmalloc(cap) : NULL;
    size_t o = 0;
    for (int i = 0; i < l->n; i++) {
        int s = l->order[i];
        entry e;
        entry_decode(slot_bytes(l, s), &e);
        memcpy(h + o, slot_bytes(l, s), e.size);
        l->off[s] = (uint32_t)o;
        o += e.size;
    }
    zfree(l->heap);
    l->heap = h;
    l->used = o;
    l->cap = cap;
    l->dead = 0;
}

/* Puts size bytes at position pos; returns the slot they got. */
static int leaf_put(leaf *l, int pos, const unsigned char *bytes, size_t size) {
    if (l->used + size > l->cap) {
        if (l->dead >= size)
            heap_compact(l, size);
        else {
            l->cap = round_cap(l->used + size);
            l->heap = zrealloc(l->heap, l->cap);
        }
    }
    int slot = __builtin_ctzll(~l->slots);
    l->slots |= UINT64_C(1) << slot;
    l->off[slot] = (uint32_t)l->used; /* < 2 * DENSE_HEAP_SPLIT, or 0 in a leaf of one member */
    memcpy(l->heap + l->used, bytes, size);
    l->used += size;
    memmove(&l->order[pos + 1], &l->order[pos], (size_t)(l->n - pos));
    l->order[pos] = (uint8_t)slot;
    l->n++;
    if (pos == 0) l->first_score = entry_score(bytes);
    return slot;
}

static void leaf_remove(leaf *l, int pos) {
    int slot = l->order[pos];
    entry e;
    entry_decode(slot_bytes(l, slot), &e);
    l->dead += e.size;
    l->slots &= ~(UINT64_C(1) << slot);
    memmove(&l->order[pos], &l->order[pos + 1], (size_t)(l->n - pos - 1));
    l->n--;
    if (pos == 0 && l->n) l->first_score = entry_score(pos_bytes(l, 0));
    if (l->n && l->dead > l->used / 2) heap_compact(l, 0);
}

static leaf *leaf_new(int height) {
    leaf *l = zcalloc(sizeof(*l) + (size_t)height * sizeof(struct dlevel));
    l->height = (uint8_t)height;
    return l;
}

static void leaf_free(leaf *l) {
    zfree(l->heap);
    zfree(l);
}

/* First position whose member does not sort before (score, member). */
static int lower_bound(const leaf *l, double score, const char *member, size_t len) {
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cmp_at(l, mid, score, member, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- the skiplist of leaves ---------------------------------------------------------------------- */

dense *dense_create(void) {
    dense *d = zmalloc(sizeof(*d));
    d->header = leaf_new(ZSET_MAX_LEVEL);
    d->header->level[0].span = 1;
    d->tail = NULL;
    d->length = 0;
    d->level = 1;
    d->index = hashtable_create(&index_type);
    return d;
}

void dense_free(dense *d) {
    hashtable_release(d->index);
    for (leaf *l = d->header, *next; l; l = next) {
        next = l->level[0].forward;
        leaf_free(l);
    }
    zfree(d);
}

size_t dense_length(const dense *d) { return d->length; }

/*@ dense-descend */
/* Walks down to the last leaf, at every level, whose first member is
 * before(); the header where none is. update[i] / rank[i] (when non-NULL)
 * get that leaf and its rank per level. */
static leaf *descend(const dense *d, zset_pred before, const void *arg, leaf **update, size_t *rank) {
    leaf *x = d->header;
    size_t r = 0;
    for (int i = d->level - 1; i >= 0; i--) {
        while (x->level[i].forward && before(tag(x->level[i].forward, 0), arg)) {
            r += x->level[i].span;
            x = x->level[i].forward;
        }
        if (update) update[i] = x;
        if (rank) rank[i] = r;
    }
    return x;
}
/*@ end */

/* The dense layout's key test (a zset_pred on a zset_key). */
static int key_before(const zset_node *h, const void *arg) {
    const zset_key *k = arg;
    int c = cmp_at(tag_leaf(h), tag_num(h), k->score, k->member, k->len);
    return c < 0 || (k->or_equal && c == 0);
}

/* At level i, the last leaf at or before leaf l (found by a descent that
 * filled update[]), given that l's level-i predecessor may be `prev`. */
static leaf *at_or_before(int i, leaf *l, leaf *prev, leaf **update) {
    if (i < l->height) return l;
    if (prev && i < prev->height) return prev;
    return update[i];
}

/* Links the new leaf c, whose first member will have rank rc, after the
 * leaf `after` (header included); update[]/rank[] from the descent. */
static void link_leaf(dense *d, leaf *c, leaf *after, size_t r_after, size_t rc, leaf **update, size_t *rank) {
    if (c->height > d->level) { /* new levels start at the header and span everything */
        for (int i = d->level; i < c->height; i++) {
            update[i] = d->header;
            rank[i] = 0;
            d->header->level[i].forward = NULL;
            d->header->level[i].span = d->length + 1;
        }
        d->level = c->height;
    }
    for (int i = 0; i < c->height; i++) {
        leaf *p = i < after->height ? after : update[i];
        size_t rp = i < after->height ? r_after : rank[i];
        c->level[i].forward = p->level[i].forward;
        c->level[i].span = p->level[i].span - (rc - rp);
        p->level[i].forward = c;
        p->level[i].span = rc - rp;
    }
    c->backward = after == d->header ? NULL : after;
    if (c->level[0].forward)
        c->level[0].forward->backward = c;
    else
        d->tail = c;
}

/*@ dense-split */
/* Moves l's members from position mid on into a new leaf linked after l,
 * re-pointing their index entries. */
static void split(dense *d, leaf *l, size_t rl, int mid, leaf **update, size_t *rank) {
    leaf *c = leaf_new(zset_random_level());
    link_leaf(d, c, l, rl, rl + (size_t)mid, update, rank);
    for (int i = mid; i < l->n; i++) {
        entry e;
        at(l, i, &e);
        int s = leaf_put(c, c->n, slot_bytes(l, l->order[i]), e.size);
        hashtable_key k = {e.member, e.len}; /* still l's bytes: l is untouched until below */
        void **ref = hashtable_find_ref(d->index, &k);
        *ref = tag(c, s);
    }
    while (l->n > mid) leaf_remove(l, l->n - 1);
    heap_compact(l, 0);
}
/*@ end */

/*@ dense-insert */
void dense_insert(dense *d, double score, const char *member, size_t len) {
    unsigned char small[64];
    size_t size = entry_encode(NULL, score, member, len);
    unsigned char *bytes = size <= sizeof(small) ? small : zmalloc(size);
    entry_encode(bytes, score, member, len);
    zset_key k = {score, member, len, 0, d};
    for (;;) {
        leaf *update[ZSET_MAX_LEVEL];
        size_t rank[ZSET_MAX_LEVEL];
        leaf *l = descend(d, key_before, &k, update, rank), *prev = NULL;
        size_t rl = rank[0];
        if (l == d->header && l->level[0].forward) { /* before every member: the first leaf's front */
            l = l->level[0].forward;
            rl = 1;
        }
        int pos = l == d->header ? 0 : lower_bound(l, score, member, len);
        int full = l->n == DENSE_FANOUT || (l->n >= 1 && l->used - l->dead + size > DENSE_HEAP_SPLIT);
        if (l == d->header || (full && pos == l->n && (l == d->tail || l->n == 1))) {
            /* The set is empty, or this member goes after a full last
             * leaf (it starts a leaf of its own, so members added in
             * order fill every leaf), or after a leaf whose one member
             * fills it by bytes. */
            leaf *c = leaf_new(zset_random_level());
            link_leaf(d, c, l, rl, l == d->header ? 1 : rl + l->n, update, rank);
            prev = l;
            l = c;
            pos = 0;
        } else if (full && l->n == 1) {
            /* Before the one member of a leaf it fills by bytes: that
             * member moves to a new leaf after this one, which takes the
             * new member alone. */
            split(d, l, rl, 0, update, rank);
        } else if (full) {
            split(d, l, rl, l->n / 2, update, rank);
            continue; /* search again: the member may belong to either half */
        }
        int slot = leaf_put(l, pos, bytes, size);
        hashtable_add(d->index, tag(l, slot));
        for (int i = 0; i < d->level; i++) at_or_before(i, l, prev, update)->level[i].span++;
        d->length++;
        break;
    }
    if (bytes != small) zfree(bytes);
}
/*@ end */

/* Unlinks and frees leaf l, given update[] from a descent that stopped
 * just before it; `gone` of the members its spans counted are gone (the
 * others moved to the leaf before it). */
static void unlink_leaf(dense *d, leaf *l, leaf **update, size_t gone) {
    for (int i = 0; i < d->level; i++) {
        if (update[i]->level[i].forward == l) {
            update[i]->level[i].span += l->level[i].span - gone;
            update[i]->level[i].forward = l->level[i].forward;
        } else {
            update[i]->level[i].span -= gone;
        }
    }
    if (l->level[0].forward)
        l->level[0].forward->backward = l->backward;
    else
        d->tail = l->backward;
    while (d->level > 1 && !d->header->level[d->level - 1].forward) d->level--;
    leaf_free(l);
}

/* Two neighbours that together fill at most half a leaf become one:
 * removals alone never leave a run of nearly empty leaves. */
static int fit_together(const leaf *a, const leaf *b) {
    return a->n + b->n <= DENSE_FANOUT / 2 && a->used - a->dead + b->used - b->dead <= DENSE_HEAP_SPLIT;
}

/* Moves every member of a's successor b to the end of a, re-pointing
 * their index entries, and unlinks b. */
static void merge_next(dense *d, leaf *a) {
    leaf *b = a->level[0].forward, *update[ZSET_MAX_LEVEL];
    entry e;
    at(b, 0, &e);
    zset_key k = {e.score, e.member, e.len, 0, d};
    descend(d, key_before, &k, update, NULL); /* b's predecessors, a among them */
    for (int i = 0; i < b->n; i++) {
        at(b, i, &e);
        int s = leaf_put(a, a->n, pos_bytes(b, i), e.size);
        hashtable_key hk = {e.member, e.len}; /* b's bytes: b is untouched until unlinked */
        *hashtable_find_ref(d->index, &hk) = tag(a, s);
    }
    unlink_leaf(d, b, update, 0);
}

int dense_delete(dense *d, const char *member, size_t len) {
    void *t = index_find(d, member, len);
    if (!t) return 0;
    leaf *l = tag_leaf(t), *update[ZSET_MAX_LEVEL];
    int pos = pos_of_slot(l, tag_num(t));
    entry e;
    at(l, pos, &e);
    zset_key k = {e.score, e.member, e.len, l->n > 1, d};
    /* A leaf that keeps members: find the leaves whose spans cover it
     * (the descent stops on l itself). A leaf that empties: find its
     * predecessors and unlink it, merging spans. */
    descend(d, key_before, &k, update, NULL);
    hashtable_key hk = {e.member, e.len};
    hashtable_pop(d->index, &hk, NULL);
    d->length--;
    if (l->n == 1) {
        unlink_leaf(d, l, update, 1);
        return 1;
    }
    for (int i = 0; i < d->level; i++) at_or_before(i, l, NULL, update)->level[i].span--;
    leaf_remove(l, pos);
    if (l->n < DENSE_FANOUT / 4) {
        if (l->level[0].forward && fit_together(l, l->level[0].forward))
            merge_next(d, l);
        else if (l->backward && fit_together(l->backward, l))
            merge_next(d, l->backward);
    }
    return 1;
}

int dense_find(dense *d, const char *member, size_t len, double *score) {
    void *t = index_find(d, member, len);
    if (t && score) {
        entry e;
        entry_decode(slot_bytes(tag_leaf(t), tag_num(t)), &e);
        *score = e.score;
    }
    return t != NULL;
}

zset_node *dense_find_node(dense *d, const char *member, size_t len) {
    void *t = index_find(d, member, len);
    return t ? entry_pos(d, t) : NULL;
}

/* ---- positions ------------------------------------------------------------------------------ */

double dense_node_score(const zset_node *n) { return score_at(tag_leaf(n), tag_num(n)); }

/* A range reply without scores reads only these: no score decoded. */
const char *dense_node_member(const zset_node *n, size_t *len) {
    return entry_member(pos_bytes(tag_leaf(n), tag_num(n)), len);
}

zset_node *dense_first(const dense *d) {
    leaf *l = d->header->level[0].forward;
    return l ? tag(l, 0) : NULL;
}

zset_node *dense_last(const dense *d) { return d->tail ? tag(d->tail, d->tail->n - 1) : NULL; }

zset_node *dense_next(const dense *d, const zset_node *n) {
    (void)d;
    leaf *l = tag_leaf(n);
    int pos = tag_num(n);
    if (pos + 1 < l->n) return tag(l, pos + 1);
    return l->level[0].forward ? tag(l->level[0].forward, 0) : NULL;
}

zset_node *dense_prev(const dense *d, const zset_node *n) {
    (void)d;
    leaf *l = tag_leaf(n);
    int pos = tag_num(n);
    if (pos > 0) return tag(l, pos - 1);
    return l->backward ? tag(l->backward, l->backward->n - 1) : NULL;
}

zset_node *dense_by_rank(const dense *d, size_t rank) {
    if (rank >= d->length) return NULL;
    size_t want = rank + 1, r = 0;
    leaf *x = d->header;
    for (int i = d->level - 1; i >= 0; i--)
        while (x->level[i].forward && r + x->level[i].span <= want) {
            r += x->level[i].span;
            x = x->level[i].forward;
        }
    return tag(x, (int)(want - r));
}

size_t dense_node_rank(const dense *d, const zset_node *n) {
    entry e;
    leaf *l = tag_leaf(n);
    at(l, 0, &e);
    zset_key k = {e.score, e.member, e.len, 1, d};
    size_t rank[ZSET_MAX_LEVEL];
    leaf *update[ZSET_MAX_LEVEL];
    descend(d, key_before, &k, update, rank); /* stops on l: its first member is <= itself */
    return rank[0] + (size_t)tag_num(n) - 1;
}

zset_node *dense_first_not(const dense *d, zset_pred before, const void *arg) {
    leaf *l = descend(d, before, arg, NULL, NULL);
    if (l == d->header) return dense_first(d);
    int lo = 0, hi = l->n; /* l's first member is before(): the answer is past it */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (before(tag(l, mid), arg))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < l->n) return tag(l, lo);
    return l->level[0].forward ? tag(l->level[0].forward, 0) : NULL;
}

zset_node *dense_last_where(const dense *d, zset_pred before, const void *arg) {
    leaf *l = descend(d, before, arg, NULL, NULL);
    if (l == d->header) return NULL;
    zset_node *n = dense_first_not(d, before, arg);
    return n ? dense_prev(d, n) : dense_last(d);
}

/* ---- random members and scans ----------------------------------------------------------------- */

zset_node *dense_random(dense *d) {
    void *t;
    return hashtable_fair_random_entry(d->index, &t) ? entry_pos(d, t) : NULL;
}

size_t dense_scan(dense *d, size_t cursor, zset_scan_fn fn, void *privdata) {
    return zset_index_scan(d->index, cursor, entry_pos, d, fn, privdata);
}

/* ---- verification ------------------------------------------------------------------------------ */

int dense_verify(dense *d) {
    ZSET_VERIFY(d->level >= 1 && d->level <= ZSET_MAX_LEVEL, "level %d", d->level);
    ZSET_VERIFY(hashtable_size(d->index) == d->length, "index %zu, length %zu", hashtable_size(d->index), d->length);
    size_t count = 0;
    int top = 1;
    const leaf *prev = NULL;
    entry last = {0};
    for (leaf *l = d->header->level[0].forward; l; prev = l, l = l->level[0].forward) {
        ZSET_VERIFY(l->n >= 1 && l->n <= DENSE_FANOUT, "a leaf of %d members", l->n);
        ZSET_VERIFY(__builtin_popcountll(l->slots) == l->n, "slots and n disagree");
        ZSET_VERIFY(l->backward == prev, "backward pointer");
        ZSET_VERIFY(l->height >= 1 && l->height <= d->level, "height %d, level %d", l->height, d->level);
        ZSET_VERIFY(l->used <= l->cap && l->dead <= l->used, "heap counts");
        ZSET_VERIFY(l->first_score == entry_score(pos_bytes(l, 0)), "the leaf's copy of its first score is stale");
        if (l->height > top) top = l->height;
        size_t live = 0;
        for (int i = 0; i < l->n; i++) {
            int s = l->order[i];
            ZSET_VERIFY(l->slots & (UINT64_C(1) << s), "position %d: slot %d not in use", i, s);
            entry e;
            at(l, i, &e);
            live += e.size;
            ZSET_VERIFY(!isnan(e.score), "NaN score");
            ZSET_VERIFY(count == 0 || entry_cmp(&last, e.score, e.member, e.len) < 0, "member %zu out of order", count);
            void *t = index_find(d, e.member, e.len);
            ZSET_VERIFY(t && tag_leaf(t) == l && tag_num(t) == s, "member %zu: the index does not lead to it", count);
            last = e;
            count++;
        }
        ZSET_VERIFY(live == l->used - l->dead, "heap: %zu live bytes, counts say %zu", live, l->used - l->dead);
    }
    ZSET_VERIFY(count == d->length, "%zu members, length %zu", count, d->length);
    ZSET_VERIFY(d->tail == prev, "tail");
    ZSET_VERIFY(top == d->level, "tallest leaf %d, level %d", top, d->level);
    for (int i = 0; i < d->level; i++) {
        const leaf *x = d->header, *w = d->header;
        size_t rx = 0, rw = 0; /* ranks of x and of the level-0 walker w */
        for (;;) {
            const leaf *f = x->level[i].forward;
            while (w != f) {
                const leaf *nx = w->level[0].forward;
                ZSET_VERIFY(nx || !f, "level %d: forward not on level 0", i);
                if (w != x) ZSET_VERIFY(w->height <= i, "level %d: a leaf of height %d skipped", i, w->height);
                rw += w == d->header ? 1 : w->n;
                if (!nx) break;
                w = nx;
            }
            size_t rf = f ? rw : d->length + 1;
            ZSET_VERIFY(x->level[i].span == rf - rx, "level %d: span %zu, expected %zu", i, x->level[i].span, rf - rx);
            if (!f) break;
            x = f;
            rx = rf;
        }
    }
    return 1;
}
