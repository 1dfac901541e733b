/* resp.c — the RESP request parser (step 0, plumbing). See resp.h.
 *
 * Threads: whichever thread owns the client (resp.h); no shared state.
 *
 * What Valkey does, and so what this file does (newest stored
 * valkey-io/valkey src/networking.c; function names are anchors):
 *
 *   parseInputBuffer   a request whose first byte is '*' is multibulk
 *                      (RESP), anything else is an inline line.
 *   parseInlineBuffer  a line ends at '\n' (a '\r' before it is dropped);
 *                      it is split like sdssplitargs; an empty line is
 *                      skipped.
 *   parseMultibulk     "*<count>\r\n" then <count> times "$<len>\r\n"
 *                      <len bytes> "\r\n". Lines are found by their '\r'
 *                      and the byte after it must be '\n'.
 *   handleParseError   the texts below; addReplyError adds "-ERR ".
 *
 * The error texts resp_parse returns (Valkey's, with the "ERR " that
 * addReplyError prepends; the reply adds '-' and CRLF):
 *   ERR Protocol error: too big inline request            no '\n' in > 64 KB (inline)
 *   ERR Protocol error: embedded NUL byte in inline request  a NUL byte in an inline line
 *   ERR Protocol error: unbalanced quotes in request      sdssplitargs refuses the line
 *   ERR Protocol error: too big mbulk count string        no '\r' in > 64 KB after '*'
 *   ERR Protocol error: invalid multibulk length          count not a number, or > INT_MAX
 *   ERR Protocol error: unauthenticated multibulk length  count > 10 before AUTH
 *   ERR Protocol error: too big bulk count string         no '\r' in > 64 KB where "$N" is due
 *   ERR Protocol error: expected '$', got 'X'             X is the byte found ('\r'/'\n' → ' ')
 *   ERR Protocol error: invalid bulk length               not a number, < 0, > proto-max-bulk-len
 *   ERR Protocol error: unauthenticated bulk length       length > 16384 before AUTH
 *   ERR Protocol error: invalid CRLF in request           '\r' not followed by '\n' after "*N"
 *                                                         or "$N", or a payload not followed
 *                                                         by "\r\n"
 * Numbers are parsed by string2ll's rules (str_to_ll in object.c): no
 * '+', no spaces, no leading zeros, "-0" refused.
 *
 * Versions differ, and the oracle the integration suite uses is Debian's
 * Redis 7.0, so: the three "invalid CRLF" checks came with Valkey PR #2872
 * (Nov 2025; in 9.1 and the 7.2/8.0/9.0 patch releases) — Redis 7.0 and
 * Valkey x.0.0 releases skip the two bytes after a payload unchecked and
 * dispatch "*1\r\n$3\r\nfooXX" as "foo". The NUL-byte check is newer than
 * 9.1.0 (which used strchr and so stalled at a NUL until the 64 KB limit).
 * Redis 6.2 refused counts above 1024*1024; Redis 7.0 and Valkey refuse
 * only counts above INT_MAX. The unauthenticated limits are Valkey's.
 *
 * Where soloist differs from Valkey on purpose:
 *   - skipped requests ("*0", "*-1", empty lines) are consumed inside one
 *     resp_parse call instead of returning to the caller;
 *   - a big bulk is copied (or read) into its final object as it arrives,
 *     instead of trimming the query buffer so that the buffer itself can
 *     become the argument (Valkey's createObject(OBJ_STRING, querybuf)).
 *     Same effect — one allocation of the final size, no second copy when
 *     the caller uses resp_parser_bulk_window — and the caller's buffer
 *     never has to grow to 512 MB.
 */
#include "resp.h"

#include <assert.h>
#include <limits.h>
#include <string.h>

#include "zmalloc.h"

/* An internal result: the request had nothing to run ("*0", an empty
 * line); Valkey's READ_FLAGS_PARSING_NEGATIVE_MBULK_LEN and
 * READ_FLAGS_INLINE_ZERO_QUERY_LEN. Never returned by resp_parse. */
#define RESP_SKIP 2

/* Helpers used only inside exercise bodies: the starter copy stubs those
 * bodies out, and the helpers must then still compile under -Werror. */
#define RESP_EXERCISE_HELPER static inline __attribute__((unused))

static const resp_limits resp_default_limits = {RESP_PROTO_MAX_BULK_LEN_DEFAULT, 1};

/* Records a fixed error text; always returns RESP_ERROR so a parse step
 * can `return resp_fail(p, "...")`. */
