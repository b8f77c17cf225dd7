/*
 * flags.h - the flags service's configuration and shared context.
 *
 * One flg_ctx_t is made in main() and handed to the handlers.
 */
#ifndef FLG_FLAGS_H
#define FLG_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/config.h"
#include "cm/http_server.h"
#include "cm/metrics.h"
#include "cm/redis.h"
#include "cm/service.h"
#include "serve/freshness.h"
#include "serve/answer_cache.h"
#include "serve/geoip.h"
#include "serve/store.h"

typedef struct {
    cm_service_cfg_t svc; /* host, port, max body, proxies, Redis, drain, log level */
    long long refresh_ms;
    long long person_timeout_ms;
    char *geoip_db;
    long long regex_budget_ms;
    char *read_url; /* FLAGS_REDIS_URL; empty: svc.redis_url */
    long long max_staleness_ms;
    size_t answer_cache_bytes; /* FLAGS_ANSWER_CACHE; 0 = off */
    size_t gzip_min_bytes;     /* FLAGS_GZIP_MIN; 0 = never gzip */
} flg_config_t;

extern const cm_cfg_key_t flg_config_keys[];
extern const size_t flg_config_nkeys;

typedef struct {
    flg_config_t cfg;
    uv_loop_t *loop;
    cm_metrics_t *metrics;
    cm_redis_t *redis;
    flg_store_t *store;
    flg_fresh_t *fresh;
    flg_geoip_t *geoip;          /* NULL without GEOIP_DB */
    flg_answer_cache_t *answers; /* NULL when FLAGS_ANSWER_CACHE is 0 */
    cm_http_server_t *http;
    cm_counter_t *evaluations;
    cm_counter_t *quota_limited;
    cm_counter_t *person_errors;
    cm_counter_t *flag_errors;
    cm_counter_t *regex_budget_spent;
} flg_ctx_t;

/* serve/route_flags.c: POST /flags; serve/route_definitions.c: GET /flags/definitions. */
void flg_flags_routes(flg_ctx_t *ctx);
void flg_definitions_routes(flg_ctx_t *ctx);

#endif
