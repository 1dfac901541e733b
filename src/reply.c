/* reply.c — building replies in RESP2 or RESP3.
 *
 * Step 0 (commands layer); steps 5 and 7 build on it. Owns how reply
 * bytes are appended to a client (its reply buffer buf and the block list
 * after it), the encoding of every reply type for the protocol the client
 * chose with HELLO, and the bookkeeping of what is pending: the client's
 * place in the write pass's queue, client-output-buffer-limit, and the
 * freeing of a block. networking.c owns sending them; it sits above this
 * file in the layers, so nothing here calls it: a client over its limit
 * is only flagged (client_close_async, server.c) for before_sleep to free.
 * Threads: main only, while it owns the client (from step 4: while the
 * client's io state is idle).
 * Valkey: src/networking.c _addReplyToBuffer, _addReplyProtoToList,
 * addReplyDeferredLen, putClientInPendingWriteQueue,
 * checkClientOutputBufferLimits, releaseBufReferences; Redis 7
 * src/server.c clientsCronResizeOutputBuffer.
 *
 * WHERE REPLY BYTES GO
 *
 * Every reply ends in reply_proto(), which appends raw bytes: into buf
 * while the block list is empty and buf has room, and the rest into the
 * last block, then into new blocks of at least CLIENT_REPLY_CHUNK bytes.
 * Once a block exists nothing more goes into buf until all is written,
 * so the bytes leave in the order they were appended. What is pending is
 * buf[sentlen, bufpos) then the blocks; networking.c's essay gives the
 * invariants of sentlen and how a partial write advances them.
 *
 * THE REPLY BUFFER'S LIFE
 *
 * A client has no reply buffer until its first reply: a connection that
 * never speaks costs no reply memory. The first append allocates buf_size
 * bytes (CLIENT_REPLY_MIN, 1 KB, the first time). The cron then sizes it
 * to the client's recent need, as Redis 7 does (Redis pull request #9822):
 * buf_peak records the most bytes buf held; once per tick, a buffer whose
 * peak stayed under half its size shrinks to the peak (never below
 * CLIENT_REPLY_MIN), and one that filled up doubles (never above
 * CLIENT_REPLY_CHUNK); the peak restarts every REPLY_PEAK_WINDOW_MS. A
 * client that has nothing pending and has been quiet for
 * CLIENT_IDLE_RELEASE_MS gives the buffer back; buf_size remembers the
 * size for the next reply. The cron resizes or frees only an empty buffer
 * (bufpos == 0), so no pending byte ever moves.
 *
 * A deferred length (SCAN, KEYS) is an empty block reserved in the list
 * and filled when the count is known; it also forces what follows into
 * the list, so the order holds.
 *
 * LARGE REPLIES BY REFERENCE (step 7)
 *
 * A RAW string of REPLY_REF_MIN bytes or more (16 KB: below that one
 * copy into a block is cheaper than a reference's bookkeeping) is not
 * copied: reply_bulk appends a reference block (client.h) holding the
 * "$<len>\r\n" header and the CRLF, and a pointer to the value. Three
 * rules make that safe with a worker writing the block:
 *
 *   - main raises the value's count when it appends the block and drops
 *     it in reply_block_free (below), which runs only once no
 *     write job can be reading the block (fully written, or its client
 *     freed while idle); counts are touched by main alone, so they need
 *     no atomics;
 *   - a string whose count is above one is never changed in place:
 *     APPEND, SETRANGE and SETBIT write into a copy (db_unshare_string),
 *     so the referenced bytes stay as they were when the GET ran, even if
 *     the key is overwritten, deleted or flushed meanwhile;
 *   - the block counts the value's length in used, size and reply_bytes,
 *     so sentlen, the watermark and client-output-buffer-limit treat it
 *     like the copy it replaces, and nothing can be appended into it.
 *
 * reply_block.c lays a block's bytes out as iovecs for writev (up to three
 * for a reference block: header, the value's own bytes, CRLF), from any
 * offset a partial write left. reply-copy-avoidance no (soloist's switch, not
 * Valkey's) copies as before; INFO reply_bytes_copied counts the bulk bytes
 * that were copied.
 */
#include "reply.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "object.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

const char *const ERR_WRONGTYPE = "-WRONGTYPE Operation against a key holding the wrong kind of value";
const char *const ERR_NOT_INT = "value is not an integer or out of range";
const char *const ERR_NOT_FLOAT = "value is not a valid float";
const char *const ERR_SYNTAX = "syntax error";
const char *const ERR_OVERFLOW = "increment or decrement would overflow";

