/*
 * evstore_stats.c - cm_variance(x, kind), the SQLite side of HogQL's
 * varPop (kind 0), varSamp (1), stddevPop (2) and stddevSamp (3) over the
 * non-NULL x of a group, as doubles. NULL where ClickHouse answers nan:
 * no values, or one value for the Samp forms (SQLite has no nan); the
 * query compiler prints the same rule for ClickHouse. Welford's update,
 * so a large mean does not swallow the spread.
 *
 * cm_covariance(x, y, kind): covarPop (0), covarSamp (1) and corr (2)
 * over the rows where neither is NULL; NULL where ClickHouse answers nan
 * (too few rows; corr of a constant).
 */
#include <math.h>

#include "evstore_internal.h"

typedef struct {
    double n, mean, m2;
    int kind;
} stats_acc_t;

static void stats_step(void *state, int argc, const double *args, const bool *nulls)
{
    stats_acc_t *a = state;
    if (argc < 2 || nulls[0] || nulls[1])
        return;
    a->kind = (int)args[1];
    a->n += 1;
    double d = args[0] - a->mean;
    a->mean += d / a->n;
    a->m2 += d * (args[0] - a->mean);
}

static int stats_final(void *state, double *out)
{
    const stats_acc_t *a = state;
    bool samp = a->kind & 1;
    if (a->n < (samp ? 2 : 1))
        return 1;
    double v = a->m2 / (samp ? a->n - 1 : a->n);
    *out = a->kind >= 2 ? sqrt(v) : v;
    return 0;
}

static const cm_db_aggregate_t stats = {.name = "cm_variance",
                                        .nargs = 2,
                                        .state_size = sizeof(stats_acc_t),
                                        .step = stats_step,
                                        .final = stats_final};

typedef struct {
    double n, mx, my, cxy, m2x, m2y;
    int kind;
} covar_acc_t;

static void covar_step(void *state, int argc, const double *args, const bool *nulls)
{
    covar_acc_t *a = state;
    if (argc < 3 || nulls[0] || nulls[1] || nulls[2])
        return;
    a->kind = (int)args[2];
    a->n += 1;
    double dx = args[0] - a->mx, dy = args[1] - a->my;
    a->mx += dx / a->n;
    a->my += dy / a->n;
    a->cxy += dx * (args[1] - a->my);
    a->m2x += dx * (args[0] - a->mx);
    a->m2y += dy * (args[1] - a->my);
}

static int covar_final(void *state, double *out)
{
    const covar_acc_t *a = state;
    if (a->n < (a->kind == 0 ? 1 : 2))
        return 1;
    if (a->kind == 2) {
        double d = sqrt(a->m2x * a->m2y);
        if (!(d > 0))
            return 1;
        *out = a->cxy / d;
        return 0;
    }
    *out = a->cxy / (a->kind == 1 ? a->n - 1 : a->n);
    return 0;
}

static const cm_db_aggregate_t covar = {.name = "cm_covariance",
                                        .nargs = 3,
                                        .state_size = sizeof(covar_acc_t),
                                        .step = covar_step,
                                        .final = covar_final};

int cm__evstore_add_stats(cm_db_conn_t *conn)
{
    int rc = cm_db_conn_add_aggregate(conn, &stats);
    return rc == 0 ? cm_db_conn_add_aggregate(conn, &covar) : rc;
}
