#!/usr/bin/env bash
# make check-anchors: every label citation in chapters/, notes.md and the
# exercise READMEs resolves in today's source, every marker is well formed,
# and every Valkey/Redis citation is in chapters/anchors.lock and matches
# the pinned source when the source is on this machine (otherwise they are
# reported as not checked, and not counted as passed). Then every Valkey
# fact in the chapters names its version and has its record in
# chapters/facts/ (tools/valkey_facts.py check), counted as one more check.
cd "$(dirname "$0")/../.."
export SOLOIST_OFFLINE=1
out=$(make --no-print-directory -s check-anchors 2>&1); rc=$?
echo "$out"
line=$(grep -E '^check-anchors: [0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
if [ -z "$line" ]; then echo "check-anchors printed no count (exit $rc)"; echo "0 passed, 1 failed"; exit 1; fi
p=$(sed -E 's/^check-anchors: ([0-9]+) passed.*/\1/' <<<"$line")
f=$(sed -E 's/^check-anchors: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
if python3 tools/valkey_facts.py check; then p=$((p + 1)); else f=$((f + 1)); fi
echo "$p passed, $f failed"
[ "$f" = 0 ]
