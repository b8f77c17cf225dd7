/*
 * print_compare.c - comparisons, LIKE, IN, BETWEEN, || (and AND, OR) printed as HogQL
 * answers them: two-valued. PostHog prints every comparison that has a side
 * which may be NULL so that it never yields NULL, and runs ClickHouse with
 * transform_null_in=1; a query written for PostHog relies on it (WHERE
 * properties.$browser != 'Chrome' keeps the events without a browser):
 *
 *   =, LIKE, ILIKE, =~      NULL against NULL is 1, NULL against a value 0
 *   !=, NOT LIKE, NOT ILIKE NULL against a value is 1, NULL against NULL 0 (!~ too)
 *   <, <=, >, >=            0 when a side is NULL
 *   [NOT] BETWEEN           a >= b AND a <= c (a < b OR a > c), then NULL is 0
 *   IN, NOT IN              a NULL matches a NULL of the list; NOT IN is its negation
 *   ||                      a NULL side is '' (as concat)
 *   AND, OR                 three-valued (NULL AND 0 is 0), which 18.16 is not
 *
 * ClickHouse 18.16 has no transform_null_in and SQLite is three-valued, so
 * both stores get the rules spelled out (ifNull, IS NULL). A side that
 * cannot be NULL (the resolver's nullable flag, a placeholder's value)
 * prints as before: event = 'x' keeps its plain form, and the store its
 * index.
 */
#include <string.h>

#include "query/print_int.h"

#define P(s) cm_buf_append(pr->out, (s), strlen(s))

/* What a NULL side makes of a comparison. */
typedef enum {
    R_EQ,    /* both NULL: 1, one: 0 */
    R_NE,    /* both NULL: 0, one: 1 */
    R_FALSE, /* 0 */
} null_rule_t;

/* NULL as written, an expression of NULL's own type (a subquery's NULL
 * column: ClickHouse's Nullable(Nothing), which 18.16 cannot put left of
 * IN), or a placeholder whose value is NULL. */
static bool null_const(q_printer_t *pr, const q_expr_t *e)
{
    if (e->kind == QE_NULL)
        return true;
    if (e->kind != QE_PLACEHOLDER)
        return e->type == Q_T_NULL;
    const api_query_value_t *v = q_pvalue(pr, e);
    return v != NULL && v->kind == API_QV_NULL;
}

static bool value_may_be_null(const api_query_value_t *v)
{
    if (v->kind == API_QV_NULL)
        return true;
    if (v->kind == API_QV_LIST)
        for (size_t i = 0; i < v->nitems; i++)
            if (v->items[i].kind == API_QV_NULL)
                return true;
    return false;
}

static bool may_be_null(q_printer_t *pr, const q_expr_t *e)
{
    if (e->kind == QE_PLACEHOLDER) { /* its value is known: NULL or not */
        const api_query_value_t *v = q_pvalue(pr, e);
        return v != NULL && value_may_be_null(v);
    }
    return e->nullable || e->type == Q_T_NULL;
}

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static int num(const char *s, size_t n)
{
    int v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* 'YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss', a real day and time: both stores
 * read it alike and never as NULL. */
static bool plain_datetime(const char *s, size_t n)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if ((n != 10 && n != 19) || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
        !digits(s + 8, 2))
        return false;
    int y = num(s, 4), m = num(s + 5, 2), d = num(s + 8, 2);
    if (y < 1970 || y > 2105 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return false;
    if (m == 2 && d == 29 && (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0)))
        return false;
    if (n == 10)
        return true;
    return s[10] == ' ' && digits(s + 11, 2) && s[13] == ':' && digits(s + 14, 2) && s[16] == ':' &&
           digits(s + 17, 2) && num(s + 11, 2) < 24 && num(s + 14, 2) < 60 && num(s + 17, 2) < 60;
}

/* A JSON number (what SQLite's side reads as one; toFloat64OrNull too). */
static bool plain_number(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-')
        i++;
    size_t d = i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i == d || (s[d] == '0' && i - d > 1))
        return false;
    if (i < n && s[i] == '.') {
        d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return false;
    }
    return i == n && n < 24;
}

/* q_pcompared reads a string as the other side's type: NULL when it is not
 * one, unless it is a constant both stores read. */
