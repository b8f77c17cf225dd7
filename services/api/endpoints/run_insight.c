/*
 * run_insight.c - the run of an insight endpoint (a stored
 * TrendsQuery or RetentionQuery; docs/insights.md): the variables checked
 * against what the insight accepts (its breakdown properties, date_from,
 * date_to; on a materialized version every breakdown property and no
 * date), then the insight's queries one after another on the event
 * store, each compiled by the HogQL compiler for it, or the version's
 * materialized table read (insights.h says how), and the answer in
 * PostHog's shape. Two sources of the run (endpoints_int.h): the table
 * (api_endpoints__insight_table), which declines when there is no fresh
 * table that fits this run or when its read fails (the table went away),
 * and the queries (api_endpoints__insight), which never declines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm/alloc.h"
#include "cm/digest.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/rediskeys.h"
#include "cm/timefmt.h"
#include "cm/tzone.h"
#include "insights/insights.h"
#include "query/query.h"
#include "query/table.h"
#include "endpoints/endpoints_int.h"
#include "http/admit.h"
#include "store/store.h"

#define QUERY_TIMEOUT_MS api_query_timeout_ms(call) /* QUERY_TIMEOUT */
#define MAX_VARS         8

typedef struct {
    api_endpoints__run_t *run;
    cm_tzone_t *zone;
    api_insight_t *in;
    api_query_t *q;
    api_query_sql_t sql;
    char **param_text;
    char *param_types;
    const char *mat_table, *mat_info; /* the run's */
    bool from_table;
    char cols[5][32]; /* the table's q, b, k, p, v as the store named them */
    char *vars_text;  /* a table read's variables (date_from pinned) */
    cm_json_doc_t *vars_doc;
    api_endpoints__done_fn done;
} ins_run_t;

static int key_table(api_endpoints__run_t *run, char out[96]);
static int key_queries(api_endpoints__run_t *run, char out[96]);
static int start(api_endpoints__run_t *run, bool table, char out[96]);
static int check_variables(api_call_t *call, cm_json_t query, cm_json_t vars);
static int cmp_slice(const void *a, const void *b);
static int materialized_rules(api_call_t *call, cm_json_t query, cm_json_t vars);
static bool table_plan(ins_run_t *r, int week_start, cm_json_t vars, int64_t *now_s,
                       cm_json_t *out);
static void cache_key(api_endpoints__run_t *run, ins_run_t *r, cm_json_t vars, char out[96]);
static void execute(api_endpoints__run_t *run, api_endpoints__done_fn done);
static void run_next(api_endpoints__run_t *run, ins_run_t *r);
static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud);
static const char *cell(const void *rows, size_t r, size_t c);
static void read_table(api_call_t *call, ins_run_t *r);
static void on_table_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud);
static const char *replay_cell(const void *p, size_t r, size_t c);
static void page(api_endpoints__run_t *run, cm_json_writer_t *w, api_endpoints__done_fn done);
static void tail(api_endpoints__run_t *run, cm_json_writer_t *w);
static void ins_run_free(void *p);

const api_endpoints__source_t api_endpoints__insight_table = {
    .key = key_table, .execute = execute, .page = page, .tail = tail, .free = ins_run_free};
const api_endpoints__source_t api_endpoints__insight = {
    .key = key_queries, .execute = execute, .page = page, .tail = tail, .free = ins_run_free};

static void params_free(ins_run_t *r)
{
    for (size_t i = 0; r->param_text && i < r->sql.nparams; i++)
        free(r->param_text[i]);
    free(r->param_text);
    free(r->param_types);
    r->param_text = NULL;
    r->param_types = NULL;
}

static void ins_run_free(void *p)
{
    ins_run_t *r = p;
    params_free(r);
    api_query_sql_free(&r->sql);
    api_query_free(r->q);
    api_insight_free(r->in);
    cm_tzone_free(r->zone);
    cm_json_doc_free(r->vars_doc);
    free(r->vars_text);
    free(r);
}

static const char *cell(const void *rows, size_t r, size_t c)
{
    return cm_evstore_value(rows, r, c);
}

