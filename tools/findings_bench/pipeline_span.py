"""findings_bench/pipeline_span.py — the pipeline_span benchmark's part of FINDINGS.md.

Tooling for step 0. Owns rows F0.17-F0.19 (and beside Valkey F0.23-F0.24):
PING by pipeline depth, and the plot pipeline_span, made from
bench/pipeline_span.py's raw lines; the helpers every benchmark shares are
in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import (
    a_label, base_conditions, field_runs, fmt_ratio, fmt_rps, median_of, placement_cfg, plot, Row, runs_spread,
    serving_note, side_by_side, verdict)


def h_pipeline_span(run, lines, bench):
    base = base_conditions(run)
    cells = side_by_side(lines, ("pipeline",))
    depths = sorted(k[0] for k in cells)
    if not depths:
        return []
    med = {s: {d: median_of(cells[(d,)][s]) for d in depths} for s in ("soloist", "redis")}
    ln = cells[(depths[0],)]["soloist"][0]
    cmd = "make findings BENCH=pipeline_span"
    cfg = ["PING (PING_MBULK)", "P=" + ",".join(map(str, depths)), "50 clients",
           "3 runs each per depth, alternated, median", "io-threads 1",
           placement_cfg(ln, base["cores"])]
    rows = []
    for i, s in enumerate(("soloist", "redis")):
        m = med[s]
        by = ", ".join("P=%d %s (%s)" % (d, fmt_rps(m[d]), runs_spread(field_runs(cells[(d,)][s], "rps"), fmt_rps))
                       for d in depths)
        if 1 in m and 256 in m:
            span = "span (P=256 / P=1) **%s**" % fmt_ratio(m[256] / m[1])
        else:
            span = "span not measured (P=1 or P=256 missing)"
        who = a_label(cells[(depths[0],)][s]) if s == "soloist" else "redis-server 7.0"
        rows.append(Row("F0.%d" % (17 + i), "pipelining span of %s: PING rps by depth" % who,
                        "%s; %s" % (span, by), dict(base, config=cfg), cmd, run.rel(bench),
                        serving_note(ln, base["cores"])))
    by = ", ".join("P=%d %s (%s)" % (d, fmt_ratio(med["soloist"][d] / med["redis"][d]),
                                     verdict(field_runs(cells[(d,)]["soloist"], "rps"),
                                             field_runs(cells[(d,)]["redis"], "rps"), ("soloist", "redis")))
                   for d in depths)
    rows.append(Row("F0.19", "PING by depth: soloist / redis-server 7.0", by,
                    dict(base, config=cfg), cmd, run.rel(bench), serving_note(ln, base["cores"])))
    if all("valkey" in cells[(d,)] for d in depths):
        v = {d: median_of(cells[(d,)]["valkey"]) for d in depths}
        vcfg = cfg + ["Valkey built from source (%s), third in each round" % cells[(depths[0],)]["valkey"][0]
                      .get("valkey_version")]
        by = ", ".join("P=%d %s (%s)" % (d, fmt_rps(v[d]), runs_spread(field_runs(cells[(d,)]["valkey"], "rps"),
                                                                      fmt_rps)) for d in depths)
        span = "span (P=256 / P=1) **%s**" % fmt_ratio(v[256] / v[1]) if 1 in v and 256 in v else \
            "span not measured (P=1 or P=256 missing)"
        rows.append(Row("F0.23", "pipelining span of Valkey (2024 tree): PING rps by depth", "%s; %s" % (span, by),
                        dict(base, config=vcfg), cmd, run.rel(bench), serving_note(ln, base["cores"])))
        by = ", ".join("P=%d %s (%s)" % (d, fmt_ratio(med["soloist"][d] / v[d]),
                                         verdict(field_runs(cells[(d,)]["soloist"], "rps"),
                                                 field_runs(cells[(d,)]["valkey"], "rps"), ("soloist", "Valkey")))
                       for d in depths)
        rows.append(Row("F0.24", "PING by depth: soloist / Valkey (2024 tree)", by,
                        dict(base, config=vcfg), cmd, run.rel(bench), serving_note(ln, base["cores"])))
    return rows


@plot("pipeline_span", "pipeline_span", "PING requests per second by pipeline depth, 50 clients")
def p_pipeline_span(lines):
    cells = side_by_side(lines, ("pipeline",))
    vk = all("valkey" in c for c in cells.values())
    rows = [(p, round(median_of(cells[(p,)]["soloist"])), round(median_of(cells[(p,)]["redis"])))
            + ((round(median_of(cells[(p,)]["valkey"])),) if vk else ()) for (p,) in sorted(cells)]
    body = ("set logscale x 2; set logscale y 10; set format y '%.0s%c'; set xrange [0.8:320]; set xlabel 'pipeline depth P (commands per client per round trip)'; "
            "set ylabel 'requests per second (median of runs)'; set key top left; set grid; "
            "set xtics (1, 4, 16, 64, 256); "
            "plot DATA using 1:2 with linespoints lw 2 pt 7 lc rgb '#a23b2a' title 'soloist', "
            "'' using 1:3 with linespoints lw 2 pt 5 dt 2 lc rgb '#3b5b92' title 'redis-server 7.0'"
            + (", '' using 1:4 with linespoints lw 2 pt 9 dt 3 lc rgb '#2f7d4f' title 'Valkey (2024 tree)'" if vk else ""))
    return ["P", "soloist_rps", "redis_rps"] + (["valkey_rps"] if vk else []), rows, body
