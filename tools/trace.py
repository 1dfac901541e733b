#!/usr/bin/env python3
"""trace.py — reads a recording of soloist's threads: shares, requests, a picture.

One of the reader's tools. `TRACE DUMP` (src/cmd_trace.c) hands out what
every thread did as Chrome Trace Event JSON: one track per thread (main is
thread 0, worker t is thread t), a complete event ("X") per span, an
instant per decision, and an arrow per request. A viewer such as
ui.perfetto.dev draws it, but a viewer gives no figure a chapter can cite.
This tool turns the same file into figures and into a picture:

  tools/trace.py summary TRACE.json [--json]
  tools/trace.py draw TRACE.json --out fig.svg [--from-ms A --to-ms B]
                 [--focus poll|wake|big-write] [--title T] [--flows N]

TRACE may be gzipped (.gz). Python 3 standard library only; the picture is
SVG written by hand.

WHAT A SPAN IS

The server records a BEGIN and an END on one thread, and the export pairs
them into one span: read and write (a read() or writev() of one client, on
main or on a worker), commands (a run of one client's commands, on main
only), epoll_wait (main's poll, or the custom poll that only asks whether
a worker's POLL job is back), sleep (a worker in its futex), parked (a
worker blocked on its park mutex). A job is not recorded as a span: a
worker records "take" when it starts one, and only some jobs say when
they end. So this tool makes the job spans it can: a read, write or
accept job runs from its take to the worker's next "result sent" (the
handler's last step), a POLL job from its take to its "poll job back".
A free job (free_argv, free_obj) has no end mark; it is counted, not
timed, and its few frees fall in the worker's waiting share.

THE SHARES

The recorded window runs from the recording's start (time 0) to the end
of its last event. Each thread's time in it is split three ways:

  busy     inside a read, write or commands span, or a job span: the
           thread doing work someone asked for;
  idle     inside sleep, parked or epoll_wait and not busy: the thread
           given up to the kernel, or (main with a POLL job out) asking;
  waiting  the rest: awake and in no span. A worker spinning for its next
           job; main between spans, taking results, handing out jobs,
           marking writes, and turning its loop while results are owed.

Overlapping spans count once (a read span inside its job span). The three
shares add up to 1.

WHAT A REQUEST IS

As in the export (src/trace_export.c): one read that parsed at least one
command, followed through the run on main that finished its commands to
the first write that carried its reply. The export draws each as an arrow
(flow events "s", "t", "f" sharing an id) whose three steps sit at the
starts of those three spans; this tool finds the spans by thread and
start time. A request's time runs from its start (its read job's submit
when a worker read it, else the read's start) to the end of that write,
and is split four ways:

  queued   a job of the request waiting in an inbox: from main's submit to
           a worker's take, for the read job and the write job (each take
           is paired with its submit by the job word both carry);
  worker   its read and its write, where they ran on a worker;
  main     its commands span, and its read or write where main did them;
  waiting  the rest: between the steps, each thread busy with others or
           waiting for a core.

With several runs for one pipelined request, "main" counts the run that
finished it. A request is "in order" when its read ended before its run
began and its run ended before its write began; the server's hand-offs
make that so, and the count checks it.

WHAT ELSE IT COUNTS

Jobs submitted by type (a refused submit is undone), and per request. For
each POLL job out: main's turns (epoll_wait spans) and commands spans
until it is back. For each sleep a worker left because main woke it: the
delay from main's last submit during that sleep to the sleep's end, the
time a woken worker takes to run again (on two cores, mostly waiting for
one). For the client that was written the most bytes (a large value
beside small ones): each of its replies' writes, and the other clients'
writes that came between its first and its last.

The summary prints medians and p99s (the value below which 99 in 100
lie; with fewer than 100 values, the largest). --json prints the same as
one JSON object, which bench/trace_runs.py keeps and tools/findings.py
turns into rows.

No Valkey anchor (tooling).
"""

import argparse
import bisect
import gzip
import json
import math
import statistics
import sys
from xml.sax.saxutils import escape

