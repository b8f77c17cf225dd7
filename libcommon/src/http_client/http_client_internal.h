/*
 * http_client_internal.h - what the http_client*.c files share. Nothing
 * outside libcommon/src includes this, except the client's fuzz target
 * (tests/fuzz/fuzz_http_client.c), which drives the response parser and
 * the request writer directly.
 *
 *   http_client.c        the public calls, requests, the pool, deadlines
 *   http_client_conn.c   one connection: resolve, filter, connect, TLS, I/O
 *   http_client_parse.c  the response parser (llhttp in HTTP_RESPONSE mode)
 *   http_client_wire.c   URL parsing and the request's bytes
 *   http_client_tls.c    mbedTLS over memory buffers (no libuv in it)
 *   http_client_addr.c   cm_http_client_public_only
 */
#ifndef CM_HTTP_CLIENT_INTERNAL_H
#define CM_HTTP_CLIENT_INTERNAL_H

#include <llhttp.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cm/buf.h"
#include "cm/http_client.h"
#include "cm/tls.h"

/* ---- the response parser (http_client_parse.c) --------------------------- */

/* The header section alone may not exceed this (nor max_bytes). */
#define CM__HC_MAX_HEAD (64 * 1024)

typedef struct {
    uint32_t name_off, name_len;
    uint32_t val_off, val_len;
} cm__hc_hdr_t;

typedef struct {
    llhttp_t llhttp;
    cm_buf_t head; /* header names and values, back to back */
    cm__hc_hdr_t *hdrs;
    size_t nhdrs, hdrs_cap;
    cm_http_client_header_t *out; /* built by cm__http_client_parse_result */
    cm_buf_t body;
    size_t max_bytes;
    int err;        /* set by a callback that stopped the parser */
    bool head_only; /* the request was a HEAD: no body follows the headers */
    bool in_field;
    bool complete;
    bool keep_alive; /* valid once complete */
    char why[128];   /* the failure in words */
} cm__http_client_parse_t;

void cm__http_client_parse_init(cm__http_client_parse_t *p, bool head_only, size_t max_bytes);
void cm__http_client_parse_free(cm__http_client_parse_t *p);
/* Feeds bytes. Returns 0 when more are needed (all were used), 1 when a
 * final response is complete (its last byte is data[*used - 1]; what
 * follows is not parsed), or CM_ETOOBIG / CM_EIO with p->why. */
int cm__http_client_parse_feed(cm__http_client_parse_t *p, const char *data, size_t n,
                               size_t *used);
/* The server closed the connection: 1 when that completes the response (a
 * body delimited by the close), otherwise CM_EIO with p->why. */
int cm__http_client_parse_eof(cm__http_client_parse_t *p);
/* Fills res from a complete response; valid until the parser is freed. */
void cm__http_client_parse_result(cm__http_client_parse_t *p, cm_http_client_res_t *res);

/* ---- the request's bytes (http_client_wire.c) ------------------------------ */

typedef struct {
    bool tls;
    bool head_only; /* a HEAD request */
    bool safe;      /* GET or HEAD: may be retried on a fresh connection */
    int port;
    char *host;     /* owned, lower case; an IPv6 address without brackets */
    char *key;      /* owned: "scheme://host:port", the pool's key */
    cm_buf_t bytes; /* the request line, headers and body */
} cm__http_client_wire_t;

/* Checks the request and writes it out. CM_EINVAL with *why (a static
 * string) when it cannot be sent; w holds nothing to free then. */
int cm__http_client_wire_build(cm__http_client_wire_t *w, const cm_http_client_req_t *req,
                               const char *user_agent, const char **why);
void cm__http_client_wire_free(cm__http_client_wire_t *w);

/* ---- TLS over memory buffers (http_client_tls.c) ----------------------------- */

typedef struct cm__http_client_tls cm__http_client_tls_t;

/* One per client (cm/tls.h): the DRBG seeded once, the CA chain read
 * from ca_file, verification required. */
int cm__http_client_tls_conf_new(const char *ca_file, cm_tls_conf_t **out, char *why,
                                 size_t why_size);
/* One per connection; host is sent as SNI and checked against the
 * certificate. */
int cm__http_client_tls_new(const cm_tls_conf_t *conf, const char *host,
                            cm__http_client_tls_t **out);
void cm__http_client_tls_free(cm__http_client_tls_t *t);
/* Ciphertext from the socket. */
void cm__http_client_tls_feed(cm__http_client_tls_t *t, const char *p, size_t n);
/* 0 when the handshake is done, CM_EAGAIN when it needs more input, or
 * CM_EUNAVAIL with why (the certificate was refused, say). */
int cm__http_client_tls_handshake(cm__http_client_tls_t *t, char *why, size_t why_size);
/* Plaintext: a count > 0, 0 when the peer closed, CM_EAGAIN when more input
 * is needed, or CM_EIO with why. */
