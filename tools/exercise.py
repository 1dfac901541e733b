#!/usr/bin/env python3
"""exercise: starters, grading and the proof that every exercise is real.

The rule every exercise follows: the learner writes the idea the step is
named for (step 0: the parser's resumable state machine), from a contract
stated in the comment above each region's function — inputs, the state that
persists between calls, what each return means, the limits and the exact
error texts — never from steps to type. Transcription is a short warm-up or
a bonus graded apart. Mutants prove the tests teach the idea: at least one
per way it can fail, each caught by the test it names.

Each step's exercise lives in exercises/NN-name/ with exercise.json (the
module or modules the learner writes, .c or .h; tests, points, parts, and
optionally "order": the README's suggested writing order as groups of
regions, whose first group alone must score), README.md (the idea, the
parts, hints, done-when, and generated tables: points, workflow, mutants),
tests.sha256 (the hash manifest of the files that grade it) and mutants/
(wrong solutions the grader must reject). The reference solution is src/.

    tools/exercise.py start STEP [--out FILE] [--force]    make exercise STEP=N
    tools/exercise.py grade STEP [--submission FILE] ...   make grade STEP=N
    tools/exercise.py check [--step N] [--fast]            make check-exercises
    tools/exercise.py manifest STEP [--write]              make exercise-manifest STEP=N
    tools/exercise.py points STEP [--write]                make exercise-points STEP=N
    tools/exercise.py handout [--step N] [--out DIR]       make handout [STEP=N]

The starter: every region between `/*@ exercise: NAME */` and `/*@ end */`
(inside a function body) is replaced by a stub that voids the function's
parameters and aborts with a message naming the step, the exercise and the
chapter; it compiles under the project's -Wall -Wextra -Werror (the tool
compiles it and voids whatever else the removed code left unused).

Grading builds the server and the step's tests against the learner's
copies, in a copy of the project where they replace the modules (so a
header is graded as well as a .c file), runs the tests in a matrix (-O0,
-O2, ASan+UBSan, TSan when the step is concurrent), each repeated with a
printed seed (SOLOIST_SEED and SOLOIST_TEST_SEED, seed+1, …), and a test
earns its points only if it passed in every run. A failure says why: the
test's assertion, a stub's message and whose region it is, a sanitizer
report's first lines (its kind, the access, the top frames; the leak
LeakSanitizer found at exit, with the allocation's frames), or a crash's
signal and, rerun with tools/grade_crash.c's handler, its place
(addr2line). results.json keeps every failed run. A mutant whose mistake
only ThreadSanitizer sees (a memory order) says `# caught in: TSan`; the
fast check runs it under TSan too. It prints every
test with its points, each part's total, the score and the bonus, writes
Gradescope's results JSON, and refuses to grade when a file in the hash
manifest was edited.

`points --write` writes the README's points table, and its mutant table from
the last check run (build/grade/NN/check.json) when that run is for today's
module, tests and mutants; `check` fails while the README's table differs
from its own run's.

Exit status of grade: 0 full marks (the bonus is not needed), 1 less, 2
refused or unusable input. Python 3 standard library only.
"""

import argparse
import fnmatch
import glob
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import anchors  # noqa: E402

FALLBACK_CFLAGS = ("-std=c11 -D_GNU_SOURCE -g -pthread -Wall -Wextra -Werror -Wshadow "
                   "-Wstrict-prototypes -Wmissing-prototypes -Isrc -O2").split()
CELLS = {  # name -> (Makefile VARIANT, label)
    "o0": ("o0", "-O0"),
    "o2": ("default", "-O2"),
    "asan": ("asan", "ASan+UBSan"),
    "tsan": ("tsan", "TSan"),
}
SAN_ENV = {
    "ASAN_OPTIONS": "abort_on_error=1:detect_leaks=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1",
}
# What the check's runs add: a threaded test that finds a protocol stuck
# (many mutants are, by design) gives up after 3 s instead of 20 s.
CHECK_ENV = {"SOLOIST_TEST_DEADLINE_MS": "3000"}
HANDOUT_MARKER = os.path.join("exercises", "HANDOUT")


class ExerciseError(Exception):
    """A one-line error for the user; exit status 2."""


# -- the exercise's description -------------------------------------------

class Exercise:
    def __init__(self, root, path):
        self.root = root
        self.dir = path
        self.name = os.path.basename(path)
        with open(os.path.join(path, "exercise.json"), encoding="utf-8") as f:
            try:
                d = json.load(f)
            except ValueError as e:
                raise ExerciseError(f"{self.rel('exercise.json')} is not valid JSON: {e}")
        for k in ("step", "title", "tests"):
            if k not in d:
                raise ExerciseError(f"{self.rel('exercise.json')} lacks '{k}'")
        if "module" not in d and "modules" not in d:
            raise ExerciseError(f"{self.rel('exercise.json')} lacks 'module' (or 'modules')")
        self.step = int(d["step"])
        self.title = d["title"]
        self.chapter = d.get("chapter", "")
        # the files the learner writes: one ("module") or several ("modules"),
        # .c or .h, each under src/
        self.modules = list(d["modules"]) if "modules" in d else [d["module"]]
        self.tests = list(d["tests"])
        self.support = list(d.get("support", []))
        self.concurrent = bool(d.get("concurrent", False))
        self.repeat = int(d.get("repeat", 2))
        self.timeout_s = float(d.get("timeout_s", 60))
        self.points = dict(d.get("points", {}))
        self.default_points = int(d.get("default_points", 1))
        self.parts = [Part(self, x) for x in d.get("parts", [])] or [Part(self, {"name": "all"})]
        # "order" (optional): the writing order the README suggests, as
        # groups of region names, first group first. The check grades the
        # reference with only the first group written (stubs elsewhere)
        # and fails unless it scores: the order must show progress at once.
        order = d.get("order", [])
        if not (isinstance(order, list) and all(isinstance(g, list) and all(isinstance(r, str) for r in g)
                                                for g in order)):
            raise ExerciseError(f"{self.rel('exercise.json')}: 'order' is a list of groups of region names, "
                                'e.g. [["read", "write"], ["poll"]]')
        self.order = [list(g) for g in order]

    def rel(self, *parts):
        return os.path.relpath(os.path.join(self.dir, *parts), self.root)

    @property
    def nn(self):
        """The directory's prefix: 05, or 05b for a second exercise of step 5."""
        return self.name.split("-", 1)[0]

    @property
    def key(self):
        """What STEP= names: 5, or 5b."""
        return self.nn.lstrip("0") or "0"

    def module_path(self, module):
        return os.path.join(self.root, module)

    def work_dir(self):
        return os.path.join(self.dir, "work")

    def work_copy(self, module):
        return os.path.join(self.work_dir(), os.path.basename(module))

    def table_cells(self, head=None):
        """The cells whose first run the mutant table reports, for a mutant
        with this header: -O2, and the cells its `caught in` names (TSan for
        a memory-order mistake). Every mode of the check runs them."""
        return ["o2"] + mutant_cells(head or {})

    def manifest_path(self):
        return os.path.join(self.dir, "tests.sha256")

    def graded_files(self):
        """What the manifest protects: the tests, their support files, the points."""
        return self.tests + self.support + [self.rel("exercise.json")]

    def mutants(self):
        return sorted(glob.glob(os.path.join(self.dir, "mutants", "*.mutant"))
                      + glob.glob(os.path.join(self.dir, "mutants", "*.patch")))

    def cells(self, fast, head=None):
        """The matrix: -O0, -O2, ASan+UBSan, and TSan for a concurrent step.
        Fast: -O2 once, plus the cells a mutant's `caught in` names."""
        if fast:
            return self.table_cells(head)
        return ["o0", "o2", "asan"] + (["tsan"] if self.concurrent else [])

    def test_names(self):
        names = []
        for t in self.tests:
            if not t.endswith(".c"):
                continue
            with open(os.path.join(self.root, t), encoding="utf-8", errors="replace") as f:
                src = f.read()
            src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
            src = re.sub(r"//[^\n]*", " ", src)
            for m in re.finditer(r"\bcmocka_unit_test\w*\s*\(\s*(\w+)", src):
                if m.group(1) not in names:
                    names.append(m.group(1))
        return names

    def points_for(self, name):
        return int(self.points.get(name, self.default_points))

    def part_of(self, name):
        """The part a test grades: the first whose patterns match it, else the
        part that names no patterns (it takes every other test), else None."""
        for part in self.parts:
            if part.patterns and any(fnmatch.fnmatchcase(name, pat) for pat in part.patterns):
                return part
        return next((part for part in self.parts if not part.patterns), None)

    def has_bonus(self):
        return any(part.bonus for part in self.parts)


class Part:
    """A part of an exercise (exercise.json "parts"): its regions, the tests
    that grade it (name patterns; none = every test no other part claims),
    and whether it is a bonus, graded apart from the score."""

    def __init__(self, ex, d):
        if "name" not in d:
            raise ExerciseError(f"{ex.rel('exercise.json')}: a part lacks 'name'")
        self.name = d["name"]
        self.regions = list(d.get("regions", []))
        self.patterns = list(d.get("tests", []))
        self.bonus = bool(d.get("bonus", False))


def exercises(root):
    out = []
    for p in sorted(glob.glob(os.path.join(root, "exercises", "[0-9][0-9]-*"))
                    + glob.glob(os.path.join(root, "exercises", "[0-9][0-9][a-z]-*"))):
        if os.path.isfile(os.path.join(p, "exercise.json")):
            out.append(Exercise(root, p))
    return out


def find_exercise(root, step):
    """The exercise STEP names: a step's number (5), or a step's number and
    a letter for its second exercise (5b, in exercises/05b-*)."""
    m = re.fullmatch(r"0*(\d+)([a-z]?)", str(step).strip())
    if not m:
        raise ExerciseError(f"STEP must be a step's number (and a letter for a step's second exercise), not {step!r}")
    key = m.group(1) + m.group(2)
    for ex in exercises(root):
        if ex.key == key:
            return ex
    have = ", ".join(e.key for e in exercises(root)) or "none"
    raise ExerciseError(f"no exercise for step {key} (exercises/{int(m.group(1)):02d}{m.group(2)}-*/exercise.json); "
                        f"steps with one: {have}")


# -- the hash manifest ------------------------------------------------------

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest_lines(ex):
    lines = []
    for rel in ex.graded_files():
        p = os.path.join(ex.root, rel)
        if not os.path.isfile(p):
            raise ExerciseError(f"{ex.rel('exercise.json')} names {rel}, which does not exist")
        lines.append(f"{sha256_file(p)}  {rel}")
    return lines


