/*
 * redis_tls.c - the TLS relay behind rediss:// (see redis_tls.h).
 *
 * One relay per connection attempt, three handles on the loop:
 *   tcp       the TCP connection to the server, carrying TLS records;
 *   listener  a unix socket, bound once the handshake is done, that takes
 *             exactly one connection (hiredis's) and is then closed and
 *             unlinked;
 *   peer      that accepted connection, carrying plain RESP.
 * mbedTLS never sees a socket: its bio callbacks read ciphertext from `in`
 * (filled by the tcp reads) and append what it sends to `out` (handed to
 * uv_write), so the handshake and every record run on the bytes that have
 * arrived and "need more" is MBEDTLS_ERR_SSL_WANT_READ: the loop never
 * blocks. Writes are not throttled: hiredis reads its socket whenever it
 * is readable and Redis answers only what was asked, so neither side
 * queues without bound.
 *
 * The relay socket lives in a directory of its own that only this user can
 * enter (mkdtemp makes it 0700), removed with the socket once hiredis is
 * connected, and a connection from another process (SO_PEERCRED) is
 * refused all the same: what reaches the socket reaches the server.
 *
 * Ownership: redis.c closes the relay; the relay only reports (ready,
 * failed) and never frees itself before relay_close(). Its memory goes
 * with the last handle's close callback, which libuv runs after the
 * cancelled connect and write callbacks, so those may still look at it.
 */
#include "redis_tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <mbedtls/ssl.h>

#include "cm/alloc.h"
#include "cm/buf.h"
#include "cm/common.h"
#include "cm/err.h"

#define SOCK_PATH_MAX sizeof(((struct sockaddr_un *)NULL)->sun_path)

typedef enum { R_CONNECTING, R_HANDSHAKE, R_LISTENING, R_RELAYING, R_FAILED } relay_state_t;

struct cm__redis_tls_relay {
    uv_loop_t *loop;
    relay_state_t st;
    bool closed;
    bool listening; /* the listener handle is open */
    bool peer_open; /* the peer handle is open */
    int handles_open;
    uv_tcp_t tcp;
    uv_connect_t connect_req;
    uv_pipe_t listener, peer;
    mbedtls_ssl_context ssl;
    cm_tls_membio_t bio; /* the ciphertext both ways (cm/tls.h) */
    cm_buf_t early;      /* plaintext from the server before hiredis connected */
    cm__redis_tls_cbs_t cbs;
    char dir[64]; /* this relay's private directory; "" when there is none */
    char path[SOCK_PATH_MAX];
    char tcp_buf[16384], peer_buf[16384], plain_buf[16384];
};

typedef struct {
    uv_write_t req;
    cm__redis_tls_relay_t *t;
    char *data;
} wreq_t;

/* ---- plumbing ----------------------------------------------------------------------- */

/* Reports once; the owner closes the relay (from the callback or later). */
static void fail(cm__redis_tls_relay_t *t, const char *why)
{
    if (t->closed || t->st == R_FAILED)
        return;
    t->st = R_FAILED;
    t->cbs.failed(t->cbs.ud, why);
}

static void on_written(uv_write_t *req, int status)
{
    wreq_t *w = CM_CONTAINER_OF(req, wreq_t, req);
    cm__redis_tls_relay_t *t = w->t;

    free(w->data);
    free(w);
    if (status < 0 && status != UV_ECANCELED)
        fail(t, uv_strerror(status));
}

/* Takes data (malloc'd) whatever happens. */
static bool send_owned(cm__redis_tls_relay_t *t, uv_stream_t *s, char *data, size_t len)
{
    wreq_t *w = cm_xmalloc(sizeof(*w));
    *w = (wreq_t){.t = t, .data = data};
    uv_buf_t b = uv_buf_init(data, (unsigned)len);
    int rc = uv_write(&w->req, s, &b, 1, on_written);
    if (rc != 0) {
        free(data);
        free(w);
        fail(t, uv_strerror(rc));
        return false;
    }
    return true;
}

static bool flush_out(cm__redis_tls_relay_t *t)
{
    size_t len;
    if (t->bio.out.len == 0)
        return true;
    char *data = cm_buf_detach(&t->bio.out, &len);
    return send_owned(t, (uv_stream_t *)&t->tcp, data, len);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    cm__redis_tls_relay_t *t = h->data;
    CM_UNUSED(hint);
    if (h == (uv_handle_t *)&t->tcp)
        *buf = uv_buf_init(t->tcp_buf, sizeof(t->tcp_buf));
    else
        *buf = uv_buf_init(t->peer_buf, sizeof(t->peer_buf));
}

/* ---- server side --------------------------------------------------------------------- */

static void on_peer_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void on_handle_closed(uv_handle_t *h);

