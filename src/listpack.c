/* listpack.c — a compact block of strings and integers, one allocation.
 *
 * Not a step (keyspace layer); the small encoding of lists, hashes and sets
 * and the node of a large list. Threads: main thread only. Valkey:
 * src/listpack.c (the format is Valkey's, so a block here and a block there
 * hold the same bytes for the same elements); written again from its
 * description.
 *
 * WHY A BLOCK
 *
 * A list of ten short strings kept as ten nodes costs ten allocations,
 * each with a malloc header, two pointers and padding: three or four times
 * the bytes of the strings themselves, spread over as many cache lines. A
 * small collection is read whole more often than it is searched, so Valkey
 * packs it into one contiguous block and pays a linear scan (and a memmove
 * on every change) for it. At tens or a few hundred elements the scan is a
 * few cache lines and cheaper than chasing pointers; past that, the types
 * convert to their large encodings (hash.c, set.c) or chain blocks (list.c).
 *
 * THE LAYOUT
 *
 *     <total bytes: u32> <count: u16> <entry> ... <entry> <0xFF>
 *
 * Integers in the header are little-endian. `count` is the number of
 * entries, or 65535 meaning "too many to say: walk the block". An entry is
 *
 *     <encoding, holding the type and a length or the value> <data> <backlen>
 *
 * and its encoding's first byte says which of these it is:
 *
 *     0xxxxxxx                 an integer 0..127, in the byte itself
 *     10xxxxxx                 a string of up to 63 bytes follows
 *     110xxxxx yyyyyyyy        a 13-bit signed integer
 *     1110xxxx yyyyyyyy        a string of up to 4095 bytes follows
 *     11110000 <u32 length>    a longer string follows
 *     11110001 .. 11110100     a 16-, 24-, 32- or 64-bit signed integer
 *                              follows in 2, 3, 4 or 8 bytes
 *     11111111                 the end of the block (not an entry)
 *
 * backlen is the size of the encoding and data together, written so that
 * it can be read from its last byte backwards: 7 bits a byte, the low
 * bits in the last byte, the high bit of each byte set when another byte
 * of the number lies to its left. So an entry can be stepped over in both
 * directions without knowing the entries around it, and, unlike the older
 * ziplist that stored each entry's *previous* entry's size, inserting or
 * deleting an entry never changes its neighbours' bytes.
 *
 * THE INVARIANTS (lp_verify checks each)
 *
 *  1. The header's total equals the block's size, and the last byte is
 *     0xFF; no entry runs into or past it.
 *  2. Every entry's backlen equals the size of its own encoding and data.
 *  3. Walking forward and walking back meet the same entries; the header's
 *     count is their number, or 65535, "unknown": always when there are at
 *     least that many, and possibly after the block shrank from there,
 *     since a change never walks the block to recount it.
 *  4. Each integer uses the smallest encoding that holds it, and a string
 *     entry is never one str_to_ll would read as an integer: one value has
 *     one encoding, so equal elements have equal bytes.
 *
 * A string that reads as an integer under Valkey's string2ll rules is
 * stored as the integer (invariant 4): "123" costs 2 bytes, and reading
 * it back prints exactly "123", the only spelling string2ll accepts.
 */
#include "listpack.h"

#include <string.h>

#include "object.h"
#include "zmalloc.h"

#define LP_HDR 6
#define LP_EOF 0xFF
#define LP_COUNT_UNKNOWN 65535
/* Valkey: LISTPACK_MAX_SAFETY_SIZE. */
#define LP_MAX_SAFE (1u << 30)

/* ---- header ---------------------------------------------------------------- */

static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set_u32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static unsigned get_count(const unsigned char *lp) { return (unsigned)lp[4] | (unsigned)lp[5] << 8; }

static void set_count(unsigned char *lp, size_t n) {
    unsigned v = n < LP_COUNT_UNKNOWN ? (unsigned)n : LP_COUNT_UNKNOWN;
    lp[4] = (unsigned char)v;
    lp[5] = (unsigned char)(v >> 8);
}

unsigned char *lp_new(void) {
    unsigned char *lp = zmalloc(LP_HDR + 1);
    set_u32(lp, LP_HDR + 1);
    set_count(lp, 0);
    lp[LP_HDR] = LP_EOF;
    return lp;
}

void lp_free(unsigned char *lp) { zfree(lp); }

size_t lp_bytes(const unsigned char *lp) { return get_u32(lp); }

int lp_safe_to_add(const unsigned char *lp, size_t add) { return lp_bytes(lp) + add <= LP_MAX_SAFE; }

