/* schedule.h — the open-loop send schedule and the clock it runs on.
 *
 * soloist-bench. Owns: one stream of intended send times and
 * one worker's wake-up timer. Each worker owns its own; nothing shared.
 *
 * Why a schedule and not a sleep: an open-loop generator must decide
 * *when* each request is due independently of the replies (wrk2 -R;
 * cachecannon's "the token bucket is the schedule"). The worker sends
 * request i at or after its intended time t_i and measures latency from
 * t_i, not from the moment it managed to write: if the server stalls and
 * the pipeline fills, the due requests wait, still due, and the wait shows
 * up in their latency — coordinated omission is corrected by
 * construction, with no back-filling. How late the send was (the slip)
 * is recorded too, so a reader can tell a slow generator from a slow
 * server. The idea is wrk2's (its README, Gil Tene 2014) and
 * cachecannon's (its coordinated-omission design note).
 */
#ifndef SOLOIST_BENCH_SCHEDULE_H
#define SOLOIST_BENCH_SCHEDULE_H
#include <stdint.h>
#include <time.h>

#include "keyspace.h"

typedef enum { SB_ARRIVAL_UNIFORM = 0, SB_ARRIVAL_POISSON = 1 } sb_arrival;

static inline uint64_t sb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

typedef struct sb_sched {
    sb_arrival arrival;
    double rate;      /* arrivals per second; > 0 */
    double origin_ns; /* uniform: time of arrival 0 */
    double t_ns;      /* intended time of the next arrival */
    uint64_t index;   /* arrivals taken so far */
    sb_rng rng;       /* poisson gaps */
} sb_sched;

/* start_ns: when the schedule begins. phase in [0,1): a uniform schedule's
 * first arrival is at start + phase/rate, so several workers sharing one
 * class rate interleave instead of sending in lock-step. */
void sb_sched_init(sb_sched *s, sb_arrival a, double rate, uint64_t start_ns, double phase, uint64_t seed);
/* Intended time of the next arrival (not consumed). */
uint64_t sb_sched_peek(const sb_sched *s);
/* Consume it. */
void sb_sched_advance(sb_sched *s);
/* Arrivals intended before `end_ns` not yet taken, consuming them; gives
 * up (returning at least `cap`) after `cap`. For the "unsent" count. */
uint64_t sb_sched_skip_until(sb_sched *s, uint64_t end_ns, uint64_t cap);

/* A timerfd the worker's epoll watches: armed at an absolute
 * CLOCK_MONOTONIC time, so a deadline has nanosecond resolution instead
 * of epoll_wait's milliseconds. */
typedef struct sb_timer {
    int fd;
    uint64_t armed_ns; /* 0 when disarmed */
} sb_timer;

int sb_timer_open(sb_timer *t); /* -1 on failure, errno set */
void sb_timer_arm(sb_timer *t, uint64_t abs_ns);
void sb_timer_ack(sb_timer *t); /* read the expiry count after it fired */
void sb_timer_close(sb_timer *t);

#endif
