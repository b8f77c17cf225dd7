/*
 * parse.c - HogQL text to a syntax tree: the tokenizer feeds lemon's
 * parser (grammar.y) token by token; the grammar's actions call the node
 * builders below. See query_int.h for the tree and its limits.
 *
 * The builders never return NULL: after an error they go on building
 * (into the arena, freed with the query) and the driver stops feeding
 * tokens, so the actions need no error paths.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "query/query_int.h"
#include "query/grammar.h"

/* lemon's parser (grammar.c). */
void *qParseAlloc(void *(*alloc)(size_t));
void qParse(void *parser, int id, q_token_t tok, q_parse_t *p);
void qParseFree(void *parser, void (*release)(void *));

void q_fail(q_parse_t *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    cm_buf_vappendf(p->err, fmt, ap);
    va_end(ap);
}

/* "line L, column C" of a byte offset (columns count bytes, from 1). */
static void where(const q_parse_t *p, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    size_t start = 0;
    for (size_t i = 0; i < off && i < p->len; i++)
        if (p->src[i] == '\n') {
            (*line)++;
            start = i + 1;
        }
    *col = off - start + 1;
}

void q_syntax_error(q_parse_t *p, const q_token_t *t)
{
    size_t line, col;
    if (t->id == 0) {
        q_fail(p, "Syntax error: the query ends too early");
        return;
    }
    where(p, t->offset, &line, &col);
    int n = t->text.len > 40 ? 40 : (int)t->text.len;
    q_fail(p, "Syntax error at line %zu, column %zu: unexpected '%.*s'", line, col, n, t->text.p);
}

/* ---- nodes ------------------------------------------------------------------------- */

static void count_node(q_parse_t *p)
{
    if (++p->nodes > Q_MAX_NODES)
        q_fail(p, "the query is too large (more than %d elements)", Q_MAX_NODES);
}

q_expr_t *q_new(q_parse_t *p, q_expr_kind_t kind)
{
    q_expr_t *e = cm_arena_alloc(p->arena, sizeof(*e));
    e->kind = kind;
    e->depth = 1;
    count_node(p);
    return e;
}

/* A node is one deeper than its deepest child. */
static void below(q_parse_t *p, q_expr_t *e, unsigned child)
{
    if (child + 1 > e->depth)
        e->depth = (uint16_t)(child + 1 > Q_MAX_DEPTH + 1 ? Q_MAX_DEPTH + 1 : child + 1);
    if (e->depth > Q_MAX_DEPTH)
        q_fail(p, "the query is nested too deeply (more than %d levels)", Q_MAX_DEPTH);
}

static void below_expr(q_parse_t *p, q_expr_t *e, const q_expr_t *c)
{
    if (c != NULL)
        below(p, e, c->depth);
}

static void below_list(q_parse_t *p, q_expr_t *e, const q_list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        below_expr(p, e, l->v[i]);
}

void q_below_list(q_parse_t *p, q_expr_t *e, const q_list_t *l)
{
    below_list(p, e, l);
}

/* Room for one more element of size `size` in an arena array of n: the
 * capacity is 4, then doubles (so it is full when n is 4, 8, 16, ...). */
static void *grow(q_parse_t *p, void *v, size_t n, size_t size)
{
    if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
        return v;
    size_t cap = n == 0 ? 4 : n * 2;
    void *w = cm_arena_alloc(p->arena, cap * size);
    if (n > 0)
        memcpy(w, v, n * size);
    return w;
}

void q_push(q_parse_t *p, q_list_t *l, q_expr_t *e)
{
    l->v = grow(p, l->v, l->n, sizeof(*l->v));
    l->v[l->n++] = e;
}

void q_add_col(q_parse_t *p, q_cols_t *l, const q_column_t *c)
{
    l->v = grow(p, l->v, l->n, sizeof(*l->v));
    l->v[l->n++] = *c;
}

