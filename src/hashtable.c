/* hashtable.c — the table's core: buckets, find, add, delete, rehash.
 *
 * Step 0 (keyspace layer). Main thread only. See hashtable.h for the API and
 * the layout in one paragraph, hashtable_private.h for the bucket and the
 * struct; this file explains the why as it goes. The walks over the whole
 * table (scan, iterators, fair random) are in hashtable_iter.c; the resumable
 * find that step 6 interleaves is in hashtable_incremental_find.c.
 * Valkey: src/hashtable.c (8.1): bucket, findBucket, insert, rehashStep,
 * fillBucketHole, compactBucketChain, hashtableAddOrFind, hashtablePop.
 * Where soloist differs, the comment at the spot says why: no resize
 * policy (no fork to protect); tables aligned to 64 bytes; callers take
 * the rehash step before fetching any key; cron also starts pending
 * shrinks.
 */
#include "hashtable.h"
#include "hashtable_private.h"
#include "hashtable_test.h"

#include "siphash.h"
#include "util.h"
#include "zmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* --- Bucket writes ---------------------------------------------------------- */

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
void ht_rehash_step_if_allowed(hashtable *ht) {
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

/* Cron. Besides running steps it starts a shrink that deletions left
 * pending: a delete cannot shrink while a rehash is in progress, and once
 * the table is quiet no delete comes to ask again (Valkey does this in
 * databasesCron's tryResizeHashTables; soloist folds it in here).
 * Valkey: hashtableRehashMicroseconds. */
void hashtable_rehash_microseconds(hashtable *ht, uint64_t us) {
    if (ht->pause_rehash > 0) return;
    uint64_t start = util_monotonic_us();
    for (unsigned steps = 1;; steps++) {
        if (!rehashing(ht)) shrink_if_needed(ht);
        if (!rehashing(ht)) break;
        rehash_step(ht);
        if (steps % 128 == 0 && util_monotonic_us() - start >= us) break;
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
void ht_compact_chain(hashtable *ht, int t, size_t idx) {
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
        if (already_moved(ht, t, idx)) continue;
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

/*@ ht-find */
int hashtable_find(hashtable *ht, const void *key, void **found) {
    void **ref = hashtable_find_ref(ht, key);
    if (ref && found) *found = *ref;
    return ref != NULL;
}

void **hashtable_find_ref(hashtable *ht, const void *key) {
    if (hashtable_size(ht) == 0) return NULL;
    ht_rehash_step_if_allowed(ht);
    int pos;
    bucket *b = find_bucket(ht, ht->type->hash_key(key), key, NULL, &pos, NULL);
    return b ? &b->slot[pos] : NULL;
}
/*@ end */

int hashtable_add(hashtable *ht, void *entry) { return hashtable_add_or_find(ht, entry, NULL); }

/* New entries go to table 1 while rehashing: table 0 is being emptied.
 * Valkey: hashtableAddOrFind, insert. */
int hashtable_add_or_find(hashtable *ht, void *entry, void **existing) {
    ht_rehash_step_if_allowed(ht);
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
    ht_rehash_step_if_allowed(ht);
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

/* --- Verification (tests) --------------------------------------------------------------------- */

#define VERIFY(c, ...) UTIL_VERIFY("hashtable_verify", c, __VA_ARGS__)

int hashtable_verify(hashtable *ht) {
    VERIFY(rehashing(ht) == (ht->tables[1] != NULL), "rehash_idx %lld vs table 1 %p", (long long)ht->rehash_idx,
           (void *)ht->tables[1]);
    for (int t = 0; t <= 1; t++) {
        size_t used = 0, children = 0, n = num_buckets(ht->exp[t]);
        VERIFY((n == 0) == (ht->tables[t] == NULL), "table %d: exp %d vs %p", t, ht->exp[t], (void *)ht->tables[t]);
        for (size_t idx = 0; idx < n; idx++) {
            bucket *head = &ht->tables[t][idx];
            if (already_moved(ht, t, idx))
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
