/* cmd_server.c — connection and server commands.
 *
 * Step 0 (server layer). Owns: server_commands[] — PING ECHO QUIT HELLO
 * AUTH SELECT TIME SHUTDOWN MONITOR RESET — and their replies. CLIENT,
 * CONFIG, INFO, COMMAND and MEMORY live in cmd_client.c, cmd_config.c and
 * cmd_info.c; the MONITOR feed itself is networking.c's.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: pingCommand, echoCommand (src/server.c), helloCommand
 * (src/networking.c), authCommand (src/acl.c), selectCommand (src/db.c),
 * timeCommand, monitorCommand (src/server.c), resetCommand
 * (src/networking.c).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "multi.h"
#include "networking.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static void ping_command(client *c) {
    if (c->argc > 2) {
        reply_error_arity(c);
        return;
    }
    if (c->argc == 2)
        reply_bulk(c, c->argv[1]);
    else
        reply_status(c, "PONG");
}

static void echo_command(client *c) { reply_bulk(c, c->argv[1]); }

static void quit_command(client *c) {
    reply_ok(c);
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

static void select_command(client *c) {
    if (commands_db_index_or_reply(c, c->argv[1])) reply_ok(c);
}

/* 1 when the password matches; constant time in the password's length,
 * as Valkey's time_independent_strcmp. */
static int check_password(const obj *pass) {
    const char *want = server.requirepass;
    size_t wl = strlen(want);
    unsigned diff = (unsigned)(wl ^ pass->len);
    for (size_t i = 0; i < pass->len; i++) diff |= (unsigned char)pass->ptr[i] ^ (unsigned char)want[i % (wl ? wl : 1)];
    return diff == 0;
}

/* AUTH [username] password. Only the "default" user exists. Returns 1 on
 * success; on failure it has replied. */
static int try_auth(client *c, obj *user, obj *pass) {
    if (user && strcmp(user->ptr, "default") != 0) {
        reply_error(c, "-WRONGPASS invalid username-password pair or user is disabled.");
        return 0;
    }
    if (!server.requirepass) {
        if (!user) {
            reply_error(c, "AUTH <password> called without any password configured for the default user. "
                           "Are you sure your configuration is correct?");
            return 0;
        }
        c->authenticated = 1; /* "default" with any password, like nopass */
        return 1;
    }
    if (!check_password(pass)) {
        reply_error(c, "-WRONGPASS invalid username-password pair or user is disabled.");
        return 0;
    }
    c->authenticated = 1;
    return 1;
}

static void auth_command(client *c) {
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    obj *user = c->argc == 3 ? c->argv[1] : NULL;
    if (try_auth(c, user, c->argv[c->argc - 1])) reply_ok(c);
    /* Every argument, user name included, whether or not it matched
     * (Valkey's authCommand redacts them all). */
    for (int j = 1; j < c->argc; j++) client_redact_arg(c, j);
}

static int valid_client_name(const obj *name) {
    for (size_t i = 0; i < name->len; i++)
        if (name->ptr[i] < '!' || name->ptr[i] > '~') return 0;
    return 1;
}

static void hello_command(client *c) {
    long long ver = 0;
    int next = 1;
    if (c->argc >= 2) {
        if (!obj_get_ll(c->argv[1], &ver)) {
            reply_error(c, "Protocol version is not an integer or out of range");
            return;
        }
        next = 2;
        if (ver < 2 || ver > 3) {
            reply_error(c, "-NOPROTO unsupported protocol version");
            return;
        }
    }
    obj *setname = NULL;
    for (int j = next; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c->argv[j], "AUTH") && more >= 2) {
            int ok = try_auth(c, c->argv[j + 1], c->argv[j + 2]);
            /* The user and the password never reach a monitor (Valkey's
             * helloCommand redacts both), whether AUTH passed or not. */
            client_redact_arg(c, j + 1);
            client_redact_arg(c, j + 2);
            if (!ok) return;
            j += 2;
        } else if (arg_is(c->argv[j], "SETNAME") && more >= 1) {
            setname = c->argv[++j];
            if (!valid_client_name(setname)) {
                reply_error(c, "Client names cannot contain spaces, newlines or special characters.");
                return;
            }
        } else {
            reply_error_format(c, "Syntax error in HELLO option '%s'", c->argv[j]->ptr);
            return;
        }
    }
    if (!c->authenticated) {
        reply_error(c, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
                       "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the "
                       "RESP protocol version at the same time");
        return;
    }
    if (setname) {
        zfree(c->name);
        c->name = setname->len ? zstrndup(setname->ptr, setname->len) : NULL;
    }
    if (ver) c->resp = (int)ver;
    reply_map_len(c, 7);
    reply_bulk_cstr(c, "server");
    reply_bulk_cstr(c, "soloist");
    reply_bulk_cstr(c, "version");
    reply_bulk_cstr(c, SOLOIST_COMPAT_VERSION);
    reply_bulk_cstr(c, "proto");
    reply_long_long(c, c->resp);
    reply_bulk_cstr(c, "id");
    reply_long_long(c, (long long)c->id);
    reply_bulk_cstr(c, "mode");
    reply_bulk_cstr(c, "standalone");
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, "master");
    reply_bulk_cstr(c, "modules");
    reply_array_len(c, 0);
}

