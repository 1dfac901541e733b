/* test_job.c — the one-word job encoding of job.h (step 1).
 *
 * The contract is job.h's picture: the type in the low JOB_TYPE_BITS
 * bits, the pointer's own bits everywhere else, each read back without
 * the other, and a bad argument stopped in job_encode. The pointers here
 * are real allocations and also made-up addresses that are never
 * dereferenced: an address with bit 3 set (the first bit a tag may not
 * touch) and one with the top bits set (the bits a shifted encoding
 * loses). The refusals are checked in a child process, which must die
 * of SIGABRT.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"

/* Addresses with 8-byte alignment and awkward bits, never dereferenced. */
static const uintptr_t ODD_ADDRESSES[] = {
    8,                  /* bit 3 alone */
    0x1008,             /* bit 3 with others */
    0x7ffff7a3c018,     /* a typical user-space heap address */
    0xfffffffffffffff8, /* every bit a pointer may have */
    0xe000000000000008, /* the top three bits and bit 3 */
    (uintptr_t)1 << 63, /* the top bit alone */
};
#define N_ODD (sizeof ODD_ADDRESSES / sizeof ODD_ADDRESSES[0])

static void test_job_round_trip_every_type(void **state) {
    (void)state;
    void *p = malloc(64);
    assert_non_null(p);
    for (unsigned t = 0; t <= JOB_TYPE_MASK; t++) {
        job_word w = job_encode(p, t);
        assert_int_equal(job_type(w), t);
        assert_ptr_equal(job_ptr(w), p);
    }
    free(p);
}

static void test_job_round_trip_any_address(void **state) {
    (void)state;
    for (size_t i = 0; i < N_ODD; i++)
        for (unsigned t = 0; t <= JOB_TYPE_MASK; t++) {
            job_word w = job_encode((void *)ODD_ADDRESSES[i], t);
            assert_int_equal(job_type(w), t);
            assert_int_equal((uintptr_t)job_ptr(w), ODD_ADDRESSES[i]);
        }
}

/* The type is the low bits and nothing else: a pointer bit just above
 * them (bit 3) must not leak into it. */
static void test_job_type_ignores_pointer_bits(void **state) {
    (void)state;
    for (size_t i = 0; i < N_ODD; i++) {
        assert_int_equal(job_type(job_encode((void *)ODD_ADDRESSES[i], 0)), 0);
        assert_int_equal(job_type(job_encode((void *)ODD_ADDRESSES[i], JOB_TYPE_MASK)), JOB_TYPE_MASK);
    }
}

/* The pointer comes back with the type cleared, whatever the type. */
static void test_job_ptr_clears_the_type(void **state) {
    (void)state;
    int *p = malloc(sizeof *p);
    assert_non_null(p);
    *p = 42;
    for (unsigned t = 1; t <= JOB_TYPE_MASK; t++) {
        int *back = job_ptr(job_encode(p, t));
        assert_ptr_equal(back, p);
        assert_int_equal(*back, 42);
    }
    free(p);
}

/* The word is the picture: the pointer's own bits above the type. */
static void test_job_layout_matches_the_picture(void **state) {
    (void)state;
    for (size_t i = 0; i < N_ODD; i++)
        for (unsigned t = 0; t <= JOB_TYPE_MASK; t++) {
            job_word w = job_encode((void *)ODD_ADDRESSES[i], t);
            assert_int_equal(w & ~JOB_TYPE_MASK, ODD_ADDRESSES[i]);
            assert_int_equal(w & JOB_TYPE_MASK, t);
        }
}

/* 0 is the queues' "no item": no job may encode to it. */
static void test_job_is_never_zero(void **state) {
    (void)state;
    for (size_t i = 0; i < N_ODD; i++) assert_true(job_encode((void *)ODD_ADDRESSES[i], 0) != 0);
}

/* Calls job_encode(ptr, type) in a child; true when the child died of
 * SIGABRT (an assert), false when job_encode returned. */
static bool encode_aborts(uintptr_t ptr, unsigned type) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 2); /* the assert's message is expected */
        volatile job_word w = job_encode((void *)ptr, type);
        (void)w;
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void test_job_encode_rejects_a_type_that_does_not_fit(void **state) {
    (void)state;
    assert_false(encode_aborts(0x1000, JOB_TYPE_MASK)); /* the largest that fits */
    assert_true(encode_aborts(0x1000, JOB_TYPE_MASK + 1));
    assert_true(encode_aborts(0x1000, 1u << 20));
}

static void test_job_encode_rejects_a_misaligned_pointer(void **state) {
    (void)state;
    assert_false(encode_aborts(0x1000, 0)); /* aligned: accepted */
    for (uintptr_t low = 1; low <= JOB_TYPE_MASK; low++) assert_true(encode_aborts(0x1000 + low, 0));
}

static void test_job_encode_rejects_null(void **state) {
    (void)state;
    assert_false(encode_aborts(0x1000, 1)); /* non-NULL: accepted */
    assert_true(encode_aborts(0, 1));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_round_trip_every_type),
        cmocka_unit_test(test_job_round_trip_any_address),
        cmocka_unit_test(test_job_type_ignores_pointer_bits),
        cmocka_unit_test(test_job_ptr_clears_the_type),
        cmocka_unit_test(test_job_layout_matches_the_picture),
        cmocka_unit_test(test_job_is_never_zero),
        cmocka_unit_test(test_job_encode_rejects_a_type_that_does_not_fit),
        cmocka_unit_test(test_job_encode_rejects_a_misaligned_pointer),
        cmocka_unit_test(test_job_encode_rejects_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
