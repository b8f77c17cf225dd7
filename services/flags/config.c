/* config.c - the flags service's configuration table (docs/configuration.md). */
#include <stddef.h>

#include "cm/common.h"
#include "cm/service.h"
#include "flags.h"

#define F(field) offsetof(flg_config_t, field)

const cm_cfg_key_t flg_config_keys[] = {
    /* PostHog's flags service believes every X-Forwarded-For hop: "all". */
    CM_SERVICE_ROWS(flg_config_t, svc, "FLAGS", "8003", "1MiB", 1LL << 30, "all",
                    "Redis: projects, definitions, persons, quota", NULL, NULL),
    CM_SERVICE_ACCESS_LOG_ROW(flg_config_t, svc, "0.01"),
    {"DEFINITIONS_REFRESH", CM_CFG_DURATION, F(refresh_ms), "30s", 50, 3600000,
     "how often every project's definitions are re-read (flags:changed reloads one at once)", 0},
    {"PERSON_TIMEOUT", CM_CFG_DURATION, F(person_timeout_ms), "500ms", 10, 60000,
     "longest wait for stored person and group properties before evaluating without them", 0},
    {"GEOIP_DB", CM_CFG_STR, F(geoip_db), "", 0, 0,
     "MaxMind DB (City) for $geoip_* properties; empty = no GeoIP", 0},
    {"FLAGS_REGEX_BUDGET", CM_CFG_DURATION, F(regex_budget_ms), "20ms", 0, 10000,
     "regex matching time one /flags request may spend; then its remaining regex conditions "
     "are errors (0 = no budget)",
     0},
    {"FLAGS_ANSWER_CACHE", CM_CFG_SIZE, F(answer_cache_bytes), "64MiB", 0, 1LL << 40,
     "memory for rendered /flags answers reused for identical requests (0 = off)", 0},
    {"FLAGS_GZIP_MIN", CM_CFG_SIZE, F(gzip_min_bytes), "1KiB", 0, 1LL << 30,
     "smallest /flags answer sent gzip-compressed to clients that accept gzip (0 = never)", 0},
    /* A regional fleet reads a replica; the flags service writes nothing to Redis. */
    {"FLAGS_REDIS_URL", CM_CFG_STR, F(read_url), "", 0, 0,
     "Redis the flags service reads (and subscribes to flags:changed on), e.g. a regional "
     "replica; empty = REDIS_URL",
     CM_CFG_SECRET},
    {"FLAGS_MAX_STALENESS", CM_CFG_DURATION, F(max_staleness_ms), "5m", 0, 86400000,
     "longest time definitions may go unconfirmed as current (replica link down, Redis "
     "unreachable) before /_ready answers not ready; they are still served (0 = no bound)",
     0},
};

const size_t flg_config_nkeys = CM_ARRAY_LEN(flg_config_keys);
