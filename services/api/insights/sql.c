/*
 * sql.c - what every insight's HogQL shares (see insights_int.h): a row's
 * time bucket as an expression, and the check that a planned query
 * compiles for every store.
 */
#include <stdio.h>

#include "cm/err.h"
#include "insights/insights_int.h"

/* A binary search over the buckets' starts as nested if()s: about log2(n)
 * comparisons a row on either store. */
static void bucket(cm_buf_t *b, const ins_range_t *r, const char *ts, size_t lo, size_t hi)
{
    if (lo == hi) {
        cm_buf_appendf(b, "%zu", lo);
        return;
    }
    size_t mid = (lo + hi + 1) / 2;
    char t[24];
    api_insights__utc_text(r->start[mid], t);
    cm_buf_appendf(b, "if(%s < toDateTime('%s'), ", ts, t);
    bucket(b, r, ts, lo, mid - 1);
    cm_buf_append_cstr(b, ", ");
    bucket(b, r, ts, mid, hi);
    cm_buf_append_cstr(b, ")");
}

void api_insights__bucket(cm_buf_t *b, const ins_range_t *r, const char *ts)
{
    bucket(b, r, ts, 0, r->n - 1);
}

int api_insights__compiles(const ins_sql_t *q, cm_buf_t *err)
{
    api_query_t *aq = NULL;
    if (api_query_parse(q->sql.p, q->sql.len, &aq, err) != 0)
        return CM_EINVAL;
    int rc = 0;
    /* SQLite, then ClickHouse by each version's rules (18.16, 21.8+, 24+) */
    for (int d = 0; rc == 0 && d < 4; d++) {
        api_query_sql_t sql = {0};
        api_query_print_opts_t o = {.dialect = d ? API_QUERY_CLICKHOUSE : API_QUERY_SQLITE,
                                    .clickhouse_version =
                                        d ? (api_query_ch_version_t)(d - 1) : API_QUERY_CH_1816,
                                    .project_id = 1,
                                    .var_names = (const char **)q->names,
                                    .var_values = q->values,
                                    .nvars = q->n,
                                    .limit = API_QUERY_MAX_ROWS};
        rc = api_query_print(aq, &o, &sql, err) == 0 ? 0 : CM_EINVAL;
        api_query_sql_free(&sql);
    }
    api_query_free(aq);
    return rc;
}
