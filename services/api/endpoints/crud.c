/*
 * crud.c - /api/projects/{id}/endpoints/ (and /api/environments/...):
 * saved HogQL queries by name, each change of the query a new version
 * (docs/endpoints.md). PostHog's middle API ("Era B" of the notes):
 * list, create, retrieve, update (PATCH/PUT, ?version=N for one version's
 * is_active), delete, versions and one version. Runs are run.c's,
 * the OpenAPI document openapi.c's.
 *
 * A query node is stored normalized: {"kind": "HogQLQuery", "query": text,
 * "variables": {id: {"variableId", "code_name", "value"}}}, its variables
 * first brought in line with the text as PostHog does (entries whose
 * placeholder is gone dropped, missing values filled from the variable's
 * default, the project's variables of a placeholder without an entry
 * added), then checked: every placeholder defined, every id a UUID of an
 * existing variable. A query change is a new version when the normalized
 * text differs from the current version's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/uuid.h"
#include "query/query.h"
#include "endpoints/endpoints_int.h"
#include "store/store.h"

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
#define NAME_RULE                                                                                  \
    "Endpoint name must start with a letter, contain only alphanumeric characters, hyphens, or "   \
    "underscores, and be between 1 and 128 characters long."

bool api_endpoints__name_valid(cm_slice_t n)
{
    if (n.len == 0 || n.len > 128)
        return false;
    char c = n.p[0];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
        return false;
    return cm_slice_span(n, NAME_CHARS) == n.len;
}

void api_endpoints__error(api_call_t *call, int status, const char *attr, const char *fmt, ...)
{
    cm_api_error_t e;
    va_list ap;
    va_start(ap, fmt);
    /* the detail may echo the client's bytes: the envelope writes it lossy */
    cm_api_error_vset(&e, status, status == 404 ? "not_found" : "invalid", attr, fmt, ap);
    va_end(ap);
    api_respond_error(call, &e);
}

int api_endpoints__version_param(api_call_t *call, char out[24])
{
    out[0] = '\0';
    char *v = api_call_query(call, "version");
    if (v == NULL)
        return 0;
    size_t n = strlen(v);
    if (n == 0 || n > 9 || strspn(v, "0123456789") != n || atoi(v) < 1) {
        api_endpoints__error(call, 400, "version", "Invalid version parameter: %.40s", v);
        free(v);
        return -1;
    }
    snprintf(out, 24, "%s", v);
    free(v);
    return 0;
}

api_endpoints__var_t *api_endpoints__vars(const cm_json_doc_t *doc, size_t *n)
{
    cm_json_t vars = cm_json_get(cm_json_root(doc), "variables");
    *n = 0;
    if (cm_json_type(vars) != CM_JSON_OBJECT)
        return NULL;
    api_endpoints__var_t *out = cm_xcalloc(cm_json_len(vars) + 1, sizeof(*out));
    cm_json_iter_t it = cm_json_iter(vars);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        /* ids and code names have no escapes: checked when stored */
        cm_slice_t id = cm_json_str_inner(cm_json_get(v, "variableId"));
        cm_slice_t code = cm_json_str_inner(cm_json_get(v, "code_name"));
        if (id.p == NULL || code.p == NULL)
            continue;
        out[*n].id = id;
        out[*n].code_name = code;
        out[*n].value = cm_json_get(v, "value");
        (*n)++;
    }
    return out;
}

/* ---- the resource's JSON ------------------------------------------------------------------ */

static void write_path(cm_buf_t *b, const char *project_id, const char *name)
{
    cm_buf_appendf(b, "/api/environments/%s/endpoints/%s/run", project_id, name);
}

/* {"id": n} of the user who made it, or null. */
static void write_created_by(cm_json_writer_t *w, const char *user_id)
{
    cm_json_key(w, "created_by");
    if (user_id == NULL) {
        cm_json_null(w);
        return;
    }
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_int(w, atoll(user_id));
    cm_json_end_object(w);
}

/* can_materialize and, when not, PostHog's reason (else null). */
static void write_can_materialize(cm_json_writer_t *w, const char *query_json)
{
    cm_buf_t reason = CM_BUF_INIT;
    bool can = api_endpoints__can_materialize(query_json, &reason);
    cm_json_key(w, "can_materialize");
    cm_json_boolean(w, can);
    cm_json_key(w, "reason");
    if (can)
        cm_json_null(w);
    else
        cm_json_str_s(w, cm_buf_slice(&reason));
    cm_buf_free(&reason);
}

