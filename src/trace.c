/* trace.c — the event recorder: a ring per thread, no lock.
 *
 * Step 4 (threads layer). trace.h says what it owns and lists the events.
 * Threads: trace_emit on any thread, into that thread's own ring; the
 * rest on main.
 * Valkey: none.
 *
 * WHO WRITES WHAT
 *
 * Each thread that records (main is 0, worker t is t) owns one ring: an
 * array of events and two words, `published` (how many events it holds)
 * and `dropped` (how many it refused). Only that thread writes them, so a
 * ring has a single writer and needs no lock and no read-modify-write:
 * the writer fills the next slot with plain stores, then publishes it
 * with one release store of `published`. Main writes everything else: the
 * switch (trace_recording), the recording word (which recording this is,
 * and each ring's limit in it), the deadline, and the ring pointers; it
 * creates rings, and never writes a ring's words once a thread may see it.
 * Nothing is allocated on the way: trace_start allocates the rings. So
 * the trace points in a job handler or a worker's loop add one thing a
 * worker writes besides what its job hands it (and its job counts): its
 * own ring, which no other thread writes.
 *
 * DROP THE NEWEST, NOT THE OLDEST
 *
 * A full ring refuses new events and counts them; it does not overwrite
 * its oldest. Three reasons. First, collection: a slot below `published`
 * is written once per recording, so main can read it while the thread
 * goes on recording, with nothing more than an acquire load of
 * `published`. Overwriting would let the writer reuse a slot main is
 * reading; main would then need a sequence count per slot, written twice
 * per event and checked on every read, or it would have to stop the
 * recording before it could read one. Second, what is asked for: TRACE
 * START records from the moment someone asked, for a bounded time, and
 * it is the start of that window one wants to see; a recorder that keeps
 * the last N events suits a crash dump, which soloist does not write.
 * Third, the arrows: a request whose end is cut off simply draws none,
 * while an overwritten ring would hold replies whose reads were lost.
 * The count of refused events is in TRACE STATUS and in the dump.
 *
 * RECORDINGS, ONE AFTER ANOTHER
 *
 * A ring outlives a recording. To start afresh main does not reset the
 * thread's count (that would make it a second writer): it bumps the
 * generation, which the recording word carries in its upper half, and the
 * writer, finding its `published` tagged with an older generation, starts
 * its ring again at slot 0. `published` and `dropped` carry the
 * generation in their upper halves too, so main reads a ring as empty
 * until its thread has recorded in this recording. A ring is replaced
 * only when a start asks for more events than it holds; the old one is
 * kept, unread, until trace_shutdown, since a thread that loaded its
 * pointer just before may still write into it. Capacities are powers of
 * two, so all the rings kept add up to less than the one in use.
 *
 * WHAT A SNAPSHOT SEES
 *
 * For each ring, the events its thread had published when main loaded
 * `published`: a prefix of what the thread did, in its order. The rings
 * are read one after another, so a ring read later may have gone on
 * further; the export merges them by time and pairs only what it has.
 * An event stamped after the recording's end is not recorded (each
 * writer compares its clock with the deadline, and TRACE STOP moves the
 * deadline to now), so a snapshot taken after the end is final but for
 * an event or two a thread was stamping as the recording stopped.
 *
 * WHAT "OFF" COSTS
 *
 * A trace point is TRACE(), which reads the switch and branches past an
 * out-of-line call: while recording is off, one load from a line no one
 * writes, a test and a branch that always goes the same way, and none of
 * the event's arguments evaluated. The switch is a relaxed atomic, not a
 * plain global: main writes it while workers read it (TRACE START comes
 * at any time, the workers running), and a plain read beside that write
 * is a data race, undefined in C11 and reported by ThreadSanitizer. A
 * relaxed load compiles to the same single load as a plain one on x86-64
 * and arm64; it orders nothing, and needs to: trace_emit acquires the
 * recording word itself. A thread that reads the switch a moment late
 * records one event more or one fewer.
 */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>

