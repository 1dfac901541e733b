/* hashtable.c — cache-line buckets, incremental rehash, scan, resumable find.
 *
 * Step 6 (keyspace). Main thread only. See hashtable.h for the API and the
 * layout in one paragraph; this file explains the why as it goes.
 * Valkey: src/hashtable.c (8.1): bucket, findBucket, insert, rehashStep,
 * fillBucketHole, compactBucketChain, hashtableScan, hashtableNext,
 * hashtableIncrementalFindStep. Written from the design. Where soloist
 * differs, the comment at the spot says why: no resize policy (no fork to
 * protect); tables aligned to 64 bytes; callers take the rehash step
 * before fetching any key; cron also starts pending shrinks; random
 * sampling masks its cursor and keeps a one-entry reservoir; the safe
 * iterator never revisits a slot-6 entry that an insert pushed into a new
 * child bucket; compaction only by the sole pauser.
 */
#include "hashtable.h"

#include "siphash.h"
#include "zmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* --- Sizing ----------------------------------------------------------------
 * buckets = ceil(n * 5 / 32) rounded up to a power of two, i.e. at most
 * 32/5/7 = 91.4 % full right after a resize, without a division by 7. Grow
 * when an insert would pass 100 % fill, shrink when a delete leaves <= 13 %.
 * (Valkey also has 500 % / 3 % "hard" limits for when a fork child makes
 * moving memory costly; soloist never forks.) */
#define BUCKET_FACTOR 5
#define BUCKET_DIVISOR 32
#define GROW_FILL_PERCENT 100
#define SHRINK_FILL_PERCENT 13
#define FAIR_SAMPLES (SLOTS * 10)
#define SPARSE_SAMPLES SLOTS

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

static inline void put(bucket *b, int pos, void *entry, uint8_t h2) {
    b->slot[pos] = entry;
    b->h2[pos] = h2;
    b->meta |= (uint8_t)(1u << pos);
}

static inline void move_slot(bucket *to, int to_pos, bucket *from, int from_pos) {
    ht_assert(!(presence(to) & (1u << to_pos)) && (presence(from) & (1u << from_pos)));
    put(to, to_pos, from->slot[from_pos], from->h2[from_pos]);
    from->meta &= (uint8_t) ~(1u << from_pos);
}

/* ceil(n * 5 / 32) buckets, rounded up to a power of two, as an exponent. */
static int8_t exp_for_capacity(size_t n) {
    ht_assert(n > 0 && n < SIZE_MAX / BUCKET_FACTOR);
    size_t want = (n * BUCKET_FACTOR - 1) / BUCKET_DIVISOR + 1;
    if (want == 1) return 0;
    return (int8_t)(64 - __builtin_clzll((unsigned long long)(want - 1)));
}

/* Tables are aligned to 64 bytes so each bucket is one cache line (glibc's
 * malloc aligns to 16 only; Valkey gets this from jemalloc). Child buckets
 * are single 64-byte allocations and are left as malloc places them. */
static void table_alloc(hashtable *ht, int t, int8_t exp) {
    size_t n = num_buckets(exp);
    ht_assert(n <= SIZE_MAX / sizeof(bucket) - 1);
    ht->raw[t] = zcalloc(n * sizeof(bucket) + 63);
    ht->tables[t] = (bucket *)(((uintptr_t)ht->raw[t] + 63) & ~(uintptr_t)63);
    ht->exp[t] = exp;
    ht->used[t] = 0;
    ht->child_buckets[t] = 0;
}

static void table_reset(hashtable *ht, int t) {
    ht->tables[t] = NULL;
    ht->raw[t] = NULL;
    ht->used[t] = 0;
    ht->child_buckets[t] = 0;
    ht->exp[t] = -1;
}

/* --- Insertion into one table ----------------------------------------------- */

/* A full bucket becomes chained: its last entry moves to a new child, and
 * the freed slot points at the child. Valkey: bucketConvertToChained. */
static void make_chained(hashtable *ht, int t, bucket *b) {
    bucket *c = zcalloc(sizeof *c);
    put(c, 0, b->slot[LINK], b->h2[LINK]);
    b->meta = (uint8_t)((b->meta & ~(1u << LINK)) | CHAINED);
    b->slot[LINK] = c;
    ht->child_buckets[t]++;
}

