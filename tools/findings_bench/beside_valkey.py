"""findings_bench/beside_valkey.py — the beside_valkey benchmark's plot.

Tooling for steps 4-7. Owns the plot beside_valkey_scaling: throughput
against io-threads as measured in bench/beside_valkey.py's part (d), for
soloist and Valkey, beside bench/pipeline_model.py's curves fed with the
same run's costs (part (d)'s where it read them, else part (c)'s): on this machine's cores, and with cores to
spare. The benchmark prints its rows itself (F0.60-F0.68, F4.90-F4.106,
F7.50-F7.53).

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import os
import statistics
import sys

from findings_core import NotMeasured, plot

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "bench"))
import pipeline_model as pm  # noqa: E402

TOP = 16  # the curves' last io-threads


@plot("beside_valkey_scaling", "beside_valkey",
      "throughput against io-threads: measured here, and the pipeline model's curves")
def p_beside_valkey_scaling(lines):
    scale = [ln for ln in lines if ln.get("kind") == "scale"]
    got = pm.model([ln for ln in lines if ln.get("kind") in ("cpu", "scale")])
    if not scale or "soloist" not in got:
        raise NotMeasured("plot beside_valkey_scaling: no part (d) runs or no model inputs")
    measured = {name: pm.measured(scale, name) for name in ("soloist", "valkey")}
    cores, gen = pm.machine(scale, "soloist")  # as row F4.104 reads it
    rows = []
    for n in range(1, TOP + 1):
        row = [n]
        for name in ("soloist", "valkey"):
            row.append(round(statistics.median(measured[name][n]), 3) if n in measured[name] else "NaN")
        row.append(round(pm.bound(got["soloist"], n, cores, gen), 3))
        for name in ("soloist", "valkey"):
            row.append(round(pm.bound(got[name], n), 3) if name in got else "NaN")
        v = got.get("valkey")
        row.append(round(pm.bound(pm.with_handoffs(v, 0.0), n), 3) if v else "NaN")
        rows.append(row)
    here = "these %s cores" % cores if cores else "the server cores"
    body = ("set datafile missing 'NaN'; set xlabel 'io-threads (main counted)'; "
            "set ylabel 'throughput / io-threads 1'; set yrange [0:*]; set xrange [0.5:%d.5]; set grid; "
            "set key outside below center horizontal maxcols 2; "
            "plot DATA using 1:2 with points pt 7 ps 1.4 lc rgb '#a23b2a' title 'soloist, measured', "
            "'' using 1:3 with points pt 5 ps 1.2 lc rgb '#3b5b92' title 'Valkey, measured', "
            "'' using 1:4 with lines lw 2 dt 2 lc rgb '#a23b2a' title 'soloist, model on %s', "
            "'' using 1:5 with lines lw 2 lc rgb '#a23b2a' title 'soloist, model, cores to spare', "
            "'' using 1:6 with lines lw 2 lc rgb '#3b5b92' title 'Valkey, model, cores to spare', "
            "'' using 1:7 with lines lw 2 dt 3 lc rgb '#3b5b92' title 'Valkey, model, hand-offs at their floor'" % (TOP, here))
    return ["io_threads", "soloist_measured", "valkey_measured", "soloist_model_here", "soloist_model_spare",
            "valkey_model_spare", "valkey_model_floor"], rows, body
