"""Tests of tools/findings_refs.py: {{finding F0.N}} references resolved
against FINDINGS.md's rows, for the book and for `make check-anchors`; the
readings of a row's cells, of its runs (overlapping, apart, every run, the
spread) and of the same row across the stored runs of its benchmark, each
shown to hold where the row says so and to fail on a planted wrong claim."""

import json
import os
import shutil
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


# Figures shaped as tools/findings.py prints them (F7.18, F8.40, F7.37,
# F8.52, F8.54, F7.28, F7.31, F0.11, F6.23).
CEILING = ("not met (highest 1.10×: off SET 2 MB); above the ceiling: on SET 1 MB 1.09×, off SET 2 MB 1.10×; "
           "GET 1 MB: on 0.88×, off 0.84×, redis 0.85×; GET 2 MB: on 0.91×, off 0.81×, redis 0.70×; "
           "SET 1 MB: on 1.09×, off 0.98×, redis 0.98×; SET 2 MB: on 0.97×, off 1.10×, redis 1.00×")
WORST = "lowest 0.84×: 10 P=1 0.94×, 10 P=16 1.07×, 100 P=1 0.90×, 1000 P=1 0.88×, 1000 P=16 0.84×"
TARGET = "not met (lowest 0.73×: t2 2 MB); t1 1 MB 0.77×, t2 1 MB 0.79×, t1 2 MB 0.96×, t2 2 MB 0.73×"
SUMMARY = ("geometric mean 1.85×; lowest cell 0.98× (ZRANGEBYLEX 10 P=1); ZRANGE 1.36×, "
           "ZRANGEBYSCORE 1.28×, ZRANGEBYLEX 1.35×")
PER_RUN = ("ZRANGE 10: rate 0.99× (runs 0.99 0.93 1.04), CPU 1.03×; ZRANGEBYSCORE 100: rate 0.87× "
           "(runs 0.83 0.87 0.88), CPU 1.04×")
SET_BW = ("on 3583, off 3383, redis 3220 MB/s (ceiling 3299): on/redis = 1.11×, on/ceiling = 1.09×; "
          "runs on 3353–3803, off 3109–3630, redis 2129–3443, ceiling 3246–3715 MB/s; "
          "on against the ceiling: run ranges overlap; against off: run ranges overlap; "
          "against redis: on faster in every run")
WRITE = "**2210 ns** per call wall, 2209 ns writer CPU (median of 5; runs 2101–2222 ns; 0.06 Gbit/s)"
PREFETCH = "1.121 / 1.772 µs = 0.63× (runs 1.120–1.243 vs 1.716–2.086; prefetch on lower in every run)"


