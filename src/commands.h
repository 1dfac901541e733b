/* commands.h — the command table's shape.
 *
 * Step 0 (commands layer). Owns: the description of a command (name,
 * arity, flags, key positions) that every command module exports in its
 * own table, the registry that src/commands.c builds from them at start,
 * and the dispatcher that runs a parsed command.
 * Threads: commands run on main, always. commands_lookup and
 * commands_lookup_queued also run on workers, in read jobs: the index and
 * the entries' names are not written after commands_init.
 * Valkey: struct serverCommand in src/server.h; the generated
 * src/commands.def. soloist's tables are hand-written, one per command
 * module (cmd_*.c), so a module adds commands without touching anyone
 * else's file: its procs stay static, and its table is its only export.
 */
#ifndef SOLOIST_COMMANDS_H
#define SOLOIST_COMMANDS_H

#include <stddef.h>
#include <stdint.h>

struct client;
struct obj;
typedef void command_proc(struct client *c);

/* Flags, named as Valkey names them in COMMAND INFO. */
#define CMD_WRITE (1u << 0)    /* "write" */
#define CMD_READONLY (1u << 1) /* "readonly" */
#define CMD_DENYOOM (1u << 2)  /* "denyoom" */
#define CMD_ADMIN (1u << 3)    /* "admin" */
#define CMD_FAST (1u << 4)     /* "fast" */
#define CMD_NOAUTH (1u << 5)   /* "no_auth": runs before AUTH */
#define CMD_LOADING (1u << 6)  /* "loading" */
#define CMD_STALE (1u << 7)    /* "stale" */
#define CMD_NOSCRIPT (1u << 8) /* "noscript" */
/* "movablekeys": the keys are not at fixed positions (ZUNIONSTORE's
 * numkeys says how many follow), so first/last/step tell only part of the
 * story. Redis 7.0 and Valkey derive it from the key specs; soloist marks
 * it by hand. COMMAND INFO prints it after every other flag. */
#define CMD_MOVABLEKEYS (1u << 9)
/* Transactions (multi.c). NO_MULTI: refused inside MULTI ("no_multi"; MULTI,
 * WATCH, SHUTDOWN). NO_QUEUE, soloist's own mark: run at once inside MULTI
 * instead of queued (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET: the commands
 * Valkey 8.1's processCommand names). */
#define CMD_NO_MULTI (1u << 16)
#define CMD_NO_QUEUE (1u << 17)
#define CMD_BLOCKING (1u << 10) /* "blocking": may block the client (blocked.c) */

typedef struct command {
    const char *name; /* lower case, as COMMAND INFO prints it */
    command_proc *proc;
    int arity; /* > 0 exact argc; < 0 at least -arity */
    uint32_t flags;
    int first_key, last_key, key_step; /* Valkey's legacy key positions */
    const char *group;                 /* Valkey's: "string", "generic", "server", "connection", "sorted-set" */
    const char *summary;
    /* Statistics for INFO commandstats; main thread only. */
    long long calls, usec, failed_calls, rejected_calls;
} command;

/* The command modules' tables, each ending in a {0} sentinel. These are
 * the registry's inputs: each is defined by the cmd_*.c file named beside
 * it, and nothing but commands.c reads them. */
extern command string_commands[];       /* cmd_string.c: GET, SET, INCR, ... */
extern command keys_commands[];         /* cmd_keys.c: DEL, EXISTS, EXPIRE, SCAN, ... */
extern command server_commands[];       /* cmd_server.c: PING, ECHO, HELLO, AUTH, ... */
extern command client_commands[];       /* cmd_client.c: CLIENT */
extern command config_commands[];       /* cmd_config.c: CONFIG */
extern command info_commands[];         /* cmd_info.c: INFO, COMMAND */
extern command zset_commands[];         /* cmd_zset.c: ZADD, ZRANGE, ZRANK, ZSCAN, ... */
extern command zset_algebra_commands[]; /* cmd_zset_algebra.c: ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD */
extern command multi_commands[];        /* multi.c: MULTI, EXEC, DISCARD, WATCH, UNWATCH */
extern command list_commands[];         /* cmd_list.c: LPUSH, LPOP, LRANGE, BLPOP, ... */
extern command hash_commands[];         /* cmd_hash.c: HSET, HGET, HGETALL, HSCAN, ... */
extern command set_commands[];          /* cmd_set.c: SADD, SMEMBERS, SINTER, SSCAN, ... */
extern command trace_commands[];        /* cmd_trace.c: TRACE, soloist's own */

/* Container commands (CLIENT, COMMAND, CONFIG) have subcommands, as in
 * Redis 7 and Valkey: each is an entry of its own named "client|list",
 * with its own arity and statistics, so errors read "wrong number of
 * arguments for 'client|setname' command" and INFO commandstats and
 * CLIENT LIST show "client|list". A subcommand's proc is usually its
 * container's, which dispatches on argv[1] itself. */
