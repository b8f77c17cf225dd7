/*
 * main.c - the writer service: configuration, wiring, the loop, the drain.
 *
 * Start-up: config from the environment (--print-config shows it), two
 * Redis clients (commands; the consumer's blocking reads), the consumer
 * (Kafka when KAFKA_BROKERS is set, else Redis Streams), the dead-letter
 * producer on the same backend, the event store (ClickHouse when
 * CLICKHOUSE_URL is set, else SQLite), the persons store and its tables,
 * the ops server (/_health, /_ready, /metrics). Prints {"listening":PORT}.
 *
 * SIGTERM: the consumer stops fetching and the batches under way finish
 * (stored and acknowledged, or handed back); then everything closes in
 * order and the process exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cm/alloc.h"
#include "cm/cli.h"
#include "cm/common.h"
#include "cm/config.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/service.h"
#include "cm/signals.h"
#include "cm/timefmt.h"
#include "persons_store.h"
#include "props_memo.h"
#include "retention.h"
#include "tokens.h"
#include "writer.h"

#define PRUNE_EVERY_MS (3600 * 1000)

static wr_ctx_t ctx;
static wr_retention_t *retention;
static cm_signals_t *signals;

static bool ready(void *ud, cm_buf_t *why)
{
    wr_ctx_t *c = ud;
    bool ok = cm_consumer_ready(c->consumer, why);
    if (ok && !cm_evstore_ready(c->events, why))
        ok = false;
    if (ok && !c->persons_migrated) {
        cm_buf_append_cstr(why, "persons store: tables not created yet");
        ok = false;
    }
    if (ok && !cm_db_ready(c->persons, why))
        ok = false;
    if (ok && c->failing) {
        cm_buf_appendf(why, "the last batch failed: %s", c->last_error);
        ok = false;
    }
    return ok;
}

/* ---- the drain ------------------------------------------------------------------------ */

static int closing_left;

static void one_closed(void *ud)
{
    (void)ud;
    if (--closing_left > 0)
        return;
    cm_signals_close(signals);
}

static void prune_closed(uv_handle_t *h)
{
    (void)h;
    one_closed(NULL);
}

static void queue_closed(void *ud)
{
    (void)ud;
    /* Redis last: the queue and the consumer borrowed the clients. */
    if (ctx.redis)
        cm_redis_close(ctx.redis, one_closed, NULL);
    if (ctx.redis_stream)
        cm_redis_close(ctx.redis_stream, one_closed, NULL);
    wr_tokens_close(ctx.tokens);
}

static void stores_close(void *ud);

static void consumer_closed(void *ud)
{
    (void)ud;
    /* retention.c's step under way finishes on the stores first */
    wr_retention_close(retention, stores_close, NULL);
}

static void stores_close(void *ud)
{
    (void)ud;
    closing_left = 4 + (ctx.redis != NULL) + (ctx.redis_stream != NULL);
    uv_close((uv_handle_t *)&ctx.step, prune_closed);
    cm_evstore_close(ctx.events, one_closed, NULL);
    cm_db_close(ctx.persons, one_closed, NULL);
    uv_close((uv_handle_t *)&ctx.prune, prune_closed);
    cm_queue_close(ctx.dead_letters, 5000, queue_closed, NULL);
}

static void http_drained(void *ud)
{
    (void)ud;
    cm_http_server_free(ctx.http);
}

static void on_term(void *ud)
{
    (void)ud;
    cm_log(CM_LOG_INFO, NULL, "draining: finishing the batches under way");
    cm_consumer_close(ctx.consumer, consumer_closed, NULL);
    cm_http_server_drain(ctx.http, (uint64_t)ctx.cfg.svc.drain_timeout_ms, http_drained, NULL);
}

/* ---- start-up ------------------------------------------------------------------------- */

