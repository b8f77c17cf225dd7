/*
 * openapi.c - GET .../endpoints/{name}/openapi.json[?version=N]:
 * the OpenAPI 3.0.3 document of one endpoint's run operation, in PostHog's
 * shape (docs/endpoints.md): info.title the name, info.version the version
 * as a string, servers from BASE_URL, one POST path with operationId
 * run_<name> and summary "Execute <name>", the PersonalAPIKey bearer
 * scheme, and the variables typed by their definitions, required when
 * they have no stored value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "endpoints/endpoints_int.h"
#include "insights/insights.h"
#include "query/variables.h"
#include "store/store.h"

typedef struct {
    char *name;
    char version[24];
    char *endpoint_row[4]; /* description, version, query */
} doc_t;

static void doc_free(void *p)
{
    doc_t *d = p;
    free(d->name);
    for (size_t i = 0; i < 4; i++)
        free(d->endpoint_row[i]);
    free(d);
}

enum { ROW_DESCRIPTION, ROW_VERSION, ROW_QUERY, ROW_MATERIALIZED };

static void prop(cm_json_writer_t *w, const char *name, const char *type, const char *description)
{
    cm_json_key(w, name);
    cm_json_begin_object(w);
    cm_json_key(w, "type");
    cm_json_str_cstr(w, type);
    if (description != NULL) {
        cm_json_key(w, "description");
        cm_json_str_cstr(w, description);
    }
}

/* An insight's variables: its breakdown properties (each filters to rows
 * with that value), date_from and date_to; none required. Materialized:
 * the breakdown properties only, all required (docs/insights.md). */
static void write_insight_variables(cm_json_writer_t *w, cm_json_t query, bool materialized,
                                    bool *any_required)
{
    cm_slice_t names[8];
    size_t n = api_insight_variables(query, names, 8);
    size_t nb = 0; /* the breakdowns: they come before the dates */
    while (nb < n && !cm_slice_eq_cstr(names[nb], "date_from") &&
           !cm_slice_eq_cstr(names[nb], "date_to"))
        nb++;
    if (materialized)
        n = nb;
    *any_required = materialized && nb > 0;
    cm_json_key(w, "Variables");
    cm_json_begin_object(w);
    cm_json_key(w, "type");
    cm_json_str_cstr(w, "object");
    cm_json_key(w, "description");
    cm_json_str_cstr(w, materialized ? "Insight variables: breakdown properties (required: the "
                                       "materialized table holds every value)."
                                     : "Insight variables: breakdown properties, date_from and "
                                       "date_to.");
    cm_json_key(w, "properties");
    cm_json_begin_object(w);
    cm_buf_t d = CM_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        bool date = i >= nb;
        cm_json_key_lossy(w, names[i]);
        cm_json_begin_object(w);
        cm_json_key(w, "type");
        cm_json_str_cstr(w, "string");
        cm_json_key(w, "description");
        cm_buf_reset(&d);
        if (date)
            cm_buf_appendf(&d, "%.*s: YYYY-MM-DD, or relative (-7d, -1m, mStart)",
                           (int)names[i].len, names[i].p);
        else
            cm_buf_appendf(&d, "Breakdown %.*s: only this value's rows", (int)names[i].len,
                           names[i].p);
        cm_json_str_lossy(w, cm_buf_slice(&d));
        cm_json_end_object(w);
    }
    cm_buf_free(&d);
    cm_json_end_object(w);
    cm_json_key(w, "additionalProperties");
    cm_json_boolean(w, false);
    if (*any_required) {
        cm_json_key(w, "required");
        cm_json_begin_array(w);
        for (size_t i = 0; i < nb; i++)
            cm_json_str_lossy(w, names[i]);
        cm_json_end_array(w);
    }
    cm_json_end_object(w);
}

