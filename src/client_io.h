/* client_io.h — the half of a client's I/O that any thread may run.
 *
 * Step 4 (worker-io layer). Owns: the system calls that move a client's
 * bytes (read into the query buffer, write from the reply buffers up to
 * the watermark), parsing what was read into the command queue, and each
 * thread's shared query buffer. It touches only the client's own fields
 * and the calling thread's shared buffer: no statistic, no configuration,
 * no list of clients, no event loop, no keyspace. In tools/layers.py's
 * line the keyspace, server.h, reply.h and networking.h all sit above
 * this layer, and ae.h is one header below it that it never may reach,
 * so that rule is checked, not hoped for. (client_io_mark_write is main's
 * alone, but it touches only the client's fields, like the rest.)
 * Threads: the main thread (inline, when no worker takes the job) or the
 * I/O thread that owns the direction (client.io_read_state or
 * io_write_state is PENDING). The same functions run in both cases; that
 * is the seam step 4 cuts. networking.c does the other half, on main.
 * Valkey: src/networking.c readToQueryBuf, parseInputBuffer (the part an
 * I/O thread runs) and _writeToClient / writevToClient with their
 * !inMainThread() branch.
 */
#ifndef SOLOIST_CLIENT_IO_H
#define SOLOIST_CLIENT_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "client.h"

/* Valkey: NET_MAX_WRITES_PER_EVENT — stop writing one client once this
 * many bytes went out in one turn, so one large reply cannot starve the
 * others. */
#define NET_MAX_WRITES_PER_EVENT (64 * 1024)
/* soloist (step 7): main lifts its limit for a turn when all that is
 * pending exceeds it by no more than this (networking.c, write_to_client),
 * so no turn leaves a tail that small for a turn of its own. */
#define NET_WRITE_TAIL_MAX (16 * 1024)
/* Chunks (buf, then blocks) one writev carries; a block holds at least
 * 16 KB, so 64 of them cover the 64 KB per turn many times over. */
#define NET_MAX_IOV_PER_WRITE 64

/* One read() from c->fd into the query buffer (or straight into a big
 * bulk argument), then, unless it failed or passed c->io_qb_limit, parse
 * every complete command into c->cmdq. Leaves the outcome in io_nread,
 * io_read_errno, io_read_flags and io_parse_err, and hands the thread's
 * shared buffer back before returning. Needs io_proto_max_bulk_len and
 * io_qb_limit set by main. */
void client_io_read(client *c);

/* Parses complete commands from the query buffer into c->cmdq: all of
 * them, or one if the client has not authenticated. Returns 0, or -1
 * after a protocol error (text in *err). */
int client_io_parse(client *c, const char **err);

/* Main, before a write: sets the watermark to the end of what is pending
 * now (step 5), and the most the write may send to
 * NET_MAX_WRITES_PER_EVENT (step 7; a hand-off to a worker then lifts it
 * by setting io_write_max to 0, and main's own write may set it to
 * io-write-alone-max or lift it: networking.c, write_to_client). */
void client_io_mark_write(client *c);

/* Writes pending output up to the watermark: at most io_write_max bytes
 * (0: no limit), stopping on a full socket or an error. Reference blocks
 * (step 7) go out as iovecs over the value's own bytes. Consumes
 * nothing: it reports io_nwritten and main takes the bytes off (it alone
 * frees blocks and drops references). */
void client_io_write(client *c);

/* A new connection's set-up, the part that is system calls on its own
 * socket: TCP_NODELAY, keepalive (c->io_keepalive seconds, 0: off), and
 * the two "ip:port" strings CLIENT LIST shows. The ACCEPT job runs it on a
 * worker; main runs it itself when none takes the job. */
void client_io_accept(client *c);

/* Ends a loan of the calling thread's shared query buffer: the unparsed
 * tail, if any, moves into a private buffer with room for one more read;
 * an empty private buffer is freed. client_io_read ends with it; main
 * calls it after parsing more of a private buffer itself. */
void client_io_settle_query_buffer(client *c);

/* Whether c's query buffer is the calling thread's shared one (it is
 * lent, not owned: not counted as c's memory, never freed with c). */
bool client_io_borrows_shared_qb(const client *c);

/* Frees the calling thread's shared query buffer (a thread that exits). */
void client_io_thread_exit(void);

#endif
