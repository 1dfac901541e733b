/* set.h — the set type: integers in a sorted array (intset), a small set
 * of strings in one listpack, a large one on soloist's hashtable.
 *
 * Not a step (keyspace layer). Owns every set value's structure. Knows no
 * client and no reply: cmd_set.c turns commands into calls here, and the
 * sorted-set algebra (cmd_zset_algebra.c) reads sets through it too.
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/t_set.c (setTypeCreate, setTypeAdd, setTypeRemove,
 * setTypeIsMember, setTypeInitIterator, setTypeNext, setTypeRandomElement,
 * setTypePopRandom, setTypeConvert, setTypeDup), src/intset.c.
 *
 * Every function takes the set's obj (type OBJ_SET), since a change of
 * encoding replaces o->ptr and o->encoding. A member comes back as a
 * pointer and a length: into the set's own bytes (valid until the set
 * next changes), or, for an intset's integers, printed into a buffer of
 * SET_INTBUF_SIZE bytes that the caller provides.
 */
#ifndef SOLOIST_SET_H
#define SOLOIST_SET_H

#include <stddef.h>
#include <stdint.h>

#include "hashtable.h"
#include "object.h"

/* CONFIG set-max-intset-entries, set-max-listpack-entries and
 * set-max-listpack-value (Valkey's defaults 512, 128 and 64). */
extern long long set_max_intset_entries, set_max_listpack_entries, set_max_listpack_value;

/* Room for a 64-bit integer printed in decimal (and a NUL). */
#define SET_INTBUF_SIZE 21

/* --- Life cycle ------------------------------------------------------------ */

/* An empty set in the encoding Valkey's setTypeCreate picks for a set
 * about to receive size_hint members, the first of which is first: an
 * intset when first is an integer and the hint within
 * set-max-intset-entries, a listpack when the hint is within
 * set-max-listpack-entries, else a hashtable. Refcount 1. */
obj *set_object_create(const char *first, size_t len, size_t size_hint);
/* An empty intset, which set_add converts as members arrive (the set
 * algebra's results, Valkey's createIntsetObject). */
obj *set_object_create_intset(void);
obj *set_object_dup(const obj *o); /* a deep copy, same encoding (COPY) */
size_t set_length(const obj *o);
/* SADD to an existing set about to receive size_hint members: a listpack
 * or an intset that the hint alone would overflow goes to a hashtable at
 * once (Valkey: setTypeMaybeConvert). */
void set_maybe_convert(obj *o, size_t size_hint);
/* Exchanges the structures (and encodings) of two sets (SPOP's large
 * count keeps the members it did not pop in a new set, then swaps). */
void set_swap(obj *a, obj *b);

/* --- Members ------------------------------------------------------------- */

int set_add(obj *o, const char *m, size_t len);    /* 1 if it was not there */
int set_remove(obj *o, const char *m, size_t len); /* 1 if it was there */
int set_is_member(obj *o, const char *m, size_t len);
/* A random member (the set must not be empty), roughly uniform. */
void set_random(obj *o, char *buf, const char **m, size_t *len);
/* Removes a random member and returns it as a new string object. */
obj *set_pop(obj *o);

/* --- Walking ----------------------------------------------------------------
 * Every member once: an intset's in ascending order, a listpack's in the
 * order they were added, a hashtable's in bucket order. The set must not
 * change until the iterator is reset. */
typedef struct set_iter {
    obj *o;
    uint32_t pos;     /* intset: the next position */
    unsigned char *p; /* listpack: the next element */
    hashtable_iterator hi;
    char buf[SET_INTBUF_SIZE];
} set_iter;
void set_iter_init(set_iter *it, obj *o);
int set_iter_next(set_iter *it, const char **m, size_t *len); /* 0 at the end */
void set_iter_reset(set_iter *it);

/* One step of SSCAN: an intset or a listpack hands fn every member in one
 * call and returns 0, as Valkey does for its small encodings; a hashtable
 * visits one bucket chain with hashtable_scan's guarantees and returns
 * the next cursor (0 when done). fn must not change the set. */
typedef void (*set_scan_fn)(void *privdata, const char *m, size_t len);
size_t set_scan(obj *o, size_t cursor, set_scan_fn fn, void *privdata);

/* Checks every invariant set.c lists for o's encoding; 1 when they hold.
 * Tests call it after every change. */
int set_verify(obj *o);

#endif
