/* util.c — clocks, strings and random bytes every layer uses.
 *
 * Step 0 (plumbing layer). Owns nothing: every function is pure or reads a
 * clock or the kernel's random source, so any thread may call any of them.
 * Valkey: the functions util.h names.
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* ---- clocks ------------------------------------------------------------ */

long long util_ustime(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000000LL + tv.tv_usec;
}

long long util_mstime(void) { return util_ustime() / 1000; }

uint64_t util_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t util_monotonic_us(void) { return util_monotonic_ns() / 1000; }

/* ---- glob matching ----------------------------------------------------- */

static int fold(int ch, int nocase) { return nocase ? tolower(ch) : ch; }

/* Matches one non-star token of the pattern at p[0..] against the byte ch.
 * Sets *used to how many pattern bytes the token took. Returns 1 on match.
 * The token rules are Valkey's (stringmatchlen): '?' any byte, '\x' the
 * byte x, '[...]' a class with '^' negation, 'a-z' ranges (either order)
 * and '\]' escapes; an unterminated class ends at the pattern's end. */
static int match_token(const char *p, size_t plen, unsigned char ch, int nocase, size_t *used) {
    if (p[0] == '?') {
        *used = 1;
        return 1;
    }
    if (p[0] == '\\' && plen >= 2) {
        *used = 2;
        return fold((unsigned char)p[1], nocase) == fold(ch, nocase);
    }
    if (p[0] != '[') {
        *used = 1;
        return fold((unsigned char)p[0], nocase) == fold(ch, nocase);
    }
    /* A character class. */
    size_t i = 1;
    int negate = 0, hit = 0;
    if (i < plen && p[i] == '^') {
        negate = 1;
        i++;
    }
    for (;;) {
        if (i >= plen) {
            /* Unterminated: the class is what was seen so far. Valkey
             * behaves the same way (it steps back and stops). */
            break;
        }
        if (p[i] == '\\' && plen - i >= 2) {
            /* Escaped byte inside a class: compared exactly, as Valkey
             * does (no case folding here). */
            if ((unsigned char)p[i + 1] == ch) hit = 1;
            i += 2;
        } else if (p[i] == ']') {
            i++;
            break;
        } else if (plen - i >= 3 && p[i + 1] == '-') {
            int lo = (unsigned char)p[i], hi = (unsigned char)p[i + 2], c = ch;
            if (lo > hi) {
                int t = lo;
                lo = hi;
                hi = t;
            }
            if (nocase) {
                lo = tolower(lo);
                hi = tolower(hi);
                c = tolower(c);
            }
            if (c >= lo && c <= hi) hit = 1;
            i += 3;
        } else {
            if (fold((unsigned char)p[i], nocase) == fold(ch, nocase)) hit = 1;
            i++;
        }
    }
    *used = i;
    return negate ? !hit : hit;
}

/*@ glob-match */
/* Greedy matching with one backtrack point: when a token fails, go back to
 * the last '*' and let it swallow one more byte. Every non-star token
 * consumes exactly one byte, so only the most recent star ever needs to
 * move, and the match is O(plen * slen) with no recursion. Valkey recurses
 * once per star instead (and gives up past 1000 nested stars, which this
 * version never needs to). */
int util_string_match_len(const char *pattern, size_t plen, const char *s, size_t slen, int nocase) {
    size_t pi = 0, si = 0;
    size_t star_p = SIZE_MAX, star_s = 0; /* after the last '*', and where it resumes */

    /* Valkey's loop runs only while both sides have bytes left, so an
     * empty string matches only an empty pattern: KEYS "**" does not list
     * the key "" (KEYS "*" does, through its match-everything shortcut). */
    if (slen == 0) return plen == 0;
    while (si < slen) {
        if (pi < plen && pattern[pi] == '*') {
            while (pi < plen && pattern[pi] == '*') pi++;
            if (pi == plen) return 1; /* trailing star swallows the rest */
            star_p = pi;
            star_s = si;
            continue;
        }
        size_t used = 0;
        if (pi < plen && match_token(pattern + pi, plen - pi, (unsigned char)s[si], nocase, &used)) {
            pi += used;
            si++;
            continue;
        }
        if (star_p == SIZE_MAX) return 0;
        pi = star_p;
        si = ++star_s;
    }
    /* The string is consumed: only stars may remain. An unterminated
     * class that swallowed the end of the pattern is already consumed. */
    while (pi < plen && pattern[pi] == '*') pi++;
    return pi == plen;
}
/*@ end */

int util_string_match(const char *pattern, const char *s, int nocase) {
    return util_string_match_len(pattern, strlen(pattern), s, strlen(s), nocase);
}

