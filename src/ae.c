/* ae.c — the event loop (step 0, plumbing layer). See ae.h for who may call
 * what.
 *
 * Valkey: src/ae.c and src/ae_epoll.c. The shape is Valkey's: a table of
 * file events indexed by fd, a fired[] array the poll fills, an unsorted
 * list of timers scanned once per iteration (O(timers), which is fine for
 * the handful a server has: Valkey's own comment says so), and timers on a
 * monotonic clock so a wall-clock jump neither fires nor stalls them.
 */
#include "ae.h"

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "zmalloc.h"

/* A deleted timer keeps its node until no callback is running on it. */
#define AE_DELETED_TIMER_ID -1

typedef struct ae_file_event {
    int mask; /* AE_READABLE | AE_WRITABLE */
    ae_file_proc *rproc;
    ae_file_proc *wproc;
    void *client_data;
} ae_file_event;

typedef struct ae_fired {
    int fd;
    int mask;
} ae_fired;

typedef struct ae_timer {
    long long id; /* AE_DELETED_TIMER_ID once deleted */
    long long when_us;
    ae_time_proc *proc;
    void *client_data;
    int refcount; /* > 0 while its proc runs: the node must not be freed */
    struct ae_timer *prev, *next;
} ae_timer;

struct ae_loop {
    int setsize;
    int maxfd; /* highest registered fd, -1 if none */
    int epfd;
    ae_file_event *events;         /* setsize slots; main thread only */
    ae_fired *fired;               /* written by ae_poll (the token holder) */
    struct epoll_event *ep_events; /* ae_poll's scratch */
    ae_timer *timers;              /* main thread only */
    long long next_timer_id;
    int stop;
    int dont_wait;
    ae_sleep_proc *before_sleep;
    ae_sleep_proc *after_sleep;
    ae_poll_proc *custom_poll;
    int last_numevents; /* what the last poll of ae_process_events returned */
    int fired_left;     /* fired events after the one being handled now (ae_fired_waiting) */
};

/* util.c's monotonic clock, as the signed µs the timers count in. */
static long long ae_monotonic_us(void) { return (long long)util_monotonic_us(); }

ae_loop *ae_create(int setsize) {
    if (setsize < 1) setsize = 1;
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd == -1) return NULL;
    ae_loop *l = zcalloc(sizeof(*l));
    l->setsize = setsize;
    l->maxfd = -1;
    l->epfd = epfd;
    l->events = zcalloc(sizeof(ae_file_event) * (size_t)setsize);
    l->fired = zcalloc(sizeof(ae_fired) * (size_t)setsize);
    l->ep_events = zcalloc(sizeof(struct epoll_event) * (size_t)setsize);
    return l;
}

void ae_delete(ae_loop *l) {
    if (!l) return;
    close(l->epfd);
    ae_timer *t = l->timers;
    while (t) {
        ae_timer *next = t->next;
        zfree(t);
        t = next;
    }
    zfree(l->events);
    zfree(l->fired);
    zfree(l->ep_events);
    zfree(l);
}

/*@ ae-resize */
/* Reallocates the arrays ae_poll writes: never while another thread holds
 * the poll token (ae.h). */
int ae_resize(ae_loop *l, int setsize) {
    if (setsize < 1) return AE_ERR;
    if (setsize == l->setsize) return AE_OK;
    if (l->maxfd >= setsize) return AE_ERR;
    l->events = zrealloc(l->events, sizeof(ae_file_event) * (size_t)setsize);
    l->fired = zrealloc(l->fired, sizeof(ae_fired) * (size_t)setsize);
    l->ep_events = zrealloc(l->ep_events, sizeof(struct epoll_event) * (size_t)setsize);
    for (int i = l->setsize; i < setsize; i++) l->events[i] = (ae_file_event){0};
    l->setsize = setsize;
    return AE_OK;
}
/*@ end */

int ae_get_setsize(const ae_loop *l) { return l->setsize; }

static uint32_t ae_epoll_bits(int mask) {
    uint32_t ev = 0;
    if (mask & AE_READABLE) ev |= EPOLLIN;
    if (mask & AE_WRITABLE) ev |= EPOLLOUT;
    return ev;
}

/*@ ae-file-events */
int ae_add_file(ae_loop *l, int fd, int mask, ae_file_proc *proc, void *client_data) {
    if (fd < 0 || fd >= l->setsize) {
        errno = ERANGE;
        return AE_ERR;
    }
    ae_file_event *fe = &l->events[fd];
    struct epoll_event ee = {0};
    /* ADD the first time, MOD to widen an existing registration. */
    int op = fe->mask == AE_NONE ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    ee.events = ae_epoll_bits(fe->mask | mask);
    ee.data.fd = fd;
    if (epoll_ctl(l->epfd, op, fd, &ee) == -1) return AE_ERR;
    fe->mask |= mask;
    if (mask & AE_READABLE) fe->rproc = proc;
    if (mask & AE_WRITABLE) fe->wproc = proc;
    fe->client_data = client_data;
    if (fd > l->maxfd) l->maxfd = fd;
    return AE_OK;
}

