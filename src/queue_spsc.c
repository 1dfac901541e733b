/* queue_spsc.c — the single-producer, single-consumer ring.
 *
 * Step 2 (threads layer). One producer thread, one consumer thread (see
 * queue_spsc.h); in io_threads, main feeds each worker's private inbox.
 * Valkey: the functions queue_spsc.h names.
 *
 * WHO OWNS WHAT
 *
 * The consumer owns head: it alone writes it, and it keeps tail_cache,
 * its private copy of tail. The producer owns tail: it alone writes it,
 * and it keeps two private fields, tail_local (where the next item goes)
 * and head_cache (its copy of head). At all times
 *
 *     head_cache <= head <= tail <= tail_local <= head + SPSC_QUEUE_SIZE
 *     tail_cache <= tail
 *
 * Positions [head, tail) hold items the consumer may take; positions
 * [tail, tail_local) hold items the producer has written but not yet
 * published, which the consumer cannot see.
 *
 * PUBLISHING IN BATCHES
 *
 * spsc_enqueue writes the slot with a plain store and moves only the
 * private tail_local. spsc_commit then makes every item written since the
 * last commit visible with one release store to tail. Main enqueues a
 * FREE_ARGV each time it is done with arguments a worker parsed, and
 * commits once per event-loop iteration, so a burst of frees costs one
 * store to a shared line, and one transfer of that line to the worker,
 * not one per item. The consumer mirrors it: spsc_dequeue_batch takes up
 * to `max` items and returns their slots with one release store to head.
 *
 * HAPPENS-BEFORE
 *
 * Two edges make the plain slot accesses race-free:
 *
 *   (1) item to consumer: the producer's stores to slots [tail, tail_local)
 *       happen before its release store of tail in spsc_commit, which the
 *       consumer's acquire load of tail in spsc_dequeue_batch reads; so
 *       the consumer's loads of those slots see the items.
 *   (2) slot back to producer: the consumer's loads of slots [head,
 *       head + n) happen before its release store of head + n, which the
 *       producer's acquire load of head (spsc_enqueue's full check,
 *       spsc_is_empty) reads; so the producer's next-lap store into such a
 *       slot cannot overwrite an item the consumer has not read yet.
 *
 * Edge (2) is easy to forget, since no data flows along it; without it, a
 * compiler or a weakly ordered CPU may let the new item reach the slot
 * before the consumer's read of the old one, and the old one is lost.
 *
 * FOUR LINES
 *
 * Each counter the other side reads sits alone on its line, and each
 * side's private fields on a line of their own. The line that matters is
 * tail's: a consumer that has caught up rereads tail on every poll,
 * taking a copy of its line. Were tail_local beside it, as the usual
 * two-line layout has it, the producer's next enqueue would have to take
 * the line back before writing tail_local, once per poll, whether or not
 * anything was published; apart, the polls cost the producer one trip per
 * commit, the one the commit makes anyway. The benchmark runs both
 * layouts (chapter 03).
 *
 * The stale copies are safe (queue_common.h): a stale head_cache only
 * makes the ring look full, a stale tail_cache only makes it look empty,
 * and each side reloads the real counter before it believes that. One
 * consequence is easy to miss: a producer that never commits could fill
 * the ring with items the consumer cannot see, and then wait forever for
 * room. So spsc_enqueue commits before it reports "full".
 */
#include "queue_spsc.h"

#include <assert.h>

#define SPSC_MASK ((size_t)SPSC_QUEUE_SIZE - 1)

void spsc_init(spsc_queue *q) {
    atomic_init(&q->head, 0);
    q->tail_cache = 0;
    atomic_init(&q->tail, 0);
    q->tail_local = 0;
    q->head_cache = 0;
}

/* Producer only. Contract: the item goes into position tail_local, and
 * only tail_local moves; tail, the one field the consumer reads, is left
 * for spsc_commit. The ring is full when tail_local is SPSC_QUEUE_SIZE
 * positions past head. The producer judges that from head_cache first and
 * reads head itself only when the copy says "full", with acquire (edge 2:
 * it pairs with the consumer's release store of head, so a slot the
 * consumer returned is free to overwrite). Full after that reload: commit
 * what is buffered (the consumer must see the items to make room) and
 * return false, writing nothing. */