/* The first free slot in the chain that `hash` selects in table t, chaining
 * a new bucket if the whole chain is full. Valkey: findBucketForInsert. */
static bucket *free_slot(hashtable *ht, int t, uint64_t hash, int *pos) {
    bucket *b = &ht->tables[t][hash & mask_of(ht->exp[t])];
    while (is_full(b)) {
        if (!is_chained(b)) make_chained(ht, t, b);
        b = child_of(b);
    }
    *pos = __builtin_ctz(~presence(b) & (is_chained(b) ? LINKED_SLOTS : ALL_SLOTS));
    return b;
}

/* --- Rehashing ---------------------------------------------------------------- */

static void rehash_completed(hashtable *ht) {
    zfree(ht->raw[0]);
    ht->tables[0] = ht->tables[1];
    ht->raw[0] = ht->raw[1];
    ht->used[0] = ht->used[1];
    ht->child_buckets[0] = ht->child_buckets[1];
    ht->exp[0] = ht->exp[1];
    table_reset(ht, 1);
    ht->rehash_idx = -1;
}

/* Moves table 0's bucket rehash_idx and its whole chain into table 1. The
 * stored secondary hash travels with each entry. When shrinking, the new
 * index is the old index masked, so no entry is rehashed at all; growing
 * must hash each entry again (the new mask has bits the index lacks).
 * Valkey: rehashStep, rehashBucket. */
/*@ ht-rehash-step */
static void rehash_step(hashtable *ht) {
    size_t idx = (size_t)ht->rehash_idx;
    bucket *head = &ht->tables[0][idx];
    int shrinking = ht->exp[1] < ht->exp[0];
    for (bucket *b = head; b != NULL;) {
        for (unsigned p = presence(b); p != 0; p &= p - 1) {
            int pos = __builtin_ctz(p);
            uint64_t hash = shrinking ? idx : hash_entry(ht, b->slot[pos]);
            int dst_pos;
            bucket *dst = free_slot(ht, 1, hash, &dst_pos);
            put(dst, dst_pos, b->slot[pos], b->h2[pos]);
            ht->used[0]--;
            ht->used[1]++;
        }
        bucket *next = child_of(b);
        if (b != head) {
            zfree(b);
            ht->child_buckets[0]--;
        }
        b = next;
    }
    head->meta = 0;
    if ((size_t)++ht->rehash_idx == num_buckets(ht->exp[0])) rehash_completed(ht);
}
/*@ end */

/* Lookups and inserts each pay one step, so a rehash always finishes long
 * before the new table fills (Valkey: rehashStepOnReadIfNeeded). */
static inline void rehash_step_if_allowed(hashtable *ht) {
    if (rehashing(ht) && ht->pause_rehash == 0) rehash_step(ht);
}

/* Starts a rehash into a table sized for min_capacity entries. An empty
 * old table is swapped out at once. Valkey: resize. */
static void resize(hashtable *ht, size_t min_capacity) {
    ht_assert(!rehashing(ht));
    int8_t exp = exp_for_capacity(min_capacity ? min_capacity : 1);
    if (exp == ht->exp[0]) return;
    table_alloc(ht, 1, exp);
    ht->rehash_idx = 0;
    if (ht->tables[0] == NULL || (ht->used[0] == 0 && ht->child_buckets[0] == 0)) rehash_completed(ht);
}

static void expand_if_needed(hashtable *ht) {
    if (rehashing(ht)) return;
    size_t want = ht->used[0] + 1;
    size_t capacity = num_buckets(ht->exp[0]) * SLOTS;
    if (want * 100 > capacity * GROW_FILL_PERCENT) resize(ht, want);
}

static void shrink_if_needed(hashtable *ht) {
    if (rehashing(ht) || ht->pause_shrink > 0 || ht->tables[0] == NULL) return;
    size_t capacity = num_buckets(ht->exp[0]) * SLOTS;
    if (ht->used[0] * 100 <= capacity * SHRINK_FILL_PERCENT) resize(ht, ht->used[0]);
}