int cm__http_client_tls_read(cm__http_client_tls_t *t, char *buf, size_t cap, char *why,
                             size_t why_size);
/* Encrypts all of p into the output; 0 or CM_EIO. */
int cm__http_client_tls_write(cm__http_client_tls_t *t, const char *p, size_t n);
/* True when received input is still unread (decrypted or not). */
bool cm__http_client_tls_pending(const cm__http_client_tls_t *t);
/* Ciphertext to send, handed over (free() it), or NULL when none. */
char *cm__http_client_tls_output(cm__http_client_tls_t *t, size_t *len);

/* ---- the client, its requests and connections ------------------------------- */

typedef enum {
    CM__HC_RESOLVING,  /* uv_getaddrinfo in flight */
    CM__HC_CONNECTING, /* trying the resolved addresses in turn */
    CM__HC_HANDSHAKE,  /* TLS handshake */
    CM__HC_ACTIVE,     /* the request is written, the response read */
    CM__HC_IDLE,       /* in the pool */
    CM__HC_CLOSING     /* the TCP handle is closing; freed from its close callback */
} cm__hc_state_t;

typedef struct cm__hc_conn cm__hc_conn_t;
typedef struct cm__hc_resolve cm__hc_resolve_t;

struct cm_http_client_call {
    cm_http_client_call_t *prev, *next; /* the client's calls */
    cm_http_client_t *client;
    cm__hc_conn_t *conn; /* the connection serving it, if any */
    cm_http_client_cb cb;
    void *ud;
    cm__http_client_wire_t wire;
    cm__http_client_parse_t res;
    uint64_t timeout, connect_timeout; /* ms */
    uint64_t read_timeout;             /* ms without a byte once sent; 0: none */
    uint64_t deadline;                 /* uv_now() by which the callback runs */
    uint64_t connect_deadline;         /* ... by which its connection is ready */
    uint64_t read_deadline;            /* ... by which the next byte comes; 0: none */
    bool may_retry;
    bool retried;
    bool got_bytes; /* a byte of the response arrived on the current connection */
    bool started;   /* wire and res are set up */
    bool queued;    /* failed inside cm_http_client_request: the timer runs cb */
    int status;     /* when queued */
    char why[256];
};

struct cm__hc_conn {
    cm__hc_conn_t *prev, *next; /* the client's connections */
    cm_http_client_t *client;
    cm_http_client_call_t *call; /* NULL when idle or closing */
    cm__hc_state_t state;
    uv_tcp_t tcp; /* data = this connection */
    uv_connect_t connect;
    cm__hc_resolve_t *resolve;
    struct addrinfo *addrs, *next_addr; /* while connecting */
    cm__http_client_tls_t *tls;
    bool want_tls;
    char *host;
    int port;
    char *key;
    uint64_t idle_since;
    unsigned served; /* responses completed: more than 0 means reused */
    int writes;      /* uv_write requests in flight */
    int attempts;    /* connect() calls made */
    int last_err;    /* libuv code of the last failed attempt */
    char addr[64];   /* the address tried last, or refused last */
    bool refused;    /* the filter refused an address */
};

struct cm_http_client {
    uv_loop_t *loop;
    uv_timer_t timer; /* every deadline, and queued callbacks */
    uint64_t timer_due;
    bool timer_armed;
    bool timer_closed;
    bool submitting; /* inside cm_http_client_request: callbacks must wait */
    bool closing;
    uint64_t connect_timeout, timeout, idle_timeout, read_timeout; /* ms */
    size_t max_response;
    size_t max_idle;
    char *ca_file, *user_agent, *name;
    cm_http_client_filter_cb filter;
    void *filter_ud;
    cm_tls_conf_t *tls; /* made on the first https request */
    cm_http_client_call_t *calls, *calls_tail;
    cm__hc_conn_t *conns;
    size_t nconns;
    cm_http_client_closed_cb on_closed;
    void *closed_ud;
    char rbuf[64 * 1024]; /* every read lands here and is parsed at once */
};

/* http_client.c, for the connection. Each is the last thing the connection
 * code does in its libuv callback: what runs below may close the client or
 * hand the connection to another request. */
void cm__http_client_schedule(cm_http_client_t *c, uint64_t due);
void cm__http_client_on_response(cm__hc_conn_t *k, bool reusable);
/* retryable: no byte of the response came back (the server closed a
 * connection it may have thought idle). */
void cm__http_client_on_failure(cm__hc_conn_t *k, int status, bool retryable, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void cm__http_client_conn_gone(cm_http_client_t *c);

/* http_client_conn.c */
void cm__http_client_conn_open(cm_http_client_t *c, cm_http_client_call_t *call);
void cm__http_client_conn_send(cm__hc_conn_t *k);
void cm__http_client_conn_close(cm__hc_conn_t *k);

#endif
