"""findings_bench/threads_vs_redis.py — the threads_vs_redis benchmark's part of FINDINGS.md.

Tooling for steps 4 and 5. Owns rows F4.30-F4.40: closed loop with I/O
threads, soloist beside redis-server 7.0; F4.41: beside Valkey at the same
io-threads, when the run had it; made from
bench/threads_vs_redis.py's raw lines; the helpers every benchmark shares
are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import (
    base_conditions, cell_name, field_runs, fmt_ratio, fmt_rps, geomean, median_of, one_run_of, overlap, placement_cfg,
    Refused, Row, serving_note, skipped_why, SVR_ORDER, verdict)


TVR_SIDES = ("soloist-1", "soloist-2", "soloist-4", "redis-1", "redis-2")
VALKEY_SIDES = ("valkey-1", "valkey-2", "valkey-4")
ALL_SIDES = TVR_SIDES + VALKEY_SIDES
TVR_TABLE = ("Closed loop with I/O threads: soloist io-threads 1, 2, 4 (adaptive) and redis-server 7.0 "
             "io-threads 1, 2 (medians, rps)", ["cell"] + list(TVR_SIDES) + ["4 / 1", "4 / redis-2"])


# Long: each cell's row also feeds the targets F4.38-F4.40.
def h_threads_vs_redis(run, lines, bench):
    """F4.30-F4.37 (per cell), F4.38-F4.39 (targets), F4.40 (redis's own
    threads)."""
    base = base_conditions(run)
    one_run_of(lines, "threads_vs_redis")
    cmd, src = "make findings BENCH=threads_vs_redis", run.rel(bench)
    cells = {}
    for ln in lines:
        if ln.get("kind") == "run":
            cells.setdefault((ln["test"], ln["value_size"], ln["pipeline"]), {}).setdefault(
                ln["side"], []).append(ln)
    why = "; ".join(skipped_why(lines, has="io_threads", server="soloist"))
    rows, four, vs_redis, redis_own = [], [], [], []
    for i, key in enumerate(SVR_ORDER):
        if key not in cells:
            continue
        by = cells[key]
        for need in ("soloist-1", "redis-2"):
            if need not in by:
                raise Refused("threads_vs_redis %s has no %s runs; its ratios need both from one run"
                              % (cell_name(key), need))
        med = {k: median_of(v) for k, v in by.items()}
        parts = ["rps %s" % ", ".join("%s %s" % (k, fmt_rps(med[k])) for k in TVR_SIDES if k in med)]
        for n in (2, 4):
            k = "soloist-%d" % n
            if k in med:
                parts.append("%s / soloist-1 **%s** (%s)" % (k, fmt_ratio(med[k] / med["soloist-1"]),
                                                            overlap(by[k], by["soloist-1"])))
                parts.append("%s / redis-2 **%s**" % (k, fmt_ratio(med[k] / med["redis-2"])))
        if "soloist-4" in med:
            rps = {k: field_runs(v, "rps") for k, v in by.items()}
            four.append((med["soloist-4"] / med["soloist-1"], key,
                         verdict(rps["soloist-4"], rps["soloist-1"], ("soloist-4", "soloist-1"))))
            vs_redis.append((med["soloist-4"] / med["redis-2"], key,
                             verdict(rps["soloist-4"], rps["redis-2"], ("soloist-4", "redis-2"))))
        else:
            parts.append("soloist-1 / redis-2 %s (%s); soloist io-threads 2, 4 **not measured**: %s"
                         % (fmt_ratio(med["soloist-1"] / med["redis-2"]),
                            verdict(field_runs(by["soloist-1"], "rps"), field_runs(by["redis-2"], "rps"),
                                    ("soloist-1", "redis-2")), why or "no runs"))
        if "redis-1" in med:
            redis_own.append((med["redis-2"] / med["redis-1"], key,
                              verdict(field_runs(by["redis-2"], "rps"), field_runs(by["redis-1"], "rps"),
                                      ("io-threads 2", "io-threads 1"))))
        ln = by["soloist-1"][0]
        present = [k for k in ALL_SIDES if k in by]
        order = "".join(str(present.index(x["side"]) + 1) for x in lines if x.get("kind") == "run"
                        and (x["test"], x["value_size"], x["pipeline"]) == key)
        cfg = [key[0], "P=%d" % key[2], "%d clients" % ln["clients"], "%d B values" % key[1],
               "keyspace -r %s (all keys loaded)" % ln["keyspace"],
               "runs sized per setting by its own calibration (%s requests)" % ", ".join(
                   "%s %d" % (k, by[k][0]["requests"]) for k in ALL_SIDES if k in by),
               "%d runs each, settings alternated (%s; 1-%d = %s), median" % (
                   len(by["soloist-1"]), order, len(present), ", ".join(present)),
               "soloist ignition: default (adaptive)", "redis io-threads 2: --io-threads-do-reads yes",
               "waiting servers stopped (SIGSTOP)", placement_cfg(ln, base["cores"])]
        rows.append(Row("F4.%d" % (30 + i), "closed loop, %s: soloist with I/O threads against its io-threads 1 "
                        "and against redis-server 7.0 io-threads 2" % cell_name(key), "; ".join(parts),
                        dict(base, config=cfg), cmd, src, serving_note(ln, base["cores"]),
                        extra={"summary": TVR_TABLE,
                               "cells": [cell_name(key)] + [fmt_rps(med[k]) if k in med else "—" for k in TVR_SIDES]
                               + ["%s" % fmt_ratio(med["soloist-4"] / med["soloist-1"]) if "soloist-4" in med else "—",
                                  "%s" % fmt_ratio(med["soloist-4"] / med["redis-2"]) if "soloist-4" in med else "—"]}))
    if not rows:
        return rows
    cfg = ["GET and SET", "P=1 and 16", "3 and 512 B values", "50 clients", "medians of alternated runs per cell",
           "soloist io-threads 4, default ignition"]
    ln = next(x for x in lines if x.get("kind") == "run")
    for rid, claim, pairs, floor in (
            ("F4.38", "Target (benchmark goal): adaptive io-threads 4 ≥ 0.95× io-threads 1 in every cell", four, 0.95),
            ("F4.39", "Target (benchmark goal): soloist io-threads 4 ≥ 1.0× redis-server 7.0 io-threads 2 in "
             "every cell", vs_redis, 1.0)):
        if pairs:
            low, lk, lsep = min(pairs)
            met = sum(1 for r, _, _ in pairs if r >= floor)
            fig = "%d of %d cells ≥ %s; lowest %s (%s; %s)%s" % (
                met, len(pairs), fmt_ratio(floor), fmt_ratio(low), cell_name(lk), lsep,
                " — target met" if met == len(pairs) == 8 else " — target not met")
        else:
            fig = "**not measured**: %s" % (why or "no soloist io-threads 4 runs")
        rows.append(Row(rid, claim, fig, dict(base, config=cfg), cmd, src, serving_note(ln, base["cores"])))
    rows += valkey_row(cells, lines, base, cmd, src)
    if redis_own:
        fig = "; ".join("%s %s (%s)" % (cell_name(k), fmt_ratio(r), sep) for r, k, sep in redis_own)
        rows.append(Row("F4.40", "the peer's own threads: redis-server 7.0 io-threads 2 / io-threads 1 per cell",
                        fig, dict(base, config=cfg[:5] + ["redis --io-threads 2 --io-threads-do-reads yes"]),
                        cmd, src, serving_note(ln, base["cores"])))
    return rows


def valkey_row(cells, lines, base, cmd, src):
    """F4.41: soloist-N / valkey-N per cell, each server at its default
    (adaptive) activation; none when the run skipped Valkey."""
    have = [k for k in SVR_ORDER if k in cells and all(v in cells[k] for v in VALKEY_SIDES)
            and all("soloist-%d" % n in cells[k] for n in (1, 2, 4))]
    if not have:
        return []
    parts, four = [], []
    for key in have:
        by = cells[key]
        r = {n: median_of(by["soloist-%d" % n]) / median_of(by["valkey-%d" % n]) for n in (1, 2, 4)}
        four.append(r[4])
        parts.append("%s: t1 %s, t2 %s, t4 %s (t4: %s)" % (
            cell_name(key), fmt_ratio(r[1]), fmt_ratio(r[2]), fmt_ratio(r[4]),
            verdict(field_runs(by["soloist-4"], "rps"), field_runs(by["valkey-4"], "rps"),
                    ("soloist-4", "valkey-4"))))
    fig = "io-threads 4: %d of %d cells ≥ 1.0×, geometric mean **%s**; %s" % (
        sum(1 for x in four if x >= 1.0), len(four), fmt_ratio(geomean(four)), "; ".join(parts))
    ln = next(x for x in lines if x.get("kind") == "run")
    peer = next((x.get("valkey_version") for x in lines if x.get("valkey_version")), None)
    cfg = ["GET and SET", "P=1 and 16", "3 and 512 B values", "50 clients", "medians of alternated runs per cell",
           "soloist ignition: default (adaptive)", "Valkey --io-threads N, its default activation",
           "Valkey built from source" + (" (%s)" % peer if peer else ""), "waiting servers stopped (SIGSTOP)",
           placement_cfg(ln, base["cores"])]
    return [Row("F4.41", "closed loop beside Valkey, each at its default thread activation: soloist / Valkey at "
                "io-threads 1, 2 and 4, per cell", fig, dict(base, config=cfg), cmd, src,
                serving_note(ln, base["cores"]))]
