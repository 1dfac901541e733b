/* worker.c — one load-generator thread (soloist-bench). See worker.h.
 *
 * A worker lives through three phases:
 *   1. connect its connections (blocking; set-up only);
 *   2. prefill (--prefill): SET every key of its share of each class once;
 *   3. the run: warmup, the measured window, then a drain that waits a
 *      bounded time for the replies still owed.
 * Between 2 and 3 all workers meet (sb_shared.ready / t0) so the run
 * starts at one instant for everyone.
 */
#include "worker.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "zmalloc.h"

#define READ_BUF (256 * 1024)
/* Per connection per loop turn, so one 10 MB reply or request cannot
 * hold up the other connections of the thread (the server caps its own
 * writes per event for the same reason: valkey NET_MAX_WRITES_PER_EVENT). */
#define READ_BUDGET (1024 * 1024)
#define WRITE_BUDGET (1024 * 1024)
#define PREFILL_DEPTH 16
#define IDLE_WAKE_NS 100000000ULL /* look at stop/phase at least every 100 ms */
#define PUBLISH_NS 10000000ULL    /* progress counters: 100 times a second is plenty */
#define HDR_HIGHEST (1ULL << 42)  /* ~73 minutes in ns */

void sb_worker_init(sb_worker *w, int id, sb_shared *sh) {
    const sb_run_cfg *cfg = sh->cfg;
    memset(w, 0, sizeof(*w));
    w->id = id;
    w->sh = sh;
    w->cfg = cfg;
    w->epfd = -1;
    w->timer.fd = -1;
    sb_rng_seed(&w->rng, cfg->seed * 0x100000001b3ULL + (uint64_t)id + 1);
    sb_hdr_init(&w->wake, HDR_HIGHEST);

    /* Connections are dealt to threads like cards, class after class, so
     * every thread gets a fair share of each class. */
    int total = 0;
    for (int k = 0; k < cfg->nclasses; k++) total += cfg->classes[k].conns;
    w->conns = zcalloc(sizeof(sb_conn) * (size_t)(total / cfg->threads + 1));
    w->dirty = zcalloc(sizeof(sb_conn *) * (size_t)(total / cfg->threads + 1));
    int g = 0;
    for (int k = 0; k < cfg->nclasses; k++) {
        const sb_class_cfg *cc = &cfg->classes[k];
        sb_class_rt *rt = &w->cls[k];
        rt->cfg = cc;
        rt->conns = zcalloc(sizeof(sb_conn *) * (size_t)(cc->conns / cfg->threads + 1));
        int before = 0; /* this class's connections on lower-numbered workers */
        for (int j = 0; j < cc->conns; j++, g++) {
            int owner = g % cfg->threads;
            if (owner < id) before++;
            if (owner != id) continue;
            sb_conn *c = &w->conns[w->nconns++];
            uint32_t cap = (uint32_t)(cc->pipeline > PREFILL_DEPTH ? cc->pipeline : PREFILL_DEPTH);
            sb_conn_init(c, k, j, cap, (size_t)cc->key_size, cc->pattern, cc->value_bytes);
            c->prefill_next = (uint64_t)j;
            rt->conns[rt->nconns++] = c;
        }
        rt->open = cc->rate > 0;
        rt->rate = cc->rate * rt->nconns / cc->conns;
        if (cc->count) {
            /* Split the count like the connections, exactly: the shares
             * of all workers add up to cc->count. */
            rt->counted = 1;
            uint64_t lo = cc->count * (uint64_t)before / (uint64_t)cc->conns;
            uint64_t hi = cc->count * (uint64_t)(before + rt->nconns) / (uint64_t)cc->conns;
            rt->count_left = hi - lo;
        }
        if (cc->dist == SB_DIST_ZIPF) sb_zipf_init(&rt->zipf, cc->keys, cc->zipf_s);
        sb_stats_init(&rt->st);
    }
    w->rbuf_sz = READ_BUF;
    w->rbuf = zmalloc(w->rbuf_sz);
}

