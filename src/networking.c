/* networking.c — connections: accept, read, parse, run, write, close.
 *
 * Step 0 (main-io layer, its top); steps 4 and 5 cut its handlers in
 * two. Owns the client lifecycle, the main thread's half of the flow
 * of bytes between a socket and the command dispatcher, and the MONITOR
 * feed (its rules are at the section "monitor"); client_io.c owns
 * the other half (the system calls and the parsing, which a worker may
 * run), reply.c how replies are appended and what is pending,
 * io_offload.c who does the I/O. Every one of them is below this file:
 * it calls them, and io_offload.c calls back only through the main halves
 * networking_init registers.
 * Threads: main only; see "Who may touch a client" below.
 * Valkey: the functions networking.h names.
 *
 * THE FLOW OF ONE REQUEST
 *
 *   epoll says fd readable -> client_read_handler: client_io_read reads
 *   into the query buffer and parses every complete command into c->cmdq
 *   (resp.c) -> client_read_done runs them in order (process_command) ->
 *   replies land in c->buf and the block list (reply.c) and the client
 *   joins the pending-write list -> before the loop sleeps again,
 *   networking_handle_pending_writes() writes them (client_io_write, then
 *   client_write_done); only what the socket refuses waits for
 *   AE_WRITABLE.
 *
 * From step 4 each I/O half may run on a worker instead: the handler asks
 * io_offload first, and when a worker takes the job, the main half runs
 * later, in before_sleep, when the result comes back. The halves are the
 * same functions either way.
 *
 * Writing in before_sleep instead of from a writable event saves an epoll
 * round trip per reply: the socket is almost always writable, so Valkey
 * (and soloist) simply try.
 *
 * THE QUERY BUFFER
 *
 * A client does not own a query buffer while it has nothing unparsed.
 * Between reads c->querybuf is NULL, or a private buffer that holds the
 * start of a request still incomplete. When a read finds it NULL, the
 * client borrows the thread's shared buffer (CLIENT_IOBUF_LEN bytes, one
 * per thread that reads) for the length of that one handler call: read,
 * parse, run. Before the handler returns, client_io_settle_query_buffer()
 * gives it back; if bytes of an incomplete request are left in it, the
 * client first takes a private copy of exactly those bytes, because the
 * next client read on this thread will overwrite the shared buffer. So:
 *
 *   - the shared buffer is lent to at most one client at a time, and to
 *     none while the loop sleeps;
 *   - a private querybuf is never empty between handler calls (an empty
 *     one is freed at once), so an idle client holds no input memory;
 *   - the payload of a big bulk argument (32 KB or more) is read straight
 *     into the argument's object, as Valkey reads a big argument into the
 *     buffer that becomes the argument; a bulk of 16 to 32 KB is read into
 *     a private buffer sized for it, never the shared one.
 *
 * This is Valkey 8's shared query buffer (Valkey pull request #258). The
 * buffer is thread-local, so when step 4's I/O threads read sockets each
 * thread lends its own, under the same rules.
 *
 * THE OUTPUT: buf, bufpos, sentlen, the block list
 *
 * Pending output is buf[sentlen, bufpos) followed by the blocks from
 * reply_head to reply_tail, each b->buf[0, b->used). reply.c appends;
 * client_io_write() (client_io.c) consumes. The invariants:
 *
 *   - bytes go into buf only while the block list is empty, so buf's bytes
 *     always come before every block's;
 *   - bufpos > 0 means buf still has bytes to send, and then sentlen counts
 *     the bytes of buf already written (sentlen < bufpos);
 *   - bufpos == 0 means buf is done, and then sentlen counts the bytes of
 *     reply_head already written (sentlen < reply_head->used);
 *   - a block is freed as soon as its last byte is written; reply_bytes
 *     and reply_blocks count what is left (client-output-buffer-limit).
 *
 * A partial write (the kernel took fewer bytes than offered) only moves
 * sentlen, or frees the blocks it finished; nothing is copied. A short
 * write means the socket's send buffer is full, so the loop stops there
 * instead of trying again for an EAGAIN, and the client gets an
 * AE_WRITABLE handler that resumes from sentlen.
 *
 * THE WRITE LOOP, EXACTLY
 *
 * client_io_write() repeats: gather (buf's pending bytes and up to
 * NET_MAX_IOV_PER_WRITE chunks in all, into an iovec array); send them with
 * write() when there is one chunk (the common case: a small reply in buf) and
 * writev() otherwise; advance over what was taken. It stops when nothing is
 * pending, on a short write, on EAGAIN, or once the bytes written in this
 * call reach io_write_max, NET_MAX_WRITES_PER_EVENT (64 KB) on main: from
 * step 7 each call is offered no more than what is left of it, so one
 * event on main writes at most 64 KB, however large one reply, unless
 * nobody waits or at most 16 KB more would finish the output
 * (write_to_client, below; a worker's write has no such limit:
 * client_io.c).
 * Then the next client gets its turn; a client left with bytes pending keeps
 * its AE_WRITABLE handler and continues on the next turn.
 *
 * WHO MAY TOUCH A CLIENT
 *
 * The main thread, except for one direction of a client's I/O while a
 * worker owns it: from the moment main stores PENDING in io_read_state
 * (or io_write_state) and enqueues the job, until it takes the result and
 * stores IDLE, main touches none of that direction's fields (client.h
 * lists them) and the worker touches nothing else. A client is freed
 * directly (client_free) unless it is the one whose command is running
 * (server.current_client) or a worker owns either direction; then it is
 * only flagged CLOSE_ASAP and freed in before_sleep, once it is back.
 * CLIENT LIST waits for a worker's read to finish before reading the
 * input fields (io_offload_wait_read), and CLIENT KILL for an ACCEPT job
 * before it reads addr and laddr, which that job writes; the cron leaves
 * the reply buffer of a client being written alone.
 */
