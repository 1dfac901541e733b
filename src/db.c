/* db.c — the keyspace: keys to values, with lazy expiry.
 *
 * Step 0 (keyspace layer). Owns: every db_entry (one
 * allocation holding the value pointer, the key's bytes and, once the key
 * has had a TTL, its expire time), the
 * `keys` table that owns them and the `expires` table that indexes the
 * ones with a TTL; lazy expiry; the keyspace statistics. The active expiry
 * cycle is in expire.c, the commands in cmd_keys.c and cmd_string.c.
 * Threads: main thread only — this file is the soloist's invariant. It
 * includes nothing about sockets or clients.
 * Valkey: src/db.c (lookupKey, lookupKeyRead/Write, dbAdd, setKey,
 * dbOverwrite, dbSyncDelete, getExpire, setExpire, removeExpire,
 * expireIfNeeded, dbRandomKey, emptyData, dbUnshareStringValue).
 */
#include "db.h"

#include <stddef.h>
#include <string.h>

#include "util.h"
#include "zmalloc.h"

db_stats db_stat;
db db0;

/* ---- entries and the hashtable type ------------------------------------ */

/* The bytes an entry for a key of len bytes takes, with or without room
 * for an expire time. */
static size_t entry_size(size_t len, int ttl_room) {
    return offsetof(db_entry, key) + len + 1 + (ttl_room ? sizeof(long long) : 0);
}

static db_entry *entry_create(const char *key, size_t len, obj *val) {
    db_entry *e = zmalloc(entry_size(len, 0));
    memcpy(e->key, key, len);
    e->key[len] = '\0';
    e->keylen = (uint32_t)len;
    e->flags = 0;
    e->val = val;
    return e;
}

static void entry_write_expire(db_entry *e, long long when) { memcpy(e->key + e->keylen + 1, &when, sizeof(when)); }

static void entry_free(void *p) {
    db_entry *e = p;
    obj_decr_ref(e->val);
    zfree(e);
}

/* The {ptr, len} view of an entry's key. The table uses each result at
 * once and at most two at a time (hashtable.h), so two buffers in turn
 * are enough; main thread only, like the tables. */
static const void *entry_get_key(const void *p) {
    static hashtable_key views[2];
    static unsigned next;
    const db_entry *e = p;
    hashtable_key *v = &views[next++ & 1];
    *v = (hashtable_key){e->key, e->keylen};
    return v;
}

static hashtable_key name_of(const db_entry *e) { return (hashtable_key){e->key, e->keylen}; }

/* `keys` owns the entries; `expires` indexes the same entries and must
 * never free them, so it has no destructor. */
static const hashtable_type keys_type = {
    .hash_key = hashtable_key_hash,
    .entry_get_key = entry_get_key,
    .key_compare = hashtable_key_compare,
    .entry_destructor = entry_free,
};
static const hashtable_type expires_type = {
    .hash_key = hashtable_key_hash,
    .entry_get_key = entry_get_key,
    .key_compare = hashtable_key_compare,
    .entry_destructor = NULL,
};

static hashtable_key key_of(const obj *key) { return (hashtable_key){key->ptr, key->len}; }

void db_init(db *d, int id) {
    memset(d, 0, sizeof(*d));
    d->id = id;
    d->keys = hashtable_create(&keys_type);
    d->expires = hashtable_create(&expires_type);
}

void db_release(db *d) {
    /* expires first: it points at entries that keys is about to free. */
    hashtable_release(d->expires);
    hashtable_release(d->keys);
    d->keys = d->expires = NULL;
}

/* ---- lookup and lazy expiry --------------------------------------------- */

db_entry *db_find_entry(db *d, obj *key) {
    hashtable_key k = key_of(key);
    void *found;
    return hashtable_find(d->keys, &k, &found) ? found : NULL;
}

int db_entry_is_expired(const db_entry *e, long long now_ms) {
    long long when = db_entry_expire(e);
    return when != -1 && now_ms > when;
}

void db_delete_entry(db *d, db_entry *e) {
    void *popped;
    hashtable_key name = name_of(e);
    /* Pop from expires while e (and so the key it is looked up by) is
     * still alive; then pop from keys and free it ourselves. */
    if (e->flags & DB_ENTRY_TTL_SET) hashtable_pop(d->expires, &name, &popped);
    hashtable_pop(d->keys, &name, &popped);
    entry_free(e);
}

