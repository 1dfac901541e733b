/* hash.c — the hash type: field → value, in a listpack or a hashtable.
 *
 * Not a step (keyspace layer). Owns every hash value: its listpack, or its
 * table and the entries in it. Threads: main thread only. Valkey:
 * src/t_hash.c (hashTypeSet, hashTypeGetValue, hashTypeDelete,
 * hashTypeConvertListpack, hashTypeTryConversion, hashTypeNext,
 * hashTypeRandomElement, and the sampling of hrandfieldWithCountCommand),
 * written again from the ideas.
 *
 * HOW IT WORKS
 *
 * A hash has two encodings, chosen by size, and moves from the first to
 * the second once, never back (Valkey's hashTypeConvert is one way too:
 * a hash that grew large once is likely to grow again).
 *
 * Listpack (OBJ_ENC_LISTPACK). o->ptr is one listpack (listpack.h) whose
 * elements alternate field, value, field, value ... in the order the
 * fields were first set. A lookup is a linear lp_find over the fields,
 * stepping over the values (skip 1); on a few dozen short strings that is
 * faster than hashing, and the whole hash costs one allocation plus a
 * few bytes an element. Invariants:
 *   L1. The element count is even: every field has its value after it.
 *   L2. No field appears twice.
 *   L3. At most hash_max_listpack_entries fields, each field and value at
 *       most hash_max_listpack_value bytes. A write that would break L3
 *       converts first (a long string) or right after (one field too
 *       many), so a listpack never holds what its limits forbid.
 *       (Lowering a limit with CONFIG SET does not convert the hashes
 *       already built: like Valkey, the next write that checks it does.)
 *
 * Hashtable (OBJ_ENC_HT). o->ptr is a soloist hashtable (hashtable.h)
 * whose every entry is ONE allocation holding the field and the value:
 *
 *     [varint flen][flen bytes of field][varint vlen][vlen bytes of value]
 *
 * the lengths as base-128 varints (7 bits a byte, the high bit set on all
 * but the last). The table's key is the field, read back through
 * entry_key. Why one allocation: Valkey 8.0 (and Redis 7.0) pay three
 * per field — a dict entry (24 bytes), an sds string for the field and
 * one for the value (16 bytes each when short, in jemalloc's small size
 * classes) — plus a bucket pointer: about 64 bytes for a field like
 * "field:123456" holding "123456". A glibc chunk costs 8 bytes of header
 * and its usable size grows from 24 in steps of 16, so that field and
 * value, 20 bytes with their two varints, fit in one 32-byte chunk (24
 * usable, what used_memory counts), and the table's 64-byte buckets of
 * seven slots add about 17 bytes: some 42 a field in all.
 * A new value may need a longer entry: set reallocates the entry
 * (its field bytes, hence its key and hash, unchanged) and stores the new
 * pointer in the table slot it came from (hashtable_find_ref), so the
 * table is never searched twice. Invariants:
 *   H1. Every entry decodes: two varints and their bytes.
 *   H2. Every entry is found under its own field (no two share one).
 *   H3. The table's size is the number of entries it yields.
 *
 * Memory: listpacks, tables and entries all come from zmalloc, so INFO's
 * used_memory counts a hash to the byte.
 */
#include "hash.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtable.h"
#include "listpack.h"
#include "util.h"
#include "zmalloc.h"

long long hash_max_listpack_entries = 512, hash_max_listpack_value = 64;

/* ---- the table encoding's entries ------------------------------------------------ */

