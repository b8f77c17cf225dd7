/* members.c - organization memberships for `api admin org add-member` (see store.h). */
#include "cm/common.h"
#include "store/store.h"

void api_store_org_find(cm_db_t *db, const char *id_or_name, cm_db_done_cb done, void *ud)
{
    const char *p[] = {id_or_name};
    cm_db_stmt_t s = {"SELECT id, name FROM organizations WHERE id = $1 OR name = $1"
                      " ORDER BY created_at, id LIMIT 2",
                      p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_member_put(cm_db_t *db, const char *org_id, const char *user_id, const char *level,
                          cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {org_id, user_id, level, now};
    const char *q[] = {now};
    cm_db_stmt_t s[] = {
        {"SELECT level FROM memberships WHERE organization_id = $1 AND user_id = $2", p, 2},
        {"INSERT INTO memberships (organization_id, user_id, level, created_at)"
         " VALUES ($1, $2, $3, $4) ON CONFLICT (organization_id, user_id)"
         " DO UPDATE SET level = excluded.level",
         p, 4},
        {API_STORE_QUEUE_KEYS, q, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}
