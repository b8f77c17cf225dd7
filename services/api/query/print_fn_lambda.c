/*
 * print_fn_lambda.c - lambdas, arrayJoin and ARRAY JOIN for SQLite and
 * ClickHouse (docs/endpoints.md "Arrays, tuples and lambdas"): native on
 * ClickHouse; on SQLite a lambda's body is printed inside a correlated
 * subquery over json_each(<array>), in the array's order, its parameter
 * standing for the element (_l<depth>.value), and an arrayJoin is a
 * json_each joined after the SELECT's FROM.
 */
#include <inttypes.h>
#include <string.h>

#include "query/print_fn_array.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)
#define ARG(i)  (e->args.v[(i)])

void q_plambda_param(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *l = e->alias_of;
    if (pr->ch)
        PF("_l%u_%" PRId64, (unsigned)l->depth, e->ival);
    else
        PF("_l%u.value", (unsigned)l->depth);
}

/* ---- lambdas -------------------------------------------------------------------------- */

/* The call's lambda, or NULL. */
static const q_expr_t *lambda_of(const q_expr_t *e)
{
    return e->args.n > 0 && ARG(0)->kind == QE_LAMBDA ? ARG(0) : NULL;
}

/* cond: the body is a condition, which ClickHouse wants as UInt8, not
 * Nullable(UInt8): NULL counts as false, as SQLite's WHERE has it. */
static void ch_lambda(q_printer_t *pr, const q_expr_t *l, bool cond)
{
    if (l->nchain > 1)
        P("(");
    for (size_t i = 0; i < l->nchain; i++)
        PF("%s_l%u_%zu", i ? ", " : "", (unsigned)l->depth, i);
    P(l->nchain > 1 ? ") -> " : " -> ");
    cond = cond && l->operand->nullable;
    if (cond)
        P("ifNull(");
    q_pexpr(pr, l->operand);
    if (cond)
        P(", 0)");
}

/* ClickHouse: name(lambda, arrays...) as written. */
static void ch_call(q_printer_t *pr, const char *name, const q_expr_t *e)
{
    const q_expr_t *l = lambda_of(e);
    int id = (int)e->ival;
    P(name);
    P("(");
    if (l != NULL) {
        ch_lambda(pr, l, id != Q_FN_ARRAY_MAP && id != Q_FN_ARRAY_SUM);
        P(", ");
    }
    q_pargs(pr, e, l != NULL);
    P(")");
}

/* ClickHouse's arraySort leaves ties under a lambda's key in no stated
 * order: the position breaks them, as on SQLite. */
static void ch_sort(q_printer_t *pr, const q_expr_t *e, bool reverse)
{
    const q_expr_t *l = lambda_of(e);
    if (l == NULL) {
        ch_call(pr, reverse ? "arrayReverseSort" : "arraySort", e);
        return;
    }
    if (reverse)
        P("arrayReverse(");
    PF("arraySort((_l%u_0, _i%u) -> (", (unsigned)l->depth, (unsigned)l->depth);
    q_pexpr(pr, l->operand);
    PF(", _i%u), ", (unsigned)l->depth);
    q_pexpr(pr, ARG(1));
    P(", arrayEnumerate(");
    q_pexpr(pr, ARG(1));
    P("))");
    if (reverse)
        P(")");
}

/* SQLite: the elements' alias: the lambda's (its parameter reads it) or the call's. */
static void lite_alias(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *l = lambda_of(e);
    if (l != NULL)
        PF("_l%u", (unsigned)l->depth);
    else
        PF("_a%u", (unsigned)e->depth);
}

/* SQLite: the lambda's body for the current element, or the element. */
static void lite_body(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *l = lambda_of(e);
    if (l != NULL) {
        q_pexpr(pr, l->operand);
        return;
    }
    lite_alias(pr, e);
    P(".value");
}

/* SQLite: FROM json_each(<the array>) AS <alias> */
static void lite_each(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *arr = ARG(lambda_of(e) != NULL ? 1 : 0);
    P(" FROM json_each(");
    q_pexpr(pr, arr);
    P(") AS ");
    lite_alias(pr, e);
}

/* SQLite: the elements that pass (where: a condition on the element, may
 * be NULL), as a new array, in the order given (NULL: the array's). */
