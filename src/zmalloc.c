/* zmalloc.c — allocation that never returns NULL (step 0). See zmalloc.h. */
#include "zmalloc.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* used_memory is counted per thread, as Valkey's zmalloc does: each
 * thread adds to its own slot with a plain relaxed load and store (one
 * writer per slot, so no read-modify-write and no locked instruction on
 * the allocation path), and INFO sums the slots. A slot may go negative:
 * a thread can free what another allocated (FREE_OBJ, step 4). Relaxed
 * is enough because the counter publishes no other memory. Threads past
 * ZMALLOC_SLOTS share slots with an atomic add instead. */
#define ZMALLOC_SLOTS 64
static _Atomic long long used_by_slot[ZMALLOC_SLOTS];
static _Atomic int next_slot;
static _Thread_local int my_slot = -1;

static void count(long long delta) {
    if (my_slot < 0) my_slot = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);
    if (my_slot < ZMALLOC_SLOTS) {
        _Atomic long long *slot = &used_by_slot[my_slot];
        atomic_store_explicit(slot, atomic_load_explicit(slot, memory_order_relaxed) + delta, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&used_by_slot[my_slot % ZMALLOC_SLOTS], delta, memory_order_relaxed);
    }
}

static void oom(size_t size) {
    fprintf(stderr, "soloist: out of memory allocating %zu bytes\n", size);
    abort();
}

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
    count((long long)malloc_usable_size(p));
    count(-(long long)old);
    return p;
}

void zfree(void *ptr) {
    if (!ptr) return;
    count(-(long long)malloc_usable_size(ptr));
    free(ptr);
}

char *zstrdup(const char *s) { return zstrndup(s, strlen(s)); }

char *zstrndup(const char *s, size_t n) {
    char *p = zmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

size_t zmalloc_used_memory(void) {
    long long sum = 0;
    for (int i = 0; i < ZMALLOC_SLOTS; i++) sum += atomic_load_explicit(&used_by_slot[i], memory_order_relaxed);
    return sum > 0 ? (size_t)sum : 0;
}
