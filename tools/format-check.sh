#!/usr/bin/env bash
# Names each C file that clang-format (with .clang-format) would change,
# with the first lines of the change, and exits 1 if there is one.
#   tools/format-check.sh FILE...      (make format-check passes the list)
# `make format` rewrites them; a learner's handout is not checked.
set -u
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format-check: clang-format is not installed (make deps)" >&2; exit 2; }
# One clang-format for every file first (its start-up is most of the
# cost); only when that finds something is each file diffed for the report.
if clang-format --dry-run -Werror "$@" >/dev/null 2>&1; then
  echo "format-check: $# files, 0 not formatted"
  exit 0
fi
bad=0
for f in "$@"; do
  d=$(clang-format "$f" | diff -u "$f" - | tail -n +3)
  if [ -n "$d" ]; then
    bad=$((bad + 1))
    echo "format-check: $f is not in the project's style (make format); first differences:"
    echo "$d" | head -12 | sed 's/^/    /'
  fi
done
echo "format-check: $# files, $bad not formatted"
[ "$bad" = 0 ]
