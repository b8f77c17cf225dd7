/* outbox.c - the publish queue and what the fleet reads of a project (see store.h). */
#include "cm/common.h"
#include "store/store.h"

void api_store_outbox_head(cm_db_t *db, const char *limit, cm_db_done_cb done, void *ud)
{
    const char *p[] = {limit};
    cm_db_stmt_t s = {"SELECT id, project_id, retired_token, retired_secret FROM outbox"
                      " ORDER BY id LIMIT $1",
                      p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_outbox_depth(cm_db_t *db, cm_db_done_cb done, void *ud)
{
    cm_db_stmt_t s = {"SELECT count(*), min(created_at) FROM outbox", NULL, 0};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_outbox_ack(cm_db_t *db, const char *id, cm_db_done_cb done, void *ud)
{
    const char *p[] = {id};
    cm_db_stmt_t s = {"DELETE FROM outbox WHERE id <= $1", p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_outbox_all(cm_db_t *db, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {now};
    cm_db_stmt_t s[] = {
        {"INSERT INTO outbox (project_id, created_at) SELECT id, $1 FROM projects ORDER BY id", p,
         1},
        {API_STORE_QUEUE_KEYS, p, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_fleet_project(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id};
    cm_db_stmt_t s[] = {
        {"SELECT p.id, p.api_token, p.secret_token_hash, p.timezone, p.deleted,"
         " o.flags_quota_until, p.secret_token_backup_hash FROM projects p JOIN organizations o"
         " ON o.id = p.organization_id WHERE p.id = $1",
         p, 1},
        {"SELECT id, key, name, filters, active, ensure_experience_continuity, version,"
         " evaluation_runtime, evaluation_contexts, bucketing_identifier FROM feature_flags"
         " WHERE project_id = $1 AND deleted = 0 ORDER BY key",
         p, 1},
        {"SELECT group_type_index, group_type FROM group_types WHERE project_id = $1"
         " ORDER BY group_type_index",
         p, 1},
        {"SELECT id, filters FROM cohorts WHERE project_id = $1 AND deleted = 0 ORDER BY id", p, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}
