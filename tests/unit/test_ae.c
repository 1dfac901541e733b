/* test_ae.c — the event loop (step 0): timers, file events, removal from
 * inside callbacks, the sleep hooks, and the ae_poll / ae_process_fired
 * split the poll offload uses. Every wait is bounded; the whole file runs
 * in well under a second. Timing checks are lower bounds only (a timer
 * never fires early), so a loaded machine cannot make them fail.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ae.h"
#include "zmalloc.h"

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* Runs iterations until *flag reaches want or max_ms pass. */
static void run_until(ae_loop *l, const int *flag, int want, int max_ms) {
    long long deadline = now_us() + (long long)max_ms * 1000;
    while (*flag < want && now_us() < deadline) ae_process_events(l, AE_ALL_EVENTS);
}

static void make_pipe(int fds[2]) { assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0); }

static void make_socketpair(int fds[2]) {
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
}

/* ================= timers ================= */

static char order[64];
static int order_len;

static void note(char c) {
    if (order_len < (int)sizeof(order) - 1) order[order_len++] = c;
    order[order_len] = '\0';
}

static void reset_order(void) {
    order_len = 0;
    order[0] = '\0';
}

static long long once_proc(ae_loop *l, long long id, void *data) {
    (void)l, (void)id;
    (*(int *)data)++;
    return AE_NOMORE;
}

static void test_timer_fires_once(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    int calls = 0;
    long long id = ae_add_timer(l, 1, once_proc, &calls);
    assert_true(id >= 0);
    run_until(l, &calls, 1, 2000);
    assert_int_equal(calls, 1);
    for (int i = 0; i < 5; i++) ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(calls, 1);
    /* AE_NOMORE removed it. */
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(ae_del_timer(l, id), AE_ERR);
    ae_delete(l);
}

static long long order_proc(ae_loop *l, long long id, void *data) {
    (void)l, (void)id;
    note(*(char *)data);
    return AE_NOMORE;
}

static void test_timers_fire_in_time_order(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    static char a = 'a', b = 'b', c = 'c';
    reset_order();
    /* Added latest-first so that even timers due in the same iteration
     * run in time order (the loop scans newest first, as Valkey's). */
    ae_add_timer(l, 30, order_proc, &c);
    ae_add_timer(l, 20, order_proc, &b);
    ae_add_timer(l, 10, order_proc, &a);
    long long deadline = now_us() + 2000000;
    while (order_len < 3 && now_us() < deadline) ae_process_events(l, AE_ALL_EVENTS);
    assert_string_equal(order, "abc");
    ae_delete(l);
}

static void test_process_events_sleeps_until_timer(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    int calls = 0;
    long long t0 = now_us();
    ae_add_timer(l, 20, once_proc, &calls);
    /* One blocking iteration: the poll timeout is the time to the timer. */
    int processed = 0;
    while (calls == 0 && now_us() - t0 < 2000000) processed += ae_process_events(l, AE_ALL_EVENTS);
    assert_int_equal(calls, 1);
    assert_true(processed >= 1);
    assert_true(now_us() - t0 >= 20000);
    ae_delete(l);
}

typedef struct {
    int calls;
    int stop_after;
    long long every_ms;
} repeat_state;

static long long repeat_proc(ae_loop *l, long long id, void *data) {
    (void)l, (void)id;
    repeat_state *s = data;
    s->calls++;
    return s->calls >= s->stop_after ? AE_NOMORE : s->every_ms;
}

static void test_timer_repeats_then_stops(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    repeat_state s = {0, 3, 5};
    long long t0 = now_us();
    ae_add_timer(l, 5, repeat_proc, &s);
    run_until(l, &s.calls, 3, 2000);
    assert_int_equal(s.calls, 3);
    assert_true(now_us() - t0 >= 15000); /* 5 ms, then twice 5 ms more */
    for (int i = 0; i < 3; i++) ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    usleep(10000);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(s.calls, 3);
    ae_delete(l);
}