void q_add_order(q_parse_t *p, q_orders_t *l, const q_order_t *o)
{
    l->v = grow(p, l->v, l->n, sizeof(*l->v));
    l->v[l->n++] = *o;
}

void q_add_cte(q_parse_t *p, q_ctes_t *l, const q_cte_t *c)
{
    l->v = grow(p, l->v, l->n, sizeof(*l->v));
    l->v[l->n++] = *c;
}

cm_slice_t q_ident(q_parse_t *p, cm_slice_t tok)
{
    cm_slice_t out = tok;
    if (tok.len >= 2 && (tok.p[0] == '`' || tok.p[0] == '"') && !q_unquote(p, tok, &out))
        return tok;
    if (out.len == 0)
        q_fail(p, "an empty quoted name");
    return out;
}

cm_slice_t q_dotted(q_parse_t *p, cm_slice_t a, cm_slice_t b)
{
    char *s = cm_arena_alloc(p->arena, a.len + b.len + 2);
    memcpy(s, a.p, a.len);
    s[a.len] = '.';
    memcpy(s + a.len + 1, b.p, b.len);
    return (cm_slice_t){s, a.len + b.len + 1};
}

q_expr_t *q_binary(q_parse_t *p, q_binop_t op, q_expr_t *a, q_expr_t *b)
{
    q_expr_t *e = q_new(p, QE_BINARY);
    e->op = op;
    q_push(p, &e->args, a);
    q_push(p, &e->args, b);
    below_list(p, e, &e->args);
    return e;
}

q_expr_t *q_unary(q_parse_t *p, q_expr_kind_t kind, q_expr_t *a)
{
    q_expr_t *e = q_new(p, kind);
    q_push(p, &e->args, a);
    below_expr(p, e, a);
    return e;
}

q_expr_t *q_between(q_parse_t *p, q_expr_t *a, q_expr_t *lo, q_expr_t *hi, bool negated)
{
    q_expr_t *e = q_new(p, QE_BETWEEN);
    e->negated = negated;
    q_push(p, &e->args, a);
    q_push(p, &e->args, lo);
    q_push(p, &e->args, hi);
    below_list(p, e, &e->args);
    return e;
}

/* -5 is a number, not a negation, so that the smallest Int64 fits. */
q_expr_t *q_negate(q_parse_t *p, q_expr_t *a)
{
    if ((a->kind == QE_INT || a->kind == QE_FLOAT) && a->text.len > 0 && a->text.p[0] != '-') {
        char *s = cm_arena_alloc(p->arena, a->text.len + 2);
        s[0] = '-';
        memcpy(s + 1, a->text.p, a->text.len);
        return q_number(p, (cm_slice_t){s, a->text.len + 1});
    }
    return q_unary(p, QE_NEG, a);
}

q_expr_t *q_number(q_parse_t *p, cm_slice_t text)
{
    char buf[64];
    bool hex = memchr(text.p, 'x', text.len) != NULL || memchr(text.p, 'X', text.len) != NULL;
    bool is_float = false;
    for (size_t i = 0; i < text.len && !hex; i++)
        if (text.p[i] == '.' || text.p[i] == 'e' || text.p[i] == 'E')
            is_float = true;
    q_expr_t *e = q_new(p, is_float ? QE_FLOAT : QE_INT);
    e->text = text;
    if (text.len >= sizeof(buf)) {
        q_fail(p, "the number %.20s... is too long", text.p);
        return e;
    }
    memcpy(buf, text.p, text.len);
    buf[text.len] = '\0';
    errno = 0;
    if (is_float)
        e->fval = strtod(buf, NULL);
    else
        e->ival = strtoll(buf, NULL, hex ? 16 : 10);
    if (errno == ERANGE)
        q_fail(p, "the number %s is out of range", buf);
    return e;
}

