/* config.c - the api service's configuration table (docs/configuration.md). */
#include <stddef.h>
#include <stdlib.h>

#include "api.h"
#include "cm/common.h"
#include "cm/service.h"

#define F(field) offsetof(api_config_t, field)

const cm_cfg_key_t api_config_keys[] = {
    CM_SERVICE_ROWS(api_config_t, svc, "API", "8001", "1MiB", 64LL << 20, "0",
                    "Redis: what the api publishes for the flags fleet", NULL, NULL),
    CM_SERVICE_ACCESS_LOG_ROW(api_config_t, svc, "1"),
    {"DATABASE_URL", CM_CFG_STR, F(database_url), "sqlite:var/meta.db", 0, 0,
     "metadata store: sqlite:<path> (default) or postgres://user:password@host:port/db",
     CM_CFG_SECRET},
    {"BASE_URL", CM_CFG_STR, F(base_url), "http://127.0.0.1:8000", 0, 0,
     "public address of the app host (WWW-Authenticate, links in responses)", 0},
    {"PUBLISH_RETRY", CM_CFG_DURATION, F(publish_retry_ms), "1s", 10, 600000,
     "while Redis is down, how often the outbox tries to publish again", 0},
    {"API_READ_CACHE", CM_CFG_DURATION, F(read_cache_ms), "1s", 0, 60000,
     "how long a personal API key's lookup and an endpoint's definition may be served from "
     "memory: another api process's revocation or edit shows within it (0: always read)",
     0},
    {"API_PAGE_CACHE_BYTES", CM_CFG_SIZE, F(page_cache_bytes), "32MiB", 0, 1LL << 30,
     "memory for rendered flags list pages, kept under the project's flags version (any api "
     "process's change retires them; 0: every read renders)",
     0},
    {"MATERIALIZE_CHECK", CM_CFG_DURATION, F(materialize_check_ms), "10s", 50, 3600000,
     "how often materialized endpoint versions are looked at (a due one's table is rebuilt)", 0},
    {"ENDPOINT_MAX_ANSWER_BYTES", CM_CFG_SIZE, F(answer_max_bytes), "64MiB", 4096, 1LL << 30,
     "an endpoint run's answer bound: the event store's rows, counted in bytes as they are read, "
     "and the JSON written from them; past it the run answers 400 (docs/endpoints.md)",
     0},
    {"ENDPOINT_CACHE_MAX_BYTES", CM_CFG_SIZE, F(cache_max_bytes), "1MiB", 0, 512LL << 20,
     "an endpoint run's answer is kept in Redis only when its JSON is at most this big (0: none "
     "is kept)",
     0},
    {"CLICKHOUSE_URL", CM_CFG_STR, F(clickhouse_url), "", 0, 0,
     "the event store on ClickHouse (as the writer's); empty = SQLite (EVENTS_DB)", CM_CFG_SECRET},
    {"CLICKHOUSE_CLUSTER", CM_CFG_STR, F(clickhouse_cluster), "", 0, 0,
     "ClickHouse cluster mode: the cluster's name (as the writer's); empty = one server", 0},
    {"EVENTS_DB", CM_CFG_STR, F(events_sqlite), "var/events.db", 0, 0,
     "the SQLite event store the writer fills, when CLICKHOUSE_URL is empty", 0},
    /* Event-store reads (docs/endpoints.md "Sharing the event store") */
    {"QUERY_TIMEOUT", CM_CFG_DURATION, F(query_timeout_ms), "30s", 1000, 600000,
     "how long a request's reads of the event store may take, counted from its first byte "
     "(waiting for its turn included); past it the read is stopped and the request answers 400",
     0},
    {"EVENTS_READERS", CM_CFG_INT, F(events_readers), "4", 1, 64,
     "SQLite event store: read-only connections, each on a thread of its own, running reads "
     "at once (beside the writes' connection; not libuv's thread pool)",
     0},
    {"QUERY_CONCURRENCY_PER_PROJECT", CM_CFG_INT, F(query_concurrency), "2", 1, 1000,
     "event-store reads (endpoint and insight runs, materialized reads, the events and persons "
     "lists) one project may have running at once; more wait in its queue",
     0},
    {"QUERY_QUEUE_PER_PROJECT", CM_CFG_INT, F(query_queue), "8", 0, 100000,
     "event-store reads of one project that may wait for a free slot; past it 429 with "
     "Retry-After",
     0},
    /* OAuth (docs/oauth.md) */
    {"OAUTH_URL", CM_CFG_STR, F(oauth_url), "", 0, 0,
     "the region-agnostic OAuth host, serving the same discovery documents (empty: BASE_URL only)",
     0},
    {"REGION", CM_CFG_STR, F(region), "self-hosted", 0, 0,
     "us, eu or self-hosted: which region's verification of OAuth apps applies", 0},
    {"OAUTH_VENDOR", CM_CFG_STR, F(oauth_vendor), "posthog", 0, 0,
     "the namespace word of client documents' com.<vendor>.scopes and "
     "com.<vendor>.verification_token",
     0},
    {"OAUTH_ACCESS_TTL", CM_CFG_DURATION, F(oauth_access_ttl_ms), "1h", 60000, 604800000LL,
     "lifetime of an access token (pha_)", 0},
    {"OAUTH_REFRESH_TTL", CM_CFG_DURATION, F(oauth_refresh_ttl_ms), "30d", 3600000, 31536000000LL,
     "lifetime of a refresh token (phr_), renewed by each rotation", 0},
    {"OAUTH_RESOURCES", CM_CFG_STR, F(oauth_resources), "", 0, 0,
     "other resources (e.g. an MCP server's URL) tokens may be issued for, comma separated; "
     "BASE_URL is always one, and the only one this api accepts tokens for",
     0},
    {"OAUTH_CIMD_CA_FILE", CM_CFG_STR, F(oauth_ca_file), "/etc/ssl/certs/ca-certificates.crt", 0, 0,
     "CA bundle client metadata documents' servers are checked against", 0},
    {"OAUTH_CIMD_ALLOW_LOOPBACK", CM_CFG_BOOL, F(oauth_allow_loopback), "0", 0, 0,
     "TESTS ONLY: client_ids on https://127.0.0.1 or [::1] may be fetched", 0},
    {"GITHUB_KEYS_FILE", CM_CFG_STR, F(github_keys_file), "", 0, 0,
     "GitHub's secret-scanning public keys (the JSON of its keys endpoint) for "
     "POST /api/alerts/github; empty: the route answers 503",
     0},
    /* sign-in and client documents under load (docs/oauth.md, "Limits") */
    {"PASSWORD_HASHES", CM_CFG_INT, F(password_hashes), "1", 1, 3,
     "password checks (argon2id) run at once, each on one of libuv's 4 threads: the rest are the "
     "metadata store's",
     0},
    {"PASSWORD_QUEUE", CM_CFG_INT, F(password_queue), "16", 0, 1000,
     "password checks that may wait for a thread; past them a sign-in is answered 503 with "
     "Retry-After",
     0},
    {"OAUTH_LOGIN_FREE_FAILURES", CM_CFG_INT, F(login_free_failures), "5", 1, 1000,
     "failed sign-ins for one email before each further attempt waits 1 s, then 2 s, 4 s ...", 0},
    {"OAUTH_LOGIN_ADDRESS_FREE_FAILURES", CM_CFG_INT, F(login_address_free_failures), "20", 1,
     100000, "the same for one client address (IPv6: its /64), whatever the emails", 0},
    {"OAUTH_LOGIN_MAX_DELAY", CM_CFG_DURATION, F(login_max_delay_ms), "5m", 1000, 3600000,
     "the longest wait between two sign-in attempts once failures add up", 0},
    {"OAUTH_CIMD_FETCHES", CM_CFG_INT, F(cimd_fetches), "32", 1, 10000,
     "client metadata documents fetched at once, in all", 0},
    {"OAUTH_CIMD_FETCHES_PER_ADDRESS", CM_CFG_INT, F(cimd_fetches_per_address), "4", 1, 10000,
     "client metadata documents fetched at once for one client address", 0},
};

const size_t api_config_nkeys = CM_ARRAY_LEN(api_config_keys);

/* DATABASE_URL is in the environment (an empty one counts as unset, as for
 * every key): the one-shot commands refuse the default store otherwise, so
 * that a command run without the service's environment (a bare container,
 * a pod without its ConfigMap) cannot seed a store the service never reads. */
bool api_config_store_explicit(void)
{
    const char *v = getenv("DATABASE_URL");
    return v != NULL && v[0] != '\0';
}