#include "networking.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "anet.h"
#include "blocked.h"
#include "client_io.h"
#include "commands.h"
#include "db.h"
#include "io_offload.h"
#include "io_threads.h"
#include "memory_prefetch.h"
#include "multi.h"
#include "reply.h"
#include "resp.h"
#include "server.h"
#include "trace.h"
#include "util.h"
#include "zmalloc.h"

static void client_read_handler(ae_loop *el, int fd, void *data, int mask);
static void client_write_handler(ae_loop *el, int fd, void *data, int mask);

/* Allocates and links a client with no buffers yet (they come with its
 * first read and its first reply); its socket is not in the event loop
 * yet. fd -1 makes a client with no connection (tests). */
static client *client_new(int fd) {
    client *c = zcalloc(sizeof(*c));
    c->fd = fd;
    c->id = ++server.next_client_id;
    c->resp = 2;
    c->authenticated = server.requirepass == NULL;
    c->db = &db0;
    c->ctime = c->last_interaction = util_mstime();
    c->io_keepalive = server.tcpkeepalive;
    resp_parser_init(&c->parser);
    if (fd != -1) {
        /* Linked into server.clients, newest first. */
        c->next = server.clients;
        if (server.clients) server.clients->prev = c;
        server.clients = c;
        server.clients_count++;
    }
    return c;
}

/* The accepted socket goes into the event loop; 0, or -1 after freeing
 * the client (and closing its socket). */
static int client_register(client *c) {
    if (ae_add_file(server.el, c->fd, AE_READABLE, client_read_handler, c) == AE_ERR) {
        server_log(LL_WARNING, "Error registering fd event for the new client: %s", strerror(errno));
        client_free(c);
        return -1;
    }
    return 0;
}

client *client_create(int fd) {
    client *c = client_new(fd);
    if (fd == -1) return c;
    client_io_accept(c);
    return client_register(c) == 0 ? c : NULL;
}

void networking_init(void) {
    /* io_offload is below this file in the layers: it hands a client back
     * through these, never by including networking.h (io_offload.h). */
    io_offload_set_main_halves(&(io_offload_main_halves){
        .accept_done = client_accept_done,
        .read_done = client_read_done,
        .write_done = client_write_done,
    });
    /* The dispatcher is below this file too: it shows each command to the
     * monitors through this hook. */
    commands_on_call(monitor_after_call);
    /* INFO's used_memory_startup: the keyspace, the command table and the
     * event loop are set up by now (Valkey records it at the end of
     * initServer). */
    server.stat_startup_memory = zmalloc_used_memory();
    if (server.stat_startup_memory > server.stat_peak_memory) server.stat_peak_memory = server.stat_startup_memory;
}

/*@ accept-done */
void client_accept_done(client *c) {
    if (client_register(c) == 0) server.stat_numconnections++;
}
/*@ end */

static void free_argv(int argc, obj **argv) {
    for (int i = 0; i < argc; i++) obj_decr_ref(argv[i]);
    zfree(argv);
}