static void test_timer_deleted_before_it_fires(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    int calls = 0;
    long long id = ae_add_timer(l, 1, once_proc, &calls);
    assert_int_equal(ae_del_timer(l, id), AE_OK);
    assert_int_equal(ae_del_timer(l, id), AE_ERR);
    assert_int_equal(ae_del_timer(l, 12345), AE_ERR);
    usleep(3000);
    for (int i = 0; i < 3; i++) ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(calls, 0);
    ae_delete(l);
}

static long long self_delete_proc(ae_loop *l, long long id, void *data) {
    (*(int *)data)++;
    assert_int_equal(ae_del_timer(l, id), AE_OK);
    return 1; /* asks to run again, but it was deleted: it must not */
}

static void test_timer_deletes_itself_in_callback(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    int calls = 0;
    ae_add_timer(l, 1, self_delete_proc, &calls);
    run_until(l, &calls, 1, 2000);
    usleep(5000);
    for (int i = 0; i < 3; i++) ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(calls, 1);
    ae_delete(l);
}

static long long victim_id;
static int victim_calls;

static long long killer_proc(ae_loop *l, long long id, void *data) {
    (void)id;
    (*(int *)data)++;
    assert_int_equal(ae_del_timer(l, victim_id), AE_OK);
    return AE_NOMORE;
}

static long long victim_proc(ae_loop *l, long long id, void *data) {
    (void)l, (void)id, (void)data;
    victim_calls++;
    return AE_NOMORE;
}

static void test_timer_deletes_another_in_callback(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    int killer_calls = 0;
    victim_calls = 0;
    /* Both due in the same iteration; the killer is scanned first (newest
     * first) and removes the victim before its turn. */
    victim_id = ae_add_timer(l, 1, victim_proc, NULL);
    ae_add_timer(l, 1, killer_proc, &killer_calls);
    usleep(3000);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(killer_calls, 1);
    usleep(3000);
    for (int i = 0; i < 3; i++) ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(victim_calls, 0);
    ae_delete(l);
}

static int child_calls;

static long long child_proc(ae_loop *l, long long id, void *data) {
    (void)l, (void)id, (void)data;
    child_calls++;
    return AE_NOMORE;
}

static long long parent_proc(ae_loop *l, long long id, void *data) {
    (void)id;
    (*(int *)data)++;
    ae_add_timer(l, 0, child_proc, NULL);
    return AE_NOMORE;
}

static void test_timer_added_in_callback_waits_one_iteration(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    int parent_calls = 0;
    child_calls = 0;
    ae_add_timer(l, 0, parent_proc, &parent_calls);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(parent_calls, 1);
    assert_int_equal(child_calls, 0);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(child_calls, 1);
    ae_delete(l);
}

/* ================= file events ================= */

typedef struct {
    int calls;
    int last_mask;
    int last_fd;
    char byte;
    pthread_t thread;
} file_state;

static void read_proc(ae_loop *l, int fd, void *data, int mask) {
    (void)l;
    file_state *s = data;
    s->calls++;
    s->last_mask = mask;
    s->last_fd = fd;
    s->thread = pthread_self();
    char c;
    if (read(fd, &c, 1) == 1) s->byte = c;
}

static void test_file_event_readable_pipe(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int fds[2];
    make_pipe(fds);
    file_state s = {0};
    assert_int_equal(ae_add_file(l, fds[0], AE_READABLE, read_proc, &s), AE_OK);
    /* Nothing written: nothing fires. */
    assert_int_equal(ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT), 0);
    assert_int_equal(s.calls, 0);
    assert_int_equal(write(fds[1], "x", 1), 1);
    assert_int_equal(ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT), 1);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.last_fd, fds[0]);
    assert_int_equal(s.last_mask, AE_READABLE);
    assert_int_equal(s.byte, 'x');
    /* Level-triggered: drained, so it does not fire again. */
    assert_int_equal(ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT), 0);
    ae_del_file(l, fds[0], AE_READABLE);
    close(fds[0]);
    close(fds[1]);
    ae_delete(l);
}

static void count_proc(ae_loop *l, int fd, void *data, int mask) {
    (void)l, (void)fd;
    file_state *s = data;
    s->calls++;
    s->last_mask |= mask;
}

