/* networking.c — connections: accept, read, parse, run, write, close.
 *
 * Step 0 (clients). See networking.h. The flow of one request:
 *
 *   epoll says fd readable → client_read_handler: read() into querybuf
 *   → parse every complete command into c->cmdq (resp.c)
 *   → run each in order (server.c process_command) → replies land in
 *     c->buf / blocks (reply.c) and the client joins the pending-write list
 *   → before the loop sleeps again, networking_handle_pending_writes()
 *     writes them with writev(); only what does not fit in the socket gets
 *     an AE_WRITABLE handler.
 *
 * Writing in before_sleep, not from a writable event, saves an epoll round
 * trip per reply: the socket is almost always writable, so Valkey (and
 * soloist) simply try. Threads: main thread only in step 0.
 */
#include "networking.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "anet.h"
#include "commands.h"
#include "reply.h"
#include "resp.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static void client_read_handler(ae_loop *el, int fd, void *data, int mask);
static void client_write_handler(ae_loop *el, int fd, void *data, int mask);

/* Clients flagged CLOSE_ASAP wait here until before_sleep frees them. */
static client **closing;
static size_t closing_len, closing_cap;

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

client *client_create(int fd) {
    client *c = zcalloc(sizeof(*c));
    c->fd = fd;
    c->id = ++server.next_client_id;
    c->resp = 2;
    c->authenticated = server.requirepass == NULL;
    c->db = &server.db0;
    c->ctime = c->last_interaction = util_mstime();
    resp_parser_init(&c->parser);
    if (fd != -1) {
        format_addr(fd, c->addr, sizeof(c->addr), 1);
        format_addr(fd, c->laddr, sizeof(c->laddr), 0);
        if (ae_add_file(server.el, fd, AE_READABLE, client_read_handler, c) == AE_ERR) {
            zfree(c);
            return NULL;
        }
        /* Linked into server.clients, newest first. */
        c->next = server.clients;
        if (server.clients) server.clients->prev = c;
        server.clients = c;
        server.clients_count++;
    }
    return c;
}

static void free_argv(int argc, obj **argv) {
    for (int i = 0; i < argc; i++) obj_decr_ref(argv[i]);
    zfree(argv);
}

static void free_reply_blocks(client *c) {
    reply_block *b = c->reply_head;
    while (b) {
        reply_block *next = b->next;
        zfree(b);
        b = next;
    }
    c->reply_head = c->reply_tail = NULL;
    c->reply_bytes = 0;
    c->reply_blocks = 0;
}

static void unlink_pending_write(client *c) {
    if (!(c->flags & CLIENT_PENDING_WRITE)) return;
    client **pp = &server.clients_pending_write;
    while (*pp && *pp != c) pp = &(*pp)->next_pending_write;
    if (*pp) *pp = c->next_pending_write;
    c->flags &= ~CLIENT_PENDING_WRITE;
}

/* Takes c out of the closing list, so a client freed directly (EOF, a
 * write error) after being flagged CLOSE_ASAP is not freed twice. */
static void unlink_closing(client *c) {
    for (size_t i = 0; i < closing_len; i++) {
        if (closing[i] == c) {
            closing[i] = closing[--closing_len];
            return;
        }
    }
}

void client_free(client *c) {
    if (server.current_client == c) {
        client_close_async(c);
        return;
    }
    if (c->flags & CLIENT_CLOSE_ASAP) unlink_closing(c);
    if (c->fd != -1) {
        ae_del_file(server.el, c->fd, AE_READABLE | AE_WRITABLE);
        close(c->fd);
        if (c->prev)
            c->prev->next = c->next;
        else
            server.clients = c->next;
        if (c->next) c->next->prev = c->prev;
        server.clients_count--;
    }
    unlink_pending_write(c);
    for (int i = c->cmdq_pos; i < c->cmdq_len; i++) free_argv(c->cmdq[i].argc, c->cmdq[i].argv);
    zfree(c->cmdq);
    if (c->argv) free_argv(c->argc, c->argv);
    resp_parser_reset(&c->parser);
    free_reply_blocks(c);
    zfree(c->querybuf);
    zfree(c->name);
    zfree(c->lib_name);
    zfree(c->lib_ver);
    zfree(c);
}

