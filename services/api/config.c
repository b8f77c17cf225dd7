/* config.c - the api service's configuration table (docs/configuration.md). */
#include <stddef.h>

#include "api.h"
#include "cm/common.h"
#include "cm/service.h"

#define F(field) offsetof(api_config_t, field)

const cm_cfg_key_t api_config_keys[] = {
    CM_SERVICE_ROWS(api_config_t, svc, "API", "8001", "1MiB", 64LL << 20, "0",
                    "Redis: what the api publishes for the flags fleet", NULL, NULL),
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
    {"MATERIALIZE_CHECK", CM_CFG_DURATION, F(materialize_check_ms), "10s", 50, 3600000,
     "how often materialized endpoint versions are looked at (a due one's table is rebuilt)", 0},
    {"CLICKHOUSE_URL", CM_CFG_STR, F(clickhouse_url), "", 0, 0,
     "the event store on ClickHouse (as the writer's); empty = SQLite (EVENTS_DB)", CM_CFG_SECRET},
    {"EVENTS_DB", CM_CFG_STR, F(events_sqlite), "var/events.db", 0, 0,
     "the SQLite event store the writer fills, when CLICKHOUSE_URL is empty", 0},
};

const size_t api_config_nkeys = CM_ARRAY_LEN(api_config_keys);
