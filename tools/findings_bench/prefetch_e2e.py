"""findings_bench/prefetch_e2e.py — the prefetch_e2e benchmark's part of FINDINGS.md.

Tooling for step 6. Owns the runs' spread added to the rows F6.20-F6.43
the benchmark prints itself (SPREAD; F6.36-F6.43 when Valkey ran), made
from bench/prefetch_e2e.py's raw lines; the helpers every benchmark
shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import lo_hi, ONE_RUN, printed_rows, side_note


def s_prefetch_e2e(lines, rows):
    """F6.20-F6.43 (bench/prefetch_e2e.py): each side's runs and whether
    they separate; the keyspace load is one run per server."""
    runs = [ln for ln in lines if ln.get("kind") == "run"]

    def side(setting, p, field):
        return [ln[field] for ln in runs if ln.get("setting") == setting and ln.get("pipeline") == p
                and ln.get(field) is not None]
    for r, claim, cfg in printed_rows(rows):
        p, t = cfg.get("pipeline"), cfg.get("setting")
        for head, field, fmt, lower in (("GET rps, ", "rps", "%.0f", False),
                                        ("main thread's CPU per GET, ", "main_cpu_us_per_req", "%.3f", True)):
            if not claim.startswith(head):
                continue
            if claim.startswith(head + "prefetch on / off") and t:
                r.figure += side_note(side(t + "-on", p, field), side(t + "-off", p, field), fmt,
                                      ("prefetch on", "prefetch off"), lower)
            elif claim.startswith(head + "soloist io-threads 1 prefetch on / redis-server"):
                r.figure += side_note(side("t1-on", p, field), side("redis", p, field), fmt,
                                      ("soloist", "redis-server 7.0"), lower)
            elif claim.startswith(head + "soloist / Valkey") and t and cfg.get("valkey"):
                r.figure += side_note(side(t + "-on", p, field), side(cfg["valkey"], p, field), fmt,
                                      ("soloist", "Valkey"), lower)
        if claim.startswith("prefetch batches per GET") and t:
            got = side(t + "-on", p, "prefetch_batches_per_req")
            r.figure += " (%s)" % (ONE_RUN if len(got) < 2 else "runs %s, %s" % (
                lo_hi(got, "%.3f", "batches/GET"), lo_hi(side(t + "-on", p, "prefetch_avg_batch"), "%.1f",
                                                         "keys/batch")))
        elif claim.startswith("loading the keyspace"):
            loads = [ln for ln in lines if ln.get("kind") == "load"]
            servers = {ln.get("server") for ln in loads}
            if loads and len(loads) == len(servers):
                r.figure += " (%s)" % ONE_RUN