static void on_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_endpoints__run_t *run = ud;
    ins_run_t *r = run->state;
    if (status != 0) {
        r->done(run, status, err);
        return;
    }
    cm_buf_t msg = CM_BUF_INIT;
    if ((int64_t)cm_evstore_nrows(rows) > r->sql.limit ||
        api_insight_rows(r->in, rows, cm_evstore_nrows(rows), cell, &msg) != 0) {
        api_endpoints__fail(run, NULL, "Query execution failed: %s",
                            msg.len ? cm_buf_cstr(&msg) : "too many rows: narrow the query");
        cm_buf_free(&msg);
        r->done(run, API_ENDPOINTS__FAILED, NULL);
        return;
    }
    cm_buf_free(&msg);
    run_next(run, r);
}

/* The next query of the insight, compiled for this store, or the answer. */
static void run_next(api_endpoints__run_t *run, ins_run_t *r)
{
    api_call_t *call = run->call;
    const char *const *names;
    const api_query_value_t *values;
    size_t nvalues;
    const char *hogql = api_insight_next(r->in, &names, &values, &nvalues);
    if (hogql == NULL) {
        r->done(run, 0, NULL);
        return;
    }
    params_free(r);
    api_query_sql_free(&r->sql);
    api_query_free(r->q);
    r->q = NULL;
    cm_buf_t err = CM_BUF_INIT;
    cm_evstore_dialect_t d = cm_evstore_dialect(call->ctx->events);
    api_query_print_opts_t o = {
        .dialect = d == CM_EVSTORE_SQL_SQLITE ? API_QUERY_SQLITE : API_QUERY_CLICKHOUSE,
        .clickhouse_version = api_query_ch_version(d),
        .project_id = atoll(call->project_id),
        .var_names = (const char **)names,
        .var_values = values,
        .nvars = nvalues,
        .limit = API_QUERY_MAX_ROWS,
    };
    if (api_query_parse(hogql, strlen(hogql), &r->q, &err) != 0 ||
        api_query_print(r->q, &o, &r->sql, &err) != 0) {
        /* ours, not the user's: the insight printed HogQL the compiler refused */
        cm_log(CM_LOG_ERROR, NULL, "insight query refused: %.*s: %s", (int)err.len, err.p, hogql);
        api_endpoints__fail(run, "query", "Query execution failed: %.*s", (int)err.len, err.p);
        cm_buf_free(&err);
        r->done(run, API_ENDPOINTS__FAILED, NULL);
        return;
    }
    cm_buf_free(&err);
    size_t n = r->sql.nparams;
    r->param_text = cm_xcalloc(n + 1, sizeof(char *));
    r->param_types = cm_xcalloc(n + 1, 1);
    api_query_params_text(&r->sql, r->param_text, r->param_types);
    cm_evstore_select_t q = {
        .sql = cm_buf_cstr(&r->sql.sql),
        .params = (const char *const *)r->param_text,
        .types = r->param_types,
        .nparams = (int)n,
        .timeout_ms = QUERY_TIMEOUT_MS,
        .max_bytes = call->ctx->cfg.answer_max_bytes,
    };
    api_query_select(call, &q, on_rows, run);
}

/* ---- from the materialized table ---- */

typedef struct {
    const cm_evstore_rows_t *rows;
    size_t from;
    int map[4];
} replay_t;

static const char *replay_cell(const void *p, size_t r, size_t c)
{
    const replay_t *x = p;
    return cm_evstore_value(x->rows, x->from + r, (size_t)x->map[c]);
}

/* The table's rows (ordered by q): each query of the plan answered by the
 * rows of its code. */
