/*
 * cm/tls.h - what the clients that speak TLS (the HTTP client's https://,
 * the Redis client's rediss://) share: one client-side configuration
 * (mbedTLS) and the memory "bio" their sessions run over.
 *
 * One per client, made once: the CTR-DRBG seeded from the entropy pool, the
 * CA bundle and the optional client certificate read, peer verification
 * required unless asked otherwise (the handshake then fails on an untrusted
 * chain or a host name the certificate does not carry), TLS 1.2 the least
 * accepted. A session is set up on it with mbedtls_ssl_setup(ssl,
 * cm_tls_conf_ssl(conf)); the conf outlives its sessions.
 */
#ifndef CM_TLS_H
#define CM_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"

struct mbedtls_ssl_config;
struct mbedtls_ssl_context;
typedef struct cm_tls_conf cm_tls_conf_t;

typedef struct {
    const char *ca_file;   /* PEM bundle; required unless insecure */
    const char *cert_file; /* client certificate and key (mutual TLS); both or neither */
    const char *key_file;
    bool insecure;       /* no verification of the server's certificate */
    const char *purpose; /* personalises the DRBG seed ("cm_http_client", ...) */
} cm_tls_conf_opts_t;

/* CM_OK, or CM_EINVAL with why (a file that cannot be read names it). */
int cm_tls_conf_new(const cm_tls_conf_opts_t *o, cm_tls_conf_t **out, char *why, size_t why_size);
/* Every session set up on it must have been freed before. NULL is fine. */
void cm_tls_conf_free(cm_tls_conf_t *c);
const struct mbedtls_ssl_config *cm_tls_conf_ssl(const cm_tls_conf_t *c);

/* mbedTLS's text for an error code rc, after what: "what: text". */
void cm_tls_describe(int rc, const char *what, char *why, size_t why_size);

/* A session never sees its socket: mbedTLS reads ciphertext from `in`,
 * which the owner fills from its reads (cm_tls_membio_feed), and writes
 * into `out`, which the owner hands to its socket. Every step (handshake,
 * record in, record out) so runs on the bytes that have arrived, "need
 * more" is MBEDTLS_ERR_SSL_WANT_READ, never a blocking read, and a send
 * never blocks (`out` takes everything). Zero-initialised is empty. */
typedef struct {
    cm_buf_t in; /* ciphertext received; in.p[in_off..] not yet read by mbedTLS */
    size_t in_off;
    cm_buf_t out; /* ciphertext to send */
} cm_tls_membio_t;

/* Makes ssl read and write through b (b outlives the session). */
void cm_tls_membio_attach(struct mbedtls_ssl_context *ssl, cm_tls_membio_t *b);
void cm_tls_membio_feed(cm_tls_membio_t *b, const void *p, size_t n);
/* Ciphertext received that mbedTLS has not read yet. */
static inline bool cm_tls_membio_unread(const cm_tls_membio_t *b)
{
    return b->in.len > b->in_off;
}
void cm_tls_membio_free(cm_tls_membio_t *b);

#endif
