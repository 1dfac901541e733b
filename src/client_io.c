/* client_io.c — reading, parsing and writing one client, on any thread.
 *
 * Step 4 (worker-io layer); step 5 adds the watermark, step 7 replies
 * by reference and the per-turn limit. client_io.h says
 * what it owns and who may call it; networking.c's essay gives the rules
 * of the query buffer and of the output (buf, sentlen, the block list).
 * Valkey: the functions client_io.h names.
 *
 * WHY A SEAM
 *
 * Step 0's read handler read the socket, counted statistics, checked a
 * limit from the configuration, parsed, ran the commands and sometimes
 * freed the client, all in one function; its write loop did the same
 * with writev. Only some of that may move to another thread: the system
 * call and the parsing touch nothing but the client, while statistics,
 * the configuration, the client list, the event loop and the commands
 * belong to the main thread. So each handler is cut in two. This file is
 * the half that touches only the client; networking.c runs it, inline on
 * main or as a job on a worker, and then does the rest on main with what
 * the job reported. Every value the half needs from main's world travels
 * in the client (io_qb_limit, io_proto_max_bulk_len, the watermark), set
 * by main before the hand-off; every outcome travels back in it.
 *
 * THE WATERMARK (step 5)
 *
 * A write job may run while main appends more replies to the same client
 * (main runs the client's next commands when its next read completes).
 * The worker must then read only bytes that existed when main handed it
 * the client: those were written before main's enqueue, whose release
 * store the worker's dequeue acquires, so they are visible to it; bytes
 * appended later have no such edge and may be half-written in the
 * worker's view. Main therefore records the end of the pending output in
 * the client first (client_io_mark_write): the last block and its used
 * count, or buf's bufpos when there is no block. The worker stops there
 * and never reads the fields main keeps changing: bufpos while main
 * appends to buf, the last block's used and next, reply_tail. Because
 * reply.c never appends to buf once a block exists, buf's pending bytes
 * are frozen whenever the mark is a block. Nothing is freed by the
 * worker: main takes the written bytes off when the job completes.
 *
 * REFERENCES AND THE LIMIT PER TURN (step 7)
 *
 * A reference block's output is its header, then a stored value's own bytes,
 * then CRLF (client.h); reply_block_iov (reply_block.c) turns any byte range
 * of it into up to three iovecs, so writev sends the value straight from the
 * keyspace's allocation and a partial write resumes mid-value from sentlen
 * like any other. The worker may read the value because main raised its count
 * before the hand-off and drops it only after the job is back, and because a
 * string whose count is above one is never changed in place
 * (db_unshare_string copies it first). A write on main sends at most
 * io_write_max bytes (NET_MAX_WRITES_PER_EVENT, or io-write-alone-max while
 * nobody waits, or no limit when all that is pending is within
 * NET_WRITE_TAIL_MAX of the cap: networking.c), clipping even a single 10 MB reference, so one
 * large reply cannot hold main up while other clients wait; a worker has no
 * such limit (io_write_max 0) and writes until the socket is full.
 */
#include "client_io.h"
#include "client_io_test.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "anet.h"
#include "io_threads.h"
#include "reply_block.h"
#include "resp.h"
#include "trace.h"
#include "util.h"
#include "zmalloc.h"

/* The shared query buffer of the thread running this code (see "The
 * query buffer" in networking.c); allocated by the first read on the
 * thread. */
static _Thread_local char *thread_shared_qb;

bool client_io_borrows_shared_qb(const client *c) { return c->querybuf && c->querybuf == thread_shared_qb; }

void client_io_thread_exit(void) {
    zfree(thread_shared_qb);
    thread_shared_qb = NULL;
}

void client_io_settle_query_buffer(client *c) {
    if (c->querybuf && c->querybuf == thread_shared_qb) {
        if (c->qb_len) {
            c->qb_cap = c->qb_len + CLIENT_IOBUF_LEN;
            c->querybuf = zmalloc(c->qb_cap);
            memcpy(c->querybuf, thread_shared_qb, c->qb_len);
        } else {
            c->querybuf = NULL;
            c->qb_cap = 0;
        }
    } else if (c->querybuf && c->qb_len == 0) {
        zfree(c->querybuf);
        c->querybuf = NULL;
        c->qb_cap = 0;
    }
}

/* "ip:port" of one end of the socket, as CLIENT LIST shows it. */
static void format_addr(int fd, char *buf, size_t len, int peer) {
    char ip[46];
    int port = 0;
    if (anet_fd_to_string(fd, ip, sizeof(ip), &port, peer) == -1) {
        snprintf(buf, len, "?:0");
        return;
    }
    snprintf(buf, len, strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip, port);
}

/*@ accept-io */
void client_io_accept(client *c) {
    char err[ANET_ERR_LEN];
    anet_enable_tcp_nodelay(err, c->fd);
    if (c->io_keepalive) anet_keepalive(err, c->fd, c->io_keepalive);
    format_addr(c->fd, c->addr, sizeof(c->addr), 1);
    format_addr(c->fd, c->laddr, sizeof(c->laddr), 0);
}
/*@ end */

