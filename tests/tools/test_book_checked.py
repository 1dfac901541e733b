"""The book, checked: readings of FINDINGS.md rows (tools/findings_refs.py),
the try-it scripts (tools/tryit.py) and the readability figures
(tools/readability.py). Each check is shown to fail when it should."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

from fixtures import TOOLS, write

import findings_refs  # noqa: E402  (tools/ is on sys.path via fixtures)
import readability  # noqa: E402
import tryit  # noqa: E402

ROOT = os.path.dirname(TOOLS)

SPEED = "**3.07×** (ck_ring 11.86 / soloist 3.87 ns/item; soloist faster in every run) — target met"
OVERLAP = "**1.27×** (64.7 / 51.1 ns/lookup; run ranges overlap)"
SLOWER = "**0.86×** (interleaved 20.4 / with prefetch 23.8 ns/node; interleaved lower in every run)"
SHARES = "of busy time: poll CPU **16%**, exec **14%**; serial share s = (exec + other) / busy = **0.14**"
TARGETS = "1.59× without (met), 0.18× redis (met); 0.48× ceiling — not met"
NO_SPREAD = "117251 / 101887 rps = 1.15×"


class Evaluate(unittest.TestCase):
    def holds(self, reading, figure):
        self.assertIsNone(findings_refs.evaluate(reading, figure), (reading, figure))

    def fails(self, reading, figure, fragment):
        why = findings_refs.evaluate(reading, figure)
        self.assertIsNotNone(why, (reading, figure))
        self.assertIn(fragment, why)

    def test_headline(self):
        self.assertEqual(findings_refs.headline(SPEED), 3.07)
        self.assertEqual(findings_refs.headline(NO_SPREAD), 1.15)
        self.assertEqual(findings_refs.headline("1M 128.1 B, 5M 125.5 B"), 1)
        self.assertEqual(findings_refs.headline("rps **1,220,144** of"), 1220144)

    def test_faster_and_slower(self):
        self.holds("faster", SPEED)
        self.holds("faster in every run", SPEED)
        self.fails("slower", SPEED, "ratio is 3.07×")
        self.holds("slower in every run", SLOWER)
        self.fails("faster", SLOWER, "ratio is 0.86×")
        self.holds("faster", OVERLAP)
        self.fails("faster in every run", OVERLAP, "overlap")
        self.fails("faster in every run", NO_SPREAD, "no runs' spread")
        self.fails("faster", "**4.42 µs/request**", "no ratio")

    def test_even(self):
        self.holds("even", OVERLAP)
        self.holds("faster; even", OVERLAP)
        self.fails("even", SPEED, "won every run")
        self.fails("even", NO_SPREAD, "no runs' spread")

    def test_bounds(self):
        self.holds("at least 3×", SPEED)
        self.fails("at least 3.5×", SPEED, "measured 3.07")
        self.holds("at most 0.2 of \"s =\"", SHARES)
        self.fails("at most 0.1 of \"s =\"", SHARES, "measured 0.14")
        self.holds("at most 20%", SHARES)
        self.fails("at least 1 of \"nowhere\"", SHARES, 'no "nowhere"')
        self.holds("at least 1,000 rps", "**1,220,144** rps")

    def test_targets(self):
        self.holds("met", "1.59× without (met)")
        self.holds("met", TARGETS)                      # the first verdict the row gives
        self.holds("not met of \"ceiling\"", TARGETS)
        self.holds("met of \"redis\"", TARGETS)
        self.fails("met of \"ceiling\"", TARGETS, "says not met")
        self.fails("not met", TARGETS, "says met")
        self.fails("met", NO_SPREAD, "nothing of a target")

    def test_not_a_reading(self):
        self.fails("quicker", SPEED, "not a reading")
        self.fails("faster;", SPEED, "empty reading")


FINDINGS = """# FINDINGS

## Rows

