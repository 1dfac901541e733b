"""tools/anchors.py: markers, citations in markdown, the lock, `check`."""

import os
import subprocess
import sys
import tempfile
import unittest

from fixtures import TOOLS, Upstream, make_repo, write, write_pins

import anchors  # noqa: E402  (tools/ is on sys.path via fixtures)

SCRIPT = os.path.join(TOOLS, "anchors.py")
PINS = {"valkey": {}, "redis": {}}

SRC = """\
/* demo.c: a fixture. /*@ in a comment is not a marker unless it starts the line */
#include <stddef.h>

/*@ sum */
int demo_sum(const int *a, size_t n)
{
    int s = 0;
    /*@ exercise: sum-loop */
    for (size_t i = 0; i < n; i++)
        s += a[i];
    /*@ end */
    return s;
}
/*@ end */
"""


class Markers(unittest.TestCase):
    def test_regions(self):
        regions, errors = anchors.scan_markers("demo.c", text=SRC, rel="src/demo.c")
        self.assertEqual(errors, [])
        self.assertEqual((regions["sum"].first, regions["sum"].last, regions["sum"].kind), (5, 13, "label"))
        loop = regions["sum-loop"]
        self.assertEqual((loop.first, loop.last, loop.kind), (9, 10, "exercise"))
        self.assertEqual(loop.lines, ["    for (size_t i = 0; i < n; i++)", "        s += a[i];"])

    def check_error(self, text, fragment):
        _, errors = anchors.scan_markers("x.c", text=text, rel="src/x.c")
        self.assertTrue(any(fragment in e for e in errors), (fragment, errors))

    def test_errors(self):
        self.check_error("/*@ a */\nx\n/*@ b */\ny\n/*@ end */\n/*@ end */\n", "do not nest")
        self.check_error("/*@ exercise: a */\nx\n/*@ exercise: b */\ny\n/*@ end */\n/*@ end */\n", "do not nest")
        self.check_error("/*@ exercise: a */\nx\n/*@ b */\ny\n/*@ end */\n/*@ end */\n", "do not nest")
        self.check_error("/*@ a */\nx\n", "never closed")
        self.check_error("x\n/*@ end */\n", "no open region")
        self.check_error("/*@ a */\nx\n/*@ end */\n/*@ a */\ny\n/*@ end */\n", "already defined")
        self.check_error("/*@ a b */\n", "malformed marker")
        self.check_error("/*@ a */\n/*@ end */\n", "is empty")


class Citations(unittest.TestCase):
    def test_extract(self):
        md = """\
# Title
See `src/demo.c@sum` and `valkey:src/io_threads.c:14-16`, not `src/demo.c` nor `foo:bar:1`.

```
src/demo.c@sum-loop
```

```c
src/demo.c@not-a-citation
int x;
```

<!--
`src/demo.c@commented-out`
-->
````markdown
```
src/demo.c@inside-an-example
```
````
"""
        cites = anchors.extract_citations("ch.md", md, PINS)
        self.assertEqual([(c.line, c.text, c.form) for c in cites], [
            (2, "src/demo.c@sum", "inline"),
            (2, "valkey:src/io_threads.c:14-16", "inline"),
            (5, "src/demo.c@sum-loop", "block"),
        ])

    def test_named_identifier(self):
        md = """\
- the write handler, `sendReplyToClient`, is `valkey:src/networking.c:5-8` and
  falls back to `writeToClient`;
- the write pass in `beforeSleep`, `handleClientsWithPendingWrites`, is
  `valkey:src/networking.c:14-15`: the same list.

`valkey:src/networking.c:1` opens the file; then `main()` runs.

No name at all: `valkey:src/networking.c:2`, a `--flag` and `a b`.

The function `sendReplyToClient`:

```
valkey:src/networking.c:5-8
```
"""
        cites = anchors.extract_citations("ch.md", md, PINS)
        self.assertEqual([(c.line, c.text, c.names) for c in cites], [
            (1, "valkey:src/networking.c:5-8", "sendReplyToClient"),
            (4, "valkey:src/networking.c:14-15", "handleClientsWithPendingWrites"),
            (6, "valkey:src/networking.c:1", "main"),
            (8, "valkey:src/networking.c:2", None),
            (13, "valkey:src/networking.c:5-8", "sendReplyToClient"),
        ])

    def test_classify(self):
        self.assertEqual(anchors.classify("src/x.c@a-b.c", PINS), "label")
        self.assertEqual(anchors.classify("valkey:src/x.c:3", PINS), "upstream")
        self.assertIsNone(anchors.classify("nope:src/x.c:3", PINS))
        self.assertEqual(anchors.parse_upstream("valkey:src/x.c:3"), ("valkey", "src/x.c", 3, 3))
        self.assertEqual(anchors.parse_upstream("redis:a/b.h:3-9"), ("redis", "a/b.h", 3, 9))


