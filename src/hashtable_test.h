/* hashtable_test.h — the table's consistency check, for its tests.
 *
 * Step 0 (keyspace layer). Only tests (tests/unit/test_hashtable.c) and
 * hashtable.c, which defines it, include this header.
 * Threads: main only, like the table.
 */
#ifndef SOLOIST_HASHTABLE_TEST_H
#define SOLOIST_HASHTABLE_TEST_H

#include "hashtable.h"

/* Walks every bucket and checks the structure: presence vs used counts,
 * chained buckets, child counts, each entry in the bucket its hash selects
 * with the right secondary hash. Returns 1 if consistent, else prints what
 * is wrong to stderr and returns 0. O(n) and calls hash_key on every entry. */
int hashtable_verify(hashtable *ht);

#endif