/*@ spsc-enqueue */
bool spsc_enqueue(spsc_queue *q, uintptr_t item) {
    /*@ exercise: spsc-produce */
    assert(item != 0);
    if (q->tail_local - q->head_cache >= SPSC_QUEUE_SIZE) {
        /* Looks full: the consumer may have moved on since we last looked. */
        q->head_cache = atomic_load_explicit(&q->head, memory_order_acquire); /* edge 2 */
        if (q->tail_local - q->head_cache >= SPSC_QUEUE_SIZE) {
            spsc_commit(q); /* let the consumer see what it must drain */
            return false;
        }
    }
    q->slot[q->tail_local & SPSC_MASK] = item; /* plain: published by spsc_commit */
    q->tail_local++;
    return true;
    /*@ end */
}
/*@ end */

/* Producer only. Contract: after it returns, every item enqueued so far
 * is visible to the consumer, by one store of tail_local into tail with
 * release (edge 1: it pairs with the consumer's acquire load of tail, and
 * carries every plain slot store before it). When nothing was enqueued
 * since the last commit it writes nothing: the line tail sits on stays
 * where the consumer last read it. */
/*@ spsc-commit */
void spsc_commit(spsc_queue *q) {
    /*@ exercise: spsc-publish */
    /* Relaxed: the producer reads back its own store. Comparing first
     * keeps an idle commit (main calls this every event-loop iteration,
     * for every worker) from writing the shared line for nothing. */
    if (atomic_load_explicit(&q->tail, memory_order_relaxed) != q->tail_local)
        atomic_store_explicit(&q->tail, q->tail_local, memory_order_release); /* edge 1 */
    /*@ end */
}
/*@ end */

/* Producer only. Contract: true when the consumer has taken every item
 * enqueued, committed or not (an uncommitted item counts as "not
 * empty"). Main asks after every commit, for every worker, so it judges
 * from head_cache first and reads head itself only when the copy is
 * behind tail_local, with acquire (edge 2), keeping what it read in
 * head_cache. */
/*@ spsc-is-empty */
bool spsc_is_empty(spsc_queue *q) {
    /*@ exercise: spsc-empty */
    if (q->tail_local == q->head_cache) return true;
    /* Acquire although the answer is only a yes or no: the refreshed
     * head_cache is what spsc_enqueue later trusts to reuse slots. */
    q->head_cache = atomic_load_explicit(&q->head, memory_order_acquire); /* edge 2 */
    return q->tail_local == q->head_cache;
    /*@ end */
}
/*@ end */

/* Consumer only. Contract: copies min(max, items below its copy of tail)
 * items, oldest first, into out and returns the count. It judges "empty" from
 * tail_cache first and reads tail itself only when the copy says so, with
 * acquire (edge 1: pairs with spsc_commit's release store). Having copied
 * n items it hands their slots back with one release store of head + n
 * (edge 2: pairs with the producer's acquire loads of head), never before
 * it has read them. */
/*@ spsc-dequeue-batch */
size_t spsc_dequeue_batch(spsc_queue *q, uintptr_t *out, size_t max) {
    /*@ exercise: spsc-consume */
    /* Relaxed: the consumer reads back its own store. */
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    if (head == q->tail_cache) {
        /* Looks empty: read the published tail. */
        q->tail_cache = atomic_load_explicit(&q->tail, memory_order_acquire); /* edge 1 */
        if (head == q->tail_cache) return 0;
    }
    size_t n = q->tail_cache - head;
    if (n > max) n = max;
    for (size_t i = 0; i < n; i++) out[i] = q->slot[(head + i) & SPSC_MASK];
    atomic_store_explicit(&q->head, head + n, memory_order_release); /* edge 2 */
    return n;
    /*@ end */
}
/*@ end */
