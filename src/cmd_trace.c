/* cmd_trace.c — TRACE, soloist's own command: record what each thread
 * does, and hand the recording out as a trace a viewer draws.
 *
 * Step 4 (server layer: it reads the configuration and the pool's size,
 * and drives trace.h and trace_export.h). Owns: TRACE START [ms], STOP, DUMP,
 * STATUS and HELP.
 *   TRACE START [ms]  records for ms milliseconds (TRACE_MS_DEFAULT,
 *                     at most TRACE_MS_MAX), every thread of the pool
 *                     into a ring of trace-buffer-events events; starting
 *                     again drops the last recording. +OK
 *   TRACE STOP        stops early; the recording stays. +OK
 *   TRACE DUMP        the last recording (or the one going on, so far)
 *                     as one bulk string of Chrome Trace Event JSON, which
 *                     https://ui.perfetto.dev and chrome://tracing open.
 *                     The server writes no file: save the reply, e.g.
 *                     redis-cli --raw TRACE DUMP > trace.json. It runs
 *                     on main like any command, so a dump of many full
 *                     rings holds main for a while; the JSON takes over a
 *                     hundred bytes an event.
 *   TRACE STATUS      a map: recording, remaining_ms, duration_ms,
 *                     threads, buffer_events, events, dropped, no_ring.
 * Threads: main only, as every command.
 * Valkey: none; Valkey has no TRACE command. The errors are in Valkey's
 * form ("ERR ...", its wording for an unknown subcommand and a wrong
 * count of arguments).
 */
#include <stdlib.h>
#include <strings.h>

#include "client.h"
#include "commands.h"
#include "io_threads.h"
#include "reply.h"
#include "server.h"
#include "trace.h"
#include "trace_export.h"
#include "zmalloc.h"

static const char *const trace_help[] = {
    "START [<milliseconds>]",
    "    Record what every thread does, for <milliseconds> (default 10000, at most 60000).",
    "    Each thread's ring holds trace-buffer-events events; a full ring drops newer ones.",
    "STOP",
    "    Stop recording; the recording is kept until the next START.",
    "DUMP",
    "    Return the recording as Chrome Trace Event JSON (open it in ui.perfetto.dev).",
    "STATUS",
    "    Return whether a recording is on, its time left and its counts.",
    NULL,
};

static void trace_start_command(client *c) {
    long long ms = TRACE_MS_DEFAULT;
    if (c->argc > 3) return reply_error(c, "ERR wrong number of arguments for 'trace|start' command");
    if (c->argc == 3) {
        obj *arg = c->argv[2];
        if (!str_to_ll(arg->ptr, arg->len, &ms)) return reply_error(c, "ERR value is not an integer or out of range");
        if (ms < 1 || ms > TRACE_MS_MAX)
            return reply_error_format(c, "ERR TRACE START duration must be between 1 and %d milliseconds",
                                      TRACE_MS_MAX);
    }
    int threads = io_threads_num() > 0 ? io_threads_num() : 1;
    const char *err = NULL;
    if (trace_start(threads, (uint32_t)server.trace_buffer_events, (uint64_t)ms, &err) != 0)
        return reply_error_format(c, "ERR TRACE START failed: %s", err);
    reply_ok(c);
}

static void trace_dump_command(client *c) {
    trace_snapshot *s = zmalloc(sizeof(*s));
    trace_snapshot_take(s);
    if (s->threads == 0) {
        zfree(s);
        return reply_error(c, "ERR no trace recorded: TRACE START first");
    }
    size_t len;
    char *json = trace_export_json(s, &len, NULL);
    reply_bulk_buf(c, json, len);
    zfree(json);
    zfree(s);
}

static void trace_status_command(client *c) {
    trace_status st;
    trace_get_status(&st);
    reply_map_len(c, 8);
    reply_map_ll(c, "recording", st.on);
    reply_map_ll(c, "remaining_ms", (long long)st.remaining_ms);
    reply_map_ll(c, "duration_ms", (long long)st.duration_ms);
    reply_map_ll(c, "threads", st.threads);
    reply_map_ll(c, "buffer_events", st.events_max);
    reply_map_ll(c, "events", (long long)st.recorded);
    reply_map_ll(c, "dropped", (long long)st.dropped);
    reply_map_ll(c, "no_ring", (long long)st.no_ring);
}

/* The container's proc: the dispatcher has found the subcommand and
 * checked its arity (commands.c), except START's upper bound. */
static void trace_command(client *c) {
    const char *sub = c->argv[1]->ptr;
    if (!strcasecmp(sub, "start")) {
        trace_start_command(c);
    } else if (!strcasecmp(sub, "stop")) {
        trace_stop();
        reply_ok(c);
    } else if (!strcasecmp(sub, "dump")) {
        trace_dump_command(c);
    } else if (!strcasecmp(sub, "status")) {
        trace_status_command(c);
    } else {
        reply_help(c, trace_help);
    }
}

#define TRACE_FLAGS (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)

command trace_subcommands[] = {
    SUBCOMMAND("trace|start", trace_command, -2, TRACE_FLAGS, "server",
               "soloist's own: records what every thread does, for a bounded time."),
    SUBCOMMAND("trace|stop", trace_command, 2, TRACE_FLAGS, "server", "soloist's own: stops the recording."),
    SUBCOMMAND("trace|dump", trace_command, 2, TRACE_FLAGS, "server",
               "soloist's own: returns the recording as Chrome Trace Event JSON."),
    SUBCOMMAND("trace|status", trace_command, 2, TRACE_FLAGS, "server",
               "soloist's own: returns whether a recording is on, and its counts."),
    SUBCOMMAND("trace|help", trace_command, 2, CMD_LOADING | CMD_STALE, "server",
               "Returns helpful text about the different subcommands."),
    {0},
};

command trace_commands[] = {
    {"trace", trace_command, -2, TRACE_FLAGS, 0, 0, 0, "server",
     "soloist's own: a container for recording what each thread does.", 0, 0, 0, 0},
    {0},
};
