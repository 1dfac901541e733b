"""findings_bench/write_cost.py — the write_cost benchmark's part of FINDINGS.md.

Tooling for step 0. Owns rows F0.10-F0.16: what one write() costs, made
from bench/write_cost.c's raw lines; the helpers every benchmark shares
are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import base_conditions, Row


WC_ORDER = [("none", 0)] + [(t, s) for t in ("tcp", "unix") for s in (16, 512, 16384)]


def h_write_cost(run, lines, bench):
    base = base_conditions(run)
    rows = []
    summ = {(ln.get("transport"), ln.get("size")): ln for ln in lines if ln.get("kind") == "summary"}
    for i, key in enumerate(WC_ORDER):
        ln = summ.get(key)
        if ln is None:
            continue
        if key[0] == "none":
            claim = "floor: one system call (getppid) costs"
            fig = "**%.0f ns** per call (median of %d runs" % (ln["median_wall_ns_per_call"], ln["runs"])
            if ln.get("min_wall_ns_per_call") is not None and ln.get("max_wall_ns_per_call") is not None:
                fig += "; runs %.0f–%.0f ns)" % (ln["min_wall_ns_per_call"], ln["max_wall_ns_per_call"])
            else:
                # bench/write_cost.c prints this floor's median alone, no run lines.
                fig += "; the raw results keep only the median, so no spread)"
            cfg = ["syscall(SYS_getppid) in a loop", "%d runs of %d ms" % (ln["runs"], ln["ms"])]
        else:
            what = "loopback TCP (TCP_NODELAY)" if key[0] == "tcp" else "unix socketpair"
            claim = "write() of %d B on a connected %s, reader draining, costs" % (key[1], what)
            fig = "**%.0f ns** per call wall, %.0f ns writer CPU (median of %d; runs %.0f–%.0f ns; %.2f Gbit/s)" % (
                ln["median_wall_ns_per_call"], ln.get("median_cpu_ns_per_call", 0), ln["runs"],
                ln.get("min_wall_ns_per_call", 0), ln.get("max_wall_ns_per_call", 0),
                ln.get("gbit_s", 0))
            cfg = ["%s" % what, "payload %d B" % key[1], "blocking write, one reader thread",
                   "%d runs of %d ms after a warm-up" % (ln["runs"], ln["ms"]),
                   "pinned writer cpu0 / reader cpu1" if ln.get("pinned") else "threads not pinned"]
        rows.append(Row("F0.%d" % (10 + i), claim, fig, dict(base, config=cfg),
                        "make findings BENCH=write_cost", run.rel(bench)))
    return rows