static void on_table_rows(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    api_endpoints__run_t *run = ud;
    ins_run_t *r = run->state;
    if (status == CM_ETOOBIG) {
        r->done(run, status, err);
        return;
    }
    if (status != 0) { /* the table went (a refresh dropped it): the queries themselves */
        cm_log(CM_LOG_WARN, NULL, "materialized insight read failed, run inline: %s",
               err ? err : "");
        r->done(run, API_ENDPOINTS__DECLINED, NULL);
        return;
    }
    size_t n = cm_evstore_nrows(rows);
    const char *const *names;
    const api_query_value_t *values;
    size_t nvalues;
    cm_buf_t msg = CM_BUF_INIT;
    while (api_insight_next(r->in, &names, &values, &nvalues) != NULL) {
        replay_t x = {.rows = rows};
        int code = api_insight_table_code(r->in, x.map);
        size_t i = 0;
        while (i < n && atoi(cm_evstore_value(rows, i, 0)) != code)
            i++;
        x.from = i;
        while (i < n && atoi(cm_evstore_value(rows, i, 0)) == code)
            i++;
        if (api_insight_rows(r->in, &x, i - x.from, replay_cell, &msg) != 0) {
            api_endpoints__fail(run, NULL, "Query execution failed: %s", cm_buf_cstr(&msg));
            cm_buf_free(&msg);
            r->done(run, API_ENDPOINTS__FAILED, NULL);
            return;
        }
    }
    cm_buf_free(&msg);
    r->done(run, 0, NULL);
}

static void read_table(api_call_t *call, ins_run_t *r)
{
    cm_buf_t sql = CM_BUF_INIT, key = CM_BUF_INIT;
    bool keyed = api_insight_table_key(r->in, &key);
    cm_slice_t k = cm_buf_slice(&key);
    const char *const cols[5] = {r->cols[0], r->cols[1], r->cols[2], r->cols[3], r->cols[4]};
    size_t nparams = api_query_table_insight(&sql, cm_evstore_dialect(call->ctx->events),
                                             r->mat_table, cols, keyed ? &k : NULL);
    const char *params[] = {cm_buf_cstr(&key)};
    cm_evstore_select_t q = {
        .sql = cm_buf_cstr(&sql),
        .params = params,
        .types = "t",
        .nparams = (int)nparams,
        .timeout_ms = QUERY_TIMEOUT_MS,
        .max_bytes = call->ctx->cfg.answer_max_bytes,
        .replicated = true, /* a materialized table */
    };
    api_query_select(call, &q, on_table_rows, call->state);
    cm_buf_free(&sql);
    cm_buf_free(&key);
}

/* The cache key: the endpoint, version, store, zone, week start, table and the
 * variables as given (a relative date range is as fresh as the cache age
 * allows), each field length-prefixed. */
static void cache_key(api_endpoints__run_t *run, ins_run_t *r, cm_json_t vars, char out[96])
{
    api_call_t *call = run->call;
    cm_buf_t b = CM_BUF_INIT, v = CM_BUF_INIT;
    char num[64];
    api_endpoints__key_field_c(&b, "insight");
    api_endpoints__key_field_c(&b, run->endpoint_id);
    snprintf(num, sizeof(num), "%lld %d", run->version_n, (int)cm_evstore_kind(call->ctx->events));
    api_endpoints__key_field_c(&b, num);
    api_endpoints__key_field_c(&b, cm_tzone_name(r->zone));
    api_endpoints__key_field_c(&b, run->week_start ? "monday" : "sunday");
    api_endpoints__key_field_c(&b, r->from_table ? r->mat_table : NULL);
    if (cm_json_exists(vars)) {
        cm_json_writer_t w;
        cm_json_writer_init(&w, &v);
        cm_json_raw_value_compact(&w, cm_json_raw(vars));
        api_endpoints__key_field(&b, v.p, v.len);
    }
    api_endpoints__key_name(&b, call->project_id, out);
    cm_buf_free(&v);
    cm_buf_free(&b);
}

static int cmp_slice(const void *a, const void *b)
{
    const cm_slice_t *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Unknown variables, sorted, as PostHog lists them. 0 or -1 answered. */
static int check_variables(api_call_t *call, cm_json_t query, cm_json_t vars)
{
    if (!cm_json_exists(vars) || cm_json_is_null(vars))
        return 0;
    if (cm_json_type(vars) != CM_JSON_OBJECT) {
        api_respond_invalid(call, "variables", "Expected an object of variable values.");
        return -1;
    }
    cm_slice_t allowed[MAX_VARS];
    size_t na = api_insight_variables(query, allowed, MAX_VARS);
    cm_slice_t *bad = cm_xcalloc(cm_json_len(vars) + 1, sizeof(cm_slice_t));
    size_t nbad = 0;
    cm_json_iter_t it = cm_json_iter(vars);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t name = cm_json_str_inner(k);
        bool ok = false;
        for (size_t i = 0; i < na && !ok; i++)
            ok = cm_slice_eq(allowed[i], name);
        if (!ok)
            bad[nbad++] = name;
    }
    if (nbad) {
        qsort(bad, nbad, sizeof(*bad), cmp_slice);
        cm_buf_t list = CM_BUF_INIT;
        for (size_t i = 0; i < nbad; i++)
            cm_buf_appendf(&list, "%s%.*s", i ? ", " : "", (int)(bad[i].len > 64 ? 64 : bad[i].len),
                           bad[i].p);
        api_respond_invalid(call, "variables", "Unknown variable(s): %s", cm_buf_cstr(&list));
        cm_buf_free(&list);
    }
    free(bad);
    return nbad ? -1 : 0;
}

