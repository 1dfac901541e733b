/* zmalloc.c — allocation that never returns NULL (step 0). See zmalloc.h. */
#include "zmalloc.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relaxed: a statistic, read only by INFO; it publishes no other memory. */
static _Atomic size_t used_memory;

static void oom(size_t size) {
    fprintf(stderr, "soloist: out of memory allocating %zu bytes\n", size);
    abort();
}

void *zmalloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (!p) oom(size);
    atomic_fetch_add_explicit(&used_memory, malloc_usable_size(p), memory_order_relaxed);
    return p;
}

void *zcalloc(size_t size) {
    void *p = calloc(1, size ? size : 1);
    if (!p) oom(size);
    atomic_fetch_add_explicit(&used_memory, malloc_usable_size(p), memory_order_relaxed);
    return p;
}

void *zrealloc(void *ptr, size_t size) {
    size_t old = ptr ? malloc_usable_size(ptr) : 0;
    void *p = realloc(ptr, size ? size : 1);
    if (!p) oom(size);
    atomic_fetch_add_explicit(&used_memory, malloc_usable_size(p), memory_order_relaxed);
    atomic_fetch_sub_explicit(&used_memory, old, memory_order_relaxed);
    return p;
}

void zfree(void *ptr) {
    if (!ptr) return;
    atomic_fetch_sub_explicit(&used_memory, malloc_usable_size(ptr), memory_order_relaxed);
    free(ptr);
}

char *zstrdup(const char *s) { return zstrndup(s, strlen(s)); }

char *zstrndup(const char *s, size_t n) {
    char *p = zmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

size_t zmalloc_used_memory(void) { return atomic_load_explicit(&used_memory, memory_order_relaxed); }
