/*
 * parse_s.c - the grammar's actions for the syntax PostHog's HogQL adds
 * to plain SQL (see query_int.h): set operators and parenthesized set
 * parts, named windows and frames, numbers(n) in FROM, the regex and ??
 * operators, IN COHORT, trim(LEADING x FROM y), and operators written as
 * calls, the form PostHog prints HogQL in (equals(a, b), and(a, b, c)).
 *
 * Spellings are lowered to the nodes the operators build, so they print
 * and answer exactly as the operators do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_int.h"

#define SL(s) (int)((s).len > 40 ? 40 : (s).len), (s).p

/* ---- set operators ----------------------------------------------------------------- */

q_select_t *q_paren(q_parse_t *p, q_select_t *s)
{
    (void)p;
    if (s->nparts > 0)
        s->paren = true; /* (a UNION b) INTERSECT c: kept a part of its own */
    return s;
}

q_select_t *q_setop(q_parse_t *p, q_select_t *a, int op, q_select_t *b)
{
    a = q_union(p, a, b); /* a new set unless a is one (not in parentheses) */
    size_t n = a->nparts; /* ops[n - 1] is b's */
    /* capacity 4, then doubling, as parse.c's arrays: full at 4, 8, 16, ... */
    if (n - 1 == 1 || (n - 1 >= 4 && ((n - 1) & (n - 2)) == 0)) {
        size_t cap = n - 1 < 4 ? 4 : (n - 1) * 2;
        q_setop_t *ops = cm_arena_alloc(p->arena, cap * sizeof(*ops));
        if (a->ops != NULL)
            memcpy(ops, a->ops, (n - 1) * sizeof(*ops));
        a->ops = ops;
    }
    a->ops[n - 1] = (q_setop_t)op;
    return a;
}

/* (SELECT ...) UNION ALL (SELECT ...) ORDER BY x LIMIT n: the ORDER BY and
 * LIMIT are the whole set's, which is SELECT * FROM (the set) ORDER BY x
 * LIMIT n. */
q_select_t *q_set_tail(q_parse_t *p, q_select_t *set, q_orders_t *order, q_limits_t *lim)
{
    if (order->n == 0 && lim->n == NULL && lim->offset == NULL && lim->by_n == NULL)
        return set;
    q_cols_t cols = {0};
    q_column_t star = {.expr = q_star(p, NULL)};
    q_add_col(p, &cols, &star);
    q_ctes_t with = {0};
    q_list_t group = {0};
    return q_select(p, &with, false, &cols, q_from_sub(p, set, (cm_slice_t){0}), NULL, &group, NULL,
                    order, lim);
}

/* ---- windows ------------------------------------------------------------------------- */

void q_add_wdef(q_parse_t *p, q_wdefs_t *l, cm_slice_t name, q_window_t *w)
{
    q_wdef_t *v = cm_arena_alloc(p->arena, (l->n + 1) * sizeof(*v));
    if (l->n > 0)
        memcpy(v, l->v, l->n * sizeof(*v));
    v[l->n++] = (q_wdef_t){name, w};
    l->v = v;
}

void q_select_windows(q_parse_t *p, q_select_t *s, q_wdefs_t *w)
{
    for (size_t i = 0; i < w->n; i++)
        for (size_t j = 0; j < i; j++)
            if (cm_slice_eq(w->v[i].name, w->v[j].name))
                q_fail(p, "Window '%.*s' is defined twice", SL(w->v[i].name));
    s->windows = w->v;
    s->nwindows = w->n;
}

q_window_t *q_window_ref(q_parse_t *p, cm_slice_t name)
{
    q_window_t *w = cm_arena_alloc(p->arena, sizeof(*w));
    w->ref = name;
    return w;
}

q_bound_t q_bound(q_parse_t *p, cm_slice_t n, int kind)
{
    char buf[24];
    q_bound_t b = {.kind = kind};
    if (n.len >= sizeof(buf) || memchr(n.p, 'x', n.len) || memchr(n.p, 'X', n.len)) {
        q_fail(p, "a window frame takes a whole number of rows");
        return b;
    }
    memcpy(buf, n.p, n.len);
    buf[n.len] = '\0';
    errno = 0;
    b.n = strtoll(buf, NULL, 10);
    if (errno == ERANGE)
        q_fail(p, "the number %s is out of range", buf);
    return b;
}

/* ---- FROM numbers(n) ------------------------------------------------------------------- */

q_from_t *q_table_fn(q_parse_t *p, cm_slice_t name, q_list_t *args, cm_slice_t alias)
{
    q_from_t *f = q_table(p, name, alias);
    f->kind = QJ_NUMBERS;
    f->fn_args = *args;
    if (!cm_slice_eq_cstr(name, "numbers"))
        q_fail(p, "Unknown table function '%.*s'. Table functions: numbers", SL(name));
    return f;
}

/* ---- operators ---------------------------------------------------------------------------- */

/* Cohorts live in the api's metadata store, which the compiler (pure, no
 * store) cannot read: refused rather than answered without them. */
q_expr_t *q_cohort(q_parse_t *p, q_expr_t *a, q_expr_t *b, bool negated)
{
    (void)negated;
    q_fail(p, "cohorts are not available in HogQL endpoints yet (IN COHORT, inCohort)");
    return q_binary(p, QB_IN, a, b);
}

static q_list_t two(q_parse_t *p, q_expr_t *a, q_expr_t *b)
{
    q_list_t l = {0};
    q_push(p, &l, a);
    q_push(p, &l, b);
    return l;
}

