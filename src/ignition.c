/* ignition.c — when to wake the I/O threads, and how many to keep awake.
 *
 * Step 5 (policy layer). Main thread only. See ignition.h for what the
 * caller samples.
 * Valkey: the functions ignition.h names.
 *
 * WHY A POLICY AT ALL
 *
 * Threads are not free. In Valkey an active worker with no work spins on
 * its park mutex for as long as it is active, a full core each; soloist's
 * spins io-threads-idle-spin-us (20 us by default) and then sleeps on a
 * futex until a job comes (io_threads.c). Either way every request handed
 * to a worker costs main an enqueue and a dequeue and costs the machine
 * two cache-line trips. When main has time to spare the pool buys nothing
 * (and in Valkey burns a core per worker); on a machine with fewer cores
 * than threads it takes the core the main thread or the clients needed.
 * So the pool starts with main alone and wakes workers only when main is
 * busy.
 *
 * IGNITION (MAIN ALONE -> MAIN AND ONE WORKER)
 *
 * Every 50 ms (IGNITION_CPU_SAMPLE_US) while main is alone, the caller's
 * cumulative figures become rates — the share of one core main spent in
 * the kernel, in user space, and (for ACTIVE_TIME) busy in its event loop
 * — and each rate goes into a 16-slot mean (ignition_mean). The mean
 * counts all 16 slots, so it is an 800 ms window, and from idle it climbs
 * by a sixteenth of the new level each sample (integer means, as Valkey's
 * getInstantaneousMetric: the sum of the slots divided by 16, rounded
 * down):
 *
 *   RUSAGE       sys mean > 30 %, or sys > 5 % and user > 50 %
 *   ACTIVE_TIME  busy mean > 30 %
 *
 * A high sys share says main spends its time in read, write and
 * epoll_wait, the work a worker can take; the second clause catches a
 * main thread busy parsing in user space. RUSAGE is the rule of Valkey's
 * unstable branch at the pinned commit; Valkey 9.1 GA replaced both
 * figures with one portable one (ACTIVE_TIME, pull request #3544). The
 * window is deliberately slow: a step from idle to a level L (per cent)
 * ignites after floor(16 * 30 / L) + 1 samples, 250 ms at the very least
 * (L = 100, two and a half of the server's 100 ms cron periods) and
 * 650 ms for a step to 40 %, so a spike of a few hundred milliseconds
 * never wakes a thread.
 *
 * SCALING (AFTER IGNITION)
 *
 * Each step while workers are active samples the shared inbox's depth;
 * every 16th sample (160 ms at one step per IGNITION_SAMPLE_US) decides
 * on the mean of the last 16 depths, an integer mean like the CPU's:
 * above 1 (the 16 depths sum to 32 or more), requests wait for a worker,
 * so one more thread (up to num); exactly 0 (they sum to 15 or less), and
 * no ignition or scale-up for a second (IGNITION_COOLDOWN_US, Valkey's
 * last_scale_time), so one fewer. The cooldown runs from the last
 * ignition or scale-up, not from the end of the load, and a scale-down
 * does not restart it, so once the load is gone the pool shrinks one
 * thread per decision. The pool may refuse a scale-down (a worker still
 * holds jobs only it can run); the next sample's active says so and the
 * next decision asks again. Back at one thread, ignition is armed again.
 *
 * RUSAGE and ACTIVE_TIME decide as Valkey's rules do (ACTIVE_TIME on
 * soloist's busy time, not Valkey's counter; ignition.h says how they
 * differ), with a consequence that follows from the rules as written
 * (read from them, not seen on a running Valkey): the mean is sampled
 * only while main is alone, so it still holds the load from before
 * ignition when the pool comes back to one thread, and the first new
 * sample spans the whole threaded period. If those old samples are high
 * the rule ignites again at once, with no load, and a second later
 * scales down, once per cooldown until the old samples age out
 * (test_ignition.c replays it on a recorded trace). GUARDED starts the
 * mean afresh whenever the pool returns to main alone.
 *
 * THE GUARD (GUARDED, THE DEFAULT: "ADAPTIVE MUST NOT HURT")
 *
 * Threads pay only when main was the bottleneck and the machine has a
 * core for the worker. On two cores at pipeline depth 1 neither holds:
 * main's per-request cost is the syscalls, handing them to a worker adds
 * the queue trips, and the worker's core is the clients' core. Redis 7.0
 * with io-threads 2 on such a machine serves fewer requests than with
 * one. The CPU rule cannot see that, because it looks at main alone
 * before ignition; the guard looks after. Ignition starts a probation:
 * the pool is held at two threads, 100 ms are left for it to settle
 * (IGNITION_GUARD_SETTLE_US), and over the next 300 ms
 * (IGNITION_GUARD_WINDOW_US) main's commands per second and its CPU per
 * command are compared with the last 200 ms before ignition
 * (IGNITION_GUARD_BEFORE_US: shorter than the shortest ignition lag, so
 * "before" never reaches back past the step that caused it). The threads
 * paid if throughput rose by 10 % (a closed loop, or an open loop main
 * could not keep up with), or if it held within 5 % while main's CPU per
 * command fell by 15 % (an open loop: the same work, and main has room to
 * spare). Otherwise the guard sends the pool back to one thread
 * (guard_reverts) and refuses to ignite for a backoff that starts at 1 s
 * and doubles with each revert in a row, up to 64 s; a probation that
 * paid resets it. A revert the pool refuses is asked for again at every
 * step, and counted (like every change) only when the pool has made it. A
 * machine where threads never pay thus spends, in the long run, 0.4 s in
 * every 64 on trying (under 1 %), and a load that changes (clients start
 * pipelining, a core frees up) is tried again within about a minute. The
 * guard does not ask why throughput fell: if the load left during the
 * window, the threads were not needed either, and the revert costs only
 * the backoff (the next ignition waits a second longer); telling the two
 * apart by how far throughput fell would let a pool that ruins throughput
 * pass for a load that left. The guard judges ignition only: after it, a
 * thread too many shows as an empty queue, which the scaling rule
 * handles.
 */
