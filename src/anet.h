/* anet.h — small TCP socket helpers: listen, accept, connect, socket options.
 *
 * Step 0 (plumbing layer). Owns nothing but the error convention: every
 * function that can fail returns ANET_ERR and, when given an `err` buffer of
 * ANET_ERR_LEN bytes, writes a one-line reason into it; errno is left as the
 * failing system call set it (so a caller tells EAGAIN from a real error
 * after anet_accept).
 *
 * Threads: any thread may call any function; they touch only the fds and
 * buffers they are given. (soloist's ACCEPT job runs anet_accept on an I/O
 * thread in step 4.)
 *
 * Valkey: src/anet.c (anetTcpServer/_anetTcpServer, anetTcpAccept,
 * anetNonBlock, anetEnableTcpNoDelay, anetKeepAlive, anetFdToString,
 * anetTcpConnect, anetFormatAddr).
 */
#ifndef SOLOIST_ANET_H
#define SOLOIST_ANET_H

#include <stddef.h>

#define ANET_OK 0
#define ANET_ERR -1
#define ANET_ERR_LEN 256

/* anet_fd_to_string's last argument (Valkey: FD_TO_PEER_NAME/FD_TO_SOCK_NAME). */
#define ANET_FD_LOCAL 0
#define ANET_FD_PEER 1

/* A listening TCP socket on bindaddr:port. bindaddr is an IPv4 or IPv6
 * literal ("127.0.0.1", "::1", "0.0.0.0", "::"), a host name, or NULL/"*"
 * for every IPv4 address; an address with a ':' is IPv6 and the socket is
 * IPv6-only (Valkey binds "::" and "0.0.0.0" as two sockets). port 0 picks
 * an ephemeral port: read it with anet_sock_port. SO_REUSEADDR is set;
 * the socket is blocking and close-on-exec. Returns the fd or ANET_ERR. */
int anet_tcp_server(char *err, int port, const char *bindaddr, int backlog);

/* The local port an fd is bound to, or -1. */
int anet_sock_port(int fd);

/* Accepts one connection (retrying on EINTR). The new fd is already
 * non-blocking and close-on-exec (accept4, as Valkey). ip (iplen bytes, 46
 * is enough for IPv6) and port may be NULL. Returns the fd, or ANET_ERR
 * with errno from accept: EAGAIN/EWOULDBLOCK means "no more pending". */
int anet_accept(char *err, int serverfd, char *ip, size_t iplen, int *port);

/* Socket options. err may be NULL. */
int anet_nonblock(char *err, int fd);
int anet_block(char *err, int fd);
int anet_enable_tcp_nodelay(char *err, int fd);
int anet_disable_tcp_nodelay(char *err, int fd);
/* SO_KEEPALIVE with Valkey's tuning: first probe after `interval` s of
 * silence, then every interval/3 s, 3 probes before the peer is dead. */
int anet_keepalive(char *err, int fd, int interval);

/* The address of the peer (ANET_FD_PEER) or of the local end
 * (ANET_FD_LOCAL). On failure writes "?" and port 0, as Valkey, and
 * returns -1. A Unix socket reads as "/unixsocket". */
int anet_fd_to_string(int fd, char *ip, size_t iplen, int *port, int peer_or_local);

/* "ip:port", or "[ip]:port" for IPv6, like Valkey's anetFormatAddr. */
int anet_format_addr(char *buf, size_t buflen, const char *ip, int port);

/* A blocking TCP connection to addr:port (IPv4, IPv6 or a host name), for
 * tests and tools. TCP_NODELAY is not set. Returns the fd or ANET_ERR. */
int anet_tcp_connect(char *err, const char *addr, int port);

#endif
