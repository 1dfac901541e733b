/* hdr.h — a log-linear latency histogram with 3 significant digits.
 *
 * soloist-bench (the load generator; used by every serving
 * benchmark, steps 0 and 5–7). Owns: one histogram's counts. Not shared:
 * each worker thread records into its own histograms, and the main thread
 * merges them (by adding counts) only after the workers have been joined,
 * so no function here needs a lock or an atomic.
 *
 * Design: HdrHistogram's (Gil Tene; HdrHistogram/HdrHistogram README), in
 * this project's own code. Values below 2048 get one slot each; above
 * that, every power-of-two range [2^k, 2^(k+1)) is cut into 1024 equal
 * slots. A slot is then never wider than 1/1024 of the values in it, so a
 * reported value is within 0.1% of the true one: 3 significant digits.
 * Recording is a shift and an add; nothing is allocated after init.
 * Peers: wrk2's "SubBuckets = 2048", valkey-benchmark's hdr_histogram.
 */
#ifndef SOLOIST_BENCH_HDR_H
#define SOLOIST_BENCH_HDR_H
#include <stddef.h>
#include <stdint.h>

/* 2^11 slots in the first, exact range; 2^10 per later power of two. */
#define SB_HDR_SUB_BITS 10

typedef struct sb_hdr {
    uint64_t highest;   /* largest value recorded without clamping */
    size_t counts_len;  /* number of slots */
    uint64_t *counts;
    uint64_t total;     /* values recorded, clamped ones included */
    uint64_t min, max;  /* exact extremes (max before clamping) */
    uint64_t sum;       /* exact sum, for the mean */
    uint64_t clamped;   /* values above `highest`, recorded as `highest` */
} sb_hdr;

/* Any thread, on a histogram it owns. `highest` is rounded up to a
 * power of two minus one; values above it are clamped and counted. */
void sb_hdr_init(sb_hdr *h, uint64_t highest);
void sb_hdr_free(sb_hdr *h);
void sb_hdr_reset(sb_hdr *h);
void sb_hdr_record(sb_hdr *h, uint64_t value);
/* dst += src; both must have been initialised with the same `highest`. */
void sb_hdr_merge(sb_hdr *dst, const sb_hdr *src);

/* The value at percentile pct (0 < pct <= 100): the largest value that
 * falls in the same slot as the value of rank ceil(pct/100 * total), so
 * it is never below the exact percentile and at most one slot above it;
 * clamped into [min, max]. 0 when empty. */
uint64_t sb_hdr_percentile(const sb_hdr *h, double pct);
double sb_hdr_mean(const sb_hdr *h);

/* The slot arithmetic, public so the tests can check it directly. */
size_t sb_hdr_index(uint64_t value);
uint64_t sb_hdr_slot_lowest(size_t index);
uint64_t sb_hdr_slot_highest(size_t index);

#endif
