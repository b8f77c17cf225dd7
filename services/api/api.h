/*
 * api.h - the api service's configuration and shared context.
 *
 * One api_ctx_t is made in main() and handed to every route. The folders
 * below services/api/ each have one outward header (docs/api.md):
 *   routes.c      the route table: method, path, scope, handler
 *   http/         authentication, JSON bodies, pagination, responses
 *   resources/    one file per REST resource
 *   store/        the only files that speak SQL (schema, queries)
 *   publish/      store -> Redis for the flags fleet, through the outbox
 */
#ifndef API_API_H
#define API_API_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/config.h"
#include "cm/db.h"
#include "cm/event_store.h"
#include "cm/http_server.h"
#include "cm/metrics.h"
#include "cm/redis.h"
#include "cm/service.h"

typedef struct {
    cm_service_cfg_t svc; /* host, port, max body, proxies, Redis, drain, log level */
    char *database_url;
    char *base_url;
    long long publish_retry_ms;
    long long read_cache_ms;
    size_t page_cache_bytes; /* API_PAGE_CACHE_BYTES */
    long long materialize_check_ms;
    size_t answer_max_bytes; /* ENDPOINT_MAX_ANSWER_BYTES */
    size_t cache_max_bytes;  /* ENDPOINT_CACHE_MAX_BYTES */
    char *clickhouse_url;
    char *clickhouse_cluster; /* "": one server */
    char *events_sqlite;
    long long query_timeout_ms;  /* QUERY_TIMEOUT */
    long long events_readers;    /* EVENTS_READERS */
    long long query_concurrency; /* QUERY_CONCURRENCY_PER_PROJECT */
    long long query_queue;       /* QUERY_QUEUE_PER_PROJECT */
    char *oauth_url;
    char *region;
    char *oauth_vendor;
    long long oauth_access_ttl_ms;
    long long oauth_refresh_ttl_ms;
    char *oauth_resources;
    char *oauth_ca_file;
    bool oauth_allow_loopback;
    char *github_keys_file;
    long long password_hashes, password_queue; /* http/password.c */
    long long login_free_failures, login_address_free_failures, login_max_delay_ms;
    long long cimd_fetches, cimd_fetches_per_address;
} api_config_t;

extern const cm_cfg_key_t api_config_keys[];
extern const size_t api_config_nkeys;
/* config.c: is DATABASE_URL set, rather than defaulted? */
bool api_config_store_explicit(void);

typedef struct api_publisher api_publisher_t;
typedef struct api_materializer api_materializer_t;
typedef struct api_oauth api_oauth_t;
typedef struct api_admit api_admit_t;
typedef struct api_metrics api_metrics_t;       /* metrics.h */
typedef struct api_page_cache api_page_cache_t; /* http/page_cache.h */

typedef struct {
    api_config_t cfg;
    uv_loop_t *loop;
    cm_metrics_t *metrics;
    api_metrics_t *m; /* the api's series in metrics (metrics.h) */
    cm_db_t *db;
    cm_evstore_t *events; /* read-only here: the writer fills it */
    api_admit_t *admit;   /* http/admit.c: reads of it, per project */
    cm_redis_t *redis;
    api_publisher_t *publisher;
    api_materializer_t *materializer; /* endpoints/materializer.c: tables */
    api_oauth_t *oauth;               /* oauth/: client documents, limits */
    api_page_cache_t *pages;          /* http/page_cache.h: rendered list pages */
    const char *token_audience;       /* oauth/: BASE_URL, canonical (an access token's aud) */
    cm_http_server_t *http;
    bool migrated; /* the schema is in place: routes may run */
} api_ctx_t;

/* routes.c: every route of the service on ctx->http. */
void api_routes(api_ctx_t *ctx);

#endif
