/* test_schedule.c — open-loop arrival accuracy (soloist-bench).
 * The schedule's arithmetic is checked exactly (uniform) or
 * statistically with fixed seeds (poisson); the timer that turns it into
 * wake-ups is checked against the real clock with loose bounds, because
 * the test machine is shared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "hdr.h"
#include "schedule.h"

static void test_uniform_exact(void **state) {
    (void)state;
    sb_sched s;
    uint64_t start = 1000000000ULL;
    sb_sched_init(&s, SB_ARRIVAL_UNIFORM, 3000, start, 0, 1);
    /* 3000/s: gaps of 333333.33 ns that never drift. */
    for (int i = 0; i < 30000; i++) {
        double want = (double)start + i * (1e9 / 3000);
        assert_true(fabs((double)sb_sched_peek(&s) - want) <= 1.0);
        sb_sched_advance(&s);
    }
    assert_true(fabs((double)sb_sched_peek(&s) - (start + 10e9)) <= 1.0); /* 30000 arrivals in exactly 10 s */
    /* A phase shifts the start by that fraction of a gap. */
    sb_sched_init(&s, SB_ARRIVAL_UNIFORM, 1000, start, 0.5, 1);
    assert_int_equal(sb_sched_peek(&s), start + 500000);
}

static void test_poisson_statistics(void **state) {
    (void)state;
    sb_sched s;
    double rate = 10000;
    sb_sched_init(&s, SB_ARRIVAL_POISSON, rate, 0, 0, 42);
    int n = 200000;
    double sum = 0, sum2 = 0;
    uint64_t prev = 0;
    /* Counts in 1 ms windows: Poisson has variance == mean. */
    int windows = 0;
    double wsum = 0, wsum2 = 0;
    uint64_t wend = 1000000, wcount = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t = sb_sched_peek(&s);
        double g = (double)(t - prev);
        sum += g;
        sum2 += g * g;
        prev = t;
        while (t >= wend) {
            wsum += (double)wcount;
            wsum2 += (double)wcount * (double)wcount;
            windows++;
            wcount = 0;
            wend += 1000000;
        }
        wcount++;
        sb_sched_advance(&s);
    }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    assert_true(fabs(mean - 1e9 / rate) < 0.01 * 1e9 / rate); /* mean gap within 1% */
    assert_true(fabs(sd / mean - 1.0) < 0.02);                /* exponential: CV = 1 */
    double wm = wsum / windows, wv = wsum2 / windows - wm * wm;
    assert_true(fabs(wm - 10.0) < 0.2);
    assert_true(fabs(wv / wm - 1.0) < 0.1); /* index of dispersion 1 */
}

static void test_skip_until_counts_unsent(void **state) {
    (void)state;
    sb_sched s;
    sb_sched_init(&s, SB_ARRIVAL_UNIFORM, 1000, 0, 0, 1);
    assert_int_equal(sb_sched_skip_until(&s, 1000000000ULL, 1000000), 1000);
    assert_int_equal(sb_sched_peek(&s), 1000000000ULL);
    assert_int_equal(sb_sched_skip_until(&s, 2000000000ULL, 10), 10); /* capped */
}

/* The timer as the worker uses it: epoll on a timerfd armed at each
 * arrival. All arrivals must fire, and the typical wake-up must be on
 * time; only the median is bounded, since other work shares the cores. */
static void test_timer_follows_schedule(void **state) {
    (void)state;
    sb_timer t;
    assert_int_equal(sb_timer_open(&t), 0);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, t.fd, &ev);
    sb_sched s;
    uint64_t start = sb_now_ns() + 1000000;
    sb_sched_init(&s, SB_ARRIVAL_UNIFORM, 2000, start, 0, 1);
    sb_hdr late;
    sb_hdr_init(&late, 1ULL << 40);
    int fired = 0;
    while (fired < 500) { /* 0.25 s at 2000/s */
        uint64_t due = sb_sched_peek(&s);
        uint64_t now = sb_now_ns();
        if (due > now) {
            sb_timer_arm(&t, due);
            struct epoll_event got;
            if (epoll_wait(ep, &got, 1, 1000) == 1) sb_timer_ack(&t);
            now = sb_now_ns();
        }
        if (now < due) continue; /* spurious: wait again */
        sb_hdr_record(&late, now - due);
        fired++;
        sb_sched_advance(&s);
    }
    uint64_t elapsed = sb_now_ns() - start;
    assert_true(elapsed >= 249500000ULL);              /* never early */
    assert_true(elapsed < 1000000000ULL);             /* and not lost */
    assert_true(sb_hdr_percentile(&late, 50) < 2000000ULL); /* median < 2 ms */
    sb_hdr_free(&late);
    sb_timer_close(&t);
    close(ep);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_exact),
        cmocka_unit_test(test_poisson_statistics),
        cmocka_unit_test(test_skip_until_counts_unsent),
        cmocka_unit_test(test_timer_follows_schedule),
    };
    return cmocka_run_group_tests_name("soloist-bench schedule", tests, NULL, NULL);
}
