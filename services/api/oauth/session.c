/*
 * session.c - who is signed in at the authorization pages: a random id in
 * an HttpOnly, SameSite=Lax cookie (Secure on https), stored as its SHA-256
 * with the user, a CSRF token for the consent form, and an expiry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/log.h"
#include "cm/token.h"
#include "oauth/oauth_int.h"
#include "store/store.h"

#define COOKIE        "api_session"
#define SESSION_TTL_S (14 * 86400)

bool api_oauth__session_cookie(api_call_t *call, char hash[CM_SHA256_HEX_LEN + 1])
{
    cm_slice_t c = cm_http_req_header(call->req, "Cookie");
    const char *p = c.p, *end = c.p + c.len;
    while (p && p < end) {
        while (p < end && (*p == ' ' || *p == ';'))
            p++;
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *e = semi ? semi : end;
        size_t n = strlen(COOKIE);
        if ((size_t)(e - p) > n + 1 && strncmp(p, COOKIE "=", n + 1) == 0) {
            cm_slice_t v = {p + n + 1, (size_t)(e - p - n - 1)};
            if (v.len < 20 || v.len > 100)
                return false;
            cm_sha256_hex(v.p, v.len, hash);
            return true;
        }
        p = semi ? semi + 1 : NULL;
    }
    return false;
}

void api_oauth__session_free(api_oauth_session_t *s)
{
    if (!s)
        return;
    free(s->user_id);
    free(s->csrf);
    free(s->email);
    for (size_t i = 0; i < s->norgs; i++) {
        free(s->orgs[i].id);
        free(s->orgs[i].name);
    }
    for (size_t i = 0; i < s->nprojects; i++) {
        free(s->projects[i].id);
        free(s->projects[i].name);
    }
    free(s->orgs);
    free(s->projects);
    free(s);
}

typedef struct {
    api_oauth_session_cb cb;
    void (*begun)(api_call_t *call, int status);
    char cookie[CM_TOKEN_MAX];
} pending_t;

static void on_session(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    pending_t *p = call->helper;
    api_oauth_session_cb cb = p->cb;
    free(p);
    call->helper = NULL;
    if (status != 0 || cm_db_nrows(res, 0) != 1) {
        cb(call, status, NULL);
        return;
    }
    api_oauth_session_t *s = cm_xcalloc(1, sizeof(*s));
    s->user_id = cm_xstrdup(cm_db_value(res, 0, 0, API_SESSION_USER));
    s->csrf = cm_xstrdup(cm_db_value(res, 0, 0, API_SESSION_CSRF));
    s->email = cm_xstrdup(cm_db_value(res, 0, 0, API_SESSION_EMAIL));
    size_t n = cm_db_nrows(res, 1);
    s->orgs = cm_xcalloc(n + 1, sizeof(*s->orgs));
    s->projects = cm_xcalloc(n + 1, sizeof(*s->projects));
    for (size_t i = 0; i < n; i++) {
        const char *org = cm_db_value(res, 1, i, 0);
        if (s->norgs == 0 || strcmp(s->orgs[s->norgs - 1].id, org) != 0) {
            s->orgs[s->norgs].id = cm_xstrdup(org);
            s->orgs[s->norgs++].name = cm_xstrdup(cm_db_value(res, 1, i, 1));
        }
        if (cm_db_value(res, 1, i, 2)) {
            s->projects[s->nprojects].id = cm_xstrdup(cm_db_value(res, 1, i, 2));
            s->projects[s->nprojects++].name = cm_xstrdup(cm_db_value(res, 1, i, 3));
        }
    }
    cb(call, 0, s);
}

void api_oauth__session_load(api_call_t *call, const char *hash, api_oauth_session_cb cb)
{
    pending_t *p = cm_xcalloc(1, sizeof(*p));
    p->cb = cb;
    call->helper = p;
    api_store_session_get(call->ctx->db, hash, on_session, call);
}

static void on_begun(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    pending_t *p = call->helper;
    void (*begun)(api_call_t *, int) = p->begun;
    if (status != 0)
        cm_log(CM_LOG_WARN, cm_http_req_id(call->req), "session: %s", cm_db_error(res));
    if (status == 0) {
        char cookie[300];
        bool secure = strncasecmp(call->ctx->cfg.base_url, "https:", 6) == 0;
        snprintf(cookie, sizeof(cookie), COOKIE "=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Lax%s",
                 p->cookie, SESSION_TTL_S, secure ? "; Secure" : "");
        cm_http_res_header(call->req, "Set-Cookie", cookie);
    }
    free(p);
    call->helper = NULL;
    begun(call, status);
}

void api_oauth__session_begin(api_call_t *call, const char *user_id,
                              void (*cb)(api_call_t *call, int status))
{
    pending_t *p = cm_xcalloc(1, sizeof(*p));
    p->begun = cb;
    cm_token_new("s_", p->cookie);
    char hash[CM_SHA256_HEX_LEN + 1], csrf[CM_TOKEN_MAX], until[24];
    cm_sha256_hex(p->cookie, strlen(p->cookie), hash);
    cm_token_new("", csrf);
    char now[24];
    api_store_now(now);
    snprintf(until, sizeof(until), "%lld", atoll(now) + SESSION_TTL_S * 1000LL);
    call->helper = p;
    api_store_session_create(call->ctx->db, hash, user_id, csrf, until, on_begun, call);
}