static uint64_t monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Cron. Besides running steps it starts a shrink that deletions left
 * pending: a delete cannot shrink while a rehash is in progress, and once
 * the table is quiet no delete comes to ask again (Valkey does this in
 * databasesCron's tryResizeHashTables; soloist folds it in here).
 * Valkey: hashtableRehashMicroseconds. */
void hashtable_rehash_microseconds(hashtable *ht, uint64_t us) {
    if (ht->pause_rehash > 0) return;
    uint64_t start = monotonic_us();
    for (unsigned steps = 1;; steps++) {
        if (!rehashing(ht)) shrink_if_needed(ht);
        if (!rehashing(ht)) break;
        rehash_step(ht);
        if (steps % 128 == 0 && monotonic_us() - start >= us) break;
    }
}

void hashtable_pause_rehashing(hashtable *ht) {
    ht->pause_rehash++;
    ht->pause_shrink++;
}

void hashtable_resume_rehashing(hashtable *ht) {
    ht_assert(ht->pause_rehash > 0 && ht->pause_shrink > 0);
    ht->pause_rehash--;
    if (--ht->pause_shrink == 0) shrink_if_needed(ht);
}

/* --- Deletion: keeping chains short ------------------------------------------- */

/* Frees `last` (the end of a chain, holding at most one entry) and makes
 * `prev` the end again; last's entry, if any, takes the link's place.
 * Valkey: pruneLastBucket. */
static void prune_last(hashtable *ht, int t, bucket *prev, bucket *last) {
    ht_assert(child_of(prev) == last && !is_chained(last) && __builtin_popcount(presence(last)) <= 1);
    prev->meta &= (uint8_t)~CHAINED;
    prev->slot[LINK] = NULL;
    if (presence(last)) move_slot(prev, LINK, last, __builtin_ctz(presence(last)));
    zfree(last);
    ht->child_buckets[t]--;
}

/* Slot `pos` of chained bucket b was just emptied: refill it from the last
 * bucket of the chain and free that bucket once it holds at most one entry.
 * If the last bucket is already empty (an entry deleted there directly),
 * drop it and retry, so only the last bucket of a chain ever has holes.
 * Valkey: fillBucketHole. */
static void fill_hole(hashtable *ht, int t, bucket *b, int pos) {
    while (is_chained(b)) {
        bucket *prev = b, *last = child_of(b);
        while (is_chained(last)) {
            prev = last;
            last = child_of(last);
        }
        if (presence(last) == 0) {
            prune_last(ht, t, prev, last);
            continue;
        }
        move_slot(b, pos, last, __builtin_ctz(presence(last)));
        if (__builtin_popcount(presence(last)) <= 1) prune_last(ht, t, prev, last);
        return;
    }
}

/* Deletions made while rehashing was paused left holes anywhere in the
 * chain at idx (entries could not move under an iterator or a scan). Once
 * that chain has been visited, fill the holes from the end and free the
 * buckets that empties. Valkey: compactBucketChain. */
static void compact_chain(hashtable *ht, int t, size_t idx) {
    bucket *b = &ht->tables[t][idx];
    while (is_chained(b)) {
        bucket *next = child_of(b);
        if (is_chained(next) && presence(next) == 0) { /* empty middle bucket: unlink */
            b->slot[LINK] = next->slot[LINK];
            zfree(next);
            ht->child_buckets[t]--;
            continue;
        }
        if (!is_chained(next) && __builtin_popcount(presence(next)) <= 1) {
            prune_last(ht, t, b, next);
            return;
        }
        while (is_chained(b) && presence(b) != LINKED_SLOTS)
            fill_hole(ht, t, b, __builtin_ctz(~presence(b) & LINKED_SLOTS));
        if (!is_chained(b)) return;
        b = child_of(b);
    }
}

/* --- Lookup ----------------------------------------------------------------------- */

/* Table 0 first, skipping its buckets below rehash_idx (already moved),
 * then table 1 while rehashing. In each bucket of the chain, the secondary
 * hash picks the candidates; only they cost a key comparison (and the
 * cache miss of reading the entry). Valkey: findBucket, which also takes
 * the rehash step; here the callers take it first, before asking for any
 * key, so a rehash step's entry_get_key calls can never overwrite a
 * temporary key the caller still holds. For the same reason an insert
 * passes its entry (key_entry) rather than its key: the new entry's key is
 * fetched again just before each comparison, so no temporary has to live
 * across more than one further entry_get_key call (see hashtable.h). */
/*@ ht-find-bucket */
static bucket *find_bucket(hashtable *ht, uint64_t hash, const void *key, const void *key_entry, int *pos, int *table) {
    if (hashtable_size(ht) == 0) return NULL;
    uint8_t h2 = high_byte(hash);
    for (int t = 0; t <= 1; t++) {
        if (ht->used[t] == 0) continue;
        size_t idx = hash & mask_of(ht->exp[t]);
        if (t == 0 && rehashing(ht) && idx < (size_t)ht->rehash_idx) continue;
        for (bucket *b = &ht->tables[t][idx]; b != NULL; b = child_of(b)) {
            for (unsigned m = match_h2(b, h2); m != 0; m &= m - 1) {
                int p = __builtin_ctz(m);
                if (key_entry) key = key_of(ht, key_entry); /* fetched afresh: see hashtable.h */
                if (keys_equal(ht, key, key_of(ht, b->slot[p]))) {
                    *pos = p;
                    if (table) *table = t;
                    return b;
                }
            }
        }
    }
    return NULL;
}
/*@ end */

/* --- Hashing ------------------------------------------------------------------------ */

static uint8_t hash_seed[16];

void hashtable_set_hash_seed(const uint8_t seed[16]) { memcpy(hash_seed, seed, sizeof hash_seed); }
uint64_t hashtable_gen_hash(const void *buf, size_t len) { return siphash13(buf, len, hash_seed); }

uint64_t hashtable_key_hash(const void *key) {
    const hashtable_key *k = key;
    return hashtable_gen_hash(k->ptr, k->len);
}

int hashtable_key_compare(const void *a, const void *b) {
    const hashtable_key *x = a, *y = b;
    return x->len != y->len || (x->len != 0 && memcmp(x->ptr, y->ptr, x->len) != 0);
}

/* --- Public API: life cycle -------------------------------------------------------- */

hashtable *hashtable_create(const hashtable_type *type) {
    ht_assert(type != NULL && type->hash_key != NULL);
    hashtable *ht = zcalloc(sizeof *ht);
    ht->type = type;
    ht->rehash_idx = -1;
    table_reset(ht, 0);
    table_reset(ht, 1);
    return ht;
}

void hashtable_empty(hashtable *ht) {
    for (int t = 0; t <= 1; t++) {
        for (size_t idx = 0; idx < num_buckets(ht->exp[t]); idx++) {
            bucket *head = &ht->tables[t][idx];
            for (bucket *b = head; b != NULL;) {
                if (ht->type->entry_destructor)
                    for (unsigned p = presence(b); p != 0; p &= p - 1)
                        ht->type->entry_destructor(b->slot[__builtin_ctz(p)]);
                bucket *next = child_of(b);
                if (b != head) zfree(b);
                b = next;
            }
        }
        zfree(ht->raw[t]);
        table_reset(ht, t);
    }
    ht->rehash_idx = -1;
}

void hashtable_release(hashtable *ht) {
    hashtable_empty(ht);
    zfree(ht);
}

size_t hashtable_size(const hashtable *ht) { return ht->used[0] + ht->used[1]; }
size_t hashtable_buckets(const hashtable *ht) { return num_buckets(ht->exp[0]) + num_buckets(ht->exp[1]); }
size_t hashtable_child_buckets(const hashtable *ht) { return ht->child_buckets[0] + ht->child_buckets[1]; }
int hashtable_is_rehashing(const hashtable *ht) { return rehashing(ht); }

size_t hashtable_mem_usage(const hashtable *ht) {
    return sizeof *ht + sizeof(bucket) * (hashtable_buckets(ht) + hashtable_child_buckets(ht));
}

/* --- Public API: find, add, delete --------------------------------------------------- */

int hashtable_find(hashtable *ht, const void *key, void **found) {
    void **ref = hashtable_find_ref(ht, key);
    if (ref && found) *found = *ref;
    return ref != NULL;
}

void **hashtable_find_ref(hashtable *ht, const void *key) {
    if (hashtable_size(ht) == 0) return NULL;
    rehash_step_if_allowed(ht);
    int pos;
    bucket *b = find_bucket(ht, ht->type->hash_key(key), key, NULL, &pos, NULL);
    return b ? &b->slot[pos] : NULL;
}

int hashtable_add(hashtable *ht, void *entry) { return hashtable_add_or_find(ht, entry, NULL); }

/* New entries go to table 1 while rehashing: table 0 is being emptied.
 * Valkey: hashtableAddOrFind, insert. */
int hashtable_add_or_find(hashtable *ht, void *entry, void **existing) {
    rehash_step_if_allowed(ht);
    uint64_t hash = ht->type->hash_key(key_of(ht, entry));
    int pos;
    bucket *b = find_bucket(ht, hash, NULL, entry, &pos, NULL);
    if (b) {
        if (existing) *existing = b->slot[pos];
        return 0;
    }
    expand_if_needed(ht);
    int t = rehashing(ht) ? 1 : 0;
    b = free_slot(ht, t, hash, &pos);
    put(b, pos, entry, high_byte(hash));
    ht->used[t]++;
    return 1;
}

int hashtable_pop(hashtable *ht, const void *key, void **popped) {
    if (hashtable_size(ht) == 0) return 0;
    rehash_step_if_allowed(ht);
    int pos, t;
    bucket *b = find_bucket(ht, ht->type->hash_key(key), key, NULL, &pos, &t);
    if (!b) return 0;
    if (popped) *popped = b->slot[pos];
    b->meta &= (uint8_t) ~(1u << pos);
    ht->used[t]--;
    /* While paused, an iterator or scan may be standing in this chain:
     * leave the hole; they compact the chain once they have passed it. */
    if (is_chained(b) && ht->pause_rehash == 0) fill_hole(ht, t, b, pos);
    shrink_if_needed(ht);
    return 1;
}

int hashtable_delete(hashtable *ht, const void *key) {
    void *entry;
    if (!hashtable_pop(ht, key, &entry)) return 0;
    if (ht->type->entry_destructor) ht->type->entry_destructor(entry);
    return 1;
}

/* --- Scan ------------------------------------------------------------------------------ */

static size_t reverse_bits(size_t v) {
    v = ((v >> 1) & 0x5555555555555555u) | ((v & 0x5555555555555555u) << 1);
    v = ((v >> 2) & 0x3333333333333333u) | ((v & 0x3333333333333333u) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fu) | ((v & 0x0f0f0f0f0f0f0f0fu) << 4);
    return __builtin_bswap64(v);
}

/* Increments the cursor's masked bits from the most significant down
 * (Pieter Noordhuis's reverse-binary iteration): setting the unmasked bits
 * first makes the carry pass straight through them. Because the order
 * visits every index of a 2^k table in an order in which each index's
 * expansions in a 2^(k+j) table are contiguous, indices already returned
 * stay covered when the table grows or shrinks between calls. */
static size_t next_cursor(size_t cursor, size_t mask) { return reverse_bits(reverse_bits(cursor | ~mask) + 1); }

static void scan_chain(hashtable *ht, int t, size_t idx, hashtable_scan_fn fn, void *privdata) {
    size_t before = ht->used[t];
    for (bucket *b = &ht->tables[t][idx]; b != NULL; b = child_of(b))
        for (unsigned p = presence(b); p != 0 && fn; p &= p - 1) fn(privdata, b->slot[__builtin_ctz(p)]);
    /* Compact only if the callbacks deleted something and no one else
     * (an iterator) has rehashing paused and might be standing here. */
    if (ht->used[t] < before && ht->pause_rehash == 1) compact_chain(ht, t, idx);
}

/* Not rehashing: visit one chain. Rehashing: visit the cursor's chain in the
 * smaller table (unless already moved) and every chain of the larger table
 * that the same low bits expand to, so the cursor covers the same slice of
 * the hash space in both. Valkey: hashtableScan. */
/*@ ht-scan */
size_t hashtable_scan(hashtable *ht, size_t cursor, hashtable_scan_fn fn, void *privdata) {
    if (hashtable_size(ht) == 0) return 0;
    hashtable_pause_rehashing(ht);
    if (!rehashing(ht)) {
        size_t mask = mask_of(ht->exp[0]);
        scan_chain(ht, 0, cursor & mask, fn, privdata);
        cursor = next_cursor(cursor, mask);
    } else {
        int small = ht->exp[0] <= ht->exp[1] ? 0 : 1, large = 1 - small;
        size_t mask_s = mask_of(ht->exp[small]), mask_l = mask_of(ht->exp[large]);
        size_t idx = cursor & mask_s;
        if (small == 1 || idx >= (size_t)ht->rehash_idx) scan_chain(ht, small, idx, fn, privdata);
        do {
            idx = cursor & mask_l;
            if (large == 1 || idx >= (size_t)ht->rehash_idx) scan_chain(ht, large, idx, fn, privdata);
            cursor = next_cursor(cursor, mask_l);
        } while (cursor & (mask_s ^ mask_l));
    }
    hashtable_resume_rehashing(ht);
    return cursor;
}
/*@ end */

/* --- Random ------------------------------------------------------------------------------- */

/* splitmix64: a small, fast PRNG for sampling; main thread only. */
static uint64_t rng_state = 0x243f6a8885a308d3u;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Valkey collects the sampled entries in an array and picks one; a
 * one-entry reservoir (keep the i-th entry seen with probability 1/i)
 * picks uniformly from the same stream without the array. */
typedef struct reservoir {
    void *pick;
    size_t seen;
} reservoir;

static void reservoir_add(void *privdata, void *entry) {
    reservoir *r = privdata;
    if (rng_next() % ++r->seen == 0) r->pick = entry;
}

/* Valkey: hashtableFairRandomEntry. Scans chains from random cursors until
 * ~70 entries have been seen (7 when the table is sparse), then returns one
 * of them uniformly. A random cursor selects each slice of the hash space
 * with equal probability, in both tables while rehashing. */
int hashtable_fair_random_entry(hashtable *ht, void **found) {
    size_t size = hashtable_size(ht);
    if (size == 0) return 0;
    size_t want = size >= hashtable_buckets(ht) ? FAIR_SAMPLES : SPARSE_SAMPLES;
    if (want > size) want = size;
    /* The cursor is masked to the smaller table: a scan call covers the
     * whole expansion of a smaller-table index only when the cursor's
     * extra bits start at zero (as scan's own cursors do). Valkey passes an
     * unmasked random cursor, which mid-rehash samples the larger table's
     * buckets with a 0 in those bits less often than the rest. */
    int8_t small_exp = rehashing(ht) && ht->exp[1] < ht->exp[0] ? ht->exp[1] : ht->exp[0];
    reservoir r = {NULL, 0};
    while (r.seen < want) hashtable_scan(ht, (size_t)rng_next() & mask_of(small_exp), reservoir_add, &r);
    *found = r.pick;
    rehash_step_if_allowed(ht);
    return 1;
}

/* --- Iterators ----------------------------------------------------------------------------- */

typedef struct iter {
    hashtable *ht;
    bucket *b;                       /* current bucket (NULL before the first next) */
    size_t idx;                      /* current top-level index */
    uint64_t check;                  /* unsafe: fingerprint; safe: used[table] when this chain began */
    uint8_t table, pos, safe, state; /* state: 0 fresh, 1 walking, 2 done */
} iter;
_Static_assert(sizeof(iter) <= sizeof(hashtable_iterator), "hashtable_iterator too small");

static uint64_t fingerprint(const hashtable *ht) {
    uint64_t parts[6] = {(uintptr_t)ht->tables[0], (uint64_t)ht->exp[0], ht->used[0],
                         (uintptr_t)ht->tables[1], (uint64_t)ht->exp[1], ht->used[1]};
    uint64_t h = 0;
    for (int i = 0; i < 6; i++) {
        h = (h ^ parts[i]) * 0xff51afd7ed558ccdu;
        h ^= h >> 33;
    }
    return h;
}

void hashtable_init_iterator(hashtable_iterator *pub, hashtable *ht, int safe) {
    iter *it = (iter *)(void *)pub;
    *it = (iter){.ht = ht, .safe = safe != 0};
    if (it->safe)
        hashtable_pause_rehashing(ht);
    else
        it->check = fingerprint(ht);
}

/* Visits table 0 from rehash_idx (below it is empty), then table 1 if
 * rehashing: with rehashing paused nothing moves between the two, so each
 * entry is seen once. Positions 0-5, then slot 6 is either an entry or the
 * way to the child bucket. Valkey: hashtableNext. */
int hashtable_next(hashtable_iterator *pub, void **entry) {
    iter *it = (iter *)(void *)pub;
    hashtable *ht = it->ht;
    if (!it->safe) ht_assert(it->check == fingerprint(ht) && "table modified during unsafe iteration");
    if (it->state == 2) return 0;
    for (;;) {
        if (it->state == 0) {
            it->state = 1;
            if (ht->tables[0] == NULL) break;
            it->table = 0;
            it->idx = rehashing(ht) ? (size_t)ht->rehash_idx : 0;
            it->b = &ht->tables[0][it->idx];
            it->pos = 0;
            if (it->safe) it->check = ht->used[0];
        } else if (++it->pos == LINK && is_chained(it->b)) {
            it->b = child_of(it->b);
            it->pos = 0;
        } else if (it->pos == SLOTS) {
            /* Chain done (if slot 6 was an entry when we passed it, any
             * child chained since holds only it and newer entries). */
            if (it->safe) {
                if (ht->pause_rehash == 1 && ht->used[it->table] < it->check) compact_chain(ht, it->table, it->idx);
                it->check = ht->used[it->table];
            }
            it->pos = 0;
            if (++it->idx == num_buckets(ht->exp[it->table])) {
                if (it->table == 1 || !rehashing(ht)) break;
                it->table = 1;
                it->idx = 0;
                if (it->safe) it->check = ht->used[1];
            }
            it->b = &ht->tables[it->table][it->idx];
        }
        if (presence(it->b) & (1u << it->pos)) {
            *entry = it->b->slot[it->pos];
            return 1;
        }
    }
    it->state = 2;
    return 0;
}

void hashtable_reset_iterator(hashtable_iterator *pub) {
    iter *it = (iter *)(void *)pub;
    if (it->ht == NULL) return;
    if (it->safe)
        hashtable_resume_rehashing(it->ht);
    else
        ht_assert(it->check == fingerprint(it->ht) && "table modified during unsafe iteration");
    it->ht = NULL;
}

/* --- Resumable find ------------------------------------------------------------------------- */

enum { IF_CHECK_ENTRY, IF_NEXT_ENTRY, IF_NEXT_BUCKET, IF_FOUND, IF_NOT_FOUND };

typedef struct ifind {
    hashtable *ht;
    bucket *b;
    const void *key;
    uint64_t hash;
    uint8_t state, table, pos;
} ifind;
_Static_assert(sizeof(ifind) <= sizeof(hashtable_incremental_find_state), "incremental find state too small");

void hashtable_incremental_find_init(hashtable_incremental_find_state *s, hashtable *ht, const void *key) {
    ifind *f = (ifind *)(void *)s;
    *f = (ifind){.ht = ht, .key = key, .state = IF_NOT_FOUND};
    if (hashtable_size(ht) == 0) return;
    f->hash = ht->type->hash_key(key);
    f->state = IF_NEXT_BUCKET;
}

/* One step = use what the previous step prefetched, prefetch the next
 * thing. The states in the order a lookup meets them:
 *   NEXT_BUCKET  pick the next bucket (first, child, or table 1), prefetch it
 *   NEXT_ENTRY   the bucket is in cache: find the next h2 candidate,
 *                prefetch the entry it points to
 *   CHECK_ENTRY  the entry is in cache: compare keys; on a mismatch carry on
 *                with the next candidate (falling through the cases)
 * Valkey: hashtableIncrementalFindStep. */
/*@ ht-incremental-find-step */
int hashtable_incremental_find_step(hashtable_incremental_find_state *s) {
    ifind *f = (ifind *)(void *)s;
    hashtable *ht = f->ht;
    switch (f->state) {
    case IF_CHECK_ENTRY:
        if (keys_equal(ht, f->key, key_of(ht, f->b->slot[f->pos]))) {
            f->state = IF_FOUND;
            return 0;
        }
        f->pos++;
        __attribute__((fallthrough));
    case IF_NEXT_ENTRY: {
        unsigned m = match_h2(f->b, high_byte(f->hash)) & (ALL_SLOTS << f->pos);
        if (m != 0) {
            f->pos = (uint8_t)__builtin_ctz(m);
            __builtin_prefetch(f->b->slot[f->pos]);
            f->state = IF_CHECK_ENTRY;
            return 1;
        }
    }
        __attribute__((fallthrough));
    case IF_NEXT_BUCKET:
        if (f->b == NULL) {
            size_t idx = f->hash & mask_of(ht->exp[0]);
            f->table = 0;
            if (rehashing(ht) && idx < (size_t)ht->rehash_idx) {
                f->table = 1;
                idx = f->hash & mask_of(ht->exp[1]);
            }
            f->b = &ht->tables[f->table][idx];
        } else if (is_chained(f->b)) {
            f->b = child_of(f->b);
        } else if (f->table == 0 && rehashing(ht)) {
            f->table = 1;
            f->b = &ht->tables[1][f->hash & mask_of(ht->exp[1])];
        } else {
            f->state = IF_NOT_FOUND;
            return 0;
        }
        __builtin_prefetch(f->b);
        f->state = IF_NEXT_ENTRY;
        f->pos = 0;
        return 1;
    default:
        return 0;
    }
}
/*@ end */

int hashtable_incremental_find_get_result(hashtable_incremental_find_state *s, void **found) {
    ifind *f = (ifind *)(void *)s;
    if (f->state == IF_FOUND) {
        if (found) *found = f->b->slot[f->pos];
        return 1;
    }
    ht_assert(f->state == IF_NOT_FOUND);
    return 0;
}

/* --- Verification (tests) --------------------------------------------------------------------- */

#define VERIFY(c, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "hashtable_verify: " __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                                       \
            return 0;                                                                                                  \
        }                                                                                                              \
    } while (0)

