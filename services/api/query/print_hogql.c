/*
 * print_hogql.c - an expression printed back as HogQL, in one canonical
 * spelling: the name of a result column that has no alias (count(),
 * toDate(timestamp)), as ClickHouse names columns by their text.
 */
#include <inttypes.h>
#include <string.h>

#include "query/functions.h"
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

static void expr(const q_expr_t *e, cm_buf_t *out, const q_hogql_opts_t *o);
static void select_(const q_select_t *s, cm_buf_t *out, const q_hogql_opts_t *o);

static void list(const q_list_t *l, cm_buf_t *out, const q_hogql_opts_t *o)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            P(", ");
        expr(l->v[i], out, o);
    }
}

static bool skipped(const q_expr_t *e, const q_hogql_opts_t *o)
{
    for (size_t i = 0; o != NULL && i < o->nskip; i++)
        if (o->skip[i] == e)
            return true;
    return false;
}

static void window(const q_window_t *w, cm_buf_t *out, const q_hogql_opts_t *o);

void q_print_hogql_expr(const q_expr_t *e, cm_buf_t *out)
{
    expr(e, out, NULL);
}

/* o NULL: a column's name ((SELECT ...) and OVER (...) abridged); else the
 * whole text, o's skipped nodes printed as true. */
/* An operator written as a call, as written (a column's name): and(a, b,
 * c) was folded into (a AND b) AND c, whose nodes all say "and". */
static void spelled_args(const q_expr_t *e, cm_buf_t *out)
{
    const q_expr_t *l = e->args.n == 2 ? e->args.v[0] : NULL;
    if (l != NULL && l->kind == QE_BINARY && l->op == e->op && l->spelled == e->spelled)
        spelled_args(l, out);
    else
        expr(e->args.v[0], out, NULL);
    for (size_t i = 1; i < e->args.n; i++) {
        P(", ");
        expr(e->args.v[i], out, NULL);
    }
}

