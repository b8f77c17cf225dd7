/*
 * capture.c - the capture routes: one handler behind /capture, /e, /i/v0/e,
 * /batch, /track and /engage (with and without the trailing slash).
 *
 * A request is answered 200 {"status":"Ok"} only after the queue has
 * acknowledged every one of its events; if any event is refused or times
 * out the answer is 503 (413 when the queue calls a message too large), so
 * the client retries. Events acknowledged before a failure stay queued:
 * delivery is at-least-once and consumers deduplicate on the event uuid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/api_error.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/timefmt.h"
#include "events.h"
#include "ingest.h"
#include "payload.h"

typedef struct {
    ing_ctx_t *ctx;
    cm_http_req_t *req;
    ing_batch_t batch;
    size_t pending;
    bool beacon;
    bool failed;
    bool too_big;
} capture_t;

static void reject(ing_ctx_t *ctx, cm_http_req_t *req, const ing_error_t *e)
{
    cm_counter_inc(ctx->requests_rejected);
    cm_log(CM_LOG_INFO, cm_http_req_id(req), "capture rejected: %d %s: %s", e->status, e->code,
           e->detail);
    cm_http_respond_error(req, e->status, cm_api_error_type_for_status(e->status), e->code,
                          e->detail, e->attr[0] ? e->attr : NULL);
}

static void respond_ok(cm_http_req_t *req, bool beacon)
{
    if (beacon)
        cm_http_respond(req, 204, NULL, "", 0);
    else
        cm_http_respond(req, 200, "application/json", "{\"status\":\"Ok\"}", 15);
}

static void finish(capture_t *c)
{
    if (c->too_big) {
        cm_http_respond_error(c->req, 413, CM_ERR_VALIDATION, "event_too_large",
                              "The queue refused an event as too large.", NULL);
    } else if (c->failed) {
        cm_http_respond_error(c->req, 503, CM_ERR_SERVER, "queue_unavailable",
                              "The event queue did not acknowledge every event; retry the "
                              "request.", NULL);
    } else {
        respond_ok(c->req, c->beacon);
    }
    ing_batch_free(&c->batch);
    free(c);
}

static void on_ack(int status, const char *err, void *ud)
{
    capture_t *c = ud;
    if (status != 0) {
        cm_counter_inc(c->ctx->events_failed);
        if (!c->failed && !c->too_big)
            cm_log(CM_LOG_WARN, cm_http_req_id(c->req), "queue refused an event: %s",
                   err ? err : "error");
        if (status == CM_ETOOBIG)
            c->too_big = true;
        else
            c->failed = true;
    } else {
        cm_counter_inc(c->ctx->events_queued);
    }
    if (--c->pending == 0)
        finish(c);
}

/* Message key and headers as PostHog capture writes them (proto/). */
static int produce_one(capture_t *c, const ing_event_t *e)
{
    ing_ctx_t *ctx = c->ctx;
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
    return cm_queue_produce(ctx->queue, &msg, on_ack, c);
}

/* The client's address: the TCP peer, or the first X-Forwarded-For entry
 * when a trusted proxy sits in front (TRUST_PROXY). */
static void client_ip(const ing_ctx_t *ctx, cm_http_req_t *req, char *out, size_t outlen)
{
    cm_slice_t xff = cm_http_req_header(req, "X-Forwarded-For");
    if (ctx->cfg.trust_proxy && xff.len > 0) {
        const char *comma = memchr(xff.p, ',', xff.len);
        cm_slice_t first = cm_slice_trim((cm_slice_t){xff.p, comma ? (size_t)(comma - xff.p) : xff.len});
        snprintf(out, outlen, "%.*s", (int)first.len, first.p);
        return;
    }
    snprintf(out, outlen, "%s", cm_http_req_peer(req));
}

static bool is_legacy(cm_slice_t path)
{
    return cm_slice_starts_with(path, "/e") || cm_slice_starts_with(path, "/capture") ||
           cm_slice_starts_with(path, "/track") || cm_slice_starts_with(path, "/engage");
}

static void on_capture(cm_http_req_t *req, void *ud)
{
    ing_ctx_t *ctx = ud;
    ing_error_t err = {0};
    ing_payload_t payload;
    char ip[64];
    cm_slice_t path = cm_http_req_path(req);

    if (ing_payload_extract(req, is_legacy(path), ctx->cfg.max_decoded, &payload, &err) != 0) {
        ing_payload_free(&payload);
        reject(ctx, req, &err);
        return;
    }
    client_ip(ctx, req, ip, sizeof(ip));
    ing_request_t info = {
        .now_us = cm_now_us(),
        .ip = ip,
        .query_sent_at_us = payload.sent_at_us,
        .engage = cm_slice_starts_with(path, "/engage"),
        .max_event_bytes = ctx->cfg.max_event,
    };
    capture_t *c = cm_xcalloc(1, sizeof(*c));
    c->ctx = ctx;
    c->req = req;
    c->beacon = payload.beacon;
    int rc = ing_events_build(payload.json.p, payload.json.len, &info, &c->batch, &err);
    ing_payload_free(&payload);
    if (rc != 0) {
        free(c);
        reject(ctx, req, &err);
        return;
    }
    cm_slice_t token = cm_slice_from_cstr(c->batch.token);
    if (ing_registry_token(ctx->registry, token) == ING_TOKEN_UNKNOWN) {
        err = (ing_error_t){401, "unknown_token",
                            "Project API key invalid. You can find your project API key in your "
                            "project settings.",
                            "api_key"};
        ing_batch_free(&c->batch);
        free(c);
        reject(ctx, req, &err);
        return;
    }
    cm_counter_add(ctx->events_filtered, c->batch.dropped);
    if (ing_registry_quota_limited(ctx->registry, token)) {
        /* As PostHog does: drop, count, and answer 200 so clients do not retry. */
        cm_counter_add(ctx->events_quota_dropped, c->batch.n);
        respond_ok(req, c->beacon);
        ing_batch_free(&c->batch);
        free(c);
        return;
    }
    /* pending counts one extra while producing, so an early ack cannot finish the request. */
    c->pending = 1;
    for (size_t i = 0; i < c->batch.n; i++) {
        c->pending++;
        if (produce_one(c, &c->batch.events[i]) != 0) {
            c->pending--;
            c->failed = true;
            cm_counter_inc(ctx->events_failed);
            break; /* the request fails anyway; queue no more of it */
        }
    }
    if (--c->pending == 0)
        finish(c);
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
