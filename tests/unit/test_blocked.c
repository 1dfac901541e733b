/* test_blocked.c — step 9's exercise: clients that wait (src/blocked.c,
 * and the rule in src/io_offload.c that keeps a blocked client's reads on
 * main).
 *
 * Three groups, one per part of the exercise:
 *
 *   - test_heap_*: the deadline heap (blocked_timers_*) on its own. It must
 *     give back the owners whose deadline is before now, the earliest first
 *     and, for equal deadlines, the lowest id first; it must keep every
 *     owner's slot pointing at the owner's entry through every move, so
 *     that removing an entry by its slot (a client served or killed before
 *     its deadline) takes out that entry and no other. Checked on small
 *     hand-made cases and on a random sequence of adds and removals against
 *     a plain array.
 *   - test_waiters_*: the waiters per key, through the real server loop
 *     with no I/O threads (loop_test.h): clients on socketpairs send BLPOP
 *     (or BZPOPMIN), each one blocked before the next is sent, so the order
 *     in which they blocked is the test's; another client pushes, and the
 *     test reads who got which element, who got nothing, and the registry's
 *     counts (INFO's blocked_clients, the keys waited on, the heap's size,
 *     the keyspace hits and misses a serve must not move).
 *   - test_reads_*: with two I/O threads always active, a blocked client
 *     and a just-unblocked one: io_offload_read is called on it directly
 *     and must keep the read on main, counted not_eligible, the token IDLE;
 *     with the two threads parked, a blocked client's read is counted
 *     inactive, as any read would be.
 *
 * Every wait is bounded in loop turns and in time (loop_test.h's
 * loop_deadline), so a wrong solution fails the test instead of hanging it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocked.h"
#include "client.h"
#include "config.h"
#include "db.h"
#include "io_offload.h"
#include "io_threads.h"
#include "networking.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#include "expect.h"
#include "loop_test.h"

/* ============================================================ the heap */

typedef struct owner {
    long long deadline;
    uint64_t id;
    size_t slot;
    int in;
} owner;

static void add(blocked_timers *t, owner *o) {
    blocked_timers_add(t, o->deadline, o->id, o, &o->slot);
    o->in = 1;
}

/* Every entry's slot points back at it, and the heap order holds. */
static void check_heap(const blocked_timers *t) {
    for (size_t i = 0; i < t->len; i++) {
        expect_eq(("the slot of the entry at position %zu (id %llu): where the heap says it is", i,
                   (unsigned long long)t->v[i].id),
                  *t->v[i].slot, i);
        if (i == 0) continue;
        const blocked_timer *p = &t->v[(i - 1) / 2], *c = &t->v[i];
        expect_true(("the entry at %zu (deadline %lld, id %llu) is not before its parent (deadline %lld, id %llu)", i,
                     c->deadline, (unsigned long long)c->id, p->deadline, (unsigned long long)p->id),
                    p->deadline < c->deadline || (p->deadline == c->deadline && p->id < c->id));
    }
}

/* The id of the owner popped at now, or -1 for none. */
static long long pop_id(blocked_timers *t, long long now) {
    owner *o = blocked_timers_pop_expired(t, now);
    return o ? (long long)o->id : -1;
}

/* An empty heap has no deadline (-1) and nothing due. */
static void test_heap_empty(void **state) {
    (void)state;
    blocked_timers t = {0};
    expect_eq(("the next deadline of an empty heap"), blocked_timers_next(&t), -1);
    expect_eq(("the id popped from an empty heap (-1: none)"), pop_id(&t, 1000), -1);
    blocked_timers_free(&t);
}

/* The earliest deadline first, equal deadlines by lowest id; due means
 * strictly before now; a popped entry is out of the heap, its slot
 * BLOCKED_NO_SLOT. */
static void test_heap_order_and_ties(void **state) {
    (void)state;
    blocked_timers t = {0};
    owner o[] = {{300, 1, 0, 0}, {100, 9, 0, 0}, {100, 2, 0, 0}, {200, 5, 0, 0}, {100, 4, 0, 0}};
    for (size_t i = 0; i < 5; i++) add(&t, &o[i]);
    check_heap(&t);
    expect_eq(("the next deadline after adding deadlines 300, 100, 100, 200, 100"), blocked_timers_next(&t), 100);
    expect_eq(("the id popped at now 100, when the earliest deadline is 100 (-1: none is due)"), pop_id(&t, 100), -1);
    long long want[] = {2, 4, 9, -1};
    for (int i = 0; i < 4; i++)
        expect_eq(("the id of pop %d at now 101 (deadline 100 held by ids 9, 2 and 4; -1: none)", i + 1),
                  pop_id(&t, 101), want[i]);
    expect_eq(("the slot of a popped entry (BLOCKED_NO_SLOT: none)"), o[2].slot, BLOCKED_NO_SLOT);
    expect_eq(("the id of the next pop at now 1000"), pop_id(&t, 1000), 5);
    expect_eq(("the id of the last pop at now 1000"), pop_id(&t, 1000), 1);
    expect_eq(("the heap's length once every entry is popped"), t.len, 0);
    blocked_timers_free(&t);
}

