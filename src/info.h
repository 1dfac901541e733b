/* info.h — the introspection commands: INFO, CLIENT, COMMAND.
 *
 * Step 0 (server). INFO is where a reader watches the server: Valkey's
 * sections and field names, plus soloist's `threads` section with the
 * main thread's time by phase (the serial share s of chapter 01) — and,
 * from step 4, the I/O threads' counters.
 * Threads: main thread only.
 * Valkey: genValkeyInfoString (src/server.c), clientCommand
 * (src/networking.c), commandCommand (src/server.c).
 */
#ifndef SOLOIST_INFO_H
#define SOLOIST_INFO_H

struct client;
void info_command(struct client *c);
void client_command(struct client *c);
void command_command(struct client *c);

#endif
