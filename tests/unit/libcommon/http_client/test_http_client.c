/*
 * test_http_client.c - cm_http_client against servers inside the test.
 *
 *   srv_*   a raw HTTP/1.1 server on the test's own loop (127.0.0.1, port 0):
 *           each path is a behaviour (chunked, echo, close, hang, close a
 *           reused connection...); it counts connections and requests.
 *   tsrv_*  a TLS server on a thread (blocking mbedTLS, one connection at a
 *           time) with a throwaway CA and a certificate for "localhost"
 *           made by the openssl CLI in a temporary directory.
 *
 * Each test owns a fresh loop; the teardown closes the client and the
 * server and checks that uv_run() then returns 0 and uv_loop_close()
 * succeeds: nothing is left behind. alarm() guards against a hang.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>

#include "cm/buf.h"
#include "cm/err.h"
#include "cm/http_client.h"
#include "cm/log.h"

/* ==== the raw server =================================================== */

typedef struct srv srv_t;

typedef struct sconn {
    uv_tcp_t tcp;
    srv_t *srv;
    struct sconn *next;
    cm_buf_t in;
    unsigned requests;
    bool closing;
} sconn_t;

struct srv {
    uv_loop_t *loop;
    uv_tcp_t listener;
    int port;
    unsigned conns, requests;
    sconn_t *list;
};

typedef struct {
    uv_write_t req;
    char *data;
    bool close_after;
} swrite_t;

