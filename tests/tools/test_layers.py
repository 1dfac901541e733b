"""Tests of tools/layers.py: the layering rules on the include graph."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "layers.py")


class LayersTest(unittest.TestCase):
    def tree(self, files):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        os.makedirs(os.path.join(root, "src"))
        for name, text in files.items():
            with open(os.path.join(root, "src", name), "w") as f:
                f.write(text)
        return root

    def run_tool(self, files):
        return subprocess.run([sys.executable, TOOL, "--root", self.tree(files)], capture_output=True, text=True)

    def test_clean_tree_passes(self):
        r = self.run_tool({"db.c": '#include "db.h"\n', "db.h": '#include "object.h"\n', "object.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("3 passed, 0 failed", r.stdout)

    def test_transitive_socket_in_keyspace_fails_with_its_chain(self):
        r = self.run_tool({"db.c": '#include "db.h"\n', "db.h": '#include "util.h"\n',
                           "util.h": '#include "networking.h"\n', "networking.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("db.c (keyspace layer) reaches networking.h (clients layer): "
                      "db.c -> db.h -> util.h -> networking.h", r.stdout)
        # util.h (plumbing) reaching a client header fails on its own too
        self.assertIn("util.h (plumbing layer) reaches networking.h", r.stdout)

    def test_keyspace_never_reaches_a_socket_of_the_plumbing(self):
        r = self.run_tool({"expire.c": '#include "anet.h"\n', "anet.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("expire.c (keyspace layer) reaches anet.h: expire.c -> anet.h", r.stdout)

    def test_worker_code_may_not_reach_the_keyspace(self):
        r = self.run_tool({"io_threads.c": '#include "queue_spsc.h"\n', "queue_spsc.h": '#include "db.h"\n',
                           "db.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("io_threads.c (threads layer) reaches db.h (keyspace layer)", r.stdout)

    def test_worker_code_may_not_reach_a_client(self):
        r = self.run_tool({"io_threads.c": '#include "client.h"\n', "client.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("io_threads.c (threads layer) reaches client.h (clients layer)", r.stdout)

    def test_a_header_that_carries_the_keyspace_fails(self):
        # networking.c may use the keyspace, but only by including db.h itself
        r = self.run_tool({"networking.c": '#include "server.h"\n', "server.h": '#include "db.h"\n', "db.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("server.h (server layer) is a header that reaches the keyspace's db.h", r.stdout)
        self.assertIn("1 failed", r.stdout.splitlines()[-1])
        r = self.run_tool({"networking.c": '#include "db.h"\n#include "server.h"\n', "server.h": "", "db.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_clients_never_reach_the_option_table(self):
        r = self.run_tool({"reply.c": '#include "config.h"\n', "config.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("reply.c (clients layer) reaches config.h", r.stdout)

    def test_commands_never_reach_a_socket(self):
        for name in ("cmd_string.c", "cmd_keys.c"):
            r = self.run_tool({name: '#include "networking.h"\n', "networking.h": ""})
            self.assertEqual(r.returncode, 1, name)
            self.assertIn("%s (commands layer) reaches networking.h" % name, r.stdout)

    def test_private_header_is_its_module_alone(self):
        r = self.run_tool({"cmd_config.c": '#include "config_private.h"\n', "config_private.h": ""})
        self.assertEqual(r.returncode, 0, r.stdout)  # a module's own command may
        r = self.run_tool({"db.c": '#include "hashtable_private.h"\n', "hashtable_private.h": "",
                           "hashtable_iter.c": '#include "hashtable_private.h"\n'})
        self.assertEqual(r.returncode, 1)
        self.assertIn("db.c reaches hashtable_private.h", r.stdout)
        self.assertIn("2 passed, 1 failed", r.stdout)

    def test_a_file_in_no_layer_fails(self):
        r = self.run_tool({"stray.c": "", "object.h": ""})
        self.assertEqual(r.returncode, 1)
        self.assertIn("stray.c is in no layer", r.stdout)
        self.assertIn("1 passed, 1 failed", r.stdout)

    def test_every_layer_places_the_command_modules_and_the_threads(self):
        names = ["cmd_string.c", "cmd_keys.c", "cmd_server.c", "cmd_client.c", "cmd_config.c", "cmd_info.c",
                 "job.h", "queue_spsc.c", "io_threads.h"]
        r = self.run_tool({n: "" for n in names})
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("%d passed, 0 failed" % len(names), r.stdout)

    def test_the_real_tree_holds(self):
        r = subprocess.run([sys.executable, TOOL], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        n = len([f for f in os.listdir(os.path.join(ROOT, "src")) if f.endswith((".c", ".h"))])
        self.assertIn("layers: %d files checked" % n, r.stdout)


if __name__ == "__main__":
    unittest.main()