void sb_worker_free(sb_worker *w) {
    for (int i = 0; i < w->nconns; i++) sb_conn_free(&w->conns[i]);
    for (int k = 0; k < w->cfg->nclasses; k++) {
        zfree(w->cls[k].conns);
        sb_stats_free(&w->cls[k].st);
    }
    zfree(w->conns);
    zfree(w->dirty);
    zfree(w->rbuf);
    sb_hdr_free(&w->wake);
    if (w->epfd >= 0) close(w->epfd);
    sb_timer_close(&w->timer);
}

static void note_error(sb_stats *st, const char *fmt, const char *arg) {
    if (!st->first_error[0]) snprintf(st->first_error, sizeof(st->first_error), fmt, arg);
}

/* --- issuing ---------------------------------------------------------- */

static void mark_dirty(sb_worker *w, sb_conn *c) {
    if (c->dirty) return;
    c->dirty = 1;
    w->dirty[w->ndirty++] = c;
}

/* May class k send a request intended at t? */
static int may_issue(const sb_worker *w, const sb_class_rt *k, uint64_t t) {
    if (!w->issuing || t >= w->end) return 0;
    return !(k->counted && t >= w->warm_end && k->count_left == 0);
}

static void issue(sb_worker *w, sb_class_rt *k, sb_conn *c, uint64_t intended) {
    const sb_class_cfg *cc = k->cfg;
    char key[512];
    int is_set = cc->set_w && (cc->get_w == 0 || sb_rng_below(&w->rng, cc->get_w + cc->set_w) >= cc->get_w);
    uint64_t idx = cc->dist == SB_DIST_ZIPF ? sb_zipf_next(&k->zipf, &w->rng) : sb_rng_below(&w->rng, cc->keys);
    sb_key_format(key, cc->key_size, cc->tag, idx);
    sb_req *r = sb_conn_push(c, is_set, key);
    r->intended_ns = intended;
    r->measured = intended >= w->warm_end && intended < w->end;
    if (r->measured) {
        k->st.issued++;
        if (k->counted) k->count_left--;
    }
    if (k->open) k->free_slots--;
    mark_dirty(w, c);
}

static void issue_prefill(sb_worker *w, sb_class_rt *k, sb_conn *c) {
    char key[512];
    sb_key_format(key, k->cfg->key_size, k->cfg->tag, c->prefill_next);
    c->prefill_next += (uint64_t)k->cfg->conns;
    sb_req *r = sb_conn_push(c, 1, key);
    r->prefill = 1;
    r->intended_ns = sb_now_ns();
    mark_dirty(w, c);
}

/* A connection of class k with room for one arrival, or NULL. An arrival
 * is one request, or with --batch a whole batch of -P requests, which
 * only a connection with nothing in flight can take (redis-benchmark's
 * -P, at a fixed rate). */
static sb_conn *open_room(const sb_class_rt *k, int *at) {
    uint32_t want = k->cfg->batch ? (uint32_t)k->cfg->pipeline : 1;
    if (k->free_slots < want) return NULL;
    for (int tries = 0; tries < k->nconns; tries++) {
        int i = (k->rr + tries) % k->nconns;
        sb_conn *cand = k->conns[i];
        if (!cand->dead && sb_conn_inflight(cand) + want <= (uint32_t)k->cfg->pipeline) {
            if (at) *at = i;
            return cand;
        }
    }
    return NULL;
}

/* Open loop: send every arrival whose time has come, as long as some
 * pipeline has room. An arrival that finds no room is not dropped and not
 * re-timed: it stays the schedule's next arrival, keeps its intended
 * time, and its wait is charged to its latency when it does go. A batch's
 * requests all carry the batch's intended time. */
