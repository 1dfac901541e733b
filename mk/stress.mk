# mk/stress.mk — fuzzing and stress runs (tests/stress/, suite 36).
#
#   make fuzz-build   build build/fuzz/fuzz_resp (clang, libFuzzer+ASan+UBSan)
#   make fuzz         fuzz the RESP parser for FUZZ_TIME seconds (default 600)
#   make stress       the randomized client run against the ASan+UBSan server
# Suite 36 runs both, bounded: in `make test` a 20 s fuzz beside 25 s of
# stress rounds, in `make check-long` 120 s and up to 40 rounds.
# tests/stress/README.md says what each checks and how to replay a failure.
#
# The fuzz target is built apart from the variants: libFuzzer needs clang,
# and -fsanitize=fuzzer instruments every file it links, so it compiles the
# three modules the parser needs (resp, object, zmalloc) itself.

FUZZ_CC ?= clang
FUZZ_DIR := build/fuzz
FUZZ_BIN := $(FUZZ_DIR)/fuzz_resp
FUZZ_SRCS := tests/stress/fuzz_resp.c src/resp.c src/object.c src/zmalloc.c
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 $(WARN) -Isrc -fno-omit-frame-pointer \
              -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_TIME ?= 600
FUZZ_MAX_LEN ?= 8192
STRESS_ROUNDS ?= 40
STRESS_SEED ?=

.PHONY: fuzz-build fuzz stress stress-threads

$(FUZZ_BIN): $(FUZZ_SRCS) $(wildcard src/*.h) mk/stress.mk
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_SRCS) -lm

fuzz-build: $(FUZZ_BIN) ## build the RESP parser's libFuzzer target (build/fuzz/fuzz_resp; needs clang)

fuzz: $(FUZZ_BIN) ## fuzz the RESP parser for FUZZ_TIME seconds (default 600); a crash is saved and printed in hex
	@tests/stress/fuzz.sh $(FUZZ_TIME) $(FUZZ_MAX_LEN)

stress: ## random pipelines, garbage and vanishing clients against the ASan+UBSan server, then stress-threads (STRESS_SEED, STRESS_ROUNDS)
	@$(MAKE) --no-print-directory -s VARIANT=asan server
	@ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  python3 tests/stress/stress.py --server build/asan/soloist-server --rounds $(STRESS_ROUNDS) \
	  $(if $(STRESS_SEED),--seed $(STRESS_SEED))
	@$(MAKE) --no-print-directory -s stress-threads

stress-threads: ## the chaos run of steps 4-5, long: stress.py with io-threads flipped 1..4 at random, under TSan then ASan (STRESS_SEED, STRESS_ROUNDS)
	@$(MAKE) --no-print-directory -s VARIANT=tsan server
	@$(MAKE) --no-print-directory -s VARIANT=asan server
	@TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1" \
	  python3 tests/stress/stress.py --server build/tsan/soloist-server --rounds $(STRESS_ROUNDS) --time-budget 600 \
	  --server-arg "--io-threads 3 --io-threads-always-active yes" --flip-io-threads 4 $(if $(STRESS_SEED),--seed $(STRESS_SEED))
	@ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  python3 tests/stress/stress.py --server build/asan/soloist-server --rounds $(STRESS_ROUNDS) --time-budget 600 \
	  --server-arg "--io-threads 4 --io-threads-always-active yes" --flip-io-threads 4 $(if $(STRESS_SEED),--seed $(STRESS_SEED))
