#!/usr/bin/env python3
"""pinned-source: read Valkey's (and Redis's) source at the commit the book cites.

Part of the reader's tools. The chapters cite upstream code as
`valkey:src/io_threads.c:514-530`; this tool shows those lines and checks
that they still say what the chapter claims, always at the commit pinned
in tools/pins.json, never at whatever a clone happens to have checked out.

    tools/pinned-source.py ref valkey
    tools/pinned-source.py show valkey src/io_threads.c -r 1:75
    tools/pinned-source.py check valkey src/io_threads.c:514 --contains trySendReadToIOThreads
    tools/pinned-source.py hash valkey src/io_threads.c:514-530
    tools/pinned-source.py fetch valkey src/io_threads.c src/io_threads.h
    tools/pinned-source.py where valkey

Where the file comes from, in this order:
  1. a local clone: $SOLOIST_SOURCE_DIR/<pin> (or /<repo name>), a git
     clone that holds the pinned commit; short SHAs are resolved by git;
  2. the cache: ${XDG_CACHE_HOME:-~/.cache}/soloist/pinned-source/;
  3. GitHub over HTTPS: the short SHA is resolved to the full one through
     the commits API, then the raw file is fetched and cached.
     SOLOIST_OFFLINE=1 skips this step.

Exit status: 0 ok; 1 a check did not hold; 2 a usage error, an unknown
pin, a path not in the commit or a line out of range; 3 the source is not
available (offline, no clone, no cache). Every error is one line on
stderr, never a traceback. Python 3 standard library only.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PINS = os.path.join(HERE, "pins.json")
GITHUB_API = "https://api.github.com"
GITHUB_RAW = "https://raw.githubusercontent.com"
NET_TIMEOUT_S = 15


class PinError(Exception):
    """An error a user will hit; str(e) is the one line we print."""
    code = 2


class Unavailable(PinError):
    """The source exists somewhere, but not on this machine right now."""
    code = 3


def load_pins(path=None):
    path = path or os.environ.get("SOLOIST_PINS") or DEFAULT_PINS
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except OSError as e:
        raise PinError(f"cannot read pin table {path}: {e.strerror}")
    except ValueError as e:
        raise PinError(f"pin table {path} is not valid JSON: {e}")
    pins = {}
    for name, p in raw.items():
        if name.startswith("_"):
            continue
        if not isinstance(p, dict) or "repo" not in p or "sha" not in p:
            raise PinError(f"pin table {path}: entry '{name}' needs 'repo' and 'sha'")
        if not re.fullmatch(r"[0-9a-fA-F]{7,40}", p["sha"]):
            raise PinError(f"pin table {path}: entry '{name}' has a malformed sha '{p['sha']}'")
        if p["repo"].count("/") != 1:
            raise PinError(f"pin table {path}: entry '{name}' repo must be OWNER/NAME")
        pins[name] = dict(p, sha=p["sha"].lower())
    return pins


def span_sha256(lines):
    """The hash the lock file records: each line (no terminator) + '\\n'."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return h.hexdigest()


def parse_range(text, what="range"):
    """'A:B', 'A-B', 'A' or 'A:' -> (a, b or None)."""
    m = re.fullmatch(r"(\d+)(?:[:-](\d*))?", text.strip())
    if not m:
        raise PinError(f"malformed {what} '{text}': expected LINE, LINE-END or LINE:END")
    a = int(m.group(1))
    if m.group(2) is None:
        b = a
    elif m.group(2) == "":
        b = None
    else:
        b = int(m.group(2))
    if a < 1 or (b is not None and b < a):
        raise PinError(f"malformed {what} '{text}': lines start at 1 and END >= LINE")
    return a, b


def parse_location(text):
    """'PATH:LINE[-END]' -> (path, a, b)."""
    path, sep, rng = text.rpartition(":")
    if not sep or not path:
        raise PinError(f"malformed location '{text}': expected PATH:LINE[-END]")
    a, b = parse_range(rng, "location")
    return path, a, b


def check_path(path):
    if path.startswith("/") or ".." in path.split("/") or not path:
        raise PinError(f"path '{path}' must be relative to the repository root, without '..'")
    return path


