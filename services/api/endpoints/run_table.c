/*
 * run_table.c - a HogQL endpoint run from its materialized
 * table (docs/endpoints.md, Materialization): the table has the query's
 * columns and one per variable (a range variable's by day); the read
 * filters by the values (c = v; a range: the day column against the
 * value's day) and, with a range variable, aggregates again over the days
 * (sum of counts and sums, min, max). Every variable must be given: the
 * table holds every value's rows. A source of the run (endpoints_int.h):
 * it declines when there is no fresh table, when the table's info cannot
 * be read, or when the store refuses the read (the table went away), and
 * the query itself runs (run_hogql.c). Its answers are not cached: the
 * table is the cache, and last_refresh is the time it was built.
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

/* What the read needs of the run. */
typedef struct {
    const char *table, *info, *at; /* the version's mat_table, mat_info, mat_at */
    const char *const *names;      /* the bound variables */
    const api_query_value_t *values;
    size_t nvars;
    int64_t limit, offset; /* the page asked (limit 0: the default) */
} api_endpoints__mat_read_t;

typedef struct {
    api_call_t *call;
    api_endpoints__mat_read_t how;
    cm_json_doc_t *info;
    cm_buf_t sql;
    const cm_evstore_rows_t *rows; /* the store's answer, during execute's done only */
    api_endpoints__done_fn done;
    char **params;
    char *types;
    size_t nparams;
    char **col_names, **col_types;
    size_t ncols;
    int64_t limit, offset; /* the page */
    bool one_row;          /* the query aggregates without GROUP BY (query.h) */
    bool range;            /* the read aggregates again: one row even from none */
} mread_t;

static int key(api_endpoints__run_t *run, char out[96]);
static int prepare(api_call_t *call, mread_t *m, const api_endpoints__mat_read_t *how);
static void execute(api_endpoints__run_t *run, api_endpoints__done_fn done);
static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud);
static void page(api_endpoints__run_t *run, cm_json_writer_t *w, api_endpoints__done_fn done);
static void tail(api_endpoints__run_t *run, cm_json_writer_t *w);
static void mread_free(void *p);

const api_endpoints__source_t api_endpoints__table = {
    .key = key, .execute = execute, .page = page, .tail = tail, .free = mread_free};

/* A fresh table, its read prepared; never cached. */
static int key(api_endpoints__run_t *run, char out[96])
{
    out[0] = '\0';
    /* The table is built and read in UTC with Sunday weeks (its day columns
     * and the read's days): a project in another zone, or with Monday weeks,
     * would get other buckets than the query's own, so its query runs. */
    if (run->mat_table == NULL || run->week_start != 0 ||
        (strcmp(run->timezone, "UTC") != 0 && strcmp(run->timezone, "Etc/UTC") != 0))
        return API_ENDPOINTS__DECLINED;
    mread_t *m = cm_xcalloc(1, sizeof(*m));
    run->state = m;
    api_endpoints__mat_read_t how = {.table = run->mat_table,
                                     .info = run->mat_info,
                                     .at = run->mat_at,
                                     .names = run->names,
                                     .values = run->values,
                                     .nvars = run->nvars,
                                     .limit = run->limit,
                                     .offset = run->offset};
    run->built_at = run->mat_at;
    return prepare(run->call, m, &how);
}

static void execute(api_endpoints__run_t *run, api_endpoints__done_fn done)
{
    api_call_t *call = run->call;
    mread_t *m = run->state;
    m->done = done;
    cm_evstore_select_t s = {.sql = cm_buf_cstr(&m->sql),
                             .params = (const char *const *)m->params,
                             .types = m->types,
                             .nparams = (int)m->nparams,
                             .timeout_ms = READ_TIMEOUT_MS,
                             .max_bytes = call->ctx->cfg.answer_max_bytes,
                             .replicated = true}; /* a materialized table */
    api_query_select(call, &s, on_rows, run);
}

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_endpoints__run_t *run = ud;
    mread_t *m = run->state;
    if (status != 0) { /* the table is gone or the store away: the query itself */
        cm_log(CM_LOG_WARN, NULL, "materialized read of %s: %s; running the query", m->how.table,
               err ? err : "");
        m->done(run, API_ENDPOINTS__DECLINED, NULL);
        return;
    }
    /* No row for these values, and the query answers one even then (count()
     * 0, uniqExact 0 ...): a read that aggregates again gives it, one that
     * cannot (an aggregate not re-aggregable, read as stored) would answer
     * nothing. The query itself answers instead. */
    if (cm_evstore_nrows(rows) == 0 && m->one_row && !m->range) {
        m->done(run, API_ENDPOINTS__DECLINED, NULL);
        return;
    }
    m->rows = rows; /* page() reads them inside done */
    m->done(run, 0, NULL);
}

