/*
 * print_fn_agg.c - aggregates and window functions for SQLite and
 * ClickHouse. Where an aggregate over no rows differs (ClickHouse: the
 * type's default, SQLite: NULL), SQLite gets the default; uniq and
 * quantile are exact on both.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/print_int.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)
#define ARG(i)  (e->args.v[(i)])

/* A non-nullable column's default, for an aggregate over no rows. */
static const char *default_of(q_type_t t)
{
    switch (t) {
    case Q_T_STRING: return "''";
    case Q_T_UUID: return "'00000000-0000-0000-0000-000000000000'";
    case Q_T_DATETIME: return "'1970-01-01 00:00:00'";
    case Q_T_DATE: return "'1970-01-01'";
    case Q_T_FLOAT: return "0.0";
    default: return "0";
    }
}

static void pover(q_printer_t *pr, const q_window_t *w);

/* SQLite: agg(CASE WHEN cond THEN x END), with ClickHouse's empty default;
 * a window's OVER goes inside the default (pr->over, printed once). */
static void lite_agg(q_printer_t *pr, const char *agg, const q_expr_t *x, const q_expr_t *cond,
                     bool fill)
{
    const q_window_t *w = pr->over; /* not for the calls in x */
    pr->over = NULL;
    fill = fill && !x->nullable;
    if (fill)
        P("coalesce(");
    P(agg);
    P("(");
    if (cond != NULL) {
        P("CASE WHEN ");
        q_pexpr(pr, cond);
        P(" THEN ");
    }
    q_pexpr(pr, x);
    if (cond != NULL)
        P(" END");
    P(")");
    if (w != NULL)
        pover(pr, w);
    if (fill) {
        P(", ");
        P(default_of(x->type));
        P(")");
    }
}

static void ch_condition(q_printer_t *pr, const q_expr_t *c)
{
    if (!c->nullable) {
        q_pexpr(pr, c);
        return;
    }
    P("ifNull(");
    q_pexpr(pr, c);
    P(", 0)");
}

/* ClickHouse: agg over the rows where c holds. A nullable x goes through
 * if(c, x, NULL), so that no matching value answers NULL as on SQLite and
 * ClickHouse 21+ (18.16's aggIf of a nullable answers the default). */
static void ch_if_agg(q_printer_t *pr, const char *agg, const q_expr_t *x, const q_expr_t *c)
{
    P(agg);
    if (x->nullable) {
        P("(if(");
        ch_condition(pr, c);
        P(", ");
        q_pexpr(pr, x);
        P(", NULL))");
        return;
    }
    P("If(");
    q_pexpr(pr, x);
    P(", ");
    ch_condition(pr, c);
    P(")");
}

/* quantile(level)(x) and median(x), exact on both stores: SQLite's
 * cm_quantile (libcommon's evstore/evstore_quantile.c) and, for ClickHouse, the same
 * interpolation over the sorted values written out (its quantile() samples
 * past 8,192 values; quantileExactInclusive is newer than 18.16). */
static void quantile(q_printer_t *pr, const q_expr_t *e, int id)
{
    char level[32] = "0.5";
    if (id == Q_FN_QUANTILE || id == Q_FN_QUANTILE_IF) {
        const q_expr_t *l = e->params.v[0];
        /* quantile's level is checked by the resolver; quantileIf's here */
        if (!(l->kind == QE_INT && (l->ival == 0 || l->ival == 1)) &&
            !(l->kind == QE_FLOAT && l->fval >= 0 && l->fval <= 1)) {
            q_pfail(pr, "The level of quantileIf must be a number from 0 to 1, as in "
                        "quantileIf(0.9)(x, cond)");
            return;
        }
        double v = l->kind == QE_INT ? (double)l->ival : l->fval;
        snprintf(level, sizeof(level), "%.15g", v); /* the shortest that reads back */
        if (strtod(level, NULL) != v)
            snprintf(level, sizeof(level), "%.17g", v);
    }
    const q_expr_t *cond = id == Q_FN_MEDIAN_IF || id == Q_FN_QUANTILE_IF ? ARG(1) : NULL;
    if (!pr->ch) {
        P("cm_quantile(");
        if (cond != NULL) {
            P("CASE WHEN ");
            q_pexpr(pr, cond);
            P(" THEN ");
        }
        q_pexpr(pr, ARG(0));
        if (cond != NULL)
            P(" END");
        PF(", %s)", level);
        return;
    }
    static const char pos[] = "(%s * (greatest(length(_q), 1) - 1))";
    P("arrayMap(_q -> if(empty(_q), NULL, _q[toUInt64(floor");
    PF(pos, level);
    P(") + 1] + (_q[toUInt64(floor");
    PF(pos, level);
    P(") + 2] - _q[toUInt64(floor");
    PF(pos, level);
    P(") + 1]) * (");
    PF(pos, level);
    P(" - floor");
    PF(pos, level);
    P(cond != NULL ? ")), [arraySort(groupArrayIf(toFloat64("
                   : ")), [arraySort(groupArray(toFloat64(");
    q_pexpr(pr, ARG(0));
    if (cond != NULL) {
        P("), ");
        ch_condition(pr, cond);
        P("))])[1]");
        return;
    }
    P(")))])[1]");
}

