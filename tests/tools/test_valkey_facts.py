"""tools/valkey_facts.py on fixture chapters: a Valkey fact without a
record, a record whose quote is not in its chapter, and a record whose
version the sentence does not name each fail; a chapter whose facts are
all recorded passes."""

import os
import subprocess
import sys
import tempfile
import unittest

from fixtures import TOOLS, write

import valkey_facts  # noqa: E402  (tools/ is on sys.path via fixtures)

TOOL = os.path.join(TOOLS, "valkey_facts.py")

CHAPTER = """\
# 00 — Demo

Main reads every socket itself. Valkey 8.0 gave each I/O thread its own
queue (pull request #758), and Valkey 9.1 replaced it with three
lock-free queues.

```c
/* Valkey 8.0 in a code block: src/networking.c is never read */
```

{{finding F0.1 | at least 1 of "x"}}

::: fine-print
- At the pinned commit, Valkey's `tagJob` keeps the type in the low bits.
:::

soloist's own queue has no version and needs no record.
"""

TAB = "\t"


def rec(quote, version="8.0", copy="valkey-55bbbe09a tarball", where="src/io_threads.c (initIOThreads)",
        holds="yes", note="read the queue's definition"):
    return TAB.join([quote, version, copy, where, holds, note])


GOOD = [
    rec("Valkey 8.0 gave each I/O thread its own queue"),
    rec("Valkey 9.1 replaced it with three lock-free queues", version="9.1",
        copy="valkey-io/valkey@0123456789ab", where="src/io_threads.c (IOThreadMain)", holds="partly",
        note="read a later copy, not the 9.1 tag"),
    rec("Valkey's `tagJob` keeps the type", version="pin", copy="valkey-io/valkey@0123456789ab",
        where="src/io_threads.c (tagJob)"),
]


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="soloist-facts-")
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def setup(self, records, chapter=CHAPTER):
        write(os.path.join(self.root, "chapters", "00-demo.md"), chapter)
        write(os.path.join(self.root, "chapters", "facts", "00.checked"),
              "# chapter 00\n" + "".join(r + "\n" for r in records))

    def run_tool(self, *args):
        r = subprocess.run([sys.executable, TOOL, "check", "--root", self.root, *args], capture_output=True,
                           text=True, timeout=60)
        return r.returncode, r.stdout + r.stderr

    def test_well_formed_chapter_passes(self):
        self.setup(GOOD)
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)
        self.assertIn("3 records, 2 flagged sentences: 1 passed, 0 failed", out)

    def test_planted_fact_without_record_fails(self):
        planted = CHAPTER.replace("needs no record.", "needs no record. Valkey 8.1 raised the bound to 256.")
        self.setup(GOOD, planted)
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("a Valkey fact with no record", out)
        self.assertIn("Valkey 8.1 raised the bound to 256.", out)

    def test_quote_not_in_chapter_fails(self):
        self.setup(GOOD + [rec("Valkey 8.0 gave each worker a lock")])
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("occurs 0 times", out)

    def test_quote_twice_in_chapter_fails(self):
        twice = CHAPTER.replace("needs no record.", "needs no record. Main reads every socket itself.")
        self.setup(GOOD + [rec("Main reads every socket itself.")], twice)
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("occurs 2 times", out)

    def test_version_the_sentence_does_not_name_fails(self):
        wrong = [GOOD[0].replace("\t8.0\t", "\t8.1\t")] + GOOD[1:]
        self.setup(wrong)
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("names version '8.1'", out)

    def test_pin_needs_the_pin_named(self):
        unpinned = CHAPTER.replace("At the pinned commit, Valkey's", "Valkey's")
        self.setup(GOOD, unpinned)
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("names version 'pin'", out)

    def test_malformed_columns_fail(self):
        bad = [GOOD[0].replace("\tyes\t", "\tmaybe\t"), GOOD[1].replace("\tpartly\t", "\tpartly\t").rsplit(TAB, 1)[0]
               + TAB, GOOD[2].replace("valkey-io/valkey@0123456789ab", "somewhere")]
        self.setup(bad)
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("holds 'maybe'", out)
        self.assertIn("needs a note", out)
        self.assertIn("copy 'somewhere'", out)

    def test_a_document_without_an_address_is_named_and_only_partly(self):
        named = GOOD[0].replace("valkey-55bbbe09a tarball", "document: a post on the queues (A. Author, 2026)")
        self.setup([named.replace("\tyes\t", "\tpartly\t")] + GOOD[1:])
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)
        self.setup([named] + GOOD[1:])
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("at most partly checked", out)
        self.setup([named.replace(" (A. Author, 2026)", "")] + GOOD[1:])
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("'document: WHAT (AUTHOR, YEAR)'", out)

    def test_code_blocks_and_references_are_not_read(self):
        self.setup(GOOD)
        ch = valkey_facts.Chapter("00", os.path.join(self.root, "chapters", "00-demo.md"))
        flagged = [s for _, _, s in ch.flagged()]
        self.assertFalse([s for s in flagged if "code block" in s], flagged)
        self.assertEqual(len(flagged), 2, flagged)

    def test_a_list_takes_its_version_from_its_lead(self):
        """A list introduced by a sentence that names the version (and ends
        with a colon) lends it to every item; without the lead, an item that
        names no version fails."""
        listed = CHAPTER.replace("soloist's own queue", "What 8.1 changed, by pull request:\n\n"
                                 "- #1405 made the queue lock-free.\n- #1500 sized it for the batch.\n\nsoloist's own queue")
        item = rec("#1405 made the queue lock-free", version="8.1")
        self.setup(GOOD + [item, rec("#1500 sized it for the batch", version="8.1")], listed)
        rc, out = self.run_tool()
        self.assertEqual(rc, 0, out)
        self.assertIn("5 records", out)  # a quote may begin with "#": it is not a comment
        self.setup(GOOD + [item, rec("#1500 sized it for the batch", version="8.1")],
                   listed.replace("What 8.1 changed, by pull request:", "By pull request:"))
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("nor its list's lead) names version '8.1'", out)

    def test_series_and_versions_named_exactly(self):
        names = valkey_facts.names_version
        self.assertTrue(names("what Valkey 8.x shows", "8.x"))
        self.assertTrue(names("raised it for 8.1.", "8.1"))
        self.assertFalse(names("Valkey 8.0.0 ran", "8.0"))
        self.assertTrue(names("At the pinned commit, it spins", "pin"))
        self.assertTrue(names("read at Valkey commit 55bbbe09a", "2024 tree"))

    def test_chapters_option_limits_the_check(self):
        self.setup(GOOD)
        write(os.path.join(self.root, "chapters", "01-other.md"), "# 01\n\nValkey 8.0 has `foo` in bar.c.\n")
        rc, out = self.run_tool("--chapters", "00")
        self.assertEqual(rc, 0, out)
        rc, out = self.run_tool()
        self.assertEqual(rc, 1, out)
        self.assertIn("01-other.md:3: a Valkey fact with no record", out)

    def test_detector(self):
        f = valkey_facts.is_fact
        self.assertTrue(f("Valkey 8.0 ran at most 16 threads."))
        self.assertTrue(f("Valkey pull request #1220 raised the bound."))
        self.assertTrue(f("Valkey's lock sits in ae.c."))
        self.assertTrue(f("Valkey's `aePoll` takes the lock."))
        self.assertTrue(f("Valkey 8 parses one command at a time."))
        self.assertTrue(f("Valkey 8.x shows a flat floor."))
        self.assertFalse(f("Valkey is 1.40× faster here."))
        self.assertFalse(f("soloist 8.0 has `spsc_commit`."))
        self.assertFalse(f("Valkey's span `valkey:src/io_threads.c:17-27` holds it at 8.0."))


if __name__ == "__main__":
    unittest.main()
