/* memory_prefetch.h — prefetching a batch's key lookups before it runs.
 *
 * Step 6 (main-io layer). Owns: the batch of clients and keys whose
 * lookups are overlapped, and its statistics. memory_prefetch.c opens
 * with the design.
 * Threads: MAIN THREAD ONLY, like the keyspace it reads.
 * Valkey: src/memory_prefetch.c (PR #861, Valkey 8.0; on the hashtable
 * since 8.1): prefetchCommandsBatchInit, addCommandToBatchAndProcessIfFull,
 * processClientsCommandsBatch, prefetchCommands, hashtablePrefetch; and
 * src/hashtable.c's hashtableIncrementalFind* (here hashtable.h's
 * hashtable_incremental_find_*).
 */
#ifndef SOLOIST_MEMORY_PREFETCH_H
#define SOLOIST_MEMORY_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "job.h"

/* The most clients, and the most keys, a batch holds: the range of
 * prefetch-batch-max-size. */
#define PREFETCH_BATCH_LIMIT 128

/* io_offload's take_results: r[0, n) are results taken from the outbox
 * and not handled yet. Puts the read results' clients into a batch (up to
 * prefetch-batch-max-size clients or keys), prefetches, and returns how
 * many of r the batch covers (at least 1 when n > 0): the caller then
 * handles those, in order, exactly as without a batch. */
size_t memory_prefetch_results(const job_word *r, size_t n);

/* networking.c's run_queued_commands, when it reaches the first command
 * not yet prefetched: prefetches the keys of c's next queued commands
 * (unless a results batch just did) and returns the index in c->cmdq
 * after the last command covered, where to call again. */
int memory_prefetch_pipeline(client *c);

/* INFO stats: io_threaded_total_prefetch_batches (walks over more than
 * one key), io_threaded_total_prefetch_entries (keys they looked up). */
typedef struct memory_prefetch_stats {
    uint64_t batches, keys;
} memory_prefetch_stats;
void memory_prefetch_get_stats(memory_prefetch_stats *out);

#endif
