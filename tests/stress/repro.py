#!/usr/bin/env python3
"""Replays the reproducers in tests/stress/repro/ against a server.

Owns: one server per reproducer (on a free port, log under
build/stress-logs/repro/). A reproducer is a server bug that fuzzing or
the stress run found, written down so that the suite keeps failing until
src/ is fixed; it then stays as a regression test.

File format (NAME.txt; '#' lines are the description):

    server-args: --proto-max-bulk-len 8mb     optional, the server's flags
    send: b"*1\\r\\n$4\\r\\nPI"                  one write (a Python bytes
    send: b"NG\\r\\n"                           literal); several = several
                                               writes 50 ms apart
    expect: b"+PONG\\r\\n"                      the exact bytes the server
                                               must send back (optional)
    expect-close: yes|no                       must it close the connection?

Checks, all in one PASS/FAIL line per file: the replies equal `expect`
(read until the server closes or is quiet for 1 s, 10 s at most), the
close matches `expect-close`, the server still answers PING on a fresh
connection, exits 0 on SIGTERM, and its log holds no sanitizer report.

    python3 tests/stress/repro.py --server build/asan/soloist-server tests/stress/repro/*.txt
"""

import argparse
import ast
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import harness  # noqa: E402


def load(path):
    spec = {"args": [], "send": [], "expect": None, "close": None}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, val = line.partition(":")
            val = val.strip()
            if key == "server-args":
                spec["args"] += val.split()
            elif key == "send":
                spec["send"].append(ast.literal_eval(val))
            elif key == "expect":
                spec["expect"] = ast.literal_eval(val)
            elif key == "expect-close":
                spec["close"] = val == "yes"
            else:
                raise ValueError("%s:%d: unknown key %r" % (path, n, key))
    return spec


def run(path, binary, log_dir):
    spec = load(path)
    srv = harness.Server(binary=binary, extra=spec["args"], name="repro", log_dir=log_dir).start()
    problems = []
    try:
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        for i, chunk in enumerate(spec["send"]):
            if i:
                time.sleep(0.05)
            try:
                s.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
        got, closed = bytearray(), False
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            s.settimeout(1.0)
            try:
                c = s.recv(1 << 20)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not c:
                closed = True
                break
            got += c
        s.close()
        if spec["expect"] is not None and bytes(got) != spec["expect"]:
            problems.append("got %s, expected %s" % (harness.show(bytes(got)), harness.show(spec["expect"])))
        if spec["close"] is not None and closed != spec["close"]:
            problems.append("connection %s" % ("closed" if closed else "stayed open"))
        if not srv.alive():
            problems.append("server died (exit %s)" % srv.proc.returncode)
        else:
            try:
                c = srv.conn(timeout=5)
                r = c.request("PING")
                c.close()
                if r != b"+PONG\r\n":
                    problems.append("PING answered %s" % harness.show(r))
            except Exception as e:  # noqa: BLE001
                problems.append("PING on a fresh connection: %s" % e)
    finally:
        rc = srv.stop(timeout=30)
    if rc != 0 and not any("died" in p for p in problems):
        problems.append("exit status %s after SIGTERM" % rc)
    rep = harness.sanitizer_report(srv.log_text())
    if rep:
        problems.append("sanitizer: %s (log %s)" % (rep.strip(), srv.log_path))
    return problems


def main():
    ap = argparse.ArgumentParser(description="replay tests/stress/repro/*.txt")
    ap.add_argument("--server", default=os.path.join(REPO, "build", "asan", "soloist-server"))
    ap.add_argument("--log-dir", default=os.path.join(REPO, "build", "stress-logs", "repro"))
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.log_dir, exist_ok=True)
    bad = 0
    for path in a.files:
        name = os.path.basename(path)
        try:
            problems = run(path, os.path.abspath(a.server), a.log_dir)
        except Exception as e:  # noqa: BLE001 - a broken reproducer is a failure too
            problems = ["could not run: %s" % e]
        if problems:
            bad += 1
            print("FAIL repro %s: %s" % (name, "; ".join(problems)))
        else:
            print("PASS repro %s" % name)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
