/* multi.c — transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
 *
 * Step 9 (commands layer): transactions. Owns: multi_commands[]; each client's
 * multi_state (the commands queued since MULTI, the keys it watches); the
 * registry from a watched key to the clients watching it (Valkey's
 * db->watched_keys); the listener the keyspace calls when a key changes.
 * Threads: main thread only, every byte of it; see "Who owns a queued
 * command" below for the one thing that crosses threads.
 * Valkey: src/multi.c (queueMultiCommand, execCommand, discardTransaction,
 * watchForKey, unwatchAllKeys, touchWatchedKey, touchAllWatchedKeysInDb,
 * isWatchedKeyExpired) and src/server.c processCommand, which decides
 * what is queued.
 *
 * A TRANSACTION
 *
 * After MULTI, process_command still looks each command up and checks it
 * (name, arity, authentication, "not allowed inside a transaction"), then
 * hands it here instead of running it: it is queued and the reply is
 * +QUEUED. EXEC, DISCARD, MULTI, WATCH, QUIT and RESET are never queued
 * (their entries carry CMD_NO_QUEUE), as Valkey 8.1's processCommand lets
 * exactly those through; MULTI and WATCH carry CMD_NO_MULTI as well, as
 * SHUTDOWN does, so inside a transaction they are refused. A
 * refusal while queueing flags the transaction (CLIENT_DIRTY_EXEC) and EXEC
 * answers -EXECABORT; an error a queued command meets when it runs is just
 * that command's element of EXEC's array. Nothing is queued once the
 * transaction is doomed (dirty either way): the client still reads
 * +QUEUED, and the memory is not spent.
 *
 * EXEC runs the queue through call(), never process_command: the checks
 * were made when each was queued, and whatever process_command does after
 * a top-level command (serving keys a write made ready for a blocked
 * client) then happens once, after the whole EXEC, as in Valkey.
 *
 * WATCH
 *
 * WATCH k makes the next EXEC fail (a null array) if k changes before it.
 * The registry maps each watched key to the list of its watchers, and each
 * client keeps the list of its own watches, so a change finds its
 * watchers in one lookup and a client forgets all its keys without a
 * search (unwatch_all). A key changes when a write command says so
 * (db_signal_modified, called by the commands where Valkey calls
 * signalModifiedKey: only when something changed, so SET NX on an
 * existing key touches nothing), when expiry deletes it (lazy or active),
 * and when FLUSHALL or FLUSHDB empties the database (key NULL, before the
 * keys go). A touched watcher is flagged CLIENT_DIRTY_CAS and forgets its
 * watches at once: nothing more can change its fate. A key that had
 * already expired when it was watched is special (Valkey: wk->expired):
 * its deletion changes nothing logically, so it clears the mark instead
 * of dirtying the client; EXEC also fails if a key that was alive when
 * watched has expired by then, deleted or not (isWatchedKeyExpired).
 *
 * WHO OWNS A QUEUED COMMAND
 *
 * An I/O thread may have parsed the command, so its argument vector was
 * allocated by that worker. Normally the argv lives one command:
 * run_queued_commands (networking.c) runs it and hands it to release_argv,
 * which sends it back to the worker that parsed it (c->cur_tid), because
 * freeing on the allocating thread keeps that thread's allocator arena off
 * main's path. Queueing breaks that life in two: the command is moved out of
 * c->argv into the queue and c->argv is set to NULL, so run_queued_commands
 * releases nothing, and the queue owns the argv from then on. It is freed
 * here, on main, by obj_decr_ref and zfree, when EXEC has run it, at DISCARD,
 * or when the client is freed, never through io_offload: by then c->cur_tid
 * names the worker of the latest read, not of this argv, and that worker may
 * be parked or gone (CONFIG SET io-threads). Freeing another thread's
 * allocation on main is always correct (the allocator is thread-safe; it only
 * costs main a trip to the other arena), so it is the safe choice, and Valkey
 * makes the same one (freeClientMultiState frees the queue on main). The
 * argument objects are main's in any case: after its read is handed back, a
 * worker changes an object only when main gives it one to free (FREE_ARGV,
 * FREE_OBJ); otherwise it at most reads the bytes of a string a reply refers
 * to (step 7); outside the vectors main hands it to free, only main changes
 * a refcount. A queued vector is never
 * given away, so EXEC may store its objects in the keyspace (raising their
 * refcount) like any command. No I/O job touches a multi_state either,
 * which is why another client's write may dirty c, and unwatch its keys,
 * while a worker is reading c's socket.
 */
#include "multi.h"

#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "db.h"
#include "hashtable.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

typedef struct watched_key watched_key;

