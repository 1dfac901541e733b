/* cmd_client.c — the CLIENT command and its subcommands.
 *
 * Step 0 (server layer). Owns: client_commands[] — CLIENT ID, GETNAME,
 * SETNAME, LIST, INFO, KILL, REPLY, SETINFO, UNBLOCK, NO-EVICT, NO-TOUCH,
 * HELP.
 * CLIENT REPLY only sets the client's flags (client.h); reply.c drops
 * what a flagged client would have been sent.
 * Threads: main thread only (commands run on the soloist).
 * Valkey: clientCommand in src/networking.c.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "blocked.h"
#include "client.h"
#include "commands.h"
#include "io_offload.h"
#include "networking.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* Valkey's validateClientAttr: a name or library field is printable
 * ASCII without spaces, so a CLIENT LIST line can be split on spaces. */
static int valid_client_attr(const obj *o) {
    for (size_t i = 0; i < o->len; i++)
        if (o->ptr[i] < '!' || o->ptr[i] > '~') return 0;
    return 1;
}

/* Replaces *field with a copy of o, or with NULL when o is empty. */
static void set_client_attr(char **field, const obj *o) {
    zfree(*field);
    *field = o->len ? zstrndup(o->ptr, o->len) : NULL;
}

static size_t attr_len(const char *s) { return s ? strlen(s) : 0; }

/* Replies with one CLIENT LIST line per client that `only` selects: all
 * clients when only == NULL and ids == NULL, one client (CLIENT INFO)
 * when only != NULL, or the clients whose ids are in ids[0..nids) (CLIENT
 * LIST ID ...), in the order given. Each line ends in a newline, CLIENT
 * INFO's too, as in Valkey. */
static void client_list_reply(client *c, client *only, const long long *ids, int nids) {
    size_t cap = 512, len = 0;
    char *out = zmalloc(cap);
    for (int i = 0; i < (ids ? nids : 1); i++) {
        for (client *x = server.clients; x; x = x->next) {
            if ((only && x != only) || (ids && (long long)x->id != ids[i])) continue;
            /* The fixed fields fit in 900 bytes; the three free-form ones
             * are as long as the client made them. */
            size_t need = 900 + attr_len(x->name) + attr_len(x->lib_name) + attr_len(x->lib_ver);
            while (cap - len < need) out = zrealloc(out, cap *= 2);
            len += client_info_string(x, out + len, cap - len);
            out[len++] = '\n';
        }
    }
    reply_verbatim(c, out, len, "txt");
    zfree(out);
}

/* Valkey's getClientTypeByName, for CLIENT KILL TYPE and CLIENT LIST
 * TYPE: soloist has normal clients only. */
static int known_client_type(const obj *t) {
    return arg_is(t, "normal") || arg_is(t, "master") || arg_is(t, "primary") || arg_is(t, "replica") ||
           arg_is(t, "slave") || arg_is(t, "pubsub");
}

typedef struct kill_filter {
    long long id, max_age; /* 0: any */
    const char *addr, *laddr;
    int skipme, none; /* none: a TYPE no soloist client has */
} kill_filter;

/* One filter of the new form at argv[i] (its value at i + 1), as Valkey
 * parses it (clientCommand, "kill"): 1, or 0 once the error is replied.
 * A filter without a value is a syntax error. */
static int kill_option(client *c, int i, kill_filter *f) {
    obj *k = c->argv[i], *v = i + 1 < c->argc ? c->argv[i + 1] : NULL;
    if (v && arg_is(k, "id")) {
        if (!obj_get_ll(v, &f->id) || f->id <= 0) {
            reply_error(c, "client-id should be greater than 0");
            return 0;
        }
    } else if (v && arg_is(k, "maxage")) {
        if (!obj_get_ll(v, &f->max_age)) {
            reply_error(c, "maxage is not an integer or out of range");
            return 0;
        }
        if (f->max_age <= 0) {
            reply_error(c, "maxage should be greater than 0");
            return 0;
        }
    } else if (v && arg_is(k, "type")) {
        if (!known_client_type(v)) {
            reply_error_format(c, "Unknown client type '%s'", v->ptr);
            return 0;
        }
        if (!arg_is(v, "normal")) f->none = 1;
    } else if (v && arg_is(k, "addr")) {
        f->addr = v->ptr;
    } else if (v && arg_is(k, "laddr")) {
        f->laddr = v->ptr;
    } else if (v && arg_is(k, "user")) {
        if (strcmp(v->ptr, "default")) {
            reply_error_format(c, "No such user '%s'", v->ptr);
            return 0;
        }
    } else if (v && arg_is(k, "skipme") && (arg_is(v, "yes") || arg_is(v, "no"))) {
        f->skipme = arg_is(v, "yes");
    } else {
        reply_error(c, ERR_SYNTAX);
        return 0;
    }
    return 1;
}

