/*
 * test_evstore_sqlite.c - the SQLite event store through its public API
 * (evstore_sqlite.c, evstore_quantile.c) over a real file in a fresh
 * directory: events written once (a redelivered uuid is not stored again),
 * read back with their columns and NULLs, a bad query answered with the
 * store's reason, and the HogQL functions its connections carry
 * (cm_quantile: ClickHouse's interpolation, NULLs skipped, NULL over no
 * values). Each test owns a loop and ends with uv_loop_close() == 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/err.h"
#include "cm/event_store.h"

typedef struct {
    uv_loop_t loop;
    cm_evstore_t *es;
    char dir[64];
} fx_t;

typedef struct {
    bool answered;
    int status;
    char err[256];
    size_t nrows, ncols, inserted;
    char cells[4][4][64]; /* the first rows and columns; "<null>" for NULL */
    char names[4][32];
} answer_t;

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    answer_t *a = ud;
    a->answered = true;
    a->status = status;
    snprintf(a->err, sizeof(a->err), "%s", err ? err : "");
    if (status != 0)
        return;
    a->nrows = cm_evstore_nrows(rows);
    a->ncols = cm_evstore_ncols(rows);
    for (size_t c = 0; c < a->ncols && c < 4; c++)
        snprintf(a->names[c], sizeof(a->names[c]), "%s", cm_evstore_colname(rows, c));
    for (size_t r = 0; r < a->nrows && r < 4; r++)
        for (size_t c = 0; c < a->ncols && c < 4; c++) {
            const char *v = cm_evstore_value(rows, r, c);
            snprintf(a->cells[r][c], sizeof(a->cells[r][c]), "%s", v ? v : "<null>");
        }
}

static void on_written(int status, const char *err, size_t inserted, void *ud)
{
    answer_t *a = ud;
    a->answered = true;
    a->status = status;
    a->inserted = inserted;
    snprintf(a->err, sizeof(a->err), "%s", err ? err : "");
}

static int fx_setup(void **state)
{
    fx_t *fx = calloc(1, sizeof(*fx));
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/cm-test-evsqlite.XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    char url[128];
    snprintf(url, sizeof(url), "sqlite:%s/events.db", fx->dir);
    assert_int_equal(uv_loop_init(&fx->loop), 0);
    assert_int_equal(cm_evstore_open(&fx->loop, &(cm_evstore_opts_t){.url = url}, &fx->es), CM_OK);
    assert_int_equal(cm_evstore_kind(fx->es), CM_EVSTORE_SQLITE);
    *state = fx;
    return 0;
}

static void on_closed(void *ud)
{
    *(bool *)ud = true;
}

static int fx_teardown(void **state)
{
    fx_t *fx = *state;
    bool closed = false;
    cm_evstore_close(fx->es, on_closed, &closed);
    while (!closed)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&fx->loop), 0);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
    free(fx);
    return 0;
}

static void query(fx_t *fx, const char *sql, answer_t *a)
{
    memset(a, 0, sizeof(*a));
    cm_evstore_query(fx->es, sql, on_rows, a);
    assert_false(a->answered); /* never from inside the call */
    while (!a->answered)
        uv_run(&fx->loop, UV_RUN_ONCE);
}

#define S(s) ((cm_slice_t){s, sizeof(s) - 1})

static void test_events_written_once_and_read(void **state)
{
    fx_t *fx = *state;
    cm_evstore_event_t ev[2] = {
        {.uuid = "0190e5a0-0000-7000-8000-000000000001",
         .project_id = 1,
         .event = S("$pageview"),
         .distinct_id = S("u1"),
         .person_id = "0190e5a0-0000-7000-8000-0000000000aa",
         .properties = S("{\"$browser\":\"Firefox\"}"),
         .person_properties = S("{}"),
         .timestamp_ms = 1764311070000,
         .created_at_ms = 1764311071000},
        {.uuid = "0190e5a0-0000-7000-8000-000000000002",
         .project_id = 1,
         .event = S("signup"),
         .distinct_id = S("u2"),
         .person_id = "0190e5a0-0000-7000-8000-0000000000bb",
         .properties = S("{}"),
         .person_properties = S("{}"),
         .timestamp_ms = 1764311080000,
         .created_at_ms = 1764311081000},
    };
    answer_t a = {0};
    cm_evstore_write(fx->es, &(cm_evstore_rows_in_t){.events = ev, .nevents = 2}, on_written, &a);
    while (!a.answered)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(a.status, 0);
    assert_int_equal(a.inserted, 2);
    a = (answer_t){0}; /* the same batch again: a redelivery */
    cm_evstore_write(fx->es, &(cm_evstore_rows_in_t){.events = ev, .nevents = 2}, on_written, &a);
    while (!a.answered)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(a.status, 0);
    assert_int_equal(a.inserted, 0);
    query(fx, "SELECT event, distinct_id, NULL AS absent FROM events ORDER BY event", &a);
    if (a.status != 0)
        fail_msg("%d %s", a.status, a.err);
    assert_int_equal(a.nrows, 2);
    assert_int_equal(a.ncols, 3);
    assert_string_equal(a.names[0], "event");
    assert_string_equal(a.names[2], "absent");
    assert_string_equal(a.cells[0][0], "$pageview");
    assert_string_equal(a.cells[0][1], "u1");
    assert_string_equal(a.cells[0][2], "<null>");
    assert_string_equal(a.cells[1][0], "signup");
    cm_buf_t why = CM_BUF_INIT;
    assert_true(cm_evstore_ready(fx->es, &why));
    cm_buf_free(&why);
}

