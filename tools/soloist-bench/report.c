/* report.c — stats merging, text summary and JSON (soloist-bench).
 * See report.h and bench.h. */
#include "report.h"

#include <string.h>

#define HDR_HIGHEST (1ULL << 42)

void sb_stats_init(sb_stats *s) {
    memset(s, 0, sizeof(*s));
    sb_hdr_init(&s->latency, HDR_HIGHEST);
    sb_hdr_init(&s->service, HDR_HIGHEST);
    sb_hdr_init(&s->slip, HDR_HIGHEST);
}

void sb_stats_free(sb_stats *s) {
    sb_hdr_free(&s->latency);
    sb_hdr_free(&s->service);
    sb_hdr_free(&s->slip);
}

void sb_stats_merge(sb_stats *d, const sb_stats *s) {
    sb_hdr_merge(&d->latency, &s->latency);
    sb_hdr_merge(&d->service, &s->service);
    sb_hdr_merge(&d->slip, &s->slip);
    d->done += s->done;
    d->gets += s->gets;
    d->sets += s->sets;
    d->hits += s->hits;
    d->misses += s->misses;
    d->error_replies += s->error_replies;
    d->bad_values += s->bad_values;
    d->conn_errors += s->conn_errors;
    d->lost += s->lost;
    d->unanswered += s->unanswered;
    d->unsent += s->unsent;
    d->errors_outside += s->errors_outside;
    d->issued += s->issued;
    d->bytes_rx += s->bytes_rx;
    d->bytes_tx += s->bytes_tx;
    if (s->last_done_ns > d->last_done_ns) d->last_done_ns = s->last_done_ns;
    if (!d->first_error[0]) memcpy(d->first_error, s->first_error, sizeof(d->first_error));
}

uint64_t sb_stats_errors(const sb_stats *s) {
    return s->error_replies + s->bad_values + s->conn_errors + s->lost + s->unanswered;
}

void sb_report_init(sb_report *r, const sb_run_cfg *cfg) {
    memset(r, 0, sizeof(*r));
    r->cfg = cfg;
    for (int i = 0; i < cfg->nclasses; i++) sb_stats_init(&r->cls[i]);
    sb_hdr_init(&r->wake, HDR_HIGHEST);
}

void sb_report_free(sb_report *r) {
    for (int i = 0; i < r->cfg->nclasses; i++) sb_stats_free(&r->cls[i]);
    sb_hdr_free(&r->wake);
}

static const double PCTS[] = {50, 90, 99, 99.9, 99.99};
static const char *const PCT_NAMES[] = {"p50", "p90", "p99", "p99.9", "p99.99"};

static double us(uint64_t ns) { return (double)ns / 1000.0; }

/* Three significant digits, like the histogram itself. */
static void fmt_us(char *buf, size_t n, double v) {
    if (v < 10) snprintf(buf, n, "%.2f", v);
    else if (v < 100) snprintf(buf, n, "%.1f", v);
    else snprintf(buf, n, "%.0f", v);
}

static void text_hist(FILE *f, const char *label, const sb_hdr *h) {
    char b[32];
    fprintf(f, "  %-11s", label);
    if (!h->total) {
        fprintf(f, " (no samples)\n");
        return;
    }
    for (int i = 0; i < 5; i++) {
        fmt_us(b, sizeof(b), us(sb_hdr_percentile(h, PCTS[i])));
        fprintf(f, " %s %s", PCT_NAMES[i], b);
    }
    fmt_us(b, sizeof(b), us(h->max));
    fprintf(f, " max %s", b);
    fmt_us(b, sizeof(b), sb_hdr_mean(h) / 1000.0);
    fprintf(f, " mean %s\n", b);
}

static const char *dist_name(const sb_class_cfg *c, char *buf, size_t n) {
    if (c->dist == SB_DIST_UNIFORM) snprintf(buf, n, "uniform");
    else snprintf(buf, n, "zipf:%g", c->zipf_s);
    return buf;
}

