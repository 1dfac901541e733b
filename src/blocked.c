/* blocked.c — clients that wait: the registry of blocked clients by key,
 * the keys made ready, the deadline heap, and the return to work.
 *
 * Step 9 (commands layer, beside the commands that block: cmd_list.c,
 * cmd_zset.c). Owns every blocked client's struct blocked_state (client.h's
 * bstate), the registry key -> FIFO of waiters, the ready-keys list, the
 * deadline heap and the list of clients unblocked but not yet resumed.
 * Threads: main thread only, like the keyspace it watches.
 * Valkey: src/blocked.c (blockForKeys, signalKeyAsReady,
 * handleClientsBlockedOnKeys, handleClientsBlockedOnKey,
 * unblockClientOnKey, unblockClientOnTimeout, unblockClientOnError,
 * processUnblockedClients), src/timeout.c (getTimeoutFromObjectOrReply,
 * addClientToTimeoutTable, handleBlockedClientsTimeout), the blocked and
 * unblocked checks of src/io_threads.c (trySendReadToIOThreads), all at
 * Valkey 8.1.
 *
 * WHAT BLOCKING IS
 *
 * BZPOPMIN q 0 on an absent q does not reply. The command asks this module
 * to block the client (blocked_block_for_keys) and returns; the client
 * keeps its argv, is flagged CLIENT_BLOCKED, and waits in the registry
 * under each of its keys, behind the clients that blocked on that key
 * before it. A blocked client runs nothing else: its pipelined commands
 * stay queued behind the blocked one (networking.c's run_queued_commands
 * stops at it) until it is unblocked, in one of four ways:
 *
 *   - served: a command creates one of its keys (db_add signals "added",
 *     the listener below puts the key on the ready list), and after that
 *     command, blocked_handle_ready_keys runs the blocked command again
 *     through call(), for the first waiter on the key, then the next, while
 *     the key still holds elements of the type the waiter blocked for (a
 *     list for BLPOP, a sorted set for BZPOPMIN). Running the command again
 *     is Valkey 7's design (unblockClientOnKey reprocesses the command): the
 *     popping code exists once, and the rerun sees the keyspace as it is
 *     now, so a waiter on "a b" served because b was created still gets
 *     WRONGTYPE if a has meanwhile become a string, exactly as in Valkey. A
 *     key created with another type (SET q x) serves none of the waiters
 *     that blocked for a list or a sorted set: they stay blocked, as
 *     Valkey's type check in handleClientsBlockedOnKey leaves them;
 *   - timed out: its deadline passed (before_sleep, blocked_handle_timeouts):
 *     a null array;
 *   - CLIENT UNBLOCK id [TIMEOUT|ERROR]: the same null, or -UNBLOCKED;
 *   - gone: it disconnected or was killed (blocked_client_gone, from
 *     client_free): removed from every list, nothing replied.
 *
 * The first three end the blocked command (its argv freed, CLIENT REPLY
 * SKIP counted) and put the client on the unblocked list, flagged
 * CLIENT_UNBLOCKED; before_sleep resumes its pipelined commands in order
 * (networking_handle_unblocked), as Valkey's processUnblockedClients does.
 * Ready keys are served after each command at the top level, so keys made
 * ready inside a pipeline are served between its commands and keys made
 * ready inside EXEC after the whole transaction (EXEC is one command there).
 *
 * THE DEADLINES
 *
 * A deadline is a unix time in ms (Valkey's mstime resolution), and a
 * client times out once now is past it (deadline < now, as
 * handleBlockedClientsTimeout breaks at timeout >= now). The check runs in
 * before_sleep, as in Valkey, so the loop's own wake-ups bound the lateness:
 * at worst the cron's period, 1000/hz ms (100 ms at hz 10), when nothing
 * else wakes the loop — Valkey's resolution. The deadlines live in a binary
 * min-heap ordered by (deadline, client id): the earliest on top, checked in
 * O(1) every turn; an insert or a removal (a client served or killed before
 * its deadline) is O(log n), the entry's position kept in the client's
 * bstate. Valkey keeps a radix tree keyed by deadline and client for the
 * same reason; an ae timer per client would not do: soloist's timers (like
 * Valkey's) are an unsorted list that every loop turn walks whole, fine for
 * a handful of timers, not for 10,000 clients blocked with a timeout.
 *
 * WHO MAY TOUCH A BLOCKED CLIENT, AND THE I/O THREADS
 *
 * Everything here runs on main: the registry, the heap and bstate are
 * main's alone, like the keyspace. A client blocks while its command runs,
 * which is after its read was handed back: its read token (io_read_state)
 * is IDLE when it blocks (asserted), so a blocked client holds no read job.
 * A write job may still be in flight with the replies before the blocked
 * command; the watermark (step 5) already lets main append behind such a
 * write, and the reply of a served or timed-out client is one more append.
 *
 * While a client is BLOCKED or UNBLOCKED, io_offload_read refuses to hand
 * its read to a worker, as Valkey's trySendReadToIOThreads does "for
 * simplicity". The simplicity is real: a worker's read parses into the
 * command queue, and main must be free to resume that queue at any moment
 * a blocked client is unblocked — by another client's ZADD, a timeout or
 * CLIENT UNBLOCK, none of them an event of this client's own. With reads on
 * main, the queue is never under a worker's token when that happens, and no
 * unblock has to wait for a job. The read event itself stays registered
 * and is handled on main: a client that disconnects while blocked reads
 * EOF and is freed (and so leaves the registry) at once, and the commands
 * it pipelines behind the blocked one are parsed and queued. The cost is
 * small: a blocked client sends little by definition. Once its queue has
 * been resumed (CLIENT_UNBLOCKED cleared), its reads may go to workers again.
 */
