/* test_ignition.c — step 5's ignition policy, replayed on traces.
 *
 * The policy is a function of what the caller samples, so a test feeds it
 * the samples of a trace and plays the pool: whatever target the policy
 * answers, the pool takes (or refuses, where a test says so) before the
 * next sample. Traces live in tests/data/ignition/:
 *   recorded-*.csv  main alone under a step, a closed-loop burst and a
 *                   light load, recorded by bench/ignition_trace.py;
 *   regimes.csv     what main looks like while workers are active, as per
 *                   cent of the recorded row: CONSTRUCTED from the
 *                   assumptions its header states, since the recorded
 *                   server could not run its pool. Once the pool is up,
 *                   each row's increments are scaled by the regime.
 * A few traces are built here from constant levels (constant_trace) or by
 * repeating a recorded load (looped_trace); each says so where it is made.
 * The tests of exact boundaries (the 16-sample window, the thresholds, each
 * scaling decision and the cooldown) step the policy by hand (hand_step),
 * choosing main's load and the inbox's depth at every step, so that each
 * answer is known to the step.
 *
 * Periods: a step is one row, 10 ms (IGNITION_SAMPLE_US); a CPU sample is
 * 50 ms; a scaling decision is 16 steps, 160 ms; the server's cron runs
 * at hz 10, every 100 ms, and lags are also printed in cron periods.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "ignition.h"

#define MS ((uint64_t)1000)
#define NEVER UINT64_MAX
#define T0 (5000 * MS) /* the monotonic clock at a trace's first row */
#define CRON_US (100 * MS)
#define DECISION_US (IGNITION_METRIC_SAMPLES * (uint64_t)IGNITION_SAMPLE_US)
#define COOLDOWN_US (1000 * MS)

/* ---- traces ---------------------------------------------------------- */

typedef struct row {
    uint64_t t, user, sys, busy, cmds; /* µs from the first row; cumulative */
} row;

typedef struct trace {
    row *r;
    size_t n;
    uint64_t on, off; /* the load runs in [on, off) */
} trace;

typedef struct regime {
    unsigned cmds, user, sys, busy; /* per cent of main alone */
    size_t queued;                  /* depth while the load is on */
    uint64_t warmup_us;             /* after the pool grows from 1, for this long ... */
    unsigned warmup;                /* ... every figure is at this per cent instead */
} regime;

static char data_dir[512];

/* tests/data/ignition, found from this file's path (the tests run from
 * the repository's root) unless IGNITION_DATA says where. */
static const char *data_path(const char *file) {
    static char path[640];
    if (!data_dir[0]) {
        const char *env = getenv("IGNITION_DATA");
        if (env) {
            snprintf(data_dir, sizeof data_dir, "%s", env);
        } else {
            snprintf(data_dir, sizeof data_dir, "%s", __FILE__);
            char *unit = strstr(data_dir, "unit/test_ignition.c");
            assert_non_null(unit);
            snprintf(unit, sizeof data_dir - (size_t)(unit - data_dir), "data/ignition");
        }
    }
    snprintf(path, sizeof path, "%s/%s", data_dir, file);
    return path;
}

static trace load_trace(const char *file) {
    FILE *f = fopen(data_path(file), "r");
    if (!f) fail_msg("cannot open %s", data_path(file));
    trace t = {0};
    size_t cap = 0;
    char line[256];
    unsigned long long v[8];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "# load_on_us: %llu", &v[0]) == 1) t.on = v[0];
        if (sscanf(line, "# load_off_us: %llu", &v[0]) == 1) t.off = v[0];
        if (sscanf(line, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]) != 8)
            continue;
        if (t.n == cap) {
            cap = cap ? cap * 2 : 1024;
            t.r = realloc(t.r, cap * sizeof *t.r);
            assert_non_null(t.r);
        }
        t.r[t.n++] = (row){v[0], v[1], v[2], v[3], v[4]};
    }
    fclose(f);
    assert_true(t.n > 100 && t.off > t.on);
    return t;
}

static regime load_regime(const char *name) {
    FILE *f = fopen(data_path("regimes.csv"), "r");
    assert_non_null(f);
    char line[256], n[64];
    regime g;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%63[^,],%u,%u,%u,%u,%zu,%" SCNu64 ",%u", n, &g.cmds, &g.user, &g.sys, &g.busy, &g.queued,
                   &g.warmup_us, &g.warmup) == 8 &&
            !strcmp(n, name)) {
            fclose(f);
            g.warmup_us *= MS;
            return g;
        }
    fclose(f);
    fail_msg("no regime %s in regimes.csv", name);
    return g;
}

static row row_add(row a, row d) {
    return (row){a.t + d.t, a.user + d.user, a.sys + d.sys, a.busy + d.busy, a.cmds + d.cmds};
}
static row row_sub(row a, row b) {
    return (row){a.t - b.t, a.user - b.user, a.sys - b.sys, a.busy - b.busy, a.cmds - b.cmds};
}

static void push(trace *t, size_t *cap, row r) {
    if (t->n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        t->r = realloc(t->r, *cap * sizeof *t->r);
        assert_non_null(t->r);
    }
    t->r[t->n++] = r;
}

/* CONSTRUCTED: idle (nothing but the sampler's 100 commands/s), then a
 * constant level for load_ms, then idle, one row per 10 ms. */
static trace constant_trace(unsigned user_pct, unsigned sys_pct, unsigned cmds_per_s, uint64_t idle_ms,
                            uint64_t load_ms, uint64_t after_ms) {
    trace t = {0};
    size_t cap = 0;
    row r = {0};
    t.on = idle_ms * MS;
    t.off = (idle_ms + load_ms) * MS;
    for (uint64_t us = 0; us <= (idle_ms + load_ms + after_ms) * MS; us += 10 * MS) {
        push(&t, &cap, r);
        bool on = us >= t.on && us < t.off;
        row d = {10 * MS, on ? user_pct * 100 : 0, on ? sys_pct * 100 : 0, on ? (user_pct + sys_pct) * 100 : 0,
                 on ? cmds_per_s / 100 : 1};
        r = row_add(r, d);
    }
    return t;
}

/* CONSTRUCTED from a recorded trace: its rows up to the load, then the
 * recorded load's rows repeated for load_s seconds, then its rows after
 * the load. */
static trace looped_trace(const trace *src, uint64_t load_s) {
    trace t = {0};
    size_t cap = 0, i = 0;
    for (; i < src->n && src->r[i].t < src->on; i++) push(&t, &cap, src->r[i]);
    size_t first = i, last = i;
    while (last < src->n && src->r[last].t < src->off) last++;
    t.on = src->on;
    row r = t.r[t.n - 1];
    for (size_t k = first; r.t < src->on + load_s * 1000 * MS; k = k + 1 < last ? k + 1 : first) {
        r = row_add(r, row_sub(src->r[k], src->r[k - 1]));
        push(&t, &cap, r);
    }
    t.off = r.t;
    for (i = last; i < src->n; i++) push(&t, &cap, r = row_add(r, row_sub(src->r[i], src->r[i - 1])));
    return t;
}

/* The trace's mean level over its load, per cent of one core. */
static unsigned load_level(const trace *t, bool busy) {
    size_t a = 0, b = 0;
    while (t->r[a].t < t->on) a++;
    while (b + 1 < t->n && t->r[b + 1].t < t->off) b++;
    row d = row_sub(t->r[b], t->r[a]);
    return (unsigned)((busy ? d.busy : d.sys) * 100 / d.t);
}

/* ---- the replay ------------------------------------------------------ */

typedef struct run {
    ignition ig;
    uint64_t first_ignition; /* µs from the first row; NEVER if none */
    uint64_t first_down, first_down_after_off;
    uint64_t first_scale_up;   /* the first move up from two threads or more */
    uint64_t alone_again;      /* from here to the end main is alone; NEVER if not */
    uint64_t threaded_us;      /* time with workers active */
    uint64_t threaded_load_us; /* ... while the load was on */
    int max_active;
    int ups, downs; /* moves the pool made, but the last row's */
    int ignitions_after_off;
    uint64_t ignition_at[64];
    int n_ignitions;
    uint64_t max_backoff;
} run;

/* How the simulated pool behaves: the regime while workers are active
 * (`then` from switch_at on, if set), and how many scale-downs it refuses
 * before it obeys. */
typedef struct pool {
    const regime *g, *then;
    uint64_t switch_at;
    int refuse;
} pool;

static row scale(row d, const regime *g, uint64_t since_grown) {
    if (since_grown < g->warmup_us)
        return (row){d.t, d.user * g->warmup / 100, d.sys * g->warmup / 100, d.busy * g->warmup / 100,
                     d.cmds * g->warmup / 100};
    return (row){d.t, d.user * g->user / 100, d.sys * g->sys / 100, d.busy * g->busy / 100, d.cmds * g->cmds / 100};
}

/* Replays t through a policy of `rule` over a pool of num threads. While
 * workers are active each row's increments are scaled by the pool's
 * regime. */
static void replay_pool(run *out, const trace *t, ignition_rule rule, int num, pool p) {
    const regime *g = p.g;
    int refuse = p.refuse;
    uint64_t grown = 0;
    memset(out, 0, sizeof *out);
    ignition_init(&out->ig, rule);
    out->first_ignition = out->first_down = out->first_down_after_off = out->alone_again = out->first_scale_up = NEVER;
    row acc = {0};
    int active = 1;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t now = t->r[i].t;
        bool on = now >= t->on && now < t->off;
        if (i > 0) {
            row d = row_sub(t->r[i], t->r[i - 1]);
            if (p.then && now >= p.switch_at) g = p.then;
            if (active > 1) {
                d = scale(d, g, now - grown);
                out->threaded_us += d.t;
                if (on) out->threaded_load_us += d.t;
            }
            acc = row_add(acc, d);
        }
        ignition_sample s = {T0 + now, acc.user, acc.sys, acc.busy, acc.cmds, active > 1 && on ? g->queued : 0,
                             active,   num};
        int target = ignition_step(&out->ig, &s);
        expect_ge(
            ("threads asked at %" PRIu64 " ms of the trace, %s (at least main)", now / MS, ignition_rule_name(rule)),
            target, 1);
        expect_le(("threads asked at %" PRIu64 " ms of the trace, %s (num)", now / MS, ignition_rule_name(rule)),
                  target, num);
        if (out->ig.backoff_us > out->max_backoff) out->max_backoff = out->ig.backoff_us;
        if (target < active && refuse > 0) {
            refuse--;
            continue;
        }
        if (target == active) continue;
        if (active == 1) {
            grown = now;
            if (out->first_ignition == NEVER) out->first_ignition = now;
            if (now >= t->off) out->ignitions_after_off++;
            if (out->n_ignitions < 64) out->ignition_at[out->n_ignitions++] = now;
        }
        if (target < active && out->first_down == NEVER) out->first_down = now;
        if (target < active && now >= t->off && out->first_down_after_off == NEVER) out->first_down_after_off = now;
        if (target > active && active > 1 && out->first_scale_up == NEVER) out->first_scale_up = now;
        if (i + 1 < t->n) *(target > active ? &out->ups : &out->downs) += 1;
        active = target;
        out->alone_again = active == 1 ? now : NEVER;
        if (active > out->max_active) out->max_active = active;
    }
}

static void replay(run *out, const trace *t, ignition_rule rule, int num, const regime *g, int refuse) {
    replay_pool(out, t, rule, num, (pool){g, NULL, 0, refuse});
}

static const ignition_rule RULES[] = {IGNITION_GUARDED, IGNITION_RUSAGE, IGNITION_ACTIVE_TIME};
#define N_RULES (sizeof RULES / sizeof RULES[0])

/* The lag after a step to level L per cent: the 16-slot mean passes 30 %
 * at sample floor(16 * 30 / L) + 1; two samples more for the recorded
 * level's wobble and for where the step falls between samples. */
static uint64_t lag_bound(unsigned level) {
    unsigned k = 16 * 30 / level + 1;
    return (k + 2) * 50 * MS;
}

/* The counters count what the pool did: every move up is an ignition or a
 * scale-up, every move down a scale-down or a revert. Several tests call
 * it: each says first, with expect_context, which replay it checks. */
