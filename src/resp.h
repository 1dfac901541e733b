/* resp.h — the RESP request parser: bytes in, one command's argv out.
 *
 * Step 0 (plumbing layer). Owns: the incremental parse state of one connection
 * (request type, arguments still expected, the bulk being read, the argv
 * being built). It knows no client and no socket: the caller keeps the
 * bytes, hands them in, and drops what the parser says it consumed.
 *
 * Threads: a parser belongs to one client and is used only by the thread
 * that owns that client at the moment: the main thread in step 0, and from
 * step 4 the I/O thread that owns the client while it parses. Nothing in
 * here is shared.
 *
 * Valkey: src/networking.c parseInputBuffer (the '*' test that picks the
 * request type), parseInlineBuffer, parseMultibulk, handleParseError (the
 * error texts); src/sds.c sdssplitargs (inline quoting); src/server.h
 * PROTO_INLINE_MAX_SIZE and PROTO_MBULK_BIG_ARG. The error texts and limits
 * follow Valkey exactly; resp.c's design essay lists them, with the
 * invariants that make the parser resumable.
 */
#ifndef SOLOIST_RESP_H
#define SOLOIST_RESP_H

#include <stddef.h>

#include "object.h"

/* Valkey: PROTO_INLINE_MAX_SIZE. A line (inline request, "*N", "$N")
 * not finished within this many bytes is a protocol error. */
#define RESP_INLINE_MAX_SIZE (1024 * 64)
/* Valkey: PROTO_MBULK_BIG_ARG. A bulk at least this long is read straight
 * into its final object (see resp_parser_bulk_window). */
#define RESP_MBULK_BIG_ARG (1024 * 32)
/* Valkey: proto-max-bulk-len's default, 512 MB. */
#define RESP_PROTO_MAX_BULK_LEN_DEFAULT (512LL * 1024 * 1024)
/* Valkey's limits for a client that has not authenticated yet
 * (parseMultibulk: "ll > 10", "ll > 16384"). */
#define RESP_UNAUTH_MAX_MULTIBULK 10
#define RESP_UNAUTH_MAX_BULK 16384

typedef struct resp_limits {
    long long proto_max_bulk_len; /* default RESP_PROTO_MAX_BULK_LEN_DEFAULT */
    int authenticated;            /* 0 → the unauthenticated limits apply */
} resp_limits;

/* Request type, Valkey's c->reqtype. */
enum { RESP_REQ_UNKNOWN = 0, RESP_REQ_INLINE = 1, RESP_REQ_MULTIBULK = 2 };

/* Private: read only through the functions below. */
typedef struct resp_parser {
    int reqtype;        /* RESP_REQ_*; UNKNOWN between commands */
    int multibulk_len;  /* bulks still expected; 0 = "*N" not read yet */
    long long bulk_len; /* length of the bulk being read; -1 = "$N" not read yet */
    obj *big;           /* a big bulk (>= RESP_MBULK_BIG_ARG) being filled in place */
    size_t big_filled;  /* payload bytes already in big */
    obj **argv;         /* the command being built */
    int argc;
    int argv_cap;
    size_t err_len;  /* length of errbuf's text (it may hold a NUL, see resp.c) */
    char errbuf[80]; /* the error text resp_parse hands out */
} resp_parser;

enum { RESP_OK = 0, RESP_INCOMPLETE = 1, RESP_ERROR = -1 };

void resp_parser_init(resp_parser *p);
/* Drops any partial command (frees the partial argv and a big bulk being
 * filled). Call it before freeing the client, or after RESP_ERROR. */
void resp_parser_reset(resp_parser *p);

/* Parses at most one command from buf[0..len).
 *
 * RESP_OK: a command; *consumed bytes were used (the caller drops them and
 *   may call again on the rest: a pipeline yields one command per call);
 *   *argc >= 1 and *argv is a zmalloc'ed array of string objects, all owned
 *   by the caller (obj_decr_ref each, then zfree the array).
 * RESP_INCOMPLETE: no command yet; *consumed bytes were absorbed into the
 *   parser's state (the caller drops them and calls again with the rest
 *   plus new data). *consumed may be 0.
 * RESP_ERROR: *err is Valkey's exact error text without the leading '-'
 *   and the trailing CRLF, e.g. "ERR Protocol error: invalid multibulk
 *   length"; the caller replies with it and closes the connection. The
 *   parser has already dropped its partial command; *err stays valid until
 *   the next resp_parse call on this parser.
 *
 * Empty inline lines, whitespace-only inline lines and multibulk counts
 * <= 0 ("*0", "*-1") are skipped inside, as Valkey resets and goes on: this
 * function never returns RESP_OK with *argc == 0. A skipped request alone
 * in the buffer gives RESP_INCOMPLETE with *consumed covering it.
 *
 * lim may be NULL: the defaults, authenticated. */
int resp_parse(resp_parser *p, const char *buf, size_t len, const resp_limits *lim, size_t *consumed, int *argc,
               obj ***argv, const char **err);

/* Length of the last error text (== strlen(*err) except for "expected '$',
 * got '\0'", whose text holds the client's NUL byte as Valkey sends it). */
size_t resp_parser_error_len(const resp_parser *p);

/* Bytes still needed to finish the current bulk, payload plus its CRLF,
 * counted from the first byte the parser has not consumed; 0 when not
 * inside a bulk. Valkey's readQueryFromClient sizes its read the same way
 * ("remaining = bulklen + 2 - unparsed") so a big argument arrives alone. */
size_t resp_parser_pending_bulk(const resp_parser *p);

/* Zero-copy reads for big bulks. While the parser is filling a bulk of at
 * least RESP_MBULK_BIG_ARG bytes, returns where its next payload byte goes
 * and sets *room to the payload bytes still missing; NULL (and *room = 0)
 * otherwise. A caller with NO unconsumed bytes buffered may read(2)
 * straight into it and report the count with resp_parser_bulk_advance;
 * the trailing CRLF still goes through resp_parse. Optional: feeding the
 * same bytes through resp_parse gives the same result with one memcpy. */
char *resp_parser_bulk_window(resp_parser *p, size_t *room);
void resp_parser_bulk_advance(resp_parser *p, size_t n);

#endif
