"""findings_bench/trace_runs.py — the trace_runs benchmark's part of FINDINGS.md.

Tooling for steps 4, 5 and 7. Owns rows F4.80-F4.86, F5.30-F5.31 and
F7.40-F7.41: what the recorded traces show, made from
bench/trace_runs.py's raw lines; the helpers every benchmark shares are in
tools/findings_core.py.

Python 3 standard library only; single-threaded. No Valkey anchor (tooling).
"""

import statistics

from findings_core import base_conditions, one_run_of, Row


# ------------------------------------------------- the traces (trace_runs)
#
# bench/trace_runs.py records each setting once and keeps tools/trace.py's
# summary of it: every figure below is one trace's, so each says "(one
# run)". Row ids by the chapter that reads them: F4.80-F4.86 (who is busy,
# a request's time, jobs, the POLL job), F5.30-F5.31 (a woken worker),
# F7.40-F7.41 (a 10 MB reply written between small ones).

# Long: one row after another, each one trace's summary, sharing cfg() and row().
def h_trace_runs(run, lines, bench):
    """F4.80-F4.86, F5.30-F5.31, F7.40-F7.41 from bench/trace_runs.py."""
    base = base_conditions(run)
    one_run_of(lines, "trace_runs")
    cmd, src = "make trace", run.rel(bench)
    got = {ln["name"]: ln for ln in lines if ln.get("kind") == "run"}
    rows = []

    def s(name):
        return got[name]["summary"] if name in got else None

    def cfg(*names, extra=()):
        ln = got[names[0]]
        out = ["GET, %s B values, %s connections of redis-benchmark, %s keys" % (
            ln.get("value_size"), ln.get("clients"), ln.get("keys")) if ln.get("setting") == "get"
            else ln.get("load", "")]
        out.append("settings: " + ", ".join(
            "io-threads %s P=%s" % (got[n]["io_threads"], got[n]["pipeline"]) if got[n].get("setting") == "get"
            else n for n in names))
        out += ["io-threads-always-active yes" if ln.get("forced_on") else "default ignition",
                "TRACE recording of %s ms each, in the middle of the load" % ln.get("trace_ms"),
                "each figure one trace (one run)", "the load generator shares the cores"]
        return out + list(extra)

    def pc(x):
        return "%.1f%%" % (100 * x)

    def row(rid, claim, figure, names, extra=()):
        rows.append(Row(rid, claim, figure, dict(base, config=cfg(*names, extra=extra)), cmd, src))

    for rid, p in (("F4.80", 1), ("F4.81", 16)):
        names = ["get-t%d-p%d" % (t, p) for t in (1, 2, 4) if "get-t%d-p%d" % (t, p) in got]
        if len(names) < 2 or "get-t1-p%d" % p not in got:
            continue
        parts = ["io-threads %d: %s busy" % (got[n]["io_threads"], pc(s(n)["shares"]["main"]["busy"])) for n in names]
        row(rid, "the main thread's busy share of a recorded window (inside read, write and commands spans), "
                 "GET P=%d, by io-threads" % p, "; ".join(parts) + " (one run)", names)
    names = [n for n in ("get-t2-p1", "get-t4-p1") if n in got]
    if names:
        parts = []
        for n in names:
            q = s(n)["request_us"]
            parts.append("io-threads %d: %s queued (median %.1f µs of a median request of %.1f µs); worker %s, "
                         "main %s, waiting %s" % (
                             got[n]["io_threads"], pc(s(n)["request_share"]["queued"]), q["queued"]["median"],
                             q["total"]["median"], pc(s(n)["request_share"]["worker"]),
                             pc(s(n)["request_share"]["main"]), pc(s(n)["request_share"]["waiting"])))
        row("F4.82", "the share of requests' time spent queued in an inbox (from main's submit to a worker's take), "
                     "GET P=1, io-threads forced on", "; ".join(parts) + " (one run)", names)
        parts = []
        for n in names:
            sub = s(n)["jobs_submitted"]
            parts.append("io-threads %d: %.2f jobs per request (%s)" % (
                got[n]["io_threads"], s(n)["jobs_per_request"],
                ", ".join("%s %d" % kv for kv in sorted(sub.items()))))
        row("F4.83", "jobs handed to the workers per request, GET P=1, io-threads forced on",
            "; ".join(parts) + " (one run)", names)
    if got:
        names = sorted(got)
        bad = [n for n in names if s(n)["in_order"] != s(n)["requests"]]
        total = sum(s(n)["requests"] for n in names)
        row("F4.84", "requests whose read, commands run and write appear in that order in the trace, every setting",
            "%d of %d requests in order; settings out of order: %s (one run)" % (
                sum(s(n)["in_order"] for n in names), total, ", ".join(bad) or "none"), names)
    if "get-t2-p1" in got and s("get-t2-p1")["poll_jobs"]["n"]:
        pj = s("get-t2-p1")["poll_jobs"]
        sh = s("get-t2-p1")["shares"]["main"]
        row("F4.85", "what main does while a POLL job is out, GET P=1, io-threads 2 forced on: its loop's turns "
                     "and its commands runs per POLL job",
            "%g turns per POLL job (median; p99 %g); %g commands runs (median); POLL job out %.1f µs "
            "(median; p99 %.1f); %d POLL jobs (one run)" % (
                pj["main_turns"]["median"], pj["main_turns"]["p99"], pj["main_runs"]["median"],
                pj["us"]["median"], pj["us"]["p99"], pj["n"]), ["get-t2-p1"])
        row("F4.86", "the main thread's shares of the window, GET P=1, io-threads 2 forced on",
            "busy %s; idle %s (epoll_wait, or asking for the POLL job); waiting %s (one run)" % (
                pc(sh["busy"]), pc(sh["idle"]), pc(sh["waiting"])), ["get-t2-p1"])
    for rid, n in (("F5.30", "get-t4-p1"), ("F5.31", "get-t2-p1")):
        if n in got and s(n)["wakes"]["n"]:
            wk = s(n)["wakes"]
            row(rid, "a worker main woke: from main's last submit during its sleep to its sleep's end, GET P=1, "
                     "io-threads %d forced on" % got[n]["io_threads"],
                "median %.1f µs; p99 %.1f µs; %d wakes (one run)" % (wk["us"]["median"], wk["us"]["p99"], wk["n"]),
                [n])
    big = s("big-t1") and s("big-t1").get("big")
    if big and big["replies"]:
        reps = [r for r in big["replies"] if r["writes"] > 1] or big["replies"]
        med = lambda f: statistics.median(r[f] for r in reps)  # noqa: E731
        row("F7.40", "a 10 MB GET reply written by main beside small GETs: its writes, their time, and the other "
                     "clients' writes between its first and its last, io-threads 1",
            "%g writes per reply (median; %d–%d); from first to last %.0f µs (median); other clients' writes "
            "between its first and last: %g (median; %d–%d); %d replies (one run)" % (
                med("writes"), min(r["writes"] for r in reps), max(r["writes"] for r in reps), med("us"),
                med("other_writes"), min(r["other_writes"] for r in reps), max(r["other_writes"] for r in reps),
                len(reps)), ["big-t1"])
        st = big["small_total_us"]
        row("F7.41", "a small GET's time in the server (its read's start to its reply's write's end) beside 10 MB "
                     "replies, io-threads 1",
            "median %.1f µs; p99 %.1f µs; %d requests (one run)" % (st["median"], st["p99"], st["n"]), ["big-t1"])
    return rows