#include "ignition.h"

#include <string.h>
#include <strings.h>

/*@ ignition-constants */
/* Valkey samples main's CPU once in 50 ms (IOThreadsBeforeSleep). */
#define IGNITION_CPU_SAMPLE_US 50000
/* The thresholds, parts per million of one core (Valkey's
 * IO_IGNITION_CPU_SYS 30.0, IO_IGNITION_CPU_SYS_LOW 5.0,
 * IO_IGNITION_CPU_USER 50.0; the newer IO_IGNITION_MAIN_THREAD_ACTIVE_PERCENT
 * 30, which its comment calls low enough to start the next thread quickly). */
#define IGNITION_SYS_PPM 300000
#define IGNITION_SYS_LOW_PPM 50000
#define IGNITION_USER_PPM 500000
#define IGNITION_ACTIVE_PPM 300000
/* No scale-down within a second of the last ignition or scale-up
 * (Valkey's IO_COOLDOWN_MS): a thread is not parked while the queue it
 * was woken for may still be filling. */
#define IGNITION_COOLDOWN_US 1000000
/* The guard. Settle: long enough for the woken worker to be scheduled and
 * for ten steps of the new regime; window: long enough that a 10 % change
 * stands out of the jitter of 10 ms samples (the recorded traces vary by
 * a few per cent over 100 ms), short enough that a probation that fails
 * costs little. Before: four CPU samples, less than the five the fastest
 * ignition needs. The ratios (per cent) are each about twice the
 * recorded jitter, and the relief asked of main is larger than the gain
 * asked of throughput because CPU per command is the noisier quotient. */
#define IGNITION_GUARD_SETTLE_US 100000
#define IGNITION_GUARD_WINDOW_US 300000
#define IGNITION_GUARD_BEFORE_US 200000
#define IGNITION_GUARD_GAIN_PCT 110  /* throughput up 10 %: paid */
#define IGNITION_GUARD_HOLD_PCT 95   /* throughput within 5 % ... */
#define IGNITION_GUARD_RELIEF_PCT 85 /* ... and main's CPU per command down 15 %: paid */
/* A collapse needs no statistics: if, 50 ms or more after ignition,
 * throughput since ignition is under half of before, the threads go back
 * to sleep at once instead of at the end of the window. On a machine
 * where they cannot pay (two cores, shallow pipelines) the woken worker
 * and main's spinning take the clients' core, and a full probation there
 * costs most of 400 ms of service; this bounds the cost to about 50 ms. */
