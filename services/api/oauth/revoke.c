/*
 * revoke.c - RFC 7009 revocation and RFC 7662 introspection
 * (docs/oauth.md) for public clients.
 *
 * Revocation answers 200 with nothing whether the token was the client's,
 * another's, unknown or malformed, so it tells nothing; a refresh token
 * takes its whole family with it. Introspection must be authorized: the
 * caller presents the very token as its Bearer credential, or an access
 * token of the same client with the "introspection" scope, or names the
 * client the token belongs to (client_id: what a public client has). Any
 * other token, an unknown one, a revoked or expired one is {"active": false}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/json.h"
#include "oauth/oauth_int.h"
#include "store/store.h"

typedef struct {
    char *token, *client_id;
    char hash[CM_SHA256_HEX_LEN + 1];
    char bearer_hash[CM_SHA256_HEX_LEN + 1]; /* "" without a Bearer */
    char *bearer_client;                     /* an introspection-scoped caller's client */
} introspect_t;

static void introspect_free(void *p)
{
    introspect_t *x = p;
    free(x->token);
    free(x->client_id);
    free(x->bearer_client);
    free(x);
}

/* ---- revocation ---- */

static void on_revoked(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    (void)res;
    if (api_oauth__store_failed(call, status))
        return;
    cm_http_res_header(call->req, "Cache-Control", "no-store");
    api_respond_empty(call, 200);
}

void api_oauth_revoke(api_call_t *call)
{
    cm_slice_t form;
    if (!api_oauth__form(call, &form))
        return;
    if (api_oauth__client_auth_refused(call, form))
        return;
    int dup = 0;
    char *token = api_oauth__form_field(form, "token", &dup);
    char *client = api_oauth__form_field(form, "client_id", &dup);
    if (token == NULL || client == NULL || dup) {
        free(token);
        free(client);
        api_oauth__error(call, 400, "invalid_request", "token and client_id are required, once");
        return;
    }
    char hash[CM_SHA256_HEX_LEN + 1];
    cm_sha256_hex(token, strlen(token), hash);
    free(token);
    api_store_oauth_token_revoke(call->ctx->db, hash, client, on_revoked, call);
    free(client);
}

/* ---- introspection ---- */

static void inactive(api_call_t *call)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_append_cstr(&b, "{\"active\":false}");
    cm_http_res_header(call->req, "Cache-Control", "no-store");
    api_respond_json(call, 200, &b);
}

static void scope_string(cm_buf_t *out, const char *json)
{
    cm_json_doc_t *doc = NULL;
    if (json && cm_json_parse(json, strlen(json), NULL, &doc, NULL) == 0)
        for (size_t i = 0; i < cm_json_len(cm_json_root(doc)); i++) {
            if (i)
                cm_buf_putc(out, ' ');
            cm_json_str_append(cm_json_at(cm_json_root(doc), i), out);
        }
    cm_json_doc_free(doc);
}

