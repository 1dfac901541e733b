/* set.c — the set type: one of three encodings per set.
 *
 * Not a step (keyspace layer). Owns every set value's structure and its
 * member bytes. Threads: main thread only. Valkey: src/t_set.c
 * (setTypeCreate, setTypeAddAux, setTypeRemoveAux, setTypeIsMemberAux,
 * setTypeConvertAndExpand, maybeConvertIntset, setTypeNext,
 * setTypeRandomElement, setTypeDup); the encodings and their conversions are
 * Valkey 8's, written again.
 *
 * HOW IT WORKS
 *
 * A set answers "is m a member" and hands out members, in no order. The
 * right structure depends on what it holds, so a set picks one of three
 * encodings (o->encoding) and moves to a larger one as it grows:
 *
 *   intset     every member is an integer (string2ll's canonical form,
 *              obj.h's str_to_ll) and there are at most
 *              set-max-intset-entries of them: a sorted array of 2-, 4-
 *              or 8-byte integers (intset.c). Lookup by binary search.
 *   listpack   at most set-max-listpack-entries members, each at most
 *              set-max-listpack-value bytes: one listpack (listpack.c),
 *              members in the order they came. Lookup is a linear scan,
 *              cheap at this size, and the whole set is one allocation.
 *   hashtable  anything larger: soloist's hashtable (hashtable.h). Each
 *              entry is ONE allocation holding the member's length as a
 *              varint and then its bytes; the table stores the pointer,
 *              and the entry is its own key. No robj, no sds header, no
 *              dict entry: a member of up to 23 bytes costs glibc's
 *              smallest chunk (24 usable bytes) plus its slot in a
 *              64-byte bucket of seven.
 *
 * Invariants (set_verify checks them):
 *  1. o->encoding names the structure in o->ptr; nothing else is used.
 *  2. Members are distinct, in every encoding.
 *  3. An intset holds integers only (by construction); a listpack's or a
 *     hashtable's members are byte strings, integers among them stored as
 *     their canonical decimal strings (the listpack may encode those as
 *     integers internally, and gives back the same bytes).
 *  4. Encodings only grow: intset -> listpack -> hashtable, or intset ->
 *     hashtable. The limits are checked when a member is added, so a set
 *     made under larger limits keeps its encoding when CONFIG SET lowers
 *     them, and a shrinking set never converts back (Valkey does the same:
 *     converting back would make a remove cost O(n)). The one way back is
 *     SPOP with a count near the set's size, which copies the members
 *     that stay into a new set, built small (cmd_set.c), as Valkey does.
 *
 * The conversions, as Valkey 8's setTypeAddAux makes them:
 *  - intset, an integer arrives: added; past set-max-intset-entries the
 *    whole set moves to a hashtable (maybeConvertIntset), not a listpack.
 *  - intset, a non-integer arrives: to a listpack when the set would still
 *    fit one (fewer than set-max-listpack-entries members before the add,
 *    the new member and the widest integer within set-max-listpack-value),
 *    otherwise to a hashtable.
 *  - listpack, full or the member too long: to a hashtable.
 * A new set starts in the encoding setTypeCreate picks from its first
 * member and the number of members on the way (SADD's argument count).
 *
 * Memory: every structure through zmalloc, so used_memory counts it.
 */
#include "set.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intset.h"
#include "listpack.h"
#include "util.h"
#include "zmalloc.h"

long long set_max_intset_entries = 512, set_max_listpack_entries = 128, set_max_listpack_value = 64;

/* ---- the hashtable encoding's entries ------------------------------------
 * An entry is [varint length][bytes]: 7 bits of length a byte, the top bit
 * set on every byte but the last, so a member under 128 bytes spends one
 * byte on its length. */

