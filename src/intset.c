/* intset.c — a set of integers as one sorted array.
 *
 * Not a step (keyspace layer). Owns: the layout below; set.c owns the blocks.
 * Threads: main thread only. Valkey: src/intset.c, written again from its
 * idea.
 *
 * HOW IT WORKS
 *
 * A set of few integers needs no hash table: a sorted array answers "is
 * v here" by binary search in O(log n), and adding or removing shifts the
 * tail, O(n), cheap while n is a few hundred (set-max-intset-entries).
 * The block is one allocation: a 4-byte header, then the members.
 *
 *   header   bits 0-1: the width code w, every member is 2 << w bytes
 *            (2, 4 or 8; code 3 is never used); bits 2-31: the length.
 *   members  length integers of that width, in the host's byte order.
 *
 * Valkey's header is two 32-bit words (encoding, length), 8 bytes; soloist
 * packs both into one, since a length never passes 2^30 (Valkey caps
 * set-max-intset-entries there too), and the four bytes saved put a set
 * of ten small integers (4 + 10 * 2 bytes) in glibc's smallest chunk.
 *
 * Invariants (intset_verify checks the first two; the third is kept by
 * construction, since only the allocator knows a block's size):
 *  1. The width code is 0, 1 or 2.
 *  2. Members strictly increase (a set: no duplicates), so the array is
 *     its own search tree.
 *  3. The block is exactly 4 + length * width bytes: every change
 *     reallocates it to that size.
 * The width only grows. A member that does not fit the current width
 * (an "upgrade") is either below every member or above every member, so
 * it goes at one end once the array is rewritten wider, back to front so
 * that no member is overwritten before it is moved. Removing the only
 * wide member keeps the width, as in Valkey: narrowing would cost a scan
 * on every removal.
 */
#include "intset.h"

#include <stdlib.h>
#include <string.h>

#include "zmalloc.h"

#define HEADER 4u

struct intset {
    uint32_t header;      /* width code (2 bits) | length << 2 */
    unsigned char data[]; /* the members */
};

static unsigned code_of(const intset *is) { return is->header & 3u; }
static unsigned width_of_code(unsigned code) { return 2u << code; }
uint32_t intset_len(const intset *is) { return is->header >> 2; }
unsigned intset_width(const intset *is) { return width_of_code(code_of(is)); }
size_t intset_bytes(const intset *is) { return HEADER + (size_t)intset_len(is) * intset_width(is); }

static void set_header(intset *is, unsigned code, uint32_t len) { is->header = (len << 2) | code; }

/* The smallest width code that holds v (Valkey: _intsetValueEncoding). */
static unsigned code_for(int64_t v) {
    if (v >= INT16_MIN && v <= INT16_MAX) return 0;
    if (v >= INT32_MIN && v <= INT32_MAX) return 1;
    return 2;
}

/* The member at pos read as if the width code were `code` (an upgrade
 * reads the old width while the header already says the new one). */
static int64_t get_coded(const intset *is, unsigned code, uint32_t pos) {
    const unsigned char *p = is->data + (size_t)pos * width_of_code(code);
    if (code == 0) {
        int16_t v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    if (code == 1) {
        int32_t v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    int64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static int64_t get_at(const intset *is, uint32_t pos) { return get_coded(is, code_of(is), pos); }

static void set_at(intset *is, uint32_t pos, int64_t v) {
    unsigned char *p = is->data + (size_t)pos * intset_width(is);
    if (code_of(is) == 0) {
        int16_t x = (int16_t)v;
        memcpy(p, &x, sizeof(x));
    } else if (code_of(is) == 1) {
        int32_t x = (int32_t)v;
        memcpy(p, &x, sizeof(x));
    } else {
        memcpy(p, &v, sizeof(v));
    }
}

intset *intset_new(void) {
    intset *is = zmalloc(HEADER);
    set_header(is, 0, 0);
    return is;
}

void intset_free(intset *is) { zfree(is); }

intset *intset_dup(const intset *is) {
    intset *d = zmalloc(intset_bytes(is));
    memcpy(d, is, intset_bytes(is));
    return d;
}

/* Binary search (Valkey: intsetSearch): 1 and *pos = v's position when v
 * is present; 0 and *pos = where v would be inserted when it is not. */
static int search(const intset *is, int64_t v, uint32_t *pos) {
    uint32_t lo = 0, hi = intset_len(is); /* the answer is in [lo, hi] */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int64_t m = get_at(is, mid);
        if (m == v) {
            *pos = mid;
            return 1;
        }
        if (m < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return 0;
}

static intset *resize(intset *is, unsigned code, uint32_t len) {
    return zrealloc(is, HEADER + (size_t)len * width_of_code(code));
}

/* v does not fit the current width: rewrite every member wider, back to
 * front, and put v at the end it belongs to (Valkey: intsetUpgradeAndAdd). */
static intset *upgrade_and_add(intset *is, int64_t v) {
    unsigned old = code_of(is), code = code_for(v);
    uint32_t len = intset_len(is);
    int at_front = v < 0; /* wider than every member: below all or above all */
    is = resize(is, code, len + 1);
    set_header(is, code, len + 1);
    for (uint32_t i = len; i-- > 0;) set_at(is, i + (uint32_t)at_front, get_coded(is, old, i));
    set_at(is, at_front ? 0 : len, v);
    return is;
}

intset *intset_add(intset *is, int64_t v, int *added) {
    if (added) *added = 0;
    if (code_for(v) > code_of(is)) {
        if (added) *added = 1;
        return upgrade_and_add(is, v);
    }
    uint32_t pos, len = intset_len(is);
    if (search(is, v, &pos)) return is;
    is = resize(is, code_of(is), len + 1);
    size_t w = intset_width(is);
    memmove(is->data + (pos + 1) * w, is->data + pos * w, (len - pos) * w);
    set_header(is, code_of(is), len + 1);
    set_at(is, pos, v);
    if (added) *added = 1;
    return is;
}

intset *intset_remove(intset *is, int64_t v, int *removed) {
    uint32_t pos, len = intset_len(is);
    if (removed) *removed = 0;
    if (code_for(v) > code_of(is) || !search(is, v, &pos)) return is;
    size_t w = intset_width(is);
    memmove(is->data + pos * w, is->data + (pos + 1) * w, (len - pos - 1) * w);
    set_header(is, code_of(is), len - 1);
    if (removed) *removed = 1;
    return resize(is, code_of(is), len - 1);
}

int intset_find(const intset *is, int64_t v) {
    uint32_t pos;
    return code_for(v) <= code_of(is) && search(is, v, &pos);
}

int intset_get(const intset *is, uint32_t pos, int64_t *v) {
    if (pos >= intset_len(is)) return 0;
    *v = get_at(is, pos);
    return 1;
}

int64_t intset_random(const intset *is) { return get_at(is, (uint32_t)((unsigned long)random() % intset_len(is))); }
int64_t intset_min(const intset *is) { return get_at(is, 0); }
int64_t intset_max(const intset *is) { return get_at(is, intset_len(is) - 1); }

int intset_verify(const intset *is) {
    if (code_of(is) > 2) return 0;
    uint32_t len = intset_len(is);
    for (uint32_t i = 1; i < len; i++)
        if (get_at(is, i - 1) >= get_at(is, i)) return 0;
    return 1;
}
