/* test_command_lookup.c — the command table looked up by the thread that
 * parsed (src/commands.c@lookup-queued), and the dispatcher's use of it.
 *
 * Step 4's read job: a worker that parsed a pipeline also finds each
 * command's table entry (parsed_cmd.cmd), as Valkey 8.0's read job does
 * for its one command (io_parsed_cmd), so main does not. These tests call
 * commands_lookup_queued on a fake client (fd -1) whose queue the parser
 * filled, then hand an entry to process_command. The worker's side under
 * threads is exercised by the integration suites at io-threads 4 and
 * under ThreadSanitizer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "client.h"
#include "client_io.h"
#include "commands.h"
#include "config.h"
#include "memory_prefetch_test.h"
#include "networking.h"
#include "server.h"
#include "server_loop.h"
#include "util.h"
#include "zmalloc.h"

#include "expect.h"
#include "pipeline_test.h"

/* Every queued command without an entry gets its own, whatever the case
 * of its name; an unknown name stays NULL; an entry already found is not
 * looked up again. */
static void test_queued_commands_looked_up(void **state) {
    (void)state;
    client *c = client_create(-1);
    pipeline(c, "GET a\r\nset b c\r\nNOSUCH x\r\n");
    assert_int_equal(c->cmdq_len - c->cmdq_pos, 3);
    for (int q = 0; q < 3; q++)
        expect_true(("a parsed command has no entry before the lookup"), c->cmdq[q].cmd == NULL);
    commands_lookup_queued(c);
    expect_true(("GET's entry"), c->cmdq[0].cmd == commands_lookup("get", 3));
    expect_true(("lower-case set's entry"), c->cmdq[1].cmd != NULL && c->cmdq[1].cmd == commands_lookup("SET", 3));
    expect_true(("an unknown name has none"), c->cmdq[2].cmd == NULL);
    command *echo = commands_lookup("echo", 4);
    c->cmdq[0].cmd = echo;
    commands_lookup_queued(c);
    expect_true(("an entry already found is kept"), c->cmdq[0].cmd == echo);
    client_free(c);
}

/* commands_lookup's hash table: every command is found by its own name in
 * any case, and from a buffer that goes on past the name (a parsed
 * argument is not NUL-terminated); a name one byte short or one byte long
 * is not that command (SETE is not SETEX, GETX is not GET); nothing is
 * found for an empty or an overlong name. */
static void test_every_name_in_any_case(void **state) {
    (void)state;
    size_t cursor = 0, n = 0;
    char up[128], low[128], longer[130];
    for (command *cmd; (cmd = commands_next(&cursor)); n++) {
        size_t len = strlen(cmd->name);
        assert_true(len + 2 < sizeof(up));
        for (size_t i = 0; i < len; i++) {
            up[i] = (char)((cmd->name[i] >= 'a' && cmd->name[i] <= 'z') ? cmd->name[i] - 32 : cmd->name[i]);
            low[i] = (char)((cmd->name[i] >= 'A' && cmd->name[i] <= 'Z') ? cmd->name[i] + 32 : cmd->name[i]);
        }
        memcpy(longer, low, len);
        memcpy(longer + len, "xy", 2);
        expect_true(("found by its own name"), commands_lookup(cmd->name, len) == cmd);
        expect_true(("found in upper case"), commands_lookup(up, len) == cmd);
        expect_true(("found in lower case"), commands_lookup(low, len) == cmd);
        expect_true(("found in a buffer that goes on"), commands_lookup(longer, len) == cmd);
        command *shorter = commands_lookup(low, len - 1);
        expect_true(("one byte short is another command or none"),
                    shorter != cmd && (shorter == NULL || strlen(shorter->name) == len - 1));
        command *more = commands_lookup(longer, len + 1);
        expect_true(("one byte long is another command or none"),
                    more != cmd && (more == NULL || strlen(more->name) == len + 1));
    }
    expect_true(("the table has the commands"), n > 100);
    expect_true(("SETE is not SETEX"), commands_lookup("SETE", 4) == NULL);
    expect_true(("mixed case"),
                commands_lookup("gEt", 3) != NULL && commands_lookup("gEt", 3) == commands_lookup("get", 3));
    /* A name from the wire may hold a NUL: it names no command, and the
     * lookup reads no entry's name past its end (the ASan build checks). */
    cursor = 0;
    for (command *cmd; (cmd = commands_next(&cursor));) {
        size_t len = strlen(cmd->name);
        char nul[130];
        memcpy(nul, cmd->name, len);
        memcpy(nul + len, "\0xyz", 4);
        expect_true(("a NUL after the name"), commands_lookup(nul, len + 1) == NULL);
        expect_true(("a NUL and more after the name"), commands_lookup(nul, len + 4) == NULL);
        /* Many tails after the NUL land in many slots; some land in the
         * name's own probe run, where only the length test tells them apart. */
        for (int k = 0; k < 64; k++) {
            nul[len + 1] = (char)('a' + k % 26);
            nul[len + 2] = (char)('a' + k / 26);
            expect_true(("a NUL and a tail after the name"), commands_lookup(nul, len + 3) == NULL);
        }
    }
    expect_true(("nothing for an empty name"), commands_lookup("", 0) == NULL);
    char big[300];
    memset(big, 'g', sizeof(big));
    expect_true(("nothing for an overlong name"), commands_lookup(big, sizeof(big)) == NULL);
}

