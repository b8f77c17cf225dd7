/* materializer.c - see endpoints.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/timefmt.h"
#include "cm/tzone.h"
#include "insights/insights.h"
#include "metrics.h"
#include "endpoints/endpoints.h"
#include "endpoints/endpoints_int.h"
#include "query/query.h"
#include "query/table.h"
#include "store/store.h"

typedef struct {
    char *version_id, *project_id, *query, *old_table, *timezone;
    int week_start; /* the project's: 0 Sunday, 1 Monday */
    bool drop_only; /* no longer materialized: its table goes */
} job_t;

struct api_materializer {
    api_ctx_t *ctx;
    uv_timer_t timer;
    uint64_t every_ms;
    bool busy, again, closing;
    job_t *jobs;
    size_t njobs, next;
    /* the job in progress */
    api_query_sql_t sql;
    api_query_mat_t mat;
    /* an insight's: its plan (borrowing doc), zone and time */
    cm_json_doc_t *ins_doc;
    cm_tzone_t *zone;
    int ins_week_start; /* the insight's plan's week start */
    api_insight_t *ins;
    int64_t ins_now;
    char table[96];
    uint64_t started_ns; /* uv_hrtime() when the job was claimed */
    char *info;          /* a built table's description, kept while its rows are counted */
    char **params;
    char *types;
    void (*done)(void *ud);
    void *done_ud;
};

int64_t api_endpoints_period_ms(const char *f)
{
    static const struct {
        const char *name;
        int64_t ms;
    } periods[] = {{"15min", 900000},   {"30min", 1800000},   {"1hour", 3600000},
                   {"6hour", 21600000}, {"12hour", 43200000}, {"24hour", 86400000},
                   {"7day", 604800000}};
    for (size_t i = 0; f && i < sizeof(periods) / sizeof(periods[0]); i++)
        if (strcmp(f, periods[i].name) == 0)
            return periods[i].ms;
    return 0;
}

static void look(api_materializer_t *m);
static void next_job(api_materializer_t *m);

static void job_clear(api_materializer_t *m)
{
    for (size_t i = 0; m->params && i < m->sql.nparams; i++)
        free(m->params[i]);
    free(m->params);
    free(m->types);
    m->params = NULL;
    m->types = NULL;
    api_query_sql_free(&m->sql);
    api_query_mat_free(&m->mat);
    api_insight_free(m->ins);
    cm_tzone_free(m->zone);
    cm_json_doc_free(m->ins_doc);
    m->ins = NULL;
    m->zone = NULL;
    m->ins_doc = NULL;
}

static void jobs_free(api_materializer_t *m)
{
    for (size_t i = 0; i < m->njobs; i++) {
        free(m->jobs[i].version_id);
        free(m->jobs[i].project_id);
        free(m->jobs[i].query);
        free(m->jobs[i].old_table);
        free(m->jobs[i].timezone);
    }
    free(m->jobs);
    m->jobs = NULL;
    m->njobs = m->next = 0;
}

static void timer_closed(uv_handle_t *h);

static void finished(api_materializer_t *m)
{
    jobs_free(m);
    m->busy = false;
    if (m->closing) {
        uv_close((uv_handle_t *)&m->timer, timer_closed);
        return;
    }
    if (m->again) {
        m->again = false;
        look(m);
    }
}

static void on_store_noted(int status, const cm_db_res_t *res, void *ud)
{
    api_materializer_t *m = ud;
    if (status != 0)
        cm_log(CM_LOG_WARN, NULL, "materialize: the store: %s", cm_db_error(res));
    next_job(m);
}

/* A build's start and end: a log line each (the version, its project, the
 * result, the time taken, the error) and the api_materialization* series. */
static void build_started(api_materializer_t *m, const job_t *j)
{
    m->started_ns = uv_hrtime();
    cm_gauge_add(m->ctx->m->mat_running, 1);
    const cm_log_field_t f[] = {{"version_id", j->version_id}, {"project_id", j->project_id}};
    cm_log_fields(CM_LOG_INFO, NULL, f, 2, "materialization started");
}

