/* client_io_test.h — the write path's hook for the watermark tests.
 *
 * Step 5 (worker-io layer). Only tests (tests/unit/test_watermark.c) and
 * client_io.c, which defines it, include this header: nothing in the
 * server sets the hook, and a production header does not offer it.
 * Threads: set by a test on main while no write job is out; called on
 * whichever thread runs the write.
 */
#ifndef SOLOIST_CLIENT_IO_TEST_H
#define SOLOIST_CLIENT_IO_TEST_H

#include "client.h"

/* Tests only; NULL in the server, which never sets it. When set, every
 * client_io_write calls it first, on whichever thread runs the write,
 * before it reads any of the output. test_watermark.c uses it to hold a
 * worker's write job while main runs the client's next commands, so the
 * overlap of a write with main's appends happens every time rather than
 * now and then. */
extern void (*client_io_write_hook)(const client *c);

#endif
