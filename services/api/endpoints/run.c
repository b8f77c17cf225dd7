/*
 * run.c - GET or POST /api/projects/{id}/endpoints/{name}/run
 * (docs/endpoints.md "Run"). The request is checked in PostHog's order
 * (endpoint, version, overrides, refresh, variables), the stored query is
 * compiled with the values for the event store, the answer is cached in
 * Redis per project, endpoint, version, values and page, and a cached
 * answer younger than the version's cache age is served as it is
 * (refresh "cache", the default; "force" recomputes).
 *
 * Never on the loop: the compile is microseconds for any accepted query
 * (bounded size and depth), the query runs on the store's side (SQLite on
 * the thread pool, ClickHouse over HTTP), with a time limit.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/arena.h"
#include "cm/digest.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/rediskeys.h"
#include "cm/strset.h"
#include "cm/timefmt.h"
#include "insights/insights.h"
#include "endpoints/endpoints.h"
#include "query/query.h"
#include "endpoints/endpoints_int.h"
#include "http/admit.h"
#include "query/variables.h"
#include "store/store.h"

#define DEFAULT_CACHE_AGE_S 3600                       /* a version without cache_age_seconds */
#define QUERY_TIMEOUT_MS    api_query_timeout_ms(call) /* QUERY_TIMEOUT */

typedef struct {
    char *name;
    char version[24]; /* asked for: "" for the current one */
    int refresh;      /* 0 cache, 1 force, 2 direct (past the materialized table) */
    bool debug;
    int64_t limit, offset;
    char *stored_text;     /* the version's query node, JSON (the doc borrows it) */
    cm_json_doc_t *stored; /* parsed */
    api_query_t *q;
    api_query_sql_t sql;
    cm_arena_t arena; /* variable values */
    const char **names;
    api_query_value_t *values;
    size_t nvars;
    char cache_key[96];
    int cache_age;
    char endpoint_id[40], version_created[24];
    long long version_n;
    char **param_text; /* SQLite parameters as text */
    char *param_types;
    char *mat_table, *mat_info, *mat_at; /* a fresh materialized table to read */
} run_t;

static void run_free(void *p)
{
    run_t *r = p;
    for (size_t i = 0; r->param_text && i < r->sql.nparams; i++) /* before sql is freed */
        free(r->param_text[i]);
    free(r->param_text);
    free(r->param_types);
    free(r->mat_table);
    free(r->mat_info);
    free(r->mat_at);
    free(r->name);
    cm_json_doc_free(r->stored);
    free(r->stored_text);
    api_query_free(r->q);
    api_query_sql_free(&r->sql);
    cm_arena_free(&r->arena);
    free(r->names);
    free(r->values);
    free(r);
}

/* ---- the answer ------------------------------------------------------------------------------ */

/* One value read by its column's type, so that both stores answer alike. */
void api_endpoints__write_value(cm_json_writer_t *w, const char *type, const char *v)
{
    if (v == NULL) {
        cm_json_null(w);
        return;
    }
    const char *t = strncmp(type, "Nullable(", 9) == 0 ? type + 9 : type;
    if (strncmp(t, "Int64", 5) == 0 || strncmp(t, "UInt8", 5) == 0) {
        char *end;
        long long n = strtoll(v, &end, 10);
        if (*end == '\0' && end != v)
            cm_json_int(w, n);
        else if (*end == '.' || *end == 'e' || *end == 'E') /* a float the store kept */
            cm_json_dbl(w, strtod(v, NULL));
        else
            cm_json_str_cstr(w, v);
        return;
    }
    if (strncmp(t, "Float64", 7) == 0) {
        char *end;
        double d = strtod(v, &end);
        if (end == v || *end != '\0' || !isfinite(d))
            cm_json_null(w); /* nan (ClickHouse's avg of nothing), inf */
        else
            cm_json_dbl(w, d);
        return;
    }
    /* ClickHouse 18.16 prints the epoch as zeros */
    if (strncmp(t, "DateTime", 8) == 0 && strcmp(v, "0000-00-00 00:00:00") == 0)
        v = "1970-01-01 00:00:00";
    if (strncmp(t, "Date", 4) == 0 && strcmp(v, "0000-00-00") == 0)
        v = "1970-01-01";
    if (strncmp(t, "DateTime", 8) == 0 && strlen(v) == 19 && v[10] == ' ') {
        char iso[24];
        snprintf(iso, sizeof(iso), "%.10sT%.8sZ", v, v + 11);
        cm_json_str_cstr(w, iso);
        return;
    }
    cm_json_str_cstr(w, v);
}