static size_t varint_size(size_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t varint_put(unsigned char *p, size_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static size_t varint_get(const unsigned char *p, size_t *v) {
    size_t n = 0, shift = 0, out = 0;
    do {
        out |= (size_t)(p[n] & 0x7f) << shift;
        shift += 7;
    } while (p[n++] & 0x80);
    *v = out;
    return n;
}

static size_t entry_size(size_t flen, size_t vlen) { return varint_size(flen) + flen + varint_size(vlen) + vlen; }

/* Writes the value part of an entry at p (its varint, then its bytes). */
static void value_put(unsigned char *p, const char *value, size_t vlen) {
    p += varint_put(p, vlen);
    if (vlen) memcpy(p, value, vlen);
}

static unsigned char *entry_new(const char *field, size_t flen, const char *value, size_t vlen) {
    unsigned char *e = zmalloc(entry_size(flen, vlen));
    size_t off = varint_put(e, flen);
    if (flen) memcpy(e + off, field, flen);
    value_put(e + off + flen, value, vlen);
    return e;
}

static const char *entry_field(const unsigned char *e, size_t *flen) { return (const char *)e + varint_get(e, flen); }

/* Where an entry's value part (its varint) starts. */
static size_t entry_value_offset(const unsigned char *e) {
    size_t flen, n = varint_get(e, &flen);
    return n + flen;
}

static const char *entry_value(const unsigned char *e, size_t *vlen) {
    const unsigned char *v = e + entry_value_offset(e);
    return (const char *)v + varint_get(v, vlen);
}

/* The table's key of an entry: a {ptr, len} view of its field, built in
 * one of two rotating slots (hashtable.h allows a temporary that outlives
 * one more entry_key call; only main touches a hash). */
static const void *entry_key(const void *entry) {
    static hashtable_key slot[2];
    static int next;
    hashtable_key *k = &slot[next];
    next ^= 1;
    k->ptr = entry_field(entry, &k->len);
    return k;
}

static const hashtable_type table_type = {.hash_key = hashtable_key_hash,
                                          .entry_get_key = entry_key,
                                          .key_compare = hashtable_key_compare,
                                          .entry_destructor = zfree};

static void pair_of_entry(const unsigned char *e, hash_pair *pair) {
    pair->field = entry_field(e, &pair->flen);
    pair->value = entry_value(e, &pair->vlen);
}

/* ---- the listpack encoding ----------------------------------------------------------- */

/* The position of field's element, or NULL. */
static unsigned char *lp_find_field(unsigned char *lp, const char *field, size_t flen) {
    unsigned char *p = lp_first(lp);
    return p ? lp_find(lp, p, (const unsigned char *)field, flen, 1) : NULL;
}

static const char *lp_str(const unsigned char *p, size_t *len, char *buf) {
    return (const char *)lp_get_str(p, len, (unsigned char *)buf);
}

/* The pair whose field is at p; returns the position after its value. */
static unsigned char *lp_pair_at(unsigned char *lp, unsigned char *p, hash_pair *pair, char *fbuf, char *vbuf) {
    unsigned char *v = lp_next(lp, p);
    assert(v != NULL); /* L1 */
    pair->field = lp_str(p, &pair->flen, fbuf);
    pair->value = lp_str(v, &pair->vlen, vbuf);
    return lp_next(lp, v);
}

/* ---- life cycle and conversion -------------------------------------------------------- */

static size_t object_length(const obj *o) { return hash_length(o); }
static const obj_type_ops hash_ops = {OBJ_HASH, "hash", hash_free, hash_object_dup, object_length};

obj *hash_object_create(void) { return obj_create_value(&hash_ops, OBJ_ENC_LISTPACK, lp_new()); }

obj *hash_object_dup(const obj *o) {
    if (o->encoding == OBJ_ENC_LISTPACK) {
        size_t bytes = lp_bytes((const unsigned char *)o->ptr);
        unsigned char *lp = zmalloc(bytes);
        memcpy(lp, o->ptr, bytes);
        return obj_create_value(&hash_ops, OBJ_ENC_LISTPACK, lp);
    }
    hashtable *src = (hashtable *)(void *)o->ptr, *dst = hashtable_create(&table_type);
    hashtable_iterator it;
    void *e;
    hashtable_init_iterator(&it, src, 0);
    while (hashtable_next(&it, &e)) {
        hash_pair p;
        pair_of_entry(e, &p);
        hashtable_add(dst, entry_new(p.field, p.flen, p.value, p.vlen));
    }
    hashtable_reset_iterator(&it);
    return obj_create_value(&hash_ops, OBJ_ENC_HT, dst);
}

void hash_free(obj *o) {
    if (o->encoding == OBJ_ENC_LISTPACK)
        lp_free((unsigned char *)o->ptr);
    else
        hashtable_release((hashtable *)(void *)o->ptr); /* frees each entry */
}

size_t hash_length(const obj *o) {
    if (o->encoding == OBJ_ENC_LISTPACK) return lp_length((const unsigned char *)o->ptr) / 2;
    return hashtable_size((const hashtable *)(const void *)o->ptr);
}

void hash_convert(obj *o) {
    if (o->encoding != OBJ_ENC_LISTPACK) return;
    unsigned char *lp = (unsigned char *)o->ptr;
    hashtable *ht = hashtable_create(&table_type);
    char fbuf[HASH_NUMBUF], vbuf[HASH_NUMBUF];
    for (unsigned char *p = lp_first(lp); p;) {
        hash_pair pair;
        p = lp_pair_at(lp, p, &pair, fbuf, vbuf);
        int added = hashtable_add(ht, entry_new(pair.field, pair.flen, pair.value, pair.vlen));
        assert(added); /* L2: a duplicate field is a corrupt listpack */
        (void)added;
    }
    lp_free(lp);
    o->ptr = (char *)(void *)ht;
    o->encoding = OBJ_ENC_HT;
}

void hash_try_conversion(obj *o, obj *const *argv, int start, int end) {
    if (o->encoding != OBJ_ENC_LISTPACK) return;
    /* More new fields than a listpack holds (if they are distinct, as
     * Valkey guesses): convert now rather than after building it. */
    if ((long long)(end - start + 1) / 2 > hash_max_listpack_entries) {
        hash_convert(o);
        return;
    }
    size_t sum = 0;
    for (int i = start; i <= end; i++) {
        if ((long long)argv[i]->len > hash_max_listpack_value) {
            hash_convert(o);
            return;
        }
        sum += argv[i]->len;
    }
    if (!lp_safe_to_add((unsigned char *)o->ptr, sum)) hash_convert(o);
}

/* ---- fields ------------------------------------------------------------------------------ */

int hash_set(obj *o, const char *field, size_t flen, const char *value, size_t vlen) {
    if (o->encoding == OBJ_ENC_LISTPACK &&
        ((long long)flen > hash_max_listpack_value || (long long)vlen > hash_max_listpack_value ||
         !lp_safe_to_add((unsigned char *)o->ptr, flen + vlen)))
        hash_convert(o); /* L3: before, a long string never enters the listpack */
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = (unsigned char *)o->ptr;
        unsigned char *p = lp_find_field(lp, field, flen);
        int added = p == NULL;
        if (p) {
            unsigned char *v = lp_next(lp, p);
            lp = lp_replace(lp, &v, (const unsigned char *)value, vlen);
        } else {
            lp = lp_append(lp, (const unsigned char *)field, flen);
            lp = lp_append(lp, (const unsigned char *)value, vlen);
        }
        o->ptr = (char *)lp;
        if ((long long)hash_length(o) > hash_max_listpack_entries) hash_convert(o); /* L3: after */
        return added;
    }
    hashtable *ht = (hashtable *)(void *)o->ptr;
    hashtable_key k = {field, flen};
    void **ref = hashtable_find_ref(ht, &k);
    if (!ref) {
        hashtable_add(ht, entry_new(field, flen, value, vlen));
        return 1;
    }
    /* Same field, new value: resize the entry in place if the allocator
     * can, and store wherever it ended up in the slot it came from. */
    size_t off = entry_value_offset(*ref);
    unsigned char *e = zrealloc(*ref, off + varint_size(vlen) + vlen);
    value_put(e + off, value, vlen);
    *ref = e;
    return 0;
}

const char *hash_get(obj *o, const char *field, size_t flen, size_t *vlen, char *buf) {
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = (unsigned char *)o->ptr;
        unsigned char *p = lp_find_field(lp, field, flen);
        return p ? lp_str(lp_next(lp, p), vlen, buf) : NULL;
    }
    hashtable_key k = {field, flen};
    void *e;
    if (!hashtable_find((hashtable *)(void *)o->ptr, &k, &e)) return NULL;
    return entry_value(e, vlen);
}

