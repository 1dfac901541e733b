"""findings_bench/ignition_timing.py — the ignition_timing benchmark's part of FINDINGS.md.

Tooling for step 5. Owns rows F5.1-F5.7: ignition, scale-down and the idle
server's CPU, and the plot ignition_over_time, made from
bench/ignition_timing.py's raw lines; the helpers every benchmark shares
are in tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import base_conditions, fmt_rps, NotMeasured, ONE_RUN, one_run_of, plot, Row, skipped_why


# Long: F5.1-F5.7 share one config and the step-timing helpers nested in it.
def h_ignition_timing(run, lines, bench):
    """F5.1-F5.5 (ignition and scale-down), F5.6-F5.7 (idle CPU after a
    burst)."""
    base = base_conditions(run)
    one_run_of(lines, "ignition_timing")
    cmd, src = "make findings BENCH=ignition_timing", run.rel(bench)
    steps = [ln for ln in lines if ln.get("kind") == "step"]
    idle = {ln["io_threads"]: ln for ln in lines if ln.get("kind") == "idle"}
    why = "; ".join(skipped_why(lines, has="io_threads")) or "no steps in the results"
    rows = []
    lead = (steps or list(idle.values()) or [{}])[0]
    cfg = ["GET", "P=1", "%s connections" % lead.get("clients", 50), "%s B values" % lead.get("value_size", 3),
           "soloist-bench, 1 thread", "INFO iothreads polled every %g ms on one connection" % lead.get("poll_ms", 5),
           "step times from the generator's start and exit; the server's io_threads_last_change_us "
           "where it falls between the polls that saw the change, else the poll's time"]
    if steps:
        cfg.insert(0, "io-threads %s, default ignition" % steps[0]["io_threads"])
        cfg.append("%g s bursts" % steps[0]["burst_s"])

    def when(ln, what):
        v = ln.get("%s_ms_server" % what)
        return (v, "server") if v is not None else (ln.get("%s_ms_poll" % what), "poll")

    def timing(sel, what, named=False):
        """The median time of the steps in sel, each step's own time beside
        it (the runs' spread), by the server's stamp or else the poll's;
        '(one run)' when one step was timed."""
        # A step that began with threads still active has no ignition to time.
        got = [when(ln, what) + (ln["step"],) for ln in sel if ln.get("%s_ms_poll" % what) is not None
               and (what != "ignition" or ln.get("started_idle", True))]
        if not got:
            return None
        if len(got) == 1:
            v, k, step = got[0]
            return "**%.1f ms**%s, by the %s (%s)" % (
                v, " after the %s step's load" % step if named else "",
                "server's stamp" if k == "server" else "poll's time (no stamp between the polls)", ONE_RUN)
        return "**%.1f ms** median (%s)" % (statistics.median(v for v, _, _ in got), ", ".join(
            "%.1f %s%s" % (v, k, " after the %s step" % step if named else "") for v, k, step in got))

    def off_before_end(ln):
        """Whether an ignited step's threads were off before its load ended:
        the first poll after the end found them off within one poll
        interval, and the server's stamp of that change fell before the
        poll ahead of it (ignition_timing.stamped_ms refused it), so the
        change was seen before the end: during the load."""
        ms = ln.get("scale_down_ms_poll")
        return (ln.get("scaled_down") and ln.get("scale_down_ms_server") is None and ms is not None
                and ms <= ln.get("poll_ms", 5.0))

    def row(rid, claim, fig, extra_cfg=()):
        rows.append(Row(rid, claim, fig, dict(base, config=cfg + list(extra_cfg)), cmd, src))

    if steps:
        high = [ln for ln in steps if ln["step"] == "high"]
        closed = [ln for ln in steps if ln["step"] == "closed"]
        low = [ln for ln in steps if ln["step"] == "low"]
        rate = high[0]["rate"] if high else None

        def ignition(sel):
            fig = timing(sel, "ignition") or "no ignition in %d steps" % len(sel)
            timed = [ln for ln in sel if ln.get("ignition_ms_poll") is not None and ln.get("started_idle", True)]
            if timed and len(timed) < len(sel):
                fig += "; %d of %d steps at this load ignited from idle" % (len(timed), len(sel))
            return fig
        row("F5.1", "time from a step up to %s req/s (open loop) to ignition" % fmt_rps(rate or 0), ignition(high),
            ["%d steps" % len(high)])
        row("F5.2", "time from a step up to a closed loop (as fast as the generator sends) to ignition",
            ignition(closed), ["closed loop at %s req/s" % "/".join(fmt_rps(x["rps"]) for x in closed)])
        ignited = [ln for ln in steps if ln["ignited"]]
        early = [ln for ln in ignited if off_before_end(ln)]
        timed = [ln for ln in ignited if ln not in early]
        fig = timing(timed, "scale_down", named=True) or "no scale-down after a load's end to time"
        for ln in early:
            fig += ("; the %s step's threads were off before its load ended (turned off during the load; "
                    "guard reverts in that step: %s), so it has no scale-down to time: the first poll after "
                    "the end, %.1f ms, found them off" % (ln["step"], ln["counters"].get("io_threads_guard_reverts"),
                                                         ln["scale_down_ms_poll"]))
        late = [ln for ln in timed if not ln.get("scaled_down")]
        if late:
            fig += "; %d of %d ignited steps not scaled down within %g s" % (len(late), len(ignited),
                                                                            late[0]["observe_s"])
        row("F5.3", "time from the end of the load to scale-down: each ignited step's, by the server's stamp of "
            "the change (else the poll's time); a step whose threads went off during its load is named apart, "
            "with no time", fig, ["%d ignited steps" % len(ignited)])
        fig = "; ".join("%s req/s: %s (%speak %d active, ignitions %s, guard reverts %s)" % (
            fmt_rps(ln["rate"]), "IGNITED" if ln["ignited"] else "no ignition",
            ONE_RUN + "; " if len(low) == 1 else "", ln["peak_active"],
            ln["counters"].get("io_threads_ignitions"), ln["counters"].get("io_threads_guard_reverts")) for ln in low)
        row("F5.4", "a low step (a tenth of the closed-loop rate): does it ignite?", fig or "no low step")
        tot = {k: sum((ln["counters"].get(k) or 0) for ln in steps) for k in steps[0]["counters"]}
        fig = "; ".join("%s %s: peak %d active" % (ln["step"], fmt_rps(ln["rps"]), ln["peak_active"]) for ln in steps)
        fig += "; over all steps: " + ", ".join("%s %d" % (k.replace("io_threads_", ""), v)
                                               for k, v in sorted(tot.items()))
        names = []
        for ln in steps:
            if ln["step"] not in names:
                names.append(ln["step"])
        fig += "; runs of each step: " + ", ".join(
            "%s %d" % (n, sum(1 for ln in steps if ln["step"] == n)) for n in names)
        busy = [ln["step"] for ln in steps if not ln.get("started_idle", True)]
        if busy:
            fig += "; NOT IDLE at the start (not timed): %s" % ", ".join(busy)
        row("F5.5", "threads active at the peak of each step, and the policy's counters", fig)
    else:
        for rid, claim in (("F5.1", "time from a step up in offered load to ignition"),
                           ("F5.2", "time from a step up to a closed loop to ignition"),
                           ("F5.3", "time from the end of the load to scale-down"),
                           ("F5.4", "a low step: does it ignite?"),
                           ("F5.5", "threads active at the peak of each step, and the policy's counters")):
            row(rid, claim, "**not measured**: %s" % why)

    def idle_fig(ln):
        return "; ".join("%g–%g s after: **%.2f%%** of one core (%s)" % (
            w["from_s"], w["to_s"], w["pct_of_one_core"],
            ", ".join("%s %.2f%%" % kv for kv in sorted(w["by_thread_pct"].items())))
            for w in ln["windows"])
    icfg = ["CPU of every thread from /proc/PID/task/*/schedstat", "after a closed-loop burst",
            "nothing polls the server meanwhile"]
    for rid, n in (("F5.6", 4), ("F5.7", 1)):
        ln = idle.get(n)
        claim = "the idle server's CPU, all threads, after a burst: io-threads %d%s" % (
            n, " (the step-0 server, the floor)" if n == 1 else "")
        if ln:
            # One burst and one reading per setting: no spread to give.
            row(rid, claim, idle_fig(ln) + " (%s)" % ONE_RUN,
                icfg + ["%d threads" % ln["threads"], "%g s burst" % ln["burst_s"]])
        else:
            row(rid, claim, "**not measured**: %s" % why)
    return rows


@plot("ignition_over_time", "ignition_timing",
      "I/O threads active and offered load over time (soloist io-threads 4, default ignition)")
def p_ignition_over_time(lines):
    samples = [ln for ln in lines if ln.get("kind") == "sample"]
    if not samples:
        raise NotMeasured("plot ignition_over_time: no samples (%s)"
                          % ("; ".join(skipped_why(lines, has="io_threads")) or "nothing polled"))
    closed = [ln["rps"] for ln in lines if ln.get("kind") == "step" and ln.get("loop") == "closed"]
    rows = []
    for ln in samples:
        offered = ln["offered_rps"]
        if offered and offered < 0:  # closed loop: its achieved rate, known at its end
            offered = statistics.median(closed) if closed else "NaN"
        rows.append((ln["t_s"], ln["active"], round(offered / 1000, 3) if offered != "NaN" else "NaN"))
    body = ("set datafile missing 'NaN'; set xlabel 'seconds'; set ylabel 'threads active'; "
            "set y2label 'offered load (thousand requests/s)'; set ytics nomirror; set y2tics; "
            "set yrange [0:*]; set y2range [0:*]; set offsets 0, 0, 0.5, 0; set grid; set key top left; "
            "plot DATA using 1:2 with steps lw 2 lc rgb '#a23b2a' title 'io_threads_active', "
            "'' using 1:3 axes x1y2 with steps lw 1 dt 2 lc rgb '#3b5b92' title 'offered (closed loop: achieved)'")
    return ["t_s", "active", "offered_krps"], rows, body
