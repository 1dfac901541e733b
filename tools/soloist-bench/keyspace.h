/* keyspace.h — which key a request names, and what its value must be.
 *
 * soloist-bench. Owns: the random streams (one per worker),
 * the zipfian key chooser, the key and value formats. Any thread; a
 * sb_rng and a sb_zipf are used by the one worker that owns them, and the
 * value patterns are written once before the workers start and only read
 * afterwards (the thread start publishes them).
 *
 * Keys and values are designed so that every reply can be checked:
 *   key   = one tag letter per traffic class, then the key's index,
 *           zero-padded to exactly --key-size bytes ("a000000000000042");
 *   value = the key's own bytes, then a fixed per-class pattern, cut to
 *           exactly -s bytes.
 * So a GET reply is right only if it has the right length, starts with
 * the very key that was asked for (a reply delivered to the wrong request
 * fails) and carries the pattern in every later byte (a torn or shifted
 * large value fails). Writing a value needs no copy: it is the key plus a
 * slice of the shared pattern, sent by reference with writev.
 * Anchors: memtier_benchmark's --key-pattern and --data-verify; YCSB's
 * zipfian request distribution.
 */
#ifndef SOLOIST_BENCH_KEYSPACE_H
#define SOLOIST_BENCH_KEYSPACE_H
#include <stddef.h>
#include <stdint.h>

/* xoshiro256** (Blackman & Vigna), seeded through splitmix64. */
typedef struct sb_rng {
    uint64_t s[4];
} sb_rng;

void sb_rng_seed(sb_rng *r, uint64_t seed);
uint64_t sb_rng_next(sb_rng *r);
double sb_rng_unit(sb_rng *r);                /* uniform in [0, 1) */
uint64_t sb_rng_below(sb_rng *r, uint64_t n); /* uniform in [0, n), n > 0 */

/* Zipf over ranks 1..n with P(k) proportional to k^-s, any s > 0, drawn
 * in O(1) with no table by rejection-inversion (Hörmann & Derflinger,
 * "Rejection-inversion to generate variates from monotone discrete
 * distributions", 1996), so a 10M-key space costs nothing to set up. */
typedef struct sb_zipf {
    uint64_t n;
    double s;
    double h_x1;  /* H(1.5) - 1: the top of the inverted range */
    double h_n;   /* H(n + 0.5): its bottom */
    double squeeze;
} sb_zipf;

void sb_zipf_init(sb_zipf *z, uint64_t n, double s);
/* Returns a 0-based key index: 0 is the hottest key. */
uint64_t sb_zipf_next(const sb_zipf *z, sb_rng *r);

/* Writes exactly key_size bytes (no NUL) for key `idx` of class `tag`. */
void sb_key_format(char *dst, int key_size, char tag, uint64_t idx);
/* Whether key_size bytes can name every index below `keys`. */
int sb_key_size_fits(int key_size, uint64_t keys);

/* The shared tail of every value of a class: len bytes of printable
 * text that depends on the byte's position, so a shifted copy differs.
 * zmalloc'd; the caller frees it with zfree. */
char *sb_value_pattern(size_t len);

#endif