static void sconn_closed(uv_handle_t *h)
{
    sconn_t *s = h->data;
    for (sconn_t **p = &s->srv->list; *p != NULL; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    cm_buf_free(&s->in);
    free(s);
}

static void sconn_close(sconn_t *s)
{
    if (!s->closing) {
        s->closing = true;
        uv_close((uv_handle_t *)&s->tcp, sconn_closed);
    }
}

static void on_swritten(uv_write_t *w, int status)
{
    swrite_t *sw = (swrite_t *)w;
    (void)status;
    if (sw->close_after)
        sconn_close(w->handle->data);
    free(sw->data);
    free(sw);
}

static void srv_send(sconn_t *s, cm_buf_t *out, bool close_after)
{
    swrite_t *sw = calloc(1, sizeof(*sw));
    size_t n;
    sw->data = cm_buf_detach(out, &n);
    sw->close_after = close_after;
    uv_buf_t b = uv_buf_init(sw->data, (unsigned)n);
    if (uv_write(&sw->req, (uv_stream_t *)&s->tcp, &b, 1, on_swritten) != 0) {
        free(sw->data);
        free(sw);
        sconn_close(s);
    }
}

static void reply(cm_buf_t *out, const char *status, const char *headers, const char *body,
                  size_t n)
{
    cm_buf_appendf(out, "HTTP/1.1 %s\r\nContent-Length: %zu\r\n%s\r\n", status, n, headers);
    cm_buf_append(out, body, n);
}

static void chunked(cm_buf_t *out, size_t total, size_t piece)
{
    cm_buf_append_cstr(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (size_t done = 0; done < total; done += piece) {
        cm_buf_appendf(out, "%zx\r\n", piece);
        for (size_t i = 0; i < piece; i++)
            cm_buf_putc(out, 'y');
        cm_buf_append_cstr(out, "\r\n");
    }
    cm_buf_append_cstr(out, "0\r\n\r\n");
}

/* One behaviour per path. */
static void respond(sconn_t *s, const char *method, const char *path, const char *head,
                    const char *body, size_t blen)
{
    cm_buf_t out = CM_BUF_INIT;
    char big[5000];
    bool close_after = false;

    if (strcmp(path, "/cl") == 0) {
        reply(&out, "200 OK", "X-Test: yes\r\n", "hello", 5);
    } else if (strcmp(path, "/chunked") == 0) {
        cm_buf_append_cstr(&out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n");
    } else if (strcmp(path, "/echo") == 0) {
        char h[64];
        snprintf(h, sizeof(h), "X-Method: %s\r\n", method);
        reply(&out, "200 OK", h, body, blen);
    } else if (strcmp(path, "/head") == 0) {
        reply(&out, "200 OK", "", head, strlen(head));
    } else if (strcmp(path, "/close") == 0) {
        reply(&out, "200 OK", "Connection: close\r\n", "bye", 3);
        close_after = true;
    } else if (strcmp(path, "/redirect") == 0) {
        reply(&out, "302 Found", "Location: /cl\r\n", "", 0);
    } else if (strcmp(path, "/big") == 0) {
        memset(big, 'x', sizeof(big));
        reply(&out, "200 OK", "", big, sizeof(big));
    } else if (strcmp(path, "/bigchunked") == 0) {
        chunked(&out, 5000, 500);
    } else if (strcmp(path, "/hang") == 0) {
        return;                               /* never answers */
    } else if (strcmp(path, "/stall") == 0) { /* a tenth of the body, then nothing */
        cm_buf_append_cstr(&out, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
    } else if (strcmp(path, "/once") == 0 && s->requests > 1) {
        sconn_close(s); /* as if it had closed the idle connection just before */
        return;
    } else if (strcmp(path, "/once") == 0 || strcmp(path, "/idleclose") == 0) {
        reply(&out, "200 OK", "", "ok", 2);
        close_after = path[1] == 'i'; /* /idleclose: kept alive by the headers, then closed */
    } else if (strcmp(path, "/eof") == 0) {
        cm_buf_append_cstr(&out, "HTTP/1.1 200 OK\r\n\r\nuntil close");
        close_after = true;
    } else if (strcmp(path, "/interim") == 0) {
        cm_buf_append_cstr(&out, "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n");
        reply(&out, "200 OK", "", "ok", 2);
    } else if (strcmp(path, "/garbage") == 0) {
        cm_buf_append_cstr(&out, "NOT HTTP AT ALL\r\n\r\n");
    } else {
        reply(&out, "404 Not Found", "", "", 0);
    }
    if (strcmp(method, "HEAD") == 0) /* the head only, as a server answers a HEAD */
        out.len = (size_t)((char *)memmem(out.p, out.len, "\r\n\r\n", 4) - out.p) + 4;
    srv_send(s, &out, close_after);
}

/* Takes one complete request off the input, if there is one. */
static bool srv_one(sconn_t *s)
{
    const char *end = s->in.len ? memmem(s->in.p, s->in.len, "\r\n\r\n", 4) : NULL;
    if (end == NULL)
        return false;
    size_t head_len = (size_t)(end - s->in.p) + 4, cl = 0;
    char *head = strndup(s->in.p, head_len);
    const char *h = strcasestr(head, "\r\ncontent-length:");
    if (h != NULL)
        cl = strtoul(h + 17, NULL, 10);
    if (s->in.len < head_len + cl) {
        free(head);
        return false;
    }
    char method[16] = "", path[128] = "";
    sscanf(head, "%15s %127s", method, path);
    path[strcspn(path, "?")] = '\0';
    s->requests++;
    s->srv->requests++;
    respond(s, method, path, head, s->in.p + head_len, cl);
    cm_buf_consume(&s->in, head_len + cl);
    free(head);
    return true;
}

static void srv_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    sconn_t *s = h->data;
    *buf = uv_buf_init(cm_buf_reserve(&s->in, suggested), (unsigned)suggested);
}

static void srv_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    sconn_t *s = st->data;
    (void)buf;
    if (n < 0) {
        sconn_close(s);
        return;
    }
    s->in.len += (size_t)n;
    while (!s->closing && srv_one(s))
        ;
}

static void srv_accept(uv_stream_t *l, int status)
{
    srv_t *srv = l->data;
    if (status < 0)
        return;
    sconn_t *s = calloc(1, sizeof(*s));
    s->srv = srv;
    uv_tcp_init(srv->loop, &s->tcp);
    s->tcp.data = s;
    s->next = srv->list;
    srv->list = s;
    if (uv_accept(l, (uv_stream_t *)&s->tcp) == 0) {
        srv->conns++;
        uv_read_start((uv_stream_t *)&s->tcp, srv_alloc, srv_read);
    } else {
        sconn_close(s);
    }
}

static void srv_start(srv_t *srv, uv_loop_t *loop)
{
    struct sockaddr_in a;
    struct sockaddr_storage got;
    int len = sizeof(got);
    *srv = (srv_t){.loop = loop};
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_init(loop, &srv->listener);
    srv->listener.data = srv;
    assert_int_equal(uv_tcp_bind(&srv->listener, (struct sockaddr *)&a, 0), 0);
    assert_int_equal(uv_listen((uv_stream_t *)&srv->listener, 64, srv_accept), 0);
    uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&got, &len);
    srv->port = ntohs(((struct sockaddr_in *)&got)->sin_port);
}

static void srv_stop(srv_t *srv)
{
    uv_close((uv_handle_t *)&srv->listener, NULL);
    for (sconn_t *s = srv->list; s != NULL; s = s->next)
        sconn_close(s);
}

/* ==== the TLS server ===================================================== */

typedef struct {
    bool ok; /* certificates made and the thread running */
    char dir[64];
    char ca[96]; /* the CA that signed the server's certificate */
    int lfd, port;
    pthread_t thread;
    atomic_bool stop;
    atomic_uint conns, requests;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_x509_crt cert;
    mbedtls_pk_context key;
    mbedtls_ssl_config conf;
} tsrv_t;

static tsrv_t tsrv;

static void tsrv_serve(tsrv_t *t, int fd)
{
    mbedtls_net_context net = {fd};
    mbedtls_ssl_context ssl;
    char buf[4096];
    size_t have = 0;
    static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecure";

    mbedtls_ssl_init(&ssl);
    if (mbedtls_ssl_setup(&ssl, &t->conf) != 0)
        goto out;
    mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, mbedtls_net_recv, NULL);
    if (mbedtls_ssl_handshake(&ssl) != 0)
        goto out;
    for (;;) {
        int n = mbedtls_ssl_read(&ssl, (unsigned char *)buf + have, sizeof(buf) - have - 1);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end == NULL)
            continue;
        atomic_fetch_add(&t->requests, 1);
        have -= (size_t)(end + 4 - buf);
        memmove(buf, end + 4, have);
        if (mbedtls_ssl_write(&ssl, (const unsigned char *)answer, sizeof(answer) - 1) < 0)
            break;
    }