static void pump_open(sb_worker *w, uint64_t now) {
    for (int i = 0; i < w->cfg->nclasses; i++) {
        sb_class_rt *k = &w->cls[i];
        if (!k->open) continue;
        int n = k->cfg->batch ? k->cfg->pipeline : 1, at = 0;
        for (;;) {
            uint64_t t = sb_sched_peek(&k->sched);
            if (t > now || !may_issue(w, k, t)) break;
            sb_conn *c = open_room(k, &at);
            if (!c) break;
            k->rr = (at + 1) % k->nconns;
            for (int j = 0; j < n && may_issue(w, k, t); j++) issue(w, k, c, t);
            sb_sched_advance(&k->sched);
        }
    }
}

/* --- replies and failures -------------------------------------------- */

static int in_window(const sb_worker *w, uint64_t now) { return now >= w->warm_end && now < w->end; }

static void on_reply(void *ud, sb_conn *c, const sb_req *req, const sb_reply *rep, uint64_t now) {
    sb_worker *w = ud;
    sb_class_rt *k = &w->cls[c->cls];
    sb_stats *st = &k->st;
    w->replies++;
    int is_err = rep->kind == SB_REPLY_ERROR;
    int bad = !rep->ok && !is_err;
    if (is_err) note_error(st, "%s", rep->text);
    if (bad) {
        char what[64];
        snprintf(what, sizeof(what), "%s reply of kind %d, length %lld", req->is_set ? "SET" : "GET", (int)rep->kind,
                 rep->len);
        note_error(st, "wrong value: %s", what);
    }
    if (req->measured) {
        st->done++;
        st->last_done_ns = now;
        sb_hdr_record(&st->latency, now > req->intended_ns ? now - req->intended_ns : 0);
        sb_hdr_record(&st->service, now > req->sent_ns ? now - req->sent_ns : 0);
        sb_hdr_record(&st->slip, req->sent_ns > req->intended_ns ? req->sent_ns - req->intended_ns : 0);
        if (req->is_set) {
            st->sets++;
        } else {
            st->gets++;
            if (rep->kind == SB_REPLY_NIL) st->misses++;
            else if (rep->ok) st->hits++;
        }
        st->error_replies += (uint64_t)is_err;
        st->bad_values += (uint64_t)bad;
    } else if (is_err || bad) {
        st->errors_outside++;
    }

    if (req->prefill) {
        if (c->prefill_next < k->cfg->keys) issue_prefill(w, k, c);
        return;
    }
    if (k->open) {
        k->free_slots++;
    } else if (!k->cfg->batch) {
        /* Closed loop: a reply frees a place in the pipeline; fill it. */
        if (may_issue(w, k, now) && sb_conn_inflight(c) < (uint32_t)k->cfg->pipeline) issue(w, k, c, now);
    } else if (sb_conn_inflight(c) == 0) {
        /* --batch: the whole batch is answered; send the next one. */
        while (may_issue(w, k, now) && sb_conn_inflight(c) < (uint32_t)k->cfg->pipeline) issue(w, k, c, now);
    }
}

static void conn_fail(sb_worker *w, sb_conn *c, const char *why) {
    if (c->dead) return;
    sb_class_rt *k = &w->cls[c->cls];
    k->st.conn_errors++;
    note_error(&k->st, "connection lost: %s", why);
    for (uint64_t s = c->head; s < c->tail; s++)
        if (c->slots[s % c->cap].measured) k->st.lost++;
    if (k->open && w->issuing) k->free_slots -= (uint64_t)k->cfg->pipeline - sb_conn_inflight(c);
    c->head = c->sent = c->tail;
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    sb_conn_close(c);
}

static void set_out_interest(sb_worker *w, sb_conn *c, int want) {
    if (c->dead || c->out_armed == want) return;
    struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->out_armed = want;
}

static void flush_conn(sb_worker *w, sb_conn *c, uint64_t now) {
    if (c->dead) return;
    long n = sb_conn_flush(c, now, WRITE_BUDGET);
    if (n < 0) {
        conn_fail(w, c, strerror(errno));
        return;
    }
    w->tx_all += (uint64_t)n;
    if (in_window(w, now)) w->cls[c->cls].st.bytes_tx += (uint64_t)n;
    /* Ask for EPOLLOUT only while output is stuck in a full socket. */
    set_out_interest(w, c, sb_conn_has_output(c));
}

