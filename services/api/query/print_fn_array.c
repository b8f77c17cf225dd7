/*
 * print_fn_array.c - arrays, tuples and array-valued aggregates for
 * SQLite and ClickHouse (docs/endpoints.md "Arrays, tuples and lambdas");
 * lambdas and arrayJoin are print_fn_lambda.c's.
 *
 * ClickHouse has them natively. On SQLite an array or a tuple is JSON text
 * (json_array(...)); a function over one reads its elements with
 * json_each, in the array's order (ORDER BY key), and builds a new one
 * with json_group_array. An array put inside another goes through json()
 * so that it stays an array, not text.
 *
 * Array-valued aggregates answer in a stated order on both stores, since
 * neither promises the order rows reach an aggregate: groupArray and
 * groupUniqArray sorted, topK(n) by count descending then value (exact).
 * SQLite cannot order what one aggregate sees, so libcommon's cm_array_agg
 * orders json_group_array's answer (evstore/evstore_arrayfns.c).
 */
#include <inttypes.h>
#include <string.h>

#include "query/print_fn_array.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)
#define ARG(i)  (e->args.v[(i)])

/* SQLite: an element past the end reads as ClickHouse's default of its type. */
const char *q_plite_default(q_type_t t)
{
    switch (t) {
    case Q_T_STRING:
    case Q_T_UUID: return "''";
    case Q_T_DATETIME: return "'1970-01-01 00:00:00'";
    case Q_T_DATE: return "'1970-01-01'";
    case Q_T_FLOAT: return "0.0";
    case Q_T_INT:
    case Q_T_BOOL: return "0";
    case Q_T_ARRAY: return "'[]'";
    default: return "NULL";
    }
}

/* SQLite: a value placed in json_array or json_group_array (an array as JSON). */
static void lite_item(q_printer_t *pr, const q_expr_t *e)
{
    if (e->type != Q_T_ARRAY && e->type != Q_T_TUPLE) {
        q_pexpr(pr, e);
        return;
    }
    P("json(");
    q_pexpr(pr, e);
    P(")");
}

/* SQLite: the column v of a subquery of elements, in json_group_array. */
void q_plite_v(q_printer_t *pr, q_type_t t)
{
    P(t == Q_T_ARRAY || t == Q_T_TUPLE ? "json(v)" : "v");
}

/* A tuple's values: tuple(...) on ClickHouse, a JSON array on SQLite. */
static void ptuple(q_printer_t *pr, const q_expr_t *e)
{
    P(pr->ch ? "tuple(" : "json_array(");
    for (size_t i = 0; i < e->args.n; i++) {
        if (i)
            P(", ");
        q_pexpr(pr, ARG(i));
    }
    P(")");
}

/* t.n */
static void pmember(q_printer_t *pr, const q_expr_t *t, int64_t n)
{
    if (pr->ch) {
        P("tupleElement(");
        q_pexpr(pr, t);
        PF(", %" PRId64 ")", n);
        return;
    }
    P("json_extract(");
    q_pexpr(pr, t);
    PF(", '$[%" PRId64 "]')", n - 1);
}

void q_parray(q_printer_t *pr, const q_expr_t *e)
{
    if (e->kind == QE_TUPLE) {
        ptuple(pr, e);
        return;
    }
    P(pr->ch ? "[" : "json_array(");
    for (size_t i = 0; i < e->args.n; i++) {
        if (i)
            P(", ");
        if (pr->ch)
            q_pexpr(pr, ARG(i));
        else
            lite_item(pr, ARG(i));
    }
    P(pr->ch ? "]" : ")");
}

/* a[i]: 1-based, negative from the end, past either end the default. */
static void pindex(q_printer_t *pr, const q_expr_t *a, const q_expr_t *i, q_type_t elem)
{
    const char *dflt = a->elem_nullable ? "NULL" : q_plite_default(elem); /* Nullable's is NULL */
    if (pr->ch) {
        q_pexpr(pr, a);
        P("[");
        q_pexpr(pr, i);
        P("]");
        return;
    }
    /* json_type is NULL past the ends, 'null' for a NULL element (kept) */
    for (int k = 0; k < 2; k++) {
        P(k ? " ELSE json_extract(" : "(CASE WHEN json_type(");
        q_pexpr(pr, a);
        P(", CASE WHEN ");
        q_pexpr(pr, i);
        P(" > 0 THEN '$[' || (");
        q_pexpr(pr, i);
        P(" - 1) || ']' ELSE '$[#' || ");
        q_pexpr(pr, i);
        P(" || ']' END)");
        if (k == 0)
            PF(" IS NULL THEN %s", dflt);
    }
    P(" END)");
}

