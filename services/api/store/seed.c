/* seed.c - bootstrap's first organization, user, project and key (see store.h). */
#include "cm/common.h"
#include "store/store.h"

void api_store_seed(cm_db_t *db, const api_store_seed_t *x, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *org[] = {x->org_id, x->org_name, now};
    const char *user[] = {x->user_uuid, x->email, x->password_hash, now};
    const char *member[] = {x->org_id, x->email, now};
    const char *project[] = {x->project_uuid, x->org_id, x->project_name, x->token, x->secret_hash,
                             x->secret_mask,  now};
    const char *key[] = {x->key_id, x->email, x->key_hash, x->key_mask, now};
    const char *outbox[] = {x->project_uuid, now};
    cm_db_stmt_t s[] = {
        {"INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)", org, 3},
        {"INSERT INTO users (uuid, email, password_hash, created_at) VALUES ($1, $2, $3, $4)", user,
         4},
        {"INSERT INTO memberships (organization_id, user_id, level, created_at)"
         " SELECT $1, id, 15, $3 FROM users WHERE email = $2",
         member, 3},
        {"INSERT INTO projects (uuid, organization_id, name, api_token, secret_token_hash,"
         " secret_token_mask, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
         project, 7},
        {"INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes,"
         " created_at) SELECT $1, id, 'bootstrap', $3, $4, '[\"*\"]', $5 FROM users"
         " WHERE email = $2",
         key, 5},
        {"INSERT INTO outbox (project_id, created_at) SELECT id, $2 FROM projects WHERE uuid = $1",
         outbox, 2},
        {API_STORE_QUEUE_KEYS, outbox + 1, 1},
        {"SELECT id FROM projects WHERE uuid = $1", outbox, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_summary(cm_db_t *db, cm_db_done_cb done, void *ud)
{
    cm_db_stmt_t s[] = {
        {"SELECT id, name FROM organizations ORDER BY created_at, id", NULL, 0},
        {"SELECT id, name, api_token FROM projects WHERE deleted = 0 ORDER BY id", NULL, 0},
        {"SELECT email FROM users ORDER BY id", NULL, 0},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}