/* Plaintext from the server: to hiredis, or kept until it connects. */
static void to_peer(cm__redis_tls_relay_t *t, const char *p, size_t n)
{
    if (t->st != R_RELAYING) {
        cm_buf_append(&t->early, p, n);
        return;
    }
    send_owned(t, (uv_stream_t *)&t->peer, cm_xmemdup(p, n), n);
}

static void decrypt_records(cm__redis_tls_relay_t *t)
{
    char why[200];

    while (!t->closed && t->st != R_FAILED) {
        int n = mbedtls_ssl_read(&t->ssl, (unsigned char *)t->plain_buf, sizeof(t->plain_buf));
        if (n > 0) {
            to_peer(t, t->plain_buf, (size_t)n);
            continue;
        }
        if (n == MBEDTLS_ERR_SSL_WANT_READ || n == MBEDTLS_ERR_SSL_WANT_WRITE)
            break;
        if (n == 0 || n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
            fail(t, "the server closed the TLS session");
            return;
        }
        cm_tls_describe(n, "TLS", why, sizeof(why));
        fail(t, why);
        return;
    }
    flush_out(t);
}

/* The socket and its directory are gone as soon as hiredis is in (or the
 * relay closes): only a process killed in between leaves them behind. */
static void remove_socket(cm__redis_tls_relay_t *t)
{
    if (t->dir[0] == '\0')
        return;
    unlink(t->path);
    rmdir(t->dir);
    t->dir[0] = '\0';
}

static void on_peer_connection(uv_stream_t *server, int status)
{
    cm__redis_tls_relay_t *t = server->data;
    struct ucred cred;
    socklen_t len = sizeof(cred);
    uv_os_fd_t fd;

    if (t->closed || t->st != R_LISTENING)
        return;
    if (status < 0) {
        fail(t, uv_strerror(status));
        return;
    }
    uv_pipe_init(t->loop, &t->peer, 0);
    t->peer.data = t;
    t->peer_open = true;
    t->handles_open++;
    if (uv_accept(server, (uv_stream_t *)&t->peer) != 0 ||
        uv_fileno((uv_handle_t *)&t->peer, &fd) ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid != getpid()) {
        fail(t, "the relay socket took a connection that is not this process's");
        return;
    }
    /* One connection per relay: nobody else may come in later. */
    remove_socket(t);
    t->listening = false;
    uv_close((uv_handle_t *)&t->listener, on_handle_closed);
    t->st = R_RELAYING;
    uv_read_start((uv_stream_t *)&t->peer, on_alloc, on_peer_read);
    if (t->early.len > 0) {
        size_t n;
        char *data = cm_buf_detach(&t->early, &n);
        send_owned(t, (uv_stream_t *)&t->peer, data, n);
    }
}

static void start_listening(cm__redis_tls_relay_t *t)
{
    char why[200];
    int rc;

    snprintf(t->dir, sizeof(t->dir), "%s/cm-redis-tls-XXXXXX", P_tmpdir);
    if (mkdtemp(t->dir) == NULL) {
        t->dir[0] = '\0';
        snprintf(why, sizeof(why), "cannot make a private directory for the TLS relay: %s",
                 strerror(errno));
        fail(t, why);
        return;
    }
    snprintf(t->path, sizeof(t->path), "%s/redis.sock", t->dir);
    uv_pipe_init(t->loop, &t->listener, 0);
    t->listener.data = t;
    t->listening = true;
    t->handles_open++;
    if ((rc = uv_pipe_bind(&t->listener, t->path)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&t->listener, 1, on_peer_connection)) != 0) {
        snprintf(why, sizeof(why), "cannot listen on the TLS relay socket: %s", uv_strerror(rc));
        fail(t, why);
        return;
    }
    t->st = R_LISTENING;
    t->cbs.ready(t->cbs.ud, t->path);
}

/* mbedTLS's verification report is one line per problem. */
static void verify_failure(uint32_t flags, char *why, size_t why_size)
{
    char info[512];
    if (mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags) < 0)
        snprintf(info, sizeof(info), "flags 0x%x", (unsigned)flags);
    for (char *nl = strchr(info, '\n'); nl != NULL; nl = strchr(nl, '\n'))
        *nl = nl[1] == '\0' ? '\0' : ';';
    snprintf(why, why_size, "TLS: the server's certificate is not accepted: %s", info);
}

static void handshake_step(cm__redis_tls_relay_t *t)
{
    char why[600];
    int rc = mbedtls_ssl_handshake(&t->ssl);

    if (!flush_out(t))
        return;
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE)
        return;
    if (rc != 0) {
        uint32_t flags = mbedtls_ssl_get_verify_result(&t->ssl);
        if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags != 0 && flags != (uint32_t)-1)
            verify_failure(flags, why, sizeof(why));
        else
            cm_tls_describe(rc, "TLS handshake failed", why, sizeof(why));
        fail(t, why);
        return;
    }
    start_listening(t);
    /* Records that came with the last handshake flight. */
    if (!t->closed && t->st != R_FAILED && cm_tls_membio_unread(&t->bio))
        decrypt_records(t);
}

