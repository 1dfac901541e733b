/* config.h — soloist-bench's command line.
 *
 * soloist-bench. Owns: turning argv into a sb_run_cfg, and the
 * --help text that documents every option. Main thread only, before any
 * worker exists.
 *
 * The flags are valkey-lab's (Momento's cachecannon-based generator), so
 * its command lines can be pasted: -h HOST -c CONNS -P DEPTH -t THREADS --cpu-list LIST
 * -n KEYS -r GET:SET --prefill --warmup 5s -d 15s -s VALUE_BYTES
 * --key-size N; plus -p PORT, --rate, --arrival, --distribution,
 * --class (repeatable) for mixed traffic, --count and --json.
 * Note -h is the host, as in valkey-lab and redis-cli; help is --help.
 */
#ifndef SOLOIST_BENCH_CONFIG_H
#define SOLOIST_BENCH_CONFIG_H
#include <stdint.h>
#include <stdio.h>

#include "bench.h"

/* 0: run; 1: --help was printed; -1: a usage error, described in err. */
int sb_config_parse(sb_run_cfg *cfg, int argc, char **argv, char *err, size_t errlen);
void sb_config_help(FILE *f);
/* The i-th long option's name, NULL past the last: lets the tests check
 * that --help documents every option getopt accepts. */
const char *sb_config_long_option(int i);

/* The value parsers, public for the tests. Each returns 0 or -1. */
int sb_parse_size(const char *s, size_t *out);       /* 1024, 1k, 10mb, 1MiB */
int sb_parse_duration(const char *s, uint64_t *ns);  /* 15s, 500ms, 2m, 1.5 */
int sb_parse_rate(const char *s, double *out);       /* 2000, 2k, 1.5m */
int sb_parse_ratio(const char *s, unsigned *get, unsigned *set); /* 1:10 */
int sb_parse_cpu_list(const char *s, int *cpus, int max);        /* 4-19,22 → count */
/* "name=big,conns=2,rate=10,value=10mb,ratio=1:0" on top of *c. */
int sb_parse_class(sb_class_cfg *c, const char *spec, char *err, size_t errlen);

#endif
