/*
 * oauth.h - the api as an OAuth 2.x authorization server and protected
 * resource (docs/oauth.md): discovery documents, clients identified by
 * their metadata documents (CIMD), the authorization code flow with PKCE,
 * tokens, revocation, introspection, and GitHub's secret-scanning alerts.
 */
#ifndef API_OAUTH_H
#define API_OAUTH_H

#include "api.h"
#include "http/http.h"

/* oauth.c: made in main() once the configuration is read; close lets
 * fetches in flight fail, then done(ud). */
api_oauth_t *api_oauth_new(api_ctx_t *ctx);
void api_oauth_close(api_oauth_t *o, void (*done)(void *ud), void *ud);
/* A client document's URL, normalised as verification tokens bind it
 * (lowercase scheme and host, no default port, no trailing slash); false
 * when url is not a client_id's shape at all. */
bool api_oauth_client_url_canonical(const char *url, char *out, size_t size);

/* guesses.c: a password checked outside sign-in (PATCH /api/users/@me/'s
 * current_password) counts against the sign-in limits of its account (the
 * email, normalised) and address (docs/oauth.md "Sign-in limits"): begin
 * answers the ms to wait first (0: go on; the attempt counts as a failure
 * until end says it was right, or that no password was checked). */
int64_t api_oauth_guess_begin(api_oauth_t *o, const char *email, const char *ip);
void api_oauth_guess_end(api_oauth_t *o, const char *email, const char *ip, bool checked,
                         bool right);

/* metadata.c: RFC 8414 and RFC 9728 documents (public routes). */
void api_oauth_as_metadata(api_call_t *call);
void api_oauth_resource_metadata(api_call_t *call);

/* authorize.c: GET shows the sign-in or consent page, POST takes them. */
void api_oauth_authorize(api_call_t *call);
/* token.c: the token endpoint; revoke.c: RFC 7009 and RFC 7662. */
void api_oauth_token(api_call_t *call);
void api_oauth_revoke(api_call_t *call);
void api_oauth_introspect(api_call_t *call);
/* github.c: POST /api/alerts/github, GitHub's secret-scanning partner call. */
void api_oauth_github_alert(api_call_t *call);

#endif
