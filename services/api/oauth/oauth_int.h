/*
 * oauth_int.h - what the oauth/ folder's files share (see oauth.h).
 */
#ifndef API_OAUTH_INT_H
#define API_OAUTH_INT_H

#include <stdbool.h>

#include "cm/buf.h"
#include "cm/client_ip.h"
#include "cm/digest.h"
#include "cm/http_client.h"
#include "http/http.h"
#include "oauth/oauth.h"

/* ---- uri.c: the URLs OAuth trusts (pure) ---- */

#define API_OAUTH_URI_MAX 2048

typedef struct {
    cm_slice_t scheme, host, path, query; /* host without an IPv6 literal's brackets */
    unsigned port;                        /* when has_port */
    bool has_port, has_query, has_fragment, has_userinfo, ipv6;
} api_oauth_uri_t;

/* scheme://authority[path][?query][#fragment], refusing what could be read
 * two ways (backslashes, encoded separators in the authority, whitespace,
 * controls, non-ASCII, userinfo). 0 or CM_EINVAL. u points into s. */
int api_oauth__uri_parse(cm_slice_t s, api_oauth_uri_t *u);
/* localhost, 127.0.0.1 or ::1. */
bool api_oauth__loopback(const api_oauth_uri_t *u);
/* NULL when u may be a redirect URI at all (https, or http on loopback; no
 * fragment), else why not. */
const char *api_oauth__redirect_shape(const api_oauth_uri_t *u);
/* Seed 5.5-5.6: requested matches one of the registered URIs. */
bool api_oauth__redirect_allowed(cm_slice_t requested, const cm_slice_t *registered, size_t n);
/* A host name no client document may live on (localhost, .local,
 * .internal, ...: docs/oauth.md "Clients"). */
bool api_oauth__host_blocked(cm_slice_t host);
/* NULL when id has a CIMD client_id's shape (docs/oauth.md: https, a path, no
 * query, fragment, dot segments; a public-looking host), else why not.
 * allow_loopback (a test switch) lets https://127.0.0.1 and [::1] through. */
const char *api_oauth__client_id_check(cm_slice_t id, api_oauth_uri_t *u, bool allow_loopback);

/* ---- oauth.c: the context ---- */

#define API_OAUTH_FETCH_CONNECT_MS 5000
#define API_OAUTH_FETCH_TOTAL_MS   10000
#define API_OAUTH_FETCH_READ_MS    5000 /* between two bytes of the answer */
#define API_OAUTH_FETCH_MAX_BYTES  5120 /* a client document's size limit (5 KB) */
#define API_OAUTH_MAX_RESOURCES    16

typedef struct cimd_fetch cimd_fetch_t; /* cimd.c: a document being fetched */
typedef struct oauth_limits oauth_limits_t;
typedef struct oauth_guesses oauth_guesses_t;
typedef struct github_key github_key_t;

struct api_oauth {
    api_ctx_t *ctx;
    cm_http_client_t *fetch;    /* public addresses only */
    cm_http_client_t *loopback; /* OAUTH_CIMD_ALLOW_LOOPBACK: loopback literals only */
    char *resources[API_OAUTH_MAX_RESOURCES]; /* canonical; [0] is BASE_URL */
    size_t nresources;
    cimd_fetch_t *fetches; /* in flight, one per client_id: later askers wait on it */
    oauth_limits_t *limits;
    oauth_guesses_t *guesses; /* guesses.c: failed sign-ins */
    github_key_t *github_keys;
    size_t ngithub_keys;
};

/* scheme and host lowercased, the default port and trailing slashes gone. */
void api_oauth__canonical(cm_slice_t url, cm_buf_t *out);
const char *api_oauth__issuer(api_call_t *call);
/* resource is one tokens may be issued for: *canonical gets its canonical
 * form (the caller frees it). */
bool api_oauth__resource_known(api_oauth_t *o, cm_slice_t resource, char **canonical);

/* ---- cimd.c: clients known by their documents ---- */

typedef struct {
    char *client_id, *name, *logo_uri;   /* logo_uri: NULL when absent or not acceptable */
    char *redirects_json, *ceiling_json; /* JSON arrays; ceiling NULL: none declared */
    char *org;                           /* linked organization, or NULL */
    char **redirects;
    size_t nredirects;
    bool verified; /* in this region */
} api_oauth_app_t;

/* status 0 with app (valid during the call), or CM_EINVAL (the client_id's
 * shape, an invalid document, a status other than 200), CM_EFORBIDDEN (a
 * special-use address), CM_EUNAVAIL (network, TLS, the store), CM_EAGAIN
 * (provisioning limits) with error in words. cb may run before
 * api_oauth__app_resolve returns. ip: the client's address, for the limits. */
typedef void (*api_oauth_app_cb)(int status, const api_oauth_app_t *app, const char *error,
                                 void *ud);
void api_oauth__app_resolve(api_oauth_t *o, const char *client_id, const char *ip,
                            api_oauth_app_cb cb, void *ud);