/* Removing by slot the top, a leaf, one in the middle and the last entry
 * of the array takes out that entry and no other; the removed entry's
 * slot is BLOCKED_NO_SLOT, the last entry's too (nothing fills its gap),
 * and so is the slot of the one entry a one-entry heap pops. */
static void test_heap_remove_by_slot(void **state) {
    (void)state;
    blocked_timers t = {0};
    owner o[8];
    for (int i = 0; i < 8; i++) {
        o[i] = (owner){.deadline = 10 * (8 - i), .id = (uint64_t)i};
        add(&t, &o[i]);
    }
    check_heap(&t);
    blocked_timers_remove(&t, o[7].slot); /* the top: deadline 10 */
    expect_eq(("the slot of the entry removed from the top (BLOCKED_NO_SLOT: none)"), o[7].slot, BLOCKED_NO_SLOT);
    check_heap(&t);
    blocked_timers_remove(&t, o[0].slot); /* deadline 80: a leaf */
    expect_eq(("the slot of the entry removed from a leaf (BLOCKED_NO_SLOT: none)"), o[0].slot, BLOCKED_NO_SLOT);
    check_heap(&t);
    blocked_timers_remove(&t, o[3].slot);
    check_heap(&t);
    expect_eq(("the heap's length after 8 adds and 3 removals"), t.len, 5);
    owner *last = t.v[t.len - 1].owner;
    blocked_timers_remove(&t, last->slot); /* the last entry of the array */
    expect_eq(("the slot of the entry removed from the last position, id %llu (BLOCKED_NO_SLOT: none)",
               (unsigned long long)last->id),
              last->slot, BLOCKED_NO_SLOT);
    check_heap(&t);
    expect_eq(("the heap's length after 8 adds and 4 removals"), t.len, 4);
    add(&t, last);
    check_heap(&t);
    int want[] = {6, 5, 4, 2, 1};
    for (int i = 0; i < 5; i++) expect_eq(("the id of pop %d at now 1000", i + 1), pop_id(&t, 1000), want[i]);
    expect_eq(("the next deadline once the heap is empty"), blocked_timers_next(&t), -1);
    owner one = {.deadline = 5, .id = 42};
    add(&t, &one);
    expect_eq(("the slot of the one entry of a one-entry heap"), one.slot, 0);
    expect_eq(("the id popped from a one-entry heap at now 1000"), pop_id(&t, 1000), 42);
    expect_eq(("the slot of the entry popped from a one-entry heap (BLOCKED_NO_SLOT: none)"), one.slot,
              BLOCKED_NO_SLOT);
    expect_eq(("the heap's length once its one entry is popped"), t.len, 0);
    blocked_timers_free(&t);
}

/* The earliest (deadline, id) among the owners still in, or NULL. */
static owner *model_min(owner *o, int n) {
    owner *best = NULL;
    for (int i = 0; i < n; i++)
        if (o[i].in &&
            (!best || o[i].deadline < best->deadline || (o[i].deadline == best->deadline && o[i].id < best->id)))
            best = &o[i];
    return best;
}

/* 20,000 random adds and removals by slot of 2,000 owners with many equal
 * deadlines, against a plain array: the heap's shape, its slots and its
 * next deadline agree with the model throughout, and popping gives the
 * model's order. */
