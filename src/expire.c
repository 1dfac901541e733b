/* expire.c — active expiry: finding keys whose time has passed when no
 * command looks them up.
 *
 * Step 0 (keyspace layer). Owns: the active expiry cycle and its statistics
 * (expired_stale_perc, expire_cycle_cpu_us, avg_ttl). Lazy expiry is in
 * db.c (expire_entry_if_needed); the EXPIRE/TTL/PERSIST commands are in
 * cmd_keys.c with the other keyspace commands.
 * Threads: main thread only, from cron (server.hz times a second).
 * Valkey: src/expire.c activeExpireCycle (the "slow" cycle) and
 * activeExpireCycleTryExpire. Valkey 8.1 walks the expires table with a
 * stateless scan cursor kept per db (db->expires_cursor); soloist does the
 * same with d->expire_cursor.
 */
#include <math.h>

#include "db.h"
#include "util.h"
#include "zmalloc.h"

/* Valkey: ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP — keys sampled per round. */
#define EXPIRE_KEYS_PER_LOOP 20
/* Valkey: ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE — another round follows
 * only while more than this percentage of a round's sample had expired. */
#define EXPIRE_ACCEPTABLE_STALE 10
/* Valkey bounds the buckets visited per round to keys_per_loop * 20 so a
 * sparse table cannot make one round scan forever. */
#define EXPIRE_MAX_BUCKETS_PER_LOOP (EXPIRE_KEYS_PER_LOOP * 20)

/* ratio (0..1) of expired keys among those sampled, smoothed over cycles;
 * db_stat carries it as a percentage times 100 for INFO (12.34% → 1234).
 * The double keeps the smoothing exact; `published` notices when CONFIG
 * RESETSTAT zeroed db_stat behind our back, and restarts from there. */
static double stale_ratio;
static long long published;

typedef struct expire_sample {
    long long now;
    size_t sampled, expired;
    long double ttl_sum; /* a TTL near LLONG_MAX (PEXPIREAT 2^63-1) would
                          * overflow a long long sum */
    long long ttl_samples;
    db_entry **doomed; /* expired entries seen by the current scan call */
    size_t ndoomed, cap;
} expire_sample;

/* The scan callback only looks and collects: deleting from `keys` here
 * would be allowed (it is a different table), and the hashtable even lets
 * a callback delete the entry it was given from `expires`, but collecting
 * and deleting after the call keeps the callback free of side effects and
 * the rule easy to state: nothing changes while a bucket is being walked. */
static void sample_entry(void *privdata, void *entry) {
    expire_sample *s = privdata;
    db_entry *e = entry;
    s->sampled++;
    if (db_entry_is_expired(e, s->now)) {
        if (s->ndoomed == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 32;
            s->doomed = zrealloc(s->doomed, s->cap * sizeof(*s->doomed));
        }
        s->doomed[s->ndoomed++] = e;
    } else {
        s->ttl_sum += (long double)(db_entry_expire(e) - s->now);
        s->ttl_samples++;
    }
}

/*@ active-expire-cycle */
void db_active_expire_cycle(db *d, long long budget_us) {
    uint64_t start = util_monotonic_us();
    size_t total_sampled = 0, total_expired = 0;
    expire_sample s = {0};
    int repeat;

    do {
        size_t num = db_expires_size(d);
        if (num == 0) break;
        if (num > EXPIRE_KEYS_PER_LOOP) num = EXPIRE_KEYS_PER_LOOP;

        /* One round: visit buckets until `num` keys were sampled. */
        s.sampled = s.expired = 0;
        s.ttl_sum = 0;
        s.ttl_samples = 0;
        s.now = util_mstime();
        int wrapped = 0;
        for (int buckets = 0; s.sampled < num && buckets < EXPIRE_MAX_BUCKETS_PER_LOOP; buckets++) {
            s.ndoomed = 0;
            d->expire_cursor = hashtable_scan(d->expires, d->expire_cursor, sample_entry, &s);
            for (size_t i = 0; i < s.ndoomed; i++) db_delete_expired(d, s.doomed[i]);
            s.expired += s.ndoomed;
            if (d->expire_cursor == 0) {
                wrapped = 1; /* a whole pass is done: enough for this cycle */
                break;
            }
        }
        total_sampled += s.sampled;
        total_expired += s.expired;
        db_stat.expired_keys += (long long)s.expired;

        /* Valkey's running average of the TTLs still to go, for INFO's
         * avg_ttl: each round moves it 2% towards the round's mean. */
        if (s.ttl_samples) {
            long long avg = (long long)(s.ttl_sum / (long double)s.ttl_samples);
            d->avg_ttl = d->avg_ttl == 0 ? avg : (d->avg_ttl / 50) * 49 + avg / 50;
        }

        /* Another round only while the sample says more than 10% of the
         * volatile keys are already dead (and there is time left). */
        repeat = !wrapped && s.sampled > 0 && s.expired * 100 / s.sampled > EXPIRE_ACCEPTABLE_STALE;
        if (util_monotonic_us() - start >= (uint64_t)budget_us) break;
    } while (repeat);

    zfree(s.doomed);
    uint64_t elapsed = util_monotonic_us() - start;
    db_stat.expire_cycle_cpu_us += (long long)elapsed;

    /* Valkey smooths the stale share with weight 0.05 per cycle. */
    if (db_stat.expired_stale_perc_x100 != published) stale_ratio = (double)db_stat.expired_stale_perc_x100 / 10000.0;
    double current = total_sampled ? (double)total_expired / (double)total_sampled : 0.0;
    stale_ratio = current * 0.05 + stale_ratio * 0.95;
    db_stat.expired_stale_perc_x100 = published = llround(stale_ratio * 10000.0);
}
/*@ end */
