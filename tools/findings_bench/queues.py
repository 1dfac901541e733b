"""findings_bench/queues.py — the queues benchmark's part of FINDINGS.md.

Tooling for steps 2 and 3. Owns rows F2.1-F2.14 and F3.1-F3.8: the rings
beside ck_ring and a mutex, the idle pool, slot width, layout and cache
lines; and the plots queues_ns_per_item and batch_size, made from
bench/queues.c's raw lines; the helpers every benchmark shares are in
tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import (
    base_conditions, field_runs, fmt_ratio, fmt_rps, median_of, one_run_id, plot, Row, runs_spread, separation)


# ------------------------------------------- the queues of steps 2-3 (F2, F3)

def queue_runs(lines, test, **match):
    """bench/queues.c's run lines of one test whose fields equal match."""
    return [ln for ln in lines if ln.get("kind") == "run" and ln.get("test") == test
            and all(ln.get(k) == v for k, v in match.items())]


def ns_runs(side):
    return "/".join("%.1f" % ln["ns_per_item"] for ln in side)


def speed_sep(a, b):
    """Whether soloist's runs (a) and the other side's (b) separate, by ns/item."""
    return separation([x["ns_per_item"] for x in a], [x["ns_per_item"] for x in b],
                      ("soloist", "ck_ring")).replace("lower", "faster")


def queue_cfg(ln, extra=()):
    cfg = ["%d producer%s, %d consumer%s" % (ln["producers"], "s" * (ln["producers"] > 1),
                                            ln["consumers"], "s" * (ln["consumers"] > 1)),
           "%d threads on %d cores%s" % (ln["threads"], ln["cores"],
                                         ": OVERSUBSCRIBED" if ln.get("oversubscribed") else ""),
           ln.get("pinning", "not pinned"), "waiting: %s" % ln.get("wait", "spin"),
           "capacity %s" % ln["capacity"],
           "%s items per run" % fmt_rps(ln["items"])]
    return cfg + list(extra)


