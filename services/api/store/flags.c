/* flags.c - feature flags, cohorts and group types in the metadata store (see store.h). */
#include "cm/common.h"
#include "store/store.h"

#define FLAG_COLUMNS                                                                               \
    "id, key, name, filters, active, deleted, ensure_experience_continuity, evaluation_runtime,"   \
    " evaluation_contexts, bucketing_identifier, version, created_by, created_at, updated_at"

/* Every change to a project's flags, with its outbox entry: retires the
 * rendered list pages kept under the old version (http/page_cache.h). */
#define BUMP_FLAGS_VERSION "UPDATE projects SET flags_version = flags_version + 1 WHERE id = $1"

void api_store_flags_list(cm_db_t *db, const char *project_id, const char *limit,
                          const char *offset, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, limit, offset};
    /* The total as a subquery run once, not COUNT(*) OVER (), which copies
     * every row (filters and all) through a window before the page. */
    cm_db_stmt_t s = {"SELECT " FLAG_COLUMNS ", (SELECT COUNT(*) FROM feature_flags"
                      " WHERE project_id = $1 AND deleted = 0) FROM feature_flags"
                      " WHERE project_id = $1 AND deleted = 0 ORDER BY id DESC LIMIT $2 OFFSET $3",
                      p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_flags_version(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id};
    cm_db_stmt_t s = {"SELECT flags_version FROM projects WHERE id = $1", p, 1,
                      .until_changed = true};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_flag_get(cm_db_t *db, const char *project_id, const char *flag_id,
                        cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id, flag_id};
    cm_db_stmt_t s = {"SELECT " FLAG_COLUMNS ", 1 FROM feature_flags"
                      " WHERE project_id = $1 AND id = $2 AND deleted = 0",
                      p, 2, .until_changed = true};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_flag_context(cm_db_t *db, const char *project_id, const char *flag_id,
                            cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id};
    const char *q[] = {project_id, flag_id ? flag_id : "0"};
    cm_db_stmt_t s[] = {
        {"SELECT " FLAG_COLUMNS ", 1 FROM feature_flags"
         " WHERE project_id = $1 AND id = $2 AND deleted = 0",
         q, 2},
        {"SELECT id FROM cohorts WHERE project_id = $1 AND deleted = 0", p, 1},
        {"SELECT id, key, filters FROM feature_flags WHERE project_id = $1 AND deleted = 0", p, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_flag_create(cm_db_t *db, const api_store_flag_t *f, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {f->project_id, f->key,      f->name,      f->filters, f->active, f->eec,
                       f->runtime,    f->contexts, f->bucketing, f->user_id, now};
    const char *q[] = {f->project_id, now};
    cm_db_stmt_t s[] = {
        {"INSERT INTO feature_flags (project_id, key, name, filters, active,"
         " ensure_experience_continuity, evaluation_runtime, evaluation_contexts,"
         " bucketing_identifier, created_by, created_at, updated_at)"
         " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING " FLAG_COLUMNS
         ", 1",
         p, 11},
        {"INSERT INTO outbox (project_id, created_at) VALUES ($1, $2)", q, 2},
        {BUMP_FLAGS_VERSION, q, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_flag_update(cm_db_t *db, const api_store_flag_t *f, const char *flag_id,
                           const char *version, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {f->project_id, flag_id,    version, f->key,     f->name,
                       f->filters,    f->active,  f->eec,  f->runtime, f->contexts,
                       f->bucketing,  f->deleted, now};
    const char *q[] = {f->project_id, now};
    cm_db_stmt_t s[] = {
        {"UPDATE feature_flags SET key = $4, name = $5, filters = $6, active = $7,"
         " ensure_experience_continuity = $8, evaluation_runtime = $9, evaluation_contexts = $10,"
         " bucketing_identifier = $11, deleted = $12, updated_at = $13, version = version + 1"
         " WHERE project_id = $1 AND id = $2 AND version = $3 AND deleted = 0"
         " RETURNING " FLAG_COLUMNS ", 1",
         p, 13},
        {"INSERT INTO outbox (project_id, created_at) VALUES ($1, $2)", q, 2},
        {BUMP_FLAGS_VERSION, q, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}