out:
    mbedtls_ssl_free(&ssl);
}

static void *tsrv_main(void *arg)
{
    tsrv_t *t = arg;
    for (;;) {
        int fd = accept(t->lfd, NULL, NULL);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0 || atomic_load(&t->stop)) {
            if (fd >= 0)
                close(fd);
            return NULL;
        }
        struct timeval tv = {5, 0}; /* a stuck client cannot hold the thread */
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        atomic_fetch_add(&t->conns, 1);
        tsrv_serve(t, fd);
        close(fd);
    }
}

static int run(const char *cmd)
{
    return system(cmd) == 0 ? 0 : -1;
}

/* A CA, and a certificate for localhost it signed (P-256 keys: quick). */
static int tsrv_make_certs(tsrv_t *t)
{
    char cmd[1600];
    snprintf(t->dir, sizeof(t->dir), "/tmp/cm-test-http-client.XXXXXX");
    if (system("which openssl >/dev/null 2>&1") != 0 || mkdtemp(t->dir) == NULL)
        return -1;
    snprintf(t->ca, sizeof(t->ca), "%s/ca.crt", t->dir);
    snprintf(cmd, sizeof(cmd),
             "cd %s && "
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout ca.key -out ca.crt -days 2 -subj /CN=cm-test-ca "
             "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign "
             ">/dev/null 2>&1 && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout srv.key -out srv.csr -subj /CN=localhost >/dev/null 2>&1 && "
             "printf 'subjectAltName=DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > ext && "
             "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
             "-out srv.crt -days 2 -extfile ext >/dev/null 2>&1",
             t->dir);
    return run(cmd);
}

