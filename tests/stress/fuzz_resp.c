/* fuzz_resp.c — libFuzzer target for the RESP request parser (src/resp.c).
 *
 * Step 0 (plumbing), tests only. Owns nothing in the server: it drives
 * resp_parser_init / resp_parse / resp_parser_reset (and the zero-copy
 * window, resp_parser_bulk_window / resp_parser_bulk_advance) the way
 * networking.c does, on bytes the fuzzer chooses, and aborts when an
 * invariant of resp.h does not hold. Single-threaded.
 *
 * Valkey anchor: src/networking.c processInputBuffer / processMultibulkBuffer
 * / processInlineBuffer — a server sees the same request bytes cut at
 * whatever points read(2) returns, so the parse must not depend on the cuts.
 *
 * Input layout (every byte the fuzzer's to choose; missing bytes read 0):
 *   [0]      flags: bit 0 authenticated; bits 1-2 proto_max_bulk_len
 *            (16, 1000, 40000 — above RESP_MBULK_BIG_ARG, so the big-bulk
 *            path — or 1 MB); bits 3-4 how the split run cuts the bytes
 *            (0 at the cut points below, 1 one byte per read — payloads
 *            up to 2 KB, longer ones are cut as by 2 — 2 at points
 *            from a PRNG seeded by the cut bytes, 3 at the cut points
 *            below and also at every multiple of 7); bit 5 the split run
 *            reads into the parser's big-bulk window when it may; bit 6
 *            the payload is run-length expanded (below).
 *   [1]      low 4 bits: k, the number of cut points that follow
 *   [2..2+2k) k little-endian 16-bit cut offsets (mod the payload size + 1)
 *   the rest the request bytes (the payload). Expanded (bit 6), a byte
 *            0xff followed by lo, hi, b stands for b repeated
 *            (lo | hi << 8) + 1 times (so "ff 00 00 ff" is one 0xff), up to
 *            RESP_FUZZ_MAX_EXPANDED (96 KB) in all: a small input can then
 *            carry a bulk above RESP_MBULK_BIG_ARG or a 64 KB line.
 *
 * Checks, each an abort() with a description on failure:
 *   - every call: *consumed <= len, and no byte at or past len is read
 *     (the rest of the caller's buffer is ASan-poisoned around each call);
 *     RESP_INCOMPLETE and RESP_ERROR leave
 *     *argc == 0 and *argv == NULL; RESP_OK gives argc >= 1 and string
 *     objects, NUL-terminated, within the limits (unauthenticated: at most
 *     10 arguments of at most 16384 bytes; every bulk at most
 *     proto_max_bulk_len); RESP_ERROR gives a non-empty text that is one
 *     of resp.c's Valkey texts, all starting "ERR Protocol error";
 *   - fed whole, the bytes a RESP_OK consumed end with the canonical
 *     encoding of the argv it returned (multibulk: numbers have exactly one
 *     spelling, so lengths and bytes must match), or with one inline line
 *     holding the arguments; nothing is consumed twice or lost;
 *   - differential: fed whole and fed split (as above) the parser yields the
 *     same sequence of commands, the same error and the same leftover;
 *     with tighter limits it yields a prefix of what the loosest limits
 *     yield, ended by a limit's own error;
 *   - after an error or at the end the parser is reusable: a fresh PING
 *     parses.
 * LeakSanitizer (on under libFuzzer) catches an argv or big bulk not freed.
 *
 * Build and run: `make fuzz` (mk/stress.mk); suite 36 runs it for a bounded
 * time. Where the splits differ legitimately — a line longer than
 * RESP_INLINE_MAX_SIZE errors when a read leaves it unfinished but parses
 * when it arrives whole, as in Valkey — the differential is skipped.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/asan_interface.h>

#include "object.h"
#include "resp.h"
#include "zmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------- reporting */

static const uint8_t *cur_input;
static size_t cur_size;

