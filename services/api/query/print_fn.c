/*
 * print_fn.c - function calls for SQLite and ClickHouse, so that both
 * answer as ClickHouse does (HogQL's reference). Where an aggregate over
 * no rows differs (ClickHouse: the type's default, SQLite: NULL), SQLite
 * gets the default; dates are UTC; strings are measured in bytes.
 * Dialect gaps are refused with the reason (docs/endpoints.md lists them).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/print_int.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)
#define ARG(i)  (e->args.v[(i)])

static void args(q_printer_t *pr, const q_expr_t *e, size_t from)
{
    for (size_t i = from; i < e->args.n; i++) {
        if (i > from)
            P(", ");
        q_pexpr(pr, ARG(i));
    }
}

/* name(args...) as written */
static void same(q_printer_t *pr, const char *name, const q_expr_t *e)
{
    P(name);
    P("(");
    args(pr, e, 0);
    P(")");
}

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

static bool const_string(q_printer_t *pr, const q_expr_t *e, const char *what, cm_slice_t *out)
{
    if (e->kind != QE_STRING) {
        q_pfail(pr, "%s must be a string constant", what);
        return false;
    }
    *out = e->text;
    return true;
}

/* ---- dates ---------------------------------------------------------------------------------- */

static const char *const units[] = {"second", "minute", "hour",    "day",
                                    "week",   "month",  "quarter", "year"};

static int unit_of(q_printer_t *pr, const q_expr_t *e)
{
    cm_slice_t u;
    if (!const_string(pr, e, "The unit", &u))
        return -1;
    for (int i = 0; i < 8; i++)
        if (cm_slice_eq_cstr(u, units[i]))
            return i;
    q_pfail(pr, "Unknown unit '%.*s': second, minute, hour, day, week, month, quarter or year",
            (int)(u.len > 20 ? 20 : u.len), u.p);
    return -1;
}

/* SQLite: the number of unit boundaries since the epoch (ClickHouse's toRelative*Num). */
static void lite_relative(q_printer_t *pr, int unit, const q_expr_t *x)
{
    static const char *const secs[] = {"1", "60", "3600"};
    if (unit <= 2) {
        P("(CAST(strftime('%s', ");
        q_pdatetime(pr, x);
        PF(") AS INTEGER) / %s)", secs[unit]);
    } else if (unit == 3) {
        P("CAST(julianday(date(");
        q_pdatetime(pr, x);
        P(")) AS INTEGER)");
    } else if (unit == 4) { /* weeks from Monday */
        P("(CAST(julianday(date(");
        q_pdatetime(pr, x);
        P(", '-6 days', 'weekday 1')) AS INTEGER) / 7)");
    } else {
        const char *per = unit == 5 ? "12" : unit == 6 ? "4" : "1";
        P("(CAST(strftime('%Y', ");
        q_pdatetime(pr, x);
        PF(") AS INTEGER) * %s", per);
        if (unit != 7) {
            P(" + (CAST(strftime('%m', ");
            q_pdatetime(pr, x);
            P(unit == 5 ? ") AS INTEGER) - 1))" : ") AS INTEGER) - 1) / 3)");
        } else {
            P(")");
        }
    }
}

static void date_diff(q_printer_t *pr, const q_expr_t *e)
{
    int u = unit_of(pr, ARG(0));
    if (u < 0)
        return;
    if (pr->ch) {
        PF("dateDiff('%s', ", units[u]);
        q_pdatetime(pr, ARG(1));
        P(", ");
        q_pdatetime(pr, ARG(2));
        P(")");
        return;
    }
    P("(");
    lite_relative(pr, u, ARG(2));
    P(" - ");
    lite_relative(pr, u, ARG(1));
    P(")");
}

static void date_add(q_printer_t *pr, const q_expr_t *e, bool sub)
{
    static const char *const lite[] = {"seconds", "minutes", "hours",  "days",
                                       "days",    "months",  "months", "years"};
    static const int mult[] = {1, 1, 1, 1, 7, 1, 3, 1};
    int u = unit_of(pr, ARG(0));
    if (u < 0)
        return;
    if (ARG(1)->type != Q_T_INT) {
        q_pfail(pr, "%s takes a whole number of units", sub ? "dateSub" : "dateAdd");
        return;
    }
    if (pr->ch) {
        P("(");
        q_pdatetime(pr, ARG(2));
        PF(" %s toInterval%c%s(", sub ? "-" : "+", units[u][0] - 32, units[u] + 1);
        q_pexpr(pr, ARG(1));
        P("))");
        return;
    }
    P("datetime(");
    q_pdatetime(pr, ARG(2));
    PF(", (%s", sub ? "-" : "");
    q_pexpr(pr, ARG(1));
    PF(" * %d) || ' %s')", mult[u], lite[u]);
}

