/*
 * insight.c - insights.h's entry points: one plan per query kind
 * (trends.c, retention.c), behind the same calls.
 */
#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "insights/insights_int.h"

typedef enum { KIND_NONE, KIND_TRENDS, KIND_RETENTION } kind_t;

struct api_insight {
    kind_t kind;
    ins_trends_t *trends;
    ins_retention_t *retention;
};

static kind_t kind_of(cm_json_t query)
{
    cm_json_t k = cm_json_get(query, "kind");
    if (cm_json_str_eq(k, CM_SLICE_LIT("TrendsQuery")))
        return KIND_TRENDS;
    if (cm_json_str_eq(k, CM_SLICE_LIT("RetentionQuery")))
        return KIND_RETENTION;
    return KIND_NONE;
}

bool api_insight_kind(cm_json_t query)
{
    return kind_of(query) != KIND_NONE;
}

int api_insight_plan(cm_json_t query, cm_json_t vars, const cm_tzone_t *zone, int64_t now_s,
                     int week_start, api_insight_t **out, cm_buf_t *err, const char **attr)
{
    api_insight_t *in = cm_xcalloc(1, sizeof(*in));
    in->kind = kind_of(query);
    int rc = CM_EINVAL;
    *attr = "query";
    if (in->kind == KIND_TRENDS)
        rc = api_insights__trends_plan(query, vars, zone, now_s, week_start == 1, &in->trends, err,
                                       attr);
    else if (in->kind == KIND_RETENTION)
        rc = api_insights__retention_plan(query, vars, zone, now_s, week_start == 1, &in->retention,
                                          err, attr);
    else
        cm_buf_appendf(err, "Not an insight query: TrendsQuery or RetentionQuery");
    if (rc != 0) {
        free(in);
        return CM_EINVAL;
    }
    *out = in;
    return 0;
}

void api_insight_free(api_insight_t *in)
{
    if (!in)
        return;
    api_insights__trends_free(in->trends);
    api_insights__retention_free(in->retention);
    free(in);
}

size_t api_insight_variables(cm_json_t query, cm_slice_t *names, size_t max)
{
    switch (kind_of(query)) {
    case KIND_TRENDS: return api_insights__trends_variables(query, names, max);
    case KIND_RETENTION: return api_insights__retention_variables(query, names, max);
    default: return 0;
    }
}

const char *api_insight_next(api_insight_t *in, const char *const **names,
                             const api_query_value_t **values, size_t *nvalues)
{
    if (in->kind == KIND_TRENDS)
        return api_insights__trends_next(in->trends, names, values, nvalues);
    return api_insights__retention_next(in->retention, names, values, nvalues);
}

int api_insight_rows(api_insight_t *in, const void *rows, size_t nrows, api_insight_cell_fn cell,
                     cm_buf_t *err)
{
    if (in->kind == KIND_TRENDS)
        return api_insights__trends_rows(in->trends, rows, nrows, cell, err);
    return api_insights__retention_rows(in->retention, rows, nrows, cell, err);
}

void api_insight_write(const api_insight_t *in, cm_json_writer_t *w)
{
    if (in->kind == KIND_TRENDS)
        api_insights__trends_write(in->trends, w);
    else
        api_insights__retention_write(in->retention, w);
}

bool api_insight_has_more(const api_insight_t *in)
{
    return in->kind == KIND_TRENDS ? api_insights__trends_has_more(in->trends)
                                   : api_insights__retention_has_more(in->retention);
}

/* ---- materialization ---- */

bool api_insight_needs_first(const api_insight_t *in)
{
    return in->kind == KIND_TRENDS && api_insights__trends_needs_first(in->trends);
}

const char *api_insight_table(api_insight_t *in, const char *const **names,
                              const api_query_value_t **values, size_t *nvalues, cm_buf_t *err)
{
    const ins_sql_t *q = NULL;
    int rc = in->kind == KIND_TRENDS ? api_insights__trends_table(in->trends, &q, err)
                                     : api_insights__retention_table(in->retention, &q, err);
    if (rc != 0)
        return NULL;
    *names = (const char *const *)q->names;
    *values = q->values;
    *nvalues = q->n;
    return cm_buf_cstr(&((ins_sql_t *)q)->sql);
}

const char *api_insight_first_day(const api_insight_t *in)
{
    return in->kind == KIND_TRENDS ? api_insights__trends_first_day(in->trends) : NULL;
}

int api_insight_table_code(const api_insight_t *in, int map[4])
{
    return in->kind == KIND_TRENDS ? api_insights__trends_code(in->trends, map)
                                   : api_insights__retention_code(in->retention, map);
}

bool api_insight_table_key(const api_insight_t *in, cm_buf_t *key)
{
    return in->kind == KIND_TRENDS ? api_insights__trends_key(in->trends, key)
                                   : api_insights__retention_key(in->retention, key);
}

char *api_insights__str_dup(cm_json_t v)
{
    cm_buf_t b = CM_BUF_INIT;
    if (cm_json_type(v) != CM_JSON_STRING || cm_json_str_append(v, &b) != 0) {
        cm_buf_free(&b);
        return NULL;
    }
    char *s = cm_xstrdup(cm_buf_cstr(&b));
    cm_buf_free(&b);
    return s;
}
