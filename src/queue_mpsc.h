/* queue_mpsc.h — a bounded multi-producer, single-consumer ring, and the
 * producer's side of it that never blocks.
 *
 * Step 2 (threads layer). Owns: one ring of MPSC_QUEUE_SIZE words and its
 * counters; each producer owns an mpsc_producer (its ticket and its spill
 * list). Threads: any number of producer threads call mpsc_enqueue,
 * mpsc_send and mpsc_flush, each with its own ticket or producer; one
 * consumer thread calls mpsc_dequeue_batch. In io_threads the producers
 * are the workers and the consumer is the main thread (the shared outbox).
 * Valkey: mpscQueue and mpscTicket in src/queues.h, mpscEnqueue and
 * mpscDequeueBatch in src/queues.c; the spill list is io_threads.c's
 * pending_io_responses with sendToMainThread and flushPendingIOResponses.
 * queue_mpsc.c explains the protocol.
 */
#ifndef SOLOIST_QUEUE_MPSC_H
#define SOLOIST_QUEUE_MPSC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue_common.h"

/* Valkey's size for the shared outbox: 16384 words, 128 KiB. */
#define MPSC_QUEUE_SIZE 16384
static_assert(QUEUE_IS_POW2(MPSC_QUEUE_SIZE), "MPSC_QUEUE_SIZE must be a power of two");

typedef struct mpsc_queue {
    /* Line 0, the consumer's: it writes head; producers read it when the
     * ring looks full. */
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t head; /* next position to read */

    /* Line 1, the producers': every producer writes tail (to reserve) and
     * may write head_cache (to share a fresher head with the others). */
    _Alignas(CACHE_LINE_SIZE) _Atomic size_t tail; /* next position to reserve */
    _Atomic size_t head_cache;                     /* some recent head; <= head */

    /* Lines 2 onwards: the ring. 0 = empty, or reserved and not written. */
    _Alignas(CACHE_LINE_SIZE) _Atomic uintptr_t slot[MPSC_QUEUE_SIZE];
} mpsc_queue;

static_assert(offsetof(mpsc_queue, tail) == 1 * CACHE_LINE_SIZE, "producer fields on their own line");
static_assert(offsetof(mpsc_queue, slot) == 2 * CACHE_LINE_SIZE, "ring starts on its own line");

/*@ mpsc-producer */
/* A producer's claim on one position. Once a producer has reserved a
 * position it must fill exactly that one, however long the ring stays
 * full; the ticket remembers it between tries. */
typedef struct mpsc_ticket {
    size_t index; /* the reserved position, when reserved */
    bool reserved;
} mpsc_ticket;

/* A producer that never waits: what does not fit waits in its spill list,
 * oldest first, and goes into the ring before anything newer. Zeroed
 * ({0}) is a valid empty producer. One per producer thread. */
typedef struct mpsc_producer {
    mpsc_ticket ticket;
    uintptr_t *spill;   /* spill_cap words (malloc'd), or NULL */
    size_t spill_first; /* the oldest item still held back */
    size_t spill_end;   /* one past the newest */
    size_t spill_cap;
} mpsc_producer;
/*@ end */

/* Empties q. Not thread-safe: before any side uses it. */
void mpsc_init(mpsc_queue *q);

/* Producer. Puts item (nonzero) into the ring and returns true, or, when
 * the ring is full, keeps its reserved position in *t and returns false.
 * The caller must then retry with the same ticket, and the item it retries
 * with is the one that goes into that position: its oldest unsent one. */
bool mpsc_enqueue(mpsc_queue *q, mpsc_ticket *t, uintptr_t item);

/* Producer. Sends item after everything p has spilled; never blocks,
 * never fails: what does not fit is spilled (copied into p's list). */
void mpsc_send(mpsc_queue *q, mpsc_producer *p, uintptr_t item);

/* Producer. Moves spilled items into the ring until it is full; true when
 * none are left. Call it when idle: spilled items are not in the ring,
 * and the consumer waits at a reserved position until it is filled. */
bool mpsc_flush(mpsc_queue *q, mpsc_producer *p);

/* Producer. How many items p holds back (0: none). */
static inline size_t mpsc_spilled(const mpsc_producer *p) { return p->spill_end - p->spill_first; }

/* Frees p's spill list and forgets what it held, ticket included. Only
 * for a producer with nothing spilled, or when the queue itself is being
 * discarded: a reserved position nobody fills stops the consumer there. */
void mpsc_producer_reset(mpsc_producer *p);

/* Consumer. Moves up to max items, in position order, into out and
 * returns how many. Stops early at a position reserved but not yet
 * written, so one slow producer delays the items after its own. */
size_t mpsc_dequeue_batch(mpsc_queue *q, uintptr_t *out, size_t max);

#endif