/* toStartOf*, toYear...: SQLite's strftime; ClickHouse's own. */
static void date_part(q_printer_t *pr, const q_expr_t *e, int id)
{
    const q_expr_t *x = ARG(0);
    if (pr->ch) {
        switch (id) {
        case Q_FN_START_OF_WEEK: {
            int64_t mode = e->args.n > 1 && ARG(1)->kind == QE_INT ? ARG(1)->ival : 0;
            if (e->args.n > 1 && ARG(1)->kind != QE_INT) {
                q_pfail(pr, "toStartOfWeek's mode must be 0 (Sunday) or 1 (Monday)");
                return;
            }
            if (mode & 1) {
                P("toMonday(");
                q_pdatetime(pr, x);
                P(")");
            } else { /* 18.16 has no toStartOfWeek */
                P("(toDate(");
                q_pdatetime(pr, x);
                P(") - (toDayOfWeek(");
                q_pdatetime(pr, x);
                P(") % 7))");
            }
            return;
        }
        case Q_FN_START_OF_DAY:
            P("toStartOfDay(");
            q_pdatetime(pr, x);
            P(")");
            return;
        default: break;
        }
        static const char *const names[] = {
            [Q_FN_START_OF_MINUTE] = "toStartOfMinute",
            [Q_FN_START_OF_HOUR] = "toStartOfHour",
            [Q_FN_START_OF_MONTH] = "toStartOfMonth",
            [Q_FN_START_OF_YEAR] = "toStartOfYear",
            [Q_FN_TO_YEAR] = "toYear",
            [Q_FN_TO_MONTH] = "toMonth",
            [Q_FN_TO_DAY_OF_MONTH] = "toDayOfMonth",
            [Q_FN_TO_DAY_OF_WEEK] = "toDayOfWeek",
            [Q_FN_TO_HOUR] = "toHour",
            [Q_FN_TO_MINUTE] = "toMinute",
            [Q_FN_TO_UNIX] = "toUnixTimestamp",
        };
        P(names[id]);
        P("(");
        q_pdatetime(pr, x);
        P(")");
        return;
    }
    const char *pre = NULL, *post = ")";
    switch (id) {
    case Q_FN_START_OF_MINUTE: pre = "strftime('%Y-%m-%d %H:%M:00', "; break;
    case Q_FN_START_OF_HOUR: pre = "strftime('%Y-%m-%d %H:00:00', "; break;
    case Q_FN_START_OF_DAY:
        pre = "datetime(";
        post = ", 'start of day')";
        break;
    case Q_FN_START_OF_WEEK: {
        bool monday = e->args.n > 1 && ARG(1)->kind == QE_INT && (ARG(1)->ival & 1);
        if (e->args.n > 1 && ARG(1)->kind != QE_INT) {
            q_pfail(pr, "toStartOfWeek's mode must be 0 (Sunday) or 1 (Monday)");
            return;
        }
        pre = "date(";
        post = monday ? ", '-6 days', 'weekday 1')" : ", '-6 days', 'weekday 0')";
        break;
    }
    case Q_FN_START_OF_MONTH:
        pre = "date(";
        post = ", 'start of month')";
        break;
    case Q_FN_START_OF_YEAR:
        pre = "date(";
        post = ", 'start of year')";
        break;
    case Q_FN_TO_YEAR:
        pre = "CAST(strftime('%Y', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_MONTH:
        pre = "CAST(strftime('%m', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_DAY_OF_MONTH:
        pre = "CAST(strftime('%d', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_DAY_OF_WEEK: /* ClickHouse: Monday 1 ... Sunday 7 */
        pre = "((CAST(strftime('%w', ";
        post = ") AS INTEGER) + 6) % 7 + 1)";
        break;
    case Q_FN_TO_HOUR:
        pre = "CAST(strftime('%H', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_MINUTE:
        pre = "CAST(strftime('%M', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_UNIX:
        pre = "CAST(strftime('%s', ";
        post = ") AS INTEGER)";
        break;
    }
    P(pre);
    q_pdatetime(pr, x);
    P(post);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* SQLite: a JSON path from the keys after the document ('$."a"[0]'). */
static bool lite_path(q_printer_t *pr, const q_expr_t *e, cm_buf_t *path)
{
    cm_buf_append(path, "$", 1);
    for (size_t i = 1; i < e->args.n; i++) {
        const q_expr_t *k = ARG(i);
        if (k->kind == QE_INT && k->ival >= 1) {
            cm_buf_appendf(path, "[%" PRId64 "]", k->ival - 1);
            continue;
        }
        if (k->kind != QE_STRING || memchr(k->text.p, '"', k->text.len) != NULL ||
            memchr(k->text.p, '\0', k->text.len) != NULL) {
            q_pfail(pr, "JSON keys must be string constants without '\"' (or positions from 1)");
            return false;
        }
        cm_buf_appendf(path, ".\"%.*s\"", (int)k->text.len, k->text.p);
    }
    return true;
}

static void json_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    if (pr->ch) {
        if (!pr->o->clickhouse_modern) {
            q_pfail(pr, "%.*s needs ClickHouse 19.3 or later: read properties.<key> instead",
                    (int)e->text.len, e->text.p);
            return;
        }
        same(pr, e->text.p, e);
        return;
    }
    cm_buf_t path;
    cm_buf_init(&path);
    if (!lite_path(pr, e, &path)) {
        cm_buf_free(&path);
        return;
    }
    cm_slice_t ps = cm_buf_slice(&path);
    const q_expr_t *doc = ARG(0);
    /* Not JSON at all: ClickHouse's answer for a missing key. */
    P("(CASE WHEN json_valid(");
    q_pexpr(pr, doc);
    P(") THEN ");
    const char *miss = "0";
    switch (id) {
    case Q_FN_JSON_HAS:
        P("(json_type(");
        q_pexpr(pr, doc);
        P(", ");
        q_pstring(pr, ps);
        P(") IS NOT NULL)");
        break;
    case Q_FN_JSON_RAW:
        miss = "''";
        P("coalesce(");
        q_pexpr(pr, doc);
        P(" -> ");
        q_pstring(pr, ps);
        P(", '')");
        break;
    default:
        P("(CASE json_type(");
        q_pexpr(pr, doc);
        P(", ");
        q_pstring(pr, ps);
        P(")");
        if (id == Q_FN_JSON_BOOL) {
            P(" WHEN 'true' THEN 1 ELSE 0 END)");
            break;
        }
        P(id == Q_FN_JSON_STRING ? " WHEN 'text' THEN " : " WHEN 'integer' THEN ");
        if (id == Q_FN_JSON_FLOAT)
            P("CAST(");
        q_pexpr(pr, doc);
        P(" ->> ");
        q_pstring(pr, ps);
        if (id == Q_FN_JSON_FLOAT) {
            P(" AS REAL) WHEN 'real' THEN ");
            q_pexpr(pr, doc);
            P(" ->> ");
            q_pstring(pr, ps);
        }
        miss = id == Q_FN_JSON_STRING ? "''" : id == Q_FN_JSON_FLOAT ? "0.0" : "0";
        PF(" ELSE %s END)", miss);
        break;
    }
    PF(" ELSE %s END)", miss);
    cm_buf_free(&path);
}

