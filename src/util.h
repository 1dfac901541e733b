/* util.h — clocks, strings and random bytes every layer uses.
 *
 * Step 0 (plumbing layer). Owns nothing; pure functions, clocks and the
 * kernel's random bytes. Any thread may call.
 * Valkey: src/util.c (stringmatchlen, ld2string, memtoull), src/server.c
 * (ustime, mstime), src/monotonic.c (getMonotonicUs).
 */
#ifndef SOLOIST_UTIL_H
#define SOLOIST_UTIL_H

#include <stddef.h>
#include <stdint.h>

long long util_ustime(void);      /* wall clock, µs since the epoch */
long long util_mstime(void);      /* wall clock, ms since the epoch */
uint64_t util_monotonic_us(void); /* CLOCK_MONOTONIC, µs */
uint64_t util_monotonic_ns(void); /* CLOCK_MONOTONIC, ns */

/* Glob-style match as KEYS, SCAN MATCH and CONFIG GET use it: * ? [a-z]
 * [^x] and \ escapes. nocase != 0 folds ASCII case. 1 on match. */
int util_string_match_len(const char *pattern, size_t plen, const char *s, size_t slen, int nocase);
int util_string_match(const char *pattern, const char *s, int nocase);

/* Formats a long double the way INCRBYFLOAT replies (Valkey ld2string
 * LD_STR_HUMAN: %.17Lf, trailing zeros and dot trimmed; "inf"/"-inf").
 * Returns the length, 0 if it does not fit. */
size_t util_ld_to_string(char *buf, size_t len, long double v);
/* Formats a double as Valkey prints one (RESP3 ',', every sorted-set
 * score): the fewest digits that read back as the same double, in %.17g's
 * layout; inf, -inf, nan. */
size_t util_d_to_string(char *buf, size_t len, double v);
/* Parses memory sizes as CONFIG does: "1gb", "512mb", "100k", "42". */
int util_parse_memory(const char *s, long long *out);
/* The number of bits set in the n bytes at p (BITCOUNT; Valkey's
 * serverPopcount). Any alignment; eight bytes at a time. */
long long util_popcount(const void *p, size_t n);

/* Fills buf with len bytes from the kernel's random source: getrandom(2),
 * or /dev/urandom where that system call is missing or refused (an old
 * kernel, a seccomp filter). Never returns less: when neither source
 * answers it prints why and exits, because a key a client can guess is
 * worse than a server that does not start. Valkey: getRandomBytes. */
void util_random_bytes(void *buf, size_t len);
/* Its two sources, each on its own (tests use them): fill all of buf and
 * return 0, or return -1 with errno set. */
int util_getrandom(void *buf, size_t len);
int util_urandom(void *buf, size_t len);

/* A verify function's check (hashtable_verify, zset_verify, hash_verify,
 * set_verify): when cond is false, print "who: " and the message to
 * stderr, so a failing test says which invariant broke, and return 0
 * from the function. Needs <stdio.h>. */
#define UTIL_VERIFY(who, cond, ...)                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, who ": " __VA_ARGS__);                                                                     \
            fputc('\n', stderr);                                                                                       \
            return 0;                                                                                                  \
        }                                                                                                              \
    } while (0)

#endif
