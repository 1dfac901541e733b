/* config.c — soloist-bench's command line and --help. See config.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "keyspace.h"

static const char HELP[] =
    "usage: soloist-bench [options]\n"
    "\n"
    "A load generator for RESP servers (soloist, Valkey, Redis) that measures\n"
    "latency honestly: in open loop (--rate) each request's latency runs from\n"
    "the time it was *due* to be sent, so a server stall shows in the tail\n"
    "instead of vanishing (coordinated omission corrected). Every reply is\n"
    "checked: a GET must return nil or exactly the value this tool writes for\n"
    "that key (the key's bytes, then a fixed pattern); errors are counted.\n"
    "\n"
    "Target\n"
    "  -h, --host HOST        server address (default 127.0.0.1)\n"
    "  -p, --port PORT        server port (default 6379)\n"
    "\n"
    "Load shape (these also give the defaults of every --class)\n"
    "  -c, --connections N    connections, spread over the threads (default 1)\n"
    "  -P, --pipeline N       requests in flight per connection (default 1). Closed\n"
    "                         loop keeps N in flight: each reply sends the next\n"
    "                         request (memtier_benchmark's --pipeline)\n"
    "      --batch            closed loop: send N, wait for all N replies, send the\n"
    "                         next N (redis-benchmark's -P), for like-for-like runs;\n"
    "                         open loop: each arrival is a batch of N sent together\n"
    "                         on a connection with nothing in flight, R/N a second\n"
    "  -t, --threads N        worker threads, one epoll loop each (default 1)\n"
    "      --cpu-list LIST    pin thread i to the i-th cpu of LIST, e.g. 4-19 or 1,3\n"
    "  -n, --keys N           key space size (default 1000)\n"
    "  -r, --ratio GET:SET    request mix by weight, e.g. 100:0, 1:10 (default 1:0)\n"
    "  -s, --value-size BYTES value size: 1024, 1k, 10mb (k, m, g = 1024^n; default 64)\n"
    "      --key-size N       key length in bytes, a class letter then digits (default 16)\n"
    "      --distribution D   key choice: uniform, zipf or zipf:S (S > 0, default 0.99)\n"
    "      --rate R           open loop: R requests/s for the class over all its\n"
    "                         connections (2000, 2k). 0 or absent: closed loop, each\n"
    "                         connection keeps -P requests in flight\n"
    "      --arrival A        open-loop arrivals: poisson (default) or uniform\n"
    "      --prefill          before the run, SET every key of every class once, so\n"
    "                         GETs hit (100% hit rate)\n"
    "      --class SPEC       add a traffic class (repeatable; up to 16). Each class has\n"
    "                         its own connections, rate and latency report. SPEC is\n"
    "                         comma-separated key=value, unset keys taken from the flags:\n"
    "                           name=NAME conns=N pipeline=N rate=R arrival=A\n"
    "                           value=BYTES keys=N ratio=GET:SET key-size=N\n"
    "                           distribution=D count=N batch=0|1 tag=LETTER\n"
    "                         (tag: the class's key letter, a-z; default a, b, c...\n"
    "                         by position; two processes loading one server give\n"
    "                         their classes different letters)\n"
    "                         e.g. the noisy neighbour:\n"
    "                           --class name=small,conns=8,pipeline=4,rate=2000,value=1kb\n"
    "                           --class name=big,conns=2,rate=5,value=1mb,keys=4\n"
    "\n"
    "Length of the run\n"
    "      --warmup DUR       load before measuring, not reported (default 0): 5s, 500ms\n"
    "  -d, --duration DUR     measured time (default 10s; 0 with --count: until done)\n"
    "      --count N          measured requests per class, then stop (with -d: first wins)\n"
    "      --drain DUR        after the end, how long to wait for replies still owed;\n"
    "                         any left are reported as unanswered (default 5s)\n"
    "\n"
    "Output\n"
    "      --json             one JSON object on stdout instead of the text summary\n"
    "  -q, --quiet            no progress line on stderr\n"
    "      --seed N           random seed (default: from the clock; printed)\n"
    "      --help             this text\n"
    "\n"
    "Reported per class: requests/s (achieved; offered in open loop), bytes/s in\n"
    "and out, hits and misses, errors (error replies, wrong values, lost connections\n"
    "and their requests, unanswered), and three histograms with p50 p90 p99 p99.9\n"
    "p99.99 max mean: latency (intended send -> last reply byte), service (actual\n"
    "send -> last reply byte) and slip (intended -> actual send: how late the\n"
    "generator sent; large slip at a modest rate means the generator, not the\n"
    "server, is the bottleneck). Also the generator's CPU use and how late its\n"
    "timer woke. A progress line goes to stderr once a second.\n"
    "\n"
    "valkey-lab command lines run as written, e.g.\n"
    "  soloist-bench -h 127.0.0.1 -p 6379 -c 32 -P 1 -t 2 -n 500 -r 100:0 --prefill \\\n"
    "      --warmup 5s -d 15s -s 1mb --key-size 16\n";

void sb_config_help(FILE *f) { fputs(HELP, f); }

/* --- value parsers ---------------------------------------------------- */

