"""benchlib.py — shared plumbing for step 0's server benchmarks.

Step 0 (measuring). Owns: starting a server (soloist or Debian's
redis-server) on a free loopback port and stopping it, loading a
keyspace, running one redis-benchmark invocation and parsing its --csv
line, and printing one JSON line per measurement. Single-threaded: the
benchmark scripts call it from their one thread, one server run at a
time, so the two servers never compete for the 2 cores at once.

Every JSON line carries its own config (server, test, pipeline, clients,
value size, keyspace, placement) and the run id the runner hands down in
BENCH_RUN_ID, so tools/findings.py can refuse a ratio whose two sides came
from different runs.

There is no Valkey anchor: this mirrors how Valkey's own performance
work is reported (valkey-benchmark, median of runs, ratio against a
baseline measured the same day on the same machine), not its code.
"""

import contextlib
import json
import math
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The two servers. A is soloist unless the runner put a stand-in there
# (BENCH_A_IS names what A really is, so no row can pass off redis-server
# as soloist).
SERVER_FLAGS = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]

# The serving cells of (a) — GET and SET, 3-byte and 512-byte values,
# pipeline 1 and 16 — shared by every benchmark that compares with it.
TESTS = ["GET", "SET"]
SIZES = [3, 512]
PIPELINES = [1, 16]


def env_flag(name):
    return os.environ.get(name, "") not in ("", "0", "no", "false")


_RUN_ID = os.environ.get("BENCH_RUN_ID", "adhoc-%d-%d" % (int(time.time()), os.getpid()))


def run_id():
    """The runner's id for this run (shared by every bench it starts)."""
    return _RUN_ID


