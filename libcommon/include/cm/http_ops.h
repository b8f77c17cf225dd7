/*
 * http_ops.h - the operational routes every service exposes.
 *
 *   GET /_health  200 {"status":"ok"} while the process runs its loop
 *   GET /_ready   200 {"status":"ready"} when ready(ud) says so, else 503 with
 *                 the error envelope (code "not_ready", detail = the reason)
 *   GET /metrics  Prometheus text: the registry, the process_* series read
 *                 from /proc/self at each scrape, open connections and
 *                 service_ready{service} (what /_ready would answer)
 */
#ifndef CM_HTTP_OPS_H
#define CM_HTTP_OPS_H

#include <stdbool.h>

#include "cm/buf.h"
#include "cm/http_server.h"
#include "cm/metrics.h"

/* Returns true when ready; otherwise appends a short reason to why. */
typedef bool (*cm_ready_fn)(void *ud, cm_buf_t *why);

/* ready may be NULL (always ready). metrics must outlive the server. */
void cm_http_ops_routes(cm_http_server_t *srv, cm_metrics_t *metrics, cm_ready_fn ready, void *ud);

#endif
