/* list.c — the list type: one listpack while small, a quicklist (a chain
 * of listpack nodes) when large.
 *
 * Not a step (keyspace layer). Owns every list value's listpacks and
 * quicklist nodes. Knows no client: cmd_list.c parses and replies. Threads:
 * main thread only. Valkey: src/t_list.c (listTypePush, listTypePop,
 * listTypeTryConvertListpack, listTypeTryConvertQuicklist, listTypeDelRange),
 * src/quicklist.c (quicklistNodeLimit, quicklistNodeExceedsLimit,
 * _quicklistNodeAllowInsert, _quicklistInsert, quicklistReplaceEntry,
 * _quicklistSplitNode, _quicklistMergeNodes, quicklistDelRange) — the ideas,
 * written again.
 *
 * THE TWO ENCODINGS
 *
 * A list is a sequence of byte strings, pushed and popped at both ends,
 * read by index and by range. A small list is one listpack (listpack.h):
 * every element packed back to back in one allocation, 2 to 10 bytes of
 * header each. Nothing is cheaper in memory, and a push at the tail is an
 * append; but every change at the head or in the middle moves the bytes
 * behind it, so a listpack must stay small.
 *
 * A large list is a quicklist: a doubly linked chain of nodes, each
 * holding one listpack of bounded size. A push at either end touches one
 * small listpack at the end of the chain; a change in the middle moves
 * the bytes of one node only. A node is three pointers (prev, next, its
 * listpack): its element count is the listpack's own (lp_length, read
 * from the header), its size the listpack's (lp_bytes), so nothing is
 * stored twice and nothing can disagree. The quicklist keeps head, tail,
 * the element count (LLEN is O(1)), the node count, and the fill it was
 * created with.
 *
 * THE LIMIT (list-max-listpack-size, the "fill")
 *
 * A positive fill caps a node's elements; a node is then also kept under
 * 8 KB (Valkey's SIZE_SAFETY_LIMIT). A negative fill caps a node's bytes:
 * -1 4 KB, -2 8 KB (the default), -3 16 KB, -4 32 KB, -5 (or lower) 64 KB.
 * Whether an element fits in a node is estimated as Valkey does: the
 * node's bytes, plus the element's, plus 8 for the entry's header, must
 * stay under the limit. An element too large for any node (over the
 * byte limit, or over 8 KB under a count limit) gets a node of its own,
 * which nothing joins (Valkey stores it in a "plain" node; soloist keeps
 * it in a one-element listpack, the same for every reader).
 *
 * The list converts between the two as Valkey 7.2+ does. Before elements
 * are added (push, LINSERT, LSET, LMOVE's destination), a listpack whose
 * bytes plus the new elements' bytes, or whose length plus their count,
 * would pass the limit becomes a quicklist whose first node is that very
 * listpack (no copy). After elements are removed, a quicklist left with
 * a single node under half the limit (half the bytes, or half the count)
 * becomes that node's listpack again. The half is hysteresis: a list at
 * the limit does not flip on each push and pop.
 *
 * INVARIANTS (list_verify checks each)
 *
 *  1. The encoding is LISTPACK with o->ptr a listpack, or QUICKLIST with
 *     o->ptr a quicklist; every listpack passes lp_verify.
 *  2. A quicklist has no empty node, its nodes' lengths sum to its count,
 *     and nodes equals the chain's length; head->prev and tail->next are
 *     NULL and each node's next->prev is itself.
 *  3. Under a count limit no node holds more than fill elements.
 * The byte limit is not an invariant, only a rule for growing: a push
 * checks the elements' raw bytes before it adds them, as Valkey does, so
 * a listpack may end over the limit by its entries' headers (a batch of
 * one-letter elements takes three bytes each), and at conversion that
 * listpack becomes the first node as it is. A node the quicklist grew
 * itself stays within the limit (the estimate counts 8 header bytes per
 * element, at least what a listpack entry takes). A CONFIG SET that
 * lowers the limit leaves existing lists alone until their next push.
 *
 * Memory: listpacks, nodes and the quicklist come from zmalloc.
 */
