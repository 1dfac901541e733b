"""Tests of tools/layers.py: the layers form a line, checked on the include graph."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from fixtures import load_tool  # noqa: E402

layers, TOOL = load_tool("layers")


class LayersTest(unittest.TestCase):
    def tree(self, files):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        os.makedirs(os.path.join(root, "src"))
        for name, text in files.items():
            with open(os.path.join(root, "src", name), "w") as f:
                f.write(text)
        return root

    def run_tool(self, files, *args):
        return subprocess.run([sys.executable, TOOL, "--root", self.tree(files)] + list(args),
                              capture_output=True, text=True)

    def test_clean_tree_passes(self):
        r = self.run_tool({"db.c": '#include "db.h"\n', "db.h": '#include "object.h"\n', "object.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("3 passed, 0 failed", r.stdout)

    # -- the line: "may use" is the order, nothing else -------------------

    def test_may_use_is_every_layer_below(self):
        # the top reaches the bottom through every layer between, in order
        r = self.run_tool({"server_loop.c": '#include "networking.h"\n',
                           "networking.h": '#include "io_offload.h"\n#include "commands.h"\n',
                           "io_offload.h": '#include "ignition.h"\n#include "client_io.h"\n',
                           "commands.h": '#include "server.h"\n', "server.h": '#include "client.h"\n',
                           "ignition.h": "", "client_io.h": '#include "client.h"\n',
                           "client.h": '#include "object.h"\n', "object.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)
        for i, l in enumerate(layers.LAYERS):
            self.assertNotIn("may", l, "a layer lists no 'may': the order is what it may use")
            for n in l.get("never", []):
                if n in layers.LAYER_NAMES:
                    self.assertLess(layers.LAYER_NAMES.index(n), i, "%s's never names a layer below it" % l["name"])

    def test_a_back_edge_fails_naming_it(self):
        # worker-io including a header of the main-io layer, above it
        r = self.run_tool({"client_io.c": '#include "client_io.h"\n#include "networking.h"\n',
                           "client_io.h": "", "networking.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAIL client_io.c (worker-io layer) reaches networking.h (main-io layer, above it): "
                      "client_io.c -> networking.h", r.stdout)
        self.assertIn("2 passed, 1 failed", r.stdout)

    def test_a_transitive_back_edge_fails_with_its_chain(self):
        r = self.run_tool({"db.c": '#include "db.h"\n', "db.h": '#include "util.h"\n',
                           "util.h": '#include "networking.h"\n', "networking.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("db.c (keyspace layer) reaches networking.h (main-io layer, above it): "
                      "db.c -> db.h -> util.h -> networking.h", r.stdout)
        # util.h (plumbing) reaching a header of the main-io layer fails on its own too
        self.assertIn("util.h (plumbing layer) reaches networking.h (main-io layer, above it)", r.stdout)

    def test_the_state_may_not_call_up(self):
        # server.c wiring the loop (networking.h) is what the split into server_loop.c removed
        r = self.run_tool({"server.c": '#include "server.h"\n#include "networking.h"\n', "server.h": "",
                           "networking.h": '#include "server.h"\n'})
        self.assertEqual(r.returncode, 1)
        self.assertIn("server.c (state layer) reaches networking.h (main-io layer, above it)", r.stdout)

    def test_worker_code_may_not_reach_the_keyspace(self):
        r = self.run_tool({"io_threads.c": '#include "queue_spsc.h"\n', "queue_spsc.h": '#include "db.h"\n',
                           "db.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("io_threads.c (threads layer) reaches db.h (keyspace layer, above it)", r.stdout)
        r = self.run_tool({"client_io.c": '#include "zset.h"\n', "zset.h": ""})
        self.assertIn("client_io.c (worker-io layer) reaches zset.h (keyspace layer, above it)", r.stdout)

    def test_worker_code_may_not_reach_a_client(self):
        r = self.run_tool({"io_threads.c": '#include "client.h"\n', "client.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("io_threads.c (threads layer) reaches client.h (connection layer, above it)", r.stdout)

    def test_the_policy_is_above_the_threads(self):
        r = self.run_tool({"io_threads.c": '#include "ignition.h"\n', "ignition.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("io_threads.c (threads layer) reaches ignition.h (policy layer, above it)", r.stdout)
        r = self.run_tool({"io_offload.c": '#include "ignition.h"\n', "ignition.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_keyspace_never_reaches_a_socket_or_a_client_below_it(self):
        r = self.run_tool({"expire.c": '#include "anet.h"\n', "anet.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("expire.c (keyspace layer) reaches anet.h (plumbing layer), which its layer never may: "
                      "expire.c -> anet.h", r.stdout)
        r = self.run_tool({"db.c": '#include "client.h"\n', "client.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("db.c (keyspace layer) reaches client.h (connection layer), which its layer never may", r.stdout)

    def test_worker_io_never_reaches_the_event_loop(self):
        r = self.run_tool({"client_io.c": '#include "ae.h"\n', "ae.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("client_io.c (worker-io layer) reaches ae.h (plumbing layer), which its layer never may",
                      r.stdout)

    def test_commands_never_reach_a_socket(self):
        for name in ("cmd_string.c", "cmd_keys.c"):
            r = self.run_tool({name: '#include "networking.h"\n', "networking.h": ""})
            self.assertEqual(r.returncode, 1, name)
            self.assertIn("%s (commands layer) reaches networking.h (main-io layer, above it)" % name, r.stdout)
        r = self.run_tool({"cmd_zset.c": '#include "anet.h"\n', "anet.h": ""})
        self.assertIn("cmd_zset.c (commands layer) reaches anet.h (plumbing layer), which its layer never may",
                      r.stdout)

    def test_main_io_never_reaches_the_option_table(self):
        r = self.run_tool({"reply.c": '#include "config.h"\n', "config.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("reply.c (commands layer) reaches config.h (server layer, above it)", r.stdout)
        r = self.run_tool({"networking.c": '#include "config.h"\n', "config.h": ""})
        self.assertIn("networking.c (main-io layer) reaches config.h (server layer, above it)", r.stdout)

    # -- circles -----------------------------------------------------------

    def test_a_planted_header_circle_fails_naming_it(self):
        # both in the keyspace layer: no edge runs up, the circle alone fails
        r = self.run_tool({"db.h": '#include "hashtable.h"\n', "hashtable.h": '#include "db.h"\n',
                           "db.c": '#include "db.h"\n'})
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAIL headers include each other in a circle: db.h -> hashtable.h -> db.h", r.stdout)
        self.assertIn("1 passed, 2 failed", r.stdout)

    def test_a_planted_module_circle_fails_naming_it(self):
        # the circle networking_init broke: each .c includes the other's header
        r = self.run_tool({"networking.c": '#include "networking.h"\n#include "io_offload.h"\n',
                           "io_offload.c": '#include "io_offload.h"\n#include "networking.h"\n',
                           "networking.h": "", "io_offload.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAIL modules use each other in a circle: io_offload -> networking -> io_offload "
                      "(io_offload.c includes networking.h; networking.c includes io_offload.h)", r.stdout)
        self.assertEqual(r.stdout.count("in a circle"), 1, r.stdout)  # one circle, printed once
        self.assertIn("2 passed, 2 failed", r.stdout)
        # one direction alone is a line
        r = self.run_tool({"networking.c": '#include "networking.h"\n#include "io_offload.h"\n',
                           "io_offload.c": '#include "io_offload.h"\n', "networking.h": "", "io_offload.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_a_longer_module_circle_in_one_layer(self):
        r = self.run_tool({"db.c": '#include "hashtable.h"\n', "hashtable.c": '#include "zset.h"\n',
                           "zset.c": '#include "db.h"\n', "db.h": "", "hashtable.h": "", "zset.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("modules use each other in a circle: db -> hashtable -> zset -> db (db.c includes hashtable.h; "
                      "hashtable.c includes zset.h; zset.c includes db.h)", r.stdout)

    def test_a_private_header_is_its_module(self):
        # hashtable.c includes hashtable_private.h, which includes hashtable.h: one module, no circle
        r = self.run_tool({"hashtable.c": '#include "hashtable.h"\n#include "hashtable_private.h"\n',
                           "hashtable_private.h": '#include "hashtable.h"\n', "hashtable.h": "",
                           "hashtable_iter.c": '#include "hashtable_private.h"\n'})
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_a_module_in_two_layers_fails(self):
        saved = layers.LAYERS[0]["files"]
        layers.LAYERS[0]["files"] = saved + ["job_test.h"]  # job.h is in threads
        self.addCleanup(lambda: layers.LAYERS[0].__setitem__("files", saved))
        out = layers.module_violations(["job.h", "job_test.h"])
        self.assertIn("module job spans layers (job_test.h in plumbing; job.h in threads)", out["job.h"][0])

    # -- the other rules ---------------------------------------------------

    def test_a_header_that_carries_the_keyspace_fails(self):
        # networking.c may use the keyspace, but only by including db.h itself
        r = self.run_tool({"networking.c": '#include "server.h"\n', "server.h": '#include "db.h"\n', "db.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("server.h (state layer) is a header that reaches the keyspace's db.h", r.stdout)
        self.assertIn("1 failed", r.stdout.splitlines()[-1])
        r = self.run_tool({"networking.c": '#include "db.h"\n#include "server.h"\n', "server.h": "", "db.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_private_header_is_its_module_alone(self):
        r = self.run_tool({"cmd_config.c": '#include "config_private.h"\n', "config_private.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)  # a module's own command may
        r = self.run_tool({"db.c": '#include "hashtable_private.h"\n', "hashtable_private.h": "",
                           "hashtable_iter.c": '#include "hashtable_private.h"\n'})
        self.assertEqual(r.returncode, 1)
        self.assertIn("db.c reaches hashtable_private.h", r.stdout)
        self.assertIn("2 passed, 1 failed", r.stdout)

    def test_a_test_header_is_for_its_defining_file_alone(self):
        files = {"client_io.c": '#include "client_io.h"\n#include "client_io_test.h"\n',
                 "client_io.h": "", "client_io_test.h": '#include "client_io.h"\n'}
        r = self.run_tool(files)
        self.assertEqual(r.returncode, 0, r.stdout)
        r = self.run_tool(dict(files, **{"networking.c": '#include "client_io_test.h"\n'}))
        self.assertEqual(r.returncode, 1)
        self.assertIn("networking.c reaches client_io_test.h: networking.c -> client_io_test.h — a test header "
                      "is for the tests and client_io.c", r.stdout)
        # nor through another header
        r = self.run_tool(dict(files, **{"client_io.h": '#include "client_io_test.h"\n'}))
        self.assertIn("client_io.h reaches client_io_test.h", r.stdout)

    def test_a_file_in_no_layer_fails(self):
        r = self.run_tool({"stray.c": "", "object.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("stray.c is in no layer", r.stdout)
        self.assertIn("1 passed, 1 failed", r.stdout)

    def test_every_layer_places_the_command_modules_and_the_threads(self):
        names = ["cmd_string.c", "cmd_keys.c", "cmd_server.c", "cmd_client.c", "cmd_config.c", "cmd_info.c",
                 "job.h", "queue_spsc.c", "io_threads.h", "ignition.c", "server_loop.c", "reply_block.c"]
        r = self.run_tool({n: "" for n in names})
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("%d passed, 0 failed" % len(names), r.stdout)
        self.assertEqual(layers.layer_of("ignition.c")[0]["name"], "policy")
        self.assertEqual(layers.layer_of("client.h")[0]["name"], "connection")
        self.assertLess(layers.rank(layers.layer_of("client.h")[0]), layers.rank(layers.layer_of("client_io.h")[0]))
        self.assertLess(layers.rank(layers.layer_of("io_threads.h")[0]), layers.rank(layers.layer_of("ignition.h")[0]))

    def test_the_layers_print_as_a_line(self):
        r = subprocess.run([sys.executable, TOOL, "--layers"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith("server "), lines[0])
        self.assertIn("may use: plumbing, threads, connection, worker-io, keyspace, policy", r.stdout)
        self.assertIn("may use: plumbing; never ae.h, anet.h, resp.h", r.stdout)

    def test_the_real_tree_holds(self):
        r = subprocess.run([sys.executable, TOOL], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        n = len([f for f in os.listdir(os.path.join(ROOT, "src")) if f.endswith((".c", ".h"))])
        self.assertIn("layers: %d files checked" % n, r.stdout)
        self.assertIn("%d passed, 0 failed" % n, r.stdout)


if __name__ == "__main__":
    unittest.main()