#define IGNITION_GUARD_COLLAPSE_US 50000
#define IGNITION_GUARD_COLLAPSE_PCT 50
/* The backoff: the first as long as the cooldown (a pool the guard parked
 * gets no sooner second chance than one the queue rule parked); doubling,
 * so a machine where threads never pay stops trying within a few
 * minutes' worth of tries; capped, so a load that changes is tried again
 * within about a minute. */
#define IGNITION_BACKOFF_MIN_US 1000000
#define IGNITION_BACKOFF_MAX_US 64000000
/*@ end */

/* Why the pool was asked to move, for the counters. */
enum { ASK_IGNITION = 1, ASK_SCALE_UP, ASK_SCALE_DOWN, ASK_REVERT };

/* Probation's phases. */
enum { PROBATION_NONE = 0, PROBATION_SETTLING, PROBATION_MEASURING };

static const char *const rule_names[IGNITION_RULE_COUNT] = {
    [IGNITION_GUARDED] = "guarded",
    [IGNITION_RUSAGE] = "rusage",
    [IGNITION_ACTIVE_TIME] = "active-time",
};

static const char *const decided_names[IGNITION_DECIDED_COUNT] = {
    [IGNITION_DECIDED_NONE] = "none",
    [IGNITION_DECIDED_STAY] = "stay",
    [IGNITION_DECIDED_BACKOFF] = "backoff",
    [IGNITION_DECIDED_IGNITE] = "ignite",
    [IGNITION_DECIDED_HOLD] = "hold",
    [IGNITION_DECIDED_SCALE_UP] = "scale-up",
    [IGNITION_DECIDED_SCALE_DOWN] = "scale-down",
    [IGNITION_DECIDED_KEEP] = "keep",
    [IGNITION_DECIDED_REVERT] = "revert",
    [IGNITION_DECIDED_FORCED] = "forced",
};

const char *ignition_decided_name(ignition_decided d) {
    return (unsigned)d < IGNITION_DECIDED_COUNT ? decided_names[d] : "unknown";
}

/* Starts the record of a decision (ig->last, for INFO): its kind, when,
 * and the threads before and after; the numbers it looked at are 0 until
 * the caller fills in those its kind has. A few stores on main per step:
 * cheaper than anything INFO could recompute. */
static ignition_decision *decide(ignition *ig, ignition_decided what, uint64_t now_us, int before, int after) {
    ig->last = (ignition_decision){.what = what, .us = now_us, .active_before = before, .active_after = after};
    return &ig->last;
}

const char *ignition_rule_name(ignition_rule r) {
    return (unsigned)r < IGNITION_RULE_COUNT ? rule_names[r] : "unknown";
}

int ignition_rule_parse(const char *name) {
    for (int r = 0; name && r < IGNITION_RULE_COUNT; r++)
        if (!strcasecmp(name, rule_names[r])) return r;
    return -1;
}

void ignition_init(ignition *ig, ignition_rule rule) {
    memset(ig, 0, sizeof *ig);
    ig->rule = (unsigned)rule < IGNITION_RULE_COUNT ? rule : IGNITION_GUARDED;
    ig->last_active = 1;
}

void ignition_restart(ignition *ig, ignition_rule rule) {
    ignition kept = *ig;
    ignition_init(ig, rule);
    ig->ignitions = kept.ignitions;
    ig->scale_ups = kept.scale_ups;
    ig->scale_downs = kept.scale_downs;
    ig->guard_reverts = kept.guard_reverts;
    ig->parks = kept.parks;
    ig->last_change_us = kept.last_change_us;
    ig->last = kept.last;
}

/*@ ignition-mean */
/* Adds one sample of a cumulative value's rate since the last call
 * (Valkey's trackInstantaneousMetric with factor 1e6).
 *   value   a cumulative figure that never goes backwards (main's sys,
 *           user or busy µs); now_us, the monotonic clock in µs.
 *   kept    in *m between calls: samples[], the ring of the last 16
 *           samples; idx, the slot the next one goes to; primed, and
 *           last_value and last_us, the call the next is measured from.
 * The first call (primed false) only remembers where to measure from: it
 * adds no sample. Every later call writes one sample into samples[idx]
 * and moves idx on by one, round the 16 slots: value's increase since the
 * previous call * 1,000,000 / the µs between them, parts per million of
 * one core (300000 is 30 %), or 0 if no time passed. Every call becomes
 * the one the next is measured from. */
