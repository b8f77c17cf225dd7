/*
 * test_daterange.c - the insights' time axis (services/api/insights):
 * PostHog's relative and absolute dates in a zone, buckets across the
 * clock changes (23- and 25-hour days), the labels of days, hours, weeks
 * and months, the limits; and that what a TrendsQuery plans always
 * compiles, whatever its property keys and values hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cm/buf.h"
#include "cm/civil.h"
#include "cm/err.h"
#include "insights/insights_int.h"

static int64_t utc(int y, int m, int d, int h, int mi)
{
    return cm_days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60;
}

typedef struct {
    ins_range_t r;
    cm_tzone_t *z;
    int rc;
    cm_buf_t err;
} axis_t;

static int week_monday; /* the project's week start for axis() (0 Sunday) */

static axis_t axis(const char *zone, const char *from, const char *to, ins_interval_t iv,
                   int64_t now)
{
    axis_t a = {.err = CM_BUF_INIT};
    a.z = zone ? cm_tzone_open(cm_slice_from_cstr(zone)) : NULL;
    assert_true(zone == NULL || a.z != NULL);
    a.rc = api_insights__range(from ? cm_slice_from_cstr(from) : CM_SLICE_NULL,
                               to ? cm_slice_from_cstr(to) : CM_SLICE_NULL, iv, a.z, now,
                               week_monday, &a.r, &a.err);
    return a;
}

static void axis_free(axis_t *a)
{
    api_insights__range_free(&a->r);
    cm_tzone_free(a->z);
    cm_buf_free(&a->err);
}

static void expect_day(const axis_t *a, size_t i, const char *day, const char *label)
{
    cm_buf_t b = CM_BUF_INIT;
    api_insights__day(&a->r, i, &b);
    assert_string_equal(cm_buf_cstr(&b), day);
    cm_buf_reset(&b);
    api_insights__label(&a->r, i, &b);
    assert_string_equal(cm_buf_cstr(&b), label);
    cm_buf_free(&b);
}

static void test_relative_dates(void **state)
{
    (void)state;
    int64_t now = utc(2024, 4, 3, 12, 30);
    axis_t a = axis(NULL, NULL, NULL, INS_DAY, now); /* -7d to now: 8 days */
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.r.n, 8);
    expect_day(&a, 0, "2024-03-27", "27-Mar-2024");
    expect_day(&a, 7, "2024-04-03", "3-Apr-2024");
    assert_int_equal(a.r.begin, utc(2024, 3, 27, 0, 0));
    assert_int_equal(a.r.end, utc(2024, 4, 4, 0, 0));
    axis_free(&a);

    a = axis(NULL, "mStart", NULL, INS_DAY, now);
    assert_int_equal(a.r.n, 3);
    expect_day(&a, 0, "2024-04-01", "1-Apr-2024");
    axis_free(&a);

    /* a month back from the 31st is the end of February (leap year) */
    a = axis(NULL, "-1m", NULL, INS_MONTH, utc(2024, 3, 31, 9, 0));
    assert_int_equal(a.r.n, 2);
    expect_day(&a, 0, "2024-02-01", "Feb 2024");
    expect_day(&a, 1, "2024-03-01", "Mar 2024");
    assert_int_equal(a.r.begin, utc(2024, 2, 29, 0, 0));
    axis_free(&a);

    a = axis(NULL, "-3h", NULL, INS_HOUR, now);
    assert_int_equal(a.r.n, 4);
    expect_day(&a, 0, "2024-04-03 09:00:00", "3-Apr 09:00");
    assert_int_equal(a.r.end, utc(2024, 4, 3, 13, 0));
    axis_free(&a);

    a = axis(NULL, "-1y", "-1yEnd", INS_MONTH, now); /* a year ago, to the end of that year */
    assert_int_equal(a.rc, 0);
    expect_day(&a, 0, "2023-04-01", "Apr 2023");
    assert_int_equal(a.r.n, 9);
    axis_free(&a);

    /* "now" in the zone: 23:30 UTC on the 3rd is the 4th in Tokyo */
    a = axis("Asia/Tokyo", "dStart", NULL, INS_DAY, utc(2024, 4, 3, 23, 30));
    assert_int_equal(a.r.n, 1);
    expect_day(&a, 0, "2024-04-04", "4-Apr-2024");
    assert_int_equal(a.r.begin, utc(2024, 4, 3, 15, 0));
    axis_free(&a);
}

