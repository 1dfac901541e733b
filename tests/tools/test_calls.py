"""Tests of tools/calls.py: the layers form a line on the call graph too,
read from objects that each test compiles from fixture C files."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "calls.py")
CC = os.environ.get("CC", "cc").split()[-1]  # ccache's CC is "ccache cc"


@unittest.skipUnless(shutil.which(CC) and shutil.which("nm"), "needs a C compiler and nm")
class CallsTest(unittest.TestCase):
    def tree(self, files):
        """A fixture tree: src/ holding files, each .c compiled into build/obj/."""
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        src, obj = os.path.join(root, "src"), os.path.join(root, "build", "obj")
        os.makedirs(src)
        os.makedirs(obj)
        for name, text in files.items():
            with open(os.path.join(src, name), "w") as f:
                f.write(text)
        for name in files:
            if name.endswith(".c"):
                subprocess.run([CC, "-std=c11", "-c", "-o", os.path.join(obj, name[:-2] + ".o"),
                                os.path.join(src, name)], check=True)
        return root

    def run_tool(self, root, *args):
        return subprocess.run([sys.executable, TOOL, "--root", root] + list(args), capture_output=True, text=True)

    def test_a_clean_fixture_passes(self):
        # zset.c calls the dense layout, which calls only the common helpers
        root = self.tree({"zset.c": "int dense_len(void);\nint zset_len(void) { return dense_len(); }\n",
                          "zset_dense.c": "int common_level(void);\nint dense_len(void) { return common_level(); }\n",
                          "zset_common.c": "int common_level(void) { return 1; }\n"})
        r = self.run_tool(root)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("calls: 3 objects checked", r.stdout)
        self.assertIn(", 2 calls between modules", r.stdout)
        self.assertIn("3 passed, 0 failed", r.stdout)
        g = self.run_tool(root, "--graph")
        self.assertIn("zset: zset_dense\n", g.stdout)
        self.assertIn("zset_dense: zset_common\n", g.stdout)

    def test_a_planted_call_circle_fails_naming_it(self):
        # the circle the zset_common split broke: each file calls the other
        root = self.tree({"zset.c": "int dense_len(void);\nint zset_level(void) { return 1; }\n"
                                    "int zset_len(void) { return dense_len(); }\n",
                          "zset_dense.c": "int zset_level(void);\nint dense_len(void) { return zset_level(); }\n"})
        r = self.run_tool(root)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("FAIL modules call each other in a circle: zset -> zset_dense -> zset (zset.c calls dense_len "
                      "of zset_dense.c; zset_dense.c calls zset_level of zset.c)", r.stdout)
        self.assertEqual(r.stdout.count("in a circle"), 1, r.stdout)  # one circle, printed once
        self.assertIn("0 passed, 2 failed", r.stdout)

    def test_a_longer_circle_prints_each_step(self):
        # the config files' circle before the types moved below the table
        root = self.tree({"config.c": "char *cfg_bytes_human(long long v);\nint cfg_lookup(void) { return 0; }\n"
                                      "char *cfg_special(void) { return cfg_bytes_human(1); }\n",
                          "config_rewrite.c": "int cfg_split(void);\n"
                                              "char *cfg_bytes_human(long long v) { (void)v; return 0; }\n"
                                              "int cfg_rewrite(void) { return cfg_split(); }\n",
                          "config_load.c": "int cfg_lookup(void);\nint cfg_split(void) { return cfg_lookup(); }\n"})
        r = self.run_tool(root)
        self.assertEqual(r.returncode, 1)
        self.assertIn("modules call each other in a circle: config -> config_rewrite -> config_load -> config "
                      "(config.c calls cfg_bytes_human of config_rewrite.c; config_rewrite.c calls cfg_split of "
                      "config_load.c; config_load.c calls cfg_lookup of config.c)", r.stdout)

    def test_a_call_up_the_line_fails(self):
        # the keyspace calling a function of main's client code, above it
        root = self.tree({"db.c": "void networking_flush(void);\nvoid db_empty(void) { networking_flush(); }\n",
                          "networking.c": "void networking_flush(void) {}\n"})
        r = self.run_tool(root)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stdout, r"FAIL db\.c \([a-z-]+ layer\) calls networking_flush of networking\.c "
                                   r"\([a-z-]+ layer, above it\)")
        self.assertIn("1 passed, 1 failed", r.stdout)

    def test_taking_an_address_is_a_call(self):
        # a lower file holding a higher one's function pointer has named it
        root = self.tree({"db.c": "void networking_flush(void);\nvoid (*db_hook)(void) = networking_flush;\n",
                          "networking.c": "void networking_flush(void) {}\n"})
        r = self.run_tool(root)
        self.assertEqual(r.returncode, 1)
        self.assertIn("calls networking_flush of networking.c", r.stdout)

    def test_a_call_its_layer_never_may_fails(self):
        # below the keyspace, but a socket: the keyspace's `never`
        root = self.tree({"expire.c": "int anet_close(int fd);\nint expire_cycle(void) { return anet_close(0); }\n",
                          "anet.c": "int anet_close(int fd) { return fd; }\n"})
        r = self.run_tool(root)
        self.assertEqual(r.returncode, 1)
        self.assertIn("expire.c (", r.stdout)
        self.assertIn("calls anet_close of anet.c (", r.stdout)
        self.assertIn("which its layer never may", r.stdout)

    def test_data_is_not_a_call(self):
        # the command table: commands.c reads a table a higher cmd_*.c file
        # defines, whose handlers it calls through pointers
        root = self.tree({"commands.c": "extern int (*const config_commands[])(void);\n"
                                        "int commands_run(void) { return config_commands[0](); }\n",
                          "cmd_config.c": "int commands_run(void);\nstatic int config_get(void) { return 0; }\n"
                                          "int (*const config_commands[])(void) = {config_get};\n"
                                          "int config_twice(void) { return commands_run(); }\n"})
        r = self.run_tool(root)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn(", 1 calls between modules", r.stdout)

    def test_a_missing_or_old_object_fails_clearly(self):
        root = self.tree({"util.c": "int util_one(void) { return 1; }\n", "zmalloc.c": "int zmalloc_x(void);\n",
                          "util.h": ""})
        os.remove(os.path.join(root, "build", "obj", "zmalloc.o"))
        r = self.run_tool(root)
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAIL zmalloc.c has no object (", r.stdout)
        self.assertIn("build first (make server)", r.stdout)
        self.assertIn("1 passed, 1 failed", r.stdout)
        # a source, or a header the build's .d file names, newer than the object
        obj = os.path.join(root, "build", "obj")
        with open(os.path.join(obj, "util.d"), "w") as f:
            f.write("build/obj/util.o: src/util.c src/util.h\nsrc/util.h:\n")
        later = time.time() + 10
        os.utime(os.path.join(root, "src", "util.h"), (later, later))
        r = self.run_tool(root, "--objects", obj)
        self.assertIn("FAIL util.o is older than util.h: build first (make server)", r.stdout)
        os.utime(os.path.join(root, "src", "util.c"), (later, later))
        r = self.run_tool(root, "--objects", obj)
        self.assertIn("FAIL util.o is older than util.c, util.h", r.stdout)


if __name__ == "__main__":
    unittest.main()