static void mean_track(ignition_mean *m, uint64_t value, uint64_t now_us) {
    /*@ exercise: mean-track */
    if (m->primed) {
        uint64_t dt = now_us - m->last_us, dv = value - m->last_value;
        m->samples[m->idx] = dt ? dv * 1000000 / dt : 0;
        m->idx = (m->idx + 1) % IGNITION_METRIC_SAMPLES;
    }
    m->primed = true;
    m->last_value = value;
    m->last_us = now_us;
    /*@ end */
}

/* The mean of all 16 slots, filled or not (getInstantaneousMetric): their
 * sum divided by 16, rounded down. A slot no sample has reached yet counts
 * as 0, so from idle the mean climbs by a sixteenth of the new level per
 * sample, and it judges the last 16 samples (800 ms), no fewer. */
static uint64_t mean_get(const ignition_mean *m) {
    /*@ exercise: mean-get */
    uint64_t sum = 0;
    for (int i = 0; i < IGNITION_METRIC_SAMPLES; i++) sum += m->samples[i];
    return sum / IGNITION_METRIC_SAMPLES;
    /*@ end */
}
/*@ end */

/*@ ignition-rule */
/* Whether main alone is busy enough to wake a worker, judged on the
 * 16-sample means (mean_get) that sample_cpu keeps in ig->sys, ig->user
 * and ig->busy:
 *   ACTIVE_TIME       the busy mean above IGNITION_ACTIVE_PPM;
 *   RUSAGE, GUARDED   the sys mean above IGNITION_SYS_PPM, or the sys mean
 *                     above IGNITION_SYS_LOW_PPM and the user mean above
 *                     IGNITION_USER_PPM (user time alone never ignites).
 * Every comparison is strict: a mean exactly at its threshold does not
 * ignite. */
static bool should_ignite(const ignition *ig) {
    /*@ exercise: should-ignite */
    if (ig->rule == IGNITION_ACTIVE_TIME) return mean_get(&ig->busy) > IGNITION_ACTIVE_PPM;
    uint64_t sys = mean_get(&ig->sys), user = mean_get(&ig->user);
    return sys > IGNITION_SYS_PPM || (sys > IGNITION_SYS_LOW_PPM && user > IGNITION_USER_PPM);
    /*@ end */
}
/*@ end */

static ignition_point point_of(const ignition_sample *s) {
    return (ignition_point){s->now_us, s->main_user_us + s->main_sys_us, s->commands};
}

/*@ ignition-sample */
/* Main alone: every 50 ms, one sample into each mean, and (for the guard)
 * one point into the ring it measures "before" from. */
static void sample_cpu(ignition *ig, const ignition_sample *s) {
    if (ig->sys.primed && s->now_us - ig->last_cpu_sample_us < IGNITION_CPU_SAMPLE_US) return;
    ig->last_cpu_sample_us = s->now_us;
    mean_track(&ig->sys, s->main_sys_us, s->now_us);
    mean_track(&ig->user, s->main_user_us, s->now_us);
    mean_track(&ig->busy, s->main_active_us, s->now_us);
    ig->points[ig->npoints++ % IGNITION_GUARD_POINTS] = point_of(s);
}

/* Forgets main's CPU history (GUARDED, when the pool returns to main
 * alone): the next ignition is decided on samples taken since. */
static void restart_cpu(ignition *ig) {
    memset(&ig->sys, 0, sizeof ig->sys);
    memset(&ig->user, 0, sizeof ig->user);
    memset(&ig->busy, 0, sizeof ig->busy);
    ig->npoints = 0;
}
/*@ end */

static int ask(ignition *ig, int target, int why, uint64_t now_us) {
    ig->asked = target;
    ig->asked_why = why;
    ig->asked_us = now_us;
    return target;
}

/*@ ignition-count */
/* Counts the change the previous step asked for, if the pool made it.
 *   active  the threads active now, as this step's sample says.
 *   kept    what ask() left: asked (0 if nothing was asked, else the
 *           target the previous step answered), asked_why (ASK_*) and
 *           asked_us (when it asked).
 * If something was asked and active is that target, the pool made the
 * move: one more in the counter for why it was asked (ASK_IGNITION in
 * ignitions, ASK_SCALE_UP in scale_ups, ASK_SCALE_DOWN in scale_downs,
 * ASK_REVERT in guard_reverts), and last_change_us becomes asked_us.
 * Either way the ask is then forgotten (asked = 0). A refused move is not
 * counted; it is asked for again (a revert at the next step, a scale-down
 * at the next decision) and counted when the pool makes it. */