static int make_queue(void)
{
    const char *topics[] = {ctx.cfg.topic_main, ctx.cfg.topic_historical};
    cm_consumer_opts_t co = {
        .topics = topics,
        .ntopics = 2,
        .group = ctx.cfg.group,
        .consumer = ctx.cfg.consumer_name,
        .max_batch = (size_t)ctx.cfg.batch_size,
        .max_batch_bytes = ctx.cfg.batch_bytes,
        .depth = WR_BATCHES_IN_FLIGHT,
        .claim_idle_ms = (int)ctx.cfg.claim_idle_ms,
        .metrics = ctx.metrics,
    };
    if (ctx.cfg.kafka_brokers[0] != '\0') {
        const char *extra[64];
        char *copy = cm_xstrdup(ctx.cfg.kafka_properties);
        size_t nextra = cm_config_split_list(copy, extra, CM_ARRAY_LEN(extra));
        cm_consumer_kafka_opts_t ko = {
            .brokers = ctx.cfg.kafka_brokers, .extra = extra, .nextra = nextra};
        int rc = cm_consumer_kafka_new(ctx.loop, &co, &ko, wr_on_batch, &ctx, &ctx.consumer);
        /* The dead-letter producer has its own properties: a broker's
         * security settings are given to both sides, while the consumer's
         * own (session timeouts...) would only draw librdkafka's warnings. */
        const char *pextra[64];
        char *pcopy = cm_xstrdup(ctx.cfg.kafka_producer_properties);
        cm_queue_kafka_opts_t qo = {.brokers = ctx.cfg.kafka_brokers,
                                    .client_id = "writer-dead-letters",
                                    .message_max_bytes = 2000000,
                                    .extra = pextra,
                                    .nextra =
                                        cm_config_split_list(pcopy, pextra, CM_ARRAY_LEN(pextra)),
                                    .metrics = ctx.metrics};
        if (rc == 0)
            rc = cm_queue_kafka_new(ctx.loop, &qo, &ctx.dead_letters);
        free(pcopy);
        free(copy);
        return rc;
    }
    if (ctx.redis == NULL) {
        cm_log(CM_LOG_ERROR, NULL, "no queue: set KAFKA_BROKERS or REDIS_URL");
        return CM_EINVAL;
    }
    cm_redis_opts_t ro = {
        .url = ctx.cfg.svc.redis_url, .name = "redis-stream", .command_timeout_ms = 5000};
    if (cm_redis_new(ctx.loop, &ro, &ctx.redis_stream) != 0)
        return CM_EINVAL;
    co.block_ms = 500;
    if (cm_consumer_redis_new(ctx.loop, ctx.redis_stream, &co, wr_on_batch, &ctx, &ctx.consumer) !=
        0)
        return CM_EINVAL;
    cm_queue_redis_opts_t qo = {.max_message_bytes = 2000000, .metrics = ctx.metrics};
    return cm_queue_redis_new(ctx.loop, ctx.redis, &qo, &ctx.dead_letters);
}

static void on_migrated(int status, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (status != 0) {
        cm_log(CM_LOG_ERROR, NULL, "persons store: %s", cm_db_error(res));
        return; /* not ready; batches are handed back until a restart fixes it */
    }
    ctx.persons_migrated = true;
}

static void on_pruned(int status, const cm_db_res_t *res, void *ud)
{
    wr_stmts_t *s = ud;
    if (status != 0)
        cm_log(CM_LOG_WARN, NULL, "persons store: pruning events_seen: %s", cm_db_error(res));
    wr_stmts_free(s);
    free(s);
}

static void on_prune(uv_timer_t *t)
{
    (void)t;
    if (!ctx.persons_migrated)
        return;
    wr_stmts_t *s = cm_xcalloc(1, sizeof(*s));
    int64_t before = cm_now_us() / 1000 - ctx.cfg.seen_days * 86400000LL;
    wr_persons_prune_stmt(before, s);
    cm_db_run(ctx.persons, s->stmts, s->n, on_pruned, s);
}

static void make_metrics(void)
{
    static const double buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    cm_metrics_t *m = ctx.metrics = cm_metrics_new();
    ctx.m_stored = cm_metrics_counter(m, "writer_events_stored_total",
                                      "Events newly written to the event store", NULL);
    ctx.m_duplicates = cm_metrics_counter(m, "writer_events_duplicate_total",
                                          "Redelivered events the store already had", NULL);
    ctx.m_dead = cm_metrics_counter(m, "writer_dead_letters_total",
                                    "Messages sent to the dead-letter queue", NULL);
    ctx.m_dropped_token = cm_metrics_counter(m, "writer_events_dropped_total",
                                             "Valid events not stored", "reason=\"unknown_token\"");
    ctx.m_dropped_invalid =
        cm_metrics_counter(m, "writer_events_dropped_total", "Valid events not stored",
                           "reason=\"invalid_when_personless\"");
    ctx.m_warnings = cm_metrics_counter(m, "writer_ingestion_warnings_total",
                                        "Refused merges and other ingestion warnings", NULL);
    ctx.m_conflicts = cm_metrics_counter(
        m, "writer_person_conflicts_total",
        "Person transactions redone because another writer changed the same persons", NULL);
    ctx.m_failures = cm_metrics_counter(m, "writer_batch_failures_total",
                                        "Batches handed back to the queue to be retried", NULL);
    ctx.m_memo_hits = cm_metrics_counter(m, "writer_person_loads_total",
                                         "Stored persons loaded, by whether their properties"
                                         " were parsed or found parsed from an earlier batch",
                                         "parse=\"reused\"");
    ctx.m_memo_misses = cm_metrics_counter(m, "writer_person_loads_total",
                                           "Stored persons loaded, by whether their properties"
                                           " were parsed or found parsed from an earlier batch",
                                           "parse=\"parsed\"");
    ctx.m_batch_seconds =
        cm_metrics_histogram(m, "writer_batch_seconds", "From delivery to acknowledgement", NULL,
                             buckets, CM_ARRAY_LEN(buckets));
}

