/* resp_test.h — the parser's two line readers, for their unit tests.
 *
 * Step 0 (plumbing layer). Only tests (tests/unit/test_resp.c) and
 * resp.c, which defines them, include this header: the rest of the
 * server parses through resp_parse (resp.h).
 * Threads: any, on a parser the caller owns.
 */
#ifndef SOLOIST_RESP_TEST_H
#define SOLOIST_RESP_TEST_H

#include <stddef.h>

#include "resp.h"

/* The two line readers resp_parse is built on, declared here for their
 * unit tests (tests/unit/test_resp.c); resp.c states their contracts. They
 * touch only p's error text, never its parse state. */
int resp_read_multibulk_header(resp_parser *p, const char *buf, size_t len, const resp_limits *lim, size_t *used,
                               long long *count);
int resp_read_bulk_header(resp_parser *p, const char *buf, size_t len, const resp_limits *lim, size_t *used,
                          long long *bulk_len);

#endif
