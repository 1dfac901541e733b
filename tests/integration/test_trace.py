"""TRACE end to end: a recording of a real server, read back as JSON.

The server runs with four threads forced on (--io-threads 4
--io-threads-always-active yes, after whatever SOLOIST_SERVER_ARGS the
suite gives), three connections send about two hundred SETs and GETs, one
at a time and in pipelines, while TRACE records; then TRACE DUMP's reply
is parsed with json.loads, strictly (NaN and Infinity refused), and held
to what the server did:

  - the tracks: pid 1, one per thread, named main, io-thread-1..3;
  - every request (a read that parsed commands) of each connection has
    its read, its run of commands and its write, in that order in time,
    drawn as one arrow (flow events s, t and f sharing an id), and the
    commands the requests carry add up to the commands sent (a client's
    last request may lack its arrow: its write's end can be recorded
    after STOP);
  - the commands ran on main, and the reads and writes on the threads
    INFO iothreads counts them on (jobs per worker, before and after the
    recording; the hand-offs made outside the recording that a worker
    may count inside it are the only slack);
  - every arrow pairs up: one start, one step, one end.

Owns its server. Skipped against redis-server (TRACE is soloist's own).
Valkey anchors: none.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CONNS = 3
ONE_BY_ONE = 12      # SET/GET pairs sent one at a time, per connection
PIPELINES = 2        # pipelines per connection...
PIPELINE_PAIRS = 10  # ...of this many SET/GET pairs


def bulk(reply):
    """The payload of a RESP bulk string reply."""
    head, _, rest = reply.partition(b"\r\n")
    if not head.startswith(b"$"):
        raise AssertionError("not a bulk string: %r" % reply[:200])
    n = int(head[1:])
    return rest[:n]


def worker_jobs(conn):
    """INFO iothreads' jobs per worker: {tid: {"reads": n, "writes": n}}."""
    out = {}
    for line in conn.request("INFO", "iothreads").decode().split("\r\n"):
        if line.startswith("io_thread_"):
            name, _, fields = line.partition(":")
            tid = int(name[len("io_thread_"):])
            out[tid] = {k: int(v) for k, v in (f.split("=") for f in fields.split(","))}
    return out


def refuse(name):
    raise ValueError("not strict JSON: %s" % name)


class TraceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if harness.server_kind(harness.target_binary()) == "redis":
            raise unittest.SkipTest("TRACE is soloist's own command")
        cls.server = harness.Server(name="trace", extra=["--io-threads", "4", "--io-threads-always-active", "yes"])
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def tearDown(self):
        self.assertTrue(self.server.alive(), self.server.log_tail())

    def load(self, conns, ids):
        """Sends the SETs and GETs; returns the commands each client sent."""
        sent = {i: 0 for i in ids}
        for r in range(ONE_BY_ONE):
            for c, i in zip(conns, ids):
                self.assertEqual(c.request("SET", "k%d:%d" % (i, r), "v%d" % r), b"+OK\r\n")
                self.assertEqual(c.request("GET", "k%d:%d" % (i, r)), b"$%d\r\nv%d\r\n" % (len("v%d" % r), r))
                sent[i] += 2
        for p in range(PIPELINES):
            for c, i in zip(conns, ids):
                batch = []
                for k in range(PIPELINE_PAIRS):
                    batch += [harness.encode("SET", "p%d:%d:%d" % (i, p, k), "x" * k),
                              harness.encode("GET", "p%d:%d:%d" % (i, p, k))]
                c.send(b"".join(batch))
            for c, i in zip(conns, ids):
                replies = c.read_replies(2 * PIPELINE_PAIRS)
                self.assertEqual(replies[-1], b"$%d\r\n%s\r\n" % (PIPELINE_PAIRS - 1, b"x" * (PIPELINE_PAIRS - 1)))
                sent[i] += 2 * PIPELINE_PAIRS
        return sent

    def record(self):
        ctl = self.server.conn()
        conns = [self.server.conn() for _ in range(CONNS)]
        ids = [int(c.request("CLIENT", "ID")[1:-2]) for c in conns]
        before = worker_jobs(ctl)
        self.assertEqual(ctl.request("TRACE", "START", "10000"), b"+OK\r\n")
        sent = self.load(conns, ids)
        self.assertEqual(ctl.request("TRACE", "STOP"), b"+OK\r\n")
        after = worker_jobs(ctl)
        dump = ctl.request("TRACE", "DUMP")
        for c in conns + [ctl]:
            c.close()
        trace = json.loads(bulk(dump).decode("ascii"), parse_constant=refuse)
        return trace, ids, sent, before, after

    def test_trace_follows_every_request(self):
        trace, ids, sent, before, after = self.record()
        self.assertEqual(trace["otherData"]["dropped"], "0")
        events = trace["traceEvents"]
        for e in events:
            self.assertEqual(e["pid"], 1, e)
            self.assertIsInstance(e["tid"], int, e)
        names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        self.assertEqual(names, {0: "main", 1: "io-thread-1", 2: "io-thread-2", 3: "io-thread-3"})

        spans = {}  # (name, tid, ts) -> the X event
        for e in events:
            if e["ph"] == "X":
                spans[(e["name"], e["tid"], e["ts"])] = e
        runs = [e for e in events if e["ph"] == "X" and e["name"] == "commands"]
        self.assertTrue(runs)
        self.assertEqual({e["tid"] for e in runs}, {0}, "commands ran off main")

        flows = {}
        for e in events:
            if e["ph"] in "stf" and e["name"] == "request":
                flows.setdefault(e["id"], {}).setdefault(e["ph"], []).append(e)
        for fid, f in flows.items():
            self.assertEqual(sorted((ph, len(v)) for ph, v in f.items()), [("f", 1), ("s", 1), ("t", 1)],
                             "arrow %s does not pair up" % fid)

        for client in ids:
            reads = [e for e in events if e["ph"] == "X" and e["name"] == "read"
                     and e["args"]["client"] == client and e["args"]["commands"] > 0]
            mine = [f for f in flows.values() if f["s"][0]["args"]["client"] == client]
            expected = sent[client]
            # A worker records a write's end after its write() returns, so
            # the client may hold the last reply, and STOP may have ended
            # the recording, before that end is recorded: only the
            # client's last request may lack its arrow.
            last = max(reads, key=lambda e: e["ts"])
            if len(mine) == len(reads) - 1:
                self.assertNotIn(last["ts"], {f["s"][0]["ts"] for f in mine},
                                 "client %d: a request other than the last has no arrow" % client)
                expected -= last["args"]["commands"]
            self.assertEqual(len(mine), len(reads) - (expected != sent[client]),
                             "client %d: %d requests, %d arrows" % (client, len(reads), len(mine)))
            self.assertEqual(sum(f["s"][0]["args"]["commands"] for f in mine), expected)
            for f in mine:
                s, t, fin = f["s"][0], f["t"][0], f["f"][0]
                read = spans[("read", s["tid"], s["ts"])]
                run = spans[("commands", t["tid"], t["ts"])]
                write = spans[("write", fin["tid"], fin["ts"])]
                self.assertEqual((read["args"]["client"], run["args"]["client"], write["args"]["client"]),
                                 (client, client, client))
                self.assertEqual(t["tid"], 0)
                self.assertLessEqual(read["ts"] + read["dur"], run["ts"], "the run began before its read ended")
                self.assertLessEqual(run["ts"] + run["dur"], write["ts"], "the write began before its run ended")

        traced = {}
        for e in events:
            if e["ph"] == "X" and e["name"] in ("read", "write") and e["tid"] > 0:
                key = e["name"] + "s"
                traced.setdefault(e["tid"], {"reads": 0, "writes": 0})[key] += 1
        self.assertTrue(traced, "no read or write ran on a worker")
        for kind in ("reads", "writes"):
            slack = 0
            for tid in after:
                did = after[tid][kind] - before.get(tid, {}).get(kind, 0)
                seen = traced.get(tid, {}).get(kind, 0)
                self.assertGreaterEqual(did, seen, "io_thread_%d: INFO %s %d, the trace %d" % (tid, kind, did, seen))
                slack += did - seen
            # Hand-offs counted between the two samples and never recorded.
            # Reads: START's (its command turns recording on) and the last
            # INFO's. Writes: the first INFO's and STOP's (recording is off by
            # then), and the CLIENT ID replies: a worker counts a job after
            # its write, so a client may have its reply, and the next sample
            # may be taken, before the count lands; and each connection's
            # last write, whose end may be recorded after STOP (above).
            most = 2 if kind == "reads" else 2 + 2 * CONNS
            self.assertLessEqual(slack, most, "%s counted by INFO and missing from the trace" % kind)

    def test_trace_status_and_errors(self):
        c = self.server.conn()
        self.assertEqual(c.request("TRACE", "START", "0"),
                         b"-ERR TRACE START duration must be between 1 and 60000 milliseconds\r\n")
        self.assertEqual(c.request("TRACE", "START", "x"), b"-ERR value is not an integer or out of range\r\n")
        self.assertEqual(c.request("TRACE", "START", "1", "2"),
                         b"-ERR wrong number of arguments for 'trace|start' command\r\n")
        self.assertEqual(c.request("TRACE", "NOPE"), b"-ERR unknown subcommand 'NOPE'. Try TRACE HELP.\r\n")
        self.assertEqual(c.request("TRACE"), b"-ERR wrong number of arguments for 'trace' command\r\n")
        self.assertEqual(c.request("TRACE", "START", "60000"), b"+OK\r\n")
        status = harness.parse(c.request("TRACE", "STATUS"))
        fields = dict(zip(status[::2], status[1::2]))
        self.assertEqual(fields[b"recording"], 1)
        self.assertEqual(fields[b"threads"], 4)
        self.assertEqual(fields[b"buffer_events"], 65536)
        self.assertTrue(0 < fields[b"remaining_ms"] <= 60000)
        self.assertEqual(c.request("TRACE", "STOP"), b"+OK\r\n")
        status = harness.parse(c.request("TRACE", "STATUS"))
        fields = dict(zip(status[::2], status[1::2]))
        self.assertEqual((fields[b"recording"], fields[b"remaining_ms"]), (0, 0))
        c.close()


if __name__ == "__main__":
    unittest.main()
