/*
 * authorize.c - /oauth/authorize (docs/oauth.md "Authorization"): the
 * authorization code flow with PKCE S256 only.
 *
 *   GET   checks the request; signed out: the sign-in page; signed in: the
 *         consent page (client name, logo, client_id and redirect hosts,
 *         scopes, the unverified notice, the access level)
 *   POST  action=login: email and password (argon2 off the loop, within the
 *         guess limits of guesses.c), a session, then back to GET; action=consent: the CSRF token,
 * then a code (single use, 5 minutes, bound to client, redirect URI, PKCE challenge, scopes,
 * resource and access level) or access_denied
 *
 * Until the client and its redirect URI are trusted, a failure is an error
 * page (never a redirect); after, it goes back to the redirect URI with
 * error, error_description, state and iss. A form POST from another origin
 * is refused, and no response here carries CORS headers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/form.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/token.h"
#include "cm/uuid.h"
#include "oauth/oauth_int.h"
#include "store/store.h"

#define CODE_TTL_MS (5 * 60 * 1000)

/* Compared with when an email is unknown, so that the answer takes as long. */
static const char DUMMY_HASH[] = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$"
                                 "Vh1sR0n7oHsqdRkz/6C4vO+ZfHoQ5mOAPEDkJPrjm3o";

typedef struct {
    api_oauth_request_t r;
    api_oauth_app_t app;
    api_oauth_session_t *session;
    bool post;
    char *action, *decision, *access, *csrf, *email, *password;
    const char *issuer;
    char *code; /* the code issued (plain text, for the redirect only) */
    char ip[CM_IP_BUFLEN];
    char login_email[256]; /* normalised: the account the guess counts against */
} authz_t;

static void request_clear(api_oauth_request_t *r)
{
    free(r->response_type);
    free(r->client_id);
    free(r->redirect_uri);
    free(r->scope);
    free(r->state);
    free(r->code_challenge);
    free(r->method);
    free(r->resource);
    free(r->prompt);
    for (size_t i = 0; i < r->nscopes; i++)
        free(r->scopes[i]);
    free(r->scopes);
    free(r->resource_canonical);
}

static void authz_free(void *p)
{
    authz_t *a = p;
    request_clear(&a->r);
    api_oauth__app_clear(&a->app);
    api_oauth__session_free(a->session);
    free(a->action);
    free(a->decision);
    free(a->access);
    free(a->csrf);
    free(a->email);
    if (a->password) {
        memset(a->password, 0, strlen(a->password));
        free(a->password);
    }
    free(a->code);
    free(a);
}

/* ---- parameters ---- */

static int read_params(authz_t *a, cm_slice_t form)
{
    int dup = 0;
    api_oauth_request_t *r = &a->r;
    r->response_type = api_oauth__form_field(form, "response_type", &dup);
    r->client_id = api_oauth__form_field(form, "client_id", &dup);
    r->redirect_uri = api_oauth__form_field(form, "redirect_uri", &dup);
    r->scope = api_oauth__form_field(form, "scope", &dup);
    r->state = api_oauth__form_field(form, "state", &dup);
    r->code_challenge = api_oauth__form_field(form, "code_challenge", &dup);
    r->method = api_oauth__form_field(form, "code_challenge_method", &dup);
    r->resource = api_oauth__form_field(form, "resource", &dup);
    r->prompt = api_oauth__form_field(form, "prompt", &dup);
    if (a->post) {
        a->action = api_oauth__form_field(form, "action", &dup);
        a->decision = api_oauth__form_field(form, "decision", &dup);
        a->access = api_oauth__form_field(form, "access", &dup);
        a->csrf = api_oauth__form_field(form, "csrf", &dup);
        a->email = api_oauth__form_field(form, "email", &dup);
        a->password = api_oauth__form_field(form, "password", &dup);
    }
    return dup;
}

/* ---- answers ---- */

static void redirect_to(api_call_t *call, const char *location)
{
    cm_http_res_header(call->req, "Location", location);
    cm_http_res_header(call->req, "Cache-Control", "no-store");
    /* 303 after a POST: the browser follows with a GET, never re-posting the
     * form (RFC 9700 4.12) */
    api_respond_empty(call, (cm_http_req_method(call->req) & CM_HTTP_POST) ? 303 : 302);
}

