/* zset.h — the sorted set: members ordered by (score, member), with rank.
 *
 * Step 8 (keyspace layer). Owns: a skiplist whose nodes carry a score, a
 * member and, per level, a forward pointer and its span (how many nodes
 * that pointer steps over), plus the member → node index on soloist's
 * hashtable; or, in the dense layout (zset_dense.c), a skiplist whose
 * nodes are leaves of many members. zset.c opens with the invariants.
 * Knows no client and no reply: cmd_zset.c turns commands into calls here.
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/t_zset.c (zslCreate, zslInsert, zslDelete, zslUpdateScore,
 * zslGetRank, zslGetElementByRank, zslNthInRange, zslDeleteRangeByScore,
 * zslDeleteRangeByRank, zsetAdd; zrangespec and zlexrangespec) and
 * struct zskiplist in src/server.h.
 *
 * Ranks in this interface are 0-based (the commands' indexes); the
 * skiplist inside counts from 1, as Valkey's does.
 */
#ifndef SOLOIST_ZSET_H
#define SOLOIST_ZSET_H

#include <stddef.h>

#include "object.h"

typedef struct zset zset;
typedef struct zset_node zset_node;

/* A score interval (Valkey: zrangespec). minex/maxex: the bound is
 * excluded, as "(1.5" asks. */
typedef struct zset_score_range {
    double min, max;
    int minex, maxex;
} zset_score_range;

/* One end of a lexicographic interval (Valkey: zlexrangespec, whose
 * shared.minstring / maxstring stand for "-" and "+"). */
enum zset_lex_kind { ZLEX_INCLUSIVE, ZLEX_EXCLUSIVE, ZLEX_MINUS_INF, ZLEX_PLUS_INF };
typedef struct zset_lex_bound {
    enum zset_lex_kind kind;
    const char *ptr; /* the bytes after '[' or '(' (not for the infinities) */
    size_t len;
} zset_lex_bound;
typedef struct zset_lex_range {
    zset_lex_bound min, max;
} zset_lex_range;

/* --- Layouts ----------------------------------------------------------------
 * Where a set keeps its members' bytes, chosen when the set is created
 * (zset.c's member-storage section and zset_dense.c say how each works):
 *   copied        node + member string + an index entry holding a copy of
 *                 the member (a baseline with a copy; Valkey 8.0's dict
 *                 entry shares the node's string instead of copying it)
 *   node-pointer  node + member string; the index stores the node (8.1)
 *   embedded      the member inside the node (9.1)
 *   dense         a skiplist of leaves of up to 64 packed members (default)
 * CONFIG SET zset-layout changes zset_layout_default: sets created after
 * it take the new layout, existing sets keep theirs. */
enum zset_layout { ZSET_LAYOUT_COPIED, ZSET_LAYOUT_NODE_POINTER, ZSET_LAYOUT_EMBEDDED, ZSET_LAYOUT_DENSE };
extern int zset_layout_default;
const char *zset_layout_name(int layout);

/* --- Life cycle ----------------------------------------------------------- */

zset *zset_create(void); /* in zset_layout_default */
zset *zset_create_layout(int layout);
int zset_layout(const zset *z);
void zset_free(zset *z);
zset *zset_dup(const zset *z); /* a deep copy (COPY) */
size_t zset_length(const zset *z);

/* --- The value object (OBJ_ZSET) ----------------------------------------------
 * A sorted set as the keyspace stores it: an obj whose ptr is the zset.
 * Its operations reach object.c through obj_create_value. */
obj *zset_object_create(void);      /* an empty set, refcount 1 */
obj *zset_object_dup(const obj *o); /* a deep copy (COPY) */
static inline zset *zset_of(const obj *o) { return (zset *)(void *)o->ptr; }

/* --- Members ----------------------------------------------------------------
 * zset_add follows Valkey's zsetAdd: in-flags are ZADD's options, and
 * out-flags say what happened. It returns 0 only when the score is (or
 * INCR makes it) not a number, with ZADD_OUT_NAN set and nothing changed;
 * *newscore, when non-NULL, receives the member's score after an add or an
 * update. */
