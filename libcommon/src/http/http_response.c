/*
 * http_response.c - writing responses and their metrics (request accessors:
 * http_request.c).
 *
 * A response is the head (status line, Date, Content-Type, Content-Length,
 * Connection, CORS and the handler's headers) and the body, an owned buffer
 * or parts borrowed for the call. They are written at once when the socket
 * takes them (write_now); what it does not take goes to one uv_write, the
 * head and the body's rest then living in a write request freed by the
 * write callback. Either way the request object itself
 * is released as soon as the response is queued.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm/alloc.h"
#include "cm/api_error.h"
#include "cm/log.h"
#include "cm/timefmt.h"
#include "http_internal.h"

typedef struct {
    uv_write_t w;
    cm__conn_t *conn;
    cm_buf_t head;
    cm_buf_t body;
} write_req_t;

/* Every code of RFC 9110 (bar 305 and 306, retired) and RFC 6585, 425 (RFC 8470)
 * and 451 (RFC 7725): a handler may answer any of them (the OAuth pages
 * redirect with 303), and "Unknown" on a status line reads as a bug. */
const char *cm_http_status_text(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 203: return "Non-Authoritative Information";
    case 204: return "No Content";
    case 205: return "Reset Content";
    case 206: return "Partial Content";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 407: return "Proxy Authentication Required";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Content";
    case 425: return "Too Early";
    case 426: return "Upgrade Required";
    case 428: return "Precondition Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 451: return "Unavailable For Legal Reasons";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    case 511: return "Network Authentication Required";
    default: return "Unknown";
    }
}

#define APPEND_LIT(b, lit) cm_buf_append((b), (lit), sizeof(lit) - 1)

/* The Date header changes once a second; format it once a second. */
static const char *date_header(void)
{
    static char cached[32];
    static time_t cached_sec = -1;
    time_t now = time(NULL);
    if (now != cached_sec) {
        cm_http_date((int64_t)now * 1000000, cached);
        cached_sec = now;
    }
    return cached;
}

/* ---- responses ----------------------------------------------------------------- */

/* A CR or LF in a name or value would end the header early and let
 * whatever follows be read as more headers or a body (response
 * splitting): such a header is dropped and logged, never written. Names
 * must also hold no colon or space. */
static bool header_safe(const char *name, const char *value)
{
    if (name[0] == '\0' || strpbrk(name, "\r\n: \t") != NULL)
        return false;
    return strpbrk(value, "\r\n") == NULL;
}

void cm_http_res_no_cors(cm_http_req_t *req)
{
    req->no_cors = true;
}

void cm_http_res_header(cm_http_req_t *req, const char *name, const char *value)
{
    if (!header_safe(name, value)) {
        cm_log(CM_LOG_WARN, cm_http_req_id(req),
               "response header %.64s refused: CR, LF or a "
               "bad name character",
               name);
        return;
    }
    cm_buf_appendf(&req->res_headers, "%s: %s\r\n", name, value);
}

void cm__req_free(cm_http_req_t *req)
{
    cm_buf_free(&req->head);
    cm_buf_free(&req->body);
    cm_buf_free(&req->res_headers);
    cm_buf_free(&req->log_extra);
    free(req->hdrs);
    free(req);
}

static void add_cors(const cm_http_req_t *req, cm_buf_t *h)
{
    cm_slice_t origin = cm_http_req_header(req, "Origin");
    if (origin.len > 0) {
        cm_buf_append_cstr(h, "Access-Control-Allow-Origin: ");
        cm_buf_append_slice(h, origin);
        cm_buf_append_cstr(h, "\r\nAccess-Control-Allow-Credentials: true\r\nVary: Origin\r\n");
    } else {
        cm_buf_append_cstr(h, "Access-Control-Allow-Origin: *\r\n");
    }
    if (cm__method_bit(req->method) == CM_HTTP_OPTIONS) {
        cm_buf_appendf(h, "Access-Control-Allow-Methods: %s\r\n", req->srv->cors_methods);
        cm_slice_t want = cm_http_req_header(req, "Access-Control-Request-Headers");
        if (want.len > 0) {
            cm_buf_append_cstr(h, "Access-Control-Allow-Headers: ");
            cm_buf_append_slice(h, want);
            cm_buf_append_cstr(h, "\r\n");
        }
        cm_buf_append_cstr(h, "Access-Control-Max-Age: 86400\r\n");
    }
}

static void write_cb(uv_write_t *w, int status)
{
    write_req_t *wr = (write_req_t *)w;
    cm__conn_t *c = wr->conn;
    cm_buf_free(&wr->head);
    cm_buf_free(&wr->body);
    free(wr);
    cm__conn_write_done(c, status);
}