static void dump_hex(const char *what, const uint8_t *d, size_t n) {
    fprintf(stderr, "%s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 4096; i++) fprintf(stderr, "%s%02x", i % 32 ? "" : "\n  ", d[i]);
    fprintf(stderr, "%s\n", n > 4096 ? "\n  ..." : "");
}

__attribute__((noreturn)) static void fail(const char *fmt, const char *detail) {
    fprintf(stderr, "\nfuzz_resp: INVARIANT FAILED: %s%s%s\n", fmt, detail ? ": " : "", detail ? detail : "");
    dump_hex("input", cur_input, cur_size);
    abort();
}

#define CHECK(cond, what)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) fail(what, #cond);                                                                                \
    } while (0)

/* ------------------------------------------------------------ event log */

/* What one run yields, serialised so two runs compare with memcmp:
 * 'C' argc {len bytes}...  per command, 'E' len text for the error that
 * ends the run, 'I' leftover for a run that ends waiting for more. */
typedef struct evlog {
    uint8_t *b;
    size_t len, cap;
    size_t last_entry; /* offset of the newest entry */
    int too_big;       /* the run hit a "too big ..." (64 KB line) error */
    int limit_error;   /* the run ended in a limit's error */
} evlog;

static void log_put(evlog *l, const void *p, size_t n) {
    if (l->len + n > l->cap) {
        l->cap = (l->len + n) * 2 + 64;
        l->b = realloc(l->b, l->cap);
        if (!l->b) abort();
    }
    memcpy(l->b + l->len, p, n);
    l->len += n;
}

static void log_u64(evlog *l, uint64_t v) { log_put(l, &v, sizeof(v)); }

/* ------------------------------------------------------------ the texts */

static const char *const known_errors[] = {
    "ERR Protocol error: too big inline request",
    "ERR Protocol error: embedded NUL byte in inline request",
    "ERR Protocol error: unbalanced quotes in request",
    "ERR Protocol error: too big mbulk count string",
    "ERR Protocol error: invalid multibulk length",
    "ERR Protocol error: unauthenticated multibulk length",
    "ERR Protocol error: too big bulk count string",
    "ERR Protocol error: invalid bulk length",
    "ERR Protocol error: unauthenticated bulk length",
    "ERR Protocol error: invalid CRLF in request",
    NULL,
};
static const char expected_dollar[] = "ERR Protocol error: expected '$', got '";

static void check_error_text(const char *err, size_t elen) {
    CHECK(err != NULL, "RESP_ERROR without a text");
    CHECK(elen > 0, "RESP_ERROR with an empty text");
    CHECK(err[elen] == '\0', "error text not NUL-terminated at resp_parser_error_len");
    CHECK(elen >= 18 && memcmp(err, "ERR Protocol error", 18) == 0,
          "error text does not start with ERR Protocol error");
    size_t dl = sizeof(expected_dollar) - 1;
    if (elen == dl + 2 && memcmp(err, expected_dollar, dl) == 0) {
        CHECK(err[dl + 1] == '\'', "expected '$' text not closed by a quote");
        CHECK(err[dl] != '$' && err[dl] != '\r' && err[dl] != '\n', "expected '$' names '$' or a raw CR/LF");
        return;
    }
    CHECK(strlen(err) == elen, "error_len differs from strlen outside the expected-'$' text");
    for (int i = 0; known_errors[i]; i++)
        if (strcmp(err, known_errors[i]) == 0) return;
    fail("error text is not one of resp.c's", err);
}

/* ------------------------------------------------------------- one run */

typedef struct run_cfg {
    const resp_limits *lim;
    const size_t *cuts; /* ascending chunk ends, the last == payload size */
    size_t ncuts;
    int window;         /* read into resp_parser_bulk_window when allowed */
    int check_encoding; /* whole run: check consumed bytes against argv */
} run_cfg;

/* Canonical multibulk encoding of argv into a malloc'ed buffer. */
static uint8_t *encode_argv(int argc, obj **argv, size_t *outlen) {
    size_t n = 16;
    for (int i = 0; i < argc; i++) n += argv[i]->len + 32;
    uint8_t *out = malloc(n);
    if (!out) abort();
    size_t w = (size_t)snprintf((char *)out, n, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        w += (size_t)snprintf((char *)out + w, n - w, "$%zu\r\n", argv[i]->len);
        memcpy(out + w, argv[i]->ptr, argv[i]->len);
        w += argv[i]->len;
        out[w++] = '\r';
        out[w++] = '\n';
    }
    *outlen = w;
    return out;
}