static void assert_counters_match(const run *r) {
    expect_eq(("ignitions + scale_ups (%s), against the moves up the pool made", ignition_rule_name(r->ig.rule)),
              r->ig.ignitions + r->ig.scale_ups, r->ups);
    expect_eq(
        ("scale_downs + guard_reverts (%s), against the moves down the pool made", ignition_rule_name(r->ig.rule)),
        r->ig.scale_downs + r->ig.guard_reverts, r->downs);
}

/* Replays t under each rule in turn, runs[k] for RULES[k], with the
 * regime called `name` and a pool that obeys. */
static void replay_rules(run *runs, const trace *t, const char *name, int num) {
    regime g = load_regime(name);
    for (size_t k = 0; k < N_RULES; k++) replay(&runs[k], t, RULES[k], num, &g, 0);
}

/* ---- a policy stepped by hand ---------------------------------------- */

/* CONSTRUCTED: a policy fed one sample at a time, with main's load and the
 * inbox's depth chosen for each step, and a pool that takes each answer
 * (or, where a test says so, refuses it). The clock starts at T0; times
 * below are µs from there. Main runs 1,000 commands per 10 ms throughout,
 * so the guard would see no gain: the scaling tests use rusage and
 * active-time, which have no guard. */
typedef struct hand {
    ignition ig;
    ignition_sample s;
    uint64_t t;          /* µs from T0, the last step's */
    uint64_t ignited_at; /* the step that answered 2 from 1 */
    int n_moves;         /* the moves the pool made: when, and to what */
    uint64_t move_at[64];
    int move_to[64];
} hand;

/* A fresh policy of `rule` over a pool of num threads, and its first step
 * at T0, with main's cumulative figures so far (sys_us, user_us). */
static void hand_init_at(hand *h, ignition_rule rule, int num, uint64_t sys_us, uint64_t user_us) {
    memset(h, 0, sizeof *h);
    ignition_init(&h->ig, rule);
    h->s = (ignition_sample){.now_us = T0,
                             .main_user_us = user_us,
                             .main_sys_us = sys_us,
                             .main_active_us = sys_us + user_us,
                             .active = 1,
                             .num = num};
    h->ignited_at = NEVER;
    expect_eq(("threads asked at the first step (it only primes the means)"), ignition_step(&h->ig, &h->s), 1);
}

static void hand_init(hand *h, ignition_rule rule, int num) { hand_init_at(h, rule, num, 0, 0); }

/* One step dt_us after the last, in which main spent sys_us in the kernel
 * and user_us in user space (busy: both), with the inbox holding queued
 * jobs now. The pool takes the answer if obey; returns it. */
static int hand_step_us(hand *h, uint64_t dt_us, uint64_t sys_us, uint64_t user_us, size_t queued, bool obey) {
    h->t += dt_us;
    h->s.now_us = T0 + h->t;
    h->s.main_sys_us += sys_us;
    h->s.main_user_us += user_us;
    h->s.main_active_us += sys_us + user_us;
    h->s.commands += dt_us / 10;
    h->s.queued = queued;
    int target = ignition_step(&h->ig, &h->s);
    expect_ge(("threads asked at %" PRIu64 " ms (at least main)", h->t / MS), target, 1);
    expect_le(("threads asked at %" PRIu64 " ms (num)", h->t / MS), target, h->s.num);
    if (obey && target != h->s.active) {
        assert_true(h->n_moves < 64);
        if (h->s.active == 1 && h->ignited_at == NEVER) h->ignited_at = h->t;
        h->move_at[h->n_moves] = h->t;
        h->move_to[h->n_moves++] = target;
        h->s.active = target;
    }
    return target;
}

/* The same with main's shares in per cent of the step: sys_pct in the
 * kernel, user_pct in user space. */
static int hand_step(hand *h, uint64_t dt_us, unsigned sys_pct, unsigned user_pct, size_t queued, bool obey) {
    return hand_step_us(h, dt_us, dt_us * sys_pct / 100, dt_us * user_pct / 100, queued, obey);
}

/* Main at 100 % sys, one step per 10 ms, until the policy ignites (five
 * CPU samples: 250 ms after the first step); the pool takes it. */
static void hand_ignite(hand *h) {
    for (int i = 0; i < 100 && h->s.active == 1; i++) hand_step(h, 10 * MS, 100, 0, 0, true);
    expect_eq(("threads active after 1 s of main at 100 %% sys"), h->s.active, 2);
    expect_eq(("ignition, ms after the first step (the fifth CPU sample at 100 %% sys puts the mean at 31 %%)"),
              h->ignited_at / MS, 250);
}

/* n steps of 10 ms with the inbox at `queued` (main's CPU is no longer
 * sampled once workers are active), the pool obeying. */
static void hand_queue(hand *h, int n, size_t queued) {
    for (int i = 0; i < n; i++) hand_step(h, 10 * MS, 0, 0, queued, true);
}

/* The rules without a guard, which the scaling tests step. */
static const ignition_rule UNGUARDED[] = {IGNITION_RUSAGE, IGNITION_ACTIVE_TIME};
#define N_UNGUARDED (sizeof UNGUARDED / sizeof UNGUARDED[0])

/* Main at constant levels from the first step on, one CPU sample per
 * 50 ms step; the sample (counted from 1, after the step that primes the
 * means) at which `rule` ignites, or 0 if not within n. */
static int ignites_at_sample(ignition_rule rule, unsigned sys_pct, unsigned user_pct, int n) {
    hand h;
    hand_init(&h, rule, 2);
    for (int k = 1; k <= n; k++)
        if (hand_step(&h, 50 * MS, sys_pct, user_pct, 0, true) == 2) return k;
    return 0;
}

/* The same with CPU samples dt_us apart, main spending sys_us of each in
 * the kernel and nothing in user space (busy: sys). */
static int ignites_at_sample_us(ignition_rule rule, uint64_t dt_us, uint64_t sys_us, int n) {
    hand h;
    hand_init(&h, rule, 2);
    for (int k = 1; k <= n; k++)
        if (hand_step_us(&h, dt_us, sys_us, 0, 0, true) == 2) return k;
    return 0;
}

/* ---- tests ----------------------------------------------------------- */

/* Idle, then 2,000 requests/s: main's sys share stays in single figures
 * and its busy share near 4 %. No rule wakes a thread. */
static void test_light_load_never_ignites(void **state) {
    (void)state;
    trace t = load_trace("recorded-light.csv");
    run runs[N_RULES];
    replay_rules(runs, &t, "pays-open", 4);
    for (size_t k = 0; k < N_RULES; k++) {
        const run r = runs[k];
        expect_eq(("ignitions under a light load (sys near 2 %%, busy near 4 %%), %s", ignition_rule_name(RULES[k])),
                  r.ig.ignitions, 0);
        expect_true(("no ignition under a light load, %s", ignition_rule_name(RULES[k])), r.first_ignition == NEVER);
    }
    free(t.r);
}

/* A step from idle to 60,000 requests/s (open loop): every rule ignites,
 * no sooner than five CPU samples and no later than its lag bound. */
static void test_step_ignites_within_its_lag(void **state) {
    (void)state;
    trace t = load_trace("recorded-step.csv");
    run runs[N_RULES];
    replay_rules(runs, &t, "pays-open", 4);
    for (size_t k = 0; k < N_RULES; k++) {
        const run r = runs[k];
        unsigned level = load_level(&t, RULES[k] == IGNITION_ACTIVE_TIME);
        expect_true(("%s ignites at all under the step's load", ignition_rule_name(RULES[k])),
                    r.first_ignition != NEVER);
        int64_t lag = (int64_t)r.first_ignition - (int64_t)t.on; /* < 0: before the step */
        printf("step, %-11s ignites %" PRId64 " ms %s the step (%.1f cron periods of 100 ms; level %u %%, "
               "bound %" PRIu64 " ms)\n",
               ignition_rule_name(RULES[k]), (lag < 0 ? -lag : lag) / (int64_t)MS, lag < 0 ? "before" : "after",
               (double)(lag < 0 ? -lag : lag) / CRON_US, level, lag_bound(level) / MS);
        expect_ge(("%s: ignition, ms after the step (five CPU samples at least; negative: before the step)",
                   ignition_rule_name(RULES[k])),
                  lag / (int64_t)MS, 250);
        expect_le(("%s: ignition, ms after the step (sample 16 * 30 / %u + 1, and two more)",
                   ignition_rule_name(RULES[k]), level),
                  lag / (int64_t)MS, lag_bound(level) / MS);
        expect_ge(("%s: most threads active under the step (the queue rule takes the pool past ignition's two)",
                   ignition_rule_name(RULES[k])),
                  r.max_active, 3);
        expect_context("test_step_ignites_within_its_lag: the recorded step, %s", ignition_rule_name(RULES[k]));
        assert_counters_match(&r);
    }
    free(t.r);
}

/* The floor: even a step to 100 % sys needs five samples (the fifth puts
 * the mean at 5/16 = 31 %), 250 ms or two and a half cron periods. No
 * rule built on a 16-slot mean can ignite within two cron periods. */
static void test_ignition_needs_five_samples_at_least(void **state) {
    (void)state;
    trace t = constant_trace(0, 100, 100000, 1000, 2000, 500); /* CONSTRUCTED */
    run runs[N_RULES];
    replay_rules(runs, &t, "pays-closed", 2);
    for (size_t k = 0; k < N_RULES; k++) {
        const run r = runs[k];
        /* the fifth CPU sample after the step, which falls up to 10 ms into a 50 ms sample period */
        expect_true(("%s ignites at all after a step to 100 %% sys", ignition_rule_name(RULES[k])),
                    r.first_ignition != NEVER);
        int64_t lag = (int64_t)r.first_ignition - (int64_t)t.on; /* < 0: before the step */
        expect_ge(("%s: ignition, ms after a step to 100 %% sys (negative: before it)", ignition_rule_name(RULES[k])),
                  lag / (int64_t)MS, 210);
        expect_le(("%s: ignition, ms after a step to 100 %% sys", ignition_rule_name(RULES[k])), lag / (int64_t)MS,
                  260);
    }
    free(t.r);
}

/* The rule's clauses, on CONSTRUCTED constant levels (per cent user, sys). */
static void test_rusage_and_active_time_thresholds(void **state) {
    (void)state;
    static const struct {
        unsigned user, sys;
        bool rusage, active_time;
        const char *why;
    } cases[] = {
        {0, 32, true, true, "sys above 30 %"},
        {0, 28, false, false, "below both"},
        {60, 8, true, true, "sys above 5 % and user above 50 %"},
        {60, 4, false, true, "busy 64 %, but sys under 5 %: user alone is not enough for the CPU rule"},
        {20, 12, false, true, "busy 32 %, sys 12 %: only the newer rule"},
    };
    regime g = load_regime("pays-closed");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trace t = constant_trace(cases[i].user, cases[i].sys, 50000, 500, 3000, 0);
        for (size_t k = 0; k < N_RULES; k++) {
            run r;
            replay(&r, &t, RULES[k], 4, &g, 0);
            bool want = RULES[k] == IGNITION_ACTIVE_TIME ? cases[i].active_time : cases[i].rusage;
            expect_eq(("%s, user %u %% sys %u %% for 3 s (%s): ignites (1) or not (0)", ignition_rule_name(RULES[k]),
                       cases[i].user, cases[i].sys, cases[i].why),
                      r.first_ignition != NEVER, want);
        }
        free(t.r);
    }
}

/* After the step's load ends the queue is empty: the first scale-down
 * comes within the cooldown and one decision period of the end (the mean
 * of 16 depths must forget the load, and no scale-down within a second of
 * the last scale-up), and the pool is back to main alone one decision per
 * thread after that. GUARDED then stays there. */