void cm__req_record(cm_http_req_t *req, const cm__route_t *route, int status)
{
    cm_metrics_t *m = req->srv->opts.metrics;
    if (m == NULL)
        return;
    cm__route_t *r = (cm__route_t *)(route ? route : &req->srv->unmatched);
    int cls = status / 100;
    if (cls < 1 || cls > 5)
        cls = 5;
    if (r->by_class[cls] == NULL) {
        char labels[512];
        snprintf(labels, sizeof(labels), "service=\"%s\",route=\"%s\",code=\"%dxx\"",
                 req->srv->service, r->pattern, cls);
        r->by_class[cls] = cm_metrics_counter(m, "http_requests_total",
                                              "HTTP requests by route and status class", labels);
    }
    cm_counter_inc(r->by_class[cls]);
    if (r->latency != NULL) {
        uint64_t now = uv_now(req->srv->loop);
        double secs = (double)(now - req->start_ms) / 1000.0;
        cm_histogram_observe(r->latency, secs);
    }
}

#define PARTS_MAX 8 /* cm_http_respond_parts: body parts, beside the head */

/*
 * Writes what the socket takes right now, when nothing is queued before it:
 * the bytes written (all of them, or fewer), or -1 when the socket failed.
 *
 * Why: a uv_write() that completes at once still goes through a write
 * callback on the next loop iteration, and libuv then re-registers the
 * socket with epoll (one epoll_ctl per response). Most responses fit in the
 * socket buffer, so the common case is one writev() and nothing else.
 */
static ssize_t write_now(cm__conn_t *c, const uv_buf_t *bufs, int nbufs)
{
    int n = uv_try_write((uv_stream_t *)&c->tcp, bufs, (unsigned)nbufs);
    if (n == UV_EAGAIN)
        return 0;
    return n < 0 ? -1 : n;
}

/* Queues the response, then releases the request. The body is parts, valid
 * during the call only, or owned (then parts is its one slice, and its bytes
 * are taken over): the socket is offered them where they are, and only what
 * it did not take is copied (or, owned, kept) for the write request. So a
 * body kept elsewhere (a cached answer) costs no copy per response. */
static void respond(cm_http_req_t *req, int status, const char *ctype, const cm_slice_t *parts,
                    size_t nparts, cm_buf_t *owned)
{
    cm__conn_t *c = req->conn;
    size_t body_len = 0;
    for (size_t i = 0; i < nparts; i++)
        body_len += parts[i].len;
    bool head_only = cm__method_bit(req->method) == CM_HTTP_HEAD;
    cm__req_record(req, req->route, status);
    cm__access_log(req, status, head_only ? 0 : body_len);
    if (c == NULL || c->state != CM__CONN_OPEN) { /* the client has gone */
        if (owned)
            cm_buf_free(owned);
        cm__req_free(req);
        return;
    }
    bool close_after = !req->keep_alive || req->srv->draining || status == 400 || status == 408 ||
                       status == 413 || status == 414 || status == 431 || status == 417 ||
                       status == 505;

    write_req_t *wr = cm_xcalloc(1, sizeof(*wr));
    wr->conn = c;
    cm_buf_t *h = &wr->head;
    cm_buf_reserve(h, 256 + req->res_headers.len);
    /* Plain appends, no printf: this runs once per response. */
    char num[24];
    APPEND_LIT(h, "HTTP/1.1 ");
    cm_buf_append(h, num, cm_fmt_uint64(num, (unsigned)status));
    cm_buf_putc(h, ' ');
    cm_buf_append_cstr(h, cm_http_status_text(status));
    APPEND_LIT(h, "\r\nDate: ");
    cm_buf_append_cstr(h, date_header());
    if (ctype != NULL) {
        APPEND_LIT(h, "\r\nContent-Type: ");
        cm_buf_append_cstr(h, ctype);
    }
    APPEND_LIT(h, "\r\nContent-Length: ");
    cm_buf_append(h, num, cm_fmt_uint64(num, body_len));
    if (close_after)
        APPEND_LIT(h, "\r\nConnection: close\r\n");
    else
        APPEND_LIT(h, "\r\nConnection: keep-alive\r\n");
    if (req->srv->opts.cors && !req->no_cors)
        add_cors(req, h);
    cm_buf_append(h, req->res_headers.p, req->res_headers.len);
    APPEND_LIT(h, "\r\n");
    if (head_only)
        nparts = 0;

    uv_buf_t bufs[1 + PARTS_MAX];
    int nbufs = 0;
    bufs[nbufs++] = uv_buf_init(wr->head.p, (unsigned)wr->head.len);
    for (size_t i = 0; i < nparts; i++)
        if (parts[i].len)
            bufs[nbufs++] = uv_buf_init((char *)parts[i].p, (unsigned)parts[i].len);
    bool was_handling = c->handling == req;
    ssize_t sent = write_now(c, bufs, nbufs);
    size_t total = wr->head.len + (head_only ? 0 : body_len);
    if (sent >= 0 && (size_t)sent == total) { /* all of it is in the kernel already */
        cm_buf_free(&wr->head);
        free(wr);
        if (owned)
            cm_buf_free(owned);
        if (was_handling)
            cm__req_free(req);
        cm__conn_response_queued(c, close_after);
        return;
    }
    /* The rest goes to one uv_write: the head's unsent end where it is, the
     * body's unsent bytes in wr->body (the owned buffer itself when the
     * socket took none of it). */
    size_t done = sent > 0 ? (size_t)sent : 0, head_left = 0, body_skip = 0;
    if (done < wr->head.len)
        head_left = wr->head.len - done;
    else
        body_skip = done - wr->head.len;
    if (owned && !head_only && body_skip == 0) {
        wr->body = *owned;
        *owned = CM_BUF_INIT;
    } else {
        for (size_t i = 0; i < nparts; i++) {
            size_t skip = body_skip < parts[i].len ? body_skip : parts[i].len;
            body_skip -= skip;
            cm_buf_append(&wr->body, parts[i].p + skip, parts[i].len - skip);
        }
        if (owned)
            cm_buf_free(owned);
    }
    nbufs = 0;
    if (head_left)
        bufs[nbufs++] = uv_buf_init(wr->head.p + done, (unsigned)head_left);
    if (wr->body.len)
        bufs[nbufs++] = uv_buf_init(wr->body.p, (unsigned)wr->body.len);
    if (sent < 0 ||
        uv_write(&wr->w, (uv_stream_t *)&c->tcp, bufs, (unsigned)nbufs, write_cb) != 0) {
        cm_buf_free(&wr->head);
        cm_buf_free(&wr->body);
        free(wr);
        if (was_handling)
            c->handling = NULL;
        cm__req_free(req);
        cm__conn_close(c);
        return;
    }
    if (was_handling)
        cm__req_free(req);
    cm__conn_response_queued(c, close_after);
}