/* fn(s<id>.column, 'k1', ..., n) */
static void pjson_path_call(q_printer_t *pr, const char *fn, const q_expr_t *f, int64_t n)
{
    PF("%s(s%u.%s", fn, f->source->id, f->column);
    for (size_t i = f->path_from; i < f->nchain; i++) {
        P(", ");
        q_pstring(pr, f->chain[i]);
    }
    PF(", %" PRId64 ")", n);
}

/* properties.arr.1: the element of a JSON array in a property, as
 * properties.x reads (a string's text, other values as JSON, NULL for JSON
 * null or nothing there). SQLite: the JSON path $."arr"[0]; ClickHouse:
 * JSONExtract's index (1-based), which 18.16 lacks. */
static void pproperty_element(q_printer_t *pr, const q_expr_t *f, int64_t n)
{
    if (pr->ch && !q_ch_modern(pr)) {
        q_pfail(pr, "An element of a property's array (properties.x.1) needs ClickHouse 19.3 or "
                    "later");
        return;
    }
    if (pr->ch) {
        P("multiIf(");
        pjson_path_call(pr, "JSONType", f, n);
        P(" = 'String', ");
        pjson_path_call(pr, "JSONExtractString", f, n);
        P(", NOT ");
        pjson_path_call(pr, "JSONHas", f, n);
        P(" OR ");
        pjson_path_call(pr, "JSONType", f, n);
        P(" = 'Null', NULL, ");
        pjson_path_call(pr, "JSONExtractRaw", f, n);
        P(")");
        return;
    }
    cm_buf_t path = CM_BUF_INIT;
    cm_buf_append(&path, "$", 1);
    for (size_t i = f->path_from; i < f->nchain; i++) {
        cm_slice_t k = f->chain[i];
        if (memchr(k.p, '"', k.len) != NULL || memchr(k.p, '\0', k.len) != NULL) {
            q_pfail(pr, "Property names with '\"' cannot be read on this store");
            break;
        }
        cm_buf_appendf(&path, ".\"%.*s\"", (int)k.len, k.p);
    }
    cm_buf_appendf(&path, "[%" PRId64 "]", n - 1);
    cm_slice_t ps = cm_buf_slice(&path);
    static const char *const parts[] = {"(CASE json_type(", ") WHEN 'text' THEN ",
                                        " WHEN 'null' THEN NULL ELSE ", " END)"};
    P(parts[0]);
    PF("s%u.%s, ", f->source->id, f->column);
    q_pstring(pr, ps);
    P(parts[1]);
    PF("s%u.%s ->> ", f->source->id, f->column);
    q_pstring(pr, ps);
    P(parts[2]);
    PF("s%u.%s -> ", f->source->id, f->column);
    q_pstring(pr, ps);
    P(parts[3]);
    cm_buf_free(&path);
}

void q_pindex(q_printer_t *pr, const q_expr_t *e)
{
    const q_expr_t *a = e->operand;
    if (e->negated && a->kind == QE_FIELD && a->fkind == QF_PROPERTY)
        pproperty_element(pr, a, ARG(0)->ival);
    else if (e->negated)
        pmember(pr, e->operand, ARG(0)->ival);
    else
        pindex(pr, e->operand, ARG(0), e->type);
}

#define ESCAPE_OPEN  "replaceAll(replaceAll("
#define ESCAPE_CLOSE ", '\\\\', '\\\\\\\\'), '\\'', '\\\\\\'')"

/* tuple(...) of _t's members, its strings escaped */
static void escaped_tuple(q_printer_t *pr, const q_expr_t *e)
{
    P("_t -> tuple(");
    for (size_t i = 0; i < e->nmembers; i++) {
        bool s = e->members[i] == Q_T_STRING;
        PF("%s%stupleElement(_t, %zu)%s", i ? ", " : "", s ? ESCAPE_OPEN : "", i + 1,
           s ? ESCAPE_CLOSE : "");
    }
    P(")");
}