static void test_bad_query_answers_why(void **state)
{
    fx_t *fx = *state;
    answer_t a;
    query(fx, "SELEC 1", &a);
    assert_int_not_equal(a.status, 0);
    assert_non_null(strstr(a.err, "syntax error"));
    query(fx, "SELECT no_such_column FROM events", &a);
    assert_int_not_equal(a.status, 0);
    assert_non_null(strstr(a.err, "no_such_column"));
    query(fx, "SELECT 1", &a); /* the store goes on */
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "1");
}

static void test_quantile(void **state)
{
    fx_t *fx = *state;
    static const struct {
        const char *level, *want;
    } cases[] = {
        {"0.9", "17.2"}, /* 6 + (20 - 6) * 0.8 */
        {"0.5", "6.0"},  {"0", "5.0"}, {"1", "20.0"}, {"0.25", "5.5"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char sql[200];
        snprintf(sql, sizeof(sql),
                 "SELECT round(cm_quantile(x, %s), 9) FROM (SELECT column1 AS x FROM"
                 " (VALUES (NULL), (20), (5), (6)))",
                 cases[i].level);
        answer_t a;
        query(fx, sql, &a);
        assert_int_equal(a.status, 0);
        assert_string_equal(a.cells[0][0], cases[i].want);
    }
    answer_t a;
    /* cm_quantile_exact: the value at floor(level * n), not interpolated */
    query(fx,
          "SELECT cm_quantile_exact(x, 0.5), cm_quantile_exact(x, 0), cm_quantile_exact(x, 1), "
          "cm_quantile_exact(x, 0.25) FROM (SELECT column1 AS x FROM"
          " (VALUES (4), (NULL), (1), (3), (2)))",
          &a);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "3.0");
    assert_string_equal(a.cells[0][1], "1.0");
    assert_string_equal(a.cells[0][2], "4.0");
    assert_string_equal(a.cells[0][3], "2.0");
    query(fx, "SELECT cm_quantile_exact(x, 0.5) FROM (SELECT 1 AS x) WHERE x > 1", &a);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "<null>");
    query(fx, "SELECT cm_quantile(x, 0.5) FROM (SELECT 1 AS x) WHERE x > 1", &a);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "<null>");
    /* per group, on the store's read connections too */
    query(fx,
          "SELECT g, cm_quantile(x, 0.5) FROM (SELECT column1 AS g, column2 AS x FROM"
          " (VALUES ('a', 1), ('a', 3), ('b', 10))) GROUP BY g ORDER BY g",
          &a);
    assert_int_equal(a.status, 0);
    assert_int_equal(a.nrows, 2);
    assert_string_equal(a.cells[0][1], "2.0");
    assert_string_equal(a.cells[1][1], "10.0");
}

/* cm_tz_local / cm_tz_utc / cm_add_months (evstore_tz.c): a zone's wall
 * clock either side of New York's spring-forward (2024-03-10 07:00 UTC). */