void cm_http_respond_buf(cm_http_req_t *req, int status, const char *content_type, cm_buf_t *body)
{
    cm_slice_t part = cm_buf_slice(body);
    respond(req, status, content_type, &part, 1, body);
}

void cm_http_respond(cm_http_req_t *req, int status, const char *content_type, const void *body,
                     size_t len)
{
    cm_slice_t part = {body, len};
    respond(req, status, content_type, &part, 1, NULL);
}

void cm_http_respond_parts(cm_http_req_t *req, int status, const char *content_type,
                           const cm_slice_t *parts, size_t nparts)
{
    if (nparts > PARTS_MAX) { /* more than any caller has: one buffer */
        cm_buf_t b = CM_BUF_INIT;
        for (size_t i = 0; i < nparts; i++)
            cm_buf_append_slice(&b, parts[i]);
        cm_http_respond_buf(req, status, content_type, &b);
        return;
    }
    respond(req, status, content_type, parts, nparts, NULL);
}

void cm_http_respond_json(cm_http_req_t *req, int status, cm_buf_t *body)
{
    cm_http_respond_buf(req, status, "application/json", body);
}

void cm_http_respond_error(cm_http_req_t *req, int status, const char *type, const char *code,
                           const char *detail, const char *attr)
{
    cm_buf_t b = CM_BUF_INIT;
    cm_api_error_json(&b, type ? type : cm_api_error_type_for_status(status), code, detail, attr);
    cm_http_respond_buf(req, status, "application/json", &b);
}

void cm_http_respond_api_error(cm_http_req_t *req, const cm_api_error_t *e)
{
    cm_http_respond_error(req, e->status, e->type, e->code, e->detail, e->attr[0] ? e->attr : NULL);
}

/*
 * An error found before the request reached a handler (parse error, limit,
 * timeout). The partly read request, if any, carries the answer; otherwise a
 * blank one stands in so the same writer is used.
 */
void cm__respond_early_error(cm__conn_t *c, int status, const char *code, const char *detail)
{
    cm_http_req_t *req = c->req;
    c->req = NULL;
    if (req == NULL) {
        req = cm_xcalloc(1, sizeof(*req));
        req->srv = c->srv;
        req->start_ms = uv_now(c->srv->loop);
        req->start_ns = uv_hrtime();
        memcpy(req->peer, c->peer, sizeof(req->peer));
    }
    req->conn = c;
    req->keep_alive = false;
    req->route = NULL;
    c->handling = req;
    cm_log(CM_LOG_INFO, cm_http_req_id(req), "rejected request from %s: %d %s", c->peer, status,
           detail ? detail : "");
    cm_http_respond_error(req, status, NULL, code, detail, NULL);
}
