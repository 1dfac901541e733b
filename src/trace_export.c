/* trace_export.c — a snapshot of the rings, as Chrome Trace Event JSON.
 *
 * Step 4 (threads layer). trace_export.h says what it writes.
 * Threads: main only.
 * Valkey: none.
 *
 * SPANS AND INSTANTS
 *
 * The rings are merged into one list ordered by time (each ring already
 * is, being one thread's clock readings; ties go to the lower thread id).
 * A BEGIN waits on its thread until the matching END, and the two become
 * one complete event ("X", with its duration); a BEGIN whose END the
 * snapshot lacks, or an END whose BEGIN came before the recording, is
 * left out. Every other event is an instant on its thread's track.
 *
 * FOLLOWING ONE REQUEST
 *
 * A request here is one read that parsed at least one command; the k-th
 * of a client's is its request k, and the arrow's id is the client's id
 * times 2^24 plus k (a JSON number below 2^53 while client ids stay below
 * 2^29). Three steps, in time order per client, make its arrow:
 *
 *   read     READ_END says how many commands the read parsed: they join
 *            the client's queue, in order.
 *   commands a run on main (CMD_BEGIN/END) runs the oldest commands
 *            queued; the request is done running when its last one has.
 *            Commands queued before the recording (CMD_BEGIN counts what
 *            was queued) are the oldest, and run first.
 *   write    main marks where the next write will stop (WRITE_MARK)
 *            before every write, inline or handed to a worker, and never
 *            while one is in flight. So the first write to end after a
 *            mark that followed the run is the one that carries the
 *            request's reply, or its first bytes.
 *
 * Each step is ordered after the one before it by a hand-off between
 * threads (the token's release and acquire), and each time stamp is read
 * on its side of that hand-off, so time order is the causal order here.
 * The arrow is drawn as flow events ("s", "t", "f") at the start of the
 * read, the run and the write, with the category of those spans: Perfetto
 * and chrome://tracing bind a flow event to the slice around it, Chrome's
 * DevTools to the slice of the same category that starts at its time.
 */
#include "trace_export.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "textbuf.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ the text */

/* Every event after the first is preceded by a comma: no trailing one. */
typedef struct writer {
    textbuf o;
    uint64_t start_ns;
    bool first;
    trace_export_counts n;
} writer;

/* Opens one event object, its common keys written; the caller closes it. */
static void ev_open(writer *w, const char *ph, const char *name, int tid, uint64_t ts_ns) {
    uint64_t us = ts_ns > w->start_ns ? ts_ns - w->start_ns : 0;
    textbuf_printf(&w->o,
                   "%s\n{\"ph\":\"%s\",\"cat\":\"soloist\",\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%llu.%03u",
                   w->first ? "" : ",", ph, name, tid, (unsigned long long)(us / 1000), (unsigned)(us % 1000));
    w->first = false;
}

static const char *job_name(uint64_t type) {
    static const char *const names[JOB_REQ_COUNT] = {"read", "write", "free_argv", "free_obj", "poll", "accept"};
    return type < JOB_REQ_COUNT ? names[type] : "unknown";
}

static void inbox_args(writer *w, uint64_t inbox) {
    if (inbox == 0)
        textbuf_printf(&w->o, "\"inbox\":\"shared\"");
    else
        textbuf_printf(&w->o, "\"inbox\":\"private\",\"worker\":%llu", (unsigned long long)inbox);
}

/* ------------------------------------------------------------ the spans */

enum { SPAN_READ, SPAN_CMD, SPAN_WRITE, SPAN_SLEEP, SPAN_PARK, SPAN_POLL, SPAN_KINDS };
static const struct {
    trace_type begin, end;
    const char *name;
} spans[SPAN_KINDS] = {
    [SPAN_READ] = {TRACE_READ_BEGIN, TRACE_READ_END, "read"},
    [SPAN_CMD] = {TRACE_CMD_BEGIN, TRACE_CMD_END, "commands"},
    [SPAN_WRITE] = {TRACE_WRITE_BEGIN, TRACE_WRITE_END, "write"},
    [SPAN_SLEEP] = {TRACE_SLEEP_BEGIN, TRACE_SLEEP_END, "sleep"},
    [SPAN_PARK] = {TRACE_PARK_BEGIN, TRACE_PARK_END, "parked"},
    [SPAN_POLL] = {TRACE_POLL_BEGIN, TRACE_POLL_END, "epoll_wait"},
};