int hash_exists(obj *o, const char *field, size_t flen) {
    size_t vlen;
    char buf[HASH_NUMBUF];
    return hash_get(o, field, flen, &vlen, buf) != NULL;
}

size_t hash_value_len(obj *o, const char *field, size_t flen) {
    size_t vlen;
    char buf[HASH_NUMBUF];
    return hash_get(o, field, flen, &vlen, buf) ? vlen : 0;
}

int hash_delete(obj *o, const char *field, size_t flen) {
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = (unsigned char *)o->ptr;
        unsigned char *p = lp_find_field(lp, field, flen);
        if (!p) return 0;
        lp = lp_delete(lp, &p); /* the field; p moves to its value */
        lp = lp_delete(lp, &p);
        o->ptr = (char *)lp;
        return 1;
    }
    hashtable_key k = {field, flen};
    return hashtable_delete((hashtable *)(void *)o->ptr, &k);
}

/* ---- iteration ---------------------------------------------------------------------------- */

void hash_iter_init(hash_iter *it, obj *o) {
    it->o = o;
    if (o->encoding == OBJ_ENC_LISTPACK)
        it->p = lp_first((unsigned char *)o->ptr);
    else
        hashtable_init_iterator(&it->hi, (hashtable *)(void *)o->ptr, 0);
}

int hash_iter_next(hash_iter *it, hash_pair *pair) {
    if (it->o->encoding == OBJ_ENC_LISTPACK) {
        if (!it->p) return 0;
        it->p = lp_pair_at((unsigned char *)it->o->ptr, it->p, pair, it->fbuf, it->vbuf);
        return 1;
    }
    void *e;
    if (!hashtable_next(&it->hi, &e)) return 0;
    pair_of_entry(e, pair);
    return 1;
}