static size_t varint_put(unsigned char *p, size_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static size_t varint_size(size_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

static const char *entry_member(const unsigned char *e, size_t *len) {
    size_t n = 0, shift = 0, v = 0;
    do {
        v |= (size_t)(e[n] & 0x7F) << shift;
        shift += 7;
    } while (e[n++] & 0x80);
    *len = v;
    return (const char *)e + n;
}

static unsigned char *entry_new(const char *m, size_t len) {
    unsigned char *e = zmalloc(varint_size(len) + len);
    size_t n = varint_put(e, len);
    if (len) memcpy(e + n, m, len);
    return e;
}

/* The entry's key as a {ptr, len} view, in one of two rotating slots:
 * hashtable.h lets a temporary live across one more entry_get_key call. */
static const void *entry_key(const void *entry) {
    static hashtable_key slot[2];
    static int next;
    hashtable_key *k = &slot[next];
    next ^= 1;
    k->ptr = entry_member(entry, &k->len);
    return k;
}

static void entry_free(void *entry) { zfree(entry); }

static const hashtable_type member_type = {.hash_key = hashtable_key_hash,
                                           .entry_get_key = entry_key,
                                           .key_compare = hashtable_key_compare,
                                           .entry_destructor = entry_free};

static hashtable *ht_of(const obj *o) { return (hashtable *)(void *)o->ptr; }
static intset *is_of(const obj *o) { return (intset *)(void *)o->ptr; }
static unsigned char *lp_of(const obj *o) { return (unsigned char *)o->ptr; }

static int ht_add(hashtable *ht, const char *m, size_t len) {
    hashtable_key k = {m, len};
    void *found;
    if (hashtable_find(ht, &k, &found)) return 0;
    hashtable_add(ht, entry_new(m, len));
    return 1;
}

/* ---- the object ------------------------------------------------------------ */

static void object_free(obj *o) {
    if (o->encoding == OBJ_ENC_INTSET)
        intset_free(is_of(o));
    else if (o->encoding == OBJ_ENC_LISTPACK)
        lp_free(lp_of(o));
    else
        hashtable_release(ht_of(o));
}

static size_t object_length(const obj *o) { return set_length(o); }
static const obj_type_ops set_ops = {OBJ_SET, "set", object_free, set_object_dup, object_length};

obj *set_object_create_intset(void) { return obj_create_value(&set_ops, OBJ_ENC_INTSET, intset_new()); }

obj *set_object_create(const char *first, size_t len, size_t size_hint) {
    long long v;
    if (str_to_ll(first, len, &v) && size_hint <= (size_t)set_max_intset_entries) return set_object_create_intset();
    if (size_hint <= (size_t)set_max_listpack_entries) return obj_create_value(&set_ops, OBJ_ENC_LISTPACK, lp_new());
    return obj_create_value(&set_ops, OBJ_ENC_HT, hashtable_create(&member_type));
}

size_t set_length(const obj *o) {
    if (o->encoding == OBJ_ENC_INTSET) return intset_len(is_of(o));
    if (o->encoding == OBJ_ENC_LISTPACK) return lp_length(lp_of(o));
    return hashtable_size(ht_of(o));
}

void set_swap(obj *a, obj *b) {
    char *p = a->ptr;
    uint8_t enc = a->encoding;
    a->ptr = b->ptr;
    a->encoding = b->encoding;
    b->ptr = p;
    b->encoding = enc;
}

/* ---- walking ------------------------------------------------------------------ */

void set_iter_init(set_iter *it, obj *o) {
    it->o = o;
    it->pos = 0;
    it->p = o->encoding == OBJ_ENC_LISTPACK ? lp_first(lp_of(o)) : NULL;
    if (o->encoding == OBJ_ENC_HT) hashtable_init_iterator(&it->hi, ht_of(o), 0);
}

int set_iter_next(set_iter *it, const char **m, size_t *len) {
    obj *o = it->o;
    if (o->encoding == OBJ_ENC_INTSET) {
        int64_t v;
        if (!intset_get(is_of(o), it->pos, &v)) return 0;
        it->pos++;
        *len = ll_to_str(it->buf, v);
        *m = it->buf;
        return 1;
    }
    if (o->encoding == OBJ_ENC_LISTPACK) {
        if (!it->p) return 0;
        *m = (const char *)lp_get_str(it->p, len, (unsigned char *)it->buf);
        it->p = lp_next(lp_of(o), it->p);
        return 1;
    }
    void *e;
    if (!hashtable_next(&it->hi, &e)) return 0;
    *m = entry_member(e, len);
    return 1;
}

void set_iter_reset(set_iter *it) {
    if (it->o->encoding == OBJ_ENC_HT) hashtable_reset_iterator(&it->hi);
}

/* ---- conversions --------------------------------------------------------------- */

/* Moves every member of o into a new structure of encoding `to` (a
 * listpack or a hashtable; Valkey: setTypeConvertAndExpand). */
static void convert(obj *o, enum obj_encoding to) {
    void *dst = to == OBJ_ENC_LISTPACK ? (void *)lp_new() : (void *)hashtable_create(&member_type);
    set_iter it;
    const char *m;
    size_t len;
    set_iter_init(&it, o);
    while (set_iter_next(&it, &m, &len)) {
        if (to == OBJ_ENC_LISTPACK)
            dst = lp_append(dst, (const unsigned char *)m, len);
        else
            hashtable_add(dst, entry_new(m, len));
    }
    set_iter_reset(&it);
    object_free(o);
    o->ptr = dst;
    o->encoding = to;
}

/* Valkey's lpSafeToAdd bound: a listpack stays under 1 GB. */
#define LP_SAFETY_BYTES ((size_t)1 << 30)
/* The most bytes one integer takes in a listpack: a 9-byte integer encoding
 * and a 1-byte back length (Valkey: lpEstimateBytesRepeatedInteger). */
#define LP_INT_BYTES 10

/* Whether an intset would still fit a listpack once a string of len bytes
 * joins it (Valkey's test in setTypeAddAux). */
static int intset_fits_listpack(const intset *is, size_t len) {
    uint32_t n = intset_len(is);
    size_t widest = 0;
    if (n) {
        char buf[SET_INTBUF_SIZE];
        size_t a = ll_to_str(buf, intset_min(is)), b = ll_to_str(buf, intset_max(is));
        widest = a > b ? a : b;
    }
    return (long long)n < set_max_listpack_entries && (long long)len <= set_max_listpack_value &&
           (long long)widest <= set_max_listpack_value && (size_t)n * LP_INT_BYTES + len + 16 < LP_SAFETY_BYTES;
}

/* An intset that outgrew set-max-intset-entries goes to a hashtable
 * (Valkey: maybeConvertIntset; intsetMaxEntries caps the limit at 2^30). */
static void maybe_convert_intset(obj *o) {
    long long max = set_max_intset_entries < (long long)INTSET_MAX_LEN ? set_max_intset_entries : INTSET_MAX_LEN;
    if ((long long)intset_len(is_of(o)) > max) convert(o, OBJ_ENC_HT);
}

void set_maybe_convert(obj *o, size_t size_hint) {
    if ((o->encoding == OBJ_ENC_LISTPACK && size_hint > (size_t)set_max_listpack_entries) ||
        (o->encoding == OBJ_ENC_INTSET && size_hint > (size_t)set_max_intset_entries))
        convert(o, OBJ_ENC_HT);
}

/* ---- members ------------------------------------------------------------------- */

int set_add(obj *o, const char *m, size_t len) {
    if (o->encoding == OBJ_ENC_INTSET) {
        long long v;
        if (str_to_ll(m, len, &v)) {
            int added;
            o->ptr = (char *)intset_add(is_of(o), v, &added);
            if (added) maybe_convert_intset(o);
            return added;
        }
        /* Not an integer, so not a member yet: the set changes encoding. */
        convert(o, intset_fits_listpack(is_of(o), len) ? OBJ_ENC_LISTPACK : OBJ_ENC_HT);
        if (o->encoding == OBJ_ENC_LISTPACK)
            o->ptr = (char *)lp_append(lp_of(o), (const unsigned char *)m, len);
        else
            hashtable_add(ht_of(o), entry_new(m, len));
        return 1;
    }
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = lp_of(o), *p = lp_first(lp);
        if (p && lp_find(lp, p, (const unsigned char *)m, len, 0)) return 0;
        if ((long long)lp_length(lp) < set_max_listpack_entries && (long long)len <= set_max_listpack_value &&
            lp_safe_to_add(lp, len)) {
            o->ptr = (char *)lp_append(lp, (const unsigned char *)m, len);
            return 1;
        }
        convert(o, OBJ_ENC_HT); /* full, or the member is too long */
        hashtable_add(ht_of(o), entry_new(m, len));
        return 1;
    }
    return ht_add(ht_of(o), m, len);
}

int set_remove(obj *o, const char *m, size_t len) {
    if (o->encoding == OBJ_ENC_INTSET) {
        long long v;
        int removed = 0;
        if (str_to_ll(m, len, &v)) o->ptr = (char *)intset_remove(is_of(o), v, &removed);
        return removed;
    }
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = lp_of(o), *p = lp_first(lp);
        if (p) p = lp_find(lp, p, (const unsigned char *)m, len, 0);
        if (!p) return 0;
        o->ptr = (char *)lp_delete(lp, &p);
        return 1;
    }
    hashtable_key k = {m, len};
    return hashtable_delete(ht_of(o), &k);
}

