/* blocked.h — clients that wait: blocking pops, their keys and their timeouts.
 *
 * Step 9 (commands layer), beside the commands that block (cmd_zset.c:
 * BZPOPMIN, BZPOPMAX, BZMPOP). Owns: the registry of blocked clients by key,
 * the keys made ready, the deadline heap, the list of clients unblocked but
 * not yet resumed, and CLIENT UNBLOCK's mechanism. blocked.c opens with the
 * design (who may touch a blocked client, and why its reads stay on main).
 * Threads: main thread only.
 * Valkey: src/blocked.c (blockForKeys, signalKeyAsReady,
 * handleClientsBlockedOnKeys, unblockClient, processUnblockedClients),
 * src/timeout.c (getTimeoutFromObjectOrReply, handleBlockedClientsTimeout).
 */
#ifndef SOLOIST_BLOCKED_H
#define SOLOIST_BLOCKED_H

#include <stddef.h>
#include <stdint.h>

struct client;
struct obj;

/* A blocking command's timeout argument in seconds, as Valkey reads it
 * (getTimeoutFromObjectOrReply, UNIT_SECONDS): a long double, ceil'ed to
 * milliseconds; 0 blocks forever. *deadline is an absolute unix time in
 * ms, or 0. 1; or 0 with the error replied. */
int blocked_timeout_or_reply(struct client *c, const struct obj *arg, long long *deadline);

/* Blocks c, whose command is running, on keys[0, nkeys) (a key given twice
 * counts once) until deadline (unix ms; 0: forever). c's argv stays with
 * it: when one of the keys is created holding a value of `type` (enum
 * obj_type: OBJ_LIST for BLPOP, OBJ_ZSET for BZPOPMIN) the command runs
 * again (call()) and replies. The command must not reply itself. */
void blocked_block_for_keys(struct client *c, struct obj **keys, int nkeys, long long deadline, int type);

/* Serves the clients waiting on the keys created since the last call, in
 * the order the keys became ready and, per key, in the order the clients
 * blocked. Called after every top-level command (networking.c), as Valkey
 * calls handleClientsBlockedOnKeys after call(). */
void blocked_handle_ready_keys(void);

/* Replies "null" to every blocked client whose deadline is before now_ms
 * (before_sleep). */
void blocked_handle_timeouts(long long now_ms);

/* CLIENT UNBLOCK: unblocks c as a timeout would (error 0) or with
 * -UNBLOCKED (error 1). 1 if c was blocked. */
int blocked_unblock(struct client *c, int error);

/* The next client unblocked since the last call, in order, or NULL: its
 * blocked command is done (replied and freed), its pipelined commands are
 * left for the caller to run (networking_handle_unblocked). */
struct client *blocked_next_unblocked(void);

/* c is going away (client_free): out of every registry, list and heap. */
void blocked_client_gone(struct client *c);

/* INFO clients. */
long blocked_clients_count(void);
size_t blocked_keys_count(void);
size_t blocked_timeouts_count(void);

/* ---- The deadline heap (exported for its unit tests) ------------------
 *
 * A binary min-heap of (deadline, id): the earliest deadline on top, ties
 * in id order. Each entry carries its owner and a pointer to where the
 * owner keeps the entry's position (*slot), which the heap updates on
 * every move, so an owner removes its entry in O(log n) without a search.
 * *slot is BLOCKED_NO_SLOT while the owner has no entry. */
#define BLOCKED_NO_SLOT SIZE_MAX

typedef struct blocked_timer {
    long long deadline;
    uint64_t id;
    void *owner;
    size_t *slot;
} blocked_timer;

typedef struct blocked_timers {
    blocked_timer *v;
    size_t len, cap;
} blocked_timers;

void blocked_timers_add(blocked_timers *t, long long deadline, uint64_t id, void *owner, size_t *slot);
void blocked_timers_remove(blocked_timers *t, size_t slot);
/* The owner of the earliest entry whose deadline is before now (removed),
 * or NULL when none is due. */
void *blocked_timers_pop_expired(blocked_timers *t, long long now);
/* The earliest deadline, or -1 when the heap is empty. */
long long blocked_timers_next(const blocked_timers *t);
void blocked_timers_free(blocked_timers *t);

#endif
