/* metrics.c - the api's own series (see metrics.h). */
#include "metrics.h"

#include "cm/common.h"

void api_metrics_init(api_metrics_t *am, cm_metrics_t *m)
{
    static const double mat_buckets[] = {0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};
    const char *runs = "Endpoint runs by result: ok, cached, invalid (400), error (store failure)";
    am->runs_ok = cm_metrics_counter(m, "api_endpoint_runs_total", runs, "result=\"ok\"");
    am->runs_cached = cm_metrics_counter(m, "api_endpoint_runs_total", runs, "result=\"cached\"");
    am->runs_invalid = cm_metrics_counter(m, "api_endpoint_runs_total", runs, "result=\"invalid\"");
    am->runs_error = cm_metrics_counter(m, "api_endpoint_runs_total", runs, "result=\"error\"");
    const char *cache = "Endpoint runs' lookups of a cached answer (refresh=cache)";
    am->cache_hit =
        cm_metrics_counter(m, "api_endpoint_cache_lookups_total", cache, "result=\"hit\"");
    am->cache_miss =
        cm_metrics_counter(m, "api_endpoint_cache_lookups_total", cache, "result=\"miss\"");
    const char *mats = "Materialized tables built, by result";
    am->mat_completed =
        cm_metrics_counter(m, "api_materializations_total", mats, "result=\"completed\"");
    am->mat_failed = cm_metrics_counter(m, "api_materializations_total", mats, "result=\"failed\"");
    am->mat_seconds = cm_metrics_histogram(m, "api_materialization_duration_seconds",
                                           "Time to build a materialized table", NULL, mat_buckets,
                                           CM_ARRAY_LEN(mat_buckets));
    am->mat_running = cm_metrics_gauge(m, "api_materializations_running",
                                       "Materializations in progress in this process", NULL);
    am->mat_last_success =
        cm_metrics_gauge(m, "api_materialization_last_success_timestamp_seconds",
                         "When this process last completed a materialization (0: never)", NULL);
    am->outbox_entries =
        cm_metrics_gauge(m, "api_outbox_entries",
                         "Changes not yet published to the flags fleet (outbox rows)", NULL);
    am->outbox_oldest_age = cm_metrics_gauge(
        m, "api_outbox_oldest_age_seconds", "Age of the oldest unpublished change (0: none)", NULL);
}
