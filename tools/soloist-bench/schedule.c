/* schedule.c — open-loop arrival schedule and timer (soloist-bench).
 * See schedule.h. Anchor: wrk2's constant-throughput pacing; cachecannon's
 * coordinated-omission design note. */
#include "schedule.h"

#include <math.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

static double exp_gap_ns(sb_sched *s) {
    /* Inverse CDF of the exponential law; 1-u is in (0,1], so log is finite. */
    return -log(1.0 - sb_rng_unit(&s->rng)) / s->rate * 1e9;
}

void sb_sched_init(sb_sched *s, sb_arrival a, double rate, uint64_t start_ns, double phase, uint64_t seed) {
    memset(s, 0, sizeof(*s));
    s->arrival = a;
    s->rate = rate > 0 ? rate : 1.0;
    sb_rng_seed(&s->rng, seed);
    if (a == SB_ARRIVAL_UNIFORM) {
        s->origin_ns = (double)start_ns + phase * 1e9 / s->rate;
        s->t_ns = s->origin_ns;
    } else {
        s->t_ns = (double)start_ns + exp_gap_ns(s);
    }
}

uint64_t sb_sched_peek(const sb_sched *s) { return (uint64_t)s->t_ns; }

void sb_sched_advance(sb_sched *s) {
    s->index++;
    if (s->arrival == SB_ARRIVAL_UNIFORM)
        /* From the index, not by adding gaps: no rounding drift over a run. */
        s->t_ns = s->origin_ns + (double)s->index * 1e9 / s->rate;
    else
        s->t_ns += exp_gap_ns(s);
}

uint64_t sb_sched_skip_until(sb_sched *s, uint64_t end_ns, uint64_t cap) {
    uint64_t n = 0;
    while (sb_sched_peek(s) < end_ns && n < cap) {
        sb_sched_advance(s);
        n++;
    }
    return n;
}

int sb_timer_open(sb_timer *t) {
    t->armed_ns = 0;
    t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    return t->fd < 0 ? -1 : 0;
}

void sb_timer_arm(sb_timer *t, uint64_t abs_ns) {
    if (abs_ns == t->armed_ns) return; /* already set: save the syscall */
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (abs_ns == 0) abs_ns = 1; /* 0 would disarm; the past fires at once */
    its.it_value.tv_sec = (time_t)(abs_ns / 1000000000ULL);
    its.it_value.tv_nsec = (long)(abs_ns % 1000000000ULL);
    timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL);
    t->armed_ns = abs_ns;
}

void sb_timer_ack(sb_timer *t) {
    uint64_t expirations;
    if (read(t->fd, &expirations, sizeof(expirations)) < 0) {
        /* EAGAIN: a spurious wake-up; nothing to consume. */
    }
    t->armed_ns = 0; /* an expired absolute timer stays disarmed */
}

void sb_timer_close(sb_timer *t) {
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
}