static void test_time_zones(void **state)
{
    fx_t *fx = *state;
    static const struct {
        const char *sql, *want;
    } cases[] = {
        {"SELECT cm_tz_local('2024-03-10 06:59:59', 'America/New_York')", "2024-03-10 01:59:59"},
        {"SELECT cm_tz_local('2024-03-10 07:00:00', 'America/New_York')", "2024-03-10 03:00:00"},
        {"SELECT cm_tz_local('2024-01-01 00:00:00', 'Asia/Kolkata')", "2024-01-01 05:30:00"},
        {"SELECT cm_tz_local('2024-01-01', 'Asia/Kolkata')", "2024-01-01 05:30:00"},
        {"SELECT cm_tz_utc('2024-03-10 00:00:00', 'America/New_York')", "2024-03-10 05:00:00"},
        {"SELECT cm_tz_utc('2024-03-11 00:00:00', 'America/New_York')", "2024-03-11 04:00:00"},
        /* a text that names its offset was an instant already */
        {"SELECT cm_tz_utc('2024-03-11 00:00:00', 'America/New_York', '2024-03-11T00:00:00Z')",
         "2024-03-11 00:00:00"},
        {"SELECT cm_tz_local('2024-03-10 07:00:00', 'Mars/Olympus')", "<null>"},
        {"SELECT cm_tz_local('not a time', 'UTC')", "<null>"},
        {"SELECT cm_tz_local(NULL, 'UTC')", "<null>"},
        {"SELECT cm_add_months('2024-01-31', 1)", "2024-02-29"},
        {"SELECT cm_add_months('2023-01-31 10:00:00', 1)", "2023-02-28 10:00:00"},
        {"SELECT cm_add_months('2024-03-31', -13)", "2023-02-28"},
        {"SELECT cm_add_months('2024-02-29', 12)", "2025-02-28"},
        {"SELECT cm_add_months('2024-02-29', 'x')", "<null>"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        answer_t a;
        query(fx, cases[i].sql, &a);
        assert_int_equal(a.status, 0);
        if (strcmp(a.cells[0][0], cases[i].want) != 0)
            fail_msg("%s: %s, want %s", cases[i].sql, a.cells[0][0], cases[i].want);
    }
}

/* cm_variance (evstore_stats.c): varPop 0, varSamp 1, stddevPop 2,
 * stddevSamp 3 over the non-NULL values; NULL where ClickHouse says nan.
 * The store's connections also carry libcommon's ClickHouse functions. */
static void test_variance(void **state)
{
    fx_t *fx = *state;
    answer_t a;
    query(fx,
          "SELECT round(cm_variance(x, 0), 9), round(cm_variance(x, 1), 9), "
          "round(cm_variance(x, 2), 9), round(cm_variance(x, 3), 9) FROM (SELECT column1 AS x "
          "FROM (VALUES (1), (NULL), (3), (4), (4)))",
          &a);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "1.5");
    assert_string_equal(a.cells[0][1], "2.0");
    assert_string_equal(a.cells[0][2], "1.224744871");
    assert_string_equal(a.cells[0][3], "1.414213562");
    /* one value: varPop 0, varSamp NULL; no values: NULL */
    query(fx, "SELECT cm_variance(7, 0), cm_variance(7, 1)", &a);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "0.0");
    assert_string_equal(a.cells[0][1], "<null>");
    query(fx, "SELECT cm_variance(x, 0) FROM (SELECT 1 AS x) WHERE x > 1", &a);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "<null>");
    /* covariance: pairs (1,2) (2,4) (3,7) and one with a NULL; corr of a
     * constant is NULL (ClickHouse's nan) */
    query(fx,
          "SELECT round(cm_covariance(x, y, 0), 9), round(cm_covariance(x, y, 1), 9), "
          "round(cm_covariance(x, y, 2), 9), cm_covariance(x, 5, 2) FROM (SELECT column1 AS x, "
          "column2 AS y FROM (VALUES (1, 2), (2, 4), (NULL, 9), (3, 7)))",
          &a);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "1.666666667"); /* mean 2, 13/3: (-1*-2.33+0+1*2.67)/3 */
    assert_string_equal(a.cells[0][1], "2.5");
    assert_string_equal(a.cells[0][2], "0.993399268");
    assert_string_equal(a.cells[0][3], "<null>");
    query(fx, "SELECT cm_argmax(x, y), cm_domain('http://h.io/p') FROM (SELECT 'a' AS x, 1 AS y)",
          &a);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.cells[0][0], "a");
    assert_string_equal(a.cells[0][1], "h.io");
}

/* cm_array_agg: json_group_array's items put in the stated order
 * (evstore_arrayfns.c): sorted, distinct and sorted, or the top n by count
 * then value; NULLs left out; strings by their bytes, escapes decoded. */