/* ---- one entry's size ------------------------------------------------------- */

/* The size of the encoding and data of the entry at p (what backlen holds). */
static size_t entry_body(const unsigned char *p) {
    unsigned char b = p[0];
    if (b < 0x80) return 1;                                              /* 7-bit uint */
    if ((b & 0xC0) == 0x80) return 1 + (b & 0x3F);                       /* 6-bit string */
    if ((b & 0xE0) == 0xC0) return 2;                                    /* 13-bit int */
    if ((b & 0xF0) == 0xE0) return 2 + ((size_t)(b & 0x0F) << 8 | p[1]); /* 12-bit string */
    switch (b) {
    case 0xF0: return 5 + get_u32(p + 1);
    case 0xF1: return 3;
    case 0xF2: return 4;
    case 0xF3: return 5;
    case 0xF4: return 9;
    default: return 0; /* 0xFF, or a byte no entry starts with */
    }
}

/*@ lp-backlen */
/* How many bytes backlen takes for a body of l bytes. */
static size_t backlen_size(size_t l) {
    size_t n = 1;
    while (l >= 128) {
        l >>= 7;
        n++;
    }
    return n;
}

/* Writes l's backlen at buf: the low 7 bits in the last byte, each
 * higher group one byte to the left, every byte but the leftmost flagged
 * "more to the left" (128). */
static void backlen_write(unsigned char *buf, size_t l) {
    size_t n = backlen_size(l);
    for (size_t i = n; i-- > 0;) {
        buf[i] = (unsigned char)((l & 127) | (i ? 128 : 0));
        l >>= 7;
    }
}

/* Reads the backlen that ends at p (p is its last byte). */
static size_t backlen_read(const unsigned char *p) {
    size_t v = 0;
    for (unsigned shift = 0;; shift += 7, p--) {
        v |= (size_t)(*p & 127) << shift;
        if (!(*p & 128)) return v;
    }
}
/*@ end */

static size_t entry_size(const unsigned char *p) {
    size_t body = entry_body(p);
    return body + backlen_size(body);
}

/* ---- encoding an element ------------------------------------------------------ */

static void encode_int(lp_elem *e, long long v) {
    unsigned char *b = e->buf;
    unsigned long long u = (unsigned long long)v;
    if (v >= 0 && v <= 127) {
        b[0] = (unsigned char)v;
        e->hdr = 1;
    } else if (v >= -4096 && v <= 4095) {
        u &= 0x1FFF;
        b[0] = (unsigned char)(0xC0 | (u >> 8));
        b[1] = (unsigned char)u;
        e->hdr = 2;
    } else {
        size_t n;
        if (v >= -32768 && v <= 32767)
            b[0] = 0xF1, n = 2;
        else if (v >= -8388608 && v <= 8388607)
            b[0] = 0xF2, n = 3;
        else if (v >= -2147483648LL && v <= 2147483647LL)
            b[0] = 0xF3, n = 4;
        else
            b[0] = 0xF4, n = 8;
        for (size_t i = 0; i < n; i++) b[1 + i] = (unsigned char)(u >> (8 * i));
        e->hdr = 1 + n;
    }
    e->data = NULL;
    e->datalen = 0;
    e->body = e->hdr;
}

void lp_encode(lp_elem *e, const unsigned char *s, size_t len) {
    long long v;
    if (len <= 20 && str_to_ll((const char *)s, len, &v)) {
        encode_int(e, v);
        return;
    }
    if (len < 64) {
        e->buf[0] = (unsigned char)(0x80 | len);
        e->hdr = 1;
    } else if (len < 4096) {
        e->buf[0] = (unsigned char)(0xE0 | (len >> 8));
        e->buf[1] = (unsigned char)len;
        e->hdr = 2;
    } else {
        e->buf[0] = 0xF0;
        set_u32(e->buf + 1, (uint32_t)len);
        e->hdr = 5;
    }
    e->data = s;
    e->datalen = len;
    e->body = e->hdr + len;
}

static size_t enc_size(const lp_elem *e) { return e->body + backlen_size(e->body); }

static void enc_write(unsigned char *dst, const lp_elem *e) {
    memcpy(dst, e->buf, e->hdr);
    if (e->datalen) memcpy(dst + e->hdr, e->data, e->datalen);
    backlen_write(dst + e->body, e->body);
}

/* ---- walking ------------------------------------------------------------------ */

unsigned char *lp_first(unsigned char *lp) { return lp[LP_HDR] == LP_EOF ? NULL : lp + LP_HDR; }

