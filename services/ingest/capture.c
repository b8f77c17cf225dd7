/*
 * capture.c - the capture routes: one handler behind /capture, /e, /i/v0/e,
 * /batch, /track and /engage (with and without the trailing slash).
 *
 * A request is answered 200 {"status":"Ok"} only after the queue has
 * acknowledged every one of its events. Its events go to the queue as one
 * batch (queue.h): admitted whole or refused whole, so a saturated or
 * failing queue gets a 503 with Retry-After before anything is written,
 * and a request larger than the queue's in-flight window is produced in
 * steps. The only partial write left is a queue that fails in the middle
 * of a batch: the client retries, the events it already wrote are queued
 * twice, and since they keep the uuids the client sent, the writer drops
 * the copies (docs/ingest.md).
 *
 * A token the registry does not know waits for a re-check in Redis before
 * it is refused (a project created a moment ago: registry.h).
 *
 * A large body is decoded and its events built on the thread pool
 * (payload extraction and event building are pure), so one big batch does
 * not stop the loop; the rest of the request runs on the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/client_ip.h"
#include "cm/api_error.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/timefmt.h"
#include "events.h"
#include "ingest.h"
#include "payload.h"

/* Bodies above this are decoded and built off the loop: about 1 ms of
 * work on the loop; below it the thread pool's round trip costs more. */
#define OFFLOAD_MIN_BYTES   (16 * 1024)
#define OFFLOAD_FREE_EVENTS 5000
#define LOG_INTERVAL_MS     1000

typedef struct {
    ing_ctx_t *ctx;
    cm_http_req_t *req;
    uv_work_t work;
    bool legacy;
    int rc; /* of build() */
    ing_request_t info;
    char ip[64];
    cm_api_error_t err;
    ing_batch_t batch;
    bool beacon;
} capture_t;

static void free_work(uv_work_t *w)
{
    capture_t *c = w->data;
    ing_batch_free(&c->batch);
}

static void free_after(uv_work_t *w, int status)
{
    (void)status;
    free(w->data);
}

/* Freeing 100,000 events is tens of milliseconds of free(): off the loop. */
static void capture_free(capture_t *c)
{
    if (c->batch.n >= OFFLOAD_FREE_EVENTS) {
        c->work.data = c;
        uv_queue_work(c->ctx->loop, &c->work, free_work, free_after);
        return;
    }
    ing_batch_free(&c->batch);
    free(c);
}

static void reject(ing_ctx_t *ctx, cm_http_req_t *req, const cm_api_error_t *e)
{
    uint64_t skipped;
    cm_counter_inc(ctx->requests_rejected);
    if (cm_log_limit(&ctx->reject_log, uv_now(ctx->loop), LOG_INTERVAL_MS, &skipped))
        cm_log(CM_LOG_INFO, cm_http_req_id(req),
               "capture rejected: %d %s: %s (%llu more rejected since the last line)", e->status,
               e->code, e->detail, (unsigned long long)skipped);
    cm_http_respond_api_error(req, e);
}

/* 503 before anything was written: the queue is down or saturated. */
static void refuse(capture_t *c, const char *why)
{
    ing_ctx_t *ctx = c->ctx;
    uint64_t skipped;
    char secs[24];
    cm_counter_inc(ctx->requests_refused);
    if (cm_log_limit(&ctx->refusal_log, uv_now(ctx->loop), LOG_INTERVAL_MS, &skipped))
        cm_log(CM_LOG_WARN, cm_http_req_id(c->req),
               "capture refused, nothing written: %s (%llu more refused since the last line)", why,
               (unsigned long long)skipped);
    cm_fmt_uint64(secs, (cm_queue_retry_after_ms(ctx->queue) + 999) / 1000);
    cm_http_res_header(c->req, "Retry-After", secs);
    cm_api_error_t e;
    cm_api_error_set(&e, 503, "queue_unavailable", NULL,
                     "The event queue cannot take this request now; nothing of it was written. "
                     "Retry later.");
    cm_http_respond_api_error(c->req, &e);
}

static void respond_ok(cm_http_req_t *req, bool beacon)
{
    if (beacon)
        cm_http_respond(req, 204, NULL, "", 0);
    else
        cm_http_respond(req, 200, "application/json", "{\"status\":\"Ok\"}", 15);
}

