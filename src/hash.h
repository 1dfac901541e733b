/* hash.h — the hash type: a small hash in one listpack (field, value,
 * field, value ...), a large one on soloist's hashtable.
 *
 * Not a step (keyspace layer). Owns every hash value's structure. Knows no
 * client and no reply: cmd_hash.c turns commands into calls here. hash.c
 * opens with the two encodings and their invariants.
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/t_hash.c (hashTypeSet, hashTypeGetValue, hashTypeDelete,
 * hashTypeConvert, hashTypeTryConversion, hashTypeNext,
 * hrandfieldWithCountCommand's sampling).
 *
 * Every function takes the value object (o->type == OBJ_HASH), since a
 * conversion replaces o->ptr and o->encoding. A field or value handed out
 * (hash_get, the iterator, the callbacks) is a pointer and a length, valid
 * until the hash next changes; a listpack keeps integers as integers, so
 * those are printed into a buffer the caller provides (HASH_NUMBUF bytes).
 */
#ifndef SOLOIST_HASH_H
#define SOLOIST_HASH_H

#include <stddef.h>

#include "hashtable.h"
#include "object.h"

/* CONFIG hash-max-listpack-entries and hash-max-listpack-value (Valkey's
 * defaults 512 and 64): past either, a hash converts to the hashtable. */
extern long long hash_max_listpack_entries, hash_max_listpack_value;

/* The room a field or value read from a listpack may need when the
 * listpack holds it as an integer (listpack.h's LP_INTBUF_SIZE). */
#define HASH_NUMBUF 21

/* One field and its value, as the iterator and the callbacks give them. */
typedef struct hash_pair {
    const char *field, *value;
    size_t flen, vlen;
} hash_pair;

/* --- Life cycle ------------------------------------------------------------- */

obj *hash_object_create(void);      /* an empty hash (a listpack), refcount 1 */
obj *hash_object_dup(const obj *o); /* a deep copy in the same encoding (COPY) */
void hash_free(obj *o);             /* frees o->ptr's structure, not o */
size_t hash_length(const obj *o);   /* fields */

/* Converts a listpack-encoded hash to the hashtable encoding (one way, as
 * Valkey's hashTypeConvert); a no-op on a hashtable. */
void hash_convert(obj *o);
/* Before a write of the strings argv[start..end] (fields and values,
 * alternating): converts when more new fields are coming than a listpack
 * may hold, when one of them is longer than hash_max_listpack_value, or
 * when the listpack would pass its size cap (Valkey:
 * hashTypeTryConversion). HSET and HSETNX call it before they look. */
void hash_try_conversion(obj *o, obj *const *argv, int start, int end);

/* --- Fields -------------------------------------------------------------------- */

/* Sets field to value; 1 when the field is new, 0 when its value was
 * replaced. Converts first when the field or value is too long for a
 * listpack, after when the listpack has too many fields. */
int hash_set(obj *o, const char *field, size_t flen, const char *value, size_t vlen);
/* The field's value (*vlen set), or NULL when the field is absent. buf
 * (HASH_NUMBUF bytes) receives a listpack integer's digits. */
const char *hash_get(obj *o, const char *field, size_t flen, size_t *vlen, char *buf);
int hash_exists(obj *o, const char *field, size_t flen);
int hash_delete(obj *o, const char *field, size_t flen);       /* 1 if it was there */
size_t hash_value_len(obj *o, const char *field, size_t flen); /* 0 when absent (HSTRLEN) */

/* --- Iteration --------------------------------------------------------------------
 * Every pair once: a listpack in insertion order, a hashtable in table
 * order. The hash must not change until hash_iter_reset. */
typedef struct hash_iter {
    obj *o;
    unsigned char *p; /* listpack: the next field */
    hashtable_iterator hi;
    char fbuf[HASH_NUMBUF], vbuf[HASH_NUMBUF];
} hash_iter;
void hash_iter_init(hash_iter *it, obj *o);
int hash_iter_next(hash_iter *it, hash_pair *pair); /* 0 when done */
void hash_iter_reset(hash_iter *it);

/* --- Random fields and scans ------------------------------------------------------- */

/* What the sampling and the scan hand out, one pair a call. */
typedef void hash_pair_fn(void *arg, const hash_pair *pair);

/* One random pair (HRANDFIELD without a count); 0 when the hash is empty.
 * fbuf and vbuf: HASH_NUMBUF bytes each. */
int hash_random_pair(obj *o, hash_pair *pair, char *fbuf, char *vbuf);
/* HRANDFIELD's count, Valkey's four cases (hrandfieldWithCountCommand):
 * count < 0: -count independent draws, repeats allowed; count >= length:
 * every pair, in iteration order; otherwise count distinct pairs — from a
 * listpack by one ordered pass, from a hashtable by removing random pairs
 * from a copy when count is most of the hash, by drawing until count
 * distinct ones came up when it is few. Calls fn once per pair and
 * returns how many it gave: |count| or the length, whichever HRANDFIELD
 * replies. */
size_t hash_random_pairs(obj *o, long long count, hash_pair_fn *fn, void *arg);
/* One step of HSCAN from cursor: a listpack gives every pair and returns
 * 0 (Valkey replies a small hash whole); a hashtable visits one bucket
 * chain (hashtable_scan's guarantees) and returns the next cursor. fn must
 * not change the hash. */
size_t hash_scan(obj *o, size_t cursor, hash_pair_fn *fn, void *arg);

/* --- Invariants ---------------------------------------------------------------------- */

/* Checks hash.c's invariants (the encoding within its limits, a
 * listpack's pairs and distinct fields, a table's entries well formed and
 * counted). 1 when they hold; otherwise prints the first broken one to
 * stderr and returns 0. O(n^2) on a listpack, O(n) on a table. */
int hash_verify(obj *o);

#endif