/* The span kind a BEGIN or END opens or closes; -1 for an instant. */
static int span_of(unsigned type, bool *is_end) {
    for (int k = 0; k < SPAN_KINDS; k++) {
        if (type == spans[k].begin || type == spans[k].end) {
            *is_end = type == spans[k].end;
            return k;
        }
    }
    return -1;
}

/* The commands a read parsed: the queue after it, less the queue before. */
static uint64_t parsed(const trace_event *b, const trace_event *e) { return e->c > b->b ? e->c - b->b : 0; }

static void write_span(writer *w, int kind, const trace_event *b, const trace_event *e) {
    ev_open(w, "X", spans[kind].name, b->tid, b->ts_ns);
    uint64_t dur = e->ts_ns - b->ts_ns;
    textbuf_printf(&w->o, ",\"dur\":%llu.%03u,\"args\":{", (unsigned long long)(dur / 1000), (unsigned)(dur % 1000));
    switch (kind) {
    case SPAN_READ:
        textbuf_printf(&w->o, "\"client\":%llu,\"bytes\":%lld,\"commands\":%llu", (unsigned long long)e->a,
                       (long long)e->b, (unsigned long long)parsed(b, e));
        break;
    case SPAN_CMD:
        textbuf_printf(&w->o, "\"client\":%llu,\"queued\":%llu,\"commands\":%llu,\"reply_bytes\":%llu",
                       (unsigned long long)e->a, (unsigned long long)b->b, (unsigned long long)e->b,
                       (unsigned long long)(e->c - b->c));
        break;
    case SPAN_WRITE:
        textbuf_printf(&w->o, "\"client\":%llu,\"bytes\":%llu", (unsigned long long)e->a, (unsigned long long)e->b);
        break;
    case SPAN_SLEEP: textbuf_printf(&w->o, "\"woken_by_main\":%s", e->a ? "true" : "false"); break;
    case SPAN_POLL: textbuf_printf(&w->o, "\"events\":%llu", (unsigned long long)e->a); break;
    }
    textbuf_printf(&w->o, "}}");
    w->n.spans++;
}

static void write_instant(writer *w, const trace_event *e) {
    static const char *const names[TRACE_TYPE_COUNT] = {
        [TRACE_PARSED] = "parsed",
        [TRACE_JOB_SUBMIT] = "submit",
        [TRACE_JOB_REFUSED] = "refused",
        [TRACE_JOB_TAKE] = "take",
        [TRACE_RESULT_SEND] = "result sent",
        [TRACE_RESULT_TAKE] = "result taken",
        [TRACE_WRITE_MARK] = "write mark",
        [TRACE_POLL_JOB_OUT] = "poll job out",
        [TRACE_POLL_JOB_BACK] = "poll job back",
        [TRACE_IGNITION] = "ignition",
    };
    const char *name = e->type < TRACE_TYPE_COUNT && names[e->type] ? names[e->type] : "unknown";
    ev_open(w, "i", name, e->tid, e->ts_ns);
    textbuf_printf(&w->o, ",\"s\":\"t\",\"args\":{");
    unsigned long long a = e->a, b = e->b, c = e->c;
    switch (e->type) {
    case TRACE_PARSED: textbuf_printf(&w->o, "\"client\":%llu,\"queued\":%llu,\"unparsed_bytes\":%llu", a, b, c); break;
    case TRACE_JOB_SUBMIT:
    case TRACE_JOB_REFUSED:
    case TRACE_JOB_TAKE:
        textbuf_printf(&w->o, "\"job\":\"%s\",", job_name(a));
        inbox_args(w, b);
        /* The job word (the payload's address, its type in the low bits):
         * a take names the submit it ran, so a reader can time the job's
         * wait in its inbox (tools/trace.py's "queued"). */
        textbuf_printf(&w->o, ",\"word\":%llu", c);
        break;
    case TRACE_RESULT_SEND: textbuf_printf(&w->o, "\"client\":%llu,\"job\":\"%s\"", a, job_name(b)); break;
    case TRACE_RESULT_TAKE:
        textbuf_printf(&w->o, "\"client\":%llu,\"job\":\"%s\"", a, b == JOB_RES_READ_CLIENT ? "read" : "write");
        break;
    case TRACE_WRITE_MARK: textbuf_printf(&w->o, "\"client\":%llu", a); break;
    case TRACE_POLL_JOB_OUT: inbox_args(w, a); break;
    case TRACE_POLL_JOB_BACK: textbuf_printf(&w->o, "\"events\":%llu", a); break;
    case TRACE_IGNITION:
        textbuf_printf(&w->o, "\"active_before\":%llu,\"active_asked\":%llu,\"active_after\":%llu", a, b, c);
        break;
    }
    textbuf_printf(&w->o, "}}");
}

