/* test_trace_export.c — a recording as Chrome Trace Event JSON
 * (src/trace_export.c), from snapshots written by hand.
 *
 * The spans pair on their thread and become "X" events; an END whose
 * BEGIN came before the recording is left out; the tracks are named; and
 * the arrows follow each request: its read, the run that ran its last
 * command (commands queued before the recording run first), and the
 * first write to end after a mark that followed that run — even when
 * the next request's commands run while that write is in flight, and not
 * at all when the write was never recorded. The text is strict JSON as
 * far as a scan can tell (tests/integration/test_trace.py parses a real
 * dump with json.loads).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "trace_export.h"
#include "zmalloc.h"

#define MAX_EV 64
static trace_event ev[3][MAX_EV];
static trace_snapshot snap;

/* Adds one event to thread tid's ring, stamped ts_us microseconds in. */
static void add(int tid, uint64_t ts_us, trace_type type, uint64_t a, uint64_t b, uint64_t c) {
    trace_ring_view *v = &snap.ring[tid];
    assert_true(v->n < MAX_EV);
    ev[tid][v->n++] =
        (trace_event){.ts_ns = ts_us * 1000, .type = (uint16_t)type, .tid = (uint16_t)tid, .a = a, .b = b, .c = c};
}

static int setup(void **state) {
    (void)state;
    memset(&snap, 0, sizeof(snap));
    snap.threads = 3;
    for (int t = 0; t < 3; t++) snap.ring[t].ev = ev[t];
    return 0;
}

/* No trailing comma, no empty element, braces and brackets balanced and
 * closed in order, outside strings. */
static void assert_strict_shape(const char *j, size_t len) {
    char stack[16];
    int depth = 0, in_string = 0;
    char prev = 0;
    assert_int_equal(strlen(j), len);
    for (size_t i = 0; i < len; i++) {
        char ch = j[i];
        if (in_string) {
            if (ch == '"' && j[i - 1] != '\\') in_string = 0;
            continue;
        }
        if (ch == '"') in_string = 1;
        if (ch == '{' || ch == '[') {
            assert_true(depth < 16);
            stack[depth++] = ch;
        }
        if (ch == '}' || ch == ']') {
            assert_true(depth > 0);
            assert_int_equal(stack[--depth], ch == '}' ? '{' : '[');
            if (prev == ',') fail_msg("a trailing comma before offset %zu", i);
        }
        if (ch == ',' && (prev == ',' || prev == '[' || prev == '{')) fail_msg("an empty element at offset %zu", i);
        if (ch != ' ' && ch != '\n') prev = ch;
    }
    assert_int_equal(depth, 0);
    assert_false(in_string);
}

static char *export(trace_export_counts *n) {
    size_t len;
    char *j = trace_export_json(&snap, &len, n);
    assert_strict_shape(j, len);
    return j;
}

static void assert_has(const char *j, const char *part) {
    if (!strstr(j, part)) fail_msg("the JSON lacks %s", part);
}

static size_t count_of(const char *j, const char *part) {
    size_t n = 0;
    for (const char *p = j; (p = strstr(p, part)); p++) n++;
    return n;
}

