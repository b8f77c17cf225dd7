/*
 * materialize.c - whether a HogQL endpoint's query can be stored as a
 * table, and the query that fills it (query.h; the rule is docs/endpoints.md's, Materialization).
 *
 * The rule: each variable is one side of a comparison (=, >=, >, <, <=)
 * in the top SELECT's WHERE, the other side a column (a field, or a call
 * on fields), ANDed with the rest, never under OR, in HAVING or anywhere
 * else. The stored query is the same SELECT with those comparisons left
 * out (printed as true), each variable's column added as a column named
 * after it (a range variable's by day: toStartOfDay, so a range must
 * compare a date or date-time column, and a date-time one only by >= and
 * <, the operators that find whole days), and in GROUP BY when
 * the query aggregates; a read then filters the table by the values (and
 * re-aggregates ranges, which only count, sum, min and max allow). The
 * query's LIMIT and OFFSET are left out of the table and applied at read.
 * Reasons are PostHog's own strings, where it has one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "query/functions.h"
#include "query/resolve.h"

#define MAX_CMP 64

typedef struct {
    const char *code;
    const q_expr_t *column; /* the other side of its comparisons */
    char *column_text;      /* printed as HogQL */
    bool range;
    char ops[32]; /* column <op> value, for each comparison */
} mvar_t;

typedef struct {
    const api_query_t *q;
    mvar_t *vars;
    const q_expr_t *cmp[MAX_CMP]; /* the comparisons left out */
    size_t ncmp;
    cm_buf_t *reason;
    bool failed;
} mat_t;

