/*
 * db_sqlite_fns.c - aggregates of doubles and scalar functions of text a
 * connection hook adds to a SQLite connection (cm_db_conn_add_aggregate,
 * cm_db_conn_add_function, cm_db_conn_add_text_fn, cm/db.h). The semantics are
 * the caller's (the event store's HogQL functions, evstore_quantile.c, evstore_tz.c);
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

/* ---- scalar functions of text ---------------------------------------------------------------- */

typedef struct {
    const cm_db_function_t *fn;
    void *state;
} fn_data_t;

static void fn_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    fn_data_t *d = sqlite3_user_data(ctx);
    const char *args[MAX_ARGS];
    int n = argc < MAX_ARGS ? argc : MAX_ARGS;
    for (int i = 0; i < n; i++)
        args[i] = (const char *)sqlite3_value_text(argv[i]); /* NULL for NULL */
    char out[CM_DB_FN_OUT];
    out[0] = '\0';
    if (d->fn->call(d->state, n, args, out, sizeof(out)) == 0)
        sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
    else
        sqlite3_result_null(ctx);
}

static void fn_destroy(void *p)
{
    fn_data_t *d = p;
    if (d->fn->state_free)
        d->fn->state_free(d->state);
    free(d);
}

int cm_db_conn_add_function(cm_db_conn_t *conn, const cm_db_function_t *fn)
{
    if (fn->nargs < -1 || fn->nargs > MAX_ARGS)
        return CM_EINVAL;
    fn_data_t *d = calloc(1, sizeof(*d));
    if (d == NULL)
        return CM_ERR;
    d->fn = fn;
    d->state = fn->state_new ? fn->state_new() : NULL;
    int rc = sqlite3_create_function_v2((sqlite3 *)conn, fn->name, fn->nargs,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, d,
                                        fn_call, NULL, NULL, fn_destroy);
    /* on failure SQLite has already called fn_destroy */
    return rc == SQLITE_OK ? 0 : CM_EUNAVAIL;
}

/* ---- scalar functions of text that may fail ---------------------------------------------- */

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
