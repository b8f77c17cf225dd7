/*
 * route_definitions.c - GET /flags/definitions: the feed the SDKs poll for local
 * evaluation (docs/flags.md).
 *
 *   GET /flags/definitions?token=<project token>
 *   Authorization: Bearer <the project's secret API token, or a personal
 *                          API key with feature_flag:read that reaches it>
 *
 * Answers the project's stored envelope byte for byte with an ETag (quoted
 * SHA-1 of the bytes); If-None-Match with that ETag gets 304. A project
 * without definitions gets an empty envelope. 401 when the token is unknown
 * or the bearer is neither (the secret is tried first, as PostHog does).
 */

#include "cm/api_error.h"
#include "cm/form.h"
#include "flags.h"

static const char empty_envelope[] = "{\"flags\":[],\"group_type_mapping\":{},\"cohorts\":{}}";

static void unauthorized(cm_http_req_t *req, const char *code, const char *detail)
{
    cm_api_error_t e;
    cm_api_error_set(&e, 401, code, NULL, "%s", detail);
    cm_http_res_header(req, "WWW-Authenticate", "Bearer");
    cm_http_respond_api_error(req, &e);
}

static void on_definitions(cm_http_req_t *req, void *ud)
{
    flg_ctx_t *ctx = ud;
    cm_slice_t q = cm_http_req_query(req);
    cm_buf_t token = CM_BUF_INIT;
    if (cm_form_get(q.p, q.len, "token", &token) != 0 || token.len == 0) {
        cm_buf_free(&token);
        unauthorized(req, "missing_token", "The token query parameter is required.");
        return;
    }
    const char *pid = flg_store_project_for_token(ctx->store, cm_buf_slice(&token));
    cm_buf_free(&token);
    if (pid != NULL)
        cm_http_req_log_field(req, "project_id", pid); /* the access line */
    if (pid == NULL && flg_store_unloaded(ctx->store, req))
        return;
    if (pid == NULL) {
        unauthorized(req, "invalid_token",
                     "API key does not belong to any project. Check the project API key: "
                     "api_token in GET /api/projects/.");
        return;
    }
    cm_slice_t auth = cm_http_req_header(req, "Authorization");
    cm_slice_t bearer = CM_SLICE_NULL;
    if (auth.len > 7 && cm_slice_eq_nocase((cm_slice_t){auth.p, 7}, "bearer "))
        bearer = cm_slice_trim((cm_slice_t){auth.p + 7, auth.len - 7});
    if (!flg_store_bearer_reads(ctx->store, bearer, pid)) {
        unauthorized(req, "authentication_failed",
                     "Authenticate with the project's secret API key, or a personal API key"
                     " with feature_flag:read, as a Bearer token.");
        return;
    }
    flg_project_t *p = flg_store_definitions(ctx->store, pid);
    if (p == NULL) {
        cm_http_respond(req, 200, "application/json", empty_envelope, sizeof(empty_envelope) - 1);
        return;
    }
    cm_http_res_header(req, "ETag", p->etag);
    cm_http_res_header(req, "Cache-Control", "no-cache");
    if (cm_slice_eq_cstr(cm_http_req_header(req, "If-None-Match"), p->etag))
        cm_http_respond(req, 304, NULL, "", 0);
    else
        cm_http_respond(req, 200, "application/json", p->raw, p->raw_len);
    flg_project_release(p);
}

void flg_definitions_routes(flg_ctx_t *ctx)
{
    cm_http_server_route(ctx->http, CM_HTTP_GET, "/flags/definitions", on_definitions, ctx);
    cm_http_server_route(ctx->http, CM_HTTP_GET, "/api/feature_flag/local_evaluation",
                         on_definitions, ctx);
}
