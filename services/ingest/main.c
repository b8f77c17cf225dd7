/*
 * main.c - the ingest service: configuration, wiring, the loop, the drain.
 *
 * Start-up: config from the environment (--print-config shows it), Redis
 * client, queue (Kafka when KAFKA_BROKERS is set, else Redis Streams),
 * token registry (with its subscriber to the api's change notices), HTTP
 * server. Prints {"listening":PORT} on stdout once it
 * accepts connections.
 *
 * SIGTERM: stop accepting, finish requests in progress (their events still
 * get acknowledged by the queue), flush and close the queue, close Redis,
 * exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cm/alloc.h"
#include "cm/cli.h"
#include "cm/common.h"
#include "cm/config.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/service.h"
#include "cm/signals.h"
#include "ingest.h"

static ing_ctx_t ctx;
static cm_signals_t *signals;

static bool ready(void *ud, cm_buf_t *why)
{
    ing_ctx_t *c = ud;
    return cm_queue_ready(c->queue, why);
}

static void redis_closed(void *ud)
{
    (void)ud;
}

static void queue_closed(void *ud)
{
    (void)ud;
    ing_registry_close(ctx.registry);
    if (ctx.redis)
        cm_redis_close(ctx.redis, redis_closed, NULL);
    cm_signals_close(signals);
}

static void http_drained(void *ud)
{
    (void)ud;
    cm_http_server_free(ctx.http);
    cm_queue_close(ctx.queue, 5000, queue_closed, NULL);
}

static void on_term(void *ud)
{
    (void)ud;
    cm_http_server_drain(ctx.http, (uint64_t)ctx.cfg.svc.drain_timeout_ms, http_drained, NULL);
}

static int make_queue(void)
{
    if (ctx.cfg.kafka_brokers[0] != '\0') {
        const char *extra[64];
        char *copy = cm_xstrdup(ctx.cfg.kafka_properties);
        cm_queue_kafka_opts_t o = {
            .brokers = ctx.cfg.kafka_brokers,
            .message_timeout_ms = (int)ctx.cfg.queue_timeout_ms,
            .message_max_bytes = (int)ctx.cfg.max_event + 4096,
            .extra = extra,
            .nextra = cm_config_split_list(copy, extra, CM_ARRAY_LEN(extra)),
            .metrics = ctx.metrics,
        };
        int rc = cm_queue_kafka_new(ctx.loop, &o, &ctx.queue);
        free(copy);
        return rc;
    }
    if (ctx.redis == NULL) {
        cm_log(CM_LOG_ERROR, NULL, "no queue: set KAFKA_BROKERS or REDIS_URL");
        return CM_EINVAL;
    }
    cm_queue_redis_opts_t o = {
        .maxlen = (uint64_t)ctx.cfg.stream_maxlen,
        .max_message_bytes = ctx.cfg.max_event + 4096,
        .metrics = ctx.metrics,
    };
    return cm_queue_redis_new(ctx.loop, ctx.redis, &o, &ctx.queue);
}

static void make_metrics(void)
{
    ctx.metrics = cm_metrics_new();
    ctx.events_queued = cm_metrics_counter(ctx.metrics, "ingest_events_queued_total",
                                           "Events acknowledged by the queue", NULL);
    ctx.events_failed = cm_metrics_counter(ctx.metrics, "ingest_events_failed_total",
                                           "Events the queue refused or timed out", NULL);
    ctx.events_quota_dropped =
        cm_metrics_counter(ctx.metrics, "ingest_events_dropped_total", "Events dropped on purpose",
                           "reason=\"quota_limited\"");
    ctx.events_filtered = cm_metrics_counter(ctx.metrics, "ingest_events_dropped_total",
                                             "Events dropped on purpose", "reason=\"filtered\"");
    ctx.requests_rejected = cm_metrics_counter(ctx.metrics, "ingest_requests_rejected_total",
                                               "Requests answered with a 4xx error", NULL);
    ctx.requests_refused =
        cm_metrics_counter(ctx.metrics, "ingest_requests_refused_total",
                           "Requests refused with 503 before any event was written", NULL);
}

static int start(void)
{
    ctx.loop = uv_default_loop();
    make_metrics();
    signals = cm_signals_start(ctx.loop, on_term, NULL); /* runs only once the loop does */
    if (ctx.cfg.svc.redis_url[0] != '\0') {
        cm_redis_opts_t ro = {.url = ctx.cfg.svc.redis_url,
                              .name = "redis",
                              .command_timeout_ms = (int)ctx.cfg.queue_timeout_ms};
        if (cm_redis_new(ctx.loop, &ro, &ctx.redis) != 0) {
            cm_log(CM_LOG_ERROR, NULL, "REDIS_URL is not a valid redis:// URL");
            return CM_EINVAL;
        }
    }
    if (make_queue() != 0)
        return CM_EINVAL;
    ing_registry_opts_t ro = {.redis = ctx.redis,
                              .redis_url = ctx.cfg.svc.redis_url,
                              .refresh_ms = (uint64_t)ctx.cfg.registry_refresh_ms,
                              .recheck_wait_ms = (uint64_t)ctx.cfg.token_recheck_wait_ms,
                              .metrics = ctx.metrics};
    ctx.registry = ing_registry_new(ctx.loop, &ro);
    ctx.http = cm_service_http_new(ctx.loop, "ingest", &ctx.cfg.svc, ctx.metrics, ready, &ctx);
    ing_capture_routes(&ctx);
    return cm_service_http_listen(ctx.http, &ctx.cfg.svc);
}

int main(int argc, char **argv)
{
    static const cm_cli_t cli = {
        "ingest", "event capture (PostHog's /capture, /e, /batch ...) into the queue", NULL, NULL};
    int rc = cm_cli_handle(&cli, argc, argv); /* --help, --version, unknown arguments */
    if (rc >= 0)
        return rc;
    rc = cm_service_configure("ingest", argc, argv, ing_config_keys, ing_config_nkeys, &ctx.cfg,
                              &ctx.cfg.svc);
    if (rc >= 0)
        return rc; /* a bad configuration (reported), or --print-config */
    if (start() != 0)
        return 1;
    cm_log(CM_LOG_INFO, NULL, "queue: %s", cm_queue_backend(ctx.queue));
    uv_run(ctx.loop, UV_RUN_DEFAULT);
    rc = cm_service_finish(ctx.loop, ing_config_keys, ing_config_nkeys, &ctx.cfg);
    cm_metrics_free(ctx.metrics);
    return rc;
}
