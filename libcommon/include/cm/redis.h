/*
 * redis.h - an asynchronous Redis client on a libuv loop (hiredis async API).
 *
 * A cm_redis_t owns at most one connection and keeps it alive by itself: it
 * connects as soon as it is created and, whenever the connection is lost or
 * cannot be made, retries after an exponential backoff with jitter. AUTH and
 * SELECT are replayed on every (re)connect when the options ask for them.
 * The server is a TCP address (redis://), the same over TLS (rediss://,
 * mbedTLS: hiredis 0.14 has none, so redis_tls.c relays on the loop) or a
 * unix socket (unix://); the URL forms are at cm_redis_url_parse().
 *
 * A client is EITHER a command client OR a subscriber (opts.subscriber):
 *   - command clients run cm_redis_command*(). Refused (cm_redis_err_invalid):
 *     (P|S)(UN)SUBSCRIBE, MONITOR, CLIENT REPLY and HELLO, which break the
 *     one-reply-per-command rule or the RESP2 parser, and SELECT, AUTH and
 *     RESET, whose effect a reconnect would silently undo (use the options);
 *   - subscribers only take cm_redis_subscribe(); their channels are
 *     subscribed again after every reconnect, and on_connect runs once every
 *     subscription is confirmed, so the owner can reload whatever it may have
 *     missed while disconnected.
 *
 * The callback contract of a command is strict: EXACTLY ONE call per command,
 * with either a reply or an error string (one of cm_redis_err_*, compare the
 * pointers). A Redis error reply (REDIS_REPLY_ERROR) is a reply, not an error:
 * callers check reply->type. The reply belongs to the client and is valid only
 * during the callback. When the client is not connected a command fails fast:
 * its callback runs with cm_redis_err_not_connected BEFORE cm_redis_command()
 * returns; nothing is ever queued while disconnected, so a service can answer
 * 503 at once. Commands issued in the same loop iteration share one write.
 *
 * A command unanswered after command_timeout_ms drops the connection: every
 * pending command fails (cm_redis_err_timeout for those past the deadline,
 * cm_redis_err_connection_lost for the others) and the client reconnects.
 * Blocking commands (BLPOP, XREAD BLOCK...) must therefore block for less
 * than the command timeout.
 *
 * Loop-thread only. Callbacks may call any function of this API, including
 * cm_redis_close() on the client that is calling them.
 */
#ifndef CM_REDIS_H
#define CM_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis.h>
#include <uv.h>

#include "cm/buf.h"

typedef struct cm_redis cm_redis_t;

/* The err argument of a failed command is one of these (compare pointers). */
extern const char cm_redis_err_not_connected[];   /* "not connected" */
extern const char cm_redis_err_connection_lost[]; /* "connection lost" */
extern const char cm_redis_err_timeout[];         /* "timeout" */
extern const char cm_redis_err_closed[];          /* "client closed" */
extern const char cm_redis_err_invalid[];         /* "invalid command" */

/* Exactly one of reply / err is non-NULL. */
typedef void (*cm_redis_cb)(cm_redis_t *r, const redisReply *reply, const char *err, void *ud);
/* A pub/sub message; both slices are valid only during the call. */
typedef void (*cm_redis_msg_cb)(cm_redis_t *r, cm_slice_t channel, cm_slice_t msg, void *ud);
/* on_connect / on_disconnect hooks; ud is cm_redis_opts_t.ud. */
typedef void (*cm_redis_event_cb)(cm_redis_t *r, void *ud);
typedef void (*cm_redis_closed_cb)(void *ud);

/* Zero means "default" for every numeric field. */
typedef struct {
    /* redis://, rediss:// (TLS) or unix:// (see cm_redis_url_parse); when
     * set it replaces host, port, username, password and db below. */
    const char *url;
    const char *host;                /* name or numeric address; default 127.0.0.1 */
    int port;                        /* default 6379 */
    const char *username;            /* AUTH username password (Redis 6 ACL); NULL: none */
    const char *password;            /* NULL: no AUTH */
    int db;                          /* SELECT db when non-zero */
    int connect_timeout_ms;          /* resolve + connect + AUTH/SELECT; default 1000 */
    int command_timeout_ms;          /* default 1000; negative: no command timeout */
    int backoff_min_ms;              /* first retry delay; default 50 */
    int backoff_max_ms;              /* the delay doubles up to this; default 5000 */
    bool subscriber;                 /* a pub/sub-only client (see the top comment) */
    const char *name;                /* shown in log lines; default "redis" */
    cm_redis_event_cb on_connect;    /* ready (and, subscribers, subscribed) */
    cm_redis_event_cb on_disconnect; /* a ready connection was lost */
    void *ud;
} cm_redis_opts_t;

