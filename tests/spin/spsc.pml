/* spsc.pml — the protocol of src/queue_spsc.c, checked by Spin.
 *
 * One producer sends items 1..N through a ring of SIZE slots; one consumer
 * takes them in batches of 1..BATCH. Every choice the C code leaves to its
 * caller is left open here, so Spin tries them all: after each enqueue the
 * producer commits or not, and each dequeue asks for any batch size.
 * Spin explores every interleaving of the two threads' steps, where a step
 * is one load or store of a shared field, as in the C code.
 *
 * Checked: the consumer receives 1, 2, ..., N in order (so none is lost or
 * repeated), and neither side can wait forever: a wait is written as a
 * statement that blocks until something it reads changes, so a wait that
 * could last forever shows up as an invalid end state.
 *
 * Spin's interleavings are sequentially consistent: the model checks the
 * protocol's logic; the memory orders that make the C code behave so are
 * checked by ThreadSanitizer (tests/suites/26-threads-tsan.sh).
 *
 * -DBUG_NO_COMMIT_ON_FULL removes the commit a full enqueue makes; Spin
 * must then find a producer waiting forever for room.
 */
#define SIZE 2
#define N 5
#define BATCH 2

byte slot[SIZE];
byte head;      /* written by the consumer */
byte tail;      /* published tail, written by the producer */

active proctype producer() {
    byte tail_local = 0, head_cache = 0, k = 1;
    do
    :: k > N -> break
    :: else ->
        /* spsc_enqueue */
        if
        :: tail_local - head_cache >= SIZE ->
            head_cache = head;
            if
            :: tail_local - head_cache >= SIZE ->
#ifndef BUG_NO_COMMIT_ON_FULL
                tail = tail_local;            /* commit before saying full */
#endif
                (tail_local - head < SIZE);   /* full: wait for room, then retry */
                goto retry
            :: else -> skip
            fi
        :: else -> skip
        fi;
        slot[tail_local % SIZE] = k;
        tail_local++;
        k++;
        /* the caller may commit now, or later */
        if
        :: tail = tail_local
        :: skip
        fi;
retry:  skip
    od;
    tail = tail_local   /* the last commit */
}

active proctype consumer() {
    byte h, tail_cache = 0, n, i, max, expect = 1;
    do
    :: expect > N -> break
    :: else ->
        /* spsc_dequeue_batch(max) */
        if
        :: max = 1
        :: max = BATCH
        fi;
        h = head;
        if
        :: h == tail_cache ->
            tail_cache = tail;
            if
            :: h == tail_cache ->
                (tail != h);               /* empty: wait for a commit */
                goto again
            :: else -> skip
            fi
        :: else -> skip
        fi;
        n = tail_cache - h;
        if
        :: n > max -> n = max
        :: else -> skip
        fi;
        i = 0;
        do
        :: i < n ->
            assert(slot[(h + i) % SIZE] == expect);
            expect++;
            i++
        :: else -> break
        od;
        head = h + n;
again:  skip
    od
}