/* The response: page is "{" and the answer's members (from the store or
 * the cache), taken over; the run's own members and the brace follow. */
static void respond(api_call_t *call, run_t *r, cm_buf_t *page, bool cached, const char *when)
{
    cm_buf_t tail = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &tail);
    cm_json_begin_object(&w);
    cm_json_key(&w, "is_cached");
    cm_json_boolean(&w, cached);
    cm_json_key(&w, "last_refresh");
    cm_json_str_cstr(&w, when);
    cm_json_key(&w, "cache_target_age");
    cm_json_int(&w, r->cache_age);
    cm_json_key(&w, "timezone");
    cm_json_str_cstr(&w, "UTC");
    cm_json_key(&w, "endpoint_version");
    cm_json_int(&w, r->version_n);
    cm_json_key(&w, "endpoint_version_created_at");
    api_json_time(&w, r->version_created);
    if (r->debug) {
        cm_json_key(&w, "hogql");
        cm_json_value(&w, cm_json_get(cm_json_root(r->stored), "query"));
        cm_json_key(&w, "sql");
        cm_json_str_s(&w, cm_buf_slice(&r->sql.sql));
    }
    cm_json_end_object(&w);
    /* results first, as PostHog's */
    cm_buf_putc(page, ',');
    cm_buf_append(page, tail.p + 1, tail.len - 1);
    cm_buf_free(&tail);
    api_respond_json(call, 200, page);
}

static void on_executed(int status, const cm_db_res_t *res, void *ud)
{
    (void)status;
    (void)res;
    (void)ud;
}

/* The page is written (CM_ETOOBIG: its JSON is past the cap). */
static void on_page(api_call_t *call, int status, cm_buf_t *page)
{
    run_t *r = call->state;
    if (status != 0) {
        api_endpoints__answer_too_big(call);
        return;
    }
    char when[CM_ISO8601_MAX];
    cm_iso8601_format(cm_now_us(), 3, when);
    api_endpoints__cache_put(call, r->cache_key, when, (cm_slice_t){page->p + 1, page->len - 1},
                             r->cache_age);
    api_store_endpoint_executed(call->ctx->db, r->endpoint_id, on_executed, NULL);
    respond(call, r, page, false, when);
}

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_call_t *call = ud;
    run_t *r = call->state;
    if (api_endpoints__query_failed(call, status, err, QUERY_TIMEOUT_MS))
        return;
    api_endpoints__page(call, &r->sql, rows, call->ctx->cfg.answer_max_bytes, on_page);
}

/* SQLite's parameters as text with their types (cm_evstore_select). */
static void prepare_params(run_t *r)
{
    r->param_text = cm_xcalloc(r->sql.nparams + 1, sizeof(char *));
    r->param_types = cm_xcalloc(r->sql.nparams + 1, 1);
    api_query_params_text(&r->sql, r->param_text, r->param_types);
}

static void execute(api_call_t *call, run_t *r)
{
    size_t n = r->sql.nparams;
    cm_evstore_select_t q = {
        .sql = cm_buf_cstr(&r->sql.sql),
        .params = (const char *const *)r->param_text,
        .types = r->param_types,
        .nparams = (int)n,
        .timeout_ms = QUERY_TIMEOUT_MS,
        .max_bytes = call->ctx->cfg.answer_max_bytes,
    };
    api_query_select(call, &q, on_rows, call);
}