#include "list.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "listpack.h"
#include "zmalloc.h"

long long list_max_listpack_size = -2;
long long list_compress_depth = 0;

typedef struct ql_node {
    struct ql_node *prev, *next;
    unsigned char *lp;
} ql_node;

typedef struct quicklist {
    ql_node *head, *tail;
    size_t count; /* elements in all nodes */
    size_t nodes;
    int fill; /* list-max-listpack-size when it was created */
} quicklist;

/* ---- the limit ------------------------------------------------------------- */

#define SIZE_SAFETY_LIMIT 8192 /* a node's bytes under a count limit */
#define SIZE_ESTIMATE_OVERHEAD 8
static const size_t byte_levels[] = {4096, 8192, 16384, 32768, 65536};

/* Valkey: quicklistNodeLimit. The limit of the other kind is SIZE_MAX:
 * none. */
static void node_limit(int fill, size_t *size, size_t *count) {
    *size = SIZE_MAX;
    *count = SIZE_MAX;
    if (fill >= 0) {
        *count = fill == 0 ? 1 : (size_t)fill;
    } else {
        size_t level = (size_t)(-(long)fill) - 1;
        if (level >= sizeof(byte_levels) / sizeof(*byte_levels)) level = sizeof(byte_levels) / sizeof(*byte_levels) - 1;
        *size = byte_levels[level];
    }
}

/* Valkey: quicklistNodeExceedsLimit. */
static int exceeds_limit(int fill, size_t bytes, size_t count) {
    size_t size_limit, count_limit;
    node_limit(fill, &size_limit, &count_limit);
    if (size_limit != SIZE_MAX) return bytes > size_limit;
    return bytes > SIZE_SAFETY_LIMIT || count > count_limit;
}

/* Valkey: isLargeElement — too big to share a node. */
static int is_large(int fill, size_t len) {
    size_t size_limit, count_limit;
    node_limit(fill, &size_limit, &count_limit);
    return len > (size_limit != SIZE_MAX ? size_limit : SIZE_SAFETY_LIMIT);
}

static int current_fill(void) {
    long long f = list_max_listpack_size;
    return f > INT_MAX ? INT_MAX : f < INT_MIN ? INT_MIN : (int)f;
}

/* ---- nodes ----------------------------------------------------------------------- */

static quicklist *ql_of(const obj *o) { return (quicklist *)(void *)o->ptr; }

static ql_node *node_new(unsigned char *lp) {
    ql_node *n = zmalloc(sizeof(*n));
    n->prev = n->next = NULL;
    n->lp = lp;
    return n;
}

static size_t node_len(const ql_node *n) { return lp_length(n->lp); }

/* Whether one more element of len bytes may join n (Valkey:
 * _quicklistNodeAllowInsert). */
static int node_allows(const quicklist *ql, const ql_node *n, size_t len) {
    if (!n || is_large(ql->fill, len)) return 0;
    return !exceeds_limit(ql->fill, lp_bytes(n->lp) + len + SIZE_ESTIMATE_OVERHEAD, node_len(n) + 1);
}

/* Links n after `after` (NULL: as the new head). */
static void link_after(quicklist *ql, ql_node *after, ql_node *n) {
    n->prev = after;
    n->next = after ? after->next : ql->head;
    if (n->next)
        n->next->prev = n;
    else
        ql->tail = n;
    if (after)
        after->next = n;
    else
        ql->head = n;
    ql->nodes++;
}

static void unlink_node(quicklist *ql, ql_node *n) {
    if (n->prev)
        n->prev->next = n->next;
    else
        ql->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        ql->tail = n->prev;
    ql->nodes--;
    lp_free(n->lp);
    zfree(n);
}

/* Appends every element of src's listpack to dst's (a merge). */
static void lp_append_all(ql_node *dst, ql_node *src) {
    unsigned char buf[LP_INTBUF_SIZE];
    for (unsigned char *p = lp_first(src->lp); p; p = lp_next(src->lp, p)) {
        size_t len;
        const unsigned char *s = lp_get_str(p, &len, buf);
        dst->lp = lp_append(dst->lp, s, len);
    }
}