# Long: F2 and F3's rows read one run's lines; each commented block is one part.
def h_queues(run, lines, bench):
    """Rows F2.1-F2.14 and F3.1-F3.8 from bench/queues.c's run lines."""
    base = base_conditions(run)
    cmd, src = "make findings BENCH=queues", run.rel(bench)
    rows = []

    def row(rid, claim, fig, cfg, note=""):
        rows.append(Row(rid, claim, fig, dict(base, config=cfg), cmd, src, note))

    def ns(side):
        return median_of(side, "ns_per_item")

    def runs_cfg(side, order_of=None):
        text = "%d runs, median%s" % (len(side), ", alternated with %s" % order_of if order_of else "")
        if all("preempted" in x for x in side):
            # Another process taking a pinned thread's core shows here.
            text += "; threads preempted %s times in the runs" % "/".join(str(x["preempted"]) for x in side)
        return text

    # One line handed between the cores (F3.8): the floor F2.4 is read against.
    hand = queue_runs(lines, "handoff")
    hand_ns = median_of(hand, "ns_one_way") if hand else None

    # SPSC: commit batches, ck_ring, mutex (F2.1-F2.4, F2.11).
    spsc = {"batched": queue_runs(lines, "spsc", impl="soloist", commit_batch=32),
            "per-item": queue_runs(lines, "spsc", impl="soloist", commit_batch=1),
            "ck_ring": queue_runs(lines, "spsc", impl="ck_ring")}
    if any(spsc.values()):
        one_run_id(spsc, "SPSC")
        b, one, ck = spsc["batched"], spsc["per-item"], spsc["ck_ring"]
        deq = "consumer takes up to %d per call" % b[0]["dequeue_batch"]
        row("F2.1", "SPSC ring, commit per 32 items: ns per item, producer and consumer on different cores",
            "**%.2f ns/item** (runs %s)" % (ns(b), ns_runs(b)),
            queue_cfg(b[0], ["commit every 32 items", deq, runs_cfg(b, "ck_ring and the other batch sizes")]))
        row("F2.2", "SPSC ring, commit per item: ns per item",
            "**%.2f ns/item** (runs %s)" % (ns(one), ns_runs(one)),
            queue_cfg(one[0], ["commit after every item", deq, runs_cfg(one, "ck_ring")]))
        row("F2.3", "ck_ring SPSC (Concurrency Kit): ns per item, same capacity and item count",
            "**%.2f ns/item** (runs %s)" % (ns(ck), ns_runs(ck)),
            queue_cfg(ck[0], ["ck_ring_enqueue_spsc / ck_ring_dequeue_spsc, one item per call",
                              "ck_ring holds size - 1 items", runs_cfg(ck, "soloist")]))
        ratio = ns(ck) / ns(b)
        met = ratio >= 3.0 and ns(b) <= 1.5
        floor = ("; one hand-off of a line between the cores takes %.1f ns (F3.8), so a batch of 32 "
                 "that the consumer takes as soon as it is published costs at least %.2f ns/item"
                 % (hand_ns, hand_ns / 32) if hand_ns else "")
        row("F2.4", "SPSC batched against ck_ring SPSC: how many times faster (target ≥ 3×, and ≤ 1.5 ns/item)",
            "**%s** (ck_ring %.2f / soloist %.2f ns/item; %s); %.2f ns/item against the 1.5 ns target "
            "— target %s%s" % (fmt_ratio(ratio), ns(ck), ns(b), speed_sep(b, ck), ns(b),
                               "met" if met else "not met", floor),
            queue_cfg(b[0], ["soloist commits every 32 items", "medians of runs alternated in one run"]))
        mutex = queue_runs(lines, "spsc", impl="mutex_condvar")
        if mutex:
            row("F2.11", "mutex + condition variable ring (the baseline), 1 producer, 1 consumer: ns per item",
                "**%.1f ns/item** (runs %s); %s the SPSC ring's batched figure (%s)"
                % (ns(mutex), ns_runs(mutex), fmt_ratio(ns(mutex) / ns(b)),
                   separation([x["ns_per_item"] for x in b], [x["ns_per_item"] for x in mutex],
                              ("the SPSC ring", "mutex + condvar"))),
                queue_cfg(mutex[0], ["one item per lock, signalled on empty → non-empty and full → non-full",
                                     runs_cfg(mutex, "the SPSC runs")]))

    # SPMC (F2.5-F2.7) and MPSC (F2.8-F2.10): the thread count the cores
    # allow, and the oversubscribed variant beside it.
    for test, first, who in (("spmc", 5, "1 producer, 2 consumers"), ("mpsc", 8, "2 producers, 1 consumer")):
        fits = queue_runs(lines, test, oversubscribed=False)
        over = queue_runs(lines, test, oversubscribed=True)
        if not fits and not over:
            continue
        main = fits or over
        sides = {"soloist": [x for x in main if x["impl"] == "soloist"],
                 "ck_ring": [x for x in main if x["impl"] == "ck_ring"]}
        one_run_id(sides, test.upper())
        a, c = sides["soloist"], sides["ck_ring"]
        ln = a[0]
        shape = "%d producer%s, %d consumer%s" % (ln["producers"], "s" * (ln["producers"] > 1),
                                                 ln["consumers"], "s" * (ln["consumers"] > 1))
        limited = "" if shape == who else " (%s would oversubscribe the %d cores: that figure beside, labelled)" % (
            who, ln["cores"])
        osides = {}
        if over and fits:
            osides = {"soloist": [x for x in over if x["impl"] == "soloist"],
                      "ck_ring": [x for x in over if x["impl"] == "ck_ring"]}
            one_run_id(osides, test.upper() + " oversubscribed")
        extra_a = extra_c = extra_r = ""
        if osides:
            oa, oc = osides["soloist"], osides["ck_ring"]
            o = oa[0]
            label = "; OVERSUBSCRIBED %d+%d threads on %d cores: " % (o["producers"], o["consumers"], o["cores"])
            extra_a = label + "%.1f ns/item (runs %s)" % (ns(oa), ns_runs(oa))
            extra_c = label + "%.1f ns/item (runs %s)" % (ns(oc), ns_runs(oc))
            extra_r = label + "%s (%s)" % (fmt_ratio(ns(oc) / ns(oa)), speed_sep(oa, oc))
        calls = ("spmc_enqueue / spmc_dequeue, one item per call" if test == "spmc" else
                 "mpsc_enqueue (ticket, retried when full) / mpsc_dequeue_batch of up to %d"
                 % ln["dequeue_batch"])
        ckcalls = "ck_ring_enqueue_%s / ck_ring_dequeue_%s, one item per call" % (test, test)
        row("F2.%d" % first, "%s ring, %s%s: ns per item" % (test.upper(), shape, limited),
            "**%.1f ns/item** (runs %s)%s" % (ns(a), ns_runs(a), extra_a),
            queue_cfg(ln, [calls, runs_cfg(a, "ck_ring")]))
        row("F2.%d" % (first + 1), "ck_ring %s, %s: ns per item" % (test.upper(), shape),
            "**%.1f ns/item** (runs %s)%s" % (ns(c), ns_runs(c), extra_c),
            queue_cfg(c[0], [ckcalls, "ck_ring holds size - 1 items", runs_cfg(c, "soloist")]))
        ratio = ns(c) / ns(a)
        row("F2.%d" % (first + 2), "%s against ck_ring %s, %s: how many times faster (target ≥ 1.0×)"
            % (test.upper(), test.upper(), shape),
            "**%s** (ck_ring %.1f / soloist %.1f ns/item; %s) — target %s%s"
            % (fmt_ratio(ratio), ns(c), ns(a), speed_sep(a, c), "met" if ratio >= 1.0 else "not met", extra_r),
            queue_cfg(ln, ["medians of runs alternated in one run"]))

    # The idle pool (F2.12, F2.13, F2.14).
    for rid, state, what in (("F2.12", "parked", "parked (sleeping on their mutex)"),
                             ("F2.13", "active", "active with nothing to do, spinning as long as they are "
                                                 "active (Valkey's workers)"),
                             ("F2.14", "active-sleeps", "active with nothing to do, soloist's default: spin "
                                                        "io-threads-idle-spin-us, then sleep on a futex")):
        side = queue_runs(lines, "pool", state=state)
        if state == "active":
            # Runs made before the pool bench set the idle spin themselves
            # (no idle_spin_us in their lines) measured the workers' own
            # behaviour of that time, not a spin for as long as they are
            # active: they are not this row.
            side = [x for x in side if x.get("idle_spin_us") is not None]
        if not side:
            continue
        ln = side[0]
        pct = median_of(side, "cpu_pct_per_worker")
        row(rid, "an idle io_threads pool, workers %s: CPU per worker" % what,
            "**%.2f%%** of one core per worker (runs %s)"
            % (pct, "/".join("%.2f" % x["cpu_pct_per_worker"] for x in side)),
            ["%d workers, no jobs" % ln["workers"], "%.0f ms of wall time per run" % ln["wall_ms"],
             "CPU from %s" % ln["clock"], "%d cores" % ln["cores"],
             "%d runs, median, the three states alternated" % len(side)]
            + (["idle spin %d µs" % ln["idle_spin_us"]] if ln.get("idle_spin_us") is not None else []),
            "spinning workers share the cores with whatever else runs" if state == "active" else "")

    # Slot width (F3.1-F3.3).
    slots = {"8-byte": queue_runs(lines, "slots", slot_bytes=8),
             "16-byte": queue_runs(lines, "slots", slot_bytes=16)}
    if any(slots.values()):
        one_run_id(slots, "slot width")
        s8, s16 = slots["8-byte"], slots["16-byte"]
        ips = {k: median_of(v, "items_per_s") for k, v in slots.items()}
        cfg = queue_cfg(s8[0], ["the SPSC protocol built in the benchmark with one-word and two-word slots, "
                                "nothing else different", "commit every 32 items",
                                "consumer takes up to 32 per call", "widths alternated, median"])
        row("F3.1", "SPSC protocol with one-word (8-byte) slots: items per second",
            "**%s items/s** (%.2f ns/item; %s)" % (
                fmt_rps(ips["8-byte"]), ns(s8), runs_spread(field_runs(s8, "items_per_s"), fmt_rps, "items/s")), cfg)
        row("F3.2", "SPSC protocol with two-word (16-byte) slots: items per second",
            "**%s items/s** (%.2f ns/item; %s)" % (
                fmt_rps(ips["16-byte"]), ns(s16), runs_spread(field_runs(s16, "items_per_s"), fmt_rps, "items/s")),
            cfg)
        row("F3.3", "one-word against two-word slots: items per second, 8 B / 16 B",
            "**%s** (%s)" % (fmt_ratio(ips["8-byte"] / ips["16-byte"]),
                             separation([x["ns_per_item"] for x in s8], [x["ns_per_item"] for x in s16],
                                        ("8 B", "16 B")).replace("lower", "faster")), cfg)

    # Where the producer's private fields live (F3.5-F3.7).
    lay = {"own line": queue_runs(lines, "layout", producer_fields="own line"),
           "beside tail": queue_runs(lines, "layout", producer_fields="beside tail")}
    if any(lay.values()):
        one_run_id(lay, "layout")
        own, beside = lay["own line"], lay["beside tail"]
        cfg = queue_cfg(own[0], ["the SPSC protocol built in the benchmark, 8-byte slots, nothing else different",
                                 "commit every 32 items", "consumer takes up to 32 per call",
                                 "layouts alternated, %d runs each, median" % len(own)])
        row("F3.5", "SPSC protocol, the producer's tail_local and head_cache on a line of their own "
            "(spsc_queue's layout): ns per item",
            "**%.2f ns/item** (runs %s)" % (ns(own), ns_runs(own)), cfg)
        row("F3.6", "SPSC protocol, tail_local and head_cache beside tail, on the line the consumer polls: "
            "ns per item", "**%.2f ns/item** (runs %s)" % (ns(beside), ns_runs(beside)), cfg)
        row("F3.7", "the producer's fields on their own line against beside tail: how many times faster",
            "**%s** (%.2f / %.2f ns/item; %s)" % (
                fmt_ratio(ns(beside) / ns(own)), ns(beside), ns(own),
                separation([x["ns_per_item"] for x in own], [x["ns_per_item"] for x in beside],
                           ("own line", "beside tail")).replace("lower", "faster")), cfg)

    if hand:
        ln = hand[0]
        row("F3.8", "one cache line handed from one core to the other: ns per one-way hand-off "
            "(ping-pong between two pinned threads, half the round trip)",
            "**%.1f ns** (runs %s; fastest chunk %.1f ns)" % (
                hand_ns, "/".join("%.1f" % x["ns_one_way"] for x in hand),
                min(x["ns_one_way_fastest_chunk"] for x in hand)),
            ["2 threads on %d cores" % ln["cores"], ln["pinning"],
             "%s round trips per run, timed in chunks of %d, each run its median chunk" % (
                 fmt_rps(ln["round_trips"]), ln["chunk"]),
             "spin without pause", "%d runs, median" % len(hand)])

    # Cache lines per item (F3.4).
    per = {"per-item commit": queue_runs(lines, "lines", commit_batch=1),
           "commit per 32": queue_runs(lines, "lines", commit_batch=32)}
    if any(per.values()):
        one_run_id(per, "cache lines")
        one, b = per["per-item commit"], per["commit per 32"]

        def part(side):
            d = {k: statistics.median(x[k] / x["items"] for x in side)
                 for k in ("slot_lines", "tail_loads_new", "head_loads_new")}
            return "%.3f (slots %.3f, tail %.3f, head %.4f)** (%s)" % (
                median_of(side, "computed_lines_per_item"), d["slot_lines"], d["tail_loads_new"],
                d["head_loads_new"], runs_spread(field_runs(side, "computed_lines_per_item"), "%.3f"))
        hw = all(x.get("hw_l1d_read_misses_per_item") is not None for x in one + b)
        fig = "COMPUTED lines moved per item: per-item commit **%s, commit per 32 **%s" % (part(one), part(b))
        if hw:
            fig += "; hardware L1D read misses per item %.3f vs %.3f" % (
                median_of(one, "hw_l1d_read_misses_per_item"), median_of(b, "hw_l1d_read_misses_per_item"))
        else:
            fig += "; hardware counters unavailable (%s)" % one[0].get("hw_unavailable", "?")
        row("F3.4", "cache lines moved between the cores per item: commit per item against commit per 32",
            fig, queue_cfg(b[0], ["counted from the ring's own indices: each slot line a consumer batch reads, "
                                  "each tail the consumer loads that the producer changed, each head the "
                                  "producer loads that the consumer changed",
                                  "consumer takes up to 32 per call", "%d runs each, median" % len(b)]),
            "computed from the indices, not measured by hardware counters" if not hw else "")
    return rows