class Readings(unittest.TestCase):
    def holds(self, reading, figure):
        self.assertIsNone(findings_refs.evaluate(reading, figure), (reading, figure))

    def fails(self, reading, figure, fragment, stored=lambda: []):
        why = findings_refs.evaluate(reading, figure, stored)
        self.assertIsNotNone(why, (reading, figure))
        self.assertIn(fragment, why)
        self.assertNotIn("\n", why)

    def test_cells_are_read_from_every_list_shape(self):
        cells = dict(findings_refs.cells(CEILING))
        self.assertEqual(cells["on GET 1 MB"], 0.88)
        self.assertEqual(cells["off SET 2 MB"], 1.10)
        self.assertNotIn("off SET 2 MB above the ceiling", cells)   # the heading's repeat counts once
        self.assertNotIn("highest", " ".join(cells))
        self.assertEqual(findings_refs.cells(WORST)[0], ("10 P=1", 0.94))
        self.assertEqual(len(findings_refs.cells(WORST)), 5)
        self.assertEqual(dict(findings_refs.cells(TARGET))["t2 2 MB"], 0.73)
        self.assertEqual([n for n, _ in findings_refs.cells(SUMMARY)], ["ZRANGE", "ZRANGEBYSCORE", "ZRANGEBYLEX"])
        self.assertEqual(dict(findings_refs.cells(PER_RUN))["rate ZRANGEBYSCORE 100"], 0.87)
        self.assertTrue(findings_refs.names("SET 1 MB", "on SET 1 MB"))
        self.assertFalse(findings_refs.names("10 P=1", "100 P=1"))
        self.assertFalse(findings_refs.names("ZRANGE 10", "ZRANGEBYSCORE 10"))

    def test_cells_against_a_line(self):
        self.holds("cells above 1.0: SET 1 MB, SET 2 MB", CEILING)
        self.holds("no GET cell above 1.0; every GET cell below 1", CEILING)
        self.holds("highest cell at most 1.1; lowest cell at least 0.7", CEILING)
        self.holds("every cell at least 0.8", WORST)
        self.holds("lowest cell at least 0.6; cells below 0.9: 1000 P=1, 1000 P=16", WORST)
        self.holds("every t1 cell at least 0.75", TARGET)
        self.holds("every cell above 1.2", SUMMARY)
        # "a few GET medians came out above it": the row lists only SET cells above
        self.fails("cells above 1.0: GET 1 MB, SET 1 MB", CEILING, "no cell GET 1 MB is above 1")
        self.fails("cells above 1.0: SET 1 MB", CEILING, "also has off SET 2 MB 1.1× above 1")
        self.fails("no cell above 1.0", CEILING, "2 of 12 cells are: on SET 1 MB 1.09×, off SET 2 MB 1.1×")
        self.fails("every cell at least 0.9", WORST, "2 of 5 cells are not: 1000 P=1 0.88×, 1000 P=16 0.84×")
        self.fails("lowest cell at least 0.85", WORST, "the lowest is 0.84 (1000 P=16)")
        self.fails("no PING cell above 1", CEILING, "lists no PING cells")
        self.fails("every cell at least 1", WRITE, "lists no cells")

    def test_runs_overlap_or_apart(self):
        self.holds("runs overlap of \"on against the ceiling\"", SET_BW)
        self.holds("runs apart of \"against redis\"; on faster in every run of \"against redis\"", SET_BW)
        self.holds("prefetch on lower in every run; runs apart", PREFETCH)
        # one side won every run: a sentence saying the runs overlap fails
        self.fails("runs overlap of \"against redis\"", SET_BW, "the row says on faster in every run")
        self.fails("runs overlap", PREFETCH, "the row says prefetch on lower in every run")
        # "every server's runs overlap them"
        self.fails("runs overlap in every pair", SET_BW, "1 of the row's 3 verdicts say otherwise")
        self.holds("runs overlap in every pair of \"ceiling:\"", SET_BW.replace("on faster in every run",
                                                                               "run ranges overlap"))
        self.fails("redis faster in every run of \"against redis\"", SET_BW, "the row says on faster")
        self.fails("prefetch on faster in every run", PREFETCH, "the row says prefetch on lower")
        self.fails("runs apart of \"nowhere\"", SET_BW, 'no "nowhere"')
        self.fails("runs apart", WRITE, "no runs' spread")

    def test_spread_as_a_share_of_the_median(self):
        self.holds("spread at most 15% of \"ceiling\"", SET_BW)       # 3246–3715 of 3299: 14.2%
        self.holds("spread at most 6%", WRITE)                          # 2101–2222 of 2210
        self.fails("spread at most 10% of \"ceiling\"", SET_BW, "runs 3246–3715 spread 14.2% of 3299")
        # "the pair's runs spread by more than half of its median"
        self.fails("spread at least 50% of \"off\"", SET_BW, "runs 3109–3630 spread 15.4% of 3383")
        self.holds("spread at least 40% of \"redis\"", SET_BW)        # 2129–3443 of 3220
        self.fails("spread at most 5% of \"CPU\"", PER_RUN, "no median with its runs")   # not the next cell's

    def test_every_run(self):
        self.holds('every run below 1 of "ZRANGEBYSCORE 100"', PER_RUN)
        self.holds('highest run at most 0.88 of "ZRANGEBYSCORE 100"; lowest run at least 0.9 of "ZRANGE 10"',
                   PER_RUN)
        self.holds("every run at least 2000", WRITE)
        # "one cell behind in one run and ahead in the next": it was behind in all three
        self.fails('no run below 1 of "ZRANGEBYSCORE 100"', PER_RUN, "3 of the 3 runs are (runs 0.83 0.87 0.88)")
        self.fails('highest run above 1 of "ZRANGEBYSCORE 100"', PER_RUN, "the highest is 0.88 (runs 0.83 0.87 0.88)")
        self.fails('every run below 1 of "ZRANGE 10"', PER_RUN, "1 of the 3 runs are not (runs 0.99 0.93 1.04)")
        self.fails("every run below 1.2", PREFETCH.replace("1.243", "1.25"), "runs 1.120–1.25")
        self.fails("every GET run below 1", PER_RUN, "runs are not named")

    def test_runs_compared_pair_by_pair(self):
        drift = "**1.27×** (64.7 / 51.1 ns/lookup; runs find 64.7/65.5/74.2/31.8/34.0, batch 16 52.3/51.3/50.1/36.3/51.1; run ranges overlap)"
        self.holds('"batch 16" runs below "find" runs in 3 of 5 pairs', drift)
        self.holds('"find" runs above "batch 16" runs in 3 of 5 pairs; runs overlap', drift)
        # a planted reading: the two drifted together, so not every pair is ordered
        self.fails('"batch 16" runs below "find" runs in every pair', drift, "3 of 5 pairs")
        self.fails('"batch 16" runs below "find" runs in 4 of 5 pairs', drift, "3 of 5 pairs")
        self.fails('"batch 16" runs below "find" runs in 3 of 4 pairs', drift, "3 of 5 pairs")
        self.fails('"batch 16" runs below "find" runs in every pair', "runs find 1/2, batch 16 1/2/3", "do not pair")
        self.fails('"none" runs below "find" runs in every pair', drift, 'no "none"')
        rows = {"F2.6": {"figure": "**109.3 ns/item** (runs 27.3/64.1/120.9)"}}
        mine = "**53.5 ns/item** (runs 17.8/16.9/55.4)"
        self.assertIsNone(findings_refs.evaluate("runs below F2.6's in every pair", mine, None, rows))
        self.assertIn("0 of 3 pairs", findings_refs.evaluate("runs above F2.6's in every pair", mine, None, rows))
        self.assertIn("no row F9.9", findings_refs.evaluate("runs below F9.9's in every pair", mine, None, rows))

    def test_of_last_reads_the_last_occurrence(self):
        cost = ("io-threads 2 **2.80 µs** (2.25× of io-threads 1, io-threads 1 lower in every run; without main's idle"
                " spin 1.42 µs (runs 1.24–1.44), 1.14× of io-threads 1, run ranges overlap); io-threads 4 **1.22 µs**"
                " (0.98× of io-threads 1, run ranges overlap; without main's idle spin 0.96 µs (runs 0.65–1.24),"
                " 0.77× of io-threads 1, io-threads 4 without the spin lower in every run)")
        self.holds('io-threads 4 without the spin lower in every run of last "without main\'s idle spin"', cost)
        self.holds('every value before "× of io-threads 1" below 1 of last "without main\'s idle spin"', cost)
        # a planted reading: the first occurrence (io-threads 2's) overlaps, the last does not
        self.fails('runs overlap of last "without main\'s idle spin"', cost, "of last")
        self.holds('runs overlap of "without main\'s idle spin"', cost)
        self.fails('runs overlap of last "no such text"', cost, 'no "no such text"')

    def test_a_cell_name_in_parentheses(self):
        row = "PING 1.12× (1.00–1.31); LPUSH 0.95× (0.85–0.99); LPUSH (LRANGE fill) 0.96× (0.39–1.04); MSET 0.95×"
        self.assertIn(("LPUSH [LRANGE fill]", 0.96), findings_refs.cells(row))
        # planted: a count that leaves out the bracketed test
        self.fails("3 of 3 cells below 1", row, "3 of the 4 cells")
        self.holds("3 of 4 cells below 1", row)

    def test_runs_and_cells_counted(self):
        ring = "**3.87 ns/item** (runs 9.7/3.9/3.8/3.9/4.1/3.8/3.8)"
        self.holds("6 of 7 runs below 4.2", ring)
        # planted: "every run but the first" said of a row where two are above
        self.fails("7 of 7 runs below 4.2", ring, "6 of the 7 runs are below 4.2")
        self.fails("6 of 8 runs below 4.2", ring, "6 of the 7 runs")
        self.holds("2 of 3 GET cells below 1", "GET 3 B 0.05×; GET 512 B 1.65×; GET 1 MB 0.59×; SET 3 B 2.0×")
        self.fails("3 of 3 GET cells below 1", "GET 3 B 0.05×; GET 512 B 1.65×; GET 1 MB 0.59×", "2 of the 3 cells")

    def test_prose_about_runs_must_cite_a_row(self):
        unread = findings_refs.unread_run_claims
        # planted: a paragraph that says the runs overlap and cites nothing
        self.assertEqual(unread("One.\n\nThe two servers' runs overlap at 1 MB.\n"), [(3, "runs overlap")])
        self.assertEqual(unread("Ahead in every run\n({{finding F7.31 | faster in every run}}).\n"), [])
        self.assertEqual(unread("A wrong order can pass every run on x86.\n<!-- not a row: tests -->\n"), [])
        self.assertEqual(unread("```\nruns overlap\n```\n\n| a | in every run |\n"), [])
        self.assertEqual(unread("Line one\nand then in all three runs it led.\n"), [(2, "in all three runs")])
        self.assertEqual(unread("The runs overlap:\n\n{{finding F4.99 | met}}\n"), [])

    def test_an_approximate_figure_needs_both_bounds(self):
        approx = findings_refs.approximate_one_sided
        # planted: "about seven tenths" read as "at most 0.8" passes at 0.2 too
        self.assertEqual(approx("Copying runs at about seven tenths of it ({{finding F7.3 | at most 0.8}})."),
                         [(1, "F7.3", "at most 0.8", "about seven")])
        self.assertEqual(approx("It is nearly twice as fast\n({{finding F6.4 | at least 1.7×; faster}})."),
                         [(2, "F6.4", "at least 1.7×; faster", "nearly twice")])
        self.assertEqual(approx("About a third ({{finding F8.8 | at least 0.3×; at most 0.4×}})."), [])
        # words that bound one side themselves, and an approximation in an earlier clause
        self.assertEqual(approx("It is more than twice as fast ({{finding F6.4 | at least 2×}})."), [])
        self.assertEqual(approx("About half go; the rest stay ({{finding F6.4 | at least 2×}})."), [])
        self.assertEqual(approx("About twice ({{finding F6.4 | faster}})."), [])
        # the check runs with the readings: a planted one fails check_readings
        root = tempfile.mkdtemp()
        with open(os.path.join(root, "FINDINGS.md"), "w") as f:
            f.write("## Rows\n\n| ID | claim | figure | conditions | reproduce |\n|---|---|---|---|---|\n"
                    "| F7.3 | c | **0.2×** | x | y |\n")
        doc = os.path.join(root, "chapters", "07.md")
        os.makedirs(os.path.dirname(doc))
        with open(doc, "w") as f:
            f.write("Copying runs at about seven tenths of it ({{finding F7.3 | at most 0.8}}).\n")
        n, fails = findings_refs.check_readings(root, [doc])
        self.assertEqual(len(fails), 1)
        self.assertIn("both bounds", fails[0][3])

    def test_verdicts_counted(self):
        peer = ("GET 0.05× (io-threads 1 faster in every run); GET 512 B 0.65× (run ranges overlap);"
                " SET 0.59× (io-threads 1 faster in every run)")
        self.holds("runs apart in 2 of 3 pairs; runs overlap in 1 of 3 pairs", peer)
        # planted: "in every cell in every run" where one cell's runs overlap
        self.fails("runs apart in every pair", peer, "1 of the row's 3 verdicts say otherwise")
        self.fails("runs apart in 3 of 3 pairs", peer, "2 of the row's 3 verdicts say so")
        self.fails("runs apart in 2 of 4 pairs", peer, "2 of the row's 3 verdicts say so")

    def test_a_wrong_form_names_the_forms(self):
        self.fails("cells above one: GET", CEILING, "not a reading")
        self.fails("runs overlapping", SET_BW, "not a reading")

    def test_in_every_stored_run_without_stored_runs_fails(self):
        self.fails("faster in every stored run", "**1.2×** (x)", "no stored run produced")  # (one line)
        self.assertIsNotNone(findings_refs.evaluate("faster in every stored run", "**1.2×**", lambda: []))
        self.assertIsNone(findings_refs.evaluate("faster in every stored run", "**1.2×**"))  # the kept row alone
        self.assertIsNone(findings_refs.evaluate("faster in every stored run", "**1.2×** (x)",
                                                 lambda: [("r1", "**1.1×**"), ("r2", "**1.2×**")]))
        why = findings_refs.evaluate("faster in every stored run", "**1.2×** (x)",
                                     lambda: [("r1", "**0.9×**"), ("r2", "**1.2×**")])
        self.assertEqual(why, "faster in every stored run: run r1: the row's ratio is 0.9× (1 of 2 stored runs)")
        # the kept row is read first
        self.assertIn("ratio is 0.8×", findings_refs.evaluate("faster in every stored run", "**0.8×**",
                                                              lambda: [("r1", "**1.1×**")]))


    def test_values_written_before_a_text(self):
        t2 = ("1 MB: t2 3174 MB/s = 0.91× ceiling, 1.04× t1; 2 MB: t2 2822 MB/s = 0.69× ceiling, 0.75× t1; "
              "16 MB: t2 1743 MB/s = 0.94× ceiling, 1.14× t1")
        self.holds('every value before "× t1" at least 0.7; every value before "× t1" at most 1.2', t2)
        self.holds('highest value before "× ceiling" below 1; lowest value before "× t1" at least 0.75', t2)
        self.holds('every value before "× t1" above 1 of "16 MB:"', t2)          # from 16 MB on only
        # "within a fifth of io-threads 1 at every size": 2 MB is a quarter below
        self.fails('every value before "× t1" at least 0.8', t2, "1 of the 3 values are not: 0.75")
        self.fails('no value before "× ceiling" below 0.7', t2, "1 of the 3 values are: 0.69")
        self.fails('lowest value before "× t1" at least 0.8', t2, "the lowest is 0.75")
        self.fails('every value before "× t2" at least 1', t2, 'writes no number before "× t2"')
        self.fails('every value before "× t1" above 1 of "64 MB:"', t2, 'no "64 MB:"')

    def test_in_some_stored_run(self):
        apart, overlap = "**1.2×**; A faster in every run", "**1.1×**; run ranges overlap"
        # the kept row alone has it, or no stored runs to read: read as the kept row
        self.assertIsNone(findings_refs.evaluate("runs apart in some stored run", apart, lambda: []))
        self.assertIsNone(findings_refs.evaluate("runs overlap in some stored run", overlap))
        # "apart only in the kept run": an older run overlaps
        self.assertIsNone(findings_refs.evaluate("runs overlap in some stored run", apart,
                                                 lambda: [("r1", overlap), ("r2", apart)]))
        # planted: a sentence saying some run overlapped where every stored run was apart
        why = findings_refs.evaluate("runs overlap in some stored run", apart,
                                     lambda: [("r1", apart), ("r2", apart)])
        self.assertEqual(why, "runs overlap in some stored run: neither the kept row nor any of the 2 stored"
                              " runs has it (the kept row: the row says A faster in every run)")
        self.assertIsNotNone(findings_refs.evaluate("runs overlap in some stored run", apart, lambda: []))
        self.assertIsNotNone(findings_refs.evaluate("runs overlap in some stored run", apart))