/* Joins b (a's next) into a when the two fit in one node (Valkey:
 * _quicklistNodeAllowMerge, _quicklistMergeNodes); 1 if merged. */
static int try_merge(quicklist *ql, ql_node *a, ql_node *b) {
    if (!a || !b) return 0;
    if (exceeds_limit(ql->fill, lp_bytes(a->lp) + lp_bytes(b->lp), node_len(a) + node_len(b))) return 0;
    lp_append_all(a, b);
    unlink_node(ql, b);
    return 1;
}

/* Splits n so that its elements from index `at` on move to a new node
 * linked after it; returns the new node (at is inside (0, len)). */
static ql_node *split_node(quicklist *ql, ql_node *n, long at) {
    long len = (long)node_len(n);
    unsigned char *right = lp_new();
    unsigned char buf[LP_INTBUF_SIZE];
    for (unsigned char *p = lp_seek(n->lp, at); p; p = lp_next(n->lp, p)) {
        size_t l;
        const unsigned char *s = lp_get_str(p, &l, buf);
        right = lp_append(right, s, l);
    }
    n->lp = lp_delete_range(n->lp, at, (size_t)(len - at));
    ql_node *r = node_new(right);
    link_after(ql, n, r);
    return r;
}

/* Places a one-element node holding s after `after` (NULL: at the head),
 * then merges it with a neighbour if the limit allows. */
static void insert_own_node(quicklist *ql, ql_node *after, const unsigned char *s, size_t len) {
    ql_node *n = node_new(lp_append(lp_new(), s, len));
    link_after(ql, after, n);
    if (!try_merge(ql, n->prev, n)) try_merge(ql, n, n->next);
}

/* Finds the node holding index (0 <= index < count) and the index within
 * it, walking from the nearer end. */
static ql_node *node_at(const quicklist *ql, size_t index, long *offset) {
    if (index < ql->count / 2) {
        for (ql_node *n = ql->head; n; n = n->next) {
            size_t len = node_len(n);
            if (index < len) {
                *offset = (long)index;
                return n;
            }
            index -= len;
        }
    } else {
        size_t back = ql->count - 1 - index; /* 0: the last element */
        for (ql_node *n = ql->tail; n; n = n->prev) {
            size_t len = node_len(n);
            if (back < len) {
                *offset = (long)(len - 1 - back);
                return n;
            }
            back -= len;
        }
    }
    return NULL;
}

/* A position: the listpack that holds it (through the pointer that owns
 * the listpack, so a change can store the new address), the node (NULL
 * in a listpack list) and the element. */
typedef struct pos {
    ql_node *node;
    unsigned char **lpp;
    unsigned char *p;
} pos;

/* The element at index, or 0 when out of range. */
static int seek(obj *o, long index, pos *out) {
    long len = (long)list_length(o);
    if (index < 0) index += len;
    if (index < 0 || index >= len) return 0;
    if (o->encoding == OBJ_ENC_LISTPACK) {
        out->node = NULL;
        out->lpp = (unsigned char **)&o->ptr;
        out->p = lp_seek(*out->lpp, index);
        return 1;
    }
    long off;
    out->node = node_at(ql_of(o), (size_t)index, &off);
    out->lpp = &out->node->lp;
    out->p = lp_seek(out->node->lp, off);
    return 1;
}

/* Removes the element at *ps; ps then points at the element that
 * followed it in its listpack (NULL when it was the last there). A node
 * left empty is freed, and ps->lpp then no longer valid. */
static void delete_at(obj *o, pos *ps) {
    *ps->lpp = lp_delete(*ps->lpp, &ps->p);
    if (o->encoding == OBJ_ENC_QUICKLIST) {
        quicklist *ql = ql_of(o);
        ql->count--;
        if (node_len(ps->node) == 0) {
            unlink_node(ql, ps->node);
            ps->node = NULL;
            ps->lpp = NULL;
            ps->p = NULL;
        }
    }
}