static void build_ended(api_materializer_t *m, const job_t *j, const char *error, const char *rows)
{
    api_metrics_t *am = m->ctx->m;
    double secs = (double)(uv_hrtime() - m->started_ns) / 1e9;
    char ms[32];
    snprintf(ms, sizeof(ms), "%.3f", secs * 1000);
    cm_gauge_add(am->mat_running, -1);
    cm_histogram_observe(am->mat_seconds, secs);
    if (error == NULL) {
        cm_counter_inc(am->mat_completed);
        cm_gauge_set(am->mat_last_success, (double)cm_now_us() / 1e6);
    } else {
        cm_counter_inc(am->mat_failed);
    }
    const cm_log_field_t f[] = {{"version_id", j->version_id},
                                {"project_id", j->project_id},
                                {"result", error ? "failed" : "completed"},
                                {"table", error ? NULL : m->table},
                                {"error", error}};
    const cm_log_field_t n[] = {{"duration_ms", ms}, {"rows", rows}};
    cm_log_record(error ? CM_LOG_WARN : CM_LOG_INFO, NULL, f, 5, n, 2, "materialization ended");
}

static void fail_job(api_materializer_t *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail_job(api_materializer_t *m, const char *fmt, ...)
{
    job_t *j = &m->jobs[m->next - 1];
    cm_buf_t e = CM_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cm_buf_vappendf(&e, fmt, ap);
    va_end(ap);
    build_ended(m, j, cm_buf_cstr(&e), NULL);
    job_clear(m);
    api_store_mat_finish(m->ctx->db, j->version_id, "Failed", cm_buf_cstr(&e), NULL, NULL,
                         on_store_noted, m);
    cm_buf_free(&e);
}

/* The store failed the build: its text (the printed SQL, the compiler's
 * names) is logged; the status keeps what a run would be told. */
static void fail_store(api_materializer_t *m, const char *what, const char *err)
{
    job_t *j = &m->jobs[m->next - 1];
    cm_log(CM_LOG_WARN, NULL, "materialize %s: the event store failed %s: %s", j->version_id, what,
           err ? err : "");
    const api_endpoints__store_error_t *e = api_endpoints__store_error(err);
    if (e != NULL)
        fail_job(m, "Query execution failed: %s", e->detail);
    else
        fail_job(m,
                 "Query execution failed: the event store refused %s (its text is in the api's "
                 "log).",
                 what);
}

/* ---- dropping a table ---- */

/* One statement about a materialized table to the event store; sql is
 * consumed. ddl and replicated as cm_evstore_select_t says. */
static void send_table_sql(api_materializer_t *m, cm_buf_t *sql, bool ddl, bool replicated,
                           cm_evstore_query_cb cb)
{
    cm_evstore_select(
        m->ctx->events,
        &(cm_evstore_select_t){.sql = cm_buf_cstr(sql), .ddl = ddl, .replicated = replicated}, cb,
        m);
    cm_buf_free(sql);
}

static void drop(api_materializer_t *m, const char *table, cm_evstore_query_cb cb)
{
    cm_buf_t sql = CM_BUF_INIT;
    const char *db = NULL, *cluster = cm_evstore_cluster(m->ctx->events, &db);
    if (cluster != NULL) /* from every node */
        api_query_table_drop_replicated(&sql, table, cluster, db);
    else
        api_query_table_drop(&sql, cm_evstore_dialect(m->ctx->events), table);
    send_table_sql(m, &sql, true, false, cb);
}

static void on_old_dropped(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_materializer_t *m = ud;
    (void)rows;
    if (status != 0) /* left behind: harmless, named after its version */
        cm_log(CM_LOG_WARN, NULL, "materialize: dropping an old table: %s", err ? err : "");
    next_job(m);
}

static void on_unused_dropped(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_materializer_t *m = ud;
    job_t *j = &m->jobs[m->next - 1];
    (void)rows;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "materialize: dropping %s: %s", j->old_table, err ? err : "");
        next_job(m);
        return;
    }
    api_store_mat_dropped(m->ctx->db, j->version_id, j->old_table, on_store_noted, m);
}