static void test_heap_random_against_model(void **state) {
    (void)state;
    enum { N = 2000 };
    owner *o = calloc(N, sizeof(*o));
    blocked_timers t = {0};
    srand(12345);
    for (int step = 0; step < 20000; step++) {
        int i = rand() % N;
        if (!o[i].in && rand() % 3) {
            o[i].deadline = rand() % 500; /* many equal deadlines */
            o[i].id = (uint64_t)i;
            add(&t, &o[i]);
        } else if (o[i].in) {
            blocked_timers_remove(&t, o[i].slot);
            o[i].in = 0;
        }
        if (step % 97 == 0) {
            expect_context("after random step %d", step);
            check_heap(&t);
            owner *m = model_min(o, N);
            expect_eq(("the next deadline"), blocked_timers_next(&t), m ? m->deadline : -1);
        }
    }
    expect_context("popping every entry in order");
    for (owner *m; (m = model_min(o, N));) {
        expect_eq(("the id popped at now = the model's earliest deadline + 1"), pop_id(&t, m->deadline + 1),
                  (long long)m->id);
        m->in = 0;
    }
    expect_eq(("the heap's length once every entry is popped"), t.len, 0);
    blocked_timers_free(&t);
    free(o);
}

/* ======================================================= the server loop */

/* The clients a test opened; teardown closes those still open (a failed
 * test leaves them), skipping those the server freed itself (killed). */
#define CONNS 12
static conn conns[CONNS];
static int nconns;

static conn *client_open(void) {
    assert_true(nconns < CONNS);
    conns[nconns] = open_conn();
    return &conns[nconns++];
}

static int start_server(int threads, int always_active) {
    expect_ctx_buf[0] = '\0';
    nconns = 0;
    loop_server_start(threads, always_active);
    return 0;
}

static int setup_loop(void **state) {
    (void)state;
    return start_server(1, 0);
}

static int setup_threads(void **state) {
    (void)state;
    return start_server(3, 1); /* main and two I/O threads, always active */
}

static int setup_threads_parked(void **state) {
    (void)state;
    return start_server(3, 0); /* main and two I/O threads, woken only by load */
}

static int teardown_loop(void **state) {
    (void)state;
    for (int i = 0; i < nconns; i++) {
        if (conns[i].c)
            close_conn(&conns[i]);
        else
            close(conns[i].peer); /* the server freed its side */
    }
    nconns = 0;
    turn();
    loop_server_stop();
    return 0;
}

static void send_str(conn *k, const char *s) { send_all(k->peer, s, strlen(s)); }

/* Turns the loop until the number of blocked clients is want (bounded). */
static void wait_blocked(long want, const char *what) {
    long long deadline = loop_deadline();
    for (int i = 0; blocked_clients_count() != want && (i < 1000 || util_mstime() < deadline); i++) {
        turn();
        if (i >= 100) sched_yield();
    }
    expect_eq(("blocked clients %s", what), blocked_clients_count(), want);
}

/* Sends a blocking command and waits until its client is the nth blocked. */
static void block(conn *k, const char *cmd, long nth) {
    send_str(k, cmd);
    wait_blocked(nth, "once the command has blocked");
}

/* Turns the loop until k's side has received want's length (bounded) and
 * compares: what names whose reply it is. */
static void reply_is(conn *k, const char *want, const char *what) {
    size_t n = strlen(want), got = 0;
    char buf[512];
    assert_true(n < sizeof(buf));
    long long deadline = loop_deadline();
    for (int i = 0; got < n && (i < 1000 || util_mstime() < deadline); i++) {
        turn();
        ssize_t r = read(k->peer, buf + got, n - got);
        if (r > 0)
            got += (size_t)r;
        else if (r == 0)
            break; /* the server closed the connection */
        else if (i >= 100)
            sched_yield();
    }
    buf[got] = '\0';
    if (got != n || memcmp(buf, want, n)) {
        if (expect_ctx_buf[0]) print_error("%s\n", expect_ctx_buf);
        print_error("%s: got %zu bytes \"%s\", the contract says \"%s\"\n", what, got, buf, want);
        fail();
    }
}

/* Turns the loop a few times; k must have received nothing. */
static void no_reply(conn *k, const char *what) {
    char buf[256];
    for (int i = 0; i < 20; i++) turn();
    ssize_t r = read(k->peer, buf, sizeof(buf) - 1);
    if (r > 0) {
        buf[r] = '\0';
        if (expect_ctx_buf[0]) print_error("%s\n", expect_ctx_buf);
        print_error("%s: got \"%s\", the contract says nothing yet (still blocked)\n", what, buf);
        fail();
    }
    expect_true(("%s: its connection is still open", what), r == -1 && errno == EAGAIN);
}

#define POPPED(key, el) "*2\r\n$1\r\n" key "\r\n$1\r\n" el "\r\n"

/* Waiters on a key are served in the order they blocked, one element
 * each, while the key holds elements; a waiter the pushes did not reach
 * stays blocked, first in line for the next push. */
