# mk/bench.mk — the benchmarks (step 0's, the queues of steps 1-3, step 8's sorted set, the lists', hashes' and sets') and the FINDINGS.md generator.
#
#   make bench          run the benchmarks into bench/results/<date>-<host>-<commit>/
#   make findings       the same, then regenerate FINDINGS.md from the results,
#                       and list the book's readings that this machine's
#                       results contradict (information, not a failure)
#   make findings-only  regenerate FINDINGS.md from the kept results, no rerun
#   make trace          record short TRACE runs (bench/trace_runs.py), draw
#                       the chapters' trace figures, regenerate FINDINGS.md
# Knobs: QUICK=1 (development sizes, about a minute in all), BENCH=name[,name]
# (only these: server_vs_redis write_cost pipeline_span phase_shares
# write_timing loadgen_sanity idle_memory p1_anatomy queues prefetch_micro zset_memory
# zset_ranges watermark poll_offload idle_spin main_syscalls idle_line score_print big_values
# redis_defaults types_memory trace_cost trace_runs beside_valkey server_vs_redis_pinned), PINNED=1 (adds the pinned
# configuration of server_vs_redis), BENCH_STANDIN=1 (measure redis-server
# on both sides when soloist does not answer; every row says so),
# VALKEY_SERVER=path (Valkey built from source: the peer of beside_valkey,
# idle_spin and others).
# Benchmarks are not tests: nothing here is part of `make test`.

BENCH_BIN := $(B)/bench
WRITE_COST := $(BENCH_BIN)/write_cost
# Steps 1-3's queue benchmark: the library's rings against Concurrency
# Kit's ck_ring (Debian's libck-dev).
QUEUES := $(BENCH_BIN)/queues
# Step 8's sorted-set load: pipelined ZADD NX and range queries.
ZSET_LOAD := $(BENCH_BIN)/zset_load
# The lists', hashes' and sets' load: pipelined variadic RPUSH, HSET, SADD.
TYPES_LOAD := $(BENCH_BIN)/types_load
# The load generator write_timing drives; its rule is in mk/soloist-bench.mk
# (read after this file, so its variable is not set yet here).
LOADGEN := $(B)/soloist-bench
# Step 6's prefetch micro-benchmark: the library's hash table.
PREFETCH_MICRO := $(BENCH_BIN)/prefetch_micro
# Step 5's cost of a mark: the library's client_io_mark_write.
MARK_COST := $(BENCH_BIN)/mark_cost
# Step 4's sleeping hand-shakes: what the idle words cost main per submit.
IDLE_LINE := $(BENCH_BIN)/idle_line
# Step 8's cost of printing a score: the library's util_d_to_string.
SCORE_PRINT := $(BENCH_BIN)/score_print
# Step 7's loopback ceiling, and the client that reads every large-value
# cell (bench/big_values.py): no library, the kernel alone.
WIRE_CEILING := $(BENCH_BIN)/wire_ceiling
# The server without trace points (VARIANT=notrace), which
# bench/trace_cost.py measures the default build against. Always made by
# recursion, so its own tree's dependencies decide whether it is stale.
NOTRACE_SERVER := build/notrace/soloist-server

.PHONY: bench findings findings-only bench-build notrace-server trace

notrace-server: ## build build/notrace/soloist-server: the server with every trace point compiled out
	@$(MAKE) --no-print-directory -s VARIANT=notrace server

$(WRITE_COST): bench/write_cost.c
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

$(QUEUES): bench/queues.c bench/bench_bound.h $(LIB)
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB) $(LDFLAGS_ALL) -lck

$(PREFETCH_MICRO): bench/prefetch_micro.c bench/bench_bound.h $(LIB)
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB) $(LDFLAGS_ALL)

$(MARK_COST): bench/mark_cost.c $(LIB)
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB) $(LDFLAGS_ALL)

$(IDLE_LINE): bench/idle_line.c bench/bench_bound.h $(LIB)
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB) $(LDFLAGS_ALL)

$(SCORE_PRINT): bench/score_print.c bench/bench_bound.h $(LIB)
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB) $(LDFLAGS_ALL)