class PinnedSource:
    def __init__(self, pins=None, offline=None, source_dir=None, cache_dir=None):
        self.pins = pins if pins is not None else load_pins()
        if offline is None:
            offline = os.environ.get("SOLOIST_OFFLINE", "") not in ("", "0")
        self.offline = offline
        self.source_dir = source_dir if source_dir is not None else os.environ.get("SOLOIST_SOURCE_DIR", "")
        if cache_dir is None:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            cache_dir = os.path.join(base, "soloist", "pinned-source")
        self.cache_dir = cache_dir
        self.api = os.environ.get("SOLOIST_GITHUB_API", GITHUB_API).rstrip("/")
        self.raw = os.environ.get("SOLOIST_GITHUB_RAW", GITHUB_RAW).rstrip("/")
        self._files = {}
        self.origin = {}  # (pin, path) -> where the text came from

    # -- the pin table ---------------------------------------------------
    def pin(self, name):
        if name not in self.pins:
            known = ", ".join(sorted(self.pins)) or "none"
            raise PinError(f"unknown pin '{name}' (known: {known}; see tools/pins.json)")
        return self.pins[name]

    def label(self, name):
        p = self.pin(name)
        return f"{p['repo']}@{p['sha']}"

    # -- source 1: a local clone -----------------------------------------
    def clone_dir(self, name):
        if not self.source_dir:
            return None
        repo_base = self.pin(name)["repo"].split("/")[1]
        for cand in (name, repo_base):
            d = os.path.join(self.source_dir, cand)
            if os.path.isdir(d):
                return d
        return None

    def _git(self, d, *args):
        try:
            r = subprocess.run(["git", "-C", d, *args], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise PinError(f"git failed in {d}: {e}")
        return r.returncode, r.stdout

    def _clone_full_sha(self, name, d):
        short = self.pin(name)["sha"]
        rc, out = self._git(d, "rev-parse", "--verify", "--quiet", f"{short}^{{commit}}")
        if rc != 0:
            return None
        return out.decode().strip()

    # -- source 2: the cache ---------------------------------------------
    def _repo_cache(self, name):
        owner, repo = self.pin(name)["repo"].split("/")
        return os.path.join(self.cache_dir, owner, repo)

    def _cached_full_sha(self, name):
        short = self.pin(name)["sha"]
        if len(short) == 40:
            return short
        try:
            with open(os.path.join(self._repo_cache(name), "refs", short), encoding="ascii") as f:
                full = f.read().strip()
        except OSError:
            return None
        return full if re.fullmatch(r"[0-9a-f]{40}", full) and full.startswith(short) else None

    def _cache_path(self, name, full, path):
        return os.path.join(self._repo_cache(name), full, *path.split("/"))

    def _write_cache(self, name, full, path, data):
        short = self.pin(name)["sha"]
        refdir = os.path.join(self._repo_cache(name), "refs")
        os.makedirs(refdir, exist_ok=True)
        with open(os.path.join(refdir, short), "w", encoding="ascii") as f:
            f.write(full + "\n")
        dest = self._cache_path(name, full, path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        tmp = dest + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, dest)

    # -- source 3: GitHub ------------------------------------------------
    def _http_get(self, url, what):
        host = urllib.parse.urlsplit(url).netloc
        req = urllib.request.Request(url, headers={
            "User-Agent": "soloist-pinned-source", "Accept": "application/vnd.github+json"})
        try:
            with urllib.request.urlopen(req, timeout=NET_TIMEOUT_S) as f:
                return f.read()
        except urllib.error.HTTPError as e:
            if e.code in (404, 422):
                return None
            raise Unavailable(f"GitHub answered HTTP {e.code} for {what}"
                              + (" (rate limited; wait an hour or use a clone)" if e.code in (403, 429) else ""))
        except urllib.error.URLError as e:
            raise Unavailable(f"network refused ({host}: {_reason(e.reason)})")
        except (OSError, ValueError) as e:
            raise Unavailable(f"network refused ({host}: {_reason(e)})")

    def _github_full_sha(self, name):
        p = self.pin(name)
        body = self._http_get(f"{self.api}/repos/{p['repo']}/commits/{p['sha']}", f"commit {p['sha']}")
        if body is None:
            raise PinError(f"{p['repo']} has no commit {p['sha']} (GitHub commits API)")
        try:
            full = json.loads(body)["sha"]
        except (ValueError, KeyError, TypeError):
            raise Unavailable(f"GitHub's commits API gave an unreadable answer for {p['repo']}@{p['sha']}")
        if not re.fullmatch(r"[0-9a-f]{40}", full) or not full.startswith(p["sha"]):
            raise PinError(f"GitHub resolved {p['repo']}@{p['sha']} to unexpected commit {full}")
        return full

    # -- reading ---------------------------------------------------------
    def read_bytes(self, name, path):
        """The file's bytes at the pin, from the first source that has it."""
        path = check_path(path)
        key = (name, path)
        if key in self._files:
            return self._files[key]
        p = self.pin(name)
        tried = []
        # 1. a local clone
        d = self.clone_dir(name)
        if d is None:
            tried.append(f"no clone (set SOLOIST_SOURCE_DIR to a directory holding a clone named '{name}')"
                         if not self.source_dir else f"no clone named '{name}' in {self.source_dir}")
        else:
            full = self._clone_full_sha(name, d)
            if full is None:
                tried.append(f"the clone {d} lacks commit {p['sha']} (git -C {d} fetch origin)")
            else:
                rc, out = self._git(d, "cat-file", "blob", f"{full}:{path}")
                if rc != 0:
                    raise PinError(f"{p['repo']}@{p['sha']} has no file {path}")
                self.origin[key] = f"clone {d}"
                self._files[key] = out
                return out
        # 2. the cache
        full = self._cached_full_sha(name)
        if full:
            cp = self._cache_path(name, full, path)
            if os.path.isfile(cp):
                with open(cp, "rb") as f:
                    data = f.read()
                self.origin[key] = f"cache {cp}"
                self._files[key] = data
                return data
        tried.append(f"not in the cache ({self.cache_dir})")
        # 3. GitHub
        if self.offline:
            tried.append("network not tried (SOLOIST_OFFLINE=1)")
        else:
            try:
                full = full or self._github_full_sha(name)
                data = self._http_get(f"{self.raw}/{p['repo']}/{full}/{path}", path)
                if data is None:
                    raise PinError(f"{p['repo']}@{p['sha']} has no file {path}")
                self._write_cache(name, full, path, data)
                self.origin[key] = f"GitHub, now cached under {self.cache_dir}"
                self._files[key] = data
                return data
            except Unavailable as e:
                tried.append(str(e))
        raise Unavailable(
            f"{p['repo']}@{p['sha']}:{path} is not available offline: " + "; ".join(tried)
            + f". To get it: git clone https://github.com/{p['repo']} DIR/{name} and set"
            f" SOLOIST_SOURCE_DIR=DIR, or run `tools/pinned-source.py fetch {name} {path}` once online")

    def lines(self, name, path):
        return self.read_bytes(name, path).decode("utf-8", "surrogateescape").splitlines()

    def span(self, name, path, a, b=None):
        """Lines a..b (1-based, inclusive); b None means to the end."""
        lines = self.lines(name, path)
        n = len(lines)
        b = n if b is None else b
        if a > n or b > n:
            raise PinError(f"line out of range: {name} {path} has {n} lines; asked {a}-{b}")
        return lines[a - 1:b]

    def full_sha(self, name):
        d = self.clone_dir(name)
        if d:
            full = self._clone_full_sha(name, d)
            if full:
                return full
        return self._cached_full_sha(name)


def _reason(r):
    s = getattr(r, "strerror", None) or str(r)
    return s.strip() or r.__class__.__name__


def gutter(lines, first):
    width = max(6, len(str(first + len(lines) - 1)) + 1)
    return "\n".join(f"{i:>{width}}  {t}" for i, t in enumerate(lines, first))


# -- the command line ------------------------------------------------------

def cmd_ref(src, args):
    p = src.pin(args.name)
    print(f"{args.name}  {p['repo']}  {p['sha']}")
    return 0


def cmd_where(src, args):
    p = src.pin(args.name)
    d = src.clone_dir(args.name)
    full = src.full_sha(args.name)
    print(f"{args.name}  {p['repo']}  {p['sha']}  full={full or 'unknown'}")
    print(f"  clone: {d or 'none'}" + (f" ({'has' if d and src._clone_full_sha(args.name, d) else 'lacks'} the commit)" if d else ""))
    print(f"  cache: {src._repo_cache(args.name)}")
    print(f"  network: {'off (SOLOIST_OFFLINE=1)' if src.offline else src.api + ' and ' + src.raw}")
    return 0


def cmd_show(src, args):
    a, b = parse_range(args.range) if args.range else (1, None)
    lines = src.span(args.name, args.path, a, b)
    print(gutter(lines, a))
    return 0


def cmd_check(src, args):
    path, a, b = parse_location(args.location)
    lines = src.span(args.name, path, a, b)
    where = f"{args.name} {path}:{a}" + (f"-{b}" if b != a else "")
    if args.contains is not None and not any(args.contains in t for t in lines):
        shown = lines[0].strip()
        print(f"mismatch: {where} does not contain {args.contains!r} (line {a}: {shown[:80]!r})")
        return 1
    if args.sha256 is not None and span_sha256(lines) != args.sha256.lower():
        print(f"mismatch: {where} has sha256 {span_sha256(lines)[:16]}…, expected {args.sha256[:16]}…")
        return 1
    what = []
    if args.contains is not None:
        what.append(f"contains {args.contains!r}")
    if args.sha256 is not None:
        what.append("sha256 matches")
    print(f"ok: {where} " + (" and ".join(what) if what else "exists"))
    return 0


def cmd_hash(src, args):
    path, a, b = parse_location(args.location)
    print(span_sha256(src.span(args.name, path, a, b)))
    return 0


def cmd_fetch(src, args):
    full = None
    for path in args.paths:
        data = src.read_bytes(args.name, path)
        full = full or src.full_sha(args.name)
        if full is None:
            raise PinError(f"cannot resolve the full sha of {src.label(args.name)} to cache {path}")
        if not src.origin[(args.name, path)].startswith("cache"):
            src._write_cache(args.name, full, path, data)
        print(f"cached {args.name} {path} ({len(data)} bytes) from {src.origin[(args.name, path)]}")
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"pinned-source: {message} (try --help)\n")


