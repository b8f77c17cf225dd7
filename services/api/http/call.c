/* call.c - routes into calls, request bodies and paging (see http.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/form.h"
#include "http/http_int.h"

#define MAX_ROUTES 256

typedef struct {
    api_ctx_t *ctx;
    const api_route_t *route;
} route_ud_t;

static size_t authorization_headers(const cm_http_req_t *req)
{
    size_t n = 0;
    for (size_t i = 0; i < cm_http_req_header_count(req); i++) {
        cm_slice_t name, value;
        cm_http_req_header_at(req, i, &name, &value);
        n += name.len == 13 && strncasecmp(name.p, "Authorization", 13) == 0;
    }
    return n;
}

static void on_request(cm_http_req_t *req, void *ud)
{
    route_ud_t *r = ud;
    api_call_t *call = cm_xcalloc(1, sizeof(*call));
    call->ctx = r->ctx;
    call->req = req;
    call->route = r->route;
    if (!r->ctx->migrated) {
        cm_api_error_t e;
        cm_api_error_set(&e, 503, "not_ready", NULL, "The metadata store is not ready yet.");
        api_respond_error(call, &e);
        return;
    }
    if (authorization_headers(req) > 1) {
        /* which one would count is a guess a proxy and this server could
         * make differently: refuse rather than pick the first */
        api_respond_invalid(call, NULL, "More than one Authorization header.");
        return;
    }
    if (r->route->own_auth)
        r->route->handler(call);
    else
        api_http_authorize(call, r->route->handler);
}

void api_http_route(api_ctx_t *ctx, const api_route_t *route)
{
    /* Lives as long as the process, as the server's routes do. */
    static route_ud_t uds[MAX_ROUTES];
    static size_t nuds;
    if (nuds == MAX_ROUTES)
        abort(); /* raise MAX_ROUTES */
    route_ud_t *ud = &uds[nuds++];
    ud->ctx = ctx;
    ud->route = route;
    cm_http_server_route(ctx->http, route->methods, route->path, on_request, ud);
    const char *projects = "/api/projects/{project_id}/";
    if (strncmp(route->path, projects, strlen(projects)) == 0) {
        char twin[256];
        snprintf(twin, sizeof(twin), "/api/environments/{project_id}/%s",
                 route->path + strlen(projects));
        cm_http_server_route(ctx->http, route->methods, twin, on_request, ud);
    }
}

void api_http__call_end(api_call_t *call)
{
    if (call->state_free)
        call->state_free(call->state);
    cm_json_doc_free(call->body);
    free(call->cred_scopes);
    free(call->cred_orgs);
    free(call->cred_teams);
    free(call);
}

int api_call_body(api_call_t *call)
{
    cm_slice_t body = cm_http_req_body(call->req);
    if (body.len == 0)
        body = (cm_slice_t){"{}", 2};
    if (!cm_json_utf8_valid(body.p, body.len)) {
        api_respond_invalid(call, NULL, "Request body is not valid UTF-8.");
        return -1;
    }
    if (cm_json_parse(body.p, body.len, NULL, &call->body, NULL) != CM_OK) {
        api_respond_invalid(call, NULL, "JSON parse error - the request body is not valid JSON.");
        return -1;
    }
    if (cm_json_type(cm_json_root(call->body)) != CM_JSON_OBJECT) {
        api_respond_invalid(call, NULL, "Expected a JSON object as the request body.");
        return -1;
    }
    return 0;
}

int api_body_string(api_call_t *call, const char *attr, size_t min, size_t max, const char *charset,
                    const char *charset_detail, char **out)
{
    cm_json_t v = cm_json_get(cm_json_root(call->body), attr);
    cm_buf_t scratch = CM_BUF_INIT;
    cm_slice_t s;
    int rc = -1;
    *out = NULL;
    if (!cm_json_exists(v) || cm_json_is_null(v))
        return 1;
    if (cm_json_as_str(v, &scratch, &s) != CM_OK || memchr(s.p, '\0', s.len) != NULL) {
        api_respond_invalid(call, attr, "Not a valid string.");
    } else if (s.len < min || s.len > max) {
        api_respond_invalid(call, attr, "Ensure this field has %zu to %zu characters.", min, max);
    } else if (charset && cm_slice_span(s, charset) < s.len) {
        api_respond_invalid(call, attr, "%s", charset_detail);
    } else {
        *out = cm_xmemdup(s.p, s.len);
        rc = 0;
    }
    cm_buf_free(&scratch);
    return rc;
}

static int query_int(api_call_t *call, const char *name, long long def, long long max,
                     long long *out)
{
    cm_buf_t v = CM_BUF_INIT;
    *out = def;
    cm_slice_t q = cm_http_req_query(call->req);
    int rc = cm_form_get(q.p, q.len, name, &v);
    if (rc == CM_ENOTFOUND) {
        cm_buf_free(&v);
        return 0;
    }
    char *end;
    const char *s = cm_buf_cstr(&v);
    long long n = strtoll(s, &end, 10);
    bool ok = rc == CM_OK && end != s && *end == '\0' && n >= 0;
    cm_buf_free(&v);
    if (!ok) {
        api_respond_invalid(call, name, "%s must be a non-negative integer.", name);
        return -1;
    }
    *out = n > max ? max : n;
    return 0;
}

int api_call_page(api_call_t *call)
{
    if (query_int(call, "limit", 100, 1000, &call->limit) != 0 ||
        query_int(call, "offset", 0, 1LL << 40, &call->offset) != 0)
        return -1;
    if (call->limit == 0)
        call->limit = 100;
    snprintf(call->limit_text, sizeof(call->limit_text), "%lld", call->limit);
    snprintf(call->offset_text, sizeof(call->offset_text), "%lld", call->offset);
    return 0;
}

bool api_email_normalize(cm_slice_t in, char *out, size_t size)
{
    size_t at = 0, ats = 0;
    if (in.len < 3 || in.len > 254 || in.len >= size)
        return false;
    for (size_t i = 0; i < in.len; i++) {
        unsigned char c = (unsigned char)in.p[i];
        if (c <= ' ' || c >= 0x7f)
            return false;
        if (c == '@')
            ats++, at = i;
        out[i] = (char)tolower(c);
    }
    out[in.len] = '\0';
    return ats == 1 && at > 0 && at + 1 < in.len;
}

int api_body_email(api_call_t *call, const char *attr, char **out)
{
    char *raw;
    int rc = api_body_string(call, attr, 3, 254, NULL, NULL, &raw);
    if (rc != 0)
        return rc;
    char norm[256];
    if (!api_email_normalize(cm_slice_from_cstr(raw), norm, sizeof(norm))) {
        free(raw);
        api_respond_invalid(call, attr, "Enter a valid email address.");
        return -1;
    }
    free(raw);
    *out = cm_xstrdup(norm);
    return 0;
}

char *api_call_query(api_call_t *call, const char *name)
{
    cm_buf_t v = CM_BUF_INIT;
    cm_slice_t q = cm_http_req_query(call->req);
    if (cm_form_get(q.p, q.len, name, &v) != CM_OK || (v.len && memchr(v.p, '\0', v.len))) {
        cm_buf_free(&v);
        return NULL;
    }
    char *out = cm_xstrdup(cm_buf_cstr(&v));
    cm_buf_free(&v);
    return out;
}
