/* test_anet.c — TCP helpers (step 0): listen on an ephemeral loopback
 * port, connect, accept, socket options, addresses, and the errors a
 * caller must be able to tell apart. Loopback only; every call is bounded
 * (nothing here can block: connections are made before they are accepted).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "anet.h"

static int listen_loopback(int *port) {
    char err[ANET_ERR_LEN] = "";
    int fd = anet_tcp_server(err, 0, "127.0.0.1", 16);
    if (fd == ANET_ERR) fprintf(stderr, "anet_tcp_server: %s\n", err);
    assert_true(fd >= 0);
    *port = anet_sock_port(fd);
    assert_true(*port > 0 && *port < 65536);
    return fd;
}

static int getopt_int(int fd, int level, int name) {
    int v = -1;
    socklen_t len = sizeof(v);
    assert_int_equal(getsockopt(fd, level, name, &v, &len), 0);
    return v;
}

static void test_listen_on_ephemeral_port(void **state) {
    (void)state;
    int port;
    int fd = listen_loopback(&port);
    char ip[64];
    int p2;
    assert_int_equal(anet_fd_to_string(fd, ip, sizeof(ip), &p2, ANET_FD_LOCAL), 0);
    assert_string_equal(ip, "127.0.0.1");
    assert_int_equal(p2, port);
    assert_int_equal(getopt_int(fd, SOL_SOCKET, SO_REUSEADDR), 1);
    assert_int_equal(getopt_int(fd, SOL_SOCKET, SO_ACCEPTCONN), 1);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    close(fd);
}

static void test_connect_accept_and_talk(void **state) {
    (void)state;
    char err[ANET_ERR_LEN];
    int port;
    int lfd = listen_loopback(&port);
    int cfd = anet_tcp_connect(err, "127.0.0.1", port);
    assert_true(cfd >= 0);

    char ip[64] = "";
    int peer_port = 0;
    int sfd = anet_accept(err, lfd, ip, sizeof(ip), &peer_port);
    assert_true(sfd >= 0);
    assert_string_equal(ip, "127.0.0.1");
    /* The port accept reports is the client's own local port. */
    char cip[64];
    int cport;
    assert_int_equal(anet_fd_to_string(cfd, cip, sizeof(cip), &cport, ANET_FD_LOCAL), 0);
    assert_int_equal(peer_port, cport);
    /* And the client's peer is the listening port. */
    assert_int_equal(anet_fd_to_string(cfd, cip, sizeof(cip), &cport, ANET_FD_PEER), 0);
    assert_string_equal(cip, "127.0.0.1");
    assert_int_equal(cport, port);
    /* Server side: local = listening port, peer = client. */
    int sp;
    assert_int_equal(anet_fd_to_string(sfd, cip, sizeof(cip), &sp, ANET_FD_LOCAL), 0);
    assert_int_equal(sp, port);
    assert_int_equal(anet_fd_to_string(sfd, cip, sizeof(cip), &sp, ANET_FD_PEER), 0);
    assert_int_equal(sp, peer_port);

    assert_int_equal(write(cfd, "*1\r\n$4\r\nPING\r\n", 14), 14);
    char buf[32];
    /* The accepted fd is non-blocking: poll for the bytes, bounded. */
    ssize_t n = -1;
    for (int i = 0; i < 1000 && n <= 0; i++) {
        n = read(sfd, buf, sizeof(buf));
        if (n < 0) usleep(1000);
    }
    assert_int_equal(n, 14);
    assert_memory_equal(buf, "*1\r\n$4\r\nPING\r\n", 14);
    assert_int_equal(write(sfd, "+PONG\r\n", 7), 7);
    assert_int_equal(read(cfd, buf, sizeof(buf)), 7); /* client is blocking */
    assert_memory_equal(buf, "+PONG\r\n", 7);
    close(sfd);
    close(cfd);
    close(lfd);
}

