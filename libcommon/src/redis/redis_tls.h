/*
 * redis_tls.h - libcommon-internal: TLS for the Redis client (rediss://).
 *
 * hiredis 0.14 speaks no TLS and takes no file descriptor in its async API,
 * so a TLS connection is a relay on the loop (redis_tls.c): it connects to
 * the server over TCP, does the TLS handshake with mbedTLS, then listens on
 * a unix socket in a private (0700) directory of its own for the one hiredis
 * connection of this attempt and moves bytes between the two. redis.c owns
 * the relay like it owns the hiredis context: one per connection attempt,
 * closed with it.
 */
#ifndef CM_REDIS_TLS_H
#define CM_REDIS_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "cm/tls.h"

typedef struct cm__redis_tls_relay cm__redis_tls_relay_t;

/* The configuration is one per client, cm/tls.h's (shared with the
 * HTTP client); any relay must have been closed before it is freed. */

typedef struct {
    /* The handshake is done: connect hiredis to this unix socket now. */
    void (*ready)(void *ud, const char *path);
    /* The attempt failed or the session ended; the owner closes the relay. */
    void (*failed)(void *ud, const char *why);
    void *ud;
} cm__redis_tls_cbs_t;

/* Starts connecting to ip:port; server_name is the SNI and the name the
 * certificate must carry. Callbacks never run from here. On failure (CM_ERR
 * with why) nothing is left to close. */
int cm__redis_tls_relay_start(uv_loop_t *loop, const cm_tls_conf_t *conf, const char *ip, int port,
                              const char *server_name, const cm__redis_tls_cbs_t *cbs,
                              cm__redis_tls_relay_t **out, char *why, size_t why_size);
/* No callback runs after this; the memory goes with the handles' close
 * callbacks. The conf is not used any more. */
void cm__redis_tls_relay_close(cm__redis_tls_relay_t *t);

#endif
