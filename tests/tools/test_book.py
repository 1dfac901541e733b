"""tools/book/build.py and tools/book/check.py on fixture chapters.
(The headless-Chromium check runs in tests/suites/70-book.sh.)"""

import glob
import os
import re
import shutil
import subprocess
import sys
import unittest

from fixtures import TOOLS, Upstream, write

import exercise  # noqa: E402  (tools/ is on sys.path via fixtures)

BUILD = os.path.join(TOOLS, "book", "build.py")
CHECK = os.path.join(TOOLS, "book", "check.py")

SRC = """\
/* demo.c: a fixture. */
#include <stddef.h>

/*@ sum */
int demo_sum(const int *a, size_t n)
{
    int s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i];
    return s;
}
/*@ end */
"""

CH0 = """\
# The demo chapter

The problem in one sentence. See `src/demo.c@sum`, `valkey:src/io_threads.c:14`
and [the next chapter](01-next.md#the-next-one), [its section](01-next.md#a-section).

## The code

```
src/demo.c@sum
```

```c
int plain(void) { return 1; }
```

![A flow](figures/flow.svg)

{{plot pipeline_span}}

```
valkey:src/io_threads.c:14-16
```

See [the notes](../notes.md) and [the source](../src/demo.c).

## Questions

- **Q0.1** Why?
"""

CH1 = """\
# The next one

## A section

Back to [the demo](00-demo.md).
"""

FINDINGS = """\
# FINDINGS

Results used:

- `bench/results/r1/` (pipeline_span)

## Rows

| ID | claim | figure | conditions | reproduce |
|---|---|---|---|---|
| F0.17 | span | **2.00×** | cores 2 | `make findings` |
"""


def span_lines():
    """pipeline_span lines as bench/pipeline_span.py writes them: both
    servers, every depth, one run id."""
    out = []
    for p in (1, 4, 16, 64, 256):
        for s, k in (("soloist", 2.0), ("redis", 1.0)):
            out.append('{"bench": "pipeline_span", "kind": "run", "server": "%s", "pipeline": %d, '
                       '"rps": %.1f, "run_id": "r1"}\n' % (s, p, 1000.0 * p * k))
    return "".join(out)


@unittest.skipUnless(shutil.which("pandoc") and shutil.which("dot") and shutil.which("gnuplot"),
                     "pandoc, graphviz and gnuplot are needed (make deps)")