BUSY_KINDS = ("read", "write", "commands", "job")
IDLE_KINDS = ("epoll_wait", "sleep", "parked")
CLIENT_JOBS = ("read", "write", "accept")


def load(path):
    """The trace as a dict; a .gz file is unzipped."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def pct(xs, p):
    """The p-th percentile (nearest rank) of xs, or None when empty."""
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))]


def stats(xs):
    return {"n": len(xs), "median": statistics.median(xs) if xs else None, "p99": pct(xs, 99)}


def union_len(ivs):
    """The length the intervals (start, end) cover together."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(ivs):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


class Trace:
    """The events of one dump, by thread: spans (name, start, end, args)
    and instants (name, ts, args), each list in time order."""

    def __init__(self, doc):
        self.names, self.spans, self.instants, self.flows = {}, {}, {}, {}
        self.end = 0.0
        for e in doc.get("traceEvents", []):
            ph, tid = e.get("ph"), e.get("tid", 0)
            if ph == "M":
                if e.get("name") == "thread_name":
                    self.names[tid] = e["args"]["name"]
                continue
            ts = float(e.get("ts", 0))
            if ph == "X":
                end = ts + float(e.get("dur", 0))
                self.spans.setdefault(tid, []).append((e["name"], ts, end, e.get("args", {})))
                self.end = max(self.end, end)
            elif ph == "i":
                self.instants.setdefault(tid, []).append((e["name"], ts, e.get("args", {})))
                self.end = max(self.end, ts)
            elif ph in ("s", "t", "f"):
                self.flows.setdefault(e["id"], {})[ph] = (tid, ts)
        for tid in list(self.spans) + list(self.instants):
            self.names.setdefault(tid, "main" if tid == 0 else "io-thread-%d" % tid)
        for v in self.spans.values():
            v.sort(key=lambda s: s[1])
        for v in self.instants.values():
            v.sort(key=lambda s: s[1])
        self.by_start = {(n, tid, s): (n, s, e, a) for tid, v in self.spans.items() for n, s, e, a in v}
        self.jobs = self._job_spans()
        self.submits = self._submits()

    def tids(self):
        return sorted(self.names)

    def _job_spans(self):
        """{tid: [(job type, take ts, end ts, word)]}: each take to its end
        mark (module comment, "WHAT A SPAN IS"); a free job ends where it
        starts."""
        out = {}
        for tid, inst in self.instants.items():
            if tid == 0:
                continue
            jobs = []
            for i, (name, ts, args) in enumerate(inst):
                if name != "take":
                    continue
                kind = args.get("job")
                mark = "result sent" if kind in CLIENT_JOBS else "poll job back" if kind == "poll" else None
                end = ts
                if mark:
                    for n2, t2, _ in inst[i + 1:]:
                        if n2 == mark:
                            end = t2
                            break
                        if n2 == "take":
                            break
                jobs.append((kind, ts, end, args.get("word")))
            out[tid] = jobs
        return out

    def _submits(self):
        """{word: [submit ts, ...]} of main's submits not refused."""
        out = {}
        for name, ts, args in self.instants.get(0, []):
            w = args.get("word")
            if name == "submit":
                out.setdefault(w, []).append(ts)
            elif name == "refused" and out.get(w):
                out[w].pop()
        return out

    def submit_of(self, word, take_ts):
        """The time of the submit a take at take_ts ran (the latest submit
        of the same job word before it), or None (submitted before the
        recording)."""
        ts = self.submits.get(word)
        if not ts:
            return None
        i = bisect.bisect_right(ts, take_ts)
        return ts[i - 1] if i else None

    def take_before(self, tid, kind, ts):
        """The last take of a `kind` job on worker tid at or before ts."""
        best = None
        for k, t, _, w in self.jobs.get(tid, []):
            if t > ts:
                break
            if k == kind:
                best = (t, w)
        return best


# ------------------------------------------------------------------ summary

