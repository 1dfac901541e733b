/* hashtable_iter.c — walking the whole table: scan, iterators, fair random.
 *
 * Step 0 (keyspace layer). Owns: the scan cursor, the safe and unsafe iterators
 * (their state lives in the caller's hashtable_iterator) and random
 * sampling through scan. Threads: main thread only, like the table (see
 * hashtable.h); the sampling PRNG is process-wide and main-thread-only too.
 * The buckets and the struct come from hashtable_private.h; the core
 * (hashtable.c) provides the rehash step and chain compaction these walks
 * call. Valkey: src/hashtable.c — hashtableScan, hashtableNext,
 * hashtableFairRandomEntry. Where soloist differs, the comment at the spot
 * says why: random sampling masks its cursor and keeps a one-entry
 * reservoir; the safe iterator never revisits a slot-6 entry that an
 * insert pushed into a new child bucket; only the sole pauser compacts.
 *
 * THE SCAN CURSOR
 *
 * SCAN hands the client a cursor, a number, and keeps nothing: the table
 * may grow, shrink or be halfway through a rehash between two calls, and
 * the promise still holds that a key present for the whole scan is
 * returned at least once. A key may come back twice; a key added or
 * deleted meanwhile may or may not come back.
 *
 * A cursor is a bucket index, but the scan does not count 0, 1, 2, ...
 * It counts with the bits reversed: add one to the index read backwards,
 * so the carry moves from the top bit down (Pieter Noordhuis's
 * reverse-binary iteration, from Redis's dictScan). In a table of 8
 * buckets (mask 0b111) the order is
 *
 *     0 4 2 6 1 5 3 7        (000 100 010 110 001 101 011 111)
 *
 * and in a table of 16 it is
 *
 *     0 8 4 12 2 10 6 14 1 9 5 13 3 11 7 15
 *
 * A key lives in the bucket its hash's low bits name. When 8 buckets grow
 * to 16, the keys of old bucket i split between new buckets i and i+8,
 * which differ only in the new top bit. Reading indices backwards makes
 * that top bit the lowest digit of the count, so i and i+8 sit side by
 * side in the 16-order, in the place i held in the 8-order. Sorting by
 * the reversed index sorts by the low bits first, and a table's size
 * only decides how many high bits follow.
 *
 * WORKED EXAMPLE
 *
 * A scan of the 8-bucket table visits buckets 0 and 4 and returns cursor
 * 2. The table then grows to 16 buckets. The keys of old buckets 0 and 4
 * are now in 0, 8, 4 and 12: exactly the part of the 16-order before 2.
 * The next call starts at 2 and walks 2 10 6 14 1 9 5 13 3 11 7 15: every
 * bucket not yet seen, each once. The other way round, a scan of the
 * 16-bucket table that has visited 0 8 4 12 2 returns 10; if the table
 * shrinks to 8 before the next call, 10's low three bits name bucket 2,
 * which now holds old buckets 2 and 10. Bucket 2's keys are returned a
 * second time, and from there the walk goes on 6 1 5 3 7 with nothing
 * missed. That is the rule in general: what has been visited is always a
 * prefix of the order, whatever the size; after a shrink the prefix is
 * rounded down to a whole bucket, which repeats keys and never skips one.
 * The scan ends when the cursor comes back to 0.
 *
 * While a rehash is in progress both tables hold keys. One call visits the
 * cursor's bucket in the smaller table and every bucket of the larger table
 * its low bits expand to (for 8 and 16 buckets and cursor 2: small bucket
 * 2, then large buckets 2 and 10), then returns the larger table's next
 * cursor. So one call covers the same slice of the hash space in both
 * tables, and the argument above applies to each. Buckets of the old table
 * that the rehash has already emptied are skipped. Rehashing is paused for
 * the length of a call, so the callback sees the two tables stand still.
 */
#include "hashtable.h"
#include "hashtable_private.h"

#include <stdint.h>

/* Random sampling: ~70 entries from random cursors, 7 when sparse. */
#define FAIR_SAMPLES (SLOTS * 10)
#define SPARSE_SAMPLES SLOTS

/* --- Scan ------------------------------------------------------------------------------ */

static size_t reverse_bits(size_t v) {
    v = ((v >> 1) & 0x5555555555555555u) | ((v & 0x5555555555555555u) << 1);
    v = ((v >> 2) & 0x3333333333333333u) | ((v & 0x3333333333333333u) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fu) | ((v & 0x0f0f0f0f0f0f0f0fu) << 4);
    return __builtin_bswap64(v);
}

/* The next cursor in reverse-binary order for a table of mask+1 buckets
 * (see the top of the file). Setting the bits above the mask first makes
 * the carry of the reversed +1 pass straight through them. */
static size_t next_cursor(size_t cursor, size_t mask) { return reverse_bits(reverse_bits(cursor | ~mask) + 1); }

/* A walk (scan or safe iterator) has passed the chain at table t, index
 * idx, which held used_before entries in table t when it began. Deletions
 * made meanwhile left holes (rehashing was paused); compact the chain only
 * if something was deleted and no one else (another walk) has rehashing
 * paused and might be standing in it. */
static void compact_if_deleted(hashtable *ht, int t, size_t idx, size_t used_before) {
    if (ht->used[t] < used_before && ht->pause_rehash == 1) ht_compact_chain(ht, t, idx);
}

static void scan_chain(hashtable *ht, int t, size_t idx, hashtable_scan_fn fn, void *privdata) {
    size_t before = ht->used[t];
    for (bucket *b = &ht->tables[t][idx]; b != NULL; b = child_of(b))
        for (unsigned p = presence(b); p != 0 && fn; p &= p - 1) fn(privdata, b->slot[__builtin_ctz(p)]);
    compact_if_deleted(ht, t, idx, before);
}

/* One step of a scan (see the top of the file). Valkey: hashtableScan. */
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
        if (!already_moved(ht, small, idx)) scan_chain(ht, small, idx, fn, privdata);
        do {
            idx = cursor & mask_l;
            if (!already_moved(ht, large, idx)) scan_chain(ht, large, idx, fn, privdata);
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
    ht_rehash_step_if_allowed(ht);
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
                compact_if_deleted(ht, it->table, it->idx, it->check);
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
