/* codec.c — RESP encoding and the streaming reply parser (soloist-bench).
 * See codec.h. Anchor: RESP2/RESP3 (valkey.io/topics/protocol). */
#include "codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --- encoding --------------------------------------------------------- */

static size_t put_u64(char *dst, uint64_t v) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) dst[i] = tmp[n - 1 - i];
    return n;
}

static size_t put_str(char *dst, const char *s, size_t n) {
    memcpy(dst, s, n);
    return n;
}

/* "$<n>\r\n" */
static size_t put_bulk_len(char *dst, uint64_t n) {
    size_t o = 0;
    dst[o++] = '$';
    o += put_u64(dst + o, n);
    o += put_str(dst + o, "\r\n", 2);
    return o;
}

size_t sb_encode_get(char *dst, const char *key, size_t klen, size_t *key_off) {
    size_t o = put_str(dst, "*2\r\n$3\r\nGET\r\n", 13);
    o += put_bulk_len(dst + o, klen);
    *key_off = o;
    o += put_str(dst + o, key, klen);
    o += put_str(dst + o, "\r\n", 2);
    return o;
}

size_t sb_encode_set_head(char *dst, const char *key, size_t klen, size_t vlen, size_t *key_off) {
    size_t o = put_str(dst, "*3\r\n$3\r\nSET\r\n", 13);
    o += put_bulk_len(dst + o, klen);
    *key_off = o;
    o += put_str(dst + o, key, klen);
    o += put_str(dst + o, "\r\n", 2);
    o += put_bulk_len(dst + o, vlen);
    o += put_str(dst + o, key, klen < vlen ? klen : vlen);
    return o;
}

/* --- parsing ---------------------------------------------------------- */

enum { ST_LINE, ST_PAYLOAD, ST_CR, ST_LF };
#define PROTO_ERR ((size_t)-1)

void sb_parser_init(sb_parser *p) {
    memset(p, 0, sizeof(*p));
    p->state = ST_LINE;
}

void sb_parser_expect(sb_parser *p, const sb_expect *e) { p->exp = *e; }

int sb_parser_idle(const sb_parser *p) { return !p->started; }

static void begin_reply(sb_parser *p) {
    p->started = 1;
    p->pending = 1; /* the reply itself: one element, maybe an aggregate */
    p->top_bulk = 0;
    memset(&p->out, 0, sizeof(p->out));
    p->out.kind = SB_REPLY_OTHER;
    p->out.len = -1;
}

static void set_text(sb_parser *p, const char *s, size_t n) {
    if (n > sizeof(p->out.text) - 1) n = sizeof(p->out.text) - 1;
    memcpy(p->out.text, s, n);
    p->out.text[n] = '\0';
}

/* Compare payload bytes [off, off+n) with the value the request wrote. */
static int payload_matches(const sb_expect *e, const char *data, size_t off, size_t n) {
    size_t kpart = e->klen < e->vlen ? e->klen : e->vlen;
    if (off < kpart) {
        size_t m = kpart - off < n ? kpart - off : n;
        if (memcmp(data, e->key + off, m) != 0) return 0;
        data += m;
        off += m;
        n -= m;
    }
    return n == 0 || memcmp(data, e->pattern + off, n) == 0;
}

/* The verdict, once the whole reply is in. */
static void judge(sb_parser *p) {
    sb_reply *r = &p->out;
    if (p->exp.want_bulk)
        /* A GET is right when it is nil (a miss) or the exact value; the
         * length and bytes were checked as they arrived. */
        r->ok = (r->kind == SB_REPLY_NIL) || (r->kind == SB_REPLY_BULK && r->ok);
    else
        r->ok = r->kind == SB_REPLY_STATUS && strcmp(r->text, "OK") == 0;
}

/* One element (or the header of an aggregate, which was replaced by its
 * children in `pending`) is finished. Returns 1 when the reply is. */
static int element_done(sb_parser *p) { return --p->pending == 0; }

static int parse_ll(const char *s, long long *v) {
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return errno == 0 && end != s && *end == '\0';
}

/* A complete header line (CRLF stripped) is in p->line. Returns 1 when
 * the reply is complete, 0 to go on, -1 on a protocol error. */