static void test_file_event_writable_socket(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int sv[2];
    make_socketpair(sv);
    file_state s = {0};
    assert_int_equal(ae_add_file(l, sv[0], AE_WRITABLE, count_proc, &s), AE_OK);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.last_mask, AE_WRITABLE);
    ae_del_file(l, sv[0], AE_WRITABLE);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(s.calls, 1);
    close(sv[0]);
    close(sv[1]);
    ae_delete(l);
}

static void test_one_proc_for_both_masks_called_once(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int sv[2];
    make_socketpair(sv);
    file_state s = {0};
    assert_int_equal(write(sv[1], "y", 1), 1);
    assert_int_equal(ae_add_file(l, sv[0], AE_READABLE | AE_WRITABLE, count_proc, &s), AE_OK);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.last_mask, AE_READABLE | AE_WRITABLE);
    close(sv[0]);
    close(sv[1]);
    ae_delete(l);
}

static void r_note_proc(ae_loop *l, int fd, void *data, int mask) {
    (void)l, (void)fd, (void)data, (void)mask;
    note('r');
}

static void w_note_proc(ae_loop *l, int fd, void *data, int mask) {
    (void)l, (void)fd, (void)data, (void)mask;
    note('w');
}

static void test_read_runs_before_write(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int sv[2];
    make_socketpair(sv);
    reset_order();
    assert_int_equal(write(sv[1], "y", 1), 1);
    assert_int_equal(ae_add_file(l, sv[0], AE_WRITABLE, w_note_proc, NULL), AE_OK);
    assert_int_equal(ae_add_file(l, sv[0], AE_READABLE, r_note_proc, NULL), AE_OK);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_string_equal(order, "rw");
    close(sv[0]);
    close(sv[1]);
    ae_delete(l);
}

static void drop_write_proc(ae_loop *l, int fd, void *data, int mask) {
    (void)data, (void)mask;
    note('r');
    ae_del_file(l, fd, AE_WRITABLE);
}

static void test_read_handler_removes_own_write(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int sv[2];
    make_socketpair(sv);
    reset_order();
    assert_int_equal(write(sv[1], "y", 1), 1);
    ae_add_file(l, sv[0], AE_READABLE, drop_write_proc, NULL);
    ae_add_file(l, sv[0], AE_WRITABLE, w_note_proc, NULL);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_string_equal(order, "r");
    assert_int_equal(ae_get_file_mask(l, sv[0]), AE_READABLE);
    close(sv[0]);
    close(sv[1]);
    ae_delete(l);
}

static int peer_fd[2];
static int peer_calls;

static void kill_peer_proc(ae_loop *l, int fd, void *data, int mask) {
    (void)data, (void)mask;
    peer_calls++;
    int other = fd == peer_fd[0] ? peer_fd[1] : peer_fd[0];
    ae_del_file(l, other, AE_READABLE);
}

static void test_del_other_fd_inside_callback(void **state) {
    (void)state;
    /* Two fds fire together; whichever runs first removes the other, whose
     * already-fired event must then not be delivered. */
    ae_loop *l = ae_create(64);
    int p1[2], p2[2];
    make_pipe(p1);
    make_pipe(p2);
    peer_fd[0] = p1[0];
    peer_fd[1] = p2[0];
    peer_calls = 0;
    ae_add_file(l, p1[0], AE_READABLE, kill_peer_proc, NULL);
    ae_add_file(l, p2[0], AE_READABLE, kill_peer_proc, NULL);
    assert_int_equal(write(p1[1], "a", 1), 1);
    assert_int_equal(write(p2[1], "b", 1), 1);
    int n = ae_poll(l, 1000);
    assert_int_equal(n, 2);
    ae_process_fired(l, n);
    assert_int_equal(peer_calls, 1);
    close(p1[0]);
    close(p1[1]);
    close(p2[0]);
    close(p2[1]);
    ae_delete(l);
}

static void test_hangup_wakes_reader(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int sv[2];
    make_socketpair(sv);
    file_state s = {0};
    s.byte = 'q';
    ae_add_file(l, sv[0], AE_READABLE, read_proc, &s);
    close(sv[1]);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(s.calls, 1);
    assert_true(s.last_mask & AE_READABLE);
    assert_int_equal(s.byte, 'q'); /* read returned 0: EOF */
    close(sv[0]);
    ae_delete(l);
}

