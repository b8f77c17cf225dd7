/*
 * metrics.h - the api's own series (besides libcommon's http_*, store_*
 * and process_*): endpoint runs, their answer cache, materializations and
 * the outbox. Made once in main(); the handles belong to ctx->metrics.
 * docs/operations.md lists them.
 */
#ifndef API_METRICS_H
#define API_METRICS_H

#include "cm/metrics.h"

typedef struct api_metrics {
    /* api_endpoint_runs_total{result}: ok (computed), cached (the cache's
     * answer), invalid (the source refused the version: 400), error (the
     * event store failed or timed out) */
    cm_counter_t *runs_ok, *runs_cached, *runs_invalid, *runs_error;
    /* api_endpoint_cache_lookups_total{result}: hit, miss (Redis away counts as a miss) */
    cm_counter_t *cache_hit, *cache_miss;
    /* api_materializations_total{result}, api_materialization_duration_seconds,
     * api_materializations_running, api_materialization_last_success_timestamp_seconds */
    cm_counter_t *mat_completed, *mat_failed;
    cm_histogram_t *mat_seconds;
    cm_gauge_t *mat_running, *mat_last_success;
    /* api_outbox_entries, api_outbox_oldest_age_seconds: changes the flags
     * fleet has not been told of yet (Redis away keeps them) */
    cm_gauge_t *outbox_entries, *outbox_oldest_age;
} api_metrics_t;

/* Registers every series at zero, so a scrape shows them before first use. */
void api_metrics_init(api_metrics_t *am, cm_metrics_t *m);

#endif
