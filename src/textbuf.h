/* textbuf.h — a string that grows as it is printed into.
 *
 * Step 0 (plumbing layer). Owns: the bytes of one growing string, taken from
 * zmalloc (so INFO's memory counts them). Whichever thread owns the
 * buffer may call; nothing is shared. INFO builds its reply in one, and
 * the trace export its JSON. The caller frees `p` with zfree.
 * Valkey: sdscatprintf on an sds, src/sds.c.
 */
#ifndef SOLOIST_TEXTBUF_H
#define SOLOIST_TEXTBUF_H

#include <stddef.h>

typedef struct textbuf {
    char *p; /* NUL-terminated once anything is printed; NULL before */
    size_t len, cap;
} textbuf;

/* Appends printf's output, growing the buffer (at least doubling) until
 * it fits. */
void textbuf_printf(textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