static void expr(const q_expr_t *e, cm_buf_t *out, const q_hogql_opts_t *o)
{
    if (o == NULL && e->spelled != NULL) {
        P(e->spelled);
        P("(");
        spelled_args(e, out);
        P(")");
        return;
    }
    if (skipped(e, o)) {
        P("true");
        return;
    }
    switch (e->kind) {
    case QE_NULL: P("NULL"); return;
    case QE_BOOL: P(e->ival ? "true" : "false"); return;
    case QE_INT:
    case QE_FLOAT: cm_buf_append_slice(out, e->text); return;
    case QE_STRING: quoted(out, e->text, '\''); return;
    case QE_FIELD:
    case QE_PLACEHOLDER:
    case QE_STAR:
        if (e->kind == QE_FIELD && e->nchain == 0 && e->alias_of != NULL) {
            cm_buf_append_slice(out, e->text); /* ORDER BY 1: the position, as written */
            return;
        }
        if (e->kind == QE_PLACEHOLDER)
            P("{");
        for (size_t i = 0; i < e->nchain; i++) {
            /* an empty key (properties.k['']): `` is no identifier to the
             * parser, the index form reads back as the same chain */
            if (i && e->kind == QE_FIELD && e->chain[i].len == 0) {
                P("['']");
                continue;
            }
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
        if (e->op_form && e->args.n == 2) { /* a =~ b: the operator's NULL rule, not match()'s */
            P("(");
            expr(e->args.v[0], out, o);
            P(" =~ ");
            expr(e->args.v[1], out, o);
            P(")");
            return;
        }
        if (e->ival == Q_FN_BOOL_OF_STRING && e->resolved && e->args.n == 1) {
            expr(e->args.v[0], out, o); /* the resolver's reading, not the user's text */
            return;
        }
        cm_buf_append_slice(out, e->text);
        if (e->params.n) {
            P("(");
            list(&e->params, out, o);
            P(")");
        }
        P(e->distinct ? "(DISTINCT " : "(");
        list(&e->args, out, o);
        P(")");
        if (e->over != NULL && o == NULL)
            P(" OVER (...)");
        else if (e->over != NULL)
            window(e->over, out, o);
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
            expr(a, out, o);
            if (paren)
                P(")");
        }
        return;
    case QE_NOT:
    case QE_NEG: {
        /* whole text: an operator operand in parentheses (-(a + b) is not
         * -a + b); always: never "--", which would start a comment */
        const q_expr_t *a = e->args.v[0];
        bool paren = o != NULL && (a->kind == QE_BINARY || a->kind == QE_BETWEEN ||
                                   a->kind == QE_IS_NULL || a->kind == QE_NOT || a->kind == QE_NEG);
        P(e->kind == QE_NOT ? "NOT " : "-");
        bool minus = a->kind == QE_NEG || ((a->kind == QE_INT || a->kind == QE_FLOAT) &&
                                           a->text.len > 0 && a->text.p[0] == '-');
        if (e->kind == QE_NEG && !paren && minus)
            P(" ");
        if (paren)
            P("(");
        expr(a, out, o);
        if (paren)
            P(")");
        return;
    }
    case QE_IS_NULL:
        expr(e->args.v[0], out, o);
        P(e->negated ? " IS NOT NULL" : " IS NULL");
        return;
    case QE_BETWEEN:
        expr(e->args.v[0], out, o);
        P(e->negated ? " NOT BETWEEN " : " BETWEEN ");
        expr(e->args.v[1], out, o);
        P(" AND ");
        expr(e->args.v[2], out, o);
        return;
    case QE_CASE:
        P("CASE");
        if (e->operand) {
            P(" ");
            expr(e->operand, out, o);
        }
        for (size_t i = 0; i + 1 < e->args.n; i += 2) {
            P(" WHEN ");
            expr(e->args.v[i], out, o);
            P(" THEN ");
            expr(e->args.v[i + 1], out, o);
        }
        if (e->else_) {
            P(" ELSE ");
            expr(e->else_, out, o);
        }
        P(" END");
        return;
    case QE_ARRAY:
        P("[");
        list(&e->args, out, o);
        P("]");
        return;
    case QE_TUPLE:
        P("(");
        list(&e->args, out, o);
        P(")");
        return;
    case QE_INDEX:
        expr(e->operand, out, o);
        if (e->negated) { /* t.1 */
            P(".");
            expr(e->args.v[0], out, o);
            return;
        }
        P("[");
        expr(e->args.v[0], out, o);
        P("]");
        return;
    case QE_SUBQUERY:
        if (o == NULL) {
            P("(SELECT ...)");
            return;
        }
        P("(");
        select_(e->sub, out, o);
        P(")");
        return;
    case QE_INTERVAL:
        P("INTERVAL ");
        expr(e->args.v[0], out, o);
        P(" ");
        P(unit_names[e->unit]);
        return;
    case QE_CAST:
        P("CAST(");
        expr(e->args.v[0], out, o);
        P(" AS ");
        cm_buf_append_slice(out, e->text);
        P(")");
        return;
    case QE_VALUE: return;
    case QE_LAMBDA:
        P(e->nchain > 1 ? "(" : "");
        for (size_t i = 0; i < e->nchain; i++) {
            if (i)
                P(", ");
            cm_buf_append_slice(out, e->chain[i]);
        }
        P(e->nchain > 1 ? ") -> " : " -> ");
        expr(e->operand, out, o);
        return;
    }
}

/* ---- whole queries ---- */

static void name(cm_buf_t *out, cm_slice_t n)
{
    if (plain(n))
        cm_buf_append_slice(out, n);
    else
        quoted(out, n, '`');
}

static void orders(const q_order_t *v, size_t n, cm_buf_t *out, const q_hogql_opts_t *o)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            P(", ");
        expr(v[i].expr, out, o);
        if (v[i].desc)
            P(" DESC");
        if (v[i].nulls == Q_NULLS_FIRST)
            P(" NULLS FIRST");
        else if (v[i].nulls == Q_NULLS_LAST)
            P(" NULLS LAST");
    }
}

static void window(const q_window_t *w, cm_buf_t *out, const q_hogql_opts_t *o)
{
    P(" OVER (");
    if (w->partition.n) {
        P("PARTITION BY ");
        list(&w->partition, out, o);
    }
    if (w->norder) {
        P(w->partition.n ? " ORDER BY " : "ORDER BY ");
        orders(w->order, w->norder, out, o);
    }
    q_print_hogql_frame(&w->frame, out);
    P(")");
}

