/* reply_capture.h — what a fake client (fd -1) was sent, for unit tests.
 *
 * Step 0. A command under test appends its reply to the client's reply
 * buffer and block list (src/reply.c) and nothing writes it to a socket;
 * take_reply() returns those bytes as one zmalloc'd, NUL-terminated
 * string and empties the client's output, as a write would. The reply
 * buffer is allocated lazily, so c->buf may be NULL while bufpos is 0.
 */
#ifndef SOLOIST_TEST_REPLY_CAPTURE_H
#define SOLOIST_TEST_REPLY_CAPTURE_H

#include <string.h>

#include "client.h"
#include "zmalloc.h"

static inline char *take_reply(client *c) {
    size_t len = c->bufpos;
    for (reply_block *b = c->reply_head; b; b = b->next) len += b->used;
    char *out = zmalloc(len + 1);
    if (c->bufpos) memcpy(out, c->buf, c->bufpos);
    size_t off = c->bufpos;
    for (reply_block *b = c->reply_head, *next; b; b = next) {
        next = b->next;
        memcpy(out + off, b->buf, b->used);
        off += b->used;
        zfree(b);
    }
    out[len] = '\0';
    c->bufpos = 0;
    c->reply_head = c->reply_tail = NULL;
    c->reply_bytes = 0;
    c->reply_blocks = 0;
    return out;
}

#endif
