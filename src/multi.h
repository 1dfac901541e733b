/* multi.h — transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
 *
 * Step 9 (commands layer): transactions. Owns: each client's queue of commands
 * waiting for EXEC and its list of watched keys, and the registry from a
 * watched key to the clients watching it. multi.c opens with the rules.
 * Threads: main thread only. No I/O job reads or writes any of it.
 * Valkey: src/multi.c (queueMultiCommand, execCommand, watchForKey,
 * touchWatchedKey, touchAllWatchedKeysInDb, isWatchedKeyExpired).
 */
#ifndef SOLOIST_MULTI_H
#define SOLOIST_MULTI_H

#include <stdbool.h>
#include <stddef.h>

#include "client.h"

/* Registers the queue with the dispatcher (commands_on_multi) and the
 * watch registry's listener with the keyspace (db_on_modified). Server
 * start, before the first command. */
void multi_init(void);

/* Whether c is in a transaction: after MULTI, until EXEC or DISCARD, EXEC's
 * own run included. A command that would block (a blocking pop) answers at
 * once instead, as Valkey's do inside a transaction. */
static inline bool multi_active(const client *c) { return (c->flags & CLIENT_MULTI) != 0; }

/* Frees c's queued commands and unwatches its keys (client_free). */
void multi_free_client(client *c);

/* CLIENT LIST's fields (Valkey: catClientInfoString). */
int multi_queued_count(const client *c);  /* multi=: -1 when not in MULTI */
int multi_watched_count(const client *c); /* watch= */
size_t multi_queued_mem(const client *c); /* multi-mem=: argument bytes plus a pointer per argument */
/* The arguments of the command c runs at top level: EXEC's own while EXEC
 * runs the queued commands (c->argv is then the queued command's), else
 * c->argv. argv-mem= counts these, as Valkey counts EXEC's. */
obj **multi_top_argv(const client *c, int *argc);

/* For the unit tests: the registry's size (keys watched by anyone), and
 * whether c watches key. */
size_t multi_registry_size(void);
bool multi_watches(const client *c, const char *key, size_t len);

#endif
