/* config.h — configuration: defaults, config file, command line, CONFIG.
 *
 * Step 0 (server layer). Owns: the table of options (name, type, bounds,
 * default, flags), the parsing of a config file and of the command line
 * into server.* fields, and the CONFIG command (GET, SET, RESETSTAT,
 * REWRITE, HELP). The values themselves live in `struct server`
 * (server.h); options soloist accepts but does not use (save, appendonly,
 * dir, dbfilename, io-threads-do-reads, the replica and pubsub output
 * buffer classes) are kept inside config.c so CONFIG GET can still show
 * them.
 * Threads: main thread only. Loading runs before any thread starts;
 * CONFIG runs on the soloist like every command. A worker thread never
 * reads a value through this module.
 * Valkey: src/config.c — the standardConfig table (static_configs),
 * loadServerConfigFromString, configSetCommand, configGetCommand; the
 * command line handling is in main() in src/server.c.
 * Files: config.c (the table, special options, defaults), config_types.c
 * (parse and print by type), config_load.c (quoting, files, the command
 * line, usage), cmd_config.c (CONFIG SET/GET, the command),
 * config_rewrite.c (CONFIG REWRITE); what they share is in
 * config_private.h, which nothing else includes.
 */
#ifndef SOLOIST_CONFIG_H
#define SOLOIST_CONFIG_H

#include <stddef.h>
#include <stdio.h>

struct client;

/* What config_load_args returns. The caller (main) acts on each:
 *   CONFIG_ARGS_OK       options loaded, start the server
 *   CONFIG_ARGS_ERROR    *err says why (print it to stderr, exit 1)
 *   CONFIG_ARGS_VERSION  -v / --version was given: print the version, exit 0
 *   CONFIG_ARGS_HELP     -h / --help was given: config_usage(), exit 0
 * Like Valkey, -v and -h are recognised only as the first argument. */
#define CONFIG_ARGS_OK 0
#define CONFIG_ARGS_ERROR (-1)
#define CONFIG_ARGS_VERSION 1
#define CONFIG_ARGS_HELP 2

/* Valkey's bound for io-threads since 8.1 (IO_THREADS_MAX_NUM, pull request #1220; 8.0 had 128). */
#define CONFIG_IO_THREADS_MAX 256
/* Valkey's CONFIG_MIN_HZ / CONFIG_MAX_HZ: hz is accepted in 0..INT_MAX and
 * then clamped into this range, as Valkey does. */
#define CONFIG_MIN_HZ 1
#define CONFIG_MAX_HZ 500

/* Fills every server.* configuration field with its default (and frees
 * what an earlier load allocated, so it may be called again). */
void config_init_defaults(void);

/* Frees the strings the configuration owns (bind addresses, requirepass,
 * logfile, configfile...). Call at exit so leak checkers stay quiet. */
void config_free_all(void);

/* soloist-server [/path/to/soloist.conf] [-] [--name value ...]
 * The first argument, when it does not start with '-', is the config
 * file (server.configfile gets its absolute path). A lone "-" as the first
 * or last argument reads more configuration from stdin. Every --name
 * starts an option and every argument until the next --name is one of
 * its values, so `--save ''`, `--bind 127.0.0.1 ::1` and
 * `--client-output-buffer-limit "normal 0 0 0"` work as in Valkey. The
 * options are applied after the file, in order, exactly as if they were
 * lines appended to it. Returns one of CONFIG_ARGS_*; on
 * CONFIG_ARGS_ERROR *err is a zmalloc'd message (zfree it). */
int config_load_args(int argc, char **argv, char **err);

/* Loads a config file / a config text. 0 on success; -1 with a
 * zmalloc'd *err in Valkey's shape:
 *   *** FATAL CONFIG FILE ERROR (Version 0.1.0) ***
 *   Reading the configuration file, at line 2
 *   >>> 'port 99999'
 *   argument must be between 0 and 65535 inclusive
 * Lines are split as Valkey's sdssplitargs does: "double quotes" with
 * \n \r \t \b \a \\ \" \xHH escapes, 'single quotes' with \' only,
 * # comments and blank lines skipped. config_load_file does not change
 * server.configfile (config_load_args does). */
int config_load_file(const char *path, char **err);
int config_load_string(const char *text, char **err);

/* Sets one option as `CONFIG SET name value` from a loopback client
 * would: immutable options are refused, and protected ones (dir,
 * dbfilename) unless enable-protected-configs is yes or local; the apply
 * hook runs, and a failure leaves the old value.
 * 0 on success; -1 with a zmalloc'd *err holding the text of CONFIG SET's
 * error without its "ERR " prefix. */
int config_set(const char *name, const char *value, char **err);

/* The value CONFIG GET prints for `name` (any case), zmalloc'd; NULL
 * when there is no such option. */
char *config_get(const char *name);

/* The option names CONFIG GET would return for these patterns (glob,
 * case-insensitive), in table order, each once. A pattern without * ? [
 * is looked up directly and returned as given (the caller's pointer,
 * spelled as asked, as Valkey answers `CONFIG GET PORT`). Writes at most
 * max names; returns how many matched (never more than there are
 * options). */
size_t config_get_matches(const char *const *patterns, int npatterns, const char **names, size_t max);

/* 1 when the option's value must not be logged (requirepass). */
int config_is_sensitive(const char *name);

/* The usage text for -h / --help. */
void config_usage(FILE *out, const char *progname);

/* Apply hooks: set by the module that owns the work (server_loop.c:
 * the event loop's size, and from step 4 the I/O thread pool's, through
 * io_offload.c) before the first CONFIG SET. They run only for CONFIG
 * SET (at load time the value is just stored and the server reads it when
 * it starts), after the new value is in server.*; returning 0 with *err
 * set makes CONFIG SET restore every option it changed and answer
 * "ERR CONFIG SET failed (possibly related to argument 'x') - <err>".
 *
 *   config_apply_io_threads(new_value, &err): resize the I/O thread pool
 *     to new_value (server.io_threads_num already holds it). When it (or
 *     another option's hook in the same CONFIG SET) fails, the old value
 *     is put back and the hook is called again with it, so it must accept
 *     being asked for the size it already has. NULL: CONFIG SET
 *     io-threads to a new value is refused.
 *   config_apply_listeners(&err): re-listen on server.port and
 *     server.bindaddr (Valkey: changeListener); called once when one
 *     CONFIG SET changes both. NULL: changing port or bind is refused.
 *   config_apply_maxclients(&err): make room for server.maxclients (event
 *     loop size, file limit; Valkey: updateMaxclients). NULL: changing
 *     maxclients is refused (the event loop was sized for the old one).
 * A hook is not called when CONFIG SET gives an option the value it
 * already has. */
extern int (*config_apply_io_threads)(int new_value, const char **err);
extern int (*config_apply_listeners)(const char **err);
extern int (*config_apply_maxclients)(const char **err);

#endif
