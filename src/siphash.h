/* siphash.h — SipHash, the keyed hash behind the keyspace's table.
 *
 * Step 6 (keyspace). Owns: nothing but a pure function. Any thread may call
 * it (it reads only its arguments), though in soloist only the main thread
 * hashes keys.
 * Valkey: src/siphash.c (siphash, SipHash-1-3 with a 16-byte seed). Written
 * here from the algorithm's description (Aumasson & Bernstein, "SipHash: a
 * fast short-input PRF", 2012), not from Valkey's or the reference code.
 *
 * SipHash-c-d runs c compression rounds per 8-byte message word and d
 * finalisation rounds. The paper's recommendation is 2-4; Valkey (like
 * Redis and CPython) uses the faster 1-3 for hash tables, where the goal is
 * resistance to hash flooding, not a MAC. Both are here: 2-4 so the tests
 * can check the paper's published vectors, 1-3 for the table.
 */
#ifndef SOLOIST_SIPHASH_H
#define SOLOIST_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* key is 16 bytes, read as two little-endian 64-bit words. */
uint64_t siphash13(const void *in, size_t len, const uint8_t key[16]);
uint64_t siphash24(const void *in, size_t len, const uint8_t key[16]);

#endif
