/*
 * tls.c - what the HTTP and Redis clients share of TLS (cm/tls.h): the
 * client configuration and the memory bio. Each client drives its own
 * sessions over its own transport.
 */
#include "cm/tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"

struct cm_tls_conf {
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_x509_crt ca;
    mbedtls_x509_crt own_cert;
    mbedtls_pk_context own_key;
    mbedtls_ssl_config conf;
};

void cm_tls_describe(int rc, const char *what, char *why, size_t why_size)
{
    char msg[160];
    mbedtls_strerror(rc, msg, sizeof(msg));
    snprintf(why, why_size, "%s: %s", what, msg);
}

void cm_tls_conf_free(cm_tls_conf_t *c)
{
    if (c == NULL)
        return;
    mbedtls_ssl_config_free(&c->conf);
    mbedtls_pk_free(&c->own_key);
    mbedtls_x509_crt_free(&c->own_cert);
    mbedtls_x509_crt_free(&c->ca);
    mbedtls_ctr_drbg_free(&c->drbg);
    mbedtls_entropy_free(&c->entropy);
    free(c);
}

const struct mbedtls_ssl_config *cm_tls_conf_ssl(const cm_tls_conf_t *c)
{
    return &c->conf;
}

static int read_files(cm_tls_conf_t *c, const cm_tls_conf_opts_t *o, char *why, size_t why_size)
{
    char what[300];
    int rc;

    if (!o->insecure) {
        /* A bundle may hold a certificate mbedTLS cannot parse (rc > 0
         * counts them): usable as long as one was read. */
        rc = mbedtls_x509_crt_parse_file(&c->ca, o->ca_file);
        if (rc < 0 || c->ca.version == 0) {
            snprintf(what, sizeof(what), "cannot read the CA file %s", o->ca_file);
            cm_tls_describe(rc < 0 ? rc : MBEDTLS_ERR_X509_INVALID_FORMAT, what, why, why_size);
            return CM_EINVAL;
        }
    }
    if (o->cert_file == NULL)
        return CM_OK;
    if ((rc = mbedtls_x509_crt_parse_file(&c->own_cert, o->cert_file)) != 0) {
        snprintf(what, sizeof(what), "cannot read the client certificate %s", o->cert_file);
        cm_tls_describe(rc, what, why, why_size);
        return CM_EINVAL;
    }
    if ((rc = mbedtls_pk_parse_keyfile(&c->own_key, o->key_file, NULL)) != 0) {
        snprintf(what, sizeof(what), "cannot read the client key %s", o->key_file);
        cm_tls_describe(rc, what, why, why_size);
        return CM_EINVAL;
    }
    if ((rc = mbedtls_pk_check_pair(&c->own_cert.pk, &c->own_key)) != 0 ||
        (rc = mbedtls_ssl_conf_own_cert(&c->conf, &c->own_cert, &c->own_key)) != 0) {
        cm_tls_describe(rc, "the client certificate does not go with its key", why, why_size);
        return CM_EINVAL;
    }
    return CM_OK;
}

int cm_tls_conf_new(const cm_tls_conf_opts_t *o, cm_tls_conf_t **out, char *why, size_t why_size)
{
    const char *pers = o->purpose ? o->purpose : "cm_tls";
    cm_tls_conf_t *c = cm_xcalloc(1, sizeof(*c));
    int rc;

    *out = NULL;
    mbedtls_entropy_init(&c->entropy);
    mbedtls_ctr_drbg_init(&c->drbg);
    mbedtls_x509_crt_init(&c->ca);
    mbedtls_x509_crt_init(&c->own_cert);
    mbedtls_pk_init(&c->own_key);
    mbedtls_ssl_config_init(&c->conf);
    rc = mbedtls_ctr_drbg_seed(&c->drbg, mbedtls_entropy_func, &c->entropy,
                               (const unsigned char *)pers, strlen(pers));
    if (rc != 0) {
        cm_tls_describe(rc, "cannot seed the TLS random generator", why, why_size);
        goto fail;
    }
    rc = mbedtls_ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                     MBEDTLS_SSL_PRESET_DEFAULT);
    if (rc != 0) {
        cm_tls_describe(rc, "cannot configure TLS", why, why_size);
        goto fail;
    }
    if (read_files(c, o, why, why_size) != CM_OK)
        goto fail;
    mbedtls_ssl_conf_authmode(&c->conf,
                              o->insecure ? MBEDTLS_SSL_VERIFY_NONE : MBEDTLS_SSL_VERIFY_REQUIRED);
    if (!o->insecure)
        mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
    mbedtls_ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, &c->drbg);
    mbedtls_ssl_conf_min_version(&c->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
                                 MBEDTLS_SSL_MINOR_VERSION_3);
    *out = c;
    return CM_OK;
fail:
    cm_tls_conf_free(c);
    return CM_EINVAL;
}

/* ---- the memory bio ------------------------------------------------------------ */

static int membio_send(void *ctx, const unsigned char *p, size_t n)
{
    cm_tls_membio_t *b = ctx;
    cm_buf_append(&b->out, p, n);
    return (int)n; /* records are at most 16 KiB and change */
}

static int membio_recv(void *ctx, unsigned char *p, size_t n)
{
    cm_tls_membio_t *b = ctx;
    size_t avail = b->in.len - b->in_off;
    if (avail == 0)
        return MBEDTLS_ERR_SSL_WANT_READ;
    n = CM_MIN(n, avail);
    memcpy(p, b->in.p + b->in_off, n);
    b->in_off += n;
    if (b->in_off == b->in.len) {
        cm_buf_reset(&b->in);
        b->in_off = 0;
    }
    return (int)n;
}

void cm_tls_membio_attach(struct mbedtls_ssl_context *ssl, cm_tls_membio_t *b)
{
    mbedtls_ssl_set_bio(ssl, b, membio_send, membio_recv, NULL);
}

void cm_tls_membio_feed(cm_tls_membio_t *b, const void *p, size_t n)
{
    if (b->in_off > 0) { /* drop what mbedTLS has read before growing */
        cm_buf_consume(&b->in, b->in_off);
        b->in_off = 0;
    }
    cm_buf_append(&b->in, p, n);
}

void cm_tls_membio_free(cm_tls_membio_t *b)
{
    cm_buf_free(&b->in);
    cm_buf_free(&b->out);
    b->in_off = 0;
}