def shares(tr):
    """{thread name: {busy, idle, waiting, busy_us, ...}} over the window."""
    out = {}
    w = tr.end or 1.0
    for tid in tr.tids():
        busy_iv = [(s, e) for n, s, e, _ in tr.spans.get(tid, []) if n in BUSY_KINDS]
        busy_iv += [(s, e) for _, s, e, _ in tr.jobs.get(tid, [])]
        idle_iv = [(s, e) for n, s, e, _ in tr.spans.get(tid, []) if n in IDLE_KINDS]
        busy = union_len(busy_iv)
        idle = union_len(busy_iv + idle_iv) - busy
        waiting = max(0.0, w - busy - idle)
        out[tr.names[tid]] = {"tid": tid, "busy": busy / w, "idle": idle / w, "waiting": waiting / w,
                              "busy_us": busy, "idle_us": idle, "waiting_us": waiting}
    return out


def requests(tr):
    """One dict per request the export drew an arrow for (module comment)."""
    out = []
    for fid in sorted(tr.flows):
        f = tr.flows[fid]
        if not all(k in f for k in "stf"):
            continue
        read = tr.by_start.get(("read", f["s"][0], f["s"][1]))
        run = tr.by_start.get(("commands", f["t"][0], f["t"][1]))
        write = tr.by_start.get(("write", f["f"][0], f["f"][1]))
        if not (read and run and write):
            continue
        r = {"id": fid, "client": read[3].get("client"), "read_tid": f["s"][0], "write_tid": f["f"][0],
             "start": read[1], "end": write[2], "queued": 0.0, "worker": 0.0, "main": run[2] - run[1],
             "in_order": read[2] <= run[1] and run[2] <= write[1]}
        for step, tid, kind in ((read, f["s"][0], "read"), (write, f["f"][0], "write")):
            dur = step[2] - step[1]
            if tid == 0:
                r["main"] += dur
                continue
            r["worker"] += dur
            take = tr.take_before(tid, kind, step[1])
            sub = tr.submit_of(take[1], take[0]) if take else None
            if sub is not None:
                r["queued"] += take[0] - sub
                if kind == "read":
                    r["start"] = min(r["start"], sub)
        r["total"] = r["end"] - r["start"]
        r["waiting"] = max(0.0, r["total"] - r["queued"] - r["worker"] - r["main"])
        out.append(r)
    return out


def jobs(tr):
    """Jobs submitted (refusals undone) and taken, by type."""
    sub, took = {}, {}
    for name, _, args in tr.instants.get(0, []):
        k = args.get("job")
        if name == "submit":
            sub[k] = sub.get(k, 0) + 1
        elif name == "refused":
            sub[k] = sub.get(k, 0) - 1
    for tid, js in tr.jobs.items():
        for k, _, _, _ in js:
            took[k] = took.get(k, 0) + 1
    return sub, took


def poll_jobs(tr):
    """Each POLL job out, paired in order with the next "poll job back":
    its time out and what main did meanwhile."""
    outs = [ts for n, ts, _ in tr.instants.get(0, []) if n == "poll job out"]
    backs = sorted(ts for tid, inst in tr.instants.items() if tid for n, ts, _ in inst if n == "poll job back")
    main = tr.spans.get(0, [])
    starts = [s for _, s, _, _ in main]
    res = []
    j = 0
    for o in outs:
        while j < len(backs) and backs[j] < o:
            j += 1
        if j == len(backs):
            break
        b = backs[j]
        j += 1
        lo, hi = bisect.bisect_left(starts, o), bisect.bisect_right(starts, b)
        during = main[lo:hi]
        res.append({"out": o, "back": b, "us": b - o,
                    "turns": sum(1 for n, _, _, _ in during if n == "epoll_wait"),
                    "runs": sum(1 for n, _, _, _ in during if n == "commands"),
                    "main_busy_us": sum(min(e, b) - s for n, s, e, _ in during if n in BUSY_KINDS)})
    return res


def wakes(tr):
    """Each sleep main ended: the delay from main's last submit during it
    to its end, and the worker that slept."""
    subs = [ts for n, ts, _ in tr.instants.get(0, []) if n == "submit"]
    out = []
    for tid in tr.tids():
        if tid == 0:
            continue
        for n, s, e, a in tr.spans.get(tid, []):
            if n != "sleep" or not a.get("woken_by_main"):
                continue
            i = bisect.bisect_right(subs, e)
            if i and subs[i - 1] >= s:
                out.append({"tid": tid, "submit": subs[i - 1], "end": e, "us": e - subs[i - 1]})
    return out