/* CLIENT KILL ip:port (the old form: OK or "No such client", and one may
 * kill oneself) | CLIENT KILL <filter> <value> ... (the count killed). */
static void client_kill(client *c) {
    int old_form = c->argc == 3;
    kill_filter f = {.skipme = !old_form};
    if (old_form)
        f.addr = c->argv[2]->ptr;
    else
        for (int i = 2; i < c->argc; i += 2)
            if (!kill_option(c, i, &f)) return;
    long long killed = 0, now = util_mstime();
    int kill_self = 0;
    for (client *x = server.clients; x && !f.none; x = x->next) {
        /* A client joins server.clients before its ACCEPT job runs, and
         * the worker writes addr and laddr there (client_io_accept): wait
         * for it before reading them, as CLIENT LIST does. */
        if ((f.addr || f.laddr) && x->io_accepting) io_offload_wait_read(x);
        if ((f.id && (long long)x->id != f.id) || (f.addr && strcmp(x->addr, f.addr)) ||
            (f.laddr && strcmp(x->laddr, f.laddr)) || (x == c && f.skipme) ||
            (f.max_age && (now - x->ctime) / 1000 < f.max_age))
            continue;
        /* Killing oneself waits for the reply, as in Valkey. */
        if (x == c)
            kill_self = 1;
        else
            client_close_async(x);
        killed++;
    }
    if (!old_form)
        reply_long_long(c, killed);
    else if (killed)
        reply_ok(c);
    else
        reply_error(c, "No such client");
    if (kill_self) c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR] (Valkey: clientCommand's unblock
 * branch): the reason is checked before the id; :1 when the client was
 * blocked, :0 otherwise (no such client, or not blocked). */