/* ---- the object ---------------------------------------------------------------------- */

static void quicklist_free(quicklist *ql) {
    ql_node *n = ql->head;
    while (n) {
        ql_node *next = n->next;
        lp_free(n->lp);
        zfree(n);
        n = next;
    }
    zfree(ql);
}

static void object_free(obj *o) {
    if (o->encoding == OBJ_ENC_LISTPACK)
        lp_free((unsigned char *)o->ptr);
    else
        quicklist_free(ql_of(o));
}

static size_t object_length(const obj *o) { return list_length(o); }

static const obj_type_ops list_ops = {OBJ_LIST, "list", object_free, list_object_dup, object_length};

obj *list_object_create(void) { return obj_create_value(&list_ops, OBJ_ENC_LISTPACK, lp_new()); }

static unsigned char *lp_copy(const unsigned char *lp) {
    unsigned char *c = zmalloc(lp_bytes(lp));
    memcpy(c, lp, lp_bytes(lp));
    return c;
}

obj *list_object_dup(const obj *o) {
    if (o->encoding == OBJ_ENC_LISTPACK)
        return obj_create_value(&list_ops, OBJ_ENC_LISTPACK, lp_copy((unsigned char *)o->ptr));
    const quicklist *src = ql_of(o);
    quicklist *ql = zcalloc(sizeof(*ql));
    ql->fill = src->fill;
    ql->count = src->count;
    for (ql_node *n = src->head; n; n = n->next) link_after(ql, ql->tail, node_new(lp_copy(n->lp)));
    return obj_create_value(&list_ops, OBJ_ENC_QUICKLIST, ql);
}

size_t list_length(const obj *o) {
    if (o->encoding == OBJ_ENC_LISTPACK) return lp_length((const unsigned char *)o->ptr);
    return ql_of(o)->count;
}

size_t list_node_count(const obj *o) { return o->encoding == OBJ_ENC_LISTPACK ? 1 : ql_of(o)->nodes; }

/* ---- conversions ------------------------------------------------------------------------ */

/*@ try-grow */
void list_try_grow(obj *o, size_t add_bytes, size_t add_count) {
    if (o->encoding != OBJ_ENC_LISTPACK) return; /* a quicklist grows node by node */
    unsigned char *lp = (unsigned char *)o->ptr;
    int fill = current_fill();
    if (!exceeds_limit(fill, lp_bytes(lp) + add_bytes, lp_length(lp) + add_count) &&
        lp_safe_to_add(lp, add_bytes + add_count * SIZE_ESTIMATE_OVERHEAD))
        return;
    quicklist *ql = zcalloc(sizeof(*ql));
    ql->fill = fill;
    if (lp_length(lp)) { /* the listpack becomes the first node as it is */
        link_after(ql, NULL, node_new(lp));
        ql->count = lp_length(lp);
    } else {
        lp_free(lp);
    }
    o->ptr = (char *)ql;
    o->encoding = OBJ_ENC_QUICKLIST;
}
/*@ end */

void list_try_shrink(obj *o) {
    if (o->encoding != OBJ_ENC_QUICKLIST) return;
    quicklist *ql = ql_of(o);
    if (ql->nodes != 1) return;
    size_t size_limit, count_limit;
    node_limit(current_fill(), &size_limit, &count_limit);
    /* SIZE_MAX / 2 is still "no limit". */
    if (lp_bytes(ql->head->lp) > size_limit / 2 || ql->count > count_limit / 2) return;
    o->ptr = (char *)ql->head->lp;
    o->encoding = OBJ_ENC_LISTPACK;
    zfree(ql->head);
    zfree(ql);
}

/* ---- ends ------------------------------------------------------------------------------- */

