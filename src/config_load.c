/* config_load.c — config text, files, includes and the command line.
 *
 * Step 0 (server layer). Owns: Valkey's quoting rules (splitting a line into
 * arguments, and quoting one back); the loader (text -> options, one
 * directive a line, `include`); config_load_file / config_load_string;
 * the command line (argv -> config text, as Valkey builds it) and the
 * usage text. Each option is parsed by config_types.c and found in the
 * table of config.c (shared through config_private.h).
 * Threads: main thread only; loading runs before any thread starts.
 * Valkey: src/config.c loadServerConfigFromString and loadServerConfig;
 * main() and usage() in src/server.c for the command line; sdssplitargs
 * and sdscatrepr in src/sds.c for the quoting rules.
 */
#include "config.h"
#include "config_private.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "server.h"
#include "zmalloc.h"

/* ------------------------------------------------------------------ */
/* Valkey's quoting rules                                              */
/* ------------------------------------------------------------------ */

static int hexval(int ch) { return isdigit(ch) ? ch - '0' : tolower(ch) - 'a' + 10; }

/* The byte a backslash escape in quotes stands for: \n \r \t \b \a, and
 * any other character (\" \\ \') for itself. */
static char unescape(char c) {
    const char *from = "nrtba", *to = "\n\r\t\b\a";
    const char *hit = c ? strchr(from, c) : NULL;
    return hit ? to[hit - from] : c;
}

/*@ config-splitargs */
/* Splits a line into arguments the way Valkey's sdssplitargs does. In
 * "double quotes" \n \r \t \b \a \xHH and \<any> are escapes; in 'single
 * quotes' only \' is; a closing quote must be followed by a space or the
 * end. Returns NULL on unbalanced quotes; otherwise an array (never NULL,
 * possibly empty) to release with free_args. */
char **cfg_split_args(const char *p, int *argc) {
    char **v = zmalloc(sizeof(char *));
    int n = 0;
    sbuf tok = {0};
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        char quote = 0; /* the quote we are inside: '"', '\'' or none */
        int done = 0;
        tok.len = 0;
        sb_catlen(&tok, "", 0);
        while (!done) {
            if (quote) {
                /* Both quotes close alike; they differ in their escapes:
                 * \xHH and \<any> in double quotes, only \' in single. */
                if (quote == '"' && p[0] == '\\' && p[1] == 'x' && isxdigit((unsigned char)p[2]) &&
                    isxdigit((unsigned char)p[3])) {
                    char ch = (char)(hexval((unsigned char)p[2]) * 16 + hexval((unsigned char)p[3]));
                    sb_catlen(&tok, &ch, 1);
                    p += 3;
                } else if (p[0] == '\\' && (quote == '"' ? p[1] != '\0' : p[1] == '\'')) {
                    p++;
                    char ch = unescape(*p);
                    sb_catlen(&tok, &ch, 1);
                } else if (*p == quote) {
                    if (p[1] && !isspace((unsigned char)p[1])) goto unbalanced;
                    done = 1;
                } else if (!*p) {
                    goto unbalanced;
                } else {
                    sb_catlen(&tok, p, 1);
                }
            } else if (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == '\0') {
                done = 1;
            } else if (*p == '"' || *p == '\'') {
                quote = *p;
            } else {
                sb_catlen(&tok, p, 1);
            }
            if (*p) p++;
        }
        v = zrealloc(v, sizeof(char *) * (size_t)(n + 1));
        v[n++] = zstrndup(tok.p, tok.len);
    }
    zfree(tok.p);
    *argc = n;
    return v;
unbalanced:
    zfree(tok.p);
    free_args(v, n);
    *argc = 0;
    return NULL;
}
/*@ end */

/* Appends s in double quotes, escaped so cfg_split_args gives s back
 * (Valkey: sdscatrepr). */
void cfg_sb_cat_repr(sbuf *b, const char *s) {
    sb_cat(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        static const char *const escapes[256] = {['\\'] = "\\\\", ['"'] = "\\\"", ['\n'] = "\\n", ['\r'] = "\\r",
                                                 ['\t'] = "\\t",  ['\a'] = "\\a", ['\b'] = "\\b"};
        const char *esc = escapes[ch];
        char hex[8];
        if (!esc && !isprint(ch)) {
            snprintf(hex, sizeof(hex), "\\x%02x", ch);
            esc = hex;
        }
        if (esc)
            sb_cat(b, esc);
        else
            sb_catlen(b, (const char *)&ch, 1);
    }
    sb_cat(b, "\"");
}

/* ------------------------------------------------------------------ */
/* Loading: config text, files, the command line                       */
/* ------------------------------------------------------------------ */