/* --------------------------------------------------------- the requests */

enum { REQ_QUEUED, REQ_RAN, REQ_MARKED };
typedef struct req {
    uint32_t seq, commands, left; /* left: its commands not run yet */
    uint8_t state;
    uint16_t read_tid;
    uint64_t read_ns, cmd_ns;
} req;

/* One client's requests not yet written: q[head, len). */
typedef struct cstate {
    uint64_t id; /* 0: a free slot (client ids start at 1) */
    uint32_t next_seq;
    req *q;
    uint32_t head, len, cap;
} cstate;

typedef struct cmap {
    cstate *slot;
    size_t cap, used; /* cap a power of two, at most half used */
} cmap;

static cstate *client_state(cmap *m, uint64_t id) {
    if (2 * (m->used + 1) > m->cap) {
        cmap bigger = {.cap = m->cap ? m->cap * 2 : 64};
        bigger.slot = zcalloc(bigger.cap * sizeof(cstate));
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->slot[i].id) continue;
            size_t j = m->slot[i].id & (bigger.cap - 1);
            while (bigger.slot[j].id) j = (j + 1) & (bigger.cap - 1);
            bigger.slot[j] = m->slot[i];
        }
        bigger.used = m->used;
        zfree(m->slot);
        *m = bigger;
    }
    size_t j = id & (m->cap - 1);
    while (m->slot[j].id && m->slot[j].id != id) j = (j + 1) & (m->cap - 1);
    if (!m->slot[j].id) {
        m->slot[j].id = id;
        m->used++;
    }
    return &m->slot[j];
}

static void read_parsed(writer *w, cmap *m, const trace_event *b, const trace_event *e) {
    uint64_t commands = parsed(b, e);
    if (commands == 0) return;
    cstate *cs = client_state(m, e->a);
    if (cs->len == cs->cap) {
        if (cs->head > 0) { /* make room at the front first */
            memmove(cs->q, cs->q + cs->head, (cs->len - cs->head) * sizeof(req));
            cs->len -= cs->head;
            cs->head = 0;
        }
        if (cs->len == cs->cap) {
            cs->cap = cs->cap ? cs->cap * 2 : 8;
            cs->q = zrealloc(cs->q, cs->cap * sizeof(req));
        }
    }
    cs->q[cs->len++] = (req){.seq = ++cs->next_seq,
                             .commands = (uint32_t)commands,
                             .left = (uint32_t)commands,
                             .state = REQ_QUEUED,
                             .read_tid = b->tid,
                             .read_ns = b->ts_ns};
    w->n.requests++;
}

static void commands_ran(cmap *m, const trace_event *b, const trace_event *e) {
    cstate *cs = client_state(m, e->a);
    uint64_t known = 0;
    for (uint32_t i = cs->head; i < cs->len; i++) known += cs->q[i].left;
    uint64_t ran = e->b;
    uint64_t before = b->b > known ? b->b - known : 0; /* queued before the recording: they run first */
    ran -= ran < before ? ran : before;
    for (uint32_t i = cs->head; i < cs->len && ran > 0; i++) {
        req *r = &cs->q[i];
        if (r->left == 0) continue;
        uint32_t take = ran < r->left ? (uint32_t)ran : r->left;
        r->left -= take;
        ran -= take;
        if (r->left == 0) {
            r->state = REQ_RAN;
            r->cmd_ns = b->ts_ns;
        }
    }
}

static void flow_step(writer *w, const char *ph, uint64_t id, int tid, uint64_t ts_ns, const req *r, uint64_t client) {
    ev_open(w, ph, "request", tid, ts_ns);
    textbuf_printf(&w->o, ",\"id\":%llu", (unsigned long long)id);
    if (ph[0] == 'f') textbuf_printf(&w->o, ",\"bp\":\"e\"");
    if (ph[0] == 's')
        textbuf_printf(&w->o, ",\"args\":{\"client\":%llu,\"request\":%u,\"commands\":%u}", (unsigned long long)client,
                       r->seq, r->commands);
    textbuf_printf(&w->o, "}");
}

/* A write ended (b: its BEGIN): every request marked before it is
 * carried by it. */