class Check(unittest.TestCase):
    """`anchors.py check` and `lock` on a fixture tree, with the fixture clone as Valkey."""

    def setUp(self):
        self.up = Upstream()
        self.root = os.path.join(self.up.dir, "tree")
        write(os.path.join(self.root, "src", "demo.c"), SRC)

    def tearDown(self):
        self.up.cleanup()

    def run_tool(self, *args, clone=True):
        r = subprocess.run([sys.executable, SCRIPT, "--root", self.root, *args], capture_output=True, text=True,
                           env=self.up.env(clone=clone), timeout=60)
        return r.returncode, r.stdout + r.stderr

    def chapter(self, body, name="00-demo.md"):
        write(os.path.join(self.root, "chapters", name), body)

    def test_no_chapters(self):
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 0, out)
        self.assertIn("no chapters", out)
        self.assertIn("1 passed, 0 failed", out)

    def test_labels_resolve(self):
        self.chapter("# Demo\nSee `src/demo.c@sum`.\n\n```\nsrc/demo.c@sum-loop\n```\n")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("src/demo.c@sum: not in chapters/spans.lock", out)
        self.run_tool("lock")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 0, out)
        self.assertIn("2 label citations", out)
        self.assertIn("3 passed, 0 failed", out)

    def test_a_changed_span_names_the_paragraphs_to_reread(self):
        self.chapter("# Demo\n\nThe loop adds, `src/demo.c@sum-loop`.\n\nAgain: `src/demo.c@sum-loop`.\n"
                     "\nThe whole, `src/demo.c@sum`.\n")
        rc, out = self.run_tool("lock")
        self.assertIn("wrote chapters/spans.lock: 2 soloist spans", out)
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 0, out)
        write(os.path.join(self.root, "src", "demo.c"), SRC.replace("s += a[i];", "s -= a[i];"))
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("src/demo.c@sum-loop: the code changed since the prose about it was read", out)
        self.assertIn("re-read chapters/00-demo.md:3, chapters/00-demo.md:5", out)
        self.assertIn("src/demo.c@sum: the code changed", out)
        self.run_tool("lock")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 0, out)
        # a span no prose cites any more is pruned by the next lock, and
        # named by check until then
        self.chapter("# Demo\n\nThe whole, `src/demo.c@sum`.\n")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("src/demo.c@sum-loop is cited nowhere", out)

    def test_in_a_handout_the_learners_own_spans_are_skipped(self):
        """A handout's learner writes other code than the reference the prose
        was read against: that drift, and a span cited only by the answers
        folded out of notes.md, are skipped; drift elsewhere still fails."""
        write(os.path.join(self.root, "src", "other.c"), SRC)
        self.chapter("# Demo\n\nMine, `src/demo.c@sum-loop`; theirs, `src/other.c@sum-loop`; "
                     "gone, `src/demo.c@sum`.\n")
        self.assertEqual(self.run_tool("lock")[0], 0)
        self.chapter("# Demo\n\nMine, `src/demo.c@sum-loop`; theirs, `src/other.c@sum-loop`.\n")
        write(os.path.join(self.root, "exercises", "HANDOUT"), "handout\nstep: 9\n")
        write(os.path.join(self.root, "exercises", "09-demo", "exercise.json"),
              '{"step": 9, "title": "demo", "chapter": "chapters/00-demo.md", "module": "src/demo.c", '
              '"tests": [], "parts": [{"name": "p", "regions": []}]}\n')
        write(os.path.join(self.root, "src", "demo.c"), SRC.replace("s += a[i];", "s -= a[i];"))
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 0, out)
        self.assertIn("SKIPPED (a handout for step 9)", out)
        self.assertIn("(src/demo.c@sum-loop)", out)
        write(os.path.join(self.root, "src", "other.c"), SRC.replace("s += a[i];", "s -= a[i];"))
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("src/other.c@sum-loop: the code changed since the prose about it was read", out)

    def test_missing_label_fails(self):
        self.chapter("# Demo\nSee `src/demo.c@nope` and `src/gone.c@x`.\n")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("chapters/00-demo.md:2: src/demo.c@nope: no label 'nope' in src/demo.c", out)
        self.assertIn("no file src/gone.c", out)
        self.assertIn("2 failed", out)

    def test_marker_error_fails(self):
        write(os.path.join(self.root, "src", "bad.c"), "/*@ a */\nint x;\n")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1)
        self.assertIn("never closed", out)

    def test_upstream_lock_cycle(self):
        self.chapter("# Demo\nValkey: `trySendReadToIOThreads`, `valkey:src/io_threads.c:14-16`.\n")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1)
        self.assertIn("not in chapters/anchors.lock", out)
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 0, out)
        with open(os.path.join(self.root, "chapters", "anchors.lock")) as f:
            entries = [l.split("\t") for l in f.read().splitlines() if l and not l.startswith("#")]
        self.assertEqual(len(entries), 1)
        self.assertEqual(entries[0][0], "valkey:src/io_threads.c:14-16")
        self.assertEqual(entries[0][1], self.up.short)
        self.assertEqual(entries[0][3], "int trySendReadToIOThreads(client *c) {")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 0, out)
        self.assertIn("2 passed, 0 failed", out)
        # without the source: not checked, not passed, not failed
        rc, out = self.run_tool("check", clone=False)
        self.assertEqual(rc, 0, out)
        self.assertIn("NOT CHECKED: 1 upstream citation", out)
        self.assertIn("1 passed, 0 failed, 1 not checked", out)
        rc, out = self.run_tool("check", "--strict", clone=False)
        self.assertEqual(rc, 1)

    def test_upstream_drift_fails(self):
        self.chapter("# Demo\n`trySendReadToIOThreads` is\n`valkey:src/io_threads.c:14-16`\n")
        self.assertEqual(self.run_tool("lock")[0], 0)
        lock = os.path.join(self.root, "chapters", "anchors.lock")
        with open(lock) as f:
            text = f.read()
        with open(lock, "w") as f:
            f.write(text.replace("int trySendReadToIOThreads(client *c) {", "int somethingElse(void) {"))
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1)
        self.assertIn("first line is now", out)
        # a span whose text moved: same first line, different hash
        with open(lock, "w") as f:
            f.write(text.replace("\t" + text.split("\t")[2] + "\t", "\t" + "0" * 64 + "\t"))
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1)
        self.assertIn("sha256 differs", out)

    def test_stale_lock_entry_and_pin_bump(self):
        self.chapter("# Demo\n`trySendReadToIOThreads`: `valkey:src/io_threads.c:14`\n")
        self.assertEqual(self.run_tool("lock")[0], 0)
        self.chapter("# Demo\nno citations any more\n")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1)
        self.assertIn("cited nowhere", out)
        self.assertEqual(self.run_tool("lock")[0], 0)
        self.assertEqual(self.run_tool("check")[0], 0)
        # a citation locked at another commit than the pin fails
        self.chapter("# Demo\n`trySendReadToIOThreads`: `valkey:src/io_threads.c:14`\n")
        self.assertEqual(self.run_tool("lock")[0], 0)
        lock = os.path.join(self.root, "chapters", "anchors.lock")
        with open(lock) as f:
            text = f.read()
        with open(lock, "w") as f:
            f.write(text.replace("\t" + self.up.short + "\t", "\tdeadbeef0\t"))
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1)
        self.assertIn("was locked at deadbeef0", out)

    def test_offline_lock_writes_pending_entries(self):
        self.chapter("# Demo\n`trySendReadToIOThreads` is\n`valkey:src/io_threads.c:14-16`\n")
        rc, out = self.run_tool("lock", clone=False)
        self.assertEqual(rc, 0, out)
        self.assertIn("left pending", out)
        with open(os.path.join(self.root, "chapters", "anchors.lock")) as f:
            self.assertIn(f"valkey:src/io_threads.c:14-16\t{self.up.short}\tpending\t?", f.read())
        rc, out = self.run_tool("check", clone=False)  # offline: not checked, not failed
        self.assertEqual(rc, 0, out)
        self.assertIn("1 of them were locked without the source", out)
        rc, out = self.run_tool("check")  # the source is here: pending fails until locked
        self.assertEqual(rc, 1)
        self.assertIn("hash pending", out)
        self.assertEqual(self.run_tool("lock")[0], 0)
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 0, out)

    def test_citations_checked_by_hand_are_counted_apart(self):
        self.chapter("# Demo\n`trySendReadToIOThreads` is\n`valkey:src/io_threads.c:14-16`, and\n"
                     "`valkey:src/io_threads.c:1-2`\n")
        self.assertEqual(self.run_tool("lock", clone=False)[0], 0)
        checked = os.path.join(self.root, "chapters", "anchors.checked")
        write(checked, "# by hand\nvalkey:src/io_threads.c:14-16\tsomeone/valkey@abc\tshifted +2\tpartly\twhy\n")
        rc, out = self.run_tool("check", clone=False)
        self.assertEqual(rc, 0, out)
        self.assertIn("1 of them were checked by hand against a public copy of the file (chapters/anchors.checked): "
                      "0 at the cited lines, 1 shifted; only partly confirmed: valkey:src/io_threads.c:14-16; "
                      "confirmed by no copy (the book marks them unchecked): valkey:src/io_threads.c:1-2", out)
        write(checked, "valkey:src/io_threads.c:14-16\tcopy\tsomewhere\tyes\tnote\n"
                       "valkey:src/io_threads.c:99\tcopy\texact\tyes\tnote\n")
        rc, out = self.run_tool("check", clone=False)
        self.assertEqual(rc, 1, out)
        self.assertIn("chapters/anchors.checked:1: malformed entry", out)
        self.assertIn("chapters/anchors.checked:2: valkey:src/io_threads.c:99 is cited nowhere", out)

    def test_show_and_labels(self):
        rc, out = self.run_tool("show", "src/demo.c@sum-loop")
        self.assertEqual(rc, 0, out)
        self.assertIn("     9      for (size_t i = 0; i < n; i++)", out)
        rc, out = self.run_tool("labels")
        self.assertIn("src/demo.c@sum\tlabel\tlines 5-13", out)
        rc, out = self.run_tool("show", "valkey:src/io_threads.c:14")
        self.assertEqual(rc, 0, out)
        self.assertIn("14  int trySendReadToIOThreads", out)


