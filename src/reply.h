/* reply.h — building replies in RESP2 or RESP3.
 *
 * Step 0 (commands layer); steps 5 and 7 build on it. Owns how reply
 * bytes are appended to a client (buf, then the block list), the encoding
 * of every reply type for the client's protocol (c->resp, 2 or 3), and
 * the bookkeeping of a client's pending output. reply.c opens with the
 * rules.
 * Threads: main only, while it owns the client.
 * Valkey: src/networking.c addReply*, _addReplyToBufferOrList.
 */
#ifndef SOLOIST_REPLY_H
#define SOLOIST_REPLY_H

#include <stddef.h>

struct client;
struct obj;
struct reply_block;

/* Step 7: a bulk string of at least this many bytes goes into the reply
 * by reference instead of being copied (reply.c, "Large replies"): from
 * here a copy costs more than the reference's bookkeeping. Valkey's
 * min-string-size-avoid-copy-reply has the same default. */
#define REPLY_REF_MIN 16384

/* Raw protocol bytes, appended as they are. */
void reply_proto(struct client *c, const char *s, size_t len);

void reply_ok(struct client *c);                         /* +OK */
void reply_status(struct client *c, const char *status); /* +status */
/* An error reply; msg has no CRLF. As in Valkey's addReplyError, a msg
 * that starts with '-' names its own code ("-WRONGTYPE Operation ...",
 * "-NOAUTH ..."); any other msg is sent as "-ERR msg" (a msg that already
 * starts with "ERR " is not prefixed twice). */
void reply_error(struct client *c, const char *msg);
/* The same for a text that may hold a NUL byte (a protocol error quoting
 * the client's byte). */
void reply_error_len(struct client *c, const char *msg, size_t len);
void reply_error_format(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_long_long(struct client *c, long long v); /* :v */
void reply_bulk(struct client *c, struct obj *o);    /* $len bytes */
void reply_bulk_buf(struct client *c, const void *p, size_t len);
void reply_bulk_cstr(struct client *c, const char *s); /* NULL → null */
void reply_bulk_ll(struct client *c, long long v);     /* "$2\r\n42" */
void reply_null(struct client *c);                     /* RESP2 $-1, RESP3 _ */
void reply_null_array(struct client *c);               /* RESP2 *-1, RESP3 _ */
void reply_array_len(struct client *c, long n);        /* *n */
void reply_map_len(struct client *c, long n);          /* RESP3 %n, RESP2 *2n */
void reply_set_len(struct client *c, long n);          /* RESP3 ~n, RESP2 *n */
void reply_double(struct client *c, double d);         /* RESP3 ,d  RESP2 bulk */
void reply_bool(struct client *c, int b);              /* RESP3 #t, RESP2 :1/:0 */
/* One map entry whose value is an integer: the name as a bulk string, then
 * :v (MEMORY STATS, TRACE STATUS). */
void reply_map_ll(struct client *c, const char *name, long long v);
/* RESP3 verbatim string (=len\r\ntxt:...), RESP2 bulk; ext is 3 chars. */
void reply_verbatim(struct client *c, const char *s, size_t len, const char *ext);
/* RESP3 attributes are not used. Human-readable long double, as INCRBYFLOAT
 * prints it (%.17Lf, trailing zeros and dot trimmed). */
void reply_bulk_long_double(struct client *c, long double v);

/* A container's HELP reply (Valkey: addReplyHelp): a header line naming
 * the command in capitals, the NULL-terminated lines given, and the
 * closing "HELP / Print this help." pair, each as a status reply. */
void reply_help(struct client *c, const char *const *lines);
/* A container's reply to a subcommand it cannot run as given (Valkey:
 * addReplySubcommandSyntaxError): names argv[1] and points at
 * "<CONTAINER> HELP". */
void reply_subcommand_syntax_error(struct client *c);

/* Deferred lengths: for replies whose count is known only at the end
 * (SCAN, KEYS). reply_deferred_len reserves the place; the set function
 * fills it with *n (or %n/~n). */
void *reply_deferred_len(struct client *c);
void reply_set_deferred_array_len(struct client *c, void *node, long n);
void reply_set_deferred_map_len(struct client *c, void *node, long n);

/* The cron's look at one client's reply buffer: resize it to its recent
 * peak, or free it once the client is idle (see reply.c). */
void reply_buffer_cron(struct client *c, long long now_ms);

/* --- The client's pending output (main only) ----------------------------- */

/* Joins c to the list before_sleep writes (idempotent; LIFO, as
 * Valkey's). Every append calls it; the write happens in the write pass. */
void client_queue_pending_write(struct client *c);
/* Whether c has output not yet written: buf's, or a block's. */
int client_has_pending_replies(const struct client *c);
/* Bytes held in reply blocks (client-output-buffer-limit, INFO, CLIENT LIST). */
size_t client_output_bytes(const struct client *c);
/* Closes the client (async) when its output buffer passed
 * client-output-buffer-limit; returns 1 if it did. */
int client_check_output_limits(struct client *c);

/* Frees a block no write job can be reading (fully written, or its
 * client being freed), dropping a reference block's count on its value,
 * which frees the value when that count was its last. Main only: counts
 * are main's alone. */
void reply_block_free(struct reply_block *b);

/* Common replies with Valkey's exact texts. */
extern const char *const ERR_WRONGTYPE; /* "-WRONGTYPE Operation against a key holding the wrong kind of value" */
extern const char *const ERR_NOT_INT;   /* "value is not an integer or out of range" */
extern const char *const ERR_NOT_FLOAT; /* "value is not a valid float" */
extern const char *const ERR_SYNTAX;    /* "syntax error" */
extern const char *const ERR_OVERFLOW;  /* "increment or decrement would overflow" */

#endif
