#!/usr/bin/env python3
"""browser-check.py: open the built book in headless Chromium (make book-check).

Part of the reader's tools. Drives /usr/bin/chromium through
chromedriver's WebDriver endpoint (Python's urllib; no Selenium) and, for
index.html and every page it can reach from it, fails on:
  - anything the browser logs at SEVERE: a console error, a script error,
    a resource that failed to load ("Failed to load resource");
  - an image that did not decode, a stylesheet that did not load, or
    book.css not applied (it sets --book-loaded: 1);
  - any request to another host (the book must work offline).
Chromium runs with --headless --no-sandbox --disable-gpu --disable-quic
--no-first-run --disable-background-networking --disable-component-update
--disable-sync and a fresh --user-data-dir, so it never calls out.

Usage: tools/book/browser-check.py [--book DIR] [--pages N]
Exit 0 all pages clean, 1 a page failed, 77 skipped (no chromium or
chromedriver; the reason is printed). Ends with "browser-check: N passed, M failed".
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage", "--window-size=1200,900"]
DEADLINE_S = 240

PAGE_PROBE = r"""
const bad = [];
for (const img of document.images) {
  if (!img.complete || img.naturalWidth === 0) bad.push('image did not load: ' + img.getAttribute('src'));
}
for (const l of document.querySelectorAll('link[rel=stylesheet]')) {
  if (!l.sheet) bad.push('stylesheet did not load: ' + l.getAttribute('href'));
}
const loaded = getComputedStyle(document.documentElement).getPropertyValue('--book-loaded').trim();
if (loaded !== '1') bad.push('book.css is not applied');
for (const e of performance.getEntriesByType('resource')) {
  if (/^https?:/.test(e.name)) bad.push('request to another host: ' + e.name);
}
const links = [];
for (const a of document.querySelectorAll('a[href]')) {
  const h = a.getAttribute('href');
  if (!/^[a-z]+:/i.test(h) && !h.startsWith('#')) links.push(h.split('#')[0]);
}
return {bad: bad, links: links, title: document.title};
"""


class Skip(Exception):
    pass


class WebDriver:
    def __init__(self, chromium, chromedriver):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.profile = tempfile.mkdtemp(prefix="soloist-chromium-")
        self.proc = subprocess.Popen([chromedriver, f"--port={self.port}", "--allowed-ips=127.0.0.1"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}"
        self.sid = None
        deadline = time.time() + 20
        while True:
            try:
                self.call("GET", "/status")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if time.time() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise Skip("chromedriver did not start")
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": chromium, "args": CHROME_ARGS + [f"--user-data-dir={self.profile}"]}}}}
        r = self.call("POST", "/session", caps)
        if "sessionId" not in r.get("value", {}):
            self.close()
            raise Skip(f"chromium did not start: {json.dumps(r)[:300]}")
        self.sid = r["value"]["sessionId"]

    def call(self, method, path, body=None, timeout=60):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as f:
                return json.load(f)
        except urllib.error.HTTPError as e:
            try:
                return json.load(e)
            except ValueError:
                return {"value": {"error": f"HTTP {e.code}"}}

    def session(self, method, path, body=None):
        return self.call(method, f"/session/{self.sid}{path}", body)

    def close(self):
        if self.sid:
            try:
                self.call("DELETE", f"/session/{self.sid}", timeout=20)
            except OSError:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)  # chromedriver and the chromium it started
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        shutil.rmtree(self.profile, ignore_errors=True)


def find(name, candidates):
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return shutil.which(name)


def check(book, max_pages):
    chromium = find("chromium", [os.environ.get("CHROMIUM"), "/usr/bin/chromium"])
    driver = find("chromedriver", [os.environ.get("CHROMEDRIVER"), "/usr/bin/chromedriver"])
    if not chromium or not driver:
        raise Skip("chromium and chromedriver are not installed (make deps installs them)")
    index = os.path.join(book, "index.html")
    if not os.path.isfile(index):
        return 0, [f"no {index}: run `make book` first"]
    wd = WebDriver(chromium, driver)
    passed, fails = 0, []
    start = time.time()
    try:
        queue, seen = [os.path.abspath(index)], set()
        while queue and len(seen) < max_pages and time.time() - start < DEADLINE_S:
            page = queue.pop(0)
            if page in seen:
                continue
            seen.add(page)
            rel = os.path.relpath(page, book)
            r = wd.session("POST", "/url", {"url": "file://" + urllib.parse.quote(page)})
            if r.get("value") not in (None, {}) and "error" in (r.get("value") or {}):
                fails.append(f"{rel}: the browser could not open it: {r['value'].get('message', r['value'])}")
                continue
            probe = wd.session("POST", "/execute/sync", {"script": PAGE_PROBE, "args": []}).get("value") or {}
            logs = wd.session("POST", "/se/log", {"type": "browser"}).get("value") or []
            bad = list(probe.get("bad", [])) if isinstance(probe, dict) else [f"probe failed: {probe}"]
            for e in logs if isinstance(logs, list) else []:
                if e.get("level") == "SEVERE":
                    bad.append(f"console {e.get('source', '')}: {e.get('message', '')[:300]}")
            if bad:
                fails += [f"{rel}: {b}" for b in bad]
            else:
                passed += 1
            for h in probe.get("links", []) if isinstance(probe, dict) else []:
                if not h:
                    continue
                t = os.path.normpath(os.path.join(os.path.dirname(page), urllib.parse.unquote(h)))
                if t.endswith(".html") and os.path.isfile(t) and t not in seen:
                    queue.append(t)
        if queue and time.time() - start >= DEADLINE_S:
            print(f"browser-check: stopped after {DEADLINE_S}s with {len(queue)} pages left")
    finally:
        wd.close()
    print(f"browser-check: opened {len(seen)} pages in headless Chromium in {time.time() - start:.1f}s")
    return passed, fails


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/book/browser-check.py", description=__doc__.split("\n")[0])
    ap.add_argument("--book", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "book"))
    ap.add_argument("--pages", type=int, default=400, help="open at most this many pages")
    args = ap.parse_args(argv)
    try:
        passed, fails = check(os.path.abspath(args.book), args.pages)
    except Skip as e:
        print(f"browser-check: SKIPPED: {e}")
        return 77
    for f in fails:
        print(f"FAIL {f}")
    print(f"browser-check: {passed} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
