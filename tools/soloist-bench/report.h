/* report.h — soloist-bench's results: the text summary and --json.
 *
 * soloist-bench. Owns: merging the workers' per-class stats
 * and printing them. Main thread only, after every worker is joined.
 *
 * The JSON is one object on one line, for bench/ scripts and
 * `make findings`: run conditions, then per class its throughput,
 * counts, errors and three histograms in microseconds (latency, service,
 * slip), then the generator's own CPU and timer lateness.
 */
#ifndef SOLOIST_BENCH_REPORT_H
#define SOLOIST_BENCH_REPORT_H
#include <stdio.h>

#include "bench.h"

typedef struct sb_report {
    const sb_run_cfg *cfg;
    sb_stats cls[SB_MAX_CLASSES]; /* merged over workers */
    sb_hdr wake;                  /* timer lateness, merged */
    double measured_s;            /* the window the rates are over */
    double cpu_s;                 /* generator CPU during the run, all threads */
    double wall_s;                /* warmup + window + drain */
    int interrupted;
} sb_report;

void sb_report_init(sb_report *r, const sb_run_cfg *cfg);
void sb_report_free(sb_report *r);
void sb_report_print_text(const sb_report *r, FILE *f);
void sb_report_print_json(const sb_report *r, FILE *f);

#endif
