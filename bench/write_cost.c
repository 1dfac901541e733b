/* write_cost.c — (b) what one write() on a socket costs.
 *
 * Step 0 benchmark. Owns nothing of the server: it measures the floor
 * under every reply soloist sends. A writer thread calls write() of a
 * fixed payload (16 B, 512 B, 16 KiB) in a loop on a connected socket
 * while a reader thread drains the other end with large reads, for a
 * fixed time per run; a run reports nanoseconds per call, both wall time
 * (what a loop doing nothing else would see, including the moments the
 * send buffer was full and write() blocked) and the writer thread's own
 * CPU time (what the call costs the calling thread). Two transports:
 * loopback TCP with TCP_NODELAY (as Valkey sets on client sockets) and a
 * unix socketpair for contrast, and the bare cost of a system call
 * (getppid) as the floor under both. Each (transport, size) gets one discarded
 * warm-up run and then --runs runs; a summary line carries the medians.
 *
 * Threads: main thread = writer, one reader thread per run; they share
 * only the socket and an atomic stop flag (release store by the writer,
 * acquire load by the reader, see reader_main).
 *
 * Output: JSON lines on stdout, each with its whole config and the
 * BENCH_RUN_ID the runner sets. Options: --ms N (per run, default 200),
 * --runs N (default 5), --quick (50 ms, 3 runs), --pin (writer on cpu0,
 * reader on cpu1). Loopback only; bounded: 2 transports x 3 sizes x
 * (runs + 1) x ms.
 *
 * Valkey anchor: valkey src/networking.c _writeToClient / connWrite — the
 * call whose cost this is; nothing of Valkey's code is used here.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 64

struct reader {
    int fd;
    int cpu;         /* -1: not pinned */
    atomic_int stop; /* set by the writer (release), read here (acquire) */
    uint64_t bytes;  /* owned by the reader until joined */
};

static uint64_t now_ns(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pin_self(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *reader_main(void *arg) {
    struct reader *r = arg;
    static char buf[1 << 18];
    pin_self(r->cpu);
    /* Pairs with the writer's release store: once stop is seen the writer
     * has shut its side down, so read() returns 0 and we leave. */
    while (!atomic_load_explicit(&r->stop, memory_order_acquire)) {
        ssize_t n = read(r->fd, buf, sizeof buf);
        if (n > 0)
            r->bytes += (uint64_t)n;
        else if (n == 0)
            break;
        else if (errno != EINTR)
            break;
    }
    return NULL;
}

/* A connected pair: fds[0] for the writer, fds[1] for the reader. */
static int make_pair(const char *transport, int fds[2]) {
    if (strcmp(transport, "unix") == 0) return socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1) < 0 ||
        getsockname(ls, (struct sockaddr *)&a, &len) < 0) {
        close(ls);
        return -1;
    }
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&a, sizeof a) < 0) {
        close(ls);
        return -1;
    }
    fds[1] = accept(ls, NULL, NULL);
    close(ls);
    if (fds[1] < 0) return -1;
    int one = 1;
    setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return 0;
}

struct result {
    double wall_ns, cpu_ns;
    uint64_t calls;
};

static int one_run(const char *transport, size_t size, int ms, int pin, struct result *out) {
    int fds[2];
    if (make_pair(transport, fds) < 0) {
        perror("write_cost: socket pair");
        return -1;
    }
    char *payload = malloc(size);
    if (!payload) abort();
    memset(payload, 'x', size);
    struct reader r = {.fd = fds[1], .cpu = pin ? 1 : -1, .bytes = 0};
    atomic_init(&r.stop, 0);
    pthread_t th;
    if (pthread_create(&th, NULL, reader_main, &r) != 0) abort();
    pin_self(pin ? 0 : -1);

    uint64_t limit = (uint64_t)ms * 1000000ull;
    uint64_t calls = 0;
    uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns(CLOCK_MONOTONIC), t1 = t0;
    for (;;) {
        size_t off = 0;
        while (off < size) { /* blocking socket: short writes are rare but possible */
            ssize_t n = write(fds[0], payload + off, size - off);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                perror("write_cost: write");
                abort();
            }
            off += (size_t)n;
            calls++;
        }
        if ((calls & 255) == 0) { /* read the clock rarely: it is not free */
            t1 = now_ns(CLOCK_MONOTONIC);
            if (t1 - t0 >= limit) break;
        }
    }
    uint64_t c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    /* Pairs with the reader's acquire load. */
    atomic_store_explicit(&r.stop, 1, memory_order_release);
    shutdown(fds[0], SHUT_WR);
    pthread_join(th, NULL);
    close(fds[0]);
    close(fds[1]);
    free(payload);
    out->calls = calls;
    out->wall_ns = (double)(t1 - t0) / (double)calls;
    out->cpu_ns = (double)(c1 - c0) / (double)calls;
    return 0;
}

