/*
 * evstore_quantile.c - the HogQL functions SQLite lacks that the event
 * store's queries use, added to each of its SQLite connections through the
 * db's connection hook (cm_db_opts_t.on_connect).
 *
 * cm_quantile(x, level): the level-quantile of the non-NULL x of a group,
 * interpolated between the two nearest values the way ClickHouse's
 * quantile() does below its 8,192-value sample (position level * (n - 1)
 * in the sorted values). The query compiler prints the same arithmetic
 * for ClickHouse over arraySort(groupArray(x)), so both stores give the
 * same double; NULL for a group without values.
 *
 * cm_quantile_exact(x, level): ClickHouse's quantileExact, the value at
 * position floor(level * n) of the sorted values (the last for level 1),
 * not interpolated; NULL for a group without values.
 */
#include <math.h>
#include <stdlib.h>

#include "cm/err.h"
#include "evstore_internal.h"

typedef struct {
    double *v;
    size_t n, cap;
    double level;
    bool oom;
} quantile_acc_t;

static void quantile_step(void *state, int argc, const double *args, const bool *nulls)
{
    quantile_acc_t *a = state;
    if (argc < 2 || nulls[0] || a->oom)
        return;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        double *v = realloc(a->v, cap * sizeof(*v));
        if (v == NULL) {
            a->oom = true;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = args[0];
    a->level = args[1];
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int quantile_final(void *state, double *out)
{
    quantile_acc_t *a = state;
    int rc = 0;
    if (a->oom) {
        rc = -1; /* out of memory */
    } else if (a->n == 0) {
        rc = 1;
    } else {
        qsort(a->v, a->n, sizeof(*a->v), cmp_double);
        double pos = a->level * (double)(a->n - 1);
        double lo = floor(pos);
        long long i = (long long)lo;
        if (i < 0)
            i = 0;
        if (i > (long long)a->n - 1)
            i = (long long)a->n - 1;
        /* ClickHouse's expression reads past the end as 0 with a weight of 0 */
        double next = (size_t)i + 1 < a->n ? a->v[i + 1] : 0;
        *out = a->v[i] + (next - a->v[i]) * (pos - lo);
    }
    free(a->v);
    a->v = NULL;
    return rc;
}

static int quantile_exact_final(void *state, double *out)
{
    quantile_acc_t *a = state;
    int rc = 0;
    if (a->oom) {
        rc = -1;
    } else if (a->n == 0) {
        rc = 1;
    } else {
        qsort(a->v, a->n, sizeof(*a->v), cmp_double);
        size_t i = a->level < 1 ? (size_t)(a->level * (double)a->n) : a->n - 1;
        *out = a->v[i < a->n ? i : a->n - 1];
    }
    free(a->v);
    a->v = NULL;
    return rc;
}

static const cm_db_aggregate_t quantile_exact = {.name = "cm_quantile_exact",
                                                 .nargs = 2,
                                                 .state_size = sizeof(quantile_acc_t),
                                                 .step = quantile_step,
                                                 .final = quantile_exact_final};

static const cm_db_aggregate_t quantile = {.name = "cm_quantile",
                                           .nargs = 2,
                                           .state_size = sizeof(quantile_acc_t),
                                           .step = quantile_step,
                                           .final = quantile_final};

int cm__evstore_on_connect(cm_db_conn_t *conn, void *ud)
{
    (void)ud;
    int rc = cm_db_conn_add_aggregate(conn, &quantile);
    if (rc == 0)
        rc = cm_db_conn_add_aggregate(conn, &quantile_exact);
    if (rc == 0)
        rc = cm__evstore_add_stats(conn);
    if (rc == 0)
        rc = cm_db_conn_add_clickhouse_fns(conn);
    if (rc == 0)
        rc = cm__evstore_add_tz(conn);
    if (rc == 0)
        rc = cm__evstore_add_array_fns(conn);
    if (rc == 0)
        rc = cm__evstore_add_sum_map(conn);
    return rc;
}
