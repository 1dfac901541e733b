"""tools/pinned-source.py against a fixture clone, a fixture cache and a
fake GitHub on loopback; and the real pin table (offline)."""

import http.server
import json
import os
import subprocess
import sys
import threading
import unittest

from fixtures import ROOT, TOOLS, UPSTREAM_V1, Upstream

SCRIPT = os.path.join(TOOLS, "pinned-source.py")


def ps(*args, env=None):
    r = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, timeout=60)
    return r.returncode, r.stdout, r.stderr


class RealPins(unittest.TestCase):
    def test_ref_valkey_prints_the_pinned_commit(self):
        env = dict(os.environ)
        env.pop("SOLOIST_PINS", None)
        rc, out, err = ps("ref", "valkey", env=env)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "valkey  valkey-io/valkey  8891441ab\n")

    def test_ref_redis(self):
        env = dict(os.environ)
        env.pop("SOLOIST_PINS", None)
        rc, out, _ = ps("ref", "redis", env=env)
        self.assertEqual((rc, out), (0, "redis  redis/redis  a176d1225\n"))


class WithClone(unittest.TestCase):
    def setUp(self):
        self.up = Upstream()

    def tearDown(self):
        self.up.cleanup()

    def test_show_prints_the_pinned_commit_not_head(self):
        rc, out, err = ps("show", "valkey", "src/io_threads.c", "-r", "13:15", env=self.up.env())
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), [
            "    13  line 13 of the pinned file",
            "    14  int trySendReadToIOThreads(client *c) {",
            "    15  line 15 of the pinned file",  # HEAD says CHANGED; the pin does not
        ])

    def test_show_whole_file_and_open_range(self):
        rc, out, _ = ps("show", "valkey", "src/io_threads.c", env=self.up.env())
        self.assertEqual(rc, 0)
        self.assertEqual(len(out.splitlines()), 30)
        rc, out, _ = ps("show", "valkey", "src/io_threads.c", "-r", "29:", env=self.up.env())
        self.assertEqual(out.splitlines(), ["    29  line 29 of the pinned file", "    30  line 30 of the pinned file"])

    def test_check_contains(self):
        rc, out, _ = ps("check", "valkey", "src/io_threads.c:14", "--contains", "trySendReadToIOThreads",
                        env=self.up.env())
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("ok: "), out)
        rc, out, _ = ps("check", "valkey", "src/io_threads.c:13", "--contains", "trySendReadToIOThreads",
                        env=self.up.env())
        self.assertEqual(rc, 1)
        self.assertEqual(len(out.splitlines()), 1)
        self.assertIn("does not contain", out)

    def test_check_range_contains_and_hash(self):
        rc, h, _ = ps("hash", "valkey", "src/io_threads.c:14-16", env=self.up.env())
        self.assertEqual(rc, 0)
        rc, out, _ = ps("check", "valkey", "src/io_threads.c:14-16", "--sha256", h.strip(),
                        "--contains", "line 16", env=self.up.env())
        self.assertEqual(rc, 0, out)
        rc, out, _ = ps("check", "valkey", "src/io_threads.c:14-17", "--sha256", h.strip(), env=self.up.env())
        self.assertEqual(rc, 1)
        self.assertIn("sha256", out)

    def test_errors_are_one_line_each(self):
        cases = [
            (("show", "nope", "src/io_threads.c"), 2, "unknown pin 'nope'"),
            (("show", "valkey", "src/missing.c"), 2, "has no file src/missing.c"),
            (("show", "valkey", "src/io_threads.c", "-r", "25:40"), 2, "line out of range"),
            (("check", "valkey", "src/io_threads.c:31", "--contains", "x"), 2, "line out of range"),
            (("show", "valkey", "../etc/passwd"), 2, "relative to the repository root"),
            (("check", "valkey", "src/io_threads.c", "--contains", "x"), 2, "malformed location"),
        ]
        for args, code, text in cases:
            rc, out, err = ps(*args, env=self.up.env())
            self.assertEqual(rc, code, (args, out, err))
            self.assertIn(text, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertNotIn("Traceback", err)

    def test_fetch_fills_the_cache_then_works_without_the_clone(self):
        rc, out, err = ps("fetch", "valkey", "src/io_threads.c", env=self.up.env())
        self.assertEqual(rc, 0, err)
        self.assertIn("cached valkey src/io_threads.c", out)
        rc, out, err = ps("show", "valkey", "src/io_threads.c", "-r", "14:14", env=self.up.env(clone=False))
        self.assertEqual(rc, 0, err)
        self.assertIn("trySendReadToIOThreads", out)

    def test_clone_without_the_commit_falls_through(self):
        with open(self.up.pins_path) as f:
            pins = json.load(f)
        pins["valkey"]["sha"] = "0123456789"
        with open(self.up.pins_path, "w") as f:
            json.dump(pins, f)
        rc, out, err = ps("show", "valkey", "src/io_threads.c", env=self.up.env())
        self.assertEqual(rc, 3)
        self.assertIn("lacks commit 0123456789", err)
        self.assertIn("not available offline", err)

    def test_library_api(self):
        sys.path.insert(0, TOOLS)
        import anchors  # loads pinned-source.py as a module
        p = anchors.pinned_source
        src = p.PinnedSource(pins=p.load_pins(self.up.pins_path), offline=True,
                             source_dir=self.up.clones, cache_dir=self.up.cache)
        self.assertEqual(src.full_sha("valkey"), self.up.shas[0])
        self.assertEqual(src.span("valkey", "src/io_threads.c", 14, 14), ["int trySendReadToIOThreads(client *c) {"])
        self.assertEqual(p.span_sha256(["a", "b"]), __import__("hashlib").sha256(b"a\nb\n").hexdigest())
        self.assertEqual(p.gutter(["x"], 7), "     7  x")


class Offline(unittest.TestCase):
    def setUp(self):
        self.up = Upstream()

    def tearDown(self):
        self.up.cleanup()

    def test_offline_no_clone_no_cache_says_so_and_how(self):
        rc, out, err = ps("show", "valkey", "src/io_threads.c", env=self.up.env(clone=False))
        self.assertEqual(rc, 3)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for text in ("not available offline", "no clone", "not in the cache", "SOLOIST_SOURCE_DIR",
                     "git clone https://github.com/valkey-io/valkey"):
            self.assertIn(text, err)

    def test_network_refused_is_one_line(self):
        env = self.up.env(clone=False, offline=False, SOLOIST_GITHUB_API="http://127.0.0.1:9",
                          SOLOIST_GITHUB_RAW="http://127.0.0.1:9")
        rc, out, err = ps("show", "valkey", "src/io_threads.c", env=env)
        self.assertEqual(rc, 3, err)
        self.assertIn("network refused", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertNotIn("Traceback", err)

    def test_malformed_pin_table(self):
        with open(self.up.pins_path, "w") as f:
            f.write("{not json")
        rc, out, err = ps("ref", "valkey", env=self.up.env())
        self.assertEqual(rc, 2)
        self.assertIn("not valid JSON", err)


class FakeGitHub(unittest.TestCase):
    """The third source: the commits API resolves the short SHA, the raw
    file is fetched and cached, and later runs need no network."""

    def setUp(self):
        self.up = Upstream()
        full, up = self.up.shas[0], self.up
        self.hits = []
        hits = self.hits

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hits.append(self.path)
                if self.path == f"/repos/valkey-io/valkey/commits/{up.short}":
                    body = json.dumps({"sha": full}).encode()
                elif self.path == f"/valkey-io/valkey/{full}/src/io_threads.c":
                    body = UPSTREAM_V1.encode()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def tearDown(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.up.cleanup()

    def env(self):
        return self.up.env(clone=False, offline=False, SOLOIST_GITHUB_API=self.base, SOLOIST_GITHUB_RAW=self.base)

    def test_fetch_resolve_cache(self):
        rc, out, err = ps("show", "valkey", "src/io_threads.c", "-r", "14:14", env=self.env())
        self.assertEqual(rc, 0, err)
        self.assertIn("trySendReadToIOThreads", out)
        self.assertEqual(len(self.hits), 2)
        cached = os.path.join(self.up.cache, "soloist", "pinned-source", "valkey-io", "valkey",
                              self.up.shas[0], "src", "io_threads.c")
        self.assertTrue(os.path.isfile(cached))
        # now offline, from the cache
        rc, out, err = ps("check", "valkey", "src/io_threads.c:14", "--contains", "trySendRead",
                          env=self.up.env(clone=False))
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(self.hits), 2)

    def test_missing_path_on_github(self):
        rc, out, err = ps("show", "valkey", "src/nope.c", env=self.env())
        self.assertEqual(rc, 2)
        self.assertIn("has no file src/nope.c", err)


if __name__ == "__main__":
    unittest.main()