def perf_can_count(events):
    """None when `perf stat` counts these events (a list of perf stat
    arguments: -e NAME, --filter ...) on this machine, else why not: the
    benchmarks that count system calls with perf say they could not
    (kind=unavailable) rather than print zeros."""
    try:
        r = subprocess.run(["perf", "stat", "-x,"] + list(events) + ["true"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)
    if r.returncode != 0 or "<not supported>" in r.stderr or "not counted" in r.stderr:
        return r.stderr.strip()[-300:]
    return None


def perf_stat_lines(path):
    """`perf stat -x,` output -> [(event, count)] in the order perf printed
    them (the order of its -e list); count None where perf printed none
    (<not counted>, <not supported>)."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) < 3 or line.startswith("#"):
                continue
            try:
                out.append((parts[2], float(parts[0])))
            except ValueError:
                out.append((parts[2], None))
    return out


@contextlib.contextmanager
def perf_counting(target, events, settle_s=0.2):
    """`perf stat` attached to a running thread or process across a with
    block: target is perf's (["-t", TID] for one thread, ["-p", PID] for
    a process), events its arguments (-e NAME, --filter ...). Yields a
    dict that holds, once the block has ended, "counts": perf_stat_lines'
    list. perf is stopped by SIGINT as the block ends; it says nothing
    when it has attached (its -o header is written at the end), so the
    block starts settle_s after it, which is enough here."""
    fd, out = tempfile.mkstemp(prefix="perf-", suffix=".txt")
    os.close(fd)
    perf = subprocess.Popen(["perf", "stat", "-x,"] + list(events) + [str(a) for a in target] + ["-o", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    got = {}
    try:
        time.sleep(settle_s)
        yield got
    finally:
        perf.send_signal(signal.SIGINT)
        perf.wait(20)
        got["counts"] = perf_stat_lines(out)
        os.unlink(out)


def run_main(main, rows_again=None, commands=None):
    """A benchmark's entry point; returns the exit status. With no
    arguments main() runs the benchmark. -h or --help prints the script's
    opening (its docstring: what it measures, its knobs, its length) and
    runs nothing. `NAME.py --rows FILE` computes a stored run's rows again
    from its run lines (rows_again(FILE)), where the script has that;
    commands maps another option to (how many arguments it takes, the
    function that takes them). Any other argument is refused, not
    ignored: a benchmark runs for minutes, and its knobs are environment
    variables."""
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        print((sys.modules["__main__"].__doc__ or "").strip())
        return 0
    table = dict(commands or {})
    if rows_again:
        table["--rows"] = (1, rows_again)
    if not args:
        return main() or 0
    nargs, fn = table.get(args[0], (None, None))
    if fn is None or len(args) != 1 + nargs:
        forms = "".join(" | %s%s" % (opt, " ARG" * n) for opt, (n, _) in table.items())
        print("usage: %s [-h | --help%s]; its knobs are environment variables (--help lists them)"
              % (os.path.basename(sys.argv[0]), forms), file=sys.stderr)
        return 2
    return fn(*args[1:]) or 0


def rows_again(path, make_rows):
    """A benchmark's --rows FILE, for rows whose wording changed after a
    run: the stored run's raw lines are kept as they are and its rows
    replaced by what make_rows(raw) emits (emit), each row carrying the
    stored run's id, where the old rows began (a run's kind=done line
    may come before or after them)."""
    global _RUN_ID
    with open(path) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    at = next((i for i, ln in enumerate(lines) if ln.get("finding")), len(lines))
    before = [ln for ln in lines[:at] if not ln.get("finding")]
    after = [ln for ln in lines[at:] if not ln.get("finding")]
    tmp = path + ".tmp"
    saved = sys.stdout, _RUN_ID
    with open(tmp, "w") as out:
        for ln in before:
            out.write(json.dumps(ln, sort_keys=True) + "\n")
        sys.stdout = out
        _RUN_ID = next((ln["run_id"] for ln in lines if ln.get("run_id")), _RUN_ID)
        try:
            make_rows(before + after)
        finally:
            sys.stdout, _RUN_ID = saved
        for ln in after:
            out.write(json.dumps(ln, sort_keys=True) + "\n")
    os.replace(tmp, path)


def quick():
    return env_flag("QUICK") or env_flag("BENCH_QUICK")


def servers():
    """[(label, binary, what_it_really_is)] for A (soloist) and B (redis)."""
    a_bin = os.environ.get("SOLOIST_BIN", os.path.join(ROOT, "build", "soloist-server"))
    a_is = os.environ.get("BENCH_A_IS", "soloist")
    b_bin = os.environ.get("REDIS_BIN", shutil.which("redis-server") or "/usr/bin/redis-server")
    return [("soloist", a_bin, a_is), ("redis", b_bin, "redis-server")]


VALKEY_SKIPPED = ("VALKEY_SERVER is not set to a runnable valkey-server: build Valkey from source "
                  "(bench/README.md) and point VALKEY_SERVER at it")


def valkey_binary():
    """VALKEY_SERVER's path, or None when unset or not runnable: a benchmark
    that sets soloist beside Valkey then skips that peer and says so
    (VALKEY_SKIPPED), and measures the others."""
    b = os.environ.get("VALKEY_SERVER", "")
    return b if b and os.access(b, os.X_OK) else None


def valkey_side(base=None, label="valkey"):
    """(label, binary, "valkey-server"): the Valkey peer a benchmark adds to
    its servers when VALKEY_SERVER names one. Without it, prints the
    kind=skipped line (with base's fields) and returns None. base, when
    given, also records the build's --version line (valkey_version)."""
    vk = valkey_binary()
    if vk is None:
        emit(dict(base or {}, kind="skipped", peer="valkey", why=VALKEY_SKIPPED))
        log("Valkey skipped: VALKEY_SERVER not set")
        return None
    if base is not None:
        base["valkey_version"] = server_version(vk)
    return (label, vk, "valkey-server")


def placement():
    """How client and server share the CPUs; recorded on every line."""
    cores = os.cpu_count() or 1
    srv_cpus, cli_cpus = os.environ.get("BENCH_SERVER_CPUS"), os.environ.get("BENCH_CLIENT_CPUS")
    if srv_cpus and cli_cpus:
        # A machine with cores to spare (bench/cores_matrix.sh): the server
        # on its own cores, the load generator on others.
        return {"placement": "pinned", "server_cpus": srv_cpus, "client_cpus": cli_cpus,
                "placement_note": "server on cpus %s, load generator on cpus %s (taskset)" % (srv_cpus, cli_cpus)}
    if env_flag("BENCH_PINNED") and cores >= 2:
        return {"placement": "pinned", "server_cpus": "0", "client_cpus": "1",
                "placement_note": "server pinned to cpu0, redis-benchmark to cpu1 (taskset)"}
    return {"placement": "shared",
            "placement_note": "client and server share %d cores" % cores}


def _taskset(cpus):
    if cpus is None or not shutil.which("taskset"):
        return []
    return ["taskset", "-c", cpus]


def emit(obj):
    """One JSON line on stdout, flushed (the runner may be killed by budget)."""
    obj.setdefault("run_id", run_id())
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _proc_cpu_s(pid):
    """utime+stime of a process in seconds (all its threads), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / tick
    except (OSError, IndexError, ValueError):
        return None


class Server:
    """One server process on a free loopback port; stop() always kills it."""

    live = []

    def __init__(self, label, binary, really, extra_args=()):
        self.label, self.binary, self.really = label, binary, really
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="soloist-bench-")
        pl = placement()
        argv = _taskset(pl.get("server_cpus")) + [binary, "--port", str(self.port)]
        argv += SERVER_FLAGS + list(extra_args)
        self.argv = argv
        self.logf = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(argv, cwd=self.dir, stdout=self.logf,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        Server.live.append(self)
        if not self.wait_ready(5.0):
            tail = self.log_tail()
            self.stop()
            raise RuntimeError("%s (%s) did not answer PING on port %d: %s"
                               % (label, binary, self.port, tail))

    def log_tail(self):
        try:
            with open(os.path.join(self.dir, "server.log")) as f:
                return f.read()[-400:].strip()
        except OSError:
            return ""

    def wait_ready(self, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            try:
                if self.command(b"PING").startswith(b"+PONG"):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def command(self, *args, timeout=5.0):
        """Send one command, return its raw reply bytes (enough for PING,
        INFO, DBSIZE, CONFIG RESETSTAT: one simple or bulk reply)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(resp(args))
            return read_reply(s)

    def info(self, section=None):
        args = [b"INFO"] + ([section.encode()] if section else [])
        return parse_info(self.command(*args))

    def cpu_s(self):
        return _proc_cpu_s(self.proc.pid)

    def config_get(self, name):
        """CONFIG GET name's value as text, or None (a RESP2 pair)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5.0) as s:
            s.sendall(resp([b"CONFIG", b"GET", name.encode()]))
            f = s.makefile("rb")
            if not f.readline().startswith(b"*2"):
                return None
            for _ in range(2):
                n = int(f.readline()[1:])
                v = f.read(n + 2)[:-2]
            return v.decode()

    def pause(self):
        """SIGSTOP: a server waiting its turn in an alternation takes no
        CPU from the one being measured (idle I/O threads may spin)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)

    @contextlib.contextmanager
    def turn(self):
        """Resumed for the with-block, stopped again after it."""
        self.resume()
        try:
            yield self
        finally:
            self.pause()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        if self in Server.live:
            Server.live.remove(self)


