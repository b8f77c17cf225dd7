/*
 * write.c - creating and updating endpoints (the rules are at the
 * top of crud.c): the body checked, the HogQL parsed, the project's
 * variables read, the query node normalized and checked against them, then
 * one store transaction. Also whether a version's query may be materialized
 * (PostHog's can_materialize): the rule a write checks and the endpoint's
 * "materialization" block reports (crud.c); for HogQL its variables' rule
 * is the query compiler's (query/materialize.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/uuid.h"
#include "insights/insights.h"
#include "endpoints/endpoints.h"
#include "query/query.h"
#include "endpoints/endpoints_int.h"
#include "store/store.h"

/* PostHog points at its docs and its UI's variables page; here the
 * variables are this deployment's own route (docs/endpoints.md). */
#define VARS_ROUTE "/api/projects/%s/insight_variables/"

typedef struct {
    bool update;
    char *name, *description, *cache_age, *is_active, *derived;
    bool set_description, set_cache_age;
    cm_json_t query;    /* the body's query node (lives with call->body) */
    api_query_t *hogql; /* its text, parsed */
    char *query_json;   /* normalized */
    bool insight;       /* an insight node: no variables to sync */
    char *materialize;  /* "0", "1" or NULL (as it was) */
    char *sync_frequency;
    char version[24]; /* update ?version=N */
    char *version_active;
    char id[CM_UUID_STR_LEN + 1], version_id[CM_UUID_STR_LEN + 1];
} ep_write_t;

static void ep_write_free(void *p)
{
    ep_write_t *x = p;
    free(x->name);
    free(x->description);
    free(x->cache_age);
    free(x->is_active);
    free(x->derived);
    free(x->query_json);
    free(x->version_active);
    free(x->materialize);
    free(x->sync_frequency);
    api_query_free(x->hogql);
    free(x);
}

/* An insight node (TrendsQuery): checked by planning it once (series,
 * math, filters, breakdowns, interval, date range), then stored as given,
 * compacted. 0, or -1 having answered 400. */
static int parse_insight(api_call_t *call, ep_write_t *x)
{
    api_insight_t *in = NULL;
    cm_buf_t err = CM_BUF_INIT;
    const char *attr;
    if (api_insight_plan(x->query, CM_JSON_NONE_VALUE, NULL, (int64_t)time(NULL), 0, &in, &err,
                         &attr) != 0) {
        api_respond_invalid(call, "query", "Invalid insight query: %.*s", (int)err.len, err.p);
        cm_buf_free(&err);
        return -1;
    }
    api_insight_free(in);
    cm_buf_free(&err);
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_raw_value_compact(&w, cm_json_raw(x->query));
    x->query_json = cm_buf_detach(&out, NULL);
    x->insight = true;
    return 0;
}

static int body_bool(api_call_t *call, const char *attr, char **out)
{
    cm_json_t v = cm_json_get(cm_json_root(call->body), attr);
    bool b;
    if (!cm_json_exists(v) || cm_json_is_null(v))
        return 0;
    if (cm_json_as_bool(v, &b) != 0) {
        api_respond_invalid(call, attr, "Must be a valid boolean.");
        return -1;
    }
    *out = cm_xstrdup(b ? "1" : "0");
    return 0;
}

/* The fields of the body; the query only parsed here (its variables need
 * the store). */
