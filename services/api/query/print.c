/*
 * print.c - the tree printed as SQL for SQLite or ClickHouse (see query.h
 * and docs/endpoints.md for the rules both follow so that they answer
 * alike):
 *
 *   - every stored table is a derived table filtered to the project,
 *     (SELECT * FROM events [FINAL] WHERE project_id = N) AS s<id>, and
 *     every source is named s<id>, so no user alias reaches the SQL;
 *   - CTEs are printed in place of their uses (ClickHouse 18.16 has
 *     none), SELECT aliases in place of their references;
 *   - every output column is named: expr AS "name";
 *   - comparisons convert a string to what the other side is (a DateTime,
 *     a number) as ClickHouse would, explicitly, on both, and never answer
 *     NULL (print_compare.c: HogQL's two-valued rules);
 *   - ORDER BY says NULLS LAST unless the query says otherwise
 *     (ClickHouse's order; SQLite's default is the other);
 *   - LIMIT n BY is ClickHouse's; SQLite gets the same rows through
 *     row_number() over a window.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "query/print_int.h"

void q_pfail(q_printer_t *pr, const char *fmt, ...)
{
    if (pr->failed)
        return;
    pr->failed = true;
    va_list ap;
    va_start(ap, fmt);
    cm_buf_vappendf(pr->err, fmt, ap);
    va_end(ap);
}

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)

/* ---- literals and names ---------------------------------------------------------------- */

static void add_param(q_printer_t *pr, const api_query_value_t *v)
{
    api_query_sql_t *r = pr->res;
    r->params = cm_xrealloc(r->params, (r->nparams + 1) * sizeof(*r->params));
    r->params[r->nparams++] = v;
    PF("$%zu", r->nparams);
}

void q_pstring(q_printer_t *pr, cm_slice_t s)
{
    if (!pr->ch && memchr(s.p, '\0', s.len) != NULL) {
        /* SQLite's quoted literals cannot hold NUL: a blob made text */
        P("CAST(X'");
        for (size_t i = 0; i < s.len; i++)
            PF("%02x", (unsigned char)s.p[i]);
        P("' AS TEXT)");
        return;
    }
    cm_buf_append(pr->out, "'", 1);
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (c == '\'')
            P(pr->ch ? "\\'" : "''");
        else if (pr->ch && c == '\\')
            P("\\\\");
        else if (pr->ch && c == '\0')
            P("\\0");
        else
            cm_buf_append(pr->out, (const char *)&c, 1);
    }
    cm_buf_append(pr->out, "'", 1);
}

void q_pident(q_printer_t *pr, cm_slice_t name)
{
    char q = pr->ch ? '`' : '"';
    cm_buf_append(pr->out, &q, 1);
    for (size_t i = 0; i < name.len; i++) {
        char c = name.p[i];
        if (c == q)
            cm_buf_append(pr->out, pr->ch ? "\\`" : "\"\"", 2);
        else if (pr->ch && c == '\\')
            P("\\\\");
        else if (c == '\0')
            q_pfail(pr, "a name cannot hold a NUL byte");
        else
            cm_buf_append(pr->out, &c, 1);
    }
    cm_buf_append(pr->out, &q, 1);
}

static void pnumber(q_printer_t *pr, double f)
{
    if (!isfinite(f)) {
        q_pfail(pr, "numbers must be finite");
        return;
    }
    char b[40];
    snprintf(b, sizeof(b), "%.17g", f);
    P(b);
    if (strpbrk(b, ".eE") == NULL)
        P(".0"); /* stays a float on both */
}

static void pvalue_scalar(q_printer_t *pr, const api_query_value_t *v)
{
    if (!pr->ch) {
        add_param(pr, v);
        return;
    }
    switch (v->kind) {
    case API_QV_NULL: P("NULL"); break;
    case API_QV_STRING: q_pstring(pr, (cm_slice_t){v->s, v->len}); break;
    case API_QV_INT: PF("%" PRId64, v->i); break;
    case API_QV_BOOL: P(v->i ? "1" : "0"); break;
    case API_QV_FLOAT: pnumber(pr, v->f); break;
    case API_QV_LIST: q_pfail(pr, "a list cannot be nested in a list"); break;
    }
}