/* As PostHog prints them: a =~ b is match(a, b); !~ is not(match(a, b));
 * the case-insensitive ones put (?i) in front of the pattern. */
q_expr_t *q_regex(q_parse_t *p, q_expr_t *a, q_expr_t *b, bool icase, bool negated)
{
    if (icase && b != NULL && b->kind == QE_STRING) { /* one constant: the pattern (?i)b */
        char *s = cm_arena_alloc(p->arena, b->text.len + 4);
        memcpy(s, "(?i)", 4);
        memcpy(s + 4, b->text.p, b->text.len);
        b->text = (cm_slice_t){s, b->text.len + 4};
    } else if (icase) {
        q_expr_t *flag = q_new(p, QE_STRING);
        flag->text = CM_SLICE_LIT("(?i)");
        q_list_t cat = two(p, flag, b);
        b = q_call(p, CM_SLICE_LIT("concat"), NULL, &cat, false);
    }
    q_list_t args = two(p, a, b);
    q_expr_t *m = q_call(p, CM_SLICE_LIT("match"), NULL, &args, false);
    /* two-valued as = (print_compare.c): the operator's NULL rule, not the function's */
    if (m != NULL)
        m->op_form = true;
    return negated ? q_unary(p, QE_NOT, m) : m;
}

q_expr_t *q_nullish(q_parse_t *p, q_expr_t *a, q_expr_t *b)
{
    q_list_t args = two(p, a, b);
    return q_call(p, CM_SLICE_LIT("ifNull"), NULL, &args, false);
}

/* trim(LEADING x FROM s) is trimLeft(s, x), TRAILING trimRight, BOTH trim. */
q_expr_t *q_trim(q_parse_t *p, cm_slice_t name, int side, q_expr_t *chars, q_expr_t *s)
{
    static const char *const fns[] = {"", "trimLeft", "trimRight", "trim"};
    if (!cm_slice_eq_nocase(name, "trim"))
        q_fail(p, "LEADING, TRAILING and BOTH belong to trim(... FROM ...) only");
    q_list_t args = two(p, s, chars);
    return q_call(p, cm_slice_from_cstr(fns[side]), NULL, &args, false);
}

/* ---- operators written as calls ------------------------------------------------------------ */

static const struct {
    const char *name;
    int kind; /* QE_BINARY, QE_NOT, QE_NEG */
    q_binop_t op;
} call_ops[] = {
    {"equals", QE_BINARY, QB_EQ},
    {"notEquals", QE_BINARY, QB_NE},
    {"greater", QE_BINARY, QB_GT},
    {"greaterOrEquals", QE_BINARY, QB_GE},
    {"less", QE_BINARY, QB_LT},
    {"lessOrEquals", QE_BINARY, QB_LE},
    {"plus", QE_BINARY, QB_PLUS},
    {"minus", QE_BINARY, QB_MINUS},
    {"multiply", QE_BINARY, QB_MUL},
    {"divide", QE_BINARY, QB_DIV},
    {"modulo", QE_BINARY, QB_MOD},
    {"like", QE_BINARY, QB_LIKE},
    {"ilike", QE_BINARY, QB_ILIKE},
    {"notLike", QE_BINARY, QB_NOT_LIKE},
    {"notILike", QE_BINARY, QB_NOT_ILIKE},
    {"in", QE_BINARY, QB_IN},
    {"notIn", QE_BINARY, QB_NOT_IN},
    {"and", QE_BINARY, QB_AND},
    {"or", QE_BINARY, QB_OR},
    {"not", QE_NOT, QB_AND},
    {"negate", QE_NEG, QB_AND},
};

q_expr_t *q_lower_call(q_parse_t *p, cm_slice_t name, q_list_t *args)
{
    size_t n = args != NULL ? args->n : 0;
    for (size_t i = 0; i < sizeof(call_ops) / sizeof(call_ops[0]); i++) {
        if (!cm_slice_eq_cstr(name, call_ops[i].name))
            continue; /* names are case-sensitive, as PostHog's */
        bool variadic =
            call_ops[i].kind == QE_BINARY && (call_ops[i].op == QB_AND || call_ops[i].op == QB_OR);
        unsigned want = call_ops[i].kind == QE_BINARY ? 2 : 1;
        if (variadic ? n < 2 : n != want) {
            if (variadic)
                q_fail(p, "Function '%s' expects at least 2 arguments, found %zu", call_ops[i].name,
                       n);
            else
                q_fail(p, "Function '%s' expects %u argument%s, found %zu", call_ops[i].name, want,
                       want == 1 ? "" : "s", n);
            return q_new(p, QE_NULL);
        }
        q_expr_t *e;
        if (call_ops[i].kind == QE_NOT) {
            e = q_unary(p, QE_NOT, args->v[0]);
        } else if (call_ops[i].kind == QE_NEG) {
            e = q_negate(p, args->v[0]);
            if (e->kind != QE_NEG)
                return e; /* negate(5) is the number -5, named so */
        } else {
            e = q_binary(p, call_ops[i].op, args->v[0], args->v[1]);
            for (size_t k = 2; k < n; k++) { /* and(a, b, c) is (a AND b) AND c */
                e->spelled = call_ops[i].name;
                e = q_binary(p, call_ops[i].op, e, args->v[k]);
            }
        }
        e->spelled = call_ops[i].name;
        return e;
    }
    return NULL;
}
