/* object.c — refcounted value objects (step 0, plumbing layer). See object.h. */
#include "object.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zmalloc.h"

static const obj_type_ops *type_ops[OBJ_TYPE_MAX];

const char *obj_type_name(const obj *o) {
    if (!o) return "none";
    if (o->type == OBJ_STRING) return "string";
    return o->type < OBJ_TYPE_MAX && type_ops[o->type] ? type_ops[o->type]->name : "unknown";
}

obj *obj_dup(const obj *o) {
    if (o->type == OBJ_STRING) return obj_create_string(o->ptr, o->len);
    return type_ops[o->type]->dup(o);
}

size_t obj_length(const obj *o) { return o->type == OBJ_STRING ? o->len : type_ops[o->type]->length(o); }

const char *obj_encoding_name(const obj *o) {
    switch (o->encoding) {
    case OBJ_ENC_RAW: return "raw";
    case OBJ_ENC_HT: return "hashtable";
    case OBJ_ENC_INTSET: return "intset";
    case OBJ_ENC_SKIPLIST: return "skiplist";
    case OBJ_ENC_EMBSTR: return "embstr";
    case OBJ_ENC_QUICKLIST: return "quicklist";
    case OBJ_ENC_LISTPACK: return "listpack";
    default: return "unknown";
    }
}

obj *obj_create_string(const void *p, size_t len) {
    obj *o = zmalloc(sizeof(obj) + len + 1);
    o->encoding = len <= OBJ_EMBSTR_MAX ? OBJ_ENC_EMBSTR : OBJ_ENC_RAW; /* the name only: both inline */
    o->ptr = o->embedded;
    o->type = OBJ_STRING;
    o->refcount = 1;
    o->len = len;
    if (len) memcpy(o->ptr, p, len);
    o->ptr[len] = '\0';
    return o;
}

obj *obj_create_raw(size_t len) {
    obj *o = zmalloc(sizeof(obj));
    o->type = OBJ_STRING;
    o->encoding = OBJ_ENC_RAW;
    o->refcount = 1;
    o->len = len;
    o->ptr = zmalloc(len + 1);
    o->ptr[len] = '\0';
    return o;
}

obj *obj_create_from_ll(long long v) {
    char buf[32];
    size_t n = ll_to_str(buf, v);
    return obj_create_string(buf, n);
}

obj *obj_create_value(const obj_type_ops *ops, enum obj_encoding encoding, void *value) {
    type_ops[ops->type] = ops;
    obj *o = zmalloc(sizeof(obj));
    o->type = (uint8_t)ops->type;
    o->encoding = (uint8_t)encoding;
    o->refcount = 1;
    o->len = 0;
    o->ptr = value;
    return o;
}

obj *obj_string_resize(obj *o, size_t len) {
    if (obj_bytes_inline(o)) {
        obj *r = obj_create_raw(len);
        memcpy(r->ptr, o->ptr, o->len < len ? o->len : len);
        if (len > o->len) memset(r->ptr + o->len, 0, len - o->len);
        r->ptr[len] = '\0';
        obj_decr_ref(o);
        return r;
    }
    o->ptr = zrealloc(o->ptr, len + 1);
    if (len > o->len) memset(o->ptr + o->len, 0, len - o->len);
    o->len = len;
    o->ptr[len] = '\0';
    return o;
}

void obj_free(obj *o) {
    if (o->type == OBJ_STRING) {
        if (!obj_bytes_inline(o)) zfree(o->ptr);
    } else {
        /* Other types free their structure through the operations recorded
         * when their first object was created: the plumbing layer cannot
         * know the keyspace's types. */
        type_ops[o->type]->free(o);
    }
    zfree(o);
}

void obj_decr_ref(obj *o) {
    if (o->refcount == 1) {
        obj_free(o);
        return;
    }
    o->refcount--;
}

int str_to_ll(const char *s, size_t len, long long *out) {
    /* Valkey's string2ll: optional '-', digits, no leading zeros, no
     * spaces, no '+', and the value must fit in a long long. */
    const char *p = s;
    size_t plen = 0;
    int negative = 0;
    unsigned long long v;

    if (len == 0 || len > 20) return 0;
    if (len == 1 && p[0] == '0') {
        *out = 0;
        return 1;
    }
    if (p[0] == '-') {
        negative = 1;
        p++;
        plen++;
        if (plen == len) return 0;
    }
    if (p[0] >= '1' && p[0] <= '9') {
        v = (unsigned long long)(p[0] - '0');
        p++;
        plen++;
    } else {
        return 0;
    }
    while (plen < len && p[0] >= '0' && p[0] <= '9') {
        if (v > ULLONG_MAX / 10) return 0;
        v *= 10;
        if (v > ULLONG_MAX - (unsigned long long)(p[0] - '0')) return 0;
        v += (unsigned long long)(p[0] - '0');
        p++;
        plen++;
    }
    if (plen < len) return 0;
    if (negative) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > LLONG_MAX) return 0;
        *out = (long long)v;
    }
    return 1;
}

int obj_get_ll(const obj *o, long long *out) { return str_to_ll(o->ptr, o->len, out); }

int obj_get_ld(const obj *o, long double *out) {
    /* Valkey's string2ld: strtold over the whole string, no leading space,
     * no NaN; an empty string or trailing garbage is an error. */
    char buf[5120];
    char *end;
    if (o->len == 0 || o->len >= sizeof(buf)) return 0;
    memcpy(buf, o->ptr, o->len);
    buf[o->len] = '\0';
    if (buf[0] == ' ' || buf[0] == '\t' || buf[0] == '\n' || buf[0] == '\r') return 0;
    errno = 0;
    long double v = strtold(buf, &end);
    if ((size_t)(end - buf) != o->len || isnan(v)) return 0;
    if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) return 0;
    *out = v;
    return 1;
}

int obj_get_double(const obj *o, double *out) {
    const char *s = o->ptr;
    if (o->len == 0 || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' || s[0] == '\v' || s[0] == '\f')
        return 0;
    const char *digits = s[0] == '+' || s[0] == '-' ? s + 1 : s;
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if ((size_t)(end - s) != o->len || isnan(v)) return 0;
    if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return 0;
    *out = v;
    return 1;
}

size_t ll_to_str(char *buf, long long v) {
    unsigned long long u = v < 0 ? (unsigned long long)(-(v + 1)) + 1 : (unsigned long long)v;
    char tmp[24];
    size_t n = 0, i = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) buf[i++] = '-';
    while (n) buf[i++] = tmp[--n];
    buf[i] = '\0';
    return i;
}
