/*
 * http_conn.c - one HTTP/1.1 connection: reading, llhttp glue, timeouts.
 *
 * Flow. Bytes read from the socket are parsed at once when nothing is
 * pending; whatever the parser did not consume (the start of a pipelined
 * request) is kept in `stash`. When llhttp completes a message it pauses
 * (on_message_complete returns HPE_PAUSED), and only then, outside the
 * parser, is the request dispatched to its handler. While a handler holds
 * the request, the socket is still read into the stash, up to STASH_MAX
 * bytes: pipelined requests wait unparsed, responses stay in order, and a
 * slow handler throttles its own client only. Reading on (rather than
 * stopping and restarting per request) spares two or three epoll_ctl calls
 * per request, and notices a client that goes away.
 *
 * When the response has been queued the parser resumes on the stash
 * ("pump"). If the unsent output is above max_write_queue, the pump waits
 * for the write callback instead.
 *
 * One timer per connection carries whichever deadline applies:
 *   idle (between requests) -> close silently
 *   headers (first byte to end of headers), body stall, whole request -> 408
 *   linger (after a final response) -> close
 * The header deadline is absolute from the first byte, so a client that
 * trickles a byte at a time (slowloris) is cut off all the same.
 *
 * Errors found while parsing (400, 413, 414, 417, 431) answer with a JSON
 * error and Connection: close, then "linger": shut down our side and discard
 * input for a moment, so the client reads the response instead of a reset.
 */
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/log.h"
#include "http_internal.h"

#define LINGER_MS     2000
#define READ_BUF_SIZE (64 * 1024)
/* Bytes read ahead while a handler holds the request; beyond, reading stops. */
#define STASH_MAX (64 * 1024)

static void conn_pump(cm__conn_t *c);
static void conn_update(cm__conn_t *c);

static cm__conn_t *conn_of(llhttp_t *p)
{
    return (cm__conn_t *)p->data;
}

/* ---- parser callbacks --------------------------------------------------- */

static int fail(cm__conn_t *c, int status, const char *code, const char *detail)
{
    if (c->err_status == 0) {
        c->err_status = status;
        c->err_code = code;
        c->err_detail = detail;
    }
    return -1;
}

static int check_head_size(cm__conn_t *c)
{
    const cm_http_server_opts_t *o = &c->srv->opts;
    if (c->req->head.len > o->max_header_bytes)
        return fail(c, 431, "headers_too_large", "request header section is too large");
    return 0;
}

static int on_message_begin(llhttp_t *p)
{
    cm__conn_t *c = conn_of(p);
    cm_http_req_t *req = cm_xcalloc(1, sizeof(*req));
    req->conn = c;
    req->srv = c->srv;
    req->start_ms = uv_now(c->srv->loop);
    req->start_ns = uv_hrtime();
    memcpy(req->peer, c->peer, sizeof(req->peer));
    c->req = req;
    c->deadline_ms = req->start_ms + c->srv->opts.header_timeout_ms;
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
    cm__conn_t *c = conn_of(p);
    cm_buf_append(&c->req->head, at, len);
    if (c->req->head.len > c->srv->opts.max_url_bytes)
        return fail(c, 414, "uri_too_long", "request target is too long");
    return 0;
}

static int on_url_complete(llhttp_t *p)
{
    cm__conn_t *c = conn_of(p);
    cm_http_req_t *req = c->req;
    req->target_len = (uint32_t)req->head.len;
    const char *q = memchr(req->head.p, '?', req->head.len);
    req->path_len = q ? (uint32_t)(q - req->head.p) : req->target_len;
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    cm__conn_t *c = conn_of(p);
    cm_http_req_t *req = c->req;
    if (!req->in_field) {
        if (req->nhdrs == c->srv->opts.max_headers)
            return fail(c, 431, "too_many_headers", "too many request headers");
        if (req->nhdrs == req->hdrs_cap) {
            req->hdrs_cap = req->hdrs_cap ? req->hdrs_cap * 2 : 16;
            req->hdrs = cm_xrealloc(req->hdrs, req->hdrs_cap * sizeof(*req->hdrs));
        }
        req->hdrs[req->nhdrs++] = (cm__hdr_t){(uint32_t)req->head.len, 0, 0, 0};
        req->in_field = true;
    }
    cm_buf_append(&req->head, at, len);
    return check_head_size(c);
}

/* RFC 9110 5.6.2: a field name is a token. llhttp 8 lets whitespace
 * between the name and the colon through into the name; RFC 9112 5.1
 * requires a 400 for it, since a proxy that trims it would read a header
 * we ignore (or the reverse): the seed of request smuggling. */