static void free_reply_blocks(client *c) {
    reply_block *b = c->reply_head;
    while (b) {
        reply_block *next = b->next;
        reply_block_free(b);
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
    for (size_t i = 0; i < server.clients_to_close_len; i++) {
        if (server.clients_to_close[i] == c) {
            server.clients_to_close[i] = server.clients_to_close[--server.clients_to_close_len];
            return;
        }
    }
}

/*@ client-free */
/* Frees c now, or flags it CLOSE_ASAP when its command is running or a
 * worker owns either direction of its I/O: then the client is freed in
 * before_sleep once the worker has handed it back. */
void client_free(client *c) {
    ASSERT_MAIN_THREAD();
    if (server.current_client == c || client_io_owned(c)) {
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
    if (c->flags & CLIENT_MONITOR) monitor_remove(c);
    multi_free_client(c);   /* its queue, and its keys unwatched */
    blocked_client_gone(c); /* a blocked client leaves every waiting list */
    for (int i = c->cmdq_pos; i < c->cmdq_len; i++) free_argv(c->cmdq[i].argc, c->cmdq[i].argv);
    zfree(c->cmdq);
    if (c->argv) free_argv(c->argc, c->argv);
    resp_parser_reset(&c->parser);
    free_reply_blocks(c);
    zfree(c->buf);
    if (!client_io_borrows_shared_qb(c)) zfree(c->querybuf);
    zfree(c->name);
    zfree(c->lib_name);
    zfree(c->lib_ver);
    zfree(c);
}

void networking_free_closed_clients(void) {
    /* A client freed here may not be current: before_sleep runs between
     * commands, never inside one. One a worker still owns goes back on
     * the list (client_free defers it again) until its job is done. */
    client **list = server.clients_to_close;
    size_t n = server.clients_to_close_len;
    if (!n) return;
    server.clients_to_close = NULL;
    server.clients_to_close_len = server.clients_to_close_cap = 0;
    for (size_t i = 0; i < n; i++) {
        list[i]->flags &= ~CLIENT_CLOSE_ASAP;
        client_free(list[i]);
    }
    zfree(list);
}
/*@ end */

/* ---------------------------------------------------------------- accept */

/* Valkey's refusal, word for word (clientAcceptHandler in Valkey's
 * src/networking.c): a client that meets protected mode learns how to
 * get out of it. */
static const char PROTECTED_MODE_DENIED[] =
    "-DENIED Running in protected mode because protected mode is enabled and no password is set for the "
    "default user. In this mode connections are only accepted from the loopback interface. If you want to "
    "connect from external computers, you may adopt one of the following solutions: 1) Just disable "
    "protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by "
    "connecting from the same host the server is running, however MAKE SURE it's not publicly accessible "
    "from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can "
    "just disable the protected mode by editing the configuration file, and setting the protected mode "
    "option to 'no', and then restarting the server. 3) If you started the server manually just for "
    "testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for "
    "the default user. NOTE: You only need to do one of the above things in order for the server to start "
    "accepting connections from the outside.\r\n";

/* Valkey's protected mode: with no password, only loopback peers may talk
 * to the server. ip is the peer's address as accept() reported it. */
static int protected_mode_denies(const char *ip) {
    if (!server.protected_mode || server.requirepass) return 0;
    return !(strcmp(ip, "::1") == 0 || strncmp(ip, "127.", 4) == 0);
}

/*@ accept-handler */
/* Admits or refuses one accepted socket (Valkey: acceptCommonHandler and
 * clientAcceptHandler). accept4() already made it non-blocking. */
static void accept_common(int fd, const char *ip) {
    const char *err = NULL;
    if (server.clients_count >= server.maxclients) {
        err = "-ERR max number of clients reached\r\n";
        server.stat_rejected_conn++;
    } else if (protected_mode_denies(ip)) {
        err = PROTECTED_MODE_DENIED;
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
    /* The set-up's system calls go to a worker if one takes them (ACCEPT);
     * the client joins the event loop when they are done. */
    client *c = client_new(fd);
    if (io_offload_accept(c)) return;
    client_io_accept(c);
    client_accept_done(c);
}

/* A listening socket is readable: accept at most max-new-connections-per-
 * cycle connections (Valkey's default 10), so a connection storm cannot
 * hold the loop in accept() while connected clients wait; the rest stay
 * in the backlog and fire the event again on the next turn. */
void networking_accept_handler(ae_loop *el, int fd, void *data, int mask) {
    (void)el, (void)data, (void)mask;
    char ip[64], err[ANET_ERR_LEN];
    int port;
    for (int i = 0; i < server.max_new_conns_per_cycle; i++) {
        int cfd = anet_accept(err, fd, ip, sizeof(ip), &port);
        if (cfd == ANET_ERR) {
            if (errno != EWOULDBLOCK && errno != EAGAIN) server_log(LL_WARNING, "Accepting client connection: %s", err);
            return;
        }
        accept_common(cfd, ip);
    }
}
/*@ end */

/* ------------------------------------------------------------------ read */

/* The argument vector of a command that has run: freed by the thread
 * that allocated it when that is a worker (FREE_ARGV), else here. */
static void release_argv(client *c, int argc, obj **argv) {
    if (!io_offload_free_argv(c, argc, argv)) free_argv(argc, argv);
}

/* Runs the queued commands in order; stops when the client must close, or
 * when a command blocked it (blocked.c): the rest wait for it to be
 * unblocked, and networking_handle_unblocked resumes them. After each
 * command the clients waiting on keys it created are served (Valkey calls
 * handleClientsBlockedOnKeys after call()).
 * The phase clock switches to EXEC once for the whole batch, not once per
 * command: at depth 16 a clock read per command would cost a measurable
 * share of a command that takes a microsecond or two. */
/*@ run-queued */
static void run_queued_commands(client *c) {
    if (c->cmdq_pos == c->cmdq_len) return;
    /* Step 5's A/B. A worker may be writing c's earlier replies: with the
     * watermark (the default) these commands append behind it, and the
     * bytes are counted; with io-write-watermark no, main first waits the
     * write out, as a design without the watermark must. */
    bool during_write = atomic_load_explicit(&c->io_write_state, memory_order_relaxed) == CLIENT_IO_PENDING;
    if (during_write && !server.io_write_watermark) {
        io_offload_wait_write(c);
        during_write = false;
    }
    unsigned long long appended = c->reply_appended;
    int first = c->cmdq_pos;
    TRACE(0, TRACE_CMD_BEGIN, c->id, c->cmdq_len - first, appended);
    server_phase(PHASE_EXEC);
    int prefetched = c->cmdq_pos; /* step 6: the commands before it had their keys prefetched */
    while (c->cmdq_pos < c->cmdq_len && !(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_BLOCKED))) {
        if (c->cmdq_pos == prefetched) prefetched = memory_prefetch_pipeline(c);
        parsed_cmd *pc = &c->cmdq[c->cmdq_pos++];
        c->argc = pc->argc;
        c->argv = pc->argv;
        c->parsed_cmd = pc->cmd;
        pc->argv = NULL;
        process_command(c);
        blocked_handle_ready_keys();
        if (c->flags & CLIENT_BLOCKED) break; /* its argv stays: blocked.c runs it again */
        client_command_done(c);
        if (c->argv) release_argv(c, c->argc, c->argv);
        c->argc = 0;
        c->argv = NULL;
    }
    if (during_write) {
        server.stat_commands_during_write += c->cmdq_pos - first;
        server.stat_reply_bytes_during_write += (long long)(c->reply_appended - appended);
    }
    TRACE(0, TRACE_CMD_END, c->id, c->cmdq_pos - first, c->reply_appended);
    server_phase(PHASE_READ);
}
/*@ end */

/* Valkey: processInputBuffer. Runs what the read parsed; an
 * unauthenticated client parsed one command, so after it ran (it may have
 * been AUTH) the rest is parsed here and run, until no complete command
 * is left. A protocol error's reply follows the replies of the commands
 * before it, and the connection closes. */
static void process_input(client *c) {
    const char *err = c->io_read_flags & CLIENT_IO_READ_PROTO_ERROR ? c->io_parse_err : NULL;
    size_t err_len = c->io_parse_err_len;
    server.current_client = c;
    for (;;) {
        int had = c->cmdq_len - c->cmdq_pos;
        run_queued_commands(c);
        if (err) {
            reply_error_len(c, err, err_len);
            c->flags |= CLIENT_CLOSE_AFTER_REPLY;
            resp_parser_reset(&c->parser);
            c->qb_len = c->qb_pos = 0;
            break;
        }
        if (!had || (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_BLOCKED)) || c->qb_len == 0)
            break;
        if (client_io_parse(c, &err) == -1) err_len = resp_parser_error_len(&c->parser);
    }
    /* What the loop parsed from a private buffer may have emptied it. */
    client_io_settle_query_buffer(c);
    server.current_client = NULL;
}

/*@ read-prepare */
void client_read_prepare(client *c) {
    /* Valkey: client-query-buffer-limit; a client that has not
     * authenticated yet gets at most 1 MB, as in Valkey 8. */
    size_t qb_limit = (size_t)server.client_max_querybuf_len;
    if (!c->authenticated && qb_limit > 1024 * 1024) qb_limit = 1024 * 1024;
    c->io_qb_limit = qb_limit;
    c->io_proto_max_bulk_len = server.proto_max_bulk_len;
}
/*@ end */

/*@ read-done */
void client_read_done(client *c) {
    server.stat_total_reads++;
    ssize_t n = c->io_nread;
    if (n <= 0) {
        if (n == -1 && (c->io_read_errno == EAGAIN || c->io_read_errno == EINTR)) return;
        if (n == 0)
            server_log(LL_VERBOSE, "Client closed connection id=%llu addr=%s", (unsigned long long)c->id, c->addr);
        else
            server_log(LL_VERBOSE, "Reading from client: %s", strerror(c->io_read_errno));
        client_free(c);
        return;
    }
    c->last_interaction = server_turn_mstime();
    server.stat_net_input_bytes += n;
    c->net_input_bytes += (unsigned long long)n;
    if (c->io_read_flags & CLIENT_IO_READ_QB_LIMIT) {
        server_log(LL_WARNING, "Closing client that reached max query buffer length: id=%llu addr=%s qbuf=%zu",
                   (unsigned long long)c->id, c->addr, c->qb_len);
        server.stat_client_qbuf_limit_disconnections++;
        client_free(c);
        return;
    }
    process_input(c);
    if (c->flags & CLIENT_CLOSE_ASAP)
        client_free(c);
    else if (server.reply_write_timing == REPLY_WRITE_IMMEDIATE)
        networking_handle_pending_writes();
}
/*@ end */

/*@ read-handler */
/* One readable event. Unless a worker already owns the client's input,
 * the read goes to a worker if one takes it (io_offload.c decides);
 * otherwise main does both halves here: the I/O (client_io.c) and then
 * the rest (client_read_done). */
static void client_read_handler(ae_loop *el, int fd, void *data, int mask) {
    (void)el, (void)fd, (void)mask;
    client *c = data;
    if (atomic_load_explicit(&c->io_read_state, memory_order_relaxed) != CLIENT_IO_IDLE) return;
    client_read_prepare(c);
    if (io_offload_read(c)) return;
    server_phase(PHASE_READ);
    c->cur_tid = 0; /* main allocates this read's argvs: main frees them */
    client_io_read(c);
    commands_lookup_queued(c);
    client_read_done(c);
}
/*@ end */

/*@ handle-unblocked */
/* before_sleep: the clients unblocked since the last turn (served, timed
 * out, CLIENT UNBLOCK) run the commands they pipelined behind the blocked
 * one, in the order they were unblocked (Valkey: processUnblockedClients).
 * Their reads were kept on main while they were blocked (blocked.c), so no
 * worker holds their command queue. */
void networking_handle_unblocked(void) {
    for (client *c; (c = blocked_next_unblocked());) {
        if (c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY)) continue;
        server.current_client = c;
        run_queued_commands(c);
        server.current_client = NULL;
    }
}
/*@ end */

