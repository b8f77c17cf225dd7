/*
 * run.c - GET or POST /api/projects/{id}/endpoints/{name}/run
 * (docs/endpoints.md "Run"): the driver of a run. It checks the request in
 * PostHog's order (endpoint, version, overrides, refresh, variables),
 * loads the version, then asks its sources in turn (endpoints_int.h): for
 * a HogQL version its materialized table (run_table.c) and the query
 * itself (run_hogql.c), for an insight version its table and its queries
 * (run_insight.c). Whichever answers, the driver does the rest once: the
 * cached answer looked up and kept (Redis, per project, under the key the
 * source names; a cached answer younger than the version's cache age is
 * served as it is with refresh "cache", the default; "force" recomputes),
 * the envelope (the answer's members after the page) and the mapping of a
 * failed query to its answer.
 *
 * Never on the loop: the sources compile in microseconds for any accepted
 * query (bounded size and depth), the queries run on the store's side
 * (SQLite on the thread pool, ClickHouse over HTTP) with a time limit, and
 * a big page is written on the thread pool (page.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/api_error.h"
#include "cm/err.h"
#include "cm/timefmt.h"
#include "endpoints/endpoints.h"
#include "endpoints/endpoints_int.h"
#include "http/admit.h"
#include "insights/insights.h"
#include "metrics.h"
#include "query/variables.h"
#include "store/store.h"

#define DEFAULT_CACHE_AGE_S 3600                       /* a version without cache_age_seconds */
#define QUERY_TIMEOUT_MS    api_query_timeout_ms(call) /* QUERY_TIMEOUT */

static const api_endpoints__source_t *const hogql_sources[] = {&api_endpoints__table,
                                                               &api_endpoints__hogql, NULL};
static const api_endpoints__source_t *const insight_sources[] = {&api_endpoints__insight_table,
                                                                 &api_endpoints__insight, NULL};

/* in the order a request flows */
static int parse_options(api_call_t *call, api_endpoints__run_t *r);
static void on_endpoint(int status, const cm_db_res_t *res, void *ud);
static void on_version(int status, const cm_db_res_t *res, void *ud);
static int load_version(api_call_t *call, api_endpoints__run_t *r, const cm_db_res_t *res);
static int bind_values(api_call_t *call, api_endpoints__run_t *r, const cm_db_res_t *project_vars);
static int cmp_str(const void *a, const void *b);
static void next_source(api_endpoints__run_t *r);
static void on_cache_get(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud);
static void on_executed(api_endpoints__run_t *r, int status, const char *err);
static void on_paged(api_endpoints__run_t *r, int status, const char *err);
static void envelope(api_endpoints__run_t *r, cm_json_writer_t *w, bool cached, const char *when);
static void failed(api_endpoints__run_t *r, int status, const char *err);
static void run_free(void *p);
static void note_run(api_endpoints__run_t *r, cm_counter_t *result);

/* ---- the request ----------------------------------------------------------------------------- */

