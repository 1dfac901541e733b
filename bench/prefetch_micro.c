/* prefetch_micro.c — how much memory-level parallelism interleaving buys:
 * a linked-list toy, then soloist's own hash table.
 *
 * Step 6 benchmark. Owns nothing of the server: it builds its own lists
 * and its own table (the library's hashtable, entries of its own) and
 * prints one JSON line per measurement. Single-threaded, except that the
 * table part runs in child processes (see below).
 *
 * Part "chains" (Valkey's blog post on prefetching, 2024, made this toy):
 * 32 linked lists whose 64-byte nodes lie in one shuffled order across an
 * arena larger than the last-level cache; four such sets of lists, taken
 * in turn, so that no walk finds its nodes in cache. A walk visits every
 * node of its set:
 *   sequential    one list after another: each load waits for the last;
 *   interleaved   K lists at a time, one step of each in turn: K
 *                 independent loads can be in flight (K = 2 .. 32);
 *   prefetch      interleaved, plus __builtin_prefetch of each list's next
 *                 node as soon as its address is known.
 * ns per node. Pages: 4 KiB (madvise MADV_NOHUGEPAGE); then the 16-list
 * case and sequential again on 2 MiB pages (MADV_HUGEPAGE), labelled.
 *
 * Part "table": ns per lookup on soloist's hashtable, every lookup a hit
 * in random order, table sizes from L2-sized to far beyond the last-level
 * cache. Methods:
 *   find          hashtable_find, one key after another;
 *   batch B       B resumable finds (hashtable_incremental_find_*) stepped
 *                 round robin until all are done, B = 1 .. 128;
 *   prefetch+find what Valkey's batch does: the batch's resumable finds,
 *                 then each key's ordinary find (now on cached lines).
 * Huge pages: the table part runs twice, each time in a child process
 * (this program re-executed): once with transparent huge pages disabled
 * for the process (prctl PR_SET_THP_DISABLE), once with glibc's malloc
 * asked to madvise its memory MADV_HUGEPAGE (GLIBC_TUNABLES
 * glibc.malloc.hugetlb=1), which is what THP's "madvise" mode needs. Each
 * line reports the AnonHugePages the child held (smaps_rollup), so a row
 * shows whether huge pages were in fact obtained; with THP "never" the
 * second pass is labelled unavailable.
 *
 * --part chains or --part table runs one part only.
 * Output: JSON lines on stdout with the run id (BENCH_RUN_ID) and the
 * cache sizes from sysfs. Every measurement is repeated 5 times, the
 * methods alternated. --quick (or QUICK=1): a 512 MiB arena, tables up to
 * 8 Mi keys (about 0.5 GB), 128 Ki lookups a measurement; else a 1 GiB
 * arena, tables up to 32 Mi keys (about 2 GB), 512 Ki lookups. Bounded: an alarm ends it (and its child) after 150 s
 * with --quick, 280 s without.
 *
 * Valkey anchor: src/memory_prefetch.c (hashtablePrefetch,
 * getNextPrefetchInfo) and src/hashtable.c (hashtableIncrementalFindStep),
 * through soloist's hashtable_incremental_find.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_bound.h"
#include "hashtable.h"

#define RUNS 5
#define MAX_BATCH 128

static const char *run_id = "adhoc";
static int quick;
static long l2_bytes, l3_bytes;
static volatile uint64_t sink; /* keeps the walks' sums alive */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: the shuffles and the lookup order, seeded for repeatability. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static void shuffle(uint32_t *a, size_t n) {
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng() % (i + 1);
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static long cache_size(int index) {
    char path[96], buf[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    long v = 0;
    if (fgets(buf, sizeof buf, f)) {
        char *end;
        v = strtol(buf, &end, 10);
        if (*end == 'K')
            v <<= 10;
        else if (*end == 'M')
            v <<= 20;
    }
    fclose(f);
    return v;
}

/* kB of anonymous memory backed by huge pages in this process. */
static long anon_huge_kb(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

/* The kernel's THP mode: the bracketed word of .../enabled. */
static void thp_mode(char *out, size_t n) {
    snprintf(out, n, "unknown");
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return;
    char buf[128];
    if (fgets(buf, sizeof buf, f)) {
        char *a = strchr(buf, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b) snprintf(out, n, "%.*s", (int)(b - a - 1), a + 1);
    }
    fclose(f);
}

static void print_head(const char *part) {
    printf("{\"bench\":\"prefetch_micro\",\"kind\":\"run\",\"run_id\":\"%s\",\"part\":\"%s\","
           "\"l2_bytes\":%ld,\"l3_bytes\":%ld,\"quick\":%s,",
           run_id, part, l2_bytes, l3_bytes, quick ? "true" : "false");
}

/* ------------------------------------------------------- part: chains */

typedef struct node {
    struct node *next;
    uint64_t value;
    char pad[48]; /* one node per cache line */
} node;
_Static_assert(sizeof(node) == 64, "a node is one cache line");

#define MAX_CHAINS 32

/* Walks the lists one after another: each load waits for the one before. */
static uint64_t walk_sequential(node **heads, int n) {
    uint64_t sum = 0;
    for (int c = 0; c < n; c++)
        for (node *p = heads[c]; p; p = p->next) sum += p->value;
    return sum;
}

/* Walks the lists k at a time, one step of each of the k in turn (all
 * lists have the same length). With prefetch, a list's next node is
 * requested as soon as its address is read, a round before it is used. */
static uint64_t walk_interleaved(node **heads, int n, int k, int prefetch) {
    uint64_t sum = 0;
    for (int g = 0; g < n; g += k) {
        node *cur[MAX_CHAINS];
        memcpy(cur, heads + g, sizeof(node *) * (size_t)k);
        while (cur[0]) {
            for (int c = 0; c < k; c++) {
                sum += cur[c]->value;
                cur[c] = cur[c]->next;
                if (prefetch && cur[c]) __builtin_prefetch(cur[c]);
            }
        }
    }
    return sum;
}

/* Lays out n lists over `len_all` nodes taken in `order` (a stretch of a
 * shuffled permutation of the arena), of equal length; returns the sum of
 * their values, which a walk must find. */
static uint64_t link_chains(node *arena, const uint32_t *order, size_t len_all, int n, node **heads) {
    size_t len = len_all / (size_t)n;
    uint64_t sum = 0;
    for (int c = 0; c < n; c++) {
        const uint32_t *o = order + (size_t)c * len;
        heads[c] = &arena[o[0]];
        for (size_t i = 0; i + 1 < len; i++) arena[o[i]].next = &arena[o[i + 1]];
        arena[o[len - 1]].next = NULL;
        for (size_t i = 0; i < len; i++) sum += arena[o[i]].value;
    }
    return sum;
}

/* The arena's nodes, in one shuffled order, are cut into SETS disjoint
 * sets of MAX_CHAINS lists each. Each walk takes the next set in turn, so
 * between two walks of one set the other sets' lines have passed through
 * the caches: with an arena well past the last-level cache, a walk finds
 * none of its nodes there, and it visits only a quarter of the arena. */
#define SETS 4

/* One arena, 4 KiB or 2 MiB pages; walks sequential, then k = ks[i]
 * lists at a time without and with prefetch, RUNS times alternated. */
static void chains_pass(size_t nodes, int huge, const int *ks, int nk) {
    size_t bytes = nodes * sizeof(node);
    node *arena = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED) {
        perror("prefetch_micro: mmap");
        exit(1);
    }
    int advised = madvise(arena, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) == 0;
    for (size_t i = 0; i < nodes; i++) arena[i].value = i;
    uint32_t *order = malloc(nodes * sizeof *order);
    if (!order) exit(1);
    for (size_t i = 0; i < nodes; i++) order[i] = (uint32_t)i;
    shuffle(order, nodes);
    size_t per_set = nodes / SETS;
    node *heads[SETS][MAX_CHAINS];
    uint64_t want[SETS];
    for (int s = 0; s < SETS; s++)
        want[s] = link_chains(arena, order + (size_t)s * per_set, per_set, MAX_CHAINS, heads[s]);
    free(order);
    long huge_kb = anon_huge_kb();

    int set = 0;
    for (int r = 1; r <= RUNS; r++) {
        for (int i = -1; i < nk; i++) {
            for (int m = 0; m < 2; m++) {
                if (i < 0 && m == 1) continue; /* sequential: once */
                uint64_t t0 = now_ns();
                uint64_t sum = i < 0 ? walk_sequential(heads[set], MAX_CHAINS)
                                     : walk_interleaved(heads[set], MAX_CHAINS, ks[i], m);
                uint64_t dt = now_ns() - t0;
                if (sum != want[set]) {
                    fprintf(stderr, "prefetch_micro: chains sum %" PRIu64 " != %" PRIu64 "\n", sum, want[set]);
                    exit(1);
                }
                set = (set + 1) % SETS;
                sink += sum;
                print_head("chains");
                printf("\"method\":\"%s\",\"chains\":%d,\"nodes\":%zu,\"arena_bytes\":%zu,\"sets\":%d,"
                       "\"pages\":\"%s\",\"madvise_ok\":%s,\"anon_huge_kb\":%ld,\"run\":%d,"
                       "\"ns_per_node\":%.3f}\n",
                       i < 0 ? "sequential"
                       : m   ? "prefetch"
                             : "interleaved",
                       i < 0 ? 1 : ks[i], per_set, bytes, SETS, huge ? "2M" : "4K", advised ? "true" : "false", huge_kb,
                       r, (double)dt / (double)per_set);
                fflush(stdout);
            }
        }
    }
    munmap(arena, bytes);
}

/* -------------------------------------------------------- part: table */

typedef struct entry {
    hashtable_key k;
    char bytes[16];
} entry;

/* A lookup's key, with its own copy of the bytes: hashing it must not
 * touch the entry, or the hash itself would fetch what a find fetches. */
typedef struct query {
    hashtable_key k;
    char bytes[16];
} query;

static const void *entry_key(const void *e) { return &((const entry *)e)->k; }

static const hashtable_type table_type = {
    .hash_key = hashtable_key_hash,
    .entry_get_key = entry_key,
    .key_compare = hashtable_key_compare,
    .entry_destructor = free,
};

static size_t key_bytes(char *out, uint32_t i) { return (size_t)snprintf(out, 16, "key:%08" PRIx32, i); }

/* Lookups one after another. */
static uint64_t lookup_find(hashtable *ht, const query *q, size_t n) {
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++) {
        void *e;
        hits += (uint64_t)hashtable_find(ht, &q[i].k, &e);
    }
    return hits;
}

/* Lookups in batches of b resumable finds stepped round robin, as Valkey's
 * getNextPrefetchInfo does; with then_find, each key is afterwards looked
 * up again with hashtable_find, as a command does after the prefetch. */
static uint64_t lookup_batched(hashtable *ht, const query *q, size_t n, int b, int then_find) {
    hashtable_incremental_find_state st[MAX_BATCH];
    uint8_t live[MAX_BATCH];
    uint64_t hits = 0;
    for (size_t base = 0; base < n; base += (size_t)b) {
        int m = n - base < (size_t)b ? (int)(n - base) : b;
        for (int i = 0; i < m; i++) {
            hashtable_incremental_find_init(&st[i], ht, &q[base + (size_t)i].k);
            live[i] = 1;
        }
        for (int left = m; left > 0;)
            for (int i = 0; i < m; i++)
                if (live[i] && !hashtable_incremental_find_step(&st[i])) live[i] = 0, left--;
        for (int i = 0; i < m; i++) {
            void *e;
            if (then_find)
                hits += (uint64_t)hashtable_find(ht, &q[base + (size_t)i].k, &e);
            else
                hits += (uint64_t)hashtable_incremental_find_get_result(&st[i], &e);
        }
    }
    return hits;
}

static void table_pass(const char *thp, const size_t *sizes, int ns, size_t lookups) {
    static const int batches[] = {1, 2, 4, 8, 16, 32, 64, 128};
    const int nb = (int)(sizeof batches / sizeof *batches);
    char mode[32];
    thp_mode(mode, sizeof mode);
    static const uint8_t seed[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    hashtable_set_hash_seed(seed);
    query *q = malloc(lookups * sizeof *q);
    if (!q) exit(1);

    for (int s = 0; s < ns; s++) {
        size_t keys = sizes[s];
        hashtable *ht = hashtable_create(&table_type);
        size_t entry_bytes = 0;
        for (uint32_t i = 0; i < keys; i++) {
            entry *e = malloc(sizeof *e);
            if (!e) exit(1);
            e->k.len = key_bytes(e->bytes, i);
            e->k.ptr = e->bytes;
            if (i == 0) entry_bytes = malloc_usable_size(e) + 8; /* + malloc's header */
            hashtable_add(ht, e);
        }
        while (hashtable_is_rehashing(ht)) hashtable_rehash_microseconds(ht, 1000);
        for (size_t i = 0; i < lookups; i++) {
            q[i].k.len = key_bytes(q[i].bytes, (uint32_t)(rng() % keys));
            q[i].k.ptr = q[i].bytes;
        }
        size_t table_bytes = hashtable_mem_usage(ht) + keys * entry_bytes;
        long huge_kb = anon_huge_kb();

        for (int r = 1; r <= RUNS; r++) {
            /* method -1: find; 0..nb-1: batch; nb: prefetch+find at 16. */
            for (int m = -1; m <= nb; m++) {
                uint64_t t0 = now_ns();
                uint64_t hits = m < 0    ? lookup_find(ht, q, lookups)
                                : m < nb ? lookup_batched(ht, q, lookups, batches[m], 0)
                                         : lookup_batched(ht, q, lookups, 16, 1);
                uint64_t dt = now_ns() - t0;
                if (hits != lookups) {
                    fprintf(stderr, "prefetch_micro: %" PRIu64 " hits of %zu lookups\n", hits, lookups);
                    exit(1);
                }
                print_head("table");
                printf("\"method\":\"%s\",\"batch\":%d,\"keys\":%zu,\"table_bytes\":%zu,"
                       "\"buckets\":%zu,\"child_buckets\":%zu,\"lookups\":%zu,\"thp\":\"%s\","
                       "\"thp_mode\":\"%s\",\"anon_huge_kb\":%ld,\"run\":%d,\"ns_per_lookup\":%.3f}\n",
                       m < 0    ? "find"
                       : m < nb ? "batch"
                                : "prefetch_find",
                       m < 0    ? 0
                       : m < nb ? batches[m]
                                : 16,
                       keys, table_bytes, hashtable_buckets(ht), hashtable_child_buckets(ht), lookups, thp, mode,
                       huge_kb, r, (double)dt / (double)lookups);
                fflush(stdout);
            }
        }
        hashtable_release(ht);
    }
    free(q);
}

/* Runs the table part in a child: this program again, with --table THP. */
static int table_child(const char *self, const char *thp) {
    fflush(stdout);
    pid_t p = fork();
    if (p < 0) return -1;
    if (p == 0) {
        if (!strcmp(thp, "off")) {
            if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) thp = "off_unavailable";
        } else {
            setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
        }
        execl(self, self, "--table", thp, quick ? "--quick" : (char *)NULL, (char *)NULL);
        _exit(127);
    }
    bench_bound_child = p; /* the table pass running now: the time bound kills it too */
    int st;
    while (waitpid(p, &st, 0) < 0 && errno == EINTR) {
    }
    bench_bound_child = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv) {
    const char *q = getenv("QUICK");
    quick = q && *q && strcmp(q, "0") != 0;
    const char *table_thp = NULL, *part = "all";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--table") && i + 1 < argc)
            table_thp = argv[++i];
        else if (!strcmp(argv[i], "--part") && i + 1 < argc)
            part = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--part chains|table]\n", argv[0]);
            return 2;
        }
    }
    if (getenv("BENCH_RUN_ID")) run_id = getenv("BENCH_RUN_ID");
    l2_bytes = cache_size(2);
    l3_bytes = cache_size(3);

    /* Keys per table: about 65 bytes each (a 64-byte bucket per 5 to 7
     * keys, plus a 32-byte entry in a 48-byte malloc block), so 2 Ki and
     * 16 Ki keys sit in a 2 MiB L2, and the largest are several times a
     * large last-level cache. */
    static const size_t quick_sizes[] = {1u << 11, 1u << 14, 1u << 17, 1u << 20, 1u << 23};
    static const size_t full_sizes[] = {1u << 11, 1u << 14, 1u << 17, 1u << 20, 1u << 23, 1u << 25};
    if (table_thp) {
        if (quick)
            table_pass(table_thp, quick_sizes, 5, 1u << 17);
        else
            table_pass(table_thp, full_sizes, 6, 1u << 19);
        return 0;
    }

    bench_bound_set("prefetch_micro", quick ? 150 : 280);
    /* The arena: 512 MiB (QUICK) or 1 GiB of 64-byte nodes, past the
     * last-level cache, so each walk's lines come from DRAM. Sequential
     * is the one-list-at-a-time point (k = 1). */
    static const int ks[] = {2, 4, 8, 16, 32};
    size_t nodes = quick ? (size_t)8 << 20 : (size_t)16 << 20;
    if (strcmp(part, "table") != 0) {
        static const int k16[] = {16};
        chains_pass(nodes, 0, ks, 5);
        chains_pass(nodes, 1, k16, 1);
    }
    if (!strcmp(part, "chains")) return 0;

    char mode[32];
    thp_mode(mode, sizeof mode);
    int rc = table_child("/proc/self/exe", "off");
    if (rc != 0) return rc;
    if (!strcmp(mode, "never")) {
        printf("{\"bench\":\"prefetch_micro\",\"kind\":\"skipped\",\"run_id\":\"%s\",\"part\":\"table\","
               "\"thp\":\"on\",\"why\":\"transparent huge pages are set to never\"}\n",
               run_id);
        return 0;
    }
    return table_child("/proc/self/exe", "on");
}