/* How long buf_peak collects before the cron starts a new window
 * (Redis 7's reply-buffer-peak-reset-time default). */
#define REPLY_PEAK_WINDOW_MS 5000

/* Room for any header line: a prefix, a long long's at most 20
 * characters and CRLF make 23 bytes. */
#define REPLY_HEADER_MAX 32

/* Writes one header line, prefix, decimal n, CRLF ("$5\r\n", "*3\r\n"),
 * at buf (REPLY_HEADER_MAX bytes); returns its length. Every header
 * comes from here: appended to the reply, copied into a reference block,
 * or written into a deferred length's placeholder. */
static inline size_t header_format(char *buf, char prefix, long long n) {
    buf[0] = prefix;
    size_t len;
    if (n >= 0 && n < 100) { /* most bulk and array lengths: no division loop */
        len = 1;
        if (n >= 10) buf[len++] = (char)('0' + n / 10);
        buf[len++] = (char)('0' + n % 10);
    } else {
        len = 1 + ll_to_str(buf + 1, n);
    }
    buf[len++] = '\r';
    buf[len++] = '\n';
    return len;
}

/*@ reply-append */
/* n bytes written into buf at bufpos are now part of the reply. */
static void buffer_took(client *c, size_t n) {
    c->bufpos += n;
    if (c->bufpos > c->buf_peak) c->buf_peak = c->bufpos;
}

/* Appends to buf while no block exists, allocating buf on first use;
 * returns the bytes taken. */
static size_t append_to_buffer(client *c, const char *s, size_t len) {
    if (c->reply_head) return 0; /* bytes after a block must follow it */
    if (!c->buf) {
        if (!c->buf_size) c->buf_size = CLIENT_REPLY_MIN;
        c->buf = zmalloc(c->buf_size);
    }
    size_t room = c->buf_size - c->bufpos;
    size_t n = len < room ? len : room;
    memcpy(c->buf + c->bufpos, s, n);
    buffer_took(c, n);
    return n;
}

/* Links block b after the last one and counts it against
 * client-output-buffer-limit (its capacity, b->size). */
static void link_block(client *c, reply_block *b) {
    if (c->reply_tail)
        c->reply_tail->next = b;
    else
        c->reply_head = b;
    c->reply_tail = b;
    c->reply_bytes += b->size;
    c->reply_blocks++;
}

/* A plain block with room for size bytes, empty and unlinked: every kind
 * of block starts here (a reference block then sets its ref, header and
 * output length). */
static reply_block *block_new(size_t size) {
    reply_block *b = zmalloc(sizeof(*b) + size);
    b->next = NULL;
    b->ref = NULL;
    b->hdr_len = 0;
    b->size = size;
    b->used = 0;
    return b;
}

static void append_to_list(client *c, const char *s, size_t len) {
    reply_block *tail = c->reply_tail;
    /* A full tail is not touched at all, not even by `used += 0`: a worker
     * may be reading a full reference block's used while main appends
     * after it (reply_block_iov), and a store of the same value is still a
     * race. */
    if (tail && tail->used < tail->size) {
        size_t room = tail->size - tail->used;
        size_t n = len < room ? len : room;
        memcpy(tail->buf + tail->used, s, n);
        tail->used += n;
        s += n;
        len -= n;
    }
    if (len) {
        reply_block *b = block_new(len < CLIENT_REPLY_CHUNK ? CLIENT_REPLY_CHUNK : len);
        memcpy(b->buf, s, len);
        b->used = len;
        link_block(c, b);
    }
}

void reply_proto(client *c, const char *s, size_t len) {
    if (c->flags & CLIENT_DROPS_REPLIES) return;
    client_queue_pending_write(c);
    c->reply_appended += len;
    size_t n = append_to_buffer(c, s, len);
    if (n < len) {
        append_to_list(c, s + n, len - n);
        client_check_output_limits(c);
    }
}
/*@ end */

