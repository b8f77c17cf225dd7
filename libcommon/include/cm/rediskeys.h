/*
 * rediskeys.h - every Redis key, channel and stream name the suite uses, and
 * the builders of the per-entity keys. The contract itself, with who writes
 * and who reads each key, is proto/redis-keys.md; this header is the only
 * place C spells the names, and test_rediskeys checks the two agree.
 */
#ifndef CM_REDISKEYS_H
#define CM_REDISKEYS_H

#include "cm/buf.h"

/* Fixed names (listed again in cm_rediskeys_fixed[], which the test reads). */
#define CM_REDISKEY_PROJECT_TOKENS           "projects:tokens"
#define CM_REDISKEY_PROJECT_SECRET_TOKENS    "projects:secret_tokens"
#define CM_REDISKEY_PROJECT_TIMEZONES        "projects:timezones"
#define CM_REDISKEY_PERSONAL_KEYS            "personal_api_keys"
#define CM_REDISKEY_QUOTA_EVENTS             "@posthog/quota-limits/events"
#define CM_REDISKEY_QUOTA_FLAGS              "@posthog/quota-limits/feature_flag_requests"
#define CM_REDISKEY_GROUP_VERSIONS           "groups:versions"
#define CM_REDISKEY_PERSON_ERASURES          "person_erasures"
#define CM_REDISKEY_FLAG_DEFINITIONS         "flags:definitions"
#define CM_REDISKEY_FLAGS_CHANGED            "flags:changed" /* pub/sub channel */
#define CM_REDISKEY_EVENTS_STREAM            "events_plugin_ingestion"
#define CM_REDISKEY_EVENTS_HISTORICAL_STREAM "events_plugin_ingestion_historical"
#define CM_REDISKEY_EVENTS_DEAD_LETTER       "events_plugin_ingestion_dlq"

/* NULL-terminated: every fixed name above. */
extern const char *const cm_rediskeys_fixed[];

/* persons:<project id>:<distinct id> into key (reset first). */
void cm_rediskeys_person(cm_buf_t *key, cm_slice_t project_id, cm_slice_t distinct_id);
/* groups:<project id>:<group type>:<group key> into key (reset first). */
void cm_rediskeys_group(cm_buf_t *key, cm_slice_t project_id, cm_slice_t type,
                        cm_slice_t group_key);

/* endpoint_cache:<project id>:<key hash> into key (reset first). */
void cm_rediskeys_endpoint_cache(cm_buf_t *key, cm_slice_t project_id, cm_slice_t hash);

#endif
