"""Tests of tools/longfuncs.py: a function over the limit fails unless a
"Long:" comment says why; C bodies are found by matching braces, Python
ones by ast."""

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

longfuncs, TOOL = load_tool("longfuncs")


def c_func(name, body_lines, before=""):
    """A C function whose declaration, body and closing brace take
    body_lines + 2 lines, with text before it."""
    body = "".join("    x += %d; /* { not a brace */\n" % i for i in range(body_lines))
    return "%sstatic int %s(int x) {\n%s    return x;\n}\n" % (before, name, body)


def py_func(name, body_lines, before="", doc=None):
    lines = [before, "def %s(x):\n" % name]
    if doc:
        lines.append('    """%s"""\n' % doc)
    lines += ["    x += %d\n" % i for i in range(body_lines)]
    lines.append("    return x\n")
    return "".join(lines)


class LongFuncsTest(unittest.TestCase):
    def tree(self, files):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        os.makedirs(os.path.join(root, "src"))
        os.makedirs(os.path.join(root, "tools", "sub"))
        for rel, text in files.items():
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        return root

    def run_tool(self, files, *args):
        return subprocess.run([sys.executable, TOOL, "--root", self.tree(files), *args],
                              capture_output=True, text=True)

    def test_short_functions_pass(self):
        r = self.run_tool({"src/a.c": c_func("short_one", 40), "tools/a.py": py_func("short_one", 40)})
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("2 passed, 0 failed", r.stdout)

    def test_long_c_function_fails(self):
        # 63 body lines + "return" + the signature and the closing brace = 66.
        r = self.run_tool({"src/a.c": "/* a.c */\n" + c_func("fine", 10) + c_func("planted", 63)})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("src/a.c:", r.stdout)
        self.assertIn("planted is 66 lines", r.stdout)
        self.assertNotIn("fine", r.stdout)
        self.assertIn("0 passed, 1 failed", r.stdout)

    def test_limit_is_inclusive(self):
        # Exactly 64 lines passes, 65 fails.
        self.assertEqual(self.run_tool({"src/a.c": c_func("f", 61)}).returncode, 0)
        self.assertEqual(self.run_tool({"src/a.c": c_func("f", 62)}).returncode, 1)

    def test_long_python_function_fails_nested_and_in_subdirs(self):
        nested = "class K:\n    def m(self):\n" + "".join("        y = %d\n" % i for i in range(70))
        r = self.run_tool({"tools/sub/b.py": py_func("planted", 80), "tools/c.py": nested})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("tools/sub/b.py:1 planted is 82 lines", r.stdout)
        self.assertIn("tools/c.py:2 m is 71 lines", r.stdout)

    def test_python_script_without_extension_is_read(self):
        text = "#!/usr/bin/env python3\n" + py_func("planted", 80)
        r = self.run_tool({"tools/script": text})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("tools/script:2 planted", r.stdout)

    def test_reason_lets_it_stay(self):
        files = {
            "src/a.c": c_func("table", 80, before="/* Long: one row per command, read top to bottom. */\n"),
            "src/b.c": c_func("doc", 80, before="/* What it does.\n *\n * Long: a state machine. */\n"),
            # The reason may sit outside an anchor region the chapters cite.
            "src/c.c": c_func("anchored", 80, before="/* Long: a learner writes it whole. */\n/*@ name */\n"),
            "src/d.c": c_func("above", 80, before="/* Long: a table. */\n/*@ name */\n/* What it does. */\n"),
            "tools/a.py": py_func("commented", 80, before="# Long: a table.\n"),
            "tools/b.py": py_func("documented", 80, doc="What it does.\n\n    Long: a table.\n    "),
        }
        r = self.run_tool(files)
        self.assertEqual(r.returncode, 0, r.stdout)
        r = self.run_tool(files, "--list")
        self.assertEqual(r.stdout.count("long (says why)"), 6, r.stdout)

    def test_reason_must_be_just_before(self):
        # A "Long:" comment with code between it and the function, or one
        # that only mentions the word, does not count.
        r = self.run_tool({
            "src/a.c": c_func("far", 80, before="/* Long: too far away. */\nstatic int y;\n"),
            "src/b.c": c_func("mention", 80, before="/* Not Long: at the start. */\n"),
        })
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("far is", r.stdout)
        self.assertIn("mention is", r.stdout)

    def test_braces_in_strings_comments_and_initializers_are_not_bodies(self):
        text = ('#define OPEN {\n'
                'static const char *s = "{{{";\n'
                "static const char c = '{';\n"
                "static int table[] = {\n" + "".join("    %d,\n" % i for i in range(100)) + "};\n"
                "struct big {\n" + "".join("    int f%d;\n" % i for i in range(100)) + "};\n"
                + c_func("small", 5))
        funcs = longfuncs.c_functions(text)
        self.assertEqual([f[0] for f in funcs], ["small"])
        r = self.run_tool({"src/a.c": text})
        self.assertEqual(r.returncode, 0, r.stdout)


if __name__ == "__main__":
    unittest.main()
