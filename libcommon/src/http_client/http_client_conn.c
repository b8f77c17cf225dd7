/*
 * http_client_conn.c - one connection of the HTTP client.
 *
 *   RESOLVING -> CONNECTING -> [HANDSHAKE ->] ACTIVE <-> IDLE
 *        \____________\_____________\____________\_______\__-> CLOSING
 *
 * RESOLVING   uv_getaddrinfo runs on libuv's thread pool. Its request lives
 *             apart (cm__hc_resolve_t), so that a connection closed meanwhile
 *             can leave it behind: the callback then only frees.
 * CONNECTING  the addresses are tried in order; the filter sees each one
 *             first. A failed attempt closes the TCP handle and opens a new
 *             one for the next address (the socket may be of the wrong
 *             family, and a socket whose connect failed is not reused).
 * HANDSHAKE   https: mbedTLS over memory buffers (http_client_tls.c), driven
 *             by the bytes read.
 * ACTIVE      the request is written and the response parsed as it comes.
 * IDLE        in the pool, still reading: a byte or an EOF from the server
 *             then means it is done with the connection, which is closed.
 * CLOSING     uv_close in progress; the memory goes in its callback.
 *
 * Every write owns its bytes (a copy of the request, or ciphertext handed
 * over by the TLS layer), freed in the write callback, so nothing the write
 * refers to can go away under it.
 *
 * The connection tells http_client.c what happened through
 * cm__http_client_on_response and cm__http_client_on_failure, and does
 * nothing more in that libuv callback once it has: the owner's callback
 * may have run below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "http_client_internal.h"

struct cm__hc_resolve {
    uv_getaddrinfo_t req;
    cm__hc_conn_t *conn; /* NULL once abandoned */
};

typedef struct {
    uv_write_t req;
    char *data;
} write_t;

static void connect_next(cm__hc_conn_t *k);
static void on_tcp_closed(uv_handle_t *h);

/* ---- writing ------------------------------------------------------------------ */

static void on_written(uv_write_t *req, int status)
{
    write_t *w = CM_CONTAINER_OF(req, write_t, req);
    cm__hc_conn_t *k = req->handle->data;
    free(w->data);
    free(w);
    k->writes--;
    if (status < 0 && k->call != NULL && k->state != CM__HC_CLOSING)
        cm__http_client_on_failure(k, k->state == CM__HC_HANDSHAKE ? CM_EUNAVAIL : CM_EIO,
                                   !k->call->got_bytes, "cannot send the request to %s: %s",
                                   k->host, uv_strerror(status));
}

/* Takes data (malloc'd) whatever happens. */
static int write_owned(cm__hc_conn_t *k, char *data, size_t len)
{
    write_t *w = cm_xmalloc(sizeof(*w));
    uv_buf_t b = uv_buf_init(data, (unsigned)len);
    w->data = data;
    int rc = uv_write(&w->req, (uv_stream_t *)&k->tcp, &b, 1, on_written);
    if (rc < 0) {
        free(data);
        free(w);
        return rc;
    }
    k->writes++;
    return 0;
}

static int flush_tls(cm__hc_conn_t *k)
{
    size_t len;
    char *out = cm__http_client_tls_output(k->tls, &len);
    return out != NULL ? write_owned(k, out, len) : 0;
}

/* read_timeout_ms: the next byte is due this long from now. */
static void arm_read(cm__hc_conn_t *k)
{
    cm_http_client_call_t *call = k->call;
    if (call == NULL || call->read_timeout == 0)
        return;
    call->read_deadline = uv_now(k->client->loop) + call->read_timeout;
    cm__http_client_schedule(k->client, call->read_deadline);
}

/* Writes the call's request; false when that failed (and the call with it). */
static bool send_request(cm__hc_conn_t *k)
{
    const cm_buf_t *b = &k->call->wire.bytes;
    int rc;
    k->state = CM__HC_ACTIVE;
    k->call->got_bytes = false;
    if (k->tls != NULL)
        rc = cm__http_client_tls_write(k->tls, b->p, b->len) == CM_OK ? flush_tls(k) : UV_EPROTO;
    else
        rc = write_owned(k, cm_xmemdup(b->p, b->len), b->len);
    if (rc == 0) {
        arm_read(k);
        return true;
    }
    cm__http_client_on_failure(k, CM_EIO, !k->call->got_bytes, "cannot send the request to %s: %s",
                               k->host, uv_strerror(rc));
    return false;
}

void cm__http_client_conn_send(cm__hc_conn_t *k)
{
    send_request(k);
}

/* ---- reading ------------------------------------------------------------------ */

/* Hands response bytes to the call's parser; false once the call is over
 * (then the connection must not be touched any more). */
static bool deliver(cm__hc_conn_t *k, const char *p, size_t n)
{
    cm_http_client_call_t *call = k->call;
    size_t used;
    call->got_bytes = true;
    int rc = cm__http_client_parse_feed(&call->res, p, n, &used);
    if (rc == 0)
        return true;
    if (rc < 0) {
        cm__http_client_on_failure(k, rc, false, "%s", call->res.why);
        return false;
    }
    /* Reused only when nothing but this response came, and all of the
     * request went out: anything else is a server out of step with us. */
    bool clean =
        used == n && k->writes == 0 && (k->tls == NULL || !cm__http_client_tls_pending(k->tls));
    cm__http_client_on_response(k, call->res.keep_alive && clean);
    return false;
}