static void test_step_scales_down_after_the_load(void **state) {
    (void)state;
    trace t = load_trace("recorded-step.csv");
    run runs[N_RULES];
    replay_rules(runs, &t, "pays-open", 4);
    for (size_t k = 0; k < N_RULES; k++) {
        const run r = runs[k];
        const char *rule = ignition_rule_name(RULES[k]);
        expect_eq(("%s: most threads active under the step (num)", rule), r.max_active, 4);
        expect_true(("%s scales down after the load ended", rule), r.first_down_after_off != NEVER);
        printf("step, %-11s first scale-down %" PRIu64 " ms after the load ended\n", rule,
               (r.first_down_after_off - t.off) / MS);
        expect_le(("%s: the first scale-down, µs after the load ended (the cooldown and one decision at most)", rule),
                  r.first_down_after_off - t.off, COOLDOWN_US + DECISION_US);
        if (RULES[k] == IGNITION_GUARDED) {
            expect_true(("guarded: main alone again at the end"), r.alone_again != NEVER);
            expect_le(("guarded: main alone again, µs after the load ended (the first scale-down, then one decision "
                       "per thread)"),
                      r.alone_again - t.off, COOLDOWN_US + DECISION_US + 2 * DECISION_US);
            expect_eq(("guarded: ignitions"), r.ig.ignitions, 1);
            expect_eq(("guarded: guard_reverts (the threads paid)"), r.ig.guard_reverts, 0);
        }
    }
    free(t.r);
}

/* Threads that find nothing to do are parked, but not within a second of
 * their ignition: the pinned rules' first scale-down comes at the first
 * decision after the cooldown. */
static void test_no_scale_down_within_the_cooldown(void **state) {
    (void)state;
    trace t = load_trace("recorded-burst.csv");
    run runs[N_RULES];
    replay_rules(runs, &t, "idle-queue", 4);
    for (size_t k = 1; k < N_RULES; k++) {
        const run r = runs[k];
        expect_eq(("%s: most threads active with nothing queued", ignition_rule_name(RULES[k])), r.max_active, 2);
        if (r.first_down == NEVER)
            fail_msg("%s: the first scale-down, µs after ignition (the first decision past the 1 s cooldown): got "
                     "never, the contract allows at most %" PRIu64,
                     ignition_rule_name(RULES[k]), COOLDOWN_US + DECISION_US + IGNITION_SAMPLE_US);
        expect_ge(
            ("%s: the first scale-down, µs after ignition (the cooldown is 1 s, strict)", ignition_rule_name(RULES[k])),
            r.first_down - r.first_ignition, COOLDOWN_US + 1);
        expect_le(("%s: the first scale-down, µs after ignition (the first decision past the cooldown)",
                   ignition_rule_name(RULES[k])),
                  r.first_down - r.first_ignition, COOLDOWN_US + DECISION_US + IGNITION_SAMPLE_US);
    }
    free(t.r);
}

/* A 1 s closed-loop burst (50 connections, main's sys near 85 %): every
 * rule ignites inside the burst and the threads are parked after it. */
static void test_burst(void **state) {
    (void)state;
    trace t = load_trace("recorded-burst.csv");
    run runs[N_RULES];
    replay_rules(runs, &t, "pays-closed", 4);
    for (size_t k = 0; k < N_RULES; k++) {
        const run r = runs[k];
        unsigned level = load_level(&t, RULES[k] == IGNITION_ACTIVE_TIME);
        const char *rule = ignition_rule_name(RULES[k]);
        expect_true(("%s ignites at all during the burst", rule), r.first_ignition != NEVER);
        int64_t into = (int64_t)r.first_ignition - (int64_t)t.on; /* < 0: before the burst */
        printf("burst, %-11s ignites %" PRId64 " ms %s (level %u %%)\n", rule, (into < 0 ? -into : into) / (int64_t)MS,
               into < 0 ? "before it" : "into it", level);
        expect_ge(("%s: ignition, µs into the burst (negative: before it)", rule), into, 0);
        expect_le(("%s: ignition, µs into the burst (sample 16 * 30 / %u + 1, and two more)", rule, level), into,
                  lag_bound(level));
        expect_le(("%s: ignition, µs into the burst (it lasts %" PRIu64 " ms)", rule, (t.off - t.on) / MS), into,
                  t.off - t.on - 1);
        expect_true(("%s scales down after the burst", rule), r.first_down_after_off != NEVER);
        expect_le(("%s: the first scale-down, µs after the burst (the cooldown and one decision at most)", rule),
                  r.first_down_after_off - t.off, COOLDOWN_US + DECISION_US);
        expect_context("test_burst: the recorded burst, %s", ignition_rule_name(RULES[k]));
        assert_counters_match(&r);
    }
    free(t.r);
}

/* The pinned rules sample main's CPU only while it is alone, so after the
 * burst the mean still holds the burst: back at one thread they ignite
 * again with no load at all. GUARDED starts the mean afresh and does not. */
static void test_stale_mean_reignites_the_pinned_rules(void **state) {
    (void)state;
    trace t = load_trace("recorded-burst.csv");
    regime g = load_regime("pays-closed");
    run r;
    replay(&r, &t, IGNITION_RUSAGE, 4, &g, 0);
    printf("burst, rusage      ignitions after the load ended: %d\n", r.ignitions_after_off);
    expect_ge(("rusage: ignitions after the burst ended (the mean, sampled only while main is alone, still holds "
               "it)"),
              r.ignitions_after_off, 1);
    replay(&r, &t, IGNITION_ACTIVE_TIME, 4, &g, 0);
    expect_ge(("active-time: ignitions after the burst ended (the mean still holds it)"), r.ignitions_after_off, 1);
    replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
    expect_eq(("guarded: ignitions after the burst ended (it starts the mean afresh back at one thread)"),
              r.ignitions_after_off, 0);
    expect_eq(("guarded: ignitions"), r.ig.ignitions, 1);
    expect_true(("guarded: main alone again at the end"), r.alone_again != NEVER);
    free(t.r);
}

/* Two cores at pipeline 1: threads halve throughput (closed loop) or take
 * nothing off main (open loop). GUARDED sends them back to sleep after
 * one probation (settle 100 ms + window 300 ms, one step late at most);
 * RUSAGE keeps them for the whole load. */
static void test_guard_reverts_when_threads_do_not_pay(void **state) {
    (void)state;
    static const struct {
        const char *trace, *regime;
    } cases[] = {{"recorded-burst.csv", "nopay-closed"}, {"recorded-step.csv", "nopay-open"}};
    for (size_t i = 0; i < 2; i++) {
        trace t = load_trace(cases[i].trace);
        regime g = load_regime(cases[i].regime);
        run guarded, rusage;
        replay(&guarded, &t, IGNITION_GUARDED, 4, &g, 0);
        replay(&rusage, &t, IGNITION_RUSAGE, 4, &g, 0);
        printf("%s with %s: threads active %" PRIu64 " ms of the load (guarded), %" PRIu64
               " ms (rusage); reverts %" PRIu64 "\n",
               cases[i].trace, cases[i].regime, guarded.threaded_load_us / MS, rusage.threaded_load_us / MS,
               guarded.ig.guard_reverts);
        expect_context("test_guard_reverts_when_threads_do_not_pay: %s with regime %s", cases[i].trace,
                       cases[i].regime);
        expect_ge(("guarded: guard_reverts"), guarded.ig.guard_reverts, 1);
        expect_eq(("rusage: guard_reverts (no guard)"), rusage.ig.guard_reverts, 0);
        /* one probation per ignition, and nothing more */
        expect_le(("guarded: µs with workers active, against %" PRIu64 " ignitions of one 400 ms probation each (a "
                   "step or two late at most)",
                   guarded.ig.ignitions),
                  guarded.threaded_us, guarded.ig.ignitions * (400 * MS + 2 * IGNITION_SAMPLE_US));
        expect_le(("guarded: µs with workers active during the load, against rusage's %" PRIu64 " (fewer)",
                   rusage.threaded_load_us),
                  guarded.threaded_load_us, rusage.threaded_load_us - 1);
        expect_context("test_guard_reverts_when_threads_do_not_pay: %s with regime %s, guarded", cases[i].trace,
                       cases[i].regime);
        assert_counters_match(&guarded);
        free(t.r);
    }
}

/* The same judgement when threads make each command cheaper for main but
 * the clients get fewer answers: throughput counts first. */
static void test_guard_reverts_cheaper_but_slower(void **state) {
    (void)state;
    trace t = load_trace("recorded-burst.csv");
    regime g = load_regime("nopay-slower");
    run r;
    replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
    expect_eq(("guard_reverts (main's CPU per command fell, but so did throughput)"), r.ig.guard_reverts, 1);
    free(t.r);
}

/* CONSTRUCTED: a step to 100 % sys ignites 250 ms in, the fastest any
 * rule can; threads then cost a tenth of the throughput. "Before" must
 * not reach back into the idle time ahead of the step, or the loss would
 * look like a gain. */
static void test_guard_before_window_stays_inside_the_load(void **state) {
    (void)state;
    trace t = constant_trace(0, 100, 100000, 1000, 2000, 0);
    regime g = load_regime("nopay-slight");
    run r;
    replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
    expect_ge(("guard_reverts"), r.ig.guard_reverts, 1);
    expect_eq(("the revert, ms after ignition (settle 100 ms + window 300 ms, exactly)"),
              (r.first_down - r.first_ignition) / MS, 400);
    free(t.r);
}

/* CONSTRUCTED: a 400 ms step to 100 % sys, with threads that would pay.
 * The load ends during the probation's window, so throughput falls for a
 * reason that is not the threads. The guard does not tell the two apart:
 * it parks the pool at the end of the window (which the load's end calls
 * for anyway) and the only cost is a 1 s backoff. */
static void test_guard_parks_the_pool_when_the_load_leaves(void **state) {
    (void)state;
    trace t = constant_trace(0, 100, 100000, 1000, 400, 2000);
    regime g = load_regime("pays-closed");
    run r;
    replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
    expect_eq(("ignitions"), r.ig.ignitions, 1);
    expect_eq(("guard_reverts"), r.ig.guard_reverts, 1);
    expect_eq(("backoff_us after one revert, ms"), r.ig.backoff_us / MS, 1000);
    expect_eq(("main alone again, ms after ignition (the end of the probation's window)"),
              (r.alone_again - r.first_ignition) / MS, 400);
    free(t.r);
}

/* Threads that pay, but whose first 100 ms are worse than main alone
 * (the worker waits for the scheduler): the probation lets them settle
 * before it measures, and keeps them. */
static void test_guard_lets_the_pool_settle(void **state) {
    (void)state;
    trace t = load_trace("recorded-step.csv");
    regime g = load_regime("pays-open-slow-start");
    run r;
    replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
    expect_eq(("ignitions (the probation kept the threads: no second try)"), r.ig.ignitions, 1);
    expect_eq(("guard_reverts (the slow first 100 ms fall in the settle, which the probation does not measure)"),
              r.ig.guard_reverts, 0);
    free(t.r);
}

/* CONSTRUCTED: the recorded burst's load repeated for a minute; for its
 * first 20 s threads do not pay, then they do (say the clients started
 * pipelining). The guard tries again once the backoff runs out, keeps the
 * threads this time, and forgets the backoff. */
static void test_guard_tries_again_and_resets_the_backoff(void **state) {
    (void)state;
    trace src = load_trace("recorded-burst.csv");
    trace t = looped_trace(&src, 60);
    regime nopay = load_regime("nopay-closed"), pays = load_regime("pays-closed");
    run r;
    replay_pool(&r, &t, IGNITION_GUARDED, 4, (pool){&nopay, &pays, t.on + 20000 * MS, 0});
    expect_ge(("guard_reverts in the first 20 s, where threads do not pay (1, 2, 4 and 8 s of backoff)"),
              r.ig.guard_reverts, 4);
    expect_eq(("backoff_us at the end (a probation that paid resets it)"), r.ig.backoff_us, 0);
    expect_true(("an ignition at all"), r.n_ignitions > 0);
    expect_le(("the last ignition, µs after the load began (by the end of the 16 s backoff after the switch at "
               "20 s, and one more second)"),
              r.ignition_at[r.n_ignitions - 1] - t.on, (20000 + 16000 + 1000) * MS);
    expect_ge(("ms with workers active during the load (the threads kept once they pay)"), r.threaded_load_us / MS,
              20000);
    expect_eq(("most threads active"), r.max_active, 4);
    free(src.r);
    free(t.r);
}

