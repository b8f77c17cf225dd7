/* projects.c - organizations and projects in the metadata store (see store.h). */
#include "cm/common.h"
#include "cm/uuid.h"
#include "store/store.h"

void api_store_orgs_list(cm_db_t *db, const char *user_id, const char *limit, const char *offset,
                         cm_db_done_cb done, void *ud)
{
    const char *p[] = {user_id, limit, offset};
    cm_db_stmt_t s = {"SELECT o.id, o.name, o.created_at, o.flags_quota_until, m.level,"
                      " COUNT(*) OVER () FROM organizations o JOIN memberships m"
                      " ON m.organization_id = o.id WHERE m.user_id = $1"
                      " ORDER BY o.created_at, o.id LIMIT $2 OFFSET $3",
                      p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

/* The API_PROJECT_* columns, each name after prefix P ("p." or ""). */
#define PROJECT_COLUMNS(P)                                                                         \
    P "id, " P "uuid, " P "organization_id, " P "name, " P "api_token, " P "secret_token_mask, " P \
      "timezone, " P "created_at, " P "secret_token_backup_mask, " P "week_start_day"

void api_store_projects_list(cm_db_t *db, const char *user_id, const char *limit,
                             const char *offset, cm_db_done_cb done, void *ud)
{
    const char *p[] = {user_id, limit, offset};
    cm_db_stmt_t s = {
        "SELECT " PROJECT_COLUMNS(
            "p.") ", COUNT(*) OVER () FROM projects p"
                  " JOIN memberships m ON m.organization_id = p.organization_id"
                  " WHERE m.user_id = $1 AND p.deleted = 0 ORDER BY p.id LIMIT $2 OFFSET $3",
        p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_project_get(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud)
{
    const char *p[] = {project_id};
    cm_db_stmt_t s = {"SELECT " PROJECT_COLUMNS("p.") ", 1 FROM projects p"
                                                      " WHERE p.id = $1 AND p.deleted = 0",
                      p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_project_create(cm_db_t *db, const char *user_id, const char *org_id,
                              const char *name, const char *token, const char *secret_hash,
                              const char *secret_mask, const char *timezone, const char *week_start,
                              cm_db_done_cb done, void *ud)
{
    char now[24], uuid[CM_UUID_STR_LEN + 1];
    api_store_now(now);
    cm_uuid_v7(uuid);
    const char *p[] = {
        uuid,        org_id,   name, token,   secret_hash,
        secret_mask, timezone, now,  user_id, week_start && *week_start ? week_start : NULL};
    const char *q[] = {uuid, now};
    const char *k[] = {now};
    cm_db_stmt_t s[] = {
        {"INSERT INTO projects (uuid, organization_id, name, api_token, secret_token_hash,"
         " secret_token_mask, timezone, created_at, week_start_day)"
         " SELECT $1, m.organization_id, $3, $4, $5, $6, $7, $8, CAST($10 AS INTEGER)"
         " FROM memberships m"
         " WHERE m.user_id = $9 AND (CAST($2 AS TEXT) IS NULL OR m.organization_id = $2)"
         " ORDER BY m.created_at, m.organization_id LIMIT 1"
         " RETURNING " PROJECT_COLUMNS("") ", 1",
         p, 10},
        {"INSERT INTO outbox (project_id, created_at)"
         " SELECT id, $2 FROM projects WHERE uuid = $1",
         q, 2},
        {API_STORE_QUEUE_KEYS, k, 1}, /* personal keys reach it */
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_org_set_quota(cm_db_t *db, const char *org_id, const char *user_id,
                             const char *until, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {org_id, user_id, until};
    const char *q[] = {org_id, now, user_id};
    cm_db_stmt_t s[] = {
        {"UPDATE organizations SET flags_quota_until = $3 WHERE id = $1 AND EXISTS"
         " (SELECT 1 FROM memberships m WHERE m.organization_id = $1 AND m.user_id = $2"
         " AND m.level >= 8)"
         " RETURNING id, name, created_at, flags_quota_until,"
         " (SELECT level FROM memberships WHERE organization_id = $1 AND user_id = $2), 1",
         p, 3},
        {"INSERT INTO outbox (project_id, created_at) SELECT p.id, $2 FROM projects p"
         " WHERE p.organization_id = $1 AND p.deleted = 0 AND EXISTS"
         " (SELECT 1 FROM memberships m WHERE m.organization_id = $1 AND m.user_id = $3"
         " AND m.level >= 8) ORDER BY p.id",
         q, 3},
    };
    cm_db_run(db, s, 2, done, ud);
}

void api_store_project_by_token(cm_db_t *db, const char *token, cm_db_done_cb done, void *ud)
{
    const char *p[] = {token};
    cm_db_stmt_t s = {"SELECT id, secret_token_hash, secret_token_backup_hash FROM projects"
                      " WHERE api_token = $1 AND deleted = 0",
                      p, 1, .until_changed = true};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_remote_config(cm_db_t *db, const char *token, cm_db_done_cb done, void *ud)
{
    const char *p[] = {token};
    cm_db_stmt_t s = {"SELECT id, (SELECT COUNT(*) FROM feature_flags f WHERE f.project_id ="
                      " projects.id AND f.deleted = 0 AND f.active = 1) FROM projects"
                      " WHERE api_token = $1 AND deleted = 0",
                      p, 1, .until_changed = true};
    cm_db_run(db, &s, 1, done, ud);
}

/* Admins (level 8+) of the project's organization only. */
#define PROJECT_ADMIN                                                                              \
    " AND deleted = 0 AND EXISTS (SELECT 1 FROM memberships m"                                     \
    " WHERE m.organization_id = projects.organization_id AND m.user_id = $2 AND m.level >= 8)"

/* The change (parameters id, user, then a and b when given), which also
 * keeps what it retires in the project's retired_* columns and returns the
 * row, then the outbox entry copying them; one transaction, the UPDATE's row
 * lock ordering concurrent rotations. */
static void rotate(cm_db_t *db, const char *update_sql, const char *project_id, const char *user_id,
                   const char *a, const char *b, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *u[] = {project_id, user_id, a, b};
    const char *o[] = {project_id, user_id, now};
    cm_db_stmt_t s[] = {
        {update_sql, u,
         b   ? 4
         : a ? 3
             : 2},
        {"INSERT INTO outbox (project_id, created_at, retired_token, retired_secret)"
         " SELECT id, $3, retired_token, retired_secret_hash FROM projects"
         " WHERE id = $1" PROJECT_ADMIN,
         o, 3},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_project_reset_token(cm_db_t *db, const char *project_id, const char *user_id,
                                   const char *token, cm_db_done_cb done, void *ud)
{
    rotate(db,
           "UPDATE projects SET retired_token = api_token, retired_secret_hash = NULL,"
           " api_token = $3 WHERE id = $1" PROJECT_ADMIN " RETURNING " PROJECT_COLUMNS("") ", 1",
           project_id, user_id, token, NULL, done, ud);
}

void api_store_project_rotate_secret(cm_db_t *db, const char *project_id, const char *user_id,
                                     const char *hash, const char *mask, cm_db_done_cb done,
                                     void *ud)
{
    rotate(db,
           "UPDATE projects SET retired_token = NULL,"
           " retired_secret_hash = secret_token_backup_hash,"
           " secret_token_backup_hash = secret_token_hash,"
           " secret_token_backup_mask = secret_token_mask,"
           " secret_token_hash = $3, secret_token_mask = $4 WHERE id = $1" PROJECT_ADMIN
           " RETURNING " PROJECT_COLUMNS("") ", 1",
           project_id, user_id, hash, mask, done, ud);
}

void api_store_project_drop_secret_backup(cm_db_t *db, const char *project_id, const char *user_id,
                                          cm_db_done_cb done, void *ud)
{
    rotate(db,
           "UPDATE projects SET retired_token = NULL,"
           " retired_secret_hash = secret_token_backup_hash, secret_token_backup_hash = NULL,"
           " secret_token_backup_mask = NULL WHERE id = $1" PROJECT_ADMIN
           " RETURNING " PROJECT_COLUMNS("") ", 1",
           project_id, user_id, NULL, NULL, done, ud);
}

void api_store_project_update(cm_db_t *db, const char *project_id, const char *name,
                              const char *timezone, const char *week_start, cm_db_done_cb done,
                              void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {project_id, name, timezone, week_start};
    const char *q[] = {project_id, now};
    cm_db_stmt_t s[] = {
        {"UPDATE projects SET name = COALESCE(CAST($2 AS TEXT), name),"
         " timezone = COALESCE(CAST($3 AS TEXT), timezone),"
         " week_start_day = CASE WHEN CAST($4 AS TEXT) IS NULL THEN week_start_day"
         " WHEN CAST($4 AS TEXT) = '' THEN NULL ELSE CAST($4 AS INTEGER) END"
         " WHERE id = $1 AND deleted = 0"
         " RETURNING " PROJECT_COLUMNS("") ", 1",
         p, 4},
        {"INSERT INTO outbox (project_id, created_at) VALUES ($1, $2)", q, 2},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}
