"""findings_bench/idle_memory.py — the idle_memory benchmark's part of FINDINGS.md.

Tooling for step 0. Owns rows F0.40-F0.44 and F0.57-F0.58: resident
memory per idle connection (beside Valkey in F0.57-F0.58), made from
bench/idle_memory.py's raw lines; the helpers every benchmark shares are
in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import a_label, base_conditions, fmt_ratio, ONE_RUN, Row, side_by_side


# ------------------------------------------ the connection path (F0.40-49)

IDLE_MOMENTS = {"connected": "connected, silent",
                "after_ping": "after one PING each, then idle"}


def h_idle_memory(run, lines, bench):
    """bench/idle_memory.py: RSS growth per idle connection, one run per
    server; F0.40-42 for silent connections, F0.43-44 after one PING, and
    F0.57-58 beside Valkey when the run measured it."""
    base = base_conditions(run)
    cells = side_by_side(lines, ("moment",))
    rows, cmd = [], "make findings BENCH=idle_memory"
    for moment, first in (("connected", 40), ("after_ping", 43)):
        if (moment,) not in cells:
            continue
        sides = {k: v[0] for k, v in cells[(moment,)].items()}
        # bench/idle_memory.py measures each server once: no spread to give.
        one = "; %s" % ONE_RUN if all(len(v) == 1 for v in cells[(moment,)].values()) else ""
        a, b = sides["soloist"], sides["redis"]
        cfg = ["%d connections" % a["connections"], IDLE_MOMENTS[moment],
               "idle %s s before the reading" % a["idle_s"] if moment == "after_ping" else "read 0.5 s after the last accept",
               "RSS growth over the RSS after one throwaway PING", "--maxclients %d" % a["maxclients"],
               "one run per server"]
        ratio = a["bytes_per_conn"] / b["bytes_per_conn"]
        fig = lambda ln: "**%s B** per connection (RSS %.1f → %.1f MB%s)" % (
            "{:,.0f}".format(ln["bytes_per_conn"]), ln["rss_base_bytes"] / 2**20, ln["rss_bytes"] / 2**20, one)
        if moment == "connected":
            rows.append(Row("F0.40", "resident memory per idle connection, %s: %s" % (
                IDLE_MOMENTS[moment], a_label([a])), fig(a), dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.41", "resident memory per idle connection, %s: redis-server 7.0" % IDLE_MOMENTS[moment],
                            fig(b), dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.42", "idle connection memory, %s: soloist / redis-server 7.0" % IDLE_MOMENTS[moment],
                            "**%s**%s" % (fmt_ratio(ratio), " (%s)" % one[2:] if one else ""),
                            dict(base, config=cfg), cmd, run.rel(bench)))
        else:
            rows.append(Row("F0.43", "resident memory per idle connection, %s" % IDLE_MOMENTS[moment],
                            "%s %s; redis-server 7.0 %s" % (a_label([a]), fig(a), fig(b)),
                            dict(base, config=cfg), cmd, run.rel(bench)))
            rows.append(Row("F0.44", "idle connection memory, %s: soloist / redis-server 7.0" % IDLE_MOMENTS[moment],
                            "**%s**%s" % (fmt_ratio(ratio), " (%s)" % one[2:] if one else ""),
                            dict(base, config=cfg), cmd, run.rel(bench)))
        if "valkey" in sides:
            v = sides["valkey"]
            vcfg = cfg + ["Valkey built from source (%s)" % v.get("valkey_version")]
            rows.append(Row("F0.%d" % (57 if moment == "connected" else 58),
                            "idle connection memory, %s: soloist / Valkey (2024 tree)" % IDLE_MOMENTS[moment],
                            "**%s** (Valkey %s B per connection, RSS %.1f → %.1f MB%s)" % (
                                fmt_ratio(a["bytes_per_conn"] / v["bytes_per_conn"]),
                                "{:,.0f}".format(v["bytes_per_conn"]), v["rss_base_bytes"] / 2**20,
                                v["rss_bytes"] / 2**20, one),
                            dict(base, config=vcfg), cmd, run.rel(bench)))
    return rows
