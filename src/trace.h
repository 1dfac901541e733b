/* trace.h — what each thread did, and when: a recorder of events.
 *
 * Step 4 (threads layer, beside io_threads, which calls it; it calls nothing
 * but the clock). Owns: one ring of fixed-size events per thread (main = 0,
 * workers 1 .. N - 1), the switch that turns recording on and off, and the
 * snapshot main takes of the rings. trace_export.h writes a snapshot as
 * Chrome Trace Event JSON; the TRACE command (cmd_trace.c) drives both.
 * trace.c opens with the design: who writes what, why there is no lock, what
 * a snapshot sees, and what recording costs while it is off.
 * Threads: TRACE() on any thread, each into its own ring; every other
 * function on main only.
 * Valkey: none; soloist's own instrument.
 */
#ifndef SOLOIST_TRACE_H
#define SOLOIST_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What happened. Each event carries three words, a, b and c; the table
 * says what they hold. "client" is the client's id. Spans come as a
 * BEGIN and an END on one thread; the rest are instants.
 *
 *   type              thread  a          b                       c
 *   READ_BEGIN        any     client     commands queued
 *   READ_END          any     client     read()'s result         commands queued
 *   PARSED            any     client     commands queued         bytes left unparsed
 *   JOB_SUBMIT        main    job type   inbox: 0 shared, else   the job word
 *                                        the worker's private one
 *   JOB_REFUSED       main    job type   inbox, as above         the job word (the inbox
 *                                                                was full: a SUBMIT undone)
 *   JOB_TAKE          worker  job type   inbox, as above         the job word
 *   RESULT_SEND       worker  client     job type (job_request)
 *   RESULT_TAKE       main    client     result type (job_result)
 *   CMD_BEGIN         main    client     commands queued         reply bytes appended so far
 *   CMD_END           main    client     commands run            reply bytes appended so far
 *   WRITE_MARK        main    client
 *   WRITE_BEGIN       any     client
 *   WRITE_END         any     client     bytes written           the write's flags
 *   SLEEP_BEGIN/END   worker  END: 1 if main woke it
 *   PARK_BEGIN/END    worker
 *   POLL_BEGIN/END    main    END: events
 *   POLL_JOB_OUT      main    inbox, as above
 *   POLL_JOB_BACK     worker  events (the POLL job is done: main takes them)
 *   IGNITION          main    active before  active asked for        active after
 *
 * "Commands queued" counts the client's parsed commands not yet run, so a
 * read parsed READ_END's c minus READ_BEGIN's b. "Reply bytes appended"
 * is the client's reply_appended.
 */
typedef enum trace_type {
    TRACE_NONE = 0,
    TRACE_READ_BEGIN,
    TRACE_READ_END,
    TRACE_PARSED,
    TRACE_JOB_SUBMIT,
    TRACE_JOB_REFUSED,
    TRACE_JOB_TAKE,
    TRACE_RESULT_SEND,
    TRACE_RESULT_TAKE,
    TRACE_CMD_BEGIN,
    TRACE_CMD_END,
    TRACE_WRITE_MARK,
    TRACE_WRITE_BEGIN,
    TRACE_WRITE_END,
    TRACE_SLEEP_BEGIN,
    TRACE_SLEEP_END,
    TRACE_PARK_BEGIN,
    TRACE_PARK_END,
    TRACE_POLL_BEGIN,
    TRACE_POLL_END,
    TRACE_POLL_JOB_OUT,
    TRACE_POLL_JOB_BACK,
    TRACE_IGNITION,
    TRACE_TYPE_COUNT
} trace_type;

/* One event: 40 bytes. ts_ns is CLOCK_MONOTONIC, read by the thread that
 * recorded it, which tid names. */
typedef struct trace_event {
    uint64_t ts_ns;
    uint16_t type; /* a trace_type */
    uint16_t tid;
    uint32_t unused;
    uint64_t a, b, c;
} trace_event;

/* The most threads that have a ring, main counted: io_threads.h's
 * IO_THREADS_MAX, which io_threads.c checks against it. */
#define TRACE_THREADS_MAX 256
/* trace-buffer-events: the events each thread's ring holds. */
#define TRACE_EVENTS_MIN 1024
#define TRACE_EVENTS_DEFAULT 65536
#define TRACE_EVENTS_MAX (1 << 22)
/* All the rings of one recording together, at most (so io-threads 256 and
 * the largest rings are refused, not an allocation that fails). */
