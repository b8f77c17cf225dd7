/*
 * http_client.c - the HTTP client's requests, pool and deadlines (see
 * http_client.h; the connection itself is http_client_conn.c).
 *
 * Owners
 * ------
 * The client owns its calls (one per request, listed in `calls` until the
 * callback runs), its connections (`conns`, until their TCP handle has
 * closed), one timer and the TLS configuration. A call owns its request's
 * bytes, kept for a retry, and the response being parsed. It is served by
 * at most one connection at a time; the two point at each other while that
 * lasts, and call_detach() parts them (closing the connection, which is
 * mid-request).
 *
 * A call ends in call_finish() and nowhere else: unlinked, its callback
 * run, freed. Whoever calls call_finish() touches nothing afterwards: the
 * callback may have closed the client, cancelled other calls or handed the
 * connection the response came on to a new request. The client's memory
 * itself only goes from a close callback, so it outlives any such stack.
 *
 * Deadlines
 * ---------
 * One timer serves the whole client. It is armed for the earliest deadline
 * it has been told about (cm__http_client_schedule); when it fires it
 * scans the calls and the pool and re-arms for the next one. Calls that end
 * early leave it armed: a spurious wake-up costs a scan of a short list.
 * The same timer, armed at 0, runs the callbacks of calls that failed
 * inside cm_http_client_request (a bad URL, a closed client), which
 * therefore never run from the call itself.
 *
 * The pool is the connections in state IDLE, found by their key
 * "scheme://host:port"; the most recently used one is taken first. The
 * retry of a request whose reused connection the server had closed goes to
 * a new connection, never another pooled one: those are as old.
 */
#include "cm/http_client.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "http_client_internal.h"

#define DEFAULT_CONNECT_TIMEOUT_MS 5000
#define DEFAULT_TIMEOUT_MS         30000
#define DEFAULT_IDLE_TIMEOUT_MS    30000
#define DEFAULT_MAX_RESPONSE       ((size_t)16 << 20)
#define DEFAULT_MAX_IDLE           8

static void on_timer(uv_timer_t *t);
static void call_connect(cm_http_client_call_t *call, bool reuse);

/* ---- calls ------------------------------------------------------------------- */

static void call_unlink(cm_http_client_call_t *call)
{
    cm_http_client_t *c = call->client;
    *(call->prev ? &call->prev->next : &c->calls) = call->next;
    *(call->next ? &call->next->prev : &c->calls_tail) = call->prev;
    call->prev = call->next = NULL;
}

static void call_free(cm_http_client_call_t *call)
{
    if (call->started) {
        cm__http_client_wire_free(&call->wire);
        cm__http_client_parse_free(&call->res);
    }
    free(call);
}

/* Runs the callback and frees the call. Inside cm_http_client_request the
 * call is queued instead, and the timer finishes it. */
static void call_finish(cm_http_client_call_t *call, int status)
{
    cm_http_client_t *c = call->client;
    if (c->submitting) {
        call->queued = true;
        call->status = status;
        cm__http_client_schedule(c, uv_now(c->loop));
        return;
    }
    call_unlink(call);
    cm_http_client_res_t res = {.error = call->why};
    if (status == CM_OK)
        cm__http_client_parse_result(&call->res, &res);
    if (call->cb != NULL)
        call->cb(status, &res, call->ud);
    call_free(call);
}

static void call_fail(cm_http_client_call_t *call, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void call_fail(cm_http_client_call_t *call, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->why, sizeof(call->why), fmt, ap);
    va_end(ap);
    call_finish(call, status);
}

/* Parts a call from its connection, which is closed: it was mid-request. */
static void call_detach(cm_http_client_call_t *call)
{
    cm__hc_conn_t *k = call->conn;
    if (k == NULL)
        return;
    call->conn = NULL;
    k->call = NULL;
    cm__http_client_conn_close(k);
}

static bool call_connecting(const cm_http_client_call_t *call)
{
    return call->conn != NULL && call->conn->state < CM__HC_ACTIVE;
}

/* ---- the pool ------------------------------------------------------------------ */

