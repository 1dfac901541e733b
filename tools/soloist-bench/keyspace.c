/* keyspace.c — random streams, zipfian keys, key and value formats
 * (soloist-bench). See keyspace.h. */
#include "keyspace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "zmalloc.h"

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void sb_rng_seed(sb_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sb_rng_next(sb_rng *r) {
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* The top 53 bits make a double in [0, 1) with every value equally likely. */
double sb_rng_unit(sb_rng *r) { return (double)(sb_rng_next(r) >> 11) * 0x1.0p-53; }

/* Multiply-shift (Lemire): the high word of x*n is uniform in [0, n) up to
 * a bias of n/2^64, far below anything a benchmark could see. */
uint64_t sb_rng_below(sb_rng *r, uint64_t n) {
    return (uint64_t)(((__uint128_t)sb_rng_next(r) * n) >> 64);
}

/* --- zipf by rejection-inversion --------------------------------------
 * h(x) = x^-s is the density, H its integral (x^(1-s) - 1) / (1-s). The
 * forms with log1p/expm1 below stay exact as s -> 1, where H becomes
 * log x, so s = 1 needs no special case. */
static double expm1_over_x(double x) { return fabs(x) > 1e-8 ? expm1(x) / x : 1.0 + x / 2.0; }
static double log1p_over_x(double x) { return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x / 2.0; }
static double zh(const sb_zipf *z, double x) { return exp(-z->s * log(x)); }
static double zH(const sb_zipf *z, double x) {
    double lx = log(x);
    return expm1_over_x((1.0 - z->s) * lx) * lx;
}
static double zH_inv(const sb_zipf *z, double y) {
    double t = y * (1.0 - z->s);
    if (t < -1.0) t = -1.0; /* rounding at the very edge of the range */
    return exp(log1p_over_x(t) * y);
}

void sb_zipf_init(sb_zipf *z, uint64_t n, double s) {
    z->n = n ? n : 1;
    z->s = s > 0 ? s : 1e-9;
    z->h_x1 = zH(z, 1.5) - 1.0;
    z->h_n = zH(z, (double)z->n + 0.5);
    /* Points closer than this to an integer are accepted at once: the
     * area under h there is certainly inside that integer's share. */
    z->squeeze = 2.0 - zH_inv(z, zH(z, 2.5) - zh(z, 2.0));
}

uint64_t sb_zipf_next(const sb_zipf *z, sb_rng *r) {
    for (;;) {
        /* Pick a point uniformly in the area under the hat, map it back
         * through H^-1, round to the nearest rank, and keep it if it fell
         * under the true step function (the acceptance test). */
        double u = z->h_n + sb_rng_unit(r) * (z->h_x1 - z->h_n);
        double x = zH_inv(z, u);
        double kd = floor(x + 0.5);
        if (kd < 1.0) kd = 1.0;
        if (kd > (double)z->n) kd = (double)z->n;
        if (kd - x <= z->squeeze || u >= zH(z, kd + 0.5) - zh(z, kd)) return (uint64_t)kd - 1;
    }
}

/* --- keys and values -------------------------------------------------- */

static int digits_of(uint64_t v) {
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

int sb_key_size_fits(int key_size, uint64_t keys) {
    return key_size >= 2 && digits_of(keys ? keys - 1 : 0) <= key_size - 1;
}

void sb_key_format(char *dst, int key_size, char tag, uint64_t idx) {
    dst[0] = tag;
    /* Right to left: the index in decimal, then '0' padding. */
    for (int i = key_size - 1; i >= 1; i--) {
        dst[i] = (char)('0' + idx % 10);
        idx /= 10;
    }
}

char *sb_value_pattern(size_t len) {
    static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    char *p = zmalloc(len ? len : 1);
    /* 62 does not divide any power of two, and the index/61 term breaks
     * the period, so a value moved by any offset no longer matches. */
    for (size_t i = 0; i < len; i++) p[i] = alphabet[(i * 7 + i / 61) % 62];
    return p;
}
