/* config.c - the ingest service's configuration table (docs/configuration.md). */
#include <stddef.h>

#include "cm/common.h"
#include "cm/rediskeys.h"
#include "cm/service.h"
#include "ingest.h"

#define F(field) offsetof(ing_config_t, field)

const cm_cfg_key_t ing_config_keys[] = {
    /* Behind no proxy by default: the TCP peer is the client ("0"). */
    CM_SERVICE_ROWS(ing_config_t, svc, "INGEST", "8002", "20MiB", 1LL << 31, "0",
                    "Redis: token registry, quota list, and the queue when KAFKA_BROKERS is empty",
                    "MAX_BODY", "TRUST_PROXY"),
    CM_SERVICE_ACCESS_LOG_ROW(ing_config_t, svc, "0.01"),
    {"KAFKA_BROKERS", CM_CFG_STR, F(kafka_brokers), "", 0, 0,
     "Kafka bootstrap servers; empty = queue on Redis Streams", 0},
    {"KAFKA_TOPIC", CM_CFG_STR, F(topic_main), CM_REDISKEY_EVENTS_STREAM, 0, 0,
     "topic (or stream) for events", 0},
    {"KAFKA_HISTORICAL_TOPIC", CM_CFG_STR, F(topic_historical),
     CM_REDISKEY_EVENTS_HISTORICAL_STREAM, 0, 0, "topic (or stream) for historical migrations", 0},
    {"KAFKA_PRODUCER_PROPERTIES", CM_CFG_STR, F(kafka_properties), "", 0, 0,
     "extra librdkafka properties, name=value separated by commas", 0},
    {"QUEUE_TIMEOUT", CM_CFG_DURATION, F(queue_timeout_ms), "10s", 100, 300000,
     "longest wait for the queue to acknowledge an event before answering 503", 0},
    {"STREAM_MAXLEN", CM_CFG_INT, F(stream_maxlen), "0", 0, 1LL << 40,
     "Redis Streams: approximate MAXLEN per stream (0 = unbounded)", 0},
    {"MAX_DECODED", CM_CFG_SIZE, F(max_decoded), "100MiB", 1024, 1LL << 32,
     "largest payload after decompression (413 beyond)", 0},
    {"MAX_EVENT_BYTES", CM_CFG_SIZE, F(max_event), "1000000", 1024, 1LL << 30,
     "largest serialized event message (413 beyond)", 0},
    {"REGISTRY_REFRESH", CM_CFG_DURATION, F(registry_refresh_ms), "5s", 50, 3600000,
     "how often the token registry and quota list are re-read from Redis (and at once on the "
     "api's flags:changed notice)",
     0},
    {"TOKEN_RECHECK_WAIT", CM_CFG_DURATION, F(token_recheck_wait_ms), "500ms", 0, 10000,
     "how long a token the registry does not know may wait to appear in Redis before 401 (the "
     "api answers a project's creation before it publishes the token)",
     0},
};

const size_t ing_config_nkeys = CM_ARRAY_LEN(ing_config_keys);
