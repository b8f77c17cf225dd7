/*
 * fuzz_http.c - libFuzzer target for the HTTP server's request handling:
 * llhttp glue, header accumulation, limits, pipelining, chunked bodies,
 * Expect, the router and the response writer.
 *
 * The input is written as-is to a real loopback connection to a server in
 * this process, the write side is shut down, and the loop runs until the
 * server has closed the connection. Every byte the server sends back must
 * be a sequence of well-formed HTTP/1.1 responses.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "cm/http_server.h"
#include "cm/log.h"

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

/* True when a response starts at i, or i is the end. */
static bool starts_response(const char *out, size_t n, size_t i)
{
    return i == n || (i < n && n - i >= 9 && memcmp(out + i, "HTTP/1.1 ", 9) == 0);
}

/* Checks that out[0..n) is a sequence of complete HTTP/1.1 responses
 * (100 Continue interim responses included). A HEAD response announces a
 * length but carries no body: accepted when the next response (or the end)
 * follows the head directly. */
static void check_responses(const char *out, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (n - i < 12 || memcmp(out + i, "HTTP/1.1 ", 9) != 0)
            abort();
        const char *end = memmem(out + i, n - i, "\r\n\r\n", 4);
        if (end == NULL)
            abort();
        size_t head_end = (size_t)(end - out) + 4;
        const char *cl = memmem(out + i, head_end - i, "Content-Length: ", 16);
        size_t len = cl ? strtoul(cl + 16, NULL, 10) : 0;
        if (!starts_response(out, n, head_end + len) && starts_response(out, n, head_end))
            len = 0; /* a HEAD response */
        if (head_end + len > n)
            abort();
        i = head_end + len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (loop == NULL)
        setup();
    /* Each input is a new connection. Spreading the client side over
     * 127.0.0.2-251 keeps TIME_WAIT from exhausting the port space. */
    static unsigned n_conn;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in src = {.sin_family = AF_INET};
    src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1 + (n_conn++ % 250));
    bind(fd, (struct sockaddr *)&src, sizeof(src));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* Hundreds of thousands of short connections can exhaust the ephemeral
     * ports (TIME_WAIT): let the loop run and retry, and skip the input if
     * the kernel still has no port. That is the harness, not the server. */
    int tries = 0;
    while (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        if (++tries == 50) {
            close(fd);
            return 0;
        }
        uv_run(loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    size_t sent = 0, got = 0, cap = 1 << 16;
    char *out = malloc(cap);
    bool shut = false, eof = false;
    for (int spins = 0; !eof && spins < 200000; spins++) {
        if (sent < size) {
            ssize_t w = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (w > 0)
                sent += (size_t)w;
            else if (w < 0 && errno != EAGAIN)
                sent = size; /* the server closed on us: fine */
        } else if (!shut) {
            shutdown(fd, SHUT_WR);
            shut = true;
        }
        uv_run(loop, UV_RUN_NOWAIT);
        for (;;) {
            if (got == cap)
                out = realloc(out, cap *= 2);
            ssize_t r = recv(fd, out + got, cap - got, 0);
            if (r > 0) {
                got += (size_t)r;
                continue;
            }
            if (r == 0 || (r < 0 && errno != EAGAIN))
                eof = true;
            break;
        }
    }
    close(fd);
    /* Let the server finish closing its side before the next input. */
    for (int i = 0; i < 8; i++)
        uv_run(loop, UV_RUN_NOWAIT);
    if (eof)
        check_responses(out, got);
    free(out);
    return 0;
}
