#!/usr/bin/env python3
"""pipeline_model.py — what main's cost per request implies on a machine with cores.

Steps 1 and 4 grown up: the model behind the book's claim that the main
thread's serial work per request sets the ceiling. Step 1 did Amdahl's
arithmetic on step 0's serial share; this does the same for the pipeline
the I/O threads build, fed with costs measured beside Valkey
(bench/beside_valkey.py's kind=scale lines where a run has them, else
its kind=cpu lines: where()), and predicts throughput against
io-threads and cores for soloist and for Valkey.

THE MODEL

A request visits two kinds of thread. Main parses nothing and writes
nothing once the threads take the I/O: it runs the command and pays the
hand-offs. A worker reads, parses and writes. Three measured numbers per
server and cell:

  m1  main's CPU per request at io-threads 1, where main does everything;
  f   the share of m1 main spends in the kernel (its system time over its
      user plus system time, from getrusage): read(), write() and
      epoll_wait(), the work the threads take. Parsing, which the threads
      also take, is user time and is left on main here, so the model
      errs towards less scaling, not more;
  h   what a request's hand-offs cost main: two jobs (its read and its
      write), each submitted and its result taken. soloist's is measured:
      its main's work at io-threads 4 forced on (CPU less the idle spin's
      wall time, a lower bound on the work: chapter 04) less what is left
      of m1 once the kernel share goes, m1 * (1 - f). Valkey has no spin
      counter, so its own h cannot be read apart from its spin; the model
      gives Valkey soloist's h: the same design, the same two hand-offs.

WHERE THE DEMANDS ARE MEASURED

The bottleneck law below wants each thread's demand at the ceiling, where
it is never idle. A server below its ceiling pays for being idle: each
time main runs out of work it blocks in epoll_wait and is woken again,
and that kernel time is charged to the requests it serves. The fewer
requests a wake-up finds, the more each pays. So the demands come from
bench/beside_valkey.py's part (d), every setting in closed loop: at
io-threads 1 main is then as busy as the generator can keep it and
blocks about once in hundreds of requests (row F4.100 prints how often).
Part (c)'s open loop at a third of capacity, where main blocked about one
request in four, put m1 near twice as high; it is the only source in
runs before part (d) read each thread's CPU, and where both exist the
rows print it beside (where()).

At io-threads 4 the same closed loop is no ceiling on two cores shared
with the generator: main still sleeps, wakes workers and polls when no
result is owed. Its system time there (sys4) is printed beside h. In
the open-loop runs all of h fit inside it; in the first closed-loop run
h exceeded it by a twenty-fifth. How much of h is the hand-offs' own
work, which would travel to a server at its ceiling, and how much is
waiting, which would not, cannot be split here: whenever main's user
time falls once the workers parse, h fits inside sys4 whatever the
hand-offs cost. Nor is h a clean bound either way: the waiting in it
pushes the prediction down, and the spin's wall time subtracted from
main's CPU (which makes main's work a lower bound) pushes h down. Their
floor, with_handoffs(inp, 0), a hand-off costing main nothing, is an
upper bound on the ratio. The target row reads the model with h as
measured and prints the floor beside it.

Then, per request: main's work with threads  mN = m1 * (1 - f) + h,
a worker's  w = m1 * f + h  (a hand-off costs both sides alike). With N
io-threads (main and N - 1 workers) on K cores, the client elsewhere:

  X(1) = min(1 / m1, K / (m1 + c))
  X(N) = min(1 / mN, (N - 1) / w, K / (mN + w + c))  for N >= 2

(c: the load generator's CPU per request where it shares the K cores, as
on the two-core machine the stored rows come from; 0 with cores to spare)

the slowest of main, the workers together, and the cores (the bottleneck
law of operational analysis: a resource busy D seconds per request caps
throughput at 1 / D). Enough clients keep every stage busy; with fewer,
mva() gives the curve below the bound (exact mean value analysis of a
closed network: main, the workers as N - 1 equal stations, the clients'
own time Z as a delay).

What it leaves out, each of which bends the real curve below the model's:
memory traffic between the cores (a client's buffers move from a worker's
cache to main's and back), lock-free queues' cache-line transfers under
load, the kernel's own scaling (one listening socket, one epoll), and a
machine's other work. It is a ceiling, not a forecast. One thing it
leaves out bends Valkey's real curve above it: batch prefetch. Main's
own work is priced as at io-threads 1, where Valkey's 2024 tree does not
prefetch (it batches only commands its I/O threads parsed:
addCommandToBatchAndProcessIfFull, called from processIOThreadsReadDone
in src/networking.c), so the blog's second stage, 780K to 1.19M
requests/s, is outside the model. h, though, is read at io-threads 4,
where soloist's own batch prefetch runs: what it saved main there is
netted into h, a saving or a cost. No row measures it in this cell; the
nearest (bench/prefetch_e2e.py's F6.24-F6.25: GETs at depth 1,
prefetch on against off at io-threads 2) find it within the noise on
two cores. Where batches fill, a model fed h from such a machine would
carry part of the prefetch stage inside it.

  bench/pipeline_model.py RESULTS/beside_valkey.jsonl [--cores K] [--json]

prints, per server, the inputs and X(N) / X(1) for N = 1 .. 16. No Valkey
anchor: Valkey's published figures are read against it in FINDINGS.md
(rows F4.100-F4.103) and chapter 04, not mirrored.
"""

