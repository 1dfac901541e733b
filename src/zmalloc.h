/* zmalloc.h — allocation that never returns NULL.
 *
 * Step 0 (plumbing layer). Owns: the out-of-memory policy and the count of
 * used memory. Like Valkey's zmalloc, an allocation failure prints and
 * aborts, so callers do not carry NULL checks that could never be tested.
 * Any thread may call anything here.
 * Valkey: src/zmalloc.c (zmalloc, zrealloc, zfree, used_memory).
 * soloist counts used memory in one slot per thread (see zmalloc.c) so
 * INFO's used_memory is exact without a locked instruction on every
 * allocation; the counter orders nothing — it is a statistic read by INFO
 * alone.
 */
#ifndef SOLOIST_ZMALLOC_H
#define SOLOIST_ZMALLOC_H
#include <stddef.h>

/* Threads that can each own a counting slot at once (zmalloc.c): the main
 * thread, CONFIG_IO_THREADS_MAX I/O threads and the load generator's 256
 * workers fit; any more still count exactly, through one shared atomic. */
#define ZMALLOC_THREAD_SLOTS 320

void *zmalloc(size_t size);
void *zcalloc(size_t size);
void *zrealloc(void *ptr, size_t size);
void zfree(void *ptr);
char *zstrdup(const char *s);
char *zstrndup(const char *s, size_t n);
/* Bytes currently allocated through this module, as the allocator's
 * usable sizes (as Valkey reports), by every thread. Exact when no thread
 * is allocating; any thread may call it. */
size_t zmalloc_used_memory(void);

/* Sets glibc's heap thresholds where its own adaptive rule would end up
 * for a server that frees large blocks (zmalloc.c, "The heap's top").
 * The server calls it once, before its threads start. */
void zmalloc_tune_heap(void);

#endif
