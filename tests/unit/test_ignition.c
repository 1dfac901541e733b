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
        assert_in_range(target, 1, num);
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
 * scale-up, every move down a scale-down or a revert. */
static void assert_counters_match(const run *r) {
    assert_int_equal(r->ig.ignitions + r->ig.scale_ups, (uint64_t)r->ups);
    assert_int_equal(r->ig.scale_downs + r->ig.guard_reverts, (uint64_t)r->downs);
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
    assert_int_equal(ignition_step(&h->ig, &h->s), 1);
}

static void hand_init(hand *h, ignition_rule rule, int num) { hand_init_at(h, rule, num, 0, 0); }

/* One step dt_us after the last: main spent sys_pct per cent of it in the
 * kernel and user_pct in user space (busy: both), and the inbox holds
 * queued jobs now. The pool takes the answer if obey; returns it. */
static int hand_step(hand *h, uint64_t dt_us, unsigned sys_pct, unsigned user_pct, size_t queued, bool obey) {
    h->t += dt_us;
    h->s.now_us = T0 + h->t;
    h->s.main_sys_us += dt_us * sys_pct / 100;
    h->s.main_user_us += dt_us * user_pct / 100;
    h->s.main_active_us += dt_us * (sys_pct + user_pct) / 100;
    h->s.commands += dt_us / 10;
    h->s.queued = queued;
    int target = ignition_step(&h->ig, &h->s);
    assert_in_range(target, 1, h->s.num);
    if (obey && target != h->s.active) {
        assert_true(h->n_moves < 64);
        if (h->s.active == 1 && h->ignited_at == NEVER) h->ignited_at = h->t;
        h->move_at[h->n_moves] = h->t;
        h->move_to[h->n_moves++] = target;
        h->s.active = target;
    }
    return target;
}

/* Main at 100 % sys, one step per 10 ms, until the policy ignites (five
 * CPU samples: 250 ms after the first step); the pool takes it. */
static void hand_ignite(hand *h) {
    for (int i = 0; i < 100 && h->s.active == 1; i++) hand_step(h, 10 * MS, 100, 0, 0, true);
    assert_int_equal(h->s.active, 2);
    assert_int_equal(h->ignited_at, 250 * MS);
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
        assert_int_equal(r.first_ignition, NEVER);
        assert_int_equal(r.ig.ignitions, 0);
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
        uint64_t lag = r.first_ignition - t.on;
        printf("step, %-11s ignites %" PRIu64 " ms after the step (%.1f cron periods of 100 ms; level %u %%, "
               "bound %" PRIu64 " ms)\n",
               ignition_rule_name(RULES[k]), lag / MS, (double)lag / CRON_US, level, lag_bound(level) / MS);
        assert_true(r.first_ignition != NEVER && r.first_ignition >= t.on);
        assert_in_range(lag, 5 * 50 * MS, lag_bound(level));
        assert_true(r.max_active > 2); /* the queue rule took it further */
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
        assert_in_range(r.first_ignition - t.on, 4 * 50 * MS + 10 * MS, 5 * 50 * MS + 10 * MS);
    }
    free(t.r);
}