static void test_accepted_fd_is_nonblocking_and_cloexec(void **state) {
    (void)state;
    char err[ANET_ERR_LEN];
    int port;
    int lfd = listen_loopback(&port);
    int cfd = anet_tcp_connect(err, "127.0.0.1", port);
    assert_true(cfd >= 0);
    int sfd = anet_accept(err, lfd, NULL, 0, NULL); /* ip and port optional */
    assert_true(sfd >= 0);
    assert_true(fcntl(sfd, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(sfd, F_GETFD) & FD_CLOEXEC);
    /* The connecting side is blocking (a tool's socket). */
    assert_false(fcntl(cfd, F_GETFL) & O_NONBLOCK);
    close(sfd);
    close(cfd);
    close(lfd);
}

static void test_accept_with_nothing_pending_is_eagain(void **state) {
    (void)state;
    char err[ANET_ERR_LEN] = "";
    int port;
    int lfd = listen_loopback(&port);
    assert_int_equal(anet_nonblock(err, lfd), ANET_OK);
    errno = 0;
    char ip[64];
    int p;
    assert_int_equal(anet_accept(err, lfd, ip, sizeof(ip), &p), ANET_ERR);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    assert_int_equal(strncmp(err, "accept: ", 8), 0);
    close(lfd);
}

static void test_accept_on_bad_fd(void **state) {
    (void)state;
    char err[ANET_ERR_LEN] = "";
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    errno = 0;
    assert_int_equal(anet_accept(err, fds[0], NULL, 0, NULL), ANET_ERR);
    assert_int_equal(errno, ENOTSOCK);
    assert_int_equal(strncmp(err, "accept: ", 8), 0);
    close(fds[0]);
    close(fds[1]);
}

static void test_nonblock_and_block(void **state) {
    (void)state;
    char err[ANET_ERR_LEN];
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_false(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    assert_int_equal(anet_nonblock(err, sv[0]), ANET_OK);
    assert_true(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    assert_int_equal(anet_nonblock(err, sv[0]), ANET_OK); /* idempotent */
    assert_int_equal(anet_block(err, sv[0]), ANET_OK);
    assert_false(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    close(sv[0]);
    close(sv[1]);
    /* A closed fd: an error with a reason, err may also be NULL. */
    assert_int_equal(anet_nonblock(err, sv[0]), ANET_ERR);
    assert_int_equal(strncmp(err, "fcntl(F_GETFL): ", 16), 0);
    assert_int_equal(anet_nonblock(NULL, sv[0]), ANET_ERR);
}

static void test_tcp_nodelay(void **state) {
    (void)state;
    char err[ANET_ERR_LEN];
    int port;
    int lfd = listen_loopback(&port);
    int cfd = anet_tcp_connect(err, "127.0.0.1", port);
    assert_true(cfd >= 0);
    assert_int_equal(getopt_int(cfd, IPPROTO_TCP, TCP_NODELAY), 0);
    assert_int_equal(anet_enable_tcp_nodelay(err, cfd), ANET_OK);
    assert_int_equal(getopt_int(cfd, IPPROTO_TCP, TCP_NODELAY), 1);
    assert_int_equal(anet_disable_tcp_nodelay(err, cfd), ANET_OK);
    assert_int_equal(getopt_int(cfd, IPPROTO_TCP, TCP_NODELAY), 0);
    close(cfd);
    close(lfd);
}

static void test_keepalive_uses_valkeys_tuning(void **state) {
    (void)state;
    char err[ANET_ERR_LEN];
    int port;
    int lfd = listen_loopback(&port);
    int cfd = anet_tcp_connect(err, "127.0.0.1", port);
    assert_true(cfd >= 0);
    assert_int_equal(anet_keepalive(err, cfd, 300), ANET_OK);
    assert_int_equal(getopt_int(cfd, SOL_SOCKET, SO_KEEPALIVE), 1);
    assert_int_equal(getopt_int(cfd, IPPROTO_TCP, TCP_KEEPIDLE), 300);
    assert_int_equal(getopt_int(cfd, IPPROTO_TCP, TCP_KEEPINTVL), 100);
    assert_int_equal(getopt_int(cfd, IPPROTO_TCP, TCP_KEEPCNT), 3);
    /* interval/3 never rounds down to 0. */
    assert_int_equal(anet_keepalive(err, cfd, 2), ANET_OK);
    assert_int_equal(getopt_int(cfd, IPPROTO_TCP, TCP_KEEPIDLE), 2);
    assert_int_equal(getopt_int(cfd, IPPROTO_TCP, TCP_KEEPINTVL), 1);
    close(cfd);
    close(lfd);
}

static void test_fd_to_string_failure(void **state) {
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    char ip[16] = "unchanged";
    int port = 77;
    assert_int_equal(anet_fd_to_string(fds[0], ip, sizeof(ip), &port, ANET_FD_PEER), -1);
    assert_string_equal(ip, "?");
    assert_int_equal(port, 0);
    char one[1] = {'x'};
    assert_int_equal(anet_fd_to_string(fds[0], one, 1, NULL, ANET_FD_LOCAL), -1);
    assert_int_equal(one[0], '\0');
    close(fds[0]);
    close(fds[1]);
}

static void test_fd_to_string_unix_socket(void **state) {
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char ip[64];
    int port = 5;
    assert_int_equal(anet_fd_to_string(sv[0], ip, sizeof(ip), &port, ANET_FD_PEER), 0);
    assert_string_equal(ip, "/unixsocket");
    assert_int_equal(port, 0);
    close(sv[0]);
    close(sv[1]);
}

static void test_ipv6_loopback(void **state) {
    (void)state;
    char err[ANET_ERR_LEN];
    int lfd = anet_tcp_server(err, 0, "::1", 16);
    if (lfd == ANET_ERR) {
        /* A container without IPv6: nothing to test, say so. */
        fprintf(stderr, "no IPv6 loopback here (%s); skipping\n", err);
        skip();
    }
    int port = anet_sock_port(lfd);
    assert_true(port > 0);
    assert_int_equal(getopt_int(lfd, IPPROTO_IPV6, IPV6_V6ONLY), 1);
    int cfd = anet_tcp_connect(err, "::1", port);
    assert_true(cfd >= 0);
    char ip[64];
    int p;
    int sfd = anet_accept(err, lfd, ip, sizeof(ip), &p);
    assert_true(sfd >= 0);
    assert_string_equal(ip, "::1");
    char addr[80];
    anet_format_addr(addr, sizeof(addr), ip, 6379);
    assert_string_equal(addr, "[::1]:6379");
    close(sfd);
    close(cfd);
    close(lfd);
}

static void test_wildcard_bind(void **state) {
    (void)state;
    char err[ANET_ERR_LEN];
    int lfd = anet_tcp_server(err, 0, NULL, 16);
    assert_true(lfd >= 0);
    char ip[64];
    int port;
    assert_int_equal(anet_fd_to_string(lfd, ip, sizeof(ip), &port, ANET_FD_LOCAL), 0);
    assert_string_equal(ip, "0.0.0.0");
    int cfd = anet_tcp_connect(err, "127.0.0.1", port);
    assert_true(cfd >= 0);
    int sfd = anet_accept(err, lfd, NULL, 0, NULL);
    assert_true(sfd >= 0);
    close(sfd);
    close(cfd);
    close(lfd);
    /* "*" means the same. */
    lfd = anet_tcp_server(err, 0, "*", 16);
    assert_true(lfd >= 0);
    close(lfd);
}

static void test_bind_errors(void **state) {
    (void)state;
    char err[ANET_ERR_LEN] = "";
    /* An address this host does not have (TEST-NET-1, RFC 5737). */
    errno = 0;
    assert_int_equal(anet_tcp_server(err, 0, "192.0.2.1", 16), ANET_ERR);
    assert_int_equal(errno, EADDRNOTAVAIL);
    assert_int_equal(strncmp(err, "bind: ", 6), 0);
    /* A port already listened on: SO_REUSEADDR does not allow two. */
    int port;
    int lfd = listen_loopback(&port);
    err[0] = '\0';
    errno = 0;
    assert_int_equal(anet_tcp_server(err, port, "127.0.0.1", 16), ANET_ERR);
    assert_int_equal(errno, EADDRINUSE);
    assert_int_equal(strncmp(err, "bind: ", 6), 0);
    close(lfd);
    /* A malformed IPv6 literal never reaches bind. */
    err[0] = '\0';
    assert_int_equal(anet_tcp_server(err, 0, "::1::2", 16), ANET_ERR);
    assert_true(err[0] != '\0');
}

static void test_connect_refused(void **state) {
    (void)state;
    char err[ANET_ERR_LEN] = "";
    int port;
    int lfd = listen_loopback(&port);
    close(lfd); /* nothing listens there now */
    errno = 0;
    assert_int_equal(anet_tcp_connect(err, "127.0.0.1", port), ANET_ERR);
    assert_int_equal(errno, ECONNREFUSED);
    assert_string_equal(err, "connect: Connection refused");
    err[0] = '\0';
    assert_int_equal(anet_tcp_connect(err, "::1::2", port), ANET_ERR);
    assert_true(err[0] != '\0');
}

static void test_format_addr(void **state) {
    (void)state;
    char buf[64];
    assert_int_equal(anet_format_addr(buf, sizeof(buf), "10.0.0.1", 6379), 13);
    assert_string_equal(buf, "10.0.0.1:6379");
    anet_format_addr(buf, sizeof(buf), "fe80::1", 0);
    assert_string_equal(buf, "[fe80::1]:0");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen_on_ephemeral_port),
        cmocka_unit_test(test_connect_accept_and_talk),
        cmocka_unit_test(test_accepted_fd_is_nonblocking_and_cloexec),
        cmocka_unit_test(test_accept_with_nothing_pending_is_eagain),
        cmocka_unit_test(test_accept_on_bad_fd),
        cmocka_unit_test(test_nonblock_and_block),
        cmocka_unit_test(test_tcp_nodelay),
        cmocka_unit_test(test_keepalive_uses_valkeys_tuning),
        cmocka_unit_test(test_fd_to_string_failure),
        cmocka_unit_test(test_fd_to_string_unix_socket),
        cmocka_unit_test(test_ipv6_loopback),
        cmocka_unit_test(test_wildcard_bind),
        cmocka_unit_test(test_bind_errors),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_format_addr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
