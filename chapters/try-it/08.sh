#!/usr/bin/env bash
# Chapter 08: what one sorted-set member costs, in each of soloist's four
# layouts and in redis-server 7.0.
# For each layout it starts a fresh server, adds N members m:0 ... m:N-1
# with scores 0 ... N-1 (ZADD through redis-cli --pipe), and prints
# (used_memory after - before) / N. Then the same in redis-server 7.0,
# whose hash table may still be half-way through an incremental rehash when
# the load ends; a ZSCORE of every member finishes it (each lookup moves a
# bucket), and used_memory is read again.
# Full form: N = 1,000,000 (under a minute). Short form: N = 20,000.
. "$(dirname "$0")/lib.sh"

if short; then n=20000; else n=1000000; fi

used() { redis-cli -p "$1" info memory | tr -d '\r' | sed -n 's/^used_memory://p'; }
load() { # PORT KEY: ZADD KEY i m:i for i in 0 .. n-1
  awk -v n="$n" -v k="$2" 'BEGIN { for (i = 0; i < n; i++) print "ZADD " k " " i " m:" i }' |
    redis-cli -p "$1" --pipe >/dev/null
}
per_member() { awk -v a="$1" -v b="$2" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }'; }

echo "--- $n members m:i, score i"
declare -A bpm
for layout in copied node-pointer embedded dense; do
  start_server --zset-layout "$layout"
  before=$(used "$PORT")
  load "$PORT" z
  bpm[$layout]=$(per_member "$before" "$(used "$PORT")")
  printf 'soloist, zset-layout %-13s %6s bytes per member\n' "$layout" "${bpm[$layout]}"
done
# expect: ^soloist, zset-layout dense +[0-9.]+ bytes per member$

awk -v c="${bpm[copied]}" -v p="${bpm[node-pointer]}" -v e="${bpm[embedded]}" -v d="${bpm[dense]}" 'BEGIN {
  if (c > p && p > e && e > d) print "order: copied > node-pointer > embedded > dense"
  else print "order: not as the budgets say (see the numbers above)"
  printf "each skiplist step saves one allocation: copied - node-pointer %.1f, node-pointer - embedded %.1f bytes\n", c - p, p - e
}'
# expect: ^order: copied > node-pointer > embedded > dense$
# expect: ^each skiplist step saves one allocation: copied - node-pointer 2[0-9]\.[0-9], node-pointer - embedded 2[0-9]\.[0-9] bytes$

start_redis
before=$(used "$REDIS_PORT")
load "$REDIS_PORT" z
printf 'redis-server 7.0 %25s bytes per member\n' "$(per_member "$before" "$(used "$REDIS_PORT")")"
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) print "ZSCORE z m:" i }' | redis-cli -p "$REDIS_PORT" --pipe >/dev/null
printf 'redis-server 7.0, after a ZSCORE of every member %s bytes per member\n' \
  "$(per_member "$before" "$(used "$REDIS_PORT")")"
# expect: ^redis-server 7\.0 +[0-9.]+ bytes per member$
