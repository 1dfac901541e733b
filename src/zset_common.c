/* zset_common.c — what both layouts of the sorted set call.
 *
 * Step 8 (keyspace layer). Owns: the draw of a skiplist node's or a dense
 * leaf's height, the key view every layout's member index reads its keys
 * through (two rotating slots), and the scan of a member index (ZSCAN).
 * Declared in zset_private.h with the rest the zset files share.
 * Why a file of its own: zset.c hands a dense set to zset_dense.c, so
 * what the dense layout needs from the sorted set must sit below both
 * files, or the two would call each other in a circle (tools/calls.py
 * checks that none does). It calls only the hashtable.
 * Threads: main thread only, like every set.
 * Valkey: src/t_zset.c zslRandomLevel for the height.
 */
#include "zset_private.h"

#include <stdlib.h>

#include "hashtable.h"

/* Both layouts' skiplists draw their heights here. */
int zset_random_level(void) {
    int level = 1;
    while (level < ZSET_MAX_LEVEL && (random() & 0xFFFF) < (long)(ZSET_P * 0xFFFF)) level++;
    return level;
}

/* The index's key is a {ptr, len} view of a member, built in one of two
 * rotating slots: hashtable.h allows a temporary that lives across one
 * more entry_get_key call. Every layout's index reads its keys through
 * here (zset.c's three skiplist layouts and zset_dense.c's), and only
 * main touches a set. */
const void *zset_key_view(const char *ptr, size_t len) {
    static hashtable_key slot[2];
    static int next;
    hashtable_key *k = &slot[next];
    next ^= 1;
    k->ptr = ptr;
    k->len = len;
    return k;
}

/* What zset_index_scan hands hashtable_scan: how to turn an entry of the
 * set's index into a position, and the caller's fn. */
typedef struct scan_ctx {
    zset_entry_pos position;
    const void *set;
    zset_scan_fn fn;
    void *privdata;
} scan_ctx;

static void scan_one(void *privdata, void *entry) {
    scan_ctx *s = privdata;
    s->fn(s->privdata, s->position(s->set, entry));
}

size_t zset_index_scan(hashtable *index, size_t cursor, zset_entry_pos position, const void *set, zset_scan_fn fn,
                       void *privdata) {
    scan_ctx s = {position, set, fn, privdata};
    return hashtable_scan(index, cursor, scan_one, &s);
}
