#!/usr/bin/env python3
"""build.py: render chapters/*.md into the browsable HTML book (make book).

One of the reader's tools. Offline, Python 3 standard library,
pandoc, graphviz and gnuplot. Output: build/book/ (open index.html).

  pages     chapters/NN-*.md in order, the glossary (chapters/GLOSSARY.md:
            one entry per term, each with its id, that a chapter's
            [term](GLOSSARY.md#id) links to), then notes.md and
            exercises/*/README.md (with the points and mutant tables
            tools/exercise.py generated into them); each with its table of
            contents and prev/next links
  listings  every src/*.c and src/*.h as a page with line anchors, so an
            inline label citation links to the exact lines
  figures   chapters/figures/*.dot -> figures/NAME.svg (graphviz)
  plots     {{plot NAME}} in a page -> plots/NAME.svg, drawn by tools/findings.py
            from the results FINDINGS.md used (a placeholder saying so when
            FINDINGS.md or its results are not there)
  citations resolved here (tools/anchors.py) and handed to the Lua filter
            tools/book/soloist.lua, which renders them

Usage: tools/book/build.py [--root DIR] [--out DIR] [--fetch]
"""

import argparse
import concurrent.futures
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
sys.path.insert(0, TOOLS)
import anchors  # noqa: E402  (tools/anchors.py)
import findings  # noqa: E402  (tools/findings.py: the plots)
import findings_refs  # noqa: E402  (tools/findings_refs.py)
import tryit  # noqa: E402  (tools/tryit.py: the try-it scripts)

pinned_source = anchors.pinned_source
MARKER = ".soloist-book"
PLACEHOLDER = "soloist-book: placeholder plot"


class BuildError(Exception):
    pass


def run(cmd, **kw):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    except FileNotFoundError:
        raise BuildError(f"{cmd[0]} is not installed (make deps installs it)")
    except subprocess.TimeoutExpired:
        raise BuildError(f"{' '.join(cmd[:3])}… took over 120 s")
    if r.returncode != 0:
        raise BuildError(f"{' '.join(cmd[:4])}… failed: {(r.stderr or r.stdout).strip()[:800]}")
    return r