static int tsrv_start(tsrv_t *t)
{
    static const char pers[] = "tsrv";
    char path[128];
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);

    mbedtls_entropy_init(&t->entropy);
    mbedtls_ctr_drbg_init(&t->drbg);
    mbedtls_x509_crt_init(&t->cert);
    mbedtls_pk_init(&t->key);
    mbedtls_ssl_config_init(&t->conf);
    if (tsrv_make_certs(t) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/srv.crt", t->dir);
    if (mbedtls_x509_crt_parse_file(&t->cert, path) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/srv.key", t->dir);
    if (mbedtls_pk_parse_keyfile(&t->key, path, NULL) != 0 ||
        mbedtls_ctr_drbg_seed(&t->drbg, mbedtls_entropy_func, &t->entropy,
                              (const unsigned char *)pers, sizeof(pers) - 1) != 0 ||
        mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_SERVER, MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT) != 0)
        return -1;
    mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->drbg);
    if (mbedtls_ssl_conf_own_cert(&t->conf, &t->cert, &t->key) != 0)
        return -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    t->lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (t->lfd < 0 || bind(t->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(t->lfd, 16) != 0 || getsockname(t->lfd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    t->port = ntohs(a.sin_port);
    if (pthread_create(&t->thread, NULL, tsrv_main, t) != 0)
        return -1;
    t->ok = true;
    return 0;
}

static void tsrv_stop(tsrv_t *t)
{
    char cmd[128];
    if (t->ok) {
        atomic_store(&t->stop, true);
        shutdown(t->lfd, SHUT_RDWR); /* wakes accept() */
        pthread_join(t->thread, NULL);
    }
    if (t->lfd > 0)
        close(t->lfd);
    mbedtls_ssl_config_free(&t->conf);
    mbedtls_pk_free(&t->key);
    mbedtls_x509_crt_free(&t->cert);
    mbedtls_ctr_drbg_free(&t->drbg);
    mbedtls_entropy_free(&t->entropy);
    if (t->dir[0] != '\0' && strncmp(t->dir, "/tmp/cm-test-http-client.", 25) == 0) {
        snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
        run(cmd);
    }
}

/* ==== fixture and helpers ================================================ */

typedef struct {
    uv_loop_t loop;
    srv_t srv;
    cm_http_client_t *hc;
    char url[256];
} fx_t;

typedef struct {
    int calls, status, http;
    cm_buf_t body;
    char why[256];
    char location[64], method[16], test[16], clen[16];
    cm_http_client_t *close_client; /* closes this client from the callback */
    uv_loop_t *loop;
} result_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    alarm(30);
    uv_loop_init(&f->loop);
    srv_start(&f->srv, &f->loop);
    *state = f;
    return 0;
}

static void on_client_closed(void *ud)
{
    (*(int *)ud)++;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    int closed = 0;
    if (f->hc != NULL)
        cm_http_client_close(f->hc, on_client_closed, &closed);
    srv_stop(&f->srv);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(closed, f->hc != NULL ? 1 : 0);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    free(f);
    alarm(0);
    return 0;
}

static void client(fx_t *f, const cm_http_client_opts_t *o)
{
    assert_int_equal(cm_http_client_new(&f->loop, o, &f->hc), 0);
}

static const char *url(fx_t *f, const char *path)
{
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d%s", f->srv.port, path);
    return f->url;
}

static void copy_header(const cm_http_client_res_t *res, const char *name, char *out, size_t n)
{
    cm_slice_t v = cm_http_client_res_header(res, name);
    snprintf(out, n, "%.*s", (int)v.len, v.p != NULL ? v.p : "");
}

static void on_result(int status, const cm_http_client_res_t *res, void *ud)
{
    result_t *r = ud;
    r->calls++;
    r->status = status;
    r->http = res->status;
    cm_buf_reset(&r->body);
    cm_buf_append_slice(&r->body, res->body);
    cm_buf_cstr(&r->body);
    snprintf(r->why, sizeof(r->why), "%s", res->error);
    copy_header(res, "Location", r->location, sizeof(r->location));
    copy_header(res, "X-Method", r->method, sizeof(r->method));
    copy_header(res, "x-test", r->test, sizeof(r->test));
    copy_header(res, "Content-Length", r->clen, sizeof(r->clen));
    if (r->close_client != NULL)
        cm_http_client_close(r->close_client, NULL, NULL);
    if (r->loop != NULL)
        uv_stop(r->loop); /* uv_run(ONCE) would otherwise go on to wait for I/O */
}

/* Starts the request, checks that the callback did not run inside the
 * call, and runs the loop until it has run. */
static void fetch(fx_t *f, const cm_http_client_req_t *req, result_t *r)
{
    int before = r->calls;
    r->loop = &f->loop;
    cm_http_client_request(f->hc, req, on_result, r);
    assert_int_equal(r->calls, before);
    while (r->calls == before)
        uv_run(&f->loop, UV_RUN_ONCE);
}

static void get(fx_t *f, const char *path, result_t *r)
{
    fetch(f, &(cm_http_client_req_t){.url = url(f, path)}, r);
}

static void on_wake(uv_timer_t *t)
{
    *(bool *)t->data = true;
    uv_stop(t->loop);
}

static void run_for(uv_loop_t *loop, uint64_t ms)
{
    uv_timer_t t;
    bool fired = false;
    uv_timer_init(loop, &t);
    t.data = &fired;
    uv_timer_start(&t, on_wake, ms, 0);
    while (!fired)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
}

#define assert_ok(r)                                                                               \
    do {                                                                                           \
        if ((r).status != 0)                                                                       \
            fail_msg("request failed: %d %s", (r).status, (r).why);                                \
    } while (0)

/* ==== plain HTTP ========================================================== */

static void test_get_content_length(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    get(f, "/cl", &r);
    assert_ok(r);
    assert_int_equal(r.http, 200);
    assert_string_equal(r.body.p, "hello");
    assert_string_equal(r.test, "yes");
    assert_string_equal(r.clen, "5");
    assert_string_equal(r.why, "");
    cm_buf_free(&r.body);
}

static void test_chunked_body(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    get(f, "/chunked", &r);
    assert_ok(r);
    assert_int_equal(r.http, 200);
    assert_string_equal(r.body.p, "hello, world");
    cm_buf_free(&r.body);
}

static void test_post_echo(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    static const char body[] = "a\0b\r\nc";
    client(f, NULL);
    fetch(f,
          &(cm_http_client_req_t){
              .method = "POST", .url = url(f, "/echo"), .body = body, .body_len = sizeof(body)},
          &r);
    assert_ok(r);
    assert_string_equal(r.method, "POST");
    assert_int_equal(r.body.len, sizeof(body));
    assert_memory_equal(r.body.p, body, sizeof(body));
    cm_buf_free(&r.body);
}

static void test_request_headers(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    char host[64];
    const char *hdrs[] = {"Authorization", "Basic dXNlcjpwYXNz", "X-Custom", "v 1", NULL};
    client(f, &(cm_http_client_opts_t){.user_agent = "cm-test/1"});
    fetch(f, &(cm_http_client_req_t){.url = url(f, "/head?q=1#frag"), .headers = hdrs}, &r);
    assert_ok(r);
    snprintf(host, sizeof(host), "\r\nHost: 127.0.0.1:%d\r\n", f->srv.port);
    assert_true(strncmp(r.body.p, "GET /head?q=1 HTTP/1.1\r\n", 24) == 0);
    assert_non_null(strstr(r.body.p, host));
    assert_non_null(strstr(r.body.p, "\r\nAuthorization: Basic dXNlcjpwYXNz\r\n"));
    assert_non_null(strstr(r.body.p, "\r\nX-Custom: v 1\r\n"));
    assert_non_null(strstr(r.body.p, "\r\nUser-Agent: cm-test/1\r\n"));
    assert_non_null(strstr(r.body.p, "\r\nConnection: keep-alive\r\n"));
    assert_null(strstr(r.body.p, "Content-Length")); /* a GET without a body */

    fetch(f, &(cm_http_client_req_t){.method = "PUT", .url = url(f, "/head")}, &r);
    assert_ok(r);
    assert_non_null(strstr(r.body.p, "\r\nContent-Length: 0\r\n"));
    cm_buf_free(&r.body);
}

static void test_keep_alive_reuse(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    get(f, "/cl", &r);
    assert_ok(r);
    get(f, "/chunked", &r);
    assert_ok(r);
    fetch(f,
          &(cm_http_client_req_t){
              .method = "POST", .url = url(f, "/echo"), .body = "x", .body_len = 1},
          &r);
    assert_ok(r);
    assert_string_equal(r.body.p, "x");
    assert_int_equal(f->srv.conns, 1);
    assert_int_equal(f->srv.requests, 3);
    cm_buf_free(&r.body);
}

static void test_connection_close_not_reused(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    get(f, "/close", &r);
    assert_ok(r);
    assert_string_equal(r.body.p, "bye");
    get(f, "/cl", &r);
    assert_ok(r);
    assert_int_equal(f->srv.conns, 2);
    /* A body that ends with the connection is complete, and not reused. */
    get(f, "/eof", &r);
    assert_ok(r);
    assert_string_equal(r.body.p, "until close");
    get(f, "/cl", &r);
    assert_ok(r);
    assert_int_equal(f->srv.conns, 3); /* /eof went on the second, which then closed */
    cm_buf_free(&r.body);
}

static void test_redirect_not_followed(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    get(f, "/redirect", &r);
    assert_ok(r);
    assert_int_equal(r.http, 302);
    assert_string_equal(r.location, "/cl");
    assert_int_equal(r.body.len, 0);
    assert_int_equal(f->srv.requests, 1);
    cm_buf_free(&r.body);
}

static void test_interim_and_errors(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    get(f, "/interim", &r); /* a 103 before the final answer is skipped */
    assert_ok(r);
    assert_int_equal(r.http, 200);
    assert_string_equal(r.body.p, "ok");
    get(f, "/garbage", &r);
    assert_int_equal(r.status, CM_EIO);
    assert_int_equal(r.http, 0);
    assert_non_null(strstr(r.why, "malformed"));
    cm_buf_free(&r.body);
}

static void test_size_cap(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, &(cm_http_client_opts_t){.max_response_bytes = 1000});
    get(f, "/big", &r); /* Content-Length above the cap: refused before the body */
    assert_int_equal(r.status, CM_ETOOBIG);
    assert_non_null(strstr(r.why, "1000"));
    get(f, "/bigchunked", &r); /* crosses the cap while reading */
    assert_int_equal(r.status, CM_ETOOBIG);
    fetch(f, &(cm_http_client_req_t){.url = url(f, "/big"), .max_response_bytes = 10000}, &r);
    assert_ok(r);
    assert_int_equal(r.body.len, 5000);
    cm_buf_free(&r.body);
}

