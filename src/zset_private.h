/* zset_private.h — what the sorted set's files share, and nothing else.
 *
 * Step 8 (keyspace layer). zset.c keeps the skiplist layouts and the
 * public interface; zset_dense.c keeps the dense layout (a skiplist of
 * leaves); zset_common.c keeps what both call (heights, key views, the
 * index scan). Both layouts store a member's length as a varint, and
 * zset.c calls the dense layout through the functions below. The calls
 * run one way: zset.c calls zset_dense.c, both call zset_common.c, and
 * zset_common.c calls neither. Threads: main thread only.
 */
#ifndef SOLOIST_ZSET_PRIVATE_H
#define SOLOIST_ZSET_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"
#include "zset.h"

/* A length as a little-endian base-128 varint: 7 bits a byte, the top bit
 * set on every byte but the last (1 byte below 128). */
static inline size_t zset_varint_put(unsigned char *p, size_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}
static inline size_t zset_varint_size(size_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}
static inline size_t zset_varint_get(const unsigned char *p, size_t *v) {
    size_t n = 0, shift = 0, r = 0;
    do {
        r |= (size_t)(p[n] & 0x7F) << shift;
        shift += 7;
    } while (p[n++] & 0x80);
    *v = r;
    return n;
}

/* Both layouts are skiplists: a node (a leaf) is given a height at birth,
 * 1 and one more with probability ZSET_P each time, at most
 * ZSET_MAX_LEVEL (enough for 2^64 members at p = 1/4). zset_common.c
 * defines zset_random_level, which draws it. */
#define ZSET_MAX_LEVEL 32
#define ZSET_P 0.25
int zset_random_level(void);

/* A {ptr, len} view of a member as a hashtable_key, for an index's
 * entry_get_key: one of two rotating slots (hashtable.h), shared by every
 * layout's index (zset_common.c). */
const void *zset_key_view(const char *ptr, size_t len);

/* A scan of a layout's member index (hashtable_scan) that hands fn each
 * member's position: position() turns one of set's index entries into
 * it. Both layouts' scans (ZSCAN) are this one (zset_common.c). */
struct hashtable;
typedef zset_node *(*zset_entry_pos)(const void *set, void *entry);
size_t zset_index_scan(struct hashtable *index, size_t cursor, zset_entry_pos position, const void *set,
                       zset_scan_fn fn, void *privdata);

/* Orders members: memcmp, then the shorter first. */
static inline int zset_member_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    size_t min = alen < blen ? alen : blen;
    int c = min ? __builtin_memcmp(a, b, min) : 0;
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

/* The verify functions' check: print what broke to stderr and return 0. */
#define ZSET_VERIFY(cond, ...) UTIL_VERIFY("zset_verify", cond, __VA_ARGS__)

/* A predicate on a position, as both layouts' searches take it: it must
 * be monotonic along the order, true on a prefix and false after. A
 * search walks down to the last position for which it holds. */
typedef int (*zset_pred)(const zset_node *n, const void *arg);

/* A (score, member) key as a search's argument: each layout's key_before
 * (a zset_pred) holds for the positions that sort before the key, and
 * with or_equal for the key's own position too. set is the structure
 * searched: the skiplist, which reads a node's member by its layout, or
 * the dense set, whose positions read their own. */
typedef struct zset_key {
    double score;
    const char *member;
    size_t len;
    int or_equal;
    const void *set;
} zset_key;

/* --- The dense layout (zset_dense.c) ------------------------------------------
 * Same meaning as the zset_* function of the same name; a position is a
 * zset_node * handle only zset_dense.c can read. */
typedef struct dense dense;
dense *dense_create(void);
void dense_free(dense *d);
size_t dense_length(const dense *d);
int dense_find(dense *d, const char *member, size_t len, double *score);
void dense_insert(dense *d, double score, const char *member, size_t len); /* member absent */
int dense_delete(dense *d, const char *member, size_t len);
zset_node *dense_first(const dense *d);
zset_node *dense_last(const dense *d);
zset_node *dense_next(const dense *d, const zset_node *n);
zset_node *dense_prev(const dense *d, const zset_node *n);
zset_node *dense_by_rank(const dense *d, size_t rank);
size_t dense_node_rank(const dense *d, const zset_node *n);
zset_node *dense_find_node(dense *d, const char *member, size_t len);
double dense_node_score(const zset_node *n);
const char *dense_node_member(const zset_node *n, size_t *len);
/* The first node for which before(node) is false (NULL: none), and the
 * last node for which before(node) is true (NULL: none). before is a
 * zset_pred. */
zset_node *dense_first_not(const dense *d, zset_pred before, const void *arg);
zset_node *dense_last_where(const dense *d, zset_pred before, const void *arg);
zset_node *dense_random(dense *d);
size_t dense_scan(dense *d, size_t cursor, zset_scan_fn fn, void *privdata);
int dense_verify(dense *d);

#endif
