/* object.h — refcounted value objects.
 *
 * Step 0 (plumbing layer). Owns: the obj type, its allocation, its refcount.
 * Threads: main thread only. An object's refcount is touched only by the
 * main thread; a worker may *read* an object's bytes (step 7: a reply that
 * references a stored value) only while main holds a reference on its
 * behalf, and it never changes the count. Two jobs of step 4 free objects
 * nobody else can reach: FREE_OBJ hands a worker the final free() of an
 * object whose count main already took to zero, and FREE_ARGV hands it
 * an argument vector whose objects only the vector holds (count 1), so
 * the worker's decrements race with no one.
 *
 * Valkey: robj in src/server.h and src/object.c (createObject,
 * createEmbeddedStringObject, decrRefCount). soloist keeps two string
 * encodings, named as Valkey names them — EMBSTR (up to 44 bytes) and RAW
 * (longer, or changed by APPEND, SETRANGE or SETBIT) — and drops Valkey's
 * shared integers and the INT encoding: INCR parses and reformats, which
 * costs a little and teaches nothing.
 *
 * Where a RAW string's bytes live is not its encoding. obj_create_string
 * puts them after the header, in the header's allocation, as EMBSTR does:
 * a 512-byte SET value is then one malloc and one free, not two, and at
 * pipeline depth 16 a batch of frees overflows glibc's per-thread cache
 * (seven blocks a size) so each block saved is a trip into the arena.
 * obj_create_raw gives the bytes an allocation of their own, so a large
 * argument can be read straight into its final buffer and APPEND can
 * grow it without replacing the object. obj_bytes_inline tells the two
 * apart; only object.c, MEMORY USAGE and the batch's prefetch need to.
 */
#ifndef SOLOIST_OBJECT_H
#define SOLOIST_OBJECT_H

#include <stddef.h>
#include <stdint.h>

/* Types and encodings carry Valkey's numbers (OBJ_STRING ... OBJ_HASH,
 * OBJ_ENCODING_* in src/server.h), so OBJECT ENCODING's names line up
 * with Valkey's by index. A type's structure lives in its own keyspace
 * module (list.c, hash.c, set.c, zset.c); this layer knows only the
 * numbers and the operations each module registers (obj_type_ops). */
enum obj_type { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4 };
#define OBJ_TYPE_MAX 5
enum obj_encoding {
    OBJ_ENC_RAW = 0,       /* a longer string, or one APPEND/SETRANGE/SETBIT changed */
    OBJ_ENC_HT = 2,        /* a hash or a set on soloist's hashtable */
    OBJ_ENC_INTSET = 6,    /* a set of integers: one sorted array */
    OBJ_ENC_SKIPLIST = 7,  /* a sorted set (every soloist sorted set) */
    OBJ_ENC_EMBSTR = 8,    /* a string sharing its header's allocation */
    OBJ_ENC_QUICKLIST = 9, /* a list: a chain of listpack nodes */
    OBJ_ENC_LISTPACK = 11, /* a small list, hash or set in one listpack */
};

/* Strings up to this many bytes share one allocation with their header
 * (Valkey: OBJ_ENCODING_EMBSTR_SIZE_LIMIT, 44 in 8.x). */
#define OBJ_EMBSTR_MAX 44

/*@ obj-struct */
typedef struct obj {
    uint8_t type;      /* enum obj_type */
    uint8_t encoding;  /* enum obj_encoding */
    uint32_t refcount; /* main thread only */
    size_t len;        /* string length in bytes (strings); 0 for other types */
    char *ptr;         /* string bytes, NUL-terminated; EMBSTR, and RAW from
                        * obj_create_string: points at embedded[];
                        * another type's structure (a zset), see obj_create_value */
    char embedded[];   /* a string's bytes when they share the header's allocation */
} obj;
/*@ end */

/* 1 when a string's bytes share its header's allocation (every EMBSTR,
 * and a RAW string made by obj_create_string); 0 when they have their own. */
static inline int obj_bytes_inline(const obj *o) { return o->ptr == o->embedded; }

/* Valkey's name for o's encoding, as OBJECT ENCODING prints it. */
const char *obj_encoding_name(const obj *o);

/* A string object holding a copy of [p, p+len), in one allocation.
 * NUL-terminates. */
obj *obj_create_string(const void *p, size_t len);
/* A RAW string of `len` bytes in an allocation of their own,
 * uninitialised, for callers that fill it (a bulk argument read straight
 * from the socket, APPEND, SETRANGE). */
obj *obj_create_raw(size_t len);
/* A string of the decimal representation of v. */
obj *obj_create_from_ll(long long v);
/*@ obj-string-resize */
/* Makes o's bytes writable and exactly `len` long (for APPEND/SETRANGE);
 * o must have refcount 1. Returns o, or a replacement whose bytes have
 * their own allocation when o's were inline (o is then released). */
obj *obj_string_resize(obj *o, size_t len);
/*@ end */

/* What the plumbing layer asks of a type it cannot know: the keyspace's
 * modules sit above it, so each hands its operations over here with every
 * object it creates (a handler table filled in from above, as io_threads
 * takes its job handlers).
 * free: release o->ptr's structure (not o itself). dup: a deep copy as a
 * new object, refcount 1 (COPY). length: elements held (a blocked pop
 * is served only by a key that holds some). */
typedef struct obj_type_ops {
    enum obj_type type;
    const char *name; /* TYPE's answer: "list", "set", "zset", "hash" */
    void (*free)(obj *o);
    obj *(*dup)(const obj *o);
    size_t (*length)(const obj *o);
} obj_type_ops;
/* A value of the type ops describes: ptr holds its structure in
 * `encoding`. Creating one records ops for that type (one store), so a
 * type's operations are known before its first object can be freed,
 * copied or named. */
obj *obj_create_value(const obj_type_ops *ops, enum obj_encoding encoding, void *value);
/* TYPE's name for o ("string", "list", ...), "none" for NULL. */
const char *obj_type_name(const obj *o);
/* A deep copy of any value (strings included), refcount 1. */
obj *obj_dup(const obj *o);
/* Elements in a collection; a string's length in bytes. */
size_t obj_length(const obj *o);

static inline void obj_incr_ref(obj *o) { o->refcount++; }

/* Drops one reference; frees the object when it was the last one. */
void obj_decr_ref(obj *o);
/* Frees an object whose refcount already reached zero (FREE_OBJ's body). */
void obj_free(obj *o);

/* Parses the whole string as a signed 64-bit decimal with Valkey's rules
 * (string2ll: no spaces, no '+', no leading zeros). 1 on success. */
int obj_get_ll(const obj *o, long long *out);
/* Parses as a long double the way Valkey's INCRBYFLOAT does. 1 on success. */
int obj_get_ld(const obj *o, long double *out);
/* Parses as a double the way Valkey's getDoubleFromObject does (a score,
 * a weight): the whole string, no leading space, no NaN, no overflow (an
 * underflow to a denormal is accepted), and no hexadecimal float, since
 * Valkey reads with fast_float (valkey_strtod), which takes decimal only.
 * 1 on success. */
int obj_get_double(const obj *o, double *out);
/* Same rules on a raw buffer. */
int str_to_ll(const char *s, size_t len, long long *out);
/* Writes v in decimal into buf (at least 21 bytes); returns the length. */
size_t ll_to_str(char *buf, long long v);

#endif