static void handle_read(sb_worker *w, sb_conn *c) {
    long n = sb_conn_read(c, w->rbuf, w->rbuf_sz, READ_BUDGET, on_reply, w);
    if (n > 0) {
        w->rx_all += (uint64_t)n;
        if (in_window(w, sb_now_ns())) w->cls[c->cls].st.bytes_rx += (uint64_t)n;
    }
    if (n == -1) conn_fail(w, c, errno ? strerror(errno) : "closed by the server");
    if (n == -2) conn_fail(w, c, "protocol error (a reply that is not RESP, or not asked for)");
}

/* --- the loop --------------------------------------------------------- */

static uint64_t total_inflight(const sb_worker *w) {
    uint64_t n = 0;
    for (int i = 0; i < w->nconns; i++) n += sb_conn_inflight(&w->conns[i]);
    return n;
}

static void publish_progress(sb_worker *w) {
    uint64_t errs = 0;
    for (int k = 0; k < w->cfg->nclasses; k++) errs += sb_stats_errors(&w->cls[k].st) + w->cls[k].st.errors_outside;
    /* Relaxed stores, read by main's relaxed loads: counters for a
     * progress line, they publish nothing else. */
    atomic_store_explicit(&w->prog.done, w->replies, memory_order_relaxed);
    atomic_store_explicit(&w->prog.errors, errs, memory_order_relaxed);
    atomic_store_explicit(&w->prog.bytes_rx, w->rx_all, memory_order_relaxed);
    atomic_store_explicit(&w->prog.bytes_tx, w->tx_all, memory_order_relaxed);
    atomic_store_explicit(&w->prog.inflight, total_inflight(w), memory_order_relaxed);
}

/* Wait for events until `deadline` (absolute), then handle them. */
static void poll_once(sb_worker *w, uint64_t now, uint64_t deadline, int send_due) {
    struct epoll_event evs[128];
    int timeout = 0;
    if (deadline > now && send_due) {
        /* A send is due at `deadline`: the timerfd wakes us to the
         * nanosecond (epoll_wait's own timeout counts milliseconds). */
        sb_timer_arm(&w->timer, deadline);
        timeout = -1;
    } else if (deadline > now) {
        /* Only the end of a phase or the periodic look: milliseconds are
         * plenty, and a closed loop saves a timerfd_settime per turn. */
        timeout = (int)((deadline - now + 999999) / 1000000);
    }
    int n = epoll_wait(w->epfd, evs, 128, timeout);
    uint64_t woke = sb_now_ns();
    if (send_due && deadline > now && woke >= deadline) sb_hdr_record(&w->wake, woke - deadline);
    for (int i = 0; i < n; i++) {
        sb_conn *c = evs[i].data.ptr;
        if (!c) {
            sb_timer_ack(&w->timer);
            continue;
        }
        if (c->dead) continue;
        if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) handle_read(w, c);
        if (!c->dead && (evs[i].events & EPOLLOUT)) flush_conn(w, c, sb_now_ns());
    }
}

static void flush_dirty(sb_worker *w, uint64_t now) {
    for (int i = 0; i < w->ndirty; i++) {
        w->dirty[i]->dirty = 0;
        flush_conn(w, w->dirty[i], now);
    }
    w->ndirty = 0;
}

static int prefill_done(const sb_worker *w) {
    for (int i = 0; i < w->nconns; i++) {
        const sb_conn *c = &w->conns[i];
        if (!c->dead && (c->prefill_next < w->cfg->classes[c->cls].keys || sb_conn_inflight(c))) return 0;
    }
    return 1;
}

