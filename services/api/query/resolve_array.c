/*
 * resolve_array.c - the types of arrays and of the functions over them
 * (see resolve.h). An array's element type is kept beside its type
 * (q_expr_t.elem) so that the printers know how SQLite's JSON elements
 * compare and the runner answers them as ClickHouse types them:
 * Array(Int64), Array(String), ... (docs/endpoints.md "Arrays, tuples and
 * lambdas").
 */
#include <string.h>

#include "query/functions.h"
#include "query/resolve.h"

#define ARG(i) (e->args.v[(i)])

static bool numeric(q_type_t t)
{
    return t == Q_T_INT || t == Q_T_FLOAT || t == Q_T_BOOL;
}

/* The element type two arrays (or items) share; Q_T_ANY when they differ. */
static q_type_t common(q_type_t a, q_type_t b)
{
    if (a == Q_T_NULL)
        return b;
    if (b == Q_T_NULL || a == b)
        return a;
    if (numeric(a) && numeric(b))
        return a == Q_T_FLOAT || b == Q_T_FLOAT ? Q_T_FLOAT : Q_T_INT;
    return Q_T_ANY;
}

static bool fail(cm_buf_t *err, const q_expr_t *e, const char *what)
{
    cm_buf_appendf(err, "%.*s %s", (int)e->text.len, e->text.p, what);
    return false;
}

bool q_fn_takes_lambda(int id)
{
    return id >= Q_FN_ARRAY_MAP && id <= Q_FN_ARRAY_FIRST;
}

/* A tuple of the given member types (copied into the arena). */
static void set_members(q_expr_t *e, cm_arena_t *arena, const q_type_t *types, size_t n)
{
    q_type_t *m = cm_arena_alloc(arena, (n ? n : 1) * sizeof(*m));
    memcpy(m, types, n * sizeof(*m));
    e->members = m;
    e->nmembers = n;
}

/* What an element of array a is beyond its type: a tuple's member types,
 * or an inner array's element type (an array of arrays keeps it as its one
 * "member", so that its strings can be escaped and its type named). */
static void element_of(q_expr_t *out, const q_expr_t *a)
{
    out->members = NULL;
    out->nmembers = 0;
    out->elem = Q_T_ANY;
    if (a->elem == Q_T_TUPLE) {
        out->members = a->members;
        out->nmembers = a->nmembers;
    } else if (a->elem == Q_T_ARRAY && a->nmembers == 1) {
        out->elem = a->members[0];
    }
}

/* Array e holds arrays whose elements are of type inner. */
static void set_inner(q_expr_t *e, cm_arena_t *arena, q_type_t inner)
{
    set_members(e, arena, &inner, 1);
}

/* The values of a tuple: numbers, strings and dates (an array or a tuple
 * inside one would need more than one level of member types). */
static bool tuple_of(q_expr_t *e, cm_arena_t *arena, cm_buf_t *err, q_expr_t *const *v, size_t n)
{
    q_type_t types[16];
    if (n > 16) {
        cm_buf_append_cstr(err, "A tuple has at most 16 members");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        types[i] = v[i]->type;
        if (types[i] == Q_T_ARRAY || types[i] == Q_T_TUPLE || types[i] == Q_T_ANY) {
            cm_buf_append_cstr(err, "A tuple's members must be numbers, strings or dates");
            return false;
        }
    }
    set_members(e, arena, types, n);
    return true;
}

/* t.n, tupleElement(t, n): the member's type. */
static bool member(q_expr_t *e, const q_expr_t *t, const q_expr_t *n, cm_buf_t *err)
{
    if (e->kind == QE_INDEX && t->kind == QE_FIELD && t->fkind == QF_PROPERTY) {
        /* properties.arr.1: a JSON array's element (1-based), in the
         * property's string form */
        e->type = Q_T_STRING;
        e->nullable = true;
        return true;
    }
    if (t->type != Q_T_TUPLE) {
        cm_buf_append_cstr(err, ".n and tupleElement read a tuple's members");
        return false;
    }
    if (n->kind != QE_INT) {
        cm_buf_append_cstr(err, "A tuple's member is a whole number constant, as in t.1");
        return false;
    }
    if (t->members == NULL) {
        cm_buf_append_cstr(err, "The types of this tuple's members are not known here");
        return false;
    }
    if (n->ival < 1 || (uint64_t)n->ival > t->nmembers) {
        cm_buf_appendf(err, "The tuple has %zu members: .%lld is not one", t->nmembers,
                       (long long)n->ival);
        return false;
    }
    if (t->members[n->ival - 1] == Q_T_ARRAY) { /* sumMap's: its elements' types are not kept */
        cm_buf_append_cstr(err, "A tuple's array member cannot be read with .n or tupleElement "
                                "yet: answer the tuple itself");
        return false;
    }
    e->type = t->members[n->ival - 1];
    e->nullable = t->nullable || e->type == Q_T_NULL;
    return true;
}

