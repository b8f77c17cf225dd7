/*
 * db_sqlite_fns.c - SQL functions SQLite lacks that the event store's
 * queries use (cm_db_opts_t.sql_functions registers them on each
 * connection it opens).
 *
 * cm_quantile(x, level): the level-quantile of the non-NULL x of a group,
 * interpolated between the two nearest values the way ClickHouse's
 * quantile() does below its 8,192-value sample (position level * (n - 1)
 * in the sorted values). The query compiler prints the same arithmetic
 * for ClickHouse over arraySort(groupArray(x)), so both stores give the
 * same double; NULL for a group without values.
 */
#include <math.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "db_internal.h"

typedef struct {
    double *v;
    sqlite3_int64 n, cap;
    double level;
    int oom;
} quantile_acc_t;

static void quantile_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    quantile_acc_t *a = sqlite3_aggregate_context(ctx, sizeof(*a));
    if (a == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || a->oom)
        return;
    if (a->n == a->cap) {
        sqlite3_int64 cap = a->cap ? a->cap * 2 : 64;
        double *v = sqlite3_realloc64(a->v, (sqlite3_uint64)cap * sizeof(*v));
        if (v == NULL) {
            a->oom = 1;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = sqlite3_value_double(argv[0]);
    a->level = sqlite3_value_double(argv[1]);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void quantile_final(sqlite3_context *ctx)
{
    quantile_acc_t *a = sqlite3_aggregate_context(ctx, 0);
    if (a != NULL && a->oom) {
        sqlite3_result_error_nomem(ctx);
    } else if (a == NULL || a->n == 0) {
        sqlite3_result_null(ctx);
    } else {
        qsort(a->v, (size_t)a->n, sizeof(*a->v), cmp_double);
        double pos = a->level * (double)(a->n - 1);
        double lo = floor(pos);
        sqlite3_int64 i = (sqlite3_int64)lo;
        if (i < 0)
            i = 0;
        if (i > a->n - 1)
            i = a->n - 1;
        /* ClickHouse's expression reads past the end as 0 with a weight of 0 */
        double next = i + 1 < a->n ? a->v[i + 1] : 0;
        sqlite3_result_double(ctx, a->v[i] + (next - a->v[i]) * (pos - lo));
    }
    if (a != NULL)
        sqlite3_free(a->v);
}

int cm__sqlite_register_functions(sqlite3 *conn)
{
    return sqlite3_create_function_v2(conn, "cm_quantile", 2,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                      NULL, quantile_step, quantile_final, NULL);
}
