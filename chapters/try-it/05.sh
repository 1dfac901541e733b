#!/usr/bin/env bash
# Chapter 5: when a pool that decides for itself wakes its I/O threads,
# and when it puts them back to sleep.
# It starts soloist with --io-threads 4 and its default rule (guarded),
# prints the pool's state every 200 ms while redis-benchmark loads it
# with depth-1 GETs and for a few seconds after, then does the same
# with 16-deep pipelines, and prints the policy's counters at the end.
# Full form: 300,000 GETs at depth 1 and 3,000,000 at depth 16 (under a
# minute). Short form: 50,000 and 500,000, and 1 s of idle after each
# instead of 3 (about 7 s).
. "$(dirname "$0")/lib.sh"

if short; then n=50000 idle=1; else n=300000 idle=3; fi

start_server --io-threads 4
cli config get io-threads-ignition | paste -sd' '
# expect: ^io-threads-ignition guarded$

# The pool's state, every 200 ms, with the seconds since the watch began,
# until the file $stop appears (and for 60 s at most).
stop=$(mktemp)
rm -f "$stop"
watch_pool() {
  local t0=${EPOCHREALTIME/./} i us
  for ((i = 0; i < 300; i++)); do
    [ -e "$stop" ] && return 0
    us=$((${EPOCHREALTIME/./} - t0))
    printf '%3d.%ds  ' $((us / 1000000)) $((us / 100000 % 10))
    cli info iothreads | tr -d '\r' |
      grep -E '^io_threads_(active|ignitions|guard_reverts|scale_downs):' | paste -sd' '
    sleep 0.2
  done
}

# One load under the watch: the benchmark, $idle s of idle, then its result.
load_and_watch() {
  local out
  out=$(mktemp)
  watch_pool &
  watcher=$!
  redis-benchmark -p "$PORT" -t get -c 50 -q "$@" >"$out"
  sleep "$idle"
  touch "$stop"
  wait "$watcher"
  rm -f "$stop"
  tr '\r' '\n' <"$out" | grep -v '^$' | tail -1
  rm -f "$out"
}

echo "--- depth 1: $n GETs from 50 clients, then $idle s idle"
load_and_watch -n "$n"
# expect: ^ *[0-9.]+s  io_threads_active:1 io_threads_ignitions:0
# expect: ^GET: [0-9.]+ requests per second

echo "--- depth 16: $((10 * n)) GETs from 50 clients, then $idle s idle"
load_and_watch -n $((10 * n)) -P 16

# Back to main alone: wait for it (8 s at most), then the counters.
for ((i = 0; i < 40; i++)); do
  [ "$(cli info iothreads | tr -d '\r' | sed -n 's/^io_threads_active://p')" = 1 ] && break
  sleep 0.2
done
echo "--- the policy's counters"
cli info iothreads | tr -d '\r' |
  grep -E '^io_threads_(active|ignitions|scale_ups|scale_downs|guard_reverts):'
# expect: ^io_threads_active:1$
# expect: ^io_threads_ignitions:[0-9]+$
