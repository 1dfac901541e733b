/* hash.h — the hash type: a small hash in one listpack (field, value,
 * field, value ...), a large one on soloist's hashtable.
 *
 * Keyspace layer. Owns every hash value's structure. Knows no client and
 * no reply: cmd_hash.c turns commands into calls here.
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/t_hash.c (hashTypeSet, hashTypeGetValue, hashTypeDelete,
 * hashTypeConvert).
 */
#ifndef SOLOIST_HASH_H
#define SOLOIST_HASH_H

#include <stddef.h>

#include "object.h"

/* CONFIG hash-max-listpack-entries and hash-max-listpack-value (Valkey's
 * defaults 128 and 64): past either, a hash converts to the hashtable. */
extern long long hash_max_listpack_entries, hash_max_listpack_value;

#endif
