/*
 * run_hogql.c - the run's source of last resort for a HogQL version
 * (endpoints_int.h): the stored query compiled with the run's values for
 * the event store, executed, and its page written (page.c). Its cached
 * answer is named by a hash of the SQL and its parameters, which needs a
 * compile; a memo of compiled runs (project, endpoint, version, query
 * text, store, page and values to that name) spares the parse, print and
 * hash of a run seen before: a cached answer then costs none, and a miss
 * compiles before it runs. It never declines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/strset.h"
#include "endpoints/endpoints.h"
#include "endpoints/endpoints_int.h"
#include "http/admit.h"
#include "store/store.h"

#define MEMO_MAX 4096 /* entries; emptied when full (each lives as its version does) */

typedef struct {
    api_endpoints__run_t *run;
    api_query_t *q; /* NULL until compiled */
    api_query_sql_t sql;
    char **param_text; /* SQLite parameters as text */
    char *param_types;
    const cm_evstore_rows_t *rows; /* the store's answer, during execute's done only */
    api_endpoints__done_fn paged;
} hogql_t;

/* compiled run -> its cache key; the process's, freed by api_endpoints_memo_free */
static cm_strset_t *memo;

static int key(api_endpoints__run_t *run, char out[96]);
static void memo_key(const api_endpoints__run_t *run, cm_buf_t *k);
static void memo_value(cm_buf_t *k, const api_query_value_t *v);
static void memo_put(const cm_buf_t *k, const char *cache_key);
static int compile(api_endpoints__run_t *run, hogql_t *h);
static void cache_key(api_endpoints__run_t *run, hogql_t *h, char out[96]);
static void execute(api_endpoints__run_t *run, api_endpoints__done_fn done);
static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud);
static void page(api_endpoints__run_t *run, cm_json_writer_t *w, api_endpoints__done_fn done);
static void on_page(void *ud, int status);
static void on_executed(int status, const cm_db_res_t *res, void *ud);
static void tail(api_endpoints__run_t *run, cm_json_writer_t *w);
static void hogql_free(void *p);

const api_endpoints__source_t api_endpoints__hogql = {
    .key = key, .execute = execute, .page = page, .tail = tail, .free = hogql_free};

/* ---- the key --------------------------------------------------------------------------------- */

/* A run seen before takes its key from the memo; any other is compiled. */
static int key(api_endpoints__run_t *run, char out[96])
{
    hogql_t *h = cm_xcalloc(1, sizeof(*h));
    h->run = run;
    run->state = h;
    cm_buf_t k = CM_BUF_INIT;
    memo_key(run, &k);
    const char *known =
        memo && run->refresh == 0 && !run->debug ? cm_strset_get(memo, cm_buf_slice(&k)) : NULL;
    int rc = 0;
    if (known) {
        snprintf(out, 96, "%s", known);
    } else if (compile(run, h) != 0) {
        rc = API_ENDPOINTS__FAILED;
    } else {
        cache_key(run, h, out);
        memo_put(&k, out);
    }
    cm_buf_free(&k);
    return rc;
}

/* Everything a compile reads, so that equal keys print equal SQL: the
 * project, the endpoint and version, the stored query's text, the store,
 * the page asked for and the bound values by name. */
static void memo_key(const api_endpoints__run_t *run, cm_buf_t *k)
{
    api_ctx_t *ctx = run->call->ctx;
    int64_t nums[] = {
        atoll(run->call->project_id),          run->version_n,      run->limit,     run->offset,
        (int64_t)cm_evstore_kind(ctx->events), (int64_t)run->nvars, run->week_start};
    cm_buf_append(k, nums, sizeof(nums));
    cm_buf_append(k, run->endpoint_id, strlen(run->endpoint_id) + 1);
    cm_buf_append(k, cm_evstore_server_version(ctx->events),
                  strlen(cm_evstore_server_version(ctx->events)) + 1);
    cm_buf_append(k, run->stored_text, strlen(run->stored_text) + 1);
    cm_buf_append(k, run->timezone, strlen(run->timezone) + 1);
    for (size_t i = 0; i < run->nvars; i++) {
        cm_buf_append(k, run->names[i], strlen(run->names[i]) + 1);
        memo_value(k, &run->values[i]);
    }
}

static void memo_value(cm_buf_t *k, const api_query_value_t *v)
{
    int64_t n;
    cm_buf_putc(k, (char)('0' + v->kind));
    switch (v->kind) {
    case API_QV_NULL: break;
    case API_QV_STRING:
        n = (int64_t)v->len;
        cm_buf_append(k, &n, sizeof(n));
        cm_buf_append(k, v->s, v->len);
        break;
    case API_QV_INT:
    case API_QV_BOOL: cm_buf_append(k, &v->i, sizeof(v->i)); break;
    case API_QV_FLOAT: cm_buf_append(k, &v->f, sizeof(v->f)); break;
    case API_QV_LIST:
        n = (int64_t)v->nitems;
        cm_buf_append(k, &n, sizeof(n));
        for (size_t i = 0; i < v->nitems; i++)
            memo_value(k, &v->items[i]);
        break;
    }
}

static void memo_put(const cm_buf_t *k, const char *cache_key)
{
    if (memo && cm_strset_count(memo) >= MEMO_MAX)
        api_endpoints_memo_free();
    if (memo == NULL)
        memo = cm_strset_new(256);
    free(cm_strset_put(memo, cm_buf_slice(k), cm_xstrdup(cache_key)));
}

void api_endpoints_memo_free(void)
{
    cm_strset_free_with(memo, free);
    memo = NULL;
}

/* The stored query, compiled with the values into h->sql and its
 * parameters (SQLite's as text with their types: cm_evstore_select).
 * 0, or -1 with run->fail set. */
