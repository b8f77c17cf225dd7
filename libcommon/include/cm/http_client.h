/*
 * http_client.h - an asynchronous HTTP/1.1 client on a libuv loop, for
 * ClickHouse and for fetching OAuth client documents.
 *
 *   cm_http_client_t *hc;
 *   cm_http_client_new(loop, &(cm_http_client_opts_t){.filter = cm_http_client_public_only}, &hc);
 *   const char *hdrs[] = {"Accept", "application/json", NULL};
 *   cm_http_client_req_t req = {.url = "https://example.com/client.json", .headers = hdrs};
 *   cm_http_client_request(hc, &req, on_done, ud);    (on_done runs later, on the loop)
 *
 * What it does, and does not:
 *   - http:// and https:// (mbedTLS: the peer's chain is verified against a
 *     CA file, SNI and the host name are checked; TLS 1.2 at least);
 *   - one connection per request in flight; a connection whose response was
 *     complete and not "Connection: close" goes back to a small pool per
 *     scheme://host:port and is reused, until idle_timeout_ms;
 *   - redirects are never followed: a 3xx is a response like any other;
 *   - Content-Length, chunked and read-until-close bodies; no decoding of
 *     Content-Encoding (send no Accept-Encoding, or decode it yourself);
 *   - host names are resolved with uv_getaddrinfo (libuv's thread pool),
 *     and each address may be refused by the filter hook before any
 *     connection is made to it: that is where SSRF protection goes.
 *
 * The callback runs EXACTLY ONCE per request, on the loop, never from inside
 * cm_http_client_request() itself (even a malformed URL fails later). Its
 * status is 0, with res->status the HTTP status (any, 1xx aside), or:
 *   CM_EINVAL     the request could not be made: bad URL, method or header,
 *                 unreadable CA file
 *   CM_EUNAVAIL   name resolution, connection or TLS handshake failed
 *                 (refused, unreachable, certificate not trusted...)
 *   CM_EFORBIDDEN the filter refused every address the name resolved to
 *   CM_ETIMEDOUT  connect_timeout_ms, read_timeout_ms or timeout_ms passed
 *   CM_ETOOBIG    the response is larger than max_response_bytes
 *   CM_EIO        the connection broke after the request went out, or the
 *                 response was not valid HTTP/1.x
 *   CM_ERR        cancelled (cm_http_client_cancel) or the client closed
 * res->error says why in words ("" on success). Everything res points to is
 * valid only during the callback. The callback may call any function of
 * this API, including cm_http_client_close() on its own client.
 *
 * Retries: a request written on a REUSED connection that the server had
 * closed meanwhile (no byte of the response came back) is sent again once,
 * on a new connection, when its method is GET or HEAD or req.idempotent is
 * set. Nothing else is ever retried.
 *
 * Loop-thread only.
 */
#ifndef CM_HTTP_CLIENT_H
#define CM_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "cm/buf.h"

typedef struct cm_http_client cm_http_client_t;
typedef struct cm_http_client_call cm_http_client_call_t;

#define CM_HTTP_CLIENT_CA_FILE "/etc/ssl/certs/ca-certificates.crt"

/* Decides whether a resolved address may be connected to: true allows it.
 * addr is a sockaddr_in or sockaddr_in6; ud is cm_http_client_opts_t.filter_ud. */
typedef bool (*cm_http_client_filter_cb)(const struct sockaddr *addr, void *ud);

/* Zero means "default" for every numeric field. */
typedef struct {
    int connect_timeout_ms;    /* resolve + TCP connect + TLS handshake; default 5000 */
    int timeout_ms;            /* the whole request, from the call to the callback; default 30000 */
    int read_timeout_ms;       /* once the request is sent, the longest wait for the next byte of
                                * the response (a stalled server); default 0: none */
    size_t max_response_bytes; /* header section + body; default 16 MiB */
    int idle_timeout_ms;       /* a pooled connection is closed after this; default 30000 */
    int max_idle_per_host;     /* pooled connections per scheme://host:port; default 8 */
    const char *ca_file;       /* PEM bundle for https; default CM_HTTP_CLIENT_CA_FILE */
    const char *user_agent;    /* sent unless the request has its own; NULL: none */
    cm_http_client_filter_cb filter; /* NULL: every address is allowed */
    void *filter_ud;
    const char *name; /* shown in log lines; default "http_client" */
} cm_http_client_opts_t;

/* Copied by cm_http_client_request: the caller may free it all once the
 * call returns. */
typedef struct {
    const char *method; /* a token; default "GET" */
    const char *url;    /* http(s)://host[:port][/path][?query]; no user:password@ */
    /* NULL-terminated name, value, name, value... list, e.g. Authorization
     * for basic auth. Host, Content-Length, Transfer-Encoding, Connection,
     * Upgrade and Expect are the client's own: giving one is CM_EINVAL, as
     * is a CR, LF or NUL in a value. */
    const char *const *headers;
    const void *body; /* sent with Content-Length (also 0 for a method other than GET/HEAD) */
    size_t body_len;
    /* Per-request overrides; zero: the client's. */
    int connect_timeout_ms;
    int timeout_ms;
    int read_timeout_ms;
    size_t max_response_bytes;
    bool idempotent; /* may be retried like a GET (see the top comment) */
} cm_http_client_req_t;

typedef struct {
    cm_slice_t name;
    cm_slice_t value;
} cm_http_client_header_t;

typedef struct {
    int status;                             /* 200, 302, 404...; 0 when the request failed */
    const cm_http_client_header_t *headers; /* in the order received */
    size_t nheaders;
    cm_slice_t body;
    const char *error; /* the failure in words; "" on success */
} cm_http_client_res_t;

typedef void (*cm_http_client_cb)(int status, const cm_http_client_res_t *res, void *ud);
typedef void (*cm_http_client_closed_cb)(void *ud);

/* opts may be NULL (all defaults). CM_EINVAL for a negative option (nothing
 * allocated then). The CA file is read on the first https request. */
int cm_http_client_new(uv_loop_t *loop, const cm_http_client_opts_t *opts, cm_http_client_t **out);

/* Starts a request; cb (not NULL) runs later with the outcome. The handle
 * returned is only for cm_http_client_cancel and is valid until cb starts. */
cm_http_client_call_t *cm_http_client_request(cm_http_client_t *c, const cm_http_client_req_t *req,
                                              cm_http_client_cb cb, void *ud);

/* Fails the request with CM_ERR "cancelled": its callback runs before this
 * returns. Not from inside that request's own callback. */
void cm_http_client_cancel(cm_http_client_call_t *call);

/* Asynchronous: pending requests fail with CM_ERR "client closed" before
 * this returns (and so do requests their callbacks make), connections are
 * closed, and once every handle is released done(ud) runs from the loop.
 * c must not be used after this call. */
void cm_http_client_close(cm_http_client_t *c, cm_http_client_closed_cb done, void *ud);

/* The first header of that name (case-insensitive), or a NULL slice. */
cm_slice_t cm_http_client_res_header(const cm_http_client_res_t *res, const char *name);

/*
 * A ready-made filter for URLs that come from outside (OAuth client
 * documents): refuses loopback, unspecified, private (RFC 1918), CGNAT
 * (100.64/10), link-local, multicast, broadcast and reserved IPv4; and
 * loopback, unspecified, unique-local (fc00::/7), link-local, site-local
 * and multicast IPv6, plus IPv4 addresses carried inside IPv6 (mapped
 * ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16)
 * judged as IPv4. ud is unused.
 */
bool cm_http_client_public_only(const struct sockaddr *addr, void *ud);

#endif