static void test_head_request(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, &(cm_http_client_opts_t){.max_response_bytes = 1000});
    /* 5000 bytes announced, none sent: within the cap, and the connection
     * is in step for the next request. */
    fetch(f, &(cm_http_client_req_t){.method = "HEAD", .url = url(f, "/big")}, &r);
    assert_ok(r);
    assert_int_equal(r.http, 200);
    assert_string_equal(r.clen, "5000");
    assert_int_equal(r.body.len, 0);
    get(f, "/cl", &r);
    assert_ok(r);
    assert_string_equal(r.body.p, "hello");
    assert_int_equal(f->srv.conns, 1);
    cm_buf_free(&r.body);
}

typedef struct {
    fx_t *f;
    result_t second;
} chain_t;

static void on_first(int status, const cm_http_client_res_t *res, void *ud)
{
    chain_t *ch = ud;
    (void)res;
    assert_int_equal(status, 0);
    ch->second.loop = &ch->f->loop;
    cm_http_client_request(ch->f->hc, &(cm_http_client_req_t){.url = url(ch->f, "/chunked")},
                           on_result, &ch->second);
    assert_int_equal(ch->second.calls, 0);
}

static void test_request_from_callback(void **state)
{
    fx_t *f = *state;
    chain_t ch = {.f = f};
    client(f, NULL);
    /* The connection is back in the pool before the callback runs: the
     * request made there takes it. */
    cm_http_client_request(f->hc, &(cm_http_client_req_t){.url = url(f, "/cl")}, on_first, &ch);
    while (ch.second.calls == 0)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_ok(ch.second);
    assert_string_equal(ch.second.body.p, "hello, world");
    assert_int_equal(f->srv.conns, 1);
    cm_buf_free(&ch.second.body);
}