static void test_waiters_served_in_arrival_order(void **state) {
    (void)state;
    conn *k1 = client_open(), *k2 = client_open(), *k3 = client_open(), *p = client_open();
    block(k1, "BLPOP q 0\r\n", 1);
    block(k2, "BLPOP q 0\r\n", 2);
    block(k3, "BLPOP q 0\r\n", 3);
    expect_eq(("keys waited on, three clients on q"), blocked_keys_count(), 1);
    send_str(p, "RPUSH q a b\r\n");
    reply_is(p, ":2\r\n", "RPUSH q a b");
    reply_is(k1, POPPED("q", "a"), "the first client to block on q, after RPUSH q a b");
    reply_is(k2, POPPED("q", "b"), "the second client to block on q, after RPUSH q a b");
    no_reply(k3, "the third client to block on q, after RPUSH q a b");
    expect_eq(("blocked clients after two elements for three waiters"), blocked_clients_count(), 1);
    send_str(p, "RPUSH q c\r\n");
    reply_is(p, ":1\r\n", "RPUSH q c");
    reply_is(k3, POPPED("q", "c"), "the third client to block on q, after RPUSH q c");
    expect_eq(("blocked clients once every waiter was served"), blocked_clients_count(), 0);
    expect_eq(("keys waited on once every waiter was served"), blocked_keys_count(), 0);
}

/* A key named twice in one command counts once: the client is one waiter
 * on it, served once, and the client behind it is served next. */
static void test_waiters_key_given_twice(void **state) {
    (void)state;
    conn *k1 = client_open(), *k2 = client_open(), *p = client_open();
    block(k1, "BLPOP q q 0\r\n", 1);
    block(k2, "BLPOP q 0\r\n", 2);
    expect_eq(("keys waited on, BLPOP q q and BLPOP q"), blocked_keys_count(), 1);
    send_str(p, "RPUSH q a b c\r\n");
    reply_is(p, ":3\r\n", "RPUSH q a b c");
    reply_is(k1, POPPED("q", "a"), "the client that blocked on q q, after RPUSH q a b c");
    reply_is(k2, POPPED("q", "b"), "the client that blocked on q next, after RPUSH q a b c");
    expect_eq(("blocked clients once both were served"), blocked_clients_count(), 0);
    send_str(p, "LLEN q\r\n");
    reply_is(p, ":1\r\n", "LLEN q: one element was left, each waiter popped one");
}

/* The same when the client is not first in the key's line: one waiter
 * for BLPOP q q 0 behind a client already blocked on q, so RPUSH q a b c
 * gives one element to each of the three, in the order they blocked. */
static void test_waiters_key_twice_behind_another(void **state) {
    (void)state;
    conn *k1 = client_open(), *k2 = client_open(), *k3 = client_open(), *p = client_open();
    block(k1, "BLPOP q 0\r\n", 1);
    block(k2, "BLPOP q q 0\r\n", 2);
    block(k3, "BLPOP q 0\r\n", 3);
    expect_eq(("keys waited on, BLPOP q, BLPOP q q and BLPOP q"), blocked_keys_count(), 1);
    send_str(p, "RPUSH q a b c\r\n");
    reply_is(p, ":3\r\n", "RPUSH q a b c");
    reply_is(k1, POPPED("q", "a"), "the first client to block on q, after RPUSH q a b c");
    reply_is(k2, POPPED("q", "b"), "the client that blocked on q q second, after RPUSH q a b c");
    reply_is(k3, POPPED("q", "c"), "the third client to block on q, after RPUSH q a b c");
    expect_eq(("blocked clients once the three were served"), blocked_clients_count(), 0);
    expect_eq(("keys waited on once the three were served"), blocked_keys_count(), 0);
    send_str(p, "LLEN q\r\n");
    reply_is(p, ":0\r\n", "LLEN q: three elements for three waiters, one each");
}

/* A key repeated with another key between the two copies (BLPOP q r q 0)
 * is one waiter on q too: RPUSH q a b c serves it once, and the client
 * behind it next. */