def verify_manifest(ex):
    """-> list of problems (empty when every graded file is as shipped)."""
    mp = ex.manifest_path()
    if not os.path.isfile(mp):
        return [f"{ex.rel('tests.sha256')} is missing; run `make exercise-manifest STEP={ex.key}`"]
    want = {}
    with open(mp, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            digest, _, rel = line.partition("  ")
            want[rel] = digest
    problems = []
    for rel in ex.graded_files():
        p = os.path.join(ex.root, rel)
        if rel not in want:
            problems.append(f"{rel} is graded but not in {ex.rel('tests.sha256')}")
        elif not os.path.isfile(p):
            problems.append(f"{rel} is missing")
        elif sha256_file(p) != want[rel]:
            problems.append(f"{rel} was edited (its sha256 differs from {ex.rel('tests.sha256')})")
    for rel in want:
        if rel not in ex.graded_files():
            problems.append(f"{ex.rel('tests.sha256')} lists {rel}, which exercise.json does not grade")
    return problems


# -- the starter --------------------------------------------------------------

def _blank_comments_and_strings(text):
    """Same length, comments and string/char literals replaced by spaces."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _offset_of_line(text, line):
    off = 0
    for _ in range(line - 1):
        off = text.index("\n", off) + 1
    return off


def function_params(text, open_line):
    """Names of the parameters of the function whose body holds line open_line."""
    clean = _blank_comments_and_strings(text)
    pos = _offset_of_line(clean, open_line)
    depth = 0
    i = pos - 1
    while i >= 0:
        c = clean[i]
        if c == "}":
            depth += 1
        elif c == "{":
            if depth == 0:
                break
            depth -= 1
        i -= 1
    if i < 0:
        raise ExerciseError(f"line {open_line}: an exercise marker must sit inside a function body")
    j = i - 1
    while j >= 0 and clean[j].isspace():
        j -= 1
    if j < 0 or clean[j] != ")":
        raise ExerciseError(f"line {open_line}: cannot find the parameter list of the enclosing function")
    depth, k = 0, j
    while k >= 0:
        if clean[k] == ")":
            depth += 1
        elif clean[k] == "(":
            depth -= 1
            if depth == 0:
                break
        k -= 1
    params = clean[k + 1:j]
    names = []
    depth, cur = 0, ""
    parts = []
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        if not p or p == "void" or p == "...":
            continue
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)", p)  # a function pointer: int (*cb)(void)
        if m:
            names.append(m.group(1))
            continue
        p = re.sub(r"\[[^\]]*\]", "", p)
        m = re.search(r"(\w+)\s*$", p)
        if m:
            names.append(m.group(1))
    return names


def c_comment(indent, text, width=120):
    """A block comment holding text, its lines filled to the project's 120
    columns, which clang-format leaves as they are."""
    lines = textwrap.wrap(text + " */", width=width, initial_indent=indent + "/* ", subsequent_indent=indent + " * ",
                          break_long_words=False, break_on_hyphens=False)
    return lines


def stub_print(indent, msg, width=120):
    """The stub's fprintf, laid out as clang-format lays it out (the
    project's .clang-format: 120 columns), so that a handout's starter
    passes the style check: one line, or the message split after "see "
    with the rest under the first literal."""
    line = f'{indent}fprintf(stderr, "{msg}");'
    if len(line) <= width or "see " not in msg:
        return [line]
    head, rest = msg.split("see ", 1)
    return [f'{indent}fprintf(stderr, "{head}see "', f'{indent}                "{rest}");']


def make_starter(ex, module, text, extra_voids=None, only=None):
    """-> (starter text of module, [(name, first_line, last_line) of each stub
    in it]). only: stub just the regions named there (the rest keep the
    reference)."""
    extra_voids = extra_voids or {}
    regions, errors = anchors.scan_markers(module, text=text, rel=module)
    if errors:
        raise ExerciseError(f"{module}: {errors[0]}")
    theirs = others_regions(ex)
    ex_regions = sorted((r for r in regions.values() if r.kind == "exercise" and r.name not in theirs
                         and (only is None or r.name in only)), key=lambda r: r.open_line)
    if not ex_regions and only is None:
        raise ExerciseError(f"{module} has no /*@ exercise: NAME */ regions")
    if not ex_regions:
        return text, []
    lines = text.split("\n")
    out = []
    cur = 1
    chapter = ex.chapter or "the chapter"
    for r in ex_regions:
        out += lines[cur - 1:r.open_line]  # up to and including the opening marker
        indent = re.match(r"\s*", lines[r.open_line - 1]).group(0)
        params = function_params(text, r.open_line)
        msg = (f"soloist: step {ex.step} exercise \\\"{r.name}\\\" is not written yet: "
               f"see {chapter} and exercises/{ex.name}/README.md\\n")
        part = next((p for p in ex.parts if r.name in p.regions), None)
        in_part = f", part {part.name}" if part and len(ex.parts) > 1 else ""
        out += c_comment(indent, f"Exercise \"{r.name}\" (step {ex.step}, {ex.title}{in_part}): write this part. "
                         f"The comment above the function is its contract; {chapter} and "
                         f"exercises/{ex.name}/README.md explain it; `make grade STEP={ex.key}` checks it.")
        out += [f"{indent}(void){p};" for p in params]
        out += [f"{indent}(void){v};" for v in extra_voids.get(r.name, [])]
        out += stub_print(indent, msg) + [f"{indent}abort();"]
        cur = r.close_line  # keep the closing marker
    out += lines[cur - 1:]
    # the stubs need fprintf and abort: include them after the last #include
    last_inc = max((i for i, l in enumerate(out) if re.match(r"#\s*include\b", l)), default=-1)
    out[last_inc + 1:last_inc + 1] = ["/* Added by `make exercise`: the stubs below print and abort. */",
                                      "#include <stdio.h>", "#include <stdlib.h>"]
    head = c_comment("", f"STARTER for step {ex.step} ({ex.title}), written by `make exercise STEP={ex.key}` "
                         f"from {module}. Write each region that an exercise marker opens, then "
                         f"run `make grade STEP={ex.key}`.")
    starter = "\n".join(head + out)
    got, _ = anchors.scan_markers(module, text=starter, rel=module)
    stubs = sorted(((r.name, r.first, r.last) for r in got.values() if r.kind == "exercise"), key=lambda s: s[1])
    return starter, stubs


def project_cflags(root):
    try:
        r = subprocess.run(["make", "-s", "--no-print-directory", "reader-print-cflags"], cwd=root,
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return FALLBACK_CFLAGS


UNUSED = [
    re.compile(r"unused variable '(\w+)'"),
    re.compile(r"variable '(\w+)' set but not used"),
    re.compile(r"'(\w+)' defined but not used"),
    re.compile(r"unused parameter '(\w+)'"),
]


def build_starters(ex, cflags=None, only=None):
    """{module: starter text} for every module of ex (only: as make_starter)."""
    cflags = cflags or project_cflags(ex.root)
    return {m: build_starter(ex, m, cflags, only) for m in ex.modules}


def build_starter(ex, module, cflags=None, only=None):
    """The starter text of one module, compiled until it is warning-free
    (only: as make_starter). A header is compiled as C, on its own."""
    with open(ex.module_path(module), encoding="utf-8") as f:
        text = f.read()
    cflags = cflags or project_cflags(ex.root)
    regions, _ = anchors.scan_markers(module, text=text, rel=module)
    ref_regions = sorted((r for r in regions.values() if r.kind == "exercise"), key=lambda r: r.open_line)
    extra = {}
    tmpdir = tempfile.mkdtemp(prefix="soloist-starter-")
    try:
        for _ in range(5):
            starter, stubs = make_starter(ex, module, text, extra, only)
            if not stubs:
                return starter
            src = os.path.join(tmpdir, os.path.basename(module))
            with open(src, "w", encoding="utf-8") as f:
                f.write(starter)
            r = subprocess.run(["cc", *cflags, "-I", os.path.join(ex.root, "src"), "-x", "c", "-c", src,
                                "-o", os.devnull],
                               cwd=ex.root, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"),
                               timeout=120)
            if r.returncode == 0:
                return starter
            fixed = False
            slines = starter.split("\n")
            for line in r.stderr.splitlines():
                m = re.match(re.escape(src) + r":(\d+):\d+: (?:error|warning): (.*)", line)
                if not m:
                    continue
                at, msg = int(m.group(1)), m.group(2)
                for pat in UNUSED:
                    mm = pat.search(msg)
                    if not mm:
                        continue
                    name = mm.group(1)
                    # void it in the stub of the region whose removed code used it
                    target = next((r.name for r in ref_regions if re.search(rf"\b{name}\b", "\n".join(r.lines))), None)
                    if target is None:
                        first_use = next((i + 1 for i, l in enumerate(slines) if re.search(rf"\b{name}\b", l)), at)
                        target = next((n for n, a, b in stubs if a > first_use), None)
                    if target and name not in extra.get(target, []):
                        extra.setdefault(target, []).append(name)
                        fixed = True
            if not fixed:
                errs = "; ".join(l for l in r.stderr.splitlines() if "error" in l)[:600]
                raise ExerciseError(f"the starter of {module} does not compile: {errs}")
        raise ExerciseError(f"the starter of {module} still does not compile after voiding unused names")
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


# -- building and running a candidate ------------------------------------------

class Candidate:
    """What to grade in place of the modules: a learner's copy, the
    reference, a starter or a mutant. files: {module: path of its text}."""

    def __init__(self, label, files):
        self.label = label
        self.files = {m: os.path.abspath(p) for m, p in files.items()}

    def digest(self):
        h = hashlib.sha256()
        for m in sorted(self.files):
            h.update(m.encode() + b"\0" + sha256_file(self.files[m]).encode())
        return h.hexdigest()

    def shown(self, root):
        return ", ".join(os.path.relpath(p, root) for p in self.files.values())


def make_cmd(root, args, timeout=900):
    return subprocess.run(["make", "-s", "--no-print-directory", *args], cwd=root, capture_output=True,
                          text=True, timeout=timeout)


# What the build of a candidate needs from the project: the Makefile and
# its fragments, the sources, the unit tests, and the filter and the crash
# tracer the grader links them with.
TREE = ["Makefile", "mk", "src", os.path.join("tests", "unit"), os.path.join("tools", "exercise_filter.c"),
        os.path.join("tools", "grade_crash.c")]


def sync_tree(root, tree):
    """Make tree a copy of root's TREE paths, keeping each file's time, so
    that make rebuilds only what changed since the last candidate."""
    want = set()
    for top in TREE:
        src = os.path.join(root, top)
        files = ([src] if os.path.isfile(src) else
                 [os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs] if os.path.isdir(src) else [])
        for f in files:
            rel = os.path.relpath(f, root)
            want.add(rel)
            dest = os.path.join(tree, rel)
            st = os.stat(f)
            try:
                dt = os.stat(dest)
                if dt.st_mtime_ns == st.st_mtime_ns and dt.st_size == st.st_size:
                    continue
            except OSError:
                os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(f, dest)
    for top in TREE:
        d = os.path.join(tree, top)
        if os.path.isdir(d):
            for dp, _, fs in os.walk(d):
                for f in fs:
                    rel = os.path.relpath(os.path.join(dp, f), tree)
                    if rel not in want:
                        os.remove(os.path.join(dp, f))



def untree(text, tree):
    """text with the grading tree's paths made relative to it. ccache may
    give a tree an object compiled in another grading tree of the same
    sources (CCACHE_NOHASHDIR), whose debug information names that other
    tree, so any grading tree's prefix before src/ or tests/ goes too."""
    if tree:
        text = text.replace(tree + "/", "")
    return re.sub(r"/[^\s:'\"]*?/tree/(?=(?:src|tests)/)", "", text)

def build_cell(ex, cand, cell, bdir, jobs):
    """Build the server and the grader's test binaries against cand, in a
    copy of the project (bdir/tree) where the candidate's files replace the
    modules, so a module may be a header as well as a .c file; -> (ok, log,
    [binaries])."""
    variant = CELLS[cell][0]
    tree = os.path.join(bdir, "tree")
    out = os.path.join(bdir, "out")
    sync_tree(ex.root, tree)
    for m, path in cand.files.items():
        dest = os.path.join(tree, m)
        shutil.copyfile(path, dest)
        os.utime(dest)  # newer than any object: it and whatever includes it are rebuilt
    for stale in ("soloist-server", "libsoloist.a"):
        p = os.path.join(out, stale)
        if os.path.exists(p):
            os.remove(p)
    shutil.rmtree(os.path.join(out, "grade-tests"), ignore_errors=True)
    bins = [os.path.join(out, "grade-tests", os.path.basename(t)[:-2]) for t in ex.tests if t.endswith(".c")]
    args = [f"-j{jobs}", f"VARIANT={variant}", f"B={out}", f"{out}/soloist-server"] + bins
    try:
        r = make_cmd(tree, args)
    except subprocess.TimeoutExpired:
        return False, "the build took more than 15 minutes", bins
    log = untree(r.stdout + r.stderr, tree)
    return r.returncode == 0, log, bins


RESULT_LINE = re.compile(r"^\[\s*(RUN|OK|FAILED|SKIPPED|ERROR)\s*\] (\S+)")


def parse_cmocka(output):
    """-> (results {name: 'ok'|'failed'|'skipped'|'error'}, per-test output, last RUN name)."""
    results, chunks, current = {}, {}, None
    for line in output.splitlines():
        m = RESULT_LINE.match(line)
        if m and m.group(1) == "RUN":
            current = m.group(2)
            chunks.setdefault(current, [])
            continue
        if m and m.group(2) in chunks and m.group(1) != "RUN":
            results[m.group(2)] = m.group(1).lower()
            if m.group(2) == current:
                current = None
            continue
        if current:
            chunks[current].append(line)
    return results, chunks, current


def run_binary(binary, env, timeout, name=None):
    e = dict(os.environ, **env)
    if name:
        e["SOLOIST_TEST_FILTER"] = name
    # The test leads a process group of its own (setsid), so a timeout kills everything
    # it started: a forked child or a stuck thread's process would
    # otherwise outlive the grader and keep spinning on a core.
    # One pipe for both streams: cmocka writes its transcript to stdout
    # (unbuffered by exercise_filter.c) and an assertion's text to stderr,
    # so only one pipe keeps each message beside the test that printed it.
    p = subprocess.Popen([binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=e,
                         start_new_session=True)
    try:
        so, _ = p.communicate(timeout=timeout)
        return p.returncode, so.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        so, _ = p.communicate()
        return None, so.decode("utf-8", "replace") + f"\n(timed out after {timeout:.0f}s)"


STUB = re.compile(r'step (\d+) exercise "([^"]+)" is not written yet')


def explain(ex, text):
    """A failure's text with each stub's message said to be the learner's
    region or another step's: the one thing a learner must know first."""
    def note(m):
        step = int(m.group(1))
        if step == ex.step:
            return m.group(0) + f" [your region: step {step}'s \"{m.group(2)}\"]"
        return (m.group(0) + f" [NOT yours: step {step}'s region, which this tree lacks; grade step {ex.step} "
                f"where step {step}'s code is in place: a handout cut for step {ex.step} (make handout STEP={ex.key})]")
    return STUB.sub(note, text)


def signal_name(rc):
    try:
        return f"killed by signal {-rc} ({signal.Signals(-rc).name})"
    except ValueError:
        return f"killed by signal {-rc}"


# -- what a failure says: a sanitizer's first lines, a crash's place ---------

SANITIZER_HEAD = re.compile(r"==\d+==ERROR: (AddressSanitizer|LeakSanitizer)|WARNING: ThreadSanitizer:|"
                            r": runtime error: ")
FRAME = re.compile(r"^\s*#(\d+) (?:0x[0-9a-f]+ )?(?:in )?(.*)$")
FRAMES_SHOWN = 8


def _frame(line, tree):
    """A sanitizer's stack frame, without its address and the build tree's path."""
    m = FRAME.match(line)
    text = m.group(2).strip() if m else line.strip()
    return f"    #{m.group(1) if m else '?'} " + untree(text, tree)


def _stack(lines, i, tree, limit=FRAMES_SHOWN):
    """The frames from lines[i] on, up to the test runner's (cmocka's) frame
    or limit -> (shown lines, index after the stack)."""
    out = []
    while i < len(lines) and FRAME.match(lines[i]):
        if "libcmocka" not in lines[i] and len(out) < limit:
            out.append(_frame(lines[i], tree))
        elif "libcmocka" in lines[i]:
            limit = len(out)  # the runner called the test: nothing below it is the learner's
        i += 1
    return out, i


def _leak_report(lines, start, tree):
    """LeakSanitizer's report: its first "Direct leak" block (else the
    first "Indirect leak"), which names the allocation's place."""
    blocks = [i for i in range(start, len(lines)) if re.match(r"(Direct|Indirect) leak of", lines[i])]
    direct = [i for i in blocks if lines[i].startswith("Direct")]
    if not blocks:
        return None
    i = (direct or blocks)[0]
    frames, _ = _stack(lines, i + 1, tree)
    total = next((l for l in lines[start:] if l.startswith("SUMMARY:")), "")
    more = len(blocks) - 1
    return "\n".join(["LeakSanitizer: memory allocated here was never freed (reported when the process exited):",
                      "  " + lines[i].strip()] + frames
                     + ([f"  ({more} more leak report{'s' if more > 1 else ''}; {total[9:].strip()})"] if more else []))


def sanitizer_report(text, tree=None):
    """The first lines of the first sanitizer report in text (ASan, LSan,
    UBSan, TSan): its kind, the access, the top frames of each stack it
    prints and its summary; never the shadow-memory legend that ends an
    ASan report. None when text holds no report."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if SANITIZER_HEAD.search(l)), None)
    if start is None:
        return None
    if "LeakSanitizer" in lines[start]:
        return _leak_report(lines, start, tree)
    head = untree(lines[start], tree)
    out = [re.sub(r" at pc 0x[0-9a-f]+ bp 0x[0-9a-f]+ sp 0x[0-9a-f]+", "", re.sub(r"^==\d+==(ERROR: )?", "", head)).strip()]
    i = start + 1
    while i < len(lines):
        line = lines[i]
        if (line.startswith("Shadow bytes") or line.startswith("SUMMARY:") or line.startswith("==")
                or re.match(r"^=+$", line.strip())):
            break
        if FRAME.match(line):
            frames, i = _stack(lines, i, tree)
            out += frames
            continue
        if line.strip():
            out.append("  " + untree(line, tree).strip())
        i += 1
    summary = next((l for l in lines[i:] if l.startswith("SUMMARY:")), None)
    if summary:
        out.append(untree(summary, tree))
    return "\n".join(out[:40])


CRASH_FRAME = re.compile(r"^(\S+?)\((\S*)\)\s*\[(0x[0-9a-f]+)\]$")


def crash_frames(binary, out, tree=None):
    """The crashing stack grade_crash.c printed (a rerun with
    SOLOIST_CRASH_TRACE=1) as "function at file:line" lines, innermost
    first, from the crash to the test function, via addr2line; [] when
    there is none (or no addr2line)."""
    m = re.search(r"soloist-backtrace: signal 0x([0-9a-f]+) bias 0x([0-9a-f]+)\n(.*?)soloist-backtrace: end",
                  out, re.S)
    if not m:
        return []
    bias = int(m.group(2), 16)
    frames = []  # (object, absolute address)
    for line in m.group(3).splitlines():
        f = CRASH_FRAME.match(line.strip())
        if f:
            frames.append((f.group(1), int(f.group(3), 16)))
    exe = os.path.realpath(binary)
    mine = [os.path.realpath(o) == exe for o, _ in frames]
    first_lib = next((i for i, x in enumerate(mine) if not x and "libasan" not in frames[i][0]), len(frames))
    # the exe frames before the first library frame are the handler's own;
    # the first run of exe frames after it is the crash, out to the test
    j = next((i for i in range(first_lib, len(frames)) if mine[i]), None)
    if j is None:
        return []
    k = j
    while k < len(frames) and mine[k]:
        k += 1
    # a frame that the signal interrupted holds the faulting instruction
    # itself (cmocka's handler is just above it); every other frame holds a
    # return address, which addr2line must see inside the call
    exact = j >= 2 and "libcmocka" in frames[j - 2][0]
    addrs = [hex(frames[i][1] - bias - (0 if (i == j and exact) else 1)) for i in range(j, k)]
    try:
        r = subprocess.run(["addr2line", "-f", "-i", "-C", "-p", "-e", binary, *addrs],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    shown = []
    for line in r.stdout.splitlines():
        line = line.replace(" (inlined by) ", "  inlined in ").strip()
        line = untree(line, tree)
        line = re.sub(r" \(discriminator \d+\)", "", line)
        if line.startswith("??"):
            continue
        shown.append("  " + line if not line.startswith("inlined in") else "    " + line)
    return shown[:14]


def crash_place(ex, binary, name, env, tree):
    """Reruns one test that crashed, with its stack printed (grade_crash.c),
    -> the lines saying where, or ""."""
    rc, out = run_binary(binary, dict(env, SOLOIST_CRASH_TRACE="1", CMOCKA_TEST_ABORT="1"),
                         min(ex.timeout_s, 60), name=name)
    sig = re.search(r"soloist-backtrace: signal 0x([0-9a-f]+)", out)
    frames = crash_frames(binary, out, tree)
    if not frames:
        return ""
    return "where it crashed (the innermost call first):\n" + "\n".join(frames) if sig else ""


CMOCKA_EXCEPTION = re.compile(r"Test failed with exception: (.*)\((\d+)\)")


def failure_text(ex, binary, name, text, env, trace, tree):
    """What a failed test printed, said for a learner: a sanitizer report's
    first lines; a crash's signal and, when trace, its place; else the
    test's last lines (its assertion)."""
    report = sanitizer_report(text, tree)
    if report:
        return explain(ex, report)
    why = _tail(text, 30)
    m = CMOCKA_EXCEPTION.search(text)
    if m:
        try:
            sig = signal.Signals(int(m.group(2))).name
        except ValueError:
            sig = f"signal {m.group(2)}"
        why = re.sub(r"\[\s*ERROR\s*\] --- " + re.escape(m.group(0)), m.group(0), why)
        why = why.replace(m.group(0), f"{m.group(0)}: the test crashed ({sig})", 1)
        if trace and not STUB.search(text):
            place = crash_place(ex, binary, name, env, tree)
            why += ("\n" + place) if place else ""
    return explain(ex, why)


def rerun_alone(ex, binary, name, env, trace, tree):
    """Runs one test in a process of its own (the binary's run died before
    it ended) -> (passed, why), or None when the test is not in binary."""
    limit = min(ex.timeout_s, 60)
    rc, out = run_binary(binary, env, limit, name=name)
    res, chunks, _ = parse_cmocka(out)
    if name not in res and name not in chunks:
        return None
    if res.get(name) == "ok" and rc == 0:
        return True, ""
    # the test's own lines (an assertion, a stub's message, a sanitizer's
    # report), never another test's transcript; a leak is reported after
    # the test's [ OK ], when the process exits, so the whole run is read
    own = "\n".join(chunks.get(name, []))
    report = sanitizer_report(out, tree)
    if rc is None:
        why = f"timed out after {limit:.0f}s\n" + _tail(own, 30)
    elif report:
        why = (f"{name} passed its assertions, then the process failed at exit:\n"
               if res.get(name) == "ok" else "") + report
    elif res.get(name) == "ok":
        why = f"{name} passed, then the process exited with status {rc}\n" + _tail(out, 12)
    elif rc < 0:
        why = f"{signal_name(rc)} in {name}; its last lines:\n" + _tail(own, 30)
        if trace and not STUB.search(own):
            place = crash_place(ex, binary, name, env, tree)
            why += ("\n" + place) if place else ""
    else:
        return False, failure_text(ex, binary, name, own, env, trace, tree)
    return False, explain(ex, why.strip())


def run_tests(ex, binaries, names, seed, cell, extra_env=None, trace=False):
    """One repetition in one cell -> {name: (passed, output)}. trace: rerun
    a test that crashed to say where (a grade a learner reads; the check's
    many runs need only the verdict)."""
    env = {"SOLOIST_SEED": str(seed), "SOLOIST_TEST_SEED": str(seed), **SAN_ENV, **(extra_env or {})}
    got = {}
    died = {}  # binary -> why it ended before a test of its ran (for "did not run")
    for binary in binaries:
        tree = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(binary))), "tree")
        rc, out = run_binary(binary, env, ex.timeout_s)
        results, chunks, crashed = parse_cmocka(out)
        n_failed = sum(1 for v in results.values() if v != "ok")
        normal = rc is not None and rc == n_failed
        for name, res in results.items():
            if res != "ok":
                got[name] = (False, failure_text(ex, binary, name, "\n".join(chunks.get(name, [])) or res,
                                                 env, trace, tree))
            elif normal:
                got[name] = (True, "")
        if normal and crashed is None:
            continue
        if not results and crashed is None:
            why = "timed out" if rc is None else signal_name(rc) if rc < 0 else f"exit status {rc}"
            died[binary] = explain(ex, f"{os.path.basename(binary)} ended before running any test ({why}); "
                                       f"its last lines:\n{_tail(out, 12)}")
        # the run died (a stub's abort, a sanitizer report, a leak found at
        # exit, a timeout): rerun every test it did not fail outright, each
        # in its own process
        for name in names:
            if name not in got:
                one = rerun_alone(ex, binary, name, env, trace, tree)
                if one is not None:
                    got[name] = one
    for name in names:
        if name not in got and died:
            got[name] = (False, "did not run: " + "\n".join(died.values()))
        got.setdefault(name, (False, f"did not run in {CELLS[cell][1]} (not found in the test binaries)"))
    return got