static size_t pool_count(cm_http_client_t *c, const char *key)
{
    size_t n = 0;
    for (cm__hc_conn_t *k = c->conns; k != NULL; k = k->next)
        n += k->state == CM__HC_IDLE && strcmp(k->key, key) == 0;
    return n;
}

static cm__hc_conn_t *pool_take(cm_http_client_t *c, const char *key)
{
    uint64_t now = uv_now(c->loop);
    cm__hc_conn_t *best = NULL;
    for (cm__hc_conn_t *k = c->conns; k != NULL; k = k->next)
        if (k->state == CM__HC_IDLE && now - k->idle_since < c->idle_timeout &&
            strcmp(k->key, key) == 0 && (best == NULL || k->idle_since > best->idle_since))
            best = k;
    return best;
}

/* ---- what the connections report --------------------------------------------------- */

void cm__http_client_on_response(cm__hc_conn_t *k, bool reusable)
{
    cm_http_client_t *c = k->client;
    cm_http_client_call_t *call = k->call;
    uint64_t now = uv_now(c->loop);

    k->call = NULL;
    call->conn = NULL;
    k->served++;
    if (reusable && !c->closing && pool_count(c, k->key) < c->max_idle) {
        k->state = CM__HC_IDLE; /* before the callback, which may reuse it */
        k->idle_since = now;
        cm__http_client_schedule(c, now + c->idle_timeout);
    } else {
        cm__http_client_conn_close(k);
    }
    call_finish(call, CM_OK);
}

