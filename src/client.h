/* client.h — one connection's state.
 *
 * Step 0; steps 4 and 5 add the I/O-thread fields. Owns the query buffer,
 * the parser's partial state, the queue of parsed commands, the reply
 * buffer and reply block list, and the client's identity (id, name,
 * addresses, RESP version, auth). The rules for the buffers are in the
 * essays at the top of networking.c (input) and reply.c (output).
 * Threads: the main thread, always, in step 0. From step 4 an I/O thread
 * owns a client while its io state says so, and main does not touch it.
 * Valkey: struct client in src/server.h.
 */
#ifndef SOLOIST_CLIENT_H
#define SOLOIST_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "object.h"
#include "resp.h"

struct db;
struct command;

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

/* A block of reply bytes after buf (Valkey: clientReplyBlock). */
typedef struct reply_block {
    struct reply_block *next;
    size_t size; /* capacity of buf */
    size_t used; /* bytes written into buf */
    char buf[];
} reply_block;

/* One parsed command waiting to run (the pipeline's queue). */
typedef struct parsed_cmd {
    int argc;
    obj **argv;
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
/* Replies are not appended while any of these is set (reply.c). */
#define CLIENT_DROPS_REPLIES (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)

typedef struct client {
    uint64_t id;
    int fd;
    uint32_t flags;
    int resp;           /* 2 or 3, set by HELLO */
    int authenticated;  /* 1 when no password is set or AUTH succeeded */
    struct db *db;
    char *name;         /* CLIENT SETNAME, or NULL */
    char *lib_name, *lib_ver; /* CLIENT SETINFO LIB-NAME / LIB-VER, or NULL */
    char addr[64];      /* "ip:port" of the peer */
    char laddr[64];     /* "ip:port" of our end */
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

    /* The command running now. */
    int argc;
    obj **argv;
    struct command *cmd, *lastcmd;
    long long commands_processed;

    /* Output: buf[sentlen, bufpos) first, then the block list (reply.c).
     * buf is NULL until the first reply and again after an idle spell;
     * buf_size is its capacity, kept while it is NULL as the size to
     * allocate next. reply_bytes counts the bytes held in blocks
     * (client-output-buffer-limit). */
    char *buf;
    size_t buf_size;
    size_t bufpos;
    size_t buf_peak;                 /* most bytes buf held since buf_peak_since */
    long long buf_peak_since;        /* ms */
    size_t sentlen; /* bytes of the first pending chunk already written */
    reply_block *reply_head, *reply_tail;
    size_t reply_bytes;
    long reply_blocks;
    long long obuf_soft_limit_reached_time; /* ms, 0 when under the soft limit */

    /* server.clients list and the pending-write list. */
    struct client *prev, *next;
    struct client *next_pending_write;
} client;

/* Called once each command is done, whatever its outcome (Valkey: the
 * end of resetClient): a SKIP covers exactly the command after CLIENT
 * REPLY SKIP. */
static inline void client_command_done(client *c) {
    c->flags &= ~CLIENT_REPLY_SKIP;
    if (c->flags & CLIENT_REPLY_SKIP_NEXT) c->flags = (c->flags & ~CLIENT_REPLY_SKIP_NEXT) | CLIENT_REPLY_SKIP;
}

#endif
