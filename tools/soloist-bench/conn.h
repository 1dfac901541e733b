/* conn.h — one connection of the load generator: its requests in flight,
 * its writes and its reads.
 *
 * soloist-bench. Owns: a socket, a ring of request slots and
 * the connection's reply parser. Only the worker thread the connection
 * was given to ever calls these functions.
 *
 * Requests live in a fixed ring: [head, sent) have been written and
 * await their replies, which RESP returns in order; [sent, tail) are
 * queued and not yet (fully) written. A slot's header bytes (command, key,
 * value prefix) sit in the slot's own small buffer; the body of a SET
 * value is a slice of the class's shared pattern. writev sends both by
 * reference, so a 10 MB SET is never copied in user space, and a partial
 * write just remembers an offset.
 * Anchor: memtier_benchmark's per-connection request queue;
 * valkey src/networking.c _writeToClient / writevToClient for writev with
 * partial writes on the server side.
 */
#ifndef SOLOIST_BENCH_CONN_H
#define SOLOIST_BENCH_CONN_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "codec.h"

typedef struct sb_req {
    uint64_t intended_ns; /* when it was due (closed loop: when issued) */
    uint64_t sent_ns;     /* when its first byte went to the kernel */
    uint32_t hdr_len;
    uint16_t key_off;     /* where the key starts in hdr */
    uint8_t is_set;
    uint8_t measured;     /* intended inside the measured window */
    uint8_t prefill;      /* part of --prefill, not of the run */
    char *hdr;            /* this slot's bytes in the connection's arena */
} sb_req;

typedef struct sb_conn {
    int fd;
    int dead;
    int out_armed; /* EPOLLOUT is registered */
    int dirty;     /* queued in the worker's list of connections to flush */
    int cls;       /* the traffic class (index into the run's classes) */
    int class_conn;/* this connection's number within its class, all workers */
    uint32_t cap;  /* slots in the ring */
    uint64_t head, sent, tail; /* monotonic; a slot is index % cap */
    size_t write_off;          /* bytes of slot `sent` already written */
    size_t hdr_cap;
    sb_req *slots;
    char *arena;
    const char *pattern; /* the class's value pattern (shared, read-only) */
    size_t vlen, klen;
    sb_parser parser;
    uint64_t prefill_next; /* the next key index this connection writes */
} sb_conn;

/* Called for every complete reply with a copy of its request (the slot
 * itself may be reused by a request the callback issues). */
typedef void (*sb_reply_fn)(void *ud, sb_conn *c, const sb_req *req, const sb_reply *rep, uint64_t now_ns);

void sb_conn_init(sb_conn *c, int cls, int class_conn, uint32_t cap, size_t klen, const char *pattern, size_t vlen);
void sb_conn_free(sb_conn *c);
/* Blocking connect (set-up only), then non-blocking with TCP_NODELAY.
 * 0 on success; -1 with a message in err. */
int sb_conn_connect(sb_conn *c, const struct sockaddr *sa, socklen_t salen, char *err, size_t errlen);
void sb_conn_close(sb_conn *c);

static inline uint32_t sb_conn_inflight(const sb_conn *c) { return (uint32_t)(c->tail - c->head); }
static inline int sb_conn_has_output(const sb_conn *c) { return c->sent < c->tail; }

/* Queue a GET or SET of `key` (klen bytes). The ring must have room
 * (inflight < cap). Returns the slot for the caller's times and flags. */
sb_req *sb_conn_push(sb_conn *c, int is_set, const char *key);

/* Write queued requests until the socket is full or `budget` bytes have
 * gone. Returns bytes written (0 when the socket is full), or -1 on a
 * socket error. Requests whose first byte goes out get sent_ns = now. */
long sb_conn_flush(sb_conn *c, uint64_t now_ns, size_t budget);

/* Read what has arrived (at most `budget` bytes) through buf, parsing as
 * it goes and calling fn for each complete reply. Returns bytes read;
 * -1 when the peer closed or the socket failed; -2 on a protocol error
 * (including a reply nobody asked for). */
long sb_conn_read(sb_conn *c, char *buf, size_t bufsz, size_t budget, sb_reply_fn fn, void *ud);

#endif