const api_query_value_t *q_pvalue(q_printer_t *pr, const q_expr_t *e)
{
    const api_query_print_opts_t *o = pr->o;
    for (size_t i = 0; i < o->nvars; i++)
        if (cm_slice_eq_cstr(e->chain[1], o->var_names[i]))
            return &o->var_values[i];
    q_pfail(pr, "Variable '%.*s' has no value", (int)e->chain[1].len, e->chain[1].p);
    return NULL;
}

static void pplaceholder(q_printer_t *pr, const q_expr_t *e)
{
    const api_query_value_t *v = q_pvalue(pr, e);
    if (v == NULL)
        return;
    if (v->kind == API_QV_LIST) {
        if (!pr->ch)
            q_pfail(pr, "Variable '%.*s' is a list: use it with IN", (int)e->chain[1].len,
                    e->chain[1].p);
        else {
            P("[");
            for (size_t i = 0; i < v->nitems; i++) {
                if (i)
                    P(", ");
                pvalue_scalar(pr, &v->items[i]);
            }
            P("]");
        }
        return;
    }
    pvalue_scalar(pr, v);
}

/* The type a value will have where it is printed. */
static q_type_t type_of(q_printer_t *pr, const q_expr_t *e)
{
    if (e->kind != QE_PLACEHOLDER)
        return e->type;
    const api_query_value_t *v = q_pvalue(pr, e);
    if (v == NULL)
        return Q_T_ANY;
    switch (v->kind) {
    case API_QV_NULL: return Q_T_NULL;
    case API_QV_STRING: return Q_T_STRING;
    case API_QV_INT: return Q_T_INT;
    case API_QV_FLOAT: return Q_T_FLOAT;
    case API_QV_BOOL: return Q_T_BOOL;
    case API_QV_LIST: return Q_T_ARRAY;
    }
    return Q_T_ANY;
}

/* ---- fields ------------------------------------------------------------------------------ */

static void psource(q_printer_t *pr, const q_scope_entry_t *s)
{
    PF("s%u.", s->id);
}

/* fn(s<id>.column, 'k1', 'k2', ...) */
static void pjson_call(q_printer_t *pr, const char *fn, const q_expr_t *e, const cm_slice_t *keys,
                       size_t n)
{
    P(fn);
    P("(");
    psource(pr, e->source);
    P(e->column);
    for (size_t i = 0; i < n; i++) {
        P(", ");
        q_pstring(pr, keys[i]);
    }
    P(")");
}

/* properties.a.b: HogQL's string form of the value (a string's text; a
 * number, boolean, object or array as its JSON; JSON null and a missing
 * key are NULL). */