extern command client_subcommands[];  /* cmd_client.c */
extern command command_subcommands[]; /* cmd_info.c */
extern command config_subcommands[];  /* cmd_config.c */
extern command object_subcommands[];  /* cmd_keys.c */
extern command memory_subcommands[];  /* cmd_info.c */
extern command trace_subcommands[];   /* cmd_trace.c */
/* One entry of a subcommand table: no keys, no statistics yet. */
#define SUBCOMMAND(name, proc, arity, flags, group, summary)                                                           \
    { name, proc, arity, flags, 0, 0, 0, group, summary, 0, 0, 0, 0 }

/* The subcommand table of a container, or NULL for a plain command. */
command *commands_subcommands(const command *parent);
/* Looks up argv[1] among a container's subcommands; NULL when unknown. */
command *commands_lookup_subcommand(const command *parent, const char *name, size_t len);

/* Builds the lookup index from every table (server start). */
void commands_init(void);
/* Case-insensitive lookup; NULL when unknown. */
command *commands_lookup(const char *name, size_t len);
/* Looks up, in the command table, each queued command of c's that has no
 * entry yet (parsed_cmd.cmd). Runs on the thread that just parsed them: a
 * worker inside its read job, or main. The table is read-only once
 * commands_init has run, so workers may read it. */
void commands_lookup_queued(struct client *c);
/* Iterates all commands: call with *cursor = 0 until it returns NULL. */
command *commands_next(size_t *cursor);
size_t commands_count(void);

/* Looks up, checks (arity, auth) and runs the command in c->argv
 * (networking.c, for each parsed command). */
void process_command(struct client *c);
/* Runs c->cmd and accounts its time (Valkey: call()). */
void call(struct client *c);
/* Transactions: while c is in MULTI, process_command hands each command
 * that passed its checks (and is not CMD_NO_QUEUE) to queue instead of
 * running it. multi.c registers it at start (multi_init): multi.c uses
 * call(), so the dispatcher reaches it through this pointer, as the
 * keyspace reaches its listener, and no two modules use each other. */
typedef void commands_queue_fn(struct client *c);
/* abort: EXEC itself was refused (its arity, NOAUTH): the transaction is
 * discarded and the refusal sent as -EXECABORT (Valkey: rejectCommand
 * calls execCommandAbort), so a client is never left in MULTI by an EXEC
 * that failed. err is the refusal's text, as reply_error takes it. */
typedef void commands_exec_abort_fn(struct client *c, const char *err);
void commands_on_multi(commands_queue_fn *queue, commands_exec_abort_fn *abort);
/* MONITOR: called once call() has run cmd for c (c->argv still holds its
 * arguments), and for an EXEC refused before it ran. networking.c
 * registers it at start (networking_init), for the same reason as
 * commands_on_multi: the dispatcher is below it. */
typedef void commands_call_fn(struct client *c, const struct command *cmd);
void commands_on_call(commands_call_fn *fn);
/* Whether an argument is the keyword s, in any case (an option's name). */
int arg_is(const struct obj *o, const char *s);
/* "ERR wrong number of arguments for 'cmd' command", for c->cmd. */
void reply_error_arity(struct client *c);

/* A database index as SELECT and COPY ... DB take it (Valkey:
 * getIntFromObjectOrReply, then selectDb's range check). soloist serves
 * database 0 alone, so any other index gets Valkey's reply for a database
 * the server does not have. 1 for index 0; otherwise replies the error
 * and returns 0. */
int commands_db_index_or_reply(struct client *c, const struct obj *idx);
/* A SCAN or ZSCAN cursor (Valkey: parseScanCursorOrReply, string2ull's
 * rules): 1 and *cursor set, or "invalid cursor" replied and 0. */
int commands_scan_cursor_or_reply(struct client *c, const struct obj *o, unsigned long long *cursor);
/* Whether a pattern is "*": Valkey answers KEYS * and SCAN MATCH *
 * without calling the matcher (which would refuse the empty key). */
int commands_pattern_is_all(const struct obj *p);
/* SCAN's options as SCAN and ZSCAN read them, the n arguments at argv
 * (Valkey: scanGenericCommand): COUNT n, at least 1, into *count; MATCH
 * pattern into *pat, NULL for "*". Any other option goes to own(c, argv
 * + i, n - i, arg), which returns how many arguments it took: 0 when the
 * option is not its command's, -1 once it has replied an error. 1; or 0,
 * the error replied. */
typedef int commands_scan_own_fn(struct client *c, struct obj *const *argv, int n, void *arg);
int commands_scan_options_or_reply(struct client *c, struct obj *const *argv, int n, long long *count,
                                   const struct obj **pat, commands_scan_own_fn *own, void *arg);
/* A scan's reply, SCAN's and its kin's: the next cursor as a bulk string,
 * then an array of n elements, which the caller sends after this call. */
void commands_reply_scan_header(struct client *c, unsigned long long cursor, long n);
/* The same when the elements are the n objects at v: each is sent as a
 * bulk string and released (the reply has its own copy). */
void commands_reply_scan(struct client *c, unsigned long long cursor, struct obj **v, size_t n);
/* A scan of a key that does not exist: cursor 0 and no elements. */
void commands_reply_empty_scan(struct client *c);

#endif
