/* leaks.c - secrets a code host's secret scanning found in public (see
 * store.h): OAuth token families revoked, personal keys and project secrets
 * rolled, the fleet told through the outbox. */
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "store/store.h"

void api_store_leaks_revoke(cm_db_t *db, const api_store_leak_t *leaks, size_t n,
                            cm_db_done_cb done, void *ud)
{
    char now[24];
    api_store_now(now);
    /* at most two statements per leak, then the key table's republication */
    cm_db_stmt_t *s = cm_xcalloc(2 * n + 1, sizeof(*s));
    const char **params = cm_xcalloc(5 * n + 1, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char **p = &params[5 * i];
        p[0] = leaks[i].hash;
        p[1] = leaks[i].new_hash;
        p[2] = leaks[i].hash; /* the outbox's: $1 and $2 of its own */
        p[3] = now;
        switch (leaks[i].kind) {
        case API_LEAK_OAUTH:
            s[k++] = (cm_db_stmt_t){"UPDATE oauth_tokens SET revoked = 1 WHERE family IN"
                                    " (SELECT family FROM oauth_tokens WHERE token_hash = $1)",
                                    p, 1};
            break;
        case API_LEAK_PERSONAL_KEY:
            s[k++] = (cm_db_stmt_t){"UPDATE personal_api_keys SET secure_value = $2"
                                    " WHERE secure_value = $1",
                                    p, 2};
            break;
        case API_LEAK_PROJECT_SECRET:
            s[k++] = (cm_db_stmt_t){
                "UPDATE projects SET retired_token = NULL, retired_secret_hash = $1,"
                " secret_token_hash = CASE WHEN secret_token_hash = $1 THEN $2"
                " ELSE secret_token_hash END,"
                " secret_token_backup_hash = CASE WHEN secret_token_backup_hash = $1 THEN NULL"
                " ELSE secret_token_backup_hash END,"
                " secret_token_backup_mask = CASE WHEN secret_token_backup_hash = $1 THEN NULL"
                " ELSE secret_token_backup_mask END"
                " WHERE secret_token_hash = $1 OR secret_token_backup_hash = $1",
                p, 2};
            s[k++] = (cm_db_stmt_t){
                "INSERT INTO outbox (project_id, created_at, retired_token, retired_secret)"
                " SELECT id, CAST($2 AS BIGINT), NULL, retired_secret_hash FROM projects"
                " WHERE retired_secret_hash = $1",
                p + 2, 2};
            break;
        default: s[k++] = (cm_db_stmt_t){"SELECT 0 WHERE 1 = 0", NULL, 0}; break;
        }
    }
    const char *q[] = {now};
    s[k++] = (cm_db_stmt_t){API_STORE_QUEUE_KEYS, q, 1};
    cm_db_run(db, s, k, done, ud);
    free(s);
    free(params);
}