static int resp_fail(resp_parser *p, const char *text) {
    size_t n = strlen(text);
    if (n >= sizeof(p->errbuf)) n = sizeof(p->errbuf) - 1;
    memcpy(p->errbuf, text, n);
    p->errbuf[n] = '\0';
    p->err_len = n;
    return RESP_ERROR;
}

/* "expected '$', got 'X'". Valkey formats it with addReplyErrorFormat,
 * which maps '\r' and '\n' to spaces so the reply stays one line; any
 * other byte, a NUL included, is sent as it is (sdscatvprintf keeps the
 * length vsnprintf reports), hence err_len. */
RESP_EXERCISE_HELPER int resp_fail_expected_dollar(resp_parser *p, char got) {
    static const char head[] = "ERR Protocol error: expected '$', got '";
    size_t n = sizeof(head) - 1;
    memcpy(p->errbuf, head, n);
    p->errbuf[n++] = (got == '\r' || got == '\n') ? ' ' : got;
    p->errbuf[n++] = '\'';
    p->errbuf[n] = '\0';
    p->err_len = n;
    return RESP_ERROR;
}

/* C-locale isspace(): what sdssplitargs skips between arguments. */
RESP_EXERCISE_HELPER int resp_is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

RESP_EXERCISE_HELPER int resp_hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Appends o to argv, growing it like Valkey: double, but never past the
 * number of arguments the request still announces (still_expected counts
 * o itself; 0 means unknown, as for an inline line). */
static inline void resp_argv_push(obj ***argv, int *argc, int *cap, int still_expected, obj *o) {
    if (*argc == *cap) {
        long long want = *cap ? (long long)*cap * 2 : 8;
        long long bound = (long long)*argc + still_expected;
        if (still_expected > 0 && want > bound) want = bound;
        *cap = (int)want;
        *argv = zrealloc(*argv, sizeof(obj *) * (size_t)*cap);
    }
    (*argv)[(*argc)++] = o;
}

void resp_parser_init(resp_parser *p) {
    memset(p, 0, sizeof(*p));
    p->bulk_len = -1;
}

void resp_parser_reset(resp_parser *p) {
    for (int j = 0; j < p->argc; j++) obj_decr_ref(p->argv[j]);
    zfree(p->argv);
    if (p->big) obj_decr_ref(p->big);
    p->argv = NULL;
    p->argc = p->argv_cap = 0;
    p->big = NULL;
    p->big_filled = 0;
    p->reqtype = RESP_REQ_UNKNOWN;
    p->multibulk_len = 0;
    p->bulk_len = -1;
    /* errbuf is kept: resp_parse resets after an error and still hands
     * out the text. */
}

size_t resp_parser_error_len(const resp_parser *p) { return p->err_len; }

/* Splits one inline line the way Valkey's sdssplitargs does.
 *
 * line[0..len) is the line without its "\r\n"/"\n" and holds no NUL byte.
 * Arguments are separated by C-locale spaces. Inside "double quotes":
 * \xHH (two hex digits) is that byte; \n \r \t \b \a are control
 * characters; a backslash before any other character yields that
 * character (so \" and \\). Inside 'single quotes' only \' is special.
 * Quotes may start in the middle of an argument (ab"cd" is abcd), but a
 * closing quote must be followed by a space or the end of the line, and
 * the line must not end inside quotes; both are "unbalanced quotes".
 * Outside quotes, an argument ends at ' ', '\n', '\r' or '\t' (not at
 * '\v' or '\f', which are skipped only *between* arguments).
 *
 * Returns 0 and sets *argv_out (zmalloc'ed; NULL when *argc_out is 0) to
 * new string objects; returns -1 on unbalanced quotes, having freed
 * everything it allocated. */