/* Threads that pay are kept: more commands/s (closed loop), or the same
 * commands/s for much less of main's CPU per command (open loop). During
 * the probation the pool stays at two threads, so that what is measured
 * is one thread against two, and the first decision after it is the 48th
 * step (480 ms), the probation's steps being depth samples; the pinned
 * rule may scale up sooner. */
static void test_guard_keeps_threads_that_pay(void **state) {
    (void)state;
    static const struct {
        const char *trace, *regime;
    } cases[] = {{"recorded-burst.csv", "pays-closed"}, {"recorded-step.csv", "pays-open"}};
    for (size_t i = 0; i < 2; i++) {
        trace t = load_trace(cases[i].trace);
        regime g = load_regime(cases[i].regime);
        run r;
        replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
        expect_context("test_guard_keeps_threads_that_pay: %s with regime %s, guarded", cases[i].trace,
                       cases[i].regime);
        expect_eq(("guard_reverts (the threads paid)"), r.ig.guard_reverts, 0);
        expect_eq(("backoff_us"), r.ig.backoff_us, 0);
        expect_ge(("most threads active (the queue rule took it past the probation's two)"), r.max_active, 3);
        /* the probation's 40 steps are depth samples: the first decision
         * after it is the 48th row after ignition, 480 ms give or take the
         * recorded rows' jitter (under a millisecond here) */
        expect_context("test_guard_keeps_threads_that_pay: %s with regime %s, guarded", cases[i].trace,
                       cases[i].regime);
        expect_ge(("the first scale-up, ms after ignition (the 48th depth sample)"),
                  (r.first_scale_up - r.first_ignition) / MS, 475);
        expect_le(("the first scale-up, ms after ignition (the 48th depth sample)"),
                  (r.first_scale_up - r.first_ignition) / MS, 485);
        run pinned;
        replay(&pinned, &t, IGNITION_RUSAGE, 4, &g, 0);
        expect_true(("rusage: a scale-up past two threads"), pinned.first_scale_up != NEVER);
        expect_le(("rusage: the first scale-up, ms after ignition (no probation holds it at two)"),
                  (pinned.first_scale_up - pinned.first_ignition) / MS, 399);
        free(t.r);
    }
}

/* CONSTRUCTED: the recorded burst's load repeated for five minutes, on a
 * machine where threads never pay. Each revert waits twice as long as the
 * last before trying again, never more than 64 s, so the threads are
 * awake (and hurting) for a small, bounded share of the time. */
static void test_backoff_is_bounded(void **state) {
    (void)state;
    trace src = load_trace("recorded-burst.csv");
    trace t = looped_trace(&src, 300);
    regime g = load_regime("nopay-closed");
    run r;
    replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
    expect_ge(("ignitions in 300 s (backoffs of 1, 2, 4 ... 64 s)"), r.n_ignitions, 8);
    expect_le(("ignitions in 300 s (backoffs of 1, 2, 4 ... 64 s)"), r.n_ignitions, 15);
    expect_eq(("the longest backoff, µs (the cap)"), r.max_backoff, 64000 * MS);
    uint64_t prev_gap = 0;
    for (int i = 1; i < r.n_ignitions; i++) {
        uint64_t gap = r.ignition_at[i] - r.ignition_at[i - 1];
        uint64_t backoff = (1000 * MS) << (i - 1 < 6 ? i - 1 : 6);
        /* Backing off; a probation cut short by a collapse may end up to a
         * full window sooner than the one before it. */
        expect_ge(("µs between ignitions %d and %d (the backoff after revert %d)", i, i + 1, i), gap, backoff);
        expect_ge(("µs between ignitions %d and %d, plus 500 ms (no gap is shorter than the one before it by more "
                   "than a probation cut short)",
                   i, i + 1),
                  gap + 500 * MS, prev_gap);
        expect_le(("µs between ignitions %d and %d (the backoff after revert %d, and a probation)", i, i + 1, i), gap,
                  backoff + 500 * MS);
        prev_gap = gap;
    }
    double share = (double)r.threaded_load_us / (double)(t.off - t.on);
    printf("looped burst, nopay-closed, 300 s: %d ignitions, threads awake %.2f %% of the load\n", r.n_ignitions,
           100 * share);
    expect_true(("threads awake %.2f %% of the load, which must stay under 3 %%", 100 * share), share < 0.03);
    expect_context("test_backoff_is_bounded: the burst looped for 300 s, threads never pay");
    assert_counters_match(&r);
    free(src.r);
    free(t.r);
}

/* The pool refuses scale-downs: the policy asks again at later decisions
 * (and a revert at every step) and counts only what the pool did. */
static void test_refused_scale_downs_are_asked_again(void **state) {
    (void)state;
    trace t = load_trace("recorded-step.csv");
    regime pays = load_regime("pays-open"), nopay = load_regime("nopay-open");
    run r;
    replay(&r, &t, IGNITION_GUARDED, 4, &pays, 3);
    expect_true(("guarded, the pool refusing 3 scale-downs: main alone again at the end"), r.alone_again != NEVER);
    expect_eq(("guarded, the pool refusing 3 scale-downs: scale_downs (the three it made, 4 -> 1)"), r.ig.scale_downs,
              3);
    expect_context("test_refused_scale_downs_are_asked_again: the recorded step, the pool refusing 3 scale-downs");
    assert_counters_match(&r);
    run refused;
    replay(&refused, &t, IGNITION_GUARDED, 4, &nopay, 5);
    replay(&r, &t, IGNITION_GUARDED, 4, &nopay, 0);
    expect_eq(("guarded, threads that do not pay: guard_reverts with 5 moves down refused, against none refused"),
              refused.ig.guard_reverts, r.ig.guard_reverts);
    /* five refused steps: about 50 ms more with threads awake (rows are 10 ms apart, give or take) */
    expect_ge(("guarded, threads that do not pay: µs more with workers active when the pool refuses 5 moves down "
               "(a revert is asked again at every step)"),
              refused.threaded_us - r.threaded_us, 4 * IGNITION_SAMPLE_US);
    expect_le(("guarded, threads that do not pay: µs more with workers active when the pool refuses 5 moves down"),
              refused.threaded_us - r.threaded_us, 6 * IGNITION_SAMPLE_US);
    expect_context("test_refused_scale_downs_are_asked_again: threads that do not pay, the pool refusing 5 moves down");
    assert_counters_match(&refused);
    free(t.r);
}

/* Whatever it is fed — counters that jump, active outside 1..num, num
 * changing under it — the answer is within 1..num (1 when num < 1). */
static void test_target_always_in_range(void **state) {
    (void)state;
    srand(12345);
    for (size_t k = 0; k < N_RULES; k++) {
        ignition ig;
        ignition_init(&ig, RULES[k]);
        ignition_sample s = {.now_us = 1};
        for (int i = 0; i < 200000; i++) {
            s.now_us += (uint64_t)(rand() % 30000);
            s.main_user_us += (uint64_t)(rand() % 20000);
            s.main_sys_us += (uint64_t)(rand() % 20000);
            s.main_active_us += (uint64_t)(rand() % 20000);
            s.commands += (uint64_t)(rand() % 3000);
            s.queued = (size_t)(rand() % 4);
            if (rand() % 500 == 0) s.num = rand() % 10 - 1;
            s.active = rand() % 8 ? s.active : rand() % 12 - 2;
            int target = ignition_step(&ig, &s);
            expect_ge(("%s: threads asked at random step %d (at least main)", ignition_rule_name(RULES[k]), i), target,
                      1);
            expect_le(("%s: threads asked at random step %d, num %d (1 when num < 1)", ignition_rule_name(RULES[k]), i,
                       s.num),
                      target, s.num < 1 ? 1 : s.num);
            if (rand() % 4) s.active = target; /* the pool mostly obeys */
        }
    }
}

/* A pool of one never wakes a thread; a pool of two, under a queue that
 * asks for more at every decision, never asks for a third. */
static void test_one_thread_is_always_one(void **state) {
    (void)state;
    trace t = load_trace("recorded-burst.csv");
    run runs[N_RULES];
    replay_rules(runs, &t, "pays-closed", 1);
    for (size_t k = 0; k < N_RULES; k++) {
        const run r = runs[k];
        expect_true(("%s, a pool of one: no ignition", ignition_rule_name(RULES[k])), r.first_ignition == NEVER);
    }
    replay_rules(runs, &t, "pays-closed", 2);
    for (size_t k = 0; k < N_RULES; k++) {
        const run r = runs[k];
        expect_true(("%s, a pool of two: an ignition during the burst", ignition_rule_name(RULES[k])),
                    r.first_ignition != NEVER);
        expect_eq(("%s, a pool of two: most threads active (num)", ignition_rule_name(RULES[k])), r.max_active, 2);
        expect_eq(
            ("%s, a pool of two: scale_ups (a third thread asked for, though num is 2)", ignition_rule_name(RULES[k])),
            r.ig.scale_ups, 0);
    }
    free(t.r);
}

/* CONSTRUCTED: main at a constant level from the first sample on. The
 * mean counts all 16 slots, so it passes 30 % at sample floor(16 * 30 /
 * L) + 1 exactly, under every rule (here busy = sys): not sooner (a mean
 * of the samples taken so far, or of fewer than 16 slots, would be
 * higher), not later. At 30 % it never passes. */
static void test_mean_is_sixteen_samples(void **state) {
    (void)state;
    static const unsigned levels[] = {100, 60, 50, 40, 33, 32, 31};
    for (size_t k = 0; k < N_RULES; k++) {
        for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
            int want = (int)(16 * 30 / levels[i]) + 1;
            int got = ignites_at_sample(RULES[k], levels[i], 0, 40);
            if (got != want)
                fail_msg("%s, sys %u %%: ignites at sample %d, want %d", ignition_rule_name(RULES[k]), levels[i], got,
                         want);
        }
        expect_eq(("%s, sys 30 %%: the CPU sample that ignites (0: none of 40; 30 %% is not above 30 %%)",
                   ignition_rule_name(RULES[k])),
                  ignites_at_sample(RULES[k], 30, 0, 40), 0);
    }
}

/* CONSTRUCTED: each threshold is a strict "above", and the second clause
 * of the CPU rule needs both its halves. Levels in per cent (sys, user),
 * exact in parts per million; 40 samples (2 s) of each. */
static void test_thresholds_are_strict(void **state) {
    (void)state;
    static const struct {
        unsigned sys, user;
        bool cpu, active_time; /* RUSAGE and GUARDED; ACTIVE_TIME (busy = sys + user) */
    } cases[] = {
        {30, 0, false, false}, /* sys at 30 %, busy at 30 %: neither */
        {31, 0, true, true},   /* just above */
        {5, 60, false, true},  /* sys at 5 %: the second clause needs more */
        {6, 60, true, true},   /* just above */
        {8, 50, false, true},  /* user at 50 %: the second clause needs more */
        {8, 51, true, true},   /* just above */
        {5, 25, false, false}, /* busy at 30 % */
        {5, 26, false, true},  /* busy 31 %, sys 5 % */
        {0, 90, false, true},  /* user alone never wakes the CPU rule */
        {25, 0, false, false}, /* sys 25 % alone: the second clause needs user */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (size_t k = 0; k < N_RULES; k++) {
            bool want = RULES[k] == IGNITION_ACTIVE_TIME ? cases[i].active_time : cases[i].cpu;
            bool got = ignites_at_sample(RULES[k], cases[i].sys, cases[i].user, 40) != 0;
            if (got != want)
                fail_msg("%s, sys %u %% user %u %%: %s", ignition_rule_name(RULES[k]), cases[i].sys, cases[i].user,
                         got ? "ignites" : "does not ignite");
        }
    }
}

/* CONSTRUCTED: a server that has run a while when the policy starts (or
 * whose rule was just changed, which starts a fresh policy): main's
 * cumulative sys is already 4.5 s at the first sample. That sample only
 * sets where the next is measured from; counted as a rate from zero it
 * would put 90 % into one slot, and a load at 28 % would then ignite. */
