/* ignition.h — when to wake the I/O threads, and how many to keep awake.
 *
 * Step 5 (policy layer: main only, above the threads it sizes). Owns: the
 * policy's state, the counters of the pool's moves (the one set INFO
 * iothreads shows) and the record of its last decision, and nothing else: it
 * reads numbers the caller samples (the main thread's CPU, commands
 * processed, the shared inbox's depth, the pool's size) and answers with how
 * many threads should be active. It moves no thread and reads no clock: the
 * caller does both, so the policy is a pure function of the samples, and a
 * test can replay a trace through it. No worker runs any of it.
 * Threads: main only (one ignition per pool, no locking).
 * Valkey: src/io_threads.c — IOThreadsBeforeSleep (the CPU sampling),
 * IOThreadsAfterSleep (ignition and scaling); src/server.c —
 * trackInstantaneousMetric and getInstantaneousMetric (the 16-sample
 * mean). ignition.c explains the policy.
 */
#ifndef SOLOIST_IGNITION_H
#define SOLOIST_IGNITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Call ignition_step at most this often (Valkey's IO_SAMPLE_RATE_MS): each
 * call while workers are active is one sample of the queue depth. */
#define IGNITION_SAMPLE_US 10000

/* The 16-sample means (Valkey's STATS_METRIC_SAMPLES). */
#define IGNITION_METRIC_SAMPLES 16

typedef enum {
    IGNITION_GUARDED = 0, /* RUSAGE, then a probation that undoes what did not pay (the default) */
    /* main's sys CPU > 30 %, or sys > 5 % and user > 50 %: the rule of
     * Valkey's unstable branch at the pinned commit (tools/pins.json),
     * from pull request #3324 until #3544 replaced it; on a system
     * without RUSAGE_THREAD that code ignites on 4 events a turn instead.
     * Valkey 8.0-9.0 sized the pool by events per turn
     * (adjustIOThreadsByEventLoad). */
    IGNITION_RUSAGE,
    /* main's event loop busy > 30 % of wall time: Valkey 9.1 GA's rule
     * (pull request #3544). "Busy" here is the phase clock's busy time
     * (server.c), not Valkey's counter (pull request #2931), which adds
     * up only the loop iterations that handled a file event or took
     * back I/O-thread results. */
    IGNITION_ACTIVE_TIME,
    IGNITION_RULE_COUNT
} ignition_rule;

/* What the caller samples before each step. Counters are cumulative and
 * never go backwards; times are microseconds of one monotonic clock. */
typedef struct ignition_sample {
    uint64_t now_us;         /* monotonic */
    uint64_t main_user_us;   /* cumulative, getrusage(RUSAGE_THREAD) */
    uint64_t main_sys_us;    /* cumulative */
    uint64_t main_active_us; /* cumulative event-loop busy time (for ACTIVE_TIME) */
    uint64_t commands;       /* cumulative commands processed (for the guard) */
    size_t queued;           /* shared inbox depth now */
    int active, num;         /* threads active / configured, counting main */
} ignition_sample;

/* A 16-sample mean of a rate, as Valkey keeps its instantaneous metrics:
 * each sample is (value's increase) * 1e6 / (time's increase), parts per
 * million of one core; the mean counts all 16 slots, filled or not. */
typedef struct ignition_mean {
    uint64_t samples[IGNITION_METRIC_SAMPLES];
    int idx;
    bool primed; /* last_* hold a sample to measure the next from */
    uint64_t last_value, last_us;
} ignition_mean;

/* A point the guard measures rates between: main's CPU and commands. */
typedef struct ignition_point {
    uint64_t us, cpu_us, commands;
} ignition_point;

#define IGNITION_GUARD_POINTS 8

/* What one decision of the policy was (INFO iothreads
 * io_threads_last_decision). A decision is a step that judged numbers:
 * every step while main is alone (the CPU means), every 16th depth sample
 * while workers run (the mean depth), the guard's verdict; and a move
 * nobody asked the policy for (io-threads-always-active), which judged
 * nothing. The steps between those only wait, and are not decisions. */
typedef enum {
    IGNITION_DECIDED_NONE = 0,   /* nothing decided yet */
    IGNITION_DECIDED_STAY,       /* main alone, not busy enough: stays alone */
    IGNITION_DECIDED_BACKOFF,    /* main alone and busy, but the guard's backoff runs */
    IGNITION_DECIDED_IGNITE,     /* main alone and busy: one worker woken */
    IGNITION_DECIDED_HOLD,       /* a scaling decision that keeps the pool as it is */
    IGNITION_DECIDED_SCALE_UP,   /* the mean depth above 1: one thread more */
    IGNITION_DECIDED_SCALE_DOWN, /* the mean depth 0 past the cooldown: one thread fewer */
    IGNITION_DECIDED_KEEP,       /* the guard's verdict: the threads paid */
    IGNITION_DECIDED_REVERT,     /* the guard's verdict: they did not; back to main alone */
    IGNITION_DECIDED_FORCED,     /* a move the policy did not ask for */
    IGNITION_DECIDED_COUNT
} ignition_decided;

