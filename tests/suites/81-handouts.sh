#!/usr/bin/env bash
# A course runs from the handout: for every step, the handout cut for it
# is the full tree but for that step's starters and the folded answers, and
# its manifests hold. The long run (SOLOIST_LONG=1, `make check-long`,
# which CI runs) grades every step's handout end to end (`make
# check-handouts E2E=1`): the bare starter graded in place scores zero
# with each failure's reason shown, and with the step's regions written it
# scores full marks. make test leaves that to it (its time is budgeted);
# tests/tools/test_exercise.py's Handout tests grade a fixture's handout
# in place in make test.
cd "$(dirname "$0")/../.."
if [ -f exercises/HANDOUT ]; then
  # a handout is cut from the full tree, and holds neither the reference
  # solutions nor the mutants this check grades
  echo "skipped: this is a handout; handouts are cut and checked in the full soloist tree (make check-handouts)"
  echo "0 passed, 0 failed"
  exit 0
fi
if [ "${SOLOIST_LONG:-0}" = 1 ]; then
  exec timeout 5000 python3 tools/exercise.py check-handouts --e2e
fi
exec timeout 600 python3 tools/exercise.py check-handouts