#define ZADD_IN_INCR (1 << 0)
#define ZADD_IN_NX (1 << 1)
#define ZADD_IN_XX (1 << 2)
#define ZADD_IN_GT (1 << 3)
#define ZADD_IN_LT (1 << 4)
#define ZADD_OUT_NOP (1 << 0)     /* nothing done: NX, XX, GT or LT refused it */
#define ZADD_OUT_NAN (1 << 1)     /* the resulting score is NaN */
#define ZADD_OUT_ADDED (1 << 2)   /* a new member */
#define ZADD_OUT_UPDATED (1 << 3) /* an existing member's score changed */
int zset_add(zset *z, double score, const char *member, size_t len, int in_flags, int *out_flags, double *newscore);
int zset_score(zset *z, const char *member, size_t len, double *score); /* 1 if present */
/* Adds a member the caller knows is not in the set, with a score that is
 * not NaN: zset_add without its lookup, for a set being built from
 * distinct members (ZRANGESTORE, ZUNIONSTORE and the other set algebra).
 * Inserting in descending (score, member) order lands each member at the
 * front, a search that stops at once. */
void zset_insert_new(zset *z, double score, const char *member, size_t len);
int zset_delete(zset *z, const char *member, size_t len); /* 1 if it was there */
/* The member's 0-based rank (from the highest score when reverse), or -1
 * when absent; *score (if non-NULL) receives its score. */
long zset_rank(zset *z, const char *member, size_t len, int reverse, double *score);

/* --- Walking in order ------------------------------------------------------
 * A zset_node * is a position, valid until the set is next changed; only
 * the functions below read it, each given the set it came from. */
zset_node *zset_first(const zset *z); /* lowest (score, member) */
zset_node *zset_last(const zset *z);
zset_node *zset_next(const zset *z, const zset_node *n);
zset_node *zset_prev(const zset *z, const zset_node *n);
zset_node *zset_by_rank(const zset *z, size_t rank);      /* 0-based; NULL past the end */
size_t zset_node_rank(const zset *z, const zset_node *n); /* 0-based */
double zset_node_score(const zset *z, const zset_node *n);
const char *zset_node_member(const zset *z, const zset_node *n, size_t *len);

/* --- Ranges ----------------------------------------------------------------- */

int zset_score_gte_min(double score, const zset_score_range *r);
int zset_score_lte_max(double score, const zset_score_range *r);
int zset_lex_gte_min(const char *m, size_t len, const zset_lex_range *r);
int zset_lex_lte_max(const char *m, size_t len, const zset_lex_range *r);
/* The first / last node inside the range, or NULL when none is. */
zset_node *zset_first_in_score_range(const zset *z, const zset_score_range *r);
zset_node *zset_last_in_score_range(const zset *z, const zset_score_range *r);
zset_node *zset_first_in_lex_range(const zset *z, const zset_lex_range *r);
zset_node *zset_last_in_lex_range(const zset *z, const zset_lex_range *r);
/* Removals; each returns how many members it removed. Ranks are 0-based
 * and inclusive, already clamped to the set by the caller. */
size_t zset_delete_score_range(zset *z, const zset_score_range *r);
size_t zset_delete_lex_range(zset *z, const zset_lex_range *r);
size_t zset_delete_rank_range(zset *z, size_t start, size_t end);

/* --- Random members and scans (the member index) ----------------------------- */

/* A random member, roughly uniform; NULL when empty. */
zset_node *zset_random(zset *z);
/* One step of a scan of the members (ZSCAN), with the hashtable's cursor
 * guarantees (hashtable.h): fn sees each member of a visited bucket chain.
 * fn must not change the set. Returns the next cursor, 0 when done. */
typedef void (*zset_scan_fn)(void *privdata, const zset_node *n);
size_t zset_scan(zset *z, size_t cursor, zset_scan_fn fn, void *privdata);

#endif