bool q_resolve_array_expr(q_expr_t *e, cm_arena_t *arena, cm_buf_t *err)
{
    if (e->kind == QE_TUPLE) {
        e->type = Q_T_TUPLE;
        /* (1, 2) is also IN's list: its members are checked where it is a value */
        q_type_t types[16];
        bool plain = e->args.n <= 16;
        for (size_t i = 0; plain && i < e->args.n; i++) {
            types[i] = e->args.v[i]->type;
            plain = types[i] != Q_T_ARRAY && types[i] != Q_T_TUPLE && types[i] != Q_T_ANY;
        }
        if (plain)
            set_members(e, arena, types, e->args.n);
        return true;
    }
    if (e->kind == QE_INDEX && e->negated)
        return member(e, e->operand, ARG(0), err);
    if (e->kind == QE_ARRAY) {
        q_type_t t = Q_T_NULL;
        for (size_t i = 0; i < e->args.n; i++) {
            t = common(t, ARG(i)->type);
            if (ARG(i)->type == Q_T_ANY || (ARG(i)->type == Q_T_TUPLE && ARG(i)->members == NULL)) {
                cm_buf_append_cstr(
                    err, "An array's items must be numbers, strings, dates, arrays or tuples");
                return false;
            }
        }
        if (t == Q_T_ANY) {
            cm_buf_append_cstr(err, "An array's items must have one type (as in ClickHouse)");
            return false;
        }
        e->type = Q_T_ARRAY;
        e->elem = t == Q_T_NULL && e->args.n > 0 ? Q_T_NULL : t;
        for (size_t i = 0; i < e->args.n; i++)
            e->elem_nullable = e->elem_nullable || ARG(i)->nullable;
        if (t == Q_T_ARRAY) { /* the inner arrays' common element type */
            q_type_t inner = Q_T_NULL;
            for (size_t i = 0; i < e->args.n; i++)
                inner = common(inner, ARG(i)->elem);
            set_inner(e, arena, inner);
        }
        if (t == Q_T_TUPLE) { /* the first's members (ClickHouse wants them alike) */
            e->members = ARG(0)->members;
            e->nmembers = ARG(0)->nmembers;
        }
        if (e->args.n == 0)
            e->elem = Q_T_NULL; /* [] is Array(Nothing) */
        return true;
    }
    /* a[i]: 1-based, negative from the end; past either end the element
     * type's default (ClickHouse's answer) */
    const q_expr_t *a = e->operand, *i = ARG(0);
    if (a->type != Q_T_ARRAY) {
        cm_buf_append_cstr(err, "Only an array can be indexed with [...]");
        return false;
    }
    if (i->kind == QE_INT && i->ival == 0) {
        cm_buf_append_cstr(err, "SQL indexes start from one, not from zero. E.g: array[1]");
        return false;
    }
    if (i->type != Q_T_INT && i->type != Q_T_BOOL) {
        cm_buf_append_cstr(err, "An array index must be a whole number");
        return false;
    }
    e->type = a->elem == Q_T_NULL ? Q_T_NULL : a->elem;
    element_of(e, a);
    e->nullable = a->elem == Q_T_NULL || i->nullable || a->nullable || a->elem_nullable;
    return true;
}

/* The element type of the array argument k (it must be an array). */
static bool array_arg(const q_expr_t *e, size_t k, cm_buf_t *err, q_type_t *elem)
{
    if (k >= e->args.n || ARG(k)->type != Q_T_ARRAY)
        return fail(err, e, "takes an array");
    *elem = ARG(k)->elem;
    return true;
}