void ae_del_file(ae_loop *l, int fd, int mask) {
    if (fd < 0 || fd >= l->setsize) return;
    ae_file_event *fe = &l->events[fd];
    if ((fe->mask & mask) == AE_NONE) return;
    int newmask = fe->mask & ~mask;
    struct epoll_event ee = {0};
    ee.events = ae_epoll_bits(newmask);
    ee.data.fd = fd;
    /* Errors are ignored, as in Valkey: a closed fd has already left the
     * epoll set, and there is nothing better to do here anyway. */
    (void)epoll_ctl(l->epfd, newmask != AE_NONE ? EPOLL_CTL_MOD : EPOLL_CTL_DEL, fd, &ee);
    fe->mask = newmask;
    if (newmask == AE_NONE && fd == l->maxfd) {
        int j;
        for (j = l->maxfd - 1; j >= 0; j--)
            if (l->events[j].mask != AE_NONE) break;
        l->maxfd = j;
    }
}
/*@ end */

int ae_get_file_mask(ae_loop *l, int fd) {
    if (fd < 0 || fd >= l->setsize) return AE_NONE;
    return l->events[fd].mask;
}

long long ae_add_timer(ae_loop *l, long long ms, ae_time_proc *proc, void *client_data) {
    ae_timer *t = zcalloc(sizeof(*t));
    t->id = l->next_timer_id++;
    t->when_us = ae_monotonic_us() + ms * 1000;
    t->proc = proc;
    t->client_data = client_data;
    /* At the head, as Valkey does: a timer added by a callback is not seen
     * again in the iteration that is running (see the max_id guard). */
    t->next = l->timers;
    if (t->next) t->next->prev = t;
    l->timers = t;
    return t->id;
}

int ae_del_timer(ae_loop *l, long long id) {
    for (ae_timer *t = l->timers; t; t = t->next) {
        if (t->id == id) {
            /* Mark only: the timer loop frees it, possibly after the
             * callback that is running on it has returned. */
            t->id = AE_DELETED_TIMER_ID;
            return AE_OK;
        }
    }
    return AE_ERR;
}

void ae_set_before_sleep(ae_loop *l, ae_sleep_proc *p) { l->before_sleep = p; }
void ae_set_after_sleep(ae_loop *l, ae_sleep_proc *p) { l->after_sleep = p; }
void ae_set_custom_poll(ae_loop *l, ae_poll_proc *p) { l->custom_poll = p; }
void ae_set_dont_wait(ae_loop *l, int dont_wait) { l->dont_wait = dont_wait; }
int ae_dont_wait(const ae_loop *l) { return l->dont_wait; }
int ae_last_numevents(const ae_loop *l) { return l->last_numevents; }

int ae_fired_waiting(const ae_loop *l) { return l->fired_left; }

/* Microseconds until the earliest live timer: 0 if one is due, -1 if none. */
static long long ae_us_until_earliest_timer(ae_loop *l) {
    ae_timer *earliest = NULL;
    for (ae_timer *t = l->timers; t; t = t->next)
        if (t->id != AE_DELETED_TIMER_ID && (!earliest || t->when_us < earliest->when_us)) earliest = t;
    if (!earliest) return -1;
    long long now = ae_monotonic_us();
    return earliest->when_us > now ? earliest->when_us - now : 0;
}

/*@ ae-others-ready */
/* Asks the poller without waiting and consumes nothing: the events are
 * level-triggered, so the next poll reports them again. */
int ae_others_ready(ae_loop *l, int fd) {
    if (l->custom_poll) return 1; /* a worker polls for main: main cannot ask */
    if (ae_us_until_earliest_timer(l) == 0) return 1;
    struct epoll_event ev[2];
    int n = epoll_wait(l->epfd, ev, 2, 0);
    for (int j = 0; j < n; j++)
        if (ev[j].data.fd != fd) return 1;
    return 0;
}
/*@ end */