PROV = {"date": "2026-11-30T10:00:00+00:00", "host": "fixture", "cpu_model": "Fixture CPU", "cores": 2,
        "kernel": "6.1.0-fixture", "compiler": "cc 12.2.0", "git": {"commit": "abcdef123456"}, "quick": False}


def toy_line(rid, figure):
    """A benchmark's own row, as bench/*.py prints it (tools/findings.py's h_generic)."""
    return {"bench": "toy", "finding": True, "id": rid, "claim": "toy ratio", "figure": figure,
            "config": {"runs": 3}}


class AcrossStoredRuns(unittest.TestCase):
    """A results tree with three stored runs of one benchmark: r1 (oldest)
    contradicts what r2 and r3 (the kept run) say; rq is a QUICK=1 run."""

    def setUp(self):
        self.root = tempfile.mkdtemp()
        runs = {"r1": ("2026-11-01T00:00:00+00:00", False, "**0.95×** (runs 0.91 0.95 1.02; run ranges overlap)"),
                "r2": ("2026-11-02T00:00:00+00:00", False, "**1.10×** (runs 1.05 1.10 1.12; A faster in every run)"),
                "r3": ("2026-11-03T00:00:00+00:00", False, "**1.20×** (runs 1.15 1.20 1.22; A faster in every run)"),
                "rq": ("2026-11-04T00:00:00+00:00", True, "**0.50×** (runs 0.40 0.50 0.60; B faster in every run)")}
        for name, (date, quick, fig) in runs.items():
            d = os.path.join(self.root, "bench", "results", name)
            os.makedirs(d)
            with open(os.path.join(d, "provenance.json"), "w") as f:
                json.dump(dict(PROV, date=date, quick=quick, run_id=name), f)
            with open(os.path.join(d, "toy.jsonl"), "w") as f:
                f.write(json.dumps(toy_line("F9.1", fig)) + "\n")
                if name != "r1":  # a row added after r1
                    f.write(json.dumps(toy_line("F9.2", "**1.50×** (runs 1.4 1.5 1.6; A faster in every run)")) + "\n")
        with open(os.path.join(self.root, "FINDINGS.md"), "w") as f:
            f.write("# FINDINGS\n\n## Rows\n\n| ID | claim | figure | conditions | reproduce |\n|---|---|---|---|---|\n")
            for rid, fig in (("F9.1", runs["r3"][2]), ("F9.2", "**1.50×** (runs 1.4 1.5 1.6; A faster in every run)")):
                f.write("| %s | toy ratio | %s | 2 cores | `make findings BENCH=toy` (raw: `bench/results/r3/toy.jsonl`) |\n"
                        % (rid, fig))
        self.chapter = os.path.join(self.root, "chapters", "01-x.md")
        os.makedirs(os.path.dirname(self.chapter))

    def readings(self, *refs):
        with open(self.chapter, "w") as f:
            f.write("# x\n\n" + "\n".join(refs) + "\n")
        return findings_refs.check_readings(self.root, [self.chapter])

    def test_load_keeps_the_rows_raw_source(self):
        self.assertEqual(findings_refs.load(self.root)["F9.1"]["source"], "bench/results/r3/toy.jsonl")

    def test_every_full_stored_run_is_regenerated_oldest_first(self):
        got = findings_refs.stored_figures(self.root, "bench/results/r3/toy.jsonl", "F9.1")
        self.assertEqual([name for name, _ in got], ["r1", "r2", "r3"])   # rq is QUICK=1
        self.assertIn("**0.95×**", got[0][1])
        self.assertEqual([n for n, _ in findings_refs.stored_figures(self.root, "bench/results/r3/toy.jsonl",
                                                                      "F9.2")], ["r2", "r3"])

    def test_a_reading_an_older_stored_run_contradicts_fails_with_that_run(self):
        n, fails = self.readings("{{finding F9.1 | faster in every run}}",
                                 "{{finding F9.1 | at least 0.9 in every stored run}}",
                                 "{{finding F9.1 | faster in every stored run}}",
                                 "{{finding F9.1 | every run above 1 in every stored run}}",
                                 "{{finding F9.2 | runs apart in every stored run}}")
        self.assertEqual(n, 5)
        self.assertEqual([(w, why) for w, _, _, why in fails], [
            ("chapters/01-x.md:5", "faster in every stored run: run r1: the row's ratio is 0.95× (1 of 3 stored runs)"),
            ("chapters/01-x.md:6", "every run above 1 in every stored run: run r1: 2 of the 3 runs are not "
                                   "(runs 0.91 0.95 1.02) (1 of 3 stored runs)")])

    def move_r1_to_another_machine(self):
        prov = os.path.join(self.root, "bench", "results", "r1", "provenance.json")
        with open(prov) as f:
            p = json.load(f)
        with open(prov, "w") as f:
            json.dump(dict(p, cpu_model="Other CPU"), f)

    def test_on_this_machine_reads_only_the_kept_runs_machine(self):
        # r1, the run that contradicts, moves to another machine: a reading
        # scoped to the kept run's machine no longer sees it, one across
        # every stored run still does.
        self.move_r1_to_another_machine()
        self.assertEqual([n for n, _ in findings_refs.stored_figures(self.root, "bench/results/r3/toy.jsonl",
                                                                      "F9.1", here=True)], ["r2", "r3"])
        n, fails = self.readings("{{finding F9.1 | faster in every stored run on this machine}}",
                                 "{{finding F9.1 | faster in every stored run}}",
                                 "{{finding F9.1 | runs overlap in some stored run on this machine}}",
                                 "{{finding F9.1 | runs overlap in some stored run}}")
        self.assertEqual(n, 4)
        self.assertEqual([(w, why.split(":")[0]) for w, _, _, why in fails], [
            ("chapters/01-x.md:4", "faster in every stored run"),
            ("chapters/01-x.md:5", "runs overlap in some stored run on this machine")])
        self.assertIn("any of the 2 stored runs", fails[1][3])

    def test_runs_counted_and_other_machines(self):
        # r1 on another machine: "in most stored runs" counts all three runs,
        # "on other machines" reads r1 alone, and a count must be exact.
        self.move_r1_to_another_machine()
        n, fails = self.readings("{{finding F9.1 | faster in 2 of 3 stored runs}}",
                                 "{{finding F9.1 | faster in most stored runs}}",
                                 "{{finding F9.1 | slower in every stored run on other machines}}",
                                 "{{finding F9.1 | at least 0.9 and at most 1.0 in 1 of 1 stored runs on other machines}}",
                                 # planted: a count that leaves out the run that disagrees
                                 "{{finding F9.1 | faster in 3 of 3 stored runs}}",
                                 # planted: "slower on the other machine" said of the kept machine's runs
                                 "{{finding F9.1 | slower in some stored run on this machine}}",
                                 "{{finding F9.1 | faster in some stored run on other machines}}",
                                 "{{finding F9.1 | slower in most stored runs}}")
        self.assertEqual(n, 8)
        self.assertEqual([w for w, _, _, _ in fails], ["chapters/01-x.md:%d" % i for i in (7, 8, 9, 10)])
        self.assertIn("2 of the 3 stored runs have it", fails[0][3])
        self.assertIn("none of the 1 stored runs on other machines", fails[2][3])

    def test_a_ratio_of_two_numbers_and_forms_joined_by_and(self):
        fig = "16: 100 ns, 128: 92 ns (runs 90–95); a and b 7"
        self.assertIsNone(findings_refs.evaluate('"128:" over "16:" at most 0.95', fig))
        self.assertIsNone(findings_refs.evaluate('"128:" over "16:" at least 0.9', fig))
        # planted: "about a tenth cheaper" where the row shows a twentieth
        why = findings_refs.evaluate('"128:" over "16:" at most 0.9', fig)
        self.assertIn("the row's ratio is 0.92 (92 / 100)", why)
        self.assertIn('no number after "64:"', findings_refs.evaluate('"64:" over "16:" at most 1', fig))
        self.assertIsNone(findings_refs.evaluate('at least 90 of "128:" and at most 95 of "128:"', fig))
        self.assertIn("the row measured 92", findings_refs.evaluate('at least 90 of "128:" and at most 91 of "128:"', fig))
        self.assertIsNone(findings_refs.evaluate('at least 7 of "a and b"', fig))

    def test_the_command_line_names_the_run(self):
        with open(self.chapter, "w") as f:
            f.write("# x\n\n{{finding F9.1 | runs apart in every stored run}}\n")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "findings_refs.py"), "readings",
                            "--root", self.root], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("runs apart in every stored run: run r1: the row says run ranges overlap", r.stdout)

    def test_a_row_without_raw_results_cannot_be_read_across_runs(self):
        with open(os.path.join(self.root, "FINDINGS.md")) as f:
            text = f.read()
        with open(os.path.join(self.root, "FINDINGS.md"), "w") as f:
            f.write(text.replace("bench/results/r3/toy.jsonl", "bench/results/gone/toy.jsonl"))
        shutil.rmtree(os.path.join(self.root, "bench"))
        n, fails = self.readings("{{finding F9.1 | faster in every stored run}}")
        self.assertIn("no stored run produced this row", fails[0][3])


class TheKeptRuns(unittest.TestCase):
    """The repository's own results: each row FINDINGS.md keeps is what
    regenerating its raw source gives, so a reading across the stored runs
    reads the same figures the book shows for the kept one."""

    def test_regenerating_each_kept_source_gives_the_kept_figure(self):
        rows = findings_refs.load(ROOT)
        if rows is None:
            self.skipTest("no FINDINGS.md")
        import findings
        made, checked = {}, 0
        for rid, row in sorted(rows.items()):
            src = row["source"]
            if not src or not os.path.isfile(os.path.join(ROOT, src)):
                continue
            if src not in made:
                made[src] = findings.rows_of_run(os.path.dirname(os.path.join(ROOT, src)),
                                                 os.path.basename(src)[:-len(".jsonl")])
            if rid in made[src]:   # rows that read two benchmarks are not made from one
                self.assertEqual(made[src][rid], row["figure"], rid)
                checked += 1
        self.assertGreater(checked, 100)


if __name__ == "__main__":
    unittest.main()