| ID | claim | figure | conditions | reproduce |
|---|---|---|---|---|
| F2.4 | batched vs ck_ring | %s | 2 cores | `make findings` |
| F6.15 | batch 16 vs 1, L2 | %s | 2 cores | `make findings` |
""" % (SPEED, OVERLAP)


class CheckReadings(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        write(os.path.join(self.dir, "FINDINGS.md"), FINDINGS)

    def run_readings(self, body, *extra):
        write(os.path.join(self.dir, "chapters", "02-x.md"), body)
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "findings_refs.py"), "readings", "--root", self.dir,
                            *extra], capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout

    def test_a_true_reading_passes(self):
        rc, out = self.run_readings("# x\n\nFaster, {{finding F2.4 | faster in every run; at least 3×}}.\n")
        self.assertEqual(rc, 0, out)
        self.assertIn("readings: 1 passed, 0 failed", out)

    def test_a_missing_or_contradicted_reading_fails_with_its_line(self):
        rc, out = self.run_readings("# x\n\n{{finding F2.4}}\n\n{{finding F6.15 | faster in every run}}\n"
                                    "{{finding F9.9 | faster}}\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("chapters/02-x.md:3: {{finding F2.4}}: no reading", out)
        self.assertIn("chapters/02-x.md:5: {{finding F6.15 | faster in every run}}: faster in every run: "
                      "the row says the run ranges overlap", out)
        self.assertIn("chapters/02-x.md:6", out)
        self.assertIn("readings: 0 passed, 3 failed", out)

    def test_the_readers_report_lists_and_does_not_fail(self):
        rc, out = self.run_readings("# x\n\n{{finding F6.15 | slower}}\n", "--report")
        self.assertEqual(rc, 0, out)
        self.assertIn("1 of the book's 1 readings say something your results do not", out)
        self.assertIn("chapters/02-x.md:3: F6.15 read as 'slower'", out)
        self.assertIn("you measured: **1.27×**", out)

    def test_check_anchors_holds_readings(self):
        write(os.path.join(self.dir, "chapters", "02-x.md"), "# x\n\n{{finding F2.4 | slower}}\n")
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "anchors.py"), "--root", self.dir, "check"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("{{finding F2.4 | slower}}: slower: the row's ratio is 3.07×", r.stdout)


def contradict(reading, figure):
    """The figure with its result moved just past one part of the reading
    (the first that reads the kept row: not one said only of other
    machines, of some stored run or of a count of them): what a rerun
    that the sentence no longer describes would print. None when no part
    reads the kept row."""
    def kept(part):
        if part.endswith(findings_refs.HERE):
            part = part[:-len(findings_refs.HERE)]
        if (part.endswith((findings_refs.OTHER, findings_refs.SOME_STORED))
                or findings_refs._COUNTED.search(part)):
            return None
        return part[:-len(findings_refs.STORED)].rstrip() if part.endswith(findings_refs.STORED) else part
    part = next((k for k in map(kept, findings_refs.reading_parts(reading)) if k), None)
    if part is None:
        return None
    part = re.split(r"\s+and\s+(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", part)[0]  # of forms joined by and, the first
    m = findings_refs._RATIO.match(part)
    if m:  # "A" over "B": the number after A moved so that the ratio passes the bound
        x = float(m.group(4).replace(",", ""))
        a, b = findings_refs.locate(figure, m.group(1)), findings_refs.locate(figure, m.group(2))
        ratio = x * 0.5 if m.group(3) in ("above", "at least") else x * 1.5 + 1
        return figure[:a[1]] + "%g" % (b[0] * ratio) + figure[a[2]:]
    last = findings_refs._OF_LAST.search(part)
    if last:  # of last "TEXT": move the result in the figure from TEXT's last occurrence on
        i = figure.rfind(last.group(1))
        return figure[:i] + contradict(part[:last.start()] + ' of "%s"' % last.group(1), figure[i:])
    m = findings_refs._PAIRS.match(part)
    if m:  # pairs: every run of the first side moved to the far side of the other's
        scale = 1000 if "below" in part else 0.001
        return re.sub(r"(runs?\s+)(%s(?:/%s)*)" % (findings_refs.NUMBER, findings_refs.NUMBER),
                      lambda r: r.group(1) + "/".join("%g" % (float(v.replace(",", "")) * scale)
                                                      for v in r.group(2).split("/")), figure, count=1)
    m = findings_refs._RUNS_SEP.match(part) or findings_refs._SIDE.match(part)
    if m and m.re is findings_refs._RUNS_SEP and m.group(1) == "overlap":
        return re.sub(r"run ranges overlap|\boverlap\b", "A faster in every run", figure)
    if m:
        return re.sub(r"[^;,():]*?\s*\b(faster|lower|higher|slower) in every run\b", " run ranges overlap", figure)
    m = findings_refs._VALUES.match(part)
    if m:  # every number written before TEXT (after of) moved past the bound
        q, before, rel, x, of = m.group(1), m.group(2), m.group(3), float(m.group(4).replace(",", "")), m.group(5)
        low = (rel in ("above", "at least")) == (q != "no")
        bad = "%g" % (x - abs(x) * 0.5 - 1 if low else x + abs(x) * 0.5 + 1)
        i = figure.find(of) if of else 0
        return figure[:i] + re.sub(r"(%s)(\s*%s)" % (findings_refs.NUMBER, re.escape(before)), bad + r"\2",
                                   figure[i:])
    m = findings_refs._QUANT.match(part) or findings_refs._CELLSET.match(part) or findings_refs._SPREAD.match(part)
    if m:
        if m.re is findings_refs._QUANT:
            q, noun, rel, x, of = m.group(1), m.group(3), m.group(4), float(m.group(5).replace(",", "")), m.group(6)
        elif m.re is findings_refs._CELLSET:
            q, noun, rel, x, of = "every", "cell", m.group(2), float(m.group(3).replace(",", "")), m.group(5)
        else:
            q, noun, rel, x, of = "spread", "run", m.group(1), float(m.group(2).replace(",", "")), m.group(3)
        low = (rel in ("above", "at least")) == (q != "no")  # every/lowest/highest: break it; no: make it so
        bad = "%g" % (x - abs(x) * 0.5 - 1 if low else x + abs(x) * 0.5 + 1)
        if noun == "cell":
            i = figure.find(of) + len(of) if of else 0
            return figure[:i] + re.sub(r"(%s)(\s*×)" % findings_refs.NUMBER, bad + r"\2", figure[i:])
        got = findings_refs.run_values(figure, of)
        if q == "spread":
            med = abs(findings_refs.locate(figure, of)[0])
            bad = "%g–%g" % (med, med) if rel in ("above", "at least") else "0–%g" % (med * 10 + 10)
        else:
            bad = "/".join([bad] * len(got[0]))
        return figure.replace(got[1], bad)
    m = re.match(r'^(at least|at most)\s+(%s)\s*\S*?(?:\s+of\s+"([^"]+)")?$' % findings_refs.NUMBER, part)
    if m:
        x = float(m.group(2).replace(",", ""))
        v, a, b = findings_refs.locate(figure, m.group(3))
        bad = x - abs(x) * 0.5 - 1 if m.group(1) == "at least" else x + abs(x) * 0.5 + 1
        return figure[:a] + ("%g" % bad) + figure[b:]
    m = re.match(r'^(met|not met)(?:\s+of\s+"([^"]+)")?$', part)
    if m:
        i = figure.find(m.group(2)) if m.group(2) else 0
        head, tail = figure[:i], figure[i:]
        if m.group(1) == "met":
            return head + re.sub(r"\bmet\b", "not met", tail, count=1)
        return head + re.sub(r"\bnot met\b", "met", tail, count=1)
    if part.startswith("faster") or part.startswith("slower"):
        v, a, b = findings_refs.locate(figure)
        return figure[:a] + ("0.5" if part.startswith("faster") else "2.0") + figure[b:]
    if part == "even":
        return re.sub(r"run ranges overlap|overlap", "A faster in every run", figure)
    raise AssertionError("no contradiction for %r" % part)


class TheBook(unittest.TestCase):
    """The real chapters against the kept FINDINGS.md."""

    def test_every_reading_holds_and_every_citation_has_one(self):
        n, fails = findings_refs.check_readings(ROOT, findings_refs.book_documents(ROOT))
        self.assertGreater(n, 100)
        self.assertEqual(fails, [], "\n".join("%s: %s: %s" % (w, r, why) for w, _, r, why in fails[:20]))

    def test_moving_any_kept_result_past_its_reading_fails(self):
        rows = findings_refs.load(ROOT)
        moved = 0
        for doc in findings_refs.book_documents(ROOT):
            with open(doc, encoding="utf-8") as f:
                cites = findings_refs.citations(f.read())
            for line, rid, reading in cites:
                if not reading or rid not in rows:
                    continue
                fig = rows[rid]["figure"]
                if findings_refs.evaluate(reading, fig):
                    continue  # reported by the test above
                bad = contradict(reading, fig)
                if bad is None:
                    continue  # said only of other runs: the stored-run tests plant those
                self.assertIsNotNone(findings_refs.evaluate(reading, bad),
                                     "%s:%d: %s read as %r still holds after %r"
                                     % (os.path.relpath(doc, ROOT), line, rid, reading, bad))
                moved += 1
        self.assertGreater(moved, 100)


class TryIt(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def script(self, nn, body):
        write(os.path.join(self.dir, "chapters", "try-it", "%s.sh" % nn), body)

    def test_structure(self):
        write(os.path.join(self.dir, "chapters", "01-a.md"), "# a\n\n::: try-it\nGuess.\n\n{{try-it 01}}\n:::\n")
        write(os.path.join(self.dir, "chapters", "02-b.md"), "# b\n\n::: try-it\nno script\n:::\n")
        write(os.path.join(self.dir, "chapters", "03-c.md"), "# c\n\n{{try-it 03}}\n")
        self.script("01", "echo hi\n# expect: hi\n")
        self.script("04", "echo orphan\n# expect: orphan\n")
        fails = tryit.structure(self.dir)
        self.assertIn("chapters/02-b.md: its try-it box shows no script ({{try-it NN}})", fails)
        self.assertIn("chapters/03-c.md: {{try-it 03}} but there is no chapters/try-it/03.sh", fails)
        self.assertIn("chapters/try-it/04.sh: no chapter shows it", fails)
        self.assertEqual(len(fails), 3, fails)

    def test_run_checks_exit_and_promises_in_the_short_form(self):
        self.script("01", 'if [ -n "${TRYIT_SHORT:-}" ]; then echo "idle worker CPU 0.0%"; else echo long; fi\n'
                          "# expect: idle worker CPU 0\\.0\n")
        p, f, msgs, _, _ = tryit.run("01", root=self.dir)
        self.assertEqual((p, f), (2, 0), msgs)
        p, f, msgs, _, _ = tryit.run("01", full=True, root=self.dir)
        self.assertEqual((p, f), (1, 1))
        self.assertIn("01.sh:2: promised a line matching /idle worker CPU 0\\.0/", msgs[0])
        self.script("02", "echo partial; exit 3\n# expect: partial\n")
        p, f, msgs, _, _ = tryit.run("02", root=self.dir)
        self.assertEqual((p, f), (1, 1))
        self.assertIn("exit 3", msgs[0])
        self.script("03", "sleep 5\n# expect: x\n")
        p, f, msgs, _, _ = tryit.run("03", root=self.dir, timeout=1)
        self.assertIn("timeout after 1s", msgs[0])

    def test_render_shows_the_script(self):
        self.script("05", "#!/usr/bin/env bash\necho hi\n")
        out = tryit.render("05", self.dir)
        self.assertIn("```sh\n#!/usr/bin/env bash\necho hi\n```", out)
        self.assertIn("bash chapters/try-it/05.sh", out)

    def test_every_chapter_box_is_a_script(self):
        self.assertEqual(tryit.structure(ROOT), [])


class Readability(unittest.TestCase):
    def test_main_line_leaves_out_code_tables_and_fine_print(self):
        text = ("---\ntitle: x\n---\n\n# Title\n\nOne two three. Four five.\n\n```c\nint a;\n```\n\n"
                "| a | b |\n|---|---|\n\n::: fine-print\nHidden words here.\n:::\n\n- Item one is here.\n"
                "- Item two.\n\n> Quoted words.\n")
        paras = [p for _, p in readability.main_line(text)]
        self.assertEqual(paras, ["One two three. Four five.", "Item one is here.", "Item two.", "Quoted words."])
        lens, long_paras, _ = readability.measure(text)
        self.assertEqual(lens, [3, 2, 4, 2, 2])
        self.assertEqual(long_paras, [])

    def test_sentences_and_words(self):
        s = readability.sentences("See `src/a.c@x` and {{finding F1.2 | faster}}, e.g. the ring. Then 1.5 ns. "
                                  "Done [here](x.md).")
        self.assertEqual([len(w) for w in s], [7, 3, 2])

    def test_the_opening_is_checked(self):
        good = ("# T\n\n**After this chapter you can:**\n\n- a\n- b\n  more of b\n- c\n\n"
                "**In one paragraph.** It says.\n\nBody.\n")
        self.assertEqual(readability.opening_problems(good), [])
        self.assertIn("has 2 bullets (three to five)",
                      readability.opening_problems(good.replace("- c\n", ""))[0])
        self.assertIn("not followed by '**In one paragraph.**'",
                      readability.opening_problems(good.replace("**In one paragraph.**", "Summary."))[0])
        self.assertIn("not followed by '**After this chapter you can:**'",
                      readability.opening_problems("# T\n\nBody.\n")[0])

    def test_a_long_paragraph_fails(self):
        d = tempfile.mkdtemp()
        p = os.path.join(d, "00-x.md")
        opening = "**After this chapter you can:**\n\n- a\n- b\n- c\n\n**In one paragraph.** S.\n\n"
        write(p, "# x\n\n" + opening + "Word word word word word. " * 31 + "\n")
        import io
        buf = io.StringIO()
        self.assertFalse(readability.report([p], out=buf))
        self.assertIn("a paragraph of 155 words", buf.getvalue())
        write(p, "# x\n\n" + opening + "Word word word word word. " * 20 + "\n")
        self.assertTrue(readability.report([p], out=io.StringIO()))


if __name__ == "__main__":
    unittest.main()