static void on_batch_done(const cm_queue_batch_result_t *r, void *ud)
{
    capture_t *c = ud;
    ing_ctx_t *ctx = c->ctx;
    uint64_t skipped;

    cm_counter_add(ctx->events_queued, r->acked);
    cm_counter_add(ctx->events_failed, r->failed + r->unsent);
    cm_api_error_t e;
    if (r->status == CM_ETOOBIG) {
        cm_api_error_set(&e, 413, "event_too_large", NULL,
                         "The queue refused an event as too large.");
        cm_http_respond_api_error(c->req, &e);
    } else if (r->status != 0) {
        if (cm_log_limit(&ctx->failure_log, uv_now(ctx->loop), LOG_INTERVAL_MS, &skipped))
            cm_log(CM_LOG_WARN, cm_http_req_id(c->req),
                   "queue failed mid-request: %s: %zu acked, %zu failed, %zu unsent "
                   "(%llu more such requests since the last line)",
                   r->err ? r->err : "error", r->acked, r->failed, r->unsent,
                   (unsigned long long)skipped);
        cm_api_error_set(&e, 503, "queue_unavailable", NULL,
                         "The event queue did not acknowledge every event; retry the request.");
        cm_http_respond_api_error(c->req, &e);
    } else {
        respond_ok(c->req, c->beacon);
    }
    capture_free(c);
}

/* Message key and headers as PostHog capture writes them (proto/). */
static int emit_event(cm_queue_batch_t *qb, size_t i, void *ud)
{
    capture_t *c = ud;
    ing_ctx_t *ctx = c->ctx;
    const ing_event_t *e = &c->batch.events[i];
    /* token:distinct_id; distinct_id is at most 200 characters (800 bytes). */
    char key[ING_MAX_TOKEN + 1 + 4 * ING_MAX_DISTINCT_ID_CHARS];
    char ts_ms[32];
    size_t tlen = strlen(c->batch.token);
    size_t dlen = CM_MIN(e->distinct_id.len, sizeof(key) - tlen - 1);
    memcpy(key, c->batch.token, tlen);
    key[tlen] = ':';
    memcpy(key + tlen + 1, e->distinct_id.p, dlen);
    size_t klen = tlen + 1 + dlen;
    cm_fmt_int64(ts_ms, e->timestamp_us / 1000);
    cm_queue_header_t headers[] = {
        {CM_SLICE_LIT("token"), cm_slice_from_cstr(c->batch.token)},
        {CM_SLICE_LIT("distinct_id"), cm_buf_slice(&e->distinct_id)},
        {CM_SLICE_LIT("timestamp"), cm_slice_from_cstr(ts_ms)},
        {CM_SLICE_LIT("event"), cm_slice_from_cstr(e->event)},
        {CM_SLICE_LIT("uuid"), cm_slice_from_cstr(e->uuid)},
        {CM_SLICE_LIT("now"), cm_slice_from_cstr(c->batch.now)},
        {CM_SLICE_LIT("historical_migration"),
         c->batch.historical ? CM_SLICE_LIT("true") : CM_SLICE_LIT("false")},
    };
    cm_queue_msg_t msg = {
        .topic = c->batch.historical ? ctx->cfg.topic_historical : ctx->cfg.topic_main,
        .key = {key, klen},
        .value = cm_buf_slice(&e->message),
        .headers = headers,
        .nheaders = CM_ARRAY_LEN(headers),
    };
    return cm_queue_batch_send(qb, &msg);
}

/* The client's address under INGEST_TRUSTED_PROXIES (cm/client_ip.h). */
static void client_ip(const ing_ctx_t *ctx, cm_http_req_t *req, char *out, size_t outlen)
{
    char buf[CM_IP_BUFLEN];
    const char *ip = cm_client_ip(cm_http_req_header(req, "X-Forwarded-For"), cm_http_req_peer(req),
                                  ctx->cfg.svc.trusted_proxies, buf, sizeof(buf));
    snprintf(out, outlen, "%s", ip ? ip : "");
}

static bool is_legacy(cm_slice_t path)
{
    return cm_slice_starts_with(path, "/e") || cm_slice_starts_with(path, "/capture") ||
           cm_slice_starts_with(path, "/track") || cm_slice_starts_with(path, "/engage");
}

/* Decoding and building: pure, so it may run on the thread pool. It reads
 * only the request's head and body, which nothing changes while the
 * handler holds the request. */
static void build(capture_t *c)
{
    ing_payload_t payload;
    c->rc = ing_payload_extract(c->req, c->legacy, c->ctx->cfg.max_decoded, &payload, &c->err);
    if (c->rc == 0) {
        c->beacon = payload.beacon;
        c->info.query_sent_at_us = payload.sent_at_us;
        c->rc = ing_events_build(payload.json.p, payload.json.len, &c->info, &c->batch, &c->err);
    }
    ing_payload_free(&payload);
}

