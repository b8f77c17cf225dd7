/*
 * auth.c - personal API key authentication, scopes and project access.
 *
 * Authorization: Bearer <key>. The key is hashed (SHA-256 of the whole
 * text, as stored) and looked up; the stored hash is compared again in
 * constant time. One store query answers both "whose key is this" and "does
 * its user belong to the project's organization", so a project route costs
 * one round trip before its handler runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/digest.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "access/access.h"
#include "http/http_int.h"
#include "store/store.h"

#define TOUCH_EVERY_MS 60000 /* last_used_at is written at most once a minute */

static void unauthorized(api_call_t *call, const char *code, const char *detail)
{
    char header[600];
    snprintf(header, sizeof(header),
             "Bearer resource_metadata=\"%s/.well-known/oauth-protected-resource\"",
             call->ctx->cfg.base_url);
    cm_http_res_header(call->req, "WWW-Authenticate", header);
    cm_api_error_t e;
    cm_api_error_set(&e, 401, code, NULL, "%s", detail);
    e.type = CM_ERR_AUTHENTICATION;
    api_respond_error(call, &e);
}

static void on_touched(int status, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (status != 0)
        cm_log(CM_LOG_WARN, NULL, "personal key last_used_at: %s", cm_db_error(res));
}

static void maybe_touch(api_call_t *call, const char *last_used)
{
    char now[24];
    api_store_now(now);
    if (last_used && atoll(now) - atoll(last_used) < TOUCH_EVERY_MS)
        return;
    api_store_key_touch(call->ctx->db, call->key_id, on_touched, NULL);
}

static void on_key(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    const char *hash = cm_db_value(res, 0, 0, API_KEY_HASH);
    if (cm_db_nrows(res, 0) != 1 || hash == NULL || strlen(hash) != CM_SHA256_HEX_LEN ||
        !cm_ct_equal(hash, call->key_hash, CM_SHA256_HEX_LEN)) {
        unauthorized(call, "authentication_failed",
                     "Personal API key found in request Authorization header is invalid.");
        return;
    }
    snprintf(call->key_id, sizeof(call->key_id), "%s", cm_db_value(res, 0, 0, API_KEY_ID));
    snprintf(call->user_id, sizeof(call->user_id), "%s", cm_db_value(res, 0, 0, API_KEY_USER));
    maybe_touch(call, cm_db_value(res, 0, 0, API_KEY_LAST_USED));
    const api_route_t *route = call->route;
    bool write =
        !route->reads && (cm_http_req_method(call->req) & (CM_HTTP_GET | CM_HTTP_HEAD)) == 0;
    if (route->scope &&
        !api_access_allows(cm_db_value(res, 0, 0, API_KEY_SCOPES), route->scope, write)) {
        cm_api_error_t e;
        cm_api_error_set(&e, 403, "permission_denied", NULL,
                         "API key missing required scope '%s:%s'", route->scope,
                         write ? "write" : "read");
        api_respond_error(call, &e);
        return;
    }
    if (call->project_id[0]) {
        const char *org = cm_db_value(res, 0, 0, API_KEY_PROJECT_ORG);
        const char *teams = cm_db_value(res, 0, 0, API_KEY_SCOPED_TEAMS);
        const char *orgs = cm_db_value(res, 0, 0, API_KEY_SCOPED_ORGS);
        if (!api_access_reaches(teams, orgs, call->project_id, org)) {
            api_respond_not_found(call);
            return;
        }
        snprintf(call->org_id, sizeof(call->org_id), "%s", org);
    }
    call->next(call);
}

cm_slice_t api_call_bearer(api_call_t *call)
{
    cm_slice_t auth = cm_http_req_header(call->req, "Authorization");
    if (auth.len > 7 && strncasecmp(auth.p, "Bearer ", 7) == 0)
        return cm_slice_trim((cm_slice_t){auth.p + 7, auth.len - 7});
    return (cm_slice_t){NULL, 0};
}

void api_http_authorize(api_call_t *call, api_handler_t next)
{
    call->next = next;
    cm_slice_t token = api_call_bearer(call);
    if (token.len == 0) {
        unauthorized(call, "not_authenticated", "Authentication credentials were not provided.");
        return;
    }
    if (call->project_id[0] == '\0' && cm_http_req_param(call->req, "project_id").p) {
        cm_slice_t id = cm_http_req_param(call->req, "project_id");
        if (id.len > 18 || cm_slice_span(id, "0123456789") < id.len) {
            /* not a project id at all: found nowhere, but only once the key is good */
            snprintf(call->project_id, sizeof(call->project_id), "0");
        } else {
            snprintf(call->project_id, sizeof(call->project_id), "%.*s", (int)id.len, id.p);
        }
    }
    cm_sha256_hex(token.p, token.len, call->key_hash);
    api_store_key_lookup(call->ctx->db, call->key_hash,
                         call->project_id[0] ? call->project_id : NULL,
                         (unsigned)call->ctx->cfg.read_cache_ms, on_key, call);
}