bool q_resolve_array_call(q_expr_t *e, cm_arena_t *arena, cm_buf_t *err)
{
    int id = (int)e->ival;
    bool lambda = e->args.n > 0 && ARG(0)->kind == QE_LAMBDA;
    size_t first = lambda; /* the first array argument */
    q_type_t el = Q_T_ANY;
    if ((id == Q_FN_LENGTH || id == Q_FN_EMPTY || id == Q_FN_NOT_EMPTY) && e->args.n == 1 &&
        ARG(0)->type == Q_T_ARRAY) {
        e->ival = id == Q_FN_LENGTH  ? Q_FN_ARRAY_LENGTH
                  : id == Q_FN_EMPTY ? Q_FN_ARRAY_EMPTY
                                     : Q_FN_ARRAY_NOT_EMPTY;
        e->type = id == Q_FN_LENGTH ? Q_T_INT : Q_T_BOOL;
        return true;
    }
    if (id < Q_FN_HAS || id > Q_FN_SUM_MAP)
        return true; /* not an array function */
    if (id >= Q_FN_ARRAY_MAP && id <= Q_FN_ARRAY_FIRST && !lambda &&
        (id == Q_FN_ARRAY_MAP || id == Q_FN_ARRAY_FILTER || id == Q_FN_ARRAY_FIRST ||
         ((id == Q_FN_ARRAY_EXISTS || id == Q_FN_ARRAY_ALL) && e->args.n > 1)))
        return fail(err, e, "takes a lambda first, as in arrayMap(x -> x + 1, arr)");
    if (!lambda && e->args.n >= 2 &&
        (id == Q_FN_ARRAY_COUNT || id == Q_FN_ARRAY_SUM || id == Q_FN_ARRAY_SORT ||
         id == Q_FN_ARRAY_REVERSE_SORT))
        return fail(err, e, "takes a lambda and an array, or one array");
    switch (id) {
    case Q_FN_HAS:
    case Q_FN_INDEX_OF:
    case Q_FN_COUNT_EQUAL:
        if (!array_arg(e, 0, err, &el))
            return false;
        if (el != Q_T_NULL && common(el, ARG(1)->type) == Q_T_ANY)
            return fail(err, e, "compares the array's elements with a value of their type");
        return true;
    case Q_FN_HAS_ALL:
    case Q_FN_HAS_ANY: {
        q_type_t el2;
        if (!array_arg(e, 0, err, &el) || !array_arg(e, 1, err, &el2))
            return false;
        if (common(el, el2) == Q_T_ANY)
            return fail(err, e, "takes two arrays of one element type");
        return true;
    }
    case Q_FN_RANGE:
        for (size_t i = 0; i < e->args.n; i++)
            if (ARG(i)->type != Q_T_INT)
                return fail(err, e, "takes whole numbers");
        e->elem = Q_T_INT;
        return true;
    case Q_FN_ARRAY_CONCAT: {
        q_type_t t = Q_T_NULL;
        for (size_t i = 0; i < e->args.n; i++) {
            if (!array_arg(e, i, err, &el))
                return false;
            t = common(t, el);
            e->elem_nullable = e->elem_nullable || ARG(i)->elem_nullable;
        }
        if (t == Q_T_ANY)
            return fail(err, e, "takes arrays of one element type");
        e->elem = t;
        e->members = ARG(0)->members; /* tuples' or inner arrays' (the first's) */
        e->nmembers = ARG(0)->nmembers;
        return true;
    }
    case Q_FN_ARRAY_SLICE:
        for (size_t i = 1; i < e->args.n; i++)
            if (ARG(i)->type != Q_T_INT)
                return fail(err, e, "takes whole numbers after the array");
        /* fall through */
    case Q_FN_ARRAY_REVERSE:
    case Q_FN_ARRAY_DISTINCT:
    case Q_FN_ARRAY_COMPACT:
    case Q_FN_ARRAY_FILTER:
    case Q_FN_ARRAY_SORT:
    case Q_FN_ARRAY_REVERSE_SORT:
        if (!array_arg(e, first, err, &el))
            return false;
        e->elem = el;
        e->elem_nullable = ARG(first)->elem_nullable;
        e->members = ARG(first)->members;
        e->nmembers = ARG(first)->nmembers;
        return true;
    case Q_FN_ARRAY_ENUMERATE:
        if (!array_arg(e, 0, err, &el))
            return false;
        e->elem = Q_T_INT;
        return true;
    case Q_FN_SPLIT_BY_CHAR:
    case Q_FN_SPLIT_BY_STRING: {
        /* ClickHouse's rules: a constant separator, one byte for
         * splitByChar, not empty for splitByString (18.16 refuses it; later
         * versions would cut into characters); an array cannot be NULL, so
         * a string that may be NULL is ClickHouse's error too */
        const q_expr_t *sep = ARG(0), *s = ARG(1);
        bool one = id == Q_FN_SPLIT_BY_CHAR;
        if (sep->kind != QE_STRING || (one ? sep->text.len != 1 : sep->text.len == 0))
            return fail(err, e,
                        one ? "takes a one-byte string constant as its separator"
                            : "takes a non-empty string constant as its separator");
        if (s->type != Q_T_STRING && s->type != Q_T_ANY && s->type != Q_T_NULL)
            return fail(err, e, "splits a string (convert it with toString first)");
        if (s->nullable || s->type == Q_T_NULL)
            return fail(err, e,
                        "needs a string that is never NULL (an array cannot be NULL): wrap it in "
                        "ifNull(x, '')");
        e->elem = Q_T_STRING;
        return true;
    }
    case Q_FN_ARRAY_STRING_CONCAT:
        if (!array_arg(e, 0, err, &el))
            return false;
        if (el != Q_T_STRING)
            return fail(err, e, "takes an array of strings (map it with toString first)");
        if (e->args.n > 1 && ARG(1)->kind != QE_STRING)
            return fail(err, e, "takes a string constant as its separator");
        return true;
    case Q_FN_ARRAY_ELEMENT: {
        q_expr_t idx = {.kind = QE_INDEX, .operand = ARG(0), .args = {&ARG(1), 1}};
        if (!q_resolve_array_expr(&idx, arena, err))
            return false;
        e->type = idx.type;
        e->nullable = idx.nullable;
        e->members = ARG(0)->members;
        e->nmembers = ARG(0)->nmembers;
        return true;
    }
    case Q_FN_ARRAY_MAP:
        if (!array_arg(e, 1, err, &el))
            return false;
        if (ARG(0)->type == Q_T_ANY ||
            (ARG(0)->type == Q_T_TUPLE && ARG(0)->operand->members == NULL))
            return fail(err, e, "needs a lambda that gives a number, string, date, array or tuple");
        e->elem = ARG(0)->type;
        e->elem_nullable = ARG(0)->nullable;
        e->members = ARG(0)->operand->members;
        e->nmembers = ARG(0)->operand->nmembers;
        if (e->elem == Q_T_ARRAY)
            set_inner(e, arena, ARG(0)->operand->elem);
        return true;
    case Q_FN_ARRAY_EXISTS:
    case Q_FN_ARRAY_ALL:
    case Q_FN_ARRAY_COUNT: return array_arg(e, first, err, &el);
    case Q_FN_ARRAY_SUM: {
        if (!array_arg(e, first, err, &el))
            return false;
        q_type_t t = lambda ? ARG(0)->type : el;
        if (!numeric(t)) /* [] too: ClickHouse cannot add Nothing */
            return fail(err, e, "adds numbers");
        e->type = t == Q_T_FLOAT ? Q_T_FLOAT : Q_T_INT;
        return true;
    }
    case Q_FN_ARRAY_FIRST:
        if (!array_arg(e, 1, err, &el))
            return false;
        e->type = el;
        e->nullable = ARG(1)->elem_nullable;
        element_of(e, ARG(1));
        return true;
    case Q_FN_GROUP_ARRAY:
    case Q_FN_GROUP_UNIQ_ARRAY:
    case Q_FN_TOP_K:
        if (ARG(0)->type == Q_T_ARRAY || ARG(0)->type == Q_T_TUPLE || ARG(0)->type == Q_T_ANY)
            return fail(err, e, "takes numbers, strings or dates");
        if (id == Q_FN_TOP_K && (e->params.v[0]->kind != QE_INT || e->params.v[0]->ival < 1 ||
                                 e->params.v[0]->ival > 1000))
            return fail(err, e, "takes a count from 1 to 1000, as in topK(10)(x)");
        e->elem = ARG(0)->type;
        return true;
    case Q_FN_QUANTILES: /* NULL over no values */
        e->elem = Q_T_FLOAT;
        e->elem_nullable = true;
        return true;
    case Q_FN_TUPLE: return tuple_of(e, arena, err, e->args.v, e->args.n);
    case Q_FN_TUPLE_ELEMENT: return member(e, ARG(0), ARG(1), err);
    case Q_FN_ARRAY_ZIP: {
        q_type_t types[16];
        for (size_t i = 0; i < e->args.n; i++) {
            if (!array_arg(e, i, err, &types[i]))
                return false;
            if (types[i] == Q_T_ARRAY || types[i] == Q_T_TUPLE || types[i] == Q_T_ANY ||
                types[i] == Q_T_NULL)
                return fail(err, e, "takes arrays of numbers, strings or dates");
        }
        e->elem = Q_T_TUPLE;
        set_members(e, arena, types, e->args.n);
        return true;
    }
    case Q_FN_SUM_MAP: {
        /* ClickHouse sums each key's values; the keys whole numbers or
         * strings (which compare alike on both stores), the values numbers,
         * neither nullable (ClickHouse refuses Nullable elements) */
        q_type_t val;
        if (!array_arg(e, 0, err, &el) || !array_arg(e, 1, err, &val))
            return false;
        if ((el != Q_T_INT && el != Q_T_STRING) || ARG(0)->elem_nullable)
            return fail(err, e,
                        "takes an array of whole numbers or strings, none NULL, as its keys");
        if ((val != Q_T_INT && val != Q_T_FLOAT) || ARG(1)->elem_nullable)
            return fail(err, e,
                        "takes an array of numbers, none NULL, as its values (wrap a "
                        "nullable one in ifNull(x, 0))");
        q_type_t two[2] = {Q_T_ARRAY, Q_T_ARRAY};
        set_members(e, arena, two, 2);
        e->elem = el; /* the keys' type, for the printers (print_fn_map.c) */
        return true;
    }
    case Q_FN_ARRAY_JOIN:
        if (!array_arg(e, 0, err, &el))
            return false;
        if (el == Q_T_NULL)
            return fail(err, e, "of [] gives no rows: it needs elements of a type");
        e->type = el;
        e->nullable = ARG(0)->elem_nullable;
        element_of(e, ARG(0));
        return true;
    default: return true;
    }
}

