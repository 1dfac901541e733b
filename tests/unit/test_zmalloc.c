/* test_zmalloc.c — allocation and the used-memory count (step 0,
 * src/zmalloc.c). The count must be exact for every thread count the
 * server and the load generator can reach: more threads than slots at
 * once, threads freeing what others allocated, and threads that come and
 * go. Suite 25 runs this binary under ThreadSanitizer as well.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "zmalloc.h"

_Static_assert(ZMALLOC_THREAD_SLOTS >= CONFIG_IO_THREADS_MAX + 1, "the server's threads each own a slot");
_Static_assert(ZMALLOC_THREAD_SLOTS >= 256 + 1, "the load generator's workers and main thread each own a slot");

#define BLOCKS 200 /* per thread */

/* Under a sanitizer every allocation costs tens of times more, so the
 * racing test churns less there: ThreadSanitizer reports an
 * unsynchronised update the first time two threads make one (a tenth of
 * the run), AddressSanitizer looks for bad accesses, not lost updates (a
 * fiftieth), and the plain build (suite 10) keeps the full run that makes
 * a lost update show in the count. */
#if defined(__SANITIZE_THREAD__)
#define RACE_CHURN 10000
#elif defined(__SANITIZE_ADDRESS__)
#define RACE_CHURN 2000
#else
#define RACE_CHURN 100000
#endif

typedef struct worker {
    pthread_t tid;
    pthread_barrier_t *all_started, *all_done;
    unsigned seed;
    int churn;
    void *kept[BLOCKS]; /* left allocated, for the main thread to free */
    void **foreign;     /* freed by this thread, allocated by another */
    int nforeign;
} worker;

static unsigned next_rand(unsigned *s) { return *s = *s * 1103515245u + 12345u; }

static void *work(void *arg) {
    worker *w = arg;
    /* Every thread takes its slot (or finds none) before any exits, so
     * the run really has more threads than slots at once. */
    if (w->all_started) pthread_barrier_wait(w->all_started);
    for (int i = 0; i < BLOCKS; i++) {
        size_t n = 1 + next_rand(&w->seed) % 700;
        void *p = (i & 3) == 0 ? zcalloc(n) : zmalloc(n);
        if (i & 1) p = zrealloc(p, n * 2 + 1);
        if (i % 5 == 0) {
            zfree(p);
            w->kept[i] = NULL;
        } else {
            w->kept[i] = p;
        }
        char *s = zstrdup("counted and freed");
        zfree(s);
    }
    /* Allocate-and-free pairs add nothing to the total, so an update lost
     * while threads race leaves it off by a block's size. */
    for (int i = 0; i < w->churn; i++) zfree(zmalloc(16 + (size_t)(i & 255)));
    for (int i = 0; i < w->nforeign; i++) zfree(w->foreign[i]);
    if (w->all_done) pthread_barrier_wait(w->all_done);
    return NULL;
}

static long long live_bytes(worker *ws, int n) {
    long long sum = 0;
    for (int t = 0; t < n; t++)
        for (int i = 0; i < BLOCKS; i++)
            if (ws[t].kept[i]) sum += (long long)malloc_usable_size(ws[t].kept[i]);
    return sum;
}

static void free_kept(worker *ws, int n) {
    for (int t = 0; t < n; t++)
        for (int i = 0; i < BLOCKS; i++) zfree(ws[t].kept[i]);
}

/* nthreads alive at once (together) or one after another (!together),
 * each adding churn allocate-and-free pairs to its work. */
static void run_threads(int nthreads, int together, int churn) {
    long long base = (long long)zmalloc_used_memory();
    worker *ws = calloc((size_t)nthreads, sizeof *ws);
    assert_non_null(ws);
    /* Blocks the main thread allocates and the workers free: a slot goes
     * negative, and the sum must not care. */
    long long foreign_bytes = 0;
    for (int t = 0; t < nthreads; t++) {
        ws[t].seed = (unsigned)t * 2654435761u + 1;
        ws[t].churn = churn;
        ws[t].nforeign = 3;
        ws[t].foreign = calloc(3, sizeof(void *));
        for (int i = 0; i < 3; i++) {
            ws[t].foreign[i] = zmalloc(64 + (size_t)t);
            foreign_bytes += (long long)malloc_usable_size(ws[t].foreign[i]);
        }
    }
    assert_int_equal((long long)zmalloc_used_memory(), base + foreign_bytes);

    pthread_barrier_t started, done;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (together) {
        pthread_barrier_init(&started, NULL, (unsigned)nthreads);
        pthread_barrier_init(&done, NULL, (unsigned)nthreads);
    }
    for (int t = 0; t < nthreads; t++) {
        ws[t].all_started = together ? &started : NULL;
        ws[t].all_done = together ? &done : NULL;
        assert_int_equal(pthread_create(&ws[t].tid, &attr, work, &ws[t]), 0);
        if (!together) assert_int_equal(pthread_join(ws[t].tid, NULL), 0);
    }
    if (together)
        for (int t = 0; t < nthreads; t++) assert_int_equal(pthread_join(ws[t].tid, NULL), 0);
    pthread_attr_destroy(&attr);
    if (together) {
        pthread_barrier_destroy(&started);
        pthread_barrier_destroy(&done);
    }

    /* Every thread has exited: what they left allocated, exactly. */
    assert_int_equal((long long)zmalloc_used_memory(), base + live_bytes(ws, nthreads));
    free_kept(ws, nthreads);
    assert_int_equal((long long)zmalloc_used_memory(), base);
    for (int t = 0; t < nthreads; t++) free(ws[t].foreign);
    free(ws);
}

static void test_more_threads_than_slots_at_once(void **state) {
    (void)state;
    run_threads(ZMALLOC_THREAD_SLOTS + 40, 1, 2000);
}

/* The most I/O threads CONFIG allows, racing long enough for a lost
 * update to show: 128 threads taking turns on two cores overlap for
 * hundreds of time slices. */
static void test_io_threads_at_the_config_maximum(void **state) {
    (void)state;
    run_threads(CONFIG_IO_THREADS_MAX, 1, RACE_CHURN);
}

/* Threads that come and go (a resized pool) give their slots back: three
 * times as many threads as slots, one after another, still count exactly. */
static void test_threads_that_come_and_go(void **state) {
    (void)state;
    run_threads(3 * ZMALLOC_THREAD_SLOTS, 0, 0);
}

static void test_single_thread_basics(void **state) {
    (void)state;
    size_t base = zmalloc_used_memory();
    char *p = zmalloc(0); /* never NULL, even for 0 bytes */
    assert_non_null(p);
    size_t one = malloc_usable_size(p);
    assert_int_equal(zmalloc_used_memory(), base + one);
    p = zrealloc(p, 5000);
    assert_int_equal(zmalloc_used_memory(), base + malloc_usable_size(p));
    char *s = zstrndup("abcdef", 3);
    assert_string_equal(s, "abc");
    unsigned char *z = zcalloc(32);
    for (int i = 0; i < 32; i++) assert_int_equal(z[i], 0);
    zfree(s);
    zfree(z);
    zfree(p);
    zfree(NULL);
    assert_int_equal(zmalloc_used_memory(), base);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_thread_basics),
        cmocka_unit_test(test_io_threads_at_the_config_maximum),
        cmocka_unit_test(test_more_threads_than_slots_at_once),
        cmocka_unit_test(test_threads_that_come_and_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
