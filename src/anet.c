/* anet.c — TCP socket helpers (step 0, plumbing layer). See anet.h.
 *
 * Valkey: src/anet.c. Every error path saves errno before formatting the
 * message and restores it after, so the caller sees the system call's
 * errno, not vsnprintf's.
 */
#include "anet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void anet_set_error(char *err, const char *fmt, ...) {
    if (!err) return;
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ANET_ERR_LEN, fmt, ap);
    va_end(ap);
    errno = saved;
}

static int anet_set_block(char *err, int fd, int nonblock) {
    int flags = fcntl(fd, F_GETFL);
    if (flags == -1) {
        anet_set_error(err, "fcntl(F_GETFL): %s", strerror(errno));
        return ANET_ERR;
    }
    /* Skip the second syscall when the flag is already as wanted. */
    if (!!(flags & O_NONBLOCK) == !!nonblock) return ANET_OK;
    flags = nonblock ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
    if (fcntl(fd, F_SETFL, flags) == -1) {
        anet_set_error(err, "fcntl(F_SETFL,O_NONBLOCK): %s", strerror(errno));
        return ANET_ERR;
    }
    return ANET_OK;
}

int anet_nonblock(char *err, int fd) { return anet_set_block(err, fd, 1); }
int anet_block(char *err, int fd) { return anet_set_block(err, fd, 0); }

static int anet_set_tcp_nodelay(char *err, int fd, int val) {
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &val, sizeof(val)) == -1) {
        anet_set_error(err, "setsockopt TCP_NODELAY: %s", strerror(errno));
        return ANET_ERR;
    }
    return ANET_OK;
}

int anet_enable_tcp_nodelay(char *err, int fd) { return anet_set_tcp_nodelay(err, fd, 1); }
int anet_disable_tcp_nodelay(char *err, int fd) { return anet_set_tcp_nodelay(err, fd, 0); }

int anet_keepalive(char *err, int fd, int interval) {
    int yes = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof(yes)) == -1) {
        anet_set_error(err, "setsockopt SO_KEEPALIVE: %s", strerror(errno));
        return ANET_ERR;
    }
    if (interval <= 0) return ANET_OK;
    /* Valkey's numbers: idle time = interval, probe every interval/3,
     * three probes, so a dead peer is noticed after about 2 * interval. */
    int idle = interval, intvl = interval / 3, cnt = 3;
    if (intvl == 0) intvl = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) == -1) {
        anet_set_error(err, "setsockopt TCP_KEEPIDLE: %s", strerror(errno));
        return ANET_ERR;
    }
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) == -1) {
        anet_set_error(err, "setsockopt TCP_KEEPINTVL: %s", strerror(errno));
        return ANET_ERR;
    }
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) == -1) {
        anet_set_error(err, "setsockopt TCP_KEEPCNT: %s", strerror(errno));
        return ANET_ERR;
    }
    return ANET_OK;
}

/* getaddrinfo for host and port, its failure reported as anet reports
 * one: ANET_ERR with err set and errno EINVAL. */
static int resolve(char *err, const char *host, int port, const struct addrinfo *hints, struct addrinfo **res) {
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    int rv = getaddrinfo(host, portstr, hints, res);
    if (rv == 0) return ANET_OK;
    anet_set_error(err, "%s", gai_strerror(rv));
    errno = EINVAL;
    return ANET_ERR;
}

int anet_tcp_server(char *err, int port, const char *bindaddr, int backlog) {
    struct addrinfo hints, *servinfo, *p;
    int fd = -1;

    if (bindaddr && !strcmp(bindaddr, "*")) bindaddr = NULL;
    memset(&hints, 0, sizeof(hints));
    /* Valkey picks the family from the address: a ':' means IPv6. */
    hints.ai_family = (bindaddr && strchr(bindaddr, ':')) ? AF_INET6 : AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE; /* NULL bindaddr: the wildcard address */
    /* A ':' can only be an IPv6 literal: never ask DNS about it. */
    if (hints.ai_family == AF_INET6) hints.ai_flags |= AI_NUMERICHOST;

    if (resolve(err, bindaddr, port, &hints, &servinfo) == ANET_ERR) return ANET_ERR;
    for (p = servinfo; p != NULL; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd == -1) continue;
        int yes = 1;
        /* IPv6-only, so "::" and "0.0.0.0" can be bound side by side. */
        if (p->ai_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof(yes)) == -1) {
            anet_set_error(err, "setsockopt IPV6_V6ONLY: %s", strerror(errno));
            goto error;
        }
        /* A restarted server can bind while old connections sit in
         * TIME_WAIT. */
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes)) == -1) {
            anet_set_error(err, "setsockopt SO_REUSEADDR: %s", strerror(errno));
            goto error;
        }
        if (bind(fd, p->ai_addr, p->ai_addrlen) == -1) {
            anet_set_error(err, "bind: %s", strerror(errno));
            goto error;
        }
        if (listen(fd, backlog) == -1) {
            anet_set_error(err, "listen: %s", strerror(errno));
            goto error;
        }
        freeaddrinfo(servinfo);
        return fd;
    }
    anet_set_error(err, "unable to bind socket, errno: %d", errno);
    freeaddrinfo(servinfo);
    return ANET_ERR;