static int load_text(const char *text, char **err, int depth);

/* Appends a whole file to b. */
static int read_file_into(sbuf *b, const char *path, char **err) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        *err = strfmt("Fatal error, can't open config file '%s': %s", path, strerror(errno));
        return -1;
    }
    sb_cat_stream(b, fp);
    fclose(fp);
    return 0;
}

/* `include path` — a pattern that matches no file is skipped, a plain
 * path that can't be opened is an error (Valkey: loadServerConfig). */
static int load_include(const char *path, char **err, int depth) {
    if (depth > 16) {
        *err = strfmt("Fatal error, config files include each other too deeply at '%s'", path);
        return -1;
    }
    sbuf b = sb_empty();
    int r = 0;
    if (strpbrk(path, "*?[")) {
        glob_t g;
        if (glob(path, 0, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc && r == 0; i++) r = read_file_into(&b, g.gl_pathv[i], err);
            globfree(&g);
        }
    } else {
        r = read_file_into(&b, path, err);
    }
    if (r == 0) r = load_text(b.p, err, depth + 1);
    zfree(b.p);
    return r;
}

/*@ config-load */
/* The next directive of the text at *p: its next line that is neither
 * blank nor a comment, without the blanks around it, zmalloc'd; NULL at
 * the end. *linenum counts every line read, for the error message. */
static char *next_directive(const char **p, int *linenum) {
    while (**p) {
        size_t len;
        const char *b = next_line(p, &len), *e = b + len;
        (*linenum)++;
        while (b < e && strchr(" \t\r\n", *b)) b++;
        while (e > b && strchr(" \t\r\n", e[-1])) e--;
        if (b != e && *b != '#') return zstrndup(b, (size_t)(e - b));
    }
    return NULL;
}

/* Sets option c from a directive's arguments (argv[0] is its name):
 * cfg_set_args's 1 or 2, or 0 with *msg set. A multi-argument option
 * given one argument that holds several has it split again. */
static int load_option(const cfg *c, char **argv, int argc, const char **msg) {
    if (!(c->flags & F_MULTI_ARG) && argc != 2) {
        *msg = "wrong number of arguments";
        return 0;
    }
    if (!(c->flags & F_MULTI_ARG) || argc != 2 || !argv[1][0]) return cfg_set_args(c, argv + 1, argc - 1, msg);
    /* `bind "127.0.0.1 ::1"` or `--bind "127.0.0.1 ::1"`. */
    int n2;
    char **v2 = cfg_split_args(argv[1], &n2);
    if (!v2) {
        *msg = "Unbalanced quotes in configuration line";
        return 0;
    }
    int r = cfg_set_args(c, v2, n2, msg);
    free_args(v2, n2);
    return r;
}

/* The log file must open: checked once the whole text is read, to fail
 * now rather than after the server started (as Valkey). NULL when it
 * opens (or there is none), else the error, written into buf. */
static const char *check_logfile(char *buf, size_t size) {
    if (!server.logfile || !server.logfile[0]) return NULL;
    FILE *fp = fopen(server.logfile, "a");
    if (!fp) {
        snprintf(buf, size, "Can't open the log file: %s", strerror(errno));
        return buf;
    }
    fclose(fp);
    return NULL;
}

/* One directive per line: `name arg...`. Options set here ignore
 * F_IMMUTABLE (that flag is about CONFIG SET) and run no apply hook: the
 * server reads the values when it starts. Valkey:
 * loadServerConfigFromString. */
static int load_text(const char *text, char **err, int depth) {
    const char *msg = NULL;
    char *line = NULL, **argv = NULL, logerr[256];
    int argc = 0, linenum = 0;
    for (const char *p = text; (line = next_directive(&p, &linenum));) {
        if (!(argv = cfg_split_args(line, &argc))) {
            msg = "Unbalanced quotes in configuration line";
            goto loaderr;
        }
        const cfg *c = argc ? cfg_lookup(argv[0]) : NULL;
        if (c) {
            if (!load_option(c, argv, argc, &msg)) goto loaderr;
        } else if (argc == 2 && !strcasecmp(argv[0], "include")) {
            if (load_include(argv[1], err, depth) == -1) goto nested_err;
        } else if (argc) {
            msg = "Bad directive or wrong number of arguments";
            goto loaderr;
        }
        free_args(argv, argc);
        argv = NULL;
        zfree(line);
    }
    if (depth == 0 && (msg = check_logfile(logerr, sizeof(logerr)))) goto loaderr;
    cfg_apply_hz(&msg);
    return 0;

loaderr:
    if (line)
        *err = strfmt("*** FATAL CONFIG FILE ERROR (Version %s) ***\nReading the configuration file, at line %d\n"
                      ">>> '%s'\n%s",
                      SOLOIST_VERSION, linenum, line, msg);
    else
        *err = strfmt("*** FATAL CONFIG FILE ERROR (Version %s) ***\n%s", SOLOIST_VERSION, msg);
nested_err:
    if (argv) free_args(argv, argc);
    zfree(line);
    return -1;
}
/*@ end */