static void run_prefill(sb_worker *w) {
    w->issuing = 1;
    w->end = UINT64_MAX;
    w->warm_end = UINT64_MAX; /* nothing during prefill is measured */
    for (int i = 0; i < w->nconns; i++) {
        sb_conn *c = &w->conns[i];
        sb_class_rt *k = &w->cls[c->cls];
        while (sb_conn_inflight(c) < PREFILL_DEPTH && c->prefill_next < k->cfg->keys) issue_prefill(w, k, c);
    }
    while (!prefill_done(w) && !atomic_load_explicit(&w->sh->stop, memory_order_relaxed)) {
        uint64_t now = sb_now_ns();
        flush_dirty(w, now);
        poll_once(w, now, now + IDLE_WAKE_NS, 0);
        uint64_t filled = 0;
        for (int i = 0; i < w->nconns; i++) {
            const sb_conn *c = &w->conns[i];
            uint64_t next = c->prefill_next, C = (uint64_t)w->cfg->classes[c->cls].conns;
            filled += (next - (uint64_t)c->class_conn) / C - sb_conn_inflight(c);
        }
        atomic_store_explicit(&w->prog.prefilled, filled, memory_order_relaxed);
    }
    w->issuing = 0;
    /* Before `ready` is raised, so main's baseline for the run's progress
     * rates includes the prefill's replies. */
    publish_progress(w);
}

static void start_run(sb_worker *w) {
    const sb_run_cfg *cfg = w->cfg;
    w->warm_end = w->t0 + cfg->warmup_ns;
    w->end = cfg->duration_ns ? w->warm_end + cfg->duration_ns : UINT64_MAX;
    w->issuing = 1;
    for (int i = 0; i < cfg->nclasses; i++) {
        sb_class_rt *k = &w->cls[i];
        if (!k->nconns) continue;
        if (k->open) {
            /* Workers sharing a uniform class rate are offset by a
             * fraction of the interval, so their sends interleave. */
            /* With --batch the schedule's arrivals are batches of -P. */
            sb_sched_init(&k->sched, k->cfg->arrival, k->rate / (k->cfg->batch ? k->cfg->pipeline : 1), w->t0,
                          (double)w->id / cfg->threads,
                          cfg->seed ^ ((uint64_t)(w->id + 1) << 32) ^ (uint64_t)i);
            for (int j = 0; j < k->nconns; j++)
                if (!k->conns[j]->dead) k->free_slots += (uint64_t)k->cfg->pipeline;
        } else {
            for (int j = 0; j < k->nconns; j++) {
                sb_conn *c = k->conns[j];
                while (!c->dead && sb_conn_inflight(c) < (uint32_t)k->cfg->pipeline && may_issue(w, k, w->t0))
                    issue(w, k, c, w->t0);
            }
        }
    }
}

static int all_counted_done(const sb_worker *w, uint64_t now) {
    if (now < w->warm_end) return 0;
    for (int i = 0; i < w->cfg->nclasses; i++) {
        const sb_class_rt *k = &w->cls[i];
        if (k->nconns && (!k->counted || k->count_left > 0)) return 0;
    }
    return 1;
}

/* Stop sending; count what was due and never sent, then drain. */
static void stop_issuing(sb_worker *w, uint64_t now) {
    w->issuing = 0;
    w->stopped_ns = now < w->end ? now : w->end;
    w->drain_end = now + w->cfg->drain_ns;
    for (int i = 0; i < w->cfg->nclasses; i++) {
        sb_class_rt *k = &w->cls[i];
        if (!k->open || !k->nconns) continue;
        sb_sched_skip_until(&k->sched, w->warm_end, UINT64_MAX >> 1);
        if (!k->counted)
            k->st.unsent += sb_sched_skip_until(&k->sched, w->stopped_ns, 1000000000ULL) *
                            (uint64_t)(k->cfg->batch ? k->cfg->pipeline : 1);
    }
}

