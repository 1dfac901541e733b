/* reply_block.c — a reply block's bytes as iovecs.
 *
 * Step 7 (worker-io layer). Owns the layout of one chunk of a client's
 * pending output — buf, a plain block, or a reference block (client.h:
 * a "$<len>\r\n" header and a CRLF of its own around a stored value's
 * bytes) — as the iovecs writev sends, from any offset a partial write
 * left. reply.c's essay ("Large replies by reference") gives the rules
 * that make a reference safe; the freeing of a block, which drops a
 * reference block's count, is main's and lives there (reply_block_free).
 * Threads: whichever thread writes the client (a worker, over the output
 * below the watermark, or main). It reads the block and the value's
 * bytes and writes nothing but the caller's iovecs.
 * Valkey: src/networking.c writevToClient (the three iovecs of a
 * bulkStrRef).
 */
#include "reply_block.h"

/*@ block-iov */
int reply_block_iov(const char *buf, const reply_block *b, size_t from, size_t to, struct iovec *iov, int room) {
    /*@ exercise: ref-iov */
    if (!b || !b->ref) { /* buf or a plain block: one span */
        if (room < 1) return 0;
        iov[0].iov_base = (char *)(b ? b->buf : buf) + from;
        iov[0].iov_len = to - from;
        return 1;
    }
    /* A reference block: its header, the value's own bytes, its CRLF.
     * The value's length comes from the block, as main appended it. */
    size_t h = b->hdr_len, v = b->used - h - 2;
    const struct {
        const char *base;
        size_t start, end;
    } seg[3] = {{b->buf, 0, h}, {b->ref->ptr, h, h + v}, {b->buf + h, h + v, h + v + 2}};
    int n = 0;
    for (int i = 0; i < 3; i++) {
        size_t s = from > seg[i].start ? from : seg[i].start;
        size_t e = to < seg[i].end ? to : seg[i].end;
        if (s >= e) continue;
        if (n == room) return 0;
        iov[n].iov_base = (char *)seg[i].base + (s - seg[i].start);
        iov[n++].iov_len = e - s;
    }
    return n;
    /*@ end */
}
/*@ end */