static int compile(api_call_t *call, run_t *r);

static void on_cache_get(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    api_call_t *call = ud;
    run_t *r = call->state;
    (void)rd;
    char when[48];
    cm_slice_t page;
    if (api_endpoints__cache_hit(reply, err, when, &page)) {
        cm_buf_t b = CM_BUF_INIT;
        cm_buf_putc(&b, '{');
        cm_buf_append(&b, page.p, page.len);
        respond(call, r, &b, true, when);
        return;
    }
    /* a miss, or Redis away: the store answers (compiled now if the
     * memo gave the key) */
    if (r->q == NULL && compile(call, r) != 0)
        return;
    execute(call, r);
}

/* ---- the request, checked -------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The values for the stored variables: the request's, else the stored
 * ones; every key of the request must be a variable; project_vars is the
 * run's read (api_store_endpoint_run_get: the variables' types). 0, or -1
 * answered. */
static int bind_values(api_call_t *call, run_t *r, const cm_db_res_t *project_vars)
{
    size_t n;
    api_endpoints__var_t *vars = api_endpoints__vars(r->stored, &n);
    cm_json_t given = cm_json_get(cm_json_root(call->body), "variables");
    if (cm_json_exists(given) && !cm_json_is_null(given) && cm_json_type(given) != CM_JSON_OBJECT) {
        api_respond_invalid(call, "variables", "Expected an object of variable values.");
        free(vars);
        return -1;
    }
    /* unknown names, sorted, in one message */
    if (cm_json_type(given) == CM_JSON_OBJECT) {
        size_t m = cm_json_len(given), nu = 0;
        char **unknown = cm_xcalloc(m + 1, sizeof(char *));
        cm_json_iter_t it = cm_json_iter(given);
        cm_json_t k, v;
        cm_buf_t scratch = CM_BUF_INIT;
        while (cm_json_next(&it, &k, &v)) {
            cm_slice_t key;
            cm_buf_reset(&scratch);
            if (cm_json_as_str(k, &scratch, &key) != 0)
                continue;
            bool known = false;
            for (size_t i = 0; i < n && !known; i++)
                known = cm_slice_eq(key, vars[i].code_name);
            if (!known)
                unknown[nu++] = (char *)cm_arena_dup(&r->arena, key).p;
        }
        cm_buf_free(&scratch);
        if (nu > 0) {
            qsort(unknown, nu, sizeof(char *), cmp_str);
            cm_buf_t list = CM_BUF_INIT;
            for (size_t i = 0; i < nu; i++)
                cm_buf_appendf(&list, "%s%s", i ? ", " : "", unknown[i]);
            api_respond_invalid(call, "variables", "Unknown variable(s): %s", cm_buf_cstr(&list));
            cm_buf_free(&list); /* the call, r with it, is gone: return at once */
            free(unknown);
            free(vars);
            return -1;
        }
        free(unknown);
    }
    r->names = cm_xcalloc(n + 1, sizeof(char *));
    r->values = cm_xcalloc(n + 1, sizeof(*r->values));
    r->nvars = n;
    for (size_t i = 0; i < n; i++) {
        cm_slice_t code = cm_arena_dup(&r->arena, vars[i].code_name);
        cm_json_t v = cm_json_get_s(given, code);
        bool from_request = cm_json_exists(v);
        if (!from_request)
            v = vars[i].value;
        if (!cm_json_exists(v) || cm_json_is_null(v)) {
            api_respond_invalid(call, "variables", "Required variable '%s' not provided", code.p);
            free(vars);
            return -1; /* r is gone with the call */
        }
        int type = -1;
        for (size_t j = 0; j < cm_db_nrows(project_vars, 0); j++) {
            const char *id = cm_db_value(project_vars, 0, j, API_ENDPOINT_RUN_VAR_ID);
            if (id != NULL && cm_slice_eq_cstr(vars[i].id, id))
                type =
                    api_variable_type(cm_db_value(project_vars, 0, j, API_ENDPOINT_RUN_VAR_TYPE));
        }
        char why[160];
        if (from_request && type >= 0 && !api_variable_fits(type, v, why, sizeof(why))) {
            api_respond_invalid(call, "variables", "Variable '%s': %s", code.p, why);
            free(vars);
            return -1;
        }
        r->names[i] = code.p;
        api_variable_value(v, &r->arena, &r->values[i]);
    }
    free(vars);
    return 0;
}

