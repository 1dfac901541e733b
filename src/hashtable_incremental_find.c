/* hashtable_incremental_find.c — a lookup in resumable steps, so a batch
 * of lookups can overlap their cache misses.
 *
 * Step 6 (keyspace layer): this is what step 6's batch prefetcher
 * interleaves.
 * Owns: the find's state machine, whose state lives in the caller's
 * hashtable_incremental_find_state. Threads: MAIN THREAD ONLY, like the
 * table (see hashtable.h). It never rehashes, and the table must not
 * change between init and get_result. The buckets and the struct come
 * from hashtable_private.h.
 * Valkey: src/hashtable.c (8.1): hashtableIncrementalFindInit,
 * hashtableIncrementalFindStep, hashtableIncrementalFindGetResult.
 */
#include "hashtable.h"
#include "hashtable_prefetch.h"
#include "hashtable_private.h"

#include <stdint.h>

enum { IF_CHECK_ENTRY, IF_NEXT_ENTRY, IF_NEXT_BUCKET, IF_FOUND, IF_NOT_FOUND };

/*@ ht-incremental-find-init */
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
/*@ end */

/* One step = use what the previous step prefetched, prefetch the next
 * thing. The states in the order a lookup meets them:
 *   NEXT_BUCKET  pick the next bucket (first, child, or table 1), prefetch it
 *   NEXT_ENTRY   the bucket is in cache: find the next h2 candidate,
 *                prefetch the entry it points to
 *   CHECK_ENTRY  the entry is in cache: compare keys; on a mismatch carry on
 *                with the next candidate (falling through the cases)
 * Contract: returns 1 right after issuing exactly one PREFETCH
 * (hashtable_prefetch.h: __builtin_prefetch in the server; the tests
 * record each address), of the line the next step reads: the bucket the
 * find moves to (never the one it leaves), or the entry a candidate slot
 * points to (the pointer in the slot, never the slot's own address, which
 * is in the bucket and so in cache already). The state says what to do
 * with that line next call. Returns 0, with no prefetch, once the state
 * is FOUND (b and pos name the slot) or NOT_FOUND; after 0 it keeps
 * returning 0. It resumes from f's fields and never starts over, and
 * never takes a rehash step. The buckets, in order: the key's bucket in
 * table 0 — or in table 1 when that index of table 0 was already moved
 * by the rehash (already_moved) — then its child chain, then, while
 * rehashing and still in table 0, the key's bucket in table 1 and its
 * chain (keys added during a rehash live there), even when table 1 is
 * still empty: one step per bucket. Candidates in a bucket: present slots
 * whose h2 equals the hash's high byte (match_h2), from pos upwards; a
 * candidate is the key only if the keys compare equal.
 * Valkey: hashtableIncrementalFindStep. */
/*@ ht-incremental-find-step */
int hashtable_incremental_find_step(hashtable_incremental_find_state *s) {
    /*@ exercise: find-step */
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
            PREFETCH(f->b->slot[f->pos]);
            f->state = IF_CHECK_ENTRY;
            return 1;
        }
    }
        __attribute__((fallthrough));
    case IF_NEXT_BUCKET:
        if (f->b == NULL) {
            size_t idx = f->hash & mask_of(ht->exp[0]);
            f->table = 0;
            if (already_moved(ht, 0, idx)) {
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
        PREFETCH(f->b);
        f->state = IF_NEXT_ENTRY;
        f->pos = 0;
        return 1;
    default: return 0;
    }
    /*@ end */
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