static void run_measured(sb_worker *w) {
    uint64_t last_publish = 0;
    start_run(w);
    for (;;) {
        uint64_t now = sb_now_ns();
        /* Send what is due before looking at the end: a request due just
         * before the end that the loop reaches just after it (a late
         * wake-up) is still inside the window and still owed. */
        if (w->issuing) pump_open(w, now);
        if (w->issuing && (now >= w->end || all_counted_done(w, now) ||
                           atomic_load_explicit(&w->sh->stop, memory_order_relaxed)))
            stop_issuing(w, now);
        if (!w->issuing && (total_inflight(w) == 0 || now >= w->drain_end)) break;
        flush_dirty(w, now);
        if (now - last_publish >= PUBLISH_NS) {
            publish_progress(w);
            last_publish = now;
        }

        uint64_t deadline = now + IDLE_WAKE_NS;
        int send_due = 0;
        if (w->issuing) {
            if (w->end < deadline) deadline = w->end;
            for (int i = 0; i < w->cfg->nclasses; i++) {
                sb_class_rt *k = &w->cls[i];
                if (!k->open || !open_room(k, NULL)) continue;
                uint64_t t = sb_sched_peek(&k->sched);
                if (t < deadline && may_issue(w, k, t)) {
                    deadline = t;
                    send_due = 1;
                }
            }
        } else if (w->drain_end < deadline) {
            deadline = w->drain_end;
        }
        poll_once(w, now, deadline, send_due);
    }
    /* Whatever is still owed after the drain is counted, not forgotten. */
    for (int i = 0; i < w->nconns; i++) {
        sb_conn *c = &w->conns[i];
        for (uint64_t s = c->head; s < c->tail; s++)
            if (c->slots[s % c->cap].measured) w->cls[c->cls].st.unanswered++;
    }
    publish_progress(w);
}

static int setup(sb_worker *w) {
    const sb_run_cfg *cfg = w->cfg;
    if (cfg->ncpus > 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cfg->cpus[w->id % cfg->ncpus], &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
            fprintf(stderr, "soloist-bench: thread %d: cannot pin to cpu %d\n", w->id, cfg->cpus[w->id % cfg->ncpus]);
    }
    /* The kernel may defer a normal thread's timer by 50 us to batch
     * wake-ups; a generator that sends on a schedule wants it on time. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->epfd < 0 || sb_timer_open(&w->timer) < 0) {
        snprintf(w->error, sizeof(w->error), "epoll/timerfd: %s", strerror(errno));
        return -1;
    }
    struct epoll_event tev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->timer.fd, &tev);
    for (int i = 0; i < w->nconns; i++) {
        sb_conn *c = &w->conns[i];
        char err[128];
        if (sb_conn_connect(c, (const struct sockaddr *)&w->sh->addr, w->sh->addrlen, err, sizeof(err)) < 0) {
            snprintf(w->error, sizeof(w->error), "%s:%d: %s", cfg->host, cfg->port, err);
            return -1;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev);
    }
    return 0;
}

void *sb_worker_main(void *arg) {
    sb_worker *w = arg;
    sb_shared *sh = w->sh;
    if (setup(w) < 0) {
        w->failed = 1;
        atomic_store_explicit(&sh->stop, 1, memory_order_relaxed);
    } else if (w->cfg->prefill) {
        run_prefill(w);
    }
    /* Pairs with main's load(acquire) of `ready`. */
    atomic_fetch_add_explicit(&sh->ready, 1, memory_order_release);
    uint64_t t0;
    /* Pairs with main's store(release) of t0. */
    while ((t0 = atomic_load_explicit(&sh->t0, memory_order_acquire)) == 0) {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
    w->t0 = t0;
    /* Begin at t0 itself, not before: a request intended at t0 and
     * answered earlier would have a negative latency. */
    struct timespec at = {(time_t)(t0 / 1000000000ULL), (long)(t0 % 1000000000ULL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
    }
    if (!w->failed && !atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        run_measured(w);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        w->cpu_ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ULL + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
    }
    /* Pairs with main's load(acquire) of `finished`: after it, main may
     * read everything this worker wrote. (pthread_join orders it too.) */
    atomic_fetch_add_explicit(&sh->finished, 1, memory_order_release);
    return NULL;
}