unsigned char *lp_next(unsigned char *lp, unsigned char *p) {
    (void)lp;
    p += entry_size(p);
    return *p == LP_EOF ? NULL : p;
}

unsigned char *lp_prev(unsigned char *lp, unsigned char *p) {
    if (p == lp + LP_HDR) return NULL;
    size_t body = backlen_read(p - 1);
    return p - body - backlen_size(body);
}

unsigned char *lp_last(unsigned char *lp) {
    unsigned char *end = lp + lp_bytes(lp) - 1;
    return lp_prev(lp, end);
}

size_t lp_length(const unsigned char *lp) {
    unsigned n = get_count(lp);
    if (n != LP_COUNT_UNKNOWN) return n;
    size_t count = 0;
    for (const unsigned char *p = lp + LP_HDR; *p != LP_EOF; p += entry_size(p)) count++;
    return count;
}

unsigned char *lp_seek(unsigned char *lp, long index) {
    size_t n = lp_length(lp);
    if (index < 0) index += (long)n;
    if (index < 0 || (size_t)index >= n) return NULL;
    unsigned char *p;
    if ((size_t)index < n / 2) {
        p = lp_first(lp);
        while (index--) p = lp_next(lp, p);
    } else {
        p = lp_last(lp);
        for (size_t back = n - 1 - (size_t)index; back; back--) p = lp_prev(lp, p);
    }
    return p;
}

/* ---- reading ------------------------------------------------------------------ */

static long long sign_extend(unsigned long long u, unsigned bits) {
    unsigned long long sign = 1ULL << (bits - 1);
    return u & sign ? (long long)(u | ~((sign << 1) - 1)) : (long long)u;
}

const unsigned char *lp_get(const unsigned char *p, size_t *len, long long *ival) {
    unsigned char b = p[0];
    if (b < 0x80) {
        *ival = b;
        return NULL;
    }
    if ((b & 0xC0) == 0x80) {
        *len = b & 0x3F;
        return p + 1;
    }
    if ((b & 0xE0) == 0xC0) {
        *ival = sign_extend((unsigned long long)(b & 0x1F) << 8 | p[1], 13);
        return NULL;
    }
    if ((b & 0xF0) == 0xE0) {
        *len = (size_t)(b & 0x0F) << 8 | p[1];
        return p + 2;
    }
    if (b == 0xF0) {
        *len = get_u32(p + 1);
        return p + 5;
    }
    unsigned n = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
    unsigned long long u = 0;
    for (unsigned i = 0; i < n; i++) u |= (unsigned long long)p[1 + i] << (8 * i);
    *ival = n == 8 ? (long long)u : sign_extend(u, 8 * n);
    return NULL;
}

const unsigned char *lp_get_str(const unsigned char *p, size_t *len, unsigned char *buf) {
    long long v;
    const unsigned char *s = lp_get(p, len, &v);
    if (s) return s;
    *len = ll_to_str((char *)buf, v);
    return buf;
}

/* The first byte decides the header's length, so once it matches, the
 * rest of the header and the data lie inside this entry. */
int lp_matches(const unsigned char *p, const lp_elem *e) {
    return p[0] == e->buf[0] && memcmp(p + 1, e->buf + 1, e->hdr - 1) == 0 &&
           (!e->datalen || memcmp(p + e->hdr, e->data, e->datalen) == 0);
}

int lp_equals(const unsigned char *p, const unsigned char *s, size_t len) {
    lp_elem e;
    lp_encode(&e, s, len);
    return lp_matches(p, &e);
}

unsigned char *lp_find(unsigned char *lp, unsigned char *p, const unsigned char *s, size_t len, unsigned skip) {
    /* The needle is encoded once, so each entry is compared as bytes:
     * invariant 4 makes equal elements equal encodings. */
    lp_elem e;
    lp_encode(&e, s, len);
    unsigned skipped = 0;
    while (p && *p != LP_EOF) {
        if (skipped == 0) {
            if (lp_matches(p, &e)) return p;
            skipped = skip;
        } else {
            skipped--;
        }
        p += entry_size(p);
    }
    (void)lp;
    return NULL;
}

/* ---- changing ----------------------------------------------------------------- */

/*@ lp-splice */
/* Replaces the `oldsize` bytes at offset `off` with the entry e (NULL:
 * nothing), moving the tail; the count changes by dcount. Returns the new
 * block; the entry (or what followed the removed bytes) is at lp + off. */