/* Counters for metrics; they only grow. */
typedef struct {
    uint64_t connects;         /* connections that became ready */
    uint64_t reconnects;       /* connection attempts after the first one */
    uint64_t connect_failures; /* attempts that failed (refused, timeout, AUTH...) */
    uint64_t disconnects;      /* ready connections lost */
    uint64_t commands;         /* commands written to a connection */
    uint64_t errors;           /* commands whose callback got an err */
    uint64_t timeouts;         /* of which cm_redis_err_timeout */
    uint64_t error_replies;    /* REDIS_REPLY_ERROR replies passed through */
    uint64_t messages;         /* pub/sub messages delivered */
} cm_redis_stats_t;

/* Creates the client and starts connecting. Returns CM_EINVAL for a bad URL
 * or option (nothing is allocated then). The hooks never run from here. */
int cm_redis_new(uv_loop_t *loop, const cm_redis_opts_t *opts, cm_redis_t **out);

/* Both return CM_OK when the command was written, or a negative code when it
 * failed fast, in which case cb has ALREADY run (with the matching err):
 * CM_EAGAIN not connected, CM_ERR client closed, CM_EINVAL a bad format,
 * a refused command or a subscriber client. Either way cb runs exactly once,
 * so never release ud on the return value. fmt is hiredis's format (%s, %b
 * for a pointer + size_t length, %d...). argvlen may be NULL (strlen). */
int cm_redis_command(cm_redis_t *r, cm_redis_cb cb, void *ud, const char *fmt, ...);
int cm_redis_command_argv(cm_redis_t *r, cm_redis_cb cb, void *ud, int argc, const char **argv,
                          const size_t *argvlen);

/* Subscriber clients only. Subscribes now when connected, otherwise on the
 * next connect, and again after every reconnect. One callback per channel:
 * subscribing twice to a channel is CM_EINVAL, as is a command client. */
int cm_redis_subscribe(cm_redis_t *r, const char *channel, cm_redis_msg_cb cb, void *ud);

/* True when commands are accepted (subscribers: when subscribed). */
bool cm_redis_connected(const cm_redis_t *r);
const cm_redis_stats_t *cm_redis_stats(const cm_redis_t *r);

/* Asynchronous: pending commands fail with cm_redis_err_closed (before this
 * returns unless it is called from a callback of this client), no hook runs
 * any more, and the memory is released from the loop's close callbacks, after
 * which on_closed(ud) runs. r must not be used after this call. */
void cm_redis_close(cm_redis_t *r, cm_redis_closed_cb on_closed, void *ud);

/* ---- URL parsing (redis_url.c) ------------------------------------------ */

/* The default CA bundle of rediss:// (Debian's system store). */
#define CM_REDIS_TLS_CA_FILE "/etc/ssl/certs/ca-certificates.crt"

typedef struct {
    char *host;          /* owned; an IPv6 address without its brackets; NULL for unix:// */
    int port;            /* default 6379 */
    char *path;          /* owned; unix:// socket path, else NULL */
    char *username;      /* owned, percent-decoded; NULL when absent */
    char *password;      /* owned, percent-decoded; NULL when absent or empty */
    int db;              /* default 0 */
    bool tls;            /* rediss:// */
    char *tls_ca_file;   /* owned; ?ssl_ca_certs=; NULL: CM_REDIS_TLS_CA_FILE */
    char *tls_cert_file; /* owned; ?ssl_certfile= (client certificate, mutual TLS) */
    char *tls_key_file;  /* owned; ?ssl_keyfile= (its private key) */
    bool tls_insecure;   /* ?ssl_cert_reqs=none: the server's certificate is not checked */
} cm_redis_url_t;

/* Parses the forms redis-py documents (redis_url.c has the grammar):
 *   redis://[[user]:password@]host[:port][/db][?query]
 *   rediss://[[user]:password@]host[:port][/db][?query]   (TLS)
 *   unix://[[user]:password@]/path/to/redis.sock[?query]
 * query: db, username, password; rediss:// also ssl_ca_certs, ssl_certfile,
 * ssl_keyfile, ssl_cert_reqs=required|none. Returns CM_OK or CM_EINVAL
 * (then *out holds nothing to free, and *why, when why is not NULL, says
 * what is wrong without quoting the URL, which may hold a password). */
int cm_redis_url_parse_why(const char *url, cm_redis_url_t *out, const char **why);
int cm_redis_url_parse(const char *url, cm_redis_url_t *out);
void cm_redis_url_free(cm_redis_url_t *u);

#endif