/* The Variables schema's properties and required names; false when none. */
static bool write_variables(cm_json_writer_t *w, const cm_json_doc_t *stored,
                            const cm_db_res_t *vars, bool materialized, bool *any_required)
{
    size_t n;
    *any_required = false;
    if (api_insight_kind(cm_json_root(stored))) {
        write_insight_variables(w, cm_json_root(stored), materialized, any_required);
        return true;
    }
    api_endpoints__var_t *v = api_endpoints__vars(stored, &n);
    *any_required = false;
    if (n == 0) {
        free(v);
        return false;
    }
    cm_json_key(w, "Variables");
    cm_json_begin_object(w);
    cm_json_key(w, "type");
    cm_json_str_cstr(w, "object");
    cm_json_key(w, "description");
    cm_json_str_cstr(w, "Query variables. For HogQL: code_names from query.");
    cm_json_key(w, "properties");
    cm_json_begin_object(w);
    for (size_t i = 0; i < n; i++) {
        int type = API_VAR_STRING;
        for (size_t j = 0; j < cm_db_nrows(vars, 0); j++)
            if (cm_slice_eq_cstr(v[i].id, cm_db_value(vars, 0, j, API_VAR_ID)))
                type = api_variable_type(cm_db_value(vars, 0, j, API_VAR_TYPE));
        if (type < 0)
            type = API_VAR_STRING;
        cm_json_key_s(w, v[i].code_name);
        cm_json_begin_object(w);
        cm_json_key(w, "type");
        cm_json_str_cstr(w, api_variable_schema_type(type));
        if (type == API_VAR_LIST) {
            cm_json_key(w, "items");
            cm_json_begin_object(w);
            cm_json_key(w, "type");
            cm_json_str_cstr(w, "string");
            cm_json_end_object(w);
        }
        if (type == API_VAR_DATE) {
            cm_json_key(w, "format");
            cm_json_str_cstr(w, "date");
        }
        cm_json_key(w, "description");
        cm_buf_t d = CM_BUF_INIT;
        cm_buf_appendf(&d, "Variable: %.*s", (int)v[i].code_name.len, v[i].code_name.p);
        cm_json_str_s(w, cm_buf_slice(&d));
        cm_buf_free(&d);
        if (cm_json_exists(v[i].value) && !cm_json_is_null(v[i].value)) {
            cm_json_key(w, "example");
            cm_json_value(w, v[i].value);
        } else {
            *any_required = true;
        }
        cm_json_end_object(w);
    }
    cm_json_end_object(w);
    cm_json_key(w, "additionalProperties");
    cm_json_boolean(w, false);
    if (*any_required) {
        cm_json_key(w, "required");
        cm_json_begin_array(w);
        for (size_t i = 0; i < n; i++)
            if (!cm_json_exists(v[i].value) || cm_json_is_null(v[i].value))
                cm_json_str_s(w, v[i].code_name);
        cm_json_end_array(w);
    }
    cm_json_end_object(w);
    free(v);
    return true;
}