/* ---- number formatting ------------------------------------------------- */

/*@ ld-to-string */
size_t util_ld_to_string(char *buf, size_t len, long double v) {
    int n;
    if (isinf(v)) {
        /* Valkey's ld2string refuses buffers under 5 bytes here. */
        if (len < 5) return 0;
        n = snprintf(buf, len, "%s", v > 0 ? "inf" : "-inf");
        return (size_t)n;
    }
    /* %.17Lf: 17 digits after the point are enough for the 80-bit long
     * double to round-trip most short decimals ("10.5" + "0.1" prints
     * 10.6), and %f never switches to exponent notation, so "5.0e3" + 200
     * becomes "5200". Trailing zeros and a trailing point are trimmed. */
    n = snprintf(buf, len, "%.17Lf", v);
    if (n < 0 || (size_t)n + 1 > len) return 0;
    size_t l = (size_t)n;
    if (memchr(buf, '.', l)) {
        while (l > 0 && buf[l - 1] == '0') l--;
        if (l > 0 && buf[l - 1] == '.') l--;
    }
    /* "-0.00000000000000000" trims to "-0"; print it as "0". */
    if (l == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        l = 1;
    }
    buf[l] = '\0';
    return l;
}
/*@ end */

/*@ d-to-string */
/* Valkey prints doubles (RESP3 ',' and every sorted-set score) in the
 * shortest form that reads back as the same double, laid out as %.17g
 * lays it out: 1.1 prints "1.1" where %.17g, and Redis 7.0, print
 * "1.1000000000000001" (tests/integration/deliberate_differences.txt).
 * The notation is %.17g's choice: an exponent only when the decimal
 * exponent is below -4 or at least 17.
 *
 * Most scores are integers or short decimals, and those never reach
 * snprintf. An integer below 1e17 prints its digits. A short decimal is
 * found by arithmetic (d_short_decimal): any decimal of at most 15
 * significant digits reads back as the double nearest it, and no two
 * such decimals read back as the same double, so the first d for which
 * m = round(v * 10^d) has at most 15 digits and m / 10^d == v names v's
 * shortest form: m's digits with d of them after the point. Both
 * operations are exact or correctly rounded while m < 2^53 and 10^d is a
 * power of ten a double holds (d <= 22), and the division rounds the
 * decimal to the nearest double exactly as strtod does.
 *
 * The rest (what needs 16 or 17 digits, as 0.1 + 0.2 or a third does,
 * and what %.17g prints with an exponent) takes snprintf, one try in the
 * common case: if v's shortest form has k <= 15 digits, rounding v to 15
 * digits gives that form padded with zeros, so one %.14e with its
 * trailing zeros dropped is the answer whenever it reads back; only when
 * it does not are 16 and then 17 digits tried (and only they, where the
 * arithmetic has ruled 15 out). Subnormals, with fewer
 * bits than 15 digits need, are searched from one digit. */
static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The decimal digits of u (below 1e17) into out, most significant first;
 * returns how many. */