/*@ push */
void list_push(obj *o, const unsigned char *s, size_t len, enum list_where where) {
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = (unsigned char *)o->ptr;
        o->ptr = (char *)(where == LIST_HEAD ? lp_prepend(lp, s, len) : lp_append(lp, s, len));
        return;
    }
    quicklist *ql = ql_of(o);
    ql_node *end = where == LIST_HEAD ? ql->head : ql->tail;
    if (node_allows(ql, end, len)) {
        end->lp = where == LIST_HEAD ? lp_prepend(end->lp, s, len) : lp_append(end->lp, s, len);
    } else {
        ql_node *n = node_new(lp_append(lp_new(), s, len));
        link_after(ql, where == LIST_HEAD ? NULL : ql->tail, n);
    }
    ql->count++;
}
/*@ end */

static unsigned char **end_listpack(obj *o, enum list_where where, ql_node **node) {
    if (o->encoding == OBJ_ENC_LISTPACK) {
        *node = NULL;
        return (unsigned char **)&o->ptr;
    }
    quicklist *ql = ql_of(o);
    *node = where == LIST_HEAD ? ql->head : ql->tail;
    return &(*node)->lp;
}

const unsigned char *list_peek(obj *o, enum list_where where, size_t *len, unsigned char *buf) {
    ql_node *n;
    unsigned char *lp = *end_listpack(o, where, &n);
    unsigned char *p = where == LIST_HEAD ? lp_first(lp) : lp_last(lp);
    assert(p);
    return lp_get_str(p, len, buf);
}

void list_pop_discard(obj *o, enum list_where where) {
    pos ps;
    ps.lpp = end_listpack(o, where, &ps.node);
    ps.p = where == LIST_HEAD ? lp_first(*ps.lpp) : lp_last(*ps.lpp);
    assert(ps.p);
    delete_at(o, &ps);
}

obj *list_pop(obj *o, enum list_where where) {
    unsigned char buf[LP_INTBUF_SIZE];
    size_t len;
    const unsigned char *s = list_peek(o, where, &len, buf);
    obj *v = obj_create_string(s, len);
    list_pop_discard(o, where);
    return v;
}

/* ---- by index ----------------------------------------------------------------------------- */

const unsigned char *list_index(obj *o, long index, size_t *len, unsigned char *buf) {
    pos ps;
    if (!seek(o, index, &ps)) return NULL;
    return lp_get_str(ps.p, len, buf);
}

/*@ set */
int list_set(obj *o, long index, const unsigned char *s, size_t len) {
    pos ps;
    if (!seek(o, index, &ps)) return 0;
    if (o->encoding == OBJ_ENC_LISTPACK) {
        *ps.lpp = lp_replace(*ps.lpp, &ps.p, s, len);
        return 1;
    }
    quicklist *ql = ql_of(o);
    ql_node *n = ps.node;
    /* In place when the node stays within the limit (Valkey:
     * _quicklistNodeAllowReplace), or when it holds this element alone.
     * The estimate frees the old element's bytes only when it is a string
     * (at least that many bytes in the listpack); an integer may be
     * stored in fewer bytes than it prints to, so it frees nothing. */
    size_t oldlen = 0;
    long long ival;
    if (!lp_get(ps.p, &oldlen, &ival)) oldlen = 0;
    size_t estimate = lp_bytes(n->lp) - oldlen + len + SIZE_ESTIMATE_OVERHEAD;
    if (node_len(n) == 1 || (!is_large(ql->fill, len) && !exceeds_limit(ql->fill, estimate, node_len(n)))) {
        n->lp = lp_replace(n->lp, &ps.p, s, len);
        return 1;
    }
    /* Otherwise the new element takes a node of its own where the old one
     * was: split n after the old element, delete it from the left part,
     * and put the new node between the two (Valkey: quicklistReplaceEntry's
     * split path). */
    long off = 0;
    for (unsigned char *p = lp_first(n->lp); p != ps.p; p = lp_next(n->lp, p)) off++;
    if (off + 1 < (long)node_len(n)) {
        split_node(ql, n, off + 1);
        ps.p = lp_last(n->lp); /* the split moved n's listpack */
    }
    n->lp = lp_delete(n->lp, &ps.p);
    ql_node *after = n;
    if (node_len(n) == 0) {
        after = n->prev;
        unlink_node(ql, n);
    }
    insert_own_node(ql, after, s, len);
    return 1;
}
/*@ end */

