"""findings_bench/server_vs_redis.py — the server_vs_redis benchmark's part of FINDINGS.md.

Tooling for step 0. Owns rows F0.1-F0.9 (server_vs_redis) and F0.31-F0.39
(server_vs_redis_pinned): soloist beside redis-server 7.0 per cell; F0.25
and F0.30: soloist beside Valkey in every cell of a run that had it; and
the plots server_vs_redis and server_vs_redis_pinned, made from
bench/server_vs_redis.py's raw lines; the helpers every benchmark shares
are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import (
    a_label, base_conditions, field_runs, fmt_ratio, fmt_rps, geomean, median_of, overlap, placement_cfg, plot, Row,
    serving_note, side_by_side, SVR_ORDER, verdict)


def cpu_us_per_req(side):
    vals = [ln["server_cpu_s"] * 1e6 / ln["requests"] for ln in side
            if ln.get("server_cpu_s") is not None and ln.get("requests")]
    return statistics.median(vals) if vals else None


def h_server_vs_redis(run, lines, bench):
    pinned = bench.endswith("_pinned")
    first = 31 if pinned else 1
    base = base_conditions(run)
    cells = side_by_side(lines, ("test", "value_size", "pipeline"))
    rows, ratios = [], []
    cmd = "make findings BENCH=%s" % bench
    for i, key in enumerate(SVR_ORDER):
        if key not in cells:
            continue
        test, size, p = key
        a, b = cells[key]["soloist"], cells[key]["redis"]
        ma, mb = median_of(a), median_of(b)
        ratio = ma / mb
        ratios.append((ratio, key, overlap(a, b)))
        ln = a[0]
        ca, cb = cpu_us_per_req(a), cpu_us_per_req(b)
        order = "".join({"soloist": "A", "valkey": "C"}.get(x.get("server"), "B")
                        for x in lines if x.get("kind") == "run"
                        and (x.get("test"), x.get("value_size"), x.get("pipeline")) == key)
        fig = "%s rps %s / redis %s → **%s**" % (a_label(a), fmt_rps(ma), fmt_rps(mb), fmt_ratio(ratio))
        fig += "; %s" % overlap(a, b)
        if ca and cb:
            fig += "; server CPU %.1f vs %.1f µs/request" % (ca, cb)
        fig += " (runs: %s vs %s)" % ("/".join(fmt_rps(x["rps"]) for x in a),
                                      "/".join(fmt_rps(x["rps"]) for x in b))
        cfg = ["%s" % test, "P=%d" % p, "%d clients" % ln.get("clients", 50),
               "%d B values" % size, "keyspace -r %s (all keys loaded)" % ln.get("keyspace"),
               "%d requests per run" % ln.get("requests", 0),
               "%d runs each, alternated %s, median" % (min(len(a), len(b)), order),
               "io-threads 1", placement_cfg(ln, base["cores"])]
        rows.append(Row("F0.%d" % (first + i),
                        "%s%s, %d B values, P=%d: soloist / redis-server 7.0"
                        % ("pinned: " if pinned else "", test, size, p),
                        fig, dict(base, config=cfg), cmd, run.rel(bench),
                        serving_note(ln, base["cores"]),
                        extra={"table": "pinned" if pinned else "shared", "test": test,
                               "size": size, "pipeline": p, "soloist": ma, "redis": mb,
                               "ratio": ratio}))
    if ratios:
        met = sum(1 for r, _, _ in ratios if r >= 1.0)
        geo = geomean([r for r, _, _ in ratios])
        low, lk, lsep = min(ratios)
        # The lowest cell's runs: whether redis won it in every run.
        fig = "%d of %d cells ≥ 1.0×; geometric mean **%s**; lowest %s (%s %d B P=%d; %s)" % (
            met, len(ratios), fmt_ratio(geo), fmt_ratio(low), lk[0], lk[1], lk[2], lsep)
        ln = next(x for x in lines if x.get("kind") == "run")
        cfg = ["GET and SET", "P=1 and 16", "3 and 512 B values", "50 clients",
               "median of alternated runs per cell", placement_cfg(ln, base["cores"])]
        rows.append(Row("F0.%d" % (first + 8),
                        "%sTarget (benchmark goal): soloist ≥ 1.0× redis-server 7.0 in every cell of (a)"
                        % ("pinned: " if pinned else ""),
                        fig + (" — target met" if met == len(ratios) == 8 else " — target not met"),
                        dict(base, config=cfg), cmd, run.rel(bench), serving_note(ln, base["cores"])))
    rows += valkey_row(run, lines, bench, cells, base)
    return rows


def valkey_row(run, lines, bench, cells, base):
    """F0.25 (F0.30 pinned): soloist / Valkey in every cell, from the same
    run's alternated runs (A C B: soloist, Valkey, redis-server); none when
    the run skipped Valkey."""
    have = [k for k in SVR_ORDER if k in cells and cells[k].get("valkey")]
    if not have:
        return []
    pinned = bench.endswith("_pinned")
    parts, ratios = [], []
    for test, size, p in have:
        a, c = cells[(test, size, p)]["soloist"], cells[(test, size, p)]["valkey"]
        r = median_of(a) / median_of(c)
        ratios.append(r)
        parts.append("%s %d B P=%d %s (%s)" % (test, size, p, fmt_ratio(r), verdict(
            field_runs(a, "rps"), field_runs(c, "rps"), ("soloist", "Valkey"))))
    geo = geomean(ratios)
    fig = "%d of %d cells ≥ 1.0×; geometric mean **%s**; %s" % (
        sum(1 for r in ratios if r >= 1.0), len(ratios), fmt_ratio(geo), "; ".join(parts))
    ln = next(x for x in lines if x.get("kind") == "run")
    peer = next((x.get("valkey_version") for x in lines if x.get("valkey_version")), None)
    cfg = ["GET and SET", "P=1 and 16", "3 and 512 B values", "50 clients", "io-threads 1",
           "median of alternated runs per cell (A C B: soloist, Valkey, redis-server)",
           "Valkey built from source" + (" (%s)" % peer if peer else ""), placement_cfg(ln, base["cores"])]
    return [Row("F0.30" if pinned else "F0.25",
                "%severy cell of (a) beside Valkey: soloist / Valkey (median rps)" % ("pinned: " if pinned else ""),
                fig, dict(base, config=cfg), "make findings BENCH=%s" % bench, run.rel(bench),
                serving_note(ln, base["cores"]))]


@plot("server_vs_redis", "server_vs_redis", "soloist / redis-server 7.0 by cell, 50 clients, shared cores")
def p_server_vs_redis(lines):
    return _ratio_bars(lines)


@plot("server_vs_redis_pinned", "server_vs_redis_pinned",
      "soloist / redis-server 7.0 by cell, 50 clients, server and load generator pinned")
def p_server_vs_redis_pinned(lines):
    return _ratio_bars(lines)


def _ratio_bars(lines):
    cells = side_by_side(lines, ("test", "value_size", "pipeline"))
    rows = [['"%s %dB P=%d"' % key, round(median_of(cells[key]["soloist"]) / median_of(cells[key]["redis"]), 4)]
            for key in SVR_ORDER if key in cells]
    body = ("set style fill solid 0.6; set boxwidth 0.6; set yrange [0:*]; "
            "set ylabel 'soloist / redis-server (median rps)'; set xtics rotate by -30; set grid y; "
            "plot DATA using 0:2:xtic(1) with boxes lc rgb '#a23b2a' notitle, 1 with lines dt 2 lw 2 title '1.0×'")
    return ["cell", "ratio"], rows, body