static void param(cm_buf_t *b, const char *name, const char *value)
{
    if (value == NULL)
        return;
    cm_buf_putc(b, b->len && memchr(b->p, '?', b->len) ? '&' : '?');
    cm_buf_append_cstr(b, name);
    cm_buf_putc(b, '=');
    cm_url_encode(value, strlen(value), b);
}

/* Back to the client: its redirect URI with the outcome, state and iss. */
static void back(api_call_t *call, authz_t *a, const char *code, const char *error,
                 const char *description)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_append_cstr(&b, a->r.redirect_uri);
    param(&b, "code", code);
    param(&b, "error", error);
    param(&b, "error_description", description);
    param(&b, "state", a->r.state);
    param(&b, "iss", a->issuer);
    redirect_to(call, cm_buf_cstr(&b));
    cm_buf_free(&b);
}

/* The same authorization request, as a GET (after signing in). */
static void again(api_call_t *call, authz_t *a)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_buf_append_cstr(&b, "/oauth/authorize");
    param(&b, "response_type", a->r.response_type);
    param(&b, "client_id", a->r.client_id);
    param(&b, "redirect_uri", a->r.redirect_uri);
    param(&b, "scope", a->r.scope);
    param(&b, "state", a->r.state);
    param(&b, "code_challenge", a->r.code_challenge);
    param(&b, "code_challenge_method", a->r.method);
    param(&b, "resource", a->r.resource);
    redirect_to(call, cm_buf_cstr(&b));
    cm_buf_free(&b);
}

/* ---- the request's checks, once the client and redirect are trusted ---- */

static bool base64url_43(const char *s)
{
    if (s == NULL || strlen(s) != 43)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            return false;
    return true;
}

static bool in_json_list(const char *list, const char *s)
{
    if (list == NULL)
        return true; /* no ceiling declared */
    cm_json_doc_t *doc = NULL;
    bool found = false;
    if (cm_json_parse(list, strlen(list), NULL, &doc, NULL) == 0)
        for (size_t i = 0; i < cm_json_len(cm_json_root(doc)) && !found; i++)
            found = cm_json_str_eq(cm_json_at(cm_json_root(doc), i), cm_slice_from_cstr(s));
    cm_json_doc_free(doc);
    return found;
}

/* Scopes asked, clamped to what the app may hold (docs/oauth.md): unknown is
 * an error; privileged ones and those past the app's ceiling are dropped. */
static const char *grant_scopes(authz_t *a, char *bad, size_t badlen)
{
    api_oauth_request_t *r = &a->r;
    if (r->scope == NULL)
        return "scope is required";
    size_t cap = 1;
    for (const char *p = r->scope; *p; p++)
        cap += *p == ' ';
    r->scopes = cm_xcalloc(cap, sizeof(char *));
    char *copy = cm_xstrdup(r->scope), *save = NULL;
    const char *why = NULL;
    for (char *t = strtok_r(copy, " ", &save); t && !why; t = strtok_r(NULL, " ", &save)) {
        int kind = api_scope_oauth(cm_slice_from_cstr(t));
        if (kind == API_SCOPE_UNKNOWN) {
            snprintf(bad, badlen, "unknown scope %.64s", t);
            why = bad;
        } else if (kind == API_SCOPE_ALWAYS ||
                   (kind == API_SCOPE_GRANTABLE && in_json_list(a->app.ceiling_json, t))) {
            bool seen = false;
            for (size_t i = 0; i < r->nscopes; i++)
                seen |= strcmp(r->scopes[i], t) == 0;
            if (!seen)
                r->scopes[r->nscopes++] = cm_xstrdup(t);
        }
    }
    free(copy);
    if (!why && r->nscopes == 0)
        why = "none of the requested scopes may be granted to this application";
    return why;
}