int set_is_member(obj *o, const char *m, size_t len) {
    if (o->encoding == OBJ_ENC_INTSET) {
        long long v;
        return str_to_ll(m, len, &v) && intset_find(is_of(o), v);
    }
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = lp_of(o), *p = lp_first(lp);
        return p && lp_find(lp, p, (const unsigned char *)m, len, 0) != NULL;
    }
    hashtable_key k = {m, len};
    void *found;
    return hashtable_find(ht_of(o), &k, &found);
}

void set_random(obj *o, char *buf, const char **m, size_t *len) {
    assert(set_length(o) > 0);
    if (o->encoding == OBJ_ENC_INTSET) {
        *len = ll_to_str(buf, intset_random(is_of(o)));
        *m = buf;
    } else if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = lp_of(o);
        unsigned char *p = lp_seek(lp, (long)((unsigned long)random() % lp_length(lp)));
        *m = (const char *)lp_get_str(p, len, (unsigned char *)buf);
    } else {
        void *e;
        hashtable_fair_random_entry(ht_of(o), &e);
        *m = entry_member(e, len);
    }
}

obj *set_pop(obj *o) {
    char buf[SET_INTBUF_SIZE];
    const char *m;
    size_t len;
    set_random(o, buf, &m, &len);
    obj *s = obj_create_string(m, len); /* a copy: the remove frees the bytes */
    set_remove(o, s->ptr, s->len);
    return s;
}