static bool converts(q_printer_t *pr, const q_expr_t *e, q_type_t other)
{
    bool to_date = other == Q_T_DATETIME || other == Q_T_DATE;
    bool to_num = other == Q_T_INT || other == Q_T_FLOAT;
    if (q_ptype_of(pr, e) != Q_T_STRING || (!to_date && !to_num))
        return false;
    const char *s = NULL;
    size_t n = 0;
    if (e->kind == QE_STRING) {
        s = e->text.p;
        n = e->text.len;
    } else if (e->kind == QE_PLACEHOLDER) {
        const api_query_value_t *v = q_pvalue(pr, e);
        if (v == NULL || v->kind != API_QV_STRING)
            return true;
        s = v->s;
        n = v->len;
    } else {
        return true;
    }
    return to_date ? !plain_datetime(s, n) : !plain_number(s, n);
}

/* A side as the operator sees it: converted (comparisons) or as written (LIKE). */
static void pside(q_printer_t *pr, const q_expr_t *e, q_type_t other, bool convert)
{
    if (convert)
        q_pcompared(pr, e, other);
    else
        q_pexpr(pr, e);
}

/* pop(pr, e), the operator on sides a and b, so that it never yields NULL
 * under rule; as it is when neither side can be NULL. */
static void two_valued(q_printer_t *pr, const q_expr_t *e, const q_expr_t *a, const q_expr_t *b,
                       null_rule_t rule, bool convert, void (*pop)(q_printer_t *, const q_expr_t *))
{
    q_type_t ta = q_ptype_of(pr, a), tb = q_ptype_of(pr, b);
    if (pr->in_join_on) { /* see q_pcompare */
        pop(pr, e);
        return;
    }
    bool na = may_be_null(pr, a) || (convert && converts(pr, a, tb));
    bool nb = may_be_null(pr, b) || (convert && converts(pr, b, ta));
    if (pr->failed)
        return;
    if (!na && !nb) {
        pop(pr, e);
        return;
    }
    bool ca = null_const(pr, a), cb = null_const(pr, b);
    if (ca && cb) {
        P(rule == R_EQ ? "1" : "0");
        return;
    }
    if (ca || cb) { /* one side is NULL itself: the answer is the other's nullness */
        const q_expr_t *x = ca ? b : a;
        if (rule == R_FALSE) {
            P("0");
            return;
        }
        P("(");
        pside(pr, x, ca ? ta : tb, convert);
        P(rule == R_EQ ? " IS NULL)" : " IS NOT NULL)");
        return;
    }
    P("ifNull(");
    pop(pr, e);
    P(", ");
    if (na && nb && rule != R_FALSE) {
        const char *is = rule == R_EQ ? " IS NULL" : " IS NOT NULL";
        P("(");
        pside(pr, a, tb, convert);
        P(is);
        P(rule == R_EQ ? " AND " : " OR ");
        pside(pr, b, ta, convert);
        P(is);
        P(")");
    } else {
        P(rule == R_NE ? "1" : "0");
    }
    P(")");
}

/* ---- the operators themselves, as the store runs them ---------------------------------- */

static void pcmp_op(q_printer_t *pr, const q_expr_t *e)
{
    static const char *const ops[] = {[QB_EQ] = " = ",  [QB_NE] = " != ", [QB_LT] = " < ",
                                      [QB_LE] = " <= ", [QB_GT] = " > ",  [QB_GE] = " >= "};
    const q_expr_t *a = e->args.v[0], *b = e->args.v[1];
    P("(");
    q_pcompared(pr, a, q_ptype_of(pr, b));
    P(ops[e->op]);
    q_pcompared(pr, b, q_ptype_of(pr, a));
    P(")");
}

static void plike_op(q_printer_t *pr, const q_expr_t *e)
{
    bool ci = e->op == QB_ILIKE || e->op == QB_NOT_ILIKE;
    bool neg = e->op == QB_NOT_LIKE || e->op == QB_NOT_ILIKE;
    P("(");
    for (int i = 0; i < 2; i++) {
        if (i)
            P(neg ? " NOT LIKE " : " LIKE ");
        if (ci)
            P("lower(");
        q_pexpr(pr, e->args.v[i]);
        if (ci)
            P(")");
    }
    if (!pr->ch)
        P(" ESCAPE '\\'"); /* ClickHouse's escape character */
    P(")");
}

/* ---- IN ------------------------------------------------------------------------------- */

typedef struct {
    const q_expr_t *const *items; /* a tuple's, an array's, or the one expression */
    size_t n;
    const api_query_value_t *vals; /* a placeholder's values */
    size_t nvals;
    bool has_null;      /* a NULL item: a NULL a matches */
    bool nullable_item; /* an item that may be NULL when run */
} in_list_t;