int hashtable_verify(hashtable *ht) {
    VERIFY(rehashing(ht) == (ht->tables[1] != NULL), "rehash_idx %lld vs table 1 %p", (long long)ht->rehash_idx,
           (void *)ht->tables[1]);
    for (int t = 0; t <= 1; t++) {
        size_t used = 0, children = 0, n = num_buckets(ht->exp[t]);
        VERIFY((n == 0) == (ht->tables[t] == NULL), "table %d: exp %d vs %p", t, ht->exp[t], (void *)ht->tables[t]);
        for (size_t idx = 0; idx < n; idx++) {
            bucket *head = &ht->tables[t][idx];
            if (t == 0 && rehashing(ht) && idx < (size_t)ht->rehash_idx)
                VERIFY(head->meta == 0, "table 0 bucket %zu below rehash_idx not empty", idx);
            for (bucket *b = head; b != NULL; b = child_of(b)) {
                if (b != head) children++;
                VERIFY(!is_chained(b) || !(presence(b) & (1u << LINK)), "chained bucket with slot 6 present");
                VERIFY(!is_chained(b) || b->slot[LINK] != NULL, "chained bucket with NULL child");
                for (unsigned p = presence(b); p != 0; p &= p - 1) {
                    int pos = __builtin_ctz(p);
                    uint64_t h = hash_entry(ht, b->slot[pos]);
                    used++;
                    VERIFY(b->h2[pos] == high_byte(h), "table %d bucket %zu slot %d: h2 %02x, hash says %02x", t, idx,
                           pos, b->h2[pos], high_byte(h));
                    VERIFY((h & mask_of(ht->exp[t])) == idx, "table %d: entry in bucket %zu belongs in %zu", t, idx,
                           (size_t)(h & mask_of(ht->exp[t])));
                }
            }
        }
        VERIFY(used == ht->used[t], "table %d: %zu entries present, used says %zu", t, used, ht->used[t]);
        VERIFY(children == ht->child_buckets[t], "table %d: %zu child buckets, count says %zu", t, children,
               ht->child_buckets[t]);
    }
    return 1;
}
