/* reply_block.h — a reply block's bytes as iovecs.
 *
 * Step 7 (worker-io layer); reply_block.c says who may call it. A
 * block's release drops a count on its value, which only main may do, so
 * it is main's: reply_block_free in reply.h.
 * Valkey: src/networking.c writevToClient.
 */
#ifndef SOLOIST_REPLY_BLOCK_H
#define SOLOIST_REPLY_BLOCK_H

#include <stddef.h>
#include <sys/uio.h>

#include "client.h"

/* The iovecs for the output bytes [from, to) of one chunk of a client's
 * pending output: buf (b == NULL) or block b. from and to count from the
 * chunk's first byte: for buf, output byte i is buf[i], so the bytes are
 * buf + from up to buf + to; for a plain block, b->buf the same way.
 * from < to (the caller never asks for an empty range). At most room
 * iovecs. Returns how many, or 0 when they do not fit. Any thread that
 * may read the chunk. */
int reply_block_iov(const char *buf, const reply_block *b, size_t from, size_t to, struct iovec *iov, int room);

#endif