def big_replies(tr, reqs):
    """The replies of the client written the most bytes: per reply (from
    the write its arrow ends at to the client's next commands run), its
    writes and the other clients' writes begun between its first and last."""
    writes = sorted((s, e, a.get("client"), a.get("bytes", 0), tid)
                    for tid, v in tr.spans.items() for n, s, e, a in v if n == "write")
    by_client = {}
    for s, e, c, b, _ in writes:
        by_client[c] = by_client.get(c, 0) + b
    if not by_client:
        return None
    big = max(by_client, key=lambda c: (by_client[c], -(c or 0)))
    runs = sorted(s for n, s, e, a in tr.spans.get(0, []) if n == "commands" and a.get("client") == big)
    replies = []
    for r in reqs:
        if r["client"] != big:
            continue
        wstart = tr.flows[r["id"]]["f"][1]
        i = bisect.bisect_right(runs, wstart)
        until = runs[i] if i < len(runs) else float("inf")
        mine = [w for w in writes if w[2] == big and wstart <= w[0] < until]
        if not mine:
            continue
        first, last = mine[0][0], mine[-1][1]
        if last >= tr.end and until == float("inf") and mine[-1][3] == 0:
            continue
        others = [w for w in writes if w[2] != big and first <= w[0] <= last]
        replies.append({"start": first, "end": last, "us": last - first, "writes": len(mine),
                        "bytes": sum(w[3] for w in mine), "on_main": all(w[4] == 0 for w in mine),
                        "other_writes": len(others)})
    small = [r["total"] for r in reqs if r["client"] != big]
    return {"client": big, "bytes": by_client[big], "replies": replies, "small_total_us": stats(small)}


def summarize(doc):
    """The summary --json prints."""
    tr = Trace(doc)
    reqs = requests(tr)
    sub, took = jobs(tr)
    pj = poll_jobs(tr)
    wk = wakes(tr)
    n = len(reqs)
    req_stats = {k: stats([r[k] for r in reqs]) for k in ("total", "queued", "worker", "main", "waiting")}
    tot = sum(r["total"] for r in reqs) or 1.0
    big = big_replies(tr, reqs)
    other = doc.get("otherData", {})
    return {
        "window_us": tr.end,
        "threads": len(tr.tids()),
        "dropped": int(other.get("dropped", 0)),
        "shares": shares(tr),
        "requests": n,
        "in_order": sum(1 for r in reqs if r["in_order"]),
        "request_us": req_stats,
        "request_share": {k: sum(r[k] for r in reqs) / tot for k in ("queued", "worker", "main", "waiting")},
        "jobs_submitted": dict(sorted(sub.items())),
        "jobs_taken": dict(sorted(took.items())),
        "jobs_per_request": sum(sub.values()) / n if n else None,
        "poll_jobs": {"n": len(pj), "us": stats([p["us"] for p in pj]),
                      "main_turns": stats([p["turns"] for p in pj]),
                      "main_runs": stats([p["runs"] for p in pj])},
        "wakes": {"n": len(wk), "us": stats([w["us"] for w in wk])},
        "big": big,
    }


def fmt(v, f="%.1f"):
    return "-" if v is None else f % v


