/* networking.h — connections: accept, read, parse, run, write, close.
 *
 * Step 0 (main-io layer); steps 4 and 5 route reads and writes through
 * the I/O threads from here. Owns the client lifecycle, the flow of bytes
 * between a socket and the command dispatcher (networking.c opens with
 * the rules), and the MONITOR feed.
 * Threads: main only in step 0.
 * Valkey: src/networking.c (acceptCommonHandler, readQueryFromClient,
 * processInputBuffer, writeToClient, handleClientsWithPendingWrites,
 * freeClient); src/socket.c (connSocketAcceptHandler).
 */
#ifndef SOLOIST_NETWORKING_H
#define SOLOIST_NETWORKING_H

#include "ae.h"
#include "client.h"
#include "client_io.h"

/* Registers the main halves below (client_accept_done, client_read_done,
 * client_write_done) with io_offload, which calls them when a worker
 * hands a client back. Once, from server_init, before io_offload_init. */
void networking_init(void);

client *client_create(int fd);
void client_free(client *c);

/* The main-thread halves of a read and a write (the I/O halves are in
 * client_io.c, run here or by a worker). client_read_prepare copies the
 * limits a read needs into the client; client_read_done accounts the
 * read, closes on EOF, an error or the query-buffer limit, and runs the
 * parsed commands; client_write_done takes the written bytes off,
 * closes on an error, and arranges for the rest (offloaded: the job's
 * write, to be followed by another). Both may free c; client_write_done
 * then returns -1. */
void client_read_prepare(client *c);
/* A new connection's set-up is done (client_io_accept, on a worker or
 * here): it joins the event loop. May free c. */
void client_accept_done(client *c);
void client_read_done(client *c);
int client_write_done(client *c, int offloaded);

void networking_accept_handler(ae_loop *el, int fd, void *data, int mask);
/* before_sleep's work: write pending replies, free closed clients. */
int networking_handle_pending_writes(void);
/* Resumes the pipelines of the clients blocked.c unblocked (before_sleep). */
void networking_handle_unblocked(void);
void networking_free_closed_clients(void);
/* Cron: idle timeouts, query buffer shrink. */
void networking_clients_cron(void);
/* MONITOR (Valkey: monitorCommand in src/server.c, replicationFeedMonitors
 * in src/replication.c, the feed's rules are at monitor_after_call in
 * networking.c). monitor_add flags c MONITOR and appends it to
 * server.monitors; monitor_remove takes it off again (RESET, client_free).
 * Main only. */
struct command;
void monitor_add(client *c);
void monitor_remove(client *c);
/* commands.c calls it after every command call() ran (a queued command
 * inside EXEC too, and EXEC itself after them), and for an EXEC refused
 * before it ran: shows the command to every monitor unless it is an
 * admin command or the rerun of a blocked one. */
void monitor_after_call(client *c, const struct command *cmd);
/* One monitor line for c's command argv[0, argc), with its "\r\n", into
 * out (zmalloc'd); returns its length. now_us is the wall clock (the
 * line's stamp). Valkey: replicationFeedMonitors with sdscatrepr's
 * quoting. */
size_t monitor_format_line(const client *c, obj *const *argv, int argc, long long now_us, char **out);
/* Replaces argument j of the command c is running with "(redacted)", so
 * that a password never reaches a monitor (AUTH, HELLO ... AUTH; Valkey:
 * redactClientCommandArgument). The command reads its arguments first. */
void client_redact_arg(client *c, int j);

/* The memory a client holds, CLIENT LIST's tot-mem (Valkey:
 * getClientMemoryUsage): the struct, its query buffer, reply buffer and
 * blocks, its parsed arguments and its transaction's queue. A client whose
 * read a worker owns counts its output only (its input is the worker's
 * until the read is done). */
size_t client_memory_usage(const client *c);
/* Formats one CLIENT LIST line (without the trailing newline). */
size_t client_info_string(const client *c, char *buf, size_t len);

#endif
