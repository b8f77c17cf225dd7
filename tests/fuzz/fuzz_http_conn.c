/*
 * fuzz_http_conn.c - libFuzzer target for the HTTP server's connection
 * state machine, not only its parser: requests of every kind, pipelining,
 * upgrades, CONNECT, the HTTP/2 preface, header oddities, arbitrary splits
 * of the byte stream across reads, and handlers that answer synchronously,
 * from a timer, from an idle callback, or with a body large enough to push
 * back on the writer.
 *
 * The input is a script. Each step takes an opcode byte and its operands:
 *   0 GET/HEAD/OPTIONS/DELETE  path, version, connection kind, extras
 *   1 POST with Content-Length  path, length (body bytes from the input)
 *   2 POST chunked             chunk count, sizes, an extension now and then
 *   3 CONNECT host:443
 *   4 raw bytes                length, bytes (anything at all)
 *   5 split                    send what was built so far, then run the
 *                              server's loop 0-7 times before going on
 *   6 the HTTP/2 preface       "PRI * HTTP/2.0..."
 *   7 a header oddity          space before the colon, obs-fold, two or
 *                              huge Content-Lengths, a bad Transfer-Encoding
 * Bytes run out: the rest is sent, the write side shut, and the loop run
 * until the server closes. Seeds: tests/fuzz/corpus/http_conn/.
 *
 * The oracle: everything the server sends is a sequence of complete
 * HTTP/1.1 responses (fuzz_net.h); the X-Seq header, which the handlers set
 * in the order they run, strictly increases (responses in request order);
 * nothing follows a response that says "Connection: close" (so nothing is
 * answered after an Upgrade or a CONNECT); and every request handed to a
 * handler is answered before the next input starts (nothing leaks:
 * LeakSanitizer checks the rest).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cm/http_server.h"
#include "cm/log.h"
#include "fuzz_net.h"

#define BIG_BODY    (192 * 1024) /* above the socket buffer: the writer queues */
#define MAX_PENDING 64

static uv_loop_t *loop;
static int port;
static unsigned seq;
static char big[BIG_BODY];

/* ---- handlers ------------------------------------------------------------------ */

typedef struct {
    cm_http_req_t *reqs[MAX_PENDING];
    unsigned n;
} pending_t;

static pending_t later; /* answered from the timer or the idle handle */
static uv_timer_t timer;
static uv_idle_t idle;

static void stamp(cm_http_req_t *req)
{
    char v[16];
    snprintf(v, sizeof(v), "%u", ++seq);
    cm_http_res_header(req, "X-Seq", v);
}

static void answer(cm_http_req_t *req)
{
    cm_slice_t b = cm_http_req_body(req);
    cm_http_respond(req, 200, "application/octet-stream", b.p, b.len);
}

static void flush_later(void)
{
    unsigned n = later.n;
    later.n = 0;
    for (unsigned i = 0; i < n; i++)
        answer(later.reqs[i]);
}

static void on_timer(uv_timer_t *t)
{
    (void)t;
    flush_later();
}

static void on_idle(uv_idle_t *h)
{
    uv_idle_stop(h);
    flush_later();
}

static void on_sync(cm_http_req_t *req, void *ud)
{
    (void)ud;
    stamp(req);
    answer(req);
}

/* The sequence number is taken when the handler runs, the answer later. */
static void on_async(cm_http_req_t *req, void *ud)
{
    stamp(req);
    if (later.n == MAX_PENDING) { /* cannot happen: one request per connection */
        answer(req);
        return;
    }
    later.reqs[later.n++] = req;
    if (ud != NULL)
        uv_timer_start(&timer, on_timer, (uint64_t)(seq & 1), 0);
    else
        uv_idle_start(&idle, on_idle);
}

static void on_big(cm_http_req_t *req, void *ud)
{
    (void)ud;
    stamp(req);
    cm_http_respond(req, 200, "application/octet-stream", big, sizeof(big));
}

static void setup(void)
{
    cm_log_init("fuzz", CM_LOG_OFF);
    loop = uv_default_loop();
    uv_timer_init(loop, &timer);
    uv_idle_init(loop, &idle);
    memset(big, 'b', sizeof(big));
    cm_http_server_opts_t o;
    cm_http_server_opts_init(&o);
    o.max_body_bytes = 8192;
    o.max_header_bytes = 4096;
    o.max_headers = 32;
    o.max_url_bytes = 512;
    o.cors = true;
    cm_http_server_t *srv = cm_http_server_new(loop, &o);
    unsigned any = CM_HTTP_GET | CM_HTTP_HEAD | CM_HTTP_POST | CM_HTTP_DELETE;
    cm_http_server_route(srv, any, "/sync", on_sync, NULL);
    cm_http_server_route(srv, any, "/timer", on_async, (void *)1);
    cm_http_server_route(srv, any, "/idle", on_async, NULL);
    cm_http_server_route(srv, any, "/big", on_big, NULL);
    if (cm_http_server_listen(srv, "127.0.0.1", 0) != 0)
        abort();
    port = cm_http_server_port(srv);
}