error:
    if (fd != -1) {
        int saved = errno;
        close(fd);
        errno = saved;
    }
    freeaddrinfo(servinfo);
    return ANET_ERR;
}

int anet_sock_port(int fd) {
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    if (getsockname(fd, (struct sockaddr *)&sa, &salen) == -1) return -1;
    if (sa.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&sa)->sin_port);
    if (sa.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
    return -1;
}

/* Writes the address in sa into ip/port; -1 for an unknown family. */
static int anet_sockaddr_to_string(const struct sockaddr_storage *sa, char *ip, size_t iplen, int *port) {
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
        if (ip && inet_ntop(AF_INET, &s->sin_addr, ip, (socklen_t)iplen) == NULL) return -1;
        if (port) *port = ntohs(s->sin_port);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
        if (ip && inet_ntop(AF_INET6, &s->sin6_addr, ip, (socklen_t)iplen) == NULL) return -1;
        if (port) *port = ntohs(s->sin6_port);
    } else if (sa->ss_family == AF_UNIX) {
        if (ip && snprintf(ip, iplen, "/unixsocket") >= (int)iplen) return -1;
        if (port) *port = 0;
    } else {
        return -1;
    }
    return 0;
}

int anet_accept(char *err, int serverfd, char *ip, size_t iplen, int *port) {
    struct sockaddr_storage sa;
    socklen_t salen;
    int fd;
    do {
        salen = sizeof(sa);
        fd = accept4(serverfd, (struct sockaddr *)&sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
    } while (fd == -1 && errno == EINTR);
    if (fd == -1) {
        anet_set_error(err, "accept: %s", strerror(errno));
        return ANET_ERR;
    }
    if ((ip || port) && anet_sockaddr_to_string(&sa, ip, iplen, port) == -1) {
        if (ip && iplen) ip[0] = '\0';
        if (port) *port = 0;
    }
    return fd;
}

int anet_fd_to_string(int fd, char *ip, size_t iplen, int *port, int peer_or_local) {
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    int r = peer_or_local == ANET_FD_PEER ? getpeername(fd, (struct sockaddr *)&sa, &salen)
                                          : getsockname(fd, (struct sockaddr *)&sa, &salen);
    if (r == 0 && anet_sockaddr_to_string(&sa, ip, iplen, port) == 0) return 0;
    if (ip) {
        if (iplen >= 2) {
            ip[0] = '?';
            ip[1] = '\0';
        } else if (iplen == 1) {
            ip[0] = '\0';
        }
    }
    if (port) *port = 0;
    return -1;
}

int anet_format_addr(char *buf, size_t buflen, const char *ip, int port) {
    return snprintf(buf, buflen, strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip, port);
}

int anet_tcp_connect(char *err, const char *addr, int port) {
    struct addrinfo hints, *servinfo, *p;
    int fd = -1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (strchr(addr, ':')) hints.ai_flags |= AI_NUMERICHOST; /* an IPv6 literal */
    if (resolve(err, addr, port, &hints, &servinfo) == ANET_ERR) return ANET_ERR;
    for (p = servinfo; p != NULL; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd == -1) continue;
        /* No EINTR retry: a second connect() on an interrupted socket
         * fails with EALREADY; a tool that gets EINTR just fails. */
        if (connect(fd, p->ai_addr, p->ai_addrlen) == 0) {
            freeaddrinfo(servinfo);
            return fd;
        }
        int saved = errno;
        close(fd);
        errno = saved;
        fd = -1;
    }
    anet_set_error(err, "connect: %s", strerror(errno));
    freeaddrinfo(servinfo);
    return ANET_ERR;
}
