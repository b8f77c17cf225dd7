/*
 * main.c - the flags service: configuration, wiring, the loop, the drain.
 *
 * Two Redis command clients: one for the project tables (large, slow-ish
 * reads every refresh) and one for per-request person reads with a short
 * timeout, so a slow table read can never time out (and drop) the
 * connection that requests wait on. A third, subscriber, client listens on
 * flags:changed (made by the store). All three use FLAGS_REDIS_URL when set
 * (a regional replica: the service only reads), else REDIS_URL; the
 * freshness probe (serve/freshness.h) bounds how stale /_ready tolerates.
 * Prints {"listening":PORT} on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cm/cli.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/service.h"
#include "cm/signals.h"
#include "flags.h"

static flg_ctx_t ctx;
static cm_redis_t *tables_redis;
static cm_signals_t *signals;

static bool ready(void *ud, cm_buf_t *why)
{
    flg_ctx_t *c = ud;
    return flg_store_ready(c->store, why) && flg_fresh_ok(c->fresh, why);
}

static void redis_closed(void *ud)
{
    (void)ud;
}

static void store_closed(void *ud)
{
    (void)ud;
    cm_redis_close(tables_redis, redis_closed, NULL);
    cm_redis_close(ctx.redis, redis_closed, NULL);
    cm_signals_close(signals);
}

static void fresh_closed(void *ud)
{
    (void)ud;
    flg_store_close(ctx.store, store_closed, NULL);
}

static void http_drained(void *ud)
{
    (void)ud;
    cm_http_server_free(ctx.http);
    flg_fresh_close(ctx.fresh, fresh_closed, NULL);
}

static void on_term(void *ud)
{
    (void)ud;
    cm_http_server_drain(ctx.http, (uint64_t)ctx.cfg.svc.drain_timeout_ms, http_drained, NULL);
}

static void make_metrics(void)
{
    ctx.metrics = cm_metrics_new();
    ctx.evaluations = cm_metrics_counter(ctx.metrics, "flags_evaluations_total",
                                         "Flag evaluation requests answered", NULL);
    ctx.quota_limited = cm_metrics_counter(ctx.metrics, "flags_quota_limited_total",
                                           "Requests answered quotaLimited", NULL);
    ctx.person_errors = cm_metrics_counter(ctx.metrics, "flags_person_read_errors_total",
                                           "Person or group reads from Redis that failed", NULL);
    ctx.flag_errors = cm_metrics_counter(ctx.metrics, "flags_responses_with_errors_total",
                                         "Responses with errorsWhileComputingFlags", NULL);
    ctx.regex_budget_spent =
        cm_metrics_counter(ctx.metrics, "flags_regex_budget_exhausted_total",
                           "Requests whose regex conditions outran FLAGS_REGEX_BUDGET", NULL);
}

static int start(void)
{
    ctx.loop = uv_default_loop();
    make_metrics();
    signals = cm_signals_start(ctx.loop, on_term, NULL); /* runs only once the loop does */
    const char *url = ctx.cfg.read_url[0] ? ctx.cfg.read_url : ctx.cfg.svc.redis_url;
    cm_redis_opts_t tables = {.url = url, .name = "redis-tables", .command_timeout_ms = 10000};
    cm_redis_opts_t persons = {
        .url = url, .name = "redis-persons", .command_timeout_ms = (int)ctx.cfg.person_timeout_ms};
    if (cm_redis_new(ctx.loop, &tables, &tables_redis) != 0 ||
        cm_redis_new(ctx.loop, &persons, &ctx.redis) != 0) {
        cm_log(CM_LOG_ERROR, NULL, "%s is not a valid redis:// URL",
               ctx.cfg.read_url[0] ? "FLAGS_REDIS_URL" : "REDIS_URL");
        return CM_EINVAL;
    }
    if (ctx.cfg.geoip_db[0] != '\0' && flg_geoip_open(ctx.cfg.geoip_db, &ctx.geoip) != 0)
        return CM_EIO;
    ctx.answers = flg_answer_cache_new(ctx.cfg.answer_cache_bytes, ctx.metrics);
    ctx.store =
        flg_store_new(ctx.loop, tables_redis, &tables, (uint64_t)ctx.cfg.refresh_ms, ctx.metrics);
    ctx.fresh = flg_fresh_new(ctx.loop, tables_redis, ctx.store, (uint64_t)ctx.cfg.max_staleness_ms,
                              ctx.metrics);
    ctx.http = cm_service_http_new(ctx.loop, "flags", &ctx.cfg.svc, ctx.metrics, ready, &ctx);
    flg_flags_routes(&ctx);
    flg_definitions_routes(&ctx);
    return cm_service_http_listen(ctx.http, &ctx.cfg.svc);
}

int main(int argc, char **argv)
{
    static const cm_cli_t cli = {
        "flags", "feature flag evaluation: POST /flags?v=2, GET /flags/definitions", NULL, NULL};
    int rc = cm_cli_handle(&cli, argc, argv); /* --help, --version, unknown arguments */
    if (rc >= 0)
        return rc;
    rc = cm_service_configure("flags", argc, argv, flg_config_keys, flg_config_nkeys, &ctx.cfg,
                              &ctx.cfg.svc);
    if (rc >= 0)
        return rc; /* a bad configuration (reported), or --print-config */
    if (start() != 0)
        return 1;
    uv_run(ctx.loop, UV_RUN_DEFAULT);
    flg_geoip_close(ctx.geoip);
    flg_answer_cache_free(ctx.answers);
    rc = cm_service_finish(ctx.loop, flg_config_keys, flg_config_nkeys, &ctx.cfg);
    cm_metrics_free(ctx.metrics);
    return rc;
}
