/* conn.c — one load-generator connection (soloist-bench). See conn.h. */
#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "schedule.h"
#include "zmalloc.h"

#define IOV_BATCH 64

void sb_conn_init(sb_conn *c, int cls, int class_conn, uint32_t cap, size_t klen, const char *pattern, size_t vlen) {
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->cls = cls;
    c->class_conn = class_conn;
    c->cap = cap;
    c->klen = klen;
    c->vlen = vlen;
    c->pattern = pattern;
    /* Room for the command, the key, and the key's copy at the head of a
     * SET value; rounded to 8 so every slot starts aligned. */
    c->hdr_cap = (SB_CMD_OVERHEAD + 2 * klen + 7) & ~(size_t)7;
    c->slots = zcalloc(sizeof(sb_req) * cap);
    c->arena = zmalloc(c->hdr_cap * cap);
    for (uint32_t i = 0; i < cap; i++) c->slots[i].hdr = c->arena + (size_t)i * c->hdr_cap;
    sb_parser_init(&c->parser);
}

void sb_conn_free(sb_conn *c) {
    sb_conn_close(c);
    zfree(c->slots);
    zfree(c->arena);
    c->slots = NULL;
    c->arena = NULL;
}

int sb_conn_connect(sb_conn *c, const struct sockaddr *sa, socklen_t salen, char *err, size_t errlen) {
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, sa, salen) < 0) {
        snprintf(err, errlen, "connect: %s", strerror(errno));
        close(fd);
        return -1;
    }
    int one = 1;
    /* Requests are written as soon as they are due; Nagle would hold a
     * small one back waiting for the previous reply's ACK. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    c->fd = fd;
    return 0;
}

void sb_conn_close(sb_conn *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->dead = 1;
}

sb_req *sb_conn_push(sb_conn *c, int is_set, const char *key) {
    sb_req *r = &c->slots[c->tail % c->cap];
    size_t key_off;
    r->is_set = (uint8_t)is_set;
    r->hdr_len = (uint32_t)(is_set ? sb_encode_set_head(r->hdr, key, c->klen, c->vlen, &key_off)
                                   : sb_encode_get(r->hdr, key, c->klen, &key_off));
    r->key_off = (uint16_t)key_off;
    r->sent_ns = 0;
    r->measured = r->prefill = 0;
    c->tail++;
    return r;
}

/* The value bytes after the key's copy, and the total length of a
 * request's message on the wire. */
static size_t value_tail_len(const sb_conn *c) { return c->vlen - (c->klen < c->vlen ? c->klen : c->vlen); }
static size_t msg_len(const sb_conn *c, const sb_req *r) { return r->hdr_len + (r->is_set ? value_tail_len(c) + 2 : 0); }

/* The iovecs of request r from byte `skip` on; returns how many. */
static int req_iov(const sb_conn *c, const sb_req *r, size_t skip, struct iovec *iov, int room) {
    struct iovec seg[3];
    int nseg = 0;
    seg[nseg++] = (struct iovec){r->hdr, r->hdr_len};
    if (r->is_set) {
        size_t kpart = c->klen < c->vlen ? c->klen : c->vlen;
        if (value_tail_len(c)) seg[nseg++] = (struct iovec){(void *)(c->pattern + kpart), value_tail_len(c)};
        seg[nseg++] = (struct iovec){(void *)"\r\n", 2};
    }
    int n = 0;
    for (int i = 0; i < nseg && n < room; i++) {
        if (skip >= seg[i].iov_len) {
            skip -= seg[i].iov_len;
            continue;
        }
        iov[n].iov_base = (char *)seg[i].iov_base + skip;
        iov[n].iov_len = seg[i].iov_len - skip;
        skip = 0;
        n++;
    }
    return n;
}

long sb_conn_flush(sb_conn *c, uint64_t now_ns, size_t budget) {
    long total = 0;
    while (c->sent < c->tail && (size_t)total < budget) {
        struct iovec iov[IOV_BATCH];
        int n = 0;
        size_t off = c->write_off;
        for (uint64_t s = c->sent; s < c->tail && n < IOV_BATCH - 3; s++) {
            n += req_iov(c, &c->slots[s % c->cap], off, iov + n, IOV_BATCH - n);
            off = 0;
        }
        ssize_t w = writev(c->fd, iov, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            return -1;
        }
        total += w;
        /* Advance over what went: whole requests, then part of one. */
        size_t left = (size_t)w;
        while (left > 0) {
            sb_req *r = &c->slots[c->sent % c->cap];
            if (c->write_off == 0) r->sent_ns = now_ns;
            size_t rem = msg_len(c, r) - c->write_off;
            if (left >= rem) {
                left -= rem;
                c->sent++;
                c->write_off = 0;
            } else {
                c->write_off += left;
                left = 0;
            }
        }
    }
    return total;
}

long sb_conn_read(sb_conn *c, char *buf, size_t bufsz, size_t budget, sb_reply_fn fn, void *ud) {
    long total = 0;
    while ((size_t)total < budget) {
        ssize_t r = read(c->fd, buf, bufsz);
        if (r == 0) {
            errno = 0;
            return -1;
        }
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            return -1;
        }
        /* Replies completed by this read are stamped with the time the
         * read returned: the latency ends when the last byte is ours. */
        uint64_t now = sb_now_ns();
        total += r;
        size_t off = 0;
        while (off < (size_t)r) {
            if (sb_parser_idle(&c->parser)) {
                if (c->head == c->sent) return -2; /* a reply to nothing */
                const sb_req *q = &c->slots[c->head % c->cap];
                sb_expect e = {!q->is_set, q->hdr + q->key_off, c->klen, c->pattern, c->vlen};
                sb_parser_expect(&c->parser, &e);
            }
            sb_reply rep;
            int done;
            size_t used = sb_parser_feed(&c->parser, buf + off, (size_t)r - off, &rep, &done);
            if (used == (size_t)-1) return -2;
            off += used;
            if (done) {
                sb_req copy = c->slots[c->head % c->cap];
                c->head++;
                fn(ud, c, &copy, &rep, now);
            }
        }
        if ((size_t)r < bufsz) break; /* drained: skip the EAGAIN round trip */
    }
    return total;
}
