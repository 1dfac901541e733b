/* hashtable_private.h — the bucket layout and struct hashtable, shared by
 * the hashtable's own .c files only (step 0, keyspace layer).
 *
 * PRIVATE: include it from src/hashtable.c, src/hashtable_iter.c and
 * src/hashtable_incremental_find.c, nowhere else. Users of the table see
 * only hashtable.h, where `hashtable` is opaque; this header exists
 * because the table's code is split into files of one idea each (the core,
 * the walks, the resumable find) that all read the same buckets.
 *
 * Threads: MAIN THREAD ONLY, like everything in hashtable.h. Valkey:
 * src/hashtable.c (8.1) — struct hashtable, bucket, and the small bucket
 * helpers (bucketConvertToChained's layout, findKeyInBucketSSE2, ...); see
 * hashtable.h for the layout in one paragraph.
 */
#ifndef SOLOIST_HASHTABLE_PRIVATE_H
#define SOLOIST_HASHTABLE_PRIVATE_H

#include "hashtable.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__SSE2__) && !defined(HASHTABLE_NO_SIMD)
#include <emmintrin.h>
#define HT_SSE2 1
#endif

/* Aborts even under NDEBUG: a broken table must not limp on. */
#define ht_assert(c)                                                                                                   \
    ((c) ? (void)0 : (fprintf(stderr, "hashtable: assertion failed: %s (%s:%d)\n", #c, __FILE__, __LINE__), abort()))

/* --- Bucket layout ---------------------------------------------------------
 * 1 metadata byte + 7 secondary hashes + 7 pointers = 64 bytes on a 64-bit
 * host. Metadata: bit 7 = chained (slot 6 then holds the child bucket, not
 * an entry), bits 0-6 = which slots hold an entry. A chained bucket never
 * has presence bit 6 set, so "presence & matches" never points at the link. */
#define SLOTS 7
#define LINK (SLOTS - 1)
#define CHAINED 0x80u
#define ALL_SLOTS 0x7fu    /* presence of a full unchained bucket */
#define LINKED_SLOTS 0x3fu /* presence of a full chained bucket */

typedef struct bucket {
    uint8_t meta;
    uint8_t h2[SLOTS];
    void *slot[SLOTS];
} bucket;

_Static_assert(sizeof(void *) == 8, "the 7-slot bucket layout assumes 64-bit pointers");
_Static_assert(sizeof(bucket) == 64, "a bucket is exactly one cache line");

struct hashtable {
    const hashtable_type *type;
    bucket *tables[2];       /* 0 = main, 1 = rehash target; 64-byte aligned */
    void *raw[2];            /* the allocations tables[] were aligned within */
    size_t used[2];          /* entries in each table */
    size_t child_buckets[2]; /* allocated overflow buckets per table */
    int64_t rehash_idx;      /* next table-0 bucket to move; -1 = not rehashing */
    int8_t exp[2];           /* log2(buckets); -1 = no table */
    int pause_rehash;        /* > 0: no steps, no hole filling (iterators, scan) */
    int pause_shrink;        /* > 0: no automatic shrink */
};

/* --- Small helpers ---------------------------------------------------------- */

static inline unsigned presence(const bucket *b) { return b->meta & ALL_SLOTS; }
static inline int is_chained(const bucket *b) { return (b->meta & CHAINED) != 0; }
static inline bucket *child_of(const bucket *b) { return is_chained(b) ? (bucket *)b->slot[LINK] : NULL; }
static inline int is_full(const bucket *b) { return presence(b) == (is_chained(b) ? LINKED_SLOTS : ALL_SLOTS); }
static inline size_t num_buckets(int8_t exp) { return exp < 0 ? 0 : (size_t)1 << exp; }
static inline size_t mask_of(int8_t exp) { return exp < 0 ? 0 : num_buckets(exp) - 1; }
static inline uint8_t high_byte(uint64_t hash) { return (uint8_t)(hash >> 56); }
static inline int rehashing(const hashtable *ht) { return ht->rehash_idx >= 0; }

/* Table 0's buckets below rehash_idx have already moved to table 1 and are
 * empty: lookups, scans and checks skip them. */
static inline int already_moved(const hashtable *ht, int t, size_t idx) {
    return t == 0 && rehashing(ht) && idx < (size_t)ht->rehash_idx;
}

static inline const void *key_of(const hashtable *ht, const void *entry) {
    return ht->type->entry_get_key ? ht->type->entry_get_key(entry) : entry;
}
static inline int keys_equal(const hashtable *ht, const void *a, const void *b) {
    return ht->type->key_compare ? ht->type->key_compare(a, b) == 0 : a == b;
}
static inline uint64_t hash_entry(const hashtable *ht, const void *entry) {
    return ht->type->hash_key(key_of(ht, entry));
}

/* Slots whose secondary hash equals h2 and that hold an entry. SSE2
 * compares all 7 hash bytes in one instruction; the 16-byte load reads
 * past h2[] into slot[0], still inside the bucket, and those lanes are
 * masked off. Valkey: findKeyInBucketSSE2. */
static inline unsigned match_h2(const bucket *b, uint8_t h2) {
#ifdef HT_SSE2
    __m128i bytes = _mm_loadu_si128((const __m128i *)(const void *)b->h2);
    unsigned eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8((char)h2)));
#else
    unsigned eq = 0;
    for (int i = 0; i < SLOTS; i++) eq |= (unsigned)(b->h2[i] == h2) << i;
#endif
    return eq & presence(b);
}

/* --- Shared by the files of the table (defined in hashtable.c) -------------- */

/* One incremental rehash step, unless not rehashing or paused. Lookups and
 * inserts each pay one (Valkey: rehashStepOnReadIfNeeded). */
void ht_rehash_step_if_allowed(hashtable *ht);
/* Fills the holes that deletions under paused rehashing left in the chain
 * at table t, index idx (Valkey: compactBucketChain). */
void ht_compact_chain(hashtable *ht, int t, size_t idx);

#endif