/* One key someone watches: the registry's entry (Valkey: a key of
 * db->watched_keys and its list of clients). */
typedef struct watch_entry {
    hashtable_key name;   /* the view the registry hashes: {key, len} */
    watched_key *clients; /* the watchers, a doubly linked list */
    char key[];
} watch_entry;

/* One client watching one key: a node of both lists. */
struct watched_key {
    watch_entry *entry;
    client *c;
    struct db *db;
    int expired;                 /* the key had expired when it was watched */
    watched_key *prev, *next;    /* the entry's watchers */
    watched_key *next_of_client; /* the client's own watches */
};

typedef struct queued_cmd {
    struct command *cmd;
    int argc;
    obj **argv;
} queued_cmd;

typedef struct multi_state {
    queued_cmd *cmds;
    int count, cap;
    size_t mem; /* multi-mem: argument bytes plus a pointer per argument */
    watched_key *watched;
    int nwatched;
    obj **exec_argv; /* EXEC's own arguments while it runs the queue */
    int exec_argc;
} multi_state;

static hashtable *registry;

static const void *entry_key(const void *p) { return &((const watch_entry *)p)->name; }

static const hashtable_type registry_type = {
    .hash_key = hashtable_key_hash,
    .entry_get_key = entry_key,
    .key_compare = hashtable_key_compare,
    .entry_destructor = NULL, /* entries go when their last watcher does */
};

static multi_state *state_of(client *c) {
    if (!c->mstate) c->mstate = zcalloc(sizeof(multi_state));
    return c->mstate;
}

/* Makes *o view bytes it does not own (a lookup key). */
static void key_view(obj *o, const char *p, size_t len) {
    *o = (obj){.type = OBJ_STRING, .encoding = OBJ_ENC_RAW, .refcount = 1, .len = len, .ptr = (char *)p};
}

/* ------------------------------------------------------------ watches */

static watch_entry *find_entry(const char *key, size_t len) {
    hashtable_key k = {key, len};
    void *found;
    return registry && hashtable_find(registry, &k, &found) ? found : NULL;
}

bool multi_watches(const client *c, const char *key, size_t len) {
    watch_entry *e = find_entry(key, len);
    for (watched_key *wk = e ? e->clients : NULL; wk; wk = wk->next)
        if (wk->c == c) return true;
    return false;
}

size_t multi_registry_size(void) { return registry ? hashtable_size(registry) : 0; }

/* Valkey: watchForKey. */
static void watch_key(client *c, obj *key) {
    if (multi_watches(c, key->ptr, key->len)) return;
    if (!registry) registry = hashtable_create(&registry_type);
    watch_entry *e = find_entry(key->ptr, key->len);
    if (!e) {
        e = zmalloc(sizeof(*e) + key->len + 1);
        memcpy(e->key, key->ptr, key->len);
        e->key[key->len] = '\0';
        e->name = (hashtable_key){e->key, key->len};
        e->clients = NULL;
        hashtable_add(registry, e);
    }
    multi_state *ms = state_of(c);
    watched_key *wk = zcalloc(sizeof(*wk));
    db_entry *de = db_find_entry(c->db, key);
    wk->entry = e;
    wk->c = c;
    wk->db = c->db;
    wk->expired = de && db_entry_is_expired(de, util_mstime());
    wk->next = e->clients;
    if (e->clients) e->clients->prev = wk;
    e->clients = wk;
    wk->next_of_client = ms->watched;
    ms->watched = wk;
    ms->nwatched++;
}

/* Valkey: unwatchAllKeys. The caller clears CLIENT_DIRTY_CAS if it must. */
static void unwatch_all(client *c) {
    multi_state *ms = c->mstate;
    if (!ms) return;
    while (ms->watched) {
        watched_key *wk = ms->watched;
        watch_entry *e = wk->entry;
        ms->watched = wk->next_of_client;
        if (wk->prev)
            wk->prev->next = wk->next;
        else
            e->clients = wk->next;
        if (wk->next) wk->next->prev = wk->prev;
        if (!e->clients) {
            void *popped;
            hashtable_pop(registry, &e->name, &popped);
            zfree(e);
        }
        zfree(wk);
    }
    ms->nwatched = 0;
}

/* Valkey: touchWatchedKey. First every watcher is judged, then the dirty
 * ones forget their watches: unwatching while walking the list would free
 * the node (and perhaps the entry) the walk stands on. */