/* Europe/Berlin goes to summer time on 2024-03-31 (23 hours) and back on
 * 2024-10-27 (25 hours); the buckets are the zone's days either way. */
static void test_days_across_clock_changes(void **state)
{
    (void)state;
    axis_t a = axis("Europe/Berlin", "2024-03-30", "2024-04-01", INS_DAY, 0);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.r.n, 3);
    assert_int_equal(a.r.start[0], utc(2024, 3, 29, 23, 0));
    assert_int_equal(a.r.start[1], utc(2024, 3, 30, 23, 0));
    assert_int_equal(a.r.start[2] - a.r.start[1], 23 * 3600);
    assert_int_equal(a.r.start[3], utc(2024, 3, 31, 22, 0) + 86400);
    assert_int_equal(a.r.end, utc(2024, 4, 1, 22, 0));
    axis_free(&a);

    a = axis("Europe/Berlin", "2024-10-27", "2024-10-27", INS_DAY, 0);
    assert_int_equal(a.r.n, 1);
    assert_int_equal(a.r.start[1] - a.r.start[0], 25 * 3600);
    axis_free(&a);

    /* hourly: the repeated 02:00 of the fall is two buckets */
    a = axis("Europe/Berlin", "2024-10-27", "2024-10-27", INS_HOUR, 0);
    assert_int_equal(a.r.n, 25);
    expect_day(&a, 2, "2024-10-27 02:00:00", "27-Oct 02:00");
    expect_day(&a, 3, "2024-10-27 02:00:00", "27-Oct 02:00");
    expect_day(&a, 4, "2024-10-27 03:00:00", "27-Oct 03:00");
    axis_free(&a);

    /* an absolute time with an offset is that instant, seen in the zone */
    a = axis("Europe/Berlin", "2024-03-28T23:30:00+00:00", "2024-03-29", INS_DAY, 0);
    assert_int_equal(a.r.n, 1);
    expect_day(&a, 0, "2024-03-29", "29-Mar-2024");
    axis_free(&a);
}

static void test_week_labels(void **state)
{
    (void)state;
    axis_t a = axis(NULL, "2024-12-30", "2025-01-02", INS_WEEK, 0);
    assert_int_equal(a.r.n, 1);
    expect_day(&a, 0, "2024-12-29", "30-Dec-2024 \xe2\x80\x93 2-Jan-2025");
    axis_free(&a);
    a = axis(NULL, "2024-03-30", "2024-03-30", INS_WEEK, 0);
    expect_day(&a, 0, "2024-03-24", "30-Mar-2024");
    axis_free(&a);
    a = axis(NULL, "2024-04-07", "2024-04-20", INS_WEEK, 0);
    assert_int_equal(a.r.n, 2);
    expect_day(&a, 0, "2024-04-07",
               "7\xe2\x80\x93"
               "13 Apr");
    expect_day(&a, 1, "2024-04-14",
               "14\xe2\x80\x93"
               "20 Apr");
    axis_free(&a);
    /* a project whose weeks start on Monday (week_start_day 1) */
    week_monday = 1;
    a = axis("Europe/Berlin", "2024-04-07", "2024-04-20", INS_WEEK, 0);
    assert_int_equal(a.r.n, 3);
    expect_day(&a, 0, "2024-04-01", "7-Apr-2024");
    expect_day(&a, 1, "2024-04-08",
               "8\xe2\x80\x93"
               "14 Apr");
    axis_free(&a);
    week_monday = 0;
}