static int compile(api_endpoints__run_t *run, hogql_t *h)
{
    api_call_t *call = run->call;
    cm_json_t text = cm_json_get(cm_json_root(run->stored), "query");
    cm_buf_t scratch = CM_BUF_INIT, err = CM_BUF_INIT;
    cm_slice_t s = CM_SLICE_NULL;
    int rc = -1;
    if (cm_json_as_str(text, &scratch, &s) != 0 || api_query_parse(s.p, s.len, &h->q, &err) != 0) {
        api_endpoints__fail(run, "query", "Invalid HogQL query: %.*s", (int)err.len, err.p);
        goto done;
    }
    cm_evstore_dialect_t d = cm_evstore_dialect(call->ctx->events);
    api_query_print_opts_t o = {
        .dialect = d == CM_EVSTORE_SQL_SQLITE ? API_QUERY_SQLITE : API_QUERY_CLICKHOUSE,
        .clickhouse_version = api_query_ch_version(d),
        .project_id = atoll(call->project_id),
        .var_names = run->names,
        .var_values = run->values,
        .nvars = run->nvars,
        .limit = run->limit,
        .offset = run->offset,
        .timezone = run->timezone,
        .week_start = run->week_start,
    };
    if (api_query_print(h->q, &o, &h->sql, &err) != 0) {
        api_endpoints__fail(run, NULL, "Query execution failed: %.*s", (int)err.len, err.p);
        goto done;
    }
    h->param_text = cm_xcalloc(h->sql.nparams + 1, sizeof(char *));
    h->param_types = cm_xcalloc(h->sql.nparams + 1, 1);
    api_query_params_text(&h->sql, h->param_text, h->param_types);
    rc = 0;
done:
    cm_buf_free(&scratch);
    cm_buf_free(&err);
    return rc;
}

/* The cache key: the endpoint, version, store, page, SQL, the project's
 * zone and the parameters (their types and values), each field
 * length-prefixed; the project is in
 * the key's name. */
static void cache_key(api_endpoints__run_t *run, hogql_t *h, char out[96])
{
    cm_buf_t b = CM_BUF_INIT;
    char num[96];
    api_endpoints__key_field_c(&b, "hogql");
    api_endpoints__key_field_c(&b, run->endpoint_id);
    snprintf(num, sizeof(num), "%lld %d %lld %lld", run->version_n,
             (int)cm_evstore_kind(run->call->ctx->events), (long long)h->sql.limit,
             (long long)h->sql.offset);
    api_endpoints__key_field_c(&b, num);
    api_endpoints__key_field(&b, h->sql.sql.p, h->sql.sql.len);
    api_endpoints__key_field_c(&b, run->timezone); /* how its DateTimes are written */
    for (size_t i = 0; i < h->sql.nparams; i++) {
        char type = h->param_types ? h->param_types[i] : '-';
        api_endpoints__key_field(&b, &type, 1);
        api_endpoints__key_field_c(&b, h->param_text ? h->param_text[i] : NULL);
    }
    api_endpoints__key_name(&b, run->call->project_id, out);
    cm_buf_free(&b);
}

/* ---- the run --------------------------------------------------------------------------------- */

/* Compiled now if the memo gave the key. */
static void execute(api_endpoints__run_t *run, api_endpoints__done_fn done)
{
    api_call_t *call = run->call;
    hogql_t *h = run->state;
    if (h->q == NULL && compile(run, h) != 0) {
        done(run, API_ENDPOINTS__FAILED, NULL);
        return;
    }
    h->paged = done;
    cm_evstore_select_t q = {
        .sql = cm_buf_cstr(&h->sql.sql),
        .params = (const char *const *)h->param_text,
        .types = h->param_types,
        .nparams = (int)h->sql.nparams,
        .timeout_ms = api_query_timeout_ms(call),
        .max_bytes = call->ctx->cfg.answer_max_bytes,
    };
    api_query_select(call, &q, on_rows, run);
}

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_endpoints__run_t *run = ud;
    hogql_t *h = run->state;
    h->rows = rows; /* page() reads them inside done */
    h->paged(run, status, err);
}

static void page(api_endpoints__run_t *run, cm_json_writer_t *w, api_endpoints__done_fn done)
{
    hogql_t *h = run->state;
    h->paged = done;
    const cm_evstore_rows_t *rows = h->rows;
    h->rows = NULL; /* they go with the store's callback */
    api_endpoints__page(run->call, &h->sql, rows, run->call->ctx->cfg.answer_max_bytes, w, on_page,
                        run);
}

/* The page is written: the endpoint's last execution noted. */
static void on_page(void *ud, int status)
{
    api_endpoints__run_t *run = ud;
    hogql_t *h = run->state;
    if (status == 0)
        api_store_endpoint_executed(run->call->ctx->db, run->endpoint_id, on_executed, NULL);
    h->paged(run, status, NULL);
}

static void on_executed(int status, const cm_db_res_t *res, void *ud)
{
    (void)status;
    (void)res;
    (void)ud;
}

/* With debug, the query and the SQL it compiled to. */
static void tail(api_endpoints__run_t *run, cm_json_writer_t *w)
{
    hogql_t *h = run->state;
    if (!run->debug)
        return;
    cm_json_key(w, "hogql");
    cm_json_value(w, cm_json_get(cm_json_root(run->stored), "query"));
    cm_json_key(w, "sql");
    cm_json_str_s(w, cm_buf_slice(&h->sql.sql));
}

static void hogql_free(void *p)
{
    hogql_t *h = p;
    for (size_t i = 0; h->param_text && i < h->sql.nparams; i++) /* before sql is freed */
        free(h->param_text[i]);
    free(h->param_text);
    free(h->param_types);
    api_query_free(h->q);
    api_query_sql_free(&h->sql);
    free(h);
}