static void test_first_sample_only_primes(void **state) {
    (void)state;
    for (size_t k = 0; k < N_RULES; k++) {
        hand h;
        hand_init_at(&h, RULES[k], 2, 4500 * MS, 0);
        for (int i = 0; i < 40; i++)
            expect_eq(("%s: threads asked at CPU sample %d, main at 28 %% sys after 4.5 s already spent "
                       "(the first call only primes)",
                       ignition_rule_name(RULES[k]), i + 1),
                      hand_step(&h, 50 * MS, 28, 0, 0, true), 1);
    }
}

/* CONSTRUCTED: the mean is the 16 slots' sum divided by 16, rounded
 * down. Fifteen CPU samples at exactly 30 % sys (15,000 µs in 50,000)
 * and a sixteenth of 15,001 µs in 50,001 (300,013 ppm): the slots sum to
 * 4,800,013, the mean is 300,000, not above 30 %, and nothing ignites;
 * a mean rounded to nearest reads 300,001 and ignites there. A sixteenth
 * of 15,001 µs in 50,000 (300,020 ppm: the sum 4,800,020, the mean
 * 300,001) does ignite, at that sample. Busy is sys here, so active-time
 * reads the same sums. The CPU samples of a real main thread are not all
 * 50,000 µs apart, so their sums fall anywhere, not only on multiples of
 * 20 ppm as the levels of the other tests do. */
static void test_mean_is_rounded_down(void **state) {
    (void)state;
    static const struct {
        uint64_t dt_us; /* the sixteenth sample's span, with 15,001 µs of sys in it */
        uint64_t sum;   /* the 16 slots' sum, ppm */
        int want;       /* threads asked at the sixteenth sample */
    } cases[] = {{50001, 4800013, 1}, {50000, 4800020, 2}};
    for (size_t k = 0; k < N_RULES; k++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            hand h;
            hand_init(&h, RULES[k], 2);
            for (int i = 1; i <= 15; i++)
                expect_eq(
                    ("%s: threads asked at CPU sample %d, main at exactly 30 %% sys", ignition_rule_name(RULES[k]), i),
                    hand_step_us(&h, 50 * MS, 15000, 0, 0, true), 1);
            expect_eq(("%s: threads asked at CPU sample 16 (15,001 µs of sys in %" PRIu64 " µs): the slots sum to "
                       "%" PRIu64 " ppm, mean %" PRIu64 " rounded down",
                       ignition_rule_name(RULES[k]), cases[c].dt_us, cases[c].sum, cases[c].sum / 16),
                      hand_step_us(&h, cases[c].dt_us, 15001, 0, 0, true), cases[c].want);
        }
    }
}

/* CONSTRUCTED: a sample is the increase × 1,000,000 / the µs between the
 * two calls, to the microsecond. The server takes a CPU sample at the
 * first step 50 ms or more after the last, on a step that jitters, so
 * the span is seldom a whole number of milliseconds. Here every sample
 * spans 50,999 µs: with 15,299 µs of sys in each, 299,986 ppm, under
 * 30 %, nothing ignites in 40 samples (a rate over the whole
 * milliseconds, 50, reads 305,980 and ignites at the sixteenth); with
 * 15,301 µs in each, 300,025 ppm, the mean passes 30 % when the window
 * is full, at the sixteenth. */
static void test_rate_is_per_microsecond(void **state) {
    (void)state;
    for (size_t k = 0; k < N_RULES; k++) {
        expect_eq(("%s: the CPU sample that ignites (0: none of 40), main at 15,299 µs of sys in every 50,999 µs, "
                   "299,986 ppm",
                   ignition_rule_name(RULES[k])),
                  ignites_at_sample_us(RULES[k], 50999, 15299, 40), 0);
        expect_eq(("%s: the CPU sample that ignites, main at 15,301 µs of sys in every 50,999 µs, 300,025 ppm (the "
                   "16th: the window full)",
                   ignition_rule_name(RULES[k])),
                  ignites_at_sample_us(RULES[k], 50999, 15301, 40), 16);
    }
}

/* CONSTRUCTED: after ignition the inbox holds two jobs at every step.
 * Each decision (every 16th step, 160 ms) adds one thread, up to num:
 * 1 -> 2 at ignition, then 3 and 4 at the next two decisions, and
 * nothing between decisions or past num. */
static void test_scale_up_one_thread_per_decision(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        expect_context("test_scale_up_one_thread_per_decision, %s", ignition_rule_name(UNGUARDED[k]));
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        hand_queue(&h, 80, 2);
        expect_eq(("moves in 800 ms of two jobs queued, ignition included (1 -> 2 -> 3 -> 4, then num)"), h.n_moves, 3);
        uint64_t i = h.ignited_at;
        expect_eq(("threads asked at ignition"), h.move_to[0], 2);
        expect_eq(("threads after the first decision"), h.move_to[1], 3);
        expect_eq(("the first scale-up, ms after ignition (the 16th depth sample)"), (h.move_at[1] - i) / MS,
                  DECISION_US / MS);
        expect_eq(("threads after the second decision"), h.move_to[2], 4);
        expect_eq(("the second scale-up, ms after ignition (the 32nd depth sample)"), (h.move_at[2] - i) / MS,
                  2 * DECISION_US / MS);
    }
}

/* CONSTRUCTED: the decision is on the integer mean of the last 16
 * depths, not on the depth at the decision: 15 depths of 2 and one of 1
 * sum to 31, mean 1, and hold; 16 of 2, mean 2, add a thread; 15 of 3 and
 * a last 0 (mean 2) add one too, while 15 of 0 and a last 5 (mean 0) hold
 * within the cooldown. */
static void test_scale_decides_on_the_mean_depth(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        expect_context("test_scale_decides_on_the_mean_depth, %s", ignition_rule_name(UNGUARDED[k]));
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        uint64_t i = h.ignited_at;
        hand_queue(&h, 15, 2);
        hand_queue(&h, 1, 1);
        expect_eq(("threads after decision 1: depths sum to 31, mean 1, so hold"), h.s.active, 2);
        hand_queue(&h, 15, 0);
        hand_queue(&h, 1, 5);
        expect_eq(("threads after decision 2: mean 0 inside the cooldown, 5 queued now, so hold"), h.s.active, 2);
        hand_queue(&h, 15, 3);
        hand_queue(&h, 1, 0);
        expect_eq(("threads after decision 3: depths sum to 45, mean 2, nothing queued now, so one more"), h.s.active,
                  3);
        expect_eq(("the scale-up, ms after ignition (decision 3)"), (h.move_at[1] - i) / MS, 3 * DECISION_US / MS);
        hand_queue(&h, 16, 2);
        expect_eq(("threads after decision 4: mean 2, so one more"), h.s.active, 4);
        expect_eq(("moves, ignition included"), h.n_moves, 3);
    }
}

/* CONSTRUCTED: while a job waits on average (mean depth 1) the pool keeps
 * its threads, however long: a scale-down needs a mean of exactly 0. The
 * mean is rounded down, so 15 depths of 1 and one of 0 (sum 15) read as
 * empty: that decision scales down, the cooldown long over. */
static void test_scale_down_waits_for_an_empty_queue(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        expect_context("test_scale_down_waits_for_an_empty_queue, %s", ignition_rule_name(UNGUARDED[k]));
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        hand_queue(&h, 20 * 16, 1); /* 3.2 s, twenty decisions at mean 1 */
        expect_eq(("moves after twenty decisions at mean depth 1 (ignition only: a job waits, keep the threads)"),
                  h.n_moves, 1);
        hand_queue(&h, 15, 1);
        hand_queue(&h, 1, 0);
        expect_eq(("moves after decision 21, depths summing to 15 (mean 0)"), h.n_moves, 2);
        expect_eq(("threads after decision 21"), h.move_to[1], 1);
        expect_eq(("the scale-down, ms after ignition (decision 21)"), (h.move_at[1] - h.ignited_at) / MS,
                  21 * DECISION_US / MS);
    }
}

/* CONSTRUCTED: a scale-down is decided on the mean alone. Seven decisions
 * after ignition (1,120 ms, the cooldown over), the ring's 16 depths are
 * 15 zeros and a last 15: they sum to 15, the mean is 0, so the pool
 * scales down at that decision, though 15 jobs are queued at that very
 * step. A policy that also wants the depth now to be 0 holds there. */
static void test_scale_down_on_a_mean_of_zero_whatever_the_depth_now(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        expect_context("test_scale_down_on_a_mean_of_zero_whatever_the_depth_now, %s",
                       ignition_rule_name(UNGUARDED[k]));
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        hand_queue(&h, 6 * 16 + 15, 0);
        expect_eq(("threads before decision 7 (inside the cooldown, and between decisions)"), h.s.active, 2);
        hand_queue(&h, 1, 15);
        expect_eq(("threads after decision 7: depths 0 x 15 and a last 15, mean 0, cooldown over; "
                   "a scale-down that also needs the depth now to be 0 holds here"),
                  h.s.active, 1);
        expect_eq(("the scale-down, ms after ignition (decision 7)"), (h.move_at[1] - h.ignited_at) / MS,
                  7 * DECISION_US / MS);
    }
}

/* CONSTRUCTED: the cooldown is one second from the last ignition or
 * scale-up, strictly: no scale-down at a decision exactly 1 s after
 * ignition; a scale-up starts it again; a scale-down does not, so the
 * pool shrinks one thread per decision once it is over; and it runs from
 * the last move up, not from the end of the load (the last decision that
 * saw jobs). */
static void test_cooldown_runs_from_the_last_scale_up(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        const char *rule = ignition_rule_name(UNGUARDED[k]);
        /* an empty queue from ignition on: the first decision past 1 s,
         * the seventh (1,120 ms). (Back at one thread, the pinned rules
         * would soon ignite again on their stale mean: each case stops at
         * its last move.) */
        expect_context("test_cooldown_runs_from_the_last_scale_up, %s: an empty inbox from ignition on", rule);
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        hand_queue(&h, 7 * 16, 0);
        expect_eq(("moves in 1,120 ms, ignition included"), h.n_moves, 2);
        expect_eq(("the scale-down, ms after ignition (decision 7, the first past the 1 s cooldown)"),
                  (h.move_at[1] - h.ignited_at) / MS, 7 * DECISION_US / MS);

        /* decisions 1 s apart (an idle loop turns slowly): the first falls
         * exactly 1 s after ignition and holds, the second scales down */
        expect_context("test_cooldown_runs_from_the_last_scale_up, %s: decisions 1 s apart", rule);
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        for (int i = 0; i < 16; i++) hand_step(&h, COOLDOWN_US / 16, 0, 0, 0, true);
        expect_eq(("threads after a decision exactly 1,000 ms after ignition (the cooldown is strict)"), h.s.active, 2);
        for (int i = 0; i < 16; i++) hand_step(&h, COOLDOWN_US / 16, 0, 0, 0, true);
        expect_eq(("threads after the decision 2,000 ms after ignition"), h.s.active, 1);
        expect_eq(("the scale-down, ms after ignition"), (h.move_at[1] - h.ignited_at) / MS, 2 * COOLDOWN_US / MS);

        /* two scale-ups, then an empty queue: the cooldown counts from
         * the second scale-up, and the pool then shrinks one thread per
         * decision */
        expect_context("test_cooldown_runs_from_the_last_scale_up, %s: two scale-ups, then an empty inbox", rule);
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        uint64_t i0 = h.ignited_at;
        hand_queue(&h, 2 * 16, 2);
        expect_eq(("threads after two decisions at mean depth 2"), h.s.active, 4);
        hand_queue(&h, 9 * 16, 0);
        expect_eq(("moves: ignition, two scale-ups, three scale-downs"), h.n_moves, 6);
        uint64_t up = i0 + 2 * DECISION_US;
        expect_eq(("the second scale-up, ms after ignition"), (h.move_at[2] - i0) / MS, 2 * DECISION_US / MS);
        expect_eq(("the first scale-down, ms after the second scale-up (7 decisions: the cooldown runs from it)"),
                  (h.move_at[3] - up) / MS, 7 * DECISION_US / MS);
        expect_eq(("the second scale-down, ms after the second scale-up (the next decision)"), (h.move_at[4] - up) / MS,
                  8 * DECISION_US / MS);
        expect_eq(("the third scale-down, ms after the second scale-up (the next decision)"), (h.move_at[5] - up) / MS,
                  9 * DECISION_US / MS);
        expect_eq(("threads after the third scale-down"), h.move_to[5], 1);

        /* a load that keeps one job queued for 3 s after ignition, then
         * none: the cooldown is long over, and the first decision on an
         * empty queue scales down */
        expect_context("test_cooldown_runs_from_the_last_scale_up, %s: one job queued for 3.2 s, then none", rule);
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        hand_queue(&h, 20 * 16, 1);
        hand_queue(&h, 16, 0);
        expect_eq(("moves, ignition included"), h.n_moves, 2);
        expect_eq(("the scale-down, ms after ignition (decision 21, the first on an empty inbox)"),
                  (h.move_at[1] - h.ignited_at) / MS, 21 * DECISION_US / MS);
    }
}