/* ----------------------------------------------------------------- write */

/*@ consume-written */
/* Takes n written bytes off the front of the pending output: buf first,
 * then whole blocks (freed), then part of the next block. */
static void consume_written(client *c, size_t n) {
    if (c->bufpos) {
        size_t in_buf = c->bufpos - c->sentlen;
        if (n < in_buf) {
            c->sentlen += n;
            return;
        }
        n -= in_buf;
        c->bufpos = c->sentlen = 0;
    }
    /* Also drops empty blocks at the head (a deferred length never set). */
    while (c->reply_head && n >= c->reply_head->used - c->sentlen) {
        reply_block *b = c->reply_head;
        n -= b->used - c->sentlen;
        c->sentlen = 0;
        c->reply_head = b->next;
        if (!c->reply_head) c->reply_tail = NULL;
        c->reply_bytes -= b->size;
        c->reply_blocks--;
        reply_block_free(b);
    }
    c->sentlen += n;
}
/*@ end */

/*@ write-done */
int client_write_done(client *c, int offloaded) {
    server.stat_total_writes += c->io_write_calls;
    if (c->io_nwritten) {
        server.stat_net_output_bytes += (long long)c->io_nwritten;
        c->net_output_bytes += c->io_nwritten;
        consume_written(c, c->io_nwritten);
        c->last_interaction = server_turn_mstime();
    }
    if (c->io_write_flags & CLIENT_IO_WRITE_ERROR) {
        server_log(LL_VERBOSE, "Error writing to client: %s", strerror(c->io_write_errno));
        client_free(c);
        return -1;
    }
    int handler_installed = ae_get_file_mask(server.el, c->fd) & AE_WRITABLE;
    if (!client_has_pending_replies(c)) {
        c->bufpos = c->sentlen = 0;
        free_reply_blocks(c);
        if (handler_installed) ae_del_file(server.el, c->fd, AE_WRITABLE);
        if (c->flags & CLIENT_CLOSE_AFTER_REPLY) {
            client_free(c);
            return -1;
        }
    } else if (!handler_installed) {
        /* A full socket waits for AE_WRITABLE. A job that stopped at its
         * watermark with room left goes round again with the next turn's
         * write pass; inline, step 0's rule: the handler. */
        if (offloaded && !(c->io_write_flags & CLIENT_IO_WRITE_SOCKET_FULL))
            client_queue_pending_write(c);
        else
            ae_add_file(server.el, c->fd, AE_WRITABLE, client_write_handler, c);
    }
    return 0;
}
/*@ end */