/* The bytes one RESP_OK consumed (region[0..rlen), which may start with
 * skipped requests) against the argv it returned. */
static void check_region(const uint8_t *region, size_t rlen, int argc, obj **argv, const resp_limits *lim) {
    size_t elen;
    uint8_t *enc = encode_argv(argc, argv, &elen);
    int multibulk = elen <= rlen && memcmp(region + rlen - elen, enc, elen) == 0;
    free(enc);
    if (multibulk) {
        if (!lim->authenticated) CHECK(argc <= RESP_UNAUTH_MAX_MULTIBULK, "unauthenticated multibulk over 10 args");
        for (int i = 0; i < argc; i++) {
            CHECK((long long)argv[i]->len <= lim->proto_max_bulk_len, "bulk longer than proto_max_bulk_len");
            if (!lim->authenticated) CHECK(argv[i]->len <= RESP_UNAUTH_MAX_BULK, "unauthenticated bulk over 16384");
        }
        return;
    }
    /* Not the canonical multibulk encoding, so it must be one inline line
     * (after any skipped requests): the region ends at its '\n', the line
     * is the bytes after the previous '\n', does not start with '*' and
     * holds no NUL; arguments decode to no more bytes than the line. */
    CHECK(rlen > 0 && region[rlen - 1] == '\n', "command neither canonical multibulk nor a line ending in \\n");
    size_t start = rlen - 1;
    while (start > 0 && region[start - 1] != '\n') start--;
    size_t linelen = rlen - 1 - start;
    CHECK(linelen > 0 && region[start] != '*', "inline command line empty or starting with '*'");
    CHECK(memchr(region + start, '\0', linelen) == NULL, "inline command accepted with a NUL byte");
    size_t total = 0;
    for (int i = 0; i < argc; i++) total += argv[i]->len;
    CHECK(total + (size_t)argc - 1 <= linelen, "inline arguments longer than their line");
}

static void check_reusable(resp_parser *p) {
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    size_t consumed;
    int argc;
    obj **argv;
    const char *err;
    resp_parser_reset(p);
    int r = resp_parse(p, ping, sizeof(ping) - 1, NULL, &consumed, &argc, &argv, &err);
    CHECK(r == RESP_OK && consumed == sizeof(ping) - 1 && argc == 1 && argv[0]->len == 4 &&
              memcmp(argv[0]->ptr, "PING", 4) == 0,
          "parser not reusable after reset: PING did not parse");
    obj_decr_ref(argv[0]);
    zfree(argv);
    r = resp_parse(p, "PING\n", 5, NULL, &consumed, &argc, &argv, &err);
    CHECK(r == RESP_OK && consumed == 5 && argc == 1, "parser not reusable after reset: inline PING");
    obj_decr_ref(argv[0]);
    zfree(argv);
    CHECK(resp_parser_pending_bulk(p) == 0, "pending_bulk non-zero between commands");
}

/* Feeds data[0..n) in the chunks cfg gives, as networking.c does: the
 * caller keeps the unconsumed bytes, appends each read, parses until
 * RESP_INCOMPLETE, and stops at the first error (the connection closes). */
