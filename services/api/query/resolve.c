/*
 * resolve.c - see resolve.h. Errors are the user's: they name what did not
 * resolve, as HogQL's resolver does ("Unable to resolve field: x").
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "cm/err.h"
#include "query/functions.h"
#include "query/resolve.h"

typedef struct scope {
    struct scope *parent;
    q_select_t *sel;
} scope_t;

/* The lambdas whose bodies are being resolved, innermost first: their
 * parameters are names there (resolve_lambda). */
typedef struct lambda_scope {
    const struct lambda_scope *up;
    q_expr_t *lambda;
} lambda_scope_t;

typedef struct {
    struct api_query *q;
    cm_buf_t *err;
    bool failed;
    const char *in_agg; /* the aggregate whose arguments are being resolved */
    const lambda_scope_t *lambdas;
} rs_t;

static void fail(rs_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(rs_t *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    va_list ap;
    va_start(ap, fmt);
    cm_buf_vappendf(r->err, fmt, ap);
    va_end(ap);
}

#define SL(s) (int)((s).len > 60 ? 60 : (s).len), (s).p

static void resolve_select(rs_t *r, q_select_t *s, scope_t *parent);
static void resolve_expr(rs_t *r, q_expr_t *e, scope_t *sc);

/* ---- lookups ------------------------------------------------------------------------ */

static const q_cte_t *find_cte(const scope_t *sc, cm_slice_t name)
{
    for (; sc != NULL; sc = sc->parent)
        for (size_t i = 0; i < sc->sel->nwith_visible; i++)
            if (cm_slice_eq(sc->sel->with[i].name, name))
                return &sc->sel->with[i];
    return NULL;
}

/* A source's column by HogQL name: its index, or -1. */
static int source_col(const q_scope_entry_t *s, cm_slice_t name, q_type_t *type, bool *nullable)
{
    *type = Q_T_ANY;
    if (s->table != NULL) {
        const q_col_t *c = q_table_col(s->table, name);
        if (c == NULL || c->hidden)
            return -1;
        *type = c->type;
        *nullable = c->nullable;
        return (int)(c - s->table->cols);
    }
    for (size_t i = 0; i < s->sub->nout; i++)
        if (cm_slice_eq(s->sub->out_names[i], name)) {
            *type = s->sub->out_types[i];
            *nullable = s->sub->out_nullable[i];
            return (int)i;
        }
    return -1;
}

static const char *col_name(const q_scope_entry_t *s, int i)
{
    if (s->table != NULL)
        return s->table->cols[i].column;
    return NULL; /* a subquery's: out_names[i] */
}

/* ---- FROM ---------------------------------------------------------------------------- */

static void add_source(rs_t *r, q_select_t *s, q_from_t *f, cm_slice_t name, const q_table_t *t,
                       const q_select_t *sub)
{
    for (size_t i = 0; i < s->nsources; i++)
        if (cm_slice_eq(s->sources[i].name, name)) {
            fail(r, "Duplicate table alias '%.*s'", SL(name));
            return;
        }
    if ((s->nsources & (s->nsources - 1)) == 0) { /* 0, 1, 2, 4, ...: grow */
        size_t cap = s->nsources ? s->nsources * 2 : 1;
        q_scope_entry_t *v = cm_arena_alloc(&r->q->arena, cap * sizeof(*v));
        if (s->nsources)
            memcpy(v, s->sources, s->nsources * sizeof(*v));
        s->sources = v;
    }
    q_scope_entry_t *e = &s->sources[s->nsources++];
    *e = (q_scope_entry_t){.name = name, .table = t, .sub = sub, .id = r->q->nsources++};
    f->entry = e;
}

static void resolve_from(rs_t *r, q_from_t *f, scope_t *sc)
{
    if (f == NULL || r->failed)
        return;
    q_select_t *s = sc->sel;
    switch (f->kind) {
    case QJ_TABLE: {
        cm_slice_t name = f->alias.len ? f->alias : f->name;
        const q_cte_t *cte = find_cte(sc, f->name);
        if (cte != NULL && cte->sub == NULL) {
            fail(r, "'%.*s' is a value, not a table", SL(f->name));
            return;
        }
        if (cte != NULL) {
            f->cte = cte;
            add_source(r, s, f, name, NULL, cte->sub);
            return;
        }
        const q_table_t *t = q_table_lookup(f->name);
        if (t == NULL) {
            fail(r, "Unknown table `%.*s`. Tables: events, persons, groups, person_distinct_ids",
                 SL(f->name));
            return;
        }
        add_source(r, s, f, name, t, NULL);
        return;
    }
    case QJ_SUBQUERY:
        resolve_select(r, f->sub, sc);
        add_source(r, s, f, f->alias.len ? f->alias : CM_SLICE_LIT(""), NULL, f->sub);
        return;
    case QJ_NUMBERS: {
        const q_table_t *t = q_resolve_numbers(f, r->err);
        if (t == NULL) {
            r->failed = true;
            return;
        }
        add_source(r, s, f, f->alias.len ? f->alias : f->name, t, NULL);
        return;
    }
    case QJ_ARRAY: {
        resolve_from(r, f->left, sc);
        resolve_expr(r, f->on, sc);
        if (r->failed)
            return;
        if (f->on->type != Q_T_ARRAY) {
            fail(r, "ARRAY JOIN takes an array");
            return;
        }
        f->element = q_array_join_element(&r->q->arena, f, ++r->q->narray_joins);
        return;
    }
    case QJ_JOIN:
        resolve_from(r, f->left, sc);
        resolve_from(r, f->right, sc);
        if (f->on != NULL)
            resolve_expr(r, f->on, sc);
        for (size_t i = 0; i < f->using_.n; i++) {
            q_expr_t *u = f->using_.v[i];
            if (u->kind != QE_FIELD || u->nchain != 1)
                fail(r, "USING takes column names");
        }
        return;
    }
}

/* ---- fields ---------------------------------------------------------------------------- */

/* The column chain[at] of source s, then a property path if any is left. */
static bool bind_column(rs_t *r, q_expr_t *e, const q_scope_entry_t *s, size_t at)
{
    q_type_t type;
    bool nullable;
    cm_slice_t name = e->chain[at];
    bool events = s->table != NULL && strcmp(s->table->name, "events") == 0;
    /* PostHog's events also reach the person through pdi (the distinct
     * id's row: distinct_id, person_id, person) and poe (the person on the
     * event: id, properties): the same columns here */
    if (events && at + 1 < e->nchain && cm_slice_eq_cstr(name, "pdi")) {
        cm_slice_t sub = e->chain[at + 1];
        if (cm_slice_eq_cstr(sub, "person") || cm_slice_eq_cstr(sub, "distinct_id") ||
            cm_slice_eq_cstr(sub, "person_id"))
            name = e->chain[++at];
    } else if (events && at + 1 < e->nchain && cm_slice_eq_cstr(name, "poe")) {
        name = CM_SLICE_LIT("person"); /* poe.id, poe.properties: person.id, person.properties */
    }
    /* events: person.properties.x and person.id read the person copied
     * onto the event (persons-on-events) */
    if (events && cm_slice_eq_cstr(name, "person") && at + 1 < e->nchain) {
        if (cm_slice_eq_cstr(e->chain[at + 1], "properties")) {
            name = CM_SLICE_LIT("person_properties");
            at++;
        } else if (cm_slice_eq_cstr(e->chain[at + 1], "id") && at + 2 == e->nchain) {
            name = CM_SLICE_LIT("person_id");
            at++;
        }
        const q_col_t *c = q_table_col(s->table, name);
        if (c == NULL) { /* person.<anything else>: not on the event */
            fail(r,
                 "Unable to resolve field: person.%.*s (events have person.id and "
                 "person.properties)",
                 SL(e->chain[at + 1]));
            return true;
        }
        e->fkind = QF_COLUMN;
        e->source = s;
        e->column = c->column;
        e->type = c->type;
        goto path;
    }
    int i = source_col(s, name, &type, &nullable);
    if (i < 0)
        return false;
    e->fkind = QF_COLUMN;
    e->source = s;
    e->column = col_name(s, i);
    e->ival = i;
    e->type = type;
    e->elem = s->sub != NULL ? s->sub->out_elems[i] : Q_T_ANY;
    if (s->sub != NULL && s->sub->out_exprs[i] != NULL) { /* an array's or tuple's details */
        const q_expr_t *c = s->sub->out_exprs[i];
        e->elem_nullable = c->elem_nullable;
        e->members = c->members;
        e->nmembers = c->nmembers;
    }
    e->nullable = nullable;
path:
    if (at + 1 < e->nchain) {
        if (e->type != Q_T_JSON) {
            fail(r, "Field '%.*s' has no property '%.*s'", SL(e->chain[at]), SL(e->chain[at + 1]));
            return true;
        }
        e->fkind = QF_PROPERTY;
        e->path_from = at + 1;
        e->type = Q_T_STRING;
        e->nullable = true;
    } else if (e->type == Q_T_JSON) {
        e->type = Q_T_STRING; /* the whole JSON text */
    }
    return true;
}

static q_column_t *select_alias(q_select_t *s, cm_slice_t name)
{
    for (size_t i = 0; i < s->ncols; i++)
        if (s->cols[i].alias.len && cm_slice_eq(s->cols[i].alias, name))
            return &s->cols[i];
    return NULL;
}

static void resolve_field(rs_t *r, q_expr_t *e, scope_t *sc)
{
    q_select_t *s = sc->sel;
    /* a lambda's parameter hides any column of that name, as in ClickHouse */
    for (const lambda_scope_t *l = r->lambdas; l != NULL; l = l->up)
        for (size_t i = 0; i < l->lambda->nchain; i++)
            if (cm_slice_eq(l->lambda->chain[i], e->chain[0])) {
                if (e->nchain > 1) {
                    fail(r, "'%.*s' is a lambda's parameter: it has no fields", SL(e->chain[0]));
                    return;
                }
                q_bind_lambda_param(e, l->lambda, i);
                return;
            }
    if (q_bind_array_join(e, s))
        return;
    /* table.column... */
    if (e->nchain >= 2)
        for (size_t i = 0; i < s->nsources; i++)
            if (cm_slice_eq(s->sources[i].name, e->chain[0])) {
                if (!bind_column(r, e, &s->sources[i], 1))
                    fail(r, "Unable to resolve field: %.*s.%.*s", SL(e->chain[0]), SL(e->chain[1]));
                return;
            }
    /* column... of exactly one source */
    const q_scope_entry_t *found = NULL;
    for (size_t i = 0; i < s->nsources; i++) {
        q_type_t t;
        bool n;
        const q_scope_entry_t *src = &s->sources[i];
        bool person =
            src->table != NULL && strcmp(src->table->name, "events") == 0 &&
            (cm_slice_eq_cstr(e->chain[0], "person") || cm_slice_eq_cstr(e->chain[0], "pdi") ||
             cm_slice_eq_cstr(e->chain[0], "poe")) &&
            e->nchain >= 2;
        if (person || source_col(src, e->chain[0], &t, &n) >= 0) {
            if (found != NULL) {
                fail(r, "Ambiguous field '%.*s': name its table", SL(e->chain[0]));
                return;
            }
            found = src;
        }
    }
    if (found != NULL) {
        if (!bind_column(r, e, found, 0))
            fail(r, "Unable to resolve field: %.*s", SL(e->chain[0]));
        return;
    }
    /* a SELECT alias, or WITH expr AS name */
    q_column_t *c = e->nchain == 1 ? select_alias(s, e->chain[0]) : NULL;
    q_expr_t *target = c != NULL ? c->expr : NULL;
    if (target == NULL && e->nchain == 1) {
        const q_cte_t *cte = find_cte(sc, e->chain[0]);
        if (cte != NULL && cte->expr != NULL)
            target = cte->expr;
    }
    if (target != NULL) {
        if (target->visiting) {
            fail(r, "Alias '%.*s' refers to itself", SL(e->chain[0]));
            return;
        }
        target->visiting = true;
        resolve_expr(r, target, sc);
        target->visiting = false;
        e->fkind = QF_ALIAS;
        e->alias_of = target;
        e->type = target->type;
        e->elem = target->elem;
        e->elem_nullable = target->elem_nullable;
        e->members = target->members;
        e->nmembers = target->nmembers;
        e->nullable = target->nullable;
        return;
    }
    fail(r, "Unable to resolve field: %.*s", SL(e->chain[0]));
}

/* ---- expressions ---------------------------------------------------------------------- */

static bool numeric(q_type_t t)
{
    return t == Q_T_INT || t == Q_T_FLOAT || t == Q_T_BOOL;
}

/* The type two branches share (coalesce, if, CASE, UNION-like). */
static q_type_t common(q_type_t a, q_type_t b)
{
    if (a == Q_T_NULL)
        return b;
    if (b == Q_T_NULL || a == b)
        return a;
    if (numeric(a) && numeric(b))
        return a == Q_T_FLOAT || b == Q_T_FLOAT ? Q_T_FLOAT : Q_T_INT;
    if ((a == Q_T_DATE && b == Q_T_DATETIME) || (a == Q_T_DATETIME && b == Q_T_DATE))
        return Q_T_DATETIME;
    return Q_T_ANY;
}

/* ClickHouse's name of a type, for the messages below. */
static const char *ch_type(q_type_t t)
{
    switch (t) {
    case Q_T_BOOL: return "UInt8";
    case Q_T_INT: return "Int64";
    case Q_T_FLOAT: return "Float64";
    case Q_T_DATE: return "Date";
    case Q_T_DATETIME: return "DateTime";
    case Q_T_UUID: return "UUID";
    case Q_T_ARRAY: return "Array";
    case Q_T_TUPLE: return "Tuple";
    default: return "String";
    }
}

/* The branches of if, multiIf, CASE, coalesce, greatest seen so far: their
 * common type, and whether a float and an integer wider than 32 bits (an
 * integer that is not a small literal: ClickHouse's Int64 and UInt64 have
 * no float supertype) are among them. */
typedef struct {
    q_type_t t;
    bool wide_int, flt;
} branches_t;

static bool small_int_literal(const q_expr_t *e)
{
    if (e->kind == QE_NEG)
        e = e->args.v[0];
    return e->kind == QE_INT && e->ival >= 0 && e->ival <= 4294967295LL;
}

/* Adds a branch's type. Branches of known types with no common one
 * (String and a number, a date and a number, Int64 and Float64, ...) are
 * refused on both stores: ClickHouse fails such a query (NO_COMMON_TYPE)
 * where SQLite would answer whichever branch is taken. Unknown types
 * (Q_T_ANY, raw JSON) are left to the store. */
static void add_branch(rs_t *r, branches_t *br, const q_expr_t *b, const char *what)
{
    q_type_t was = br->t, c = common(br->t, b->type);
    br->wide_int = br->wide_int || (b->type == Q_T_INT && !small_int_literal(b));
    br->flt = br->flt || b->type == Q_T_FLOAT;
    br->t = c;
    if (c == Q_T_ANY && was != Q_T_ANY && was != Q_T_JSON && b->type != Q_T_ANY &&
        b->type != Q_T_JSON)
        fail(r,
             "The values of %s have no common type: there is no supertype for types %s and %s. "
             "Convert them to one type first (toString, toFloat, ...)",
             what, ch_type(was), ch_type(b->type));
    else if (c == Q_T_FLOAT && br->wide_int && br->flt)
        fail(r,
             "The values of %s have no common type: there is no supertype for types Int64 and "
             "Float64 (no float holds every Int64). Convert them to one type first (toFloat)",
             what);
}

/* substring's constant offset 0 and negative length: ClickHouse 18.16
 * fails them over a column, answers '' or the rest of a constant, and
 * newer versions cut a negative length from the end; refused on every
 * store (print_fn_string.c prints the rest). */
static void substring_args(rs_t *r, const q_expr_t *e)
{
    for (size_t i = 1; i < e->args.n; i++) {
        const q_expr_t *a = e->args.v[i];
        bool neg = a->kind == QE_NEG;
        if (neg)
            a = a->args.v[0];
        if (a->kind != QE_INT)
            continue;
        if (i == 1 && a->ival == 0)
            fail(r, "Indices in strings are 1-based: the offset of substring must not be 0");
        else if (i == 2 && (neg ? a->ival > 0 : a->ival < 0))
            fail(r, "The length of substring must not be negative");
    }
}

static void resolve_list(rs_t *r, q_list_t *l, scope_t *sc)
{
    for (size_t i = 0; i < l->n && !r->failed; i++)
        resolve_expr(r, l->v[i], sc);
}

static void add_var(rs_t *r, cm_slice_t name)
{
    for (size_t i = 0; i < r->q->nvars; i++)
        if (cm_slice_eq_cstr(name, r->q->vars[i]))
            return;
    if ((r->q->nvars & (r->q->nvars - 1)) == 0) {
        size_t cap = r->q->nvars ? r->q->nvars * 2 : 1;
        const char **v = cm_arena_alloc(&r->q->arena, cap * sizeof(*v));
        if (r->q->nvars)
            memcpy(v, r->q->vars, r->q->nvars * sizeof(*v));
        r->q->vars = v;
    }
    r->q->vars[r->q->nvars++] = cm_arena_dup(&r->q->arena, name).p;
}

/* quantile(0.9)(x): a literal level, 0 to 1 (the printers write it back). */
static bool quantile_level(const q_expr_t *p)
{
    if (p->kind == QE_INT)
        return p->ival == 0 || p->ival == 1;
    return p->kind == QE_FLOAT && p->fval >= 0 && p->fval <= 1;
}

/* A lambda's body, with its parameters standing for the elements of the
 * call's array arguments (args[1..]): x -> x + 1 in arrayMap(x -> x + 1, a).
 * The lambda keeps one typed node per parameter in its args, for the
 * fields that name them. */
static void resolve_lambda(rs_t *r, q_expr_t *call, scope_t *sc)
{
    q_expr_t *l = call->args.v[0];
    if (!q_lambda_params(call, &r->q->arena, r->err)) {
        r->failed = true;
        return;
    }
    lambda_scope_t ls = {r->lambdas, l};
    r->lambdas = &ls;
    resolve_expr(r, l->operand, sc);
    r->lambdas = ls.up;
    l->type = l->operand->type;
    l->elem = l->operand->elem;
    l->nullable = l->operand->nullable;
    l->resolved = true;
}

static void resolve_call(rs_t *r, q_expr_t *e, scope_t *sc)
{
    if (cm_slice_eq_cstr(e->text, "inCohort") || cm_slice_eq_cstr(e->text, "notInCohort")) {
        fail(r, "cohorts are not available in HogQL endpoints yet (IN COHORT, inCohort)");
        return;
    }
    /* a random sample of the rows: no store could give PostHog's answer twice */
    if (cm_slice_eq_cstr(e->text, "groupArraySample") ||
        cm_slice_eq_cstr(e->text, "groupArraySampleIf")) {
        fail(r,
             "%.*s is not supported: it picks rows at random, so the answer would differ from "
             "run to run (groupArray with LIMIT in a subquery gives a stable one)",
             SL(e->text));
        return;
    }
    const q_fn_t *fn = q_fn_lookup(e->text);
    if (fn == NULL) {
        const char *other = q_fn_suggest(e->text);
        if (other != NULL) /* PostHog's words: names are case-sensitive */
            fail(r, "Unsupported function call '%.*s(...)'. Perhaps you meant '%s(...)'?",
                 SL(e->text), other);
        else
            fail(r, "Unsupported function call '%.*s(...)'", SL(e->text));
        return;
    }
    e->text = cm_slice_from_cstr(fn->name); /* one spelling from here on */
    e->ival = fn->id;
    size_t n = e->args.n;
    if (n < fn->min_args || n > fn->max_args) {
        if (fn->min_args == fn->max_args)
            fail(r, "Function '%s' expects %u argument%s, found %zu", fn->name, fn->min_args,
                 fn->min_args == 1 ? "" : "s", n);
        else
            fail(r, "Function '%s' expects %u to %u arguments, found %zu", fn->name, fn->min_args,
                 fn->max_args, n);
        return;
    }
    if (e->params.n != fn->params && !(fn->id == Q_FN_QUANTILES && e->params.n > 0)) {
        if (fn->params == 0)
            fail(r, "Function '%s' takes no parameters", fn->name);
        else
            fail(r, "Function '%s' takes a level, as in %s(0.9)(x)", fn->name, fn->name);
        return;
    }
    for (size_t i = 0; i < e->params.n; i++)
        if ((fn->id == Q_FN_QUANTILE || fn->id == Q_FN_QUANTILES) &&
            !quantile_level(e->params.v[i])) {
            fail(r, "The level of %s must be a number from 0 to 1, as in %s(0.9)(x)", fn->name,
                 fn->name);
            return;
        }
    /* countIf(DISTINCT x, cond) counts the distinct x where cond holds:
     * ClickHouse's countDistinctIf */
    if (e->distinct && fn->id == Q_FN_COUNT_IF && n == 2) {
        fn = q_fn_lookup(CM_SLICE_LIT("countDistinctIf"));
        e->text = cm_slice_from_cstr(fn->name);
        e->ival = fn->id;
        e->distinct = false;
    }
    /* f(DISTINCT x): the same answer as f(x) for min, max and the uniq
     * family; sum and avg over the distinct values (print_fn_agg.c) */
    if (e->distinct && (fn->id == Q_FN_MIN || fn->id == Q_FN_MAX || fn->id == Q_FN_UNIQ))
        e->distinct = false;
    if (e->distinct && fn->id != Q_FN_COUNT && fn->id != Q_FN_SUM && fn->id != Q_FN_AVG) {
        fail(r, "DISTINCT is supported in count(), sum(), avg(), min(), max() and uniq() only");
        return;
    }
    if (fn->cls == QF_WINDOW && e->over == NULL) {
        fail(r, "Window function '%s' needs OVER (...)", fn->name);
        return;
    }
    if (fn->cls == QF_PLAIN && e->over != NULL) {
        fail(r, "'%s' is not a window or aggregate function", fn->name);
        return;
    }
    bool plain_agg = fn->cls == QF_AGGREGATE && e->over == NULL;
    if (plain_agg && r->in_agg != NULL) { /* PostHog's words */
        fail(r, "Aggregation '%s' cannot be nested inside another aggregation '%s'.", fn->name,
             r->in_agg);
        return;
    }
    if (plain_agg)
        sc->sel->aggregates = true;
    if (e->over != NULL && !q_resolve_window(r->q, sc->sel, e, r->err)) {
        r->failed = true;
        return;
    }
    bool lambda = n > 0 && e->args.v[0]->kind == QE_LAMBDA;
    if (lambda && !q_fn_takes_lambda(fn->id)) {
        fail(r, "%s does not take a lambda", fn->name);
        return;
    }
    const char *outer = r->in_agg;
    if (plain_agg)
        r->in_agg = fn->name;
    for (size_t i = lambda; i < n && !r->failed; i++)
        resolve_expr(r, e->args.v[i], sc);
    if (lambda && n < 2 && !r->failed)
        fail(r, "%s takes an array after its lambda", fn->name);
    if (lambda && !r->failed)
        resolve_lambda(r, e, sc);
    r->in_agg = outer;
    if (fn->id == Q_FN_ARRAY_JOIN) { /* a row per element: numbered for SQLite's join */
        if (r->lambdas != NULL)
            fail(r, "arrayJoin cannot be inside a lambda");
        e->value = ++r->q->narray_joins;
    }
    if (e->over != NULL) {
        resolve_list(r, &e->over->partition, sc);
        for (size_t i = 0; i < e->over->norder; i++)
            resolve_expr(r, e->over->order[i].expr, sc);
    }
    e->nullable = fn->nullable;
    switch (fn->rule) {
    case QR_FIXED: e->type = fn->ret; break;
    case QR_ARG0:
        e->type = n > 0 ? e->args.v[0]->type : fn->ret;
        e->nullable = e->nullable || (n > 0 && e->args.v[0]->nullable);
        break;
    case QR_COMMON: {
        branches_t br = {Q_T_NULL, false, false};
        bool all_null = true;
        for (size_t i = 0; i < n; i++) {
            add_branch(r, &br, e->args.v[i], fn->name);
            all_null = all_null && e->args.v[i]->nullable;
        }
        e->type = br.t;
        e->nullable =
            fn->id == Q_FN_GREATEST || fn->id == Q_FN_LEAST ? !all_null || all_null : all_null;
        break;
    }
    case QR_BRANCHES: {
        branches_t br = {Q_T_NULL, false, false};
        for (size_t i = 1; i < n; i += 2) {
            add_branch(r, &br, e->args.v[i], fn->name);
            e->nullable = e->nullable || e->args.v[i]->nullable;
        }
        add_branch(r, &br, e->args.v[n - 1], fn->name);
        e->nullable = e->nullable || e->args.v[n - 1]->nullable;
        e->type = br.t;
        break;
    }
    }
    if (e->op_form) /* an operator's call: two-valued (print_compare.c) */
        e->nullable = false;
    /* dateTrunc to a week or longer is a Date, as PostHog types it */
    if (fn->id == Q_FN_DATE_TRUNC && n > 0 && e->args.v[0]->kind == QE_STRING &&
        (cm_slice_eq_cstr(e->args.v[0]->text, "week") ||
         cm_slice_eq_cstr(e->args.v[0]->text, "month") ||
         cm_slice_eq_cstr(e->args.v[0]->text, "quarter") ||
         cm_slice_eq_cstr(e->args.v[0]->text, "year")))
        e->type = Q_T_DATE;
    if (fn->id == Q_FN_SUBSTRING)
        substring_args(r, e);
    if (fn->id == Q_FN_MULTI_IF && n % 2 == 0)
        fail(r, "multiIf takes condition, value pairs and a default");
    if (!r->failed && !q_resolve_array_call(e, &r->q->arena, r->err))
        r->failed = true;
}

static void resolve_expr_once(rs_t *r, q_expr_t *e, scope_t *sc);

/* Each node once: a SELECT alias's expression is reached again through
 * every reference to it. */
static void resolve_expr(rs_t *r, q_expr_t *e, scope_t *sc)
{
    if (r->failed || e->resolved)
        return;
    resolve_expr_once(r, e, sc);
    e->resolved = true;
}

/* properties.flag = true: HogQL reads a string against a boolean
 * constant as the boolean it spells ('true' 1, 'false' 0, anything else
 * NULL), as PostHog does for a boolean property; the string side becomes
 * that reading (print_fn.c). False when out of memory. */
static bool bool_of_string(rs_t *r, q_expr_t *e)
{
    for (int k = 0; k < 2; k++) {
        q_expr_t *s = e->args.v[k], *b = e->args.v[1 - k];
        if (b->kind != QE_BOOL || s->type != Q_T_STRING)
            continue;
        q_expr_t *inner = cm_arena_alloc(&r->q->arena, sizeof(*inner));
        q_expr_t **argv = cm_arena_alloc(&r->q->arena, sizeof(*argv));
        if (inner == NULL || argv == NULL) {
            fail(r, "out of memory");
            return false;
        }
        *inner = *s;
        argv[0] = inner;
        memset(s, 0, sizeof(*s));
        s->kind = QE_CALL;
        s->depth = inner->depth;
        s->text = CM_SLICE_LIT("toBool");
        s->ival = Q_FN_BOOL_OF_STRING;
        s->args = (q_list_t){argv, 1};
        s->type = Q_T_BOOL;
        s->nullable = true;
        s->resolved = true;
        return true;
    }
    return true;
}

static void resolve_expr_once(rs_t *r, q_expr_t *e, scope_t *sc)
{
    switch (e->kind) {
    case QE_NULL:
        e->type = Q_T_NULL;
        e->nullable = true;
        return;
    case QE_BOOL: e->type = Q_T_BOOL; return;
    case QE_INT: e->type = Q_T_INT; return;
    case QE_FLOAT: e->type = Q_T_FLOAT; return;
    case QE_STRING: e->type = Q_T_STRING; return;
    case QE_VALUE: return;
    case QE_FIELD:
        if (e->fkind == QF_ALIAS) { /* a column by position */
            resolve_expr(r, e->alias_of, sc);
            e->type = e->alias_of->type;
            e->nullable = e->alias_of->nullable;
            return;
        }
        resolve_field(r, e, sc);
        return;
    case QE_STAR: fail(r, "'*' is allowed only as a column of SELECT"); return;
    case QE_LAMBDA:
        fail(r, "A lambda (x -> ...) can only be the first argument of an array function such "
                "as arrayMap");
        return;
    case QE_CALL: resolve_call(r, e, sc); return;
    case QE_PLACEHOLDER:
        add_var(r, e->chain[1]);
        e->type = Q_T_ANY;
        e->nullable = true;
        return;
    case QE_SUBQUERY: {
        resolve_select(r, e->sub, sc);
        e->type = e->sub->nout > 0 ? e->sub->out_types[0] : Q_T_ANY;
        e->nullable = true;
        return;
    }
    default: break;
    }
    resolve_list(r, &e->args, sc);
    if (e->operand != NULL)
        resolve_expr(r, e->operand, sc);
    if (e->else_ != NULL)
        resolve_expr(r, e->else_, sc);
    if (r->failed)
        return;
    bool any_null = false;
    for (size_t i = 0; i < e->args.n; i++)
        any_null = any_null || e->args.v[i]->nullable;
    switch (e->kind) {
    case QE_BINARY:
        e->nullable = any_null;
        if (e->op <= QB_CONCAT && e->args.n == 2 &&
            (e->args.v[0]->type == Q_T_ARRAY || e->args.v[0]->type == Q_T_TUPLE ||
             e->args.v[1]->type == Q_T_ARRAY || e->args.v[1]->type == Q_T_TUPLE)) {
            fail(r, "Arithmetic on arrays and tuples is not supported (arrayMap works element "
                    "by element)");
            return;
        }
        switch (e->op) {
        case QB_PLUS:
        case QB_MINUS:
            if (e->args.v[0]->type == Q_T_DATETIME || e->args.v[0]->type == Q_T_DATE)
                e->type = e->args.v[0]->type;
            else
                e->type = common(e->args.v[0]->type, e->args.v[1]->type);
            break;
        case QB_MUL:
        case QB_MOD: e->type = common(e->args.v[0]->type, e->args.v[1]->type); break;
        case QB_DIV: e->type = Q_T_FLOAT; break;
        case QB_CONCAT: e->type = Q_T_STRING; break;
        default: e->type = Q_T_BOOL; break;
        }
        if ((e->op == QB_EQ || e->op == QB_NE) && !bool_of_string(r, e))
            return;
        /* HogQL's comparisons and || never yield NULL (print_compare.c) */
        if (e->op != QB_PLUS && e->op != QB_MINUS && e->op != QB_MUL && e->op != QB_DIV &&
            e->op != QB_MOD && e->op != QB_AND && e->op != QB_OR)
            e->nullable = false;
        return;
    case QE_NOT:
        e->type = Q_T_BOOL;
        e->nullable = any_null;
        return;
    case QE_NEG:
        e->type = e->args.v[0]->type;
        e->nullable = any_null;
        return;
    case QE_IS_NULL: e->type = Q_T_BOOL; return;
    case QE_BETWEEN: /* never NULL in HogQL (print_compare.c) */ e->type = Q_T_BOOL; return;
    case QE_CASE: {
        branches_t br = {Q_T_NULL, false, false};
        for (size_t i = 1; i < e->args.n; i += 2) {
            add_branch(r, &br, e->args.v[i], "CASE");
            e->nullable = e->nullable || e->args.v[i]->nullable;
        }
        if (e->else_ != NULL) {
            add_branch(r, &br, e->else_, "CASE");
            e->nullable = e->nullable || e->else_->nullable;
        } else {
            e->nullable = true;
        }
        e->type = br.t;
        return;
    }
    case QE_ARRAY:
    case QE_INDEX:
    case QE_TUPLE:
        if (!q_resolve_array_expr(e, &r->q->arena, r->err))
            r->failed = true;
        return;
    case QE_INTERVAL: e->type = Q_T_ANY; return;
    case QE_CAST: {
        static const struct {
            const char *name;
            q_type_t type;
        } casts[] = {{"String", Q_T_STRING},     {"Int64", Q_T_INT},   {"Int", Q_T_INT},
                     {"Float64", Q_T_FLOAT},     {"Float", Q_T_FLOAT}, {"Date", Q_T_DATE},
                     {"DateTime", Q_T_DATETIME}, {"Bool", Q_T_BOOL},   {"UUID", Q_T_UUID}};
        for (size_t i = 0; i < sizeof(casts) / sizeof(casts[0]); i++)
            if (cm_slice_eq_nocase(e->text, casts[i].name)) {
                e->text = cm_slice_from_cstr(casts[i].name);
                e->type = casts[i].type;
                e->nullable = any_null;
                return;
            }
        fail(r, "Unsupported type in CAST: '%.*s'", SL(e->text));
        return;
    }
    default: return;
    }
}

/* ---- SELECT ---------------------------------------------------------------------------- */

/* The output columns: each column's alias or name; * expanded. */
static void outputs(rs_t *r, q_select_t *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->ncols; i++) {
        q_expr_t *e = s->cols[i].expr;
        if (e->kind != QE_STAR) {
            n++;
            continue;
        }
        for (size_t j = 0; j < s->nsources; j++) {
            const q_scope_entry_t *src = &s->sources[j];
            if (e->nchain == 1 && !cm_slice_eq(src->name, e->chain[0]))
                continue;
            if (src->table != NULL)
                for (size_t k = 0; k < src->table->ncols; k++)
                    n += !src->table->cols[k].hidden;
            else
                n += src->sub->nout;
        }
    }
    s->out_names = cm_arena_alloc(&r->q->arena, (n + 1) * sizeof(*s->out_names));
    s->out_types = cm_arena_alloc(&r->q->arena, (n + 1) * sizeof(*s->out_types));
    s->out_elems = cm_arena_alloc(&r->q->arena, (n + 1) * sizeof(*s->out_elems));
    s->out_exprs = cm_arena_alloc(&r->q->arena, (n + 1) * sizeof(*s->out_exprs));
    s->out_nullable = cm_arena_alloc(&r->q->arena, (n + 1) * sizeof(*s->out_nullable));
    size_t w = 0;
    for (size_t i = 0; i < s->ncols; i++) {
        q_column_t *c = &s->cols[i];
        q_expr_t *e = c->expr;
        if (e->kind == QE_STAR) {
            bool any = false;
            for (size_t j = 0; j < s->nsources; j++) {
                const q_scope_entry_t *src = &s->sources[j];
                if (e->nchain == 1 && !cm_slice_eq(src->name, e->chain[0]))
                    continue;
                any = true;
                size_t m = src->table != NULL ? src->table->ncols : src->sub->nout;
                for (size_t k = 0; k < m; k++) {
                    if (src->table != NULL && src->table->cols[k].hidden)
                        continue;
                    const q_col_t *col = src->table != NULL ? &src->table->cols[k] : NULL;
                    s->out_names[w] = col ? cm_slice_from_cstr(col->name) : src->sub->out_names[k];
                    s->out_types[w] = col ? (col->type == Q_T_JSON ? Q_T_STRING : col->type)
                                          : src->sub->out_types[k];
                    s->out_nullable[w] = col ? col->nullable : src->sub->out_nullable[k];
                    s->out_elems[w] = col ? Q_T_ANY : src->sub->out_elems[k];
                    s->out_exprs[w] = col ? NULL : src->sub->out_exprs[k];
                    w++;
                }
            }
            if (!any && e->nchain == 0)
                fail(r, "SELECT * needs a FROM");
            else if (!any)
                fail(r, "Unable to resolve field: %.*s.*", SL(e->chain[0]));
            continue;
        }
        cm_slice_t name = c->alias;
        if (name.len == 0 && e->kind == QE_FIELD && e->nchain > 0)
            name = e->chain[e->nchain - 1];
        if (name.len == 0) {
            cm_buf_t b;
            cm_buf_init(&b);
            q_print_hogql_expr(e, &b);
            name = cm_arena_dup(&r->q->arena, cm_buf_slice(&b));
            cm_buf_free(&b);
        }
        s->out_names[w] = name;
        s->out_types[w] = e->type;
        s->out_elems[w] = e->elem;
        s->out_exprs[w] = e;
        s->out_nullable[w] = e->nullable;
        w++;
    }
    s->nout = w;
}