/* True when the client's pending output, buf[sentlen, bufpos) and then
 * each block's used bytes, is at most limit; the walk stops past it. */
static bool pending_at_most(const client *c, size_t limit) {
    size_t sum = c->bufpos ? c->bufpos - c->sentlen : 0, skip = c->bufpos ? 0 : c->sentlen;
    for (const reply_block *b = c->reply_head; b && sum <= limit; b = b->next, skip = 0) sum += b->used - skip;
    return sum <= limit;
}

/*@ write-to-client */
/* Main writes a client itself: the same three steps a worker's job takes
 * (mark, write, done). Returns -1 when the client was freed.
 *
 * The mark caps the turn at NET_MAX_WRITES_PER_EVENT, so one large reply
 * cannot hold main while other clients wait. When nobody is known to wait
 * (no event of this poll is left to handle, no other client is queued to
 * be written) the cap buys nothing and costs a loop turn per 64 KB, so
 * the write goes on in chunks of io-write-alone-max (1 MB): between two
 * chunks main asks the poller, without waiting, whether anything else is
 * ready (ae_others_ready), and ends the turn as soon as something is, the
 * socket is full or the reply is out. A request that arrives during the
 * write waits at most one chunk. Ending the turn after every chunk cost
 * the largest GETs part of their bandwidth (chapter 07). At 0 a chunk is
 * whatever the send buffer takes, which the kernel grows to a few
 * megabytes (net.ipv4.tcp_wmem's maximum, 4 MB by default).
 *
 * Either cap is lifted when what is pending exceeds it by no more than
 * NET_WRITE_TAIL_MAX (16 KB). A 1 MB value's reply is 1 MB and 12 bytes
 * (header and CRLF): capped at 1 MB while something else was ready, or
 * at 64 KB sixteen times, it would end with a turn of its own for 12
 * bytes (a poll, a writev, an epoll_ctl to drop AE_WRITABLE, and one to
 * ask for it after a 1 MB chunk), and the client could not finish its
 * reply until the clients before it had their turns. */
