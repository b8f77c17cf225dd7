/* test_metrics.c - registry handles, histogram buckets, Prometheus text rendering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/metrics.h"

static char *render(const cm_metrics_t *m, cm_buf_t *b)
{
    cm_buf_reset(b);
    cm_metrics_render(m, b);
    return cm_buf_cstr(b);
}

static void test_render_small_registry(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    cm_counter_t *ok = cm_metrics_counter(m, "http_requests_total", "Requests served.",
                                          "route=\"capture\",status=\"200\"");
    cm_gauge_t *conns = cm_metrics_gauge(m, "open_connections", "Open client connections.", NULL);
    cm_counter_t *bad = cm_metrics_counter(m, "http_requests_total", "ignored on reuse",
                                           "route=\"capture\",status=\"400\"");
    cm_counter_add(ok, 41);
    cm_counter_inc(ok);
    cm_counter_inc(bad);
    cm_gauge_set(conns, 3);
    cm_gauge_add(conns, -0.5);

    cm_buf_t b = CM_BUF_INIT;
    assert_string_equal(render(m, &b), "# HELP http_requests_total Requests served.\n"
                                       "# TYPE http_requests_total counter\n"
                                       "http_requests_total{route=\"capture\",status=\"200\"} 42\n"
                                       "http_requests_total{route=\"capture\",status=\"400\"} 1\n"
                                       "# HELP open_connections Open client connections.\n"
                                       "# TYPE open_connections gauge\n"
                                       "open_connections 2.5\n");
    cm_buf_free(&b);
    cm_metrics_free(m);
}

/* A counter kept elsewhere: fractional, set rather than added, TYPE counter. */
static void test_counter_set(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    cm_gauge_t *cpu = cm_metrics_counter_set(m, "process_cpu_seconds_total", "CPU.", NULL);
    cm_gauge_set(cpu, 1.25);
    assert_ptr_equal(cpu, cm_metrics_counter_set(m, "process_cpu_seconds_total", NULL, NULL));
    cm_buf_t b = CM_BUF_INIT;
    assert_string_equal(render(m, &b), "# HELP process_cpu_seconds_total CPU.\n"
                                       "# TYPE process_cpu_seconds_total counter\n"
                                       "process_cpu_seconds_total 1.25\n");
    cm_buf_free(&b);
    cm_metrics_free(m);
}

static void test_histogram_render(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    const double bounds[] = {0.1, 0.5, 1};
    cm_histogram_t *h =
        cm_metrics_histogram(m, "req_seconds", "Latency.", "route=\"e\"", bounds, 3);
    cm_histogram_t *plain = cm_metrics_histogram(m, "req_seconds", NULL, NULL, bounds, 3);
    cm_histogram_observe(h, 0.05); /* bucket 0.1 */
    cm_histogram_observe(h, 0.1);  /* le is inclusive: bucket 0.1 */
    cm_histogram_observe(h, 0.3);  /* bucket 0.5 */
    cm_histogram_observe(h, 2);    /* only +Inf */
    cm_histogram_observe(plain, 1);

    cm_buf_t b = CM_BUF_INIT;
    assert_string_equal(render(m, &b), "# HELP req_seconds Latency.\n"
                                       "# TYPE req_seconds histogram\n"
                                       "req_seconds_bucket{route=\"e\",le=\"0.1\"} 2\n"
                                       "req_seconds_bucket{route=\"e\",le=\"0.5\"} 3\n"
                                       "req_seconds_bucket{route=\"e\",le=\"1\"} 3\n"
                                       "req_seconds_bucket{route=\"e\",le=\"+Inf\"} 4\n"
                                       "req_seconds_sum{route=\"e\"} 2.45\n"
                                       "req_seconds_count{route=\"e\"} 4\n"
                                       "req_seconds_bucket{le=\"0.1\"} 0\n"
                                       "req_seconds_bucket{le=\"0.5\"} 0\n"
                                       "req_seconds_bucket{le=\"1\"} 1\n"
                                       "req_seconds_bucket{le=\"+Inf\"} 1\n"
                                       "req_seconds_sum 1\n"
                                       "req_seconds_count 1\n");
    cm_buf_free(&b);
    cm_metrics_free(m);
}