/* A materialized version's rules (docs/insights.md): no date variables,
 * every breakdown property given (its table holds every value: a run
 * without one would return them all). 0 or -1 answered. */
static int materialized_rules(api_call_t *call, cm_json_t query, cm_json_t vars)
{
    cm_slice_t names[MAX_VARS];
    size_t n = api_insight_variables(query, names, MAX_VARS);
    cm_buf_t missing = CM_BUF_INIT, dates = CM_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        bool given = cm_json_exists(cm_json_get_s(vars, names[i]));
        bool date =
            cm_slice_eq_cstr(names[i], "date_from") || cm_slice_eq_cstr(names[i], "date_to");
        if (date && given)
            cm_buf_appendf(&dates, "%s%.*s", dates.len ? ", " : "", (int)names[i].len, names[i].p);
        else if (!date && !given && missing.len == 0) /* the first, as a HogQL run names it */
            cm_buf_appendf(&missing, "%.*s", (int)(names[i].len > 64 ? 64 : names[i].len),
                           names[i].p);
    }
    int rc = 0;
    if (dates.len) {
        api_endpoints__error(call, 400, "variables",
                             "Date variables (%s) cannot be used with a materialized endpoint: its "
                             "table holds the insight's own date range. Disable materialization to "
                             "choose dates at run time.",
                             cm_buf_cstr(&dates));
        rc = -1;
    } else if (missing.len) {
        api_endpoints__error(call, 400, "variables", "Required variable '%s' not provided",
                             cm_buf_cstr(&missing));
        rc = -1;
    }
    cm_buf_free(&missing);
    cm_buf_free(&dates);
    return rc;
}

/* The table's info fits this run (same zone and week start): the plan's time, and the
 * run's variables with date_from pinned for "all". false: run inline. */
