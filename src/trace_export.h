/* trace_export.h — a recording as Chrome Trace Event JSON.
 *
 * Step 4 (threads layer, above trace.h, which it reads; it records nothing).
 * Owns: the JSON form of a snapshot (trace_snapshot_take), which
 * https://ui.perfetto.dev and chrome://tracing open: one track per thread
 * (pid 1, tid = soloist's thread id, named "main", "io-thread-1", ...),
 * a complete ("X") event per span, an instant per decision, and for each
 * request a flow (an arrow) from its read, through the run of its
 * commands on main, to the write that sends its reply. trace_export.c
 * says how a request is followed across threads.
 * Threads: main only (it reads a snapshot main took).
 * Valkey: none.
 */
#ifndef SOLOIST_TRACE_EXPORT_H
#define SOLOIST_TRACE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* What the export found, besides the JSON. */
typedef struct trace_export_counts {
    uint64_t events;   /* in the snapshot */
    uint64_t spans;    /* "X" events written */
    uint64_t requests; /* reads that parsed at least one command */
    uint64_t flows;    /* requests followed to their write: one arrow each */
} trace_export_counts;

/* The snapshot as one JSON object, {"otherData": {...}, "traceEvents":
 * [...]}: strict JSON (no trailing comma, every number finite),
 * timestamps in microseconds from the recording's start, with three
 * decimals. A zmalloc'd string of *len bytes, NUL-terminated; counts may
 * be NULL. */
char *trace_export_json(const trace_snapshot *s, size_t *len, trace_export_counts *counts);

#endif
