/* cmd_config.c — CONFIG SET and GET, and the CONFIG command.
 *
 * Step 0 (server layer). Owns: CONFIG SET's all-or-nothing (set every value,
 * apply each hook once, restore everything on any failure), CONFIG GET's
 * name matching, config_set / config_get / config_is_sensitive /
 * config_get_matches, and the CONFIG command with its subcommands GET,
 * SET, RESETSTAT, REWRITE and HELP. The table and the types it goes
 * through are shared by config_private.h.
 * Threads: main thread only; CONFIG runs on the soloist like every
 * command, and an apply hook (config.h) may resize the thread pool or
 * re-listen from here.
 * Valkey: src/config.c configSetCommand (set all, apply, restore on
 * failure: restoreBackupConfig), configGetCommand, configHelpCommand,
 * configResetStatCommand, configRewriteCommand.
 */
#include "config.h"
#include "config_private.h"

#include <string.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "object.h"
#include "reply.h"
#include "server.h"
#include "server_loop.h"
#include "util.h"
#include "zmalloc.h"

/* Puts back the values saved before a failed CONFIG SET and re-runs the
 * apply functions (Valkey: restoreBackupConfig). */
static void restore_values(const cfg **set, char **old, int n, int (**applies)(const char **), int napply) {
    const char *e = NULL;
    for (int i = 0; i < n; i++)
        if (!cfg_set_string(set[i], old[i], &e))
            server_log(LL_WARNING, "Failed restoring failed CONFIG SET command. Error setting %s to '%s': %s",
                       set[i]->name, old[i], e);
    for (int k = 0; k < napply; k++)
        if (!applies[k](&e)) server_log(LL_WARNING, "Failed applying restored failed CONFIG SET command: %s", e);
}

/* Valkey's allowProtectedAction: enable-protected-configs yes, or local
 * and the client is on the loopback. */
static int protected_allowed(int local) {
    return cfg_enable_protected_configs == CFG_PROTECTED_YES ||
           (cfg_enable_protected_configs == CFG_PROTECTED_LOCAL && local);
}

/* Long: the three passes and the one restore path read as one
 * transaction; split, each piece would carry the same five arrays. */
/*@ config-set */
/* CONFIG SET name value [name value ...], all or nothing: every name is
 * checked first; then every value is set, keeping the old ones; then each
 * distinct apply function runs once; any failure restores everything.
 * Valkey: configSetCommand. */
static int set_many(const char *const *names, const char *const *values, int n, int local, char **err) {
    const cfg **set = zcalloc(sizeof(cfg *) * (size_t)n);
    char **old = zcalloc(sizeof(char *) * (size_t)n);
    int (**applies)(const char **) = zcalloc(sizeof(*applies) * (size_t)n);
    int *owner = zcalloc(sizeof(int) * (size_t)n);
    int napply = 0, rc = -1, i;
    int nrestore = 0, nreapply = 0; /* on failure: values to put back, applies to re-run */
    const char *errstr = NULL, *errname = NULL;

    for (i = 0; i < n; i++) {
        const cfg *c = cfg_lookup(names[i]);
        if (!c) {
            *err = strfmt("Unknown option or number of arguments for CONFIG SET - '%s'", names[i]);
            goto out;
        }
        errname = names[i];
        if (c->flags & F_IMMUTABLE) {
            errstr = "can't set immutable config";
            goto fail;
        }
        if ((c->flags & F_PROTECTED) && !protected_allowed(local)) {
            errstr = "can't set protected config";
            goto fail;
        }
        for (int j = 0; j < i; j++)
            if (set[j] == c) {
                errstr = "duplicate parameter";
                goto fail;
            }
        set[i] = c;
    }
    for (i = 0; i < n; i++) old[i] = cfg_get_value(set[i]);
    for (i = 0; i < n; i++) {
        int r = cfg_set_string(set[i], values[i], &errstr);
        if (!r) {
            errname = set[i]->name;
            nrestore = i + 1;
            goto fail;
        }
        if (r == 1 && set[i]->apply) {
            const char *missing = cfg_hook_missing(set[i]);
            if (missing) { /* refuse before anything is applied */
                errname = set[i]->name;
                errstr = missing;
                nrestore = i + 1;
                goto fail;
            }
            int k = 0;
            while (k < napply && applies[k] != set[i]->apply) k++;
            if (k == napply) {
                applies[napply] = set[i]->apply;
                owner[napply++] = i;
            }
        }
    }
    for (int k = 0; k < napply; k++) {
        if (!applies[k](&errstr)) {
            errname = set[owner[k]]->name;
            nrestore = n;
            nreapply = napply;
            goto fail;
        }
    }
    rc = 0;
    goto out;
fail:
    /* Formatted before restoring: errstr may point into a buffer that a
     * failing restore would overwrite. */
    *err = strfmt("CONFIG SET failed (possibly related to argument '%s') - %s", errname, errstr);
    restore_values(set, old, nrestore, applies, nreapply);
out:
    for (i = 0; i < n; i++) zfree(old[i]);
    zfree(old);
    zfree(set);
    zfree(applies);
    zfree(owner);
    return rc;
}
/*@ end */

int config_set(const char *name, const char *value, char **err) {
    *err = NULL;
    return set_many(&name, &value, 1, 1, err);
}

/* Valkey's islocalClient: a client on the loopback (a client with no
 * connection, in the unit tests, counts as local). */
static int client_is_local(const struct client *c) {
    return c->fd == -1 || !strncmp(c->addr, "127.", 4) || !strncmp(c->addr, "[::1]:", 6);
}

