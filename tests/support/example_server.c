/*
 * example_server.c - a tiny server on libcommon's HTTP stack, for tests.
 *
 * The integration tests in tests/integration/http_server.test.mjs drive it
 * over real sockets to prove pipelining, chunked bodies, limits, timeouts
 * and the SIGTERM drain. It prints one line {"listening":PORT} on stdout
 * once it accepts connections (PORT=0 picks a free port).
 *
 * Routes:
 *   POST /echo            the body back, with X-Body-Length
 *   GET  /hello           "hello"
 *   GET  /slow?ms=N       answers after N ms (a handler that goes async)
 *   GET  /items/{id}      {"id":"<id>"}
 *   GET  /items/special   {"special":true}   (literal beats parameter)
 *   /_health /_ready /metrics
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/config.h"
#include "cm/http_ops.h"
#include "cm/http_server.h"
#include "cm/log.h"
#include "cm/metrics.h"
#include "cm/service.h"
#include "cm/signals.h"

typedef struct {
    char *host;
    long long port;
    size_t max_body;
    size_t max_header;
    long long header_timeout;
    long long body_timeout;
    long long idle_timeout;
    long long write_timeout;
    bool cors;
    char *log_level;
} config_t;

static const cm_cfg_key_t CONFIG[] = {
    {"HOST", CM_CFG_STR, offsetof(config_t, host), "127.0.0.1", 0, 0, "address to bind", 0},
    {"PORT", CM_CFG_INT, offsetof(config_t, port), "0", 0, 65535, "port (0 = any free)", 0},
    {"MAX_BODY", CM_CFG_SIZE, offsetof(config_t, max_body), "64KiB", 1, 1LL << 32,
     "largest request body", 0},
    {"MAX_HEADER", CM_CFG_SIZE, offsetof(config_t, max_header), "8KiB", 256, 1 << 20,
     "largest header section", 0},
    {"HEADER_TIMEOUT", CM_CFG_DURATION, offsetof(config_t, header_timeout), "1s", 1, 3600000,
     "time allowed for the header section", 0},
    {"BODY_TIMEOUT", CM_CFG_DURATION, offsetof(config_t, body_timeout), "1s", 1, 3600000,
     "longest pause inside a body", 0},
    {"IDLE_TIMEOUT", CM_CFG_DURATION, offsetof(config_t, idle_timeout), "2s", 1, 3600000,
     "keep-alive idle time", 0},
    {"WRITE_TIMEOUT", CM_CFG_DURATION, offsetof(config_t, write_timeout), "30s", 1, 3600000,
     "longest wait for a client to take a response", 0},
    {"CORS", CM_CFG_BOOL, offsetof(config_t, cors), "true", 0, 0, "permissive CORS", 0},
    {"LOG_LEVEL", CM_CFG_STR, offsetof(config_t, log_level), "warn", 0, 0, "log level", 0},
};

typedef struct {
    uv_timer_t timer;
    cm_http_req_t *req;
} slow_t;

static uv_loop_t *loop;
static cm_http_server_t *server;
static cm_signals_t *signals;

static void on_echo(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_slice_t body = cm_http_req_body(req);
    char len[32];
    snprintf(len, sizeof(len), "%zu", body.len);
    cm_http_res_header(req, "X-Body-Length", len);
    cm_http_respond(req, 200, "application/octet-stream", body.p, body.len);
}

/* POST /redirect: the body becomes the Location header, as an OAuth server
 * writes a client's redirect URI; a value with CR or LF must be refused. */
static void on_redirect(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_slice_t body = cm_http_req_body(req);
    char *loc = cm_xmemdup(body.p ? body.p : "", body.len);
    cm_http_res_header(req, "Location", loc);
    free(loc);
    cm_http_respond(req, 302, NULL, "", 0);
}

/* GET /parts/{size}: "<", size bytes of a pattern, ">" in three parts that
 * are freed as soon as the call returns: a response the socket does not take
 * at once (a big one to a slow reader) must have copied what it still needs. */
static void on_parts(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_slice_t p = cm_http_req_param(req, "size");
    char num[24];
    snprintf(num, sizeof(num), "%.*s", (int)(p.len < 20 ? p.len : 20), p.p);
    size_t n = strtoull(num, NULL, 10);
    if (n > (64u << 20)) {
        cm_http_respond_error(req, 400, NULL, "too_big", "at most 64 MiB", "size");
        return;
    }
    char *open = cm_xstrdup("<"), *close = cm_xstrdup(">"), *mid = cm_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        mid[i] = (char)('a' + i % 26);
    cm_slice_t parts[] = {{open, 1}, {mid, n}, {close, 1}};
    cm_http_respond_parts(req, 200, "text/plain", parts, 3);
    free(open);
    free(mid);
    free(close);
}

