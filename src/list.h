/* list.h — the list type: a small list in one listpack, a large one as a
 * chain of listpack nodes (quicklist).
 *
 * Keyspace layer. Owns every list value's structure. Knows no client and
 * no reply: cmd_list.c turns commands into calls here.
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/t_list.c (listTypePush, listTypePop, listTypeTryConversion),
 * src/quicklist.c.
 */
#ifndef SOLOIST_LIST_H
#define SOLOIST_LIST_H

#include <stddef.h>

#include "object.h"

/* CONFIG list-max-listpack-size (Valkey's default -2): a positive value
 * caps a listpack's elements, a negative one its bytes (-1 4 KB, -2 8 KB,
 * -3 16 KB, -4 32 KB, -5 64 KB). list-compress-depth is accepted and has
 * no effect: soloist never compresses a node. */
extern long long list_max_listpack_size;
extern long long list_compress_depth;

#endif