q_expr_t *q_string(q_parse_t *p, cm_slice_t quoted)
{
    q_expr_t *e = q_new(p, QE_STRING);
    if (!q_unquote(p, quoted, &e->text))
        e->text = (cm_slice_t){"", 0};
    return e;
}

q_expr_t *q_field(q_parse_t *p, cm_slice_t name)
{
    q_expr_t *e = q_new(p, QE_FIELD);
    e->chain = cm_arena_alloc(p->arena, 4 * sizeof(*e->chain));
    e->chain[0] = name;
    e->nchain = 1;
    return e;
}

q_expr_t *q_field_append(q_parse_t *p, q_expr_t *base, cm_slice_t name)
{
    if (base->kind != QE_FIELD) {
        q_fail(p, "'.%.*s' can only follow a field name", (int)(name.len > 40 ? 40 : name.len),
               name.p);
        return base;
    }
    cm_slice_t *c = grow(p, base->chain, base->nchain, sizeof(*c));
    base->chain = c;
    base->chain[base->nchain++] = name;
    below(p, base, (unsigned)base->nchain); /* a long chain is deep too */
    return base;
}

/* properties['x'] is properties.x; a[1] stays an index. */
q_expr_t *q_index(q_parse_t *p, q_expr_t *base, q_expr_t *index)
{
    if (base->kind == QE_FIELD && index->kind == QE_STRING)
        return q_field_append(p, base, index->text);
    if (index->kind == QE_INT && index->ival == 0) /* PostHog's words */
        q_fail(p, "SQL indexes start from one, not from zero. E.g: array[1]");
    q_expr_t *e = q_new(p, QE_INDEX);
    e->operand = base;
    q_push(p, &e->args, index);
    below_expr(p, e, base);
    below_expr(p, e, index);
    return e;
}

q_expr_t *q_star(q_parse_t *p, q_expr_t *table)
{
    q_expr_t *e = q_new(p, QE_STAR);
    if (table != NULL) {
        if (table->kind != QE_FIELD || table->nchain != 1)
            q_fail(p, "'.*' can only follow a table name");
        e->chain = table->chain;
        e->nchain = table->nchain;
    }
    return e;
}

q_expr_t *q_list_expr(q_parse_t *p, q_expr_kind_t kind, q_list_t *items, q_expr_t *last)
{
    q_expr_t *e = q_new(p, kind);
    if (items != NULL)
        e->args = *items;
    if (last != NULL)
        q_push(p, &e->args, last);
    below_list(p, e, &e->args);
    return e;
}

q_expr_t *q_subquery(q_parse_t *p, q_select_t *s)
{
    q_expr_t *e = q_new(p, QE_SUBQUERY);
    e->sub = s;
    below(p, e, s->depth);
    return e;
}

q_expr_t *q_placeholder(q_parse_t *p, q_expr_t *inner)
{
    if (inner->kind != QE_FIELD || inner->nchain != 2 || inner->chain[0].len != 9 ||
        memcmp(inner->chain[0].p, "variables", 9) != 0) {
        q_fail(p, "only {variables.<code_name>} placeholders are supported");
        return inner;
    }
    inner->kind = QE_PLACEHOLDER;
    return inner;
}

q_expr_t *q_interval(q_parse_t *p, q_expr_t *n, cm_slice_t unit)
{
    static const char *const units[] = {"second", "minute", "hour",    "day",
                                        "week",   "month",  "quarter", "year"};
    q_expr_t *e = q_new(p, QE_INTERVAL);
    q_push(p, &e->args, n);
    below_expr(p, e, n);
    size_t len = unit.len;
    if (len > 1 && (unit.p[len - 1] == 's' || unit.p[len - 1] == 'S'))
        len--; /* days, HOURS */
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strlen(units[i]) == len && strncasecmp(units[i], unit.p, len) == 0) {
            e->unit = (q_unit_t)i;
            return e;
        }
    q_fail(p, "unknown interval unit '%.*s'", (int)(unit.len > 20 ? 20 : unit.len), unit.p);
    return e;
}

