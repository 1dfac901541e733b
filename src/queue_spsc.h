/* queue_spsc.h — a bounded single-producer, single-consumer ring.
 *
 * Step 2 (threads layer). Owns: one ring of SPSC_QUEUE_SIZE words and its
 * two counters. Threads: exactly one producer thread calls spsc_enqueue,
 * spsc_commit and spsc_is_empty; exactly one consumer thread calls
 * spsc_dequeue_batch. In io_threads the producer is the main thread and
 * the consumer is the worker that owns the queue (its private inbox).
 * Valkey: spscQueue in src/queues.h, spscIsFull, spscEnqueue, spscCommit,
 * spscDequeueBatch and spscIsEmpty in src/queues.c. queue_spsc.c explains the
 * protocol.
 */
#ifndef SOLOIST_QUEUE_SPSC_H
#define SOLOIST_QUEUE_SPSC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue_common.h"

/* Valkey's size for a worker's private inbox: 4096 words, 32 KiB. */
#define SPSC_QUEUE_SIZE 4096
static_assert(QUEUE_IS_POW2(SPSC_QUEUE_SIZE), "SPSC_QUEUE_SIZE must be a power of two");

/*@ spsc-queue */
typedef struct spsc_queue {
    /* Line 0: head, written by the consumer once per batch it takes; the
     * producer reads it when its copy says the ring is full, and when
     * spsc_is_empty finds its copy behind (io_threads_commit asks after
     * every commit). */
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t head; /* next position to read */

    /* Line 1: tail, written by the producer once per commit; the
     * consumer reads it only when its copy says the ring is empty. */
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t tail; /* published: the consumer may read below it */

    /* Line 2, the consumer's alone. */
    _Alignas(CACHE_LINE_SIZE) size_t tail_cache; /* consumer's copy of tail */

    /* Line 3, the producer's alone: written on every enqueue, so kept off
     * the line the consumer polls (queue_spsc.c, "Four lines"). */
    _Alignas(CACHE_LINE_SIZE) size_t tail_local; /* next position to write; >= tail */
    size_t head_cache;                           /* producer's copy of head */

    /* Lines 4 onwards: the ring, 8 words to a line. */
    _Alignas(CACHE_LINE_SIZE) uintptr_t slot[SPSC_QUEUE_SIZE];
} spsc_queue;

static_assert(offsetof(spsc_queue, tail) == 1 * CACHE_LINE_SIZE, "the published tail on its own line");
static_assert(offsetof(spsc_queue, tail_cache) == 2 * CACHE_LINE_SIZE, "consumer's private line");
static_assert(offsetof(spsc_queue, tail_local) == 3 * CACHE_LINE_SIZE, "producer's private line");
static_assert(offsetof(spsc_queue, slot) == 4 * CACHE_LINE_SIZE, "ring starts on its own line");
/*@ end */

/* Empties q. Not thread-safe: before either side uses it. */
void spsc_init(spsc_queue *q);

/* Producer. Writes item (nonzero) into the ring without publishing it:
 * the consumer sees it after the next spsc_commit. Returns false when the
 * ring is full; it has then committed everything buffered, so the consumer
 * can make room. */
bool spsc_enqueue(spsc_queue *q, uintptr_t item);

/* Producer. Publishes every item enqueued so far, with one store. */
void spsc_commit(spsc_queue *q);

/* Producer. True when the consumer has taken every item, committed or
 * not (so an uncommitted item counts as "not empty"). */
bool spsc_is_empty(spsc_queue *q);

/* Consumer. Moves up to max published items, oldest first, into out and
 * returns how many (0: none published). */
size_t spsc_dequeue_batch(spsc_queue *q, uintptr_t *out, size_t max);

#endif