static int resp_inline_split(const char *line, size_t len, obj ***argv_out, int *argc_out) {
    /*@ exercise: inline-split */
    obj **argv = NULL;
    int argc = 0, cap = 0;
    /* An argument never decodes to more bytes than the line holds. */
    char *tok = zmalloc(len + 1);
    size_t i = 0;

    for (;;) {
        while (i < len && resp_is_space(line[i])) i++;
        if (i == len) break;

        size_t n = 0;
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            int at_end = (i == len);
            char c = at_end ? '\0' : line[i];
            if (inq) {
                if (c == '\\' && i + 3 < len && line[i + 1] == 'x' && resp_hex_value(line[i + 2]) >= 0 &&
                    resp_hex_value(line[i + 3]) >= 0) {
                    tok[n++] = (char)(resp_hex_value(line[i + 2]) * 16 + resp_hex_value(line[i + 3]));
                    i += 3;
                } else if (c == '\\' && i + 1 < len) {
                    i++;
                    switch (line[i]) {
                    case 'n': tok[n++] = '\n'; break;
                    case 'r': tok[n++] = '\r'; break;
                    case 't': tok[n++] = '\t'; break;
                    case 'b': tok[n++] = '\b'; break;
                    case 'a': tok[n++] = '\a'; break;
                    default: tok[n++] = line[i]; break;
                    }
                } else if (c == '"') {
                    if (i + 1 < len && !resp_is_space(line[i + 1])) goto unbalanced;
                    done = 1;
                } else if (at_end) {
                    goto unbalanced;
                } else {
                    tok[n++] = c;
                }
            } else if (insq) {
                if (c == '\\' && i + 1 < len && line[i + 1] == '\'') {
                    i++;
                    tok[n++] = '\'';
                } else if (c == '\'') {
                    if (i + 1 < len && !resp_is_space(line[i + 1])) goto unbalanced;
                    done = 1;
                } else if (at_end) {
                    goto unbalanced;
                } else {
                    tok[n++] = c;
                }
            } else if (at_end) {
                done = 1;
            } else {
                switch (c) {
                case ' ':
                case '\n':
                case '\r':
                case '\t': done = 1; break;
                case '"': inq = 1; break;
                case '\'': insq = 1; break;
                default: tok[n++] = c; break;
                }
            }
            if (!at_end) i++;
        }
        resp_argv_push(&argv, &argc, &cap, 0, obj_create_string(tok, n));
    }
    zfree(tok);
    *argv_out = argv;
    *argc_out = argc;
    return 0;

unbalanced:
    for (int j = 0; j < argc; j++) obj_decr_ref(argv[j]);
    zfree(argv);
    zfree(tok);
    *argv_out = NULL;
    *argc_out = 0;
    return -1;
    /*@ end */
}

/* One inline request: buf[0] is not '*'. Valkey: parseInlineBuffer. */
static int resp_parse_inline(resp_parser *p, const char *buf, size_t len, size_t *used) {
    /*@ resp-inline */
    const char *nl = memchr(buf, '\n', len);
    if (nl == NULL) {
        /* Valkey waits for the newline, but not forever: a client that
         * sent 64 KB without one is not speaking the protocol. */
        if (len > RESP_INLINE_MAX_SIZE) return resp_fail(p, "ERR Protocol error: too big inline request");
        return RESP_INCOMPLETE;
    }
    size_t linelen = (size_t)(nl - buf);
    if (linelen > 0 && buf[linelen - 1] == '\r') linelen--;

    /* sdssplitargs works on C strings, so Valkey refuses a NUL outright;
     * binary data goes in quotes as \x00. */
    if (memchr(buf, '\0', linelen)) return resp_fail(p, "ERR Protocol error: embedded NUL byte in inline request");

    obj **argv;
    int argc;
    if (resp_inline_split(buf, linelen, &argv, &argc) != 0)
        return resp_fail(p, "ERR Protocol error: unbalanced quotes in request");
    *used = (size_t)(nl - buf) + 1;
    if (argc == 0) return RESP_SKIP; /* an empty or blank line: Valkey resets and goes on */
    p->argv = argv;
    p->argc = p->argv_cap = argc;
    return RESP_OK;
    /*@ end */
}

/* Reads the "*<count>\r\n" line at the start of buf[0..len); buf[0] is '*'.
 * Valkey: the first half of parseMultibulk.
 *
 * RESP_INCOMPLETE: the line is not all there yet — no '\r' yet, or no byte
 *   after it — unless more than RESP_INLINE_MAX_SIZE bytes arrived with no
 *   '\r': that is "too big mbulk count string".
 * RESP_ERROR (through resp_fail) when the byte after '\r' is not '\n'
 *   ("invalid CRLF in request"); when the count is not a number by
 *   str_to_ll's rules or is above INT_MAX ("invalid multibulk length");
 *   when the client is not authenticated and the count is above
 *   RESP_UNAUTH_MAX_MULTIBULK ("unauthenticated multibulk length"). The
 *   checks run in that order.
 * RESP_OK: *used is the line's length with its CRLF, *count the count,
 *   which may be zero or negative (the caller skips those). */