void client_close_async(client *c) {
    if (c->flags & CLIENT_CLOSE_ASAP) return;
    c->flags |= CLIENT_CLOSE_ASAP;
    if (closing_len == closing_cap) {
        closing_cap = closing_cap ? closing_cap * 2 : 16;
        closing = zrealloc(closing, closing_cap * sizeof(*closing));
    }
    closing[closing_len++] = c;
}

void networking_free_closed_clients(void) {
    /* A client freed here may not be current: before_sleep runs between
     * commands, never inside one. */
    while (closing_len) {
        client *c = closing[--closing_len];
        c->flags &= ~CLIENT_CLOSE_ASAP;
        client_free(c);
    }
}

int client_has_pending_replies(const client *c) {
    if (c->bufpos > c->sentlen) return 1;
    for (reply_block *b = c->reply_head; b; b = b->next)
        if (b->used) return 1;
    return 0;
}

size_t client_output_bytes(const client *c) { return c->reply_bytes; }

void client_install_write_handler(client *c) {
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

/* ---------------------------------------------------------------- accept */

static int protected_mode_denies(int fd) {
    /* Valkey's protected mode: with no password, only loopback peers may
     * talk to the server. */
    if (!server.protected_mode || server.requirepass) return 0;
    char ip[64];
    int port;
    if (anet_fd_to_string(fd, ip, sizeof(ip), &port, 1) == -1) return 0;
    return !(strcmp(ip, "127.0.0.1") == 0 || strcmp(ip, "::1") == 0 || strncmp(ip, "127.", 4) == 0 ||
             strcmp(ip, "unixsocket") == 0);
}

static void accept_common(int fd) {
    const char *err = NULL;
    if (server.clients_count >= server.maxclients) {
        err = "-ERR max number of clients reached\r\n";
        server.stat_rejected_conn++;
    } else if (protected_mode_denies(fd)) {
        err = "-DENIED Running in protected mode because protected mode is enabled and no password is "
              "set for the default user. In this mode connections are only accepted from the loopback "
              "interface. Set a password with --requirepass or disable protected mode with "
              "--protected-mode no.\r\n";
        server.stat_rejected_conn++;
    }
    if (err) {
        /* Best effort, like Valkey: the socket is new, so the short error
         * fits in its buffer; a failure here changes nothing. */
        ssize_t w = write(fd, err, strlen(err));
        (void)w;
        close(fd);
        return;
    }
    char aerr[ANET_ERR_LEN];
    anet_nonblock(aerr, fd);
    anet_enable_tcp_nodelay(aerr, fd);
    if (server.tcpkeepalive) anet_keepalive(aerr, fd, server.tcpkeepalive);
    if (!client_create(fd)) {
        server_log(LL_WARNING, "Error registering fd event for the new client: %s", strerror(errno));
        close(fd);
        return;
    }
    server.stat_numconnections++;
}

void networking_accept_handler(ae_loop *el, int fd, void *data, int mask) {
    (void)el, (void)data, (void)mask;
    char ip[64], err[ANET_ERR_LEN];
    int port;
    for (int i = 0; i < NET_MAX_ACCEPTS_PER_CALL; i++) {
        int cfd = anet_accept(err, fd, ip, sizeof(ip), &port);
        if (cfd == ANET_ERR) {
            if (errno != EWOULDBLOCK && errno != EAGAIN) server_log(LL_WARNING, "Accepting client connection: %s", err);
            return;
        }
        accept_common(cfd);
    }
}

/* ------------------------------------------------------------------ read */

static void cmdq_push(client *c, int argc, obj **argv) {
    if (c->cmdq_pos == c->cmdq_len) c->cmdq_pos = c->cmdq_len = 0;
    if (c->cmdq_len == c->cmdq_cap) {
        c->cmdq_cap = c->cmdq_cap ? c->cmdq_cap * 2 : 8;
        c->cmdq = zrealloc(c->cmdq, (size_t)c->cmdq_cap * sizeof(*c->cmdq));
    }
    c->cmdq[c->cmdq_len].argc = argc;
    c->cmdq[c->cmdq_len].argv = argv;
    c->cmdq_len++;
}

/*@ parse-all */
/* Parses every complete command in the query buffer into the queue.
 * Returns 0, or -1 after a protocol error (error text in *err). */
static int parse_query_buffer(client *c, const char **err) {
    resp_limits lim = {.proto_max_bulk_len = server.proto_max_bulk_len, .authenticated = c->authenticated};
    while (c->qb_pos < c->qb_len && !(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP))) {
        size_t consumed = 0;
        int argc = 0;
        obj **argv = NULL;
        int rc = resp_parse(&c->parser, c->querybuf + c->qb_pos, c->qb_len - c->qb_pos, &lim, &consumed, &argc,
                            &argv, err);
        c->qb_pos += consumed;
        if (rc == RESP_ERROR) return -1;
        if (rc == RESP_INCOMPLETE) break;
        if (argc == 0) {
            zfree(argv);
            continue;
        }
        cmdq_push(c, argc, argv);
        /* Until AUTH runs, the limits for unauthenticated clients apply to
         * each command, so parse no further than one command ahead. */
        if (!c->authenticated) break;
    }
    /* Keep the unparsed tail at the front of the buffer. */
    if (c->qb_pos) {
        memmove(c->querybuf, c->querybuf + c->qb_pos, c->qb_len - c->qb_pos);
        c->qb_len -= c->qb_pos;
        c->qb_pos = 0;
    }
    return 0;
}
/*@ end */

