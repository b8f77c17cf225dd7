/*
 * writer.h - the writer service's configuration and shared context.
 *
 * One wr_ctx_t is made in main() and handed to every part; nothing else is
 * global. The pipeline for batches of queue messages (consume.c), two
 * under way, in parts whose stages overlap (part k stored while part k+1 is
 * parsed and its persons done, across batches too): parse (event.c) -> project ids from tokens
 * (tokens.c)
 * -> persons in one transaction per part (persons.c on persons_store.c) ->
 * the event store and the Redis mirror (sink.c); then dead letters
 * (deadletter.c) -> acknowledge. Any failure hands the batch back to the
 * queue and retries it with backoff; nothing is acknowledged before all of
 * it is stored.
 */
#ifndef WR_WRITER_H
#define WR_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/config.h"
#include "cm/db.h"
#include "cm/event_store.h"
#include "cm/log.h"
#include "cm/metrics.h"
#include "cm/queue.h"
#include "cm/queue_consumer.h"
#include "cm/redis.h"
#include "cm/service.h"

typedef struct {
    cm_service_cfg_t svc; /* ops port, Redis, drain, log level */
    char *kafka_brokers;
    char *topic_main;
    char *topic_historical;
    char *topic_dead_letter;
    char *kafka_properties;
    char *kafka_producer_properties; /* the dead-letter producer's */
    char *group;
    char *consumer_name;
    long long batch_size;
    size_t batch_bytes;
    long long claim_idle_ms;
    long long retry_max_ms;
    size_t max_event;
    char *clickhouse_url;
    char *clickhouse_cluster; /* "": one server */
    char *events_sqlite;
    char *persons_url;
    long long seen_days;
    long long tokens_refresh_ms;
    long long retention_days, retention_interval_ms, retention_batch; /* retention.c */
    long long erasure_poll_ms;
} wr_config_t;

extern const cm_cfg_key_t wr_config_keys[];
extern const size_t wr_config_nkeys;

typedef struct wr_tokens wr_tokens_t;
typedef struct wr_props_memo wr_props_memo_t;
typedef struct wr_batch wr_batch_t;

typedef struct {
    wr_config_t cfg;
    uv_loop_t *loop;
    cm_metrics_t *metrics;
    cm_redis_t *redis;        /* commands: tokens, mirror, dead letters on Streams */
    cm_redis_t *redis_stream; /* the consumer's own (XREADGROUP BLOCK holds it) */
    cm_consumer_t *consumer;
    cm_queue_t *dead_letters;
    cm_evstore_t *events;
    cm_db_t *persons;
    bool persons_migrated;
    wr_tokens_t *tokens;
    wr_props_memo_t *persons_memo; /* stored persons parsed, across batches (props_memo.h) */
    cm_http_server_t *http;
    /* consume.c: the batches under way, oldest first (NULL when idle), and
     * the batch whose step holds each lane (NULL: the lane is free). */
    wr_batch_t *batches;
    struct {
        wr_batch_t *parse, *persons, *store, *dead;
    } lane;
    uint64_t backoff_ms;
    bool failing; /* the last attempt failed: not ready */
    char last_error[256];
    uv_timer_t prune;
    uv_timer_t step; /* parsing a batch in slices (consume.c) */
    cm_counter_t *m_stored, *m_duplicates, *m_dead, *m_dropped_token, *m_dropped_invalid,
        *m_warnings, *m_conflicts, *m_failures, *m_memo_hits, *m_memo_misses;
    cm_histogram_t *m_batch_seconds;
    cm_log_limit_t fail_log;
} wr_ctx_t;

/* Batches the consumer hands over at once (its opts.depth): batch N+1 is
 * parsed and its persons done while batch N is still being stored. */
#define WR_BATCHES_IN_FLIGHT 2

/* consume.c: the batch pipeline; on_batch is the consumer's callback. */
void wr_on_batch(cm_consumer_batch_t *b, void *ud);
bool wr_idle(const wr_ctx_t *ctx);

#endif
