/*
 * token.c - /oauth/token (docs/oauth.md "Tokens"): the authorization_code and
 * refresh_token grants for public clients (client_id, no secret).
 *
 * Tokens are pha_ (access, OAUTH_ACCESS_TTL) and phr_ (refresh,
 * OAUTH_REFRESH_TTL), 256 random bits each, stored as SHA-256 only. Every
 * refresh rotates: the old refresh token is marked and a new pair issued
 * in one transaction; a refresh token presented again after its rotation
 * (or a code used twice) revokes its whole family, the tokens of that one
 * authorization. Errors are RFC 6749 5.2's, never cached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/base64.h"
#include "cm/err.h"
#include "cm/form.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/token.h"
#include "cm/uuid.h"
#include "oauth/oauth_int.h"
#include "store/store.h"

typedef struct {
    char *grant_type, *code, *redirect_uri, *client_id, *verifier, *refresh, *scope, *resource;
    char access[CM_TOKEN_MAX], refresh_new[CM_TOKEN_MAX];
    char hash[CM_SHA256_HEX_LEN + 1]; /* of the code or the refresh token presented */
    char family[64];
    /* the grant being continued, copied out of the store's row */
    char *scopes_json, *resource_row, *orgs, *teams, *user_id;
} token_req_t;

static void token_req_free(void *p)
{
    token_req_t *t = p;
    free(t->grant_type);
    free(t->code);
    free(t->redirect_uri);
    free(t->client_id);
    free(t->verifier);
    free(t->refresh);
    free(t->scope);
    free(t->resource);
    free(t->scopes_json);
    free(t->resource_row);
    free(t->orgs);
    free(t->teams);
    free(t->user_id);
    memset(t->access, 0, sizeof(t->access));
    memset(t->refresh_new, 0, sizeof(t->refresh_new));
    free(t);
}

void api_oauth__error(api_call_t *call, int status, const char *error, const char *description)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "error");
    cm_json_str_cstr(&w, error);
    if (description) {
        cm_json_key(&w, "error_description");
        cm_json_str_cstr(&w, description);
    }
    cm_json_end_object(&w);
    cm_http_res_header(call->req, "Cache-Control", "no-store");
    cm_http_res_header(call->req, "Pragma", "no-cache");
    if (status == 401)
        cm_http_res_header(call->req, "WWW-Authenticate", "Basic realm=\"oauth\"");
    api_respond_json(call, status, &b);
}

bool api_oauth__store_failed(api_call_t *call, int status)
{
    if (status == 0)
        return false;
    api_oauth__error(call, 503, "temporarily_unavailable", "try again shortly");
    return true;
}

/* A form's field (NULL: absent or empty); *dup counts a repeated one. */
char *api_oauth__form_field(cm_slice_t form, const char *name, int *dup)
{
    cm_form_iter_t it;
    cm_form_iter_init(&it, form.p, form.len);
    cm_slice_t n, v;
    char *out = NULL;
    cm_buf_t b = CM_BUF_INIT;
    while (cm_form_next(&it, &n, &v)) {
        cm_buf_reset(&b);
        if (cm_url_decode(n.p, n.len, true, &b) != 0 || strlen(name) != b.len ||
            memcmp(name, b.p, b.len) != 0)
            continue;
        cm_buf_reset(&b);
        if (cm_url_decode(v.p, v.len, true, &b) != 0 || b.len == 0 ||
            memchr(b.p, '\0', b.len) != NULL)
            continue;
        if (out != NULL) {
            (*dup)++;
            continue;
        }
        out = cm_xstrdup(cm_buf_cstr(&b));
    }
    cm_buf_free(&b);
    return out;
}

/* The body must be a form (oauth4webapi adds ";charset=UTF-8"). */
bool api_oauth__form(api_call_t *call, cm_slice_t *body)
{
    cm_slice_t ct = cm_http_req_header(call->req, "Content-Type");
    const char *form = "application/x-www-form-urlencoded";
    size_t n = strlen(form);
    if (ct.len >= n && strncasecmp(ct.p, form, n) == 0 &&
        (ct.len == n || ct.p[n] == ';' || ct.p[n] == ' ')) {
        *body = cm_http_req_body(call->req);
        return true;
    }
    api_oauth__error(call, 400, "invalid_request",
                     "the body must be application/x-www-form-urlencoded");
    return false;
}