q_expr_t *q_cast(q_parse_t *p, q_expr_t *a, cm_slice_t type)
{
    q_expr_t *e = q_unary(p, QE_CAST, a);
    e->text = type;
    return e;
}

q_expr_t *q_ternary(q_parse_t *p, q_expr_t *c, q_expr_t *a, q_expr_t *b)
{
    q_list_t args = {0};
    q_push(p, &args, c);
    q_push(p, &args, a);
    q_push(p, &args, b);
    return q_call(p, CM_SLICE_LIT("if"), NULL, &args, false);
}

q_expr_t *q_case(q_parse_t *p, q_expr_t *operand, q_list_t *whens, q_expr_t *else_)
{
    q_expr_t *e = q_new(p, QE_CASE);
    e->operand = operand;
    e->args = *whens;
    e->else_ = else_;
    below_expr(p, e, operand);
    below_list(p, e, &e->args);
    below_expr(p, e, else_);
    return e;
}

q_expr_t *q_call(q_parse_t *p, cm_slice_t name, q_list_t *params, q_list_t *args, bool distinct)
{
    if (params == NULL && !distinct) { /* equals(a, b) is a = b */
        q_expr_t *op = q_lower_call(p, name, args);
        if (op != NULL)
            return op;
    }
    q_expr_t *e = q_new(p, QE_CALL);
    e->text = name;
    e->distinct = distinct;
    if (params != NULL)
        e->params = *params;
    if (args != NULL)
        e->args = *args;
    below_list(p, e, &e->params);
    below_list(p, e, &e->args);
    return e;
}

q_window_t *q_window(q_parse_t *p, q_list_t *partition, q_orders_t *order)
{
    q_window_t *w = cm_arena_alloc(p->arena, sizeof(*w));
    w->partition = *partition;
    w->order = order->v;
    w->norder = order->n;
    return w;
}

q_expr_t *q_over(q_parse_t *p, q_expr_t *call, q_window_t *w)
{
    if (call->kind != QE_CALL) { /* an operator spelled as a call: and(a, b) OVER () */
        q_fail(p, "OVER follows a window or aggregate function only");
        return call;
    }
    call->over = w;
    for (size_t i = 0; i < w->partition.n; i++)
        below_expr(p, call, w->partition.v[i]);
    for (size_t i = 0; i < w->norder; i++)
        below_expr(p, call, w->order[i].expr);
    return call;
}

/* ---- SELECT ------------------------------------------------------------------------ */

static void select_below(q_parse_t *p, q_select_t *s, unsigned child)
{
    if (child + 1 > s->depth)
        s->depth = (uint16_t)(child + 1 > Q_MAX_DEPTH + 1 ? Q_MAX_DEPTH + 1 : child + 1);
    if (s->depth > Q_MAX_DEPTH)
        q_fail(p, "the query is nested too deeply (more than %d levels)", Q_MAX_DEPTH);
}

static void select_below_expr(q_parse_t *p, q_select_t *s, const q_expr_t *e)
{
    if (e != NULL)
        select_below(p, s, e->depth);
}

static unsigned from_depth(const q_from_t *f)
{
    if (f == NULL)
        return 0;
    if (f->kind == QJ_SUBQUERY)
        return f->sub->depth;
    if (f->kind == QJ_TABLE)
        return 1;
    unsigned l = from_depth(f->left), r = from_depth(f->right);
    unsigned d = (l > r ? l : r) + 1;
    if (f->on != NULL && f->on->depth + 1u > d)
        d = f->on->depth + 1u;
    return d;
}