static void run(const uint8_t *data, size_t n, const run_cfg *cfg, evlog *log) {
    resp_parser p;
    resp_parser_init(&p);
    uint8_t *pend = malloc(n + 1);
    if (!pend) abort();
    size_t plen = 0, start = 0;
    int stopped = 0;

    for (size_t ci = 0; ci < cfg->ncuts && !stopped; ci++) {
        size_t end = cfg->cuts[ci], pos = start;
        start = end;
        while (pos < end && !stopped) {
            size_t room = 0;
            char *win = (cfg->window && plen == 0) ? resp_parser_bulk_window(&p, &room) : NULL;
            size_t rd;
            if (win) {
                /* A read(2) straight into the argument: at most room bytes. */
                rd = end - pos < room ? end - pos : room;
                memcpy(win, data + pos, rd);
                resp_parser_bulk_advance(&p, rd);
            } else {
                rd = end - pos;
                memcpy(pend + plen, data + pos, rd);
                plen += rd;
            }
            pos += rd;

            for (;;) {
                size_t consumed = 12345;
                int argc = -1;
                obj **argv = (obj **)&consumed;
                const char *err = "unset";
                /* The bytes past plen are stale: poison them, so a read
                 * beyond what resp_parse was given is an ASan report
                 * even where it would land inside the allocation. */
                ASAN_POISON_MEMORY_REGION(pend + plen, n + 1 - plen);
                int r = resp_parse(&p, (const char *)pend, plen, cfg->lim, &consumed, &argc, &argv, &err);
                ASAN_UNPOISON_MEMORY_REGION(pend + plen, n + 1 - plen);
                CHECK(consumed <= plen, "consumed more than given");
                CHECK(r == RESP_OK || r == RESP_INCOMPLETE || r == RESP_ERROR, "unknown return code");
                if (r != RESP_OK) CHECK(argc == 0 && argv == NULL, "argc/argv set without RESP_OK");
                if (r == RESP_OK) {
                    CHECK(argc >= 1 && argv != NULL, "RESP_OK with argc < 1 or no argv");
                    CHECK(consumed >= 1, "RESP_OK that consumed nothing");
                    if (cfg->check_encoding) check_region(pend, consumed, argc, argv, cfg->lim);
                    uint8_t t = 'C';
                    log->last_entry = log->len;
                    log_put(log, &t, 1);
                    log_u64(log, (uint64_t)argc);
                    for (int i = 0; i < argc; i++) {
                        obj *o = argv[i];
                        CHECK(o != NULL && o->type == OBJ_STRING && o->ptr != NULL, "argv entry not a string");
                        CHECK(o->ptr[o->len] == '\0', "argument not NUL-terminated");
                        CHECK(o->refcount == 1, "argument refcount not 1");
                        log_u64(log, o->len);
                        log_put(log, o->ptr, o->len);
                        obj_decr_ref(o);
                    }
                    zfree(argv);
                } else if (r == RESP_ERROR) {
                    size_t elen = resp_parser_error_len(&p);
                    check_error_text(err, elen);
                    uint8_t t = 'E';
                    log->last_entry = log->len;
                    log_put(log, &t, 1);
                    log_u64(log, elen);
                    log_put(log, err, elen);
                    if (strstr(err, "too big")) log->too_big = 1;
                    if (strstr(err, "unauthenticated") || strstr(err, "invalid bulk length")) log->limit_error = 1;
                    CHECK(resp_parser_pending_bulk(&p) == 0, "pending_bulk non-zero after an error");
                    stopped = 1;
                } else {
                    /* A bulk the parser waits for passed the limits
                     * already: its length is checked when "$N" is read. */
                    size_t pb = resp_parser_pending_bulk(&p);
                    long long maxb = cfg->lim->proto_max_bulk_len;
                    if (!cfg->lim->authenticated && maxb > RESP_UNAUTH_MAX_BULK) maxb = RESP_UNAUTH_MAX_BULK;
                    CHECK(pb <= (size_t)maxb + 2, "pending_bulk beyond the bulk limit");
                }
                memmove(pend, pend + consumed, plen - consumed);
                plen -= consumed;
                if (r != RESP_OK) break;
            }
        }
    }
    if (!stopped) {
        uint8_t t = 'I';
        log->last_entry = log->len;
        log_put(log, &t, 1);
        log_u64(log, plen);
    }
    check_reusable(&p);
    resp_parser_reset(&p);
    free(pend);
}

/* ------------------------------------------------------------- driver */

#define RESP_FUZZ_MAX_EXPANDED (96 * 1024)