static int resp_parse_multibulk_count(resp_parser *p, const char *buf, size_t len, const resp_limits *lim,
                                      size_t *used, long long *count) {
    /*@ exercise: multibulk-header */
    const char *cr = memchr(buf, '\r', len);
    if (cr == NULL) {
        if (len > RESP_INLINE_MAX_SIZE) return resp_fail(p, "ERR Protocol error: too big mbulk count string");
        return RESP_INCOMPLETE;
    }
    size_t linelen = (size_t)(cr - buf);
    if (linelen + 2 > len) return RESP_INCOMPLETE; /* the '\n' has not arrived */
    if (cr[1] != '\n') return resp_fail(p, "ERR Protocol error: invalid CRLF in request");

    long long ll;
    if (!str_to_ll(buf + 1, linelen - 1, &ll) || ll > INT_MAX)
        return resp_fail(p, "ERR Protocol error: invalid multibulk length");
    if (ll > RESP_UNAUTH_MAX_MULTIBULK && !lim->authenticated)
        return resp_fail(p, "ERR Protocol error: unauthenticated multibulk length");

    *used = linelen + 2;
    *count = ll;
    return RESP_OK;
    /*@ end */
}

/* Reads a "$<len>\r\n" line at the start of buf[0..len), where the next
 * argument's header is due. Valkey: the loop head of parseMultibulk.
 *
 * RESP_INCOMPLETE: no '\r' yet, or no byte after it — unless more than
 *   RESP_INLINE_MAX_SIZE bytes arrived with no '\r': "too big bulk count
 *   string".
 * RESP_ERROR, checks in this order: the line does not start with '$'
 *   (resp_fail_expected_dollar with the byte found); the byte after '\r'
 *   is not '\n' ("invalid CRLF in request"); the length is not a number,
 *   is negative (so "$-1" too) or exceeds lim->proto_max_bulk_len
 *   ("invalid bulk length"); the client is not authenticated and the
 *   length is above RESP_UNAUTH_MAX_BULK ("unauthenticated bulk length").
 * RESP_OK: *used is the line's length with its CRLF, *bulk_len the length. */
static int resp_parse_bulk_len(resp_parser *p, const char *buf, size_t len, const resp_limits *lim, size_t *used,
                               long long *bulk_len) {
    /*@ exercise: bulk-header */
    const char *cr = memchr(buf, '\r', len);
    if (cr == NULL) {
        if (len > RESP_INLINE_MAX_SIZE) return resp_fail(p, "ERR Protocol error: too big bulk count string");
        return RESP_INCOMPLETE;
    }
    size_t linelen = (size_t)(cr - buf);
    if (linelen + 2 > len) return RESP_INCOMPLETE;
    if (buf[0] != '$') return resp_fail_expected_dollar(p, buf[0]);
    if (cr[1] != '\n') return resp_fail(p, "ERR Protocol error: invalid CRLF in request");

    long long ll;
    if (!str_to_ll(buf + 1, linelen - 1, &ll) || ll < 0 || ll > lim->proto_max_bulk_len)
        return resp_fail(p, "ERR Protocol error: invalid bulk length");
    if (ll > RESP_UNAUTH_MAX_BULK && !lim->authenticated)
        return resp_fail(p, "ERR Protocol error: unauthenticated bulk length");

    *used = linelen + 2;
    *bulk_len = ll;
    return RESP_OK;
    /*@ end */
}

/* Reads the payload of the current bulk and its "\r\n" from buf[0..len),
 * and appends the argument. Small bulks wait until payload and CRLF are
 * all buffered, then are copied once; big ones are filled in place as
 * bytes arrive (see resp.h, resp_parser_bulk_window). */
static int resp_read_bulk_payload(resp_parser *p, const char *buf, size_t len, size_t *used) {
    /*@ resp-bulk-payload */
    size_t blen = (size_t)p->bulk_len;
    obj *arg;
    *used = 0;
    if (p->big) {
        size_t take = blen - p->big_filled;
        if (take > len) take = len;
        memcpy(p->big->ptr + p->big_filled, buf, take);
        p->big_filled += take;
        *used = take;
        if (p->big_filled < blen || len - take < 2) return RESP_INCOMPLETE;
        if (buf[take] != '\r' || buf[take + 1] != '\n')
            return resp_fail(p, "ERR Protocol error: invalid CRLF in request");
        *used = take + 2;
        arg = p->big;
        p->big = NULL;
        p->big_filled = 0;
    } else {
        if (len < blen + 2) return RESP_INCOMPLETE;
        /* Valkey checks the terminator only once the whole bulk is in. */
        if (buf[blen] != '\r' || buf[blen + 1] != '\n')
            return resp_fail(p, "ERR Protocol error: invalid CRLF in request");
        arg = obj_create_string(buf, blen);
        *used = blen + 2;
    }
    resp_argv_push(&p->argv, &p->argc, &p->argv_cap, p->multibulk_len, arg);
    p->bulk_len = -1;
    p->multibulk_len--;
    return RESP_OK;
    /*@ end */
}

