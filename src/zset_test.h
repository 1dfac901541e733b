/* zset_test.h — the sorted set's invariant check, for its tests.
 *
 * Step 8 (keyspace layer). Only tests (tests/unit/test_zset.c,
 * test_zset_embedded.c) and zset.c, which defines it, include this
 * header.
 * Threads: main only, like the keyspace.
 */
#ifndef SOLOIST_ZSET_TEST_H
#define SOLOIST_ZSET_TEST_H

#include "zset.h"

/* Checks every invariant in zset.c's essay (order, spans, levels, backward
 * pointers, tail, length, the index agreeing with the list). 1 when all
 * hold; otherwise prints the first broken one to stderr and returns 0.
 * O(n * levels). */
int zset_verify(zset *z);

#endif
