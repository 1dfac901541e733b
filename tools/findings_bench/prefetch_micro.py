"""findings_bench/prefetch_micro.py — the prefetch_micro benchmark's part of FINDINGS.md.

Tooling for step 6. Owns rows F6.1-F6.19: the linked-list toy and
soloist's hashtable, and the plots prefetch_chains and prefetch_batch,
made from bench/prefetch_micro.c's raw lines; the helpers every benchmark
shares are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

from findings_core import (
    base_conditions, field_runs, fmt_ratio, fmt_rps, median_of, one_run_id, plot, Row, runs_spread, separation,
    verdict)


# ------------------------------------------------ step 6: prefetch_micro

def pm_runs(lines, part, **match):
    """bench/prefetch_micro.c's run lines of one part whose fields equal match."""
    return [ln for ln in lines if ln.get("kind") == "run" and ln.get("part") == part
            and all(ln.get(k) == v for k, v in match.items())]


def mib(n):
    return "%.0f MiB" % (n / 1048576) if n >= 1048576 else "%.0f KiB" % (n / 1024)


def residency(ln):
    """Where a table of ln's size lives, from the cache sizes the line carries."""
    b, l2, l3 = ln["table_bytes"], ln.get("l2_bytes") or 0, ln.get("l3_bytes") or 0
    if l2 and b <= l2:
        return "L2-resident"
    if l3 and b <= l3 / 2:
        return "L3-resident"
    if l3 and b >= 1.5 * l3:
        return "DRAM-resident, %.1f× the last-level cache" % (b / l3)
    return "about the size of the last-level cache"


