/* users.c - users in the metadata store (see store.h). */
#include "cm/common.h"
#include "store/store.h"

#define USER_COLUMNS "id, uuid, email, first_name, created_at, password_hash"
#define USER_ORGS                                                                                  \
    "SELECT o.id, o.name, m.level FROM organizations o JOIN memberships m"                         \
    " ON m.organization_id = o.id WHERE m.user_id = $1 ORDER BY o.created_at, o.id"

void api_store_user_get(cm_db_t *db, const char *user_id, cm_db_done_cb done, void *ud)
{
    const char *p[] = {user_id};
    cm_db_stmt_t s[] = {
        {"SELECT " USER_COLUMNS " FROM users WHERE id = $1", p, 1},
        {USER_ORGS, p, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_user_update(cm_db_t *db, const char *user_id, const char *first_name,
                           const char *email, const char *password_hash, cm_db_done_cb done,
                           void *ud)
{
    const char *p[] = {user_id, first_name, email, password_hash};
    cm_db_stmt_t s[] = {
        {"UPDATE users SET first_name = COALESCE(CAST($2 AS TEXT), first_name),"
         " email = COALESCE(CAST($3 AS TEXT), email),"
         " password_hash = COALESCE(CAST($4 AS TEXT), password_hash)"
         " WHERE id = $1 RETURNING " USER_COLUMNS,
         p, 4},
        {USER_ORGS, p, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}