static void count_change(ignition *ig, int active) {
    /*@ exercise: count-moves */
    if (!ig->asked || active != ig->asked) {
        ig->asked = 0;
        return;
    }
    uint64_t *counter[] = {[ASK_IGNITION] = &ig->ignitions,
                           [ASK_SCALE_UP] = &ig->scale_ups,
                           [ASK_SCALE_DOWN] = &ig->scale_downs,
                           [ASK_REVERT] = &ig->guard_reverts};
    (*counter[ig->asked_why])++;
    ig->last_change_us = ig->asked_us;
    ig->asked = 0;
    /*@ end */
}
/*@ end */

/*@ ignition-note */
/* ignition.h. The caller tells the policy of a move as soon as the pool
 * has made it (or refused it), so that INFO shows it then, not a sample
 * later; count_change then does what the next step would have done, and
 * the next step finds nothing asked. */
void ignition_note_move(ignition *ig, int before, int after, uint64_t now_us) {
    if (after < before) ig->parks += (uint64_t)(before - after);
    bool asked = ig->asked && after == ig->asked;
    count_change(ig, after);
    if (asked || after == before) return;
    decide(ig, IGNITION_DECIDED_FORCED, now_us, before, after);
    if (after > before) {
        if (before == 1)
            ig->ignitions++;
        else
            ig->scale_ups++;
    } else {
        ig->scale_downs++;
    }
    ig->last_change_us = now_us;
}
/*@ end */

/*@ ignition-guard */
/* Commands per second and CPU µs per command between two points, scaled
 * by 1e6 to stay in integers. */
static uint64_t per_second(ignition_point a, ignition_point b) {
    return b.us > a.us ? (b.commands - a.commands) * 1000000 / (b.us - a.us) : 0;
}
static uint64_t cpu_per_command(ignition_point a, ignition_point b) {
    return b.commands > a.commands ? (b.cpu_us - a.cpu_us) * 1000000 / (b.commands - a.commands) : 0;
}

/* At ignition: "before" runs from the point IGNITION_GUARD_BEFORE_US back
 * (or the oldest kept) to the newest. If main ran no commands in it, any
 * throughput after counts as a gain: there is nothing to judge by, and the
 * scaling rule parks a pool with nothing to do. */
static void guard_start(ignition *ig, const ignition_sample *s) {
    if (ig->npoints < 2) return;
    int newest = (ig->npoints - 1) % IGNITION_GUARD_POINTS;
    int back = ig->npoints < IGNITION_GUARD_POINTS ? ig->npoints - 1 : IGNITION_GUARD_POINTS - 1;
    int from = newest;
    for (int k = 1; k <= back; k++) {
        int i = (newest - k + IGNITION_GUARD_POINTS) % IGNITION_GUARD_POINTS;
        from = i;
        if (ig->points[newest].us - ig->points[i].us >= IGNITION_GUARD_BEFORE_US) break;
    }
    ig->before = ig->points[from];
    ig->before_end = ig->points[newest];
    ig->probation = PROBATION_SETTLING;
    ig->ignited_us = s->now_us;
    ig->at_ignition = point_of(s);
}

/* The probation failed: back to one thread, and a longer wait before the
 * next try. */
static bool guard_fail(ignition *ig, const ignition_sample *s, bool *revert) {
    ig->probation = PROBATION_NONE;
    ig->backoff_us = ig->backoff_us ? ig->backoff_us * 2 : IGNITION_BACKOFF_MIN_US;
    if (ig->backoff_us > IGNITION_BACKOFF_MAX_US) ig->backoff_us = IGNITION_BACKOFF_MAX_US;
    ig->not_before_us = s->now_us + ig->backoff_us;
    *revert = true;
    return true;
}

/* During probation: false while it goes on, true once it is over, with
 * *revert saying whether the threads go back to sleep. */