/*@ reply-buffer-cron */
void reply_buffer_cron(client *c, long long now) {
    if (c->bufpos || c->reply_head) return; /* bytes pending: leave buf alone */
    if (c->buf && now - c->last_interaction >= CLIENT_IDLE_RELEASE_MS) {
        zfree(c->buf);
        c->buf = NULL;
        c->buf_peak = 0;
        return;
    }
    size_t size = c->buf_size ? c->buf_size : CLIENT_REPLY_MIN, want = size;
    if (c->buf_peak < size / 2 && size / 2 >= CLIENT_REPLY_MIN)
        want = c->buf_peak + 1 > CLIENT_REPLY_MIN ? c->buf_peak + 1 : CLIENT_REPLY_MIN;
    else if (c->buf_peak >= size && size < CLIENT_REPLY_CHUNK)
        want = size * 2 < CLIENT_REPLY_CHUNK ? size * 2 : CLIENT_REPLY_CHUNK;
    if (now - c->buf_peak_since >= REPLY_PEAK_WINDOW_MS) {
        c->buf_peak = 0;
        c->buf_peak_since = now;
    }
    if (want != size) {
        /* Empty, so nothing to copy: the next reply allocates the new size. */
        zfree(c->buf);
        c->buf = NULL;
        c->buf_size = want;
    }
}
/*@ end */

/* --------------------------------------------- the client's pending output */

/* What the write pass, the offload decision and the output limit ask of a
 * client's output. Main only: the write direction's fields are read here
 * only while no worker owns them (io_offload_write asks before the
 * hand-off; client_write_done after the result is back). */

int client_has_pending_replies(const client *c) {
    if (c->bufpos > c->sentlen) return 1;
    for (reply_block *b = c->reply_head; b; b = b->next)
        if (b->used) return 1;
    return 0;
}

size_t client_output_bytes(const client *c) { return c->reply_bytes; }

/* Joins c to the list before_sleep writes (LIFO, as Valkey's); the write
 * itself happens there. */
void client_queue_pending_write(client *c) {
    if (c->fd == -1 || (c->flags & CLIENT_PENDING_WRITE)) return;
    c->flags |= CLIENT_PENDING_WRITE;
    c->next_pending_write = server.clients_pending_write;
    server.clients_pending_write = c;
}

/*@ obuf-limit */
int client_check_output_limits(client *c) {
    /* Valkey's checkClientOutputBufferLimits for the "normal" class: the
     * hard limit closes at once; the soft limit only after it has been
     * exceeded continuously for soft_seconds. 0 disables a limit. */
    const obuf_limit *l = &server.obuf_normal;
    size_t used = client_output_bytes(c);
    int hard = l->hard_bytes && used >= (size_t)l->hard_bytes;
    int soft = l->soft_bytes && used >= (size_t)l->soft_bytes;
    if (soft) {
        long long now = util_mstime();
        if (!c->obuf_soft_limit_reached_time) {
            c->obuf_soft_limit_reached_time = now;
            soft = l->soft_seconds == 0;
        } else {
            soft = (now - c->obuf_soft_limit_reached_time) / 1000 >= l->soft_seconds;
        }
    } else {
        c->obuf_soft_limit_reached_time = 0;
    }
    if (!hard && !soft) return 0;
    if (c->flags & CLIENT_CLOSE_ASAP) return 1;
    server_log(LL_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
               (unsigned long long)c->id, c->addr);
    server.stat_client_outbuf_limit_disconnections++;
    client_close_async(c);
    return 1;
}
/*@ end */

static void reply_cstr(client *c, const char *s) { reply_proto(c, s, strlen(s)); }

void reply_ok(client *c) { reply_proto(c, "+OK\r\n", 5); }

void reply_status(client *c, const char *status) {
    reply_proto(c, "+", 1);
    reply_cstr(c, status);
    reply_proto(c, "\r\n", 2);
}

/* Valkey's addReplyErrorLength: an error reply may not contain CR or LF
 * (they would end the line early); they become spaces. */
void reply_error(client *c, const char *msg) { reply_error_len(c, msg, strlen(msg)); }

void reply_error_len(client *c, const char *msg, size_t len) {
    /* Valkey's rule (addReplyErrorLength): a text starting with '-' names
     * its own error code ("-WRONGTYPE ..."); any other text is an ERR.
     * soloist also accepts a text that already starts with "ERR ". */
    if (len && msg[0] == '-') {
        reply_proto(c, "-", 1);
        msg++;
        len--;
    } else if (len >= 4 && memcmp(msg, "ERR ", 4) == 0) {
        reply_proto(c, "-", 1);
    } else {
        reply_proto(c, "-ERR ", 5);
    }
    char tmp[512];
    while (len) {
        size_t n = len < sizeof(tmp) ? len : sizeof(tmp);
        for (size_t i = 0; i < n; i++) tmp[i] = (msg[i] == '\r' || msg[i] == '\n') ? ' ' : msg[i];
        reply_proto(c, tmp, n);
        msg += n;
        len -= n;
    }
    reply_proto(c, "\r\n", 2);
    server.stat_total_error_replies++;
}

