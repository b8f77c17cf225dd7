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
    if (run->mat_table == NULL)
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
                             .max_bytes = call->ctx->cfg.answer_max_bytes};
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
            api_endpoints__write_value(w, m->col_types[c], cm_evstore_value(rows, i, c));
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

void api_endpoints__mat_ident(cm_buf_t *b, bool ch, const char *name)
{
    char q = ch ? '`' : '"';
    cm_buf_putc(b, q);
    for (const char *p = name; *p; p++) {
        /* ClickHouse reads escapes inside backquotes: a lone backslash
         * would take the closing quote with it */
        if (*p == q || (ch && *p == '\\'))
            cm_buf_putc(b, ch ? '\\' : '"');
        cm_buf_putc(b, *p);
    }
    cm_buf_putc(b, q);
}

/* A value for the read: a SQLite parameter, or a ClickHouse literal. */
static void value(mread_t *m, cm_buf_t *sql, bool ch, const api_query_value_t *v, bool day)
{
    char text[64];
    const char *s = NULL;
    size_t len = 0;
    char type = 't';
    switch (v->kind) {
    case API_QV_STRING:
        s = v->s;
        len = v->len;
        break;
    case API_QV_INT:
    case API_QV_BOOL:
        len = (size_t)snprintf(text, sizeof(text), "%lld", (long long)v->i);
        s = text;
        type = 'i';
        break;
    case API_QV_FLOAT:
        len = (size_t)snprintf(text, sizeof(text), "%.17g", v->f);
        s = text;
        type = 'f';
        break;
    default: s = ""; break;
    }
    if (day) { /* the value's day: YYYY-MM-DD 00:00:00, as the table's column */
        len = (size_t)snprintf(text, sizeof(text), "%.10s 00:00:00", s);
        s = text;
        type = 't';
    }
    if (ch) {
        if (type == 't')
            cm_evstore_quote(m->call->ctx->events, sql, (cm_slice_t){s, len});
        else
            cm_buf_append(sql, s, len);
        return;
    }
    m->params[m->nparams] = cm_xmalloc(len + 1);
    memcpy(m->params[m->nparams], s, len);
    m->params[m->nparams][len] = '\0';
    m->types[m->nparams++] = type;
    cm_buf_appendf(sql, "$%zu", m->nparams);
}

static const api_query_value_t *bound(const api_endpoints__mat_read_t *h, cm_slice_t code)
{
    for (size_t i = 0; i < h->nvars; i++)
        if (cm_slice_eq_cstr(code, h->names[i]))
            return &h->values[i];
    return NULL;
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
            api_endpoints__error(call, 400, "Required variable '%.*s' not provided", (int)code.len,
                                 code.p);
            return API_ENDPOINTS__ANSWERED; /* m goes with the run */
        }
    }
    bool ch = cm_evstore_kind(call->ctx->events) == CM_EVSTORE_CLICKHOUSE;
    bool range = false; /* aggregate again over the table's rows */
    cm_json_as_bool(cm_json_get(root, "reaggregate"), &range);
    m->ncols = (size_t)nq;
    m->col_names = cm_xcalloc(m->ncols + 1, sizeof(char *));
    m->col_types = cm_xcalloc(m->ncols + 1, sizeof(char *));
    /* one parameter per comparison: a variable's ops hold at most 11 (32 bytes) */
    m->params = cm_xcalloc(nv * 12 + 1, sizeof(char *));
    m->types = cm_xcalloc(nv * 12 + 1, 1);
    cm_buf_t sql = CM_BUF_INIT, group = CM_BUF_INIT;
    cm_buf_append_cstr(&sql, "SELECT ");
    for (size_t c = 0; c < m->ncols; c++) {
        cm_json_t col = cm_json_at(cols, c);
        cm_slice_t column = cm_json_str_inner(cm_json_get(col, "column"));
        cm_slice_t reagg = cm_json_str_inner(cm_json_get(col, "reagg"));
        char colname[128];
        snprintf(colname, sizeof(colname), "%.*s", (int)column.len, column.p);
        if (c)
            cm_buf_append_cstr(&sql, ", ");
        char agg = range && reagg.len ? reagg.p[0] : 'g';
        if (agg != 'g')
            cm_buf_append_cstr(&sql, agg == 'c'   ? "coalesce(sum("
                                     : agg == 's' ? "sum("
                                     : agg == 'n' ? "min("
                                                  : "max(");
        api_endpoints__mat_ident(&sql, ch, colname);
        if (agg != 'g')
            cm_buf_append_cstr(&sql, agg == 'c' ? "), 0)" : ")");
        else if (range) {
            if (group.len)
                cm_buf_append_cstr(&group, ", ");
            api_endpoints__mat_ident(&group, ch, colname);
        }
    }
    cm_buf_appendf(&sql, " FROM %s WHERE 1 = 1", how->table);
    for (size_t i = 0; i < nv; i++) {
        cm_json_t v = cm_json_at(vars, i), col = cm_json_at(cols, (size_t)nq + i);
        cm_slice_t code = cm_json_str_inner(cm_json_get(v, "code_name"));
        cm_slice_t column = cm_json_str_inner(cm_json_get(col, "column"));
        cm_slice_t ops = cm_json_str_inner(cm_json_get(v, "ops"));
        bool r = false;
        cm_json_as_bool(cm_json_get(v, "range"), &r);
        const api_query_value_t *val = bound(how, code);
        char colname[128], opsbuf[40];
        snprintf(colname, sizeof(colname), "%.*s", (int)column.len, column.p);
        snprintf(opsbuf, sizeof(opsbuf), "%.*s", (int)ops.len, ops.p);
        if (val == NULL)
            continue; /* checked above: cannot happen */
        for (char *save = NULL, *op = strtok_r(opsbuf, " ", &save); op;
             op = strtok_r(NULL, " ", &save)) {
            cm_buf_append_cstr(&sql, " AND ");
            api_endpoints__mat_ident(&sql, ch, colname);
            cm_buf_appendf(&sql, " %s ", op);
            value(m, &sql, ch, val, r);
        }
    }
    if (range && group.len)
        cm_buf_appendf(&sql, " GROUP BY %s", cm_buf_cstr(&group));
    /* the page, under the query's own LIMIT / OFFSET */
    m->limit = how->limit > 0 ? how->limit : API_QUERY_DEFAULT_ROWS;
    if (m->limit > API_QUERY_MAX_ROWS)
        m->limit = API_QUERY_MAX_ROWS;
    m->offset = how->offset;
    int64_t want = m->limit + 1;
    if (qlimit >= 0 && qlimit - m->offset < want)
        want = qlimit - m->offset < 0 ? 0 : qlimit - m->offset;
    cm_buf_appendf(&sql, " LIMIT %lld OFFSET %lld", (long long)want,
                   (long long)(qoffset + m->offset));
    for (size_t c = 0; c < m->ncols; c++) {
        cm_json_t col = cm_json_at(cols, c);
        m->col_names[c] = text_of(cm_json_get(col, "name"));
        m->col_types[c] = text_of(cm_json_get(col, "type"));
    }
    m->sql = sql; /* execute() sends it */
    cm_buf_free(&group);
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
