/* http_ops.c - /_health, /_ready and /metrics (see http_ops.h). */
#include "cm/http_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cm/alloc.h"
#include "cm/api_error.h"
#include "http_internal.h"

typedef struct {
    cm_metrics_t *metrics;
    cm_ready_fn ready;
    void *ud;
    cm_gauge_t *conns;
    cm_gauge_t *ready_gauge;
} ops_t;

static void on_health(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_http_respond(req, 200, "application/json", "{\"status\":\"ok\"}", 15);
}

static void on_ready(cm_http_req_t *req, void *ud)
{
    ops_t *ops = ud;
    cm_buf_t why = CM_BUF_INIT;
    if (ops->ready == NULL || ops->ready(ops->ud, &why)) {
        cm_buf_free(&why);
        cm_http_respond(req, 200, "application/json", "{\"status\":\"ready\"}", 18);
        return;
    }
    cm_http_respond_error(req, 503, CM_ERR_SERVER, "not_ready", cm_buf_cstr(&why), NULL);
    cm_buf_free(&why);
}

static void on_metrics(cm_http_req_t *req, void *ud)
{
    ops_t *ops = ud;
    cm_metrics_process_update(ops->metrics);
    cm_buf_t why = CM_BUF_INIT;
    cm_gauge_set(ops->ready_gauge, ops->ready == NULL || ops->ready(ops->ud, &why) ? 1 : 0);
    cm_buf_free(&why);
    cm_gauge_set(ops->conns, (double)cm_http_server_connections(cm_http_req_server(req)));
    cm_buf_t out = CM_BUF_INIT;
    cm_metrics_render(ops->metrics, &out);
    cm_http_respond_buf(req, 200, "text/plain; version=0.0.4; charset=utf-8", &out);
}

void cm_http_ops_routes(cm_http_server_t *srv, cm_metrics_t *metrics, cm_ready_fn ready, void *ud)
{
    /* Lives as long as the process: the routes point at it. */
    static ops_t ops;
    ops.metrics = metrics;
    ops.ready = ready;
    ops.ud = ud;
    cm_metrics_process_update(metrics); /* the process_* families exist before a scrape */
    ops.conns = cm_metrics_gauge(metrics, "http_open_connections", "Open HTTP connections", NULL);
    /* What /_ready says, as a series: alerts see a writer cut off from its
     * queue or an api without its store without probing each pod. */
    char labels[96];
    snprintf(labels, sizeof(labels), "service=\"%.64s\"", srv->service);
    ops.ready_gauge =
        cm_metrics_gauge(metrics, "service_ready",
                         "1 while /_ready answers 200, else 0 (at the last scrape)", labels);
    cm_http_server_route(srv, CM_HTTP_GET, "/_health", on_health, &ops);
    cm_http_server_route(srv, CM_HTTP_GET, "/_ready", on_ready, &ops);
    cm_http_server_route(srv, CM_HTTP_GET, "/metrics", on_metrics, &ops);
}