static int start(void)
{
    ctx.loop = uv_default_loop();
    make_metrics();
    signals = cm_signals_start(ctx.loop, on_term, NULL); /* runs only once the loop does */
    if (ctx.cfg.svc.redis_url[0] != '\0') {
        cm_redis_opts_t ro = {.url = ctx.cfg.svc.redis_url, .name = "redis"};
        if (cm_redis_new(ctx.loop, &ro, &ctx.redis) != 0) {
            cm_log(CM_LOG_ERROR, NULL, "REDIS_URL is not a valid redis:// URL");
            return CM_EINVAL;
        }
    } else {
        cm_log(CM_LOG_ERROR, NULL, "REDIS_URL is required: project tokens and the person copies");
        return CM_EINVAL;
    }
    char events_url[4096];
    if (ctx.cfg.clickhouse_url[0])
        snprintf(events_url, sizeof(events_url), "%s", ctx.cfg.clickhouse_url);
    else
        snprintf(events_url, sizeof(events_url), "sqlite:%s", ctx.cfg.events_sqlite);
    if (cm_evstore_open(ctx.loop,
                        &(cm_evstore_opts_t){.url = events_url,
                                             .metrics = ctx.metrics,
                                             .cluster = ctx.cfg.clickhouse_cluster},
                        &ctx.events) != 0) {
        cm_log(CM_LOG_ERROR, NULL, "cannot open the event store (CLICKHOUSE_URL / EVENTS_DB)");
        return CM_EINVAL;
    }
    if (cm_db_open(
            ctx.loop,
            &(cm_db_opts_t){.url = ctx.cfg.persons_url, .name = "persons", .metrics = ctx.metrics},
            &ctx.persons) != 0) {
        cm_log(CM_LOG_ERROR, NULL, "PERSONS_DATABASE_URL: not sqlite:<path> or postgres://");
        return CM_EINVAL;
    }
    cm_db_migrate(ctx.persons, wr_persons_migrations, wr_persons_nmigrations, on_migrated, NULL);
    ctx.persons_memo = wr_props_memo_new(WR_PROPS_MEMO_BYTES);
    ctx.tokens = wr_tokens_new(ctx.loop, ctx.redis, (uint64_t)ctx.cfg.tokens_refresh_ms);
    if (make_queue() != 0)
        return CM_EINVAL;
    uv_timer_init(ctx.loop, &ctx.step);
    uv_timer_init(ctx.loop, &ctx.prune);
    uv_timer_start(&ctx.prune, on_prune, 60 * 1000, PRUNE_EVERY_MS);
    retention = wr_retention_start(&ctx);
    ctx.http = cm_service_http_new(ctx.loop, "writer", &ctx.cfg.svc, ctx.metrics, ready, &ctx);
    return cm_service_http_listen(ctx.http, &ctx.cfg.svc);
}

int main(int argc, char **argv)
{
    static const cm_cli_t cli = {
        "writer", "the queue into the event store and persons (ops routes only)", NULL, NULL};
    int rc = cm_cli_handle(&cli, argc, argv); /* --help, --version, unknown arguments */
    if (rc >= 0)
        return rc;
    rc = cm_service_configure("writer", argc, argv, wr_config_keys, wr_config_nkeys, &ctx.cfg,
                              &ctx.cfg.svc);
    if (rc >= 0)
        return rc; /* a bad configuration (reported), or --print-config */
    if (start() != 0)
        return 1;
    cm_log(CM_LOG_INFO, NULL, "queue: %s, event store: %s, persons: %s",
           cm_consumer_backend(ctx.consumer),
           cm_evstore_kind(ctx.events) == CM_EVSTORE_CLICKHOUSE ? "clickhouse" : "sqlite",
           cm_db_dialect(ctx.persons) == CM_DB_POSTGRES ? "postgres" : "sqlite");
    uv_run(ctx.loop, UV_RUN_DEFAULT);
    rc = cm_service_finish(ctx.loop, wr_config_keys, wr_config_nkeys, &ctx.cfg);
    wr_props_memo_free(ctx.persons_memo);
    cm_metrics_free(ctx.metrics);
    return rc;
}
