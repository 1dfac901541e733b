/* list.h — the list type: a small list in one listpack, a large one as a
 * chain of listpack nodes (quicklist).
 *
 * Not a step (keyspace layer). Owns every list value's structure. Knows no
 * client and no reply: cmd_list.c turns commands into calls here. list.c
 * opens with the design and its invariants.
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/t_list.c (listTypePush, listTypePop, listTypeTryConversion),
 * src/quicklist.c.
 */
#ifndef SOLOIST_LIST_H
#define SOLOIST_LIST_H

#include <stddef.h>

#include "listpack.h"
#include "object.h"

/* CONFIG list-max-listpack-size (Valkey's default -2): a positive value
 * caps a listpack's elements, a negative one its bytes (-1 4 KB, -2 8 KB,
 * -3 16 KB, -4 32 KB, -5 64 KB). list-compress-depth is accepted and has
 * no effect: soloist never compresses a node. */
extern long long list_max_listpack_size;
extern long long list_compress_depth;

/* Which end (Valkey: LIST_HEAD, LIST_TAIL). */
enum list_where { LIST_HEAD = 0, LIST_TAIL = 1 };

/* A new empty list (one empty listpack), refcount 1. Commands fill it at
 * once: no empty list stays in the keyspace. */
obj *list_object_create(void);
size_t list_length(const obj *o);

/* --- Encoding changes (Valkey: listTypeTryConversionAppend and
 * listTypeTryConversion with LIST_CONV_SHRINKING) --------------------------
 * A command that is about to add add_count elements of add_bytes bytes
 * in all calls list_try_grow first: a listpack that would pass the limit
 * becomes a quicklist before the elements go in. A command that removed
 * elements calls list_try_shrink after: a quicklist of one node under
 * half the limit becomes a listpack again (the half keeps a list at the
 * edge from converting back and forth on each push and pop). */
void list_try_grow(obj *o, size_t add_bytes, size_t add_count);
void list_try_shrink(obj *o);

/* --- Ends ------------------------------------------------------------- */

void list_push(obj *o, const unsigned char *s, size_t len, enum list_where where);
/* The element at one end, as bytes (an integer printed into buf,
 * LP_INTBUF_SIZE bytes). The list must not be empty. */
const unsigned char *list_peek(obj *o, enum list_where where, size_t *len, unsigned char *buf);
/* Removes the element at one end (the list must not be empty). */
void list_pop_discard(obj *o, enum list_where where);
/* Removes and returns the element at one end as a new string object. */
obj *list_pop(obj *o, enum list_where where);

/* --- By index (0 first, -1 last) ------------------------------------------ */

/* The element's bytes, or NULL when index is out of range. */
const unsigned char *list_index(obj *o, long index, size_t *len, unsigned char *buf);
/* Replaces the element at index; 0 when index is out of range. */
int list_set(obj *o, long index, const unsigned char *s, size_t len);
/* Deletes count elements from index start (0-based, or negative from
 * the end; the range must lie inside the list). */
void list_delete_range(obj *o, long start, size_t count);

/* --- By value ----------------------------------------------------------- */

/* LINSERT: inserts s before (after = 0) or after the first element equal
 * to pivot; 1 when the pivot was found. */
int list_insert(obj *o, const unsigned char *pivot, size_t plen, int after, const unsigned char *s, size_t len);
/* LREM: removes up to count elements equal to s (count > 0 from the
 * head, < 0 from the tail, 0 all); returns how many. */
long list_remove(obj *o, const unsigned char *s, size_t len, long count);

/* --- Iteration ------------------------------------------------------------
 * A cursor over the elements, from an index, towards the tail (forward)
 * or the head. It walks nodes and elements directly, never seeking by
 * index again, and stays valid while the list is not changed. */
typedef struct list_iter {
    void *node;        /* the quicklist node, NULL for a listpack list */
    unsigned char *lp; /* the listpack being walked */
    unsigned char *p;  /* the current element, NULL at the end */
    int forward;       /* 1: towards the tail */
} list_iter;

/* Positions it at index (negative from the end); at the end at once when
 * index is out of range. */
void list_iter_init(list_iter *it, obj *o, long index, int forward);
/* The current element's bytes and a step on; NULL at the end. */
const unsigned char *list_iter_next(list_iter *it, size_t *len, unsigned char *buf);
/* Whether the current element is the one want encodes (lp_encode it once;
 * compared in the listpack, no copy), and a step on; -1 at the end.
 * LPOS's scan. */
int list_iter_next_equals(list_iter *it, const lp_elem *want);

/* --- Whole values ------------------------------------------------------------ */

obj *list_object_dup(const obj *o);
/* Checks every invariant list.c lists; 1 when they hold. Tests call it
 * after every change. */
int list_verify(const obj *o);
/* Nodes in a quicklist (1 for a listpack list): tests watch the chain. */
size_t list_node_count(const obj *o);

#endif
