/* oauth_apps.c - OAuth clients, their verification, verification tokens
 * and users' browser sessions in the metadata store (see store.h). */
#include "cm/common.h"
#include "store/store.h"

void api_store_oauth_app_get(cm_db_t *db, const char *client_id, const char *region,
                             cm_db_done_cb done, void *ud)
{
    const char *p[] = {client_id, region};
    cm_db_stmt_t s = {"SELECT a.id, a.client_id, a.client_name, a.logo_uri, a.redirect_uris,"
                      " a.scope_ceiling, a.organization_id, a.fetched_at, a.fresh_until,"
                      " (SELECT v.verified FROM oauth_app_verifications v"
                      "   WHERE v.client_id = a.client_id AND v.region = $2)"
                      " FROM oauth_apps a WHERE a.client_id = $1",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_oauth_app_put(cm_db_t *db, const api_store_oauth_app_t *a, cm_db_done_cb done,
                             void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {a->id,         a->client_id,     a->client_name,     a->logo_uri,
                       a->redirects,  a->scope_ceiling, a->organization_id, now,
                       a->fresh_until};
    cm_db_stmt_t s = {
        "INSERT INTO oauth_apps (id, client_id, client_name, logo_uri, redirect_uris,"
        " scope_ceiling, organization_id, fetched_at, fresh_until, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $8)"
        " ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name,"
        " logo_uri = excluded.logo_uri, redirect_uris = excluded.redirect_uris,"
        " scope_ceiling = excluded.scope_ceiling, organization_id = excluded.organization_id,"
        " fetched_at = excluded.fetched_at, fresh_until = excluded.fresh_until",
        p, 9};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_oauth_verify(cm_db_t *db, const char *client_id, const char *region, bool verified,
                            cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {client_id, region, verified ? "1" : "0", now};
    cm_db_stmt_t s = {"INSERT INTO oauth_app_verifications (client_id, region, verified,"
                      " updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (client_id, region)"
                      " DO UPDATE SET verified = excluded.verified,"
                      " updated_at = excluded.updated_at",
                      p, 4};
    cm_db_run(db, &s, 1, done, ud);
}

/* ---- CIMD verification tokens ---- */

#define VT_COLUMNS "id, organization_id, mask_value, cimd_url, created_at"

void api_store_vtoken_lookup(cm_db_t *db, const char *hash, cm_db_done_cb done, void *ud)
{
    const char *p[] = {hash};
    cm_db_stmt_t s = {"SELECT " VT_COLUMNS ", token_hash FROM cimd_verification_tokens"
                      " WHERE token_hash = $1",
                      p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

/* Only an organization's admins (level 8 and up) see and change its tokens. */
#define ORG_ADMIN                                                                                  \
    " AND EXISTS (SELECT 1 FROM memberships m WHERE m.organization_id = $1"                        \
    " AND m.user_id = $2 AND m.level >= 8)"

void api_store_vtokens_list(cm_db_t *db, const char *org_id, const char *user_id,
                            cm_db_done_cb done, void *ud)
{
    const char *p[] = {org_id, user_id};
    cm_db_stmt_t s = {"SELECT " VT_COLUMNS " FROM cimd_verification_tokens"
                      " WHERE organization_id = $1" ORG_ADMIN " ORDER BY created_at, id",
                      p, 2};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_vtoken_create(cm_db_t *db, const char *org_id, const char *user_id, const char *id,
                             const char *hash, const char *mask, const char *cimd_url,
                             cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {org_id, user_id, id, hash, mask, cimd_url, now};
    cm_db_stmt_t s = {"INSERT INTO cimd_verification_tokens (id, organization_id, token_hash,"
                      " mask_value, cimd_url, created_by, created_at)"
                      " SELECT CAST($3 AS TEXT), CAST($1 AS TEXT), CAST($4 AS TEXT),"
                      " CAST($5 AS TEXT), CAST($6 AS TEXT), CAST($2 AS BIGINT), CAST($7 AS BIGINT)"
                      " WHERE 1 = 1" ORG_ADMIN " RETURNING " VT_COLUMNS,
                      p, 7};
    cm_db_run(db, &s, 1, done, ud);
}

void api_store_vtoken_delete(cm_db_t *db, const char *org_id, const char *user_id, const char *id,
                             cm_db_done_cb done, void *ud)
{
    const char *p[] = {org_id, user_id, id};
    cm_db_stmt_t s = {"DELETE FROM cimd_verification_tokens WHERE organization_id = $1"
                      " AND id = $3" ORG_ADMIN,
                      p, 3};
    cm_db_run(db, &s, 1, done, ud);
}

/* ---- browser sessions ---- */

void api_store_session_create(cm_db_t *db, const char *id_hash, const char *user_id,
                              const char *csrf, const char *expires_at, cm_db_done_cb done,
                              void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {id_hash, user_id, csrf, expires_at, now};
    const char *q[] = {now};
    cm_db_stmt_t s[] = {
        /* PostgreSQL types every parameter: a statement gets only its own */
        {"DELETE FROM user_sessions WHERE expires_at < $1", q, 1},
        {"INSERT INTO user_sessions (id_hash, user_id, csrf, expires_at, created_at)"
         " VALUES ($1, $2, $3, $4, $5)",
         p, 5},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_session_get(cm_db_t *db, const char *id_hash, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {id_hash, now};
    cm_db_stmt_t s[] = {
        {"SELECT s.user_id, s.csrf, u.email, u.first_name FROM user_sessions s"
         " JOIN users u ON u.id = s.user_id WHERE s.id_hash = $1 AND s.expires_at > $2",
         p, 2},
        /* what the consent page offers: the user's organizations and projects */
        {"SELECT o.id, o.name, p.id, p.name FROM user_sessions s"
         " JOIN memberships m ON m.user_id = s.user_id"
         " JOIN organizations o ON o.id = m.organization_id"
         " LEFT JOIN projects p ON p.organization_id = o.id AND p.deleted = 0"
         " WHERE s.id_hash = $1 AND s.expires_at > $2 ORDER BY o.created_at, o.id, p.id",
         p, 2},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_user_by_email(cm_db_t *db, const char *email, cm_db_done_cb done, void *ud)
{
    const char *p[] = {email};
    cm_db_stmt_t s = {"SELECT id, password_hash FROM users WHERE email = $1", p, 1};
    cm_db_run(db, &s, 1, done, ud);
}
