/* set.c — the set type (keyspace layer). See set.h. */
#include "set.h"

long long set_max_intset_entries = 512, set_max_listpack_entries = 128, set_max_listpack_value = 64;