static bool has_string_member(const q_expr_t *e)
{
    for (size_t i = 0; i < e->nmembers; i++)
        if (e->members[i] == Q_T_STRING)
            return true;
    return false;
}

const char *q_pout_open(q_printer_t *pr, const q_expr_t *e)
{
    /* ClickHouse's TabSeparated answer writes an array's or a tuple's
     * strings quoted with backslash escapes and the reading undoes one
     * level of escapes: doubled here, the reader (evstore_array.c) gets
     * them exactly */
    if (!pr->ch || pr->o->whole)
        return NULL;
    if (e->type == Q_T_ARRAY && e->elem == Q_T_STRING) {
        P("arrayMap(_e -> " ESCAPE_OPEN "_e" ESCAPE_CLOSE ", ");
        return ")";
    }
    if (e->type == Q_T_ARRAY && e->elem == Q_T_ARRAY && e->nmembers == 1 &&
        e->members[0] == Q_T_STRING) {
        P("arrayMap(_a -> arrayMap(_e -> " ESCAPE_OPEN "_e" ESCAPE_CLOSE ", _a), ");
        return ")";
    }
    if (e->type == Q_T_ARRAY &&
        (e->elem == Q_T_ANY ||
         (e->elem == Q_T_ARRAY && (e->nmembers != 1 || e->members[0] == Q_T_ANY ||
                                   e->members[0] == Q_T_ARRAY || e->members[0] == Q_T_TUPLE)))) {
        /* its strings could not be read back exactly */
        q_pfail(pr, "An array nested deeper than two levels, or of elements of no known type, "
                    "cannot be answered on ClickHouse");
        return NULL;
    }
    if (e->type == Q_T_ARRAY && e->elem == Q_T_TUPLE && has_string_member(e)) {
        P("arrayMap(");
        escaped_tuple(pr, e);
        P(", ");
        return ")";
    }
    if ((e->type == Q_T_TUPLE || (e->type == Q_T_ARRAY && e->elem == Q_T_TUPLE)) &&
        e->members == NULL) {
        /* its members' types are not known here (a subquery's column) */
        q_pfail(pr, "A tuple column of a subquery cannot be answered as it is on ClickHouse: "
                    "name its members (t.1, t.2) or answer it from the subquery");
        return NULL;
    }
    if (e->type == Q_T_TUPLE && e->nmembers == 2 && e->members[0] == Q_T_ARRAY)
        return q_psum_map_out_open(pr, e); /* the only tuple of arrays */
    if (e->type == Q_T_TUPLE && has_string_member(e)) {
        P("arrayMap(");
        escaped_tuple(pr, e);
        P(", [");
        return "])[1]";
    }
    return NULL;
}

/* ---- functions of arrays -------------------------------------------------------------- */

/* SQLite: (SELECT <what> FROM json_each(a) AS _a<d> WHERE _a<d>.value IS x ...) */
static void lite_find(q_printer_t *pr, const q_expr_t *e, const char *what, const char *tail)
{
    PF("(SELECT %s FROM json_each(", what);
    q_pexpr(pr, ARG(0));
    PF(") AS _a%u WHERE _a%u.value IS ", (unsigned)e->depth, (unsigned)e->depth);
    q_pexpr(pr, ARG(1));
    P(tail);
    P(")");
}

/* SQLite: hasAll / hasAny: every (some) element of the second array is in the first. */
static void lite_has_set(q_printer_t *pr, const q_expr_t *e, bool all)
{
    unsigned d = e->depth;
    P(all ? "(NOT EXISTS (SELECT 1 FROM json_each(" : "(EXISTS (SELECT 1 FROM json_each(");
    q_pexpr(pr, ARG(1));
    PF(") AS _b%u WHERE %sEXISTS (SELECT 1 FROM json_each(", d, all ? "NOT " : "");
    q_pexpr(pr, ARG(0));
    PF(") AS _a%u WHERE _a%u.value IS _b%u.value)))", d, d, d);
}

