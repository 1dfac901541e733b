/* listpack.h — a compact block of strings and integers, one allocation.
 *
 * Not a step (keyspace layer), beside the types that use it: a small list,
 * hash or set is one listpack (list.c, hash.c, set.c), and a large list is a
 * chain of them (list.c's quicklist). listpack.c opens with the layout and
 * its invariants. Owns nothing but the block it is handed: every call that
 * can grow or shrink a block returns the block's new address, and the caller
 * stores it (the old pointer is dead).
 * Threads: main thread only, like the rest of the keyspace.
 * Valkey: src/listpack.c (lpNew, lpFirst, lpNext, lpPrev, lpLast, lpGet,
 * lpInsertString, lpAppend, lpDelete, lpDeleteRange, lpReplace, lpSeek,
 * lpFind, lpValidateIntegrity); soloist writes the same byte format again
 * from its description, with fewer entry points.
 *
 * An element is a byte string. One that reads as a 64-bit integer under
 * Valkey's string2ll rules (obj.h's str_to_ll: no '+', no leading zero, no
 * space) is stored as that integer, in 1 to 9 bytes; reading it gives the
 * integer back, and printing it gives back exactly the string that went
 * in, since string2ll accepts only the canonical form. A position is a
 * pointer to an element's first byte (`p` below), valid until the block
 * next changes.
 */
#ifndef SOLOIST_LISTPACK_H
#define SOLOIST_LISTPACK_H

#include <stddef.h>
#include <stdint.h>

/* The room lp_get_str needs to print an integer element. */
#define LP_INTBUF_SIZE 21

/* --- Life cycle and size -------------------------------------------------- */

unsigned char *lp_new(void); /* an empty block */
void lp_free(unsigned char *lp);
size_t lp_bytes(const unsigned char *lp);  /* the block's size, header to end byte */
size_t lp_length(const unsigned char *lp); /* elements (counted when over 65534) */
/* Whether adding `add` more bytes keeps the block under its 1 GB cap
 * (Valkey: lpSafeToAdd). A type converts to its large encoding first. */
int lp_safe_to_add(const unsigned char *lp, size_t add);

/* --- Walking ----------------------------------------------------------------
 * Each returns a position or NULL (no such element). */

unsigned char *lp_first(unsigned char *lp);
unsigned char *lp_last(unsigned char *lp);
unsigned char *lp_next(unsigned char *lp, unsigned char *p);
unsigned char *lp_prev(unsigned char *lp, unsigned char *p);
/* The element at index (0 first, -1 last), or NULL out of range. */
unsigned char *lp_seek(unsigned char *lp, long index);

/* --- Reading ----------------------------------------------------------------- */

/* The element at p: a string (returns its bytes, *len set) or an integer
 * (returns NULL, *ival set). */
const unsigned char *lp_get(const unsigned char *p, size_t *len, long long *ival);
/* The element at p as bytes: a string's own, or an integer printed into
 * buf (LP_INTBUF_SIZE bytes). Never NULL. */
const unsigned char *lp_get_str(const unsigned char *p, size_t *len, unsigned char *buf);
/* An element encoded as an entry would hold it, for comparing against
 * many entries: encode the bytes once (lp_encode), then each comparison
 * is a compare of bytes (lp_matches), since one value has one encoding.
 * A string's bytes are not copied: s must outlive the lp_elem. */
typedef struct lp_elem {
    unsigned char buf[9];      /* an integer's encoding and data, or a string's header */
    size_t hdr;                /* bytes of buf used */
    const unsigned char *data; /* a string's bytes, else NULL */
    size_t datalen;
    size_t body; /* encoding and data, without backlen */
} lp_elem;
void lp_encode(lp_elem *e, const unsigned char *s, size_t len);
/* Whether the element at p is the one e encodes. */
int lp_matches(const unsigned char *p, const lp_elem *e);
/* Whether the element at p is exactly the bytes s[0, len): one
 * lp_encode and one lp_matches, for a single comparison. */
int lp_equals(const unsigned char *p, const unsigned char *s, size_t len);
/* The first element at or after p equal to s[0, len), looking at every
 * (skip + 1)-th element only: skip 1 searches a hash's fields and steps
 * over their values. NULL when there is none. */
unsigned char *lp_find(unsigned char *lp, unsigned char *p, const unsigned char *s, size_t len, unsigned skip);

/* --- Changing ------------------------------------------------------------------
 * Each returns the block's new address. Where a position is passed by
 * reference (*p), it is updated to stay valid: after an insert it points
 * at the new element, after a delete at the element that followed the
 * deleted one (NULL when none did). */

unsigned char *lp_append(unsigned char *lp, const unsigned char *s, size_t len);
unsigned char *lp_prepend(unsigned char *lp, const unsigned char *s, size_t len);
enum lp_where { LP_BEFORE, LP_AFTER };
unsigned char *lp_insert(unsigned char *lp, unsigned char **p, enum lp_where where, const unsigned char *s, size_t len);
unsigned char *lp_replace(unsigned char *lp, unsigned char **p, const unsigned char *s, size_t len);
unsigned char *lp_delete(unsigned char *lp, unsigned char **p);
/* Deletes count elements from index (0-based, negative from the end). */
unsigned char *lp_delete_range(unsigned char *lp, long index, size_t count);

/* --- Invariants -------------------------------------------------------------- */

/* Walks the whole block forward and back and checks every invariant
 * listpack.c lists; 1 when they hold. Tests call it after every change. */
int lp_verify(const unsigned char *lp);

#endif
