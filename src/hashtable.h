/* hashtable.h — the keyspace's hash table: cache-line buckets, incremental
 * rehash, stateless scan and a resumable (prefetchable) find.
 *
 * Step 0 (keyspace layer); its resumable find is what step 6's batch
 * prefetcher interleaves. Owns: the buckets and the two tables; never the
 * entries, which are caller-owned pointers the table only stores (the type's
 * entry_destructor, when set, is called by release/empty/delete).
 * Threads: MAIN THREAD ONLY. The keyspace is the soloist's; no function
 * here takes a lock or is safe to call from an I/O thread, and even a find
 * may move entries (a rehash step). The hash seed and the sampling PRNG are
 * process-wide and main-thread-only too.
 * Valkey: src/hashtable.c / src/hashtable.h (Valkey 8.1, PR #1186):
 * hashtableFind, hashtableAdd, hashtablePop, rehashStep, hashtableScan,
 * hashtableNext, hashtableFairRandomEntry, hashtableIncrementalFind*.
 * Names are snake_case, and each function says which Valkey function it
 * stands for.
 * Files: hashtable.c (buckets, find, add, delete, rehash, verify),
 * hashtable_iter.c (scan, iterators, fair random),
 * hashtable_incremental_find.c (the resumable find); what they share is in
 * hashtable_private.h, which nothing else includes.
 *
 * Layout in one paragraph: a table is 2^k buckets of 64 bytes (one cache
 * line): a metadata byte (1 "chained" bit + 7 presence bits), 7 one-byte
 * secondary hashes (the top 8 bits of each entry's 64-bit hash) and 7 entry
 * pointers. The low bits of the hash pick the bucket; the secondary hash
 * rules out almost every non-matching slot without touching the entry. A
 * full bucket turns its last slot into a pointer to a child bucket. Two
 * tables exist while rehashing; entries move one bucket chain per step.
 */
#ifndef SOLOIST_HASHTABLE_H
#define SOLOIST_HASHTABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct hashtable hashtable;

/* A convenience key type for users whose keys are byte strings (the db):
 * the table itself treats keys as opaque `const void *`. Use it together
 * with hashtable_key_hash / hashtable_key_compare below. */
typedef struct hashtable_key {
    const char *ptr;
    size_t len;
} hashtable_key;

typedef struct hashtable_type {
    /* Hash of a lookup key (required). Valkey: hashFunction. */
    uint64_t (*hash_key)(const void *key);
    /* The key stored in an entry (NULL: the entry is its own key). The
     * returned pointer may point at a temporary: the table uses each result
     * at once, for one hash_key or one key_compare call within the same
     * hashtable_* call, and never keeps it. One key_compare may pair two
     * results (an entry being added and a stored entry, fetched in that
     * order), so a temporary must stay valid across ONE further
     * entry_get_key call: rotating between two buffers is enough. A
     * pointer into the entry itself is simplest. Valkey: entryGetKey. */
    const void *(*entry_get_key)(const void *entry);
    /* 0 when equal, like Valkey's keyCompare (NULL: pointer equality). */
    int (*key_compare)(const void *a, const void *b);
    /* Called on entries removed by release, empty and delete; may be NULL. */
    void (*entry_destructor)(void *entry);
} hashtable_type;

/* --- Hashing (Valkey: hashtableGenHashFunction, hashtableSetHashFunctionSeed) */

/* SipHash-1-3 of [buf, buf+len) under the process-wide 16-byte seed. */
uint64_t hashtable_gen_hash(const void *buf, size_t len);
/* Sets the seed (all zeros until called). Choosing a random one at start-up
 * is the caller's job; change it only while no table holds entries, since
 * existing entries would no longer be found. */
void hashtable_set_hash_seed(const uint8_t seed[16]);
/* hash_key / key_compare for keys that are `const hashtable_key *`. */
uint64_t hashtable_key_hash(const void *key);
int hashtable_key_compare(const void *a, const void *b);

/* --- Life cycle and size ------------------------------------------------ */

hashtable *hashtable_create(const hashtable_type *type);
void hashtable_release(hashtable *ht); /* calls entry_destructor on each entry */
void hashtable_empty(hashtable *ht);   /* remove all, destructors called, keep table usable */
size_t hashtable_size(const hashtable *ht);
size_t hashtable_buckets(const hashtable *ht);       /* top-level buckets in both tables */
size_t hashtable_child_buckets(const hashtable *ht); /* chained (overflow) buckets, both tables */
size_t hashtable_mem_usage(const hashtable *ht);     /* bytes of table structure, not entries */
int hashtable_is_rehashing(const hashtable *ht);