static void conn_ended(cm__hc_conn_t *k, int err)
{
    cm_http_client_call_t *call = k->call;
    const char *what = err == UV_EOF ? "the connection was closed" : uv_strerror(err);

    if (k->state == CM__HC_HANDSHAKE) {
        cm__http_client_on_failure(k, CM_EUNAVAIL, false, "TLS handshake with %s: %s", k->host,
                                   what);
        return;
    }
    if (err == UV_EOF && cm__http_client_parse_eof(&call->res) == 1) {
        cm__http_client_on_response(k, false); /* a body that ends with the connection */
        return;
    }
    if (!call->got_bytes)
        cm__http_client_on_failure(k, CM_EIO, true, "%s: %s before any response", k->host, what);
    else
        cm__http_client_on_failure(k, CM_EIO, false, "%s: %s before the response was complete",
                                   k->host, what);
}

static void tls_pump(cm__hc_conn_t *k)
{
    char why[200], plain[16 * 1024];

    if (k->state == CM__HC_HANDSHAKE) {
        int rc = cm__http_client_tls_handshake(k->tls, why, sizeof(why));
        flush_tls(k);
        if (rc == CM_EAGAIN)
            return;
        if (rc < 0) {
            cm__http_client_on_failure(k, rc, false, "TLS handshake with %s: %s", k->host, why);
            return;
        }
        if (!send_request(k))
            return;
    }
    for (;;) {
        int n = cm__http_client_tls_read(k->tls, plain, sizeof(plain), why, sizeof(why));
        if (n == CM_EAGAIN)
            break;
        if (n == 0) {
            conn_ended(k, UV_EOF);
            return;
        }
        if (n < 0) {
            cm__http_client_on_failure(k, CM_EIO, !k->call->got_bytes, "%s: %s", k->host, why);
            return;
        }
        if (!deliver(k, plain, (size_t)n))
            return;
    }
    flush_tls(k); /* alerts, if mbedTLS had any to send */
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    /* Reads are parsed (or deciphered into another buffer) before the next
     * one, so the client's buffer serves all its connections. */
    cm__hc_conn_t *k = h->data;
    CM_UNUSED(suggested);
    *buf = uv_buf_init(k->client->rbuf, sizeof(k->client->rbuf));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    cm__hc_conn_t *k = s->data;
    if (nread == 0 || k->state == CM__HC_CLOSING)
        return;
    if (k->state == CM__HC_IDLE) {
        cm__http_client_conn_close(k); /* the server closed it, or spoke out of turn */
        return;
    }
    if (nread < 0) {
        conn_ended(k, (int)nread);
        return;
    }
    if (k->call && k->call->read_deadline) /* a byte came: the wait starts again */
        k->call->read_deadline = uv_now(k->client->loop) + k->call->read_timeout;
    if (k->tls != NULL) {
        cm__http_client_tls_feed(k->tls, buf->base, (size_t)nread);
        tls_pump(k);
        return;
    }
    deliver(k, buf->base, (size_t)nread);
}

/* ---- connecting ------------------------------------------------------------------ */

static void addr_name(const struct sockaddr *sa, char *out, size_t size)
{
    char ip[48] = "?";
    if (sa->sa_family == AF_INET6) {
        uv_ip6_name((const struct sockaddr_in6 *)(const void *)sa, ip, sizeof(ip));
        snprintf(out, size, "[%s]", ip);
    } else {
        uv_ip4_name((const struct sockaddr_in *)(const void *)sa, ip, sizeof(ip));
        snprintf(out, size, "%s", ip);
    }
}

static void on_connected(uv_connect_t *req, int status)
{
    cm__hc_conn_t *k = CM_CONTAINER_OF(req, cm__hc_conn_t, connect);

    if (k->state != CM__HC_CONNECTING)
        return; /* closing: the attempt was cancelled */
    if (status < 0) {
        k->last_err = status;
        uv_close((uv_handle_t *)&k->tcp, on_tcp_closed); /* then the next address */
        return;
    }
    uv_freeaddrinfo(k->addrs);
    k->addrs = k->next_addr = NULL;
    uv_tcp_nodelay(&k->tcp, 1);
    int rc = uv_read_start((uv_stream_t *)&k->tcp, on_alloc, on_read);
    if (rc < 0) {
        cm__http_client_on_failure(k, CM_EUNAVAIL, false, "%s: %s", k->host, uv_strerror(rc));
        return;
    }
    if (!k->want_tls) {
        send_request(k);
        return;
    }
    if (cm__http_client_tls_new(k->client->tls, k->host, &k->tls) != CM_OK) {
        cm__http_client_on_failure(k, CM_EINVAL, false, "cannot set up TLS for %s", k->host);
        return;
    }
    k->state = CM__HC_HANDSHAKE;
    tls_pump(k);
}

