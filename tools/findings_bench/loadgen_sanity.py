"""findings_bench/loadgen_sanity.py — the loadgen_sanity benchmark's part of FINDINGS.md.

Tooling for step 0. Owns row F0.22: soloist-bench beside redis-benchmark,
made from bench/loadgen_sanity.sh's raw lines; the helpers every benchmark
shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import base_conditions, fmt_ratio, fmt_rps, Row, SERVING_NOTE, verdict


LOADGEN_CFG = ("command", "conns", "clients", "pipeline", "value_bytes", "keys", "threads",
               "seconds", "runs", "server", "pinned")


def h_loadgen_sanity(run, lines, bench):
    """bench/loadgen_sanity.sh: its summary line carries the ratio it
    computed from paired runs."""
    base = base_conditions(run)
    for ln in lines:
        if not (ln.get("summary") and ln.get("ratio") is not None):
            continue
        cfg = ["%s=%s" % (k, ln[k]) for k in LOADGEN_CFG if k in ln] or None
        fig = "ratio **%s**" % fmt_ratio(float(ln["ratio"]))
        if "soloist_bench_rps_median" in ln and "redis_benchmark_rps_median" in ln:
            fig += " (medians %s vs %s rps" % (fmt_rps(ln["soloist_bench_rps_median"]),
                                               fmt_rps(ln["redis_benchmark_rps_median"]))
            if ln.get("pair_ratios"):
                fig += "; pair ratios %s" % ", ".join("%.3f" % x for x in ln["pair_ratios"])
            by = {t: [x["rps"] for x in lines if x.get("tool") == t and x.get("rps") is not None]
                  for t in ("soloist-bench", "redis-benchmark")}
            if all(by.values()):
                fig += "; %s" % verdict(by["soloist-bench"], by["redis-benchmark"],
                                        ("soloist-bench", "redis-benchmark"))
            fig += ")"
        if "within_10pct" in ln:
            fig += "; within 10%%: %s" % ("yes" if ln["within_10pct"] else "NO")
        if "soloist_bench_count_matches_server" in ln:
            fig += "; request count matches the server's: %s" % (
                "yes" if ln["soloist_bench_count_matches_server"] else "NO")
        note = ("pinned: server cpu0, load generators cpu1" if ln.get("pinned")
                else SERVING_NOTE % base["cores"])
        claim = ln.get("claim") or "load generator sanity: soloist-bench / redis-benchmark rate"
        return [Row("F0.22", claim, fig, dict(base, config=cfg),
                    "make findings BENCH=loadgen_sanity", run.rel(bench), note)]
    return []