void api_oauth__app_clear(api_oauth_app_t *a);
/* A known client whose document is stale is re-fetched behind the caller's
 * back; an unknown one is left alone (never provisioned from here). */
void api_oauth__app_touch(api_oauth_t *o, const char *client_id);
/* Cache-Control's max-age in seconds, clamped to [300, 86400]; 3600 without. */
int64_t api_oauth__max_age(cm_slice_t cache_control);
/* The document fetched from url: NULL and a filled a (and the verification
 * token, if any, in *vtoken), or why it is refused. Pure. */
const char *api_oauth__doc_validate(cm_slice_t url, cm_slice_t body, const char *vendor,
                                    bool allow_loopback, api_oauth_app_t *a, char **vtoken);

/* ---- authorize.c, pages.c, session.c: the browser's side ---- */

/* An authorization request's parameters (NULL: absent) and what was made
 * of them: the scopes granted, the resource in canonical form. */
typedef struct {
    char *response_type, *client_id, *redirect_uri, *scope, *state, *code_challenge, *method;
    char *resource, *prompt;
    char **scopes;
    size_t nscopes;
    char *resource_canonical;
} api_oauth_request_t;

typedef struct {
    char *id, *name;
} api_oauth_named_t;

/* A signed-in browser, and what the consent page may offer it. */
typedef struct {
    char *user_id, *csrf, *email;
    api_oauth_named_t *orgs, *projects;
    size_t norgs, nprojects;
} api_oauth_session_t;

void api_oauth__page_error(api_call_t *call, int status, const char *error, const char *why);
/* problem: why the last sign-in failed, or NULL. */
void api_oauth__page_login(api_call_t *call, const api_oauth_request_t *r,
                           const api_oauth_app_t *app, const char *problem);
/* The same page with another status (429, 503: the caller sets Retry-After). */
void api_oauth__page_login_status(api_call_t *call, int status, const api_oauth_request_t *r,
                                  const api_oauth_app_t *app, const char *problem);
void api_oauth__page_consent(api_call_t *call, const api_oauth_request_t *r,
                             const api_oauth_app_t *app, const api_oauth_session_t *s);

/* The session cookie's id, hashed as stored; false without one. */
bool api_oauth__session_cookie(api_call_t *call, char hash[CM_SHA256_HEX_LEN + 1]);
/* cb(call, session or NULL (none, expired, or the store failed: status)). */
typedef void (*api_oauth_session_cb)(api_call_t *call, int status, api_oauth_session_t *s);
void api_oauth__session_load(api_call_t *call, const char *hash, api_oauth_session_cb cb);
/* A new session for user_id: its cookie set on the response; cb(status). */
void api_oauth__session_begin(api_call_t *call, const char *user_id,
                              void (*cb)(api_call_t *call, int status));
void api_oauth__session_free(api_oauth_session_t *s);

/* token.c: what the token, revocation and introspection endpoints share */
void api_oauth__error(api_call_t *call, int status, const char *error, const char *description);
/* A store read that failed (status non-zero) answered as OAuth's
 * temporarily_unavailable (503): true; false when status is 0. */
bool api_oauth__store_failed(api_call_t *call, int status);
char *api_oauth__form_field(cm_slice_t form, const char *name, int *dup);
/* The body, when it is a form; else 400 invalid_request answered, false. */
bool api_oauth__form(api_call_t *call, cm_slice_t *body);
bool api_oauth__client_auth_refused(api_call_t *call, cm_slice_t form);

/* github.c: GITHUB_KEYS_FILE, read at start; a signature checked. */
void api_oauth__github_keys_load(api_oauth_t *o);
void api_oauth__github_keys_free(api_oauth_t *o);
bool api_oauth__github_verify(const api_oauth_t *o, cm_slice_t key_id, cm_slice_t signature,
                              cm_slice_t body);
/* limits.c: may ip provision a new app now (a linked one only)? Each fetch
 * of a new app's document counts once it starts (linked: the budget it may
 * only succeed in), whatever comes of it; an app first counted unlinked
 * that turns out linked moves to the linked count. */
enum { API_OAUTH_NEW_APP_OK, API_OAUTH_NEW_APP_LINKED_ONLY, API_OAUTH_NEW_APP_REFUSED };
int api_oauth__limits_check(api_oauth_t *o, const char *ip);
void api_oauth__limits_count(api_oauth_t *o, const char *ip, bool linked);
void api_oauth__limits_relink(api_oauth_t *o, const char *ip);
void api_oauth__limits_free(api_oauth_t *o);

/* guesses.c: sign-in attempts per account (email normalised) and address.
 * begin: the ms to wait before trying (0: go on; the attempt now counts as
 * a failure); end: what came of it (a wrong guess stays counted). */
enum { API_OAUTH_GUESS_WRONG, API_OAUTH_GUESS_RIGHT, API_OAUTH_GUESS_NONE };
int64_t api_oauth__guess_begin(api_oauth_t *o, const char *email, const char *ip);
void api_oauth__guess_end(api_oauth_t *o, const char *email, const char *ip, int outcome);
void api_oauth__guesses_free(api_oauth_t *o);

#endif