static void page(api_endpoints__run_t *run, cm_json_writer_t *w, api_endpoints__done_fn done)
{
    mread_t *m = run->state;
    const cm_evstore_rows_t *rows = m->rows;
    m->rows = NULL; /* they go with the store's callback */
    size_t n = cm_evstore_nrows(rows);
    bool more = n > (size_t)m->limit;
    if (more)
        n = (size_t)m->limit;
    cm_json_key(w, "results");
    cm_json_begin_array(w);
    for (size_t i = 0; i < n; i++) {
        cm_json_begin_array(w);
        for (size_t c = 0; c < m->ncols && c < cm_evstore_ncols(rows); c++)
            cm_evstore_write_value(w, m->col_types[c], cm_evstore_value(rows, i, c));
        cm_json_end_array(w);
    }
    cm_json_end_array(w);
    cm_json_key(w, "columns");
    cm_json_begin_array(w);
    for (size_t c = 0; c < m->ncols; c++)
        cm_json_str_cstr(w, m->col_names[c]);
    cm_json_end_array(w);
    cm_json_key(w, "types");
    cm_json_begin_array(w);
    for (size_t c = 0; c < m->ncols; c++) {
        cm_json_begin_array(w);
        cm_json_str_cstr(w, m->col_names[c]);
        cm_json_str_cstr(w, m->col_types[c]);
        cm_json_end_array(w);
    }
    cm_json_end_array(w);
    cm_json_key(w, "hasMore");
    cm_json_boolean(w, more);
    cm_json_key(w, "limit");
    cm_json_int(w, m->limit);
    cm_json_key(w, "offset");
    cm_json_int(w, m->offset);
    done(run, 0, NULL);
}

static void tail(api_endpoints__run_t *run, cm_json_writer_t *w)
{
    cm_json_key(w, "endpoint_materialized");
    cm_json_boolean(w, true);
    cm_json_key(w, "endpoint_materialized_at");
    api_json_time(w, run->mat_at);
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

/* Whether the table answers for this value exactly: a list is the
 * query's to answer (or refuse), and a range variable's rows are kept by
 * day, so only a value at a day's start (YYYY-MM-DD, or with 00:00:00)
 * finds the same rows as the query; any other is the query's too. A
 * Boolean is the query's as well: compared with a string column the
 * compiler refuses it, and the table must not answer what the query
 * refuses. */
static bool table_exact(const api_query_value_t *v, bool range)
{
    if (v == NULL || v->kind == API_QV_LIST || v->kind == API_QV_NULL || v->kind == API_QV_BOOL)
        return false;
    if (!range)
        return true;
    if (v->kind != API_QV_STRING || (v->len != 10 && v->len != 19))
        return false;
    for (size_t i = 0; i < 10; i++)
        if ((i == 4 || i == 7) ? v->s[i] != '-' : (v->s[i] < '0' || v->s[i] > '9'))
            return false;
    return v->len == 10 || memcmp(v->s + 10, " 00:00:00", 9) == 0;
}

/* The table's info read and the read's SQL written into m->sql: 0,
 * DECLINED (the info does not fit), or ANSWERED (a variable missing). */
static int prepare(api_call_t *call, mread_t *m, const api_endpoints__mat_read_t *how)
{
    m->call = call;
    m->how = *how;
    if (how->info == NULL || cm_json_parse(how->info, strlen(how->info), NULL, &m->info, NULL) != 0)
        return API_ENDPOINTS__DECLINED;
    cm_json_t root = cm_json_root(m->info), cols = cm_json_get(root, "cols"),
              vars = cm_json_get(root, "vars");
    int64_t nq = 0, qlimit = -1, qoffset = 0;
    cm_json_as_int64(cm_json_get(root, "ncols"), &nq);
    cm_json_as_int64(cm_json_get(root, "limit"), &qlimit);
    cm_json_as_int64(cm_json_get(root, "offset"), &qoffset);
    size_t nv = cm_json_len(vars);
    if (nq < 1 || (size_t)nq + nv != cm_json_len(cols))
        return API_ENDPOINTS__DECLINED;
    /* every variable given: the table holds every value's rows */
    cm_json_t given = cm_json_get(cm_json_root(call->body), "variables");
    for (size_t i = 0; i < nv; i++) {
        cm_slice_t code = cm_json_str_inner(cm_json_get(cm_json_at(vars, i), "code_name"));
        if (!cm_json_exists(cm_json_get_s(given, code))) {
            api_endpoints__error(call, 400, "variables", "Required variable '%.*s' not provided",
                                 (int)code.len, code.p);
            return API_ENDPOINTS__ANSWERED; /* m goes with the run */
        }
    }
    for (size_t i = 0; i < nv; i++) {
        cm_json_t v = cm_json_at(vars, i);
        bool r = false;
        cm_json_as_bool(cm_json_get(v, "range"), &r);
        if (!table_exact(bound(how, cm_json_str_inner(cm_json_get(v, "code_name"))), r))
            return API_ENDPOINTS__DECLINED; /* the query answers */
    }
    bool range = false; /* aggregate again over the table's rows */
    cm_json_as_bool(cm_json_get(root, "reaggregate"), &range);
    cm_json_as_bool(cm_json_get(root, "one_row"), &m->one_row);
    m->range = range;
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
    m->sql = sql.sql; /* execute() sends it */
    sql.sql = (cm_buf_t)CM_BUF_INIT;
    api_query_table_sql_free(&sql);
    return 0;
}

static void mread_free(void *p)
{
    mread_t *m = p;
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
    cm_buf_free(&m->sql);
    free(m);
}