/* range(end), range(start, end[, step]): SQLite counts with a recursive CTE. */
static void prange(q_printer_t *pr, const q_expr_t *e)
{
    size_t n = e->args.n;
    if (pr->ch) {
        if (n > 1 && !q_ch_modern(pr)) {
            q_pfail(pr, "range(start, end) needs ClickHouse 21+ (this store runs 18.16)");
            return;
        }
        q_psame(pr, "range", e);
        return;
    }
    const q_expr_t *start = n > 1 ? ARG(0) : NULL, *end = ARG(n > 1 ? 1 : 0);
    const q_expr_t *step = n > 2 ? ARG(2) : NULL;
    if (step != NULL && (step->kind != QE_INT || step->ival < 1)) {
        q_pfail(pr, "range's step must be a positive whole number constant on the SQLite store");
        return;
    }
    unsigned d = e->depth;
    PF("(WITH RECURSIVE _r%u(i) AS (SELECT ", d);
    if (start)
        q_pexpr(pr, start);
    else
        P("0");
    P(" AS i WHERE i < ");
    q_pexpr(pr, end);
    PF(" UNION ALL SELECT i + %" PRId64 " FROM _r%u WHERE i + %" PRId64 " < ",
       step ? step->ival : 1, d, step ? step->ival : 1);
    q_pexpr(pr, end);
    PF(") SELECT json_group_array(i) FROM _r%u)", d);
}

static void pconcat(q_printer_t *pr, const q_expr_t *e)
{
    if (pr->ch) {
        q_psame(pr, "arrayConcat", e);
        return;
    }
    P("(SELECT json_group_array(");
    q_plite_v(pr, e->elem);
    P(") FROM (");
    for (size_t i = 0; i < e->args.n; i++) {
        PF("%sSELECT %zu AS o, key AS k, value AS v FROM json_each(", i ? " UNION ALL " : "", i);
        q_pexpr(pr, ARG(i));
        P(")");
    }
    P(" ORDER BY o, k))");
}

/* arraySlice(a, offset[, length]): offset 1-based or from the end when
 * negative (0: nothing), length negative: up to that many from the end. */
static void pslice(q_printer_t *pr, const q_expr_t *e)
{
    if (pr->ch) {
        q_psame(pr, "arraySlice", e);
        return;
    }
    unsigned d = e->depth;
    const q_expr_t *a = ARG(0), *off = ARG(1), *len = e->args.n > 2 ? ARG(2) : NULL;
    P("(SELECT json_group_array(");
    q_plite_v(pr, e->elem);
    PF(") FROM (SELECT _a%u.value AS v FROM json_each(", d);
    q_pexpr(pr, a);
    PF(") AS _a%u WHERE ", d);
    q_pexpr(pr, off);
    PF(" != 0 AND _a%u.key >= (CASE WHEN ", d);
    q_pexpr(pr, off);
    P(" > 0 THEN ");
    q_pexpr(pr, off);
    P(" - 1 ELSE json_array_length(");
    q_pexpr(pr, a);
    P(") + ");
    q_pexpr(pr, off);
    P(" END)");
    if (len != NULL) {
        PF(" AND _a%u.key < (CASE WHEN ", d);
        q_pexpr(pr, len);
        P(" >= 0 THEN (CASE WHEN ");
        q_pexpr(pr, off);
        P(" > 0 THEN ");
        q_pexpr(pr, off);
        P(" - 1 ELSE json_array_length(");
        q_pexpr(pr, a);
        P(") + ");
        q_pexpr(pr, off);
        P(" END) + ");
        q_pexpr(pr, len);
        P(" ELSE json_array_length(");
        q_pexpr(pr, a);
        P(") + ");
        q_pexpr(pr, len);
        P(" END)");
    }
    PF(" ORDER BY _a%u.key))", d);
}

/* SQLite: the elements of a reversed, each first occurrence in order
 * (NULLs left out), or their positions. */
enum { L_REVERSE, L_DISTINCT, L_ENUMERATE };
static void lite_elements(q_printer_t *pr, const q_expr_t *e, int how)
{
    unsigned d = e->depth;
    P("(SELECT json_group_array(");
    q_plite_v(pr, e->elem);
    P(") FROM (SELECT ");
    if (how == L_ENUMERATE)
        PF("_a%u.key + 1 AS v, _a%u.key AS k", d, d);
    else if (how == L_DISTINCT)
        PF("_a%u.value AS v, min(_a%u.key) AS k", d, d);
    else
        PF("_a%u.value AS v, _a%u.key AS k", d, d);
    P(" FROM json_each(");
    q_pexpr(pr, ARG(0));
    PF(") AS _a%u", d);
    if (how == L_DISTINCT)
        PF(" WHERE _a%u.value IS NOT NULL GROUP BY _a%u.value", d, d);
    P(how == L_REVERSE ? " ORDER BY k DESC))" : " ORDER BY k))");
}

