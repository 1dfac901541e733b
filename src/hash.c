/* hash.c — the hash type (keyspace layer). See hash.h. */
#include "hash.h"

long long hash_max_listpack_entries = 128, hash_max_listpack_value = 64;