static int parse_body(api_call_t *call, ep_write_t *x)
{
    cm_json_t root = cm_json_root(call->body), v;
    char *materialized = NULL;
    if (!x->update) {
        if (api_body_string(call, "name", 0, 1000, NULL, NULL, &x->name) < 0)
            return -1;
        if (x->name == NULL || x->name[0] == '\0') {
            api_respond_invalid(call, "name", "Endpoint must have a name.");
            return -1;
        }
        if (!api_endpoints__name_valid(cm_slice_from_cstr(x->name))) {
            api_respond_invalid(call, "name",
                                "Endpoint name must start with a letter, contain only "
                                "alphanumeric characters, hyphens, or underscores, and be between "
                                "1 and 128 characters long.");
            return -1;
        }
    }
    x->set_description = cm_json_exists(cm_json_get(root, "description"));
    if (api_body_string(call, "description", 0, 4000, NULL, NULL, &x->description) < 0 ||
        api_body_string(call, "derived_from_insight", 0, 12, NULL, NULL, &x->derived) < 0 ||
        body_bool(call, "is_active", &x->is_active) < 0 ||
        body_bool(call, "is_materialized", &materialized) < 0)
        return -1;
    x->materialize = materialized;
    cm_json_t sf = cm_json_get(root, "sync_frequency");
    if (cm_json_exists(sf) && !cm_json_is_null(sf)) {
        char *f = NULL;
        if (api_body_string(call, "sync_frequency", 1, 16, NULL, NULL, &f) < 0)
            return -1;
        if (api_endpoints_period_ms(f) == 0) {
            free(f);
            api_respond_invalid(call, "sync_frequency",
                                "\"%.*s\" is not a valid choice: 15min, 30min, 1hour, 6hour, "
                                "12hour, 24hour or 7day.",
                                16, cm_json_raw(sf).p);
            return -1;
        }
        x->sync_frequency = f;
    }
    if (cm_json_exists(v = cm_json_get(root, "cache_age_seconds"))) {
        x->set_cache_age = true;
        int64_t age;
        if (!cm_json_is_null(v)) {
            if (cm_json_as_int64(v, &age) != 0 || age < 300 || age > 86400) {
                api_respond_invalid(call, "cache_age_seconds",
                                    "Cache age must be between 300 and 86400 seconds.");
                return -1;
            }
            char n[24];
            snprintf(n, sizeof(n), "%lld", (long long)age);
            x->cache_age = cm_xstrdup(n);
        }
    }
    x->query = cm_json_get(root, "query");
    if (!cm_json_exists(x->query) || cm_json_is_null(x->query)) {
        if (!x->update) {
            api_respond_invalid(call, NULL, "Must specify query");
            return -1;
        }
        x->query = CM_JSON_NONE_VALUE;
        return 0;
    }
    cm_json_t kind = cm_json_get(x->query, "kind");
    cm_json_t text = cm_json_get(x->query, "query");
    if (cm_json_type(x->query) != CM_JSON_OBJECT || cm_json_type(kind) != CM_JSON_STRING) {
        api_respond_invalid(call, "query", "Expected a query node: {\"kind\": ..., ...}.");
        return -1;
    }
    if (api_insight_kind(x->query))
        return parse_insight(call, x);
    if (!cm_json_str_eq(kind, CM_SLICE_LIT("HogQLQuery"))) {
        api_respond_invalid(
            call, "query", "Query kind '%.*s' is not supported yet: use HogQLQuery or TrendsQuery.",
            (int)(cm_json_str_inner(kind).len > 40 ? 40 : cm_json_str_inner(kind).len),
            cm_json_str_inner(kind).p);
        return -1;
    }
    cm_buf_t scratch = CM_BUF_INIT, err = CM_BUF_INIT;
    cm_slice_t s;
    int rc = 0;
    if (cm_json_type(text) != CM_JSON_STRING || cm_json_as_str(text, &scratch, &s) != 0 ||
        s.len == 0) {
        api_respond_invalid(call, "query", "Query is empty or invalid.");
        rc = -1;
    } else if (api_query_parse(s.p, s.len, &x->hogql, &err) != 0) {
        api_respond_invalid(call, "query", "Invalid HogQL query: %.*s", (int)err.len, err.p);
        rc = -1;
    }
    cm_buf_free(&scratch);
    cm_buf_free(&err);
    return rc;
}

/* ---- variables: normalize, then check -------------------------------------------------- */

static bool uses(const api_query_t *q, cm_slice_t code)
{
    for (size_t i = 0; i < api_query_nvariables(q); i++)
        if (cm_slice_eq_cstr(code, api_query_variable(q, i)))
            return true;
    return false;
}

