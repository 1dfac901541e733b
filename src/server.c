/* server.c — the server's state: the `server` global, logging, the
 * main thread's phase clock, and the list of clients waiting to close.
 *
 * Step 0 (state layer). Owns: the `server` global (server.h), the
 * log, the phase clock, and client_close_async, the one way onto
 * server.clients_to_close. It calls no module above it: the event loop's
 * wiring (server_loop.c) and everything that runs on it read and write
 * this state, never the other way round.
 * Threads: main thread only. This is the one thread that runs commands and
 * touches the keyspace; that is soloist's name and its invariant.
 * Valkey: src/server.c (serverLog, the server global), src/networking.c
 * (freeClientAsync).
 */
#include "server.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "server_test.h"
#include "util.h"
#include "zmalloc.h"

struct server server;

/* ----------------------------------------------------------- logging */

void server_log(int level, const char *fmt, ...) {
    if (level < server.verbosity) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    FILE *fp = stdout;
    int close_fp = 0;
    if (server.logfile && server.logfile[0]) {
        fp = fopen(server.logfile, "a");
        if (!fp) return;
        close_fp = 1;
    }
    long long us = util_ustime();
    time_t sec = (time_t)(us / 1000000);
    struct tm tm;
    localtime_r(&sec, &tm);
    char ts[64];
    size_t off = strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S.", &tm);
    snprintf(ts + off, sizeof(ts) - off, "%03d", (int)(us % 1000000 / 1000));
    /* Valkey's line: pid:role date level-mark message. */
    fprintf(fp, "%d:M %s %c %s\n", (int)getpid(), ts, ".-*#"[level], msg);
    fflush(fp);
    if (close_fp) fclose(fp);
}

/* ------------------------------------------------------- phase clock */

/* The main thread's time, counted honestly. Every switch between phases
 * (poll, read+parse, exec, write, other) reads the monotonic clock and
 * charges the time since the last switch to the phase that was running:
 * wall time, so the phases add up to the thread's whole life.
 *
 * POLL is the one phase whose wall time is mostly not work: the thread
 * sleeps in epoll_wait until a socket is ready. But not only sleep:
 * entering the kernel, scanning the ready list, the wake-up and copying
 * the fired events out cost CPU, and Valkey's blog post on I/O threads
 * (2024) measured epoll_wait at more than 20% of its main thread's time.
 * So POLL also reads the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) as
 * it begins and ends; the difference is poll CPU, the rest is the wait.
 * Reading it at the phase's edges rather than inside ae_poll keeps the
 * clock on the main thread when step 4 hands the poll itself to an I/O
 * thread: then main's poll CPU is what waiting for that job costs it.
 *
 * What that costs, and why it is sampled: the thread CPU clock has no
 * vDSO fast path, so each read is a real system call (a few hundred ns:
 * the bare system call bench/write_cost.c measures, plus reading the
 * scheduler's runtime). Read at both edges of every poll, it would add two
 * system calls per loop turn — at depth 1 close to one per request, as
 * many as the read or the write that serve it (bench/p1_anatomy.py counts
 * them). So the CPU clock is read on one waiting turn in POLL_CPU_SAMPLE
 * (16), chosen by a counter, and that turn's poll CPU is counted sixteen
 * times: an unbiased estimate of the poll's CPU, at a sixteenth of the
 * cost, while the wall clock still times every turn. The reads sit inside
 * POLL, so what they cost is charged to poll CPU, not hidden.
 *
 * A turn that cannot wait needs no CPU clock at all. With I/O threads on
 * (step 4), main turns its loop without sleeping while results are owed
 * (the idle spin: epoll_wait with a zero timeout, or no poll at all while
 * a worker holds the POLL job), often several turns a request. Such a
 * poll never sleeps, so its wall time is its CPU time, as every busy
 * phase's is: server_phase_poll(0) passes the wall clock for both
 * readings. Sampling those turns as well would spend system calls on a
 * main thread that otherwise reads and writes no socket.
 *
 * What the totals mean (server_phase_totals):
 *   poll_wait = POLL's wall time off CPU;
 *   busy      = everything else = poll_cpu + read + exec + write + other;
 *   serial    = exec + other: the work only the main thread may do in
 *               Valkey's design, where I/O threads take the reads and
 *               parsing, the writes and the poll (poll offload), and main
 *               keeps the commands and the loop's own bookkeeping (cron,
 *               expiry, closing clients);
 *   s         = serial / busy, the serial share of Amdahl's law.
 * Busy time is wall time: a busy phase preempted by another process is
 * charged its wall time (used_cpu_*_main_thread in INFO cpu shows the
 * thread's real CPU beside it). */

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*@ phase-clock */
/* The weight of a poll that cannot wait: on CPU throughout, so its wall
 * clock stands in for its CPU clock and counts once. */
