/* main.c — soloist-server's entry point.
 *
 * Step 0 (server layer, the top of the line). Owns nothing but the order
 * of start-up: configuration (file, then flags, as Valkey), the server's
 * init, the event loop, and an orderly exit. Kept apart from
 * server_loop.c so the unit tests can link every module without a second
 * main().
 * Valkey: main() in src/server.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "server.h"
#include "server_loop.h"
#include "zmalloc.h"

int main(int argc, char **argv) {
    char *err = NULL;
    config_init_defaults();
    switch (config_load_args(argc, argv, &err)) {
    case CONFIG_ARGS_VERSION:
        printf("soloist server v=%s (Valkey-compatible %s)\n", SOLOIST_VERSION, SOLOIST_COMPAT_VERSION);
        return 0;
    case CONFIG_ARGS_HELP: config_usage(stdout, argv[0]); return 0;
    case CONFIG_ARGS_ERROR:
        fprintf(stderr, "%s\n", err ? err : "configuration error");
        zfree(err);
        return 1;
    default: break;
    }
    server_log(LL_NOTICE, "soloist %s starting, pid %d: one thread runs every command", SOLOIST_VERSION, (int)getpid());
    zmalloc_tune_heap();
    if (server_init() == -1) return 1;
    server_log(LL_NOTICE, "Ready to accept connections tcp on port %d", server.port);
    server_run();
    server_destroy();
    config_free_all();
    return 0;
}