/* TIME: the wall clock as two bulk strings, seconds and microseconds. */
static void time_command(client *c) {
    long long us = util_ustime();
    reply_array_len(c, 2);
    reply_bulk_ll(c, us / 1000000);
    reply_bulk_ll(c, us % 1000000);
}

static void shutdown_command(client *c) {
    for (int j = 1; j < c->argc; j++) {
        if (!arg_is(c->argv[j], "NOSAVE") && !arg_is(c->argv[j], "SAVE") && !arg_is(c->argv[j], "NOW") &&
            !arg_is(c->argv[j], "FORCE") && !arg_is(c->argv[j], "ABORT")) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        if (arg_is(c->argv[j], "ABORT")) {
            reply_error(c, "No shutdown in progress.");
            return;
        }
    }
    /* Nothing to save: soloist has no persistence. The client gets no
     * reply; its connection closes with the server, as in Valkey. */
    server.shutdown_asap = 1;
    c->flags |= CLIENT_CLOSE_ASAP;
}

/* MONITOR (Valkey: monitorCommand). Inside a transaction the client
 * expects one reply per command, which a monitor cannot give (Valkey's
 * DENY_BLOCKING, set while EXEC runs the queue); a monitor asking again
 * gets no reply at all, as in Valkey. The feed is networking.c's. */
static void monitor_command(client *c) {
    if (c->flags & CLIENT_MULTI) {
        reply_error(c, "MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (c->flags & CLIENT_MONITOR) return;
    monitor_add(c);
    reply_ok(c);
}

/* RESET: the connection as it was when it connected (Valkey: resetCommand
 * and clearClientConnectionState): out of MONITOR, out of any transaction
 * and its watches, database 0, RESP2, authenticated only if no password
 * is set, no name, and replies on. The library name and version stay:
 * they still describe the library behind the connection. */
static void reset_command(client *c) {
    if (c->flags & CLIENT_MONITOR) monitor_remove(c);
    multi_free_client(c);
    c->flags &= ~(CLIENT_MULTI | CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC | CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP_NEXT);
    c->db = &db0;
    c->resp = 2;
    c->authenticated = server.requirepass == NULL;
    zfree(c->name);
    c->name = NULL;
    reply_status(c, "RESET");
}

command server_commands[] = {
    {"ping", ping_command, -1, CMD_FAST | CMD_STALE | CMD_LOADING, 0, 0, 0, "connection",
     "Returns the server's liveliness response.", 0, 0, 0, 0},
    {"echo", echo_command, 2, CMD_FAST | CMD_STALE | CMD_LOADING, 0, 0, 0, "connection", "Returns the given string.", 0,
     0, 0, 0},
    {"quit", quit_command, -1, CMD_NOAUTH | CMD_FAST | CMD_STALE | CMD_LOADING | CMD_NO_QUEUE, 0, 0, 0, "connection",
     "Closes the connection.", 0, 0, 0, 0},
    {"select", select_command, 2, CMD_FAST | CMD_STALE | CMD_LOADING, 0, 0, 0, "connection",
     "Changes the selected database.", 0, 0, 0, 0},
    {"auth", auth_command, -2, CMD_NOAUTH | CMD_FAST | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT, 0, 0, 0, "connection",
     "Authenticates the connection.", 0, 0, 0, 0},
    {"hello", hello_command, -1, CMD_NOAUTH | CMD_FAST | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT, 0, 0, 0, "connection",
     "Handshakes with the server.", 0, 0, 0, 0},
    {"time", time_command, 1, CMD_FAST | CMD_STALE | CMD_LOADING, 0, 0, 0, "server", "Returns the server time.", 0, 0,
     0, 0},
    {"shutdown", shutdown_command, -1, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT | CMD_NO_MULTI, 0, 0, 0,
     "server", "Synchronously saves the database(s) to disk and shuts down the server.", 0, 0, 0, 0},
    {"monitor", monitor_command, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server",
     "Listens for all requests received by the server in real-time.", 0, 0, 0, 0},
    {"reset", reset_command, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_NOAUTH | CMD_FAST | CMD_NO_QUEUE, 0, 0, 0,
     "connection", "Resets the connection.", 0, 0, 0, 0},
    {0},
};