/* Client authentication other than none is refused (public clients only). */
bool api_oauth__client_auth_refused(api_call_t *call, cm_slice_t form)
{
    int dup = 0;
    char *secret = api_oauth__form_field(form, "client_secret", &dup);
    char *assertion = api_oauth__form_field(form, "client_assertion", &dup);
    bool refused = secret || assertion || cm_http_req_header(call->req, "Authorization").len;
    free(secret);
    free(assertion);
    if (refused)
        api_oauth__error(call, 401, "invalid_client",
                         "clients here are public: send client_id only, no secret or assertion");
    return refused;
}

/* ---- the answer ---- */

static void write_list(cm_json_writer_t *w, const char *key, const char *json)
{
    cm_json_key(w, key);
    if (json)
        cm_json_raw_value_compact(w, cm_slice_from_cstr(json));
    else
        cm_json_null(w);
}

static void respond_tokens(api_call_t *call, token_req_t *t)
{
    cm_buf_t b = CM_BUF_INIT, scope = CM_BUF_INIT;
    cm_json_doc_t *doc = NULL;
    if (cm_json_parse(t->scopes_json, strlen(t->scopes_json), NULL, &doc, NULL) == 0)
        for (size_t i = 0; i < cm_json_len(cm_json_root(doc)); i++) {
            if (i)
                cm_buf_putc(&scope, ' ');
            cm_json_str_append(cm_json_at(cm_json_root(doc), i), &scope);
        }
    cm_json_doc_free(doc);
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "access_token");
    cm_json_str_cstr(&w, t->access);
    cm_json_key(&w, "token_type");
    cm_json_str_cstr(&w, "Bearer");
    cm_json_key(&w, "expires_in");
    cm_json_int(&w, call->ctx->cfg.oauth_access_ttl_ms / 1000);
    cm_json_key(&w, "refresh_token");
    cm_json_str_cstr(&w, t->refresh_new);
    cm_json_key(&w, "scope");
    cm_json_str_s(&w, cm_buf_slice(&scope));
    write_list(&w, "scoped_teams", t->teams);
    write_list(&w, "scoped_organizations", t->orgs);
    cm_json_end_object(&w);
    cm_buf_free(&scope);
    cm_http_res_header(call->req, "Cache-Control", "no-store");
    cm_http_res_header(call->req, "Pragma", "no-cache");
    api_respond_json(call, 200, &b);
}

/* Two fresh tokens and the row values of the grant they continue, as the
 * store takes them (its strings live here until the store call returns). */
typedef struct {
    api_store_oauth_grant_t g;
    api_store_oauth_pair_t p;
    char ids[2][CM_UUID_STR_LEN + 1], hashes[2][CM_SHA256_HEX_LEN + 1], expires[2][24];
} pair_t;

static void new_pair(api_call_t *call, token_req_t *t, pair_t *np)
{
    cm_token_new("pha_", t->access);
    cm_token_new("phr_", t->refresh_new);
    cm_sha256_hex(t->access, strlen(t->access), np->hashes[0]);
    cm_sha256_hex(t->refresh_new, strlen(t->refresh_new), np->hashes[1]);
    cm_uuid_v7(np->ids[0]);
    cm_uuid_v7(np->ids[1]);
    char now[24];
    api_store_now(now);
    snprintf(np->expires[0], 24, "%lld", atoll(now) + call->ctx->cfg.oauth_access_ttl_ms);
    snprintf(np->expires[1], 24, "%lld", atoll(now) + call->ctx->cfg.oauth_refresh_ttl_ms);
    np->g = (api_store_oauth_grant_t){
        .client_id = t->client_id,
        .user_id = t->user_id,
        .scopes = t->scopes_json,
        .resource = t->resource_row,
        .scoped_orgs = t->orgs,
        .scoped_teams = t->teams,
        .family = t->family,
    };
    np->p = (api_store_oauth_pair_t){np->ids[0], np->hashes[0], np->expires[0],
                                     np->ids[1], np->hashes[1], np->expires[1]};
}

/* Both grants: the resource asked, if any, is the one authorized (else
 * invalid_target answered, false); then a new pair. */
static bool targeted_pair(api_call_t *call, token_req_t *t, pair_t *np)
{
    char *canon = NULL;
    if (t->resource &&
        (!api_oauth__resource_known(call->ctx->oauth, cm_slice_from_cstr(t->resource), &canon) ||
         strcmp(canon, t->resource_row) != 0)) {
        free(canon);
        api_oauth__error(call, 400, "invalid_target", "resource is not the one authorized");
        return false;
    }
    free(canon);
    new_pair(call, t, np);
    return true;
}

static void on_issued(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        cm_log(CM_LOG_WARN, cm_http_req_id(call->req), "issuing tokens: %s", cm_db_error(res));
        api_oauth__error(call, 503, "temporarily_unavailable", "try again shortly");
        return;
    }
    respond_tokens(call, call->state);
}

