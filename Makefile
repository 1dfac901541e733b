# soloist — every entry point. `make help` lists them.
#
# Layout of the build (all under build/, never committed):
#   build/            -O2 -g, the server, the tools, unit tests
#   build/asan/       the same sources with ASan+UBSan
#   build/tsan/       the same sources with ThreadSanitizer
#   build/notrace/    -O2 with every trace point compiled out (trace.h)
# One variant is chosen with VARIANT=default|asan|tsan|o0|notrace; the
# other trees are built by recursive make so the rules below are written once.

.DEFAULT_GOAL := all
SHELL := /bin/bash

VARIANT ?= default
# CHECKS: checks compiled into the debug and sanitizer builds only.
# SOLOIST_ASSERT_THREADS makes ASSERT_MAIN_THREAD() (io_threads.h) check
# that a main-only function runs on main; the -O2 build keeps assert()
# but not this, and coverage measures the code as the -O2 build runs it.
CHECKS :=
# BUILDS: what a variant compiles in or out of the server itself.
BUILDS :=
ifeq ($(VARIANT),default)
  B := build
  VFLAGS := -O2
else ifeq ($(VARIANT),o0)
  B := build/o0
  VFLAGS := -O0
  CHECKS := -DSOLOIST_ASSERT_THREADS
else ifeq ($(VARIANT),asan)
  B := build/asan
  VFLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  CHECKS := -DSOLOIST_ASSERT_THREADS
else ifeq ($(VARIANT),tsan)
  B := build/tsan
  VFLAGS := -O1 -fsanitize=thread -fno-omit-frame-pointer
  CHECKS := -DSOLOIST_ASSERT_THREADS
else ifeq ($(VARIANT),coverage)
  B := build/coverage
  VFLAGS := -O0 --coverage
else ifeq ($(VARIANT),notrace)
  # The default build less its trace points: the baseline against which
  # bench/trace_cost.py measures what they cost while recording is off.
  B := build/notrace
  VFLAGS := -O2
  BUILDS := -DSOLOIST_NO_TRACE
else
  $(error VARIANT must be default, o0, asan, tsan, coverage or notrace)
endif