static void test_waiters_key_twice_apart(void **state) {
    (void)state;
    conn *k1 = client_open(), *k2 = client_open(), *p = client_open();
    block(k1, "BLPOP q r q 0\r\n", 1);
    block(k2, "BLPOP q 0\r\n", 2);
    expect_eq(("keys waited on, BLPOP q r q and BLPOP q"), blocked_keys_count(), 2);
    send_str(p, "RPUSH q a b c\r\n");
    reply_is(p, ":3\r\n", "RPUSH q a b c");
    reply_is(k1, POPPED("q", "a"), "the client that blocked on q r q, after RPUSH q a b c");
    reply_is(k2, POPPED("q", "b"), "the client that blocked on q next, after RPUSH q a b c");
    expect_eq(("blocked clients once both were served"), blocked_clients_count(), 0);
    expect_eq(("keys waited on once both were served (r too)"), blocked_keys_count(), 0);
    send_str(p, "LLEN q\r\n");
    reply_is(p, ":1\r\n", "LLEN q: one element was left, each waiter popped one");
}

/* A client blocked on several keys is one blocked client, however many
 * keys it waits on: INFO's blocked_clients is 1 after BLPOP k1 k2 k3 0,
 * and 0 once a push to one of them serves it, which takes it out of all
 * three lines. */
static void test_waiters_one_client_many_keys(void **state) {
    (void)state;
    conn *k1 = client_open(), *p = client_open();
    block(k1, "BLPOP k1 k2 k3 0\r\n", 1);
    expect_eq(("blocked clients after BLPOP k1 k2 k3 0 (one client)"), blocked_clients_count(), 1);
    expect_eq(("keys waited on after BLPOP k1 k2 k3 0"), blocked_keys_count(), 3);
    send_str(p, "RPUSH k2 x\r\n");
    reply_is(p, ":1\r\n", "RPUSH k2 x");
    reply_is(k1, "*2\r\n$2\r\nk2\r\n$1\r\nx\r\n", "the client blocked on k1 k2 k3, after RPUSH k2 x");
    expect_eq(("blocked clients once the client blocked on three keys was served"), blocked_clients_count(), 0);
    expect_eq(("keys waited on once the client blocked on three keys was served"), blocked_keys_count(), 0);
}

/* Waiters that leave the line (CLIENT UNBLOCK) from its head, its middle
 * and its tail: the others keep their order, a client that blocks later
 * joins behind them, and the key is dropped from the registry once nobody
 * waits on it, whichever way its last waiter left: served, CLIENT
 * UNBLOCK, a disconnect or a timeout. */
static void test_waiters_leave_from_anywhere(void **state) {
    (void)state;
    conn *k[5], *p = client_open();
    for (int i = 0; i < 4; i++) k[i] = client_open();
    for (int i = 0; i < 4; i++) block(k[i], "BLPOP q 0\r\n", i + 1);
    int leave[] = {0, 2, 3}; /* the head, one in the middle, the tail */
    for (int i = 0; i < 3; i++) {
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "CLIENT UNBLOCK %llu\r\n", (unsigned long long)k[leave[i]]->c->id);
        send_str(p, cmd);
        reply_is(p, ":1\r\n", "CLIENT UNBLOCK of a blocked client");
        reply_is(k[leave[i]], "*-1\r\n", "a client unblocked by CLIENT UNBLOCK");
    }
    expect_eq(("blocked clients after three of four left"), blocked_clients_count(), 1);
    k[4] = client_open();
    block(k[4], "BLPOP q 0\r\n", 2);
    send_str(p, "RPUSH q x y\r\n");
    reply_is(p, ":2\r\n", "RPUSH q x y");
    reply_is(k[1], POPPED("q", "x"), "the one client left of the first four, after RPUSH q x y");
    reply_is(k[4], POPPED("q", "y"), "the client that blocked after the others left, after RPUSH q x y");
    expect_eq(("blocked clients once both were served"), blocked_clients_count(), 0);
    expect_eq(("keys waited on once nobody waits"), blocked_keys_count(), 0);
    expect_eq(("deadlines in the heap (every client blocked with 0: none)"), blocked_timeouts_count(), 0);

    /* The last waiter leaving by each other way: CLIENT UNBLOCK, a
     * disconnect, a timeout. Each key it waited on leaves the registry. */
    conn *u = client_open();
    block(u, "BLPOP r s 0\r\n", 1);
    expect_eq(("keys waited on, one client on r and s"), blocked_keys_count(), 2);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "CLIENT UNBLOCK %llu\r\n", (unsigned long long)u->c->id);
    send_str(p, cmd);
    reply_is(p, ":1\r\n", "CLIENT UNBLOCK of the client blocked on r and s");
    reply_is(u, "*-1\r\n", "the client blocked on r and s, unblocked by CLIENT UNBLOCK");
    expect_eq(("keys waited on once the last waiter on r and s left by CLIENT UNBLOCK"), blocked_keys_count(), 0);
    conn *g = client_open();
    block(g, "BLPOP r 0\r\n", 1);
    close(g->peer);
    g->peer = -1;
    wait_blocked(0, "once the client blocked on r disconnected");
    g->c = NULL; /* the server freed it */
    expect_eq(("keys waited on once the last waiter on r left by disconnecting"), blocked_keys_count(), 0);
    conn *t = client_open();
    block(t, "BLPOP s 0.02\r\n", 1);
    reply_is(t, "*-1\r\n", "BLPOP s 0.02, past its timeout");
    expect_eq(("keys waited on once the last waiter on s left by timing out"), blocked_keys_count(), 0);
    expect_eq(("blocked clients once all have left"), blocked_clients_count(), 0);
}