/* The cache key: the endpoint, version, store, page, SQL and parameters
 * (their types and values), each field length-prefixed; the project is in
 * the key's name. */
static void cache_key(api_call_t *call, run_t *r)
{
    cm_buf_t b = CM_BUF_INIT;
    char num[96];
    api_endpoints__key_field_c(&b, "hogql");
    api_endpoints__key_field_c(&b, r->endpoint_id);
    snprintf(num, sizeof(num), "%lld %d %lld %lld", r->version_n,
             (int)cm_evstore_kind(call->ctx->events), (long long)r->sql.limit,
             (long long)r->sql.offset);
    api_endpoints__key_field_c(&b, num);
    api_endpoints__key_field(&b, r->sql.sql.p, r->sql.sql.len);
    for (size_t i = 0; i < r->sql.nparams; i++) {
        char type = r->param_types ? r->param_types[i] : '-';
        api_endpoints__key_field(&b, &type, 1);
        api_endpoints__key_field_c(&b, r->param_text ? r->param_text[i] : NULL);
    }
    api_endpoints__key_name(&b, call->project_id, r->cache_key);
    cm_buf_free(&b);
}

/* ---- the compiled runs' memo ---------------------------------------------------------------- */

#define MEMO_MAX 4096 /* entries; emptied when full (each lives as its version does) */

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

/* Everything a compile reads, so that equal keys print equal SQL: the
 * project, the endpoint and version, the stored query's text, the store,
 * the page asked for and the bound values by name. */
static void memo_key(api_call_t *call, const run_t *r, cm_buf_t *k)
{
    int64_t nums[] = {atoll(call->project_id),
                      r->version_n,
                      r->limit,
                      r->offset,
                      (int64_t)cm_evstore_kind(call->ctx->events),
                      (int64_t)r->nvars};
    cm_buf_append(k, nums, sizeof(nums));
    cm_buf_append(k, r->endpoint_id, strlen(r->endpoint_id) + 1);
    cm_buf_append(k, cm_evstore_server_version(call->ctx->events),
                  strlen(cm_evstore_server_version(call->ctx->events)) + 1);
    cm_buf_append(k, r->stored_text, strlen(r->stored_text) + 1);
    for (size_t i = 0; i < r->nvars; i++) {
        cm_buf_append(k, r->names[i], strlen(r->names[i]) + 1);
        memo_value(k, &r->values[i]);
    }
}

static void memo_put(api_ctx_t *ctx, const cm_buf_t *key, const char *cache_key)
{
    if (ctx->run_memo && cm_strset_count(ctx->run_memo) >= MEMO_MAX) {
        cm_strset_free_with(ctx->run_memo, free);
        ctx->run_memo = NULL;
    }
    if (ctx->run_memo == NULL)
        ctx->run_memo = cm_strset_new(256);
    free(cm_strset_put(ctx->run_memo, cm_buf_slice(key), cm_xstrdup(cache_key)));
}

/* ---- compiling and running ------------------------------------------------------------------- */

/* The stored query, compiled with the values into r->sql and its
 * parameters. 0, or -1 answered. */
