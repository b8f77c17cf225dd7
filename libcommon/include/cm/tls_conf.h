/*
 * cm/tls_conf.h - one client-side TLS configuration (mbedTLS), shared by the
 * clients that speak TLS: the HTTP client (https://) and the Redis client
 * (rediss://).
 *
 * One per client, made once: the CTR-DRBG seeded from the entropy pool, the
 * CA bundle and the optional client certificate read, peer verification
 * required unless asked otherwise (the handshake then fails on an untrusted
 * chain or a host name the certificate does not carry), TLS 1.2 the least
 * accepted. A session is set up on it with mbedtls_ssl_setup(ssl,
 * cm_tls_conf_ssl(conf)); the conf outlives its sessions.
 */
#ifndef CM_TLS_CONF_H
#define CM_TLS_CONF_H

#include <stdbool.h>
#include <stddef.h>

struct mbedtls_ssl_config;
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

#endif