/* Runs the queued commands in order; stops when the client must close.
 * The phase clock switches to EXEC once for the whole batch, not once per
 * command: at depth 16 a clock read per command would cost a measurable
 * share of a command that takes a microsecond or two. */
static void run_queued_commands(client *c) {
    if (c->cmdq_pos == c->cmdq_len) return;
    server_phase(PHASE_EXEC);
    while (c->cmdq_pos < c->cmdq_len && !(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP))) {
        parsed_cmd *pc = &c->cmdq[c->cmdq_pos++];
        c->argc = pc->argc;
        c->argv = pc->argv;
        pc->argv = NULL;
        process_command(c);
        client_command_done(c);
        if (c->argv) free_argv(c->argc, c->argv);
        c->argc = 0;
        c->argv = NULL;
    }
    server_phase(PHASE_READ);
}

/* Valkey: processInputBuffer. Parses and runs until the buffer holds no
 * complete command; an unauthenticated client parses one at a time. */
static void process_input(client *c) {
    const char *err = NULL;
    server.current_client = c;
    for (;;) {
        int rc = parse_query_buffer(c, &err);
        int had = c->cmdq_len - c->cmdq_pos;
        run_queued_commands(c);
        if (rc == -1) {
            /* Replies for the commands before the bad one are already
             * queued; the error follows them and the connection closes. */
            reply_error_len(c, err, resp_parser_error_len(&c->parser));
            c->flags |= CLIENT_CLOSE_AFTER_REPLY;
            resp_parser_reset(&c->parser);
            c->qb_len = c->qb_pos = 0;
            break;
        }
        if (!had || (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) || c->qb_len == 0) break;
    }
    server.current_client = NULL;
}

/* Bytes of a big bulk argument the parser is already holding (it fills
 * the argument's object in place, so they are no longer in querybuf but
 * still count against client-query-buffer-limit). */
static size_t parser_buffered(const resp_parser *p) { return p->big ? p->big_filled : 0; }

