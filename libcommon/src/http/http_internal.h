/*
 * http_internal.h - structures shared by the http_*.c files of libcommon.
 * Nothing outside libcommon/src includes this.
 */
#ifndef CM_HTTP_INTERNAL_H
#define CM_HTTP_INTERNAL_H

#include <llhttp.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cm/buf.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/http_server.h"
#include "cm/metrics.h"
#include "cm/uuid.h"

#define CM__HTTP_MAX_PARAMS   8
#define CM__HTTP_MAX_SEGMENTS 32

typedef struct {
    char *text; /* literal text, or the parameter name */
    size_t len;
    bool param;
} cm__segment_t;

typedef struct cm__route {
    unsigned methods;
    char *pattern;
    cm__segment_t *segs;
    size_t nsegs;
    cm_http_handler_t handler;
    void *ud;
    cm_counter_t *by_class[6]; /* requests by status class 1xx..5xx, lazily made */
    cm_histogram_t *latency;
} cm__route_t;

typedef struct {
    uint32_t name_off, name_len;
    uint32_t val_off, val_len;
} cm__hdr_t;

typedef struct {
    const char *name;  /* the route's copy */
    uint32_t off, len; /* into the request target */
} cm__param_t;

typedef enum {
    CM__CONN_OPEN,   /* reading requests / handling them */
    CM__CONN_LINGER, /* final response queued; discarding input until EOF */
    CM__CONN_CLOSING /* handles are being closed */
} cm__conn_state_t;

typedef struct cm__conn cm__conn_t;

struct cm_http_req {
    cm__conn_t *conn; /* NULL once the connection has gone */
    cm_http_server_t *srv;
    uint8_t method; /* llhttp_method_t */
    cm_buf_t head;  /* request target, then header names and values */
    uint32_t target_len;
    uint32_t path_len;
    cm__hdr_t *hdrs;
    size_t nhdrs, hdrs_cap;
    bool in_field; /* llhttp is inside a header name */
    bool in_body;
    bool keep_alive;
    bool no_cors; /* cm_http_res_no_cors: this response grants no other origin */
    cm_buf_t body;
    const cm__route_t *route;
    cm__param_t params[CM__HTTP_MAX_PARAMS];
    size_t nparams;
    cm_buf_t res_headers; /* extra response header lines */
    uint64_t start_ms;
    uint64_t start_ns;  /* uv_hrtime() at the first byte: the access line's duration */
    cm_buf_t log_extra; /* cm_http_req_log_field: "key\0value\0" pairs */
    uint8_t nlog_extra;
    char id[CM_UUID_STR_LEN + 1];
    char peer[48];
};

struct cm__conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_shutdown_t shutdown;
    cm_http_server_t *srv;
    cm__conn_t *prev, *next; /* server's connection list */
    llhttp_t parser;
    cm__conn_state_t state;
    cm_http_req_t *req;      /* being read (NULL between requests) */
    cm_http_req_t *handling; /* in a handler's hands */
    cm_buf_t stash;          /* received but not yet parsed */
    int err_status;          /* set by a parser callback that rejects the request */
    const char *err_code;
    const char *err_detail;
    uint64_t deadline_ms; /* end of the header or request phase */
    int handles_open;
    bool reading;
    bool in_dispatch; /* a handler is running below us on the stack */
    bool in_pump;
    bool write_blocked; /* unsent output above max_write_queue */
    bool peer_eof;      /* the client shut its side: answer what we have, then close */
    bool shutdown_done; /* lingering: our FIN went out after the last write */
    bool last_request;  /* an Upgrade or CONNECT was read: parse nothing after it */
    bool value_started; /* the current header value has had a piece */
    bool value_at_end;  /* ... and that piece ended where its input buffer did */
    const char *exec_begin, *exec_end; /* the buffer llhttp is parsing */
    char peer[48];
};

struct cm_http_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_timer_t drain_timer;
    cm_http_server_opts_t opts;
    char *service;
    char *cors_methods;
    llhttp_settings_t settings;
    cm__route_t *routes;
    size_t nroutes;
    cm__conn_t *conns;
    size_t nconns;
    cm__route_t unmatched; /* metrics for requests without a route */
    bool listening;
    bool draining;
    bool listener_closed;
    bool drain_timer_closed;
    bool done_called;
    bool freeing;
    void (*drain_done)(void *ud);
    void *drain_ud;
    int port;
    uint64_t sample_state; /* xorshift state of the access log's sampling */
};

/* http_conn.c */
void cm__conn_accept(cm_http_server_t *srv);
void cm__conn_close(cm__conn_t *c);
void cm__conn_response_queued(cm__conn_t *c, bool close_after);
void cm__conn_write_done(cm__conn_t *c, int status);
void cm__conn_settings_init(llhttp_settings_t *s);
bool cm__conn_is_idle(const cm__conn_t *c);

/* http_server.c */
void cm__server_conn_closed(cm_http_server_t *srv, cm__conn_t *c);

/* http_router.c */
void cm__route_compile(cm__route_t *r, const char *pattern);
void cm__route_free(cm__route_t *r);
/* Finds the route for req's path and method; sets req->route and params.
 * Returns 0, 404 (no path match) or 405 (path matched; *allowed gets the methods). */
int cm__route_find(cm_http_server_t *srv, cm_http_req_t *req, unsigned *allowed);

/* http_response.c */
void cm__req_free(cm_http_req_t *req);
void cm__respond_early_error(cm__conn_t *c, int status, const char *code, const char *detail);
void cm__req_record(cm_http_req_t *req, const cm__route_t *route, int status);
unsigned cm__method_bit(uint8_t llhttp_method);

/* http_access.c: the request's access line (sampled; errors always). */
void cm__access_log(cm_http_req_t *req, int status, size_t bytes_out);

#endif
