"""Tests of tools/findings_refs.py: {{finding F0.N}} references resolved
against FINDINGS.md's rows, for the book and for `make check-anchors`."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import findings_refs  # noqa: E402

FINDINGS = """# FINDINGS

intro

## Side by side

| row | test | value |
|---|---|---|
| F0.1 | GET | 3 B |

## Rows

| ID | claim | figure | conditions | reproduce |
|---|---|---|---|---|
| F0.1 | GET: soloist / redis | ratio **1.02×** (a \\| b) | cores 2 | `make findings` |
| F0.20 | shares | exec **21%** | P=1 | `make findings BENCH=phase_shares` |
"""


class FindingsRefsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        with open(os.path.join(self.dir, "FINDINGS.md"), "w") as f:
            f.write(FINDINGS)

    def test_load_reads_the_rows_table_only(self):
        rows = findings_refs.load(self.dir)
        self.assertEqual(sorted(rows), ["F0.1", "F0.20"])
        self.assertEqual(rows["F0.1"]["figure"], "ratio **1.02×** (a \\| b)")
        self.assertEqual(rows["F0.20"]["claim"], "shares")

    def test_load_without_findings_is_none(self):
        self.assertIsNone(findings_refs.load(tempfile.mkdtemp()))

    def test_render_links_the_figure(self):
        rows = findings_refs.load(self.dir)
        out = findings_refs.render("see {{finding F0.20}} and {{finding F0.9}}.", rows)
        self.assertIn("[F0.20](findings.html#F0.20) (exec **21%**)", out)
        self.assertIn("*[F0.9: no such row in FINDINGS.md]*", out)
        self.assertIn("not measured here yet", findings_refs.render("{{finding F0.1}}", None))

    def test_references_give_lines(self):
        self.assertEqual(findings_refs.references("a\n{{finding F0.1}} {{finding F2.10}}\n"),
                         [(2, "F0.1"), (2, "F2.10")])

    def test_anchor_rows(self):
        out = findings_refs.anchor_rows(FINDINGS)
        self.assertIn('| <span id="F0.20"></span>F0.20 |', out)

    def test_check_anchors_fails_on_a_missing_row(self):
        os.makedirs(os.path.join(self.dir, "chapters"))
        with open(os.path.join(self.dir, "chapters", "00-x.md"), "w") as f:
            f.write("# x\n\n{{finding F0.20}} {{finding F0.99}}\n")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "anchors.py"), "--root", self.dir, "check"],
                           capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("FINDINGS.md has no row F0.99", r.stdout)


if __name__ == "__main__":
    unittest.main()