/* ---- argMax/argMin, anyLast, the -If forms of any, variances ------------------------------- */

/* ClickHouse: the conditions an -If form and NULL-skipping need, joined
 * by AND; false when there are none. */
static bool ch_conditions(q_printer_t *pr, const q_expr_t *cond, const q_expr_t *const *nn,
                          size_t nnn)
{
    bool any = false;
    if (cond != NULL) {
        ch_condition(pr, cond);
        any = true;
    }
    for (size_t i = 0; i < nnn; i++) {
        if (!nn[i]->nullable)
            continue;
        P(any ? " AND isNotNull(" : "isNotNull(");
        q_pexpr(pr, nn[i]);
        P(")");
        any = true;
    }
    return any;
}

static bool has_conditions(const q_expr_t *cond, const q_expr_t *const *nn, size_t nnn)
{
    bool any = cond != NULL;
    for (size_t i = 0; i < nnn; i++)
        any = any || nn[i]->nullable;
    return any;
}

/* argMax(x, y): x of the row with the largest y; rows where either is
 * NULL are skipped (ClickHouse 18.16's rule for a nullable argument); a
 * tie on y goes to the largest x (the smallest for argMin), so both stores
 * pick the same row: ClickHouse compares tuple(y, x), SQLite's cm_argmax
 * (libcommon's db/db_sqlite_ch.c) does the same. */
static void arg_best(q_printer_t *pr, const q_expr_t *e, bool max, const q_expr_t *cond)
{
    const q_expr_t *x = ARG(0), *y = ARG(1);
    const q_expr_t *nn[2] = {x, y};
    if (pr->ch && x->nullable) {
        /* NULL when no row counts, whatever a version's nullable rules
         * (18.16's argMaxIf of a nullable answers the default for none) */
        P("if(countIf(");
        ch_conditions(pr, cond, nn, 2);
        P(") > 0, ");
        P(max ? "argMaxIf(" : "argMinIf(");
        q_pexpr(pr, x);
        P(", tuple(");
        q_pexpr(pr, y);
        P(", ");
        q_pexpr(pr, x);
        P("), ");
        ch_conditions(pr, cond, nn, 2);
        P("), NULL)");
        return;
    }
    if (pr->ch) {
        bool with_if = has_conditions(cond, nn + 1, 1);
        P(max ? "argMax" : "argMin");
        P(with_if ? "If(" : "(");
        q_pexpr(pr, x);
        P(", tuple(");
        q_pexpr(pr, y);
        P(", ");
        q_pexpr(pr, x);
        P(")");
        if (with_if) {
            P(", ");
            ch_conditions(pr, cond, nn + 1, 1);
        }
        P(")");
        return;
    }
    bool fill = !x->nullable;
    if (fill)
        P("coalesce(");
    P(max ? "cm_argmax(" : "cm_argmin(");
    if (cond != NULL) {
        P("CASE WHEN ");
        q_pexpr(pr, cond);
        P(" THEN ");
    }
    q_pexpr(pr, x);
    P(cond != NULL ? " END, " : ", ");
    q_pexpr(pr, y);
    P(")");
    if (fill) {
        P(", ");
        P(default_of(x->type));
        P(")");
    }
}

/* varPop, varSamp, stddevPop, stddevSamp over the non-NULL values, as
 * doubles; NULL where ClickHouse answers nan (no values, or one for the
 * Samp forms: SQLite has no nan). SQLite: cm_variance(x, kind) of
 * libcommon's evstore/evstore_stats.c. */