static void on_tcp_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    cm__redis_tls_relay_t *t = s->data;

    if (t->closed || t->st == R_FAILED || nread == 0)
        return;
    if (nread < 0) {
        fail(t, nread == UV_EOF ? (t->st == R_HANDSHAKE ? "the server closed the connection "
                                                          "during the TLS handshake"
                                                        : "the server closed the connection")
                                : uv_strerror((int)nread));
        return;
    }
    cm_tls_membio_feed(&t->bio, buf->base, (size_t)nread);
    if (t->st == R_HANDSHAKE)
        handshake_step(t);
    else
        decrypt_records(t);
}

static void on_tcp_connect(uv_connect_t *req, int status)
{
    cm__redis_tls_relay_t *t = req->data;

    if (t->closed || t->st == R_FAILED)
        return;
    if (status < 0) {
        fail(t, uv_strerror(status));
        return;
    }
    t->st = R_HANDSHAKE;
    uv_read_start((uv_stream_t *)&t->tcp, on_alloc, on_tcp_read);
    handshake_step(t);
}

/* ---- hiredis side ------------------------------------------------------------------------ */

static void on_peer_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    cm__redis_tls_relay_t *t = s->data;
    const unsigned char *p = (const unsigned char *)buf->base;
    size_t n = nread > 0 ? (size_t)nread : 0;

    if (t->closed || t->st == R_FAILED || nread == 0)
        return;
    if (nread < 0) {
        fail(t, "the local side of the TLS relay closed");
        return;
    }
    while (n > 0) {
        int rc = mbedtls_ssl_write(&t->ssl, p, n);
        if (rc <= 0) { /* never WANT_WRITE: the memory bio takes everything */
            char why[200];
            cm_tls_describe(rc, "TLS", why, sizeof(why));
            fail(t, why);
            return;
        }
        p += rc;
        n -= (size_t)rc;
    }
    flush_out(t);
}

/* ---- life cycle ------------------------------------------------------------------------------ */

int cm__redis_tls_relay_start(uv_loop_t *loop, const cm_tls_conf_t *conf, const char *ip, int port,
                              const char *server_name, const cm__redis_tls_cbs_t *cbs,
                              cm__redis_tls_relay_t **out, char *why, size_t why_size)
{
    struct sockaddr_storage addr;
    int rc = uv_ip4_addr(ip, port, (struct sockaddr_in *)&addr);

    if (rc != 0)
        rc = uv_ip6_addr(ip, port, (struct sockaddr_in6 *)&addr);
    if (rc != 0) {
        snprintf(why, why_size, "bad address %s", ip);
        return CM_ERR;
    }
    cm__redis_tls_relay_t *t = cm_xcalloc(1, sizeof(*t));
    t->loop = loop;
    t->cbs = *cbs;
    mbedtls_ssl_init(&t->ssl);
    if ((rc = mbedtls_ssl_setup(&t->ssl, cm_tls_conf_ssl(conf))) != 0 ||
        (rc = mbedtls_ssl_set_hostname(&t->ssl, server_name)) != 0) {
        cm_tls_describe(rc, "cannot start TLS", why, why_size);
        mbedtls_ssl_free(&t->ssl);
        free(t);
        return CM_ERR;
    }
    cm_tls_membio_attach(&t->ssl, &t->bio);
    uv_tcp_init(loop, &t->tcp);
    t->tcp.data = t;
    uv_tcp_keepalive(&t->tcp, 1, 60); /* as hiredis does for a plain connection */
    t->connect_req.data = t;
    t->handles_open = 1;
    *out = t;
    rc = uv_tcp_connect(&t->connect_req, &t->tcp, (const struct sockaddr *)&addr, on_tcp_connect);
    if (rc != 0) {
        snprintf(why, why_size, "%s", uv_strerror(rc));
        *out = NULL;
        cm__redis_tls_relay_close(t);
        return CM_ERR;
    }
    return CM_OK;
}

static void on_handle_closed(uv_handle_t *h)
{
    cm__redis_tls_relay_t *t = h->data;

    if (--t->handles_open > 0)
        return;
    cm_tls_membio_free(&t->bio);
    cm_buf_free(&t->early);
    free(t);
}

void cm__redis_tls_relay_close(cm__redis_tls_relay_t *t)
{
    if (t == NULL || t->closed)
        return;
    t->closed = true;
    mbedtls_ssl_free(&t->ssl);
    remove_socket(t);
    if (t->listening) {
        t->listening = false;
        uv_close((uv_handle_t *)&t->listener, on_handle_closed);
    }
    if (t->peer_open)
        uv_close((uv_handle_t *)&t->peer, on_handle_closed);
    uv_close((uv_handle_t *)&t->tcp, on_handle_closed);
}