/*@ read-handler */
static void client_read_handler(ae_loop *el, int fd, void *data, int mask) {
    (void)el, (void)mask;
    client *c = data;
    server_phase(PHASE_READ);
    /* Read more at once when a big bulk argument is on its way, so a large
     * SET does not cost one syscall per 16 KB. */
    size_t readlen = CLIENT_IOBUF_LEN;
    size_t pending = resp_parser_pending_bulk(&c->parser);
    if (pending > readlen && pending < 64 * 1024 * 1024) readlen = pending;
    if (c->qb_cap - c->qb_len < readlen) {
        c->qb_cap = c->qb_len + readlen;
        c->querybuf = zrealloc(c->querybuf, c->qb_cap);
    }
    ssize_t n = read(fd, c->querybuf + c->qb_len, readlen);
    server.stat_total_reads++;
    if (n == -1) {
        if (errno == EAGAIN || errno == EINTR) return;
        server_log(LL_VERBOSE, "Reading from client: %s", strerror(errno));
        client_free(c);
        return;
    }
    if (n == 0) {
        server_log(LL_VERBOSE, "Client closed connection id=%llu addr=%s", (unsigned long long)c->id, c->addr);
        client_free(c);
        return;
    }
    c->qb_len += (size_t)n;
    if (c->qb_len > c->querybuf_peak) c->querybuf_peak = c->qb_len;
    c->last_interaction = util_mstime();
    server.stat_net_input_bytes += n;

    /* Valkey: client-query-buffer-limit. The unparsed input (plus a bulk
     * already being accumulated) may not exceed it; a client that has not
     * authenticated yet gets at most 1 MB, as in Valkey 8. */
    size_t qb_limit = (size_t)server.client_max_querybuf_len;
    if (!c->authenticated && qb_limit > 1024 * 1024) qb_limit = 1024 * 1024;
    if (c->qb_len + parser_buffered(&c->parser) > qb_limit) {
        server_log(LL_WARNING, "Closing client that reached max query buffer length: id=%llu addr=%s qbuf=%zu",
                   (unsigned long long)c->id, c->addr, c->qb_len);
        server.stat_client_qbuf_limit_disconnections++;
        client_free(c);
        return;
    }
    process_input(c);
    if (c->flags & CLIENT_CLOSE_ASAP) client_free(c);
}
/*@ end */

/* ----------------------------------------------------------------- write */

/*@ write-to-client */
/* Writes what the client has pending with one writev() of the static
 * buffer and the blocks, at most NET_MAX_WRITES_PER_EVENT bytes per call.
 * Returns -1 when the client was freed. */
static int write_to_client(client *c, int handler_installed) {
    struct iovec iov[64];
    size_t total = 0;
    while (client_has_pending_replies(c) && total < NET_MAX_WRITES_PER_EVENT) {
        int iovcnt = 0;
        size_t skip = c->sentlen;
        if (c->bufpos > c->sentlen) {
            iov[iovcnt].iov_base = c->buf + c->sentlen;
            iov[iovcnt++].iov_len = c->bufpos - c->sentlen;
            skip = 0;
        } else if (c->bufpos) {
            /* The static buffer is done; sentlen now counts into blocks. */
            c->bufpos = c->sentlen = 0;
            skip = 0;
        }
        for (reply_block *b = c->reply_head; b && iovcnt < 64; b = b->next) {
            if (b->used <= skip) {
                skip -= b->used;
                continue;
            }
            iov[iovcnt].iov_base = b->buf + skip;
            iov[iovcnt++].iov_len = b->used - skip;
            skip = 0;
        }
        if (!iovcnt) break;
        ssize_t n = writev(c->fd, iov, iovcnt);
        server.stat_total_writes++;
        if (n <= 0) {
            if (n == -1 && (errno == EAGAIN || errno == EINTR)) break;
            server_log(LL_VERBOSE, "Error writing to client: %s", n ? strerror(errno) : "closed");
            client_free(c);
            return -1;
        }
        total += (size_t)n;
        server.stat_net_output_bytes += n;
        /* Advance: the static buffer first, then whole blocks. */
        size_t left = (size_t)n;
        if (c->bufpos > c->sentlen) {
            size_t in_buf = c->bufpos - c->sentlen;
            if (left < in_buf) {
                c->sentlen += left;
                continue;
            }
            left -= in_buf;
            c->bufpos = c->sentlen = 0;
        }
        while (c->reply_head && left) {
            reply_block *b = c->reply_head;
            size_t rest = b->used - c->sentlen;
            if (left < rest) {
                c->sentlen += left;
                left = 0;
                break;
            }
            left -= rest;
            c->sentlen = 0;
            c->reply_head = b->next;
            if (!c->reply_head) c->reply_tail = NULL;
            c->reply_bytes -= b->size;
            c->reply_blocks--;
            zfree(b);
        }
        /* Drop fully sent empty blocks at the head (e.g. used == 0). */
        while (c->reply_head && c->reply_head->used == 0 && c->reply_head->size) {
            reply_block *b = c->reply_head;
            c->reply_head = b->next;
            if (!c->reply_head) c->reply_tail = NULL;
            c->reply_bytes -= b->size;
            c->reply_blocks--;
            zfree(b);
        }
    }
    if (total) c->last_interaction = util_mstime();
    if (!client_has_pending_replies(c)) {
        c->bufpos = c->sentlen = 0;
        free_reply_blocks(c);
        if (handler_installed) ae_del_file(server.el, c->fd, AE_WRITABLE);
        if (c->flags & CLIENT_CLOSE_AFTER_REPLY) {
            client_free(c);
            return -1;
        }
    } else if (!handler_installed) {
        ae_add_file(server.el, c->fd, AE_WRITABLE, client_write_handler, c);
    }
    return 0;
}
/*@ end */

