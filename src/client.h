/* client.h — one connection's state.
 *
 * Step 0 (connection layer, below the worker-io layer that reads and writes
 * it); steps 4 and 5 add the I/O-thread fields. Owns the query buffer,
 * the parser's partial state, the queue of parsed commands, the reply
 * buffer and reply block list, and the client's identity (id, name,
 * addresses, RESP version, auth). The rules for the buffers are in the
 * essays at the top of networking.c (input) and reply.c (output).
 * Threads: the main thread, except that from step 4 an I/O thread owns
 * one direction of a client's I/O while that direction's io state is not
 * IDLE (the fields each direction uses are listed at io_read_state).
 * Valkey: struct client in src/server.h.
 */
#ifndef SOLOIST_CLIENT_H
#define SOLOIST_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "object.h"
#include "resp.h"

struct db;
struct command;
struct multi_state;
struct blocked_state;

/* Valkey: PROTO_REPLY_CHUNK_BYTES — the largest reply buffer and the
 * smallest reply block. */
#define CLIENT_REPLY_CHUNK 16384
/* Redis 7: PROTO_REPLY_MIN_BYTES — a reply buffer's first and smallest
 * size; the cron grows it toward CLIENT_REPLY_CHUNK when it fills. */
#define CLIENT_REPLY_MIN 1024
/* Valkey: PROTO_IOBUF_LEN — how much one read() asks for, and the size of
 * the shared query buffer. */
#define CLIENT_IOBUF_LEN 16384
/* A client with nothing buffered that has been quiet this long gives its
 * reply buffer back (Valkey gives a query buffer back after 2 s idle). */
#define CLIENT_IDLE_RELEASE_MS 2000

/*@ reply-block */
/* A block of reply bytes after buf (Valkey: clientReplyBlock).
 *
 * Step 7: a block may instead stand for one bulk string by reference
 * (ref != NULL; reply.c's essay). Its output is then buf[0, hdr_len)
 * (the "$<len>\r\n" header), the value's bytes ref->ptr[0, ref->len),
 * then buf[hdr_len, hdr_len + 2) ("\r\n"); used and size both count that
 * whole output, so a reference block has no room to append to, and
 * reply_bytes (client-output-buffer-limit) counts the referenced bytes.
 * Main raised ref's count when it appended the block and drops it when
 * the block is freed, always on main. */
typedef struct reply_block {
    struct reply_block *next;
    size_t size;      /* capacity of buf (a reference block: its output length) */
    size_t used;      /* bytes written into buf (a reference block: its output length) */
    obj *ref;         /* step 7: the referenced string, or NULL for plain bytes */
    uint32_t hdr_len; /* step 7: header bytes at the start of buf */
    char buf[];
} reply_block;
/*@ end */

/* One parsed command waiting to run (the pipeline's queue). cmd is its
 * entry in the command table, looked up by the thread that parsed it
 * (commands_lookup_queued), or NULL: not looked up yet, or no such
 * command. */
typedef struct parsed_cmd {
    int argc;
    obj **argv;
    struct command *cmd;
} parsed_cmd;

#define CLIENT_CLOSE_AFTER_REPLY (1u << 0) /* QUIT, protocol error: close once written */
#define CLIENT_CLOSE_ASAP (1u << 1)        /* close before anything else */
#define CLIENT_PENDING_WRITE (1u << 2)     /* in server.clients_pending_write */
#define CLIENT_PROTECTED (1u << 3)         /* do not free while a command runs */
/* CLIENT REPLY (Valkey's flags of the same names): OFF drops every reply
 * until CLIENT REPLY ON; SKIP_NEXT, set by CLIENT REPLY SKIP, becomes SKIP
 * once that command is done, and SKIP drops the next command's replies. */
#define CLIENT_REPLY_OFF (1u << 4)
#define CLIENT_REPLY_SKIP_NEXT (1u << 5)
#define CLIENT_REPLY_SKIP (1u << 6)
/* Transactions (multi.c; Valkey's flags of the same names). MULTI: after
 * MULTI, until EXEC or DISCARD; DIRTY_CAS: a watched key was touched, EXEC
 * will answer a null array; DIRTY_EXEC: a command was refused while
 * queueing, EXEC will answer -EXECABORT. */
#define CLIENT_MULTI (1u << 7)
#define CLIENT_DIRTY_CAS (1u << 8)
#define CLIENT_DIRTY_EXEC (1u << 9)
/* Blocking pops (blocked.c). BLOCKED: the client waits in blocked.c's
 * registry, its command's argv kept to run again when a key is served;
 * its pipelined commands wait behind it. UNBLOCKED: served, timed out or
 * CLIENT UNBLOCKed, its pipelined commands not yet resumed (before_sleep
 * does that). While either is set no read of it is offloaded (io_offload.c,
 * as Valkey's trySendReadToIOThreads). MULTI belongs to the transactions:
 * inside one a blocking pop does not block. */