static int write_to_client(client *c) {
    int alone = ae_fired_waiting(server.el) == 0 && server.clients_pending_write == NULL;
    for (;;) {
        client_io_mark_write(c);
        if (alone) c->io_write_max = (size_t)server.io_write_alone_max;
        if (c->io_write_max && pending_at_most(c, c->io_write_max + NET_WRITE_TAIL_MAX)) c->io_write_max = 0;
        client_io_write(c);
        int capped = c->io_write_max && c->io_nwritten == c->io_write_max && !c->io_write_flags;
        if (client_write_done(c, 0) < 0) return -1;
        if (!alone || !capped || !client_has_pending_replies(c) || ae_others_ready(server.el, c->fd)) return 0;
    }
}
/*@ end */

/* AE_WRITABLE: the socket took only part of the output last time. */
static void client_write_handler(ae_loop *el, int fd, void *data, int mask) {
    (void)el, (void)fd, (void)mask;
    client *c = data;
    if (atomic_load_explicit(&c->io_write_state, memory_order_relaxed) != CLIENT_IO_IDLE) return;
    if (io_offload_write(c)) return;
    server_phase(PHASE_WRITE);
    write_to_client(c);
}

/*@ pending-writes */
/* before_sleep's write pass over the clients that have replies queued:
 * each goes to a worker if one takes it, or is written here. */
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
        /* A worker is writing it: the job's completion looks again. */
        if (atomic_load_explicit(&c->io_write_state, memory_order_relaxed) != CLIENT_IO_IDLE) continue;
        /* A client that already waits for AE_WRITABLE is left to it. */
        if (ae_get_file_mask(server.el, c->fd) & AE_WRITABLE) continue;
        if (io_offload_write(c)) continue;
        write_to_client(c);
    }
    server_phase(PHASE_OTHER);
    return processed;
}
/*@ end */

/* ------------------------------------------------------------------ cron */

/* Per client, once per cron tick: the idle timeout, the reply buffer's
 * size (reply_buffer_cron) and the soft output-buffer limit. */
/*@ clients-cron */
void networking_clients_cron(void) {
    long long now = util_mstime();
    /* INFO's used_memory_peak, sampled once a tick as Valkey's serverCron
     * does (and by INFO itself). */
    size_t used = zmalloc_used_memory();
    if (used > server.stat_peak_memory) server.stat_peak_memory = used;
    for (client *c = server.clients, *next; c; c = next) {
        next = c->next;
        /* A blocked client is not idle: it waits (Valkey: no timeout for
         * BLPOP); nor is a monitor, which only listens (Valkey exempts
         * replicas, and a monitor is marked as one). */
        if (server.maxidletime && !(c->flags & (CLIENT_BLOCKED | CLIENT_MONITOR)) &&
            now - c->last_interaction > (long long)server.maxidletime * 1000) {
            server_log(LL_VERBOSE, "Closing idle client");
            client_free(c);
            continue;
        }
        /* buf may be under a worker's write: resize it only when idle. */
        if (atomic_load_explicit(&c->io_write_state, memory_order_relaxed) == CLIENT_IO_IDLE) reply_buffer_cron(c, now);
        if (c->reply_head) client_check_output_limits(c);
    }
}
/*@ end */

/* --------------------------------------------------------------- monitor */