static bool is_tchar(unsigned char ch)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    return (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z') ||
           (ch != '\0' && memchr(extra, ch, sizeof(extra) - 1) != NULL);
}

static int on_header_field_complete(llhttp_t *p)
{
    cm__conn_t *c = conn_of(p);
    cm_http_req_t *req = c->req;
    cm__hdr_t *h = &req->hdrs[req->nhdrs - 1];
    h->name_len = (uint32_t)req->head.len - h->name_off;
    h->val_off = (uint32_t)req->head.len;
    req->in_field = false;
    c->value_started = false;
    for (uint32_t i = 0; i < h->name_len; i++)
        if (!is_tchar((unsigned char)req->head.p[h->name_off + i]))
            return fail(c, 400, "malformed_request", "invalid character in a header name");
    return 0;
}

/*
 * llhttp 8 accepts obs-fold (a value continued on a line that starts with
 * whitespace): it drops the line break and calls on_header_value again for
 * the continuation. RFC 9112 5.2 lets a server refuse it with 400, which we
 * do for the same reason as whitespace before the colon. A value is only
 * legitimately delivered in pieces when the input buffer ended inside it,
 * so a second piece is a fold unless the first ended where its buffer did
 * and this one starts where the next buffer begins.
 */
static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    cm__conn_t *c = conn_of(p);
    if (c->value_started && !(c->value_at_end && at == c->exec_begin))
        return fail(c, 400, "malformed_request", "obsolete line folding in a header value");
    c->value_started = true;
    c->value_at_end = at + len == c->exec_end;
    cm_buf_append(&c->req->head, at, len);
    return check_head_size(c);
}

static int on_header_value_complete(llhttp_t *p)
{
    cm_http_req_t *req = conn_of(p)->req;
    cm__hdr_t *h = &req->hdrs[req->nhdrs - 1];
    h->val_len = (uint32_t)req->head.len - h->val_off;
    return 0;
}

static void write_continue_cb(uv_write_t *w, int status)
{
    CM_UNUSED(status);
    free(w);
}

static int on_headers_complete(llhttp_t *p)
{
    cm__conn_t *c = conn_of(p);
    cm_http_req_t *req = c->req;
    const cm_http_server_opts_t *o = &c->srv->opts;
    bool has_body = (p->flags & F_CHUNKED) || p->content_length > 0;

    req->method = (uint8_t)llhttp_get_method(p);
    req->in_body = true;
    /* llhttp 8 reads "GET /x" (HTTP/0.9) and "HTTP/2.0" alike as requests. */
    if (p->http_major == 0)
        return fail(c, 400, "malformed_request", "HTTP/0.9 requests are not supported");
    if (p->http_major != 1 || p->http_minor > 1)
        return fail(c, 505, "http_version_not_supported", "only HTTP/1.0 and HTTP/1.1 are served");
    c->deadline_ms = req->start_ms + o->request_timeout_ms;
    if (!(p->flags & F_CHUNKED) && p->content_length > o->max_body_bytes)
        return fail(c, 413, "payload_too_large", "request body is larger than the limit");

    cm_slice_t expect = cm_http_req_header(req, "Expect");
    if (expect.p != NULL) {
        if (!cm_slice_eq_nocase(cm_slice_trim(expect), "100-continue"))
            return fail(c, 417, "expectation_failed", "only Expect: 100-continue is supported");
        if (has_body && llhttp_get_http_minor(p) >= 1) {
            static char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            uv_write_t *w = cm_xmalloc(sizeof(*w));
            uv_buf_t b = uv_buf_init(cont, sizeof(cont) - 1);
            if (uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, write_continue_cb) != 0)
                free(w);
        }
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    cm__conn_t *c = conn_of(p);
    cm_http_req_t *req = c->req;
    if (req->body.len + len > c->srv->opts.max_body_bytes)
        return fail(c, 413, "payload_too_large", "request body is larger than the limit");
    cm_buf_append(&req->body, at, len);
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    cm__conn_t *c = conn_of(p);
    c->req->keep_alive = llhttp_should_keep_alive(p) != 0;
    /* An Upgrade (WebSocket, h2c) or a CONNECT hands the rest of the stream
     * to another protocol, which no service here speaks. The request is
     * answered as an ordinary one and is the connection's last: nothing
     * after it is ever parsed (llhttp's state would no longer be HTTP). */
    if (p->upgrade || p->method == HTTP_CONNECT) {
        c->req->keep_alive = false;
        c->last_request = true;
    }
    return HPE_PAUSED;
}