/* The project's variable row with that id or code name, or -1. */
static long find_var(const cm_db_res_t *res, int col, cm_slice_t what)
{
    for (size_t i = 0; i < cm_db_nrows(res, 0); i++)
        if (cm_slice_eq_cstr(what, cm_db_value(res, 0, i, col)))
            return (long)i;
    return -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void list_append(cm_buf_t *b, cm_slice_t s)
{
    if (b->len)
        cm_buf_append_cstr(b, ", ");
    cm_buf_append(b, s.p, s.len);
}

/* The normalized node into x->query_json, or -1 having answered 400. */
static int normalize(api_call_t *call, ep_write_t *x, const cm_db_res_t *vars)
{
    cm_buf_t out = CM_BUF_INIT, undefined = CM_BUF_INIT, bad = CM_BUF_INIT, missing = CM_BUF_INIT,
             scratch = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "kind");
    cm_json_str_cstr(&w, "HogQLQuery");
    cm_json_key(&w, "query");
    cm_json_value(&w, cm_json_get(x->query, "query"));
    size_t nv = api_query_nvariables(x->hogql);
    bool *covered = cm_xcalloc(nv + 1, sizeof(bool));
    const char **undefined_names = cm_xcalloc(nv + 1, sizeof(char *));
    size_t nundefined = 0;
    if (nv > 0) {
        cm_json_key(&w, "variables");
        cm_json_begin_object(&w);
        cm_json_t given = cm_json_get(x->query, "variables");
        cm_json_iter_t it =
            cm_json_type(given) == CM_JSON_OBJECT ? cm_json_iter(given) : (cm_json_iter_t){0};
        cm_json_t k, v;
        while (cm_json_type(given) == CM_JSON_OBJECT && cm_json_next(&it, &k, &v)) {
            cm_slice_t id, code;
            cm_buf_reset(&scratch);
            if (cm_json_as_str(k, &scratch, &id) != 0)
                continue;
            code = cm_json_str_inner(cm_json_get(v, "code_name"));
            if (code.p == NULL || !uses(x->hogql, code))
                continue;                   /* its placeholder is gone */
            for (size_t i = 0; i < nv; i++) /* defined, if wrongly */
                if (cm_slice_eq_cstr(code, api_query_variable(x->hogql, i)))
                    covered[i] = true;
            if (!cm_uuid_valid(id.p, id.len)) {
                list_append(&bad, id);
                continue;
            }
            long row = find_var(vars, API_VAR_ID, id);
            if (row < 0) {
                list_append(&missing, id);
                continue;
            }
            cm_json_key_s(&w, id);
            cm_json_begin_object(&w);
            cm_json_key(&w, "variableId");
            cm_json_str_s(&w, id);
            cm_json_key(&w, "code_name");
            cm_json_str_s(&w, code);
            cm_json_key(&w, "value");
            cm_json_t value = cm_json_get(v, "value");
            if (cm_json_exists(value))
                cm_json_value(&w, value);
            else
                api_json_stored(&w, cm_db_value(vars, 0, (size_t)row, API_VAR_DEFAULT));
            cm_json_end_object(&w);
        }
        /* the project's variables of the placeholders left */
        for (size_t i = 0; i < nv; i++) {
            if (covered[i])
                continue;
            cm_slice_t code = cm_slice_from_cstr(api_query_variable(x->hogql, i));
            long row = find_var(vars, API_VAR_CODE_NAME, code);
            if (row < 0) {
                undefined_names[nundefined++] = api_query_variable(x->hogql, i);
                continue;
            }
            const char *id = cm_db_value(vars, 0, (size_t)row, API_VAR_ID);
            cm_json_key(&w, id);
            cm_json_begin_object(&w);
            cm_json_key(&w, "variableId");
            cm_json_str_cstr(&w, id);
            cm_json_key(&w, "code_name");
            cm_json_str_s(&w, code);
            cm_json_key(&w, "value");
            api_json_stored(&w, cm_db_value(vars, 0, (size_t)row, API_VAR_DEFAULT));
            cm_json_end_object(&w);
        }
        cm_json_end_object(&w);
    }
    cm_json_end_object(&w);
    free(covered);
    qsort(undefined_names, nundefined, sizeof(char *), cmp_str); /* PostHog sorts them */
    for (size_t i = 0; i < nundefined; i++)
        list_append(&undefined, cm_slice_from_cstr(undefined_names[i]));
    free(undefined_names);
    int rc = 0;
    /* PostHog's order and words (the trailing space of the second is theirs),
     * but for where to look */
    if (undefined.len) {
        api_respond_invalid(call, "query",
                            "Query references undefined variable(s): %.*s. Create each "
                            "first: POST " VARS_ROUTE ".",
                            (int)undefined.len, undefined.p, call->project_id);
        rc = -1;
    } else if (bad.len) {
        api_respond_invalid(call, "query", "Variable ID(s) not valid UUIDs: %.*s. ", (int)bad.len,
                            bad.p);
        rc = -1;
    } else if (missing.len) {
        api_respond_invalid(call, "query",
                            "Variable ID(s) not found: %.*s. Make sure the variables exist in "
                            "" VARS_ROUTE ".",
                            (int)missing.len, missing.p, call->project_id);
        rc = -1;
    }
    if (rc == 0)
        x->query_json = cm_buf_detach(&out, NULL);
    cm_buf_free(&out);
    cm_buf_free(&undefined);
    cm_buf_free(&bad);
    cm_buf_free(&missing);
    cm_buf_free(&scratch);
    return rc;
}