static void on_hello(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_http_respond(req, 200, "text/plain", "hello", 5);
}

static void slow_closed(uv_handle_t *h)
{
    free(h->data);
}

static void slow_fire(uv_timer_t *t)
{
    slow_t *s = t->data;
    char body[64];
    int n = snprintf(body, sizeof(body), "{\"slow\":true}");
    cm_http_respond(s->req, 200, "application/json", body, (size_t)n);
    uv_close((uv_handle_t *)&s->timer, slow_closed);
}

static void on_slow(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_slice_t q = cm_http_req_query(req);
    long ms = 100;
    char num[16];
    if (q.len > 3 && q.len - 3 < sizeof(num) && memcmp(q.p, "ms=", 3) == 0) {
        /* The query is a slice, not a C string: copy before strtol. */
        memcpy(num, q.p + 3, q.len - 3);
        num[q.len - 3] = '\0';
        ms = strtol(num, NULL, 10);
    }
    slow_t *s = cm_xcalloc(1, sizeof(*s));
    s->req = req;
    uv_timer_init(loop, &s->timer);
    s->timer.data = s;
    uv_timer_start(&s->timer, slow_fire, (uint64_t)(ms < 0 ? 0 : ms), 0);
}

static void on_item(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_slice_t id = cm_http_req_param(req, "id");
    cm_buf_t out = CM_BUF_INIT;
    cm_buf_appendf(&out, "{\"id\":\"%.*s\"}", (int)id.len, id.p);
    cm_http_respond_json(req, 200, &out);
}

static void on_special(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_http_respond(req, 200, "application/json", "{\"special\":true}", 16);
}

static void drained(void *ud)
{
    (void)ud;
    cm_http_server_free(server);
    cm_signals_close(signals);
}

static void on_term(void *ud)
{
    (void)ud;
    cm_http_server_drain(server, 5000, drained, NULL);
}

int main(int argc, char **argv)
{
    config_t cfg = {0};
    bool printed;
    if (cm_service_config("example", argc, argv, CONFIG, CM_ARRAY_LEN(CONFIG), &cfg, NULL,
                          &printed) != 0 ||
        (!printed && cm_service_init("example", cfg.log_level) != 0))
        return 2;
    if (printed)
        return 0;
    int rc;

    loop = uv_default_loop();
    cm_metrics_t *metrics = cm_metrics_new();
    cm_http_server_opts_t opts;
    cm_http_server_opts_init(&opts);
    opts.max_body_bytes = cfg.max_body;
    opts.max_header_bytes = cfg.max_header;
    opts.header_timeout_ms = (uint64_t)cfg.header_timeout;
    opts.body_timeout_ms = (uint64_t)cfg.body_timeout;
    opts.idle_timeout_ms = (uint64_t)cfg.idle_timeout;
    opts.write_timeout_ms = (uint64_t)cfg.write_timeout;
    opts.cors = cfg.cors;
    opts.service = "example";
    opts.metrics = metrics;
    server = cm_http_server_new(loop, &opts);
    cm_http_server_route(server, CM_HTTP_POST, "/echo", on_echo, NULL);
    cm_http_server_route(server, CM_HTTP_GET, "/hello", on_hello, NULL);
    cm_http_server_route(server, CM_HTTP_GET, "/parts/{size}", on_parts, NULL);
    cm_http_server_route(server, CM_HTTP_POST, "/redirect", on_redirect, NULL);
    cm_http_server_route(server, CM_HTTP_GET, "/slow", on_slow, NULL);
    cm_http_server_route(server, CM_HTTP_GET, "/items/{id}", on_item, NULL);
    cm_http_server_route(server, CM_HTTP_GET, "/items/special", on_special, NULL);
    cm_http_ops_routes(server, metrics, NULL, NULL);
    if (cm_http_server_listen(server, cfg.host, (int)cfg.port) != 0)
        return 1;
    signals = cm_signals_start(loop, on_term, NULL);
    cm_service_announce(cfg.host, cm_http_server_port(server));
    uv_run(loop, UV_RUN_DEFAULT);
    rc = cm_service_finish(loop, CONFIG, CM_ARRAY_LEN(CONFIG), &cfg);
    cm_metrics_free(metrics);
    return rc;
}