/*@ ae-timers */
static int ae_process_timers(ae_loop *l) {
    int processed = 0;
    /* Timers created by the callbacks below wait for the next iteration,
     * so a timer that re-adds itself with 0 ms cannot starve the loop. */
    long long max_id = l->next_timer_id - 1;
    long long now = ae_monotonic_us();
    ae_timer *t = l->timers;
    while (t) {
        if (t->id == AE_DELETED_TIMER_ID) {
            ae_timer *next = t->next;
            /* A callback further up the stack is still running on it. */
            if (t->refcount == 0) {
                if (t->prev)
                    t->prev->next = t->next;
                else
                    l->timers = t->next;
                if (t->next) t->next->prev = t->prev;
                zfree(t);
            }
            t = next;
            continue;
        }
        if (t->id > max_id) {
            t = t->next;
            continue;
        }
        if (t->when_us <= now) {
            t->refcount++;
            long long ms = t->proc(l, t->id, t->client_data);
            t->refcount--;
            processed++;
            now = ae_monotonic_us();
            if (ms != AE_NOMORE)
                t->when_us = now + ms * 1000;
            else
                t->id = AE_DELETED_TIMER_ID;
        }
        t = t->next;
    }
    return processed;
}
/*@ end */

/*@ ae-poll */
int ae_poll(ae_loop *l, int timeout_ms) {
    int n = epoll_wait(l->epfd, l->ep_events, l->setsize, timeout_ms);
    if (n <= 0) return 0; /* timeout, or EINTR: nothing fired */
    for (int j = 0; j < n; j++) {
        uint32_t e = l->ep_events[j].events;
        int mask = 0;
        if (e & EPOLLIN) mask |= AE_READABLE;
        if (e & EPOLLOUT) mask |= AE_WRITABLE;
        /* An error or hang-up wakes both directions, so whichever handler
         * is installed finds out by reading or writing. */
        if (e & (EPOLLERR | EPOLLHUP)) mask |= AE_READABLE | AE_WRITABLE;
        l->fired[j].fd = l->ep_events[j].data.fd;
        l->fired[j].mask = mask;
    }
    return n;
}
/*@ end */

/*@ ae-process-fired */
int ae_process_fired(ae_loop *l, int numevents) {
    int processed = 0;
    for (int j = 0; j < numevents; j++) {
        int fd = l->fired[j].fd;
        int mask = l->fired[j].mask;
        processed++;
        l->fired_left = numevents - j - 1;
        if (fd < 0 || fd >= l->setsize) continue; /* the set shrank meanwhile */
        ae_file_event *fe = &l->events[fd];
        int fired = 0;
        /* fe->mask is re-read before each call: an earlier handler of this
         * iteration may have removed this fd's events. */
        if (fe->mask & mask & AE_READABLE) {
            fe->rproc(l, fd, fe->client_data, mask);
            fired++;
            fe = &l->events[fd]; /* a handler may have resized the table */
        }
        if (fe->mask & mask & AE_WRITABLE) {
            /* One proc for both directions already saw both bits. */
            if (!fired || fe->wproc != fe->rproc) fe->wproc(l, fd, fe->client_data, mask);
        }
    }
    l->fired_left = 0;
    return processed;
}
/*@ end */

/*@ ae-process-events */
int ae_process_events(ae_loop *l, int flags) {
    int processed = 0;
    if (!(flags & (AE_FILE_EVENTS | AE_TIME_EVENTS))) return 0;

    /* Poll even with no fds when a timer is to be waited for: the poll is
     * the sleep. */
    if (l->maxfd != -1 || ((flags & AE_TIME_EVENTS) && !(flags & AE_DONT_WAIT))) {
        if (l->before_sleep && (flags & AE_CALL_BEFORE_SLEEP)) l->before_sleep(l);

        /* Computed after before_sleep, which may add timers or ask not
         * to wait. -1: sleep until an fd wakes us. */
        int timeout = -1;
        if ((flags & AE_DONT_WAIT) || l->dont_wait) {
            timeout = 0;
        } else if (flags & AE_TIME_EVENTS) {
            long long us = ae_us_until_earliest_timer(l);
            if (us >= 0) timeout = (int)((us + 999) / 1000);
        }

        int numevents = l->custom_poll ? l->custom_poll(l, timeout) : ae_poll(l, timeout);
        if (!(flags & AE_FILE_EVENTS)) numevents = 0;
        l->last_numevents = numevents;

        if (l->after_sleep && (flags & AE_CALL_AFTER_SLEEP)) l->after_sleep(l);

        processed += ae_process_fired(l, numevents);
    }
    if (flags & AE_TIME_EVENTS) processed += ae_process_timers(l);
    return processed;
}
/*@ end */

void ae_main(ae_loop *l) {
    l->stop = 0;
    while (!l->stop) ae_process_events(l, AE_ALL_EVENTS | AE_CALL_BEFORE_SLEEP | AE_CALL_AFTER_SLEEP);
}

void ae_stop(ae_loop *l) { l->stop = 1; }
