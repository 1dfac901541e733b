#!/usr/bin/env bash
# Chapter 02: the three queues' unit tests; what an idle worker costs
# (parked; active with soloist's default, a 20 µs spin and then a sleep on
# a futex; active and spinning for as long as it is active, as Valkey's
# workers do); and Spin checking every interleaving of the queues'
# protocols.
# Short form (TRYIT_SHORT=1): no queue benchmark (its quick run takes 4 to
# 10 s), and Spin checks the SPSC model and its one mutation only, the way
# suite 27 does. The full form runs suite 27 itself (three models and five
# mutations, 20 s or more on two cores).
. "$(dirname "$0")/lib.sh"

for q in spsc spmc mpsc; do
  build/tests/test_queue_$q 2>&1 | grep -E '^\[  (PASSED|FAILED)  \]' | sed "s/^/test_queue_$q: /"
done
# expect: ^test_queue_spsc: \[  PASSED  \]
# expect: ^test_queue_spmc: \[  PASSED  \]
# expect: ^test_queue_mpsc: \[  PASSED  \]

# soloist's default, on the worker's own CPU clock: active with nothing to
# do (it spins 20 µs, then sleeps), then parked (asleep on its mutex).
build/tests/test_io_threads 2>/dev/null | grep 'idle worker CPU'
# expect: idle worker CPU, active [0-4] ms in 100 ms, parked [0-4] ms in 200 ms

if ! short; then
  # All three states, Valkey's spin among them (soloist's spin made an hour
  # long): the queue benchmark's pool rows, two workers, 5 runs of 60 ms.
  # A spinning worker gets at most the share of a core that nothing else on
  # the machine is using.
  make -s build/bench/queues
  build/bench/queues --quick | python3 -c '
import json, statistics, sys
runs = {}
for line in sys.stdin:
    r = json.loads(line)
    if r.get("test") == "pool":
        runs.setdefault(r["state"], []).append(r["cpu_pct_per_worker"])
for state, what in (("parked", "parked, asleep on its mutex"),
                    ("active-sleeps", "active, spin 20 us then sleep (soloist)"),
                    ("active", "active, spinning while active (Valkey)")):
    print("idle worker, %-42s %5.1f %% of a core" % (what + ":", statistics.median(runs[state])))'
fi

# Spin: each model verified, each mutation (-DBUG_...) caught.
spin_check() {  # MODEL [BUG]: suite 27's verdict on one model
  local bug=${2:-}
  local name=$1${bug:+ -D$bug} dir=build/spin-try-it/$1${bug:+-$bug}
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && spin ${bug:+-D$bug} -a "$OLDPWD/tests/spin/$1.pml" >spin.log 2>&1 &&
     cc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan >pan.log 2>&1) || true
  local errors=$(sed -nE 's/.*errors: ([0-9]+).*/\1/p' "$dir/pan.log" 2>/dev/null | tail -1)
  if [ -z "$bug" ] && [ "$errors" = 0 ]; then echo "ok   $name: verified, no error"
  elif [ -n "$bug" ] && [ -n "$errors" ] && [ "$errors" != 0 ]; then
    echo "ok   $name: error found, as it must be: $(grep -m1 '^pan:1' "$dir/pan.log" | sed 's/^pan:1: //')"
  else echo "FAIL $name (see $dir)"; fi
}
if short; then
  spin_check spsc
  spin_check spsc BUG_NO_COMMIT_ON_FULL
else
  bash tests/suites/27-spin.sh
fi
# expect: ^ok +spsc: verified
# expect: ^ok +spsc -DBUG_NO_COMMIT_ON_FULL: error found
