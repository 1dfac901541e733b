"""tools/exercise.py end to end on a fixture project: the real top-level
Makefile and mk/reader.mk, a two-function module with exercise regions, its
cmocka tests, a points table, a manifest and mutants."""

import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from fixtures import ROOT, git, long_run, write

import exercise  # noqa: E402  (tools/ is on sys.path via fixtures)

DEMO_H = """\
#ifndef DEMO_H
#define DEMO_H
#include <stddef.h>
int demo_sum(const int *a, size_t n);
int demo_max(const int *a, size_t n);
int demo_count(const int *a, size_t n, int x);
#endif
"""

DEMO_C = """\
/* demo.c: the fixture module. */
#include "demo.h"

/* Used only inside the "max" region: the starter must keep it used. */
static int demo_bigger(int a, int b) { return a > b ? a : b; }

int demo_sum(const int *a, size_t n) {
    int s = 0;
    /*@ exercise: sum */
    for (size_t i = 0; i < n; i++) s += a[i];
    /*@ end */
    return s;
}

int demo_max(const int *a, size_t n) {
    /*@ exercise: max */
    int m = a[0];
    for (size_t i = 1; i < n; i++) m = demo_bigger(m, a[i]);
    return m;
    /*@ end */
}

int demo_count(const int *a, size_t n, int x) {
    int c = 0; /* set before the region, used only inside it */
    /*@ exercise: count */
    for (size_t i = 0; i < n; i++) c += (a[i] == x);
    return c;
    /*@ end */
}
"""

MAIN_C = """\
#include <stdio.h>
#include "demo.h"
int main(void) { int a[] = {1, 2}; printf("%d\\n", demo_sum(a, 2)); return 0; }
"""

TEST_C = """\
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "demo.h"
static void test_sum(void **s) { (void)s; int a[] = {1, 2, 3}; assert_int_equal(demo_sum(a, 3), 6); }
static void test_sum_empty(void **s) { (void)s; assert_int_equal(demo_sum(NULL, 0), 0); }
static void test_max(void **s) { (void)s; int a[] = {3, 9, 2}; assert_int_equal(demo_max(a, 3), 9); }
static void test_max_last(void **s) { (void)s; int a[] = {3, 1, 7}; assert_int_equal(demo_max(a, 3), 7); }
static void test_count(void **s) { (void)s; int a[] = {1, 2, 1}; assert_int_equal(demo_count(a, 3, 1), 2); }
int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum), cmocka_unit_test(test_sum_empty), cmocka_unit_test(test_max),
        cmocka_unit_test(test_max_last), cmocka_unit_test(test_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
"""

MUTANT = """\
# what: the max loop stops one element early
# point: the last element
# region: max
# caught by: test_max_last
@@@ find
    for (size_t i = 1; i < n; i++) m = demo_bigger(m, a[i]);
@@@ replace
    for (size_t i = 1; i + 1 < n; i++) m = demo_bigger(m, a[i]);
@@@ end
"""

SUM_MUTANT = """\
# what: the sum starts at the second element
# point: the first element
# region: sum
# contract: C1
# caught by: test_sum
@@@ find
    for (size_t i = 0; i < n; i++) s += a[i];
@@@ replace
    for (size_t i = 1; i < n; i++) s += a[i];
@@@ end
"""

COUNT_MUTANT = """\
# what: counts the elements that differ
# point: the comparison
# region: count
# contract: C3
# caught by: test_count
@@@ find
    for (size_t i = 0; i < n; i++) c += (a[i] == x);
@@@ replace
    for (size_t i = 0; i < n; i++) c += (a[i] != x);
@@@ end
"""

CONTRACT = """\
<!-- contract:begin -->
| # | contract line | checked by | broken by |
|---|---|---|---|
| C1 | sum adds every element | `test_sum`, `test_sum_empty` | `sum-skips-first` |
| C2 | max looks at every element | `test_max`, `test_max_last` | `max-skips-last` |
| C3 | count counts the elements equal to x | `test_count` | `count-differs` |
<!-- contract:end -->
"""

SUM_SOLUTION = "for (size_t i = 0; i < n; i++) s += a[i];"


