"""findings_bench/zset_memory.py — the zset_memory benchmark's part of FINDINGS.md.

Tooling for step 8. Owns rows F8.1-F8.37: bytes per member, inserts and
range queries per layout, for redis-server 7.0 and for Valkey (F8.7, F8.8,
F8.16, F8.17, F8.26, F8.27, F8.36, F8.37, when the run measured it), and
the plot zset_bytes_per_member, made from bench/zset_memory.py's raw
lines; the helpers every benchmark shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import base_conditions, fmt_ratio, ONE_RUN, plot, Refused, Row


# ------------------------------------------- step 8: the sorted set (F8)

ZSET_SIDES = [("copied", "soloist, zset-layout copied"), ("node-pointer", "soloist, zset-layout node-pointer"),
              ("embedded", "soloist, zset-layout embedded"), ("dense", "soloist, zset-layout dense (default)"),
              ("redis-server", "redis-server 7.0"), ("valkey", "Valkey (2024 tree)")]
# Each side's row in the four families (bytes per member, inserts, ZRANGE
# by rank, by score): the five first sides number 1-5 in each, and Valkey,
# added later, takes 7 (6 is each family's dense / redis-server ratio, 8
# its dense / Valkey).
ZSET_SLOT = {k: (7 if k == "valkey" else i + 1) for i, (k, _) in enumerate(ZSET_SIDES)}


def zset_runs(lines):
    """{layout: {"add": [lines by n], "rank": line, "score": line}} from one run."""
    runs = [ln for ln in lines if ln.get("kind") == "run"]
    ids = {ln.get("run_id") for ln in runs}
    if len(ids) != 1 or None in ids:
        raise Refused("zset_memory: lines from several runs %s; ratios need one run" % sorted(map(str, ids)))
    out = {}
    for ln in runs:
        d = out.setdefault(ln["layout"], {"add": []})
        if ln["op"] == "add":
            d["add"].append(ln)
        else:
            d[ln["op"]] = ln
    for d in out.values():
        d["add"].sort(key=lambda ln: ln["n"])
    return out


def zset_valkey_version(lines):
    """The Valkey build a run measured (its --version line), or None."""
    return next((ln.get("version") for ln in lines if ln.get("kind") == "peer" and ln.get("server") == "valkey"),
                None)


def zset_insert_rate(adds, field="inserts_per_s"):
    """Members per second over every segment together (total / total time)."""
    if any(not ln.get(field) for ln in adds):
        return None
    return adds[-1]["n"] / sum((ln["n"] - ln["segment_from"]) / ln[field] for ln in adds)


def fmt_count(n):
    return "%gM" % (n / 1e6) if n >= 1e6 else "%gk" % (n / 1e3)


# Long: F8.1-F8.35 share the sides, the sizes and the config.
def h_zset_memory(run, lines, bench):
    """bench/zset_memory.py: bytes per member, inserts/s and range-query
    rates per layout and for redis-server 7.0 (F8.1-F8.35)."""
    base = base_conditions(run)
    sides = zset_runs(lines)
    if "redis-server" not in sides or "dense" not in sides:
        raise Refused("zset_memory: a comparison needs dense and redis-server from the same run")
    ref = sides["dense"]["add"]
    sizes = [ln["n"] for ln in ref]
    both = sorted(set(sizes) & {ln["n"] for ln in sides["redis-server"]["add"]})
    if not both:
        raise Refused("zset_memory: dense and redis-server reached no size in common")
    cfg = ["ZADD z NX i m:i, i = 0..N-1, integer scores, one connection, %d commands per write"
           % ref[0]["window"], "sizes %s" % ", ".join(fmt_count(n) for n in sizes),
           "fresh server per side, one after the other", "used_memory: allocator usable sizes "
           "(soloist: glibc malloc; redis-server: jemalloc)"]
    cmd, src = "make findings BENCH=zset_memory", run.rel(bench)
    rows = []
    top = both[-1]

    def bpm(layout):
        return {ln["n"]: ln["bytes_per_member"] for ln in sides[layout]["add"]}

    # bench/zset_memory.py loads each side once (one line per size and query
    # kind): every figure here is one run's, with no spread to give.
    one = " (%s)" % ONE_RUN
    targets = {"embedded": " (target ≤ 60)", "dense": " (target ≤ 40)"}
    vk = zset_valkey_version(lines)
    valkey = "valkey" in sides and {ln["n"] for ln in sides["valkey"]["add"]} >= {top}
    if valkey:
        cfg = cfg + ["Valkey built from source (%s), jemalloc" % vk]
    for layout, label in ZSET_SIDES:
        if layout not in sides:
            continue
        b = bpm(layout)
        rows.append(Row("F8.%d" % ZSET_SLOT[layout], "bytes per sorted-set member%s: %s"
                        % (targets.get(layout, ""), label),
                        ", ".join("%s **%.1f B**" % (fmt_count(n), b[n]) for n in sizes if n in b) + one,
                        dict(base, config=cfg), cmd, src))
    rows.append(Row("F8.6", "bytes per member at %s: dense / redis-server 7.0" % fmt_count(top),
                    "**%s**%s" % (fmt_ratio(bpm("dense")[top] / bpm("redis-server")[top]), one),
                    dict(base, config=cfg), cmd, src))
    if valkey:
        rows.append(Row("F8.8", "bytes per member at %s: dense / Valkey (2024 tree)" % fmt_count(top),
                        "**%s**%s" % (fmt_ratio(bpm("dense")[top] / bpm("valkey")[top]), one),
                        dict(base, config=cfg), cmd, src))
    rcfg = cfg + ["rate: members / wall seconds of the load over all sizes; per CPU s: over the server's own CPU"]

    def adds(layout):  # the segments up to the size every compared side reached
        return [ln for ln in sides[layout]["add"] if ln["n"] <= top]

    for layout, label in ZSET_SIDES:
        if layout not in sides or not adds(layout) or adds(layout)[-1]["n"] != top:
            continue
        wall, cpu = zset_insert_rate(adds(layout)), zset_insert_rate(adds(layout), "inserts_per_cpu_s")
        rows.append(Row("F8.%d" % (ZSET_SLOT[layout] + 9), "ZADD NX inserts per second to %s members: %s"
                        % (fmt_count(top), label),
                        "**%s/s** (%s%s)" % ("{:,.0f}".format(wall), "" if cpu is None else
                                             "%s per server CPU second; " % "{:,.0f}".format(cpu), ONE_RUN),
                        dict(base, config=rcfg), cmd, src))
    for rid, peer, label, target in (("F8.15", "redis-server", "redis-server 7.0", " (target ≥ 1.0×)"),
                                     ("F8.17", "valkey", "Valkey (2024 tree)", "")):
        if peer not in sides or not adds(peer) or adds(peer)[-1]["n"] != top:
            continue
        cpu_d, cpu_r = (zset_insert_rate(adds(k), "inserts_per_cpu_s") for k in ("dense", peer))
        rows.append(Row(rid, "ZADD NX inserts per second: dense / %s%s" % (label, target),
                        "**%s** by wall time%s%s" % (
                            fmt_ratio(zset_insert_rate(adds("dense")) / zset_insert_rate(adds(peer))),
                            "" if not (cpu_d and cpu_r) else "; %s per server CPU second" % fmt_ratio(cpu_d / cpu_r),
                            one),
                        dict(base, config=rcfg), cmd, src,
                        "wall time includes the client and whatever else the machine ran; the server's CPU time "
                        "does not"))
    for op, first, what in (("rank", 20, "ZRANGE z r r+9 (by rank)"),
                            ("score", 30, "ZRANGE z s +inf BYSCORE LIMIT 0 10 (by score)")):
        if op not in sides["dense"] or op not in sides["redis-server"]:
            continue  # the run stopped before its queries
        qcfg = cfg + ["%d queries, r / s random, on the full set" % sides["dense"][op]["queries"]]
        for layout, label in ZSET_SIDES:
            if layout not in sides or op not in sides[layout]:
                continue
            rows.append(Row("F8.%d" % (first + ZSET_SLOT[layout] - 1), "%s queries per second on %s members: %s"
                            % (what, fmt_count(top), label),
                            "**%s/s**%s" % ("{:,.0f}".format(sides[layout][op]["queries_per_s"]), one),
                            dict(base, config=qcfg), cmd, src))
        for slot, peer, label, target in ((5, "redis-server", "redis-server 7.0", " (target ≥ 1.0×)"),
                                          (7, "valkey", "Valkey (2024 tree)", "")):
            if peer in sides and op in sides[peer]:
                rows.append(Row("F8.%d" % (first + slot), "%s queries per second: dense / %s%s"
                                % (what, label, target),
                                "**%s**%s" % (fmt_ratio(sides["dense"][op]["queries_per_s"] /
                                                        sides[peer][op]["queries_per_s"]), one),
                                dict(base, config=qcfg), cmd, src))
    return rows


@plot("zset_bytes_per_member", "zset_memory", "Bytes per sorted-set member by layout and size, ZADD NX of m:{i}")
def p_zset_bytes_per_member(lines):
    sides = zset_runs(lines)
    order = [(k, label) for k, label in ZSET_SIDES if k in sides]
    sizes = [ln["n"] for ln in sides[order[0][0]]["add"]]
    rows = []
    for n in sizes:
        row = ['"%s members"' % fmt_count(n)]
        for k, _ in order:
            b = {ln["n"]: ln["bytes_per_member"] for ln in sides[k]["add"]}
            row.append(b.get(n, "NaN"))
        rows.append(row)
    colours = ["#999999", "#d98b3a", "#7a4f9a", "#a23b2a", "#3b5b92", "#2f7d4f"]
    series = ["%s using %d%s title '%s' lc rgb '%s'" % ("DATA" if i == 0 else "''", i + 2,
                                                         ":xtic(1)" if i == 0 else "", label, colours[i % 6])
              for i, (_, label) in enumerate(order)]
    body = ("set datafile missing 'NaN'; set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set yrange [0:*]; "
            "set ylabel 'bytes per member (used_memory growth / members)'; set grid y; "
            "set key outside right top vertical; plot " + ", ".join(series))
    return ["size"] + [k for k, _ in order], rows, body