int config_load_string(const char *text, char **err) {
    *err = NULL;
    return load_text(text, err, 0);
}

int config_load_file(const char *path, char **err) {
    sbuf b = sb_empty();
    *err = NULL;
    int r = read_file_into(&b, path, err);
    if (r == 0) r = load_text(b.p, err, 0);
    zfree(b.p);
    return r;
}

static char *absolute_path(const char *path) {
    char cwd[PATH_MAX];
    if (path[0] == '/') return zstrdup(path);
    char *rp = realpath(path, NULL);
    if (rp) {
        char *r = zstrdup(rp);
        free(rp);
        return r;
    }
    return getcwd(cwd, sizeof(cwd)) ? strfmt("%s/%s", cwd, path) : zstrdup(path);
}

/*@ config-args */
/* The command line becomes config text appended after the file: each
 * --name opens a line, each following argument is added to it quoted, so
 * the loader sees exactly what a file would say. Valkey: main(). */
int config_load_args(int argc, char **argv, char **err) {
    int j = 1, from_stdin = 0, expecting_value = 0;
    *err = NULL;
    if (argc >= 2) {
        if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version")) return CONFIG_ARGS_VERSION;
        if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) return CONFIG_ARGS_HELP;
        if (argv[1][0] != '-') {
            zfree(server.configfile);
            server.configfile = absolute_path(argv[1]);
            j = 2;
        }
    }
    sbuf opts = sb_empty();
    for (; j < argc; j++) {
        const char *a = argv[j];
        if (a[0] == '-' && a[1] == '\0' && (j == 1 || j == argc - 1)) {
            from_stdin = 1;
        } else if (!expecting_value && a[0] == '-' && a[1] == '-') {
            if (opts.len) sb_cat(&opts, "\n");
            sb_cat(&opts, a + 2);
            sb_cat(&opts, " ");
            int n;
            char **v = cfg_split_args(a, &n);
            /* "--port" alone: its value comes next, even if it starts with
             * "--". "--port 6380" in one argument carries its own. */
            expecting_value = v && n == 1;
            if (v) free_args(v, n);
            /* `--save` with nothing after it, or before another option,
             * means `--save ""` (Valkey keeps this pre-7.0 habit). */
            if (expecting_value && !strcasecmp(a, "--save") &&
                (j == argc - 1 || (argv[j + 1][0] == '-' && argv[j + 1][1] == '-'))) {
                sb_cat(&opts, "\"\"");
                expecting_value = 0;
            }
        } else {
            cfg_sb_cat_repr(&opts, a);
            sb_cat(&opts, " ");
            expecting_value = 0;
        }
    }
    sbuf text = sb_empty();
    int r = server.configfile ? read_file_into(&text, server.configfile, err) : 0;
    if (r == 0 && from_stdin) sb_cat_stream(&text, stdin);
    if (r == 0) {
        sb_cat(&text, "\n");
        sb_catlen(&text, opts.p, opts.len);
        r = load_text(text.p, err, 0);
    }
    zfree(opts.p);
    zfree(text.p);
    return r == 0 ? CONFIG_ARGS_OK : CONFIG_ARGS_ERROR;
}
/*@ end */

/* -h / --help: how to start, then every option with its default.
 * Valkey: usage() in src/server.c. */
void config_usage(FILE *out, const char *progname) {
    fprintf(out,
            "Usage: %1$s [/path/to/soloist.conf] [options] [-]\n"
            "       %1$s - (read config from stdin)\n"
            "       %1$s -v or --version\n"
            "       %1$s -h or --help\n\n"
            "Examples:\n"
            "       %1$s (run the server with default config)\n"
            "       %1$s soloist.conf\n"
            "       %1$s --port 7777 --io-threads 4\n"
            "       %1$s --save '' --appendonly no --bind 127.0.0.1 ::1\n"
            "       %1$s soloist.conf --loglevel verbose -\n\n"
            "Options (as in soloist.conf; on the command line, --name value...):\n",
            progname);
    for (size_t i = 0; i < cfg_table_len; i++) {
        const cfg *c = &cfg_table[i];
        const char *def = cfg_default_value(c);
        fprintf(out, "  %-28s default: \"%s\"%s\n", c->name, def ? def : "",
                (c->flags & F_IMMUTABLE) ? "  (not settable by CONFIG SET)" : "");
    }
}
