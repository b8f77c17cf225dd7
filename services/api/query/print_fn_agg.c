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
    case Q_T_STRING:
    case Q_T_UUID: return "''";
    case Q_T_DATETIME: return "'1970-01-01 00:00:00'";
    case Q_T_DATE: return "'1970-01-01'";
    case Q_T_FLOAT: return "0.0";
    default: return "0";
    }
}

/* SQLite: agg(CASE WHEN cond THEN x END), with ClickHouse's empty default. */
static void lite_agg(q_printer_t *pr, const char *agg, const q_expr_t *x, const q_expr_t *cond,
                     bool fill)
{
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

/* quantile(level)(x) and median(x), exact on both stores: SQLite's
 * cm_quantile (libcommon's evstore/evstore_quantile.c) and, for ClickHouse, the same
 * interpolation over the sorted values written out (its quantile() samples
 * past 8,192 values; quantileExactInclusive is newer than 18.16). */
static void quantile(q_printer_t *pr, const q_expr_t *e, int id)
{
    char level[32] = "0.5";
    if (id == Q_FN_QUANTILE) {
        const q_expr_t *l = e->params.v[0];
        double v = l->kind == QE_INT ? (double)l->ival : l->fval;
        snprintf(level, sizeof(level), "%.15g", v); /* the shortest that reads back */
        if (strtod(level, NULL) != v)
            snprintf(level, sizeof(level), "%.17g", v);
    }
    if (!pr->ch) {
        P("cm_quantile(");
        q_pexpr(pr, ARG(0));
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
    P(")), [arraySort(groupArray(toFloat64(");
    q_pexpr(pr, ARG(0));
    P(")))])[1]");
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
    case Q_FN_COUNT_IF:
        if (pr->ch) {
            P("countIf(");
            ch_condition(pr, x);
            P(")");
            return;
        }
        P("count(CASE WHEN ");
        q_pexpr(pr, x);
        P(" THEN 1 END)");
        return;
    case Q_FN_UNIQ:
    case Q_FN_UNIQ_IF:
        if (pr->ch && c == NULL) /* exact, as SQLite: uniq() estimates */
            return q_psame(pr, "uniqExact", e);
        if (pr->ch) {
            P("uniqExactIf(");
            q_pexpr(pr, x);
            P(", ");
            ch_condition(pr, c);
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
    case Q_FN_MEDIAN: quantile(pr, e, id); return;
    case Q_FN_ANY: /* any row's value: the smallest, so both stores agree */
        if (pr->ch)
            return q_psame(pr, "min", e);
        lite_agg(pr, "min", x, NULL, true);
        return;
    default: break;
    }
    static const char *const names[] = {
        [Q_FN_SUM] = "sum", [Q_FN_SUM_IF] = "sum", [Q_FN_AVG] = "avg",    [Q_FN_AVG_IF] = "avg",
        [Q_FN_MIN] = "min", [Q_FN_MAX] = "max",    [Q_FN_MIN_IF] = "min", [Q_FN_MAX_IF] = "max",
    };
    bool cond = id == Q_FN_SUM_IF || id == Q_FN_AVG_IF || id == Q_FN_MIN_IF || id == Q_FN_MAX_IF;
    if (pr->ch) {
        P(names[id]);
        P(cond ? "If(" : "(");
        q_pexpr(pr, x);
        if (cond) {
            P(", ");
            ch_condition(pr, c);
        }
        P(")");
        return;
    }
    lite_agg(pr, names[id], x, cond ? c : NULL, id != Q_FN_AVG && id != Q_FN_AVG_IF);
}

static void window_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    if (pr->ch && !pr->o->clickhouse_modern) {
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
    default:
        if (pr->ch && !pr->o->clickhouse_modern)
            return;
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
    if (pr->ch && w->norder > 0) /* SQL's frame; ClickHouse defaults to the whole partition */
        P(" ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW");
    P(")");
}

/* The call if it is an aggregate or a window function (print_fn.c dispatches). */
bool q_pcall_agg(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    if (e->over != NULL) {
        window_fn(pr, e, id);
        pover(pr, e->over);
        return true;
    }
    switch (id) {
    case Q_FN_COUNT:
    case Q_FN_COUNT_IF:
    case Q_FN_SUM:
    case Q_FN_SUM_IF:
    case Q_FN_AVG:
    case Q_FN_AVG_IF:
    case Q_FN_MIN:
    case Q_FN_MAX:
    case Q_FN_MIN_IF:
    case Q_FN_MAX_IF:
    case Q_FN_UNIQ:
    case Q_FN_UNIQ_IF:
    case Q_FN_QUANTILE:
    case Q_FN_MEDIAN:
    case Q_FN_ANY: aggregate(pr, e, id); return true;
    default: return false;
    }
}
