/* oauth_tokens.c - authorization codes and OAuth tokens in the metadata
 * store (see store.h). Codes and tokens are found by their SHA-256 only. */
#include "cm/common.h"
#include "store/store.h"

void api_store_oauth_code_create(cm_db_t *db, const api_store_oauth_grant_t *g,
                                 const char *code_hash, const char *redirect_uri,
                                 const char *challenge, const char *expires_at, cm_db_done_cb done,
                                 void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {code_hash,       g->client_id, g->user_id,  redirect_uri,
                       challenge,       g->scopes,    g->resource, g->scoped_orgs,
                       g->scoped_teams, g->family,    expires_at,  now};
    cm_db_stmt_t s[] = {
        {"DELETE FROM oauth_codes WHERE expires_at < $1", (const char *[]){now}, 1},
        {"INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge,"
         " scopes, resource, scoped_organizations, scoped_teams, family, expires_at, created_at)"
         " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
         p, 12},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_oauth_code_take(cm_db_t *db, const char *code_hash, cm_db_done_cb done, void *ud)
{
    const char *p[] = {code_hash};
    cm_db_stmt_t s[] = {
        {"UPDATE oauth_codes SET used = used + 1 WHERE code_hash = $1", p, 1},
        {"SELECT client_id, user_id, redirect_uri, code_challenge, scopes, resource,"
         " scoped_organizations, scoped_teams, family, expires_at, used"
         " FROM oauth_codes WHERE code_hash = $1",
         p, 1},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

#define INSERT_TOKEN                                                                               \
    "INSERT INTO oauth_tokens (id, token_hash, kind, family, client_id, user_id, scopes,"          \
    " resource, scoped_organizations, scoped_teams, expires_at, created_at)"

void api_store_oauth_tokens_issue(cm_db_t *db, const api_store_oauth_grant_t *g,
                                  const api_store_oauth_pair_t *t, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *a[] = {t->access_id,    t->access_hash,    g->family,   g->client_id,
                       g->user_id,      g->scopes,         g->resource, g->scoped_orgs,
                       g->scoped_teams, t->access_expires, now};
    const char *r[] = {t->refresh_id,   t->refresh_hash,    g->family,   g->client_id,
                       g->user_id,      g->scopes,          g->resource, g->scoped_orgs,
                       g->scoped_teams, t->refresh_expires, now};
    cm_db_stmt_t s[] = {
        {INSERT_TOKEN " VALUES ($1, $2, 'access', $3, $4, $5, $6, $7, $8, $9, $10, $11)", a, 11},
        {INSERT_TOKEN " VALUES ($1, $2, 'refresh', $3, $4, $5, $6, $7, $8, $9, $10, $11)", r, 11},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

#define TOKEN_COLUMNS                                                                              \
    "id, kind, family, client_id, user_id, scopes, resource, scoped_organizations,"                \
    " scoped_teams, expires_at, rotated_at, revoked, token_hash"

void api_store_oauth_token_get(cm_db_t *db, const char *hash, cm_db_done_cb done, void *ud)
{
    const char *p[] = {hash};
    cm_db_stmt_t s = {"SELECT " TOKEN_COLUMNS " FROM oauth_tokens WHERE token_hash = $1", p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

/* The old refresh token is marked rotated only if it still was live; the
 * new pair is written only if that mark is this job's (its time). The
 * caller reads statement 0's changes: 1 is a rotation, 0 a reuse. */
void api_store_oauth_refresh_rotate(cm_db_t *db, const char *old_hash,
                                    const api_store_oauth_grant_t *g,
                                    const api_store_oauth_pair_t *t, cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    const char *p[] = {old_hash, now};
    const char *a[] = {t->access_id,    t->access_hash,    g->family,   g->client_id,
                       g->user_id,      g->scopes,         g->resource, g->scoped_orgs,
                       g->scoped_teams, t->access_expires, now,         old_hash};
    const char *r[] = {t->refresh_id,   t->refresh_hash,    g->family,   g->client_id,
                       g->user_id,      g->scopes,          g->resource, g->scoped_orgs,
                       g->scoped_teams, t->refresh_expires, now,         old_hash};
#define NEW_TOKEN(kind)                                                                            \
    INSERT_TOKEN " SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), '" kind "', CAST($3 AS TEXT),"       \
                 " CAST($4 AS TEXT), CAST($5 AS BIGINT), CAST($6 AS TEXT), CAST($7 AS TEXT),"      \
                 " CAST($8 AS TEXT), CAST($9 AS TEXT), CAST($10 AS BIGINT),"                       \
                 " CAST($11 AS BIGINT) WHERE EXISTS (SELECT 1 FROM oauth_tokens o"                 \
                 " WHERE o.token_hash = $12 AND o.rotated_at = CAST($11 AS BIGINT)"                \
                 " AND o.revoked = 0)"
    cm_db_stmt_t s[] = {
        {"UPDATE oauth_tokens SET rotated_at = CAST($2 AS BIGINT) WHERE token_hash = $1"
         " AND kind = 'refresh' AND rotated_at IS NULL AND revoked = 0"
         " AND expires_at > CAST($2 AS BIGINT)",
         p, 2},
        {NEW_TOKEN("access"), a, 12},
        {NEW_TOKEN("refresh"), r, 12},
    };
#undef NEW_TOKEN
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

void api_store_oauth_family_revoke(cm_db_t *db, const char *family, cm_db_done_cb done, void *ud)
{
    const char *p[] = {family};
    cm_db_stmt_t s = {"UPDATE oauth_tokens SET revoked = 1 WHERE family = $1", p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

/* RFC 7009: the token of this client; a refresh token takes its whole
 * family (the access tokens of the same grant) with it. */
void api_store_oauth_token_revoke(cm_db_t *db, const char *hash, const char *client_id,
                                  cm_db_done_cb done, void *ud)
{
    const char *p[] = {hash, client_id};
    cm_db_stmt_t s[] = {
        {"UPDATE oauth_tokens SET revoked = 1 WHERE family IN (SELECT family FROM oauth_tokens"
         " WHERE token_hash = $1 AND client_id = $2 AND kind = 'refresh')",
         p, 2},
        {"UPDATE oauth_tokens SET revoked = 1 WHERE token_hash = $1 AND client_id = $2", p, 2},
    };
    cm_db_run(db, s, CM_ARRAY_LEN(s), done, ud);
}

/* Secret scanning: the token's whole family, whoever holds it. */
void api_store_oauth_token_revoke_leaked(cm_db_t *db, const char *hash, cm_db_done_cb done,
                                         void *ud)
{
    const char *p[] = {hash};
    cm_db_stmt_t s = {"UPDATE oauth_tokens SET revoked = 1 WHERE family IN"
                      " (SELECT family FROM oauth_tokens WHERE token_hash = $1)",
                      p, 1};
    cm_db_run(db, &s, 1, done, ud);
}

/* The protected resource's lookup: a personal key lookup's columns (see
 * API_KEY_*), then the token's own. */
void api_store_oauth_access_lookup(cm_db_t *db, const char *hash, const char *project_id,
                                   unsigned cache_ms, cm_db_done_cb done, void *ud)
{
    const char *p[] = {hash, project_id};
    cm_db_stmt_t s = {"SELECT t.id, t.user_id, t.scopes, t.scoped_organizations, t.scoped_teams,"
                      " t.token_hash, NULL,"
                      " (SELECT p.organization_id FROM projects p JOIN memberships m"
                      "   ON m.organization_id = p.organization_id"
                      "  WHERE p.id = $2 AND m.user_id = t.user_id AND p.deleted = 0),"
                      " t.resource, t.expires_at, t.revoked, t.client_id"
                      " FROM oauth_tokens t WHERE t.token_hash = $1 AND t.kind = 'access'",
                      p, 2, .cache_ms = cache_ms, .until_changed = true};
    cm_db_run(db, &s, 1, done, ud);
}