/* ---- strings -------------------------------------------------------------------------------- */

/* SQLite: x as bytes (ClickHouse measures and cuts strings in bytes). */
static void lite_blob(q_printer_t *pr, const q_expr_t *x)
{
    P("CAST(");
    q_pexpr(pr, x);
    P(" AS BLOB)");
}

static void string_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    switch (id) {
    case Q_FN_LENGTH:
        if (pr->ch)
            return same(pr, "length", e);
        P("length(");
        lite_blob(pr, ARG(0));
        P(")");
        return;
    case Q_FN_CONCAT: /* NULL and non-strings as HogQL's concat: '' and their text */
        P("(");
        for (size_t i = 0; i < e->args.n; i++) {
            if (i)
                P(" || ");
            P(pr->ch ? "ifNull(toString(" : "coalesce(CAST(");
            q_pexpr(pr, ARG(i));
            P(pr->ch ? "), '')" : " AS TEXT), '')");
        }
        P(")");
        return;
    case Q_FN_SUBSTRING:
        if (pr->ch)
            return same(pr, "substring", e);
        P("CAST(substr(");
        lite_blob(pr, ARG(0));
        P(", ");
        args(pr, e, 1);
        P(") AS TEXT)");
        return;
    case Q_FN_TRIM:
        if (!pr->ch)
            return same(pr, "trim", e);
        P("replaceRegexpAll(");
        q_pexpr(pr, ARG(0));
        P(", '^ +| +$', '')");
        return;
    case Q_FN_REPLACE_ALL: return same(pr, pr->ch ? "replaceAll" : "replace", e);
    case Q_FN_POSITION:
        if (pr->ch)
            return same(pr, "position", e);
        P("instr(");
        lite_blob(pr, ARG(0));
        P(", ");
        lite_blob(pr, ARG(1));
        P(")");
        return;
    case Q_FN_STARTS_WITH:
    case Q_FN_ENDS_WITH:
        if (pr->ch)
            return same(pr, id == Q_FN_STARTS_WITH ? "startsWith" : "endsWith", e);
        P("(length(");
        lite_blob(pr, ARG(1));
        P(") = 0 OR substr(");
        lite_blob(pr, ARG(0));
        if (id == Q_FN_STARTS_WITH)
            P(", 1, length(");
        else
            P(", -length(");
        lite_blob(pr, ARG(1));
        P(")) = ");
        lite_blob(pr, ARG(1));
        P(")");
        return;
    case Q_FN_EMPTY:
    case Q_FN_NOT_EMPTY:
        P("(");
        q_pexpr(pr, ARG(0));
        P(id == Q_FN_EMPTY ? " = '')" : " != '')");
        return;
    }
}