/* A waiter for another type than the key now holds (BZPOPMIN, for a
 * sorted set, on a key pushed to as a list) is passed over and keeps
 * waiting; the waiter behind it is served. */
static void test_waiters_other_type_keeps_waiting(void **state) {
    (void)state;
    conn *kz = client_open(), *kl = client_open(), *p = client_open();
    block(kz, "BZPOPMIN q 0\r\n", 1);
    block(kl, "BLPOP q 0\r\n", 2);
    send_str(p, "RPUSH q a\r\n");
    reply_is(p, ":1\r\n", "RPUSH q a");
    reply_is(kl, POPPED("q", "a"), "the BLPOP behind a BZPOPMIN, after RPUSH q a");
    no_reply(kz, "the BZPOPMIN on q, after RPUSH q a (a list)");
    expect_eq(("blocked clients: the BZPOPMIN still waits"), blocked_clients_count(), 1);
}

/* A waiter killed in the same pipeline as the push (CLIENT KILL, then
 * RPUSH, before the server frees it) is not served: the element goes to
 * the waiter behind it. */
static void test_waiters_killed_not_served(void **state) {
    (void)state;
    conn *k1 = client_open(), *k2 = client_open(), *p = client_open();
    block(k1, "BLPOP q 0\r\n", 1);
    block(k2, "BLPOP q 0\r\n", 2);
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "CLIENT KILL ID %llu\r\nRPUSH q a\r\n", (unsigned long long)k1->c->id);
    k1->c = NULL; /* the server frees it */
    send_str(p, cmd);
    reply_is(p, ":1\r\n:1\r\n", "CLIENT KILL ID, then RPUSH q a");
    reply_is(k2, POPPED("q", "a"), "the client behind the killed one, after RPUSH q a");
    char c;
    expect_eq(("bytes the killed client received (0: closed, no reply)"), read(k1->peer, &c, 1), 0);
}

/* A timeout of 0 blocks for ever: nothing in the heap, and still blocked
 * 100 ms later. */
static void test_waiters_zero_timeout_waits_forever(void **state) {
    (void)state;
    conn *k1 = client_open();
    block(k1, "BLPOP q 0\r\n", 1);
    expect_eq(("deadlines in the heap for BLPOP q 0"), blocked_timeouts_count(), 0);
    long long until = util_mstime() + 100;
    while (util_mstime() < until) turn();
    no_reply(k1, "BLPOP q 0, 100 ms later");
    expect_eq(("blocked clients 100 ms after BLPOP q 0"), blocked_clients_count(), 1);
}

/* A client blocked with a timeout has one deadline in the heap; past it,
 * it gets a null array, leaves the registry and the heap, and the
 * command it pipelined behind runs. */
static void test_waiters_timeout_replies_null(void **state) {
    (void)state;
    conn *k1 = client_open();
    block(k1, "BLPOP q 0.05\r\n", 1);
    expect_eq(("deadlines in the heap for BLPOP q 0.05"), blocked_timeouts_count(), 1);
    send_str(k1, "PING\r\n");
    reply_is(k1, "*-1\r\n+PONG\r\n", "BLPOP q 0.05 then PING, on the same connection");
    expect_eq(("blocked clients once it timed out"), blocked_clients_count(), 0);
    expect_eq(("deadlines in the heap once it timed out"), blocked_timeouts_count(), 0);
    expect_eq(("keys waited on once it timed out"), blocked_keys_count(), 0);
}

/* Serving looks the key up without touching the keyspace statistics
 * (Valkey's LOOKUP_NOEFFECTS): RPUSH q x y with three waiters serves two
 * and finds q gone for the third, and neither keyspace_hits nor
 * keyspace_misses moves. */
