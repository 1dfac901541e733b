/* cmd_hash.c — the hash commands (commands layer). */
#include "commands.h"

command hash_commands[] = {{0}};