void cm__conn_settings_init(llhttp_settings_t *s)
{
    llhttp_settings_init(s);
    s->on_message_begin = on_message_begin;
    s->on_url = on_url;
    s->on_url_complete = on_url_complete;
    s->on_header_field = on_header_field;
    s->on_header_field_complete = on_header_field_complete;
    s->on_header_value = on_header_value;
    s->on_header_value_complete = on_header_value_complete;
    s->on_headers_complete = on_headers_complete;
    s->on_body = on_body;
    s->on_message_complete = on_message_complete;
}

/* ---- parsing and dispatch ---------------------------------------------- */

typedef enum { PARSE_MORE, PARSE_READY, PARSE_FAILED } parse_out_t;

static bool can_parse(const cm__conn_t *c)
{
    return c->state == CM__CONN_OPEN && c->handling == NULL && !c->write_blocked &&
           !c->last_request;
}

/* Feeds bytes to llhttp; returns how many were consumed. */
static size_t conn_parse(cm__conn_t *c, const char *p, size_t n, parse_out_t *out)
{
    c->exec_begin = p;
    c->exec_end = p + n;
    llhttp_errno_t e = llhttp_execute(&c->parser, p, n);
    if (e == HPE_OK) {
        *out = PARSE_MORE;
        return n;
    }
    if (e == HPE_PAUSED && c->req != NULL) { /* on_message_complete: a request is ready */
        const char *stop = llhttp_get_error_pos(&c->parser);
        llhttp_resume(&c->parser);
        *out = PARSE_READY;
        return stop ? (size_t)(stop - p) : n;
    }
    if (e == HPE_PAUSED_UPGRADE || e == HPE_PAUSED) {
        /* Defensive: on_message_complete marks an upgrade as the last
         * request, so llhttp is not run again after one. Should it stop
         * here anyway, nothing more is parsed: the bytes are dropped. */
        c->last_request = true;
        *out = PARSE_MORE;
        return n;
    }
    *out = PARSE_FAILED;
    if (e == HPE_PAUSED_H2_UPGRADE) /* the HTTP/2 connection preface ("PRI * HTTP/2.0") */
        fail(c, 505, "http_version_not_supported", "HTTP/2 is not served; use HTTP/1.1");
    if (c->err_status)
        cm__respond_early_error(c, c->err_status, c->err_code, c->err_detail);
    else
        cm__respond_early_error(c, 400, "malformed_request", llhttp_get_error_reason(&c->parser));
    return n;
}

