/* threads_test.h — what the queue and io_threads tests share.
 *
 * Included by tests/unit/test_queue_*.c and test_io_threads.c after
 * cmocka.h. Gives each test
 *   - a seed, printed, that drives every random choice the test makes
 *     (batch sizes, pauses): SOLOIST_TEST_SEED=N replays the choices,
 *     though not the threads' interleaving, which the scheduler picks;
 *   - a size: TEST_ITEMS(n) is n at -O2 and less under a sanitizer, where
 *     each memory access costs many times more, so every test stays well
 *     under two seconds in every build;
 *   - a deadline: a protocol bug in these tests shows up as a thread
 *     waiting forever, so every wait checks test_stuck() and gives up,
 *     failing the test, rather than hanging the suite (20 s, or
 *     SOLOIST_TEST_DEADLINE_MS);
 *   - item words: producer p's k-th item is ITEM(p, k), never 0, so a
 *     consumer can check it got each one once and in each producer's
 *     order.
 */
#ifndef SOLOIST_THREADS_TEST_H
#define SOLOIST_THREADS_TEST_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define TEST_SANITIZED 1
#endif
#endif
#ifdef TEST_SANITIZED
#define TEST_ITEMS(n) ((n) / 4)
#else
#define TEST_ITEMS(n) (n)
#endif

/* How long any wait may take before the test calls itself stuck. Far
 * above what a passing test needs on a loaded machine.
 * SOLOIST_TEST_DEADLINE_MS changes it: `make check-exercises` runs many
 * wrong solutions that are stuck by design and gives each less time. */
#define TEST_DEADLINE_MS 20000

/* Producer p's k-th item (k from 0): the producer in the high half, k + 1
 * in the low half, so no item is 0. */
#define ITEM(p, k) ((((uintptr_t)(p) + 1) << 32) | ((uintptr_t)(k) + 1))
#define ITEM_PRODUCER(w) ((size_t)((w) >> 32) - 1)
#define ITEM_SEQ(w) ((size_t)((w)&0xffffffffu) - 1)

static inline long long test_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long test_deadline;
static atomic_bool test_gave_up;

/* Starts the clock for one test; call at its top. */
static inline void test_start(void) {
    const char *env = getenv("SOLOIST_TEST_DEADLINE_MS");
    long long ms = env ? atoll(env) : 0;
    test_deadline = test_now_ms() + (ms > 0 ? ms : TEST_DEADLINE_MS);
    atomic_store(&test_gave_up, false);
}

/* True once the deadline passed (then for every thread that asks). */
static inline bool test_stuck(void) {
    if (atomic_load_explicit(&test_gave_up, memory_order_relaxed)) return true;
    if (test_now_ms() < test_deadline) return false;
    atomic_store(&test_gave_up, true);
    return true;
}

/* The run's seed: SOLOIST_TEST_SEED if set, else from the clock. Printed
 * once per test so a failure can be replayed. */
static inline uint64_t test_seed(const char *test) {
    const char *env = getenv("SOLOIST_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    printf("%s: seed %llu (SOLOIST_TEST_SEED=%llu replays it)\n", test, (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

/* splitmix64: a few instructions, good enough to pick sizes and pauses. */
static inline uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A number in [lo, hi]. */
static inline size_t rng_range(uint64_t *s, size_t lo, size_t hi) { return lo + (size_t)(rng_next(s) % (hi - lo + 1)); }

/* Now and then (one call in `one_in`), gives the CPU away, so the other
 * side runs ahead and the queue goes full or empty. */
static inline void maybe_pause(uint64_t *s, unsigned one_in) {
    if (rng_next(s) % one_in == 0) sched_yield();
}

static inline void start_thread(pthread_t *t, void *(*fn)(void *), void *arg) {
    if (pthread_create(t, NULL, fn, arg) != 0) {
        perror("pthread_create");
        abort();
    }
}

#endif
