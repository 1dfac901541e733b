#!/usr/bin/env python3
"""redis_defaults.py — redis-benchmark's default tests, soloist beside redis-server 7.0 and Valkey.

The types' benchmark of the serving path. What a new user runs first:
`redis-benchmark` with no -t, its default list of twenty tests (PING_INLINE,
PING_MBULK, SET, GET, INCR, LPUSH, RPUSH, LPOP, RPOP, SADD, HSET, SPOP,
ZADD, ZPOPMIN, the LPUSH that fills the list LRANGE reads, LRANGE_100,
_300, _500 (the first 450 elements), _600, and MSET of 10 keys), 50
clients, 3-byte values, its own key names (no -r: every SET hits one key,
SADD and HSET add one member and SPOP and ZPOPMIN mostly find the set
empty, as the default run does), at -P 1 and -P 16, against soloist
(io-threads 1) and Debian's redis-server 7.0 (--save '' --appendonly no),
both started once. ROUNDS rounds (5; 3 with QUICK); in each, per depth, a pass over
the list on each server from an empty keyspace, the servers alternated
test by test: redis-benchmark -t with one test, soloist then redis-server
or the other way round, the order turned from one test to the next and
each round, the waiting server stopped (SIGSTOP). Each server's keyspace
sees the default run's sequence (LPOP pops what LPUSH and RPUSH pushed);
the LRANGE tests run together, after the one fill they share, as in the
default run. Alternating test by test puts the two sides of a ratio
seconds apart, where a whole list per server puts them a minute apart,
and on a shared two-core machine the load of other work moves in a
minute. BENCH_WHOLE_LIST=1 runs the whole list in one redis-benchmark per
server and pass instead. The same -n for both servers: REQ_P1 requests
per test at P=1 (20,000; 4,000 with QUICK), REQ_P16 at P=16 (60,000;
16,000). Five short rounds rather than three long ones: a burst of other
work on the machine spoils a run or two, and the median of five pairs
passes over them. When VALKEY_SERVER names a valkey-server built from source, Valkey is a
third server in every pass, alternated with the other two test by test
(the order turned the same way); a run without it prints a
kind=skipped line and measures the other two. An A/A run (SOLOIST_BIN=/usr/bin/redis-server
BENCH_A_IS=redis-server: redis-server on both sides) shows the spread the
machine alone gives a ratio.

The server's main-thread CPU per test: redis-benchmark's --csv lines are
read as it prints them (stdbuf -oL: one line as each test ends), and at
each line the main thread's run time (/proc/PID/task/PID/schedstat, ns:
the thread that runs every command in both servers at io-threads 1) is
read; a test's CPU is the difference from the previous line, over its
requests. On two shared cores the rate at P=1 is mostly the client's; the
CPU per request is the server's own.

Before the runs, each test's command is sent once to each server; a test
either server answers with an error (a command it does not have) is left
out of the runs for both and printed as kind=refused with the server's reply, and the rows say it
was not measured. A test redis-benchmark stopped before (an error reply
mid-run) is printed as kind=missing; a server that exits (a crash) ends
the runs, with kind=stopped, and the rows are printed from what was
measured, the tests never measured named with the exit status.

Prints JSON lines: kind=refused, kind=missing, kind=run (server, round,
pipeline, test, rps, cpu_ns_per_req, requests), then generic finding rows
F10.1-F10.6: per depth each test's ratio soloist / redis-server (median
of the rounds' ratios, their range beside it); the geometric mean at
P=16; the targets (every test at least 0.95x at P=1; geometric mean at
least 1.3x at P=16); main-thread CPU per request, redis-server's over
soloist's, per test at P=1 and at P=16; with Valkey, F10.7-F10.9: the
rates against Valkey at P=1 and P=16 and its main-thread CPU per
request over soloist's; F10.30: at P=16, a second soloist with step 6's
batch off (prefetch-batch-max-size 0), one more server in the P=16
passes (the fourth with Valkey), its main-thread CPU per request over
soloist's: every default test names one key at most (the PING tests
none), where the batch has nothing to overlap, so this is
what the batch costs where it cannot help (a repeated key is walked
once). Knobs: QUICK=1 (about a minute; full about 3
min on a quiet machine, at most about 6 on a busy one; half as long
again with Valkey, and a little more for the batch-off soloist's P=16
passes), ROUNDS, REQ_P1, REQ_P16, BENCH_BUDGET_S (a pass not
begun by then is skipped and the rows come from the rounds measured:
300 s, 450 with Valkey, 60 and 90 with QUICK), BENCH_WHOLE_LIST,
SOLOIST_BIN, REDIS_BIN, VALKEY_SERVER.
Loopback only; every redis-benchmark run has a timeout.

Valkey anchor: src/valkey-benchmark.c (the default test list, which
redis-benchmark 7.0 shares); measured, not mirrored.
"""

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