import argparse
import json
import statistics
import sys

BLOG_CELL = ("SET", 512, 1)  # Valkey's blog: SET of 512 B values, 650 clients, depth 1


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


WHERE = {"scale": "at the ceiling (closed loop, part (d))",
         "cpu": "at a third of capacity (open loop, part (c))"}


def where(lines, cell=BLOG_CELL):
    """Which lines the demands come from: "scale" (part (d), closed loop,
    io-threads 1 as busy as the generator can make it) when they carry
    soloist's main CPU at io-threads 1 and 4, else "cpu" (part (c), open
    loop at a third of capacity; the only source in runs before part (d)
    read the CPU)."""
    have = {ln.get("io_threads") for ln in lines if ln.get("kind") == "scale" and ln.get("server") == "soloist"
            and (ln.get("test"), ln.get("value_size"), ln.get("pipeline")) == cell
            and ln.get("main_us_per_request") is not None}
    return "scale" if {1, 4} <= have else "cpu"


def inputs(lines, server, cell, h=None, kind="cpu"):
    """{m1, f, h, sys4, sleeps, sleeps1, mN, w} for one server and cell
    from `kind` lines; h measured for soloist (at io-threads 4), given for
    a server without a spin counter, and beside it main's system time and
    sleeps a request at io-threads 4 where measured (sys4 and sleeps, None
    where h is given), and main's sleeps a request at io-threads 1
    (sleeps1). None when a figure is missing."""
    test, size, p = cell

    def pick(n, field):
        return med([ln.get(field) for ln in lines if ln.get("kind") == kind and ln.get("server") == server
                    and ln.get("io_threads") == n and (ln["test"], ln["value_size"], ln["pipeline"]) == cell])
    m1, user, sys_ = pick(1, "main_us_per_request"), pick(1, "main_user_us_per_request"), \
        pick(1, "main_sys_us_per_request")
    if None in (m1, user, sys_) or user + sys_ <= 0:
        return None
    f = sys_ / (user + sys_)
    if h is None:
        main4, spin4, sys4 = pick(4, "main_us_per_request"), pick(4, "main_spin_us_per_request"), \
            pick(4, "main_sys_us_per_request")
        if None in (main4, spin4, sys4):
            return None
        h = max(0.0, (main4 - spin4) - m1 * (1 - f))
        waiting = {"sys4": sys4, "sleeps": pick(4, "main_sleeps_per_request")}
    else:
        waiting = {"sys4": None, "sleeps": None}
    waiting.update(at=kind, sleeps1=pick(1, "main_sleeps_per_request"))
    return dict(with_handoffs({"cell": "%s %d B P=%d" % (test, size, p), "m1": m1, "f": f}, h), **waiting)


def with_handoffs(inp, h):
    """inp with hand-offs costing h µs a request on each side: main keeps
    what the kernel does not take, plus h; a worker does the kernel's
    share, plus h (h = 0: their floor, batched where workers never sleep)."""
    return dict(inp, h=h, mN=inp["m1"] * (1 - inp["f"]) + h, w=inp["m1"] * inp["f"] + h)