static void client_unblock(client *c) {
    /* The table's arity (-3) lets more arguments through, which Valkey
     * answers as a wrong subcommand. */
    if (c->argc > 4) {
        reply_subcommand_syntax_error(c);
        return;
    }
    int error = 0;
    if (c->argc == 4) {
        if (arg_is(c->argv[3], "error"))
            error = 1;
        else if (!arg_is(c->argv[3], "timeout")) {
            reply_error(c, "CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    long long id;
    if (!obj_get_ll(c->argv[2], &id)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    client *target = NULL;
    for (client *x = server.clients; x && !target; x = x->next)
        if ((long long)x->id == id) target = x;
    reply_long_long(c, target && blocked_unblock(target, error));
}

/* Each subcommand has its own proc in client_subcommands[] below:
 * process_command looks argv[1] up there, checks that slot's arity and
 * runs its proc, so none of these checks argc beyond what the arity
 * leaves open. */

/* CLIENT ID */
static void client_id_command(client *c) { reply_long_long(c, (long long)c->id); }

/* CLIENT GETNAME: the name, or null when none was set. */
static void client_getname_command(client *c) {
    if (c->name)
        reply_bulk_cstr(c, c->name);
    else
        reply_null(c);
}

/* CLIENT SETNAME name */
static void client_setname_command(client *c) {
    if (!valid_client_attr(c->argv[2])) {
        reply_error(c, "Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    set_client_attr(&c->name, c->argv[2]);
    reply_ok(c);
}

/* CLIENT LIST ID id [id ...]: only those clients. */
static void client_list_ids(client *c) {
    int nids = c->argc - 3;
    long long *ids = zmalloc(sizeof(*ids) * (size_t)nids);
    for (int i = 0; i < nids; i++) {
        if (!obj_get_ll(c->argv[3 + i], &ids[i]) || ids[i] <= 0) {
            zfree(ids);
            reply_error(c, "Invalid client ID");
            return;
        }
    }
    client_list_reply(c, NULL, ids, nids);
    zfree(ids);
}

/* CLIENT LIST [TYPE type | ID id [id ...]] */
static void client_list_command(client *c) {
    if (c->argc == 4 && arg_is(c->argv[2], "type")) {
        obj *t = c->argv[3];
        if (!known_client_type(t)) {
            reply_error_format(c, "Unknown client type '%s'", t->ptr);
            return;
        }
        if (!arg_is(t, "normal")) {
            reply_verbatim(c, "", 0, "txt"); /* soloist has no such clients */
            return;
        }
    } else if (c->argc > 3 && arg_is(c->argv[2], "id")) {
        client_list_ids(c);
        return;
    } else if (c->argc != 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    client_list_reply(c, NULL, NULL, 0);
}

/* CLIENT INFO: this client's CLIENT LIST line. */
static void client_info_command(client *c) { client_list_reply(c, c, NULL, 0); }

/* CLIENT SETINFO LIB-NAME|LIB-VER value. Client libraries (redis-py,
 * go-redis, valkey-glide) send these on connect; CLIENT LIST shows them. */
static void client_setinfo_command(client *c) {
    char **field = arg_is(c->argv[2], "lib-name") ? &c->lib_name : arg_is(c->argv[2], "lib-ver") ? &c->lib_ver : NULL;
    if (!field) {
        reply_error_format(c, "Unrecognized option '%s'", c->argv[2]->ptr);
        return;
    }
    if (!valid_client_attr(c->argv[3])) {
        reply_error_format(c, "%s cannot contain spaces, newlines or special characters.", c->argv[2]->ptr);
        return;
    }
    set_client_attr(field, c->argv[3]);
    reply_ok(c);
}

/* CLIENT REPLY ON|OFF|SKIP. OFF and SKIP answer nothing, not even to
 * themselves: OFF is set before any reply could be appended, and SKIP
 * never replies. */
static void client_reply_command(client *c) {
    if (arg_is(c->argv[2], "on")) {
        c->flags &= ~(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP);
        reply_ok(c);
    } else if (arg_is(c->argv[2], "off")) {
        c->flags |= CLIENT_REPLY_OFF;
    } else if (arg_is(c->argv[2], "skip")) {
        if (!(c->flags & CLIENT_REPLY_OFF)) c->flags |= CLIENT_REPLY_SKIP_NEXT;
    } else {
        reply_error(c, ERR_SYNTAX);
    }
}

/* CLIENT NO-EVICT|NO-TOUCH ON|OFF: accepted for clients that set them;
 * soloist evicts no client and keeps no LRU/LFU clock, so neither mode
 * changes anything and neither is remembered. */
static void client_mode_command(client *c) {
    if (arg_is(c->argv[2], "on") || arg_is(c->argv[2], "off"))
        reply_ok(c);
    else
        reply_error(c, ERR_SYNTAX);
}

/* CLIENT HELP: Valkey's lines, in its order, for the subcommands soloist
 * has (no CACHING, GETREDIR, PAUSE, UNPAUSE, TRACKING, TRACKINGINFO: a
 * client reading this should not be offered what would fail). */
static void client_help_command(client *c) {
    static const char *const help[] = {
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|PRIMARY|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes).",
        "    * ID <client-id>",
        "      Kill connections by client id.",
        "    * MAXAGE <maxage>",
        "      Kill connections older than the specified age.",
        "LIST [options ...]",
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|PRIMARY|REPLICA|PUBSUB)",
        "      Return clients of specified type.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are:",
        "    * LIB-NAME: the client lib name.",
        "    * LIB-VER: the client lib version.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "NO-TOUCH (ON|OFF)",
        "    Will not touch LRU/LFU stats when this mode is on.",
        NULL,
    };
    reply_help(c, help);
}

/* The container's own proc. process_command runs the subcommand's proc
 * in its place, and refuses a CLIENT with no subcommand or an unknown
 * one before any proc runs; this answers a call that reached it anyway
 * as Valkey answers an unknown subcommand. */
static void client_command(client *c) { reply_subcommand_syntax_error(c); }

/* Subcommands: name, proc, arity, flags, summary. */
#define SUB(name, proc, arity, flags, summary) SUBCOMMAND(name, proc, arity, flags, "connection", summary)
command client_subcommands[] = {
    SUB("client|id", client_id_command, 2, CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Returns the unique client ID of the connection."),
    SUB("client|getname", client_getname_command, 2, CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Returns the name of the connection."),
    SUB("client|setname", client_setname_command, 3, CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Sets the connection name."),
    SUB("client|list", client_list_command, -2, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Lists open connections."),
    SUB("client|info", client_info_command, 2, CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Returns information about the connection."),
    SUB("client|reply", client_reply_command, 3, CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Instructs the server whether to reply to commands."),
    SUB("client|kill", client_kill, -3, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Terminates open connections."),
    SUB("client|unblock", client_unblock, -3, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Unblocks a client blocked by a blocking command from a different connection."),
    SUB("client|setinfo", client_setinfo_command, 4, CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Sets information specific to the client or connection."),
    SUB("client|no-evict", client_mode_command, 3, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Sets the client eviction mode of the connection."),
    SUB("client|no-touch", client_mode_command, 3, CMD_STALE | CMD_LOADING | CMD_NOSCRIPT,
        "Controls whether commands sent by the client affect the LRU/LFU of accessed keys."),
    SUB("client|help", client_help_command, 2, CMD_STALE | CMD_LOADING,
        "Returns helpful text about the different subcommands."),
    {0},
};
#undef SUB

command client_commands[] = {
    {"client", client_command, -2, CMD_STALE | CMD_LOADING | CMD_NOSCRIPT, 0, 0, 0, "connection",
     "A container for client connection commands.", 0, 0, 0, 0},
    {0},
};