static void test_waiters_serving_counts_no_lookup(void **state) {
    (void)state;
    conn *k1 = client_open(), *k2 = client_open(), *k3 = client_open(), *p = client_open();
    block(k1, "BLPOP q 0\r\n", 1);
    block(k2, "BLPOP q 0\r\n", 2);
    block(k3, "BLPOP q 0\r\n", 3);
    long long hits = db_stat.keyspace_hits, misses = db_stat.keyspace_misses;
    send_str(p, "RPUSH q x y\r\n");
    reply_is(p, ":2\r\n", "RPUSH q x y");
    reply_is(k1, POPPED("q", "x"), "the first client to block on q, after RPUSH q x y");
    reply_is(k2, POPPED("q", "y"), "the second client to block on q, after RPUSH q x y");
    no_reply(k3, "the third client to block on q, after RPUSH q x y");
    expect_eq(("keyspace_hits counted by RPUSH q x y and the two waiters it served"), db_stat.keyspace_hits - hits, 0);
    expect_eq(("keyspace_misses counted by RPUSH q x y, the two waiters it served and the third it did not"),
              db_stat.keyspace_misses - misses, 0);
}

/* A client served before its deadline takes its deadline out of the heap
 * (no stale entry left to time out a client that is no longer blocked). */
static void test_waiters_served_leave_the_heap(void **state) {
    (void)state;
    conn *k1 = client_open(), *k2 = client_open(), *p = client_open();
    block(k1, "BLPOP q 30\r\n", 1);
    block(k2, "BLPOP q 20\r\n", 2);
    expect_eq(("deadlines in the heap, two clients blocked with a timeout"), blocked_timeouts_count(), 2);
    send_str(p, "RPUSH q a\r\n");
    reply_is(k1, POPPED("q", "a"), "the first of two clients blocked with a timeout, after RPUSH q a");
    expect_eq(("deadlines in the heap once one of the two was served"), blocked_timeouts_count(), 1);
    send_str(p, "RPUSH q b\r\n");
    reply_is(k2, POPPED("q", "b"), "the second client, after RPUSH q b");
    expect_eq(("deadlines in the heap once both were served"), blocked_timeouts_count(), 0);
}

/* ============================================ reads of a blocked client */

/* Calls io_offload_read on k's client as the loop would when it is
 * readable: it must stay on main (false), its read token IDLE, counted
 * not_eligible and nothing else. A read wrongly handed to a worker is
 * taken back before the test fails, so the teardown finds no job out. */
static void read_stays_on_main(conn *k, const char *who) {
    expect_context("%s", who);
    /* Wake both workers, as a turn with events does (io-threads-always-active
     * parks them again on a turn that ends with nothing owed). */
    expect_true(("both I/O threads woken"), io_threads_set_active(3));
    io_offload_stats a, b;
    io_offload_get_stats(&a);
    bool offloaded = io_offload_read(k->c);
    io_offload_get_stats(&b);
    if (offloaded) {
        long long deadline = loop_deadline();
        while (atomic_load(&k->c->io_read_state) != CLIENT_IO_IDLE && util_mstime() < deadline) turn();
    }
    expect_true(("io_offload_read handed the read to a worker; the contract keeps it on main"), !offloaded);
    expect_eq(("its read token after io_offload_read (0: IDLE)"), atomic_load(&k->c->io_read_state), CLIENT_IO_IDLE);
    expect_eq(("fallbacks counted not_eligible by that call"),
              b.fallbacks[IO_FALLBACK_NOT_ELIGIBLE] - a.fallbacks[IO_FALLBACK_NOT_ELIGIBLE], 1);
    expect_eq(("fallbacks counted inactive by that call"),
              b.fallbacks[IO_FALLBACK_INACTIVE] - a.fallbacks[IO_FALLBACK_INACTIVE], 0);
    expect_eq(("fallbacks counted queue_full by that call"),
              b.fallbacks[IO_FALLBACK_QUEUE_FULL] - a.fallbacks[IO_FALLBACK_QUEUE_FULL], 0);
    expect_context("%s", "");
}

/* With I/O threads active, a blocked client's read stays on main (counted
 * not_eligible); what it pipelines while blocked is read and queued on
 * main, and runs once it is served. */
static void test_reads_blocked_client_reads_on_main(void **state) {
    (void)state;
    conn *k1 = client_open(), *p = client_open();
    block(k1, "BLPOP q 0\r\n", 1);
    read_stays_on_main(k1, "a client blocked in BLPOP q 0, io-threads 3 always active");
    send_str(k1, "PING\r\n");
    no_reply(k1, "PING sent behind a blocked BLPOP");
    send_str(p, "RPUSH q a\r\n");
    reply_is(p, ":1\r\n", "RPUSH q a");
    reply_is(k1, POPPED("q", "a") "+PONG\r\n", "the blocked client, served, then its pipelined PING");
}

