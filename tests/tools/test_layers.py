"""Tests of tools/layers.py: the layering rules on the include graph."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "layers.py")


def tree(files):
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, "src"))
    for name, text in files.items():
        with open(os.path.join(root, "src", name), "w") as f:
            f.write(text)
    return root


def run(root):
    return subprocess.run([sys.executable, TOOL, "--root", root], capture_output=True, text=True)


class LayersTest(unittest.TestCase):
    def test_clean_tree_passes(self):
        r = run(tree({"db.c": '#include "db.h"\n', "db.h": '#include "object.h"\n', "object.h": ""}))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("0 failed", r.stdout)

    def test_transitive_socket_in_keyspace_fails_with_its_chain(self):
        r = run(tree({"db.c": '#include "db.h"\n', "db.h": '#include "util.h"\n',
                      "util.h": '#include "networking.h"\n', "networking.h": ""}))
        self.assertEqual(r.returncode, 1)
        self.assertIn("db.c (keyspace layer) reaches networking.h: db.c -> db.h -> util.h -> networking.h", r.stdout)

    def test_worker_code_may_not_reach_the_keyspace(self):
        r = run(tree({"io_threads.c": '#include "server.h"\n', "server.h": '#include "db.h"\n', "db.h": ""}))
        self.assertEqual(r.returncode, 1)
        self.assertIn("io_threads.c (threads layer) reaches db.h", r.stdout)

    def test_the_real_tree_holds(self):
        r = subprocess.run([sys.executable, TOOL], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)


if __name__ == "__main__":
    unittest.main()
