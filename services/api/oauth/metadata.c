/*
 * metadata.c - the discovery documents (docs/oauth.md "Discovery"): RFC 8414's
 * authorization server metadata and RFC 9728's protected resource
 * metadata, on BASE_URL and on OAUTH_URL alike; the issuer is the host the
 * request came to (oauth.c), so a client that discovered one host finds
 * that host in "issuer" and in the "iss" of its authorization responses.
 */
#include <stdio.h>

#include "cm/json.h"
#include "oauth/oauth_int.h"

static void cacheable(api_call_t *call)
{
    cm_http_res_header(call->req, "Cache-Control", "public, max-age=3600");
    cm_http_res_header(call->req, "Access-Control-Allow-Origin", "*");
}

static void url(cm_json_writer_t *w, const char *key, const char *base, const char *path)
{
    char u[1200];
    snprintf(u, sizeof(u), "%s%s", base, path);
    cm_json_key(w, key);
    cm_json_str_cstr(w, u);
}

static void strings(cm_json_writer_t *w, const char *key, const char *const *v, size_t n)
{
    cm_json_key(w, key);
    cm_json_begin_array(w);
    for (size_t i = 0; i < n; i++)
        cm_json_str_cstr(w, v[i]);
    cm_json_end_array(w);
}

#define STRINGS(w, key, ...)                                                                       \
    do {                                                                                           \
        static const char *const v_[] = {__VA_ARGS__};                                             \
        strings(w, key, v_, sizeof(v_) / sizeof(v_[0]));                                           \
    } while (0)

void api_oauth_as_metadata(api_call_t *call)
{
    const char *iss = api_oauth__issuer(call);
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "issuer");
    cm_json_str_cstr(&w, iss);
    url(&w, "authorization_endpoint", iss, "/oauth/authorize");
    url(&w, "token_endpoint", iss, "/oauth/token");
    url(&w, "revocation_endpoint", iss, "/oauth/revoke");
    url(&w, "introspection_endpoint", iss, "/oauth/introspect");
    cm_json_key(&w, "scopes_supported");
    api_scopes_oauth_write(&w);
    STRINGS(&w, "response_types_supported", "code");
    STRINGS(&w, "response_modes_supported", "query");
    STRINGS(&w, "grant_types_supported", "authorization_code", "refresh_token");
    STRINGS(&w, "token_endpoint_auth_methods_supported", "none");
    STRINGS(&w, "revocation_endpoint_auth_methods_supported", "none");
    STRINGS(&w, "introspection_endpoint_auth_methods_supported", "none");
    STRINGS(&w, "code_challenge_methods_supported", "S256");
    cm_json_key(&w, "authorization_response_iss_parameter_supported");
    cm_json_boolean(&w, true);
    cm_json_key(&w, "client_id_metadata_document_supported");
    cm_json_boolean(&w, true);
    cm_json_key(&w, "protected_resources");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < call->ctx->oauth->nresources; i++)
        cm_json_str_cstr(&w, call->ctx->oauth->resources[i]);
    cm_json_end_array(&w);
    cm_json_key(&w, "region");
    cm_json_str_cstr(&w, call->ctx->cfg.region);
    cm_json_end_object(&w);
    cacheable(call);
    api_respond_json(call, 200, &b);
}

void api_oauth_resource_metadata(api_call_t *call)
{
    const api_config_t *cfg = &call->ctx->cfg;
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "resource");
    cm_json_str_cstr(&w, cfg->base_url);
    cm_json_key(&w, "authorization_servers");
    cm_json_begin_array(&w);
    cm_json_str_cstr(&w, api_oauth__issuer(call));
    cm_json_end_array(&w);
    cm_json_key(&w, "scopes_supported");
    api_scopes_oauth_write(&w);
    STRINGS(&w, "bearer_methods_supported", "header");
    cm_json_key(&w, "resource_name");
    cm_json_str_cstr(&w, "Analytics API");
    cm_json_end_object(&w);
    cacheable(call);
    api_respond_json(call, 200, &b);
}
