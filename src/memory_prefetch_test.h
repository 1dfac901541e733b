/* memory_prefetch_test.h — the batch itself, for its unit tests.
 *
 * Step 6 (main-io layer). Only tests (tests/unit/test_memory_prefetch.c)
 * and memory_prefetch.c, which defines them, include this header: the
 * server builds its batches through memory_prefetch.h alone.
 * Threads: main only, like the batch.
 */
#ifndef SOLOIST_MEMORY_PREFETCH_TEST_H
#define SOLOIST_MEMORY_PREFETCH_TEST_H

#include "client.h"
#include "memory_prefetch.h"

/* The batch the pipeline path uses, driven by hand: filled with clients,
 * run, and looked into afterwards. */
void memory_prefetch_reset(void);          /* empty the batch, cursor back to 0 */
int memory_prefetch_add_client(client *c); /* 0: the batch is full, c not added */
void memory_prefetch_run(void);            /* the phases, on what was added */
/* What the last batch held and what its walk did. found[i] is only for
 * comparing with a plain find: nothing dereferences it after the walk. */
typedef struct memory_prefetch_probe {
    int clients, keys;
    int cursor;                      /* where the walk's cursor ended */
    int visits;                      /* steps the walk took (0: no walk) */
    int trace[PREFETCH_BATCH_LIMIT]; /* the keys its first steps went to, in order */
    int end[PREFETCH_BATCH_LIMIT];   /* per client: cmdq index after its last covered command */
    int steps[PREFETCH_BATCH_LIMIT]; /* per key: hashtable_incremental_find_step calls */
    void *found[PREFETCH_BATCH_LIMIT];
} memory_prefetch_probe;
void memory_prefetch_get_probe(memory_prefetch_probe *out);
/* The walk alone, over n keys of d (n <= PREFETCH_BATCH_LIMIT): steps[i]
 * and found[i] (the db_entry, or NULL) as in the probe. Returns the total
 * number of find steps taken. */
struct db;
int memory_prefetch_walk_keys(struct db *d, obj **keys, int n, int *steps, void **found);

#endif