/* The items that are not NULL, comma-separated. */
static size_t pin_items(q_printer_t *pr, const in_list_t *l, q_type_t at)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (null_const(pr, l->items[i]))
            continue;
        if (k++)
            P(", ");
        q_pcompared(pr, l->items[i], at);
    }
    for (size_t i = 0; i < l->nvals; i++) {
        if (l->vals[i].kind == API_QV_NULL)
            continue;
        if (k++)
            P(", ");
        q_pvalue_scalar(pr, &l->vals[i]);
    }
    return k;
}

static size_t count_kept(q_printer_t *pr, const in_list_t *l)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += !null_const(pr, l->items[i]);
    for (size_t i = 0; i < l->nvals; i++)
        k += l->vals[i].kind != API_QV_NULL;
    return k;
}

/* a IN list as transform_null_in=1 answers it: never NULL, a NULL a
 * matching a NULL item. The plain form when nothing can be NULL. */
static void pin(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *a = e->args.v[0], *list = e->args.v[1];
    bool neg = e->op == QB_NOT_IN;
    in_list_t l = {0};
    const q_select_t *sub = NULL;
    if (list->kind == QE_PLACEHOLDER) {
        const api_query_value_t *v = q_pvalue(pr, list);
        if (v == NULL)
            return;
        if (v->kind == API_QV_LIST && v->nitems == 0) { /* ClickHouse cannot write () */
            P(neg ? "1" : "0");
            return;
        }
        l.vals = v->kind == API_QV_LIST ? v->items : v;
        l.nvals = v->kind == API_QV_LIST ? v->nitems : 1;
    } else if (list->kind == QE_TUPLE || list->kind == QE_ARRAY) {
        if (list->args.n == 0) {
            q_pfail(pr, "IN needs at least one value");
            return;
        }
        l.items = (const q_expr_t *const *)list->args.v;
        l.n = list->args.n;
    } else if (list->kind == QE_SUBQUERY) {
        sub = list->sub;
    } else {
        l.items = (const q_expr_t *const *)&e->args.v[1];
        l.n = 1;
    }
    q_type_t at = a->type;
    for (size_t i = 0; i < l.n; i++) {
        if (null_const(pr, l.items[i]))
            l.has_null = true;
        else if (may_be_null(pr, l.items[i]) || converts(pr, l.items[i], at))
            l.nullable_item = true;
    }
    for (size_t i = 0; i < l.nvals; i++)
        l.has_null = l.has_null || l.vals[i].kind == API_QV_NULL;
    bool sub_null = sub != NULL && sub->nout == 1 && sub->out_nullable[0];
    bool anull = may_be_null(pr, a) && !pr->in_join_on;
    bool aconst = null_const(pr, a) && !pr->in_join_on;
    if (pr->in_join_on) { /* see q_pcompare */
        l.nullable_item = l.has_null = false;
        sub_null = false;
    }
    if (pr->failed)
        return;
    /* the IN itself may answer NULL: a NULL a, or a NULL among what it is compared with */
    bool wrap = anull || l.nullable_item || sub_null;
    /* a NULL a matches: a NULL item, or one that may turn out NULL */
    bool null_term = anull && (l.has_null || l.nullable_item || sub_null);
    size_t kept = sub != NULL ? 1 : count_kept(pr, &l);
    if (!wrap && !l.has_null) { /* nothing can be NULL: the plain form */
        P("(");
        q_pexpr(pr, a);
        P(neg ? " NOT IN " : " IN ");
        if (sub != NULL) {
            q_pexpr(pr, list);
        } else {
            P("(");
            pin_items(pr, &l, at);
            P(")");
        }
        P(")");
        return;
    }
    P(neg ? "(NOT (" : "(");
    bool any = false;
    if (kept > 0 && !aconst) { /* NULL IN (...) is only its NULL term */
        P(wrap ? "ifNull((" : "(");
        q_pexpr(pr, a);
        P(" IN ");
        if (sub != NULL) {
            q_pexpr(pr, list);
        } else {
            P("(");
            pin_items(pr, &l, at);
            P(")");
        }
        P(wrap ? "), 0)" : ")");
        any = true;
    }
    if (null_term) {
        if (any)
            P(" OR ");
        P("(");
        if (aconst)
            P("1");
        else
            q_pexpr(pr, a);
        P(aconst ? "" : " IS NULL");
        if (!l.has_null) {
            P(" AND (");
            size_t k = 0;
            for (size_t i = 0; i < l.n; i++) {
                if (k++)
                    P(" OR ");
                q_pcompared(pr, l.items[i], at);
                P(" IS NULL");
            }
            if (sub != NULL) { /* does the subquery answer a NULL? */
                P("1 IN (SELECT (");
                q_pcolname(pr, sub, 0);
                P(" IS NULL) FROM ");
                q_pexpr(pr, list);
                P(")");
            }
            P(")");
        }
        P(")");
        any = true;
    }
    if (!any) /* only NULLs, and a cannot be NULL */
        P("0");
    P(neg ? "))" : ")");
}