static void test_total_timeout(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    uint64_t t0 = uv_now(&f->loop);
    fetch(f, &(cm_http_client_req_t){.url = url(f, "/hang"), .timeout_ms = 200}, &r);
    uint64_t took = uv_now(&f->loop) - t0;
    assert_int_equal(r.status, CM_ETIMEDOUT);
    assert_true(took >= 200 && took < 2000);
    /* The client is still usable (on a new connection). */
    get(f, "/cl", &r);
    assert_ok(r);
    assert_int_equal(f->srv.conns, 2);
    cm_buf_free(&r.body);
}

/* read_timeout_ms: a server that says nothing, or stops in the middle, is
 * given up after that long, well before the total deadline; a server that
 * answers is not troubled by it. */
static void test_read_timeout(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, &(cm_http_client_opts_t){.read_timeout_ms = 200, .timeout_ms = 5000});
    const char *paths[] = {"/hang", "/stall"};
    for (size_t i = 0; i < 2; i++) {
        uint64_t t0 = uv_now(&f->loop);
        get(f, paths[i], &r);
        uint64_t took = uv_now(&f->loop) - t0;
        assert_int_equal(r.status, CM_ETIMEDOUT);
        assert_non_null(strstr(r.why, "sent nothing for 200 ms"));
        assert_true(took >= 200 && took < 2000);
        cm_buf_free(&r.body);
    }
    get(f, "/chunked", &r);
    assert_ok(r);
    cm_buf_free(&r.body);
}

static void test_connect_refused(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    char u[64];
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0); /* a port nobody listens on */
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    snprintf(u, sizeof(u), "http://127.0.0.1:%d/", ntohs(a.sin_port));
    client(f, NULL);
    fetch(f, &(cm_http_client_req_t){.url = u}, &r);
    assert_int_equal(r.status, CM_EUNAVAIL);
    assert_non_null(strstr(r.why, "cannot connect"));
    fetch(f, &(cm_http_client_req_t){.url = "http://name.invalid/", .timeout_ms = 5000}, &r);
    assert_true(r.status == CM_EUNAVAIL || r.status == CM_ETIMEDOUT);
    cm_buf_free(&r.body);
}

static void test_filter_refuses_loopback(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    char u[64];
    client(f, &(cm_http_client_opts_t){.filter = cm_http_client_public_only});
    get(f, "/cl", &r);
    assert_int_equal(r.status, CM_EFORBIDDEN);
    assert_non_null(strstr(r.why, "127.0.0.1"));
    snprintf(u, sizeof(u), "http://localhost:%d/cl", f->srv.port);
    fetch(f, &(cm_http_client_req_t){.url = u}, &r);
    assert_int_equal(r.status, CM_EFORBIDDEN);
    assert_int_equal(f->srv.conns, 0);
    cm_buf_free(&r.body);
}

static bool allowed(const char *ip)
{
    struct sockaddr_storage ss = {0};
    if (strchr(ip, ':') != NULL)
        assert_int_equal(uv_ip6_addr(ip, 443, (struct sockaddr_in6 *)&ss), 0);
    else
        assert_int_equal(uv_ip4_addr(ip, 443, (struct sockaddr_in *)&ss), 0);
    return cm_http_client_public_only((struct sockaddr *)&ss, NULL);
}

