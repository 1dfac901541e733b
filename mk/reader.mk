# mk/reader.mk — the reader's tools: checked anchors, the book,
# coverage, exercises and grading. Included by the top-level Makefile;
# tools/README.md documents every target and tool.

PYTHON ?= python3
STEP ?=
READER_STEP = $(if $(STEP),$(STEP),$(error give the step, e.g. make $@ STEP=0))

.PHONY: check-anchors anchors-lock book book-check coverage exercise grade check-exercises check-handouts \
        exercise-manifest exercise-points handout reader-print-cflags

check-anchors: ## verify every code citation in chapters/ (labels always; Valkey/Redis when the source is here)
	@$(PYTHON) tools/anchors.py check

anchors-lock: ## rewrite chapters/anchors.lock from the chapters' Valkey/Redis citations (needs the source; REFRESH=1 recomputes all)
	@$(PYTHON) tools/anchors.py lock $(if $(REFRESH),--refresh)

book: ## render chapters/*.md into the HTML book under build/book (offline)
	@$(PYTHON) tools/book/build.py

book-check: book ## build the book, check every link/figure/citation, then open it in headless Chromium
	@$(PYTHON) tools/book/check.py
	@$(PYTHON) tools/book/browser-check.py; rc=$$?; [ $$rc = 0 ] || [ $$rc = 77 ]

# The coverage build reuses the unit-test rules with VARIANT=coverage
# (-O0 --coverage) into build/coverage; counters are zeroed before the run.
coverage: ## lcov HTML report of the unit tests in build/coverage/html
	@$(MAKE) --no-print-directory -s -k VARIANT=coverage unit || \
	  echo "coverage: WARNING: some unit tests did not build (above); the report covers those that did"
	@lcov -q --zerocounters --directory build/coverage >build/coverage/lcov.log 2>&1
	@for t in build/coverage/tests/test_*; do case $$t in *.gc*) continue;; esac; [ -x "$$t" ] || continue; \
	  if "$$t" >>build/coverage/lcov.log 2>&1; then echo "coverage: ran $$t"; \
	  else echo "coverage: ran $$t (it reported failures; see build/coverage/lcov.log)"; fi; done
	@lcov --capture --directory build/coverage --output-file build/coverage/lcov.info \
	  --rc lcov_branch_coverage=1 >>build/coverage/lcov.log 2>&1
	@lcov --remove build/coverage/lcov.info '/usr/*' '*/tests/*' --output-file build/coverage/lcov.info \
	  --rc lcov_branch_coverage=1 >>build/coverage/lcov.log 2>&1
	@genhtml --branch-coverage --title "soloist unit tests" --output-directory build/coverage/html \
	  build/coverage/lcov.info >>build/coverage/lcov.log 2>&1 || { tail -5 build/coverage/lcov.log; exit 1; }
	@lcov --summary build/coverage/lcov.info --rc lcov_branch_coverage=1 2>&1 | grep -E '^ *(lines|functions|branches)'
	@echo "coverage: open build/coverage/html/index.html"

exercise: ## write a learner's starter copy of step STEP's module (exercises/NN-*/work/; FORCE=1 overwrites)
	@$(PYTHON) tools/exercise.py start $(READER_STEP) $(if $(FORCE),--force) $(if $(OUT),--out $(OUT))

grade: ## grade step STEP (SUBMISSION=file, or a directory for a step with several files; default the learner copy; SEED=, REPEAT=, FAST=1, RESULTS=json path; INTEGRATION=1 then runs the integration suite on the graded server)
	@$(PYTHON) tools/exercise.py grade $(READER_STEP) $(if $(SUBMISSION),--submission $(SUBMISSION)) \
	  $(if $(SEED),--seed $(SEED)) $(if $(REPEAT),--repeat $(REPEAT)) $(if $(FAST),--fast) \
	  $(if $(RESULTS),--results $(RESULTS)) $(if $(filter-out 0,$(INTEGRATION)),--integration)

check-exercises: ## prove for every step: starter fails, reference passes, every mutant is caught (FAST=1: -O2 once; SAMPLE=1: one mutant per part; MUTANTS=0: none)
	@$(PYTHON) tools/exercise.py check $(if $(FAST),--fast) $(if $(filter-out 0,$(SAMPLE)),--sample) $(if $(filter 0,$(MUTANTS)),--no-mutants) $(if $(STEP),--step $(STEP))

check-handouts: ## prove each step's handout grades that step on its own (structure for every step; E2E=1: grade starter and reference in every handout; STEP=N one step)
	@$(PYTHON) tools/exercise.py check-handouts $(if $(filter-out 0,$(E2E)),--e2e) $(if $(STEP),--step $(STEP) --e2e)

exercise-manifest: ## rewrite step STEP's test hash manifest after a deliberate change to its tests
	@$(PYTHON) tools/exercise.py manifest $(READER_STEP) --write

exercise-points: ## rewrite step STEP's README.md tables: points (exercise.json), mutants (the last check-exercises)
	@$(PYTHON) tools/exercise.py points $(READER_STEP) --write

handout: ## write the learner's tree for step STEP to build/handout/soloist-step-NN/ (step STEP's starter, every other step the reference, answers folded out); no STEP: one per step
	@$(PYTHON) tools/exercise.py handout $(if $(STEP),--step $(STEP))

reader-print-cflags:
	@echo '$(CFLAGS_ALL)'

# The grader's copies of the unit tests: the same test file, linked with
# tools/exercise_filter.c so one test can run alone (see that file). The
# grader builds once per candidate (starter, reference, each mutant), and
# a candidate changes the module, not the tests: compiled apart, a test's
# object is rebuilt only when a file it includes changed (its .d says
# which), and the binary is relinked against the candidate's library.
GRADE_OBJ := $(B)/grade-obj

$(GRADE_OBJ)/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(CMOCKA_CFLAGS) -Itests/unit -MMD -MP -c $< -o $@

$(GRADE_OBJ)/exercise_filter.o: tools/exercise_filter.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(CMOCKA_CFLAGS) -MMD -MP -c $< -o $@

# A crashed test's stack, printed when the grader reruns it to say where
# (tools/grade_crash.c; inert unless SOLOIST_CRASH_TRACE=1).
$(GRADE_OBJ)/grade_crash.o: tools/grade_crash.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/grade-tests/test_%: $(GRADE_OBJ)/test_%.o $(GRADE_OBJ)/exercise_filter.o $(GRADE_OBJ)/grade_crash.o $(LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(CMOCKA_LIBS) $(LDFLAGS_ALL) -Wl,--wrap=_cmocka_run_group_tests

-include $(wildcard $(GRADE_OBJ)/*.d)
