/* hashtable_iter.c — walking the whole table: scan, iterators, fair random.
 *
 * Step 6 (keyspace). Owns: the reverse-binary scan cursor, the safe and
 * unsafe iterators (their state lives in the caller's hashtable_iterator),
 * and random sampling through scan. Threads: MAIN THREAD ONLY, like the
 * table (see hashtable.h); the sampling PRNG is process-wide and
 * main-thread-only too. The buckets and the struct come from
 * hashtable_private.h; the core (hashtable.c) provides the rehash step and
 * chain compaction these walks call.
 * Valkey: src/hashtable.c (8.1): hashtableScan, hashtableNext,
 * hashtableFairRandomEntry. Written from the design. Where soloist
 * differs, the comment at the spot says why: random sampling masks its
 * cursor and keeps a one-entry reservoir; the safe iterator never revisits
 * a slot-6 entry that an insert pushed into a new child bucket;
 * compaction only by the sole pauser.
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

/* Increments the cursor's masked bits from the most significant down
 * (Pieter Noordhuis's reverse-binary iteration): setting the unmasked bits
 * first makes the carry pass straight through them. Because the order
 * visits every index of a 2^k table in an order in which each index's
 * expansions in a 2^(k+j) table are contiguous, indices already returned
 * stay covered when the table grows or shrinks between calls. */
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