/* ---- the flow ----------------------------------------------------------------------------------
 */

/* The endpoint read back by the job's last statement. */
static void respond_last(api_call_t *call, int status, const cm_db_res_t *res, int http_status)
{
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, cm_db_ntables(res) - 1) < 1) {
        api_respond_not_found(call);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    api_endpoints__write_row(&w, call, res, 0);
    api_respond_json(call, http_status, &out);
}

static void on_written(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    ep_write_t *x = call->state;
    size_t last = cm_db_ntables(res) ? cm_db_ntables(res) - 1 : 0;
    if (status == CM_ECONFLICT && !x->update) {
        api_respond_invalid(call, "name", "An endpoint named '%s' already exists.", x->name);
        return;
    }
    if (status == 0 && cm_db_nrows(res, last) == 0 && x->version[0]) {
        api_endpoints__error(call, 404, "version", "Version %s not found", x->version);
        return;
    }
    if (status == 0 && x->materialize != NULL) /* build (or drop) the table soon */
        api_materializer_kick(call->ctx->materializer);
    respond_last(call, status, res, x->update ? 200 : 201);
}

static void store_write(api_call_t *call, ep_write_t *x, const char *current_query)
{
    if (x->materialize && x->materialize[0] == '1') {
        const char *q = x->query_json ? x->query_json : current_query;
        cm_buf_t reason = CM_BUF_INIT;
        bool can = api_endpoints__can_materialize(q, &reason);
        if (!can) {
            api_respond_invalid(call, "is_materialized", "Cannot materialize endpoint: %s",
                                cm_buf_cstr(&reason));
            cm_buf_free(&reason);
            return;
        }
        cm_buf_free(&reason);
    }
    char uid[24];
    snprintf(uid, sizeof(uid), "%s", call->user_id);
    bool changed = x->query_json != NULL &&
                   (current_query == NULL || strcmp(current_query, x->query_json) != 0);
    api_endpoint_write_t w = {
        .project_id = call->project_id,
        .name = x->name,
        .user_id = uid[0] ? uid : NULL,
        .id = x->id,
        .version_id = x->version_id,
        .query = changed ? x->query_json : NULL,
        .is_active = x->is_active,
        .derived_from_insight = x->derived,
        .description = x->description,
        .cache_age_seconds = x->cache_age,
        .set_description = x->set_description,
        .set_cache_age = x->set_cache_age,
        .version = x->version[0] ? x->version : NULL,
        .version_active = x->version_active,
        .is_materialized = x->materialize,
        .sync_frequency = x->sync_frequency,
    };
    if (x->update)
        api_store_endpoint_update(call->ctx->db, &w, on_written, call);
    else
        api_store_endpoint_create(call->ctx->db, &w, on_written, call);
}

static void on_current(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    ep_write_t *x = call->state;
    if (status != 0 || cm_db_nrows(res, 0) == 0) {
        respond_last(call, status, res, 200);
        return;
    }
    snprintf(x->id, sizeof(x->id), "%s", cm_db_value(res, 0, 0, API_ENDPOINT_ID));
    store_write(call, x, cm_db_value(res, 0, 0, API_ENDPOINT_QUERY));
}

static void on_vars(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    ep_write_t *x = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (normalize(call, x, res) != 0)
        return;
    if (x->update)
        api_store_endpoint_get(call->ctx->db, call->project_id, x->name, NULL, on_current, call);
    else
        store_write(call, x, NULL);
}

static ep_write_t *begin(api_call_t *call, bool update)
{
    ep_write_t *x = cm_xcalloc(1, sizeof(*x));
    call->state = x;
    call->state_free = ep_write_free;
    x->update = update;
    cm_uuid_v7(x->id);
    cm_uuid_v7(x->version_id);
    if (update) {
        cm_slice_t n = cm_http_req_param(call->req, "name");
        if (!api_endpoints__name_valid(n)) {
            api_respond_not_found(call);
            return NULL;
        }
        x->name = cm_xmalloc(n.len + 1);
        memcpy(x->name, n.p, n.len);
        x->name[n.len] = '\0';
    }
    return x;
}