def _tail(text, n=40):
    lines = text.strip().splitlines()
    return "\n".join(lines[-n:])


def grade(ex, cand, cells, repeat, seed, tag, jobs=2, quiet=False, log=print, first_cells=("o2",), env=None,
          trace=False):
    """-> dict with per-test results and the score, and "first_failing":
    the tests that failed in the first run of any of first_cells (the runs
    the mutant table reports, which every mode of the check makes). trace:
    a crash's place is found (run_tests). A test's output keeps every
    failed run, each headed by its cell and seed."""
    names = ex.test_names()
    if not names:
        raise ExerciseError(f"no cmocka tests found in {', '.join(ex.tests)}")
    t0 = time.time()
    per_test = {n: {"runs": 0, "passed": 0, "failures": []} for n in names}
    build_logs = []
    first = set()
    for cell in cells:
        bdir = os.path.join(ex.root, "build", "grade", ex.nn, tag, cell)
        os.makedirs(bdir, exist_ok=True)
        ok, blog, bins = build_cell(ex, cand, cell, bdir, jobs)
        if not ok:
            msg = f"{CELLS[cell][1]}: the build failed:\n{_tail(blog, 30)}"
            build_logs.append(msg)
            if not quiet:
                log(f"  {CELLS[cell][1]:<11} build FAILED")
            for n in names:
                per_test[n]["runs"] += repeat
                per_test[n]["failures"].append(f"{CELLS[cell][1]}: not built")
            if cell in first_cells:
                first |= set(names)
            continue
        for rep in range(repeat):
            s = seed + rep
            got = run_tests(ex, bins, names, s, cell, env, trace=trace)
            good = sum(1 for v in got.values() if v[0])
            if cell in first_cells and rep == 0:
                first |= {n for n in names if not got[n][0]}
            if not quiet:
                log(f"  {CELLS[cell][1]:<11} run {rep + 1}/{repeat} seed {s}: {good}/{len(names)} tests passed")
            for n in names:
                okn, out = got[n]
                per_test[n]["runs"] += 1
                if okn:
                    per_test[n]["passed"] += 1
                else:
                    per_test[n]["failures"].append(f"{CELLS[cell][1]} seed {s}:\n{out}".rstrip())
    tests = []
    for n in names:
        pts = ex.points_for(n)
        t = per_test[n]
        passed = t["runs"] > 0 and t["passed"] == t["runs"]
        part = ex.part_of(n)
        tests.append({"name": n, "score": pts if passed else 0, "max_score": pts,
                      "status": "passed" if passed else "failed",
                      "output": ("passed in every run" if passed else
                                 f"failed {t['runs'] - t['passed']} of {t['runs']} runs\n" + "\n\n".join(t["failures"])),
                      "runs": t["runs"], "passed_runs": t["passed"],
                      "part": part.name if part else "", "bonus": bool(part and part.bonus)})
    res = {"tests": tests, "build_logs": build_logs, "seconds": round(time.time() - t0, 1),
           "parts": [], "first_failing": [n for n in names if n in first]}
    res.update(tally(ex, tests))
    first_t = tally(ex, [dict(t, score=0 if t["name"] in first else t["max_score"]) for t in tests])
    res["first"] = {"score": first_t["score"], "bonus": first_t["bonus"]}
    return res