/* ---- the script ------------------------------------------------------------------ */

typedef struct {
    const uint8_t *p, *end;
} cursor_t;

static unsigned take(cursor_t *c)
{
    return c->p < c->end ? *c->p++ : 0;
}

typedef struct {
    char *buf;
    size_t len, cap;
    size_t cuts[64]; /* offsets where a send ends */
    uint8_t spins[64];
    unsigned ncuts;
} stream_t;

static void put(stream_t *s, const void *p, size_t n)
{
    if (s->len + n > s->cap) {
        s->cap = (s->len + n) * 2 + 256;
        s->buf = realloc(s->buf, s->cap);
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

static void puts_(stream_t *s, const char *str)
{
    put(s, str, strlen(str));
}

static const char *const paths[] = {"/sync", "/timer", "/idle", "/big", "/nowhere", "/sync?q=1"};
static const char *const versions[] = {" HTTP/1.1", " HTTP/1.1", " HTTP/1.0", "",
                                       " HTTP/2.0", " HTTP/1.2", " HTTP/0.9", " HTTP/1.1"};
static const char *const methods[] = {"GET", "HEAD", "OPTIONS", "DELETE"};

static void request_line(stream_t *s, const char *method, cursor_t *c)
{
    unsigned b = take(c);
    puts_(s, method);
    puts_(s, " ");
    puts_(s, paths[b % 6]);
    puts_(s, versions[(b >> 3) % 8]);
    puts_(s, "\r\nHost: x\r\n");
}

/* Connection management headers, which decide what the server does next. */
static void connection(stream_t *s, cursor_t *c)
{
    switch (take(c) % 7) {
    case 0: break;
    case 1: puts_(s, "Connection: keep-alive\r\n"); break;
    case 2: puts_(s, "Connection: close\r\n"); break;
    case 3: puts_(s, "Connection: Upgrade\r\nUpgrade: websocket\r\n"); break;
    case 4:
        puts_(s, "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: "
                 "AAMAAABkAAQAoAAAAAIAAAAA\r\n");
        break;
    case 5: puts_(s, "Upgrade: websocket\r\n"); break;
    case 6: puts_(s, "Expect: 100-continue\r\n"); break;
    }
}

static void step(stream_t *s, cursor_t *c)
{
    char line[64];
    unsigned op = take(c) % 8, n;
    switch (op) {
    case 0:
        request_line(s, methods[take(c) % 4], c);
        connection(s, c);
        puts_(s, "\r\n");
        break;
    case 1:
        request_line(s, "POST", c);
        connection(s, c);
        n = take(c) * 37 % 10000;
        snprintf(line, sizeof(line), "Content-Length: %u\r\n\r\n", n);
        puts_(s, line);
        for (unsigned i = 0; i < n; i++)
            put(s, "x", 1);
        break;
    case 2:
        request_line(s, "POST", c);
        connection(s, c);
        puts_(s, "Transfer-Encoding: chunked\r\n\r\n");
        n = take(c) % 5;
        for (unsigned i = 0; i < n; i++) {
            unsigned size = take(c) % 200 + 1;
            snprintf(line, sizeof(line), i & 1 ? "%x;ext=1\r\n" : "%x\r\n", size);
            puts_(s, line);
            for (unsigned k = 0; k < size; k++)
                put(s, "c", 1);
            puts_(s, "\r\n");
        }
        puts_(s, "0\r\n\r\n");
        break;
    case 3: puts_(s, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"); break;
    case 4:
        n = take(c) % 64;
        for (unsigned i = 0; i < n && c->p < c->end; i++)
            put(s, c->p++, 1);
        break;
    case 5:
        if (s->ncuts < 64) {
            s->cuts[s->ncuts] = s->len;
            s->spins[s->ncuts++] = (uint8_t)(take(c) % 8);
        }
        break;
    case 6: puts_(s, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); break;
    case 7:
        request_line(s, "POST", c);
        switch (take(c) % 5) {
        case 0: puts_(s, "X-Odd : 1\r\n\r\n"); break;
        case 1: puts_(s, "X-Fold: a\r\n b\r\n\r\n"); break;
        case 2: puts_(s, "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab"); break;
        case 3: puts_(s, "Content-Length: 99999999999999999999\r\n\r\n"); break;
        case 4: puts_(s, "Transfer-Encoding: gzip, chunked, x\r\n\r\n0\r\n\r\n"); break;
        }
        break;
    }
}

/* ---- the exchange ------------------------------------------------------------------- */

static void drain(int fd, char **out, size_t *got, size_t *cap, bool *eof)
{
    for (;;) {
        if (*got == *cap)
            *out = realloc(*out, *cap *= 2);
        ssize_t r = recv(fd, *out + *got, *cap - *got, 0);
        if (r > 0) {
            *got += (size_t)r;
            continue;
        }
        if (r == 0 || errno != EAGAIN)
            *eof = true;
        return;
    }
}

/* Sends the stream in its segments, the loop run between them as the
 * script says; then shuts the write side and reads until the server
 * closes. NULL when the harness failed (not a finding). */
static char *exchange(const stream_t *s, size_t *n)
{
    int fd = fuzz_connect(loop, port);
    if (fd < 0)
        return NULL;
    size_t got = 0, cap = 1 << 16, from = 0;
    char *out = malloc(cap);
    bool eof = false;
    for (unsigned k = 0; k <= s->ncuts && !eof; k++) {
        size_t to = k < s->ncuts ? s->cuts[k] : s->len;
        unsigned spins = k < s->ncuts ? s->spins[k] : 1;
        for (int guard = 0; from < to && guard < 100000; guard++) {
            ssize_t w = send(fd, s->buf + from, to - from, MSG_NOSIGNAL);
            if (w > 0)
                from += (size_t)w;
            else if (w < 0 && errno != EAGAIN)
                from = s->len; /* the server closed on us: fine */
            uv_run(loop, UV_RUN_NOWAIT);
            drain(fd, &out, &got, &cap, &eof);
        }
        for (unsigned i = 0; i < spins; i++)
            uv_run(loop, UV_RUN_NOWAIT);
        drain(fd, &out, &got, &cap, &eof);
    }
    shutdown(fd, SHUT_WR);
    for (int spins = 0; !eof && spins < 200000; spins++) {
        uv_run(loop, UV_RUN_NOWAIT);
        drain(fd, &out, &got, &cap, &eof);
    }
    close(fd);
    /* Whatever a handler still holds is answered (into the void), and the
     * server finishes closing before the next input. */
    for (int i = 0; i < 64 && (later.n > 0 || i < 8); i++)
        uv_run(loop, UV_RUN_NOWAIT);
    if (later.n > 0)
        abort(); /* a request was never answered */
    if (!eof) {
        free(out);
        return NULL;
    }
    *n = got;
    return out;
}

/* ---- the oracle ------------------------------------------------------------------- */

static bool has_header(const char *head, size_t len, const char *name_value)
{
    return memmem(head, len, name_value, strlen(name_value)) != NULL;
}

static void check(const char *out, size_t n)
{
    fuzz_check_responses(out, n);
    size_t i = 0;
    unsigned last_seq = 0;
    while (i < n) {
        size_t start = i;
        const char *end = memmem(out + i, n - i, "\r\n\r\n", 4);
        size_t head_end = (size_t)(end - out) + 4;
        const char *head = out + i;
        size_t hlen = head_end - i;
        const char *xs = memmem(head, hlen, "\r\nX-Seq: ", 9);
        if (xs != NULL) {
            unsigned v = (unsigned)strtoul(xs + 9, NULL, 10);
            if (v <= last_seq)
                abort(); /* out of order, or answered twice */
            last_seq = v;
        }
        const char *cl = memmem(head, hlen, "Content-Length: ", 16);
        size_t len = cl ? strtoul(cl + 16, NULL, 10) : 0;
        if (!fuzz_starts_response(out, n, head_end + len) && fuzz_starts_response(out, n, head_end))
            len = 0; /* a HEAD response */
        i = head_end + len;
        bool interim = out[start + 9] == '1'; /* 100 Continue */
        if (!interim && has_header(head, hlen, "\r\nConnection: close\r\n") && i != n)
            abort(); /* something was answered after the connection's last response */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (loop == NULL)
        setup();
    cursor_t c = {data, data + size};
    stream_t s = {0};
    while (c.p < c.end && s.len < (1u << 20))
        step(&s, &c);
    size_t n;
    char *out = exchange(&s, &n);
    if (out != NULL)
        check(out, n);
    free(out);
    free(s.buf);
    return 0;
}
