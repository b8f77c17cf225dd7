/*
 * http_request.c - what a handler reads of its request: method, target,
 * path, query, headers, body, route parameters, peer and request id. Pure
 * reads of the request's head and body buffers, which nothing changes
 * while a handler holds the request (so a worker thread may call them too;
 * http_server.h).
 */
#include <string.h>

#include "http_internal.h"

unsigned cm__method_bit(uint8_t m)
{
    switch (m) {
    case HTTP_GET: return CM_HTTP_GET;
    case HTTP_HEAD: return CM_HTTP_HEAD;
    case HTTP_POST: return CM_HTTP_POST;
    case HTTP_PUT: return CM_HTTP_PUT;
    case HTTP_PATCH: return CM_HTTP_PATCH;
    case HTTP_DELETE: return CM_HTTP_DELETE;
    case HTTP_OPTIONS: return CM_HTTP_OPTIONS;
    default: return 0;
    }
}

/* ---- request accessors ----------------------------------------------------- */

unsigned cm_http_req_method(const cm_http_req_t *req)
{
    return cm__method_bit(req->method);
}

const char *cm_http_req_method_name(const cm_http_req_t *req)
{
    return llhttp_method_name((llhttp_method_t)req->method);
}

cm_slice_t cm_http_req_target(const cm_http_req_t *req)
{
    return (cm_slice_t){req->head.p, req->target_len};
}

cm_slice_t cm_http_req_path(const cm_http_req_t *req)
{
    return (cm_slice_t){req->head.p, req->path_len};
}

cm_slice_t cm_http_req_query(const cm_http_req_t *req)
{
    if (req->path_len >= req->target_len)
        return (cm_slice_t){"", 0};
    return (cm_slice_t){req->head.p + req->path_len + 1, req->target_len - req->path_len - 1};
}

cm_slice_t cm_http_req_header(const cm_http_req_t *req, const char *name)
{
    for (size_t i = 0; i < req->nhdrs; i++) {
        const cm__hdr_t *h = &req->hdrs[i];
        if (cm_slice_eq_nocase((cm_slice_t){req->head.p + h->name_off, h->name_len}, name))
            return cm_slice_trim((cm_slice_t){req->head.p + h->val_off, h->val_len});
    }
    return CM_SLICE_NULL;
}

size_t cm_http_req_header_count(const cm_http_req_t *req)
{
    return req->nhdrs;
}

void cm_http_req_header_at(const cm_http_req_t *req, size_t i, cm_slice_t *name, cm_slice_t *value)
{
    const cm__hdr_t *h = &req->hdrs[i];
    *name = (cm_slice_t){req->head.p + h->name_off, h->name_len};
    *value = cm_slice_trim((cm_slice_t){req->head.p + h->val_off, h->val_len});
}

cm_slice_t cm_http_req_body(const cm_http_req_t *req)
{
    return cm_buf_slice(&req->body);
}

cm_slice_t cm_http_req_param(const cm_http_req_t *req, const char *name)
{
    for (size_t i = 0; i < req->nparams; i++)
        if (strcmp(req->params[i].name, name) == 0)
            return (cm_slice_t){req->head.p + req->params[i].off, req->params[i].len};
    return CM_SLICE_NULL;
}

const char *cm_http_req_peer(const cm_http_req_t *req)
{
    return req->peer;
}

static bool sane_request_id(cm_slice_t s)
{
    if (s.len == 0 || s.len > 64)
        return false;
    for (size_t i = 0; i < s.len; i++) {
        char ch = s.p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_' || ch == '.'))
            return false;
    }
    return true;
}

const char *cm_http_req_id(cm_http_req_t *req)
{
    cm_http_req_t *r = req; /* computed lazily, once: the id is the only field it writes */
    if (r->id[0] == '\0') {
        cm_slice_t given = cm_http_req_header(req, "X-Request-Id");
        if (sane_request_id(given)) {
            memcpy(r->id, given.p, given.len);
            r->id[given.len] = '\0';
        } else {
            cm_uuid_v7(r->id);
        }
    }
    return r->id;
}

uint64_t cm_http_req_start_ms(const cm_http_req_t *req)
{
    return req->start_ms;
}
bool cm_http_req_connected(const cm_http_req_t *req)
{
    return req->conn != NULL;
}
cm_http_server_t *cm_http_req_server(const cm_http_req_t *req)
{
    return req->srv;
}