static int compile(api_call_t *call, run_t *r)
{
    cm_json_t text = cm_json_get(cm_json_root(r->stored), "query");
    cm_buf_t scratch = CM_BUF_INIT, err = CM_BUF_INIT;
    cm_slice_t s = CM_SLICE_NULL;
    int rc = -1;
    if (cm_json_as_str(text, &scratch, &s) != 0 || api_query_parse(s.p, s.len, &r->q, &err) != 0) {
        api_respond_invalid(call, "query", "Invalid HogQL query: %.*s", (int)err.len, err.p);
        goto done;
    }
    cm_evstore_dialect_t d = cm_evstore_dialect(call->ctx->events);
    api_query_print_opts_t o = {
        .dialect = d == CM_EVSTORE_SQL_SQLITE ? API_QUERY_SQLITE : API_QUERY_CLICKHOUSE,
        .clickhouse_modern = d == CM_EVSTORE_SQL_CLICKHOUSE_MODERN,
        .project_id = atoll(call->project_id),
        .var_names = r->names,
        .var_values = r->values,
        .nvars = r->nvars,
        .limit = r->limit,
        .offset = r->offset,
    };
    if (api_query_print(r->q, &o, &r->sql, &err) != 0) {
        api_respond_invalid(call, NULL, "Query execution failed: %.*s", (int)err.len, err.p);
        goto done;
    }
    prepare_params(r);
    rc = 0;
done:
    cm_buf_free(&scratch);
    cm_buf_free(&err);
    return rc;
}

/* A cached run asks Redis first. The Redis key is a hash of the SQL and
 * its parameters, so it needs a compile, unless the memo knows the key for
 * this version and these values: then a cached answer costs no parse,
 * print or hash, and a miss compiles before it runs. */
static void compile_and_run(api_call_t *call, run_t *r)
{
    cm_buf_t key = CM_BUF_INIT;
    memo_key(call, r, &key);
    const char *known = call->ctx->run_memo && r->refresh == 0 && !r->debug
                            ? cm_strset_get(call->ctx->run_memo, cm_buf_slice(&key))
                            : NULL;
    if (known) {
        snprintf(r->cache_key, sizeof(r->cache_key), "%s", known);
    } else {
        if (compile(call, r) != 0)
            goto done;
        cache_key(call, r);
        memo_put(call->ctx, &key, r->cache_key);
    }
    if (r->refresh == 0)
        cm_redis_command(call->ctx->redis, on_cache_get, call, "GET %s", r->cache_key);
    else
        execute(call, r);
done:
    cm_buf_free(&key);
}

/* ---- loading the endpoint -------------------------------------------------------------------- */

/* A materialized read that could not answer: the query itself. */
static void run_inline(api_call_t *call)
{
    compile_and_run(call, call->state);
}