void reply_error_format(client *c, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    reply_error(c, buf);
}

/* Appends one header line: prefix, decimal, CRLF. */
static void reply_header(client *c, char prefix, long long n) {
    char buf[REPLY_HEADER_MAX];
    reply_proto(c, buf, header_format(buf, prefix, n));
}

void reply_long_long(client *c, long long v) { reply_header(c, ':', v); }

/* A bulk whose header, bytes and CRLF all fit where the next reply bytes
 * go: written there at once, one bounds check for the three parts (a
 * range reply writes one of these per member). That place is buf while
 * no block is queued, else the last block, as append_to_list would fill
 * it (a reference block and a deferred length's empty placeholder have
 * no room, so they are never written here). 0: take the general path. */
static int bulk_to_buffer(client *c, const void *p, size_t len) {
    reply_block *tail = c->reply_tail;
    char *d;
    size_t room;
    if (c->reply_head) {
        d = tail->buf + tail->used;
        room = tail->size - tail->used;
    } else {
        if (!c->buf) return 0;
        d = c->buf + c->bufpos;
        room = c->buf_size - c->bufpos;
    }
    if (room < REPLY_HEADER_MAX + len + 2) return 0;
    client_queue_pending_write(c);
    size_t n = header_format(d, '$', (long long)len);
    memcpy(d + n, p, len);
    memcpy(d + n + len, "\r\n", 2);
    n += len + 2;
    c->reply_appended += n;
    if (c->reply_head) {
        tail->used += n;
        client_check_output_limits(c); /* as reply_proto does after the list */
    } else {
        buffer_took(c, n);
    }
    return 1;
}

void reply_bulk_buf(client *c, const void *p, size_t len) {
    if (c->flags & CLIENT_DROPS_REPLIES) return;
    server.stat_reply_bytes_copied += (long long)len;
    if (bulk_to_buffer(c, p, len)) return;
    reply_header(c, '$', (long long)len);
    reply_proto(c, p, len);
    reply_proto(c, "\r\n", 2);
}

/*@ reply-ref */
/* Step 7: whether o goes by reference. Only a RAW string (its bytes,
 * inline or in a block of their own, stay put while the count is raised)
 * of REPLY_REF_MIN bytes or more, to a client with a socket. */
static int reply_by_reference(const client *c, const obj *o) {
    return server.reply_copy_avoidance && c->fd != -1 && !(c->flags & CLIENT_DROPS_REPLIES) && o->type == OBJ_STRING &&
           o->encoding == OBJ_ENC_RAW && o->len >= REPLY_REF_MIN;
}

/* Appends a reference block for o: the header and the CRLF are copied
 * into it, the value's bytes are not. The block goes to the list even
 * when buf has room, so everything appended after it follows it. */
static void append_reference(client *c, obj *o) {
    char hdr[REPLY_HEADER_MAX];
    size_t hlen = header_format(hdr, '$', (long long)o->len);
    reply_block *b = block_new(hlen + 2);
    memcpy(b->buf, hdr, hlen);
    memcpy(b->buf + hlen, "\r\n", 2);
    b->ref = o;
    /*@ exercise: ref-take */
    obj_incr_ref(o); /* main's; dropped by reply_block_free once the block is written */
    /*@ end */
    b->hdr_len = (uint32_t)hlen;
    b->size = b->used = hlen + o->len + 2;
    c->reply_appended += b->used;
    link_block(c, b);
    server.stat_reply_refs++;
}

void reply_bulk(client *c, obj *o) {
    if (!reply_by_reference(c, o)) {
        reply_bulk_buf(c, o->ptr, o->len);
        return;
    }
    client_queue_pending_write(c);
    append_reference(c, o);
    client_check_output_limits(c);
}
/*@ end */

/* Frees a reply block (reply.h): the other half of append_reference's
 * count. */
/*@ block-release */
void reply_block_free(reply_block *b) {
    /*@ exercise: ref-release */
    if (b->ref) obj_decr_ref(b->ref); /* the count append_reference raised */
    zfree(b);
    /*@ end */
}
/*@ end */

void reply_bulk_cstr(client *c, const char *s) {
    if (!s)
        reply_null(c);
    else
        reply_bulk_buf(c, s, strlen(s));
}

