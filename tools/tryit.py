#!/usr/bin/env python3
"""tryit: runs the chapters' try-it boxes and checks what they promise.

Each chapter's try-it box is a script, chapters/try-it/NN.sh, that the
chapter shows with `{{try-it NN}}` alone in its paragraph (the book renders
the script there), so the box a reader copies and the script that runs are
one file. A script promises what the reader will see with comment lines

    # expect: REGEX

each a Python regular expression that must match (re.search) at least one
line of the script's output. `make test` runs every script in its short
form (TRYIT_SHORT=1, fewer requests and shorter waits) and fails a script
that exits non-zero, outlives its time limit, or breaks a promise; it also
fails a chapter whose try-it box shows no script, a {{try-it NN}} with no
script, and a script no chapter shows.

    tools/tryit.py [NN ...]        run (short form) and check; default: all
    tools/tryit.py --skip NN,NN    all but these (their structure still checked)
    tools/tryit.py --full NN       the full form, as a reader runs it
    tools/tryit.py --render NN     the markdown the book puts in the box

Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.path.join(ROOT, "chapters", "try-it")
REF = re.compile(r"\{\{try-it ([0-9]{2})\}\}")
EXPECT = re.compile(r"^\s*#\s*expect:\s*(.+?)\s*$")


def script_path(nn, root=ROOT):
    return os.path.join(root, "chapters", "try-it", "%s.sh" % nn)


def expectations(path):
    """[(line number, compiled regex, text)] of a script's promises."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = EXPECT.match(line)
            if m:
                out.append((n, re.compile(m.group(1)), m.group(1)))
    return out


def render(nn, root=ROOT):
    """The box's body in markdown: the script, as a shell code block."""
    path = script_path(nn, root)
    if not os.path.isfile(path):
        return "*[try-it %s: no chapters/try-it/%s.sh]*" % (nn, nn)
    with open(path, encoding="utf-8") as f:
        body = f.read().rstrip("\n")
    return "`chapters/try-it/%s.sh` — run it with `bash chapters/try-it/%s.sh`:\n\n```sh\n%s\n```" % (nn, nn, body)


def structure(root=ROOT):
    """Failures of the chapters' boxes and scripts to match up."""
    fails, shown = [], set()
    for ch in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*.md"))):
        with open(ch, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(ch, root)
        refs = REF.findall(text)
        shown.update(refs)
        if "::: try-it" in text and not refs:
            fails.append("%s: its try-it box shows no script ({{try-it NN}})" % rel)
        for nn in refs:
            if not os.path.isfile(script_path(nn, root)):
                fails.append("%s: {{try-it %s}} but there is no chapters/try-it/%s.sh" % (rel, nn, nn))
    for path in sorted(glob.glob(os.path.join(root, "chapters", "try-it", "[0-9][0-9].sh"))):
        nn = os.path.basename(path)[:2]
        if nn not in shown:
            fails.append("chapters/try-it/%s.sh: no chapter shows it" % nn)
        elif not expectations(path):
            fails.append("chapters/try-it/%s.sh: promises nothing (no '# expect: REGEX' line)" % nn)
    return fails


def run(nn, full=False, timeout=90, root=ROOT):
    """Runs one script -> (passed, failed, [messages], seconds)."""
    path = script_path(nn, root)
    env = dict(os.environ)
    if full:
        env.pop("TRYIT_SHORT", None)
    else:
        env["TRYIT_SHORT"] = "1"
    t0 = time.monotonic()
    try:
        p = subprocess.run(["bash", path], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout)
        out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode("utf-8", "replace"), "timeout after %ds" % timeout
    secs = time.monotonic() - t0
    lines = out.splitlines()
    passed, failed, msgs = 0, 0, []
    if rc != 0:
        failed += 1
        msgs.append("FAIL chapters/try-it/%s.sh: exit %s; its last lines:\n    %s"
                    % (nn, rc, "\n    ".join(lines[-8:])))
    else:
        passed += 1
    for line, rx, text in expectations(path):
        if any(rx.search(l) for l in lines):
            passed += 1
        else:
            failed += 1
            msgs.append("FAIL chapters/try-it/%s.sh:%d: promised a line matching /%s/; none of its %d lines does"
                        % (nn, line, text, len(lines)))
    return passed, failed, msgs, secs, out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/tryit.py", description=__doc__.split("\n")[0])
    ap.add_argument("scripts", nargs="*", help="chapter numbers (00 ... 08); default: every script")
    ap.add_argument("--full", action="store_true", help="the full form, as the reader runs it")
    ap.add_argument("--render", action="store_true", help="print the markdown the book shows for each")
    ap.add_argument("--timeout", type=int, default=90)
    ap.add_argument("--log-dir", default=None, help="keep each script's output there")
    ap.add_argument("--skip", default="", help="comma list of chapter numbers not to run")
    a = ap.parse_args(argv)
    nns = a.scripts or sorted(os.path.basename(p)[:2] for p in glob.glob(os.path.join(DIR, "[0-9][0-9].sh")))
    skip = [x for x in a.skip.split(",") if x]
    for nn in skip:
        print("skip chapters/try-it/%s.sh (run in the long run)" % nn)
    nns = [nn for nn in nns if nn not in skip]
    if a.render:
        for nn in nns:
            print(render(nn))
        return 0
    passed = failed = 0
    for f in structure():
        print("FAIL " + f)
        failed += 1
    for nn in nns:
        p, f, msgs, secs, out = run(nn, a.full, a.timeout)
        if a.log_dir:
            os.makedirs(a.log_dir, exist_ok=True)
            with open(os.path.join(a.log_dir, "try-it-%s.log" % nn), "w", encoding="utf-8") as fh:
                fh.write(out)
        print("%s chapters/try-it/%s.sh (%s form): %d promises checked, %.1f s"
              % ("ok  " if not f else "FAIL", nn, "full" if a.full else "short", p + f - 1, secs))
        for m in msgs:
            print("  " + m)
        passed, failed = passed + p, failed + f
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
