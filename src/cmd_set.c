/* cmd_set.c — the set commands (commands layer). */
#include "commands.h"

command set_commands[] = {{0}};