class Book(unittest.TestCase):
    def setUp(self):
        self.up = Upstream()
        self.root = os.path.join(self.up.dir, "tree")
        self.out = os.path.join(self.root, "build", "book")
        write(os.path.join(self.root, "src", "demo.c"), SRC)

    def tearDown(self):
        self.up.cleanup()

    def fixture_book(self):
        write(os.path.join(self.root, "chapters", "00-demo.md"), CH0)
        write(os.path.join(self.root, "chapters", "01-next.md"), CH1)
        write(os.path.join(self.root, "chapters", "figures", "flow.dot"), "digraph G { a -> b; }\n")
        write(os.path.join(self.root, "FINDINGS.md"), FINDINGS)
        write(os.path.join(self.root, "bench", "results", "r1", "provenance.json"), '{"run_id": "r1"}\n')
        write(os.path.join(self.root, "bench", "results", "r1", "pipeline_span.jsonl"), span_lines())
        write(os.path.join(self.root, "notes.md"),
              "# Questions\n\n**Q0.1** Why? <details><summary>Answer</summary>See `src/demo.c@sum`.</details>\n")

    def build(self, clone=True):
        r = subprocess.run([sys.executable, BUILD, "--root", self.root], capture_output=True, text=True,
                           env=self.up.env(clone=clone), timeout=300)
        return r.returncode, r.stdout + r.stderr

    def check(self):
        r = subprocess.run([sys.executable, CHECK, "--root", self.root], capture_output=True, text=True,
                           timeout=120)
        return r.returncode, r.stdout + r.stderr

    def page(self, name):
        with open(os.path.join(self.out, name), encoding="utf-8") as f:
            return f.read()

    def test_zero_chapters(self):
        rc, out = self.build()
        self.assertEqual(rc, 0, out)
        self.assertIn("no chapters", out)
        self.assertIn("No chapters have been written yet", self.page("index.html"))
        rc, out = self.check()
        self.assertEqual(rc, 0, out)

    def test_full_book(self):
        self.fixture_book()
        rc, out = self.build()
        self.assertEqual(rc, 0, out)
        self.assertIn("2 chapters", out)
        for f in ("index.html", "00-demo.html", "01-next.html", "notes.html", "src-demo.c.html", "book.css",
                  "figures/flow.svg", "plots/pipeline_span.svg"):
            self.assertTrue(os.path.isfile(os.path.join(self.out, f)), f)
        ch = self.page("00-demo.html")
        # the title, the contents, prev/next navigation
        self.assertIn('<h1 class="title">The demo chapter</h1>', ch)
        self.assertIn('id="TOC"', ch)
        self.assertIn('href="01-next.html"', ch)
        self.assertRegex(ch, r'rel="next" href="01-next.html"')
        self.assertIn('rel="prev" href="00-demo.html"', self.page("01-next.html"))
        # the label citation rendered as its lines, numbered as in the file
        self.assertIn("lines 5–11", ch)
        self.assertIn('data-startFrom="5"', ch)
        self.assertRegex(ch, r'<span id="cite-\d+-11">')
        self.assertIn('href="src-demo.c.html#L-5"', ch)
        # highlighted code
        self.assertIn('class="sourceCode c"', ch)
        # upstream citation: the pinned lines (the fixture clone) and a GitHub link at the pin
        self.assertIn("trySendReadToIOThreads", ch)
        self.assertRegex(ch, r'<span id="cite-\d+-16">')
        self.assertIn(f"https://github.com/valkey-io/valkey/blob/{self.up.short}/src/io_threads.c#L14-L16", ch)
        # links to markdown and source files rewritten to pages
        self.assertIn('href="notes.html"', ch)
        self.assertIn('href="src-demo.c.html"', ch)
        # the plot: drawn from the results FINDINGS.md used, shown with its source
        svg = self.page("plots/pipeline_span.svg")
        self.assertIn("<svg", svg)
        self.assertNotIn("placeholder", svg)
        self.assertIn('src="plots/pipeline_span.svg"', ch)
        self.assertIn("bench/results/r1/pipeline_span.jsonl", ch)
        self.assertNotIn("{{plot", ch)
        # offline: no asset from another host anywhere
        for p in glob.glob(os.path.join(self.out, "*.html")):
            with open(p, encoding="utf-8") as f:
                text = f.read()
            self.assertIsNone(re.search(r'(src|<link[^>]*href)="(https?:)?//', text), p)
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("0 failed", out)

    def test_offline_upstream_citation_says_how_to_read_it(self):
        self.fixture_book()
        rc, out = self.build(clone=False)
        self.assertEqual(rc, 0, out)
        ch = self.page("00-demo.html")
        self.assertIn("tools/pinned-source.py show valkey src/io_threads.c -r 14:16", ch)
        self.assertIn("cite-offline", ch)

    def test_missing_label_fails_the_check(self):
        self.fixture_book()
        write(os.path.join(self.root, "chapters", "01-next.md"), CH1 + "\nGone: `src/demo.c@nope`.\n")
        rc, out = self.build()
        self.assertEqual(rc, 0, out)
        self.assertIn("unresolved citation src/demo.c@nope", out)
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("01-next.html: unresolved citation", out)

    def test_question_list_out_of_step_with_notes_fails_the_check(self):
        self.fixture_book()
        with open(os.path.join(self.root, "notes.md"), "a", encoding="utf-8") as f:
            f.write("\n**Q0.2** And why not? <details><summary>Answer</summary>Because.</details>\n")
        rc, out = self.build()
        self.assertEqual(rc, 0, out)
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("chapters/00-demo.md: it lists the questions ['Q0.1'], notes.md answers ['Q0.1', 'Q0.2']", out)

    def test_broken_link_and_missing_figure_fail_the_check(self):
        self.fixture_book()
        write(os.path.join(self.root, "chapters", "01-next.md"),
              CH1 + "\n[gone](02-gone.md) and [no anchor](00-demo.md#nowhere)\n\n![missing](figures/none.svg)\n")
        rc, out = self.build()
        self.assertEqual(rc, 0, out)
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("02-gone.md", out)
        self.assertIn("no id 'nowhere'", out)
        self.assertIn("figures/none.svg", out)

    def test_external_asset_fails_the_check(self):
        self.fixture_book()
        write(os.path.join(self.root, "chapters", "01-next.md"),
              CH1 + '\n<img src="https://cdn.example.com/x.png">\n\n[a link out is fine](https://valkey.io)\n')
        self.build()
        rc, out = self.check()
        self.assertEqual(rc, 1)
        self.assertIn("asset from another host", out)
        self.assertNotIn("valkey.io", out)

    def test_exercise_page_shows_its_generated_mutant_table(self):
        self.fixture_book()
        doc = {"seed": 1000, "rows": [{"candidate": "mutant off-by-one", "what": "stops one early",
                                       "point": "the last element", "named": "test_max",
                                       "first_failing": ["test_max", "test_max_last"],
                                       "first": {"score": 4, "bonus": 0}, "max_score": 7, "bonus_max": 0}]}
        write(os.path.join(self.root, "exercises", "00-demo", "README.md"),
              "# Exercise 00\n\n## Mutants\n\n" + exercise.mutants_table(None, doc) + "\n")
        rc, out = self.build()
        self.assertEqual(rc, 0, out)
        page = self.page("exercise-00-demo.html")
        self.assertIn("<table", page)
        self.assertIn("<td>stops one early</td>", page)
        self.assertIn("<code>test_max</code> and 1 other test", page)
        self.assertIn("<td>the last element</td>", page)

    def test_refuses_to_delete_a_foreign_directory(self):
        os.makedirs(self.out)
        write(os.path.join(self.out, "precious.txt"), "x")
        rc, out = self.build()
        self.assertEqual(rc, 1)
        self.assertIn("not a book this tool built", out)
        self.assertTrue(os.path.isfile(os.path.join(self.out, "precious.txt")))


if __name__ == "__main__":
    unittest.main()