/* process_command runs the entry it was handed, not a lookup of its own,
 * and clears it, so a later command (or a blocked one run again) looks
 * its own name up. */
static void test_dispatch_takes_the_parsed_entry(void **state) {
    (void)state;
    client *c = client_create(-1);
    obj *argv[2] = {obj_create_string("NOSUCH", 6), obj_create_string("hi", 2)};
    c->argc = 2;
    c->argv = argv;
    c->parsed_cmd = commands_lookup("echo", 4);
    process_command(c);
    expect_true(("the command run is the entry handed over"), c->lastcmd == commands_lookup("echo", 4));
    expect_true(("the entry is cleared once used"), c->parsed_cmd == NULL);
    client_command_done(c);
    c->lastcmd = NULL;
    process_command(c);
    expect_true(("without an entry the name is looked up: an unknown command runs nothing"), c->lastcmd == NULL);
    client_command_done(c);
    c->argv = NULL;
    c->argc = 0;
    obj_decr_ref(argv[0]);
    obj_decr_ref(argv[1]);
    client_free(c);
}

/* Step 6's batch takes a command's key positions from the entry the read
 * found, not from a lookup of its own: GET k handed ECHO's entry (no key
 * positions) adds no key, so the batch holds j alone. */
static void test_batch_takes_the_parsed_entry(void **state) {
    (void)state;
    server.prefetch_batch_max_size = 16;
    client *c = client_create(-1);
    pipeline(c, "GET k\r\nGET j\r\n");
    commands_lookup_queued(c);
    memory_prefetch_probe p;
    memory_prefetch_reset();
    assert_int_equal(memory_prefetch_add_client(c), 1);
    memory_prefetch_run();
    memory_prefetch_get_probe(&p);
    expect_eq(("keys of GET k, GET j with their own entries"), p.keys, 2);
    c->cmdq[0].cmd = commands_lookup("echo", 4);
    memory_prefetch_reset();
    assert_int_equal(memory_prefetch_add_client(c), 1);
    memory_prefetch_run();
    memory_prefetch_get_probe(&p);
    expect_eq(("keys when GET k carries ECHO's entry"), p.keys, 1);
    client_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_queued_commands_looked_up, pipeline_setup, pipeline_teardown),
        cmocka_unit_test_setup_teardown(test_every_name_in_any_case, pipeline_setup, pipeline_teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_takes_the_parsed_entry, pipeline_setup, pipeline_teardown),
        cmocka_unit_test_setup_teardown(test_batch_takes_the_parsed_entry, pipeline_setup, pipeline_teardown),
    };
    return cmocka_run_group_tests_name("step 4: the command table looked up where the command was parsed", tests, NULL,
                                       NULL);
}
