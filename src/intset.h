/* intset.h — a set of integers as one sorted array.
 *
 * Not a step (keyspace layer), beside set.c, which keeps a set whose members
 * are all integers (and few) as an intset. Owns nothing but the block it is
 * handed: every call that can grow or shrink a block returns the block's new
 * address, and the caller stores it (the old pointer is dead).
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/intset.c (intsetNew, intsetAdd, intsetRemove, intsetFind,
 * intsetGet, intsetRandom, intsetLen, intsetBlobLen, intsetValidateIntegrity,
 * intsetUpgradeAndAdd, intsetSearch); intset.c says where soloist's
 * header differs.
 */
#ifndef SOLOIST_INTSET_H
#define SOLOIST_INTSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct intset intset;

/* The most members an intset can hold (its length field's 30 bits; Valkey
 * caps set-max-intset-entries at the same 1 << 30, intsetMaxEntries). */
#define INTSET_MAX_LEN ((uint32_t)1 << 30)

intset *intset_new(void); /* empty, 2-byte members */
void intset_free(intset *is);
intset *intset_dup(const intset *is);
uint32_t intset_len(const intset *is);
size_t intset_bytes(const intset *is); /* the whole block, header included */
/* The width of a member in bytes: 2, 4 or 8 (Valkey's encoding). */
unsigned intset_width(const intset *is);

/* Adds v; *added (if non-NULL) is 1 when it was not there. May widen
 * every member first (an upgrade) when v needs more bytes. */
intset *intset_add(intset *is, int64_t v, int *added);
/* Removes v; *removed (if non-NULL) is 1 when it was there. Never narrows. */
intset *intset_remove(intset *is, int64_t v, int *removed);
int intset_find(const intset *is, int64_t v); /* 1 if present */
/* The member at pos (0 the smallest); 0 when pos is past the end. */
int intset_get(const intset *is, uint32_t pos, int64_t *v);
/* A random member (the set must not be empty). */
int64_t intset_random(const intset *is);
int64_t intset_min(const intset *is); /* the set must not be empty */
int64_t intset_max(const intset *is);

/* Checks every invariant intset.c lists; 1 when they hold. */
int intset_verify(const intset *is);

#endif
