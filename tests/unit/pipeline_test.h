/* pipeline_test.h — a client's command queue filled by the parser, for
 * the unit tests of what runs on a parsed pipeline (step 4's command
 * lookup, step 6's batch).
 *
 * pipeline(c, req) hands req (inline commands, one a line) to
 * client_io_parse, the parser a read uses, and leaves the commands in
 * c's queue. No read limit is set (client_read_prepare is not called),
 * so a RESP bulk argument would be refused: keep to inline commands.
 * pipeline_setup and pipeline_teardown start and stop the server with
 * its defaults, on no port and without I/O threads, around each test
 * (loop_test.h's loop_server_init). Include after cmocka.h, client.h,
 * client_io.h, config.h, networking.h, server.h and expect.h.
 */
#ifndef SOLOIST_PIPELINE_TEST_H
#define SOLOIST_PIPELINE_TEST_H

#include <string.h>

#include "loop_test.h"
#include "zmalloc.h"

static inline void pipeline(client *c, const char *req) {
    size_t n = strlen(req);
    zfree(c->querybuf); /* the last call's, now empty */
    c->querybuf = zmalloc(n);
    memcpy(c->querybuf, req, n);
    c->qb_len = c->qb_cap = n;
    c->qb_pos = 0;
    const char *err = NULL;
    assert_int_equal(client_io_parse(c, &err), 0);
    assert_int_equal(c->qb_len, 0);
}

static inline int pipeline_setup(void **state) {
    expect_setup(state);
    return loop_server_init(1);
}

static inline int pipeline_teardown(void **state) {
    (void)state;
    loop_server_destroy();
    return 0;
}

#endif