ID_BASE = 10  # rows F10.1-F10.6, F10.7-F10.9 beside Valkey, F10.30 beside the batch-off soloist
CLIENTS = 50
DEPTHS = [1, 16]
LRANGE_FILL = "LPUSH (needed to benchmark LRANGE)"

# The default list in redis-benchmark's order: (the name its --csv prints,
# the -t word that selects it, the commands it sends, with its own key
# names, used to ask each server whether it has them).
TESTS = [
    ("PING_INLINE", "ping_inline", "inline"),
    ("PING_MBULK", "ping_mbulk", [["PING"]]),
    ("SET", "set", [["SET", "key:__rand_int__", "xxx"]]),
    ("GET", "get", [["GET", "key:__rand_int__"]]),
    ("INCR", "incr", [["INCR", "counter:__rand_int__"]]),
    ("LPUSH", "lpush", [["LPUSH", "mylist", "xxx"]]),
    ("RPUSH", "rpush", [["RPUSH", "mylist", "xxx"]]),
    ("LPOP", "lpop", [["LPOP", "mylist"]]),
    ("RPOP", "rpop", [["RPOP", "mylist"]]),
    ("SADD", "sadd", [["SADD", "myset", "element:__rand_int__"]]),
    ("HSET", "hset", [["HSET", "myhash", "element:__rand_int__", "xxx"]]),
    ("SPOP", "spop", [["SPOP", "myset"]]),
    ("ZADD", "zadd", [["ZADD", "myzset", "0", "element:__rand_int__"]]),
    ("ZPOPMIN", "zpopmin", [["ZPOPMIN", "myzset"]]),
    (LRANGE_FILL, None, [["LPUSH", "mylist", "xxx"]]),
    ("LRANGE_100 (first 100 elements)", "lrange_100", [["LPUSH", "mylist", "xxx"], ["LRANGE", "mylist", "0", "99"]]),
    ("LRANGE_300 (first 300 elements)", "lrange_300", [["LPUSH", "mylist", "xxx"], ["LRANGE", "mylist", "0", "299"]]),
    ("LRANGE_500 (first 500 elements)", "lrange_500", [["LPUSH", "mylist", "xxx"], ["LRANGE", "mylist", "0", "449"]]),
    ("LRANGE_600 (first 600 elements)", "lrange_600", [["LPUSH", "mylist", "xxx"], ["LRANGE", "mylist", "0", "599"]]),
    ("MSET (10 keys)", "mset", [["MSET"] + ["key:__rand_int__", "xxx"] * 10]),
]
NAMES = [t[0] for t in TESTS]


def label(name):
    """A test's short name in the rows: LRANGE_100 for "LRANGE_100 (first
    100 elements)"; the list's fill is "LPUSH (LRANGE fill)"."""
    return "LPUSH (LRANGE fill)" if name == LRANGE_FILL else name.split(" (")[0]


def parse_csv_line(line):
    """One --csv line -> (test name, {field: float}), or None for the
    header and anything else."""
    cells = [c.strip().strip('"') for c in line.strip().split('","')]
    if len(cells) < 2 or cells[0] == "test":
        return None
    try:
        rps = float(cells[1])
    except ValueError:
        return None
    out = {"rps": rps}
    for k, v in zip(["avg_latency_ms", "min_latency_ms", "p50_latency_ms", "p95_latency_ms",
                     "p99_latency_ms", "max_latency_ms"], cells[2:]):
        try:
            out[k] = float(v)
        except ValueError:
            pass
    return cells[0], out