$(WIRE_CEILING): bench/wire_ceiling.c
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

$(ZSET_LOAD): bench/zset_load.c bench/bench_pipe.h
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

$(TYPES_LOAD): bench/types_load.c bench/bench_bound.h bench/bench_pipe.h
	@mkdir -p $(BENCH_BIN)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

bench-build: $(SERVER) $(WRITE_COST) $(QUEUES) $(PREFETCH_MICRO) $(MARK_COST) $(IDLE_LINE) $(SCORE_PRINT) $(WIRE_CEILING) $(ZSET_LOAD) $(TYPES_LOAD) $(LOADGEN) notrace-server ## build the server and the benchmark binaries

BENCH_RUN = QUICK="$(QUICK)" BENCH="$(BENCH)" PINNED="$(PINNED)" BENCH_STANDIN="$(BENCH_STANDIN)" \
  SOLOIST_BIN="$(abspath $(SERVER))" WRITE_COST_BIN="$(abspath $(WRITE_COST))" \
  SOLOIST_BENCH_BIN="$(abspath $(LOADGEN))" QUEUES_BIN="$(abspath $(QUEUES))" \
  PREFETCH_MICRO_BIN="$(abspath $(PREFETCH_MICRO))" MARK_COST_BIN="$(abspath $(MARK_COST))" \
  IDLE_LINE_BIN="$(abspath $(IDLE_LINE))" ZSET_LOAD_BIN="$(abspath $(ZSET_LOAD))" \
  TYPES_LOAD_BIN="$(abspath $(TYPES_LOAD))" \
  SCORE_PRINT_BIN="$(abspath $(SCORE_PRINT))" \
  WIRE_CEILING_BIN="$(abspath $(WIRE_CEILING))" \
  SOLOIST_NOTRACE_BIN="$(abspath $(NOTRACE_SERVER))" \
  BENCH_BUILD_FLAGS="$(CFLAGS_ALL)" python3 bench/run.py

bench: deps-check $(SERVER) $(WRITE_COST) $(QUEUES) $(PREFETCH_MICRO) $(MARK_COST) $(IDLE_LINE) $(SCORE_PRINT) $(WIRE_CEILING) $(ZSET_LOAD) $(TYPES_LOAD) $(LOADGEN) notrace-server ## run the benchmarks (step 0, queues of steps 1-3) into bench/results/ (QUICK=1, BENCH=name, PINNED=1)
	@$(BENCH_RUN)

# A benchmark that fails still leaves the others' results: FINDINGS.md is
# regenerated from what was measured, and the failure is the exit status.
findings: deps-check $(SERVER) $(WRITE_COST) $(QUEUES) $(PREFETCH_MICRO) $(MARK_COST) $(IDLE_LINE) $(SCORE_PRINT) $(WIRE_CEILING) $(ZSET_LOAD) $(TYPES_LOAD) $(LOADGEN) notrace-server ## run the benchmarks, then regenerate FINDINGS.md from their raw results
	@$(BENCH_RUN); rc=$$?; \
	  python3 tools/findings.py --plots $(if $(filter-out 0,$(QUICK)),--include-quick) || exit $$?; \
	  python3 tools/findings_refs.py readings --report; exit $$rc

findings-only: ## regenerate FINDINGS.md from the kept results in bench/results/ (no rerun)
	@python3 tools/findings.py --plots && python3 tools/findings_refs.py readings --report

# The traces: one benchmark, then the figures drawn from the traces it kept
# into chapters/figures/ (so a figure and the rows its paragraph reads come
# from one results directory), then FINDINGS.md as findings-only writes it.
trace: deps-check $(SERVER) $(LOADGEN) ## record short TRACE runs into bench/results/ (bench/trace_runs.py), draw the chapters' trace figures (tools/trace.py), regenerate FINDINGS.md; under a minute
	@dir=$$($(BENCH_RUN) --only trace_runs) || exit $$?; \
	  python3 bench/trace_runs.py --draw "$$dir" chapters/figures || exit $$?; \
	  python3 tools/findings.py && python3 tools/findings_refs.py readings --report