static void pproperty(q_printer_t *pr, const q_expr_t *e)
{
    size_t n = e->nchain - e->path_from;
    const cm_slice_t *keys = e->chain + e->path_from;
    if (!pr->ch) {
        cm_buf_t path;
        cm_buf_init(&path);
        cm_buf_append(&path, "$", 1);
        for (size_t i = 0; i < n; i++) {
            if (memchr(keys[i].p, '"', keys[i].len) != NULL ||
                memchr(keys[i].p, '\0', keys[i].len) != NULL) {
                q_pfail(pr, "Property names with '\"' cannot be read on this store");
                break;
            }
            cm_buf_appendf(&path, ".\"%.*s\"", (int)keys[i].len, keys[i].p);
        }
        cm_slice_t ps = cm_buf_slice(&path);
        P("(CASE json_type(");
        psource(pr, e->source);
        P(e->column);
        P(", ");
        q_pstring(pr, ps);
        P(") WHEN 'text' THEN ");
        psource(pr, e->source);
        P(e->column);
        P(" ->> ");
        q_pstring(pr, ps);
        P(" WHEN 'null' THEN NULL ELSE ");
        psource(pr, e->source);
        P(e->column);
        P(" -> ");
        q_pstring(pr, ps);
        P(" END)");
        cm_buf_free(&path);
        return;
    }
    if (n == 1) {
        /* the writer's key and value arrays (proto/event-store.md) */
        P("if(has(");
        psource(pr, e->source);
        PF("%s_keys, ", e->column);
        q_pstring(pr, keys[0]);
        P("), ");
        psource(pr, e->source);
        PF("%s_values[indexOf(", e->column);
        psource(pr, e->source);
        PF("%s_keys, ", e->column);
        q_pstring(pr, keys[0]);
        P(")], NULL)");
        return;
    }
    if (!q_ch_modern(pr)) {
        q_pfail(pr, "A nested property path (%.*s.%.*s) needs ClickHouse 19.3 or later",
                (int)keys[0].len, keys[0].p, (int)keys[1].len, keys[1].p);
        return;
    }
    P("multiIf(");
    pjson_call(pr, "JSONType", e, keys, n);
    P(" = 'String', ");
    pjson_call(pr, "JSONExtractString", e, keys, n);
    P(", NOT ");
    pjson_call(pr, "JSONHas", e, keys, n);
    P(" OR ");
    pjson_call(pr, "JSONType", e, keys, n);
    P(" = 'Null', NULL, ");
    pjson_call(pr, "JSONExtractRaw", e, keys, n);
    P(")");
}

/* ClickHouse 24's analyzer: an alias of the SELECT being printed whose
 * expression calls arrayJoin is read by its column's name (the k-th), not
 * printed again. The old analyzer took each copy of the same text as one
 * column, so the copies in WHERE, GROUP BY and ORDER BY read the SELECT's
 * element; the analyzer keeps textually equal arrayJoin calls apart
 * (ClickHouse issue 69206), so a copy there would join the array a second
 * time. A name reads the SELECT's value as it leaves it: not for DateTimes,
 * arrays and tuples, whose answer columns are converted (toTimeZone,
 * q_pout_open); those print as before. */
static bool alias_by_name(const q_printer_t *pr, const q_expr_t *target, size_t *k)
{
    const q_select_t *s = pr->cur;
    if (!pr->ch || !q_ch_24(pr) || s == NULL || !q_has_array_join(target) ||
        target->type == Q_T_DATETIME || target->type == Q_T_ARRAY || target->type == Q_T_TUPLE)
        return false;
    for (size_t i = 0; i < s->nout; i++)
        if (s->out_exprs[i] == target) {
            *k = i;
            return true;
        }
    return false;
}

static void pfield(q_printer_t *pr, const q_expr_t *e)
{
    switch (e->fkind) {
    case QF_ALIAS: {
        size_t k;
        if (alias_by_name(pr, e->alias_of, &k)) {
            q_pcolname(pr, pr->cur, k);
            return;
        }
        P("(");
        q_pexpr(pr, e->alias_of);
        P(")");
        return;
    }
    case QF_PROPERTY: pproperty(pr, e); return;
    case QF_LAMBDA: q_plambda_param(pr, e); return;
    case QF_COLUMN: {
        unsigned m = q_join_null_key(pr, e); /* print_join.c: 18.16 reads a miss as 0 */
        if (m)
            PF("if(isNull(s%u.m%u), NULL, ", m, m);
        if (e->column != NULL && e->type == Q_T_DATETIME) {
            q_pstored_datetime(pr, e->source->id, e->column);
        } else {
            psource(pr, e->source);
            if (e->column != NULL)
                P(e->column);
            else
                q_pcolname(pr, e->source->sub, (size_t)e->ival);
        }
        if (m)
            P(")");
        return;
    }
    default: q_pfail(pr, "internal: an unresolved field"); return;
    }
}

/* ---- conversions --------------------------------------------------------------------------- */