static bool table_plan(ins_run_t *r, int week_start, cm_json_t vars, int64_t *now_s, cm_json_t *out)
{
    cm_json_doc_t *info = NULL;
    bool ok = false;
    if (r->mat_info == NULL ||
        cm_json_parse(r->mat_info, strlen(r->mat_info), NULL, &info, NULL) != 0)
        return false;
    cm_json_t root = cm_json_root(info);
    int64_t now, ws = 0;
    /* a table built before week starts were kept (none in info) had Sundays */
    if (cm_json_exists(cm_json_get(root, "week_start")) &&
        cm_json_as_int64(cm_json_get(root, "week_start"), &ws) != 0)
        goto done;
    if (!cm_json_str_eq(cm_json_get(root, "kind"), CM_SLICE_LIT("insight")) ||
        !cm_json_str_eq(cm_json_get(root, "timezone"),
                        cm_slice_from_cstr(cm_tzone_name(r->zone))) ||
        ws != week_start || cm_json_as_int64(cm_json_get(root, "now"), &now) != 0 ||
        cm_json_len(cm_json_get(root, "columns")) != 5)
        goto done;
    for (size_t i = 0; i < 5; i++) {
        cm_json_t c = cm_json_at(cm_json_get(root, "columns"), i);
        cm_slice_t name = cm_json_str_inner(c);
        /* the compiler's own names (c1_0): letters, digits, '_' */
        if (name.len == 0 || name.len >= sizeof(r->cols[i]) ||
            strspn(name.p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") <
                name.len)
            goto done;
        memcpy(r->cols[i], name.p, name.len);
        r->cols[i][name.len] = '\0';
    }
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    if (cm_json_type(vars) == CM_JSON_OBJECT) {
        cm_json_iter_t it = cm_json_iter(vars);
        cm_json_t k, v;
        while (cm_json_next(&it, &k, &v)) {
            cm_json_key_s(&w, cm_json_str_inner(k));
            cm_json_raw_value_compact(&w, cm_json_raw(v));
        }
    }
    cm_json_t first = cm_json_get(root, "first_day");
    if (cm_json_type(first) == CM_JSON_STRING) {
        cm_json_key(&w, "date_from");
        cm_json_raw_value_compact(&w, cm_json_raw(first));
    }
    cm_json_end_object(&w);
    r->vars_text = cm_buf_detach(&b, NULL); /* the document borrows it */
    ok = cm_json_parse(r->vars_text, strlen(r->vars_text), NULL, &r->vars_doc, NULL) == 0;
    *now_s = now;
    *out = cm_json_root(r->vars_doc);
done:
    cm_json_doc_free(info);
    return ok;
}

/* ---- the two sources ------------------------------------------------------------------------- */

static int key_table(api_endpoints__run_t *run, char out[96])
{
    return start(run, true, out);
}

static int key_queries(api_endpoints__run_t *run, char out[96])
{
    return start(run, false, out);
}

/* The request's variables checked, the insight planned (from the table
 * when it fits, else its queries) and its cached answer named. The
 * checks are the same whichever source asks (the table's declining does
 * not change them). */
static int start(api_endpoints__run_t *run, bool table, char out[96])
{
    api_call_t *call = run->call;
    ins_run_t *r = cm_xcalloc(1, sizeof(*r));
    r->run = run;
    r->mat_table = run->mat_table;
    r->mat_info = run->mat_info;
    run->state = r;
    cm_json_t query = cm_json_root(run->stored);
    cm_json_t vars = cm_json_get(cm_json_root(call->body), "variables");
    if (check_variables(call, query, vars) != 0)
        return API_ENDPOINTS__ANSWERED;
    if (run->materialized && materialized_rules(call, query, vars) != 0)
        return API_ENDPOINTS__ANSWERED;
    r->zone = cm_tzone_open(cm_slice_from_cstr(run->timezone)); /* NULL: UTC */
    run->zone_name = cm_tzone_name(r->zone);
    int64_t now_s = (int64_t)time(NULL);
    cm_json_t plan_vars = vars;
    if (table) {
        r->from_table =
            r->mat_table != NULL && table_plan(r, run->week_start, vars, &now_s, &plan_vars);
        if (!r->from_table)
            return API_ENDPOINTS__DECLINED;
    }
    cm_buf_t err = CM_BUF_INIT;
    const char *attr = NULL;
    int rc = 0;
    if (api_insight_plan(query, plan_vars, r->zone, now_s, run->week_start, &r->in, &err, &attr) !=
        0) {
        api_endpoints__fail(run, attr, "%.*s", (int)err.len, err.p);
        rc = API_ENDPOINTS__FAILED;
    } else {
        cache_key(run, r, vars, out);
    }
    cm_buf_free(&err);
    return rc;
}

static void execute(api_endpoints__run_t *run, api_endpoints__done_fn done)
{
    ins_run_t *r = run->state;
    r->done = done;
    if (r->from_table)
        read_table(run->call, r);
    else
        run_next(run, r);
}

/* {results, hasMore} */
static void page(api_endpoints__run_t *run, cm_json_writer_t *w, api_endpoints__done_fn done)
{
    ins_run_t *r = run->state;
    cm_json_key(w, "results");
    api_insight_write(r->in, w);
    cm_json_key(w, "hasMore");
    cm_json_boolean(w, api_insight_has_more(r->in));
    done(run, 0, NULL);
}

static void tail(api_endpoints__run_t *run, cm_json_writer_t *w)
{
    ins_run_t *r = run->state;
    if (!r->from_table)
        return;
    cm_json_key(w, "endpoint_materialized");
    cm_json_boolean(w, true);
    cm_json_key(w, "endpoint_materialized_at");
    api_json_time(w, run->mat_at);
}
