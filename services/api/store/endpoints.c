/* endpoints.c - endpoints, their versions and the query variables in the
 * metadata store (see store.h). */
#include "cm/common.h"
#include "store/store.h"

#define VAR_COLUMNS                                                                                \
    "id, name, code_name, type, default_value, value_options, created_at, updated_at"

void api_store_variables_list(cm_db_t *db, const char *project_id, const char *limit,
                              const char *offset, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, limit, offset};
    cm_db_stmt_t s = {"SELECT " VAR_COLUMNS ", (SELECT COUNT(*) FROM insight_variables"
                      " WHERE project_id = $1) FROM insight_variables WHERE project_id = $1"
                      " ORDER BY created_at DESC, id LIMIT $2 OFFSET $3",
                      p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_variable_get(cm_db_t *db, const char *project_id, const char *id, cm_db_done_cb done,
                            void *ud)
{
    const char *p[] = {project_id, id};
    cm_db_stmt_t s = {"SELECT " VAR_COLUMNS ", 1 FROM insight_variables"
                      " WHERE project_id = $1 AND id = $2",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_variable_create(cm_db_t *db, const char *project_id, const char *id,
                               const char *name, const char *code_name, const char *type,
                               const char *default_value, const char *options, cm_db_done_cb done,
                               void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {id, project_id, name, code_name, type, default_value, options, now};
    cm_db_stmt_t s = {"INSERT INTO insight_variables (id, project_id, name, code_name, type,"
                      " default_value, value_options, created_at, updated_at)"
                      " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING " VAR_COLUMNS ", 1",
                      p, 8};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_variable_update(cm_db_t *db, const char *project_id, const char *id,
                               const char *name, const char *code_name, const char *type,
                               const char *default_value, const char *options, cm_db_done_cb done,
                               void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {project_id, id, name, code_name, type, default_value, options, now};
    cm_db_stmt_t s = {"UPDATE insight_variables SET name = $3, code_name = $4, type = $5,"
                      " default_value = $6, value_options = $7, updated_at = $8"
                      " WHERE project_id = $1 AND id = $2 RETURNING " VAR_COLUMNS ", 1",
                      p, 8};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_variable_delete(cm_db_t *db, const char *project_id, const char *id,
                               cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, id};
    cm_db_stmt_t s = {"DELETE FROM insight_variables WHERE project_id = $1 AND id = $2"
                      " RETURNING id",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

/* ---- endpoints ------------------------------------------------------------------------------ */

/* One endpoint with one of its versions (API_ENDPOINT_* order). */
#define ENDPOINT_COLUMNS                                                                           \
    "e.id, e.name, e.is_active, e.current_version, e.derived_from_insight, e.created_by,"          \
    " e.created_at, e.updated_at, v.version, v.query, v.description, v.cache_age_seconds,"         \
    " v.is_materialized, v.is_active, v.created_at, v.id, v.sync_frequency, v.mat_status,"         \
    " v.mat_error, v.mat_at, v.mat_table, v.mat_info,"                                             \
    " (SELECT COUNT(*) FROM endpoint_versions c WHERE c.endpoint_id = e.id)"

void api_store_endpoints_list(cm_db_t *db, const char *project_id, const char *is_active,
                              cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, is_active};
    cm_db_stmt_t s = {"SELECT " ENDPOINT_COLUMNS " FROM endpoints e JOIN endpoint_versions v"
                      " ON v.endpoint_id = e.id AND v.version = e.current_version"
                      " WHERE e.project_id = $1 AND (CAST($2 AS INTEGER) IS NULL"
                      " OR e.is_active = CAST($2 AS INTEGER))"
                      " ORDER BY e.created_at DESC, e.id",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_endpoint_get(cm_db_t *db, const char *project_id, const char *name,
                            const char *version, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, name, version};
    cm_db_stmt_t s = {
        "SELECT " ENDPOINT_COLUMNS " FROM endpoints e JOIN endpoint_versions v"
        " ON v.endpoint_id = e.id AND v.version = COALESCE(CAST($3 AS INTEGER), e.current_version)"
        " WHERE e.project_id = $1 AND e.name = $2",
        p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_endpoint_run_get(cm_db_t *db, const char *project_id, const char *name,
                                const char *version, unsigned cache_ms, cm_db_done_cb done,
                                void *ud)
{
    const char *p[] = {project_id, name, version};
    cm_db_stmt_t s = {"SELECT " ENDPOINT_COLUMNS ","
                      " (SELECT p.timezone FROM projects p WHERE p.id = e.project_id),"
                      " (SELECT p.week_start_day FROM projects p WHERE p.id = e.project_id),"
                      " iv.id, iv.type FROM endpoints e"
                      " JOIN endpoint_versions v ON v.endpoint_id = e.id"
                      " AND v.version = COALESCE(CAST($3 AS INTEGER), e.current_version)"
                      " LEFT JOIN insight_variables iv ON iv.project_id = e.project_id"
                      " WHERE e.project_id = $1 AND e.name = $2",
                      p, 3, .cache_ms = cache_ms, .until_changed = true};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_endpoint_create(cm_db_t *db, const api_endpoint_write_t *w, cm_db_done_cb done,
                               void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {
        w->id, w->project_id, w->name, w->is_active, w->derived_from_insight, w->user_id, now};
    const char *q[] = {
        w->version_id,        w->id,      w->query, w->description ? w->description : "",
        w->cache_age_seconds, w->user_id, now,      w->is_materialized,
        w->sync_frequency};
    const char *r[] = {w->project_id, w->name};
    cm_db_stmt_t s[] = {
        {"INSERT INTO endpoints (id, project_id, name, is_active, current_version,"
         " derived_from_insight, created_by, created_at, updated_at)"
         " VALUES ($1, $2, $3, COALESCE(CAST($4 AS INTEGER), 1), 1, $5, $6, $7, $7)",
         p, 7},
        {"INSERT INTO endpoint_versions (id, endpoint_id, version, query, description,"
         " cache_age_seconds, created_by, created_at, is_materialized, sync_frequency)"
         " VALUES ($1, $2, 1, $3, $4, $5, $6, $7, COALESCE(CAST($8 AS INTEGER), 0),"
         " COALESCE(CAST($9 AS TEXT), '24hour'))",
         q, 9},
        {"SELECT " ENDPOINT_COLUMNS " FROM endpoints e JOIN endpoint_versions v"
         " ON v.endpoint_id = e.id AND v.version = e.current_version"
         " WHERE e.project_id = $1 AND e.name = $2",
         r, 2},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

/*
 * An update in one transaction: the endpoint's activity; a new version
 * when the query changed (its description and cache age carried over);
 * the description and cache age on every version (PostHog's middle API
 * does so), each only when given; a version's own activity. The last
 * statement reads the endpoint back (table API_ENDPOINT_UPDATE_READ).
 */
void api_store_endpoint_update(cm_db_t *db, const api_endpoint_write_t *w, cm_db_done_cb done,
                               void *ud)
{
    char now[24];
    api_store_now(now);
    const char *a[] = {w->project_id, w->name, w->is_active, now};
    const char *b[] = {w->version_id, w->id, w->query, w->user_id, now};
    const char *c[] = {w->id};
    const char *d[] = {w->id, w->description, w->set_description ? "1" : NULL, w->cache_age_seconds,
                       w->set_cache_age ? "1" : NULL};
    const char *e[] = {w->id, w->version, w->version_active};
    const char *m[] = {w->id, w->is_materialized, w->sync_frequency};
    const char *r[] = {w->project_id, w->name, w->version};
    cm_db_stmt_t s[10];
    size_t n = 0;
    s[n++] =
        (cm_db_stmt_t){"UPDATE endpoints SET is_active = COALESCE(CAST($3 AS INTEGER), is_active),"
                       " updated_at = $4 WHERE project_id = $1 AND name = $2",
                       a, 4};
    if (w->query != NULL) {
        s[n++] = (cm_db_stmt_t){
            "INSERT INTO endpoint_versions (id, endpoint_id, version, query, description,"
            " cache_age_seconds, created_by, created_at)"
            " SELECT $1, e.id, e.current_version + 1, $3, v.description, v.cache_age_seconds,"
            " $4, $5 FROM endpoints e JOIN endpoint_versions v ON v.endpoint_id = e.id"
            " AND v.version = e.current_version WHERE e.id = $2",
            b, 5};
        /* the new version is materialized as the old one was (PostHog's
         * rule), the old one no longer: the materializer drops its table */
        s[n++] = (cm_db_stmt_t){
            "UPDATE endpoint_versions SET is_materialized = (SELECT o.is_materialized FROM"
            " endpoint_versions o JOIN endpoints e ON o.endpoint_id = e.id AND"
            " o.version = e.current_version WHERE e.id = $1), sync_frequency = (SELECT"
            " o.sync_frequency FROM endpoint_versions o JOIN endpoints e ON o.endpoint_id = e.id"
            " AND o.version = e.current_version WHERE e.id = $1)"
            " WHERE endpoint_id = $1 AND version = (SELECT current_version + 1 FROM endpoints"
            " WHERE id = $1)",
            c, 1};
        s[n++] = (cm_db_stmt_t){"UPDATE endpoint_versions SET is_materialized = 0 WHERE"
                                " endpoint_id = $1 AND version <= (SELECT current_version FROM"
                                " endpoints WHERE id = $1)",
                                c, 1};
        s[n++] = (cm_db_stmt_t){
            "UPDATE endpoints SET current_version = current_version + 1 WHERE id = $1", c, 1};
    }
    if (w->is_materialized != NULL || w->sync_frequency != NULL)
        s[n++] = (cm_db_stmt_t){
            "UPDATE endpoint_versions SET is_materialized = COALESCE(CAST($2 AS INTEGER),"
            " is_materialized), sync_frequency = COALESCE(CAST($3 AS TEXT), sync_frequency),"
            " mat_status = CASE WHEN CAST($2 AS INTEGER) = 1 AND is_materialized = 0 THEN NULL"
            " ELSE mat_status END WHERE endpoint_id = $1 AND version = (SELECT current_version"
            " FROM endpoints WHERE id = $1)",
            m, 3};
    if (w->set_description || w->set_cache_age)
        s[n++] = (cm_db_stmt_t){"UPDATE endpoint_versions SET"
                                " description = CASE WHEN CAST($3 AS TEXT) IS NULL THEN description"
                                " ELSE COALESCE(CAST($2 AS TEXT), '') END,"
                                " cache_age_seconds = CASE WHEN CAST($5 AS TEXT) IS NULL"
                                " THEN cache_age_seconds ELSE CAST($4 AS INTEGER) END"
                                " WHERE endpoint_id = $1",
                                d, 5};
    if (w->version != NULL && w->version_active != NULL)
        s[n++] = (cm_db_stmt_t){"UPDATE endpoint_versions SET is_active = CAST($3 AS INTEGER)"
                                " WHERE endpoint_id = $1 AND version = CAST($2 AS INTEGER)",
                                e, 3};
    s[n++] = (cm_db_stmt_t){"SELECT " ENDPOINT_COLUMNS " FROM endpoints e JOIN endpoint_versions v"
                            " ON v.endpoint_id = e.id AND v.version = COALESCE(CAST($3 AS INTEGER),"
                            " e.current_version) WHERE e.project_id = $1 AND e.name = $2",
                            r, 3};
    cm_db_run(db, s, n, done, ud);
}

void api_store_endpoint_delete(cm_db_t *db, const char *project_id, const char *name,
                               cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, name};
    cm_db_stmt_t s[] = {
        {"DELETE FROM endpoint_versions WHERE endpoint_id IN"
         " (SELECT id FROM endpoints WHERE project_id = $1 AND name = $2)",
         p, 2},
        {"DELETE FROM endpoints WHERE project_id = $1 AND name = $2 RETURNING id", p, 2},
    };
    cm_db_run(db, s, 2, done, ud);
}

void api_store_endpoint_versions(cm_db_t *db, const char *project_id, const char *name,
                                 cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, name};
    cm_db_stmt_t s = {"SELECT v.id, v.version, v.query, v.is_active, v.created_at, v.created_by,"
                      " v.description, v.cache_age_seconds, v.is_materialized"
                      " FROM endpoint_versions v JOIN endpoints e ON e.id = v.endpoint_id"
                      " WHERE e.project_id = $1 AND e.name = $2 ORDER BY v.version DESC",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

/* At most once an hour, as PostHog's (a run does not wait for it). */
void api_store_endpoint_executed(cm_db_t *db, const char *endpoint_id, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {endpoint_id, now};
    cm_db_stmt_t s = {
        "UPDATE endpoints SET last_executed_at = $2 WHERE id = $1 AND"
        " (last_executed_at IS NULL OR last_executed_at < CAST($2 AS BIGINT) - 3600000)",
        p, 2};
    cm_db_run(db, &s, 1, done, ud);
}
