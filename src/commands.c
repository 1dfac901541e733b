/* commands.c — the registry of every command soloist answers, and the
 * dispatcher that runs one.
 *
 * Step 0 (commands layer). Owns: the index from a command's name to its
 * entry in one of the modules' tables (commands.h), built once at start;
 * the dispatcher (process_command, call) that networking.c calls for
 * every parsed command; the arity error; and the argument checks that
 * more than one module shares (a database index, a scan cursor). The
 * command modules' tables are above it in the layers (cmd_*.c): it knows
 * them only as the extern arrays commands.h declares, which the linker
 * resolves, as a handler table is filled in without an include.
 * Threads: main thread, except commands_lookup and commands_lookup_queued,
 * which read jobs call on workers: they read only the index and the
 * entries' names, which nothing writes after commands_init.
 * Valkey: populateCommandTable / lookupCommand, processCommand and call
 * in src/server.c. Valkey keeps commands in a dict hashed with a
 * case-insensitive SipHash. soloist keeps two indexes, both written only
 * by commands_init: a sorted array, for commands_next's alphabetical
 * walk (COMMAND, INFO commandstats, CONFIG RESETSTAT), and an
 * open-addressing hash table for commands_lookup, which every request
 * pays for. A binary search over the ~160 names costs up to eight
 * strcasecmp calls a lookup (seven for GET); the table costs one hash of
 * the name's few bytes, a length test and, nearly always, one
 * comparison.
 */
#include "commands.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "object.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static command **index_;
static size_t index_len;

/* The lookup table: slots of a command and its name's length, a power of
 * two at least four times the commands, so a probe sequence is short; a
 * NULL command is empty. The length is tested before the bytes: a name
 * from the wire may hold a NUL, at which strncasecmp would stop early and
 * call "get\0..." equal to "get", and reading the entry's name past its
 * own length would then run off its end. name_hash folds ASCII case
 * (| 0x20 lowercases a letter; command names are lower-case letters), so
 * "get", "GET" and "Get" land in one slot, and the comparison after it
 * is case-blind too. */
typedef struct name_slot {
    command *cmd;
    size_t len;
} name_slot;
static name_slot *slots;
static size_t slots_mask;

static uint64_t name_hash(const char *name, size_t len) {
    uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (uint64_t)((unsigned char)name[i] | 0x20)) * UINT64_C(0x100000001b3);
    return h;
}

static void index_by_hash(void) {
    size_t n = 16;
    while (n < 4 * index_len) n *= 2;
    zfree(slots);
    slots = zcalloc(n * sizeof(*slots));
    slots_mask = n - 1;
    for (size_t i = 0; i < index_len; i++) {
        size_t len = strlen(index_[i]->name);
        size_t at = name_hash(index_[i]->name, len) & slots_mask;
        while (slots[at].cmd) at = (at + 1) & slots_mask;
        slots[at] = (name_slot){index_[i], len};
    }
}

static int by_name(const void *a, const void *b) {
    return strcasecmp((*(command *const *)a)->name, (*(command *const *)b)->name);
}

static command *const *tables(size_t *n) {
    static command *const all[] = {server_commands, client_commands, config_commands, info_commands,
                                   string_commands, keys_commands,   zset_commands,   zset_algebra_commands,
                                   multi_commands,  list_commands,   hash_commands,   set_commands,
                                   trace_commands};
    *n = sizeof(all) / sizeof(all[0]);
    return all;
}

static void find_containers(void);

void commands_init(void) {
    size_t ntables, count = 0;
    command *const *t = tables(&ntables);
    for (size_t i = 0; i < ntables; i++)
        for (command *c = t[i]; c->name; c++) count++;
    zfree(index_);
    index_ = zmalloc(count * sizeof(*index_));
    index_len = 0;
    for (size_t i = 0; i < ntables; i++)
        for (command *c = t[i]; c->name; c++) index_[index_len++] = c;
    qsort(index_, index_len, sizeof(*index_), by_name);
    index_by_hash();
    find_containers();
}

