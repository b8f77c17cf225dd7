/*
 * http_server.h - an HTTP/1.1 server on libuv + llhttp.
 *
 * Model: one cm_http_server_t per listening socket, many connections, at
 * most one request per connection in the hands of a handler at a time.
 * Pipelined requests wait in the connection's input (and, beyond that, in
 * the kernel's socket buffer), which both keeps responses in order and
 * applies backpressure: a connection is not read while its handler runs or
 * while its unsent output is above the configured limit.
 *
 * Request bodies (Content-Length or chunked) are buffered whole, within
 * max_body_bytes, before the handler runs.
 *
 * Ownership: the server owns every cm_http_req_t. A handler receives the
 * request and must eventually call exactly one cm_http_respond*() on it,
 * synchronously or later from another callback on the same loop. After that
 * call the request pointer is invalid. If the client goes away first, the
 * request stays valid until the handler responds (the answer is dropped).
 *
 * Statuses produced by the server itself, each with the JSON error body of
 * cm/api_error.h and "Connection: close":
 *   400 malformed request (llhttp's reason in `detail`), whitespace before a
 *       header's colon, obs-fold, an HTTP/0.9 request line
 *   405 CONNECT (then the connection closes)
 *   404 no route; 405 route without that method (with Allow)
 *   408 request not received within header_timeout / body stall timeout
 *   413 body larger than max_body_bytes (checked on Content-Length first)
 *   414 request target longer than max_url_bytes
 *   417 an Expect other than 100-continue
 *   431 header section larger than max_header_bytes or max_headers
 *   505 a version other than HTTP/1.0 and 1.1, or the HTTP/2 preface
 * A request with Upgrade (WebSocket, h2c) is answered as an ordinary one and
 * is its connection's last: nothing after it is parsed. A handler may read
 * the request's head and body (headers, query, body accessors) from a
 * worker thread while it holds the request: nothing on the loop changes
 * them. Everything else is loop-thread only.
 */
#ifndef CM_HTTP_SERVER_H
#define CM_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/api_error.h"
#include "cm/buf.h"

struct uv_loop_s;
typedef struct cm_metrics cm_metrics_t;

typedef struct cm_http_server cm_http_server_t;
typedef struct cm_http_req cm_http_req_t;

/* Method bits for routes. */
enum {
    CM_HTTP_GET = 1u << 0,
    CM_HTTP_HEAD = 1u << 1,
    CM_HTTP_POST = 1u << 2,
    CM_HTTP_PUT = 1u << 3,
    CM_HTTP_PATCH = 1u << 4,
    CM_HTTP_DELETE = 1u << 5,
    CM_HTTP_OPTIONS = 1u << 6,
    CM_HTTP_ANY = 0x7fu
};

typedef void (*cm_http_handler_t)(cm_http_req_t *req, void *ud);

typedef struct {
    size_t max_url_bytes;        /* 414 beyond; default 8 KiB */
    size_t max_header_bytes;     /* 431 beyond (names + values + URL); default 32 KiB */
    size_t max_headers;          /* 431 beyond; default 100 */
    size_t max_body_bytes;       /* 413 beyond; default 1 MiB */
    uint64_t header_timeout_ms;  /* first byte to end of headers; default 10 s */
    uint64_t body_timeout_ms;    /* longest pause between body bytes; default 10 s */
    uint64_t request_timeout_ms; /* first byte to end of body; default 60 s */
    uint64_t idle_timeout_ms;    /* keep-alive connection with no request; default 60 s */
    uint64_t write_timeout_ms;   /* a response not taken by the client; default 30 s */
    size_t max_write_queue;      /* stop reading above this many unsent bytes; default 1 MiB */
    size_t max_connections;      /* accepted and closed beyond; default 10000 */
    bool cors;                   /* permissive CORS as PostHog capture does */
    const char *cors_methods;    /* Access-Control-Allow-Methods; default "GET, POST, OPTIONS" */
    const char *service;         /* label for metrics and logs; default "http" */
    cm_metrics_t *metrics;       /* optional: per-route request counters and latency */
    double access_log_sample;    /* share of requests under 400 given an access line, 0..1;
                                    default 1. Statuses >= 400 always get one. */
} cm_http_server_opts_t;

/* Fills opts with the defaults above. */
void cm_http_server_opts_init(cm_http_server_opts_t *opts);

cm_http_server_t *cm_http_server_new(struct uv_loop_s *loop, const cm_http_server_opts_t *opts);

/*
 * Routes. pattern is a path; a segment written {name} matches one non-empty
 * segment and is read back with cm_http_req_param(). Exact segments beat
 * parameters; routes are otherwise tried in registration order. The path
 * must match exactly (register "/x" and "/x/" separately if both exist).
 * Strings are copied.
 */
void cm_http_server_route(cm_http_server_t *srv, unsigned methods, const char *pattern,
                          cm_http_handler_t handler, void *ud);