static void touch_key(struct db *d, obj *key) {
    watch_entry *e = find_entry(key->ptr, key->len);
    if (!e) return;
    int dirtied = 0;
    for (watched_key *wk = e->clients; wk; wk = wk->next) {
        if (wk->expired) {
            /* Already dead when watched: its deletion is no change. */
            if (wk->db == d && !db_find_entry(d, key)) {
                wk->expired = 0;
                continue;
            }
        }
        wk->c->flags |= CLIENT_DIRTY_CAS;
        dirtied = 1;
    }
    while (dirtied && (e = find_entry(key->ptr, key->len))) {
        watched_key *wk = e->clients;
        while (wk && !(wk->c->flags & CLIENT_DIRTY_CAS)) wk = wk->next;
        if (!wk) break;
        unwatch_all(wk->c);
    }
}

/* Valkey: touchAllWatchedKeysInDb, called before the keys are removed:
 * a watched key that exists is about to change. Watchers are flagged but
 * keep their watches here, so the walk over the registry stays valid. */
static void touch_all(struct db *d) {
    hashtable_iterator it;
    void *p;
    hashtable_init_iterator(&it, registry, 1);
    while (hashtable_next(&it, &p)) {
        watch_entry *e = p;
        obj k;
        key_view(&k, e->key, e->name.len);
        if (!db_find_entry(d, &k)) continue;
        for (watched_key *wk = e->clients; wk; wk = wk->next) {
            if (wk->db != d) continue;
            if (wk->expired) {
                wk->expired = 0; /* deleted while already dead: no change */
                continue;
            }
            wk->c->flags |= CLIENT_DIRTY_CAS;
        }
    }
    hashtable_reset_iterator(&it);
}

/*@ on-modified */
/* The keyspace's listener: key changed, or (key NULL) d is about to be
 * emptied. Costs one size test while nobody watches anything. */
static void on_modified(struct db *d, obj *key) {
    if (!registry || hashtable_size(registry) == 0) return;
    if (key)
        touch_key(d, key);
    else
        touch_all(d);
}
/*@ end */

/* Valkey: isWatchedKeyExpired. */
static int watched_key_expired(client *c) {
    long long now = util_mstime();
    for (watched_key *wk = c->mstate ? c->mstate->watched : NULL; wk; wk = wk->next_of_client) {
        if (wk->expired) continue;
        obj k;
        key_view(&k, wk->entry->key, wk->entry->name.len);
        db_entry *de = db_find_entry(wk->db, &k);
        if (de && db_entry_is_expired(de, now)) return 1;
    }
    return 0;
}

/* ------------------------------------------------------------- queue */

/*@ free-queue */
static void free_queue(multi_state *ms) {
    for (int i = 0; i < ms->count; i++) {
        /* On main, whoever allocated it: see the essay. */
        for (int j = 0; j < ms->cmds[i].argc; j++) obj_decr_ref(ms->cmds[i].argv[j]);
        zfree(ms->cmds[i].argv);
    }
    zfree(ms->cmds);
    ms->cmds = NULL;
    ms->count = ms->cap = 0;
    ms->mem = 0;
}
/*@ end */

/*@ queue-command */
/* Valkey: queueMultiCommand. process_command calls it (commands_on_multi)
 * for a command that passed its checks while c is in MULTI. */
static void queue_command(client *c) {
    if (!(c->flags & (CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC))) {
        multi_state *ms = state_of(c);
        if (ms->count == ms->cap) {
            ms->cap = ms->cap ? ms->cap * 2 : 4;
            ms->cmds = zrealloc(ms->cmds, sizeof(*ms->cmds) * (size_t)ms->cap);
        }
        ms->cmds[ms->count++] = (queued_cmd){c->cmd, c->argc, c->argv};
        for (int j = 0; j < c->argc; j++) ms->mem += c->argv[j]->len + sizeof(obj *);
        /* The queue owns the argv now: run_queued_commands must not
         * release it after this command. */
        c->argv = NULL;
        c->argc = 0;
    }
    reply_status(c, "QUEUED");
}
/*@ end */

/* Valkey: discardTransaction. */
static void discard_transaction(client *c) {
    if (c->mstate) free_queue(c->mstate);
    c->flags &= ~(CLIENT_MULTI | CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC);
    unwatch_all(c);
}

void multi_free_client(client *c) {
    if (!c->mstate) return;
    discard_transaction(c);
    zfree(c->mstate);
    c->mstate = NULL;
}

/* ---------------------------------------------------------- commands */

static void multi_command(client *c) {
    c->flags |= CLIENT_MULTI;
    reply_ok(c);
}

static void discard_command(client *c) {
    if (!(c->flags & CLIENT_MULTI)) {
        reply_error(c, "DISCARD without MULTI");
        return;
    }
    discard_transaction(c);
    reply_ok(c);
}

/* Valkey: execCommandAbort. EXEC itself was refused (commands_on_multi):
 * whatever state c was in, it leaves the transaction. */