q_select_t *q_select(q_parse_t *p, q_ctes_t *with, bool distinct, q_cols_t *cols, q_from_t *from,
                     q_expr_t *where, q_list_t *group, q_expr_t *having, q_orders_t *order,
                     q_limits_t *lim)
{
    q_select_t *s = cm_arena_alloc(p->arena, sizeof(*s));
    count_node(p);
    s->depth = 1;
    s->with = with->v;
    s->nwith = with->n;
    s->distinct = distinct;
    s->cols = cols->v;
    s->ncols = cols->n;
    s->from = from;
    s->where = where;
    s->group_by = *group;
    s->having = having;
    s->order = order->v;
    s->norder = order->n;
    s->limit = lim->n;
    s->offset = lim->offset;
    s->limit_by_n = lim->by_n;
    s->limit_by_offset = lim->by_offset;
    s->limit_by = lim->by;
    s->with_ties = lim->ties;
    for (size_t i = 0; i < s->nwith; i++) {
        if (s->with[i].sub != NULL)
            select_below(p, s, s->with[i].sub->depth);
        select_below_expr(p, s, s->with[i].expr);
    }
    for (size_t i = 0; i < s->ncols; i++)
        select_below_expr(p, s, s->cols[i].expr);
    select_below(p, s, from_depth(from));
    select_below_expr(p, s, where);
    select_below_expr(p, s, having);
    for (size_t i = 0; i < group->n; i++)
        select_below_expr(p, s, group->v[i]);
    for (size_t i = 0; i < s->norder; i++)
        select_below_expr(p, s, s->order[i].expr);
    return s;
}

q_select_t *q_union(q_parse_t *p, q_select_t *a, q_select_t *b)
{
    if (a->nparts == 0 || a->paren) {
        q_select_t *set = cm_arena_alloc(p->arena, sizeof(*set));
        count_node(p);
        set->depth = 1;
        set->parts = grow(p, NULL, 0, sizeof(*set->parts));
        set->parts[set->nparts++] = a;
        select_below(p, set, a->depth);
        a = set;
    }
    a->parts = grow(p, a->parts, a->nparts, sizeof(*a->parts));
    a->parts[a->nparts++] = b;
    select_below(p, a, b->depth);
    return a;
}

q_cte_t q_cte_sub(q_parse_t *p, q_expr_t *name, q_select_t *s)
{
    if (name->kind != QE_FIELD || name->nchain != 1) {
        q_fail(p, "WITH <name> AS (SELECT ...) needs a plain name");
        return (q_cte_t){.name = CM_SLICE_LIT("?"), .sub = s};
    }
    return (q_cte_t){.name = name->chain[0], .sub = s};
}

q_from_t *q_table(q_parse_t *p, cm_slice_t name, cm_slice_t alias)
{
    q_from_t *f = cm_arena_alloc(p->arena, sizeof(*f));
    count_node(p);
    f->kind = QJ_TABLE;
    f->name = name;
    f->alias = alias;
    return f;
}

q_from_t *q_from_sub(q_parse_t *p, q_select_t *s, cm_slice_t alias)
{
    q_from_t *f = cm_arena_alloc(p->arena, sizeof(*f));
    count_node(p);
    f->kind = QJ_SUBQUERY;
    f->sub = s;
    f->alias = alias;
    return f;
}

q_from_t *q_join(q_parse_t *p, int join, q_from_t *l, q_from_t *r, q_expr_t *on, q_list_t *using_)
{
    q_from_t *f = cm_arena_alloc(p->arena, sizeof(*f));
    count_node(p);
    f->kind = QJ_JOIN;
    f->join = (q_join_t)join;
    f->left = l;
    f->right = r;
    f->on = on;
    if (using_ != NULL)
        f->using_ = *using_;
    if (from_depth(f) > Q_MAX_DEPTH)
        q_fail(p, "the query is nested too deeply (more than %d levels)", Q_MAX_DEPTH);
    return f;
}

/* ARRAY JOIN a AS x, b AS y: each further array joins element by element
 * with the first (ClickHouse zips them), LEFT as the clause is. */
