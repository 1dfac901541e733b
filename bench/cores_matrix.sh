#!/usr/bin/env bash
# cores_matrix.sh — beside_valkey's whole matrix on a machine with cores,
# the load generator on cores of its own, the model's prediction printed
# beside each measured point.
#
# Steps 4-7 benchmark, for a reader with a machine of 8 cores or more
# (the stored rows come from two cores, where the generator and the
# server share them). It splits the cores in two: the server's half
# (BENCH_SERVER_CPUS) and the generator's (BENCH_CLIENT_CPUS, soloist-bench
# with one thread a core there, redis-benchmark with up to four for the
# 1 MB cells, which one thread bounds on two cores), runs bench/beside_valkey.py with
# io-threads 1, 2, 4 and 8 (and 16 from 32 cores) and part (d)'s load at
# Valkey's blog's 650 connections, keeps the results like any run
# (bench/run.py), and prints bench/pipeline_model.py's curve for this
# machine beside the measured points; then bench/main_syscalls.py at the
# same thread counts, the main thread's system calls per request.
#
#   VALKEY_SERVER=/path/to/valkey-server bench/cores_matrix.sh [QUICK=1]
#
# Needs: make (builds soloist and soloist-bench), VALKEY_SERVER (built from
# source: bench/README.md), redis-server and redis-benchmark (make deps),
# taskset. About 22 minutes; 5 with QUICK=1. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
for a in "$@"; do export "$a"; done
: "${VALKEY_SERVER:?set VALKEY_SERVER to a valkey-server built from source (bench/README.md)}"
cores=$(nproc)
if [ "$cores" -lt 8 ]; then
  echo "cores_matrix: $cores cores; it needs 8 or more (the server's half and the generator's)" >&2
  exit 2
fi
half=$((cores / 2))
threads="1,2,4"
[ "$half" -ge 8 ] && threads="$threads,8"
[ "$half" -ge 16 ] && threads="$threads,16"
make -s -j"$cores" >/dev/null
export BENCH_SERVER_CPUS="0-$((half - 1))" BENCH_CLIENT_CPUS="$half-$((cores - 1))"
export BENCH_THREADS="$threads" BENCH_D_CONNS=650 BENCH_CLIENT_THREADS="$half" VALKEY_SERVER
echo "cores_matrix: server on cpus $BENCH_SERVER_CPUS, generator on $BENCH_CLIENT_CPUS, io-threads $threads"
# bench/run.py prints the results folder on its last line of stdout.
out=$(python3 bench/run.py --only beside_valkey ${QUICK:+--quick} | tee /dev/stderr | tail -1) || true
dir=$out
[ -f "$dir/beside_valkey.jsonl" ] || dir=$(ls -td bench/results/*/ | head -1)
python3 bench/pipeline_model.py "$dir/beside_valkey.jsonl"
rows() { # the rows named, from one results file
  grep '"finding": true' "$1" | python3 -c '
import json, sys
want = sys.argv[1].split(",")
for line in sys.stdin:
    r = json.loads(line)
    if r["id"] in want:
        print("%s  %s\n        %s" % (r["id"], r["claim"], r["figure"]))' "$2"
}
rows "$dir/beside_valkey.jsonl" F4.99,F0.68,F7.53,F4.101,F4.104,F4.105
# Main's system calls per request at the same thread counts, each thread
# on cores of its own (rows F4.111-F4.112): whether main still sleeps and
# wakes workers at the offered rate. Printed after the rows above, so a
# failure here hides nothing.
sout=$(SYSCALL_THREADS="$threads" python3 bench/run.py --only main_syscalls ${QUICK:+--quick} | tee /dev/stderr |
  tail -1) || true
[ -f "$sout/main_syscalls.jsonl" ] && rows "$sout/main_syscalls.jsonl" F4.111,F4.112
exit 0
