/*
 * fuzz_http.c - libFuzzer target for the HTTP server's request handling:
 * llhttp glue, header accumulation, limits, pipelining, chunked bodies,
 * Expect, the router and the response writer.
 *
 * The input is written as-is to a real loopback connection to a server in
 * this process (fuzz_net.h), and every byte the server sends back must be
 * a sequence of well-formed HTTP/1.1 responses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <uv.h>

#include "cm/http_server.h"
#include "cm/log.h"
#include "fuzz_net.h"

static uv_loop_t *loop;
static int port;

static void on_echo(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_slice_t b = cm_http_req_body(req);
    cm_http_res_header(req, "X-Path-Len", "1");
    cm_http_respond(req, 200, "application/octet-stream", b.p, b.len);
}

static void on_param(cm_http_req_t *req, void *ud)
{
    (void)ud;
    cm_slice_t id = cm_http_req_param(req, "id");
    cm_slice_t q = cm_http_req_query(req);
    cm_slice_t h = cm_http_req_header(req, "X-Test");
    (void)cm_http_req_id(req);
    cm_http_respond(req, 200, "text/plain", id.p ? id.p : "", id.len + 0 * (q.len + h.len));
}

static void setup(void)
{
    cm_log_init("fuzz", CM_LOG_OFF);
    loop = uv_default_loop();
    cm_http_server_opts_t o;
    cm_http_server_opts_init(&o);
    o.max_body_bytes = 4096;
    o.max_header_bytes = 2048;
    o.max_headers = 20;
    o.max_url_bytes = 512;
    o.cors = true;
    cm_http_server_t *srv = cm_http_server_new(loop, &o);
    cm_http_server_route(srv, CM_HTTP_POST | CM_HTTP_PUT, "/echo", on_echo, NULL);
    cm_http_server_route(srv, CM_HTTP_GET, "/items/{id}", on_param, NULL);
    if (cm_http_server_listen(srv, "127.0.0.1", 0) != 0)
        abort();
    port = cm_http_server_port(srv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (loop == NULL)
        setup();
    size_t n;
    char *out = fuzz_exchange(loop, port, data, size, &n);
    if (out != NULL)
        fuzz_check_responses(out, n);
    free(out);
    return 0;
}