def print_summary(s, out=sys.stdout):
    w = out.write
    w("window %.0f µs, %d threads, %d events dropped\n\n" % (s["window_us"], s["threads"], s["dropped"]))
    w("%-14s %7s %7s %8s\n" % ("thread", "busy", "idle", "waiting"))
    for name, v in sorted(s["shares"].items(), key=lambda kv: kv[1]["tid"]):
        w("%-14s %6.1f%% %6.1f%% %7.1f%%\n" % (name, 100 * v["busy"], 100 * v["idle"], 100 * v["waiting"]))
    w("\n%d requests, %d with read, commands and write in order\n" % (s["requests"], s["in_order"]))
    w("%-9s %10s %10s %7s\n" % ("µs", "median", "p99", "share"))
    for k in ("total", "queued", "worker", "main", "waiting"):
        v = s["request_us"][k]
        share = "" if k == "total" else "%6.1f%%" % (100 * s["request_share"][k])
        w("%-9s %10s %10s %7s\n" % (k, fmt(v["median"]), fmt(v["p99"]), share))
    w("\njobs submitted: %s; per request %s\n" % (
        ", ".join("%s %d" % kv for kv in s["jobs_submitted"].items()) or "none", fmt(s["jobs_per_request"], "%.2f")))
    p = s["poll_jobs"]
    if p["n"]:
        w("POLL jobs: %d, out %s µs median (p99 %s); main's turns while out: median %s, commands runs %s\n" % (
            p["n"], fmt(p["us"]["median"]), fmt(p["us"]["p99"]), fmt(p["main_turns"]["median"], "%g"),
            fmt(p["main_runs"]["median"], "%g")))
    if s["wakes"]["n"]:
        w("wakes by main: %d, submit to running %s µs median (p99 %s)\n" % (
            s["wakes"]["n"], fmt(s["wakes"]["us"]["median"]), fmt(s["wakes"]["us"]["p99"])))
    b = s["big"]
    if b and any(r["writes"] > 1 for r in b["replies"]):
        for r in b["replies"]:
            w("client %s: reply of %d bytes in %d writes over %.0f µs, %d other writes between\n" % (
                b["client"], r["bytes"], r["writes"], r["us"], r["other_writes"]))


# ------------------------------------------------------------------ drawing

COLORS = {
    "read": "#4e79a7", "write": "#59a14f", "write_large": "#1f5f1b", "commands": "#f28e2b", "job": "#b07aa1",
    "epoll_wait": "#c9c9c9", "sleep": "#e3d7c1", "parked": "#9c755f",
}
LEGEND = [("read", "read"), ("write", "write"), ("write_large", "a write of 64 KB or more"), ("commands", "commands (main)"), ("job", "job on a worker"),
          ("epoll_wait", "epoll_wait, or asking for the POLL job"), ("sleep", "sleep (futex)"),
          ("parked", "parked"), ("submit", "main hands out a job / a worker takes one"),
          ("poll", "POLL job out (main) / back (worker)")]
MARKS = {"submit": ("submit", "#222222"), "take": ("submit", "#222222"),
         "poll job out": ("poll", "#d62728"), "poll job back": ("poll", "#d62728")}
COLS = 3
THIN = set(IDLE_KINDS)
LARGE = 64 * 1024  # a write this large is drawn darker: a large reply's chunk


def nice_step(span_us, target=8):
    raw = span_us / target
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def tick_label(t, step):
    if step >= 1000:
        return ("%.1f ms" % (t / 1000)).replace(".0 ms", " ms")
    return ("%.1f µs" % t).replace(".0 µs", " µs") if step < 1 else "%d µs" % round(t)


def focus_window(tr, what):
    """(from_us, to_us) around a typical moment of `what`."""
    if what == "poll":
        pj = [p for p in poll_jobs(tr) if p["runs"] > 0] or poll_jobs(tr)
        if not pj:
            raise SystemExit("trace.py: no POLL job in this trace to focus on")
        med = statistics.median(p["us"] for p in pj)
        p = min(pj, key=lambda p: abs(p["us"] - med))
        pad = max(p["us"] * 0.6, 10.0)
        return p["out"] - pad, p["back"] + pad
    if what == "wake":
        wk = wakes(tr)
        if not wk:
            raise SystemExit("trace.py: no wake by main in this trace to focus on")
        med = statistics.median(w["us"] for w in wk)
        x = min(wk, key=lambda w: abs(w["us"] - med))
        pad = max(x["us"] * 1.5, 20.0)
        return x["submit"] - pad, x["end"] + pad
    if what == "big-write":
        b = big_replies(tr, requests(tr))
        reps = [r for r in (b or {}).get("replies", []) if r["writes"] > 1]
        if not reps:
            raise SystemExit("trace.py: no reply written in several writes to focus on")
        r = reps[0]
        pad = r["us"] * 0.04
        return r["start"] - pad, r["end"] + pad
    raise SystemExit("trace.py: unknown focus %r" % what)