/* CONSTRUCTED: only a move up restarts the cooldown. A pool of two, at
 * num from its ignition on, under five queued jobs for 3.2 s: every
 * decision wants a thread more and there is none to add, so nothing
 * moves, and the cooldown still runs from the ignition. When the inbox
 * empties, the first decision on it, the 21st (3,360 ms after ignition),
 * scales down. A policy that restarts the cooldown at a decision that
 * added no thread waits a second after the last decision that saw the
 * queue, to the 27th (4,320 ms). */
static void test_a_pool_at_num_keeps_its_cooldown(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        expect_context("test_a_pool_at_num_keeps_its_cooldown, %s", ignition_rule_name(UNGUARDED[k]));
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        hand_queue(&h, 20 * 16, 5);
        expect_eq(("moves in 3.2 s of five jobs queued, the pool at num (the ignition only)"), h.n_moves, 1);
        /* the inbox empty, until the pool moves (back at one thread the
         * pinned rules would ignite again on their stale mean) */
        for (int i = 0; i < 10 * 16 && h.s.active > 1; i++) hand_queue(&h, 1, 0);
        expect_eq(("threads within ten decisions of an empty inbox"), h.s.active, 1);
        expect_eq(("the scale-down, ms after ignition (decision 21, the first on an empty inbox: the last move up "
                   "was the ignition, more than a second before)"),
                  (h.move_at[1] - h.ignited_at) / MS, 21 * DECISION_US / MS);
    }
}

/* CONSTRUCTED: the pool refuses the scale-downs (a worker's inbox still
 * holds jobs: io_threads_set_active). The policy asks at each decision
 * and answers the threads active between them; it counts nothing and
 * leaves io_threads_last_change_us at the ignition until the pool moves,
 * then counts that move, stamped with the step that asked for it. */
static void test_refused_scale_down_counts_nothing(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        expect_context("test_refused_scale_down_counts_nothing, %s", ignition_rule_name(UNGUARDED[k]));
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        uint64_t i0 = h.ignited_at;
        int asked = 0;
        for (int d = 1; d <= 10; d++) {
            for (int i = 1; i <= 16; i++) {
                int target = hand_step(&h, 10 * MS, 0, 0, 0, false);
                if (i < 16 || d < 7) {
                    expect_eq(("answer at step %d of decision period %d (no decision, or inside the cooldown)", i, d),
                              target, 2);
                } else {
                    expect_eq(("answer at decision %d, past the cooldown, the last refused", d), target, 1);
                    asked++;
                }
            }
        }
        expect_eq(("scale-downs asked in 10 decisions"), asked, 4);
        expect_eq(("ignitions"), h.ig.ignitions, 1);
        expect_eq(("scale_downs, all four refused"), h.ig.scale_downs, 0);
        expect_eq(("last_change_us, ms after the first step (the ignition's step; the refusals moved nothing)"),
                  (h.ig.last_change_us - T0) / MS, i0 / MS);
        /* the pool gives way at the next decision */
        hand_queue(&h, 16, 0);
        expect_eq(("threads after decision 11, the pool obeying"), h.s.active, 1);
        uint64_t moved = h.t;
        expect_eq(("scale_downs at the step that asked (counted at the next step, which sees it)"), h.ig.scale_downs,
                  0);
        hand_step(&h, 10 * MS, 0, 0, 0, false);
        expect_eq(("scale_downs once the pool has moved"), h.ig.scale_downs, 1);
        expect_eq(("ignitions"), h.ig.ignitions, 1);
        expect_eq(("scale_ups"), h.ig.scale_ups, 0);
        expect_eq(("last_change_us, ms after the first step (the step of decision 11, which asked)"),
                  (h.ig.last_change_us - T0) / MS, moved / MS);
    }
}

/* CONSTRUCTED, as the server moves the pool (io_offload.c's set_active):
 * after each answer the pool moves or refuses, and the policy is told at
 * once through ignition_note_move. The scale-down asked at decision 7 is
 * refused; the ask is then over, forgotten. Fifty milliseconds later,
 * before the next decision, io-threads-always-active parks the worker by
 * itself: a move nobody asked the policy for, counted by its direction
 * and stamped when it was made. A policy that kept the refused ask
 * pending counts it as that ask, stamped at decision 7. */
static void test_a_refused_ask_is_forgotten(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        expect_context("test_a_refused_ask_is_forgotten, %s", ignition_rule_name(UNGUARDED[k]));
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        ignition_note_move(&h.ig, 1, 2, T0 + h.ignited_at);
        uint64_t refused_at = NEVER;
        for (int i = 0; i < 7 * 16; i++) {
            int target = hand_step(&h, 10 * MS, 0, 0, 0, false);
            if (target != h.s.active) {
                refused_at = h.t;
                ignition_note_move(&h.ig, h.s.active, h.s.active, T0 + h.t); /* refused: the pool is as it was */
            }
        }
        expect_eq(("the refused scale-down's step, ms after ignition (decision 7)"), (refused_at - h.ignited_at) / MS,
                  7 * DECISION_US / MS);
        expect_eq(("scale_downs after the refusal"), h.ig.scale_downs, 0);
        for (int i = 0; i < 5; i++) hand_step(&h, 10 * MS, 0, 0, 0, false);
        uint64_t parked = h.t + 3 * MS;
        ignition_note_move(&h.ig, 2, 1, T0 + parked); /* io-threads-always-active parks the worker */
        h.s.active = 1;
        expect_eq(("scale_downs after the pool parked its worker unasked"), h.ig.scale_downs, 1);
        expect_eq(("last_change_us, µs after ignition: the unasked move's time, not the refused ask's step "
                   "(a refused ask kept pending claims the later move)"),
                  h.ig.last_change_us - (T0 + h.ignited_at), parked - h.ignited_at);
        expect_eq(("ignitions"), h.ig.ignitions, 1);
    }
}

/* CONSTRUCTED: a move is the one asked for only if the pool reached the
 * target asked. Four threads: ignition asks for two, and
 * io-threads-always-active wakes the whole pool at once, 1 -> 4. Told
 * through ignition_note_move, as the server tells every move, it is a
 * move nobody asked for: counted once, by its direction (from main alone,
 * an ignition), and stamped when it was made. Seen only in the next
 * step's sample (active 4, no ignition_note_move), the move asked for was
 * not made, so that step counts nothing and leaves last_change_us as it
 * was. The same for a scale-down: three threads, the scale-down asked
 * (3 -> 2), and the pool parks both workers (3 -> 1): one scale-down. A
 * policy that counts the ask whenever the pool moved at all counts each
 * of these under why it was asked, and through ignition_note_move a
 * second time by its direction. */
static void test_an_overshot_move_is_counted_once(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        const char *rule = ignition_rule_name(UNGUARDED[k]);
        int target = 1;

        expect_context("test_an_overshot_move_is_counted_once, %s: ignition asks 2, the pool wakes 4, told through "
                       "ignition_note_move",
                       rule);
        hand_init(&h, UNGUARDED[k], 4);
        for (int i = 0; i < 100 && target == 1; i++) target = hand_step(&h, 10 * MS, 100, 0, 0, false);
        expect_eq(("threads asked after 1 s of main at 100 %% sys (ignition)"), target, 2);
        expect_eq(("the ask for 2, ms after the first step (the fifth CPU sample)"), h.t / MS, 250);
        uint64_t woke = h.t + 2 * MS;
        ignition_note_move(&h.ig, 1, 4, T0 + woke); /* io-threads-always-active wakes every worker */
        h.s.active = 4;
        expect_eq(("ignitions after a move 1 -> 4 (counted once, by its direction)"), h.ig.ignitions, 1);
        expect_eq(("scale_ups after a move 1 -> 4"), h.ig.scale_ups, 0);
        expect_eq(("last_change_us, µs after the step that asked 2: when the pool moved"),
                  h.ig.last_change_us - (T0 + h.t), woke - h.t);
        hand_step(&h, 10 * MS, 0, 0, 0, true);
        expect_eq(("ignitions at the next step (the move was counted when the pool made it)"), h.ig.ignitions, 1);

        expect_context("test_an_overshot_move_is_counted_once, %s: ignition asks 2, the pool wakes 4, seen in the "
                       "next step's sample only",
                       rule);
        hand_init(&h, UNGUARDED[k], 4);
        target = 1;
        for (int i = 0; i < 100 && target == 1; i++) target = hand_step(&h, 10 * MS, 100, 0, 0, false);
        expect_eq(("threads asked after 1 s of main at 100 %% sys (ignition)"), target, 2);
        expect_eq(("the ask for 2, ms after the first step (the fifth CPU sample)"), h.t / MS, 250);
        h.s.active = 4;
        hand_step(&h, 10 * MS, 0, 0, 0, true);
        expect_eq(("ignitions at the step whose sample shows 4 active, 2 asked (the move asked for was not made)"),
                  h.ig.ignitions, 0);
        expect_eq(("scale_ups at that step"), h.ig.scale_ups, 0);
        expect_eq(("last_change_us at that step (no move counted: as it was)"), h.ig.last_change_us, 0);

        expect_context("test_an_overshot_move_is_counted_once, %s: a scale-down asks 2 of 3, the pool parks both "
                       "workers, told through ignition_note_move",
                       rule);
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        hand_queue(&h, 16, 2);
        expect_eq(("threads after the first decision at mean depth 2"), h.s.active, 3);
        target = 3;
        for (int i = 0; i < 10 * 16 && target == 3; i++) target = hand_step(&h, 10 * MS, 0, 0, 0, false);
        expect_eq(("threads asked at the first decision past the cooldown, an empty inbox"), target, 2);
        expect_eq(("the scale-down's ask, ms after ignition (decision 8, the first more than 1 s after the scale-up at "
                   "decision 1)"),
                  (h.t - h.ignited_at) / MS, 8 * DECISION_US / MS);
        uint64_t parked = h.t + 3 * MS;
        ignition_note_move(&h.ig, 3, 1, T0 + parked); /* io-threads-always-active parks every worker */
        h.s.active = 1;
        expect_eq(("scale_downs after a move 3 -> 1 (counted once, by its direction)"), h.ig.scale_downs, 1);
        expect_eq(("scale_ups (the decision at mean depth 2)"), h.ig.scale_ups, 1);
        expect_eq(("ignitions"), h.ig.ignitions, 1);
        expect_eq(("last_change_us, µs after the step that asked 2: when the pool moved"),
                  h.ig.last_change_us - (T0 + h.t), parked - h.t);
    }
}

/* CONSTRUCTED: ignition leaves the depth ring as it is. The policy's own
 * moves put every ignition of the pinned rules on the 16-sample grid; a
 * move it did not ask for can put one off it. Four threads, ten jobs
 * queued: the first decision (the 16th depth sample) adds a thread; after
 * the 21st sample io-threads-always-active parks the pool to main alone
 * (ignition_note_move), and at the next step the stale CPU mean ignites
 * again. The inbox is empty from then on. The decision at the 32nd
 * sample, the 11th step after that ignition, reads the ring as it
 * stands: five depths of 10 from before the ignition and eleven of 0,
 * sum 50, mean 3, so one thread more. A policy that empties the ring at
 * ignition reads a mean of 0 there and holds (inside the cooldown). */