int sb_parse_size(const char *s, size_t *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) return -1;
    double mul = 1;
    if (!strcasecmp(end, "") || !strcasecmp(end, "b")) mul = 1;
    else if (!strcasecmp(end, "k") || !strcasecmp(end, "kb") || !strcasecmp(end, "kib")) mul = 1024.0;
    else if (!strcasecmp(end, "m") || !strcasecmp(end, "mb") || !strcasecmp(end, "mib")) mul = 1048576.0;
    else if (!strcasecmp(end, "g") || !strcasecmp(end, "gb") || !strcasecmp(end, "gib")) mul = 1073741824.0;
    else return -1;
    v *= mul;
    if (v > 4.0 * 1073741824.0 || v != floor(v)) return -1;
    *out = (size_t)v;
    return 0;
}

int sb_parse_duration(const char *s, uint64_t *ns) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) return -1;
    double mul;
    if (!strcmp(end, "") || !strcmp(end, "s")) mul = 1e9;
    else if (!strcmp(end, "ms")) mul = 1e6;
    else if (!strcmp(end, "us")) mul = 1e3;
    else if (!strcmp(end, "m")) mul = 60e9;
    else if (!strcmp(end, "h")) mul = 3600e9;
    else return -1;
    *ns = (uint64_t)llround(v * mul);
    return 0;
}

int sb_parse_rate(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0 || !isfinite(v)) return -1;
    if (!strcasecmp(end, "k")) v *= 1e3;
    else if (!strcasecmp(end, "m")) v *= 1e6;
    else if (*end) return -1;
    *out = v;
    return 0;
}

int sb_parse_ratio(const char *s, unsigned *get, unsigned *set) {
    char *end;
    errno = 0;
    unsigned long g = strtoul(s, &end, 10);
    if (errno || end == s || *end != ':') return -1;
    const char *t = end + 1;
    unsigned long st = strtoul(t, &end, 10);
    if (errno || end == t || *end || g + st == 0 || g > 1000000 || st > 1000000) return -1;
    *get = (unsigned)g;
    *set = (unsigned)st;
    return 0;
}

int sb_parse_cpu_list(const char *s, int *cpus, int max) {
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b;
        if (end == p || a < 0 || a > 4095) return -1;
        b = a;
        p = end;
        if (*p == '-') {
            p++;
            b = strtol(p, &end, 10);
            if (end == p || b < a || b > 4095) return -1;
            p = end;
        }
        for (long c = a; c <= b; c++) {
            if (n >= max) return -1;
            cpus[n++] = (int)c;
        }
        if (*p == ',') p++;
        else if (*p) return -1;
    }
    return n > 0 ? n : -1;
}

static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
    uint64_t v;
    if (parse_u64(s, &v) < 0 || v < (uint64_t)lo || v > (uint64_t)hi) return -1;
    *out = (int)v;
    return 0;
}