#include "queue_common.h"
#include "util.h"
#include "zmalloc.h"

typedef struct trace_ring {
    /* gen << 32 | events recorded. Written by the ring's thread alone
     * (a release store per event, which trace_snapshot_take acquires);
     * main writes it once, before the ring's pointer is published. */
    _Atomic uint64_t published;
    /* gen << 32 | events refused. The same writer; relaxed both sides: it
     * guards no data. */
    _Atomic uint64_t dropped;
    uint32_t cap;               /* a power of two; fixed for the ring's life */
    struct trace_ring *retired; /* main's: the next ring kept until shutdown */
    trace_event ev[];
} trace_ring;

trace_switch trace_recording;

/* Written by main at start, read by every recording thread for every
 * event: on a line of their own, away from anything written often. */
static struct {
    /* gen << 32 | each ring's limit. Release in trace_start, acquire in
     * trace_emit: a thread that reads a generation sees the deadline and
     * the ring pointers stored before it. gen 0: never started. */
    _Alignas(CACHE_LINE_SIZE) _Atomic uint64_t recording;
    /* CLOCK_MONOTONIC ns past which nothing is recorded. Relaxed: read
     * after the recording word's acquire, which orders main's store before it;
     * a later value (TRACE STOP's) is read as soon as it arrives. */
    _Atomic uint64_t deadline_ns;
    /* Each thread's ring. Release where main stores one, acquire where a
     * thread loads it, so the ring's words are set when it is seen. */
    _Atomic(trace_ring *) rings[TRACE_THREADS_MAX];
} shared;

/* Events of a thread with no ring (the pool grew past the rings while
 * recording and trace_threads_changed was not told): written only then,
 * so on its own line. Relaxed: a count. */
static struct { _Alignas(CACHE_LINE_SIZE) _Atomic uint64_t count; } no_ring;

/* Main's own. */
typedef struct trace_main {
    uint32_t gen, limit;
    int threads;
    uint64_t start_ns, end_ns, duration_ms;
    trace_ring *retired;
    bool (*on_main)(void);
} trace_main;
static trace_main tm;

void trace_set_main_check(bool (*on_main)(void)) { tm.on_main = on_main; }

static void assert_main(const char *func) {
#ifdef SOLOIST_ASSERT_THREADS
    if (tm.on_main && !tm.on_main()) {
        fprintf(stderr, "trace: %s called off the main thread\n", func);
        abort();
    }
#else
    (void)func;
#endif
}

/*@ trace-emit */
void trace_emit(int tid, trace_type type, uint64_t a, uint64_t b, uint64_t c) {
    /* Acquire: pairs with the release store in trace_start. */
    uint64_t s = atomic_load_explicit(&shared.recording, memory_order_acquire);
    uint32_t gen = (uint32_t)(s >> 32), limit = (uint32_t)s;
    if (gen == 0) return;
    uint64_t now = util_monotonic_ns();
    if (now > atomic_load_explicit(&shared.deadline_ns, memory_order_relaxed)) return;
    trace_ring *r = (unsigned)tid < TRACE_THREADS_MAX
                        ? atomic_load_explicit(&shared.rings[tid], memory_order_acquire) /* pairs with set_ring */
                        : NULL;
    if (!r) {
        atomic_fetch_add_explicit(&no_ring.count, 1, memory_order_relaxed);
        return;
    }
    /* Relaxed: this thread's own last store, or main's first one, which
     * the acquire of the pointer ordered before. */
    uint64_t p = atomic_load_explicit(&r->published, memory_order_relaxed);
    uint32_t n = (uint32_t)(p >> 32) == gen ? (uint32_t)p : 0; /* a new recording starts at slot 0 */
    if (limit > r->cap) limit = r->cap;
    if (n >= limit) {
        uint64_t d = atomic_load_explicit(&r->dropped, memory_order_relaxed);
        uint32_t dn = (uint32_t)(d >> 32) == gen ? (uint32_t)d : 0;
        if (dn < UINT32_MAX) dn++;
        atomic_store_explicit(&r->dropped, (uint64_t)gen << 32 | dn, memory_order_relaxed);
        return;
    }
    trace_event *e = &r->ev[n];
    e->ts_ns = now;
    e->type = (uint16_t)type;
    e->tid = (uint16_t)tid;
    e->unused = 0;
    e->a = a;
    e->b = b;
    e->c = c;
    /* Release: the slot's stores before the count that shows it
     * (trace_snapshot_take acquires it). */
    atomic_store_explicit(&r->published, (uint64_t)gen << 32 | (n + 1), memory_order_release);
}
/*@ end */