static void test_file_masks_and_limits(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int sv[2];
    make_socketpair(sv);
    file_state s = {0};
    assert_int_equal(ae_get_file_mask(l, sv[0]), AE_NONE);
    assert_int_equal(ae_add_file(l, sv[0], AE_READABLE, count_proc, &s), AE_OK);
    assert_int_equal(ae_add_file(l, sv[0], AE_WRITABLE, count_proc, &s), AE_OK);
    assert_int_equal(ae_get_file_mask(l, sv[0]), AE_READABLE | AE_WRITABLE);
    ae_del_file(l, sv[0], AE_READABLE);
    assert_int_equal(ae_get_file_mask(l, sv[0]), AE_WRITABLE);
    ae_del_file(l, sv[0], AE_READABLE); /* removing what is not there: no-op */
    assert_int_equal(ae_get_file_mask(l, sv[0]), AE_WRITABLE);
    ae_del_file(l, sv[0], AE_WRITABLE);
    assert_int_equal(ae_get_file_mask(l, sv[0]), AE_NONE);
    /* And it can be registered again from scratch. */
    assert_int_equal(ae_add_file(l, sv[0], AE_READABLE, count_proc, &s), AE_OK);
    ae_del_file(l, sv[0], AE_READABLE);
    /* Out of range. */
    errno = 0;
    assert_int_equal(ae_add_file(l, 64, AE_READABLE, count_proc, &s), AE_ERR);
    assert_int_equal(errno, ERANGE);
    assert_int_equal(ae_add_file(l, -1, AE_READABLE, count_proc, &s), AE_ERR);
    assert_int_equal(ae_get_file_mask(l, 64), AE_NONE);
    ae_del_file(l, 1000, AE_READABLE); /* harmless */
    /* A closed fd cannot be registered (epoll_ctl's error comes back). */
    int dead = sv[1];
    close(dead);
    assert_int_equal(ae_add_file(l, dead, AE_READABLE, count_proc, &s), AE_ERR);
    close(sv[0]);
    ae_delete(l);
}

static void test_resize(void **state) {
    (void)state;
    ae_loop *l = ae_create(8);
    assert_int_equal(ae_get_setsize(l), 8);
    int fds[2];
    make_pipe(fds);
    assert_true(fds[0] < 8);
    file_state s = {0};
    ae_add_file(l, fds[0], AE_READABLE, read_proc, &s);
    /* Cannot shrink below a registered fd. */
    assert_int_equal(ae_resize(l, fds[0]), AE_ERR);
    assert_int_equal(ae_resize(l, 8), AE_OK);
    assert_int_equal(ae_resize(l, 1024), AE_OK);
    assert_int_equal(ae_get_setsize(l), 1024);
    assert_int_equal(ae_get_file_mask(l, fds[0]), AE_READABLE);
    assert_int_equal(ae_get_file_mask(l, 900), AE_NONE);
    assert_int_equal(write(fds[1], "z", 1), 1);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(s.byte, 'z');
    ae_del_file(l, fds[0], AE_READABLE);
    assert_int_equal(ae_resize(l, fds[0]), AE_OK); /* nothing registered now */
    close(fds[0]);
    close(fds[1]);
    ae_delete(l);
}

/* ================= hooks and the iteration's order ================= */

static void before_hook(ae_loop *l) {
    (void)l;
    note('B');
}

static void after_hook(ae_loop *l) {
    (void)l;
    note('A');
}

static void file_note_proc(ae_loop *l, int fd, void *data, int mask) {
    (void)l, (void)data, (void)mask;
    note('F');
    char c;
    (void)!read(fd, &c, 1);
}

static long long timer_note_proc(ae_loop *l, long long id, void *data) {
    (void)l, (void)id, (void)data;
    note('T');
    return AE_NOMORE;
}