def tally(ex, tests):
    """Scores of graded tests: the score (every part but the bonus ones), the
    bonus, and each part's share."""
    out = {"score": 0, "max_score": 0, "bonus": 0, "bonus_max": 0, "parts": []}
    for part in ex.parts:
        mine = [t for t in tests if ex.part_of(t["name"]) is part]
        got, best = sum(t["score"] for t in mine), sum(t["max_score"] for t in mine)
        out["parts"].append({"name": part.name, "regions": part.regions, "bonus": part.bonus, "tests": len(mine),
                             "score": got, "max_score": best})
        out["bonus" if part.bonus else "score"] += got
        out["bonus_max" if part.bonus else "max_score"] += best
    return out


def results_json(ex, cand, res, cells, repeat, seed):
    head = (f"soloist step {ex.step}: {ex.title}. Graded {cand.shown(ex.root)} in "
            f"{', '.join(CELLS[c][1] for c in cells)}, {repeat} run(s) each, seeds {seed}..{seed + repeat - 1}.")
    if res["build_logs"]:
        head += "\n\n" + "\n\n".join(res["build_logs"])
    if res["bonus_max"]:
        head += (f"\nScore {res['score']}/{res['max_score']}; bonus {res['bonus']}/{res['bonus_max']} on top "
                 "(the bonus tests show as extra credit, out of 0).")
    return {
        "score": res["score"] + res["bonus"],
        "max_score": res["max_score"],
        "execution_time": res["seconds"],
        "output": head,
        "visibility": "visible",
        "stdout_visibility": "visible",
        "extra_data": {"step": ex.step, "seed": seed, "repeat": repeat, "cells": cells,
                       "submission_sha256": cand.digest(), "bonus": res["bonus"],
                       "bonus_max": res["bonus_max"],
                       "parts": {p["name"]: f"{p['score']}/{p['max_score']}" for p in res["parts"]}},
        "tests": [{"name": t["name"], "score": t["score"], "max_score": 0 if t["bonus"] else t["max_score"],
                   "status": t["status"], "output": t["output"], "visibility": "visible"} for t in res["tests"]],
    }


def first_reason(output, lines=16):
    """The first failure's reason in a test's output, for the console: the
    lines after its "cell seed N:" header, without cmocka's bookkeeping."""
    body = output.split(":\n", 1)[1] if ":\n" in output else output
    body = body.split("\n\n")[0]
    keep = [l for l in body.splitlines()
            if l.strip() and not re.match(r"^\[\s*(RUN|OK|FAILED|SKIPPED|PASSED|=+)\s*\]", l)]
    return keep[:lines]


def print_report(ex, res, log=print):
    width = max(len(t["name"]) for t in res["tests"])
    for t in res["tests"]:
        mark = "PASS" if t["status"] == "passed" else "FAIL"
        log(f"  {mark}  {t['name']:<{width}}  {t['score']:>2}/{t['max_score']:<2}"
            + ("" if t["status"] == "passed" else f"  ({t['runs'] - t['passed_runs']} of {t['runs']} runs failed)"))
        if t["status"] != "passed":
            for line in first_reason(t["output"]):
                log(f"        {line[:200]}")
    if len(res["parts"]) > 1:
        for p in res["parts"]:
            regions = f" ({', '.join(p['regions'])})" if p["regions"] else ""
            note = ", a bonus: not needed for full marks" if p["bonus"] else ""
            log(f"  part {p['name']}{regions}{note}: {p['score']}/{p['max_score']}")
    log(f"score: {res['score']}/{res['max_score']}")
    if res["bonus_max"]:
        log(f"bonus: {res['bonus']}/{res['bonus_max']}")


# -- mutants -----------------------------------------------------------------

def mutant_header(path):
    """The `# key: value` lines at the top of a mutant: what (the mistake),
    point (where it breaks), region, caught by (the test written to catch
    it), and optionally undefined (why the mutant's behaviour is undefined:
    the README's table then names only the test written to catch it, since
    which others fail depends on the allocator and the timing) or varies
    (why the mutant's behaviour is defined but which other tests reach it
    hangs on timing: the table then says so and names only its own test)."""
    head = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#\s*([\w ]+?):\s*(.+)", line)
            if m:
                head.setdefault(m.group(1).strip().lower(), m.group(2).strip())
            elif line.strip() and not line.startswith("#"):
                break
    return head



def mutant_cells(head):
    """The cells a mutant's `# caught in:` line names beyond -O2 (e.g.
    `TSan`: a memory-order mistake that only ThreadSanitizer sees); a
    fast check runs the mutant in them too."""
    by_label = {label.lower(): cell for cell, (_, label) in CELLS.items()}
    out = []
    for word in re.split(r"[,\s]+", head.get("caught in", "").strip()):
        cell = by_label.get(word.lower()) or (word.lower() if word.lower() in CELLS else None)
        if word and cell is None:
            raise ExerciseError(f"`# caught in: {word}` names no cell (one of {', '.join(c[1] for c in CELLS.values())})")
        if cell and cell != "o2" and cell not in out:
            out.append(cell)
    return out


def apply_mutant(ex, mpath, dest):
    """Write the exercise's modules, mutated, into the directory dest;
    -> {module: path}. Raise ExerciseError if the mutant does not apply.
    Each find block must occur exactly once in all the modules together."""
    texts = {}
    for m in ex.modules:
        with open(ex.module_path(m), encoding="utf-8") as f:
            texts[m] = f.read()
    rel = os.path.relpath(mpath, ex.root)
    names = ", ".join(ex.modules)
    os.makedirs(dest, exist_ok=True)
    files = {m: os.path.join(dest, os.path.basename(m)) for m in ex.modules}
    if mpath.endswith(".patch"):
        tmp = tempfile.mkdtemp(prefix="soloist-mutant-")
        try:
            for m in ex.modules:
                os.makedirs(os.path.join(tmp, os.path.dirname(m)), exist_ok=True)
                shutil.copyfile(ex.module_path(m), os.path.join(tmp, m))
            with open(mpath, "rb") as f:
                r = subprocess.run(["patch", "-p1", "-s", "-f", "--no-backup-if-mismatch", "-d", tmp],
                                   stdin=f, capture_output=True, text=True)
            if r.returncode != 0:
                raise ExerciseError(f"{rel} no longer applies to {names}: {(r.stdout + r.stderr).strip()[:300]}")
            for m in ex.modules:
                shutil.copyfile(os.path.join(tmp, m), files[m])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return files
    with open(mpath, encoding="utf-8") as f:
        spec = f.read()
    edits = re.findall(r"^@@@ find\n(.*?)^@@@ replace\n(.*?)^@@@ end\n?", spec, re.M | re.S)
    if not edits:
        raise ExerciseError(f"{rel}: no '@@@ find' / '@@@ replace' / '@@@ end' block")
    for find, repl in edits:
        find, repl = find[:-1], repl[:-1]  # a block is whole lines; the last newline ends the block
        count = sum(t.count(find) for t in texts.values())
        if count != 1:
            raise ExerciseError(f"{rel}: the text to replace occurs {count} times in {names} (want exactly 1); "
                                "update the mutant to today's reference")
        m = next(m for m, t in texts.items() if find in t)
        texts[m] = texts[m].replace(find, repl)
    for m in ex.modules:
        with open(files[m], "w", encoding="utf-8") as f:
            f.write(texts[m])
    return files


# -- commands ------------------------------------------------------------------

def cmd_start(root, args):
    ex = find_exercise(root, args.step)
    if handout_step(root) is not None:
        raise ExerciseError(f"in a handout, src/ is already the starter: edit {', '.join(ex.modules)} in place "
                            f"and run `make grade STEP={ex.key}` (make exercise would make a starter of the starter)")
    if args.out and len(ex.modules) == 1:
        outs = {ex.modules[0]: os.path.abspath(args.out)}
    else:  # OUT= names a directory when the step has several modules
        d = os.path.abspath(args.out) if args.out else ex.work_dir()
        outs = {m: os.path.join(d, os.path.basename(m)) for m in ex.modules}
    for out in outs.values():
        if os.path.exists(out) and not args.force:
            raise ExerciseError(f"{os.path.relpath(out, root)} exists (your work?); FORCE=1 overwrites it")
    starters = build_starters(ex)
    for m, out in outs.items():
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(starters[m])
        regions, _ = anchors.scan_markers(out, rel=os.path.relpath(out, root))
        names = [r.name for r in sorted(regions.values(), key=lambda r: r.open_line) if r.kind == "exercise"]
        print(f"exercise: wrote {os.path.relpath(out, root)}: step {ex.step} ({ex.title}), "
              f"{len(names)} regions to write: {', '.join(names)}")
    if len(ex.parts) > 1:
        print("exercise: parts: " + "; ".join(
            f"{p.name} ({', '.join(p.regions)})" + (", a bonus: not needed for full marks" if p.bonus else "")
            for p in ex.parts))
    what = "the file" if len(outs) == 1 else "the files"
    print(f"exercise: read exercises/{ex.name}/README.md, edit {what}, then run `make grade STEP={ex.key}`")
    return 0


def submission_files(ex, given):
    """{module: path} to grade: SUBMISSION= (a file for a one-module step,
    else a directory holding each module under its own name), else the
    work copies, else (in a handout tree) src/ itself."""
    if given:
        p = os.path.abspath(given)
        if os.path.isdir(p):
            files = {m: os.path.join(p, os.path.basename(m)) for m in ex.modules}
            missing = [os.path.relpath(f, ex.root) for f in files.values() if not os.path.isfile(f)]
            if missing:
                raise ExerciseError(f"SUBMISSION={given} lacks {', '.join(missing)}")
            return files
        if not os.path.isfile(p):
            raise ExerciseError(f"no file {given}")
        if len(ex.modules) > 1:
            raise ExerciseError(f"step {ex.step} grades {len(ex.modules)} files ({', '.join(ex.modules)}): "
                                f"SUBMISSION= names a directory that holds them (SUBMISSION=src grades the reference)")
        return {ex.modules[0]: p}
    work = {m: ex.work_copy(m) for m in ex.modules}
    if all(os.path.isfile(f) for f in work.values()):
        return work
    if handout_step(ex.root) is not None:
        return {m: ex.module_path(m) for m in ex.modules}
    lacking = [os.path.relpath(f, ex.root) for f in work.values() if not os.path.isfile(f)]
    ref = ex.modules[0] if len(ex.modules) == 1 else "src"
    raise ExerciseError(f"no learner copy at {', '.join(lacking)}: run "
                        f"`make exercise STEP={ex.key}` first, or give SUBMISSION=path "
                        f"(SUBMISSION={ref} grades the reference)")