static void test_ignition_leaves_the_depth_ring(void **state) {
    (void)state;
    for (size_t k = 0; k < N_UNGUARDED; k++) {
        hand h;
        expect_context("test_ignition_leaves_the_depth_ring, %s", ignition_rule_name(UNGUARDED[k]));
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        hand_queue(&h, 16, 10);
        expect_eq(("threads after the first decision, ten jobs queued"), h.s.active, 3);
        hand_queue(&h, 5, 10);
        expect_eq(("depth_samples when the pool parks unasked"), h.ig.depth_samples, 21);
        ignition_note_move(&h.ig, 3, 1, T0 + h.t); /* io-threads-always-active parks the workers */
        h.s.active = 1;
        hand_step(&h, 10 * MS, 100, 0, 0, true);
        expect_eq(("threads at the step after the park (the stale CPU mean ignites again)"), h.s.active, 2);
        uint64_t second = h.t;
        hand_queue(&h, 10, 0);
        expect_eq(("threads between decisions"), h.s.active, 2);
        hand_queue(&h, 1, 0);
        expect_eq(("depth_samples at the decision"), h.ig.depth_samples, 32);
        expect_eq(("threads after the decision at depth sample 32, %" PRIu64 " ms after the second ignition: the "
                   "ring holds five depths of 10 from before it and eleven of 0 (sum 50, mean 3)",
                   (h.t - second) / MS),
                  h.s.active, 3);
    }
}

/* ---- the guard, stepped by hand --------------------------------------- */

/* GUARDED stepped by hand: ignition at 250 ms (hand_ignite), then forty
 * steps with main at 100 % sys and the same 1,000 commands per step as
 * before, so the threads neither add throughput nor take CPU off main,
 * and the inbox empty: the probation (settle 100 ms, window 300 ms) sends
 * the pool back to one thread at its 40th step, 400 ms after ignition,
 * and the pool takes it. Returns that step's time (µs from T0); the
 * policy has then taken 40 depth samples. */
static uint64_t hand_guard_reverts(hand *h) {
    hand_init(h, IGNITION_GUARDED, 4);
    hand_ignite(h);
    for (int i = 0; i < 60 && h->s.active > 1; i++) hand_step(h, 10 * MS, 100, 0, 0, true);
    expect_eq(("threads after a probation where the threads did not pay"), h->s.active, 1);
    uint64_t reverted = h->move_at[h->n_moves - 1];
    expect_eq(("the revert, ms after ignition (settle 100 ms + window 300 ms)"), (reverted - h->ignited_at) / MS, 400);
    expect_eq(("the guard's backoff after one revert, ms"), h->ig.backoff_us / MS, 1000);
    expect_eq(("not_before_us, ms after the revert's step"), (h->ig.not_before_us - T0 - reverted) / MS, 1000);
    return reverted;
}

/* One step of 10 ms with workers active and the threads paying: main at
 * 100 % sys runs 1,200 commands in it, a fifth more than alone. */
static int hand_step_paying(hand *h, size_t queued) {
    h->s.commands += 200;
    return hand_step(h, 10 * MS, 100, 0, queued, true);
}

/* The first move up from two threads or more after the step at `after`
 * (µs from T0), or NEVER. */
static uint64_t hand_first_scale_up_after(const hand *h, uint64_t after) {
    for (int i = 1; i < h->n_moves; i++)
        if (h->move_at[i] > after && h->move_to[i] > 2 && h->move_to[i] > h->move_to[i - 1]) return h->move_at[i];
    return NEVER;
}

/* CONSTRUCTED: every step with workers active is a depth sample, the
 * probation's 40 included. A guarded ignition whose threads pay, with two
 * jobs queued at every step from ignition on: the probation holds the
 * pool at two until its 40th step (400 ms), and the first decision after
 * it is the 48th depth sample, 480 ms after ignition, which adds a
 * thread. A policy that skips the depth during the probation has taken 16
 * samples only at the 56th step (560 ms). */
static void test_probation_steps_are_depth_samples(void **state) {
    (void)state;
    hand h;
    expect_context("test_probation_steps_are_depth_samples, guarded");
    hand_init(&h, IGNITION_GUARDED, 4);
    hand_ignite(&h);
    for (int i = 0; i < 70; i++) hand_step_paying(&h, 2);
    expect_eq(("guard_reverts (the threads paid)"), h.ig.guard_reverts, 0);
    uint64_t up = hand_first_scale_up_after(&h, h.ignited_at);
    expect_true(("a scale-up within 700 ms of two jobs queued"), up != NEVER);
    expect_eq(("the first scale-up, ms after ignition (the 48th depth sample: the probation's 40 count)"),
              (up - h.ignited_at) / MS, 480);
    expect_eq(("depth_samples after 70 steps with workers active"), h.ig.depth_samples, 70);
}

/* CONSTRUCTED: depth_samples is never reset, not at ignition either, so
 * decisions stay on every 16th sample since the policy started. The
 * first guarded ignition reverts at its 40th step (hand_guard_reverts:
 * 40 samples taken, 8 past a decision); the second, once the backoff is
 * over, pays, with two jobs queued. Its probation ends at its 40th step,
 * the 80th sample, which is a decision: one more thread 400 ms after the
 * second ignition. A policy that starts the ring afresh at ignition
 * decides at the second probation's 48th sample instead (480 ms). */
static void test_depth_samples_run_on_across_a_second_ignition(void **state) {
    (void)state;
    hand h;
    expect_context("test_depth_samples_run_on_across_a_second_ignition, guarded");
    uint64_t reverted = hand_guard_reverts(&h);
    expect_eq(("depth_samples after the first probation"), h.ig.depth_samples, 40);
    for (int i = 0; i < 300 && h.s.active == 1; i++) hand_step(&h, 10 * MS, 100, 0, 0, true);
    expect_eq(("threads 3 s after the revert, main at 100 %% sys"), h.s.active, 2);
    uint64_t second = h.move_at[h.n_moves - 1];
    expect_ge(("the second ignition, ms after the revert (the backoff)"), (second - reverted) / MS, 1000);
    for (int i = 0; i < 70; i++) hand_step_paying(&h, 2);
    expect_eq(("guard_reverts (the second probation paid)"), h.ig.guard_reverts, 1);
    uint64_t up = hand_first_scale_up_after(&h, second);
    expect_true(("a scale-up within 700 ms of the second ignition, two jobs queued"), up != NEVER);
    expect_eq(("the first scale-up, ms after the second ignition (depth sample 80: the count runs on from the "
               "first probation's 40)"),
              (up - second) / MS, 400);
    expect_eq(("depth_samples: both probations' and the 30 steps after"), h.ig.depth_samples, 110);
}

/* CONSTRUCTED: the backoff holds ignition until not_before_us, and no
 * longer: the step at not_before_us itself ignites ("not before", a strict
 * "<" for the refusal). After the revert (hand_guard_reverts) the first
 * step alone comes 50 ms later and primes the restarted means, so the CPU
 * samples fall every 50 ms from there, one of them exactly on the
 * backoff's end; main stays at 100 % sys. Ignition comes exactly 1,000 ms
 * after the revert; refusing at the backoff's end ("<=") puts it a step
 * later. */
static void test_guard_ignites_at_the_backoffs_end(void **state) {
    (void)state;
    hand h;
    expect_context("test_guard_ignites_at_the_backoffs_end, guarded");
    uint64_t reverted = hand_guard_reverts(&h);
    hand_step(&h, 50 * MS, 100, 0, 0, true);
    for (int i = 0; i < 300 && h.s.active == 1; i++) hand_step(&h, 10 * MS, 100, 0, 0, true);
    expect_eq(("threads 3 s after the revert, main at 100 %% sys"), h.s.active, 2);
    expect_eq(("the second ignition, ms after the revert (the step at the backoff's end ignites; a refusal "
               "at exactly not_before_us, <= for <, waits a step more)"),
              (h.move_at[h.n_moves - 1] - reverted) / MS, 1000);
}

/* CONSTRUCTED: ignition is judged at every step while main is alone, on
 * the means as they stand, not only at the steps that take a CPU sample.
 * After the revert the first step alone comes 10 ms later, so the CPU
 * samples fall at 10, 60, ..., 960 and 1,010 ms after it; the means have
 * been above the threshold since the fifth. The backoff ends at 1,000 ms,
 * between two samples, and the step there ignites. A policy that judges
 * only at a CPU sample ignites at 1,010 ms. */
static void test_ignition_judged_at_every_step(void **state) {
    (void)state;
    hand h;
    expect_context("test_ignition_judged_at_every_step, guarded");
    uint64_t reverted = hand_guard_reverts(&h);
    for (int i = 0; i < 300 && h.s.active == 1; i++) hand_step(&h, 10 * MS, 100, 0, 0, true);
    expect_eq(("threads 3 s after the revert, main at 100 %% sys"), h.s.active, 2);
    expect_eq(("the second ignition, ms after the revert (the backoff ends at 1,000, between the CPU samples at "
               "960 and 1,010: ignition waits for no sample)"),
              (h.move_at[h.n_moves - 1] - reverted) / MS, 1000);
}

/* CONSTRUCTED: an ignition between two CPU samples is stamped with its
 * own step, and its cooldown runs from there. As in
 * test_ignition_judged_at_every_step, the backoff ends 1,000 ms after the
 * revert, between the CPU samples at 960 and 1,010 ms, and the step there
 * ignites; this time the threads pay and the inbox stays empty.
 * io_threads_last_change_us is that step, not the CPU sample 40 ms before
 * it. The probation ends at the 80th depth sample, 400 ms after the
 * ignition (a decision, inside the cooldown: it holds). Then the pool
 * turns slowly (an idle loop), its next 16 steps 35,625 µs apart, so the
 * decision at the 96th sample comes 970 ms after the ignition, inside
 * its second: it holds. The next decision, at 10 ms steps, 1,130 ms
 * after the ignition, parks the worker. A policy that stamps the ignition
 * with the CPU sample counts 1,010 ms at the 96th sample's decision and
 * parks the worker there. */
static void test_ignition_between_samples_is_stamped_at_its_step(void **state) {
    (void)state;
    hand h;
    expect_context("test_ignition_between_samples_is_stamped_at_its_step, guarded");
    uint64_t reverted = hand_guard_reverts(&h);
    for (int i = 0; i < 300 && h.s.active == 1; i++) hand_step(&h, 10 * MS, 100, 0, 0, true);
    expect_eq(("threads 3 s after the revert, main at 100 %% sys"), h.s.active, 2);
    uint64_t second = h.move_at[h.n_moves - 1];
    expect_eq(("the second ignition, ms after the revert (the backoff's end)"), (second - reverted) / MS, 1000);
    expect_eq(("the last CPU sample before it, ms after the revert"), (h.ig.last_cpu_sample_us - T0 - reverted) / MS,
              960);
    for (int i = 0; i < 40; i++) hand_step_paying(&h, 0);
    expect_eq(("guard_reverts (the second probation paid)"), h.ig.guard_reverts, 1);
    expect_eq(("ignitions"), h.ig.ignitions, 2);
    expect_eq(("last_change_us, ms after the revert: the step that ignited, not the CPU sample at 960"),
              ((int64_t)h.ig.last_change_us - (int64_t)(T0 + reverted)) / (int64_t)MS, 1000);
    expect_eq(("depth_samples at the end of the second probation"), h.ig.depth_samples, 80);
    expect_eq(("threads at the end of the second probation (a decision, 400 ms after the ignition)"), h.s.active, 2);
    for (int i = 0; i < 16 && h.s.active > 1; i++) hand_step(&h, 35625, 100, 0, 0, true);
    expect_eq(("threads after the decision at depth sample 96, %" PRIu64 " ms after the second ignition (inside its "
               "1 s cooldown)",
               (h.t - second) / MS),
              h.s.active, 2);
    for (int i = 0; i < 2 * 16 && h.s.active > 1; i++) hand_step(&h, 10 * MS, 100, 0, 0, true);
    expect_eq(("threads within two decisions more, the inbox empty"), h.s.active, 1);
    expect_eq(("the scale-down, ms after the second ignition (depth sample 112, the first decision past the "
               "cooldown)"),
              (h.move_at[h.n_moves - 1] - second) / MS, 1130);
}

