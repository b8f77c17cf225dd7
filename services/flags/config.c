/* config.c - the flags service's configuration table (docs/configuration.md). */
#include <stddef.h>

#include "cm/common.h"
#include "flags.h"

#define F(field) offsetof(flg_config_t, field)

const cm_cfg_key_t flg_config_keys[] = {
    {"FLAGS_HOST", CM_CFG_STR, F(host), "127.0.0.1", 0, 0, "address to listen on", 0},
    {"FLAGS_PORT", CM_CFG_INT, F(port), "8003", 0, 65535, "port to listen on (0 = any free port)", 0},
    {"REDIS_URL", CM_CFG_STR, F(redis_url), "redis://127.0.0.1:6379/0", 0, 0,
     "Redis: projects, definitions, persons, quota", CM_CFG_SECRET},
    {"DEFINITIONS_REFRESH", CM_CFG_DURATION, F(refresh_ms), "30s", 50, 3600000,
     "how often every project's definitions are re-read (flags:changed reloads one at once)", 0},
    {"PERSON_TIMEOUT", CM_CFG_DURATION, F(person_timeout_ms), "500ms", 10, 60000,
     "longest wait for stored person and group properties before evaluating without them", 0},
    {"GEOIP_DB", CM_CFG_STR, F(geoip_db), "", 0, 0,
     "MaxMind DB (City) for $geoip_* properties; empty = no GeoIP", 0},
    {"FLAGS_MAX_BODY", CM_CFG_SIZE, F(max_body), "1MiB", 1024, 1LL << 30,
     "largest /flags request body (413 beyond)", 0},
    {"FLAGS_REGEX_BUDGET", CM_CFG_DURATION, F(regex_budget_ms), "20ms", 0, 10000,
     "regex matching time one /flags request may spend; then its remaining regex conditions "
     "are errors (0 = no budget)", 0},
    {"DRAIN_TIMEOUT", CM_CFG_DURATION, F(drain_timeout_ms), "30s", 0, 600000,
     "on SIGTERM, longest wait for requests in progress", 0},
    {"LOG_LEVEL", CM_CFG_STR, F(log_level), "info", 0, 0, "debug, info, warn or error", 0},
};

const size_t flg_config_nkeys = CM_ARRAY_LEN(flg_config_keys);
