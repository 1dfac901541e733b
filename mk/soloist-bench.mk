# mk/soloist-bench.mk — the load generator. Sources: tools/soloist-bench/.
# -I$(SB_DIR) comes first: src/ has headers of the same names (config.h).
# It links nothing of libsoloist but src/zmalloc.c (the project's allocator,
# libc only), so it builds and runs even while the server does not.
SB_DIR := tools/soloist-bench
SB_SRCS := $(filter-out $(SB_DIR)/main.c,$(wildcard $(SB_DIR)/*.c))
SB_OBJS := $(patsubst $(SB_DIR)/%.c,$(B)/sb-obj/%.o,$(SB_SRCS)) $(B)/sb-obj/zmalloc.o
SB_LIB := $(B)/sb-obj/libsoloist-bench.a
SB_BIN := $(B)/soloist-bench
SB_TEST_SRCS := $(wildcard $(SB_DIR)/tests/test_*.c)
SB_TEST_BINS := $(patsubst $(SB_DIR)/tests/%.c,$(B)/tests-bench/%,$(SB_TEST_SRCS))

.PHONY: soloist-bench soloist-bench-tests
all: $(SB_BIN)

soloist-bench: $(SB_BIN) ## build build/soloist-bench, the load generator (--help lists its options)

soloist-bench-tests: $(SB_TEST_BINS) ## build the load generator's cmocka tests into build/tests-bench/

$(B)/sb-obj/%.o: $(SB_DIR)/%.c | $(B)/sb-obj
	$(CC) -I$(SB_DIR) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/sb-obj/zmalloc.o: src/zmalloc.c | $(B)/sb-obj
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/sb-obj:
	@mkdir -p $@ $(B)/tests-bench

$(SB_LIB): $(SB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(SB_BIN): $(B)/sb-obj/main.o $(SB_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_ALL)

$(B)/tests-bench/test_%: $(SB_DIR)/tests/test_%.c $(SB_LIB) | $(B)/sb-obj
	$(CC) -I$(SB_DIR) $(CFLAGS_ALL) $(CMOCKA_CFLAGS) -o $@ $< $(SB_LIB) $(CMOCKA_LIBS) $(LDFLAGS_ALL)

-include $(SB_OBJS:.o=.d) $(B)/sb-obj/main.d