void hash_iter_reset(hash_iter *it) {
    if (it->o->encoding != OBJ_ENC_LISTPACK) hashtable_reset_iterator(&it->hi);
}

/* ---- random fields ----------------------------------------------------------------------------- */

static size_t random_below(size_t n) { return (size_t)((unsigned long)random() % n); }

int hash_random_pair(obj *o, hash_pair *pair, char *fbuf, char *vbuf) {
    size_t len = hash_length(o);
    if (len == 0) return 0;
    if (o->encoding == OBJ_ENC_LISTPACK) {
        unsigned char *lp = (unsigned char *)o->ptr;
        lp_pair_at(lp, lp_seek(lp, (long)(2 * random_below(len))), pair, fbuf, vbuf);
        return 1;
    }
    void *e;
    hashtable_fair_random_entry((hashtable *)(void *)o->ptr, &e);
    pair_of_entry(e, pair);
    return 1;
}

/* A set of distinct entries for the sampling: a hashtable whose entries
 * are the entry pointers themselves (it owns nothing). */
static uint64_t pointer_hash(const void *key) { return hashtable_gen_hash(&key, sizeof(key)); }
static const hashtable_type pointer_set_type = {.hash_key = pointer_hash};

/* The listpack cases: repeats by index into an array of field positions,
 * distinct pairs by one ordered pass (Valkey: lpRandomPairs,
 * lpRandomPairsUnique), so a small hash is never copied. */
static void listpack_random_pairs(obj *o, long long count, hash_pair_fn *fn, void *arg) {
    unsigned char *lp = (unsigned char *)o->ptr;
    size_t len = hash_length(o);
    char fbuf[HASH_NUMBUF], vbuf[HASH_NUMBUF];
    hash_pair pair;
    if (count < 0) {
        unsigned char **fields = zmalloc(sizeof(*fields) * len);
        size_t i = 0;
        for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, lp_next(lp, p))) fields[i++] = p;
        for (long long k = 0; k < -count; k++) {
            lp_pair_at(lp, fields[random_below(len)], &pair, fbuf, vbuf);
            fn(arg, &pair);
        }
        zfree(fields);
        return;
    }
    /* Selection sampling (Knuth's algorithm S): each pair is taken with
     * probability needed / left, which yields exactly count of them, each
     * subset equally likely, in listpack order. */
    size_t needed = (size_t)count, left = len;
    for (unsigned char *p = lp_first(lp); p && needed; left--) {
        unsigned char *field = p;
        p = lp_next(lp, lp_next(lp, p));
        if (random_below(left) < needed) {
            lp_pair_at(lp, field, &pair, fbuf, vbuf);
            fn(arg, &pair);
            needed--;
        }
    }
}

size_t hash_random_pairs(obj *o, long long count, hash_pair_fn *fn, void *arg) {
    size_t size = hash_length(o);
    if (count == 0 || size == 0) return 0;
    hash_pair pair;
    if (count > 0 && (unsigned long long)count >= size) { /* the whole hash */
        hash_iter it;
        hash_iter_init(&it, o);
        while (hash_iter_next(&it, &pair)) fn(arg, &pair);
        hash_iter_reset(&it);
        return size;
    }
    size_t n = count < 0 ? (size_t)-count : (size_t)count;
    if (o->encoding == OBJ_ENC_LISTPACK) {
        listpack_random_pairs(o, count, fn, arg);
        return n;
    }
    hashtable *ht = (hashtable *)(void *)o->ptr;
    void *e;
    if (count < 0) { /* repeats allowed: independent draws */
        for (size_t k = 0; k < n; k++) {
            hashtable_fair_random_entry(ht, &e);
            pair_of_entry(e, &pair);
            fn(arg, &pair);
        }
        return n;
    }
    hashtable *picked = hashtable_create(&pointer_set_type);
    if ((unsigned long long)count * 3 > size) {
        /* Most of the hash: copy it and remove random pairs until count
         * remain, which draws far less than picking count would. */
        hashtable_iterator it;
        hashtable_init_iterator(&it, ht, 0);
        while (hashtable_next(&it, &e)) hashtable_add(picked, e);
        hashtable_reset_iterator(&it);
        while (hashtable_size(picked) > n) {
            hashtable_fair_random_entry(picked, &e);
            hashtable_pop(picked, e, NULL);
        }
        hashtable_init_iterator(&it, picked, 0);
        while (hashtable_next(&it, &e)) {
            pair_of_entry(e, &pair);
            fn(arg, &pair);
        }
        hashtable_reset_iterator(&it);
    } else {
        /* A few: draw until count distinct ones came up. */
        while (hashtable_size(picked) < n) {
            hashtable_fair_random_entry(ht, &e);
            if (!hashtable_add(picked, e)) continue;
            pair_of_entry(e, &pair);
            fn(arg, &pair);
        }
    }
    hashtable_release(picked);
    return n;
}

