#!/usr/bin/env bash
# Step 0, measuring: the FINDINGS.md generator (tools/findings.py) and the
# benchmark plumbing, tested on fixture JSON; plus a bounded smoke run of
# bench/write_cost (a few ms, loopback) whose JSON lines must parse.
# Benchmarks themselves are not tests: nothing here times anything.
cd "$(dirname "$0")/../.."
p=0; f=0
out=$(python3 -m unittest -v tests/tools/test_findings.py 2>&1); rc=$?
echo "$out"
up=$(grep -cE ' \.\.\. ok$' <<<"$out")
uf=$(grep -cE ' \.\.\. (FAIL|ERROR)$' <<<"$out")
ran=$(sed -nE 's/^Ran ([0-9]+) tests?.*/\1/p' <<<"$out")
if [ "${ran:-0}" != $((up + uf)) ] || { [ $rc != 0 ] && [ "$uf" = 0 ]; }; then
  echo "!! unittest counts do not add up (ran=${ran:-?}, ok=$up, failed=$uf, exit $rc)"; uf=$((uf + 1))
fi
p=$((p + up)); f=$((f + uf))

# Every reading a chapter states of a row holds of the kept row: the book
# says "faster" only while FINDINGS.md does (tools/findings_refs.py).
out=$(python3 tools/findings_refs.py readings 2>&1); rc=$?
echo "$out" | grep -v '^readings:' | head -40
line=$(grep -E '^readings: [0-9]+ passed, [0-9]+ failed' <<<"$out")
rp=$(sed -E 's/^readings: ([0-9]+) passed.*/\1/' <<<"$line"); rf=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
[ -z "$line" ] && { rp=0; rf=1; }
[ $rc != 0 ] && [ "${rf:-0}" = 0 ] && rf=1
echo "readings: ${rp:-0} passed, ${rf:-0} failed"
p=$((p + ${rp:-0})); f=$((f + ${rf:-0}))

# write_cost smoke: built by mk/bench.mk, 7 summary lines, all valid JSON.
wc_bin=build/bench/write_cost
if make --no-print-directory -s -j"${SOLOIST_JOBS:-$(nproc)}" "$wc_bin" >/dev/null 2>&1 &&
   timeout 20 "$wc_bin" --ms 5 --runs 1 >build/test-logs/55-write_cost.jsonl 2>&1 &&
   python3 - build/test-logs/55-write_cost.jsonl <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
summ = [l for l in lines if l["kind"] == "summary"]
assert len(summ) == 7, len(summ)
assert all(l["median_wall_ns_per_call"] > 0 for l in summ)
print("write_cost smoke: %d lines ok" % len(lines))
PY
then echo "ok: write_cost smoke"; p=$((p + 1))
else echo "FAIL: write_cost smoke"; f=$((f + 1)); fi

echo "$p passed, $f failed"
[ $f = 0 ]