/* MONITOR
 *
 * A monitor is an ordinary client that asked to hear every command: after
 * its +OK it receives, for each command any client runs, one status line
 *
 *   +1712345678.123456 [0 127.0.0.1:50312] "SET" "k" "v"
 *
 * the wall clock in seconds and microseconds, the database and the
 * client's address, then each argument as the client sent it, in double
 * quotes with Valkey's escapes (sdscatrepr: \n \r \t \a \b, \" and \\, \xhh
 * for any other byte that is not printable).
 *
 * The line is a reply like any other: appended to each monitor's output
 * through reply.c, queued for the write pass, and written by main or by an
 * I/O thread as every reply is. Nothing here writes to a socket, and a
 * monitor that reads slowly is held to client-output-buffer-limit like any
 * normal client (Valkey counts a monitor as a normal client).
 *
 * What is shown, as Valkey's call() decides it: a command is shown once it
 * has run, so a transaction reads MULTI, its commands, then EXEC (EXEC's
 * own call ends after the commands it ran). Not shown: a command refused
 * before it ran (unknown, wrong arity, NOAUTH; queued by MULTI and thrown
 * away by DISCARD), an admin command (CONFIG, CLIENT LIST, SHUTDOWN,
 * MONITOR: Valkey deems them too dangerous to show), and the rerun of a
 * blocked command when a key serves it (it was shown when it blocked).
 * An EXEC refused before it ran is still shown, as Valkey's
 * execCommandAbort does. Passwords are shown as "(redacted)" (AUTH and
 * HELLO's AUTH replace them before the line is made: client_redact_arg).
 *
 * The monitor itself may still PING or ask CLIENT ID, but a command that
 * reads or writes keys is refused ("Replica can't interact with the
 * keyspace", commands.c), MONITOR again is ignored, and RESET makes it an
 * ordinary client again. */

void monitor_add(client *c) {
    if (server.monitors_len == server.monitors_cap) {
        server.monitors_cap = server.monitors_cap ? server.monitors_cap * 2 : 4;
        server.monitors = zrealloc(server.monitors, server.monitors_cap * sizeof(*server.monitors));
    }
    server.monitors[server.monitors_len++] = c;
    c->flags |= CLIENT_MONITOR;
}

void monitor_remove(client *c) {
    for (size_t i = 0; i < server.monitors_len; i++) {
        if (server.monitors[i] != c) continue;
        /* Keep the order: monitors are fed in the order they asked. */
        memmove(&server.monitors[i], &server.monitors[i + 1], (server.monitors_len - i - 1) * sizeof(client *));
        server.monitors_len--;
        break;
    }
    if (!server.monitors_len) { /* the last one gone: nothing kept for none */
        zfree(server.monitors);
        server.monitors = NULL;
        server.monitors_cap = 0;
    }
    c->flags &= ~CLIENT_MONITOR;
}

/* A growing line (the monitor feed's only string). */
typedef struct linebuf {
    char *p;
    size_t len, cap;
} linebuf;

static void lb_cat(linebuf *b, const char *s, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = zrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* One argument in double quotes, escaped as Valkey's sdscatrepr does. */
static void lb_cat_repr(linebuf *b, const char *p, size_t len) {
    lb_cat(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        char esc[5] = {'\\', 0, 0, 0, 0};
        const char *hit = strchr("\n\r\t\a\b", ch);
        if (ch == '\\' || ch == '"') {
            esc[1] = (char)ch;
            lb_cat(b, esc, 2);
        } else if (ch && hit) {
            esc[1] = "nrtab"[hit - "\n\r\t\a\b"];
            lb_cat(b, esc, 2);
        } else if (isprint(ch)) {
            lb_cat(b, (const char *)&ch, 1);
        } else {
            snprintf(esc, sizeof(esc), "\\x%02x", ch);
            lb_cat(b, esc, 4);
        }
    }
    lb_cat(b, "\"", 1);
}

size_t monitor_format_line(const client *c, obj *const *argv, int argc, long long now_us, char **out) {
    linebuf b = {0};
    char head[128];
    int n = snprintf(head, sizeof(head), "+%lld.%06lld [%d %s] ", now_us / 1000000, now_us % 1000000,
                     c->db ? c->db->id : 0, c->addr);
    lb_cat(&b, head, (size_t)n);
    for (int j = 0; j < argc; j++) {
        if (j) lb_cat(&b, " ", 1);
        lb_cat_repr(&b, argv[j]->ptr, argv[j]->len);
    }
    lb_cat(&b, "\r\n", 2);
    *out = b.p;
    return b.len;
}

/*@ monitor-feed */
void monitor_after_call(client *c, const struct command *cmd) {
    /* A blocked command is shown when it blocks; its rerun to serve it
     * (blocked.c) is not. */
    if (!server.monitors_len || !cmd || (cmd->flags & CMD_ADMIN) || (c->flags & CLIENT_REPROCESSING)) return;
    char *line;
    size_t len = monitor_format_line(c, c->argv, c->argc, util_ustime(), &line);
    for (size_t i = 0; i < server.monitors_len; i++) reply_proto(server.monitors[i], line, len);
    zfree(line);
    /* The feed's cost is no command's: the next command's time starts
     * here (call() measures from exec_clock_ns). */
    server.exec_clock_ns = util_monotonic_ns();
}
/*@ end */

void client_redact_arg(client *c, int j) {
    if (j >= c->argc) return;
    obj_decr_ref(c->argv[j]);
    c->argv[j] = obj_create_string("(redacted)", 10);
}

/*@ client-info */
/* Valkey's flag letters, in its order (catClientInfoString): O a monitor, x in MULTI,
 * b blocked, d a watched key touched, c closing after the reply, u
 * unblocked (its pipeline not yet resumed), A closing now; N for none. */
static void client_flags_string(const client *c, char *out) {
    char *p = out;
    if (c->flags & CLIENT_MONITOR) *p++ = 'O';
    if (c->flags & CLIENT_MULTI) *p++ = 'x';
    if (c->flags & CLIENT_BLOCKED) *p++ = 'b';
    if (c->flags & CLIENT_DIRTY_CAS) *p++ = 'd';
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) *p++ = 'c';
    if (c->flags & CLIENT_UNBLOCKED) *p++ = 'u';
    if (c->flags & CLIENT_CLOSE_ASAP) *p++ = 'A';
    if (p == out) *p++ = 'N';
    *p = '\0';
}

