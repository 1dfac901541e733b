/* db.h — the keyspace: keys to values, with expiry.
 *
 * Step 0 (keyspace layer), on hashtable.h's table. Owns: every key and value
 * in the server, the expires index, lazy expiry on lookup and the active
 * expiry cycle run from cron. Knows no socket and no client: commands pass
 * a db and key objects, never a connection.
 * Threads: main thread only — the soloist's invariant. Nothing a worker
 * runs includes this header (checked by the include graph).
 * Valkey: src/db.c (lookupKey, dbAdd, setKey, dbDelete, expireIfNeeded),
 * src/expire.c (activeExpireCycle). Valkey 8.1 embeds the key and the
 * expire time in the value object; soloist keeps them in a small db_entry
 * beside a pointer to the value, which costs one more pointer chase per
 * lookup (step 6 prefetches it) and keeps the value object shareable. The
 * entry carries an expire time only once the key has had a TTL, and
 * grows to hold it, as Valkey's object does since 8.1 (objectSetExpire
 * may reallocate it).
 */
#ifndef SOLOIST_DB_H
#define SOLOIST_DB_H

#include <stddef.h>
#include <stdint.h>

#include "hashtable.h"
#include "object.h"

/*@ db-entry */
/* One allocation per key: the value pointer, the key's length and bytes,
 * and, only for a key that has had a TTL, its expire time after the key.
 * A key without a TTL, the common case, pays no 8 bytes for one: with
 * glibc's chunk sizes (24 usable bytes, then steps of 16) a key of up to
 * 10 bytes fits the smallest chunk. Setting the first TTL grows the entry
 * and so moves it (db_set_expire swaps the tables' pointers); removing a
 * TTL keeps the room, so a key whose TTL comes and goes moves once. The
 * expire time sits after the key's bytes, unaligned: read it with
 * db_entry_expire. */
typedef struct db_entry {
    obj *val;        /* one reference owned by the keyspace */
    uint32_t keylen; /* key bytes, without the NUL */
    uint8_t flags;   /* DB_ENTRY_TTL_ROOM, DB_ENTRY_TTL_SET */
    char key[];      /* NUL-terminated copy of the key, then the expire time */
} db_entry;
#define DB_ENTRY_TTL_ROOM 1 /* 8 bytes after the key hold an expire time... */
#define DB_ENTRY_TTL_SET 2  /* ...and it is in force (the key is in `expires`) */
/*@ end */

/* Unix time in ms when e expires; -1 when it has no TTL. */
static inline long long db_entry_expire(const db_entry *e) {
    long long when = -1;
    if (e->flags & DB_ENTRY_TTL_SET) __builtin_memcpy(&when, e->key + e->keylen + 1, sizeof(when));
    return when;
}

typedef struct db {
    int id;
    hashtable *keys;      /* db_entry*, owns them */
    hashtable *expires;   /* the same db_entry* that have a TTL; owns nothing */
    size_t expire_cursor; /* active expiry's scan cursor */
    long long avg_ttl;    /* INFO keyspace avg_ttl, ms */
} db;

/* Keyspace statistics for INFO; main thread only. */
typedef struct db_stats {
    long long keyspace_hits, keyspace_misses;
    long long expired_keys, expired_stale_perc_x100, expire_cycle_cpu_us;
    long long evicted_keys; /* always 0: soloist has no maxmemory */
} db_stats;
extern db_stats db_stat;

/* The server's one database (soloist serves db 0 only; Valkey keeps an
 * array, server.db[]). server_init sets it up with db_init(&db0, 0) and
 * clients point at it. It lives here, not in struct server, so that only
 * the files that include db.h can reach the keyspace: server.h, which
 * nearly every file includes, carries no keyspace with it. */
extern db db0;

void db_init(db *d, int id);
void db_release(db *d);

/* Lookups expire a key lazily when its time has passed (and count the
 * expiry). _read counts a hit or a miss; _write does not. Both return a
 * borrowed pointer (no reference taken) or NULL. */
obj *db_lookup_read(db *d, obj *key);
obj *db_lookup_write(db *d, obj *key);
/* db_lookup_write's entry rather than its value, for a write that looks
 * the key up and then sets it: db_set_entry takes what it returns. */
db_entry *db_lookup_write_entry(db *d, obj *key);
db_entry *db_find_entry(db *d, obj *key); /* no expiry, no stats */

/* Adds key → val; the key must not exist. Takes over the caller's
 * reference to val. */
void db_add(db *d, obj *key, obj *val);
/* Sets key → val whether it exists or not; keepttl != 0 keeps an existing
 * TTL, otherwise the TTL is removed. Takes over the caller's reference. */
