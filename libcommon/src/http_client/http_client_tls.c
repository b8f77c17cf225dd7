/*
 * http_client_tls.c - mbedTLS for the HTTP client, over memory buffers.
 *
 * mbedTLS never sees the socket: it runs over cm/tls.h's memory bio,
 * which the connection fills from its libuv reads and empties into
 * uv_write, so every step runs on the bytes that have arrived and never
 * blocks.
 *
 * The configuration is one per client (cm/tls.h, shared with the
 * Redis client): the CA file read once, peer verification required (the
 * handshake fails on an untrusted chain or a host name the certificate
 * does not carry; the host name is also the SNI), TLS 1.2 the least.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ssl.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "http_client_internal.h"

struct cm__http_client_tls {
    mbedtls_ssl_context ssl;
    cm_tls_membio_t bio; /* the ciphertext both ways (cm/tls.h) */
};

int cm__http_client_tls_conf_new(const char *ca_file, cm_tls_conf_t **out, char *why,
                                 size_t why_size)
{
    cm_tls_conf_opts_t o = {.ca_file = ca_file, .purpose = "cm_http_client"};
    return cm_tls_conf_new(&o, out, why, why_size);
}

/* ---- one connection --------------------------------------------------------------- */

int cm__http_client_tls_new(const cm_tls_conf_t *conf, const char *host,
                            cm__http_client_tls_t **out)
{
    cm__http_client_tls_t *t = cm_xcalloc(1, sizeof(*t));
    mbedtls_ssl_init(&t->ssl);
    *out = NULL;
    if (mbedtls_ssl_setup(&t->ssl, cm_tls_conf_ssl(conf)) != 0 ||
        mbedtls_ssl_set_hostname(&t->ssl, host) != 0) {
        cm__http_client_tls_free(t);
        return CM_EINVAL;
    }
    cm_tls_membio_attach(&t->ssl, &t->bio);
    *out = t;
    return CM_OK;
}

void cm__http_client_tls_free(cm__http_client_tls_t *t)
{
    if (t == NULL)
        return;
    mbedtls_ssl_free(&t->ssl);
    cm_tls_membio_free(&t->bio);
    free(t);
}

void cm__http_client_tls_feed(cm__http_client_tls_t *t, const char *p, size_t n)
{
    cm_tls_membio_feed(&t->bio, p, n);
}

/* mbedTLS's verification report is one line per problem. */
static void verify_failure(uint32_t flags, char *why, size_t why_size)
{
    char info[512];
    if (mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags) < 0)
        snprintf(info, sizeof(info), "flags 0x%x", (unsigned)flags);
    for (char *nl = strchr(info, '\n'); nl != NULL; nl = strchr(nl, '\n'))
        *nl = nl[1] == '\0' ? '\0' : ';';
    snprintf(why, why_size, "certificate not accepted: %s", info);
}

int cm__http_client_tls_handshake(cm__http_client_tls_t *t, char *why, size_t why_size)
{
    int rc = mbedtls_ssl_handshake(&t->ssl);
    if (rc == 0)
        return CM_OK;
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE)
        return CM_EAGAIN;
    uint32_t flags = mbedtls_ssl_get_verify_result(&t->ssl);
    if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags != 0 && flags != (uint32_t)-1)
        verify_failure(flags, why, why_size);
    else
        cm_tls_describe(rc, "TLS handshake failed", why, why_size);
    return CM_EUNAVAIL;
}

int cm__http_client_tls_read(cm__http_client_tls_t *t, char *buf, size_t cap, char *why,
                             size_t why_size)
{
    int rc = mbedtls_ssl_read(&t->ssl, (unsigned char *)buf, cap);
    if (rc > 0)
        return rc;
    if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY)
        return 0;
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE)
        return CM_EAGAIN;
    cm_tls_describe(rc, "TLS", why, why_size);
    return CM_EIO;
}

int cm__http_client_tls_write(cm__http_client_tls_t *t, const char *p, size_t n)
{
    while (n > 0) {
        int rc = mbedtls_ssl_write(&t->ssl, (const unsigned char *)p, n);
        if (rc <= 0)
            return CM_EIO; /* never WANT_WRITE: the memory bio takes everything */
        p += rc;
        n -= (size_t)rc;
    }
    return CM_OK;
}

bool cm__http_client_tls_pending(const cm__http_client_tls_t *t)
{
    return cm_tls_membio_unread(&t->bio) || mbedtls_ssl_get_bytes_avail(&t->ssl) > 0 ||
           mbedtls_ssl_check_pending(&t->ssl) != 0;
}

char *cm__http_client_tls_output(cm__http_client_tls_t *t, size_t *len)
{
    if (t->bio.out.len == 0)
        return NULL;
    return cm_buf_detach(&t->bio.out, len);
}