void list_delete_range(obj *o, long start, size_t count) {
    long len = (long)list_length(o);
    if (start < 0) start += len;
    assert(start >= 0 && (size_t)start + count <= (size_t)len);
    if (count == 0) return;
    if (o->encoding == OBJ_ENC_LISTPACK) {
        o->ptr = (char *)lp_delete_range((unsigned char *)o->ptr, start, count);
        return;
    }
    quicklist *ql = ql_of(o);
    long off;
    ql_node *n = node_at(ql, (size_t)start, &off);
    ql->count -= count;
    while (count) {
        ql_node *next = n->next;
        size_t here = node_len(n) - (size_t)off;
        if (here > count) here = count;
        if (off == 0 && here == node_len(n))
            unlink_node(ql, n); /* the whole node */
        else
            n->lp = lp_delete_range(n->lp, off, here);
        count -= here;
        off = 0;
        n = next;
    }
}

/* ---- by value ----------------------------------------------------------------------------- */

/*@ insert */
int list_insert(obj *o, const unsigned char *pivot, size_t plen, int after, const unsigned char *s, size_t len) {
    lp_elem want;
    lp_encode(&want, pivot, plen);
    list_iter it;
    list_iter_init(&it, o, 0, 1);
    while (it.p && !lp_matches(it.p, &want)) list_iter_next(&it, NULL, NULL);
    if (!it.p) return 0;
    if (o->encoding == OBJ_ENC_LISTPACK) {
        o->ptr = (char *)lp_insert((unsigned char *)o->ptr, &it.p, after ? LP_AFTER : LP_BEFORE, s, len);
        return 1;
    }
    quicklist *ql = ql_of(o);
    ql_node *n = it.node;
    ql->count++;
    if (node_allows(ql, n, len)) {
        n->lp = lp_insert(n->lp, &it.p, after ? LP_AFTER : LP_BEFORE, s, len);
        return 1;
    }
    /* n is full. At its edge the element may join the neighbour on that
     * side, or take a node of its own between the two; inside it, n is
     * split at the insertion point (Valkey: _quicklistInsert). */
    int at_tail = after && lp_next(n->lp, it.p) == NULL;
    int at_head = !after && lp_prev(n->lp, it.p) == NULL;
    if (at_tail && node_allows(ql, n->next, len)) {
        n->next->lp = lp_prepend(n->next->lp, s, len);
    } else if (at_head && node_allows(ql, n->prev, len)) {
        n->prev->lp = lp_append(n->prev->lp, s, len);
    } else if (at_tail || at_head) {
        insert_own_node(ql, at_tail ? n : n->prev, s, len);
    } else {
        long off = 0;
        for (unsigned char *p = lp_first(n->lp); p != it.p; p = lp_next(n->lp, p)) off++;
        split_node(ql, n, after ? off + 1 : off);
        insert_own_node(ql, n, s, len);
    }
    return 1;
}
/*@ end */