static void write_doc(api_call_t *call, doc_t *d, const cm_json_doc_t *stored,
                      const cm_db_res_t *vars, cm_buf_t *out)
{
    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    cm_buf_t s = CM_BUF_INIT;
    const char *desc = d->endpoint_row[ROW_DESCRIPTION];
    bool has_desc = desc != NULL && desc[0] != '\0';

    /* the schemas first, into their own text: whether variables are
     * required decides the request body's "required" */
    cm_buf_t schemas = CM_BUF_INIT;
    cm_json_writer_t sw;
    cm_json_writer_init(&sw, &schemas);
    cm_json_begin_object(&sw);
    bool required = false;
    bool has_vars = write_variables(&sw, stored, vars,
                                    strcmp(d->endpoint_row[ROW_MATERIALIZED], "1") == 0, &required);
    cm_json_key(&sw, "EndpointRunRequest");
    cm_json_begin_object(&sw);
    cm_json_key(&sw, "type");
    cm_json_str_cstr(&sw, "object");
    cm_json_key(&sw, "properties");
    cm_json_begin_object(&sw);
    prop(&sw, "client_query_id", "string", "A client-chosen id for the query");
    cm_json_end_object(&sw);
    prop(&sw, "refresh", "string",
         "cache: serve a fresh enough cached result, else run it; force: always run it; "
         "direct: run the query itself, past the materialized table and the cache "
         "(materialized endpoints only)");
    cm_json_key(&sw, "enum");
    cm_json_begin_array(&sw);
    cm_json_str_cstr(&sw, "cache");
    cm_json_str_cstr(&sw, "force");
    cm_json_str_cstr(&sw, "direct");
    cm_json_end_array(&sw);
    cm_json_key(&sw, "default");
    cm_json_str_cstr(&sw, "cache");
    cm_json_end_object(&sw);
    cm_buf_appendf(&s, "Specific endpoint version to execute (1-%s). Defaults to latest.",
                   d->endpoint_row[ROW_VERSION]);
    prop(&sw, "version", "integer", cm_buf_cstr(&s));
    cm_json_end_object(&sw);
    prop(&sw, "limit", "integer", "Rows to return (at most 50,000)");
    cm_json_key(&sw, "minimum");
    cm_json_int(&sw, 1);
    cm_json_end_object(&sw);
    prop(&sw, "offset", "integer", "Rows to skip");
    cm_json_key(&sw, "minimum");
    cm_json_int(&sw, 0);
    cm_json_end_object(&sw);
    prop(&sw, "debug", "boolean", "Include the query text in the response");
    cm_json_key(&sw, "default");
    cm_json_boolean(&sw, false);
    cm_json_end_object(&sw);
    if (has_vars) {
        cm_json_key(&sw, "variables");
        cm_json_begin_object(&sw);
        cm_json_key(&sw, "$ref");
        cm_json_str_cstr(&sw, "#/components/schemas/Variables");
        cm_json_end_object(&sw);
    }
    cm_json_end_object(&sw); /* properties */
    if (required) {
        cm_json_key(&sw, "required");
        cm_json_begin_array(&sw);
        cm_json_str_cstr(&sw, "variables");
        cm_json_end_array(&sw);
    }
    cm_json_end_object(&sw); /* EndpointRunRequest */
    cm_json_end_object(&sw);

    cm_json_begin_object(&w);
    cm_json_key(&w, "openapi");
    cm_json_str_cstr(&w, "3.0.3");
    cm_json_key(&w, "info");
    cm_json_begin_object(&w);
    cm_json_key(&w, "title");
    cm_json_str_cstr(&w, d->name);
    cm_json_key(&w, "description");
    cm_buf_reset(&s);
    if (has_desc)
        cm_buf_append_cstr(&s, desc);
    else
        cm_buf_appendf(&s, "PostHog Endpoint: %s", d->name);
    cm_json_str_s(&w, cm_buf_slice(&s));
    cm_json_key(&w, "version");
    cm_json_str_cstr(&w, d->endpoint_row[ROW_VERSION]);
    cm_json_end_object(&w);
    cm_json_key(&w, "servers");
    cm_json_begin_array(&w);
    cm_json_begin_object(&w);
    cm_json_key(&w, "url");
    cm_json_str_cstr(&w, call->ctx->cfg.base_url);
    cm_json_end_object(&w);
    cm_json_end_array(&w);
    cm_json_key(&w, "paths");
    cm_json_begin_object(&w);
    cm_buf_reset(&s);
    cm_buf_appendf(&s, "/api/projects/%s/endpoints/%s/run", call->project_id, d->name);
    cm_json_key_s(&w, cm_buf_slice(&s));
    cm_json_begin_object(&w);
    cm_json_key(&w, "post");
    cm_json_begin_object(&w);
    cm_json_key(&w, "operationId");
    cm_buf_reset(&s);
    cm_buf_appendf(&s, "run_%s", d->name);
    for (size_t i = 4; i < s.len; i++)
        if (s.p[i] == '-')
            s.p[i] = '_';
    cm_json_str_s(&w, cm_buf_slice(&s));
    cm_json_key(&w, "summary");
    cm_buf_reset(&s);
    cm_buf_appendf(&s, "Execute %s", d->name);
    cm_json_str_s(&w, cm_buf_slice(&s));
    cm_json_key(&w, "description");
    cm_buf_reset(&s);
    if (has_desc)
        cm_buf_append_cstr(&s, desc);
    else
        cm_buf_appendf(&s, "Execute the %s endpoint", d->name);
    cm_json_str_s(&w, cm_buf_slice(&s));
    cm_json_key(&w, "security");
    cm_buf_append_cstr(out, "[{\"PersonalAPIKey\":[]}]");
    cm_json_writer_init(&w, out); /* raw text above: the writer starts again after it */
    cm_buf_append_cstr(out, ",\"requestBody\":{\"required\":");
    cm_buf_append_cstr(out, required ? "true" : "false");
    cm_buf_append_cstr(out, ",\"content\":{\"application/json\":{\"schema\":{\"$ref\":"
                            "\"#/components/schemas/EndpointRunRequest\"}}}}");
    cm_buf_append_cstr(out,
                       ",\"responses\":{\"200\":{\"description\":\"Query results\",\"content\":{"
                       "\"application/json\":{\"schema\":{\"type\":\"object\",\"properties\":{"
                       "\"results\":{\"type\":\"array\",\"items\":{},\"description\":\"Query "
                       "result rows\"},\"columns\":{\"type\":\"array\",\"items\":{\"type\":"
                       "\"string\"},\"description\":\"Column names (for HogQL queries)\"},"
                       "\"hasMore\":{\"type\":\"boolean\",\"description\":\"Whether there are "
                       "more results available\"}},\"required\":[\"results\"]}}}},"
                       "\"400\":{\"description\":\"Invalid request\"},\"401\":{\"description\":"
                       "\"Authentication required\"},\"404\":{\"description\":\"Endpoint not "
                       "found\"}}}}},");
    cm_buf_append_cstr(out, "\"components\":{\"securitySchemes\":{\"PersonalAPIKey\":{\"type\":"
                            "\"http\",\"scheme\":\"bearer\",\"description\":\"Personal API key "
                            "(POST /api/personal_api_keys/; the first one is printed by "
                            "`api bootstrap`)\"}},\"schemas\":");
    cm_buf_append(out, schemas.p, schemas.len);
    cm_buf_append_cstr(out, "}}");
    cm_buf_free(&schemas);
    cm_buf_free(&s);
}