/* ---- || --------------------------------------------------------------------------------- */

/* HogQL's a || b is concat(a, b): a NULL side is '', a number its text. */
static void pconcat_side(q_printer_t *pr, const q_expr_t *x)
{
    if (null_const(pr, x)) {
        P("''");
        return;
    }
    bool null = may_be_null(pr, x);
    if (pr->failed)
        return;
    if (q_ptype_of(pr, x) == Q_T_STRING && !null) {
        q_pexpr(pr, x);
        return;
    }
    if (pr->ch) {
        P(null ? "ifNull(toString(" : "toString(");
        q_pexpr(pr, x);
        P(null ? "), '')" : ")");
        return;
    }
    P(null ? "coalesce(CAST(" : "CAST(");
    q_pexpr(pr, x);
    P(null ? " AS TEXT), '')" : " AS TEXT)");
}

/* ---- AND, OR ---------------------------------------------------------------------------- */

/* One operand of AND/OR on ClickHouse 18.16, as a number: false 0, NULL 1, true 2. */
static void plogic_side(q_printer_t *pr, const q_expr_t *x, bool null)
{
    P(null ? "ifNull((" : "((");
    q_pexpr(pr, x);
    P(null ? " != 0) * 2, 1)" : " != 0) * 2)");
}

/* AND and OR are SQL's three-valued ones (NULL AND 0 is 0, NULL OR 0 is
 * NULL), as SQLite and current ClickHouse answer. ClickHouse 18.16 answers
 * NULL AND 0 with NULL and NULL OR 0 with 0, so when an operand may be NULL
 * it gets them as the least (AND) or greatest (OR) of the operands counted
 * false 0, NULL 1, true 2, read back through [0, NULL, 1]; each operand is
 * printed once, so a chain grows linearly. */
static void plogic(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *a = e->args.v[0], *b = e->args.v[1];
    bool and = e->op == QB_AND;
    bool na = may_be_null(pr, a), nb = may_be_null(pr, b);
    if (pr->failed)
        return;
    if (!pr->ch || q_ch_modern(pr) || (!na && !nb) || pr->in_join_on) {
        P("(");
        q_pexpr(pr, a);
        P(and? " AND " : " OR ");
        q_pexpr(pr, b);
        P(")");
        return;
    }
    P(and? "[0, NULL, 1][least(" : "[0, NULL, 1][greatest(");
    plogic_side(pr, a, na);
    P(", ");
    plogic_side(pr, b, nb);
    P(") + 1]");
}

/* ---- operators lowered to calls ------------------------------------------------------------- */

/* The pattern as written: a =~* b is lowered to match(a, concat('(?i)', b)),
 * whose second argument is never NULL while b may be. */
static const q_expr_t *pattern_as_written(const q_expr_t *b)
{
    if (b->kind == QE_CALL && b->args.n == 2 && cm_slice_eq_cstr(b->text, "concat") &&
        b->args.v[0]->kind == QE_STRING && cm_slice_eq_cstr(b->args.v[0]->text, "(?i)"))
        return b->args.v[1];
    return b;
}

void q_pcall_op(q_printer_t *pr, const q_expr_t *e)
{
    if (e->args.n != 2) {
        q_pcall(pr, e);
        return;
    }
    /* NOT of the two-valued match is !~'s rule already (one NULL side 1, both 0) */
    two_valued(pr, e, e->args.v[0], pattern_as_written(e->args.v[1]), R_EQ, false, q_pcall);
}

/* ---- entry points -------------------------------------------------------------------------- */

/* In a JOIN's ON, HogQL prints comparisons plain (NULL matches nothing
 * there, as SQL's join does), and ClickHouse 18.16 takes only plain
 * equalities in ON. */
/* A List variable beside anything but IN: SQLite refuses it where it is
 * printed (print.c), ClickHouse would take it as an array and fail at run
 * time; refused on both, in the same words. */
