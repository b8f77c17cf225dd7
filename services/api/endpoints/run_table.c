/*
 * run_table.c - a HogQL endpoint run from its materialized
 * table (docs/endpoints.md, Materialization): the table has the query's
 * columns and one per variable (a range variable's by day); the read
 * filters by the values (c = v; a range: the day column against the
 * value's day) and, with a range variable, aggregates again over the days
 * (sum of counts and sums, min, max). Every variable must be given: the
 * table holds every value's rows. If the store refuses the read (the
 * table went away), the run goes on inline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "query/query.h"
#include "query/table.h"
#include "endpoints/endpoints_int.h"
#include "http/admit.h"

#define READ_TIMEOUT_MS api_query_timeout_ms(call) /* QUERY_TIMEOUT */

typedef struct {
    api_call_t *call;
    api_endpoints__mat_read_t how;
    void (*fallback)(api_call_t *call);
    cm_json_doc_t *info;
    char **params;
    char *types;
    size_t nparams;
    char **col_names, **col_types;
    size_t ncols;
    int64_t limit, offset; /* the page */
} mread_t;

static void mread_free(mread_t *m)
{
    for (size_t i = 0; i < m->nparams; i++)
        free(m->params[i]);
    free(m->params);
    free(m->types);
    for (size_t i = 0; m->col_names && i < m->ncols; i++) {
        free(m->col_names[i]);
        free(m->col_types[i]);
    }
    free(m->col_names);
    free(m->col_types);
    cm_json_doc_free(m->info);
    free(m);
}

static char *text_of(cm_json_t v)
{
    cm_buf_t b = CM_BUF_INIT;
    if (cm_json_str_append(v, &b) != 0)
        cm_buf_reset(&b);
    char *s = cm_xstrdup(cm_buf_cstr(&b));
    cm_buf_free(&b);
    return s;
}

static const api_query_value_t *bound(const api_endpoints__mat_read_t *h, cm_slice_t code)
{
    for (size_t i = 0; i < h->nvars; i++)
        if (cm_slice_eq_cstr(code, h->names[i]))
            return &h->values[i];
    return NULL;
}

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    mread_t *m = ud;
    api_call_t *call = m->call;
    if (status != 0) { /* the table is gone or the store away: the query itself */
        cm_log(CM_LOG_WARN, NULL, "materialized read of %s: %s; running the query", m->how.table,
               err ? err : "");
        void (*fallback)(api_call_t *) = m->fallback;
        mread_free(m);
        fallback(call);
        return;
    }
    size_t n = cm_evstore_nrows(rows);
    bool more = n > (size_t)m->limit;
    if (more)
        n = (size_t)m->limit;
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "results");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < n; i++) {
        cm_json_begin_array(&w);
        for (size_t c = 0; c < m->ncols && c < cm_evstore_ncols(rows); c++)
            api_endpoints__write_value(&w, m->col_types[c], cm_evstore_value(rows, i, c));
        cm_json_end_array(&w);
    }
    cm_json_end_array(&w);
    cm_json_key(&w, "columns");
    cm_json_begin_array(&w);
    for (size_t c = 0; c < m->ncols; c++)
        cm_json_str_cstr(&w, m->col_names[c]);
    cm_json_end_array(&w);
    cm_json_key(&w, "types");
    cm_json_begin_array(&w);
    for (size_t c = 0; c < m->ncols; c++) {
        cm_json_begin_array(&w);
        cm_json_str_cstr(&w, m->col_names[c]);
        cm_json_str_cstr(&w, m->col_types[c]);
        cm_json_end_array(&w);
    }
    cm_json_end_array(&w);
    cm_json_key(&w, "hasMore");
    cm_json_boolean(&w, more);
    cm_json_key(&w, "limit");
    cm_json_int(&w, m->limit);
    cm_json_key(&w, "offset");
    cm_json_int(&w, m->offset);
    cm_json_key(&w, "is_cached");
    cm_json_boolean(&w, false);
    cm_json_key(&w, "last_refresh");
    api_json_time(&w, m->how.at);
    cm_json_key(&w, "cache_target_age");
    cm_json_int(&w, m->how.cache_age);
    cm_json_key(&w, "timezone");
    cm_json_str_cstr(&w, "UTC");
    cm_json_key(&w, "endpoint_version");
    cm_json_int(&w, m->how.version_n);
    cm_json_key(&w, "endpoint_version_created_at");
    api_json_time(&w, m->how.version_created);
    cm_json_key(&w, "endpoint_materialized");
    cm_json_boolean(&w, true);
    cm_json_key(&w, "endpoint_materialized_at");
    api_json_time(&w, m->how.at);
    cm_json_end_object(&w);
    mread_free(m);
    api_respond_json(call, 200, &b);
}