void api_endpoints_create(api_call_t *call)
{
    ep_write_t *x = begin(call, false);
    if (x == NULL || api_call_body(call) < 0 || parse_body(call, x) < 0)
        return;
    if (x->insight)
        store_write(call, x, NULL);
    else
        api_store_variables_list(call->ctx->db, call->project_id, "100000", "0", on_vars, call);
}

void api_endpoints_update(api_call_t *call)
{
    ep_write_t *x = begin(call, true);
    if (x == NULL || api_endpoints__version_param(call, x->version) < 0 ||
        api_call_body(call) < 0 || parse_body(call, x) < 0)
        return;
    cm_json_t v = cm_json_get(cm_json_root(call->body), "version");
    if (x->version[0] == '\0' && cm_json_type(v) == CM_JSON_NUMBER) {
        int64_t n;
        if (cm_json_as_int64(v, &n) != 0 || n < 1) {
            api_respond_invalid(call, "version", "Invalid version parameter: %.*s",
                                (int)cm_json_raw(v).len, cm_json_raw(v).p);
            return;
        }
        snprintf(x->version, sizeof(x->version), "%lld", (long long)n);
    }
    if (x->version[0]) {
        /* one version: its is_active only */
        x->version_active = x->is_active;
        x->is_active = NULL;
        x->query = CM_JSON_NONE_VALUE;
        api_query_free(x->hogql);
        x->hogql = NULL;
        x->set_description = x->set_cache_age = false;
        if (x->version_active == NULL) {
            api_respond_invalid(call, "is_active", "A version's update takes is_active.");
            return;
        }
        api_store_endpoint_get(call->ctx->db, call->project_id, x->name, NULL, on_current, call);
        return;
    }
    if (x->hogql != NULL)
        api_store_variables_list(call->ctx->db, call->project_id, "100000", "0", on_vars, call);
    else
        api_store_endpoint_get(call->ctx->db, call->project_id, x->name, NULL, on_current, call);
}

/* ---- can_materialize --------------------------------------------------------------------- */

static const char SUPPORTED[] = "FunnelsQuery, HogQLQuery, LifecycleQuery, PathsQuery, "
                                "RetentionQuery, StickinessQuery, TrendsQuery";

bool api_endpoints__can_materialize(const char *query_json, cm_buf_t *reason)
{
    cm_json_doc_t *doc = NULL;
    bool ok = false;
    if (query_json == NULL ||
        cm_json_parse(query_json, strlen(query_json), NULL, &doc, NULL) != 0) {
        cm_buf_append_cstr(reason, "Query is empty or invalid.");
        return false;
    }
    cm_json_t q = cm_json_root(doc), kind = cm_json_get(q, "kind");
    if (api_insight_kind(q)) {
        ok = true; /* several breakdowns too (PostHog's current rule): each a required variable */
    } else if (cm_json_str_eq(kind, CM_SLICE_LIT("HogQLQuery"))) {
        cm_buf_t scratch = CM_BUF_INIT, why = CM_BUF_INIT;
        cm_slice_t text;
        api_query_t *hq = NULL;
        api_query_mat_t m;
        if (cm_json_as_str(cm_json_get(q, "query"), &scratch, &text) != 0 || text.len == 0 ||
            api_query_parse(text.p, text.len, &hq, &why) != 0) {
            cm_buf_append_cstr(reason, "Query is empty or invalid.");
        } else if (api_query_materialize(hq, &m, &why) != 0) {
            cm_buf_appendf(reason, "Variables not supported: %.*s", (int)why.len, why.p);
        } else {
            api_query_mat_free(&m);
            ok = true;
        }
        api_query_free(hq);
        cm_buf_free(&scratch);
        cm_buf_free(&why);
    } else {
        cm_slice_t k = cm_json_str_inner(kind);
        cm_buf_appendf(reason, "Query type '%.*s' cannot be materialized. Supported types: %s",
                       (int)(k.len > 40 ? 40 : k.len), k.p ? k.p : "", SUPPORTED);
    }
    cm_json_doc_free(doc);
    return ok;
}
