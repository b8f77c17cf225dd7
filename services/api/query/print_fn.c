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

void q_pargs(q_printer_t *pr, const q_expr_t *e, size_t from)
{
    for (size_t i = from; i < e->args.n; i++) {
        if (i > from)
            P(", ");
        q_pexpr(pr, ARG(i));
    }
}

/* name(args...) as written */
void q_psame(q_printer_t *pr, const char *name, const q_expr_t *e)
{
    P(name);
    P("(");
    q_pargs(pr, e, 0);
    P(")");
}

bool q_pconst_string(q_printer_t *pr, const q_expr_t *e, const char *what, cm_slice_t *out)
{
    if (e->kind != QE_STRING) {
        q_pfail(pr, "%s must be a string constant", what);
        return false;
    }
    *out = e->text;
    return true;
}

/* ---- conversions ------------------------------------------------------------------------------
 */

static void to_number_of(q_printer_t *pr, const q_expr_t *x, bool is_int)
{
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

static void to_number(q_printer_t *pr, const q_expr_t *e, bool is_int)
{
    to_number_of(pr, ARG(0), is_int);
}

/* Math as doubles: ClickHouse's nan and infinities are NULL on both
 * stores (SQLite has neither: its math functions answer NULL off their
 * domain, and cm_finite, libcommon's db/db_sqlite_ch.c, turns an overflow
 * into NULL). */
static void math(q_printer_t *pr, const q_expr_t *e, int id)
{
    static const char *const ch[] = {"pow",   "sqrt", "exp", "log", "log2", "log10", "exp2",
                                     "exp10", "sin",  "cos", "tan", "asin", "acos",  "atan"};
    static const char *const lite[] = {"pow",   "sqrt",      "exp",        "ln",  "log2",
                                       "log10", "pow(2.0, ", "pow(10.0, ", "sin", "cos",
                                       "tan",   "asin",      "acos",       "atan"};
    int k = id - Q_FN_POW;
    if (id == Q_FN_PI || id == Q_FN_E) {
        P(id == Q_FN_PI ? "pi()" : pr->ch ? "e()" : "exp(1.0)");
        return;
    }
    if (!pr->ch) {
        P("cm_finite(");
        P(lite[k]);
        if (id != Q_FN_EXP2 && id != Q_FN_EXP10)
            P("(");
        for (size_t i = 0; i < e->args.n; i++) {
            P(i ? ", " : "");
            to_number_of(pr, ARG(i), false);
        }
        P("))");
        return;
    }
    for (int twice = 0; twice < 2; twice++) {
        P(twice ? ", " : "if(isFinite(");
        P(ch[k]);
        P("(");
        for (size_t i = 0; i < e->args.n; i++) {
            P(i ? ", " : "");
            to_number_of(pr, ARG(i), false);
        }
        P(twice ? "), NULL)" : "))");
    }
}

/* toUUID(s): the lowercase UUID of text in its 36-character form, NULL
 * for other text (ClickHouse 18.16 reads garbage from bad hex digits, 21+
 * fails: both stores answer NULL instead); a UUID as it is. */
static void to_uuid(q_printer_t *pr, const q_expr_t *e)
{
    static const char re[] = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                             "[0-9a-fA-F]{12}$";
    const q_expr_t *x = ARG(0);
    if (x->type == Q_T_UUID) {
        q_pexpr(pr, x);
        return;
    }
    if (x->type != Q_T_STRING && x->type != Q_T_ANY && x->type != Q_T_NULL) {
        q_pfail(pr, "toUUID takes a string");
        return;
    }
    cm_slice_t rs = {re, sizeof(re) - 1};
    if (!pr->ch) {
        P("(CASE WHEN cm_match(");
        q_pexpr(pr, x);
        P(", ");
        q_pstring(pr, rs);
        P(") THEN lower(");
        q_pexpr(pr, x);
        P(") END)");
        return;
    }
    /* ClickHouse evaluates both branches: the inner if keeps toUUID's input valid */
    for (int k = 0; k < 2; k++) {
        P(k ? ", toUUID(if(match(" : "if(match(");
        q_pexpr(pr, x);
        P(", ");
        q_pstring(pr, rs);
        P(k ? "), " : ")");
    }
    q_pexpr(pr, x);
    P(", '00000000-0000-0000-0000-000000000000')), NULL)");
}

/* ---- the call ----------------------------------------------------------------------------- */

/* NULLs and conditions, numbers and conversions: the functions no family
 * file claims. */
static bool misc_call(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    switch (id) {
    case Q_FN_COALESCE: q_psame(pr, "coalesce", e); return true;
    case Q_FN_IF_NULL: q_psame(pr, pr->ch ? "ifNull" : "ifnull", e); return true;
    case Q_FN_NULL_IF: q_psame(pr, pr->ch ? "nullIf" : "nullif", e); return true;
    case Q_FN_IS_NULL:
    case Q_FN_IS_NOT_NULL:
        P("(");
        q_pexpr(pr, ARG(0));
        P(id == Q_FN_IS_NULL ? " IS NULL)" : " IS NOT NULL)");
        return true;
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
        return true;
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
        return true;
    case Q_FN_FLOOR:
    case Q_FN_CEIL:
        P(id == Q_FN_FLOOR ? "floor(" : "ceil(");
        if (!pr->ch)
            P("CAST(");
        q_pexpr(pr, ARG(0));
        P(pr->ch ? ")" : " AS REAL))");
        return true;
    case Q_FN_ABS: q_psame(pr, "abs", e); return true;
    case Q_FN_GREATEST:
    case Q_FN_LEAST: {
        /* ClickHouse 18.16's takes two: nested */
        const char *f = pr->ch ? (id == Q_FN_GREATEST ? "greatest(" : "least(")
                               : (id == Q_FN_GREATEST ? "max(" : "min(");
        if (!pr->ch) {
            q_psame(pr, id == Q_FN_GREATEST ? "max" : "min", e);
            return true;
        }
        for (size_t i = 0; i + 1 < e->args.n; i++)
            P(f);
        q_pexpr(pr, ARG(0));
        for (size_t i = 1; i < e->args.n; i++) {
            P(", ");
            q_pexpr(pr, ARG(i));
            P(")");
        }
        return true;
    }
    case Q_FN_INTDIV:
        if (pr->ch) {
            q_psame(pr, "intDiv", e);
            return true;
        }
        if (q_ptype_of(pr, ARG(0)) == Q_T_FLOAT || q_ptype_of(pr, ARG(1)) == Q_T_FLOAT) {
            /* ClickHouse divides floats, then truncates: intDiv(1, 0.5) is 2 */
            P("CAST(CAST(");
            q_pexpr(pr, ARG(0));
            P(" AS REAL) / ");
            q_pdivisor(pr, ARG(1));
            P(" AS INTEGER)");
            return true;
        }
        P("(CAST(");
        q_pexpr(pr, ARG(0));
        P(" AS INTEGER) / CAST(");
        q_pdivisor(pr, ARG(1));
        P(" AS INTEGER))");
        return true;
    case Q_FN_BOOL_OF_STRING: /* 'true' 1, 'false' 0, else NULL (resolve.c) */
        if (pr->ch) {
            P("multiIf(");
            q_pexpr(pr, ARG(0));
            P(" = 'true', 1, ");
            q_pexpr(pr, ARG(0));
            P(" = 'false', 0, NULL)");
        } else {
            P("(CASE ");
            q_pexpr(pr, ARG(0));
            P(" WHEN 'true' THEN 1 WHEN 'false' THEN 0 END)");
        }
        return true;
    case Q_FN_TO_INT: to_number(pr, e, true); return true;
    case Q_FN_TO_FLOAT: to_number(pr, e, false); return true;
    case Q_FN_TO_INT_OR_ZERO:
    case Q_FN_TO_FLOAT_OR_ZERO:
        P(pr->ch ? "ifNull(" : "coalesce(");
        to_number(pr, e, id == Q_FN_TO_INT_OR_ZERO);
        P(id == Q_FN_TO_INT_OR_ZERO ? ", 0)" : ", 0.0)");
        return true;
    case Q_FN_POW:
    case Q_FN_SQRT:
    case Q_FN_EXP:
    case Q_FN_LOG:
    case Q_FN_LOG2:
    case Q_FN_LOG10:
    case Q_FN_EXP2:
    case Q_FN_EXP10:
    case Q_FN_SIN:
    case Q_FN_COS:
    case Q_FN_TAN:
    case Q_FN_ASIN:
    case Q_FN_ACOS:
    case Q_FN_ATAN:
    case Q_FN_PI:
    case Q_FN_E: math(pr, e, id); return true;
    case Q_FN_SIGN: /* -1, 0 or 1 of a number; NULL for text that is no number */
        if (pr->ch && !q_ch_modern(pr)) {
            q_pfail(pr, "sign() needs ClickHouse 21.3 or later (this store runs 18.16)");
            return true;
        }
        P("sign(");
        to_number_of(pr, ARG(0), false);
        P(")");
        return true;
    case Q_FN_TO_UUID: to_uuid(pr, e); return true;
    case Q_FN_TO_BOOL: { /* a number's x != 0, NULL for NULL, as ClickHouse's toBool */
        q_type_t t = q_ptype_of(pr, ARG(0));
        if (t != Q_T_INT && t != Q_T_FLOAT && t != Q_T_BOOL && t != Q_T_NULL) {
            q_pfail(pr, "toBool takes a number here: which strings read as true differs between "
                        "ClickHouse versions (compare the string instead, as x = 'true')");
            return true;
        }
        P("(");
        q_pexpr(pr, ARG(0));
        P(" != 0)");
        return true;
    }
    case Q_FN_CITY_HASH64:
        if (pr->ch) {
            q_psame(pr, "cityHash64", e);
            return true;
        }
        /* SQLite: libcommon's cm_city_hash64 (db_sqlite_cityhash.c), as the
         * UInt64's 20 digits: exact as an answer, a group or an order (text
         * order is number order), not for arithmetic */
        for (size_t i = 0; i < e->args.n; i++)
            if (ARG(i)->type != Q_T_STRING) {
                q_pfail(pr, "cityHash64 on the SQLite store takes strings: convert with "
                            "toString() (ClickHouse hashes other types' bytes)");
                return true;
            }
        if (pr->as_is != e) {
            q_pfail(pr, "cityHash64 is supported on the SQLite store only as a column of the "
                        "answer or a GROUP BY / ORDER BY key (its UInt64 values are past "
                        "SQLite's integers for arithmetic or comparisons)");
            return true;
        }
        q_psame(pr, "cm_city_hash64", e);
        return true;
    case Q_FN_TO_STRING:
        if (pr->ch) {
            q_psame(pr, "toString", e);
            return true;
        }
        P("CAST(");
        q_pexpr(pr, ARG(0));
        P(" AS TEXT)");
        return true;
    default: return false;
    }
}

void q_pcall(q_printer_t *pr, const q_expr_t *e)
{
    if (q_pcall_agg(pr, e) || q_pcall_date(pr, e) || q_pcall_string(pr, e) ||
        q_pcall_array(pr, e) || misc_call(pr, e))
        return;
    q_pfail(pr, "'%.*s' cannot be used here", (int)e->text.len, e->text.p);
}