/* ---- building a table ---- */

static void on_completed(int status, const cm_db_res_t *res, void *ud)
{
    api_materializer_t *m = ud;
    job_t *j = &m->jobs[m->next - 1];
    if (status != 0)
        cm_log(CM_LOG_WARN, NULL, "materialize: the store: %s", cm_db_error(res));
    if (status == 0 && j->old_table && strcmp(j->old_table, m->table) != 0)
        drop(m, j->old_table, on_old_dropped);
    else
        next_job(m);
}

/* What a read needs: the table's columns (the query's, then one per
 * variable) with their names in the store, types and re-aggregation, the
 * variables, and the query's own LIMIT / OFFSET. */
/* An insight's: the time and zone its plan had, and the day date_from
 * "all" came to (see insights.h). */
static char *insight_info_json(api_materializer_t *m, const cm_evstore_rows_t *rows)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "kind");
    cm_json_str_cstr(&w, "insight");
    cm_json_key(&w, "now");
    cm_json_int(&w, m->ins_now);
    cm_json_key(&w, "timezone");
    cm_json_str_cstr(&w, cm_tzone_name(m->zone));
    cm_json_key(&w, "week_start");
    cm_json_int(&w, m->ins_week_start);
    cm_json_key(&w, "first_day");
    const char *first = api_insight_first_day(m->ins);
    first ? cm_json_str_cstr(&w, first) : cm_json_null(&w);
    cm_json_key(&w, "columns"); /* q, b, k, p, v as the store named them */
    cm_json_begin_array(&w);
    for (size_t i = 0; i < cm_evstore_ncols(rows); i++)
        cm_json_str_cstr(&w, cm_evstore_colname(rows, i));
    cm_json_end_array(&w);
    cm_json_end_object(&w);
    return cm_buf_detach(&b, NULL);
}

static char *info_json(api_materializer_t *m, const cm_evstore_rows_t *rows)
{
    if (m->ins != NULL)
        return insight_info_json(m, rows);
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "cols");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < cm_evstore_ncols(rows) && i < m->sql.ncols; i++) {
        cm_json_begin_object(&w);
        cm_json_key(&w, "column");
        cm_json_str_cstr(&w, cm_evstore_colname(rows, i));
        cm_json_key(&w, "name");
        cm_json_str_cstr(&w, m->sql.cols[i].name);
        cm_json_key(&w, "type");
        cm_json_str_cstr(&w, m->sql.cols[i].type);
        cm_json_key(&w, "reagg");
        char r[2] = {i < m->mat.ncols ? m->mat.reagg[i] : 'g', 0};
        cm_json_str_cstr(&w, r);
        cm_json_end_object(&w);
    }
    cm_json_end_array(&w);
    cm_json_key(&w, "vars");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < m->mat.nvars; i++) {
        cm_json_begin_object(&w);
        cm_json_key(&w, "code_name");
        cm_json_str_cstr(&w, m->mat.vars[i].code_name);
        cm_json_key(&w, "range");
        cm_json_boolean(&w, m->mat.vars[i].range);
        cm_json_key(&w, "ops");
        cm_json_str_cstr(&w, m->mat.vars[i].ops);
        cm_json_end_object(&w);
    }
    cm_json_end_array(&w);
    cm_json_key(&w, "ncols"); /* the query's own columns: the rest are the variables' */
    cm_json_int(&w, (int64_t)m->mat.ncols);
    cm_json_key(&w, "reaggregate");
    cm_json_boolean(&w, m->mat.reaggregate);
    cm_json_key(&w, "one_row");
    cm_json_boolean(&w, m->mat.one_row);
    cm_json_key(&w, "limit");
    cm_json_int(&w, m->mat.limit);
    cm_json_key(&w, "offset");
    cm_json_int(&w, m->mat.offset);
    cm_json_end_object(&w);
    return cm_buf_detach(&b, NULL);
}

static void on_counted(int status, const char *err, const cm_evstore_rows_t *rows, void *ud);

