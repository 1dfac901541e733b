#!/usr/bin/env bash
# The repository stands alone and speaks of the project only. A reader has
# nothing but this tree, so no file may point at material outside it (a
# design document, research notes, source material kept elsewhere), and
# nothing may talk about how the project was made: who wrote which file,
# work-item numbers, the machines or tools it was built with. Sources are
# cited as what they are ("Valkey pull request #758", a pinned anchor).
# Every tracked text file is read; each pattern below is one count, and a
# hit is printed as file:line. Patterns are narrow on purpose: the seed of
# a PRNG, a SipHash seed, fuzz seeds and Valkey's own issue numbers are
# legitimate words.
cd "$(dirname "$0")/../.."
exec python3 - "$0" <<'EOF'
import os, re, subprocess, sys

SELF = os.path.relpath(sys.argv[1])
# (what it catches, regex, flags). A match is a failure unless `allowed`
# (below) says otherwise for that one match.
PATTERNS = [
    ("a design document outside the tree", r"\bDESIGN(?:\.md)?\b", 0),
    ("a path outside the tree", r"(?:\.\./|/work/|\b)shared/(?:research|seeds|hooks|DESIGN)|\.\./shared\b", 0),
    ("research notes kept outside the tree", r"\b(?:perf|teaching)-anchors(?:\.md)?\b|\bvalkey-facts\b", 0),
    ("source material called 'the seed'",
     r"\bseeds?'s?\s+(?:chapter|command|benchmark|GET|pin)|\bseed's\b|\bseeds'|\bseed[ _-]chapter"
     r"|(?:\b|_)the[ _]seed[ _](?:pin|chapter)|seed_get_pass", re.I),
    ("how it was made: a session", r"\b(?:the|this|a|each|next|previous|helper|agent|work|coding)\s+session\b"
     r"|\bsession's\b", re.I),
    ("how it was made: a work item", r"\(issue \d+\)|\bissue #?\d+\b|\bwork[- ]items?\b", re.I),
    ("how it was made: who wrote it",
     r"\bwritten by (?:the |a |an |its )?[\w' -]{0,40}?\b(?:author|engineer|lead|team|agent|helper|integrator)s?\b"
     r"|\b(?:the|its|an|whose) [\w' ]{0,30}?author\b|\b[Ww]ritten from the design\b", 0),
    ("how it was made: the team", r"\b(?:integrator|CEO)\b|\bthe lead's\b|\bhelper (?:brief|session|engineer|agent)s?\b"
     r"|\b(?:several|other|another) engineers?\b"
     r"|(?<![\w/])\.team\b", 0),
    ("how it was made: the machines and tools", r"\bdevice (?:tool|machine|time|budget|lease)\b|\blends? one\b"
     r"|\b(?:machine|device|box|GPU|host)s? (?:was |were |is )?lent\b|\blent (?:a |us |to us |this )?(?:machine|device|box|GPU)\b|\b(?:Claude|ChatGPT|LLM|AI assistant)\b", 0),
]
# An upstream project's issue or pull request is a source, cited as such.
UPSTREAM = re.compile(r"(?:Valkey|Redis|valkey-io/valkey|redis/redis|HdrHistogram|cmocka|glibc|Linux)[^.\n]{0,40}$", re.I)


def allowed(label, text, m):
    if label.endswith("a work item"):
        return bool(UPSTREAM.search(text[:m.start()]))
    return False


def tracked():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk("."):
            dirs[:] = [x for x in dirs if x not in (".git", "build")]
            files += [os.path.relpath(os.path.join(d, n)) for n in names]
        return files


# The patterns themselves, on words that must pass and words that must not.
LEGIT = ["a printed seed (SEED=N replays it)", "hashtable_set_hash_seed(seed)", "the seeds in corpus/resp remain",
         "Valkey issue #2065 says so", "Valkey's issue #1201 sweeps the rate", "start_new_session=True",
         "written by `make anchors-lock`", "written by the SIGINT handler", "the design, in soloist's words",
         "wd.session(\"POST\", \"/url\")", "sb_rng_seed(&r, seed)", "# Written by bench/run.py", "helpers",
         "the shared buffer is lent to at most one client"]
OFFENDERS = ["see DESIGN.md", "../shared/seeds/000.txt", "perf-anchors.md", "the seed's command lines",
             "the seeds' benchmarks", "test_ref_prints_the_seed_pin", "soloist-bench (issue 4). Owns",
             "work item 7", "(written by the load generator's author.)", "Written from the design.",
             "the integrator removes it", "the lead's server.c", "where the device tool lends one",
             "shared by several engineers", "the helper brief", "the session's notes",
             "when a machine was lent", "the task was lent a machine"]
selftest = []
for t in LEGIT:
    bad = [label for label, rx in [(l, re.compile(r, fl)) for l, r, fl in PATTERNS]
           if any(not allowed(label, t, m) for m in rx.finditer(t))]
    if bad:
        selftest.append("legitimate %r trips %s" % (t, bad[0]))
for t in OFFENDERS:
    if not any(not allowed(l, t, m) for l, r, fl in PATTERNS for m in re.compile(r, fl).finditer(t)):
        selftest.append("offender %r is not caught" % t)

files = [f for f in tracked() if f != SELF and not f.startswith("bench/results/") and os.path.isfile(f)]
hits = {label: [] for label, _, _ in PATTERNS}
compiled = [(label, re.compile(rx, fl)) for label, rx, fl in PATTERNS]
for f in sorted(files):
    try:
        with open(f, "rb") as fh:
            data = fh.read()
    except OSError:
        continue
    if b"\0" in data[:8192]:
        continue  # binary
    for no, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        for label, rx in compiled:
            if any(not allowed(label, line, m) for m in rx.finditer(line)):
                hits[label].append("%s:%d: %s" % (f, no, line.strip()[:160]))
passed = failed = 0
if selftest:
    failed += 1
    print("FAIL the patterns themselves:")
    for t in selftest:
        print("  " + t)
else:
    passed += 1
    print("ok   the patterns pass %d legitimate phrases and catch %d offenders" % (len(LEGIT), len(OFFENDERS)))
for label, _, _ in PATTERNS:
    if hits[label]:
        failed += 1
        print("FAIL %s (%d):" % (label, len(hits[label])))
        for h in hits[label]:
            print("  " + h)
    else:
        passed += 1
        print("ok   no %s" % label)
print("standalone: %d tracked text files read" % len(files))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