QUEUE_BARS = (("spsc", "SPSC"), ("spmc", "SPMC"), ("mpsc", "MPSC"))


@plot("queues_ns_per_item", "queues", "ns per item by discipline: soloist, ck_ring, mutex + condvar")
def p_queues_ns_per_item(lines):
    rows = []
    for test, label in QUEUE_BARS:
        for over in (False, True):
            runs = queue_runs(lines, test, oversubscribed=over)
            if not runs:
                continue
            solo = [x for x in runs if x["impl"] == "soloist" and x.get("commit_batch") in (1, 32)
                    and (test != "spsc" or x["commit_batch"] == 32)]
            ck = [x for x in runs if x["impl"] == "ck_ring"]
            mutex = [x for x in runs if x["impl"] == "mutex_condvar"]
            ln = runs[0]
            name = "%s %dP/%dC%s%s" % (label, ln["producers"], ln["consumers"],
                                        ", commit/32" if test == "spsc" else "", " (over)" if over else "")
            rows.append(['"%s"' % name] + [round(median_of(side, "ns_per_item"), 3) if side else "NaN"
                                           for side in (solo, ck, mutex)])
    body = ("set datafile missing 'NaN'; set style data histograms; set style histogram clustered gap 1; "
            "set style fill solid 0.85 border rgb '#ffffff'; set logscale y 10; set yrange [0.5:*]; "
            "set ylabel 'ns per item (median of runs, log scale)'; set grid y; set key outside right top vertical; "
            "set xtics rotate by -20; "
            "plot DATA using 2:xtic(1) title 'soloist' lc rgb '#a23b2a', "
            "'' using 3 title 'ck_ring' lc rgb '#3b5b92', '' using 4 title 'mutex + condvar' lc rgb '#999999'")
    return ["discipline", "soloist_ns", "ck_ring_ns", "mutex_ns"], rows, body


@plot("batch_size", "queues", "SPSC ring: ns per item by commit batch, 1 producer, 1 consumer")
def p_batch_size(lines):
    runs = queue_runs(lines, "spsc", impl="soloist")
    ck = queue_runs(lines, "spsc", impl="ck_ring")
    ck_ns = round(median_of(ck, "ns_per_item"), 3) if ck else "NaN"
    rows = [(b, round(median_of([x for x in runs if x["commit_batch"] == b], "ns_per_item"), 3), ck_ns)
            for b in sorted({x["commit_batch"] for x in runs})]
    body = ("set logscale x 2; set xrange [0.8:40]; set xtics (1, 2, 4, 8, 16, 32); set yrange [0:*]; "
            "set xlabel 'items per commit (one release store of tail per batch)'; "
            "set ylabel 'ns per item (median of runs)'; set grid; set key top right; "
            "plot DATA using 1:2 with linespoints lw 2 pt 7 lc rgb '#a23b2a' title 'soloist SPSC', "
            "'' using 1:3 with lines dt 2 lw 2 lc rgb '#3b5b92' title 'ck_ring SPSC (per item)'")
    return ["commit_batch", "soloist_ns", "ck_ring_ns"], rows, body
