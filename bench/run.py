#!/usr/bin/env python3
"""run.py — runs the benchmarks (step 0's, the queues of steps 1-3, the I/O threads of steps 4-5, the batch prefetch of step 6, step 8's sorted set, the lists', hashes' and sets') and keeps their raw results.

Step 0 (measuring). Owns the results directory: it makes
bench/results/<UTC date>-<host>-<commit>/, writes provenance.json there
(date, host, CPU model from /proc/cpuinfo, cores, kernel, compiler, git
commit and dirty flags, the soloist binary and its configuration, the
peer's version, load average, placement), runs each benchmark with
BENCH_RUN_ID set to the directory's name (and BENCH_RESULTS_DIR to its path), and keeps each one's stdout as
NAME.jsonl and its stderr as NAME.log. FINDINGS.md is then generated from
these files by tools/findings.py; nothing here summarises.

  bench/run.py [--quick] [--only a,b] [--pinned] [--standin] [--results DIR]

--quick     development sizes (QUICK=1): the whole set in about three minutes
--only      a comma list of: server_vs_redis, write_cost, pipeline_span,
            phase_shares, write_timing, loadgen_sanity, idle_memory, p1_anatomy,
            queues, main_cpu, threads_vs_redis, ignition_timing,
            prefetch_micro, prefetch_e2e, big_values, zset_memory, zset_ranges, watermark,
            poll_offload, idle_spin, main_syscalls, idle_line, score_print, redis_defaults,
            types_memory, trace_cost, trace_runs, beside_valkey, server_vs_redis_pinned
            (beside_valkey measures Valkey too: VALKEY_SERVER names its
            binary, built from source; without it the benchmark prints
            that it skipped)
--pinned    also run server_vs_redis with server on cpu0, client on cpu1
--standin   if build/soloist-server is missing or does not answer PING,
            measure Debian's redis-server on both sides (every line then
            says server_is=redis-server; findings labels it a stand-in)

Single-threaded; benchmarks run one after another, never side by side.
No Valkey anchor (tooling).
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import benchlib as bl  # noqa: E402

ALL = ["server_vs_redis", "write_cost", "pipeline_span", "phase_shares", "write_timing",
       "loadgen_sanity", "idle_memory", "p1_anatomy", "queues",
       "main_cpu", "threads_vs_redis", "ignition_timing", "prefetch_micro", "prefetch_e2e",
       "big_values", "zset_memory", "zset_ranges", "watermark", "poll_offload", "idle_spin", "main_syscalls", "idle_line",
       "score_print",
       "redis_defaults", "types_memory", "trace_cost", "trace_runs", "beside_valkey"]


def sh(argv, default=""):
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=20, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return default


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def boot_identity():
    """{boot_id, mem_total_kb}: which boot of which machine made the run.
    Two virtual machines of one CPU model and kernel can differ (one wrote
    fresh memory at a fifth of the other's speed, F7.57), and the host
    name a VM reports is often the same everywhere; the kernel's boot id
    tells two boots apart, the memory size two kinds of VM."""
    out = {"boot_id": None, "mem_total_kb": None}
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            out["boot_id"] = f.read().strip() or None
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    out["mem_total_kb"] = int(line.split()[1])
                    break
    except (OSError, ValueError, IndexError):
        pass
    return out


def git_state():
    commit = sh(["git", "rev-parse", "--short=12", "HEAD"]) or "nocommit"
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        commit = "nocommit"
    # A working tree is often dirty outside the server (a chapter being
    # edited), so what the server was built from (src/, Makefile) is
    # recorded on its own.
    status = sh(["git", "status", "--porcelain", "--", ".", ":!bench/results", ":!FINDINGS.md"])
    src_status = sh(["git", "status", "--porcelain", "--", "src", "Makefile"])
    return {"commit": commit, "dirty": bool(status), "src_dirty": bool(src_status)}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def probe_soloist(binary):
    """Start the binary once, return its INFO fields, or None."""
    if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
        return None
    try:
        s = bl.Server("soloist", binary, "soloist")
    except (RuntimeError, OSError) as e:
        bl.log("soloist probe failed: %s" % e)
        return None
    try:
        info = s.info("everything")
        return {k: v for (_sect, k), v in info.items()}
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", default=bl.quick())
    ap.add_argument("--only", default=os.environ.get("BENCH", ""))
    ap.add_argument("--pinned", action="store_true", default=bl.env_flag("PINNED"))
    ap.add_argument("--standin", action="store_true", default=bl.env_flag("BENCH_STANDIN"))
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--write-cost-bin", default=os.environ.get(
        "WRITE_COST_BIN", os.path.join(ROOT, "build", "bench", "write_cost")))
    ap.add_argument("--queues-bin", default=os.environ.get(
        "QUEUES_BIN", os.path.join(ROOT, "build", "bench", "queues")))
    ap.add_argument("--prefetch-micro-bin", default=os.environ.get(
        "PREFETCH_MICRO_BIN", os.path.join(ROOT, "build", "bench", "prefetch_micro")))
    ap.add_argument("--mark-cost-bin", default=os.environ.get(
        "MARK_COST_BIN", os.path.join(ROOT, "build", "bench", "mark_cost")))
    ap.add_argument("--idle-line-bin", default=os.environ.get(
        "IDLE_LINE_BIN", os.path.join(ROOT, "build", "bench", "idle_line")))
    ap.add_argument("--score-print-bin", default=os.environ.get(
        "SCORE_PRINT_BIN", os.path.join(ROOT, "build", "bench", "score_print")))
    ap.add_argument("--wire-ceiling-bin", default=os.environ.get(
        "WIRE_CEILING_BIN", os.path.join(ROOT, "build", "bench", "wire_ceiling")))
    ap.add_argument("--zset-load-bin", default=os.environ.get(
        "ZSET_LOAD_BIN", os.path.join(ROOT, "build", "bench", "zset_load")))
    ap.add_argument("--types-load-bin", default=os.environ.get(
        "TYPES_LOAD_BIN", os.path.join(ROOT, "build", "bench", "types_load")))
    ap.add_argument("--soloist-bench-bin", default=os.environ.get(
        "SOLOIST_BENCH_BIN", os.path.join(ROOT, "build", "soloist-bench")))
    ap.add_argument("--notrace-bin", default=os.environ.get(
        "SOLOIST_NOTRACE_BIN", os.path.join(ROOT, "build", "notrace", "soloist-server")))
    a = ap.parse_args()

    names = [n for n in a.only.replace(",", " ").split() if n] or list(ALL)
    if a.pinned and "server_vs_redis_pinned" not in names:
        names.append("server_vs_redis_pinned")
    bad = [n for n in names if n not in ALL + ["server_vs_redis_pinned"]]
    if bad:
        sys.exit("bench/run.py: unknown benchmark(s): %s" % ", ".join(bad))

    soloist_bin = os.environ.get("SOLOIST_BIN", os.path.join(ROOT, "build", "soloist-server"))
    redis_bin = os.environ.get("REDIS_BIN", shutil.which("redis-server") or "/usr/bin/redis-server")
    a_is = "soloist"
    soloist_info = probe_soloist(soloist_bin)
    if soloist_info is None:
        if not a.standin:
            sys.exit("bench/run.py: %s is missing or does not answer PING; build it "
                     "(make server) or pass --standin / BENCH_STANDIN=1 to measure "
                     "redis-server on both sides" % soloist_bin)
        bl.log("soloist unavailable: redis-server stands in for it (labelled)")
        soloist_bin, a_is = redis_bin, "redis-server"

    git = git_state()
    now = datetime.datetime.now(datetime.timezone.utc)
    host = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"
    name = "%s-%s-%s" % (now.strftime("%Y%m%dT%H%M%SZ"), host, git["commit"])
    outdir = os.path.join(a.results, name)
    os.makedirs(outdir, exist_ok=True)

    cc = os.environ.get("CC", "cc")
    prov = {
        "run_id": name,
        "date": now.isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        **boot_identity(),
        "os": sh(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "compiler": sh([cc, "--version"]).splitlines()[0] if sh([cc, "--version"]) else cc,
        "build_flags": os.environ.get("BENCH_BUILD_FLAGS", ""),
        "git": git,
        "quick": bool(a.quick),
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
        "soloist": {
            "binary": os.path.relpath(soloist_bin, ROOT) if soloist_bin.startswith(ROOT) else soloist_bin,
            "is": a_is,
            "standin": a_is != "soloist",
            "sha256": sha256(soloist_bin),
            "version": (soloist_info or {}).get("soloist_version") or (soloist_info or {}).get("redis_version"),
            "flags": "--port <free> " + " ".join(x if x else "''" for x in bl.SERVER_FLAGS),
            "io_threads": (soloist_info or {}).get("io_threads_configured", "1"),
        },
        "peer": {"binary": redis_bin, "version": sh([redis_bin, "--version"]),
                 "flags": "--port <free> " + " ".join(x if x else "''" for x in bl.SERVER_FLAGS)},
        "valkey": ({"binary": os.environ["VALKEY_SERVER"], "version": sh([os.environ["VALKEY_SERVER"], "--version"]),
                    "sha256": sha256(os.environ["VALKEY_SERVER"])}
                   if os.access(os.environ.get("VALKEY_SERVER", ""), os.X_OK) else None),
        "load_generator": sh(["redis-benchmark", "--version"]),
        "python": platform.python_version(),
        "command": "bench/run.py " + " ".join(sys.argv[1:]),
        "benches": {},
    }
    write_prov(outdir, prov)
    bl.log("results in %s" % os.path.relpath(outdir, ROOT))

    env = dict(os.environ, BENCH_RUN_ID=name, BENCH_RESULTS_DIR=outdir, SOLOIST_BIN=soloist_bin, BENCH_A_IS=a_is,
               REDIS_BIN=redis_bin, QUICK="1" if a.quick else "0")
    env.pop("BENCH_PINNED", None)
    for n in names:
        argv, extra, limit = command_for(n, a)
        if argv is None:
            prov["benches"][n] = {"skipped": extra}
            bl.log("%s: skipped (%s)" % (n, extra))
            continue
        bl.log("%s: %s" % (n, " ".join(argv)))
        t0 = time.monotonic()
        with open(os.path.join(outdir, n + ".jsonl"), "w") as out, \
                open(os.path.join(outdir, n + ".log"), "w") as err:
            try:
                p = subprocess.Popen(argv, stdout=out, stderr=err, env=dict(env, **extra),
                                     cwd=ROOT, start_new_session=True)
                rc = p.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 15)  # the bench's own handler stops its servers
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, 9)
                    p.wait()
                rc = "timeout after %ds" % limit
        prov["benches"][n] = {"rc": rc, "seconds": round(time.monotonic() - t0, 1),
                              "argv": " ".join(argv), "env": extra}
        bl.log("%s: rc=%s in %.1fs" % (n, rc, time.monotonic() - t0))
        write_prov(outdir, prov)
    prov["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    prov["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    write_prov(outdir, prov)
    print(os.path.relpath(outdir, ROOT))
    failed = [n for n, b in prov["benches"].items() if b.get("rc") not in (0, None)]
    return 1 if failed else 0


def command_for(n, a):
    """(argv, extra env, time limit s) for one benchmark, or (None, why, 0)."""
    q = a.quick
    if n == "server_vs_redis":
        return [os.path.join(HERE, "server_vs_redis.py")], {}, 60 if q else 300
    if n == "server_vs_redis_pinned":
        return [os.path.join(HERE, "server_vs_redis.py")], {"BENCH_PINNED": "1"}, 60 if q else 300
    if n == "pipeline_span":
        return [os.path.join(HERE, "pipeline_span.py")], {}, 50 if q else 200
    if n == "phase_shares":
        return [os.path.join(HERE, "phase_shares.py")], {}, 40 if q else 120
    if n == "write_timing":
        if not os.access(a.soloist_bench_bin, os.X_OK):
            return None, "%s not built (make builds it)" % a.soloist_bench_bin, 0
        return ([os.path.join(HERE, "write_timing.py")], {"SOLOIST_BENCH_BIN": a.soloist_bench_bin},
                45 if q else 180)
    if n in ("main_cpu", "ignition_timing"):
        if not os.access(a.soloist_bench_bin, os.X_OK):
            return None, "%s not built (make builds it)" % a.soloist_bench_bin, 0
        limit = {"main_cpu": (75, 270), "ignition_timing": (45, 90)}[n][0 if q else 1]
        return [os.path.join(HERE, n + ".py")], {"SOLOIST_BENCH_BIN": a.soloist_bench_bin}, limit
    if n == "trace_cost":
        # Two servers built apart: the default and the one without trace
        # points (make VARIANT=notrace, which make findings builds).
        for b, how in ((a.soloist_bench_bin, "make"), (a.notrace_bin, "make VARIANT=notrace server")):
            if not os.access(b, os.X_OK):
                return None, "%s not built (%s builds it)" % (b, how), 0
        return ([os.path.join(HERE, "trace_cost.py")], {"SOLOIST_BENCH_BIN": a.soloist_bench_bin,
                                                         "SOLOIST_NOTRACE_BIN": a.notrace_bin},
                90 if q else 330)
    if n == "threads_vs_redis":
        return [os.path.join(HERE, "threads_vs_redis.py")], {}, 75 if q else 330
    if n == "prefetch_e2e":
        return [os.path.join(HERE, "prefetch_e2e.py")], {}, 120 if q else 330
    if n == "big_values":
        for b, how in ((a.soloist_bench_bin, "make"), (a.wire_ceiling_bin, "make bench")):
            if not os.access(b, os.X_OK):
                return None, "%s not built (%s builds it)" % (b, how), 0
        return ([os.path.join(HERE, "big_values.py")], {"SOLOIST_BENCH_BIN": a.soloist_bench_bin,
                                                         "WIRE_CEILING_BIN": a.wire_ceiling_bin},
                150 if q else 540)  # with Valkey beside it (VALKEY_SERVER): about 7 min, 2 with QUICK
    if n == "beside_valkey":
        if not os.access(a.soloist_bench_bin, os.X_OK):
            return None, "%s not built (make builds it)" % a.soloist_bench_bin, 0
        return ([os.path.join(HERE, "beside_valkey.py")], {"SOLOIST_BENCH_BIN": a.soloist_bench_bin},
                200 if q else 960)
    if n == "zset_ranges":
        return [os.path.join(HERE, "zset_ranges.py")], {}, 150 if q else 420
    if n == "watermark":
        return ([os.path.join(HERE, "watermark.py")], {"MARK_COST_BIN": a.mark_cost_bin}, 120 if q else 330)
    if n == "poll_offload":
        return [os.path.join(HERE, "poll_offload.py")], {}, 90 if q else 240
    if n == "idle_spin":
        if not os.access(a.soloist_bench_bin, os.X_OK):
            return None, "%s not built (make builds it)" % a.soloist_bench_bin, 0
        return ([os.path.join(HERE, "idle_spin.py")], {"SOLOIST_BENCH_BIN": a.soloist_bench_bin},
                90 if q else 300)  # with Valkey beside it (VALKEY_SERVER): about 2 min, 1 with QUICK
    if n == "main_syscalls":
        if not os.access(a.soloist_bench_bin, os.X_OK):
            return None, "%s not built (make builds it)" % a.soloist_bench_bin, 0
        return ([os.path.join(HERE, "main_syscalls.py")], {"SOLOIST_BENCH_BIN": a.soloist_bench_bin},
                150 if q else 360)  # with Valkey: about 1.5 min, 0.5 with QUICK; more threads (cores_matrix.sh) more
    if n == "idle_memory":
        return [os.path.join(HERE, "idle_memory.py")], {}, 60 if q else 120
    if n == "p1_anatomy":
        return [os.path.join(HERE, "p1_anatomy.py")], {}, 90 if q else 180
    if n == "write_cost":
        if not os.access(a.write_cost_bin, os.X_OK):
            return None, "%s not built (make bench builds it)" % a.write_cost_bin, 0
        return [a.write_cost_bin] + (["--quick"] if q else []), {}, 60
    if n == "queues":
        if not os.access(a.queues_bin, os.X_OK):
            return None, "%s not built (make bench builds it; needs libck-dev)" % a.queues_bin, 0
        return [a.queues_bin] + (["--quick"] if q else []), {}, 30 if q else 120
    if n == "score_print":
        if not os.access(a.score_print_bin, os.X_OK):
            return None, "%s not built (make bench builds it)" % a.score_print_bin, 0
        return [a.score_print_bin] + (["--quick"] if q else []), {}, 25
    if n == "idle_line":
        if not os.access(a.idle_line_bin, os.X_OK):
            return None, "%s not built (make bench builds it)" % a.idle_line_bin, 0
        return [a.idle_line_bin] + (["--quick"] if q else []), {}, 25 if q else 50
    if n == "prefetch_micro":
        if not os.access(a.prefetch_micro_bin, os.X_OK):
            return None, "%s not built (make bench builds it)" % a.prefetch_micro_bin, 0
        return [a.prefetch_micro_bin] + (["--quick"] if q else []), {}, 160 if q else 300
    if n == "zset_memory":
        if not os.access(a.zset_load_bin, os.X_OK):
            return None, "%s not built (make bench builds it)" % a.zset_load_bin, 0
        return ([os.path.join(HERE, "zset_memory.py")], {"ZSET_LOAD_BIN": a.zset_load_bin},
                120 if q else 600)
    if n == "trace_runs":
        if not os.access(a.soloist_bench_bin, os.X_OK):
            return None, "%s not built (make builds it)" % a.soloist_bench_bin, 0
        return [os.path.join(HERE, "trace_runs.py")], {"SOLOIST_BENCH_BIN": a.soloist_bench_bin}, 90
    if n == "redis_defaults":
        return [os.path.join(HERE, "redis_defaults.py")], {}, 150 if q else 600
    if n == "types_memory":
        if not os.access(a.types_load_bin, os.X_OK):
            return None, "%s not built (make bench builds it)" % a.types_load_bin, 0
        return ([os.path.join(HERE, "types_memory.py")], {"TYPES_LOAD_BIN": a.types_load_bin},
                120 if q else 420)
    if n == "loadgen_sanity":
        script = os.path.join(HERE, "loadgen_sanity.sh")
        if not os.access(script, os.X_OK):
            return None, "bench/loadgen_sanity.sh not present", 0
        return [script], ({"RUNS": "3", "SECONDS_PER_RUN": "1"} if q else {}), 120 if q else 300
    return None, "unknown", 0


def write_prov(outdir, prov):
    tmp = os.path.join(outdir, "provenance.json.tmp")
    with open(tmp, "w") as f:
        json.dump(prov, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, os.path.join(outdir, "provenance.json"))


if __name__ == "__main__":
    sys.exit(main())
