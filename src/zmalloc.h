/* zmalloc.h — allocation that never returns NULL.
 *
 * Step 0 (plumbing). Owns: nothing but the out-of-memory policy: like
 * Valkey's zmalloc, an allocation failure prints and aborts, so callers do
 * not carry NULL checks that could never be tested. Any thread may call.
 * Valkey: src/zmalloc.c (zmalloc, zrealloc, zfree, used_memory).
 * soloist counts used memory in one slot per thread (see zmalloc.c) so
 * INFO's used_memory means something without a locked instruction on
 * every allocation; the counter orders nothing — it is a statistic read
 * by INFO alone.
 */
#ifndef SOLOIST_ZMALLOC_H
#define SOLOIST_ZMALLOC_H
#include <stddef.h>

void *zmalloc(size_t size);
void *zcalloc(size_t size);
void *zrealloc(void *ptr, size_t size);
void zfree(void *ptr);
char *zstrdup(const char *s);
char *zstrndup(const char *s, size_t n);
/* Bytes currently allocated through this module (approximate: the
 * allocator's usable size, as Valkey reports). */
size_t zmalloc_used_memory(void);

#endif