static void variance(q_printer_t *pr, const q_expr_t *e, int kind, const q_expr_t *cond)
{
    static const char *const names[] = {"varPop", "varSamp", "stddevPop", "stddevSamp"};
    const q_expr_t *x = ARG(0);
    if (!pr->ch) {
        P("cm_variance(");
        if (cond != NULL) {
            P("CASE WHEN ");
            q_pexpr(pr, cond);
            P(" THEN ");
        }
        q_pexpr(pr, x);
        PF("%s, %d)", cond != NULL ? " END" : "", kind);
        return;
    }
    const q_expr_t *nn[1] = {x};
    bool with_if = has_conditions(cond, nn, 1);
    P("if(");
    P(with_if ? "countIf(" : "count(");
    if (with_if)
        ch_conditions(pr, cond, nn, 1);
    PF(") > %d, %s%s(toFloat64(", kind & 1, names[kind], with_if ? "If" : "");
    q_pexpr(pr, x);
    P(")");
    if (with_if) {
        P(", ");
        ch_conditions(pr, cond, nn, 1);
    }
    P("), NULL)");
}

/* covarPop, covarSamp, corr over the rows where neither is NULL, as
 * doubles; NULL where ClickHouse answers nan or an infinity (printed
 * if(isFinite(f), f, NULL)). SQLite: cm_covariance(x, y, kind) of
 * libcommon's evstore/evstore_stats.c. */
static void covariance(q_printer_t *pr, const q_expr_t *e, int kind, const q_expr_t *cond)
{
    static const char *const names[] = {"covarPop", "covarSamp", "corr"};
    if (!pr->ch) {
        P("cm_covariance(");
        for (int i = 0; i < 2; i++) {
            if (cond != NULL) {
                P("CASE WHEN ");
                q_pexpr(pr, cond);
                P(" THEN ");
            }
            q_pexpr(pr, ARG(i));
            P(cond != NULL ? " END, " : ", ");
        }
        PF("%d)", kind);
        return;
    }
    for (int twice = 0; twice < 2; twice++) {
        P(twice ? ", " : "if(isFinite(");
        P(names[kind]);
        P(cond != NULL ? "If(" : "(");
        for (int i = 0; i < 2; i++) {
            P(i ? ", toFloat64(" : "toFloat64(");
            q_pexpr(pr, ARG(i));
            P(")");
        }
        if (cond != NULL) {
            P(", ");
            ch_condition(pr, cond);
        }
        P(twice ? "), NULL)" : "))");
    }
}

/* The statistics take numbers: a string would be an error on ClickHouse
 * and read as a number by SQLite, so it is refused on both. */
static bool numbers_only(q_printer_t *pr, const q_expr_t *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        q_type_t t = ARG(i)->type;
        if (t != Q_T_INT && t != Q_T_FLOAT && t != Q_T_BOOL && t != Q_T_NULL) {
            q_pfail(pr, "%.*s takes numbers: convert with toFloat() or toInt()", (int)e->text.len,
                    e->text.p);
            return false;
        }
    }
    return true;
}

/* quantileExact(l)(x), medianExact(x), medianExactIf(x, cond): the value
 * at position floor(l * n) of the sorted non-NULL values (the last for
 * l = 1), as ClickHouse's quantileExact; SQLite's cm_quantile_exact
 * (libcommon's evstore/evstore_quantile.c). Over no values: NULL for a
 * nullable or float x (ClickHouse: NULL, nan), else 0. */