void api_endpoints_run(api_call_t *call)
{
    api_endpoints__run_t *r = cm_xcalloc(1, sizeof(*r));
    r->call = call;
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

/* The body's options, in PostHog's order of checks. 0, or -1 answered. */
static int parse_options(api_call_t *call, api_endpoints__run_t *r)
{
    cm_json_t root = cm_json_root(call->body), v;
    if (r->version[0] == '\0' && cm_json_exists(v = cm_json_get(root, "version")) &&
        !cm_json_is_null(v)) {
        int64_t n;
        if (cm_json_as_int64(v, &n) != 0 || n < 1) {
            api_endpoints__error(call, 400, "version", "Invalid version parameter: %.*s",
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
            /* DRF's words: the value in one pair of quotes, so a string's
             * text between the quotes it has, anything else as written */
            cm_slice_t shown =
                cm_json_type(v) == CM_JSON_STRING ? cm_json_str_inner(v) : cm_json_raw(v);
            api_respond_invalid(call, "refresh",
                                "\"%.*s\" is not a valid choice: cache, force or direct.",
                                (int)(shown.len > 40 ? 40 : shown.len), shown.p);
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

/* ---- the endpoint and its version ------------------------------------------------------------ */

/* The endpoint (its current version) is read. */
static void on_endpoint(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    api_endpoints__run_t *r = call->state;
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
        /* the envelope of every error, and the version there is */
        cm_json_begin_object(&w);
        cm_json_key(&w, "type");
        cm_json_str_cstr(&w, CM_ERR_INVALID_REQUEST);
        cm_json_key(&w, "code");
        cm_json_str_cstr(&w, "not_found");
        cm_json_key(&w, "detail");
        cm_buf_appendf(&msg, "Version %s not found for endpoint '%s'", r->version, r->name);
        cm_json_str_s(&w, cm_buf_slice(&msg));
        cm_json_key(&w, "attr");
        cm_json_str_cstr(&w, "version");
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

/* The version to run is read: checks, then the sources for its kind. */
static void on_version(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    api_endpoints__run_t *r = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) == 0) { /* the endpoint was there a moment ago */
        api_respond_not_found(call);
        return;
    }
    if (load_version(call, r, res) != 0)
        return;
    if (api_insight_kind(cm_json_root(r->stored))) {
        r->sources = insight_sources;
    } else {
        /* the variables' types came with the endpoint: no second read */
        if (bind_values(call, r, res) != 0)
            return;
        r->sources = hogql_sources;
    }
    next_source(r);
}

/* The version's row, into r (the row lives only during the callback).
 * 0, or -1 answered. */
static int load_version(api_call_t *call, api_endpoints__run_t *r, const cm_db_res_t *res)
{
#define V(col) cm_db_value(res, 0, 0, col)
    r->version_n = atoll(V(API_ENDPOINT_VERSION));
    if (atoi(V(API_ENDPOINT_VERSION_ACTIVE)) == 0) {
        api_respond_invalid(call, "version", "Version %lld is inactive and cannot be executed.",
                            r->version_n);
        return -1;
    }
    snprintf(r->endpoint_id, sizeof(r->endpoint_id), "%s", V(API_ENDPOINT_ID));
    snprintf(r->version_created, sizeof(r->version_created), "%s", V(API_ENDPOINT_VERSION_CREATED));
    snprintf(r->timezone, sizeof(r->timezone), "%s",
             V(API_ENDPOINT_RUN_TIMEZONE) ? V(API_ENDPOINT_RUN_TIMEZONE) : "UTC");
    r->week_start = V(API_ENDPOINT_RUN_WEEK_START) && atoi(V(API_ENDPOINT_RUN_WEEK_START)) == 1;
    r->cache_age =
        V(API_ENDPOINT_CACHE_AGE) ? atoi(V(API_ENDPOINT_CACHE_AGE)) : DEFAULT_CACHE_AGE_S;
    /* the document borrows the text */
    r->stored_text = cm_xstrdup(V(API_ENDPOINT_QUERY));
    if (cm_json_parse(r->stored_text, strlen(r->stored_text), NULL, &r->stored, NULL) != 0) {
        api_respond_invalid(call, "query", "The stored query cannot be read.");
        return -1;
    }
    r->materialized = V(API_ENDPOINT_MATERIALIZED) && atoi(V(API_ENDPOINT_MATERIALIZED)) == 1;
    if (r->refresh == 2 && !r->materialized) {
        api_respond_invalid(call, "refresh",
                            "'direct' refresh mode is only valid for materialized endpoints. "
                            "Use 'cache' or 'force' instead, or enable materialization on this "
                            "endpoint.");
        return -1;
    }
    /* a table is read only while fresh: built, and younger than its period */
    const char *st = V(API_ENDPOINT_MAT_STATUS), *at = V(API_ENDPOINT_MAT_AT);
    char now[24];
    api_store_now(now);
    if (r->materialized && r->refresh != 2 && st && strcmp(st, "Completed") == 0 &&
        V(API_ENDPOINT_MAT_TABLE) && at &&
        atoll(now) < atoll(at) + api_endpoints_period_ms(V(API_ENDPOINT_SYNC_FREQUENCY))) {
        r->mat_table = cm_xstrdup(V(API_ENDPOINT_MAT_TABLE));
        r->mat_info = V(API_ENDPOINT_MAT_INFO) ? cm_xstrdup(V(API_ENDPOINT_MAT_INFO)) : NULL;
        r->mat_at = cm_xstrdup(at);
    }
#undef V
    return 0;
}

/* The values for a HogQL version's variables: the request's, else the
 * stored ones; every key of the request must be a variable; project_vars
 * is the run's read (api_store_endpoint_run_get: the variables' types).
 * 0, or -1 answered. */
static int bind_values(api_call_t *call, api_endpoints__run_t *r, const cm_db_res_t *project_vars)
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- the sources ----------------------------------------------------------------------------- */

/* The next source names its answer: looked up in Redis, else executed;
 * one that declines gives way to the next (the last never declines). */
static void next_source(api_endpoints__run_t *r)
{
    api_call_t *call = r->call;
    for (;;) {
        if (r->src != NULL && r->state != NULL)
            r->src->free(r->state);
        r->state = NULL;
        r->zone_name = r->built_at = NULL;
        r->src = *r->sources++;
        if (r->src == NULL) { /* cannot be: the last source of each kind never declines */
            api_endpoints__fail(r, NULL, "Query execution failed: no way to run this version.");
            failed(r, API_ENDPOINTS__FAILED, NULL);
            return;
        }
        int rc = r->src->key(r, r->cache_key);
        if (rc == API_ENDPOINTS__ANSWERED)
            return; /* the call, r with it, is gone */
        if (rc == API_ENDPOINTS__FAILED) {
            failed(r, rc, NULL);
            return;
        }
        if (rc == API_ENDPOINTS__DECLINED)
            continue;
        break;
    }
    if (r->refresh == 0 && r->cache_key[0])
        cm_redis_command(call->ctx->redis, on_cache_get, call, "GET %s", r->cache_key);
    else
        r->src->execute(r, on_executed);
}

/* A cached answer is served as it is; a miss, or Redis away: the source
 * executes. */
static void on_cache_get(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    api_call_t *call = ud;
    api_endpoints__run_t *r = call->state;
    (void)rd;
    char when[48];
    cm_slice_t page;
    if (!api_endpoints__cache_hit(reply, err, when, &page)) {
        cm_counter_inc(call->ctx->m->cache_miss);
        r->cache_result = "miss";
        r->src->execute(r, on_executed);
        return;
    }
    cm_counter_inc(call->ctx->m->cache_hit);
    r->cache_result = "hit";
    note_run(r, call->ctx->m->runs_cached);
    cm_json_writer_init(&r->w, &r->out);
    cm_json_begin_object(&r->w);
    cm_json_members_raw(&r->w, page); /* results first, as PostHog's */
    envelope(r, &r->w, true, when);
    api_respond_json(call, 200, &r->out);
}

/* The source's reads are done: its page into the answer, or the next. */
static void on_executed(api_endpoints__run_t *r, int status, const char *err)
{
    if (status == API_ENDPOINTS__DECLINED) {
        next_source(r);
        return;
    }
    if (status != 0) {
        failed(r, status, err);
        return;
    }
    cm_json_writer_init(&r->w, &r->out);
    cm_json_begin_object(&r->w);
    r->src->page(r, &r->w, on_paged);
}

/* The page is written, its object left open: kept in the cache, then the
 * envelope's members close it. */
static void on_paged(api_endpoints__run_t *r, int status, const char *err)
{
    api_call_t *call = r->call;
    if (status != 0) {
        failed(r, status, err);
        return;
    }
    char when[CM_ISO8601_MAX];
    cm_iso8601_format(cm_now_us(), 3, when);
    if (r->cache_key[0])
        api_endpoints__cache_put(call, r->cache_key, when, &r->out, r->cache_age);
    envelope(r, &r->w, false, when);
    note_run(r, call->ctx->m->runs_ok);
    api_respond_json(call, 200, &r->out);
}

/* A run that reached its sources, counted by result and described on the
 * request's access line: the endpoint, its version, whether it is
 * materialized and whether its table answered, the cache's part. */
static void note_run(api_endpoints__run_t *r, cm_counter_t *result)
{
    cm_http_req_t *req = r->call->req;
    char version[24];
    cm_counter_inc(result);
    snprintf(version, sizeof(version), "%lld", (long long)r->version_n);
    cm_http_req_log_field(req, "endpoint", r->name);
    cm_http_req_log_field(req, "endpoint_version", version);
    cm_http_req_log_field(req, "materialized", r->materialized ? "true" : "false");
    bool hit = r->cache_result && strcmp(r->cache_result, "hit") == 0;
    cm_http_req_log_field(req, "answered_by", hit ? "cache" : r->built_at ? "table" : "query");
    cm_http_req_log_field(req, "cache", r->cache_result ? r->cache_result : "skipped");
}

/* ---- the answer ------------------------------------------------------------------------------ */

/* The run's own members, after the page's. */
static void envelope(api_endpoints__run_t *r, cm_json_writer_t *w, bool cached, const char *when)
{
    cm_json_key(w, "is_cached");
    cm_json_boolean(w, cached);
    cm_json_key(w, "last_refresh");
    if (r->built_at)
        api_json_time(w, r->built_at);
    else
        cm_json_str_cstr(w, when);
    cm_json_key(w, "cache_target_age");
    cm_json_int(w, r->cache_age);
    cm_json_key(w, "timezone");
    cm_json_str_cstr(w, r->zone_name ? r->zone_name : "UTC");
    cm_json_key(w, "endpoint_version");
    cm_json_int(w, r->version_n);
    cm_json_key(w, "endpoint_version_created_at");
    api_json_time(w, r->version_created);
    if (r->src->tail)
        r->src->tail(r, w);
    cm_json_end_object(w);
}

/* A run that failed, answered: the source's own 400, or the store's
 * failure (never with the store's text: cache.c). */
static void failed(api_endpoints__run_t *r, int status, const char *err)
{
    api_call_t *call = r->call;
    if (status == API_ENDPOINTS__FAILED) {
        note_run(r, call->ctx->m->runs_invalid);
        api_respond_invalid(call, r->fail_attr, "%s", cm_buf_cstr(&r->fail));
        return;
    }
    note_run(r, call->ctx->m->runs_error);
    api_endpoints__query_failed(call, status, err, QUERY_TIMEOUT_MS);
}

void api_endpoints__fail(api_endpoints__run_t *run, const char *attr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cm_buf_reset(&run->fail);
    cm_buf_vappendf(&run->fail, fmt, ap);
    va_end(ap);
    run->fail_attr = attr;
}

static void run_free(void *p)
{
    api_endpoints__run_t *r = p;
    if (r->src != NULL && r->state != NULL)
        r->src->free(r->state);
    free(r->mat_table);
    free(r->mat_info);
    free(r->mat_at);
    free(r->name);
    cm_json_doc_free(r->stored);
    free(r->stored_text);
    cm_arena_free(&r->arena);
    free(r->names);
    free(r->values);
    cm_buf_free(&r->fail);
    cm_buf_free(&r->out);
    free(r);
}

/* ---- a value of an answer -------------------------------------------------------------------- */

/* One value read by its column's type, so that both stores answer alike. */
