#!/usr/bin/env bash
# Chapter 01: Amdahl's ceiling from the server's own serial share. Loads
# soloist with GET from 50 clients at pipeline depth 1, reads the serial
# share s and the poll's CPU share from INFO threads, and prints the most
# that 2, 4, 8 and 16 threads could ever give: with the poll counted in
# s (the main thread still runs epoll_wait) and with it moved off.
. "$(dirname "$0")/lib.sh"

start_server --io-threads 1
if short; then n=20000; else n=100000; fi

redis-benchmark -p "$PORT" -t get -c 50 -n "$n" -q
# expect: ^GET: [0-9.]+ requests per second

cli info threads | tr -d '\r' | awk -F: '
  /^main_thread_serial_share/ {s = $2}
  /^main_thread_poll_cpu_share_of_busy/ {p = $2}
  END { printf "s = %.3f, poll CPU = %.3f\n", s, p
        for (n = 2; n <= 16; n *= 2)
          printf "N = %2d   poll on main: %.2fx   poll moved off: %.2fx\n",
                 n, 1 / (s + p + (1 - s - p) / n), 1 / (s + (1 - s) / n) }'
# expect: ^s = 0\.[0-9]{3}, poll CPU = 0\.[0-9]{3}$
# expect: ^N = 16   poll on main: [1-9][0-9]*\.[0-9]{2}x   poll moved off: [1-9][0-9]*\.[0-9]{2}x$