static void test_array_agg(void **state)
{
    fx_t *fx = *state;
    static const struct {
        const char *sql, *want;
    } cases[] = {
        {"SELECT cm_array_agg('[3,1,null,2,1]', 'a', NULL)", "[1,1,2,3]"},
        {"SELECT cm_array_agg('[3,1,null,2,1]', 'u', NULL)", "[1,2,3]"},
        {"SELECT cm_array_agg('[\"b\",\"a\",\"b\",\"c\",\"a\",\"b\"]', 'k', 2)", "[\"b\",\"a\"]"},
        {"SELECT cm_array_agg('[\"z\",\"y\"]', 'k', 5)", "[\"y\",\"z\"]"}, /* ties by value */
        {"SELECT cm_array_agg('[\"b\",\"\\\"q\",\"a\"]', 'a', NULL)", /* '"' sorts before 'a' */
         "[\"\\\"q\",\"a\",\"b\"]"},
        {"SELECT cm_array_agg('[2.5,-1,10]', 'a', NULL)", "[-1,2.5,10]"},
        {"SELECT cm_array_agg('[]', 'a', NULL)", "[]"},
        {"SELECT cm_array_agg(NULL, 'u', NULL)", "[]"},
        {"SELECT cm_array_agg(json_group_array(x), 'a', NULL) FROM (SELECT 'b' AS x UNION ALL "
         "SELECT 'a' UNION ALL SELECT NULL)",
         "[\"a\",\"b\"]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        answer_t a;
        query(fx, cases[i].sql, &a);
        assert_int_equal(a.status, 0);
        if (strcmp(a.cells[0][0], cases[i].want) != 0)
            fail_msg("%s: %s, want %s", cases[i].sql, a.cells[0][0], cases[i].want);
    }
    answer_t a;
    query(fx, "SELECT cm_array_agg('[1, [2]]', 'a', NULL)", &a); /* not a list of scalars */
    assert_int_not_equal(a.status, 0);
}

/* cm_sum_map (evstore_summap.c): sumMap's answer from every row's two
 * arrays: keys sorted, sums in row order, zero sums dropped, Int64 wrap. */
static void test_sum_map(void **state)
{
    fx_t *fx = *state;
    static const struct {
        const char *sql, *want;
    } cases[] = {
        {"SELECT cm_sum_map('[[[1,2],[10,20]],[[2,3],[5,7]]]')", "[[1,2,3],[10,25,7]]"},
        {"SELECT cm_sum_map('[[[1,2],[10,-10]],[[2],[10]]]')", "[[1],[10]]"},
        {"SELECT cm_sum_map('[[[1],[0.5]],[[1],[0.25]]]')", "[[1],[0.75]]"},
        {"SELECT cm_sum_map('[[[\"b\",\"a\"],[1,2]],[[\"a\"],[1]]]')", "[[\"a\",\"b\"],[3,1]]"},
        {"SELECT cm_sum_map('[[null,null],[[-1],[1]]]')", "[[-1],[1]]"},
        {"SELECT cm_sum_map('[[[1,1],[9223372036854775807,1]]]')", "[[1],[-9223372036854775808]]"},
        {"SELECT cm_sum_map(NULL)", "[[],[]]"},
        {"SELECT cm_sum_map('[]')", "[[],[]]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        answer_t a;
        query(fx, cases[i].sql, &a);
        assert_int_equal(a.status, 0);
        if (strcmp(a.cells[0][0], cases[i].want) != 0)
            fail_msg("%s: %s, want %s", cases[i].sql, a.cells[0][0], cases[i].want);
    }
    static const char *const bad[] = {
        "SELECT cm_sum_map('[[[1,2],[1]]]')", /* lengths differ: ClickHouse fails too */
        "SELECT cm_sum_map('[[[1],[\"x\"]]]')", "SELECT cm_sum_map('[[[1.5],[1]]]')",
        "SELECT cm_sum_map('not json')",        "SELECT cm_sum_map('[1]')",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        answer_t a;
        query(fx, bad[i], &a);
        if (a.status == 0)
            fail_msg("%s: answered %s", bad[i], a.cells[0][0]);
    }
}

/* cm_split (evstore_arrayfns.c): ClickHouse 18.16's own answers for
 * splitByString / splitByChar, read from its server. */
static void test_split(void **state)
{
    fx_t *fx = *state;
    static const struct {
        const char *sql, *want;
    } cases[] = {
        {"SELECT cm_split(',', '')", "[\"\"]"},
        {"SELECT cm_split(', ', 'a, b,, c')", "[\"a\",\"b,\",\"c\"]"},
        {"SELECT cm_split(',', ',a,')", "[\"\",\"a\",\"\"]"},
        {"SELECT cm_split('ab', 'xabyab')", "[\"x\",\"y\",\"\"]"},
        {"SELECT cm_split('/', 'it''s \"q\"/\\')", "[\"it's \\\"q\\\"\",\"\\\\\"]"},
        {"SELECT cm_split(',', NULL)", "<null>"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        answer_t a;
        query(fx, cases[i].sql, &a);
        assert_int_equal(a.status, 0);
        if (strcmp(a.cells[0][0], cases[i].want) != 0)
            fail_msg("%s: %s, want %s", cases[i].sql, a.cells[0][0], cases[i].want);
    }
    answer_t a;
    query(fx, "SELECT cm_split('', 'abc')", &a); /* refused by the compiler; never answered */
    assert_int_not_equal(a.status, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_events_written_once_and_read, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_query_answers_why, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_quantile, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_time_zones, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_variance, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_array_agg, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_split, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_sum_map, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
