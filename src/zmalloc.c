/* zmalloc.c — allocation that never returns NULL, and used memory counted
 * per thread (step 0, plumbing layer). See zmalloc.h.
 *
 * THE COUNT
 *
 * INFO's used_memory is a sum of per-thread counts, as in Valkey's
 * zmalloc, so that an allocation costs no locked instruction:
 *
 *   - A thread claims a slot on its first allocation and owns it until it
 *     exits. Only the owner writes its slot, so it adds with a plain
 *     relaxed load and store (no read-modify-write, no lock prefix). A
 *     slot may go negative: a thread can free what another allocated.
 *   - A thread that finds every slot taken counts into `used_shared` with
 *     an atomic add instead. Nobody load/stores that counter, so no update
 *     is ever lost, however many threads there are; only those threads pay
 *     for the locked instruction.
 *   - When a thread exits, its slot's count moves into `used_shared` (one
 *     atomic add) and the slot goes back on the free list, so threads that
 *     come and go (CONFIG SET io-threads) do not use up the slots. The
 *     list's mutex is taken only at a thread's first allocation and at
 *     its exit; it also hands the slot, zeroed, to its next owner.
 *
 * The sum is exact whenever no thread is between an allocation and its
 * count, or exiting; a read made while threads allocate (INFO) sees some
 * of their updates and not others, which is all a statistic needs. Relaxed order
 * is enough throughout: the counts publish no other memory.
 *
 * ZMALLOC_THREAD_SLOTS covers every thread soloist starts (the main thread
 * and up to CONFIG_IO_THREADS_MAX I/O threads) and every worker of the load
 * generator (up to 256), which links this file too; past that, counts stay
 * exact and only get slower. Each slot has its own cache line, so owners
 * on different cores never write the same line.
 *
 * THE HEAP'S TOP
 *
 * glibc gives the top of its heap back to the kernel once more than
 * M_TRIM_THRESHOLD bytes are free there (128 KB at start), and serves a
 * block of M_MMAP_THRESHOLD or more (128 KB) with a mapping of its own,
 * unmapped when it is freed. Memory given back costs a page fault per
 * 4 KB when it is used again. A server's replies come and go in bursts:
 * 20 clients pipelining 16 range replies of a thousand members free a few
 * megabytes of reply blocks at once, the heap shrinks, the next burst
 * grows it again, and bench/zset_ranges.py counted the faults. glibc
 * raises both thresholds by itself when a mapped block is freed, to that
 * block's size, up to 32 MB for the mapping threshold and twice that for
 * the trim; a server whose blocks are all small never teaches it.
 * zmalloc_tune_heap sets them where that rule ends: blocks under 32 MB
 * come from the heap, and up to 64 MB may stay free at its top. That is
 * memory the process keeps, as jemalloc (Valkey's allocator) keeps dirty
 * pages until its decay returns them; INFO's used_memory does not count
 * it.
 */
#include "zmalloc.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct zslot {
    _Alignas(64) _Atomic long long used;
} zslot;

static zslot slots[ZMALLOC_THREAD_SLOTS];
static _Atomic long long used_shared; /* exited threads, and threads without a slot */

/* The free list: slots [next_unused, N) were never used; free_slots[0,
 * nfree) were released by threads that exited. Under slots_lock. */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static int free_slots[ZMALLOC_THREAD_SLOTS];
static int nfree, next_unused;

static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t slot_key; /* its destructor releases the slot at thread exit */

#define SLOT_UNCLAIMED (-1)
#define SLOT_NONE (-2) /* every slot was taken: count into used_shared */
static _Thread_local int my_slot = SLOT_UNCLAIMED;

static void release_slot(void *arg) {
    int i = (int)(intptr_t)arg - 1;
    _Atomic long long *slot = &slots[i].used;
    atomic_fetch_add_explicit(&used_shared, atomic_load_explicit(slot, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(slot, 0, memory_order_relaxed);
    pthread_mutex_lock(&slots_lock);
    free_slots[nfree++] = i;
    pthread_mutex_unlock(&slots_lock);
    /* A destructor of another key may still allocate: it claims again. */
    my_slot = SLOT_UNCLAIMED;
}

static void make_slot_key(void) {
    if (pthread_key_create(&slot_key, release_slot) != 0) abort();
}

static int claim_slot(void) {
    pthread_once(&slot_key_once, make_slot_key);
    pthread_mutex_lock(&slots_lock);
    int i = nfree ? free_slots[--nfree] : next_unused < ZMALLOC_THREAD_SLOTS ? next_unused++ : SLOT_NONE;
    pthread_mutex_unlock(&slots_lock);
    if (i != SLOT_NONE) pthread_setspecific(slot_key, (void *)(intptr_t)(i + 1));
    return i;
}

static void count(long long delta) {
    if (my_slot == SLOT_UNCLAIMED) my_slot = claim_slot();
    if (my_slot >= 0) {
        _Atomic long long *slot = &slots[my_slot].used;
        atomic_store_explicit(slot, atomic_load_explicit(slot, memory_order_relaxed) + delta, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&used_shared, delta, memory_order_relaxed);
    }
}

static void oom(size_t size) {
    fprintf(stderr, "soloist: out of memory allocating %zu bytes\n", size);
    abort();
}

/*@ zmalloc-count */
void *zmalloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (!p) oom(size);
    count((long long)malloc_usable_size(p));
    return p;
}

void *zcalloc(size_t size) {
    void *p = calloc(1, size ? size : 1);
    if (!p) oom(size);
    count((long long)malloc_usable_size(p));
    return p;
}

void *zrealloc(void *ptr, size_t size) {
    size_t old = ptr ? malloc_usable_size(ptr) : 0;
    void *p = realloc(ptr, size ? size : 1);
    if (!p) oom(size);
    count((long long)malloc_usable_size(p) - (long long)old);
    return p;
}

void zfree(void *ptr) {
    if (!ptr) return;
    count(-(long long)malloc_usable_size(ptr));
    free(ptr);
}
/*@ end */

char *zstrdup(const char *s) { return zstrndup(s, strlen(s)); }

char *zstrndup(const char *s, size_t n) {
    char *p = zmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void zmalloc_tune_heap(void) {
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
}

size_t zmalloc_used_memory(void) {
    long long sum = atomic_load_explicit(&used_shared, memory_order_relaxed);
    for (int i = 0; i < ZMALLOC_THREAD_SLOTS; i++) sum += atomic_load_explicit(&slots[i].used, memory_order_relaxed);
    return sum > 0 ? (size_t)sum : 0;
}