/* With I/O threads configured (io-threads 3) but not active (parked: no
 * worker to hand a read to), a blocked client's read stays on main
 * counted inactive, as any client's read would be, not not_eligible. */
static void test_reads_blocked_with_workers_parked(void **state) {
    (void)state;
    conn *k1 = client_open(), *p = client_open();
    block(k1, "BLPOP q 0\r\n", 1);
    expect_true(("every worker parked (only main active)"), io_threads_set_active(1));
    expect_eq(("I/O threads configured, counting main"), io_threads_num(), 3);
    expect_eq(("I/O threads active, counting main"), io_threads_active(), 1);
    io_offload_stats a, b;
    io_offload_get_stats(&a);
    bool offloaded = io_offload_read(k1->c);
    io_offload_get_stats(&b);
    expect_true(("io_offload_read handed the read of a blocked client to a parked worker"), !offloaded);
    expect_eq(("its read token after io_offload_read (0: IDLE)"), atomic_load(&k1->c->io_read_state), CLIENT_IO_IDLE);
    expect_eq(("fallbacks counted inactive by that call (no worker active)"),
              b.fallbacks[IO_FALLBACK_INACTIVE] - a.fallbacks[IO_FALLBACK_INACTIVE], 1);
    expect_eq(("fallbacks counted not_eligible by that call"),
              b.fallbacks[IO_FALLBACK_NOT_ELIGIBLE] - a.fallbacks[IO_FALLBACK_NOT_ELIGIBLE], 0);
    expect_eq(("fallbacks counted queue_full by that call"),
              b.fallbacks[IO_FALLBACK_QUEUE_FULL] - a.fallbacks[IO_FALLBACK_QUEUE_FULL], 0);
    send_str(p, "RPUSH q a\r\n");
    reply_is(p, ":1\r\n", "RPUSH q a");
    reply_is(k1, POPPED("q", "a"), "the blocked client, after RPUSH q a");
}

/* A client unblocked but not yet resumed (CLIENT_UNBLOCKED, until
 * before_sleep runs its pipeline) still reads on main; once resumed, it is
 * a client like any other again and its commands are answered. */
static void test_reads_unblocked_client_reads_on_main(void **state) {
    (void)state;
    conn *k1 = client_open();
    block(k1, "BLPOP q 0\r\n", 1);
    expect_eq(("blocked_unblock of a blocked client (1: it was blocked)"), blocked_unblock(k1->c, 0), 1);
    expect_true(("the client is flagged CLIENT_UNBLOCKED until its pipeline is resumed"),
                (k1->c->flags & CLIENT_UNBLOCKED) != 0);
    read_stays_on_main(k1, "a client unblocked by CLIENT UNBLOCK, not yet resumed, io-threads 3 always active");
    reply_is(k1, "*-1\r\n", "the unblocked client's null array");
    expect_true(("the client is no longer CLIENT_UNBLOCKED once resumed"), (k1->c->flags & CLIENT_UNBLOCKED) == 0);
    roundtrip(k1, "PING\r\n", "+PONG\r\n"); /* from the resumed client */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_heap_empty, expect_setup),
        cmocka_unit_test_setup(test_heap_order_and_ties, expect_setup),
        cmocka_unit_test_setup(test_heap_remove_by_slot, expect_setup),
        cmocka_unit_test_setup(test_heap_random_against_model, expect_setup),
        cmocka_unit_test_setup_teardown(test_waiters_served_in_arrival_order, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_key_given_twice, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_key_twice_behind_another, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_key_twice_apart, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_one_client_many_keys, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_leave_from_anywhere, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_other_type_keeps_waiting, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_killed_not_served, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_zero_timeout_waits_forever, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_timeout_replies_null, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_served_leave_the_heap, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_waiters_serving_counts_no_lookup, setup_loop, teardown_loop),
        cmocka_unit_test_setup_teardown(test_reads_blocked_client_reads_on_main, setup_threads, teardown_loop),
        cmocka_unit_test_setup_teardown(test_reads_unblocked_client_reads_on_main, setup_threads, teardown_loop),
        cmocka_unit_test_setup_teardown(test_reads_blocked_with_workers_parked, setup_threads_parked, teardown_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