def bound(inp, n, cores=None, client_us=0.0):
    """X(N) / X(1) by the bottleneck law (cores=None: as many as it takes;
    client_us: the load generator's CPU per request when it shares them)."""
    x1 = 1 / inp["m1"] if not cores else min(1 / inp["m1"], cores / (inp["m1"] + client_us))
    if n == 1:
        return 1.0
    x = min(1 / inp["mN"], (n - 1) / inp["w"])
    if cores:
        x = min(x, cores / (inp["mN"] + inp["w"] + client_us))
    return x / x1


def mva(inp, n, clients, think_us):
    """Throughput (requests/µs) of a closed network: `clients` each waiting
    think_us between a reply and its next request; main one station of
    demand mN (m1 at N = 1), the workers N - 1 stations of demand w/(N-1)."""
    stations = [inp["m1"]] if n == 1 else [inp["mN"]] + [inp["w"] / (n - 1)] * (n - 1)
    queue = [0.0] * len(stations)
    x = 0.0
    for k in range(1, clients + 1):
        resid = [d * (1 + q) for d, q in zip(stations, queue)]
        x = k / (think_us + sum(resid))
        queue = [x * r for r in resid]
    return x


def curve(inp, cores=None, top=16, client_us=0.0):
    return [round(bound(inp, n, cores, client_us), 3) for n in range(1, top + 1)]


def measured(scale, server):
    """{N: [each run's rps / the median rps at io-threads 1]} of one
    server's closed-loop runs (beside_valkey's kind=scale lines), or {}."""
    by_n = {}
    for ln in scale:
        if ln["server"] == server:
            by_n.setdefault(ln["io_threads"], []).append(ln["rps"])
    if 1 not in by_n:
        return {}
    one = statistics.median(by_n[1])
    return {n: [x / one for x in v] for n, v in sorted(by_n.items())}


def machine(scale, server):
    """(cores, client_us) for bound() on the machine the runs came from:
    (None, 0) when the generator had cores of its own (pinned), else the
    cores and the generator's median CPU per request for this server."""
    if not scale or scale[0].get("placement") == "pinned":
        return None, 0.0
    gen = [ln["generator_us_per_request"] for ln in scale
           if ln["server"] == server and ln.get("generator_us_per_request") is not None]
    return scale[0].get("cores"), med(gen) or 0.0


def model(lines, cell=BLOG_CELL, cores=None, kind=None):
    """{server: inputs + curve} for soloist and Valkey (Valkey given
    soloist's hand-off cost), the demands from `kind` lines (default:
    where(lines))."""
    kind = kind or where(lines, cell)
    out = {}
    sol = inputs(lines, "soloist", cell, kind=kind)
    if sol:
        out["soloist"] = dict(sol, curve=curve(sol, cores))
    vk = inputs(lines, "valkey", cell, h=sol["h"] if sol else None, kind=kind)
    if vk:
        out["valkey"] = dict(vk, curve=curve(vk, cores))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("jsonl")
    ap.add_argument("--cores", type=int, default=None, help="cores for the server (default: as many as it takes)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with open(a.jsonl) as fh:
        lines = [json.loads(x) for x in fh if x.strip()]
    got = model(lines, cores=a.cores)
    if a.json:
        print(json.dumps(got, sort_keys=True))
        return
    if not got:
        sys.exit("no kind=scale or kind=cpu lines with CPU for %s %d B P=%d in %s" % (BLOG_CELL + (a.jsonl,)))
    for server, r in got.items():
        print("%s, %s, demands %s: m1 %.2f µs, kernel share %.0f %%, hand-offs %.2f µs; main with threads %.2f µs, "
              "a worker %.2f µs a request" % (server, r["cell"], WHERE[r["at"]], r["m1"], 100 * r["f"], r["h"],
                                             r["mN"], r["w"]))
        if r["sys4"] is not None:
            print("  main's system time at io-threads 4: %.2f µs a request" % r["sys4"])
        print("  X(N)/X(1), N = 1..16%s: %s" % (" on %d cores" % a.cores if a.cores else "",
                                                 " ".join("%.2f" % x for x in r["curve"])))
        print("  hand-offs at their floor (0 µs): %s" % " ".join(
            "%.2f" % x for x in curve(with_handoffs(r, 0.0), a.cores)))

if __name__ == "__main__":
    main()
