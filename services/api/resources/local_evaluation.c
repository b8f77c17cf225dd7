/*
 * local_evaluation.c - GET /api/feature_flag/local_evaluation?token=<phc_>
 * [&send_cohorts]: the definitions feed of older SDKs (docs/flags.md),
 * the same bytes the flags service serves from /flags/definitions, read from
 * the same Redis entry the publisher writes.
 *
 * Authentication: the project's secret API token (phs_, compared by hash in
 * constant time; after a rotation the previous one too, until dropped), or a personal API key with
 * feature_flag:read that can reach the project (the usual checks of http/auth.c). An unknown
 * project token is 401, as on the flags service.
 */
#include <stdio.h>
#include <string.h>

#include "cm/digest.h"
#include "cm/form.h"
#include "cm/rediskeys.h"
#include "resources/resources.h"
#include "store/store.h"

static const char empty_envelope[] = "{\"flags\":[],\"group_type_mapping\":{},\"cohorts\":{}}";

static void unauthorized(api_call_t *call, const char *detail)
{
    cm_api_error_t e;
    cm_api_error_set(&e, 401, "authentication_failed", NULL, "%s", detail);
    e.type = CM_ERR_AUTHENTICATION;
    api_respond_error(call, &e);
}

static void on_definitions(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    api_call_t *call = ud;
    (void)r;
    if (err || reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        cm_api_error_t e;
        cm_api_error_set(&e, 503, "redis_unavailable", NULL,
                         "Flag definitions cannot be read right now; try again shortly.");
        api_respond_error(call, &e);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    if (reply->type == REDIS_REPLY_STRING)
        cm_buf_append(&out, reply->str, reply->len);
    else
        cm_buf_append_cstr(&out, empty_envelope);
    api_respond_json(call, 200, &out);
}

static void serve(api_call_t *call)
{
    cm_redis_command(call->ctx->redis, on_definitions, call, "HGET %s %s",
                     CM_REDISKEY_FLAG_DEFINITIONS, call->project_id);
}

static bool hash_is(const char *stored, const char *hash)
{
    return stored && strlen(stored) == CM_SHA256_HEX_LEN &&
           cm_ct_equal(stored, hash, CM_SHA256_HEX_LEN);
}

static void on_project(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) != 1) {
        unauthorized(call, "Project token not found.");
        return;
    }
    snprintf(call->project_id, sizeof(call->project_id), "%s", cm_db_value(res, 0, 0, 0));
    cm_slice_t bearer = api_call_bearer(call);
    if (cm_slice_starts_with(bearer, "phs_")) {
        char hash[CM_SHA256_HEX_LEN + 1];
        cm_sha256_hex(bearer.p, bearer.len, hash);
        if (!hash_is(cm_db_value(res, 0, 0, 1), hash) &&
            !hash_is(cm_db_value(res, 0, 0, 2), hash)) { /* the secret, or its backup */
            unauthorized(call, "The secret API token is not this project's.");
            return;
        }
        serve(call);
        return;
    }
    api_http_authorize(call, serve); /* a personal API key */
}

void api_local_evaluation(api_call_t *call)
{
    cm_slice_t q = cm_http_req_query(call->req);
    cm_buf_t token = CM_BUF_INIT;
    if (cm_form_get(q.p, q.len, "token", &token) != 0 || token.len == 0 || token.len > 200) {
        cm_buf_free(&token);
        unauthorized(call, "The token query parameter is required.");
        return;
    }
    api_store_project_by_token(call->ctx->db, cm_buf_cstr(&token), on_project, call);
    cm_buf_free(&token);
}
