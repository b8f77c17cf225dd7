/*
 * http.h - what every api route shares: the call (one request's state from
 * the router to the response), authentication by personal API key, scope
 * and project checks, JSON bodies, pagination and responses.
 *
 * A route is declared once in routes.c (api_route_t). For each request the
 * router makes an api_call_t, authenticates it (asynchronously: the key is
 * looked up by its SHA-256 in the store), checks the route's scope (403
 * naming it) and, for routes under /api/projects/{project_id}/ or
 * /api/environments/{project_id}/, that the key's user can reach the project
 * (404 otherwise: never a hint that it exists). Only then does the
 * resource's handler run. The handler answers through api_respond_* exactly
 * once; that frees the call.
 */
#ifndef API_HTTP_H
#define API_HTTP_H

#include <stdbool.h>

#include "api.h"
#include "cm/api_error.h"
#include "cm/buf.h"
#include "cm/db.h"
#include "cm/json.h"

typedef struct api_call api_call_t;
typedef void (*api_handler_t)(api_call_t *call);

typedef struct {
    unsigned methods;  /* CM_HTTP_* bits */
    const char *path;  /* cm_http_server_route pattern; {project_id} makes it a project route */
    const char *scope; /* object of the scope ("feature_flag"); NULL: any valid key */
    api_handler_t handler;
    bool own_auth; /* the handler authenticates (api_http_authorize) itself */
    bool reads;    /* only reads, whatever the method (an endpoint's POST run): the read scope */
} api_route_t;

struct api_call {
    api_ctx_t *ctx;
    cm_http_req_t *req;
    const api_route_t *route;
    char user_id[24];
    char key_id[64];
    char key_hash[65];   /* SHA-256 hex of the presented key */
    char project_id[24]; /* project routes: the checked project */
    char org_id[40];     /* project routes: its organization */
    /* The credential as auth.c found it (docs/api.md, "A credential never
     * creates a wider one"): an OAuth access token or a personal key, its
     * scopes and its scoping as stored (JSON arrays; NULL orgs or teams: no
     * narrowing). Owned by the call. */
    bool oauth;
    char *cred_scopes, *cred_orgs, *cred_teams;
    cm_json_doc_t *body;                  /* api_call_body: the parsed request body */
    long long limit, offset;              /* api_call_page */
    char limit_text[24], offset_text[24]; /* the same, as store parameters */
    void *state;        /* the handler's, freed by state_free when the call ends */
    api_handler_t next; /* api_http_authorize: what runs once authorized */
    void *helper;       /* a helper's state between its own steps (oauth/session.c) */
    void (*state_free)(void *state);
};

/* Registers route (which must outlive the server) under its path, and
 * under /api/environments/... as well for /api/projects/... paths. */
void api_http_route(api_ctx_t *ctx, const api_route_t *route);

/* auth.c: authenticates the call's personal API key, checks the route's
 * scope and, when call->project_id is set (project routes: from the path),
 * the project; then runs next(call), or answers 401/403/404/503 itself. */
void api_http_authorize(api_call_t *call, api_handler_t next);
/* The token of "Authorization: Bearer <token>", trimmed; empty when absent. */
cm_slice_t api_call_bearer(api_call_t *call);
/* An OAuth access token never manages personal API keys nor the user's
 * sign-in (what): answers 403 and returns true for one. */
bool api_call_refuse_oauth(api_call_t *call, const char *what);
/* A personal key with "*" or user:write and no scoping to teams or
 * organizations: what changing the user's email or password needs. */
bool api_call_full_user(const api_call_t *call);

/* Parses the body as a JSON object. On failure answers 400 and returns -1
 * (the call is gone). An empty body is an empty object. */
int api_call_body(api_call_t *call);
/*
 * The body's field attr as a string (escapes decoded) of min to max bytes,
 * only of charset's bytes when charset is given (else charset_detail is the
 * 400's detail); *out is a copy. Returns 1 when the field is absent or null
 * (*out NULL), 0, or -1 when it answered 400 (not a string, a NUL inside,
 * the length, the charset).
 */
int api_body_string(api_call_t *call, const char *attr, size_t min, size_t max, const char *charset,
                    const char *charset_detail, char **out);

/* An email address as users are stored: lowercased, one '@' with text on
 * both sides, printable ASCII without spaces, at most 254 bytes. */
bool api_email_normalize(cm_slice_t in, char *out, size_t size);
/* The body's field attr as such an address (api_body_string's returns). */
int api_body_email(api_call_t *call, const char *attr, char **out);

/* ?limit= and ?offset= as DRF's LimitOffsetPagination reads them (default
 * limit 100, at most 1000) into call->limit/offset(_text). On a bad value
 * answers 400 and returns -1. */
int api_call_page(api_call_t *call);

/* The query string's parameter name, decoded, as a C string the caller
 * frees; NULL when absent (or not text). */