#define CLIENT_BLOCKED (1u << 10)
#define CLIENT_UNBLOCKED (1u << 11)
/* MONITOR (networking.c): MONITOR is set from the command on, until
 * RESET or the connection closes; the client then receives a line for
 * every command any client runs (Valkey marks it CLIENT_MONITOR and
 * CLIENT_SLAVE, and refuses it the keyspace as it refuses a replica).
 * REPROCESSING: the command running is a blocked command run again to
 * serve it (blocked.c), already shown to the monitors when it blocked, so
 * not shown again (Valkey: the client's reprocessing_command flag). */
#define CLIENT_MONITOR (1u << 12)
#define CLIENT_REPROCESSING (1u << 13)
/* Replies are not appended while any of these is set (reply.c). */
#define CLIENT_DROPS_REPLIES (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)

/* Step 4: who owns one direction of a client's I/O (io_offload.c). Main
 * moves IDLE -> PENDING before it hands the client to a worker; the worker
 * moves PENDING -> COMPLETED (a release store) after its last touch; main
 * moves COMPLETED -> IDLE when it takes the result (Valkey: CLIENT_IDLE,
 * CLIENT_PENDING_IO, CLIENT_COMPLETED_IO). */
enum client_io_state { CLIENT_IO_IDLE = 0, CLIENT_IO_PENDING = 1, CLIENT_IO_COMPLETED = 2 };

/* What a read job found (client.io_read_flags), for main to act on. */
#define CLIENT_IO_READ_QB_LIMIT (1u << 0)    /* client-query-buffer-limit passed: close */
#define CLIENT_IO_READ_PROTO_ERROR (1u << 1) /* io_parse_err holds the error text */
/* What a write job found (client.io_write_flags). */
#define CLIENT_IO_WRITE_SOCKET_FULL (1u << 0) /* EAGAIN or a short write: wait for AE_WRITABLE */
#define CLIENT_IO_WRITE_ERROR (1u << 1)       /* io_write_errno says why; close */