static void on_token(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    introspect_t *x = call->state;
    if (api_oauth__store_failed(call, status))
        return;
#define V(c) cm_db_value(res, 0, 0, c)
    if (cm_db_nrows(res, 0) != 1) {
        inactive(call);
        return;
    }
    const char *client = V(API_TOKEN_CLIENT);
    bool self = x->bearer_hash[0] && strcmp(x->bearer_hash, x->hash) == 0;
    bool allowed = self || (x->bearer_client && strcmp(x->bearer_client, client) == 0) ||
                   (x->client_id && strcmp(x->client_id, client) == 0);
    char now[24];
    api_store_now(now);
    if (!allowed || atoi(V(API_TOKEN_REVOKED)) == 1 || V(API_TOKEN_ROTATED) != NULL ||
        atoll(now) >= atoll(V(API_TOKEN_EXPIRES))) {
        inactive(call);
        return;
    }
    cm_buf_t b = CM_BUF_INIT, scope = CM_BUF_INIT;
    scope_string(&scope, V(API_TOKEN_SCOPES));
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "active");
    cm_json_boolean(&w, true);
    cm_json_key(&w, "scope");
    cm_json_str_s(&w, cm_buf_slice(&scope));
    cm_json_key(&w, "client_id");
    cm_json_str_cstr(&w, client);
    cm_json_key(&w, "token_type");
    cm_json_str_cstr(&w,
                     strcmp(V(API_TOKEN_KIND), "access") == 0 ? "access_token" : "refresh_token");
    cm_json_key(&w, "exp");
    cm_json_int(&w, atoll(V(API_TOKEN_EXPIRES)) / 1000);
    cm_json_key(&w, "sub");
    cm_json_str_cstr(&w, V(API_TOKEN_USER));
    cm_json_key(&w, "aud");
    cm_json_str_cstr(&w, V(API_TOKEN_RESOURCE));
    cm_json_key(&w, "iss");
    cm_json_str_cstr(&w, api_oauth__issuer(call));
    cm_json_key(&w, "scoped_teams");
    V(API_TOKEN_TEAMS) ? cm_json_raw_value_compact(&w, cm_slice_from_cstr(V(API_TOKEN_TEAMS)))
                       : cm_json_null(&w);
    cm_json_key(&w, "scoped_organizations");
    V(API_TOKEN_ORGS) ? cm_json_raw_value_compact(&w, cm_slice_from_cstr(V(API_TOKEN_ORGS)))
                      : cm_json_null(&w);
    cm_json_end_object(&w);
#undef V
    cm_buf_free(&scope);
    cm_http_res_header(call->req, "Cache-Control", "no-store");
    api_respond_json(call, 200, &b);
}

/* A Bearer caller other than the token itself: its client, when it holds
 * the introspection scope. */
static void on_caller(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    introspect_t *x = call->state;
    if (api_oauth__store_failed(call, status))
        return;
    char now[24];
    api_store_now(now);
#define V(c) cm_db_value(res, 0, 0, c)
    bool live = cm_db_nrows(res, 0) == 1 && strcmp(V(API_TOKEN_KIND), "access") == 0 &&
                atoi(V(API_TOKEN_REVOKED)) == 0 && atoll(now) < atoll(V(API_TOKEN_EXPIRES));
    if (!live) {
        api_oauth__error(call, 401, "invalid_client", "the Bearer token is not valid");
        return;
    }
    if (strstr(V(API_TOKEN_SCOPES), "\"introspection\"") != NULL)
        x->bearer_client = cm_xstrdup(V(API_TOKEN_CLIENT));
#undef V
    api_store_oauth_token_get(call->ctx->db, x->hash, on_token, call);
}

void api_oauth_introspect(api_call_t *call)
{
    introspect_t *x = cm_xcalloc(1, sizeof(*x));
    call->state = x;
    call->state_free = introspect_free;
    cm_slice_t form;
    if (!api_oauth__form(call, &form))
        return;
    int dup = 0;
    x->token = api_oauth__form_field(form, "token", &dup);
    x->client_id = api_oauth__form_field(form, "client_id", &dup);
    if (x->token == NULL || dup) {
        api_oauth__error(call, 400, "invalid_request", "token is required, once");
        return;
    }
    cm_sha256_hex(x->token, strlen(x->token), x->hash);
    cm_slice_t bearer = api_call_bearer(call);
    if (bearer.len) {
        cm_sha256_hex(bearer.p, bearer.len, x->bearer_hash);
        if (strcmp(x->bearer_hash, x->hash) != 0) {
            api_store_oauth_token_get(call->ctx->db, x->bearer_hash, on_caller, call);
            return;
        }
    } else if (x->client_id == NULL) {
        api_oauth__error(call, 401, "invalid_client",
                         "introspection needs the client_id, or a Bearer token");
        return;
    }
    api_store_oauth_token_get(call->ctx->db, x->hash, on_token, call);
}