/* The token is a project's (or the registry is empty: fail open). */
static void admit(capture_t *c)
{
    ing_ctx_t *ctx = c->ctx;
    cm_http_req_t *req = c->req;
    const char *why = NULL;
    cm_slice_t token = cm_slice_from_cstr(c->batch.token);
    char logged[72];

    /* The access line's project: ingest knows tokens, not their ids (a
     * project token is public: pages embed it). Cut: it is the client's. */
    snprintf(logged, sizeof(logged), "%.64s", c->batch.token);
    cm_http_req_log_field(req, "project_token", logged);
    cm_counter_add(ctx->events_filtered, c->batch.dropped);
    if (ing_registry_quota_limited(ctx->registry, token)) {
        /* As PostHog does: drop, count, and answer 200 so clients do not retry. */
        cm_counter_add(ctx->events_quota_dropped, c->batch.n);
        respond_ok(req, c->beacon);
        capture_free(c);
        return;
    }
    if (c->batch.n == 0) { /* every event was filtered out */
        respond_ok(req, c->beacon);
        capture_free(c);
        return;
    }
    if (cm_queue_batch(ctx->queue, c->batch.n, emit_event, on_batch_done, c, &why) != 0) {
        refuse(c, why ? why : "refused");
        capture_free(c);
    }
}

/* The registry did not know the token; Redis was asked (registry.h). */
static void on_rechecked(void *ud, bool known)
{
    capture_t *c = ud;
    if (known) {
        admit(c);
        return;
    }
    cm_api_error_t err;
    /* PostHog's capture answers a well-formed token no project holds with
     * its UnknownToken (tag unknown_token); its flags service answers the
     * same token with TokenValidationError (invalid_token), and so does
     * ours. The words say where the right one is on this deployment. */
    cm_api_error_set(&err, 401, "unknown_token", "api_key",
                     "API key does not belong to any project. Check the project API key: "
                     "api_token in GET /api/projects/.");
    reject(c->ctx, c->req, &err);
    capture_free(c);
}

static void built(capture_t *c)
{
    ing_ctx_t *ctx = c->ctx;
    if (c->rc != 0) {
        reject(ctx, c->req, &c->err);
        capture_free(c);
        return;
    }
    cm_slice_t token = cm_slice_from_cstr(c->batch.token);
    if (ing_registry_token(ctx->registry, token) == ING_TOKEN_UNKNOWN) {
        /* It may be newer than the registry's list: a project created a
         * moment ago. Its answer may come at once (last statement here). */
        ing_registry_recheck(ctx->registry, token, on_rechecked, c);
        return;
    }
    admit(c);
}

static void build_work(uv_work_t *w)
{
    build(w->data);
}

static void build_after(uv_work_t *w, int status)
{
    (void)status; /* never cancelled: nothing calls uv_cancel */
    built(w->data);
}

static void on_capture(cm_http_req_t *req, void *ud)
{
    ing_ctx_t *ctx = ud;
    cm_slice_t path = cm_http_req_path(req);
    capture_t *c = cm_xcalloc(1, sizeof(*c));

    c->ctx = ctx;
    c->req = req;
    c->legacy = is_legacy(path);
    client_ip(ctx, req, c->ip, sizeof(c->ip));
    c->info = (ing_request_t){
        .now_us = cm_now_us(),
        .ip = c->ip,
        .engage = cm_slice_starts_with(path, "/engage"),
        .max_event_bytes = ctx->cfg.max_event,
    };
    if (cm_http_req_body(req).len >= OFFLOAD_MIN_BYTES) {
        c->work.data = c;
        uv_queue_work(ctx->loop, &c->work, build_work, build_after);
        return;
    }
    build(c);
    built(c);
}

void ing_capture_routes(ing_ctx_t *ctx)
{
    static const char *paths[] = {"/capture", "/e", "/i/v0/e", "/batch", "/track", "/engage"};
    char slash[32];
    for (size_t i = 0; i < CM_ARRAY_LEN(paths); i++) {
        /* OPTIONS is the server's CORS preflight, answered {"status":"Ok"}. */
        unsigned m = CM_HTTP_GET | CM_HTTP_POST;
        snprintf(slash, sizeof(slash), "%s/", paths[i]);
        cm_http_server_route(ctx->http, m, paths[i], on_capture, ctx);
        cm_http_server_route(ctx->http, m, slash, on_capture, ctx);
    }
}