command *commands_lookup(const char *name, size_t len) {
    if (len == 0 || !slots) return NULL;
    for (size_t at = name_hash(name, len) & slots_mask; slots[at].cmd; at = (at + 1) & slots_mask)
        if (slots[at].len == len && strncasecmp(slots[at].cmd->name, name, len) == 0) return slots[at].cmd;
    return NULL;
}

/*@ lookup-queued */
/* Valkey 8.0's read job looks up the command it parsed (io_parsed_cmd) so
 * that main does not; soloist's read parses every complete command (only
 * the first before AUTH) and looks each one up. A command main parses
 * later, and an unknown name (NULL), is looked up at dispatch. */
void commands_lookup_queued(client *c) {
    for (int q = c->cmdq_pos; q < c->cmdq_len; q++) {
        parsed_cmd *pc = &c->cmdq[q];
        if (pc->cmd == NULL && pc->argc > 0) pc->cmd = commands_lookup(pc->argv[0]->ptr, pc->argv[0]->len);
    }
}
/*@ end */

/* The containers and their subcommand tables. commands_init finds each
 * container's entry once, so that process_command, which asks for every
 * command, compares six pointers and not six names. */
static struct {
    const char *name;
    command *table;
    const command *entry;
} families[] = {
    {"client", client_subcommands, NULL}, {"command", command_subcommands, NULL}, {"config", config_subcommands, NULL},
    {"object", object_subcommands, NULL}, {"memory", memory_subcommands, NULL},   {"trace", trace_subcommands, NULL},
};

static void find_containers(void) {
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
        families[i].entry = commands_lookup(families[i].name, strlen(families[i].name));
}

command *commands_subcommands(const command *parent) {
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
        if (parent == families[i].entry) return families[i].table;
    return NULL;
}

command *commands_lookup_subcommand(const command *parent, const char *name, size_t len) {
    command *sub = commands_subcommands(parent);
    size_t plen = strlen(parent->name);
    for (; sub && sub->name; sub++) {
        /* "client|list": compare the part after the bar. */
        const char *tail = sub->name + plen + 1;
        if (strlen(tail) == len && strncasecmp(tail, name, len) == 0) return sub;
    }
    return NULL;
}

command *commands_next(size_t *cursor) { return *cursor < index_len ? index_[(*cursor)++] : NULL; }

size_t commands_count(void) { return index_len; }

/* ------------------------------------------------------------ dispatch */

static commands_queue_fn *multi_queue;
static commands_exec_abort_fn *multi_exec_abort;
static commands_call_fn *call_done;

void commands_on_call(commands_call_fn *fn) { call_done = fn; }

void commands_on_multi(commands_queue_fn *queue, commands_exec_abort_fn *abort) {
    multi_queue = queue;
    multi_exec_abort = abort;
}

/* Valkey: flagTransaction. A command refused while c is in MULTI dooms the
 * transaction: EXEC will answer -EXECABORT. */
static void flag_transaction(client *c) {
    if (c->flags & CLIENT_MULTI) c->flags |= CLIENT_DIRTY_EXEC;
}

/* Valkey: rejectCommand — the error, and the transaction flagged; a
 * refused EXEC aborts the transaction instead (commands_on_multi). */
static void reject(client *c, const char *msg) {
    flag_transaction(c);
    if (c->cmd && multi_exec_abort && strcmp(c->cmd->name, "exec") == 0) {
        multi_exec_abort(c, msg);
        if (call_done) call_done(c, c->cmd); /* monitors see the EXEC (Valkey: execCommandAbort) */
    } else
        reply_error(c, msg);
}

/* Inside MULTI: refuses a NO_MULTI command, or queues any other that is
 * not NO_QUEUE (Valkey: processCommand). 1 when it took the command. */
static int in_transaction(client *c, command *cmd) {
    if (cmd->flags & CMD_NO_MULTI) {
        cmd->rejected_calls++;
        c->cmd = NULL;
        reject(c, "Command not allowed inside a transaction");
        return 1;
    }
    if ((cmd->flags & CMD_NO_QUEUE) || !multi_queue) return 0;
    multi_queue(c);
    c->cmd = NULL;
    return 1;
}