/* The version to run is read: checks, then the variables' types. */
static void on_version(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    run_t *r = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
#define V(col) cm_db_value(res, 0, 0, col)
    if (cm_db_nrows(res, 0) == 0) { /* the endpoint was there a moment ago */
        api_respond_not_found(call);
        return;
    }
    r->version_n = atoll(V(API_ENDPOINT_VERSION));
    if (atoi(V(API_ENDPOINT_VERSION_ACTIVE)) == 0) {
        api_respond_invalid(call, "version", "Version %lld is inactive and cannot be executed.",
                            r->version_n);
        return;
    }
    snprintf(r->endpoint_id, sizeof(r->endpoint_id), "%s", V(API_ENDPOINT_ID));
    snprintf(r->version_created, sizeof(r->version_created), "%s", V(API_ENDPOINT_VERSION_CREATED));
    r->cache_age =
        V(API_ENDPOINT_CACHE_AGE) ? atoi(V(API_ENDPOINT_CACHE_AGE)) : DEFAULT_CACHE_AGE_S;
    /* the row lives only during this callback; the document borrows its text */
    r->stored_text = cm_xstrdup(V(API_ENDPOINT_QUERY));
    if (cm_json_parse(r->stored_text, strlen(r->stored_text), NULL, &r->stored, NULL) != 0) {
        api_respond_invalid(call, "query", "The stored query cannot be read.");
        return;
    }
    bool materialized = V(API_ENDPOINT_MATERIALIZED) && atoi(V(API_ENDPOINT_MATERIALIZED)) == 1;
    if (r->refresh == 2 && !materialized) {
        api_respond_invalid(call, "refresh",
                            "'direct' refresh mode is only valid for materialized endpoints. "
                            "Use 'cache' or 'force' instead, or enable materialization on this "
                            "endpoint.");
        return;
    }
    const char *st = V(API_ENDPOINT_MAT_STATUS), *at = V(API_ENDPOINT_MAT_AT);
    char now[24];
    api_store_now(now);
    if (materialized && r->refresh != 2 && st && strcmp(st, "Completed") == 0 &&
        V(API_ENDPOINT_MAT_TABLE) && at &&
        atoll(now) < atoll(at) + api_endpoints_period_ms(V(API_ENDPOINT_SYNC_FREQUENCY))) {
        r->mat_table = cm_xstrdup(V(API_ENDPOINT_MAT_TABLE));
        r->mat_info = V(API_ENDPOINT_MAT_INFO) ? cm_xstrdup(V(API_ENDPOINT_MAT_INFO)) : NULL;
        r->mat_at = cm_xstrdup(at);
    }
    if (api_insight_kind(cm_json_root(r->stored))) {
        api_endpoints__insight_t how = {.version_n = r->version_n,
                                        .cache_age = r->cache_age,
                                        .refresh = r->refresh,
                                        .materialized = materialized,
                                        .mat_table = r->mat_table,
                                        .mat_info = r->mat_info,
                                        .mat_at = r->mat_at};
        snprintf(how.endpoint_id, sizeof(how.endpoint_id), "%s", r->endpoint_id);
        snprintf(how.version_created, sizeof(how.version_created), "%s", r->version_created);
        snprintf(how.timezone, sizeof(how.timezone), "%s",
                 V(API_ENDPOINT_RUN_TIMEZONE) ? V(API_ENDPOINT_RUN_TIMEZONE) : "UTC");
        api_endpoints__run_insight(call, &how, r->stored_text);
        return;
    }
#undef V
    /* the variables' types came with the endpoint: no second read */
    if (bind_values(call, r, res) != 0)
        return;
    if (r->mat_table == NULL) {
        compile_and_run(call, r);
        return;
    }
    api_endpoints__mat_read_t how = {.table = r->mat_table,
                                     .info = r->mat_info,
                                     .at = r->mat_at,
                                     .names = r->names,
                                     .values = r->values,
                                     .nvars = r->nvars,
                                     .limit = r->limit,
                                     .offset = r->offset,
                                     .cache_age = r->cache_age,
                                     .version_n = r->version_n,
                                     .version_created = r->version_created};
    api_endpoints__run_materialized(call, &how, run_inline);
}

/* The endpoint (its current version) is read. */
static void on_endpoint(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    run_t *r = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) == 0 || atoi(cm_db_value(res, 0, 0, API_ENDPOINT_ACTIVE)) == 0) {
        api_respond_not_found(call);
        return;
    }
    const char *current = cm_db_value(res, 0, 0, API_ENDPOINT_CURRENT_VERSION);
    if (r->version[0] && atoll(r->version) > atoll(current)) {
        cm_buf_t b = CM_BUF_INIT, msg = CM_BUF_INIT;
        cm_json_writer_t w;
        cm_json_writer_init(&w, &b);
        cm_json_begin_object(&w);
        cm_json_key(&w, "error");
        cm_buf_appendf(&msg, "Version %s not found for endpoint '%s'", r->version, r->name);
        cm_json_str_s(&w, cm_buf_slice(&msg));
        cm_json_key(&w, "current_version");
        cm_json_int(&w, atoll(current));
        cm_json_end_object(&w);
        cm_buf_free(&msg);
        api_respond_json(call, 404, &b);
        return;
    }
    if (r->version[0] == '\0' || strcmp(r->version, current) == 0) {
        on_version(0, res, call);
        return;
    }
    api_store_endpoint_run_get(call->ctx->db, call->project_id, r->name, r->version,
                               (unsigned)call->ctx->cfg.read_cache_ms, on_version, call);
}

