/* set.h — the set type: integers in a sorted array (intset), a small set
 * of strings in one listpack, a large one on soloist's hashtable.
 *
 * Keyspace layer. Owns every set value's structure. Knows no client and
 * no reply: cmd_set.c turns commands into calls here.
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/t_set.c (setTypeAdd, setTypeRemove, setTypeIsMember,
 * setTypeConvert), src/intset.c.
 */
#ifndef SOLOIST_SET_H
#define SOLOIST_SET_H

#include <stddef.h>

#include "object.h"

/* CONFIG set-max-intset-entries, set-max-listpack-entries and
 * set-max-listpack-value (Valkey's defaults 512, 128 and 64). */
extern long long set_max_intset_entries, set_max_listpack_entries, set_max_listpack_value;

#endif