/* The floor: ns per syscall(SYS_getppid), which enters and leaves the
 * kernel and does nothing else. */
static double syscall_ns(int ms) {
    uint64_t limit = (uint64_t)ms * 1000000ull, calls = 0;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC), t1 = t0;
    for (;;) {
        syscall(SYS_getppid);
        if ((++calls & 1023) == 0) {
            t1 = now_ns(CLOCK_MONOTONIC);
            if (t1 - t0 >= limit) break;
        }
    }
    return (double)(t1 - t0) / (double)calls;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    int ms = 200, runs = 5, pin = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ms") && i + 1 < argc)
            ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            ms = 50, runs = 3;
        else if (!strcmp(argv[i], "--pin"))
            pin = 1;
        else {
            fprintf(stderr, "usage: %s [--ms N] [--runs N] [--quick] [--pin]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (runs > MAX_RUNS) runs = MAX_RUNS;
    if (ms < 1) ms = 1;
    const char *run_id = getenv("BENCH_RUN_ID");
    if (!run_id) run_id = "adhoc";
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double sys[MAX_RUNS];
    syscall_ns(ms / 4 + 1); /* warm-up */
    for (int r = 0; r < runs; r++) sys[r] = syscall_ns(ms / 4 + 1);
    printf("{\"bench\":\"write_cost\",\"kind\":\"summary\",\"run_id\":\"%s\","
           "\"transport\":\"none\",\"call\":\"getppid\",\"size\":0,\"runs\":%d,\"ms\":%d,"
           "\"median_wall_ns_per_call\":%.1f,\"pinned\":%s,\"cores\":%ld}\n",
           run_id, runs, ms / 4 + 1, median(sys, runs), pin ? "true" : "false", cores);
    const char *transports[] = {"tcp", "unix"};
    const size_t sizes[] = {16, 512, 16384};
    for (size_t t = 0; t < 2; t++) {
        for (size_t s = 0; s < 3; s++) {
            double wall[MAX_RUNS], cpu[MAX_RUNS];
            struct result res;
            if (one_run(transports[t], sizes[s], ms, pin, &res) < 0) return 1; /* warm-up */
            for (int r = 0; r < runs; r++) {
                if (one_run(transports[t], sizes[s], ms, pin, &res) < 0) return 1;
                wall[r] = res.wall_ns;
                cpu[r] = res.cpu_ns;
                printf("{\"bench\":\"write_cost\",\"kind\":\"run\",\"run_id\":\"%s\","
                       "\"transport\":\"%s\",\"call\":\"write\",\"nodelay\":%s,\"size\":%zu,\"run\":%d,"
                       "\"ms\":%d,\"calls\":%llu,\"wall_ns_per_call\":%.1f,"
                       "\"cpu_ns_per_call\":%.1f,\"pinned\":%s,\"cores\":%ld}\n",
                       run_id, transports[t], t == 0 ? "true" : "false", sizes[s], r + 1, ms,
                       (unsigned long long)res.calls, res.wall_ns, res.cpu_ns, pin ? "true" : "false", cores);
            }
            double mw = median(wall, runs), mc = median(cpu, runs);
            printf("{\"bench\":\"write_cost\",\"kind\":\"summary\",\"run_id\":\"%s\","
                   "\"transport\":\"%s\",\"call\":\"write\",\"nodelay\":%s,\"size\":%zu,\"runs\":%d,\"ms\":%d,"
                   "\"median_wall_ns_per_call\":%.1f,\"median_cpu_ns_per_call\":%.1f,"
                   "\"min_wall_ns_per_call\":%.1f,\"max_wall_ns_per_call\":%.1f,"
                   "\"gbit_s\":%.2f,\"pinned\":%s,\"cores\":%ld}\n",
                   run_id, transports[t], t == 0 ? "true" : "false", sizes[s], runs, ms, mw, mc, wall[0],
                   wall[runs - 1], (double)sizes[s] * 8.0 / mw, pin ? "true" : "false", cores);
            fflush(stdout);
        }
    }
    return 0;
}
