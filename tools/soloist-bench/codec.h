/* codec.h — the RESP the load generator writes and the replies it checks.
 *
 * soloist-bench. Owns: encoding GET and SET commands into a
 * request's own small buffer, and one connection's reply parser. Each
 * parser belongs to one connection, which belongs to one worker thread.
 *
 * The parser is a streaming state machine: it is fed whatever a read()
 * returned — half a header, the middle of a 10 MB payload, three replies
 * and a bit — and never needs the whole reply in memory. A bulk payload
 * is compared with the expected value as it streams past and then
 * forgotten, so a 10 MB GET costs one pass over the bytes and no buffer
 * growth (no quadratic copying). Only the header lines are kept, in a
 * fixed buffer; a longer line (a huge error text) is truncated for
 * display but still consumed exactly.
 * Anchor: the RESP2/RESP3 specification (valkey.io/topics/protocol);
 * valkey src/networking.c processMultibulkBuffer parses the other
 * direction the same incremental way.
 */
#ifndef SOLOIST_BENCH_CODEC_H
#define SOLOIST_BENCH_CODEC_H
#include <stddef.h>
#include <stdint.h>

/* Header bytes a command needs beyond its key (and, for SET, the value
 * prefix): "*3\r\n$3\r\nSET\r\n$<20 digits>\r\n" + "\r\n$<20 digits>\r\n". */
#define SB_CMD_OVERHEAD 80

/* "*2\r\n$3\r\nGET\r\n$<klen>\r\n<key>\r\n". Returns the length; *key_off
 * is where the key starts in dst. */
size_t sb_encode_get(char *dst, const char *key, size_t klen, size_t *key_off);
/* The head of "*3\r\n$3\r\nSET\r\n$<klen>\r\n<key>\r\n$<vlen>\r\n<value>\r\n"
 * up to and including the first min(klen, vlen) bytes of the value (which
 * are the key's; keyspace.h). The caller sends the rest of the value from
 * the shared pattern and the final CRLF by reference. */
size_t sb_encode_set_head(char *dst, const char *key, size_t klen, size_t vlen, size_t *key_off);

typedef enum {
    SB_REPLY_STATUS, /* +OK */
    SB_REPLY_ERROR,  /* -ERR ..., and RESP3 blob errors */
    SB_REPLY_INT,
    SB_REPLY_BULK,
    SB_REPLY_NIL,    /* $-1, *-1, RESP3 _ */
    SB_REPLY_ARRAY,  /* any aggregate: its elements are consumed */
    SB_REPLY_OTHER   /* RESP3 double, boolean, ... */
} sb_reply_kind;

/* What the reply about to be parsed should be. */
typedef struct sb_expect {
    int want_bulk;       /* 1: a GET (bulk or nil); 0: a SET (+OK) */
    const char *key;     /* the value's first min(klen, vlen) bytes */
    size_t klen;
    const char *pattern; /* value bytes from klen on: pattern[i] */
    size_t vlen;
} sb_expect;

typedef struct sb_reply {
    sb_reply_kind kind;
    long long len;   /* bulk length, integer value, aggregate size */
    int ok;          /* matched the expectation */
    char text[96];   /* error or status text, truncated, NUL-terminated */
} sb_reply;

#define SB_LINE_MAX 128

typedef struct sb_parser {
    sb_expect exp;
    int state;          /* where in the reply the next byte belongs */
    int started;        /* 0 between replies, 1 before its first line, 2 after */
    char line[SB_LINE_MAX];
    size_t line_len;    /* bytes kept (at most SB_LINE_MAX - 1) */
    size_t line_seen;   /* bytes seen, kept or not */
    int cr;             /* the previous byte was '\r' */
    long long bulk_left;  /* payload bytes still to come */
    long long bulk_off;   /* payload bytes already checked */
    long long pending;    /* elements still owed by the current reply */
    int top_bulk;         /* the reply's own (top-level) element is a bulk */
    sb_reply out;
} sb_parser;

void sb_parser_init(sb_parser *p);
/* Say what the next reply should be; call before feeding its first byte
 * (sb_parser_idle tells when a reply boundary has been reached). */
void sb_parser_expect(sb_parser *p, const sb_expect *e);
int sb_parser_idle(const sb_parser *p);

/* Feed bytes. Consumes up to the end of one reply and returns the bytes
 * consumed; when a reply has been completed it is copied to *out and
 * *done set to 1. Returns (size_t)-1 on a protocol error (the connection
 * cannot be trusted further and must be closed). */
size_t sb_parser_feed(sb_parser *p, const char *buf, size_t n, sb_reply *out, int *done);

#endif