def draw_lane(o, tr, tid, y, lane, left, plot_w, x, t0, t1):
    """Appends to o one thread's lane at height y: its name, its spans and
    jobs in [t0, t1] (x maps a time to its abscissa), those too close to
    tell apart merged, and its instants as marks."""
    o.append('<g class="lane" data-tid="%d">' % tid)
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#f6f6f6"/>' % (left, y, plot_w, lane))
    o.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 8, y + lane / 2 + 4,
                                                                   escape(tr.names[tid])))
    items = [("write_large" if n == "write" and a.get("bytes", 0) >= LARGE else n, s, e)
             for n, s, e, a in tr.spans.get(tid, [])]
    items += [("job", s, e) for _, s, e, _ in tr.jobs.get(tid, []) if e > s]
    # Thin (idle) spans first, then jobs, then the spans inside them.
    order = {k: i for i, k in enumerate(("epoll_wait", "sleep", "parked", "job", "read", "write", "write_large",
                                          "commands"))}
    last = {}
    rects = []
    for n, s, e in sorted(items, key=lambda it: (order.get(it[0], 9), it[1])):
        if e < t0 or s > t1 or n not in COLORS:
            continue
        xs, xe = x(max(s, t0)), x(min(e, t1))
        xe = max(xe, xs + 0.6)
        prev = last.get(n)
        if prev is not None and xs - prev[1] < 0.4 and n != "write_large":  # merge what the eye cannot separate
            prev[1] = max(prev[1], xe)
            continue
        r = [xs, xe, n]
        rects.append(r)
        last[n] = r
    for xs, xe, n in rects:
        h = lane * 0.4 if n in THIN else lane - 6 if n == "job" else lane - 10
        yy = y + (lane - h) / 2
        edge = ' stroke="#ffffff" stroke-width="1"' if n == "write_large" else ""  # each chunk apart
        o.append('<rect class="span %s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s/>' % (
            n, xs, yy, xe - xs, h, COLORS[n], edge))
    for n, ts, _ in tr.instants.get(tid, []):
        if n in MARKS and t0 <= ts <= t1:
            k, color = MARKS[n]
            h = lane if k == "poll" else 7
            o.append('<rect class="mark %s" x="%.1f" y="%d" width="1.2" height="%d" fill="%s"/>' % (
                k, x(ts) - 0.6, y - (0 if k == "poll" else 3), h, color))
    o.append('</g>')


def draw_flows(o, tr, flows, lane_y, lane, x, t0, t1):
    """Appends to o up to flows requests drawn whole inside [t0, t1], each
    a line from its read through its commands to its write."""
    drawn = 0
    for fid in sorted(tr.flows):
        f = tr.flows[fid]
        if not all(k in f for k in "stf") or f["s"][1] < t0 or f["f"][1] > t1:
            continue
        pts = " ".join("%.1f,%.1f" % (x(ts), lane_y[tid] + lane / 2) for tid, ts in (f["s"], f["t"], f["f"])
                       if tid in lane_y)
        o.append('<polyline class="flow" points="%s" fill="none" stroke="#333333" stroke-width="1" '
                 'stroke-opacity="0.55"/>' % pts)
        drawn += 1
        if drawn >= flows:
            break


