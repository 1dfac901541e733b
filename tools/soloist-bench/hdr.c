/* hdr.c — log-linear latency histogram (soloist-bench). See hdr.h.
 * Anchor: HdrHistogram's bucket/sub-bucket layout (HdrHistogram/HdrHistogram). */
#include "hdr.h"

#include <string.h>

#include "zmalloc.h"

#define SUB_HALF ((uint64_t)1 << SB_HDR_SUB_BITS) /* 1024 */
#define SUB_FULL (SUB_HALF << 1)                  /* 2048 */

static unsigned log2_floor(uint64_t v) { return 63u - (unsigned)__builtin_clzll(v); }

/* Which power-of-two range ("bucket") a value is in. Bucket 0 holds
 * 0..2047 one value per slot; bucket b >= 1 holds [2^(10+b), 2^(11+b))
 * in 1024 slots of width 2^b. Or-ing in SUB_FULL-1 folds every small
 * value into bucket 0 without a branch. */
static unsigned bucket_of(uint64_t v) { return log2_floor(v | (SUB_FULL - 1)) - SB_HDR_SUB_BITS; }

/* Slots are laid out bucket after bucket: bucket 0 takes 2048 slots, each
 * later bucket 1024 (its lower half would repeat bucket b-1's range), so
 * index = b*1024 + (v >> b) works for every bucket. */
size_t sb_hdr_index(uint64_t v) {
    unsigned b = bucket_of(v);
    return ((size_t)b << SB_HDR_SUB_BITS) + (size_t)(v >> b);
}

static void slot_of_index(size_t idx, unsigned *b, uint64_t *sub) {
    if (idx < SUB_FULL) {
        *b = 0;
        *sub = idx;
    } else {
        *b = (unsigned)(idx >> SB_HDR_SUB_BITS) - 1;
        *sub = idx - ((size_t)*b << SB_HDR_SUB_BITS);
    }
}

uint64_t sb_hdr_slot_lowest(size_t idx) {
    unsigned b;
    uint64_t sub;
    slot_of_index(idx, &b, &sub);
    return sub << b;
}

uint64_t sb_hdr_slot_highest(size_t idx) {
    unsigned b;
    uint64_t sub;
    slot_of_index(idx, &b, &sub);
    return (sub << b) + (((uint64_t)1 << b) - 1);
}

void sb_hdr_init(sb_hdr *h, uint64_t highest) {
    memset(h, 0, sizeof(*h));
    if (highest < SUB_FULL) highest = SUB_FULL;
    /* Round up to 2^k - 1 so the last slot ends exactly at `highest`. */
    unsigned k = log2_floor(highest) + 1;
    if (k > 62) k = 62;
    h->highest = ((uint64_t)1 << k) - 1;
    h->counts_len = sb_hdr_index(h->highest) + 1;
    h->counts = zcalloc(h->counts_len * sizeof(uint64_t));
    h->min = UINT64_MAX;
}

void sb_hdr_free(sb_hdr *h) {
    zfree(h->counts);
    h->counts = NULL;
}

void sb_hdr_reset(sb_hdr *h) {
    memset(h->counts, 0, h->counts_len * sizeof(uint64_t));
    h->total = h->sum = h->max = h->clamped = 0;
    h->min = UINT64_MAX;
}

void sb_hdr_record(sb_hdr *h, uint64_t v) {
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    h->sum += v;
    h->total++;
    if (v > h->highest) {
        /* Never dropped: a value the histogram cannot place still counts,
         * in the last slot, and the report says how many there were. */
        h->clamped++;
        v = h->highest;
    }
    h->counts[sb_hdr_index(v)]++;
}

void sb_hdr_merge(sb_hdr *dst, const sb_hdr *src) {
    size_t n = dst->counts_len < src->counts_len ? dst->counts_len : src->counts_len;
    for (size_t i = 0; i < n; i++) dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->sum += src->sum;
    dst->clamped += src->clamped;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
}

uint64_t sb_hdr_percentile(const sb_hdr *h, double pct) {
    if (h->total == 0) return 0;
    if (pct >= 100.0) return h->max;
    /* Rank of the value wanted, 1-based: the smallest value with at least
     * pct% of the values at or below it (the "nearest rank" definition). */
    double want = pct / 100.0 * (double)h->total;
    want -= want * 1e-12; /* 99.9% of 1000 is 999, not 999.0000000000001 */
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want) rank++;
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < h->counts_len; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t v = sb_hdr_slot_highest(i);
            if (v > h->max) v = h->max;
            if (v < h->min) v = h->min;
            return v;
        }
    }
    return h->max;
}

double sb_hdr_mean(const sb_hdr *h) { return h->total ? (double)h->sum / (double)h->total : 0.0; }
