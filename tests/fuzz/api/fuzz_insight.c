/*
 * fuzz_insight.c - libFuzzer target for insight queries
 * (services/api/insights): any bytes a client could send as an endpoint's
 * query node, with any run variables. Whatever plans must compile: every
 * HogQL text a plan hands out parses and prints for both stores with its
 * values bound (a failure there is our bug, not the user's), and a plan
 * fed rows (two ranked keys past a limit, then buckets) answers.
 *
 * Input: the query node's JSON; an optional second part after a NUL byte
 * is the run's variables object.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insights/insights.h"

static const char *const rank_rows[2][2] = {{"a\x1f"
                                             "b",
                                             "3"},
                                            {"", "1"}};
static const char *const count_rows[2][3] = {{"0",
                                              "a\x1f"
                                              "b",
                                              "2"},
                                             {"1", "", "1.5"}};

static const char *rank_cell(const void *rows, size_t r, size_t c)
{
    (void)rows;
    return c < 2 ? rank_rows[r][c] : NULL;
}

static const char *count_cell(const void *rows, size_t r, size_t c)
{
    (void)rows;
    return c < 3 ? count_rows[r][c] : NULL;
}

/* Every query a plan hands out compiles for both stores. */
static void must_compile(const char *h, const char *const *names, const api_query_value_t *values,
                         size_t n, bool whole)
{
    cm_buf_t err = CM_BUF_INIT;
    for (int d = 0; d < 2; d++) {
        api_query_t *q = NULL;
        api_query_sql_t sql = {0};
        api_query_print_opts_t o = {.dialect = d ? API_QUERY_CLICKHOUSE : API_QUERY_SQLITE,
                                    .project_id = 4242,
                                    .var_names = (const char **)names,
                                    .var_values = values,
                                    .nvars = n,
                                    .limit = whole ? 0 : API_QUERY_MAX_ROWS,
                                    .whole = whole};
        cm_buf_reset(&err);
        if (api_query_parse(h, strlen(h), &q, &err) != 0 ||
            api_query_print(q, &o, &sql, &err) != 0) {
            /* a plan handed out HogQL the compiler refuses */
            fprintf(stderr, "refused: %.*s\n%s\n", (int)err.len, err.p, h);
            abort();
        }
        api_query_sql_free(&sql);
        api_query_free(q);
    }
    cm_buf_free(&err);
}

/* The materialized table's query (insights.h) compiles too, and a read's
 * key and codes are there for every query of the plan. */
static void table(cm_json_t query, cm_json_t vars, const cm_tzone_t *zone, int64_t now)
{
    cm_buf_t err = CM_BUF_INIT;
    const char *attr;
    api_insight_t *in = NULL;
    if (api_insight_plan(query, CM_JSON_NONE_VALUE, zone, now, (int)(now % 2), &in, &err, &attr) ==
        0) {
        const char *const *names;
        const api_query_value_t *values;
        size_t n;
        const char *h =
            api_insight_needs_first(in) ? NULL : api_insight_table(in, &names, &values, &n, &err);
        if (h != NULL)
            must_compile(h, names, values, n, true);
        api_insight_free(in);
    }
    in = NULL;
    cm_buf_reset(&err);
    if (api_insight_plan(query, vars, zone, now, (int)(now % 2), &in, &err, &attr) == 0) {
        cm_buf_t key = CM_BUF_INIT;
        api_insight_table_key(in, &key);
        const char *const *names;
        const api_query_value_t *values;
        size_t n;
        int map[4];
        if (api_insight_next(in, &names, &values, &n) != NULL) {
            api_insight_table_code(in, map);
            for (int i = 0; i < 4; i++)
                if (map[i] < 1 || map[i] > 4)
                    abort();
        }
        cm_buf_free(&key);
        api_insight_free(in);
    }
    cm_buf_free(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t qlen = nul ? (size_t)(nul - text) : size;
    cm_json_doc_t *doc = NULL, *vdoc = NULL;
    if (cm_json_parse(text, qlen, NULL, &doc, NULL) != 0)
        return 0;
    cm_json_t vars = CM_JSON_NONE_VALUE;
    if (nul && cm_json_parse(nul + 1, size - qlen - 1, NULL, &vdoc, NULL) == 0)
        vars = cm_json_root(vdoc);
    cm_buf_t err = CM_BUF_INIT;
    const char *attr;
    api_insight_t *in = NULL;
    /* 2024-03-31 12:00 UTC: a clock change in the zones below */
    int64_t now = 1711886400;
    cm_tzone_t *zone = size % 2 ? cm_tzone_open(CM_SLICE_LIT("Europe/Berlin")) : NULL;
    if (api_insight_plan(cm_json_root(doc), vars, zone, now, (int)(size % 3 == 0), &in, &err,
                         &attr) == 0) {
        const char *const *names;
        const api_query_value_t *values;
        size_t n, i = 0;
        for (const char *h; (h = api_insight_next(in, &names, &values, &n)) != NULL; i++) {
            must_compile(h, names, values, n, false);
            /* the plan is past its ranking once a query carries buckets */
            bool counting = strstr(h, " AS b, ") != NULL;
            if (api_insight_rows(in, NULL, 2, counting ? count_cell : rank_cell, &err) != 0)
                break; /* rows out of its range: refused, not a crash */
        }
        cm_buf_t out = CM_BUF_INIT;
        cm_json_writer_t w;
        cm_json_writer_init(&w, &out);
        api_insight_write(in, &w);
        cm_buf_free(&out);
        api_insight_free(in);
        table(cm_json_root(doc), vars, zone, now);
    }
    cm_tzone_free(zone);
    cm_buf_free(&err);
    cm_json_doc_free(doc);
    cm_json_doc_free(vdoc);
    return 0;
}
