#!/usr/bin/env bash
# loadgen_sanity — does soloist-bench agree with redis-benchmark?
#
# The load generator's sanity benchmark: in closed loop, against the same
# redis-server, with the same connections, pipeline depth, command (GET)
# and value size, soloist-bench's throughput should agree with
# redis-benchmark's within 10%. The two are alternated (A B A B ...), at
# least 3 runs each, so drift on a shared machine hits both alike.
# The server is pinned to cpu 0 and both clients to cpu 1 when there are
# two cores or more. Bounded: every run has a time or request bound and a
# `timeout`; loopback only.
#
# Output: one JSON line per measurement, then a summary line with the
# ratio (soloist-bench / redis-benchmark: the median of the ratios of
# each adjacent pair, which cancels slow drift on a shared machine; the
# ratio of the medians is given beside it), which `make findings` turns
# into a FINDINGS row. Each measurement also carries
# what the server itself counted (INFO total_commands_processed) and the
# CPU share of server and client, so a reader can see which side was the
# bottleneck: the ratio is only a check of the generator when the server
# is. soloist-bench runs with --batch, redis-benchmark's pipeline
# semantics (send P, wait for all P), so -P means the same to both.
#
# Knobs (environment): RUNS (5, at least 3), CONNS (50), PIPELINE (1), VALUE (1024),
# SECONDS_PER_RUN (3), KEYS (1000).
set -u
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}; CONNS=${CONNS:-50}; PIPELINE=${PIPELINE:-1}; VALUE=${VALUE:-1024}
SECS=${SECONDS_PER_RUN:-3}; KEYS=${KEYS:-1000}
[ "$RUNS" -lt 3 ] && RUNS=3
BENCH=build/soloist-bench
die() { echo "loadgen_sanity: $*" >&2; exit 1; }
[ -x "$BENCH" ] || make --no-print-directory -s "$BENCH" >&2 || die "cannot build $BENCH"
command -v redis-server >/dev/null || die "redis-server is not installed (make deps)"
command -v redis-benchmark >/dev/null || die "redis-benchmark is not installed (make deps)"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SRV_PIN=(); CLI_PIN=(); CPU_LIST=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  SRV_PIN=(taskset -c 0); CLI_PIN=(taskset -c 1); CPU_LIST=(--cpu-list 1)
fi
"${SRV_PIN[@]}" redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  >/dev/null 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null; wait $SPID 2>/dev/null' EXIT
for _ in $(seq 50); do [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
[ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ] || die "redis-server did not start"

# Fill both tools' key spaces with VALUE-byte values so every GET hits.
timeout 120 "$BENCH" -q -p "$PORT" -c 8 -n "$KEYS" -s "$VALUE" --prefill --count 1 >/dev/null || die "prefill failed"
timeout 120 redis-benchmark -p "$PORT" -t set -n $((KEYS * 20)) -r "$KEYS" -d "$VALUE" -c 8 -q >/dev/null || die "redis-benchmark prefill failed"

server_ver=$(redis-server --version | sed -E 's/.*v=([0-9.]+).*/\1/')
common="\"conns\":$CONNS,\"pipeline\":$PIPELINE,\"value_bytes\":$VALUE,\"keys\":$KEYS,\"command\":\"GET\",\"threads\":1,\"seconds\":$SECS,\"server\":\"redis-server $server_ver\",\"pinned\":$([ ${#CPU_LIST[@]} -gt 0 ] && echo true || echo false)"

# What the server itself saw: commands executed (INFO's counter; the
# INFO call itself adds one) and its CPU time (utime+stime, in ticks).
srv_cmds() { redis-cli -p "$PORT" info stats | tr -d '\r' | awk -F: '$1=="total_commands_processed"{print $2}'; }
srv_ticks() { awk '{print $14 + $15}' "/proc/$SPID/stat"; }
now_s() { date +%s.%N; }
TICK=$(getconf CLK_TCK)
# line TOOL RUN RPS REQUESTS SERVER_CMDS CLIENT_CPU_S K0 K1 T0 T1: one JSON
# measurement. CPU per request (client and server) is what explains a
# ratio on a shared machine: it does not depend on who else was running.
line() {
  python3 - "$@" "$TICK" "$common" <<'PY'
import json, sys
tool, run, rps, req, cmds, ccpu, k0, k1, t0, t1, tick, common = sys.argv[1:]
req, cmds = int(req), int(cmds)
wall = float(t1) - float(t0)
scpu = (float(k1) - float(k0)) / float(tick)
d = {"bench": "loadgen_sanity", "tool": tool, "run": int(run), "rps": float(rps), "requests": req,
     "server_commands": cmds,
     "client_cpu_pct": round(100 * float(ccpu) / wall, 1) if ccpu != "null" else None,
     "server_cpu_pct": round(100 * scpu / wall, 1),
     "client_cpu_us_per_req": round(1e6 * float(ccpu) / req, 2) if ccpu != "null" and req else None,
     "server_cpu_us_per_req": round(1e6 * scpu / cmds, 2) if cmds else None}
d.update(json.loads("{" + common + "}"))
print(json.dumps(d, separators=(",", ":")))
PY
}
TIMEF="${TMPDIR:-/tmp}/loadgen_sanity.$$"
TIME=(); [ -x /usr/bin/time ] && TIME=(/usr/bin/time -f "%U %S" -o "$TIMEF")

sb_rps=(); rb_rps=(); counts_ok=true
for i in $(seq "$RUNS"); do
  # A: soloist-bench, time-bounded, no warmup, so that its request count
  # can be compared with the server's own.
  c0=$(srv_cmds); k0=$(srv_ticks); t0=$(now_s)
  j=$(timeout $((SECS + 30)) "$BENCH" -q --json -p "$PORT" -c "$CONNS" -P "$PIPELINE" --batch -t 1 "${CPU_LIST[@]}" \
        -n "$KEYS" -r 1:0 -s "$VALUE" -d "${SECS}s") || die "soloist-bench run $i failed"
  t1=$(now_s); k1=$(srv_ticks); c1=$(srv_cmds)
  read -r rps req errs cpu < <(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); c=d["classes"][0]; print(c["rps"], c["requests"], c["errors"], d["generator"]["cpu_s"])' "$j")
  [ "$errs" = 0 ] || die "soloist-bench saw $errs errors: $j"
  [ $((c1 - c0 - 1)) = "$req" ] || counts_ok=false
  sb_rps+=("$rps")
  line soloist-bench "$i" "$rps" "$req" $((c1 - c0 - 1)) "$cpu" "$k0" "$k1" "$t0" "$t1"

  # B: redis-benchmark, bounded by request count: sized from this pair's A
  # so that it, too, lasts about SECS on a machine whose speed drifts.
  n_req=$(python3 -c "print(max(20000, int($rps * $SECS)))")
  c0=$(srv_cmds); k0=$(srv_ticks); t0=$(now_s)
  csv=$(timeout $((SECS * 10 + 30)) "${TIME[@]}" "${CLI_PIN[@]}" redis-benchmark -p "$PORT" -c "$CONNS" -P "$PIPELINE" \
          -t get -d "$VALUE" -r "$KEYS" -n "$n_req" --csv 2>/dev/null) || die "redis-benchmark run $i failed"
  t1=$(now_s); k1=$(srv_ticks); c1=$(srv_cmds)
  rps=$(awk -F'"' '$2=="GET"{print $4}' <<<"$csv")
  [ -n "$rps" ] || die "no GET line in redis-benchmark's output: $csv"
  cpu=null; [ ${#TIME[@]} -gt 0 ] && cpu=$(awk '{print $1 + $2}' "$TIMEF")
  rb_rps+=("$rps")
  line redis-benchmark "$i" "$rps" "$n_req" $((c1 - c0 - 1)) "$cpu" "$k0" "$k1" "$t0" "$t1"
done
rm -f "$TIMEF"

python3 - "${sb_rps[*]}" "${rb_rps[*]}" "$common" "$counts_ok" <<'PY'
import json, os, platform, statistics, subprocess, sys
sb = [float(x) for x in sys.argv[1].split()]
rb = [float(x) for x in sys.argv[2].split()]
common = json.loads("{" + sys.argv[3] + "}")
ms, mr = statistics.median(sb), statistics.median(rb)
pairs = [a / b for a, b in zip(sb, rb) if b > 0]
ratio = statistics.median(pairs) if pairs else 0.0
cpu = ""
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip(); break
except OSError:
    pass
try:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
except OSError:
    commit = ""
out = {"bench": "loadgen_sanity", "summary": True, "ratio": round(ratio, 4),
       "soloist_bench_rps_median": ms, "redis_benchmark_rps_median": mr, "runs": len(sb),
       "ratio_of_medians": round(ms / mr, 4) if mr else 0.0, "pair_ratios": [round(p, 3) for p in pairs],
       "within_10pct": abs(ratio - 1.0) <= 0.10,
       "soloist_bench_count_matches_server": sys.argv[4] == "true",
       "claim": "closed-loop GET throughput, soloist-bench / redis-benchmark, same server, connections, pipeline (batch) and value size; 1.00 = agreement, the issue asks within 10%",
       "cpu": cpu, "nproc": os.cpu_count(), "kernel": platform.release(), "commit": commit}
out.update(common)
print(json.dumps(out, separators=(",", ":")))
PY