/* ---- scan ---------------------------------------------------------------------------------------- */

typedef struct scan_ctx {
    hash_pair_fn *fn;
    void *arg;
} scan_ctx;

static void scan_entry(void *privdata, void *e) {
    scan_ctx *ctx = privdata;
    hash_pair pair;
    pair_of_entry(e, &pair);
    ctx->fn(ctx->arg, &pair);
}

size_t hash_scan(obj *o, size_t cursor, hash_pair_fn *fn, void *arg) {
    if (o->encoding == OBJ_ENC_LISTPACK) {
        hash_iter it;
        hash_pair pair;
        hash_iter_init(&it, o);
        while (hash_iter_next(&it, &pair)) fn(arg, &pair);
        hash_iter_reset(&it);
        return 0;
    }
    scan_ctx ctx = {fn, arg};
    return hashtable_scan((hashtable *)(void *)o->ptr, cursor, scan_entry, &ctx);
}

/* ---- invariants ----------------------------------------------------------------------------------- */

#define CHECK(cond, ...) UTIL_VERIFY("hash_verify", cond, __VA_ARGS__)

static int verify_listpack(unsigned char *lp) {
    CHECK(lp_verify(lp), "the listpack fails lp_verify");
    size_t n = lp_length(lp);
    CHECK(n % 2 == 0, "L1: %zu elements, an odd count", n);
    CHECK((long long)n / 2 <= hash_max_listpack_entries, "L3: %zu fields, over %lld", n / 2, hash_max_listpack_entries);
    size_t i = 0;
    for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p), i++) {
        size_t len;
        unsigned char buf[LP_INTBUF_SIZE];
        const unsigned char *s = lp_get_str(p, &len, buf);
        CHECK((long long)len <= hash_max_listpack_value, "L3: element %zu is %zu bytes, over %lld", i, len,
              hash_max_listpack_value);
        if (i % 2) continue;
        unsigned char *v = lp_next(lp, p), *after = v ? lp_next(lp, v) : NULL;
        CHECK(v != NULL, "L1: field %zu has no value", i / 2);
        CHECK(!after || !lp_find(lp, after, s, len, 1), "L2: field %zu appears again", i / 2);
    }
    CHECK(i == n, "the walk found %zu elements, the count says %zu", i, n);
    return 1;
}

/* H1: both lengths are varints in their shortest form (as varint_put
 * writes them), a field's length is followed by its bytes and then the
 * value's length. */
static int entry_well_formed(const unsigned char *e) {
    size_t flen, vlen;
    size_t n = varint_get(e, &flen);
    if (n != varint_size(flen)) return 0;
    const unsigned char *v = e + n + flen;
    return varint_get(v, &vlen) == varint_size(vlen);
}

static int verify_table(hashtable *ht) {
    hashtable_iterator it;
    void *e;
    size_t n = 0;
    int ok = 1;
    hashtable_init_iterator(&it, ht, 1); /* safe: the finds below must not rehash under it */
    while (ok && hashtable_next(&it, &e)) {
        hash_pair pair;
        pair_of_entry(e, &pair);
        hashtable_key k = {pair.field, pair.flen};
        void *found = NULL;
        if (!hashtable_find(ht, &k, &found) || found != e) {
            fprintf(stderr, "hash_verify: H2: entry %zu is not found under its field\n", n);
            ok = 0;
        }
        if (!entry_well_formed(e)) {
            fprintf(stderr, "hash_verify: H1: entry %zu does not decode\n", n);
            ok = 0;
        }
        n++;
    }
    hashtable_reset_iterator(&it);
    if (!ok) return 0;
    CHECK(n == hashtable_size(ht), "H3: %zu entries, the table counts %zu", n, hashtable_size(ht));
    return 1;
}

int hash_verify(obj *o) {
    CHECK(o->type == OBJ_HASH, "not a hash (type %d)", o->type);
    if (o->encoding == OBJ_ENC_LISTPACK) return verify_listpack((unsigned char *)o->ptr);
    CHECK(o->encoding == OBJ_ENC_HT, "unknown encoding %d", o->encoding);
    return verify_table((hashtable *)(void *)o->ptr);
}
