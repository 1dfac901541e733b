/* list.c — the list type (keyspace layer). See list.h. */
#include "list.h"

long long list_max_listpack_size = -2;
long long list_compress_depth = 0;