void api_endpoints__write_row(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res,
                              size_t row)
{
    size_t t = cm_db_ntables(res) - 1; /* the read is the job's last statement */
#define V(col) cm_db_value(res, t, row, col)
    cm_buf_t path = CM_BUF_INIT;
    write_path(&path, call->project_id, V(API_ENDPOINT_NAME));
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_str_cstr(w, V(API_ENDPOINT_ID));
    cm_json_key(w, "name");
    cm_json_str_cstr(w, V(API_ENDPOINT_NAME));
    cm_json_key(w, "description");
    cm_json_str_cstr(w, V(API_ENDPOINT_DESCRIPTION));
    cm_json_key(w, "query");
    api_json_stored(w, V(API_ENDPOINT_QUERY));
    cm_json_key(w, "is_active");
    cm_json_boolean(w, atoi(V(API_ENDPOINT_ACTIVE)) != 0);
    cm_json_key(w, "cache_age_seconds");
    if (V(API_ENDPOINT_CACHE_AGE))
        cm_json_int(w, atoll(V(API_ENDPOINT_CACHE_AGE)));
    else
        cm_json_null(w);
    cm_json_key(w, "endpoint_path");
    cm_json_str_s(w, cm_buf_slice(&path));
    cm_json_key(w, "url");
    cm_buf_t url = CM_BUF_INIT;
    cm_buf_appendf(&url, "%s%.*s", call->ctx->cfg.base_url, (int)path.len, path.p);
    cm_json_str_s(w, cm_buf_slice(&url));
    cm_buf_free(&url);
    /* PostHog's ui_url is its web app's page for the endpoint; there is no
     * web app here, so it is the endpoint's own resource on this deployment
     * (docs/endpoints.md, "The routes"), a URL that answers. */
    cm_json_key(w, "ui_url");
    cm_buf_reset(&path);
    cm_buf_appendf(&path, "%s/api/projects/%s/endpoints/%s/", call->ctx->cfg.base_url,
                   call->project_id, V(API_ENDPOINT_NAME));
    cm_json_str_s(w, cm_buf_slice(&path));
    cm_json_key(w, "created_at");
    api_json_time(w, V(API_ENDPOINT_CREATED));
    cm_json_key(w, "updated_at");
    api_json_time(w, V(API_ENDPOINT_UPDATED));
    write_created_by(w, V(API_ENDPOINT_CREATED_BY));
    bool materialized = V(API_ENDPOINT_MATERIALIZED) && atoi(V(API_ENDPOINT_MATERIALIZED)) == 1;
    cm_json_key(w, "is_materialized");
    cm_json_boolean(w, materialized); /* at once, as PostHog: the status says how far */
    cm_json_key(w, "current_version");
    cm_json_int(w, atoll(V(API_ENDPOINT_CURRENT_VERSION)));
    cm_json_key(w, "versions_count");
    cm_json_int(w, atoll(V(API_ENDPOINT_VERSIONS_COUNT)));
    cm_json_key(w, "derived_from_insight");
    if (V(API_ENDPOINT_DERIVED_FROM))
        cm_json_str_cstr(w, V(API_ENDPOINT_DERIVED_FROM));
    else
        cm_json_null(w);
    cm_json_key(w, "materialization");
    cm_json_begin_object(w);
    if (materialized) {
        api_endpoints__write_materialization(w, res, t, row);
        cm_json_end_object(w);
        cm_json_end_object(w);
        cm_buf_free(&path);
        return;
    }
    write_can_materialize(w, V(API_ENDPOINT_QUERY));
    cm_json_end_object(w);
    cm_json_end_object(w);
    cm_buf_free(&path);
#undef V
}

void api_endpoints__write_materialization(cm_json_writer_t *w, const cm_db_res_t *res, size_t t,
                                          size_t row)
{
#define V(col) cm_db_value(res, t, row, col)
    const char *st = V(API_ENDPOINT_MAT_STATUS);
    cm_json_key(w, "status");
    cm_json_str_cstr(w, st ? st : "Pending"); /* on, not yet claimed by a materializer */
    cm_json_key(w, "can_materialize");
    cm_json_boolean(w, true);
    cm_json_key(w, "last_materialized_at");
    api_json_time(w, V(API_ENDPOINT_MAT_AT));
    cm_json_key(w, "error");
    cm_json_str_cstr(w, st && strcmp(st, "Failed") == 0 && V(API_ENDPOINT_MAT_ERROR)
                            ? V(API_ENDPOINT_MAT_ERROR)
                            : "");
    cm_json_key(w, "sync_frequency");
    cm_json_str_cstr(w, V(API_ENDPOINT_SYNC_FREQUENCY));
#undef V
}

