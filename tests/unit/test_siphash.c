/* test_siphash.c — the table's hash key (step 6, src/siphash.c and the
 * random source in src/util.c): every start of the server must key
 * SipHash differently, from a source no client can reproduce. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "siphash.h"
#include "util.h"

/* One "start": a fresh process (as a restarted server is) makes its key
 * and hands it back through a pipe. */
static void key_of_a_new_process(uint8_t key[16]) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint8_t k[16];
        siphash_random_key(k);
        _exit(write(fds[1], k, sizeof k) == (ssize_t)sizeof k ? 0 : 1);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], key, 16), 16);
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_two_starts_get_different_keys(void **state) {
    (void)state;
    uint8_t a[16], b[16], zero[16] = {0};
    key_of_a_new_process(a);
    key_of_a_new_process(b);
    /* 2^-128 odds of a false failure; a clock or pid seed made in the same
     * second would differ only in a few bits, a fixed one not at all. */
    assert_memory_not_equal(a, b, 16);
    assert_memory_not_equal(a, zero, 16);
    /* And the keys matter: the same input hashes differently under each. */
    assert_true(siphash13("soloist", 7, a) != siphash13("soloist", 7, b));
}

/* A key is no function of what a client can learn or guess (the time,
 * the pid): two keys made by one process within the same microsecond
 * still differ, where srand(time ^ pid) would have repeated itself. */
static void test_key_is_not_a_function_of_time_and_pid(void **state) {
    (void)state;
    uint8_t a[16], b[16];
    siphash_random_key(a);
    siphash_random_key(b);
    assert_memory_not_equal(a, b, 16);
}

/* Neither source leaves bytes untouched or repeats itself: two 64-byte
 * draws, each from a buffer preset to a pattern, differ from the pattern
 * and from each other. */
static void check_source(int (*source)(void *, size_t)) {
    unsigned char x[64], y[64], pattern[64];
    memset(pattern, 0xa5, sizeof pattern);
    memcpy(x, pattern, sizeof x);
    memcpy(y, pattern, sizeof y);
    assert_int_equal(source(x, sizeof x), 0);
    assert_int_equal(source(y, sizeof y), 0);
    assert_memory_not_equal(x, pattern, sizeof x);
    assert_memory_not_equal(y, pattern, sizeof y);
    assert_memory_not_equal(x, y, sizeof x);
    /* a long read is filled to its end, not cut at the first chunk */
    static unsigned char big[1 << 16];
    memset(big, 0, sizeof big);
    assert_int_equal(source(big, sizeof big), 0);
    int zeros = 0;
    for (size_t i = sizeof big - 64; i < sizeof big; i++) zeros += big[i] == 0;
    assert_true(zeros < 16);
}

static void test_getrandom_source(void **state) {
    (void)state;
    check_source(util_getrandom);
}

static void test_urandom_fallback_source(void **state) {
    (void)state;
    check_source(util_urandom);
}

static void test_random_bytes_fills_any_length(void **state) {
    (void)state;
    unsigned char one = 0, none[1] = {0x5a};
    util_random_bytes(none, 0); /* nothing asked, nothing written */
    assert_int_equal(none[0], 0x5a);
    int changed = 0;
    for (int i = 0; i < 8; i++) { /* one byte stays 0 by chance 1 in 256 */
        util_random_bytes(&one, 1);
        changed |= one != 0;
    }
    assert_true(changed);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_starts_get_different_keys),
        cmocka_unit_test(test_key_is_not_a_function_of_time_and_pid),
        cmocka_unit_test(test_getrandom_source),
        cmocka_unit_test(test_urandom_fallback_source),
        cmocka_unit_test(test_random_bytes_fills_any_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