#define POLL_CPU_WALL 1

void server_phase(enum phase p) {
    if (p == PHASE_POLL) {
        server_phase_poll(1);
        return;
    }
    uint64_t now, cpu = 0;
    unsigned weight = 0;
    if (server.phase_now == PHASE_POLL) {
        /* Ending a poll: a sampled one reads the CPU clock inside its wall
         * interval, before the wall clock coming out; a spin turn's wall
         * clock is its CPU clock. */
        weight = server.poll_cpu_weight;
        if (weight == POLL_CPU_SAMPLE) cpu = thread_cpu_ns();
        now = util_monotonic_ns();
        if (weight == POLL_CPU_WALL) cpu = now;
    } else {
        now = util_monotonic_ns();
    }
    server_phase_at(p, now, cpu, weight);
}

void server_phase_poll(int may_wait) {
    uint64_t now = util_monotonic_ns(), cpu = 0;
    unsigned weight = 0;
    if (!may_wait) {
        cpu = now;
        weight = POLL_CPU_WALL;
    } else if (server.poll_waits++ % POLL_CPU_SAMPLE == 0) {
        cpu = thread_cpu_ns(); /* after the wall clock going in */
        weight = POLL_CPU_SAMPLE;
    }
    server_phase_at(PHASE_POLL, now, cpu, weight);
}

void server_phase_at(enum phase p, uint64_t now, uint64_t cpu, unsigned weight) {
    uint64_t wall = now - server.phase_since_ns;
    server.phase_ns[server.phase_now] += wall;
    if (server.phase_now == PHASE_POLL && server.poll_cpu_weight && weight) {
        /* Two clocks read a few ns apart: CPU time may not exceed wall. */
        uint64_t on_cpu = cpu > server.poll_cpu_since_ns ? cpu - server.poll_cpu_since_ns : 0;
        server.poll_cpu_ns += (on_cpu < wall ? on_cpu : wall) * weight;
    }
    if (p == PHASE_POLL) {
        server.poll_cpu_weight = weight;
        server.poll_cpu_since_ns = cpu;
    }
    server.phase_calls[p]++;
    server.phase_now = p;
    server.phase_since_ns = now;
    server.exec_clock_ns = now;
}
/*@ end */

long long server_turn_mstime(void) { return server.turn_mstime ? server.turn_mstime : util_mstime(); }

/*@ phase-totals */
phase_totals server_phase_totals(void) {
    phase_totals t = {0};
    for (int p = 0; p < PHASE_COUNT; p++) t.total_ns += server.phase_ns[p];
    /* An estimate from sampled turns may overshoot the poll's wall time
     * by chance; it never means more than all of it. */
    t.poll_cpu_ns = server.poll_cpu_ns < server.phase_ns[PHASE_POLL] ? server.poll_cpu_ns : server.phase_ns[PHASE_POLL];
    t.poll_wait_ns = server.phase_ns[PHASE_POLL] - t.poll_cpu_ns;
    t.busy_ns = t.total_ns - t.poll_wait_ns;
    t.serial_ns = server.phase_ns[PHASE_EXEC] + server.phase_ns[PHASE_OTHER];
    t.serial_share = t.busy_ns ? (double)t.serial_ns / (double)t.busy_ns : 0.0;
    return t;
}
/*@ end */

/* --------------------------------------------------- clients to close */

/* Flags c CLOSE_ASAP and puts it on server.clients_to_close, where
 * before_sleep frees it (networking_free_closed_clients): a client whose
 * command is running, or whose I/O a worker owns, or whose output passed
 * its limit in the middle of a reply, cannot be freed on the spot. */
void client_close_async(client *c) {
    if (c->flags & CLIENT_CLOSE_ASAP) return;
    c->flags |= CLIENT_CLOSE_ASAP;
    if (server.clients_to_close_len == server.clients_to_close_cap) {
        server.clients_to_close_cap = server.clients_to_close_cap ? server.clients_to_close_cap * 2 : 16;
        server.clients_to_close =
            zrealloc(server.clients_to_close, server.clients_to_close_cap * sizeof(*server.clients_to_close));
    }
    server.clients_to_close[server.clients_to_close_len++] = c;
}
