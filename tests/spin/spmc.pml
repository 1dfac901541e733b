/* spmc.pml — the protocol of src/queue_spmc.c, checked by Spin.
 *
 * One producer sends items 1..N through a ring of SIZE cells; C consumers
 * claim them with a compare-and-swap on head and release each cell by
 * moving its sequence number a lap ahead. Spin explores every
 * interleaving of their steps (one load, store or compare-and-swap of a
 * shared field each, as in the C code).
 *
 * Checked: every item is taken exactly once, each consumer sees its items
 * in the producer's order, and no thread can wait forever (a wait blocks
 * until a field it read changes; one that could last forever is an
 * invalid end state). As in every model here, interleavings are
 * sequentially consistent; the memory orders are ThreadSanitizer's to
 * check.
 *
 * Mutations Spin must catch: -DBUG_NO_CAS makes the claim a load and a
 * separate store of head (an item taken twice); -DBUG_HEAD_FOR_ROOM lets
 * the producer judge room by head instead of the cell's sequence number,
 * so it may overwrite a cell a consumer has claimed and not yet read.
 */
#define SIZE 2
#define N 5
#define C 3

byte seq[SIZE];
byte item[SIZE];
byte head;          /* shared by the consumers */
byte taken[N + 1];  /* taken[k]: how many consumers got item k */
byte finished;      /* items fully taken, to let consumers stop */

init {
    byte i;
    for (i : 0 .. SIZE - 1) { seq[i] = i }
    atomic {
        run producer();
        for (i : 1 .. C) { run consumer() }
    }
}

proctype producer() {
    byte tail = 0, k = 1;
    do
    :: k > N -> break
    :: else ->
        /* spmc_enqueue: the cell must be empty for this lap */
        if
#ifdef BUG_HEAD_FOR_ROOM
        :: tail - head < SIZE ->           /* room by the count alone */
#else
        :: seq[tail % SIZE] == tail ->
#endif
            item[tail % SIZE] = k;
            seq[tail % SIZE] = tail + 1;   /* publish */
            tail++;
            k++
        :: else ->
#ifdef BUG_HEAD_FOR_ROOM
            (tail - head < SIZE)
#else
            (seq[tail % SIZE] == tail)     /* full: wait for the release */
#endif
        fi
    od
}

proctype consumer() {
    byte h, s, got, last = 0;
    do
    :: finished == N -> break
    :: else ->
        /* spmc_dequeue */
        h = head;
retry:
        s = seq[h % SIZE];
        if
        :: s == h + 1 ->
#ifdef BUG_NO_CAS
            if
            :: head == h -> skip
            :: else -> h = head; goto retry
            fi;
            head = h + 1;
#else
            atomic {   /* compare-and-swap */
                if
                :: head == h -> head = h + 1
                :: else -> h = head; goto retry
                fi
            }
#endif
            got = item[h % SIZE];
            seq[h % SIZE] = h + SIZE;   /* release the cell */
            assert(got > last);         /* this consumer's items, in order */
            last = got;
            taken[got]++;
            assert(taken[got] == 1);    /* nobody took it before */
            finished++
        :: s > h + 1 ->
            h = head; goto retry        /* another consumer was faster */
        :: s < h + 1 ->
            /* empty: wait until the cell or head moves, or all is done */
            (seq[h % SIZE] != s || head != h || finished == N)
        fi
    od
}
