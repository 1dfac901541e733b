/* siphash.h — SipHash, the keyed hash behind the keyspace's table.
 *
 * Step 0 (plumbing layer; the keyspace's table hashes with it). Owns nothing
 * but pure functions and the making of a key. Any thread may call them
 * (they read only their arguments), though in soloist only the main
 * thread hashes keys.
 * Valkey: src/siphash.c (siphash, SipHash-1-3 under a 16-byte key);
 * the algorithm is Aumasson & Bernstein's, "SipHash: a fast short-input
 * PRF" (2012).
 *
 * SipHash-c-d runs c compression rounds per 8-byte message word and d
 * finalisation rounds. The paper's recommendation is 2-4; Valkey (like
 * Redis and CPython) uses the faster 1-3 for hash tables, where the goal is
 * resistance to hash flooding, not a MAC. Both are here: 2-4 so the tests
 * can check the paper's published vectors, 1-3 for the table.
 *
 * The defence against hash flooding is the key, not the function: a
 * client who knows the key can compute keys that all land in one bucket
 * and turn every lookup into a walk of one long chain. So the key must be
 * one no client can guess or reproduce: 16 bytes from the kernel's random
 * source at every start (siphash_random_key), never a clock or a pid.
 */
#ifndef SOLOIST_SIPHASH_H
#define SOLOIST_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* key is 16 bytes, read as two little-endian 64-bit words. */
uint64_t siphash13(const void *in, size_t len, const uint8_t key[16]);
uint64_t siphash24(const void *in, size_t len, const uint8_t key[16]);

/* A fresh key from the kernel (util_random_bytes: getrandom, else
 * /dev/urandom, else the process exits). The server keys the keyspace's
 * table with one at start-up, as Valkey's main() does with getRandomBytes
 * (src/server.c). */
void siphash_random_key(uint8_t key[16]);

#endif