static void conn_dispatch(cm__conn_t *c)
{
    cm_http_req_t *req = c->req;
    c->req = NULL;
    c->handling = req;
    if (c->srv->draining)
        req->keep_alive = false;
    unsigned allowed = 0;
    int rc = cm__route_find(c->srv, req, &allowed);

    c->in_dispatch = true;
    if (req->method == HTTP_CONNECT) {
        cm_http_respond_error(req, 405, "invalid_request", "method_not_allowed",
                              "CONNECT is not supported.", NULL);
    } else if (cm__method_bit(req->method) == CM_HTTP_OPTIONS && c->srv->opts.cors &&
               (req->route == NULL || !(req->route->methods & CM_HTTP_OPTIONS)) && rc != 404) {
        /* CORS preflight, answered as PostHog capture does. */
        cm_http_respond(req, 200, "application/json", "{\"status\":\"Ok\"}", 15);
    } else if (rc == 404) {
        cm_http_respond_error(req, 404, "invalid_request", "not_found", "Not found.", NULL);
    } else if (rc == 405) {
        cm_buf_t allow = CM_BUF_INIT;
        static const char *names[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
        if (allowed & CM_HTTP_GET)
            allowed |= CM_HTTP_HEAD;
        for (size_t i = 0; i < CM_ARRAY_LEN(names); i++)
            if (allowed & (1u << i))
                cm_buf_appendf(&allow, "%s%s", allow.len ? ", " : "", names[i]);
        cm_http_res_header(req, "Allow", cm_buf_cstr(&allow));
        cm_buf_free(&allow);
        cm_http_respond_error(req, 405, "invalid_request", "method_not_allowed",
                              "Method not allowed.", NULL);
    } else {
        req->route->handler(req, req->route->ud);
    }
    c->in_dispatch = false;
}

/* Parses the stash for as long as the connection may take a request. */
static void conn_pump(cm__conn_t *c)
{
    if (c->in_pump)
        return;
    c->in_pump = true;
    while (can_parse(c) && c->stash.len > 0) {
        parse_out_t out;
        size_t used = conn_parse(c, c->stash.p, c->stash.len, &out);
        if (out == PARSE_FAILED)
            break;
        cm_buf_consume(&c->stash, used);
        if (out == PARSE_READY)
            conn_dispatch(c);
    }
    c->in_pump = false;
    if (c->stash.len == 0 && c->stash.cap > READ_BUF_SIZE)
        cm_buf_free(&c->stash); /* a burst of read-ahead is not kept for the connection's life */
    conn_update(c);
}

/* ---- reading ------------------------------------------------------------- */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    /* Parsing is synchronous in read_cb and leftovers are copied to the
     * stash, so one buffer serves every connection of the process. While a
     * handler holds the request, only what still fits under STASH_MAX is
     * read (reading stops before the stash is full, so that is never 0). */
    static char shared[READ_BUF_SIZE];
    const cm__conn_t *c = h->data;
    size_t room = sizeof(shared);
    CM_UNUSED(suggested);
    if (c->handling != NULL && c->stash.len < STASH_MAX)
        room = CM_MIN(room, STASH_MAX - c->stash.len);
    *buf = uv_buf_init(shared, (unsigned)room);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    cm__conn_t *c = CM_CONTAINER_OF(s, cm__conn_t, tcp);
    if (nread == 0)
        return;
    if (nread < 0) {
        /* The client will send nothing more. After a clean EOF (a half
         * close), answers already on their way are still delivered: closing
         * now would cancel queued writes. A request half received is
         * abandoned. Errors close at once. */
        if (nread == UV_EOF && c->state != CM__CONN_CLOSING && c->req == NULL) {
            c->peer_eof = true;
            uv_read_stop(s);
            c->reading = false;
            conn_update(c);
            return;
        }
        cm__conn_close(c);
        return;
    }
    if (c->state == CM__CONN_LINGER)
        return; /* discarding */
    size_t n = (size_t)nread;
    if (c->stash.len == 0 && can_parse(c)) {
        parse_out_t out;
        size_t used = conn_parse(c, buf->base, n, &out);
        if (out == PARSE_FAILED)
            return;
        if (used < n)
            cm_buf_append(&c->stash, buf->base + used, n - used);
        if (out == PARSE_READY)
            conn_dispatch(c);
    } else {
        cm_buf_append(&c->stash, buf->base, n);
    }
    conn_pump(c);
}

/* ---- timers and reading state --------------------------------------------- */

static void timer_cb(uv_timer_t *t)
{
    cm__conn_t *c = CM_CONTAINER_OF(t, cm__conn_t, timer);
    if (c->state != CM__CONN_OPEN || c->handling != NULL) {
        cm__conn_close(c); /* linger over, or a write that never drained */
    } else if (c->req != NULL) {
        const char *what = c->req->in_body ? "request body not received in time"
                                           : "request headers not received in time";
        cm__respond_early_error(c, 408, "request_timeout", what);
    } else {
        cm__conn_close(c); /* idle keep-alive connection */
    }
}

/* Starts or stops reading and arms the timer for the current state. */
static void conn_update(cm__conn_t *c)
{
    if (c->state == CM__CONN_CLOSING)
        return;
    const cm_http_server_opts_t *o = &c->srv->opts;
    uint64_t now = uv_now(c->srv->loop);
    size_t unsent = uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp);
    if (c->peer_eof) {
        /* Nothing more to read: close once the answers have left. */
        if (c->state == CM__CONN_LINGER ? c->shutdown_done
                                        : (c->handling == NULL && unsent == 0 && c->stash.len == 0))
            cm__conn_close(c);
        else if (c->state == CM__CONN_OPEN && c->handling != NULL)
            uv_timer_stop(&c->timer);       /* the handler's answer is still to come */
        else if (c->state == CM__CONN_OPEN) /* a client that never reads is not waited on forever */
            uv_timer_start(&c->timer, timer_cb, o->write_timeout_ms, 0);
        return;
    }
    bool want_read =
        c->state == CM__CONN_LINGER || (c->state == CM__CONN_OPEN && !c->write_blocked &&
                                        (c->handling == NULL || c->stash.len < STASH_MAX));
    if (want_read && !c->reading) {
        if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0) {
            cm__conn_close(c);
            return;
        }
        c->reading = true;
    } else if (!want_read && c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
    }

    uint64_t timeout;
    if (c->state == CM__CONN_LINGER) {
        return; /* armed once when lingering starts */
    } else if (c->write_blocked) {
        timeout = o->write_timeout_ms;
    } else if (c->handling != NULL) {
        uv_timer_stop(&c->timer);
        return;
    } else if (c->req != NULL) {
        uint64_t left = c->deadline_ms > now ? c->deadline_ms - now : 0;
        timeout = c->req->in_body ? CM_MIN(left, o->body_timeout_ms) : left;
    } else if (c->srv->draining) {
        cm__conn_close(c);
        return;
    } else {
        timeout = o->idle_timeout_ms;
    }
    uv_timer_start(&c->timer, timer_cb, timeout, 0);
}