static void on_columns(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_materializer_t *m = ud;
    if (status != 0) {
        fail_store(m, "the read of the new table", err);
        return;
    }
    if (cm_evstore_ncols(rows) != m->sql.ncols) {
        fail_job(m, "the new table has %zu columns, the query %zu", cm_evstore_ncols(rows),
                 m->sql.ncols);
        return;
    }
    m->info = info_json(m, rows);
    job_clear(m);
    cm_buf_t sql = CM_BUF_INIT;
    api_query_table_count(&sql, cm_evstore_dialect(m->ctx->events), m->table);
    send_table_sql(m, &sql, false, true, on_counted);
}

/* The table's rows, for the end's log line only: a count that fails is
 * logged as null and the table is used all the same. */
static void on_counted(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_materializer_t *m = ud;
    job_t *j = &m->jobs[m->next - 1];
    (void)err;
    const char *n =
        status == 0 && cm_evstore_nrows(rows) == 1 ? cm_evstore_value(rows, 0, 0) : NULL;
    build_ended(m, j, NULL, n);
    char *info = m->info;
    m->info = NULL;
    api_store_mat_finish(m->ctx->db, j->version_id, "Completed", NULL, m->table, info, on_completed,
                         m);
    free(info);
}

static void on_created(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_materializer_t *m = ud;
    (void)rows;
    if (status != 0) {
        fail_store(m, "the query", err);
        return;
    }
    cm_buf_t sql = CM_BUF_INIT;
    api_query_table_columns(&sql, cm_evstore_dialect(m->ctx->events), m->table);
    send_table_sql(m, &sql, false, true, on_columns);
}

/* ---- on a ClickHouse cluster (query/table.h): DESCRIBE, CREATE ON CLUSTER, INSERT ---- */

static void on_created_empty(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_materializer_t *m = ud;
    (void)rows;
    if (status != 0) {
        fail_store(m, "the new table", err);
        return;
    }
    cm_buf_t sql = CM_BUF_INIT;
    api_query_table_fill(&sql, m->table, cm_buf_cstr(&m->sql.sql));
    send_table_sql(m, &sql, true, true, on_created);
}

static void on_described(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_materializer_t *m = ud;
    if (status != 0) {
        fail_store(m, "the query", err);
        return;
    }
    size_t n = cm_evstore_nrows(rows);
    if (n == 0 || cm_evstore_ncols(rows) < 2) {
        fail_job(m, "the event store described the query with no columns");
        return;
    }
    const char **names = cm_xcalloc(n, sizeof(*names)), **types = cm_xcalloc(n, sizeof(*types));
    for (size_t i = 0; i < n; i++) {
        names[i] = cm_evstore_value(rows, i, 0);
        types[i] = cm_evstore_value(rows, i, 1);
    }
    const char *db = NULL, *cluster = cm_evstore_cluster(m->ctx->events, &db);
    cm_buf_t sql = CM_BUF_INIT;
    api_query_table_create_replicated(&sql, m->table, cluster, db, names, types, n);
    send_table_sql(m, &sql, true, false, on_created_empty);
    free(names);
    free(types);
}

/* The table's SELECT (HogQL, with its variables) printed for the store
 * without a page, and written as a new table. */
