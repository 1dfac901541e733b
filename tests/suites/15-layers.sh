#!/usr/bin/env bash
# The layering rules (README.md, "The source is read in layers"), checked
# on the include graph by tools/layers.py: every file in src/ is in one
# layer and reaches only what its layer may. Then tools/steps.py: every
# file in src/ opens naming its step and its layer, the step one that
# README.md's step table allows its module, the layer the one
# tools/layers.py gives it. Each file is one count in each tool; the last
# line adds the two up.
cd "$(dirname "$0")/../.."
p=0; f=0
for tool in tools/layers.py tools/steps.py; do
  out=$(python3 "$tool"); rc=$?
  echo "$out"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
  if [ -z "$line" ]; then
    echo "FAIL $tool printed no count (exit $rc)"; f=$((f + 1)); continue
  fi
  p=$((p + ${line%% passed*})); n=${line#*passed, }; f=$((f + ${n%% failed*}))
  [ $rc != 0 ] && [ "${n%% failed*}" = 0 ] && { echo "FAIL $tool exited $rc"; f=$((f + 1)); }
done
echo "$p passed, $f failed"
[ $f = 0 ]
