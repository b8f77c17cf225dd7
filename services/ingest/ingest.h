/*
 * ingest.h - the ingest service's configuration and shared context.
 *
 * One ing_ctx_t is made in main() and handed to the handlers; nothing else
 * is global. Configuration comes only from the table in config.c.
 */
#ifndef ING_INGEST_H
#define ING_INGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/config.h"
#include "cm/http_server.h"
#include "cm/log.h"
#include "cm/metrics.h"
#include "cm/queue.h"
#include "cm/service.h"
#include "cm/redis.h"
#include "registry.h"

typedef struct {
    cm_service_cfg_t svc; /* host, port, max body, proxies, Redis, drain, log level */
    char *kafka_brokers;
    char *topic_main;
    char *topic_historical;
    char *kafka_properties;
    long long queue_timeout_ms;
    long long stream_maxlen;
    size_t max_decoded;
    size_t max_event;
    long long registry_refresh_ms;
    long long token_recheck_wait_ms;
} ing_config_t;

extern const cm_cfg_key_t ing_config_keys[];
extern const size_t ing_config_nkeys;

typedef struct {
    ing_config_t cfg;
    uv_loop_t *loop;
    cm_metrics_t *metrics;
    cm_redis_t *redis; /* NULL when REDIS_URL is empty */
    cm_queue_t *queue;
    ing_registry_t *registry;
    cm_http_server_t *http;
    cm_counter_t *events_queued;
    cm_counter_t *events_failed;
    cm_counter_t *events_quota_dropped;
    cm_counter_t *events_filtered;
    cm_counter_t *requests_rejected;
    cm_counter_t *requests_refused;
    /* One line per second for each kind of recurring failure. */
    cm_log_limit_t reject_log, refusal_log, failure_log;
} ing_ctx_t;

/* capture.c: registers the capture routes on ctx->http. */
void ing_capture_routes(ing_ctx_t *ctx);

#endif