def main(argv=None):
    ap = _Parser(prog="pinned-source.py", description=__doc__.split("\n")[0],
                 formatter_class=argparse.RawDescriptionHelpFormatter,
                 epilog="Environment: SOLOIST_SOURCE_DIR, XDG_CACHE_HOME, SOLOIST_OFFLINE=1, SOLOIST_PINS.")
    ap.add_argument("--pins", help="pin table (default tools/pins.json)")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    s = sub.add_parser("ref", help="print NAME  OWNER/REPO  SHA")
    s.add_argument("name")
    s.set_defaults(fn=cmd_ref)
    s = sub.add_parser("where", help="say where the source would come from")
    s.add_argument("name")
    s.set_defaults(fn=cmd_where)
    s = sub.add_parser("show", help="print a file's lines with a line-number gutter")
    s.add_argument("name")
    s.add_argument("path")
    s.add_argument("-r", "--range", help="A:B (or A-B, A:) lines to show")
    s.set_defaults(fn=cmd_show)
    s = sub.add_parser("check", help="exit 0 if PATH:LINE[-END] holds, 1 if not")
    s.add_argument("name")
    s.add_argument("location", help="PATH:LINE or PATH:LINE-END")
    s.add_argument("--contains", help="text that must occur in the span")
    s.add_argument("--sha256", help="sha256 the span must have (as `hash` prints)")
    s.set_defaults(fn=cmd_check)
    s = sub.add_parser("hash", help="print the sha256 of PATH:LINE-END (as the lock file records)")
    s.add_argument("name")
    s.add_argument("location")
    s.set_defaults(fn=cmd_hash)
    s = sub.add_parser("fetch", help="copy files into the cache (from a clone or GitHub)")
    s.add_argument("name")
    s.add_argument("paths", nargs="+")
    s.set_defaults(fn=cmd_fetch)
    args = ap.parse_args(argv)
    try:
        src = PinnedSource(pins=load_pins(args.pins))
        return args.fn(src, args)
    except PinError as e:
        print(f"pinned-source: {e}", file=sys.stderr)
        return e.code
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
