"""tools/glossary.py on fixture chapters, and the glossary page that
tools/book/build.py renders from chapters/GLOSSARY.md."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from fixtures import TOOLS, Upstream, write

import glossary  # noqa: E402  (tools/ is on sys.path via fixtures)

TOOL = os.path.join(TOOLS, "glossary.py")
BUILD = os.path.join(TOOLS, "book", "build.py")
CHECK = os.path.join(TOOLS, "book", "check.py")

GLOSSARY = """\
# Glossary

Intro text that mentions a futex, which the check never reads as a use.

## futex {#futex}

*Also:* futexes, FUTEX_WAIT.

A word threads sleep on.

## cache line {#cache-line}

The unit memory moves in.

## Spin (the model checker) {#spin}

*Case matters.*

A model checker.
"""


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="soloist-glossary-")
        self.root = self.tmp.name
        write(os.path.join(self.root, "chapters", "GLOSSARY.md"), GLOSSARY)

    def tearDown(self):
        self.tmp.cleanup()

    def chapter(self, body, name="00-demo.md"):
        return write(os.path.join(self.root, "chapters", name), "# 00 — Demo\n\n" + body)

    def run_tool(self, *args):
        r = subprocess.run([sys.executable, TOOL, "--root", self.root, *args], capture_output=True, text=True,
                           timeout=60)
        return r.returncode, r.stdout + r.stderr

    def test_term_used_before_its_definition_fails(self):
        self.chapter("A worker sleeps on a futex.\n\nLater the [futex](GLOSSARY.md#futex) is explained.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("chapters/00-demo.md:3: futex", out)
        self.assertIn("0 passed, 1 failed", out)

    def test_linked_first_use_passes(self):
        self.chapter("A worker sleeps on a [futex](GLOSSARY.md#futex).\n\nThen the futex is woken.\n"
                     "Each field sits on its own\n[cache\nline](GLOSSARY.md#cache-line); cache lines move.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)
        self.assertIn("1 passed, 0 failed", out)

    def test_italic_definition_in_place_passes(self):
        self.chapter("A *futex* is a word that threads sleep on. Then the futex wakes.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)
        # bold is not a definition
        self.chapter("A **futex** is a word that threads sleep on.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)

    def test_code_comments_headings_and_link_targets_are_ignored(self):
        self.chapter("## The futex\n\nWe call `futex()` here.\n\n<!-- a futex\nin a comment -->\n\n"
                     "```c\nsyscall(SYS_futex);\n/* a cache line */\n```\n\n"
                     "See [the man page](https://man7.org/futex.html#cache-line).\n\n"
                     "Only now: a [futex](GLOSSARY.md#futex).\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)

    def test_code_span_does_not_count_as_the_first_use(self):
        self.chapter("We call `futex` here, then sleep on a futex.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn('first use "futex"', out)
        self.assertIn(":3: futex", out)

    def test_an_alias_counts_as_a_use(self):
        self.chapter("Workers sleep on futexes.\n\nA [futex](GLOSSARY.md#futex) is a word.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn('first use "futexes"', out)
        self.chapter("Workers sleep on [futexes](GLOSSARY.md#futex).\n\nA futex is a word.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)

    def test_a_term_split_across_lines_or_hyphenated_is_found(self):
        self.chapter("Each field sits on its own cache\nline.\n")
        rc, out = self.run_tool()
        self.assertIn(":3: cache line", out)
        self.chapter("A cache-line boundary.\n")
        rc, out = self.run_tool()
        self.assertIn(":3: cache line", out)

    def test_whole_words_and_case_when_the_entry_says_it_matters(self):
        # "futexlike" and "linecache" are not uses; "spin" the verb is not Spin
        self.chapter("A futexlike word; a cacheline-free linecache. Workers spin, then sleep.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)
        self.chapter("Workers spin. Spin checks every interleaving.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn(":3: Spin", out)

    def test_first_use_in_fine_print_needs_a_link_in_the_main_line_too(self):
        self.chapter("::: fine-print\nA [futex](GLOSSARY.md#futex) in the fine print.\n:::\n\n"
                     "The main line sleeps on a futex.\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn(":7: futex: first use outside the fine print", out)
        self.chapter("::: fine-print\nA [futex](GLOSSARY.md#futex) in the fine print.\n:::\n\n"
                     "The main line sleeps on a [futex](GLOSSARY.md#futex).\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)

    def test_a_link_to_another_entry_is_not_an_explanation(self):
        self.chapter("Sleep on a [futex](GLOSSARY.md#cache-line).\n")
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("text of a link to GLOSSARY.md#cache-line", out)

    def test_each_chapter_on_its_own(self):
        self.chapter("A [futex](GLOSSARY.md#futex).\n")
        self.chapter("Sleep on a futex.\n", name="01-next.md")
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("chapters/01-next.md:3: futex", out)
        self.assertNotIn("00-demo.md:", out)
        self.assertIn("1 passed, 1 failed", out)

    def test_link_mode_links_the_first_uses(self):
        p = self.chapter("Sleep on a futex; then the futex wakes. A cache line moves.\n")
        rc, out = self.run_tool("--link", p)
        self.assertEqual(rc, 0, out)
        with open(p, encoding="utf-8") as f:
            self.assertIn("Sleep on a [futex](GLOSSARY.md#futex); then the futex wakes. "
                          "A [cache line](GLOSSARY.md#cache-line) moves.", f.read())

    def test_used_in_lists_the_chapters_that_use_each_term(self):
        g = os.path.join(self.root, "chapters", "GLOSSARY.md")
        write(g, GLOSSARY.replace("A word threads sleep on.", "A word threads sleep on. **Used in:** chapter [05](05-x.md)."))
        self.chapter("A [futex](GLOSSARY.md#futex).\n")
        self.chapter("Futexes again.\n", name="01-next.md")
        rc, out = self.run_tool("--used-in")
        with open(g, encoding="utf-8") as f:
            self.assertIn("A word threads sleep on. **Used in:** chapters [00](00-demo.md), [01](01-next.md).\n",
                          f.read())

    def test_parse_glossary(self):
        entries = {e.id: e for e in glossary.parse_glossary(GLOSSARY)}
        self.assertEqual(sorted(entries), ["cache-line", "futex", "spin"])
        self.assertEqual(entries["spin"].term, "Spin")
        self.assertTrue(entries["spin"].case)
        self.assertEqual(entries["futex"].aliases, ["futexes", "FUTEX_WAIT"])


@unittest.skipUnless(shutil.which("pandoc") and shutil.which("dot") and shutil.which("gnuplot"),
                     "pandoc, graphviz and gnuplot are needed (make deps)")
class Page(unittest.TestCase):
    def setUp(self):
        self.up = Upstream()
        self.root = os.path.join(self.up.dir, "tree")
        write(os.path.join(self.root, "src", "demo.c"), "/* demo.c: a fixture. */\nint demo;\n")
        write(os.path.join(self.root, "chapters", "GLOSSARY.md"), GLOSSARY)
        write(os.path.join(self.root, "chapters", "00-demo.md"),
              "# The demo chapter\n\nA worker sleeps on a [futex](GLOSSARY.md#futex).\n")

    def tearDown(self):
        self.up.cleanup()

    def test_glossary_page_and_links(self):
        r = subprocess.run([sys.executable, BUILD, "--root", self.root], capture_output=True, text=True,
                           env=self.up.env(), timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = os.path.join(self.root, "build", "book")
        with open(os.path.join(out, "glossary.html"), encoding="utf-8") as f:
            page = f.read()
        for ident in ("futex", "cache-line", "spin"):
            self.assertIn(f'id="{ident}"', page)
        with open(os.path.join(out, "00-demo.html"), encoding="utf-8") as f:
            self.assertIn('href="glossary.html#futex"', f.read())
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            self.assertIn('href="glossary.html"', f.read())
        r = subprocess.run([sys.executable, CHECK, "--root", self.root], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # a link to an entry the glossary does not have fails the book check
        write(os.path.join(self.root, "chapters", "00-demo.md"),
              "# The demo chapter\n\nA worker sleeps on a [futex](GLOSSARY.md#no-such-term).\n")
        r = subprocess.run([sys.executable, BUILD, "--root", self.root], capture_output=True, text=True,
                           env=self.up.env(), timeout=300)
        r = subprocess.run([sys.executable, CHECK, "--root", self.root], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("no-such-term", r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