static void write_ended(writer *w, cmap *m, const trace_event *b) {
    cstate *cs = client_state(m, b->a);
    while (cs->head < cs->len && cs->q[cs->head].state == REQ_MARKED) {
        const req *r = &cs->q[cs->head++];
        uint64_t id = (cs->id << 24) + r->seq;
        flow_step(w, "s", id, r->read_tid, r->read_ns, r, cs->id);
        flow_step(w, "t", id, 0, r->cmd_ns, r, cs->id);
        flow_step(w, "f", id, b->tid, b->ts_ns, r, cs->id);
        w->n.flows++;
    }
}

static void marked(cmap *m, uint64_t client) {
    cstate *cs = client_state(m, client);
    for (uint32_t i = cs->head; i < cs->len; i++)
        if (cs->q[i].state == REQ_RAN) cs->q[i].state = REQ_MARKED;
}

/* --------------------------------------------------------- the whole */

static int by_time(const void *x, const void *y) {
    const trace_event *a = *(const trace_event *const *)x, *b = *(const trace_event *const *)y;
    if (a->ts_ns != b->ts_ns) return a->ts_ns < b->ts_ns ? -1 : 1;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    return a < b ? -1 : a > b; /* one ring: its order */
}

static void write_header(writer *w, const trace_snapshot *s) {
    uint64_t dropped = 0;
    for (int t = 0; t < s->threads; t++) dropped += s->ring[t].dropped;
    textbuf_printf(
        &w->o,
        "{\"otherData\":{\"clock\":\"CLOCK_MONOTONIC\",\"start_ns\":\"%llu\",\"recording\":\"%s\","
        "\"threads\":\"%d\",\"events\":\"%llu\",\"dropped\":\"%llu\",\"no_ring\":\"%llu\"},\n\"traceEvents\":[",
        (unsigned long long)s->start_ns, s->on ? "on" : "off", s->threads, (unsigned long long)w->n.events,
        (unsigned long long)dropped, (unsigned long long)s->no_ring);
    ev_open(w, "M", "process_name", 0, s->start_ns);
    textbuf_printf(&w->o, ",\"args\":{\"name\":\"soloist-server\"}}");
    for (int t = 0; t < s->threads; t++) {
        char name[32];
        if (t == 0)
            snprintf(name, sizeof name, "main");
        else
            snprintf(name, sizeof name, "io-thread-%d", t);
        ev_open(w, "M", "thread_name", t, s->start_ns);
        textbuf_printf(&w->o, ",\"args\":{\"name\":\"%s\"}}", name);
        ev_open(w, "M", "thread_sort_index", t, s->start_ns);
        textbuf_printf(&w->o, ",\"args\":{\"sort_index\":%d}}", t);
    }
}

char *trace_export_json(const trace_snapshot *s, size_t *len, trace_export_counts *counts) {
    writer w = {.start_ns = s->start_ns, .first = true};
    for (int t = 0; t < s->threads; t++) w.n.events += s->ring[t].n;
    const trace_event **all = zmalloc((w.n.events ? w.n.events : 1) * sizeof(*all));
    size_t k = 0;
    for (int t = 0; t < s->threads; t++)
        for (uint32_t i = 0; i < s->ring[t].n; i++) all[k++] = &s->ring[t].ev[i];
    qsort(all, k, sizeof(*all), by_time);
    int threads = s->threads ? s->threads : 1;
    const trace_event **open = zcalloc((size_t)threads * SPAN_KINDS * sizeof(*open));
    cmap clients = {0};
    write_header(&w, s);
    for (size_t i = 0; i < k; i++) {
        const trace_event *e = all[i];
        bool is_end = false;
        int kind = span_of(e->type, &is_end);
        if (kind < 0) {
            write_instant(&w, e);
            if (e->type == TRACE_WRITE_MARK) marked(&clients, e->a);
            continue;
        }
        const trace_event **slot = &open[(size_t)(e->tid < threads ? e->tid : 0) * SPAN_KINDS + kind];
        if (!is_end) {
            *slot = e;
            continue;
        }
        const trace_event *b = *slot;
        *slot = NULL;
        if (!b || b->tid != e->tid) continue; /* its BEGIN came before the recording */
        write_span(&w, kind, b, e);
        if (kind == SPAN_READ) read_parsed(&w, &clients, b, e);
        if (kind == SPAN_CMD) commands_ran(&clients, b, e);
        if (kind == SPAN_WRITE) write_ended(&w, &clients, b);
    }
    textbuf_printf(&w.o, "\n]}\n");
    for (size_t i = 0; i < clients.cap; i++) zfree(clients.slot[i].q);
    zfree(clients.slot);
    zfree(open);
    zfree(all);
    if (counts) *counts = w.n;
    *len = w.o.len;
    return w.o.p;
}