#include "blocked.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "db.h"
#include "hashtable.h"
#include "object.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* ---- the deadline heap ------------------------------------------------ */

static int timer_before(const blocked_timer *a, const blocked_timer *b) {
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->id < b->id);
}

static void timer_place(blocked_timers *t, size_t i, blocked_timer e) {
    t->v[i] = e;
    *e.slot = i;
}

/* Moves the entry at i up while it is before its parent (timer_before:
 * the earlier deadline, then the lower id), as far as it must, to the top
 * if need be. Every entry moved, the parents it passes and itself where it
 * stops, lands with timer_place, so each owner's *slot stays its position. */
static void timer_sift_up(blocked_timers *t, size_t i) {
    /*@ exercise: heap-sift-up */
    blocked_timer e = t->v[i];
    while (i > 0 && timer_before(&e, &t->v[(i - 1) / 2])) {
        timer_place(t, i, t->v[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    timer_place(t, i, e);
    /*@ end */
}

/* Moves the entry at i down while one of its children (those below
 * t->len) is before it, always below the earlier of the two, until no
 * child is before it. Every entry moved lands with timer_place, as in the
 * sift-up. */
static void timer_sift_down(blocked_timers *t, size_t i) {
    /*@ exercise: heap-sift-down */
    blocked_timer e = t->v[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        const blocked_timer *best = &e;
        if (l < t->len && timer_before(&t->v[l], best)) best = &t->v[m = l];
        if (l + 1 < t->len && timer_before(&t->v[l + 1], best)) m = l + 1;
        if (m == i) break;
        timer_place(t, i, t->v[m]);
        i = m;
    }
    timer_place(t, i, e);
    /*@ end */
}

void blocked_timers_add(blocked_timers *t, long long deadline, uint64_t id, void *owner, size_t *slot) {
    if (t->len == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->v = zrealloc(t->v, t->cap * sizeof(*t->v));
    }
    t->v[t->len] = (blocked_timer){deadline, id, owner, slot};
    timer_sift_up(t, t->len++);
}

/* Takes out the entry at position slot (the owner's *slot) and no other:
 * its owner's slot becomes BLOCKED_NO_SLOT, and stays so when the entry
 * was the last of the array (nothing fills its gap); otherwise the last
 * entry fills the gap and moves up or down, as it belongs. */
void blocked_timers_remove(blocked_timers *t, size_t slot) {
    assert(slot < t->len);
    /*@ exercise: heap-remove */
    *t->v[slot].slot = BLOCKED_NO_SLOT;
    if (slot == --t->len) return;
    timer_place(t, slot, t->v[t->len]);
    /* The entry moved in from the end may belong above or below. */
    if (slot > 0 && timer_before(&t->v[slot], &t->v[(slot - 1) / 2]))
        timer_sift_up(t, slot);
    else
        timer_sift_down(t, slot);
    /*@ end */
}

/* The top's owner, removed from the heap (blocked_timers_remove), when its
 * deadline is strictly before now; NULL when the heap is empty or nothing
 * is due (at the deadline itself nothing is). */
/*@ timers-pop-expired */
void *blocked_timers_pop_expired(blocked_timers *t, long long now) {
    /*@ exercise: heap-pop */
    if (t->len == 0 || t->v[0].deadline >= now) return NULL;
    void *owner = t->v[0].owner;
    blocked_timers_remove(t, 0);
    return owner;
    /*@ end */
}
/*@ end */

long long blocked_timers_next(const blocked_timers *t) { return t->len ? t->v[0].deadline : -1; }

void blocked_timers_free(blocked_timers *t) {
    zfree(t->v);
    memset(t, 0, sizeof(*t));
}

/* ---- the registry ------------------------------------------------------- */

struct waiting_key;

/* One client waiting on one key: a node of the key's FIFO. */
typedef struct waiter {
    struct waiter *prev, *next;
    client *c;
    struct waiting_key *k;
} waiter;

/* A key somebody waits on (Valkey: an entry of db->blocking_keys). Freed
 * when its last waiter leaves, unless it is on the ready list or being
 * served (ready, pinned): those paths free it when they are done. */
typedef struct waiting_key {
    waiter *head, *tail;
    long nwaiters;
    int ready, pinned;
    hashtable_key name; /* the hashtable's view of key[] */
    char key[];
} waiting_key;

struct blocked_state {
    struct command *cmd; /* the command to run again when served */
    int type;            /* the enum obj_type that serves it (Valkey: bstate.btype) */
    long long deadline;  /* unix ms, 0: forever */
    size_t timer_slot;   /* position in the heap, BLOCKED_NO_SLOT if none */
    int nkeys;
    waiter w[]; /* one per distinct key */
};

static hashtable *waiting;  /* waiting_key*, owns them */
static waiting_key **ready; /* keys created since the last serve, in order */
static size_t ready_len, ready_cap;
static blocked_timers timers;
static long nblocked;
static client **unblocked; /* unblocked, pipelines not yet resumed: [unblocked_pos, unblocked_len) */
static size_t unblocked_pos, unblocked_len, unblocked_cap;

static const void *waiting_get_key(const void *p) { return &((const waiting_key *)p)->name; }
static const hashtable_type waiting_type = {
    .hash_key = hashtable_key_hash,
    .entry_get_key = waiting_get_key,
    .key_compare = hashtable_key_compare,
    .entry_destructor = zfree,
};

static waiting_key *find_waiting(const char *key, size_t len) {
    void *found;
    hashtable_key hk = {key, len};
    return waiting && hashtable_find(waiting, &hk, &found) ? found : NULL;
}

static void drop_if_unused(waiting_key *k) {
    if (k->nwaiters == 0 && !k->ready && !k->pinned) hashtable_delete(waiting, &k->name);
}

/* db_add's listener (db.h, "added"): a key someone waits on was created. */
static void key_added(db *d, obj *key) {
    (void)d; /* soloist serves db 0 alone */
    if (hashtable_size(waiting) == 0) return;
    waiting_key *k = find_waiting(key->ptr, key->len);
    if (!k || k->ready) return;
    k->ready = 1;
    if (ready_len == ready_cap) {
        ready_cap = ready_cap ? ready_cap * 2 : 16;
        ready = zrealloc(ready, ready_cap * sizeof(*ready));
    }
    ready[ready_len++] = k;
}

static waiting_key *waiting_key_get(obj *key) {
    if (!waiting) {
        /* The first client to block sets the registry up and starts
         * listening; a server nobody blocks on pays nothing per db_add. */
        waiting = hashtable_create(&waiting_type);
        db_on_added(key_added);
    }
    waiting_key *k = find_waiting(key->ptr, key->len);
    if (k) return k;
    k = zcalloc(sizeof(*k) + key->len + 1);
    memcpy(k->key, key->ptr, key->len);
    k->name = (hashtable_key){k->key, key->len};
    hashtable_add(waiting, k);
    return k;
}

/* Puts c in the line of each distinct key, at its tail: one waiter per
 * key however often the key is named and wherever (BLPOP q r q 0: two
 * waiters, one on q and one on r), each counted in its key's nwaiters.
 * Then the client's own state, once whatever the number of keys:
 * c->bstate, CLIENT_BLOCKED, one more in nblocked (leave_registry undoes
 * all three). A deadline (not 0) goes into the heap, its position in
 * bs->timer_slot. */
/*@ block-for-keys */
void blocked_block_for_keys(client *c, obj **keys, int nkeys, long long deadline, int type) {
    /* It blocks while its command runs: its read was handed back. */
    assert(atomic_load_explicit(&c->io_read_state, memory_order_relaxed) == CLIENT_IO_IDLE);
    struct blocked_state *bs = zcalloc(sizeof(*bs) + (size_t)nkeys * sizeof(waiter));
    bs->cmd = c->cmd;
    bs->type = type;
    bs->deadline = deadline;
    bs->timer_slot = BLOCKED_NO_SLOT;
    /*@ exercise: wait-in-line */
    for (int i = 0; i < nkeys; i++) {
        waiting_key *k = waiting_key_get(keys[i]);
        /* A key given twice: this client is already the key's last waiter. */
        if (k->tail && k->tail->c == c) continue;
        waiter *w = &bs->w[bs->nkeys++];
        *w = (waiter){.prev = k->tail, .c = c, .k = k};
        if (k->tail)
            k->tail->next = w;
        else
            k->head = w;
        k->tail = w;
        k->nwaiters++;
    }
    c->bstate = bs;
    c->flags |= CLIENT_BLOCKED;
    nblocked++;
    if (deadline) blocked_timers_add(&timers, deadline, c->id, c, &bs->timer_slot);
    /*@ end */
}
/*@ end */

/* Takes c out of every key's FIFO and the heap and frees its state. */
static void leave_registry(client *c) {
    struct blocked_state *bs = c->bstate;
    /*@ exercise: leave-line */
    for (int i = 0; i < bs->nkeys; i++) {
        waiter *w = &bs->w[i];
        waiting_key *k = w->k;
        if (w->prev)
            w->prev->next = w->next;
        else
            k->head = w->next;
        if (w->next)
            w->next->prev = w->prev;
        else
            k->tail = w->prev;
        k->nwaiters--;
        drop_if_unused(k);
    }
    if (bs->timer_slot != BLOCKED_NO_SLOT) blocked_timers_remove(&timers, bs->timer_slot);
    /*@ end */
    zfree(bs);
    c->bstate = NULL;
    c->flags &= ~CLIENT_BLOCKED;
    nblocked--;
}

/* The blocked command is over, replied: free its argv (what
 * run_queued_commands does after each command), and queue the client for
 * its pipeline to be resumed. */
static void finish_and_queue(client *c) {
    client_command_done(c);
    for (int i = 0; i < c->argc; i++) obj_decr_ref(c->argv[i]);
    zfree(c->argv);
    c->argv = NULL;
    c->argc = 0;
    c->flags |= CLIENT_UNBLOCKED;
    if (unblocked_len == unblocked_cap) {
        unblocked_cap = unblocked_cap ? unblocked_cap * 2 : 16;
        unblocked = zrealloc(unblocked, unblocked_cap * sizeof(*unblocked));
    }
    unblocked[unblocked_len++] = c;
}

/* A blocked command that ends without running again (timeout, CLIENT
 * UNBLOCK) still counts as one call of it, as Valkey's
 * updateStatsOnUnblock counts it (CLIENT UNBLOCK ERROR as a rejected
 * call, unblockClientOnError); call() did not count it when it blocked. */
static void count_unblocked_call(struct command *cmd, int rejected) {
    if (!cmd) return;
    cmd->calls++;
    if (rejected) cmd->rejected_calls++;
    server.stat_numcommands++;
}

/* ---- serving ---------------------------------------------------------------- */

/*@ serve */
/* Runs c's blocked command again, c being current (Valkey:
 * unblockClientOnKey, which reprocesses the command). */
static void serve(client *c) {
    struct command *cmd = c->bstate->cmd;
    leave_registry(c);
    client *prev = server.current_client;
    server.current_client = c;
    c->cmd = cmd;
    c->flags |= CLIENT_REPROCESSING;
    call(c);
    c->flags &= ~CLIENT_REPROCESSING;
    server.current_client = prev;
    /* The rerun cannot block again: the key it was served for holds
     * elements of its type, so it pops, or replies WRONGTYPE for a key
     * before it. Should it block anyway, it waits again, argv kept. */
    if (!(c->flags & CLIENT_BLOCKED)) finish_and_queue(c);
}
/*@ end */

/* Valkey: handleClientsBlockedOnKey. The waiters in the order they
 * blocked, at most as many as waited when it started (a rerun that blocks
 * again joins the tail and cannot loop). A killed client stays in the
 * registry until before_sleep frees it, and is never served; a waiter for
 * another type than the key now holds is passed over and keeps waiting
 * (BLPOP on a key that became a sorted set). Serving ends when the key
 * holds nothing more. The key is looked up with db_lookup_write, which
 * counts no keyspace hit or miss: serving is not a read of the client's
 * (Valkey looks it up with LOOKUP_NOEFFECTS). A served client leaves the
 * registry, freeing its own waiter only, so the next one is read before
 * it is served. */
static void serve_key(waiting_key *k) {
    obj *key = obj_create_string(k->key, k->name.len);
    k->pinned = 1;
    /*@ exercise: serve-in-order */
    waiter *w = k->head;
    for (long budget = k->nwaiters; budget > 0 && w; budget--) {
        waiter *next = w->next;
        client *c = w->c;
        if (!(c->flags & CLIENT_CLOSE_ASAP)) {
            obj *o = db_lookup_write(c->db, key);
            if (!o || obj_length(o) == 0) break;
            if (o->type == c->bstate->type) serve(c);
        }
        w = next;
    }
    /*@ end */
    k->pinned = 0;
    obj_decr_ref(key);
}

/*@ handle-ready-keys */
void blocked_handle_ready_keys(void) {
    /* Serving runs commands, which may make more keys ready: those go on a
     * fresh list, served by the next round. */
    while (ready_len) {
        waiting_key **list = ready;
        size_t n = ready_len;
        ready = NULL;
        ready_len = ready_cap = 0;
        for (size_t i = 0; i < n; i++) {
            list[i]->ready = 0;
            serve_key(list[i]);
            drop_if_unused(list[i]);
        }
        zfree(list);
    }
}
/*@ end */

/* ---- timeouts, CLIENT UNBLOCK, going away -------------------------------- */

/* Ends c's wait without running its command: a null array (the reply of
 * a blocking pop that timed out, Valkey's replyToBlockedClientTimedOut),
 * or the error. */
static void unblock_with_reply(client *c, const char *error) {
    struct command *cmd = c->bstate->cmd;
    leave_registry(c);
    if (error)
        reply_error(c, error);
    else
        reply_null_array(c);
    count_unblocked_call(cmd, error != NULL);
    finish_and_queue(c);
}

/*@ handle-timeouts */
void blocked_handle_timeouts(long long now_ms) {
    client *c;
    while ((c = blocked_timers_pop_expired(&timers, now_ms))) unblock_with_reply(c, NULL);
}
/*@ end */

int blocked_unblock(client *c, int error) {
    if (!(c->flags & CLIENT_BLOCKED)) return 0;
    unblock_with_reply(c, error ? "-UNBLOCKED client unblocked via CLIENT UNBLOCK" : NULL);
    return 1;
}

client *blocked_next_unblocked(void) {
    if (unblocked_pos == unblocked_len) {
        unblocked_pos = unblocked_len = 0;
        return NULL;
    }
    client *c = unblocked[unblocked_pos++];
    c->flags &= ~CLIENT_UNBLOCKED;
    return c;
}

/*@ client-gone */
void blocked_client_gone(client *c) {
    if (c->flags & CLIENT_BLOCKED) leave_registry(c);
    if (!(c->flags & CLIENT_UNBLOCKED)) return;
    c->flags &= ~CLIENT_UNBLOCKED;
    for (size_t i = unblocked_pos; i < unblocked_len; i++) {
        if (unblocked[i] == c) {
            memmove(&unblocked[i], &unblocked[i + 1], (unblocked_len - i - 1) * sizeof(*unblocked));
            unblocked_len--;
            return;
        }
    }
}
/*@ end */

long blocked_clients_count(void) { return nblocked; }
size_t blocked_keys_count(void) { return waiting ? hashtable_size(waiting) : 0; }
size_t blocked_timeouts_count(void) { return timers.len; }

/* ---- the timeout argument ----------------------------------------------- */

/* Valkey's getLongDoubleFromObject: strtold over the whole argument, no
 * leading space, no NaN, no overflow. */
static int parse_long_double(const obj *o, long double *out) {
    char *end;
    errno = 0;
    long double v = strtold(o->ptr, &end);
    if (o->len == 0 || isspace((unsigned char)o->ptr[0]) || (size_t)(end - o->ptr) != o->len ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) || isnan(v))
        return 0;
    *out = v;
    return 1;
}

int blocked_timeout_or_reply(client *c, const obj *arg, long long *deadline) {
    long double secs;
    if (!parse_long_double(arg, &secs)) {
        reply_error(c, "timeout is not a float or out of range");
        return 0;
    }
    long double ms = secs * 1000.0L;
    if (ms > (long double)LLONG_MAX) {
        reply_error(c, "timeout is out of range");
        return 0;
    }
    long long t = (long long)ceill(ms);
    if (t < 0) {
        reply_error(c, "timeout is negative");
        return 0;
    }
    long long now = util_mstime();
    if (t > 0 && t > LLONG_MAX - now) {
        reply_error(c, "timeout is out of range"); /* now + t would overflow */
        return 0;
    }
    *deadline = t > 0 ? now + t : 0;
    return 1;
}
