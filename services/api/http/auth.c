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

#include "cm/alloc.h"
#include "cm/digest.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "access/access.h"
#include "http/http_int.h"
#include "store/store.h"

#define TOUCH_EVERY_MS 60000 /* last_used_at is written at most once a minute */

/* RFC 9728 5.1 / RFC 6750 3: where to find the authorization server, and
 * for a token that was presented and refused, why. */
static void challenge(api_call_t *call, const char *error, const char *scope)
{
    char header[800];
    int n = snprintf(header, sizeof(header),
                     "Bearer resource_metadata=\"%s/.well-known/oauth-protected-resource\"",
                     call->ctx->cfg.base_url);
    if (error && n > 0 && (size_t)n < sizeof(header))
        n += snprintf(header + n, sizeof(header) - (size_t)n, ", error=\"%s\"", error);
    if (scope && n > 0 && (size_t)n < sizeof(header))
        snprintf(header + n, sizeof(header) - (size_t)n, ", scope=\"%s\"", scope);
    cm_http_res_header(call->req, "WWW-Authenticate", header);
}

static void unauthorized_token(api_call_t *call, const char *detail)
{
    challenge(call, "invalid_token", NULL);
    cm_api_error_t e;
    cm_api_error_set(&e, 401, "invalid_token", NULL, "%s", detail);
    e.type = CM_ERR_AUTHENTICATION;
    api_respond_error(call, &e);
}

static void unauthorized(api_call_t *call, const char *code, const char *detail)
{
    challenge(call, NULL, NULL);
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

static char *dup_or_null(const char *s)
{
    return s ? cm_xstrdup(s) : NULL;
}

/* What the handlers judge a key's creation or a user's change by. */
static void keep_credential(api_call_t *call, const cm_db_res_t *res, bool token)
{
    call->oauth = token;
    call->cred_scopes = dup_or_null(cm_db_value(res, 0, 0, API_KEY_SCOPES));
    call->cred_orgs = dup_or_null(cm_db_value(res, 0, 0, API_KEY_SCOPED_ORGS));
    call->cred_teams = dup_or_null(cm_db_value(res, 0, 0, API_KEY_SCOPED_TEAMS));
}

bool api_call_refuse_oauth(api_call_t *call, const char *what)
{
    if (!call->oauth)
        return false;
    cm_api_error_t e;
    cm_api_error_set(&e, 403, "permission_denied", NULL,
                     "OAuth access tokens cannot %s: use a personal API key.", what);
    api_respond_error(call, &e);
    return true;
}

bool api_call_full_user(const api_call_t *call)
{
    return !call->oauth && call->cred_orgs == NULL && call->cred_teams == NULL &&
           api_access_allows(call->cred_scopes, "user", true);
}

/* What a key or a token may do here, once it is known to be good: the
 * route's scope, then the project. Columns are API_KEY_*'s. */
static void permitted(api_call_t *call, const cm_db_res_t *res, bool token)
{
    snprintf(call->key_id, sizeof(call->key_id), "%s", cm_db_value(res, 0, 0, API_KEY_ID));
    snprintf(call->user_id, sizeof(call->user_id), "%s", cm_db_value(res, 0, 0, API_KEY_USER));
    keep_credential(call, res, token);
    const api_route_t *route = call->route;
    bool write =
        !route->reads && (cm_http_req_method(call->req) & (CM_HTTP_GET | CM_HTTP_HEAD)) == 0;
    if (route->scope &&
        !api_access_allows(cm_db_value(res, 0, 0, API_KEY_SCOPES), route->scope, write)) {
        char scope[96];
        snprintf(scope, sizeof(scope), "%s:%s", route->scope, write ? "write" : "read");
        if (token)
            challenge(call, "insufficient_scope", scope);
        cm_api_error_t e;
        cm_api_error_set(&e, 403, token ? "insufficient_scope" : "permission_denied", NULL,
                         "%s missing required scope '%s'", token ? "OAuth token" : "API key",
                         scope);
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
        cm_http_req_log_field(call->req, "project_id", call->project_id); /* the access line */
    }
    /* An organization's own routes: a key scoped to organizations reaches
     * only those (as it reaches only their projects); found nowhere else. */
    cm_slice_t org = cm_http_req_param(call->req, "org_id");
    if (org.p && call->cred_teams) { /* as PostHog: a project's key is for project routes */
        cm_api_error_t e;
        cm_api_error_set(&e, 403, "permission_denied", NULL,
                         "API keys scoped to projects are only supported on project routes.");
        api_respond_error(call, &e);
        return;
    }
    if (org.p && call->cred_orgs) {
        char id[64];
        snprintf(id, sizeof(id), "%.*s", (int)(org.len < 63 ? org.len : 63), org.p);
        if (!api_access_list_has(call->cred_orgs, id)) {
            api_respond_not_found(call);
            return;
        }
    }
    call->next(call);
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
    /* the key's id first: the touch names it */
    snprintf(call->key_id, sizeof(call->key_id), "%s", cm_db_value(res, 0, 0, API_KEY_ID));
    maybe_touch(call, cm_db_value(res, 0, 0, API_KEY_LAST_USED));
    permitted(call, res, false);
}

/* An OAuth access token (pha_): live, and for this resource (its audience
 * is BASE_URL: a token issued for another resource is refused here). */
static void on_access_token(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    const char *hash = cm_db_value(res, 0, 0, API_KEY_HASH);
    if (cm_db_nrows(res, 0) != 1 || hash == NULL || strlen(hash) != CM_SHA256_HEX_LEN ||
        !cm_ct_equal(hash, call->key_hash, CM_SHA256_HEX_LEN)) {
        unauthorized_token(call, "The access token is not valid.");
        return;
    }
    char now[24];
    api_store_now(now);
    const char *aud = cm_db_value(res, 0, 0, API_ACCESS_RESOURCE);
    if (atoi(cm_db_value(res, 0, 0, API_ACCESS_REVOKED)) != 0) {
        unauthorized_token(call, "The access token was revoked.");
        return;
    }
    if (atoll(now) >= atoll(cm_db_value(res, 0, 0, API_ACCESS_EXPIRES))) {
        unauthorized_token(call, "The access token has expired.");
        return;
    }
    if (aud == NULL || strcmp(aud, call->ctx->token_audience) != 0) {
        unauthorized_token(call, "The access token was issued for another resource.");
        return;
    }
    permitted(call, res, true);
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
    const char *project = call->project_id[0] ? call->project_id : NULL;
    unsigned cache_ms = (unsigned)call->ctx->cfg.read_cache_ms;
    if (token.len > 4 && memcmp(token.p, "pha_", 4) == 0)
        api_store_oauth_access_lookup(call->ctx->db, call->key_hash, project, cache_ms,
                                      on_access_token, call);
    else if (token.len > 4 && memcmp(token.p, "phr_", 4) == 0)
        unauthorized_token(call, "A refresh token is not an access token.");
    else
        api_store_key_lookup(call->ctx->db, call->key_hash, project, cache_ms, on_key, call);
}