static unsigned char *splice(unsigned char *lp, size_t off, size_t oldsize, const lp_elem *e, long dcount) {
    size_t total = lp_bytes(lp), newsize = e ? enc_size(e) : 0;
    size_t tail = total - off - oldsize;
    /* An unknown count stays unknown rather than cost a walk per change
     * (Valkey does the same); lp_length walks when asked. */
    unsigned known = get_count(lp);
    size_t count = known == LP_COUNT_UNKNOWN ? LP_COUNT_UNKNOWN : known + (size_t)dcount;
    if (newsize > oldsize) lp = zrealloc(lp, total + newsize - oldsize);
    memmove(lp + off + newsize, lp + off + oldsize, tail);
    if (newsize < oldsize) lp = zrealloc(lp, total - (oldsize - newsize));
    if (e) enc_write(lp + off, e);
    set_u32(lp, (uint32_t)(total + newsize - oldsize));
    set_count(lp, count);
    return lp;
}
/*@ end */

unsigned char *lp_append(unsigned char *lp, const unsigned char *s, size_t len) {
    lp_elem e;
    lp_encode(&e, s, len);
    return splice(lp, lp_bytes(lp) - 1, 0, &e, 1);
}

unsigned char *lp_prepend(unsigned char *lp, const unsigned char *s, size_t len) {
    lp_elem e;
    lp_encode(&e, s, len);
    return splice(lp, LP_HDR, 0, &e, 1);
}

unsigned char *lp_insert(unsigned char *lp, unsigned char **p, enum lp_where where, const unsigned char *s,
                         size_t len) {
    lp_elem e;
    lp_encode(&e, s, len);
    size_t off = (size_t)(*p - lp);
    if (where == LP_AFTER) off += entry_size(*p);
    lp = splice(lp, off, 0, &e, 1);
    *p = lp + off;
    return lp;
}

unsigned char *lp_replace(unsigned char *lp, unsigned char **p, const unsigned char *s, size_t len) {
    lp_elem e;
    lp_encode(&e, s, len);
    size_t off = (size_t)(*p - lp);
    lp = splice(lp, off, entry_size(*p), &e, 0);
    *p = lp + off;
    return lp;
}

unsigned char *lp_delete(unsigned char *lp, unsigned char **p) {
    size_t off = (size_t)(*p - lp);
    lp = splice(lp, off, entry_size(*p), NULL, -1);
    *p = lp[off] == LP_EOF ? NULL : lp + off;
    return lp;
}

unsigned char *lp_delete_range(unsigned char *lp, long index, size_t count) {
    unsigned char *p = lp_seek(lp, index);
    if (!p || !count) return lp;
    unsigned char *q = p;
    size_t n = 0;
    while (n < count && *q != LP_EOF) {
        q += entry_size(q);
        n++;
    }
    return splice(lp, (size_t)(p - lp), (size_t)(q - p), NULL, -(long)n);
}

/* ---- invariants ----------------------------------------------------------------- */

/* Whether the entry at p uses the one encoding its value has (invariant 4). */
static int canonical(const unsigned char *p) {
    size_t len;
    long long v;
    const unsigned char *s = lp_get(p, &len, &v);
    lp_elem e;
    if (s) {
        if (len <= 20 && str_to_ll((const char *)s, len, &v)) return 0;
        lp_encode(&e, s, len);
    } else {
        encode_int(&e, v);
    }
    return e.body == entry_body(p) && memcmp(e.buf, p, e.hdr) == 0;
}

int lp_verify(const unsigned char *lp) {
    size_t total = lp_bytes(lp);
    if (total < LP_HDR + 1 || lp[total - 1] != LP_EOF) return 0;
    const unsigned char *end = lp + total - 1;
    size_t forward = 0;
    const unsigned char *p = lp + LP_HDR, *last = NULL;
    while (p < end) {
        size_t body = entry_body(p);
        if (!body || p + body + backlen_size(body) > end) return 0;
        if (backlen_read(p + body + backlen_size(body) - 1) != body) return 0;
        if (!canonical(p)) return 0;
        last = p;
        p += body + backlen_size(body);
        forward++;
    }
    if (p != end) return 0;
    size_t back = 0;
    for (const unsigned char *q = last; q; back++) {
        if (q == lp + LP_HDR) {
            q = NULL;
        } else {
            size_t body = backlen_read(q - 1);
            q -= body + backlen_size(body);
            if (q < lp + LP_HDR) return 0;
        }
    }
    if (back != forward) return 0;
    unsigned hc = get_count(lp);
    return hc == LP_COUNT_UNKNOWN ? 1 : hc == forward && forward < LP_COUNT_UNKNOWN;
}