static int parse_dist(const char *s, sb_dist *d, double *zs) {
    if (!strcmp(s, "uniform")) {
        *d = SB_DIST_UNIFORM;
        return 0;
    }
    if (!strncmp(s, "zipf", 4)) {
        *d = SB_DIST_ZIPF;
        *zs = 0.99;
        if (s[4] == '\0') return 0;
        if (s[4] != ':') return -1;
        char *end;
        double v = strtod(s + 5, &end);
        if (end == s + 5 || *end || !(v > 0) || v > 10) return -1;
        *zs = v;
        return 0;
    }
    return -1;
}

static int parse_arrival(const char *s, sb_arrival *a) {
    if (!strcmp(s, "poisson")) *a = SB_ARRIVAL_POISSON;
    else if (!strcmp(s, "uniform")) *a = SB_ARRIVAL_UNIFORM;
    else return -1;
    return 0;
}

int sb_parse_class(sb_class_cfg *c, const char *spec, char *err, size_t errlen) {
    char buf[1024];
    if (strlen(spec) >= sizeof(buf)) {
        snprintf(err, errlen, "--class: spec too long");
        return -1;
    }
    strcpy(buf, spec);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(err, errlen, "--class: '%s' is not key=value", kv);
            return -1;
        }
        *eq = '\0';
        const char *k = kv, *v = eq + 1;
        int bad = 0;
        if (!strcmp(k, "name")) {
            if (!*v || strlen(v) >= sizeof(c->name) || strpbrk(v, "\"\\ ")) bad = 1;
            else strcpy(c->name, v);
        } else if (!strcmp(k, "conns") || !strcmp(k, "c")) bad = parse_int(v, 1, 100000, &c->conns);
        else if (!strcmp(k, "pipeline") || !strcmp(k, "P")) bad = parse_int(v, 1, 65536, &c->pipeline);
        else if (!strcmp(k, "rate")) bad = sb_parse_rate(v, &c->rate);
        else if (!strcmp(k, "arrival")) bad = parse_arrival(v, &c->arrival);
        else if (!strcmp(k, "value") || !strcmp(k, "s")) bad = sb_parse_size(v, &c->value_bytes);
        else if (!strcmp(k, "keys") || !strcmp(k, "n")) bad = parse_u64(v, &c->keys) || c->keys == 0;
        else if (!strcmp(k, "ratio") || !strcmp(k, "r")) bad = sb_parse_ratio(v, &c->get_w, &c->set_w);
        else if (!strcmp(k, "key-size")) bad = parse_int(v, 2, 500, &c->key_size);
        else if (!strcmp(k, "distribution")) bad = parse_dist(v, &c->dist, &c->zipf_s);
        else if (!strcmp(k, "count")) bad = parse_u64(v, &c->count);
        else if (!strcmp(k, "batch")) bad = parse_int(v, 0, 1, &c->batch);
        else if (!strcmp(k, "tag")) {
            if (v[0] < 'a' || v[0] > 'z' || v[1]) bad = 1;
            else c->tag = v[0];
        } else {
            snprintf(err, errlen, "--class: unknown key '%s'", k);
            return -1;
        }
        if (bad) {
            snprintf(err, errlen, "--class: bad value for %s: '%s'", k, v);
            return -1;
        }
    }
    return 0;
}

/* --- the command line ------------------------------------------------- */

enum {
    OPT_CPU_LIST = 256, OPT_PREFILL, OPT_WARMUP, OPT_KEY_SIZE, OPT_RATE, OPT_ARRIVAL, OPT_DIST,
    OPT_CLASS, OPT_JSON, OPT_COUNT, OPT_SEED, OPT_DRAIN, OPT_HELP, OPT_BATCH
};

