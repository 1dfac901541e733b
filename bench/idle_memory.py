#!/usr/bin/env python3
"""idle_memory.py — what an idle connection costs in resident memory.

Step 0 benchmark. Owns one measurement: the growth of a server's resident
set (VmRSS) divided by the number of connections it holds, at 10,000
connections, for soloist, for Debian's redis-server 7.0 and, when
VALKEY_SERVER names a valkey-server built from source, for Valkey (the
2024 tree), each started the same way, one after the other in one run.
Two moments per server:

  connected   every connection accepted, none has sent a byte;
  after_ping  each then sent one PING and read the PONG, and all stayed
              quiet for IDLE_S seconds (long enough for the servers'
              crons to shrink or give back per-client buffers).

The baseline is the RSS after one throwaway PING connection, before the
10,000 arrive. Both servers run with --maxclients above the count; this
script raises its own open-files limit (soft to hard) so that it and the
servers it starts can hold the sockets.

Prints JSON lines: kind=run per server and moment (rss_base_bytes,
rss_bytes, connections, bytes_per_conn), kind=skipped when Valkey is
not there. Knobs: VALKEY_SERVER, QUICK=1 (2,000
connections), BENCH_CONNS, BENCH_IDLE_S. Single-threaded; loopback only.

Valkey anchor: none in code; the behaviour measured is Valkey 8's shared
query buffer (Valkey pull request #258) and Redis 7's reply buffer that
shrinks to its peak (Redis pull request #9822).
"""

import os
import resource
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS for pid %d" % pid)


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    if soft < need:
        raise RuntimeError("open-files limit %d is below the %d this run needs" % (soft, need))


def connected_clients(srv):
    return int(srv.info("clients").get(("clients", "connected_clients"), "0"))


def open_conns(srv, n, deadline):
    """n connected sockets, each accepted by the server (connected_clients
    counts them), opened in batches so the listen backlog never overflows."""
    socks = []
    base = connected_clients(srv)
    while len(socks) < n:
        for _ in range(min(256, n - len(socks))):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.connect(("127.0.0.1", srv.port))
            socks.append(s)
        while connected_clients(srv) < base + len(socks):
            if time.monotonic() > deadline:
                raise RuntimeError("%s accepted %d of %d connections in time"
                                   % (srv.label, connected_clients(srv) - base, len(socks)))
            time.sleep(0.02)
    return socks


def ping_all(socks, deadline):
    """One PING on every socket, then every PONG read back."""
    for s in socks:
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
    want = {s.fileno(): s for s in socks}
    got = {fd: b"" for fd in want}
    poller = select.poll()
    for fd in want:
        poller.register(fd, select.POLLIN)
    while want:
        if time.monotonic() > deadline:
            raise RuntimeError("%d PONGs missing" % len(want))
        for fd, _ev in poller.poll(100):
            got[fd] += want[fd].recv(64)
            if got[fd].endswith(b"\r\n"):
                if got[fd] != b"+PONG\r\n":
                    raise RuntimeError("unexpected reply %r" % got[fd])
                poller.unregister(fd)
                del want[fd]


def measure(label, binary, really, conns, idle_s, base):
    srv = bl.Server(label, binary, really, extra_args=["--maxclients", str(conns + 100)])
    socks = []
    try:
        srv.command(b"PING")
        time.sleep(0.3)
        rss0 = rss_bytes(srv.proc.pid)
        deadline = time.monotonic() + 120
        socks = open_conns(srv, conns, deadline)
        time.sleep(0.5)
        for moment in ("connected", "after_ping"):
            if moment == "after_ping":
                ping_all(socks, deadline)
                time.sleep(idle_s)
            rss = rss_bytes(srv.proc.pid)
            bl.emit(dict(base, kind="run", server=label, server_is=really, moment=moment,
                         connections=conns, rss_base_bytes=rss0, rss_bytes=rss,
                         bytes_per_conn=(rss - rss0) / conns))
    finally:
        for s in socks:
            s.close()
        srv.stop()


def main():
    bl.install_cleanup()
    q = bl.quick()
    conns = int(os.environ.get("BENCH_CONNS", "2000" if q else "10000"))
    idle_s = float(os.environ.get("BENCH_IDLE_S", "3"))
    raise_nofile(conns + 200)
    base = {"bench": "idle_memory", "cores": os.cpu_count(), "quick": q, "idle_s": idle_s,
            "maxclients": conns + 100}
    sides = bl.servers() + [s for s in [bl.valkey_side(base)] if s]
    for label, binary, really in sides:
        bl.log("%s: %d idle connections" % (label, conns))
        measure(label, binary, really, conns, idle_s, base)


if __name__ == "__main__":
    sys.exit(bl.run_main(main))