/* A reuse: the family goes, and the request is refused either way. */
static void on_family_revoked(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    (void)res;
    if (status != 0)
        cm_log(CM_LOG_ERROR, cm_http_req_id(call->req), "revoking a reused grant failed");
    api_oauth__error(call, 400, "invalid_grant",
                     "this grant was already used: every token it made is revoked");
}

static void revoke_family(api_call_t *call, token_req_t *t)
{
    cm_log(CM_LOG_WARN, cm_http_req_id(call->req),
           "OAuth grant reused (client %s): revoking its family %s", t->client_id, t->family);
    api_store_oauth_family_revoke(call->ctx->db, t->family, on_family_revoked, call);
}

static char *copy(const char *s)
{
    return s ? cm_xstrdup(s) : NULL;
}

/* ---- authorization_code ---- */

static bool pkce_ok(const char *verifier, const char *challenge)
{
    size_t n = verifier ? strlen(verifier) : 0;
    if (n < 43 || n > 128 || challenge == NULL || strlen(challenge) != 43)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = verifier[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_' || c == '~'))
            return false;
    }
    uint8_t digest[CM_SHA256_LEN];
    cm_sha256(verifier, n, digest);
    cm_buf_t b = CM_BUF_INIT;
    cm_base64url_encode(digest, sizeof(digest), &b);
    bool ok = b.len == 43 && cm_ct_equal(b.p, challenge, 43);
    cm_buf_free(&b);
    return ok;
}

static void on_code(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    token_req_t *t = call->state;
    if (api_oauth__store_failed(call, status))
        return;
    if (cm_db_nrows(res, 1) != 1) {
        api_oauth__error(call, 400, "invalid_grant", "the code is not valid");
        return;
    }
#define V(c) cm_db_value(res, 1, 0, c)
    snprintf(t->family, sizeof(t->family), "%s", V(API_CODE_FAMILY));
    t->user_id = copy(V(API_CODE_USER));
    t->scopes_json = copy(V(API_CODE_SCOPES));
    t->resource_row = copy(V(API_CODE_RESOURCE));
    t->orgs = copy(V(API_CODE_ORGS));
    t->teams = copy(V(API_CODE_TEAMS));
    if (atoll(V(API_CODE_USED)) > 1) {
        revoke_family(call, t); /* RFC 6749 4.1.2: a code used twice takes its tokens */
        return;
    }
    char now[24];
    api_store_now(now);
    const char *why = NULL;
    if (atoll(now) >= atoll(V(API_CODE_EXPIRES)))
        why = "the code has expired";
    else if (strcmp(V(API_CODE_CLIENT), t->client_id) != 0)
        why = "the code was issued to another client";
    else if (t->redirect_uri && strcmp(V(API_CODE_REDIRECT), t->redirect_uri) != 0)
        why = "redirect_uri is not the one of the authorization request";
    else if (!pkce_ok(t->verifier, V(API_CODE_CHALLENGE)))
        why = "code_verifier does not match the code_challenge";
#undef V
    if (why) {
        api_oauth__error(call, 400, "invalid_grant", why);
        return;
    }
    pair_t np;
    if (targeted_pair(call, t, &np))
        api_store_oauth_tokens_issue(call->ctx->db, &np.g, &np.p, on_issued, call);
}

/* ---- refresh_token ---- */

static void on_rotated(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    token_req_t *t = call->state;
    if (api_oauth__store_failed(call, status))
        return;
    if (cm_db_changes(res, 0) != 1) { /* another request rotated it first */
        revoke_family(call, t);
        return;
    }
    respond_tokens(call, t);
}

/* Every scope of asked (space separated) is in granted (a JSON array). */
static bool scopes_within(const char *asked, const char *granted, char **narrowed)
{
    cm_json_doc_t *doc = NULL;
    if (cm_json_parse(granted, strlen(granted), NULL, &doc, NULL) != 0)
        return false;
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_array(&w);
    char *copy_ = cm_xstrdup(asked), *save = NULL;
    bool ok = true;
    for (char *s = strtok_r(copy_, " ", &save); s && ok; s = strtok_r(NULL, " ", &save)) {
        bool found = false;
        for (size_t i = 0; i < cm_json_len(cm_json_root(doc)) && !found; i++)
            found = cm_json_str_eq(cm_json_at(cm_json_root(doc), i), cm_slice_from_cstr(s));
        ok = found;
        cm_json_str_cstr(&w, s);
    }
    cm_json_end_array(&w);
    free(copy_);
    cm_json_doc_free(doc);
    if (ok)
        *narrowed = cm_buf_detach(&out, NULL);
    cm_buf_free(&out);
    return ok;
}

