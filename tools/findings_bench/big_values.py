"""findings_bench/big_values.py — the big_values benchmark's part of FINDINGS.md.

Tooling for step 7. Owns the runs' spread added to the rows F7.1-F7.39 the
benchmark prints itself (SPREAD), and the plots big_values_bandwidth and
noisy_neighbour, made from bench/big_values.py's raw lines; the helpers
every benchmark shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import re

from findings_core import lo_hi, median_of, NotMeasured, ONE_RUN, plot, printed_rows, verdict


def s_big_values(lines, rows):
    """F7.1-F7.27 (bench/big_values.py): the bandwidth runs of each setting
    and whether they separate; the noisy neighbour's runs of each setting,
    without and with the noise."""
    bw = [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == "bandwidth"]
    nz = [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == "noisy" and ln.get("cls") == "small"]
    if nz and all(ln.get("generators") is None for ln in nz):
        # Runs from before the small class had a process of its own timed it
        # from the same process and thread that read every 10 MB reply, yet
        # their rows say "a second load-generator process": they measured
        # F7.38's arrangement, not F7.20-F7.27's, so they give none of these.
        rows[:] = [r for r in rows if not (r.claim.startswith("noisy neighbour")
                                           or r.claim.startswith("target: small-class p99.9"))]

    def mbps(setting, test, mb):
        return [ln["mb_per_s"] for ln in bw if ln.get("setting") == setting and ln.get("test") == test
                and ln.get("value_mb") == mb and ln.get("mb_per_s") is not None]

    def p999(setting, noise):
        return [ln["p999_us"] for ln in nz if ln.get("setting") == setting and ln.get("noise") == noise]
    names = (("on", "on"), ("off", "off"), ("redis", "redis"), ("raw", "ceiling"))
    for r, claim, cfg in printed_rows(rows):
        test, mb = cfg.get("test"), cfg.get("value_mb")
        if " bandwidth, " in claim and mb is not None:
            got = {label: mbps(k, test, mb) for k, label in names}
            if min(len(v) for v in got.values()) < 2:
                r.figure += " (%s)" % ONE_RUN
                continue
            r.figure += ("; runs %s MB/s; on against the ceiling: %s; against off: %s; against redis: %s" % (
                ", ".join("%s %s" % (label, lo_hi(got[label], "%.0f")) for _, label in names),
                verdict(got["on"], got["ceiling"], ("on", "ceiling")),
                verdict(got["on"], got["off"], ("on", "off")),
                verdict(got["on"], got["redis"], ("on", "redis"))))
        elif claim.startswith("target: GET with copy avoidance on"):
            sizes = sorted({ln["value_mb"] for ln in bw if ln.get("test") == "GET" and ln.get("value_mb", 0) >= 8})
            r.figure += "; " + ", ".join("%d MB: %s" % (m, verdict(mbps("on", "GET", m), mbps("raw", "GET", m),
                                                                   ("on", "ceiling"))) for m in sizes)
        elif claim.startswith("bytes the main thread copies"):
            setting = "on" if "copy avoidance on" in claim else "off"
            per = [(m, [ln["bytes_copied_per_get"] for ln in bw if ln.get("setting") == setting
                        and ln.get("test") == "GET" and ln.get("value_mb") == m
                        and ln.get("bytes_copied_per_get") is not None])
                   for m in sorted({ln["value_mb"] for ln in bw if ln.get("test") == "GET"})]
            if any(len(v) < 2 for _, v in per):
                r.figure += " (%s)" % ONE_RUN
            else:
                r.figure += " (runs %s)" % ", ".join("%d MB: %s" % (m, lo_hi(v, "%.0f", "B")) for m, v in per)
        elif claim.startswith("noisy neighbour") and cfg.get("setting"):
            quiet, loud = p999(cfg["setting"], False), p999(cfg["setting"], True)
            r.figure += " (%s)" % (ONE_RUN if min(len(quiet), len(loud)) < 2 else
                                   "p99.9 runs %s without, %s with; %s" % (
                                       lo_hi(quiet, "%.0f"), lo_hi(loud, "%.0f"),
                                       verdict(quiet, loud, ("without", "with"), lower=True)))
        elif claim.startswith("target: small-class p99.9"):
            m = re.search(r"\((\S+) vs (\S+)\)\s*$", claim)
            if m:
                sides = [p999(m.group(1), False), p999(m.group(1), True), p999(m.group(2), True)]
                r.figure += " (%s)" % (ONE_RUN if min(map(len, sides)) < 2 else "p99.9 runs %s without, %s with; "
                                       "%s %s under the same noise" % (
                                           lo_hi(sides[0], "%.0f"), lo_hi(sides[1], "%.0f"), m.group(2),
                                           lo_hi(sides[2], "%.0f")))


BV_SETTINGS = (("on", "copy avoidance on"), ("off", "copy avoidance off"), ("on-t2", "on, io-threads 2"),
               ("redis", "redis-server 7.0"), ("raw", "raw loopback ceiling"))


@plot("big_values_bandwidth", "big_values",
      "GET bandwidth by value size, one connection")
def p_big_values_bandwidth(lines):
    runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == "bandwidth" and ln.get("test") == "GET"]
    if not runs:
        raise NotMeasured("plot big_values_bandwidth: no GET bandwidth runs")
    sizes = sorted({ln["value_mb"] for ln in runs})
    rows = []
    for mb in sizes:
        row = [mb]
        for key, _ in BV_SETTINGS:
            side = [ln for ln in runs if ln["value_mb"] == mb and ln["setting"] == key]
            row.append(round(median_of(side, "mb_per_s")) if side else "NaN")
        rows.append(row)
    colors = ["#a23b2a", "#6fa3c7", "#d08c3a", "#3b5b92", "#888888"]
    body = ("set datafile missing 'NaN'; set logscale x 2; set xlabel 'value size (MB)'; "
            "set ylabel 'MB/s (median of runs)'; set yrange [0:*]; set grid; set key outside right top vertical; "
            "plot " + ", ".join("%s using 1:%d with linespoints lw 2 lc rgb '%s' title '%s'"
                                % ("DATA" if i == 0 else "''", i + 2, colors[i], title)
                                for i, (_, title) in enumerate(BV_SETTINGS)))
    return ["value_mb"] + ["%s_mb_per_s" % k for k, _ in BV_SETTINGS], rows, body


@plot("noisy_neighbour", "big_values",
      "1 KB GETs' p99.9 without and with 10 MB GETs beside them")
def p_noisy_neighbour(lines):
    runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == "noisy" and ln.get("cls") == "small"]
    if not runs:
        raise NotMeasured("plot noisy_neighbour: no noisy-neighbour runs")
    order = []
    for ln in runs:
        if ln["setting"] not in order:
            order.append(ln["setting"])
    rows = []
    for setting in order:
        quiet = [ln for ln in runs if ln["setting"] == setting and not ln["noise"]]
        noisy = [ln for ln in runs if ln["setting"] == setting and ln["noise"]]
        rows.append(['"%s"' % setting, round(median_of(quiet, "p999_us") / 1000, 2) if quiet else "NaN",
                     round(median_of(noisy, "p999_us") / 1000, 2) if noisy else "NaN"])
    body = ("set datafile missing 'NaN'; set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set yrange [0:*]; "
            "set ylabel 'small GETs p99.9 (ms)'; set grid y; set key outside right top vertical; "
            "plot DATA using 2:xtic(1) title 'without noise' lc rgb '#6fa3c7', "
            "'' using 3 title 'with 10 MB GETs beside' lc rgb '#a23b2a'")
    return ["setting", "quiet_p999_ms", "noisy_p999_ms"], rows, body