bool cm__conn_is_idle(const cm__conn_t *c)
{
    return c->req == NULL && c->handling == NULL && c->stash.len == 0;
}

/* ---- after a response ----------------------------------------------------- */

static void shutdown_cb(uv_shutdown_t *r, int status)
{
    cm__conn_t *c = CM_CONTAINER_OF(r, cm__conn_t, shutdown);
    if (status == UV_ECANCELED || c->state == CM__CONN_CLOSING)
        return;
    c->shutdown_done = true;
    conn_update(c);
}

static void conn_linger(cm__conn_t *c)
{
    c->state = CM__CONN_LINGER;
    /* uv_shutdown waits for queued writes, then sends FIN. */
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, shutdown_cb) != 0) {
        cm__conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, timer_cb, LINGER_MS, 0);
    conn_update(c);
}

/* Called by the response writer once a response has been handed to libuv. */
void cm__conn_response_queued(cm__conn_t *c, bool close_after)
{
    c->handling = NULL;
    if (close_after) {
        if (c->req != NULL) { /* an error response cut a request short */
            cm__req_free(c->req);
            c->req = NULL;
        }
        conn_linger(c);
        return;
    }
    size_t queued = uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp);
    c->write_blocked = queued > c->srv->opts.max_write_queue;
    if (!c->in_dispatch)
        conn_pump(c);
}

static void write_done(cm__conn_t *c)
{
    if (c->write_blocked &&
        uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) <= c->srv->opts.max_write_queue) {
        c->write_blocked = false;
        conn_pump(c);
    } else if (c->peer_eof) {
        conn_update(c);
    }
}

/* Called by http_response.c when a response write has finished. */
void cm__conn_write_done(cm__conn_t *c, int status)
{
    if (c->state == CM__CONN_CLOSING)
        return;
    if (status < 0) {
        cm__conn_close(c);
        return;
    }
    if (c->state == CM__CONN_OPEN)
        write_done(c);
}

/* ---- accept and close -------------------------------------------------------- */

static void close_cb(uv_handle_t *h)
{
    cm__conn_t *c = h->data;
    if (--c->handles_open > 0)
        return;
    cm_buf_free(&c->stash);
    cm_http_server_t *srv = c->srv;
    cm__server_conn_closed(srv, c);
    free(c);
}

void cm__conn_close(cm__conn_t *c)
{
    if (c->state == CM__CONN_CLOSING)
        return;
    c->state = CM__CONN_CLOSING;
    if (c->handling != NULL) /* the handler answers into the void later */
        c->handling->conn = NULL;
    c->handling = NULL;
    if (c->req != NULL) {
        cm__req_free(c->req);
        c->req = NULL;
    }
    uv_close((uv_handle_t *)&c->tcp, close_cb);
    uv_close((uv_handle_t *)&c->timer, close_cb);
}

static void peer_name(uv_tcp_t *t, char *out, size_t outlen)
{
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    out[0] = '\0';
    if (uv_tcp_getpeername(t, (struct sockaddr *)&ss, &len) != 0)
        return;
    if (ss.ss_family == AF_INET)
        uv_ip4_name((struct sockaddr_in *)&ss, out, outlen);
    else if (ss.ss_family == AF_INET6)
        uv_ip6_name((struct sockaddr_in6 *)&ss, out, outlen);
}

void cm__conn_accept(cm_http_server_t *srv)
{
    cm__conn_t *c = cm_xcalloc(1, sizeof(*c));
    c->srv = srv;
    uv_tcp_init(srv->loop, &c->tcp);
    uv_timer_init(srv->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->handles_open = 2;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->nconns++;
    if (uv_accept((uv_stream_t *)&srv->listener, (uv_stream_t *)&c->tcp) != 0 ||
        srv->nconns > srv->opts.max_connections) {
        cm__conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    peer_name(&c->tcp, c->peer, sizeof(c->peer));
    llhttp_init(&c->parser, HTTP_REQUEST, &srv->settings);
    c->parser.data = c;
    c->state = CM__CONN_OPEN;
    conn_update(c);
}