# Long: F6.1-F6.19 read one run's lines, each part's rows its part's medians.
def h_prefetch_micro(run, lines, bench):
    """Rows F6.1-F6.19 from bench/prefetch_micro.c's run lines."""
    base = base_conditions(run)
    cmd, src = "make findings BENCH=prefetch_micro", run.rel(bench)
    rows = []

    def row(rid, claim, fig, cfg, note=""):
        rows.append(Row(rid, claim, fig, dict(base, config=cfg), cmd, src, note))

    def med(side, field):
        return median_of(side, field)

    def runs_of(side, field):
        return "/".join("%.1f" % x[field] for x in side)

    # -- the linked-list toy (F6.1-F6.8)
    ch = pm_runs(lines, "chains", pages="4K")
    if ch:
        seq = [x for x in ch if x["method"] == "sequential"]
        il16 = [x for x in ch if x["method"] == "interleaved" and x["chains"] == 16]
        pf = [x for x in ch if x["method"] == "prefetch" and x["chains"] == 16]
        one_run_id({"sequential": seq, "interleaved": il16, "prefetch": pf}, "chains", "prefetch_micro")
        ln = seq[0]
        sets = ln.get("sets", 1)
        ccfg = ["%d lists of %s nodes of 64 B in one shuffled order over a %s arena (last-level cache %s)"
                % (32, fmt_rps(ln["nodes"] // 32), mib(ln["arena_bytes"]), mib(ln.get("l3_bytes") or 0)),
                "%d disjoint sets of lists walked in turn, each walk every node of its set" % sets
                if sets > 1 else "every walk visits every node",
                "4 KiB pages (madvise MADV_NOHUGEPAGE)",
                "%d runs, median, methods alternated" % len(seq)]
        s, i16, p16 = med(seq, "ns_per_node"), med(il16, "ns_per_node"), med(pf, "ns_per_node")
        row("F6.1", "linked-list toy, one list after another (each load waits for the last): ns per node",
            "**%.1f ns/node** (runs %s)" % (s, runs_of(seq, "ns_per_node")), ccfg)
        row("F6.2", "linked-list toy, 16 lists interleaved (one step of each in turn): ns per node",
            "**%.1f ns/node** (runs %s)" % (i16, runs_of(il16, "ns_per_node")), ccfg)
        row("F6.3", "linked-list toy, 16 lists interleaved with __builtin_prefetch of each next node: ns per node",
            "**%.1f ns/node** (runs %s)" % (p16, runs_of(pf, "ns_per_node")), ccfg)
        row("F6.4", "16 lists interleaved with prefetch against one list after another: how many times faster "
            "(target ≥ 10×)",
            "**%s** (%.1f / %.1f ns/node; %s) — target %s"
            % (fmt_ratio(s / p16), s, p16,
               separation([x["ns_per_node"] for x in pf], [x["ns_per_node"] for x in seq],
                          ("prefetch", "sequential")),
               "met" if s / p16 >= 10 else "not met"), ccfg)
        row("F6.5", "what the prefetch instruction adds to interleaving alone, 16 lists",
            "**%s** (interleaved %.1f / with prefetch %.1f ns/node; %s)"
            % (fmt_ratio(i16 / p16), i16, p16,
               separation([x["ns_per_node"] for x in pf], [x["ns_per_node"] for x in il16],
                          ("prefetch", "interleaved"))), ccfg)
        ks = sorted({x["chains"] for x in ch if x["method"] != "sequential"})
        by = {(m, k): med([x for x in ch if x["method"] == m and x["chains"] == k], "ns_per_node")
              for m in ("interleaved", "prefetch") for k in ks}
        best = min(by.values())
        knee = min(k for k in ks if min(by[("interleaved", k)], by[("prefetch", k)]) <= 1.1 * best)
        row("F6.6", "linked-list toy: ns per node by lists in flight (interleaved / with prefetch); where more "
            "lists stop paying",
            "1: %.1f; %s; within 10%% of the best (%.1f ns/node, %s) from **%d lists** on"
            % (s, "; ".join("%d: %.1f / %.1f" % (k, by[("interleaved", k)], by[("prefetch", k)]) for k in ks),
               best, runs_spread(field_runs([x for x in ch if (x["method"], x["chains"]) == min(by, key=by.get)],
                                            "ns_per_node")), knee), ccfg)
    hp = pm_runs(lines, "chains", pages="2M")
    if hp and ch:
        hseq = [x for x in hp if x["method"] == "sequential"]
        hpf = [x for x in hp if x["method"] == "prefetch" and x["chains"] == 16]
        one_run_id({"2M sequential": hseq, "2M prefetch": hpf, "4K sequential": seq}, "chains pages",
                   "prefetch_micro")
        hs, hp16 = med(hseq, "ns_per_node"), med(hpf, "ns_per_node")
        got = max(x["anon_huge_kb"] for x in hp)
        hcfg = ["the same arena on 2 MiB pages (madvise MADV_HUGEPAGE; %s of huge pages obtained)"
                % mib(got * 1024), "%d runs, median" % len(hseq)]
        ns_seq, ns_hseq, ns_hpf = (field_runs(x, "ns_per_node") for x in (seq, hseq, hpf))
        row("F6.7", "linked-list toy on 2 MiB pages: one list after another, and 16 lists with prefetch",
            "**%.1f ns/node** sequential, **%.1f ns/node** with 16 lists and prefetch: %s (runs %s sequential, "
            "%s with prefetch; %s)"
            % (hs, hp16, fmt_ratio(hs / hp16), runs_of(hseq, "ns_per_node"), runs_of(hpf, "ns_per_node"),
               verdict(ns_hpf, ns_hseq, ("prefetch", "sequential"), lower=True)),
            hcfg + ([] if got else ["NO huge pages obtained"]))
        row("F6.8", "what 4 KiB pages cost a dependent miss: one list after another, 4 KiB pages against 2 MiB",
            "**%s** (%.1f / %.1f ns/node; %s)" % (fmt_ratio(s / hs), s, hs,
                                                  verdict(ns_hseq, ns_seq, ("2 MiB", "4 KiB"), lower=True)), hcfg)

    # -- soloist's hashtable (F6.9-F6.19)
    for thp in ("off", "on"):
        # "off_unavailable": prctl refused, so the pass ran with the THP mode's default.
        tb = [x for x in pm_runs(lines, "table") if x.get("thp") in (thp, thp + "_unavailable")]
        if not tb:
            continue
        big = max(x["keys"] for x in tb)
        t = [x for x in tb if x["keys"] == big]
        find = [x for x in t if x["method"] == "find"]
        b = {}
        for x in t:
            if x["method"] == "batch":
                b.setdefault(x["batch"], []).append(x)
        one_run_id({"find": find, "batch 16": b.get(16, [])}, "table thp %s" % thp, "prefetch_micro")
        ln = find[0]
        huge = max(x["anon_huge_kb"] for x in t)
        pages = ("transparent huge pages off for the process (prctl PR_SET_THP_DISABLE)" if ln["thp"] == "off" else
                 "THP COULD NOT BE DISABLED (prctl refused; THP mode %s)" % ln.get("thp_mode") if thp == "off" else
                 "malloc asked for huge pages (GLIBC_TUNABLES glibc.malloc.hugetlb=1; THP mode %s), %s of "
                 "huge pages obtained" % (ln.get("thp_mode"), mib(huge * 1024)))
        tcfg = ["%s keys, %s of buckets and entries (%s; last-level cache %s)"
                % (fmt_rps(big), mib(ln["table_bytes"]), residency(ln), mib(ln.get("l3_bytes") or 0)),
                "%s hits in random order per measurement" % fmt_rps(ln["lookups"]), pages,
                "%d runs, median, methods alternated" % len(find)]
        f, b16 = med(find, "ns_per_lookup"), med(b[16], "ns_per_lookup")
        curve = {n: med(side, "ns_per_lookup") for n, side in b.items()}
        best = min(curve.values())
        knee = min(n for n in curve if curve[n] <= 1.1 * best)
        curve_text = ("%s; within 10%% of the best (%.1f ns/lookup, %s, %s the find) from **batch %d** on"
                      % ("; ".join("%d: %.1f" % (n, curve[n]) for n in sorted(curve)), best,
                         runs_spread(field_runs(b[min(curve, key=curve.get)], "ns_per_lookup")),
                         fmt_ratio(f / best), knee))
        if thp == "off":
            row("F6.9", "soloist's hashtable, the largest table, hashtable_find one key after another: ns per lookup",
                "**%.1f ns/lookup** (runs %s)" % (f, runs_of(find, "ns_per_lookup")), tcfg)
            row("F6.10", "the same lookups as batches of 16 resumable finds stepped round robin: ns per lookup",
                "**%.1f ns/lookup** (runs %s)" % (b16, runs_of(b[16], "ns_per_lookup")), tcfg)
            row("F6.11", "batches of 16 resumable finds against hashtable_find, largest table: how many times "
                "faster (target ≥ 4× on a DRAM-resident table)",
                "**%s** (%.1f / %.1f ns/lookup; %s) — target %s"
                % (fmt_ratio(f / b16), f, b16,
                   separation([x["ns_per_lookup"] for x in b[16]], [x["ns_per_lookup"] for x in find],
                              ("batch 16", "find")),
                   ("met" if f / b16 >= 4 else "not met") if residency(ln).startswith("DRAM")
                   else "not judged: the table is %s" % residency(ln)), tcfg)
            row("F6.12", "ns per lookup by batch size, largest table: where this machine's memory-level "
                "parallelism runs out", curve_text, tcfg)
            row("F6.13", "a batch of one resumable find against hashtable_find: the state machine's cost with "
                "nothing to overlap",
                "**%s** (%.1f / %.1f ns/lookup; batch of one runs %s; %s)"
                % (fmt_ratio(curve[1] / f), curve[1], f, runs_of(b[1], "ns_per_lookup"),
                   verdict(field_runs(find, "ns_per_lookup"), field_runs(b[1], "ns_per_lookup"),
                           ("find", "batch of one"), lower=True)), tcfg)
            pff = [x for x in t if x["method"] == "prefetch_find"]
            if pff:
                p = med(pff, "ns_per_lookup")
                row("F6.14", "Valkey's pattern: a batch of 16 resumable finds, then each key's own hashtable_find "
                    "on warm lines: ns per lookup and against the find alone",
                    "**%.1f ns/lookup** (runs %s), %s faster than hashtable_find alone (%.1f; %s); the second "
                    "find adds %.1f ns/lookup to the batch's %.1f"
                    % (p, runs_of(pff, "ns_per_lookup"), fmt_ratio(f / p), f,
                       verdict(field_runs(pff, "ns_per_lookup"), field_runs(find, "ns_per_lookup"),
                               ("batch then find", "find"), lower=True), p - b16, b16), tcfg)
            for rid, want in (("F6.15", "L2-resident"), ("F6.16", "L3-resident")):
                sizes = sorted({x["keys"] for x in tb if residency(x) == want})
                if not sizes:
                    row(rid, "batches of 16 against hashtable_find on a %s table" % want,
                        "**not measured**: no table size of this run fits that level (L2 %s, last-level "
                        "cache %s)" % (mib(ln.get("l2_bytes") or 0), mib(ln.get("l3_bytes") or 0)), tcfg[1:])
                    continue
                k = sizes[-1]
                sf = [x for x in tb if x["keys"] == k and x["method"] == "find"]
                s16 = [x for x in tb if x["keys"] == k and x["method"] == "batch" and x["batch"] == 16]
                a, c = med(sf, "ns_per_lookup"), med(s16, "ns_per_lookup")
                row(rid, "batches of 16 against hashtable_find on a %s table" % want,
                    "**%s** (%.1f / %.1f ns/lookup; runs find %s, batch 16 %s; %s)"
                    % (fmt_ratio(a / c), a, c, runs_of(sf, "ns_per_lookup"), runs_of(s16, "ns_per_lookup"),
                       separation([x["ns_per_lookup"] for x in s16],
                                  [x["ns_per_lookup"] for x in sf], ("batch 16", "find"))),
                    ["%s keys, %s (%s; L2 %s, last-level cache %s)"
                     % (fmt_rps(k), mib(sf[0]["table_bytes"]), want, mib(sf[0].get("l2_bytes") or 0),
                        mib(sf[0].get("l3_bytes") or 0))] + tcfg[1:])
        else:
            row("F6.17", "with huge pages, largest table: hashtable_find, batches of 16, and the speed-up",
                "**%.1f** and **%.1f ns/lookup** (runs %s and %s): %s (%s)"
                % (f, b16, runs_of(find, "ns_per_lookup"), runs_of(b[16], "ns_per_lookup"), fmt_ratio(f / b16),
                   verdict(field_runs(b[16], "ns_per_lookup"), field_runs(find, "ns_per_lookup"),
                           ("batch 16", "find"), lower=True)),
                tcfg + ([] if huge else ["NO huge pages obtained: the row measures 4 KiB pages"]))
            row("F6.19", "ns per lookup by batch size with huge pages, largest table", curve_text, tcfg)
            offs = [x for x in pm_runs(lines, "table", thp="off") if x["keys"] == big and x["method"] == "find"]
            if offs:
                one_run_id({"off": offs, "on": find}, "table thp on/off", "prefetch_micro")
                o = med(offs, "ns_per_lookup")
                row("F6.18", "what 4 KiB pages cost hashtable_find on the largest table: THP off against on",
                    "**%s** (%.1f / %.1f ns/lookup; %s)"
                    % (fmt_ratio(o / f), o, f, verdict(field_runs(find, "ns_per_lookup"),
                                                       field_runs(offs, "ns_per_lookup"),
                                                       ("THP on", "THP off"), lower=True)), tcfg)
    for ln in lines:
        if ln.get("kind") == "skipped" and ln.get("thp") == "on":
            for rid in ("F6.17", "F6.18", "F6.19"):
                row(rid, "soloist's hashtable with huge pages", "**not measured**: %s" % ln.get("why"),
                    ["thp on"])
    return rows


@plot("prefetch_chains", "prefetch_micro",
      "Linked-list toy: ns per node by lists in flight, 4 KiB pages (1 = one list after another)")
def p_prefetch_chains(lines):
    ch = pm_runs(lines, "chains", pages="4K")
    seq = [x for x in ch if x["method"] == "sequential"]
    if not seq:
        return ["lists", "interleaved_ns", "prefetch_ns"], [], ""
    s = round(median_of(seq, "ns_per_node"), 3)
    rows = [(1, s, s)]
    for k in sorted({x["chains"] for x in ch if x["method"] != "sequential"}):
        rows.append((k,) + tuple(round(median_of([x for x in ch if x["method"] == m and x["chains"] == k],
                                                 "ns_per_node"), 3) for m in ("interleaved", "prefetch")))
    body = ("set logscale x 2; set logscale y 10; set xrange [0.8:40]; set xtics (1, 2, 4, 8, 16, 32); "
            "set xlabel 'lists walked at once (independent loads in flight)'; "
            "set ylabel 'ns per node (median of runs, log scale)'; set grid; set key top right; "
            "plot DATA using 1:2 with linespoints lw 2 pt 7 lc rgb '#3b5b92' title 'interleaved', "
            "'' using 1:3 with linespoints lw 2 pt 5 lc rgb '#a23b2a' title 'interleaved + prefetch'")
    return ["lists", "interleaved_ns", "prefetch_ns"], rows, body


@plot("prefetch_batch", "prefetch_micro",
      "soloist's hashtable: ns per lookup by batch of resumable finds, per table size (THP off)")
def p_prefetch_batch(lines):
    tb = [x for x in pm_runs(lines, "table") if x.get("thp") in ("off", "off_unavailable")]
    sizes = sorted({x["keys"] for x in tb})
    batches = sorted({x["batch"] for x in tb if x["method"] == "batch"})
    rows = []
    for n in batches:
        rows.append([n] + [round(median_of([x for x in tb if x["keys"] == k and x["method"] == "batch"
                                            and x["batch"] == n], "ns_per_lookup"), 3) for k in sizes])
    names = []
    for k in sizes:
        ln = next(x for x in tb if x["keys"] == k)
        level = residency(ln).split("-")[0].split(",")[0]  # "L2", "L3", "DRAM" or the long form
        names.append("%s keys, %s (%s)" % (fmt_rps(k), mib(ln["table_bytes"]), level))
    colors = ("#bbbbbb", "#999999", "#6fa3c7", "#3b5b92", "#a23b2a", "#6b1d12", "#222222")
    body = ("set logscale x 2; set logscale y 10; set xrange [0.8:160]; set xtics (1, 2, 4, 8, 16, 32, 64, 128); "
            "set xlabel 'resumable finds stepped round robin (batch size)'; "
            "set ylabel 'ns per lookup (median of runs, log scale)'; set grid; set key top right font ',9'; "
            "plot " + ", ".join("%s using 1:%d with linespoints lw 2 lc rgb '%s' title '%s'"
                                % ("DATA" if i == 0 else "''", i + 2, colors[i % len(colors)], names[i])
                                for i in range(len(sizes))))
    return ["batch"] + ["keys_%d_ns" % k for k in sizes], rows, body