static void test_export_one_request_across_three_threads(void **state) {
    (void)state;
    add(1, 100, TRACE_READ_BEGIN, 5, 0, 0);
    add(1, 150, TRACE_PARSED, 5, 2, 0);
    add(1, 200, TRACE_READ_END, 5, 30, 2);
    add(0, 250, TRACE_RESULT_TAKE, 5, 0, 0);
    add(0, 300, TRACE_CMD_BEGIN, 5, 2, 40);
    add(0, 400, TRACE_CMD_END, 5, 2, 50);
    add(0, 500, TRACE_WRITE_MARK, 5, 0, 0);
    add(0, 510, TRACE_JOB_SUBMIT, 1, 0, 0x1001);
    add(2, 590, TRACE_JOB_TAKE, 1, 0, 0x1001);
    add(2, 600, TRACE_WRITE_BEGIN, 5, 0, 0);
    add(2, 700, TRACE_WRITE_END, 5, 10, 0);
    trace_export_counts n;
    char *j = export(&n);
    assert_int_equal(n.events, 11);
    assert_int_equal(n.spans, 3);
    assert_int_equal(n.requests, 1);
    assert_int_equal(n.flows, 1);
    assert_has(j, "{\"otherData\":{\"clock\":\"CLOCK_MONOTONIC\"");
    assert_has(j, "\"traceEvents\":[");
    assert_has(j, "\"name\":\"thread_name\",\"pid\":1,\"tid\":0,\"ts\":0.000,\"args\":{\"name\":\"main\"}");
    assert_has(j, "\"tid\":2,\"ts\":0.000,\"args\":{\"name\":\"io-thread-2\"}");
    assert_has(j,
               "{\"ph\":\"X\",\"cat\":\"soloist\",\"name\":\"read\",\"pid\":1,\"tid\":1,\"ts\":100.000,\"dur\":100.000,"
               "\"args\":{\"client\":5,\"bytes\":30,\"commands\":2}}");
    assert_has(j, "\"name\":\"commands\",\"pid\":1,\"tid\":0,\"ts\":300.000,\"dur\":100.000,"
                  "\"args\":{\"client\":5,\"queued\":2,\"commands\":2,\"reply_bytes\":10}}");
    assert_has(
        j,
        "\"name\":\"write\",\"pid\":1,\"tid\":2,\"ts\":600.000,\"dur\":100.000,\"args\":{\"client\":5,\"bytes\":10}}");
    assert_has(j, "\"name\":\"submit\",\"pid\":1,\"tid\":0,\"ts\":510.000,\"s\":\"t\",\"args\":{\"job\":\"write\","
                  "\"inbox\":\"shared\",\"word\":4097}}");
    /* The arrow: client 5's request 1 is 5 * 2^24 + 1. */
    assert_has(j, "{\"ph\":\"s\",\"cat\":\"soloist\",\"name\":\"request\",\"pid\":1,\"tid\":1,\"ts\":100.000,"
                  "\"id\":83886081,\"args\":{\"client\":5,\"request\":1,\"commands\":2}}");
    assert_has(j, "{\"ph\":\"t\",\"cat\":\"soloist\",\"name\":\"request\",\"pid\":1,\"tid\":0,\"ts\":300.000,"
                  "\"id\":83886081}");
    assert_has(j, "{\"ph\":\"f\",\"cat\":\"soloist\",\"name\":\"request\",\"pid\":1,\"tid\":2,\"ts\":600.000,"
                  "\"id\":83886081,\"bp\":\"e\"}");
    zfree(j);
}

/* Commands queued before the recording run first; two reads whose
 * commands one run runs end at one write; a run that ends while a write
 * is in flight waits for the next mark and write. */
static void test_export_pipeline_and_overlap(void **state) {
    (void)state;
    add(0, 10, TRACE_CMD_BEGIN, 6, 3, 0); /* three commands parsed before the recording */
    add(0, 15, TRACE_CMD_END, 6, 1, 0);   /* one ran (a blocked client stops a run early) */
    add(1, 20, TRACE_READ_BEGIN, 6, 2, 0);
    add(1, 30, TRACE_READ_END, 6, 9, 4); /* request 1: two more, behind the two old ones */
    add(1, 50, TRACE_READ_BEGIN, 6, 4, 0);
    add(1, 60, TRACE_READ_END, 6, 9, 5); /* request 2: one command */
    add(0, 70, TRACE_CMD_BEGIN, 6, 5, 0);
    add(0, 80, TRACE_CMD_END, 6, 5, 0); /* the old two, then requests 1 and 2 */
    add(0, 90, TRACE_WRITE_MARK, 6, 0, 0);
    add(1, 100, TRACE_READ_BEGIN, 6, 0, 0);
    add(1, 110, TRACE_READ_END, 6, 9, 1); /* request 3 */
    add(2, 120, TRACE_WRITE_BEGIN, 6, 0, 0);
    add(0, 130, TRACE_CMD_BEGIN, 6, 1, 0);
    add(0, 140, TRACE_CMD_END, 6, 1, 0); /* request 3 ran while the write was in flight */
    add(2, 150, TRACE_WRITE_END, 6, 9, 0);
    add(0, 160, TRACE_WRITE_MARK, 6, 0, 0);
    add(0, 170, TRACE_WRITE_BEGIN, 6, 0, 0); /* main writes this one itself */
    add(0, 180, TRACE_WRITE_END, 6, 9, 0);
    trace_export_counts n;
    char *j = export(&n);
    assert_int_equal(n.requests, 3);
    assert_int_equal(n.flows, 3);
    uint64_t base = 6ull << 24;
    char want[160];
    snprintf(want, sizeof want, "\"tid\":1,\"ts\":20.000,\"id\":%llu,\"args\"", (unsigned long long)base + 1);
    assert_has(j, want);
    snprintf(want, sizeof want, "\"tid\":0,\"ts\":70.000,\"id\":%llu}", (unsigned long long)base + 1);
    assert_has(j, want);
    snprintf(want, sizeof want, "\"tid\":0,\"ts\":70.000,\"id\":%llu}", (unsigned long long)base + 2);
    assert_has(j, want);
    snprintf(want, sizeof want, "\"tid\":2,\"ts\":120.000,\"id\":%llu,\"bp\":\"e\"}", (unsigned long long)base + 2);
    assert_has(j, want);
    snprintf(want, sizeof want, "\"tid\":0,\"ts\":130.000,\"id\":%llu}", (unsigned long long)base + 3);
    assert_has(j, want);
    snprintf(want, sizeof want, "\"tid\":0,\"ts\":170.000,\"id\":%llu,\"bp\":\"e\"}", (unsigned long long)base + 3);
    assert_has(j, want);
    assert_int_equal(count_of(j, "\"ph\":\"f\""), 3);
    zfree(j);
}