static void create_table(api_materializer_t *m, job_t *j, const char *hogql, const char **names,
                         const api_query_value_t *values, size_t nvalues)
{
    cm_buf_t err = CM_BUF_INIT;
    api_query_t *tq = NULL;
    cm_evstore_dialect_t d = cm_evstore_dialect(m->ctx->events);
    api_query_print_opts_t o = {
        .dialect = d == CM_EVSTORE_SQL_SQLITE ? API_QUERY_SQLITE : API_QUERY_CLICKHOUSE,
        .clickhouse_version = api_query_ch_version(d),
        .project_id = atoll(j->project_id),
        .var_names = names,
        .var_values = values,
        .nvars = nvalues,
        .whole = true,
    };
    if (api_query_parse(hogql, strlen(hogql), &tq, &err) != 0 ||
        api_query_print(tq, &o, &m->sql, &err) != 0) {
        fail_job(m, "Cannot materialize: %.*s", (int)err.len, err.p);
        goto done;
    }
    /* a new name each time: reads go on using the old table until the
     * version points at the new one */
    char id[64];
    size_t n = 0;
    for (const char *p = j->version_id; *p && n < 32; p++)
        if (*p != '-')
            id[n++] = *p;
    id[n] = '\0';
    char now[24];
    api_store_now(now);
    snprintf(m->table, sizeof(m->table), "mat_%s_%s", id, now);
    cm_buf_t sql = CM_BUF_INIT;
    if (cm_evstore_cluster(m->ctx->events, NULL) != NULL) { /* ClickHouse: no parameters */
        api_query_table_describe(&sql, cm_buf_cstr(&m->sql.sql));
        send_table_sql(m, &sql, false, false, on_described);
        goto done;
    }
    api_query_table_create(&sql, d, m->table, cm_buf_cstr(&m->sql.sql));
    m->params = cm_xcalloc(m->sql.nparams + 1, sizeof(char *));
    m->types = cm_xcalloc(m->sql.nparams + 1, 1);
    api_query_params_text(&m->sql, m->params, m->types);
    cm_evstore_select_t s = {.sql = cm_buf_cstr(&sql),
                             .params = (const char *const *)m->params,
                             .types = m->types,
                             .nparams = (int)m->sql.nparams,
                             .ddl = true};
    cm_evstore_select(m->ctx->events, &s, on_created, m);
    cm_buf_free(&sql);
done:
    api_query_free(tq);
    cm_buf_free(&err);
}

/* ---- an insight's table ---- */

static void insight_next(api_materializer_t *m, job_t *j);

static const char *ins_cell(const void *rows, size_t r, size_t c)
{
    return cm_evstore_value(rows, r, c);
}

static void on_insight_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_materializer_t *m = ud;
    job_t *j = &m->jobs[m->next - 1];
    cm_buf_t msg = CM_BUF_INIT;
    if (status != 0) {
        fail_store(m, "the query", err);
    } else if (api_insight_rows(m->ins, rows, cm_evstore_nrows(rows), ins_cell, &msg) != 0) {
        fail_job(m, "%s", cm_buf_cstr(&msg));
    } else {
        api_query_sql_free(&m->sql);
        insight_next(m, j);
    }
    cm_buf_free(&msg);
}

/* date_from "all" looks for the first event first; then the table. */
static void insight_next(api_materializer_t *m, job_t *j)
{
    const char *const *names;
    const api_query_value_t *values;
    size_t n;
    cm_buf_t err = CM_BUF_INIT;
    if (!api_insight_needs_first(m->ins)) {
        const char *hogql = api_insight_table(m->ins, &names, &values, &n, &err);
        if (hogql == NULL)
            fail_job(m, "Cannot materialize: %.*s", (int)err.len, err.p);
        else
            create_table(m, j, hogql, (const char **)names, values, n);
        cm_buf_free(&err);
        return;
    }
    const char *hogql = api_insight_next(m->ins, &names, &values, &n);
    api_query_t *q = NULL;
    cm_evstore_dialect_t d = cm_evstore_dialect(m->ctx->events);
    api_query_print_opts_t o = {
        .dialect = d == CM_EVSTORE_SQL_SQLITE ? API_QUERY_SQLITE : API_QUERY_CLICKHOUSE,
        .clickhouse_version = api_query_ch_version(d),
        .project_id = atoll(j->project_id),
        .var_names = (const char **)names,
        .var_values = values,
        .nvars = n,
        .limit = API_QUERY_MAX_ROWS,
    };
    if (hogql == NULL || api_query_parse(hogql, strlen(hogql), &q, &err) != 0 ||
        api_query_print(q, &o, &m->sql, &err) != 0) {
        fail_job(m, "Cannot materialize: %.*s", (int)err.len, err.p);
    } else {
        /* no parameters: the first event's query binds none */
        cm_evstore_select_t s = {.sql = cm_buf_cstr(&m->sql.sql)};
        cm_evstore_select(m->ctx->events, &s, on_insight_rows, m);
    }
    api_query_free(q);
    cm_buf_free(&err);
}