void api_endpoints__run_materialized(api_call_t *call, const api_endpoints__mat_read_t *how,
                                     void (*fallback)(api_call_t *call))
{
    mread_t *m = cm_xcalloc(1, sizeof(*m));
    m->call = call;
    m->how = *how;
    m->fallback = fallback;
    if (how->info == NULL ||
        cm_json_parse(how->info, strlen(how->info), NULL, &m->info, NULL) != 0) {
        mread_free(m);
        fallback(call);
        return;
    }
    cm_json_t root = cm_json_root(m->info), cols = cm_json_get(root, "cols"),
              vars = cm_json_get(root, "vars");
    int64_t nq = 0, qlimit = -1, qoffset = 0;
    cm_json_as_int64(cm_json_get(root, "ncols"), &nq);
    cm_json_as_int64(cm_json_get(root, "limit"), &qlimit);
    cm_json_as_int64(cm_json_get(root, "offset"), &qoffset);
    size_t nv = cm_json_len(vars);
    if (nq < 1 || (size_t)nq + nv != cm_json_len(cols)) {
        mread_free(m);
        fallback(call);
        return;
    }
    /* every variable given: the table holds every value's rows */
    cm_json_t given = cm_json_get(cm_json_root(call->body), "variables");
    for (size_t i = 0; i < nv; i++) {
        cm_slice_t code = cm_json_str_inner(cm_json_get(cm_json_at(vars, i), "code_name"));
        if (!cm_json_exists(cm_json_get_s(given, code))) {
            api_endpoints__error(call, 400, "Required variable '%.*s' not provided", (int)code.len,
                                 code.p);
            mread_free(m);
            return;
        }
    }
    bool range = false; /* aggregate again over the table's rows */
    cm_json_as_bool(cm_json_get(root, "reaggregate"), &range);
    m->ncols = (size_t)nq;
    m->col_names = cm_xcalloc(m->ncols + 1, sizeof(char *));
    m->col_types = cm_xcalloc(m->ncols + 1, sizeof(char *));
    /* the table's columns and the variables' comparisons, as the info
     * names them; query/table.c writes the read */
    char(*colname)[128] = cm_xcalloc(m->ncols + nv + 1, sizeof(*colname));
    char(*opsbuf)[40] = cm_xcalloc(nv + 1, sizeof(*opsbuf));
    api_query_table_col_t *rcols = cm_xcalloc(m->ncols + 1, sizeof(*rcols));
    api_query_table_var_t *rvars = cm_xcalloc(nv + 1, sizeof(*rvars));
    for (size_t c = 0; c < m->ncols; c++) {
        cm_json_t col = cm_json_at(cols, c);
        cm_slice_t column = cm_json_str_inner(cm_json_get(col, "column"));
        cm_slice_t reagg = cm_json_str_inner(cm_json_get(col, "reagg"));
        snprintf(colname[c], sizeof(colname[c]), "%.*s", (int)column.len, column.p);
        rcols[c] = (api_query_table_col_t){colname[c], reagg.len ? reagg.p[0] : 'g'};
    }
    for (size_t i = 0; i < nv; i++) {
        cm_json_t v = cm_json_at(vars, i), col = cm_json_at(cols, (size_t)nq + i);
        cm_slice_t code = cm_json_str_inner(cm_json_get(v, "code_name"));
        cm_slice_t column = cm_json_str_inner(cm_json_get(col, "column"));
        cm_slice_t ops = cm_json_str_inner(cm_json_get(v, "ops"));
        bool r = false;
        cm_json_as_bool(cm_json_get(v, "range"), &r);
        char *name = colname[m->ncols + i];
        snprintf(name, sizeof(colname[0]), "%.*s", (int)column.len, column.p);
        snprintf(opsbuf[i], sizeof(opsbuf[i]), "%.*s", (int)ops.len, ops.p);
        /* a value not bound was refused above: cannot happen (no comparison) */
        rvars[i] = (api_query_table_var_t){name, opsbuf[i], r, bound(how, code)};
    }
    /* the page, under the query's own LIMIT / OFFSET */
    m->limit = how->limit > 0 ? how->limit : API_QUERY_DEFAULT_ROWS;
    if (m->limit > API_QUERY_MAX_ROWS)
        m->limit = API_QUERY_MAX_ROWS;
    m->offset = how->offset;
    int64_t want = m->limit + 1;
    if (qlimit >= 0 && qlimit - m->offset < want)
        want = qlimit - m->offset < 0 ? 0 : qlimit - m->offset;
    api_query_table_read_t rd = {.table = how->table,
                                 .cols = rcols,
                                 .ncols = m->ncols,
                                 .vars = rvars,
                                 .nvars = nv,
                                 .reaggregate = range,
                                 .limit = want,
                                 .offset = qoffset + m->offset};
    api_query_table_sql_t sql;
    api_query_table_read(&rd, cm_evstore_dialect(call->ctx->events), &sql);
    free(colname);
    free(opsbuf);
    free(rcols);
    free(rvars);
    /* the values live until the answer: m owns them from here */
    m->params = sql.params;
    m->types = sql.types;
    m->nparams = sql.nparams;
    sql.params = NULL;
    sql.types = NULL;
    sql.nparams = 0;
    for (size_t c = 0; c < m->ncols; c++) {
        cm_json_t col = cm_json_at(cols, c);
        m->col_names[c] = text_of(cm_json_get(col, "name"));
        m->col_types[c] = text_of(cm_json_get(col, "type"));
    }
    cm_evstore_select_t s = {.sql = cm_buf_cstr(&sql.sql),
                             .params = (const char *const *)m->params,
                             .types = m->types,
                             .nparams = (int)m->nparams,
                             .timeout_ms = READ_TIMEOUT_MS,
                             .max_bytes = call->ctx->cfg.answer_max_bytes};
    api_query_select(call, &s, on_rows, m);
    api_query_table_sql_free(&sql);
}