/* A write the ring refused draws no arrow; an END without its BEGIN and
 * a BEGIN without its END are left out. */
static void test_export_leaves_out_what_it_lacks(void **state) {
    (void)state;
    add(1, 5, TRACE_WRITE_END, 7, 3, 0); /* began before the recording */
    add(1, 10, TRACE_READ_BEGIN, 7, 0, 0);
    add(1, 20, TRACE_READ_END, 7, 9, 1);
    add(0, 30, TRACE_CMD_BEGIN, 7, 1, 0);
    add(0, 40, TRACE_CMD_END, 7, 1, 0);
    add(0, 50, TRACE_WRITE_MARK, 7, 0, 0);
    add(2, 60, TRACE_SLEEP_BEGIN, 0, 0, 0); /* still asleep at the end */
    snap.ring[2].dropped = 4;
    trace_export_counts n;
    char *j = export(&n);
    assert_int_equal(n.spans, 2);
    assert_int_equal(n.requests, 1);
    assert_int_equal(n.flows, 0);
    assert_int_equal(count_of(j, "\"ph\":\"s\""), 0);
    assert_has(j, "\"dropped\":\"4\"");
    assert_int_equal(count_of(j, "\"name\":\"sleep\""), 0);
    zfree(j);
}

/* Sleeps, parks, main's poll and the pool's moves, as their spans and
 * instants show them. */
static void test_export_threads_and_decisions(void **state) {
    (void)state;
    add(0, 1, TRACE_POLL_BEGIN, 0, 0, 0);
    add(0, 2, TRACE_POLL_END, 3, 0, 0);
    add(0, 3, TRACE_IGNITION, 1, 3, 3);
    add(0, 4, TRACE_JOB_SUBMIT, 4, 0, 0x2004);
    add(0, 5, TRACE_JOB_SUBMIT, 2, 2, 0x3002);
    add(0, 6, TRACE_JOB_REFUSED, 2, 2, 0x3002);
    add(0, 7, TRACE_POLL_JOB_OUT, 0, 0, 0);
    add(1, 8, TRACE_SLEEP_BEGIN, 0, 0, 0);
    add(1, 9, TRACE_SLEEP_END, 1, 0, 0);
    add(2, 10, TRACE_PARK_BEGIN, 0, 0, 0);
    add(2, 11, TRACE_PARK_END, 0, 0, 0);
    add(1, 12, TRACE_POLL_JOB_BACK, 2, 0, 0);
    trace_export_counts n;
    char *j = export(&n);
    assert_int_equal(n.spans, 3);
    assert_has(j, "\"name\":\"epoll_wait\",\"pid\":1,\"tid\":0,\"ts\":1.000,\"dur\":1.000,\"args\":{\"events\":3}}");
    assert_has(j, "\"name\":\"ignition\",\"pid\":1,\"tid\":0,\"ts\":3.000,\"s\":\"t\",\"args\":{\"active_before\":1,"
                  "\"active_asked\":3,\"active_after\":3}}");
    assert_has(j, "\"args\":{\"job\":\"poll\",\"inbox\":\"shared\",\"word\":8196}}");
    assert_has(j, "\"name\":\"refused\",\"pid\":1,\"tid\":0,\"ts\":6.000,\"s\":\"t\",\"args\":{\"job\":\"free_argv\","
                  "\"inbox\":\"private\",\"worker\":2,\"word\":12290}}");
    assert_has(j,
               "\"name\":\"sleep\",\"pid\":1,\"tid\":1,\"ts\":8.000,\"dur\":1.000,\"args\":{\"woken_by_main\":true}}");
    assert_has(j, "\"name\":\"parked\",\"pid\":1,\"tid\":2,\"ts\":10.000,\"dur\":1.000,\"args\":{}}");
    assert_has(j, "\"name\":\"poll job back\",\"pid\":1,\"tid\":1,\"ts\":12.000,\"s\":\"t\",\"args\":{\"events\":2}}");
    zfree(j);
}

static void test_export_empty_recording(void **state) {
    (void)state;
    trace_export_counts n;
    char *j = export(&n);
    assert_int_equal(n.events, 0);
    assert_has(j, "\"traceEvents\":[");
    assert_has(j, "\"name\":\"io-thread-1\"");
    zfree(j);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_export_one_request_across_three_threads, setup),
        cmocka_unit_test_setup(test_export_pipeline_and_overlap, setup),
        cmocka_unit_test_setup(test_export_leaves_out_what_it_lacks, setup),
        cmocka_unit_test_setup(test_export_threads_and_decisions, setup),
        cmocka_unit_test_setup(test_export_empty_recording, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