static const struct option LONGOPTS[] = {
    {"host", required_argument, 0, 'h'},      {"port", required_argument, 0, 'p'},
    {"connections", required_argument, 0, 'c'}, {"pipeline", required_argument, 0, 'P'},
    {"threads", required_argument, 0, 't'},   {"cpu-list", required_argument, 0, OPT_CPU_LIST},
    {"keys", required_argument, 0, 'n'},      {"ratio", required_argument, 0, 'r'},
    {"prefill", no_argument, 0, OPT_PREFILL}, {"warmup", required_argument, 0, OPT_WARMUP},
    {"duration", required_argument, 0, 'd'},  {"value-size", required_argument, 0, 's'},
    {"key-size", required_argument, 0, OPT_KEY_SIZE}, {"rate", required_argument, 0, OPT_RATE},
    {"arrival", required_argument, 0, OPT_ARRIVAL}, {"distribution", required_argument, 0, OPT_DIST},
    {"class", required_argument, 0, OPT_CLASS}, {"json", no_argument, 0, OPT_JSON},
    {"count", required_argument, 0, OPT_COUNT}, {"seed", required_argument, 0, OPT_SEED},
    {"drain", required_argument, 0, OPT_DRAIN}, {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, OPT_HELP},       {"batch", no_argument, 0, OPT_BATCH},       {0, 0, 0, 0}};

const char *sb_config_long_option(int i) {
    return i >= 0 && i < (int)(sizeof(LONGOPTS) / sizeof(LONGOPTS[0])) ? LONGOPTS[i].name : NULL;
}

#define FAIL(...)                               \
    do {                                        \
        snprintf(err, errlen, __VA_ARGS__);     \
        return -1;                              \
    } while (0)

/* Checks that need the whole class, after flags and --class are applied. */
static int check_class(sb_class_cfg *c, char *err, size_t errlen) {
    if (!sb_key_size_fits(c->key_size, c->keys))
        FAIL("class %s: --key-size %d is too short for %llu keys (a letter and %d digits needed)", c->name,
             c->key_size, (unsigned long long)c->keys, (int)snprintf(NULL, 0, "%llu", (unsigned long long)c->keys - 1));
    if (c->value_bytes > 512u * 1024 * 1024) FAIL("class %s: value larger than 512 MB", c->name);
    return 0;
}

