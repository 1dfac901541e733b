#!/usr/bin/env bash
# Chapter 00: where the one thread's time goes. Starts soloist with one
# thread, loads it with GET from 50 clients at pipeline depth 1, then asks
# the server itself (INFO threads) how its main thread's busy time divided
# between the poll's CPU, reading and parsing, executing, writing and the
# rest.
. "$(dirname "$0")/lib.sh"

start_server --io-threads 1
if short; then n=20000; else n=300000; fi

redis-benchmark -p "$PORT" -t get -c 50 -n "$n" -q
# expect: ^GET: [0-9.]+ requests per second

cli info threads | tr -d '\r' | grep -E '^io_threads_active|_share'
# expect: ^io_threads_active:0$
# expect: ^main_thread_read_share_of_busy:0\.[0-9]+$
# expect: ^main_thread_exec_share_of_busy:0\.[0-9]+$
# expect: ^main_thread_write_share_of_busy:0\.[0-9]+$