q_from_t *q_array_join_zip(q_parse_t *p, q_from_t *l, q_expr_t *array, cm_slice_t alias)
{
    q_from_t *f = q_array_join(p, l->join == QJ_LEFT, l, array, alias);
    f->zipped = true;
    return f;
}

/* ---- the driver ---------------------------------------------------------------------- */

q_select_t *q_parse_text(q_parse_t *p)
{
    void *parser = qParseAlloc(cm_xmalloc);
    for (;;) {
        q_token_t t = q_next_token(p);
        if (t.id < 0 || p->failed)
            break;
        p->last = t;
        qParse(parser, t.id, t, p);
        if (p->failed || t.id == 0)
            break;
    }
    qParseFree(parser, free);
    return p->failed ? NULL : p->result;
}

/* x -> body, (x, y) -> body: the left side must be one name or a tuple of
 * names (the grammar parses it as any expression). */
q_expr_t *q_lambda(q_parse_t *p, q_expr_t *params, q_expr_t *body)
{
    q_expr_t *e = q_new(p, QE_LAMBDA);
    size_t n = params->kind == QE_TUPLE ? params->args.n : 1;
    q_expr_t *const *v = params->kind == QE_TUPLE ? params->args.v : &params;
    e->chain = cm_arena_alloc(p->arena, n * sizeof(*e->chain));
    for (size_t i = 0; i < n; i++) {
        if (v[i]->kind != QE_FIELD || v[i]->nchain != 1) {
            q_fail(p, "a lambda's parameters must be names, as in x -> x + 1");
            return e;
        }
        for (size_t j = 0; j < i; j++)
            if (cm_slice_eq(e->chain[j], v[i]->chain[0]))
                q_fail(p, "a lambda's parameters must have different names");
        e->chain[i] = v[i]->chain[0];
    }
    e->nchain = n;
    e->operand = body;
    below_expr(p, e, params);
    below_expr(p, e, body);
    return e;
}

/* t.1, t.2: a tuple's member by position (the tokenizer gives ".1"). */
q_expr_t *q_tuple_member(q_parse_t *p, q_expr_t *base, cm_slice_t t)
{
    size_t n = 0;
    bool digits = t.len >= 2 && t.len <= 4 && t.p[0] == '.';
    for (size_t i = 1; digits && i < t.len; i++) {
        digits = t.p[i] >= '0' && t.p[i] <= '9';
        n = n * 10 + (size_t)(t.p[i] - '0');
    }
    if (!digits || n == 0) {
        q_fail(p, "a tuple's member is .1, .2, ... (unexpected '%.*s')",
               (int)(t.len > 20 ? 20 : t.len), t.p);
        return base;
    }
    q_expr_t *i = q_new(p, QE_INT);
    i->ival = (int64_t)n;
    i->text = (cm_slice_t){t.p + 1, t.len - 1};
    q_expr_t *e = q_index(p, base, i);
    e->negated = true;
    return e;
}

/* [LEFT] ARRAY JOIN arr [AS x]: without an alias, a field names the
 * element by its own name (ARRAY JOIN tags: tags is the element after). */
q_from_t *q_array_join(q_parse_t *p, bool left, q_from_t *l, q_expr_t *array, cm_slice_t alias)
{
    q_from_t *f = cm_arena_alloc(p->arena, sizeof(*f));
    count_node(p);
    f->kind = QJ_ARRAY;
    f->join = left ? QJ_LEFT : QJ_INNER;
    f->left = l;
    f->on = array;
    f->alias = alias;
    if (alias.len == 0 && array->kind == QE_FIELD && array->nchain > 0)
        f->alias = array->chain[array->nchain - 1];
    if (f->alias.len == 0)
        q_fail(p, "ARRAY JOIN needs a name for the element: ARRAY JOIN <array> AS <name>");
    if (from_depth(f) > Q_MAX_DEPTH)
        q_fail(p, "the query is nested too deeply (more than %d levels)", Q_MAX_DEPTH);
    return f;
}