/* The numbers a decision looked at; those its kind does not look at are
 * 0. Written by the step that decides, read by INFO (both main). */
typedef struct ignition_decision {
    ignition_decided what;
    uint64_t us;                          /* when (monotonic µs); 0 before the first */
    int active_before, active_after;      /* threads active when it decided, and what it answered */
    uint64_t sys_ppm, user_ppm, busy_ppm; /* main alone: the CPU means it judged (ppm of one core) */
    size_t depth_mean;                    /* scaling: the mean of the last 16 inbox depths */
    uint64_t rate_before, rate_after;     /* the guard: commands per second before and after ignition */
} ignition_decision;

typedef struct ignition {
    ignition_rule rule;

    /* Ignition: main's CPU, sampled every IGNITION_CPU_SAMPLE_US while
     * main is alone. */
    uint64_t last_cpu_sample_us;
    ignition_mean sys, user, busy;

    /* Scaling: the queue depth, one sample a step while workers are
     * active, and a decision every IGNITION_METRIC_SAMPLES samples. */
    size_t depth[IGNITION_METRIC_SAMPLES];
    uint64_t depth_samples;
    uint64_t last_scale_us; /* last ignition or scale-up (not scale-down) */

    /* The guard (GUARDED only). */
    ignition_point points[IGNITION_GUARD_POINTS]; /* while alone, every CPU sample */
    int npoints;
    int probation;         /* 0 none; 1 settling; 2 measuring */
    ignition_point before; /* rates before ignition: from points[] ... */
    ignition_point before_end;
    ignition_point after;       /* ... and after: from the end of settling */
    ignition_point at_ignition; /* for the collapse check */
    uint64_t ignited_us;
    uint64_t backoff_us;    /* the next revert's wait; 0 after threads paid */
    uint64_t not_before_us; /* no ignition until then */
    bool reverting;         /* asking for 1 until the pool gets there */
    int last_active;        /* active at the previous step */

    /* What the last step asked for and why, so that the counters count
     * what the pool did, not what it was asked. */
    int asked, asked_why;
    uint64_t asked_us;

    /* Counters, for INFO iothreads: every move of the pool, counted once,
     * under why it was asked (ignition_note_move counts the moves nobody
     * asked the policy for), and the workers parked. */
    uint64_t ignitions, scale_ups, scale_downs, guard_reverts;
    uint64_t parks;          /* workers parked, by any move down */
    uint64_t last_change_us; /* when the last move made was asked (monotonic µs) */

    /* The last decision, for INFO (kept by ignition_restart, as the
     * counters are). */
    ignition_decision last;
} ignition;

/* A fresh policy: main alone, nothing sampled yet. */
void ignition_init(ignition *ig, ignition_rule rule);

/* A fresh policy for a new pool or a new rule that keeps the counters and
 * last_change_us: INFO's counters run from the server's start. */
void ignition_restart(ignition *ig, ignition_rule rule);

/* One step: takes the sample, answers the number of threads that should
 * be active, 1 .. s->num (1 when num < 1). The caller moves the pool
 * towards it; a scale-down the pool refuses shows in the next sample's
 * active, and the policy works from that. */
int ignition_step(ignition *ig, const ignition_sample *s);

/* The caller moved the pool from `before` to `after` threads active
 * (before != after, or a move it tried and the pool refused: then they
 * are equal), at now_us. The one place the pool's moves are counted: a
 * move the last step asked for is counted now, under why it was asked,
 * as the next step would count it; a move nobody asked the policy for
 * (io-threads-always-active wakes and parks the whole pool itself) is
 * counted by its direction: from main alone an ignition, else a scale-up
 * or a scale-down. Every thread a move down parks is counted in parks. */
void ignition_note_move(ignition *ig, int before, int after, uint64_t now_us);

/* "none", "stay", "backoff", "ignite", "hold", "scale-up", "scale-down",
 * "keep", "revert", "forced". */
const char *ignition_decided_name(ignition_decided d);

/* "guarded", "rusage", "active-time"; and back (any case; -1 if none). */
const char *ignition_rule_name(ignition_rule r);
int ignition_rule_parse(const char *name);

#endif