/* SQLite: an element is kept unless it equals the one before it. */
static void pcompact_lite(q_printer_t *pr, const q_expr_t *e)
{
    unsigned d = e->depth;
    P("(SELECT json_group_array(");
    q_plite_v(pr, e->elem);
    PF(") FROM (SELECT _a%u.value AS v FROM json_each(", d);
    q_pexpr(pr, ARG(0));
    PF(") AS _a%u WHERE _a%u.key = 0 OR _a%u.value IS NOT (SELECT _z%u.value FROM json_each(", d, d,
       d, d);
    q_pexpr(pr, ARG(0));
    PF(") AS _z%u WHERE _z%u.key = _a%u.key - 1) ORDER BY _a%u.key))", d, d, d, d);
}

static void pstring_concat(q_printer_t *pr, const q_expr_t *e)
{
    if (pr->ch) {
        q_psame(pr, "arrayStringConcat", e);
        return;
    }
    unsigned d = e->depth;
    P("(SELECT coalesce(group_concat(v, ");
    if (e->args.n > 1)
        q_pexpr(pr, ARG(1));
    else
        P("''");
    PF("), '') FROM (SELECT _a%u.value AS v FROM json_each(", d);
    q_pexpr(pr, ARG(0));
    PF(") AS _a%u ORDER BY _a%u.key))", d, d);
}

static void array_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    switch (id) {
    case Q_FN_ARRAY_LENGTH:
    case Q_FN_ARRAY_EMPTY:
    case Q_FN_ARRAY_NOT_EMPTY:
        if (pr->ch) {
            q_psame(pr,
                    id == Q_FN_ARRAY_LENGTH  ? "length"
                    : id == Q_FN_ARRAY_EMPTY ? "empty"
                                             : "notEmpty",
                    e);
            return;
        }
        P("(json_array_length(");
        q_pexpr(pr, ARG(0));
        P(id == Q_FN_ARRAY_LENGTH ? "))" : id == Q_FN_ARRAY_EMPTY ? ") = 0)" : ") != 0)");
        return;
    case Q_FN_HAS:
        if (pr->ch)
            return q_psame(pr, "has", e);
        P("(EXISTS ");
        lite_find(pr, e, "1", "");
        P(")");
        return;
    case Q_FN_INDEX_OF:
        if (pr->ch)
            return q_psame(pr, "indexOf", e);
        P("coalesce(");
        lite_find(pr, e, "key + 1", " ORDER BY key LIMIT 1");
        P(", 0)");
        return;
    case Q_FN_COUNT_EQUAL:
        if (pr->ch)
            return q_psame(pr, "countEqual", e);
        lite_find(pr, e, "count(*)", "");
        return;
    case Q_FN_HAS_ALL:
    case Q_FN_HAS_ANY:
        if (pr->ch)
            return q_psame(pr, id == Q_FN_HAS_ALL ? "hasAll" : "hasAny", e);
        lite_has_set(pr, e, id == Q_FN_HAS_ALL);
        return;
    case Q_FN_RANGE: prange(pr, e); return;
    case Q_FN_ARRAY_CONCAT: pconcat(pr, e); return;
    case Q_FN_ARRAY_SLICE: pslice(pr, e); return;
    case Q_FN_ARRAY_REVERSE:
        if (pr->ch)
            return q_psame(pr, "arrayReverse", e);
        lite_elements(pr, e, L_REVERSE);
        return;
    case Q_FN_ARRAY_DISTINCT: /* first occurrences, in order; NULLs left out */
        if (pr->ch)
            return q_psame(pr, "arrayDistinct", e);
        lite_elements(pr, e, L_DISTINCT);
        return;
    case Q_FN_ARRAY_COMPACT: /* consecutive duplicates dropped */
        if (pr->ch && !q_ch_modern(pr)) {
            q_pfail(pr, "arrayCompact needs ClickHouse 21+ (this store runs 18.16)");
            return;
        }
        if (pr->ch)
            return q_psame(pr, "arrayCompact", e);
        pcompact_lite(pr, e);
        return;
    case Q_FN_ARRAY_ENUMERATE:
        if (pr->ch)
            return q_psame(pr, "arrayEnumerate", e);
        lite_elements(pr, e, L_ENUMERATE);
        return;
    case Q_FN_ARRAY_STRING_CONCAT: pstring_concat(pr, e); return;
    case Q_FN_ARRAY_ELEMENT: pindex(pr, ARG(0), ARG(1), e->type); return;
    }
}