static void fail(mat_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(mat_t *m, const char *fmt, ...)
{
    if (m->failed)
        return;
    m->failed = true;
    va_list ap;
    va_start(ap, fmt);
    cm_buf_vappendf(m->reason, fmt, ap);
    va_end(ap);
}

static mvar_t *var_of(mat_t *m, const q_expr_t *e)
{
    if (e->kind != QE_PLACEHOLDER || e->nchain != 2)
        return NULL;
    for (size_t i = 0; i < m->q->nvars; i++)
        if (cm_slice_eq_cstr(e->chain[1], m->q->vars[i]))
            return &m->vars[i];
    return NULL;
}

/* ---- every use of a placeholder, where it is ---- */

static void uses_select(mat_t *m, const q_select_t *s, const char *where);

/* Any placeholder under e is a use the rule does not allow: say where. */
static void uses_expr(mat_t *m, const q_expr_t *e, const char *where)
{
    if (e == NULL || m->failed)
        return;
    if (e->kind == QE_PLACEHOLDER) {
        fail(m, "%s", where);
        return;
    }
    for (size_t i = 0; i < e->args.n; i++)
        uses_expr(m, e->args.v[i], where);
    for (size_t i = 0; i < e->params.n; i++)
        uses_expr(m, e->params.v[i], where);
    uses_expr(m, e->operand, where);
    uses_expr(m, e->else_, where);
    if (e->over) {
        for (size_t i = 0; i < e->over->partition.n; i++)
            uses_expr(m, e->over->partition.v[i], where);
        for (size_t i = 0; i < e->over->norder; i++)
            uses_expr(m, e->over->order[i].expr, where);
    }
    if (e->sub)
        uses_select(m, e->sub, "Variables in subqueries are not supported for materialization");
}

static void uses_from(mat_t *m, const q_from_t *f)
{
    if (f == NULL)
        return;
    if (f->kind == QJ_SUBQUERY)
        uses_select(m, f->sub, "Variables in subqueries are not supported for materialization");
    if (f->kind == QJ_ARRAY) { /* ARRAY JOIN: its array reads the left side */
        uses_from(m, f->left);
        uses_expr(m, f->on, "Variable not used in WHERE clause");
    }
    if (f->kind == QJ_JOIN) {
        uses_from(m, f->left);
        uses_from(m, f->right);
        uses_expr(m, f->on, "Variable not used in WHERE clause");
    }
}

static void uses_select(mat_t *m, const q_select_t *s, const char *where)
{
    for (size_t i = 0; i < s->nparts; i++)
        uses_select(m, s->parts[i], where);
    for (size_t i = 0; i < s->nwith; i++) {
        if (s->with[i].sub)
            uses_select(m, s->with[i].sub,
                        "Variables in CTEs are not yet supported for materialization");
        uses_expr(m, s->with[i].expr, where);
    }
    for (size_t i = 0; i < s->ncols; i++)
        uses_expr(m, s->cols[i].expr, where);
    uses_from(m, s->from);
    uses_expr(m, s->where, where);
    for (size_t i = 0; i < s->group_by.n; i++)
        uses_expr(m, s->group_by.v[i], where);
    uses_expr(m, s->having,
              "Variable used in HAVING clause are not supported for materialization.");
    for (size_t i = 0; i < s->norder; i++)
        uses_expr(m, s->order[i].expr, where);
    uses_expr(m, s->limit, where);
    uses_expr(m, s->offset, where);
}

/* ---- the top WHERE: the comparisons the rule allows ---- */

static bool has_placeholder(const q_expr_t *e)
{
    if (e == NULL)
        return false;
    if (e->kind == QE_PLACEHOLDER)
        return true;
    for (size_t i = 0; i < e->args.n; i++)
        if (has_placeholder(e->args.v[i]))
            return true;
    return has_placeholder(e->operand) || has_placeholder(e->else_) || e->sub != NULL;
}

static const char *op_text(q_binop_t op)
{
    static const char *const t[] = {[QB_EQ] = "=",        [QB_NE] = "!=",
                                    [QB_LT] = "<",        [QB_LE] = "<=",
                                    [QB_GT] = ">",        [QB_GE] = ">=",
                                    [QB_LIKE] = "LIKE",   [QB_NOT_LIKE] = "NOT LIKE",
                                    [QB_ILIKE] = "ILIKE", [QB_NOT_ILIKE] = "NOT ILIKE",
                                    [QB_IN] = "IN",       [QB_NOT_IN] = "NOT IN"};
    return op < sizeof(t) / sizeof(t[0]) && t[op] ? t[op] : "?";
}

/* A comparison with a variable on one side: recorded, or why not. */
static void comparison(mat_t *m, const q_expr_t *e, bool under_or)
{
    const q_expr_t *a = e->args.v[0], *b = e->args.v[1];
    mvar_t *v = var_of(m, a);
    const q_expr_t *col = b;
    if (v == NULL) {
        v = var_of(m, b);
        col = a;
    }
    if (v == NULL) { /* no variable on either side: any inside is misplaced */
        uses_expr(m, e, "Variable not used in WHERE clause");
        return;
    }
    if (under_or) {
        fail(m, "Variables in OR conditions are not supported for materialization");
        return;
    }
    if (e->op != QB_EQ && e->op != QB_GE && e->op != QB_GT && e->op != QB_LT && e->op != QB_LE) {
        fail(m, "Unsupported operator %s, supported: =, >=, >, <, <=", op_text(e->op));
        return;
    }
    if ((col->kind != QE_FIELD && col->kind != QE_CALL) || has_placeholder(col)) {
        fail(m, "Variable '%s' must be compared with a column for materialization", v->code);
        return;
    }
    /* a range is kept by day (toStartOfDay): exact for a date column only;
     * a number or a string compared by range would be answered wrong */
    if (e->op != QB_EQ && col->type != Q_T_DATE && col->type != Q_T_DATETIME) {
        fail(m,
             "Variable '%s' is compared by range with a column that is not a date: only date "
             "ranges can be materialized",
             v->code);
        return;
    }
    /* a date-time column's table keeps the day: col >= day and col < day
     * find the same rows as the query, col > day and col <= day do not
     * (the rows of the day after midnight, or at midnight) */
    bool strict_side =
        col == a ? (e->op == QB_GT || e->op == QB_LE) : (e->op == QB_LT || e->op == QB_GE);
    if (e->op != QB_EQ && col->type == Q_T_DATETIME && strict_side) {
        fail(m,
             "Variable '%s' is compared with > or <= to a date-time column: its table keeps days, "
             "so only >= and < can be materialized (or compare toDate(column))",
             v->code);
        return;
    }
    cm_buf_t text = CM_BUF_INIT;
    q_print_hogql_expr(col, &text);
    if (v->column_text && strcmp(v->column_text, cm_buf_cstr(&text)) != 0) {
        fail(m, "Variable compared against multiple columns is not supported for materialization");
        cm_buf_free(&text);
        return;
    }
    if (v->column_text == NULL) {
        v->column = col;
        v->column_text = cm_buf_detach(&text, NULL);
    }
    cm_buf_free(&text);
    v->range |= e->op != QB_EQ;
    /* the column's side: {v} < col is col > {v} */
    q_binop_t op = e->op;
    if (col == a)
        ;
    else if (op == QB_LT)
        op = QB_GT;
    else if (op == QB_LE)
        op = QB_GE;
    else if (op == QB_GT)
        op = QB_LT;
    else if (op == QB_GE)
        op = QB_LE;
    size_t used = strlen(v->ops);
    if (used + 4 >= sizeof(v->ops)) { /* every comparison must reach the read */
        fail(m, "Variable '%s' is compared too many times for materialization", v->code);
        return;
    }
    snprintf(v->ops + used, sizeof(v->ops) - used, "%s%s", used ? " " : "", op_text(op));
    if (m->ncmp == MAX_CMP) {
        fail(m, "Too many variable comparisons for materialization");
        return;
    }
    m->cmp[m->ncmp++] = e;
}

static void where_(mat_t *m, const q_expr_t *e, bool under_or)
{
    if (e == NULL || m->failed)
        return;
    if (e->kind == QE_BINARY && (e->op == QB_AND || e->op == QB_OR)) {
        where_(m, e->args.v[0], under_or || e->op == QB_OR);
        where_(m, e->args.v[1], under_or || e->op == QB_OR);
        return;
    }
    if (e->kind == QE_CALL &&
        (cm_slice_eq_cstr(e->text, "and") || cm_slice_eq_cstr(e->text, "or"))) {
        bool or = cm_slice_eq_cstr(e->text, "or");
        for (size_t i = 0; i < e->args.n; i++)
            where_(m, e->args.v[i], under_or || or);
        return;
    }
    if (e->kind == QE_BINARY && e->op >= QB_EQ && e->op <= QB_NOT_IN) {
        comparison(m, e, under_or);
        return;
    }
    uses_expr(m, e,
              under_or ? "Variables in OR conditions are not supported for materialization"
                       : "Variable not used in WHERE clause");
}

static bool has_aggregate(const q_expr_t *e)
{
    if (e == NULL)
        return false;
    if (e->kind == QE_CALL && e->over == NULL) {
        const q_fn_t *fn = q_fn_lookup(e->text);
        if (fn != NULL && fn->cls == QF_AGGREGATE)
            return true;
    }
    for (size_t i = 0; i < e->args.n; i++)
        if (has_aggregate(e->args.v[i]))
            return true;
    return has_aggregate(e->operand) || has_aggregate(e->else_);
}

/* How a read aggregates a top column again over the day buckets: 'g'
 * grouped by (no aggregate in it), 'c' a count (the sum, 0 for none), 's'
 * sum, 'n' min, 'x' max; 0 when it cannot (an aggregate inside an
 * expression). */
static char reaggregation(const q_expr_t *e)
{
    if (!has_aggregate(e))
        return 'g';
    if (e->kind != QE_CALL || e->distinct)
        return 0;
    const q_fn_t *fn = q_fn_lookup(e->text);
    switch (fn ? fn->id : -1) {
    case Q_FN_COUNT:
    case Q_FN_COUNT_IF: return 'c';
    case Q_FN_SUM:
    case Q_FN_SUM_IF: return 's';
    case Q_FN_MIN:
    case Q_FN_MIN_IF: return 'n';
    case Q_FN_MAX:
    case Q_FN_MAX_IF: return 'x';
    default: return 0;
    }
}

/* With a range variable, every aggregate of the top SELECT must be one a
 * read can aggregate again over the day buckets. */
static void reaggregatable(mat_t *m, const q_expr_t *e)
{
    if (e == NULL || m->failed)
        return;
    if (e->kind == QE_CALL) {
        const q_fn_t *fn = q_fn_lookup(e->text);
        if (fn != NULL && fn->cls == QF_AGGREGATE) {
            bool ok = !e->distinct &&
                      (fn->id == Q_FN_COUNT || fn->id == Q_FN_COUNT_IF || fn->id == Q_FN_SUM ||
                       fn->id == Q_FN_SUM_IF || fn->id == Q_FN_MIN || fn->id == Q_FN_MAX ||
                       fn->id == Q_FN_MIN_IF || fn->id == Q_FN_MAX_IF);
            if (!ok) {
                fail(m,
                     "Aggregate function '%.*s' cannot be re-aggregated for range variable "
                     "materialization",
                     (int)e->text.len, e->text.p);
                return;
            }
        }
    }
    for (size_t i = 0; i < e->args.n; i++)
        reaggregatable(m, e->args.v[i]);
}

int api_query_materialize(const api_query_t *q, api_query_mat_t *out, cm_buf_t *reason)
{
    memset(out, 0, sizeof(*out));
    mat_t m = {.q = q, .reason = reason};
    m.vars = cm_xcalloc(q->nvars + 1, sizeof(mvar_t));
    for (size_t i = 0; i < q->nvars; i++)
        m.vars[i].code = q->vars[i];
    const q_select_t *top = q->root;
    char **extra = NULL, **group = NULL;
    size_t ngroup = 0;
    if (q->nvars > 0 && top->nparts > 0)
        fail(&m, "Variables in UNION queries are not supported for materialization");
    /* a stored array could not be read back exactly on ClickHouse (its
     * strings' escapes) nor aggregated again by day (docs/endpoints.md) */
    for (size_t i = 0; !m.failed && i < top->nout; i++)
        if (top->out_types[i] == Q_T_ARRAY || top->out_types[i] == Q_T_TUPLE)
            fail(&m, "Queries answering arrays or tuples are not supported for materialization");
    if (!m.failed && q->nvars > 0) {
        /* everything but the top WHERE: no variable may be there */
        q_select_t rest = *top;
        rest.where = NULL;
        uses_select(&m, &rest, "Variable not used in WHERE clause");
        where_(&m, top->where, false);
    }
    for (size_t i = 0; !m.failed && i < q->nvars; i++) {
        if (m.vars[i].column == NULL)
            fail(&m, "Variable not used in WHERE clause");
        for (size_t c = 0; !m.failed && c < top->ncols; c++) {
            cm_slice_t alias = top->cols[c].alias;
            if (alias.len && cm_slice_eq_cstr(alias, m.vars[i].code)) {
                cm_buf_t t = CM_BUF_INIT;
                q_print_hogql_expr(top->cols[c].expr, &t);
                if (strcmp(cm_buf_cstr(&t), m.vars[i].column_text) != 0)
                    fail(&m,
                         "Variable '%s' conflicts with an existing SELECT alias for a different "
                         "expression. Rename the column or the variable.",
                         m.vars[i].code);
                cm_buf_free(&t);
            }
        }
        if (m.vars[i].range)
            for (size_t c = 0; c < top->ncols; c++)
                reaggregatable(&m, top->cols[c].expr);
    }
    bool any_range = false;
    for (size_t i = 0; i < q->nvars; i++)
        any_range |= m.vars[i].range;
    /* an aggregate-only query answers one row even when nothing matches:
     * its reads aggregate too, so that a value without rows gets it */
    out->reaggregate = q->nvars > 0 && (any_range || (top->aggregates && top->group_by.n == 0));
    out->one_row = q->nvars > 0 && top->aggregates && top->group_by.n == 0;
    out->reagg = cm_xcalloc(top->ncols + 1, 1);
    out->ncols = top->ncols;
    for (size_t c = 0; !m.failed && c < top->ncols; c++) {
        out->reagg[c] = out->reaggregate ? reaggregation(top->cols[c].expr) : 'g';
        if (top->cols[c].expr->kind == QE_STAR && any_range)
            fail(&m, "SELECT * cannot be materialized with a range variable: name the columns");
        else if (out->reagg[c] == 0 && any_range)
            fail(&m,
                 "Column %zu cannot be re-aggregated for range variable materialization: an "
                 "aggregate inside an expression",
                 c + 1);
        else if (out->reagg[c] == 0) /* equality only: read the one row as it is */
            out->reaggregate = false;
    }
    if (!out->reaggregate)
        memset(out->reagg, 'g', out->ncols);
    if (m.failed)
        goto done;
    extra = cm_xcalloc(q->nvars + 1, sizeof(char *));
    group = cm_xcalloc(q->nvars + 1, sizeof(char *));
    out->vars = cm_xcalloc(q->nvars + 1, sizeof(*out->vars));
    for (size_t i = 0; i < q->nvars; i++) {
        mvar_t *v = &m.vars[i];
        cm_buf_t col = CM_BUF_INIT, e = CM_BUF_INIT;
        cm_buf_appendf(&col, v->range ? "toStartOfDay(%s)" : "%s", v->column_text);
        cm_buf_appendf(&e, "%s AS `%s`", cm_buf_cstr(&col), v->code);
        extra[i] = cm_buf_detach(&e, NULL);
        bool seen = false; /* GROUP BY each expression once */
        for (size_t g = 0; g < ngroup; g++)
            seen |= strcmp(group[g], cm_buf_cstr(&col)) == 0;
        if (!seen)
            group[ngroup++] = cm_xstrdup(cm_buf_cstr(&col));
        cm_buf_free(&col);
        out->vars[i].code_name = cm_xstrdup(v->code);
        out->vars[i].range = v->range;
        memcpy(out->vars[i].ops, v->ops, sizeof(v->ops));
    }
    out->nvars = q->nvars;
    /* ngroup entries; the printer takes nextra of each list: pad */
    bool aggregates = top->aggregates || top->group_by.n > 0;
    q_hogql_opts_t o = {.skip = m.cmp,
                        .nskip = m.ncmp,
                        .top = top,
                        .extra = (const char *const *)extra,
                        .extra_group = aggregates && ngroup ? (const char *const *)group : NULL,
                        .nextra = q->nvars,
                        .ngroup = ngroup,
                        .drop_limit = q->nvars > 0};
    q_print_hogql_select(top, &o, &out->hogql);
    out->limit_dropped = q->nvars > 0 && (top->limit != NULL || top->offset != NULL);
    out->limit = out->limit_dropped && top->limit ? top->limit->ival : -1;
    out->offset = out->limit_dropped && top->offset ? top->offset->ival : 0;
done:
    for (size_t i = 0; i < q->nvars; i++)
        free(m.vars[i].column_text);
    free(m.vars);
    for (size_t i = 0; extra && i < q->nvars; i++)
        free(extra[i]);
    for (size_t i = 0; i < ngroup; i++)
        free(group[i]);
    free(extra);
    free(group);
    if (m.failed) {
        free(out->reagg);
        out->reagg = NULL;
    }
    return m.failed ? CM_EINVAL : 0;
}

void api_query_mat_free(api_query_mat_t *m)
{
    free(m->reagg);
    for (size_t i = 0; i < m->nvars; i++)
        free(m->vars[i].code_name);
    free(m->vars);
    cm_buf_free(&m->hogql);
    memset(m, 0, sizeof(*m));
}
