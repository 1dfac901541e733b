/* textbuf.c — a string that grows as it is printed into (step 0, plumbing
 * layer). See textbuf.h. */
#include "textbuf.h"

#include <stdarg.h>
#include <stdio.h>

#include "zmalloc.h"

void textbuf_printf(textbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        /* Too short (vsnprintf said how much it needs): grow and print
         * again; the args are walked anew each time. */
        b->cap = b->cap * 2 + (size_t)(n > 0 ? n : 0) + 256;
        b->p = zrealloc(b->p, b->cap);
    }
}