/*@ remove */
long list_remove(obj *o, const unsigned char *s, size_t len, long count) {
    int forward = count >= 0;
    unsigned long limit = count == 0 ? ULONG_MAX : count > 0 ? (unsigned long)count : -(unsigned long)count;
    unsigned long removed = 0;
    lp_elem want;
    lp_encode(&want, s, len);
    list_iter it;
    list_iter_init(&it, o, forward ? 0 : -1, forward);
    while (it.p && removed < limit) {
        if (!lp_matches(it.p, &want)) {
            list_iter_next(&it, NULL, NULL);
            continue;
        }
        /* Delete, then put the cursor on the element the walk visits next:
         * forward, the one that followed (lp_delete's answer, or the next
         * node's first); backward, the one before (found before deleting). */
        ql_node *node = it.node;
        ql_node *prevnode = node ? node->prev : NULL, *nextnode = node ? node->next : NULL;
        unsigned char *before = forward ? NULL : lp_prev(it.lp, it.p);
        size_t before_off = before ? (size_t)(before - it.lp) : 0;
        pos ps = {node, node ? &node->lp : (unsigned char **)&o->ptr, it.p};
        delete_at(o, &ps);
        removed++;
        if (!ps.lpp) { /* the node went away */
            ql_node *to = forward ? nextnode : prevnode;
            it.node = to;
            it.lp = to ? to->lp : NULL;
            it.p = to ? (forward ? lp_first(to->lp) : lp_last(to->lp)) : NULL;
            continue;
        }
        it.lp = *ps.lpp;
        if (forward) {
            it.p = ps.p;
            if (!it.p && nextnode) {
                it.node = nextnode;
                it.lp = nextnode->lp;
                it.p = lp_first(it.lp);
            }
        } else if (before) {
            it.p = it.lp + before_off; /* before the deleted element: not moved */
        } else {
            it.node = prevnode;
            it.lp = prevnode ? prevnode->lp : NULL;
            it.p = prevnode ? lp_last(prevnode->lp) : NULL;
        }
    }
    return (long)removed;
}
/*@ end */

/* ---- iteration ------------------------------------------------------------------------------ */

void list_iter_init(list_iter *it, obj *o, long index, int forward) {
    pos ps;
    it->forward = forward;
    if (!seek(o, index, &ps)) {
        it->node = NULL;
        it->lp = NULL;
        it->p = NULL;
        return;
    }
    it->node = ps.node;
    it->lp = *ps.lpp;
    it->p = ps.p;
}

/* Steps to the next element, into the next node when this one ends. */
static void iter_step(list_iter *it) {
    if (it->forward) {
        it->p = lp_next(it->lp, it->p);
        if (!it->p && it->node && ((ql_node *)it->node)->next) {
            ql_node *n = ((ql_node *)it->node)->next;
            it->node = n;
            it->lp = n->lp;
            it->p = lp_first(n->lp);
        }
    } else {
        it->p = lp_prev(it->lp, it->p);
        if (!it->p && it->node && ((ql_node *)it->node)->prev) {
            ql_node *n = ((ql_node *)it->node)->prev;
            it->node = n;
            it->lp = n->lp;
            it->p = lp_last(n->lp);
        }
    }
}

/*@ iter-next */
const unsigned char *list_iter_next(list_iter *it, size_t *len, unsigned char *buf) {
    if (!it->p) return NULL;
    const unsigned char *s = NULL;
    if (len) s = lp_get_str(it->p, len, buf);
    iter_step(it);
    return s;
}
/*@ end */

int list_iter_next_equals(list_iter *it, const lp_elem *want) {
    if (!it->p) return -1;
    int eq = lp_matches(it->p, want);
    iter_step(it);
    return eq;
}

/* ---- invariants ----------------------------------------------------------------------------- */

/*@ list-verify */
int list_verify(const obj *o) {
    if (o->type != OBJ_LIST) return 0;
    if (o->encoding == OBJ_ENC_LISTPACK) return lp_verify((const unsigned char *)o->ptr);
    if (o->encoding != OBJ_ENC_QUICKLIST) return 0;
    const quicklist *ql = ql_of(o);
    size_t count = 0, nodes = 0, size_limit, count_limit;
    node_limit(ql->fill, &size_limit, &count_limit);
    if ((ql->head == NULL) != (ql->tail == NULL)) return 0;
    if (ql->head && (ql->head->prev || ql->tail->next)) return 0;
    for (const ql_node *n = ql->head; n; n = n->next) {
        if (!lp_verify(n->lp)) return 0;
        size_t len = lp_length(n->lp);
        if (len == 0) return 0;                      /* no empty node */
        if (n->next && n->next->prev != n) return 0; /* links agree */
        if (!n->next && n != ql->tail) return 0;     /* the tail ends the chain */
        if (len > count_limit) return 0;             /* the fill's count */
        count += len;
        nodes++;
    }
    return count == ql->count && nodes == ql->nodes;
}
/*@ end */