static void on_vars(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    doc_t *d = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    cm_json_doc_t *stored = NULL;
    const char *q = d->endpoint_row[ROW_QUERY];
    if (cm_json_parse(q, strlen(q), NULL, &stored, NULL) != 0) {
        api_respond_invalid(call, "query", "The stored query cannot be read.");
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    write_doc(call, d, stored, res, &out);
    cm_json_doc_free(stored);
    api_respond_json(call, 200, &out);
}

static void on_endpoint(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    doc_t *d = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) == 0) {
        if (d->version[0]) {
            api_endpoints__error(call, 404, "version", "Version %s not found", d->version);
        } else {
            api_respond_not_found(call);
        }
        return;
    }
    d->endpoint_row[ROW_DESCRIPTION] = cm_xstrdup(cm_db_value(res, 0, 0, API_ENDPOINT_DESCRIPTION));
    d->endpoint_row[ROW_VERSION] = cm_xstrdup(cm_db_value(res, 0, 0, API_ENDPOINT_VERSION));
    d->endpoint_row[ROW_QUERY] = cm_xstrdup(cm_db_value(res, 0, 0, API_ENDPOINT_QUERY));
    const char *mat = cm_db_value(res, 0, 0, API_ENDPOINT_MATERIALIZED);
    d->endpoint_row[ROW_MATERIALIZED] = cm_xstrdup(mat && atoi(mat) == 1 ? "1" : "0");
    api_store_variables_list(call->ctx->db, call->project_id, "100000", "0", on_vars, call);
}

void api_endpoints_openapi(api_call_t *call)
{
    doc_t *d = cm_xcalloc(1, sizeof(*d));
    call->state = d;
    call->state_free = doc_free;
    cm_slice_t n = cm_http_req_param(call->req, "name");
    if (!api_endpoints__name_valid(n)) {
        api_respond_not_found(call);
        return;
    }
    d->name = cm_xmalloc(n.len + 1);
    memcpy(d->name, n.p, n.len);
    d->name[n.len] = '\0';
    if (api_endpoints__version_param(call, d->version) < 0)
        return;
    api_store_endpoint_get(call->ctx->db, call->project_id, d->name,
                           d->version[0] ? d->version : NULL, on_endpoint, call);
}
