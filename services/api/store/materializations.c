/*
 * materializations.c - the materializer's reads and writes of endpoint
 * versions (see store.h and services/api/endpoints/materializer.c). A refresh is
 * claimed by setting the version Running, which only one api process can
 * do at a time; one Running for over an hour is taken as abandoned (its
 * process died) and may be claimed again.
 */
#include <stdio.h>
#include <stdlib.h>

#include "store/store.h"

#define ABANDONED_MS 3600000

void api_store_mat_work(cm_db_t *db, cm_db_done_cb done, void *ud)
{
    cm_db_stmt_t s = {
        "SELECT v.id, e.project_id, v.query, v.sync_frequency, v.mat_status, v.mat_at,"
        " v.mat_started, v.mat_table, v.is_materialized,"
        " (SELECT p.timezone FROM projects p WHERE p.id = e.project_id),"
        " (SELECT p.week_start_day FROM projects p WHERE p.id = e.project_id)"
        " FROM endpoint_versions v"
        " JOIN endpoints e ON e.id = v.endpoint_id"
        " WHERE (v.is_materialized = 1 AND e.is_active = 1) OR v.mat_table IS NOT NULL"
        " ORDER BY v.mat_at IS NOT NULL, v.mat_at LIMIT 100",
        NULL, 0};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_mat_claim(cm_db_t *db, const char *version_id, cm_db_done_cb done, void *ud)
{
    char now[24], stale[24];
    api_store_now(now);
    snprintf(stale, sizeof(stale), "%lld", atoll(now) - ABANDONED_MS);
    const char *p[] = {version_id, now, stale};
    cm_db_stmt_t s = {"UPDATE endpoint_versions SET mat_status = 'Running', mat_started = $2"
                      " WHERE id = $1 AND is_materialized = 1 AND (mat_status IS NULL OR"
                      " mat_status <> 'Running' OR mat_started < CAST($3 AS BIGINT))",
                      p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_mat_finish(cm_db_t *db, const char *version_id, const char *status,
                          const char *error, const char *table, const char *info,
                          cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {version_id, status, error, table, info, now};
    cm_db_stmt_t s = {"UPDATE endpoint_versions SET mat_status = $2, mat_error = $3,"
                      " mat_table = COALESCE(CAST($4 AS TEXT), mat_table),"
                      " mat_info = COALESCE(CAST($5 AS TEXT), mat_info),"
                      " mat_at = CASE WHEN $2 = 'Completed' THEN CAST($6 AS BIGINT) ELSE mat_at END"
                      " WHERE id = $1",
                      p, 6};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_mat_dropped(cm_db_t *db, const char *version_id, const char *table,
                           cm_db_done_cb done, void *ud)
{
    const char *p[] = {version_id, table};
    cm_db_stmt_t s = {"UPDATE endpoint_versions SET mat_table = NULL, mat_info = NULL,"
                      " mat_status = NULL, mat_at = NULL WHERE id = $1 AND mat_table = $2"
                      " AND is_materialized = 0",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_mat_stale_project(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id};
    /* due: no time of the last refresh; one Running now finishes first */
    cm_db_stmt_t s = {"UPDATE endpoint_versions SET mat_at = NULL, mat_started = NULL WHERE"
                      " is_materialized = 1 AND (mat_status IS NULL OR mat_status <> 'Running')"
                      " AND endpoint_id IN (SELECT id FROM endpoints WHERE project_id ="
                      " CAST($1 AS BIGINT))",
                      p, 1};
    cm_db_run(db, &s, 1, done, ud);
}