CC ?= cc
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g -pthread $(WARN) -Isrc
CFLAGS ?=
CFLAGS_ALL := $(CFLAGS_BASE) $(VFLAGS) $(CHECKS) $(BUILDS) $(CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS_ALL := -pthread $(VFLAGS) $(LDFLAGS) -lm

# SRC_OVERRIDE lets the grader build the server against a learner's copy
# of one module: `make SRC_OVERRIDE=path/to/resp.c` replaces src/resp.c.
# Such a build goes to its own directory (unless B is given), so its
# objects and dependency files never mix with the reference build's.
LIB_SRCS := $(filter-out src/main.c,$(wildcard src/*.c))
ifneq ($(SRC_OVERRIDE),)
  LIB_SRCS := $(filter-out src/$(notdir $(SRC_OVERRIDE)),$(LIB_SRCS)) $(SRC_OVERRIDE)
  ifeq ($(origin B),file)
    B := $(B)/override-$(subst /,_,$(basename $(SRC_OVERRIDE)))
  endif
endif
LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(notdir $(LIB_SRCS)))
LIB := $(B)/libsoloist.a
SERVER := $(B)/soloist-server

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
CMOCKA_CFLAGS = $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

# The override's directory comes first so its file wins over src/'s.
vpath %.c $(if $(SRC_OVERRIDE),$(dir $(SRC_OVERRIDE))) src

.PHONY: all server unit help deps test format format-check check-all check-long test-fast run clean
all: deps-check $(SERVER) $(UNIT_BINS) ## build the server, the tools and the unit tests

server: $(SERVER) ## build build/soloist-server only

$(B)/obj/%.o: %.c | $(B)/obj
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/obj:
	@mkdir -p $@ $(B)/tests

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(SERVER): $(B)/obj/main.o $(LIB)
	$(CC) -o $@ $^ $(LDFLAGS_ALL)

$(B)/tests/test_%: tests/unit/test_%.c $(LIB) | $(B)/obj
	$(CC) $(CFLAGS_ALL) $(CMOCKA_CFLAGS) -Itests/unit -o $@ $< $(LIB) $(CMOCKA_LIBS) $(LDFLAGS_ALL)

# make unit TEST=name builds and runs one unit test binary, NAME or
# test_NAME (tests/unit/test_NAME.c -> build/tests/test_NAME); without
# TEST it builds them all and runs none (suite 10 runs them).
UNIT_ONE := $(if $(TEST),$(B)/tests/test_$(patsubst test_%,%,$(basename $(notdir $(TEST)))))
unit: $(if $(TEST),$(if $(wildcard $(patsubst $(B)/tests/%,tests/unit/%.c,$(UNIT_ONE))),$(UNIT_ONE)),$(UNIT_BINS)) ## build the cmocka unit tests; TEST=name builds and runs one (build/tests/test_NAME)
ifneq ($(TEST),)
	@test -f $(patsubst $(B)/tests/%,tests/unit/%.c,$(UNIT_ONE)) || \
	  { echo "make unit: no $(patsubst $(B)/tests/%,tests/unit/%.c,$(UNIT_ONE)) (TEST=$(TEST))"; exit 2; }
	$(UNIT_ONE)
endif

-include $(LIB_OBJS:.o=.d) $(B)/obj/main.d

# Fragments: each area of the project owns one (the load generator, the
# reader's tools, the benchmarks…) and adds its targets and `help` lines.
include $(sort $(wildcard mk/*.mk))

# Installing packages is not part of the tests' time: it prints its own
# line, before the build and the suites that tests/run.sh times.
deps: ## install the Debian packages soloist needs (as root), or print the apt-get line
	@t0=$$(date +%s); tools/deps.sh install; rc=$$?; \
	  echo "deps: $$(( $$(date +%s) - t0 ))s checking and installing packages (not counted in the test time)"; exit $$rc

deps-check:
	@tools/deps.sh check-build

# The C style is .clang-format's (Debian's clang-format 14); src/ and the
# C files beside it (tests, bench, tools) are kept in it. make test checks.
FORMAT_FILES = $(wildcard src/*.[ch] tests/unit/*.[ch] bench/*.[ch] tools/*.[ch] tests/integration/*.c tests/stress/*.c)
format: ## rewrite the C sources in the project's style (.clang-format)
	@clang-format -i $(FORMAT_FILES)
format-check: ## fail, naming the files, where a C source is not in the project's style
	@tools/format-check.sh $(FORMAT_FILES)

test: deps ## build everything and run every suite; prints each suite's time, the total, and "N passed, M failed"
	@tests/run.sh --build

check-all: test ## make test, then the long runs (make check-long)
	@$(MAKE) --no-print-directory -s check-long

# The long runs are the suites' own (SOLOIST_LONG=1): each suite that has
# one says in its header what it runs in `make test` and what it leaves
# here. Together the two runs prove everything once.
LONG_SUITES := 26 31 36 37 40 50 70 72 80 81
check-long: deps-check ## the long runs alone: TSan repetitions, fuzzing and chaos at length, the load generator under the sanitizers, every mutant of every exercise, every handout end to end
	@SOLOIST_LONG=1 SOLOIST_SUITES="$(LONG_SUITES)" tests/run.sh

test-fast: deps-check ## the suites without the sanitizer and browser runs
	@SOLOIST_FAST=1 tests/run.sh --build

run: deps-check $(SERVER) ## build and start the server on 127.0.0.1:6379 (Valkey's defaults)
	$(SERVER) --port 6379 --bind 127.0.0.1

clean: ## remove build/
	rm -rf build

# The first screen a newcomer reads: what to type first, then every
# target with its `##` line, in alphabetical order.
help: ## list every target
	@echo "Start here:"
	@printf '  %-24s %s\n' \
	  "make deps" "install the Debian packages soloist needs (as root), or print the apt-get line" \
	  "make" "build the server, the tools and the unit tests into build/" \
	  "make run" "build and start the server on 127.0.0.1:6379" \
	  "make test" "build everything and run every suite (about 8 minutes; tests/README.md)" \
	  "make unit TEST=name" "build and run one unit test, build/tests/test_NAME (tests/unit/test_NAME.c)" \
	  "make format" "put the C sources in the project's style (suite 14 checks it)" \
	  "make book" "render the book (chapters/) into build/book/" \
	  "make exercise STEP=N" "write your starter copy of step N's module (exercises/)" \
	  "make grade STEP=N" "grade your copy of step N" \
	  "make handout STEP=N" "write the learner's tree for step N to build/handout/" \
	  "make findings-only" "regenerate FINDINGS.md from the kept results (no rerun)" \
	  "make check-long" "the long runs make test leaves out"
	@echo "  One suite: SOLOIST_SUITES=\"10\" tests/run.sh (tests/suites/NN-*.sh; logs in build/test-logs/)"
	@echo
	@echo "Every target:"
	@grep -hE '^[a-zA-Z_.-]+:.*## ' $(MAKEFILE_LIST) | sort -u | \
	  awk 'BEGIN{FS=":.*## "}{printf "  make %-18s %s\n",$$1,$$2}'