def cmd_grade(root, args):
    ex = find_exercise(root, args.step)
    cut = handout_step(root)
    if cut is not None and cut != ex.key and not args.submission:
        raise ExerciseError(f"this handout is cut for step {cut}: only step {cut}'s code is yours here (every other "
                            f"step's is the reference); grade step {ex.key} in its own handout "
                            f"(`make handout STEP={ex.key}` in the full tree)")
    problems = verify_manifest(ex)
    if problems:
        for p in problems:
            print(f"grade: REFUSED: {p}", file=sys.stderr)
        print(f"grade: restore the graded files (e.g. git checkout -- {' '.join(ex.graded_files())}) "
              "and grade again", file=sys.stderr)
        return 2
    files = submission_files(ex, args.submission)
    cells = ex.cells(args.fast)
    repeat = args.repeat or (1 if args.fast else ex.repeat)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 1 << 31)
    cand = Candidate("submission", files)
    print(f"grade: step {ex.step} ({ex.title}): {cand.shown(root)}")
    print(f"grade: matrix {', '.join(CELLS[c][1] for c in cells)}; {repeat} run(s) each; "
          f"seed {seed} (rerun with SEED={seed})")
    res = grade(ex, cand, cells, repeat, seed, "submission", jobs=args.jobs, trace=True)
    for b in res["build_logs"]:
        print(b)
    print_report(ex, res)
    doc = results_json(ex, cand, res, cells, repeat, seed)
    out = os.path.join(root, "build", "grade", ex.nn, "results.json")
    paths = [out] + ([os.path.abspath(args.results)] if args.results else [])
    for p in paths:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    print(f"grade: results (Gradescope format) in {', '.join(os.path.relpath(p, root) for p in paths)}")
    full = res["score"] == res["max_score"]
    if args.integration:
        full = run_integration(ex, "submission") and full
    return 0 if full else 1


# How the integration suite runs a graded server: as suites 30 and 31 do,
# once single-threaded and, for a step whose code the I/O threads run, with
# the threads forced on (every read and write offered to a worker).
INTEGRATION_RUNS = [("io-threads 1", "")]
INTEGRATION_THREADED = [("io-threads 2, forced on", "--io-threads 2 --io-threads-always-active yes"),
                        ("io-threads 4, forced on", "--io-threads 4 --io-threads-always-active yes")]


def run_integration(ex, tag):
    """Runs tests/integration/ against the -O2 server just graded (the
    learner's code with every other step's reference) -> all passed."""
    server = os.path.join(ex.root, "build", "grade", ex.nn, tag, "o2", "out", "soloist-server")
    if not os.path.isfile(server):
        print("grade: INTEGRATION: no -O2 server was built from the submission, so there is nothing to run")
        return False
    r = make_cmd(ex.root, ["integration-client"])
    if r.returncode != 0:
        print("grade: INTEGRATION: the C client did not build:\n" + _tail(r.stdout + r.stderr, 10))
        return False
    ok = True
    for label, server_args in INTEGRATION_RUNS + (INTEGRATION_THREADED if ex.concurrent else []):
        env = dict(os.environ, SOLOIST_SERVER_ARGS=server_args)
        p = subprocess.run([sys.executable, os.path.join("tests", "integration", "run_all.py"),
                            "--name", f"grade-{ex.nn}-{len(server_args)}", "--target", server,
                            "--c-client", os.path.join("build", "tests-integration", "c_client")],
                           cwd=ex.root, env=env, capture_output=True, text=True, timeout=900)
        out = p.stdout + p.stderr
        counts = re.findall(r"^(\d+) passed, (\d+) failed$", out, re.M)
        line = "%s passed, %s failed" % counts[-1] if counts else f"no count (exit {p.returncode})"
        good = bool(counts) and counts[-1][1] == "0" and p.returncode == 0
        print(f"grade: INTEGRATION ({label}): {line}")
        if not good:
            for l in [l for l in out.splitlines() if re.search(r"FAIL|ERROR|MISMATCH", l)][:15]:
                print(f"        {l[:200]}")
        ok = ok and good
    return ok


def sample_mutants(ex):
    """The mutants `make test` runs: for each part of the exercise, the one
    that comes first in the module (mutant_order); `make check-exercises`
    and `make check-all` run every mutant."""
    chosen = {}
    for m in ex.mutants():
        head = mutant_header(m)
        part = next((p.name for p in ex.parts if head.get("region") in p.regions), ex.parts[0].name)
        key = mutant_order(ex, m, head)
        if part not in chosen or key < chosen[part][0]:
            chosen[part] = (key, m)
    return sorted(m for _, m in chosen.values())