static bool list_side(q_printer_t *pr, const q_expr_t *x)
{
    if (x->kind != QE_PLACEHOLDER)
        return false;
    const api_query_value_t *v = q_pvalue(pr, x);
    if (v == NULL || v->kind != API_QV_LIST)
        return v == NULL;
    q_pfail(pr, "Variable '%.*s' is a list: use it with IN", (int)x->chain[1].len, x->chain[1].p);
    return true;
}

/* A string compared with a boolean (true, false, a Boolean variable):
 * ClickHouse has no comparison of String with UInt8 or Bool and fails the
 * query, SQLite would find no row ('true' is not 1); HogQL's properties are
 * strings ('true', 'false'), so the user is told to compare with those. */
static bool string_vs_bool(q_printer_t *pr, const q_expr_t *e)
{
    if (e->op < QB_EQ || e->op > QB_GE)
        return false;
    q_type_t ta = q_ptype_of(pr, e->args.v[0]), tb = q_ptype_of(pr, e->args.v[1]);
    if (!((ta == Q_T_STRING && tb == Q_T_BOOL) || (ta == Q_T_BOOL && tb == Q_T_STRING)))
        return false;
    q_pfail(pr, "A string cannot be compared with a boolean (true, false or a Boolean variable): "
                "properties hold the text 'true' or 'false', so compare with that text");
    return true;
}

void q_pcompare(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *a = e->args.v[0], *b = e->args.v[1];
    if (e->op != QB_IN && e->op != QB_NOT_IN && (list_side(pr, a) || list_side(pr, b)))
        return;
    if (string_vs_bool(pr, e))
        return;
    switch (e->op) {
    case QB_EQ: two_valued(pr, e, a, b, R_EQ, true, pcmp_op); return;
    case QB_NE: two_valued(pr, e, a, b, R_NE, true, pcmp_op); return;
    case QB_LT:
    case QB_LE:
    case QB_GT:
    case QB_GE: two_valued(pr, e, a, b, R_FALSE, true, pcmp_op); return;
    case QB_LIKE:
    case QB_ILIKE: two_valued(pr, e, a, b, R_EQ, false, plike_op); return;
    case QB_NOT_LIKE:
    case QB_NOT_ILIKE: two_valued(pr, e, a, b, R_NE, false, plike_op); return;
    case QB_IN:
    case QB_NOT_IN: pin(pr, e); return;
    case QB_AND:
    case QB_OR: plogic(pr, e); return;
    case QB_CONCAT:
        P("(");
        pconcat_side(pr, a);
        P(" || ");
        pconcat_side(pr, b);
        P(")");
        return;
    default: q_pfail(pr, "internal: not a comparison"); return;
    }
}

/* NOT (a BETWEEN b AND c): 18.16 has no NOT BETWEEN. When a side may be
 * NULL, HogQL answers ifNull(a >= b AND a <= c, 0), and for NOT BETWEEN
 * ifNull(a < b OR a > c, 0), with SQL's three-valued AND and OR (4 NOT
 * BETWEEN NULL AND 3 is 1). ClickHouse 18.16's AND and OR answer NULL for a
 * NULL argument whatever the other, so each comparison is made two-valued
 * first: the same answer, on both stores. */
static void pbound(q_printer_t *pr, const q_expr_t *a, const char *op, const q_expr_t *x)
{
    P("ifNull((");
    q_pexpr(pr, a);
    P(op);
    q_pcompared(pr, x, a->type);
    P("), 0)");
}

void q_pbetween(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *a = e->args.v[0];
    q_type_t at = a->type;
    bool null = may_be_null(pr, a);
    for (int i = 1; i <= 2; i++) {
        const q_expr_t *x = e->args.v[i];
        null = null || may_be_null(pr, x) || converts(pr, x, at);
    }
    if (pr->failed)
        return;
    if (null && !pr->in_join_on) {
        P("(");
        pbound(pr, a, e->negated ? " < " : " >= ", e->args.v[1]);
        P(e->negated ? " OR " : " AND ");
        pbound(pr, a, e->negated ? " > " : " <= ", e->args.v[2]);
        P(")");
        return;
    }
    P(e->negated ? "(NOT (" : "(");
    q_pexpr(pr, a);
    P(" BETWEEN ");
    q_pcompared(pr, e->args.v[1], at);
    P(" AND ");
    q_pcompared(pr, e->args.v[2], at);
    P(e->negated ? "))" : ")");
}
