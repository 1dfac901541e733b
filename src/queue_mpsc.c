/* queue_mpsc.c — the multi-producer, single-consumer ring.
 *
 * Step 2 (threads layer). Any number of producer threads, one consumer
 * (see queue_mpsc.h); in io_threads, every worker sends its results to
 * main through it.
 * Valkey: the functions queue_mpsc.h names.
 *
 * WHO OWNS WHAT
 *
 * The consumer owns head. The producers share tail, which each advances
 * with an atomic fetch-and-add to reserve one position, and head_cache, a
 * recent value of head that any producer may refresh for the others. Each
 * slot is written twice a lap: by the producer that reserved its position
 * (the item), then by the consumer (back to 0). At all times
 *
 *     head_cache <= head <= every reserved, unwritten position
 *     a position p is written only once p < head + MPSC_QUEUE_SIZE
 *
 * and tail may run ahead of head + MPSC_QUEUE_SIZE: producers keep
 * reserving while the ring is full.
 *
 * RESERVE FIRST, CHECK SECOND
 *
 * A producer cannot look for room and then take it, because another
 * producer may take it in between; the fetch-and-add hands out distinct
 * positions without a lock, and only then does the producer learn whether
 * its position's slot is free yet. If it is not, the position cannot be
 * given back: others may hold the ones after it, and the consumer reads
 * positions in order, so a position nobody fills would stop it for good.
 * The producer keeps the position in its ticket and fills it on a later
 * try, with its oldest unsent item.
 *
 * NEVER BLOCKING
 *
 * A worker that waited for room in a full outbox could wait for main
 * while main waits for it (draining the pool waits for every worker's
 * jobs), and would hold up its other jobs besides. So a worker uses
 * mpsc_send, which never waits: what does not fit goes into the worker's
 * spill list, and the worker retries it later (mpsc_flush, when it has
 * nothing else to do). A new item never overtakes a spilled one, so each
 * producer's items reach the consumer in the order it sent them.
 *
 * IN ORDER, THROUGH HOLES
 *
 * The consumer stops at the first position whose slot is still 0
 * (reserved, not yet written), even if later slots are full: taking them
 * would move head past the hole, and the slow producer would then write
 * into a slot the consumer has left behind. The price is that a producer
 * preempted between its reservation and its store holds back everyone
 * after it until it runs again.
 *
 * THE SLOTS, NOT TAIL, SAY WHAT IS THERE
 *
 * The consumer never reads tail: a slot that is not 0 at a position p
 * with head <= p < head + SIZE holds position p's item, since the lap
 * before p was taken (and set back to 0) before head passed it, and the
 * lap after p may not be written until head passes p. So the consumer
 * reads slots from head on until it finds a 0, whether that 0 is a
 * reserved hole or the end of what was sent. This keeps tail on a line
 * that only producers touch: a consumer that polled tail would pull that
 * line away from the producers' fetch-and-add for every item, on top of
 * the slot line each item costs anyway.
 *
 * HAPPENS-BEFORE
 *
 * Two edges, as in the SPSC ring, but on different fields:
 *
 *   (1) item to consumer: what the producer wrote before sending (the
 *       client its job worked on) happens before its release store of the
 *       item into the slot, which the consumer's acquire load of that slot
 *       reads. The counters carry nothing here: tail counts reservations,
 *       not items written.
 *   (2) slot back to producers: the consumer's load of an item and its
 *       store of 0 into the slot happen before its release store of head,
 *       which a producer's acquire load of head reads, either directly or
 *       through head_cache: the producer that loaded head stores it into
 *       head_cache with release, and another producer's acquire load of
 *       head_cache extends the edge to it (happens-before is transitive).
 *       Without (2), the consumer's 0 could land after the next lap's
 *       item and erase it.
 *
 * head_cache may move backwards (two producers store the heads they read
 * in the other order); an old head only makes the ring look fuller, so
 * the producer rereads head itself before it reports "full".
 */
#include "queue_mpsc.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPSC_MASK ((size_t)MPSC_QUEUE_SIZE - 1)

void mpsc_init(mpsc_queue *q) {
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    atomic_init(&q->head_cache, 0);
    for (size_t i = 0; i < MPSC_QUEUE_SIZE; i++) atomic_init(&q->slot[i], 0);
}

/* Any producer, with its own ticket. Contract: a ticket that holds no
 * position gets one, a fresh position from tail by fetch-and-add (never
 * given back); a ticket that holds one keeps it. The position's slot may
 * be written once the position is below head + MPSC_QUEUE_SIZE. The
 * producer judges that from head_cache (acquire) first, and only when
 * that says "full" reads head (acquire, edge 2: pairs with the consumer's
 * release store of head) and passes it on in head_cache (release). Room:
 * store the item into the slot with release (edge 1: pairs with the
 * consumer's acquire load of the slot), clear the ticket, return true.
 * No room: keep the position in the ticket and return false. */