/* 0, or answered with a redirect carrying the error. */
static int check_request(api_call_t *call, authz_t *a)
{
    api_oauth_request_t *r = &a->r;
    char bad[120];
    const char *why;
    if (r->response_type == NULL || strcmp(r->response_type, "code") != 0) {
        back(call, a, NULL, "unsupported_response_type", "only response_type=code is supported");
        return -1;
    }
    if (r->code_challenge == NULL || r->method == NULL || strcmp(r->method, "S256") != 0 ||
        !base64url_43(r->code_challenge)) {
        back(call, a, NULL, "invalid_request",
             "PKCE is required: code_challenge (43 characters) with code_challenge_method S256");
        return -1;
    }
    if ((why = grant_scopes(a, bad, sizeof(bad))) != NULL) {
        back(call, a, NULL, "invalid_scope", why);
        return -1;
    }
    const char *res = r->resource ? r->resource : call->ctx->cfg.base_url;
    if (!api_oauth__resource_known(call->ctx->oauth, cm_slice_from_cstr(res),
                                   &r->resource_canonical)) {
        back(call, a, NULL, "invalid_target", "this server issues no tokens for that resource");
        return -1;
    }
    return 0;
}

/* ---- the code ---- */

static void on_code_stored(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    authz_t *a = call->state;
    if (status != 0) {
        cm_log(CM_LOG_WARN, cm_http_req_id(call->req), "authorization code: %s", cm_db_error(res));
        back(call, a, NULL, "temporarily_unavailable", "try again shortly");
        return;
    }
    back(call, a, a->code, NULL, NULL);
}

static bool member(const api_oauth_named_t *list, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].id, id) == 0)
            return true;
    return false;
}

static void issue_code(api_call_t *call, authz_t *a)
{
    char orgs[128] = "", teams[64] = "";
    const char *level = a->access ? a->access : "all";
    if (strncmp(level, "organization:", 13) == 0 &&
        member(a->session->orgs, a->session->norgs, level + 13) && strlen(level + 13) < 100) {
        snprintf(orgs, sizeof(orgs), "[\"%s\"]", level + 13);
    } else if (strncmp(level, "project:", 8) == 0 &&
               member(a->session->projects, a->session->nprojects, level + 8) &&
               strlen(level + 8) < 30) {
        snprintf(teams, sizeof(teams), "[%s]", level + 8);
    } else if (strcmp(level, "all") != 0) {
        back(call, a, NULL, "invalid_request", "unknown access level");
        return;
    }
    cm_buf_t scopes = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &scopes);
    cm_json_begin_array(&w);
    for (size_t i = 0; i < a->r.nscopes; i++)
        cm_json_str_cstr(&w, a->r.scopes[i]);
    cm_json_end_array(&w);
    char code[CM_TOKEN_MAX], hash[CM_SHA256_HEX_LEN + 1], family[CM_UUID_STR_LEN + 1];
    char until[24], now[24];
    cm_token_new("", code);
    a->code = cm_xstrdup(code);
    cm_sha256_hex(code, strlen(code), hash);
    cm_uuid_v7(family);
    api_store_now(now);
    snprintf(until, sizeof(until), "%lld", atoll(now) + CODE_TTL_MS);
    api_store_oauth_grant_t g = {
        .client_id = a->r.client_id,
        .user_id = a->session->user_id,
        .scopes = cm_buf_cstr(&scopes),
        .resource = a->r.resource_canonical,
        .scoped_orgs = orgs[0] ? orgs : NULL,
        .scoped_teams = teams[0] ? teams : NULL,
        .family = family,
    };
    api_store_oauth_code_create(call->ctx->db, &g, hash, a->r.redirect_uri, a->r.code_challenge,
                                until, on_code_stored, call);
    cm_buf_free(&scopes);
}

/* ---- signing in ---- */

static void on_session_begun(api_call_t *call, int status)
{
    authz_t *a = call->state;
    if (status != 0) {
        api_oauth__page_error(call, 503, "temporarily_unavailable",
                              "The service cannot sign you in right now; try again shortly.");
        return;
    }
    again(call, a);
}

/* A sign-in that may not be tried now: the form again, with how long to wait. */
static void login_later(api_call_t *call, authz_t *a, int status, int64_t wait_ms,
                        const char *problem)
{
    char secs[24];
    snprintf(secs, sizeof(secs), "%lld", (long long)((wait_ms + 999) / 1000));
    cm_http_res_header(call->req, "Retry-After", secs);
    char why[200];
    snprintf(why, sizeof(why), "%s Try again in %s s.", problem, secs);
    api_oauth__page_login_status(call, status, &a->r, &a->app, why);
}