/* GROUP BY 2, ORDER BY 1: the SELECT's columns by position (as ClickHouse
 * does since 22.7, and SQLite always); the printers print the column. */
static void positional(rs_t *r, q_select_t *s, q_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        q_expr_t *e = l->v[i];
        if (e->kind != QE_INT)
            continue;
        if (e->ival >= 1 && s->ncols == 1 && s->cols[0].expr->kind == QE_STAR &&
            s->cols[0].expr->nchain == 0 && s->nsources == 1 && s->sources[0].sub != NULL &&
            (uint64_t)e->ival <= s->sources[0].sub->nout) {
            /* SELECT * FROM (a set) ORDER BY 2, as a parenthesized set's
             * ORDER BY is (parse_s.c): the subquery's column by its name */
            cm_slice_t name = s->sources[0].sub->out_names[e->ival - 1];
            *e = (q_expr_t){.kind = QE_FIELD, .depth = 1, .text = e->text};
            e->chain = cm_arena_alloc(&r->q->arena, sizeof(*e->chain));
            e->chain[0] = name;
            e->nchain = 1;
            continue;
        }
        if (e->ival < 1 || (uint64_t)e->ival > s->ncols ||
            s->cols[e->ival - 1].expr->kind == QE_STAR) {
            fail(r, "Column position %" PRId64 " is not in the SELECT list", e->ival);
            return;
        }
        q_expr_t *target = s->cols[e->ival - 1].expr;
        cm_slice_t position = e->text; /* kept for printing back as HogQL */
        *e = (q_expr_t){.kind = QE_FIELD,
                        .depth = target->depth,
                        .fkind = QF_ALIAS,
                        .alias_of = target,
                        .text = position,
                        .type = target->type,
                        .elem = target->elem,
                        .elem_nullable = target->elem_nullable,
                        .members = target->members,
                        .nmembers = target->nmembers,
                        .nullable = target->nullable};
    }
}