static void test_sleep_hooks_and_iteration_order(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int fds[2];
    make_pipe(fds);
    ae_set_before_sleep(l, before_hook);
    ae_set_after_sleep(l, after_hook);
    ae_add_file(l, fds[0], AE_READABLE, file_note_proc, NULL);
    ae_add_timer(l, 0, timer_note_proc, NULL);
    assert_int_equal(write(fds[1], "x", 1), 1);
    usleep(1000);
    reset_order();
    int processed = ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT | AE_CALL_BEFORE_SLEEP | AE_CALL_AFTER_SLEEP);
    assert_string_equal(order, "BAFT");
    assert_int_equal(processed, 2);
    /* Without the flags the hooks are not called (Valkey's
     * processEventsWhileBlocked relies on that). */
    reset_order();
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_string_equal(order, "");
    reset_order();
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT | AE_CALL_BEFORE_SLEEP);
    assert_string_equal(order, "B");
    close(fds[0]);
    close(fds[1]);
    ae_delete(l);
}

static void dont_wait_hook(ae_loop *l) {
    note('B');
    ae_set_dont_wait(l, 1);
}

static void test_before_sleep_can_forbid_sleeping(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int calls = 0;
    ae_add_timer(l, 10000, once_proc, &calls);
    ae_set_before_sleep(l, dont_wait_hook);
    reset_order();
    long long t0 = now_us();
    ae_process_events(l, AE_ALL_EVENTS | AE_CALL_BEFORE_SLEEP);
    assert_true(now_us() - t0 < 5000000); /* did not sleep the 10 s */
    assert_string_equal(order, "B");
    assert_int_equal(calls, 0);
    ae_delete(l);
}

static void test_dont_wait_returns_at_once(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int calls = 0, fds[2];
    make_pipe(fds);
    file_state s = {0};
    ae_add_file(l, fds[0], AE_READABLE, read_proc, &s);
    ae_add_timer(l, 10000, once_proc, &calls);
    long long t0 = now_us();
    assert_int_equal(ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT), 0);
    assert_true(now_us() - t0 < 5000000);
    assert_int_equal(ae_process_events(l, 0), 0); /* no event kinds: nothing */
    close(fds[0]);
    close(fds[1]);
    ae_delete(l);
}

static long long stop_proc(ae_loop *l, long long id, void *data) {
    (void)id;
    int *n = data;
    if (++*n == 3) {
        ae_stop(l);
        return AE_NOMORE;
    }
    return 1;
}

static void test_ae_main_until_stop(void **state) {
    (void)state;
    ae_loop *l = ae_create(16);
    int n = 0;
    ae_set_before_sleep(l, before_hook);
    ae_set_after_sleep(l, after_hook);
    reset_order();
    ae_add_timer(l, 1, stop_proc, &n);
    ae_main(l); /* returns because the timer stops it */
    assert_int_equal(n, 3);
    /* ae_main calls both hooks every iteration. */
    assert_true(order_len >= 2);
    assert_int_equal(order[0], 'B');
    assert_int_equal(order[1], 'A');
    ae_delete(l);
}

/* ================= the split: poll on one thread, process on main ================= */

static void test_poll_then_process_fired(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int fds[2];
    make_pipe(fds);
    file_state s = {0};
    ae_add_file(l, fds[0], AE_READABLE, read_proc, &s);
    assert_int_equal(ae_poll(l, 0), 0);
    assert_int_equal(write(fds[1], "p", 1), 1);
    int n = ae_poll(l, 1000);
    assert_int_equal(n, 1);
    assert_int_equal(s.calls, 0); /* polling runs no handler */
    assert_int_equal(ae_process_fired(l, n), 1);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.byte, 'p');
    close(fds[0]);
    close(fds[1]);
    ae_delete(l);
}

typedef struct {
    ae_loop *l;
    int n;
} poll_job;

static void *poller(void *arg) {
    poll_job *j = arg;
    j->n = ae_poll(j->l, 1000);
    return NULL;
}

static void test_poll_on_another_thread(void **state) {
    (void)state;
    /* The poll offload: a thread holding the token polls; main runs the
     * handlers after joining it (pthread_join orders the fired[] writes
     * before main's reads, as the outbox's release/acquire will). */
    ae_loop *l = ae_create(64);
    int fds[2];
    make_pipe(fds);
    file_state s = {0};
    ae_add_file(l, fds[0], AE_READABLE, read_proc, &s);
    poll_job j = {l, -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, poller, &j), 0);
    assert_int_equal(write(fds[1], "t", 1), 1);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(j.n, 1);
    assert_int_equal(s.calls, 0);
    ae_process_fired(l, j.n);
    assert_int_equal(s.calls, 1);
    assert_true(pthread_equal(s.thread, pthread_self()));
    close(fds[0]);
    close(fds[1]);
    ae_delete(l);
}

