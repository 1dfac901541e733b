/* reply_block.h — a reply block's bytes as iovecs, and its release.
 *
 * Step 7 (worker I/O layer); reply_block.c says who may call what.
 * Valkey: src/networking.c writevToClient, releaseBufReferences.
 */
#ifndef SOLOIST_REPLY_BLOCK_H
#define SOLOIST_REPLY_BLOCK_H

#include <stddef.h>
#include <sys/uio.h>

#include "client.h"

/* The iovecs for the output bytes [from, to) of one chunk of a client's
 * pending output: buf (b == NULL, its bytes at buf) or block b; at most
 * room of them. Returns how many, or 0 when they do not fit. Any thread
 * that may read the chunk. */
int reply_block_iov(const char *buf, const reply_block *b, size_t from, size_t to, struct iovec *iov, int room);

/* Frees a block no write job can be reading (fully written, or its
 * client being freed), dropping a reference block's count on its value.
 * Main only. */
void reply_block_free(reply_block *b);

#endif
