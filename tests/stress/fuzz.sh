#!/usr/bin/env bash
# Runs the RESP parser's libFuzzer target for a bounded time.
#   tests/stress/fuzz.sh SECONDS [MAX_LEN [libFuzzer flags...]]
# Inputs it finds new coverage with go to build/fuzz/corpus-resp (kept
# between runs); the committed seeds in tests/stress/corpus/resp are only
# read. A crash, leak, timeout or invariant failure leaves the input in
# build/fuzz/artifacts/ and is printed here in hex, with the command that
# replays it. Prints "fuzz_resp: PASS" or "fuzz_resp: FAIL"; exits 0 or 1.
set -u
cd "$(dirname "$0")/../.."
secs=${1:-20}; maxlen=${2:-4096}; shift $(( $# > 2 ? 2 : $# ))
bin=${FUZZ_BIN:-build/fuzz/fuzz_resp}
work=build/fuzz/corpus-resp
art=build/fuzz/artifacts
[ -x "$bin" ] || { echo "fuzz_resp: FAIL ($bin not built: make fuzz-build)"; exit 1; }
# The kept corpus is read in full before the timed loop starts; past a
# few thousand inputs that alone would eat a short run, so start afresh
# (the seeds in tests/stress/corpus/resp always remain).
if [ -d "$work" ] && [ "$(find "$work" -type f | wc -l)" -gt 3000 ]; then
  echo "fuzz_resp: $work holds over 3000 inputs; starting it afresh"; rm -rf "$work"
fi
mkdir -p "$work"; rm -rf "$art"; mkdir -p "$art"
echo "fuzz_resp: ${secs}s, max_len $maxlen, corpus $work + tests/stress/corpus/resp"
# The outer timeout only guards against the fuzzer itself wedging:
# -max_total_time ends a normal run, -timeout=10 flags one slow input.
timeout -k 5 $((secs + 120)) "$bin" -max_total_time="$secs" -max_len="$maxlen" -timeout=10 \
  -rss_limit_mb=2048 -dict=tests/stress/resp.dict -artifact_prefix="$art/" -print_final_stats=1 \
  -print_pcs=0 -reload=0 "$@" "$work" tests/stress/corpus/resp 2>&1 |
  grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' 
rc=${PIPESTATUS[0]}
found=$(find "$art" -type f | sort)
if [ "$rc" = 0 ] && [ -z "$found" ]; then echo "fuzz_resp: PASS"; exit 0; fi
echo "fuzz_resp: FAIL (exit $rc)"
for f in $found; do
  echo "== failing input $f ($(stat -c %s "$f") bytes), hex:"
  od -An -tx1 -v "$f" | head -200
  echo "   replay: $bin $f"
done
exit 1
