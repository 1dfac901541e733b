"""findings_bench/watermark.py — the watermark benchmark's part of FINDINGS.md.

Tooling for step 5. Owns the plot watermark_overlap (its rows the
benchmark prints itself), made from bench/watermark.py's raw lines; the
helpers every benchmark shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import median_of, NotMeasured, plot


@plot("watermark_overlap", "watermark",
      "GETs run behind a write in flight, and main's CPU per GET with the watermark on and off")
def p_watermark_overlap(lines):
    runs = [ln for ln in lines if ln.get("kind") == "run" and ln.get("setting") in ("on", "off")]
    if not runs:
        raise NotMeasured("plot watermark_overlap: no runs")
    cells = sorted({(ln["size"], ln["threads"]) for ln in runs})
    rows = []
    for size, t in cells:
        side = {s: [ln for ln in runs if ln["size"] == size and ln["threads"] == t and ln["setting"] == s]
                for s in ("on", "off")}
        name = "1 MB" if size == 1048576 else "16 KB" if size == 16384 else "%d B" % size
        rows.append(['"%s, io-threads %d"' % (name, t),
                     round(100 * median_of(side["on"], "during_write_share"), 3),
                     round(median_of(side["on"], "main_cpu_us_per_req_with_spin"), 3),
                     round(median_of(side["off"], "main_cpu_us_per_req_with_spin"), 3)])
    body = ("set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set logscale y; set yrange [0.001:*]; "
            "set ylabel '% of GETs (bars 1); main CPU µs per GET (bars 2, 3); log scale'; set grid y; "
            "set key outside right top vertical; set xtics rotate by -30; "
            "plot DATA using 2:xtic(1) title '% of GETs behind a write (on)' lc rgb '#888888', "
            "'' using 3 title 'main µs/GET, watermark on' lc rgb '#a23b2a', "
            "'' using 4 title 'main µs/GET, off (waits)' lc rgb '#3b5b92'")
    return ["cell", "during_write_pct", "main_us_on", "main_us_off"], rows, body