/* --- Lookup, insert, delete ---------------------------------------------
 * Each of these may take one incremental rehash step first (unless
 * rehashing is paused), so pointers into the table (find_ref) are valid
 * only until the next call on the table. */

int hashtable_find(hashtable *ht, const void *key, void **found); /* 1 found */
/* Pointer to the slot holding the entry, so the caller can replace the
 * entry pointer in place with one that has the SAME key; NULL if absent. */
void **hashtable_find_ref(hashtable *ht, const void *key);
int hashtable_add(hashtable *ht, void *entry); /* 0 if the key exists (nothing added) */
/* 1 added; 0 if the key exists, *existing (if non-NULL) = the stored entry. */
int hashtable_add_or_find(hashtable *ht, void *entry, void **existing);
int hashtable_pop(hashtable *ht, const void *key, void **popped); /* remove, no destructor */
int hashtable_delete(hashtable *ht, const void *key);             /* remove and destruct */

/* A random entry, roughly uniform over all entries (it samples ~70 entries
 * from random scan cursors and picks one). 0 if the table is empty. */
int hashtable_fair_random_entry(hashtable *ht, void **found);

/* --- Rehashing ----------------------------------------------------------- */

/* Cron: run rehash steps for about `us` microseconds (the clock is read
 * every 128 steps, so us = 0 does up to 128 steps), first starting any
 * shrink that deletions left pending. No-op when paused. */
void hashtable_rehash_microseconds(hashtable *ht, uint64_t us);
/* Pausing stops rehash steps, the filling of holes left by deletions and
 * automatic shrinking, so entries stay where they are. Calls nest. */
void hashtable_pause_rehashing(hashtable *ht);
void hashtable_resume_rehashing(hashtable *ht);

/* --- Scan (Valkey: hashtableScan) -----------------------------------------
 * Start with cursor 0 and pass each returned cursor back until 0 comes back.
 * Valkey's reverse-binary cursor: every entry present for the whole scan is
 * returned at least once (rarely twice) even if the table grows, shrinks or
 * rehashes between calls; entries added or removed meanwhile may or may not
 * be returned. One call visits one bucket chain (or, while rehashing, one
 * chain of the smaller table and its expansion in the larger one).
 * The callback MAY delete the entry it was just given (hashtable_delete /
 * hashtable_pop with its key): rehashing is paused during the call, and the
 * chain is compacted after the callbacks. It must not add entries or delete
 * any other entry. */
typedef void (*hashtable_scan_fn)(void *privdata, void *entry);
size_t hashtable_scan(hashtable *ht, size_t cursor, hashtable_scan_fn fn, void *privdata);

/* --- Iterators (Valkey: hashtableInitIterator, hashtableNext) -------------
 * safe != 0: rehashing is paused until reset; each entry present for the
 * whole iteration is returned exactly once; the entry just returned may be
 * deleted, and entries may be added (they may or may not be returned).
 * safe == 0: the table must not be touched at all (not even a find, which
 * may rehash) until reset; a fingerprint of the table is checked on every
 * next and on reset, and a mismatch aborts.
 * Always call hashtable_reset_iterator when done. Releasing or emptying a
 * table while an iterator is active is not allowed. */
typedef struct hashtable_iterator {
    uint64_t opaque[6];
} hashtable_iterator;
void hashtable_init_iterator(hashtable_iterator *it, hashtable *ht, int safe);
int hashtable_next(hashtable_iterator *it, void **entry);
void hashtable_reset_iterator(hashtable_iterator *it);

/* --- Resumable find (Valkey: hashtableIncrementalFind*) -------------------
 * Init hashes the key (so the key's bytes should already be in cache); each
 * step touches memory prefetched by the previous step, issues at most one
 * prefetch (PREFETCH, hashtable_prefetch.h) and returns 1 ("call again") or 0
 * (done). Interleaving the steps of many finds overlaps their cache misses
 * (step 6). It never rehashes, and the table must not change between init and
 * get_result. */
typedef struct hashtable_incremental_find_state {
    uint64_t opaque[5];
} hashtable_incremental_find_state;
void hashtable_incremental_find_init(hashtable_incremental_find_state *s, hashtable *ht, const void *key);
int hashtable_incremental_find_step(hashtable_incremental_find_state *s);
int hashtable_incremental_find_get_result(hashtable_incremental_find_state *s, void **found);

#endif
