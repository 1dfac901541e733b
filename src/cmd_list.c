/* cmd_list.c — the list commands (commands layer). */
#include "commands.h"

command list_commands[] = {{0}};