static void test_histogram_bucket_math(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    cm_histogram_t *h = cm_metrics_histogram(m, "lat", "x", NULL, cm_metrics_latency_buckets,
                                             cm_metrics_latency_nbuckets);
    /* 1000 observations 0.000..0.999 ms .. s: i/1000 seconds. */
    for (int i = 0; i < 1000; i++)
        cm_histogram_observe(h, i / 1000.0);
    cm_histogram_observe(h, 100);
    cm_buf_t b = CM_BUF_INIT;
    const char *t = render(m, &b);
    /* Values <= bound: i/1000 <= 0.0005 -> i=0 only; <= 0.001 -> i=0,1; ... */
    assert_non_null(strstr(t, "lat_bucket{le=\"0.0005\"} 1\n"));
    assert_non_null(strstr(t, "lat_bucket{le=\"0.001\"} 2\n"));
    assert_non_null(strstr(t, "lat_bucket{le=\"0.0025\"} 3\n"));
    assert_non_null(strstr(t, "lat_bucket{le=\"0.005\"} 6\n"));
    assert_non_null(strstr(t, "lat_bucket{le=\"0.01\"} 11\n"));
    assert_non_null(strstr(t, "lat_bucket{le=\"0.5\"} 501\n"));
    assert_non_null(strstr(t, "lat_bucket{le=\"1\"} 1000\n"));
    assert_non_null(strstr(t, "lat_bucket{le=\"10\"} 1000\n"));
    assert_non_null(strstr(t, "lat_bucket{le=\"+Inf\"} 1001\n"));
    assert_non_null(strstr(t, "lat_count 1001\n"));
    assert_non_null(strstr(t, "lat_sum 599.5\n"));
    /* Buckets are cumulative: counts never decrease down the list. */
    unsigned long long prev = 0;
    int nb = 0;
    for (const char *p = strstr(t, "lat_bucket"); p; p = strstr(p + 1, "lat_bucket")) {
        unsigned long long v = strtoull(strchr(p, ' ') + 1, NULL, 10);
        assert_true(v >= prev);
        prev = v;
        nb++;
    }
    assert_int_equal(nb, 15);
    cm_buf_free(&b);
    cm_metrics_free(m);
}

static void test_latency_buckets(void **state)
{
    (void)state;
    const double want[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                           0.1,    0.25,  0.5,    1,     2.5,  5,     10};
    assert_int_equal(cm_metrics_latency_nbuckets, 14);
    for (size_t i = 0; i < 14; i++)
        assert_true(cm_metrics_latency_buckets[i] == want[i]);
}

static void test_handle_reuse(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    cm_counter_t *a = cm_metrics_counter(m, "c_total", "h", "k=\"1\"");
    cm_counter_t *none = cm_metrics_counter(m, "c_total", "h", NULL);
    assert_ptr_equal(cm_metrics_counter(m, "c_total", "h", "k=\"1\""), a);
    /* NULL and "" both mean "no labels". */
    assert_ptr_equal(cm_metrics_counter(m, "c_total", "h", ""), none);
    assert_ptr_not_equal(cm_metrics_counter(m, "c_total", "h", "k=\"2\""), a);
    /* Handles survive the registry growing well past its first allocation. */
    char labels[32];
    for (int i = 0; i < 200; i++) {
        snprintf(labels, sizeof(labels), "i=\"%d\"", i);
        cm_counter_add(cm_metrics_counter(m, "many_total", "h", labels), (uint64_t)i);
        snprintf(labels, sizeof(labels), "fam_%d", i);
        cm_gauge_set(cm_metrics_gauge(m, labels, "h", NULL), i);
    }
    cm_counter_add(a, 5);
    assert_int_equal(cm_counter_value(cm_metrics_counter(m, "c_total", "x", "k=\"1\"")), 5);
    assert_int_equal(cm_counter_value(cm_metrics_counter(m, "many_total", "h", "i=\"199\"")), 199);
    assert_true(cm_gauge_value(cm_metrics_gauge(m, "fam_150", "h", NULL)) == 150);

    const double bounds[] = {1, 2};
    cm_histogram_t *h = cm_metrics_histogram(m, "h_seconds", "h", NULL, bounds, 2);
    assert_ptr_equal(cm_metrics_histogram(m, "h_seconds", "h", NULL, bounds, 2), h);
    cm_metrics_free(m);
}

