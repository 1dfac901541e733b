/* siphash.c — SipHash-1-3 and SipHash-2-4, and their key (step 0, plumbing
 * layer). See siphash.h. */
#include "siphash.h"

#include <string.h>

#include "util.h"

/* SipHash reads its input as little-endian 64-bit words whatever the host's
 * byte order; memcpy avoids unaligned loads, the swap is a no-op on x86. */
static inline uint64_t load_le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

/* The state is four 64-bit words; one SipRound is two add-rotate-xor
 * half-rounds on the pairs (v0,v1) and (v2,v3), then the cross pairs. */
typedef struct sip_state {
    uint64_t v0, v1, v2, v3;
} sip_state;

static inline void sip_round(sip_state *s) {
    s->v0 += s->v1;
    s->v1 = rotl64(s->v1, 13) ^ s->v0;
    s->v0 = rotl64(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl64(s->v3, 16) ^ s->v2;
    s->v0 += s->v3;
    s->v3 = rotl64(s->v3, 21) ^ s->v0;
    s->v2 += s->v1;
    s->v1 = rotl64(s->v1, 17) ^ s->v2;
    s->v2 = rotl64(s->v2, 32);
}

/* Mix one message word: xor it into v3, run the compression rounds, xor it
 * into v0. */
static inline void sip_absorb(sip_state *s, uint64_t m, int c_rounds) {
    s->v3 ^= m;
    for (int i = 0; i < c_rounds; i++) sip_round(s);
    s->v0 ^= m;
}

static inline uint64_t siphash_cd(const uint8_t *in, size_t len, const uint8_t key[16], int c_rounds, int d_rounds) {
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    /* The initialisation constants spell "somepseudorandomlygeneratedbytes". */
    sip_state s = {
        .v0 = k0 ^ UINT64_C(0x736f6d6570736575),
        .v1 = k1 ^ UINT64_C(0x646f72616e646f6d),
        .v2 = k0 ^ UINT64_C(0x6c7967656e657261),
        .v3 = k1 ^ UINT64_C(0x7465646279746573),
    };
    size_t whole = len & ~(size_t)7;
    for (size_t off = 0; off < whole; off += 8) sip_absorb(&s, load_le64(in + off), c_rounds);

    /* The last word holds the 0-7 leftover bytes in its low bytes and the
     * input length modulo 256 in its top byte, so inputs that differ only
     * by trailing zero bytes hash differently. */
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    for (size_t i = 0; i < (len & 7); i++) last |= (uint64_t)in[whole + i] << (8 * i);
    sip_absorb(&s, last, c_rounds);

    s.v2 ^= 0xff;
    for (int i = 0; i < d_rounds; i++) sip_round(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t siphash13(const void *in, size_t len, const uint8_t key[16]) { return siphash_cd(in, len, key, 1, 3); }

uint64_t siphash24(const void *in, size_t len, const uint8_t key[16]) { return siphash_cd(in, len, key, 2, 4); }

void siphash_random_key(uint8_t key[16]) { util_random_bytes(key, 16); }