/* All addresses tried or refused: refused-only is CM_EFORBIDDEN. */
static void connect_exhausted(cm__hc_conn_t *k)
{
    if (k->attempts == 0 && k->refused)
        cm__http_client_on_failure(k, CM_EFORBIDDEN, false,
                                   "the address filter refuses %s (the address of %s)", k->addr,
                                   k->host);
    else if (k->attempts == 0)
        cm__http_client_on_failure(k, CM_EUNAVAIL, false, "%s has no usable address", k->host);
    else
        cm__http_client_on_failure(k, CM_EUNAVAIL, false, "cannot connect to %s (%s port %d): %s",
                                   k->host, k->addr, k->port, uv_strerror(k->last_err));
}

static void connect_next(cm__hc_conn_t *k)
{
    cm_http_client_t *c = k->client;
    while (k->next_addr != NULL) {
        const struct addrinfo *ai = k->next_addr;
        k->next_addr = ai->ai_next;
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        addr_name(ai->ai_addr, k->addr, sizeof(k->addr));
        if (c->filter != NULL && !c->filter(ai->ai_addr, c->filter_ud)) {
            k->refused = true;
            continue;
        }
        k->attempts++;
        int rc = uv_tcp_connect(&k->connect, &k->tcp, ai->ai_addr, on_connected);
        if (rc == 0)
            return;
        k->last_err = rc;
        uv_close((uv_handle_t *)&k->tcp, on_tcp_closed); /* then the next address */
        return;
    }
    connect_exhausted(k);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    cm__hc_resolve_t *r = CM_CONTAINER_OF(req, cm__hc_resolve_t, req);
    cm__hc_conn_t *k = r->conn;
    free(r);
    if (k == NULL) { /* abandoned */
        if (res != NULL)
            uv_freeaddrinfo(res);
        return;
    }
    k->resolve = NULL;
    if (status < 0) {
        cm__http_client_on_failure(k, CM_EUNAVAIL, false, "cannot resolve %s: %s", k->host,
                                   uv_strerror(status));
        return;
    }
    k->addrs = k->next_addr = res;
    k->state = CM__HC_CONNECTING;
    connect_next(k);
}

void cm__http_client_conn_open(cm_http_client_t *c, cm_http_client_call_t *call)
{
    cm__hc_conn_t *k = cm_xcalloc(1, sizeof(*k));
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    char port[8];

    k->client = c;
    k->state = CM__HC_RESOLVING;
    k->host = cm_xstrdup(call->wire.host);
    k->port = call->wire.port;
    k->key = cm_xstrdup(call->wire.key);
    k->want_tls = call->wire.tls;
    k->next = c->conns;
    if (c->conns != NULL)
        c->conns->prev = k;
    c->conns = k;
    c->nconns++;
    uv_tcp_init(c->loop, &k->tcp);
    k->tcp.data = k;
    k->call = call;
    call->conn = k;

    k->resolve = cm_xmalloc(sizeof(*k->resolve));
    k->resolve->conn = k;
    snprintf(port, sizeof(port), "%d", k->port);
    int rc = uv_getaddrinfo(c->loop, &k->resolve->req, on_resolved, k->host, port, &hints);
    if (rc < 0) {
        free(k->resolve);
        k->resolve = NULL;
        cm__http_client_on_failure(k, CM_EUNAVAIL, false, "cannot resolve %s: %s", k->host,
                                   uv_strerror(rc));
    }
}

/* ---- closing ------------------------------------------------------------------ */

static void conn_free(cm__hc_conn_t *k)
{
    cm_http_client_t *c = k->client;
    if (k->prev != NULL)
        k->prev->next = k->next;
    else
        c->conns = k->next;
    if (k->next != NULL)
        k->next->prev = k->prev;
    if (k->addrs != NULL)
        uv_freeaddrinfo(k->addrs);
    cm__http_client_tls_free(k->tls);
    free(k->host);
    free(k->key);
    free(k);
    cm__http_client_conn_gone(c);
}

static void on_tcp_closed(uv_handle_t *h)
{
    cm__hc_conn_t *k = h->data;
    if (k->state == CM__HC_CLOSING) {
        conn_free(k);
        return;
    }
    /* A failed attempt: a fresh handle for the next address. */
    uv_tcp_init(k->client->loop, &k->tcp);
    k->tcp.data = k;
    connect_next(k);
}

void cm__http_client_conn_close(cm__hc_conn_t *k)
{
    if (k->state == CM__HC_CLOSING)
        return;
    k->state = CM__HC_CLOSING;
    k->call = NULL;
    if (k->resolve != NULL) {
        k->resolve->conn = NULL;
        uv_cancel((uv_req_t *)&k->resolve->req); /* fails if it is running: fine */
        k->resolve = NULL;
    }
    /* Between two connection attempts the handle is already closing; its
     * callback sees CLOSING and frees. */
    if (!uv_is_closing((uv_handle_t *)&k->tcp))
        uv_close((uv_handle_t *)&k->tcp, on_tcp_closed);
}