/* ---- lambdas' parameters and ARRAY JOIN's element ------------------------------------- */

bool q_lambda_params(q_expr_t *call, cm_arena_t *arena, cm_buf_t *err)
{
    q_expr_t *l = call->args.v[0];
    size_t narrays = call->args.n - 1;
    if (l->nchain != narrays) {
        cm_buf_appendf(err, "The lambda of %.*s takes %zu parameter%s, one per array",
                       (int)call->text.len, call->text.p, narrays, narrays == 1 ? "" : "s");
        return false;
    }
    l->args.v = cm_arena_alloc(arena, narrays * sizeof(*l->args.v));
    l->args.n = narrays;
    for (size_t i = 0; i < narrays; i++) {
        const q_expr_t *a = call->args.v[i + 1];
        if (a->type != Q_T_ARRAY) {
            cm_buf_appendf(err, "%.*s takes arrays after its lambda", (int)call->text.len,
                           call->text.p);
            return false;
        }
        q_expr_t *p = cm_arena_alloc(arena, sizeof(*p));
        *p = (q_expr_t){
            .kind = QE_NULL, .type = a->elem, .nullable = a->elem_nullable, .resolved = true};
        element_of(p, a);
        l->args.v[i] = p;
    }
    return true;
}

void q_bind_lambda_param(q_expr_t *e, q_expr_t *lambda, size_t i)
{
    const q_expr_t *p = lambda->args.v[i]; /* the element's type (q_lambda_params) */
    e->fkind = QF_LAMBDA;
    e->alias_of = lambda;
    e->ival = (int64_t)i;
    e->type = p->type;
    e->elem = p->elem;
    e->members = p->members;
    e->nmembers = p->nmembers;
    e->nullable = p->nullable;
}