static void test_one_header_per_family(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    /* Interleaved registration still renders each family contiguously. */
    cm_counter_inc(cm_metrics_counter(m, "a_total", "A.", "x=\"1\""));
    cm_gauge_set(cm_metrics_gauge(m, "b", "B.", NULL), 1);
    cm_counter_inc(cm_metrics_counter(m, "a_total", "A.", "x=\"2\""));
    cm_buf_t b = CM_BUF_INIT;
    assert_string_equal(render(m, &b), "# HELP a_total A.\n"
                                       "# TYPE a_total counter\n"
                                       "a_total{x=\"1\"} 1\n"
                                       "a_total{x=\"2\"} 1\n"
                                       "# HELP b B.\n"
                                       "# TYPE b gauge\n"
                                       "b 1\n");
    cm_buf_free(&b);
    cm_metrics_free(m);
}

static void test_number_formats(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    const struct {
        double v;
        const char *text;
    } cases[] = {
        {0, "0"},
        {-0.25, "-0.25"},
        {0.1, "0.1"},
        {1e-05, "1e-05"},
        {100, "100"},
        {-3e14, "-300000000000000"},
        {1e21, "1e+21"},
        {123456789, "123456789"},
        {1.0 / 3, "0.3333333333333333"},
        {INFINITY, "+Inf"},
        {-INFINITY, "-Inf"},
        {NAN, "NaN"},
    };
    cm_buf_t b = CM_BUF_INIT;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cm_gauge_set(cm_metrics_gauge(m, "g", "G.", NULL), cases[i].v);
        char want[128];
        snprintf(want, sizeof(want), "\ng %s\n", cases[i].text);
        if (!strstr(render(m, &b), want))
            fail_msg("value %d: want %s in:\n%s", (int)i, cases[i].text, b.p);
    }
    cm_counter_add(cm_metrics_counter(m, "big_total", "B.", NULL), UINT64_MAX);
    assert_non_null(strstr(render(m, &b), "\nbig_total 18446744073709551615\n"));
    cm_buf_free(&b);
    cm_metrics_free(m);
}

static void test_help_escaping(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    cm_counter_inc(cm_metrics_counter(m, "e_total", "line1\nback\\slash \"q\"", NULL));
    cm_buf_t b = CM_BUF_INIT;
    assert_string_equal(render(m, &b), "# HELP e_total line1\\nback\\\\slash \"q\"\n"
                                       "# TYPE e_total counter\n"
                                       "e_total 1\n");
    cm_buf_free(&b);
    cm_metrics_free(m);
}

static void test_empty_registry(void **state)
{
    (void)state;
    cm_metrics_t *m = cm_metrics_new();
    cm_buf_t b = CM_BUF_INIT;
    assert_string_equal(render(m, &b), "");
    cm_buf_free(&b);
    cm_metrics_free(m);
    cm_metrics_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_small_registry), cmocka_unit_test(test_histogram_render),
        cmocka_unit_test(test_histogram_bucket_math), cmocka_unit_test(test_latency_buckets),
        cmocka_unit_test(test_handle_reuse),          cmocka_unit_test(test_one_header_per_family),
        cmocka_unit_test(test_number_formats),        cmocka_unit_test(test_help_escaping),
        cmocka_unit_test(test_empty_registry),        cmocka_unit_test(test_counter_set),
    };
    return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
