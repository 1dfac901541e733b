#!/usr/bin/env bash
# Chapter 04: the main thread's CPU per request under the same GET load,
# first with the step-0 server (--io-threads 1), then with four threads
# forced on (--io-threads 4 --io-threads-always-active yes); then which
# worker did the reads and the writes, and how often the pool woke and
# parked. Main's CPU is its own (getrusage RUSAGE_THREAD, INFO cpu's
# used_cpu_*_main_thread), divided by the requests.
. "$(dirname "$0")/lib.sh"

if short; then N=20000; else N=100000; fi

echo "cores: $(nproc)"
# expect: ^cores: [0-9]+

get_load() {  # N GETs from 50 connections, depth 1; prints the summary line
  redis-benchmark -p "$PORT" -t get -c 50 -n "$N" -q | tr '\r' '\n' | grep 'requests per second' | tail -1
}

main_cpu_s() {  # the main thread's CPU seconds so far, user + system
  cli info cpu | tr -d '\r' | awk -F: '/_main_thread:/ {s += $2} END {printf "%.6f", s}'
}

measure() {  # LABEL: the load, and main's CPU over it per request
  local before after
  before=$(main_cpu_s)
  get_load
  after=$(main_cpu_s)
  awk -v b="$before" -v a="$after" -v n="$N" -v label="$1" \
    'BEGIN {printf "%s: main thread %.2f us of CPU per request\n", label, (a - b) * 1e6 / n}'
}

start_server --io-threads 1
measure "io-threads 1"
# expect: GET: [0-9.]+ requests per second
# expect: ^io-threads 1: main thread [0-9.]+ us of CPU per request
cli shutdown nosave >/dev/null 2>&1 || true

start_server --io-threads 4 --io-threads-always-active yes
measure "io-threads 4, forced on"
# expect: ^io-threads 4, forced on: main thread [0-9.]+ us of CPU per request

# Who did the work, and how often the pool woke (ignitions) and parked
# workers (parks); io_threads_main_spin_us is main's time spent turning its
# loop while results were owed and nothing had come back.
cli info iothreads | tr -d '\r' | grep -E '^io_thread_[0-9]|^io_threads_(ignitions|parks|polls|main_spin_us)|^io_fallbacks'
# expect: ^io_thread_[1-3]:reads=[1-9]
# expect: ^io_threads_ignitions:[1-9]
# expect: ^io_threads_parks:[1-9]
cli info stats | tr -d '\r' | grep io_threaded
# expect: ^io_threaded_reads_processed:[1-9]