/*@ expire-if-needed */
/* The clock is read only for keys that have a TTL, so a GET of a key
 * without one costs a find and nothing else. Valkey reads a per-command
 * time snapshot (commandTimeSnapshot) so a command sees one "now"; soloist
 * reads the clock per lookup, which differs only inside one command that
 * touches several volatile keys within the same millisecond boundary. */
static int expire_entry_if_needed(db *d, db_entry *e) {
    if (!(e->flags & DB_ENTRY_TTL_SET) || util_mstime() <= db_entry_expire(e)) return 0;
    db_delete_expired(d, e);
    db_stat.expired_keys++;
    return 1;
}
/*@ end */

int db_expire_if_needed(db *d, obj *key) {
    db_entry *e = db_find_entry(d, key);
    return e ? expire_entry_if_needed(d, e) : 0;
}

/*@ db-lookup */
/* Valkey's lookupKey: find, expire lazily, count. A read that finds
 * nothing (absent or just expired) is a miss; writes are not counted,
 * as in Valkey (LOOKUP_WRITE skips the statistics). */
obj *db_lookup_read(db *d, obj *key) {
    db_entry *e = db_find_entry(d, key);
    if (e && expire_entry_if_needed(d, e)) e = NULL;
    if (e)
        db_stat.keyspace_hits++;
    else
        db_stat.keyspace_misses++;
    return e ? e->val : NULL;
}

obj *db_lookup_write(db *d, obj *key) {
    db_entry *e = db_lookup_write_entry(d, key);
    return e ? e->val : NULL;
}

db_entry *db_lookup_write_entry(db *d, obj *key) {
    db_entry *e = db_find_entry(d, key);
    return e && expire_entry_if_needed(d, e) ? NULL : e;
}
/*@ end */

/* ---- writes -------------------------------------------------------------- */

/* Keyspace events: the listeners the layer above registered (the end of
 * this file). */
static db_key_listener *on_added;
void db_on_added(db_key_listener *fn) { on_added = fn; }

void db_add(db *d, obj *key, obj *val) {
    db_entry *e = entry_create(key->ptr, key->len, val);
    if (!hashtable_add(d->keys, e)) {
        /* A caller bug: db_add is for keys known to be absent. Keep the
         * keyspace consistent rather than leak or corrupt it. */
        e->val = NULL;
        zfree(e);
        db_overwrite(d, key, val);
        return;
    }
    if (on_added) on_added(d, key);
}

void (*db_value_release)(obj *val) = obj_decr_ref;

/*@ set-key */
/* Valkey's setKey: add or replace. Without keepttl a replaced key loses
 * its TTL (SET without KEEPTTL, GETSET, MSET), as in Valkey. */
void db_set_key(db *d, obj *key, obj *val, int keepttl) { db_set_entry(d, db_find_entry(d, key), key, val, keepttl); }

/* The work of db_set_key once the key's entry is known: a SET that has
 * just looked the key up (db_lookup_write_entry) hands over what it found,
 * so an existing key is hashed and found once, not twice (an absent one
 * is hashed again where db_add inserts it). */
void db_set_entry(db *d, db_entry *e, obj *key, obj *val, int keepttl) {
    if (!e) {
        db_add(d, key, val);
        return;
    }
    obj *old = e->val;
    e->val = val;
    db_value_release(old);
    if (!keepttl && (e->flags & DB_ENTRY_TTL_SET)) {
        void *popped;
        hashtable_key name = name_of(e);
        hashtable_pop(d->expires, &name, &popped);
        e->flags &= (uint8_t)~DB_ENTRY_TTL_SET;
    }
}
/*@ end */

void db_overwrite(db *d, obj *key, obj *val) { db_set_key(d, key, val, 1); }

int db_delete(db *d, obj *key) {
    db_entry *e = db_find_entry(d, key);
    if (!e) return 0;
    db_delete_entry(d, e);
    return 1;
}

int db_exists(db *d, obj *key) { return db_lookup_write(d, key) != NULL; }

