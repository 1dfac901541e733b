/* test_config.c — the command line (soloist-bench): valkey-lab
 * command lines parse as written, --class builds mixed
 * traffic, bad values are refused, and --help documents every option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static int parse(sb_run_cfg *cfg, char *line, char *err, size_t errlen) {
    char *argv[64];
    int argc = 0;
    for (char *t = strtok(line, " "); t && argc < 63; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    return sb_config_parse(cfg, argc, argv, err, errlen);
}

static void test_valkey_lab_get_pass(void **state) {
    (void)state;
    static sb_run_cfg cfg;
    char err[256];
    /* a valkey-lab GET pass on a 16-core machine, pasted with its flags */
    char line[] = "soloist-bench -h 127.0.0.1 -c 32 -P 1 -t 16 --cpu-list 4-19 -n 500 -r 100:0 --prefill "
                  "--warmup 5s -d 15s -s 8mb --key-size 16";
    assert_int_equal(parse(&cfg, line, err, sizeof(err)), 0);
    assert_string_equal(cfg.host, "127.0.0.1");
    assert_int_equal(cfg.threads, 16);
    assert_int_equal(cfg.ncpus, 16);
    assert_int_equal(cfg.cpus[0], 4);
    assert_int_equal(cfg.cpus[15], 19);
    assert_int_equal(cfg.prefill, 1);
    assert_int_equal(cfg.warmup_ns, 5000000000ULL);
    assert_int_equal(cfg.duration_ns, 15000000000ULL);
    assert_int_equal(cfg.nclasses, 1);
    const sb_class_cfg *c = &cfg.classes[0];
    assert_int_equal(c->conns, 32);
    assert_int_equal(c->pipeline, 1);
    assert_int_equal(c->keys, 500);
    assert_int_equal(c->get_w, 100);
    assert_int_equal(c->set_w, 0);
    assert_int_equal(c->value_bytes, 8u << 20);
    assert_int_equal(c->key_size, 16);
    assert_true(c->rate == 0); /* closed loop */
}

static void test_classes(void **state) {
    (void)state;
    static sb_run_cfg cfg;
    char err[256];
    char line[] = "x -p 7000 -c 8 -P 32 --rate 2k --class name=small,value=1kb "
                  "--class name=big,conns=2,rate=10,value=10mb,ratio=1:0,keys=4,pipeline=1,arrival=uniform";
    assert_int_equal(parse(&cfg, line, err, sizeof(err)), 0);
    assert_int_equal(cfg.port, 7000);
    assert_int_equal(cfg.nclasses, 2);
    assert_string_equal(cfg.classes[0].name, "small");
    assert_int_equal(cfg.classes[0].conns, 8);       /* from -c */
    assert_int_equal(cfg.classes[0].pipeline, 32);   /* from -P */
    assert_true(cfg.classes[0].rate == 2000);         /* from --rate */
    assert_int_equal(cfg.classes[0].value_bytes, 1024);
    assert_int_equal(cfg.classes[0].arrival, SB_ARRIVAL_POISSON);
    assert_string_equal(cfg.classes[1].name, "big");
    assert_int_equal(cfg.classes[1].conns, 2);
    assert_true(cfg.classes[1].rate == 10);
    assert_int_equal(cfg.classes[1].value_bytes, 10u << 20);
    assert_int_equal(cfg.classes[1].keys, 4);
    assert_int_equal(cfg.classes[1].arrival, SB_ARRIVAL_UNIFORM);
    assert_int_equal(cfg.classes[0].tag, 'a');
    assert_int_equal(cfg.classes[1].tag, 'b'); /* separate key spaces */

    /* tag= names the letter, so a second process keeps its keys apart. */
    char tagged[] = "x --class name=big,tag=z,value=10mb --class name=small";
    assert_int_equal(parse(&cfg, tagged, err, sizeof(err)), 0);
    assert_int_equal(cfg.classes[0].tag, 'z');
    assert_int_equal(cfg.classes[1].tag, 'b');
}

static void test_value_parsers(void **state) {
    (void)state;
    size_t sz;
    uint64_t ns;
    double r;
    unsigned g, s;
    int cpus[8];
    assert_int_equal(sb_parse_size("1024", &sz), 0);
    assert_int_equal(sz, 1024);
    assert_int_equal(sb_parse_size("1KiB", &sz), 0);
    assert_int_equal(sz, 1024);
    assert_int_equal(sb_parse_size("64MB", &sz), 0);
    assert_int_equal(sz, 64u << 20);
    assert_int_equal(sb_parse_size("1.5k", &sz), 0);
    assert_int_equal(sz, 1536);
    assert_int_equal(sb_parse_size("12q", &sz), -1);
    assert_int_equal(sb_parse_duration("500ms", &ns), 0);
    assert_int_equal(ns, 500000000ULL);
    assert_int_equal(sb_parse_duration("2m", &ns), 0);
    assert_int_equal(ns, 120000000000ULL);
    assert_int_equal(sb_parse_duration("1.5", &ns), 0);
    assert_int_equal(ns, 1500000000ULL);
    assert_int_equal(sb_parse_duration("5 s", &ns), -1);
    assert_int_equal(sb_parse_rate("2.5k", &r), 0);
    assert_true(r == 2500);
    assert_int_equal(sb_parse_ratio("1:10", &g, &s), 0);
    assert_int_equal(g * 100 + s, 110);
    assert_int_equal(sb_parse_ratio("0:0", &g, &s), -1);
    assert_int_equal(sb_parse_ratio("3", &g, &s), -1);
    assert_int_equal(sb_parse_cpu_list("1,3-5", cpus, 8), 4);
    assert_int_equal(cpus[3], 5);
    assert_int_equal(sb_parse_cpu_list("5-3", cpus, 8), -1);
}

static void test_refusals(void **state) {
    (void)state;
    static sb_run_cfg cfg;
    char err[256];
    const char *bad[] = {
        "x -n 100000 --key-size 4",             /* keys do not fit */
        "x --class name=a,bogus=1",             /* unknown class key */
        "x --class name=a --class name=a",      /* duplicate name */
        "x --class name=a --class name=b,tag=a", /* one key letter for two classes */
        "x --class name=a,tag=A",               /* not a lowercase letter */
        "x --class name=a,tag=ab",              /* not one letter */
        "x -d 0",                               /* never ends */
        "x --distribution zipf:0",              /* s must be > 0 */
        "x extra",                              /* stray argument */
        "x -c",                                 /* missing value */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char line[256];
        strcpy(line, bad[i]);
        err[0] = '\0';
        assert_int_equal(parse(&cfg, line, err, sizeof(err)), -1);
        assert_true(err[0] != '\0');
    }
}

static void test_help_documents_every_option(void **state) {
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sb_config_help(f);
    fclose(f);
    int n = 0;
    for (const char *name; (name = sb_config_long_option(n)) != NULL; n++) {
        char want[64];
        snprintf(want, sizeof(want), "--%s", name);
        if (!strstr(text, want)) fail_msg("--help does not mention %s", want);
    }
    assert_true(n >= 20);
    /* and the short valkey-lab flags */
    const char *shorts[] = {"-h,", "-p,", "-c,", "-P,", "-t,", "-n,", "-r,", "-s,", "-d,", "-q,"};
    for (size_t i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++) assert_non_null(strstr(text, shorts[i]));
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valkey_lab_get_pass), cmocka_unit_test(test_classes),
        cmocka_unit_test(test_value_parsers), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_help_documents_every_option),
    };
    return cmocka_run_group_tests_name("soloist-bench config", tests, NULL, NULL);
}