/* A stored DateTime column: in the project's zone (PostHog's toTimeZone
 * around every one), on ClickHouse in its type; SQLite's stays UTC text. */
void q_pstored_datetime(q_printer_t *pr, unsigned source, const char *column)
{
    cm_slice_t z = q_project_zone(pr);
    if (!pr->ch || q_zone_is_utc(z)) {
        PF("s%u.%s", source, column);
        return;
    }
    PF("toTimeZone(s%u.%s, ", source, column);
    q_pstring(pr, z);
    P(")");
}

/* e as a DateTime: a string or a Date is read as the project's wall clock
 * (a string naming its own offset keeps it), a number as seconds. */
void q_pdatetime(q_printer_t *pr, const q_expr_t *e)
{
    q_type_t t = type_of(pr, e);
    if (t == Q_T_DATETIME) {
        q_pexpr(pr, e);
        return;
    }
    cm_slice_t z = q_project_zone(pr);
    if (pr->ch) {
        P(t == Q_T_STRING ? "parseDateTimeBestEffortOrNull(" : "toDateTime(");
        q_pexpr(pr, e);
        P(", ");
        q_pstring(pr, z);
        P(")");
        return;
    }
    bool wall = t != Q_T_INT && t != Q_T_FLOAT && !q_zone_is_utc(z);
    if (wall)
        P("cm_tz_utc(");
    P("datetime(");
    q_pexpr(pr, e);
    P(t == Q_T_INT || t == Q_T_FLOAT ? ", 'unixepoch')" : ")");
    if (wall) {
        P(", ");
        q_pstring(pr, z);
        if (t == Q_T_STRING) {
            P(", ");
            q_pexpr(pr, e);
        }
        P(")");
    }
}

static void pdate(q_printer_t *pr, const q_expr_t *e)
{
    q_type_t t = type_of(pr, e);
    if (t == Q_T_DATE) {
        q_pexpr(pr, e);
        return;
    }
    if (pr->ch) {
        P("toDate(");
        q_pdatetime(pr, e);
        P(")");
        return;
    }
    P("date(");
    q_pexpr(pr, e);
    P(t == Q_T_INT || t == Q_T_FLOAT ? ", 'unixepoch')" : ")");
}

/* A string read as a number, NULL when it is not one (toFloat64OrNull). */
static void pfloat_of_string(q_printer_t *pr, const q_expr_t *e)
{
    if (pr->ch) {
        P("toFloat64OrNull(");
        q_pexpr(pr, e);
        P(")");
        return;
    }
    P("(CASE WHEN json_valid(");
    q_pexpr(pr, e);
    P(") THEN CASE WHEN json_type(");
    q_pexpr(pr, e);
    P(") IN ('integer', 'real') THEN CAST(");
    q_pexpr(pr, e);
    P(" AS REAL) END END)");
}

/* One side of a comparison with the other side's type in mind. */
static void pcompared(q_printer_t *pr, const q_expr_t *e, q_type_t other)
{
    q_type_t t = type_of(pr, e);
    if (t == Q_T_STRING && other == Q_T_DATETIME)
        q_pdatetime(pr, e);
    else if (t == Q_T_STRING && other == Q_T_DATE)
        pdate(pr, e);
    else if (t == Q_T_STRING && (other == Q_T_INT || other == Q_T_FLOAT))
        pfloat_of_string(pr, e);
    else if (t == Q_T_DATE && other == Q_T_DATETIME)
        q_pdatetime(pr, e);
    else
        q_pexpr(pr, e);
}

/* For print_compare.c (print_int.h). */
void q_pvalue_scalar(q_printer_t *pr, const api_query_value_t *v)
{
    pvalue_scalar(pr, v);
}

q_type_t q_ptype_of(q_printer_t *pr, const q_expr_t *e)
{
    return type_of(pr, e);
}

void q_pcompared(q_printer_t *pr, const q_expr_t *e, q_type_t other)
{
    pcompared(pr, e, other);
}

/* ---- operators ------------------------------------------------------------------------------ */

