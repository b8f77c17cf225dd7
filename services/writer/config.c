/* config.c - the writer's configuration table (docs/configuration.md). */
#include <stddef.h>

#include "cm/common.h"
#include "cm/rediskeys.h"
#include "cm/service.h"
#include "writer.h"

#define F(field) offsetof(wr_config_t, field)

const cm_cfg_key_t wr_config_keys[] = {
    /* Only the ops routes listen here: small bodies, no proxies. */
    CM_SERVICE_ROWS(wr_config_t, svc, "WRITER", "8004", "64KiB", 1LL << 20, "0",
                    "Redis: project tokens, the person and group copies for flags, and the queue "
                    "when KAFKA_BROKERS is empty",
                    NULL, NULL),
    CM_SERVICE_ACCESS_LOG_ROW(wr_config_t, svc, "1"),
    {"KAFKA_BROKERS", CM_CFG_STR, F(kafka_brokers), "", 0, 0,
     "Kafka bootstrap servers; empty = the queue is Redis Streams", 0},
    {"KAFKA_TOPIC", CM_CFG_STR, F(topic_main), CM_REDISKEY_EVENTS_STREAM, 0, 0,
     "topic (or stream) of events", 0},
    {"KAFKA_HISTORICAL_TOPIC", CM_CFG_STR, F(topic_historical),
     CM_REDISKEY_EVENTS_HISTORICAL_STREAM, 0, 0,
     "topic (or stream) of historical migrations, read when the main one has nothing", 0},
    {"DEAD_LETTER_TOPIC", CM_CFG_STR, F(topic_dead_letter), CM_REDISKEY_EVENTS_DEAD_LETTER, 0, 0,
     "topic (or stream) for messages that fail the schema", 0},
    {"KAFKA_CONSUMER_PROPERTIES", CM_CFG_STR, F(kafka_properties), "", 0, 0,
     "extra librdkafka properties, name=value separated by commas", 0},
    {"KAFKA_PRODUCER_PROPERTIES", CM_CFG_STR, F(kafka_producer_properties), "", 0, 0,
     "extra librdkafka properties of the dead-letter producer, name=value separated by commas", 0},
    {"WRITER_GROUP", CM_CFG_STR, F(group), "writer", 0, 0,
     "consumer group: writers in one group share the work", 0},
    {"WRITER_CONSUMER", CM_CFG_STR, F(consumer_name), "", 0, 0,
     "this writer's name in the group; empty = <hostname>-<pid>", 0},
    {"WRITER_BATCH", CM_CFG_INT, F(batch_size), "1000", 1, 100000,
     "messages per batch (one transaction each)", 0},
    {"WRITER_BATCH_BYTES", CM_CFG_SIZE, F(batch_bytes), "4MiB", 4096, 1LL << 30,
     "about this many bytes of messages per batch at most", 0},
    {"WRITER_CLAIM_IDLE", CM_CFG_DURATION, F(claim_idle_ms), "30s", 100, 86400000,
     "Redis Streams: take over messages left pending this long by a writer that went away", 0},
    {"WRITER_RETRY_MAX", CM_CFG_DURATION, F(retry_max_ms), "5s", 100, 600000,
     "longest wait between attempts at a batch while a store is down", 0},
    {"MAX_EVENT_BYTES", CM_CFG_SIZE, F(max_event), "1000000", 1024, 1LL << 30,
     "largest message; a larger one goes to the dead letters", 0},
    {"CLICKHOUSE_URL", CM_CFG_STR, F(clickhouse_url), "", 0, 0,
     "ClickHouse's HTTP interface for the event store; empty = SQLite (EVENTS_DB)", CM_CFG_SECRET},
    {"CLICKHOUSE_CLUSTER", CM_CFG_STR, F(clickhouse_cluster), "", 0, 0,
     "ClickHouse cluster mode: the cluster's name in remote_servers; empty = one server", 0},
    {"EVENTS_DB", CM_CFG_STR, F(events_sqlite), "var/events.db", 0, 0,
     "SQLite file of the event store when CLICKHOUSE_URL is empty", 0},
    {"PERSONS_DATABASE_URL", CM_CFG_STR, F(persons_url), "sqlite:var/persons.db", 0, 0,
     "the persons store: sqlite:<path> or postgres://...", CM_CFG_SECRET},
    {"PERSONS_SEEN_DAYS", CM_CFG_INT, F(seen_days), "7", 1, 3650,
     "how long the ids of processed events are kept to recognise redeliveries", 0},
    {"TOKENS_REFRESH", CM_CFG_DURATION, F(tokens_refresh_ms), "5s", 50, 3600000,
     "how often projects:tokens is re-read", 0},
    /* retention.c (docs/backups.md) */
    {"EVENT_RETENTION_DAYS", CM_CFG_INT, F(retention_days), "0", 0, 36500,
     "events older than this many days are deleted from the event store; 0 = kept forever", 0},
    {"EVENT_RETENTION_INTERVAL", CM_CFG_DURATION, F(retention_interval_ms), "1h", 100, 86400000,
     "how often the retention prune runs (when EVENT_RETENTION_DAYS is set)", 0},
    {"EVENT_RETENTION_BATCH", CM_CFG_INT, F(retention_batch), "1000", 1, 1000000,
     "SQLite: events deleted per statement while pruning", 0},
    {"PERSON_ERASURE_POLL", CM_CFG_DURATION, F(erasure_poll_ms), "1s", 50, 3600000,
     "how often the api's person erasure requests are taken from Redis", 0},
};

const size_t wr_config_nkeys = CM_ARRAY_LEN(wr_config_keys);