/* Binds and listens; port 0 picks a free port (see cm_http_server_port). */
int cm_http_server_listen(cm_http_server_t *srv, const char *host, int port);
int cm_http_server_port(const cm_http_server_t *srv);

/*
 * Graceful drain: stop accepting, close idle connections, let requests in
 * progress finish (their responses carry Connection: close), then call
 * done(ud). After timeout_ms the remaining connections are closed and done
 * is still called once. The server can be freed from done.
 */
void cm_http_server_drain(cm_http_server_t *srv, uint64_t timeout_ms, void (*done)(void *ud),
                          void *ud);
/* Frees a drained server (all handles closed). */
void cm_http_server_free(cm_http_server_t *srv);

size_t cm_http_server_connections(const cm_http_server_t *srv);

/* ---- request accessors (valid until the response) ------------------------ */

unsigned cm_http_req_method(const cm_http_req_t *req); /* one CM_HTTP_* bit, 0 if other */
const char *cm_http_req_method_name(const cm_http_req_t *req);
cm_slice_t cm_http_req_target(const cm_http_req_t *req); /* as sent: path?query */
cm_slice_t cm_http_req_path(const cm_http_req_t *req);   /* raw, without the query */
cm_slice_t cm_http_req_query(const cm_http_req_t *req);  /* raw, after '?'; empty if none */
/* First header with this name (case-insensitive); {NULL, 0} when absent. */
cm_slice_t cm_http_req_header(const cm_http_req_t *req, const char *name);
size_t cm_http_req_header_count(const cm_http_req_t *req);
void cm_http_req_header_at(const cm_http_req_t *req, size_t i, cm_slice_t *name, cm_slice_t *value);
cm_slice_t cm_http_req_body(const cm_http_req_t *req);
/* Route parameter {name}; {NULL, 0} when the route has none. */
cm_slice_t cm_http_req_param(const cm_http_req_t *req, const char *name);
/* The TCP peer address as text ("127.0.0.1", "::1"). */
const char *cm_http_req_peer(const cm_http_req_t *req);
/* X-Request-Id when the client sent a sane one, else a fresh UUIDv7. */
const char *cm_http_req_id(cm_http_req_t *req);
/*
 * Adds key=value to the request's access line (both copied; at most 16
 * fields, later ones dropped): what only the handler knows, such as
 * "project_id" or an endpoint run's name, version and cache result. The
 * line itself is written when the response is: one JSON line per request,
 * {"msg":"access","method","route" (the pattern, not the path),"status",
 * "duration_ms","bytes_out","peer", then these}.
 */
void cm_http_req_log_field(cm_http_req_t *req, const char *key, const char *value);
/* Monotonic ms when the first byte of the request arrived. */
uint64_t cm_http_req_start_ms(const cm_http_req_t *req);
/* False once the client has gone (its answer will be dropped). */
bool cm_http_req_connected(const cm_http_req_t *req);
cm_http_server_t *cm_http_req_server(const cm_http_req_t *req);

/* ---- responses -------------------------------------------------------------- */

/* Adds a response header (copied). Call before responding. */
/* Adds a response header. A name or value holding CR or LF (or a name with
 * a colon or blank) is refused: logged and not written, since it would
 * split the response. */
void cm_http_res_header(cm_http_req_t *req, const char *name, const char *value);
/* This response carries no CORS headers even when the server adds them
 * (an OAuth authorization page must never be readable by another origin). */
void cm_http_res_no_cors(cm_http_req_t *req);
/* Responds with body, which needs to live only during the call (what the
 * socket does not take at once is copied). content_type may be NULL when
 * len == 0. */
void cm_http_respond(cm_http_req_t *req, int status, const char *content_type, const void *body,
                     size_t len);
/* The same with the body in parts, one after the other (a cached answer and
 * a few bytes made for this request, without joining them first). */
void cm_http_respond_parts(cm_http_req_t *req, int status, const char *content_type,
                           const cm_slice_t *parts, size_t nparts);
/* Responds with body's bytes, taking them over (body is left empty). */
void cm_http_respond_buf(cm_http_req_t *req, int status, const char *content_type, cm_buf_t *body);
/* application/json shortcut for cm_http_respond_buf. */
void cm_http_respond_json(cm_http_req_t *req, int status, cm_buf_t *body);
/* The API error envelope of cm/api_error.h; attr may be NULL. */
void cm_http_respond_error(cm_http_req_t *req, int status, const char *type, const char *code,
                           const char *detail, const char *attr);
/* The same for a validator's error (cm/api_error.h). */
void cm_http_respond_api_error(cm_http_req_t *req, const cm_api_error_t *e);

/* The reason phrase of a status line ("See Other" for 303); "Unknown" only
 * for a code no RFC names. */
const char *cm_http_status_text(int status);

#endif