static void write_version(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    (void)call;
#define V(col) cm_db_value(res, 0, row, col)
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_str_cstr(w, V(API_EVERSION_ID));
    cm_json_key(w, "version");
    cm_json_int(w, atoll(V(API_EVERSION_VERSION)));
    cm_json_key(w, "query");
    api_json_stored(w, V(API_EVERSION_QUERY));
    cm_json_key(w, "description");
    cm_json_str_cstr(w, V(API_EVERSION_DESCRIPTION));
    cm_json_key(w, "is_active");
    cm_json_boolean(w, atoi(V(API_EVERSION_ACTIVE)) != 0);
    cm_json_key(w, "created_at");
    api_json_time(w, V(API_EVERSION_CREATED));
    write_created_by(w, V(API_EVERSION_CREATED_BY));
    cm_json_end_object(w);
#undef V
}

/* ---- list, retrieve, versions ------------------------------------------------------------- */

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_results(ud, status, res, api_endpoints__write_row);
}

void api_endpoints_list(api_call_t *call)
{
    char *a = api_call_query(call, "is_active");
    const char *active = NULL;
    if (a != NULL && a[0] != '\0') /* empty: no filter, as django-filter's */
        active = strcmp(a, "false") == 0 || strcmp(a, "0") == 0 ? "0" : "1";
    free(a);
    api_store_endpoints_list(call->ctx->db, call->project_id, active, on_list, call);
}

/* The {name} of the path, or NULL having answered 404. */
static char *path_name(api_call_t *call)
{
    cm_slice_t n = cm_http_req_param(call->req, "name");
    if (!api_endpoints__name_valid(n)) {
        api_respond_not_found(call);
        return NULL;
    }
    char *s = cm_xmalloc(n.len + 1);
    memcpy(s, n.p, n.len);
    s[n.len] = '\0';
    call->state = s;
    call->state_free = free;
    return s;
}

static void on_one(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_row(ud, status, res, 200, api_endpoints__write_row);
}

/* The endpoint of the path (its current version), read for done. */
static void read_endpoint(api_call_t *call, cm_db_done_cb done)
{
    char *name = path_name(call);
    if (name != NULL)
        api_store_endpoint_get(call->ctx->db, call->project_id, name, NULL, done, call);
}

void api_endpoints_retrieve(api_call_t *call)
{
    read_endpoint(call, on_one);
}

/* GET .../{name}/materialization_status: the current version's
 * materialization as the endpoint shows it, and whether it is on. */
static void write_status(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t row)
{
    (void)call;
    const char *m = cm_db_value(res, 0, row, API_ENDPOINT_MATERIALIZED);
    bool on = m && atoi(m) == 1;
    cm_json_begin_object(w);
    cm_json_key(w, "is_materialized");
    cm_json_boolean(w, on);
    if (on)
        api_endpoints__write_materialization(w, res, 0, row);
    else
        write_can_materialize(w, cm_db_value(res, 0, row, API_ENDPOINT_QUERY));
    cm_json_end_object(w);
}

static void on_status(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_row(ud, status, res, 200, write_status);
}

void api_endpoints_materialization_status(api_call_t *call)
{
    read_endpoint(call, on_status);
}

static void on_versions(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) == 0) {
        api_respond_not_found(call);
        return;
    }
    cm_slice_t want = cm_http_req_param(call->req, "version");
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    if (want.len == 0) {
        cm_json_begin_array(&w);
        for (size_t i = 0; i < cm_db_nrows(res, 0); i++)
            write_version(&w, call, res, i);
        cm_json_end_array(&w);
        api_respond_json(call, 200, &b);
        return;
    }
    for (size_t i = 0; i < cm_db_nrows(res, 0); i++)
        if (cm_slice_eq_cstr(want, cm_db_value(res, 0, i, API_EVERSION_VERSION))) {
            write_version(&w, call, res, i);
            api_respond_json(call, 200, &b);
            return;
        }
    cm_buf_free(&b);
    char v[24];
    snprintf(v, sizeof(v), "%.*s", (int)(want.len > 20 ? 20 : want.len), want.p);
    api_endpoints__error(call, 404, "version", "Version %s not found", v);
}

void api_endpoints_versions(api_call_t *call)
{
    char *name = path_name(call);
    if (name != NULL)
        api_store_endpoint_versions(call->ctx->db, call->project_id, name, on_versions, call);
}

/* ---- delete ---------------------------------------------------------------------------------- */

static void on_deleted(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0)
        api_respond_db_error(call, status, res, NULL, NULL);
    else if (cm_db_nrows(res, 1) == 0)
        api_respond_not_found(call);
    else
        api_respond_empty(call, 204);
}

void api_endpoints_delete(api_call_t *call)
{
    char *name = path_name(call);
    if (name != NULL)
        api_store_endpoint_delete(call->ctx->db, call->project_id, name, on_deleted, call);
}
