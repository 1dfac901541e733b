"""Tests of tools/steps.py: each file's step and layer, held to README.md's step table and tools/layers.py."""

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

steps, TOOL = load_tool("steps")

# A step table shaped as README.md's: the module(s) column is the third.
README = """# fixture

| step | idea | module(s) | what its benchmark shows | state |
|---|---|---|---|---|
| 0 | the server | ae, client, networking, db, hashtable, server | x | built |
| 1 | the contract | job.h | x | code |
| 2 | three queues | queue_spsc, io_threads | x | code |
| 4 | the offload decision | client_io, networking | x | code |
| 6 | prefetching | hashtable (resumable find) | x | code |
| 9 | clients that wait | blocked (networking) | x | code |
| — | not a step: lists | list, cmd_list | x | code |

More text.
"""


class StepsTest(unittest.TestCase):
    def tree(self, files, readme=README):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        os.makedirs(os.path.join(root, "src"))
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(readme)
        for name, text in files.items():
            with open(os.path.join(root, "src", name), "w") as f:
                f.write(text)
        return root

    def run_tool(self, files, readme=README):
        return subprocess.run([sys.executable, TOOL, "--root", self.tree(files, readme)],
                              capture_output=True, text=True)

    def head(self, name, decl):
        return "/* %s — a fixture.\n *\n * %s Owns: nothing.\n */\n" % (name, decl)

    def test_right_steps_pass(self):
        r = self.run_tool({"io_threads.c": self.head("io_threads.c", "Step 2 (threads layer)."),
                           "job.h": self.head("job.h", "Step 1 (threads layer)."),
                           "ae.c": "/* ae.c — the event loop (step 0, plumbing layer). See ae.h.\n */\n"})
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("3 passed, 0 failed", r.stdout)

    def test_a_planted_wrong_step_fails(self):
        # io_threads's row is step 2; step 3 is what io_threads.c said before
        r = self.run_tool({"io_threads.c": self.head("io_threads.c", "Step 3 (threads layer)."),
                           "queue_spsc.c": self.head("queue_spsc.c", "Step 2 (threads layer).")})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("FAIL io_threads.c says step 3, but README.md's step table names io_threads in the row "
                      "of step 2", r.stdout)
        self.assertIn("1 passed, 1 failed", r.stdout)

    def test_a_missing_declaration_fails(self):
        r = self.run_tool({"db.c": "/* db.c — the keyspace.\n *\n * Owns every key.\n */\n"})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("FAIL db.c names no step and layer in its first 6 lines", r.stdout)
        # a step beyond the opening lines does not count
        late = "/* db.c — the keyspace.\n" + " *\n" * 6 + " * Step 0 (keyspace layer).\n */\n"
        r = self.run_tool({"db.c": late})
        self.assertIn("FAIL db.c names no step and layer", r.stdout)
        # nor does a step without its layer
        r = self.run_tool({"db.c": self.head("db.c", "Step 0 (keyspace).")})
        self.assertIn("FAIL db.c names no step and layer", r.stdout)

    def test_a_wrong_layer_fails(self):
        r = self.run_tool({"client.h": self.head("client.h", "Step 0 (client layer).")})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("FAIL client.h says it is in the client layer; tools/layers.py places it in the connection "
                      "layer", r.stdout)

    def test_a_module_in_several_rows_may_name_any(self):
        for n in (0, 4, 9):
            r = self.run_tool({"networking.c": self.head("networking.c", "Step %d (main-io layer)." % n)})
            self.assertEqual(r.returncode, 0, (n, r.stdout))
        r = self.run_tool({"networking.c": self.head("networking.c", "Steps 4 and 5 (main-io layer).")})
        self.assertIn("networking.c names step 5, which README.md's step table has no row for", r.stdout)
        r = self.run_tool({"networking.c": self.head("networking.c", "Step 6 (main-io layer).")})
        self.assertIn("FAIL networking.c says step 6, but README.md's step table names networking in the row of "
                      "step 0 and the row of step 4 and the row of step 9", r.stdout)

    def test_the_first_step_is_the_files(self):
        # "Steps 2 and 4": the file is step 2's, step 4 adds to it; both are rows
        r = self.run_tool({"client_io.c": self.head("client_io.c", "Steps 2 and 4 (worker-io layer).")})
        self.assertIn("client_io.c says step 2, but", r.stdout)
        r = self.run_tool({"client_io.c": self.head("client_io.c", "Step 4 (worker-io layer); step 6 adds more.")})
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_a_file_belongs_to_its_longest_named_prefix(self):
        # hashtable_iter.c is the hashtable's (steps 0 and 6); server_loop.c the server's (step 0)
        r = self.run_tool({"hashtable_iter.c": self.head("hashtable_iter.c", "Step 2 (keyspace layer)."),
                           "server_loop.c": self.head("server_loop.c", "Step 4 (server layer)."),
                           "hashtable_test.h": self.head("hashtable_test.h", "Step 6 (keyspace layer)."),
                           "io_threads_test.h": self.head("io_threads_test.h", "Step 2 (threads layer).")})
        self.assertIn("FAIL hashtable_iter.c says step 2, but README.md's step table names hashtable", r.stdout)
        self.assertIn("FAIL server_loop.c says step 4, but README.md's step table names server in the row of "
                      "step 0", r.stdout)
        self.assertIn("2 passed, 2 failed", r.stdout)
        # client_io is named itself: client's row does not decide it
        r = self.run_tool({"client_io.h": self.head("client_io.h", "Step 0 (worker-io layer).")})
        self.assertIn("names client_io in the row of step 4", r.stdout)

    def test_the_not_a_step_row(self):
        r = self.run_tool({"list.c": self.head("list.c", "Not a step (keyspace layer)."),
                           "cmd_list.c": self.head("cmd_list.c", "Not a step (commands layer).")})
        self.assertEqual(r.returncode, 0, r.stdout)
        r = self.run_tool({"list.c": self.head("list.c", "Step 0 (keyspace layer).")})
        self.assertEqual(r.returncode, 1)
        self.assertIn('FAIL list.c says step 0, but README.md\'s step table names list in the row "—" '
                      '(so "Not a step")', r.stdout)
        r = self.run_tool({"db.c": self.head("db.c", "Not a step (keyspace layer).")})
        self.assertIn('FAIL db.c says "Not a step", but', r.stdout)

    def test_a_module_in_no_row_says_any_step_of_the_table(self):
        for decl in ("Step 0 (plumbing layer).", "Step 6 (plumbing layer).", "Not a step (plumbing layer)."):
            r = self.run_tool({"util.c": self.head("util.c", decl)})
            self.assertEqual(r.returncode, 0, (decl, r.stdout))
        r = self.run_tool({"util.c": self.head("util.c", "Step 3 (plumbing layer).")})
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAIL util.c says step 3, which README.md's step table has no row for (its module is in "
                      "no row", r.stdout)

    def test_the_table_is_read_from_its_module_column(self):
        modules, all_steps = steps.step_table(os.path.join(self.tree({}), "README.md"))
        self.assertEqual(modules["job"], {1})
        self.assertEqual(modules["networking"], {0, 4, 9})
        self.assertEqual(modules["hashtable"], {0, 6})
        self.assertEqual(modules["list"], {steps.NOT_A_STEP})
        self.assertNotIn("x", modules)  # another column's words
        self.assertEqual(all_steps, {0, 1, 2, 4, 6, 9, steps.NOT_A_STEP})
        r = self.run_tool({"db.c": ""}, readme="# no table\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("has no step table", r.stdout)

    def test_the_real_tree_holds(self):
        r = subprocess.run([sys.executable, TOOL], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        n = len([f for f in os.listdir(os.path.join(ROOT, "src")) if f.endswith((".c", ".h"))])
        self.assertIn("%d passed, 0 failed" % n, r.stdout)


if __name__ == "__main__":
    unittest.main()