/* The rule's clauses, on CONSTRUCTED constant levels (per cent user, sys). */
static void test_rusage_and_active_time_thresholds(void **state) {
    (void)state;
    static const struct {
        unsigned user, sys;
        bool rusage, active_time;
    } cases[] = {
        {0, 32, true, true},   /* sys > 30 */
        {0, 28, false, false}, /* below both */
        {60, 8, true, true},   /* sys > 5 and user > 50 */
        {60, 4, false, true},  /* user alone is not enough for rusage */
        {20, 12, false, true}, /* busy 32 %, sys 12 %: only the newer rule */
    };
    regime g = load_regime("pays-closed");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trace t = constant_trace(cases[i].user, cases[i].sys, 50000, 500, 3000, 0);
        run r;
        replay(&r, &t, IGNITION_RUSAGE, 4, &g, 0);
        assert_int_equal(r.first_ignition != NEVER, cases[i].rusage);
        replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
        assert_int_equal(r.first_ignition != NEVER, cases[i].rusage);
        replay(&r, &t, IGNITION_ACTIVE_TIME, 4, &g, 0);
        assert_int_equal(r.first_ignition != NEVER, cases[i].active_time);
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
        assert_int_equal(r.max_active, 4);
        assert_true(r.first_down_after_off != NEVER);
        printf("step, %-11s first scale-down %" PRIu64 " ms after the load ended\n", ignition_rule_name(RULES[k]),
               (r.first_down_after_off - t.off) / MS);
        assert_true(r.first_down_after_off - t.off <= COOLDOWN_US + DECISION_US);
        if (RULES[k] == IGNITION_GUARDED) {
            assert_true(r.alone_again <= t.off + COOLDOWN_US + DECISION_US + 2 * DECISION_US);
            assert_int_equal(r.ig.ignitions, 1);
            assert_int_equal(r.ig.guard_reverts, 0);
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
        assert_int_equal(r.max_active, 2);
        assert_in_range(r.first_down - r.first_ignition, COOLDOWN_US + 1,
                        COOLDOWN_US + DECISION_US + IGNITION_SAMPLE_US);
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
        printf("burst, %-11s ignites %" PRIu64 " ms into it (level %u %%)\n", ignition_rule_name(RULES[k]),
               (r.first_ignition - t.on) / MS, level);
        assert_true(r.first_ignition >= t.on && r.first_ignition < t.off);
        assert_true(r.first_ignition - t.on <= lag_bound(level));
        assert_true(r.first_down_after_off - t.off <= COOLDOWN_US + DECISION_US);
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
    assert_true(r.ignitions_after_off >= 1);
    replay(&r, &t, IGNITION_ACTIVE_TIME, 4, &g, 0);
    assert_true(r.ignitions_after_off >= 1);
    replay(&r, &t, IGNITION_GUARDED, 4, &g, 0);
    assert_int_equal(r.ignitions_after_off, 0);
    assert_int_equal(r.ig.ignitions, 1);
    assert_true(r.alone_again != NEVER);
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
        assert_true(guarded.ig.guard_reverts >= 1);
        assert_int_equal(rusage.ig.guard_reverts, 0);
        /* one probation per ignition, and nothing more */
        assert_true(guarded.threaded_us <= guarded.ig.ignitions * (400 * MS + 2 * IGNITION_SAMPLE_US));
        assert_true(guarded.threaded_load_us < rusage.threaded_load_us);
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
    assert_int_equal(r.ig.guard_reverts, 1);
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
    assert_true(r.ig.guard_reverts >= 1);
    assert_int_equal(r.first_down - r.first_ignition, 400 * MS); /* settle + window, exactly */
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
    assert_int_equal(r.ig.ignitions, 1);
    assert_int_equal(r.ig.guard_reverts, 1);
    assert_int_equal(r.ig.backoff_us, 1000 * MS);
    assert_int_equal(r.alone_again - r.first_ignition, 400 * MS);
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
    assert_int_equal(r.ig.ignitions, 1);
    assert_int_equal(r.ig.guard_reverts, 0);
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
    assert_true(r.ig.guard_reverts >= 4);
    assert_int_equal(r.ig.backoff_us, 0);
    assert_true(r.ignition_at[r.n_ignitions - 1] <= t.on + 20000 * MS + 16000 * MS + 1000 * MS);
    assert_true(r.threaded_load_us >= 20000 * MS);
    assert_int_equal(r.max_active, 4);
    free(src.r);
    free(t.r);
}

/* Threads that pay are kept: more commands/s (closed loop), or the same
 * commands/s for much less of main's CPU per command (open loop). During
 * the probation the pool stays at two threads, so that what is measured
 * is one thread against two; the pinned rule may scale up sooner. */
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
        assert_int_equal(r.ig.guard_reverts, 0);
        assert_int_equal(r.ig.backoff_us, 0);
        assert_true(r.max_active >= 3);
        assert_true(r.first_scale_up - r.first_ignition >= 400 * MS);
        run pinned;
        replay(&pinned, &t, IGNITION_RUSAGE, 4, &g, 0);
        assert_true(pinned.first_scale_up - pinned.first_ignition < 400 * MS);
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
    assert_true(r.n_ignitions >= 8 && r.n_ignitions < 16);
    assert_int_equal(r.max_backoff, 64000 * MS);
    uint64_t prev_gap = 0;
    for (int i = 1; i < r.n_ignitions; i++) {
        uint64_t gap = r.ignition_at[i] - r.ignition_at[i - 1];
        uint64_t backoff = (1000 * MS) << (i - 1 < 6 ? i - 1 : 6);
        /* Backing off; a probation cut short by a collapse may end up to a
         * full window sooner than the one before it. */
        assert_true(gap >= backoff && gap + 500 * MS >= prev_gap);
        assert_true(gap <= backoff + 500 * MS); /* and no more */
        prev_gap = gap;
    }
    double share = (double)r.threaded_load_us / (double)(t.off - t.on);
    printf("looped burst, nopay-closed, 300 s: %d ignitions, threads awake %.2f %% of the load\n", r.n_ignitions,
           100 * share);
    assert_true(share < 0.03);
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
    assert_true(r.alone_again != NEVER);
    assert_int_equal(r.ig.scale_downs, 3);
    assert_counters_match(&r);
    run refused;
    replay(&refused, &t, IGNITION_GUARDED, 4, &nopay, 5);
    replay(&r, &t, IGNITION_GUARDED, 4, &nopay, 0);
    assert_int_equal(refused.ig.guard_reverts, r.ig.guard_reverts);
    /* five refused steps: about 50 ms more with threads awake (rows are 10 ms apart, give or take) */
    assert_in_range(refused.threaded_us, r.threaded_us + 4 * IGNITION_SAMPLE_US,
                    r.threaded_us + 6 * IGNITION_SAMPLE_US);
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
            assert_in_range(target, 1, s.num < 1 ? 1 : s.num);
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
        assert_int_equal(r.first_ignition, NEVER);
    }
    replay_rules(runs, &t, "pays-closed", 2);
    for (size_t k = 0; k < N_RULES; k++) {
        const run r = runs[k];
        assert_true(r.first_ignition != NEVER);
        assert_int_equal(r.max_active, 2);
        assert_int_equal(r.ig.scale_ups, 0);
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
        assert_int_equal(ignites_at_sample(RULES[k], 30, 0, 40), 0);
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
        for (int i = 0; i < 40; i++) assert_int_equal(hand_step(&h, 50 * MS, 28, 0, 0, true), 1);
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
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        hand_queue(&h, 80, 2);
        assert_int_equal(h.n_moves, 3);
        uint64_t i = h.ignited_at;
        assert_int_equal(h.move_to[0], 2);
        assert_int_equal(h.move_to[1], 3);
        assert_int_equal(h.move_at[1], i + DECISION_US);
        assert_int_equal(h.move_to[2], 4);
        assert_int_equal(h.move_at[2], i + 2 * DECISION_US);
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
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        uint64_t i = h.ignited_at;
        hand_queue(&h, 15, 2);
        hand_queue(&h, 1, 1);
        assert_int_equal(h.s.active, 2); /* 31 / 16 = 1: hold */
        hand_queue(&h, 15, 0);
        hand_queue(&h, 1, 5);
        assert_int_equal(h.s.active, 2); /* mean 0 inside the cooldown, with 5 queued now: hold */
        hand_queue(&h, 15, 3);
        hand_queue(&h, 1, 0);
        assert_int_equal(h.s.active, 3); /* 45 / 16 = 2, with nothing queued now: one more */
        assert_int_equal(h.move_at[1], i + 3 * DECISION_US);
        hand_queue(&h, 16, 2);
        assert_int_equal(h.s.active, 4);
        assert_int_equal(h.n_moves, 3);
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
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        hand_queue(&h, 20 * 16, 1); /* 3.2 s, twenty decisions at mean 1 */
        assert_int_equal(h.n_moves, 1);
        hand_queue(&h, 15, 1);
        hand_queue(&h, 1, 0);
        assert_int_equal(h.n_moves, 2);
        assert_int_equal(h.move_to[1], 1);
        assert_int_equal(h.move_at[1], h.ignited_at + 21 * DECISION_US);
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
        /* an empty queue from ignition on: the first decision past 1 s,
         * the seventh (1,120 ms). (Back at one thread, the pinned rules
         * would soon ignite again on their stale mean: each case stops at
         * its last move.) */
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        hand_queue(&h, 7 * 16, 0);
        assert_int_equal(h.n_moves, 2);
        assert_int_equal(h.move_at[1] - h.ignited_at, 7 * DECISION_US);

        /* decisions 1 s apart (an idle loop turns slowly): the first falls
         * exactly 1 s after ignition and holds, the second scales down */
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        for (int i = 0; i < 16; i++) hand_step(&h, COOLDOWN_US / 16, 0, 0, 0, true);
        assert_int_equal(h.s.active, 2);
        for (int i = 0; i < 16; i++) hand_step(&h, COOLDOWN_US / 16, 0, 0, 0, true);
        assert_int_equal(h.s.active, 1);
        assert_int_equal(h.move_at[1] - h.ignited_at, 2 * COOLDOWN_US);

        /* two scale-ups, then an empty queue: the cooldown counts from
         * the second scale-up, and the pool then shrinks one thread per
         * decision */
        hand_init(&h, UNGUARDED[k], 4);
        hand_ignite(&h);
        uint64_t i0 = h.ignited_at;
        hand_queue(&h, 2 * 16, 2);
        assert_int_equal(h.s.active, 4);
        hand_queue(&h, 9 * 16, 0);
        assert_int_equal(h.n_moves, 6);
        uint64_t up = i0 + 2 * DECISION_US;
        assert_int_equal(h.move_at[2], up);
        assert_int_equal(h.move_at[3] - up, 7 * DECISION_US);
        assert_int_equal(h.move_at[4] - up, 8 * DECISION_US);
        assert_int_equal(h.move_at[5] - up, 9 * DECISION_US);
        assert_int_equal(h.move_to[5], 1);

        /* a load that keeps one job queued for 3 s after ignition, then
         * none: the cooldown is long over, and the first decision on an
         * empty queue scales down */
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        hand_queue(&h, 20 * 16, 1);
        hand_queue(&h, 16, 0);
        assert_int_equal(h.n_moves, 2);
        assert_int_equal(h.move_at[1] - h.ignited_at, 21 * DECISION_US);
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
        hand_init(&h, UNGUARDED[k], 2);
        hand_ignite(&h);
        uint64_t i0 = h.ignited_at;
        int asked = 0;
        for (int d = 1; d <= 10; d++) {
            for (int i = 1; i <= 16; i++) {
                int target = hand_step(&h, 10 * MS, 0, 0, 0, false);
                if (i < 16 || d < 7) {
                    assert_int_equal(target, 2);
                } else {
                    assert_int_equal(target, 1); /* every decision past the cooldown */
                    asked++;
                }
            }
        }
        assert_int_equal(asked, 4);
        assert_int_equal(h.ig.ignitions, 1);
        assert_int_equal(h.ig.scale_downs, 0);
        assert_int_equal(h.ig.last_change_us, T0 + i0);
        /* the pool gives way at the next decision */
        hand_queue(&h, 16, 0);
        assert_int_equal(h.s.active, 1);
        uint64_t moved = h.t;
        assert_int_equal(h.ig.scale_downs, 0); /* counted at the next step, which sees it */
        hand_step(&h, 10 * MS, 0, 0, 0, false);
        assert_int_equal(h.ig.scale_downs, 1);
        assert_int_equal(h.ig.ignitions, 1);
        assert_int_equal(h.ig.scale_ups, 0);
        assert_int_equal(h.ig.last_change_us, T0 + moved);
    }
}