static void exec_abort(client *c, const char *err) {
    discard_transaction(c);
    reply_error_format(c, "-EXECABORT Transaction discarded because of: %s", err[0] == '-' ? err + 1 : err);
}

/*@ run-queue */
/* Runs the queue: each command through call(), its reply one element of
 * EXEC's array; c->argv and c->argc are EXEC's again afterwards. */
static void run_queue(client *c, multi_state *ms) {
    int argc = c->argc;
    obj **argv = c->argv;
    ms->exec_argc = argc;
    ms->exec_argv = argv;
    reply_array_len(c, ms->count);
    for (int i = 0; i < ms->count; i++) {
        c->argc = ms->cmds[i].argc;
        c->argv = ms->cmds[i].argv;
        c->cmd = ms->cmds[i].cmd;
        call(c);
    }
    c->argc = argc;
    c->argv = argv;
    ms->exec_argv = NULL;
    ms->exec_argc = 0;
}
/*@ end */

/*@ exec-command */
/* Valkey: execCommand. */
static void exec_command(client *c) {
    if (!(c->flags & CLIENT_MULTI)) {
        reply_error(c, "EXEC without MULTI");
        return;
    }
    if (watched_key_expired(c)) c->flags |= CLIENT_DIRTY_CAS;
    if (c->flags & (CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC)) {
        /* A refusal while queueing is an error; a touched watch is not
         * (a null array says "nothing ran, try again"). */
        if (c->flags & CLIENT_DIRTY_EXEC)
            reply_error(c, "-EXECABORT Transaction discarded because of previous errors.");
        else
            reply_null_array(c);
        discard_transaction(c);
        return;
    }
    struct command *exec = c->cmd;
    unwatch_all(c); /* nothing can dirty it now; stop paying for the watches */
    run_queue(c, state_of(c));
    c->cmd = exec; /* call() clears c->cmd after each queued command */
    discard_transaction(c);
}
/*@ end */

static void watch_command(client *c) {
    /* Dirty already: EXEC will fail whatever else is watched. */
    if (!(c->flags & CLIENT_DIRTY_CAS))
        for (int j = 1; j < c->argc; j++) watch_key(c, c->argv[j]);
    reply_ok(c);
}

static void unwatch_command(client *c) {
    unwatch_all(c);
    c->flags &= ~CLIENT_DIRTY_CAS;
    reply_ok(c);
}

/* ------------------------------------------------------ CLIENT LIST */

int multi_queued_count(const client *c) {
    if (!(c->flags & CLIENT_MULTI)) return -1;
    return c->mstate ? c->mstate->count : 0;
}

int multi_watched_count(const client *c) { return c->mstate ? c->mstate->nwatched : 0; }

size_t multi_queued_mem(const client *c) { return c->mstate ? c->mstate->mem : 0; }

obj **multi_top_argv(const client *c, int *argc) {
    if (c->mstate && c->mstate->exec_argv) {
        *argc = c->mstate->exec_argc;
        return c->mstate->exec_argv;
    }
    *argc = c->argc;
    return c->argv;
}

/*@ multi-init */
void multi_init(void) {
    if (!registry) registry = hashtable_create(&registry_type);
    commands_on_multi(queue_command, exec_abort);
    db_on_modified(on_modified);
}
/*@ end */

/* Flags as Valkey 8.1's src/commands JSON files give them; CMD_NO_QUEUE is
 * soloist's mark for what processCommand runs at once inside MULTI. */
#define F CMD_NOSCRIPT | CMD_LOADING | CMD_STALE
command multi_commands[] = {
    {"multi", multi_command, 1, F | CMD_FAST | CMD_NO_MULTI | CMD_NO_QUEUE, 0, 0, 0, "transactions",
     "Starts a transaction.", 0, 0, 0, 0},
    {"exec", exec_command, 1, F | CMD_NO_QUEUE, 0, 0, 0, "transactions", "Executes all commands in a transaction.", 0,
     0, 0, 0},
    {"discard", discard_command, 1, F | CMD_FAST | CMD_NO_QUEUE, 0, 0, 0, "transactions", "Discards a transaction.", 0,
     0, 0, 0},
    {"watch", watch_command, -2, F | CMD_DENYOOM | CMD_FAST | CMD_NO_MULTI | CMD_NO_QUEUE, 1, -1, 1, "transactions",
     "Monitors changes to keys to determine the execution of a transaction.", 0, 0, 0, 0},
    {"unwatch", unwatch_command, 1, F | CMD_FAST, 0, 0, 0, "transactions",
     "Forgets about watched keys of a transaction.", 0, 0, 0, 0},
    {0},
};
#undef F