/* ---- scan and copy ----------------------------------------------------------------- */

typedef struct scan_ctx {
    set_scan_fn fn;
    void *privdata;
} scan_ctx;

static void scan_one(void *privdata, void *entry) {
    scan_ctx *s = privdata;
    size_t len;
    const char *m = entry_member(entry, &len);
    s->fn(s->privdata, m, len);
}

size_t set_scan(obj *o, size_t cursor, set_scan_fn fn, void *privdata) {
    if (o->encoding == OBJ_ENC_HT) {
        scan_ctx s = {fn, privdata};
        return hashtable_scan(ht_of(o), cursor, scan_one, &s);
    }
    set_iter it;
    const char *m;
    size_t len;
    set_iter_init(&it, o);
    while (set_iter_next(&it, &m, &len)) fn(privdata, m, len);
    set_iter_reset(&it);
    return 0;
}

obj *set_object_dup(const obj *o) {
    if (o->encoding == OBJ_ENC_INTSET) return obj_create_value(&set_ops, OBJ_ENC_INTSET, intset_dup(is_of(o)));
    if (o->encoding == OBJ_ENC_LISTPACK) {
        size_t n = lp_bytes(lp_of(o));
        unsigned char *lp = zmalloc(n);
        memcpy(lp, o->ptr, n);
        return obj_create_value(&set_ops, OBJ_ENC_LISTPACK, lp);
    }
    obj *d = obj_create_value(&set_ops, OBJ_ENC_HT, hashtable_create(&member_type));
    hashtable_iterator it;
    void *e;
    hashtable_init_iterator(&it, ht_of(o), 0);
    while (hashtable_next(&it, &e)) {
        size_t len;
        const char *m = entry_member(e, &len);
        hashtable_add(ht_of(d), entry_new(m, len));
    }
    hashtable_reset_iterator(&it);
    return d;
}

/* ---- verification ------------------------------------------------------------------ */

#define SET_VERIFY(cond, ...) UTIL_VERIFY("set_verify", cond, __VA_ARGS__)

int set_verify(obj *o) {
    SET_VERIFY(o->type == OBJ_SET, "type %d is not a set", o->type);
    if (o->encoding == OBJ_ENC_INTSET) {
        SET_VERIFY(intset_verify(is_of(o)), "the intset is broken");
        return 1;
    }
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = lp_of(o);
        SET_VERIFY(lp_verify(lp), "the listpack is broken");
        /* Distinct: each element is found first at its own position. */
        size_t i = 0;
        for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p), i++) {
            unsigned char buf[LP_INTBUF_SIZE];
            size_t len;
            const unsigned char *m = lp_get_str(p, &len, buf);
            SET_VERIFY(lp_find(lp, lp_first(lp), m, len, 0) == p, "listpack element %zu is a duplicate", i);
        }
        SET_VERIFY(i == lp_length(lp), "listpack walk found %zu elements, length says %zu", i, lp_length(lp));
        return 1;
    }
    SET_VERIFY(o->encoding == OBJ_ENC_HT, "unknown encoding %d", o->encoding);
    hashtable *ht = ht_of(o);
    hashtable_iterator it;
    void *e;
    size_t count = 0;
    int ok = 1;
    hashtable_init_iterator(&it, ht, 1); /* safe: the finds below may not rehash under a plain one */
    while (ok && hashtable_next(&it, &e)) {
        size_t len;
        const char *m = entry_member(e, &len);
        hashtable_key k = {m, len};
        void *found;
        ok = hashtable_find(ht, &k, &found) && found == e;
        count++;
    }
    hashtable_reset_iterator(&it);
    SET_VERIFY(ok, "hashtable entry %zu is not found by its own member", count);
    SET_VERIFY(count == hashtable_size(ht), "hashtable walk found %zu entries, size says %zu", count,
               hashtable_size(ht));
    return 1;
}
