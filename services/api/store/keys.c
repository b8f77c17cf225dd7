/* keys.c - personal API keys in the metadata store (see store.h). */
#include <stdio.h>

#include "cm/common.h"
#include "store/store.h"

void api_store_key_lookup(cm_db_t *db, const char *key_hash, const char *project_id,
                          unsigned cache_ms, cm_db_done_cb done, void *ud)
{
    const char *p[] = {key_hash, project_id};
    cm_db_stmt_t s = {"SELECT k.id, k.user_id, k.scopes, k.scoped_organizations, k.scoped_teams,"
                      " k.secure_value, k.last_used_at,"
                      " (SELECT p.organization_id FROM projects p JOIN memberships m"
                      "   ON m.organization_id = p.organization_id"
                      "  WHERE p.id = $2 AND m.user_id = k.user_id AND p.deleted = 0)"
                      " FROM personal_api_keys k WHERE k.secure_value = $1",
                      p, 2, .cache_ms = cache_ms, .until_changed = true};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_key_touch(cm_db_t *db, const char *key_id, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {key_id, now};
    cm_db_stmt_t s = {"UPDATE personal_api_keys SET last_used_at = $2 WHERE id = $1", p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

#define KEY_COLUMNS                                                                                \
    "id, label, mask_value, scopes, scoped_organizations, scoped_teams, created_at, last_used_at"

void api_store_keys_list(cm_db_t *db, const char *user_id, const char *limit, const char *offset,
                         cm_db_done_cb done, void *ud)
{
    const char *p[] = {user_id, limit, offset};
    cm_db_stmt_t s = {"SELECT " KEY_COLUMNS ", COUNT(*) OVER () FROM personal_api_keys"
                      " WHERE user_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3",
                      p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_key_get(cm_db_t *db, const char *user_id, const char *key_id, cm_db_done_cb done,
                       void *ud)
{
    const char *p[] = {user_id, key_id};
    cm_db_stmt_t s = {"SELECT " KEY_COLUMNS ", 1 FROM personal_api_keys"
                      " WHERE user_id = $1 AND id = $2",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_key_create(cm_db_t *db, const char *id, const char *user_id, const char *label,
                          const char *hash, const char *mask, const char *scopes,
                          const char *scoped_orgs, const char *scoped_teams, cm_db_done_cb done,
                          void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {id, user_id, label, hash, mask, scopes, scoped_orgs, scoped_teams, now};
    const char *q[] = {now};
    cm_db_stmt_t s[] = {
        {"INSERT INTO personal_api_keys (id, user_id, label, secure_value,"
         " mask_value, scopes, scoped_organizations, scoped_teams, created_at)"
         " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
         " RETURNING " KEY_COLUMNS ", 1",
         p, 9},
        {API_STORE_QUEUE_KEYS, q, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_key_delete(cm_db_t *db, const char *user_id, const char *key_id, cm_db_done_cb done,
                          void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {user_id, key_id};
    const char *q[] = {now};
    cm_db_stmt_t s[] = {
        {"DELETE FROM personal_api_keys WHERE user_id = $1 AND id = $2", p, 2},
        {API_STORE_QUEUE_KEYS, q, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_user_projects(cm_db_t *db, const char *user_id, cm_db_done_cb done, void *ud)
{
    const char *p[] = {user_id};
    cm_db_stmt_t s = {"SELECT p.id, p.organization_id FROM projects p JOIN memberships m"
                      " ON m.organization_id = p.organization_id"
                      " WHERE m.user_id = $1 AND p.deleted = 0 ORDER BY p.id",
                      p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_fleet_keys(cm_db_t *db, cm_db_done_cb done, void *ud)
{
    cm_db_stmt_t s = {"SELECT k.secure_value, k.scopes, k.scoped_organizations, k.scoped_teams,"
                      " p.id, p.organization_id FROM personal_api_keys k"
                      " JOIN memberships m ON m.user_id = k.user_id"
                      " JOIN projects p ON p.organization_id = m.organization_id AND p.deleted = 0"
                      " ORDER BY k.secure_value, p.id",
                      NULL, 0};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_key_find(cm_db_t *db, const char *id_pattern, const char *hash, cm_db_done_cb done,
                        void *ud)
{
    const char *p[] = {id_pattern, hash};
    cm_db_stmt_t s = {"SELECT k.id, k.user_id, u.email, k.label, k.mask_value"
                      " FROM personal_api_keys k JOIN users u ON u.id = k.user_id"
                      " WHERE k.id LIKE $1 OR k.secure_value = $2"
                      " ORDER BY k.id LIMIT 2",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}