static void on_password(api_call_t *call, bool ok, const char *new_hash)
{
    authz_t *a = call->state;
    (void)new_hash;
    const char *user = call->helper;
    call->helper = NULL;
    bool right = ok && user != NULL;
    api_oauth__guess_end(call->ctx->oauth, a->login_email, a->ip,
                         right ? API_OAUTH_GUESS_RIGHT : API_OAUTH_GUESS_WRONG);
    if (!right) {
        free((char *)user);
        api_oauth__page_login(call, &a->r, &a->app, "Wrong email or password.");
        return;
    }
    api_oauth__session_begin(call, user, on_session_begun);
    free((char *)user);
}

static void on_user(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    authz_t *a = call->state;
    if (status != 0) {
        api_oauth__guess_end(call->ctx->oauth, a->login_email, a->ip, API_OAUTH_GUESS_NONE);
        api_oauth__page_error(call, 503, "temporarily_unavailable",
                              "The service cannot sign you in right now; try again shortly.");
        return;
    }
    bool found = cm_db_nrows(res, 0) == 1;
    /* the user's id rides along to the password's answer */
    call->helper = found ? cm_xstrdup(cm_db_value(res, 0, 0, 0)) : NULL;
    if (!api_password_try(call, found ? cm_db_value(res, 0, 0, 1) : DUMMY_HASH, a->password, NULL,
                          on_password)) {
        /* too many sign-ins at once (http/password.c): no guess was made */
        free(call->helper);
        call->helper = NULL;
        api_oauth__guess_end(call->ctx->oauth, a->login_email, a->ip, API_OAUTH_GUESS_NONE);
        login_later(call, a, 503, 1000, "Too many people are signing in right now.");
    }
}

static void login(api_call_t *call, authz_t *a)
{
    char email[256];
    if (a->email == NULL || a->password == NULL ||
        !api_email_normalize(cm_slice_from_cstr(a->email), email, sizeof(email))) {
        api_oauth__page_login(call, &a->r, &a->app, "Enter your email and password.");
        return;
    }
    int64_t wait = api_oauth__guess_begin(call->ctx->oauth, email, a->ip);
    if (wait > 0) {
        login_later(call, a, 429, wait,
                    "Too many failed sign-ins: each new failure makes the wait longer.");
        return;
    }
    snprintf(a->login_email, sizeof(a->login_email), "%s", email);
    api_store_user_by_email(call->ctx->db, email, on_user, call);
}

/* ---- the flow ---- */

static void on_session(api_call_t *call, int status, api_oauth_session_t *s)
{
    authz_t *a = call->state;
    a->session = s;
    if (status != 0) {
        api_oauth__page_error(call, 503, "temporarily_unavailable",
                              "The service is not available; try again shortly.");
        return;
    }
    if (a->r.prompt && strcmp(a->r.prompt, "none") == 0) { /* no silent grants: always refused */
        back(call, a, NULL, s ? "consent_required" : "login_required",
             "this server always asks the user");
        return;
    }
    if (a->post && a->action && strcmp(a->action, "login") == 0) {
        login(call, a);
        return;
    }
    if (s == NULL) {
        api_oauth__page_login(call, &a->r, &a->app, NULL);
        return;
    }
    if (!a->post) {
        api_oauth__page_consent(call, &a->r, &a->app, s);
        return;
    }
    if (a->action == NULL || strcmp(a->action, "consent") != 0 || a->csrf == NULL ||
        strlen(a->csrf) != strlen(s->csrf) || !cm_ct_equal(a->csrf, s->csrf, strlen(s->csrf))) {
        api_oauth__page_error(call, 403, "access_denied",
                              "The form was not the one this service showed; start again.");
        return;
    }
    if (a->decision == NULL || strcmp(a->decision, "approve") != 0) {
        back(call, a, NULL, "access_denied", "the user denied the request");
        return;
    }
    issue_code(call, a);
}