static void cmdq_push(client *c, int argc, obj **argv) {
    if (c->cmdq_pos == c->cmdq_len) c->cmdq_pos = c->cmdq_len = 0;
    if (c->cmdq_len == c->cmdq_cap) {
        c->cmdq_cap = c->cmdq_cap ? c->cmdq_cap * 2 : 8;
        c->cmdq = zrealloc(c->cmdq, (size_t)c->cmdq_cap * sizeof(*c->cmdq));
    }
    c->cmdq[c->cmdq_len] = (parsed_cmd){argc, argv, NULL}; /* cmd: commands_lookup_queued */
    c->cmdq_len++;
}

/*@ parse-all */
int client_io_parse(client *c, const char **err) {
    resp_limits lim = {.proto_max_bulk_len = c->io_proto_max_bulk_len, .authenticated = c->authenticated};
    int rc = RESP_OK;
    while (c->qb_pos < c->qb_len) {
        size_t consumed = 0;
        int argc = 0;
        obj **argv = NULL;
        rc = resp_parse(&c->parser, c->querybuf + c->qb_pos, c->qb_len - c->qb_pos, &lim, &consumed, &argc, &argv, err);
        c->qb_pos += consumed;
        if (rc != RESP_OK) break;
        cmdq_push(c, argc, argv);
        /* Until AUTH runs, the limits for unauthenticated clients apply to
         * each command, so parse no further than one command ahead. */
        if (!c->authenticated) break;
    }
    if (rc == RESP_ERROR) return -1;
    /* Keep the unparsed tail at the front of the buffer. */
    if (c->qb_pos) {
        memmove(c->querybuf, c->querybuf + c->qb_pos, c->qb_len - c->qb_pos);
        c->qb_len -= c->qb_pos;
        c->qb_pos = 0;
    }
    return 0;
}
/*@ end */

/* Bytes of a big bulk argument the parser is already holding (it fills
 * the argument's object in place, so they are no longer in querybuf but
 * still count against client-query-buffer-limit). */
static size_t parser_buffered(const resp_parser *p) { return p->big ? p->big_filled : 0; }

/*@ read-io */
void client_io_read(client *c) {
    TRACE(io_thread_id(), TRACE_READ_BEGIN, c->id, c->cmdq_len - c->cmdq_pos, 0);
    c->io_read_flags = 0;
    c->io_parse_err = NULL;
    /* The payload of a big bulk argument (RESP_MBULK_BIG_ARG or more) is
     * read straight into its object once no unparsed byte waits in front
     * of it: no copy, no buffer. Otherwise read more at once when a bulk
     * longer than one read is on its way, into a private buffer sized for
     * it; anything else reads into the client's partial request, or else
     * into the shared buffer. */
    size_t room = 0, readlen = CLIENT_IOBUF_LEN;
    char *window = c->qb_len == 0 ? resp_parser_bulk_window(&c->parser, &room) : NULL;
    size_t pending = resp_parser_pending_bulk(&c->parser);
    if (pending > readlen && pending < 64 * 1024 * 1024) readlen = pending;
    if (window) {
        readlen = room;
    } else if (!c->querybuf && readlen == CLIENT_IOBUF_LEN) {
        if (!thread_shared_qb) thread_shared_qb = zmalloc(CLIENT_IOBUF_LEN);
        c->querybuf = thread_shared_qb;
        c->qb_cap = CLIENT_IOBUF_LEN;
    } else if (c->qb_cap - c->qb_len < readlen) {
        c->qb_cap = c->qb_len + readlen;
        c->querybuf = zrealloc(c->querybuf, c->qb_cap);
    }
    ssize_t n = read(c->fd, window ? window : c->querybuf + c->qb_len, readlen);
    c->io_nread = n;
    c->io_read_errno = n == -1 ? errno : 0;
    if (n > 0) {
        if (window)
            resp_parser_bulk_advance(&c->parser, (size_t)n);
        else
            c->qb_len += (size_t)n;
        if (c->qb_len > c->querybuf_peak) c->querybuf_peak = c->qb_len;
        /* Valkey: client-query-buffer-limit (main put the limit for this
         * client in io_qb_limit). Past it, nothing is parsed: main closes. */
        if (c->qb_len + parser_buffered(&c->parser) > c->io_qb_limit) {
            c->io_read_flags |= CLIENT_IO_READ_QB_LIMIT;
        } else if (client_io_parse(c, &c->io_parse_err) == -1) {
            c->io_read_flags |= CLIENT_IO_READ_PROTO_ERROR;
            c->io_parse_err_len = resp_parser_error_len(&c->parser);
            c->qb_len = c->qb_pos = 0; /* nothing after a protocol error is read */
        }
        TRACE(io_thread_id(), TRACE_PARSED, c->id, c->cmdq_len - c->cmdq_pos, c->qb_len - c->qb_pos);
    }
    client_io_settle_query_buffer(c);
    TRACE(io_thread_id(), TRACE_READ_END, c->id, n, c->cmdq_len - c->cmdq_pos);
}
/*@ end */

