/* server_loop.h — start, run and stop the server; the statistics' reset.
 *
 * Step 0 (server layer, the top of the line). Owns the order of start-up
 * and tear-down and the event loop's hooks (server_loop.c says what each
 * does). The server's state is in server.h; this header is what only the
 * top of the line may call: main.c, the commands that stop the server or
 * reset its statistics, and the tests that run the real loop.
 * Threads: main thread only.
 * Valkey: src/server.c (initServer, aeMain's caller, serverCron,
 * beforeSleep, afterSleep, trackInstantaneousMetric, resetServerStats,
 * prepareForShutdown).
 */
#ifndef SOLOIST_SERVER_LOOP_H
#define SOLOIST_SERVER_LOOP_H

/* Start-up and tear-down, in main.c's order: init (after the config is
 * loaded), run (until SHUTDOWN or a signal), destroy (frees everything so
 * leak checkers stay quiet). */
int server_init(void);
void server_run(void);
void server_destroy(void);

/* Starts an orderly shutdown from a command or a signal. */
void server_prepare_shutdown(void);

/* Zeroes INFO's statistics (CONFIG RESETSTAT): the server's, the
 * keyspace's and every command's. */
void server_reset_stats(void);

/* Average per-second rate of instantaneous metric i (0 commands, 1 input
 * bytes, 2 output bytes) over its samples, taken by the cron. */
long long server_instantaneous_metric(int i);

#endif
