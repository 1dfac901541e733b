/* queue_common.h — what the three ring queues have in common.
 *
 * Step 2 (threads layer). Owns: the cache-line size the queues pad to and
 * the ring arithmetic they share. No state; any thread may include it.
 * Valkey: src/queues.h (the three queues) and CACHE_LINE_SIZE in
 * src/config.h.
 *
 * The queues (queue_spsc.h, queue_spmc.h, queue_mpsc.h) move words
 * between threads: a job (job.h) for io_threads, any nonzero uintptr_t
 * for their tests. They never look inside a word, and 0 is reserved: it
 * is what a dequeue returns for "nothing there", and in the MPSC queue
 * what an unwritten slot holds.
 *
 * RINGS AND COUNTERS
 *
 * Each queue is an array of a power-of-two number of slots and two
 * counters, head (the next position to read) and tail (the next position
 * to write). The counters are never reduced modulo the size; they only
 * grow, and position p lives in slot p & (size - 1). So
 *
 *     tail - head          is the number of items in the queue,
 *     tail - head == 0     means empty, and
 *     tail - head == size  means full,
 *
 * with no wasted slot and no separate count. The subtraction is unsigned, so
 * it stays right even when a counter wraps past SIZE_MAX to 0 (which a 64-bit
 * counter at a billion items a second does after centuries; the tests start
 * the counters just below it to see that it holds).
 *
 * A counter is written by one side only, and each queue says which; the other
 * side reads it and may keep a private, possibly stale copy (a "cache" of the
 * opposite index). A stale copy is always safe in one direction: head and
 * tail only grow, so an old head makes the queue look fuller than it is, an
 * old tail makes it look emptier, and the side that sees "full" or "empty"
 * reloads the real counter before it says so.
 *
 * CACHE LINES
 *
 * Two cores cannot both hold a cache line for writing: the
 * line moves to whichever core wrote last, and a read on the other core
 * waits for it to come back. If the producer's counter and the consumer's
 * counter shared a line, every enqueue would pull the line away from the
 * consumer and every dequeue pull it back, though neither ever touches
 * the other's field ("false sharing"). So each queue puts the fields one
 * side writes on a line of their own, by aligning the first field of each
 * group to CACHE_LINE_SIZE; the compiler inserts the padding before it,
 * and a static_assert beside each struct checks the offsets. A counter
 * the other side polls is best alone on its line, apart even from its
 * owner's private fields (queue_spsc.c says why). The items
 * themselves are shared for real — a slot is written by one side and read
 * by the other — and there the cost is paid once per line, not per item:
 * eight words fill a line.
 */
#ifndef SOLOIST_QUEUE_COMMON_H
#define SOLOIST_QUEUE_COMMON_H

#include <assert.h> /* static_assert, used beside each queue's struct */
#include <stddef.h>

/* The line size of x86-64 and of most arm64 cores (Valkey uses 128 on
 * Apple's). Used only for layout: a wrong value costs speed, never
 * correctness. */
#define CACHE_LINE_SIZE 64

/* True when n is a power of two (the ring sizes must be, for masking). */
#define QUEUE_IS_POW2(n) ((n) > 0 && ((n) & ((n)-1)) == 0)

#endif