static int custom_polls;

static int counting_poll(ae_loop *l, int timeout_ms) {
    custom_polls++;
    return ae_poll(l, timeout_ms);
}

static void test_custom_poll_replaces_polling(void **state) {
    (void)state;
    ae_loop *l = ae_create(64);
    int fds[2];
    make_pipe(fds);
    file_state s = {0};
    ae_add_file(l, fds[0], AE_READABLE, read_proc, &s);
    ae_set_custom_poll(l, counting_poll);
    custom_polls = 0;
    assert_int_equal(write(fds[1], "c", 1), 1);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(custom_polls, 1);
    assert_int_equal(s.calls, 1);
    ae_set_custom_poll(l, NULL);
    ae_process_events(l, AE_ALL_EVENTS | AE_DONT_WAIT);
    assert_int_equal(custom_polls, 1);
    close(fds[0]);
    close(fds[1]);
    ae_delete(l);
}

static void test_file_events_flag_only(void **state) {
    (void)state;
    /* AE_FILE_EVENTS alone leaves due timers alone. */
    ae_loop *l = ae_create(64);
    int calls = 0, fds[2];
    make_pipe(fds);
    file_state s = {0};
    ae_add_file(l, fds[0], AE_READABLE, read_proc, &s);
    ae_add_timer(l, 0, once_proc, &calls);
    assert_int_equal(write(fds[1], "f", 1), 1);
    usleep(1000);
    assert_int_equal(ae_process_events(l, AE_FILE_EVENTS | AE_DONT_WAIT), 1);
    assert_int_equal(s.calls, 1);
    assert_int_equal(calls, 0);
    assert_int_equal(ae_process_events(l, AE_TIME_EVENTS | AE_DONT_WAIT), 1);
    assert_int_equal(calls, 1);
    close(fds[0]);
    close(fds[1]);
    ae_delete(l);
}

static void test_no_leaks(void **state) {
    (void)state;
    size_t before = zmalloc_used_memory();
    ae_loop *l = ae_create(128);
    int calls = 0;
    for (int i = 0; i < 10; i++) ae_add_timer(l, 100000, once_proc, &calls);
    long long id = ae_add_timer(l, 0, once_proc, &calls);
    ae_del_timer(l, id);
    ae_resize(l, 4096);
    ae_delete(l);
    assert_int_equal(zmalloc_used_memory(), before);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_fires_once),
        cmocka_unit_test(test_timers_fire_in_time_order),
        cmocka_unit_test(test_process_events_sleeps_until_timer),
        cmocka_unit_test(test_timer_repeats_then_stops),
        cmocka_unit_test(test_timer_deleted_before_it_fires),
        cmocka_unit_test(test_timer_deletes_itself_in_callback),
        cmocka_unit_test(test_timer_deletes_another_in_callback),
        cmocka_unit_test(test_timer_added_in_callback_waits_one_iteration),
        cmocka_unit_test(test_file_event_readable_pipe),
        cmocka_unit_test(test_file_event_writable_socket),
        cmocka_unit_test(test_one_proc_for_both_masks_called_once),
        cmocka_unit_test(test_read_runs_before_write),
        cmocka_unit_test(test_read_handler_removes_own_write),
        cmocka_unit_test(test_del_other_fd_inside_callback),
        cmocka_unit_test(test_hangup_wakes_reader),
        cmocka_unit_test(test_file_masks_and_limits),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_sleep_hooks_and_iteration_order),
        cmocka_unit_test(test_before_sleep_can_forbid_sleeping),
        cmocka_unit_test(test_dont_wait_returns_at_once),
        cmocka_unit_test(test_ae_main_until_stop),
        cmocka_unit_test(test_poll_then_process_fired),
        cmocka_unit_test(test_poll_on_another_thread),
        cmocka_unit_test(test_custom_poll_replaces_polling),
        cmocka_unit_test(test_file_events_flag_only),
        cmocka_unit_test(test_no_leaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