static int on_line(sb_parser *p, int truncated) {
    char type = p->line_len ? p->line[0] : '\0';
    const char *rest = p->line + 1;
    size_t rest_len = p->line_len ? p->line_len - 1 : 0;
    int top = p->started == 1; /* still on the reply's first element */
    p->started = 2;
    long long n = 0;
    switch (type) {
    case '+':
    case '-':
        if (top) {
            p->out.kind = type == '+' ? SB_REPLY_STATUS : SB_REPLY_ERROR;
            set_text(p, rest, rest_len);
            if (truncated && type == '+') p->out.text[0] = '\0'; /* a huge status is not "OK" */
        }
        return element_done(p);
    case ':':
        if (top) {
            p->out.kind = SB_REPLY_INT;
            if (!truncated) parse_ll(rest, &p->out.len);
        }
        return element_done(p);
    case '_':
        if (top) p->out.kind = SB_REPLY_NIL;
        return element_done(p);
    case ',':
    case '#':
    case '(':
        if (top) p->out.kind = SB_REPLY_OTHER;
        return element_done(p);
    case '$':
    case '=':
    case '!':
        if (truncated || !parse_ll(rest, &n) || n < -1) return -1;
        if (n == -1) {
            if (type != '$') return -1;
            if (top) p->out.kind = SB_REPLY_NIL;
            return element_done(p);
        }
        if (top) {
            p->out.kind = type == '!' ? SB_REPLY_ERROR : SB_REPLY_BULK;
            p->out.len = n;
            p->top_bulk = 1;
            /* A wrong length is already a wrong value; the bytes still
             * have to be consumed, but need not be compared. */
            p->out.ok = p->exp.want_bulk && type != '!' && (size_t)n == p->exp.vlen;
        }
        p->bulk_left = n;
        p->bulk_off = 0;
        p->state = ST_PAYLOAD;
        return 0;
    case '*':
    case '%':
    case '~':
    case '>':
        if (truncated || !parse_ll(rest, &n) || n < -1) return -1;
        if (n == -1) {
            if (top) p->out.kind = SB_REPLY_NIL;
            return element_done(p);
        }
        if (top) {
            p->out.kind = SB_REPLY_ARRAY;
            p->out.len = n;
        }
        p->pending += type == '%' ? 2 * n : n;
        return element_done(p);
    default:
        return -1; /* not RESP: the stream is out of step */
    }
}

size_t sb_parser_feed(sb_parser *p, const char *buf, size_t n, sb_reply *out, int *done) {
    size_t i = 0;
    *done = 0;
    if (n == 0) return 0;
    if (!p->started) begin_reply(p);
    while (i < n) {
        int r = 0;
        switch (p->state) {
        case ST_LINE: {
            const char *nl = memchr(buf + i, '\n', n - i);
            size_t take = nl ? (size_t)(nl - (buf + i)) : n - i;
            size_t room = SB_LINE_MAX - 1 - p->line_len;
            size_t keep = take < room ? take : room;
            memcpy(p->line + p->line_len, buf + i, keep);
            p->line_len += keep;
            if (take) p->cr = buf[i + take - 1] == '\r';
            p->line_seen += take;
            i += take;
            if (!nl) return i; /* the line continues in the next read */
            i++;               /* the '\n' */
            if (!p->cr || p->line_seen == 0) return PROTO_ERR;
            /* Drop the '\r' if it was kept; whatever was not kept makes
             * the line truncated. */
            if (p->line_seen <= SB_LINE_MAX - 1) p->line_len--;
            int truncated = p->line_seen - 1 > p->line_len;
            p->line[p->line_len] = '\0';
            r = on_line(p, truncated);
            p->line_len = p->line_seen = 0;
            p->cr = 0;
            break;
        }
        case ST_PAYLOAD: {
            size_t m = (size_t)p->bulk_left < n - i ? (size_t)p->bulk_left : n - i;
            if (p->top_bulk) {
                /* The reply's own payload (a top-level bulk has no other
                 * elements): check it, or keep a blob error's text. */
                if (p->out.kind == SB_REPLY_ERROR && p->bulk_off == 0) set_text(p, buf + i, m);
                if (p->out.ok && !payload_matches(&p->exp, buf + i, (size_t)p->bulk_off, m)) p->out.ok = 0;
            }
            p->bulk_left -= (long long)m;
            p->bulk_off += (long long)m;
            i += m;
            if (p->bulk_left == 0) p->state = ST_CR;
            break;
        }
        case ST_CR:
            if (buf[i++] != '\r') return PROTO_ERR;
            p->state = ST_LF;
            break;
        case ST_LF:
            if (buf[i++] != '\n') return PROTO_ERR;
            p->state = ST_LINE;
            r = element_done(p);
            break;
        }
        if (r < 0) return PROTO_ERR;
        if (r == 1) {
            judge(p);
            *out = p->out;
            *done = 1;
            p->started = 0;
            p->state = ST_LINE;
            return i;
        }
    }
    return i;
}