#define TRACE_BYTES_MAX (1ull << 30)
/* TRACE START [ms]: how long a recording lasts at most. */
#define TRACE_MS_DEFAULT 10000
#define TRACE_MS_MAX 60000

/* The switch, alone on its cache line (it is read by every thread at
 * every trace point, and written twice per recording). */
typedef struct trace_switch {
    _Alignas(64) _Atomic bool on;
    char pad[63];
} trace_switch;
extern trace_switch trace_recording;

/* Any thread: records one event into thread tid's ring. Call it through
 * TRACE, which evaluates none of its arguments while recording is off. */
void trace_emit(int tid, trace_type type, uint64_t a, uint64_t b, uint64_t c);

#ifndef SOLOIST_NO_TRACE
/* Whether a recording is on. Relaxed: it guards no data (trace_emit
 * acquires the recording word itself); a thread that reads it late records, or
 * skips, one event more. */
static inline bool trace_on(void) { return atomic_load_explicit(&trace_recording.on, memory_order_relaxed); }

/* The trace point. Off, it costs the load and the branch of trace_on();
 * the call is out of line. */
#define TRACE(tid, type, a, b, c)                                                                                      \
    do {                                                                                                               \
        if (__builtin_expect(trace_on(), 0))                                                                           \
            trace_emit((int)(tid), (type), (uint64_t)(a), (uint64_t)(b), (uint64_t)(c));                               \
    } while (0)
#else
/* -DSOLOIST_NO_TRACE (make VARIANT=notrace): the server without trace
 * points, the baseline that bench/trace_cost.py measures "off" against.
 * trace_on() is a constant, so the branches on it (TRACE, pass_park, the
 * cron's check) fold away; TRACE keeps its call under if (0) so its
 * arguments are still type-checked, and never evaluated, in this build
 * as in the other. trace_start refuses, so TRACE START says so instead of
 * recording nothing. */
static inline bool trace_on(void) { return false; }
#define TRACE(tid, type, a, b, c)                                                                                      \
    do {                                                                                                               \
        if (0) trace_emit((int)(tid), (type), (uint64_t)(a), (uint64_t)(b), (uint64_t)(c));                            \
    } while (0)
#endif

/* Main only, each of the rest; a failed check names the function and
 * aborts where io_threads' checks are compiled in. io_threads_init
 * registers its test of which thread is main (trace.c sits below the
 * module that knows). */
void trace_set_main_check(bool (*on_main)(void));

/* Starts a recording: rings of `events` events for threads 0 .. threads
 * - 1 (grown, never shrunk, and allocated here, not while recording),
 * what an earlier recording left dropped, and the recording stopped
 * after duration_ms. 0, or -1 with *err when an argument is out of its
 * range (the bounds above, TRACE_BYTES_MAX among them). */
int trace_start(int threads, uint32_t events, uint64_t duration_ms, const char **err);

/* Stops the recording; what it recorded stays until the next start. */
void trace_stop(void);

/* The pool grew while recording (CONFIG SET io-threads): rings for the
 * new threads. Threads without a ring drop their events, counted. */
void trace_threads_changed(int threads);

/* Main's timer: stops a recording past its duration (the events after its
 * end are not recorded anyway). */
void trace_cron(uint64_t now_ns);

typedef struct trace_status {
    bool on;
    int threads;           /* rings in the recording */
    uint32_t events_max;   /* each ring's limit */
    uint64_t duration_ms;  /* asked for */
    uint64_t remaining_ms; /* 0 when off */
    uint64_t recorded;     /* events in every ring */
    uint64_t dropped;      /* events a full ring refused */
    uint64_t no_ring;      /* events of a thread that had no ring */
} trace_status;
void trace_get_status(trace_status *out);

/* A snapshot of the last recording: each ring's events, in the order the
 * thread recorded them. The pointers are into the rings: valid on main
 * until the next trace_start, and never written meanwhile, even while the
 * recording goes on (trace.c says why). */
typedef struct trace_ring_view {
    const trace_event *ev;
    uint32_t n;
    uint64_t dropped;
} trace_ring_view;
typedef struct trace_snapshot {
    int threads;
    uint64_t start_ns, end_ns; /* end_ns: when it stopped, or will */
    bool on;
    uint64_t no_ring;
    trace_ring_view ring[TRACE_THREADS_MAX];
} trace_snapshot;
void trace_snapshot_take(trace_snapshot *out);

/* Frees every ring. Only once no thread can record any more (the pool is
 * shut down): a thread that read the switch before it went off may still
 * be writing into its ring. */
void trace_shutdown(void);

#endif
