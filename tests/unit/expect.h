/*
 * expect.h: assertions that say what they measured (test support, every step).
 *
 * cmocka's assert_int_equal prints "0x501bd0 != 0x6af6d0" and the line of
 * whatever helper made the comparison. A student grading an exercise needs
 * the quantity, its value in decimal, what the contract expects and which
 * test (and which step of it) was running. These macros print exactly that:
 *
 *     expect_eq(what, got, want)    what: got G, the contract says W
 *     expect_le(what, got, most)    what: got G, the contract allows at most M
 *     expect_ge(what, got, least)   what: got G, the contract needs at least L
 *     expect_true(what, cond)       what: the contract says so and it is not
 *
 * `what` is a printf format and its arguments, in parentheses, so it can name
 * the step: expect_eq(("threads after step %d", i), got, 2). A shared helper
 * that several tests call sets the caller's context with expect_context(),
 * which every failure prints before its own line, so a failure in the helper
 * names the test's step and not only the helper's file and line. The
 * context lasts until the next expect_context() or expect_setup(): a test
 * that sets one is registered with cmocka_unit_test_setup(test, expect_setup),
 * so a test that fails never leaves its context to the next one.
 *
 * Values are compared as signed 64-bit integers (every counter, size and
 * time in soloist's tests fits); a pointer is compared with expect_true.
 * Only the test's own thread calls these (cmocka's failure unwinds with
 * longjmp to the test runner, which another thread must not do).
 */
#ifndef SOLOIST_TEST_EXPECT_H
#define SOLOIST_TEST_EXPECT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

/* The caller's context: set by a test before it calls a shared helper. */
static char expect_ctx_buf[256];

static inline void expect_context(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static inline void expect_context(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(expect_ctx_buf, sizeof expect_ctx_buf, fmt, ap);
    va_end(ap);
}

/* A cmocka setup function: clears the context before the test runs. */
static inline int expect_setup(void **state) __attribute__((unused));
static inline int expect_setup(void **state) {
    (void)state;
    expect_ctx_buf[0] = '\0';
    return 0;
}

/* Formats `what`'s printf arguments into buf (a helper of the macros). */
static inline const char *expect_what(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), unused));
static inline const char *expect_what(char *buf, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return buf;
}

#define EXPECT_WHAT_(what) expect_what(expect_what_buf_, sizeof expect_what_buf_, EXPECT_UNPAREN_ what)
#define EXPECT_UNPAREN_(...) __VA_ARGS__

#define EXPECT_FAIL_(what, fmt, ...)                                                                                   \
    do {                                                                                                               \
        char expect_what_buf_[256];                                                                                    \
        if (expect_ctx_buf[0]) print_error("%s\n", expect_ctx_buf);                                                    \
        print_error("%s: " fmt "\n", EXPECT_WHAT_(what), __VA_ARGS__);                                                 \
        fail();                                                                                                        \
    } while (0)

#define expect_eq(what, got, want)                                                                                     \
    do {                                                                                                               \
        int64_t expect_g_ = (int64_t)(got), expect_w_ = (int64_t)(want);                                               \
        if (expect_g_ != expect_w_)                                                                                    \
            EXPECT_FAIL_(what, "got %lld, the contract says %lld", (long long)expect_g_, (long long)expect_w_);        \
    } while (0)

#define expect_le(what, got, most)                                                                                     \
    do {                                                                                                               \
        int64_t expect_g_ = (int64_t)(got), expect_w_ = (int64_t)(most);                                               \
        if (expect_g_ > expect_w_)                                                                                     \
            EXPECT_FAIL_(what, "got %lld, the contract allows at most %lld", (long long)expect_g_,                     \
                         (long long)expect_w_);                                                                        \
    } while (0)

#define expect_ge(what, got, least)                                                                                    \
    do {                                                                                                               \
        int64_t expect_g_ = (int64_t)(got), expect_w_ = (int64_t)(least);                                              \
        if (expect_g_ < expect_w_)                                                                                     \
            EXPECT_FAIL_(what, "got %lld, the contract needs at least %lld", (long long)expect_g_,                     \
                         (long long)expect_w_);                                                                        \
    } while (0)

#define expect_true(what, cond)                                                                                        \
    do {                                                                                                               \
        if (!(cond)) EXPECT_FAIL_(what, "%s does not hold", #cond);                                                    \
    } while (0)

#endif
