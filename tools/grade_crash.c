/* grade_crash.c — lets the grader say where a test crashed.
 *
 * One of the reader's tools, not part of the server: mk/reader.mk links
 * it into the grader's copies of the unit tests, beside
 * exercise_filter.c, so the test files stay untouched.
 *
 * Why: cmocka catches SIGSEGV, SIGILL, SIGFPE and SIGSYS itself and
 * prints only "Test failed with exception: Segmentation fault(11)", with
 * no place. When a test crashed, tools/exercise.py runs it again alone
 * with SOLOIST_CRASH_TRACE=1 and CMOCKA_TEST_ABORT=1: cmocka's handler
 * then calls abort() from inside the crash, on the crashing stack, and
 * the SIGABRT handler below prints that stack's return addresses
 * (backtrace_symbols_fd) and where the executable was loaded. The
 * grader turns the addresses into functions, files and lines with
 * addr2line (binutils, which build-essential installs), so this works
 * wherever the tests build, with no debugger and no ptrace.
 *
 * Without SOLOIST_CRASH_TRACE=1 it installs nothing: a graded run, and
 * the sanitizers' own reports, are exactly as without it.
 *
 * The handler uses only write(2), backtrace() (whose first call, which may
 * load the unwinder, is made here before any test runs) and
 * backtrace_symbols_fd(), which does not allocate. Single-threaded setup;
 * the handler runs on whichever thread crashed.
 */
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The executable's load bias: a frame's address minus it is the address
 * addr2line finds in the binary (the tests are position independent). */
static uintptr_t exe_bias;

static int first_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    exe_bias = (uintptr_t)info->dlpi_addr; /* the first object is the executable */
    return 1;
}

static size_t put_text(char *buf, size_t n, const char *s) {
    size_t len = strlen(s);
    memcpy(buf + n, s, len);
    return n + len;
}

static size_t put_hex(char *buf, size_t n, uintptr_t v) {
    char digits[2 * sizeof v];
    int k = 0;
    do {
        digits[k++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v != 0);
    n = put_text(buf, n, "0x");
    while (k > 0) buf[n++] = digits[--k];
    return n;
}

static void on_crash(int sig) {
    void *frames[64];
    int count = backtrace(frames, 64);
    char line[96];
    size_t n = put_text(line, 0, "\nsoloist-backtrace: signal ");
    n = put_hex(line, n, (uintptr_t)sig);
    n = put_text(line, n, " bias ");
    n = put_hex(line, n, exe_bias);
    line[n++] = '\n';
    (void)!write(STDERR_FILENO, line, n);
    backtrace_symbols_fd(frames, count, STDERR_FILENO);
    (void)!write(STDERR_FILENO, "soloist-backtrace: end\n", 23);
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void crash_trace_init(void) {
    const char *on = getenv("SOLOIST_CRASH_TRACE");
    if (on == NULL || strcmp(on, "1") != 0) return;
    void *warm[1];
    (void)backtrace(warm, 1);
    dl_iterate_phdr(first_object, NULL);
    signal(SIGABRT, on_crash);
    signal(SIGBUS, on_crash); /* cmocka does not catch SIGBUS */
}