/*@ process-command */
void process_command(client *c) {
    obj *name = c->argv[0];
    command *cmd = c->parsed_cmd ? c->parsed_cmd : commands_lookup(name->ptr, name->len);
    c->parsed_cmd = NULL;
    c->cmd = cmd;
    if (!cmd) {
        /* Valkey: "unknown command '%.128s', with args beginning with: "
         * followed by each argument quoted, up to 128 bytes in all. */
        char args[256];
        size_t used = 0;
        args[0] = '\0';
        for (int i = 1; i < c->argc && used < 128; i++) {
            int n = snprintf(args + used, sizeof(args) - used, "'%.*s' ", (int)(128 - used), c->argv[i]->ptr);
            if (n < 0) break;
            used += (size_t)n < sizeof(args) - used ? (size_t)n : sizeof(args) - used - 1;
        }
        char msg[512];
        snprintf(msg, sizeof(msg), "unknown command '%.128s', with args beginning with: %s", name->ptr, args);
        reject(c, msg);
        return;
    }
    int container = commands_subcommands(cmd) != NULL && c->argc >= 2;
    command *sub = container ? commands_lookup_subcommand(cmd, c->argv[1]->ptr, c->argv[1]->len) : NULL;
    if (container && !sub) {
        /* Valkey: "unknown subcommand '%.128s'. Try %s HELP." with the
         * container's name in capitals. */
        char upper[32];
        size_t i;
        for (i = 0; cmd->name[i] && i < sizeof(upper) - 1; i++) upper[i] = (char)(cmd->name[i] & ~0x20);
        upper[i] = '\0';
        char msg[256];
        snprintf(msg, sizeof(msg), "unknown subcommand '%.128s'. Try %s HELP.", c->argv[1]->ptr, upper);
        c->cmd = NULL;
        reject(c, msg);
        return;
    }
    if (sub) c->cmd = cmd = sub;
    c->lastcmd = cmd;
    if ((cmd->arity > 0 && cmd->arity != c->argc) || c->argc < -cmd->arity) {
        char msg[128];
        cmd->rejected_calls++;
        snprintf(msg, sizeof(msg), "wrong number of arguments for '%s' command", cmd->name);
        reject(c, msg);
        c->cmd = NULL;
        return;
    }
    if (!c->authenticated && !(cmd->flags & CMD_NOAUTH)) {
        cmd->rejected_calls++;
        reject(c, "-NOAUTH Authentication required.");
        c->cmd = NULL;
        return;
    }
    /* A monitor is marked as a replica in Valkey, and a replica may not
     * touch the keyspace (processCommand). */
    if ((c->flags & CLIENT_MONITOR) && (cmd->flags & (CMD_READONLY | CMD_WRITE))) {
        cmd->rejected_calls++;
        reject(c, "Replica can't interact with the keyspace");
        c->cmd = NULL;
        return;
    }
    if ((c->flags & CLIENT_MULTI) && in_transaction(c, cmd)) return;
    call(c);
}
/*@ end */

/* A command's time is measured from the previous clock reading of the
 * EXEC phase (its start, or the end of the command before it in the same
 * batch) to the end of its proc: one clock read per command. The time to
 * free the previous command's arguments is charged to the next command. */
void call(client *c) {
    command *cmd = c->cmd;
    long long errors_before = server.stat_total_error_replies;
    uint64_t start = server.exec_clock_ns;
    cmd->proc(c);
    uint64_t end = util_monotonic_ns();
    uint64_t dur = end - start;
    server.exec_clock_ns = end;
    if (call_done) call_done(c, cmd);
    /* A command that blocked the client is counted once, when it ends: as
     * the rerun that serves it, or by blocked.c on a timeout (Valkey's call
     * skips the statistics of a client it just blocked). */
    if (c->flags & CLIENT_BLOCKED) {
        c->cmd = NULL;
        return;
    }
    cmd->calls++;
    cmd->usec += (long long)(dur / 1000);
    /* More errors than before: CONFIG RESETSTAT may have zeroed the count. */
    if (server.stat_total_error_replies > errors_before) cmd->failed_calls++;
    server.stat_numcommands++;
    c->commands_processed++;
    c->cmd = NULL;
}