static void test_refusals(void **state)
{
    (void)state;
    const char *bad[][2] = {{"yesterday", NULL}, {"2024-02-30", NULL},
                            {"-7x", NULL},       {"2024-03-01", "2024-02-01"},
                            {"all", NULL},       {"-7dStartish", NULL}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        axis_t a = axis(NULL, bad[i][0], bad[i][1], INS_DAY, utc(2024, 4, 3, 0, 0));
        assert_int_equal(a.rc, CM_EINVAL);
        assert_true(a.err.len > 0);
        axis_free(&a);
    }
    axis_t a = axis(NULL, "-1y", NULL, INS_HOUR, utc(2024, 4, 3, 0, 0));
    assert_int_equal(a.rc, CM_EINVAL);
    assert_non_null(strstr(cm_buf_cstr(&a.err), "more than 5000 hours"));
    axis_free(&a);
}

/* Two ranked breakdown keys (past the limit of one: Other is used). */
static const char *const ranked[2][2] = {{"x'y\x1f\\z", "9"}, {"\x1f", "1"}};

static const char *ranked_cell(const void *rows, size_t r, size_t c)
{
    (void)rows;
    return ranked[r][c];
}

/* Whatever a filter's key or value holds, the plan's HogQL compiles: keys
 * are quoted identifiers, values bound variables. */
static void test_plans_always_compile(void **state)
{
    (void)state;
    const char *q =
        "{\"kind\":\"TrendsQuery\",\"dateRange\":{\"date_from\":\"2024-03-01\",\"date_to\":"
        "\"2024-03-03\"},\"series\":[{\"kind\":\"EventsNode\",\"event\":\"a'b\\\\c\","
        "\"properties\":[{\"key\":\"we`ird\\\\ key\\n\",\"value\":\"x' OR 1=1 --\","
        "\"type\":\"person\"},{\"key\":\"n\",\"value\":[1,\"2\",true],\"operator\":\"is_not\"},"
        "{\"key\":\"p\",\"value\":\"3.5\",\"operator\":\"lte\"},{\"key\":\"s\",\"value\":\"%_\","
        "\"operator\":\"not_icontains\"}]},{\"kind\":\"EventsNode\",\"math\":\"avg\","
        "\"math_property\":\"pr`ice\"}],\"properties\":{\"type\":\"OR\",\"values\":[{\"type\":"
        "\"AND\",\"values\":[{\"key\":\"k\",\"operator\":\"is_set\"}]}]},\"breakdownFilter\":{"
        "\"breakdown_limit\":1,\"breakdowns\":[{\"property\":\"b`1\"},{\"property\":\"b2\","
        "\"type\":\"person\"}]}}";
    cm_json_doc_t *doc;
    assert_int_equal(cm_json_parse(q, strlen(q), NULL, &doc, NULL), 0);
    api_insight_t *in;
    cm_buf_t err = CM_BUF_INIT;
    const char *attr;
    int rc = api_insight_plan(cm_json_root(doc), CM_JSON_NONE_VALUE, NULL, 0, 0, &in, &err, &attr);
    if (rc != 0)
        fail_msg("%s", cm_buf_cstr(&err));
    const char *const *names;
    const api_query_value_t *values;
    size_t n, queries = 0;
    for (const char *h; (h = api_insight_next(in, &names, &values, &n)) != NULL; queries++) {
        api_query_t *aq = NULL;
        api_query_sql_t sql = {0};
        api_query_print_opts_t o = {.dialect =
                                        queries % 2 ? API_QUERY_CLICKHOUSE : API_QUERY_SQLITE,
                                    .project_id = 1,
                                    .var_names = (const char **)names,
                                    .var_values = values,
                                    .nvars = n,
                                    .limit = API_QUERY_MAX_ROWS};
        if (api_query_parse(h, strlen(h), &aq, &err) != 0 ||
            api_query_print(aq, &o, &sql, &err) != 0)
            fail_msg("%s: %s", cm_buf_cstr(&err), h);
        /* no value is in the text the compiler read */
        assert_null(strstr(h, "OR 1=1"));
        api_query_sql_free(&sql);
        api_query_free(aq);
        assert_int_equal(api_insight_rows(in, NULL, queries < 2 ? 2 : 0, ranked_cell, &err), 0);
        if (queries >= 2) /* the kept key is a bound value too */
            assert_null(strstr(h, "x'y"));
    }
    assert_int_equal(queries, 4); /* two series: ranked, then counted */
    assert_true(api_insight_has_more(in));
    api_insight_free(in);
    cm_buf_free(&err);
    cm_json_doc_free(doc);
}