static void quantile_exact(q_printer_t *pr, const q_expr_t *e, int id)
{
    char level[32] = "0.5";
    if (id == Q_FN_QUANTILE_EXACT) {
        const q_expr_t *l = e->params.v[0];
        if (!(l->kind == QE_INT && (l->ival == 0 || l->ival == 1)) &&
            !(l->kind == QE_FLOAT && l->fval >= 0 && l->fval <= 1)) {
            q_pfail(pr, "The level of quantileExact must be a number from 0 to 1, as in "
                        "quantileExact(0.9)(x)");
            return;
        }
        double v = l->kind == QE_INT ? (double)l->ival : l->fval;
        snprintf(level, sizeof(level), "%.15g", v); /* the shortest that reads back */
        if (strtod(level, NULL) != v)
            snprintf(level, sizeof(level), "%.17g", v);
    }
    const q_expr_t *x = ARG(0), *c = id == Q_FN_MEDIAN_EXACT_IF ? ARG(1) : NULL;
    if (pr->ch && c != NULL && !x->nullable) {
        PF("quantileExactIf(%s)(", level);
        q_pexpr(pr, x);
        P(", ");
        ch_condition(pr, c);
        P(")");
        return;
    }
    if (pr->ch) { /* a nullable x: NULL for no value, as SQLite and 21+ */
        PF("quantileExact(%s)(", level);
        if (c != NULL) {
            P("if(");
            ch_condition(pr, c);
            P(", ");
        }
        q_pexpr(pr, x);
        P(c != NULL ? ", NULL))" : ")");
        return;
    }
    bool fill = !x->nullable && x->type == Q_T_INT;
    P(fill ? "coalesce(cm_quantile_exact(" : "cm_quantile_exact(");
    if (c != NULL) {
        P("CASE WHEN ");
        q_pexpr(pr, c);
        P(" THEN ");
    }
    q_pexpr(pr, x);
    PF("%s, %s)", c != NULL ? " END" : "", level);
    if (fill)
        P(", 0)");
}

static void more_aggregate(q_printer_t *pr, const q_expr_t *e, int id)
{
    const q_expr_t *last = ARG(e->args.n - 1);
    if (id >= Q_FN_VAR_POP && id <= Q_FN_CORR && id != Q_FN_MEDIAN_IF &&
        !numbers_only(pr, e, id >= Q_FN_COVAR_POP ? 2 : 1))
        return;
    if (id >= Q_FN_QUANTILE_EXACT && id <= Q_FN_MEDIAN_EXACT_IF) {
        if (numbers_only(pr, e, 1))
            quantile_exact(pr, e, id);
        return;
    }
    switch (id) {
    case Q_FN_ANY_IF:
    case Q_FN_ANY_LAST_IF:
        if (pr->ch)
            return ch_if_agg(pr, id == Q_FN_ANY_IF ? "min" : "max", ARG(0), last);
        lite_agg(pr, id == Q_FN_ANY_IF ? "min" : "max", ARG(0), last, true);
        return;
    case Q_FN_ANY_LAST:
        if (pr->ch)
            return q_psame(pr, "max", e);
        lite_agg(pr, "max", ARG(0), NULL, true);
        return;
    case Q_FN_ARG_MAX: arg_best(pr, e, true, NULL); return;
    case Q_FN_ARG_MAX_IF: arg_best(pr, e, true, last); return;
    case Q_FN_ARG_MIN: arg_best(pr, e, false, NULL); return;
    case Q_FN_ARG_MIN_IF: arg_best(pr, e, false, last); return;
    case Q_FN_VAR_POP: variance(pr, e, 0, NULL); return;
    case Q_FN_VAR_POP_IF: variance(pr, e, 0, last); return;
    case Q_FN_VAR_SAMP: variance(pr, e, 1, NULL); return;
    case Q_FN_VAR_SAMP_IF: variance(pr, e, 1, last); return;
    case Q_FN_STDDEV_POP: variance(pr, e, 2, NULL); return;
    case Q_FN_STDDEV_POP_IF: variance(pr, e, 2, last); return;
    case Q_FN_STDDEV_SAMP: variance(pr, e, 3, NULL); return;
    case Q_FN_STDDEV_SAMP_IF: variance(pr, e, 3, last); return;
    case Q_FN_COVAR_POP: covariance(pr, e, 0, NULL); return;
    case Q_FN_COVAR_POP_IF: covariance(pr, e, 0, last); return;
    case Q_FN_COVAR_SAMP: covariance(pr, e, 1, NULL); return;
    case Q_FN_COVAR_SAMP_IF: covariance(pr, e, 1, last); return;
    case Q_FN_CORR: covariance(pr, e, 2, NULL); return;
    case Q_FN_QUANTILE_EXACT:
    case Q_FN_MEDIAN_EXACT:
    case Q_FN_MEDIAN_EXACT_IF: return; /* above */
    default: return;
    }
}