/* ---- conversions ------------------------------------------------------------------------------
 */

static void to_number(q_printer_t *pr, const q_expr_t *e, bool is_int)
{
    const q_expr_t *x = ARG(0);
    if (x->type == Q_T_STRING || x->type == Q_T_ANY) {
        if (pr->ch) {
            P(is_int ? "toInt64OrNull(" : "toFloat64OrNull(");
            q_pexpr(pr, x);
            P(")");
            return;
        }
        P("(CASE WHEN json_valid(");
        q_pexpr(pr, x);
        P(is_int ? ") THEN CASE WHEN json_type(" : ") THEN CASE WHEN json_type(");
        q_pexpr(pr, x);
        P(is_int ? ") = 'integer' THEN CAST(" : ") IN ('integer', 'real') THEN CAST(");
        q_pexpr(pr, x);
        P(is_int ? " AS INTEGER) END END)" : " AS REAL) END END)");
        return;
    }
    if (x->type == Q_T_DATETIME || x->type == Q_T_DATE) {
        q_pfail(pr, "Use toUnixTimestamp() to turn a date into a number");
        return;
    }
    P(pr->ch ? (is_int ? "toInt64(" : "toFloat64(") : "CAST(");
    q_pexpr(pr, x);
    P(pr->ch ? ")" : is_int ? " AS INTEGER)" : " AS REAL)");
}

/* ---- the call ----------------------------------------------------------------------------------
 */