char *config_get(const char *name) {
    const cfg *c = cfg_lookup(name);
    return c ? cfg_get_value(c) : NULL;
}

int config_is_sensitive(const char *name) {
    const cfg *c = cfg_lookup(name);
    return c && (c->flags & F_SENSITIVE);
}

static void add_match(const char **names, size_t max, size_t *count, const char *name) {
    for (size_t i = 0; i < *count && i < max; i++)
        if (!strcasecmp(names[i], name)) return;
    if (*count < max) names[*count] = name;
    (*count)++;
}

/* A name without glob characters is looked up directly and answered under
 * the spelling asked for; a pattern is matched case-insensitively against
 * every name (Valkey: configGetCommand). */
size_t config_get_matches(const char *const *patterns, int npatterns, const char **names, size_t max) {
    size_t count = 0;
    for (int p = 0; p < npatterns; p++) {
        const char *pat = patterns[p];
        if (!strpbrk(pat, "[*?")) {
            if (cfg_lookup(pat)) add_match(names, max, &count, pat);
            continue;
        }
        for (size_t i = 0; i < cfg_table_len; i++)
            if (util_string_match(pat, cfg_table[i].name, 1)) add_match(names, max, &count, cfg_table[i].name);
    }
    return count;
}

/* ------------------------------------------------------------------ */
/* The CONFIG command                                                  */
/* ------------------------------------------------------------------ */

static const char *const config_help[] = {
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    NULL,
};

/* Every error below carries its "ERR " code itself: reply_error would
 * take "CONFIG SET failed..." for an error code named CONFIG. */
static void config_arity_error(struct client *c, const char *sub) {
    reply_error_format(c, "ERR wrong number of arguments for 'config|%s' command", sub);
}

static void config_command(struct client *c) {
    const char *sub = c->argc >= 2 ? c->argv[1]->ptr : "";
    char *err = NULL;
    if (c->argc < 2) {
        reply_error(c, "ERR wrong number of arguments for 'config' command");
    } else if (!strcasecmp(sub, "get")) {
        if (c->argc < 3) return config_arity_error(c, "get");
        int np = c->argc - 2;
        const char **pats = zmalloc(sizeof(char *) * (size_t)np);
        const char **names = zmalloc(sizeof(char *) * cfg_table_len);
        for (int i = 0; i < np; i++) pats[i] = c->argv[2 + i]->ptr;
        size_t n = config_get_matches(pats, np, names, cfg_table_len);
        reply_map_len(c, (long)n);
        for (size_t i = 0; i < n; i++) {
            char *v = config_get(names[i]);
            reply_bulk_cstr(c, names[i]);
            reply_bulk_cstr(c, v);
            zfree(v);
        }
        zfree(names);
        zfree(pats);
    } else if (!strcasecmp(sub, "set")) {
        if (c->argc < 4) return config_arity_error(c, "set");
        if (c->argc & 1) return reply_error(c, "ERR syntax error");
        int n = (c->argc - 2) / 2;
        const char **names = zmalloc(sizeof(char *) * (size_t)n);
        const char **values = zmalloc(sizeof(char *) * (size_t)n);
        for (int i = 0; i < n; i++) {
            names[i] = c->argv[2 + 2 * i]->ptr;
            values[i] = c->argv[3 + 2 * i]->ptr;
        }
        if (set_many(names, values, n, client_is_local(c), &err) == 0) {
            reply_ok(c);
        } else {
            reply_error_format(c, "ERR %s", err);
            zfree(err);
        }
        zfree(names);
        zfree(values);
    } else if (!strcasecmp(sub, "resetstat")) {
        if (c->argc != 2) return config_arity_error(c, "resetstat");
        server_reset_stats();
        reply_ok(c);
    } else if (!strcasecmp(sub, "rewrite")) {
        if (c->argc != 2) return config_arity_error(c, "rewrite");
        if (!server.configfile) return reply_error(c, "ERR The server is running without a config file");
        if (cfg_rewrite(server.configfile, &err) == -1) {
            server_log(LL_WARNING, "CONFIG REWRITE failed: %s", err);
            reply_error_format(c, "ERR %s", err);
            zfree(err);
            return;
        }
        server_log(LL_NOTICE, "CONFIG REWRITE executed with success.");
        reply_ok(c);
    } else if (!strcasecmp(sub, "help") && c->argc == 2) {
        reply_help(c, config_help);
    } else if (!strcasecmp(sub, "help")) {
        config_arity_error(c, "help");
    } else {
        reply_error_format(c, "ERR unknown subcommand '%.128s'. Try CONFIG HELP.", sub);
    }
}

command config_subcommands[] = {
    SUBCOMMAND("config|get", config_command, -3, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT, "server",
               "Returns the effective values of configuration parameters."),
    SUBCOMMAND("config|set", config_command, -4, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT, "server",
               "Sets configuration parameters in-flight."),
    SUBCOMMAND("config|resetstat", config_command, 2, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT, "server",
               "Resets the server's statistics."),
    SUBCOMMAND("config|rewrite", config_command, 2, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT, "server",
               "Persists the effective configuration to file."),
    SUBCOMMAND("config|help", config_command, 2, CMD_STALE | CMD_LOADING, "server",
               "Returns helpful text about the different subcommands."),
    {0},
};

command config_commands[] = {
    {"config", config_command, -2, CMD_ADMIN | CMD_STALE | CMD_LOADING | CMD_NOSCRIPT, 0, 0, 0, "server",
     "A container for server configuration commands.", 0, 0, 0, 0},
    {0},
};