/* One multibulk request, resumable at any byte. Valkey: parseMultibulk. */
static int resp_parse_multibulk(resp_parser *p, const char *buf, size_t len, const resp_limits *lim, size_t *used) {
    /*@ resp-multibulk */
    size_t pos = 0, n = 0;
    int r = RESP_INCOMPLETE;
    *used = 0;
    if (p->multibulk_len == 0) {
        long long count = 0;
        r = resp_parse_multibulk_count(p, buf, len, lim, &n, &count);
        if (r != RESP_OK) return r;
        pos = n;
        if (count <= 0) {
            *used = pos;
            return RESP_SKIP;
        }
        p->multibulk_len = (int)count;
        /* Do not trust the count with memory: start at 1024 slots at most
         * and grow as arguments actually arrive (Valkey does the same). */
        p->argv_cap = count < 1024 ? (int)count : 1024;
        p->argv = zmalloc(sizeof(obj *) * (size_t)p->argv_cap);
        p->argc = 0;
    }
    while (p->multibulk_len > 0) {
        if (p->bulk_len == -1) {
            long long blen = 0;
            r = resp_parse_bulk_len(p, buf + pos, len - pos, lim, &n, &blen);
            if (r != RESP_OK) break;
            pos += n;
            p->bulk_len = blen;
            if (blen >= RESP_MBULK_BIG_ARG) {
                /* Allocate the final object now, as Valkey sizes its query
                 * buffer to the bulk, so the payload is copied once (or
                 * not at all, with resp_parser_bulk_window). */
                p->big = obj_create_raw((size_t)blen);
                p->big_filled = 0;
            }
        }
        r = resp_read_bulk_payload(p, buf + pos, len - pos, &n);
        pos += n;
        if (r != RESP_OK) break;
    }
    *used = pos;
    return p->multibulk_len == 0 ? RESP_OK : r;
    /*@ end */
}

int resp_parse(resp_parser *p, const char *buf, size_t len, const resp_limits *lim, size_t *consumed, int *argc,
               obj ***argv, const char **err) {
    /*@ resp-dispatch */
    size_t pos = 0;
    *consumed = 0;
    *argc = 0;
    *argv = NULL;
    if (err) *err = NULL;
    if (lim == NULL) lim = &resp_default_limits;

    while (pos < len) {
        size_t used = 0;
        int r;
        /* Valkey decides the request type from its first byte, once. */
        if (p->reqtype == RESP_REQ_UNKNOWN) p->reqtype = buf[pos] == '*' ? RESP_REQ_MULTIBULK : RESP_REQ_INLINE;
        if (p->reqtype == RESP_REQ_INLINE)
            r = resp_parse_inline(p, buf + pos, len - pos, &used);
        else
            r = resp_parse_multibulk(p, buf + pos, len - pos, lim, &used);
        pos += used;

        if (r == RESP_ERROR) {
            resp_parser_reset(p);
            *consumed = pos;
            if (err) *err = p->errbuf;
            return RESP_ERROR;
        }
        if (r == RESP_INCOMPLETE) break;
        p->reqtype = RESP_REQ_UNKNOWN;
        if (r == RESP_SKIP) continue;

        *argc = p->argc;
        *argv = p->argv;
        p->argv = NULL;
        p->argc = p->argv_cap = 0;
        *consumed = pos;
        return RESP_OK;
    }
    *consumed = pos;
    return RESP_INCOMPLETE;
    /*@ end */
}

size_t resp_parser_pending_bulk(const resp_parser *p) {
    if (p->reqtype != RESP_REQ_MULTIBULK || p->multibulk_len == 0 || p->bulk_len < 0) return 0;
    if (p->big) return (size_t)p->bulk_len - p->big_filled + 2;
    return (size_t)p->bulk_len + 2;
}

char *resp_parser_bulk_window(resp_parser *p, size_t *room) {
    if (p->big == NULL || p->big_filled >= (size_t)p->bulk_len) {
        *room = 0;
        return NULL;
    }
    *room = (size_t)p->bulk_len - p->big_filled;
    return p->big->ptr + p->big_filled;
}

void resp_parser_bulk_advance(resp_parser *p, size_t n) {
    size_t room = 0;
    /* Reading past the window would already have overrun the object. */
    assert(n == 0 || (resp_parser_bulk_window(p, &room) != NULL && n <= room));
    p->big_filled += n;
}