static bool guard_judge(ignition *ig, const ignition_sample *s, bool *revert) {
    *revert = false;
    ignition_point now = point_of(s);
    if (now.us - ig->at_ignition.us >= IGNITION_GUARD_COLLAPSE_US &&
        per_second(ig->at_ignition, now) * 100 < per_second(ig->before, ig->before_end) * IGNITION_GUARD_COLLAPSE_PCT) {
        ignition_decision *d = decide(ig, IGNITION_DECIDED_REVERT, s->now_us, ig->last_active, 1);
        d->rate_before = per_second(ig->before, ig->before_end);
        d->rate_after = per_second(ig->at_ignition, now);
        return guard_fail(ig, s, revert);
    }
    if (ig->probation == PROBATION_SETTLING) {
        if (s->now_us - ig->ignited_us < IGNITION_GUARD_SETTLE_US) return false;
        ig->after = point_of(s);
        ig->probation = PROBATION_MEASURING;
        return false;
    }
    if (now.us - ig->after.us < IGNITION_GUARD_WINDOW_US) return false;
    ig->probation = PROBATION_NONE;
    uint64_t rate_b = per_second(ig->before, ig->before_end), rate_a = per_second(ig->after, now);
    uint64_t cpc_b = cpu_per_command(ig->before, ig->before_end), cpc_a = cpu_per_command(ig->after, now);
    bool gained = rate_a * 100 >= rate_b * IGNITION_GUARD_GAIN_PCT;
    bool relieved =
        rate_a * 100 >= rate_b * IGNITION_GUARD_HOLD_PCT && cpc_a * 100 <= cpc_b * IGNITION_GUARD_RELIEF_PCT;
    ignition_decision *d = decide(ig, gained || relieved ? IGNITION_DECIDED_KEEP : IGNITION_DECIDED_REVERT, s->now_us,
                                  ig->last_active, gained || relieved ? ig->last_active : 1);
    d->rate_before = rate_b;
    d->rate_after = rate_a;
    if (gained || relieved) {
        ig->backoff_us = 0;
        return true;
    }
    return guard_fail(ig, s, revert);
}
/*@ end */

/* One step (ignition.h): a sample in, the threads that should be active
 * out. It has two halves, chosen by the threads the sample says are
 * active: step_alone (main alone: whether to ignite) and step_active
 * (workers running: the guard, then scaling). Three pieces of them are
 * regions.
 *
 * ignite (main alone, every step, on the CPU means as they stand:
 * sample_cpu adds to them only once in 50 ms, but the backoff may end
 * between two samples): when should_ignite says main is busy (and, under
 * GUARDED, not before not_before_us, the guard's backoff: a step at
 * not_before_us itself may ignite), ignite: last_scale_us becomes now,
 * which starts the cooldown; GUARDED starts its probation
 * (guard_start(ig, s)); and the answer is 2, main and one worker, given
 * through ask(ig, 2, ASK_IGNITION, now) so that the move is counted once
 * the pool has made it. Otherwise the answer is 1. Ignition leaves the
 * depth ring as it is.
 *
 * depth-sample (workers active, every step, the probation's included): the
 * shared inbox's depth now, s->queued, goes into depth[], the ring of the
 * last 16, and depth_samples counts it. Nothing resets depth_samples, not
 * ignition either: decisions fall on every 16th sample since the policy
 * started, so after a revert part-way through a decision period the next
 * ignition's decisions keep to the same count.
 *
 * scale (workers active, after the guard): every 16th depth sample
 * (depth_samples a multiple of 16) is a decision, on the integer mean of
 * the 16 depths in the ring (their sum / 16, rounded down); between
 * decisions the answer is active. At a decision:
 *   mean above 1 and fewer than num active: one thread more, active + 1
 *     (ASK_SCALE_UP), and last_scale_us becomes now: a scale-up restarts
 *     the cooldown;
 *   mean exactly 0 and more than IGNITION_COOLDOWN_US since the last
 *     ignition or scale-up (last_scale_us): one thread fewer, active - 1
 *     (ASK_SCALE_DOWN), whatever the depth at the decision itself; a
 *     scale-down does not restart the cooldown;
 *   otherwise active.
 * Every move is one thread from active, the threads the sample says are
 * active, and goes through ask(). A scale-down the pool refused (the
 * worker's inbox, or the shared one for the last worker, still holds jobs:
 * io_threads_set_active) shows there, and the next decision asks again.
 */
/*@ ignition-step */
/* Main alone: the ignition check (IOThreadsBeforeSleep samples,
 * IOThreadsAfterSleep decides); num threads in the pool, main included. */