static void on_app(int status, const api_oauth_app_t *app, const char *error, void *ud)
{
    api_call_t *call = ud;
    authz_t *a = call->state;
    if (status != 0) {
        api_oauth__page_error(call, status == CM_EAGAIN ? 429 : 400,
                              status == CM_EAGAIN ? "temporarily_unavailable" : "invalid_request",
                              error);
        return;
    }
    a->app = *app; /* take a copy: app lives only during this call */
    a->app.client_id = cm_xstrdup(app->client_id);
    a->app.name = cm_xstrdup(app->name);
    a->app.logo_uri = app->logo_uri ? cm_xstrdup(app->logo_uri) : NULL;
    a->app.redirects_json = cm_xstrdup(app->redirects_json);
    a->app.ceiling_json = app->ceiling_json ? cm_xstrdup(app->ceiling_json) : NULL;
    a->app.org = app->org ? cm_xstrdup(app->org) : NULL;
    a->app.redirects = cm_xcalloc(app->nredirects + 1, sizeof(char *));
    for (size_t i = 0; i < app->nredirects; i++)
        a->app.redirects[i] = cm_xstrdup(app->redirects[i]);
    cm_slice_t regs[32];
    size_t n = 0;
    for (size_t i = 0; i < app->nredirects && n < 32; i++)
        regs[n++] = cm_slice_from_cstr(app->redirects[i]);
    if (a->r.redirect_uri == NULL) {
        api_oauth__page_error(call, 400, "invalid_request", "redirect_uri is required.");
        return;
    }
    if (!api_oauth__redirect_allowed(cm_slice_from_cstr(a->r.redirect_uri), regs, n)) {
        api_oauth__page_error(call, 400, "invalid_request",
                              "redirect_uri is not one of the application's redirect_uris.");
        return;
    }
    if (check_request(call, a) != 0)
        return;
    char hash[CM_SHA256_HEX_LEN + 1];
    if (api_oauth__session_cookie(call, hash))
        api_oauth__session_load(call, hash, on_session);
    else
        on_session(call, 0, NULL);
}

/* A form posted from another origin is not ours (login CSRF). */
static bool same_origin(api_call_t *call)
{
    cm_slice_t origin = cm_http_req_header(call->req, "Origin");
    if (origin.len == 0)
        return true; /* not a browser's cross-origin form */
    const api_config_t *cfg = &call->ctx->cfg;
    const char *ours[] = {cfg->base_url, cfg->oauth_url};
    for (size_t i = 0; i < 2; i++) {
        api_oauth_uri_t u;
        if (ours[i][0] == '\0' || api_oauth__uri_parse(cm_slice_from_cstr(ours[i]), &u) != 0)
            continue;
        size_t n = (size_t)(u.path.p - ours[i]);
        if (origin.len == n && strncasecmp(origin.p, ours[i], n) == 0)
            return true;
    }
    return false;
}

void api_oauth_authorize(api_call_t *call)
{
    cm_http_res_no_cors(call->req);
    authz_t *a = cm_xcalloc(1, sizeof(*a));
    call->state = a;
    call->state_free = authz_free;
    a->post = (cm_http_req_method(call->req) & CM_HTTP_POST) != 0;
    a->issuer = api_oauth__issuer(call);
    cm_slice_t form = a->post ? cm_http_req_body(call->req) : cm_http_req_query(call->req);
    if (a->post && !same_origin(call)) {
        api_oauth__page_error(call, 403, "access_denied", "This form was posted from elsewhere.");
        return;
    }
    if (read_params(a, form) != 0) {
        api_oauth__page_error(call, 400, "invalid_request", "A parameter was given twice.");
        return;
    }
    if (a->r.client_id == NULL) {
        api_oauth__page_error(call, 400, "invalid_request", "client_id is required.");
        return;
    }
    char buf[CM_IP_BUFLEN];
    const char *ip =
        cm_client_ip(cm_http_req_header(call->req, "X-Forwarded-For"), cm_http_req_peer(call->req),
                     call->ctx->cfg.svc.trusted_proxies, buf, sizeof(buf));
    snprintf(a->ip, sizeof(a->ip), "%s", ip ? ip : "");
    api_oauth__app_resolve(call->ctx->oauth, a->r.client_id, a->ip, on_app, call);
}