/*@ db-unshare-string */
obj *db_unshare_string(db *d, obj *key, size_t len) {
    db_entry *e = db_find_entry(d, key);
    if (!e) return NULL;
    obj *o = e->val;
    if (o->refcount != 1) {
        /* Someone else holds it (an argv that was stored as the value, a
         * step-7 reply that references it): write into a private copy. */
        obj *copy = obj_create_string(o->ptr, o->len);
        obj_decr_ref(o);
        o = copy;
    }
    /* obj_string_resize consumes the keyspace's reference when it has to
     * replace the object (EMBSTR → RAW, or bytes inline that change
     * length) and returns the replacement. */
    if (o->encoding != OBJ_ENC_RAW || o->len != len) o = obj_string_resize(o, len);
    e->val = o;
    return o;
}
/*@ end */

/* ---- TTLs --------------------------------------------------------------- */

long long db_get_expire(db *d, obj *key) {
    db_entry *e = db_find_entry(d, key);
    return e ? db_entry_expire(e) : -1;
}

/*@ set-expire */
/* A key's first TTL grows its entry to hold the time, which may move it:
 * the keys table's slot is pointed at the new address before the entry
 * joins expires, and nothing else holds an entry across a command. */
void db_set_expire(db *d, obj *key, long long when_ms) {
    hashtable_key k = key_of(key);
    void **slot = hashtable_find_ref(d->keys, &k);
    if (!slot) return;
    db_entry *e = *slot;
    if (!(e->flags & DB_ENTRY_TTL_ROOM)) {
        e = zrealloc(e, entry_size(e->keylen, 1));
        e->flags |= DB_ENTRY_TTL_ROOM;
        *slot = e;
    }
    entry_write_expire(e, when_ms);
    if (!(e->flags & DB_ENTRY_TTL_SET)) {
        e->flags |= DB_ENTRY_TTL_SET;
        hashtable_add(d->expires, e);
    }
}
/*@ end */

int db_remove_expire(db *d, obj *key) {
    db_entry *e = db_find_entry(d, key);
    if (!e || !(e->flags & DB_ENTRY_TTL_SET)) return 0;
    void *popped;
    hashtable_key name = name_of(e);
    hashtable_pop(d->expires, &name, &popped);
    e->flags &= (uint8_t)~DB_ENTRY_TTL_SET;
    return 1;
}

/* ---- the whole db ------------------------------------------------------- */

size_t db_size(const db *d) { return hashtable_size(d->keys); }
size_t db_expires_size(const db *d) { return hashtable_size(d->expires); }

long long db_empty(db *d) {
    long long n = (long long)hashtable_size(d->keys);
    hashtable_empty(d->expires); /* indexes only: no destructor */
    hashtable_empty(d->keys);    /* frees every entry and value */
    d->expire_cursor = 0;
    d->avg_ttl = 0;
    return n;
}

/*@ random-key */
/* Valkey's dbRandomKey: draw, and if the draw has expired delete it and
 * draw again. Each retry removes a key, so the loop ends by the time the
 * table is empty. (Valkey also bounds the retries on a replica, which may
 * not delete; soloist has no replicas.) */
obj *db_random_key(db *d) {
    long long now = util_mstime();
    for (;;) {
        void *p;
        if (!hashtable_fair_random_entry(d->keys, &p)) return NULL;
        db_entry *e = p;
        if (db_entry_is_expired(e, now)) {
            db_delete_expired(d, e);
            db_stat.expired_keys++;
            continue;
        }
        return obj_create_string(e->key, e->keylen);
    }
}
/*@ end */

void db_rehash_step(db *d, uint64_t budget_us) {
    /* Valkey's databasesCron gives the time to the keys table first; the
     * expires table gets what is left of the same budget. */
    uint64_t start = util_monotonic_us();
    hashtable_rehash_microseconds(d->keys, budget_us);
    uint64_t used = util_monotonic_us() - start;
    if (used < budget_us) hashtable_rehash_microseconds(d->expires, budget_us - used);
}

/* ---------------------------------------------------- keyspace events */

static db_key_listener *on_modified;

void db_on_modified(db_key_listener *fn) { on_modified = fn; }

void db_signal_modified(db *d, obj *key) {
    if (on_modified) on_modified(d, key);
}

/* The listener is called after the key is gone, so it needs its own copy
 * of the name: one allocation per expired key, and none with no listener. */
void db_delete_expired(db *d, db_entry *e) {
    if (!on_modified) {
        db_delete_entry(d, e);
        return;
    }
    obj *key = obj_create_string(e->key, e->keylen);
    db_delete_entry(d, e);
    on_modified(d, key);
    obj_decr_ref(key);
}