/* Tests only (client_io.h): NULL in the server, which never sets it. */
void (*client_io_write_hook)(const client *c);

/*@ write-mark */
void client_io_mark_write(client *c) {
    TRACE(io_thread_id(), TRACE_WRITE_MARK, c->id, 0, 0);
    /*@ exercise: mark */
    c->io_last_reply_block = c->reply_tail;
    c->io_last_bufpos = c->reply_tail ? c->reply_tail->used : c->bufpos;
    /*@ end */
    c->io_write_max = NET_MAX_WRITES_PER_EVENT;
}
/*@ end */

/*@ write-io */
/* A position in the pending output: in buf (b == NULL) or in block b. */
typedef struct out_cursor {
    reply_block *b;
    size_t off;
    bool done;
} out_cursor;

/* The end of the chunk under the cursor, by the watermark's rules. */
static size_t chunk_end(const client *c, const out_cursor *cur) {
    /*@ exercise: chunk-end */
    if (cur->b == NULL) return c->io_last_reply_block ? c->bufpos : c->io_last_bufpos;
    return cur->b == c->io_last_reply_block ? c->io_last_bufpos : cur->b->used;
    /*@ end */
}

/* Moves the cursor to the next chunk; past the watermark's chunk: done. */
static void cursor_next(const client *c, out_cursor *cur) {
    /*@ exercise: cursor-next */
    cur->off = 0;
    if (cur->b == NULL) {
        if (c->io_last_reply_block)
            cur->b = c->reply_head;
        else
            cur->done = true;
    } else if (cur->b == c->io_last_reply_block) {
        cur->done = true;
    } else {
        cur->b = cur->b->next;
    }
    /*@ end */
}

/* Fills iov with the chunks from cur up to the mark; with a limit (max,
 * total so far), offers no more than is left of it, so one turn on main
 * sends at most max bytes however large a single reference block is.
 * Returns the bytes offered; *iovcnt is 0 when nothing is left before the
 * mark. */
static size_t gather(const client *c, out_cursor cur, size_t total, size_t max, struct iovec *iov, int *iovcnt) {
    size_t offered = 0;
    *iovcnt = 0;
    for (; !cur.done; cursor_next(c, &cur)) {
        size_t end = chunk_end(c, &cur);
        if (max && end - cur.off > max - total - offered) end = cur.off + (max - total - offered);
        if (end > cur.off) {
            int k = reply_block_iov(c->buf, cur.b, cur.off, end, iov + *iovcnt, NET_MAX_IOV_PER_WRITE - *iovcnt);
            if (k == 0) break; /* out of iovecs: the rest next call */
            *iovcnt += k;
            offered += end - cur.off;
        }
        if (max && total + offered >= max) break;
    }
    return offered;
}

/* Moves the cursor over the n bytes the kernel took. */
static void advance(client *c, out_cursor *cur, size_t n) {
    /*@ exercise: write-advance */
    size_t left = n;
    while (left) {
        size_t avail = chunk_end(c, cur) - cur->off;
        if (left < avail) {
            cur->off += left;
            left = 0;
        } else {
            left -= avail;
            cursor_next(c, cur);
        }
    }
    /*@ end */
}

void client_io_write(client *c) {
    if (client_io_write_hook) client_io_write_hook(c);
    TRACE(io_thread_id(), TRACE_WRITE_BEGIN, c->id, 0, 0);
    struct iovec iov[NET_MAX_IOV_PER_WRITE];
    out_cursor cur = {.b = NULL, .off = c->sentlen, .done = false};
    /* bufpos == 0 means buf is done and sentlen counts into the first
     * block (networking.c's invariants). With no block marked, buf may
     * be growing under main, so bufpos is not read: the mark says it. */
    /*@ exercise: write-start */
    if (c->io_last_reply_block && c->bufpos == 0) cur.b = c->reply_head;
    /*@ end */
    size_t total = 0, max = c->io_write_max;
    c->io_write_flags = 0;
    c->io_write_calls = 0;
    c->io_write_errno = 0;
    while (!cur.done && (max == 0 || total < max)) {
        int iovcnt;
        size_t offered = gather(c, cur, total, max, iov, &iovcnt);
        if (iovcnt == 0) break; /* nothing left before the mark */
        ssize_t n = iovcnt == 1 ? write(c->fd, iov[0].iov_base, iov[0].iov_len) : writev(c->fd, iov, iovcnt);
        c->io_write_calls++;
        if (n <= 0) {
            if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
                c->io_write_flags |= CLIENT_IO_WRITE_SOCKET_FULL;
            } else {
                c->io_write_flags |= CLIENT_IO_WRITE_ERROR;
                c->io_write_errno = n == 0 ? EPIPE : errno;
            }
            break;
        }
        total += (size_t)n;
        advance(c, &cur, (size_t)n);
        if ((size_t)n < offered) { /* the send buffer is full */
            c->io_write_flags |= CLIENT_IO_WRITE_SOCKET_FULL;
            break;
        }
    }
    c->io_nwritten = total;
    TRACE(io_thread_id(), TRACE_WRITE_END, c->id, total, c->io_write_flags);
}
/*@ end */