static void test_public_only_table(void **state)
{
    static const char *const refused[] = {
        "127.0.0.1",
        "127.255.255.254",
        "0.0.0.0",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "100.127.255.255",
        "224.0.0.1",
        "239.255.255.250",
        "255.255.255.255",
        "240.0.0.1",
        "::",
        "::1",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "fec0::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::127.0.0.1",
        "64:ff9b::a00:1",
        "2002:c0a8:101::1",
        "100::1",
    };
    static const char *const public[] = {
        "8.8.8.8",        "1.1.1.1",          "172.32.0.1",           "100.128.0.1",
        "11.0.0.1",       "192.169.0.1",      "2001:4860:4860::8888", "2606:4700::1111",
        "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        if (allowed(refused[i]))
            fail_msg("%s should be refused", refused[i]);
    for (size_t i = 0; i < sizeof(public) / sizeof(public[0]); i++)
        if (!allowed(public[i]))
            fail_msg("%s should be allowed", public[i]);
    assert_false(cm_http_client_public_only(NULL, NULL));
}

static void test_retry_on_closed_reused_connection(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    get(f, "/once", &r);
    assert_ok(r);
    /* Sent on the pooled connection, which the server closes unanswered:
     * sent again on a new one. */
    get(f, "/once", &r);
    assert_ok(r);
    assert_string_equal(r.body.p, "ok");
    assert_int_equal(f->srv.conns, 2);
    assert_int_equal(f->srv.requests, 3);
    /* A POST is not sent twice, unless the caller says it may be. */
    fetch(f, &(cm_http_client_req_t){.method = "POST", .url = url(f, "/once")}, &r);
    assert_int_equal(r.status, CM_EIO);
    assert_non_null(strstr(r.why, "before any response"));
    get(f, "/once", &r); /* a new connection: answered */
    assert_ok(r);
    fetch(f, &(cm_http_client_req_t){.method = "POST", .url = url(f, "/once"), .idempotent = true},
          &r);
    assert_ok(r);
    cm_buf_free(&r.body);
}

static void test_idle_connection_closed_by_server(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    get(f, "/idleclose", &r);
    assert_ok(r);
    run_for(&f->loop, 50); /* the server closes the pooled connection meanwhile */
    get(f, "/cl", &r);
    assert_ok(r);
    assert_int_equal(f->srv.conns, 2);
    cm_buf_free(&r.body);
}

static void test_idle_timeout(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, &(cm_http_client_opts_t){.idle_timeout_ms = 50});
    get(f, "/cl", &r);
    assert_ok(r);
    run_for(&f->loop, 200);
    assert_null(f->srv.list); /* the client closed its idle connection */
    get(f, "/cl", &r);
    assert_ok(r);
    assert_int_equal(f->srv.conns, 2);
    cm_buf_free(&r.body);
}

static void test_bad_requests(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    const char *crlf[] = {"X-A", "1\r\nX-Injected: 1", NULL};
    const char *own[] = {"Content-Length", "3", NULL};
    const char *odd[] = {"Bad Name", "1", NULL};
    client(f, NULL);
    const cm_http_client_req_t bad[] = {
        {.url = "ftp://127.0.0.1/"},
        {.url = "http://user:pw@127.0.0.1/"},
        {.url = "http:///nohost"},
        {.url = "http://127.0.0.1:99999/"},
        {.url = "http://127.0.0.1/a b"},
        {.url = "http://[::1/"},
        {.url = NULL},
        {.url = url(f, "/cl"), .method = "GE T"},
        {.url = url(f, "/cl"), .headers = crlf},
        {.url = url(f, "/cl"), .headers = own},
        {.url = url(f, "/cl"), .headers = odd},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fetch(f, &bad[i], &r);
        if (r.status != CM_EINVAL)
            fail_msg("case %zu: %d %s", i, r.status, r.why);
    }
    assert_int_equal(f->srv.requests, 0);
    cm_buf_free(&r.body);
}

static void test_cancel(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    cm_http_client_call_t *call = cm_http_client_request(
        f->hc, &(cm_http_client_req_t){.url = url(f, "/hang")}, on_result, &r);
    run_for(&f->loop, 20); /* connected and sent */
    assert_int_equal(r.calls, 0);
    cm_http_client_cancel(call);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.status, CM_ERR);
    assert_string_equal(r.why, "cancelled");
    call = cm_http_client_request(f->hc, &(cm_http_client_req_t){.url = "bad"}, on_result, &r);
    cm_http_client_cancel(call); /* queued failure: still exactly one callback */
    assert_int_equal(r.calls, 2);
    run_for(&f->loop, 10);
    assert_int_equal(r.calls, 2);
    cm_buf_free(&r.body);
}

