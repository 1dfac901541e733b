#!/usr/bin/env bash
# The layering rules (README.md, "The source is read in layers"), checked
# four ways: on the include graph by tools/layers.py (every file in src/
# is in one layer and reaches only what its layer may); on the call graph
# by tools/calls.py (no file calls a function of a layer above its own,
# and no two modules call each other in a circle); and by tools/steps.py
# (every file in src/ opens naming its step and its layer, the step one
# that README.md's step table allows its module, the layer the one
# tools/layers.py gives it). And by tools/longfuncs.py: no function in
# src/ or tools/ runs over 64 lines unless a "Long:" comment says why.
# The calls are read from the default build's objects (build/obj/): make
# test builds them before the suites, and run alone this suite brings
# them up to date first (make server), so the call check never reads old
# code. The count is the four tools' counts added.
cd "$(dirname "$0")/../.."
if ! make --no-print-directory -s -j"${SOLOIST_JOBS:-$(nproc)}" server; then
  echo "FAIL make server failed: the call check reads the build's objects (build/obj/)"
  echo "0 passed, 1 failed"
  exit 1
fi
p=0; f=0; rc=0
for tool in tools/layers.py tools/calls.py tools/steps.py tools/longfuncs.py; do
  out=$(python3 "$tool"); r=$?
  echo "$out"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
  if [ -z "$line" ]; then
    echo "FAIL $tool printed no count (exit $r)"
    f=$((f + 1)); rc=1; continue
  fi
  p=$((p + $(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")))
  f=$((f + $(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")))
  [ "$r" = 0 ] || rc=1
done
echo "$p passed, $f failed"
exit $rc