static void lite_collect(q_printer_t *pr, const q_expr_t *e, bool map, bool where,
                         const char *order, q_type_t item)
{
    P("(SELECT json_group_array(");
    q_plite_v(pr, item);
    P(") FROM (SELECT ");
    if (map)
        lite_body(pr, e);
    else {
        lite_alias(pr, e);
        P(".value");
    }
    P(" AS v");
    lite_each(pr, e);
    if (where) {
        P(" WHERE ");
        lite_body(pr, e);
    }
    P(" ORDER BY ");
    if (order != NULL) {
        P(order);
        P(", ");
    }
    lite_alias(pr, e);
    P(".key))");
}

static void lite_sort(q_printer_t *pr, const q_expr_t *e, bool reverse)
{
    const q_expr_t *arr = ARG(lambda_of(e) != NULL ? 1 : 0);
    P("(SELECT json_group_array(");
    q_plite_v(pr, arr->elem);
    P(") FROM (SELECT ");
    lite_alias(pr, e);
    P(".value AS v");
    lite_each(pr, e);
    P(" ORDER BY ");
    lite_body(pr, e);
    P(reverse ? " DESC NULLS LAST, " : " ASC NULLS LAST, ");
    lite_alias(pr, e);
    P(reverse ? ".key DESC))" : ".key))");
}

/* arrayMap and the other functions that may take a lambda. */
void q_plambda_call(q_printer_t *pr, const q_expr_t *e, int id)
{
    static const char *const names[] = {
        [Q_FN_ARRAY_MAP - Q_FN_ARRAY_MAP] = "arrayMap",
        [Q_FN_ARRAY_FILTER - Q_FN_ARRAY_MAP] = "arrayFilter",
        [Q_FN_ARRAY_EXISTS - Q_FN_ARRAY_MAP] = "arrayExists",
        [Q_FN_ARRAY_ALL - Q_FN_ARRAY_MAP] = "arrayAll",
        [Q_FN_ARRAY_COUNT - Q_FN_ARRAY_MAP] = "arrayCount",
        [Q_FN_ARRAY_SUM - Q_FN_ARRAY_MAP] = "arraySum",
        [Q_FN_ARRAY_SORT - Q_FN_ARRAY_MAP] = "arraySort",
        [Q_FN_ARRAY_REVERSE_SORT - Q_FN_ARRAY_MAP] = "arrayReverseSort",
        [Q_FN_ARRAY_FIRST - Q_FN_ARRAY_MAP] = "arrayFirst",
    };
    const q_expr_t *l = lambda_of(e);
    if (pr->ch) {
        if (id == Q_FN_ARRAY_SORT || id == Q_FN_ARRAY_REVERSE_SORT) {
            if (l != NULL && l->nchain > 1) {
                q_pfail(pr, "arraySort with a lambda takes one array");
                return;
            }
            ch_sort(pr, e, id == Q_FN_ARRAY_REVERSE_SORT);
            return;
        }
        ch_call(pr, names[id - Q_FN_ARRAY_MAP], e);
        return;
    }
    if (l != NULL && l->nchain > 1) {
        q_pfail(pr, "A lambda over several arrays is not supported on the SQLite store");
        return;
    }
    const q_expr_t *arr = ARG(l != NULL ? 1 : 0);
    switch (id) {
    case Q_FN_ARRAY_MAP: lite_collect(pr, e, true, false, NULL, l->type); return;
    case Q_FN_ARRAY_FILTER: lite_collect(pr, e, false, true, NULL, arr->elem); return;
    case Q_FN_ARRAY_EXISTS:
    case Q_FN_ARRAY_ALL:
    case Q_FN_ARRAY_COUNT:
        P(id == Q_FN_ARRAY_COUNT    ? "(SELECT count(*)"
          : id == Q_FN_ARRAY_EXISTS ? "(EXISTS (SELECT 1"
                                    : "(NOT EXISTS (SELECT 1");
        lite_each(pr, e);
        P(id == Q_FN_ARRAY_ALL ? " WHERE NOT coalesce(" : " WHERE coalesce(");
        lite_body(pr, e);
        P(" != 0, 0))");
        if (id != Q_FN_ARRAY_COUNT)
            P(")");
        return;
    case Q_FN_ARRAY_SUM:
        P("(SELECT coalesce(sum(");
        lite_body(pr, e);
        P(e->type == Q_T_FLOAT ? "), 0.0)" : "), 0)");
        lite_each(pr, e);
        P(")");
        return;
    case Q_FN_ARRAY_SORT:
    case Q_FN_ARRAY_REVERSE_SORT: lite_sort(pr, e, id == Q_FN_ARRAY_REVERSE_SORT); return;
    case Q_FN_ARRAY_FIRST:
        P("coalesce((SELECT ");
        lite_alias(pr, e);
        P(".value");
        lite_each(pr, e);
        P(" WHERE ");
        lite_body(pr, e);
        P(" ORDER BY ");
        lite_alias(pr, e);
        PF(".key LIMIT 1), %s)", arr->elem_nullable ? "NULL" : q_plite_default(e->type));
        return;
    }
}