/* ---- array-valued aggregates ------------------------------------------------------------ */

static void aggregate(q_printer_t *pr, const q_expr_t *e, int id)
{
    const q_expr_t *x = ARG(0);
    if (id == Q_FN_QUANTILES) { /* each level as quantile(l)(x) prints it */
        P(pr->ch ? "[" : "json_array(");
        for (size_t i = 0; i < e->params.n; i++) {
            q_expr_t one = *e;
            one.ival = Q_FN_QUANTILE;
            one.text = CM_SLICE_LIT("quantile");
            one.params = (q_list_t){&e->params.v[i], 1};
            if (i)
                P(", ");
            q_pcall(pr, &one);
        }
        P(pr->ch ? "]" : ")");
        return;
    }
    if (!pr->ch) {
        P("cm_array_agg(json_group_array(");
        q_pexpr(pr, x);
        P(id == Q_FN_GROUP_ARRAY        ? "), 'a', NULL)"
          : id == Q_FN_GROUP_UNIQ_ARRAY ? "), 'u', NULL)"
                                        : "), 'k', ");
        if (id == Q_FN_TOP_K)
            PF("%" PRId64 ")", e->params.v[0]->ival);
        return;
    }
    if (id != Q_FN_TOP_K) {
        P(id == Q_FN_GROUP_ARRAY ? "arraySort(groupArray(" : "arraySort(groupUniqArray(");
        q_pexpr(pr, x);
        P("))");
        return;
    }
    /* exact: the distinct values by count descending, then value */
    P("arraySlice(arraySort((_v, _c) -> (-_c, _v), arraySort(groupUniqArray(");
    q_pexpr(pr, x);
    P(")), arrayMap(_v -> toInt64(countEqual(groupArray(");
    q_pexpr(pr, x);
    P("), _v)), arraySort(groupUniqArray(");
    q_pexpr(pr, x);
    PF(")))), 1, %" PRId64 ")", e->params.v[0]->ival);
}

/* Whether e computes an aggregate of its SELECT (an alias is printed in place). */
bool q_phas_aggregate(const q_expr_t *e)
{
    if (e == NULL || e->kind == QE_SUBQUERY)
        return false;
    if (e->kind == QE_FIELD)
        return e->fkind == QF_ALIAS && q_phas_aggregate(e->alias_of);
    if (e->kind == QE_CALL && e->over == NULL) {
        const q_fn_t *fn = q_fn_lookup(e->text);
        if (fn != NULL && fn->cls == QF_AGGREGATE)
            return true;
    }
    for (size_t i = 0; i < e->args.n; i++)
        if (q_phas_aggregate(e->args.v[i]))
            return true;
    return q_phas_aggregate(e->operand) || q_phas_aggregate(e->else_);
}

/* SQLite reads an array's elements in a subquery's FROM (json_each), where
 * an aggregate of the SELECT around it cannot be: has(groupArray(x), 'a')
 * is refused there (a subquery computing the array first runs). */
static bool lite_over_aggregate(q_printer_t *pr, const q_expr_t *e, int id)
{
    if (pr->ch || id == Q_FN_ARRAY_LENGTH || id == Q_FN_ARRAY_EMPTY || id == Q_FN_ARRAY_NOT_EMPTY ||
        id == Q_FN_ARRAY_ELEMENT || id == Q_FN_RANGE ||
        (id >= Q_FN_GROUP_ARRAY && id <= Q_FN_TOP_K))
        return false;
    for (size_t i = 0; i < e->args.n; i++)
        if (e->args.v[i]->type == Q_T_ARRAY && q_phas_aggregate(e->args.v[i])) {
            q_pfail(pr,
                    "%.*s over an aggregate's array is not supported on the SQLite store: "
                    "compute the array in a subquery (SELECT ... FROM (SELECT groupArray(x) AS a "
                    "...))",
                    (int)e->text.len, e->text.p);
            return true;
        }
    return false;
}