/* CONSTRUCTED: a revert the pool refuses is asked again at the next step
 * and, once the pool has made it, counted in guard_reverts and stamped
 * with the step that first asked for it. The refusal forgets the ask
 * (asked = 0), not when it was asked: the revert is asked again with
 * that time (asked_us). GUARDED over two threads that do not pay: the
 * probation asks for one thread 400 ms after ignition; the pool refuses
 * once, then obeys at the next step. */
static void test_a_refused_revert_keeps_its_time(void **state) {
    (void)state;
    hand h;
    expect_context("test_a_refused_revert_keeps_its_time, guarded");
    hand_init(&h, IGNITION_GUARDED, 2);
    hand_ignite(&h);
    uint64_t asked = NEVER;
    for (int i = 0; i < 60 && asked == NEVER; i++)
        if (hand_step(&h, 10 * MS, 100, 0, 0, false) == 1) asked = h.t; /* refused: the pool stays at two */
    expect_true(("a revert asked within 600 ms of ignition, the threads not paying"), asked != NEVER);
    expect_eq(("the revert's first ask, ms after ignition (settle 100 ms + window 300 ms)"),
              (asked - h.ignited_at) / MS, 400);
    expect_eq(("threads asked at the step after the refused revert (asked again)"),
              hand_step(&h, 10 * MS, 100, 0, 0, true), 1);
    hand_step(&h, 10 * MS, 100, 0, 0, true);
    expect_eq(("guard_reverts once the pool has moved"), h.ig.guard_reverts, 1);
    expect_eq(("last_change_us, µs of the clock: the step that first asked for the revert (a refusal forgets the "
               "ask, not when it was asked)"),
              h.ig.last_change_us, T0 + asked);
}

static void test_rule_names(void **state) {
    (void)state;
    for (size_t k = 0; k < N_RULES; k++)
        expect_eq(("the rule ignition_rule_parse(\"%s\") gives (%d is %s)", ignition_rule_name(RULES[k]), (int)RULES[k],
                   ignition_rule_name(RULES[k])),
                  ignition_rule_parse(ignition_rule_name(RULES[k])), RULES[k]);
    assert_string_equal(ignition_rule_name(IGNITION_GUARDED), "guarded");
    assert_string_equal(ignition_rule_name(IGNITION_ACTIVE_TIME), "active-time");
    expect_eq(("ignition_rule_parse(\"RUSAGE\") (case does not matter: %d is rusage)", (int)IGNITION_RUSAGE),
              ignition_rule_parse("RUSAGE"), IGNITION_RUSAGE);
    expect_eq(("ignition_rule_parse(\"active_time\") (-1: no such rule)"), ignition_rule_parse("active_time"), -1);
    expect_eq(("ignition_rule_parse(\"\") (-1: no such rule)"), ignition_rule_parse(""), -1);
    expect_eq(("ignition_rule_parse(NULL) (-1: no such rule)"), ignition_rule_parse(NULL), -1);
    assert_string_equal(ignition_rule_name((ignition_rule)7), "unknown");
    ignition ig;
    ignition_init(&ig, IGNITION_GUARDED);
    expect_eq(("the rule of ignition_init(GUARDED) (%d is guarded)", (int)IGNITION_GUARDED), ig.rule, IGNITION_GUARDED);
    /* each name selects its rule's decision: main at 4 % sys and 60 %
     * user is busy (64 %) but mostly out of the kernel, which wakes a
     * thread under active-time only */
    static const char *const names[] = {"guarded", "rusage", "active-time"};
    for (size_t i = 0; i < 3; i++) {
        int rule = ignition_rule_parse(names[i]);
        expect_ge(("ignition_rule_parse(\"%s\") (-1: no such rule)", names[i]), rule, 0);
        expect_eq(("rule \"%s\", main at 4 %% sys and 60 %% user for 40 CPU samples: ignites (1) or not (0); only "
                   "active-time judges the busy share (64 %%), the CPU rule needs sys above 5 %%",
                   names[i]),
                  ignites_at_sample((ignition_rule)rule, 4, 60, 40) != 0, rule == IGNITION_ACTIVE_TIME);
    }
}

/* ---- the last decision (INFO iothreads io_threads_last_decision) ---- */

/* Each kind of decision leaves its numbers: main alone, every step is a
 * decision on the CPU means (stay, then ignite on the fifth CPU sample at
 * 100 % sys, whose mean is 5/16 of a core); with workers running, only a
 * 16th depth sample decides (scale-up on a mean of 3, hold on a mean of
 * 1), the 15 steps between leave the record alone; a move the policy did
 * not ask for is "forced"; a restart keeps the record. */
static void test_last_decision_records_what_was_judged(void **state) {
    (void)state;
    hand h;
    hand_init(&h, IGNITION_RUSAGE, 4);
    const ignition_decision *d = &h.ig.last;
    assert_string_equal(ignition_decided_name(d->what), "stay");
    assert_int_equal(d->us, T0);
    hand_step(&h, 10 * MS, 100, 0, 0, true);
    assert_int_equal(d->what, IGNITION_DECIDED_STAY);
    assert_int_equal(d->us, T0 + 10 * MS);
    hand_ignite(&h);
    assert_string_equal(ignition_decided_name(d->what), "ignite");
    assert_int_equal(d->us, T0 + h.ignited_at);
    assert_int_equal(d->active_before, 1);
    assert_int_equal(d->active_after, 2);
    assert_int_equal(d->sys_ppm, 5 * 1000000 / IGNITION_METRIC_SAMPLES);
    assert_int_equal(d->user_ppm, 0);
    assert_int_equal(d->depth_mean, 0);
    hand_queue(&h, IGNITION_METRIC_SAMPLES - 1, 3);
    assert_int_equal(d->what, IGNITION_DECIDED_IGNITE); /* no decision between samples */
    hand_queue(&h, 1, 3);
    assert_string_equal(ignition_decided_name(d->what), "scale-up");
    assert_int_equal(d->us, T0 + h.t);
    assert_int_equal(d->active_before, 2);
    assert_int_equal(d->active_after, 3);
    assert_int_equal(d->depth_mean, 3);
    assert_int_equal(d->sys_ppm, 0);
    hand_queue(&h, IGNITION_METRIC_SAMPLES, 1);
    assert_string_equal(ignition_decided_name(d->what), "hold");
    assert_int_equal(d->active_before, 3);
    assert_int_equal(d->active_after, 3);
    assert_int_equal(d->depth_mean, 1);
    ignition_note_move(&h.ig, 3, 1, T0 + h.t + 5);
    assert_string_equal(ignition_decided_name(d->what), "forced");
    assert_int_equal(d->us, T0 + h.t + 5);
    assert_int_equal(d->active_before, 3);
    assert_int_equal(d->active_after, 1);
    ignition_restart(&h.ig, IGNITION_GUARDED);
    assert_int_equal(d->what, IGNITION_DECIDED_FORCED);
    assert_int_equal(d->us, T0 + h.t + 5);
}

/* The guard's verdict is a decision with the throughput it compared: at
 * a steady 100,000 commands a second and no CPU on main after ignition,
 * the threads relieved main, and the verdict (keep) comes at the end of
 * the window, settle and measurement after ignition; the probation's
 * steps decide nothing, 16th depth samples included. */
static void test_last_decision_of_the_guard(void **state) {
    (void)state;
    hand h;
    hand_init(&h, IGNITION_GUARDED, 4);
    hand_ignite(&h);
    const ignition_decision *d = &h.ig.last;
    int steps = 0;
    while (d->what == IGNITION_DECIDED_IGNITE && steps < 100) hand_queue(&h, 1, 0), steps++;
    assert_string_equal(ignition_decided_name(d->what), "keep");
    assert_int_equal(h.t - h.ignited_at, 400 * MS); /* 100 ms settling, 300 ms measured */
    assert_int_equal(d->active_before, 2);
    assert_int_equal(d->active_after, 2);
    assert_int_equal(d->rate_before, 100000);
    assert_int_equal(d->rate_after, 100000);
    assert_int_equal(d->depth_mean, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_light_load_never_ignites, expect_setup),
        cmocka_unit_test_setup(test_step_ignites_within_its_lag, expect_setup),
        cmocka_unit_test_setup(test_ignition_needs_five_samples_at_least, expect_setup),
        cmocka_unit_test_setup(test_rusage_and_active_time_thresholds, expect_setup),
        cmocka_unit_test_setup(test_step_scales_down_after_the_load, expect_setup),
        cmocka_unit_test_setup(test_no_scale_down_within_the_cooldown, expect_setup),
        cmocka_unit_test_setup(test_burst, expect_setup),
        cmocka_unit_test_setup(test_stale_mean_reignites_the_pinned_rules, expect_setup),
        cmocka_unit_test_setup(test_guard_reverts_when_threads_do_not_pay, expect_setup),
        cmocka_unit_test_setup(test_guard_reverts_cheaper_but_slower, expect_setup),
        cmocka_unit_test_setup(test_guard_before_window_stays_inside_the_load, expect_setup),
        cmocka_unit_test_setup(test_guard_parks_the_pool_when_the_load_leaves, expect_setup),
        cmocka_unit_test_setup(test_guard_lets_the_pool_settle, expect_setup),
        cmocka_unit_test_setup(test_guard_tries_again_and_resets_the_backoff, expect_setup),
        cmocka_unit_test_setup(test_guard_keeps_threads_that_pay, expect_setup),
        cmocka_unit_test_setup(test_backoff_is_bounded, expect_setup),
        cmocka_unit_test_setup(test_refused_scale_downs_are_asked_again, expect_setup),
        cmocka_unit_test_setup(test_target_always_in_range, expect_setup),
        cmocka_unit_test_setup(test_one_thread_is_always_one, expect_setup),
        cmocka_unit_test_setup(test_rule_names, expect_setup),
        cmocka_unit_test_setup(test_mean_is_sixteen_samples, expect_setup),
        cmocka_unit_test_setup(test_thresholds_are_strict, expect_setup),
        cmocka_unit_test_setup(test_first_sample_only_primes, expect_setup),
        cmocka_unit_test_setup(test_scale_up_one_thread_per_decision, expect_setup),
        cmocka_unit_test_setup(test_scale_decides_on_the_mean_depth, expect_setup),
        cmocka_unit_test_setup(test_scale_down_waits_for_an_empty_queue, expect_setup),
        cmocka_unit_test_setup(test_cooldown_runs_from_the_last_scale_up, expect_setup),
        cmocka_unit_test_setup(test_refused_scale_down_counts_nothing, expect_setup),
        cmocka_unit_test_setup(test_scale_down_on_a_mean_of_zero_whatever_the_depth_now, expect_setup),
        cmocka_unit_test_setup(test_a_refused_ask_is_forgotten, expect_setup),
        cmocka_unit_test_setup(test_probation_steps_are_depth_samples, expect_setup),
        cmocka_unit_test_setup(test_depth_samples_run_on_across_a_second_ignition, expect_setup),
        cmocka_unit_test_setup(test_guard_ignites_at_the_backoffs_end, expect_setup),
        cmocka_unit_test_setup(test_ignition_judged_at_every_step, expect_setup),
        cmocka_unit_test_setup(test_mean_is_rounded_down, expect_setup),
        cmocka_unit_test_setup(test_rate_is_per_microsecond, expect_setup),
        cmocka_unit_test_setup(test_a_pool_at_num_keeps_its_cooldown, expect_setup),
        cmocka_unit_test_setup(test_ignition_leaves_the_depth_ring, expect_setup),
        cmocka_unit_test_setup(test_a_refused_revert_keeps_its_time, expect_setup),
        cmocka_unit_test_setup(test_ignition_between_samples_is_stamped_at_its_step, expect_setup),
        cmocka_unit_test_setup(test_an_overshot_move_is_counted_once, expect_setup),
        cmocka_unit_test_setup(test_last_decision_records_what_was_judged, expect_setup),
        cmocka_unit_test_setup(test_last_decision_of_the_guard, expect_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
