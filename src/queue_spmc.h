/* queue_spmc.h — a bounded single-producer, multi-consumer ring.
 *
 * Step 2 (threads layer). Owns: one ring of SPMC_QUEUE_SIZE cells and its
 * counters. Threads: one producer thread calls spmc_enqueue, spmc_is_empty
 * and spmc_size; any number of consumer threads call spmc_dequeue. In
 * io_threads the producer is the main thread and the consumers are the
 * workers (the shared inbox: whichever worker is free takes the next job).
 * Valkey: spmcQueue and spmcCell in src/queues.h, spmcEnqueue, spmcDequeue,
 * spmcIsEmpty and spmcSize in src/queues.c, after Dmitry Vyukov's bounded
 * MPMC queue. queue_spmc.c explains the protocol.
 */
#ifndef SOLOIST_QUEUE_SPMC_H
#define SOLOIST_QUEUE_SPMC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue_common.h"

/* Valkey's size for the shared inbox: 4096 cells of 64 bytes, 256 KiB. */
#define SPMC_QUEUE_SIZE 4096
static_assert(QUEUE_IS_POW2(SPMC_QUEUE_SIZE), "SPMC_QUEUE_SIZE must be a power of two");

/*@ spmc-cell */
/* One slot with its own sequence number, padded to a whole line: two
 * consumers finishing with neighbouring cells at the same time never
 * write the same line. */
typedef struct spmc_cell {
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t seq; /* whose turn it is (queue_spmc.c) */
    uintptr_t item;
} spmc_cell;

static_assert(sizeof(spmc_cell) == CACHE_LINE_SIZE, "a cell is one line");
/*@ end */

typedef struct spmc_queue {
    /* Line 0, the consumers': they claim positions by compare-and-swap on
     * head; the producer reads it for spmc_is_empty and spmc_size only. */
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t head; /* next position to claim */

    /* Line 1, the producer's alone. */
    _Alignas(CACHE_LINE_SIZE) size_t tail; /* next position to write */
    size_t head_cache;                     /* producer's copy of head */

    /* Lines 2 onwards: the cells, one line each. */
    spmc_cell cell[SPMC_QUEUE_SIZE];
} spmc_queue;

static_assert(offsetof(spmc_queue, tail) == 1 * CACHE_LINE_SIZE, "producer fields on their own line");
static_assert(offsetof(spmc_queue, cell) == 2 * CACHE_LINE_SIZE, "cells start on their own line");

/* Empties q. Not thread-safe: before any side uses it. */
void spmc_init(spmc_queue *q);

/* Producer. Publishes item (nonzero) at once; false when the ring is full
 * (the oldest cell is not yet claimed, or claimed and not yet released). */
bool spmc_enqueue(spmc_queue *q, uintptr_t item);

/* Producer. True when every item has been claimed by a consumer (which
 * says nothing about whether it has finished with it). */
bool spmc_is_empty(spmc_queue *q);

/* Producer. Items not yet claimed; a snapshot, stale as soon as it is
 * returned (io_threads samples it to decide how many threads to run). */
size_t spmc_size(spmc_queue *q);

/* Consumer. Claims the oldest item and returns it; 0 when there is none. */
uintptr_t spmc_dequeue(spmc_queue *q);

#endif