/* argv-mem: the bytes of the arguments parsed and not yet freed: the
 * command running now (EXEC's own while it runs its queue, as Valkey
 * counts) and, since a read parses a whole pipeline, the commands parsed
 * behind it. */
static size_t client_argv_mem(const client *c) {
    int argc;
    obj **argv = multi_top_argv(c, &argc);
    size_t n = 0;
    for (int i = 0; argv && i < argc; i++) n += argv[i]->len;
    for (int i = c->cmdq_pos; i < c->cmdq_len; i++)
        for (int j = 0; c->cmdq[i].argv && j < c->cmdq[i].argc; j++) n += c->cmdq[i].argv[j]->len;
    return n;
}

size_t client_memory_usage(const client *c) {
    size_t rbs = c->buf ? c->buf_size : 0;
    size_t mem = sizeof(*c) + rbs + c->reply_bytes + multi_queued_mem(c);
    if (atomic_load_explicit(&c->io_read_state, memory_order_relaxed) != CLIENT_IO_IDLE) return mem;
    return mem + (client_io_borrows_shared_qb(c) ? 0 : c->qb_cap) + client_argv_mem(c);
}

/* One CLIENT LIST line, every field Valkey 8.1 prints, in its order
 * (networking.c catClientInfoString). */
size_t client_info_string(const client *c, char *buf, size_t len) {
    /* The input fields may be a worker's: wait until it is done with them.
     * A worker's write is counted when main takes its result, which may
     * come after this command's read (another worker read it, or the
     * result waits in the outbox): tot-net-out adds a finished write's
     * bytes, so the line counts every byte written before it. */
    io_offload_wait_read(c);
    size_t untaken_out = io_offload_untaken_written(c);
    long long now = util_mstime();
    const char *cmd = c->lastcmd ? c->lastcmd->name : "NULL";
    char events[3] = {0}, flags[8];
    int mask = c->fd != -1 ? ae_get_file_mask(server.el, c->fd) : 0, e = 0;
    if (mask & AE_READABLE) events[e++] = 'r';
    if (mask & AE_WRITABLE) events[e++] = 'w';
    client_flags_string(c, flags);
    /* Memory the client holds: the shared query buffer is not its own
     * (client_memory_usage). */
    size_t rbs = c->buf ? c->buf_size : 0;
    size_t argv_mem = client_argv_mem(c), multi_mem = multi_queued_mem(c);
    int n = snprintf(buf, len,
                     "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=0 psub=0 "
                     "ssub=0 multi=%d watch=%d qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu "
                     "obl=%zu oll=%ld omem=%zu tot-mem=%zu events=%s cmd=%s user=default redir=-1 resp=%d "
                     "lib-name=%s lib-ver=%s tot-net-in=%llu tot-net-out=%llu tot-cmds=%lld",
                     (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "",
                     (now - c->ctime) / 1000, (now - c->last_interaction) / 1000, flags, c->db ? c->db->id : 0,
                     multi_queued_count(c), multi_watched_count(c), c->qb_len, c->qb_cap - c->qb_len, argv_mem,
                     multi_mem, rbs, c->buf_peak, c->bufpos, c->reply_blocks, c->reply_bytes, client_memory_usage(c),
                     events, cmd, c->resp, c->lib_name ? c->lib_name : "", c->lib_ver ? c->lib_ver : "",
                     c->net_input_bytes, c->net_output_bytes + untaken_out, c->commands_processed);
    return n < 0 ? 0 : (size_t)n >= len ? len - 1 : (size_t)n;
}
/*@ end */