static int step_alone(ignition *ig, const ignition_sample *s, int num) {
    bool guarded = ig->rule == IGNITION_GUARDED;
    if (ig->last_active > 1 && guarded) restart_cpu(ig);
    ig->last_active = 1;
    ig->reverting = false;
    ig->probation = PROBATION_NONE;
    if (num > 1) { /* a worker to wake */
        sample_cpu(ig, s);
        /*@ exercise: ignite */
        if (!should_ignite(ig)) return 1;
        if (guarded && s->now_us < ig->not_before_us) return 1;
        ig->last_scale_us = s->now_us;
        if (guarded) guard_start(ig, s);
        return ask(ig, 2, ASK_IGNITION, s->now_us);
        /*@ end */
    }
    return 1;
}

/* Workers active: the guard's probation, then the scaling rule on the
 * queue's depth; active of num threads run, main included. */
static int step_active(ignition *ig, const ignition_sample *s, int num, int active) {
    (void)num; /* read in the scale region alone: a version without that read must still build, and fail its tests */
    ig->last_active = active;
    if (ig->reverting) return ask(ig, 1, ASK_REVERT, ig->asked_us);

    /* One queue-depth sample per step. */
    /*@ exercise: depth-sample */
    ig->depth[ig->depth_samples++ % IGNITION_METRIC_SAMPLES] = s->queued;
    /*@ end */
    if (ig->probation != PROBATION_NONE) {
        bool revert;
        if (!guard_judge(ig, s, &revert)) return active;
        if (revert) {
            ig->reverting = true;
            return ask(ig, 1, ASK_REVERT, s->now_us);
        }
    }
    /*@ exercise: scale */
    if (ig->depth_samples % IGNITION_METRIC_SAMPLES) return active;
    size_t sum = 0;
    for (int i = 0; i < IGNITION_METRIC_SAMPLES; i++) sum += ig->depth[i];
    size_t avg = sum / IGNITION_METRIC_SAMPLES;
    if (avg > 1 && active < num) {
        ig->last_scale_us = s->now_us;
        return ask(ig, active + 1, ASK_SCALE_UP, s->now_us);
    }
    if (avg == 0 && s->now_us - ig->last_scale_us > IGNITION_COOLDOWN_US)
        return ask(ig, active - 1, ASK_SCALE_DOWN, s->now_us);
    return active;
    /*@ end */
}

/* Records what a step decided (ig->last), from the state the step left:
 * main alone with a worker to wake, every step judges the CPU means; with
 * workers running, a step that reached the scaling rule (not reverting,
 * no probation, a 16th depth sample) judges the mean depth. The guard
 * records its own verdicts (guard_judge). */
static void note_step(ignition *ig, const ignition_sample *s, int num, int active, bool was_reverting, int target) {
    if (active == 1) {
        if (num < 2) return;
        ignition_decided what = target > 1          ? IGNITION_DECIDED_IGNITE
                                : should_ignite(ig) ? IGNITION_DECIDED_BACKOFF
                                                    : IGNITION_DECIDED_STAY;
        ignition_decision *d = decide(ig, what, s->now_us, 1, target);
        d->sys_ppm = mean_get(&ig->sys);
        d->user_ppm = mean_get(&ig->user);
        d->busy_ppm = mean_get(&ig->busy);
        return;
    }
    if (was_reverting || ig->reverting || ig->probation != PROBATION_NONE ||
        ig->depth_samples % IGNITION_METRIC_SAMPLES)
        return;
    size_t sum = 0;
    for (int i = 0; i < IGNITION_METRIC_SAMPLES; i++) sum += ig->depth[i];
    ignition_decided what = target > active   ? IGNITION_DECIDED_SCALE_UP
                            : target < active ? IGNITION_DECIDED_SCALE_DOWN
                                              : IGNITION_DECIDED_HOLD;
    decide(ig, what, s->now_us, active, target)->depth_mean = sum / IGNITION_METRIC_SAMPLES;
}

int ignition_step(ignition *ig, const ignition_sample *s) {
    int num = s->num < 1 ? 1 : s->num;
    int active = s->active < 1 ? 1 : s->active > num ? num : s->active;
    count_change(ig, active);
    bool was_reverting = ig->reverting;
    int target = active == 1 ? step_alone(ig, s, num) : step_active(ig, s, num, active);
    note_step(ig, s, num, active, was_reverting, target);
    return target;
}
/*@ end */
