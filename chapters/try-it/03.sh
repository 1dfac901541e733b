#!/usr/bin/env bash
# Chapter 03: what the publish of a batch compiles to (spsc_commit's release
# store of tail), and the SPSC ring's tests of what it publishes: nothing
# before the commit, and no wait for ever when the producer commits only
# when the ring is full.
# Short form (TRYIT_SHORT=1): only that. The full form also lets Spin find
# the wait for ever in the mutation that removes the commit before "full",
# and runs the queue benchmark's quick form (4 to 10 s) for the cost per
# item by commit batch and for one-word against two-word slots.
. "$(dirname "$0")/lib.sh"

disasm() { objdump -d --no-show-raw-insn build/obj/queue_spsc.o | sed -n '/<spsc_commit>:/,/^$/p'; }
disasm
# Fence instructions on x86-64 (mfence, sfence, lfence, a lock prefix, xchg)
# and on arm64 (dmb, dsb); arm64's store-release, stlr, is not one.
echo "fence instructions in spsc_commit: $(disasm | grep -cE '\b(mfence|sfence|lfence|lock|xchg|dmb|dsb)\b' || true)"
# expect: ^fence instructions in spsc_commit: 0$

build/tests/test_queue_spsc 2>&1 | grep -E 'OK \] test_spsc_(commit_publishes|two_threads_commit_on_full_only)|^\[  (PASSED|FAILED)'
# expect: OK \] test_spsc_commit_publishes
# expect: OK \] test_spsc_two_threads_commit_on_full_only
# expect: ^\[  PASSED  \]

if ! short; then
  dir=build/spin-try-it/spsc-BUG_NO_COMMIT_ON_FULL
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && spin -DBUG_NO_COMMIT_ON_FULL -a "$OLDPWD/tests/spin/spsc.pml" >spin.log &&
     cc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan | grep -m1 '^pan:1') || true

  # The SPSC ring between two cores, medians of 5 short runs each: on a
  # machine busy with other work these figures are mostly noise.
  make -s build/bench/queues
  build/bench/queues --quick | python3 -c '
import json, statistics, sys
ns, slots = {}, {}
for line in sys.stdin:
    r = json.loads(line)
    if r.get("test") == "spsc" and r["impl"] == "soloist":
        ns.setdefault(r["commit_batch"], []).append(r["ns_per_item"])
    elif r.get("test") == "slots":
        slots.setdefault(r["slot_bytes"], []).append(r["items_per_s"])
for b in sorted(ns):
    print("SPSC ring, a commit every %2d items: %6.2f ns per item" % (b, statistics.median(ns[b])))
print("8-byte slots against 16-byte: %.2f times the items per second"
      % (statistics.median(slots[8]) / statistics.median(slots[16])))'
fi
