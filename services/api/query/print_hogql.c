/*
 * print_hogql.c - an expression printed back as HogQL, in one canonical
 * spelling: the name of a result column that has no alias (count(),
 * toDate(timestamp)), as ClickHouse names columns by their text.
 */
#include <inttypes.h>
#include <string.h>

#include "query/resolve.h"

#define P(s) cm_buf_append(out, (s), strlen(s))

static const char *const binops[] = {
    [QB_PLUS] = " + ",      [QB_MINUS] = " - ",
    [QB_MUL] = " * ",       [QB_DIV] = " / ",
    [QB_MOD] = " % ",       [QB_CONCAT] = " || ",
    [QB_EQ] = " = ",        [QB_NE] = " != ",
    [QB_LT] = " < ",        [QB_LE] = " <= ",
    [QB_GT] = " > ",        [QB_GE] = " >= ",
    [QB_LIKE] = " LIKE ",   [QB_NOT_LIKE] = " NOT LIKE ",
    [QB_ILIKE] = " ILIKE ", [QB_NOT_ILIKE] = " NOT ILIKE ",
    [QB_IN] = " IN ",       [QB_NOT_IN] = " NOT IN ",
    [QB_AND] = " AND ",     [QB_OR] = " OR ",
};

static const char *const unit_names[] = {"SECOND", "MINUTE", "HOUR",    "DAY",
                                         "WEEK",   "MONTH",  "QUARTER", "YEAR"};

/* Binding strength, as grammar.y's. */
static int prec(q_binop_t op)
{
    switch (op) {
    case QB_OR: return 1;
    case QB_AND: return 2;
    case QB_MUL:
    case QB_DIV:
    case QB_MOD: return 6;
    case QB_PLUS:
    case QB_MINUS:
    case QB_CONCAT: return 5;
    case QB_LT:
    case QB_LE:
    case QB_GT:
    case QB_GE: return 4;
    default: return 3; /* = != LIKE IN */
    }
}

static bool plain(cm_slice_t s)
{
    if (s.len == 0 || (s.p[0] >= '0' && s.p[0] <= '9'))
        return false;
    for (size_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '$'))
            return false;
    }
    return true;
}

static void quoted(cm_buf_t *out, cm_slice_t s, char q)
{
    cm_buf_putc(out, q);
    for (size_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        if (c == q || c == '\\')
            cm_buf_putc(out, '\\');
        if (c == '\0')
            P("\\0");
        else if (c == '\n')
            P("\\n");
        else
            cm_buf_putc(out, c);
    }
    cm_buf_putc(out, q);
}

static void list(const q_list_t *l, cm_buf_t *out)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            P(", ");
        q_print_hogql_expr(l->v[i], out);
    }
}

void q_print_hogql_expr(const q_expr_t *e, cm_buf_t *out)
{
    switch (e->kind) {
    case QE_NULL: P("NULL"); return;
    case QE_BOOL: P(e->ival ? "true" : "false"); return;
    case QE_INT:
    case QE_FLOAT: cm_buf_append_slice(out, e->text); return;
    case QE_STRING: quoted(out, e->text, '\''); return;
    case QE_FIELD:
    case QE_PLACEHOLDER:
    case QE_STAR:
        if (e->kind == QE_PLACEHOLDER)
            P("{");
        for (size_t i = 0; i < e->nchain; i++) {
            if (i)
                P(".");
            if (plain(e->chain[i]))
                cm_buf_append_slice(out, e->chain[i]);
            else
                quoted(out, e->chain[i], '`');
        }
        if (e->kind == QE_PLACEHOLDER)
            P("}");
        if (e->kind == QE_STAR)
            P(e->nchain ? ".*" : "*");
        return;
    case QE_CALL:
        cm_buf_append_slice(out, e->text);
        if (e->params.n) {
            P("(");
            list(&e->params, out);
            P(")");
        }
        P(e->distinct ? "(DISTINCT " : "(");
        list(&e->args, out);
        P(")");
        if (e->over != NULL)
            P(" OVER (...)");
        return;
    case QE_BINARY:
        for (int side = 0; side < 2; side++) {
            const q_expr_t *a = e->args.v[side];
            /* parentheses where the tree differs from the plain reading */
            bool paren = a->kind == QE_BINARY &&
                         (prec(a->op) < prec(e->op) || (side == 1 && prec(a->op) == prec(e->op)));
            if (side)
                P(binops[e->op]);
            if (paren)
                P("(");
            q_print_hogql_expr(a, out);
            if (paren)
                P(")");
        }
        return;
    case QE_NOT:
        P("NOT ");
        q_print_hogql_expr(e->args.v[0], out);
        return;
    case QE_NEG:
        P("-");
        q_print_hogql_expr(e->args.v[0], out);
        return;
    case QE_IS_NULL:
        q_print_hogql_expr(e->args.v[0], out);
        P(e->negated ? " IS NOT NULL" : " IS NULL");
        return;
    case QE_BETWEEN:
        q_print_hogql_expr(e->args.v[0], out);
        P(e->negated ? " NOT BETWEEN " : " BETWEEN ");
        q_print_hogql_expr(e->args.v[1], out);
        P(" AND ");
        q_print_hogql_expr(e->args.v[2], out);
        return;
    case QE_CASE:
        P("CASE");
        if (e->operand) {
            P(" ");
            q_print_hogql_expr(e->operand, out);
        }
        for (size_t i = 0; i + 1 < e->args.n; i += 2) {
            P(" WHEN ");
            q_print_hogql_expr(e->args.v[i], out);
            P(" THEN ");
            q_print_hogql_expr(e->args.v[i + 1], out);
        }
        if (e->else_) {
            P(" ELSE ");
            q_print_hogql_expr(e->else_, out);
        }
        P(" END");
        return;
    case QE_ARRAY:
        P("[");
        list(&e->args, out);
        P("]");
        return;
    case QE_TUPLE:
        P("(");
        list(&e->args, out);
        P(")");
        return;
    case QE_INDEX:
        q_print_hogql_expr(e->operand, out);
        P("[");
        q_print_hogql_expr(e->args.v[0], out);
        P("]");
        return;
    case QE_SUBQUERY: P("(SELECT ...)"); return;
    case QE_INTERVAL:
        P("INTERVAL ");
        q_print_hogql_expr(e->args.v[0], out);
        P(" ");
        P(unit_names[e->unit]);
        return;
    case QE_CAST:
        P("CAST(");
        q_print_hogql_expr(e->args.v[0], out);
        P(" AS ");
        cm_buf_append_slice(out, e->text);
        P(")");
        return;
    case QE_VALUE: return;
    }
}