def draw_legend(o, left, legend_y, flows):
    """Appends to o the legend: a swatch per kind of span or mark, and the
    request line when flows are drawn."""
    for i, (k, label) in enumerate(LEGEND):
        lx, ly = left + (i % COLS) * 280, legend_y + (i // COLS) * 22
        if k in COLORS:
            h = 6 if k in THIN else 12
            o.append('<rect x="%d" y="%.1f" width="18" height="%d" fill="%s"/>' % (lx, ly + (12 - h) / 2, h,
                                                                                   COLORS[k]))
        else:
            color = "#d62728" if k == "poll" else "#222222"
            o.append('<rect x="%d" y="%d" width="1.5" height="12" fill="%s"/>' % (lx + 8, ly, color))
        o.append('<text x="%d" y="%d" font-size="11">%s</text>' % (lx + 24, ly + 10, escape(label)))
    if flows:
        lx, ly = left + (len(LEGEND) % COLS) * 280, legend_y + (len(LEGEND) // COLS) * 22
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>' % (lx, ly + 6, lx + 18, ly + 6))
        o.append('<text x="%d" y="%d" font-size="11">a request: read, commands, write</text>' % (lx + 24, ly + 10))


def draw(doc, out, t0=None, t1=None, title=None, flows=6, focus=None):
    """Writes the SVG picture of [t0, t1] µs (the whole window by default)."""
    tr = Trace(doc)
    if focus:
        t0, t1 = focus_window(tr, focus)
    t0 = max(0.0, t0 if t0 is not None else 0.0)
    t1 = min(tr.end, t1 if t1 is not None else tr.end)
    if t1 <= t0:
        raise SystemExit("trace.py: an empty window (%.1f to %.1f µs)" % (t0, t1))
    tids = tr.tids()
    W, left, right, top, lane, gap = 960, 96, 16, 34 if title else 12, 28, 6
    plot_w = W - left - right
    axis_y = top + len(tids) * (lane + gap)
    legend_y = axis_y + 40
    H = legend_y + 22 * math.ceil((len(LEGEND) + (1 if flows else 0)) / COLS) + 6
    x = lambda t: left + (t - t0) / (t1 - t0) * plot_w  # noqa: E731
    lane_y = {tid: top + i * (lane + gap) for i, tid in enumerate(tids)}
    o = ['<?xml version="1.0" encoding="UTF-8"?>',
         '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
         'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">' % (W, H, W, H),
         '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (W, H)]
    if title:
        o.append('<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>' % (left, escape(title)))
    for tid in tids:
        draw_lane(o, tr, tid, lane_y[tid], lane, left, plot_w, x, t0, t1)
    if flows:
        draw_flows(o, tr, flows, lane_y, lane, x, t0, t1)
    o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555555"/>' % (left, axis_y, left + plot_w, axis_y))
    step = nice_step(t1 - t0)
    t = math.ceil(t0 / step) * step
    while t <= t1 + 1e-9:
        xx = x(t)
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555555"/>' % (xx, axis_y, xx, axis_y + 5))
        o.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="11">%s</text>' % (
            xx, axis_y + 18, escape(tick_label(t, step))))
        t += step
    o.append('<text x="%d" y="%d" font-size="11" fill="#555555">time since the recording began</text>'
             % (left, axis_y + 32))
    draw_legend(o, left, legend_y, flows)
    o.append('</svg>')
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")
    return t0, t1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary", help="shares per thread, requests, jobs")
    s.add_argument("trace")
    s.add_argument("--json", action="store_true")
    d = sub.add_parser("draw", help="an SVG timeline, one lane per thread")
    d.add_argument("trace")
    d.add_argument("--out", required=True)
    d.add_argument("--from-ms", type=float)
    d.add_argument("--to-ms", type=float)
    d.add_argument("--focus", choices=("poll", "wake", "big-write"))
    d.add_argument("--title")
    d.add_argument("--flows", type=int, default=6, help="request lines to draw (0: none)")
    a = ap.parse_args(argv)
    doc = load(a.trace)
    if a.cmd == "summary":
        s = summarize(doc)
        if a.json:
            json.dump(s, sys.stdout, sort_keys=True)
            sys.stdout.write("\n")
        else:
            print_summary(s)
        return 0
    t0 = a.from_ms * 1000 if a.from_ms is not None else None
    t1 = a.to_ms * 1000 if a.to_ms is not None else None
    got = draw(doc, a.out, t0, t1, a.title, a.flows, a.focus)
    sys.stderr.write("trace.py: drew %.1f-%.1f µs into %s\n" % (got[0], got[1], a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