/* The body's options, in PostHog's order of checks. 0, or -1 answered. */
static int parse_options(api_call_t *call, run_t *r)
{
    cm_json_t root = cm_json_root(call->body), v;
    if (r->version[0] == '\0' && cm_json_exists(v = cm_json_get(root, "version")) &&
        !cm_json_is_null(v)) {
        int64_t n;
        if (cm_json_as_int64(v, &n) != 0 || n < 1) {
            api_endpoints__error(call, 400, "Invalid version parameter: %.*s",
                                 (int)(cm_json_raw(v).len > 40 ? 40 : cm_json_raw(v).len),
                                 cm_json_raw(v).p);
            return -1;
        }
        snprintf(r->version, sizeof(r->version), "%lld", (long long)n);
    }
    if (cm_json_exists(cm_json_get(root, "query_override"))) {
        api_respond_invalid(call, "query_override",
                            "query_override is not allowed. Use variables instead.");
        return -1;
    }
    if (cm_json_exists(cm_json_get(root, "filters_override"))) {
        api_respond_invalid(call, "filters_override",
                            "filters_override is not allowed. Use variables instead.");
        return -1;
    }
    if (cm_json_exists(v = cm_json_get(root, "refresh")) && !cm_json_is_null(v)) {
        if (cm_json_str_eq(v, CM_SLICE_LIT("force")))
            r->refresh = 1;
        else if (cm_json_str_eq(v, CM_SLICE_LIT("direct")))
            r->refresh = 2; /* checked once the version is known */
        else if (!cm_json_str_eq(v, CM_SLICE_LIT("cache"))) {
            api_respond_invalid(
                call, "refresh", "\"%.*s\" is not a valid choice: cache, force or direct.",
                (int)(cm_json_raw(v).len > 40 ? 40 : cm_json_raw(v).len), cm_json_raw(v).p);
            return -1;
        }
    }
    bool b;
    if (cm_json_exists(v = cm_json_get(root, "debug")) && cm_json_as_bool(v, &b) == 0)
        r->debug = b;
    if (cm_json_exists(v = cm_json_get(root, "limit")) && !cm_json_is_null(v)) {
        if (cm_json_as_int64(v, &r->limit) != 0 || r->limit < 1) {
            api_respond_invalid(call, "limit", "Ensure this value is greater than or equal to 1.");
            return -1;
        }
    }
    if (cm_json_exists(v = cm_json_get(root, "offset")) && !cm_json_is_null(v)) {
        if (cm_json_as_int64(v, &r->offset) != 0 || r->offset < 0) {
            api_respond_invalid(call, "offset", "Ensure this value is greater than or equal to 0.");
            return -1;
        }
    }
    return 0;
}

void api_endpoints_run(api_call_t *call)
{
    run_t *r = cm_xcalloc(1, sizeof(*r));
    r->arena = CM_ARENA_INIT;
    call->state = r;
    call->state_free = run_free;
    cm_slice_t n = cm_http_req_param(call->req, "name");
    if (!api_endpoints__name_valid(n)) {
        api_respond_not_found(call);
        return;
    }
    r->name = cm_xmalloc(n.len + 1);
    memcpy(r->name, n.p, n.len);
    r->name[n.len] = '\0';
    if (api_endpoints__version_param(call, r->version) < 0 || api_call_body(call) < 0 ||
        parse_options(call, r) < 0)
        return;
    api_store_endpoint_run_get(call->ctx->db, call->project_id, r->name, NULL,
                               (unsigned)call->ctx->cfg.read_cache_ms, on_endpoint, call);
}
