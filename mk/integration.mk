# mk/integration.mk — step 0's end-to-end tests (tests/integration/).
#
#   make integration-client   build the C RESP client test (cmocka, libc only)
#   make integration          run the integration suites' body against
#                             build/soloist-server (the same as suite 30)
# The suites themselves are tests/suites/30-integration.sh and
# 35-integration-asan.sh; tests/integration/README.md says what they do.

INTEGRATION_CLIENT := $(B)/tests-integration/c_client

.PHONY: integration-client integration

$(INTEGRATION_CLIENT): tests/integration/c_client.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(CMOCKA_CFLAGS) -o $@ $< $(CMOCKA_LIBS) $(VFLAGS)

# Part of `make all`, so that suites 30 and 35, which tests/run.sh runs
# side by side, both find it built and neither writes it under the other.
all: $(INTEGRATION_CLIENT)

integration-client: $(INTEGRATION_CLIENT) ## build the C RESP client test of the real server (tests/integration/c_client.c)

integration: $(SERVER) $(INTEGRATION_CLIENT) ## run the transcripts, integration tests and C client against build/soloist-server (VARIANT=asan: build/asan/soloist-server)
	@python3 tests/integration/run_all.py --target $(SERVER) --c-client $(INTEGRATION_CLIENT)