static void aggregate(q_printer_t *pr, const q_expr_t *e, int id)
{
    const q_expr_t *x = e->args.n > 0 ? ARG(0) : NULL;
    const q_expr_t *c = e->args.n > 1 ? ARG(1) : NULL;
    switch (id) {
    case Q_FN_COUNT:
        if (x == NULL) {
            P(pr->ch ? "count()" : "count(*)");
            return;
        }
        P(e->distinct ? "count(DISTINCT " : "count(");
        q_pexpr(pr, x);
        P(")");
        return;
    case Q_FN_COUNT_IF: /* countIf(cond) or countIf(x, cond): the rows where x is not NULL */
        if (c == NULL) {
            c = x;
            x = NULL;
        }
        if (pr->ch) { /* 18.16's countIf(nullable, c) answers NULL for none */
            P("countIf(");
            ch_condition(pr, c);
            if (x != NULL && x->nullable) {
                P(" AND isNotNull(");
                q_pexpr(pr, x);
                P(")");
            }
            P(")");
            return;
        }
        P("count(CASE WHEN ");
        q_pexpr(pr, c);
        P(" THEN ");
        if (x != NULL)
            q_pexpr(pr, x);
        else
            P("1");
        P(" END)");
        return;
    case Q_FN_UNIQ:
    case Q_FN_UNIQ_IF:
        if (pr->ch && c == NULL) /* exact, as SQLite: uniq() estimates */
            return q_psame(pr, "uniqExact", e);
        if (pr->ch) { /* a count: 0, never NULL, for none */
            P(x->nullable ? "uniqExactIf(assumeNotNull(" : "uniqExactIf(");
            q_pexpr(pr, x);
            P(x->nullable ? "), " : ", ");
            ch_condition(pr, c);
            if (x->nullable) {
                P(" AND isNotNull(");
                q_pexpr(pr, x);
                P(")");
            }
            P(")");
            return;
        }
        P("count(DISTINCT ");
        if (c != NULL) {
            P("CASE WHEN ");
            q_pexpr(pr, c);
            P(" THEN ");
        }
        q_pexpr(pr, x);
        P(c != NULL ? " END)" : ")");
        return;
    case Q_FN_QUANTILE:
    case Q_FN_MEDIAN:
    case Q_FN_MEDIAN_IF:
    case Q_FN_QUANTILE_IF: quantile(pr, e, id); return;
    case Q_FN_ANY: /* any row's value: the smallest, so both stores agree */
        if (pr->ch)
            return q_psame(pr, "min", e);
        lite_agg(pr, "min", x, NULL, true);
        return;
    case Q_FN_ANY_IF:
    case Q_FN_ANY_LAST:
    case Q_FN_ANY_LAST_IF: /* anyLast: the largest, as any is the smallest */
    case Q_FN_ARG_MAX:
    case Q_FN_ARG_MAX_IF:
    case Q_FN_ARG_MIN:
    case Q_FN_ARG_MIN_IF:
    case Q_FN_VAR_POP:
    case Q_FN_VAR_POP_IF:
    case Q_FN_VAR_SAMP:
    case Q_FN_VAR_SAMP_IF:
    case Q_FN_STDDEV_POP:
    case Q_FN_STDDEV_POP_IF:
    case Q_FN_STDDEV_SAMP:
    case Q_FN_STDDEV_SAMP_IF:
    case Q_FN_COVAR_POP:
    case Q_FN_COVAR_POP_IF:
    case Q_FN_COVAR_SAMP:
    case Q_FN_COVAR_SAMP_IF:
    case Q_FN_CORR:
    case Q_FN_QUANTILE_EXACT:
    case Q_FN_MEDIAN_EXACT:
    case Q_FN_MEDIAN_EXACT_IF: more_aggregate(pr, e, id); return;
    default: break;
    }
    if (e->distinct && pr->ch) { /* 18.16 has no -Distinct: over groupUniqArray's values */
        bool sum = id == Q_FN_SUM;
        if (sum && !x->nullable) {
            P("arraySum(groupUniqArray(");
            q_pexpr(pr, x);
            P("))");
            return;
        }
        P(sum ? "arrayMap(_u -> if(empty(_u), NULL, arraySum(_u))"
              : "arrayMap(_u -> if(empty(_u), NULL, arraySum(_u) / length(_u))");
        P(", [groupUniqArray(");
        q_pexpr(pr, x);
        P(")])[1]");
        return;
    }
    if (e->distinct) { /* sum(DISTINCT x), avg(DISTINCT x) */
        bool sum = id == Q_FN_SUM;
        if (sum && !x->nullable)
            P("coalesce(");
        P(sum ? "sum(DISTINCT " : "avg(DISTINCT ");
        q_pexpr(pr, x);
        P(")");
        if (sum && !x->nullable)
            PF(", %s)", default_of(x->type));
        return;
    }
    static const char *const names[] = {
        [Q_FN_SUM] = "sum", [Q_FN_SUM_IF] = "sum", [Q_FN_AVG] = "avg",    [Q_FN_AVG_IF] = "avg",
        [Q_FN_MIN] = "min", [Q_FN_MAX] = "max",    [Q_FN_MIN_IF] = "min", [Q_FN_MAX_IF] = "max",
    };
    bool cond = id == Q_FN_SUM_IF || id == Q_FN_AVG_IF || id == Q_FN_MIN_IF || id == Q_FN_MAX_IF;
    if (pr->ch && cond)
        return ch_if_agg(pr, names[id], x, c);
    if (pr->ch)
        return q_psame(pr, names[id], e);
    lite_agg(pr, names[id], x, cond ? c : NULL, id != Q_FN_AVG && id != Q_FN_AVG_IF);
}