def stop_all(*_):
    for s in list(Server.live):
        s.stop()


def install_cleanup():
    """SIGTERM/SIGINT (e.g. the runner's budget) still stops the servers."""
    def handler(signum, _frame):
        stop_all()
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def resp(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def read_reply(s):
    """Read one RESP2 simple/error/integer/bulk reply (no arrays needed)."""
    buf = b""
    while b"\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return buf
        buf += chunk
    if buf[:1] != b"$":
        return buf
    n = int(buf[1:buf.index(b"\r\n")])
    head = buf.index(b"\r\n") + 2
    while n >= 0 and len(buf) < head + n + 2:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf[head:head + max(n, 0)]


def server_version(binary):
    """A server binary's --version line (which build a row measured)."""
    try:
        return subprocess.run([binary, "--version"], stdout=subprocess.PIPE, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None


def populate(server, keyspace, value_size):
    """SET key:%012d for every key redis-benchmark's -r KEYSPACE can draw,
    so GET measures hits on both servers (redis-benchmark's own key names).
    Pipelined in chunks; returns DBSIZE afterwards."""
    value = b"x" * value_size
    chunk = 2000
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(resp([b"FLUSHALL"]))
        _drain_replies(s, 1)
        for start in range(0, keyspace, chunk):
            end = min(keyspace, start + chunk)
            s.sendall(b"".join(resp([b"SET", b"key:%012d" % i, value])
                               for i in range(start, end)))
            _drain_replies(s, end - start)
        s.sendall(resp([b"DBSIZE"]))
        rep = _drain_replies(s, 1)
    return int(rep.strip().lstrip(b":") or 0)


def _drain_replies(s, count):
    """Read `count` one-line replies (+OK, :N, -ERR); returns the last."""
    buf = b""
    seen = 0
    last = b""
    while seen < count:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("server closed the connection while loading")
        buf += chunk
        lines = buf.split(b"\r\n")
        buf = lines.pop()
        for ln in lines:
            if ln.startswith(b"-"):
                raise RuntimeError("server refused: %r" % ln)
        seen += len(lines)
        if lines:
            last = lines[-1]
    return last


def redis_benchmark(server, test, clients, requests, pipeline, value_size=3,
                    keyspace=None, timeout=120, command=None, threads=1, wrap=()):
    """One redis-benchmark run against `server`; returns a dict of its CSV
    figures plus the CPU seconds the server and the client used meanwhile.
    With command (a list of words), that command is run instead of -t test;
    threads > 1 spreads the clients over that many of its threads; wrap is
    a command that runs it (perf stat ... --)."""
    pl = placement()
    argv = _taskset(pl.get("client_cpus")) + list(wrap) + [
        os.environ.get("REDIS_BENCHMARK", "redis-benchmark"),
        "-h", "127.0.0.1", "-p", str(server.port), "-c", str(clients),
        "-n", str(requests), "-P", str(pipeline), "-d", str(value_size), "--csv"]
    if keyspace:
        argv += ["-r", str(keyspace)]
    if threads > 1:
        argv += ["--threads", str(threads)]
    argv += list(command) if command else ["-t", test]
    srv0 = server.cpu_s()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, text=True)
    wall = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    srv1 = server.cpu_s()
    if p.returncode != 0:
        raise RuntimeError("redis-benchmark failed (%d): %s" % (p.returncode, p.stderr[-300:]))
    row = parse_csv(p.stdout)
    if row is None:
        raise RuntimeError("redis-benchmark printed no CSV row: %r" % p.stdout[-300:])
    row["wall_s"] = round(wall, 3)
    row["client_cpu_s"] = round((ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime), 3)
    if srv0 is not None and srv1 is not None:
        row["server_cpu_s"] = round(srv1 - srv0, 3)
    row["argv"] = " ".join(a if a else "''" for a in argv)
    return row


def redis_benchmark_cmd(server, words, clients, requests, pipeline, timeout=120):
    """redis_benchmark running one command given as words."""
    return redis_benchmark(server, None, clients, requests, pipeline, timeout=timeout, command=words)


def parse_csv(text):
    """redis-benchmark 7.0 --csv: a header line, then one quoted line per
    test: "GET","59206.63","0.565","0.208","0.543","0.815","1.055","3.319"."""
    header = None
    for line in text.splitlines():
        cells = [c.strip().strip('"') for c in line.split(",")]
        if len(cells) < 2:
            continue
        if cells[0] == "test":
            header = cells
            continue
        try:
            float(cells[1])
        except ValueError:
            continue
        names = header or ["test", "rps", "avg_latency_ms", "min_latency_ms",
                           "p50_latency_ms", "p95_latency_ms", "p99_latency_ms",
                           "max_latency_ms"]
        row = {"csv_test": cells[0]}
        for k, v in zip(names[1:], cells[1:]):
            row[k] = float(v)
        return row
    return None


def geomean(xs):
    """The geometric mean of positive numbers (0 for none): the mean of
    ratios, so 2x and 0.5x average to 1x."""
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0.0


def median(xs):
    return statistics.median(xs) if xs else None


def turned(items, k):
    """items rotated left by k places: the order of settings or servers
    for round k when each round turns it by one, so that none always runs
    first (after the others had the caches and the machine)."""
    k %= len(items)
    return list(items[k:]) + list(items[:k])


def calibrate_requests(rps, target_s, clients, pipeline, floor=2000):
    """Requests so one run lasts about target_s at this rate, rounded to a
    whole number of rounds (clients x pipeline) and never below `floor`."""
    unit = clients * pipeline
    n = int(rps * target_s)
    n = max(floor, n)
    return max(unit, (n + unit - 1) // unit * unit)


class Budget:
    """The whole script's wall-clock budget; out() says stop now."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.start = time.monotonic()

    def left(self):
        return self.seconds - (time.monotonic() - self.start)

    def out(self):
        return self.left() <= 0


# ------------------------------------------------ steps 4-5: I/O threads
#
# Until the server's I/O threads exist, --io-threads N may be refused or
# accepted and ignored; the benchmarks of steps 4-5 ask thread_server()
# for a server and measure what they can when it says no.

def parse_info(raw):
    """INFO text -> {(section, key): value}."""
    out, sect = {}, ""
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith("# "):
            sect = line[2:].strip().lower()
        elif ":" in line and not line.startswith("$"):
            k, v = line.split(":", 1)
            out[(sect, k.strip())] = v.strip()
    return out


def thread_server(label, binary, threads, extra_args=()):
    """(Server, None) for soloist with `threads` I/O threads (counting the
    main thread), or (None, why) when the server refuses the options or
    ignores them (no INFO iothreads, or io_threads differs). io-threads 1
    needs no thread support and is always given."""
    args = ["--io-threads", str(threads)] + list(extra_args)
    try:
        srv = Server(label, binary, "soloist", args)
    except RuntimeError as e:
        return None, "the server refused %s: %s" % (" ".join(args), str(e).splitlines()[-1][-200:])
    if threads == 1 and not extra_args:
        return srv, None
    got = srv.info("iothreads").get(("iothreads", "io_threads"))
    if got is None:
        srv.stop()
        return None, "the server has no INFO iothreads section (%s accepted but not implemented)" % " ".join(args)
    if got != str(threads):
        srv.stop()
        return None, "INFO iothreads says io_threads:%s after --io-threads %d" % (got, threads)
    return srv, None


def main_thread_cpu(srv):
    """The main thread's CPU seconds three ways (its tid is the pid):
    INFO cpu (getrusage RUSAGE_THREAD, printed to the µs; its user and
    system parts kept apart too), the scheduler's
    run time from /proc/PID/task/PID/schedstat (ns), and utime+stime from
    /proc/PID/task/PID/stat (clock ticks, 10 ms at USER_HZ 100). Also the
    whole process from INFO (RUSAGE_SELF) and /proc/PID/stat."""
    info = srv.info("cpu")
    out = {}
    try:
        out["info_main_user_s"] = float(info[("cpu", "used_cpu_user_main_thread")])
        out["info_main_sys_s"] = float(info[("cpu", "used_cpu_sys_main_thread")])
        out["info_main_s"] = out["info_main_user_s"] + out["info_main_sys_s"]
    except (KeyError, ValueError):
        out["info_main_user_s"] = out["info_main_sys_s"] = out["info_main_s"] = None
    try:
        out["info_process_s"] = float(info[("cpu", "used_cpu_user")]) + float(info[("cpu", "used_cpu_sys")])
    except (KeyError, ValueError):
        out["info_process_s"] = None
    pid = srv.proc.pid
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
            out["schedstat_main_s"] = int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        out["schedstat_main_s"] = None
    try:
        with open("/proc/%d/task/%d/stat" % (pid, pid)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out["ticks_main_s"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        out["ticks_main_s"] = None
    out["ticks_process_s"] = _proc_cpu_s(pid)
    return out


def threads_cpu_s(pid):
    """{tid: (comm, run-time seconds)} from each thread's schedstat (ns)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                comm = f.read().strip()
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                out[int(tid)] = (comm, int(f.read().split()[0]) / 1e9)
        except (OSError, ValueError, IndexError):
            continue
    return out


def serving_cells(base, budget, load):
    """The config of each cell of (a), value size by value size: load(size)
    runs before a size's cells (to fill the keyspace); a cell the budget
    has no time left for is printed as skipped instead of yielded."""
    for size in SIZES:
        load(size)
        for test in TESTS:
            for p in PIPELINES:
                cfg = dict(base, test=test, pipeline=p, value_size=size)
                if budget.out():
                    emit(dict(cfg, kind="skipped", why="time budget spent"))
                    continue
                yield cfg


def sb_binary():
    return os.environ.get("SOLOIST_BENCH_BIN", os.path.join(ROOT, "build", "soloist-bench"))


def soloist_bench_start(port, args):
    """Starts one soloist-bench run with --json -q in the background; its
    report comes from soloist_bench_finish. Two at once keep one class's
    replies off the thread that times another's (bench/big_values.py)."""
    pl = placement()
    argv = _taskset(pl.get("client_cpus")) + [sb_binary(), "-p", str(port), "--json", "-q"] + list(args)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.argv_text = " ".join(argv)
    return p


def soloist_bench_finish(p, timeout=60):
    """-> (report, argv text) of a run soloist_bench_start began."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    if p.returncode != 0:
        raise RuntimeError("soloist-bench failed (%d): %s" % (p.returncode, err[-300:]))
    return json.loads(out), p.argv_text


def soloist_bench(port, args, timeout=60):
    """One soloist-bench run with --json -q; returns (report, argv text)."""
    return soloist_bench_finish(soloist_bench_start(port, args), timeout)


def sb_prefill(srv, keys, size):
    """SET each of soloist-bench's `keys` keys once with `size`-byte values
    (its own key names and value pattern, so its GETs hit and check)."""
    soloist_bench(srv.port, ["-c", "4", "-n", str(keys), "-s", str(size), "-r", "1:0",
                             "--prefill", "--count", "1", "-d", "0"])


# ------------------------- main's CPU per request at a fixed open-loop rate
#
# bench/main_cpu.py's measure, shared with bench/trace_cost.py: a cell
# driven by soloist-bench in open loop at one Poisson rate, the server's
# counters diffed across the run, and main's CPU divided by the commands
# it ran. Every setting of a cell is offered the same load, so the
# figures compare work per request, not what the load generator (which
# shares the cores) managed to send.

def main_cpu_counters(srv):
    """Commands and offload counters from INFO, and the CPU clocks."""
    info = srv.info("everything")

    def num(sect, key):
        v = info.get((sect, key))
        return float(v) if v is not None else None
    c = {"commands": num("stats", "total_commands_processed"),
         "reads": num("stats", "total_reads_processed"),
         "threaded_reads": num("stats", "io_threaded_reads_processed"),
         "threaded_writes": num("stats", "io_threaded_writes_processed"),
         "main_spin_s": (num("iothreads", "io_threads_main_spin_us") / 1e6
                         if num("iothreads", "io_threads_main_spin_us") is not None else None)}
    c.update(main_thread_cpu(srv))
    return c


def counters_diff(c0, c1):
    return {k: (c1[k] - c0[k]) if c0.get(k) is not None and c1.get(k) is not None else None for k in c0}


def per_req_us(x, n):
    return round(x * 1e6 / n, 4) if x is not None and n else None


def open_loop_args(test, p, size, conns, keys):
    """soloist-bench's load shape for one cell (the rate comes apart):
    GET or SET over `keys` keys of `size` bytes, P=p as batches."""
    args = ["-c", str(conns), "-P", str(p), "-n", str(keys), "-s", str(size),
            "-r", "1:0" if test == "GET" else "0:1"]
    return args + (["--batch"] if p > 1 else [])


def closed_loop_rps(srv, args, seconds):
    """Closed-loop rps of one cell (open_loop_args), briefly."""
    rep, _ = soloist_bench(srv.port, list(args) + ["-d", "%gs" % seconds])
    return rep["classes"][0]["rps"]


def a_third_of_slower(closed):
    """The offered rate of a cell measured at one rate for every server: a
    third of the slower server's closed-loop rate ({name: rps}), in whole
    thousands, at least 1000."""
    return max(1000, int(min(closed.values()) / 3 // 1000 * 1000))


def closed_loop_medians(servers, args, reads, seconds):
    """Closed-loop rps of one cell on each of `servers` (name -> a Server
    that is paused between turns): `reads` short reads each, the servers
    alternated, the order turned each round -> ({name: median}, {name:
    [reads]}). One read can land on a server's passing hiccup (a rehash,
    a page-in) and set an offered rate a third off; one such read does
    not move the median of three. The reads still spread widely on
    shared cores: the median steadies the rate, it does not fix it."""
    got = {name: [] for name in servers}
    for r in range(reads):
        for name in turned(list(servers), r):
            with servers[name].turn():
                got[name].append(closed_loop_rps(servers[name], args, seconds))
    return {name: median(v) for name, v in got.items()}, got


def machine_busy_s():
    """CPU seconds every process on the machine has used (all cores'
    non-idle time from /proc/stat), or None: over a run, less the server's
    and the generator's own, it is what others took from the cores."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def main_cpu_run(srv, args, rate, warmup, duration):
    """One open-loop run of a cell (args: open_loop_args) at `rate`, the
    counters diffed across warm-up and run alike: -> the run's figures."""
    c0 = main_cpu_counters(srv)
    busy0, t0 = machine_busy_s(), time.monotonic()
    rep, argv = soloist_bench(srv.port, list(args) + [
        "--rate", str(int(rate)), "--warmup", "%gs" % warmup, "-d", "%gs" % duration, "--drain", "1s"])
    busy1, wall = machine_busy_s(), time.monotonic() - t0
    c1 = main_cpu_counters(srv)
    d = counters_diff(c0, c1)
    cls = rep["classes"][0]
    cmds = d["commands"]
    main_s = d["info_main_s"] if d["info_main_s"] is not None else d["schedstat_main_s"]
    gen_s = rep.get("generator", {}).get("cpu_s")
    proc_s = d["info_process_s"] if d["info_process_s"] is not None else d["ticks_process_s"]
    others = (busy1 - busy0 - proc_s - gen_s if None not in (busy0, busy1, proc_s, gen_s) else None)
    return {
        "rate": rate,
        "rps": cls["rps"], "offered_rps": cls.get("offered_rps"), "requests": cls["requests"],
        "unsent": cls.get("unsent", 0), "errors": cls.get("errors", 0),
        "latency_us": {k: cls["latency_us"][k] for k in ("p50", "p99", "p99.9")},
        "server_commands": int(cmds or 0),
        "main_clock": "INFO used_cpu_*_main_thread" if d["info_main_s"] is not None else "schedstat",
        "main_cpu_s": main_s, "process_cpu_s": d["info_process_s"],
        "main_us_per_request": per_req_us(main_s, cmds),
        # The part of it main spent turning its loop idle while results
        # were owed (INFO io_threads_main_spin_us, wall time of such turns,
        # on CPU since the loop did not block), and what is left: main's
        # work per request, the serial share a machine with cores to spare
        # for the spin would see.
        "main_spin_us_per_request": per_req_us(d["main_spin_s"], cmds),
        "main_work_us_per_request": (per_req_us(max(main_s - d["main_spin_s"], 0.0), cmds)
                                     if main_s is not None and d["main_spin_s"] is not None else None),
        "process_us_per_request": per_req_us(proc_s, cmds),
        "clocks_main_us_per_request": {k: per_req_us(d[k], cmds)
                                       for k in ("info_main_s", "schedstat_main_s", "ticks_main_s")},
        "reads_per_request": round(d["reads"] / cmds, 4) if d["reads"] is not None and cmds else None,
        "threaded_reads_per_request": (round(d["threaded_reads"] / cmds, 4)
                                       if d["threaded_reads"] is not None and cmds else None),
        "threaded_writes_per_request": (round(d["threaded_writes"] / cmds, 4)
                                        if d["threaded_writes"] is not None and cmds else None),
        "generator_cpu_s": gen_s, "argv": argv,
        # Everyone else's CPU over the run (the machine's non-idle time less
        # the server's and the generator's): what a busy machine took.
        "others_cpu_s": round(others, 3) if others is not None else None,
        "wall_s": round(wall, 3),
    }


# --------------------------------------- steps 4-5: one switch, A against B
#
# bench/watermark.py and bench/poll_offload.py measure one soloist switch
# (a CONFIG SET, not a Valkey option) at io-threads 2 and 4 forced on: one
# server per thread count, started once, the switch flipped between runs,
# so the binary, the keyspace and its memory are the same for both sides.

def forced_servers(label, threads_list, extra_args=()):
    """{threads: Server} with io-threads-always-active yes, each paused."""
    (_, binary, _), _ = servers()
    out = {}
    for t in threads_list:
        srv, why = thread_server("%s-t%d" % (label, t), binary, t,
                                 ["--io-threads-always-active", "yes"] + list(extra_args))
        if srv is None:
            raise RuntimeError(why)
        srv.pause()
        out[t] = srv
    return out


def switch_counters(srv):
    """The counters an A/B run diffs: main's CPU (INFO cpu, RUSAGE_THREAD),
    its idle spin, commands, and the step 4-5 counters of INFO stats and
    INFO iothreads (0 where a build lacks them)."""
    i = srv.info()

    def f(sect, k):
        try:
            return float(i.get((sect, k), 0) or 0)
        except ValueError:
            return 0.0
    return {"main_cpu_s": f("cpu", "used_cpu_sys_main_thread") + f("cpu", "used_cpu_user_main_thread"),
            "process_cpu_s": f("cpu", "used_cpu_sys") + f("cpu", "used_cpu_user"),
            "spin_s": f("iothreads", "io_threads_main_spin_us") / 1e6,
            "cmds": f("stats", "total_commands_processed"),
            "polls": f("iothreads", "io_threads_polls"),
            "during_write": f("stats", "commands_during_write"),
            "bytes_during_write": f("stats", "reply_bytes_during_write"),
            "write_waits": f("iothreads", "io_threads_write_waits"),
            "write_wait_s": f("iothreads", "io_threads_write_wait_us") / 1e6}


# switch_rounds' rounds with perf counting, after the timed ones: two, so
# that a count's row can show its rounds' spread.
COUNTED_ROUNDS = 2


def counted_field(name):
    """The run-line field of an event switch_run counted on main, per request."""
    return "main_%s_per_req" % name


def switch_run(srv, cell, requests=None, seconds=None, count=None):
    """One run of a cell with the counters diffed across it: rps and
    per-request figures (main's CPU with its idle spin and less it).
    A cell's driver is redis-benchmark (closed loop, -P as batches of
    `requests`) or soloist-bench ("sb": closed loop keeping `pipeline`
    requests in flight on every connection, for `seconds`). count, if
    given, is (names, perf stat arguments): those events counted on main
    across the run, each per request under counted_field(NAME)."""
    with perf_counting(["-t", srv.proc.pid], count[1]) if count else contextlib.nullcontext({}) as perf:
        c0 = switch_counters(srv)
        row, requests = switch_drive(srv, cell, requests, seconds)
        c1 = switch_counters(srv)
    d = {k: c1[k] - c0[k] for k in c0}
    cmds = max(d["cmds"] - 1, 1)  # the first INFO counts itself
    got = {"rps": row["rps"], "p50_ms": row.get("p50_latency_ms"), "requests": requests,
           "main_cpu_us_per_req": round((d["main_cpu_s"] - d["spin_s"]) * 1e6 / cmds, 4),
           "main_cpu_us_per_req_with_spin": round(d["main_cpu_s"] * 1e6 / cmds, 4),
           "idle_turns_us_per_req": round(d["spin_s"] * 1e6 / cmds, 4),
           "process_cpu_us_per_req": round(d["process_cpu_s"] * 1e6 / cmds, 4),
           "polls_per_req": round(d["polls"] / cmds, 5),
           "during_write_share": round(d["during_write"] / cmds, 5),
           "bytes_during_write_per_req": round(d["bytes_during_write"] / cmds, 1),
           "write_waits_per_req": round(d["write_waits"] / cmds, 5),
           "write_wait_us_per_req": round(d["write_wait_s"] * 1e6 / cmds, 4)}
    if count:
        got.update({counted_field(name): round((v or 0.0) / cmds, 4)
                    for name, (_, v) in zip(count[0], perf["counts"])})
    return got


def switch_drive(srv, cell, requests, seconds):
    """A cell's driver run -> (its row: rps, p50_latency_ms; requests)."""
    if cell.get("driver") == "sb":
        rep, _ = soloist_bench(srv.port, ["-c", str(cell["clients"]), "-P", str(cell["pipeline"]),
                                          "-n", str(cell["keyspace"]), "-s", str(cell["size"]), "-r", "1:0",
                                          "-d", "%.2fs" % seconds], timeout=seconds + 60)
        cls = rep["classes"][0]
        if cls["errors"] or cls["bad_values"]:
            raise RuntimeError("soloist-bench saw %d errors, %d bad values" % (cls["errors"], cls["bad_values"]))
        row = {"rps": cls["rps"], "p50_latency_ms": cls["latency_us"]["p50"] / 1000}
        requests = cls["requests"]
    else:
        row = redis_benchmark(srv, cell["test"], cell["clients"], requests, cell["pipeline"], cell["size"],
                              keyspace=cell.get("keyspace"))
    return row, requests


def switch_rounds(srvs, settings, apply, cells, runs, target_s, bench, quick_run, prepare=None, count=None):
    """Runs every cell (dicts with threads, test, clients, pipeline, size,
    keyspace; driver "sb" for soloist-bench) under every setting: per cell
    a calibration or warm-up run of each setting (not kept), then `runs` rounds with the settings alternated
    and the order turned each round. apply(srv, setting) flips the
    switch; prepare(srv, cell), if given, runs first (a cell's keyspace).
    count, if given, is switch_run's: then COUNTED_ROUNDS more rounds
    follow with perf counting those events on main, not among the timed
    ones (a tracepoint adds to each call's cost), as kind=counted lines
    holding the counts alone. Emits and returns the lines."""
    lines = []
    for cell in cells:
        srv = srvs[cell["threads"]]
        with srv.turn():
            if prepare:
                prepare(srv, cell)
            sizes = {}
            for rnd in range(runs + 1 + (COUNTED_ROUNDS if count else 0)):
                counted = rnd > runs
                for setting in turned(settings, rnd):
                    apply(srv, setting)
                    if cell.get("driver") == "sb":  # timed runs: round 0 is a short warm-up
                        got = switch_run(srv, cell, seconds=target_s / 3 if rnd == 0 else target_s,
                                         count=count if counted else None)
                    else:  # counted runs: round 0 sizes them
                        n = sizes.get(setting, cell["clients"] * cell["pipeline"] * 50)
                        got = switch_run(srv, cell, requests=n, count=count if counted else None)
                        if rnd == 0:
                            sizes[setting] = calibrate_requests(got["rps"], target_s, cell["clients"],
                                                                cell["pipeline"], floor=cell["clients"] * 8)
                    if rnd == 0:
                        continue
                    if counted:
                        got = dict({counted_field(name): got[counted_field(name)] for name in count[0]},
                                   requests=got["requests"])
                    ln = dict(got, kind="counted" if counted else "run", bench=bench, setting=setting, round=rnd,
                              quick=quick_run, **{k: cell[k] for k in ("threads", "test", "clients", "pipeline",
                                                                       "size")}, **placement())
                    emit(ln)
                    lines.append(ln)
    return lines


def switch_runs(lines, cell, setting, field):
    """One field of a cell's runs under one setting."""
    return [ln[field] for ln in lines if ln["setting"] == setting and ln.get(field) is not None
            and all(ln[k] == cell[k] for k in ("threads", "test", "pipeline", "size"))]


def switch_median(lines, cell, setting, field):
    return median(switch_runs(lines, cell, setting, field))


def switch_spread(lines, cell, field, names=("on", "off"), fmt="%.0f", lower=False, settings=("on", "off")):
    """' (runs a–b vs c–d; verdict)' for one field of a cell's two
    settings (named in the verdict by names), worded as tools/findings.py
    words a spread: 'NAME faster in
    every run' (with lower, for a cost: 'NAME lower in every run') when
    every run of one side beats every run of the other, 'run ranges
    overlap' when they do not."""
    a, b = (switch_runs(lines, cell, s, field) for s in settings)
    if len(a) < 2 or len(b) < 2:
        return " (one run)"
    span = lambda v: "%s–%s" % (fmt % min(v), fmt % max(v))  # noqa: E731
    if min(a) > max(b) or min(b) > max(a):
        high = 0 if min(a) > max(b) else 1
        word = "%s lower in every run" % names[1 - high] if lower else "%s faster in every run" % names[high]
    else:
        word = "run ranges overlap"
    return " (runs %s vs %s; %s)" % (span(a), span(b), word)
