#!/usr/bin/env bash
# The book's main line is readable on first reading: over chapters 00-09,
# median sentence <= 20 words, longest tenth <= 35, no paragraph over 150
# (tools/readability.py; fine print, code and tables are not main line).
# And no term arrives unexplained: in each chapter, the first use of every
# chapters/GLOSSARY.md term links to its entry or is its definition in
# italics (tools/glossary.py).
cd "$(dirname "$0")/../.."
p=0; f=0
if python3 tools/readability.py; then p=$((p + 1)); else f=$((f + 1)); fi
if python3 tools/glossary.py; then p=$((p + 1)); else f=$((f + 1)); fi
echo "$p passed, $f failed"
[ $f = 0 ]