char *api_call_query(api_call_t *call, const char *name);

/* Responds with body (taken over) and ends the call. */
void api_respond_json(api_call_t *call, int status, cm_buf_t *body);
void api_respond_empty(api_call_t *call, int status);
/* Any other type (JavaScript, text): body taken over. */
void api_respond_text(api_call_t *call, int status, const char *content_type, cm_buf_t *body);
void api_respond_error(api_call_t *call, const cm_api_error_t *e);
/* 400 validation_error with attr and a formatted detail. */
void api_respond_invalid(api_call_t *call, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void api_respond_not_found(api_call_t *call);
/* A failed store job: 503 when the store cannot be reached, 400 for a
 * conflict (attr names the field), 500 otherwise (logged). */
void api_respond_db_error(api_call_t *call, int status, const cm_db_res_t *res,
                          const char *conflict_attr, const char *conflict_detail);

/* Writes one row of a store result (table 0) as a resource's JSON object. */
typedef void (*api_row_writer_t)(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res,
                                 size_t row);
/* The end of a list read: the store's error, or a page of table 0's rows
 * whose count is column total_col. */
void api_respond_rows(api_call_t *call, int status, const cm_db_res_t *res, size_t total_col,
                      api_row_writer_t row);
/* api_respond_rows's page, written into out instead of answered (a page
 * that is kept: http/page_cache.h). */
void api_render_page(api_call_t *call, const cm_db_res_t *res, size_t total_col,
                     api_row_writer_t row, cm_buf_t *out);
/* 200 and the bytes of a JSON answer rendered earlier (copied). */
void api_respond_json_bytes(api_call_t *call, int status, cm_slice_t body);
/* The end of an unpaged list read: the store's error, or
 * {"results": [table 0's rows]}. */
void api_respond_results(api_call_t *call, int status, const cm_db_res_t *res,
                         api_row_writer_t row);
/* The same rows as a bare JSON array (PostHog's unpaged lists, group types). */
void api_respond_array(api_call_t *call, int status, const cm_db_res_t *res, api_row_writer_t row);
/* The end of a one-row read or write: the store's error, 404 without a row,
 * or row 0 with http_status. */
void api_respond_row(api_call_t *call, int status, const cm_db_res_t *res, int http_status,
                     api_row_writer_t row);

/* Writes {"count", "next", "previous", "results": [ then the caller's rows,
 * then api_page_end closes it. next/previous are absolute URLs on BASE_URL. */
void api_page_begin(cm_json_writer_t *w, api_call_t *call, const char *total);
void api_page_end(cm_json_writer_t *w);

/* scopes.c: "*" or "<object>:read|write" for a grantable object. */
bool api_scope_valid(cm_slice_t scope);
/* What OAuth makes of a scope: unknown (or "*", or hidden from apps),
 * grantable, privileged (an admin's to grant: never through a client
 * document), or always granted (openid, profile, email, introspection). */
enum { API_SCOPE_UNKNOWN, API_SCOPE_GRANTABLE, API_SCOPE_PRIVILEGED, API_SCOPE_ALWAYS };
int api_scope_oauth(cm_slice_t scope);
/* The scopes_supported array of the discovery documents. */
void api_scopes_oauth_write(cm_json_writer_t *w);

/* A new password's length in bytes (PATCH /api/users/@me/, `api admin password`). */
#define API_PASSWORD_MIN_BYTES 8
#define API_PASSWORD_MAX_BYTES 128
/* password.c: argon2id in its encoded form (about 100 bytes; give 128).
 * Slow by design: call it off the loop. 0 or CM_EINVAL. */
int api_password_hash(const char *password, char *out, size_t size);
bool api_password_check(const char *encoded, const char *password);
/* On libuv's thread pool, at most PASSWORD_HASHES at a time (the others
 * wait their turn): checks current against stored (skipped when stored is
 * NULL), then hashes fresh (when given and the check passed); done(call,
 * current_ok, new_hash or NULL) runs on the loop. The strings are copied
 * (and the passwords wiped after). api_password_try returns false, queueing
 * nothing, when PASSWORD_QUEUE jobs already wait; api_password_job then
 * answers api_password_busy's 503 (Retry-After: 1) itself. */
typedef void (*api_password_done_cb)(api_call_t *call, bool current_ok, const char *new_hash);
bool api_password_try(api_call_t *call, const char *stored, const char *current, const char *fresh,
                      api_password_done_cb done);
void api_password_job(api_call_t *call, const char *stored, const char *current, const char *fresh,
                      api_password_done_cb done);
void api_password_busy(api_call_t *call);

/* Unix ms (text) -> ISO 8601 with milliseconds and Z; null for NULL. */
void api_json_time(cm_json_writer_t *w, const char *ms);
/* JSON text stored by the api -> inline value; null for NULL. */
void api_json_stored(cm_json_writer_t *w, const char *json);

#endif