static void test_rule_names(void **state) {
    (void)state;
    for (size_t k = 0; k < N_RULES; k++) assert_int_equal(ignition_rule_parse(ignition_rule_name(RULES[k])), RULES[k]);
    assert_string_equal(ignition_rule_name(IGNITION_GUARDED), "guarded");
    assert_string_equal(ignition_rule_name(IGNITION_ACTIVE_TIME), "active-time");
    assert_int_equal(ignition_rule_parse("RUSAGE"), IGNITION_RUSAGE);
    assert_int_equal(ignition_rule_parse("active_time"), -1);
    assert_int_equal(ignition_rule_parse(""), -1);
    assert_int_equal(ignition_rule_parse(NULL), -1);
    assert_string_equal(ignition_rule_name((ignition_rule)7), "unknown");
    ignition ig;
    ignition_init(&ig, IGNITION_GUARDED);
    assert_int_equal(ig.rule, IGNITION_GUARDED);
    /* each name selects its rule's decision: main at 4 % sys and 60 %
     * user is busy (64 %) but mostly out of the kernel, which wakes a
     * thread under active-time only */
    static const char *const names[] = {"guarded", "rusage", "active-time"};
    for (size_t i = 0; i < 3; i++) {
        int rule = ignition_rule_parse(names[i]);
        assert_true(rule >= 0);
        assert_int_equal(ignites_at_sample((ignition_rule)rule, 4, 60, 40) != 0, rule == IGNITION_ACTIVE_TIME);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_light_load_never_ignites),
        cmocka_unit_test(test_step_ignites_within_its_lag),
        cmocka_unit_test(test_ignition_needs_five_samples_at_least),
        cmocka_unit_test(test_rusage_and_active_time_thresholds),
        cmocka_unit_test(test_step_scales_down_after_the_load),
        cmocka_unit_test(test_no_scale_down_within_the_cooldown),
        cmocka_unit_test(test_burst),
        cmocka_unit_test(test_stale_mean_reignites_the_pinned_rules),
        cmocka_unit_test(test_guard_reverts_when_threads_do_not_pay),
        cmocka_unit_test(test_guard_reverts_cheaper_but_slower),
        cmocka_unit_test(test_guard_before_window_stays_inside_the_load),
        cmocka_unit_test(test_guard_parks_the_pool_when_the_load_leaves),
        cmocka_unit_test(test_guard_lets_the_pool_settle),
        cmocka_unit_test(test_guard_tries_again_and_resets_the_backoff),
        cmocka_unit_test(test_guard_keeps_threads_that_pay),
        cmocka_unit_test(test_backoff_is_bounded),
        cmocka_unit_test(test_refused_scale_downs_are_asked_again),
        cmocka_unit_test(test_target_always_in_range),
        cmocka_unit_test(test_one_thread_is_always_one),
        cmocka_unit_test(test_rule_names),
        cmocka_unit_test(test_mean_is_sixteen_samples),
        cmocka_unit_test(test_thresholds_are_strict),
        cmocka_unit_test(test_first_sample_only_primes),
        cmocka_unit_test(test_scale_up_one_thread_per_decision),
        cmocka_unit_test(test_scale_decides_on_the_mean_depth),
        cmocka_unit_test(test_scale_down_waits_for_an_empty_queue),
        cmocka_unit_test(test_cooldown_runs_from_the_last_scale_up),
        cmocka_unit_test(test_refused_scale_down_counts_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
