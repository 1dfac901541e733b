"""Shared helpers for the reader's-tools tests (tests/tools/test_*.py).

Everything a test needs is made in a temporary directory: a git repository
standing in for Valkey (so pinned-source can be proved against a local
clone without the network), a pin table naming it, chapters, source files.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

def load_tool(name):
    """(module, path) of tools/NAME.py, loaded by path: a test calls its
    functions and runs the same file as a program."""
    path = os.path.join(TOOLS, name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


GIT_ENV = {
    "GIT_AUTHOR_NAME": "fixture", "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "fixture", "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}


def long_run(why):
    """Marks a test for the long run only (SOLOIST_LONG=1, `make
    check-long`, which CI runs after `make test`): tests/tools/run.py leaves
    it out of `make test`, whose time is budgeted, and runs only such
    tests in the long run, so the two runs prove everything once. `why`
    says what in `make test` already covers most of it."""
    def mark(f):
        f.soloist_long = why
        return f
    return mark


def git(repo, *args):
    r = subprocess.run(["git", "-C", repo, "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                       capture_output=True, text=True, env=dict(os.environ, **GIT_ENV))
    if r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {r.stderr}")
    return r.stdout.strip()


def make_repo(path, commits):
    """commits: a list of {relpath: text}; -> list of full SHAs, oldest first."""
    os.makedirs(path, exist_ok=True)
    git(path, "init", "-q")
    shas = []
    for i, files in enumerate(commits):
        for rel, text in files.items():
            p = os.path.join(path, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"fixture commit {i}")
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text).lstrip("\n") if text.startswith("\n") else text)
    return path


def write_pins(path, pins):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(pins, f)
    return path


# A stand-in for valkey's src/io_threads.c: numbered lines make spans easy to reason about.
UPSTREAM_V1 = "".join(f"line {i} of the pinned file\n" for i in range(1, 31)).replace(
    "line 14 of the pinned file", "int trySendReadToIOThreads(client *c) {")
UPSTREAM_V2 = UPSTREAM_V1.replace("line 15 of the pinned file", "line 15 CHANGED after the pin")


class Upstream:
    """A temp dir with clones/valkey (two commits; the pin is the first,
    by a short SHA), a pin table, and an empty cache directory."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="soloist-fixture-")
        self.dir = self.tmp.name
        self.clones = os.path.join(self.dir, "clones")
        self.cache = os.path.join(self.dir, "cache")
        os.makedirs(self.cache)
        self.shas = make_repo(os.path.join(self.clones, "valkey"), [
            {"src/io_threads.c": UPSTREAM_V1, "README.md": "fixture\n"},
            {"src/io_threads.c": UPSTREAM_V2},
        ])
        self.short = self.shas[0][:9]
        self.pins_path = write_pins(os.path.join(self.dir, "pins.json"), {
            "valkey": {"repo": "valkey-io/valkey", "sha": self.short},
            "redis": {"repo": "redis/redis", "sha": "a176d1225"},
        })

    def env(self, clone=True, offline=True, **extra):
        e = dict(os.environ)
        for k in ("SOLOIST_SOURCE_DIR", "SOLOIST_OFFLINE", "SOLOIST_GITHUB_API", "SOLOIST_GITHUB_RAW"):
            e.pop(k, None)
        e["SOLOIST_PINS"] = self.pins_path
        e["XDG_CACHE_HOME"] = self.cache
        if clone:
            e["SOLOIST_SOURCE_DIR"] = self.clones
        if offline:
            e["SOLOIST_OFFLINE"] = "1"
        e.update(extra)
        return e

    def cleanup(self):
        self.tmp.cleanup()