static size_t u64_digits(uint64_t u, char *out) {
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

/* v's shortest form when it is a decimal of at most 15 significant digits
 * with an exponent of at least -4 (so %.17g would not use an exponent):
 * its digits and decimal exponent, as d_mantissa returns them; 0 when v
 * is not such a decimal. v is finite and not an integer. */
static size_t d_short_decimal(double v, char *digits, int *exp10) {
    double a = fabs(v);
    if (a < 1e-4 || a >= 1e15) return 0;
    for (int d = 1; d <= 22; d++) {
        double p = a * pow10_exact[d];
        if (p >= 1e15) return 0;                /* 16 digits or more */
        double m = (double)(uint64_t)(p + 0.5); /* p >= 0.5 only once a digit shows */
        if (m != 0 && m / pow10_exact[d] == a) {
            size_t n = u64_digits((uint64_t)m, digits);
            *exp10 = (int)n - d - 1;
            return n;
        }
    }
    return 0;
}

static size_t d_mantissa(double v, char *digits, int *exp10) {
    size_t n = d_short_decimal(v, digits, exp10);
    if (n) return n;
    char tmp[40];
    /* A subnormal has fewer bits than 15 digits need: search from 1. In
     * d_short_decimal's range, v needs 16 digits at least. */
    double a = fabs(v);
    int sig = a < DBL_MIN ? 1 : a >= 1e-4 && a < 1e15 ? 16 : 15;
    for (; sig < 17; sig++) {
        snprintf(tmp, sizeof(tmp), "%.*e", sig - 1, v);
        if (strtod(tmp, NULL) == v) break;
    }
    if (sig == 17) snprintf(tmp, sizeof(tmp), "%.16e", v);
    const char *p = tmp + (tmp[0] == '-');
    for (; *p != 'e'; p++)
        if (*p != '.') digits[n++] = *p;
    *exp10 = atoi(p + 1);
    while (n > 1 && digits[n - 1] == '0') n--; /* only the 15-digit try can end in zeros */
    return n;
}

size_t util_d_to_string(char *buf, size_t len, double v) {
    char out[48];
    size_t o = 0;
    if (isnan(v)) {
        memcpy(out, "nan", 3), o = 3;
    } else if (isinf(v)) {
        o = v > 0 ? 3 : 4;
        memcpy(out, v > 0 ? "inf" : "-inf", o);
    } else if (v > -1e17 && v < 1e17 && v == (double)(long long)v) { /* the range first: the cast */
        if (signbit(v)) out[o++] = '-';                              /* -0.0 prints "-0", as %.0f does */
        o += u64_digits((uint64_t)fabs(v), out + o);
    } else {
        char digits[20];
        int e;
        size_t k = d_mantissa(v, digits, &e);
        if (v < 0) out[o++] = '-';
        if (e < -4 || e >= 17) { /* d[.ddd]e±XX, as %e writes it */
            out[o++] = digits[0];
            if (k > 1) out[o++] = '.';
            for (size_t i = 1; i < k; i++) out[o++] = digits[i];
            o += (size_t)snprintf(out + o, sizeof(out) - o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
        } else if (e < 0) { /* 0.000ddd */
            out[o++] = '0', out[o++] = '.';
            for (int i = -1; i > e; i--) out[o++] = '0';
            for (size_t i = 0; i < k; i++) out[o++] = digits[i];
        } else { /* ddd[.ddd], zeros filling the integer part */
            for (size_t i = 0; i <= (size_t)e; i++) out[o++] = i < k ? digits[i] : '0';
            if (k > (size_t)e + 1) out[o++] = '.';
            for (size_t i = (size_t)e + 1; i < k; i++) out[o++] = digits[i];
        }
    }
    if (o >= len) return 0;
    memcpy(buf, out, o);
    buf[o] = '\0';
    return o;
}
/*@ end */

/*@ parse-memory */
/* Valkey's memtoull: digits, then an optional unit, case-insensitive:
 * b, k (1000), kb (1024), m, mb, g, gb. No sign, no spaces. Returns 1 and
 * sets *out on success, 0 on a malformed or overflowing value. */
int util_parse_memory(const char *s, long long *out) {
    const char *u = s;
    long long mul;
    unsigned long long v = 0;

    while (*u >= '0' && *u <= '9') u++;
    if (u == s) return 0; /* no digits (also rejects '-' and '+') */
    if (*u == '\0' || !strcasecmp(u, "b"))
        mul = 1;
    else if (!strcasecmp(u, "k"))
        mul = 1000;
    else if (!strcasecmp(u, "kb"))
        mul = 1024;
    else if (!strcasecmp(u, "m"))
        mul = 1000LL * 1000;
    else if (!strcasecmp(u, "mb"))
        mul = 1024LL * 1024;
    else if (!strcasecmp(u, "g"))
        mul = 1000LL * 1000 * 1000;
    else if (!strcasecmp(u, "gb"))
        mul = 1024LL * 1024 * 1024;
    else
        return 0;
    for (const char *p = s; p < u; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (v > (unsigned long long)LLONG_MAX / (unsigned long long)mul) return 0;
    *out = (long long)v * mul;
    return 1;
}
/*@ end */

/* ---- random bytes ------------------------------------------------------ */

int util_getrandom(void *buf, size_t len) {
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1; /* ENOSYS (no such call), EPERM (a filter) */
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int util_urandom(void *buf, size_t len) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int saved = n == 0 ? EIO : errno;
            close(fd);
            errno = saved;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    close(fd);
    return 0;
}

void util_random_bytes(void *buf, size_t len) {
    if (util_getrandom(buf, len) == 0) return;
    int getrandom_errno = errno;
    if (util_urandom(buf, len) == 0) return;
    fprintf(stderr, "soloist: no random source: getrandom: %s; /dev/urandom: %s\n", strerror(getrandom_errno),
            strerror(errno));
    exit(1);
}

/* Eight bytes per step through memcpy (no alignment assumption; compilers
 * turn it into one load) and the compiler's popcount builtin. Valkey's
 * serverPopcount unrolls a table lookup and adds an AVX2 path; soloist
 * keeps the plain loop. */
long long util_popcount(const void *p, size_t n) {
    const unsigned char *s = p;
    long long bits = 0;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        bits += __builtin_popcountll(w);
    }
    while (n--) bits += __builtin_popcount(*s++);
    return bits;
}