def main_cpu_ns(pid):
    """The main thread's run time so far, ns (its tid is the pid)."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def probe(srv):
    """{test name: the server's error reply} for each default test whose
    command the server refuses; the keyspace is flushed afterwards."""
    refused = {}
    for name, _, cmds in TESTS:
        if cmds == "inline":
            try:
                with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
                    s.sendall(b"PING\r\n")
                    replies = [bl.read_reply(s)]
            except OSError:
                replies = [b""]
        else:
            try:
                replies = [srv.command(*c) for c in cmds]
            except OSError:
                replies = [b""]
        for rep in replies:
            if rep[:1] == b"-" or rep == b"":
                why = rep.decode("utf-8", "replace").strip()[1:].split(", with args")[0]
                gone = srv.proc.poll()
                refused[name] = why[:120] or ("the server exited (status %d)" % gone if gone is not None
                                              else "the connection closed without a reply")
                break
        if exited(srv):
            break
    if not exited(srv):
        srv.command("FLUSHALL")
    return refused


def run_list(srv, depth, requests, select, timeout):
    """One redis-benchmark run of the default list (or of `select`, a -t
    word list) against srv: -> ({test: fields with cpu_ns_per_req}, stderr
    tail, argv text). The main thread's CPU is read as each test's line
    arrives."""
    pl = bl.placement()
    argv = (["stdbuf", "-oL"] + bl._taskset(pl.get("client_cpus")) +
            [os.environ.get("REDIS_BENCHMARK", "redis-benchmark"), "-h", "127.0.0.1", "-p", str(srv.port),
             "-c", str(CLIENTS), "-n", str(requests), "-P", str(depth), "--csv"])
    if select:
        argv += ["-t", ",".join(select)]
    pid = srv.proc.pid
    got = {}
    with tempfile.TemporaryFile(mode="w+") as err:
        prev_cpu, prev_t = main_cpu_ns(pid), time.monotonic()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
        done = threading.Event()

        def watch():  # redis-benchmark retries a server that died for ever: stop it then, or at the timeout
            end = time.monotonic() + timeout
            while not done.wait(0.2):
                if time.monotonic() > end or srv.proc.poll() is not None:
                    p.kill()
                    return
        killer = threading.Thread(target=watch, daemon=True)
        killer.start()
        try:
            for line in p.stdout:
                cpu, t = main_cpu_ns(pid), time.monotonic()
                parsed = parse_csv_line(line)
                if parsed:
                    name, fields = parsed
                    fields["wall_s"] = round(t - prev_t, 4)
                    fields["cpu_ns_per_req"] = (round((cpu - prev_cpu) / requests, 1)
                                                if cpu is not None and prev_cpu is not None else None)
                    got[name] = fields
                prev_cpu, prev_t = cpu, t
            p.wait()
        finally:
            done.set()
        err.seek(0)
        tail = err.read()[-300:].strip()
    if p.returncode != 0:
        tail = "redis-benchmark exited %s%s" % (p.returncode, (": " + tail) if tail else "")
    return got, tail, " ".join(argv)


def ratios(runs, depth, test, field, inverse=False, rounds=None, peer="redis"):
    """Per round, soloist's field over the peer's (the peer's over
    soloist's with inverse), for the rounds that measured both; the peer
    is redis-server ("redis") or Valkey ("valkey")."""
    out = []
    for r in sorted({ln["round"] for ln in runs}):
        if rounds is not None and r not in rounds:
            continue
        side = {ln["server"]: ln.get(field) for ln in runs
                if ln["round"] == r and ln["pipeline"] == depth and ln["test"] == test}
        a, b = side.get("soloist"), side.get(peer)
        if a and b:
            out.append(b / a if inverse else a / b)
    return out


def lowest(pairs):
    """The (ratio, name) pair with the lowest ratio, the first in the
    list's order on a tie."""
    return min(pairs, key=lambda p: p[0])


def rid(n):
    return "F%d.%d" % (ID_BASE, n)


def span(vals):
    """'a–b' of the rounds' values, or 'one round'."""
    return "%.2f–%.2f" % (min(vals), max(vals)) if len(vals) > 1 else "one round"


def not_measured(names, reasons):
    """'; not measured: A, B (soloist: ERR ...)' for the tests in names,
    grouped by the reason reasons gives (or 'no run of both servers')."""
    by_reason = {}
    for name in names:
        by_reason.setdefault(reasons.get(name, "no run of both servers"), []).append(label(name))
    parts = ["%s (%s)" % (", ".join(ns), why) for why, ns in by_reason.items()]
    return ("; not measured: " + "; ".join(parts)) if parts else ""


def rows(lines, reasons, cfg, cmd_line):
    """The finding rows F10.1-F10.6 from the run lines. reasons: {test
    name: 'server: why'} for the tests a server refused or redis-benchmark
    stopped before; a test without a ratio is named with its reason."""
    runs = [ln for ln in lines if ln.get("kind") == "run"]
    p1, p16 = DEPTHS
    out, med, absent = rate_rows(runs, reasons, cfg, cmd_line, "redis", "redis-server 7.0", (1, 2))

    p1_cells = [(med[(p1, n)], label(n)) for n in NAMES if (p1, n) in med]
    under = sorted((r, n) for r, n in p1_cells if r < 0.95)
    why = []
    if under:
        why.append("%d of %d tests under 0.95×: %s" % (len(under), len(p1_cells),
                                                       ", ".join("%s %.2f×" % (n, r) for r, n in under)))
    elif p1_cells:
        why.append("lowest %.2f× (%s)" % lowest(p1_cells))
    if absent[p1]:
        why.append("%d of %d tests not measured" % (len(absent[p1]), len(NAMES)))
    out.append({"finding": True, "id": rid(3), "command": cmd_line, "config": dict(cfg, pipeline=p1),
                "claim": "target: every default test at least 0.95× redis-server 7.0's rate at P=1 (the median of "
                         "the rounds' ratios)",
                "figure": "%s (%s)" % ("met" if p1_cells and not under and not absent[p1] else "not met",
                                       "; ".join(why) or "no test measured")})
    p16_cells = [med[(p16, n)] for n in NAMES if (p16, n) in med]
    gm = bl.geomean(p16_cells)
    out.append({"finding": True, "id": rid(4), "command": cmd_line, "config": dict(cfg, pipeline=p16),
                "claim": "target: the geometric mean over the default tests of soloist / redis-server 7.0 rps at "
                         "P=16 at least 1.3×",
                "figure": "%s (%s%s)" % (
                    "met" if p16_cells and gm >= 1.3 and not absent[p16] else "not met",
                    "geometric mean %.2f× over %d tests" % (gm, len(p16_cells)) if p16_cells else "no test measured",
                    "; %d of %d tests not measured" % (len(absent[p16]), len(NAMES)) if absent[p16] else "")})

    for depth, n in ((p1, 5), (p16, 6)):
        out += cpu_row(runs, reasons, cfg, cmd_line, depth, rid(n), "redis", "redis-server 7.0")
    if any(ln["server"] == "valkey" for ln in runs):
        out += rate_rows(runs, reasons, cfg, cmd_line, "valkey", "Valkey", (7, 8))[0]
        out += cpu_row(runs, reasons, cfg, cmd_line, p16, rid(9), "valkey", "Valkey")
    out += cpu_row(runs, reasons, cfg, cmd_line, p16, rid(30), BATCH_OFF, "soloist with the batch off "
                   "(prefetch-batch-max-size 0)")
    return out


def rate_rows(runs, reasons, cfg, cmd_line, peer, peer_name, ids):
    """The rate rows against one peer, at P=1 and P=16 (ids: their
    numbers): per test the median of the rounds' ratios, the lowest, and
    at P=16 the geometric mean. -> (rows, {(depth, test): median}, {depth:
    tests not measured})."""
    nrounds = len({ln["round"] for ln in runs})
    out, med, absent = [], {}, {}
    for depth, n in zip(DEPTHS, ids):
        cells = []
        for name in NAMES:
            rs = ratios(runs, depth, name, "rps", peer=peer)
            if rs:
                med[(depth, name)] = bl.median(rs)
                cells.append("%s %.2f× (%s)" % (label(name), med[(depth, name)], span(rs)))
        absent[depth] = [t for t in NAMES if (depth, t) not in med]
        measured = [(med[(depth, t)], label(t)) for t in NAMES if (depth, t) in med]
        head = ("lowest **%.2f×** (%s)" % lowest(measured)) if measured else "no test measured"
        if depth == DEPTHS[-1] and measured:
            # Each round's own geometric mean, over the tests it measured on both servers.
            per_round = [bl.geomean(x for t in NAMES for x in ratios(runs, depth, t, "rps", rounds={r}, peer=peer))
                         for r in sorted({ln["round"] for ln in runs})]
            head = "geometric mean **%.2f×** (the rounds' own: %s); %s" % (
                bl.geomean(m for m, _ in measured), span([g for g in per_round if g]), head)
        out.append({"finding": True, "id": rid(n), "command": cmd_line, "config": dict(cfg, pipeline=depth),
                    "claim": "redis-benchmark's default tests at P=%d, soloist io-threads 1 / %s rps: "
                             "per test the median of %d rounds' ratios (the rounds' range in brackets)%s"
                             % (depth, peer_name, nrounds,
                                "; the geometric mean over the tests" if depth == DEPTHS[-1] else ""),
                    "figure": "; ".join([head] + ([", ".join(cells)] if cells else []))
                    + not_measured(absent[depth], reasons)})
    return out, med, absent


# A second soloist with step 6's batch off, at P=16 only (at P=1 a read
# brings one command, and a lone command is never batched): every default
# test names one key at most, so the batch has nothing to overlap, and its
# CPU over this server's says what the batch costs where it cannot help.
BATCH_OFF = "soloist-batch-off"


def cpu_row(runs, reasons, cfg, cmd_line, depth, row_id, peer, peer_name):
    """The main thread's CPU per request at one depth, the peer's over
    soloist's per test (above 1: soloist spends less): [] or [the row]."""
    cells, meds = [], []
    for name in NAMES:
        rs = ratios(runs, depth, name, "cpu_ns_per_req", inverse=True, peer=peer)
        if not rs:
            continue
        us = [bl.median([ln["cpu_ns_per_req"] / 1000 for ln in runs if ln["server"] == s
                         and ln["pipeline"] == depth and ln["test"] == name and ln.get("cpu_ns_per_req")])
              for s in ("soloist", peer)]
        meds.append((bl.median(rs), label(name)))
        cells.append("%s %.2f× (%s; %.2f vs %.2f µs)" % (label(name), bl.median(rs), span(rs), us[0], us[1]))
    if not cells:
        return []
    return [{"finding": True, "id": row_id, "command": cmd_line, "config": dict(cfg, pipeline=depth),
             "claim": "main-thread CPU per request at P=%d, %s over soloist io-threads 1 (above "
                      "1: soloist spends less; /proc/PID/task/PID/schedstat read at each of redis-benchmark's "
                      "--csv lines): per test the median of the rounds' ratios (their range; soloist's vs "
                      "%s's µs per request, medians)" % (depth, peer_name,
                                                          "redis-server" if peer == "redis" else peer_name),
             "figure": "geometric mean **%.2f×**; lowest %.2f× (%s); %s%s" % (
                 bl.geomean(m for m, _ in meds), lowest(meds)[0], lowest(meds)[1], ", ".join(cells),
                 not_measured([x for x in NAMES if x not in {ln["test"] for ln in runs
                                                             if ln["pipeline"] == depth}], reasons))}]


def units(refused, whole_list):
    """The runs of one pass, in the default list's order: [(-t words or
    None for the whole list, the tests that run prints)]. One test a run,
    the LRANGE tests in one (their fill runs once before them, as in the
    default run); with whole_list, the list in one run (-t without the
    refused tests, none when nothing was refused)."""
    names = [n for n in NAMES if n not in refused]
    if whole_list:
        return [([w for n, w, _ in TESTS if w and n not in refused] if refused else None, names)]
    out, lrange = [], None
    for name, word, _ in TESTS:
        if name in refused or (word is None and name != LRANGE_FILL):
            continue
        if name == LRANGE_FILL or word.startswith("lrange_"):
            if lrange is None:
                lrange = ([], [])
                out.append(lrange)
            if word:
                lrange[0].append(word)
            lrange[1].append(name)
        else:
            out.append(([word], [name]))
    return [u for u in out if u[0]]


def exited(srv):
    """'soloist: the server exited (status N)' once srv's process has
    ended (a crash under a test), else None."""
    rc = srv.proc.poll()
    return None if rc is None else "%s: the server exited (status %d)" % (srv.label, rc)


def one_pass(servers, plan, rnd, di, depth, requests, timeout, reasons, lines, quick):
    """One pass over the plan at one depth, every server from an empty
    keyspace, alternated test by test (the order turned from one test to
    the next); run lines are emitted and added to lines, tests a run did
    not print to reasons. -> None, or why the benchmark must stop (a
    server exited)."""
    for srv in servers:  # each pass starts from an empty keyspace, as a fresh run does
        with srv.turn():
            try:
                srv.command("FLUSHALL")
            except OSError:
                return exited(srv) or "%s: FLUSHALL failed" % srv.label
    for ui, (select, names) in enumerate(plan):
        # Turned by one from each test to the next; two servers keep the
        # order this benchmark has always used (soloist first on odd turns).
        k = rnd + di + ui
        for srv in bl.turned(servers, k if len(servers) > 2 else k + 1):
            with srv.turn():
                got, tail, argv = run_list(srv, depth, requests, select, timeout)
            gone = exited(srv)
            for name in names:
                if name not in got:
                    why = gone or "%s: %s" % (srv.label, tail or "redis-benchmark printed no line for it")
                    reasons.setdefault(name, why)
                    bl.emit({"kind": "missing", "bench": "redis_defaults", "test": name, "server": srv.label,
                             "round": rnd, "pipeline": depth, "why": why, "quick": quick})
                    continue
                ln = dict(got[name], kind="run", bench="redis_defaults", server=srv.label, server_is=srv.really,
                          round=rnd, pipeline=depth, test=name, requests=requests, clients=CLIENTS, argv=argv,
                          quick=quick, **bl.placement())
                bl.emit(ln)
                lines.append(ln)
            if gone:
                return gone
    return None


def main():
    bl.install_cleanup()
    quick = bl.quick()
    rounds = int(os.environ.get("ROUNDS", 3 if quick else 5))
    req = {1: int(os.environ.get("REQ_P1", 4000 if quick else 20000)),
           16: int(os.environ.get("REQ_P16", 16000 if quick else 60000))}
    whole = bl.env_flag("BENCH_WHOLE_LIST")
    timeout = 120 if quick else 240
    # A pass not begun by this budget is skipped, so that the whole run
    # stays near 6 minutes on a busy machine (a pass there takes up to a
    # minute) and the rows are printed; the runner's own limit is 600 s.
    (_, a_bin, a_is), (_, b_bin, _) = bl.servers()
    peer = {}
    vk = bl.valkey_side(peer)
    budget = bl.Budget(float(os.environ.get("BENCH_BUDGET_S", (90 if vk else 60) if quick else (450 if vk else 300))))
    cmd_line = "make findings BENCH=redis_defaults" + (" QUICK=1" if quick else "")
    cfg = {"clients": CLIENTS, "rounds": rounds, "value_size": 3, "peer": "redis-server 7.0", "quick": quick,
           "requests_per_test": "%d at P=1, %d at P=16" % (req[1], req[16]), "keys": "redis-benchmark's own, no -r",
           "soloist": "io-threads 1",
           "alternation": "whole list per server" if whole else "test by test (the LRANGE tests together)"}
    if vk:
        cfg["valkey"] = "Valkey built from source (%s)" % peer["valkey_version"]
    lines = []
    try:
        sol = bl.Server("soloist", a_bin, a_is, ["--io-threads", "1"])
        red = bl.Server("redis", b_bin, "redis-server")
        servers = [sol, red] + ([bl.Server("valkey", vk[1], vk[2])] if vk else [])
        if a_is == "soloist":  # not in an A/A run, where side A is redis-server
            off = bl.Server(BATCH_OFF, a_bin, a_is, ["--io-threads", "1", "--prefetch-batch-max-size", "0"])
            off.depths = (16,)
            servers.append(off)
        refused = {}
        for srv in servers:
            for name, why in probe(srv).items():
                refused.setdefault(name, "%s: %s" % (srv.label, why))
        # redis-benchmark runs the list's fill only before an LRANGE test.
        lranges = [t[0] for t in TESTS if t[0].startswith("LRANGE_")]
        if all(n in refused for n in lranges):
            refused.setdefault(LRANGE_FILL, refused[lranges[0]])
        for name, why in refused.items():
            bl.emit({"kind": "refused", "bench": "redis_defaults", "test": name, "why": why, "quick": quick})
            bl.log("not measured: %s (%s)" % (name, why))
        for srv in servers:
            srv.pause()
        reasons = dict(refused)
        plan = units(refused, whole)
        stopped = next((w for w in map(exited, servers) if w), None)
        for rnd in range(1, rounds + 1):
            for di, depth in enumerate(DEPTHS):
                if stopped:
                    break
                if budget.out():
                    bl.emit({"kind": "skipped", "bench": "redis_defaults", "round": rnd, "pipeline": depth,
                             "why": "time budget spent", "quick": quick})
                    continue
                here = [srv for srv in servers if depth in getattr(srv, "depths", DEPTHS)]
                stopped = one_pass(here, plan, rnd, di, depth, req[depth], timeout, reasons, lines, quick)
                bl.log("round %d P=%d %s" % (rnd, depth, stopped or "done"))
        if stopped:  # the tests with no run at all say why
            bl.emit({"kind": "stopped", "bench": "redis_defaults", "why": stopped, "quick": quick})
            for name in NAMES:
                reasons.setdefault(name, stopped)
        for row in rows(lines, reasons, cfg, cmd_line):
            bl.emit(row)
    finally:
        bl.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