# A stand-in for Valkey's src/networking.c: a handler, and a loop whose
# body the chapter cites without the function's first line.
NETWORKING = """\
/* fixture networking.c */
#include "server.h"

/* Write event handler. */
void sendReplyToClient(connection *conn) {
    client *c = connGetPrivateData(conn);
    if (trySendWriteToIOThreads(c) == C_OK) return;
    writeToClient(c);
}

int handleClientsWithPendingWrites(void) {
    int processed = 0;
    while (next()) {
        c->flag.pending_write = 0;
        if (trySendWriteToIOThreads(c) == C_OK) continue;
        processed++;
    }
    return processed;
}
"""
# The same file two commits later, two lines longer at the top: the line
# numbers a chapter took from the first commit now point two lines early.
NETWORKING_SHIFTED = NETWORKING.replace("#include \"server.h\"\n", "#include \"server.h\"\n#include \"a.h\"\n#include \"b.h\"\n")


class LockRefuses(unittest.TestCase):
    """`lock` never records a span that does not show what the prose names,
    nor a pending entry whose first line the source contradicts."""

    def setUp(self):
        self.up = Upstream()
        self.root = os.path.join(self.up.dir, "tree")
        write(os.path.join(self.root, "src", "demo.c"), SRC)
        shas = make_repo(os.path.join(self.up.dir, "net", "valkey"),
                         [{"src/networking.c": NETWORKING}, {"src/networking.c": NETWORKING_SHIFTED}])
        self.good, self.shifted = shas[0][:9], shas[1][:9]
        self.pin(self.good)

    def tearDown(self):
        self.up.cleanup()

    def pin(self, sha):
        write_pins(self.up.pins_path, {"valkey": {"repo": "valkey-io/valkey", "sha": sha},
                                       "redis": {"repo": "redis/redis", "sha": "a176d1225"}})

    def run_tool(self, *args):
        env = self.up.env(SOLOIST_SOURCE_DIR=os.path.join(self.up.dir, "net"))
        r = subprocess.run([sys.executable, SCRIPT, "--root", self.root, *args], capture_output=True, text=True,
                           env=env, timeout=60)
        return r.returncode, r.stdout + r.stderr

    def chapter(self, body):
        write(os.path.join(self.root, "chapters", "00-demo.md"), body)

    def lock_text(self):
        with open(os.path.join(self.root, "chapters", "anchors.lock")) as f:
            return f.read()

    def write_lock(self, *entries):
        with open(os.path.join(self.root, "chapters", "anchors.lock"), "w") as f:
            f.write("".join("\t".join(e) + "\n" for e in entries))

    def test_named_function_in_the_span_is_locked(self):
        self.chapter("The handler, `sendReplyToClient`, is `valkey:src/networking.c:5-8`.\n")
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 0, out)
        self.assertIn("valkey:src/networking.c:5-8\t%s\t" % self.good, self.lock_text())
        self.assertIn("\tvoid sendReplyToClient(connection *conn) {\n", self.lock_text())
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 0, out)

    def test_a_body_inside_the_named_function_is_locked(self):
        self.chapter("The flush loop, `handleClientsWithPendingWrites`, is `valkey:src/networking.c:14-15`.\n")
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 0, out)
        self.assertIn("\tc->flag.pending_write = 0;\n", self.lock_text())

    def test_a_span_in_another_function_is_refused(self):
        # the prose means the handler; the range is the flush loop's
        self.chapter("The handler, `sendReplyToClient`, is `valkey:src/networking.c:12-15`.\n")
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 1, out)
        self.assertIn("refused: the prose names `sendReplyToClient`, which is not in lines 12-15 "
                      "(they are inside handleClientsWithPendingWrites)", out)
        self.assertIn("valkey:src/networking.c:12-15\t%s\tpending\t?" % self.good, self.lock_text())
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("hash pending", out)

    def test_a_shifted_range_is_refused(self):
        # line numbers read at the first commit, pinned at the later one
        self.pin(self.shifted)
        self.chapter("The handler, `sendReplyToClient`, is `valkey:src/networking.c:5-8`.\n")
        self.write_lock(("valkey:src/networking.c:5-8", self.shifted, "pending",
                         "void sendReplyToClient(connection *conn) {"))
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 1, out)
        self.assertIn("refused: its first line is '', not the "
                      "'void sendReplyToClient(connection *conn) {' the lock expects", out)
        # the entry is kept as it was: still pending, still failing
        self.assertIn("pending\tvoid sendReplyToClient(connection *conn) {", self.lock_text())
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("its first line is '', not the lock's", out)
        # the citation corrected to the pinned commit's lines locks
        self.chapter("The handler, `sendReplyToClient`, is `valkey:src/networking.c:7-10`.\n")
        self.write_lock(("valkey:src/networking.c:7-10", self.shifted, "pending",
                         "void sendReplyToClient(connection *conn) {"))
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.run_tool("check")[0], 0)

    def test_a_wrong_commit_is_refused(self):
        # the line number was read at one commit and the pin names another,
        # where that line is no longer the function the prose names
        self.chapter("The flush loop opens at `handleClientsWithPendingWrites`: `valkey:src/networking.c:11`.\n")
        self.pin(self.shifted)
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 1, out)
        self.assertIn("refused: the prose names `handleClientsWithPendingWrites`, which is not in line 11", out)
        self.assertIn("pending\t?", self.lock_text())
        os.remove(os.path.join(self.root, "chapters", "anchors.lock"))
        self.pin(self.good)
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 0, out)

    def test_a_citation_that_names_nothing_is_refused(self):
        self.chapter("See `valkey:src/networking.c:5-8`.\n")
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 1, out)
        self.assertIn("nothing says what it should show", out)
        # a first line written into the lock by hand is enough
        self.write_lock(("valkey:src/networking.c:5-8", self.good, "pending",
                         "void sendReplyToClient(connection *conn) {"))
        rc, out = self.run_tool("lock")
        self.assertEqual(rc, 0, out)

    def test_check_fails_when_the_prose_names_something_else_later(self):
        self.chapter("The handler, `sendReplyToClient`, is `valkey:src/networking.c:5-8`.\n")
        self.assertEqual(self.run_tool("lock")[0], 0)
        self.chapter("The flush loop, `handleClientsWithPendingWrites`, is `valkey:src/networking.c:5-8`.\n")
        rc, out = self.run_tool("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("the prose names `handleClientsWithPendingWrites`, which lines 5-8 do not show", out)


if __name__ == "__main__":
    unittest.main()