static void window_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    if (pr->ch && !q_ch_modern(pr)) {
        q_pfail(pr, "A window function needs ClickHouse 21.3 or later (this store runs 18.16)");
        return;
    }
    switch (id) {
    case Q_FN_ROW_NUMBER: P("row_number()"); break;
    case Q_FN_RANK: P("rank()"); break;
    case Q_FN_DENSE_RANK: P("dense_rank()"); break;
    case Q_FN_LAG:
    case Q_FN_LEAD:
        if (pr->ch)
            q_psame(pr, id == Q_FN_LAG ? "lagInFrame" : "leadInFrame", e);
        else
            q_psame(pr, id == Q_FN_LAG ? "lag" : "lead", e);
        break;
    case Q_FN_FIRST_VALUE:
    case Q_FN_LAST_VALUE:
        if (q_pvalue_window_ok(pr, e))
            q_psame(pr, id == Q_FN_FIRST_VALUE ? "first_value" : "last_value", e);
        break;
    default:
        if (pr->ch && !q_ch_modern(pr))
            return;
        if (id < Q_FN_COUNT || id >= Q_FN_AGGREGATES_END) { /* groupArray, topK, sumMap, ... */
            q_pfail(pr, "%.*s over a window is not supported yet (an aggregate answering an array)",
                    (int)e->text.len, e->text.p);
            return;
        }
        aggregate(pr, e, id);
        break;
    }
}

static void pover(q_printer_t *pr, const q_window_t *w)
{
    P(" OVER (");
    for (size_t i = 0; i < w->partition.n; i++) {
        P(i ? ", " : "PARTITION BY ");
        q_pexpr(pr, w->partition.v[i]);
    }
    for (size_t i = 0; i < w->norder; i++) {
        P(i ? ", " : w->partition.n ? " ORDER BY " : "ORDER BY ");
        q_pexpr(pr, w->order[i].expr);
        P(w->order[i].desc ? " DESC" : " ASC");
        P(w->order[i].nulls == Q_NULLS_FIRST ? " NULLS FIRST" : " NULLS LAST");
    }
    /* the frame written out on both stores: the query's own, else the
     * default of SQL and current ClickHouse with an ORDER BY (print_s.c) */
    if (w->frame.kind != QW_NONE)
        q_pframe(pr, w);
    else if (w->norder > 0)
        P(" RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW");
    P(")");
}

/* The call if it is an aggregate or a window function (print_fn.c dispatches). */
bool q_pcall_agg(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    if (e->over != NULL && !pr->ch && (id == Q_FN_LAG || id == Q_FN_LEAD)) {
        q_plag_sqlite(pr, e, id == Q_FN_LEAD); /* the frame is checked there */
        return true;
    }
    if (e->over != NULL) {
        const q_window_t *outer = pr->over;
        pr->over = e->over; /* lite_agg prints it (and clears it) where it goes */
        window_fn(pr, e, id);
        if (pr->over != NULL)
            pover(pr, e->over);
        pr->over = outer;
        return true;
    }
    if (id < Q_FN_COUNT || id >= Q_FN_AGGREGATES_END) /* the aggregates' group (functions.h) */
        return false;
    aggregate(pr, e, id);
    return true;
}