typedef struct client {
    uint64_t id;
    int fd;
    uint32_t flags;
    int resp;          /* 2 or 3, set by HELLO */
    int authenticated; /* 1 when no password is set or AUTH succeeded */
    struct db *db;
    char *name;                 /* CLIENT SETNAME, or NULL */
    char *lib_name, *lib_ver;   /* CLIENT SETINFO LIB-NAME / LIB-VER, or NULL */
    char addr[64];              /* "ip:port" of the peer */
    char laddr[64];             /* "ip:port" of our end */
    long long ctime;            /* ms, when connected */
    long long last_interaction; /* ms, last read or write */

    /* Input. querybuf[qb_pos, qb_len) is unparsed; the parser keeps the
     * state of a command split across reads. querybuf is NULL between
     * reads unless it holds a partial request; during a read it may be
     * the thread's shared buffer (networking.c). */
    char *querybuf;
    size_t qb_len, qb_cap, qb_pos;
    size_t querybuf_peak;
    resp_parser parser;

    /* Parsed commands not yet run: cmdq[cmdq_pos, cmdq_len). A read parses
     * every complete command it received (Valkey 9 does the same so an I/O
     * thread can parse a whole pipeline at once). */
    parsed_cmd *cmdq;
    int cmdq_len, cmdq_cap, cmdq_pos;

    /* The command running now. parsed_cmd is its table entry when the
     * thread that parsed it looked it up (run_queued_commands hands it to
     * process_command, which clears it), else NULL. */
    int argc;
    obj **argv;
    struct command *cmd, *lastcmd, *parsed_cmd;
    long long commands_processed;

    /* Transactions (multi.c): the queue since MULTI and the watched keys;
     * NULL until the first MULTI or WATCH. Main only: no I/O job touches
     * it, so another client's write may dirty this one at any time. */
    struct multi_state *mstate;
    /* CLIENT LIST tot-net-in / tot-net-out: bytes read from and written
     * to the socket. Counted by main in the main halves of a read and a
     * write (client_read_done, client_write_done) from io_nread and
     * io_nwritten, which the job left; so they are main's fields like the
     * server's totals beside them, and CLIENT LIST reads them without
     * waiting for a worker. */
    unsigned long long net_input_bytes, net_output_bytes;

    /* Output: buf[sentlen, bufpos) first, then the block list (reply.c).
     * buf is NULL until the first reply and again after an idle spell;
     * buf_size is its capacity, kept while it is NULL as the size to
     * allocate next. reply_bytes counts the bytes held in blocks
     * (client-output-buffer-limit). */
    char *buf;
    size_t buf_size;
    size_t bufpos;
    size_t buf_peak;          /* most bytes buf held since buf_peak_since */
    long long buf_peak_since; /* ms */
    size_t sentlen;           /* bytes of the first pending chunk already written */
    reply_block *reply_head, *reply_tail;
    size_t reply_bytes;
    long reply_blocks;
    unsigned long long reply_appended;      /* every byte ever appended (step 5's A/B measure) */
    long long obuf_soft_limit_reached_time; /* ms, 0 when under the soft limit */

    /* Steps 4 and 5: the I/O hand-off (client_io.c does the I/O; io_offload.c
     * decides who does it). The two states are the ownership tokens, one
     * per direction: main sets a job's inputs before the hand-off, and
     * while a direction's state is PENDING it writes none of the fields
     * that direction's job reads and touches none that the job writes.
     * The fields, by direction:
     *   read (a READ job, or an ACCEPT, which goes as a read): writes
     *     querybuf, qb_len, qb_cap, qb_pos, querybuf_peak, parser, the
     *     command queue (cmdq*), cur_tid, io_nread, io_read_errno,
     *     io_read_flags, io_parse_err and io_parse_err_len, and for an
     *     ACCEPT addr and laddr; reads io_proto_max_bulk_len, io_qb_limit
     *     and authenticated, and for an ACCEPT io_keepalive;
     *   write: writes io_nwritten, io_write_calls, io_write_errno and
     *     io_write_flags; reads buf up to the watermark, the blocks from
     *     reply_head up to it (bufpos only once a block is marked: until
     *     then buf may grow under main), sentlen, io_last_reply_block,
     *     io_last_bufpos and io_write_max;
     *   both: read fd and id, which main sets when it creates the client
     *     and never changes while the client lives.
     * authenticated changes only in a command of this client (AUTH,
     * HELLO, RESET), which main runs only while the read direction is
     * IDLE (the command queue is the read direction's). So the directions
     * write disjoint fields and neither writes what the other reads: one
     * read and one write job may run for the same client at once. */
    _Atomic uint8_t io_read_state, io_write_state;
    int cur_tid;      /* the worker whose read allocated the queued argvs (0: main) */
    int io_accepting; /* main's: the read job in flight is the ACCEPT's (set and cleared by main) */
    int io_keepalive; /* tcp-keepalive for the ACCEPT job (a worker reads no configuration) */
    /* Read job: the limits main copies in before the hand-off (a worker
     * reads no configuration), and what the job found. */
    long long io_proto_max_bulk_len;
    size_t io_qb_limit;
    ssize_t io_nread; /* read()'s result: bytes, 0 at EOF, -1 on error */
    int io_read_errno;
    unsigned io_read_flags;
    const char *io_parse_err; /* in parser.errbuf; valid until the next parse */
    size_t io_parse_err_len;
    /* Write job: the watermark (step 5), set by main just before the
     * hand-off, and what the job did. The job writes buf up to
     * io_last_bufpos when io_last_reply_block is NULL; otherwise all of
     * buf's pending bytes, every block before io_last_reply_block, and
     * that block up to io_last_bufpos, never following its next. */
    reply_block *io_last_reply_block;
    size_t io_last_bufpos;
    size_t io_write_max; /* step 7: stop after this many bytes (0: until the socket is full) */
    size_t io_nwritten;  /* bytes the job wrote; main consumes them */
    int io_write_calls;  /* write()/writev() calls it made (INFO stats) */
    int io_write_errno;
    unsigned io_write_flags;

    /* Blocking pops: the keys and deadline a blocked client waits on, NULL
     * when not blocked (blocked.c owns it; main thread only). */
    struct blocked_state *bstate;

    /* server.clients list and the pending-write list. */
    struct client *prev, *next;
    struct client *next_pending_write;
} client;

/* Whether a worker owns either direction of c's I/O (main must then not
 * free it, and not touch that direction's fields). */
static inline int client_io_owned(const client *c) {
    return atomic_load_explicit(&c->io_read_state, memory_order_relaxed) != CLIENT_IO_IDLE ||
           atomic_load_explicit(&c->io_write_state, memory_order_relaxed) != CLIENT_IO_IDLE;
}

/* Called once each command is done, whatever its outcome (Valkey: the
 * end of resetClient): a SKIP covers exactly the command after CLIENT
 * REPLY SKIP. */
static inline void client_command_done(client *c) {
    c->flags &= ~CLIENT_REPLY_SKIP;
    if (c->flags & CLIENT_REPLY_SKIP_NEXT) c->flags = (c->flags & ~CLIENT_REPLY_SKIP_NEXT) | CLIENT_REPLY_SKIP;
}

#endif