static void fmt_bytes(char *buf, size_t n, double v) {
    if (v >= 1048576.0 * 1024) snprintf(buf, n, "%.2f GB", v / (1048576.0 * 1024));
    else if (v >= 1048576.0) snprintf(buf, n, "%.1f MB", v / 1048576.0);
    else if (v >= 1024.0) snprintf(buf, n, "%.1f KB", v / 1024.0);
    else snprintf(buf, n, "%.0f B", v);
}

void sb_report_print_text(const sb_report *r, FILE *f) {
    const sb_run_cfg *cfg = r->cfg;
    double T = r->measured_s > 0 ? r->measured_s : 1e-9;
    fprintf(f, "soloist-bench  %s:%d  threads %d  measured %.2f s after %.2f s warmup  seed %llu%s\n", cfg->host,
            cfg->port, cfg->threads, r->measured_s, (double)cfg->warmup_ns / 1e9, (unsigned long long)cfg->seed,
            r->interrupted ? "  (interrupted)" : "");
    for (int i = 0; i < cfg->nclasses; i++) {
        const sb_class_cfg *c = &cfg->classes[i];
        const sb_stats *s = &r->cls[i];
        char d[32], vb[32], rx[32], tx[32];
        fmt_bytes(vb, sizeof(vb), (double)c->value_bytes);
        fprintf(f, "class %s: ", c->name);
        if (c->rate > 0) fprintf(f, "open loop %.6g req/s %s", c->rate, c->arrival == SB_ARRIVAL_POISSON ? "poisson" : "uniform");
        else fprintf(f, "closed loop");
        fprintf(f, ", %d conns x P%d%s, GET:SET %u:%u, %llu keys %s, key %d B, value %s\n", c->conns, c->pipeline,
                c->batch ? " (batch)" : "", c->get_w, c->set_w, (unsigned long long)c->keys, dist_name(c, d, sizeof(d)), c->key_size, vb);
        fmt_bytes(rx, sizeof(rx), (double)s->bytes_rx / T);
        fmt_bytes(tx, sizeof(tx), (double)s->bytes_tx / T);
        fprintf(f, "  throughput  %.0f req/s", (double)s->done / T);
        if (c->rate > 0) fprintf(f, " (offered %.0f req/s)", (double)(s->issued + s->unsent) / T);
        fprintf(f, "  in %s/s  out %s/s\n", rx, tx);
        fprintf(f, "  requests    %llu: GET %llu (hit %llu, miss %llu), SET %llu\n", (unsigned long long)s->done,
                (unsigned long long)s->gets, (unsigned long long)s->hits, (unsigned long long)s->misses,
                (unsigned long long)s->sets);
        fprintf(f,
                "  errors      %llu: error replies %llu, wrong values %llu, connections lost %llu (requests lost %llu), "
                "unanswered %llu",
                (unsigned long long)sb_stats_errors(s), (unsigned long long)s->error_replies,
                (unsigned long long)s->bad_values, (unsigned long long)s->conn_errors, (unsigned long long)s->lost,
                (unsigned long long)s->unanswered);
        if (s->unsent) fprintf(f, "; unsent (due, never sent) %llu", (unsigned long long)s->unsent);
        if (s->errors_outside) fprintf(f, "; during prefill/warmup %llu", (unsigned long long)s->errors_outside);
        fprintf(f, "\n");
        if (s->first_error[0]) fprintf(f, "  first error %s\n", s->first_error);
        text_hist(f, "latency us", &s->latency);
        text_hist(f, "service us", &s->service);
        text_hist(f, "slip us", &s->slip);
    }
    char b1[32], b2[32];
    fmt_us(b1, sizeof(b1), us(sb_hdr_percentile(&r->wake, 99)));
    fmt_us(b2, sizeof(b2), us(r->wake.max));
    fprintf(f, "generator: cpu %.0f%% of one core over the run (%.2f s cpu in %.2f s); timer woke late p99 %s us, max %s us\n",
            r->wall_s > 0 ? 100.0 * r->cpu_s / r->wall_s : 0.0, r->cpu_s, r->wall_s, b1, b2);
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void json_hist(FILE *f, const char *name, const sb_hdr *h) {
    fprintf(f, "\"%s\":{", name);
    for (int i = 0; i < 5; i++) fprintf(f, "\"%s\":%.3f,", PCT_NAMES[i], us(sb_hdr_percentile(h, PCTS[i])));
    fprintf(f, "\"max\":%.3f,\"mean\":%.3f,\"samples\":%llu}", us(h->max), sb_hdr_mean(h) / 1000.0,
            (unsigned long long)h->total);
}

void sb_report_print_json(const sb_report *r, FILE *f) {
    const sb_run_cfg *cfg = r->cfg;
    double T = r->measured_s > 0 ? r->measured_s : 1e-9;
    fprintf(f, "{\"tool\":\"soloist-bench\",\"host\":");
    json_str(f, cfg->host);
    fprintf(f, ",\"port\":%d,\"threads\":%d,\"warmup_s\":%.3f,\"measured_s\":%.3f,\"seed\":%llu,\"prefill\":%s,"
               "\"interrupted\":%s,\"classes\":[",
            cfg->port, cfg->threads, (double)cfg->warmup_ns / 1e9, r->measured_s, (unsigned long long)cfg->seed,
            cfg->prefill ? "true" : "false", r->interrupted ? "true" : "false");
    for (int i = 0; i < cfg->nclasses; i++) {
        const sb_class_cfg *c = &cfg->classes[i];
        const sb_stats *s = &r->cls[i];
        char d[32];
        fprintf(f, "%s{\"name\":", i ? "," : "");
        json_str(f, c->name);
        fprintf(f,
                ",\"mode\":\"%s\",\"conns\":%d,\"pipeline\":%d,\"batch\":%s,\"rate\":%.3f,\"arrival\":\"%s\",\"keys\":%llu,"
                "\"distribution\":\"%s\",\"get\":%u,\"set\":%u,\"key_size\":%d,\"value_bytes\":%zu,",
                c->rate > 0 ? "open" : "closed", c->conns, c->pipeline, c->batch ? "true" : "false", c->rate,
                c->arrival == SB_ARRIVAL_POISSON ? "poisson" : "uniform", (unsigned long long)c->keys,
                dist_name(c, d, sizeof(d)), c->get_w, c->set_w, c->key_size, c->value_bytes);
        fprintf(f,
                "\"requests\":%llu,\"rps\":%.1f,\"offered_rps\":%.1f,\"rx_bytes_per_s\":%.0f,\"tx_bytes_per_s\":%.0f,"
                "\"gets\":%llu,\"sets\":%llu,\"hits\":%llu,\"misses\":%llu,\"errors\":%llu,\"error_replies\":%llu,"
                "\"bad_values\":%llu,\"conn_errors\":%llu,\"lost\":%llu,\"unanswered\":%llu,\"unsent\":%llu,"
                "\"errors_outside\":%llu,\"first_error\":",
                (unsigned long long)s->done, (double)s->done / T,
                c->rate > 0 ? (double)(s->issued + s->unsent) / T : (double)s->done / T, (double)s->bytes_rx / T,
                (double)s->bytes_tx / T, (unsigned long long)s->gets, (unsigned long long)s->sets,
                (unsigned long long)s->hits, (unsigned long long)s->misses, (unsigned long long)sb_stats_errors(s),
                (unsigned long long)s->error_replies, (unsigned long long)s->bad_values,
                (unsigned long long)s->conn_errors, (unsigned long long)s->lost, (unsigned long long)s->unanswered,
                (unsigned long long)s->unsent, (unsigned long long)s->errors_outside);
        json_str(f, s->first_error);
        fputc(',', f);
        json_hist(f, "latency_us", &s->latency);
        fputc(',', f);
        json_hist(f, "service_us", &s->service);
        fputc(',', f);
        json_hist(f, "slip_us", &s->slip);
        fputc('}', f);
    }
    fprintf(f, "],\"generator\":{\"cpu_s\":%.3f,\"wall_s\":%.3f,\"cpu_pct\":%.1f,", r->cpu_s, r->wall_s,
            r->wall_s > 0 ? 100.0 * r->cpu_s / r->wall_s : 0.0);
    json_hist(f, "wake_late_us", &r->wake);
    fprintf(f, "}}\n");
}
