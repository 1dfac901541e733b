/* bench_bound.h — the time bound of the C benchmarks (bench/).
 *
 * Every loop in a benchmark is bounded in count, and each program also
 * bounds itself in time, below the limit bench/run.py gives it: when the
 * alarm fires, the program says so on stderr, kills the child process it
 * may be waiting for, and exits with status 3, which the runner records
 * as a failed benchmark rather than a hang. Header-only: each benchmark
 * is one .c file linked on its own.
 *
 * Only async-signal-safe calls run in the handler (write, kill, _exit),
 * so the message is built when the bound is set, not when it fires. */
#ifndef SOLOIST_BENCH_BOUND_H
#define SOLOIST_BENCH_BOUND_H

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

/* A child the benchmark is waiting for; the alarm kills it too. */
static volatile pid_t bench_bound_child;

static char bench_bound_msg[96];
static size_t bench_bound_len;

static void bench_bound_fire(int sig) {
    (void)sig;
    if (bench_bound_child > 0) kill(bench_bound_child, SIGKILL);
    (void)!write(2, bench_bound_msg, bench_bound_len);
    _exit(3);
}

/* Ends the program `seconds` from now, saying "NAME: time bound reached". */
static void bench_bound_set(const char *name, unsigned seconds) {
    int n = snprintf(bench_bound_msg, sizeof bench_bound_msg, "%s: time bound reached, stopping\n", name);
    bench_bound_len = n < 0 ? 0 : (size_t)n < sizeof bench_bound_msg ? (size_t)n : sizeof bench_bound_msg - 1;
    signal(SIGALRM, bench_bound_fire);
    alarm(seconds);
}

#endif