def doc_title(path, fallback):
    fence = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^(`{3,}|~{3,})", line)
            if m:
                fence = None if fence and m.group(1)[0] == fence else (fence or m.group(1)[0])
                continue
            if not fence and line.startswith("# "):
                return line[2:].strip()
    return fallback


def listing_name(rel):
    return rel.replace("/", "-") + ".html"


def lua(v):
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        out = ['"']
        for b in v.encode("utf-8", "surrogateescape"):
            if b in (0x22, 0x5C):
                out.append("\\" + chr(b))
            elif b == 0x0A:
                out.append("\\n")
            elif b < 0x20 or b == 0x7F:
                out.append("\\%03d" % b)
            else:
                out.append(chr(b) if b < 0x80 else "\\%03d" % b)
        out.append('"')
        return "".join(out)
    if isinstance(v, dict):
        return "{" + ",".join(f"[{lua(k)}]={lua(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "{" + ",".join(lua(x) for x in v) + "}"
    raise TypeError(type(v))


class Book:
    def __init__(self, root, out, fetch=False, jobs=None):
        self.root = os.path.abspath(root)
        self.out = os.path.abspath(out)
        self.work = self.out.rstrip("/") + "-work"
        self.fetch = fetch
        self.jobs = jobs or max(2, os.cpu_count() or 2)
        self.pins = pinned_source.load_pins()
        self.source = pinned_source.PinnedSource(pins=self.pins, offline=not fetch)
        self.proj = anchors.Project(root=self.root, pins=self.pins, source=self.source)
        self.warnings = []
        self.notes = []
        self.finding_rows = findings_refs.load(self.root)
        self.captions = {}

    def rel(self, p):
        return os.path.relpath(p, self.root)

    # -- the pages ---------------------------------------------------------
    def reading_order(self):
        pages = []
        for p in anchors.chapters(self.root):
            name = os.path.basename(p)[:-3]
            pages.append({"src": p, "out": name + ".html", "kind": "chapter",
                          "title": doc_title(p, name)})
        glossary = os.path.join(self.root, "chapters", "GLOSSARY.md")
        if os.path.isfile(glossary):
            # its links from the chapters map to this page like any page's
            # (citation_data's page_map), its entries' ids kept as written
            pages.append({"src": glossary, "out": "glossary.html", "kind": "glossary",
                          "title": doc_title(glossary, "Glossary")})
        notes = os.path.join(self.root, "notes.md")
        if os.path.isfile(notes):
            pages.append({"src": notes, "out": "notes.html", "kind": "notes",
                          "title": doc_title(notes, "Questions and answers")})
        findings = os.path.join(self.root, "FINDINGS.md")
        if os.path.isfile(findings):
            pages.append({"src": findings, "out": "findings.html", "kind": "findings",
                          "title": "Findings: every measured row"})
        for p in sorted(glob.glob(os.path.join(self.root, "exercises", "*", "README.md"))):
            step = os.path.basename(os.path.dirname(p))
            pages.append({"src": p, "out": f"exercise-{step}.html", "kind": "exercise",
                          "title": doc_title(p, f"Exercise {step}")})
        return pages

    def source_files(self):
        files = []
        for ext in ("h", "c"):
            files += glob.glob(os.path.join(self.root, "src", f"*.{ext}"))
        return sorted(self.rel(f) for f in files)

    # -- figures and plots -------------------------------------------------
    def figures(self):
        done = []
        os.makedirs(os.path.join(self.out, "figures"), exist_ok=True)
        for dot in sorted(glob.glob(os.path.join(self.root, "chapters", "figures", "*.dot"))):
            name = os.path.basename(dot)[:-4]
            run(["dot", "-Tsvg", dot, "-o", os.path.join(self.out, "figures", name + ".svg")])
            done.append(name)
        for img in sorted(glob.glob(os.path.join(self.root, "chapters", "figures", "*"))):
            if img.endswith((".svg", ".png", ".jpg", ".jpeg", ".gif")):
                shutil.copy(img, os.path.join(self.out, "figures", os.path.basename(img)))
        return done

    def plots(self, pages):
        """Every {{plot NAME}} in the pages, drawn into plots/NAME.svg from
        the results directory FINDINGS.md lists for the plot's benchmark;
        self.captions[NAME] says what it was drawn from."""
        names = set()
        for pg in pages:
            with open(pg["src"], encoding="utf-8") as f:
                names.update(n for _, n in findings_refs.references(f.read(), findings_refs.PLOT_REF))
        if not names:
            return []
        os.makedirs(os.path.join(self.out, "plots"), exist_ok=True)
        used = findings_refs.used_results(self.root)
        for name in sorted(names):
            dest = os.path.join(self.out, "plots", name + ".svg")
            spec = findings.PLOTS.get(name)
            title = spec.title if spec else name
            if spec is None:
                why = "tools/findings.py draws no plot of this name"
                self.warnings.append(f"plot {name}: {why}")
            elif used is None:
                why = "not measured here yet: run `make findings`"
            elif spec.bench not in used:
                why = f"FINDINGS.md used no {spec.bench} results"
                self.warnings.append(f"plot {name}: {why}")
            else:
                src = os.path.join(used[spec.bench], spec.bench + ".jsonl")
                try:
                    findings.draw_plot(name, findings.Run(os.path.join(self.root, used[spec.bench])), dest,
                                       os.path.join(self.work, "plots"))
                    self.captions[name] = (f"{title}. Drawn by `tools/findings.py` from `{src}`, "
                                           "the results FINDINGS.md uses.")
                    continue
                except (findings.Refused, OSError, ValueError) as e:
                    why = str(e)
                    self.warnings.append(f"plot {name}: {why}")
            self._placeholder(dest, title, why)
            self.captions[name] = f"{title} ({why})."
            self.notes.append(f"plot {name}: placeholder ({why})")
        return sorted(names)

    @staticmethod
    def _placeholder(dest, title, why):
        svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="720" height="120" viewBox="0 0 720 120">'
               f'<!-- {PLACEHOLDER} -->'
               '<rect x="1" y="1" width="718" height="118" fill="#fbfaf6" stroke="#e2e0da"/>'
               f'<text x="360" y="52" text-anchor="middle" font-family="sans-serif" font-size="16">{html.escape(title)}</text>'
               f'<text x="360" y="80" text-anchor="middle" font-family="sans-serif" font-size="13" fill="#5b6670">{html.escape(why)}</text>'
               '</svg>\n')
        with open(dest, "w", encoding="utf-8") as f:
            f.write(svg)

    # -- citations -----------------------------------------------------------
    def upstream_entry(self, c, lock, hand):
        """What the book shows of one upstream citation: where it points at
        the pin, its lines when the source is here, else how far it was
        checked by hand (chapters/anchors.checked)."""
        pin, path, a, b = anchors.parse_upstream(c.text)
        p = self.pins[pin]
        entry = {"kind": "upstream", "pin": pin, "repo": p["repo"], "sha": p["sha"], "path": path,
                 "first": a, "last": b,
                 "url": f"https://github.com/{p['repo']}/blob/{p['sha']}/{path}#L{a}-L{b}",
                 "command": f"tools/pinned-source.py show {pin} {path} -r {a}:{b}"}
        if c.text in lock and lock[c.text]["first"] != "?":
            entry["locked_first"] = lock[c.text]["first"]
        try:
            entry["text"] = "\n".join(self.proj.upstream_span(c.text))
        except pinned_source.Unavailable:
            # not read at the pin here: say how far it was checked
            # (chapters/anchors.checked), never show it as checked
            h = hand.get(c.text)
            if h and h["where"] != "absent" and h["supports"] != "no":
                entry["checked"] = (f"Not read at the pin on this machine; checked by hand against "
                                    f"{h['copy']} ({'at the cited lines' if h['where'] == 'exact' else h['where'] + ' lines'})"
                                    + ("; only partly confirmed: " + h["note"] if h["supports"] == "partly" else "")
                                    + ".")
                entry["partly"] = h["supports"] == "partly"
            else:
                entry["unchecked"] = ("Unchecked: not read at the pin on this machine, and no public copy "
                                      "confirmed these lines" + (f" ({h['note']})" if h else "") + ".")
        except pinned_source.PinError as e:
            entry = {"kind": "upstream", "error": str(e)}
            self.warnings.append(f"{c.where()}: {c.text}: {e}")
        return entry

    def page_map(self, pages, listings):
        """{source path: page in the book} for every page, listing, figure
        and plot, so that a link to a source file lands on its page."""
        page_map = {}
        for pg in pages:
            page_map[self.rel(pg["src"])] = pg["out"]
        for rel in listings:
            page_map[rel] = listing_name(rel)
        for svg in glob.glob(os.path.join(self.out, "figures", "*")):
            base = os.path.basename(svg)
            page_map[f"chapters/figures/{base}"] = f"figures/{base}"
            if base.endswith(".svg"):
                page_map[f"chapters/figures/{base[:-4]}.dot"] = f"figures/{base}"
        for svg in glob.glob(os.path.join(self.out, "plots", "*.svg")):
            base = os.path.basename(svg)
            page_map[f"chapters/plots/{base}"] = f"plots/{base}"
            page_map[f"plots/{base}"] = f"plots/{base}"
        return page_map

    def citation_data(self, pages, listings):
        """Writes citations.lua, read by the Lua filter: what each citation
        shows, and the page map; -> (its path, the citations)."""
        cites = {}
        lock, _ = self.proj.read_lock()
        hand, _ = self.proj.read_checked()
        for c in self.proj.citations():
            if c.text in cites:
                continue
            kind = anchors.classify(c.text, self.pins)
            if kind == "label":
                region, why = self.proj.resolve_label(c.text)
                if region is None:
                    cites[c.text] = {"kind": "label", "error": why}
                    self.warnings.append(f"{c.where()}: unresolved citation {c.text}: {why}")
                    continue
                href = (listing_name(region.path) if region.path in listings else None)
                cites[c.text] = {"kind": "label", "path": region.path, "name": region.name,
                                 "first": region.first, "last": region.last, "text": "\n".join(region.lines),
                                 "href": (href + f"#L-{region.first}") if href else "#"}
            else:
                cites[c.text] = self.upstream_entry(c, lock, hand)
        page_map = self.page_map(pages, listings)
        data = os.path.join(self.work, "citations.lua")
        with open(data, "w", encoding="utf-8") as f:
            f.write("-- generated by tools/book/build.py; read by tools/book/soloist.lua\n")
            f.write("return " + lua({"cites": cites, "pages": page_map}) + "\n")
        return data, cites

    # -- pandoc --------------------------------------------------------------
    def common_args(self, data):
        args = ["pandoc", "-f", "markdown", "-t", "html5", "--standalone",
                "--template", os.path.join(HERE, "template.html"),
                "--lua-filter", os.path.join(HERE, "soloist.lua"),
                "--highlight-style", "tango", "--wrap", "none",
                "-M", f"soloist-data={data}"]
        for name in sorted(self.pins):
            p = self.pins[name]
            args += ["-V", f"pin={p['repo']}@{p['sha']}"]
        commit = self._commit()
        if commit:
            args += ["-V", f"commit={commit}"]
        return args

    def _commit(self):
        try:
            r = subprocess.run(["git", "-C", self.root, "rev-parse", "--short", "HEAD"],
                               capture_output=True, text=True, timeout=10)
            return r.stdout.strip() if r.returncode == 0 else None
        except OSError:
            return None

    def with_findings(self, src, kind):
        """A page that references FINDINGS.md rows ({{finding F0.N}}) or
        plots ({{plot NAME}}) is rendered from a copy with each row reference
        replaced by the row's figure and each plot by its image and caption
        (tools/findings_refs.py); FINDINGS.md itself gets an anchor per row.
        Other pages are rendered as they are."""
        if not src.startswith(self.root) or src.startswith(self.work):
            return src
        with open(src, encoding="utf-8") as f:
            text = f.read()
        if kind == "findings":
            new = findings_refs.anchor_rows(text)
        elif findings_refs.REF.search(text) or findings_refs.PLOT_REF.search(text) or tryit.REF.search(text):
            if self.finding_rows is None and findings_refs.REF.search(text):
                self.notes.append(f"{self.rel(src)}: FINDINGS.md does not exist yet; finding references say so")
            new = findings_refs.render_plots(findings_refs.render(text, self.finding_rows), self.captions)
            # {{try-it NN}}: the box shows the script that `make test` runs
            new = tryit.REF.sub(lambda m: tryit.render(m.group(1), self.root), new)
        else:
            return src
        path = os.path.join(self.work, "findings-" + self.rel(src).replace("/", "-"))
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        return path

    def render(self, base, src, out, kind, extra=()):
        doc = self.rel(src) if src.startswith(self.root) and not src.startswith(self.work) else "index.md"
        src = self.with_findings(src, kind)
        cmd = base + ["-M", f"soloist-doc={doc}",
                      "-V", f"kind={kind}", *extra, src, "-o", os.path.join(self.out, out)]
        r = run(cmd, cwd=self.root)
        for line in r.stderr.splitlines():
            if line.strip() and "unresolved citation" not in line:
                self.warnings.append(f"{out}: pandoc: {line.strip()}")

    def listing_doc(self, rel, regions):
        with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        run_len = max([len(m) for m in re.findall(r"`+", text)] + [2]) + 1
        fence = "`" * run_len
        lang = "c"
        labels = sorted(regions.values(), key=lambda r: r.open_line)
        lines = [f"# {rel}", ""]
        if labels:
            items = ", ".join(f"[{r.name}](#L-{r.first}) ({r.first}–{r.last}{', exercise' if r.kind == 'exercise' else ''})"
                              for r in labels)
            lines += [f"Labels cited by the book: {items}.", ""]
        lines += [f"{fence}{{#L .{lang} .numberLines startFrom=\"1\"}}", text.rstrip("\n"), fence, ""]
        path = os.path.join(self.work, "listing-" + rel.replace("/", "-") + ".md")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        return path

    def index_doc(self, pages, listings, figures, plots):
        chap = [p for p in pages if p["kind"] == "chapter"]
        lines = ["# soloist: the book", "",
                 "soloist is an annotated reimplementation, in C, of the I/O-thread design of Valkey, "
                 "composed into a real RESP server. Exactly one thread, the soloist, touches the keyspace "
                 "and runs commands; every other thread only accompanies it with I/O.", ""]
        lines += ["## Chapters", ""]
        if chap:
            for p in chap:
                lines.append(f"1. [{p['title']}]({p['out']})")
        else:
            lines.append("No chapters have been written yet: chapters/NN-name.md become this book's pages.")
        lines.append("")
        glossary = [p for p in pages if p["kind"] == "glossary"]
        if glossary:
            lines += ["## Glossary", "",
                      f"[{glossary[0]['title']}]({glossary[0]['out']}): the terms the chapters use "
                      "without stopping to explain them; a chapter links its first use of each.", ""]
        rest = [p for p in pages if p["kind"] not in ("chapter", "glossary")]
        if rest:
            lines += ["## Questions and exercises", ""]
            for p in rest:
                lines.append(f"- [{p['title']}]({p['out']})")
            lines.append("")
        if listings:
            lines += ["## Source", "", "Every file of soloist's `src/`, with line numbers; "
                      "a label citation in a chapter links to its lines here.", ""]
            lines.append(" · ".join(f"[{rel[4:]}]({listing_name(rel)})" for rel in listings))
            lines.append("")
        lines += ["## How citations work", "",
                  "A citation like `src/FILE.c@label` points at a labelled region of soloist's own code, "
                  "so it follows the code when lines move. A citation like `valkey:src/io_threads.c:514` "
                  "points at Valkey at the pinned commit; `make check-anchors` verifies both kinds, "
                  "and `tools/pinned-source.py show` prints the upstream lines.", ""]
        pins = ", ".join(f"`{n}` = {p['repo']}@{p['sha']}" for n, p in sorted(self.pins.items()))
        lines += [f"Pins: {pins}.", ""]
        path = os.path.join(self.work, "index.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        return path

    # -- the whole book --------------------------------------------------------
    def prepare_out(self):
        if os.path.exists(self.out):
            if os.listdir(self.out) and not os.path.exists(os.path.join(self.out, MARKER)):
                raise BuildError(f"{self.out} exists and is not a book this tool built; remove it or pick --out")
            shutil.rmtree(self.out)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.out)
        os.makedirs(self.work)
        with open(os.path.join(self.out, MARKER), "w") as f:
            f.write("built by tools/book/build.py\n")

    def build(self):
        self.prepare_out()
        pages = self.reading_order()
        figures = self.figures()
        plots = self.plots(pages)
        listings = self.source_files()
        data, cites = self.citation_data(pages, listings)
        shutil.copy(os.path.join(HERE, "book.css"), os.path.join(self.out, "book.css"))
        base = self.common_args(data)
        jobs = []
        order = pages
        for i, p in enumerate(order):
            extra = ["--toc", "--toc-depth=3"]
            if i > 0:
                extra += ["-V", f"prev-href={order[i - 1]['out']}", "-V", f"prev-title={order[i - 1]['title']}"]
            if i + 1 < len(order):
                extra += ["-V", f"next-href={order[i + 1]['out']}", "-V", f"next-title={order[i + 1]['title']}"]
            jobs.append((p["src"], p["out"], p["kind"], extra))
        first = order[0] if order else None
        idx_extra = (["-V", f"next-href={first['out']}", "-V", f"next-title={first['title']}"] if first else [])
        jobs.append((self.index_doc(pages, listings, figures, plots), "index.html", "index", idx_extra))
        for rel in listings:
            got = self.proj.markers(rel)
            regions = got[0] if got else {}
            jobs.append((self.listing_doc(rel, regions), listing_name(rel), "source",
                         ["-V", "source-note=" + f"soloist {rel}, as in this checkout."]))
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as ex:
            futs = [ex.submit(self.render, base, *j) for j in jobs]
            for f in futs:
                f.result()
        return {"pages": len(pages), "listings": len(listings), "figures": len(figures), "plots": len(plots),
                "citations": len(cites), "chapters": sum(1 for p in pages if p["kind"] == "chapter")}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/book/build.py", description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(TOOLS), help="project root")
    ap.add_argument("--out", default=None, help="output directory (default ROOT/build/book)")
    ap.add_argument("--fetch", action="store_true",
                    help="let upstream citations fetch from GitHub (default: clone and cache only)")
    args = ap.parse_args(argv)
    out = args.out or os.path.join(args.root, "build", "book")
    book = Book(args.root, out, fetch=args.fetch)
    try:
        stats = book.build()
    except (BuildError, pinned_source.PinError) as e:
        print(f"book: {e}", file=sys.stderr)
        return 1
    if stats["chapters"] == 0:
        print("book: no chapters in chapters/ yet; built the contents page and the source listings only")
    for n in book.notes:
        print(f"book: note: {n}")
    for w in book.warnings:
        print(f"book: WARNING {w}")
    print(f"book: {stats['chapters']} chapters, {stats['pages']} pages, {stats['listings']} source listings, "
          f"{stats['figures']} figures, {stats['plots']} plots, {stats['citations']} citations -> "
          f"{os.path.relpath(out)}/index.html")
    # A page that states a reading its row contradicts is a wrong page: the
    # book is built (so it can be read), and the build says so and fails.
    n, wrong = findings_refs.check_readings(args.root, findings_refs.book_documents(args.root))
    for where, rid, reading, why in wrong:
        print(f"book: FAIL {where}: {{{{finding {rid} | {reading or ''}}}}}: {why}")
    if wrong:
        print(f"book: {len(wrong)} of {n} readings of FINDINGS.md rows are contradicted or missing "
              "(tools/findings_refs.py readings)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