q_expr_t *q_array_join_element(cm_arena_t *arena, const q_from_t *f, unsigned id)
{
    q_expr_t *el = cm_arena_alloc(arena, sizeof(*el));
    q_list_t args = {cm_arena_alloc(arena, sizeof(q_expr_t *)), 1};
    args.v[0] = f->on;
    *el = (q_expr_t){.kind = QE_CALL,
                     .text = CM_SLICE_LIT("arrayJoin"),
                     .ival = Q_FN_ARRAY_JOIN,
                     .negated = true,
                     .distinct = f->join == QJ_LEFT, /* LEFT: an empty array's row stays */
                     .value = id,
                     .args = args,
                     .depth = f->on->depth,
                     .type = f->on->elem,
                     .nullable = f->on->elem_nullable,
                     .resolved = true};
    element_of(el, f->on);
    return el;
}

/* The clause ends the FROM, so its name is looked up before the sources'. */
bool q_bind_array_join(q_expr_t *e, const q_select_t *s)
{
    const q_from_t *f = s->from;
    if (e->nchain != 1)
        return false;
    while (f != NULL && f->kind == QJ_ARRAY && !cm_slice_eq(f->alias, e->chain[0]))
        f = f->zipped ? f->left : NULL; /* the clause's other arrays */
    if (f == NULL || f->kind != QJ_ARRAY || f->element == NULL)
        return false;
    e->fkind = QF_ALIAS;
    e->alias_of = f->element;
    e->type = f->element->type;
    e->members = f->element->members;
    e->nmembers = f->element->nmembers;
    e->nullable = f->element->nullable;
    return true;
}