static void from_(const q_from_t *f, cm_buf_t *out, const q_hogql_opts_t *o)
{
    static const char *const joins[] = {[QJ_INNER] = " INNER JOIN ",
                                        [QJ_LEFT] = " LEFT JOIN ",
                                        [QJ_RIGHT] = " RIGHT JOIN ",
                                        [QJ_FULL] = " FULL JOIN ",
                                        [QJ_CROSS] = " CROSS JOIN "};
    switch (f->kind) {
    case QJ_ARRAY:
        from_(f->left, out, o);
        P(f->zipped ? ", " : f->join == QJ_LEFT ? " LEFT ARRAY JOIN " : " ARRAY JOIN ");
        expr(f->on, out, o);
        P(" AS ");
        name(out, f->alias);
        return;
    case QJ_TABLE: name(out, f->name); break;
    case QJ_SUBQUERY:
        P("(");
        select_(f->sub, out, o);
        P(")");
        break;
    case QJ_NUMBERS:
        name(out, f->name);
        P("(");
        list(&f->fn_args, out, o);
        P(")");
        break;
    case QJ_JOIN:
        from_(f->left, out, o);
        P(joins[f->join]);
        from_(f->right, out, o);
        if (f->on) {
            P(" ON ");
            expr(f->on, out, o);
        } else if (f->using_.n) {
            P(" USING (");
            list(&f->using_, out, o);
            P(")");
        }
        return;
    }
    if (f->alias.len) {
        P(" AS ");
        name(out, f->alias);
    }
}

static void select_(const q_select_t *s, cm_buf_t *out, const q_hogql_opts_t *o)
{
    if (s->nparts) {
        for (size_t i = 0; i < s->nparts; i++) {
            if (i)
                P(q_setop_name(s->ops[i]));
            P(s->parts[i]->paren ? "(" : "");
            select_(s->parts[i], out, o);
            P(s->parts[i]->paren ? ")" : "");
        }
        return;
    }
    bool top = o != NULL && s == o->top;
    if (s->nwith) {
        P("WITH ");
        for (size_t i = 0; i < s->nwith; i++) {
            if (i)
                P(", ");
            if (s->with[i].sub) {
                name(out, s->with[i].name);
                P(" AS (");
                select_(s->with[i].sub, out, o);
                P(")");
            } else {
                expr(s->with[i].expr, out, o);
                P(" AS ");
                name(out, s->with[i].name);
            }
        }
        P(" ");
    }
    P(s->distinct ? "SELECT DISTINCT " : "SELECT ");
    for (size_t i = 0; i < s->ncols; i++) {
        if (i)
            P(", ");
        expr(s->cols[i].expr, out, o);
        if (s->cols[i].alias.len) {
            P(" AS ");
            name(out, s->cols[i].alias);
        }
    }
    for (size_t i = 0; top && i < o->nextra; i++) {
        P(", ");
        P(o->extra[i]);
    }
    if (s->from) {
        P(" FROM ");
        from_(s->from, out, o);
    }
    if (s->where) {
        P(" WHERE ");
        expr(s->where, out, o);
    }
    bool extra_group = top && o->extra_group != NULL && o->ngroup > 0;
    if (s->group_by.n || extra_group) {
        P(" GROUP BY ");
        list(&s->group_by, out, o);
        for (size_t i = 0; extra_group && i < o->ngroup; i++) {
            if (i || s->group_by.n)
                P(", ");
            P(o->extra_group[i]);
        }
    }
    if (s->having) {
        P(" HAVING ");
        expr(s->having, out, o);
    }
    if (s->norder) {
        P(" ORDER BY ");
        orders(s->order, s->norder, out, o);
    }
    if (s->limit_by.n && s->limit_by_n) {
        P(" LIMIT ");
        expr(s->limit_by_n, out, o);
        if (s->limit_by_offset) {
            P(" OFFSET ");
            expr(s->limit_by_offset, out, o);
        }
        P(" BY ");
        list(&s->limit_by, out, o);
    }
    if (!(top && o->drop_limit)) {
        if (s->limit) {
            P(" LIMIT ");
            expr(s->limit, out, o);
            P(s->with_ties ? " WITH TIES" : "");
        }
        if (s->offset) {
            P(" OFFSET ");
            expr(s->offset, out, o);
        }
    }
}

void q_print_hogql_select(const q_select_t *s, const q_hogql_opts_t *o, cm_buf_t *out)
{
    static const q_hogql_opts_t none = {0};
    select_(s, out, o ? o : &none);
}
