/*
 * db_sqlite_fns.c - aggregates of doubles and scalar functions of text a
 * connection hook adds to a SQLite connection (cm_db_conn_add_aggregate,
 * cm_db_conn_add_text_fn, cm/db.h). The semantics are
 * the caller's (the event store's HogQL functions, evstore_quantile.c);
 * this file only carries SQLite's values to them and their answer back.
 */
#include <stdlib.h>

#include <sqlite3.h>

#include "cm/err.h"
#include "db_internal.h"

#define MAX_ARGS 8

static void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const cm_db_aggregate_t *agg = sqlite3_user_data(ctx);
    void *state = sqlite3_aggregate_context(ctx, (int)agg->state_size);
    if (state == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    double args[MAX_ARGS];
    bool nulls[MAX_ARGS];
    int n = argc < MAX_ARGS ? argc : MAX_ARGS;
    for (int i = 0; i < n; i++) {
        nulls[i] = sqlite3_value_type(argv[i]) == SQLITE_NULL;
        args[i] = nulls[i] ? 0 : sqlite3_value_double(argv[i]);
    }
    agg->step(state, n, args, nulls);
}

static void agg_final(sqlite3_context *ctx)
{
    const cm_db_aggregate_t *agg = sqlite3_user_data(ctx);
    /* a group without rows gets zeroed state of its own, as step's */
    void *state = sqlite3_aggregate_context(ctx, (int)agg->state_size);
    if (state == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    double out = 0;
    int rc = agg->final(state, &out);
    if (rc == 0)
        sqlite3_result_double(ctx, out);
    else if (rc == 1)
        sqlite3_result_null(ctx);
    else
        sqlite3_result_error_nomem(ctx);
}

int cm_db_conn_add_aggregate(cm_db_conn_t *conn, const cm_db_aggregate_t *agg)
{
    if (agg->nargs < 0 || agg->nargs > MAX_ARGS)
        return CM_EINVAL;
    int rc = sqlite3_create_function_v2((sqlite3 *)conn, agg->name, agg->nargs,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                        (void *)agg, NULL, agg_step, agg_final, NULL);
    return rc == SQLITE_OK ? 0 : CM_EUNAVAIL;
}

static void text_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const cm_db_text_fn_t *fn = sqlite3_user_data(ctx);
    const char *args[MAX_ARGS];
    int n = argc < MAX_ARGS ? argc : MAX_ARGS;
    for (int i = 0; i < n; i++)
        args[i] = (const char *)sqlite3_value_text(argv[i]); /* NULL for NULL */
    bool failed = false;
    char *out = fn->call(n, args, &failed);
    if (failed)
        sqlite3_result_error(ctx, "function failed", -1);
    else if (out == NULL)
        sqlite3_result_null(ctx);
    else
        sqlite3_result_text(ctx, out, -1, free);
}

int cm_db_conn_add_text_fn(cm_db_conn_t *conn, const cm_db_text_fn_t *fn)
{
    if (fn->nargs < 0 || fn->nargs > MAX_ARGS)
        return CM_EINVAL;
    int rc = sqlite3_create_function_v2((sqlite3 *)conn, fn->name, fn->nargs,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                        (void *)fn, text_call, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : CM_EUNAVAIL;
}