void reply_bulk_ll(client *c, long long v) {
    char buf[32];
    size_t n = ll_to_str(buf, v);
    reply_bulk_buf(c, buf, n);
}

void reply_null(client *c) {
    if (c->resp == 3)
        reply_proto(c, "_\r\n", 3);
    else
        reply_proto(c, "$-1\r\n", 5);
}

void reply_null_array(client *c) {
    if (c->resp == 3)
        reply_proto(c, "_\r\n", 3);
    else
        reply_proto(c, "*-1\r\n", 5);
}

void reply_array_len(client *c, long n) { reply_header(c, '*', n); }
void reply_map_len(client *c, long n) { reply_header(c, c->resp == 3 ? '%' : '*', c->resp == 3 ? n : 2 * n); }
void reply_set_len(client *c, long n) { reply_header(c, c->resp == 3 ? '~' : '*', n); }

void reply_map_ll(client *c, const char *name, long long v) {
    reply_bulk_cstr(c, name);
    reply_long_long(c, v);
}

void reply_double(client *c, double d) {
    char buf[128];
    size_t n = util_d_to_string(buf, sizeof(buf), d);
    if (c->resp == 3) {
        reply_proto(c, ",", 1);
        reply_proto(c, buf, n);
        reply_proto(c, "\r\n", 2);
    } else {
        reply_bulk_buf(c, buf, n);
    }
}

void reply_bool(client *c, int b) {
    if (c->resp == 3)
        reply_proto(c, b ? "#t\r\n" : "#f\r\n", 4);
    else
        reply_proto(c, b ? ":1\r\n" : ":0\r\n", 4);
}

void reply_verbatim(client *c, const char *s, size_t len, const char *ext) {
    if (c->resp == 2) {
        reply_bulk_buf(c, s, len);
        return;
    }
    reply_header(c, '=', (long long)len + 4);
    reply_proto(c, ext, 3);
    reply_proto(c, ":", 1);
    reply_proto(c, s, len);
    reply_proto(c, "\r\n", 2);
}

void reply_bulk_long_double(client *c, long double v) {
    char buf[5120];
    size_t n = util_ld_to_string(buf, sizeof(buf), v);
    reply_bulk_buf(c, buf, n);
}

/* The container's name (argv[0]) in capitals, at most 32 bytes, into out;
 * returns its length. */
static size_t container_upper(const client *c, char *out) {
    const char *name = c->argv[0]->ptr;
    size_t i = 0;
    for (; name[i] && i < 32; i++) out[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    out[i] = '\0';
    return i;
}

void reply_help(client *c, const char *const *lines) {
    char head[128];
    size_t i = container_upper(c, head), n = 0;
    snprintf(head + i, sizeof(head) - i, " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    while (lines[n]) n++;
    reply_array_len(c, (long)n + 3);
    reply_status(c, head);
    for (size_t j = 0; j < n; j++) reply_status(c, lines[j]);
    reply_status(c, "HELP");
    reply_status(c, "    Print this help.");
}

void reply_subcommand_syntax_error(client *c) {
    char upper[33];
    container_upper(c, upper);
    reply_error_format(c, "unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.",
                       (const char *)c->argv[1]->ptr, upper);
}

/*@ reply-deferred */
/* A deferred length is an empty reply block placed in the list; the
 * setter writes the header into it (Valkey: addReplyDeferredLen). The
 * reply buffer can never hold the placeholder, so anything after it goes
 * to the list too, in order. */
void *reply_deferred_len(client *c) {
    if (c->flags & CLIENT_DROPS_REPLIES) return NULL;
    client_queue_pending_write(c);
    reply_block *b = block_new(REPLY_HEADER_MAX);
    link_block(c, b);
    /* Force the next bytes into a fresh block after the placeholder. */
    b->size = 0;
    return b;
}

static void set_deferred(client *c, void *node, char prefix, long n) {
    (void)c;
    reply_block *b = node;
    if (!b) return;
    b->used = header_format(b->buf, prefix, n);
    b->size = REPLY_HEADER_MAX;
}
/*@ end */

void reply_set_deferred_array_len(client *c, void *node, long n) { set_deferred(c, node, '*', n); }

void reply_set_deferred_map_len(client *c, void *node, long n) {
    if (c->resp == 3)
        set_deferred(c, node, '%', n);
    else
        set_deferred(c, node, '*', 2 * n);
}