/* A plan's answer cells (0, or the plan's refusal into err). */
static int plan_of(const char *q, cm_buf_t *err)
{
    cm_json_doc_t *doc;
    assert_int_equal(cm_json_parse(q, strlen(q), NULL, &doc, NULL), 0);
    api_insight_t *in = NULL;
    const char *attr;
    int rc = api_insight_plan(cm_json_root(doc), CM_JSON_NONE_VALUE, NULL, utc(2024, 4, 3, 12, 0),
                              0, &in, err, &attr);
    api_insight_free(in);
    cm_json_doc_free(doc);
    return rc;
}

/* Buckets x breakdown values (and Other) x series past the answer-row cap
 * are refused by the plan, before any query; at the cap they are not. */
static void test_answer_cells_capped(void **state)
{
    (void)state;
    cm_buf_t err = CM_BUF_INIT;
    /* 24 hours x 2001 values = 48,024: planned */
    assert_int_equal(
        plan_of("{\"kind\":\"TrendsQuery\",\"interval\":\"hour\",\"dateRange\":{\"date_from\":"
                "\"2024-04-02\",\"date_to\":\"2024-04-02\"},\"series\":[{\"kind\":\"EventsNode\"}],"
                "\"breakdownFilter\":{\"breakdown\":\"b\",\"breakdown_limit\":2000}}",
                &err),
        0);
    /* two series of it: 96,048 */
    assert_int_equal(
        plan_of("{\"kind\":\"TrendsQuery\",\"interval\":\"hour\",\"dateRange\":{\"date_from\":"
                "\"2024-04-02\",\"date_to\":\"2024-04-02\"},\"series\":[{\"kind\":\"EventsNode\"},"
                "{\"kind\":\"EventsNode\"}],\"breakdownFilter\":{\"breakdown\":\"b\","
                "\"breakdown_limit\":2000}}",
                &err),
        CM_EINVAL);
    assert_non_null(strstr(cm_buf_cstr(&err),
                           "would answer 96048 values (24 hourly buckets x "
                           "2001 breakdown values x 2 series), more than 50000"));
    /* the issue's: 208 days of hours by 10,000 values */
    cm_buf_reset(&err);
    assert_int_equal(
        plan_of("{\"kind\":\"TrendsQuery\",\"interval\":\"hour\",\"dateRange\":{\"date_from\":"
                "\"-208d\"},\"series\":[{\"kind\":\"EventsNode\"}],\"breakdownFilter\":{"
                "\"breakdown\":\"$browser\",\"breakdown_limit\":10000}}",
                &err),
        CM_EINVAL);
    assert_non_null(strstr(cm_buf_cstr(&err), "x 10001 breakdown values x 1 series"));
    /* retention: 120 intervals' triangle (7,260) x 10 values; 30 x 100 fits (46,500) */
    cm_buf_reset(&err);
    assert_int_equal(plan_of("{\"kind\":\"RetentionQuery\",\"retentionFilter\":{"
                             "\"totalIntervals\":120},\"breakdownFilter\":{\"breakdown\":\"b\","
                             "\"breakdown_limit\":10}}",
                             &err),
                     CM_EINVAL);
    assert_non_null(strstr(cm_buf_cstr(&err), "would answer 72600 values"));
    cm_buf_reset(&err);
    assert_int_equal(plan_of("{\"kind\":\"RetentionQuery\",\"retentionFilter\":{"
                             "\"totalIntervals\":30},\"breakdownFilter\":{\"breakdown\":\"b\","
                             "\"breakdown_limit\":100}}",
                             &err),
                     0);
    cm_buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relative_dates),
        cmocka_unit_test(test_days_across_clock_changes),
        cmocka_unit_test(test_week_labels),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_plans_always_compile),
        cmocka_unit_test(test_answer_cells_capped),
    };
    return cmocka_run_group_tests_name("insights", tests, NULL, NULL);
}