/* The run-length expansion of the header comment; malloc'ed. */
static uint8_t *expand(const uint8_t *in, size_t n, size_t *outlen) {
    size_t cap = 1024, len = 0;
    uint8_t *out = malloc(cap);
    if (!out) abort();
    for (size_t i = 0; i < n && len < RESP_FUZZ_MAX_EXPANDED; i++) {
        size_t reps = 1;
        uint8_t b = in[i];
        if (b == 0xff && i + 3 < n) {
            reps = ((size_t)in[i + 1] | (size_t)in[i + 2] << 8) + 1;
            b = in[i + 3];
            i += 3;
        }
        if (reps > RESP_FUZZ_MAX_EXPANDED - len) reps = RESP_FUZZ_MAX_EXPANDED - len;
        if (len + reps > cap) {
            while (len + reps > cap) cap *= 2;
            out = realloc(out, cap);
            if (!out) abort();
        }
        memset(out + len, b, reps);
        len += reps;
    }
    *outlen = len;
    return out;
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static void compare(const evlog *a, const evlog *b, const char *what) {
    if (a->len == b->len && memcmp(a->b, b->b, a->len) == 0) return;
    size_t i = 0;
    while (i < a->len && i < b->len && a->b[i] == b->b[i]) i++;
    char where[96];
    snprintf(where, sizeof(where), "logs of %zu and %zu bytes differ from byte %zu", a->len, b->len, i);
    fail(what, where);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const long long bulk_limits[4] = {16, 1000, 40000, 1 << 20};
    cur_input = data;
    cur_size = size;
    uint8_t flags = size > 0 ? data[0] : 0;
    size_t k = size > 1 ? (data[1] & 15) : 0;
    size_t hdr = 2 + 2 * k;
    if (hdr > size) hdr = size;
    const uint8_t *payload = data + hdr;
    size_t n = size - hdr;
    uint8_t *expanded = NULL;
    if (flags & 0x40) payload = expanded = expand(payload, n, &n);

    resp_limits lim = {bulk_limits[(flags >> 1) & 3], flags & 1};
    resp_limits loose = {bulk_limits[3], 1};
    int mode = (flags >> 3) & 3;

    /* The split run's chunk ends. */
    size_t cap = n + k + 2, ncuts = 0;
    size_t *cuts = malloc(cap * sizeof(*cuts));
    if (!cuts) abort();
    /* One byte per read costs O(n^2) on long lines (each call looks for
     * the line's end again, as Valkey's would), so big payloads get at
     * most a few hundred reads of PRNG-chosen sizes instead. */
    if (mode == 1 && n > 2048) mode = 2;
    if (mode == 1) {
        for (size_t i = 1; i <= n; i++) cuts[ncuts++] = i;
    } else if (mode == 2) {
        uint32_t s = 2463534242u;
        size_t step = n / 128 > 9 ? n / 128 : 9;
        for (size_t i = 2; i < hdr; i++) s = s * 31 + data[i];
        for (size_t at = 0; at < n;) {
            s ^= s << 13, s ^= s >> 17, s ^= s << 5;
            at += 1 + s % step;
            cuts[ncuts++] = at < n ? at : n;
        }
    } else {
        for (size_t i = 0; i < k && 3 + 2 * i < size; i++) {
            size_t off = (size_t)data[2 + 2 * i] | (size_t)data[3 + 2 * i] << 8;
            cuts[ncuts++] = off % (n + 1);
        }
        if (mode == 3)
            for (size_t at = 7; at < n && ncuts + 1 < cap && ncuts < 1024; at += 7) cuts[ncuts++] = at;
    }
    cuts[ncuts++] = n;
    qsort(cuts, ncuts, sizeof(*cuts), cmp_size);

    size_t whole_cut = n;
    run_cfg whole_cfg = {&lim, &whole_cut, 1, 0, 1};
    run_cfg split_cfg = {&lim, cuts, ncuts, (flags >> 5) & 1, 0};
    run_cfg loose_cfg = {&loose, &whole_cut, 1, 0, 1};
    evlog whole = {0}, split = {0}, wide = {0};

    run(payload, n, &whole_cfg, &whole);
    run(payload, n, &split_cfg, &split);
    if (!whole.too_big && !split.too_big) compare(&whole, &split, "whole and split parses differ");

    /* Limits only refuse: under the loosest limits the same bytes give
     * the same commands, up to where the tighter run's limit error fired. */
    if (lim.proto_max_bulk_len != loose.proto_max_bulk_len || !lim.authenticated) {
        run(payload, n, &loose_cfg, &wide);
        if (!wide.too_big && !whole.too_big) {
            if (whole.limit_error) {
                CHECK(wide.len >= whole.last_entry && memcmp(wide.b, whole.b, whole.last_entry) == 0,
                      "tighter limits changed commands before their error");
            } else {
                compare(&whole, &wide, "tighter limits changed the parse without a limit error");
            }
        }
    }
    free(whole.b);
    free(split.b);
    free(wide.b);
    free(cuts);
    free(expanded);
    return 0;
}
