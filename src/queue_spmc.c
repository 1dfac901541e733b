/* queue_spmc.c — the single-producer, multi-consumer ring.
 *
 * Step 2 (threads layer). One producer, any number of consumers (see
 * queue_spmc.h); in io_threads, main feeds the workers' shared inbox.
 * Valkey: the functions queue_spmc.h names.
 *
 * WHO OWNS WHAT
 *
 * The producer owns tail and head_cache, plain fields no other thread
 * reads. The consumers share head, and a consumer takes a position by
 * moving head past it with a compare-and-swap: of all the consumers that
 * try for the same position, exactly one succeeds. What lets the producer
 * and the consumers agree on each cell without a lock is the cell's
 * sequence number, seq, which says whose turn it is. For the cell that
 * holds position p (the cell p & (SIZE - 1)):
 *
 *     seq == p            empty: the producer may write position p here
 *     seq == p + 1        holds position p's item: a consumer may take it
 *     seq == p + SIZE     taken and released: empty again, for position
 *                         p + SIZE, the producer's next lap
 *
 * Only the producer moves seq from p to p + 1, and only the consumer that
 * won position p moves it from p + 1 to p + SIZE, so each step has one
 * writer. At all times head <= tail <= head + SIZE. (Every cell starts
 * with seq == its index, i.e. empty for lap 0.)
 *
 * READING THE NUMBER
 *
 * The producer at tail == p finds seq == p (write there) or something
 * smaller (full: the cell still holds the item of position p - SIZE, or a
 * consumer has claimed it and is still reading). A consumer at head == h
 * compares seq with h + 1: equal, the item is there, try to claim it;
 * smaller, nothing has been published at h yet (empty); larger, another
 * consumer took h and moved on, so this consumer's h is stale and it
 * rereads head. Positions within a lap of each other differ by less than
 * SIZE, so the comparison is done on the signed difference, which stays
 * right when the counters wrap.
 *
 * HAPPENS-BEFORE
 *
 * As in the other rings, two edges, here both through seq:
 *
 *   (1) item to consumer: the producer's plain store of the item happens
 *       before its release store seq = p + 1, which a consumer's acquire
 *       load of seq reads before it claims p and reads the item.
 *   (2) cell back to producer: the winning consumer's read of the item
 *       happens before its release store seq = p + SIZE, which the
 *       producer's acquire load of seq reads before it writes the next
 *       lap's item.
 *
 * The compare-and-swap on head is relaxed: it only decides which consumer
 * owns a position. It publishes nothing (the item's visibility is edge
 * 1, already established by the load of seq before it) and makes no slot
 * reusable (edge 2 does that, per cell). The producer never uses head to
 * decide it may write, only to count: so it may read head relaxed too.
 *
 * Why cells of a whole line: consumers release cells (write seq) at the
 * same time as other consumers claim the next ones, and the producer
 * writes the cell after. Unpadded, a cell is 16 bytes (seq and item),
 * four to a line, and those writes would pull one line between every
 * core involved. Valkey pays 64 bytes a cell
 * for this, 256 KiB for the 4096 cells of the shared inbox.
 */
#include "queue_spmc.h"

#include <assert.h>

#define SPMC_MASK ((size_t)SPMC_QUEUE_SIZE - 1)

void spmc_init(spmc_queue *q) {
    atomic_init(&q->head, 0);
    q->tail = 0;
    q->head_cache = 0;
    for (size_t i = 0; i < SPMC_QUEUE_SIZE; i++) {
        atomic_init(&q->cell[i].seq, i);
        q->cell[i].item = 0;
    }
}

/* Producer only. Contract: the item goes into the cell of position tail,
 * and the cell's seq, not head, says whether it may: seq == tail means
 * the last lap's consumer has read the cell and released it (acquire:
 * edge 2). Anything else means full, even when head says there is room
 * (a consumer may have claimed the cell and not yet read it). Then write
 * the item with a plain store, publish it with one release store of
 * seq = tail + 1 (edge 1), and move the private tail. Full: write
 * nothing, return false. */
/*@ spmc-enqueue */
bool spmc_enqueue(spmc_queue *q, uintptr_t item) {
    /*@ exercise: spmc-publish */
    assert(item != 0);
    spmc_cell *c = &q->cell[q->tail & SPMC_MASK];
    /* The consumer of the last lap is done reading this cell. */
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != q->tail) return false; /* edge 2 */
    c->item = item; /* plain: the next store publishes it */

    atomic_store_explicit(&c->seq, q->tail + 1, memory_order_release); /* edge 1 */
    q->tail++;
    return true;
    /*@ end */
}
/*@ end */

bool spmc_is_empty(spmc_queue *q) {
    if (q->tail == q->head_cache) return true;
    /* Relaxed: only a count is wanted; nothing is read because of it. */
    q->head_cache = atomic_load_explicit(&q->head, memory_order_relaxed);
    return q->tail == q->head_cache;
}

size_t spmc_size(spmc_queue *q) {
    /* Relaxed, as in spmc_is_empty. head <= tail always (a consumer claims
     * only published positions), so the difference cannot underflow. */
    return q->tail - atomic_load_explicit(&q->head, memory_order_relaxed);
}

/* Any consumer. Contract: claims the oldest published position and
 * returns its item, or 0 when nothing is published at head. Look before
 * claiming: read the cell's seq at head (acquire, edge 1) and compare it
 * with head + 1 on the signed difference: equal, try to claim head by a
 * compare-and-swap of head to head + 1; smaller, return 0 without
 * touching head; larger, another consumer took head, so reread head and
 * look again. Only the winner of the CAS reads the item, then releases
 * the cell for the producer's next lap with a release store of seq =
 * head + SPMC_QUEUE_SIZE (edge 2), after its read of the item. */
/*@ spmc-dequeue */
uintptr_t spmc_dequeue(spmc_queue *q) {
    /*@ exercise: spmc-claim */
    /* Relaxed: head is only the position to try; the claim is the CAS. */
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    for (;;) {
        spmc_cell *c = &q->cell[head & SPMC_MASK];
        /* If the item is there, so is everything before it. */
        size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire); /* edge 1 */
        ptrdiff_t diff = (ptrdiff_t)(seq - (head + 1));
        if (diff < 0) return 0; /* nothing published at head yet */
        if (diff > 0) {         /* taken by another consumer: catch up */
            head = atomic_load_explicit(&q->head, memory_order_relaxed);
            continue;
        }
        /* Relaxed both ways: the CAS arbitrates, it orders nothing. On
         * failure (another consumer won, or a spurious failure of the weak
         * form) it leaves the current head in `head`, and we look again. */
        if (atomic_compare_exchange_weak_explicit(&q->head, &head, head + 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            uintptr_t item = c->item;
            /* Our read of the item comes before its overwrite. */
            atomic_store_explicit(&c->seq, head + SPMC_QUEUE_SIZE, memory_order_release); /* edge 2 */
            return item;
        }
    }
    /*@ end */
}
/*@ end */