class Verdicts:
    """Counts a check's verdicts and logs each as an `ok` or `FAIL` line."""

    def __init__(self, log):
        self.log = log
        self.passed = self.failed = 0

    def __call__(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        self.log(f"  {'ok  ' if ok else 'FAIL'} {what}")


def check_static(ex, verdict):
    """The checks that build nothing: the manifest, the points table, the
    README's coverage of the regions, the parts, the order, the contract."""
    problems = verify_manifest(ex)
    verdict(not problems, "the tests match tests.sha256" + (": " + "; ".join(problems) +
            f"; if the change is deliberate: make exercise-manifest STEP={ex.key}" if problems else ""))
    names = ex.test_names()
    unknown = sorted(set(ex.points) - set(names))
    verdict(not unknown and bool(names), f"{len(names)} tests; the points table names only real tests"
            + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    readme = os.path.join(ex.dir, "README.md")
    ex_names = exercise_regions(ex)
    text = open(readme, encoding="utf-8").read() if os.path.isfile(readme) else ""
    missing = [n for n in ex_names if n not in text]
    verdict(os.path.isfile(readme) and not missing and bool(ex_names),
            f"README.md covers every exercise region ({', '.join(ex_names) or 'none'})"
            + (f"; missing: {', '.join(missing)}" if missing else ""))
    why = parts_problem(ex, names, ex_names)
    verdict(why is None, f"the parts ({', '.join(p.name for p in ex.parts)}) share out every region and test"
            + (f": {why}" if why else ""))
    if ex.order:
        why = order_problem(ex, ex_names)
        verdict(why is None, "the suggested order (" + " | ".join(", ".join(g) for g in ex.order)
                + ") names each region once" + (f": {why}" if why else ""))
    why = readme_points_problem(ex)
    verdict(why is None, "README.md's points table matches exercise.json" + (f": {why}" if why else ""))
    bad = contract_problems(ex)
    lines = contract_rows(ex) or []
    verdict(not bad, f"the contract table ({len(lines)} lines) and the tests match both ways, every line with a "
            "mutant of its own" + (": " + "; ".join(bad[:6]) if bad else ""))
    return names


def order_problem(ex, regions):
    """-> why exercise.json's "order" is not a writing order of the regions, or None."""
    seen = [r for g in ex.order for r in g]
    unknown = [r for r in seen if r not in regions]
    if unknown:
        return f"no such region in {', '.join(ex.modules)}: {', '.join(unknown)}"
    twice = sorted({r for r in seen if seen.count(r) > 1})
    if twice:
        return f"regions in two groups: {', '.join(twice)}"
    if any(not g for g in ex.order):
        return "an empty group"
    return None


def in_style(root, module, text):
    """Whether clang-format (the project's .clang-format) leaves text as it
    is; True where clang-format is not installed (the style suite says so)."""
    if not shutil.which("clang-format") or not os.path.isfile(os.path.join(root, ".clang-format")):
        return True
    try:
        r = subprocess.run(["clang-format", f"--assume-filename={module}"], input=text, capture_output=True,
                           text=True, cwd=root, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return True
    return r.returncode != 0 or r.stdout == text


def _write_texts(work, sub, texts):
    files = {}
    for m, t in texts.items():
        files[m] = os.path.join(work, sub, os.path.basename(m))
        os.makedirs(os.path.dirname(files[m]), exist_ok=True)
        with open(files[m], "w", encoding="utf-8") as f:
            f.write(t)
    return files


def base_candidates(ex, verdict, work, sample=False):
    """[(label, Candidate, expected, head)]: the starter, the reference, the
    reference without its bonus regions, and (but in a sample, which
    `make test` runs and whose time it counts) the suggested order's first
    group alone: its regions the reference's, every other region a stub."""
    cands = []
    try:
        starters = build_starters(ex)
        cands.append(("starter", Candidate("starter", _write_texts(work, "starter", starters)),
                      "fails every test", {}))
        unstyled = [m for m, t in starters.items() if not in_style(ex.root, m, t)]
        verdict(not unstyled, "the starter is in the project's style (clang-format leaves it as it is)"
                + (f"; not: {', '.join(unstyled)}" if unstyled else ""))
    except ExerciseError as e:
        verdict(False, f"the starter compiles: {e}")
    cands.append(("reference", Candidate("reference", {m: ex.module_path(m) for m in ex.modules}),
                  "full marks", {}))
    bonus_regions = [r for p in ex.parts if p.bonus for r in p.regions]
    if bonus_regions:
        try:
            files = _write_texts(work, "no-bonus", build_starters(ex, only=set(bonus_regions)))
            cands.append(("no bonus", Candidate("no-bonus", files), "full marks without the bonus", {}))
        except ExerciseError as e:
            verdict(False, f"the reference without its bonus regions compiles: {e}")
    if ex.order and not sample and order_problem(ex, exercise_regions(ex)) is None:
        rest = set(exercise_regions(ex)) - set(ex.order[0])
        try:
            files = _write_texts(work, "first-group", build_starters(ex, only=rest))
            cands.append(("first group", Candidate("first-group", files), "some points", {}))
        except ExerciseError as e:
            verdict(False, f"the reference with only the suggested order's first group written compiles: {e}")
    return cands


def mutant_candidates(ex, verdict, work, fast, sample, names):
    """[(label, Candidate, expected, head)] for the mutants (sample: one per
    part), each applied to the reference; a mutant that names no test of
    the step, or does not apply, is a failed verdict instead."""
    cands = []
    for m in (sample_mutants(ex) if sample else ex.mutants()):
        name = os.path.splitext(os.path.basename(m))[0]
        head = mutant_header(m)
        named = head.get("caught by", "")
        if named not in names:
            verdict(False, f"mutant {name} names the test written to catch it (`# caught by: test_name`)"
                    + (f"; {named} is not a test of this step" if named else ""))
            continue
        try:
            files = apply_mutant(ex, m, os.path.join(work, "mutant-" + name))
            extra = mutant_cells(head)
            if not fast and any(c not in ex.cells(False) for c in extra):
                raise ExerciseError(f"its `# caught in:` names a cell the matrix of step {ex.step} lacks "
                                    "(TSan needs \"concurrent\": true)")
        except ExerciseError as e:
            verdict(False, f"mutant {name} applies: {e}")
            continue
        head["order"] = mutant_order(ex, m, head)
        cands.append(("mutant " + name, Candidate(name, files), "rejected", head))
    if not ex.mutants():
        verdict(False, f"exercises/{ex.name}/mutants/ holds at least one mutant")
    return cands


def candidate_verdict(ex, label, res, head):
    """-> (ok, what) for one graded candidate of the check."""
    failing = [t["name"] for t in res["tests"] if t["status"] != "passed"]
    full = res["score"] == res["max_score"] and res["bonus"] == res["bonus_max"]
    bonus = f", bonus {res['bonus']}/{res['bonus_max']}" if res["bonus_max"] else ""
    if label == "starter":
        free = [t["name"] for t in res["tests"] if t["status"] == "passed" and t["max_score"] > 0]
        return (res["score"] == 0 and res["bonus"] == 0 and not res["build_logs"],
                f"starter builds and scores {res['score']}/{res['max_score']}{bonus} (must be 0)"
                + (f"; passes on the starter: {', '.join(free)}" if free else "")
                + ("; " + " ".join(res["build_logs"])[:600] if res["build_logs"] else ""))
    if label == "no bonus":
        ok = res["score"] == res["max_score"]
        bonus_regions = [r for p in ex.parts if p.bonus for r in p.regions]
        return ok, (f"the reference with the bonus regions ({', '.join(bonus_regions)}) unwritten scores "
                    f"{res['score']}/{res['max_score']}: full marks need no bonus"
                    + (f"; failing: {', '.join(t for t in failing if not ex.part_of(t).bonus)}" if not ok else ""))
    if label == "first group":
        return (res["score"] > 0 and not res["build_logs"],
                f"with only the suggested order's first group written ({', '.join(ex.order[0])}; stubs elsewhere) "
                f"it scores {res['score']}/{res['max_score']}{bonus} (must be more than 0: the order shows progress)")
    if label == "reference":
        return full, f"reference scores {res['score']}/{res['max_score']}{bonus}" + (
            f"; failing: {', '.join(failing[:8])}" + (f" and {len(failing) - 8} more" if len(failing) > 8 else "")
            if failing else "")
    named = head["caught by"]
    others = [n for n in failing if n != named]
    return (not full and named in failing,
            f"{label} ({head.get('what', '')}) scores {res['score']}/{res['max_score']}{bonus}: "
            + (f"caught by {named}" if named in failing else f"NOT caught by {named}, the test named to catch it")
            + (f" and {len(others)} more" if others and named in failing else "")
            + ("" if failing else "; NOT caught by any test"))


def check_row(ex, label, want, res, ok, head):
    """A candidate's row of check.json (the mutant table is made from them)."""
    failing = [t["name"] for t in res["tests"] if t["status"] != "passed"]
    return {"candidate": label, "expected": want, "score": res["score"], "max_score": res["max_score"],
            "bonus": res["bonus"], "bonus_max": res["bonus_max"], "failing": failing, "ok": ok,
            "first_failing": res["first_failing"], "first": res["first"], "table_cells": ex.table_cells(head),
            **({"what": head.get("what", ""), "point": head.get("point", ""), "region": head.get("region", ""),
                "named": head["caught by"], "undefined": head.get("undefined", "") != "",
                "varies": head.get("varies", ""),
                "order": head["order"]} if head else {})}


def grade_candidates(ex, cands, verdict, fast, jobs, log):
    """Grades each candidate in the check's cells -> the rows of check.json.
    The reference runs in every cell a mutant is caught in, so that what
    catches a mutant there is known not to fail the reference."""
    repeat, seed = (1 if fast else ex.repeat), check_seed(ex)
    every = " ".join(CELLS[c][1] for _, _, _, h in cands if h for c in mutant_cells(h))
    rows = []
    for label, cand, want, head in cands:
        cells = ex.cells(fast, {"caught in": every} if label == "reference" else head)
        res = grade(ex, cand, cells, repeat, seed, "check", jobs=jobs, quiet=True,
                    first_cells=ex.table_cells(head), env=CHECK_ENV)
        ok, what = candidate_verdict(ex, label, res, head)
        if label == "reference":
            for b in res["build_logs"]:
                log(b)
        rows.append(check_row(ex, label, want, res, ok, head))
        verdict(ok, what)
    return rows


def check_one(ex, fast, jobs, log=print, sample=False, mutants=True):
    """-> (passed, failed, rows) for one exercise. sample: only
    sample_mutants(ex), and the README's mutant table is not compared (a
    sample cannot say the whole table is this run's)."""
    verdict = Verdicts(log)
    log(f"check-exercises: step {ex.step} ({ex.name}): {ex.title}")
    names = check_static(ex, verdict)
    work = tempfile.mkdtemp(prefix="soloist-check-")
    try:
        cands = base_candidates(ex, verdict, work, sample)
        if mutants:
            cands += mutant_candidates(ex, verdict, work, fast, sample, names)
        rows = grade_candidates(ex, cands, verdict, fast, jobs, log)
        if not sample:
            rerun_differing_rows(ex, rows, {label: (cand, head) for label, cand, _, head in cands},
                                 check_seed(ex), jobs, log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if sample and not mutants:
        log(f"  (no mutant run: `make check-exercises` runs all {len(ex.mutants())}, compares the README's mutant "
            "table" + (" and grades the suggested order's first group alone)" if ex.order else ")"))
        return verdict.passed, verdict.failed, rows
    if sample:
        log(f"  (a sample: {len(sample_mutants(ex))} of {len(ex.mutants())} mutants, one per part; "
            "`make check-exercises` runs them all, compares the README's mutant table"
            + (" and grades the suggested order's first group alone)" if ex.order else ")"))
        return verdict.passed, verdict.failed, rows
    doc = {"step": ex.step, "cells": ex.cells(fast), "repeat": 1 if fast else ex.repeat, "seed": check_seed(ex),
           "fingerprint": fingerprint(ex), "rows": rows}
    why = readme_mutants_problem(ex, doc)
    verdict(why is None, "README.md's mutant table is this run's" + (f": {why}" if why else ""))
    table = check_path(ex)
    os.makedirs(os.path.dirname(table), exist_ok=True)
    with open(table, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
    return verdict.passed, verdict.failed, rows


def mutant_order(ex, path, head):
    """Where a mutant sits, for the table's order: the part of its first
    region, then the module and the line its first edit replaces."""
    first = re.split(r"[,\s]+", head.get("region", "").strip())[0]
    part = next((i for i, p in enumerate(ex.parts) if first in p.regions), len(ex.parts))
    where, line = 0, 0
    with open(path, encoding="utf-8") as f:
        m = re.search(r"^@@@ find\n(.*?)^@@@ replace\n", f.read(), re.M | re.S)
    for i, mod in enumerate(ex.modules):
        with open(ex.module_path(mod), encoding="utf-8") as f:
            text = f.read()
        if m and m.group(1) in text:
            where, line = i, text[:text.index(m.group(1))].count("\n") + 1
            break
    return [part, where, line]


def check_seed(ex):
    return 1000 + ex.step


def check_path(ex):
    return os.path.join(ex.root, "build", "grade", ex.nn, "check.json")


def exercise_regions(ex):
    """The names of ex's exercise regions in all of its modules, in order
    (not another exercise's, in a module two steps write)."""
    out = []
    theirs = others_regions(ex)
    for m in ex.modules:
        with open(ex.module_path(m), encoding="utf-8") as f:
            regions, _ = anchors.scan_markers(m, text=f.read(), rel=m)
        out += [r.name for r in sorted(regions.values(), key=lambda r: r.open_line)
                if r.kind == "exercise" and r.name not in theirs]
    return out


def others_regions(ex):
    """The regions that another exercise's parts name in a module ex writes
    too (src/io_offload.c: step 4's hand-off, step 9's blocked-read rule):
    each exercise stubs and claims only its own."""
    return {r for o in exercises(ex.root) if o.dir != ex.dir and set(o.modules) & set(ex.modules)
            for p in o.parts for r in p.regions}


def parts_problem(ex, names, regions):
    """-> why the parts do not share out the regions and the tests, or None."""
    claimed = [r for p in ex.parts for r in p.regions]
    if len(ex.parts) > 1 or ex.parts[0].regions:
        twice = sorted({r for r in claimed if claimed.count(r) > 1})
        if twice:
            return f"regions in two parts: {', '.join(twice)}"
        unknown = [r for r in claimed if r not in regions]
        if unknown:
            return f"no such region in {', '.join(ex.modules)}: {', '.join(unknown)}"
        left = [r for r in regions if r not in claimed]
        if left:
            return f"regions in no part: {', '.join(left)}"
    loose = [n for n in names if ex.part_of(n) is None]
    if loose:
        return f"tests in no part: {', '.join(loose[:6])}"
    if all(p.bonus for p in ex.parts):
        return "every part is a bonus"
    return None


def fingerprint(ex):
    """sha256 over what a check run depends on: the module, the graded
    files and the mutants."""
    h = hashlib.sha256()
    for p in [ex.module_path(m) for m in ex.modules] + [os.path.join(ex.root, f) for f in ex.graded_files()] + ex.mutants():
        h.update(os.path.relpath(p, ex.root).encode() + b"\0")
        h.update(sha256_file(p).encode() if os.path.isfile(p) else b"missing")
    return h.hexdigest()


MUTANTS_BEGIN = "<!-- mutants:begin (generated by `make exercise-points STEP=N` from the last `make check-exercises`; do not edit) -->"
MUTANTS_END = "<!-- mutants:end -->"


def mutant_row(r):
    """One mutant's line of the README's table, from its check row."""
    best = r["max_score"] + r["bonus_max"]
    got = r["first"]["score"] + r["first"]["bonus"]
    fails = r["first_failing"]
    named = r.get("named", "")
    caught = f"`{named}`" if named in fails else f"**not** `{named}`"
    others = len([n for n in fails if n != named])
    if r.get("undefined"):
        # A mutant with undefined behaviour (a use after free): what else
        # fails depends on the allocator's timing, so only the named test
        # is part of the table, and the points it costs at the least.
        caught += " (what else fails is undefined behaviour, and varies)"
    elif r.get("varies"):
        # Defined behaviour, but whether another test reaches the broken
        # line depends on how a write splits or when a worker runs.
        caught += f" (what else fails varies: {r['varies']})"
    elif others:
        caught += f" and {others} other test{'s' if others > 1 else ''}"
    extra = [CELLS[c][1] for c in r.get("table_cells", ["o2"]) if c != "o2"]
    if extra:
        caught += f" (under {', '.join(extra)})"
    cell = lambda x: x.replace("|", "\\|")  # noqa: E731
    lost = "varies" if r.get("undefined") or r.get("varies") else f"{best - got}"
    return f"| `{r['candidate'][7:]}` | {cell(r.get('point', ''))} | {cell(r.get('what', ''))} | {caught} | {lost} |"


RERUNS = 2


def rerun_differing_rows(ex, rows, cands, seed, jobs, log):
    """A mutant's own test fails it every run, but what else fails can
    hang on timing (a counter a background decision moves, a deadline
    under load): its table row may differ from the README's in one run
    and not the next. A row that differs is run again (its first cells
    only, up to RERUNS times); a rerun that gives the README's row stands
    for it, and the log says the row varies. A row no rerun reproduces
    stays as it came, and the table check fails on it."""
    got = readme_section(ex, MUTANTS_BEGIN, MUTANTS_END) or ""
    readme = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w.-]+)` \|.*\|$", got, re.M)}
    for r in rows:
        name = r["candidate"][7:] if r["candidate"].startswith("mutant ") else None
        if name is None or name not in readme or mutant_row(r) == readme[name]:
            continue
        cand, head = cands[r["candidate"]]
        first = mutant_row(r)
        for attempt in range(1, RERUNS + 1):
            res = grade(ex, cand, ex.table_cells(head), 1, seed, "check", jobs=jobs, quiet=True,
                        first_cells=ex.table_cells(head), env=CHECK_ENV)
            trial = dict(r, first=res["first"], first_failing=res["first_failing"])
            if mutant_row(trial) == readme[name]:
                log(f"  note mutant {name}: its row varies between runs (run 1 lost "
                    f"{first.rsplit('|', 2)[1].strip()} points, rerun {attempt} the README's "
                    f"{readme[name].rsplit('|', 2)[1].strip()}): what fails beside its own test hangs on timing")
                r.update(first=res["first"], first_failing=res["first_failing"])
                break


def mutants_table(ex, doc):
    """The README's table of mutants, from a check run (check_one's doc).
    Only the first -O2 run counts (and, for a mutant whose `caught in`
    names TSan, its first TSan run): the runs every mode of the check
    makes, so the table does not depend on FAST."""
    rows = sorted((r for r in doc["rows"] if r["candidate"].startswith("mutant ")),
                  key=lambda r: (r.get("order", []), r["candidate"]))
    total = rows[-1]["max_score"] + rows[-1]["bonus_max"] if rows else None
    out = [MUTANTS_BEGIN, ""]
    md = ["| mutant | where it breaks | the mistake | caught by | points lost |", "|---|---|---|---|---:|"]
    md += [mutant_row(r) for r in rows]
    out.append(f"{len(rows)} mutants, each a plausible wrong solution that `make check-exercises` proves the tests "
               f"reject. \"Caught by\" names the test written to catch it (the mutant's `# caught by:` line) and "
               f"counts the others that fail too; points lost are out of {total if total is not None else 0} "
               f"(bonus included), in the check's first -O2 run"
               + (", and its first TSan run for a mutant caught under TSan" if any(
                   "tsan" in r.get("table_cells", []) for r in rows) else "")
               + f" (seed {doc['seed'] if 'seed' in doc else check_seed(ex)}).")
    out += [""] + md + ["", MUTANTS_END]
    return "\n".join(out)


def readme_section(ex, begin, end):
    p = os.path.join(ex.dir, "README.md")
    if not os.path.isfile(p):
        return None
    with open(p, encoding="utf-8") as f:
        text = f.read()
    if begin not in text or end not in text:
        return None
    return text[text.index(begin):text.index(end) + len(end)]


def write_readme_section(ex, begin, end, table, heading):
    p = os.path.join(ex.dir, "README.md")
    with open(p, encoding="utf-8") as f:
        text = f.read()
    if begin in text and end in text:
        text = text[:text.index(begin)] + table + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + f"\n\n## {heading}\n\n" + table + "\n"
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)


def write_workflow(ex):
    """Writes the workflow section: in place, or the first time as its own
    section before "How it is graded" (or "Points")."""
    if readme_section(ex, WORKFLOW_BEGIN, WORKFLOW_END) is not None:
        write_readme_section(ex, WORKFLOW_BEGIN, WORKFLOW_END, workflow_section(ex), "")
        return
    p = os.path.join(ex.dir, "README.md")
    with open(p, encoding="utf-8") as f:
        text = f.read()
    block = "## Where you write, and how you grade it\n\n" + workflow_section(ex) + "\n\n"
    for head in ("## How it is graded", "## Points"):
        if "\n" + head in text:
            i = text.index("\n" + head) + 1
            text = text[:i] + block + text[i:]
            break
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)