static void test_close_with_pending(void **state)
{
    fx_t *f = *state;
    result_t a = {0}, b = {0}, c = {0};
    client(f, NULL);
    cm_http_client_request(f->hc, &(cm_http_client_req_t){.url = url(f, "/hang")}, on_result, &a);
    cm_http_client_request(f->hc, &(cm_http_client_req_t){.url = "http://localhost:1/"}, on_result,
                           &b);
    run_for(&f->loop, 20);
    cm_http_client_request(f->hc, &(cm_http_client_req_t){.url = url(f, "/cl")}, on_result, &c);
    int closed = 0;
    cm_http_client_close(f->hc, on_client_closed, &closed);
    f->hc = NULL;
    assert_int_equal(a.calls + b.calls + c.calls, 3);
    assert_int_equal(a.status, CM_ERR);
    assert_string_equal(a.why, "client closed");
    assert_int_equal(c.status, CM_ERR);
    assert_int_equal(closed, 0);
    while (closed == 0)
        uv_run(&f->loop, UV_RUN_ONCE);
    cm_buf_free(&a.body);
    cm_buf_free(&b.body);
    cm_buf_free(&c.body);
}

static void test_close_from_callback(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, NULL);
    r.close_client = f->hc;
    get(f, "/cl", &r);
    assert_ok(r);
    f->hc = NULL; /* closed by the callback; the teardown checks that nothing is left */
    cm_buf_free(&r.body);
}

/* ==== https ================================================================= */

static const char *tls_url(fx_t *f, const char *host)
{
    snprintf(f->url, sizeof(f->url), "https://%s:%d/", host, tsrv.port);
    return f->url;
}

static void test_https_trusted(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    if (!tsrv.ok)
        skip();
    unsigned conns = atomic_load(&tsrv.conns);
    client(f, &(cm_http_client_opts_t){.ca_file = tsrv.ca});
    fetch(f, &(cm_http_client_req_t){.url = tls_url(f, "localhost")}, &r);
    assert_ok(r);
    assert_int_equal(r.http, 200);
    assert_string_equal(r.body.p, "secure");
    fetch(f, &(cm_http_client_req_t){.url = tls_url(f, "localhost")}, &r); /* kept alive */
    assert_ok(r);
    assert_int_equal(atomic_load(&tsrv.conns) - conns, 1);
    cm_buf_free(&r.body);
}

static void test_https_untrusted(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    if (!tsrv.ok)
        skip();
    client(f, NULL); /* the system bundle: our test CA is not in it */
    fetch(f, &(cm_http_client_req_t){.url = tls_url(f, "localhost")}, &r);
    assert_int_equal(r.status, CM_EUNAVAIL);
    assert_non_null(strstr(r.why, "certificate"));
    cm_buf_free(&r.body);
}

static void test_https_wrong_host(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    if (!tsrv.ok)
        skip();
    client(f, &(cm_http_client_opts_t){.ca_file = tsrv.ca});
    fetch(f, &(cm_http_client_req_t){.url = tls_url(f, "127.0.0.1")}, &r); /* cert: localhost */
    assert_int_equal(r.status, CM_EUNAVAIL);
    assert_non_null(strstr(r.why, "certificate"));
    cm_buf_free(&r.body);
}

static void test_https_bad_ca_file(void **state)
{
    fx_t *f = *state;
    result_t r = {0};
    client(f, &(cm_http_client_opts_t){.ca_file = "/nonexistent/ca.pem"});
    fetch(f, &(cm_http_client_req_t){.url = "https://localhost:1/"}, &r);
    assert_int_equal(r.status, CM_EINVAL);
    assert_non_null(strstr(r.why, "/nonexistent/ca.pem"));
    cm_buf_free(&r.body);
}

static int group_setup(void **state)
{
    (void)state;
    if (tsrv_start(&tsrv) != 0)
        fprintf(stderr, "no TLS test server (openssl CLI missing?): https tests skipped\n");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    tsrv_stop(&tsrv);
    return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_get_content_length),
        T(test_chunked_body),
        T(test_post_echo),
        T(test_request_headers),
        T(test_keep_alive_reuse),
        T(test_connection_close_not_reused),
        T(test_redirect_not_followed),
        T(test_interim_and_errors),
        T(test_size_cap),
        T(test_head_request),
        T(test_request_from_callback),
        T(test_total_timeout),
        T(test_read_timeout),
        T(test_connect_refused),
        T(test_filter_refuses_loopback),
        cmocka_unit_test(test_public_only_table),
        T(test_retry_on_closed_reused_connection),
        T(test_idle_connection_closed_by_server),
        T(test_idle_timeout),
        T(test_bad_requests),
        T(test_cancel),
        T(test_close_with_pending),
        T(test_close_from_callback),
        T(test_https_trusted),
        T(test_https_untrusted),
        T(test_https_wrong_host),
        T(test_https_bad_ca_file),
    };
    signal(SIGPIPE, SIG_IGN);
    cm_log_init("test_http_client", CM_LOG_OFF);
    return cmocka_run_group_tests_name("http_client", tests, group_setup, group_teardown);
}