class Fixture(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="soloist-exercise-")
        self.root = self.tmp.name
        shutil.copy(os.path.join(ROOT, "Makefile"), self.root)
        os.makedirs(os.path.join(self.root, "mk"))
        shutil.copy(os.path.join(ROOT, "mk", "reader.mk"), os.path.join(self.root, "mk"))
        shutil.copytree(os.path.join(ROOT, "tools"), os.path.join(self.root, "tools"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        write(os.path.join(self.root, "src", "demo.h"), DEMO_H)
        write(os.path.join(self.root, "src", "demo.c"), DEMO_C)
        write(os.path.join(self.root, "src", "main.c"), MAIN_C)
        write(os.path.join(self.root, "tests", "unit", "test_demo.c"), TEST_C)
        d = os.path.join(self.root, "exercises", "00-demo")
        write(os.path.join(d, "exercise.json"), json.dumps({
            "step": 0, "title": "Demo", "chapter": "chapters/00-demo.md", "module": "src/demo.c",
            "tests": ["tests/unit/test_demo.c"], "repeat": 2, "points": {"test_max": 3}}))
        write(os.path.join(d, "README.md"), "# Exercise 00\nWrite sum, max and count.\n\n" + CONTRACT)
        write(os.path.join(d, "mutants", "max-skips-last.mutant"), MUTANT)
        write(os.path.join(d, "mutants", "sum-skips-first.mutant"), SUM_MUTANT)
        write(os.path.join(d, "mutants", "count-differs.mutant"), COUNT_MUTANT)
        write(os.path.join(self.root, "notes.md"),
              "# Notes\n**Q0.1** Why?\n<details><summary>Answer</summary>\nBecause.\n</details>\n")
        write(os.path.join(self.root, ".gitignore"), "build/\n/exercises/*/work/\n")
        git(self.root, "init", "-q")
        self.assertEqual(self.tool("manifest", "0", "--write")[0], 0)
        self.assertEqual(self.tool("points", "0", "--write")[0], 0)

    def tearDown(self):
        self.tmp.cleanup()

    def tool(self, *args, root=None):
        r = subprocess.run([sys.executable, os.path.join(root or self.root, "tools", "exercise.py"), *args],
                           cwd=root or self.root, capture_output=True, text=True, timeout=600)
        return r.returncode, r.stdout + r.stderr

    def path(self, *p):
        return os.path.join(self.root, *p)

    def results(self):
        with open(self.path("build", "grade", "00", "results.json")) as f:
            return json.load(f)


class Starter(Fixture):
    def test_starter_compiles_and_aborts_naming_the_step(self):
        rc, out = self.tool("start", "0")
        self.assertEqual(rc, 0, out)
        self.assertIn("3 regions to write: sum, max, count", out)
        with open(self.path("exercises", "00-demo", "work", "demo.c")) as f:
            s = f.read()
        self.assertNotIn("demo_bigger(m, a[i])", s)  # the reference body is gone
        self.assertNotIn("c += (a[i] == x)", s)
        self.assertIn('"soloist: step 0 exercise \\"max\\" is not written yet: see "\n', s)
        self.assertIn('"chapters/00-demo.md and exercises/00-demo/README.md\\n");', s)
        # the max stub keeps the helper used; the count stub the local
        max_stub = s[s.index("/*@ exercise: max */"):s.index("/*@ exercise: count */")]
        self.assertIn("(void)demo_bigger;", max_stub)
        self.assertIn("(void)c;", s[s.index("/*@ exercise: count */"):])
        cflags = exercise.project_cflags(self.root)
        self.assertIn("-Werror", cflags)
        r = subprocess.run(["cc", *cflags, "-I", self.path("src"), "-c", self.path("exercises", "00-demo", "work",
                                                                                     "demo.c"), "-o", os.devnull],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        # a second `start` does not overwrite the learner's work
        rc, out = self.tool("start", "0")
        self.assertEqual(rc, 2)
        self.assertIn("FORCE=1", out)

    def test_function_params(self):
        text = "static int f(const char *buf, size_t len, int (*cb)(void *), char name[16], ...) {\n/*@ exercise: x */\n"
        self.assertEqual(exercise.function_params(text, 2), ["buf", "len", "cb", "name"])
        self.assertEqual(exercise.function_params("void g(void)\n{\n  /*@ exercise: y */\n", 3), [])


MUTANT_ROW = ("| `max-skips-last` | the last element | the max loop stops one element early | `test_max_last` | 1 |")


class Grading(Fixture):
    def readme(self):
        with open(self.path("exercises", "00-demo", "README.md")) as f:
            return f.read()

    @long_run("suite 80 runs the check on every real exercise")
    def test_check_exercises_fast(self):
        rc, out = self.tool("check", "--fast")
        self.assertEqual(rc, 1, out)
        self.assertIn("starter builds and scores 0/7", out)
        self.assertIn("reference scores 7/7", out)
        self.assertIn("mutant max-skips-last (the max loop stops one element early) scores 6/7: caught by test_max_last",
                      out)
        # the README has no mutant table yet: the check says how to write this run's
        self.assertIn("FAIL README.md's mutant table is this run's: README.md has no mutant table; "
                      "run `make exercise-points STEP=0`", out)
        self.assertIn("ok   the contract table (3 lines) and the tests match both ways", out)
        self.assertIn("check-exercises: 12 passed, 1 failed", out)
        rc, out = self.tool("points", "0", "--write")
        self.assertEqual(rc, 0, out)
        self.assertIn("wrote the mutant table of the last check run", out)
        text = self.readme()
        self.assertIn(exercise.MUTANTS_BEGIN, text)
        self.assertIn(MUTANT_ROW, text)
        self.assertIn("3 mutants, each a plausible wrong solution", text)
        self.assertIn("points lost are out of 7", text)
        rc, out = self.tool("check", "--fast")
        self.assertEqual(rc, 0, out)
        self.assertIn("ok   README.md's mutant table is this run's", out)
        self.assertIn("check-exercises: 13 passed, 0 failed", out)
        # the full matrix makes the same first -O2 run, so the table holds
        rc, out = self.tool("check")
        self.assertEqual(rc, 0, out)
        self.assertIn("check-exercises: 13 passed, 0 failed", out)
        # a changed mutant makes the table stale, and the last run too old to write it from
        with open(self.path("exercises", "00-demo", "mutants", "max-skips-last.mutant"), "a") as f:
            f.write("\n")
        rc, out = self.tool("points", "0", "--write")
        self.assertIn("no check run of today's module, tests and mutants", out)
        self.assertIn(MUTANT_ROW, self.readme())

    def test_mutant_table_rows(self):
        doc = {"seed": 7, "rows": [
            {"candidate": "reference", "failing": []},
            {"candidate": "mutant b", "what": "a | b", "point": "p2", "named": "test_x", "order": [1, 0, 5],
             "first_failing": ["test_y"], "first": {"score": 5, "bonus": 1}, "max_score": 6, "bonus_max": 2},
            {"candidate": "mutant a", "what": "w", "point": "p1", "named": "test_x", "order": [0, 0, 9],
             "first_failing": ["test_x", "test_y", "test_z"], "first": {"score": 2, "bonus": 2},
             "max_score": 6, "bonus_max": 2},
        ]}
        table = exercise.mutants_table(None, doc)
        lines = [line for line in table.splitlines() if line.startswith("| `")]
        # ordered by part, then by line in the module; '|' escaped; a miss is shown as one
        self.assertEqual(lines, ["| `a` | p1 | w | `test_x` and 2 other tests | 4 |",
                                 "| `b` | p2 | a \\| b | **not** `test_x` and 1 other test | 2 |"])
        self.assertIn("points lost are out of 8 (bonus included), in the check's first -O2 run (seed 7)", table)
        self.assertTrue(table.startswith(exercise.MUTANTS_BEGIN) and table.endswith(exercise.MUTANTS_END))
        # a memory-order mistake is reported from its first TSan run as well, and says so
        doc["rows"][2].update(table_cells=["o2", "tsan"])
        table = exercise.mutants_table(None, doc)
        self.assertIn("| `a` | p1 | w | `test_x` and 2 other tests (under TSan) | 4 |", table)
        self.assertIn("in the check's first -O2 run, and its first TSan run for a mutant caught under TSan (seed 7)",
                      table)
        # a mutant whose other failures hang on timing names its own test,
        # says why the rest varies, and loses "varies" points
        doc["rows"][2].update(table_cells=["o2"], varies="it hangs on when the worker runs")
        table = exercise.mutants_table(None, doc)
        self.assertIn("| `a` | p1 | w | `test_x` (what else fails varies: it hangs on when the worker runs) | varies |",
                      table)

    def test_a_row_that_varies_is_run_again(self):
        # the first run's collateral differs from the README's row: a rerun
        # that gives the README's row stands for it, and the log says so;
        # a row no rerun reproduces stays as it came (the table check fails)
        ex = exercise.Exercise(self.root, self.path("exercises", "00-demo"))
        row = {"candidate": "mutant m", "what": "w", "point": "p", "named": "test_x", "order": [0, 0, 1],
               "first_failing": ["test_x"], "first": {"score": 6, "bonus": 0}, "max_score": 7, "bonus_max": 0}
        readme = self.readme()
        begin = readme.index(exercise.MUTANTS_BEGIN) if exercise.MUTANTS_BEGIN in readme else len(readme)
        with open(self.path("exercises", "00-demo", "README.md"), "w") as f:
            f.write(readme[:begin] + exercise.mutants_table(None, {"seed": 1, "rows": [row]}) + "\n")
        runs = []
        real = exercise.grade

        def fake(*a, **k):
            runs.append(a[2])
            return {"first": {"score": 6, "bonus": 0}, "first_failing": ["test_x"]} if len(runs) == 2 else \
                {"first": {"score": 3, "bonus": 0}, "first_failing": ["test_x", "test_y"]}
        exercise.grade = fake
        try:
            log = []
            bad = dict(row, first={"score": 3, "bonus": 0}, first_failing=["test_x", "test_y"])
            exercise.rerun_differing_rows(ex, [bad], {"mutant m": (None, {})}, 1, 1, log.append)
            self.assertEqual(len(runs), 2)
            self.assertEqual(bad["first"], {"score": 6, "bonus": 0})
            self.assertIn("its row varies between runs (run 1 lost 4 points, rerun 2 the README's 1)", log[0])
            runs.clear()
            worse = dict(row, first={"score": 0, "bonus": 0}, first_failing=["test_x", "test_y", "test_z"])
            exercise.grade = lambda *a, **k: runs.append(1) or {"first": {"score": 0, "bonus": 0},
                                                                "first_failing": ["test_x", "test_z"]}
            exercise.rerun_differing_rows(ex, [worse], {"mutant m": (None, {})}, 1, 1, log.append)
            self.assertEqual(len(runs), exercise.RERUNS)
            self.assertEqual(worse["first"], {"score": 0, "bonus": 0})
            self.assertEqual(len(log), 1)
        finally:
            exercise.grade = real

    def test_cells_of_the_matrix(self):
        d = self.path("exercises", "00-demo")
        ex = exercise.Exercise(self.root, d)
        self.assertEqual(ex.cells(False), ["o0", "o2", "asan"])
        self.assertEqual(ex.cells(True), ["o2"])
        ex.concurrent = True
        self.assertEqual(ex.cells(False), ["o0", "o2", "asan", "tsan"])
        # fast: -O2, plus the cells a mutant's `caught in` names
        self.assertEqual(ex.cells(True, {"caught in": "TSan"}), ["o2", "tsan"])
        self.assertEqual(exercise.mutant_cells({"caught in": "-O2, tsan"}), ["tsan"])
        with self.assertRaises(exercise.ExerciseError):
            exercise.mutant_cells({"caught in": "valgrind"})

    @long_run("suite 80 checks exercises graded under TSan")
    def test_a_tsan_mutant_needs_a_concurrent_step(self):
        write(self.path("exercises", "00-demo", "mutants", "max-skips-last.mutant"),
              MUTANT.replace("# caught by:", "# caught in: TSan\n# caught by:"))
        rc, out = self.tool("check")
        self.assertEqual(rc, 1)
        self.assertIn("names a cell the matrix of step 0 lacks", out)

    def test_a_mutant_must_name_the_test_that_catches_it(self):
        d = self.path("exercises", "00-demo", "mutants")
        write(os.path.join(d, "unnamed.mutant"), MUTANT.replace("# caught by: test_max_last\n", ""))
        write(os.path.join(d, "wrong-name.mutant"), MUTANT.replace("caught by: test_max_last", "caught by: test_sum")
              .replace("i + 1 < n", "i + 1 < n && i < 99"))
        rc, out = self.tool("check", "--fast")
        self.assertEqual(rc, 1)
        self.assertIn("FAIL mutant unnamed names the test written to catch it (`# caught by: test_name`)", out)
        self.assertIn("NOT caught by test_sum, the test named to catch it", out)

    def test_check_fails_an_uncaught_or_stale_mutant(self):
        write(self.path("exercises", "00-demo", "mutants", "harmless.mutant"),
              "# what: a no-op\n# caught by: test_sum\n@@@ find\n    int s = 0;\n@@@ replace\n"
              "    int s = 0; /* same */\n@@@ end\n")
        write(self.path("exercises", "00-demo", "mutants", "stale.mutant"),
              "# what: text that is gone\n# caught by: test_sum\n@@@ find\nno such text\n@@@ replace\nx\n@@@ end\n")
        rc, out = self.tool("check", "--fast")
        self.assertEqual(rc, 1)
        self.assertIn("scores 7/7: NOT caught by test_sum, the test named to catch it; NOT caught by any test", out)
        self.assertIn("stale.mutant: the text to replace occurs 0 times", out)

    @long_run("grades a fixture in the full matrix; suite 80 grades every exercise's starter and reference at -O2")
    def test_grade_starter_partial_and_reference(self):
        self.assertEqual(self.tool("start", "0")[0], 0)
        rc, out = self.tool("grade", "0", "--seed", "42")
        self.assertEqual(rc, 1)
        self.assertIn("seed 42 (rerun with SEED=42)", out)
        self.assertIn("-O0", out)
        self.assertIn("ASan+UBSan", out)
        self.assertIn("score: 0/7", out)
        res = self.results()
        self.assertEqual((res["score"], res["max_score"]), (0, 7))
        self.assertEqual(set(res["tests"][0]), {"name", "score", "max_score", "status", "output", "visibility"})
        self.assertIn('exercise \\"sum\\" is not written yet'.replace('\\', ''), res["tests"][0]["output"])
        # write one region: only its tests score; the stubs' aborts cost no other points
        work = self.path("exercises", "00-demo", "work", "demo.c")
        with open(work) as f:
            s = f.read()
        i = s.index('/* Exercise "sum"')
        j = s.index("abort();", i) + len("abort();")
        with open(work, "w") as f:
            f.write(s[:i] + SUM_SOLUTION + s[j:])
        rc, out = self.tool("grade", "0", "--fast", "--results", self.path("out.json"))
        self.assertEqual(rc, 1)
        self.assertIn("score: 2/7", out)
        with open(self.path("out.json")) as f:
            self.assertEqual(json.load(f)["score"], 2)
        rc, out = self.tool("grade", "0", "--submission", "src/demo.c", "--seed", "5")
        self.assertEqual(rc, 0, out)
        self.assertIn("score: 7/7", out)
        self.assertIn("run 2/2 seed 6", out)

    def test_a_submission_that_does_not_compile_scores_zero(self):
        write(self.path("broken.c"), DEMO_C.replace("return s;", "return s"))
        rc, out = self.tool("grade", "0", "--fast", "--submission", "broken.c")
        self.assertEqual(rc, 1)
        self.assertIn("the build failed", out)
        self.assertIn("score: 0/7", out)
        self.assertIn("the build failed", self.results()["output"])

    def test_edited_tests_or_points_are_refused(self):
        with open(self.path("tests", "unit", "test_demo.c"), "a") as f:
            f.write("/* made easier */\n")
        rc, out = self.tool("grade", "0", "--submission", "src/demo.c")
        self.assertEqual(rc, 2)
        self.assertIn("REFUSED: tests/unit/test_demo.c was edited", out)
        self.tool("manifest", "0", "--write")
        with open(self.path("exercises", "00-demo", "exercise.json")) as f:
            d = json.load(f)
        d["points"]["test_sum"] = 100
        with open(self.path("exercises", "00-demo", "exercise.json"), "w") as f:
            json.dump(d, f)
        rc, out = self.tool("grade", "0", "--submission", "src/demo.c")
        self.assertEqual(rc, 2)
        self.assertIn("exercises/00-demo/exercise.json was edited", out)
        rc, out = self.tool("check", "--fast")
        self.assertEqual(rc, 1)
        self.assertIn("make exercise-manifest STEP=0", out)

    def test_no_learner_copy_says_what_to_do(self):
        rc, out = self.tool("grade", "0")
        self.assertEqual(rc, 2)
        self.assertIn("make exercise STEP=0", out)
        rc, out = self.tool("grade", "7")
        self.assertEqual(rc, 2)
        self.assertIn("no exercise for step 7", out)


class Parts(Fixture):
    """sum is a warm-up, max the core, count a bonus graded apart."""

    def setUp(self):
        super().setUp()
        p = self.path("exercises", "00-demo", "exercise.json")
        with open(p) as f:
            d = json.load(f)
        d["parts"] = [{"name": "warm-up", "regions": ["sum"], "tests": ["test_sum*"]},
                      {"name": "core", "regions": ["max"]},
                      {"name": "bonus", "regions": ["count"], "tests": ["test_count"], "bonus": True}]
        with open(p, "w") as f:
            json.dump(d, f)
        self.assertEqual(self.tool("manifest", "0", "--write")[0], 0)
        self.assertEqual(self.tool("points", "0", "--write")[0], 0)

    @long_run("suite 80 checks exercise 00's bonus on the real exercise: graded apart, full marks without it")
    def test_the_bonus_is_graded_apart(self):
        with open(self.path("exercises", "00-demo", "README.md")) as f:
            self.assertIn("5 tests, 7 points: warm-up 2, core 4, bonus 1 (a bonus, not needed for full marks).",
                          f.read())
        rc, out = self.tool("grade", "0", "--fast", "--submission", "src/demo.c")
        self.assertEqual(rc, 0, out)
        self.assertIn("part warm-up (sum): 2/2", out)
        self.assertIn("part bonus (count), a bonus: not needed for full marks: 1/1", out)
        self.assertIn("score: 6/6", out)
        self.assertIn("bonus: 1/1", out)
        res = self.results()
        self.assertEqual((res["score"], res["max_score"]), (7, 6))  # Gradescope: the bonus is extra credit
        self.assertEqual([t["max_score"] for t in res["tests"] if t["name"] == "test_count"], [0])
        # full marks without the bonus: count left as in the starter
        self.assertEqual(self.tool("start", "0")[0], 0)
        work = self.path("exercises", "00-demo", "work", "demo.c")
        with open(work) as f:
            s = f.read()
        for name, body in (("sum", SUM_SOLUTION),
                           ("max", "int m = a[0];\n    for (size_t i = 1; i < n; i++) m = demo_bigger(m, a[i]);\n"
                                   "    return m;")):
            i = s.index(f'/* Exercise "{name}"')
            j = s.index("abort();", i) + len("abort();")
            s = s[:i] + body + s[j:]
        with open(work, "w") as f:
            f.write(s)
        rc, out = self.tool("grade", "0", "--fast")
        self.assertEqual(rc, 0, out)
        self.assertIn("score: 6/6", out)
        self.assertIn("bonus: 0/1", out)

    @long_run("suite 80 checks exercise 00's bonus part the same way: starter 0, reference full, full marks without it")
    def test_check_counts_the_bonus(self):
        write(self.path("exercises", "00-demo", "mutants", "count-wrong.mutant"),
              "# what: counts everything\n# caught by: test_count\n@@@ find\n"
              "    for (size_t i = 0; i < n; i++) c += (a[i] == x);\n@@@ replace\n"
              "    for (size_t i = 0; i < n; i++) c += (a[i] != x);\n@@@ end\n")
        rc, out = self.tool("check", "--fast")
        self.assertIn("starter builds and scores 0/6, bonus 0/1 (must be 0)", out)
        self.assertIn("reference scores 6/6, bonus 1/1", out)
        self.assertIn("ok   mutant count-wrong (counts everything) scores 6/6, bonus 0/1: caught by test_count", out)
        self.assertIn("ok   the parts (warm-up, core, bonus) share out every region and test", out)
        self.assertIn("ok   the reference with the bonus regions (count) unwritten scores 6/6: full marks need no bonus",
                      out)

    def test_parts_must_share_out_the_regions(self):
        p = self.path("exercises", "00-demo", "exercise.json")
        with open(p) as f:
            d = json.load(f)
        d["parts"][2]["regions"] = ["sum"]
        with open(p, "w") as f:
            json.dump(d, f)
        self.tool("manifest", "0", "--write")
        # the parts are among the checks that build nothing (check_static),
        # which check-exercises runs first and counts like the others
        log = []
        exercise.check_static(exercise.find_exercise(self.root, "0"), exercise.Verdicts(log.append))
        self.assertTrue(any(line.startswith("  FAIL") and "regions in two parts: sum" in line for line in log), log)


FLAG_H = """\
#ifndef FLAG_H
#define FLAG_H
#include <stdatomic.h>
/* One value handed from one thread to another. */
typedef struct flag_box { int value; atomic_int ready; } flag_box;
void flag_publish(flag_box *b, int v);
int flag_take(flag_box *b);
static inline int flag_twice(int x) {
    /*@ exercise: twice */
    return 2 * x;
    /*@ end */
}
#endif
"""

FLAG_C = """\
/* flag.c: the fixture's concurrent module. */
#include "flag.h"

void flag_publish(flag_box *b, int v) {
    /*@ exercise: publish */
    b->value = v;
    atomic_store_explicit(&b->ready, 1, memory_order_release);
    /*@ end */
}

int flag_take(flag_box *b) {
    /*@ exercise: take */
    while (!atomic_load_explicit(&b->ready, memory_order_acquire)) {
    }
    return b->value;
    /*@ end */
}
"""

FLAG_TEST_C = """\
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include "flag.h"
static void *producer(void *arg) { flag_publish(arg, 42); return NULL; }
static void test_handoff(void **s) {
    (void)s;
    for (int i = 0; i < 200; i++) {
        flag_box *b = calloc(1, sizeof *b);
        pthread_t t;
        pthread_create(&t, NULL, producer, b);
        assert_int_equal(flag_take(b), 42);
        pthread_join(t, NULL);
        free(b);
    }
}
static void test_twice(void **s) { (void)s; assert_int_equal(flag_twice(21), 42); }
int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_handoff), cmocka_unit_test(test_twice)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
"""

FLAG_MUTANT = """\
# what: the value is published with a relaxed store
# point: the hand-off
# region: publish
# caught by: test_handoff
# caught in: TSan
@@@ find
    atomic_store_explicit(&b->ready, 1, memory_order_release);
@@@ replace
    atomic_store_explicit(&b->ready, 1, memory_order_relaxed);
@@@ end
"""


class SeveralModules(Fixture):
    """Step 1 of the fixture: a .c file and a header written together, and
    a concurrent step whose memory-order mutant only TSan catches."""

    def setUp(self):
        super().setUp()
        write(self.path("src", "flag.h"), FLAG_H)
        write(self.path("src", "flag.c"), FLAG_C)
        write(self.path("tests", "unit", "test_flag.c"), FLAG_TEST_C)
        d = self.path("exercises", "01-flag")
        write(os.path.join(d, "exercise.json"), json.dumps({
            "step": 1, "title": "Flag", "modules": ["src/flag.c", "src/flag.h"], "concurrent": True,
            "tests": ["tests/unit/test_flag.c"], "repeat": 1}))
        write(os.path.join(d, "README.md"), "# Exercise 01\nWrite publish, take and twice.\n\n"
              "<!-- contract:begin -->\n| # | line | checked by | broken by |\n|---|---|---|---|\n"
              "| C1 | the value is published with release | `test_handoff` | `publish-relaxed` |\n"
              "| C2 | twice doubles | `test_twice` | `twice-thrice` |\n<!-- contract:end -->\n")
        write(os.path.join(d, "mutants", "publish-relaxed.mutant"), FLAG_MUTANT)
        write(os.path.join(d, "mutants", "twice-thrice.mutant"),
              "# what: thrice\n# caught by: test_twice\n@@@ find\n    return 2 * x;\n@@@ replace\n"
              "    return 3 * x;\n@@@ end\n")
        self.assertEqual(self.tool("manifest", "1", "--write")[0], 0)
        self.assertEqual(self.tool("points", "1", "--write")[0], 0)

    @long_run("grades a fixture in the full matrix, TSan included; suite 80 grades every exercise's starter and reference at -O2")
    def test_start_writes_every_module(self):
        rc, out = self.tool("start", "1")
        self.assertEqual(rc, 0, out)
        for name in ("flag.c", "flag.h"):
            with open(self.path("exercises", "01-flag", "work", name)) as f:
                self.assertIn("STARTER for step 1", f.read())
        rc, out = self.tool("grade", "1", "--fast")
        self.assertEqual(rc, 1)
        self.assertIn("score: 0/2", out)
        rc, out = self.tool("grade", "1", "--fast", "--submission", "src/flag.c")
        self.assertEqual(rc, 2)
        self.assertIn("SUBMISSION= names a directory that holds them", out)
        rc, out = self.tool("grade", "1", "--submission", "src", "--seed", "5")
        self.assertEqual(rc, 0, out)
        self.assertIn("matrix -O0, -O2, ASan+UBSan, TSan", out)
        self.assertIn("TSan        run 1/1 seed 5: 2/2 tests passed", out)

    @long_run("suite 80 checks the exercises of several modules")
    def test_check_catches_the_header_and_the_tsan_mutant(self):
        rc, out = self.tool("check", "--step", "1", "--fast")
        self.assertIn("starter builds and scores 0/2", out)
        self.assertIn("reference scores 2/2", out)
        self.assertIn("ok   mutant publish-relaxed (the value is published with a relaxed store) scores 1/2: "
                      "caught by test_handoff", out)
        self.assertIn("ok   mutant twice-thrice (thrice) scores 1/2: caught by test_twice", out)
        self.assertEqual(self.tool("points", "1", "--write")[0], 0)
        with open(self.path("exercises", "01-flag", "README.md")) as f:
            self.assertIn("| `publish-relaxed` | the hand-off | the value is published with a relaxed store | "
                          "`test_handoff` (under TSan) | 1 |", f.read())
        rc, out = self.tool("check", "--step", "1", "--fast")
        self.assertEqual(rc, 0, out)


class Contract(Fixture):
    """The README's contract table against the tests and mutants, both ways."""

    def problems(self, table):
        readme = self.path("exercises", "00-demo", "README.md")
        if not hasattr(self, "original"):
            with open(readme) as f:
                self.original = f.read()
        with open(readme, "w") as f:
            f.write(self.original.replace(CONTRACT, table))
        rc, out = self.tool("contract", "0")
        return rc, out

    def test_the_fixture_matches(self):
        rc, out = self.tool("contract", "0")
        self.assertEqual(rc, 0, out)
        self.assertIn("C2: checked by test_max, test_max_last; broken by max-skips-last", out)

    def test_each_way_it_can_fail(self):
        rc, out = self.problems(CONTRACT.replace(", `test_sum_empty`", ""))
        self.assertEqual(rc, 1)
        self.assertIn("tests that check no line of the contract: test_sum_empty", out)
        rc, out = self.problems(CONTRACT.replace("`count-differs`", ""))
        self.assertIn("C3 is broken by no mutant", out)
        rc, out = self.problems(CONTRACT.replace("| `test_count` |", "| `test_counts` |"))
        self.assertIn("C3 names test_counts, which is not a test of this step", out)
        self.assertIn("tests that check no line of the contract: test_count", out)
        rc, out = self.problems(CONTRACT.replace("`max-skips-last`", "`sum-skips-first`"))
        self.assertIn("C2's mutant sum-skips-first is caught by test_sum, not by a test of C2", out)
        rc, out = self.problems(CONTRACT.replace("`sum-skips-first`", "`sum-gone`"))
        self.assertIn("C1 names mutant sum-gone, which is not in mutants/", out)
        rc, out = self.problems("")
        self.assertIn("README.md has no contract table", out)

    def test_a_planted_line_with_no_test_fails(self):
        planted = CONTRACT.replace("<!-- contract:end -->",
                                   "| C4 | count is 0 for an empty array | | `count-differs` |\n<!-- contract:end -->")
        rc, out = self.problems(planted)
        self.assertEqual(rc, 1, out)
        self.assertIn("contract: FAIL C4 is checked by no test", out)
        # the check (make check-exercises) fails on the same problems
        ex = exercise.find_exercise(self.root, "0")
        log = []
        exercise.check_static(ex, exercise.Verdicts(log.append))
        self.assertTrue(any(line.startswith("  FAIL the contract table (4 lines) and the tests match both ways, every "
                                            "line with a mutant of its own: C4 is checked by no test") for line in log),
                        log)

    def test_a_mutant_naming_a_missing_line_fails(self):
        path = self.path("exercises", "00-demo", "mutants", "count-differs.mutant")
        with open(path, "w") as f:
            f.write(COUNT_MUTANT.replace("# contract: C3", "# contract: C9"))
        rc, out = self.tool("contract", "0")
        self.assertEqual(rc, 1, out)
        self.assertIn("mutant count-differs says it breaks C9, which is not a line of the contract", out)


class Reasons(Fixture):
    """A failed test says why: cmocka's assertion, a stub's message and
    whose region it is (a crash's signal and place, a sanitizer's report
    and a leak are CrashesAndLeaks')."""

    def test_a_place_names_the_file_in_the_tree_whatever_tree_compiled_it(self):
        # an object from ccache may carry another grading tree's paths
        other = "/tmp/soloist-exercise-x1/build/grade/00/t/o0/tree"
        self.assertEqual(exercise.untree("demo_count at %s/src/demo.c:24" % other, "/tmp/mine/tree"),
                         "demo_count at src/demo.c:24")
        self.assertEqual(exercise.untree("#0 0x4 in f /tmp/mine/tree/tests/unit/t.c:3", "/tmp/mine/tree"),
                         "#0 0x4 in f tests/unit/t.c:3")

    def test_an_assertion_shows_its_file_line_and_values(self):
        write(self.path("wrong.c"), DEMO_C.replace("i < n; i++) m = demo_bigger", "i + 1 < n; i++) m = demo_bigger"))
        rc, out = self.tool("grade", "0", "--fast", "--submission", "wrong.c")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL  test_max_last", out)
        self.assertRegex(out, r"0x3 != 0x7|3 != 7")
        self.assertIn("tests/unit/test_demo.c:10: error", out)
        t = next(t for t in self.results()["tests"] if t["name"] == "test_max_last")
        self.assertIn("tests/unit/test_demo.c:10: error", t["output"])

    def test_a_crash_shows_its_signal_and_never_an_earlier_tests_transcript(self):
        # cmocka catches SIGSEGV and SIGILL itself (and says so); an abort it
        # does not, so the process dies in the middle of its transcript
        crash = DEMO_C.replace('#include "demo.h"', '#include "demo.h"\n#include <stdio.h>\n#include <stdlib.h>')
        crash = crash.replace("int c = 0; /* set", 'fputs("count: giving up\\n", stderr); abort();\n    int c = 0; /* set')
        write(self.path("crash.c"), crash)
        rc, out = self.tool("grade", "0", "--fast", "--submission", "crash.c")
        self.assertEqual(rc, 1, out)
        t = next(t for t in self.results()["tests"] if t["name"] == "test_count")
        self.assertIn("killed by signal 6 (SIGABRT) in test_count", t["output"])
        self.assertIn("count: giving up", t["output"])
        self.assertNotIn("test_sum", t["output"])
        self.assertNotIn("[       OK ]", t["output"])
        self.assertIn("killed by signal 6 (SIGABRT) in test_count", out)
        self.assertIn("score: 6/7", out)

    def test_a_stub_is_named_as_the_learners_region(self):
        self.assertEqual(self.tool("start", "0")[0], 0)
        rc, out = self.tool("grade", "0", "--fast")
        self.assertEqual(rc, 1)
        self.assertIn('exercise "max" is not written yet [your region: step 0\'s "max"]', out)
        self.assertIn("killed by signal 6 (SIGABRT) in test_max", out)


class CrashesAndLeaks(Fixture):
    """A crash names its signal and its place; a sanitizer's report shows
    its first lines, not its legend; a leak fails the test that leaked,
    naming the allocation's place; results.json keeps every run."""

    def grade_api(self, text, cells, repeat=1, trace=True):
        write(self.path("sub.c"), text)
        ex = exercise.find_exercise(self.root, "0")
        cand = exercise.Candidate("sub", {"src/demo.c": self.path("sub.c")})
        res = exercise.grade(ex, cand, cells, repeat, 11, "t", jobs=2, quiet=True, trace=trace)
        return {t["name"]: t for t in res["tests"]}

    def test_a_segfault_names_its_place(self):
        crash = DEMO_C.replace("int c = 0; /* set", "int c = *(volatile int *)(size_t)a[0]; /* set")
        for cell in ("o0", "o2"):
            t = self.grade_api(crash, [cell])["test_count"]
            self.assertEqual(t["status"], "failed")
            self.assertIn("Test failed with exception: Segmentation fault(11): the test crashed (SIGSEGV)", t["output"])
            self.assertIn("where it crashed (the innermost call first):", t["output"])
            self.assertRegex(t["output"], r"demo_count at src/demo.c:\d+")
            self.assertIn("test_count at tests/unit/test_demo.c:11", t["output"])
        # the check's runs need only the verdict: no rerun to find the place
        t = self.grade_api(crash, ["o2"], trace=False)["test_count"]
        self.assertNotIn("where it crashed", t["output"])

    def test_asan_shows_the_reports_first_lines_not_its_legend(self):
        ovf = DEMO_C.replace('#include "demo.h"', '#include "demo.h"\n#include <stdlib.h>')
        ovf = ovf.replace("int c = 0; /* set", "volatile int *o = malloc(2 * sizeof *o);\n"
                          "    void (*volatile release)(void *) = free; /* unseen, so no -Wuse-after-free */\n"
                          "    release((void *)o);\n"
                          "    int c = o[1]; /* set")
        t = self.grade_api(ovf, ["asan"])["test_count"]
        out = t["output"]
        self.assertIn("AddressSanitizer: heap-use-after-free", out)
        self.assertIn("READ of size 4", out)
        self.assertRegex(out, r"#0 demo_count src/demo.c:\d+")
        self.assertIn("is located 4 bytes inside of 8-byte region", out)
        self.assertIn("freed by thread T0 here:", out)
        self.assertNotIn("Shadow bytes", out)
        self.assertNotIn("Heap left redzone", out)

    def test_a_leak_fails_the_test_naming_the_allocation(self):
        leak = DEMO_C.replace('#include "demo.h"', '#include "demo.h"\n#include <stdlib.h>')
        leak = leak.replace("int c = 0; /* set", "int *volatile kept = malloc(24);\n    kept[0] = 1;\n"
                            "    int c = 0; /* set")
        tests = self.grade_api(leak, ["asan"])
        t = tests["test_count"]
        self.assertEqual(t["status"], "failed")
        self.assertIn("test_count passed its assertions, then the process failed at exit:", t["output"])
        self.assertIn("Direct leak of 24 byte(s) in 1 object(s) allocated from:", t["output"])
        self.assertRegex(t["output"], r"#1 demo_count src/demo.c:\d+")
        self.assertEqual(tests["test_sum"]["status"], "passed")

    def test_results_keep_every_run(self):
        wrong = DEMO_C.replace("i < n; i++) m = demo_bigger", "i + 1 < n; i++) m = demo_bigger")
        t = self.grade_api(wrong, ["o2"], repeat=5)["test_max_last"]
        self.assertIn("failed 5 of 5 runs", t["output"])
        for seed in range(11, 16):
            self.assertIn(f"-O2 seed {seed}:", t["output"])


class Order(Fixture):
    """exercise.json's "order": the first group alone must score."""

    def set_order(self, order, manifest=True):
        p = self.path("exercises", "00-demo", "exercise.json")
        with open(p) as f:
            d = json.load(f)
        d["order"] = order
        write(p, json.dumps(d))
        if manifest:
            self.assertEqual(self.tool("manifest", "0", "--write")[0], 0)

    def first_group(self):
        """The check's verdict on the first group alone (what check_one runs)."""
        ex = exercise.find_exercise(self.root, "0")
        log = []
        verdict = exercise.Verdicts(log.append)
        with tempfile.TemporaryDirectory() as work:
            cands = [c for c in exercise.base_candidates(ex, verdict, work) if c[0] == "first group"]
            exercise.grade_candidates(ex, cands, verdict, True, 2, log.append)
        return "\n".join(log)

    def test_the_first_group_must_score(self):
        self.set_order([["sum"], ["max", "count"]])
        self.assertIn("ok   with only the suggested order's first group written (sum; stubs elsewhere) it scores 2/7",
                      self.first_group())
        # a first group that no test sees alone: the order shows no progress
        with open(self.path("tests", "unit", "test_demo.c")) as f:
            text = f.read()
        write(self.path("tests", "unit", "test_demo.c"),
              text.replace("demo_sum(a, 3), 6)", "demo_sum(a, 3) + demo_count(a, 3, 9), 6)")
              .replace("demo_sum(NULL, 0), 0)", "demo_sum(NULL, 0) + demo_count(NULL, 0, 1), 0)"))
        self.assertIn("FAIL with only the suggested order's first group written (sum; stubs elsewhere) it scores 0/7",
                      self.first_group())

    def test_a_bad_order_is_named(self):
        self.set_order([["sum", "nope"], ["sum"]])
        ex = exercise.find_exercise(self.root, "0")
        self.assertEqual(exercise.order_problem(ex, exercise.exercise_regions(ex)),
                         "no such region in src/demo.c: nope")
        self.set_order([["sum"], ["max", "sum"]])
        ex = exercise.find_exercise(self.root, "0")
        self.assertEqual(exercise.order_problem(ex, exercise.exercise_regions(ex)), "regions in two groups: sum")
        self.set_order([["sum"], "max"], manifest=False)
        rc, out = self.tool("contract", "0")
        self.assertEqual(rc, 2)
        self.assertIn("'order' is a list of groups of region names", out)


class Handout(Fixture):
    @long_run("suite 81 grades every step's handout tree in place")
    def test_handout_tree_grades_in_place(self):
        shutil.copy(os.path.join(ROOT, ".clang-format"), self.root)  # the project's style, which the starter keeps
        rc, out = self.tool("handout")
        self.assertEqual(rc, 0, out)
        h = self.path("build", "handout", "soloist-step-00")
        self.assertTrue(os.path.isfile(h + ".tar.gz"))
        self.assertTrue(os.path.isfile(os.path.join(h, "exercises", "HANDOUT")))
        with open(os.path.join(h, "exercises", "HANDOUT")) as f:
            note = f.read()
        self.assertIn("step: 0", note)
        # the chapter is read rendered, from this tree: the note says how and where
        self.assertIn("`make book`", note)
        self.assertIn("open build/book/00-demo.html", note)
        self.assertIn("build/book/exercise-00-demo.html", note)
        self.assertIn("{{finding}}", note)
        self.assertIn("not `make test`", note)
        with open(os.path.join(h, "src", "demo.c")) as f:
            self.assertTrue(exercise.in_style(h, "src/demo.c", f.read()))
        self.assertFalse(os.path.exists(os.path.join(h, "exercises", "00-demo", "mutants")))
        self.assertTrue(os.path.isfile(os.path.join(h, "exercises", "00-demo", "tests.sha256")))
        with open(os.path.join(h, "src", "demo.c")) as f:
            self.assertIn("STARTER for step 0", f.read())
        with open(os.path.join(h, "notes.md")) as f:
            notes = f.read()
        self.assertNotIn("Because.", notes)
        self.assertIn("**Q0.1** Why?", notes)
        rc, out = self.tool("grade", "0", "--fast", root=h)
        self.assertEqual(rc, 1)
        self.assertIn("src/demo.c", out)
        self.assertIn("score: 0/7", out)
        self.assertIn("[your region", out)
        rc, out = self.tool("check", root=h)
        self.assertEqual(rc, 0)
        self.assertIn("handout tree", out)
        # one clear line instead of a starter of the starter
        rc, out = self.tool("start", "0", root=h)
        self.assertEqual(rc, 2)
        self.assertIn("in a handout, src/ is already the starter: edit src/demo.c in place", out)
        # a handout grades only the step it was cut for
        marker = os.path.join(h, "exercises", "HANDOUT")
        with open(marker) as f:
            text = f.read()
        with open(marker, "w") as f:
            f.write(text.replace("step: 0", "step: 3"))
        rc, out = self.tool("grade", "0", "--fast", root=h)
        self.assertEqual(rc, 2)
        self.assertIn("this handout is cut for step 3", out)
        rc, out = self.tool("handout", root=h)
        self.assertEqual(rc, 2)
        self.assertIn("a handout already", out)

    def test_handout_step_cuts_one(self):
        rc, out = self.tool("handout", "--step", "0", "--out", self.path("hand"))
        self.assertEqual(rc, 0, out)
        self.assertTrue(os.path.isdir(self.path("hand", "soloist-step-00")))



class Course(unittest.TestCase):
    """COURSE.md sizes each week's exercise by its contract: the count it
    gives must be the README's."""

    def test_contract_line_counts_are_the_readmes(self):
        by_name = {ex.name: ex for ex in exercise.exercises(ROOT)}
        seen = 0
        with open(os.path.join(ROOT, "chapters", "COURSE.md"), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = re.search(r"`exercises/([0-9a-z-]+)`", line)
                c = re.search(r"\((\d+) contract lines", line)
                if not (m and c):
                    continue
                rows = exercise.contract_rows(by_name[m.group(1)]) or []
                self.assertEqual(int(c.group(1)), len(rows),
                                 f"COURSE.md:{n}: exercises/{m.group(1)} has {len(rows)} contract lines, "
                                 f"the course says {c.group(1)}")
                seen += 1
        self.assertGreaterEqual(seen, 8)


if __name__ == "__main__":
    unittest.main()