static void build_insight(api_materializer_t *m, job_t *j, cm_json_doc_t *doc)
{
    cm_buf_t err = CM_BUF_INIT;
    const char *attr = NULL;
    m->ins_doc = doc;
    m->zone = cm_tzone_open(cm_slice_from_cstr(j->timezone ? j->timezone : "UTC"));
    char now[24];
    api_store_now(now);
    m->ins_now = atoll(now) / 1000;
    m->ins_week_start = j->week_start;
    if (api_insight_plan(cm_json_root(doc), CM_JSON_NONE_VALUE, m->zone, m->ins_now, j->week_start,
                         &m->ins, &err, &attr) != 0)
        fail_job(m, "Cannot materialize: %.*s", (int)err.len, err.p);
    else
        insight_next(m, j);
    cm_buf_free(&err);
}

/* The version's query, compiled as its table's, and the table written. */
static void build(api_materializer_t *m, job_t *j)
{
    cm_json_doc_t *doc = NULL;
    cm_buf_t scratch = CM_BUF_INIT, err = CM_BUF_INIT;
    cm_slice_t text;
    api_query_t *q = NULL;
    if (cm_json_parse(j->query, strlen(j->query), NULL, &doc, NULL) != 0) {
        fail_job(m, "The stored query cannot be read");
        goto done;
    }
    if (api_insight_kind(cm_json_root(doc))) {
        build_insight(m, j, doc); /* it owns doc now */
        doc = NULL;
        goto done;
    }
    if (!cm_json_str_eq(cm_json_get(cm_json_root(doc), "kind"), CM_SLICE_LIT("HogQLQuery")) ||
        cm_json_as_str(cm_json_get(cm_json_root(doc), "query"), &scratch, &text) != 0) {
        fail_job(m, "Only HogQL and insight endpoints are materialized here");
        goto done;
    }
    if (api_query_parse(text.p, text.len, &q, &err) != 0 ||
        api_query_materialize(q, &m->mat, &err) != 0) {
        fail_job(m, "Cannot materialize: %.*s", (int)err.len, err.p);
        goto done;
    }
    create_table(m, j, cm_buf_cstr(&m->mat.hogql), NULL, NULL, 0);
done:
    api_query_free(q);
    cm_json_doc_free(doc);
    cm_buf_free(&scratch);
    cm_buf_free(&err);
}

static void on_claimed(int status, const cm_db_res_t *res, void *ud)
{
    api_materializer_t *m = ud;
    if (status != 0 || cm_db_changes(res, 0) != 1) { /* another process has it, or the store */
        next_job(m);
        return;
    }
    build_started(m, &m->jobs[m->next - 1]);
    build(m, &m->jobs[m->next - 1]);
}

static void next_job(api_materializer_t *m)
{
    if (m->next == m->njobs || m->closing) {
        finished(m);
        return;
    }
    job_t *j = &m->jobs[m->next++];
    if (j->drop_only)
        drop(m, j->old_table, on_unused_dropped);
    else
        api_store_mat_claim(m->ctx->db, j->version_id, on_claimed, m);
}

/* ---- which versions ---- */

static char *copy(const char *s)
{
    return s ? cm_xstrdup(s) : NULL;
}