/* An -If combinator's condition: a NULL one counts as false (18.16's
 * countIf over a nullable condition answers NULL, SQLite's CASE skips it). */
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
            return same(pr, "uniqExact", e);
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
            return same(pr, "min", e);
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
        q_pfail(pr, "Window functions need ClickHouse 21.3 or later (this store runs 18.16)");
        return;
    }
    switch (id) {
    case Q_FN_ROW_NUMBER: P("row_number()"); break;
    case Q_FN_RANK: P("rank()"); break;
    case Q_FN_DENSE_RANK: P("dense_rank()"); break;
    case Q_FN_LAG:
    case Q_FN_LEAD:
        if (pr->ch)
            same(pr, id == Q_FN_LAG ? "lagInFrame" : "leadInFrame", e);
        else
            same(pr, id == Q_FN_LAG ? "lag" : "lead", e);
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

void q_pcall(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    if (e->over != NULL) {
        window_fn(pr, e, id);
        pover(pr, e->over);
        return;
    }
    switch (id) {
    case Q_FN_COUNT ... Q_FN_ANY: aggregate(pr, e, id); return;
    case Q_FN_TO_DATE:
        if (pr->ch) {
            P("toDate(");
            q_pdatetime(pr, ARG(0));
            P(")");
        } else {
            P("date(");
            q_pdatetime(pr, ARG(0));
            P(")");
        }
        return;
    case Q_FN_TO_DATETIME:
    case Q_FN_FROM_UNIX:
        if (e->args.n > 1) {
            q_pfail(pr, "toDateTime takes one argument here (times are UTC)");
            return;
        }
        q_pdatetime(pr, ARG(0));
        return;
    case Q_FN_START_OF_MINUTE ... Q_FN_TO_MINUTE:
    case Q_FN_TO_UNIX: date_part(pr, e, id); return;
    case Q_FN_TO_TIMEZONE: {
        cm_slice_t tz;
        if (!const_string(pr, ARG(1), "The time zone", &tz))
            return;
        if (!pr->ch && !cm_slice_eq_cstr(tz, "UTC")) {
            q_pfail(pr, "toTimeZone to a zone other than UTC needs the ClickHouse store");
            return;
        }
        if (!pr->ch) {
            q_pdatetime(pr, ARG(0));
            return;
        }
        P("toTimeZone(");
        q_pdatetime(pr, ARG(0));
        P(", ");
        q_pstring(pr, tz);
        P(")");
        return;
    }
    case Q_FN_DATE_DIFF: date_diff(pr, e); return;
    case Q_FN_DATE_ADD:
    case Q_FN_DATE_SUB: date_add(pr, e, id == Q_FN_DATE_SUB); return;
    case Q_FN_NOW: P(pr->ch ? "toTimeZone(now(), 'UTC')" : "datetime('now')"); return;
    case Q_FN_TODAY: P(pr->ch ? "toDate(toTimeZone(now(), 'UTC'))" : "date('now')"); return;
    case Q_FN_JSON_STRING ... Q_FN_JSON_HAS: json_fn(pr, e, id); return;
    case Q_FN_LOWER: same(pr, "lower", e); return;
    case Q_FN_UPPER: same(pr, "upper", e); return;
    case Q_FN_LENGTH ... Q_FN_ENDS_WITH:
    case Q_FN_EMPTY:
    case Q_FN_NOT_EMPTY: string_fn(pr, e, id); return;
    case Q_FN_COALESCE: same(pr, "coalesce", e); return;
    case Q_FN_IF_NULL: same(pr, pr->ch ? "ifNull" : "ifnull", e); return;
    case Q_FN_NULL_IF: same(pr, pr->ch ? "nullIf" : "nullif", e); return;
    case Q_FN_IS_NULL:
    case Q_FN_IS_NOT_NULL:
        P("(");
        q_pexpr(pr, ARG(0));
        P(id == Q_FN_IS_NULL ? " IS NULL)" : " IS NOT NULL)");
        return;
    case Q_FN_IF:
    case Q_FN_MULTI_IF:
        P("(CASE");
        for (size_t i = 0; i + 1 < e->args.n; i += 2) {
            P(" WHEN ");
            q_pexpr(pr, ARG(i));
            P(" THEN ");
            q_pexpr(pr, ARG(i + 1));
        }
        P(" ELSE ");
        q_pexpr(pr, ARG(e->args.n - 1));
        P(" END)");
        return;
    case Q_FN_ROUND:
        P("round(");
        if (!pr->ch)
            P("CAST(");
        q_pexpr(pr, ARG(0));
        if (!pr->ch)
            P(" AS REAL)");
        if (e->args.n > 1) {
            P(", ");
            q_pexpr(pr, ARG(1));
        }
        P(")");
        return;
    case Q_FN_FLOOR:
    case Q_FN_CEIL:
        P(id == Q_FN_FLOOR ? "floor(" : "ceil(");
        if (!pr->ch)
            P("CAST(");
        q_pexpr(pr, ARG(0));
        P(pr->ch ? ")" : " AS REAL))");
        return;
    case Q_FN_ABS: same(pr, "abs", e); return;
    case Q_FN_GREATEST:
    case Q_FN_LEAST: {
        /* ClickHouse 18.16's takes two: nested */
        const char *f = pr->ch ? (id == Q_FN_GREATEST ? "greatest(" : "least(")
                               : (id == Q_FN_GREATEST ? "max(" : "min(");
        if (!pr->ch) {
            same(pr, id == Q_FN_GREATEST ? "max" : "min", e);
            return;
        }
        for (size_t i = 0; i + 1 < e->args.n; i++)
            P(f);
        q_pexpr(pr, ARG(0));
        for (size_t i = 1; i < e->args.n; i++) {
            P(", ");
            q_pexpr(pr, ARG(i));
            P(")");
        }
        return;
    }
    case Q_FN_INTDIV:
        if (pr->ch)
            return same(pr, "intDiv", e);
        P("(CAST(");
        q_pexpr(pr, ARG(0));
        P(" AS INTEGER) / CAST(");
        q_pexpr(pr, ARG(1));
        P(" AS INTEGER))");
        return;
    case Q_FN_TO_INT: to_number(pr, e, true); return;
    case Q_FN_TO_FLOAT: to_number(pr, e, false); return;
    case Q_FN_TO_STRING:
        if (pr->ch)
            return same(pr, "toString", e);
        P("CAST(");
        q_pexpr(pr, ARG(0));
        P(" AS TEXT)");
        return;
    default: q_pfail(pr, "'%.*s' cannot be used here", (int)e->text.len, e->text.p); return;
    }
}