int arg_is(const obj *o, const char *s) { return strcasecmp(o->ptr, s) == 0; }

void reply_error_arity(client *c) {
    reply_error_format(c, "wrong number of arguments for '%s' command", c->cmd ? c->cmd->name : "unknown");
}

/*@ db-index */
int commands_db_index_or_reply(struct client *c, const obj *idx) {
    long long id;
    if (!obj_get_ll(idx, &id)) {
        reply_error(c, ERR_NOT_INT);
        return 0;
    }
    if (id < INT_MIN || id > INT_MAX) {
        reply_error_format(c, "value is out of range, value must between %d and %d", INT_MIN, INT_MAX);
        return 0;
    }
    if (id != 0) {
        reply_error(c, "DB index is out of range");
        return 0;
    }
    return 1;
}
/*@ end */

/* Redis 7.0 read "-1" as ULONG_MAX; Valkey refuses a negative cursor (a
 * listed difference in tests/integration/deliberate_differences.txt). A
 * number string2ll accepts must not be negative; otherwise strtoull must
 * consume the whole, non-empty string. */
int commands_scan_cursor_or_reply(struct client *c, const obj *o, unsigned long long *cursor) {
    long long ll;
    int ok;
    if (str_to_ll(o->ptr, o->len, &ll)) {
        ok = ll >= 0;
        *cursor = (unsigned long long)ll;
    } else {
        char *end;
        errno = 0;
        *cursor = strtoull(o->ptr, &end, 10);
        ok = errno != EINVAL && errno != ERANGE && o->ptr[0] != '\0' && *end == '\0';
    }
    if (!ok) reply_error(c, "invalid cursor");
    return ok;
}

int commands_pattern_is_all(const obj *p) { return p->len == 1 && p->ptr[0] == '*'; }

/* COUNT or MATCH at argv[0]: the arguments it took, 0 when it is neither,
 * -1 once the error is replied. */
static int common_scan_option(struct client *c, obj *const *argv, int n, long long *count, const obj **pat) {
    if (n < 2) return 0; /* both take a value */
    if (!strcasecmp(argv[0]->ptr, "match")) {
        *pat = commands_pattern_is_all(argv[1]) ? NULL : argv[1];
        return 2;
    }
    if (strcasecmp(argv[0]->ptr, "count")) return 0;
    if (!obj_get_ll(argv[1], count)) {
        reply_error(c, ERR_NOT_INT);
        return -1;
    }
    if (*count >= 1) return 2;
    reply_error(c, ERR_SYNTAX);
    return -1;
}

int commands_scan_options_or_reply(struct client *c, obj *const *argv, int n, long long *count, const obj **pat,
                                   commands_scan_own_fn *own, void *arg) {
    for (int i = 0; i < n;) {
        int took = common_scan_option(c, argv + i, n - i, count, pat);
        if (!took && own) took = own(c, argv + i, n - i, arg);
        if (took < 0) return 0;
        if (!took) {
            reply_error(c, ERR_SYNTAX);
            return 0;
        }
        i += took;
    }
    return 1;
}

void commands_reply_scan_header(client *c, unsigned long long cursor, long n) {
    char buf[24]; /* unsigned: the top half of the cursor space is valid too */
    int blen = snprintf(buf, sizeof(buf), "%llu", cursor);
    reply_array_len(c, 2);
    reply_bulk_buf(c, buf, (size_t)blen);
    reply_array_len(c, n);
}

void commands_reply_scan(client *c, unsigned long long cursor, obj **v, size_t n) {
    commands_reply_scan_header(c, cursor, (long)n);
    for (size_t i = 0; i < n; i++) {
        reply_bulk(c, v[i]);
        obj_decr_ref(v[i]);
    }
}

void commands_reply_empty_scan(client *c) { commands_reply_scan_header(c, 0, 0); }