static void pbinary(q_printer_t *pr, const q_expr_t *e)
{
    static const char *const ops[] = {
        [QB_PLUS] = "+",    [QB_MINUS] = "-", [QB_MUL] = "*",   [QB_DIV] = "/", [QB_MOD] = "%",
        [QB_CONCAT] = "||", [QB_EQ] = "=",    [QB_NE] = "!=",   [QB_LT] = "<",  [QB_LE] = "<=",
        [QB_GT] = ">",      [QB_GE] = ">=",   [QB_AND] = "AND", [QB_OR] = "OR",
    };
    const q_expr_t *a = e->args.v[0], *b = e->args.v[1];
    switch (e->op) {
    case QB_EQ:
    case QB_NE:
    case QB_LT:
    case QB_LE:
    case QB_GT:
    case QB_GE:
    case QB_LIKE:
    case QB_NOT_LIKE:
    case QB_ILIKE:
    case QB_NOT_ILIKE:
    case QB_IN:
    case QB_NOT_IN:
    case QB_CONCAT:
    case QB_AND:
    case QB_OR:
        if (a->kind != QE_INTERVAL && b->kind != QE_INTERVAL) {
            q_pcompare(pr, e); /* print_compare.c: two-valued, as HogQL */
            return;
        }
        break;
    case QB_PLUS:
    case QB_MINUS:
        if (q_is_interval(b)) {
            q_pinterval_math(pr, e);
            return;
        }
        break;
    default: break;
    }
    if (q_is_interval(a) || q_is_interval(b)) {
        q_pfail(pr, "INTERVAL can only be added to or subtracted from a date");
        return;
    }
    P("(");
    switch (e->op) {
    case QB_DIV:
        /* ClickHouse's / divides as floats; SQLite's divides integers */
        if (!pr->ch)
            P("CAST(");
        q_pexpr(pr, a);
        if (!pr->ch)
            P(" AS REAL)");
        P(" / ");
        q_pexpr(pr, b);
        break;
    case QB_MOD:
        q_pexpr(pr, a);
        P(" % ");
        q_pdivisor(pr, b);
        break;
    default:
        q_pexpr(pr, a);
        PF(" %s ", ops[e->op]);
        q_pexpr(pr, b);
        break;
    }
    P(")");
}

/* The divisor of intDiv or modulo: ClickHouse fails the query when it is
 * 0 ("Division by zero"), SQLite answers NULL, so SQLite checks it in
 * cm_divisor (libcommon's db/db_sqlite_ch.c) unless it is a constant
 * other than 0. */
void q_pdivisor(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *c = e->kind == QE_NEG ? e->args.v[0] : e;
    bool nonzero = (c->kind == QE_INT && c->ival != 0) || (c->kind == QE_FLOAT && c->fval != 0);
    if (pr->ch || nonzero) {
        q_pexpr(pr, e);
        return;
    }
    P("cm_divisor(");
    q_pexpr(pr, e);
    P(")");
}

/* CASE x WHEN a THEN ... is printed as CASE WHEN x = a THEN ...
 * (ClickHouse 18.16 answers NULL for the first form without ELSE). */
static void pcase(q_printer_t *pr, const q_expr_t *e)
{
    P("(CASE");
    for (size_t i = 0; i + 1 < e->args.n; i += 2) {
        P(" WHEN ");
        if (e->operand != NULL) {
            P("(");
            pcompared(pr, e->operand, type_of(pr, e->args.v[i]));
            P(" = ");
            pcompared(pr, e->args.v[i], type_of(pr, e->operand));
            P(")");
        } else {
            q_pexpr(pr, e->args.v[i]);
        }
        P(" THEN ");
        q_pexpr(pr, e->args.v[i + 1]);
    }
    if (e->else_ != NULL) {
        P(" ELSE ");
        q_pexpr(pr, e->else_);
    }
    P(" END)");
}