CONTRACT_BEGIN = "<!-- contract:begin -->"
CONTRACT_END = "<!-- contract:end -->"


def contract_rows(ex):
    """The README's contract table: [{"id", "line", "tests", "mutants"}], or
    None when the README has none. Its columns: an id (C1, C2 …), the
    contract line, the tests that fail when the line is broken ("checked
    by"), and the mutants that break that line alone ("broken by")."""
    got = readme_section(ex, CONTRACT_BEGIN, CONTRACT_END)
    if got is None:
        return None
    rows = []
    for line in got.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) < 4 or not re.fullmatch(r"C\d+", cells[0]):
            continue
        rows.append({"id": cells[0], "line": cells[1],
                     "tests": re.findall(r"`(test_\w+)`", cells[-2]),
                     "mutants": re.findall(r"`([\w.-]+)`", cells[-1])})
    return rows


def contract_problems(ex):
    """Why the contract table and the tests do not match both ways: every
    test checks some line of the contract, every line is checked by a test
    and broken by a mutant of its own, caught by one of the line's tests."""
    rows = contract_rows(ex)
    if rows is None:
        return [f"README.md has no contract table ({CONTRACT_BEGIN} … {CONTRACT_END})"]
    if not rows:
        return ["README.md's contract table has no rows (| C1 | line | `test_…` | `mutant` |)"]
    names = set(ex.test_names())
    mutants = {os.path.splitext(os.path.basename(m))[0]: mutant_header(m) for m in ex.mutants()}
    out = []
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        out.append("contract ids used twice: " + ", ".join(sorted({i for i in ids if ids.count(i) > 1})))
    for r in rows:
        if not r["tests"]:
            out.append(f"{r['id']} is checked by no test")
        for t in r["tests"]:
            if t not in names:
                out.append(f"{r['id']} names {t}, which is not a test of this step")
        if not r["mutants"]:
            out.append(f"{r['id']} is broken by no mutant")
        for m in r["mutants"]:
            head = mutants.get(m)
            if head is None:
                out.append(f"{r['id']} names mutant {m}, which is not in mutants/")
            elif head.get("caught by") not in r["tests"]:
                out.append(f"{r['id']}'s mutant {m} is caught by {head.get('caught by')}, not by a test of {r['id']}")
            elif head.get("contract") and head["contract"] != r["id"]:
                out.append(f"mutant {m} says it breaks {head['contract']} but the table lists it under {r['id']}")
    for m, head in sorted(mutants.items()):
        if head.get("contract") and head["contract"] not in ids:
            out.append(f"mutant {m} says it breaks {head['contract']}, which is not a line of the contract")
    unchecked = sorted(names - {t for r in rows for t in r["tests"]})
    if unchecked:
        out.append("tests that check no line of the contract: " + ", ".join(unchecked))
    return out


def readme_mutants_problem(ex, doc):
    got = readme_section(ex, MUTANTS_BEGIN, MUTANTS_END)
    if got is None:
        return f"README.md has no mutant table; run `make exercise-points STEP={ex.key}` to write this run's"
    if got != mutants_table(ex, doc):
        return f"README.md's mutant table is out of date; run `make exercise-points STEP={ex.key}` to write this run's"
    return None


def cmd_check(root, args):
    if os.path.isfile(os.path.join(root, HANDOUT_MARKER)):
        print("check-exercises: skipped: this is a handout tree, which holds neither the reference solutions nor the "
              "mutants this check grades; `make grade STEP=N` grades your work here")
        print("check-exercises: 0 passed, 0 failed")
        return 0
    exs = exercises(root)
    if args.step is not None:
        exs = [find_exercise(root, args.step)]
    if not exs:
        print("check-exercises: no exercises/NN-*/exercise.json yet")
    t0 = time.time()
    passed = failed = 0
    for ex in exs:
        p, f, _ = check_one(ex, args.fast, args.jobs, sample=args.sample or args.no_mutants,
                            mutants=not args.no_mutants)
        passed += p
        failed += f
    mode = ("fast: -O2, one run" if args.fast else "full matrix") + (", no mutants" if args.no_mutants else ", one mutant per part" if args.sample else "")
    print(f"check-exercises: {len(exs)} exercise(s), {mode}, {time.time() - t0:.0f}s")
    print(f"check-exercises: {passed} passed, {failed} failed")
    return 1 if failed else 0


def cmd_manifest(root, args):
    ex = find_exercise(root, args.step)
    lines = manifest_lines(ex)
    text = (f"# sha256 of every file that grades step {ex.key}; `make grade` refuses to grade if one differs.\n"
            f"# Rewrite with `make exercise-manifest STEP={ex.key}` after a deliberate change.\n"
            + "\n".join(lines) + "\n")
    if args.write:
        with open(ex.manifest_path(), "w", encoding="utf-8") as f:
            f.write(text)
        print(f"exercise: wrote {ex.rel('tests.sha256')} ({len(lines)} files)")
    else:
        sys.stdout.write(text)
    return 0


POINTS_BEGIN = "<!-- points:begin (generated by `make exercise-points STEP=N`; do not edit) -->"
POINTS_END = "<!-- points:end -->"


def points_table(ex):
    names = ex.test_names()
    total = sum(ex.points_for(n) for n in names)
    if len(ex.parts) > 1:
        shares = []
        for part in ex.parts:
            pts = sum(ex.points_for(n) for n in names if ex.part_of(n) is part)
            shares.append(f"{part.name} {pts}" + (" (a bonus, not needed for full marks)" if part.bonus else ""))
        head = f"{len(names)} tests, {total} points: {', '.join(shares)}."
        rows = ["| test | part | points |", "|---|---|---:|"]
        rows += [f"| `{n}` | {ex.part_of(n).name} | {ex.points_for(n)} |" for n in names]
    else:
        head = f"{len(names)} tests, {total} points."
        rows = ["| test | points |", "|---|---:|"]
        rows += [f"| `{n}` | {ex.points_for(n)} |" for n in names]
    return "\n".join([POINTS_BEGIN, "", head + " A test earns its points only if it passes in every run of the matrix.",
                      ""] + rows + ["", POINTS_END])


WORKFLOW_BEGIN = "<!-- workflow:begin (generated by `make exercise-points STEP=N`; do not edit) -->"
WORKFLOW_END = "<!-- workflow:end -->"


def workflow_section(ex):
    """How a learner works on ex, in either tree: the same words in every
    exercise README and in a handout's exercises/HANDOUT."""
    mods = ", ".join(f"`{m}`" for m in ex.modules)
    work = ", ".join(f"`{os.path.relpath(ex.work_copy(m), ex.root)}`" for m in ex.modules)
    cells = ", ".join(CELLS[c][1] for c in ex.cells(False))
    threads = (" once single-threaded and then at io-threads 2 and 4 with the threads forced on"
               if ex.concurrent else " single-threaded")
    return "\n".join([
        WORKFLOW_BEGIN, "",
        f"- **From a handout** (what a course gives you: `make handout STEP={ex.key}` in the full tree cuts it):",
        f"  {mods} {'is' if len(ex.modules) == 1 else 'are'} your starter; write the marked regions in place.",
        f"  Every other step's code there is the reference, so your grade depends only on step {ex.key}.",
        "  `make exercise` refuses in a handout (it would make a starter of the starter).",
        f"- **In the full soloist tree**: `make exercise STEP={ex.key}` writes {work}; write there,",
        "  and `src/` stays the reference.",
        "",
        "Then, in either tree:",
        "",
        "```sh",
        f"make grade STEP={ex.key} FAST=1          # one -O2 run while you work",
        f"make grade STEP={ex.key}                 # the matrix: {cells}, "
        f"{'each run twice' if ex.repeat == 2 else f'each run {ex.repeat} times'}",
        f"make grade STEP={ex.key} INTEGRATION=1   # then the integration suite on the server built from your code",
        "```",
        "",
        f"`INTEGRATION=1` runs tests/integration/ against that server{threads}.",
        "A failed test says why under its line: the test's assertion (file, line and values), a stub's",
        "\"not written yet\" and whose region it is, a crash's signal and place (function, file and line), a",
        "sanitizer's first report lines, or a leak with the frames that allocated it.",
        "The same text is in each test's `output` in build/grade/NN/results.json (Gradescope's format).",
        "", WORKFLOW_END])


def readme_points_problem(ex):
    if not os.path.isfile(os.path.join(ex.dir, "README.md")):
        return "README.md is missing"
    got = readme_section(ex, POINTS_BEGIN, POINTS_END)
    if got is None:
        return f"README.md has no points table; run `make exercise-points STEP={ex.key}`"
    if got != points_table(ex):
        return f"README.md's points table is out of date; run `make exercise-points STEP={ex.key}`"
    if readme_section(ex, WORKFLOW_BEGIN, WORKFLOW_END) != workflow_section(ex):
        return f"README.md's workflow section is missing or out of date; run `make exercise-points STEP={ex.key}`"
    return None


def last_check(ex):
    """The last check run's results, if they are for today's module, tests
    and mutants; else None."""
    try:
        with open(check_path(ex), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if doc.get("fingerprint") == fingerprint(ex) else None


def cmd_points(root, args):
    ex = find_exercise(root, args.step)
    table = points_table(ex)
    doc = last_check(ex)
    if not args.write:
        print(table)
        if doc:
            print("\n" + mutants_table(ex, doc))
        return 0
    write_readme_section(ex, POINTS_BEGIN, POINTS_END, table, "Points")
    write_workflow(ex)
    print(f"exercise: wrote the points table and the workflow section into {ex.rel('README.md')}")
    if doc:
        write_readme_section(ex, MUTANTS_BEGIN, MUTANTS_END, mutants_table(ex, doc), "Mutants")
        print(f"exercise: wrote the mutant table of the last check run into {ex.rel('README.md')}")
    elif ex.mutants():
        print(f"exercise: no check run of today's module, tests and mutants: run "
              f"`make check-exercises STEP={ex.key}`, then this again, to write the mutant table")
    return 0


def strip_answers(text):
    """notes.md without its folded answers."""
    return re.sub(r"<details>.*?</details>", "<details><summary>Answer</summary>"
                  "(removed from the handout: the answers are in the full soloist tree)</details>",
                  text, flags=re.S | re.I)


def handout_files(root):
    try:
        r = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z"],
                           capture_output=True, timeout=60)
        files = [f for f in r.stdout.decode().split("\0") if f] if r.returncode == 0 else None
    except OSError:
        files = None
    if files is None:
        raise ExerciseError("handout needs a git checkout (it copies the files git knows)")
    out = []
    for f in files:
        parts = f.split("/")
        if parts[0] in ("build", ".git"):
            continue
        if len(parts) >= 3 and parts[0] == "exercises" and parts[2] in ("mutants", "work"):
            continue  # mutants show the reference around each bug; work/ is someone's answer
        if os.path.isfile(os.path.join(root, f)):
            out.append(f)
    return sorted(out)


HANDOUT_NOTE = """\
This tree is soloist's handout for step {step}: {title}.
step: {step}

What you write: the marked regions of {modules} (each `/*@ exercise: NAME */`
region is a stub that aborts until you write it). The exercise is
exercises/{name}/README.md; the chapter is {chapter}. The tests are
protected by exercises/*/tests.sha256; notes.md has its answers folded out.

Read the chapter rendered: `make book` (a minute or two) writes the book
into build/book/; open build/book/{page} (this exercise:
build/book/{ex_page}). The book is rendered from this tree, so its code
listings show your regions as you have written them (stubs until then),
its figures and plots are drawn, and every {{{{finding}}}} is the measured
row it cites. The markdown in chapters/ is the same text unrendered.

{workflow}

What grades your work is `make grade STEP={step}` (and `INTEGRATION=1`),
not `make test`: that is the full soloist tree's own suite. Here it runs
what your code can pass and says what it skips: the chapters' citations
of your own files (the prose was read against the reference's code, so
any other correct code differs from it), and the exercise and handout
checks, which need the reference and the mutants. The style check
passes once `make format` has laid out your code.

For teachers: `make handout STEP=N` in the full soloist tree cuts the
handout for week N (step N's regions blank, every other step's code the
reference, so week N's grade depends only on week N's work); `make handout`
cuts one for every step; `make check-handouts` proves each one grades its
step on its own. Give each week its own tree.
"""


def book_page(chapter):
    """The book's page for a chapter (tools/book/build.py names each page
    after its markdown file)."""
    return os.path.splitext(os.path.basename(chapter))[0] + ".html" if chapter else "index.html"