static void on_refresh_token(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    token_req_t *t = call->state;
    if (api_oauth__store_failed(call, status))
        return;
#define V(c) cm_db_value(res, 0, 0, c)
    if (cm_db_nrows(res, 0) != 1 || strcmp(V(API_TOKEN_KIND), "refresh") != 0 ||
        strcmp(V(API_TOKEN_CLIENT), t->client_id) != 0) {
        api_oauth__error(call, 400, "invalid_grant", "the refresh token is not valid");
        return;
    }
    snprintf(t->family, sizeof(t->family), "%s", V(API_TOKEN_FAMILY));
    t->user_id = copy(V(API_TOKEN_USER));
    t->scopes_json = copy(V(API_TOKEN_SCOPES));
    t->resource_row = copy(V(API_TOKEN_RESOURCE));
    t->orgs = copy(V(API_TOKEN_ORGS));
    t->teams = copy(V(API_TOKEN_TEAMS));
    char now[24];
    api_store_now(now);
    if (atoi(V(API_TOKEN_REVOKED)) == 1) {
        api_oauth__error(call, 400, "invalid_grant", "the refresh token was revoked");
        return;
    }
    if (V(API_TOKEN_ROTATED) != NULL) { /* RFC 9700 4.14: a replayed refresh token */
        revoke_family(call, t);
        return;
    }
    if (atoll(now) >= atoll(V(API_TOKEN_EXPIRES))) {
        api_oauth__error(call, 400, "invalid_grant", "the refresh token has expired");
        return;
    }
#undef V
    if (t->scope) {
        char *narrowed = NULL;
        if (!scopes_within(t->scope, t->scopes_json, &narrowed)) {
            api_oauth__error(call, 400, "invalid_scope", "scope may only narrow what was granted");
            return;
        }
        free(t->scopes_json);
        t->scopes_json = narrowed;
    }
    pair_t np;
    if (targeted_pair(call, t, &np))
        api_store_oauth_refresh_rotate(call->ctx->db, t->hash, &np.g, &np.p, on_rotated, call);
}

void api_oauth_token(api_call_t *call)
{
    token_req_t *t = cm_xcalloc(1, sizeof(*t));
    call->state = t;
    call->state_free = token_req_free;
    cm_slice_t form;
    if (!api_oauth__form(call, &form))
        return;
    if (api_oauth__client_auth_refused(call, form))
        return;
    int dup = 0;
    t->grant_type = api_oauth__form_field(form, "grant_type", &dup);
    t->code = api_oauth__form_field(form, "code", &dup);
    t->redirect_uri = api_oauth__form_field(form, "redirect_uri", &dup);
    t->client_id = api_oauth__form_field(form, "client_id", &dup);
    t->verifier = api_oauth__form_field(form, "code_verifier", &dup);
    t->refresh = api_oauth__form_field(form, "refresh_token", &dup);
    t->scope = api_oauth__form_field(form, "scope", &dup);
    t->resource = api_oauth__form_field(form, "resource", &dup);
    if (dup) {
        api_oauth__error(call, 400, "invalid_request", "a parameter was given twice");
        return;
    }
    if (t->grant_type == NULL) {
        api_oauth__error(call, 400, "invalid_request", "grant_type is required");
        return;
    }
    if (t->client_id == NULL) {
        api_oauth__error(call, 401, "invalid_client", "client_id is required");
        return;
    }
    /* a client living on refresh grants alone still sees its document's
     * changes (its cached copy is refreshed when stale) */
    api_oauth__app_touch(call->ctx->oauth, t->client_id);
    if (strcmp(t->grant_type, "authorization_code") == 0) {
        if (t->code == NULL || t->verifier == NULL) {
            api_oauth__error(call, 400, "invalid_request", "code and code_verifier are required");
            return;
        }
        cm_sha256_hex(t->code, strlen(t->code), t->hash);
        api_store_oauth_code_take(call->ctx->db, t->hash, on_code, call);
    } else if (strcmp(t->grant_type, "refresh_token") == 0) {
        if (t->refresh == NULL) {
            api_oauth__error(call, 400, "invalid_request", "refresh_token is required");
            return;
        }
        cm_sha256_hex(t->refresh, strlen(t->refresh), t->hash);
        api_store_oauth_token_get(call->ctx->db, t->hash, on_refresh_token, call);
    } else {
        api_oauth__error(call, 400, "unsupported_grant_type",
                         "authorization_code and refresh_token are supported");
    }
}
