/*
 * http_server.c - the listening socket, routes, connection list and drain.
 *
 * The server owns its connections (a doubly linked list, so a closing
 * connection unlinks itself in O(1)) and two handles: the listener and the
 * drain timer. Draining closes the listener, closes idle connections at once
 * and lets busy ones finish; each connection re-checks the drain flag when
 * it becomes idle and closes itself. When the last one is gone, done() runs.
 */
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/log.h"
#include "http_internal.h"

void cm_http_server_opts_init(cm_http_server_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->max_url_bytes = 8 * 1024;
    o->max_header_bytes = 32 * 1024;
    o->max_headers = 100;
    o->max_body_bytes = 1024 * 1024;
    o->header_timeout_ms = 10000;
    o->body_timeout_ms = 10000;
    o->request_timeout_ms = 60000;
    o->idle_timeout_ms = 60000;
    o->write_timeout_ms = 30000;
    o->max_write_queue = 1024 * 1024;
    o->max_connections = 10000;
    o->cors = false;
    o->cors_methods = "GET, POST, OPTIONS";
    o->service = "http";
    o->access_log_sample = 1.0;
}

cm_http_server_t *cm_http_server_new(uv_loop_t *loop, const cm_http_server_opts_t *opts)
{
    cm_http_server_t *srv = cm_xcalloc(1, sizeof(*srv));
    srv->loop = loop;
    if (opts)
        srv->opts = *opts;
    else
        cm_http_server_opts_init(&srv->opts);
    srv->service = cm_xstrdup(srv->opts.service ? srv->opts.service : "http");
    srv->cors_methods =
        cm_xstrdup(srv->opts.cors_methods ? srv->opts.cors_methods : "GET, POST, OPTIONS");
    srv->opts.service = srv->service;
    srv->opts.cors_methods = srv->cors_methods;
    cm__conn_settings_init(&srv->settings);
    uv_tcp_init(loop, &srv->listener);
    uv_timer_init(loop, &srv->drain_timer);
    srv->listener.data = srv;
    srv->drain_timer.data = srv;
    srv->unmatched.pattern = cm_xstrdup("unmatched");
    return srv;
}

static void make_latency(cm_http_server_t *srv, cm__route_t *r)
{
    if (srv->opts.metrics == NULL)
        return;
    char labels[512];
    snprintf(labels, sizeof(labels), "service=\"%s\",route=\"%s\"", srv->service, r->pattern);
    r->latency = cm_metrics_histogram(srv->opts.metrics, "http_request_duration_seconds",
                                      "Time from the first request byte to the response", labels,
                                      cm_metrics_latency_buckets, cm_metrics_latency_nbuckets);
}

void cm_http_server_route(cm_http_server_t *srv, unsigned methods, const char *pattern,
                          cm_http_handler_t handler, void *ud)
{
    srv->routes = cm_xrealloc(srv->routes, (srv->nroutes + 1) * sizeof(*srv->routes));
    cm__route_t *r = &srv->routes[srv->nroutes++];
    memset(r, 0, sizeof(*r));
    r->methods = methods;
    r->handler = handler;
    r->ud = ud;
    cm__route_compile(r, pattern);
    make_latency(srv, r);
}

static void on_connection(uv_stream_t *s, int status)
{
    cm_http_server_t *srv = s->data;
    if (status < 0 || srv->draining)
        return;
    cm__conn_accept(srv);
}

int cm_http_server_listen(cm_http_server_t *srv, const char *host, int port)
{
    struct sockaddr_storage ss;
    int rc;
    if (strchr(host, ':'))
        rc = uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss);
    else
        rc = uv_ip4_addr(host, port, (struct sockaddr_in *)&ss);
    if (rc == 0)
        rc = uv_tcp_bind(&srv->listener, (const struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&srv->listener, 1024, on_connection);
    if (rc != 0) {
        cm_log(CM_LOG_ERROR, NULL, "cannot listen on %s:%d: %s", host, port, uv_strerror(rc));
        return CM_EIO;
    }
    int len = sizeof(ss);
    uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&ss, &len);
    srv->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                               : ((struct sockaddr_in *)&ss)->sin_port);
    srv->listening = true;
    return CM_OK;
}

int cm_http_server_port(const cm_http_server_t *srv)
{
    return srv->port;
}
size_t cm_http_server_connections(const cm_http_server_t *srv)
{
    return srv->nconns;
}

/* ---- drain -------------------------------------------------------------------- */

static void free_now(cm_http_server_t *srv)
{
    for (size_t i = 0; i < srv->nroutes; i++)
        cm__route_free(&srv->routes[i]);
    free(srv->routes);
    free(srv->unmatched.pattern);
    free(srv->service);
    free(srv->cors_methods);
    free(srv);
}

/* Close callbacks run in no promised order: free only when all have run. */
static bool maybe_free(cm_http_server_t *srv)
{
    if (!srv->freeing || !srv->drain_timer_closed || !srv->listener_closed || srv->nconns > 0)
        return false;
    free_now(srv);
    return true;
}

static void maybe_done(cm_http_server_t *srv)
{
    if (maybe_free(srv))
        return;
    if (!srv->draining || srv->done_called || srv->nconns > 0 || !srv->listener_closed)
        return;
    srv->done_called = true;
    uv_timer_stop(&srv->drain_timer);
    if (srv->drain_done)
        srv->drain_done(srv->drain_ud);
}

void cm__server_conn_closed(cm_http_server_t *srv, cm__conn_t *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->nconns--;
    maybe_done(srv);
}

static void listener_closed(uv_handle_t *h)
{
    cm_http_server_t *srv = h->data;
    srv->listener_closed = true;
    maybe_done(srv);
}

static void drain_timeout(uv_timer_t *t)
{
    cm_http_server_t *srv = t->data;
    cm_log(CM_LOG_WARN, NULL, "drain timeout: closing %zu connection(s)", srv->nconns);
    for (cm__conn_t *c = srv->conns; c; c = c->next)
        cm__conn_close(c);
}

void cm_http_server_drain(cm_http_server_t *srv, uint64_t timeout_ms, void (*done)(void *ud),
                          void *ud)
{
    if (srv->draining)
        return;
    srv->draining = true;
    srv->drain_done = done;
    srv->drain_ud = ud;
    uv_close((uv_handle_t *)&srv->listener, listener_closed);
    for (cm__conn_t *c = srv->conns; c; c = c->next)
        if (cm__conn_is_idle(c))
            cm__conn_close(c);
    uv_timer_start(&srv->drain_timer, drain_timeout, timeout_ms, 0);
}

static void drain_timer_closed(uv_handle_t *h)
{
    cm_http_server_t *srv = h->data;
    srv->drain_timer_closed = true;
    maybe_free(srv);
}

void cm_http_server_free(cm_http_server_t *srv)
{
    srv->freeing = true;
    srv->done_called = true; /* freeing is not draining: no done() */
    if (!srv->draining) {    /* never drained: close what is left right away */
        srv->draining = true;
        uv_close((uv_handle_t *)&srv->listener, listener_closed);
        for (cm__conn_t *c = srv->conns; c; c = c->next)
            cm__conn_close(c);
    }
    uv_close((uv_handle_t *)&srv->drain_timer, drain_timer_closed);
}
