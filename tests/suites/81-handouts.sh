#!/usr/bin/env bash
# A course runs from the handout: for every step, the handout cut for it
# is the full tree but for that step's starters and the folded answers, and
# its manifests hold; end to end for step 4 (the step that needs the most
# of the others' code), the bare starter graded in place scores zero with
# each failure's reason shown, and with step 4's regions written it scores
# full marks. The long run (SOLOIST_LONG=1, `make check-long`) does the end
# to end for every step (`make check-handouts E2E=1`).
cd "$(dirname "$0")/../.."
if [ "${SOLOIST_LONG:-0}" = 1 ]; then
  exec timeout 5000 python3 tools/exercise.py check-handouts --e2e
fi
exec timeout 600 python3 tools/exercise.py check-handouts --e2e-step 4