static void client_write_handler(ae_loop *el, int fd, void *data, int mask) {
    (void)el, (void)fd, (void)mask;
    server_phase(PHASE_WRITE);
    write_to_client(data, 1);
}

int networking_handle_pending_writes(void) {
    int processed = 0;
    server_phase(PHASE_WRITE);
    while (server.clients_pending_write) {
        client *c = server.clients_pending_write;
        server.clients_pending_write = c->next_pending_write;
        c->flags &= ~CLIENT_PENDING_WRITE;
        c->next_pending_write = NULL;
        processed++;
        if (c->flags & CLIENT_CLOSE_ASAP) continue;
        /* A client that already waits for AE_WRITABLE is left to it. */
        if (ae_get_file_mask(server.el, c->fd) & AE_WRITABLE) continue;
        write_to_client(c, 0);
    }
    server_phase(PHASE_OTHER);
    return processed;
}

/* ------------------------------------------------------------------ cron */

void networking_clients_cron(void) {
    long long now = util_mstime();
    for (client *c = server.clients, *next; c; c = next) {
        next = c->next;
        if (server.maxidletime && now - c->last_interaction > (long long)server.maxidletime * 1000) {
            server_log(LL_VERBOSE, "Closing idle client");
            client_free(c);
            continue;
        }
        /* Give back a large query buffer once the client is idle. */
        if (c->qb_len == 0 && c->qb_cap > 4 * CLIENT_IOBUF_LEN) {
            zfree(c->querybuf);
            c->querybuf = NULL;
            c->qb_cap = 0;
        }
        if (c->reply_head) client_check_output_limits(c);
    }
}

size_t client_info_string(const client *c, char *buf, size_t len) {
    long long now = util_mstime();
    const char *cmd = c->lastcmd ? c->lastcmd->name : "NULL";
    char events[3] = {0};
    int mask = c->fd != -1 ? ae_get_file_mask(server.el, c->fd) : 0, e = 0;
    if (mask & AE_READABLE) events[e++] = 'r';
    if (mask & AE_WRITABLE) events[e++] = 'w';
    int n = snprintf(buf, len,
                     "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=N db=%d sub=0 psub=0 "
                     "ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu rbp=%zu obl=%zu "
                     "oll=%ld omem=%zu tot-mem=%zu events=%s cmd=%s user=default redir=-1 resp=%d",
                     (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "",
                     (now - c->ctime) / 1000, (now - c->last_interaction) / 1000, c->db ? c->db->id : 0, c->qb_len,
                     c->qb_cap - c->qb_len, c->qb_cap, c->querybuf_peak, c->bufpos, c->reply_blocks,
                     c->reply_bytes, sizeof(*c) + c->qb_cap + c->reply_bytes, events, cmd, c->resp);
    return n < 0 ? 0 : (size_t)n >= len ? len - 1 : (size_t)n;
}
