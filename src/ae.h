/* ae.h — the event loop: file events on epoll, timers on a monotonic clock.
 *
 * Step 0 (plumbing layer). Owns: the epoll instance, the table of registered
 * file events (indexed by fd, one slot per fd below setsize), the
 * fired-events array the last poll filled, the timer list, and the
 * before/after-sleep hooks. It knows no client: a handler is a function
 * pointer and a void *.
 *
 * Threads (the poll offload of step 4 is why this is spelled out):
 *   - the main thread calls everything, except as below;
 *   - ae_poll may be called by ONE other thread at a time, and only while
 *     that thread holds the "poll token" (io_threads hands it over with a
 *     POLL job, and main does not touch the loop's fired[] array until the
 *     job's completion is published back to it). ae_poll runs epoll_wait
 *     into the ep_events scratch array, with setsize as its bound, and
 *     writes fired[]; it never calls a handler and never reads events[].
 *     Main may keep calling ae_add_file/ae_del_file meanwhile: they write
 *     only events[] and maxfd, and epoll_ctl concurrent with epoll_wait is
 *     safe in the kernel. Main must NOT call ae_resize or ae_delete until
 *     the token is back: both reallocate or free the ep_events and fired[]
 *     arrays ae_poll is writing, and ae_resize changes setsize (so a
 *     CONFIG SET maxclients waits for the poll job to complete).
 *
 * Valkey: src/ae.c (aeCreateEventLoop, aeCreateFileEvent, aeDeleteFileEvent,
 * aeProcessEvents, processTimeEvents, aeMain) and src/ae_epoll.c
 * (aeApiPoll). The poll/process split mirrors Valkey's aePoll (run by an I/O
 * thread under the loop's poll lock) and aeSetCustomPollProc (main waits for
 * that result instead of polling itself). soloist keeps epoll only.
 */
#ifndef SOLOIST_AE_H
#define SOLOIST_AE_H

#define AE_OK 0
#define AE_ERR -1

/* File event masks (Valkey's values). */
#define AE_NONE 0
#define AE_READABLE 1
#define AE_WRITABLE 2

/* ae_process_events flags (Valkey's values). */
#define AE_FILE_EVENTS (1 << 0)
#define AE_TIME_EVENTS (1 << 1)
#define AE_ALL_EVENTS (AE_FILE_EVENTS | AE_TIME_EVENTS)
#define AE_DONT_WAIT (1 << 2)         /* poll with a zero timeout */
#define AE_CALL_BEFORE_SLEEP (1 << 3) /* run the before-sleep hook first */
#define AE_CALL_AFTER_SLEEP (1 << 4)  /* run the after-sleep hook after polling */

/* A timer proc returns this to stop, or the ms until it runs again. */
#define AE_NOMORE -1

typedef struct ae_loop ae_loop;

/* mask: the events that fired for fd (AE_READABLE and/or AE_WRITABLE). */
typedef void ae_file_proc(ae_loop *l, int fd, void *client_data, int mask);
/* Returns the ms until the next run, or AE_NOMORE. */
typedef long long ae_time_proc(ae_loop *l, long long id, void *client_data);
typedef void ae_sleep_proc(ae_loop *l);
/* A replacement for polling in ae_process_events (Valkey:
 * aeCustomPollProc): must leave fired events where ae_process_fired reads
 * them, i.e. call ae_poll itself or wait for a thread that did. */
typedef int ae_poll_proc(ae_loop *l, int timeout_ms);

/* fds 0..setsize-1 can be registered. NULL if epoll cannot be created. */
ae_loop *ae_create(int setsize);
void ae_delete(ae_loop *l);
/* AE_ERR if an fd >= setsize is registered. */
int ae_resize(ae_loop *l, int setsize);
int ae_get_setsize(const ae_loop *l);

/* Registers proc for the events in mask, adding to what fd already has.
 * One client_data per fd (the last one given), one proc per direction
 * (Valkey's rfileProc/wfileProc). AE_ERR with errno ERANGE if fd >= setsize,
 * or epoll_ctl's errno. */
int ae_add_file(ae_loop *l, int fd, int mask, ae_file_proc *proc, void *client_data);
/* Removes the events in mask; safe from inside any handler, for any fd
 * (an event already fired for a removed direction is then not delivered). */
void ae_del_file(ae_loop *l, int fd, int mask);
int ae_get_file_mask(ae_loop *l, int fd);

/* Runs proc in ms milliseconds (monotonic clock), then as often as it asks.
 * Returns the timer's id (>= 0). */
long long ae_add_timer(ae_loop *l, long long ms, ae_time_proc *proc, void *client_data);
/* AE_OK, or AE_ERR if no such timer. Safe from inside any callback,
 * the timer's own included. */
int ae_del_timer(ae_loop *l, long long id);

void ae_set_before_sleep(ae_loop *l, ae_sleep_proc *p);
void ae_set_after_sleep(ae_loop *l, ae_sleep_proc *p);
void ae_set_custom_poll(ae_loop *l, ae_poll_proc *p); /* NULL: plain ae_poll */
/* Valkey's aeSetDontWait: while set, every poll has a zero timeout (a
 * before-sleep hook sets it when work is pending elsewhere, e.g. results
 * due from I/O threads, so the loop must not go to sleep). */
void ae_set_dont_wait(ae_loop *l, int dont_wait);
int ae_dont_wait(const ae_loop *l); /* as last set: the next poll will not wait */
/* The events the current iteration's poll returned, for the after-sleep
 * hook (Valkey passes afterSleep the count; step 5's policy reads it). */
int ae_last_numevents(const ae_loop *l);
/* Inside a handler: how many events of this poll's batch still wait
 * their handlers (0 outside ae_process_fired). */
int ae_fired_waiting(const ae_loop *l);
/* Whether anything besides fd's own events is ready now: a due timer or
 * an event on another fd (1 also when a custom poll holds the poller).
 * One epoll_wait that does not wait; step 7's write turn on main asks it
 * between chunks of one large reply. */
int ae_others_ready(ae_loop *l, int fd);

/* The split halves of one iteration.
 * ae_poll: epoll_wait for up to timeout_ms (-1 forever, 0 not at all) and
 *   store what fired in the loop; returns the number of events (0 on
 *   EINTR). See the threading note at the top.
 * ae_process_fired: main thread: run the handlers of the first numevents
 *   events the last ae_poll stored. Returns how many it looked at. */
int ae_poll(ae_loop *l, int timeout_ms);
int ae_process_fired(ae_loop *l, int numevents);

/* One iteration, Valkey's aeProcessEvents: the before-sleep hook (with
 * AE_CALL_BEFORE_SLEEP), a poll whose timeout is the time to the nearest
 * timer (0 with AE_DONT_WAIT; forever with no timers), the after-sleep hook
 * (with AE_CALL_AFTER_SLEEP), the file handlers, then the due timers.
 * Returns the number of file and time events processed. */
int ae_process_events(ae_loop *l, int flags);
/* Loops ae_process_events(AE_ALL_EVENTS | AE_CALL_BEFORE_SLEEP |
 * AE_CALL_AFTER_SLEEP) until ae_stop. */
void ae_main(ae_loop *l);
/* Makes ae_main return after the current iteration. Main thread only (a
 * signal handler sets its own flag and cron calls this). */
void ae_stop(ae_loop *l);

#endif