/* arrayZip(a, b, ...): tuples of the elements at each position; the arrays
 * must be as long as each other (ClickHouse fails the query otherwise;
 * SQLite answers NULL, as it cannot fail one). */
static void pzip(q_printer_t *pr, const q_expr_t *e)
{
    if (pr->ch && !q_ch_modern(pr)) {
        q_pfail(pr, "arrayZip needs ClickHouse 21+ (this store runs 18.16)");
        return;
    }
    if (pr->ch) {
        q_psame(pr, "arrayZip", e);
        return;
    }
    unsigned d = e->depth;
    P("(CASE WHEN ");
    for (size_t i = 1; i < e->args.n; i++) {
        P(i > 1 ? " AND json_array_length(" : "json_array_length(");
        q_pexpr(pr, ARG(0));
        P(") = json_array_length(");
        q_pexpr(pr, ARG(i));
        P(")");
    }
    if (e->args.n == 1)
        P("1");
    P(" THEN (SELECT json_group_array(json(v)) FROM (SELECT json_array(");
    for (size_t i = 0; i < e->args.n; i++)
        PF("%s_z%u_%zu.value", i ? ", " : "", d, i);
    P(") AS v FROM ");
    for (size_t i = 0; i < e->args.n; i++) {
        P(i ? " JOIN json_each(" : "json_each(");
        q_pexpr(pr, ARG(i));
        PF(") AS _z%u_%zu", d, i);
        if (i)
            PF(" ON _z%u_%zu.key = _z%u_0.key", d, i, d);
    }
    PF(" ORDER BY _z%u_0.key)) END)", d);
}

/* The call if it is one of this file's functions (print_fn.c dispatches). */
bool q_pcall_array(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    if (id >= Q_FN_HAS && id <= Q_FN_ARRAY_NOT_EMPTY && lite_over_aggregate(pr, e, id))
        return true;
    if (id == Q_FN_TUPLE) {
        q_expr_t t = *e;
        t.kind = QE_TUPLE;
        q_parray(pr, &t);
        return true;
    }
    if (id == Q_FN_TUPLE_ELEMENT) {
        pmember(pr, ARG(0), ARG(1)->ival);
        return true;
    }
    if (id == Q_FN_ARRAY_ZIP) {
        pzip(pr, e);
        return true;
    }
    if (id == Q_FN_ARRAY_JOIN && e->negated) { /* ARRAY JOIN's element */
        if (pr->ch)
            PF("_aj%zu", e->value);
        else if (e->distinct) /* LEFT: an empty array's row gets the default, as ClickHouse */
            PF("coalesce(_j%zu.value, %s)", e->value,
               e->nullable ? "NULL" : q_plite_default(e->type));
        else
            PF("_j%zu.value", e->value);
        return true;
    }
    if (id == Q_FN_ARRAY_JOIN) {
        if (pr->ch)
            q_psame(pr, "arrayJoin", e);
        else
            PF("_j%zu.value", e->value);
        return true;
    }
    if (id == Q_FN_SPLIT_BY_CHAR || id == Q_FN_SPLIT_BY_STRING) {
        /* SQLite: libcommon's cm_split (evstore_arrayfns.c), ClickHouse's cuts */
        if (pr->ch) {
            q_psame(pr, id == Q_FN_SPLIT_BY_CHAR ? "splitByChar" : "splitByString", e);
            return true;
        }
        P("cm_split(");
        q_pargs(pr, e, 0);
        P(")");
        return true;
    }
    if (id == Q_FN_SUM_MAP)
        q_psum_map(pr, e);
    else if (id >= Q_FN_ARRAY_MAP && id <= Q_FN_ARRAY_FIRST)
        q_plambda_call(pr, e, id);
    else if (id >= Q_FN_GROUP_ARRAY && id <= Q_FN_TOP_K)
        aggregate(pr, e, id);
    else if ((id >= Q_FN_HAS && id <= Q_FN_ARRAY_ELEMENT) ||
             (id >= Q_FN_ARRAY_LENGTH && id <= Q_FN_ARRAY_NOT_EMPTY))
        array_fn(pr, e, id);
    else
        return false;
    return true;
}
