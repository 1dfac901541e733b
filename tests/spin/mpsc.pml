/* mpsc.pml — the protocol of src/queue_mpsc.c, checked by Spin.
 *
 * P producers each send M items through a ring of SIZE slots with
 * mpsc_send: reserve a position with a fetch-and-add, keep it in a ticket
 * when the ring is full, spill what does not fit and flush it later, never
 * letting a new item overtake a spilled one. One consumer takes batches of
 * 1..BATCH, stopping at the first slot not yet written (it never reads
 * tail, as in the C code). Spin explores
 * every interleaving of their steps (one load, store or fetch-and-add of a
 * shared field each, as in the C code).
 *
 * Checked: the consumer gets every producer's items once each and in that
 * producer's order, and no thread can wait forever (a producer that has
 * sent everything flushes until its spill list is empty, waiting for the
 * consumer to move head; a wait that could last forever is an invalid end
 * state). As in every model here, interleavings are sequentially
 * consistent; the memory orders are ThreadSanitizer's to check.
 *
 * Mutations Spin must catch: -DBUG_OVERTAKE lets a new item try the ring
 * before the spilled ones (an item out of its producer's order);
 * -DBUG_SKIP_HOLE lets the consumer take items past a reserved, unwritten
 * slot (it reads tail to tell a hole from the end; an item lost or out of
 * order).
 */
/* Small, and enough for every case: four items in two slots fill the
 * ring, so positions are reserved past it, kept in tickets, spilled and
 * flushed, and the slots are used over two laps. M = 3 takes Spin over a
 * minute and gigabytes. */
#define SIZE 2
#define P 2
#define M 2
#define BATCH 2

byte slot[SIZE];    /* 0: empty, or reserved and not written */
byte head;          /* written by the consumer */
byte tail;          /* reservations, fetch-and-add by producers */
byte head_cache;    /* any producer may refresh it */

/* An item is producer * 10 + k, k = 1 .. M: never 0. */
#define ITEM(p, k) ((p) * 10 + (k))

/* Promela's inline is text substitution: these use the calling
 * producer's locals (pos, h, reserved, spill, first, end), as the C
 * functions use its ticket and its mpsc_producer. */

inline mpsc_enqueue(it, ok) {
    if
    :: !reserved -> atomic { pos = tail; tail++ }   /* fetch-and-add */
    :: else -> skip                                 /* the ticket's position */
    fi;
    h = head_cache;
    if
    :: pos - h >= SIZE ->
        h = head;
        head_cache = h;
        if
        :: pos - h >= SIZE -> reserved = true; ok = false   /* full: keep pos */
        :: else -> slot[pos % SIZE] = it; reserved = false; ok = true
        fi
    :: else -> slot[pos % SIZE] = it; reserved = false; ok = true
    fi
}

inline mpsc_flush(ok) {
    ok = true;
    do
    :: first == end -> break
    :: else ->
        mpsc_enqueue(spill[first], ok);
        if
        :: ok -> first++
        :: else -> break
        fi
    od
}

inline mpsc_send(it) {
#ifdef BUG_OVERTAKE
    mpsc_enqueue(it, ok);      /* the ring first, whatever was spilled */
#else
    mpsc_flush(ok);
    if
    :: ok -> mpsc_enqueue(it, ok)
    :: else -> skip
    fi;
#endif
    if
    :: !ok -> spill[end] = it; end++
    :: else -> skip
    fi
}

proctype producer(byte p) {
    byte k, pos, h, seen, first = 0, end = 0;
    byte spill[M];
    bool reserved = false, ok;
    for (k : 1 .. M) {
        mpsc_send(ITEM(p, k))
    }
    /* Everything sent; flush what was spilled, waiting for the consumer
     * to move head whenever the ring is full. */
    do
    :: first == end -> break
    :: else ->
        seen = head;
        mpsc_flush(ok);
        if
        :: !ok -> (head != seen)
        :: else -> skip
        fi
    od
}

active proctype consumer() {
    byte next[P];
    byte h, i, max, w, total = 0;
    do
    :: total == P * M -> break
    :: else ->
        if
        :: max = 1
        :: max = BATCH
        fi;
        h = head;
        i = 0;
        do
        :: i < max ->                                 /* never reads tail */
            w = slot[(h + i) % SIZE];
            if
#ifdef BUG_SKIP_HOLE
            :: w == 0 && h + i != tail -> i++         /* reserved: step over the hole */
            :: w == 0 && h + i == tail -> break       /* nothing reserved there */
#else
            :: w == 0 -> break                        /* a hole: keep order */
#endif
            :: else ->
                assert(w % 10 == next[w / 10] + 1);   /* its producer's next */
                next[w / 10]++;
                slot[(h + i) % SIZE] = 0;
                i++
            fi
        :: else -> break
        od;
        if
        :: i > 0 -> head = h + i; total = total + i
        :: else -> (slot[h % SIZE] != 0)              /* empty, or a hole: wait */
        fi
    od
}

init {
    atomic { run producer(0); run producer(1) }
}
