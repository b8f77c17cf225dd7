/*
 * db_migrate.c - cm_db_migrate: versioned schema changes, each applied once.
 *
 * A run reads the versions in place, then applies the missing ones in
 * order, each in its own job (one transaction: the migration's script and
 * its row in schema_migrations). When a migration fails, the versions are
 * read again: if another process applied it meanwhile, the run goes on.
 *
 * PostgreSQL: every job first takes a transaction-scoped advisory lock, so
 * processes starting at once (several writers on a fresh database) take
 * turns. Without it two concurrent CREATE TABLE IF NOT EXISTS of
 * schema_migrations can both pass the existence check and the loser fails
 * on the catalog's unique index (pg_type_typname_nsp_index), which left a
 * writer with no tables for good (scripts/bench writer, four writers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/db.h"
#include "cm/err.h"
#include "cm/log.h"
#include "db_internal.h"

typedef struct {
    cm_db_t *db;
    const cm_db_migration_t *m;
    size_t n;
    size_t next;    /* index of the migration being applied */
    bool rechecked; /* it failed: the table is being read again */
    int status;     /* its failure, kept for when nobody else applied it */
    cm_db_res_t failure;
    cm_db_done_cb done;
    void *ud;
} migrate_t;

static void read_versions(migrate_t *mg);

/* Any constant, the same in every process: the lock's key. */
#define MIGRATION_LOCK "SELECT pg_advisory_xact_lock(7306500430)"

static bool is_pg(const migrate_t *mg)
{
    return cm_db_dialect(mg->db) == CM_DB_POSTGRES;
}

static void finish(migrate_t *mg, int status, const cm_db_res_t *res)
{
    mg->done(status, res, mg->ud);
    cm_buf_free(&mg->failure.error);
    free(mg);
}

static void on_applied(int status, const cm_db_res_t *res, void *ud)
{
    migrate_t *mg = ud;
    if (status != 0) {
        if (status == CM_EUNAVAIL || mg->rechecked) {
            finish(mg, status, res);
            return;
        }
        mg->rechecked = true; /* perhaps another process won the race */
        mg->status = status;
        cm_buf_append_cstr(&mg->failure.error, cm_db_error(res));
        cm_buf_cstr(&mg->failure.error);
        read_versions(mg);
        return;
    }
    /* named by its store: a service with two stores (the api's metadata
     * and events) would otherwise log two bare "migration 1" lines */
    char version[24];
    snprintf(version, sizeof(version), "%d", mg->m[mg->next].version);
    const cm_log_field_t fields[] = {{"store", mg->db->name}, {"migration", version}};
    cm_log_fields(CM_LOG_INFO, NULL, fields, 2, "%s: schema migration %s applied", mg->db->name,
                  version);
    mg->next++;
    mg->rechecked = false;
    read_versions(mg);
}

static void apply(migrate_t *mg)
{
    const cm_db_migration_t *m = &mg->m[mg->next];
    char version[24];
    snprintf(version, sizeof(version), "%d", m->version);
    const char *params[] = {version};
    cm_db_stmt_t stmts[] = {
        {MIGRATION_LOCK, NULL, 0},
        {is_pg(mg) ? m->postgres : m->sqlite, NULL, 0},
        {"INSERT INTO schema_migrations (version) VALUES ($1)", params, 1},
    };
    size_t skip = is_pg(mg) ? 0 : 1; /* SQLite: the write lock serialises already */
    cm_db_run(mg->db, stmts + skip, 3 - skip, on_applied, mg);
}

static void on_versions(int status, const cm_db_res_t *res, void *ud)
{
    migrate_t *mg = ud;
    if (status != 0) {
        finish(mg, status, res);
        return;
    }
    long long have = 0;
    const char *v = cm_db_value(res, is_pg(mg) ? 2 : 1, 0, 0);
    if (v)
        have = atoll(v);
    size_t i = 0;
    while (i < mg->n && mg->m[i].version <= have)
        i++;
    if (mg->rechecked && i <= mg->next) { /* failed, and nobody else applied it */
        finish(mg, mg->status, &mg->failure);
        return;
    }
    mg->next = i;
    mg->rechecked = false;
    if (i == mg->n)
        finish(mg, 0, res);
    else
        apply(mg);
}

static void read_versions(migrate_t *mg)
{
    cm_db_stmt_t stmts[] = {
        {MIGRATION_LOCK, NULL, 0},
        {"CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)", NULL, 0},
        {"SELECT MAX(version) FROM schema_migrations", NULL, 0},
    };
    size_t skip = is_pg(mg) ? 0 : 1;
    cm_db_run(mg->db, stmts + skip, 3 - skip, on_versions, mg);
}

void cm_db_migrate(cm_db_t *db, const cm_db_migration_t *m, size_t n, cm_db_done_cb done, void *ud)
{
    migrate_t *mg = cm_xcalloc(1, sizeof(*mg));
    mg->db = db;
    mg->m = m;
    mg->n = n;
    mg->done = done;
    mg->ud = ud;
    read_versions(mg);
}