/*@ mpsc-enqueue */
bool mpsc_enqueue(mpsc_queue *q, mpsc_ticket *t, uintptr_t item) {
    /*@ exercise: mpsc-reserve */
    assert(item != 0);
    size_t pos = t->index;
    if (!t->reserved)
        /* Relaxed: the fetch-and-add only has to hand out each position
         * once, which its atomicity does; the item is published by the
         * slot's own store below. */
        pos = atomic_fetch_add_explicit(&q->tail, 1, memory_order_relaxed);

    size_t head = atomic_load_explicit(&q->head_cache, memory_order_acquire); /* edge 2, relayed */
    if (pos - head >= MPSC_QUEUE_SIZE) {
        /* The consumer is done with the slots below it. */
        head = atomic_load_explicit(&q->head, memory_order_acquire); /* edge 2 */
        /* Release passes that edge on to the producers that read
         * head_cache instead of head. */
        atomic_store_explicit(&q->head_cache, head, memory_order_release);
        if (pos - head >= MPSC_QUEUE_SIZE) {
            t->index = pos;
            t->reserved = true;
            return false;
        }
    }
    atomic_store_explicit(&q->slot[pos & MPSC_MASK], item, memory_order_release); /* edge 1 */
    t->reserved = false;
    return true;
    /*@ end */
}
/*@ end */

/* Appends item to p's spill list, making room by moving the live items
 * to the front or, if that is not enough, by doubling the array. */
static void spill_push(mpsc_producer *p, uintptr_t item) {
    if (p->spill_end == p->spill_cap) {
        size_t len = mpsc_spilled(p);
        if (p->spill_first > len) {
            memmove(p->spill, p->spill + p->spill_first, len * sizeof *p->spill);
        } else {
            size_t cap = p->spill_cap ? 2 * p->spill_cap : 64;
            uintptr_t *grown = malloc(cap * sizeof *grown);
            if (!grown) {
                fprintf(stderr, "mpsc: out of memory spilling %zu items\n", len + 1);
                abort();
            }
            if (len) memcpy(grown, p->spill + p->spill_first, len * sizeof *grown);
            free(p->spill);
            p->spill = grown;
            p->spill_cap = cap;
        }
        p->spill_first = 0;
        p->spill_end = len;
    }
    p->spill[p->spill_end++] = item;
}

/* Any producer, with its own mpsc_producer. Contract: never waits and
 * never loses an item; p's items reach the consumer in the order they
 * were sent. So a new item may try the ring only when nothing of p's is
 * spilled; otherwise, or when its try fails, it goes to the end of the
 * spill list (spill_push), and if it tried, its position stays in the
 * ticket for the oldest spilled item, the one that will fill it. */
/*@ mpsc-send */
void mpsc_send(mpsc_queue *q, mpsc_producer *p, uintptr_t item) {
    /*@ exercise: mpsc-spill */
    /* Older items first: try the spilled ones, and only if they all went
     * in may this one try the ring. If this one's try fails, its ticket
     * holds a position, and this item, first in the list, will fill it. */
    if (mpsc_flush(q, p) && mpsc_enqueue(q, &p->ticket, item)) return;
    spill_push(p, item);
    /*@ end */
}
/*@ end */

/* The producer that owns p. Contract: enqueues p's spilled items oldest
 * first, each with p's ticket, and stops at the first that does not fit,
 * leaving it and everything after it spilled, in order; returns true when
 * none are left (the list is then empty, its storage kept for reuse). */
bool mpsc_flush(mpsc_queue *q, mpsc_producer *p) {
    /*@ exercise: mpsc-flush */
    for (; p->spill_first < p->spill_end; p->spill_first++)
        if (!mpsc_enqueue(q, &p->ticket, p->spill[p->spill_first])) return false;
    p->spill_first = p->spill_end = 0;
    return true;
    /*@ end */
}

void mpsc_producer_reset(mpsc_producer *p) {
    free(p->spill);
    *p = (mpsc_producer){0};
}

/* The consumer only. Contract: takes up to max items (at most a lap) in
 * position order from head on, and stops at the first slot still 0 (not
 * written yet, whether reserved or not), however many are ready after
 * it; it never reads tail. Each slot is read with acquire (edge 1: pairs
 * with the producer's release store of the item) and set back to 0. One
 * release store of head + taken hands the slots back (edge 2: pairs with
 * the producers' acquire loads of head). */
/*@ mpsc-dequeue-batch */
size_t mpsc_dequeue_batch(mpsc_queue *q, uintptr_t *out, size_t max) {
    /*@ exercise: mpsc-consume */
    /* Relaxed: the consumer reads back its own store. */
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    /* Within one lap of head, a slot that is not 0 is its position's. */
    if (max > MPSC_QUEUE_SIZE) max = MPSC_QUEUE_SIZE;
    size_t taken = 0;
    for (; taken < max; taken++) {
        _Atomic uintptr_t *slot = &q->slot[(head + taken) & MPSC_MASK];
        /* What the producer wrote before sending is visible to us. */
        uintptr_t item = atomic_load_explicit(slot, memory_order_acquire); /* edge 1 */
        if (item == 0) break; /* not written yet: the end, or a hole; keep order */
        out[taken] = item;
        /* Relaxed: the release store of head below orders it before any
         * producer's next write to this slot (edge 2). */
        atomic_store_explicit(slot, 0, memory_order_relaxed);
    }
    if (taken > 0) atomic_store_explicit(&q->head, head + taken, memory_order_release); /* edge 2 */
    return taken;
    /*@ end */
}
/*@ end */