int sb_config_parse(sb_run_cfg *cfg, int argc, char **argv, char *err, size_t errlen) {
    memset(cfg, 0, sizeof(*cfg));
    strcpy(cfg->host, "127.0.0.1");
    cfg->port = 6379;
    cfg->threads = 1;
    cfg->duration_ns = 10000000000ULL;
    cfg->drain_ns = 5000000000ULL;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    cfg->seed = (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 20);

    sb_class_cfg base;
    memset(&base, 0, sizeof(base));
    strcpy(base.name, "main");
    base.conns = 1;
    base.pipeline = 1;
    base.arrival = SB_ARRIVAL_POISSON;
    base.keys = 1000;
    base.dist = SB_DIST_UNIFORM;
    base.zipf_s = 0.99;
    base.get_w = 1;
    base.value_bytes = 64;
    base.key_size = 16;

    const char *specs[SB_MAX_CLASSES];
    int nspecs = 0, duration_given = 0;
    uint64_t count = 0;
    optind = 1;
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":h:p:c:P:t:n:r:d:s:q", LONGOPTS, NULL)) != -1) {
        switch (o) {
        case 'h':
            if (strlen(optarg) >= sizeof(cfg->host)) FAIL("-h: host name too long");
            strcpy(cfg->host, optarg);
            break;
        case 'p':
            if (parse_int(optarg, 1, 65535, &cfg->port)) FAIL("-p: bad port '%s'", optarg);
            break;
        case 'c':
            if (parse_int(optarg, 1, 100000, &base.conns)) FAIL("-c: bad connection count '%s'", optarg);
            break;
        case 'P':
            if (parse_int(optarg, 1, 65536, &base.pipeline)) FAIL("-P: bad pipeline depth '%s'", optarg);
            break;
        case 't':
            if (parse_int(optarg, 1, SB_MAX_THREADS, &cfg->threads)) FAIL("-t: threads must be 1..%d", SB_MAX_THREADS);
            break;
        case OPT_CPU_LIST:
            cfg->ncpus = sb_parse_cpu_list(optarg, cfg->cpus, SB_MAX_THREADS);
            if (cfg->ncpus < 0) FAIL("--cpu-list: bad list '%s' (e.g. 4-19 or 1,3)", optarg);
            break;
        case 'n':
            if (parse_u64(optarg, &base.keys) || base.keys == 0) FAIL("-n: bad key count '%s'", optarg);
            break;
        case 'r':
            if (sb_parse_ratio(optarg, &base.get_w, &base.set_w)) FAIL("-r: bad ratio '%s' (GET:SET, e.g. 100:0)", optarg);
            break;
        case 'd':
            if (sb_parse_duration(optarg, &cfg->duration_ns)) FAIL("-d: bad duration '%s'", optarg);
            duration_given = 1;
            break;
        case 's':
            if (sb_parse_size(optarg, &base.value_bytes)) FAIL("-s: bad size '%s'", optarg);
            break;
        case 'q': cfg->quiet = 1; break;
        case OPT_PREFILL: cfg->prefill = 1; break;
        case OPT_BATCH: base.batch = 1; break;
        case OPT_WARMUP:
            if (sb_parse_duration(optarg, &cfg->warmup_ns)) FAIL("--warmup: bad duration '%s'", optarg);
            break;
        case OPT_KEY_SIZE:
            if (parse_int(optarg, 2, 500, &base.key_size)) FAIL("--key-size: must be 2..500");
            break;
        case OPT_RATE:
            if (sb_parse_rate(optarg, &base.rate)) FAIL("--rate: bad rate '%s'", optarg);
            break;
        case OPT_ARRIVAL:
            if (parse_arrival(optarg, &base.arrival)) FAIL("--arrival: poisson or uniform");
            break;
        case OPT_DIST:
            if (parse_dist(optarg, &base.dist, &base.zipf_s)) FAIL("--distribution: uniform, zipf or zipf:S");
            break;
        case OPT_CLASS:
            if (nspecs == SB_MAX_CLASSES) FAIL("--class: at most %d classes", SB_MAX_CLASSES);
            specs[nspecs++] = optarg;
            break;
        case OPT_JSON: cfg->json = 1; break;
        case OPT_COUNT:
            if (parse_u64(optarg, &count) || count == 0) FAIL("--count: bad count '%s'", optarg);
            break;
        case OPT_SEED:
            if (parse_u64(optarg, &cfg->seed)) FAIL("--seed: bad seed '%s'", optarg);
            break;
        case OPT_DRAIN:
            if (sb_parse_duration(optarg, &cfg->drain_ns)) FAIL("--drain: bad duration '%s'", optarg);
            break;
        case OPT_HELP: sb_config_help(stdout); return 1;
        case ':': FAIL("option %s needs a value (see --help)", argv[optind - 1]);
        default: FAIL("unknown option %s (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) FAIL("unexpected argument '%s' (see --help)", argv[optind]);
    base.count = count;
    /* With --count and no -d, the count alone ends the run. */
    if (count && !duration_given) cfg->duration_ns = 0;
    if (!count && cfg->duration_ns == 0) FAIL("-d 0 needs --count");

    if (nspecs == 0) {
        cfg->classes[0] = base;
        cfg->nclasses = 1;
    }
    for (int i = 0; i < nspecs; i++) {
        sb_class_cfg *c = &cfg->classes[i];
        *c = base;
        snprintf(c->name, sizeof(c->name), "class%d", i);
        if (sb_parse_class(c, specs[i], err, errlen) < 0) return -1;
        if (cfg->duration_ns == 0 && c->count == 0) FAIL("class %s: no --count and no -d: it would never end", c->name);
        for (int j = 0; j < i; j++)
            if (!strcmp(cfg->classes[j].name, c->name)) FAIL("--class: two classes named %s", c->name);
        cfg->nclasses++;
    }
    int total = 0;
    for (int i = 0; i < cfg->nclasses; i++) {
        if (!cfg->classes[i].tag) cfg->classes[i].tag = (char)('a' + i);
        for (int j = 0; j < i; j++)
            if (cfg->classes[j].tag == cfg->classes[i].tag)
                FAIL("--class: %s and %s would share the key letter %c", cfg->classes[j].name, cfg->classes[i].name,
                     cfg->classes[i].tag);
        if (check_class(&cfg->classes[i], err, errlen) < 0) return -1;
        total += cfg->classes[i].conns;
    }
    /* A thread with no connection would only burn a core. */
    if (cfg->threads > total) cfg->threads = total;
    return 0;
}