static void on_work(int status, const cm_db_res_t *res, void *ud)
{
    api_materializer_t *m = ud;
    if (status != 0) {
        cm_log(CM_LOG_WARN, NULL, "materialize: the store: %s", cm_db_error(res));
        finished(m);
        return;
    }
    char nowtext[24];
    api_store_now(nowtext);
    int64_t now = atoll(nowtext);
    size_t n = cm_db_nrows(res, 0);
    m->jobs = cm_xcalloc(n + 1, sizeof(job_t));
    for (size_t i = 0; i < n; i++) {
#define V(c) cm_db_value(res, 0, i, c)
        bool materialized = V(API_MAT_MATERIALIZED) && atoi(V(API_MAT_MATERIALIZED)) == 1;
        const char *st = V(API_MAT_STATUS);
        int64_t period = api_endpoints_period_ms(V(API_MAT_SYNC_FREQUENCY));
        int64_t last = st && strcmp(st, "Completed") == 0 && V(API_MAT_AT) ? atoll(V(API_MAT_AT))
                       : V(API_MAT_STARTED) ? atoll(V(API_MAT_STARTED))
                                            : 0;
        bool due =
            materialized && (st == NULL || (strcmp(st, "Running") != 0 && now >= last + period) ||
                             (strcmp(st, "Running") == 0 && now >= last + 3600000));
        bool drop_only = !materialized && V(API_MAT_TABLE) != NULL;
        if (!due && !drop_only)
            continue;
        job_t *j = &m->jobs[m->njobs++];
        j->version_id = copy(V(API_MAT_VERSION_ID));
        j->project_id = copy(V(API_MAT_PROJECT_ID));
        j->query = copy(V(API_MAT_QUERY));
        j->old_table = copy(V(API_MAT_TABLE));
        j->timezone = copy(V(API_MAT_TIMEZONE));
        j->week_start = V(API_MAT_WEEK_START) && atoi(V(API_MAT_WEEK_START)) == 1;
        j->drop_only = drop_only;
#undef V
    }
    next_job(m);
}

/* ClickHouse applies ALTER TABLE events DELETE (a person's erasure, the
 * writer's retention prune) in the background: a table built meanwhile
 * would keep the rows being deleted for a whole sync period. So nothing is
 * built while such a mutation is pending; the versions an erasure made
 * stale are not read meanwhile (runs answer from the query). A failed
 * look at system.mutations does not hold the builds. */
static void on_mutations(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    (void)err;
    api_materializer_t *m = ud;
    const char *pending = cm_evstore_value(rows, 0, 0);
    if (status == 0 && pending && atoll(pending) > 0 && !m->closing) {
        cm_log(CM_LOG_DEBUG, NULL, "materialize: %s deletes pending on events; later", pending);
        finished(m);
        return;
    }
    if (m->closing) {
        finished(m);
        return;
    }
    api_store_mat_work(m->ctx->db, on_work, m);
}

static void look(api_materializer_t *m)
{
    if (m->busy) {
        m->again = true;
        return;
    }
    if (m->closing || !m->ctx->migrated || m->ctx->events == NULL)
        return;
    m->busy = true;
    if (cm_evstore_kind(m->ctx->events) == CM_EVSTORE_CLICKHOUSE) {
        /* on a cluster, the shards' local tables (event_store.h) */
        cm_buf_t sql = CM_BUF_INIT;
        cm_evstore_pending_deletes_sql(m->ctx->events, &sql);
        cm_evstore_query(m->ctx->events, cm_buf_cstr(&sql), on_mutations, m);
        cm_buf_free(&sql);
    } else
        api_store_mat_work(m->ctx->db, on_work, m);
}

static void on_tick(uv_timer_t *t)
{
    look(t->data);
}

api_materializer_t *api_materializer_new(api_ctx_t *ctx, uint64_t every_ms)
{
    api_materializer_t *m = cm_xcalloc(1, sizeof(*m));
    m->ctx = ctx;
    m->every_ms = every_ms;
    uv_timer_init(ctx->loop, &m->timer);
    m->timer.data = m;
    uv_timer_start(&m->timer, on_tick, every_ms, every_ms);
    return m;
}

void api_materializer_kick(api_materializer_t *m)
{
    if (m != NULL)
        look(m);
}

static void timer_closed(uv_handle_t *h)
{
    api_materializer_t *m = h->data;
    void (*done)(void *) = m->done;
    void *ud = m->done_ud;
    job_clear(m);
    free(m->info);
    free(m);
    if (done)
        done(ud);
}

void api_materializer_close(api_materializer_t *m, void (*done)(void *ud), void *ud)
{
    m->done = done;
    m->done_ud = ud;
    m->closing = true;
    uv_timer_stop(&m->timer);
    if (!m->busy)
        uv_close((uv_handle_t *)&m->timer, timer_closed);
    /* else: finished() closes it once the version in progress is done */
}