void cm__http_client_on_failure(cm__hc_conn_t *k, int status, bool retryable, const char *fmt, ...)
{
    cm_http_client_t *c = k->client;
    cm_http_client_call_t *call = k->call;
    bool reused = k->served > 0;
    va_list ap;

    call_detach(call);
    if (retryable && reused && call->may_retry && !call->retried && !c->closing) {
        size_t max = call->res.max_bytes;
        call->retried = true;
        cm_log(CM_LOG_DEBUG, NULL, "%s: %s closed a kept-alive connection; sending again", c->name,
               call->wire.key);
        cm__http_client_parse_free(&call->res);
        cm__http_client_parse_init(&call->res, call->wire.head_only, max);
        call_connect(call, false);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(call->why, sizeof(call->why), fmt, ap);
    va_end(ap);
    call_finish(call, status);
}

static void maybe_free(cm_http_client_t *c)
{
    if (!c->timer_closed || c->nconns > 0)
        return;
    cm_http_client_closed_cb done = c->on_closed;
    void *ud = c->closed_ud;
    cm_tls_conf_free(c->tls);
    free(c->ca_file);
    free(c->user_agent);
    free(c->name);
    free(c);
    if (done != NULL)
        done(ud);
}

void cm__http_client_conn_gone(cm_http_client_t *c)
{
    c->nconns--;
    maybe_free(c);
}

/* ---- deadlines ------------------------------------------------------------------- */

void cm__http_client_schedule(cm_http_client_t *c, uint64_t due)
{
    if (c->closing || (c->timer_armed && c->timer_due <= due))
        return;
    uint64_t now = uv_now(c->loop);
    c->timer_armed = true;
    c->timer_due = due;
    uv_timer_start(&c->timer, on_timer, due > now ? due - now : 0, 0);
}

/* The first call whose callback is due: queued, or past a deadline. */
static cm_http_client_call_t *due_call(cm_http_client_t *c, uint64_t now)
{
    for (cm_http_client_call_t *call = c->calls; call != NULL; call = call->next)
        if (call->queued || now >= call->deadline ||
            (call_connecting(call) && now >= call->connect_deadline) ||
            (call->read_deadline && now >= call->read_deadline))
            return call;
    return NULL;
}

static void expire(cm_http_client_call_t *call, uint64_t now)
{
    if (call->queued) {
        call->queued = false;
        call_finish(call, call->status);
        return;
    }
    bool in_connect = call_connecting(call) && now < call->deadline;
    bool stalled =
        !in_connect && call->read_deadline && now >= call->read_deadline && now < call->deadline;
    call_detach(call);
    if (stalled)
        call_fail(call, CM_ETIMEDOUT, "%s sent nothing for %llu ms", call->wire.host,
                  (unsigned long long)call->read_timeout);
    else if (in_connect)
        call_fail(call, CM_ETIMEDOUT, "connecting to %s took longer than %llu ms", call->wire.host,
                  (unsigned long long)call->connect_timeout);
    else
        call_fail(call, CM_ETIMEDOUT, "no response from %s within %llu ms", call->wire.host,
                  (unsigned long long)call->timeout);
}

static void on_timer(uv_timer_t *t)
{
    cm_http_client_t *c = t->data;
    uint64_t now = uv_now(c->loop), next = UINT64_MAX;
    cm_http_client_call_t *call;

    c->timer_armed = false;
    while (!c->closing && (call = due_call(c, now)) != NULL)
        expire(call, now); /* a callback runs: start the scan again */
    if (c->closing)
        return;
    for (cm__hc_conn_t *k = c->conns; k != NULL; k = k->next) {
        if (k->state != CM__HC_IDLE)
            continue;
        if (now - k->idle_since >= c->idle_timeout)
            cm__http_client_conn_close(k); /* unlinked later, from its close callback */
        else
            next = CM_MIN(next, k->idle_since + c->idle_timeout);
    }
    for (call = c->calls; call != NULL; call = call->next) {
        next = CM_MIN(next, call->deadline);
        if (call_connecting(call))
            next = CM_MIN(next, call->connect_deadline);
        if (call->read_deadline)
            next = CM_MIN(next, call->read_deadline);
    }
    if (next != UINT64_MAX)
        cm__http_client_schedule(c, next);
}

/* ---- starting a request --------------------------------------------------------------- */

static void call_connect(cm_http_client_call_t *call, bool reuse)
{
    cm_http_client_t *c = call->client;
    cm__hc_conn_t *k = reuse ? pool_take(c, call->wire.key) : NULL;
    if (k != NULL) {
        k->call = call;
        call->conn = k;
        cm__http_client_conn_send(k);
        return;
    }
    call->connect_deadline = uv_now(c->loop) + call->connect_timeout;
    cm__http_client_schedule(c, call->connect_deadline);
    cm__http_client_conn_open(c, call);
}

/* The CA file is read on the first https request, and again on the next
 * one when it failed (the file may have been fixed). */
static bool tls_ready(cm_http_client_call_t *call)
{
    cm_http_client_t *c = call->client;
    char why[200];
    if (c->tls != NULL ||
        cm__http_client_tls_conf_new(c->ca_file, &c->tls, why, sizeof(why)) == CM_OK)
        return true;
    cm_log(CM_LOG_ERROR, NULL, "%s: %s", c->name, why);
    call_fail(call, CM_EINVAL, "%s", why);
    return false;
}

static void call_start(cm_http_client_call_t *call, const cm_http_client_req_t *req)
{
    cm_http_client_t *c = call->client;
    const char *why;

    if (c->closing) {
        call_fail(call, CM_ERR, "client closed");
        return;
    }
    if (req == NULL || call->cb == NULL) {
        call_fail(call, CM_EINVAL, "no request or no callback");
        return;
    }
    if (cm__http_client_wire_build(&call->wire, req, c->user_agent, &why) != CM_OK) {
        call_fail(call, CM_EINVAL, "%s", why);
        return;
    }
    call->started = true;
    cm__http_client_parse_init(&call->res, call->wire.head_only,
                               req->max_response_bytes > 0 ? req->max_response_bytes
                                                           : c->max_response);
    call->may_retry = call->wire.safe || req->idempotent;
    if (call->wire.tls && !tls_ready(call))
        return;
    cm__http_client_schedule(c, call->deadline);
    call_connect(call, true);
}

cm_http_client_call_t *cm_http_client_request(cm_http_client_t *c, const cm_http_client_req_t *req,
                                              cm_http_client_cb cb, void *ud)
{
    cm_http_client_call_t *call = cm_xcalloc(1, sizeof(*call));
    uint64_t now = uv_now(c->loop);

    call->client = c;
    call->cb = cb;
    call->ud = ud;
    call->timeout = req != NULL && req->timeout_ms > 0 ? (uint64_t)req->timeout_ms : c->timeout;
    call->connect_timeout = req != NULL && req->connect_timeout_ms > 0
                                ? (uint64_t)req->connect_timeout_ms
                                : c->connect_timeout;
    call->read_timeout =
        req != NULL && req->read_timeout_ms > 0 ? (uint64_t)req->read_timeout_ms : c->read_timeout;
    call->deadline = now + call->timeout;
    call->prev = c->calls_tail;
    *(c->calls_tail ? &c->calls_tail->next : &c->calls) = call;
    c->calls_tail = call;
    c->submitting = true;
    call_start(call, req);
    c->submitting = false;
    return call;
}

void cm_http_client_cancel(cm_http_client_call_t *call)
{
    if (call == NULL)
        return;
    call_detach(call);
    call->queued = false;
    call_fail(call, CM_ERR, "cancelled");
}

/* ---- life cycle ------------------------------------------------------------------ */

static uint64_t ms_opt(int v, int def)
{
    return (uint64_t)(v > 0 ? v : def);
}

int cm_http_client_new(uv_loop_t *loop, const cm_http_client_opts_t *opts, cm_http_client_t **out)
{
    static const cm_http_client_opts_t defaults;
    const cm_http_client_opts_t *o = opts != NULL ? opts : &defaults;

    *out = NULL;
    if (loop == NULL || o->connect_timeout_ms < 0 || o->timeout_ms < 0 || o->idle_timeout_ms < 0 ||
        o->read_timeout_ms < 0 || o->max_idle_per_host < 0)
        return CM_EINVAL;
    cm_http_client_t *c = cm_xcalloc(1, sizeof(*c));
    c->loop = loop;
    c->connect_timeout = ms_opt(o->connect_timeout_ms, DEFAULT_CONNECT_TIMEOUT_MS);
    c->timeout = ms_opt(o->timeout_ms, DEFAULT_TIMEOUT_MS);
    c->idle_timeout = ms_opt(o->idle_timeout_ms, DEFAULT_IDLE_TIMEOUT_MS);
    c->read_timeout = o->read_timeout_ms > 0 ? (uint64_t)o->read_timeout_ms : 0;
    c->max_response = o->max_response_bytes > 0 ? o->max_response_bytes : DEFAULT_MAX_RESPONSE;
    c->max_idle = (size_t)(o->max_idle_per_host > 0 ? o->max_idle_per_host : DEFAULT_MAX_IDLE);
    c->ca_file =
        cm_xstrdup(o->ca_file != NULL && o->ca_file[0] ? o->ca_file : CM_HTTP_CLIENT_CA_FILE);
    c->user_agent = o->user_agent != NULL && o->user_agent[0] ? cm_xstrdup(o->user_agent) : NULL;
    c->name = cm_xstrdup(o->name != NULL ? o->name : "http_client");
    c->filter = o->filter;
    c->filter_ud = o->filter_ud;
    uv_timer_init(loop, &c->timer);
    c->timer.data = c;
    *out = c;
    return CM_OK;
}

static void on_timer_closed(uv_handle_t *h)
{
    cm_http_client_t *c = h->data;
    c->timer_closed = true;
    maybe_free(c);
}

void cm_http_client_close(cm_http_client_t *c, cm_http_client_closed_cb done, void *ud)
{
    if (c == NULL || c->closing)
        return;
    c->closing = true;
    c->on_closed = done;
    c->closed_ud = ud;
    for (cm__hc_conn_t *k = c->conns; k != NULL; k = k->next)
        cm__http_client_conn_close(k); /* each is unlinked later, from its close callback */
    /* Callbacks may start requests: those fail in this loop too. */
    while (c->calls != NULL) {
        cm_http_client_call_t *call = c->calls;
        call_detach(call);
        if (!call->queued) {
            call->status = CM_ERR;
            snprintf(call->why, sizeof(call->why), "client closed");
        }
        call->queued = false;
        call_finish(call, call->status);
    }
    uv_close((uv_handle_t *)&c->timer, on_timer_closed);
}

cm_slice_t cm_http_client_res_header(const cm_http_client_res_t *res, const char *name)
{
    for (size_t i = 0; i < res->nheaders; i++)
        if (cm_slice_eq_nocase(res->headers[i].name, name))
            return res->headers[i].value;
    return CM_SLICE_NULL;
}