/* ---- arrayJoin ---------------------------------------------------------------------- */

#define MAX_ARRAY_JOINS 16

typedef struct {
    const q_expr_t *v[MAX_ARRAY_JOINS];
    size_t n;
    bool over;
} joins_t;

/* The arrayJoin calls of one SELECT's expressions (not of its subqueries),
 * each once (an alias reaches the same node again). */
static void find_joins(const q_expr_t *e, joins_t *j)
{
    if (e == NULL || e->kind == QE_SUBQUERY)
        return;
    if (e->kind == QE_FIELD) {
        if (e->fkind == QF_ALIAS)
            find_joins(e->alias_of, j);
        return;
    }
    if (e->kind == QE_CALL && e->ival == Q_FN_ARRAY_JOIN && !e->negated) {
        for (size_t i = 0; i < j->n; i++)
            if (j->v[i] == e)
                return;
        if (j->n == MAX_ARRAY_JOINS) {
            j->over = true;
            return;
        }
        j->v[j->n++] = e;
    }
    for (size_t i = 0; i < e->args.n; i++)
        find_joins(e->args.v[i], j);
    find_joins(e->operand, j);
    find_joins(e->else_, j);
}

bool q_has_array_join(const q_expr_t *e)
{
    joins_t j = {.n = 0};
    find_joins(e, &j);
    return j.n > 0 || j.over;
}

void q_parray_joins(q_printer_t *pr, const q_select_t *s)
{
    if (pr->ch)
        return; /* arrayJoin is ClickHouse's own */
    joins_t j = {.n = 0};
    for (size_t i = 0; i < s->ncols; i++)
        find_joins(s->cols[i].expr, &j);
    find_joins(s->where, &j);
    for (size_t i = 0; i < s->group_by.n; i++)
        find_joins(s->group_by.v[i], &j);
    find_joins(s->having, &j);
    for (size_t i = 0; i < s->norder; i++)
        find_joins(s->order[i].expr, &j);
    if (j.over) {
        q_pfail(pr, "At most %d arrayJoin calls in one SELECT", MAX_ARRAY_JOINS);
        return;
    }
    /* each a row per element of its array, the rows before it repeated (an
     * inner join: an empty array drops the row, as ClickHouse's) */
    for (size_t i = 0; i < j.n; i++) {
        P(i == 0 && s->from == NULL ? " FROM json_each(" : " CROSS JOIN json_each(");
        q_pexpr(pr, j.v[i]->args.v[0]);
        PF(") AS _j%zu", j.v[i]->value);
    }
}

void q_parray_join_clause(q_printer_t *pr, const q_from_t *f)
{
    const q_expr_t *el = f->element;
    bool left = f->join == QJ_LEFT;
    if (pr->ch) {
        P(f->zipped ? ", " : left ? " LEFT ARRAY JOIN " : " ARRAY JOIN ");
        q_pexpr(pr, f->on);
        PF(" AS _aj%zu", el->value);
        return;
    }
    if (q_phas_aggregate(f->on)) {
        q_pfail(pr, "ARRAY JOIN cannot read an aggregate");
        return;
    }
    if (f->zipped) {
        /* the element at the first array's position; arrays of other
         * lengths fail the query, as ClickHouse's "Sizes of ARRAY-JOIN-ed
         * arrays do not match" (cm_same_size, libcommon's db_sqlite_ch.c) */
        const q_from_t *first = f->left;
        while (first->zipped)
            first = first->left;
        P(left ? " LEFT JOIN json_each(" : " JOIN json_each(");
        q_pexpr(pr, f->on);
        PF(") AS _j%zu ON _j%zu.key = _j%zu.key AND cm_same_size(json_array_length(", el->value,
           el->value, first->element->value);
        q_pexpr(pr, first->on);
        P("), json_array_length(");
        q_pexpr(pr, f->on);
        P("))");
        return;
    }
    P(left ? " LEFT JOIN json_each(" : " CROSS JOIN json_each(");
    q_pexpr(pr, f->on);
    PF(") AS _j%zu%s", el->value, left ? " ON 1" : "");
}