def handout_step(root):
    """The step a handout tree is cut for, None outside a handout."""
    p = os.path.join(root, HANDOUT_MARKER)
    if not os.path.isfile(p):
        return None
    with open(p, encoding="utf-8") as f:
        m = re.search(r"^step: (\w+)$", f.read(), re.M)
    return m.group(1) if m else "?"


def write_handout(root, ex, out, files, tar=True, starters=None):
    """One step's handout: the tree git knows, with ex's modules replaced by
    their starters (starters: given, else built) and notes.md without its
    answers; tar: and its .tar.gz beside it (-> its path, else None)."""
    if os.path.exists(out):
        if not os.path.isfile(os.path.join(out, HANDOUT_MARKER)):
            raise ExerciseError(f"{out} exists and is not a handout; remove it first")
        shutil.rmtree(out)
    for f in files:
        dest = os.path.join(out, f)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(os.path.join(root, f), dest)
    for m, starter in (starters or build_starters(ex)).items():
        with open(os.path.join(out, m), "w", encoding="utf-8") as f:
            f.write(starter)
    notes = os.path.join(out, "notes.md")
    if os.path.isfile(notes):
        with open(notes, encoding="utf-8") as f:
            text = f.read()
        with open(notes, "w", encoding="utf-8") as f:
            f.write(strip_answers(text))
    os.makedirs(os.path.join(out, "exercises"), exist_ok=True)
    with open(os.path.join(out, HANDOUT_MARKER), "w", encoding="utf-8") as f:
        wf = workflow_section(ex).split("\n")[1:-1]  # without the markers
        f.write(HANDOUT_NOTE.format(step=ex.key, title=ex.title, name=ex.name, chapter=ex.chapter or "its chapter",
                                    modules=", ".join(ex.modules), workflow="\n".join(wf).strip(),
                                    page=book_page(ex.chapter), ex_page=f"exercise-{ex.name}.html"))
    if not tar:
        return None
    tar = out.rstrip("/") + ".tar.gz"
    with tarfile.open(tar, "w:gz") as t:
        t.add(out, arcname=os.path.basename(out))
    return tar


def cmd_handout(root, args):
    if handout_step(root) is not None:
        raise ExerciseError("this tree is a handout already; cut handouts from the full soloist tree")
    base = os.path.abspath(args.out or os.path.join(root, "build", "handout"))
    exs = [find_exercise(root, args.step)] if args.step is not None else exercises(root)
    files = handout_files(root)
    for ex in exs:
        out = os.path.join(base, f"soloist-step-{ex.nn}")
        tar = write_handout(root, ex, out, files)
        print(f"handout: step {ex.step} ({ex.title}): {os.path.relpath(out, root)}/ and "
              f"{os.path.relpath(tar, root)}; the learner writes {', '.join(ex.modules)}, every other step's "
              "code is the reference")
    return 0


def cmd_contract(root, args):
    ex = find_exercise(root, args.step)
    rows = contract_rows(ex) or []
    for r in rows:
        print(f"{r['id']}: checked by {', '.join(r['tests']) or '-'}; broken by {', '.join(r['mutants']) or '-'}")
    bad = contract_problems(ex)
    for b in bad:
        print(f"contract: FAIL {b}")
    print(f"contract: step {ex.step}: {len(rows)} lines, {len(bad)} problems")
    return 1 if bad else 0


def why_failed(res, names):
    """The output of the first test named (a grade's result), for a FAIL
    line: the test's name, then its last lines."""
    for t in res["tests"]:
        if t["name"] in names:
            return f"{t['name']}:\n" + _tail(t.get("output") or t["status"], 10)
    return ""


def handout_structure(root, ex, out, files, every, verdict):
    """Cuts ex's handout into out (no .tar.gz: packing the whole tree is
    what `make handout` adds, and it took most of this check's time) and
    checks that it is the full tree but for ex's starters and notes.md,
    marked for ex, with every exercise's manifest holding."""
    starters = build_starters(ex)
    write_handout(root, ex, out, files, tar=False, starters=starters)
    differ = []
    for f in files:
        with open(os.path.join(root, f), "rb") as a, open(os.path.join(out, f), "rb") as b:
            want = starters[f].encode() if f in starters else a.read()
            if f == "notes.md":
                want = strip_answers(want.decode("utf-8")).encode("utf-8")
            if b.read() != want:
                differ.append(f)
    verdict(not differ, f"the handout is the full tree but for {', '.join(ex.modules)} (starters) and notes.md"
            + (f"; also differs: {', '.join(differ[:5])}" if differ else ""))
    verdict(handout_step(out) == ex.key, f"it is marked as cut for step {ex.key}")
    h_exs = exercises(out)
    bad = [p for e in h_exs for p in verify_manifest(e)]
    if len(h_exs) != len(every):
        bad.insert(0, f"it holds {len(h_exs)} of the {len(every)} exercises")
    verdict(not bad, "every exercise's tests match its tests.sha256 there" + (f": {bad[0]}" if bad else ""))


def _grade_in_place(hx, label, seed, jobs):
    """Grades the handout's own modules as a learner does (-O2 once) -> (res, seconds)."""
    t1 = time.time()
    res = grade(hx, Candidate(label, {m: hx.module_path(m) for m in hx.modules}), ["o2"], 1, seed,
                "submission", jobs=jobs, quiet=True)
    return res, time.time() - t1


def handout_e2e(ex, out, base, jobs, verdict):
    """In ex's handout at out: the bare starter scores zero with each
    failure's reason shown, a wrong solution loses the points of the test
    written to catch it, the reference's regions written in score full
    marks; prints the time each grade took."""
    hx = find_exercise(out, ex.key)
    seed = check_seed(ex)
    res, times = _grade_in_place(hx, "starter", seed, jobs)
    times = {"starter": times}
    # why each test failed: the learner's own stub, or the test's
    # assertion (a stub that aborts in a child the test forked);
    # never another step's stub, never no reason at all
    silent = [t["name"] for t in res["tests"] if t["status"] != "passed"
              and ("[NOT yours" in t["output"] or not ("[your region" in t["output"]
                                                       or re.search(r"\.[ch]:\d+: error", t["output"])))]
    free = [t["name"] for t in res["tests"] if t["status"] == "passed" and t["max_score"] > 0]
    verdict(res["score"] == 0 and res["bonus"] == 0 and not silent,
            f"the bare starter, graded in place, scores {res['score']}/{res['max_score']} (must be 0), "
            f"each failure showing the learner's own stub or the test's assertion"
            + (f"; passes on the starter: {', '.join(free[:4])}" if free else "")
            + (f"; not shown for {', '.join(silent[:4])}" if silent else ""),
            why=why_failed(res, silent or free))
    # a wrong solution, as a learner might write it: the first sample
    # mutant that a plain -O2 run catches (not one only a sanitizer sees),
    # written into the handout's own module
    wrong = [m for m in sample_mutants(ex) + ex.mutants() if not mutant_header(m).get("caught in")][:1]
    if wrong:
        name = os.path.splitext(os.path.basename(wrong[0]))[0]
        for m, path in apply_mutant(ex, wrong[0], os.path.join(base, "wrong-" + ex.nn)).items():
            shutil.copyfile(path, hx.module_path(m))
        res, times["wrong"] = _grade_in_place(hx, "wrong", seed, jobs)
        named = mutant_header(wrong[0]).get("caught by")
        failing = [t["name"] for t in res["tests"] if t["status"] != "passed"]
        verdict(res["score"] < res["max_score"] and named in failing,
                f"a wrong solution ({name}), graded in place: {res['score']}/{res['max_score']}, "
                f"{named} failing as it must" + ("" if named in failing else f"; {named} passed"))
    for m in hx.modules:  # the learner writes every region: the reference text
        shutil.copyfile(ex.module_path(m), hx.module_path(m))
    res, times["reference"] = _grade_in_place(hx, "reference", seed, jobs)
    failing = [t["name"] for t in res["tests"] if t["status"] != "passed"]
    verdict(res["score"] == res["max_score"],
            f"with step {ex.key}'s regions written, graded in place: {res['score']}/{res['max_score']}"
            + (f"; failing: {', '.join(failing[:4])}" if failing else ""), why=why_failed(res, failing))
    print("  grade times (make grade FAST=1, -O2 once): " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()))


def cmd_check_handouts(root, args):
    """Proves that a handout grades its step on its own: for each step, the
    handout cut for it differs from the full tree only in that step's
    modules (their starters) and notes.md (answers folded out), its test
    manifests hold, and, end to end (every step with --e2e, else the steps
    named by --e2e-step), the bare starter scores zero with each stub's own
    message shown, a wrong solution (the step's first sample mutant)
    loses the points of the test written to catch it, and the step's
    reference regions written in score full marks, each graded in place
    as a learner grades them, with the time each grade took."""
    if handout_step(root) is not None:
        raise ExerciseError("check-handouts runs in the full soloist tree")
    every = exercises(root)
    exs = [find_exercise(root, args.step)] if args.step is not None else every
    e2e = {find_exercise(root, x).key for x in (args.e2e_step or [])}
    base = os.path.join(root, "build", "handout-check")
    files = handout_files(root)
    counts = {"passed": 0, "failed": 0}

    def verdict(ok, what, why=""):
        counts["passed" if ok else "failed"] += 1
        print(f"  {'ok  ' if ok else 'FAIL'} {what}")
        if not ok and why:  # the first test's own lines, so a log's excerpt says why
            print("\n".join("        " + l[:300] for l in why.splitlines()[:12]))

    for ex in exs:
        print(f"check-handouts: step {ex.step} ({ex.name})")
        out = os.path.join(base, f"soloist-step-{ex.nn}")
        t0 = time.time()
        handout_structure(root, ex, out, files, every, verdict)
        if args.e2e or ex.key in e2e:
            handout_e2e(ex, out, base, args.jobs, verdict)
        print(f"  ({time.time() - t0:.0f} s)")
        shutil.rmtree(out, ignore_errors=True)
        if os.path.exists(out + ".tar.gz"):
            os.remove(out + ".tar.gz")
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    return 1 if counts["failed"] else 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/exercise.py", description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start", help="write the learner's starter copy")
    s.add_argument("step")
    s.add_argument("--out")
    s.add_argument("--force", action="store_true")
    s.set_defaults(fn=cmd_start)
    s = sub.add_parser("grade", help="grade a learner's copy")
    s.add_argument("step")
    s.add_argument("--submission")
    s.add_argument("--seed", type=int)
    s.add_argument("--repeat", type=int)
    s.add_argument("--fast", action="store_true", help="-O2 only, one run")
    s.add_argument("--results", help="also write the JSON here (e.g. /autograder/results/results.json)")
    s.add_argument("--integration", action="store_true",
                   help="then run the integration suite against the graded -O2 server")
    s.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2))
    s.set_defaults(fn=cmd_grade)
    s = sub.add_parser("check", help="starter fails, reference passes, mutants caught")
    s.add_argument("--step")
    s.add_argument("--fast", action="store_true")
    s.add_argument("--no-mutants", action="store_true", help="the checks without the mutants (make test): "
                   "the static checks, the starter and the reference")
    s.add_argument("--sample", action="store_true", help="one mutant per part; the README's mutant "
                   "table is not compared")
    s.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2))
    s.set_defaults(fn=cmd_check)
    s = sub.add_parser("manifest", help="print (or --write) the hash manifest")
    s.add_argument("step")
    s.add_argument("--write", action="store_true")
    s.set_defaults(fn=cmd_manifest)
    s = sub.add_parser("points", help="print (or --write into README.md) the generated tables: points, "
                       "and mutants from the last check run")
    s.add_argument("step")
    s.add_argument("--write", action="store_true")
    s.set_defaults(fn=cmd_points)
    s = sub.add_parser("contract", help="check the README's contract table against the tests and mutants")
    s.add_argument("step")
    s.set_defaults(fn=cmd_contract)
    s = sub.add_parser("check-handouts", help="prove each step's handout grades that step on its own")
    s.add_argument("--step")
    s.add_argument("--e2e", action="store_true", help="grade the starter and the reference in every handout")
    s.add_argument("--e2e-step", action="append", help="grade them in this step's handout (repeatable)")
    s.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2))
    s.set_defaults(fn=cmd_check_handouts)
    s = sub.add_parser("handout", help="write a learner's tree for step STEP (default: one for every step)")
    s.add_argument("--step")
    s.add_argument("--out", help="the directory the trees go in (default build/handout)")
    s.set_defaults(fn=cmd_handout)
    args = ap.parse_args(argv)
    try:
        return args.fn(os.path.abspath(args.root), args)
    except ExerciseError as e:
        print(f"exercise: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
