/* cohorts.c - cohorts in the metadata store (see store.h). */
#include "cm/common.h"
#include "store/store.h"

#define COHORT_COLUMNS "id, name, description, filters, deleted, version, created_at, updated_at"

void api_store_cohorts_list(cm_db_t *db, const char *project_id, const char *limit,
                            const char *offset, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, limit, offset};
    cm_db_stmt_t s = {"SELECT " COHORT_COLUMNS ", (SELECT COUNT(*) FROM cohorts"
                      " WHERE project_id = $1 AND deleted = 0) FROM cohorts"
                      " WHERE project_id = $1 AND deleted = 0 ORDER BY id DESC LIMIT $2 OFFSET $3",
                      p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_cohort_context(cm_db_t *db, const char *project_id, const char *cohort_id,
                              cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id};
    const char *q[] = {project_id, cohort_id ? cohort_id : "0"};
    cm_db_stmt_t s[] = {
        {"SELECT " COHORT_COLUMNS ", 1 FROM cohorts WHERE project_id = $1 AND id = $2"
         " AND deleted = 0",
         q, 2},
        {"SELECT id, filters FROM cohorts WHERE project_id = $1 AND deleted = 0", p, 1},
        {"SELECT id, key, filters FROM feature_flags WHERE project_id = $1 AND deleted = 0", p, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_cohort_create(cm_db_t *db, const char *project_id, const char *name,
                             const char *description, const char *filters, cm_db_done_cb done,
                             void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {project_id, name, description, filters, now};
    const char *q[] = {project_id, now};
    cm_db_stmt_t s[] = {
        {"INSERT INTO cohorts (project_id, name, description, filters, created_at, updated_at)"
         " VALUES ($1, $2, $3, $4, $5, $5) RETURNING " COHORT_COLUMNS ", 1",
         p, 5},
        {"INSERT INTO outbox (project_id, created_at) VALUES ($1, $2)", q, 2},
    };
    cm_db_run(db, s, 2, done, ud);
}

void api_store_cohort_update(cm_db_t *db, const char *project_id, const char *cohort_id,
                             const char *version, const char *name, const char *description,
                             const char *filters, const char *deleted, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {project_id, cohort_id, version, name, description, filters, deleted, now};
    const char *q[] = {project_id, now};
    cm_db_stmt_t s[] = {
        {"UPDATE cohorts SET name = $4, description = $5, filters = $6, deleted = $7,"
         " updated_at = $8, version = version + 1"
         " WHERE project_id = $1 AND id = $2 AND version = $3 AND deleted = 0"
         " RETURNING " COHORT_COLUMNS ", 1",
         p, 8},
        {"INSERT INTO outbox (project_id, created_at) VALUES ($1, $2)", q, 2},
    };
    cm_db_run(db, s, 2, done, ud);
}