/* How db_set_key lets go of the value it replaced: obj_decr_ref, unless
 * step 4 installed a hook that frees large strings on an I/O thread
 * (io_offload.c, FREE_OBJ). Main thread only, like the rest of db. */
extern void (*db_value_release)(obj *val);

void db_set_key(db *d, obj *key, obj *val, int keepttl);
/* db_set_key with the key's entry already found: e is what
 * db_lookup_write_entry returned for key (NULL: absent), and the keyspace
 * has not changed since. */
void db_set_entry(db *d, db_entry *e, obj *key, obj *val, int keepttl);
/* Replaces the value of an existing key keeping its TTL (INCR, APPEND). */
void db_overwrite(db *d, obj *key, obj *val);
int db_delete(db *d, obj *key); /* 1 if it existed */
int db_exists(db *d, obj *key);

long long db_get_expire(db *d, obj *key); /* -1 when none or absent */
void db_set_expire(db *d, obj *key, long long when_ms);
int db_remove_expire(db *d, obj *key);

size_t db_size(const db *d);
size_t db_expires_size(const db *d);
/* Removes every key; returns how many there were. */
long long db_empty(db *d);
/* A random live key as a new string object, or NULL when empty. */
obj *db_random_key(db *d);
/* Active expiry: samples keys with a TTL and deletes the expired ones,
 * for at most budget_us microseconds. Run from cron (server.hz). */
void db_active_expire_cycle(db *d, long long budget_us);
/* Incremental rehash from cron, bounded in time. */
void db_rehash_step(db *d, uint64_t budget_us);

/* --- For the command modules and expire.c ------------------------------ */

/* 1 when e has a TTL and now_ms is past it (Valkey keyIsExpired: a key
 * expires when now > when). Does not delete. */
int db_entry_is_expired(const db_entry *e, long long now_ms);
/* Removes e from both tables and frees it and its value reference. */
void db_delete_entry(db *d, db_entry *e);
/* The same for an entry whose time has passed, signalled as a change
 * (db_signal_modified) once it is gone, as Valkey's
 * deleteExpiredKeyAndPropagate signals an expired key. Not counted: the
 * caller counts expired_keys. */
void db_delete_expired(db *d, db_entry *e);
/* Lazy expiry alone: deletes key if its time has passed and counts it in
 * expired_keys. 1 if it was expired (and is now gone). No hit/miss. */
int db_expire_if_needed(db *d, obj *key);
/* Makes the string value of an existing key writable in place: refcount
 * 1, RAW, exactly `len` bytes (new bytes zeroed). Replaces a shared value
 * with a private copy first (Valkey dbUnshareStringValue). Returns the
 * value now stored under key; the TTL is kept. */
obj *db_unshare_string(db *d, obj *key, size_t len);

/* --- Keyspace events ---------------------------------------------------
 *
 * The keyspace knows no client, yet clients depend on what happens to a
 * key: WATCH aborts a transaction whose watched key changed. So, as
 * io_threads takes its job handlers, the keyspace takes a listener from
 * the layer that cares (multi.c registers one at start) and calls it; with
 * none registered an event costs a NULL test.
 *
 * modified: a command changed key's value or TTL, or deleted the key
 * (Valkey: signalModifiedKey, which calls touchWatchedKey). The write
 * commands call db_signal_modified themselves, as Valkey's do, because
 * only they know whether anything changed: ZADD that adds nothing and SET
 * with NX on an existing key touch nothing. Deletions by expiry and
 * FLUSHALL are signalled by the code that does them: expiry after the key
 * is gone (db_delete_expired), FLUSHALL and FLUSHDB with key NULL, "the
 * whole database", while the keys are still there, as Valkey's
 * signalFlushedDb calls touchAllWatchedKeysInDb before emptying. */
typedef void db_key_listener(db *d, obj *key);
void db_on_modified(db_key_listener *fn);
void db_signal_modified(db *d, obj *key);

/* added: a key was created (db_add, which every path that creates a key
 * goes through: ZADD, RENAME, COPY, SET of a new key). Blocking pops
 * listen (blocked.c): a sorted set can only go from absent to non-empty
 * by being created, so this is the one event that can serve a client
 * waiting on a key (Valkey: dbAdd calls signalKeyAsReady). Signalled by
 * db_add itself, before the caller has filled the value: listeners only
 * note the key and look at it after the command. An overwrite of an
 * existing key is not an "added" event, as in Valkey's dbSetValue. */
void db_on_added(db_key_listener *fn);

#endif