static void resolve_select_in(rs_t *r, q_select_t *s, scope_t *parent);

/* A subquery is a scope of its own: an aggregate in it is not nested in
 * the one around it, and it does not see the lambdas around it (it would
 * be correlated). */
static void resolve_select(rs_t *r, q_select_t *s, scope_t *parent)
{
    const char *outer = r->in_agg;
    const lambda_scope_t *l = r->lambdas;
    r->in_agg = NULL;
    r->lambdas = NULL;
    resolve_select_in(r, s, parent);
    r->in_agg = outer;
    r->lambdas = l;
}

static void resolve_select_in(rs_t *r, q_select_t *s, scope_t *parent)
{
    if (r->failed)
        return;
    if (s->alias_id == 0)
        s->alias_id = ++r->q->nselects;
    if (s->nparts > 0) {
        for (size_t i = 0; i < s->nparts; i++) {
            s->parts[i]->set = s;
            s->parts[i]->alias_id = s->alias_id; /* a UNION's columns are its first part's */
            resolve_select(r, s->parts[i], parent);
        }
        if (r->failed)
            return;
        if (!q_resolve_setops(s, r->err)) {
            r->failed = true;
            return;
        }
        q_select_t *first = s->parts[0];
        for (size_t i = 1; i < s->nparts; i++)
            if (s->parts[i]->nout != first->nout) {
                fail(r, "%.*s parts have different numbers of columns (%zu and %zu)",
                     (int)strlen(q_setop_name(s->ops[i])) - 2, q_setop_name(s->ops[i]) + 1,
                     first->nout, s->parts[i]->nout);
                return;
            }
        s->out_names = first->out_names;
        s->out_types = first->out_types;
        s->out_elems = first->out_elems;
        s->out_exprs = first->out_exprs;
        s->out_nullable = first->out_nullable;
        s->nout = first->nout;
        return;
    }
    scope_t sc = {parent, s};
    for (size_t i = 0; i < s->nwith && !r->failed; i++) {
        s->nwith_visible = i; /* a CTE sees the ones before it */
        for (size_t j = 0; j < i; j++)
            if (cm_slice_eq(s->with[j].name, s->with[i].name))
                fail(r, "Duplicate CTE name '%.*s'", SL(s->with[i].name));
        if (s->with[i].sub != NULL)
            resolve_select(r, s->with[i].sub, &sc);
    }
    s->nwith_visible = s->nwith;
    resolve_from(r, s->from, &sc);
    for (size_t i = 0; i < s->ncols && !r->failed; i++)
        if (s->cols[i].expr->kind != QE_STAR)
            resolve_expr(r, s->cols[i].expr, &sc);
    /* expression CTEs are resolved where they are used (their scope is the user's) */
    if (s->where != NULL)
        resolve_expr(r, s->where, &sc);
    positional(r, s, &s->group_by);
    resolve_list(r, &s->group_by, &sc);
    if (s->having != NULL)
        resolve_expr(r, s->having, &sc);
    for (size_t i = 0; i < s->norder && !r->failed; i++) {
        q_list_t one = {&s->order[i].expr, 1};
        positional(r, s, &one);
        resolve_expr(r, s->order[i].expr, &sc);
    }
    if (s->with_ties && s->norder == 0)
        fail(r, "LIMIT ... WITH TIES needs an ORDER BY");
    q_expr_t *lims[] = {s->limit, s->offset, s->limit_by_n, s->limit_by_offset};
    for (size_t i = 0; i < 4; i++)
        if (lims[i] != NULL && lims[i]->kind != QE_INT)
            fail(r, "LIMIT and OFFSET take whole numbers");
        else if (lims[i] != NULL && lims[i]->ival < 0)
            fail(r, "LIMIT and OFFSET cannot be negative");
    resolve_list(r, &s->limit_by, &sc);
    if (!r->failed)
        outputs(r, s);
}

int q_resolve(struct api_query *q, cm_buf_t *err)
{
    rs_t r = {.q = q, .err = err};
    resolve_select(&r, q->root, NULL);
    return r.failed ? CM_EINVAL : 0;
}