static void pcast(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *a = e->args.v[0];
    switch (e->type) {
    case Q_T_DATETIME: q_pdatetime(pr, a); return;
    case Q_T_DATE: pdate(pr, a); return;
    case Q_T_FLOAT:
        if (type_of(pr, a) == Q_T_STRING) {
            pfloat_of_string(pr, a);
            return;
        }
        break;
    case Q_T_INT:
        if (type_of(pr, a) == Q_T_STRING) { /* a number or NULL, as toInt */
            if (pr->ch) {
                P("toInt64OrNull(");
                q_pexpr(pr, a);
                P(")");
                return;
            }
            P("(CASE WHEN json_valid(");
            q_pexpr(pr, a);
            P(") THEN CASE WHEN json_type(");
            q_pexpr(pr, a);
            P(") = 'integer' THEN CAST(");
            q_pexpr(pr, a);
            P(" AS INTEGER) END END)");
            return;
        }
        break;
    default: break;
    }
    if (pr->ch) {
        const char *fn = e->type == Q_T_STRING  ? "toString("
                         : e->type == Q_T_INT   ? "toInt64("
                         : e->type == Q_T_FLOAT ? "toFloat64("
                         : e->type == Q_T_BOOL  ? "toUInt8("
                                                : "toUUID(";
        P(fn);
        q_pexpr(pr, a);
        P(")");
        return;
    }
    P("CAST(");
    q_pexpr(pr, a);
    P(e->type == Q_T_STRING || e->type == Q_T_UUID ? " AS TEXT)"
      : e->type == Q_T_FLOAT                       ? " AS REAL)"
                                                   : " AS INTEGER)");
}

void q_pexpr(q_printer_t *pr, const q_expr_t *e)
{
    if (pr->failed)
        return;
    if (pr->out->len > Q_MAX_SQL) {
        q_pfail(pr, "the query is too large once its CTEs and aliases are expanded");
        return;
    }
    switch (e->kind) {
    case QE_NULL: P("NULL"); return;
    case QE_BOOL: P(e->ival ? "1" : "0"); return;
    case QE_INT: PF("%" PRId64, e->ival); return;
    case QE_FLOAT: pnumber(pr, e->fval); return;
    case QE_STRING: q_pstring(pr, e->text); return;
    case QE_FIELD: pfield(pr, e); return;
    case QE_PLACEHOLDER: pplaceholder(pr, e); return;
    case QE_CALL:
        if (e->op_form)
            q_pcall_op(pr, e); /* print_compare.c */
        else
            q_pcall(pr, e);
        return;
    case QE_BINARY: pbinary(pr, e); return;
    case QE_NOT:
        P("(NOT ");
        q_pexpr(pr, e->args.v[0]);
        P(")");
        return;
    case QE_NEG:
        P("(-");
        q_pexpr(pr, e->args.v[0]);
        P(")");
        return;
    case QE_IS_NULL:
        P("(");
        q_pexpr(pr, e->args.v[0]);
        P(e->negated ? " IS NOT NULL)" : " IS NULL)");
        return;
    case QE_BETWEEN: q_pbetween(pr, e); return; /* print_compare.c */
    case QE_CASE: pcase(pr, e); return;
    case QE_CAST: pcast(pr, e); return;
    case QE_SUBQUERY: {
        bool on = pr->in_join_on; /* a subquery in ON is a query of its own */
        pr->in_join_on = false;
        P("(");
        q_pselect(pr, e->sub, false);
        P(")");
        pr->in_join_on = on;
        return;
    }
    case QE_ARRAY: q_parray(pr, e); return;
    case QE_TUPLE: q_parray(pr, e); return;
    case QE_INDEX: q_pindex(pr, e); return;
    case QE_LAMBDA: q_pfail(pr, "internal: a lambda outside its function"); return;
    case QE_INTERVAL:
        q_pfail(pr, "INTERVAL can only be added to or subtracted from a date");
        return;
    case QE_STAR: q_pfail(pr, "'*' is allowed only as a column of SELECT"); return;
    case QE_VALUE: return;
    }
}