static uint32_t pow2_at_least(uint32_t n) {
    uint32_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

/* Main: gives thread t a ring of at least cap events, keeping the one it
 * replaces (see "Recordings, one after another"). */
static void set_ring(int t, uint32_t cap) {
    trace_ring *old = atomic_load_explicit(&shared.rings[t], memory_order_relaxed); /* main's own store */
    if (old && old->cap >= cap) return;
    trace_ring *r = zmalloc(sizeof(*r) + (size_t)cap * sizeof(trace_event));
    /* Relaxed, both: no thread can see r before the release below. */
    atomic_store_explicit(&r->published, 0, memory_order_relaxed);
    atomic_store_explicit(&r->dropped, 0, memory_order_relaxed);
    r->cap = cap;
    r->retired = NULL;
    if (old) {
        old->retired = tm.retired;
        tm.retired = old;
    }
    atomic_store_explicit(&shared.rings[t], r, memory_order_release); /* pairs with trace_emit's acquire */
}

/*@ trace-start */
int trace_start(int threads, uint32_t events, uint64_t duration_ms, const char **err) {
    assert_main(__func__);
#ifdef SOLOIST_NO_TRACE
    (void)threads, (void)events, (void)duration_ms;
    *err = "this server was built without trace points (-DSOLOIST_NO_TRACE)";
    return -1;
#endif
    if (threads < 1 || threads > TRACE_THREADS_MAX) {
        *err = "thread count out of range";
        return -1;
    }
    if (events < TRACE_EVENTS_MIN || events > TRACE_EVENTS_MAX) {
        *err = "trace-buffer-events out of range";
        return -1;
    }
    if (duration_ms < 1 || duration_ms > TRACE_MS_MAX) {
        *err = "duration out of range";
        return -1;
    }
    uint32_t cap = pow2_at_least(events);
    if ((uint64_t)threads * cap * sizeof(trace_event) > TRACE_BYTES_MAX) {
        *err = "the rings would pass 1 GB: fewer trace-buffer-events";
        return -1;
    }
    for (int t = 0; t < threads; t++) set_ring(t, cap);
    if (++tm.gen == 0) tm.gen = 1; /* 0 means "never started" */
    tm.limit = events;
    tm.threads = threads;
    tm.duration_ms = duration_ms;
    tm.start_ns = util_monotonic_ns();
    tm.end_ns = tm.start_ns + duration_ms * 1000000;
    atomic_store_explicit(&no_ring.count, 0, memory_order_relaxed); /* relaxed: a count */
    /* Relaxed: the release store of the recording word below publishes it. */
    atomic_store_explicit(&shared.deadline_ns, tm.end_ns, memory_order_relaxed);
    /* Release: pairs with trace_emit's acquire (the deadline and the rings
     * stored above are seen with the generation). */
    atomic_store_explicit(&shared.recording, (uint64_t)tm.gen << 32 | tm.limit, memory_order_release);
    /* Relaxed: trace_on() says why. */
    atomic_store_explicit(&trace_recording.on, true, memory_order_relaxed);
    return 0;
}
/*@ end */

void trace_stop(void) {
    assert_main(__func__);
    if (!atomic_load_explicit(&trace_recording.on, memory_order_relaxed)) return; /* main's own store */
    atomic_store_explicit(&trace_recording.on, false, memory_order_relaxed);      /* trace_on() says why */
    uint64_t now = util_monotonic_ns();
    if (now < tm.end_ns) {
        tm.end_ns = now;
        /* Relaxed: a thread that has not seen it yet records an event
         * stamped a moment after the stop (the essay). */
        atomic_store_explicit(&shared.deadline_ns, now, memory_order_relaxed);
    }
}

void trace_threads_changed(int threads) {
    assert_main(__func__);
    if (tm.gen == 0 || threads <= tm.threads) return;
    if (threads > TRACE_THREADS_MAX) threads = TRACE_THREADS_MAX;
    for (int t = tm.threads; t < threads; t++) set_ring(t, pow2_at_least(tm.limit));
    tm.threads = threads;
}

void trace_cron(uint64_t now_ns) {
    assert_main(__func__);
    /* Relaxed: main's own store. */
    if (atomic_load_explicit(&trace_recording.on, memory_order_relaxed) && now_ns > tm.end_ns) trace_stop();
}

/* One ring as main reads it: the events this recording published, and
 * its count of refusals. */
static trace_ring_view view(int t) {
    trace_ring_view v = {0};
    trace_ring *r = atomic_load_explicit(&shared.rings[t], memory_order_relaxed); /* main's own store */
    if (!r || tm.gen == 0) return v;
    /* Acquire: pairs with the release in trace_emit; every slot below the
     * count is written, and stays as it is for this recording. */
    uint64_t p = atomic_load_explicit(&r->published, memory_order_acquire);
    uint64_t d = atomic_load_explicit(&r->dropped, memory_order_relaxed); /* a count: it orders nothing */
    if ((uint32_t)(p >> 32) == tm.gen) v.n = (uint32_t)p;
    if ((uint32_t)(d >> 32) == tm.gen) v.dropped = (uint32_t)d;
    v.ev = r->ev;
    return v;
}

/*@ trace-snapshot */
void trace_snapshot_take(trace_snapshot *out) {
    assert_main(__func__);
    out->threads = tm.gen ? tm.threads : 0;
    out->start_ns = tm.start_ns;
    out->end_ns = tm.end_ns;
    out->on = atomic_load_explicit(&trace_recording.on, memory_order_relaxed); /* main's own store */
    out->no_ring = atomic_load_explicit(&no_ring.count, memory_order_relaxed); /* a count */
    for (int t = 0; t < out->threads; t++) out->ring[t] = view(t);
}
/*@ end */

void trace_get_status(trace_status *out) {
    assert_main(__func__);
    trace_snapshot *s = zmalloc(sizeof(*s));
    trace_snapshot_take(s);
    *out = (trace_status){.on = s->on, .threads = s->threads, .events_max = tm.limit, .duration_ms = tm.duration_ms};
    uint64_t now = util_monotonic_ns();
    if (s->on && now < tm.end_ns) out->remaining_ms = (tm.end_ns - now + 999999) / 1000000;
    for (int t = 0; t < s->threads; t++) {
        out->recorded += s->ring[t].n;
        out->dropped += s->ring[t].dropped;
    }
    out->no_ring = s->no_ring;
    zfree(s);
}

void trace_shutdown(void) {
    assert_main(__func__);
    /* Relaxed, all: no other thread records any more (the caller's
     * promise: the pool is joined), so nothing here is read beside it. */
    atomic_store_explicit(&trace_recording.on, false, memory_order_relaxed);
    atomic_store_explicit(&shared.recording, 0, memory_order_relaxed);
    for (int t = 0; t < TRACE_THREADS_MAX; t++) {
        trace_ring *r = atomic_load_explicit(&shared.rings[t], memory_order_relaxed);
        atomic_store_explicit(&shared.rings[t], NULL, memory_order_relaxed);
        zfree(r);
    }
    while (tm.retired) {
        trace_ring *r = tm.retired;
        tm.retired = r->retired;
        zfree(r);
    }
    uint32_t gen = tm.gen; /* a later recording still gets a new generation */
    tm = (trace_main){.gen = gen, .on_main = tm.on_main};
}
